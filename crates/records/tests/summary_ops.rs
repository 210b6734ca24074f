//! The summary ops run in a session: outputs decode to the values the
//! summary kernels compute, with TensorFlow's checks and error messages.

use ferroflow_graph::{AttrValue, Graph, NodeSpec, Output};
use ferroflow_records::proto::summary::value::Value as V;
use ferroflow_records::proto::{Message, Summary, SummaryMetadata};
use ferroflow_records::summary::histogram;
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
        ferroflow_records::register();
        G {
            g: Arc::new(RwLock::new(Graph::new())),
            n: 0,
        }
    }

    fn constant(&mut self, t: Tensor) -> Output {
        self.n += 1;
        let id = self
            .g
            .write()
            .add_node(
                NodeSpec::new("Const", &format!("c{}", self.n)).attr("value", AttrValue::Tensor(t)),
            )
            .unwrap();
        Output::new(id, 0)
    }

    fn op(&mut self, spec: NodeSpec) -> Result<Output> {
        self.g.write().add_node(spec).map(|id| Output::new(id, 0))
    }

    fn run(&self, out: Output) -> Result<Summary> {
        let sess = Session::new(self.g.clone());
        let got = sess.run(vec![], &[out], &[])?;
        assert_eq!(got[0].dtype(), DType::String);
        assert_eq!(got[0].rank(), 0);
        let bytes = &got[0].as_slice::<Vec<u8>>()?[0];
        Ok(Summary::decode(bytes.as_slice()).expect("a serialized Summary"))
    }
}

fn text(s: &str) -> Tensor {
    Tensor::scalar(s.as_bytes().to_vec())
}

#[test]
fn scalar_summary_and_merge() {
    let mut g = G::new();
    let tags = g.constant(Tensor::vector(vec![b"a".to_vec(), b"b".to_vec()]));
    let values = g.constant(Tensor::vector(vec![1.5f64, -2.0]));
    let s = g
        .op(NodeSpec::new("ScalarSummary", "s").inputs([tags, values]))
        .unwrap();
    let tag = g.constant(text("h"));
    let data = g.constant(Tensor::vector(vec![1i32, 2, 2, 300]));
    let h = g
        .op(NodeSpec::new("HistogramSummary", "h").inputs([tag, data]))
        .unwrap();
    let merged = g
        .op(NodeSpec::new("MergeSummary", "m").inputs([s, h]))
        .unwrap();
    let out = g.run(merged).unwrap();
    let tags: Vec<&str> = out.value.iter().map(|v| v.tag.as_str()).collect();
    assert_eq!(tags, ["a", "b", "h"]);
    assert_eq!(out.value[0].value, Some(V::SimpleValue(1.5)));
    assert_eq!(out.value[1].value, Some(V::SimpleValue(-2.0)));
    assert_eq!(
        out.value[2].value,
        Some(V::Histo(histogram(&[1.0, 2.0, 2.0, 300.0])))
    );

    let dup = g
        .op(NodeSpec::new("MergeSummary", "dup").inputs([s, s]))
        .unwrap();
    let err = g.run(dup).unwrap_err();
    assert_eq!(err.code(), Some(Code::InvalidArgument));
    assert!(err.message().contains("Duplicate tag a found"), "{err}");
}

