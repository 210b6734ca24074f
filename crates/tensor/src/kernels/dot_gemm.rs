//! `c = a @ b` for f32 when both operands run contiguously along the depth:
//! the rows of `a` and the columns of `b` (that is, `b` is a matrix stored
//! transposed, as in a dense layer's input gradient `dy @ w^T`). Each output
//! element is then a dot product of two contiguous vectors, computed here in
//! AVX-512 registers without packing either operand.
//!
//! Why a kernel of our own: with a small batch on the left (the 32-row
//! products of a recurrent step, or a 128-row MLP batch), both GEMM
//! libraries first pack or stride through the transposed weight, and on
//! AVX-512 machines that made these products 2-3x slower than the forward
//! ones (`benches/RESULTS.md`, issues 16 and 18). Streaming both operands
//! as dot products reads the weight once, in order.
//!
//! Summation order: lane `l` of an accumulator sums the depth positions
//! `p = l (mod 16)` in increasing order, then the 16 lanes are added by
//! `_mm512_reduce_add_ps`. Every output element is computed whole by one
//! call, so the bits of a product do not depend on how it is split across
//! threads.

/// Whether this CPU runs the kernel (AVX-512F, checked once).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `c = a @ b` (or `c += a @ b` with `accumulate`) for an `m x k @ k x n`
/// product where row `i` of `a` is the `k` contiguous floats at `a + i * lda`
/// and column `j` of `b` the `k` contiguous floats at `b + j * ldb`; `c` is
/// row-major with row stride `ldc`.
///
/// # Safety
/// [`available`] must be true; the pointers must address every element the
/// dimensions and strides reach, and `c`'s block must not be written by
/// anyone else meanwhile.
#[allow(clippy::too_many_arguments)] // BLAS-style signature
pub unsafe fn sgemm_nt(
    m: usize,
    k: usize,
    n: usize,
    a: *const f32,
    lda: isize,
    b: *const f32,
    ldb: isize,
    c: *mut f32,
    ldc: isize,
    accumulate: bool,
) {
    #[cfg(target_arch = "x86_64")]
    {
        debug_assert!(available());
        let full = m / ROWS * ROWS;
        // SAFETY: forwarded from the caller; `available()` holds.
        unsafe {
            avx512::rows::<ROWS>(0, full, k, n, a, lda, b, ldb, c, ldc, accumulate);
            avx512::rows::<1>(full, m, k, n, a, lda, b, ldb, c, ldc, accumulate);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (m, k, n, a, lda, b, ldb, c, ldc, accumulate);
        unreachable!("sgemm_nt needs AVX-512");
    }
}

/// Rows of `a` per register tile.
const ROWS: usize = 4;
/// Columns of `b` per register tile: `ROWS * COLS` accumulators plus `COLS`
/// loaded `b` vectors and one `a` vector fill 31 of the 32 zmm registers.
const COLS: usize = 6;

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::COLS;
    use std::arch::x86_64::*;

    /// Output rows `i0..i1` in tiles of `R` rows by [`COLS`] columns; the
    /// column loop is outside so a tile's `COLS` columns of `b` stay in L1
    /// while every row of `a` passes by. A partial last tile repeats its last
    /// column in the unused registers and stores only the real ones.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn rows<const R: usize>(
        i0: usize,
        i1: usize,
        k: usize,
        n: usize,
        a: *const f32,
        lda: isize,
        b: *const f32,
        ldb: isize,
        c: *mut f32,
        ldc: isize,
        accumulate: bool,
    ) {
        if i0 >= i1 {
            return;
        }
        let whole = k / 16 * 16;
        let tail: __mmask16 = ((1u32 << (k - whole)) - 1) as __mmask16;
        let mut j = 0;
        while j < n {
            let cols = COLS.min(n - j);
            let bcol: [*const f32; COLS] =
                std::array::from_fn(|y| b.offset((j + y.min(cols - 1)) as isize * ldb));
            let mut i = i0;
            while i < i1 {
                let arow: [*const f32; R] =
                    std::array::from_fn(|x| a.offset((i + x) as isize * lda));
                let mut acc = [[_mm512_setzero_ps(); COLS]; R];
                let mut p = 0;
                while p < whole {
                    let bv: [__m512; COLS] =
                        std::array::from_fn(|y| _mm512_loadu_ps(bcol[y].add(p)));
                    for x in 0..R {
                        let av = _mm512_loadu_ps(arow[x].add(p));
                        for y in 0..COLS {
                            acc[x][y] = _mm512_fmadd_ps(av, bv[y], acc[x][y]);
                        }
                    }
                    p += 16;
                }
                if tail != 0 {
                    let bv: [__m512; COLS] =
                        std::array::from_fn(|y| _mm512_maskz_loadu_ps(tail, bcol[y].add(p)));
                    for x in 0..R {
                        let av = _mm512_maskz_loadu_ps(tail, arow[x].add(p));
                        for y in 0..COLS {
                            acc[x][y] = _mm512_fmadd_ps(av, bv[y], acc[x][y]);
                        }
                    }
                }
                for (x, row) in acc.iter().enumerate() {
                    let out = c.offset((i + x) as isize * ldc + j as isize);
                    for (y, v) in row.iter().take(cols).enumerate() {
                        let s = _mm512_reduce_add_ps(*v);
                        *out.add(y) = if accumulate { *out.add(y) + s } else { s };
                    }
                }
                i += R;
            }
            j += COLS;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's order: 16 lane sums over `p = l (mod 16)`, then the
    /// lanes. `_mm512_reduce_add_ps` adds pairwise (halves, then halves
    /// again); compare within rounding rather than bit for bit.
    fn reference(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k)
                    .map(|p| a[i * k + p] as f64 * b[j * k + p] as f64)
                    .sum();
            }
        }
        c
    }

    fn data(len: usize, seed: u32) -> Vec<f32> {
        (0..len)
            .map(|v| {
                ((v as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 500.0 - 1.0
            })
            .collect()
    }

    /// `c = a @ b^T` (or `+=`) for dense row-major `a` (`m x k`) and `b` (`n x k`).
    fn packed_product(
        m: usize,
        k: usize,
        n: usize,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
        acc: bool,
    ) {
        assert!(a.len() >= m * k && b.len() >= n * k && c.len() >= m * n);
        // SAFETY: checked just above; the callers checked `available()`.
        unsafe {
            sgemm_nt(
                m,
                k,
                n,
                a.as_ptr(),
                k as isize,
                b.as_ptr(),
                k as isize,
                c.as_mut_ptr(),
                n as isize,
                acc,
            )
        }
    }

    #[test]
    fn matches_a_float64_reference_on_ragged_shapes() {
        if !available() {
            return;
        }
        for &(m, k, n) in &[
            (1, 1, 1),
            (3, 17, 5),
            (4, 16, 6),
            (5, 64, 13),
            (32, 1024, 50),
            (9, 100, 7),
        ] {
            let a = data(m * k, 1);
            let b = data(n * k, 2);
            let mut c = vec![f32::NAN; m * n];
            packed_product(m, k, n, &a, &b, &mut c, false);
            let want = reference(&a, &b, m, k, n);
            for (idx, (&got, &w)) in c.iter().zip(&want).enumerate() {
                assert!(
                    (got as f64 - w).abs() <= 1e-5 * (k as f64).sqrt() * (1.0 + w.abs()),
                    "({m},{k},{n}) element {idx}: {got} vs {w}"
                );
            }
            // Accumulating adds onto what is there.
            let before = c.clone();
            packed_product(m, k, n, &a, &b, &mut c, true);
            for (x, y) in c.iter().zip(&before) {
                assert_eq!(*x, y + y);
            }
        }
    }

    #[test]
    fn blocks_of_a_product_have_the_whole_products_bits() {
        if !available() {
            return;
        }
        let (m, k, n) = (13, 300, 11);
        let a = data(m * k, 3);
        let b = data(n * k, 4);
        let mut whole = vec![0f32; m * n];
        unsafe {
            sgemm_nt(
                m,
                k,
                n,
                a.as_ptr(),
                k as isize,
                b.as_ptr(),
                k as isize,
                whole.as_mut_ptr(),
                n as isize,
                false,
            )
        };
        // Rows 5..13 and columns 4..11 as their own call.
        let mut part = whole.clone();
        for v in part.iter_mut() {
            *v = 0.0;
        }
        unsafe {
            sgemm_nt(
                8,
                k,
                7,
                a.as_ptr().add(5 * k),
                k as isize,
                b.as_ptr().add(4 * k),
                k as isize,
                part.as_mut_ptr().add(5 * n + 4),
                n as isize,
                false,
            )
        };
        for i in 5..13 {
            for j in 4..11 {
                assert_eq!(
                    part[i * n + j].to_bits(),
                    whole[i * n + j].to_bits(),
                    "({i},{j})"
                );
            }
        }
    }
}
