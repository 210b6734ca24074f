//! Kernels of the mutex behind `tf.CriticalSection` (`MutexV2`,
//! `MutexLock`, `ConsumeMutexLock`) and of `CheckPinned`.
//!
//! A mutex is a session resource. `MutexLock` waits until the mutex is free
//! and outputs the held lock as an opaque value; the lock is released when
//! that value is dropped: by `ConsumeMutexLock` (its only reader, which
//! takes it), or when the run ends or fails, whichever comes first. Waiting
//! honours the run's deadline and `Session.close` (see [`crate::blocking`]).

use super::boxed;
use crate::blocking::{wait_while, Cancellable};
use crate::kernel::{factory, Kernel, KernelFactory, OpContext, Value};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::{bail, Result};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::ThreadId;

/// One session's mutex.
pub struct RunMutex {
    name: String,
    state: Mutex<MutexState>,
    cv: Condvar,
    registered: AtomicBool,
}

#[derive(Default)]
struct MutexState {
    /// The thread whose run holds the lock.
    holder: Option<ThreadId>,
    cancelled: bool,
}

impl RunMutex {
    fn new(name: String) -> RunMutex {
        RunMutex {
            name,
            state: Mutex::new(MutexState::default()),
            cv: Condvar::new(),
            registered: AtomicBool::new(false),
        }
    }

    fn acquire(self: &Arc<Self>, node: &str) -> Result<HeldLock> {
        let me = std::thread::current().id();
        let mut st = self.state.lock();
        if st.holder == Some(me) {
            // A run executes on one thread: waiting here would wait forever.
            bail!(
                invalid_argument,
                "{node}: the mutex {} is already held by this run (a critical section \
                 executed inside itself would deadlock)",
                self.name
            );
        }
        let what = format!("the mutex {}", self.name);
        wait_while(&self.cv, &mut st, &what, |s| {
            s.holder.is_some() && !s.cancelled
        })?;
        if st.cancelled {
            bail!(
                cancelled,
                "{node}: the session was closed while waiting for the mutex {}",
                self.name
            );
        }
        st.holder = Some(me);
        Ok(HeldLock(self.clone()))
    }
}

impl Cancellable for RunMutex {
    fn cancel(&self) {
        self.state.lock().cancelled = true;
        self.cv.notify_all();
    }
}

/// A held lock: dropping it frees the mutex.
pub struct HeldLock(Arc<RunMutex>);

impl Drop for HeldLock {
    fn drop(&mut self) {
        self.0.state.lock().holder = None;
        self.0.cv.notify_one();
    }
}

struct Lock;

impl Kernel for Lock {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let m = ctx.input_resource::<RunMutex>(0)?;
        let held = m.acquire(ctx.node)?;
        ctx.output_resource(Arc::new(held));
        Ok(())
    }

    fn may_block(&self) -> bool {
        true
    }
}

fn create_factory() -> KernelFactory {
    factory(|init| {
        let container = init.node.attrs.str_or("container", "")?;
        let shared_name = init.node.attrs.str_or("shared_name", "")?;
        boxed(move |ctx| {
            let key = if shared_name.is_empty() {
                format!("\u{0}mutex:{}", ctx.node)
            } else {
                shared_name.clone()
            };
            let m = ctx.session.get_or_create_shared(&container, &key, || {
                Ok(RunMutex::new(if shared_name.is_empty() {
                    ctx.node.to_string()
                } else {
                    shared_name.clone()
                }))
            })?;
            if !m.registered.swap(true, Ordering::AcqRel) {
                let weak: Weak<dyn Cancellable> = Arc::downgrade(&m) as Weak<dyn Cancellable>;
                ctx.session.register_cancellable(weak);
            }
            ctx.output_resource(m);
            Ok(())
        })
    })
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg("MutexV2", create_factory());
    reg("MutexLock", factory(|_| Ok(Box::new(Lock))));
    reg(
        "ConsumeMutexLock",
        factory(|_| {
            boxed(|ctx| {
                // Taking the lock out of the run's slots and dropping it here
                // frees the mutex now rather than when the run ends.
                match ctx.take_value(0) {
                    Value::Resource(r) if r.is::<HeldLock>() => Ok(()),
                    _ => bail!(
                        invalid_argument,
                        "{}: input 0 (mutex_lock) is not a lock made by MutexLock",
                        ctx.node
                    ),
                }
            })
        }),
    );
    reg(
        "CheckPinned",
        factory(|_| {
            boxed(|ctx| {
                // Pinned memory is page-locked host memory registered with a
                // GPU driver; ferroflow runs on the CPU, so nothing is pinned
                // (TensorFlow's CPU build answers the same).
                bail!(
                    invalid_argument,
                    "{}: tensor is not pinned (ferroflow allocates no GPU-pinned host memory)",
                    ctx.node
                )
            })
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocking::with_deadline;
    use std::time::{Duration, Instant};

    #[test]
    fn a_lock_excludes_other_threads_until_dropped() {
        let m = Arc::new(RunMutex::new("m".into()));
        let held = m.acquire("lock").unwrap();
        let m2 = m.clone();
        let start = Instant::now();
        let waiter = std::thread::spawn(move || {
            let _h = m2.acquire("lock2").unwrap();
            Instant::now()
        });
        std::thread::sleep(Duration::from_millis(40));
        drop(held);
        let got = waiter.join().unwrap();
        assert!(got.duration_since(start) >= Duration::from_millis(40));
        assert!(
            m.state.lock().holder.is_none(),
            "the waiter's lock was dropped"
        );
    }

    #[test]
    fn relocking_on_the_holding_thread_is_an_error_not_a_hang() {
        let m = Arc::new(RunMutex::new("cs".into()));
        let _held = m.acquire("a").unwrap();
        let e = m.acquire("b").err().unwrap();
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::InvalidArgument));
        assert!(e.message().contains("cs"), "{e}");
    }

    #[test]
    fn waiting_ends_at_the_deadline_and_on_cancel() {
        let m = Arc::new(RunMutex::new("m".into()));
        let _held = m.acquire("a").unwrap();
        let m2 = m.clone();
        let e = std::thread::spawn(move || {
            with_deadline(Some(Instant::now() + Duration::from_millis(20)), || {
                m2.acquire("b").map(|_| ())
            })
        })
        .join()
        .unwrap()
        .unwrap_err();
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::DeadlineExceeded));
        let m3 = m.clone();
        let waiter = std::thread::spawn(move || m3.acquire("c").map(|_| ()));
        std::thread::sleep(Duration::from_millis(20));
        m.cancel();
        let e = waiter.join().unwrap().unwrap_err();
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::Cancelled));
    }
}
