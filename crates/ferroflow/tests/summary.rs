//! Summaries from a Rust training loop: the TF1 summary ops named as TensorFlow names them, a
//! `FileWriter` whose event file reads back with the records reader (the file-version event,
//! the graph, each step's scalars and histograms), and TFRecords written and read through the
//! facade's re-exports.

mod common;

use common::temp_dir;
use ferroflow::summary::proto::event::What;
use ferroflow::summary::proto::summary::value::Value as V;
use ferroflow::summary::{
    self, Compression, Event, FileWriter, ReadOptions, RecordReader, RecordWriter, Summary,
};
use ferroflow::{DType, GraphBuilder, PartialShape, Session, Tensor};
use ferroflow_records::graph_def::GraphDef;
use prost::Message;

#[test]
fn file_writer_logs_what_the_summary_ops_compute() {
    let mut g = GraphBuilder::new();
    let x = g
        .placeholder(DType::Float32, PartialShape::from_dims(vec![Some(4)]), "x")
        .unwrap();
    let loss = g.reduce_sum(x, &[0], false).unwrap();
    let (s_loss, s_hist) = g.with_name_scope("train", |g| {
        (
            summary::scalar(g, "loss", loss).unwrap(),
            summary::histogram(g, "x values", x).unwrap(),
        )
    });
    let merged = summary::merge_all(&mut g).unwrap().unwrap();
    {
        let graph = g.graph();
        let graph = graph.read();
        // TensorFlow's names: the op takes its scope's name, the tag is that name.
        assert_eq!(graph.node(s_loss.node).name, "train/loss");
        assert_eq!(graph.node(s_loss.node).op, "ScalarSummary");
        assert!(graph.node_by_name("train/loss/tags").is_some());
        assert_eq!(graph.node(s_hist.node).name, "train/x_values");
        assert_eq!(graph.node(merged.node).name, "Merge/MergeSummary");
    }
    let dir = temp_dir("summary");
    let writer = FileWriter::new(&dir).unwrap();
    writer.add_graph(&g.graph().read()).unwrap();
    let sess = Session::new(g.graph());
    let batches: Vec<Vec<f32>> = (0..3)
        .map(|s| (0..4).map(|i| (s * 4 + i) as f32 * 0.5).collect())
        .collect();
    for (step, b) in batches.iter().enumerate() {
        let out = sess
            .run(vec![(x, Tensor::vector(b.clone()))], &[merged], &[])
            .unwrap();
        writer
            .add_summary_tensor(&out[0], step as i64 * 10)
            .unwrap();
    }
    writer.close().unwrap();

    let path = writer.path();
    assert!(path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("events.out.tfevents."));
    let mut reader = RecordReader::open(&path, Compression::None, ReadOptions::strict()).unwrap();
    let events: Vec<Event> = reader
        .read_all()
        .unwrap()
        .iter()
        .map(|r| Event::decode(r.as_slice()).unwrap())
        .collect();
    assert_eq!(events.len(), 2 + batches.len());
    assert!(matches!(&events[0].what, Some(What::FileVersion(v)) if v == "brain.Event:2"));
    let Some(What::GraphDef(bytes)) = &events[1].what else {
        panic!("second event is not the graph: {:?}", events[1]);
    };
    let graph = GraphDef::decode(bytes.as_slice()).unwrap();
    assert!(graph
        .node
        .iter()
        .any(|n| n.name == "train/loss" && n.op == "ScalarSummary"));
    for (event, b) in events[2..].iter().zip(&batches) {
        let Some(What::Summary(Summary { value })) = &event.what else {
            panic!("not a summary: {event:?}");
        };
        assert_eq!(value.len(), 2);
        assert_eq!(value[0].tag, "train/loss");
        let sum: f32 = b.iter().sum();
        assert_eq!(value[0].value, Some(V::SimpleValue(sum)));
        assert_eq!(value[1].tag, "train/x_values");
        let Some(V::Histo(h)) = &value[1].value else {
            panic!("not a histogram: {:?}", value[1]);
        };
        assert_eq!(h.num, 4.0);
        assert_eq!(h.min, b[0] as f64);
        assert_eq!(h.max, b[3] as f64);
        assert_eq!(h.sum, b.iter().map(|&v| v as f64).sum::<f64>());
        assert_eq!(h.bucket.iter().sum::<f64>(), 4.0);
    }
    let steps: Vec<i64> = events[2..].iter().map(|e| e.step).collect();
    assert_eq!(steps, vec![0, 10, 20]);
    assert!(
        writer.add_summary(&[], 1).is_err(),
        "a closed writer refuses events"
    );
    assert!(writer
        .add_summary_tensor(&Tensor::scalar(1.0f32), 1)
        .is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merge_all_without_summaries_is_none_and_bad_bytes_are_refused() {
    let mut g = GraphBuilder::new();
    assert!(summary::merge_all(&mut g).unwrap().is_none());
    assert!(summary::merge(&mut g, &[]).is_err());
    let dir = temp_dir("summary_bad");
    let writer = FileWriter::new(&dir).unwrap();
    let err = writer.add_summary(&[0xff, 0xff, 0xff], 0).unwrap_err();
    assert!(
        err.to_string().contains("not a serialized Summary"),
        "{err}"
    );
    writer.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tfrecords_round_trip_through_the_reexports() {
    let dir = temp_dir("records");
    let path = dir.join("data.tfrecord.gz");
    let payloads: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; i as usize * 3]).collect();
    let mut w = RecordWriter::create(&path, Compression::Gzip).unwrap();
    for p in &payloads {
        w.write(p).unwrap();
    }
    w.close().unwrap();
    let mut r = RecordReader::open(&path, Compression::Gzip, ReadOptions::strict()).unwrap();
    assert_eq!(r.read_all().unwrap(), payloads);
    std::fs::remove_dir_all(&dir).unwrap();
}
