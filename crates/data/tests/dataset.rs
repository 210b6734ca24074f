//! Dataset and iterator ops built by hand and run in a session: elements,
//! batch counts, end of sequence, re-initialization and cancellation.

use ferroflow_graph::{AttrValue, Graph, NodeSpec, Output, PartialShape};
use ferroflow_runtime::Session;
use ferroflow_tensor::{Code, DType, Result, Tensor};
use parking_lot::RwLock;
use std::sync::Arc;

struct G {
    g: Arc<RwLock<Graph>>,
    n: usize,
}

impl G {
    fn new() -> G {
        ferroflow_data::register();
        G {
            g: Arc::new(RwLock::new(Graph::new())),
            n: 0,
        }
    }

    fn constant(&mut self, t: Tensor) -> Output {
        self.n += 1;
        let spec =
            NodeSpec::new("Const", &format!("c{}", self.n)).attr("value", AttrValue::Tensor(t));
        Output::new(self.g.write().add_node(spec).unwrap(), 0)
    }

    fn op(&mut self, op: &str, inputs: Vec<Output>, types: &[DType]) -> Output {
        self.n += 1;
        let spec = NodeSpec::new(op, &format!("{op}{}", self.n))
            .inputs(inputs)
            .attr("output_types", AttrValue::TypeList(types.to_vec()))
            .attr(
                "output_shapes",
                AttrValue::ShapeList(types.iter().map(|_| PartialShape::unknown()).collect()),
            );
        Output::new(self.g.write().add_node(spec).unwrap(), 0)
    }

    fn i64(&mut self, v: i64) -> Output {
        self.constant(Tensor::scalar(v))
    }

    fn range(&mut self, start: i64, stop: i64) -> Output {
        let (a, b, c) = (self.i64(start), self.i64(stop), self.i64(1));
        self.op("RangeDataset", vec![a, b, c], &[DType::Int64])
    }
}

/// Every element `get_next` yields until the end of sequence.
fn drain(sess: &Session, next: Output) -> Result<Vec<Tensor>> {
    let mut out = Vec::new();
    loop {
        match sess.run(vec![], &[next], &[]) {
            Ok(mut v) => out.push(v.remove(0)),
            Err(e) if e.code() == Some(Code::OutOfRange) => return Ok(out),
            Err(e) => return Err(e),
        }
    }
}

fn ints(ts: &[Tensor]) -> Vec<i64> {
    ts.iter().map(|t| t.scalar_i64().unwrap()).collect()
}

#[test]
fn slices_repeat_batch_with_a_smaller_final_batch() {
    let mut g = G::new();
    let data = g.constant(Tensor::vector((0..5).map(|v| v as f32).collect::<Vec<_>>()));
    let slices = g.op("TensorSliceDataset", vec![data], &[DType::Float32]);
    let two = g.i64(2);
    let repeated = g.op("RepeatDataset", vec![slices, two], &[DType::Float32]);
    let four = g.i64(4);
    let no = g.constant(Tensor::scalar(false));
    let batched = g.op(
        "BatchDatasetV2",
        vec![repeated, four, no],
        &[DType::Float32],
    );
    let it = g.op(
        "OneShotIteratorFromDataset",
        vec![batched],
        &[DType::Float32],
    );
    let next = g.op("IteratorGetNext", vec![it], &[DType::Float32]);
    let sess = Session::new(g.g.clone());
    let got = drain(&sess, next).unwrap();
    let sizes: Vec<usize> = got.iter().map(|t| t.dims()[0]).collect();
    assert_eq!(sizes, vec![4, 4, 2]);
    let all: Vec<f64> = got.iter().flat_map(|t| t.to_f64_vec().unwrap()).collect();
    assert_eq!(all, vec![0., 1., 2., 3., 4., 0., 1., 2., 3., 4.]);
    // Past the end it stays at the end.
    let err = sess.run(vec![], &[next], &[]).unwrap_err();
    assert_eq!(err.code(), Some(Code::OutOfRange));
}

#[test]
fn make_iterator_restarts_and_uninitialized_is_failed_precondition() {
    let mut g = G::new();
    let range = g.range(0, 3);
    let it = g.op("IteratorV2", vec![], &[DType::Int64]);
    let next = g.op("IteratorGetNext", vec![it], &[DType::Int64]);
    let init =
        g.g.write()
            .add_node(NodeSpec::new("MakeIterator", "init").inputs([range, it]))
            .unwrap();
    let sess = Session::new(g.g.clone());
    let err = sess.run(vec![], &[next], &[]).unwrap_err();
    assert_eq!(err.code(), Some(Code::FailedPrecondition));
    for _ in 0..2 {
        sess.run(vec![], &[], &[init]).unwrap();
        assert_eq!(ints(&drain(&sess, next).unwrap()), vec![0, 1, 2]);
    }
}

