//! The TFRecord container: writer and reader.
//!
//! A file is a plain concatenation of records, each framed as
//!
//! | bytes  | content                                      |
//! |--------|----------------------------------------------|
//! | 8      | payload length, `u64` little endian          |
//! | 4      | masked CRC-32C of those 8 length bytes       |
//! | length | payload                                      |
//! | 4      | masked CRC-32C of the payload                |
//!
//! With GZIP or ZLIB compression the whole framed byte stream is compressed
//! (not each record), so offsets reported by the reader are offsets in the
//! decompressed stream.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Cursor, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use flate2::read::{MultiGzDecoder, ZlibDecoder};
use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::GzBuilder;

use crate::crc::masked_crc32c;
use crate::{Error, Result};

/// Bytes before the payload: length (8) and its masked CRC (4).
pub const HEADER_LEN: usize = 12;
/// Bytes after the payload: the payload's masked CRC.
pub const FOOTER_LEN: usize = 4;

/// Compression of a whole TFRecord stream (TensorFlow's `compression_type`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// No compression (`""`).
    #[default]
    None,
    /// An RFC 1950 zlib stream (`"ZLIB"`).
    Zlib,
    /// An RFC 1952 gzip stream (`"GZIP"`); readers accept concatenated members.
    Gzip,
}

impl Compression {
    /// Parses TensorFlow's `compression_type` string: `""` (or `"NONE"`),
    /// `"ZLIB"` or `"GZIP"`.
    pub fn from_name(name: &str) -> Result<Compression> {
        match name {
            "" | "NONE" => Ok(Compression::None),
            "ZLIB" => Ok(Compression::Zlib),
            "GZIP" => Ok(Compression::Gzip),
            other => Err(Error::invalid_argument(format!(
                "Unsupported compression_type: {other:?}; expected \"\", \"ZLIB\" or \"GZIP\""
            ))),
        }
    }

    /// TensorFlow's name for this compression (`""`, `"ZLIB"`, `"GZIP"`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Zlib => "ZLIB",
            Compression::Gzip => "GZIP",
        }
    }
}

/// Frames one payload as a complete record (header, payload, footer).
pub fn encode_record(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + HEADER_LEN + FOOTER_LEN);
    // Writing into a Vec cannot fail.
    let _ = write_record(&mut out, payload);
    out
}

/// Writes one framed record to `w`.
pub fn write_record<W: Write + ?Sized>(w: &mut W, payload: &[u8]) -> io::Result<()> {
    let len = (payload.len() as u64).to_le_bytes();
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(&len);
    header[8..].copy_from_slice(&masked_crc32c(&len).to_le_bytes());
    w.write_all(&header)?;
    w.write_all(payload)?;
    w.write_all(&masked_crc32c(payload).to_le_bytes())
}

/// Maps an I/O error on `path` onto TensorFlow's status codes.
pub(crate) fn io_error(err: io::Error, what: &str, path: &Path) -> Error {
    Error::io(&err, format_args!("{what} {}: {err}", path.display()))
}

enum Sink {
    Plain(BufWriter<File>),
    Zlib(ZlibEncoder<BufWriter<File>>),
    Gzip(GzEncoder<BufWriter<File>>),
}

impl Sink {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Sink::Plain(w) => w,
            Sink::Zlib(w) => w,
            Sink::Gzip(w) => w,
        }
    }

    /// Finishes the compressed stream and returns the buffered file.
    fn finish(self) -> io::Result<BufWriter<File>> {
        match self {
            Sink::Plain(w) => Ok(w),
            Sink::Zlib(w) => w.finish(),
            Sink::Gzip(w) => w.finish(),
        }
    }

    fn file(&self) -> &File {
        match self {
            Sink::Plain(w) => w.get_ref(),
            Sink::Zlib(w) => w.get_ref().get_ref(),
            Sink::Gzip(w) => w.get_ref().get_ref(),
        }
    }
}

