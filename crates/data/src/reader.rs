//! The TF1 readers as resources: `TFRecordReaderV2`, `TextLineReaderV2`,
//! `FixedLengthRecordReaderV2`, `WholeFileReaderV2` and `IdentityReaderV2`,
//! and the ops on their handles (`ReaderReadV2`, `ReaderReadUpToV2`,
//! `ReaderNumRecordsProducedV2`, `ReaderNumWorkUnitsCompletedV2`,
//! `ReaderResetV2`, `ReaderSerializeStateV2`, `ReaderRestoreStateV2`).
//!
//! `LMDBReader` exists only in TensorFlow's older, reference-handle form, so
//! its graph is TensorFlow's: the reader outputs a `string` reference (shape
//! `[2]`), the queue's resource handle goes through `FakeQueue`, and the ops
//! on it are the versions without `V2` (`ReaderRead`, `ReaderReadUpTo`, ...),
//! taking references. At run time those references carry the same reader
//! and queue resources as the `V2` ops' handles, and the kernels are shared.
//! The LMDB reader yields each database file's entries in key order (the
//! entry's key and value, read by `ferroflow_records::lmdb`), then moves on.
//!
//! A reader takes its work (file names) from a queue, one at a time, and
//! yields `(key, value)` records with TensorFlow's keys: `file:offset` for
//! TFRecords, `file:line` (1-based) for text lines, `file:index` for fixed
//! length records, the file name for whole files and the work itself for
//! the identity reader. When the queue is closed and empty, a read fails
//! with the queue's `OutOfRangeError`. A read holds the reader's lock, so
//! readers shared by threads hand out each record once.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_records::lmdb::LmdbReader;
use ferroflow_records::{Compression, ReadOptions, RecordReader};
use ferroflow_runtime::{factory, Kernel, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};
use parking_lot::Mutex;

use crate::file_ops::io_error;
use crate::queue::{DequeueMode, Queue};

/// Which records a reader makes of a work item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReaderKind {
    TfRecord {
        compression: Compression,
    },
    TextLine {
        skip_header_lines: u64,
    },
    FixedLength {
        header: usize,
        record: usize,
        footer: usize,
        hop: usize,
        /// The whole file's compression (`encoding`: "", "ZLIB" or "GZIP").
        compression: Compression,
    },
    WholeFile,
    Identity,
    Lmdb,
}

impl ReaderKind {
    fn type_name(&self) -> &'static str {
        match self {
            ReaderKind::TfRecord { .. } => "TFRecordReader",
            ReaderKind::TextLine { .. } => "TextLineReader",
            ReaderKind::FixedLength { .. } => "FixedLengthRecordReader",
            ReaderKind::WholeFile => "WholeFileReader",
            ReaderKind::Identity => "IdentityReader",
            ReaderKind::Lmdb => "LMDBReader",
        }
    }
}

enum Source {
    TfRecord(RecordReader),
    Lines {
        reader: Box<dyn BufRead + Send>,
        line: u64,
    },
    Fixed {
        data: Vec<u8>,
        pos: usize,
        end: usize,
        index: u64,
    },
    /// One record per work item (whole file, identity), not yet produced.
    Once(Option<Vec<u8>>),
    Lmdb(Box<LmdbReader>),
}

#[derive(Default)]
struct State {
    work: Option<String>,
    source: Option<Source>,
    produced: i64,
    started: i64,
    completed: i64,
}

/// A reader resource (see the module docs).
pub struct Reader {
    kind: ReaderKind,
    name: String,
    state: Mutex<State>,
}

type Record = (Vec<u8>, Vec<u8>);

impl Reader {
    /// A reader with no work yet.
    pub fn new(kind: ReaderKind, name: impl Into<String>) -> Reader {
        Reader {
            kind,
            name: name.into(),
            state: Mutex::new(State::default()),
        }
    }

