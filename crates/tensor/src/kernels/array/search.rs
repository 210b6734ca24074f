//! Elements chosen by their values: `Unique`, `Where`, `TopKV2` and
//! `InTopKV2`.

use super::gather;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::scalar::Scalar;
use crate::tensor::{Data, Element, Tensor};

/// TensorFlow's `Unique`: the distinct elements of the vector `x` in order
/// of first appearance, and for every element of `x` the position of its
/// value among them (as `out_idx`, int32 or int64). Floats compare by value
/// (`-0.0` equals `0.0`; every NaN is distinct, as NaN != NaN).
pub fn unique(x: &Tensor, out_idx: DType) -> Result<(Tensor, Tensor)> {
    if x.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "unique expects a 1D vector, got a tensor of shape {}",
            x.shape()
        )));
    }
    /// What decides equality: the value for integers and bools, the bits
    /// of the value for floats (no key for NaN), the bytes for strings.
    #[derive(Hash, PartialEq, Eq)]
    enum Key<'a> {
        Int(i64),
        Bits(u64),
        Bytes(&'a [u8]),
    }
    let (firsts, idx) = match x.data() {
        // Integer ids (embedding lookups): a hash of the value alone, with
        // room reserved up front; SipHash over the general key made this
        // most of an embedding step's Unique.
        Data::I32(_) | Data::I64(_) | Data::I8(_) | Data::I16(_) | Data::U8(_) | Data::U16(_) => {
            unique_ints(&x.to_i64_vec()?)
        }
        _ => {
            let keys: Vec<Option<Key<'_>>> = match x.data() {
                Data::Str(v) => v.iter().map(|b| Some(Key::Bytes(b))).collect(),
                Data::F32(_) | Data::F64(_) | Data::F16(_) | Data::BF16(_) => x
                    .to_f64_vec()?
                    .into_iter()
                    .map(|f| (!f.is_nan()).then(|| Key::Bits((f + 0.0).to_bits())))
                    .collect(),
                Data::Bool(v) => v.iter().map(|&b| Some(Key::Int(b as i64))).collect(),
                _ => x
                    .to_i64_vec()?
                    .into_iter()
                    .map(|i| Some(Key::Int(i)))
                    .collect(),
            };
            let mut seen: std::collections::HashMap<Key<'_>, i64> =
                std::collections::HashMap::new();
            let mut firsts: Vec<i64> = Vec::new();
            let mut idx: Vec<i64> = Vec::with_capacity(keys.len());
            for (i, key) in keys.into_iter().enumerate() {
                let mut fresh = || {
                    firsts.push(i as i64);
                    firsts.len() as i64 - 1
                };
                idx.push(match key {
                    Some(k) => *seen.entry(k).or_insert_with(fresh),
                    None => fresh(),
                });
            }
            (firsts, idx)
        }
    };
    let y = gather(x, &Tensor::vector(firsts), 0, 0)?;
    let idx = match out_idx {
        DType::Int32 => Tensor::vector(idx.into_iter().map(|i| i as i32).collect::<Vec<_>>()),
        DType::Int64 => Tensor::vector(idx),
        d => {
            return Err(Error::invalid_argument(format!(
                "unique: out_idx must be int32 or int64, got {d}"
            )))
        }
    };
    Ok((y, idx))
}

/// Hashes an integer key in one multiply (the 128-bit product folded), for
/// maps keyed by ids: SipHash's flooding resistance buys nothing there.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        let p = u128::from(v ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }

    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
}

/// `Unique` of integers: the index of each value's first occurrence, in
/// order, and each element's position among them.
fn unique_ints(v: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut seen: std::collections::HashMap<i64, i64, std::hash::BuildHasherDefault<IdHasher>> =
        std::collections::HashMap::with_capacity_and_hasher(v.len(), Default::default());
    let mut firsts = Vec::new();
    let idx = v
        .iter()
        .enumerate()
        .map(|(i, &key)| {
            *seen.entry(key).or_insert_with(|| {
                firsts.push(i as i64);
                firsts.len() as i64 - 1
            })
        })
        .collect();
    (firsts, idx)
}

/// Coordinates of the true (non-zero) elements, as int64 `[n, rank]` (`Where`).
pub fn where_indices(cond: &Tensor) -> Result<Tensor> {
    let mask: Vec<bool> = match cond.data() {
        Data::Bool(v) => v.to_vec(),
        Data::Str(_) => {
            return Err(Error::invalid_argument(
                "Where: condition must be bool or numeric",
            ))
        }
        _ => cond.to_f64_vec()?.into_iter().map(|x| x != 0.0).collect(),
    };
    let dims = cond.dims();
    let rank = dims.len();
    let strides = cond.shape().strides();
    let mut out = Vec::new();
    let mut n = 0;
    for (flat, _) in mask.iter().enumerate().filter(|(_, &m)| m) {
        let mut r = flat;
        for &s in strides.iter() {
            out.push((r / s) as i64);
            r %= s;
        }
        n += 1;
    }
    Tensor::from_vec([n, rank], out)
}