/// Writes records to a file (`tf.io.TFRecordWriter`).
///
/// Writes go through a buffer; [`flush`](Self::flush) hands them to the
/// operating system, [`sync`](Self::sync) also asks it to persist them, and
/// [`close`](Self::close) (or dropping the writer) finishes the compressed
/// stream and flushes. On a compressed writer `flush` issues a zlib sync
/// flush, exactly like TensorFlow's (the bytes differ from an unflushed
/// stream but decompress to the same records).
pub struct RecordWriter {
    path: PathBuf,
    compression: Compression,
    sink: Option<Sink>,
    offset: u64,
}

impl fmt::Debug for RecordWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordWriter")
            .field("path", &self.path)
            .field("compression", &self.compression)
            .field("offset", &self.offset)
            .field("closed", &self.sink.is_none())
            .finish()
    }
}

impl RecordWriter {
    /// Creates (or truncates) `path` and writes records to it.
    pub fn create(path: impl AsRef<Path>, compression: Compression) -> Result<RecordWriter> {
        let path = path.as_ref().to_path_buf();
        let file = File::create(&path).map_err(|e| io_error(e, "cannot create", &path))?;
        Ok(Self::from_file(path, file, compression))
    }

    /// Creates `path`, failing with `AlreadyExists` if it exists.
    pub fn create_new(path: impl AsRef<Path>, compression: Compression) -> Result<RecordWriter> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error(e, "cannot create", &path))?;
        Ok(Self::from_file(path, file, compression))
    }

    fn from_file(path: PathBuf, file: File, compression: Compression) -> RecordWriter {
        let buffered = BufWriter::with_capacity(256 * 1024, file);
        let level = flate2::Compression::default();
        let sink = match compression {
            Compression::None => Sink::Plain(buffered),
            Compression::Zlib => Sink::Zlib(ZlibEncoder::new(buffered, level)),
            // mtime 0, no file name, OS = 3 (Unix): the header zlib writes for TF.
            Compression::Gzip => {
                Sink::Gzip(GzBuilder::new().operating_system(3).write(buffered, level))
            }
        };
        RecordWriter {
            path,
            compression,
            sink: Some(sink),
            offset: 0,
        }
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The compression of the stream.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Bytes of framed records written so far (before compression); also the
    /// offset at which the next record starts.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn sink(&mut self) -> Result<&mut Sink> {
        match self.sink.as_mut() {
            Some(sink) => Ok(sink),
            None => Err(Error::failed_precondition(format!(
                "RecordWriter for {} is closed",
                self.path.display()
            ))),
        }
    }

    /// Appends one record.
    pub fn write(&mut self, payload: &[u8]) -> Result<()> {
        let path = self.path.clone();
        let sink = self.sink()?;
        write_record(sink.writer(), payload).map_err(|e| io_error(e, "cannot write to", &path))?;
        self.offset += (payload.len() + HEADER_LEN + FOOTER_LEN) as u64;
        Ok(())
    }

    /// Hands everything written so far to the operating system.
    pub fn flush(&mut self) -> Result<()> {
        let path = self.path.clone();
        let sink = self.sink()?;
        sink.writer()
            .flush()
            .map_err(|e| io_error(e, "cannot flush", &path))
    }

    /// Flushes and asks the operating system to persist the data (fsync).
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        let path = self.path.clone();
        let sink = self.sink()?;
        sink.file()
            .sync_data()
            .map_err(|e| io_error(e, "cannot sync", &path))
    }

    /// Finishes the stream and flushes it. Closing twice is a no-op.
    pub fn close(&mut self) -> Result<()> {
        let Some(sink) = self.sink.take() else {
            return Ok(());
        };
        let mut file = sink
            .finish()
            .map_err(|e| io_error(e, "cannot finish", &self.path))?;
        file.flush()
            .map_err(|e| io_error(e, "cannot flush", &self.path))
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.sink.is_none()
    }
}