    fn open(&self, work: &str) -> Result<Source> {
        Ok(match &self.kind {
            ReaderKind::TfRecord { compression } => Source::TfRecord(RecordReader::open(
                work,
                *compression,
                ReadOptions::default(),
            )?),
            ReaderKind::TextLine { skip_header_lines } => {
                let f = File::open(work).map_err(|e| io_error(&e, work))?;
                let mut reader: Box<dyn BufRead + Send> = Box::new(BufReader::new(f));
                let mut line = 0;
                let mut buf = Vec::new();
                for _ in 0..*skip_header_lines {
                    buf.clear();
                    if reader
                        .read_until(b'\n', &mut buf)
                        .map_err(|e| io_error(&e, work))?
                        == 0
                    {
                        break;
                    }
                    line += 1;
                }
                Source::Lines { reader, line }
            }
            ReaderKind::FixedLength {
                header,
                footer,
                compression,
                ..
            } => {
                let raw = std::fs::read(work).map_err(|e| io_error(&e, work))?;
                let data = match compression {
                    Compression::None => raw,
                    Compression::Gzip => {
                        decompress(flate2::read::MultiGzDecoder::new(&raw[..]), work)?
                    }
                    Compression::Zlib => {
                        decompress(flate2::read::ZlibDecoder::new(&raw[..]), work)?
                    }
                };
                let end = data.len().saturating_sub(*footer);
                if data.len() < header + footer {
                    bail!(
                        data_loss,
                        "{work}: the file has {} bytes, fewer than header_bytes ({header}) plus \
                         footer_bytes ({footer})",
                        data.len()
                    );
                }
                Source::Fixed {
                    data,
                    pos: *header,
                    end,
                    index: 0,
                }
            }
            ReaderKind::WholeFile => {
                Source::Once(Some(std::fs::read(work).map_err(|e| io_error(&e, work))?))
            }
            ReaderKind::Identity => Source::Once(Some(work.as_bytes().to_vec())),
            ReaderKind::Lmdb => Source::Lmdb(Box::new(LmdbReader::open(work)?)),
        })
    }

    /// The next record of the current work item, `None` at its end.
    fn next_record(&self, work: &str, source: &mut Source) -> Result<Option<Record>> {
        match source {
            Source::TfRecord(r) => Ok(r
                .read_record()?
                .map(|rec| (format!("{work}:{}", rec.offset).into_bytes(), rec.data))),
            Source::Lines { reader, line } => {
                let mut buf = Vec::new();
                let n = reader
                    .read_until(b'\n', &mut buf)
                    .map_err(|e| io_error(&e, work))?;
                if n == 0 {
                    return Ok(None);
                }
                *line += 1;
                // TensorFlow's line reading drops the newline and every '\r'.
                buf.retain(|&b| b != b'\n' && b != b'\r');
                Ok(Some((format!("{work}:{line}").into_bytes(), buf)))
            }
            Source::Fixed {
                data,
                pos,
                end,
                index,
            } => {
                let ReaderKind::FixedLength { record, hop, .. } = self.kind else {
                    unreachable!("fixed-length source of another reader")
                };
                if *pos + record > *end {
                    return Ok(None);
                }
                let value = data[*pos..*pos + record].to_vec();
                let key = format!("{work}:{index}").into_bytes();
                *index += 1;
                *pos += if hop > 0 { hop } else { record };
                Ok(Some((key, value)))
            }
            Source::Lmdb(db) => db.next_entry(),
            Source::Once(v) => Ok(v.take().map(|value| {
                let key = match self.kind {
                    ReaderKind::Identity => value.clone(),
                    _ => work.as_bytes().to_vec(),
                };
                (key, value)
            })),
        }
    }

    /// Takes the next work item from `queue` (waiting for one).
    fn next_work(&self, st: &mut State, queue: &Queue) -> Result<()> {
        let item = queue.dequeue(1, DequeueMode::One)?;
        let work = match item.first().map(|t| (t.rank(), t.as_slice::<Vec<u8>>())) {
            Some((0, Ok([w]))) => String::from_utf8_lossy(w).into_owned(),
            _ => {
                bail!(
                    invalid_argument,
                    "{} '{}': expected the work queue to hold scalar strings (file names)",
                    self.kind.type_name(),
                    self.name
                )
            }
        };
        st.started += 1;
        st.source = Some(self.open(&work)?);
        st.work = Some(work);
        Ok(())
    }

