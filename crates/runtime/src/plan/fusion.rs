//! Dense layers as one kernel: a plan's `MatMul -> BiasAdd/AddV2 -> Relu`
//! chains (what `tf.layers.dense` builds) run as one product that adds the
//! bias and clamps each output block as soon as it is computed, while the
//! block is still in the cache of the core that computed it (TensorFlow's
//! grappler does the same rewrite into `_FusedMatMul`). On many cores the
//! separate elementwise ops cost 15-40 µs each for a 128x512 batch, mostly
//! moving the product's blocks between cores (RESULTS.md, issue 18).
//!
//! The graph is left alone, so gradients, traces and exported GraphDefs see
//! the original ops: only the plan's steps change. The add and the relu
//! become steps that pass the fused product along, and their values are
//! bit for bit the ones the separate kernels give. Chains whose middle
//! values something else reads (a fetch, another op; a `Shape` of them is
//! fine, the fused value has the same shape), or whose later steps carry
//! control inputs, stay apart. `FERROFLOW_FUSE_DENSE=0` turns the
//! rewrite off.

use super::{InputSlot, Source, Step};
use crate::check_numerics::CHECK_NUMERICS_ATTR;
use crate::kernel::{Kernel, OpContext};
use ferroflow_graph::{AttrsExt, Graph, NodeId, Output};
use ferroflow_tensor::kernels::matmul::{matmul_then, Epilogue};
use ferroflow_tensor::{DType, Result};
use smallvec::smallvec;

/// Whether plans fuse dense layers (`FERROFLOW_FUSE_DENSE`, default on).
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("FERROFLOW_FUSE_DENSE").map_or(true, |v| v.trim() != "0"))
}

/// `relu?(a @ b + bias)` over 2-D float32 operands; inputs `a, b, bias`.
struct FusedDense {
    transpose_a: bool,
    transpose_b: bool,
    relu: bool,
}

impl Kernel for FusedDense {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let bias = ctx.input(2)?.as_slice::<f32>()?;
        let epilogue = Epilogue {
            bias: Some(bias),
            relu: self.relu,
        };
        let y = matmul_then(
            ctx.input(0)?,
            ctx.input(1)?,
            self.transpose_a,
            self.transpose_b,
            epilogue,
        )?;
        ctx.output(y);
        Ok(())
    }
}

/// A step whose work a fused producer did: its one output is its one input.
struct PassAlong;

impl Kernel for PassAlong {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let v = ctx.take_value(0);
        ctx.output_value(v);
        Ok(())
    }

    fn forwards_input(&self) -> bool {
        true
    }
}

/// Ops that read only their input's shape, which the fused value keeps (a
/// gradient's `Shape` of the product, for one).
const SHAPE_READERS: [&str; 4] = ["Shape", "ShapeN", "Size", "Rank"];

/// Who reads each slot's value: the number of readers (fetches count, ops
/// that read only the shape do not), and the first reading step and input.
struct Readers(Vec<(u32, usize, usize)>);

impl Readers {
    fn of(graph: &Graph, steps: &[Step], fetch_slots: &[usize], num_slots: usize) -> Readers {
        let mut r = vec![(0u32, usize::MAX, 0usize); num_slots];
        for (s, step) in steps.iter().enumerate() {
            if SHAPE_READERS.contains(&graph.node(step.node).op.as_str()) {
                continue;
            }
            for (i, inp) in step.inputs.iter().enumerate() {
                if let Source::Slot(slot) = inp.source {
                    if r[slot].0 == 0 {
                        (r[slot].1, r[slot].2) = (s, i);
                    }
                    r[slot].0 += 1;
                }
            }
        }
        for &slot in fetch_slots {
            r[slot].0 += 1;
        }
        Readers(r)
    }

    /// The one step input that reads `slot`, as (step, input index), when
    /// nothing else (another step, a fetch) reads it.
    fn only(&self, slot: usize) -> Option<(usize, usize)> {
        let (count, step, input) = self.0[slot];
        (count == 1 && step != usize::MAX).then_some((step, input))
    }
}

