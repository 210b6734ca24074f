//! The frames tasks exchange.
//!
//! A frame is a little-endian `u32` header length, the header (a protobuf
//! [`Envelope`]: one request or reply, and the dtype, shape and byte length of
//! each tensor that follows), then every tensor's bytes in order. Numeric
//! tensors travel as their raw little-endian buffer, written from and read
//! into the tensor's own memory; string tensors as `u32` length-prefixed
//! elements. Tensors have no size limit beyond the receiver's allocation
//! check; headers are capped at [`MAX_HEADER_BYTES`].
//!
//! Everything read is validated: an unknown dtype, a shape whose byte size
//! overflows or disagrees with the length, a string element past the end, a
//! truncated stream: each gives a typed error (`DataLoss` for corrupt bytes,
//! `Unavailable` for a closed connection), never a panic.

use ferroflow_tensor::{bail, Complex32, Complex64, DType, Data, Error, Result, Shape, Tensor};
use prost::Message;
use std::io::{self, Read, Write};

/// Largest header accepted (a registered graph travels in one).
pub const MAX_HEADER_BYTES: usize = 512 << 20;

/// Largest header of a connection's first frame, the `Hello` read before the cluster token is
/// checked: an unauthenticated peer cannot make a task allocate more than this.
pub const MAX_HELLO_BYTES: usize = 64 << 10;

/// Version of this protocol, checked when a connection opens.
pub const PROTOCOL_VERSION: u32 = 1;

/// One request or reply and the tensors that follow it.
#[derive(Clone, PartialEq, Message)]
pub struct Envelope {
    #[prost(oneof = "Body", tags = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10")]
    pub body: Option<Body>,
    #[prost(message, repeated, tag = "15")]
    pub tensors: Vec<TensorMeta>,
}

/// The requests and replies.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Body {
    /// Client → server, first on every connection.
    #[prost(message, tag = "1")]
    Hello(Hello),
    /// Server → client: the connection is accepted.
    #[prost(message, tag = "2")]
    Welcome(Welcome),
    /// Server → client: the request failed.
    #[prost(message, tag = "3")]
    Failure(Failure),
    #[prost(message, tag = "4")]
    RegisterGraph(RegisterGraph),
    #[prost(message, tag = "5")]
    Registered(Registered),
    /// Feeds follow, in the registered order; the reply carries the fetches.
    #[prost(message, tag = "6")]
    RunGraph(RunGraph),
    #[prost(message, tag = "7")]
    RanGraph(RanGraph),
    #[prost(message, tag = "8")]
    DeregisterGraph(DeregisterGraph),
    /// The chief's "training is done" (honoured by servers started to exit
    /// when the chief is done).
    #[prost(message, tag = "9")]
    Shutdown(Shutdown),
    #[prost(message, tag = "10")]
    Ack(Ack),
}

