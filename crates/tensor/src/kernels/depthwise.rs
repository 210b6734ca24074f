//! Depthwise 2-D convolution over NHWC tensors: TensorFlow's
//! `DepthwiseConv2dNative`, `DepthwiseConv2dNativeBackpropInput` and
//! `DepthwiseConv2dNativeBackpropFilter`.
//!
//! A depthwise filter `[kh, kw, C, M]` convolves each input channel `c` with
//! its own `M` filters; output channel `c * M + m` sees only input channel
//! `c`. The loops run over pixels and taps with the channels innermost, so
//! that one tap is an elementwise multiply-add of a contiguous input pixel
//! (`C` values) with a contiguous filter row (`C * M` values): the compiler
//! vectorizes it, with AVX2 chosen at run time for `f32`. No fused
//! multiply-add is used, so the AVX2 and scalar paths give identical bits.
//!
//! Work is split by output (or input) rows, each computed whole by one task,
//! and the filter gradient sums a fixed number of partial sums in a fixed
//! order: results do not depend on the thread count.

use super::conv::{dims4, same_dtype, sum_partials, to_f32, windowed_output, Conv2dParams};
use super::elementwise::cast;
use super::parallel::zeroed;
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Multiply-adds below which a kernel runs on the calling thread.
const PARALLEL_MACS: usize = 1 << 18;

/// Elements of output (or input gradient) per parallel task, about.
const TASK_ELEMS: usize = 1 << 14;

/// The filter gradient adds at most this many partial sums.
const MAX_PARTIALS: usize = 8;

/// The sizes of one depthwise convolution.
#[derive(Clone, Copy, Debug)]
struct Geom {
    n: usize,
    ih: usize,
    iw: usize,
    c: usize,
    m: usize,
    kh: usize,
    kw: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    pt: usize,
    pl: usize,
    oh: usize,
    ow: usize,
}

impl Geom {
    fn new(op: &str, input: [usize; 4], filter: [usize; 4], p: &Conv2dParams) -> Result<Geom> {
        p.check_runtime()?;
        let [n, ih, iw, c] = input;
        let [kh, kw, fc, m] = filter;
        if c != fc {
            return Err(Error::invalid_argument(format!(
                "{op}: input and filter must have the same depth: {c} vs {fc}"
            )));
        }
        let (sh, sw) = (p.strides[1], p.strides[2]);
        let (dh, dw) = (p.dilations[1], p.dilations[2]);
        let size = |dim: usize, input: usize, k: usize, s: usize, d: usize| {
            windowed_output(input, k, s, d, p.padding, dim).map_err(|out| {
                Error::invalid_argument(format!(
                    "{op}: Computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {}, stride: {s}]",
                    (k.max(1) - 1) * d + 1
                ))
            })
        };
        let (oh, pt) = size(0, ih, kh, sh, dh)?;
        let (ow, pl) = size(1, iw, kw, sw, dw)?;
        Ok(Geom {
            n,
            ih,
            iw,
            c,
            m,
            kh,
            kw,
            sh,
            sw,
            dh,
            dw,
            pt,
            pl,
            oh,
            ow,
        })
    }

    /// Output depth `C * M`.
    fn oc(&self) -> usize {
        self.c * self.m
    }

    fn macs(&self) -> usize {
        self.n * self.oh * self.ow * self.kh * self.kw * self.oc()
    }

    #[inline]
    fn in_y(&self, oy: usize, ky: usize) -> Option<usize> {
        (oy * self.sh + ky * self.dh)
            .checked_sub(self.pt)
            .filter(|&y| y < self.ih)
    }

    #[inline]
    fn in_x(&self, ox: usize, kx: usize) -> Option<usize> {
        (ox * self.sw + kx * self.dw)
            .checked_sub(self.pl)
            .filter(|&x| x < self.iw)
    }

    /// The output columns `ox` whose tap `kx` lands inside the input.
    #[inline]
    fn x_range(&self, kx: usize) -> std::ops::Range<usize> {
        let off = kx * self.dw;
        let lo = self.pl.saturating_sub(off).div_ceil(self.sw).min(self.ow);
        let hi = (self.iw + self.pl)
            .saturating_sub(off)
            .div_ceil(self.sw)
            .min(self.ow);
        lo..hi.max(lo)
    }

