//! Small dense loops compiled for the widest vector unit the CPU has,
//! chosen at run time (AVX-512, else AVX2+FMA, else the baseline).

macro_rules! multiversion {
    ($(#[$doc:meta])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$doc])*
        #[inline]
        pub fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
                unsafe fn wide($($arg: $ty),*) {
                    #[inline(always)]
                    #[allow(dead_code)]
                    fn madd(a: f32, b: f32, c: f32) -> f32 { a.mul_add(b, c) }
                    $body
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn mid($($arg: $ty),*) {
                    #[inline(always)]
                    #[allow(dead_code)]
                    fn madd(a: f32, b: f32, c: f32) -> f32 { a.mul_add(b, c) }
                    $body
                }
                match level() {
                    // SAFETY: the CPU supports the enabled features (checked once).
                    Level::Avx512 => return unsafe { wide($($arg),*) },
                    Level::Avx2 => return unsafe { mid($($arg),*) },
                    Level::Base => {}
                }
            }
            // Without FMA hardware, `mul_add` is a slow library call.
            #[inline(always)]
            fn base($($arg: $ty),*) {
                #[inline(always)]
                #[allow(dead_code)]
                fn madd(a: f32, b: f32, c: f32) -> f32 { a * b + c }
                $body
            }
            base($($arg),*)
        }
    };
}

#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Avx512,
    Avx2,
    Base,
}

#[cfg(target_arch = "x86_64")]
fn level() -> Level {
    use std::sync::OnceLock;
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("fma")
        {
            Level::Avx512
        } else if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            Level::Avx2
        } else {
            Level::Base
        }
    })
}

multiversion! {
    /// `acc[j] += a * b[j]` over `acc.len()` elements.
    pub fn axpy(acc: &mut [f32], a: f32, b: &[f32]) {
        let b = &b[..acc.len()];
        for (y, &x) in acc.iter_mut().zip(b) {
            *y = madd(a, x, *y);
        }
    }
}

multiversion! {
    /// `acc[j] += a[j] * b[j]`.
    pub fn fma_into(acc: &mut [f32], a: &[f32], b: &[f32]) {
        let n = acc.len();
        let (a, b) = (&a[..n], &b[..n]);
        for j in 0..n {
            acc[j] = madd(a[j], b[j], acc[j]);
        }
    }
}

multiversion! {
    /// `x[j] = clamp(x[j] + bias[j], lo, hi)` (bias optional: empty).
    pub fn bias_clamp(x: &mut [f32], bias: &[f32], lo: f32, hi: f32) {
        if bias.is_empty() {
            for v in x.iter_mut() {
                *v = v.max(lo).min(hi);
            }
        } else {
            let n = bias.len();
            for row in x.chunks_exact_mut(n) {
                for (v, &b) in row.iter_mut().zip(bias) {
                    *v = (*v + b).max(lo).min(hi);
                }
            }
        }
    }
}

multiversion! {
    /// `acc[j] += sum_i a[i] * w[i * n + j]` for an `a` of length `k` and a
    /// row-major `k x n` matrix `w` (`n = acc.len()`): a vector-matrix
    /// product, streaming `w` once.
    pub fn vecmat(acc: &mut [f32], a: &[f32], w: &[f32]) {
        let n = acc.len();
        let mut rows = w.chunks_exact(n);
        let mut i = 0;
        // Four rows at a time: four FMAs per load/store of `acc`.
        while i + 4 <= a.len() {
            let (r0, r1, r2, r3) = match (rows.next(), rows.next(), rows.next(), rows.next()) {
                (Some(r0), Some(r1), Some(r2), Some(r3)) => (r0, r1, r2, r3),
                _ => return,
            };
            let (a0, a1, a2, a3) = (a[i], a[i + 1], a[i + 2], a[i + 3]);
            for j in 0..n {
                let mut v = acc[j];
                v = madd(a0, r0[j], v);
                v = madd(a1, r1[j], v);
                v = madd(a2, r2[j], v);
                v = madd(a3, r3[j], v);
                acc[j] = v;
            }
            i += 4;
        }
        for (&ai, r) in a[i..].iter().zip(rows) {
            for j in 0..n {
                acc[j] = madd(ai, r[j], acc[j]);
            }
        }
    }
}

