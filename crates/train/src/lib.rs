//! ferroflow's optimizer updates.
//!
//! Every TensorFlow 1 optimizer's update is one fused pass over memory
//! (read variable, slots and gradient once; write each once), written once
//! generically ([`rules`]) and compiled for baseline x86-64, AVX2 and
//! AVX-512 with the widest chosen at run time ([`dispatch`]). A step's dense
//! updates for all variables run as one op whose work is cut into chunks
//! pooled across variables, so many small variables still use every core.
//! Results are identical for any thread count and instruction set.
//!
//! TensorFlow's own update ops (`ApplyAdam`, ...) run the same rules
//! (`tf_apply`), and GraphDefs for TensorFlow write the fused updates as
//! those ops (`tf_form`).

#[cfg(target_arch = "x86_64")]
mod avx512;
pub mod dispatch;
mod ops;
pub mod real;
pub mod rules;
mod tf_apply;
mod tf_form;

pub use tf_apply::{tf_update_ops, TfUpdateOp};

use std::sync::Once;

/// Registers the update ops (ferroflow's fused ones and TensorFlow's
/// per-variable ones) and their kernels (idempotent).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        ferroflow_runtime::register_ops(ops::op_defs(), ops::kernels());
        ferroflow_runtime::register_ops(tf_apply::op_defs(), tf_apply::kernels());
        tf_form::register();
    });
}