/// Whether a step's node is one of `ops` over float32, with no control
/// inputs and no numeric checks.
fn is_plain(graph: &Graph, node: NodeId, ops: &[&str]) -> bool {
    let n = graph.node(node);
    ops.contains(&n.op.as_str())
        && n.control_inputs.is_empty()
        && n.outputs.len() == 1
        && graph.output(Output::new(node, 0)).dtype == DType::Float32
        && !n.attrs.bool_or(CHECK_NUMERICS_ATTR, false).unwrap_or(true)
}

/// Turns step `s` into one that passes its input `from` along.
fn pass_along(step: &mut Step, from: usize) {
    step.inputs = smallvec![InputSlot {
        source: Source::Slot(from),
        deref: false,
    }];
    step.kernel = Box::new(PassAlong);
    step.forward = true;
    step.needs_mask = false;
    step.fixed = None;
}

/// Rewrites every fusable dense chain of `steps` (see the module doc);
/// returns how many it fused.
pub(super) fn fuse_dense_layers(
    graph: &Graph,
    steps: &mut [Step],
    fetch_slots: &[usize],
    num_slots: usize,
) -> usize {
    if !enabled() {
        return 0;
    }
    let mut fused = 0;
    let readers = Readers::of(graph, steps, fetch_slots, num_slots);
    for a in 0..steps.len() {
        let node = graph.node(steps[a].node);
        if node.op != "MatMul"
            || graph.output(Output::new(steps[a].node, 0)).dtype != DType::Float32
            || node
                .attrs
                .bool_or(CHECK_NUMERICS_ATTR, false)
                .unwrap_or(true)
        {
            continue;
        }
        let product = graph.output(Output::new(steps[a].node, 0));
        let (Some(2), Some(n)) = (product.shape.rank(), product.shape.dim(1)) else {
            continue;
        };
        let a_out = steps[a].out_base;
        let Some((b, at)) = readers.only(a_out) else {
            continue;
        };
        let add = graph.node(steps[b].node);
        if !is_plain(graph, steps[b].node, &["BiasAdd", "AddV2", "Add"])
            || steps[b].inputs.len() != 2
            || (add.op == "BiasAdd" && at != 0)
        {
            continue;
        }
        let bias_at = 1 - at;
        // The fused product runs where the MatMul did: the bias must be
        // known by then (a plan's steps run in order).
        // (Slots are numbered feeds first, then by step: a slot below the
        // MatMul's own is a feed or the output of an earlier step.)
        let bias_ready = match steps[b].inputs[bias_at].source {
            Source::Fixed(_) => true,
            Source::Slot(slot) => slot < a_out,
        };
        if !bias_ready {
            continue;
        }
        let bias = graph.output(add.inputs[bias_at]);
        if bias.dtype != DType::Float32
            || bias.is_ref
            || bias.shape.rank() != Some(1)
            || bias.shape.dim(0) != Some(n)
        {
            continue;
        }
        let b_out = steps[b].out_base;
        let relu = readers
            .only(b_out)
            .filter(|&(c, at)| at == 0 && is_plain(graph, steps[c].node, &["Relu"]));
        let Ok(transpose_a) = node.attrs.bool_or("transpose_a", false) else {
            continue;
        };
        let Ok(transpose_b) = node.attrs.bool_or("transpose_b", false) else {
            continue;
        };
        let bias_input = steps[b].inputs.swap_remove(bias_at);
        steps[a].inputs.push(bias_input);
        steps[a].kernel = Box::new(FusedDense {
            transpose_a,
            transpose_b,
            relu: relu.is_some(),
        });
        pass_along(&mut steps[b], a_out);
        if let Some((c, _)) = relu {
            pass_along(&mut steps[c], b_out);
        }
        fused += 1;
    }
    fused
}