multiversion! {
    /// Depthwise taps along an output row: for `j < count`,
    /// `acc[j * c + i] += x[j * step + i] * w[i]` over `c = w.len()` channels.
    pub fn dw_taps(acc: &mut [f32], x: &[f32], w: &[f32], step: usize, count: usize) {
        let c = w.len();
        if count == 0 {
            return;
        }
        let acc = &mut acc[..count * c];
        let x = &x[..(count - 1) * step + c];
        let body = c / LANES * LANES;
        for (j, a) in acc.chunks_exact_mut(c).enumerate() {
            let src = &x[j * step..j * step + c];
            // Fixed-width blocks: one vector operation each.
            for ((a, s), w) in a[..body]
                .chunks_exact_mut(LANES)
                .zip(src.chunks_exact(LANES))
                .zip(w.chunks_exact(LANES))
            {
                for t in 0..LANES {
                    a[t] = madd(s[t], w[t], a[t]);
                }
            }
            for i in body..c {
                a[i] = madd(src[i], w[i], a[i]);
            }
        }
    }
}

multiversion! {
    /// Convolution taps along an output row: for `j < count`,
    /// `acc[j * oc + o] += sum_i x[j * step + i] * w[i * oc + o]` over
    /// `ic` inputs (`w` is `[ic, oc]`, `oc = w.len() / ic`), summed in `i`
    /// order.
    pub fn conv_taps(acc: &mut [f32], x: &[f32], w: &[f32], ic: usize, step: usize, count: usize) {
        if count == 0 || ic == 0 {
            return;
        }
        let oc = w.len() / ic;
        let acc = &mut acc[..count * oc];
        let x = &x[..(count - 1) * step + ic];
        let body = oc / LANES * LANES;
        // Four output pixels at a time: four independent chains of
        // multiply-adds per block of output channels, kept in registers
        // over the inputs (each output still sums in `i` order).
        let mut j = 0;
        while j + 4 <= count {
            let mut o0 = 0;
            while o0 < body {
                let mut v = [[0.0f32; LANES]; 4];
                for (q, vq) in v.iter_mut().enumerate() {
                    vq.copy_from_slice(&acc[(j + q) * oc + o0..(j + q) * oc + o0 + LANES]);
                }
                for i in 0..ic {
                    let wr = &w[i * oc + o0..i * oc + o0 + LANES];
                    for (q, vq) in v.iter_mut().enumerate() {
                        let xv = x[(j + q) * step + i];
                        for t in 0..LANES {
                            vq[t] = madd(xv, wr[t], vq[t]);
                        }
                    }
                }
                for (q, vq) in v.iter().enumerate() {
                    acc[(j + q) * oc + o0..(j + q) * oc + o0 + LANES].copy_from_slice(vq);
                }
                o0 += LANES;
            }
            for q in 0..4 {
                let src = &x[(j + q) * step..(j + q) * step + ic];
                for o in body..oc {
                    let mut v = acc[(j + q) * oc + o];
                    for (i, &xv) in src.iter().enumerate() {
                        v = madd(xv, w[i * oc + o], v);
                    }
                    acc[(j + q) * oc + o] = v;
                }
            }
            j += 4;
        }
        for (j, a) in acc.chunks_exact_mut(oc).enumerate().skip(j) {
            let src = &x[j * step..j * step + ic];
            let mut o0 = 0;
            while o0 < body {
                let mut v = [0.0f32; LANES];
                v.copy_from_slice(&a[o0..o0 + LANES]);
                for (i, &xv) in src.iter().enumerate() {
                    let wr = &w[i * oc + o0..i * oc + o0 + LANES];
                    for t in 0..LANES {
                        v[t] = madd(xv, wr[t], v[t]);
                    }
                }
                a[o0..o0 + LANES].copy_from_slice(&v);
                o0 += LANES;
            }
            for o in body..oc {
                let mut v = a[o];
                for (i, &xv) in src.iter().enumerate() {
                    v = madd(xv, w[i * oc + o], v);
                }
                a[o] = v;
            }
        }
    }
}

