//! Elements chosen or counted by their values: `Unique`,
//! `UniqueWithCounts`, `Where`, `TopKV2`, `InTopKV2`,
//! `LowerBound`/`UpperBound`, `HistogramFixedWidth` and `EditDistance`.

use super::gather;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::cast;
use crate::kernels::scalar::Scalar;
use crate::shape::Shape;
use crate::tensor::{Data, Element, Tensor};
use crate::{with_data, with_real};
use std::cmp::Ordering;

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
        // (uint64 ids keep their bits through i64, so equal stays equal.)
        Data::I32(_)
        | Data::I64(_)
        | Data::I8(_)
        | Data::I16(_)
        | Data::U8(_)
        | Data::U16(_)
        | Data::U32(_)
        | Data::U64(_) => unique_ints(&x.to_i64_vec()?),
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

/// `HistogramFixedWidth`: counts of `values` in `nbins` equal bins over
/// `value_range = [lo, hi]`; values below `lo` count in the first bin and
/// values from `hi` on in the last, as TensorFlow's kernel.
pub fn histogram_fixed_width(
    values: &Tensor,
    value_range: &Tensor,
    nbins: &Tensor,
    out: DType,
) -> Result<Tensor> {
    if nbins.rank() != 0 {
        return Err(Error::invalid_argument(format!(
            "nbins should be a scalar, but got '{}'",
            nbins.shape()
        )));
    }
    let n = nbins.scalar_i64()?;
    if n <= 0 {
        return Err(Error::invalid_argument(format!(
            "nbins should be a positive number, but got '{n}'"
        )));
    }
    if value_range.rank() != 1 || value_range.num_elements() != 2 {
        return Err(Error::invalid_argument(
            "value_range should be a vector of 2 elements.",
        ));
    }
    if value_range.dtype() != values.dtype() {
        return Err(Error::invalid_argument(
            "value_range must have the dtype of values",
        ));
    }
    fn bins<T: Scalar>(v: &[T], lo: T, hi: T, n: i64) -> Result<Vec<i64>> {
        if lo.partial_cmp(&hi) != Some(Ordering::Less) {
            return Err(Error::invalid_argument(format!(
                "value_range should satisfy value_range[0] < value_range[1], but got '[{}, {}]'",
                lo.to_f64(),
                hi.to_f64()
            )));
        }
        let step = (hi.sub(lo)).to_f64() / n as f64;
        let last = (n - 1) as f64;
        let mut counts = vec![0i64; n as usize];
        for &x in v {
            if x.is_nan() {
                return Err(Error::invalid_argument(
                    "Histogram values must not contain NaN",
                ));
            }
            let above = if x < lo { lo } else { x };
            let at = (above.sub(lo).to_f64() / step).min(last);
            counts[at as usize] += 1;
        }
        Ok(counts)
    }
    let wide;
    let (vals, range) = if matches!(values.dtype(), DType::Float16 | DType::BFloat16) {
        wide = (
            cast(values, DType::Float32)?,
            cast(value_range, DType::Float32)?,
        );
        (&wide.0, &wide.1)
    } else {
        (values, value_range)
    };
    let counts = with_real!(vals.data(), v => {
        let r = range.as_slice()?;
        bins(v, r[0], r[1], n)?
    }, _ => return Err(Error::invalid_argument(format!(
        "HistogramFixedWidth does not support {} values", values.dtype()
    ))));
    let t = Tensor::vector(counts);
    cast(&t, out)
}

/// `LowerBound` (`upper` false) and `UpperBound`: for each row of `values`,
/// the insertion points of its entries in the same row of `sorted`.
pub fn search_sorted(sorted: &Tensor, values: &Tensor, upper: bool, out: DType) -> Result<Tensor> {
    for (t, what) in [
        (sorted, "sorted input argument"),
        (values, "values argument"),
    ] {
        if t.rank() != 2 {
            return Err(Error::invalid_argument(format!("{what} must be a matrix")));
        }
    }
    if sorted.dims()[0] != values.dims()[0] {
        return Err(Error::invalid_argument(
            "Leading dim_size of both tensors must match.",
        ));
    }
    if sorted.dtype() != values.dtype() {
        return Err(Error::invalid_argument(
            "sorted_inputs and values must have the same dtype",
        ));
    }
    let (rows, n, k) = (sorted.dims()[0], sorted.dims()[1], values.dims()[1]);
    fn go<T: Scalar>(s: &[T], v: &[T], rows: usize, n: usize, k: usize, upper: bool) -> Vec<i64> {
        let mut out = Vec::with_capacity(rows * k);
        for r in 0..rows {
            let row = &s[r * n..(r + 1) * n];
            for &x in &v[r * k..(r + 1) * k] {
                let at = if upper {
                    row.partition_point(|&e| x.partial_cmp(&e) != Some(Ordering::Less))
                } else {
                    row.partition_point(|&e| e < x)
                };
                out.push(at as i64);
            }
        }
        out
    }
    let wide;
    let (s, v) = if matches!(sorted.dtype(), DType::Float16 | DType::BFloat16) {
        wide = (cast(sorted, DType::Float32)?, cast(values, DType::Float32)?);
        (&wide.0, &wide.1)
    } else {
        (sorted, values)
    };
    let idx = with_real!(s.data(), a => go(a, v.as_slice()?, rows, n, k, upper),
    _ => return Err(Error::invalid_argument(format!(
        "searchsorted does not support {} tensors", sorted.dtype()
    ))));
    if out == DType::Int32 && n > i32::MAX as usize {
        return Err(Error::invalid_argument(
            "sorted_inputs has too many columns for int32 output",
        ));
    }
    cast(
        &Tensor::new(values.shape().clone(), Data::I64(idx.into()))?,
        out,
    )
}

