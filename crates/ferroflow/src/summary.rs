//! Summaries and TFRecords for Rust training loops: TensorFlow 1's summary ops
//! (`tf.summary.scalar`, `histogram`, `merge`, `merge_all`) built into the graph, and a
//! [`FileWriter`] that writes their values to TensorBoard event files.
//!
//! The summary ops are the records crate's kernels (`ScalarSummary`, `HistogramSummary`,
//! `MergeSummary`): running one gives a scalar string tensor holding a serialized `Summary`,
//! which [`FileWriter::add_summary`] writes at a step. Names and tags follow TensorFlow:
//! `scalar(g, "loss", x)` adds a `Const` `loss/tags` and a `ScalarSummary` named `loss` whose tag
//! is `loss` (prefixed by the enclosing name scope, made unique like an op name).
//!
//! The record and event-file types of `ferroflow_records` are re-exported for programs that read
//! or write TFRecord files themselves ([`RecordWriter`], [`RecordReader`]) or events
//! ([`EventFileWriter`], [`Event`], [`Summary`]).

use std::path::{Path, PathBuf};

use crate::builder::GraphBuilder;
use ferroflow_graph::{AttrValue, Graph, Output};
use ferroflow_records::events::{encode_summary_event, wall_time_now, SeenTags};
use ferroflow_tensor::{DType, Error, Result, Tensor};
use parking_lot::Mutex;
use prost::Message;

/// The protocol buffer messages of event files and TFRecords (`Event`, `Summary`,
/// `HistogramProto`, `Example`, ...), to read back what was written.
pub use ferroflow_records::proto;
pub use ferroflow_records::proto::{Event, Summary};
pub use ferroflow_records::{
    Compression, EventFileWriter, ReadOptions, Record, RecordReader, RecordWriter,
};

/// The producer version written into graphs (TensorFlow 2.21's `GRAPH_DEF_VERSION`).
pub const GRAPH_DEF_VERSION: i32 = 1994;

/// A tag as TensorBoard takes it: characters other than letters, digits, `_`, `-`, `/` and
/// `.` become `_`, leading slashes are dropped.
fn clean_tag(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    cleaned.trim_start_matches('/').to_string()
}

/// A TF1 summary op `op` over `values` named after a fresh name scope `name`, its tag that
/// scope's name; recorded for [`merge_all`].
fn summary_op(
    g: &mut GraphBuilder,
    op: &str,
    tag_input: &str,
    name: &str,
    values: Output,
) -> Result<Output> {
    let dtype = g.dtype(values);
    let out = g.with_name_scope(&clean_tag(name), |g| -> Result<Output> {
        let scope = g.scope().to_string();
        let tag = g.constant(Tensor::scalar(scope.clone().into_bytes()), tag_input)?;
        let id = g.add_exact(
            op,
            &scope,
            &[tag, values],
            vec![("T", AttrValue::Type(dtype))],
            &[],
        )?;
        Ok(Output::new(id, 0))
    })?;
    g.summaries.push(out);
    Ok(out)
}

/// `tf.summary.scalar(name, tensor)`: a `Summary` with one `simple_value` (running it with a
/// non-scalar is `InvalidArgument`).
pub fn scalar(g: &mut GraphBuilder, name: &str, tensor: Output) -> Result<Output> {
    summary_op(g, "ScalarSummary", "tags", name, tensor)
}

/// `tf.summary.histogram(name, values)`: a histogram with TensorFlow's exponential buckets
/// (NaN or infinite values are `InvalidArgument` when run).
pub fn histogram(g: &mut GraphBuilder, name: &str, values: Output) -> Result<Output> {
    summary_op(g, "HistogramSummary", "tag", name, values)
}

/// `tf.summary.merge(inputs)`: one `Summary` with the values of all of `inputs` (a tag twice is
/// `InvalidArgument` when run), named `Merge/MergeSummary`.
pub fn merge(g: &mut GraphBuilder, inputs: &[Output]) -> Result<Output> {
    if inputs.is_empty() {
        return Err(Error::value("merge needs at least one summary"));
    }
    g.with_name_scope("Merge", |g| {
        let id = g.add(
            "MergeSummary",
            "MergeSummary",
            inputs,
            vec![("N", AttrValue::Int(inputs.len() as i64))],
        )?;
        Ok(Output::new(id, 0))
    })
}