    fn finish_work(st: &mut State) {
        st.work = None;
        st.source = None;
        st.completed += 1;
    }

    /// `ReaderReadV2`: the next record, taking new work from `queue` as
    /// each item is used up.
    pub fn read(&self, queue: &Queue) -> Result<Record> {
        let mut st = self.state.lock();
        loop {
            if st.work.is_none() {
                self.next_work(&mut st, queue)?;
            }
            let st = &mut *st;
            let work = st.work.as_deref().expect("work set above");
            let source = st.source.as_mut().expect("source opened with its work");
            match self.next_record(work, source)? {
                Some(rec) => {
                    st.produced += 1;
                    return Ok(rec);
                }
                None => Self::finish_work(st),
            }
        }
    }

    /// `ReaderReadUpToV2`: up to `n` records from one work item (the next
    /// one if the current one is used up).
    pub fn read_up_to(&self, queue: &Queue, n: usize) -> Result<Vec<Record>> {
        let mut st = self.state.lock();
        let mut out = Vec::new();
        while out.len() < n {
            if st.work.is_none() {
                if !out.is_empty() {
                    break;
                }
                self.next_work(&mut st, queue)?;
            }
            let st = &mut *st;
            let work = st.work.as_deref().expect("work set above");
            let source = st.source.as_mut().expect("source opened with its work");
            match self.next_record(work, source)? {
                Some(rec) => {
                    st.produced += 1;
                    out.push(rec);
                }
                None => Self::finish_work(st),
            }
        }
        Ok(out)
    }

    /// Records produced so far.
    pub fn num_records_produced(&self) -> i64 {
        self.state.lock().produced
    }

    /// Work items finished so far.
    pub fn num_work_units_completed(&self) -> i64 {
        self.state.lock().completed
    }

    /// Back to the initial state (no work, counts zero).
    pub fn reset(&self) {
        *self.state.lock() = State::default();
    }

    /// The state as TensorFlow's `ReaderBaseState` message; only the
    /// identity reader (whose work is its position) supports it.
    pub fn serialize_state(&self) -> Result<Vec<u8>> {
        if self.kind != ReaderKind::Identity {
            return Err(self.unimplemented("SerializeState"));
        }
        let st = self.state.lock();
        let mut out = Vec::new();
        // ReaderBaseState: 1 work_started, 2 work_finished,
        // 3 num_records_produced (int64), 4 current_work (bytes).
        for (field, v) in [(1u8, st.started), (2, st.completed), (3, st.produced)] {
            if v != 0 {
                out.push(field << 3);
                put_varint(&mut out, v as u64);
            }
        }
        if let Some(w) = &st.work {
            out.push((4 << 3) | 2);
            put_varint(&mut out, w.len() as u64);
            out.extend_from_slice(w.as_bytes());
        }
        Ok(out)
    }

    /// Restores a state from [`serialize_state`](Self::serialize_state).
    pub fn restore_state(&self, bytes: &[u8]) -> Result<()> {
        if self.kind != ReaderKind::Identity {
            return Err(self.unimplemented("RestoreState"));
        }
        let bad = || {
            Error::invalid_argument(format!(
                "Could not parse state for {} '{}'",
                self.kind.type_name(),
                self.name
            ))
        };
        let mut st = State::default();
        let mut i = 0;
        while i < bytes.len() {
            let tag = bytes[i];
            i += 1;
            let v = get_varint(bytes, &mut i).ok_or_else(bad)?;
            match tag {
                0x08 => st.started = v as i64,
                0x10 => st.completed = v as i64,
                0x18 => st.produced = v as i64,
                0x22 => {
                    let end = i
                        .checked_add(v as usize)
                        .filter(|&e| e <= bytes.len())
                        .ok_or_else(bad)?;
                    st.work = Some(String::from_utf8_lossy(&bytes[i..end]).into_owned());
                    i = end;
                }
                _ => return Err(bad()),
            }
        }
        if let Some(w) = &st.work {
            // The identity reader has produced its work's one record once
            // the work is current... unless none was produced from it.
            st.source = Some(Source::Once(if st.produced < st.started {
                Some(w.as_bytes().to_vec())
            } else {
                None
            }));
        }
        if st.started < st.completed || st.produced < st.completed {
            return Err(bad());
        }
        *self.state.lock() = st;
        Ok(())
    }