    /// The output coordinate whose tap at `k` (dilation `d`, stride `s`,
    /// padding `p`) reads input coordinate `i`, if there is one below `out`.
    #[inline]
    fn out_of(i: usize, k: usize, d: usize, s: usize, p: usize, out: usize) -> Option<usize> {
        let t = (i + p).checked_sub(k * d)?;
        (t % s == 0 && t / s < out).then_some(t / s)
    }

    /// Checks that `out_backprop` has the output shape this geometry computes.
    fn check_out_backprop(&self, op: &str, dy: [usize; 4]) -> Result<()> {
        let want = [self.n, self.oh, self.ow, self.oc()];
        if dy != want {
            return Err(Error::invalid_argument(format!(
                "{op}: out_backprop has shape {dy:?}, but the convolution's output has shape {want:?}"
            )));
        }
        Ok(())
    }
}

/// `acc += x * f` elementwise (one tap of a depth-multiplier-1 filter).
#[inline(always)]
fn fma_rows<T: Scalar>(acc: &mut [T], x: &[T], f: &[T]) {
    let n = acc.len().min(x.len()).min(f.len());
    let (acc, x, f) = (&mut acc[..n], &x[..n], &f[..n]);
    for i in 0..n {
        acc[i] = acc[i].add(x[i].mul(f[i]));
    }
}

/// One output row (`[ow, C * M]`, zeroed) of image `b`, output row `oy`.
///
/// Taps are the outer loops and the output pixels the inner one, over the
/// range of pixels whose tap lands inside the input (no per-pixel bounds
/// checks); each pixel still adds its taps in `(ky, kx)` order.
#[inline(always)]
fn forward_row<T: Scalar>(x: &[T], w: &[T], g: &Geom, b: usize, oy: usize, out: &mut [T]) {
    let (c, m, oc) = (g.c, g.m, g.oc());
    let img = &x[b * g.ih * g.iw * c..][..g.ih * g.iw * c];
    if c == 0 {
        return;
    }
    let step = g.sw * c;
    for ky in 0..g.kh {
        let Some(y) = g.in_y(oy, ky) else { continue };
        let xrow = &img[y * g.iw * c..][..g.iw * c];
        for kx in 0..g.kw {
            let xs = g.x_range(kx);
            if xs.is_empty() {
                continue;
            }
            let fr = &w[(ky * g.kw + kx) * oc..][..oc];
            let src = &xrow[(xs.start * g.sw + kx * g.dw - g.pl) * c..];
            let acc = &mut out[xs.start * oc..][..xs.len() * oc];
            if m == 1 {
                for (i, a) in acc.chunks_exact_mut(c).enumerate() {
                    let xp = &src[i * step..][..c];
                    for ((a, &xv), &f) in a.iter_mut().zip(xp).zip(fr) {
                        *a = a.add(xv.mul(f));
                    }
                }
            } else {
                for (i, a) in acc.chunks_exact_mut(oc).enumerate() {
                    let xp = &src[i * step..][..c];
                    for ((a, &xv), f) in a.chunks_exact_mut(m).zip(xp).zip(fr.chunks_exact(m)) {
                        for (a, &f) in a.iter_mut().zip(f) {
                            *a = a.add(xv.mul(f));
                        }
                    }
                }
            }
        }
    }
}

/// One input-gradient row (`[iw, C]`, zeroed) of image `b`, input row `iy`,
/// gathered from the output gradient.
#[inline(always)]
fn input_grad_row<T: Scalar>(w: &[T], dy: &[T], g: &Geom, b: usize, iy: usize, dx: &mut [T]) {
    let (c, m, oc) = (g.c, g.m, g.oc());
    let img = &dy[b * g.oh * g.ow * oc..][..g.oh * g.ow * oc];
    for ix in 0..g.iw {
        let acc = &mut dx[ix * c..][..c];
        for ky in 0..g.kh {
            let Some(oy) = Geom::out_of(iy, ky, g.dh, g.sh, g.pt, g.oh) else {
                continue;
            };
            for kx in 0..g.kw {
                let Some(ox) = Geom::out_of(ix, kx, g.dw, g.sw, g.pl, g.ow) else {
                    continue;
                };
                let dr = &img[(oy * g.ow + ox) * oc..][..oc];
                let fr = &w[(ky * g.kw + kx) * oc..][..oc];
                if m == 1 {
                    fma_rows(acc, dr, fr);
                } else {
                    for (ci, a) in acc.iter_mut().enumerate() {
                        let mut s = T::zero();
                        for j in 0..m {
                            s = s.add(dr[ci * m + j].mul(fr[ci * m + j]));
                        }
                        *a = a.add(s);
                    }
                }
            }
        }
    }
}

