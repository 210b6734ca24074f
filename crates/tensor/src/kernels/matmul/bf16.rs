//! bfloat16 products with float32 accumulation.
//!
//! Both operands are packed once per product into pairs of consecutive
//! depth elements (one `u32` holds `x[2p]` in its low half and `x[2p + 1]`
//! in its high half), the layout AVX512-BF16's `vdpbf16ps` consumes: one
//! instruction multiplies 16 such pairs of `a` by 16 of `b` and adds both
//! products into 16 float32 sums. A micro-kernel computes an `MR x NR`
//! tile of the output from a packed row tile of `a` and a packed column
//! panel of `b`, over the whole depth, and rounds the float32 sums to
//! bfloat16 once at the end.
//!
//! Every output element is one float32 sum over the depth pairs in order
//! `0, 1, ...`, the high product of a pair added before the low one (the
//! order `vdpbf16ps` documents). Tiles are never split along the depth, so
//! the bits of a result do not depend on how the output was divided among
//! threads.
//!
//! On CPUs with AMX, [`amx`] computes 32 x 32 blocks on tile registers
//! with `tdpbf16ps`, whose documented order differs (per 16 pairs, the
//! even and odd products are summed apart and then added to the sum);
//! it too never splits the depth.
//!
//! [`Bf16Gemm::for_cpu`] picks the kernel: `vdpbf16ps` where the CPU has
//! AVX512-BF16, otherwise the caller's float32 GEMM on widened copies (the
//! fallback). `FERROFLOW_BF16_GEMM=f32` forces the fallback and `=portable`
//! a plain-Rust micro-kernel with the same arithmetic as `vdpbf16ps` (bit
//! for bit, except that the instruction flushes subnormals to zero), so
//! the packing and tiling run on every CPU.

use half::bf16;

use super::{Mat, SendPtr};

pub mod amx;

/// Rows of the output a micro-kernel computes at once.
pub const MR: usize = 8;
/// Columns of the output a micro-kernel computes at once (two vectors of
/// 16 float32 sums).
pub const NR: usize = 32;

/// Multiply-adds below which a product runs on one thread.
const PARALLEL_MIN_MACS: usize = 1 << 18;

/// `f(0..count)` on the kernel team when `parallel`, else in order here.
fn run_tasks(parallel: bool, count: usize, f: &(dyn Fn(usize) + Sync)) {
    if parallel {
        crate::team::run(count, f)
    } else {
        (0..count).for_each(f)
    }
}

/// How bfloat16 products are computed on this CPU.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Bf16Gemm {
    /// 32 x 32 blocks on AMX tile registers (`tdpbf16ps`).
    Amx,
    /// Packed pairs through AVX512-BF16's `vdpbf16ps`.
    DotBf16,
    /// Packed pairs through a plain-Rust micro-kernel with the arithmetic
    /// of `vdpbf16ps` (slow; for tests and comparisons).
    Portable,
    /// Widen both operands to float32, multiply with the float32 GEMM and
    /// round the result to bfloat16.
    CastF32,
}

impl Bf16Gemm {
    /// The kernel for this CPU, or the one `FERROFLOW_BF16_GEMM` names
    /// (`f32`, `portable`; `amx` only where the CPU has it). Chosen once
    /// per process.
    pub fn for_cpu() -> Bf16Gemm {
        static CHOSEN: std::sync::OnceLock<Bf16Gemm> = std::sync::OnceLock::new();
        *CHOSEN.get_or_init(|| match std::env::var("FERROFLOW_BF16_GEMM").as_deref() {
            Ok("f32") => Bf16Gemm::CastF32,
            Ok("portable") => Bf16Gemm::Portable,
            Ok("amx") if amx::available() => Bf16Gemm::Amx,
            _ if has_avx512bf16() => Bf16Gemm::DotBf16,
            _ => Bf16Gemm::CastF32,
        })
    }
}

/// Whether the CPU runs AVX512-BF16 (checked once).
pub fn has_avx512bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bf16")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Two bfloat16 values as one packed pair: `lo` in the low half.
#[inline(always)]
fn pair(lo: bf16, hi: bf16) -> u32 {
    u32::from(lo.to_bits()) | (u32::from(hi.to_bits()) << 16)
}

