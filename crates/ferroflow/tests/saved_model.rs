//! Loading SavedModels TensorFlow wrote (`tests/fixtures/saved_model/`, made
//! by `tools/make_saved_model_fixtures.py` with TensorFlow 2.21's
//! `tf.compat.v1` builders) and running their signatures, against the
//! outputs TensorFlow's own loader computed (`expected.json`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use ferroflow::saved_model::{proto, read_saved_model, SavedModel};
use ferroflow::{Code, DType, Error, Tensor};
use prost::Message;
use serde_json::Value as Json;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/saved_model")
}

fn manifest() -> Json {
    let text = std::fs::read_to_string(fixtures().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A tensor from the manifest's `{dtype, shape, values}`.
fn tensor(spec: &Json) -> Tensor {
    let dims: Vec<usize> = spec["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let values = spec["values"].as_array().unwrap();
    match spec["dtype"].as_str().unwrap() {
        "float32" => Tensor::from_vec(
            dims,
            values.iter().map(|v| v.as_f64().unwrap() as f32).collect(),
        ),
        "int64" => Tensor::from_vec(dims, values.iter().map(|v| v.as_i64().unwrap()).collect()),
        "int32" => Tensor::from_vec(
            dims,
            values.iter().map(|v| v.as_i64().unwrap() as i32).collect(),
        ),
        "string" => Tensor::from_vec(
            dims,
            values
                .iter()
                .map(|v| v.as_str().unwrap().as_bytes().to_vec())
                .collect(),
        ),
        other => panic!("dtype {other} is not in the fixtures"),
    }
    .unwrap()
}

fn assert_matches(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    match want.dtype() {
        DType::Float32 => {
            let (g, w) = (
                got.as_slice::<f32>().unwrap(),
                want.as_slice::<f32>().unwrap(),
            );
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-5 + 1e-5 * b.abs(),
                    "{what}[{i}]: {a} vs TensorFlow's {b}"
                );
            }
        }
        DType::Int64 => assert_eq!(got.as_slice::<i64>(), want.as_slice::<i64>(), "{what}"),
        DType::Int32 => assert_eq!(got.as_slice::<i32>(), want.as_slice::<i32>(), "{what}"),
        DType::String => assert_eq!(
            got.as_slice::<Vec<u8>>(),
            want.as_slice::<Vec<u8>>(),
            "{what}"
        ),
        other => panic!("{what}: dtype {other:?} is not in the fixtures"),
    }
}

#[test]
fn every_tensorflow_fixture_gives_tensorflows_outputs() {
    let manifest = manifest();
    let mut checked = 0;
    for (spec_name, spec) in manifest.as_object().unwrap() {
        let Some(dir) = spec.get("dir").and_then(Json::as_str) else {
            continue; // "tensorflow": the version
        };
        let tags: Vec<&str> = spec["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let model = SavedModel::load(fixtures().join(dir), &tags)
            .unwrap_or_else(|e| panic!("{spec_name}: {e}"));
        for (key, sig) in spec["signatures"].as_object().unwrap() {
            let inputs: Vec<(&str, Tensor)> = sig["inputs"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.as_str(), tensor(v)))
                .collect();
            let outputs = model
                .run(key, &inputs)
                .unwrap_or_else(|e| panic!("{spec_name} {key}: {e}"));
            let want = sig["outputs"].as_object().unwrap();
            let keys: Vec<&str> = outputs.iter().map(|(k, _)| k.as_str()).collect();
            let want_keys: Vec<&str> = want.keys().map(String::as_str).collect();
            assert_eq!(keys, want_keys, "{spec_name} {key}");
            for (k, got) in &outputs {
                assert_matches(got, &tensor(&want[k]), &format!("{spec_name} {key} {k}"));
                checked += 1;
            }
        }
    }
    // tf_mlp (2 signatures, 4 outputs), tf_conv serve and train, simple_save, asset, lookup.
    assert_eq!(checked, 10);
}

#[test]
fn signatures_describe_their_tensors() {
    let model = SavedModel::load(fixtures().join("tf_mlp"), &["serve"]).unwrap();
    assert_eq!(model.signature_keys(), ["classes", "serving_default"]);
    assert_eq!(model.tags(), ["serve"]);
    let sig = model.signature("serving_default").unwrap();
    assert_eq!(sig.method_name, "tensorflow/serving/predict");
    let x = &sig.inputs["x"];
    assert_eq!(x.name.as_deref(), Some("x:0"));
    assert_eq!(x.dtype, Some(DType::Float32));
    assert_eq!(x.shape.dims(), Some(&[None, Some(4)][..]));
    let keys: Vec<&str> = sig.outputs.keys().map(String::as_str).collect();
    assert_eq!(keys, ["logits", "probs"]);
    let classes = &model.signature("classes").unwrap().outputs["class_ids"];
    assert_eq!(classes.dtype, Some(DType::Int64));
    // A subset of the outputs, in the order asked for.
    let x = Tensor::from_vec([1, 4], vec![0.5f32, -1.0, 2.0, 0.25]).unwrap();
    let out = model
        .run_outputs("classes", &[("x", x)], &["probs", "class_ids"])
        .unwrap();
    assert_eq!(out[0].dims(), &[1, 3]);
    let sum: f32 = out[0].as_slice::<f32>().unwrap().iter().sum();
    assert!((sum - 1.0).abs() < 1e-5);
    assert_eq!(out[1].dtype(), DType::Int64);
}

#[test]
fn meta_graphs_are_picked_by_tag_set() {
    let dir = fixtures().join("tf_conv");
    let mut sets = SavedModel::tag_sets(&dir).unwrap();
    sets.sort();
    assert_eq!(sets, [vec!["serve".to_string()], vec!["train".to_string()]]);
    let serve = SavedModel::load(&dir, &["serve"]).unwrap();
    assert_eq!(serve.signature_keys(), ["serving_default"]);
    let train = SavedModel::load(&dir, &["train"]).unwrap();
    assert_eq!(train.signature_keys(), ["loss"]);
    // The training graph's update op (TensorFlow's ApplyGradientDescent) runs.
    let g = train.graph().read();
    let train_op = g.node_by_name("train_op").unwrap();
    drop(g);
    train
        .session()
        .run(
            vec![
                (
                    train.graph().read().output_by_name("images:0").unwrap(),
                    Tensor::zeros(DType::Float32, [2, 8, 8, 1]),
                ),
                (
                    train.graph().read().output_by_name("labels:0").unwrap(),
                    Tensor::from_vec([2], vec![0i64, 1]).unwrap(),
                ),
            ],
            &[],
            &[train_op],
        )
        .unwrap();

    let e = SavedModel::load(&dir, &["serve", "train"]).unwrap_err();
    assert_eq!(e.code(), Some(Code::NotFound));
    let msg = e.message();
    assert!(
        msg.contains("{'serve', 'train'}")
            && msg.contains("[serve], [train]")
            && msg.contains("tf_conv"),
        "{msg}"
    );
}

#[test]
fn assets_are_fed_their_new_path() {
    // The path TensorFlow baked into the graph is gone; only the fed one works.
    let dir = fixtures().join("tf_asset");
    let model = SavedModel::load(&dir, &["serve"]).unwrap();
    let out = model
        .run(
            "serving_default",
            &[("x", Tensor::from_vec([1], vec![1.0f32]).unwrap())],
        )
        .unwrap();
    let vocab = std::fs::read(dir.join("assets/vocab.txt")).unwrap();
    assert_eq!(out[0].0, "contents");
    assert_eq!(
        out[0].1.as_slice::<Vec<u8>>().unwrap(),
        std::slice::from_ref(&vocab)
    );
    assert_eq!(
        out[1].1.as_slice::<f32>().unwrap(),
        &[1.0 + vocab.len() as f32]
    );
}

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ferroflow-saved-model-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// A copy of fixture `name` in here.
    fn copy_of(tag: &str, name: &str) -> Scratch {
        let s = Scratch::new(tag);
        copy_dir(&fixtures().join(name), &s.0);
        s
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn load_err(dir: &Path, tags: &[&str]) -> Error {
    SavedModel::load(dir, tags).unwrap_err()
}

#[test]
fn missing_or_corrupt_saved_model_pb() {
    let empty = Scratch::new("empty");
    let e = load_err(&empty.0, &["serve"]);
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(e.message().contains(&*empty.0.to_string_lossy()), "{e}");
    assert!(e.message().contains("saved_model.pb"), "{e}");

    let corrupt = Scratch::new("corrupt");
    std::fs::write(
        corrupt.0.join("saved_model.pb"),
        b"\x0a\xff\xff\xff\xff\x0fgarbage",
    )
    .unwrap();
    let e = load_err(&corrupt.0, &["serve"]);
    assert_eq!(e.code(), Some(Code::DataLoss));
    assert!(e.message().contains("saved_model.pb"), "{e}");

    // A truncated real file.
    let truncated = Scratch::copy_of("truncated", "tf_mlp");
    let pb = truncated.0.join("saved_model.pb");
    let bytes = std::fs::read(&pb).unwrap();
    std::fs::write(&pb, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(
        load_err(&truncated.0, &["serve"]).code(),
        Some(Code::DataLoss)
    );
}

#[test]
fn missing_variables() {
    // The data shard gone: the restore op's error, naming the directory.
    let no_shard = Scratch::copy_of("no-shard", "tf_mlp");
    std::fs::remove_file(no_shard.0.join("variables/variables.data-00000-of-00001")).unwrap();
    let e = load_err(&no_shard.0, &["serve"]);
    assert!(e.code().is_some(), "{e:?}");
    assert!(
        e.message().contains(&*no_shard.0.to_string_lossy()) && e.message().contains("restoring"),
        "{e}"
    );
    // The index gone while a shard is there.
    let no_index = Scratch::copy_of("no-index", "tf_mlp");
    std::fs::remove_file(no_index.0.join("variables/variables.index")).unwrap();
    let e = load_err(&no_index.0, &["serve"]);
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(e.message().contains("variables.index"), "{e}");
}

#[test]
fn bad_signatures_and_inputs() {
    let model = SavedModel::load(fixtures().join("tf_mlp"), &["serve"]).unwrap();
    let x = || Tensor::from_vec([1, 4], vec![0.0f32; 4]).unwrap();
    let e = model.run("predict", &[("x", x())]).unwrap_err();
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(e.message().contains("'predict'") && e.message().contains("classes, serving_default"));
    let e = model.run("serving_default", &[("y", x())]).unwrap_err();
    assert_eq!(e.code(), Some(Code::InvalidArgument));
    assert!(e.message().contains("no input 'y'"), "{e}");
    let e = model
        .run(
            "serving_default",
            &[("x", Tensor::from_vec([1, 4], vec![0i64; 4]).unwrap())],
        )
        .unwrap_err();
    assert_eq!(e.code(), Some(Code::InvalidArgument));
    assert!(
        e.message().contains("float32") && e.message().contains("int64"),
        "{e}"
    );
    let e = model
        .run(
            "serving_default",
            &[("x", Tensor::from_vec([1, 3], vec![0f32; 3]).unwrap())],
        )
        .unwrap_err();
    assert_eq!(e.code(), Some(Code::InvalidArgument));
    let e = model
        .run_outputs("serving_default", &[("x", x())], &["nope"])
        .unwrap_err();
    assert!(e.message().contains("no output 'nope'"), "{e}");
    // Not feeding the placeholder is the runtime's error, not a crash.
    assert!(model.run("serving_default", &[]).is_err());
}

#[test]
fn a_signature_naming_a_missing_tensor() {
    let dir = Scratch::copy_of("bad-signature", "tf_simple_save");
    let mut saved = read_saved_model(&dir.0).unwrap();
    let sig = saved.meta_graphs[0]
        .signature_def
        .get_mut("serving_default")
        .unwrap();
    sig.outputs.get_mut("y").unwrap().name = Some("no_such_op:0".into());
    std::fs::write(dir.0.join("saved_model.pb"), saved.encode_to_vec()).unwrap();
    let model = SavedModel::load(&dir.0, &["serve"]).unwrap();
    let x = Tensor::from_vec([1, 3], vec![0f32; 3]).unwrap();
    let e = model.run("serving_default", &[("x", x)]).unwrap_err();
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(
        e.message().contains("no_such_op:0") && e.message().contains("output 'y'"),
        "{e}"
    );

    // A graph node of an op type ferroflow does not have.
    let mut saved = read_saved_model(&dir.0).unwrap();
    let graph = saved.meta_graphs[0].graph_def.as_mut().unwrap();
    graph.node[0].op = "NotAnOpAnywhere".into();
    let broken = Scratch::new("unknown-op");
    std::fs::write(broken.0.join("saved_model.pb"), saved.encode_to_vec()).unwrap();
    let e = load_err(&broken.0, &["serve"]);
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(
        e.message().contains("NotAnOpAnywhere") && e.message().contains("importing"),
        "{e}"
    );

    // A meta graph without a graph or variables loads (and has nothing to run).
    let bare = proto::SavedModel {
        saved_model_schema_version: 1,
        meta_graphs: vec![proto::MetaGraphDef {
            meta_info_def: Some(proto::MetaInfoDef {
                tags: vec!["serve".into()],
                ..Default::default()
            }),
            ..Default::default()
        }],
    };
    let empty = Scratch::new("bare");
    std::fs::write(empty.0.join("saved_model.pb"), bare.encode_to_vec()).unwrap();
    let model = SavedModel::load(&empty.0, &["serve"]).unwrap();
    assert!(model.signature_keys().is_empty());
}

#[test]
fn a_loaded_model_serves_from_several_threads() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    let model = SavedModel::load(fixtures().join("tf_mlp"), &["serve"]).unwrap();
    send_sync(&model);
    let x = Tensor::from_vec([1, 4], vec![0.5f32, -1.0, 2.0, 0.25]).unwrap();
    let want = model.run("serving_default", &[("x", x.clone())]).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..20 {
                    let got = model.run("serving_default", &[("x", x.clone())]).unwrap();
                    for ((_, a), (_, b)) in got.iter().zip(&want) {
                        assert_eq!(a.as_slice::<f32>().unwrap(), b.as_slice::<f32>().unwrap());
                    }
                }
            });
        }
    });
}