/// Adds output row `oy` of image `b`'s contribution to the filter gradient
/// `acc` (`[kh, kw, C * M]`).
#[inline(always)]
fn filter_grad_row<T: Scalar>(x: &[T], dy: &[T], g: &Geom, b: usize, oy: usize, acc: &mut [T]) {
    let (c, m, oc) = (g.c, g.m, g.oc());
    let img = &x[b * g.ih * g.iw * c..][..g.ih * g.iw * c];
    let drow = &dy[(b * g.oh + oy) * g.ow * oc..][..g.ow * oc];
    for ky in 0..g.kh {
        let Some(y) = g.in_y(oy, ky) else { continue };
        for kx in 0..g.kw {
            let tap = &mut acc[(ky * g.kw + kx) * oc..][..oc];
            for ox in 0..g.ow {
                let Some(xx) = g.in_x(ox, kx) else { continue };
                let xr = &img[(y * g.iw + xx) * c..][..c];
                let dr = &drow[ox * oc..][..oc];
                if m == 1 {
                    fma_rows(tap, xr, dr);
                } else {
                    for (ci, &xv) in xr.iter().enumerate() {
                        let a = &mut tap[ci * m..][..m];
                        for (a, &d) in a.iter_mut().zip(&dr[ci * m..][..m]) {
                            *a = a.add(xv.mul(d));
                        }
                    }
                }
            }
        }
    }
}

/// The row kernels of one element type; `f32` picks AVX2 at run time.
trait DwScalar: Scalar + Send + Sync {
    fn forward_row(x: &[Self], w: &[Self], g: &Geom, b: usize, oy: usize, out: &mut [Self]) {
        forward_row(x, w, g, b, oy, out)
    }
    fn input_grad_row(w: &[Self], dy: &[Self], g: &Geom, b: usize, iy: usize, dx: &mut [Self]) {
        input_grad_row(w, dy, g, b, iy, dx)
    }
    fn filter_grad_row(x: &[Self], dy: &[Self], g: &Geom, b: usize, oy: usize, acc: &mut [Self]) {
        filter_grad_row(x, dy, g, b, oy, acc)
    }
}

impl DwScalar for f64 {}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| std::arch::is_x86_feature_detected!("avx2"))
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Geom;

    #[target_feature(enable = "avx2")]
    pub(super) fn forward_row(x: &[f32], w: &[f32], g: &Geom, b: usize, oy: usize, o: &mut [f32]) {
        super::forward_row(x, w, g, b, oy, o)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn input_grad_row(
        w: &[f32],
        dy: &[f32],
        g: &Geom,
        b: usize,
        iy: usize,
        dx: &mut [f32],
    ) {
        super::input_grad_row(w, dy, g, b, iy, dx)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn filter_grad_row(
        x: &[f32],
        dy: &[f32],
        g: &Geom,
        b: usize,
        oy: usize,
        acc: &mut [f32],
    ) {
        super::filter_grad_row(x, dy, g, b, oy, acc)
    }
}

impl DwScalar for f32 {
    fn forward_row(x: &[f32], w: &[f32], g: &Geom, b: usize, oy: usize, out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has the feature the function was compiled for.
            return unsafe { avx2::forward_row(x, w, g, b, oy, out) };
        }
        forward_row(x, w, g, b, oy, out)
    }
    fn input_grad_row(w: &[f32], dy: &[f32], g: &Geom, b: usize, iy: usize, dx: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has the feature the function was compiled for.
            return unsafe { avx2::input_grad_row(w, dy, g, b, iy, dx) };
        }
        input_grad_row(w, dy, g, b, iy, dx)
    }
    fn filter_grad_row(x: &[f32], dy: &[f32], g: &Geom, b: usize, oy: usize, acc: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has the feature the function was compiled for.
            return unsafe { avx2::filter_grad_row(x, dy, g, b, oy, acc) };
        }
        filter_grad_row(x, dy, g, b, oy, acc)
    }
}

