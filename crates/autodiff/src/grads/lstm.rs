//! Gradients of the fused LSTM ops, as TensorFlow registers them
//! (`rnn_grad.py`): `BlockLSTM` -> `BlockLSTMGrad`, `BlockLSTMV2` ->
//! `BlockLSTMGradV2`, fed the forward op's inputs and outputs and the
//! gradients arriving at `cs` and `h` (those at `i, f, o, ci, co` are
//! ignored, as there). `seq_len_max` gets none.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::Result;

fn block_lstm(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> Result<Vec<Option<Grad>>> {
    let mut grad_of = |i: usize| -> Result<Output> {
        match g.get(i).copied().flatten() {
            Some(o) => Ok(o),
            None => b.zeros_like(Output::new(n.id, i)),
        }
    };
    let cs_grad = grad_of(1)?;
    let h_grad = grad_of(6)?;
    let mut inputs: Vec<Output> = n.inputs[..9].to_vec();
    inputs.extend((0..7).map(|i| Output::new(n.id, i)));
    inputs.push(cs_grad);
    inputs.push(h_grad);
    let op = if n.op == "BlockLSTMV2" {
        "BlockLSTMGradV2"
    } else {
        "BlockLSTMGrad"
    };
    // TensorFlow's gradient ops require the attr (no default).
    let peephole = n.attrs.bool_or("use_peephole", false)?;
    let attrs: Vec<(&'static str, AttrValue)> = vec![("use_peephole", AttrValue::Bool(peephole))];
    let id = b.node(op, &inputs, attrs)?;
    let mut out = vec![None];
    out.extend((0..8).map(|i| d(Output::new(id, i))));
    Ok(out)
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("BlockLSTM", GradEntry::Func(block_lstm));
    reg("BlockLSTMV2", GradEntry::Func(block_lstm));
}
