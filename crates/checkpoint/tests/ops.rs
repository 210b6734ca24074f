//! `SaveV2`, `RestoreV2` and `MergeV2Checkpoints` run in a session.

mod common;

use common::TempDir;
use ferroflow_checkpoint::{data_path, BundleReader};
use ferroflow_graph::{AttrValue, Graph, NodeSpec, Output};
use ferroflow_runtime::Session;
use ferroflow_tensor::{Code, DType, Result, Tensor};
use parking_lot::RwLock;
use std::sync::Arc;

fn strings(v: &[&str]) -> Tensor {
    Tensor::vector(v.iter().map(|s| s.as_bytes().to_vec()).collect())
}

fn path_tensor(p: &std::path::Path) -> Tensor {
    Tensor::scalar(p.to_str().unwrap().as_bytes().to_vec())
}

struct G {
    g: Arc<RwLock<Graph>>,
    n: usize,
}

impl G {
    fn new() -> G {
        ferroflow_checkpoint::register();
        G {
            g: Arc::new(RwLock::new(Graph::new())),
            n: 0,
        }
    }

    fn add(&mut self, spec: NodeSpec) -> Result<usize> {
        self.g.write().add_node(spec)
    }

    fn constant(&mut self, t: Tensor) -> Output {
        self.n += 1;
        let id = self
            .add(
                NodeSpec::new("Const", &format!("c{}", self.n)).attr("value", AttrValue::Tensor(t)),
            )
            .unwrap();
        Output::new(id, 0)
    }
}

