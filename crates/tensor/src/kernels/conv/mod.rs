//! 2-D convolution and pooling over NHWC tensors: TensorFlow's `Conv2D`,
//! `Conv2DBackpropInput`, `Conv2DBackpropFilter`, `MaxPool`, `MaxPoolGrad`,
//! `MaxPoolGradGrad`, `AvgPool` and `AvgPoolGrad`.
//!
//! * this module: the window geometry every windowed kernel shares
//!   ([`Padding`], [`windowed_output`]) and the small helpers the other
//!   kernel files import (shape and dtype checks, partial sums, the
//!   half-precision dispatch macros, `Lowest`);
//! * `conv2d`: [`Conv2dParams`] and the convolution and its two gradients;
//! * `direct`: f32 convolutions without im2col on AVX-512;
//! * `gemm`: the strided GEMM each element type convolves with
//!   (`ConvScalar`, also used by the 3-D convolutions);
//! * `pool`: [`Pool2dParams`], the window walk, max and average pooling and
//!   their gradients.
//!
//! Every public item is re-exported here, so callers name
//! `kernels::conv::conv2d` or `kernels::conv::Pool2dParams` as before.
//!
//! Results are identical whatever the number of threads: work is split by
//! the problem's shape, never by the thread count (see `conv2d` and `pool`).

mod conv2d;
mod direct;
mod gemm;
mod pool;

pub use conv2d::{conv2d, conv2d_backprop_filter, conv2d_backprop_input, Conv2dParams};
pub(super) use gemm::ConvScalar;
pub(super) use pool::PoolGeom;
pub use pool::{
    avg_pool, avg_pool_grad, max_pool, max_pool_grad, max_pool_grad_grad, Pool2dParams,
};

use super::elementwise::cast;
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// How a windowed op pads its input (TensorFlow's `padding` attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    Valid,
    Same,
    /// Explicit `(before, after)` padding of the height and width dimensions.
    Explicit {
        h: (usize, usize),
        w: (usize, usize),
    },
}

impl Padding {
    /// Parses TensorFlow's `padding` and `explicit_paddings` attributes
    /// (`explicit_paddings` holds 8 numbers, a (before, after) pair per NHWC
    /// dimension). Errors are construction-time (`ValueError`) messages.
    pub fn parse(op: &str, padding: &str, explicit: &[i64]) -> Result<Padding> {
        match padding {
            "VALID" | "SAME" if !explicit.is_empty() => Err(Error::value(format!(
                "{op}: explicit_paddings must be empty if padding is not EXPLICIT, but got {explicit:?}"
            ))),
            "VALID" => Ok(Padding::Valid),
            "SAME" => Ok(Padding::Same),
            "EXPLICIT" => {
                if explicit.len() != 8 {
                    return Err(Error::value(format!(
                        "{op}: explicit_paddings must contain 8 values (a pair per dimension), but got {}",
                        explicit.len()
                    )));
                }
                if let Some(&p) = explicit.iter().find(|&&p| p < 0) {
                    return Err(Error::value(format!(
                        "{op}: all explicit paddings must be nonnegative, but got {p}"
                    )));
                }
                if explicit[..2] != [0, 0] || explicit[6..] != [0, 0] {
                    return Err(Error::value(format!(
                        "{op}: batch and depth dimensions must not be padded, but got explicit_paddings={explicit:?}"
                    )));
                }
                let e = |i: usize| explicit[i] as usize;
                Ok(Padding::Explicit {
                    h: (e(2), e(3)),
                    w: (e(4), e(5)),
                })
            }
            other => Err(Error::value(format!(
                "Attr 'padding' of '{op}' Op passed string '{other}' not in: \"SAME\", \"VALID\", \"EXPLICIT\"."
            ))),
        }
    }

    fn explicit(&self, dim: usize) -> (usize, usize) {
        match *self {
            Padding::Explicit { h, w } => {
                if dim == 0 {
                    h
                } else {
                    w
                }
            }
            _ => (0, 0),
        }
    }
}

