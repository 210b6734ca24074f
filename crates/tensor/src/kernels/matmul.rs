//! Matrix multiplication: packed, runtime-dispatched GEMM for f32/f64, split
//! across the kernel team in a grid of output blocks; plain loops for
//! integers; batched products with broadcast batch dimensions; bfloat16
//! products with float32 sums (`bf16`: AVX512-BF16 where the CPU has it).
//!
//! Three kernels compute f32 blocks, chosen per product by [`F32Gemm`]:
//! the `gemm` crate, whose AVX-512 micro-kernels run at 1.3-1.6x
//! `matrixmultiply`'s speed on the dense-layer products of training (16-core
//! Xeon, `cargo bench -p ferroflow-tensor --bench gemm_candidates`), and
//! `matrixmultiply` (AVX2/FMA at most), which stays ahead where `gemm` reads
//! an unpacked operand with long strides (a transposed weight times a small
//! batch: 0.5x); and on AVX-512, for that transposed-weight case, our own
//! dot-product kernel ([`super::dot_gemm`]), which streams both operands
//! along the depth unpacked. f64 stays on `matrixmultiply`. Neither
//! library's own threads are used: one team for every kernel matters on a
//! small machine.

pub mod bf16;

use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{broadcast_shapes, Shape};
use crate::tensor::Tensor;

/// Layout of one operand: element (i, j) of the logical matrix is at
/// `i * rs + j * cs`.
#[derive(Copy, Clone, Debug)]
pub struct Mat {
    /// Elements from one row to the next.
    pub rs: isize,
    /// Elements from one column to the next.
    pub cs: isize,
}

impl Mat {
    /// Whether a `rows x cols` matrix in this layout lies inside `len`
    /// elements (strides must not be negative).
    fn fits(self, rows: usize, cols: usize, len: usize) -> bool {
        if rows == 0 || cols == 0 {
            return true;
        }
        match (usize::try_from(self.rs), usize::try_from(self.cs)) {
            (Ok(rs), Ok(cs)) => (rows - 1) * rs + (cols - 1) * cs < len,
            _ => false,
        }
    }
}

/// A raw pointer that may cross into other threads: each task writes a
/// disjoint block of the output.
#[derive(Copy, Clone)]
struct SendPtr<T>(*mut T);
// SAFETY: workers only write disjoint output blocks through the pointer.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

/// Products below this many multiply-adds run on one thread: waking the
/// team costs more than it saves.
const PARALLEL_MIN_MACS: usize = 1 << 18;

/// Fewest multiply-adds worth one more thread of a product.
const MACS_PER_THREAD: usize = 1 << 16;

/// Output blocks are cut at multiples of this many rows and columns (a
/// multiple of both libraries' micro-kernel tiles), and never leave a
/// last block narrower than it: a block of one row or column would take a
/// different (matrix-vector) path inside `gemm` and round differently.
const BLOCK_GRANULE: usize = 16;

/// Depth chunk of `gemm` calls. `gemm` picks its own depth blocking from a
/// block's shape; feeding it whole chunks of at most this depth makes the
/// order of every sum independent of how the output was cut.
const GEMM_DEPTH_CHUNK: usize = 512;

/// The library that computes the blocks of one f32 product.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum F32Gemm {
    /// The `matrixmultiply` crate (AVX2/FMA kernels at most).
    MatrixMultiply,
    /// The `gemm` crate (AVX-512 kernels where the CPU has them).
    Gemm,
    /// [`super::dot_gemm`]: dot products of `a`'s rows with `b`'s columns,
    /// both contiguous along the depth (AVX-512 only).
    Dot,
}

impl F32Gemm {
    /// The faster kernel for a whole `m x k @ k x n` product in layouts `la`
    /// and `lb` on this CPU. Chosen from the whole product, never from a
    /// block, so the bits of the result do not depend on the thread count.
    pub fn for_product(m: usize, k: usize, n: usize, la: Mat, lb: Mat) -> F32Gemm {
        if let Some(forced) = forced_f32_gemm() {
            return forced;
        }
        // The right operand stored transposed (a weight in `dy @ w^T`).
        let b_columns_contiguous = lb.rs == 1 && n > 1;
        // A one-row product (a batch-1 prediction) is a vector-matrix
        // product: `gemm` streams the matrix once, while `matrixmultiply`
        // first packs all of it for the single row (3-5x slower on the
        // 2-core EPYC; see the SavedModel section of benches/RESULTS.md).
        // Not with a transposed right operand: there `gemm`'s sums depend
        // on the width of a thread's block of columns.
        if m == 1 && !b_columns_contiguous {
            return F32Gemm::Gemm;
        }
        // Measured with benches/gemm_candidates.rs on a 16-core Xeon
        // (AVX-512) and a 2-core EPYC (AVX2); see benches/RESULTS.md.
        let wide_and_short = m <= 64 && n >= 2048;
        if has_avx512f() {
            let strided_and_short = b_columns_contiguous && m < 256;
            // Both operands contiguous along a depth long enough to fill
            // the 16-lane registers: 1.3x (MLP, 128 rows) to 3x (LSTM, 32
            // rows) the other two on the 2-core Xeon (RESULTS.md, issue 16).
            if strided_and_short && la.cs == 1 && k >= 64 && super::dot_gemm::available() {
                return F32Gemm::Dot;
            }
            if wide_and_short || strided_and_short {
                return F32Gemm::MatrixMultiply;
            }
            return F32Gemm::Gemm;
        }
        if m >= 128 {
            F32Gemm::Gemm
        } else {
            F32Gemm::MatrixMultiply
        }
    }
}

