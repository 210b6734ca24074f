//! Gradient functions of the built-in ops, one module per family.

mod array;
mod complex;
mod control_flow;
mod fake_quant;
mod fft;
mod linalg;
mod list;
mod lstm;
mod math;
mod math_special;
mod nn;
mod nn_conv;
mod nn_layers;
mod nn_more;
mod quantize;
mod ragged;
mod segment;
mod sparse;
mod stateless_random;

use crate::registry::GradEntry;
use crate::Grad;
use ferroflow_graph::Output;

/// Ops whose inputs never receive gradient. (`TruncateMod` and `Unique` are
/// deliberately absent: TensorFlow registers nothing for them, so
/// `tf.gradients` through them raises `LookupError`, as there.)
const NOT_DIFFERENTIABLE: &[&str] = &[
    "Shape",
    "ShapeN",
    "ConcatOffset",
    "GetSessionHandle",
    "GetSessionTensor",
    "DeleteSessionTensor",
    "Size",
    "Rank",
    "ZerosLike",
    "OnesLike",
    "Range",
    // tf.ragged's ops: TensorFlow marks both not differentiable.
    "RaggedRange",
    "RaggedCross",
    "LinSpace",
    "Const",
    "Placeholder",
    "VariableV2",
    "Assign",
    "AssignAdd",
    "AssignSub",
    "ScatterUpdate",
    "ScatterAdd",
    "ScatterSub",
    "IsVariableInitialized",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "IsFinite",
    "IsInf",
    "IsNan",
    "ArgMax",
    "ArgMin",
    "RandomStandardNormal",
    "RandomUniform",
    "RandomUniformInt",
    "TruncatedNormal",
    "RandomShuffle",
    "Where",
    "OneHot",
    "FloorDiv",
    "Floor",
    "Ceil",
    "Round",
    "InTopKV2",
    "Assert",
    "Unimplemented",
    "NoOp",
    "LogUniformCandidateSampler",
    "UniformCandidateSampler",
    "BroadcastGradientArgs",
    "ReducedShape",
    "InvertPermutation",
    "Any",
    "All",
    "PrintV2",
    "Timestamp",
    "_Arg",
    "WhileGrad",
    // String ops TensorFlow marks NotDifferentiable (string_ops.py, parsing_ops.py).
    "RegexReplace",
    "StringToHashBucket",
    "StringToHashBucketFast",
    "StringToHashBucketStrong",
    "ReduceJoin",
    "StringJoin",
    "StringSplit",
    "AsString",
    "StringToNumber",
    // The SDCA solver's ops (TensorFlow's sdca_ops.py marks them so).
    "SdcaFprint",
    "SdcaOptimizer",
    "SdcaOptimizerV2",
    "SdcaShrinkL1",
    // tf.CriticalSection's mutex (handles and locks, never float values) and
    // CheckPinned, whose every run fails on the CPU (TensorFlow has no entry).
    "MutexV2",
    "MutexLock",
    "ConsumeMutexLock",
    "CheckPinned",
    // tf.bitwise (TensorFlow's bitwise_ops.py marks them so).
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "Invert",
    "PopulationCount",
    "LeftShift",
    "RightShift",
    // tf.sets (TensorFlow's sets_impl.py marks them so).
    "SetSize",
    "DenseToDenseSetOperation",
    "DenseToSparseSetOperation",
    "SparseToSparseSetOperation",
];

pub(crate) fn register_all(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    for op in NOT_DIFFERENTIABLE {
        reg(op, GradEntry::NotDifferentiable);
    }
    complex::register(reg);
    control_flow::register(reg);
    fake_quant::register(reg);
    fft::register(reg);
    linalg::register(reg);
    list::register(reg);
    lstm::register(reg);
    math::register(reg);
    math_special::register(reg);
    array::register(reg);
    nn::register(reg);
    nn_conv::register(reg);
    nn_layers::register(reg);
    nn_more::register(reg);
    quantize::register(reg);
    ragged::register(reg);
    segment::register(reg);
    sparse::register(reg);
    stateless_random::register(reg);
}

/// One dense gradient.
pub(crate) fn d(o: Output) -> Option<Grad> {
    Some(Grad::Dense(o))
}

#[cfg(test)]
mod tests {
    use crate::registry::lookup;

    /// Ops `gradients` handles itself, without a registry entry.
    const BUILT_IN: &[&str] = &["Identity", "Snapshot", "StopGradient"];

