//! Trains a small MLP classifier end to end from Rust: graph, gradients,
//! Adam, session. `cargo run --release --example train_mlp -p ferroflow`

mod common;

use common::Rng;
use ferroflow::train::Optimizer;
use ferroflow::{DType, GraphBuilder, PartialShape, Session, Tensor};

fn main() -> ferroflow::Result<()> {
    let (n, d_in, d_hidden, classes) = (256, 8, 32, 3);
    let mut rng = Rng(42);
    // Labels: which third of [0, 8) the sum of features falls in.
    let xs: Vec<f32> = (0..n * d_in).map(|_| rng.uniform()).collect();
    let ys: Vec<i32> = xs
        .chunks(d_in)
        .map(|r| ((r.iter().sum::<f32>() / 8.0 * 3.0) as i32).min(2))
        .collect();

    let mut g = GraphBuilder::new();
    let x = g.placeholder(
        DType::Float32,
        PartialShape::from_dims(vec![None, Some(d_in)]),
        "x",
    )?;
    let y = g.placeholder(DType::Int32, PartialShape::from_dims(vec![None]), "y")?;
    let init = |rng: &mut Rng, rows: usize, cols: usize| {
        rng.tensor(&[rows, cols], (6.0 / (rows + cols) as f32).sqrt())
    };
    let w1 = g.variable("dense/kernel", init(&mut rng, d_in, d_hidden)?)?;
    let b1 = g.variable(
        "dense/bias",
        Tensor::from_vec([d_hidden], vec![0f32; d_hidden])?,
    )?;
    let w2 = g.variable("dense_1/kernel", init(&mut rng, d_hidden, classes)?)?;
    let b2 = g.variable(
        "dense_1/bias",
        Tensor::from_vec([classes], vec![0f32; classes])?,
    )?;
    let h = g.matmul(x, w1.value, false, false)?;
    let h = g.add_v2(h, b1.value)?;
    let h = g.relu(h)?;
    let logits = g.matmul(h, w2.value, false, false)?;
    let logits = g.add_v2(logits, b2.value)?;
    let xent = g.sparse_softmax_cross_entropy(logits, y)?;
    let loss = g.reduce_mean(xent)?;
    let train = Optimizer::adam(0.05).minimize(&mut g, loss, Some(&[w1, b1, w2, b2]), None)?;
    let init = g.global_variables_initializer()?;

    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[init])?;
    let feed = || {
        vec![
            (x, Tensor::from_vec([n, d_in], xs.clone()).expect("shape")),
            (y, Tensor::vector(ys.clone())),
        ]
    };
    for step in 0..=200 {
        let targets: &[_] = if step > 0 { &[train] } else { &[] };
        let out = sess.run(feed(), &[loss], targets)?;
        if step % 50 == 0 {
            println!("step {step:3}: loss {:.4}", out[0].scalar_f64()?);
        }
    }
    Ok(())
}
