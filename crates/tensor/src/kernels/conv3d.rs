//! 3-D convolution and pooling over NDHWC tensors: TensorFlow's `Conv3D`,
//! `Conv3DBackpropInputV2`, `Conv3DBackpropFilterV2`, `MaxPool3D`,
//! `MaxPool3DGrad`, `MaxPool3DGradGrad`, `AvgPool3D` and `AvgPool3DGrad`.
//!
//! Convolutions lower to GEMM as the 2-D ones in [`conv`](super::conv) do
//! (and share its GEMM entry point, output-size rule and dtype dispatch): a
//! tile of output voxels gathers its input patches into a
//! `[voxels, kd * kh * kw * in_depth]` matrix (vol2col) that multiplies the
//! filter viewed as `[kd * kh * kw * in_depth, out_depth]`. The input
//! gradient scatters `out_backprop @ filterᵀ` back (col2vol); the filter
//! gradient sums `patchesᵀ @ out_backprop` over tiles, in groups fixed by
//! the shape alone, so results do not depend on the thread count.
//!
//! Unlike TensorFlow's CPU kernel, dilations larger than one are computed
//! (TensorFlow's GPU kernel supports them; its CPU kernel raises).

use super::conv::{
    conv_dispatch, float_dispatch, same_dtype, sum_partials, to_f32, windowed_output, ConvScalar,
    Lowest, Padding,
};
use super::elementwise::cast;
use super::parallel::zeroed;
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Elements of one vol2col tile (about 512 KB of f32).
const TILE_ELEMS: usize = 1 << 17;

/// Multiply-adds (or window visits) below which a kernel runs on the calling thread.
const PARALLEL_MACS: usize = 1 << 21;

/// At most this many filter-gradient partial sums...
const MAX_PARTIALS: usize = 8;

/// ...and at most this many elements in all of them together.
const PARTIAL_BUDGET: usize = 1 << 22;

fn five(op: &str, what: &str, v: &[i64]) -> Result<[usize; 5]> {
    if v.len() != 5 {
        return Err(Error::value(format!(
            "{op}: Sliding window {what} field must specify 5 dimensions, but got {}",
            v.len()
        )));
    }
    Ok([v[0], v[1], v[2], v[3], v[4]].map(|x| x.max(0) as usize))
}

fn padding3(op: &str, padding: &str) -> Result<Padding> {
    match padding {
        "VALID" => Ok(Padding::Valid),
        "SAME" => Ok(Padding::Same),
        other => Err(Error::value(format!(
            "Attr 'padding' of '{op}' Op passed string '{other}' not in: \"SAME\", \"VALID\"."
        ))),
    }
}

/// `d` as the five dimensions of an NDHWC tensor.
pub fn dims5(op: &str, what: &str, d: &[usize]) -> Result<[usize; 5]> {
    if d.len() != 5 {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must be 5-dimensional: [{}]",
            d.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    Ok([d[0], d[1], d[2], d[3], d[4]])
}

fn negative(op: &str, out: i64, input: usize, eff: usize, s: usize) -> Error {
    Error::invalid_argument(format!(
        "{op}: Computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {eff}, stride: {s}]"
    ))
}

/// The attributes of a 3-D convolution (NDHWC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv3dParams {
    /// Strides of the five NDHWC dimensions.
    pub strides: [usize; 5],
    /// Dilations of the five NDHWC dimensions.
    pub dilations: [usize; 5],
    /// `SAME` or `VALID`.
    pub padding: Padding,
}

impl Conv3dParams {
    /// Parses the `strides`, `dilations` (empty: all ones) and `padding`
    /// attributes; errors are construction-time (`ValueError`) ones.
    pub fn parse(op: &str, strides: &[i64], dilations: &[i64], padding: &str) -> Result<Self> {
        let s = five(op, "strides", strides)?;
        if let Some(&b) = strides.iter().find(|&&v| v <= 0) {
            return Err(Error::value(format!(
                "{op}: strides must be > 0, but got {b}"
            )));
        }
        let d = if dilations.is_empty() {
            [1; 5]
        } else {
            five(op, "dilations", dilations)?
        };
        if dilations.iter().any(|&v| v <= 0) {
            return Err(Error::value(format!(
                "{op}: dilation rates must be > 0, but got {dilations:?}"
            )));
        }
        Ok(Conv3dParams {
            strides: s,
            dilations: d,
            padding: padding3(op, padding)?,
        })
    }

    fn check_runtime(&self) -> Result<()> {
        let (s, d) = (self.strides, self.dilations);
        if s[0] != 1 || s[4] != 1 {
            return Err(Error::invalid_argument(
                "Current implementation does not yet support strides in the batch and depth dimensions.",
            ));
        }
        if d[0] != 1 || d[4] != 1 {
            return Err(Error::invalid_argument(
                "Current implementation does not yet support dilations rates in the batch and depth dimensions.",
            ));
        }
        Ok(())
    }
}

