//! Kernels that wait: a dequeue for data, an enqueue for room, an iterator
//! for its prefetching thread.
//!
//! Three rules keep waiting safe:
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
    static ABANDONED: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Runs `f` with `flag` as the current run's "abandoned" flag on this
/// thread: once it turns true, waiting kernels give up with
/// `CancelledError` (a cluster task sets it when the client that asked for
/// the run goes away, so a dead worker's dequeue takes no token).
pub fn with_abandon_flag<R>(flag: Arc<AtomicBool>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ABANDONED.with(|a| *a.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(ABANDONED.with(|a| a.borrow_mut().replace(flag)));
    f()
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
    while blocked(guard) {
        if let Some(flag) = &abandoned {
            if flag.load(Ordering::Acquire) {
                bail!(
                    cancelled,
                    "the client that was waiting for {what} went away"
                );
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
