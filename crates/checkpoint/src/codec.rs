//! How tensors are laid out in data files: TensorFlow's dtype numbers,
//! fixed-size elements as little-endian bytes, and the string encoding
//! (varint lengths, a masked CRC of the lengths, then the bytes).

use crate::crc::{crc32c_extend, crc32c_par, mask, unmask};
use crate::table::{get_varint, put_varint};
use ferroflow_tensor::{
    bail, bf16, ensure, f16, Complex32, Complex64, DType, Data, Error, Result, Shape, Tensor,
};
use std::borrow::Cow;
use std::io::Write;

#[cfg(target_endian = "big")]
compile_error!(
    "ferroflow-checkpoint reads and writes little-endian bundles on little-endian hosts only"
);

pub const DT_STRING: i32 = 7;

/// `(enum, DataType_Name, DataTypeString, element bytes)` for every dtype a
/// bundle can hold (`None`: variable size).
const DTYPES: &[(i32, &str, &str, Option<usize>)] = &[
    (1, "DT_FLOAT", "float", Some(4)),
    (2, "DT_DOUBLE", "double", Some(8)),
    (3, "DT_INT32", "int32", Some(4)),
    (4, "DT_UINT8", "uint8", Some(1)),
    (5, "DT_INT16", "int16", Some(2)),
    (6, "DT_INT8", "int8", Some(1)),
    (7, "DT_STRING", "string", None),
    (8, "DT_COMPLEX64", "complex64", Some(8)),
    (9, "DT_INT64", "int64", Some(8)),
    (10, "DT_BOOL", "bool", Some(1)),
    (11, "DT_QINT8", "qint8", Some(1)),
    (12, "DT_QUINT8", "quint8", Some(1)),
    (13, "DT_QINT32", "qint32", Some(4)),
    (14, "DT_BFLOAT16", "bfloat16", Some(2)),
    (15, "DT_QINT16", "qint16", Some(2)),
    (16, "DT_QUINT16", "quint16", Some(2)),
    (17, "DT_UINT16", "uint16", Some(2)),
    (18, "DT_COMPLEX128", "complex128", Some(16)),
    (19, "DT_HALF", "half", Some(2)),
    (20, "DT_RESOURCE", "resource", None),
    (21, "DT_VARIANT", "variant", None),
    (22, "DT_UINT32", "uint32", Some(4)),
    (23, "DT_UINT64", "uint64", Some(8)),
];

fn lookup(dtype: i32) -> Option<&'static (i32, &'static str, &'static str, Option<usize>)> {
    DTYPES.iter().find(|d| d.0 == dtype)
}

/// TensorFlow's `DataType_Name` (`DT_FLOAT`), as `debug_string` prints it.
pub fn dtype_enum_name(dtype: i32) -> Cow<'static, str> {
    match lookup(dtype) {
        Some(d) => Cow::Borrowed(d.1),
        None => Cow::Owned(format!("DT_UNKNOWN_{dtype}")),
    }
}

/// TensorFlow's `DataTypeString` (`float`, `double`, `half`), as its error
/// messages print dtypes.
pub fn dtype_string(dtype: i32) -> Cow<'static, str> {
    match lookup(dtype) {
        Some(d) => Cow::Borrowed(d.2),
        None => Cow::Owned(format!("unknown dtype {dtype}")),
    }
}

/// True for dtypes that can be stored in a bundle (not resources or variants).
pub fn is_storable(dtype: i32) -> bool {
    dtype == DT_STRING || element_size(dtype).is_some()
}

/// Bytes per element of a fixed-size dtype.
pub fn element_size(dtype: i32) -> Option<usize> {
    lookup(dtype).and_then(|d| d.3)
}

/// A tensor's stored elements, whatever its dtype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawData {
    /// Little-endian, row-major elements of a fixed-size dtype.
    Bytes(Vec<u8>),
    /// The elements of a string tensor.
    Strings(Vec<Vec<u8>>),
}

