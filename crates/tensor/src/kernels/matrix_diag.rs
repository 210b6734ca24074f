//! The element-moving matrix ops: `MatrixBandPart`, the diagonal ops
//! (`MatrixDiag`, `MatrixDiagPart`, `MatrixSetDiag` in their V1/V2/V3 forms
//! with TensorFlow's diagonal ranges `k` and alignments), `Diag`/`DiagPart`
//! and `Cross`. Every dtype is supported: each op is an index map from the
//! output to an input element (or a fill value).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{Data, Element, Tensor};
use crate::with_data;

/// Where each output element comes from: `>= 0` an element of the first
/// source, `< 0` element `-1 - v` of the second (a fill value or a second
/// tensor).
fn pick(a: &Tensor, b: &Tensor, idx: &[i64], shape: Shape) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(Error::invalid_argument(format!(
            "expected one dtype, got {} and {}",
            a.dtype(),
            b.dtype()
        )));
    }
    fn go<T: Element>(x: &[T], y: &Data, idx: &[i64]) -> Vec<T> {
        let y: &[T] = T::buffer(y).map(|v| v.as_slice()).unwrap_or(&[]);
        idx.iter()
            .map(|&i| {
                if i >= 0 {
                    x[i as usize].clone()
                } else {
                    y[(-1 - i) as usize].clone()
                }
            })
            .collect()
    }
    let data: Data = with_data!(a.data(), v => Element::wrap(go(v, b.data(), idx)));
    Tensor::new(shape, data)
}

fn zero_of(d: DType) -> Tensor {
    Tensor::new(Shape::new(&[1]), Data::zeros(d, 1)).expect("one zero")
}

/// `MatrixBandPart`: keeps `x[..., i, j]` where `(lower < 0 || i - j <=
/// lower) && (upper < 0 || j - i <= upper)`, zeros elsewhere.
pub fn band_part(x: &Tensor, lower: i64, upper: i64) -> Result<Tensor> {
    let d = x.dims();
    if d.len() < 2 {
        return Err(Error::invalid_argument(format!(
            "MatrixBandPart: input must be at least rank 2, got shape {}",
            x.shape()
        )));
    }
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    if lower > m as i64 {
        return Err(Error::invalid_argument(format!(
            "MatrixBandPart: num_lower must be negative or less or equal to number of rows ({m}) got: {lower}"
        )));
    }
    if upper > n as i64 {
        return Err(Error::invalid_argument(format!(
            "MatrixBandPart: num_upper must be negative or less or equal to number of columns ({n}) got: {upper}"
        )));
    }
    let idx: Vec<i64> = (0..x.num_elements())
        .map(|e| {
            let (i, j) = (((e / n.max(1)) % m.max(1)) as i64, (e % n.max(1)) as i64);
            let keep = (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
            if keep {
                e as i64
            } else {
                -1
            }
        })
        .collect();
    pick(x, &zero_of(x.dtype()), &idx, x.shape().clone())
}

/// A diagonal range `k0..=k1` and TensorFlow's alignment of short
/// diagonals in the packed form.
#[derive(Clone, Copy, Debug)]
pub struct DiagSpec {
    pub k0: i64,
    pub k1: i64,
    /// Superdiagonals (`k > 0`; and the main one if either is) packed left.
    pub super_left: bool,
    /// Subdiagonals packed left.
    pub sub_left: bool,
}

impl DiagSpec {
    /// From a `k` input (one or two values) and an `align` attr
    /// (`"RIGHT_LEFT"` etc.; V1 ops and V2 use `"LEFT_LEFT"`).
    pub fn parse(op: &str, k: &[i64], align: &str) -> Result<DiagSpec> {
        let (k0, k1) = match k {
            [a] => (*a, *a),
            [a, b] => (*a, *b),
            _ => {
                return Err(Error::invalid_argument(format!(
                    "{op}: diag_index must be a scalar or a vector with at most 2 elements, got {} elements",
                    k.len()
                )))
            }
        };
        if k0 > k1 {
            return Err(Error::invalid_argument(format!(
                "{op}: lower_diag_index must not be larger than upper_diag_index: {k0} > {k1}"
            )));
        }
        let (super_left, sub_left) = match align {
            "LEFT_LEFT" | "" => (true, true),
            "LEFT_RIGHT" => (true, false),
            "RIGHT_LEFT" => (false, true),
            "RIGHT_RIGHT" => (false, false),
            other => {
                return Err(Error::invalid_argument(format!(
                    "{op}: align must be one of LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT, RIGHT_RIGHT, got {other}"
                )))
            }
        };
        Ok(DiagSpec {
            k0,
            k1,
            super_left,
            sub_left,
        })
    }

    fn num_diags(&self) -> usize {
        (self.k1 - self.k0 + 1) as usize
    }

    /// Length of diagonal `d` of an `m x n` matrix and its offset in a
    /// packed row of `max_len`.
    fn len_offset(&self, d: i64, m: i64, n: i64, max_len: i64) -> (i64, i64) {
        let len = (m + d.min(0)).min(n - d.max(0)).max(0);
        let left = (d >= 0 && self.super_left) || (d <= 0 && self.sub_left);
        (len, if left { 0 } else { max_len - len })
    }

    fn max_len(&self, m: i64, n: i64) -> i64 {
        (m + self.k1.min(0)).min(n - self.k0.max(0)).max(0)
    }

    fn check_range(&self, op: &str, m: usize, n: usize) -> Result<()> {
        let (m, n) = (m as i64, n as i64);
        let ok = |k: i64| (m == 0 || -m < k) && (n == 0 || k < n);
        if !ok(self.k0) || !ok(self.k1) {
            return Err(Error::invalid_argument(format!(
                "{op}: diag_index is out of bounds: [{}, {}] for a {m}x{n} matrix",
                self.k0, self.k1
            )));
        }
        Ok(())
    }
}

fn split_matrix<'a>(x: &'a Tensor, op: &str) -> Result<(&'a [usize], usize, usize)> {
    let d = x.dims();
    if d.len() < 2 {
        return Err(Error::invalid_argument(format!(
            "{op}: input must be at least rank 2, got shape {}",
            x.shape()
        )));
    }
    Ok((&d[..d.len() - 2], d[d.len() - 2], d[d.len() - 1]))
}

