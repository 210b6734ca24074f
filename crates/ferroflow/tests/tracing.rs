//! Traced runs (per-node timings) and per-session intra-op thread pools.

use ferroflow::{DType, GraphBuilder, Output, PartialShape, RuntimeSession, Tensor};
use ferroflow_runtime::{SessionOptions, CPU_DEVICE};

fn data(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 8) as f32 / (1u32 << 24) as f32 - 0.5)
        .collect()
}

#[test]
fn traced_run_times_every_executed_node() {
    let mut g = GraphBuilder::new();
    let x = g
        .placeholder(DType::Float32, PartialShape::from_dims(vec![Some(2)]), "x")
        .unwrap();
    let c = g.constant(Tensor::vector(vec![1.0f32, 2.0]), "c").unwrap();
    let y = g.add_v2(x, c).unwrap();
    let s = g.reduce_sum(y, &[0], false).unwrap();
    let sess = RuntimeSession::new(g.graph());
    let plan = sess.prepare(&[x], &[s], &[]).unwrap();
    let feed = || vec![Tensor::vector(vec![3.0f32, 4.0])];
    let plain = sess.run_plan(&plan, feed()).unwrap();
    let (traced, trace) = sess.run_plan_traced(&plan, feed(), None).unwrap();
    assert_eq!(plain[0].as_slice::<f32>().unwrap(), &[10.0]);
    assert_eq!(traced[0].as_slice::<f32>().unwrap(), &[10.0]);

    assert_eq!(trace.device, CPU_DEVICE);
    let graph = g.graph();
    let graph = graph.read();
    let names: Vec<&str> = trace.nodes.iter().map(|n| n.node_name.as_str()).collect();
    // The fed placeholder is not run; everything else is, in plan order.
    let add_name = graph.node(y.node).name.clone();
    let sum_name = graph.node(s.node).name.clone();
    assert!(!names.contains(&"x"), "{names:?}");
    assert!(names.contains(&"c"), "{names:?}");
    let ia = names.iter().position(|n| *n == add_name).unwrap();
    let is = names.iter().position(|n| *n == sum_name).unwrap();
    assert!(ia < is, "{names:?}");
    let add = &trace.nodes[ia];
    assert_eq!(add.timeline_label, format!("{add_name} = AddV2(x, c)"));
    let sum = &trace.nodes[is];
    assert!(
        sum.timeline_label
            .starts_with(&format!("{sum_name} = Sum({add_name}, ")),
        "{}",
        sum.timeline_label
    );
    for n in &trace.nodes {
        assert!(n.all_start_nanos > 1_577_836_800_000_000_000, "{n:?}");
        assert!(0 <= n.op_start_rel_nanos, "{n:?}");
        assert!(n.op_start_rel_nanos <= n.op_end_rel_nanos, "{n:?}");
        assert!(n.op_end_rel_nanos <= n.all_end_rel_nanos, "{n:?}");
        assert!(trace.thread_names.iter().any(|(t, _)| *t == n.thread_id));
    }
    // Nodes run one after another.
    for w in trace.nodes.windows(2) {
        assert!(w[0].all_start_nanos + w[0].all_end_rel_nanos <= w[1].all_start_nanos + 1_000);
    }
}

#[test]
fn control_inputs_appear_in_the_label() {
    let mut g = GraphBuilder::new();
    let a = g.constant(Tensor::scalar(1.0f32), "a").unwrap();
    let b = g.constant(Tensor::scalar(2.0f32), "b").unwrap();
    let grp = g.group(&[a.node], "grp").unwrap();
    let sum = Output::new(
        g.add_with_control("AddV2", "sum", &[a, b], &[grp]).unwrap(),
        0,
    );
    let sess = RuntimeSession::new(g.graph());
    let plan = sess.prepare(&[], &[sum], &[]).unwrap();
    let (_, trace) = sess.run_plan_traced(&plan, vec![], None).unwrap();
    let node = trace.nodes.iter().find(|n| n.node_name == "sum").unwrap();
    assert_eq!(node.timeline_label, "sum = AddV2(a, b, ^grp)");
}

#[test]
fn intra_op_pool_has_the_requested_size_and_same_results() {
    let n = 1 << 20;
    let mut g = GraphBuilder::new();
    let x = g
        .placeholder(DType::Float32, PartialShape::from_dims(vec![Some(n)]), "x")
        .unwrap();
    let y = g.mul(x, x).unwrap();
    let s = g.reduce_sum(y, &[0], false).unwrap();
    let values = data(n);
    let mut results = Vec::new();
    for threads in [1usize, 2, 3] {
        let sess = RuntimeSession::with_options(
            g.graph(),
            SessionOptions {
                intra_op_threads: threads,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(sess.intra_op_threads(), threads);
        let out = sess
            .run(vec![(x, Tensor::vector(values.clone()))], &[y, s], &[])
            .unwrap();
        results.push((
            out[0].as_slice::<f32>().unwrap().to_vec(),
            out[1].as_slice::<f32>().unwrap()[0].to_bits(),
        ));
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    assert!(RuntimeSession::new(g.graph()).intra_op_threads() >= 1);
}
