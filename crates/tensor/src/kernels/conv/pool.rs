//! 2-D pooling over NHWC tensors: `MaxPool`, `MaxPoolGrad`,
//! `MaxPoolGradGrad`, `AvgPool` and `AvgPoolGrad`, and the window geometry
//! (`PoolGeom`) the argmax and fractional poolings reuse.
//!
//! Forward kernels split output rows across threads; gradients give each
//! image to one thread, which adds into it in a fixed order, so results do
//! not depend on the thread count.

use super::{dims4, float_dispatch, four, same_dtype, to_f32, windowed_output, Lowest, Padding};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::cast;
use crate::kernels::parallel::{for_rows, zeroed};
use crate::kernels::scalar::Scalar;
use crate::tensor::Tensor;

/// The attributes of a 2-D pooling op (NHWC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool2dParams {
    /// Window size of the four NHWC dimensions.
    pub ksize: [usize; 4],
    /// Strides of the four NHWC dimensions.
    pub strides: [usize; 4],
    pub padding: Padding,
}

impl Pool2dParams {
    /// Parses the `ksize`, `strides`, `padding` and `explicit_paddings`
    /// attributes (construction-time errors).
    pub fn parse(
        op: &str,
        ksize: &[i64],
        strides: &[i64],
        padding: &str,
        explicit: &[i64],
    ) -> Result<Pool2dParams> {
        if ksize.len() != 4 || strides.len() != 4 {
            return Err(Error::value(format!(
                "{op} requires ksize and strides to have 4 values each, but got ksize={ksize:?} strides={strides:?}"
            )));
        }
        if let Some(i) = ksize.iter().position(|&v| v <= 0) {
            return Err(Error::value(format!(
                "{op}: sliding window ksize for dimension {i} must be positive, but got {}",
                ksize[i]
            )));
        }
        if let Some(i) = strides.iter().position(|&v| v <= 0) {
            return Err(Error::value(format!(
                "{op}: sliding window stride for dimension {i} must be positive, but got {}",
                strides[i]
            )));
        }
        Ok(Pool2dParams {
            ksize: four(op, "ksize", ksize)?,
            strides: four(op, "stride", strides)?,
            padding: Padding::parse(op, padding, explicit)?,
        })
    }

    /// The window geometry over an NHWC `input` shape; typed errors name `op`.
    pub(in crate::kernels) fn geom(&self, op: &str, input: &[usize]) -> Result<PoolGeom> {
        let [n, h, w, c] = dims4(op, "input", input)
            .map_err(|_| Error::invalid_argument(format!("{op}: input must be 4-dimensional")))?;
        let (k, s) = (self.ksize, self.strides);
        if k[0] != 1 || s[0] != 1 {
            return Err(Error::unimplemented(
                "Pooling is not yet supported on the batch dimension.",
            ));
        }
        if k[3] != 1 || s[3] != 1 {
            return Err(Error::unimplemented(format!(
                "{op}: pooling across the depth dimension is not supported"
            )));
        }
        let size = |dim: usize, input: usize, k: usize, s: usize| {
            windowed_output(input, k, s, 1, self.padding, dim).map_err(|out| {
                Error::invalid_argument(format!(
                    "{op}: Computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {k}, stride: {s}]"
                ))
            })
        };
        let (oh, pt) = size(0, h, k[1], s[1])?;
        let (ow, pl) = size(1, w, k[2], s[2])?;
        Ok(PoolGeom {
            n,
            h,
            w,
            c,
            kh: k[1],
            kw: k[2],
            sh: s[1],
            sw: s[2],
            pt,
            pl,
            oh,
            ow,
        })
    }
}

