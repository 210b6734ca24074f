//! Direct f32 convolutions on AVX-512: no im2col.
//!
//! A convolution is a product whose left operand is never built: the patch
//! of output pixel `p` at depth index `j = (ky * kw + kx) * c + ci` is the
//! input element at `base(p) + offset(j)` of a zero-padded image, where
//! `base` steps by `stride * c` along an output row and `offset` comes from a
//! table. The kernels read the image in place through that table:
//!
//! * forward (`Conv2D`, and `Conv2DBackpropInput` at unit strides, which is
//!   the forward convolution of the padded output gradient with the flipped
//!   filter): register tiles of up to [`MR`] output pixels of one row by
//!   [`PANEL`] output channels, the filter packed into panels; every output
//!   is one chain of fused multiply-adds in depth order;
//! * filter gradient (`Conv2DBackpropFilter`): register tiles of up to
//!   [`MR`] depth indices by [`PANEL`] output channels, summing over the
//!   pixels of a unit (an image's rows) in pixel order; units form groups
//!   fixed by the shape, each with its own partial sum, added in order.
//!
//! Neither depends on the number of threads. Measured against the im2col
//! path on a 2-core Cascade Lake at one thread (`benches/conv_direct.py`):
//! see `benches/RESULTS.md`.

use std::borrow::Cow;

use std::mem::MaybeUninit;

use crate::kernels::parallel::{advise_huge_pages, zeroed};
use crate::team;

/// Output channels per register tile (two vectors of 16 lanes).
const PANEL: usize = 32;

/// Pixels (forward) or depth indices (filter gradient) per register tile.
const MR: usize = 12;

/// Pixels per row of a forward tile over two output rows (28 of the 32
/// vector registers hold sums).
const PAIR_MR: usize = 7;

/// Multiply-adds below which a convolution runs on the calling thread.
const PARALLEL_MACS: usize = 1 << 21;

/// Channels per block of the blocked image layout (one vector).
const LANES: usize = 16;

/// Input channels from which the forward kernel reads a channel-blocked
/// copy of the image (fewer: the offset-table kernel reads it as it is).
const BLOCKED_MIN_CHANNELS: usize = 16;

/// Output pixels per filter-gradient unit (rounded to whole rows).
const UNIT_PIXELS: usize = 256;

/// At most this many filter-gradient partial sums...
const MAX_PARTIALS: usize = 8;

/// ...holding at most this many elements together.
const PARTIAL_BUDGET: usize = 1 << 22;

/// True when the CPU runs these kernels (checked once).
pub(super) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static OK: OnceLock<bool> = OnceLock::new();
        *OK.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::env::var("FERROFLOW_DIRECT_CONV").as_deref() != Ok("0")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One convolution as the kernels see it: an NHWC image batch, where the
/// window of output pixel `(oy, ox)` starts (at tap 0, 0) `pad` rows and
/// columns before input pixel `(oy * stride, ox * stride)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    /// Images.
    pub n: usize,
    /// Input height, width and depth.
    pub ih: usize,
    pub iw: usize,
    pub c: usize,
    /// Filter height and width.
    pub kh: usize,
    pub kw: usize,
    /// Strides and dilations (height, width).
    pub stride: (usize, usize),
    pub dilation: (usize, usize),
    /// Zero rows above and columns left of the input.
    pub pad: (usize, usize),
    /// Output height and width.
    pub oh: usize,
    pub ow: usize,
}

/// The zero-padded images a window reads, with their row length.
struct Padded<'a> {
    data: Cow<'a, [f32]>,
    /// Rows per image.
    h: usize,
    /// Pixels per row.
    w: usize,
}

impl Window {
    /// Depth of the product: elements of one patch.
    fn depth(&self) -> usize {
        self.kh * self.kw * self.c
    }

    fn macs(&self, out_channels: usize) -> usize {
        self.n * self.oh * self.ow * self.depth() * out_channels
    }

    /// Rows and columns of padded input the windows cover.
    fn extent(&self) -> (usize, usize) {
        let reach = |o: usize, s: usize, k: usize, d: usize| (o - 1) * s + (k - 1) * d + 1;
        (
            reach(self.oh, self.stride.0, self.kh, self.dilation.0),
            reach(self.ow, self.stride.1, self.kw, self.dilation.1),
        )
    }

