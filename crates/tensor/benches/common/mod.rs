//! Timing shared by the benchmark binaries.

use std::time::Instant;

/// Median seconds of `reps` calls of `f`, after one warm-up call.
pub fn median_secs(mut f: impl FnMut(), reps: usize) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}
