//! Kernels that wait: a dequeue for data, an enqueue for room, an iterator
//! for its prefetching thread.
//!
//! Four rules keep waiting safe:
//! * A plan holding a kernel that [may block](crate::Kernel::may_block) runs
//!   on its caller's thread, never on a session pool's worker, so however
//!   many runs wait at once they cannot starve the runs that would wake
//!   them (a pool of N workers would deadlock at N waiting dequeues).
//! * A resource that can be waited on registers itself with the session
//!   ([`SessionState::register_cancellable`](crate::SessionState::register_cancellable));
//!   `Session::close` calls [`Cancellable::cancel`] on each, which wakes
//!   every waiter with TensorFlow's `CancelledError`.
//! * A run may carry a deadline (`RunOptions.timeout_in_ms`), which waiting
//!   kernels honour through [`wait_while`]: the run fails with
//!   `DeadlineExceededError` when it passes.
//! * Within one run, a waiting step never holds up the steps that could wake
//!   it: the executor runs it after the steps that do not depend on it, and
//!   when two waiting steps are independent, every wait is announced
//!   ([`WaitObserver`]) so that another thread carries on with the run's
//!   ready steps meanwhile (`plan/waiting.rs`).

use ferroflow_tensor::{bail, Error, Result};
use parking_lot::{Condvar, MutexGuard};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A resource whose waiters must be woken when its session closes.
pub trait Cancellable: Send + Sync {
    /// Wakes every waiter with `CancelledError`; later waits fail at once.
    fn cancel(&self);
}

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The "abandoned" flags of the runs this thread works for (a cluster
    /// task's client, the executor's run that failed): any one set ends a wait.
    static ABANDONED: RefCell<Vec<Arc<AtomicBool>>> = const { RefCell::new(Vec::new()) };
    /// The executors this thread runs steps for, innermost last (see
    /// [`with_wait_observer`]).
    static OBSERVERS: RefCell<Vec<*const (dyn WaitObserver + 'static)>> =
        const { RefCell::new(Vec::new()) };
}

/// Told when the thread it is installed on starts and stops waiting, so the
/// executor whose steps the thread runs can carry on with another thread
/// meanwhile.
pub trait WaitObserver: Sync {
    /// The thread is about to wait.
    fn waiting(&self);
    /// The thread stopped waiting.
    fn resumed(&self);
}

/// Runs `f` with `observer` told of every wait on this thread (inside the
/// observers already installed, which are told too).
pub fn with_wait_observer<R>(observer: &dyn WaitObserver, f: impl FnOnce() -> R) -> R {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            OBSERVERS.with(|o| o.borrow_mut().pop());
        }
    }
    let short: *const (dyn WaitObserver + '_) = observer;
    // SAFETY: only the lifetime bound changes. The pointer leaves the stack
    // when `Pop` drops, before the borrow of `observer` ends, and only this
    // thread reads the stack.
    let long: *const (dyn WaitObserver + 'static) = unsafe { std::mem::transmute(short) };
    OBSERVERS.with(|o| o.borrow_mut().push(long));
    let _pop = Pop;
    f()
}

/// The observers of this thread were told it waits; dropping this tells
/// them it stopped.
pub struct WaitNotice(Vec<*const (dyn WaitObserver + 'static)>);

/// Tells the observers installed on this thread that it waits, until the
/// returned notice is dropped. `outer_only` leaves out the innermost (an
/// executor idling on its own run tells only the runs around it).
pub fn announce_wait(outer_only: bool) -> WaitNotice {
    let mut observers = OBSERVERS.with(|o| o.borrow().clone());
    if outer_only {
        observers.pop();
    }
    for &o in observers.iter().rev() {
        // SAFETY: installed by `with_wait_observer`, whose scope encloses
        // this call (the notice cannot leave the thread or outlive it: it is
        // dropped inside the same wait).
        unsafe { (*o).waiting() };
    }
    WaitNotice(observers)
}

impl Drop for WaitNotice {
    fn drop(&mut self) {
        for &o in &self.0 {
            // SAFETY: as in `announce_wait`.
            unsafe { (*o).resumed() };
        }
    }
}

/// Runs `f` with `flag` as one more "abandoned" flag of the current run on
/// this thread: once it turns true, waiting kernels give up with
/// `CancelledError` (a cluster task sets it when the client that asked for
/// the run goes away, so a dead worker's dequeue takes no token; the
/// executor sets it when another step of the same run failed).
pub fn with_abandon_flag<R>(flag: Arc<AtomicBool>, f: impl FnOnce() -> R) -> R {
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            ABANDONED.with(|a| a.borrow_mut().pop());
        }
    }
    ABANDONED.with(|a| a.borrow_mut().push(flag));
    let _restore = Restore;
    f()
}

/// What a waiting kernel reads from its thread: the run's deadline and its
/// abandon flags. The executor carries them to the threads it runs a run's
/// waiting steps on.
#[derive(Clone, Default)]
pub struct RunContext {
    deadline: Option<Instant>,
    abandoned: Vec<Arc<AtomicBool>>,
}

impl RunContext {
    /// The context of the run executing on this thread.
    pub fn current() -> RunContext {
        RunContext {
            deadline: current_deadline(),
            abandoned: ABANDONED.with(|a| a.borrow().clone()),
        }
    }

    /// Runs `f` on this thread inside this context (restored afterwards).
    pub fn enter<R>(self, f: impl FnOnce() -> R) -> R {
        struct Restore(Vec<Arc<AtomicBool>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                ABANDONED.with(|a| *a.borrow_mut() = std::mem::take(&mut self.0));
            }
        }
        let _restore = Restore(ABANDONED.with(|a| a.replace(self.abandoned)));
        with_deadline(self.deadline, f)
    }
}