/// The library `FERROFLOW_F32_GEMM` names (`gemm` or `matrixmultiply`),
/// for comparing them on a machine; unset (or anything else) lets
/// [`F32Gemm::for_product`] choose.
fn forced_f32_gemm() -> Option<F32Gemm> {
    static FORCED: std::sync::OnceLock<Option<F32Gemm>> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| match std::env::var("FERROFLOW_F32_GEMM").as_deref() {
        Ok("gemm") => Some(F32Gemm::Gemm),
        Ok("matrixmultiply") => Some(F32Gemm::MatrixMultiply),
        _ => None,
    })
}

/// Whether the CPU runs AVX-512F (checked once).
fn has_avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// One thread's `c = a @ b` (or `c += a @ b` with `accumulate`) for an
/// `m x k @ k x n` product in the given layouts, `c` row-major and dense;
/// panics if an operand does not hold the elements the layouts reach.
#[allow(clippy::too_many_arguments)] // BLAS-style signature
pub fn sgemm_slices(
    lib: F32Gemm,
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    la: Mat,
    b: &[f32],
    lb: Mat,
    c: &mut [f32],
    accumulate: bool,
) {
    assert!(
        la.fits(m, k, a.len()) && lb.fits(k, n, b.len()) && m * n <= c.len(),
        "sgemm_slices: an operand is smaller than its layout"
    );
    // SAFETY: checked just above; `c` is borrowed mutably.
    unsafe {
        sgemm_serial(
            lib,
            m,
            k,
            n,
            a.as_ptr(),
            la,
            b.as_ptr(),
            lb,
            c.as_mut_ptr(),
            n as isize,
            accumulate,
        )
    }
}

/// One thread's `c = a @ b` (or `c += a @ b` with `accumulate`) for an
/// `m x k @ k x n` block, `c` row-major with row stride `ldc`. With
/// [`F32Gemm::Gemm`] the depth goes in fixed chunks, so a block of a larger
/// product gets the same bits as the whole product computed at once.
///
/// # Safety
/// The pointers must address every element the dimensions and strides
/// reach, and `c`'s block must not be written by anyone else meanwhile.
#[allow(clippy::too_many_arguments)] // BLAS-style signature
pub unsafe fn sgemm_serial(
    lib: F32Gemm,
    m: usize,
    k: usize,
    n: usize,
    a: *const f32,
    la: Mat,
    b: *const f32,
    lb: Mat,
    c: *mut f32,
    ldc: isize,
    accumulate: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for i in 0..m {
                std::ptr::write_bytes(c.offset(i as isize * ldc), 0, n);
            }
        }
        return;
    }
    let lib = match lib {
        // The dot kernel takes only its own layout; anything else goes to
        // `matrixmultiply`, which takes every layout.
        F32Gemm::Dot if la.cs == 1 && lb.rs == 1 && super::dot_gemm::available() => {
            return super::dot_gemm::sgemm_nt(m, k, n, a, la.rs, b, lb.cs, c, ldc, accumulate);
        }
        F32Gemm::Dot => F32Gemm::MatrixMultiply,
        other => other,
    };
    match lib {
        F32Gemm::MatrixMultiply | F32Gemm::Dot => matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a,
            la.rs,
            la.cs,
            b,
            lb.rs,
            lb.cs,
            if accumulate { 1.0 } else { 0.0 },
            c,
            ldc,
            1,
        ),
        F32Gemm::Gemm => {
            let chunk = k.div_ceil(k.div_ceil(GEMM_DEPTH_CHUNK));
            let mut k0 = 0;
            while k0 < k {
                let depth = chunk.min(k - k0);
                // gemm: dst = alpha * dst + beta * lhs @ rhs, strides given
                // as (column, row).
                gemm::gemm(
                    m,
                    n,
                    depth,
                    c,
                    1,
                    ldc,
                    accumulate || k0 > 0,
                    a.offset(k0 as isize * la.cs),
                    la.cs,
                    la.rs,
                    b.offset(k0 as isize * lb.rs),
                    lb.cs,
                    lb.rs,
                    1.0,
                    1.0,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
                k0 += depth;
            }
        }
    }
}