/// Runs `row(index, rows)` over `count` rows of `len` elements each of a
/// fresh zeroed buffer, in parallel tasks of whole rows when `par`.
fn by_rows<T: DwScalar>(
    count: usize,
    len: usize,
    par: bool,
    row: impl Fn(usize, &mut [T]) + Sync,
) -> Vec<T> {
    let mut out: Vec<T> = zeroed(count * len);
    if out.is_empty() {
        return out;
    }
    let per_task = (TASK_ELEMS / len).max(1);
    let task = |t: usize, chunk: &mut [T]| {
        for (i, r) in chunk.chunks_mut(len).enumerate() {
            row(t * per_task + i, r);
        }
    };
    if par && count > per_task {
        crate::team::for_each_chunk_mut(&mut out, per_task * len, task);
    } else {
        // One task: its rows are numbered from 0.
        task(0, &mut out[..]);
    }
    out
}

fn forward_typed<T: DwScalar>(x: &[T], w: &[T], g: &Geom) -> Vec<T> {
    let len = g.ow * g.oc();
    by_rows(g.n * g.oh, len, g.macs() >= PARALLEL_MACS, |r, out| {
        T::forward_row(x, w, g, r / g.oh.max(1), r % g.oh.max(1), out)
    })
}

fn input_grad_typed<T: DwScalar>(w: &[T], dy: &[T], g: &Geom) -> Vec<T> {
    let len = g.iw * g.c;
    by_rows(g.n * g.ih, len, g.macs() >= PARALLEL_MACS, |r, dx| {
        T::input_grad_row(w, dy, g, r / g.ih.max(1), r % g.ih.max(1), dx)
    })
}

fn filter_grad_typed<T: DwScalar>(x: &[T], dy: &[T], g: &Geom) -> Vec<T> {
    let size = g.kh * g.kw * g.oc();
    let rows: Vec<usize> = (0..g.n * g.oh).collect();
    if size == 0 || rows.is_empty() {
        return vec![T::zero(); size];
    }
    let per_group = rows.len().div_ceil(MAX_PARTIALS);
    let partial = |_: usize, group: &[usize]| -> Vec<T> {
        let mut acc = vec![T::zero(); size];
        for &r in group {
            T::filter_grad_row(x, dy, g, r / g.oh, r % g.oh, &mut acc);
        }
        acc
    };
    let partials: Vec<Vec<T>> = if g.macs() >= PARALLEL_MACS {
        crate::team::map_chunks(&rows, per_group, partial)
    } else {
        rows.chunks(per_group)
            .enumerate()
            .map(|(i, c)| partial(i, c))
            .collect()
    };
    sum_partials(partials, size)
}