    fn unimplemented(&self, what: &str) -> Error {
        Error::unimplemented(format!(
            "{} '{}' does not support {what}",
            self.kind.type_name(),
            self.name
        ))
    }
}

/// All of a compressed file; corrupt data is `DataLossError` naming it.
fn decompress(mut r: impl Read, work: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    r.read_to_end(&mut out)
        .map_err(|e| Error::data_loss(format!("{work}: cannot decompress: {e}")))?;
    Ok(out)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*i)?;
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn infer_reader(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(
        DType::Resource,
        PartialShape::scalar(),
    )])
}

fn infer_read(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![
        OutputInfo::new(DType::String, PartialShape::scalar()),
        OutputInfo::new(DType::String, PartialShape::scalar()),
    ])
}

fn infer_read_up_to(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let v = PartialShape::from_dims(vec![None]);
    Ok(vec![
        OutputInfo::new(DType::String, v.clone()),
        OutputInfo::new(DType::String, v),
    ])
}

fn infer_int64(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::Int64, PartialShape::scalar())])
}

fn infer_string(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

fn infer_none(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

/// A TF1 reference handle (`LMDBReader`, `FakeQueue`): a `string` reference
/// of shape `[2]` in the graph, a resource at run time.
fn infer_ref_handle(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::reference(
        DType::String,
        PartialShape::from_dims(vec![Some(2)]),
    )])
}

/// The kernel of a reader op: the session's reader of this node (or shared
/// by `shared_name`).
struct CreateReader {
    kind: ReaderKind,
    container: String,
    shared_name: String,
}

impl Kernel for CreateReader {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let key = if self.shared_name.is_empty() {
            format!("\u{0}reader:{}", ctx.node)
        } else {
            self.shared_name.clone()
        };
        let r = ctx
            .session
            .get_or_create_shared(&self.container, &key, || {
                let name = if self.shared_name.is_empty() {
                    format!("_{}_{}", crate::queue::next_resource_id(), ctx.node)
                } else {
                    self.shared_name.clone()
                };
                Ok(Reader::new(self.kind.clone(), name))
            })?;
        ctx.output_resource(r);
        Ok(())
    }
}

fn nonneg(init: &ferroflow_runtime::KernelInit<'_>, name: &str, default: i64) -> Result<usize> {
    let v = init.node.attrs.int_or(name, default)?;
    usize::try_from(v).map_err(|_| {
        Error::invalid_argument(format!(
            "{} ({}): attribute {name} must be non-negative, got {v}",
            init.node.name, init.node.op
        ))
    })
}

fn reader_factory(
    make: fn(&ferroflow_runtime::KernelInit<'_>) -> Result<ReaderKind>,
) -> KernelFactory {
    factory(move |init| {
        let a = &init.node.attrs;
        Ok(Box::new(CreateReader {
            kind: make(init)?,
            container: a.str_or("container", "")?,
            shared_name: a.str_or("shared_name", "")?,
        }))
    })
}

/// A reader kernel that may wait on its work queue.
struct Blocking<F>(F);

impl<F: Fn(&mut OpContext<'_>) -> Result<()> + Send + Sync> Kernel for Blocking<F> {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        (self.0)(ctx)
    }
    fn may_block(&self) -> bool {
        true
    }
}

fn read_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let r = ctx.input_resource::<Reader>(0)?;
    let q = ctx.input_resource::<Queue>(1)?;
    let (k, v) = r.read(&q)?;
    ctx.output(Tensor::scalar(k));
    ctx.output(Tensor::scalar(v));
    Ok(())
}