/// The `k` largest entries of the last dimension, sorted descending, with
/// their indices (ties keep the lower index first).
pub fn top_k(x: &Tensor, k: usize) -> Result<(Tensor, Tensor)> {
    let dims = x.dims();
    let Some(&n) = dims.last() else {
        return Err(Error::invalid_argument(
            "TopKV2: input must be at least a vector",
        ));
    };
    if k > n {
        return Err(Error::invalid_argument(format!(
            "input must have at least k columns. Had {n}, needed {k}"
        )));
    }
    let rows = x.num_elements() / n.max(1);
    let mut shape = x.shape().clone();
    shape.set_dim(dims.len() - 1, k);
    fn go<T: Scalar>(v: &[T], rows: usize, n: usize, k: usize) -> (Vec<T>, Vec<i32>) {
        let mut vals = Vec::with_capacity(rows * k);
        let mut idx = Vec::with_capacity(rows * k);
        let mut order: Vec<usize> = Vec::with_capacity(n);
        for r in 0..rows {
            let row = &v[r * n..(r + 1) * n];
            order.clear();
            order.extend(0..n);
            order.sort_by(|&a, &b| {
                row[b]
                    .partial_cmp(&row[a])
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(a.cmp(&b))
            });
            for &i in &order[..k] {
                vals.push(row[i]);
                idx.push(i as i32);
            }
        }
        (vals, idx)
    }
    let dtype = x.dtype();
    let wide;
    let src = if matches!(dtype, DType::Float16 | DType::BFloat16) {
        wide = crate::kernels::elementwise::cast(x, DType::Float32)?;
        &wide
    } else {
        x
    };
    let (vals, idx): (Data, Vec<i32>) = crate::with_real!(src.data(), v => {
        let (a, b) = go(v, rows, n, k);
        (Element::wrap(a), b)
    }, _ => return Err(Error::invalid_argument(format!("TopKV2 is not supported for {dtype} tensors"))));
    let values = crate::kernels::elementwise::cast(&Tensor::new(shape.clone(), vals)?, dtype)?;
    Ok((values, Tensor::from_vec(shape, idx)?))
}

/// `InTopKV2`: whether each target class is among the `k` largest predictions.
pub fn in_top_k(predictions: &Tensor, targets: &Tensor, k: i64) -> Result<Tensor> {
    let p = crate::kernels::elementwise::cast(predictions, DType::Float32)?;
    let p = p.as_slice::<f32>()?;
    let t = targets.to_i64_vec()?;
    let dims = predictions.dims();
    if dims.len() != 2 || targets.rank() != 1 || dims[0] != t.len() {
        return Err(Error::invalid_argument(format!(
            "InTopK: predictions must be [batch, classes] and targets [batch], got {} and {}",
            predictions.shape(),
            targets.shape()
        )));
    }
    let classes = dims[1];
    let out: Vec<bool> = (0..dims[0])
        .map(|b| {
            let row = &p[b * classes..(b + 1) * classes];
            let tgt = t[b];
            // Like TensorFlow: an out-of-range target or any non-finite
            // prediction in the row gives false.
            if tgt < 0 || tgt as usize >= classes || row.iter().any(|x| !x.is_finite()) {
                return false;
            }
            let v = row[tgt as usize];
            let larger = row.iter().filter(|&&x| x > v).count() as i64;
            larger < k
        })
        .collect();
    Tensor::from_vec([dims[0]], out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_keeps_first_appearances_in_order() {
        let x = Tensor::vector(vec![7i64, 3, 7, 7, 1, 3]);
        let (y, idx) = unique(&x, DType::Int32).unwrap();
        assert_eq!(y.to_i64_vec().unwrap(), [7, 3, 1]);
        assert_eq!(idx.dtype(), DType::Int32);
        assert_eq!(idx.to_i64_vec().unwrap(), [0, 1, 0, 0, 2, 1]);
        let f = Tensor::vector(vec![0.0f32, -0.0, f32::NAN, 2.5, f32::NAN, 2.5]);
        let (y, idx) = unique(&f, DType::Int64).unwrap();
        assert_eq!(y.num_elements(), 4, "-0 is 0; each NaN stands alone");
        assert_eq!(idx.to_i64_vec().unwrap(), [0, 0, 1, 2, 3, 2]);
        let s = Tensor::vector(vec![b"a".to_vec(), b"b".to_vec(), b"a".to_vec()]);
        let (y, idx) = unique(&s, DType::Int32).unwrap();
        assert_eq!(y.num_elements(), 2);
        assert_eq!(idx.to_i64_vec().unwrap(), [0, 1, 0]);
        let (y, idx) = unique(&Tensor::vector(Vec::<i32>::new()), DType::Int32).unwrap();
        assert_eq!((y.num_elements(), idx.num_elements()), (0, 0));
        let m = Tensor::from_vec([2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let err = unique(&m, DType::Int32).err().unwrap().to_string();
        assert!(err.contains("1D vector"), "{err}");
    }
}