/// A tensor as stored, for any dtype TensorFlow writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawTensor {
    /// TensorFlow's `DataType` enum value.
    pub dtype: i32,
    pub shape: Vec<i64>,
    pub data: RawData,
}

impl RawTensor {
    /// The stored form of a ferroflow tensor.
    pub fn from_tensor(t: &Tensor) -> RawTensor {
        RawTensor {
            dtype: t.dtype().as_enum(),
            shape: t.shape().to_i64(),
            data: match t.data() {
                Data::Str(v) => RawData::Strings(v.to_vec()),
                _ => RawData::Bytes(tensor_bytes(t).expect("fixed-size dtype").to_vec()),
            },
        }
    }

    /// As a ferroflow tensor (`UnimplementedError` for dtypes ferroflow
    /// tensors do not have).
    pub fn into_tensor(self, name: &str) -> Result<Tensor> {
        to_tensor(name, "", self)
    }
}

/// The stored bytes of a fixed-size tensor (no copy), or `None` for strings.
pub fn tensor_bytes(t: &Tensor) -> Option<&[u8]> {
    t.data().as_bytes()
}

/// Copies little-endian bytes into a vector of `T` (any bit pattern valid).
fn from_bytes<T: Copy + Default>(bytes: &[u8]) -> Vec<T> {
    let n = bytes.len() / std::mem::size_of::<T>();
    let mut v = vec![T::default(); n];
    // SAFETY: `v` holds exactly `n * size_of::<T>()` bytes, every bit
    // pattern is a valid T for the types used here, and the buffers do not
    // overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            v.as_mut_ptr() as *mut u8,
            n * std::mem::size_of::<T>(),
        );
    }
    v
}

/// Tensors of at least this many bytes are checked and copied in one pass.
const FUSED_MIN_BYTES: usize = 4 << 20;

/// The elements of `bytes` in a fresh (huge-page-advised) buffer, with the
/// CRC-32C of `bytes` computed on the way: each thread copies a contiguous
/// part in 1 MiB blocks, checksumming each block while it sits in the cache
/// for its copy, so the stored data is read from memory once. The buffer is
/// not zeroed first: every byte of it is written by the copy.
fn copy_and_crc<T: Copy + Default + Send + Sync>(bytes: &[u8]) -> (Vec<T>, u32) {
    use rayon::prelude::*;
    use std::mem::MaybeUninit;
    const BLOCK: usize = 1 << 20;
    let size = std::mem::size_of::<T>();
    let n = bytes.len() / size;
    let src = &bytes[..n * size];
    let mut v: Vec<MaybeUninit<T>> = Vec::with_capacity(n);
    // SAFETY: `MaybeUninit` elements need no initialisation.
    unsafe { v.set_len(n) };
    ferroflow_tensor::kernels::parallel::advise_huge_pages(&v);
    // SAFETY: the same allocation viewed as (uninitialised) bytes.
    let dst =
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut MaybeUninit<u8>, n * size) };
    // A few parts per thread balance the load; each part's CRC runs over
    // its blocks in order, so only the parts' CRCs need combining.
    let threads = ferroflow_tensor::team::threads();
    let parts = threads * 4;
    let part_len = src.len().div_ceil(parts).next_multiple_of(BLOCK).max(BLOCK);
    let part = |(d, s): (&mut [MaybeUninit<u8>], &[u8])| {
        let mut crc = 0;
        for (db, sb) in d.chunks_mut(BLOCK).zip(s.chunks(BLOCK)) {
            crc = crc32c::crc32c_append(crc, sb);
            // SAFETY: `db` and `sb` have the same length and do not
            // overlap (one is a fresh allocation).
            unsafe {
                std::ptr::copy_nonoverlapping(sb.as_ptr(), db.as_mut_ptr() as *mut u8, sb.len())
            };
        }
        (crc, s.len())
    };
    let crcs: Vec<(u32, usize)> = if threads > 1 {
        dst.par_chunks_mut(part_len)
            .zip(src.par_chunks(part_len))
            .map(part)
            .collect()
    } else {
        dst.chunks_mut(part_len)
            .zip(src.chunks(part_len))
            .map(part)
            .collect()
    };
    let crc = crcs.into_iter().fold(0u32, |acc, (crc, len)| {
        crc32c::crc32c_combine(acc, crc, len)
    });
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: every byte of the `n` elements was written above, and the
    // types used here accept any bit pattern; the allocation is handed over
    // with its length and capacity unchanged.
    let v = unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut T, n, v.capacity()) };
    (v, crc)
}

