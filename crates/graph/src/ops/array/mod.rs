//! Array ops: their TensorFlow names, inputs, attrs and shape functions.
//! The kernels follow the same seams in `ferroflow_runtime`'s
//! `kernels/array/` and `ferroflow_tensor::kernels::array`.
//!
//! * `layout`: whole tensors reshaped or rearranged (`Reshape`,
//!   `ExpandDims`, `Squeeze`, `Transpose`, concat/split, `Pack`/`Unpack`,
//!   `Tile`, the pads, `ReverseV2`, `ReverseSequence`, `Roll`,
//!   `BroadcastTo` and the space/batch ops);
//! * `indexing`: parts chosen by position (`Slice`, `StridedSlice`,
//!   `GatherV2`, `GatherNd`, `UnravelIndex`, `ExtractVolumePatches`);
//! * `fill`: tensors made from a few numbers (`Fill`, `ZerosLike`,
//!   `OnesLike`, `Range`, `LinSpace`, `OneHot`);
//! * `search`: elements chosen or counted by their values (`Where`,
//!   `Unique`, `UniqueWithCounts`, `LowerBound`/`UpperBound`,
//!   `HistogramFixedWidth`, `EditDistance`);
//! * this module: sources (`Const`, placeholders), the identity family,
//!   the shape queries (`Shape`, `ShapeN`, `Size`, `Rank`,
//!   `BroadcastArgs`), `Bitcast`, `EnsureShape` and `Assert`, the shape
//!   merge the submodules share, and [`ops`], which lists them all.

mod fill;
mod indexing;
mod layout;
mod search;

use super::{dims_text, single, InferContext, OpDef, INDEX};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::bitcast::BITCAST_TYPES;
use ferroflow_tensor::{DType, Error, Result};

/// TensorFlow's `Merge` of two shapes, with its messages.
fn merge(ctx: &InferContext, a: &PartialShape, b: &PartialShape) -> Result<PartialShape> {
    if let (Some(x), Some(y)) = (a.dims(), b.dims()) {
        if x.len() != y.len() {
            return Err(ctx.shape_error(format!(
                "Shapes must be equal rank, but are {} and {}",
                x.len(),
                y.len()
            )));
        }
        for (i, (p, q)) in x.iter().zip(y).enumerate() {
            if let (Some(p), Some(q)) = (p, q) {
                if p != q {
                    return Err(ctx.shape_error(format!(
                        "Dimension {i} in both shapes must be equal, but are {p} and {q}. Shapes are {} and {}.",
                        dims_text(a),
                        dims_text(b)
                    )));
                }
            }
        }
    }
    Ok(a.merge(b).unwrap_or_else(PartialShape::unknown))
}

fn constant(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = ctx.attrs().tensor("value")?;
    let mut dtype = t.dtype();
    if let Ok(d) = ctx.type_attr("dtype") {
        // A quantized constant holds the integers of its width.
        if d.storage() != t.dtype() {
            return Err(Error::type_error(format!(
                "Const '{}': value has dtype {} but dtype attribute says {d}",
                ctx.name,
                t.dtype()
            )));
        }
        dtype = d;
    }
    single(dtype, PartialShape::from(t.shape()))
}

fn placeholder(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.type_attr("dtype")?, ctx.attrs().shape("shape")?)
}

fn placeholder_with_default(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.dtype(0);
    let declared = ctx.attrs().shape("shape")?;
    if !declared.is_compatible_with(ctx.shape(0)) {
        return Err(ctx.shape_error(format!(
            "default value of shape {} is not compatible with shape {declared}",
            ctx.shape(0)
        )));
    }
    single(d, declared)
}