/// How [`cuts`] divides `dim` into about `parts` pieces: (the width of
/// every piece but the last, the number of pieces).
fn pieces(dim: usize, parts: usize) -> (usize, usize) {
    let step = dim.div_ceil(parts.max(1)).next_multiple_of(BLOCK_GRANULE);
    let mut count = dim.div_ceil(step).max(1);
    if count > 1 && dim - (count - 1) * step < BLOCK_GRANULE {
        count -= 1;
    }
    (step.min(dim), count)
}

/// Where to cut `dim` into about `parts` pieces: boundaries at multiples of
/// [`BLOCK_GRANULE`], the last piece no narrower than it (unless `dim` is).
fn cuts(dim: usize, parts: usize) -> Vec<usize> {
    let (step, count) = pieces(dim, parts);
    (0..count).map(|i| i * step).chain([dim]).collect()
}

/// The grid of output blocks for `threads` threads: the row and column
/// cuts that minimise the largest thread's work, a block's work being its
/// multiply-adds (`k * rows * cols`) plus its packing of its share of both
/// operands (`k * (rows + cols)` copies), each copy weighed as 16
/// multiply-adds (4 and 64 measured no better on 16 cores; RESULTS.md).
fn grid(m: usize, n: usize, threads: usize) -> (Vec<usize>, Vec<usize>) {
    const PACK_COST: usize = 16;
    let mut best = (usize::MAX, usize::MAX, 1, 1);
    for pm in 1..=threads {
        for pn in 1..=threads / pm {
            let ((bm, cm), (bn, cn)) = (pieces(m, pm), pieces(n, pn));
            // The last piece may be up to a granule wider than the others.
            let bm = bm.max(m - (cm - 1) * bm);
            let bn = bn.max(n - (cn - 1) * bn);
            let blocks = cm * cn;
            let cost = blocks.div_ceil(threads) * (bm * bn + PACK_COST * (bm + bn));
            if (cost, blocks) < (best.0, best.1) {
                best = (cost, blocks, pm, pn);
            }
        }
    }
    (cuts(m, best.2), cuts(n, best.3))
}

/// `c = a @ b` for f32 on the kernel team, for kernels that hold their
/// operands as slices (the fused LSTM's whole-sequence products): `c` is
/// row-major `m x n`, the operands in the given layouts. Same kernels, grid
/// and bits as [`matmul`]; panics if an operand is smaller than its layout.
#[allow(clippy::too_many_arguments)] // BLAS-style signature
pub fn sgemm_team(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    la: Mat,
    b: &[f32],
    lb: Mat,
    c: &mut [f32],
) {
    assert!(
        la.fits(m, k, a.len()) && lb.fits(k, n, b.len()) && m * n <= c.len(),
        "sgemm_team: an operand is smaller than its layout"
    );
    gemm_f32(m, k, n, a, la, b, lb, c);
}

/// What a dense layer does to its product before anything reads it: add a
/// bias along the columns, then clamp at zero (TensorFlow's `_FusedMatMul`
/// with `BiasAdd` and `Relu`). Applied to each output block right after the
/// block is computed, while it is still in that core's cache.
#[derive(Clone, Copy, Default)]
pub struct Epilogue<'a> {
    /// Added to every row (`n` values).
    pub bias: Option<&'a [f32]>,
    /// Then `relu`, as the `Relu` op computes it (NaN passes through).
    pub relu: bool,
}

impl Epilogue<'_> {
    fn is_empty(&self) -> bool {
        self.bias.is_none() && !self.relu
    }

    /// Applies the epilogue to columns `c0..c0 + row.len()` of one row.
    fn apply(&self, row: &mut [f32], c0: usize) {
        match (self.bias, self.relu) {
            (Some(bias), relu) => {
                for (v, &b) in row.iter_mut().zip(&bias[c0..]) {
                    let x = *v + b;
                    *v = if relu { relu_f32(x) } else { x };
                }
            }
            (None, true) => row.iter_mut().for_each(|v| *v = relu_f32(*v)),
            (None, false) => {}
        }
    }
}

/// The `Relu` op's value: NaN passes through, everything not above zero
/// (negative zero too) becomes zero.
#[inline(always)]
fn relu_f32(x: f32) -> f32 {
    if x > 0.0 || x.is_nan() {
        x
    } else {
        0.0
    }
}

/// `c = a @ b` for f32 (row-major `c`, `m x n`) on the kernel team: a grid
/// of output blocks, each one [`sgemm_serial`] call. Every output element
/// is one sum over the whole `k`, in an order fixed by the product alone,
/// so results do not depend on the thread count.
#[allow(clippy::too_many_arguments)] // BLAS-style signature
fn gemm_f32(m: usize, k: usize, n: usize, a: &[f32], la: Mat, b: &[f32], lb: Mat, c: &mut [f32]) {
    gemm_f32_then(m, k, n, a, la, b, lb, c, Epilogue::default())
}