multiversion! {
    /// `out[o] += sum_i x[i] * w[o * k + i]` for the rows of a row-major
    /// `[out.len(), k]` matrix `w` (`k = x.len()`): 16 lane sums per row,
    /// added pairwise at the end.
    pub fn rows_dot(out: &mut [f32], x: &[f32], w: &[f32]) {
        let k = x.len();
        let body = k / 16 * 16;
        for (o, y) in out.iter_mut().enumerate() {
            let row = &w[o * k..(o + 1) * k];
            let mut lanes = [0.0f32; 16];
            for (xs, ws) in x[..body].chunks_exact(16).zip(row[..body].chunks_exact(16)) {
                for t in 0..16 {
                    lanes[t] = madd(xs[t], ws[t], lanes[t]);
                }
            }
            let mut width = 8;
            while width > 0 {
                for t in 0..width {
                    lanes[t] += lanes[t + width];
                }
                width /= 2;
            }
            let mut s = lanes[0];
            for i in body..k {
                s = madd(x[i], row[i], s);
            }
            *y += s;
        }
    }
}

/// One output row of a depthwise convolution with channel multiplier 1.
///
/// `img` is one `[rows, iw, c]` image (`c = bias.len()`); `w` holds the
/// taps as `[kh * kw, c]`; the row's taps are `ky` with input rows
/// `iy0 + (ky - ky.start) * dil_h`; `cols` maps output columns to input
/// columns. What an output pixel's sums are, and in which order they are
/// taken, is given per element type by the two callers below.
pub struct DwRow<'a, T> {
    /// One image, `[rows, iw, c]`.
    pub img: &'a [T],
    /// Taps, `[kh * kw, c]`.
    pub w: &'a [T],
    /// Input width.
    pub iw: usize,
    /// Window width.
    pub kw: usize,
    /// The valid window rows of this output row.
    pub ky: std::ops::Range<usize>,
    /// Input row of tap `ky.start`.
    pub iy0: usize,
    /// Input rows between window rows.
    pub dil_h: usize,
    /// The horizontal geometry.
    pub cols: &'a super::geometry::Axis,
}

/// One pixel's depthwise sums over channels `i..i + B` (float): bias,
/// then the taps in row-major order, then the clamp; `B` lanes in
/// registers. Inlined into the row kernels, so it takes their vector
/// width.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn dw_block_f32<const B: usize>(
    a: &mut [f32],
    bias: &[f32],
    (lo, hi): (f32, f32),
    p: &DwRow<'_, f32>,
    kx: std::ops::Range<usize>,
    at: usize,
    i: usize,
    madd: impl Fn(f32, f32, f32) -> f32,
) {
    let c = bias.len();
    let (line, dx) = (p.iw * c, p.cols.dilation * c);
    let mut v = [0.0f32; B];
    v.copy_from_slice(&bias[i..i + B]);
    // (Without a valid column tap, `at` is no position: skip.)
    let rows = if kx.is_empty() { 0..0 } else { p.ky.clone() };
    for (r, ky) in rows.enumerate() {
        let src = &p.img[(p.iy0 + r * p.dil_h) * line + at + i..];
        let taps = &p.w[ky * p.kw * c + i..];
        for (q, kx) in kx.clone().enumerate() {
            let s = &src[q * dx..q * dx + B];
            let wt = &taps[kx * c..kx * c + B];
            for t in 0..B {
                v[t] = madd(s[t], wt[t], v[t]);
            }
        }
    }
    for (d, &y) in a[i..i + B].iter_mut().zip(&v) {
        *d = y.max(lo).min(hi);
    }
}

/// One pixel's int8 depthwise sums over channels `i..i + B`:
/// `bias + sum w * (x + off)` over the valid taps, `B` lanes in registers.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn dw_block_i8<const B: usize>(
    a: &mut [i32],
    bias: &[i32],
    off: i32,
    w: &[i32],
    p: &DwRow<'_, i8>,
    kx: std::ops::Range<usize>,
    at: usize,
    i: usize,
) {
    let c = bias.len();
    let (line, dx) = (p.iw * c, p.cols.dilation * c);
    let mut v = [0i32; B];
    v.copy_from_slice(&bias[i..i + B]);
    // (Without a valid column tap, `at` is no position: skip.)
    let rows = if kx.is_empty() { 0..0 } else { p.ky.clone() };
    for (r, ky) in rows.enumerate() {
        let src = &p.img[(p.iy0 + r * p.dil_h) * line + at + i..];
        let taps = &w[ky * p.kw * c + i..];
        for (q, kx) in kx.clone().enumerate() {
            let s = &src[q * dx..q * dx + B];
            let wt = &taps[kx * c..kx * c + B];
            for t in 0..B {
                v[t] = v[t].wrapping_add(wt[t].wrapping_mul(s[t] as i32 + off));
            }
        }
    }
    a[i..i + B].copy_from_slice(&v);
}