    /// The input itself when no window reaches past it, else a zero-padded
    /// copy of the part the windows cover.
    fn padded<'a>(&self, x: &'a [f32]) -> Padded<'a> {
        let (h, w) = self.extent();
        let (pt, pl) = self.pad;
        if pt == 0 && pl == 0 && h <= self.ih && w <= self.iw {
            return Padded {
                data: Cow::Borrowed(x),
                h: self.ih,
                w: self.iw,
            };
        }
        let c = self.c;
        let (img_in, img_out) = (self.ih * self.iw * c, h * w * c);
        let mut data: Vec<f32> = zeroed(self.n * img_out);
        let rows = self.ih.min(h.saturating_sub(pt));
        let cols = self.iw.min(w.saturating_sub(pl));
        let copy = |b: usize, dst: &mut [f32]| {
            let src = &x[b * img_in..][..img_in];
            for y in 0..rows {
                let d = &mut dst[((y + pt) * w + pl) * c..][..cols * c];
                d.copy_from_slice(&src[y * self.iw * c..][..cols * c]);
            }
        };
        if data.len() >= 1 << 16 {
            team::for_each_chunk_mut(&mut data, img_out.max(1), copy);
        } else {
            for (b, dst) in data.chunks_mut(img_out.max(1)).enumerate() {
                copy(b, dst);
            }
        }
        Padded {
            data: Cow::Owned(data),
            h,
            w,
        }
    }

    /// The zero-padded images the windows cover, channel-blocked:
    /// `[n][blocks][h][w][LANES]` with `blocks = ceil(c / LANES)`, the
    /// channels past `c` zero. A window tap then reads `LANES` channels of
    /// consecutive output pixels at a fixed distance from each other.
    fn blocked(&self, x: &[f32]) -> Padded<'static> {
        let (h, w) = self.extent();
        let (pt, pl) = self.pad;
        let c = self.c;
        let blocks = c.div_ceil(LANES);
        let (img_in, img_out) = (self.ih * self.iw * c, blocks * h * w * LANES);
        let mut data: Vec<f32> = zeroed(self.n * img_out);
        let rows = self.ih.min(h.saturating_sub(pt));
        let cols = self.iw.min(w.saturating_sub(pl));
        let copy = |b: usize, dst: &mut [f32]| {
            let src = &x[b * img_in..][..img_in];
            for y in 0..rows {
                for xx in 0..cols {
                    let pixel = &src[(y * self.iw + xx) * c..][..c];
                    for (k, chans) in pixel.chunks(LANES).enumerate() {
                        let at = ((k * h + y + pt) * w + xx + pl) * LANES;
                        dst[at..at + chans.len()].copy_from_slice(chans);
                    }
                }
            }
        };
        if data.len() >= 1 << 16 {
            team::for_each_chunk_mut(&mut data, img_out.max(1), copy);
        } else {
            for (b, dst) in data.chunks_mut(img_out.max(1)).enumerate() {
                copy(b, dst);
            }
        }
        Padded {
            data: Cow::Owned(data),
            h,
            w,
        }
    }

    /// Offset of depth index `j` from its window's first element, in an
    /// image `w` pixels wide.
    fn offsets(&self, w: usize) -> Vec<usize> {
        let (dh, dw) = self.dilation;
        let mut out = Vec::with_capacity(self.depth());
        for ky in 0..self.kh {
            for kx in 0..self.kw {
                let tap = (ky * dh * w + kx * dw) * self.c;
                out.extend((0..self.c).map(|ci| tap + ci));
            }
        }
        out
    }
}

/// The filter `[depth, oc]` (row-major) in panels of [`PANEL`] channels,
/// each `depth` rows of `PANEL` floats, zero padded.
fn pack_panels(w: &[f32], depth: usize, oc: usize) -> Vec<f32> {
    let panels = oc.div_ceil(PANEL);
    let mut out = vec![0.0; panels * depth * PANEL];
    for (p, panel) in out.chunks_exact_mut(depth * PANEL).enumerate() {
        let o0 = p * PANEL;
        let cols = (oc - o0).min(PANEL);
        for (j, dst) in panel.chunks_exact_mut(PANEL).enumerate() {
            dst[..cols].copy_from_slice(&w[j * oc + o0..][..cols]);
        }
    }
    out
}