/// For each element of a packed diagonal tensor (`[batch, num_diags,
/// max_len]`, or `[batch, max_len]` for one diagonal) of an `m x n` matrix:
/// the matrix element it is (row-major index within one matrix), or None.
fn packed_positions(spec: &DiagSpec, m: usize, n: usize, max_len: usize) -> Vec<Option<usize>> {
    let (mi, ni, ml) = (m as i64, n as i64, max_len as i64);
    let mut out = Vec::with_capacity(spec.num_diags() * max_len);
    for r in 0..spec.num_diags() as i64 {
        let d = spec.k1 - r;
        let (len, off) = spec.len_offset(d, mi, ni, ml);
        for p in 0..ml {
            let q = p - off;
            out.push(if q < 0 || q >= len {
                None
            } else {
                let (i, j) = if d >= 0 { (q, q + d) } else { (q - d, q) };
                Some((i * ni + j) as usize)
            });
        }
    }
    out
}

/// `MatrixDiagV3` (and V1/V2): matrices with the given diagonals, the rest
/// `padding`. `num_rows`/`num_cols` of -1 are inferred as TensorFlow does.
pub fn matrix_diag(
    diagonal: &Tensor,
    spec: &DiagSpec,
    num_rows: i64,
    num_cols: i64,
    padding: &Tensor,
) -> Result<Tensor> {
    let op = "MatrixDiagV3";
    let dd = diagonal.dims();
    let single = spec.k0 == spec.k1;
    let need = if single { 1 } else { 2 };
    if dd.len() < need {
        return Err(Error::invalid_argument(format!(
            "{op}: diagonal must be at least rank {need}, got shape {}",
            diagonal.shape()
        )));
    }
    let max_len = dd[dd.len() - 1] as i64;
    if !single && dd[dd.len() - 2] != spec.num_diags() {
        return Err(Error::invalid_argument(format!(
            "{op}: The number of diagonals provided in the input does not match the lower_diag_index and upper_diag_index range: {} vs {}",
            dd[dd.len() - 2],
            spec.num_diags()
        )));
    }
    let batch = &dd[..dd.len() - need];
    let min_rows = max_len - spec.k1.min(0);
    let min_cols = max_len + spec.k0.max(0);
    let (m, n) = match (num_rows, num_cols) {
        (-1, -1) => (min_rows.max(min_cols), min_rows.max(min_cols)),
        (-1, c) => (min_rows, c),
        (r, -1) => (r, min_cols),
        (r, c) => (r, c),
    };
    if m < min_rows || n < min_cols || spec.max_len(m, n) != max_len {
        return Err(Error::invalid_argument(format!(
            "{op}: The number of rows or columns is not consistent with the specified d_lower, d_upper, and diagonal: num_rows {m}, num_cols {n}, diagonal shape {}",
            diagonal.shape()
        )));
    }
    if padding.num_elements() != 1 {
        return Err(Error::invalid_argument(format!(
            "{op}: padding_value must be a scalar, got shape {}",
            padding.shape()
        )));
    }
    let (m, n) = (m as usize, n as usize);
    let count: usize = batch.iter().product();
    let pos = packed_positions(spec, m, n, max_len as usize);
    // Inverse map: matrix element -> packed element.
    let mut inv = vec![-1i64; m * n];
    for (p, e) in pos.iter().enumerate() {
        if let Some(e) = e {
            inv[*e] = p as i64;
        }
    }
    let per = pos.len();
    let mut idx = Vec::with_capacity(count * m * n);
    for b in 0..count {
        idx.extend(
            inv.iter()
                .map(|&p| if p < 0 { -1 } else { (b * per) as i64 + p }),
        );
    }
    let mut shape = Shape::new(batch);
    shape.push(m);
    shape.push(n);
    Tensor::check_allocation(op, diagonal.dtype(), shape.dims())?;
    pick(diagonal, padding, &idx, shape)
}

