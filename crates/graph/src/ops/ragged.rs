//! TensorFlow's ragged conversion and gather ops that GraphDefs written by
//! TensorFlow hold: `RaggedTensorToTensor` (`RaggedTensor.to_tensor`) and
//! `RaggedGather` (`tf.gather` on ragged params).
//!
//! `RaggedTensorToTensor(shape, values, default_value, row_partition_tensors)`
//! pads (or truncates) a ragged tensor given as its flat values and one
//! partition tensor per ragged level into a dense tensor of `shape` (`-1`
//! entries, or a scalar `-1` for all of them, take the bounding size). The
//! attribute `row_partition_types` names each partition: `ROW_SPLITS`, or a
//! leading `FIRST_DIM_SIZE` followed by `VALUE_ROWIDS`.
//!
//! `RaggedGather(params_nested_splits, params_dense_values, indices)` takes
//! the rows `indices` of a ragged tensor (whole, at every level); the result
//! has `OUTPUT_RAGGED_RANK = rank(indices) + PARAMS_RAGGED_RANK - 1` splits.

use super::{InferContext, OpDef};
use crate::attr::{AttrValue, Attrs};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result};

const INDEX: &[DType] = &[DType::Int32, DType::Int64];

/// The `row_partition_types` attribute of a `RaggedTensorToTensor` node.
fn row_partition_types(attrs: &Attrs) -> Result<Vec<String>> {
    match attrs.get("row_partition_types") {
        Some(AttrValue::StrList(v)) => Ok(v
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()),
        None => Ok(Vec::new()),
        Some(other) => Err(Error::invalid_argument(format!(
            "RaggedTensorToTensor: row_partition_types must be a list of strings, got {other:?}"
        ))),
    }
}

fn dims_text(dims: &[Option<usize>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| d.map_or("?".to_string(), |v| v.to_string()))
        .collect();
    format!("[{}]", parts.join(","))
}

fn ragged_to_tensor(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let n = ctx.num_inputs();
    if n < 4 {
        return Err(ctx.shape_error("RaggedTensorToTensor needs at least one row partition tensor"));
    }
    ctx.expect_dtype(0, INDEX)?;
    let t = ctx.dtype(1);
    ctx.expect_same(1, 2)?;
    for i in 3..n {
        ctx.expect_dtype(i, INDEX)?;
    }
    let types = row_partition_types(ctx.attrs())?;
    if types.len() != n - 3 {
        return Err(ctx.shape_error(format!(
            "RaggedTensorToTensor: {} row_partition_types for {} row partition tensors",
            types.len(),
            n - 3
        )));
    }
    let ragged_rank = types.iter().filter(|t| *t != "FIRST_DIM_SIZE").count();
    let values = ctx.shape(1).dims().map(<[Option<usize>]>::to_vec);
    let default = ctx.shape(2).dims().map(<[Option<usize>]>::to_vec);
    if let (Some(v), Some(d)) = (&values, &default) {
        let mismatch = |msg: String| {
            ctx.shape_error(format!(
                "default_value.shape={} and rt_input.flat_values.shape={} are incompatible: {msg}",
                dims_text(d),
                dims_text(v)
            ))
        };
        if d.len() >= v.len() {
            return Err(mismatch(format!(
                "default_value.rank = {}  must be less than rt_input.flat_values.rank = {}",
                d.len(),
                v.len()
            )));
        }
        for i in 1..=d.len() {
            if let (Some(a), Some(b)) = (d[d.len() - i], v[v.len() - i]) {
                if a != 1 && a != b {
                    return Err(mismatch(format!(
                        "default_value.shape[-{i}] = {a} but rt_input.flat_values.shape[-{i}] = {b}"
                    )));
                }
            }
        }
    }
    let rank = values.as_ref().map(|v| v.len() + ragged_rank);
    // The requested shape, when known at construction (a scalar means every size is the bounding one).
    let wanted: Option<Vec<Option<usize>>> = ctx.const_ints(0).and_then(|s| {
        if ctx.shape(0).rank() == Some(0) {
            None
        } else {
            Some(
                s.iter()
                    .map(|&d| usize::try_from(d).ok())
                    .collect::<Vec<_>>(),
            )
        }
    });
    let shape = match (&wanted, rank) {
        (Some(w), Some(r)) => {
            if w.len() != r {
                return Err(ctx.shape_error(format!(
                    "rt_input.shape and shape={} are incompatible: rt_input.rank = {r} but shape.rank = {}",
                    dims_text(w),
                    w.len()
                )));
            }
            let v = values.as_deref().unwrap_or(&[]);
            let mut dims = w.clone();
            for (k, vd) in v.iter().enumerate().skip(1) {
                let at = ragged_rank + k;
                match (w[at], *vd) {
                    (Some(a), Some(b)) if a != b => {
                        return Err(ctx.shape_error(format!(
                            "rt_input.shape and shape={} are incompatible: rt_input.shape[{at}] = {b} but shape[{at}] = {a}",
                            dims_text(w)
                        )))
                    }
                    (None, b) => dims[at] = b,
                    _ => {}
                }
            }
            PartialShape::from_dims(dims)
        }
        (Some(w), None) => PartialShape::from_dims(w.clone()),
        (None, Some(r)) => {
            let mut dims = vec![None; ragged_rank + 1];
            if let Some(v) = &values {
                dims.extend(v.iter().skip(1).copied());
            }
            debug_assert_eq!(dims.len(), r);
            PartialShape::from_dims(dims)
        }
        (None, None) => ctx.shape_value(0),
    };
    Ok(vec![OutputInfo::new(t, shape)])
}

