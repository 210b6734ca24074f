//! TensorBoard event files against the golden runs written by TensorFlow
//! (`tests/fixtures/records/events/<case>`): reading them back to exactly
//! the recorded content, re-serializing every event to TF's bytes, the
//! summary kernels reproducing TF's summaries from the recorded inputs, and
//! the event writer round-tripping whole runs. Every parameter comes from the
//! manifests (`events.json`) and inputs (`inputs.npz`).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use ferroflow_records::events::{SeenTags, FILE_VERSION};
use ferroflow_records::proto::summary::{value::Value as Kind, Value};
use ferroflow_records::proto::{
    event::What, DataType, Event, HistogramProto, LogLevel, Message, SessionStatus, Summary,
    SummaryMetadata, TensorProto,
};
use ferroflow_records::summary::{self as kernels, image, AudioShape, ImageShape};
use ferroflow_records::{Compression, EventFileWriter, ReadOptions, RecordReader};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

struct Case {
    name: String,
    dir: PathBuf,
    manifest: Json,
}

impl Case {
    fn events_json(&self) -> &Vec<Json> {
        self.manifest["events"].as_array().expect("events")
    }

    fn event_file(&self) -> PathBuf {
        self.dir
            .join("logdir")
            .join(self.manifest["event_file"].as_str().unwrap())
    }

    /// The raw records and the decoded events of the golden file.
    fn read(&self) -> (Vec<Vec<u8>>, Vec<Event>) {
        let records: Vec<Vec<u8>> =
            RecordReader::open(self.event_file(), Compression::None, ReadOptions::strict())
                .unwrap()
                .map(Result::unwrap)
                .collect();
        let events = records
            .iter()
            .map(|r| Event::decode(r.as_slice()).unwrap())
            .collect();
        (records, events)
    }

    fn inputs(&self) -> BTreeMap<String, Npy> {
        read_npz(&self.dir.join("inputs.npz"))
    }

    /// The `max_outputs=N` given in the manifest's description of a summary
    /// kind, if any.
    fn max_outputs(&self, kind: &str) -> Option<usize> {
        let text = self.manifest["summaries"][kind].as_str()?;
        let at = text.find("max_outputs=")? + "max_outputs=".len();
        let digits: String = text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    }

    /// The text input of `step` (keys `step<k>` or `step<k>.<name>`).
    fn text_input(&self, step: i64) -> Vec<u8> {
        let inputs = self.manifest["text_inputs"]
            .as_object()
            .expect("text_inputs");
        let prefix = format!("step{step}");
        let (_, v) = inputs
            .iter()
            .find(|(k, _)| *k == &prefix || k.starts_with(&format!("{prefix}.")))
            .unwrap_or_else(|| panic!("no text input for step {step}"));
        v.as_str().unwrap().as_bytes().to_vec()
    }
}

/// Every case directory (one with an `events.json`).
fn cases() -> Vec<Case> {
    let root = fixtures().join("events");
    let mut out: Vec<Case> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("events.json").exists())
        .map(|dir| Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            manifest: read_json(&dir.join("events.json")),
            dir,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(
        !out.is_empty(),
        "no event fixtures under {}",
        root.display()
    );
    out
}

/// An input array `step<k>.<key>` whose key starts with `stem`.
fn input<'a>(inputs: &'a BTreeMap<String, Npy>, step: i64, stem: &str) -> &'a Npy {
    let prefix = format!("step{step}.");
    inputs
        .iter()
        .find(|(k, _)| {
            k.strip_prefix(&prefix)
                .is_some_and(|rest| rest.starts_with(stem))
        })
        .map(|(_, v)| v)
        .unwrap_or_else(|| {
            panic!(
                "no input {prefix}{stem}* in {:?}",
                inputs.keys().collect::<Vec<_>>()
            )
        })
}

/// `DtFloat` -> `DT_FLOAT`, `StatusUnspecified` -> `STATUS_UNSPECIFIED`.
fn proto_enum_name(debug_name: &str) -> String {
    let mut out = String::new();
    for (i, c) in debug_name.chars().enumerate() {
        if i > 0 && c.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn json_f32(v: &Json) -> f32 {
    match v {
        Json::Number(n) => n.to_string().parse().unwrap(),
        other => json_f64(other) as f32,
    }
}

fn json_str<'a>(v: &'a Json, key: &str) -> &'a str {
    v.get(key).and_then(Json::as_str).unwrap_or("")
}

