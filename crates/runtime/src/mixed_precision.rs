//! The bfloat16 mixed-precision rewrite a session applies to the graphs of
//! its plans when `ConfigProto.graph_options.rewrite_options.
//! auto_mixed_precision_onednn_bfloat16` (or its old name
//! `auto_mixed_precision_mkl`) is on, as TensorFlow's grappler does on CPUs.
//!
//! Float32 nodes are coloured with the four op lists of TensorFlow's oneDNN
//! rewrite: *allow* ops (matrix products and convolutions) always run in
//! bfloat16, *deny* ops (losses, sums, exponentials) never do and make the
//! *infer* ops after them float32 as well, *infer* ops follow their inputs,
//! and *clear* ops (data movement, comparisons, relu) take the colour of
//! the bfloat16 ops they connect. The passes, in TensorFlow's order:
//!
//! 1. allow-list nodes are bfloat16;
//! 2. deny spreads forward from each deny node through infer and clear
//!    nodes that lie upstream of a deny or infer node;
//! 3. infer and clear nodes on a path from one bfloat16 node to another
//!    become bfloat16;
//! 4. an infer node with a bfloat16 input and no deny input becomes
//!    bfloat16 (one pass in graph order);
//! 5. clear nodes connected to a bfloat16 node through clear nodes become
//!    bfloat16, except ones reading a reference variable directly.
//!
//! Then every bfloat16 node's `T` becomes `bfloat16` and a `Cast` goes on
//! each float32 edge that changes colour (one per tensor and direction,
//! named as TensorFlow names them). Variables, their reads and the
//! optimizer's updates stay float32 (master weights); fetched tensors are
//! cast back, so a fetch has the dtype the user built.
//!
//! The rewrite works on a copy of the graph; the session's own graph, and
//! every other session's plans, are left as they were.

use ferroflow_graph::{AttrValue, Graph, NodeId, NodeSpec, Output};
use ferroflow_tensor::{DType, Result};
use std::collections::HashMap;

/// Ops that always run in bfloat16 (TensorFlow's oneDNN allow list).
const ALLOW: &[&str] = &[
    "BatchMatMul",
    "BatchMatMulV2",
    "Conv2D",
    "Conv2DBackpropFilter",
    "Conv2DBackpropInput",
    "Conv3D",
    "Conv3DBackpropFilterV2",
    "Conv3DBackpropInputV2",
    "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropFilter",
    "DepthwiseConv2dNativeBackpropInput",
    "MatMul",
];

/// Ops that follow their inputs (the oneDNN infer list, less the fused
/// batch normalizations, whose scale and offset stay float32 under a
/// second type attribute this rewrite does not track).
const INFER: &[&str] = &[
    "Add",
    "AddN",
    "AddV2",
    "AvgPool",
    "AvgPool3D",
    "AvgPool3DGrad",
    "AvgPoolGrad",
    "BiasAdd",
    "BiasAddGrad",
    "BiasAddV1",
    "Elu",
    "EluGrad",
    "FloorDiv",
    "LeakyRelu",
    "LeakyReluGrad",
    "Log",
    "Log1p",
    "LogSoftmax",
    "Mul",
    "Prod",
    "RealDiv",
    "Reciprocal",
    "Selu",
    "SeluGrad",
    "Sigmoid",
    "SigmoidGrad",
    "Softmax",
    "Softplus",
    "SoftplusGrad",
    "Softsign",
    "SoftsignGrad",
    "Sqrt",
    "Sub",
    "Tanh",
    "TanhGrad",
];

/// Ops that stay float32 and keep what follows them float32.
const DENY: &[&str] = &[
    "Exp",
    "Expm1",
    "L2Loss",
    "Mean",
    "Pow",
    "SaveV2",
    "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits",
    "Sum",
];

/// Ops with no numerical effect (the oneDNN clear list, less the control
/// flow frame ops, whose loops this rewrite does not colour).
const CLEAR: &[&str] = &[
    "Abs",
    "ArgMax",
    "ArgMin",
    "BatchToSpace",
    "BatchToSpaceND",
    "BroadcastTo",
    "Ceil",
    "CheckNumerics",
    "ClipByValue",
    "Concat",
    "ConcatV2",
    "DepthToSpace",
    "DynamicPartition",
    "DynamicStitch",
    "EnsureShape",
    "Equal",
    "ExpandDims",
    "Fill",
    "Floor",
    "Gather",
    "GatherNd",
    "GatherV2",
    "Greater",
    "GreaterEqual",
    "Identity",
    "IsFinite",
    "IsInf",
    "IsNan",
    "Less",
    "LessEqual",
    "Max",
    "MaxPool",
    "MaxPool3D",
    "MaxPool3DGrad",
    "MaxPoolGrad",
    "MaxPoolGradGrad",
    "MaxPoolGradGradV2",
    "MaxPoolGradV2",
    "MaxPoolV2",
    "Maximum",
    "Min",
    "Minimum",
    "MirrorPad",
    "MirrorPadGrad",
    "Neg",
    "NotEqual",
    "OnesLike",
    "Pack",
    "Pad",
    "PadV2",
    "PreventGradient",
    "Rank",
    "Relu",
    "Relu6",
    "Relu6Grad",
    "ReluGrad",
    "Reshape",
    "ResizeNearestNeighbor",
    "ResizeNearestNeighborGrad",
    "Reverse",
    "ReverseSequence",
    "ReverseV2",
    "Round",
    "Select",
    "SelectV2",
    "Shape",
    "ShapeN",
    "Sign",
    "Slice",
    "Snapshot",
    "SpaceToBatch",
    "SpaceToBatchND",
    "SpaceToDepth",
    "Split",
    "SplitV",
    "Squeeze",
    "StopGradient",
    "StridedSlice",
    "StridedSliceGrad",
    "Tile",
    "TopK",
    "TopKV2",
    "Transpose",
    "Unpack",
    "Where",
    "ZerosLike",
];