/// [`check_fixed`] and [`fixed_to_tensor`] in one: the tensor of the stored
/// bytes `b` if their checksum is `masked_crc`, else `DataLossError` naming
/// `what`. Large tensors are checked while they are copied (one pass over
/// the stored bytes instead of two).
pub fn checked_fixed_to_tensor(
    dtype: i32,
    shape: &[i64],
    b: &[u8],
    masked_crc: u32,
    what: &str,
) -> Result<Tensor> {
    let mismatch = |crc: u32| {
        Error::data_loss(format!(
            "{what}: checksum mismatch (stored {:#010x}, computed {crc:#010x})",
            unmask(masked_crc)
        ))
    };
    let fused = |d: DType| -> Option<(Data, u32)> {
        // Quantized tensors are stored as the integers of their width.
        Some(match d.storage() {
            DType::Float32 => {
                let (v, crc) = copy_and_crc::<f32>(b);
                (Data::F32(v.into()), crc)
            }
            DType::Float64 => {
                let (v, crc) = copy_and_crc::<f64>(b);
                (Data::F64(v.into()), crc)
            }
            DType::Float16 => {
                let (v, crc) = copy_and_crc::<f16>(b);
                (Data::F16(v.into()), crc)
            }
            DType::BFloat16 => {
                let (v, crc) = copy_and_crc::<bf16>(b);
                (Data::BF16(v.into()), crc)
            }
            DType::Int8 => {
                let (v, crc) = copy_and_crc::<i8>(b);
                (Data::I8(v.into()), crc)
            }
            DType::Int16 => {
                let (v, crc) = copy_and_crc::<i16>(b);
                (Data::I16(v.into()), crc)
            }
            DType::Int32 => {
                let (v, crc) = copy_and_crc::<i32>(b);
                (Data::I32(v.into()), crc)
            }
            DType::Int64 => {
                let (v, crc) = copy_and_crc::<i64>(b);
                (Data::I64(v.into()), crc)
            }
            DType::UInt8 => {
                let (v, crc) = copy_and_crc::<u8>(b);
                (Data::U8(v.into()), crc)
            }
            DType::UInt16 => {
                let (v, crc) = copy_and_crc::<u16>(b);
                (Data::U16(v.into()), crc)
            }
            DType::UInt32 => {
                let (v, crc) = copy_and_crc::<u32>(b);
                (Data::U32(v.into()), crc)
            }
            DType::UInt64 => {
                let (v, crc) = copy_and_crc::<u64>(b);
                (Data::U64(v.into()), crc)
            }
            DType::Complex64 => {
                let (v, crc) = copy_and_crc::<Complex32>(b);
                (Data::C64(v.into()), crc)
            }
            DType::Complex128 => {
                let (v, crc) = copy_and_crc::<Complex64>(b);
                (Data::C128(v.into()), crc)
            }
            DType::Bool | DType::String | DType::Resource | DType::Variant => return None,
            DType::QInt8 | DType::QUInt8 | DType::QInt16 | DType::QUInt16 | DType::QInt32 => {
                return None
            }
        })
    };
    let dt = DType::from_enum(dtype);
    if b.len() >= FUSED_MIN_BYTES {
        if let Some((data, crc)) = dt.and_then(fused) {
            if crc != unmask(masked_crc) {
                return Err(mismatch(crc));
            }
            return Tensor::new(Shape::from_i64(shape)?, data);
        }
    }
    check_fixed(b, masked_crc, what)?;
    fixed_to_tensor(dtype, shape, b)
}