/// One sparse input of `EditDistance`: indices `[n, rank]`, values `[n]`,
/// dense shape `[rank]`.
struct Sparse<'a> {
    indices: Vec<i64>,
    values: &'a Tensor,
    shape: Vec<i64>,
}

fn sparse_input<'a>(
    name: &str,
    indices: &Tensor,
    values: &'a Tensor,
    shape: &Tensor,
) -> Result<Sparse<'a>> {
    if indices.rank() != 2 {
        return Err(Error::invalid_argument(format!(
            "{name}_indices should be a matrix, but got shape: {}",
            indices.shape()
        )));
    }
    if values.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "{name}_values should be a vector, but got shape: {}",
            values.shape()
        )));
    }
    if shape.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "{name}_shape should be a vector, but got shape: {}",
            shape.shape()
        )));
    }
    if shape.num_elements() != indices.dims()[1] {
        return Err(Error::invalid_argument(format!(
            "Expected {name}_shape.NumElements == #cols({name}_indices), their shapes are: {} and {}",
            shape.shape(),
            indices.shape()
        )));
    }
    if values.num_elements() != indices.dims()[0] {
        return Err(Error::invalid_argument(format!(
            "Expected {name}_values.NumElements == #rows({name}_indices), their shapes are: {} and {}",
            values.shape(),
            indices.shape()
        )));
    }
    Ok(Sparse {
        indices: indices.to_i64_vec()?,
        values,
        shape: shape.to_i64_vec()?,
    })
}

/// Levenshtein distance between two sequences.
fn levenshtein<T: PartialEq>(a: &[&T], b: &[&T]) -> usize {
    if a.is_empty() {
        return b.len();
    }
    let mut row: Vec<usize> = (0..=a.len()).collect();
    for (j, y) in b.iter().enumerate() {
        let mut diag = row[0];
        row[0] = j + 1;
        for (i, x) in a.iter().enumerate() {
            let cost = usize::from(x != y);
            let next = (row[i + 1] + 1).min(row[i] + 1).min(diag + cost);
            diag = row[i + 1];
            row[i + 1] = next;
        }
    }
    row[a.len()]
}

/// `EditDistance` between the sequences of two sparse tensors (grouped by
/// all but their last index): `[hypothesis_indices, hypothesis_values,
/// hypothesis_shape, truth_indices, truth_values, truth_shape]`. The result
/// has the elementwise maximum of the two dense shapes without their last
/// dimension; with `normalize`, distances are divided by the truth's length
/// (an empty truth gives `inf` for a non-empty hypothesis).
pub fn edit_distance(inputs: [&Tensor; 6], normalize: bool) -> Result<Tensor> {
    let h = sparse_input("hypothesis", inputs[0], inputs[1], inputs[2])?;
    let t = sparse_input("truth", inputs[3], inputs[4], inputs[5])?;
    if h.shape.len() != t.shape.len() {
        return Err(Error::invalid_argument(format!(
            "hypothesis_shape should have as many elements as truth_shape: {} vs. {}",
            h.shape.len(),
            t.shape.len()
        )));
    }
    let rank = t.shape.len();
    if rank < 2 {
        return Err(Error::invalid_argument(format!(
            "Input SparseTensors must have rank at least 2, but truth_shape rank is: {rank}"
        )));
    }
    if h.values.dtype() != t.values.dtype() {
        return Err(Error::invalid_argument(
            "hypothesis_values and truth_values must have the same dtype",
        ));
    }
    let out_dims: Vec<usize> = (0..rank - 1)
        .map(|d| h.shape[d].max(t.shape[d]).max(0) as usize)
        .collect();
    let total: usize = out_dims.iter().product();
    let strides = Shape::new(&out_dims).strides();
    // Groups: the flat output position of each entry, in entry order.
    let groups = |s: &Sparse<'_>| -> Result<Vec<usize>> {
        s.indices
            .chunks(rank)
            .map(|ix| {
                let mut at = 0usize;
                let mut ok = true;
                for d in 0..rank - 1 {
                    if ix[d] < 0 || ix[d] as usize >= out_dims[d] {
                        ok = false;
                    } else {
                        at += ix[d] as usize * strides[d];
                    }
                }
                if !ok || at >= total {
                    let inner: i64 = ix[..rank - 1]
                        .iter()
                        .zip(strides.iter())
                        .map(|(&i, &s)| i * s as i64)
                        .sum();
                    return Err(Error::internal(format!(
                        "Got an inner product {inner} which would require writing to outside of the buffer for the output tensor (max elements {total})"
                    )));
                }
                Ok(at)
            })
            .collect()
    };
    let hg = groups(&h)?;
    let tg = groups(&t)?;
    fn go<T: Element + PartialEq>(
        hv: &[T],
        tv: &Tensor,
        hg: &[usize],
        tg: &[usize],
        total: usize,
        normalize: bool,
    ) -> Result<Vec<f32>> {
        let tv = tv.as_slice::<T>()?;
        let mut hyp: Vec<Vec<&T>> = vec![Vec::new(); total];
        let mut truth: Vec<Vec<&T>> = vec![Vec::new(); total];
        for (v, &g) in hv.iter().zip(hg) {
            hyp[g].push(v);
        }
        for (v, &g) in tv.iter().zip(tg) {
            truth[g].push(v);
        }
        Ok(hyp
            .iter()
            .zip(&truth)
            .map(|(a, b)| {
                let dist = levenshtein(a, b) as f32;
                if !normalize {
                    dist
                } else if b.is_empty() {
                    if a.is_empty() {
                        0.0
                    } else {
                        f32::INFINITY
                    }
                } else {
                    dist / b.len() as f32
                }
            })
            .collect())
    }
    let out = with_data!(h.values.data(), v => go(v, t.values, &hg, &tg, total, normalize)?);
    Tensor::from_vec(out_dims, out)
}

