//! Per-node timings of a traced run: TensorFlow's `StepStats`.
//!
//! A run is traced only when the caller asks for it
//! ([`Session::run_plan_traced`](crate::Session::run_plan_traced), from
//! `RunOptions(trace_level=FULL_TRACE)` in Python); an untraced run takes no
//! timestamps at all.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The device every node runs on, as TensorFlow names the local CPU.
pub const CPU_DEVICE: &str = "/job:localhost/replica:0/task:0/device:CPU:0";

/// Timings of one node in one run (TensorFlow's `NodeExecStats`).
///
/// `all_start_nanos` is wall-clock time since the Unix epoch; the other
/// times are relative to it: `op_*` bracket the kernel's computation,
/// `all_end` also covers gathering inputs and storing outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeTiming {
    /// The node's name.
    pub node_name: String,
    /// `name = Op(input, input, ^control)`, TensorFlow's timeline label.
    pub timeline_label: String,
    /// When the executor started on the node (ns since the Unix epoch).
    pub all_start_nanos: i64,
    /// Kernel start, relative to `all_start_nanos`.
    pub op_start_rel_nanos: i64,
    /// Kernel end, relative to `all_start_nanos`.
    pub op_end_rel_nanos: i64,
    /// End of all work on the node, relative to `all_start_nanos`.
    pub all_end_rel_nanos: i64,
    /// A small id of the thread that ran the node (see [`thread_id`]).
    pub thread_id: u32,
}

/// What a traced run recorded (TensorFlow's `DeviceStepStats` for one device).
#[derive(Clone, Debug, Default)]
pub struct StepTrace {
    /// The device name ([`CPU_DEVICE`]).
    pub device: String,
    /// One entry per executed node, in execution order.
    pub nodes: Vec<NodeTiming>,
    /// `(thread_id, thread name)` of every thread that ran a node.
    pub thread_names: Vec<(u32, String)>,
}

impl StepTrace {
    pub(crate) fn new() -> StepTrace {
        StepTrace {
            device: CPU_DEVICE.to_string(),
            nodes: Vec::new(),
            thread_names: Vec::new(),
        }
    }

    pub(crate) fn note_thread(&mut self, id: u32) {
        if !self.thread_names.iter().any(|(t, _)| *t == id) {
            let cur = std::thread::current();
            let name = cur
                .name()
                .map_or_else(|| format!("thread {id}"), str::to_string);
            self.thread_names.push((id, name));
        }
    }
}

/// A clock pairing a wall-clock origin with a monotonic one, so node times
/// are both absolute and precise.
pub(crate) struct TraceClock {
    origin: Instant,
    origin_epoch_nanos: i64,
}

impl TraceClock {
    pub(crate) fn start() -> TraceClock {
        let epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        TraceClock {
            origin: Instant::now(),
            origin_epoch_nanos: epoch,
        }
    }

    /// Nanoseconds since the Unix epoch at `t`.
    pub(crate) fn epoch_nanos(&self, t: Instant) -> i64 {
        let since = t.saturating_duration_since(self.origin).as_nanos();
        self.origin_epoch_nanos
            .saturating_add(i64::try_from(since).unwrap_or(i64::MAX))
    }
}

/// Nanoseconds from `a` to `b` (0 if `b` is earlier).
pub(crate) fn rel_nanos(a: Instant, b: Instant) -> i64 {
    i64::try_from(b.saturating_duration_since(a).as_nanos()).unwrap_or(i64::MAX)
}

static NEXT_THREAD_ID: AtomicU32 = AtomicU32::new(1);

thread_local! {
    static THREAD_ID: u32 = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed);
}

/// A small, stable id for the current thread (1, 2, ... in order of first use).
pub fn thread_id() -> u32 {
    THREAD_ID.with(|t| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ids_are_stable_and_distinct() {
        let here = thread_id();
        assert_eq!(here, thread_id());
        let other = std::thread::spawn(thread_id).join().unwrap();
        assert_ne!(here, other);
    }

    #[test]
    fn clock_is_monotonic_and_absolute() {
        let c = TraceClock::start();
        let a = Instant::now();
        let b = Instant::now();
        assert!(c.epoch_nanos(b) >= c.epoch_nanos(a));
        // After 2020-01-01.
        assert!(c.epoch_nanos(a) > 1_577_836_800_000_000_000);
        assert_eq!(rel_nanos(b, a), 0);
    }
}
