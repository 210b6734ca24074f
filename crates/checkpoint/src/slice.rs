//! Tensor slices: the pieces of partitioned variables.
//!
//! * [`TensorSlice`]: one extent per dimension, parsed from TensorFlow's
//!   slice strings (`"0,4:-"`) and `shape_and_slice` specs (`"10 4 0,4:0,4"`).
//! * [`encode_slice_key`] / [`decode_slice_key`]: the index key of one stored
//!   slice (OrderedCode: `NumIncreasing(0) ‖ String(name) ‖ NumIncreasing(rank)
//!   ‖ (SignedNumIncreasing(start) ‖ SignedNumIncreasing(length))*`).
//! * [`copy_region`]: moves the overlap of two slices between row-major buffers.

use crate::proto::{extent::HasLength, Extent as ExtentProto, TensorSliceProto};
use ferroflow_tensor::{bail, ensure, Error, Result};
use std::fmt;

/// One dimension of a slice: `length == None` takes the whole dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    pub start: i64,
    pub length: Option<i64>,
}

impl Extent {
    pub const FULL: Extent = Extent {
        start: 0,
        length: None,
    };

    pub fn is_full(&self) -> bool {
        self.length.is_none() && self.start == 0
    }
}

/// Which part of a tensor a stored or requested slice covers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorSlice {
    extents: Vec<Extent>,
}

impl TensorSlice {
    /// The whole tensor of rank `rank`.
    pub fn full(rank: usize) -> TensorSlice {
        TensorSlice {
            extents: vec![Extent::FULL; rank],
        }
    }

    pub fn new(extents: Vec<Extent>) -> TensorSlice {
        TensorSlice { extents }
    }

    pub fn extents(&self) -> &[Extent] {
        &self.extents
    }

    pub fn rank(&self) -> usize {
        self.extents.len()
    }

    /// True if every extent takes its whole dimension.
    pub fn is_full(&self) -> bool {
        self.extents.iter().all(Extent::is_full)
    }

    /// Parses TensorFlow's slice string: `start,length` or `-` per
    /// dimension, joined by `:` (`"0,4:-"`). Empty pieces are skipped, as
    /// TensorFlow does.
    pub fn parse(spec: &str) -> Result<TensorSlice> {
        let mut extents = Vec::new();
        for item in spec.split(':').filter(|s| !s.is_empty()) {
            if item == "-" {
                extents.push(Extent::FULL);
                continue;
            }
            let parts: Vec<&str> = item.split(',').filter(|s| !s.is_empty()).collect();
            let nums: Option<Vec<i64>> = parts.iter().map(|p| p.parse().ok()).collect();
            let (s, l) = match nums.as_deref() {
                Some(&[s, l]) => (s, l),
                _ => {
                    bail!(
                        invalid_argument,
                        "Expected a pair of numbers or '-' but got '{item}': string = {spec}"
                    )
                }
            };
            if s < 0 || l <= 0 {
                bail!(
                    invalid_argument,
                    "Expected non-negative start and positive length but got start = {s}, \
                     length = {l}: string = {spec}"
                );
            }
            extents.push(Extent {
                start: s,
                length: Some(l),
            });
        }
        Ok(TensorSlice { extents })
    }

    /// The slice as TensorFlow stores it in a `BundleEntryProto`.
    pub fn to_proto(&self) -> TensorSliceProto {
        TensorSliceProto {
            extent: self
                .extents
                .iter()
                .map(|e| {
                    if e.is_full() {
                        ExtentProto::default()
                    } else {
                        ExtentProto {
                            start: e.start,
                            has_length: Some(HasLength::Length(e.length.unwrap_or(-1))),
                        }
                    }
                })
                .collect(),
        }
    }

    /// Reads a stored slice (as TensorFlow's `TensorSlice(proto)` does: a
    /// missing length is a full extent).
    pub fn from_proto(p: &TensorSliceProto) -> TensorSlice {
        TensorSlice {
            extents: p
                .extent
                .iter()
                .map(|e| Extent {
                    start: e.start,
                    length: e.has_length.map(|HasLength::Length(l)| l),
                })
                .collect(),
        }
    }

    /// The slice's own shape within a tensor of `full_shape`, checking that
    /// it fits (TensorFlow's `SliceTensorShape`).
    pub fn slice_shape(&self, full_shape: &[i64]) -> Result<Vec<i64>> {
        ensure!(
            self.rank() == full_shape.len(),
            invalid_argument,
            "Mismatching ranks: shape = [{}], slice = {self}",
            join(full_shape)
        );
        self.extents
            .iter()
            .zip(full_shape)
            .enumerate()
            .map(|(d, (e, &dim))| match e.length {
                None => Ok(dim),
                Some(l) => {
                    let end = e.start.checked_add(l);
                    if e.start >= 0 && l >= 0 && end.is_some_and(|end| end <= dim) {
                        Ok(l)
                    } else {
                        Err(Error::invalid_argument(format!(
                            "Extent in dimension {d} out of bounds: shape = [{}], slice = {self}",
                            join(full_shape)
                        )))
                    }
                }
            })
            .collect()
    }

