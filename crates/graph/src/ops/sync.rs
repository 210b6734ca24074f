//! Ops that order work across concurrent runs: TensorFlow's mutex
//! (`MutexV2`, `MutexLock`, `ConsumeMutexLock`, behind
//! `tf.CriticalSection`), and `CheckPinned`, which asks where a tensor's
//! memory lives.

use super::{single, InferContext, OpDef};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

/// A handle to the session's mutex named by `container`/`shared_name`.
fn mutex(_: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::Resource, PartialShape::scalar())
}

/// The held lock, an opaque scalar released when its last reader drops it.
fn lock(_: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::Variant, PartialShape::scalar())
}

fn consume(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

fn same_as_input(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(0), ctx.shape(0).clone())
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("MutexV2", &[], mutex).stateful(),
        OpDef::new("MutexLock", &["mutex"], lock).stateful(),
        OpDef::new("ConsumeMutexLock", &["mutex_lock"], consume).stateful(),
        // Stateful so that it is never folded away: its answer is the error.
        OpDef::new("CheckPinned", &["tensor"], same_as_input).stateful(),
    ]
}