/// Packs `rows` consecutive rows of an `m x k` operand, starting at row
/// `r0`, into `tile` rows of depth pairs: `out[p * tile + r]` holds
/// element `(r0 + r, 2p)` and `(r0 + r, 2p + 1)`, zeros past the edges.
/// `x(i, l)` reads the operand.
fn pack_rows(
    out: &mut [u32],
    tile: usize,
    r0: usize,
    rows: usize,
    k: usize,
    x: impl Fn(usize, usize) -> bf16,
) {
    let kp = k.div_ceil(2);
    debug_assert_eq!(out.len(), kp * tile);
    let zero = bf16::ZERO;
    for r in 0..tile {
        if r >= rows {
            for p in 0..kp {
                out[p * tile + r] = 0;
            }
            continue;
        }
        let i = r0 + r;
        for p in 0..kp {
            let lo = x(i, 2 * p);
            let hi = if 2 * p + 1 < k { x(i, 2 * p + 1) } else { zero };
            out[p * tile + r] = pair(lo, hi);
        }
    }
}

/// One `MR x NR` tile of float32 sums, `acc[r * NR + j]`, from `kp` depth
/// pairs of a packed row tile `a` (`kp * MR`) and column panel `b`
/// (`kp * NR`), in plain Rust with `vdpbf16ps`'s order of additions.
fn tile_portable(kp: usize, a: &[u32], b: &[u32], acc: &mut [f32; MR * NR]) {
    acc.fill(0.0);
    for p in 0..kp {
        let bp = &b[p * NR..(p + 1) * NR];
        for r in 0..MR {
            let av = a[p * MR + r];
            let (alo, ahi) = (f32::from_bits(av << 16), f32::from_bits(av & 0xffff_0000));
            let row = &mut acc[r * NR..(r + 1) * NR];
            for (s, &bv) in row.iter_mut().zip(bp) {
                // A product of two bfloat16 values is exact in float32, so
                // each line is one rounding, as in the instruction.
                *s += ahi * f32::from_bits(bv & 0xffff_0000);
                *s += alo * f32::from_bits(bv << 16);
            }
        }
    }
}

/// [`tile_portable`] with `vdpbf16ps`.
///
/// # Safety
/// The CPU must have AVX512F and AVX512-BF16; `a` and `b` must hold
/// `kp * MR` and `kp * NR` pairs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn tile_dpbf16(kp: usize, a: &[u32], b: &[u32], acc: &mut [f32; MR * NR]) {
    use std::arch::x86_64::*;
    debug_assert!(a.len() >= kp * MR && b.len() >= kp * NR);
    let (ap, bp) = (a.as_ptr(), b.as_ptr());
    let mut c = [[_mm512_setzero_ps(); 2]; MR];
    for p in 0..kp {
        // SAFETY: `p < kp`, and the panels hold `kp * NR` and `kp * MR`.
        let (b0, b1) = unsafe {
            let row = bp.add(p * NR);
            (
                _mm512_loadu_si512(row as *const __m512i),
                _mm512_loadu_si512(row.add(16) as *const __m512i),
            )
        };
        let (b0, b1) = (
            std::mem::transmute::<__m512i, __m512bh>(b0),
            std::mem::transmute::<__m512i, __m512bh>(b1),
        );
        for (r, cr) in c.iter_mut().enumerate() {
            // SAFETY: as above.
            let av = unsafe { *ap.add(p * MR + r) };
            let av = std::mem::transmute::<__m512i, __m512bh>(_mm512_set1_epi32(av as i32));
            cr[0] = _mm512_dpbf16_ps(cr[0], av, b0);
            cr[1] = _mm512_dpbf16_ps(cr[1], av, b1);
        }
    }
    for (r, cr) in c.iter().enumerate() {
        // SAFETY: `acc` holds MR rows of NR.
        unsafe {
            _mm512_storeu_ps(acc.as_mut_ptr().add(r * NR), cr[0]);
            _mm512_storeu_ps(acc.as_mut_ptr().add(r * NR + 16), cr[1]);
        }
    }
}

/// The pointer inside; a closure calling this captures the whole (`Send`)
/// wrapper rather than its raw field.
fn raw<T>(p: SendPtr<T>) -> *mut T {
    p.0
}

/// One tile with the chosen kernel.
fn tile(lib: Bf16Gemm, kp: usize, a: &[u32], b: &[u32], acc: &mut [f32; MR * NR]) {
    match lib {
        #[cfg(target_arch = "x86_64")]
        Bf16Gemm::DotBf16 if has_avx512bf16() => {
            // SAFETY: the CPU has the features; the slices are full panels.
            unsafe { tile_dpbf16(kp, a, b, acc) }
        }
        _ => tile_portable(kp, a, b, acc),
    }
}