#[derive(Clone, Copy, Debug)]
/// A pooling window's geometry: input, window, strides, leading padding, output.
pub(in crate::kernels) struct PoolGeom {
    pub(in crate::kernels) n: usize,
    pub(in crate::kernels) h: usize,
    pub(in crate::kernels) w: usize,
    pub(in crate::kernels) c: usize,
    pub(in crate::kernels) kh: usize,
    pub(in crate::kernels) kw: usize,
    pub(in crate::kernels) sh: usize,
    pub(in crate::kernels) sw: usize,
    pub(in crate::kernels) pt: usize,
    pub(in crate::kernels) pl: usize,
    pub(in crate::kernels) oh: usize,
    pub(in crate::kernels) ow: usize,
}

impl PoolGeom {
    fn out_dims(&self) -> [usize; 4] {
        [self.n, self.oh, self.ow, self.c]
    }

    fn in_dims(&self) -> [usize; 4] {
        [self.n, self.h, self.w, self.c]
    }

    /// The in-bounds input rows and columns of output pixel `(oy, ox)`.
    #[inline]
    fn window(&self, oy: usize, ox: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let y0 = (oy * self.sh) as isize - self.pt as isize;
        let x0 = (ox * self.sw) as isize - self.pl as isize;
        let ys = y0.max(0) as usize..((y0 + self.kh as isize).max(0) as usize).min(self.h);
        let xs = x0.max(0) as usize..((x0 + self.kw as isize).max(0) as usize).min(self.w);
        (ys, xs)
    }

    /// Runs `f(oy, ox, out_pixel, image)` for every output pixel, in
    /// parallel over output rows when large.
    fn for_out_pixels<T: Send + Sync, O: Send>(
        &self,
        x: &[T],
        out: &mut [O],
        f: impl Fn(usize, usize, &mut [O], &[T]) + Sync,
    ) {
        let (c, img) = (self.c, self.h * self.w * self.c);
        for_rows(out, self.ow * c, |row0, chunk| {
            for (r, orow) in chunk.chunks_mut(self.ow * c).enumerate() {
                let (b, oy) = ((row0 + r) / self.oh, (row0 + r) % self.oh);
                let xb = &x[b * img..][..img];
                for (ox, o) in orow.chunks_mut(c).enumerate() {
                    f(oy, ox, o, xb);
                }
            }
        });
    }

    /// Runs `f(b, image_gradient)` for every image, in parallel when large.
    /// Each image is written by one thread in a fixed order.
    fn for_images<T: Send>(&self, dx: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
        let img = self.h * self.w * self.c;
        if img == 0 {
            return;
        }
        if dx.len() >= crate::kernels::parallel::PARALLEL_THRESHOLD && self.n > 1 {
            crate::team::for_each_chunk_mut(dx, img, f);
        } else {
            dx.chunks_mut(img).enumerate().for_each(|(b, d)| f(b, d));
        }
    }

    /// Finds, for each channel of output pixel `(oy, ox)` of image `xb`, the
    /// first maximum of its window as TensorFlow's MaxPoolGrad picks it (the
    /// first element, then any strictly greater one, so NaNs only win when
    /// first): `s.arg[ch]` is its window position, whose pixel offset is
    /// `s.offs[pos]`. False for a window with no element inside the input.
    fn argmax<T: Copy + PartialOrd>(
        &self,
        xb: &[T],
        oy: usize,
        ox: usize,
        s: &mut ArgMax<T>,
    ) -> bool {
        let c = self.c;
        let (ys, xs) = self.window(oy, ox);
        s.offs.clear();
        for y in ys {
            s.offs.extend(xs.clone().map(|x| (y * self.w + x) * c));
        }
        let Some(&first) = s.offs.first() else {
            return false;
        };
        s.best.clear();
        s.best.extend_from_slice(&xb[first..first + c]);
        s.arg.clear();
        s.arg.resize(c, 0);
        for (k, &base) in s.offs.iter().enumerate().skip(1) {
            let k = k as u32;
            let lanes = s.best.iter_mut().zip(s.arg.iter_mut());
            for ((b, a), &v) in lanes.zip(&xb[base..base + c]) {
                // Selects, not branches, with 32-bit positions, and the
                // position picked by a mask rather than a second select
                // (LLVM turned that one into per-lane branches and stores).
                let gt = v > *b;
                *b = if gt { v } else { *b };
                let mask = (gt as u32).wrapping_neg();
                *a ^= (*a ^ k) & mask;
            }
        }
        true
    }
}