/// The forward convolution of `x` (`[n, ih, iw, c]`) with the filter `w`
/// (`[kh, kw, c, oc]`): `[n, oh, ow, oc]`. Callers check [`available`].
pub(super) fn forward(x: &[f32], w: &[f32], win: &Window, oc: usize) -> Vec<f32> {
    let depth = win.depth();
    let rows_out = win.n * win.oh;
    let row_len = win.ow * oc;
    if rows_out * row_len == 0 || depth == 0 {
        return zeroed(rows_out * row_len);
    }
    assert!(x.len() >= win.n * win.ih * win.iw * win.c && w.len() >= depth * oc);
    let kernel = if win.c >= BLOCKED_MIN_CHANNELS {
        Forward::blocked(x, w, win, oc)
    } else {
        Forward::offsets(x, w, win, oc)
    };
    // Every output element is written exactly once below (the rows cover
    // the images, a row's tiles its pixels, the panels its channels), so
    // the output is not cleared first.
    let mut out: Vec<MaybeUninit<f32>> = Vec::with_capacity(rows_out * row_len);
    // SAFETY: `MaybeUninit` elements need no initialisation.
    unsafe { out.set_len(rows_out * row_len) };
    advise_huge_pages(&out);
    // Output rows `first..` filling `dst`, two of one image at a time
    // where the kernel takes pairs.
    let rows = |first: usize, dst: &mut [MaybeUninit<f32>]| {
        let end = first + dst.len() / row_len;
        let mut r = first;
        while r < end {
            let (b, oy) = (r / win.oh, r % win.oh);
            let pair = kernel.pairs() && oy + 1 < win.oh && r + 1 < end;
            let n = 1 + pair as usize;
            kernel.rows(b, oy, n, &mut dst[(r - first) * row_len..][..n * row_len]);
            r += n;
        }
    };
    if win.macs(oc) >= PARALLEL_MACS {
        let per_task = rows_out.div_ceil(4 * team::threads()).max(2);
        team::for_each_chunk_mut(&mut out, per_task * row_len, |t, chunk| {
            rows(t * per_task, chunk)
        });
    } else {
        rows(0, &mut out);
    }
    let mut out = std::mem::ManuallyDrop::new(out);
    // SAFETY: every element was written (see above); `MaybeUninit<f32>`
    // and `f32` have one layout, so the allocation is a `Vec<f32>`'s.
    unsafe { Vec::from_raw_parts(out.as_mut_ptr().cast::<f32>(), out.len(), out.capacity()) }
}

/// A forward convolution ready to run row by row: the image as the
/// kernel reads it and the packed filter.
struct Forward<'a> {
    win: Window,
    oc: usize,
    img: Padded<'a>,
    /// Elements per image of `img`.
    img_len: usize,
    /// Panels of `depth * PANEL` floats.
    panels: Vec<f32>,
    depth: usize,
    layout: Layout,
}

/// How the forward kernel finds a window's elements.
enum Layout {
    /// NHWC image; depth index `j` at `offsets[j]` from the window.
    Offsets(Vec<usize>),
    /// Channel-blocked image (see [`Window::blocked`]); tap `t` of block 0
    /// at `taps[t]` from the window, blocks `block_len` apart.
    Blocked {
        taps: Vec<usize>,
        blocks: usize,
        block_len: usize,
    },
}

impl<'a> Forward<'a> {
    fn offsets(x: &'a [f32], w: &[f32], win: &Window, oc: usize) -> Forward<'a> {
        let img = win.padded(x);
        let depth = win.depth();
        Forward {
            win: *win,
            oc,
            img_len: img.h * img.w * win.c,
            layout: Layout::Offsets(win.offsets(img.w)),
            img,
            panels: pack_panels(w, depth, oc),
            depth,
        }
    }

    fn blocked(x: &[f32], w: &[f32], win: &Window, oc: usize) -> Forward<'a> {
        let img = win.blocked(x);
        let blocks = win.c.div_ceil(LANES);
        let (dh, dw) = win.dilation;
        let taps: Vec<usize> = (0..win.kh)
            .flat_map(|ky| (0..win.kw).map(move |kx| (ky * dh * img.w + kx * dw) * LANES))
            .collect();
        // The filter's depth padded to whole blocks (zero weights).
        let cp = blocks * LANES;
        let mut wp = vec![0.0f32; taps.len() * cp * oc];
        for t in 0..taps.len() {
            let src = &w[t * win.c * oc..][..win.c * oc];
            wp[t * cp * oc..][..win.c * oc].copy_from_slice(src);
        }
        let depth = taps.len() * cp;
        let block_len = img.h * img.w * LANES;
        Forward {
            win: *win,
            oc,
            img_len: blocks * block_len,
            img,
            panels: pack_panels(&wp, depth, oc),
            depth,
            layout: Layout::Blocked {
                taps,
                blocks,
                block_len,
            },
        }
    }

    /// Whether [`rows`](Self::rows) takes two rows at a time.
    fn pairs(&self) -> bool {
        matches!(self.layout, Layout::Blocked { .. })
    }