fn identity(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn no_outputs(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

fn shape_of(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let out = ctx.type_or("out_type", DType::Int32)?;
    let n = ctx.shape(0).rank();
    single(out, PartialShape::from_dims(vec![n]))
}

/// `ShapeN`: the shapes of N tensors at once (TF's conv gradients use it).
fn shape_n(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let out = ctx.type_or("out_type", DType::Int32)?;
    Ok((0..ctx.num_inputs())
        .map(|i| OutputInfo::new(out, PartialShape::from_dims(vec![ctx.shape(i).rank()])))
        .collect())
}

fn size_of(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(
        ctx.type_or("out_type", DType::Int32)?,
        PartialShape::scalar(),
    )
}

fn rank_of(_: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::Int32, PartialShape::scalar())
}

/// TensorFlow's `Bitcast` shape function (see
/// [`ferroflow_tensor::kernels::bitcast::bitcast_shape`] for the rule).
fn bitcast(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let from = ctx.expect_dtype(0, BITCAST_TYPES)?;
    let to = ctx.type_attr("type")?;
    if !BITCAST_TYPES.contains(&to) {
        return Err(Error::type_error(format!(
            "Value for attr 'type' of {to} is not in the list of allowed values"
        )));
    }
    let (a, b) = (from.size().unwrap_or(1), to.size().unwrap_or(1));
    let Some(dims) = ctx.shape(0).dims() else {
        return single(to, PartialShape::unknown());
    };
    let mut out = dims.to_vec();
    if a > b {
        out.push(Some(a / b));
    } else if a < b {
        match out.pop() {
            None => return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0")),
            Some(Some(last)) if last != b / a => {
                return Err(ctx.shape_error(format!(
                    "Cannot bitcast from {} to {} due to shape. {last} does not match {}",
                    from.as_enum(),
                    to.as_enum(),
                    b / a
                )))
            }
            Some(_) => {}
        }
    }
    single(to, PartialShape::from_dims(out))
}

fn identity_n(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok((0..ctx.num_inputs())
        .map(|i| OutputInfo::new(ctx.dtype(i), ctx.shape(i).clone()))
        .collect())
}

fn ensure_shape(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let want = ctx.attrs().shape("shape")?;
    let s = merge(ctx, &want, ctx.shape(0))?;
    single(ctx.dtype(0), s)
}

fn broadcast_args(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, INDEX)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 1)?;
    let n = match (ctx.shape(0).dim(0), ctx.shape(1).dim(0)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    single(d, PartialShape::from_dims(vec![n]))
}

fn assert_op(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Bool])?;
    if !matches!(ctx.shape(0).num_elements(), None | Some(1)) {
        return Err(ctx.shape_error("In[0] (condition) must be a scalar"));
    }
    Ok(Vec::new())
}

/// Every array op, this module's and its submodules'.
pub fn ops() -> Vec<OpDef> {
    let mut ops = vec![
        OpDef::new("Const", &[], constant),
        OpDef::new("Placeholder", &[], placeholder),
        OpDef::new(
            "PlaceholderWithDefault",
            &["input"],
            placeholder_with_default,
        ),
        OpDef::new("Identity", &["input"], identity),
        OpDef::new("StopGradient", &["input"], identity),
        OpDef::new("Snapshot", &["input"], identity),
        // A promise to the graph that the input never changes between runs.
        OpDef::new("GuaranteeConst", &["input"], identity),
        OpDef::new("NoOp", &[], no_outputs),
        OpDef::new("Shape", &["input"], shape_of),
        OpDef::new("ShapeN", &["input*"], shape_n),
        OpDef::new("Size", &["input"], size_of),
        OpDef::new("Rank", &["input"], rank_of),
        OpDef::new("Bitcast", &["input"], bitcast),
        OpDef::new("IdentityN", &["input*"], identity_n),
        OpDef::new("EnsureShape", &["input"], ensure_shape),
        OpDef::new("BroadcastArgs", &["s0", "s1"], broadcast_args),
        OpDef::new("Assert", &["condition", "data*"], assert_op).stateful(),
        // ferroflow's own op, not TensorFlow's: every run fails with
        // UnimplementedError carrying its `message` attr. The import of TF1
        // control-flow graphs puts it in place of a node it could not rebuild
        // (a train op), so running that node says what is missing with TF's
        // error class. A GraphDef holding it does not import into TensorFlow,
        // which has no op of this name. Stateful so that it is never folded.
        OpDef::new("Unimplemented", &[], no_outputs).stateful(),
    ];
    for more in [layout::ops(), indexing::ops(), fill::ops(), search::ops()] {
        ops.extend(more);
    }
    ops
}