multiversion! {
    /// Float depthwise row: `acc[ox * c + i] = bias[i]`, then `+= x * w`
    /// over the output pixel's valid taps in row-major tap order (one
    /// multiply-add each, in registers per block of channels), then
    /// clamped to `[lo, hi]`.
    pub fn dw_row_f32(acc: &mut [f32], bias: &[f32], lo: f32, hi: f32, p: &DwRow<'_, f32>) {
        let c = bias.len();
        if c == 0 {
            return;
        }
        for (ox, a) in acc.chunks_exact_mut(c).enumerate() {
            let kx = p.cols.valid_taps(ox);
            // The first valid tap's input column (unused without taps).
            let at = p.cols.source(ox, kx.start).max(0) as usize * c;
            let mut i = 0;
            // Blocks of 64 channels (four AVX-512 vectors), then 16, then
            // one at a time.
            while i + 64 <= c {
                dw_block_f32::<64>(a, bias, (lo, hi), p, kx.clone(), at, i, madd);
                i += 64;
            }
            while i + 16 <= c {
                dw_block_f32::<16>(a, bias, (lo, hi), p, kx.clone(), at, i, madd);
                i += 16;
            }
            while i < c {
                dw_block_f32::<1>(a, bias, (lo, hi), p, kx.clone(), at, i, madd);
                i += 1;
            }
        }
    }
}

multiversion! {
    /// Int8 depthwise row: `acc[ox * c + i] = bias[i] + sum w * (x + off)`
    /// over the output pixel's valid taps (wrapping int32; integer sums,
    /// so the order does not matter). `w` is the int8 filter widened to
    /// int32.
    pub fn dw_row_i8(acc: &mut [i32], bias: &[i32], off: i32, w: &[i32], p: &DwRow<'_, i8>) {
        let c = bias.len();
        if c == 0 {
            return;
        }
        for (ox, a) in acc.chunks_exact_mut(c).enumerate() {
            let kx = p.cols.valid_taps(ox);
            let at = p.cols.source(ox, kx.start).max(0) as usize * c;
            let mut i = 0;
            while i + 64 <= c {
                dw_block_i8::<64>(a, bias, off, w, p, kx.clone(), at, i);
                i += 64;
            }
            while i + 16 <= c {
                dw_block_i8::<16>(a, bias, off, w, p, kx.clone(), at, i);
                i += 16;
            }
            while i < c {
                dw_block_i8::<1>(a, bias, off, w, p, kx.clone(), at, i);
                i += 1;
            }
        }
    }
}

