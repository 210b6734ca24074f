//! Single-thread GEMM libraries on the products of training a dense layer:
//! `cargo bench -p ferroflow-tensor --bench gemm_candidates`.
//!
//! For each batch size and layer width it times the forward product
//! `x @ w`, the input gradient `dy @ w^T` and the weight gradient
//! `x^T @ dy` through `matrixmultiply` and the `gemm` crate (AVX-512
//! micro-kernels when the CPU has them), and prints GFLOP/s. This is how
//! the library behind `MatMul` was chosen; rerun it on a new machine class.

mod common;

use common::median_secs;
use ferroflow_tensor::kernels::matmul::{sgemm_serial, F32Gemm, Mat};

/// One product `c[m, n] = a @ b` with element strides (row, column).
struct Product {
    name: String,
    m: usize,
    k: usize,
    n: usize,
    a_strides: (isize, isize),
    b_strides: (isize, isize),
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    for batch in [1usize, 32, 128, 512] {
        for (fan_in, fan_out) in [(784usize, 512usize), (512, 512), (1024, 4096)] {
            let (m, i, o) = (batch, fan_in, fan_out);
            let products = [
                // x[m, i] @ w[i, o]
                Product {
                    name: format!("fwd   x{m}x{i} @ w{i}x{o}"),
                    m,
                    k: i,
                    n: o,
                    a_strides: (i as isize, 1),
                    b_strides: (o as isize, 1),
                },
                // dy[m, o] @ w[i, o]^T
                Product {
                    name: format!("dx    dy{m}x{o} @ w^T"),
                    m,
                    k: o,
                    n: i,
                    a_strides: (o as isize, 1),
                    b_strides: (1, o as isize),
                },
                // x[m, i]^T @ dy[m, o]
                Product {
                    name: format!("dw    x^T{i}x{m} @ dy"),
                    m: i,
                    k: m,
                    n: o,
                    a_strides: (1, i as isize),
                    b_strides: (o as isize, 1),
                },
            ];
            for p in products {
                if filter.as_deref().is_some_and(|f| !p.name.contains(f)) {
                    continue;
                }
                run(&p);
            }
        }
    }
}

fn run(p: &Product) {
    let a: Vec<f32> = (0..p.m * p.k)
        .map(|v| (v % 17) as f32 * 0.1 - 0.8)
        .collect();
    let b: Vec<f32> = (0..p.k * p.n)
        .map(|v| (v % 13) as f32 * 0.1 - 0.6)
        .collect();
    let mut c = vec![0f32; p.m * p.n];
    let flops = 2.0 * (p.m * p.k * p.n) as f64;
    let reps = ((2e9 / flops) as usize).clamp(5, 200);
    let mm = median_secs(
        || unsafe {
            matrixmultiply::sgemm(
                p.m,
                p.k,
                p.n,
                1.0,
                a.as_ptr(),
                p.a_strides.0,
                p.a_strides.1,
                b.as_ptr(),
                p.b_strides.0,
                p.b_strides.1,
                0.0,
                c.as_mut_ptr(),
                p.n as isize,
                1,
            )
        },
        reps,
    );
    let want = c.clone();
    let ge = median_secs(
        || unsafe {
            gemm::gemm(
                p.m,
                p.n,
                p.k,
                c.as_mut_ptr(),
                1,
                p.n as isize,
                false,
                a.as_ptr(),
                p.a_strides.1,
                p.a_strides.0,
                b.as_ptr(),
                p.b_strides.1,
                p.b_strides.0,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            )
        },
        reps,
    );
    let worst = want
        .iter()
        .zip(&c)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(
        worst < 1e-2,
        "{}: the libraries disagree by {worst}",
        p.name
    );
    let identical = splits_are_bit_identical(p, &a, &b);
    println!(
        "{:<28} matrixmultiply {:7.1} GFLOP/s   gemm {:7.1} GFLOP/s   gemm/mm {:.2}   gemm blocks bit-identical: {identical}",
        p.name,
        flops / mm / 1e9,
        flops / ge / 1e9,
        mm / ge
    );
}

/// The engine's serial f32 GEMM through `gemm` on one block of the output.
///
/// # Safety
/// `rows` and `cols` must lie inside the product.
unsafe fn gemm_block(
    p: &Product,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
) {
    let (la, lb) = (
        Mat {
            rs: p.a_strides.0,
            cs: p.a_strides.1,
        },
        Mat {
            rs: p.b_strides.0,
            cs: p.b_strides.1,
        },
    );
    sgemm_serial(
        F32Gemm::Gemm,
        rows.len(),
        p.k,
        cols.len(),
        a.as_ptr().offset(rows.start as isize * la.rs),
        la,
        b.as_ptr().offset(cols.start as isize * lb.cs),
        lb,
        c.as_mut_ptr().add(rows.start * p.n + cols.start),
        p.n as isize,
        false,
    );
}

/// Whether cutting the output into blocks of rows and columns (multiples
/// of 16, the way the kernel team does) changes any bit of the engine's
/// `gemm` path.
fn splits_are_bit_identical(p: &Product, a: &[f32], b: &[f32]) -> bool {
    let mut whole = vec![0f32; p.m * p.n];
    unsafe { gemm_block(p, a, b, &mut whole, 0..p.m, 0..p.n) };
    [(2usize, 1usize), (1, 3), (3, 5), (4, 4)]
        .iter()
        .all(|&(pm, pn)| {
            let cuts = |dim: usize, parts: usize| -> Vec<usize> {
                let step = dim.div_ceil(parts).next_multiple_of(16);
                let mut v: Vec<usize> = (0..parts).map(|i| (i * step).min(dim)).collect();
                v.push(dim);
                v.dedup();
                v
            };
            let (rc, cc) = (cuts(p.m, pm), cuts(p.n, pn));
            let mut blocks = vec![0f32; p.m * p.n];
            for r in rc.windows(2) {
                for c in cc.windows(2) {
                    unsafe { gemm_block(p, a, b, &mut blocks, r[0]..r[1], c[0]..c[1]) };
                }
            }
            blocks
                .iter()
                .zip(&whole)
                .all(|(x, y)| x.to_bits() == y.to_bits())
        })
}
