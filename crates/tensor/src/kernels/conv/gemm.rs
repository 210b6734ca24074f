//! The matrix product convolutions are built on: `c (+)= a @ b` over
//! strided operands, per element type (f32 through our matmul kernels, f64
//! through `matrixmultiply`, i32 with wrapping loops).

use crate::kernels::scalar::Scalar;

/// Element types convolutions compute in natively.
pub(in crate::kernels) trait ConvScalar: Scalar + Send + Sync {
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
        use crate::kernels::matmul::{sgemm_slices, F32Gemm, Mat};
        let layout = |rs: usize, cs: usize| Mat {
            rs: rs as isize,
            cs: cs as isize,
        };
        let (la, lb) = (layout(a_rs, a_cs), layout(b_rs, b_cs));
        let lib = F32Gemm::for_product(m, k, n, la, lb);
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