fn ragged_gather(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let n = ctx.num_inputs();
    if n < 3 {
        return Err(ctx.shape_error("RaggedGather needs at least one params_nested_splits tensor"));
    }
    let params_ragged_rank = n - 2;
    let splits = ctx.expect_dtype(0, INDEX)?;
    for i in 0..params_ragged_rank {
        if ctx.dtype(i) != splits {
            return Err(ctx.shape_error("RaggedGather: params_nested_splits must share one dtype"));
        }
        ctx.expect_rank(i, 1)?;
    }
    ctx.expect_dtype(n - 1, INDEX)?;
    let out_rank = ctx.int("OUTPUT_RAGGED_RANK")?;
    if out_rank < 0 {
        return Err(ctx.shape_error("RaggedGather: OUTPUT_RAGGED_RANK must be at least 0"));
    }
    if let Some(r) = ctx.shape(n - 1).rank() {
        if out_rank as usize + 1 != r + params_ragged_rank {
            return Err(ctx.shape_error(format!(
                "RaggedGather: OUTPUT_RAGGED_RANK ({out_rank}) must be rank(indices) + PARAMS_RAGGED_RANK - 1 = {}",
                (r + params_ragged_rank) as i64 - 1
            )));
        }
    }
    let mut out: Vec<OutputInfo> = (0..out_rank)
        .map(|_| OutputInfo::new(splits, PartialShape::from_dims(vec![None])))
        .collect();
    let values = match ctx.shape(n - 2).dims() {
        Some(d) if !d.is_empty() => {
            let mut dims = vec![None];
            dims.extend_from_slice(&d[1..]);
            PartialShape::from_dims(dims)
        }
        _ => PartialShape::unknown(),
    };
    out.push(OutputInfo::new(ctx.dtype(n - 2), values));
    Ok(out)
}

/// The op definitions of this module.
pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "RaggedTensorToTensor",
            &["shape", "values", "default_value", "row_partition_tensors*"],
            ragged_to_tensor,
        ),
        OpDef::new(
            "RaggedGather",
            &["params_nested_splits*", "params_dense_values", "indices"],
            ragged_gather,
        ),
    ]
}
