//! `Conv2D`, `Conv2DBackpropInput` and `Conv2DBackpropFilter` over NHWC
//! tensors.
//!
//! Convolutions lower to GEMM (im2col): a tile of output rows gathers its
//! input patches into a `[pixels, kh * kw * in_depth]` matrix that multiplies
//! the filter viewed as `[kh * kw * in_depth, out_depth]`. 1x1 convolutions
//! with stride 1 and no padding skip the gather. The input gradient is the
//! transposed product scattered back (col2im); the filter gradient sums
//! `patchesᵀ @ out_backprop` over tiles.
//!
//! On CPUs with AVX-512, f32 convolutions run the direct kernels of
//! `direct` instead (no im2col; the input gradient there at unit strides
//! only); `FERROFLOW_DIRECT_CONV=0` turns them off.
//!
//! Tiles (and the groups of tiles whose filter-gradient partial sums are
//! added) depend only on the problem's shape, never on the thread count, and
//! scatters into one image run on one thread: results are identical whatever
//! the number of threads.

use super::direct::{self, Window};
use super::{
    conv_dispatch, dims4, four, same_dtype, sum_partials, to_f32, windowed_output, ConvScalar,
    Padding,
};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::cast;
use crate::kernels::parallel::zeroed;
use crate::kernels::scalar::Scalar;
use crate::tensor::Tensor;

/// Elements of one im2col tile (about 512 KB of f32: stays in L2).
const TILE_ELEMS: usize = 1 << 17;

/// Multiply-adds below which a convolution runs on the calling thread.
const PARALLEL_MACS: usize = 1 << 21;

/// At most this many filter-gradient partial sums (each `kh*kw*in*out`)...
const MAX_PARTIALS: usize = 8;

/// ...and at most this many elements in all of them together.
const PARTIAL_BUDGET: usize = 1 << 22;

/// The attributes of a 2-D convolution (NHWC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dParams {
    /// Strides of the four NHWC dimensions.
    pub strides: [usize; 4],
    /// Dilations of the four NHWC dimensions.
    pub dilations: [usize; 4],
    pub padding: Padding,
}

impl Conv2dParams {
    /// Parses the `strides`, `dilations` (empty: all ones), `padding` and
    /// `explicit_paddings` attributes. Errors are construction-time ones;
    /// strides or dilations of the batch and depth dimensions are accepted
    /// here and rejected when the op runs, as in TensorFlow.
    pub fn parse(
        op: &str,
        strides: &[i64],
        dilations: &[i64],
        padding: &str,
        explicit: &[i64],
    ) -> Result<Conv2dParams> {
        let s = four(op, "stride", strides)?;
        if let Some(&b) = strides.iter().find(|&&v| v <= 0) {
            return Err(Error::value(format!("Stride must be > 0, but got {b}")));
        }
        let d = if dilations.is_empty() {
            [1; 4]
        } else {
            four(op, "dilation", dilations)?
        };
        if dilations.iter().any(|&v| v <= 0) {
            return Err(Error::value(format!(
                "Dilated rates should be larger than 0, but got {dilations:?}"
            )));
        }
        Ok(Conv2dParams {
            strides: s,
            dilations: d,
            padding: Padding::parse(op, padding, explicit)?,
        })
    }

    pub(crate) fn check_runtime(&self) -> Result<()> {
        let s = self.strides;
        if s[0] != 1 || s[3] != 1 {
            return Err(Error::unimplemented(
                "Current implementation does not yet support strides in the batch and depth dimensions.",
            ));
        }
        let d = self.dilations;
        if d[0] != 1 || d[3] != 1 {
            return Err(Error::invalid_argument(
                "Current implementation does not yet support dilations in the batch and depth dimensions.",
            ));
        }
        if s.contains(&0) || d.contains(&0) {
            return Err(Error::invalid_argument(
                "strides and dilations must be positive",
            ));
        }
        Ok(())
    }
}

/// The sizes of one convolution.
#[derive(Clone, Copy, Debug)]
struct ConvGeom {
    n: usize,
    ih: usize,
    iw: usize,
    ic: usize,
    kh: usize,
    kw: usize,
    oc: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    pt: usize,
    pl: usize,
    oh: usize,
    ow: usize,
}