fn json_b64(v: &Json, key: &str) -> Vec<u8> {
    base64(json_str(v, key))
}

fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Doubles in the manifest's proto JSON and decoded tensors are printed with
/// 15-16 significant digits, not always enough to round-trip, so they are
/// compared to 1e-14 relative; the exact bits are checked against the file
/// itself in `summary_kernels_reproduce_tf_summaries`.
fn close_f64(a: f64, b: f64) -> bool {
    same_f64(a, b) || (a - b).abs() <= 1e-14 * a.abs().max(b.abs())
}

fn check_histo(ours: &HistogramProto, exp: &Json, ctx: &str) {
    for (name, v) in [
        ("min", ours.min),
        ("max", ours.max),
        ("num", ours.num),
        ("sum", ours.sum),
        ("sum_squares", ours.sum_squares),
    ] {
        let want = exp.get(name).map(json_f64).unwrap_or(0.0);
        assert!(close_f64(v, want), "{ctx}: histo.{name} {v} != {want}");
    }
    for (name, v) in [
        ("bucket_limit", &ours.bucket_limit),
        ("bucket", &ours.bucket),
    ] {
        let want: Vec<f64> = exp
            .get(name)
            .and_then(Json::as_array)
            .map(|a| a.iter().map(json_f64).collect())
            .unwrap_or_default();
        assert_eq!(v.len(), want.len(), "{ctx}: histo.{name} length");
        for (i, (a, b)) in v.iter().zip(&want).enumerate() {
            assert!(close_f64(*a, *b), "{ctx}: histo.{name}[{i}] {a} != {b}");
        }
    }
}