/// Width of the fixed blocks in [`dw_taps`] and [`conv_taps`].
const LANES: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::geometry::{Axis, Padding};

    /// Every depthwise geometry the row kernels see: SAME and VALID,
    /// strides 1-2, dilations 1-2, channel counts around the 16-lane
    /// block (tails included), windows wider than the input.
    /// Padding, `[ih, iw, c, _]`, window, strides and dilations.
    type Geometry = (Padding, [usize; 4], [usize; 2], [usize; 2], [usize; 2]);

    fn geometries() -> Vec<Geometry> {
        let mut out = Vec::new();
        for padding in [Padding::Same, Padding::Valid] {
            for (ih, iw, c) in [(5usize, 7usize, 3usize), (6, 4, 16), (3, 9, 37), (1, 1, 33)] {
                for (kh, kw) in [(3usize, 3usize), (1, 2), (4, 3)] {
                    for stride in [1usize, 2] {
                        for dil in [1usize, 2] {
                            out.push((
                                padding,
                                [ih, iw, c, 0],
                                [kh, kw],
                                [stride, stride],
                                [dil, 1],
                            ));
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn row_dot_products_match_float64() {
        for (n, k) in [(1usize, 1usize), (3, 15), (10, 384), (7, 33), (31, 16)] {
            let x: Vec<f32> = (0..k)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let w: Vec<f32> = (0..n * k)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 40.0)
                .collect();
            let mut out = vec![0.5f32; n];
            rows_dot(&mut out, &x, &w);
            for (o, &g) in out.iter().enumerate() {
                let want = 0.5
                    + (0..k)
                        .map(|i| x[i] as f64 * w[o * k + i] as f64)
                        .sum::<f64>();
                assert!(
                    (g as f64 - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "n={n} k={k} o={o}: {g} vs {want}"
                );
            }
        }
    }

    #[test]
    fn depthwise_rows_match_the_scalar_sums() {
        for (padding, [ih, iw, c, _], [kh, kw], stride, dil) in geometries() {
            let (Ok(h), Ok(w_ax)) = (
                Axis::new("t", padding, ih, kh, stride[0] as i32, dil[0] as i32),
                Axis::new("t", padding, iw, kw, stride[1] as i32, dil[1] as i32),
            ) else {
                continue;
            };
            let xf: Vec<f32> = (0..ih * iw * c)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
                .collect();
            let wf: Vec<f32> = (0..kh * kw * c)
                .map(|i| ((i * 53 % 89) as f32 - 44.0) / 11.0)
                .collect();
            let bf: Vec<f32> = (0..c).map(|i| i as f32 * 0.25 - 2.0).collect();
            let xi: Vec<i8> = (0..ih * iw * c)
                .map(|i| (i * 37 % 256) as u8 as i8)
                .collect();
            let wi: Vec<i32> = (0..kh * kw * c)
                .map(|i| (i * 91 % 255) as i32 - 127)
                .collect();
            let bi: Vec<i32> = (0..c as i32).map(|i| i * 1000 - 5000).collect();
            let (lo, hi) = (-20.0f32, 30.0f32);
            for oy in 0..h.output {
                let ky = h.valid_taps(oy);
                let iy0 = h.source(oy, ky.start).max(0) as usize;
                let mut got_f = vec![f32::NAN; w_ax.output * c];
                let row = DwRow {
                    img: &xf,
                    w: &wf,
                    iw,
                    kw,
                    ky: ky.clone(),
                    iy0,
                    dil_h: h.dilation,
                    cols: &w_ax,
                };
                dw_row_f32(&mut got_f, &bf, lo, hi, &row);
                let mut got_i = vec![0x5555; w_ax.output * c];
                let row = DwRow {
                    img: &xi,
                    w: &[],
                    iw,
                    kw,
                    ky: ky.clone(),
                    iy0,
                    dil_h: h.dilation,
                    cols: &w_ax,
                };
                dw_row_i8(&mut got_i, &bi, 7, &wi, &row);
                for ox in 0..w_ax.output {
                    for i in 0..c {
                        let mut sf = bf[i] as f64;
                        let mut si = bi[i];
                        for ky in h.valid_taps(oy) {
                            for kx in w_ax.valid_taps(ox) {
                                let (y, x) =
                                    (h.source(oy, ky) as usize, w_ax.source(ox, kx) as usize);
                                let t = (ky * kw + kx) * c + i;
                                sf += xf[(y * iw + x) * c + i] as f64 * wf[t] as f64;
                                si += wi[t] * (xi[(y * iw + x) * c + i] as i32 + 7);
                            }
                        }
                        let want_f = sf.clamp(lo as f64, hi as f64);
                        let g = got_f[ox * c + i] as f64;
                        assert!((g - want_f).abs() <= 1e-4 * want_f.abs().max(1.0), "{padding:?} {ih}x{iw}x{c} k{kh}x{kw} s{stride:?} d{dil:?} ({oy},{ox},{i}): {g} vs {want_f}");
                        assert_eq!(got_i[ox * c + i], si, "{padding:?} {ih}x{iw}x{c} k{kh}x{kw} s{stride:?} d{dil:?} ({oy},{ox},{i})");
                    }
                }
            }
        }
    }
}
