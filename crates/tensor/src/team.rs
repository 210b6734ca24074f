//! The kernel team: the calling thread plus spinning helper threads, which
//! run the parallel parts of a step's kernels.
//!
//! Why not rayon for this: a `Session.run` executes its plan on the caller's
//! thread, which is not a rayon worker. Each parallel kernel then hands its
//! work to the pool, sleeps on a latch and is woken when the workers finish.
//! On the 2-core target VM those sleeps and wake-ups cost about as much as
//! the work of a mid-sized kernel: a 32x512 @ 512x512 product split in two
//! took 118 µs through rayon against 139 µs on one thread, and 76 µs when
//! the caller ran one half and a spinning helper the other.
//!
//! So here the caller always runs tasks itself, next to `threads - 1`
//! helpers (one per other core of rayon's global pool); each thread owns a
//! share of the tasks and takes over what others leave (see [`Sweep`]).
//! After a job a helper keeps polling for the next one for a short
//! window ([`spin_window`], `FERROFLOW_SPIN_US`, default 200 µs, the gap
//! between two kernels of a step or two steps of a loop), then parks until
//! woken. The helpers copy the caller's denormal flushing for each job.
//!
//! Jobs fall back to rayon when the caller is a rayon worker (a session with
//! its own `intra_op_threads` pool runs there) or when another thread's job
//! holds the team (concurrent sessions), and run serially when nested in a
//! team task or in the child of a `fork()` (see [`in_forked_child`]).
//! Results never depend on which path ran: kernels give every task a fixed
//! piece of the problem.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use rayon::prelude::*;

/// Runs `f(i)` for every `i` in `0..tasks`, each exactly once, spread over
/// the calling thread and the team's helpers. Returns when all have run; a
/// panic in any task is re-raised here after the others finished.
#[inline]
pub fn run<F: Fn(usize) + Sync>(tasks: usize, f: F) {
    run_tasks(tasks, Sweep::Forward, &f)
}

/// Which end of its share of the tasks each thread starts from.
///
/// Every thread of the team owns a fixed contiguous share of a job's tasks
/// (the same share for jobs of the same size, so consecutive kernels over
/// the same data find their pieces in the same core's cache), works through
/// it, then takes what is left of the others' shares from their far ends. A
/// kernel that sweeps the same buffers every step, like an optimizer update,
/// alternates the direction: each step then starts on the data the previous
/// one touched last, still in that core's L2 cache (18% faster for a 1M
/// parameter Momentum update on the 2-core target).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Lowest task of the share first.
    Forward,
    /// Highest task of the share first.
    Backward,
}

/// [`run`] with the given direction through each thread's share.
#[inline]
pub fn run_sweep<F: Fn(usize) + Sync>(tasks: usize, sweep: Sweep, f: F) {
    run_tasks(tasks, sweep, &f)
}

/// The body of [`run_sweep`], behind a `dyn` so that it is compiled once
/// rather than once per kernel closure: a task is a chunk of a kernel's
/// work, so one indirect call per task costs nothing measurable, and the
/// closure's own loop over its elements stays monomorphic. (Generic, the
/// team plumbing was instantiated 1,500+ times, a quarter of this crate's
/// LLVM IR with the other wrappers of [`crate::kernels::parallel`].)
fn run_tasks(tasks: usize, sweep: Sweep, f: &(dyn Fn(usize) + Sync)) {
    match tasks {
        0 => return,
        1 => return f(0),
        _ => {}
    }
    if IN_TASK.get() || SOLO.get() || tasks > u32::MAX as usize || in_forked_child() {
        // Already inside a team task (the other threads are busy with the
        // outer job's tasks), or on a thread whose kernels run alone.
        return (0..tasks).for_each(f);
    }
    run_shared(tasks, sweep, f);
}

