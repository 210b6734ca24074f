//! Training from Rust alone: gradients, an optimizer, a session.

use ferroflow::train::{exponential_decay, Momentum, Optimizer};
use ferroflow::{DType, GraphBuilder, PartialShape, Session, Tensor};

fn linear_regression(mut opt: Optimizer, steps: usize) -> (f64, f64) {
    // y = 3x - 2 on a fixed grid.
    let xs: Vec<f32> = (0..32).map(|i| i as f32 / 16.0 - 1.0).collect();
    let ys: Vec<f32> = xs.iter().map(|x| 3.0 * x - 2.0).collect();
    let mut g = GraphBuilder::new();
    let x = g
        .placeholder(
            DType::Float32,
            PartialShape::from_dims(vec![None, Some(1)]),
            "x",
        )
        .unwrap();
    let y = g
        .placeholder(
            DType::Float32,
            PartialShape::from_dims(vec![None, Some(1)]),
            "y",
        )
        .unwrap();
    let w = g
        .variable("w", Tensor::from_vec([1, 1], vec![0.0f32]).unwrap())
        .unwrap();
    let b = g
        .variable("b", Tensor::from_vec([1], vec![0.0f32]).unwrap())
        .unwrap();
    let pred = g.matmul(x, w.value, false, false).unwrap();
    let pred = g.add_v2(pred, b.value).unwrap();
    let err = g.sub(pred, y).unwrap();
    let sq = g.mul(err, err).unwrap();
    let loss = g.reduce_mean(sq).unwrap();
    let train = opt.minimize(&mut g, loss, Some(&[w, b]), None).unwrap();
    let inits = opt.initializers(&g);
    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[w.initializer, b.initializer])
        .unwrap();
    sess.run(vec![], &[], &inits).unwrap();
    let feed = || {
        vec![
            (x, Tensor::from_vec([32, 1], xs.clone()).unwrap()),
            (y, Tensor::from_vec([32, 1], ys.clone()).unwrap()),
        ]
    };
    let first = sess.run(feed(), &[loss], &[]).unwrap()[0]
        .scalar_f64()
        .unwrap();
    for _ in 0..steps {
        sess.run(feed(), &[], &[train]).unwrap();
    }
    let last = sess.run(feed(), &[loss], &[]).unwrap()[0]
        .scalar_f64()
        .unwrap();
    (first, last)
}

#[test]
fn sgd_momentum_and_adam_fit_a_line() {
    for opt in [
        Optimizer::gradient_descent(0.3),
        Optimizer::new(Momentum::new(0.1, 0.9).use_nesterov(true)),
        Optimizer::adam(0.1),
    ] {
        let (first, last) = linear_regression(opt.clone(), 300);
        assert!(first > 1.0, "{opt:?}: initial loss {first}");
        assert!(last < 1e-3, "{opt:?}: final loss {last}");
    }
}

#[test]
fn gradients_match_calculus() {
    // d/dx sum(x^2 * 3) = 6x
    let mut g = GraphBuilder::new();
    let x = g
        .constant(Tensor::vector(vec![1.0f32, -2.0, 0.5]), "x")
        .unwrap();
    let three = g.constant(Tensor::scalar(3.0f32), "three").unwrap();
    let sq = g.mul(x, x).unwrap();
    let y = g.mul(sq, three).unwrap();
    let s = g.reduce_sum(y, &[0], false).unwrap();
    let dx = g.gradients(&[s], &[x]).unwrap()[0].unwrap();
    let sess = Session::new(g.graph());
    let out = sess.run(vec![], &[dx], &[]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[6.0, -12.0, 3.0]);
}

#[test]
fn exponential_decay_schedule() {
    let mut g = GraphBuilder::new();
    let step = g
        .placeholder(DType::Int64, PartialShape::scalar(), "step")
        .unwrap();
    let lr = exponential_decay(&mut g, 0.1, step, 5.0, 0.5, true).unwrap();
    let sess = Session::new(g.graph());
    for (s, want) in [(0i64, 0.1f32), (4, 0.1), (5, 0.05), (12, 0.025)] {
        let out = sess
            .run(vec![(step, Tensor::scalar(s))], &[lr], &[])
            .unwrap();
        assert!(
            (out[0].as_slice::<f32>().unwrap()[0] - want).abs() < 1e-7,
            "step {s}"
        );
    }
}
