//! TensorBoard event files: the writer and helpers for building events.
//!
//! An event file is an uncompressed TFRecord file of serialized [`Event`]s
//! named `events.out.tfevents.<T>.<hostname><suffix>`, where `<T>` is the
//! creation time in whole seconds (zero-padded to ten digits, so names sort
//! in creation order). Its first record is
//! `Event { wall_time: T, file_version: "brain.Event:2", source_metadata }`.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use prost::Message;

use crate::proto::{event, Event, SessionLog, SessionStatus, SourceMetadata, Summary};
use crate::record::{io_error, Compression, RecordWriter};
use crate::{Error, Result};

/// The `file_version` of the first event; TensorBoard reads the number after
/// `brain.Event:` (version 2 enables its SessionLog-based purging).
pub const FILE_VERSION: &str = "brain.Event:2";

/// The `source_metadata.writer` TensorFlow's C++ events writer puts on the
/// first event; written as-is so files look exactly like TensorFlow's.
pub const SOURCE_WRITER: &str = "tensorflow.core.util.events_writer";

/// Seconds since the epoch, with fraction.
pub fn wall_time_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The machine's host name, as used in event file names (`"localhost"` when
/// it cannot be found).
pub fn hostname() -> String {
    let from_file = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let name = from_file("/proc/sys/kernel/hostname")
        .or_else(|| from_file("/etc/hostname"))
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    name.replace(['/', '\\'], "_")
}

/// `events.out.tfevents.<time, %010d>.<host><suffix>`.
pub fn event_file_name(time_secs: u64, host: &str, suffix: &str) -> String {
    format!("events.out.tfevents.{time_secs:010}.{host}{suffix}")
}

/// The first event of every event file.
pub fn file_version_event(time_secs: u64) -> Event {
    Event {
        wall_time: time_secs as f64,
        step: 0,
        what: Some(event::What::FileVersion(FILE_VERSION.to_string())),
        source_metadata: Some(SourceMetadata {
            writer: SOURCE_WRITER.to_string(),
        }),
    }
}

/// A summary event at `step`, stamped now.
pub fn summary_event(summary: Summary, step: i64) -> Event {
    Event::new(wall_time_now(), step, event::What::Summary(summary))
}

/// The serialized `Event { wall_time, step, summary }` around an already
/// serialized `Summary`, without decoding it: the bytes
/// `Event::new(wall_time, step, Summary(decoded)).encode_to_vec()` gives for
/// a canonically encoded `summary` (zero `wall_time` and `step` are left
/// out, as proto3 does).
pub fn encode_summary_event(summary: &[u8], wall_time: f64, step: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(summary.len() + 24);
    if wall_time != 0.0 {
        out.push(0x09); // field 1, 64-bit
        out.extend_from_slice(&wall_time.to_le_bytes());
    }
    if step != 0 {
        out.push(0x10); // field 2, varint
        prost::encoding::encode_varint(step as u64, &mut out);
    }
    out.push(0x2a); // field 5, length-delimited
    prost::encoding::encode_varint(summary.len() as u64, &mut out);
    out.extend_from_slice(summary);
    out
}

/// Splits a varint off the front of `buf`.
fn take_varint(buf: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    for (i, &b) in buf.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, &buf[i + 1..]));
        }
    }
    None
}

/// Splits one field (key and payload) off the front of `buf`: its field
/// number, wire type, the length-delimited payload (empty for other wire
/// types) and the rest. Groups and malformed data give `None`.
fn take_field(buf: &[u8]) -> Option<(u64, u64, &[u8], &[u8])> {
    let (key, rest) = take_varint(buf)?;
    let (field, wire) = (key >> 3, key & 7);
    if field == 0 {
        return None;
    }
    match wire {
        0 => take_varint(rest).map(|(_, rest)| (field, wire, &[][..], rest)),
        1 => rest.get(8..).map(|rest| (field, wire, &[][..], rest)),
        5 => rest.get(4..).map(|rest| (field, wire, &[][..], rest)),
        2 => {
            let (len, rest) = take_varint(rest)?;
            let len = usize::try_from(len).ok()?;
            (len <= rest.len()).then(|| (field, wire, &rest[..len], &rest[len..]))
        }
        _ => None,
    }
}