fn read_up_to_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let r = ctx.input_resource::<Reader>(0)?;
    let q = ctx.input_resource::<Queue>(1)?;
    let n = ctx.input(2)?.scalar_i64()?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::invalid_argument(format!("num_records must be positive, got {n}")))?;
    let (keys, values): (Vec<_>, Vec<_>) = r.read_up_to(&q, n)?.into_iter().unzip();
    ctx.output(Tensor::vector(keys));
    ctx.output(Tensor::vector(values));
    Ok(())
}

fn with_reader(f: fn(&Reader, &mut OpContext<'_>) -> Result<()>) -> KernelFactory {
    factory(move |_| {
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let r = ctx.input_resource::<Reader>(0)?;
            f(&r, ctx)
        }))
    })
}

/// The graph-level definitions of the reader ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("TFRecordReaderV2", &[], infer_reader).stateful(),
        OpDef::new("TextLineReaderV2", &[], infer_reader).stateful(),
        OpDef::new("FixedLengthRecordReaderV2", &[], infer_reader).stateful(),
        OpDef::new("WholeFileReaderV2", &[], infer_reader).stateful(),
        OpDef::new("IdentityReaderV2", &[], infer_reader).stateful(),
        OpDef::new(
            "ReaderReadV2",
            &["reader_handle", "queue_handle"],
            infer_read,
        )
        .stateful(),
        OpDef::new(
            "ReaderReadUpToV2",
            &["reader_handle", "queue_handle", "num_records"],
            infer_read_up_to,
        )
        .stateful(),
        OpDef::new(
            "ReaderNumRecordsProducedV2",
            &["reader_handle"],
            infer_int64,
        )
        .stateful(),
        OpDef::new(
            "ReaderNumWorkUnitsCompletedV2",
            &["reader_handle"],
            infer_int64,
        )
        .stateful(),
        OpDef::new("ReaderResetV2", &["reader_handle"], infer_none).stateful(),
        OpDef::new("ReaderSerializeStateV2", &["reader_handle"], infer_string).stateful(),
        OpDef::new(
            "ReaderRestoreStateV2",
            &["reader_handle", "state"],
            infer_none,
        )
        .stateful(),
        // TensorFlow's reference-handle forms (LMDBReader has no other).
        OpDef::new("LMDBReader", &[], infer_ref_handle).stateful(),
        OpDef::new("FakeQueue", &["resource"], infer_ref_handle).stateful(),
        OpDef::new("ReaderRead", &["reader_handle", "queue_handle"], infer_read).refs(&[0, 1]),
        OpDef::new(
            "ReaderReadUpTo",
            &["reader_handle", "queue_handle", "num_records"],
            infer_read_up_to,
        )
        .refs(&[0, 1]),
        OpDef::new("ReaderNumRecordsProduced", &["reader_handle"], infer_int64).refs(&[0]),
        OpDef::new(
            "ReaderNumWorkUnitsCompleted",
            &["reader_handle"],
            infer_int64,
        )
        .refs(&[0]),
        OpDef::new("ReaderReset", &["reader_handle"], infer_none).refs(&[0]),
        OpDef::new("ReaderSerializeState", &["reader_handle"], infer_string).refs(&[0]),
        OpDef::new(
            "ReaderRestoreState",
            &["reader_handle", "state"],
            infer_none,
        )
        .refs(&[0]),
    ]
}

/// The runtime kernels of the reader ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    let mut v = v2_kernels();
    // The reference-handle ops run the V2 kernels: their references carry
    // the same resources.
    let v1: Vec<(&'static str, KernelFactory)> = v2_kernels()
        .into_iter()
        .filter_map(|(name, f)| {
            let old = match name {
                "ReaderReadV2" => "ReaderRead",
                "ReaderReadUpToV2" => "ReaderReadUpTo",
                "ReaderNumRecordsProducedV2" => "ReaderNumRecordsProduced",
                "ReaderNumWorkUnitsCompletedV2" => "ReaderNumWorkUnitsCompleted",
                "ReaderResetV2" => "ReaderReset",
                "ReaderSerializeStateV2" => "ReaderSerializeState",
                "ReaderRestoreStateV2" => "ReaderRestoreState",
                _ => return None,
            };
            Some((old, f))
        })
        .collect();
    v.extend(v1);
    v.push(("LMDBReader", reader_factory(|_| Ok(ReaderKind::Lmdb))));
    v.push((
        "FakeQueue",
        factory(|_| {
            Ok(Box::new(|ctx: &mut OpContext<'_>| {
                let q = ctx.input_resource::<Queue>(0)?;
                ctx.output_resource(q);
                Ok(())
            }))
        }),
    ));
    v
}