#[test]
fn shape_and_type_errors() {
    let mut g = G::new();
    let tags = g.constant(Tensor::vector(vec![b"a".to_vec(), b"b".to_vec()]));
    let values = g.constant(Tensor::vector(vec![1.0f32, 2.0, 3.0]));
    let s = g
        .op(NodeSpec::new("ScalarSummary", "s").inputs([tags, values]))
        .unwrap();
    let err = g.run(s).unwrap_err();
    assert_eq!(err.code(), Some(Code::InvalidArgument));
    assert!(
        err.message()
            .contains("tags and values are not the same shape: [2] != [3]"),
        "{err}"
    );

    // A string tensor is no scalar value: rejected when the node is added.
    let words = g.constant(Tensor::vector(vec![b"x".to_vec()]));
    let bad = g.op(NodeSpec::new("ScalarSummary", "bad").inputs([words, words]));
    assert!(bad.is_err());

    let tag = g.constant(text("h"));
    let nan = g.constant(Tensor::vector(vec![1.0f32, f32::NAN]));
    let h = g
        .op(NodeSpec::new("HistogramSummary", "weights_hist").inputs([tag, nan]))
        .unwrap();
    let err = g.run(h).unwrap_err();
    assert!(
        err.message()
            .contains("Nan in summary histogram for: weights_hist"),
        "{err}"
    );

    let rank3 = g.constant(Tensor::from_vec([1, 2, 3], vec![0u8; 6]).unwrap());
    let bad = g.op(NodeSpec::new("ImageSummary", "img").inputs([tag, rank3]));
    assert!(
        bad.is_err(),
        "a rank-3 image is rejected when the node is added"
    );
}

#[test]
fn image_audio_and_tensor_summaries() {
    let mut g = G::new();
    let tag = g.constant(text("img"));
    let pixels = g.constant(Tensor::from_vec([3, 2, 2, 1], (0u8..12).collect()).unwrap());
    let img = g
        .op(NodeSpec::new("ImageSummary", "img")
            .inputs([tag, pixels])
            .attr("max_images", AttrValue::Int(2)))
        .unwrap();
    let out = g.run(img).unwrap();
    let tags: Vec<&str> = out.value.iter().map(|v| v.tag.as_str()).collect();
    assert_eq!(tags, ["img/image/0", "img/image/1"]);
    let Some(V::Image(image)) = &out.value[1].value else {
        panic!("not an image")
    };
    assert_eq!((image.height, image.width, image.colorspace), (2, 2, 1));
    assert_eq!(&image.encoded_image_string[1..4], b"PNG");

    let atag = g.constant(text("snd"));
    let clip = g.constant(Tensor::from_vec([1, 4], vec![0.0f32, 0.5, -0.5, 1.0]).unwrap());
    let rate = g.constant(Tensor::scalar(8000.0f32));
    let snd = g
        .op(NodeSpec::new("AudioSummaryV2", "snd")
            .inputs([atag, clip, rate])
            .attr("max_outputs", AttrValue::Int(1)))
        .unwrap();
    let out = g.run(snd).unwrap();
    assert_eq!(out.value[0].tag, "snd/audio");
    let Some(V::Audio(audio)) = &out.value[0].value else {
        panic!("not audio")
    };
    assert_eq!((audio.length_frames, audio.num_channels), (4, 1));
    assert_eq!(audio.encoded_audio_string.len(), 44 + 8);

    let zero = g.constant(Tensor::scalar(0.0f32));
    let bad = g
        .op(NodeSpec::new("AudioSummaryV2", "bad").inputs([atag, clip, zero]))
        .unwrap();
    assert!(g
        .run(bad)
        .unwrap_err()
        .message()
        .contains("sample_rate must be > 0"));

    let ttag = g.constant(text("t"));
    let tensor = g.constant(Tensor::from_vec([2], vec![7i64, -1]).unwrap());
    let meta = SummaryMetadata::for_plugin("custom", b"xyz".to_vec());
    let meta_t = g.constant(Tensor::scalar(meta.encode_to_vec()));
    let ts = g
        .op(NodeSpec::new("TensorSummaryV2", "ts").inputs([ttag, tensor, meta_t]))
        .unwrap();
    let out = g.run(ts).unwrap();
    let v = &out.value[0];
    assert_eq!(v.metadata.as_ref(), Some(&meta));
    let t = v.tensor().unwrap();
    assert_eq!(t.dims(), [2]);
    assert_eq!(t.to_f64_vec().unwrap(), [7.0, -1.0]);
}