/// [`gemm_f32`], then `epilogue` on each output block.
#[allow(clippy::too_many_arguments)] // BLAS-style signature
fn gemm_f32_then(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    la: Mat,
    b: &[f32],
    lb: Mat,
    c: &mut [f32],
    epilogue: Epilogue<'_>,
) {
    let lib = F32Gemm::for_product(m, k, n, la, lb);
    let macs = m * n * k;
    let threads = rayon::current_num_threads()
        .min(macs / MACS_PER_THREAD)
        .max(1);
    let (ap, bp, cp) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    if threads == 1 || macs < PARALLEL_MIN_MACS {
        // SAFETY: the slices hold at least the elements addressed by the
        // given dimensions and strides (checked by `matmul`).
        unsafe { sgemm_serial(lib, m, k, n, ap, la, bp, lb, cp, n as isize, false) };
        if !epilogue.is_empty() {
            c[..m * n]
                .chunks_exact_mut(n.max(1))
                .for_each(|row| epilogue.apply(row, 0));
        }
        return;
    }
    let (rows, cols) = grid(m, n, threads);
    let (ap, bp, cp) = (
        SendPtr(ap as *mut f32),
        SendPtr(bp as *mut f32),
        SendPtr(cp),
    );
    let per_row = cols.len() - 1;
    crate::team::run((rows.len() - 1) * per_row, |t| {
        let (ap, bp, cp) = (ap, bp, cp);
        let (r, q) = (t / per_row, t % per_row);
        let (r0, r1, c0, c1) = (rows[r], rows[r + 1], cols[q], cols[q + 1]);
        // SAFETY: as above; each block's offsets stay inside the operands,
        // and the blocks of `c` are disjoint.
        unsafe {
            sgemm_serial(
                lib,
                r1 - r0,
                k,
                c1 - c0,
                ap.0.offset(r0 as isize * la.rs),
                la,
                bp.0.offset(c0 as isize * lb.cs),
                lb,
                cp.0.add(r0 * n + c0),
                n as isize,
                false,
            )
        };
        if !epilogue.is_empty() {
            for i in r0..r1 {
                // SAFETY: row `i`, columns `c0..c1` belong to this block alone.
                let row = unsafe { std::slice::from_raw_parts_mut(cp.0.add(i * n + c0), c1 - c0) };
                epilogue.apply(row, c0);
            }
        }
    });
}

/// `relu?(a @ b + bias)` for 2-D float32 operands (a dense layer's forward
/// product, `transpose_*` as `MatMul`'s attributes), with the bias and the
/// clamp applied to each block of the product as it is finished. The same
/// bits as `MatMul`, then `BiasAdd`/`AddV2`, then `Relu`. `bias` must hold
/// one value per output column.
pub fn matmul_then(
    a: &Tensor,
    b: &Tensor,
    transpose_a: bool,
    transpose_b: bool,
    epilogue: Epilogue<'_>,
) -> Result<Tensor> {
    let ok = a.dtype() == DType::Float32
        && b.dtype() == DType::Float32
        && a.dims().len() == 2
        && b.dims().len() == 2;
    if !ok {
        return Err(Error::invalid_argument(format!(
            "a fused dense product takes two float32 matrices, got {} {} and {} {}",
            a.dtype(),
            a.shape(),
            b.dtype(),
            b.shape()
        )));
    }
    let (ad, bd) = (a.dims(), b.dims());
    let (m, k) = if transpose_a {
        (ad[1], ad[0])
    } else {
        (ad[0], ad[1])
    };
    let (k2, n) = if transpose_b {
        (bd[1], bd[0])
    } else {
        (bd[0], bd[1])
    };
    if k != k2 {
        return Err(Error::invalid_argument(format!(
            "Matrix size-incompatible: In[0]: {}, In[1]: {}",
            a.shape(),
            b.shape()
        )));
    }
    if let Some(bias) = epilogue.bias {
        if bias.len() != n {
            return Err(Error::invalid_argument(format!(
                "a fused dense product of {n} columns got a bias of {} values",
                bias.len()
            )));
        }
    }
    let (la, lb) = layouts(m, k, n, transpose_a, transpose_b);
    let mut out: Vec<f32> = super::parallel::zeroed(m * n);
    if m * n > 0 {
        gemm_f32_then(
            m,
            k,
            n,
            a.as_slice()?,
            la,
            b.as_slice()?,
            lb,
            &mut out,
            epilogue,
        );
    }
    Tensor::from_vec([m, n], out)
}