/// The sizes of one 3-D convolution.
#[derive(Clone, Copy, Debug)]
struct Geom {
    n: usize,
    i: [usize; 3],
    ic: usize,
    k: [usize; 3],
    oc: usize,
    s: [usize; 3],
    d: [usize; 3],
    pad: [usize; 3],
    o: [usize; 3],
}

impl Geom {
    fn new(op: &str, input: [usize; 5], filter: [usize; 5], p: &Conv3dParams) -> Result<Geom> {
        p.check_runtime()?;
        let [n, i0, i1, i2, ic] = input;
        let [k0, k1, k2, fic, oc] = filter;
        if fic == 0 || ic % fic != 0 {
            return Err(Error::invalid_argument(format!(
                "{op}: Input depth must be evenly divisible by filter depth: {ic} vs {fic}"
            )));
        }
        if ic != fic {
            return Err(Error::unimplemented(format!(
                "{op}: grouped convolutions (input depth {ic} = {} groups of filter depth {fic}) are not supported",
                ic / fic
            )));
        }
        let (i, k) = ([i0, i1, i2], [k0, k1, k2]);
        let s = [p.strides[1], p.strides[2], p.strides[3]];
        let d = [p.dilations[1], p.dilations[2], p.dilations[3]];
        let mut o = [0; 3];
        let mut pad = [0; 3];
        for j in 0..3 {
            let (out, before) = windowed_output(i[j], k[j], s[j], d[j], p.padding, 0)
                .map_err(|out| negative(op, out, i[j], (k[j].max(1) - 1) * d[j] + 1, s[j]))?;
            o[j] = out;
            pad[j] = before;
        }
        Ok(Geom {
            n,
            i,
            ic,
            k,
            oc,
            s,
            d,
            pad,
            o,
        })
    }

    fn pixels(&self) -> usize {
        self.o[0] * self.o[1] * self.o[2]
    }

    fn in_len(&self) -> usize {
        self.i[0] * self.i[1] * self.i[2] * self.ic
    }

    fn patch(&self) -> usize {
        self.k[0] * self.k[1] * self.k[2] * self.ic
    }

    fn macs(&self) -> usize {
        self.n * self.pixels() * self.patch() * self.oc
    }

    /// 1x1x1, unit strides, no padding: the input already is the patch matrix.
    fn pointwise(&self) -> bool {
        self.k == [1, 1, 1] && self.s == [1, 1, 1] && self.pad == [0, 0, 0] && self.o == self.i
    }

    /// Voxels per tile.
    fn rows_per_tile(&self, total: usize) -> usize {
        (TILE_ELEMS / self.patch().max(1)).clamp(1, total.max(1))
    }

    #[inline]
    fn coord(&self, j: usize, o: usize, k: usize) -> Option<usize> {
        (o * self.s[j] + k * self.d[j])
            .checked_sub(self.pad[j])
            .filter(|&v| v < self.i[j])
    }

    fn out_coords(&self, p: usize) -> [usize; 3] {
        let c2 = p % self.o[2];
        let r = p / self.o[2];
        [r / self.o[1], r % self.o[1], c2]
    }

    /// Calls `f(patch_offset, input_offset)` for every in-bounds tap of
    /// output voxel `p` (image-local); offsets count elements, `ic` apart.
    #[inline]
    fn taps(&self, p: usize, mut f: impl FnMut(usize, usize)) {
        let [a0, a1, a2] = self.out_coords(p);
        let c = self.ic;
        for k0 in 0..self.k[0] {
            let Some(z) = self.coord(0, a0, k0) else {
                continue;
            };
            for k1 in 0..self.k[1] {
                let Some(y) = self.coord(1, a1, k1) else {
                    continue;
                };
                for k2 in 0..self.k[2] {
                    let Some(x) = self.coord(2, a2, k2) else {
                        continue;
                    };
                    let tap = (k0 * self.k[1] + k1) * self.k[2] + k2;
                    f(tap * c, ((z * self.i[1] + y) * self.i[2] + x) * c);
                }
            }
        }
    }

    /// Gathers the patches of voxels `p0..p0 + m` (counted over the whole
    /// batch) of `x` into `buf` (`[m, patch]`, zero padding).
    fn vol2col<T: Copy + Default>(&self, x: &[T], p0: usize, m: usize, buf: &mut Vec<T>) {
        let k = self.patch();
        buf.clear();
        buf.resize(m * k, T::default());
        let (pix, img, c) = (self.pixels(), self.in_len(), self.ic);
        for r in 0..m {
            let gp = p0 + r;
            let xb = &x[(gp / pix) * img..][..img];
            let row = &mut buf[r * k..][..k];
            self.taps(gp % pix, |dst, src| {
                row[dst..dst + c].copy_from_slice(&xb[src..src + c]);
            });
        }
    }

