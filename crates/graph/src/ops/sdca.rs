//! The SDCA linear solver's ops (`tf.compat.v1.train.sdca_optimizer`,
//! `sdca_fprint`, `sdca_shrink_l1`). Names, input lists and attrs are
//! TensorFlow's, so GraphDefs of TF's SDCA-trained linear models import.

use super::{InferContext, OpDef};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result};

/// The three list lengths of an `SdcaOptimizer` node.
struct Counts {
    sparse: usize,
    sparse_with_values: usize,
    dense: usize,
}

/// Where each input list of an `SdcaOptimizer` node starts.
struct Layout {
    sparse_weights: usize,
    dense_weights: usize,
    state: usize,
}

impl Layout {
    fn new(c: &Counts) -> Layout {
        // sparse_example_indices, sparse_feature_indices, sparse_feature_values,
        // dense_features, example_weights, example_labels, sparse_indices,
        // sparse_weights, dense_weights, example_state_data.
        let sparse_weights = 3 * c.sparse + c.sparse_with_values + c.dense + 2;
        let dense_weights = sparse_weights + c.sparse;
        Layout {
            sparse_weights,
            dense_weights,
            state: dense_weights + c.dense,
        }
    }
}

fn counts(ctx: &InferContext) -> Result<Counts> {
    let get = |name: &str| -> Result<usize> {
        let v = ctx.attrs().int(name)?;
        usize::try_from(v).map_err(|_| {
            Error::invalid_argument(format!("SdcaOptimizer: attr {name} must be >= 0, got {v}"))
        })
    };
    Ok(Counts {
        sparse: get("num_sparse_features")?,
        sparse_with_values: get("num_sparse_features_with_values")?,
        dense: get("num_dense_features")?,
    })
}

fn optimizer(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let c = counts(ctx)?;
    let expected = Layout::new(&c).state + 1;
    if ctx.num_inputs() != expected {
        return Err(Error::invalid_argument(format!(
            "SdcaOptimizer: expected {expected} inputs for {} sparse ({} with values) and {} dense feature groups, got {}",
            c.sparse,
            c.sparse_with_values,
            c.dense,
            ctx.num_inputs()
        )));
    }
    let layout = Layout::new(&c);
    let mut out = vec![OutputInfo::new(
        DType::Float32,
        ctx.shape(layout.state).clone(),
    )];
    for i in 0..c.sparse {
        out.push(OutputInfo::new(
            DType::Float32,
            ctx.shape(layout.sparse_weights + i).clone(),
        ));
    }
    for i in 0..c.dense {
        out.push(OutputInfo::new(
            DType::Float32,
            ctx.shape(layout.dense_weights + i).clone(),
        ));
    }
    Ok(out)
}

fn fprint(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_rank(0, 1)?;
    let n = ctx.shape(0).dim(0);
    Ok(vec![OutputInfo::new(
        DType::Int64,
        PartialShape::from_dims(vec![n, Some(2)]),
    )])
}

fn shrink(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![])
}

fn shrink_refs(attrs: &crate::Attrs) -> usize {
    attrs.int_or("num_features", 0).unwrap_or(0).max(0) as usize
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("SdcaOptimizer", &["inputs*"], optimizer),
        OpDef::new("SdcaOptimizerV2", &["inputs*"], optimizer),
        OpDef::new("SdcaFprint", &["input"], fprint),
        OpDef::new("SdcaShrinkL1", &["weights*"], shrink).ref_prefix(shrink_refs),
    ]
}