    /// Concrete `(start, length)` per dimension within `full_shape`
    /// (assumes [`TensorSlice::slice_shape`] succeeded).
    pub fn bounds(&self, full_shape: &[i64]) -> Vec<(i64, i64)> {
        self.extents
            .iter()
            .zip(full_shape)
            .map(|(e, &dim)| match e.length {
                None => (0, dim),
                Some(l) => (e.start, l),
            })
            .collect()
    }
}

fn join(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// TensorFlow's `TensorSlice::DebugString`: `0,4:-`.
impl fmt::Display for TensorSlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.extents.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            match e.length {
                Some(l) if !e.is_full() => write!(f, "{},{l}", e.start)?,
                _ => f.write_str("-")?,
            }
        }
        Ok(())
    }
}

/// A parsed `shape_and_slice` attribute: `"dim0 dim1 ... <slice>"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeAndSlice {
    pub full_shape: Vec<i64>,
    pub slice: TensorSlice,
    /// The shape of the slice itself.
    pub slice_shape: Vec<i64>,
}

/// Parses a non-empty `shape_and_slice` string (TensorFlow's
/// `ParseShapeAndSlice`).
pub fn parse_shape_and_slice(spec: &str) -> Result<ShapeAndSlice> {
    let splits: Vec<&str> = spec.split(' ').collect();
    if splits.len() < 2 {
        bail!(
            invalid_argument,
            "Need least two elements in shape_and_slice specification: {spec}"
        );
    }
    let slice = TensorSlice::parse(splits[splits.len() - 1])?;
    let full_shape = splits[..splits.len() - 1]
        .iter()
        .map(|s| {
            s.parse::<i64>().ok().filter(|&d| d >= 0).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "Non numerical dimension in shape_and_slice: {spec}"
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let slice_shape = slice.slice_shape(&full_shape)?;
    Ok(ShapeAndSlice {
        full_shape,
        slice,
        slice_shape,
    })
}

// ---------------------------------------------------------------- OrderedCode

fn write_num_increasing(out: &mut Vec<u8>, v: u64) {
    let bytes = v.to_be_bytes();
    let n = 8 - (v.leading_zeros() / 8) as usize;
    out.push(n as u8);
    out.extend_from_slice(&bytes[8 - n..]);
}

fn read_num_increasing(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let n = *buf.get(*pos)? as usize;
    if n > 8 || *pos + 1 + n > buf.len() {
        return None;
    }
    let mut v = 0u64;
    for &b in &buf[*pos + 1..*pos + 1 + n] {
        v = v << 8 | u64::from(b);
    }
    *pos += 1 + n;
    Some(v)
}

fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    for &b in s {
        match b {
            0x00 => out.extend_from_slice(&[0x00, 0xff]),
            0xff => out.extend_from_slice(&[0xff, 0x00]),
            _ => out.push(b),
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

fn read_string(buf: &[u8], pos: &mut usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let b = *buf.get(*pos)?;
        match b {
            0x00 => match *buf.get(*pos + 1)? {
                0x01 => {
                    *pos += 2;
                    return Some(out);
                }
                0xff => out.push(0x00),
                _ => return None,
            },
            0xff => match *buf.get(*pos + 1)? {
                0x00 => out.push(0xff),
                _ => return None,
            },
            _ => {
                out.push(b);
                *pos += 1;
                continue;
            }
        }
        *pos += 2;
    }
}

/// Header bits of the first and second byte for each encoded length.
const LEN_HEADER_1: [u8; 11] = [
    0, 0x80, 0xc0, 0xe0, 0xf0, 0xf8, 0xfc, 0xfe, 0xff, 0xff, 0xff,
];
const LEN_HEADER_2: [u8; 11] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0xc0];

fn write_signed_num_increasing(out: &mut Vec<u8>, v: i64) {
    let x = if v < 0 { !(v as u64) } else { v as u64 };
    let bits = 64 - x.leading_zeros() as usize;
    let len = (1..=10).find(|&l| bits < 7 * l).unwrap_or(10);
    let mut buf = [if v < 0 { 0xffu8 } else { 0 }; 10];
    buf[2..].copy_from_slice(&v.to_be_bytes());
    let mut enc = buf[10 - len..].to_vec();
    enc[0] ^= LEN_HEADER_1[len];
    if len > 1 {
        enc[1] ^= LEN_HEADER_2[len];
    }
    out.extend_from_slice(&enc);
}

fn read_signed_num_increasing(buf: &[u8], pos: &mut usize) -> Option<i64> {
    let first = *buf.get(*pos)?;
    let negative = first & 0x80 == 0;
    let inv = |b: u8| if negative { !b } else { b };
    // Leading ones after the sign bit (continuing into the second byte)
    // give the length.
    let b0 = inv(first);
    let mut len = (b0 << 1).leading_ones() as usize + 1;
    if len == 8 {
        let b1 = inv(*buf.get(*pos + 1)?);
        len += b1.leading_ones() as usize;
        if len > 10 {
            return None;
        }
    }
    if *pos + len > buf.len() {
        return None;
    }
    let mut bytes = [if negative { 0xffu8 } else { 0 }; 10];
    bytes[10 - len..].copy_from_slice(&buf[*pos..*pos + len]);
    bytes[10 - len] ^= LEN_HEADER_1[len];
    if len > 1 {
        bytes[11 - len] ^= LEN_HEADER_2[len];
    }
    let v = i64::from_be_bytes(bytes[2..].try_into().expect("8 bytes"));
    // Canonical form only (this also rejects values beyond i64): re-encoding
    // must give the same bytes.
    let mut check = Vec::with_capacity(len);
    write_signed_num_increasing(&mut check, v);
    let ok = check == buf[*pos..*pos + len];
    *pos += len;
    ok.then_some(v)
}

/// The index key of one stored slice of `name`.
pub fn encode_slice_key(name: &[u8], slice: &TensorSlice) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 8 + 4 * slice.rank());
    write_num_increasing(&mut out, 0);
    write_string(&mut out, name);
    write_num_increasing(&mut out, slice.rank() as u64);
    for e in &slice.extents {
        let (start, length) = match e.length {
            Some(l) if !e.is_full() => (e.start, l),
            _ => (0, -1),
        };
        write_signed_num_increasing(&mut out, start);
        write_signed_num_increasing(&mut out, length);
    }
    out
}