/// `c = a @ b` for an `m x k @ k x n` bfloat16 product in the given
/// layouts, `c` row-major: float32 sums rounded once to bfloat16, split
/// across the kernel team by output tiles. `lib` must not be
/// [`Bf16Gemm::CastF32`] (the caller handles the fallback); a kernel the
/// CPU lacks runs as [`Bf16Gemm::Portable`].
#[allow(clippy::too_many_arguments)] // BLAS-style signature
pub fn gemm(
    lib: Bf16Gemm,
    m: usize,
    k: usize,
    n: usize,
    a: &[bf16],
    la: Mat,
    b: &[bf16],
    lb: Mat,
    c: &mut [bf16],
) {
    assert!(
        la.fits(m, k, a.len()) && lb.fits(k, n, b.len()) && m * n <= c.len(),
        "bf16 gemm: an operand is smaller than its layout"
    );
    if m == 0 || n == 0 {
        return;
    }
    if lib == Bf16Gemm::Amx && amx::available() {
        return amx::gemm(true, m, k, n, a, la, b, lb, c);
    }
    let kp = k.div_ceil(2);
    let (tiles_m, panels_n) = (m.div_ceil(MR), n.div_ceil(NR));
    let macs = m * n * k;
    let parallel = macs >= PARALLEL_MIN_MACS;
    let run = |count: usize, f: &(dyn Fn(usize) + Sync)| run_tasks(parallel, count, f);
    let at = |i: usize, l: usize| a[(i as isize * la.rs + l as isize * la.cs) as usize];
    let bt = |l: usize, j: usize| b[(l as isize * lb.rs + j as isize * lb.cs) as usize];

    // Pack a by row tiles and b by column panels, in parallel.
    let mut apack = vec![0u32; tiles_m * kp * MR];
    let mut bpack = vec![0u32; panels_n * kp * NR];
    {
        let ap = SendPtr(apack.as_mut_ptr());
        run(tiles_m, &|t| {
            // SAFETY: each task writes its own tile of `apack`.
            let out = unsafe { std::slice::from_raw_parts_mut(raw(ap).add(t * kp * MR), kp * MR) };
            pack_rows(out, MR, t * MR, (m - t * MR).min(MR), k, at);
        });
        let bp = SendPtr(bpack.as_mut_ptr());
        run(panels_n, &|q| {
            // SAFETY: each task writes its own panel of `bpack`.
            let out = unsafe { std::slice::from_raw_parts_mut(raw(bp).add(q * kp * NR), kp * NR) };
            // The panel is b's transpose packed by rows.
            pack_rows(out, NR, q * NR, (n - q * NR).min(NR), k, |j, l| bt(l, j));
        });
    }

    // Each task: one column panel, every row tile (the panel stays in
    // cache while the row tiles stream past it).
    let cp = SendPtr(c.as_mut_ptr());
    let (apack, bpack) = (&apack, &bpack);
    run(panels_n, &|q| {
        let bq = &bpack[q * kp * NR..(q + 1) * kp * NR];
        let (j0, cols) = (q * NR, (n - q * NR).min(NR));
        let mut acc = [0f32; MR * NR];
        for t in 0..tiles_m {
            tile(
                lib,
                kp,
                &apack[t * kp * MR..(t + 1) * kp * MR],
                bq,
                &mut acc,
            );
            let (i0, rows) = (t * MR, (m - t * MR).min(MR));
            for r in 0..rows {
                for (j, &s) in acc[r * NR..r * NR + cols].iter().enumerate() {
                    // SAFETY: `(i0 + r, j0 + j)` is inside `c`, and only this
                    // task writes the panel's columns.
                    unsafe { *raw(cp).add((i0 + r) * n + j0 + j) = bf16::from_f32(s) };
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic spread of bfloat16 values of both signs and many
    /// magnitudes.
    fn values(len: usize, seed: u32) -> Vec<bf16> {
        let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                let u = (s >> 8) as f32 / (1u32 << 24) as f32;
                bf16::from_f32((u - 0.5) * 4.0)
            })
            .collect()
    }

    /// The order of additions the kernels promise, one element at a time.
    fn model(m: usize, k: usize, n: usize, a: &[bf16], b: &[bf16]) -> Vec<bf16> {
        let mut c = vec![bf16::ZERO; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0f32;
                for p in 0..k.div_ceil(2) {
                    if 2 * p + 1 < k {
                        s += a[i * k + 2 * p + 1].to_f32() * b[(2 * p + 1) * n + j].to_f32();
                    }
                    s += a[i * k + 2 * p].to_f32() * b[2 * p * n + j].to_f32();
                }
                c[i * n + j] = bf16::from_f32(s);
            }
        }
        c
    }

    fn run(lib: Bf16Gemm, m: usize, k: usize, n: usize, a: &[bf16], b: &[bf16]) -> Vec<bf16> {
        let mut c = vec![bf16::ZERO; m * n];
        let la = Mat {
            rs: k as isize,
            cs: 1,
        };
        let lb = Mat {
            rs: n as isize,
            cs: 1,
        };
        gemm(lib, m, k, n, a, la, b, lb, &mut c);
        c
    }

    /// Ragged shapes (odd depth, partial tiles and panels) give the
    /// model's bits with the portable kernel, and with `vdpbf16ps` where
    /// the CPU has it (these values have no subnormal products).
    #[test]
    fn kernels_follow_the_documented_order() {
        let mut libs = vec![Bf16Gemm::Portable];
        if has_avx512bf16() {
            libs.push(Bf16Gemm::DotBf16);
        }
        for (m, k, n) in [(1, 1, 1), (9, 7, 33), (17, 64, 40), (3, 130, 5)] {
            let (a, b) = (values(m * k, 1), values(k * n, 2));
            let want = model(m, k, n, &a, &b);
            for &lib in &libs {
                let got = run(lib, m, k, n, &a, &b);
                assert!(
                    got.iter()
                        .zip(&want)
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{lib:?} {m}x{k}x{n}"
                );
            }
        }
    }

    /// A product large enough for the team gives the same bits with one
    /// thread as with three, for both operand layouts.
    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let (m, k, n) = (40, 96, 100);
        let (a, b) = (values(m * k, 3), values(k * n, 4));
        for lib in vector_kernels() {
            let in_pool = |threads: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| run(lib, m, k, n, &a, &b))
            };
            let (one, three) = (in_pool(1), in_pool(3));
            assert_eq!(
                one.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                three.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{lib:?}"
            );
            let want = if lib == Bf16Gemm::Amx {
                model_amx(m, k, n, &a, &b)
            } else {
                model(m, k, n, &a, &b)
            };
            assert_eq!(one, want, "{lib:?}");
        }
    }

    /// The packed-pair kernels this CPU runs.
    fn vector_kernels() -> Vec<Bf16Gemm> {
        let mut libs = vec![Bf16Gemm::Portable];
        if has_avx512bf16() {
            libs.push(Bf16Gemm::DotBf16);
        }
        if amx_opted_in() {
            libs.push(Bf16Gemm::Amx);
        }
        libs
    }

    /// The tile kernel runs in these tests where the process chose it
    /// (`FERROFLOW_BF16_GEMM=amx` on an AMX machine): it is opt-in until it
    /// has been checked on such a machine.
    fn amx_opted_in() -> bool {
        Bf16Gemm::for_cpu() == Bf16Gemm::Amx
    }

    /// `tdpbf16ps`'s documented order: per tile step of 16 depth pairs,
    /// the even and the odd products each summed from zero in depth
    /// order, then their sum added to the running float32 sum.
    fn model_amx(m: usize, k: usize, n: usize, a: &[bf16], b: &[bf16]) -> Vec<bf16> {
        let at = |i: usize, l: usize| if l < k { a[i * k + l].to_f32() } else { 0.0 };
        let bt = |l: usize, j: usize| if l < k { b[l * n + j].to_f32() } else { 0.0 };
        let mut c = vec![bf16::ZERO; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0f32;
                for step in 0..k.div_ceil(32) {
                    let (mut even, mut odd) = (0f32, 0f32);
                    for p in step * 16..step * 16 + 16 {
                        even += at(i, 2 * p) * bt(2 * p, j);
                        odd += at(i, 2 * p + 1) * bt(2 * p + 1, j);
                    }
                    s += even + odd;
                }
                c[i * n + j] = bf16::from_f32(s);
            }
        }
        c
    }

    /// The tile kernel's packing and blocking (ragged blocks, odd depth,
    /// several tile steps, transposed operands, 1 and 3 threads) with each
    /// block emulated in plain Rust give the documented order's bits.
    #[test]
    fn amx_packing_and_blocking_emulated() {
        for (m, k, n) in [(1, 1, 1), (9, 7, 33), (17, 64, 40), (70, 129, 65)] {
            let (a, b) = (values(m * k, 9), values(k * n, 10));
            let want = model_amx(m, k, n, &a, &b);
            // Row-major operands, then both read through transposed copies.
            let a_t: Vec<bf16> = (0..m * k).map(|e| a[(e % m) * k + e / m]).collect();
            let b_t: Vec<bf16> = (0..k * n).map(|e| b[(e % k) * n + e / k]).collect();
            let row_major = (
                Mat {
                    rs: k as isize,
                    cs: 1,
                },
                Mat {
                    rs: n as isize,
                    cs: 1,
                },
            );
            let transposed = (
                Mat {
                    rs: 1,
                    cs: m as isize,
                },
                Mat {
                    rs: 1,
                    cs: k as isize,
                },
            );
            for (x, y, (la, lb)) in [(&a, &b, row_major), (&a_t, &b_t, transposed)] {
                for threads in [1, 3] {
                    let mut c = vec![bf16::ZERO; m * n];
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap()
                        .install(|| amx::gemm(false, m, k, n, x, la, y, lb, &mut c));
                    assert!(
                        c.iter().zip(&want).all(|(p, q)| p.to_bits() == q.to_bits()),
                        "{m}x{k}x{n} la {la:?} threads {threads}"
                    );
                }
            }
        }
    }

    /// With the tile kernel chosen (above): it gives `tdpbf16ps`'s documented
    /// bits on ragged shapes (partial blocks, odd depth, several tile
    /// steps). A failure also says how many elements the vector kernels'
    /// order would have matched, to tell which order the hardware keeps.
    #[test]
    fn amx_follows_its_documented_order() {
        if !amx_opted_in() {
            return;
        }
        for (m, k, n) in [(1, 1, 1), (9, 7, 33), (17, 64, 40), (33, 129, 65)] {
            let (a, b) = (values(m * k, 7), values(k * n, 8));
            let got = run(Bf16Gemm::Amx, m, k, n, &a, &b);
            let want = model_amx(m, k, n, &a, &b);
            let same = |x: &[bf16]| {
                got.iter()
                    .zip(x)
                    .filter(|(p, q)| p.to_bits() == q.to_bits())
                    .count()
            };
            assert!(
                same(&want) == got.len(),
                "{m}x{k}x{n}: {} of {} match the documented order, {} the vector kernels' order",
                same(&want),
                got.len(),
                same(&model(m, k, n, &a, &b))
            );
        }
    }

    /// Through `matmul` (batches, transposes), every kernel this CPU runs,
    /// the fallback included, is within bfloat16's output rounding of a
    /// float64 product of the same bfloat16 inputs.
    #[test]
    fn matmul_matches_a_wide_reference() {
        use crate::kernels::matmul::matmul_with;
        use crate::Tensor;
        let (bt, m, k, n) = (2, 19, 45, 37);
        let (a, b) = (values(bt * m * k, 5), values(k * n, 6));
        let ta = Tensor::from_vec([bt, m, k], a.clone()).unwrap();
        let tb = Tensor::from_vec([k, n], b.clone()).unwrap();
        // b transposed, to read it with column strides.
        let b_t: Vec<bf16> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
        let tbt = Tensor::from_vec([n, k], b_t).unwrap();
        // a transposed per batch, to read it with row strides.
        let a_t: Vec<bf16> = (0..bt * k * m)
            .map(|e| {
                let (s, l, i) = (e / (k * m), (e / m) % k, e % m);
                a[(s * m + i) * k + l]
            })
            .collect();
        let tat = Tensor::from_vec([bt, k, m], a_t).unwrap();
        let mut libs = vec![Bf16Gemm::CastF32];
        libs.extend(vector_kernels());
        for lib in libs {
            for (x, tl, y, tr) in [
                (&ta, false, &tb, false),
                (&ta, false, &tbt, true),
                (&tat, true, &tb, false),
            ] {
                let c = matmul_with(x, y, tl, tr, lib).unwrap();
                assert_eq!(c.dims(), &[bt, m, n]);
                let c = c.as_slice::<bf16>().unwrap();
                for (e, got) in c.iter().enumerate() {
                    let (s, i, j) = (e / (m * n), (e / n) % m, e % n);
                    let (mut want, mut size) = (0f64, 0f64);
                    for l in 0..k {
                        let x = f64::from(a[(s * m + i) * k + l].to_f32());
                        let y = f64::from(b[l * n + j].to_f32());
                        want += x * y;
                        size += (x * y).abs();
                    }
                    // Half a bfloat16 ulp of the result, plus float32
                    // rounding of k additions.
                    let tol = want.abs() * 2f64.powi(-8) + size * k as f64 * 2f64.powi(-24);
                    let got = f64::from(got.to_f32());
                    assert!(
                        (got - want).abs() <= tol,
                        "{lib:?} {tl} {tr} [{s},{i},{j}]: {got} vs {want}"
                    );
                }
            }
        }
    }
}