#[derive(Clone, PartialEq, Message)]
pub struct Hello {
    #[prost(uint32, tag = "1")]
    pub protocol_version: u32,
    /// The cluster token, empty when the server needs none.
    #[prost(bytes = "vec", tag = "2")]
    pub token: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Welcome {
    /// Random per server process: a changed value means the task restarted.
    #[prost(fixed64, tag = "1")]
    pub incarnation: u64,
    #[prost(string, tag = "2")]
    pub job: String,
    #[prost(uint32, tag = "3")]
    pub task: u32,
    /// The server's cluster, as JSON.
    #[prost(string, tag = "4")]
    pub cluster_json: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct Failure {
    /// TensorFlow's status code.
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct RegisterGraph {
    /// A serialized `GraphDef`.
    #[prost(bytes = "vec", tag = "1")]
    pub graph_def: Vec<u8>,
    /// Tensor names (`node:i`) fed on each run, in order.
    #[prost(string, repeated, tag = "2")]
    pub feeds: Vec<String>,
    /// Tensor names returned by each run, in order.
    #[prost(string, repeated, tag = "3")]
    pub fetches: Vec<String>,
    /// Node names run for their effects.
    #[prost(string, repeated, tag = "4")]
    pub targets: Vec<String>,
    /// The incarnation the client expects (0: any).
    #[prost(fixed64, tag = "5")]
    pub incarnation: u64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Registered {
    #[prost(uint64, tag = "1")]
    pub handle: u64,
}

#[derive(Clone, PartialEq, Message)]
pub struct RunGraph {
    #[prost(uint64, tag = "1")]
    pub handle: u64,
    #[prost(int64, tag = "2")]
    pub step_id: i64,
    /// Past this, waiting kernels fail with `DeadlineExceeded` (0: none).
    #[prost(int64, tag = "3")]
    pub timeout_ms: i64,
    #[prost(fixed64, tag = "4")]
    pub incarnation: u64,
}

#[derive(Clone, PartialEq, Message)]
pub struct RanGraph {}

#[derive(Clone, PartialEq, Message)]
pub struct DeregisterGraph {
    #[prost(uint64, tag = "1")]
    pub handle: u64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Shutdown {}

#[derive(Clone, PartialEq, Message)]
pub struct Ack {}

/// The dtype, shape and byte length of a tensor that follows the header.
#[derive(Clone, PartialEq, Message)]
pub struct TensorMeta {
    /// TensorFlow's `DataType` enum value.
    #[prost(int32, tag = "1")]
    pub dtype: i32,
    #[prost(int64, repeated, tag = "2")]
    pub dims: Vec<i64>,
    #[prost(uint64, tag = "3")]
    pub byte_len: u64,
}

impl Envelope {
    pub fn new(body: Body) -> Envelope {
        Envelope {
            body: Some(body),
            tensors: Vec::new(),
        }
    }

    /// A failure reply carrying `err`'s code and message.
    pub fn failure(err: &Error) -> Envelope {
        Envelope::new(Body::Failure(Failure {
            code: err.code().map_or(2, |c| c as i32),
            message: err.to_string(),
        }))
    }
}

impl Failure {
    /// Back into ferroflow's error (unknown codes become `Unknown`).
    pub fn into_error(self) -> Error {
        use ferroflow_tensor::Code;
        let code = [
            Code::Cancelled,
            Code::Unknown,
            Code::InvalidArgument,
            Code::DeadlineExceeded,
            Code::NotFound,
            Code::AlreadyExists,
            Code::PermissionDenied,
            Code::ResourceExhausted,
            Code::FailedPrecondition,
            Code::Aborted,
            Code::OutOfRange,
            Code::Unimplemented,
            Code::Internal,
            Code::Unavailable,
            Code::DataLoss,
            Code::Unauthenticated,
        ]
        .into_iter()
        .find(|c| *c as i32 == self.code)
        .unwrap_or(Code::Unknown);
        Error::Op {
            code,
            message: self.message,
            node: None,
        }
    }
}

/// Views a numeric buffer as writable bytes.
fn as_bytes_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: T is a plain numeric type without padding, and every bit
    // pattern is a valid T for the types used here (bool is read through u8
    // and checked separately); the length covers exactly v.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The raw bytes of a fixed-size tensor (its own buffer), `None` for strings.
fn raw_bytes(t: &Tensor) -> Option<&[u8]> {
    t.data().as_bytes()
}

/// The bytes a tensor travels as, when they are not its buffer.
fn packed_bytes(t: &Tensor) -> Vec<u8> {
    match t.data() {
        Data::Str(v) => {
            let mut out = Vec::with_capacity(v.iter().map(|s| s.len() + 4).sum());
            for s in v.iter() {
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s);
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Tensors at least this large are written straight from their buffers;
/// smaller ones are copied into the header's write.
const DIRECT_WRITE_BYTES: usize = 64 << 10;

/// Writes `env` followed by `tensors` (their metadata is filled in here).
pub fn write_frame(w: &mut impl Write, mut env: Envelope, tensors: &[Tensor]) -> io::Result<()> {
    let mut packed: Vec<Option<Vec<u8>>> = Vec::with_capacity(tensors.len());
    env.tensors.clear();
    for t in tensors {
        let p = raw_bytes(t).is_none().then(|| packed_bytes(t));
        let len = p
            .as_ref()
            .map_or_else(|| raw_bytes(t).map_or(0, <[u8]>::len), Vec::len);
        let dtype = match t.dtype() {
            // A handle has no bytes of its own here; strings stand in.
            DType::Resource | DType::Variant => DType::String,
            d => d,
        };
        env.tensors.push(TensorMeta {
            dtype: dtype.as_enum(),
            dims: t.dims().iter().map(|&d| d as i64).collect(),
            byte_len: len as u64,
        });
        packed.push(p);
    }
    let header = env.encode_to_vec();
    let mut buf = Vec::with_capacity(4 + header.len());
    buf.extend_from_slice(&(header.len() as u32).to_le_bytes());
    buf.extend_from_slice(&header);
    for (t, p) in tensors.iter().zip(&packed) {
        let bytes: &[u8] = match p {
            Some(p) => p,
            None => raw_bytes(t).unwrap_or(&[]),
        };
        if bytes.len() >= DIRECT_WRITE_BYTES {
            w.write_all(&buf)?;
            buf.clear();
            w.write_all(bytes)?;
        } else {
            buf.extend_from_slice(bytes);
        }
    }
    if !buf.is_empty() {
        w.write_all(&buf)?;
    }
    w.flush()
}

/// A stream error while reading: a closed or reset connection.
fn io_error(e: io::Error) -> Error {
    Error::unavailable(format!("connection lost while reading a frame: {e}"))
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::data_loss(format!("malformed frame: {what}"))
}

/// Reads one frame. `Ok(None)` when the peer closed the connection cleanly
/// before a new frame began.
pub fn read_frame(r: &mut impl Read) -> Result<Option<(Envelope, Vec<Tensor>)>> {
    read_frame_within(r, MAX_HEADER_BYTES, true)
}

/// Reads a connection's first frame, before its peer is authenticated: a header of at most
/// [`MAX_HELLO_BYTES`] and no tensors, so nothing large is allocated or read for a stranger.
pub fn read_hello_frame(r: &mut impl Read) -> Result<Option<Envelope>> {
    Ok(read_frame_within(r, MAX_HELLO_BYTES, false)?.map(|(env, _)| env))
}

fn read_frame_within(
    r: &mut impl Read,
    max_header: usize,
    tensors_allowed: bool,
) -> Result<Option<(Envelope, Vec<Tensor>)>> {
    let mut len = [0u8; 4];
    // The first byte tells a clean close (no frame) from a truncated one.
    match r.read(&mut len[..1]) {
        Ok(0) => return Ok(None),
        Ok(_) => {}
        Err(e) => return Err(io_error(e)),
    }
    r.read_exact(&mut len[1..]).map_err(io_error)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > max_header {
        return Err(corrupt(format!(
            "header of {len} bytes exceeds the limit of {max_header}"
        )));
    }
    let mut header = vec![0u8; len];
    r.read_exact(&mut header).map_err(io_error)?;
    let env = Envelope::decode(header.as_slice()).map_err(|e| corrupt(format!("header: {e}")))?;
    if !tensors_allowed && !env.tensors.is_empty() {
        return Err(corrupt(format!(
            "this frame may carry no tensors, it declares {}",
            env.tensors.len()
        )));
    }
    let mut tensors = Vec::with_capacity(env.tensors.len().min(1024));
    for (i, meta) in env.tensors.iter().enumerate() {
        tensors.push(read_tensor(r, meta).map_err(|e| match e.code() {
            Some(ferroflow_tensor::Code::DataLoss) => {
                corrupt(format!("tensor {i}: {}", e.message()))
            }
            _ => e,
        })?);
    }
    Ok(Some((env, tensors)))
}

fn read_tensor(r: &mut impl Read, meta: &TensorMeta) -> Result<Tensor> {
    let dtype = DType::from_enum(meta.dtype)
        .filter(|d| !matches!(d, DType::Resource | DType::Variant))
        .ok_or_else(|| corrupt(format!("unknown dtype {}", meta.dtype)))?;
    let mut dims = Vec::with_capacity(meta.dims.len());
    for &d in &meta.dims {
        dims.push(usize::try_from(d).map_err(|_| corrupt(format!("negative dimension {d}")))?);
    }
    let n = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| corrupt(format!("shape {dims:?} overflows")))?;
    let byte_len = usize::try_from(meta.byte_len).map_err(|_| corrupt("byte length overflows"))?;
    if let Some(size) = dtype.size() {
        if n.checked_mul(size) != Some(byte_len) {
            return Err(corrupt(format!(
                "{} {dims:?} needs {} bytes, the frame says {byte_len}",
                dtype.name(),
                n.saturating_mul(size)
            )));
        }
    }
    Tensor::check_allocation("a received tensor", dtype, &dims)?;
    /// Reads `n` elements of a plain numeric type (one that all-zero bytes
    /// are a valid value of: integers, floats, f16, bf16, complex).
    fn fill<T: Copy>(r: &mut impl Read, n: usize) -> Result<Vec<T>> {
        let mut v = zeroed_vec::<T>(n)?;
        r.read_exact(as_bytes_mut(&mut v)).map_err(io_error)?;
        Ok(v)
    }
    let data = match dtype {
        DType::Float32 => Data::F32(fill::<f32>(r, n)?.into()),
        DType::Float64 => Data::F64(fill::<f64>(r, n)?.into()),
        DType::Float16 => Data::F16(fill::<ferroflow_tensor::f16>(r, n)?.into()),
        DType::BFloat16 => Data::BF16(fill::<ferroflow_tensor::bf16>(r, n)?.into()),
        DType::Int8 => Data::I8(fill::<i8>(r, n)?.into()),
        DType::Int16 => Data::I16(fill::<i16>(r, n)?.into()),
        DType::Int32 => Data::I32(fill::<i32>(r, n)?.into()),
        DType::Int64 => Data::I64(fill::<i64>(r, n)?.into()),
        DType::UInt8 => Data::U8(fill::<u8>(r, n)?.into()),
        DType::UInt16 => Data::U16(fill::<u16>(r, n)?.into()),
        DType::UInt32 => Data::U32(fill::<u32>(r, n)?.into()),
        DType::UInt64 => Data::U64(fill::<u64>(r, n)?.into()),
        DType::Complex64 => Data::C64(fill::<Complex32>(r, n)?.into()),
        DType::Complex128 => Data::C128(fill::<Complex64>(r, n)?.into()),
        // Quantized tensors travel as their storage integers.
        DType::QInt8 => Data::I8(fill::<i8>(r, n)?.into()),
        DType::QUInt8 => Data::U8(fill::<u8>(r, n)?.into()),
        DType::QInt16 => Data::I16(fill::<i16>(r, n)?.into()),
        DType::QUInt16 => Data::U16(fill::<u16>(r, n)?.into()),
        DType::QInt32 => Data::I32(fill::<i32>(r, n)?.into()),
        DType::Bool => {
            let bytes = fill::<u8>(r, n)?;
            if let Some(b) = bytes.iter().find(|&&b| b > 1) {
                return Err(corrupt(format!("bool element with value {b}")));
            }
            Data::Bool(bytes.into_iter().map(|b| b == 1).collect::<Vec<_>>().into())
        }
        DType::String | DType::Resource | DType::Variant => {
            let mut bytes = Vec::new();
            r.by_ref()
                .take(byte_len as u64)
                .read_to_end(&mut bytes)
                .map_err(io_error)?;
            if bytes.len() != byte_len {
                return Err(io_error(io::ErrorKind::UnexpectedEof.into()));
            }
            Data::Str(split_strings(&bytes, n)?.into())
        }
    };
    Tensor::new(Shape::from(dims), data)
}

/// `n` elements of all-zero bytes, from zero-filled memory. Large blocks
/// come from the OS as untouched pages, so a frame that declares a big tensor
/// and sends few bytes costs only the pages its bytes fill. (With
/// `vec![T::default(); n]`, types other than the primitive ones, f16 and
/// complex among them, wrote every element first: a 38-byte frame, even a
/// connection's first one before any token check, declaring a complex128
/// tensor of 1.6 GB made the reader touch 1.6 GB before it found the stream
/// short.) Only for types that all-zero bytes are a valid value of.
fn zeroed_vec<T: Copy>(n: usize) -> Result<Vec<T>> {
    let layout = std::alloc::Layout::array::<T>(n)
        .map_err(|_| corrupt(format!("{n} elements overflow the address space")))?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a non-zero size. The block holds exactly `n`
    // values of `T` with `T`'s alignment, allocated by the global allocator
    // with `Layout::array::<T>(n)`, as `Vec::from_raw_parts` requires (length
    // and capacity `n`); its bytes are all zero, a valid `T` for every type
    // `fill` reads.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout).cast::<T>();
        if p.is_null() {
            bail!(
                resource_exhausted,
                "cannot allocate {} bytes for a received tensor",
                layout.size()
            );
        }
        Ok(Vec::from_raw_parts(p, n, n))
    }
}

/// `n` length-prefixed strings filling `bytes` exactly.
fn split_strings(bytes: &[u8], n: usize) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(n.min(bytes.len() / 4 + 1));
    let mut rest = bytes;
    for i in 0..n {
        let (len, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| corrupt(format!("string element {i} has no length")))?;
        let len = u32::from_le_bytes(*len) as usize;
        if len > tail.len() {
            return Err(corrupt(format!("string element {i} runs past the tensor")));
        }
        out.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    if !rest.is_empty() {
        return Err(corrupt(format!(
            "{} bytes after the last string",
            rest.len()
        )));
    }
    Ok(out)
}

/// Decodes a whole frame held in memory (the fuzz target's entry point).
pub fn decode_frame(bytes: &[u8]) -> Result<Option<(Envelope, Vec<Tensor>)>> {
    read_frame(&mut io::Cursor::new(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(tensors: &[Tensor]) -> Vec<Tensor> {
        let mut buf = Vec::new();
        let env = Envelope::new(Body::RunGraph(RunGraph {
            handle: 7,
            step_id: 3,
            timeout_ms: 0,
            incarnation: 9,
        }));
        write_frame(&mut buf, env.clone(), tensors).unwrap();
        let (got, out) = decode_frame(&buf).unwrap().unwrap();
        assert_eq!(got.body, env.body);
        out
    }

    #[test]
    fn every_dtype_round_trips() {
        let big: Vec<f32> = (0..100_000).map(|i| i as f32 * 0.5).collect();
        let ts = vec![
            Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap(),
            Tensor::from_vec([100_000], big).unwrap(),
            Tensor::from_vec([3], vec![1i64, -2, 3]).unwrap(),
            Tensor::from_vec([2], vec![true, false]).unwrap(),
            Tensor::from_vec([3], vec![b"ab".to_vec(), Vec::new(), b"xyz".to_vec()]).unwrap(),
            Tensor::scalar(5i32),
            Tensor::from_vec([0, 3], Vec::<f64>::new()).unwrap(),
            Tensor::from_vec([2], vec![u32::MAX, 7]).unwrap(),
            Tensor::from_vec([2], vec![u64::MAX, 1 << 63]).unwrap(),
        ];
        let out = round_trip(&ts);
        assert_eq!(out.len(), ts.len());
        for (a, b) in ts.iter().zip(&out) {
            assert_eq!(a.dtype(), b.dtype());
            assert_eq!(a.dims(), b.dims());
            assert_eq!(raw_bytes(a), raw_bytes(b));
            assert_eq!(packed_bytes(a), packed_bytes(b));
        }
    }

    #[test]
    fn corrupt_frames_are_typed_errors() {
        let mut buf = Vec::new();
        let t = Tensor::from_vec([2], vec![b"ab".to_vec(), b"c".to_vec()]).unwrap();
        write_frame(&mut buf, Envelope::new(Body::Ack(Ack {})), &[t]).unwrap();
        // Truncated anywhere: Unavailable (the stream ended) or DataLoss.
        for cut in 1..buf.len() {
            let e = decode_frame(&buf[..cut]).unwrap_err();
            assert!(
                matches!(
                    e.code(),
                    Some(ferroflow_tensor::Code::Unavailable | ferroflow_tensor::Code::DataLoss)
                ),
                "{cut}: {e}"
            );
        }
        assert!(decode_frame(&[]).unwrap().is_none());
        // A huge declared header.
        let e = decode_frame(&u32::MAX.to_le_bytes()).unwrap_err();
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::DataLoss));
        // A shape that disagrees with its byte length.
        let env = Envelope {
            body: Some(Body::Ack(Ack {})),
            tensors: vec![TensorMeta {
                dtype: DType::Float32.as_enum(),
                dims: vec![1 << 40, 1 << 40],
                byte_len: 4,
            }],
        };
        let header = env.encode_to_vec();
        let mut bad = (header.len() as u32).to_le_bytes().to_vec();
        bad.extend_from_slice(&header);
        bad.extend_from_slice(&[0; 4]);
        assert_eq!(
            decode_frame(&bad).unwrap_err().code(),
            Some(ferroflow_tensor::Code::DataLoss)
        );
    }
}
