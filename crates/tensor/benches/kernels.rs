//! Kernel micro-benchmarks (no external harness): `cargo bench -p ferroflow-tensor`.
//!
//! Prints the median time per call and the achieved bandwidth or FLOP rate.

use ferroflow_tensor::kernels::elementwise::{binary, BinaryOp};
use ferroflow_tensor::kernels::matmul::matmul;
use ferroflow_tensor::kernels::reduce::{reduce, ReduceOp};
use ferroflow_tensor::Tensor;

mod common;

use common::median_secs;

fn main() {
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let want = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let n = 1 << 24;
    let a = Tensor::from_vec(
        [n],
        (0..n).map(|i| (i % 1000) as f32 * 1e-3).collect::<Vec<_>>(),
    )
    .unwrap();
    let b = Tensor::from_vec(
        [n],
        (0..n).map(|i| (i % 777) as f32 * 1e-3).collect::<Vec<_>>(),
    )
    .unwrap();
    let bytes = (3 * 4 * n) as f64;
    if want("add") {
        let t = median_secs(
            || drop(binary(BinaryOp::Add, a.clone(), b.clone()).unwrap()),
            11,
        );
        println!(
            "add 16M f32 (new output)      {:8.2} ms  {:6.1} GB/s",
            t * 1e3,
            bytes / t / 1e9
        );
        let mut owned = Some(a.as_slice::<f32>().unwrap().to_vec());
        let t = median_secs(
            || {
                let v = owned.take().unwrap();
                let out =
                    binary(BinaryOp::Add, Tensor::from_vec([n], v).unwrap(), b.clone()).unwrap();
                owned = Some(out.into_vec::<f32>().unwrap());
            },
            11,
        );
        println!(
            "add 16M f32 (in place)        {:8.2} ms  {:6.1} GB/s",
            t * 1e3,
            bytes / t / 1e9
        );
    }
    if want("sum") {
        let t = median_secs(|| drop(reduce(ReduceOp::Sum, &a, None, false).unwrap()), 11);
        println!(
            "reduce_sum 16M f32            {:8.2} ms  {:6.1} GB/s",
            t * 1e3,
            (4 * n) as f64 / t / 1e9
        );
    }
    if want("matmul") {
        let m = 1024;
        let x = Tensor::from_vec(
            [m, m],
            (0..m * m).map(|i| (i % 13) as f32).collect::<Vec<_>>(),
        )
        .unwrap();
        let t = median_secs(|| drop(matmul(&x, &x, false, false).unwrap()), 7);
        println!(
            "matmul 1024^2 f32             {:8.2} ms  {:6.1} GFLOP/s",
            t * 1e3,
            2.0 * (m * m * m) as f64 / t / 1e9
        );
    }
}