#[test]
fn save_and_restore_through_a_session() {
    let tmp = TempDir::new("ops");
    let prefix = tmp.path().join("model.ckpt");
    let mut g = G::new();
    let p = g.constant(path_tensor(&prefix));
    let names = g.constant(strings(&["w", "part", "part", "s", "step"]));
    let specs = g.constant(strings(&["", "4 2 0,2:-", "4 2 2,2:-", "", ""]));
    let w = g.constant(Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap());
    let p0 = g.constant(Tensor::from_vec([2, 2], vec![0i32, 1, 2, 3]).unwrap());
    let p1 = g.constant(Tensor::from_vec([2, 2], vec![4i32, 5, 6, 7]).unwrap());
    let s = g.constant(strings(&["a", "bc"]));
    let step = g.constant(Tensor::scalar(42i64));
    let save = g
        .add(NodeSpec::new("SaveV2", "save").inputs([p, names, specs, w, p0, p1, s, step]))
        .unwrap();
    assert!(g.g.read().node(save).outputs.is_empty());

    let rnames = g.constant(strings(&["w", "part", "part", "s", "step"]));
    let rspecs = g.constant(strings(&["", "", "4 2 1,2:1,1", "", ""]));
    let dtypes = vec![
        DType::Float32,
        DType::Int32,
        DType::Int32,
        DType::String,
        DType::Int64,
    ];
    let restore = g
        .add(
            NodeSpec::new("RestoreV2", "restore")
                .inputs([p, rnames, rspecs])
                .attr("dtypes", AttrValue::TypeList(dtypes)),
        )
        .unwrap();
    {
        let graph = g.g.read();
        let outs = &graph.node(restore).outputs;
        assert_eq!(outs.len(), 5);
        // A constant slice spec gives the output its shape.
        assert_eq!(outs[2].shape.to_i64(), Some(vec![2, 1]));
        assert_eq!(outs[0].shape.rank(), None);
    }
    let sess = Session::new(g.g.clone());
    sess.run(vec![], &[], &[save]).unwrap();
    let got = sess
        .run(
            vec![],
            &(0..5).map(|i| Output::new(restore, i)).collect::<Vec<_>>(),
            &[],
        )
        .unwrap();
    assert_eq!(got[0].as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(got[1].as_slice::<i32>().unwrap(), &[0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(got[1].dims(), &[4, 2]);
    assert_eq!(got[2].as_slice::<i32>().unwrap(), &[3, 5]);
    assert_eq!(
        got[3].as_slice::<Vec<u8>>().unwrap(),
        &[b"a".to_vec(), b"bc".to_vec()]
    );
    assert_eq!(got[4].scalar_i64().unwrap(), 42);
    let r = BundleReader::open(&prefix).unwrap();
    assert_eq!(r.entry("part").unwrap().slices.len(), 2);
}

#[test]
fn restore_errors_name_keys_dtypes_and_the_checkpoint() {
    let tmp = TempDir::new("ops-err");
    let prefix = tmp.path().join("m");
    let mut w = ferroflow_checkpoint::BundleWriter::new(&prefix).unwrap();
    w.add("x", &Tensor::vector(vec![1.0f64])).unwrap();
    w.finish().unwrap();
    let mut g = G::new();
    let p = g.constant(path_tensor(&prefix));
    let restore = |g: &mut G, names: &[&str], dtypes: Vec<DType>| {
        let n = g.constant(strings(names));
        let s = g.constant(strings(&vec![""; names.len()]));
        g.add(
            NodeSpec::new("RestoreV2", &format!("r{}", g.n))
                .inputs([p, n, s])
                .attr("dtypes", AttrValue::TypeList(dtypes)),
        )
        .unwrap()
    };
    let missing = restore(&mut g, &["x", "y", "z"], vec![DType::Float64; 3]);
    let wrong = restore(&mut g, &["x"], vec![DType::Float32]);
    let sess = Session::new(g.g.clone());
    let e = sess
        .run(vec![], &[Output::new(missing, 0)], &[])
        .unwrap_err();
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(
        e.message().contains("y, z") && e.message().contains(prefix.to_str().unwrap()),
        "{e}"
    );
    let e = sess.run(vec![], &[Output::new(wrong, 0)], &[]).unwrap_err();
    assert_eq!(e.code(), Some(Code::InvalidArgument));
    assert!(
        e.message()
            .contains("tensor_name = x; expected dtype float does not equal original dtype double"),
        "{e}"
    );
    // No checkpoint at all.
    let q = g.constant(path_tensor(&tmp.path().join("absent")));
    let n = g.constant(strings(&["x"]));
    let s = g.constant(strings(&[""]));
    let r = g
        .add(
            NodeSpec::new("RestoreV2", "absent")
                .inputs([q, n, s])
                .attr("dtypes", AttrValue::TypeList(vec![DType::Float64])),
        )
        .unwrap();
    let sess = Session::new(g.g.clone());
    let e = sess.run(vec![], &[Output::new(r, 0)], &[]).unwrap_err();
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(
        e.message()
            .contains("Failed to find any matching files for"),
        "{e}"
    );
    // Construction-time checks.
    let bad = g.add(NodeSpec::new("RestoreV2", "bad").inputs([p, n, s]));
    assert!(bad.is_err(), "dtypes attribute is required");
}

#[test]
fn sharded_save_then_merge() {
    let tmp = TempDir::new("ops-merge");
    let final_prefix = tmp.path().join("model.ckpt");
    let mut g = G::new();
    let mut saves = Vec::new();
    let mut parts = Vec::new();
    for (i, (name, v)) in [("a", 1.0f32), ("b", 2.0f32)].into_iter().enumerate() {
        let part = tmp
            .path()
            .join("model.ckpt_temp")
            .join(format!("part-{i:05}-of-00002"));
        let p = g.constant(path_tensor(&part));
        let n = g.constant(strings(&[name]));
        let s = g.constant(strings(&[""]));
        let t = g.constant(Tensor::scalar(v));
        saves.push(
            g.add(NodeSpec::new("SaveV2", &format!("save{i}")).inputs([p, n, s, t]))
                .unwrap(),
        );
        parts.push(part.to_str().unwrap().to_string());
    }
    let prefixes = g.constant(strings(
        &parts.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let dest = g.constant(path_tensor(&final_prefix));
    let mut spec = NodeSpec::new("MergeV2Checkpoints", "merge").inputs([prefixes, dest]);
    for s in &saves {
        spec = spec.control(*s);
    }
    let merge = g.add(spec).unwrap();
    Session::new(g.g.clone())
        .run(vec![], &[], &[merge])
        .unwrap();
    let r = BundleReader::open(&final_prefix).unwrap();
    assert_eq!(r.num_shards(), 2);
    assert_eq!(r.read("b").unwrap().scalar_f64().unwrap(), 2.0);
    assert!(data_path(&final_prefix, 1, 2).exists());
    assert!(!tmp.path().join("model.ckpt_temp").exists());
}
