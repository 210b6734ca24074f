//! The fused LSTM ops over a whole sequence, with TensorFlow's names,
//! inputs, outputs and attrs: `BlockLSTM` and `BlockLSTMV2`
//! (`seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b` -> `i, cs, f, o,
//! ci, co, h`, each `[time, batch, cell]`) and their gradients
//! `BlockLSTMGrad` / `BlockLSTMGradV2` (the same inputs, then the seven
//! forward outputs, `cs_grad` and `h_grad` -> the gradients of `x` through
//! `b`). The math is `ferroflow_tensor::kernels::lstm`.

use super::{InferContext, OpDef};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

/// Float types the ops accept (float16 fails at run time, as unimplemented).
const LSTM_TYPES: &[DType] = &[DType::Float16, DType::Float32];

/// The ranks of the nine common inputs and their type `T`.
fn check_inputs(ctx: &InferContext) -> Result<DType> {
    ctx.expect_dtype(0, &[DType::Int64])?;
    ctx.expect_rank(0, 0)?;
    let t = ctx.expect_dtype(1, LSTM_TYPES)?;
    for (i, rank) in [
        (1, 3),
        (2, 2),
        (3, 2),
        (4, 2),
        (5, 1),
        (6, 1),
        (7, 1),
        (8, 1),
    ] {
        ctx.expect_same(1, i)?;
        ctx.expect_rank(i, rank)?;
    }
    Ok(t)
}

/// Time and batch from `x`, cell size from `b` (a quarter of its length).
fn sequence_shape(ctx: &InferContext) -> Result<PartialShape> {
    let x = ctx.shape(1);
    let cell = match ctx.shape(8).dim(0) {
        Some(n) if n % 4 != 0 => {
            return Err(ctx.shape_error(format!(
                "Dimension size must be evenly divisible by 4 but is {n}"
            )))
        }
        n => n.map(|n| n / 4).or(ctx.shape(2).dim(1)),
    };
    Ok(PartialShape::from_dims(vec![x.dim(0), x.dim(1), cell]))
}

fn block_lstm(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = check_inputs(ctx)?;
    let s = sequence_shape(ctx)?;
    Ok((0..7).map(|_| OutputInfo::new(t, s.clone())).collect())
}

fn block_lstm_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = check_inputs(ctx)?;
    for i in 9..18 {
        ctx.expect_same(1, i)?;
        ctx.expect_rank(i, 3)?;
    }
    let like = |i: usize| OutputInfo::new(t, ctx.shape(i).clone());
    Ok((1..9).map(like).collect())
}

const INPUTS: &[&str] = &[
    "seq_len_max",
    "x",
    "cs_prev",
    "h_prev",
    "w",
    "wci",
    "wcf",
    "wco",
    "b",
];

const GRAD_INPUTS: &[&str] = &[
    "seq_len_max",
    "x",
    "cs_prev",
    "h_prev",
    "w",
    "wci",
    "wcf",
    "wco",
    "b",
    "i",
    "cs",
    "f",
    "o",
    "ci",
    "co",
    "h",
    "cs_grad",
    "h_grad",
];

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("BlockLSTM", INPUTS, block_lstm),
        OpDef::new("BlockLSTMV2", INPUTS, block_lstm),
        OpDef::new("BlockLSTMGrad", GRAD_INPUTS, block_lstm_grad),
        OpDef::new("BlockLSTMGradV2", GRAD_INPUTS, block_lstm_grad),
    ]
}