/// `MatrixDiagPartV3` (and V1/V2): the diagonals `k0..=k1` of each matrix,
/// packed as TensorFlow does, short ones filled with `padding`.
pub fn matrix_diag_part(x: &Tensor, spec: &DiagSpec, padding: &Tensor) -> Result<Tensor> {
    let op = "MatrixDiagPartV3";
    let (batch, m, n) = split_matrix(x, op)?;
    spec.check_range(op, m, n)?;
    let max_len = spec.max_len(m as i64, n as i64) as usize;
    let pos = packed_positions(spec, m, n, max_len);
    let count: usize = batch.iter().product();
    let mut idx = Vec::with_capacity(count * pos.len());
    for b in 0..count {
        idx.extend(pos.iter().map(|e| e.map_or(-1, |e| (b * m * n + e) as i64)));
    }
    let mut shape = Shape::new(batch);
    if spec.k0 != spec.k1 {
        shape.push(spec.num_diags());
    }
    shape.push(max_len);
    pick(x, padding, &idx, shape)
}

/// `MatrixSetDiagV3` (and V1/V2): `x` with diagonals `k0..=k1` replaced by
/// the packed `diagonal`.
pub fn matrix_set_diag(x: &Tensor, diagonal: &Tensor, spec: &DiagSpec) -> Result<Tensor> {
    let op = "MatrixSetDiagV3";
    let (batch, m, n) = split_matrix(x, op)?;
    spec.check_range(op, m, n)?;
    let max_len = spec.max_len(m as i64, n as i64) as usize;
    let mut want = batch.to_vec();
    if spec.k0 != spec.k1 {
        want.push(spec.num_diags());
    }
    want.push(max_len);
    if diagonal.dims() != want.as_slice() {
        return Err(Error::invalid_argument(format!(
            "{op}: diagonal must have shape {:?}, got {}",
            want,
            diagonal.shape()
        )));
    }
    let pos = packed_positions(spec, m, n, max_len);
    let count: usize = batch.iter().product();
    let mut idx: Vec<i64> = (0..x.num_elements() as i64).collect();
    for b in 0..count {
        for (p, e) in pos.iter().enumerate() {
            if let Some(e) = e {
                idx[b * m * n + e] = -1 - (b * pos.len() + p) as i64;
            }
        }
    }
    pick(x, diagonal, &idx, x.shape().clone())
}

/// `Diag`: a rank-`2k` tensor with `x` (rank `k`) on its diagonal.
pub fn diag(x: &Tensor) -> Result<Tensor> {
    let d = x.dims();
    if d.is_empty() {
        return Err(Error::invalid_argument(format!(
            "Diag: Input must be at least rank 1, got shape {}",
            x.shape()
        )));
    }
    let n = x.num_elements();
    let mut dims = d.to_vec();
    dims.extend_from_slice(d);
    Tensor::check_allocation("Diag", x.dtype(), &dims)?;
    let mut idx = vec![-1i64; n * n];
    for i in 0..n {
        idx[i * n + i] = i as i64;
    }
    pick(x, &zero_of(x.dtype()), &idx, Shape::new(&dims))
}

