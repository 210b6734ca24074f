//! The facade's Saver against checkpoints TensorFlow 2.21 wrote (`tests/fixtures/checkpoints`,
//! the team's golden set): the same save sequence gives TensorFlow's files byte for byte and its
//! `checkpoint` state file, TensorFlow's checkpoints restore, and restore failures say which
//! variable does not fit.

mod common;

use common::{fixture, read_json, read_npz, temp_dir};
use ferroflow::saver::{
    get_checkpoint_state, latest_checkpoint, update_checkpoint_state, CheckpointState, Saver,
};
use ferroflow::train::get_or_create_global_step;
use ferroflow::{Code, DType, GraphBuilder, PartialShape, Session, Tensor};
use std::path::Path;

fn basename(p: &str) -> String {
    Path::new(p)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn max_to_keep_run_matches_tensorflow_file_for_file() {
    let case = fixture("checkpoints/max_to_keep");
    let manifest = read_json(&case.join("list_variables.json"));
    // TensorFlow ran: for s in [10, 20, 30, 40, 50]: w += 1; global_step = s; save(step s).
    let steps: Vec<i64> = manifest["save_returned_basenames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            b.as_str()
                .unwrap()
                .rsplit('-')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    let mut g = GraphBuilder::new();
    let w = g.variable("w", Tensor::vector(vec![0.0f32; 3])).unwrap();
    let step = get_or_create_global_step(&mut g).unwrap();
    let one = g.constant(Tensor::vector(vec![1.0f32; 3]), "one").unwrap();
    let inc = g.assign_add(w.var, one).unwrap();
    let s = g
        .placeholder(DType::Int64, PartialShape::scalar(), "s")
        .unwrap();
    let set_step = g.assign(step.var, s).unwrap();
    let mut saver = Saver::new(&mut g, None).unwrap().max_to_keep(3);
    let init = g.global_variables_initializer().unwrap();
    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[init]).unwrap();
    let dir = temp_dir("max_to_keep");
    let prefix = dir.join("ckpt").join("model.ckpt");
    let mut returned = Vec::new();
    for k in steps {
        sess.run(
            vec![(s, Tensor::scalar(k))],
            &[],
            &[inc.node, set_step.node],
        )
        .unwrap();
        returned.push(basename(&saver.save(&sess, &prefix, Some(k)).unwrap()));
    }
    let strings = |key: &str| -> Vec<String> {
        manifest[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(returned, strings("save_returned_basenames"));
    let kept: Vec<String> = saver
        .last_checkpoints()
        .iter()
        .map(|p| basename(p))
        .collect();
    assert_eq!(kept, strings("saver_last_checkpoints_basenames"));
    // The state file: TensorFlow's text, with the absolute directory this run used.
    let ckpt_dir = dir.join("ckpt");
    let text = std::fs::read_to_string(ckpt_dir.join("checkpoint")).unwrap();
    let relative = text.replace(&format!("{}/", ckpt_dir.display()), "");
    assert_eq!(
        relative,
        manifest["checkpoint_state_file_text"].as_str().unwrap()
    );
    let latest = latest_checkpoint(&ckpt_dir).unwrap().unwrap();
    assert_eq!(
        basename(&latest),
        manifest["latest_checkpoint_basename"].as_str().unwrap()
    );
    // Every file TensorFlow kept (but its .meta graphs) and no other, byte for byte.
    let mut files: Vec<String> = std::fs::read_dir(&ckpt_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let want: Vec<String> = strings("tf_files")
        .into_iter()
        .filter(|f| !f.ends_with(".meta"))
        .collect();
    assert_eq!(files, want);
    for f in files.iter().filter(|f| *f != "checkpoint") {
        let ours = std::fs::read(ckpt_dir.join(f)).unwrap();
        let theirs = std::fs::read(case.join("ckpt").join(f)).unwrap();
        assert!(ours == theirs, "{f} differs from TensorFlow's");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn restores_tensorflows_adam_checkpoint() {
    let case = fixture("checkpoints/adam_model");
    let manifest = read_json(&case.join("list_variables.json"));
    let values = read_npz(&case.join("values.npz"));
    let mut g = GraphBuilder::new();
    let mut vars = Vec::new();
    for v in manifest["variables"].as_array().unwrap() {
        let dtype = match v["dtype"].as_str().unwrap() {
            "float32" => DType::Float32,
            "int64" => DType::Int64,
            other => panic!("{other}"),
        };
        let shape: Vec<usize> = v["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        let h = g
            .variable(v["name"].as_str().unwrap(), Tensor::zeros(dtype, shape))
            .unwrap();
        vars.push((h, v["npz_key"].as_str().unwrap().to_string()));
    }
    let saver = Saver::new(&mut g, None).unwrap();
    let sess = Session::new(g.graph());
    // TensorFlow's state file (relative paths) names the checkpoint.
    let state = get_checkpoint_state(case.join("ckpt")).unwrap().unwrap();
    assert_eq!(
        state.all_model_checkpoint_paths,
        vec![state.model_checkpoint_path.clone()]
    );
    let latest = latest_checkpoint(case.join("ckpt")).unwrap().unwrap();
    assert_eq!(
        Path::new(&latest),
        case.join(manifest["checkpoint_prefix"].as_str().unwrap())
    );
    saver.restore(&sess, &latest).unwrap();
    for (h, key) in &vars {
        let got = sess.run(vec![], &[h.value], &[]).unwrap();
        assert_eq!(got[0].to_f64_vec().unwrap(), values[key].values, "{key}");
    }
}

#[test]
fn restore_errors_name_the_variables_that_do_not_fit() {
    let dir = temp_dir("restore_errors");
    let prefix = dir.join("model");
    {
        let mut g = GraphBuilder::new();
        g.variable("a", Tensor::vector(vec![1.0f32, 2.0])).unwrap();
        let mut saver = Saver::new(&mut g, None).unwrap();
        let init = g.global_variables_initializer().unwrap();
        let sess = Session::new(g.graph());
        sess.run(vec![], &[], &[init]).unwrap();
        assert_eq!(
            saver.save(&sess, &prefix, None).unwrap(),
            prefix.to_string_lossy()
        );
    }
    // A variable the checkpoint lacks.
    let mut g = GraphBuilder::new();
    g.variable("a", Tensor::vector(vec![0.0f32, 0.0])).unwrap();
    g.variable("b", Tensor::scalar(0.0f32)).unwrap();
    let saver = Saver::new(&mut g, None).unwrap();
    let sess = Session::new(g.graph());
    let err = saver.restore(&sess, &prefix).unwrap_err();
    assert_eq!(err.code(), Some(Code::NotFound));
    let text = err.to_string();
    assert!(
        text.starts_with("Restoring from checkpoint failed."),
        "{text}"
    );
    assert!(
        text.contains("Key b (variable b) not found in checkpoint"),
        "{text}"
    );
    // Another shape.
    let mut g = GraphBuilder::new();
    g.variable("a", Tensor::vector(vec![0.0f32; 3])).unwrap();
    let saver = Saver::new(&mut g, None).unwrap();
    let sess = Session::new(g.graph());
    let err = saver.restore(&sess, &prefix).unwrap_err();
    assert_eq!(err.code(), Some(Code::InvalidArgument));
    assert!(
        err.to_string()
            .contains("Variable a has shape (3,) but checkpoint key a has shape (2,)"),
        "{err}"
    );
    // No checkpoint there.
    let err = saver.restore(&sess, dir.join("nothing")).unwrap_err();
    assert!(matches!(err, ferroflow::Error::Value(_)), "{err}");
    assert!(err
        .to_string()
        .starts_with("The passed save_path is not a valid checkpoint"));
    // A save into a directory whose parent is missing.
    let mut saver = saver;
    let sess2 = Session::new(g.graph());
    let err = saver
        .save(&sess2, dir.join("x").join("y").join("model"), None)
        .unwrap_err();
    assert!(err.to_string().contains("Parent directory of"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn state_file_keeps_relative_paths_and_rejects_garbage() {
    let dir = temp_dir("state");
    update_checkpoint_state(
        &dir,
        &dir.join("m-2").to_string_lossy(),
        &[dir.join("m-1").to_string_lossy().into_owned()],
    )
    .unwrap();
    let state = get_checkpoint_state(&dir).unwrap().unwrap();
    assert_eq!(
        state,
        CheckpointState {
            model_checkpoint_path: dir.join("m-2").to_string_lossy().into_owned(),
            all_model_checkpoint_paths: vec![
                dir.join("m-1").to_string_lossy().into_owned(),
                dir.join("m-2").to_string_lossy().into_owned()
            ],
            ..Default::default()
        }
    );
    // Neither checkpoint's files exist.
    assert_eq!(latest_checkpoint(&dir).unwrap(), None);
    std::fs::write(dir.join("checkpoint"), "what is this").unwrap();
    let err = get_checkpoint_state(&dir).unwrap_err();
    assert_eq!(err.code(), Some(Code::DataLoss));
    assert_eq!(get_checkpoint_state(dir.join("missing")).unwrap(), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Builds `w`, a loss and an Adam train op with a global step; returns the builder, the train op
/// and every variable.
fn adam_model() -> (
    GraphBuilder,
    ferroflow::NodeId,
    Vec<ferroflow::VariableHandle>,
) {
    let mut g = GraphBuilder::new();
    let w = g
        .variable("w", Tensor::vector(vec![1.0f32, -2.0, 0.5]))
        .unwrap();
    let sq = g.mul(w.value, w.value).unwrap();
    let loss = g.reduce_sum(sq, &[0], false).unwrap();
    let step = get_or_create_global_step(&mut g).unwrap();
    let train = ferroflow::train::Optimizer::adam(0.1)
        .minimize(&mut g, loss, None, Some(&step))
        .unwrap();
    let vars = g.global_variables();
    (g, train, vars)
}

#[test]
fn save_then_restore_in_a_new_graph_round_trips_every_variable() {
    let dir = temp_dir("round_trip");
    let (mut g, train, vars) = adam_model();
    assert_eq!(
        vars.len(),
        6,
        "w, global_step, the beta powers and two slots"
    );
    let mut saver = Saver::new(&mut g, None).unwrap();
    let init = g.global_variables_initializer().unwrap();
    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[init]).unwrap();
    for _ in 0..4 {
        sess.run(vec![], &[], &[train]).unwrap();
    }
    let values: Vec<Vec<f64>> = vars
        .iter()
        .map(|v| {
            sess.run(vec![], &[v.value], &[]).unwrap()[0]
                .to_f64_vec()
                .unwrap()
        })
        .collect();
    let path = saver.save(&sess, dir.join("model.ckpt"), Some(4)).unwrap();
    assert_eq!(Path::new(&path), dir.join("model.ckpt-4"));

    let (mut g2, _, vars2) = adam_model();
    let saver2 = Saver::new(&mut g2, None).unwrap();
    let sess2 = Session::new(g2.graph());
    saver2
        .restore(&sess2, latest_checkpoint(&dir).unwrap().unwrap())
        .unwrap();
    for (v, want) in vars2.iter().zip(&values) {
        let got = sess2.run(vec![], &[v.value], &[]).unwrap()[0]
            .to_f64_vec()
            .unwrap();
        assert_eq!(&got, want);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