    /// Adds patch rows of image-local voxels `p0..p0 + m` into one image's
    /// input gradient (the transpose of [`vol2col`](Self::vol2col)).
    fn col2vol<T: Scalar>(&self, cols: &[T], p0: usize, m: usize, dx: &mut [T]) {
        let (k, c) = (self.patch(), self.ic);
        for r in 0..m {
            let row = &cols[r * k..][..k];
            self.taps(p0 + r, |src, dst| {
                for (d, &s) in dx[dst..dst + c].iter_mut().zip(&row[src..src + c]) {
                    *d = d.add(s);
                }
            });
        }
    }

    fn check_out_backprop(&self, op: &str, dy: [usize; 5]) -> Result<()> {
        if dy[0] != self.n {
            return Err(Error::invalid_argument(format!(
                "{op}: input and out_backprop must have the same batch size, input batch: {} outbackprop batch: {}",
                self.n, dy[0]
            )));
        }
        if dy[4] != self.oc {
            return Err(Error::invalid_argument(format!(
                "{op}: filter and out_backprop must have the same out_depth: {} vs {}",
                self.oc, dy[4]
            )));
        }
        for j in 0..3 {
            if dy[j + 1] != self.o[j] {
                return Err(Error::invalid_argument(format!(
                    "{op}: Size of out_backprop doesn't match computed: actual = {}, computed = {} spatial_dim: {j} input: {} filter: {} output: {} stride: {} dilation: {}",
                    dy[j + 1], self.o[j], self.i[j], self.k[j], dy[j + 1], self.s[j], self.d[j]
                )));
            }
        }
        Ok(())
    }
}

fn conv3d_typed<T: ConvScalar>(x: &[T], w: &[T], g: &Geom) -> Vec<T> {
    let total = g.n * g.pixels();
    let mut out: Vec<T> = zeroed(total * g.oc);
    let k = g.patch();
    if out.is_empty() || k == 0 {
        return out;
    }
    if g.pointwise() {
        T::gemm(total, k, g.oc, x, k, 1, w, g.oc, 1, &mut out, false);
        return out;
    }
    let rows = g.rows_per_tile(total);
    let tile = |t: usize, o: &mut [T], buf: &mut Vec<T>| {
        let m = o.len() / g.oc;
        g.vol2col(x, t * rows, m, buf);
        T::gemm(m, k, g.oc, buf, k, 1, w, g.oc, 1, o, false);
    };
    if g.macs() >= PARALLEL_MACS {
        crate::team::for_each_chunk_mut(&mut out, rows * g.oc, |t, o| tile(t, o, &mut Vec::new()));
    } else {
        let mut buf = Vec::new();
        for (t, o) in out.chunks_mut(rows * g.oc).enumerate() {
            tile(t, o, &mut buf);
        }
    }
    out
}

fn backprop_input_typed<T: ConvScalar>(w: &[T], dy: &[T], g: &Geom) -> Vec<T> {
    let img = g.in_len();
    let mut dx: Vec<T> = zeroed(g.n * img);
    let (k, pix) = (g.patch(), g.pixels());
    if dx.is_empty() || pix * g.oc == 0 || k == 0 {
        return dx;
    }
    let rows = g.rows_per_tile(pix);
    let image = |b: usize, dxb: &mut [T]| {
        let mut cols = Vec::new();
        for p0 in (0..pix).step_by(rows) {
            let m = rows.min(pix - p0);
            cols.resize(m * k, T::zero());
            // cols = dy[b, p0..p0 + m] @ filterᵀ (the filter is [k, oc]).
            let dyt = &dy[(b * pix + p0) * g.oc..][..m * g.oc];
            T::gemm(m, g.oc, k, dyt, g.oc, 1, w, 1, g.oc, &mut cols, false);
            g.col2vol(&cols[..m * k], p0, m, dxb);
        }
    };
    if g.macs() >= PARALLEL_MACS && g.n > 1 {
        crate::team::for_each_chunk_mut(&mut dx, img, image);
    } else {
        for (b, dxb) in dx.chunks_mut(img).enumerate() {
            image(b, dxb);
        }
    }
    dx
}