impl Drop for RecordWriter {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// How a [`RecordReader`] treats an incomplete record at the end of the data.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Treat any incomplete final record (cut in its header, payload or
    /// footer) as the end of the data instead of a `DataLossError`, the way
    /// TensorBoard tails event files that are still being written. On an
    /// uncompressed source the reader rewinds to the start of that record,
    /// so reading again after the writer appended more returns it.
    pub tolerate_truncated_tail: bool,
    /// Treat fewer than 12 bytes at a record boundary (an incomplete header)
    /// as a clean end of file. This is what TensorFlow 2.21's reader does, so
    /// it is the default; turn it off to report it as `DataLossError`.
    pub partial_header_is_eof: bool,
}

impl Default for ReadOptions {
    /// TensorFlow's behaviour: a partial header ends the file silently, a
    /// partial payload or footer is `DataLossError`.
    fn default() -> Self {
        ReadOptions {
            tolerate_truncated_tail: false,
            partial_header_is_eof: true,
        }
    }
}

impl ReadOptions {
    /// Every incomplete record is a `DataLossError`.
    pub fn strict() -> Self {
        ReadOptions {
            tolerate_truncated_tail: false,
            partial_header_is_eof: false,
        }
    }

    /// For reading a file another process is still appending to: an
    /// incomplete last record ends the data for now.
    pub fn tailing() -> Self {
        ReadOptions {
            tolerate_truncated_tail: true,
            partial_header_is_eof: true,
        }
    }
}

/// One record and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Offset of the record's header in the (decompressed) stream.
    pub offset: u64,
    /// The payload.
    pub data: Vec<u8>,
}

trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

trait BufReadSeek: BufRead + Seek + Send {}
impl<T: BufRead + Seek + Send> BufReadSeek for T {}

enum Source {
    /// Uncompressed: stream offsets are positions in the underlying reader
    /// (relative to `base`), so the reader can rewind after a partial tail.
    /// Buffered, so a record that lies whole in the buffer is checked and
    /// handed out in place.
    Plain {
        reader: Box<dyn BufReadSeek>,
        base: u64,
    },
    /// Compressed, not yet started: an empty input is an empty stream (no
    /// records) rather than a truncated one.
    Pending(Box<dyn ReadSeek>),
    /// Compressed: forward only.
    Stream(Box<dyn Read + Send>),
    /// An empty compressed input.
    Empty(io::Empty),
}

impl Source {
    fn reader(&mut self) -> &mut dyn Read {
        match self {
            Source::Plain { reader, .. } => reader,
            Source::Pending(reader) => reader,
            Source::Stream(reader) => reader,
            Source::Empty(empty) => empty,
        }
    }

    /// Puts the decompressor in place on the first read.
    fn start(&mut self, compression: Compression) -> io::Result<()> {
        if !matches!(self, Source::Pending(_)) {
            return Ok(());
        }
        let Source::Pending(reader) = std::mem::replace(self, Source::Empty(io::empty())) else {
            unreachable!("checked above");
        };
        let mut buffered = BufReader::new(reader);
        if buffered.fill_buf()?.is_empty() {
            return Ok(());
        }
        *self = match compression {
            Compression::Gzip => Source::Stream(Box::new(MultiGzDecoder::new(buffered))),
            _ => Source::Stream(Box::new(ZlibDecoder::new(buffered))),
        };
        Ok(())
    }
}

/// The payload length of the record at the start of `buf` if all of it
/// (header, payload, footer) is in `buf`. The length is not checked against
/// its CRC here; a bogus length only sends the read down the copying path,
/// which checks it.
fn whole_record_len(buf: &[u8]) -> Option<usize> {
    let len_bytes: [u8; 8] = buf.get(..8)?.try_into().ok()?;
    let len = usize::try_from(u64::from_le_bytes(len_bytes)).ok()?;
    let total = len.checked_add(HEADER_LEN + FOOTER_LEN)?;
    (total <= buf.len()).then_some(len)
}

/// What stopped a record read short.
enum Short {
    /// End of data inside the header (`got` bytes of 12 present).
    Header(usize),
    /// End of data inside the payload or footer.
    Body,
}