/// Which list an op is on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    Allow,
    Infer,
    Deny,
    Clear,
}

/// The list `op` is on, if any.
pub fn class(op: &str) -> Option<Class> {
    [
        (ALLOW, Class::Allow),
        (INFER, Class::Infer),
        (DENY, Class::Deny),
        (CLEAR, Class::Clear),
    ]
    .into_iter()
    .find(|(list, _)| list.contains(&op))
    .map(|(_, c)| c)
}

/// Depth-first walk from `root` along `next` edges, entering a node when
/// `enter(node)` holds (the root always), calling `visit` on each node
/// entered, once.
fn walk(
    root: NodeId,
    next: &[Vec<NodeId>],
    mut enter: impl FnMut(NodeId) -> bool,
    mut visit: impl FnMut(NodeId),
) {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if !seen.insert(n) || (n != root && !enter(n)) {
            continue;
        }
        visit(n);
        stack.extend(next[n].iter().copied());
    }
}

/// The nodes of `graph` that run in bfloat16 (indexed by node id). Nodes
/// producing a fed tensor keep their colour (they do not run).
pub fn bf16_nodes(graph: &Graph, feeds: &[Output]) -> Vec<bool> {
    let len = graph.len();
    let fed: std::collections::HashSet<NodeId> = feeds.iter().map(|o| o.node).collect();
    let f32_edge = |o: &Output| {
        let info = graph.output(*o);
        info.dtype == DType::Float32 && !info.is_list
    };
    // Float32 data edges both ways.
    let mut fanin = vec![Vec::new(); len];
    let mut fanout = vec![Vec::new(); len];
    for node in graph.nodes() {
        for o in node.inputs.iter().filter(|o| f32_edge(o)) {
            fanin[node.id].push(o.node);
            fanout[o.node].push(node.id);
        }
    }
    let classes: Vec<Option<Class>> = graph
        .nodes()
        .iter()
        .map(|n| {
            // Nodes built here carry no `T` (it is written on export): then
            // the node is float32 when its floating-point tensors all are.
            let float32 = match n.attrs.get("T") {
                Some(t) => matches!(t, AttrValue::Type(DType::Float32)),
                None => {
                    let dtypes = n
                        .inputs
                        .iter()
                        .map(|o| graph.output(*o))
                        .chain(&n.outputs)
                        .filter(|i| !i.is_list)
                        .map(|i| i.dtype);
                    let floats: Vec<DType> = dtypes.filter(|d| d.is_floating()).collect();
                    !floats.is_empty() && floats.iter().all(|&d| d == DType::Float32)
                }
            };
            if float32 && !fed.contains(&n.id) {
                class(&n.op)
            } else {
                None
            }
        })
        .collect();
    let is = |n: NodeId, c: Class| classes[n] == Some(c);
    let mut allow: Vec<bool> = (0..len).map(|n| is(n, Class::Allow)).collect();
    let mut deny: Vec<bool> = (0..len).map(|n| is(n, Class::Deny)).collect();

    // 2. Deny forward through infer and clear nodes upstream of deny/infer.
    let mut upstream = vec![false; len];
    for root in (0..len).filter(|&n| is(n, Class::Deny) || is(n, Class::Infer)) {
        let mut found = Vec::new();
        walk(
            root,
            &fanin,
            |n| !upstream[n] && is(n, Class::Clear),
            |n| found.push(n),
        );
        found.into_iter().for_each(|n| upstream[n] = true);
    }
    for root in (0..len).filter(|&n| is(n, Class::Deny)) {
        let mut found = Vec::new();
        walk(
            root,
            &fanout,
            |n| !deny[n] && upstream[n],
            |n| found.push(n),
        );
        found.into_iter().for_each(|n| deny[n] = true);
    }

    // 3. Infer and clear nodes between two bfloat16 nodes.
    let between = |n: NodeId| is(n, Class::Infer) || is(n, Class::Clear);
    let mut downstream = vec![false; len];
    let roots: Vec<NodeId> = (0..len).filter(|&n| allow[n]).collect();
    for &root in &roots {
        let mut found = Vec::new();
        walk(
            root,
            &fanout,
            |n| !downstream[n] && !allow[n] && !deny[n] && between(n),
            |n| found.push(n),
        );
        found.into_iter().for_each(|n| downstream[n] = true);
    }
    for &root in &roots {
        let mut found = Vec::new();
        walk(root, &fanin, |n| downstream[n], |n| found.push(n));
        found.into_iter().for_each(|n| allow[n] = true);
    }

    // 4. Infer nodes fed by a bfloat16 node and no deny node.
    for n in 0..len {
        if !is(n, Class::Infer) || allow[n] || deny[n] {
            continue;
        }
        if fanin[n].iter().any(|&i| allow[i]) && !fanin[n].iter().any(|&i| deny[i]) {
            allow[n] = true;
        }
    }

    // 5. Clear nodes connected to bfloat16 nodes through clear nodes.
    let reads_ref = |n: NodeId| graph.node(n).inputs.iter().any(|o| graph.output(*o).is_ref);
    let both: Vec<Vec<NodeId>> = (0..len)
        .map(|n| fanin[n].iter().chain(&fanout[n]).copied().collect())
        .collect();
    let mut done = vec![false; len];
    for root in 0..len {
        if !allow[root] || done[root] {
            continue;
        }
        let mut found = Vec::new();
        walk(
            root,
            &both,
            |n| !allow[n] && !deny[n] && is(n, Class::Clear) && !reads_ref(n),
            |n| found.push(n),
        );
        for n in found {
            done[n] = true;
            allow[n] = true;
        }
    }
    allow
}