/// `UniqueWithCounts`: [`unique`]'s values and indices, plus how often each
/// distinct value occurs (as `out_idx`).
pub fn unique_with_counts(x: &Tensor, out_idx: DType) -> Result<(Tensor, Tensor, Tensor)> {
    if x.rank() != 1 {
        return Err(Error::invalid_argument("unique expects a 1D vector."));
    }
    let (y, idx) = unique(x, out_idx)?;
    let mut counts = vec![0i64; y.num_elements()];
    for i in idx.to_i64_vec()? {
        counts[i as usize] += 1;
    }
    let counts = cast(&Tensor::vector(counts), out_idx)?;
    Ok((y, idx, counts))
}

#[cfg(test)]
mod tests {
    use super::super::tests::ints;
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

    #[test]
    fn histogram_clamps_to_the_end_bins() {
        let v = Tensor::vector(vec![-1.0f32, 0.0, 1.5, 2.0, 5.0, 4.99]);
        let r = Tensor::vector(vec![0.0f32, 5.0]);
        let h = histogram_fixed_width(&v, &r, &Tensor::scalar(5i32), DType::Int32).unwrap();
        assert_eq!(ints(&h), vec![2, 1, 1, 0, 2]);
    }

    #[test]
    fn search_sorted_lower_and_upper() {
        let s = Tensor::from_vec([1, 4], vec![1.0f64, 2.0, 2.0, 3.0]).unwrap();
        let v = Tensor::from_vec([1, 3], vec![2.0f64, 0.0, 9.0]).unwrap();
        assert_eq!(
            ints(&search_sorted(&s, &v, false, DType::Int32).unwrap()),
            vec![1, 0, 4]
        );
        assert_eq!(
            ints(&search_sorted(&s, &v, true, DType::Int64).unwrap()),
            vec![3, 0, 4]
        );
    }

    #[test]
    fn edit_distance_of_strings() {
        let s = |v: &[&str]| {
            Tensor::vector(v.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>())
        };
        let hi = Tensor::from_vec([3, 2], vec![0i64, 0, 0, 1, 1, 0]).unwrap();
        let ti = Tensor::from_vec([3, 2], vec![0i64, 0, 1, 0, 1, 1]).unwrap();
        let hv = s(&["a", "b", "c"]);
        let tv = s(&["a", "c", "d"]);
        let hs = Tensor::vector(vec![2i64, 2]);
        let ts = Tensor::vector(vec![2i64, 3]);
        let d = edit_distance([&hi, &hv, &hs, &ti, &tv, &ts], true).unwrap();
        assert_eq!(d.as_slice::<f32>().unwrap(), &[1.0, 0.5]);
        let d = edit_distance([&hi, &hv, &hs, &ti, &tv, &ts], false).unwrap();
        assert_eq!(d.as_slice::<f32>().unwrap(), &[1.0, 1.0]);
    }

    #[test]
    fn unique_with_counts_counts_each_value() {
        let (y, i, c) =
            unique_with_counts(&Tensor::vector(vec![3i64, 1, 3, 3]), DType::Int32).unwrap();
        assert_eq!(ints(&y), vec![3, 1]);
        assert_eq!(ints(&i), vec![0, 1, 0, 0]);
        assert_eq!(ints(&c), vec![3, 1]);
    }
}
