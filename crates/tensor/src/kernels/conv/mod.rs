//! 2-D convolution and pooling over NHWC tensors: TensorFlow's `Conv2D`,
//! `Conv2DBackpropInput`, `Conv2DBackpropFilter`, `MaxPool`, `MaxPoolGrad`,
//! `MaxPoolGradGrad`, `AvgPool` and `AvgPoolGrad`.
//!
//! Convolutions lower to GEMM (im2col): a tile of output rows gathers its
//! input patches into a `[pixels, kh * kw * in_depth]` matrix that multiplies
//! the filter viewed as `[kh * kw * in_depth, out_depth]`. 1x1 convolutions
//! with stride 1 and no padding skip the gather. The input gradient is the
//! transposed product scattered back (col2im); the filter gradient sums
//! `patchesᵀ @ out_backprop` over tiles.
//!
//! Tiles (and the groups of tiles whose filter-gradient partial sums are
//! added) depend only on the problem's shape, never on the thread count, and
//! scatters into one image run on one thread: results are identical whatever
//! the number of threads.

use super::elementwise::cast;
use super::parallel::{for_rows, zeroed};
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Elements of one im2col tile (about 512 KB of f32: stays in L2).
const TILE_ELEMS: usize = 1 << 17;

/// Multiply-adds below which a convolution runs on the calling thread.
const PARALLEL_MACS: usize = 1 << 21;

/// At most this many filter-gradient partial sums (each `kh*kw*in*out`)...
const MAX_PARTIALS: usize = 8;

/// ...and at most this many elements in all of them together.
const PARTIAL_BUDGET: usize = 1 << 22;

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

/// The attributes of a 2-D convolution (NHWC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dParams {
    /// Strides of the four NHWC dimensions.
    pub strides: [usize; 4],
    /// Dilations of the four NHWC dimensions.
    pub dilations: [usize; 4],
    pub padding: Padding,
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

/// Element types convolutions compute in natively.
pub(super) trait ConvScalar: Scalar + Send + Sync {
    /// `c = a @ b`, or `c += a @ b` when `accumulate`; `c` is row-major
    /// `m x n`, element `(i, j)` of `a` is at `i * a_rs + j * a_cs` (same for `b`).
    #[allow(clippy::too_many_arguments)] // BLAS-style signature
    fn gemm(
        m: usize,
        k: usize,
        n: usize,
        a: &[Self],
        a_rs: usize,
        a_cs: usize,
        b: &[Self],
        b_rs: usize,
        b_cs: usize,
        c: &mut [Self],
        accumulate: bool,
    );
}

/// Checks the extents of a strided GEMM's operands before the unsafe call.
#[allow(clippy::too_many_arguments)]
fn gemm_extents_ok<T>(
    m: usize,
    k: usize,
    n: usize,
    a: &[T],
    a_rs: usize,
    a_cs: usize,
    b: &[T],
    b_rs: usize,
    b_cs: usize,
    c: &[T],
) -> bool {
    let last = |r: usize, rs: usize, cc: usize, cs: usize| (r - 1) * rs + (cc - 1) * cs;
    m == 0
        || n == 0
        || k == 0
        || (last(m, a_rs, k, a_cs) < a.len()
            && last(k, b_rs, n, b_cs) < b.len()
            && m * n <= c.len())
}

macro_rules! blas_gemm {
    ($t:ty, $f:path) => {
        impl ConvScalar for $t {
            fn gemm(
                m: usize,
                k: usize,
                n: usize,
                a: &[$t],
                a_rs: usize,
                a_cs: usize,
                b: &[$t],
                b_rs: usize,
                b_cs: usize,
                c: &mut [$t],
                accumulate: bool,
            ) {
                assert!(gemm_extents_ok(m, k, n, a, a_rs, a_cs, b, b_rs, b_cs, c));
                if m == 0 || n == 0 {
                    return;
                }
                if k == 0 {
                    if !accumulate {
                        c[..m * n].fill(0.0);
                    }
                    return;
                }
                let beta = if accumulate { 1.0 } else { 0.0 };
                // SAFETY: `gemm_extents_ok` checked that every addressed
                // element of `a`, `b` and `c` lies inside its slice.
                unsafe {
                    $f(
                        m,
                        k,
                        n,
                        1.0,
                        a.as_ptr(),
                        a_rs as isize,
                        a_cs as isize,
                        b.as_ptr(),
                        b_rs as isize,
                        b_cs as isize,
                        beta,
                        c.as_mut_ptr(),
                        n as isize,
                        1,
                    );
                }
            }
        }
    };
}

