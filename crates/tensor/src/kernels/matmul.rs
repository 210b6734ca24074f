//! Matrix multiplication: `matrixmultiply`'s packed, runtime-dispatched
//! (SSE/AVX/FMA) GEMM for f32/f64, split across the kernel team by blocks
//! of output rows or columns; plain loops for integers; batched products with
//! broadcast batch dimensions.
//!
//! `matrixmultiply` was measured against the `gemm` crate on the 2-core
//! target machine: 1024x1024 f32 ran at ~250 GFLOP/s vs ~185 GFLOP/s. Its
//! own `threading` feature is off: a second thread pool competing with
//! rayon's (which the other kernels use) slowed mixed training steps by a
//! third on two cores.

use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{broadcast_shapes, Shape};
use crate::tensor::Tensor;

/// Layout of one operand: element (i, j) of the logical matrix is at
/// `i * rs + j * cs`.
#[derive(Copy, Clone)]
struct Mat {
    rs: isize,
    cs: isize,
}

/// A raw pointer that may cross into other threads: each task writes a
/// disjoint block of the output.
#[derive(Copy, Clone)]
struct SendPtr<T>(*mut T);
// SAFETY: workers only write disjoint output blocks through the pointer.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

/// Products below this many multiply-adds run on one thread: waking the
/// pool costs more than it saves.
const PARALLEL_MIN_MACS: usize = 1 << 18;

/// Runs `c = a @ b` (row-major `c`, `m x n`) on the kernel team by
/// splitting the output into one block of rows or columns per thread, each
/// a single-threaded `matrixmultiply` call.
///
/// Every output element is still one dot product over the whole `k`
/// (blocked the same way), so results do not depend on the thread count.
/// One pool for every kernel matters on a small machine: matrixmultiply's
/// own threads would compete with the team's spinning helpers.
macro_rules! split_gemm {
    ($name:ident, $t:ty, $kernel:path) => {
        #[allow(clippy::too_many_arguments)] // BLAS-style signature
        fn $name(m: usize, k: usize, n: usize, a: &[$t], la: Mat, b: &[$t], lb: Mat, c: &mut [$t]) {
            let threads = rayon::current_num_threads();
            // Split the larger output dimension, in multiples of 8 (the
            // microkernel tile) so no block wastes a partial tile.
            let along_m = m >= n;
            let dim = if along_m { m } else { n };
            let parts = threads.min(dim / 8).max(1);
            if parts == 1 || m * n * k < PARALLEL_MIN_MACS {
                // SAFETY: the slices hold at least the elements addressed by
                // the given dimensions and strides (checked by `matmul`).
                unsafe {
                    $kernel(
                        m,
                        k,
                        n,
                        1.0,
                        a.as_ptr(),
                        la.rs,
                        la.cs,
                        b.as_ptr(),
                        lb.rs,
                        lb.cs,
                        0.0,
                        c.as_mut_ptr(),
                        n as isize,
                        1,
                    );
                }
                return;
            }
            let block = dim.div_ceil(parts).next_multiple_of(8);
            let (ap, bp, cp) = (
                SendPtr(a.as_ptr() as *mut $t),
                SendPtr(b.as_ptr() as *mut $t),
                SendPtr(c.as_mut_ptr()),
            );
            crate::team::run(dim.div_ceil(block), |p| {
                let (ap, bp, cp) = (ap, bp, cp);
                let lo = p * block;
                let len = block.min(dim - lo);
                // SAFETY: as above; each block's offsets stay inside the
                // operands, and the blocks of `c` are disjoint.
                unsafe {
                    if along_m {
                        $kernel(
                            len,
                            k,
                            n,
                            1.0,
                            ap.0.offset(lo as isize * la.rs),
                            la.rs,
                            la.cs,
                            bp.0,
                            lb.rs,
                            lb.cs,
                            0.0,
                            cp.0.add(lo * n),
                            n as isize,
                            1,
                        );
                    } else {
                        $kernel(
                            m,
                            k,
                            len,
                            1.0,
                            ap.0,
                            la.rs,
                            la.cs,
                            bp.0.offset(lo as isize * lb.cs),
                            lb.rs,
                            lb.cs,
                            0.0,
                            cp.0.add(lo),
                            n as isize,
                            1,
                        );
                    }
                }
            });
        }
    };
}

split_gemm!(gemm_f32, f32, matrixmultiply::sgemm);
split_gemm!(gemm_f64, f64, matrixmultiply::dgemm);

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

/// `a @ b` over the last two dimensions, with optional transposes and
/// broadcasting of leading (batch) dimensions.
pub fn matmul(a: &Tensor, b: &Tensor, transpose_a: bool, transpose_b: bool) -> Result<Tensor> {
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
            // Small integers: every partial sum is exact in f64.
            let c = matmul(&ta, &tb, false, false).unwrap();
            assert_eq!(c.as_slice::<f64>().unwrap(), want.as_slice());
            let c = matmul(&ta, &bt, false, true).unwrap();
            assert_eq!(c.as_slice::<f64>().unwrap(), want.as_slice());
            // f32 with inexact sums: bitwise equal across pool sizes.
            let to_f32 = |t: &Tensor, scale: f64| {
                let v: Vec<f32> = t
                    .as_slice::<f64>()
                    .unwrap()
                    .iter()
                    .map(|x| (x * scale + 0.01) as f32)
                    .collect();
                Tensor::from_vec(t.dims().to_vec(), v).unwrap()
            };
            let (fa, fb) = (to_f32(&ta, 0.37), to_f32(&tb, 1.3));
            let results: Vec<Vec<f32>> = [1, 2, 3]
                .into_iter()
                .map(|t| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(t)
                        .build()
                        .unwrap();
                    pool.install(|| matmul(&fa, &fb, false, false).unwrap())
                        .as_slice::<f32>()
                        .unwrap()
                        .to_vec()
                })
                .collect();
            assert_eq!(results[0], results[1]);
            assert_eq!(results[0], results[2]);
        }
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