/// Builds a ferroflow tensor from stored data, or explains why it cannot.
pub fn to_tensor(name: &str, prefix: &str, raw: RawTensor) -> Result<Tensor> {
    let dtype = DType::from_enum(raw.dtype)
        .filter(|_| raw.dtype < 100)
        .ok_or_else(|| {
            let place = if prefix.is_empty() {
                String::new()
            } else {
                format!(" in checkpoint {prefix}")
            };
            Error::unimplemented(format!(
                "tensor '{name}'{place} has dtype {}, which ferroflow tensors cannot hold \
                 (BundleReader::read_raw returns its bytes)",
                dtype_string(raw.dtype)
            ))
        })?;
    match (dtype, raw.data) {
        (DType::String, RawData::Strings(v)) => {
            Tensor::new(Shape::from_i64(&raw.shape)?, Data::Str(v.into()))
        }
        (DType::String, RawData::Bytes(_)) | (_, RawData::Strings(_)) => Err(Error::internal(
            format!("tensor '{name}': stored data does not match dtype {dtype}"),
        )),
        (_, RawData::Bytes(b)) => fixed_to_tensor(raw.dtype, &raw.shape, &b),
    }
}

/// A tensor of a fixed-size ferroflow dtype from its stored bytes.
pub fn fixed_to_tensor(dtype: i32, shape: &[i64], b: &[u8]) -> Result<Tensor> {
    let shape = Shape::from_i64(shape)?;
    let data = match DType::from_enum(dtype) {
        Some(d) => match d.storage() {
            DType::Float32 => Data::F32(from_bytes::<f32>(b).into()),
            DType::Float64 => Data::F64(from_bytes::<f64>(b).into()),
            DType::Float16 => Data::F16(from_bytes::<f16>(b).into()),
            DType::BFloat16 => Data::BF16(from_bytes::<bf16>(b).into()),
            DType::Int8 => Data::I8(from_bytes::<i8>(b).into()),
            DType::Int16 => Data::I16(from_bytes::<i16>(b).into()),
            DType::Int32 => Data::I32(from_bytes::<i32>(b).into()),
            DType::Int64 => Data::I64(from_bytes::<i64>(b).into()),
            DType::UInt8 => Data::U8(b.to_vec().into()),
            DType::UInt16 => Data::U16(from_bytes::<u16>(b).into()),
            DType::UInt32 => Data::U32(from_bytes::<u32>(b).into()),
            DType::UInt64 => Data::U64(from_bytes::<u64>(b).into()),
            DType::Complex64 => Data::C64(from_bytes::<Complex32>(b).into()),
            DType::Complex128 => Data::C128(from_bytes::<Complex64>(b).into()),
            // Any non-zero byte is true (a bool byte other than 0/1 is not
            // something TensorFlow writes).
            DType::Bool => Data::Bool(b.iter().map(|&x| x != 0).collect::<Vec<_>>().into()),
            DType::String | DType::Resource | DType::Variant => {
                bail!(internal, "{d} tensors are not fixed-size")
            }
            // (`storage()` is never a quantized dtype.)
            DType::QInt8 | DType::QUInt8 | DType::QInt16 | DType::QUInt16 | DType::QInt32 => {
                bail!(internal, "{d} has no storage type")
            }
        },
        None => {
            bail!(
                unimplemented,
                "ferroflow tensors cannot hold dtype {}",
                dtype_string(dtype)
            )
        }
    };
    Tensor::new(shape, data)
}