/// `tf.summary.merge_all()`: [`merge`] of every summary made with this builder, or `None`
/// when there is none.
pub fn merge_all(g: &mut GraphBuilder) -> Result<Option<Output>> {
    let all = g.summaries.clone();
    if all.is_empty() {
        return Ok(None);
    }
    merge(g, &all).map(Some)
}

/// Writes summaries and graphs to a TensorBoard event file (TensorFlow 1's
/// `tf.summary.FileWriter`): `events.out.tfevents.<time>.<host>` in the log directory, written
/// by a background thread. A tag's plugin metadata goes out with its first value only, as
/// TensorFlow writes it.
#[derive(Debug)]
pub struct FileWriter {
    events: EventFileWriter,
    seen: Mutex<SeenTags>,
}

impl FileWriter {
    /// A writer into `logdir` (created if missing) with TensorFlow's defaults: up to 10 queued
    /// events, flushed at least every 120 seconds.
    pub fn new(logdir: impl AsRef<Path>) -> Result<FileWriter> {
        FileWriter::with_options(logdir, 10, 120.0, "")
    }

    /// A writer with `max_queue`, `flush_secs` and a `filename_suffix` for the event file.
    pub fn with_options(
        logdir: impl AsRef<Path>,
        max_queue: usize,
        flush_secs: f64,
        filename_suffix: &str,
    ) -> Result<FileWriter> {
        Ok(FileWriter {
            events: EventFileWriter::new(logdir, filename_suffix, max_queue, flush_secs)?,
            seen: Mutex::new(SeenTags::default()),
        })
    }

    /// The log directory.
    pub fn logdir(&self) -> &Path {
        self.events.logdir()
    }

    /// The current event file.
    pub fn path(&self) -> PathBuf {
        self.events.path()
    }

    /// Queues a serialized `Summary` (what a summary op outputs) at `step`.
    /// Bytes that are not a `Summary` are `InvalidArgument`.
    pub fn add_summary(&self, summary: &[u8], step: i64) -> Result<()> {
        let stripped = self.seen.lock().strip_serialized(summary).map_err(|e| {
            Error::invalid_argument(format!("add_summary: not a serialized Summary: {e}"))
        })?;
        self.events
            .add_serialized(encode_summary_event(&stripped, wall_time_now(), step))
    }

    /// Queues the value of a summary op (a scalar string tensor) at `step`.
    pub fn add_summary_tensor(&self, summary: &Tensor, step: i64) -> Result<()> {
        if summary.dtype() != DType::String {
            return Err(Error::invalid_argument(format!(
                "add_summary_tensor takes the string output of a summary op, got a {} tensor",
                summary.dtype()
            )));
        }
        let bytes = summary
            .as_slice::<Vec<u8>>()?
            .first()
            .ok_or_else(|| Error::invalid_argument("add_summary_tensor: an empty tensor"))?;
        self.add_summary(bytes, step)
    }

    /// Queues `graph` as a `GraphDef` event (`add_graph`), with output shapes, for TensorBoard's
    /// graph view.
    pub fn add_graph(&self, graph: &Graph) -> Result<()> {
        let def = ferroflow_records::graph_def::graph_def(graph, 0, true, GRAPH_DEF_VERSION);
        let event = Event {
            wall_time: wall_time_now(),
            step: 0,
            what: Some(ferroflow_records::proto::event::What::GraphDef(
                def.encode_to_vec(),
            )),
            source_metadata: None,
        };
        self.events.add_event(&event)
    }

    /// Queues any event.
    pub fn add_event(&self, event: &Event) -> Result<()> {
        self.events.add_event(event)
    }

    /// Waits until every queued event is written and synced.
    pub fn flush(&self) -> Result<()> {
        self.events.flush()
    }

    /// Writes what is queued and closes the file (a no-op when closed).
    pub fn close(&self) -> Result<()> {
        self.events.close()
    }

    /// Starts a new event file after [`close`](Self::close).
    pub fn reopen(&self) -> Result<()> {
        self.events.reopen()
    }
}
