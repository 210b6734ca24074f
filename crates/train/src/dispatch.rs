//! Runtime SIMD dispatch and the chunk pool that spreads a step's dense
//! updates over every core.
//!
//! The rules are plain loops that the compiler vectorises; this module
//! compiles them three times (baseline x86-64, AVX2, AVX-512) and picks
//! the widest the CPU supports at run time, so one wheel runs everywhere.
//! No version uses fused multiply-add in the rules' arithmetic, so all three
//! give identical results. At the AVX-512 level, `f32` Adagrad runs a
//! hand-written loop ([`crate::avx512`]) whose reciprocal is a correctly
//! rounded FMA sequence, again bit for bit the same.

use crate::real::Real;
use crate::rules::Rule;
use ferroflow_tensor::team::{self, Sweep};
use smallvec::SmallVec;

/// A rule's slot arrays (or their chunks): at most three (centered
/// RMSProp), kept inline so building a step's tasks does not allocate per
/// variable.
pub type Slots<'a, T> = SmallVec<[&'a mut [T]; 3]>;

/// Elements per pooled chunk (a multiple of every vector width).
pub const CHUNK: usize = 1 << 13;

/// Below this many elements in a whole step, run on the calling thread.
const PARALLEL_MIN: usize = 1 << 15;

/// A step whose arrays (variables, slots, gradients) add up to more than
/// this fraction of the last-level cache is treated as streamed from DRAM
/// every step. Measured on the 480 MiB-L3 target (ms per step, cache-resident
/// way -> streamed way): 4M Adam (64 MiB) 1.23 -> 1.45, 8M Adagrad (96 MiB)
/// 2.60 -> 2.20, 8M Adam (128 MiB) 3.51 -> 3.43, 16M SGD (128 MiB)
/// 3.18 -> 2.93, 16M Adagrad (192 MiB) 7.6 -> 5.85.
const STREAMING_LLC_FRACTION: usize = 6;

/// In a streamed step, each task runs its rule over blocks of this many
/// bytes (per array) ...
const BLOCK_BYTES: usize = 512;

/// ... first asking for the lines this many bytes further on in every
/// array: the hardware prefetchers alone leave DRAM under-used on this
/// access pattern (four to five streams per thread). Interleaved runs, ms
/// per step, (block, ahead) = (1 KiB, 4 KiB) -> (512 B, 2 KiB): 16M Adam
/// 9.43 -> 8.78, 8M Adam 3.60 -> 3.21, 16M RMSProp 8.53 -> 8.32, 16M
/// Momentum 6.23 -> 6.00; SGD and Adagrad within noise (+-5%).
const AHEAD_BYTES: usize = 2 << 10;

/// One chunk of one variable: the var, its slots and its gradient.
pub struct Task<'a, T> {
    pub var: &'a mut [T],
    pub slots: Slots<'a, T>,
    pub grad: &'a [T],
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Level {
    Baseline,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

fn level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return Level::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    Level::Baseline
}

/// The widest instruction set in use (for benchmark reports).
pub fn simd_level() -> &'static str {
    match level() {
        Level::Baseline => "baseline",
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => "avx2",
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => "avx512",
    }
}