/// Scratch space of [`PoolGeom::argmax`].
struct ArgMax<T> {
    best: Vec<T>,
    arg: Vec<u32>,
    offs: Vec<usize>,
}

impl<T> ArgMax<T> {
    fn new() -> ArgMax<T> {
        ArgMax {
            best: Vec::new(),
            arg: Vec::new(),
            offs: Vec::new(),
        }
    }
}

fn max_pool_typed<T: Lowest>(x: &[T], g: &PoolGeom) -> Vec<T> {
    let mut out: Vec<T> = zeroed(g.n * g.oh * g.ow * g.c);
    if out.is_empty() {
        return out;
    }
    g.for_out_pixels(x, &mut out, |oy, ox, o, xb| {
        o.fill(T::lowest());
        let (ys, xs) = g.window(oy, ox);
        for y in ys {
            for xx in xs.clone() {
                let src = &xb[(y * g.w + xx) * g.c..][..g.c];
                for (m, &v) in o.iter_mut().zip(src) {
                    // A select, not a branch: vectorises (NaN never wins).
                    *m = if v > *m { v } else { *m };
                }
            }
        }
    });
    out
}

fn max_pool_grad_typed<T: Scalar + Sync + Send>(x: &[T], dy: &[T], g: &PoolGeom) -> Vec<T> {
    let mut dx: Vec<T> = zeroed(g.n * g.h * g.w * g.c);
    let (img, oimg) = (g.h * g.w * g.c, g.oh * g.ow * g.c);
    g.for_images(&mut dx, |b, dxb| {
        let xb = &x[b * img..][..img];
        let mut s = ArgMax::new();
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                if !g.argmax(xb, oy, ox, &mut s) {
                    continue;
                }
                let gy = &dy[b * oimg + (oy * g.ow + ox) * g.c..][..g.c];
                for (ch, (&a, &v)) in s.arg.iter().zip(gy).enumerate() {
                    let i = s.offs[a as usize] + ch;
                    dxb[i] = dxb[i].add(v);
                }
            }
        }
    });
    dx
}

fn max_pool_grad_grad_typed<T: Scalar + Sync + Send>(x: &[T], gg: &[T], g: &PoolGeom) -> Vec<T> {
    let mut out: Vec<T> = zeroed(g.n * g.oh * g.ow * g.c);
    if out.is_empty() {
        return out;
    }
    let (img, c) = (g.h * g.w * g.c, g.c);
    for_rows(&mut out, g.ow * c, |row0, chunk| {
        let mut s = ArgMax::new();
        for (r, orow) in chunk.chunks_mut(g.ow * c).enumerate() {
            let (b, oy) = ((row0 + r) / g.oh, (row0 + r) % g.oh);
            let (xb, gb) = (&x[b * img..][..img], &gg[b * img..][..img]);
            for (ox, o) in orow.chunks_mut(c).enumerate() {
                if !g.argmax(xb, oy, ox, &mut s) {
                    o.fill(T::zero());
                    continue;
                }
                for (ch, (v, &a)) in o.iter_mut().zip(&s.arg).enumerate() {
                    *v = gb[s.offs[a as usize] + ch];
                }
            }
        }
    });
    out
}

fn avg_pool_typed<T: Scalar + Sync + Send>(x: &[T], g: &PoolGeom) -> Vec<T> {
    let mut out: Vec<T> = zeroed(g.n * g.oh * g.ow * g.c);
    if out.is_empty() {
        return out;
    }
    g.for_out_pixels(x, &mut out, |oy, ox, o, xb| {
        let (ys, xs) = g.window(oy, ox);
        let count = ys.len() * xs.len();
        for y in ys {
            for xx in xs.clone() {
                let src = &xb[(y * g.w + xx) * g.c..][..g.c];
                for (m, &v) in o.iter_mut().zip(src) {
                    *m = m.add(v);
                }
            }
        }
        let n = T::from_f64(count as f64);
        o.iter_mut().for_each(|m| *m = m.div(n));
    });
    out
}

