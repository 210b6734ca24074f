//! Datasets that make elements: from tensors, a range, or files.

use super::{row, rows, Composites, Dataset, DatasetIter, Element, IterCtx, Rows};
use ferroflow_records::{Compression, ReadOptions, RecordReader};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

/// `from_tensor_slices`: row `i` of every component is element `i`
/// (SparseTensor and RaggedTensor components sliced as TensorFlow slices
/// them).
pub struct TensorSlices {
    pub components: Vec<Tensor>,
    /// Which components make up SparseTensors and RaggedTensors.
    pub composites: Arc<Composites>,
}

impl TensorSlices {
    /// Checks every component has the same first dimension.
    pub fn new(components: Vec<Tensor>, composites: Arc<Composites>) -> Result<TensorSlices> {
        if components.is_empty() {
            bail!(invalid_argument, "TensorSliceDataset needs a component");
        }
        if composites.is_empty() {
            let n = components[0].dims().first().copied();
            for c in &components {
                ensure!(
                    c.rank() != 0,
                    invalid_argument,
                    "All components must be at least 1-dimensional"
                );
                ensure!(
                    Some(c.dims()[0]) == n,
                    invalid_argument,
                    "All components must have the same size in the 0th dimension, got {} and {}",
                    n.unwrap_or(0),
                    c.dims()[0]
                );
            }
        }
        Ok(TensorSlices {
            components,
            composites,
        })
    }
}

enum TensorSlicesIter {
    Dense { components: Vec<Tensor>, i: usize },
    Sparse { rows: Rows, i: usize },
}

impl Dataset for TensorSlices {
    fn cardinality(&self) -> i64 {
        if self.composites.is_empty() {
            self.components[0].dims()[0] as i64
        } else {
            super::Rows::new(self.components.clone(), &self.composites)
                .map_or(-2, |r| r.len() as i64)
        }
    }

    fn iterate(&self, _: &IterCtx) -> Result<Box<dyn DatasetIter>> {
        Ok(Box::new(if self.composites.is_empty() {
            TensorSlicesIter::Dense {
                components: self.components.clone(),
                i: 0,
            }
        } else {
            TensorSlicesIter::Sparse {
                rows: Rows::new(self.components.clone(), &self.composites)?,
                i: 0,
            }
        }))
    }
}

impl DatasetIter for TensorSlicesIter {
    fn next_stacked(&mut self, n: usize) -> Option<Result<Option<(Element, usize)>>> {
        let TensorSlicesIter::Dense { components, i } = self else {
            return None;
        };
        let total = components[0].dims()[0];
        let k = n.min(total - (*i).min(total));
        if k == 0 {
            return Some(Ok(None));
        }
        let start = *i;
        *i += k;
        Some(
            components
                .iter()
                .map(|c| rows(c, start, k))
                .collect::<Result<_>>()
                .map(|e| Some((e, k))),
        )
    }

    fn next(&mut self) -> Result<Option<Element>> {
        match self {
            TensorSlicesIter::Dense { components, i } => {
                if *i >= components[0].dims()[0] {
                    return Ok(None);
                }
                let at = *i;
                *i += 1;
                components
                    .iter()
                    .map(|c| row(c, at))
                    .collect::<Result<_>>()
                    .map(Some)
            }
            TensorSlicesIter::Sparse { rows, i } => {
                if *i >= rows.len() {
                    return Ok(None);
                }
                *i += 1;
                rows.row(*i - 1).map(Some)
            }
        }
    }
}

/// `from_tensors`: one element.
pub struct Tensors {
    pub components: Vec<Tensor>,
}

struct Once(Option<Element>);

impl Dataset for Tensors {
    fn cardinality(&self) -> i64 {
        1
    }

    fn iterate(&self, _: &IterCtx) -> Result<Box<dyn DatasetIter>> {
        Ok(Box::new(Once(Some(self.components.clone()))))
    }
}

impl DatasetIter for Once {
    fn next(&mut self) -> Result<Option<Element>> {
        Ok(self.0.take())
    }
}