    /// Ops that have no gradient, as in TensorFlow (`tf.gradients` through a
    /// float one raises LookupError), or only take/produce non-float tensors.
    const NO_ENTRY: &[&str] = &[
        "TruncateMod",
        "Unique",
        // TensorFlow registers none for these either.
        "Bitcast",
        "GuaranteeConst",
        "StridedSliceAssign",
        "Bincount",
        "Bucketize",
        "DenseBincount",
        // tf.random: TensorFlow has no gradient of the gamma gradient; the
        // parameterized truncated normal's (w.r.t. its parameters) is not built yet.
        "RandomGammaGrad",
        "StatelessParameterizedTruncatedNormal",
        "IgammaGradA",
        "LRNGrad",
        "MaxPoolGradGradWithArgmax",
        "Dilation2DBackpropInput",
        "Dilation2DBackpropFilter",
        "FractionalMaxPoolGrad",
        "FractionalAvgPoolGrad",
        "FakeQuantWithMinMaxArgsGradient",
        "FakeQuantWithMinMaxVarsGradient",
        "FakeQuantWithMinMaxVarsPerChannelGradient",
        // TensorFlow registers no gradient for these (quantized tensors do not
        // carry gradients); V4Grad's registered one fails in TF 2.21 itself.
        "QuantizeV2",
        "Dequantize",
        "QuantizedConcat",
        "QuantizeAndDequantizeV4Grad",
        "QuantizedConv2D",
        "QuantizedAvgPool",
        "QuantizedMaxPool",
        "QuantizedReluX",
        // Its inputs are integers; TensorFlow registers nothing for it.
        "SobolSample",
        // TensorFlow differentiates these (second derivatives of batch
        // norm); ferroflow does not yet, so tf.gradients raises LookupError.
        "FusedBatchNormGrad",
        "FusedBatchNormGradV2",
        "FusedBatchNormGradV3",
        // TensorFlow registers none for the fused LSTM's gradients either.
        "BlockLSTMGrad",
        "BlockLSTMGradV2",
        // Sparse ops TensorFlow registers no gradient for (grads/sparse.rs).
        "SparseReshape",
        "SparseReduceSumSparse",
        "SparseReduceMax",
        "SparseReduceMaxSparse",
        "SparseFillEmptyRowsGrad",
        "SparseSplit",
        "SparseSliceGrad",
        "SparseSegmentSumGrad",
        "SparseSegmentMeanGrad",
        "SparseSegmentSqrtNGrad",
        "SparseSegmentSumGradV2",
        "SparseSegmentMeanGradV2",
        "SparseSegmentSqrtNGradV2",
        "SparseCross",
        "SparseCrossV2",
        "ListDiff",
        // TensorFlow differentiates these; ferroflow does not yet
        // (tf.linalg.lstsq's default fast path is composed of differentiable ops).
        "Lu",
        "MatrixSquareRoot",
        "MatrixSolveLs",
        // Array ops TensorFlow registers no gradient for (grads/array/).
        "UniqueWithCounts",
        "LowerBound",
        "UpperBound",
        "HistogramFixedWidth",
        "UnravelIndex",
        "BroadcastArgs",
        "DenseCountSparseOutput",
        "SparseCountSparseOutput",
        // String ops TensorFlow registers no gradient for (their inputs are strings or ints).
        "StringSplitV2",
        "StringLength",
        "StringLower",
        "StringUpper",
        "StringStrip",
        "Substr",
        "RegexFullMatch",
        "StaticRegexFullMatch",
        "StaticRegexReplace",
        "StringFormat",
        "Fingerprint",
        "UnicodeDecode",
        "UnicodeDecodeWithOffsets",
        "UnicodeEncode",
        "UnicodeTranscode",
        "UnicodeScript",
        "StringNGrams",
        "UnsortedSegmentJoin",
        // TensorFlow registers no gradient for the 3-D real and the N-D FFTs (grads/fft.rs).
        "RFFT3D",
        "IRFFT3D",
        "FFTND",
        "IFFTND",
        "RFFTND",
        "IRFFTND",
    ];

    #[test]
    fn every_registered_gradient_names_a_known_op() {
        let known = ferroflow_graph::ops::registered_ops();
        let mut missing = Vec::new();
        super::register_all(&mut |op, _| {
            if !known.contains(&op) {
                missing.push(op);
            }
        });
        assert!(missing.is_empty(), "gradients of unknown ops: {missing:?}");
    }

    #[test]
    fn every_op_has_a_gradient_entry() {
        let missing: Vec<_> = ferroflow_graph::ops::registered_ops()
            .into_iter()
            .filter(|op| lookup(op).is_none() && !BUILT_IN.contains(op) && !NO_ENTRY.contains(op))
            .collect();
        assert!(
            missing.is_empty(),
            "ops with neither a gradient nor a NotDifferentiable entry: {missing:?}"
        );
    }
}