fn check_tensor(t: &TensorProto, exp: &Json, ctx: &str) {
    let dtype = DataType::try_from(t.dtype).map(|d| proto_enum_name(&format!("{d:?}")));
    assert_eq!(
        dtype.as_deref().unwrap_or("?"),
        json_str(exp, "dtype"),
        "{ctx}: dtype"
    );
    let exp_shape = &exp["tensor_shape"];
    assert_eq!(
        t.tensor_shape.is_some(),
        !exp_shape.is_null(),
        "{ctx}: tensor_shape presence"
    );
    if let Some(shape) = &t.tensor_shape {
        let dims: Vec<i64> = exp_shape
            .get("dim")
            .and_then(Json::as_array)
            .map(|d| {
                d.iter()
                    .map(|x| x.get("size").map(json_i64).unwrap_or(0))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(shape.dims(), dims, "{ctx}: dims");
        assert_eq!(
            shape.unknown_rank,
            exp_shape
                .get("unknown_rank")
                .and_then(Json::as_bool)
                .unwrap_or(false)
        );
    }
    assert_eq!(
        t.tensor_content,
        json_b64(exp, "tensor_content"),
        "{ctx}: tensor_content"
    );
    let strings: Vec<Vec<u8>> = exp
        .get("string_val")
        .and_then(Json::as_array)
        .map(|a| a.iter().map(|s| base64(s.as_str().unwrap())).collect())
        .unwrap_or_default();
    assert_eq!(t.string_val, strings, "{ctx}: string_val");
    let floats: Vec<f32> = exp
        .get("float_val")
        .and_then(Json::as_array)
        .map(|a| a.iter().map(json_f32).collect())
        .unwrap_or_default();
    assert_eq!(t.float_val, floats, "{ctx}: float_val");
    let doubles: Vec<f64> = exp
        .get("double_val")
        .and_then(Json::as_array)
        .map(|a| a.iter().map(json_f64).collect())
        .unwrap_or_default();
    assert_eq!(t.double_val, doubles, "{ctx}: double_val");
    let ints: Vec<i64> = exp
        .get("int_val")
        .and_then(Json::as_array)
        .map(|a| a.iter().map(json_i64).collect())
        .unwrap_or_default();
    assert_eq!(
        t.int_val.iter().map(|&v| v as i64).collect::<Vec<_>>(),
        ints,
        "{ctx}: int_val"
    );
    let int64s: Vec<i64> = exp
        .get("int64_val")
        .and_then(Json::as_array)
        .map(|a| a.iter().map(json_i64).collect())
        .unwrap_or_default();
    assert_eq!(t.int64_val, int64s, "{ctx}: int64_val");
}

/// Compares a decoded tensor with `decoded_tensor` (`tf.make_ndarray`).
fn check_decoded(t: &TensorProto, exp: &Json, ctx: &str) {
    let shape: Vec<i64> = exp["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(json_i64)
        .collect();
    assert_eq!(t.dims(), shape, "{ctx}: decoded shape");
    let mut flat = Vec::new();
    fn flatten<'a>(v: &'a Json, out: &mut Vec<&'a Json>) {
        match v.as_array() {
            Some(a) => a.iter().for_each(|x| flatten(x, out)),
            None => out.push(v),
        }
    }
    flatten(&exp["value"], &mut flat);
    if exp["dtype"].as_str() == Some("string") {
        let ours = t.to_strings().unwrap();
        let want: Vec<Vec<u8>> = flat.iter().map(|v| json_bytes(v)).collect();
        assert_eq!(ours, want, "{ctx}: decoded strings");
    } else {
        let ours = t.to_f64_vec().unwrap();
        let want: Vec<f64> = flat.iter().map(|v| json_f64(v)).collect();
        assert_eq!(ours.len(), want.len(), "{ctx}: decoded length");
        for (i, (a, b)) in ours.iter().zip(&want).enumerate() {
            assert!(close_f64(*a, *b), "{ctx}: decoded[{i}] {a} != {b}");
        }
    }
}

fn check_metadata(m: &Option<SummaryMetadata>, exp: &Json, value: &Json, ctx: &str) {
    assert_eq!(m.is_some(), !exp.is_null(), "{ctx}: metadata presence");
    let Some(m) = m else { return };
    let plugin = &exp["plugin_data"];
    assert_eq!(
        m.plugin_data.is_some(),
        !plugin.is_null(),
        "{ctx}: plugin_data presence"
    );
    if let Some(p) = &m.plugin_data {
        assert_eq!(
            p.plugin_name,
            json_str(plugin, "plugin_name"),
            "{ctx}: plugin_name"
        );
        assert_eq!(
            p.content,
            json_b64(plugin, "content"),
            "{ctx}: plugin content"
        );
        if let Some(h) = value.get("plugin_content_hex").and_then(Json::as_str) {
            assert_eq!(to_hex(&p.content), h, "{ctx}: plugin_content_hex");
        }
    }
    assert_eq!(
        m.display_name,
        json_str(exp, "display_name"),
        "{ctx}: display_name"
    );
    assert_eq!(
        m.summary_description,
        json_str(exp, "summary_description"),
        "{ctx}: description"
    );
    let class = match m.data_class {
        0 => "DATA_CLASS_UNKNOWN",
        1 => "DATA_CLASS_SCALAR",
        2 => "DATA_CLASS_TENSOR",
        3 => "DATA_CLASS_BLOB_SEQUENCE",
        _ => "?",
    };
    assert_eq!(
        class,
        exp.get("data_class")
            .and_then(Json::as_str)
            .unwrap_or("DATA_CLASS_UNKNOWN"),
        "{ctx}"
    );
}

fn check_value(v: &Value, exp: &Json, ctx: &str) {
    let ctx = &format!("{ctx} tag {}", v.tag);
    assert_eq!(v.tag, json_str(exp, "tag"), "{ctx}: tag");
    assert_eq!(v.node_name, json_str(exp, "node_name"), "{ctx}: node_name");
    check_metadata(&v.metadata, &exp["metadata"], exp, ctx);
    let kind = json_str(exp, "value_kind");
    match v.value.as_ref().expect("a value") {
        Kind::SimpleValue(x) => {
            assert_eq!(kind, "simple_value", "{ctx}");
            assert_eq!(
                x.to_bits(),
                json_f32(&exp["simple_value"]).to_bits(),
                "{ctx}: simple_value"
            );
        }
        Kind::Histo(h) => {
            assert_eq!(kind, "histo", "{ctx}");
            check_histo(h, &exp["histo"], ctx);
        }
        Kind::Image(im) => {
            assert_eq!(kind, "image", "{ctx}");
            let e = &exp["image"];
            assert_eq!(
                im.height as i64,
                e.get("height").map(json_i64).unwrap_or(0),
                "{ctx}"
            );
            assert_eq!(
                im.width as i64,
                e.get("width").map(json_i64).unwrap_or(0),
                "{ctx}"
            );
            assert_eq!(
                im.colorspace as i64,
                e.get("colorspace").map(json_i64).unwrap_or(0),
                "{ctx}"
            );
            assert_eq!(
                im.encoded_image_string,
                json_b64(e, "encoded_image_string"),
                "{ctx}"
            );
        }
        Kind::Audio(a) => {
            assert_eq!(kind, "audio", "{ctx}");
            let e = &exp["audio"];
            assert_eq!(
                a.sample_rate.to_bits(),
                json_f32(&e["sample_rate"]).to_bits(),
                "{ctx}"
            );
            assert_eq!(
                a.num_channels,
                e.get("num_channels").map(json_i64).unwrap_or(0),
                "{ctx}"
            );
            assert_eq!(
                a.length_frames,
                e.get("length_frames").map(json_i64).unwrap_or(0),
                "{ctx}"
            );
            assert_eq!(
                a.encoded_audio_string,
                json_b64(e, "encoded_audio_string"),
                "{ctx}"
            );
            assert_eq!(a.content_type, json_str(e, "content_type"), "{ctx}");
        }
        Kind::Tensor(t) => {
            assert_eq!(kind, "tensor", "{ctx}");
            check_tensor(t, &exp["tensor"], ctx);
            if let Some(d) = exp.get("decoded_tensor") {
                check_decoded(t, d, ctx);
            }
        }
        Kind::ObsoleteOldStyleHistogram(b) => {
            assert_eq!(kind, "obsolete_old_style_histogram", "{ctx}");
            assert_eq!(*b, json_b64(exp, "obsolete_old_style_histogram"));
        }
    }
}

fn check_event(ev: &Event, exp: &Json, ctx: &str) {
    assert_eq!(ev.step, exp["step"].as_i64().unwrap(), "{ctx}: step");
    assert_eq!(ev.kind(), exp["kind"].as_str().unwrap(), "{ctx}: kind");
    let pj = &exp["proto_json"];
    match ev.what.as_ref().unwrap() {
        What::FileVersion(v) => {
            assert_eq!(v, json_str(pj, "file_version"), "{ctx}");
            let writer = pj["source_metadata"].get("writer").and_then(Json::as_str);
            assert_eq!(
                ev.source_metadata.as_ref().map(|m| m.writer.as_str()),
                writer,
                "{ctx}"
            );
        }
        What::GraphDef(bytes) | What::MetaGraphDef(bytes) => {
            let kind = ev.kind();
            assert_eq!(
                bytes.len() as u64,
                exp[format!("{kind}_len")].as_u64().unwrap(),
                "{ctx}"
            );
            let digest = to_hex(&Sha256::digest(bytes));
            assert_eq!(
                digest,
                exp[format!("{kind}_sha256")].as_str().unwrap(),
                "{ctx}"
            );
            if let (What::GraphDef(_), Some(names)) =
                (ev.what.as_ref().unwrap(), exp.get("graph_node_names"))
            {
                let graph = GraphDef::decode(bytes.as_slice()).unwrap();
                let ours: Vec<&str> = graph.node.iter().map(|n| n.name.as_str()).collect();
                let want: Vec<&str> = names
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap())
                    .collect();
                assert_eq!(ours, want, "{ctx}: node names");
                let ops: Vec<&str> = graph.node.iter().map(|n| n.op.as_str()).collect();
                let want_ops: Vec<&str> = exp["graph_node_ops"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap())
                    .collect();
                assert_eq!(ops, want_ops, "{ctx}: node ops");
            }
        }
        What::SessionLog(log) => {
            let e = &pj["session_log"];
            let status =
                SessionStatus::try_from(log.status).map(|s| proto_enum_name(&format!("{s:?}")));
            let want = e
                .get("status")
                .and_then(Json::as_str)
                .unwrap_or("STATUS_UNSPECIFIED");
            assert_eq!(status.as_deref().unwrap_or("?"), want, "{ctx}");
            assert_eq!(log.checkpoint_path, json_str(e, "checkpoint_path"), "{ctx}");
            assert_eq!(log.msg, json_str(e, "msg"), "{ctx}");
        }
        What::LogMessage(m) => {
            let e = &pj["log_message"];
            let level = LogLevel::try_from(m.level).map(|s| proto_enum_name(&format!("{s:?}")));
            assert_eq!(
                level.as_deref().unwrap_or("?"),
                e.get("level").and_then(Json::as_str).unwrap_or("UNKNOWN")
            );
            assert_eq!(m.message, json_str(e, "message"), "{ctx}");
        }
        What::TaggedRunMetadata(m) => {
            let e = &pj["tagged_run_metadata"];
            assert_eq!(m.tag, json_str(e, "tag"), "{ctx}");
        }
        What::Summary(s) => {
            let values = exp["summary_values"].as_array().unwrap();
            assert_eq!(s.value.len(), values.len(), "{ctx}: number of values");
            for (v, e) in s.value.iter().zip(values) {
                check_value(v, e, ctx);
            }
        }
    }
}

/// Just enough of GraphDef to list nodes.
#[derive(Clone, PartialEq, prost::Message)]
struct NodeDef {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    op: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct GraphDef {
    #[prost(message, repeated, tag = "1")]
    node: Vec<NodeDef>,
}

#[test]
fn golden_event_files_read_back_to_the_recorded_content() {
    for case in cases() {
        let (records, events) = case.read();
        let expected = case.events_json();
        assert_eq!(
            events.len() as u64,
            case.manifest["num_events"].as_u64().unwrap(),
            "{}",
            case.name
        );
        assert_eq!(events.len(), expected.len(), "{}", case.name);
        for (i, (ev, exp)) in events.iter().zip(expected).enumerate() {
            let ctx = format!("{} event {i}", case.name);
            check_event(ev, exp, &ctx);
            assert_eq!(
                ev.wall_time.to_bits(),
                json_f64(&exp["wall_time"]).to_bits(),
                "{ctx}: wall_time"
            );
            // Serializing the parsed event gives TensorFlow's bytes back.
            assert_eq!(
                ev.encode_to_vec(),
                records[i],
                "{ctx}: re-serialized bytes differ"
            );
        }
        // The first event is the file version, stamped in whole seconds.
        let first = &events[0];
        assert_eq!(first.kind(), "file_version");
        assert_eq!(first.wall_time.fract(), 0.0);
        assert!(matches!(&first.what, Some(What::FileVersion(v)) if v == FILE_VERSION));
    }
}

/// The summary values of TF's summary events at `step`, in file order.
fn golden_values(events: &[Event], step: i64) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e.step == step)
        .filter_map(Event::summary)
        .flat_map(|s| s.value.iter())
        .collect()
}