fn backprop_filter_typed<T: ConvScalar>(x: &[T], dy: &[T], g: &Geom) -> Vec<T> {
    let k = g.patch();
    let size = k * g.oc;
    let total = g.n * g.pixels();
    if size == 0 || total == 0 {
        return vec![T::zero(); size];
    }
    let rows = g.rows_per_tile(total);
    let tiles: Vec<usize> = (0..total).step_by(rows).collect();
    let groups = tiles
        .len()
        .min(MAX_PARTIALS)
        .min((PARTIAL_BUDGET / size).max(1));
    let per_group = tiles.len().div_ceil(groups);
    let partial = |group: &[usize]| -> Vec<T> {
        let mut acc = vec![T::zero(); size];
        let mut buf = Vec::new();
        for &p0 in group {
            let m = rows.min(total - p0);
            let a: &[T] = if g.pointwise() {
                &x[p0 * k..][..m * k]
            } else {
                g.vol2col(x, p0, m, &mut buf);
                &buf
            };
            // filter += patchesᵀ @ dy
            let dyt = &dy[p0 * g.oc..][..m * g.oc];
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

/// `Conv3D`: `input` `[batch, d, h, w, in]` convolved with `filter`
/// `[kd, kh, kw, in, out]` (NDHWC).
pub fn conv3d(input: &Tensor, filter: &Tensor, p: &Conv3dParams) -> Result<Tensor> {
    let op = "Conv3D";
    same_dtype(op, input, filter)?;
    let x = dims5(op, "input", input.dims())?;
    let f = dims5(op, "filter", filter.dims())?;
    let g = Geom::new(op, x, f, p)?;
    conv_dispatch!(
        op,
        input.dtype(),
        [g.n, g.o[0], g.o[1], g.o[2], g.oc],
        conv3d(&to_f32(input)?, &to_f32(filter)?, p),
        |T| conv3d_typed::<T>(input.as_slice()?, filter.as_slice()?, &g)
    )
}

/// `Conv3DBackpropInputV2`: the gradient of [`conv3d`] with respect to an
/// input of shape `input_sizes` (also `conv3d_transpose`).
pub fn conv3d_backprop_input(
    input_sizes: &[usize],
    filter: &Tensor,
    out_backprop: &Tensor,
    p: &Conv3dParams,
) -> Result<Tensor> {
    let op = "Conv3DBackpropInputV2";
    same_dtype(op, filter, out_backprop)?;
    let x = dims5(op, "input_sizes", input_sizes)?;
    let f = dims5(op, "filter", filter.dims())?;
    let dy = dims5(op, "out_backprop", out_backprop.dims())?;
    let g = Geom::new(op, x, f, p)?;
    g.check_out_backprop(op, dy)?;
    conv_dispatch!(
        op,
        filter.dtype(),
        x,
        conv3d_backprop_input(input_sizes, &to_f32(filter)?, &to_f32(out_backprop)?, p),
        |T| backprop_input_typed::<T>(filter.as_slice()?, out_backprop.as_slice()?, &g)
    )
}

/// `Conv3DBackpropFilterV2`: the gradient of [`conv3d`] with respect to a
/// filter of shape `filter_sizes`.
pub fn conv3d_backprop_filter(
    input: &Tensor,
    filter_sizes: &[usize],
    out_backprop: &Tensor,
    p: &Conv3dParams,
) -> Result<Tensor> {
    let op = "Conv3DBackpropFilterV2";
    same_dtype(op, input, out_backprop)?;
    let x = dims5(op, "input", input.dims())?;
    let f = dims5(op, "filter_sizes", filter_sizes)?;
    let dy = dims5(op, "out_backprop", out_backprop.dims())?;
    let g = Geom::new(op, x, f, p)?;
    g.check_out_backprop(op, dy)?;
    conv_dispatch!(
        op,
        input.dtype(),
        f,
        conv3d_backprop_filter(&to_f32(input)?, filter_sizes, &to_f32(out_backprop)?, p),
        |T| backprop_filter_typed::<T>(input.as_slice()?, out_backprop.as_slice()?, &g)
    )
}

// ------------------------------------------------------------------ pooling

/// The attributes of a 3-D pooling op (NDHWC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool3dParams {
    /// Window size of the five NDHWC dimensions.
    pub ksize: [usize; 5],
    /// Strides of the five NDHWC dimensions.
    pub strides: [usize; 5],
    /// `SAME` or `VALID`.
    pub padding: Padding,
}

/// The sizes of one 3-D pool.
#[derive(Clone, Copy, Debug)]
struct PoolGeom3 {
    n: usize,
    i: [usize; 3],
    c: usize,
    k: [usize; 3],
    s: [usize; 3],
    pad: [usize; 3],
    o: [usize; 3],
}

impl Pool3dParams {
    /// Parses `ksize`, `strides` and `padding`; errors are construction-time ones.
    pub fn parse(op: &str, ksize: &[i64], strides: &[i64], padding: &str) -> Result<Self> {
        let k = five(op, "ksize", ksize)?;
        let s = five(op, "stride", strides)?;
        if ksize.iter().chain(strides).any(|&v| v <= 0) {
            return Err(Error::value(format!(
                "{op}: ksize and strides must be positive, got ksize {ksize:?} and strides {strides:?}"
            )));
        }
        if k[0] != 1 || s[0] != 1 {
            return Err(Error::value(format!(
                "{op}: Pooling is not yet supported on the batch dimension."
            )));
        }
        if k[4] != 1 || s[4] != 1 {
            return Err(Error::unimplemented(format!(
                "{op}: pooling across the depth dimension (ksize {ksize:?}, strides {strides:?}) is not supported"
            )));
        }
        Ok(Pool3dParams {
            ksize: k,
            strides: s,
            padding: padding3(op, padding)?,
        })
    }

    fn geom(&self, op: &str, dims: &[usize]) -> Result<PoolGeom3> {
        let [n, i0, i1, i2, c] = dims5(op, "input", dims)?;
        let i = [i0, i1, i2];
        let k = [self.ksize[1], self.ksize[2], self.ksize[3]];
        let s = [self.strides[1], self.strides[2], self.strides[3]];
        let (mut o, mut pad) = ([0; 3], [0; 3]);
        for j in 0..3 {
            let (out, before) = windowed_output(i[j], k[j], s[j], 1, self.padding, 0)
                .map_err(|out| negative(op, out, i[j], k[j], s[j]))?;
            o[j] = out;
            pad[j] = before;
        }
        Ok(PoolGeom3 {
            n,
            i,
            c,
            k,
            s,
            pad,
            o,
        })
    }
}

impl PoolGeom3 {
    fn in_dims(&self) -> [usize; 5] {
        [self.n, self.i[0], self.i[1], self.i[2], self.c]
    }

    fn out_dims(&self) -> [usize; 5] {
        [self.n, self.o[0], self.o[1], self.o[2], self.c]
    }

    fn in_len(&self) -> usize {
        self.i[0] * self.i[1] * self.i[2] * self.c
    }

    fn out_len(&self) -> usize {
        self.o[0] * self.o[1] * self.o[2] * self.c
    }

    fn work(&self) -> usize {
        self.n * self.out_len() * self.k[0] * self.k[1] * self.k[2]
    }

    /// The in-bounds input positions of output position `o` along `j`.
    fn window(&self, j: usize, o: usize) -> std::ops::Range<usize> {
        let start = o * self.s[j];
        let lo = start.saturating_sub(self.pad[j]).min(self.i[j]);
        let hi = (start + self.k[j])
            .saturating_sub(self.pad[j])
            .min(self.i[j]);
        lo..hi.max(lo)
    }

    /// The element offsets (image-local, `c` apart) of output voxel
    /// `(a0, a1, a2)`'s window, in row-major order.
    fn window_offsets(&self, a: [usize; 3], mut f: impl FnMut(usize)) {
        for z in self.window(0, a[0]) {
            for y in self.window(1, a[1]) {
                for x in self.window(2, a[2]) {
                    f(((z * self.i[1] + y) * self.i[2] + x) * self.c);
                }
            }
        }
    }

    fn count(&self, a: [usize; 3]) -> usize {
        (0..3).map(|j| self.window(j, a[j]).len()).product()
    }

    /// Runs `f(image_index, coords, out_row, image)` for every output voxel
    /// (`out_row`: its `c` channels; `image`: its image of `x`), images in
    /// parallel when large.
    fn for_out<T: Copy + Send + Sync>(
        &self,
        x: &[T],
        out: &mut [T],
        f: impl Fn(usize, [usize; 3], &mut [T], &[T]) + Sync,
    ) {
        let (img_in, img_out) = (self.in_len(), self.out_len());
        if img_out == 0 {
            return;
        }
        let image = |b: usize, ob: &mut [T]| {
            let xb = &x[b * img_in..][..img_in];
            for (p, row) in ob.chunks_mut(self.c).enumerate() {
                let a2 = p % self.o[2];
                let r = p / self.o[2];
                f(b, [r / self.o[1], r % self.o[1], a2], row, xb);
            }
        };
        if self.work() >= PARALLEL_MACS && self.n > 1 {
            crate::team::for_each_chunk_mut(out, img_out, image);
        } else {
            for (b, ob) in out.chunks_mut(img_out).enumerate() {
                image(b, ob);
            }
        }
    }

    /// Runs `f(image_index, in_grad_image)` per image: the scatter kernels
    /// (gradients flowing to the input), images in parallel when large.
    fn for_images_scatter<T: Copy + Send + Sync>(
        &self,
        dx: &mut [T],
        f: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let img_in = self.in_len();
        if img_in == 0 {
            return;
        }
        if self.work() >= PARALLEL_MACS && self.n > 1 {
            crate::team::for_each_chunk_mut(dx, img_in, f);
        } else {
            for (b, dxb) in dx.chunks_mut(img_in).enumerate() {
                f(b, dxb);
            }
        }
    }

    fn coords(&self, p: usize) -> [usize; 3] {
        let a2 = p % self.o[2];
        let r = p / self.o[2];
        [r / self.o[1], r % self.o[1], a2]
    }
}

fn max_pool3d_typed<T: Lowest + Send + Sync>(x: &[T], g: &PoolGeom3) -> Vec<T> {
    let mut out: Vec<T> = zeroed(g.n * g.out_len());
    g.for_out(x, &mut out, |_, a, o, xb| {
        o.fill(T::lowest());
        g.window_offsets(a, |off| {
            for (m, &v) in o.iter_mut().zip(&xb[off..off + g.c]) {
                *m = if v > *m { v } else { *m };
            }
        });
    });
    out
}

fn avg_pool3d_typed<T: Scalar + Send + Sync>(x: &[T], g: &PoolGeom3) -> Vec<T> {
    let mut out: Vec<T> = zeroed(g.n * g.out_len());
    g.for_out(x, &mut out, |_, a, o, xb| {
        o.fill(T::zero());
        g.window_offsets(a, |off| {
            for (m, &v) in o.iter_mut().zip(&xb[off..off + g.c]) {
                *m = m.add(v);
            }
        });
        let n = T::from_f64(g.count(a) as f64);
        for m in o.iter_mut() {
            *m = m.div(n);
        }
    });
    out
}

/// TensorFlow's `MaxPool3DGrad` sends each window's gradient to every
/// element within this distance of the window's maximum.
const MAX_POOL3D_TIE: f64 = 1e-5;

fn max_pool3d_grad_typed<T: Scalar + Send + Sync>(
    x: &[T],
    y: &[T],
    dy: &[T],
    g: &PoolGeom3,
) -> Vec<T> {
    let mut dx: Vec<T> = zeroed(g.n * g.in_len());
    let (img_in, img_out) = (g.in_len(), g.out_len());
    let tie = T::from_f64(MAX_POOL3D_TIE);
    g.for_images_scatter(&mut dx, |b, dxb| {
        let xb = &x[b * img_in..][..img_in];
        let (yb, dyb) = (&y[b * img_out..][..img_out], &dy[b * img_out..][..img_out]);
        for p in 0..img_out / g.c.max(1) {
            let (ym, gm) = (&yb[p * g.c..][..g.c], &dyb[p * g.c..][..g.c]);
            g.window_offsets(g.coords(p), |off| {
                for ch in 0..g.c {
                    if xb[off + ch].sub(ym[ch]).abs() < tie {
                        dxb[off + ch] = dxb[off + ch].add(gm[ch]);
                    }
                }
            });
        }
    });
    dx
}

fn max_pool3d_grad_grad_typed<T: Lowest + Send + Sync>(x: &[T], gg: &[T], g: &PoolGeom3) -> Vec<T> {
    let mut out: Vec<T> = zeroed(g.n * g.out_len());
    let img_in = g.in_len();
    g.for_out(x, &mut out, |b, a, o, xb| {
        let ggb = &gg[b * img_in..][..img_in];
        let mut m = vec![T::lowest(); g.c];
        o.fill(T::zero());
        let mut first = true;
        g.window_offsets(a, |off| {
            for ch in 0..g.c {
                let v = xb[off + ch];
                if first || v > m[ch] {
                    m[ch] = v;
                    o[ch] = ggb[off + ch];
                }
            }
            first = false;
        });
    });
    out
}

fn avg_pool3d_grad_typed<T: Scalar + Send + Sync>(dy: &[T], g: &PoolGeom3) -> Vec<T> {
    let mut dx: Vec<T> = zeroed(g.n * g.in_len());
    let img_out = g.out_len();
    g.for_images_scatter(&mut dx, |b, dxb| {
        let dyb = &dy[b * img_out..][..img_out];
        for p in 0..img_out / g.c.max(1) {
            let a = g.coords(p);
            let n = T::from_f64(g.count(a) as f64);
            let share: Vec<T> = dyb[p * g.c..][..g.c].iter().map(|&v| v.div(n)).collect();
            g.window_offsets(a, |off| {
                for (d, &s) in dxb[off..off + g.c].iter_mut().zip(&share) {
                    *d = d.add(s);
                }
            });
        }
    });
    dx
}

fn expect_dims5(op: &str, what: &str, t: &Tensor, want: [usize; 5]) -> Result<()> {
    if t.dims() != want {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must have shape {}, got {}",
            crate::Shape::new(&want),
            t.shape()
        )));
    }
    Ok(())
}