/// The tags of the values of a serialized `Summary` that carry metadata, in
/// order, read from the wire format without decoding the values' contents.
/// `None` when the bytes are not plainly well formed at the `Summary` and
/// `Value` levels (wrong wire types, bad UTF-8 in a tag, groups): the
/// caller then decodes the message properly.
fn tags_with_metadata(summary: &[u8]) -> Option<Vec<&str>> {
    let mut tags = Vec::new();
    let mut rest = summary;
    while !rest.is_empty() {
        let (field, wire, payload, next) = take_field(rest)?;
        rest = next;
        match (field, wire) {
            (1, 2) => {
                if let Some(tag) = value_tag_with_metadata(payload)? {
                    tags.push(tag);
                }
            }
            (1, _) => return None,
            _ => {}
        }
    }
    Some(tags)
}

/// For one serialized `Summary.Value`: `Some(Some(tag))` if it carries
/// metadata, `Some(None)` if not, `None` if it is not plainly well formed.
fn value_tag_with_metadata(value: &[u8]) -> Option<Option<&str>> {
    let mut tag = "";
    let mut metadata = false;
    let mut rest = value;
    while !rest.is_empty() {
        let (field, wire, payload, next) = take_field(rest)?;
        rest = next;
        match (field, wire) {
            (1, 2) => tag = std::str::from_utf8(payload).ok()?,
            (7, 2) => {
                std::str::from_utf8(payload).ok()?;
            }
            (9, 2) => metadata = true,
            (2, 5) | (3..=6 | 8, 2) => {}
            (1..=9, _) => return None,
            _ => {}
        }
    }
    Some(metadata.then_some(tag))
}

/// A `SessionLog` event at `step`, stamped now.
pub fn session_log_event(status: SessionStatus, checkpoint_path: &str, step: i64) -> Event {
    Event::new(
        wall_time_now(),
        step,
        event::What::SessionLog(SessionLog {
            status: status as i32,
            checkpoint_path: checkpoint_path.to_string(),
            msg: String::new(),
        }),
    )
}

/// TF1 `FileWriter`'s metadata stripping: a tag's plugin metadata is written
/// with its first value only (TensorBoard takes a tag's metadata from its
/// first occurrence in a run).
#[derive(Clone, Debug, Default)]
pub struct SeenTags {
    tags: HashSet<String>,
}

impl SeenTags {
    /// [`strip`](Self::strip) on a serialized `Summary`. When nothing needs
    /// stripping (the common case: no metadata, or only tags not seen
    /// before) the bytes are returned as they are after a scan of the
    /// `Summary` and `Value` framing; otherwise the message is decoded,
    /// stripped and encoded again. Malformed bytes are a decode error.
    pub fn strip_serialized<'a>(
        &mut self,
        summary: &'a [u8],
    ) -> std::result::Result<std::borrow::Cow<'a, [u8]>, prost::DecodeError> {
        if let Some(tags) = tags_with_metadata(summary) {
            let fresh = tags
                .iter()
                .enumerate()
                .all(|(i, tag)| !self.tags.contains(*tag) && !tags[..i].contains(tag));
            if fresh {
                self.tags.extend(tags.into_iter().map(str::to_string));
                return Ok(std::borrow::Cow::Borrowed(summary));
            }
        }
        let mut decoded = Summary::decode(summary)?;
        self.strip(&mut decoded);
        Ok(std::borrow::Cow::Owned(decoded.encode_to_vec()))
    }

    /// Removes metadata from values whose tag already went out with
    /// metadata, and remembers the tags of values that carry it now.
    pub fn strip(&mut self, summary: &mut Summary) {
        for value in &mut summary.value {
            if value.metadata.is_none() {
                continue;
            }
            if self.tags.contains(&value.tag) {
                value.metadata = None;
            } else {
                self.tags.insert(value.tag.clone());
            }
        }
    }
}

/// The first write error of a background thread, shared with the caller.
type ErrorSlot = Arc<Mutex<Option<Error>>>;