fn v2_kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "TFRecordReaderV2",
            reader_factory(|init| {
                let c = init.node.attrs.str_or("compression_type", "")?;
                Ok(ReaderKind::TfRecord {
                    compression: Compression::from_name(&c)?,
                })
            }),
        ),
        (
            "TextLineReaderV2",
            reader_factory(|init| {
                Ok(ReaderKind::TextLine {
                    skip_header_lines: nonneg(init, "skip_header_lines", 0)? as u64,
                })
            }),
        ),
        (
            "FixedLengthRecordReaderV2",
            reader_factory(|init| {
                let encoding = init.node.attrs.str_or("encoding", "")?;
                let compression = Compression::from_name(&encoding)?;
                let record = nonneg(init, "record_bytes", 0)?;
                ensure!(
                    record != 0,
                    invalid_argument,
                    "{}: record_bytes must be positive",
                    init.node.name
                );
                Ok(ReaderKind::FixedLength {
                    header: nonneg(init, "header_bytes", 0)?,
                    record,
                    footer: nonneg(init, "footer_bytes", 0)?,
                    hop: nonneg(init, "hop_bytes", 0)?,
                    compression,
                })
            }),
        ),
        (
            "WholeFileReaderV2",
            reader_factory(|_| Ok(ReaderKind::WholeFile)),
        ),
        (
            "IdentityReaderV2",
            reader_factory(|_| Ok(ReaderKind::Identity)),
        ),
        (
            "ReaderReadV2",
            factory(|_| Ok(Box::new(Blocking(read_kernel)))),
        ),
        (
            "ReaderReadUpToV2",
            factory(|_| Ok(Box::new(Blocking(read_up_to_kernel)))),
        ),
        (
            "ReaderNumRecordsProducedV2",
            with_reader(|r, ctx| {
                ctx.output(Tensor::scalar(r.num_records_produced()));
                Ok(())
            }),
        ),
        (
            "ReaderNumWorkUnitsCompletedV2",
            with_reader(|r, ctx| {
                ctx.output(Tensor::scalar(r.num_work_units_completed()));
                Ok(())
            }),
        ),
        (
            "ReaderResetV2",
            with_reader(|r, _| {
                r.reset();
                Ok(())
            }),
        ),
        (
            "ReaderSerializeStateV2",
            with_reader(|r, ctx| {
                let s = r.serialize_state()?;
                ctx.output(Tensor::scalar(s));
                Ok(())
            }),
        ),
        (
            "ReaderRestoreStateV2",
            with_reader(|r, ctx| {
                let t = ctx.input(1)?;
                let bytes = match (t.rank(), t.as_slice::<Vec<u8>>()) {
                    (0, Ok([b])) => b.clone(),
                    _ => bail!(invalid_argument, "state must be a scalar string"),
                };
                r.restore_state(&bytes)
            }),
        ),
    ]
}

/// This module's ops that TensorFlow marks `NotDifferentiable` (io_ops.py:
/// the reference-handle reader ops and `LMDBReader`; it has no entry for
/// the `V2` ops or `FakeQueue`). The facade registers them with the
/// gradient registry, which this crate does not depend on.
pub const NOT_DIFFERENTIABLE: &[&str] = &[
    "LMDBReader",
    "ReaderRead",
    "ReaderReadUpTo",
    "ReaderNumRecordsProduced",
    "ReaderNumWorkUnitsCompleted",
    "ReaderSerializeState",
    "ReaderRestoreState",
    "ReaderReset",
];

/// Registers this module's ops and kernels.
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}