/// The part of [`run_tasks`] that hands tasks to other threads.
fn run_shared(tasks: usize, sweep: Sweep, f: &(dyn Fn(usize) + Sync)) {
    if rayon::current_thread_index().is_some() {
        return (0..tasks).into_par_iter().for_each(f);
    }
    let team = team();
    if team.helpers.is_empty() {
        return (0..tasks).for_each(f);
    }
    if team
        .busy
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return (0..tasks).into_par_iter().for_each(f);
    }
    /// Frees the team when the job ends, also when it re-raises a task's
    /// panic.
    struct Release<'a>(&'a AtomicBool);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            self.0.store(false, Ordering::Release);
        }
    }
    let _release = Release(&team.busy);
    team.lead(tasks, sweep, f);
}

/// Runs `f(index, item)` for every item of `items`, as tasks of
/// [`run_sweep`].
pub fn for_each_mut_sweep<T: Send, F: Fn(usize, &mut T) + Sync>(
    items: &mut [T],
    sweep: Sweep,
    f: F,
) {
    let base = SendPtr(items.as_mut_ptr());
    run_sweep(items.len(), sweep, |i| {
        let base = &base;
        // SAFETY: task `i` alone gets item `i`, which outlives the job.
        f(i, unsafe { &mut *base.0.add(i) });
    });
}

/// Runs `f(index, chunk)` over consecutive `chunk`-element pieces of `data`
/// (the last may be shorter), as tasks of [`run`].
pub fn for_each_chunk_mut<T: Send, F: Fn(usize, &mut [T]) + Sync>(
    data: &mut [T],
    chunk: usize,
    f: F,
) {
    assert!(chunk > 0, "chunk size must be positive");
    let len = data.len();
    let base = SendPtr(data.as_mut_ptr());
    run(len.div_ceil(chunk), |i| {
        let base = &base;
        let start = i * chunk;
        let n = chunk.min(len - start);
        // SAFETY: task `i` alone gets elements `start..start + n` of `data`,
        // which outlives the call to `run`; the ranges are disjoint.
        let piece = unsafe { std::slice::from_raw_parts_mut(base.0.add(start), n) };
        f(i, piece);
    });
}

/// `f(index, chunk)` over consecutive `chunk`-element pieces of `data`, as
/// tasks of [`run`], collected in chunk order.
pub fn map_chunks<T: Sync, R: Send, F: Fn(usize, &[T]) -> R + Sync>(
    data: &[T],
    chunk: usize,
    f: F,
) -> Vec<R> {
    assert!(chunk > 0, "chunk size must be positive");
    let n = data.len().div_ceil(chunk);
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    for_each_chunk_mut(&mut out, 1, |i, slot| {
        let lo = i * chunk;
        slot[0] = Some(f(i, &data[lo..(lo + chunk).min(data.len())]));
    });
    out.into_iter()
        .map(|r| r.expect("every task ran"))
        .collect()
}

/// How long an idle helper polls for the next job before parking.
pub fn spin_window() -> Duration {
    static WINDOW: OnceLock<Duration> = OnceLock::new();
    *WINDOW.get_or_init(|| {
        let us = std::env::var("FERROFLOW_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(200);
        Duration::from_micros(us)
    })
}

/// Number of threads a team job uses: the caller plus the helpers (1 in a
/// forked child, see [`in_forked_child`]).
pub fn threads() -> usize {
    if in_forked_child() {
        return 1;
    }
    team().helpers.len() + 1
}

/// Set in the child of a `fork()`; see [`in_forked_child`].
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn note_fork_in_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Registers (once) the `fork()` handler behind [`in_forked_child`]. The
/// team does it when it starts; a program should call it before anything
/// starts rayon's global pool (the Python module does at import).
pub fn install_fork_guard() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        #[cfg(unix)]
        // SAFETY: the handler only stores to an atomic, which is
        // async-signal-safe as a fork child handler must be.
        unsafe {
            libc::pthread_atfork(None, None, Some(note_fork_in_child));
        }
    });
}

/// Whether this process is the child of a `fork()` (Python's
/// `multiprocessing` on Linux, `os.fork`). A child has only the forking
/// thread: the team's helpers and rayon's workers are gone, and handing
/// them work would wait forever. Kernels in a child therefore run on the
/// calling thread alone, and code that would use rayon's global pool checks
/// [`threads`] first.
pub fn in_forked_child() -> bool {
    FORKED.load(Ordering::Relaxed)
}