#[test]
fn shuffle_with_a_seed_is_a_fixed_permutation() {
    let run = || {
        let mut g = G::new();
        let range = g.range(0, 100);
        let (buf, s1, s2) = (g.i64(10), g.i64(7), g.i64(9));
        let shuffled = g.op("ShuffleDataset", vec![range, buf, s1, s2], &[DType::Int64]);
        let it = g.op(
            "OneShotIteratorFromDataset",
            vec![shuffled],
            &[DType::Int64],
        );
        let next = g.op("IteratorGetNext", vec![it], &[DType::Int64]);
        let sess = Session::new(g.g.clone());
        ints(&drain(&sess, next).unwrap())
    };
    let (x, y) = (run(), run());
    assert_eq!(x, y);
    let mut sorted = x.clone();
    sorted.sort();
    assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    assert_ne!(x, sorted);
    // Through a buffer of 10, element i can come out no earlier than position i - 9.
    for (pos, v) in x.iter().enumerate() {
        assert!(*v <= pos as i64 + 9, "element {v} at position {pos}");
    }
}

#[test]
fn shuffle_gives_tensorflows_order_and_reshuffles_each_epoch() {
    // TF 2.21: tf.data.Dataset.range(10).shuffle(5, seed=3).repeat(2) in a graph without a graph
    // seed (seeds 87654321 and 3), drained by a one-shot iterator.
    let mut g = G::new();
    let range = g.range(0, 10);
    let (buf, s1, s2) = (g.i64(5), g.i64(87654321), g.i64(3));
    let shuffled = g.op("ShuffleDataset", vec![range, buf, s1, s2], &[DType::Int64]);
    let two = g.i64(2);
    let repeated = g.op("RepeatDataset", vec![shuffled, two], &[DType::Int64]);
    let it = g.op(
        "OneShotIteratorFromDataset",
        vec![repeated],
        &[DType::Int64],
    );
    let next = g.op("IteratorGetNext", vec![it], &[DType::Int64]);
    let sess = Session::new(g.g.clone());
    assert_eq!(
        ints(&drain(&sess, next).unwrap()),
        vec![4, 1, 0, 2, 7, 8, 6, 3, 5, 9, 3, 4, 2, 6, 5, 9, 0, 8, 1, 7]
    );
}

#[test]
fn zip_take_skip_shard() {
    let mut g = G::new();
    let a = g.range(0, 10);
    let b = g.range(100, 110);
    let zipped = g.op("ZipDataset", vec![a, b], &[DType::Int64, DType::Int64]);
    let two = g.i64(2);
    let skipped = g.op(
        "SkipDataset",
        vec![zipped, two],
        &[DType::Int64, DType::Int64],
    );
    let (n, i) = (g.i64(3), g.i64(1));
    let sharded = g.op(
        "ShardDataset",
        vec![skipped, n, i],
        &[DType::Int64, DType::Int64],
    );
    let two_more = g.i64(2);
    let taken = g.op(
        "TakeDataset",
        vec![sharded, two_more],
        &[DType::Int64, DType::Int64],
    );
    let it = g.op(
        "OneShotIteratorFromDataset",
        vec![taken],
        &[DType::Int64, DType::Int64],
    );
    let next =
        g.g.write()
            .add_node(
                NodeSpec::new("IteratorGetNext", "next")
                    .inputs([it])
                    .attr("output_types", AttrValue::TypeList(vec![DType::Int64; 2]))
                    .attr(
                        "output_shapes",
                        AttrValue::ShapeList(vec![PartialShape::scalar(); 2]),
                    ),
            )
            .unwrap();
    let sess = Session::new(g.g.clone());
    let mut got = Vec::new();
    loop {
        match sess.run(vec![], &[Output::new(next, 0), Output::new(next, 1)], &[]) {
            Ok(v) => got.push((v[0].scalar_i64().unwrap(), v[1].scalar_i64().unwrap())),
            Err(e) => {
                assert_eq!(e.code(), Some(Code::OutOfRange));
                break;
            }
        }
    }
    // Skip 2 -> 2..9; shard 1 of 3 -> positions 1, 4, 7 -> 3, 6, 9; take 2.
    assert_eq!(got, vec![(3, 103), (6, 106)]);
}

#[test]
fn close_cancels_a_prefetching_iterator() {
    let mut g = G::new();
    let range = g.range(0, i64::MAX);
    let size = g.i64(4);
    let pf = g.op("PrefetchDataset", vec![range, size], &[DType::Int64]);
    let it = g.op("OneShotIteratorFromDataset", vec![pf], &[DType::Int64]);
    let next = g.op("IteratorGetNext", vec![it], &[DType::Int64]);
    let sess = Session::new(g.g.clone());
    for want in 0..3 {
        let got = sess.run(vec![], &[next], &[]).unwrap();
        assert_eq!(got[0].scalar_i64().unwrap(), want);
    }
    let start = std::time::Instant::now();
    sess.close();
    assert!(start.elapsed() < std::time::Duration::from_secs(1));
    let err = sess.run(vec![], &[next], &[]).unwrap_err();
    assert_eq!(err.code(), Some(Code::Cancelled));
}