/// Serialized events waiting to be handed to the background thread.
type Pending = Arc<Mutex<Vec<Vec<u8>>>>;

enum Msg {
    /// A batch of serialized events, in order.
    Events(Vec<Vec<u8>>),
    Flush(mpsc::Sender<Result<()>>),
    Close(mpsc::Sender<Result<()>>),
}

struct Worker {
    sender: SyncSender<Msg>,
    pending: Pending,
    handle: Option<JoinHandle<()>>,
    /// The first write error of the background thread.
    error: ErrorSlot,
    path: PathBuf,
}

/// Writes events to a new event file in `logdir` from a background thread
/// (`tf.compat.v1.summary.FileWriter`'s `EventFileWriter`).
///
/// [`add_event`](Self::add_event) serializes the event and queues it. Queued
/// events go to the thread in batches of `max_queue` (one hand-over per
/// batch rather than per event, which is what makes small events cheap);
/// when two batches are already waiting, adding blocks until the thread
/// catches up. The thread writes each batch as it arrives and, at least
/// every `flush_secs`, also writes what is queued and flushes the file to
/// the operating system. [`flush`](Self::flush)
/// waits until everything queued is written and synced; [`close`](Self::close)
/// (or dropping the writer) does the same and closes the file;
/// [`reopen`](Self::reopen) starts a new file after a close. All methods take
/// `&self`, so one writer can be shared between threads; an event added
/// while another thread closes the writer may be dropped, as in TensorFlow.
/// `max_queue` 0 is treated as 1.
pub struct EventFileWriter {
    logdir: PathBuf,
    suffix: String,
    max_queue: usize,
    flush_every: Duration,
    state: Mutex<Option<Worker>>,
    last_path: Mutex<PathBuf>,
}

