//! Runs whose independent steps execute at the same time
//! (`SessionOptions::inter_op_threads`, TF's `inter_op_parallelism_threads`).

use ferroflow::train::Optimizer;
use ferroflow::{
    Code, DType, GraphBuilder, NodeId, Output, PartialShape, Session, SessionOptions, Tensor,
};

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32 ^ seed).wrapping_mul(2_654_435_761) >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        })
        .collect()
}

fn session(g: &GraphBuilder, inter_op_threads: usize) -> Session {
    Session::with_options(
        g.graph(),
        SessionOptions {
            inter_op_threads,
            ..Default::default()
        },
    )
    .unwrap()
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.as_slice::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

/// An MLP trained with Adam: every weight and the loss, after `steps` steps,
/// as bits.
fn train_mlp(inter_op_threads: usize, steps: usize) -> Vec<Vec<u32>> {
    let batch = 16;
    let sizes = [24usize, 32, 16, 4];
    let mut g = GraphBuilder::new();
    let x = g
        .constant(
            Tensor::from_vec([batch, sizes[0]], data(batch * sizes[0], 1)).unwrap(),
            "x",
        )
        .unwrap();
    let mut vars = Vec::new();
    let mut h = x;
    for (i, pair) in sizes.windows(2).enumerate() {
        let w = g
            .variable(
                "w",
                Tensor::from_vec([pair[0], pair[1]], data(pair[0] * pair[1], 7 + i as u32))
                    .unwrap(),
            )
            .unwrap();
        let b = g
            .variable("b", Tensor::from_vec([pair[1]], data(pair[1], 99)).unwrap())
            .unwrap();
        let y = g.matmul(h, w.value, false, false).unwrap();
        let y = g.add_v2(y, b.value).unwrap();
        h = if i + 2 < sizes.len() {
            g.relu(y).unwrap()
        } else {
            y
        };
        vars.push(w);
        vars.push(b);
    }
    let labels = g
        .constant(
            Tensor::vector((0..batch as i32).map(|i| i % 4).collect()),
            "labels",
        )
        .unwrap();
    let xent = g.sparse_softmax_cross_entropy(h, labels).unwrap();
    let loss = g.reduce_mean(xent).unwrap();
    let mut opt = Optimizer::adam(0.01);
    let train = opt.minimize(&mut g, loss, Some(&vars), None).unwrap();
    let sess = session(&g, inter_op_threads);
    let mut init: Vec<NodeId> = vars.iter().map(|v| v.initializer).collect();
    init.extend(opt.initializers(&g));
    sess.run(vec![], &[], &init).unwrap();
    let mut losses = Vec::new();
    for _ in 0..steps {
        let out = sess.run(vec![], &[loss], &[train]).unwrap();
        losses.extend(bits(&out[0]));
    }
    let values: Vec<Output> = vars.iter().map(|v| v.value).collect();
    let mut out: Vec<Vec<u32>> = sess
        .run(vec![], &values, &[])
        .unwrap()
        .iter()
        .map(bits)
        .collect();
    out.push(losses);
    out
}

#[test]
fn training_gives_the_same_bits_with_any_number_of_inter_op_threads() {
    let serial = train_mlp(1, 5);
    for threads in [2, 4] {
        assert!(
            train_mlp(threads, 5) == serial,
            "{threads} inter-op threads changed the result"
        );
    }
}

/// Many independent branches, some of them big enough to stay on the
/// caller's thread: every fetched value equals the serial run's.
#[test]
fn independent_branches_give_the_serial_values() {
    let mut g = GraphBuilder::new();
    let x = g
        .placeholder(DType::Float32, PartialShape::from_dims(vec![None]), "x")
        .unwrap();
    let mut fetches = Vec::new();
    for i in 0..24 {
        let c = g
            .constant(Tensor::scalar(i as f32 * 0.25 + 1.0), "c")
            .unwrap();
        let y = g.mul(x, c).unwrap();
        let y = g.add_v2(y, x).unwrap();
        let y = g.relu(y).unwrap();
        fetches.push(g.reduce_sum(y, &[0], false).unwrap());
        fetches.push(y);
    }
    let serial = session(&g, 1);
    let parallel = session(&g, 3);
    for n in [5usize, 1 << 10, 1 << 17] {
        let feed = || vec![(x, Tensor::vector(data(n, n as u32)))];
        let want = serial.run(feed(), &fetches, &[]).unwrap();
        for _ in 0..3 {
            let got = parallel.run(feed(), &fetches, &[]).unwrap();
            for (a, b) in want.iter().zip(&got) {
                assert_eq!(bits(a), bits(b), "n = {n}");
            }
        }
    }
}

/// A control dependency orders two steps that share no data: the read after
/// the increment always sees it.
#[test]
fn control_dependencies_order_steps() {
    let mut g = GraphBuilder::new();
    let v = g.variable("counter", Tensor::scalar(0f32)).unwrap();
    let one = g.constant(Tensor::scalar(1f32), "one").unwrap();
    let bump = g.assign_add(v.var, one).unwrap();
    let read = g
        .add_with_control("Identity", "read", &[v.var], &[bump.node])
        .unwrap();
    let read = Output::new(read, 0);
    let doubled = g.add_v2(read, read).unwrap();
    let sess = session(&g, 4);
    sess.run(vec![], &[], &[v.initializer]).unwrap();
    for step in 1..=50 {
        let out = sess.run(vec![], &[doubled], &[]).unwrap();
        assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2.0 * step as f32]);
    }
}

/// A failing step fails the run with its error, without hanging, and the
/// session runs again afterwards.
#[test]
fn a_failing_branch_fails_the_run() {
    let mut g = GraphBuilder::new();
    let x = g
        .placeholder(DType::Float32, PartialShape::from_dims(vec![None]), "x")
        .unwrap();
    let shape = g
        .placeholder(
            DType::Int32,
            PartialShape::from_dims(vec![Some(1)]),
            "shape",
        )
        .unwrap();
    let mut fetches = Vec::new();
    for _ in 0..8 {
        let y = g.relu(x).unwrap();
        fetches.push(g.reduce_sum(y, &[0], false).unwrap());
    }
    let bad = g.build(|b| b.reshape(x, shape)).unwrap();
    fetches.push(bad);
    let sess = session(&g, 4);
    let run = |n: i32| {
        sess.run(
            vec![
                (x, Tensor::vector(data(6, 3))),
                (shape, Tensor::vector(vec![n])),
            ],
            &fetches,
            &[],
        )
    };
    let err = run(5).unwrap_err();
    assert_eq!(err.code(), Some(Code::InvalidArgument), "{err}");
    assert!(err.to_string().contains("Reshape"), "{err}");
    let out = run(6).unwrap();
    assert_eq!(out.len(), 9);
}

#[test]
fn the_session_reports_its_inter_op_threads() {
    let g = GraphBuilder::new();
    assert_eq!(session(&g, 0).inner().inter_op_threads(), 1);
    assert_eq!(session(&g, 1).inner().inter_op_threads(), 1);
    assert_eq!(session(&g, 3).inner().inter_op_threads(), 3);
}