#[derive(Clone, Copy)]
struct SendPtr<T>(*mut T);
// SAFETY: used only to hand disjoint pieces of one slice to tasks.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

thread_local! {
    /// Set while this thread runs a team task.
    static IN_TASK: Cell<bool> = const { Cell::new(false) };
    /// Set on threads whose kernels always run alone (see [`run_kernels_alone`]).
    static SOLO: Cell<bool> = const { Cell::new(false) };
}

/// From now on, kernels called on this thread run every task themselves,
/// never through the team or rayon: for the executor's inter-op workers,
/// which run small ops beside a kernel that holds the team (handing their
/// tasks to rayon would put a second set of threads on cores the team's
/// helpers already spin on).
pub fn run_kernels_alone() {
    SOLO.set(true);
}

/// The tasks `lo..hi` one thread owns, packed into one word (`lo` in the
/// high half) so the owner and thieves can claim from either end with a
/// compare-and-swap. Padded to its own cache lines: the owner's claims then
/// never touch a line another thread writes.
#[repr(align(128))]
struct Share(AtomicU64);

impl Share {
    fn new(lo: usize, hi: usize) -> Share {
        Share(AtomicU64::new(((lo as u64) << 32) | hi as u64))
    }

    /// Claims the lowest (`front`) or highest remaining task.
    fn take(&self, front: bool) -> Option<usize> {
        let mut cur = self.0.load(Ordering::Relaxed);
        loop {
            let (lo, hi) = (cur >> 32, cur & 0xffff_ffff);
            if lo >= hi {
                return None;
            }
            let (next, task) = if front {
                (((lo + 1) << 32) | hi, lo)
            } else {
                ((lo << 32) | (hi - 1), hi - 1)
            };
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(task as usize),
                Err(seen) => cur = seen,
            }
        }
    }
}

/// One published job. It lives on the caller's stack; helpers reach it only
/// through [`Team::current`] while counted in [`Team::active`].
struct Job<'a> {
    f: &'a (dyn Fn(usize) + Sync),
    /// Each thread's share: the caller's first, then helper 1's, ...
    shares: Vec<Share>,
    sweep: Sweep,
    /// Tasks finished (run or panicked).
    finished: AtomicUsize,
    /// Whether the caller flushes denormals; helpers do the same.
    flush: bool,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Job<'_> {
    /// Runs thread `me`'s share in the job's direction, then whatever is left
    /// of the other shares from their far ends.
    fn work(&self, me: usize) {
        IN_TASK.set(true);
        let forward = self.sweep == Sweep::Forward;
        let parts = self.shares.len();
        let mut ran = 0;
        for k in 0..parts {
            let share = &self.shares[(me + k) % parts];
            let front = if k == 0 { forward } else { !forward };
            while let Some(i) = share.take(front) {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| (self.f)(i))) {
                    let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                    slot.get_or_insert(p);
                }
                ran += 1;
            }
        }
        self.finished.fetch_add(ran, Ordering::Release);
        IN_TASK.set(false);
    }
}

struct Team {
    helpers: Vec<Thread>,
    /// Held by the one caller whose job is published.
    busy: AtomicBool,
    /// The published job (type-erased lifetime), or null.
    current: AtomicPtr<Job<'static>>,
    /// Bumped for every job, so helpers notice new work without a lock.
    generation: AtomicUsize,
    /// Helpers that may be looking at `current`.
    active: AtomicUsize,
    /// Helpers parked or about to park.
    sleepers: AtomicUsize,
}

