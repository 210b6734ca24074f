//! Kernel micro-benchmarks (no external harness): `cargo bench -p ferroflow-tensor`.
//!
//! Prints the median time per call and the achieved bandwidth or FLOP rate.
//! `cargo bench -p ferroflow-tensor --bench kernels -- shapes` runs only the
//! table of mid-sized elementwise, broadcast and reduction cases (the code
//! paths through the kernel team's plumbing), and so on for any name part.

use ferroflow_tensor::kernels::elementwise::{binary, unary, BinaryOp, UnaryOp};
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
    if want("shapes") {
        shapes();
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

/// A filled f32 tensor of `dims`.
fn f32s(dims: &[usize]) -> Tensor {
    let n: usize = dims.iter().product();
    Tensor::from_vec(
        dims.to_vec(),
        (0..n)
            .map(|i| (i % 613) as f32 * 1e-3 - 0.3)
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

/// Mid-sized kernels, where the cost of splitting work across threads
/// shows next to the work itself: median microseconds per call.
fn shapes() {
    let ints = |n: usize| Tensor::from_vec([n], (0..n as i32).collect::<Vec<_>>()).unwrap();
    let binaries: Vec<(&str, BinaryOp, Tensor, Tensor)> = vec![
        ("add f32 [256]", BinaryOp::Add, f32s(&[256]), f32s(&[256])),
        (
            "add f32 [64k]",
            BinaryOp::Add,
            f32s(&[1 << 16]),
            f32s(&[1 << 16]),
        ),
        (
            "add f32 [1M]",
            BinaryOp::Add,
            f32s(&[1 << 20]),
            f32s(&[1 << 20]),
        ),
        (
            "mul f32 [1024,1024]+[1024]",
            BinaryOp::Mul,
            f32s(&[1024, 1024]),
            f32s(&[1024]),
        ),
        (
            "add f32 [256k,4]+[4]",
            BinaryOp::Add,
            f32s(&[1 << 18, 4]),
            f32s(&[4]),
        ),
        (
            "max f32 [1024,1]+[1,1024]",
            BinaryOp::Maximum,
            f32s(&[1024, 1]),
            f32s(&[1, 1024]),
        ),
        ("add i32 [1M]", BinaryOp::Add, ints(1 << 20), ints(1 << 20)),
        (
            "less f32 [1M]",
            BinaryOp::Less,
            f32s(&[1 << 20]),
            f32s(&[1 << 20]),
        ),
    ];
    for (name, op, a, b) in &binaries {
        let t = median_secs(|| drop(binary(*op, a.clone(), b.clone()).unwrap()), 301);
        println!("{name:32} {:9.1} us", t * 1e6);
    }
    let x = f32s(&[1 << 20]);
    for (name, op) in [
        ("relu f32 [1M]", UnaryOp::Relu),
        ("exp f32 [1M]", UnaryOp::Exp),
    ] {
        let t = median_secs(|| drop(unary(op, x.clone()).unwrap()), 301);
        println!("{name:32} {:9.1} us", t * 1e6);
    }
    let m = f32s(&[1024, 1024]);
    for (name, axes) in [
        ("sum f32 [1024,1024] axis 0", [0i64]),
        ("sum f32 [1024,1024] axis 1", [1]),
    ] {
        let t = median_secs(
            || drop(reduce(ReduceOp::Sum, &m, Some(&axes), false).unwrap()),
            301,
        );
        println!("{name:32} {:9.1} us", t * 1e6);
    }
}