fn avg_pool_grad_typed<T: Scalar + Sync + Send>(dy: &[T], g: &PoolGeom) -> Vec<T> {
    let mut dx: Vec<T> = zeroed(g.n * g.h * g.w * g.c);
    let oimg = g.oh * g.ow * g.c;
    g.for_images(&mut dx, |b, dxb| {
        let mut share = vec![T::zero(); g.c];
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let (ys, xs) = g.window(oy, ox);
                let n = T::from_f64((ys.len() * xs.len()) as f64);
                let gy = &dy[b * oimg + (oy * g.ow + ox) * g.c..][..g.c];
                for (s, &v) in share.iter_mut().zip(gy) {
                    *s = v.div(n);
                }
                for y in ys {
                    for xx in xs.clone() {
                        let dst = &mut dxb[(y * g.w + xx) * g.c..][..g.c];
                        for (d, &s) in dst.iter_mut().zip(&share) {
                            *d = d.add(s);
                        }
                    }
                }
            }
        }
    });
    dx
}

fn expect_dims(op: &str, what: &str, t: &Tensor, want: [usize; 4]) -> Result<()> {
    if t.dims() != want {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must have shape {}, got {}",
            crate::Shape::new(&want),
            t.shape()
        )));
    }
    Ok(())
}

/// `MaxPool`: the maximum of each window (padding never wins).
pub fn max_pool(input: &Tensor, p: &Pool2dParams) -> Result<Tensor> {
    let op = "MaxPool";
    let g = p.geom(op, input.dims())?;
    let shape = g.out_dims();
    macro_rules! go {
        ($t:ty) => {
            Tensor::from_vec(shape, max_pool_typed::<$t>(input.as_slice()?, &g))
        };
    }
    match input.dtype() {
        DType::Float32 => go!(f32),
        DType::Float64 => go!(f64),
        DType::Int8 => go!(i8),
        DType::Int16 => go!(i16),
        DType::Int32 => go!(i32),
        DType::Int64 => go!(i64),
        DType::UInt8 => go!(u8),
        DType::UInt16 => go!(u16),
        // Exact: f16/bf16 values are f32 values, and the max picks one.
        d @ (DType::Float16 | DType::BFloat16) => cast(&max_pool(&to_f32(input)?, p)?, d),
        d => Err(Error::invalid_argument(format!(
            "{op} is not supported for {d} tensors"
        ))),
    }
}

/// `MaxPoolGrad`: each window's output gradient goes to the first maximum
/// of its window (TensorFlow's tie rule); `orig_output` only fixes the shape.
pub fn max_pool_grad(
    orig_input: &Tensor,
    orig_output: &Tensor,
    grad: &Tensor,
    p: &Pool2dParams,
) -> Result<Tensor> {
    let op = "MaxPoolGrad";
    let g = p.geom(op, orig_input.dims())?;
    expect_dims(op, "orig_output", orig_output, g.out_dims())?;
    expect_dims(op, "grad", grad, g.out_dims())?;
    same_dtype(op, orig_input, grad)?;
    float_dispatch!(
        op,
        grad.dtype(),
        g.in_dims(),
        max_pool_grad(
            &to_f32(orig_input)?,
            &to_f32(orig_output)?,
            &to_f32(grad)?,
            p
        ),
        |T| max_pool_grad_typed::<T>(orig_input.as_slice()?, grad.as_slice()?, &g)
    )
}