fn team() -> &'static Team {
    static TEAM: OnceLock<&'static Team> = OnceLock::new();
    TEAM.get_or_init(|| {
        install_fork_guard();
        // Leaked: the helpers live as long as the process.
        let new: &'static mut Team = Box::leak(Box::new(Team {
            helpers: Vec::new(),
            busy: AtomicBool::new(false),
            current: AtomicPtr::new(std::ptr::null_mut()),
            generation: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
        }));
        let wanted = rayon::current_num_threads().saturating_sub(1);
        let mut helpers = Vec::with_capacity(wanted);
        for i in 0..wanted {
            let spawned = std::thread::Builder::new()
                .name(format!("ferroflow team {}", i + 1))
                // The helper waits in `team()` until this initialisation ends.
                .spawn(move || helper_loop(team(), i + 1));
            match spawned {
                Ok(h) => helpers.push(h.thread().clone()),
                // Fewer helpers only means less parallelism.
                Err(_) => break,
            }
        }
        new.helpers = helpers;
        new
    })
}

impl Team {
    /// Publishes a job, works on it, and waits until every task finished and
    /// no helper still looks at it. The caller holds `busy`.
    fn lead(&self, tasks: usize, sweep: Sweep, f: &(dyn Fn(usize) + Sync)) {
        let parts = self.helpers.len() + 1;
        let job = Job {
            f,
            shares: (0..parts)
                .map(|p| Share::new(p * tasks / parts, (p + 1) * tasks / parts))
                .collect(),
            sweep,
            finished: AtomicUsize::new(0),
            flush: crate::denormal::flushing(),
            panic: Mutex::new(None),
        };
        let ptr = &job as *const Job<'_> as *mut Job<'static>;
        self.current.store(ptr, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            for h in &self.helpers {
                h.unpark();
            }
        }
        job.work(0);
        let mut spins = 0u32;
        while job.finished.load(Ordering::Acquire) < tasks {
            backoff(&mut spins);
        }
        self.current.store(std::ptr::null_mut(), Ordering::SeqCst);
        while self.active.load(Ordering::SeqCst) != 0 {
            backoff(&mut spins);
        }
        let panic = job.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(p) = panic {
            resume_unwind(p);
        }
    }
}