/// The tensor name and slice of a slice key, or `None` if `key` is not one.
pub fn decode_slice_key(key: &[u8]) -> Option<(Vec<u8>, TensorSlice)> {
    let mut pos = 0;
    if read_num_increasing(key, &mut pos)? != 0 {
        return None;
    }
    let name = read_string(key, &mut pos)?;
    let rank = read_num_increasing(key, &mut pos)?;
    if rank > key.len() as u64 {
        return None;
    }
    let mut extents = Vec::with_capacity(rank as usize);
    for _ in 0..rank {
        let start = read_signed_num_increasing(key, &mut pos)?;
        let length = read_signed_num_increasing(key, &mut pos)?;
        extents.push(if length == -1 {
            Extent {
                start,
                length: None,
            }
        } else {
            Extent {
                start,
                length: Some(length),
            }
        });
    }
    (pos == key.len()).then_some((name, TensorSlice { extents }))
}

// ------------------------------------------------------------------- copying

/// Copies the elements of the region `region` (full-tensor coordinates:
/// `(start, length)` per dimension) from `src`, a row-major block holding
/// `src_bounds` of the full tensor, into `dst`, a block holding `dst_bounds`.
/// The region must lie inside both.
pub fn copy_region<T: Clone>(
    src: &[T],
    src_bounds: &[(i64, i64)],
    dst: &mut [T],
    dst_bounds: &[(i64, i64)],
    region: &[(i64, i64)],
) {
    let rank = region.len();
    if region.iter().any(|&(_, l)| l == 0) {
        return;
    }
    if rank == 0 {
        dst[0] = src[0].clone();
        return;
    }
    let strides = |b: &[(i64, i64)]| {
        let mut s = vec![1usize; rank];
        for d in (0..rank - 1).rev() {
            s[d] = s[d + 1] * b[d + 1].1 as usize;
        }
        s
    };
    let (ss, ds) = (strides(src_bounds), strides(dst_bounds));
    let run = region[rank - 1].1 as usize;
    let mut idx = vec![0i64; rank - 1];
    loop {
        let mut so = 0usize;
        let mut doff = 0usize;
        for d in 0..rank {
            let at = region[d].0 + if d < rank - 1 { idx[d] } else { 0 };
            so += (at - src_bounds[d].0) as usize * ss[d];
            doff += (at - dst_bounds[d].0) as usize * ds[d];
        }
        dst[doff..doff + run].clone_from_slice(&src[so..so + run]);
        // Odometer over the outer dimensions.
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < region[d].1 {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// The overlap of two concrete bounds, or `None` if they are disjoint.
pub fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> Option<Vec<(i64, i64)>> {
    a.iter()
        .zip(b)
        .map(|(&(s1, l1), &(s2, l2))| {
            let start = s1.max(s2);
            let end = (s1 + l1).min(s2 + l2);
            (end > start).then_some((start, end - start))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        write_signed_num_increasing(&mut out, v);
        out
    }

    #[test]
    fn signed_num_increasing_examples() {
        assert_eq!(signed(0), [0x80]);
        assert_eq!(signed(2), [0x82]);
        assert_eq!(signed(1), [0x81]);
        assert_eq!(signed(-1), [0x7f]);
        assert_eq!(signed(0x424242), [0xf0, 0x42, 0x42, 0x42]);
        assert_eq!(signed(-0x800), [0x38, 0x00]);
        for v in [
            0i64,
            1,
            -1,
            63,
            64,
            -64,
            -65,
            8191,
            8192,
            1 << 40,
            -(1 << 40),
            i64::MAX,
            i64::MIN,
            i64::MAX - 1,
            i64::MIN + 1,
        ] {
            let enc = signed(v);
            let mut pos = 0;
            assert_eq!(read_signed_num_increasing(&enc, &mut pos), Some(v), "{v}");
            assert_eq!(pos, enc.len());
        }
        // Order is preserved bytewise.
        let vals = [i64::MIN, -70000, -65, -1, 0, 1, 63, 64, 70000, i64::MAX];
        for w in vals.windows(2) {
            assert!(signed(w[0]) < signed(w[1]), "{} {}", w[0], w[1]);
        }
    }

    #[test]
    fn slice_keys_match_the_spec() {
        let s = TensorSlice::parse("0,2:0,2").unwrap();
        let key = encode_slice_key(b"part/w", &s);
        let mut want = vec![0x00];
        want.extend_from_slice(b"part/w\x00\x01");
        want.extend_from_slice(&[0x01, 0x02, 0x80, 0x82, 0x80, 0x82]);
        assert_eq!(key, want);
        assert_eq!(decode_slice_key(&key), Some((b"part/w".to_vec(), s)));
        let full = TensorSlice::parse("2,2:-").unwrap();
        let key = encode_slice_key(b"a\x00\xffb", &full);
        assert!(key.ends_with(&[0x82, 0x82, 0x80, 0x7f]));
        assert_eq!(decode_slice_key(&key), Some((b"a\x00\xffb".to_vec(), full)));
        assert_eq!(decode_slice_key(b"plain"), None);
    }

    #[test]
    fn parsing_and_shapes() {
        let p = parse_shape_and_slice("10 4 4,3:0,4").unwrap();
        assert_eq!(p.full_shape, vec![10, 4]);
        assert_eq!(p.slice_shape, vec![3, 4]);
        assert_eq!(p.slice.to_string(), "4,3:0,4");
        let p = parse_shape_and_slice("4 3 2,2:-").unwrap();
        assert_eq!(p.slice_shape, vec![2, 3]);
        assert_eq!(p.slice.to_proto().extent[1], ExtentProto::default());
        assert!(parse_shape_and_slice("10 4 8,3:0,4").is_err());
        assert!(parse_shape_and_slice("10 4 0,3").is_err());
        assert!(parse_shape_and_slice("0,3").is_err());
        assert!(parse_shape_and_slice("x 0,3").is_err());
        assert!(TensorSlice::parse("0,0").is_err());
        assert!(TensorSlice::parse("1").is_err());
    }

    #[test]
    fn copying_regions() {
        // Full 4x3 tensor 0..12; copy rows 1..3 into a [2,3] block.
        let full: Vec<i32> = (0..12).collect();
        let mut dst = vec![0; 6];
        copy_region(
            &full,
            &[(0, 4), (0, 3)],
            &mut dst,
            &[(1, 2), (0, 3)],
            &[(1, 2), (0, 3)],
        );
        assert_eq!(dst, [3, 4, 5, 6, 7, 8]);
        // Column 1..3 of rows 2..4 back into a full buffer.
        let mut back = vec![-1; 12];
        let block = vec![10, 11, 12, 13];
        copy_region(
            &block,
            &[(2, 2), (1, 2)],
            &mut back,
            &[(0, 4), (0, 3)],
            &[(2, 2), (1, 2)],
        );
        assert_eq!(back, [-1, -1, -1, -1, -1, -1, -1, 10, 11, -1, 12, 13]);
        assert_eq!(
            intersect(&[(0, 4), (0, 3)], &[(2, 5), (1, 1)]),
            Some(vec![(2, 2), (1, 1)])
        );
        assert_eq!(intersect(&[(0, 2)], &[(2, 2)]), None);
    }
}