/// `MaxPool3D`: the maximum of each window (padding never wins).
pub fn max_pool3d(input: &Tensor, p: &Pool3dParams) -> Result<Tensor> {
    let op = "MaxPool3D";
    let g = p.geom(op, input.dims())?;
    float_dispatch!(
        op,
        input.dtype(),
        g.out_dims(),
        max_pool3d(&to_f32(input)?, p),
        |T| max_pool3d_typed::<T>(input.as_slice()?, &g)
    )
}

/// `AvgPool3D`: the mean of each window's in-bounds elements.
pub fn avg_pool3d(input: &Tensor, p: &Pool3dParams) -> Result<Tensor> {
    let op = "AvgPool3D";
    let g = p.geom(op, input.dims())?;
    float_dispatch!(
        op,
        input.dtype(),
        g.out_dims(),
        avg_pool3d(&to_f32(input)?, p),
        |T| avg_pool3d_typed::<T>(input.as_slice()?, &g)
    )
}

/// `MaxPool3DGrad`: each window's gradient goes to every element of the
/// window within 1e-5 of its maximum (TensorFlow's CPU rule).
pub fn max_pool3d_grad(
    orig_input: &Tensor,
    orig_output: &Tensor,
    grad: &Tensor,
    p: &Pool3dParams,
) -> Result<Tensor> {
    let op = "MaxPool3DGrad";
    let g = p.geom(op, orig_input.dims())?;
    expect_dims5(op, "orig_output", orig_output, g.out_dims())?;
    expect_dims5(op, "grad", grad, g.out_dims())?;
    same_dtype(op, orig_input, grad)?;
    same_dtype(op, orig_input, orig_output)?;
    float_dispatch!(
        op,
        grad.dtype(),
        g.in_dims(),
        max_pool3d_grad(
            &to_f32(orig_input)?,
            &to_f32(orig_output)?,
            &to_f32(grad)?,
            p
        ),
        |T| max_pool3d_grad_typed::<T>(
            orig_input.as_slice()?,
            orig_output.as_slice()?,
            grad.as_slice()?,
            &g
        )
    )
}

