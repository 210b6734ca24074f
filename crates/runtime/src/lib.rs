//! ferroflow's executor.
//!
//! A [`Session`] compiles each distinct (feeds, fetches, targets) signature
//! into a [`Plan`] once — pruning the graph, building one kernel per node
//! and assigning value slots — and then runs it with no further graph
//! lookups. Variables live in the session and are updated in place.
//! Kernels are looked up by op type in an open registry
//! ([`register_kernel`]).

pub mod blocking;
pub mod check_numerics;
pub mod kernel;
mod kernels;
pub mod mixed_precision;
mod plan;
mod resources;
mod session;
mod trace;

pub use kernel::{
    factory, register_kernel, register_ops, Kernel, KernelFactory, KernelInit, OpContext, Resource,
    TensorList, Value,
};
pub use plan::{control_satisfied_by_feed, execution_order, Plan};
pub use resources::{SessionState, Variable};
pub use session::{Session, SessionOptions};
pub use trace::{thread_id, NodeTiming, StepTrace, CPU_DEVICE};