/// `DiagPart`: the diagonal of a rank-`2k` tensor whose halves match.
pub fn diag_part(x: &Tensor) -> Result<Tensor> {
    let d = x.dims();
    let k = d.len() / 2;
    if d.is_empty() || !d.len().is_multiple_of(2) || d[..k] != d[k..] {
        return Err(Error::invalid_argument(format!(
            "DiagPart: input must have even rank with matching halves, got shape {}",
            x.shape()
        )));
    }
    let n: usize = d[..k].iter().product();
    let idx: Vec<i64> = (0..n).map(|i| (i * n + i) as i64).collect();
    pick(x, x, &idx, Shape::new(&d[..k]))
}

/// `Cross`: cross products of 3-vectors along the last dimension.
pub fn cross(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dims() != b.dims() || a.dims().last() != Some(&3) {
        return Err(Error::invalid_argument(format!(
            "Cross: a and b must have the same shape with 3 as the last dimension, got {} and {}",
            a.shape(),
            b.shape()
        )));
    }
    macro_rules! go {
        ($t:ty) => {{
            let (x, y) = (a.as_slice::<$t>()?, b.as_slice::<$t>()?);
            let mut out = Vec::with_capacity(x.len());
            for (u, v) in x.chunks_exact(3).zip(y.chunks_exact(3)) {
                out.push(u[1] * v[2] - u[2] * v[1]);
                out.push(u[2] * v[0] - u[0] * v[2]);
                out.push(u[0] * v[1] - u[1] * v[0]);
            }
            Tensor::from_vec(a.shape().clone(), out)
        }};
    }
    match a.dtype() {
        DType::Float32 => go!(f32),
        DType::Float64 => go!(f64),
        DType::Int32 => go!(i32),
        DType::Int64 => go!(i64),
        other => Err(Error::invalid_argument(format!(
            "Cross is not supported for {other} tensors"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize], v: Vec<f32>) -> Tensor {
        Tensor::from_vec(Shape::new(shape), v).unwrap()
    }

    fn v(t: Tensor) -> Vec<f32> {
        t.into_vec::<f32>().unwrap()
    }

    #[test]
    fn band_part_keeps_the_band() {
        let x = t(&[3, 3], (1..=9).map(|i| i as f32).collect());
        assert_eq!(
            v(band_part(&x, 0, -1).unwrap()),
            [1., 2., 3., 0., 5., 6., 0., 0., 9.]
        );
        assert_eq!(
            v(band_part(&x, 1, 0).unwrap()),
            [1., 0., 0., 4., 5., 0., 0., 8., 9.]
        );
    }

    #[test]
    fn diag_ranges_align_as_tensorflow() {
        // tf.linalg.diag_part(x, k=(-1, 1)) of a 3x3, RIGHT_LEFT.
        let x = t(&[3, 3], (1..=9).map(|i| i as f32).collect());
        let pad = t(&[], vec![0.0]);
        let spec = DiagSpec::parse("t", &[-1, 1], "RIGHT_LEFT").unwrap();
        let p = matrix_diag_part(&x, &spec, &pad).unwrap();
        assert_eq!(p.dims(), &[3, 3]);
        assert_eq!(v(p.clone()), [0., 2., 6., 1., 5., 9., 4., 8., 0.]);
        let back = matrix_diag(&p, &spec, -1, -1, &pad).unwrap();
        assert_eq!(v(back), [1., 2., 0., 4., 5., 6., 0., 8., 9.]);
        let z = t(&[3, 3], vec![0.0; 9]);
        let s = matrix_set_diag(&z, &p, &spec).unwrap();
        assert_eq!(v(s), [1., 2., 0., 4., 5., 6., 0., 8., 9.]);
    }

    #[test]
    fn diag_and_cross() {
        let x = t(&[2], vec![1.0, 2.0]);
        let d = diag(&x).unwrap();
        assert_eq!(v(d.clone()), [1., 0., 0., 2.]);
        assert_eq!(v(diag_part(&d).unwrap()), [1., 2.]);
        let c = cross(&t(&[3], vec![1., 0., 0.]), &t(&[3], vec![0., 1., 0.])).unwrap();
        assert_eq!(v(c), [0., 0., 1.]);
    }
}