fn steps(case: &Case) -> Vec<i64> {
    case.manifest["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(json_i64)
        .collect()
}

fn dims(npy: &Npy) -> Vec<usize> {
    npy.shape.clone()
}

/// Strips a TF1 output suffix: `name/image/3` -> (`name`, 3), `name/image` -> (`name`, 0).
fn split_output_tag<'a>(tag: &'a str, kind: &str) -> (&'a str, usize, bool) {
    let marker = format!("/{kind}");
    if let Some(name) = tag.strip_suffix(&marker) {
        return (name, 0, true);
    }
    let at = tag.rfind(&format!("{marker}/")).expect("output tag");
    (
        &tag[..at],
        tag[at + marker.len() + 1..].parse().unwrap(),
        false,
    )
}

/// Rebuilds each golden summary value from the recorded inputs with our
/// kernels, and checks it against TensorFlow's value.
fn rebuild(case: &Case, inputs: &BTreeMap<String, Npy>, step: i64, golden: &Value) -> Value {
    let ctx = format!("{} step {step} tag {}", case.name, golden.tag);
    let plugin = golden
        .metadata
        .as_ref()
        .map(SummaryMetadata::plugin_name)
        .unwrap_or("");
    match golden.value.as_ref().unwrap() {
        // TF1 ops.
        Kind::SimpleValue(_) => {
            let x = input(inputs, step, "scal").as_f64()[0] as f32;
            kernels::scalar(&golden.tag, x)
        }
        Kind::Histo(_) => {
            let x = input(inputs, step, "hist").as_f64();
            kernels::histogram_summary(&golden.tag, &x).unwrap()
        }
        Kind::Image(im) => {
            let (name, index, single) = split_output_tag(&golden.tag, "image");
            let max_outputs = if single {
                1
            } else {
                case.max_outputs("image").unwrap_or(index + 1).max(2)
            };
            let npy = input(inputs, step, "imag");
            let shape = ImageShape::new(&dims(npy)).unwrap();
            let pixels = match npy.descr.as_str() {
                "|u1" => npy.u8s(),
                _ => image::normalize_float_images(&npy.f32s(), shape, &kernels::DEFAULT_BAD_COLOR)
                    .unwrap(),
            };
            let ours = kernels::image_summaries(name, &pixels, shape, max_outputs).unwrap();
            let mine = ours.into_iter().nth(index).expect("image index");
            let Some(Kind::Image(my_im)) = &mine.value else {
                panic!("{ctx}")
            };
            assert_eq!(
                (my_im.height, my_im.width, my_im.colorspace),
                (im.height, im.width, im.colorspace),
                "{ctx}"
            );
            // PNG bytes depend on the deflate implementation: compare pixels,
            // with each other and with the input image.
            let (w, h, c, golden_px) = decode_png(&im.encoded_image_string);
            let (w2, h2, c2, our_px) = decode_png(&my_im.encoded_image_string);
            assert_eq!((w, h, c), (w2, h2, c2), "{ctx}");
            assert_eq!(golden_px, our_px, "{ctx}: pixels");
            let per = shape.image_len();
            assert_eq!(
                golden_px,
                pixels[index * per..(index + 1) * per],
                "{ctx}: input pixels"
            );
            // Same value otherwise; carry TF's PNG for whole-value comparison.
            let mut mine = mine;
            if let Some(Kind::Image(x)) = &mut mine.value {
                x.encoded_image_string = im.encoded_image_string.clone();
            }
            mine
        }
        Kind::Audio(a) => {
            let (name, index, single) = split_output_tag(&golden.tag, "audio");
            let max_outputs = if single {
                1
            } else {
                case.max_outputs("audio").unwrap_or(index + 1).max(2)
            };
            let npy = input(inputs, step, "audi");
            let shape = AudioShape::new(&dims(npy)).unwrap();
            let ours =
                kernels::audio_summaries(name, &npy.f32s(), shape, a.sample_rate, max_outputs)
                    .unwrap();
            ours.into_iter().nth(index).expect("audio index")
        }
        // Text (TF1 op and TF2 alike); TF1's FileWriter strips the metadata
        // after a tag's first value.
        Kind::Tensor(t)
            if plugin == kernels::plugins::TEXT
                || (golden.metadata.is_none() && t.data_type() == Some(DataType::DtString)) =>
        {
            kernels::text(&golden.tag, &t.dims(), vec![case.text_input(step)])
        }
        // Other TF2 summaries (tensor + plugin metadata).
        Kind::Tensor(_) if plugin == kernels::plugins::SCALARS => {
            kernels::scalar_v2(&golden.tag, input(inputs, step, "scal").as_f64()[0] as f32)
        }
        Kind::Tensor(t) if plugin == kernels::plugins::HISTOGRAMS => {
            let buckets = t.dims()[0];
            kernels::histogram_v2(&golden.tag, &input(inputs, step, "hist").as_f64(), buckets)
        }
        Kind::Tensor(t) if plugin == kernels::plugins::IMAGES => {
            let npy = input(inputs, step, "imag");
            let shape = ImageShape::new(&dims(npy)).unwrap();
            let pixels = match npy.descr.as_str() {
                "|u1" => npy.u8s(),
                "<f8" => image::convert_f64_to_u8(&npy.f64s()),
                _ => image::convert_f32_to_u8(&npy.f32s()),
            };
            let n = t.dims()[0] as usize - 2;
            let mine = kernels::image_v2(&golden.tag, &pixels, shape, n).unwrap();
            let ours = mine.tensor().unwrap().to_strings().unwrap();
            let theirs = t.to_strings().unwrap();
            assert_eq!(ours.len(), theirs.len(), "{ctx}");
            assert_eq!(ours[..2], theirs[..2], "{ctx}: width, height");
            let per = shape.image_len();
            for i in 0..n {
                let (_, _, _, golden_px) = decode_png(&theirs[2 + i]);
                let (_, _, _, our_px) = decode_png(&ours[2 + i]);
                assert_eq!(golden_px, our_px, "{ctx}: image {i}");
                assert_eq!(
                    golden_px,
                    pixels[i * per..(i + 1) * per],
                    "{ctx}: input image {i}"
                );
            }
            // Same value otherwise; carry TF's PNGs for whole-value comparison.
            let mut mine = mine;
            if let Some(Kind::Tensor(x)) = &mut mine.value {
                x.string_val = t.string_val.clone();
            }
            mine
        }
        Kind::Tensor(t) if plugin == kernels::plugins::AUDIO => {
            let npy = input(inputs, step, "audi");
            let shape = AudioShape::new(&dims(npy)).unwrap();
            let wav = &t.to_strings().unwrap()[0];
            let rate = u32::from_le_bytes(wav[24..28].try_into().unwrap());
            kernels::audio_v2(&golden.tag, &npy.f32s(), shape, rate, t.dims()[0] as usize).unwrap()
        }
        other => panic!("{ctx}: no kernel for {other:?} with plugin {plugin:?}"),
    }
}