    /// Output rows `oy..oy + n` of image `b` (`n * ow * oc` floats); `n`
    /// is 2 only when the kernel [`pairs`](Self::pairs) rows.
    fn rows(&self, b: usize, oy: usize, n: usize, dst: &mut [MaybeUninit<f32>]) {
        let win = &self.win;
        let (oc, depth) = (self.oc, self.depth);
        let data = &self.img.data;
        let (lanes, last) = match &self.layout {
            Layout::Offsets(offsets) => (win.c, offsets[depth - 1]),
            Layout::Blocked {
                taps,
                blocks,
                block_len,
            } => (
                LANES,
                taps[taps.len() - 1] + (blocks - 1) * block_len + LANES - 1,
            ),
        };
        let row_step = win.stride.0 * self.img.w * lanes;
        let origin = b * self.img_len + oy * row_step;
        let pixel_step = win.stride.1 * lanes;
        // Near-equal tiles of at most MR pixels, or PAIR_MR per row of a pair.
        let tiles = win.ow.div_ceil(if n == 2 { PAIR_MR } else { MR });
        let mut ox = 0;
        for t in 0..tiles {
            let len = (win.ow - ox) / (tiles - t);
            let a = origin + ox * pixel_step;
            // The tile's last window ends inside the image data.
            assert!(a + (n - 1) * row_step + (len - 1) * pixel_step + last < data.len());
            for (p, panel) in self.panels.chunks_exact(depth * PANEL).enumerate() {
                let o0 = p * PANEL;
                let cols = (oc - o0).min(PANEL);
                let out = Out {
                    c: dst[ox * oc + o0..].as_mut_ptr().cast::<f32>(),
                    ldc: oc,
                    row: win.ow * oc,
                    cols,
                };
                #[cfg(target_arch = "x86_64")]
                // SAFETY: AVX-512 is present (callers check `available`);
                // the last element read lies inside the image (asserted
                // above), the panel holds `depth * PANEL` floats, and the
                // tile writes `len` pixels of `cols` channels from `o0`
                // in each of its `n` rows of `dst` (`ow * oc` floats each).
                unsafe {
                    let a = data.as_ptr().add(a);
                    match &self.layout {
                        Layout::Offsets(offsets) => {
                            avx512::forward_tile(len, a, pixel_step, offsets, panel.as_ptr(), out)
                        }
                        Layout::Blocked {
                            taps,
                            blocks,
                            block_len,
                        } => avx512::blocked_tile(
                            (n, len),
                            (a, row_step),
                            win.stride.1,
                            (taps, *blocks, *block_len),
                            panel.as_ptr(),
                            out,
                        ),
                    }
                }
                #[cfg(not(target_arch = "x86_64"))]
                let _ = (panel, out, a);
            }
            ox += len;
        }
    }
}

/// Where a register tile's outputs go: `cols` channels per pixel, pixels
/// `ldc` floats apart, a second row of pixels `row` floats after the first.
#[derive(Clone, Copy)]
struct Out {
    c: *mut f32,
    ldc: usize,
    row: usize,
    cols: usize,
}

/// `Conv2DBackpropInput` at unit strides: the input gradient `[n, ih, iw,
/// c]` of a convolution with filter `w` (`[kh, kw, c, oc]`) from the output
/// gradient `dy` (`[n, oh, ow, oc]`), as the forward convolution of `dy`
/// with the filter flipped in space and transposed in depth. `None` when
/// the convolution has larger strides or pads more than a window's reach
/// (the caller then uses im2col).
pub(super) fn backprop_input(w: &[f32], dy: &[f32], win: &Window, oc: usize) -> Option<Vec<f32>> {
    let (dh, dw) = win.dilation;
    if win.stride != (1, 1) {
        return None;
    }
    let top = ((win.kh - 1) * dh).checked_sub(win.pad.0)?;
    let left = ((win.kw - 1) * dw).checked_sub(win.pad.1)?;
    let (kh, kw, c) = (win.kh, win.kw, win.c);
    // flipped[ky][kx][o][ci] = w[kh-1-ky][kw-1-kx][ci][o]
    let mut flipped = vec![0.0f32; kh * kw * oc * c];
    for ky in 0..kh {
        for kx in 0..kw {
            let src = &w[((kh - 1 - ky) * kw + (kw - 1 - kx)) * c * oc..][..c * oc];
            let dst = &mut flipped[(ky * kw + kx) * oc * c..][..oc * c];
            for ci in 0..c {
                for o in 0..oc {
                    dst[o * c + ci] = src[ci * oc + o];
                }
            }
        }
    }
    let transposed = Window {
        n: win.n,
        ih: win.oh,
        iw: win.ow,
        c: oc,
        kh,
        kw,
        stride: (1, 1),
        dilation: win.dilation,
        pad: (top, left),
        oh: win.ih,
        ow: win.iw,
    };
    Some(forward(dy, &flipped, &transposed, c))
}