/// Writes a string tensor in TensorFlow's layout; returns `(size, masked crc)`.
pub fn write_strings(out: &mut impl Write, items: &[Vec<u8>]) -> std::io::Result<(u64, u32)> {
    let mut header = Vec::with_capacity(items.len() + 4);
    let mut len_crc = 0u32;
    for s in items {
        put_varint(&mut header, s.len() as u64);
        len_crc = match u32::try_from(s.len()) {
            Ok(n) => crc32c_extend(len_crc, &n.to_le_bytes()),
            Err(_) => crc32c_extend(len_crc, &(s.len() as u64).to_le_bytes()),
        };
    }
    let stored = mask(len_crc).to_le_bytes();
    header.extend_from_slice(&stored);
    let mut crc = crc32c_extend(len_crc, &stored);
    out.write_all(&header)?;
    let mut size = header.len() as u64;
    for s in items {
        crc = crc32c_extend(crc, s);
        out.write_all(s)?;
        size += s.len() as u64;
    }
    Ok((size, mask(crc)))
}

/// Decodes and verifies a stored string tensor of `n` elements.
/// `what` names the tensor and file in errors.
pub fn read_strings(bytes: &[u8], n: usize, masked_crc: u32, what: &str) -> Result<Vec<Vec<u8>>> {
    if n > bytes.len() {
        bail!(
            data_loss,
            "{what}: {} bytes cannot hold {n} string lengths",
            bytes.len()
        );
    }
    let mut pos = 0;
    let mut lens = Vec::with_capacity(n);
    let mut len_crc = 0u32;
    let mut total = 0usize;
    for _ in 0..n {
        let len = get_varint(bytes, &mut pos, 10)
            .and_then(|l| usize::try_from(l).ok())
            .filter(|&l| l <= bytes.len())
            .ok_or_else(|| Error::data_loss(format!("{what}: bad string length")))?;
        len_crc = match u32::try_from(len) {
            Ok(l) => crc32c_extend(len_crc, &l.to_le_bytes()),
            Err(_) => crc32c_extend(len_crc, &(len as u64).to_le_bytes()),
        };
        total = total.saturating_add(len);
        lens.push(len);
    }
    let Some(stored) = bytes.get(pos..pos + 4) else {
        bail!(data_loss, "{what}: truncated string tensor");
    };
    let stored_crc = u32::from_le_bytes(stored.try_into().expect("4 bytes"));
    ensure!(
        unmask(stored_crc) == len_crc,
        data_loss,
        "{what}: the checksum of the string lengths does not match"
    );
    pos += 4;
    ensure!(
        bytes.len() - pos == total,
        data_loss,
        "{what}: string tensor holds {} bytes of text, its lengths add up to {total}",
        bytes.len() - pos
    );
    let crc = crc32c_extend(crc32c_extend(len_crc, stored), &bytes[pos..]);
    ensure!(
        crc == unmask(masked_crc),
        data_loss,
        "{what}: checksum mismatch (stored {:#010x}, computed {:#010x})",
        unmask(masked_crc),
        crc
    );
    let mut out = Vec::with_capacity(n);
    for len in lens {
        out.push(bytes[pos..pos + len].to_vec());
        pos += len;
    }
    Ok(out)
}

