//! Kernels of the FFT ops (`ferroflow_tensor::kernels::fft`). Each node's
//! kernel keeps its own FFT plans, made on its first run and reused after.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::fft::{self, FftPlans};
use ferroflow_tensor::{bail, ensure, DType, Result, Tensor};

/// `fft_length` of a 1/2/3-D real transform: an int32 vector of `rank`
/// entries (TensorFlow's check and message).
fn fft_length(t: &Tensor, rank: usize) -> Result<Vec<i64>> {
    if t.rank() != 1 || t.dims()[0] != rank {
        bail!(invalid_argument, "fft_length must have shape [{rank}]");
    }
    t.to_i64_vec()
}

/// `fft_length` and `axes` of an N-D transform, checked as TensorFlow's
/// kernel does; the transformed axes must be the innermost ones, in order.
fn nd_lengths(input: &Tensor, fft_length: &Tensor, axes: &Tensor) -> Result<Vec<i64>> {
    ensure!(
        axes.rank() == 1,
        invalid_argument,
        "axes must be a vector, got shape {:?}",
        axes.dims()
    );
    let axes = axes.to_i64_vec()?;
    let k = axes.len();
    let rank = input.rank() as i64;
    if input.rank() < k {
        let dims: Vec<String> = input.dims().iter().map(usize::to_string).collect();
        bail!(
            invalid_argument,
            "Input must have rank of at least {k} but got: [{}]",
            dims.join(",")
        );
    }
    ensure!(
        k != 0,
        invalid_argument,
        "axes must name at least one axis to transform"
    );
    let norm: Vec<i64> = axes
        .iter()
        .map(|&a| if a < 0 { a + rank } else { a })
        .collect();
    if norm.windows(2).any(|w| w[0] + 1 != w[1]) {
        bail!(invalid_argument, "axes must be successive and ascending.");
    }
    ensure!(
        norm[k - 1] == rank - 1,
        invalid_argument,
        "The last axis to perform transform on must be -1."
    );
    if fft_length.rank() != 1 || fft_length.dims()[0] != k {
        let got = fft_length.dims().first().copied().unwrap_or(0);
        bail!(
            invalid_argument,
            "fft_length must have shape [{k}], but got: {got}."
        );
    }
    fft_length.to_i64_vec()
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for (op, rank, inverse) in [
        ("FFT", 1, false),
        ("IFFT", 1, true),
        ("FFT2D", 2, false),
        ("IFFT2D", 2, true),
        ("FFT3D", 3, false),
        ("IFFT3D", 3, true),
    ] {
        reg(
            op,
            factory(move |_| {
                let plans = FftPlans::default();
                boxed(move |ctx| {
                    let x = ctx.take_input(0)?;
                    let y = fft::fft(&plans, op, x, rank, inverse)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (op, rank, forward) in [
        ("RFFT", 1, true),
        ("RFFT2D", 2, true),
        ("RFFT3D", 3, true),
        ("IRFFT", 1, false),
        ("IRFFT2D", 2, false),
        ("IRFFT3D", 3, false),
    ] {
        reg(
            op,
            factory(move |init| {
                let out = if forward {
                    init.node.attrs.dtype_or("Tcomplex", DType::Complex64)?
                } else {
                    init.node.attrs.dtype_or("Treal", DType::Float32)?
                };
                let plans = FftPlans::default();
                boxed(move |ctx| {
                    let lengths = fft_length(ctx.input(1)?, rank)?;
                    let x = ctx.input(0)?;
                    let y = if forward {
                        fft::rfft(&plans, op, x, &lengths, out)?
                    } else {
                        fft::irfft(&plans, op, x, &lengths, out)?
                    };
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (op, inverse) in [("FFTND", false), ("IFFTND", true)] {
        reg(
            op,
            factory(move |_| {
                let plans = FftPlans::default();
                boxed(move |ctx| {
                    let lengths = nd_lengths(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?)?;
                    let x = ctx.take_input(0)?;
                    let y = fft::fft_nd(&plans, op, x, &lengths, inverse)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (op, forward) in [("RFFTND", true), ("IRFFTND", false)] {
        reg(
            op,
            factory(move |init| {
                let out = if forward {
                    init.node.attrs.dtype_or("Tcomplex", DType::Complex64)?
                } else {
                    init.node.attrs.dtype_or("Treal", DType::Float32)?
                };
                let plans = FftPlans::default();
                boxed(move |ctx| {
                    let x = ctx.input(0)?;
                    let lengths = nd_lengths(x, ctx.input(1)?, ctx.input(2)?)?;
                    let y = if forward {
                        fft::rfft(&plans, op, x, &lengths, out)?
                    } else {
                        fft::irfft(&plans, op, x, &lengths, out)?
                    };
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
}