/// `c = a @ b` for f64 on the kernel team, split into one block of rows or
/// columns per thread, each a single-threaded `matrixmultiply` call.
#[allow(clippy::too_many_arguments)] // BLAS-style signature
fn gemm_f64(m: usize, k: usize, n: usize, a: &[f64], la: Mat, b: &[f64], lb: Mat, c: &mut [f64]) {
    let threads = rayon::current_num_threads();
    // Split the larger output dimension, in multiples of 8 (the
    // microkernel tile) so no block wastes a partial tile.
    let along_m = m >= n;
    let dim = if along_m { m } else { n };
    let parts = threads.min(dim / 8).max(1);
    let one = |len: usize, lo: usize, ap: *const f64, bp: *const f64, cp: *mut f64| {
        let (mm, nn) = if along_m { (len, n) } else { (m, len) };
        let (ap, bp, cp) = if along_m {
            (
                ap.wrapping_offset(lo as isize * la.rs),
                bp,
                cp.wrapping_add(lo * n),
            )
        } else {
            (
                ap,
                bp.wrapping_offset(lo as isize * lb.cs),
                cp.wrapping_add(lo),
            )
        };
        // SAFETY: the slices hold at least the elements addressed by the
        // given dimensions and strides (checked by `matmul`); each block's
        // offsets stay inside the operands and the blocks of `c` are
        // disjoint.
        unsafe {
            matrixmultiply::dgemm(
                mm, k, nn, 1.0, ap, la.rs, la.cs, bp, lb.rs, lb.cs, 0.0, cp, n as isize, 1,
            )
        }
    };
    if parts == 1 || m * n * k < PARALLEL_MIN_MACS {
        return one(dim, 0, a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    }
    let block = dim.div_ceil(parts).next_multiple_of(8);
    let (ap, bp, cp) = (
        SendPtr(a.as_ptr() as *mut f64),
        SendPtr(b.as_ptr() as *mut f64),
        SendPtr(c.as_mut_ptr()),
    );
    crate::team::run(dim.div_ceil(block), |p| {
        let (ap, bp, cp) = (ap, bp, cp);
        let lo = p * block;
        one(block.min(dim - lo), lo, ap.0, bp.0, cp.0);
    });
}

#[allow(clippy::too_many_arguments)] // BLAS-style signature
fn gemm_naive<T: Scalar>(
    m: usize,
    k: usize,
    n: usize,
    a: &[T],
    la: Mat,
    b: &[T],
    lb: Mat,
    c: &mut [T],
) {
    for i in 0..m {
        for j in 0..n {
            let mut acc = T::zero();
            for l in 0..k {
                let x = a[(i as isize * la.rs + l as isize * la.cs) as usize];
                let y = b[(l as isize * lb.rs + j as isize * lb.cs) as usize];
                acc = acc.add(x.mul(y));
            }
            c[i * n + j] = acc;
        }
    }
}

/// The layouts of a product's row-major operands, `a` (`m x k`, stored
/// `k x m` when transposed) and `b` (`k x n`, stored `n x k` when transposed).
pub(crate) fn layouts(
    m: usize,
    k: usize,
    n: usize,
    transpose_a: bool,
    transpose_b: bool,
) -> (Mat, Mat) {
    let la = if transpose_a {
        Mat {
            rs: 1,
            cs: m as isize,
        }
    } else {
        Mat {
            rs: k as isize,
            cs: 1,
        }
    };
    let lb = if transpose_b {
        Mat {
            rs: 1,
            cs: k as isize,
        }
    } else {
        Mat {
            rs: n as isize,
            cs: 1,
        }
    };
    (la, lb)
}

/// `a @ b` over the last two dimensions, with optional transposes and
/// broadcasting of leading (batch) dimensions.
pub fn matmul(a: &Tensor, b: &Tensor, transpose_a: bool, transpose_b: bool) -> Result<Tensor> {
    matmul_with(a, b, transpose_a, transpose_b, bf16::Bf16Gemm::for_cpu())
}

/// [`matmul`] with bfloat16 products computed by `bf16_lib`.
pub fn matmul_with(
    a: &Tensor,
    b: &Tensor,
    transpose_a: bool,
    transpose_b: bool,
    bf16_lib: bf16::Bf16Gemm,
) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(Error::invalid_argument(format!(
            "MatMul: a and b must have one dtype, got {} and {}",
            a.dtype(),
            b.dtype()
        )));
    }
    let (ad, bd) = (a.dims(), b.dims());
    if ad.len() < 2 || bd.len() < 2 {
        return Err(Error::invalid_argument(format!(
            "MatMul: In[0] and In[1] must be at least matrices: {} and {}",
            a.shape(),
            b.shape()
        )));
    }
    let (ar, ac) = (ad[ad.len() - 2], ad[ad.len() - 1]);
    let (br, bc) = (bd[bd.len() - 2], bd[bd.len() - 1]);
    let (m, k) = if transpose_a { (ac, ar) } else { (ar, ac) };
    let (k2, n) = if transpose_b { (bc, br) } else { (br, bc) };
    if k != k2 {
        return Err(Error::invalid_argument(format!(
            "Matrix size-incompatible: In[0]: {}, In[1]: {}",
            a.shape(),
            b.shape()
        )));
    }
    let a_batch = &ad[..ad.len() - 2];
    let b_batch = &bd[..bd.len() - 2];
    let batch = broadcast_shapes(a_batch, b_batch).ok_or_else(|| {
        Error::invalid_argument(format!(
            "MatMul: batch dimensions of {} and {} do not broadcast",
            a.shape(),
            b.shape()
        ))
    })?;
    let (la, lb) = layouts(m, k, n, transpose_a, transpose_b);
    let nb = batch.num_elements();
    // Offsets of each output batch's operands.
    let offsets = |sub: &[usize]| -> Vec<usize> {
        let plan = super::broadcast::Broadcast::to(sub, &[], batch.clone());
        let idx: Vec<usize> = (0..sub.iter().product::<usize>()).collect();
        plan.map(&idx, &[0usize], |i, _| i)
    };
    let (aoff, boff) = (offsets(a_batch), offsets(b_batch));
    let mut out_shape = batch.clone();
    out_shape.push(m);
    out_shape.push(n);
    let dtype = a.dtype();
    macro_rules! run {
        ($t:ty, $gemm:expr) => {{
            let (x, y) = (a.as_slice::<$t>()?, b.as_slice::<$t>()?);
            let mut out: Vec<$t> = super::parallel::zeroed(nb * m * n);
            if m * n > 0 {
                for bi in 0..nb {
                    let xa = &x[aoff[bi] * m * k..(aoff[bi] + 1) * m * k];
                    let yb = &y[boff[bi] * k * n..(boff[bi] + 1) * k * n];
                    $gemm(
                        m,
                        k,
                        n,
                        xa,
                        la,
                        yb,
                        lb,
                        &mut out[bi * m * n..(bi + 1) * m * n],
                    );
                }
            }
            Tensor::from_vec(out_shape, out)
        }};
    }
    match dtype {
        DType::Float32 => run!(f32, gemm_f32),
        DType::Float64 => run!(f64, gemm_f64),
        DType::Int32 => run!(i32, gemm_naive::<i32>),
        DType::Int64 => run!(i64, gemm_naive::<i64>),
        DType::Complex64 => run!(crate::Complex32, super::complex::gemm),
        DType::Complex128 => run!(crate::Complex64, super::complex::gemm),
        DType::BFloat16 if bf16_lib != bf16::Bf16Gemm::CastF32 => {
            run!(half::bf16, |m, k, n, x, la, y, lb, c| bf16::gemm(
                bf16_lib, m, k, n, x, la, y, lb, c
            ))
        }
        DType::Float16 | DType::BFloat16 => {
            let wa = super::elementwise::cast(a, DType::Float32)?;
            let wb = super::elementwise::cast(b, DType::Float32)?;
            let r = matmul(&wa, &wb, transpose_a, transpose_b)?;
            super::elementwise::cast(&r, dtype)
        }
        other => Err(Error::invalid_argument(format!(
            "MatMul is not supported for {other} tensors"
        ))),
    }
}