/// A copy of `graph` with the bfloat16 rewrite applied, and the outputs to
/// fetch from it in place of `fetches` (casts back to float32 where a
/// fetched tensor became bfloat16). Node ids of `graph` stay valid in the
/// copy; the casts are new nodes after them.
pub fn rewrite_bf16(
    graph: &Graph,
    feeds: &[Output],
    fetches: &[Output],
) -> Result<(Graph, Vec<Output>)> {
    let bf16 = bf16_nodes(graph, feeds);
    let mut g = graph.clone();
    let was_f32 = |o: Output| {
        let info = graph.output(o);
        info.dtype == DType::Float32 && !info.is_list
    };
    // One cast per (tensor, target dtype).
    let mut casts: HashMap<(Output, DType), Output> = HashMap::new();
    let mut cast = |g: &mut Graph, from: Output, to: DType| -> Result<Output> {
        if let Some(&c) = casts.get(&(from, to)) {
            return Ok(c);
        }
        let src = if to == DType::BFloat16 {
            DType::Float32
        } else {
            DType::BFloat16
        };
        let tag = if to == DType::BFloat16 {
            "CastToBf16"
        } else {
            "CastToFp32"
        };
        let wanted = format!(
            "{}-{}-{tag}-0-AutoMixedPrecision",
            graph.node(from.node).name,
            from.index
        );
        let name = g.unique_name(&wanted, true);
        let device = graph.node(from.node).device.clone();
        let mut spec = NodeSpec::new("Cast", &name)
            .input(from)
            .attr("SrcT", AttrValue::Type(src))
            .attr("DstT", AttrValue::Type(to))
            .attr("Truncate", AttrValue::Bool(false));
        spec.device = device;
        let c = Output::new(g.add_node(spec)?, 0);
        casts.insert((from, to), c);
        Ok(c)
    };
    for id in 0..graph.len() {
        let node = graph.node(id);
        for (i, &o) in node.inputs.iter().enumerate() {
            if was_f32(o) && bf16[o.node] != bf16[id] {
                let to = if bf16[id] {
                    DType::BFloat16
                } else {
                    DType::Float32
                };
                let c = cast(&mut g, o, to)?;
                g.node_mut(id).inputs[i] = c;
            }
        }
        if bf16[id] {
            let n = g.node_mut(id);
            if n.attrs.contains_key("T") {
                n.attrs
                    .insert("T".to_string(), AttrValue::Type(DType::BFloat16));
            }
            for out in n.outputs.iter_mut() {
                if out.dtype == DType::Float32 && !out.is_list {
                    out.dtype = DType::BFloat16;
                }
            }
        }
    }
    let fetches = fetches
        .iter()
        .map(|&o| {
            if bf16[o.node] && was_f32(o) {
                cast(&mut g, o, DType::Float32)
            } else {
                Ok(o)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((g, fetches))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every op is on at most one list.
    #[test]
    fn lists_are_disjoint() {
        let all: Vec<&str> = [ALLOW, INFER, DENY, CLEAR].concat();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
        assert_eq!(class("MatMul"), Some(Class::Allow));
        assert_eq!(class("Sum"), Some(Class::Deny));
        assert_eq!(class("ApplyAdam"), None);
    }
}