blas_gemm!(f64, matrixmultiply::dgemm);

impl ConvScalar for f32 {
    fn gemm(
        m: usize,
        k: usize,
        n: usize,
        a: &[f32],
        a_rs: usize,
        a_cs: usize,
        b: &[f32],
        b_rs: usize,
        b_cs: usize,
        c: &mut [f32],
        accumulate: bool,
    ) {
        use super::matmul::{sgemm_slices, F32Gemm, Mat};
        let lib = F32Gemm::for_product(m, n, b_rs == 1 && n > 1);
        let layout = |rs: usize, cs: usize| Mat {
            rs: rs as isize,
            cs: cs as isize,
        };
        let (la, lb) = (layout(a_rs, a_cs), layout(b_rs, b_cs));
        sgemm_slices(lib, m, k, n, a, la, b, lb, c, accumulate);
    }
}

impl ConvScalar for i32 {
    fn gemm(
        m: usize,
        k: usize,
        n: usize,
        a: &[i32],
        a_rs: usize,
        a_cs: usize,
        b: &[i32],
        b_rs: usize,
        b_cs: usize,
        c: &mut [i32],
        accumulate: bool,
    ) {
        for i in 0..m {
            for j in 0..n {
                let mut acc = if accumulate { c[i * n + j] } else { 0 };
                for l in 0..k {
                    acc = acc
                        .wrapping_add(a[i * a_rs + l * a_cs].wrapping_mul(b[l * b_rs + j * b_cs]));
                }
                c[i * n + j] = acc;
            }
        }
    }
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

/// `Conv2D`: `input` `[batch, h, w, in]` convolved with `filter`
/// `[kh, kw, in, out]` (NHWC).
pub fn conv2d(input: &Tensor, filter: &Tensor, p: &Conv2dParams) -> Result<Tensor> {
    let op = "Conv2D";
    same_dtype(op, input, filter)?;
    let x = dims4(op, "convolution input", input.dims())?;
    let f = dims4(op, "convolution filter", filter.dims())?;
    let g = ConvGeom::new(op, x, f, p)?;
    conv_dispatch!(
        op,
        input.dtype(),
        [g.n, g.oh, g.ow, g.oc],
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
    conv_dispatch!(
        op,
        input.dtype(),
        f,
        conv2d_backprop_filter(&to_f32(input)?, filter_sizes, &to_f32(out_backprop)?, p),
        |T| backprop_filter_typed::<T>(input.as_slice()?, out_backprop.as_slice()?, &g)
    )
}

// ------------------------------------------------------------------ pooling

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
    pub(super) fn geom(&self, op: &str, input: &[usize]) -> Result<PoolGeom> {
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
pub(super) struct PoolGeom {
    pub(super) n: usize,
    pub(super) h: usize,
    pub(super) w: usize,
    pub(super) c: usize,
    pub(super) kh: usize,
    pub(super) kw: usize,
    pub(super) sh: usize,
    pub(super) sw: usize,
    pub(super) pt: usize,
    pub(super) pl: usize,
    pub(super) oh: usize,
    pub(super) ow: usize,
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
        if dx.len() >= super::parallel::PARALLEL_THRESHOLD && self.n > 1 {
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
                // Selects, not branches, with 32-bit positions: vectorises.
                let gt = v > *b;
                *b = if gt { v } else { *b };
                *a = if gt { k } else { *a };
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

    fn params(s: usize, d: usize, padding: Padding) -> Conv2dParams {
        Conv2dParams {
            strides: [1, s, s, 1],
            dilations: [1, d, d, 1],
            padding,
        }
    }

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

    fn values(n: usize, seed: u64) -> Vec<f64> {
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