impl fmt::Debug for EventFileWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventFileWriter")
            .field("path", &self.path())
            .field("max_queue", &self.max_queue)
            .field("flush_every", &self.flush_every)
            .field("closed", &self.is_closed())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves consistent data here.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl EventFileWriter {
    /// Creates `logdir` if needed and a new event file in it, writing the
    /// `file_version` event. `filename_suffix` is appended verbatim (TF1
    /// `FileWriter`); `flush_secs` must be positive.
    pub fn new(
        logdir: impl AsRef<Path>,
        filename_suffix: &str,
        max_queue: usize,
        flush_secs: f64,
    ) -> Result<EventFileWriter> {
        if !flush_secs.is_finite() || flush_secs <= 0.0 {
            return Err(Error::invalid_argument(format!(
                "flush_secs must be a positive number of seconds, got {flush_secs}"
            )));
        }
        let writer = EventFileWriter {
            logdir: logdir.as_ref().to_path_buf(),
            suffix: filename_suffix.to_string(),
            max_queue: max_queue.max(1),
            flush_every: Duration::from_secs_f64(flush_secs.min(1e9)),
            state: Mutex::new(None),
            last_path: Mutex::new(PathBuf::new()),
        };
        writer.reopen()?;
        Ok(writer)
    }

    /// The directory the event files go to.
    pub fn logdir(&self) -> &Path {
        &self.logdir
    }

    /// The current (or, once closed, the last) event file.
    pub fn path(&self) -> PathBuf {
        lock(&self.last_path).clone()
    }

    /// Whether the writer is closed.
    pub fn is_closed(&self) -> bool {
        lock(&self.state).is_none()
    }

    /// Starts a new event file if the writer is closed; a no-op otherwise.
    pub fn reopen(&self) -> Result<()> {
        let mut state = lock(&self.state);
        if state.is_some() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.logdir)
            .map_err(|e| io_error(e, "cannot create log directory", &self.logdir))?;
        let host = hostname();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        // Two writers created in the same second with the same suffix would
        // pick the same name: take the next free second rather than
        // overwrite (the name still sorts after the older file).
        let mut attempt = 0;
        let (mut records, time_secs) = loop {
            let time_secs = now + attempt;
            let path = self
                .logdir
                .join(event_file_name(time_secs, &host, &self.suffix));
            match RecordWriter::create_new(&path, Compression::None) {
                Ok(w) => break (w, time_secs),
                Err(e) if e.code() == Some(crate::Code::AlreadyExists) && attempt < 1000 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        records.write(&file_version_event(time_secs).encode_to_vec())?;
        records.flush()?;

        let path = records.path().to_path_buf();
        let (sender, receiver) = mpsc::sync_channel(2);
        let error = Arc::new(Mutex::new(None));
        let thread_error = Arc::clone(&error);
        let pending: Pending = Arc::new(Mutex::new(Vec::with_capacity(self.max_queue)));
        let thread_pending = Arc::clone(&pending);
        let flush_every = self.flush_every;
        let handle = std::thread::Builder::new()
            .name("ferroflow-event-writer".to_string())
            .spawn(move || write_loop(records, receiver, thread_pending, flush_every, thread_error))
            .map_err(|e| {
                Error::resource_exhausted(format!("cannot start event writer thread: {e}"))
            })?;
        *lock(&self.last_path) = path.clone();
        *state = Some(Worker {
            sender,
            pending,
            handle: Some(handle),
            error,
            path,
        });
        Ok(())
    }

    fn sender(&self) -> Result<(SyncSender<Msg>, Pending, ErrorSlot)> {
        let state = lock(&self.state);
        match state.as_ref() {
            Some(w) => {
                if let Some(e) = lock(&w.error).clone() {
                    return Err(e);
                }
                Ok((
                    w.sender.clone(),
                    Arc::clone(&w.pending),
                    Arc::clone(&w.error),
                ))
            }
            None => Err(self.closed_error()),
        }
    }

    fn closed_error(&self) -> Error {
        Error::failed_precondition(format!(
            "EventFileWriter for {} is closed",
            self.path().display()
        ))
    }

    /// Queues `event` for writing; blocks while `max_queue` events wait.
    /// Returns the background thread's write error, if one happened.
    pub fn add_event(&self, event: &Event) -> Result<()> {
        self.add_serialized(event.encode_to_vec())
    }

    /// Queues an already serialized `Event` (written as given); blocks
    /// while `max_queue` events wait.
    pub fn add_serialized(&self, event: Vec<u8>) -> Result<()> {
        let (sender, pending, error) = self.sender()?;
        let mut queued = lock(&pending);
        queued.push(event);
        if queued.len() < self.max_queue {
            return Ok(());
        }
        // Sent while holding the queue, so batches keep the order in which
        // events were added; the thread never waits for this lock.
        let batch = std::mem::replace(&mut *queued, Vec::with_capacity(self.max_queue));
        if sender.send(Msg::Events(batch)).is_err() {
            // Closed by another thread while this one waited for room.
            if self.is_closed() {
                return Err(self.closed_error());
            }
            return Err(thread_gone(&error));
        }
        Ok(())
    }

    /// Queues a summary event at `step` (stamped now).
    pub fn add_summary(&self, summary: Summary, step: i64) -> Result<()> {
        self.add_event(&summary_event(summary, step))
    }

    /// Waits until every queued event is written, then flushes and syncs.
    pub fn flush(&self) -> Result<()> {
        let (sender, pending, error) = self.sender()?;
        let (reply, done) = mpsc::channel();
        {
            let mut queued = lock(&pending);
            let batch = std::mem::take(&mut *queued);
            if (!batch.is_empty() && sender.send(Msg::Events(batch)).is_err())
                || sender.send(Msg::Flush(reply)).is_err()
            {
                return Err(thread_gone(&error));
            }
        }
        done.recv().unwrap_or_else(|_| Err(thread_gone(&error)))
    }

    /// Writes everything queued, closes the file and stops the thread.
    /// Closing a closed writer is a no-op.
    pub fn close(&self) -> Result<()> {
        let Some(mut worker) = lock(&self.state).take() else {
            return Ok(());
        };
        let (reply, done) = mpsc::channel();
        let batch = std::mem::take(&mut *lock(&worker.pending));
        let sent = batch.is_empty() || worker.sender.send(Msg::Events(batch)).is_ok();
        let result = if sent && worker.sender.send(Msg::Close(reply)).is_ok() {
            done.recv()
                .unwrap_or_else(|_| Err(thread_gone(&worker.error)))
        } else {
            Err(thread_gone(&worker.error))
        };
        if let Some(handle) = worker.handle.take() {
            let _ = handle.join();
        }
        let earlier = lock(&worker.error).take();
        match (earlier, result) {
            (Some(e), _) => Err(e),
            (None, r) => r.map_err(|e| {
                Error::unknown(format!(
                    "closing {}: {}",
                    worker.path.display(),
                    e.message()
                ))
            }),
        }
    }
}

impl Drop for EventFileWriter {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn thread_gone(error: &ErrorSlot) -> Error {
    lock(error)
        .clone()
        .unwrap_or_else(|| Error::internal("the event writer thread stopped unexpectedly"))
}

/// Writes `batch`, keeping the first error for the caller.
fn write_batch(records: &mut RecordWriter, batch: &[Vec<u8>], error: &ErrorSlot) {
    for bytes in batch {
        if let Err(e) = records.write(bytes) {
            keep_first_error(error, e);
            break;
        }
    }
}

fn keep_first_error(error: &ErrorSlot, e: Error) {
    let mut slot = lock(error);
    if slot.is_none() {
        *slot = Some(e);
    }
}

/// Handles one message; `false` once the writer is closed.
fn handle(msg: Msg, records: &mut RecordWriter, dirty: &mut bool, error: &ErrorSlot) -> bool {
    match msg {
        Msg::Events(batch) => {
            write_batch(records, &batch, error);
            *dirty = true;
            true
        }
        Msg::Flush(reply) => {
            let r = records.sync();
            if let Err(e) = &r {
                keep_first_error(error, e.clone());
            }
            *dirty = false;
            let _ = reply.send(r);
            true
        }
        Msg::Close(reply) => {
            let r = records.sync().and_then(|_| records.close());
            let _ = reply.send(r);
            false
        }
    }
}

fn write_loop(
    mut records: RecordWriter,
    receiver: Receiver<Msg>,
    pending: Pending,
    flush_every: Duration,
    error: ErrorSlot,
) {
    let mut next_flush = Instant::now() + flush_every;
    let mut dirty = false;
    loop {
        let timeout = next_flush.saturating_duration_since(Instant::now());
        match receiver.recv_timeout(timeout) {
            Ok(msg) => {
                if !handle(msg, &mut records, &mut dirty, &error) {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                if let Err(e) = records.close() {
                    keep_first_error(&error, e);
                }
                return;
            }
        }
        if Instant::now() >= next_flush {
            // Events still queued by adders go out with the periodic flush;
            // if an adder holds the queue right now, they go next time.
            if let Ok(mut queued) = pending.try_lock() {
                // Adders hand batches over while holding the queue, so every
                // batch already in the channel precedes what is still queued:
                // write those first to keep the order of events.
                while let Ok(msg) = receiver.try_recv() {
                    if !handle(msg, &mut records, &mut dirty, &error) {
                        return;
                    }
                }
                let batch = std::mem::take(&mut *queued);
                drop(queued);
                if !batch.is_empty() {
                    write_batch(&mut records, &batch, &error);
                    dirty = true;
                }
            }
            if dirty {
                if let Err(e) = records.flush() {
                    keep_first_error(&error, e);
                }
                dirty = false;
            }
            next_flush = Instant::now() + flush_every;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            event_file_name(12345, "vm", ".v2"),
            "events.out.tfevents.0000012345.vm.v2"
        );
        assert!(!hostname().is_empty());
    }

    #[test]
    fn first_event_bytes_in_field_order() {
        let bytes = file_version_event(1_700_000_000).encode_to_vec();
        // wall_time (1), file_version (3), source_metadata (10).
        assert_eq!(bytes[0], 0x09);
        assert_eq!(bytes[9], 0x1a);
        assert_eq!(bytes[10] as usize, FILE_VERSION.len());
        assert_eq!(bytes[11 + FILE_VERSION.len()], 0x52);
    }

    #[test]
    fn summary_event_bytes_match_the_encoded_event() {
        use crate::summary::{histogram_summary, scalar, text};
        let summaries = [
            Summary::from_values(vec![]),
            Summary::from_values(vec![scalar("loss", 0.25)]),
            Summary::from_values(vec![
                scalar("a", -1.0),
                text("t", &[2], vec![b"x".to_vec(), b"yz".to_vec()]),
                histogram_summary("h", &[1.0, 2.0, 2.5, -3.0]).unwrap(),
            ]),
        ];
        for summary in summaries {
            let bytes = summary.encode_to_vec();
            for (wall_time, step) in [
                (0.0, 0),
                (1.7e9 + 0.125, 0),
                (1.7e9, 1),
                (3.5, -7),
                (1.0, i64::MAX),
                (1.0, i64::MIN),
            ] {
                let expected = Event::new(wall_time, step, event::What::Summary(summary.clone()))
                    .encode_to_vec();
                assert_eq!(
                    encode_summary_event(&bytes, wall_time, step),
                    expected,
                    "{wall_time} {step}"
                );
            }
        }
    }

    #[test]
    fn stripping_serialized_summaries_matches_stripping_messages() {
        use crate::summary::{scalar, text};
        let t = |tag: &str| text(tag, &[], vec![b"x".to_vec()]);
        // Metadata on new tags, on seen tags, twice in one summary, mixed
        // with plain scalars.
        let sequence = vec![
            Summary::from_values(vec![scalar("s", 1.0)]),
            Summary::from_values(vec![t("a"), scalar("s", 2.0)]),
            Summary::from_values(vec![t("a")]),
            Summary::from_values(vec![t("b"), t("b"), t("c")]),
            Summary::from_values(vec![t("d"), t("a")]),
            Summary::from_values(vec![t("e")]),
            Summary::from_values(vec![t("e"), scalar("e", 3.0)]),
        ];
        let mut by_message = SeenTags::default();
        let mut by_bytes = SeenTags::default();
        for (i, summary) in sequence.into_iter().enumerate() {
            let bytes = summary.encode_to_vec();
            let mut stripped = summary;
            by_message.strip(&mut stripped);
            let got = by_bytes.strip_serialized(&bytes).unwrap();
            assert_eq!(got.as_ref(), stripped.encode_to_vec(), "summary {i}");
            // Nothing to strip: the bytes are passed through untouched.
            let kept = stripped.encode_to_vec() == bytes;
            assert_eq!(
                matches!(got, std::borrow::Cow::Borrowed(_)),
                kept,
                "summary {i}"
            );
        }
        assert_eq!(by_message.tags, by_bytes.tags);
    }

    #[test]
    fn malformed_serialized_summaries_are_decode_errors() {
        let mut seen = SeenTags::default();
        let good = Summary::from_values(vec![crate::summary::scalar("x", 1.0)]).encode_to_vec();
        for bad in [
            &good[..good.len() - 1],             // truncated value
            &[0x0a, 0x05, 0x0a][..],             // length beyond the end
            &[0x08, 0x01][..],                   // field 1 as a varint
            &[0x0a, 0x03, 0x0a, 0x01, 0xff][..], // tag not UTF-8
            &[0x0a, 0x02, 0x15, 0x00][..],       // simple_value cut short
        ] {
            assert!(seen.strip_serialized(bad).is_err(), "{bad:?}");
        }
        // Unknown fields at either level are kept, like protobuf does.
        let mut with_unknown = good.clone();
        with_unknown.extend_from_slice(&[0x78, 0x05]);
        let got = seen.strip_serialized(&with_unknown).unwrap();
        assert_eq!(got.as_ref(), &with_unknown[..]);
    }

    #[test]
    fn seen_tags_strip_later_metadata() {
        use crate::summary::{scalar, text};
        let mut seen = SeenTags::default();
        let mk =
            || Summary::from_values(vec![scalar("a", 1.0), text("t", &[], vec![b"x".to_vec()])]);
        let mut first = mk();
        seen.strip(&mut first);
        assert!(first.value[1].metadata.is_some());
        let mut second = mk();
        seen.strip(&mut second);
        assert!(second.value[1].metadata.is_none());
        assert_eq!(second.value[0], first.value[0]);
    }
}