/// Verifies a fixed-size tensor's bytes against its masked CRC.
pub fn check_fixed(bytes: &[u8], masked_crc: u32, what: &str) -> Result<()> {
    let crc = crc32c_par(bytes);
    ensure!(
        crc == unmask(masked_crc),
        data_loss,
        "{what}: checksum mismatch (stored {:#010x}, computed {crc:#010x})",
        unmask(masked_crc)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_check_and_copy_matches_the_two_pass_path() {
        // Above and below the fused threshold, sizes that are not a whole
        // number of 1 MiB blocks, every fixed-size dtype ferroflow holds.
        let lens = [
            1000usize,
            FUSED_MIN_BYTES,
            FUSED_MIN_BYTES + 8 * 1024 + 8,
            3 * FUSED_MIN_BYTES / 2 + 24,
            // Parts of several 1 MiB blocks each.
            9 * FUSED_MIN_BYTES / 4 + 40,
        ];
        for &len in &lens {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 131 + i / 7) as u8).collect();
            let masked = mask(crc32c::crc32c(&bytes));
            for dtype in [1, 2, 3, 4, 5, 6, 9, 10, 14, 17, 19] {
                let elem = element_size(dtype).unwrap();
                let b = &bytes[..len / elem * elem];
                let masked = if b.len() == len {
                    masked
                } else {
                    mask(crc32c::crc32c(b))
                };
                let shape = [(b.len() / elem) as i64];
                let fused = checked_fixed_to_tensor(dtype, &shape, b, masked, "t").unwrap();
                let plain = fixed_to_tensor(dtype, &shape, b).unwrap();
                assert_eq!(
                    RawTensor::from_tensor(&fused),
                    RawTensor::from_tensor(&plain),
                    "dtype {dtype}, {len} bytes"
                );
                // One flipped bit anywhere (here: in the last block) is caught.
                let mut bad = b.to_vec();
                let at = bad.len() - 3;
                bad[at] ^= 0x10;
                let err = checked_fixed_to_tensor(dtype, &shape, &bad, masked, "tensor 'w' in f")
                    .unwrap_err();
                assert_eq!(err.code(), Some(ferroflow_tensor::Code::DataLoss));
                assert!(
                    err.message()
                        .starts_with("tensor 'w' in f: checksum mismatch"),
                    "{}",
                    err.message()
                );
            }
        }
    }

    #[test]
    fn string_layout_matches_the_spec() {
        let items = vec![b"hi".to_vec(), Vec::new(), vec![b'x'; 200]];
        let mut out = Vec::new();
        let (size, crc) = write_strings(&mut out, &items).unwrap();
        assert_eq!(size, 210);
        assert_eq!(&out[..3], &[0x02, 0x00, 0xc8]);
        assert_eq!(&out[4..8], &[0x5b, 0x78, 0x89, 0x72]);
        assert_eq!(read_strings(&out, 3, crc, "t").unwrap(), items);

        let mut out = Vec::new();
        write_strings(&mut out, &[b"hello".to_vec()]).unwrap();
        assert_eq!(&out[..5], &[0x05, 0xd9, 0xc6, 0x9c, 0x43]);

        let mut out = Vec::new();
        let (size, crc) = write_strings(&mut out, &[]).unwrap();
        assert_eq!((size, &out[..]), (4, &[0xd8, 0xea, 0x82, 0xa2][..]));
        assert_eq!(
            read_strings(&out, 0, crc, "t").unwrap(),
            Vec::<Vec<u8>>::new()
        );
    }

    #[test]
    fn corrupt_strings_are_data_loss() {
        let items = vec![b"abc".to_vec(), b"de".to_vec()];
        let mut out = Vec::new();
        let (_, crc) = write_strings(&mut out, &items).unwrap();
        for i in 0..out.len() {
            for bit in 0..8 {
                let mut bad = out.clone();
                bad[i] ^= 1 << bit;
                let e = read_strings(&bad, 2, crc, "t").unwrap_err();
                assert_eq!(e.code(), Some(ferroflow_tensor::Code::DataLoss));
            }
        }
        assert!(read_strings(&out[..out.len() - 1], 2, crc, "t").is_err());
        assert!(read_strings(&out, 2, crc ^ 1, "t").is_err());
    }

    #[test]
    fn names() {
        assert_eq!(dtype_enum_name(19), "DT_HALF");
        assert_eq!(dtype_string(1), "float");
        assert_eq!(element_size(8), Some(8));
        assert_eq!(element_size(7), None);
        assert!(!is_storable(20));
    }
}
