//! Fractional max and average pooling over NHWC tensors (TensorFlow's
//! `FractionalMaxPool`, `FractionalAvgPool` and their `...Grad` ops, after
//! Graham, "Fractional Max-Pooling", 2014).
//!
//! Rows and columns are split into `floor(size / ratio)` regions whose
//! lengths are `k` or `k + 1` (`k = size / output`), described by a
//! cumulative sequence `0 = s[0] < s[1] < ... < s[out] = size`: region `i`
//! covers `s[i]..s[i + 1]` (one more when `overlapping`, clipped to the
//! input). The sequences are drawn as TensorFlow draws them (a random
//! arrangement of the lengths, or the pseudo-random `ceil(alpha * (i + u))`
//! rule) from this crate's Philox generator; they are not TensorFlow's bits.
//! Given the sequences (which the forward ops output), everything else is
//! deterministic and equal to TensorFlow's.

use super::conv::{dims4, float_dispatch, Lowest};
use super::elementwise::cast;
use super::random::{permutation, Philox};
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The output sizes `floor(input[i] / ratio[i])` of a fractional pool of
/// an NHWC input (ratios of the batch and depth dimensions must be 1).
pub fn output_dims(op: &str, input: &[usize], ratio: &[f64]) -> Result<[usize; 4]> {
    let d = dims4(op, "input", input)?;
    if ratio.len() != 4 {
        return Err(Error::invalid_argument(format!(
            "{op}: pooling_ratio field must specify 4 dimensions, got {}",
            ratio.len()
        )));
    }
    if ratio[0] != 1.0 || ratio[3] != 1.0 {
        return Err(Error::invalid_argument(format!(
            "{op}: Fractional pooling is not yet supported on the batch nor channel dimension."
        )));
    }
    let mut out = d;
    for i in 1..3 {
        if ratio[i] < 1.0 {
            return Err(Error::invalid_argument(format!(
                "{op}: pooling_ratio cannot be smaller than 1, got: {}",
                ratio[i]
            )));
        }
        let o = (d[i] as f64 / ratio[i]).floor();
        if o <= 0.0 {
            return Err(Error::invalid_argument(format!(
                "{op}: output size must be positive, but got {o} for input size {} and pooling_ratio {}",
                d[i], ratio[i]
            )));
        }
        out[i] = o as usize;
    }
    Ok(out)
}

/// The cumulative pooling sequence (`output + 1` boundaries from 0 to
/// `input`) of one dimension, drawn from Philox blocks `base..`.
pub fn pooling_sequence(
    input: usize,
    output: usize,
    pseudo_random: bool,
    gen: &Philox,
    base: u64,
) -> Vec<i64> {
    let k = input / output;
    let diff: Vec<usize> = if input.is_multiple_of(output) {
        vec![k; output]
    } else if pseudo_random {
        let alpha = input as f64 / output as f64;
        let u_max1 = (k + 2) as f64 / alpha - 1.0;
        let u_max2 = (input + 1 - k) as f64 / alpha - (output - 1) as f64;
        let b = gen.block(base);
        let u = (b[0] as f64 / 4294967296.0) * u_max1.min(u_max2);
        let mut cum = vec![0usize; output + 1];
        cum[0] = 1;
        cum[output] = input + 1;
        for (i, c) in cum.iter_mut().enumerate().take(output).skip(1) {
            *c = (alpha * (i as f64 + u)).ceil() as usize;
        }
        (0..output).map(|i| cum[i + 1] - cum[i]).collect()
    } else {
        let big = input % output;
        permutation(gen, base, output)
            .into_iter()
            .map(|i| if i < big { k + 1 } else { k })
            .collect()
    };
    let mut seq = Vec::with_capacity(output + 1);
    seq.push(0i64);
    for d in diff {
        seq.push(seq.last().unwrap() + d as i64);
    }
    seq
}