/// `range(start, stop, step)`.
pub struct Range {
    pub start: i64,
    pub stop: i64,
    pub step: i64,
    pub dtype: DType,
}

struct RangeIter {
    next: i64,
    stop: i64,
    step: i64,
    dtype: DType,
}

impl Dataset for Range {
    fn cardinality(&self) -> i64 {
        let (start, stop, step) = (self.start as i128, self.stop as i128, self.step as i128);
        let n = if step > 0 {
            (stop - start + step - 1).div_euclid(step)
        } else if step < 0 {
            (start - stop - step - 1).div_euclid(-step)
        } else {
            0
        };
        n.max(0) as i64
    }

    fn iterate(&self, _: &IterCtx) -> Result<Box<dyn DatasetIter>> {
        ensure!(
            self.step != 0,
            invalid_argument,
            "step must be a non-zero integer."
        );
        Ok(Box::new(RangeIter {
            next: self.start,
            stop: self.stop,
            step: self.step,
            dtype: self.dtype,
        }))
    }
}

impl DatasetIter for RangeIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let done = if self.step > 0 {
            self.next >= self.stop
        } else {
            self.next <= self.stop
        };
        if done {
            return Ok(None);
        }
        let v = self.next;
        self.next += self.step;
        let t = ferroflow_tensor::kernels::elementwise::cast(&Tensor::scalar(v), self.dtype)?;
        Ok(Some(vec![t]))
    }
}

/// The file names of a reader dataset's `filenames` input.
pub(crate) fn file_names(t: &Tensor) -> Result<Vec<String>> {
    let names = t
        .as_slice::<Vec<u8>>()
        .map_err(|_| Error::invalid_argument("`filenames` must be a string tensor"))?;
    if t.rank() > 1 {
        bail!(
            invalid_argument,
            "`filenames` must be a scalar or a vector."
        );
    }
    Ok(names
        .iter()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect())
}

/// TF's compression names: "", "ZLIB", "GZIP".
pub(crate) fn compression(name: &str) -> Result<Compression> {
    Compression::from_name(name)
}

/// `TFRecordDataset`: the records of each file in turn.
pub struct TfRecords {
    pub files: Vec<String>,
    pub compression: Compression,
}

struct TfRecordsIter {
    files: Vec<String>,
    compression: Compression,
    index: usize,
    reader: Option<RecordReader>,
}

impl Dataset for TfRecords {
    fn iterate(&self, _: &IterCtx) -> Result<Box<dyn DatasetIter>> {
        Ok(Box::new(TfRecordsIter {
            files: self.files.clone(),
            compression: self.compression,
            index: 0,
            reader: None,
        }))
    }
}

impl DatasetIter for TfRecordsIter {
    fn next(&mut self) -> Result<Option<Element>> {
        loop {
            if self.reader.is_none() {
                let Some(path) = self.files.get(self.index) else {
                    return Ok(None);
                };
                match RecordReader::open(path, self.compression, ReadOptions::default()) {
                    Ok(r) => self.reader = Some(r),
                    Err(e) => {
                        // Like TensorFlow, an error moves on to the next
                        // file, so `ignore_errors` skips what is left of it.
                        self.index += 1;
                        return Err(e);
                    }
                }
            }
            let reader = self.reader.as_mut().expect("opened above");
            match reader.read_record_with(|d| d.to_vec()) {
                Ok(Some((_, data))) => return Ok(Some(vec![Tensor::scalar(data)])),
                Ok(None) => {
                    self.reader = None;
                    self.index += 1;
                }
                Err(e) => {
                    self.reader = None;
                    self.index += 1;
                    return Err(e);
                }
            }
        }
    }
}

/// Opens `path`, decompressing it as `compression` says.
fn open_stream(path: &str, compression: Compression) -> Result<Box<dyn Read + Send>> {
    let file = File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::not_found(format!("{path}; No such file or directory"))
        } else {
            Error::unknown(format!("{path}: {e}"))
        }
    })?;
    let file = BufReader::with_capacity(256 * 1024, file);
    Ok(match compression {
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(file)),
        Compression::Zlib => Box::new(flate2::read::ZlibDecoder::new(file)),
        _ => Box::new(file),
    })
}