/// How often a waiter with an abandon flag looks at it.
const ABANDON_POLL: Duration = Duration::from_millis(25);

/// Runs `f` with `deadline` as the current run's deadline on this thread.
pub fn with_deadline<R>(deadline: Option<Instant>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DEADLINE.with(|d| d.replace(deadline)));
    f()
}

/// The deadline of the run executing on this thread, if it has one.
pub fn current_deadline() -> Option<Instant> {
    DEADLINE.with(|d| d.get())
}

/// The error a run gets when its deadline passes.
pub fn deadline_exceeded(what: &str) -> Error {
    Error::deadline_exceeded(format!("Timed out waiting for {what}"))
}

/// Waits on `cv` while `blocked(state)` holds, up to the current run's
/// deadline. The caller's predicate must also stop blocking once the
/// resource is cancelled or closed (and then report why). `what` names what
/// is awaited in the timeout message.
pub fn wait_while<T>(
    cv: &Condvar,
    guard: &mut MutexGuard<'_, T>,
    what: &str,
    mut blocked: impl FnMut(&mut T) -> bool,
) -> Result<()> {
    let deadline = current_deadline();
    let abandoned = ABANDONED.with(|a| a.borrow().clone());
    let mut notice = None;
    while blocked(guard) {
        if notice.is_none() {
            notice = Some(announce_wait(false));
        }
        if !abandoned.is_empty() {
            if abandoned.iter().any(|f| f.load(Ordering::Acquire)) {
                bail!(cancelled, "the run waiting for {what} was abandoned");
            }
            let poll = Instant::now() + ABANDON_POLL;
            let until = deadline.map_or(poll, |d| d.min(poll));
            if cv.wait_until(guard, until).timed_out()
                && deadline.is_some_and(|d| Instant::now() >= d)
                && blocked(guard)
            {
                return Err(deadline_exceeded(what));
            }
            continue;
        }
        match deadline {
            Some(d) => {
                if cv.wait_until(guard, d).timed_out() && blocked(guard) {
                    return Err(deadline_exceeded(what));
                }
            }
            None => cv.wait(guard),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;
    use std::time::Duration;

    #[test]
    fn wait_ends_at_the_run_deadline() {
        let m = Mutex::new(0);
        let cv = Condvar::new();
        let start = Instant::now();
        let deadline = Some(start + Duration::from_millis(30));
        let err = with_deadline(deadline, || {
            let mut g = m.lock();
            wait_while(&cv, &mut g, "data", |v| *v == 0)
        })
        .unwrap_err();
        assert_eq!(err.code(), Some(ferroflow_tensor::Code::DeadlineExceeded));
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert_eq!(current_deadline(), None, "the deadline is the run's only");
    }

    #[test]
    fn observers_hear_of_a_wait_once_and_only_while_installed() {
        use std::sync::atomic::AtomicUsize;
        #[derive(Default)]
        struct Count {
            waits: AtomicUsize,
            resumes: AtomicUsize,
            name: &'static str,
        }
        impl WaitObserver for Count {
            fn waiting(&self) {
                self.waits.fetch_add(1, Ordering::SeqCst);
            }
            fn resumed(&self) {
                self.resumes.fetch_add(1, Ordering::SeqCst);
            }
        }
        let outer = Count {
            name: "outer",
            ..Default::default()
        };
        let inner = Count {
            name: "inner",
            ..Default::default()
        };
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let s2 = state.clone();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            *s2.0.lock() = true;
            s2.1.notify_all();
        });
        with_wait_observer(&outer, || {
            with_wait_observer(&inner, || {
                let mut g = state.0.lock();
                // Several wake-ups (the abandon poll) make one notice.
                with_abandon_flag(Arc::new(AtomicBool::new(false)), || {
                    wait_while(&state.1, &mut g, "data", |ready| !*ready).unwrap()
                });
                // A wait that does not block tells nobody.
                wait_while(&state.1, &mut g, "data", |ready| !*ready).unwrap();
            });
            let _idle = announce_wait(true); // the innermost (outer here) is left out
        });
        waker.join().unwrap();
        for c in [&outer, &inner] {
            assert_eq!(c.waits.load(Ordering::SeqCst), 1, "{}", c.name);
            assert_eq!(c.resumes.load(Ordering::SeqCst), 1, "{}", c.name);
        }
        drop(announce_wait(false)); // none installed any more
        assert_eq!(outer.waits.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn wait_returns_once_woken() {
        let state = std::sync::Arc::new((Mutex::new(false), Condvar::new()));
        let s2 = state.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            *s2.0.lock() = true;
            s2.1.notify_all();
        });
        let mut g = state.0.lock();
        wait_while(&state.1, &mut g, "data", |ready| !*ready).unwrap();
        drop(g);
        t.join().unwrap();
    }

    #[test]
    fn an_abandoned_wait_is_cancelled_and_the_deadline_still_holds() {
        let m = Mutex::new(0);
        let cv = Condvar::new();
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(40));
                flag.store(true, Ordering::Release);
            })
        };
        let start = Instant::now();
        let err = with_abandon_flag(flag, || {
            let mut g = m.lock();
            wait_while(&cv, &mut g, "a token", |v| *v == 0)
        })
        .unwrap_err();
        setter.join().unwrap();
        assert_eq!(err.code(), Some(ferroflow_tensor::Code::Cancelled));
        assert!(err.message().contains("a token"), "{err}");
        assert!(start.elapsed() >= Duration::from_millis(40));
        // With a flag that never turns, the run's deadline still ends the wait.
        let err = with_abandon_flag(Arc::new(AtomicBool::new(false)), || {
            with_deadline(Some(Instant::now() + Duration::from_millis(30)), || {
                let mut g = m.lock();
                wait_while(&cv, &mut g, "data", |v| *v == 0)
            })
        })
        .unwrap_err();
        assert_eq!(err.code(), Some(ferroflow_tensor::Code::DeadlineExceeded));
    }
}