/// Spins politely, yielding the core now and then so a descheduled thread
/// being waited for can run.
fn backoff(spins: &mut u32) {
    *spins = spins.wrapping_add(1);
    if (*spins).is_multiple_of(256) {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

/// Helper `me` (its share's index in every job).
fn helper_loop(team: &'static Team, me: usize) {
    let mut seen = 0usize;
    loop {
        seen = wait_for_job(team, seen);
        team.active.fetch_add(1, Ordering::SeqCst);
        let ptr = team.current.load(Ordering::SeqCst);
        if !ptr.is_null() {
            // SAFETY: the job stays alive while `active` counts this helper:
            // its caller clears `current` and then waits for `active` to drop
            // to zero before returning (both sides use SeqCst, so either this
            // load saw null or the caller sees this helper as active).
            let job = unsafe { &*ptr };
            if job.flush != crate::denormal::flushing() {
                crate::denormal::set_flushing(job.flush);
            }
            job.work(me);
        }
        team.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Polls for a generation other than `seen` for the spin window, then parks
/// until a caller wakes the helper; returns the new generation.
fn wait_for_job(team: &Team, seen: usize) -> usize {
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    loop {
        let g = team.generation.load(Ordering::Acquire);
        if g != seen {
            return g;
        }
        spins = spins.wrapping_add(1);
        if !spins.is_multiple_of(1024) {
            std::hint::spin_loop();
            continue;
        }
        let start = *since.get_or_insert_with(Instant::now);
        if start.elapsed() < spin_window() {
            std::thread::yield_now();
            continue;
        }
        team.sleepers.fetch_add(1, Ordering::SeqCst);
        if team.generation.load(Ordering::SeqCst) == seen {
            std::thread::park();
        }
        team.sleepers.fetch_sub(1, Ordering::SeqCst);
        since = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_task_runs_exactly_once() {
        for tasks in [0usize, 1, 2, 3, 17, 1000] {
            let counts: Vec<AtomicU32> = (0..tasks).map(|_| AtomicU32::new(0)).collect();
            run(tasks, |i| {
                counts[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                counts.iter().all(|c| c.load(Ordering::Relaxed) == 1),
                "{tasks} tasks"
            );
        }
    }

    #[test]
    fn every_task_runs_exactly_once_in_either_sweep() {
        for sweep in [Sweep::Forward, Sweep::Backward] {
            for tasks in [2usize, 5, 64, 999] {
                let mut counts = vec![0u32; tasks];
                for_each_mut_sweep(&mut counts, sweep, |i, c| *c += 1 + i as u32);
                assert!(
                    counts.iter().enumerate().all(|(i, &c)| c == 1 + i as u32),
                    "{tasks} tasks {sweep:?}"
                );
            }
        }
    }

    #[test]
    fn a_share_is_claimed_from_both_ends() {
        let share = Share::new(3, 7);
        assert_eq!(share.take(true), Some(3));
        assert_eq!(share.take(false), Some(6));
        assert_eq!(share.take(false), Some(5));
        assert_eq!(share.take(true), Some(4));
        assert_eq!(share.take(true), None);
        assert_eq!(share.take(false), None);
        assert_eq!(Share::new(2, 2).take(true), None);
    }

    #[test]
    fn chunks_cover_the_slice_in_order() {
        let mut v = vec![0usize; 10_001];
        for_each_chunk_mut(&mut v, 1000, |i, c| {
            for (k, x) in c.iter_mut().enumerate() {
                *x = i * 1000 + k;
            }
        });
        assert!(v.iter().enumerate().all(|(i, &x)| i == x));
        let sums = map_chunks(&v, 4096, |_, c| c.iter().sum::<usize>());
        assert_eq!(sums.len(), 3);
        assert_eq!(sums.iter().sum::<usize>(), (0..10_001).sum::<usize>());
        assert_eq!(sums[0], (0..4096).sum::<usize>());
    }

    #[test]
    fn nested_and_concurrent_jobs_complete() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..200 {
                        run(4, |_| {
                            run(3, |_| {
                                total.fetch_add(1, Ordering::Relaxed);
                            });
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 200 * 4 * 3);
    }

    #[test]
    fn jobs_after_the_helpers_parked_still_run() {
        for _ in 0..3 {
            std::thread::sleep(spin_window() * 3 + Duration::from_millis(2));
            let sum = AtomicUsize::new(0);
            run(64, |i| {
                sum.fetch_add(i, Ordering::Relaxed);
            });
            assert_eq!(sum.load(Ordering::Relaxed), 64 * 63 / 2);
        }
    }

    #[test]
    fn a_panicking_task_reaches_the_caller() {
        let ran = AtomicUsize::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            run(50, |i| {
                ran.fetch_add(1, Ordering::Relaxed);
                if i == 7 {
                    panic!("task seven");
                }
            })
        }));
        let msg = caught.expect_err("the panic is re-raised");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"task seven"));
        // On the team every other task still runs; a job that fell back to
        // rayon (tests run concurrently) may skip some.
        assert!((1..=50).contains(&ran.load(Ordering::Relaxed)));
        // The team is usable afterwards.
        let n = AtomicUsize::new(0);
        run(10, |_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 10);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn helpers_follow_the_callers_denormal_setting() {
        // Tests run concurrently, so a job may have fallen back to rayon's
        // workers (which only flush once a session set them): those tasks are
        // not judged.
        let seen: Vec<AtomicU32> = (0..64).map(|_| AtomicU32::new(0)).collect();
        let check = |want: bool| {
            run(64, |i| {
                // Long enough tasks that helpers take some of them.
                std::thread::sleep(Duration::from_micros(50));
                let verdict = if rayon::current_thread_index().is_some() {
                    1
                } else if crate::denormal::flushing() == want {
                    2
                } else {
                    3
                };
                seen[i].store(verdict, Ordering::Relaxed);
            });
            assert!(
                seen.iter().all(|s| s.load(Ordering::Relaxed) != 3),
                "flushing = {want}"
            );
        };
        check(crate::denormal::flushing());
        {
            let _flush = crate::denormal::FlushDenormals::new();
            check(true);
        }
        check(crate::denormal::flushing());
    }
}
