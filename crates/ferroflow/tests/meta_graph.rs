//! `import_meta_graph` on MetaGraphDefs TensorFlow 2.21 exported: the training graphs of every
//! TensorFlow 1 optimizer (`tests/fixtures/tf_apply`, by `tools/gen_tf_apply_fixtures.py`) train
//! from Rust through their `train_op` collection to TensorFlow's values, and a saved model's
//! meta graph (`tests/fixtures/meta_graph`, by `tools/gen_meta_graph_fixtures.py`, default attrs
//! stripped) restores its checkpoint through the saver it names.

mod common;

use common::{assert_close, fixture, read_json};
use ferroflow::meta_graph::{import_meta_graph, import_meta_graph_bytes, ImportOptions};
use ferroflow::{Code, GraphBuilder, Session};
use ferroflow_checkpoint::BundleReader;
use serde_json::Value as Json;

fn flat(v: &Json) -> Vec<f64> {
    match v {
        Json::Array(items) => items.iter().flat_map(flat).collect(),
        n => vec![n.as_f64().unwrap()],
    }
}

fn train_case(case: &str, expected: &Json, prefix: &str) {
    let mut g = GraphBuilder::new();
    let options = ImportOptions {
        prefix: prefix.to_string(),
        ..Default::default()
    };
    let path = fixture(&format!("tf_apply/{case}.meta"));
    let imported = import_meta_graph(&mut g, &path, &options).unwrap();
    assert_eq!(imported.train_op.len(), 1, "{case}");
    let scoped = |n: &str| {
        if prefix.is_empty() {
            n.to_string()
        } else {
            format!("{prefix}/{n}")
        }
    };
    let graph = g.graph();
    let var_name = scoped(expected["var"].as_str().unwrap());
    let var = imported
        .trainable_variables
        .iter()
        .find(|v| graph.read().node(v.var.node).name == var_name)
        .unwrap_or_else(|| panic!("{case}: {var_name} is not a trainable variable"));
    assert!(imported
        .global_variables
        .iter()
        .any(|v| graph.read().node(v.var.node).name == scoped("global_step")));
    assert_eq!(g.global_variables().len(), imported.global_variables.len());
    // Without a saver_def, a Saver over the global variables, as TensorFlow makes.
    assert!(imported.meta_graph.saver_def.is_none());
    assert!(imported.saver.is_some());
    let init = g.global_variables_initializer().unwrap();
    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[init]).unwrap();
    let start = sess.run(vec![], &[var.value], &[]).unwrap();
    assert_close(
        &start[0].to_f64_vec().unwrap(),
        &flat(&expected["start"]),
        0.0,
        0.0,
        case,
    );
    for (k, after) in expected["after"].as_array().unwrap().iter().enumerate() {
        sess.run(vec![], &[], &imported.train_op).unwrap();
        let got = sess.run(vec![], &[var.value], &[]).unwrap();
        assert_close(
            &got[0].to_f64_vec().unwrap(),
            &flat(after),
            1e-5,
            1e-6,
            &format!("{case} after {} steps", k + 1),
        );
    }
}

#[test]
fn tensorflow_training_graphs_train_through_their_train_op() {
    let expected = read_json(&fixture("tf_apply/expected.json"));
    let cases = expected["cases"].as_object().unwrap();
    assert!(cases.len() >= 13);
    for (case, want) in cases {
        train_case(case, want, "");
    }
    // Under an import scope.
    train_case("adam", &cases["adam"], "imported");
}