#[test]
fn summary_kernels_reproduce_tf_summaries() {
    for case in cases() {
        let (_, events) = case.read();
        let inputs = case.inputs();
        let mut seen = SeenTags::default();
        let mut checked = 0;
        for step in steps(&case) {
            for golden in golden_values(&events, step) {
                let mut mine = Summary::from_values(vec![rebuild(&case, &inputs, step, golden)]);
                // TF1's FileWriter writes a tag's metadata once; the TF2
                // writer on every value.
                if case.manifest["writer"]
                    .as_str()
                    .unwrap_or("")
                    .contains("FileWriter")
                {
                    seen.strip(&mut mine);
                }
                let mine = &mine.value[0];
                let ctx = format!("{} step {step} tag {}", case.name, golden.tag);
                assert_eq!(mine, golden, "{ctx}");
                assert_eq!(mine.encode_to_vec(), golden.encode_to_vec(), "{ctx}: bytes");
                checked += 1;
            }
        }
        assert!(checked > 0, "{}: no summaries checked", case.name);
    }
}

fn read_events(path: &Path) -> Vec<Event> {
    RecordReader::open(path, Compression::None, ReadOptions::strict())
        .unwrap()
        .map(|r| Event::decode(r.unwrap().as_slice()).unwrap())
        .collect()
}

