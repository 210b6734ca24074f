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

/// Width of the fixed blocks in [`dw_taps`] and [`conv_taps`].
const LANES: usize = 8;