/// Region `i` of a sequence: `start..end` clipped to the input.
fn region(seq: &[i64], i: usize, overlapping: bool, len: usize) -> std::ops::Range<usize> {
    let start = seq[i].max(0) as usize;
    let end = if overlapping {
        seq[i + 1] + 1
    } else {
        seq[i + 1]
    };
    start.min(len)..(end.max(0) as usize).min(len)
}

fn check_sequence(op: &str, what: &str, seq: &[i64], len: usize) -> Result<()> {
    if seq.len() < 2 || seq.windows(2).any(|w| w[1] < w[0]) || seq[0] < 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must be a non-decreasing sequence of at least 2 non-negative boundaries, got {seq:?}"
        )));
    }
    if *seq.last().unwrap() as usize > len + 1 {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} ends at {} beyond the input size {len}",
            seq.last().unwrap()
        )));
    }
    Ok(())
}

/// The regions' geometry: input dims and both sequences.
struct Geom<'a> {
    d: [usize; 4],
    rows: &'a [i64],
    cols: &'a [i64],
    overlapping: bool,
}

impl Geom<'_> {
    fn out_dims(&self) -> [usize; 4] {
        [
            self.d[0],
            self.rows.len() - 1,
            self.cols.len() - 1,
            self.d[3],
        ]
    }

    /// `f(out_index, in_index)` for every output element and its region's
    /// inputs (row-major).
    fn visit(&self, mut start: impl FnMut(usize), mut f: impl FnMut(usize, usize)) {
        let [n, h, w, c] = self.d;
        let [_, oh, ow, _] = self.out_dims();
        for b in 0..n {
            for i in 0..oh {
                let rs = region(self.rows, i, self.overlapping, h);
                for j in 0..ow {
                    let cs = region(self.cols, j, self.overlapping, w);
                    for ch in 0..c {
                        let o = ((b * oh + i) * ow + j) * c + ch;
                        start(o);
                        for y in rs.clone() {
                            for x in cs.clone() {
                                f(o, ((b * h + y) * w + x) * c + ch);
                            }
                        }
                    }
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.out_dims().iter().product()
    }
}

fn max_typed<T: Lowest>(x: &[T], g: &Geom) -> Vec<T> {
    let mut out = vec![T::lowest(); g.len()];
    g.visit(
        |_| {},
        |o, i| {
            if x[i] > out[o] {
                out[o] = x[i];
            }
        },
    );
    out
}

/// For each output element, its region's first maximum.
fn argmax<T: Lowest>(x: &[T], g: &Geom) -> Vec<Option<usize>> {
    let mut arg: Vec<Option<usize>> = vec![None; g.len()];
    g.visit(
        |_| {},
        |o, i| {
            let better = match arg[o] {
                None => true,
                Some(a) => x[a] < x[i],
            };
            if better {
                arg[o] = Some(i);
            }
        },
    );
    arg
}

fn max_grad_typed<T: Lowest>(x: &[T], dy: &[T], g: &Geom) -> Vec<T> {
    let mut dx = vec![T::zero(); x.len()];
    for (o, a) in argmax(x, g).into_iter().enumerate() {
        if let Some(i) = a {
            dx[i] = dx[i].add(dy[o]);
        }
    }
    dx
}

fn counts(g: &Geom) -> Vec<usize> {
    let mut n = vec![0usize; g.len()];
    g.visit(|_| {}, |o, _| n[o] += 1);
    n
}

fn avg_typed<T: Scalar>(x: &[T], g: &Geom) -> Vec<T> {
    let mut sum = vec![T::zero(); g.len()];
    g.visit(|_| {}, |o, i| sum[o] = sum[o].add(x[i]));
    for (s, n) in sum.iter_mut().zip(counts(g)) {
        *s = s.div(T::from_f64(n.max(1) as f64));
    }
    sum
}

fn avg_grad_typed<T: Scalar>(dy: &[T], g: &Geom) -> Vec<T> {
    let n = counts(g);
    let mut dx = vec![T::zero(); g.d.iter().product()];
    g.visit(
        |_| {},
        |o, i| dx[i] = dx[i].add(dy[o].div(T::from_f64(n[o].max(1) as f64))),
    );
    dx
}

/// The attributes of `FractionalMaxPool` / `FractionalAvgPool`.
#[derive(Clone, Debug, PartialEq)]
pub struct FractionalParams {
    /// Pooling ratios of the four NHWC dimensions (batch and depth: 1).
    pub ratio: Vec<f64>,
    /// The pseudo-random region rule instead of a random arrangement.
    pub pseudo_random: bool,
    /// Adjacent regions share their boundary row/column.
    pub overlapping: bool,
}

/// The row and column pooling sequences of a `FractionalMaxPool` /
/// `FractionalAvgPool` (`op`) of an input of shape `dims`, drawn from `gen`
/// blocks `base..` (rows) and `base + 2^32..` (columns).
pub fn pooling_sequences(
    op: &str,
    dims: &[usize],
    p: &FractionalParams,
    gen: &Philox,
    base: u64,
) -> Result<(Vec<i64>, Vec<i64>)> {
    let out = output_dims(op, dims, &p.ratio)?;
    let d = dims4(op, "input", dims)?;
    let rows = pooling_sequence(d[1], out[1], p.pseudo_random, gen, base);
    let cols = pooling_sequence(d[2], out[2], p.pseudo_random, gen, base + (1 << 32));
    Ok((rows, cols))
}

/// The max (`max`) or average of `input` over the regions the sequences
/// describe: `FractionalMaxPool`/`FractionalAvgPool`'s first output.
pub fn pool_with_sequences(
    input: &Tensor,
    rows: &[i64],
    cols: &[i64],
    overlapping: bool,
    max: bool,
) -> Result<Tensor> {
    let op = if max {
        "FractionalMaxPool"
    } else {
        "FractionalAvgPool"
    };
    let d = dims4(op, "input", input.dims())?;
    check_sequence(op, "row_pooling_sequence", rows, d[1])?;
    check_sequence(op, "col_pooling_sequence", cols, d[2])?;
    pool_with(op, input, rows, cols, overlapping, max)
}

fn pool_with(
    op: &str,
    input: &Tensor,
    rows: &[i64],
    cols: &[i64],
    overlapping: bool,
    max: bool,
) -> Result<Tensor> {
    let d = dims4(op, "input", input.dims())?;
    let g = Geom {
        d,
        rows,
        cols,
        overlapping,
    };
    if max {
        float_dispatch!(
            op,
            input.dtype(),
            g.out_dims(),
            pool_with(
                op,
                &cast(input, DType::Float32)?,
                rows,
                cols,
                overlapping,
                max
            ),
            |T| max_typed::<T>(input.as_slice()?, &g)
        )
    } else {
        float_dispatch!(
            op,
            input.dtype(),
            g.out_dims(),
            pool_with(
                op,
                &cast(input, DType::Float32)?,
                rows,
                cols,
                overlapping,
                max
            ),
            |T| avg_typed::<T>(input.as_slice()?, &g)
        )
    }
}

/// `FractionalMaxPoolGrad`: each output's gradient goes to its region's
/// first maximum.
pub fn fractional_max_pool_grad(
    orig_input: &Tensor,
    orig_output: &Tensor,
    out_backprop: &Tensor,
    rows: &[i64],
    cols: &[i64],
    overlapping: bool,
) -> Result<Tensor> {
    let op = "FractionalMaxPoolGrad";
    let d = dims4(op, "orig_input", orig_input.dims())?;
    check_sequence(op, "row_pooling_sequence", rows, d[1])?;
    check_sequence(op, "col_pooling_sequence", cols, d[2])?;
    let g = Geom {
        d,
        rows,
        cols,
        overlapping,
    };
    for (what, t) in [("orig_output", orig_output), ("out_backprop", out_backprop)] {
        if t.dims() != g.out_dims() {
            return Err(Error::invalid_argument(format!(
                "{op}: {what} must have shape {:?} (the pooling sequences'), got {}",
                g.out_dims(),
                t.shape()
            )));
        }
    }
    if orig_input.dtype() != out_backprop.dtype() {
        return Err(Error::invalid_argument(format!(
            "{op}: orig_input and out_backprop must have one dtype, got {} and {}",
            orig_input.dtype(),
            out_backprop.dtype()
        )));
    }
    float_dispatch!(
        op,
        orig_input.dtype(),
        d,
        fractional_max_pool_grad(
            &cast(orig_input, DType::Float32)?,
            &cast(orig_output, DType::Float32)?,
            &cast(out_backprop, DType::Float32)?,
            rows,
            cols,
            overlapping
        ),
        |T| max_grad_typed::<T>(orig_input.as_slice()?, out_backprop.as_slice()?, &g)
    )
}

/// `FractionalAvgPoolGrad`: each output's gradient shared equally by its
/// region of an input of shape `orig_input_shape`.
pub fn fractional_avg_pool_grad(
    orig_input_shape: &[usize],
    out_backprop: &Tensor,
    rows: &[i64],
    cols: &[i64],
    overlapping: bool,
) -> Result<Tensor> {
    let op = "FractionalAvgPoolGrad";
    let d = dims4(op, "orig_input_tensor_shape", orig_input_shape)?;
    check_sequence(op, "row_pooling_sequence", rows, d[1])?;
    check_sequence(op, "col_pooling_sequence", cols, d[2])?;
    let g = Geom {
        d,
        rows,
        cols,
        overlapping,
    };
    if out_backprop.dims() != g.out_dims() {
        return Err(Error::invalid_argument(format!(
            "{op}: out_backprop must have shape {:?} (the pooling sequences'), got {}",
            g.out_dims(),
            out_backprop.shape()
        )));
    }
    float_dispatch!(
        op,
        out_backprop.dtype(),
        d,
        fractional_avg_pool_grad(
            orig_input_shape,
            &cast(out_backprop, DType::Float32)?,
            rows,
            cols,
            overlapping
        ),
        |T| avg_grad_typed::<T>(out_backprop.as_slice()?, &g)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_cover_the_input_with_lengths_k_or_k_plus_one() {
        let gen = Philox::new(7, 9);
        for pseudo in [false, true] {
            for (input, output) in [(10, 7), (25, 17), (9, 3), (5, 4)] {
                let s = pooling_sequence(input, output, pseudo, &gen, 0);
                assert_eq!(s.len(), output + 1);
                assert_eq!((s[0], s[output]), (0, input as i64));
                let k = (input / output) as i64;
                assert!(
                    s.windows(2)
                        .all(|w| w[1] - w[0] == k || w[1] - w[0] == k + 1),
                    "{s:?}"
                );
            }
        }
    }

    #[test]
    fn max_pool_over_given_regions_and_its_gradient() {
        // 1x4x1x1 input, rows [0, 1, 4]: regions {0}, {1, 2, 3} (overlapping: {0, 1}, {1, 2, 3}).
        let x = Tensor::from_vec(vec![1, 4, 1, 1], vec![1.0f32, 5., 5., 2.]).unwrap();
        let y = pool_with_sequences(&x, &[0, 1, 4], &[0, 1], true, true).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[5.0, 5.0]);
        let dy = Tensor::from_vec(vec![1, 2, 1, 1], vec![1.0f32, 10.0]).unwrap();
        let dx = fractional_max_pool_grad(&x, &y, &dy, &[0, 1, 4], &[0, 1], true).unwrap();
        assert_eq!(dx.as_slice::<f32>().unwrap(), &[0.0, 11.0, 0.0, 0.0]);
        let a = pool_with_sequences(&x, &[0, 1, 4], &[0, 1], false, false).unwrap();
        assert_eq!(a.as_slice::<f32>().unwrap(), &[1.0, 4.0]);
    }
}