/// `MaxPool3DGradGrad`: for each window, `grad` (shaped like the input) at
/// the window's first maximum.
pub fn max_pool3d_grad_grad(
    orig_input: &Tensor,
    orig_output: &Tensor,
    grad: &Tensor,
    p: &Pool3dParams,
) -> Result<Tensor> {
    let op = "MaxPool3DGradGrad";
    let g = p.geom(op, orig_input.dims())?;
    expect_dims5(op, "orig_output", orig_output, g.out_dims())?;
    expect_dims5(op, "grad", grad, g.in_dims())?;
    same_dtype(op, orig_input, grad)?;
    float_dispatch!(
        op,
        grad.dtype(),
        g.out_dims(),
        max_pool3d_grad_grad(
            &to_f32(orig_input)?,
            &to_f32(orig_output)?,
            &to_f32(grad)?,
            p
        ),
        |T| max_pool3d_grad_grad_typed::<T>(orig_input.as_slice()?, grad.as_slice()?, &g)
    )
}

/// `AvgPool3DGrad`: each window's gradient shared equally by its in-bounds
/// elements of an input of shape `orig_input_shape`.
pub fn avg_pool3d_grad(
    orig_input_shape: &[usize],
    grad: &Tensor,
    p: &Pool3dParams,
) -> Result<Tensor> {
    let op = "AvgPool3DGrad";
    let g = p.geom(op, orig_input_shape)?;
    expect_dims5(op, "grad", grad, g.out_dims())?;
    float_dispatch!(
        op,
        grad.dtype(),
        g.in_dims(),
        avg_pool3d_grad(orig_input_shape, &to_f32(grad)?, p),
        |T| avg_pool3d_grad_typed::<T>(grad.as_slice()?, &g)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: &[usize], seed: u32) -> Tensor {
        let n: usize = dims.iter().product();
        let v: Vec<f64> = (0..n)
            .map(|i| {
                (((i as u32).wrapping_mul(2654435761).wrapping_add(seed)) % 1000) as f64 / 500.0
                    - 1.0
            })
            .collect();
        Tensor::from_vec(dims.to_vec(), v).unwrap()
    }

    /// Direct definition of Conv3D, for checking the GEMM path.
    fn naive(x: &Tensor, w: &Tensor, p: &Conv3dParams) -> Vec<f64> {
        let g = Geom::new(
            "t",
            dims5("t", "", x.dims()).unwrap(),
            dims5("t", "", w.dims()).unwrap(),
            p,
        )
        .unwrap();
        let (xs, ws) = (x.as_slice::<f64>().unwrap(), w.as_slice::<f64>().unwrap());
        let mut out = vec![0.0; g.n * g.pixels() * g.oc];
        for b in 0..g.n {
            for pix in 0..g.pixels() {
                g.taps(pix, |tap, src| {
                    for c in 0..g.ic {
                        for oc in 0..g.oc {
                            out[(b * g.pixels() + pix) * g.oc + oc] +=
                                xs[b * g.in_len() + src + c] * ws[(tap + c) * g.oc + oc];
                        }
                    }
                });
            }
        }
        out
    }

    fn params(s: [usize; 3], d: [usize; 3], padding: &str) -> Conv3dParams {
        let s = [1, s[0] as i64, s[1] as i64, s[2] as i64, 1];
        let d = [1, d[0] as i64, d[1] as i64, d[2] as i64, 1];
        Conv3dParams::parse("Conv3D", &s, &d, padding).unwrap()
    }

    #[test]
    fn conv3d_matches_direct_sum_and_adjoints_hold() {
        for (s, d, pad) in [
            ([1, 1, 1], [1, 1, 1], "SAME"),
            ([2, 1, 2], [1, 1, 1], "VALID"),
            ([1, 2, 1], [2, 1, 1], "SAME"),
            ([1, 1, 1], [1, 1, 1], "VALID"),
        ] {
            let p = params(s, d, pad);
            let x = t(&[2, 5, 4, 6, 3], 7);
            let w = t(&[2, 3, 2, 3, 4], 11);
            let y = conv3d(&x, &w, &p).unwrap();
            let want = naive(&x, &w, &p);
            for (a, b) in y.as_slice::<f64>().unwrap().iter().zip(&want) {
                assert!((a - b).abs() < 1e-9, "{a} vs {b}");
            }
            // <conv(x, w), dy> = <x, dx(dy)> = <w, dw(dy)>.
            let dy = t(y.dims(), 3);
            let dx = conv3d_backprop_input(x.dims(), &w, &dy, &p).unwrap();
            let dw = conv3d_backprop_filter(&x, w.dims(), &dy, &p).unwrap();
            let dot = |a: &Tensor, b: &Tensor| -> f64 {
                a.as_slice::<f64>()
                    .unwrap()
                    .iter()
                    .zip(b.as_slice::<f64>().unwrap())
                    .map(|(p, q)| p * q)
                    .sum()
            };
            let lhs = dot(&y, &dy);
            assert!((lhs - dot(&x, &dx)).abs() < 1e-8 * lhs.abs().max(1.0));
            assert!((lhs - dot(&w, &dw)).abs() < 1e-8 * lhs.abs().max(1.0));
        }
    }

    #[test]
    fn conv3d_errors_name_the_op() {
        let p = params([1, 1, 1], [1, 1, 1], "VALID");
        let e = conv3d(&t(&[1, 2, 2, 2, 3], 1), &t(&[4, 1, 1, 3, 1], 1), &p).unwrap_err();
        assert!(e
            .message()
            .contains("Conv3D: Computed output size would be negative"));
        let e = conv3d(&t(&[1, 2, 2, 3], 1), &t(&[1, 1, 1, 3, 1], 1), &p).unwrap_err();
        assert!(e.message().contains("must be 5-dimensional"));
        assert!(Conv3dParams::parse("Conv3D", &[1, 1, 1, 1], &[], "SAME").is_err());
    }

    #[test]
    fn pool3d_values_and_gradients() {
        let p =
            Pool3dParams::parse("MaxPool3D", &[1, 2, 2, 2, 1], &[1, 1, 1, 1, 1], "VALID").unwrap();
        let x = Tensor::from_vec(
            vec![1, 2, 2, 2, 1],
            vec![1.0f32, 3., 3., 2., 3., 0., 1., 3.],
        )
        .unwrap();
        let y = max_pool3d(&x, &p).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[3.0]);
        let dy = Tensor::from_vec(vec![1, 1, 1, 1, 1], vec![1.0f32]).unwrap();
        let dx = max_pool3d_grad(&x, &y, &dy, &p).unwrap();
        assert_eq!(
            dx.as_slice::<f32>().unwrap(),
            &[0., 1., 1., 0., 1., 0., 0., 1.]
        );
        let gg =
            Tensor::from_vec(vec![1, 2, 2, 2, 1], (1..=8).map(|v| v as f32).collect()).unwrap();
        let r = max_pool3d_grad_grad(&x, &y, &gg, &p).unwrap();
        assert_eq!(r.as_slice::<f32>().unwrap(), &[2.0]);
        let pa =
            Pool3dParams::parse("AvgPool3D", &[1, 2, 2, 2, 1], &[1, 2, 2, 2, 1], "SAME").unwrap();
        let x = t(&[1, 3, 3, 3, 2], 5);
        let y = avg_pool3d(&x, &pa).unwrap();
        assert_eq!(y.dims(), &[1, 2, 2, 2, 2]);
        // The last window holds one element: its mean is that element.
        let xs = x.as_slice::<f64>().unwrap();
        assert_eq!(y.as_slice::<f64>().unwrap()[15], xs[53]);
        let dy = t(y.dims(), 9);
        let dx = avg_pool3d_grad(x.dims(), &dy, &pa).unwrap();
        let dot = |a: &Tensor, b: &Tensor| -> f64 {
            a.as_slice::<f64>()
                .unwrap()
                .iter()
                .zip(b.as_slice::<f64>().unwrap())
                .map(|(p, q)| p * q)
                .sum()
        };
        assert!((dot(&y, &dy) - dot(&x, &dx)).abs() < 1e-12);
    }
}
