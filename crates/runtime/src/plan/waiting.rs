//! Plans whose steps may wait for each other's effects.
//!
//! TensorFlow runs the ops of one step concurrently, so a run may hold both
//! a dequeue and the enqueue that feeds it (`sess.run([q.dequeue(),
//! q.enqueue(x)])`), or several accumulators' `take_grad`s each waiting for
//! other workers. A serial executor that entered the dequeue first would
//! wait forever. Two measures keep such runs going without paying for
//! threads in the common case:
//!
//! * [`blocking_last`]: a plan that holds a waiting step runs every step that
//!   does not depend on it first, so a close or an assign the wait depends on
//!   has happened by then. With one waiting step (a training step's
//!   `dequeue_many`, a queue runner's read-and-enqueue chain) that is all it
//!   takes.
//! * [`run_together`]: when two waiting steps do not depend on each other,
//!   each runs on a thread of its own while the caller runs the other steps
//!   as their inputs arrive. A failing step abandons the run: waiting steps
//!   then give up with `CancelledError` (TensorFlow cancels the step's other
//!   ops the same way) and the first error is reported.

use super::{gather, guarded, pass_through, run_kernel, Board, Flow, Plan, Step};
use crate::blocking::{
    announce_wait, with_abandon_flag, with_wait_observer, RunContext, WaitObserver,
};
use crate::kernel::Value;
use crate::kernels::control_flow::{replay, replaying};
use crate::resources::SessionState;
use ferroflow_tensor::{Error, Result};
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Reorders `steps` (and their `controls`, given as step indices) into a
/// topological order that leaves each step that may block for as late as
/// the steps depending on it allow; otherwise the order is kept.
pub(super) fn blocking_last(
    steps: Vec<Step>,
    controls: Vec<SmallVec<[u32; 4]>>,
    num_feeds: usize,
    num_slots: usize,
) -> (Vec<Step>, Vec<SmallVec<[u32; 4]>>) {
    let flow = Flow::of(&steps, &controls, num_feeds, num_slots);
    let mut waits = flow.waits.clone();
    let mut calm: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
    let mut waiting: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
    let push = |s: u32, calm: &mut BinaryHeap<_>, waiting: &mut BinaryHeap<_>| {
        if steps[s as usize].kernel.may_block() {
            waiting.push(Reverse(s));
        } else {
            calm.push(Reverse(s));
        }
    };
    for s in 0..steps.len() as u32 {
        if waits[s as usize] == 0 {
            push(s, &mut calm, &mut waiting);
        }
    }
    let mut order = Vec::with_capacity(steps.len());
    while let Some(Reverse(s)) = calm.pop().or_else(|| waiting.pop()) {
        order.push(s);
        for &r in &flow.readers[s as usize] {
            waits[r as usize] -= 1;
            if waits[r as usize] == 0 {
                push(r, &mut calm, &mut waiting);
            }
        }
    }
    if order.len() != steps.len() {
        // Not a DAG (cannot happen for a compiled plan): keep the order.
        return (steps, controls);
    }
    let mut new_index = vec![0u32; steps.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old as usize] = new as u32;
    }
    let mut steps: Vec<Option<Step>> = steps.into_iter().map(Some).collect();
    let mut controls: Vec<Option<SmallVec<[u32; 4]>>> = controls.into_iter().map(Some).collect();
    order
        .iter()
        .map(|&old| {
            let step = steps[old as usize].take().expect("each step once");
            let ctl = controls[old as usize]
                .take()
                .expect("each step once")
                .into_iter()
                .map(|c| new_index[c as usize])
                .collect();
            (step, ctl)
        })
        .unzip()
}

/// Whether two steps that may block are independent of each other (neither
/// waits, directly or not, for the other): such a plan must run them at the
/// same time.
pub(super) fn independent_waits(steps: &[Step], flow: &Flow) -> bool {
    let waiting: Vec<usize> = (0..steps.len())
        .filter(|&s| steps[s].kernel.may_block())
        .collect();
    if waiting.len() < 2 {
        return false;
    }
    // Which waiting steps each waiting step reaches (at most 64 tracked;
    // more than that many waiting steps run together regardless).
    if waiting.len() > 64 {
        return true;
    }
    let mut bit_of = vec![0u64; steps.len()];
    for (i, &s) in waiting.iter().enumerate() {
        bit_of[s] = 1 << i;
    }
    // In a topological order (the plan's), what each step reaches is its
    // own bit and everything its readers reach: fill from the back.
    let mut reaches = bit_of.clone();
    for s in (0..steps.len()).rev() {
        let below = flow.readers[s]
            .iter()
            .fold(0u64, |acc, &r| acc | reaches[r as usize]);
        reaches[s] |= below;
    }
    let all = if waiting.len() == 64 {
        u64::MAX
    } else {
        (1u64 << waiting.len()) - 1
    };
    // Two waiting steps are ordered when one reaches the other; the plan
    // runs serially only if every pair is ordered.
    waiting.iter().enumerate().any(|(i, &s)| {
        let ordered_with = waiting
            .iter()
            .enumerate()
            .filter(|&(_, &t)| reaches[t] & (1 << i) != 0)
            .fold(reaches[s], |acc, (j, _)| acc | (1 << j));
        ordered_with & all != all
    })
}