#[inline(always)]
fn run_one<T: Real>(rule: &Rule<T>, t: &mut Task<'_, T>) {
    rule.dense(t.var, &mut t.slots, t.grad);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<T: Real>(rule: &Rule<T>, t: &mut Task<'_, T>) {
    run_one(rule, t)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn run_avx512<T: Real>(rule: &Rule<T>, t: &mut Task<'_, T>) {
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() {
        // SAFETY: T is f32 (checked just above), so these are the same types.
        let (rule32, t32) = unsafe {
            (
                &*(rule as *const Rule<T>).cast::<Rule<f32>>(),
                &mut *(t as *mut Task<'_, T>).cast::<Task<'_, f32>>(),
            )
        };
        // SAFETY: this level is only chosen when the CPU has AVX-512F.
        if unsafe { crate::avx512::dense_f32(rule32, t32.var, &mut t32.slots, t32.grad) } {
            return;
        }
    }
    run_one(rule, t)
}

fn run_task<T: Real>(rule: &Rule<T>, level: Level, t: &mut Task<'_, T>) {
    match level {
        Level::Baseline => run_one(rule, t),
        // SAFETY: the level was chosen by runtime feature detection.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { run_avx2(rule, t) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { run_avx512(rule, t) },
    }
}

/// One variable's update: its elements, its slots' elements, its gradient.
pub type VarWork<'a, T> = (&'a mut [T], Slots<'a, T>, &'a [T]);

/// Splits every variable (with its slots and gradient) into chunks and runs
/// the dense rule over all of them, in parallel when the step is large.
/// Chunks are independent, so results do not depend on the thread count.
///
/// `sweep` is the direction each thread works through its share of the
/// chunks; alternating it from one step to the next starts each step on the
/// data the previous one left in the cache (see [`team::Sweep`]).
///
/// A step too large to stay in the last-level cache always sweeps forward
/// (alternating gains nothing there, and descending chunks stream about 6%
/// slower from DRAM) and prefetches ahead of itself; on data the cache holds
/// both would cost (see [`STREAMING_LLC_FRACTION`]).
pub fn run_dense<T: Real>(rule: &Rule<T>, vars: Vec<VarWork<'_, T>>, sweep: Sweep) {
    let total: usize = vars.iter().map(|v| v.0.len()).sum();
    let arrays = 2 + vars.first().map_or(0, |v| v.1.len());
    let streaming = total * arrays * std::mem::size_of::<T>()
        > ferroflow_tensor::prefetch::last_level_cache_bytes() / STREAMING_LLC_FRACTION;
    run_dense_as(rule, vars, sweep, streaming)
}

/// [`run_dense`] with the choice between cache-resident and streamed made.
fn run_dense_as<T: Real>(rule: &Rule<T>, vars: Vec<VarWork<'_, T>>, sweep: Sweep, streaming: bool) {
    let total: usize = vars.iter().map(|v| v.0.len()).sum();
    let mut tasks: Vec<Task<'_, T>> = if vars.iter().all(|v| v.0.len() <= CHUNK) {
        // Many small variables, one task each: converted in place, without
        // a second pass that moves every variable's views.
        vars.into_iter()
            .map(|(var, slots, grad)| Task { var, slots, grad })
            .collect()
    } else {
        split_into_chunks(vars, total)
    };
    let lv = level();
    if total < PARALLEL_MIN {
        for t in &mut tasks {
            run_task(rule, lv, t);
        }
    } else if streaming {
        team::for_each_mut_sweep(&mut tasks, Sweep::Forward, |_, t| {
            run_task_prefetching(rule, lv, t)
        });
    } else {
        team::for_each_mut_sweep(&mut tasks, sweep, |_, t| run_task(rule, lv, t));
    }
}

/// One task per [`CHUNK`] of every variable (and of its slots and gradient).
fn split_into_chunks<'a, T: Real>(vars: Vec<VarWork<'a, T>>, total: usize) -> Vec<Task<'a, T>> {
    let mut tasks = Vec::with_capacity(total / CHUNK + vars.len());
    for (var, slots, grad) in vars {
        let mut slot_chunks: SmallVec<[std::slice::ChunksMut<'_, T>; 3]> =
            slots.into_iter().map(|s| s.chunks_mut(CHUNK)).collect();
        for (vc, gc) in var.chunks_mut(CHUNK).zip(grad.chunks(CHUNK)) {
            let sc = slot_chunks
                .iter_mut()
                .map(|it| it.next().expect("slot shaped like var"))
                .collect();
            tasks.push(Task {
                var: vc,
                slots: sc,
                grad: gc,
            });
        }
    }
    tasks
}

