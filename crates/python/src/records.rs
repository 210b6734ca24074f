//! Native TFRecord and event-file access for Python: the record writer and
//! reader behind `tf.io.TFRecordWriter` / `tf.io.tf_record_iterator`, and the
//! background event writer behind `tf.summary.FileWriter`.
//!
//! Errors are TensorFlow's classes: a corrupt or truncated record is a
//! `DataLossError` naming the file and the offset, a missing file a
//! `NotFoundError`, a write after `close` a `FailedPreconditionError`.

use crate::errors::{guard, IntoPyResult};
use ferroflow_records::events::{encode_summary_event, wall_time_now, SeenTags};
use ferroflow_records::{
    Compression, EventFileWriter as CoreEventWriter, ReadOptions, RecordReader as CoreReader,
    RecordWriter as CoreWriter,
};
use ferroflow_tensor::Error;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;

fn compression(name: &str) -> Result<Compression, Error> {
    Compression::from_name(name)
}

/// Writes TFRecord files (`tf.io.TFRecordWriter`).
#[pyclass(module = "ferroflow._native", frozen)]
pub struct RecordWriter {
    inner: Mutex<CoreWriter>,
}

#[pymethods]
impl RecordWriter {
    /// Creates (or truncates) `path`; `compression_type` is `""`, `"ZLIB"`
    /// or `"GZIP"`.
    #[new]
    #[pyo3(signature = (path, compression_type = ""))]
    fn new(py: Python<'_>, path: PathBuf, compression_type: &str) -> PyResult<RecordWriter> {
        let c = compression(compression_type).py(py)?;
        let inner = py
            .detach(|| guard(|| CoreWriter::create(&path, c)))
            .py(py)?;
        Ok(RecordWriter {
            inner: Mutex::new(inner),
        })
    }

    /// Appends one record.
    fn write(&self, py: Python<'_>, record: &[u8]) -> PyResult<()> {
        guard(|| self.inner.lock().write(record)).py(py)
    }

    /// Hands the written records to the operating system.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.lock().flush())).py(py)
    }

    /// Flushes and asks the operating system to persist the file (fsync).
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.lock().sync())).py(py)
    }

    /// Finishes the (compressed) stream and closes the file; idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.lock().close())).py(py)
    }

    /// Bytes of framed records written so far (before compression).
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.lock().offset()
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.lock().is_closed()
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.lock().path().to_path_buf()
    }
}

/// Iterates over the records of a TFRecord file (`tf_record_iterator`).
#[pyclass(module = "ferroflow._native", frozen)]
pub struct RecordReader {
    inner: Mutex<Option<CoreReader>>,
}

#[pymethods]
impl RecordReader {
    /// Opens `path`. With `tolerate_truncated_tail`, an incomplete last
    /// record ends the iteration (and is returned by a later `__next__` once
    /// a writer completed it) instead of raising `DataLossError`.
    #[new]
    #[pyo3(signature = (path, compression_type = "", tolerate_truncated_tail = false))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        compression_type: &str,
        tolerate_truncated_tail: bool,
    ) -> PyResult<RecordReader> {
        let c = compression(compression_type).py(py)?;
        let options = if tolerate_truncated_tail {
            ReadOptions::tailing()
        } else {
            ReadOptions::default()
        };
        let inner = py
            .detach(|| guard(|| CoreReader::open(&path, c, options)))
            .py(py)?;
        Ok(RecordReader {
            inner: Mutex::new(Some(inner)),
        })
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The next record's bytes; `StopIteration` at the end of the data.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyBytes>>> {
        let mut guard_ = self.inner.lock();
        let Some(reader) = guard_.as_mut() else {
            return Ok(None);
        };
        // The payload goes from the read buffer straight into the bytes object.
        let record = guard(|| reader.read_record_with(|data| PyBytes::new(py, data).unbind()));
        Ok(record.py(py)?.map(|(_, bytes)| bytes))
    }

    /// Offset of the next record in the (decompressed) stream.
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.lock().as_ref().map_or(0, |r| r.offset())
    }

    /// Closes the file; further iteration ends at once.
    fn close(&self) {
        self.inner.lock().take();
    }
}

/// An event file written from a background thread
/// (`tf.summary.FileWriter`'s `EventFileWriter`).
#[pyclass(module = "ferroflow._native", frozen)]
pub struct EventFileWriter {
    inner: CoreEventWriter,
    seen: Mutex<SeenTags>,
}

#[pymethods]
impl EventFileWriter {
    /// Creates `logdir` if needed and a new event file in it.
    #[new]
    #[pyo3(signature = (logdir, filename_suffix = "", max_queue = 10, flush_secs = 120.0))]
    fn new(
        py: Python<'_>,
        logdir: PathBuf,
        filename_suffix: &str,
        max_queue: usize,
        flush_secs: f64,
    ) -> PyResult<EventFileWriter> {
        let inner = py
            .detach(|| {
                guard(|| CoreEventWriter::new(&logdir, filename_suffix, max_queue, flush_secs))
            })
            .py(py)?;
        Ok(EventFileWriter {
            inner,
            seen: Mutex::new(SeenTags::default()),
        })
    }

    /// Queues a serialized `Event`, written as given.
    fn add_event(&self, py: Python<'_>, event: Vec<u8>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.add_serialized(event)))
            .py(py)
    }

    /// Queues a summary event at `step`, stamped now: a serialized `Summary`
    /// whose plugin metadata is kept only on the first value of each tag,
    /// as TensorFlow's `FileWriter.add_summary` does.
    #[pyo3(signature = (summary, step = None))]
    fn add_summary(&self, py: Python<'_>, summary: &[u8], step: Option<i64>) -> PyResult<()> {
        let wall_time = wall_time_now();
        // Usually the summary goes into the event as it is, undecoded.
        let stripped = self.seen.lock().strip_serialized(summary);
        let event = match stripped {
            Ok(summary) => encode_summary_event(&summary, wall_time, step.unwrap_or(0)),
            Err(e) => {
                return Err(crate::errors::to_py(
                    py,
                    Error::invalid_argument(format!("add_summary: not a serialized Summary: {e}")),
                ))
            }
        };
        py.detach(|| guard(|| self.inner.add_serialized(event)))
            .py(py)
    }

    /// Waits until everything queued is written, then flushes and syncs.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.flush())).py(py)
    }

    /// Writes everything queued and closes the file; idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.close())).py(py)
    }

    /// Starts a new event file after `close`; a no-op while open.
    fn reopen(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.reopen())).py(py)
    }

    /// The current (or last) event file.
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.path()
    }

    #[getter]
    fn logdir(&self) -> PathBuf {
        self.inner.logdir().to_path_buf()
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// Adds the record and event classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RecordWriter>()?;
    m.add_class::<RecordReader>()?;
    m.add_class::<EventFileWriter>()?;
    Ok(())
}