/// Reads records from a file or buffer (`tf.data.TFRecordDataset`,
/// `tf.compat.v1.io.tf_record_iterator`).
///
/// Iterating yields `Result<Vec<u8>>`; after an error the iterator ends.
/// [`read_record`](Self::read_record) also gives each record's offset.
pub struct RecordReader {
    name: String,
    source: Source,
    compression: Compression,
    options: ReadOptions,
    /// Offset of the next record in the decompressed stream.
    offset: u64,
    failed: bool,
}

impl fmt::Debug for RecordReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordReader")
            .field("name", &self.name)
            .field("compression", &self.compression)
            .field("options", &self.options)
            .field("offset", &self.offset)
            .finish()
    }
}

impl RecordReader {
    /// Opens `path`. Compression cannot be detected; pass the one it was
    /// written with.
    pub fn open(
        path: impl AsRef<Path>,
        compression: Compression,
        options: ReadOptions,
    ) -> Result<RecordReader> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| io_error(e, "cannot open", path))?;
        let reader = BufReader::with_capacity(256 * 1024, file);
        Ok(Self::from_buf_reader(
            path.display().to_string(),
            reader,
            compression,
            options,
        ))
    }

    /// Reads records from an in-memory buffer; `name` is used in error messages.
    pub fn from_bytes(
        name: impl Into<String>,
        bytes: Vec<u8>,
        compression: Compression,
        options: ReadOptions,
    ) -> RecordReader {
        Self::from_buf_reader(name, Cursor::new(bytes), compression, options)
    }

    /// Reads records from any seekable reader, starting at its current
    /// position; `name` is used in error messages.
    pub fn from_reader<R: Read + Seek + Send + 'static>(
        name: impl Into<String>,
        reader: R,
        compression: Compression,
        options: ReadOptions,
    ) -> RecordReader {
        Self::from_buf_reader(name, BufReader::new(reader), compression, options)
    }

    /// [`from_reader`](Self::from_reader) for a reader that is already
    /// buffered (a `BufReader`, a `Cursor`), which is used as it is.
    pub fn from_buf_reader<R: BufRead + Seek + Send + 'static>(
        name: impl Into<String>,
        mut reader: R,
        compression: Compression,
        options: ReadOptions,
    ) -> RecordReader {
        let source = match compression {
            Compression::None => {
                let base = reader.stream_position().unwrap_or(0);
                Source::Plain {
                    reader: Box::new(reader),
                    base,
                }
            }
            Compression::Zlib | Compression::Gzip => Source::Pending(Box::new(reader)),
        };
        RecordReader {
            name: name.into(),
            source,
            compression,
            options,
            offset: 0,
            failed: false,
        }
    }

    /// The file name (or the name given to an in-memory reader).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Offset of the next record in the (decompressed) stream; after the last
    /// record, the length of the valid data.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn where_(&self, offset: u64) -> String {
        let stream = if self.compression == Compression::None {
            ""
        } else {
            " (offset in the decompressed stream)"
        };
        format!("at {offset} in {}{stream}", self.name)
    }

    fn data_loss(&mut self, what: &str, offset: u64, detail: &str) -> Error {
        self.failed = true;
        Error::data_loss(format!("{what} {}: {detail}", self.where_(offset)))
    }

    fn read_error(&mut self, err: io::Error, offset: u64) -> Error {
        self.failed = true;
        match err.kind() {
            // Decoders report corrupt compressed data this way.
            io::ErrorKind::UnexpectedEof => Error::data_loss(format!(
                "truncated {} stream {}: {err}",
                self.compression.name(),
                self.where_(offset)
            )),
            io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => Error::data_loss(format!(
                "corrupted {} stream {}: {err}",
                self.compression.name(),
                self.where_(offset)
            )),
            _ => Error::unknown(format!("read error {}: {err}", self.where_(offset))),
        }
    }

    /// Reads up to `buf.len()` bytes, stopping early only at end of data.
    fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let reader = self.source.reader();
        let mut got = 0;
        while got < buf.len() {
            match reader.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(got)
    }

    /// Rewinds an uncompressed source to `self.offset` after a partial tail,
    /// so a later read sees the record again once it is complete.
    fn rewind(&mut self) -> Result<()> {
        let target = self.offset;
        if let Source::Plain { reader, base } = &mut self.source {
            if let Err(e) = reader.seek(SeekFrom::Start(*base + target)) {
                return Err(self.read_error(e, target));
            }
        } else {
            // A compressed stream cannot be resumed.
            self.failed = true;
        }
        Ok(())
    }

    fn short<T>(&mut self, short: Short) -> Result<Option<T>> {
        let offset = self.offset;
        let tolerated = self.options.tolerate_truncated_tail
            || (matches!(short, Short::Header(_)) && self.options.partial_header_is_eof);
        if tolerated {
            self.rewind()?;
            return Ok(None);
        }
        let detail = match short {
            Short::Header(got) => {
                format!("the data ends {got} bytes into the {HEADER_LEN}-byte record header")
            }
            Short::Body => "the data ends inside the record's payload or checksum".to_string(),
        };
        Err(self.data_loss("truncated record", offset, &detail))
    }

    /// Reads the next record: `Ok(None)` at the end of the data.
    pub fn read_record(&mut self) -> Result<Option<Record>> {
        Ok(self
            .read_record_with(|data| data.to_vec())?
            .map(|(offset, data)| Record { offset, data }))
    }

    /// Reads the next record and passes its checked payload to `f`,
    /// returning the record's offset and what `f` made of it (`Ok(None)` at
    /// the end of the data). On an uncompressed source a record that lies
    /// whole in the read buffer is handed to `f` in place, without an
    /// intermediate copy; `f` is called only for a record whose checksums
    /// match.
    pub fn read_record_with<T>(&mut self, f: impl FnOnce(&[u8]) -> T) -> Result<Option<(u64, T)>> {
        if self.failed {
            return Ok(None);
        }
        let offset = self.offset;
        if let Source::Plain { reader, .. } = &mut self.source {
            match reader.fill_buf() {
                Ok(buf) => {
                    if let Some(len) = whole_record_len(buf) {
                        return self.buffered_record(offset, len, f).map(Some);
                    }
                }
                Err(e) => return self.stream_error(e, offset),
            }
        }
        let mut f = Some(f);
        let record = self.copied_record(offset)?;
        Ok(record.map(|data| {
            let f = f.take().expect("called once");
            (offset, f(&data))
        }))
    }

    /// The record at the start of the plain source's buffer, which holds
    /// all `HEADER_LEN + len + FOOTER_LEN` of its bytes.
    fn buffered_record<T>(
        &mut self,
        offset: u64,
        len: usize,
        f: impl FnOnce(&[u8]) -> T,
    ) -> Result<(u64, T)> {
        let Source::Plain { reader, .. } = &mut self.source else {
            unreachable!("only called on a plain source");
        };
        // Already filled: this returns the buffered bytes without reading.
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) => return Err(self.read_error(e, offset)),
        };
        let header = &buf[..HEADER_LEN];
        let stored = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
        if masked_crc32c(&header[..8]) != stored {
            return Err(self.data_loss("corrupted record", offset, "length checksum mismatch"));
        }
        let data = &buf[HEADER_LEN..HEADER_LEN + len];
        let footer = &buf[HEADER_LEN + len..HEADER_LEN + len + FOOTER_LEN];
        if masked_crc32c(data) != u32::from_le_bytes([footer[0], footer[1], footer[2], footer[3]]) {
            let data_offset = offset + HEADER_LEN as u64;
            return Err(self.data_loss("corrupted record", data_offset, "data checksum mismatch"));
        }
        let out = f(data);
        reader.consume(HEADER_LEN + len + FOOTER_LEN);
        self.offset = offset + (HEADER_LEN + FOOTER_LEN + len) as u64;
        Ok((offset, out))
    }

    /// Reads the record at `offset` into a vector of its own (compressed
    /// sources, and records that straddle the read buffer's end).
    fn copied_record(&mut self, offset: u64) -> Result<Option<Vec<u8>>> {
        if let Err(e) = self.source.start(self.compression) {
            return self.stream_error(e, offset);
        }

        let mut header = [0u8; HEADER_LEN];
        let got = match self.read_full(&mut header) {
            Ok(n) => n,
            Err(e) => return self.stream_error(e, offset),
        };
        if got == 0 {
            return Ok(None);
        }
        if got < HEADER_LEN {
            return self.short(Short::Header(got));
        }
        let stored = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
        if masked_crc32c(&header[..8]) != stored {
            return Err(self.data_loss("corrupted record", offset, "length checksum mismatch"));
        }
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&header[..8]);
        let len = u64::from_le_bytes(len_bytes);

        // Grows with the data actually present, so a huge (but
        // checksum-valid) length in a damaged file cannot exhaust memory.
        let mut data = Vec::with_capacity(len.min(1 << 20) as usize);
        let read = self.source.reader().take(len).read_to_end(&mut data);
        if let Err(e) = read {
            return self.stream_error(e, offset);
        }
        if (data.len() as u64) < len {
            return self.short(Short::Body);
        }
        let mut footer = [0u8; FOOTER_LEN];
        let got = match self.read_full(&mut footer) {
            Ok(n) => n,
            Err(e) => return self.stream_error(e, offset),
        };
        if got < FOOTER_LEN {
            return self.short(Short::Body);
        }
        if masked_crc32c(&data) != u32::from_le_bytes(footer) {
            let data_offset = offset + HEADER_LEN as u64;
            return Err(self.data_loss("corrupted record", data_offset, "data checksum mismatch"));
        }
        self.offset = offset + (HEADER_LEN + FOOTER_LEN) as u64 + len;
        Ok(Some(data))
    }

    /// A read failure; a decompressor running out of input is a truncated
    /// stream, which a tailing reader tolerates.
    fn stream_error<T>(&mut self, err: io::Error, offset: u64) -> Result<Option<T>> {
        if err.kind() == io::ErrorKind::UnexpectedEof && self.options.tolerate_truncated_tail {
            self.failed = true;
            return Ok(None);
        }
        Err(self.read_error(err, offset))
    }

    /// Reads all remaining records.
    pub fn read_all(&mut self) -> Result<Vec<Vec<u8>>> {
        self.collect()
    }
}