/// Runs a kernel for f32/f64 directly and for half types in f32.
macro_rules! dw_dispatch {
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

/// `DepthwiseConv2dNative`: `input` `[batch, h, w, C]` convolved channel by
/// channel with `filter` `[kh, kw, C, M]`, giving `[batch, oh, ow, C * M]`.
pub fn depthwise_conv2d(input: &Tensor, filter: &Tensor, p: &Conv2dParams) -> Result<Tensor> {
    let op = "DepthwiseConv2dNative";
    same_dtype(op, input, filter)?;
    let x = dims4(op, "input", input.dims())?;
    let f = dims4(op, "filter", filter.dims())?;
    let g = Geom::new(op, x, f, p)?;
    dw_dispatch!(
        op,
        input.dtype(),
        [g.n, g.oh, g.ow, g.oc()],
        depthwise_conv2d(&to_f32(input)?, &to_f32(filter)?, p),
        |T| forward_typed::<T>(input.as_slice()?, filter.as_slice()?, &g)
    )
}

/// `DepthwiseConv2dNativeBackpropInput`: the gradient of
/// [`depthwise_conv2d`] with respect to an input of shape `input_sizes`.
pub fn depthwise_conv2d_backprop_input(
    input_sizes: &[usize],
    filter: &Tensor,
    out_backprop: &Tensor,
    p: &Conv2dParams,
) -> Result<Tensor> {
    let op = "DepthwiseConv2dNativeBackpropInput";
    same_dtype(op, filter, out_backprop)?;
    let x = dims4(op, "input_sizes", input_sizes)?;
    let f = dims4(op, "filter", filter.dims())?;
    let dy = dims4(op, "out_backprop", out_backprop.dims())?;
    let g = Geom::new(op, x, f, p)?;
    g.check_out_backprop(op, dy)?;
    Tensor::check_allocation(op, filter.dtype(), &x)?;
    dw_dispatch!(
        op,
        filter.dtype(),
        x,
        depthwise_conv2d_backprop_input(input_sizes, &to_f32(filter)?, &to_f32(out_backprop)?, p),
        |T| input_grad_typed::<T>(filter.as_slice()?, out_backprop.as_slice()?, &g)
    )
}

/// `DepthwiseConv2dNativeBackpropFilter`: the gradient of
/// [`depthwise_conv2d`] with respect to a filter of shape `filter_sizes`.
pub fn depthwise_conv2d_backprop_filter(
    input: &Tensor,
    filter_sizes: &[usize],
    out_backprop: &Tensor,
    p: &Conv2dParams,
) -> Result<Tensor> {
    let op = "DepthwiseConv2dNativeBackpropFilter";
    same_dtype(op, input, out_backprop)?;
    let x = dims4(op, "input", input.dims())?;
    let f = dims4(op, "filter_sizes", filter_sizes)?;
    let dy = dims4(op, "out_backprop", out_backprop.dims())?;
    let g = Geom::new(op, x, f, p)?;
    g.check_out_backprop(op, dy)?;
    Tensor::check_allocation(op, input.dtype(), &f)?;
    dw_dispatch!(
        op,
        input.dtype(),
        f,
        depthwise_conv2d_backprop_filter(&to_f32(input)?, filter_sizes, &to_f32(out_backprop)?, p),
        |T| filter_grad_typed::<T>(input.as_slice()?, out_backprop.as_slice()?, &g)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::conv::{conv2d, Padding};

    fn params(s: usize, d: usize, padding: Padding) -> Conv2dParams {
        Conv2dParams {
            strides: [1, s, s, 1],
            dilations: [1, d, d, 1],
            padding,
        }
    }

    fn data(n: usize, seed: u32) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let v = (i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8;
                (v % 1000) as f64 / 500.0 - 1.0
            })
            .collect()
    }

    /// The depthwise filter `[kh, kw, C, M]` as a dense `[kh, kw, C, C * M]` one.
    fn dense(w: &[f64], kh: usize, kw: usize, c: usize, m: usize) -> Vec<f64> {
        let oc = c * m;
        let mut out = vec![0.0; kh * kw * c * oc];
        for t in 0..kh * kw {
            for ci in 0..c {
                for j in 0..m {
                    out[(t * c + ci) * oc + ci * m + j] = w[(t * c + ci) * m + j];
                }
            }
        }
        out
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).abs() < 1e-9, "element {i}: {x} vs {y}");
        }
    }

    /// `<dy, f(x)>` for the adjoint checks.
    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn matches_a_block_diagonal_conv2d_and_its_adjoints() {
        let cases = [
            // (n, h, w, c, m, kh, kw, stride, dilation, padding)
            (2, 7, 6, 3, 1, 3, 3, 1, 1, Padding::Same),
            (1, 9, 8, 4, 2, 3, 2, 2, 1, Padding::Valid),
            (2, 8, 8, 2, 3, 2, 3, 1, 2, Padding::Same),
            (1, 5, 7, 5, 1, 3, 3, 2, 1, Padding::Same),
            (
                1,
                6,
                5,
                2,
                2,
                3,
                3,
                1,
                1,
                Padding::Explicit {
                    h: (1, 2),
                    w: (0, 1),
                },
            ),
        ];
        for (n, h, w, c, m, kh, kw, s, d, pad) in cases {
            let p = params(s, d, pad);
            let xv = data(n * h * w * c, 1);
            let wv = data(kh * kw * c * m, 2);
            let x = Tensor::from_vec([n, h, w, c], xv.clone()).unwrap();
            let f = Tensor::from_vec([kh, kw, c, m], wv.clone()).unwrap();
            let y = depthwise_conv2d(&x, &f, &p).unwrap();
            let full = Tensor::from_vec([kh, kw, c, c * m], dense(&wv, kh, kw, c, m)).unwrap();
            let want = conv2d(&x, &full, &p).unwrap();
            assert_eq!(y.dims(), want.dims());
            close(
                y.as_slice::<f64>().unwrap(),
                want.as_slice::<f64>().unwrap(),
            );

            // Adjoint identities: <dy, conv(x, w)> = <backprop_input(dy), x>
            // = <backprop_filter(dy), w>.
            let dyv = data(y.num_elements(), 3);
            let dy = Tensor::from_vec(y.dims().to_vec(), dyv.clone()).unwrap();
            let lhs = dot(&dyv, y.as_slice::<f64>().unwrap());
            let dx = depthwise_conv2d_backprop_input(&[n, h, w, c], &f, &dy, &p).unwrap();
            let dw = depthwise_conv2d_backprop_filter(&x, &[kh, kw, c, m], &dy, &p).unwrap();
            let rx = dot(dx.as_slice::<f64>().unwrap(), &xv);
            let rw = dot(dw.as_slice::<f64>().unwrap(), &wv);
            assert!((lhs - rx).abs() < 1e-9, "input adjoint {lhs} vs {rx}");
            assert!((lhs - rw).abs() < 1e-9, "filter adjoint {lhs} vs {rw}");
        }
    }

    #[test]
    fn f32_large_runs_parallel_and_matches_f64() {
        // Big enough for the parallel path; C = 37 exercises vector tails.
        let (n, h, w, c) = (2, 20, 20, 37);
        let p = params(1, 1, Padding::Same);
        let xv = data(n * h * w * c, 5);
        let wv = data(9 * c, 6);
        let x64 = Tensor::from_vec([n, h, w, c], xv.clone()).unwrap();
        let w64 = Tensor::from_vec([3, 3, c, 1], wv.clone()).unwrap();
        let to32 = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<_>>();
        let x32 = Tensor::from_vec([n, h, w, c], to32(&xv)).unwrap();
        let w32 = Tensor::from_vec([3, 3, c, 1], to32(&wv)).unwrap();
        let y64 = depthwise_conv2d(&x64, &w64, &p).unwrap();
        let y32 = depthwise_conv2d(&x32, &w32, &p).unwrap();
        for (a, b) in y32
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .zip(y64.as_slice::<f64>().unwrap())
        {
            assert!((*a as f64 - b).abs() < 1e-5);
        }
        let dw32 = depthwise_conv2d_backprop_filter(&x32, &[3, 3, c, 1], &y32, &p).unwrap();
        let dw64 = depthwise_conv2d_backprop_filter(&x64, &[3, 3, c, 1], &y64, &p).unwrap();
        for (a, b) in dw32
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .zip(dw64.as_slice::<f64>().unwrap())
        {
            assert!((*a as f64 - b).abs() < 1e-3 * b.abs().max(1.0));
        }
    }

    #[test]
    fn bad_shapes_are_typed_errors() {
        let p = params(1, 1, Padding::Valid);
        let x = Tensor::from_vec([1, 4, 4, 3], vec![0f32; 48]).unwrap();
        let f = Tensor::from_vec([2, 2, 2, 1], vec![0f32; 8]).unwrap();
        let e = depthwise_conv2d(&x, &f, &p).unwrap_err();
        assert!(e.message().contains("same depth: 3 vs 2"), "{e}");
        let big = Tensor::from_vec([6, 6, 3, 1], vec![0f32; 108]).unwrap();
        let e = depthwise_conv2d(&x, &big, &p).unwrap_err();
        assert!(e.message().contains("negative"), "{e}");
        let i = Tensor::from_vec([1, 4, 4, 3], vec![0i32; 48]).unwrap();
        let fi = Tensor::from_vec([2, 2, 3, 1], vec![0i32; 12]).unwrap();
        assert!(depthwise_conv2d(&i, &fi, &p).is_err());
    }
}