/// Runs the steps of `plan` on the calling thread, and on more threads only
/// while a step waits: whenever every thread of the run is waiting and
/// steps are ready, another thread joins to run them. (A run whose waits are
/// all satisfied uses no thread but its caller's.) The feeds are in `slots`
/// already; the fetched values are left there.
pub(super) fn run_together(
    plan: &Plan,
    session: &SessionState,
    slots: &mut [Option<Value>],
    remaining: &mut [u32],
) -> Result<()> {
    let steps = &plan.steps;
    let board = parking_lot::Mutex::new(Board {
        slots,
        remaining,
        waits: plan.flow.waits.clone(),
        ready: (0..steps.len() as u32)
            .filter(|&i| plan.flow.waits[i as usize] == 0)
            .collect(),
        unfinished: steps.len(),
        side_workers: 1,
        error: None,
    });
    let abandoned = Arc::new(AtomicBool::new(false));
    let run = WaitingRun {
        plan,
        session,
        board: &board,
        wake: parking_lot::Condvar::new(),
        abandoned: abandoned.clone(),
        context: RunContext::current(),
        replaying: replaying(),
    };
    std::thread::scope(|scope| {
        with_abandon_flag(abandoned.clone(), || run.take_part(scope, true));
        // The threads still waiting give up; the scope joins them.
        abandoned.store(true, Ordering::Release);
    });
    match board.into_inner().error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// What the threads of one [`run_together`] share. The board's
/// `side_workers` counts the threads of the run not waiting.
struct WaitingRun<'p, 'r> {
    plan: &'p Plan,
    session: &'p SessionState,
    board: &'p parking_lot::Mutex<Board<'r>>,
    /// Wakes the caller, idle until a step finishes.
    wake: parking_lot::Condvar,
    /// Set when a step failed: the steps still waiting give up.
    abandoned: Arc<AtomicBool>,
    /// The caller's deadline and abandon flags, for the threads that join.
    context: RunContext,
    replaying: bool,
}

/// A thread of a [`WaitingRun`], told when it waits.
struct Participant<'a, 'p, 'r, 's, 'e> {
    run: &'a WaitingRun<'p, 'r>,
    scope: &'s std::thread::Scope<'s, 'e>,
}

impl<'p, 'r> WaitingRun<'p, 'r> {
    /// Runs ready steps until none is left to this thread: the caller stays
    /// until the run ends, a joining thread leaves when nothing is ready.
    fn take_part<'s, 'e>(&'s self, scope: &'s std::thread::Scope<'s, 'e>, caller: bool)
    where
        'p: 's,
        'r: 's,
    {
        let me = Participant { run: self, scope };
        with_wait_observer(&me, || self.work(caller));
    }

    fn work(&self, caller: bool) {
        let steps = &self.plan.steps;
        let mut b = self.board.lock();
        loop {
            if b.error.is_some() || b.unfinished == 0 {
                break;
            }
            let Some(s) = b.pick(steps, None) else {
                if !caller {
                    break;
                }
                // Idle until another thread finishes a step: to the runs
                // around this one, this thread waits.
                b.side_workers -= 1;
                let notice = announce_wait(true);
                self.wake.wait(&mut b);
                drop(notice);
                b.side_workers += 1;
                continue;
            };
            let step = &steps[s];
            let now = &mut *b;
            let result = match pass_through(step, now.slots, now.remaining) {
                Ok(true) => Ok(None),
                Err(e) => Err(e),
                Ok(false) => match gather(step, now.slots, now.remaining) {
                    Err(e) => Err(e),
                    Ok((inputs, wanted)) => parking_lot::MutexGuard::unlocked(&mut b, || {
                        guarded(step, || run_kernel(step, inputs, wanted, self.session)).map(Some)
                    }),
                },
            };
            b.finish(self.plan, s, result);
            if b.error.is_some() {
                self.abandoned.store(true, Ordering::Release);
            }
            self.wake.notify_all();
        }
        if !caller {
            b.side_workers -= 1;
            drop(b);
            self.wake.notify_all();
        }
    }
}

impl<'a, 'p, 'r, 's, 'e> WaitObserver for Participant<'a, 'p, 'r, 's, 'e>
where
    'a: 's,
    'p: 's,
    'r: 's,
{
    fn waiting(&self) {
        let run = self.run;
        let mut b = run.board.lock();
        b.side_workers -= 1;
        if b.side_workers > 0 || b.ready.is_empty() || b.error.is_some() {
            return;
        }
        // Every thread of the run waits and steps are ready: one more joins.
        b.side_workers += 1;
        let scope = self.scope;
        let context = run.context.clone();
        let (abandoned, replaying_then) = (run.abandoned.clone(), run.replaying);
        let joined = std::thread::Builder::new()
            .name("ferroflow-run".into())
            .spawn_scoped(scope, move || {
                replay(replaying_then, || {
                    context.enter(|| with_abandon_flag(abandoned, || run.take_part(scope, false)))
                })
            });
        if let Err(e) = joined {
            b.side_workers -= 1;
            b.error.get_or_insert(Error::resource_exhausted(format!(
                "cannot start a thread to carry on a run while a step waits: {e}"
            )));
            run.abandoned.store(true, Ordering::Release);
        }
    }

    fn resumed(&self) {
        self.run.board.lock().side_workers += 1;
    }
}