fn read_error(path: &str, e: std::io::Error) -> Error {
    Error::data_loss(format!("error reading {path}: {e}"))
}

/// `TextLineDataset`: the lines of each file, without their line ends.
pub struct TextLines {
    pub files: Vec<String>,
    pub compression: Compression,
}

struct TextLinesIter {
    files: Vec<String>,
    compression: Compression,
    index: usize,
    reader: Option<BufReader<Box<dyn Read + Send>>>,
}

impl Dataset for TextLines {
    fn iterate(&self, _: &IterCtx) -> Result<Box<dyn DatasetIter>> {
        Ok(Box::new(TextLinesIter {
            files: self.files.clone(),
            compression: self.compression,
            index: 0,
            reader: None,
        }))
    }
}

impl DatasetIter for TextLinesIter {
    fn next(&mut self) -> Result<Option<Element>> {
        loop {
            if self.reader.is_none() {
                let Some(path) = self.files.get(self.index) else {
                    return Ok(None);
                };
                match open_stream(path, self.compression) {
                    Ok(r) => self.reader = Some(BufReader::new(r)),
                    Err(e) => {
                        self.index += 1;
                        return Err(e);
                    }
                }
            }
            let reader = self.reader.as_mut().expect("opened above");
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => {
                    self.reader = None;
                    self.index += 1;
                }
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                        if line.last() == Some(&b'\r') {
                            line.pop();
                        }
                    }
                    return Ok(Some(vec![Tensor::scalar(line)]));
                }
                Err(e) => {
                    let path = self.files[self.index].clone();
                    self.reader = None;
                    self.index += 1;
                    return Err(read_error(&path, e));
                }
            }
        }
    }
}

/// `FixedLengthRecordDataset`: each file's records of `record_bytes`
/// between a header and a footer.
pub struct FixedLengthRecords {
    pub files: Vec<String>,
    pub header_bytes: usize,
    pub record_bytes: usize,
    pub footer_bytes: usize,
    pub compression: Compression,
}

struct FixedLengthIter {
    spec: FixedSpec,
    files: Vec<String>,
    index: usize,
    /// The current file's record area (between header and footer) and the
    /// offset of the next record in it.
    current: Option<(Vec<u8>, usize)>,
}

#[derive(Clone, Copy)]
struct FixedSpec {
    header: usize,
    record: usize,
    footer: usize,
    compression: Compression,
}

impl Dataset for FixedLengthRecords {
    fn iterate(&self, _: &IterCtx) -> Result<Box<dyn DatasetIter>> {
        ensure!(
            self.record_bytes != 0,
            invalid_argument,
            "record_bytes must be greater than 0"
        );
        Ok(Box::new(FixedLengthIter {
            spec: FixedSpec {
                header: self.header_bytes,
                record: self.record_bytes,
                footer: self.footer_bytes,
                compression: self.compression,
            },
            files: self.files.clone(),
            index: 0,
            current: None,
        }))
    }
}

impl DatasetIter for FixedLengthIter {
    fn next(&mut self) -> Result<Option<Element>> {
        loop {
            if self.current.is_none() {
                let Some(path) = self.files.get(self.index).cloned() else {
                    return Ok(None);
                };
                let mut bytes = Vec::new();
                let read = open_stream(&path, self.spec.compression)
                    .and_then(|mut r| r.read_to_end(&mut bytes).map_err(|e| read_error(&path, e)));
                if let Err(e) = read {
                    self.index += 1;
                    return Err(e);
                }
                let end = bytes.len().saturating_sub(self.spec.footer);
                let body = bytes
                    .get(self.spec.header.min(end)..end)
                    .unwrap_or_default()
                    .to_vec();
                self.current = Some((body, 0));
            }
            let (body, pos) = self.current.as_mut().expect("read above");
            if *pos + self.spec.record <= body.len() {
                let rec = body[*pos..*pos + self.spec.record].to_vec();
                *pos += self.spec.record;
                return Ok(Some(vec![Tensor::scalar(rec)]));
            }
            self.current = None;
            self.index += 1;
        }
    }
}