/// [`run_task`] block by block, prefetching [`AHEAD_BYTES`] ahead in every
/// array. The lines asked for past a task's end are the next chunk of the
/// same buffers (or nothing: a prefetch never faults).
fn run_task_prefetching<T: Real>(rule: &Rule<T>, level: Level, t: &mut Task<'_, T>) {
    use ferroflow_tensor::prefetch::prefetch_range;
    let size = std::mem::size_of::<T>();
    let (block, ahead) = (BLOCK_BYTES / size, AHEAD_BYTES / size);
    let len = t.var.len();
    let mut start = 0;
    while start < len {
        let end = (start + block).min(len);
        let prefetch = |p: *const T| prefetch_range(p.wrapping_add(start + ahead), BLOCK_BYTES);
        prefetch(t.var.as_ptr());
        prefetch(t.grad.as_ptr());
        for s in t.slots.iter() {
            prefetch(s.as_ptr());
        }
        let mut piece = Task {
            var: &mut t.var[start..end],
            slots: t.slots.iter_mut().map(|s| &mut s[start..end]).collect(),
            grad: &t.grad[start..end],
        };
        run_task(rule, level, &mut piece);
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{RuleKind, RuleOptions};

    fn adam() -> Rule<f32> {
        let mut h = [0.0f32; 6];
        h[..6].copy_from_slice(&[0.9f32.powi(3), 0.999f32.powi(3), 1e-3, 0.9, 0.999, 1e-8]);
        Rule {
            kind: RuleKind::Adam,
            opts: RuleOptions::default(),
            h,
            t: 0,
        }
    }

    fn data(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) as f32
                    / (1u32 << 24) as f32
                    - 0.5
            })
            .collect()
    }

    fn adagrad() -> Rule<f32> {
        Rule {
            kind: RuleKind::Adagrad,
            opts: RuleOptions::default(),
            h: [0.05, 0.0, 0.0, 0.0, 0.0, 0.0],
            t: 0,
        }
    }

    /// Runs `rule` over variables of awkward sizes, through the chunk pool
    /// (`level_override` None) or one task per variable at a given level;
    /// returns the variables followed by every slot.
    fn run_with(
        rule: &Rule<f32>,
        level_override: Option<Level>,
        threads: usize,
        streaming: bool,
    ) -> Vec<Vec<f32>> {
        let sizes = [3usize, CHUNK + 5, 2 * CHUNK, 100_000];
        let n_slots = rule.kind.slots(false);
        let mut vars: Vec<Vec<f32>> = sizes
            .iter()
            .enumerate()
            .map(|(k, &n)| data(n, k as u32))
            .collect();
        // Slots start non-negative (Adam's second moment, Adagrad's sum).
        let mut slots: Vec<Vec<Vec<f32>>> = sizes
            .iter()
            .map(|&n| {
                (0..n_slots)
                    .map(|k| data(n, 7 + k as u32).iter().map(|x| x.abs()).collect())
                    .collect()
            })
            .collect();
        let gs: Vec<Vec<f32>> = sizes
            .iter()
            .enumerate()
            .map(|(k, &n)| data(n, 1000 + k as u32))
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let work: Vec<VarWork<'_, f32>> = vars
                .iter_mut()
                .zip(slots.iter_mut())
                .zip(&gs)
                .map(|((v, s), g)| {
                    (
                        v.as_mut_slice(),
                        s.iter_mut().map(|s| s.as_mut_slice()).collect(),
                        g.as_slice(),
                    )
                })
                .collect();
            match level_override {
                None => run_dense_as(rule, work, Sweep::Backward, streaming),
                Some(lv) => {
                    for (var, slots, grad) in work {
                        run_task(rule, lv, &mut Task { var, slots, grad });
                    }
                }
            }
        });
        vars.into_iter()
            .chain(slots.into_iter().flatten())
            .collect()
    }

    #[test]
    fn results_do_not_depend_on_threads_or_simd_level() {
        // Adam runs the generic loop at every level; f32 Adagrad has its own
        // AVX-512 loop (crate::avx512), which must agree bit for bit too.
        for rule in [adam(), adagrad()] {
            let reference = run_with(&rule, Some(Level::Baseline), 1, false);
            for threads in 1..=3 {
                assert_eq!(run_with(&rule, None, threads, false), reference);
                // Block by block with prefetching, as steps too large for
                // the cache run.
                assert_eq!(run_with(&rule, None, threads, true), reference);
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                assert_eq!(run_with(&rule, Some(Level::Avx2), 1, false), reference);
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f") {
                assert_eq!(run_with(&rule, Some(Level::Avx512), 1, false), reference);
            }
            assert_ne!(reference[0], data(3, 0), "the update changed the variable");
        }
    }
}
