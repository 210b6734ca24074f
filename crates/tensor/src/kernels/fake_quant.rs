//! Fake quantization (`tf.quantization.fake_quant_with_min_max_*`): values
//! rounded onto the `num_bits`-bit grid spanning `[min, max]`, after TF's
//! nudging of the range so that zero is exactly representable, and the
//! straight-through gradients of those ops.
//!
//! The arithmetic is TensorFlow's, in `f32` and in its order, so results are
//! bit-identical to TF's CPU kernels: the `Args` and `PerChannel` forms
//! multiply by the inverse scale, the `Vars` form divides by the scale, and
//! a `Vars` range of exactly `[0, 0]` gives zeros (and passes gradients
//! through unchanged).

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The quantization grid: integer levels `quant_min..=quant_max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantBits {
    /// Lowest level: 1 with `narrow_range`, else 0.
    pub quant_min: i32,
    /// Highest level: `2^num_bits - 1`.
    pub quant_max: i32,
}

impl QuantBits {
    /// Checks `num_bits` (2 to 16, as TF) and builds the grid.
    pub fn new(op: &str, num_bits: i64, narrow_range: bool) -> Result<QuantBits> {
        if !(2..=16).contains(&num_bits) {
            return Err(Error::invalid_argument(format!(
                "{op}: num_bits must be between 2 and 16, inclusive"
            )));
        }
        Ok(QuantBits {
            quant_min: i32::from(narrow_range),
            quant_max: (1i32 << num_bits) - 1,
        })
    }
}

/// A nudged range: `[min, max]` moved so zero falls on a grid level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nudged {
    pub min: f32,
    pub max: f32,
    pub scale: f32,
    pub inv_scale: f32,
}

/// TensorFlow's `Nudge`: the scale of `[min, max]` over the grid, the zero
/// point rounded (half away from zero) and clamped to the grid, and the
/// range re-derived from it.
pub fn nudge(min: f32, max: f32, bits: QuantBits) -> Nudged {
    let qmin = bits.quant_min as f32;
    let qmax = bits.quant_max as f32;
    let scale = (max - min) / (qmax - qmin);
    let inv_scale = (qmax - qmin) / (max - min);
    let zero_from_min = qmin - min / scale;
    let zero_point: u16 = if zero_from_min < qmin {
        bits.quant_min as u16
    } else if zero_from_min > qmax {
        bits.quant_max as u16
    } else {
        // A NaN zero point (0/0) converts to 0, as the C++ cast does on x86.
        zero_from_min.round() as u16
    };
    let zp = zero_point as f32;
    Nudged {
        min: (qmin - zp) * scale,
        max: (qmax - zp) * scale,
        scale,
        inv_scale,
    }
}

/// Clamps as Eigen's `cwiseMin(max).cwiseMax(min)` does.
#[inline(always)]
fn clamp(x: f32, n: &Nudged) -> f32 {
    let lo = if x < n.max { x } else { n.max };
    if lo > n.min {
        lo
    } else {
        n.min
    }
}

/// Quantizes `xs` into `out` (the `Args`/`PerChannel` form: times the
/// inverse scale), reading every `stride`-th element from `offset`.
fn quantize_mul(xs: &[f32], out: &mut [f32], n: &Nudged, offset: usize, stride: usize) {
    let quant_zero = (-n.min * n.inv_scale + 0.5).floor();
    let mut i = offset;
    while i < xs.len() {
        let shifted = clamp(xs[i], n) - n.min;
        out[i] = ((shifted * n.inv_scale - quant_zero) + 0.5).floor() * n.scale;
        i += stride;
    }
}

/// `FakeQuantWithMinMaxArgs`: `min < max` is required (checked here).
pub fn fake_quant_args(x: &Tensor, min: f32, max: f32, bits: QuantBits) -> Result<Tensor> {
    check_args_range(min, max)?;
    let xs = float_input("FakeQuantWithMinMaxArgs", x, "inputs")?;
    let n = nudge(min, max, bits);
    let mut out = vec![0f32; xs.len()];
    quantize_mul(xs, &mut out, &n, 0, 1);
    Tensor::from_vec(x.shape().clone(), out)
}

/// `FakeQuantWithMinMaxArgsGradient`: `gradients` where the input lies in
/// the nudged range, zero (`g * 0`) elsewhere.
pub fn fake_quant_args_gradient(
    g: &Tensor,
    x: &Tensor,
    min: f32,
    max: f32,
    bits: QuantBits,
) -> Result<Tensor> {
    const OP: &str = "FakeQuantWithMinMaxArgsGradient";
    check_args_range(min, max)?;
    let (gs, xs) = grad_inputs(OP, g, x)?;
    let n = nudge(min, max, bits);
    let out = gs
        .iter()
        .zip(xs)
        .map(|(&gv, &xv)| gv * in_range(xv, &n))
        .collect();
    Tensor::from_vec(x.shape().clone(), out)
}

fn check_args_range(min: f32, max: f32) -> Result<()> {
    if min >= max {
        return Err(Error::invalid_argument(format!(
            "min has to be smaller than max, was: {min} >= {max}"
        )));
    }
    Ok(())
}

#[inline(always)]
fn in_range(x: f32, n: &Nudged) -> f32 {
    if x >= n.min && x <= n.max {
        1.0
    } else {
        0.0
    }
}

fn float_input<'a>(op: &str, t: &'a Tensor, what: &str) -> Result<&'a [f32]> {
    t.as_slice::<f32>().map_err(|_| {
        Error::invalid_argument(format!("{op}: {what} must be float32, got {}", t.dtype()))
    })
}

fn grad_inputs<'a>(op: &str, g: &'a Tensor, x: &'a Tensor) -> Result<(&'a [f32], &'a [f32])> {
    let gs = float_input(op, g, "gradients")?;
    let xs = float_input(op, x, "inputs")?;
    if g.dims() != x.dims() {
        return Err(Error::invalid_argument(format!(
            "{op}: gradients and inputs must have one shape: {} vs. {}",
            g.shape(),
            x.shape()
        )));
    }
    Ok((gs, xs))
}

fn scalar_input(op: &str, t: &Tensor, what: &str) -> Result<f32> {
    if t.rank() != 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: `{what}` must be rank 0 but is rank {}",
            t.rank()
        )));
    }
    Ok(float_input(op, t, what)?[0])
}

/// `FakeQuantWithMinMaxVars` (`min` and `max` scalar tensors).
pub fn fake_quant_vars(x: &Tensor, min: &Tensor, max: &Tensor, bits: QuantBits) -> Result<Tensor> {
    const OP: &str = "FakeQuantWithMinMaxVars";
    let xs = float_input(OP, x, "inputs")?;
    let (lo, hi) = (scalar_input(OP, min, "min")?, scalar_input(OP, max, "max")?);
    if lo == 0.0 && hi == 0.0 {
        return Ok(Tensor::zeros(crate::DType::Float32, x.shape().clone()));
    }
    let n = nudge(lo, hi, bits);
    let quant_zero = (-n.min * n.inv_scale + 0.5).floor();
    let out = xs
        .iter()
        .map(|&v| ((((clamp(v, &n) - n.min) / n.scale) - quant_zero) + 0.5).floor() * n.scale)
        .collect();
    Tensor::from_vec(x.shape().clone(), out)
}

/// Accumulates one channel's gradients: `dx` in place, and the sums of
/// `g` below and above the nudged range.
fn channel_grad(
    gs: &[f32],
    xs: &[f32],
    dx: &mut [f32],
    n: &Nudged,
    offset: usize,
    stride: usize,
) -> (f32, f32) {
    let (mut below, mut above) = (0f32, 0f32);
    let mut i = offset;
    while i < xs.len() {
        let (gv, xv) = (gs[i], xs[i]);
        dx[i] = gv * in_range(xv, n);
        below += gv * if xv < n.min { 1.0 } else { 0.0 };
        above += gv * if xv > n.max { 1.0 } else { 0.0 };
        i += stride;
    }
    (below, above)
}

/// `FakeQuantWithMinMaxVarsGradient`: `(dx, dmin, dmax)`, where `dmin` and
/// `dmax` sum the gradients of inputs below and above the nudged range.
pub fn fake_quant_vars_gradient(
    g: &Tensor,
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    bits: QuantBits,
) -> Result<(Tensor, Tensor, Tensor)> {
    const OP: &str = "FakeQuantWithMinMaxVarsGradient";
    let (gs, xs) = grad_inputs(OP, g, x)?;
    let (lo, hi) = (scalar_input(OP, min, "min")?, scalar_input(OP, max, "max")?);
    if lo == 0.0 && hi == 0.0 {
        return Ok((g.clone(), Tensor::scalar(0f32), Tensor::scalar(0f32)));
    }
    let n = nudge(lo, hi, bits);
    let mut dx = vec![0f32; xs.len()];
    let (below, above) = channel_grad(gs, xs, &mut dx, &n, 0, 1);
    Ok((
        Tensor::from_vec(x.shape().clone(), dx)?,
        Tensor::scalar(below),
        Tensor::scalar(above),
    ))
}

fn per_channel_ranges<'a>(
    op: &str,
    x: &Tensor,
    min: &'a Tensor,
    max: &'a Tensor,
) -> Result<(usize, &'a [f32], &'a [f32])> {
    let depth = match x.dims().last() {
        Some(&d) if (1..=4).contains(&x.rank()) => d,
        _ => {
            return Err(Error::invalid_argument(format!(
                "{op}: inputs must have rank 1 to 4, got shape {}",
                x.shape()
            )))
        }
    };
    for (t, what) in [(min, "min"), (max, "max")] {
        if t.rank() != 1 {
            return Err(Error::invalid_argument(format!(
                "{op}: `{what}` must be rank 1 but is rank {}",
                t.rank()
            )));
        }
        if t.num_elements() != depth {
            return Err(Error::invalid_argument(format!(
                "{what} has incorrect size, expected {depth} was {}",
                t.num_elements()
            )));
        }
    }
    Ok((
        depth,
        float_input(op, min, "min")?,
        float_input(op, max, "max")?,
    ))
}

/// `FakeQuantWithMinMaxVarsPerChannel`: one range per element of the last
/// dimension.
pub fn fake_quant_per_channel(
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    bits: QuantBits,
) -> Result<Tensor> {
    const OP: &str = "FakeQuantWithMinMaxVarsPerChannel";
    let xs = float_input(OP, x, "inputs")?;
    let (depth, lo, hi) = per_channel_ranges(OP, x, min, max)?;
    let mut out = vec![0f32; xs.len()];
    for c in 0..depth {
        if lo[c] == 0.0 && hi[c] == 0.0 {
            continue; // zeros already
        }
        let n = nudge(lo[c], hi[c], bits);
        quantize_mul(xs, &mut out, &n, c, depth);
    }
    Tensor::from_vec(x.shape().clone(), out)
}

/// `FakeQuantWithMinMaxVarsPerChannelGradient`: `(dx, dmin, dmax)` with
/// `dmin`/`dmax` of the channel count.
pub fn fake_quant_per_channel_gradient(
    g: &Tensor,
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    bits: QuantBits,
) -> Result<(Tensor, Tensor, Tensor)> {
    const OP: &str = "FakeQuantWithMinMaxVarsPerChannelGradient";
    let (gs, xs) = grad_inputs(OP, g, x)?;
    let (depth, lo, hi) = per_channel_ranges(OP, x, min, max)?;
    let mut dx = vec![0f32; xs.len()];
    let (mut dmin, mut dmax) = (vec![0f32; depth], vec![0f32; depth]);
    for c in 0..depth {
        if lo[c] == 0.0 && hi[c] == 0.0 {
            let mut i = c;
            while i < gs.len() {
                dx[i] = gs[i];
                i += depth;
            }
            continue;
        }
        let n = nudge(lo[c], hi[c], bits);
        (dmin[c], dmax[c]) = channel_grad(gs, xs, &mut dx, &n, c, depth);
    }
    Ok((
        Tensor::from_vec(x.shape().clone(), dx)?,
        Tensor::vector(dmin),
        Tensor::vector(dmax),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits8() -> QuantBits {
        QuantBits::new("t", 8, false).unwrap()
    }

    #[test]
    fn nudge_puts_zero_on_the_grid() {
        let n = nudge(-0.1, 1.0, bits8());
        // zero point 0.1/scale = 23.18 rounds to 23: the range moves so 0 is level 23.
        let zp = -n.min / n.scale;
        assert!((zp - 23.0).abs() < 1e-4, "{n:?}");
        assert!((n.max - n.min - 255.0 * n.scale).abs() < 1e-5);
        // A range entirely above zero is moved to start at zero.
        let n = nudge(0.5, 2.0, bits8());
        assert_eq!(n.min, 0.0);
    }

    #[test]
    fn quantizes_onto_the_grid_and_clamps() {
        let x = Tensor::vector(vec![-8.0f32, -7.0, 0.0, 0.01, 3.0, 6.0, 9.0]);
        let y = fake_quant_args(&x, -6.0, 6.0, bits8()).unwrap();
        let ys = y.as_slice::<f32>().unwrap().to_vec();
        let n = nudge(-6.0, 6.0, bits8());
        assert_eq!(ys[0], ys[1]);
        assert_eq!(ys[2], 0.0);
        for v in &ys {
            let level = (v - n.min) / n.scale;
            assert!((level - level.round()).abs() < 1e-3, "{v} off the grid");
        }
        assert!(ys[6] <= n.max + 1e-6);
    }

    #[test]
    fn errors_name_the_problem() {
        let x = Tensor::vector(vec![1.0f32]);
        let e = fake_quant_args(&x, 1.0, 1.0, bits8()).unwrap_err();
        assert!(e.to_string().contains("min has to be smaller than max"));
        assert!(QuantBits::new("FakeQuantWithMinMaxArgs", 17, false)
            .unwrap_err()
            .to_string()
            .contains("num_bits must be between 2 and 16"));
        let m = Tensor::vector(vec![0.0f32]);
        let e = fake_quant_vars(&x, &m, &m, bits8()).unwrap_err();
        assert!(e.to_string().contains("`min` must be rank 0"));
        let x2 = Tensor::from_vec(vec![2, 3], vec![0f32; 6]).unwrap();
        let two = Tensor::vector(vec![0.0f32, 1.0]);
        let e = fake_quant_per_channel(&x2, &two, &two, bits8()).unwrap_err();
        assert!(e
            .to_string()
            .contains("min has incorrect size, expected 3 was 2"));
    }

    #[test]
    fn vars_gradient_splits_by_range_and_zero_range_passes_through() {
        let x = Tensor::vector(vec![-9.0f32, -1.0, 0.5, 8.0, 10.0]);
        let g = Tensor::vector(vec![1.0f32, 2.0, 3.0, 4.0, 5.0]);
        let (lo, hi) = (Tensor::scalar(-6.0f32), Tensor::scalar(6.0f32));
        let (dx, dmin, dmax) = fake_quant_vars_gradient(&g, &x, &lo, &hi, bits8()).unwrap();
        assert_eq!(dx.as_slice::<f32>().unwrap(), &[0.0, 2.0, 3.0, 0.0, 0.0]);
        assert_eq!(dmin.scalar_f64().unwrap(), 1.0);
        assert_eq!(dmax.scalar_f64().unwrap(), 9.0);
        let z = Tensor::scalar(0.0f32);
        let (dx, _, _) = fake_quant_vars_gradient(&g, &x, &z, &z, bits8()).unwrap();
        assert_eq!(dx.as_slice::<f32>().unwrap(), g.as_slice::<f32>().unwrap());
        let y = fake_quant_vars(&x, &z, &z, bits8()).unwrap();
        assert!(y.as_slice::<f32>().unwrap().iter().all(|&v| v == 0.0));
    }

    #[test]
    fn per_channel_matches_vars_channel_by_channel() {
        let xs: Vec<f32> = (0..12).map(|i| i as f32 * 0.7 - 4.0).collect();
        let x = Tensor::from_vec(vec![4, 3], xs.clone()).unwrap();
        let lo = Tensor::vector(vec![-2.0f32, -5.0, 0.0]);
        let hi = Tensor::vector(vec![2.0f32, 1.0, 3.0]);
        let y = fake_quant_per_channel(&x, &lo, &hi, bits8()).unwrap();
        let y = y.as_slice::<f32>().unwrap();
        for c in 0..3 {
            let col: Vec<f32> = (0..4).map(|r| xs[r * 3 + c]).collect();
            let n = nudge([-2.0, -5.0, 0.0][c], [2.0, 1.0, 3.0][c], bits8());
            let mut want = vec![0f32; 4];
            quantize_mul(&col, &mut want, &n, 0, 1);
            for (r, w) in want.iter().enumerate() {
                assert_eq!(y[r * 3 + c], *w);
            }
        }
    }
}