/// Output shape helper for rank-2 products, used by tests and callers.
pub fn matmul_shape(a: &Shape, b: &Shape, ta: bool, tb: bool) -> Option<Shape> {
    let (m, k) = if ta {
        (a.dim(1), a.dim(0))
    } else {
        (a.dim(0), a.dim(1))
    };
    let (k2, n) = if tb {
        (b.dim(1), b.dim(0))
    } else {
        (b.dim(0), b.dim(1))
    };
    (k == k2).then(|| Shape::new(&[m, n]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            }
        }
        c
    }

    #[test]
    fn transposes_match_naive() {
        let (m, k, n) = (3, 4, 5);
        let a: Vec<f64> = (0..m * k).map(|i| i as f64 * 0.5 - 2.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| (i % 7) as f64).collect();
        let want = naive(&a, &b, m, k, n);
        let at =
            super::super::array::transpose(&Tensor::from_vec([m, k], a.clone()).unwrap(), &[1, 0])
                .unwrap();
        let bt =
            super::super::array::transpose(&Tensor::from_vec([k, n], b.clone()).unwrap(), &[1, 0])
                .unwrap();
        let ta = Tensor::from_vec([m, k], a).unwrap();
        let tb = Tensor::from_vec([k, n], b).unwrap();
        for (x, y, fa, fb) in [
            (&ta, &tb, false, false),
            (&at, &tb, true, false),
            (&ta, &bt, false, true),
            (&at, &bt, true, true),
        ] {
            let c = matmul(x, y, fa, fb).unwrap();
            assert_eq!(c.dims(), &[m, n]);
            assert_eq!(c.as_slice::<f64>().unwrap(), want.as_slice());
        }
        let ci = matmul(
            &Tensor::from_vec([1, 2], vec![1i32, 2]).unwrap(),
            &Tensor::from_vec([2, 1], vec![3i32, 4]).unwrap(),
            false,
            false,
        )
        .unwrap();
        assert_eq!(ci.as_slice::<i32>().unwrap(), &[11]);
    }

    /// Products large enough to be split across workers (along rows when
    /// `m >= n`, along columns otherwise, with ragged last blocks) give the
    /// same values as the naive loop, and the same bits for any pool size.
    #[test]
    fn split_products_match_naive_for_any_thread_count() {
        for (m, k, n) in [(203, 70, 37), (24, 130, 517), (64, 64, 64)] {
            let a: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
            let b: Vec<f64> = (0..k * n).map(|i| ((i * 5) % 11) as f64 * 0.25).collect();
            let want = naive(&a, &b, m, k, n);
            let bt = super::super::array::transpose(
                &Tensor::from_vec([k, n], b.clone()).unwrap(),
                &[1, 0],
            )
            .unwrap();
            let ta = Tensor::from_vec([m, k], a).unwrap();
            let tb = Tensor::from_vec([k, n], b).unwrap();
            // Small integers: every partial sum is exact.
            for (x, y, fb) in [(&ta, &tb, false), (&ta, &bt, true)] {
                let c = in_pool(3, || matmul(x, y, false, fb).unwrap());
                assert_eq!(c.as_slice::<f64>().unwrap(), want.as_slice());
                let c32 = in_pool(3, || {
                    matmul(&to_f32(x, 1.0, 0.0), &to_f32(y, 1.0, 0.0), false, fb).unwrap()
                });
                let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
                assert_eq!(c32.as_slice::<f32>().unwrap(), want32.as_slice());
            }
        }
    }

    fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(f)
    }

    fn to_f32(t: &Tensor, scale: f64, shift: f64) -> Tensor {
        let v: Vec<f32> = t
            .as_slice::<f64>()
            .unwrap()
            .iter()
            .map(|x| (x * scale + shift) as f32)
            .collect();
        Tensor::from_vec(t.dims().to_vec(), v).unwrap()
    }

    /// f32 products with inexact sums, through both libraries, every
    /// transpose and ragged grids: the same bits for every thread count.
    #[test]
    fn f32_products_are_bit_identical_for_any_thread_count() {
        for (m, k, n) in [
            (203, 70, 37),
            (24, 130, 517),
            (128, 784, 512),
            (33, 600, 129),
            (1, 1500, 2100),
            (1, 4099, 517),
        ] {
            let a: Vec<f64> = (0..m * k).map(|i| ((i * 7919) % 1013) as f64).collect();
            let b: Vec<f64> = (0..k * n).map(|i| ((i * 104729) % 1009) as f64).collect();
            let ta = to_f32(&Tensor::from_vec([m, k], a).unwrap(), 1.37e-3, -0.6);
            let tb = to_f32(&Tensor::from_vec([k, n], b).unwrap(), 2.3e-3, -1.1);
            let at = super::super::array::transpose(&ta, &[1, 0]).unwrap();
            let bt = super::super::array::transpose(&tb, &[1, 0]).unwrap();
            for (x, y, fa, fb) in [
                (&ta, &tb, false, false),
                (&at, &tb, true, false),
                (&ta, &bt, false, true),
            ] {
                let results: Vec<Vec<f32>> = [1, 2, 3, 5, 16]
                    .into_iter()
                    .map(|t| {
                        in_pool(t, || matmul(x, y, fa, fb).unwrap())
                            .as_slice::<f32>()
                            .unwrap()
                            .to_vec()
                    })
                    .collect();
                for (i, r) in results.iter().enumerate().skip(1) {
                    assert!(
                        r.iter()
                            .zip(&results[0])
                            .all(|(p, q)| p.to_bits() == q.to_bits()),
                        "{m}x{k}x{n} ta={fa} tb={fb}: pool {i} differs"
                    );
                }
            }
        }
    }

    /// Both libraries, forced, agree with a float64 reference, and every
    /// grid covers the output exactly once with blocks no narrower than a
    /// granule.
    #[test]
    fn both_libraries_and_every_grid_are_correct() {
        let (m, k, n) = (70, 1100, 45);
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 31) % 17) as f32 * 0.1 - 0.8)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 7) % 13) as f32 * 0.1 - 0.6)
            .collect();
        let want: Vec<f64> = naive(
            &a.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &b.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            m,
            k,
            n,
        );
        for lib in [F32Gemm::MatrixMultiply, F32Gemm::Gemm] {
            for accumulate in [false, true] {
                let mut c = vec![1.0f32; m * n];
                let (la, lb) = (
                    Mat {
                        rs: k as isize,
                        cs: 1,
                    },
                    Mat {
                        rs: n as isize,
                        cs: 1,
                    },
                );
                sgemm_slices(lib, m, k, n, &a, la, &b, lb, &mut c, accumulate);
                let extra = if accumulate { 1.0 } else { 0.0 };
                for (got, w) in c.iter().zip(&want) {
                    assert!(
                        (*got as f64 - w - extra).abs() < 1e-3,
                        "{lib:?}: {got} vs {w}"
                    );
                }
            }
        }
        for (dim, parts) in [
            (1, 4),
            (15, 2),
            (17, 2),
            (33, 2),
            (128, 16),
            (784, 5),
            (100, 7),
        ] {
            let c = cuts(dim, parts);
            assert_eq!((c[0], *c.last().unwrap()), (0, dim));
            assert!(c.windows(2).all(|w| w[1] > w[0]));
            assert!(c.len() == 2 || c.windows(2).all(|w| w[1] - w[0] >= BLOCK_GRANULE));
            assert!(c[..c.len() - 1].iter().all(|x| x % BLOCK_GRANULE == 0));
        }
        // A batch of 128 on 16 threads: a 2 x 8 grid rather than 16 strips
        // that would each pack the whole weight.
        let (rows, cols) = grid(128, 512, 16);
        assert_eq!((rows.len() - 1, cols.len() - 1), (2, 8));
    }

    /// Edge shapes through all three kernels: empty depth (zeros, or `c`
    /// untouched when accumulating), depth 1 and 2 (gemm's outer-product
    /// path; a masked tail alone in the dot kernel), one row or one column
    /// (the matrix-vector paths), depths that split into uneven chunks, and
    /// every transpose (the dot kernel takes `a @ b^T` and hands the other
    /// layouts to `matrixmultiply`).
    #[test]
    fn edge_shapes_through_both_libraries() {
        for (m, k, n) in [
            (3, 0, 4),
            (5, 1, 7),
            (6, 2, 9),
            (1, 300, 40),
            (40, 300, 1),
            (17, 1025, 33),
        ] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 13) % 7) as f32 - 3.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 9) as f32 - 4.0).collect();
            let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
            let want = naive(&wide(&a), &wide(&b), m, k, n);
            for lib in [F32Gemm::MatrixMultiply, F32Gemm::Gemm, F32Gemm::Dot] {
                for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                    // Store each operand transposed when asked, and describe it so.
                    let store = |v: &[f32], rows: usize, cols: usize, t: bool| -> (Vec<f32>, Mat) {
                        if !t {
                            return (
                                v.to_vec(),
                                Mat {
                                    rs: cols as isize,
                                    cs: 1,
                                },
                            );
                        }
                        let mut out = vec![0.0; v.len()];
                        for i in 0..rows {
                            for j in 0..cols {
                                out[j * rows + i] = v[i * cols + j];
                            }
                        }
                        (
                            out,
                            Mat {
                                rs: 1,
                                cs: rows as isize,
                            },
                        )
                    };
                    let (sa, la) = store(&a, m, k, ta);
                    let (sb, lb) = store(&b, k, n, tb);
                    for accumulate in [false, true] {
                        let mut c = vec![2.0f32; m * n];
                        sgemm_slices(lib, m, k, n, &sa, la, &sb, lb, &mut c, accumulate);
                        let extra = if accumulate { 2.0 } else { 0.0 };
                        for (got, w) in c.iter().zip(&want) {
                            // Small integers: every partial sum is exact.
                            assert_eq!(
                                *got as f64,
                                w + extra,
                                "{lib:?} {m}x{k}x{n} ta={ta} tb={tb}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "smaller than its layout")]
    fn a_short_operand_is_refused() {
        let (a, b, mut c) = (vec![1.0f32; 5], vec![1.0f32; 6], vec![0.0f32; 4]);
        let (la, lb) = (Mat { rs: 3, cs: 1 }, Mat { rs: 2, cs: 1 });
        sgemm_slices(F32Gemm::Gemm, 2, 3, 2, &a, la, &b, lb, &mut c, false);
    }

    #[test]
    fn batch_broadcast_and_errors() {
        let a = Tensor::from_vec([2, 1, 2], vec![1.0f32, 0.0, 0.0, 1.0]).unwrap();
        let b = Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let c = matmul(&a, &b, false, false).unwrap();
        assert_eq!(c.dims(), &[2, 1, 2]);
        assert_eq!(c.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
        let bad = matmul(
            &b,
            &Tensor::from_vec([3, 1], vec![0.0f32; 3]).unwrap(),
            false,
            false,
        );
        assert!(bad.unwrap_err().to_string().contains("size-incompatible"));
    }
}