/// TensorFlow's windowed output size (`GetWindowedOutputSizeVerbose`) of
/// spatial dimension `dim` (0: height, 1: width): `(output, pad_before)`, or
/// `Err(output)` with the negative size when the window does not fit.
pub fn windowed_output(
    input: usize,
    window: usize,
    stride: usize,
    dilation: usize,
    padding: Padding,
    dim: usize,
) -> std::result::Result<(usize, usize), i64> {
    let eff = (window.max(1) - 1) * dilation + 1;
    let (input, eff, stride) = (input as i64, eff as i64, stride.max(1) as i64);
    // Integer division truncates toward zero, as in TensorFlow's C++.
    let (out, before) = match padding {
        Padding::Valid => ((input - eff + stride) / stride, 0),
        Padding::Same => {
            let out = (input + stride - 1) / stride;
            let needed = ((out - 1) * stride + eff - input).max(0);
            (out, needed / 2)
        }
        Padding::Explicit { .. } => {
            let (b, a) = padding.explicit(dim);
            (
                (input + b as i64 + a as i64 - eff + stride) / stride,
                b as i64,
            )
        }
    };
    if out < 0 {
        return Err(out);
    }
    Ok((out as usize, before as usize))
}

fn four(op: &str, what: &str, v: &[i64]) -> Result<[usize; 4]> {
    if v.len() != 4 {
        return Err(Error::value(format!(
            "{op} requires the {what} attribute to contain 4 values, but got: {}",
            v.len()
        )));
    }
    Ok([v[0], v[1], v[2], v[3]].map(|x| x.max(0) as usize))
}

pub(super) fn dims4(op: &str, what: &str, d: &[usize]) -> Result<[usize; 4]> {
    if d.len() != 4 {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must be 4-dimensional: [{}]",
            d.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    Ok([d[0], d[1], d[2], d[3]])
}

/// The element-wise sum of per-task partial results, added in task order
/// (so the bits do not depend on the thread count); zeros when there are none.
pub(super) fn sum_partials<T: Scalar>(partials: Vec<Vec<T>>, size: usize) -> Vec<T> {
    let mut it = partials.into_iter();
    let mut total = it.next().unwrap_or_else(|| vec![T::zero(); size]);
    for p in it {
        for (t, v) in total.iter_mut().zip(p) {
            *t = t.add(v);
        }
    }
    total
}

pub(super) fn same_dtype(op: &str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::invalid_argument(format!(
            "{op}: the operands must have one dtype, got {} and {}",
            a.dtype(),
            b.dtype()
        )));
    }
    Ok(())
}

/// Runs a convolution kernel for f32/f64/i32 directly and for half types in f32.
macro_rules! conv_dispatch {
    ($op:expr, $dtype:expr, $shape:expr, $recurse:expr, |$t:ident| $body:expr) => {
        match $dtype {
            DType::Float32 => {
                type $t = f32;
                Tensor::from_vec($shape, $body)
            }
            DType::Float64 => {
                type $t = f64;
                Tensor::from_vec($shape, $body)
            }
            DType::Int32 => {
                type $t = i32;
                Tensor::from_vec($shape, $body)
            }
            d @ (DType::Float16 | DType::BFloat16) => cast(&$recurse?, d),
            d => Err(Error::invalid_argument(format!(
                "{} is not supported for {d} tensors",
                $op
            ))),
        }
    };
}
pub(super) use conv_dispatch;

pub(super) fn to_f32(t: &Tensor) -> Result<Tensor> {
    cast(t, DType::Float32)
}

/// The lowest finite value: where a max pool starts (TensorFlow's
/// `Eigen::NumTraits<T>::lowest()`, so an all `-inf` window gives it).
pub(super) trait Lowest: Scalar {
    /// The lowest finite value of the type.
    fn lowest() -> Self;
}

macro_rules! lowest {
    ($($t:ty),*) => {$(impl Lowest for $t { fn lowest() -> Self { <$t>::MIN } })*};
}
lowest!(f32, f64, i8, i16, i32, i64, u8, u16);