/// `MaxPoolGradGrad`: for each window, the incoming gradient (shaped like
/// the input) at the window's first maximum.
pub fn max_pool_grad_grad(
    orig_input: &Tensor,
    orig_output: &Tensor,
    grad: &Tensor,
    p: &Pool2dParams,
) -> Result<Tensor> {
    let op = "MaxPoolGradGrad";
    let g = p.geom(op, orig_input.dims())?;
    expect_dims(op, "orig_output", orig_output, g.out_dims())?;
    expect_dims(op, "grad", grad, g.in_dims())?;
    same_dtype(op, orig_input, grad)?;
    float_dispatch!(
        op,
        grad.dtype(),
        g.out_dims(),
        max_pool_grad_grad(
            &to_f32(orig_input)?,
            &to_f32(orig_output)?,
            &to_f32(grad)?,
            p
        ),
        |T| max_pool_grad_grad_typed::<T>(orig_input.as_slice()?, grad.as_slice()?, &g)
    )
}

/// `AvgPool`: the mean of each window's in-bounds elements (SAME padding
/// divides by how many of the window's elements lie inside the input).
pub fn avg_pool(input: &Tensor, p: &Pool2dParams) -> Result<Tensor> {
    let op = "AvgPool";
    let g = p.geom(op, input.dims())?;
    float_dispatch!(
        op,
        input.dtype(),
        g.out_dims(),
        avg_pool(&to_f32(input)?, p),
        |T| avg_pool_typed::<T>(input.as_slice()?, &g)
    )
}

/// `AvgPoolGrad`: each window's gradient shared equally by its in-bounds
/// elements of an input of shape `orig_input_shape`.
pub fn avg_pool_grad(
    orig_input_shape: &[usize],
    grad: &Tensor,
    p: &Pool2dParams,
) -> Result<Tensor> {
    let op = "AvgPoolGrad";
    let g = p.geom(op, orig_input_shape)?;
    expect_dims(op, "grad", grad, g.out_dims())?;
    float_dispatch!(
        op,
        grad.dtype(),
        g.in_dims(),
        avg_pool_grad(orig_input_shape, &to_f32(grad)?, p),
        |T| avg_pool_grad_typed::<T>(grad.as_slice()?, &g)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_windows_ties_and_same_padding() {
        let p = |k: usize, s: usize, padding| Pool2dParams {
            ksize: [1, k, k, 1],
            strides: [1, s, s, 1],
            padding,
        };
        let x = Tensor::from_vec([1, 5, 5, 1], (1..=25).map(f64::from).collect()).unwrap();
        let a = avg_pool(&x, &p(3, 2, Padding::Same)).unwrap();
        assert_eq!(
            a.as_slice::<f64>().unwrap(),
            &[4.0, 5.5, 7.0, 11.5, 13.0, 14.5, 19.0, 20.5, 22.0]
        );
        let m = max_pool(&x, &p(2, 2, Padding::Valid)).unwrap();
        assert_eq!(m.as_slice::<f64>().unwrap(), &[7.0, 9.0, 17.0, 19.0]);
        // Ties: the first maximum of each window takes the gradient.
        let t = Tensor::from_vec(
            [1, 3, 3, 1],
            vec![0.0, 2.0, 2.0, 1.0, 2.0, 0.0, 0.0, 2.0, 1.0],
        )
        .unwrap();
        let q = p(2, 1, Padding::Valid);
        let y = max_pool(&t, &q).unwrap();
        let g = max_pool_grad(
            &t,
            &y,
            &Tensor::from_vec([1, 2, 2, 1], vec![1.0; 4]).unwrap(),
            &q,
        )
        .unwrap();
        assert_eq!(
            g.as_slice::<f64>().unwrap(),
            &[0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0]
        );
        // All -inf: the output is the lowest finite value, the gradient goes first.
        let inf = Tensor::from_vec([1, 1, 2, 1], vec![f32::NEG_INFINITY; 2]).unwrap();
        let q = Pool2dParams {
            ksize: [1, 1, 2, 1],
            strides: [1, 1, 1, 1],
            padding: Padding::Valid,
        };
        assert_eq!(
            max_pool(&inf, &q).unwrap().as_slice::<f32>().unwrap(),
            &[f32::MIN]
        );
    }
}