/// `Conv2DBackpropFilter`: the filter gradient `[kh, kw, c, oc]` of a
/// convolution of `x` (`[n, ih, iw, c]`) from the output gradient `dy`
/// (`[n, oh, ow, oc]`).
pub(super) fn backprop_filter(x: &[f32], dy: &[f32], win: &Window, oc: usize) -> Vec<f32> {
    let depth = win.depth();
    let size = depth * oc;
    if size == 0 || win.n * win.oh * win.ow == 0 {
        return vec![0.0; size];
    }
    assert!(dy.len() >= win.n * win.oh * win.ow * oc);
    let img = win.padded(x);
    let offsets = win.offsets(img.w);
    let img_len = img.h * img.w * win.c;
    let pixel_step = win.stride.1 * win.c;
    let rows_per_unit = UNIT_PIXELS.div_ceil(win.ow).clamp(1, win.oh);
    let units: Vec<(usize, usize)> = (0..win.n)
        .flat_map(|b| (0..win.oh).step_by(rows_per_unit).map(move |r0| (b, r0)))
        .collect();
    let groups = units
        .len()
        .min(MAX_PARTIALS)
        .min((PARTIAL_BUDGET / size).max(1));
    let per_group = units.len().div_ceil(groups);
    let partial = |group: &[(usize, usize)]| -> Vec<f32> {
        let mut acc = vec![0.0f32; size];
        for &(b, r0) in group {
            let rows = rows_per_unit.min(win.oh - r0);
            let origin = b * img_len + r0 * win.stride.0 * img.w * win.c;
            let dy0 = (b * win.oh + r0) * win.ow * oc;
            let last_row = (rows - 1) * win.stride.0 * img.w * win.c;
            let last_px = (win.ow - 1) * pixel_step;
            assert!(origin + last_row + last_px + offsets[depth - 1] < img.data.len());
            let mut j0 = 0;
            while j0 < depth {
                let len = (depth - j0).min(MR);
                let offs = &offsets[j0..j0 + len];
                for o0 in (0..oc).step_by(PANEL) {
                    let cols = (oc - o0).min(PANEL);
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: AVX-512 is present; every element read lies at
                    // or before the last one asserted above; `dy` holds the
                    // unit's `rows * ow * oc` floats from `dy0`; the tile's
                    // `len` rows of `cols` channels lie inside `acc`.
                    unsafe {
                        avx512::filter_tile(
                            img.data.as_ptr().add(origin),
                            offs,
                            (rows, win.ow),
                            (win.stride.0 * img.w * win.c, pixel_step),
                            dy.as_ptr().add(dy0 + o0),
                            oc,
                            acc.as_mut_ptr().add(j0 * oc + o0),
                            cols,
                        );
                    }
                    #[cfg(not(target_arch = "x86_64"))]
                    let _ = (offs, cols, last_row, last_px, dy0, origin);
                }
                j0 += len;
            }
        }
        acc
    };
    let partials: Vec<Vec<f32>> = if win.macs(oc) >= PARALLEL_MACS {
        team::map_chunks(&units, per_group, |_, g| partial(g))
    } else {
        units.chunks(per_group).map(partial).collect()
    };
    super::sum_partials(partials, size)
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Out, LANES, MR, PAIR_MR, PANEL};
    use std::arch::x86_64::*;

    /// The mask of the first `n` (at most 16) lanes.
    fn lane_mask(n: usize) -> u16 {
        if n >= 16 {
            u16::MAX
        } else {
            (1u16 << n) - 1
        }
    }

    /// `len` (1..=MR) pixels by one panel: `c[r][0..cols] = sum_j a[r *
    /// step + offsets[j]] * panel[j][..]`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn forward_tile(
        len: usize,
        a: *const f32,
        step: usize,
        offsets: &[usize],
        panel: *const f32,
        out: Out,
    ) {
        macro_rules! tile {
            ($($r:literal)*) => {
                match len {
                    $($r => forward_rows::<$r>(a, step, offsets, panel, out),)*
                    _ => unreachable!("tile of {len} pixels"),
                }
            };
        }
        const { assert!(MR == 12) };
        tile!(1 2 3 4 5 6 7 8 9 10 11 12)
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::needless_range_loop)]
    unsafe fn forward_rows<const R: usize>(
        a: *const f32,
        step: usize,
        offsets: &[usize],
        panel: *const f32,
        out: Out,
    ) {
        let mut s = [[_mm512_setzero_ps(); 2]; R];
        let mut pixel = [a; R];
        for r in 1..R {
            pixel[r] = a.add(r * step);
        }
        let mut b = panel;
        for &off in offsets {
            let w0 = _mm512_loadu_ps(b);
            let w1 = _mm512_loadu_ps(b.add(16));
            for r in 0..R {
                let x = _mm512_set1_ps(*pixel[r].add(off));
                s[r][0] = _mm512_fmadd_ps(x, w0, s[r][0]);
                s[r][1] = _mm512_fmadd_ps(x, w1, s[r][1]);
            }
            b = b.add(PANEL);
        }
        store(&s, out);
    }

    /// Writes a tile's sums, masked to the panel's valid channels.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn store<const R: usize>(s: &[[__m512; 2]; R], out: Out) {
        let masks = [
            lane_mask(out.cols.min(16)),
            lane_mask(out.cols.saturating_sub(16)),
        ];
        for (r, sums) in s.iter().enumerate() {
            for (v, &sum) in sums.iter().enumerate() {
                _mm512_mask_storeu_ps(out.c.add(r * out.ldc + 16 * v), masks[v], sum);
            }
        }
    }

    /// `rows` (1 or 2) rows of `len` pixels (MR, or PAIR_MR per row of a pair) by one
    /// panel over a channel-blocked image: for each tap `t` and block `k`,
    /// the `LANES` channels of pixel `i` of row `y` at `a + y * row_step +
    /// taps[t] + k * block_len + i * stride * LANES`. Strides 1 and 2 are
    /// compiled in (the pixels' distance is then a constant).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn blocked_tile(
        (rows, len): (usize, usize),
        (a, row_step): (*const f32, usize),
        stride: usize,
        taps: (&[usize], usize, usize),
        panel: *const f32,
        out: Out,
    ) {
        macro_rules! tile {
            ($rows:literal: $($r:literal)*) => {
                match (len, stride) {
                    $(($r, 1) => blocked_rows::<$r, $rows, 1>(a, row_step, stride, taps, panel, out),
                      ($r, 2) => blocked_rows::<$r, $rows, 2>(a, row_step, stride, taps, panel, out),
                      ($r, _) => blocked_rows::<$r, $rows, 0>(a, row_step, stride, taps, panel, out),)*
                    (n, _) => unreachable!("tile of {rows} x {n} pixels"),
                }
            };
        }
        const { assert!(MR == 12 && PAIR_MR == 7) };
        if rows == 2 {
            tile!(2: 1 2 3 4 5 6 7)
        } else {
            tile!(1: 1 2 3 4 5 6 7 8 9 10 11 12)
        }
    }

    /// `STRIDE` 0: the stride is `stride`, known only at run time.
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::needless_range_loop)]
    unsafe fn blocked_rows<const R: usize, const ROWS: usize, const STRIDE: usize>(
        a: *const f32,
        row_step: usize,
        stride: usize,
        (taps, blocks, block_len): (&[usize], usize, usize),
        panel: *const f32,
        out: Out,
    ) {
        let step = if STRIDE == 0 { stride } else { STRIDE } * LANES;
        let mut s = [[[_mm512_setzero_ps(); 2]; R]; ROWS];
        let mut b = panel;
        for &tap in taps {
            for k in 0..blocks {
                let p = [
                    a.add(tap + k * block_len),
                    a.add(row_step + tap + k * block_len),
                ];
                for ci in 0..LANES {
                    let w0 = _mm512_loadu_ps(b);
                    let w1 = _mm512_loadu_ps(b.add(16));
                    for y in 0..ROWS {
                        for r in 0..R {
                            let x = _mm512_set1_ps(*p[y].add(r * step + ci));
                            s[y][r][0] = _mm512_fmadd_ps(x, w0, s[y][r][0]);
                            s[y][r][1] = _mm512_fmadd_ps(x, w1, s[y][r][1]);
                        }
                    }
                    b = b.add(PANEL);
                }
            }
        }
        for (y, sums) in s.iter().enumerate() {
            let out = Out {
                c: out.c.add(y * out.row),
                ..out
            };
            store(sums, out);
        }
    }

    /// `len = offsets.len()` (1..=MR) depth indices by `cols` output
    /// channels: `acc[r][..] += sum over pixels p of x[p + offsets[r]] *
    /// dy[p][..]`, pixels `(y, x)` of `dims` at `y * steps.0 + x * steps.1`
    /// in `x`, in row order.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn filter_tile(
        x: *const f32,
        offsets: &[usize],
        dims: (usize, usize),
        steps: (usize, usize),
        dy: *const f32,
        lddy: usize,
        acc: *mut f32,
        cols: usize,
    ) {
        let consecutive = offsets.windows(2).all(|p| p[1] == p[0] + 1);
        macro_rules! tile {
            ($($r:literal)*) => {
                match (offsets.len(), consecutive) {
                    $(($r, true) => filter_rows::<$r, true>(x, offsets, dims, steps, dy, lddy, acc, cols),
                      ($r, false) => filter_rows::<$r, false>(x, offsets, dims, steps, dy, lddy, acc, cols),)*
                    (n, _) => unreachable!("tile of {n} depth indices"),
                }
            };
        }
        const { assert!(MR == 12) };
        tile!(1 2 3 4 5 6 7 8 9 10 11 12)
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    unsafe fn filter_rows<const R: usize, const CONSECUTIVE: bool>(
        x: *const f32,
        offsets: &[usize],
        (rows, width): (usize, usize),
        (row_step, pixel_step): (usize, usize),
        dy: *const f32,
        lddy: usize,
        acc: *mut f32,
        cols: usize,
    ) {
        let masks = [lane_mask(cols.min(16)), lane_mask(cols.saturating_sub(16))];
        let mut s = [[_mm512_setzero_ps(); 2]; R];
        for r in 0..R {
            for v in 0..2 {
                s[r][v] = _mm512_maskz_loadu_ps(masks[v], acc.add(r * lddy + 16 * v));
            }
        }
        let mut off = [0usize; R];
        off.copy_from_slice(&offsets[..R]);
        let first = off[0];
        let mut d = dy;
        for y in 0..rows {
            let mut p = x.add(y * row_step + first);
            for _ in 0..width {
                let d0 = _mm512_maskz_loadu_ps(masks[0], d);
                let d1 = _mm512_maskz_loadu_ps(masks[1], d.add(16));
                for r in 0..R {
                    let v = if CONSECUTIVE {
                        *p.add(r)
                    } else {
                        *p.add(off[r] - first)
                    };
                    let v = _mm512_set1_ps(v);
                    s[r][0] = _mm512_fmadd_ps(v, d0, s[r][0]);
                    s[r][1] = _mm512_fmadd_ps(v, d1, s[r][1]);
                }
                p = p.add(pixel_step);
                d = d.add(lddy);
            }
        }
        for r in 0..R {
            for v in 0..2 {
                _mm512_mask_storeu_ps(acc.add(r * lddy + 16 * v), masks[v], s[r][v]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::values;
    use super::super::{
        conv2d, conv2d_backprop_filter, conv2d_backprop_input, Conv2dParams, Padding,
    };
    use super::available;
    use crate::tensor::Tensor;

    fn tensor32(dims: [usize; 4], v: &[f64]) -> Tensor {
        Tensor::from_vec(dims, v.iter().map(|&a| a as f32).collect::<Vec<_>>()).unwrap()
    }

    /// Largest |got - want| relative to the largest |want|.
    fn rel_err(got: &Tensor, want: &Tensor) -> f64 {
        let (g, w) = (
            got.as_slice::<f32>().unwrap(),
            want.as_slice::<f64>().unwrap(),
        );
        assert_eq!(g.len(), w.len());
        let scale = w.iter().fold(1e-30f64, |m, v| m.max(v.abs()));
        g.iter()
            .zip(w)
            .map(|(&a, &b)| (a as f64 - b).abs())
            .fold(0.0, f64::max)
            / scale
    }

    /// The f32 kernels against the float64 path (im2col with f64 sums) on
    /// shapes covering every tile size, partial panels, strides,
    /// dilations, explicit padding, one input channel and parallel runs.
    #[test]
    fn float32_direct_kernels_match_float64() {
        if !available() {
            eprintln!("no AVX-512: the direct kernels are not used on this CPU");
        }
        let p = |s: (usize, usize), d: usize, padding| Conv2dParams {
            strides: [1, s.0, s.1, 1],
            dilations: [1, d, d, 1],
            padding,
        };
        let explicit = Padding::Explicit {
            h: (2, 0),
            w: (1, 3),
        };
        let cases = [
            ([2, 14, 14, 32], [5, 5, 32, 64], p((1, 1), 1, Padding::Same)),
            ([3, 28, 28, 1], [5, 5, 1, 32], p((1, 1), 1, Padding::Same)),
            ([2, 9, 13, 3], [3, 3, 3, 17], p((1, 1), 1, Padding::Valid)),
            ([1, 11, 26, 5], [3, 2, 5, 33], p((2, 1), 1, Padding::Same)),
            ([2, 10, 10, 4], [3, 3, 4, 7], p((2, 3), 1, Padding::Valid)),
            ([1, 12, 12, 6], [3, 3, 6, 40], p((1, 1), 2, Padding::Same)),
            ([2, 7, 9, 2], [2, 3, 2, 5], p((1, 1), 1, explicit)),
            ([1, 5, 5, 8], [1, 1, 8, 70], p((1, 1), 1, Padding::Valid)),
            ([1, 3, 3, 2], [5, 5, 2, 3], p((1, 1), 1, Padding::Same)),
            ([8, 16, 16, 16], [3, 3, 16, 32], p((1, 1), 1, Padding::Same)),
            ([2, 9, 11, 20], [3, 3, 20, 24], p((1, 1), 2, Padding::Same)),
            ([1, 8, 9, 17], [2, 3, 17, 19], p((1, 1), 1, explicit)),
            ([2, 13, 30, 18], [3, 3, 18, 16], p((2, 2), 1, Padding::Same)),
        ];
        for (seed, (xd, wd, params)) in cases.into_iter().enumerate() {
            let seed = seed as u64;
            let x = values(xd.iter().product(), 3 * seed + 1);
            let w = values(wd.iter().product(), 3 * seed + 2);
            let (x64, w64) = (
                Tensor::from_vec(xd, x.clone()).unwrap(),
                Tensor::from_vec(wd, w.clone()).unwrap(),
            );
            let (x32, w32) = (tensor32(xd, &x), tensor32(wd, &w));
            let y64 = conv2d(&x64, &w64, &params).unwrap();
            let y32 = conv2d(&x32, &w32, &params).unwrap();
            assert_eq!(y32.dims(), y64.dims());
            let e = rel_err(&y32, &y64);
            assert!(e < 1e-5, "forward {xd:?} {wd:?} {params:?}: {e}");

            let yd: [usize; 4] = y64.dims().try_into().unwrap();
            let dy = values(y64.num_elements(), 3 * seed + 3);
            let (dy64, dy32) = (Tensor::from_vec(yd, dy.clone()).unwrap(), tensor32(yd, &dy));
            let dx64 = conv2d_backprop_input(&xd, &w64, &dy64, &params).unwrap();
            let dx32 = conv2d_backprop_input(&xd, &w32, &dy32, &params).unwrap();
            let e = rel_err(&dx32, &dx64);
            assert!(e < 1e-5, "input gradient {xd:?} {wd:?} {params:?}: {e}");
            let dw64 = conv2d_backprop_filter(&x64, &wd, &dy64, &params).unwrap();
            let dw32 = conv2d_backprop_filter(&x32, &wd, &dy32, &params).unwrap();
            let e = rel_err(&dw32, &dw64);
            assert!(e < 1e-5, "filter gradient {xd:?} {wd:?} {params:?}: {e}");
        }
    }

    /// The blocked forward kernel (paired rows), the input gradient through
    /// it and the filter gradient's groups, large enough to run in
    /// parallel: the same bits with one thread and with three.
    #[test]
    fn bits_do_not_depend_on_thread_count() {
        let params = super::super::tests::params(1, 1, Padding::Same);
        let (xd, wd) = ([4, 21, 20, 16], [3, 3, 16, 24]);
        let x = tensor32(xd, &values(xd.iter().product(), 11));
        let w = tensor32(wd, &values(wd.iter().product(), 12));
        let run = || {
            let y = conv2d(&x, &w, &params).unwrap();
            let dx = conv2d_backprop_input(&xd, &w, &y, &params).unwrap();
            let dw = conv2d_backprop_filter(&x, &wd, &y, &params).unwrap();
            [y, dx, dw].map(|t| t.as_slice::<f32>().unwrap().to_vec())
        };
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        };
        assert!(pool(1).install(run) == pool(3).install(run));
    }

    /// Empty batches give empty outputs and a zero filter gradient of the right shape.
    #[test]
    fn empty_shapes() {
        let params = super::super::tests::params(1, 1, Padding::Same);
        let x = Tensor::from_vec([0, 4, 4, 3], Vec::<f32>::new()).unwrap();
        let w = tensor32([3, 3, 3, 2], &values(54, 1));
        assert_eq!(conv2d(&x, &w, &params).unwrap().dims(), &[0, 4, 4, 2]);
        let dy = Tensor::from_vec([0, 4, 4, 2], Vec::<f32>::new()).unwrap();
        let dw = conv2d_backprop_filter(&x, &[3, 3, 3, 2], &dy, &params).unwrap();
        assert_eq!(dw.dims(), &[3, 3, 3, 2]);
        assert!(dw.as_slice::<f32>().unwrap().iter().all(|&v| v == 0.0));
        let dx = conv2d_backprop_input(&[0, 4, 4, 3], &w, &dy, &params).unwrap();
        assert_eq!(dx.dims(), &[0, 4, 4, 3]);
    }
}
