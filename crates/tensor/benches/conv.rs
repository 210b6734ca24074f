//! Single-thread f32 convolutions on training shapes:
//! `cargo bench -p ferroflow-tensor --bench conv` (direct AVX-512 kernels
//! where the CPU has them); `FERROFLOW_DIRECT_CONV=0` runs the im2col path
//! instead. Prints milliseconds and GFLOP/s per product (forward, input
//! gradient, filter gradient). With one thread (`RAYON_NUM_THREADS=1`) the
//! times are the process's CPU time, which a busy machine disturbs less
//! than the wall clock. Compare with TensorFlow's kernels through
//! `benches/scaling.py` and `benches/conv.py`.

mod common;

use common::median_secs;

/// Seconds of CPU time this process has used.
fn cpu_secs() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Median seconds of `reps` calls (CPU time with one thread, else wall).
fn median(mut f: impl FnMut(), reps: usize) -> f64 {
    if team::threads() > 1 {
        return median_secs(f, reps);
    }
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = cpu_secs();
            f();
            cpu_secs() - s
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}
use ferroflow_tensor::kernels::conv::{
    conv2d, conv2d_backprop_filter, conv2d_backprop_input, Conv2dParams, Padding,
};
use ferroflow_tensor::team;
use ferroflow_tensor::Tensor;

fn data(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 2000) as f32 / 1000.0 - 1.0
        })
        .collect()
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let cases: [([usize; 4], [usize; 4], usize); 6] = [
        ([64, 14, 14, 32], [5, 5, 32, 64], 1),
        ([64, 28, 28, 1], [5, 5, 1, 32], 1),
        ([32, 56, 56, 64], [3, 3, 64, 64], 1),
        ([32, 28, 28, 128], [3, 3, 128, 128], 1),
        ([32, 56, 56, 64], [3, 3, 64, 128], 2),
        ([32, 28, 28, 128], [1, 1, 128, 256], 1),
    ];
    println!("threads: {}", team::threads());
    for (xd, wd, s) in cases {
        let name = format!("x{xd:?} w{wd:?} s{s}");
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let p = Conv2dParams {
            strides: [1, s, s, 1],
            dilations: [1, 1, 1, 1],
            padding: Padding::Same,
        };
        let x = Tensor::from_vec(xd, data(xd.iter().product(), 1)).unwrap();
        let w = Tensor::from_vec(wd, data(wd.iter().product(), 2)).unwrap();
        let y = conv2d(&x, &w, &p).unwrap();
        let dy = Tensor::from_vec(y.dims().to_vec(), data(y.num_elements(), 3)).unwrap();
        let flops = 2.0 * (y.num_elements() / wd[3]) as f64 * wd.iter().product::<usize>() as f64;
        let reps = 5;
        let fwd = median(|| drop(conv2d(&x, &w, &p).unwrap()), reps);
        let dx = median(
            || drop(conv2d_backprop_input(&xd, &w, &dy, &p).unwrap()),
            reps,
        );
        let dw = median(
            || drop(conv2d_backprop_filter(&x, &wd, &dy, &p).unwrap()),
            reps,
        );
        let show = |t: f64| format!("{:7.2} ms {:6.1} GF/s", t * 1e3, flops / t / 1e9);
        println!(
            "{name:42} fwd {} | dx {} | dw {}",
            show(fwd),
            show(dx),
            show(dw)
        );
    }
}