#[test]
fn a_saved_meta_graph_restores_through_its_saver() {
    let dir = fixture("meta_graph");
    let bytes = std::fs::read(dir.join("model.ckpt.meta")).unwrap();
    let mut g = GraphBuilder::new();
    let imported = import_meta_graph_bytes(&mut g, &bytes, &ImportOptions::default()).unwrap();
    let saver = imported.saver.as_ref().expect("the meta graph has a saver");
    assert_eq!(saver.saver_def().restore_op_name, "save/restore_all");
    assert!(!imported.global_variables.is_empty());
    let sess = Session::new(g.graph());
    let prefix = dir.join("model.ckpt");
    saver.restore(&sess, &prefix).unwrap();
    let reader = BundleReader::open(&prefix).unwrap();
    let graph = g.graph();
    for v in &imported.global_variables {
        let name = graph.read().node(v.var.node).name.clone();
        let got = sess.run(vec![], &[v.value], &[]).unwrap();
        let want = reader.read(&name).unwrap();
        assert_eq!(
            got[0].to_f64_vec().unwrap(),
            want.to_f64_vec().unwrap(),
            "{name}"
        );
    }
    // A collection the meta graph lacks is empty; a missing file is NotFound.
    assert!(imported
        .node_names("no_such_collection")
        .unwrap()
        .is_empty());
    let mut g2 = GraphBuilder::new();
    let err = import_meta_graph(&mut g2, dir.join("missing.meta"), &ImportOptions::default())
        .unwrap_err();
    assert_eq!(err.code(), Some(Code::NotFound));
    let err = import_meta_graph_bytes(&mut g2, b"\xff\xff not a proto", &ImportOptions::default())
        .unwrap_err();
    assert_eq!(err.code(), Some(Code::DataLoss));
}

#[test]
fn an_exported_meta_graph_imports_restores_and_trains_on() {
    use ferroflow::meta_graph::export_meta_graph;
    use ferroflow::saver::Saver;
    use ferroflow::train::{get_or_create_global_step, Optimizer};
    use ferroflow::{summary, Tensor};

    let dir = common::temp_dir("export_meta");
    let mut g = GraphBuilder::new();
    let w = g
        .variable("dense/kernel", Tensor::vector(vec![1.0f32, -2.0, 0.5]))
        .unwrap();
    let sq = g.mul(w.value, w.value).unwrap();
    let loss = g.reduce_sum(sq, &[0], false).unwrap();
    summary::scalar(&mut g, "loss", loss).unwrap();
    let step = get_or_create_global_step(&mut g).unwrap();
    let train = Optimizer::adam(0.1)
        .minimize(&mut g, loss, None, Some(&step))
        .unwrap();
    let mut saver = Saver::new(&mut g, None).unwrap();
    let meta = export_meta_graph(&g, Some(&saver), &[train]).unwrap();
    saver.set_meta_graph(Some(meta));
    let init = g.global_variables_initializer().unwrap();
    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[init]).unwrap();
    for _ in 0..2 {
        sess.run(vec![], &[], &[train]).unwrap();
    }
    let prefix = saver.save(&sess, dir.join("model.ckpt"), Some(2)).unwrap();
    sess.run(vec![], &[], &[train]).unwrap();
    let want = sess.run(vec![], &[w.value, loss], &[]).unwrap();

    // A fresh program: the meta graph, the checkpoint, one more step through train_op.
    let mut g2 = GraphBuilder::new();
    let imported =
        import_meta_graph(&mut g2, format!("{prefix}.meta"), &ImportOptions::default()).unwrap();
    assert_eq!(imported.global_variables.len(), 6);
    assert_eq!(imported.trainable_variables.len(), 1);
    assert_eq!(imported.train_op.len(), 1);
    assert_eq!(imported.summaries.len(), 1);
    assert_eq!(
        imported.node_names("global_step").unwrap(),
        vec!["global_step:0"]
    );
    let graph = g2.graph();
    // The graph was written in TensorFlow's form (TensorFlow's update ops) and read back
    // into ferroflow's fused one.
    let tf_ops: Vec<String> = imported
        .meta_graph
        .graph_def
        .as_ref()
        .unwrap()
        .node
        .iter()
        .map(|n| n.op.clone())
        .collect();
    assert!(tf_ops.iter().any(|op| op == "ApplyAdam"), "{tf_ops:?}");
    let sess2 = Session::new(g2.graph());
    imported
        .saver
        .as_ref()
        .unwrap()
        .restore(&sess2, &prefix)
        .unwrap();
    sess2.run(vec![], &[], &imported.train_op).unwrap();
    let w2 = imported.trainable_variables[0];
    let loss2 = graph.read().output_by_name("Sum:0").unwrap();
    let got = sess2.run(vec![], &[w2.value, loss2], &[]).unwrap();
    assert_eq!(got[0].to_f64_vec().unwrap(), want[0].to_f64_vec().unwrap());
    assert_eq!(got[1].to_f64_vec().unwrap(), want[1].to_f64_vec().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}