/// Runs a float pooling kernel for f32/f64 directly and half types in f32.
macro_rules! float_dispatch {
    ($op:expr, $dtype:expr, $shape:expr, $recurse:expr, |$t:ident| $body:expr) => {
        match $dtype {
            DType::Float32 => {
                type $t = f32;
                Tensor::from_vec($shape, $body)
            }
            DType::Float64 => {
                type $t = f64;
                Tensor::from_vec($shape, $body)
            }
            d @ (DType::Float16 | DType::BFloat16) => cast(&$recurse?, d),
            d => Err(Error::invalid_argument(format!(
                "{} is not supported for {d} tensors",
                $op
            ))),
        }
    };
}
pub(super) use float_dispatch;

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn params(s: usize, d: usize, padding: Padding) -> Conv2dParams {
        Conv2dParams {
            strides: [1, s, s, 1],
            dilations: [1, d, d, 1],
            padding,
        }
    }

    pub(super) fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 33) % 1000) as f64 / 250.0 - 2.0
            })
            .collect()
    }

    #[test]
    fn output_sizes_follow_tensorflow() {
        assert_eq!(windowed_output(5, 3, 2, 1, Padding::Same, 0), Ok((3, 1)));
        assert_eq!(windowed_output(6, 3, 2, 1, Padding::Same, 0), Ok((3, 0)));
        assert_eq!(windowed_output(5, 3, 2, 1, Padding::Valid, 0), Ok((2, 0)));
        assert_eq!(windowed_output(9, 3, 1, 2, Padding::Valid, 0), Ok((5, 0)));
        assert_eq!(windowed_output(2, 3, 1, 1, Padding::Valid, 0), Ok((0, 0)));
        assert_eq!(windowed_output(1, 3, 1, 1, Padding::Valid, 0), Err(-1));
        let e = Padding::Explicit {
            h: (1, 2),
            w: (0, 1),
        };
        assert_eq!(windowed_output(5, 3, 1, 1, e, 0), Ok((6, 1)));
        assert_eq!(windowed_output(5, 3, 1, 1, e, 1), Ok((4, 0)));
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        // Large enough for the parallel paths (PARALLEL_MACS, PARALLEL_THRESHOLD).
        let (xd, wd, p) = ([4, 24, 24, 8], [3, 3, 8, 16], params(1, 1, Padding::Same));
        let pd = [4, 64, 64, 8];
        let px = Tensor::from_vec(pd, values(pd.iter().product(), 9)).unwrap();
        let q = Pool2dParams {
            ksize: [1, 3, 3, 1],
            strides: [1, 2, 2, 1],
            padding: Padding::Same,
        };
        let x = Tensor::from_vec(
            xd,
            values(xd.iter().product(), 7)
                .iter()
                .map(|&v| v as f32)
                .collect(),
        )
        .unwrap();
        let w = Tensor::from_vec(
            wd,
            values(wd.iter().product(), 8)
                .iter()
                .map(|&v| v as f32)
                .collect(),
        )
        .unwrap();
        let run = || {
            let y = conv2d(&x, &w, &p).unwrap();
            let dw = conv2d_backprop_filter(&x, &wd, &y, &p).unwrap();
            let dx = conv2d_backprop_input(&xd, &w, &y, &p).unwrap();
            let m = max_pool(&px, &q).unwrap();
            let a = avg_pool(&px, &q).unwrap();
            let gm = max_pool_grad(&px, &m, &a, &q).unwrap();
            let ga = avg_pool_grad(&pd, &m, &q).unwrap();
            let f = |t: &Tensor| t.as_slice::<f32>().unwrap().to_vec();
            let d = |t: &Tensor| t.as_slice::<f64>().unwrap().to_vec();
            ((f(&y), f(&dw), f(&dx)), (d(&m), d(&a), d(&gm), d(&ga)))
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(run);
        let three = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
            .install(run);
        assert!(one == three);
    }
}