#[test]
fn event_writer_round_trips_golden_runs() {
    for case in cases() {
        let (_, golden) = case.read();
        let tmp = TempDir::new("golden-run");
        let logdir = tmp.path().join("run").join(&case.name);
        let writer = EventFileWriter::new(&logdir, ".test", 3, 120.0).unwrap();
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        for ev in &golden[1..] {
            writer.add_event(ev).unwrap();
        }
        writer.close().unwrap();

        let path = writer.path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let rest = name.strip_prefix("events.out.tfevents.").expect(&name);
        let (time, host_suffix) = rest.split_at(10);
        let time: u64 = time.parse().unwrap();
        assert!(time >= start && time <= start + 5, "{name}");
        assert_eq!(
            host_suffix,
            format!(".{}.test", ferroflow_records::events::hostname())
        );

        let ours = read_events(&path);
        assert_eq!(ours.len(), golden.len(), "{}", case.name);
        assert_eq!(ours[0].kind(), "file_version");
        assert_eq!(ours[0].wall_time, time as f64);
        assert_eq!(
            ours[0].encode_to_vec(),
            ferroflow_records::events::file_version_event(time).encode_to_vec()
        );
        // Field for field what TF wrote, apart from the first event's time.
        let mut tf_first = golden[0].clone();
        tf_first.wall_time = ours[0].wall_time;
        assert_eq!(ours[0], tf_first);
        assert_eq!(ours[1..], golden[1..]);
    }
}