impl Iterator for RecordReader {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.read_record() {
            Ok(Some(record)) => Some(Ok(record.data)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_payload_framing() {
        // From the format spec: the complete record of an empty payload.
        assert_eq!(
            encode_record(b""),
            [0, 0, 0, 0, 0, 0, 0, 0, 0x29, 0x03, 0x98, 0x07, 0xD8, 0xEA, 0x82, 0xA2]
        );
    }

    #[test]
    fn compression_names() {
        for c in [Compression::None, Compression::Zlib, Compression::Gzip] {
            assert_eq!(Compression::from_name(c.name()).unwrap(), c);
        }
        let err = Compression::from_name("LZ4").unwrap_err();
        assert_eq!(err.code(), Some(crate::Code::InvalidArgument));
    }

    #[test]
    fn in_memory_round_trip() {
        let payloads: Vec<Vec<u8>> = vec![b"".to_vec(), b"a".to_vec(), vec![7u8; 1000]];
        let mut bytes = Vec::new();
        for p in &payloads {
            write_record(&mut bytes, p).unwrap();
        }
        let mut reader =
            RecordReader::from_bytes("mem", bytes, Compression::None, ReadOptions::strict());
        let mut offsets = Vec::new();
        let mut got = Vec::new();
        while let Some(r) = reader.read_record().unwrap() {
            offsets.push(r.offset);
            got.push(r.data);
        }
        assert_eq!(got, payloads);
        assert_eq!(offsets, vec![0, 16, 33]);
        assert_eq!(reader.offset(), 33 + 1016);
    }
}