impl ConvGeom {
    /// Checks an input and filter shape and computes the output size.
    fn new(op: &str, input: [usize; 4], filter: [usize; 4], p: &Conv2dParams) -> Result<ConvGeom> {
        p.check_runtime()?;
        let [n, ih, iw, ic] = input;
        let [kh, kw, fic, oc] = filter;
        if fic == 0 || ic % fic != 0 {
            return Err(Error::invalid_argument(format!(
                "{op}: input depth must be evenly divisible by filter depth: {ic} vs {fic}"
            )));
        }
        if ic != fic {
            return Err(Error::unimplemented(format!(
                "{op}: grouped convolutions (input depth {ic} = {} groups of filter depth {fic}) are not supported",
                ic / fic
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
        Ok(ConvGeom {
            n,
            ih,
            iw,
            ic,
            kh,
            kw,
            oc,
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

    /// Whether the direct kernels take this convolution: f32, and not
    /// pointwise (that is a plain GEMM already).
    fn direct(&self, dtype: DType) -> bool {
        dtype == DType::Float32 && !self.pointwise() && direct::available()
    }

    /// The geometry the direct kernels take.
    fn window(&self) -> Window {
        Window {
            n: self.n,
            ih: self.ih,
            iw: self.iw,
            c: self.ic,
            kh: self.kh,
            kw: self.kw,
            stride: (self.sh, self.sw),
            dilation: (self.dh, self.dw),
            pad: (self.pt, self.pl),
            oh: self.oh,
            ow: self.ow,
        }
    }

    /// Elements of one patch: the GEMM's inner dimension.
    fn patch(&self) -> usize {
        self.kh * self.kw * self.ic
    }

    fn macs(&self) -> usize {
        self.n * self.oh * self.ow * self.patch() * self.oc
    }

    /// A 1x1 convolution with unit strides and no padding: the input already
    /// is the patch matrix.
    fn pointwise(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.sh == 1
            && self.sw == 1
            && self.pt == 0
            && self.pl == 0
            && self.oh == self.ih
            && self.ow == self.iw
    }

    /// Output rows per tile.
    fn rows_per_tile(&self) -> usize {
        let per_row = (self.ow * self.patch()).max(1);
        (TILE_ELEMS / per_row).clamp(1, self.oh.max(1))
    }

    /// Checks that `out_backprop` has the output shape this geometry computes.
    fn check_out_backprop(&self, op: &str, dy: [usize; 4]) -> Result<()> {
        if dy[0] != self.n {
            return Err(Error::invalid_argument(format!(
                "{op}: input and out_backprop must have the same batch size, input batch: {} outbackprop batch: {}",
                self.n, dy[0]
            )));
        }
        if dy[3] != self.oc {
            return Err(Error::invalid_argument(format!(
                "{op}: filter and out_backprop must have the same out_depth: {} vs {}",
                self.oc, dy[3]
            )));
        }
        let dims = [
            (1, self.ih, self.kh, self.oh, self.sh, self.dh),
            (2, self.iw, self.kw, self.ow, self.sw, self.dw),
        ];
        for (dim, input, k, computed, s, d) in dims {
            if dy[dim] != computed {
                return Err(Error::invalid_argument(format!(
                    "{op}: Size of out_backprop doesn't match computed: actual = {}, computed = {computed} spatial_dim: {dim} input: {input} filter: {k} output: {} stride: {s} dilation: {d}",
                    dy[dim], dy[dim]
                )));
            }
        }
        Ok(())
    }

    /// Gathers the patches of output rows `r0..r0 + rows` of one image
    /// (`x`: that image) into `buf` (`[rows * ow, patch]`, zero padding).
    fn im2col<T: Copy + Default>(&self, x: &[T], r0: usize, rows: usize, buf: &mut Vec<T>) {
        let k = self.patch();
        buf.clear();
        buf.resize(rows * self.ow * k, T::default());
        let c = self.ic;
        for r in 0..rows {
            let oy = r0 + r;
            for ox in 0..self.ow {
                let row = &mut buf[(r * self.ow + ox) * k..][..k];
                for ky in 0..self.kh {
                    let Some(y) = self.in_y(oy, ky) else { continue };
                    for kx in 0..self.kw {
                        let Some(xx) = self.in_x(ox, kx) else {
                            continue;
                        };
                        let src = &x[(y * self.iw + xx) * c..][..c];
                        row[(ky * self.kw + kx) * c..][..c].copy_from_slice(src);
                    }
                }
            }
        }
    }

    /// One image (`[ih, iw, ic]`) channel-major: `[ic, ih, iw]`.
    fn chw<T: Copy + Default>(&self, x: &[T]) -> Vec<T> {
        transpose(x, self.ih * self.iw, self.ic)
    }

    /// The output columns `ox` whose tap `kx` lands inside the input.
    #[inline]
    fn x_range(&self, kx: usize) -> std::ops::Range<usize> {
        let off = kx * self.dw;
        let lo = (self.pl.saturating_sub(off)).div_ceil(self.sw).min(self.ow);
        let hi = (self.iw + self.pl)
            .saturating_sub(off)
            .div_ceil(self.sw)
            .min(self.ow);
        lo..hi.max(lo)
    }

    /// Gathers the patches of output rows `r0..r0 + rows` channel-major
    /// into `buf` (`[patch, rows * ow]`, zero padding) from a channel-major
    /// image `xt` (see [`chw`](Self::chw)).
    fn im2col_t<T: Copy + Default>(&self, xt: &[T], r0: usize, rows: usize, buf: &mut Vec<T>) {
        let m = rows * self.ow;
        buf.clear();
        buf.resize(self.patch() * m, T::default());
        let plane = self.ih * self.iw;
        for ky in 0..self.kh {
            for kx in 0..self.kw {
                let xs = self.x_range(kx);
                if xs.is_empty() {
                    // This filter column only ever sees padding: its rows stay zero.
                    continue;
                }
                for c in 0..self.ic {
                    let row = &mut buf[((ky * self.kw + kx) * self.ic + c) * m..][..m];
                    let src_plane = &xt[c * plane..][..plane];
                    for r in 0..rows {
                        let Some(y) = self.in_y(r0 + r, ky) else {
                            continue;
                        };
                        let src = &src_plane[y * self.iw..][..self.iw];
                        let dst = &mut row[r * self.ow..][..self.ow];
                        let x0 = xs.start * self.sw + kx * self.dw - self.pl;
                        if self.sw == 1 {
                            dst[xs.clone()].copy_from_slice(&src[x0..x0 + xs.len()]);
                        } else {
                            for (i, d) in dst[xs.clone()].iter_mut().enumerate() {
                                *d = src[x0 + i * self.sw];
                            }
                        }
                    }
                }
            }
        }
    }

    /// Adds patch rows back into one image's input gradient (the transpose
    /// of [`im2col`](Self::im2col)).
    fn col2im<T: Scalar>(&self, cols: &[T], r0: usize, rows: usize, dx: &mut [T]) {
        let k = self.patch();
        let c = self.ic;
        for r in 0..rows {
            let oy = r0 + r;
            for ox in 0..self.ow {
                let row = &cols[(r * self.ow + ox) * k..][..k];
                for ky in 0..self.kh {
                    let Some(y) = self.in_y(oy, ky) else { continue };
                    for kx in 0..self.kw {
                        let Some(xx) = self.in_x(ox, kx) else {
                            continue;
                        };
                        let dst = &mut dx[(y * self.iw + xx) * c..][..c];
                        let src = &row[(ky * self.kw + kx) * c..][..c];
                        for (d, &s) in dst.iter_mut().zip(src) {
                            *d = d.add(s);
                        }
                    }
                }
            }
        }
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
}

/// A row-major `rows x cols` matrix transposed, in blocks of rows that
/// stay in cache while each of their columns is written out contiguously.
fn transpose<T: Copy + Default>(x: &[T], rows: usize, cols: usize) -> Vec<T> {
    const BLOCK: usize = 64;
    let mut out = vec![T::default(); rows * cols];
    for r0 in (0..rows).step_by(BLOCK) {
        let n = BLOCK.min(rows - r0);
        for c in 0..cols {
            let dst = &mut out[c * rows + r0..][..n];
            for (i, d) in dst.iter_mut().enumerate() {
                *d = x[(r0 + i) * cols + c];
            }
        }
    }
    out
}

fn conv2d_typed<T: ConvScalar>(x: &[T], w: &[T], g: &ConvGeom) -> Vec<T> {
    let mut out: Vec<T> = zeroed(g.n * g.oh * g.ow * g.oc);
    let k = g.patch();
    if out.is_empty() || k == 0 {
        return out;
    }
    let rows = g.rows_per_tile();
    let (img_in, img_out, tile_len) = (g.ih * g.iw * g.ic, g.oh * g.ow * g.oc, rows * g.ow * g.oc);
    let par = g.macs() >= PARALLEL_MACS;
    // Patches are gathered channel-major ([patch][pixels]) from a
    // channel-major copy of the image: the GEMM then packs its large operand
    // with contiguous copies (measured 2.5x faster than pixel-major patches).
    let image = |b: usize, img: &mut [T]| {
        let xt = g.chw(&x[b * img_in..][..img_in]);
        let tile = |t: usize, o: &mut [T], buf: &mut Vec<T>| {
            let r0 = t * rows;
            let m = o.len() / g.oc;
            let (a, csa): (&[T], usize) = if g.pointwise() {
                (&xt[r0 * g.iw..], g.ih * g.iw)
            } else {
                g.im2col_t(&xt, r0, m / g.ow, buf);
                (buf, m)
            };
            T::gemm(m, k, g.oc, a, 1, csa, w, g.oc, 1, o, false);
        };
        if par {
            crate::team::for_each_chunk_mut(img, tile_len, |t, o| tile(t, o, &mut Vec::new()));
        } else {
            let mut buf = Vec::new();
            for (t, o) in img.chunks_mut(tile_len).enumerate() {
                tile(t, o, &mut buf);
            }
        }
    };
    if par {
        crate::team::for_each_chunk_mut(&mut out, img_out, image);
    } else {
        for (b, img) in out.chunks_mut(img_out).enumerate() {
            image(b, img);
        }
    }
    out
}

fn backprop_input_typed<T: ConvScalar>(w: &[T], dy: &[T], g: &ConvGeom) -> Vec<T> {
    let img_in = g.ih * g.iw * g.ic;
    let mut dx: Vec<T> = zeroed(g.n * img_in);
    let k = g.patch();
    let pixels = g.oh * g.ow;
    if dx.is_empty() || pixels * g.oc == 0 || k == 0 {
        return dx;
    }
    let rows = g.rows_per_tile();
    // patches = dy @ filterᵀ. Both operands are transposed first (filter
    // once, dy per image) so that the GEMM packs them with contiguous copies.
    let wt = transpose(w, k, g.oc);
    let image = |b: usize, dxb: &mut [T]| {
        let dyt = transpose(&dy[b * pixels * g.oc..][..pixels * g.oc], pixels, g.oc);
        if g.pointwise() {
            T::gemm(pixels, g.oc, k, &dyt, 1, pixels, &wt, k, 1, dxb, false);
            return;
        }
        let mut cols = Vec::new();
        for r0 in (0..g.oh).step_by(rows) {
            let nrows = rows.min(g.oh - r0);
            let m = nrows * g.ow;
            cols.resize(m * k, T::zero());
            T::gemm(
                m,
                g.oc,
                k,
                &dyt[r0 * g.ow..],
                1,
                pixels,
                &wt,
                k,
                1,
                &mut cols,
                false,
            );
            g.col2im(&cols[..m * k], r0, nrows, dxb);
        }
    };
    if g.macs() >= PARALLEL_MACS && g.n > 1 {
        crate::team::for_each_chunk_mut(&mut dx, img_in, image);
    } else {
        for (b, dxb) in dx.chunks_mut(img_in).enumerate() {
            image(b, dxb);
        }
    }
    dx
}

fn backprop_filter_typed<T: ConvScalar>(x: &[T], dy: &[T], g: &ConvGeom) -> Vec<T> {
    let k = g.patch();
    let size = k * g.oc;
    if size == 0 || g.n * g.oh * g.ow == 0 {
        return vec![T::zero(); size];
    }
    let rows = g.rows_per_tile();
    let tiles: Vec<(usize, usize)> = (0..g.n)
        .flat_map(|b| (0..g.oh).step_by(rows).map(move |r0| (b, r0)))
        .collect();
    let groups = tiles
        .len()
        .min(MAX_PARTIALS)
        .min((PARTIAL_BUDGET / size).max(1));
    let per_group = tiles.len().div_ceil(groups);
    let (img_in, img_out) = (g.ih * g.iw * g.ic, g.oh * g.ow * g.oc);
    let partial = |group: &[(usize, usize)]| -> Vec<T> {
        let mut acc = vec![T::zero(); size];
        let mut buf = Vec::new();
        for &(b, r0) in group {
            let nrows = rows.min(g.oh - r0);
            let m = nrows * g.ow;
            let xb = &x[b * img_in..][..img_in];
            let a: &[T] = if g.pointwise() {
                &xb[r0 * g.iw * g.ic..][..m * k]
            } else {
                g.im2col(xb, r0, nrows, &mut buf);
                &buf
            };
            let dyt = &dy[b * img_out + r0 * g.ow * g.oc..][..m * g.oc];
            // filter += patchesᵀ @ dy
            T::gemm(k, m, g.oc, a, 1, k, dyt, g.oc, 1, &mut acc, true);
        }
        acc
    };
    let partials: Vec<Vec<T>> = if g.macs() >= PARALLEL_MACS {
        crate::team::map_chunks(&tiles, per_group, |_, c| partial(c))
    } else {
        tiles.chunks(per_group).map(partial).collect()
    };
    sum_partials(partials, size)
}

/// `Conv2D`: `input` `[batch, h, w, in]` convolved with `filter`
/// `[kh, kw, in, out]` (NHWC).
pub fn conv2d(input: &Tensor, filter: &Tensor, p: &Conv2dParams) -> Result<Tensor> {
    let op = "Conv2D";
    same_dtype(op, input, filter)?;
    let x = dims4(op, "convolution input", input.dims())?;
    let f = dims4(op, "convolution filter", filter.dims())?;
    let g = ConvGeom::new(op, x, f, p)?;
    let shape = [g.n, g.oh, g.ow, g.oc];
    // Fewer than 16 output channels would leave most vector lanes idle.
    if g.direct(input.dtype()) && g.oc >= 16 {
        let out = direct::forward(input.as_slice()?, filter.as_slice()?, &g.window(), g.oc);
        return Tensor::from_vec(shape, out);
    }
    conv_dispatch!(
        op,
        input.dtype(),
        shape,
        conv2d(&to_f32(input)?, &to_f32(filter)?, p),
        |T| conv2d_typed::<T>(input.as_slice()?, filter.as_slice()?, &g)
    )
}

/// `Conv2DBackpropInput`: the gradient of [`conv2d`] with respect to an
/// input of shape `input_sizes` (also `conv2d_transpose`).
pub fn conv2d_backprop_input(
    input_sizes: &[usize],
    filter: &Tensor,
    out_backprop: &Tensor,
    p: &Conv2dParams,
) -> Result<Tensor> {
    let op = "Conv2DBackpropInput";
    same_dtype(op, filter, out_backprop)?;
    let x = dims4(op, "input_sizes", input_sizes)?;
    let f = dims4(op, "filter", filter.dims())?;
    let dy = dims4(op, "out_backprop", out_backprop.dims())?;
    let g = ConvGeom::new(op, x, f, p)?;
    g.check_out_backprop(op, dy)?;
    // Its outputs are the input's channels: at least 16, as for `conv2d`.
    if g.direct(filter.dtype()) && g.ic >= 16 {
        let (w, dy) = (filter.as_slice()?, out_backprop.as_slice()?);
        if let Some(dx) = direct::backprop_input(w, dy, &g.window(), g.oc) {
            return Tensor::from_vec(x, dx);
        }
    }
    conv_dispatch!(
        op,
        filter.dtype(),
        x,
        conv2d_backprop_input(input_sizes, &to_f32(filter)?, &to_f32(out_backprop)?, p),
        |T| backprop_input_typed::<T>(filter.as_slice()?, out_backprop.as_slice()?, &g)
    )
}

/// `Conv2DBackpropFilter`: the gradient of [`conv2d`] with respect to a
/// filter of shape `filter_sizes`.
pub fn conv2d_backprop_filter(
    input: &Tensor,
    filter_sizes: &[usize],
    out_backprop: &Tensor,
    p: &Conv2dParams,
) -> Result<Tensor> {
    let op = "Conv2DBackpropFilter";
    same_dtype(op, input, out_backprop)?;
    let x = dims4(op, "input", input.dims())?;
    let f = dims4(op, "filter_sizes", filter_sizes)?;
    let dy = dims4(op, "out_backprop", out_backprop.dims())?;
    let g = ConvGeom::new(op, x, f, p)?;
    g.check_out_backprop(op, dy)?;
    if g.direct(input.dtype()) {
        let (x, dy) = (input.as_slice()?, out_backprop.as_slice()?);
        return Tensor::from_vec(f, direct::backprop_filter(x, dy, &g.window(), g.oc));
    }
    conv_dispatch!(
        op,
        input.dtype(),
        f,
        conv2d_backprop_filter(&to_f32(input)?, filter_sizes, &to_f32(out_backprop)?, p),
        |T| backprop_filter_typed::<T>(input.as_slice()?, out_backprop.as_slice()?, &g)
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{params, values};
    use super::*;

    /// Direct 7-loop convolution.
    fn naive(x: &[f64], xd: [usize; 4], w: &[f64], wd: [usize; 4], p: &Conv2dParams) -> Vec<f64> {
        let g = ConvGeom::new("t", xd, wd, p).unwrap();
        let mut out = vec![0.0; g.n * g.oh * g.ow * g.oc];
        for b in 0..g.n {
            for oy in 0..g.oh {
                for ox in 0..g.ow {
                    for o in 0..g.oc {
                        let mut acc = 0.0;
                        for ky in 0..g.kh {
                            for kx in 0..g.kw {
                                let (Some(y), Some(xx)) = (g.in_y(oy, ky), g.in_x(ox, kx)) else {
                                    continue;
                                };
                                for i in 0..g.ic {
                                    acc += x[((b * g.ih + y) * g.iw + xx) * g.ic + i]
                                        * w[((ky * g.kw + kx) * g.ic + i) * g.oc + o];
                                }
                            }
                        }
                        out[((b * g.oh + oy) * g.ow + ox) * g.oc + o] = acc;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn conv2d_matches_direct_loops() {
        let cases = [
            ([2, 5, 6, 3], [3, 3, 3, 4], params(1, 1, Padding::Same)),
            ([1, 7, 7, 2], [3, 2, 2, 3], params(2, 1, Padding::Valid)),
            ([1, 9, 8, 2], [3, 3, 2, 2], params(1, 2, Padding::Same)),
            ([2, 4, 4, 5], [1, 1, 5, 3], params(1, 1, Padding::Valid)),
            (
                [1, 5, 5, 1],
                [2, 3, 1, 2],
                params(
                    2,
                    1,
                    Padding::Explicit {
                        h: (1, 0),
                        w: (2, 1),
                    },
                ),
            ),
        ];
        for (xd, wd, p) in cases {
            let x = values(xd.iter().product(), 1);
            let w = values(wd.iter().product(), 2);
            let want = naive(&x, xd, &w, wd, &p);
            let got = conv2d(
                &Tensor::from_vec(xd, x.clone()).unwrap(),
                &Tensor::from_vec(wd, w.clone()).unwrap(),
                &p,
            )
            .unwrap();
            for (a, b) in got.as_slice::<f64>().unwrap().iter().zip(&want) {
                assert!((a - b).abs() < 1e-12, "{xd:?} {wd:?}: {a} vs {b}");
            }
        }
    }

    /// <dy, conv(x, w)> = <conv_backprop_input(dy), x> = <conv_backprop_filter(dy), w>.
    #[test]
    fn backprops_are_adjoint() {
        for (xd, wd, p) in [
            ([2, 6, 5, 3], [3, 3, 3, 2], params(2, 1, Padding::Same)),
            ([1, 8, 8, 2], [2, 3, 2, 3], params(1, 2, Padding::Valid)),
            ([3, 4, 4, 4], [1, 1, 4, 2], params(1, 1, Padding::Valid)),
        ] {
            let x = Tensor::from_vec(xd, values(xd.iter().product(), 3)).unwrap();
            let w = Tensor::from_vec(wd, values(wd.iter().product(), 4)).unwrap();
            let y = conv2d(&x, &w, &p).unwrap();
            let dy = Tensor::from_vec(y.dims().to_vec(), values(y.num_elements(), 5)).unwrap();
            let dot = |a: &Tensor, b: &Tensor| -> f64 {
                let (a, b) = (a.as_slice::<f64>().unwrap(), b.as_slice::<f64>().unwrap());
                a.iter().zip(b).map(|(u, v)| u * v).sum()
            };
            let dx = conv2d_backprop_input(&xd, &w, &dy, &p).unwrap();
            let dw = conv2d_backprop_filter(&x, &wd, &dy, &p).unwrap();
            let lhs = dot(&dy, &y);
            assert!((lhs - dot(&dx, &x)).abs() < 1e-9 * lhs.abs().max(1.0));
            assert!((lhs - dot(&dw, &w)).abs() < 1e-9 * lhs.abs().max(1.0));
        }
    }

    #[test]
    fn float32_and_int32_agree_with_float64() {
        let (xd, wd, p) = ([2, 6, 6, 3], [3, 3, 3, 4], params(1, 1, Padding::Same));
        let xi: Vec<i32> = (0..xd.iter().product::<usize>())
            .map(|i| (i % 7) as i32 - 3)
            .collect();
        let wi: Vec<i32> = (0..wd.iter().product::<usize>())
            .map(|i| (i % 5) as i32 - 2)
            .collect();
        let yi = conv2d(
            &Tensor::from_vec(xd, xi.clone()).unwrap(),
            &Tensor::from_vec(wd, wi.clone()).unwrap(),
            &p,
        )
        .unwrap();
        let f = |v: &[i32]| v.iter().map(|&a| a as f32).collect::<Vec<_>>();
        let yf = conv2d(
            &Tensor::from_vec(xd, f(&xi)).unwrap(),
            &Tensor::from_vec(wd, f(&wi)).unwrap(),
            &p,
        )
        .unwrap();
        let want: Vec<f32> = yi
            .as_slice::<i32>()
            .unwrap()
            .iter()
            .map(|&a| a as f32)
            .collect();
        assert_eq!(yf.as_slice::<f32>().unwrap(), want.as_slice());
    }

    #[test]
    fn runtime_errors_name_the_problem() {
        let x = Tensor::zeros(DType::Float32, [1, 5, 5, 3]);
        let w = Tensor::zeros(DType::Float32, [3, 3, 4, 8]);
        let e = conv2d(&x, &w, &params(1, 1, Padding::Same)).unwrap_err();
        assert!(
            e.to_string()
                .contains("evenly divisible by filter depth: 3 vs 4"),
            "{e}"
        );
        let mut p = params(1, 1, Padding::Same);
        p.strides[0] = 2;
        let w = Tensor::zeros(DType::Float32, [3, 3, 3, 8]);
        assert_eq!(
            conv2d(&x, &w, &p).unwrap_err().code(),
            Some(crate::Code::Unimplemented)
        );
        let dy = Tensor::zeros(DType::Float32, [1, 4, 5, 8]);
        let e = conv2d_backprop_input(&[1, 5, 5, 3], &w, &dy, &params(1, 1, Padding::Same))
            .unwrap_err();
        assert!(e.to_string().contains("actual = 4, computed = 5"), "{e}");
    }
}
