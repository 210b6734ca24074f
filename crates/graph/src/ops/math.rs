//! Elementwise math, comparisons, casts, reductions and matrix products.

use super::complex::expect_dtype_or_complex;
use super::{
    axis_in, single, InferContext, OpDef, FLOATS, INDEX, NUMERIC, NUMERIC_WIDE, SIGNED_NUMERIC,
};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

fn unary_float(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, FLOATS)?;
    single(d, ctx.shape(0).clone())
}

fn unary_numeric(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, NUMERIC)?;
    single(d, ctx.shape(0).clone())
}

fn unary_wide(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, NUMERIC_WIDE)?;
    single(d, ctx.shape(0).clone())
}

fn unary_signed(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, SIGNED_NUMERIC)?;
    single(d, ctx.shape(0).clone())
}

fn float_predicate(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, FLOATS)?;
    single(DType::Bool, ctx.shape(0).clone())
}

fn logical_not(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Bool])?;
    single(DType::Bool, ctx.shape(0).clone())
}

fn broadcast(ctx: &InferContext) -> Result<PartialShape> {
    ctx.shape(0).broadcast(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error(format!(
            "Dimensions must be equal, but are {} and {}",
            ctx.shape(0),
            ctx.shape(1)
        ))
    })
}

fn binary_with(
    ctx: &InferContext,
    allowed: &[DType],
    out: Option<DType>,
) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, allowed)?;
    ctx.expect_same(0, 1)?;
    single(out.unwrap_or(d), broadcast(ctx)?)
}

fn binary_signed(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    binary_with(ctx, SIGNED_NUMERIC, None)
}

/// `TruncateMod`: TF's op takes int32, int64 and the floats only.
fn truncate_mod(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    const TYPES: &[DType] = &[
        DType::Int32,
        DType::Int64,
        DType::BFloat16,
        DType::Float16,
        DType::Float32,
        DType::Float64,
    ];
    binary_with(ctx, TYPES, None)
}

fn binary_wide(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    binary_with(ctx, NUMERIC_WIDE, None)
}

/// TensorFlow's `Add` (unlike `AddV2`) also concatenates strings.
fn add_or_concat(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    const ADD_TYPES: [DType; 11] = [
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::UInt8,
        DType::UInt16,
        DType::String,
    ];
    binary_with(ctx, &ADD_TYPES, None)
}

fn binary_float(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    binary_with(ctx, FLOATS, None)
}

fn compare_numeric(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    binary_with(ctx, NUMERIC_WIDE, Some(DType::Bool))
}

fn compare_any(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    binary_with(ctx, &DType::ALL, Some(DType::Bool))
}

fn logical_binary(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    binary_with(ctx, &[DType::Bool], None)
}

fn cast(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let to = ctx.type_attr("DstT")?;
    single(to, ctx.shape(0).clone())
}

/// Output shape of a reduction of input 0 over the axes in input 1.
pub fn reduced_shape(ctx: &InferContext) -> Result<PartialShape> {
    ctx.expect_dtype(1, INDEX)?;
    let keep = ctx.bool_or("keep_dims", false)?;
    let input = ctx.shape(0);
    let Some(dims) = input.dims() else {
        return Ok(PartialShape::unknown());
    };
    let Some(axes) = ctx.const_ints(1) else {
        return Ok(if keep {
            PartialShape::unknown_dims(dims.len())
        } else {
            PartialShape::unknown()
        });
    };
    let mut reduced = vec![false; dims.len()];
    for a in axes {
        let ax = axis_in(ctx, a, dims.len()).map_err(|_| {
            ctx.shape_error(format!(
                "Invalid reduction dimension {a} for input with {} dimensions",
                dims.len()
            ))
        })?;
        reduced[ax] = true;
    }
    Ok(PartialShape::from_dims(
        dims.iter()
            .zip(&reduced)
            .filter_map(|(&d, &r)| match (r, keep) {
                (true, true) => Some(Some(1)),
                (true, false) => None,
                (false, _) => Some(d),
            })
            .collect(),
    ))
}

fn reduce_numeric(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, NUMERIC_WIDE)?;
    single(d, reduced_shape(ctx)?)
}

fn reduce_bool(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Bool])?;
    single(DType::Bool, reduced_shape(ctx)?)
}

fn arg_reduce(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, NUMERIC_WIDE)?;
    ctx.expect_dtype(1, INDEX)?;
    let out = ctx.type_or("output_type", DType::Int64)?;
    let shape = match (ctx.shape(0).dims(), ctx.const_ints(1)) {
        (Some(dims), Some(a)) if a.len() == 1 => {
            let ax = axis_in(ctx, a[0], dims.len())?;
            let mut d = dims.to_vec();
            d.remove(ax);
            PartialShape::from_dims(d)
        }
        (Some(dims), _) if !dims.is_empty() => PartialShape::unknown_dims(dims.len() - 1),
        _ => PartialShape::unknown(),
    };
    single(out, shape)
}

const MATMUL_TYPES: &[DType] = &[
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
    DType::Int32,
    DType::Int64,
];

fn matmul(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, MATMUL_TYPES)?;
    ctx.expect_same(0, 1)?;
    let a = ctx
        .shape(0)
        .with_rank(2, "a")
        .map_err(|e| ctx.shape_error(e.message()))?;
    let b = ctx
        .shape(1)
        .with_rank(2, "b")
        .map_err(|e| ctx.shape_error(e.message()))?;
    let (ta, tb) = (
        ctx.bool_or("transpose_a", false)?,
        ctx.bool_or("transpose_b", false)?,
    );
    let (m, k) = if ta {
        (a.dim(1), a.dim(0))
    } else {
        (a.dim(0), a.dim(1))
    };
    let (k2, n) = if tb {
        (b.dim(1), b.dim(0))
    } else {
        (b.dim(0), b.dim(1))
    };
    if let (Some(x), Some(y)) = (k, k2) {
        if x != y {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {x} and {y}")));
        }
    }
    single(d, PartialShape::from_dims(vec![m, n]))
}

fn batch_matmul(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, MATMUL_TYPES)?;
    ctx.expect_same(0, 1)?;
    let (ta, tb) = (ctx.bool_or("adj_x", false)?, ctx.bool_or("adj_y", false)?);
    let (Some(a), Some(b)) = (ctx.shape(0).dims(), ctx.shape(1).dims()) else {
        return single(d, PartialShape::unknown());
    };
    if a.len() < 2 || b.len() < 2 {
        return Err(ctx.shape_error("Shape must be at least rank 2"));
    }
    let (ar, ac) = (a[a.len() - 2], a[a.len() - 1]);
    let (br, bc) = (b[b.len() - 2], b[b.len() - 1]);
    let (m, k) = if ta { (ac, ar) } else { (ar, ac) };
    let (k2, n) = if tb { (bc, br) } else { (br, bc) };
    if let (Some(x), Some(y)) = (k, k2) {
        if x != y {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {x} and {y}")));
        }
    }
    let batch = PartialShape::from_dims(a[..a.len() - 2].to_vec())
        .broadcast(&PartialShape::from_dims(b[..b.len() - 2].to_vec()))
        .ok_or_else(|| ctx.shape_error("Batch dimensions are incompatible"))?;
    let mut dims = batch.dims().map(<[_]>::to_vec).unwrap_or_default();
    dims.push(m);
    dims.push(n);
    single(d, PartialShape::from_dims(dims))
}

fn add_n(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    if ctx.num_inputs() == 0 {
        return Err(ctx.shape_error("AddN needs at least one input"));
    }
    let d = expect_dtype_or_complex(ctx, 0, NUMERIC_WIDE)?;
    let mut shape = ctx.shape(0).clone();
    for i in 1..ctx.num_inputs() {
        ctx.expect_same(0, i)?;
        shape = shape.merge(ctx.shape(i)).ok_or_else(|| {
            ctx.shape_error(format!(
                "Shapes must be equal, but are {} and {}",
                shape,
                ctx.shape(i)
            ))
        })?;
    }
    single(d, shape)
}

fn select(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Bool])?;
    let d = ctx.expect_same(1, 2)?;
    let (c, t, e) = (ctx.shape(0), ctx.shape(1), ctx.shape(2));
    let te = t
        .merge(e)
        .ok_or_else(|| ctx.shape_error(format!("Shapes must be equal, but are {t} and {e}")))?;
    let ok = match (c.rank(), te.rank()) {
        (Some(1), Some(r)) if r > 1 => c.dim(0).zip(te.dim(0)).is_none_or(|(a, b)| a == b),
        _ => c.is_compatible_with(&te),
    };
    if !ok {
        return Err(ctx.shape_error(format!(
            "condition {c} must be a vector matching the first dimension of, or have the shape of, {te}"
        )));
    }
    single(d, te)
}

fn select_v2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Bool])?;
    let d = ctx.expect_same(1, 2)?;
    let out = ctx
        .shape(1)
        .broadcast(ctx.shape(2))
        .and_then(|s| ctx.shape(0).broadcast(&s))
        .ok_or_else(|| ctx.shape_error("condition, x and y cannot be broadcast together"))?;
    single(d, out)
}

fn cumulative(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = expect_dtype_or_complex(ctx, 0, NUMERIC_WIDE)?;
    ctx.expect_dtype(1, INDEX)?;
    // As TF's shape function, the axis's range is the kernel's check (InvalidArgumentError at run time).
    single(d, ctx.shape(0).clone())
}

fn check_numerics(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    single(d, ctx.shape(0).clone())
}

macro_rules! defs {
    ($f:ident, $inputs:expr, $($name:literal),*) => {
        [$(OpDef::new($name, $inputs, $f)),*]
    };
}

const UNARY_FLOAT: [OpDef; 17] = defs!(
    unary_float,
    &["x"],
    "Sqrt",
    "Rsqrt",
    "Exp",
    "Log",
    "Log1p",
    "Expm1",
    "Sin",
    "Cos",
    "Tan",
    "Tanh",
    "Sigmoid",
    "Floor",
    "Ceil",
    "Elu",
    "Selu",
    "Softplus",
    "Softsign"
);
// TensorFlow rejects unsigned integers for these.
const UNARY_SIGNED: [OpDef; 3] = defs!(unary_signed, &["x"], "Neg", "Abs", "Sign");
const UNARY_NUMERIC: [OpDef; 2] = defs!(unary_numeric, &["x"], "Round", "Reciprocal");
// TensorFlow's CPU kernels of these also take uint32 and uint64.
const UNARY_WIDE: [OpDef; 3] = defs!(unary_wide, &["x"], "Square", "Relu", "Relu6");
const PREDICATES: [OpDef; 3] = defs!(float_predicate, &["x"], "IsFinite", "IsInf", "IsNan");
// TensorFlow's op definitions of these take no unsigned integers.
const BINARY_SIGNED: [OpDef; 2] = defs!(binary_signed, &["x", "y"], "SquaredDifference", "Pow");
const TRUNCATE_MOD: OpDef = OpDef::new("TruncateMod", &["x", "y"], truncate_mod);
// TensorFlow's CPU kernels of these also take uint32 and uint64.
const BINARY_WIDE: [OpDef; 8] = defs!(
    binary_wide,
    &["x", "y"],
    "AddV2",
    "Sub",
    "Mul",
    "Div",
    "FloorDiv",
    "FloorMod",
    "Maximum",
    "Minimum"
);
const BINARY_FLOAT: [OpDef; 3] = defs!(binary_float, &["x", "y"], "RealDiv", "DivNoNan", "Atan2");
const COMPARE: [OpDef; 4] = defs!(
    compare_numeric,
    &["x", "y"],
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual"
);
const EQUALITY: [OpDef; 2] = defs!(compare_any, &["x", "y"], "Equal", "NotEqual");
const LOGICAL: [OpDef; 2] = defs!(logical_binary, &["x", "y"], "LogicalAnd", "LogicalOr");
const REDUCE: [OpDef; 5] = defs!(
    reduce_numeric,
    &["input", "reduction_indices"],
    "Sum",
    "Mean",
    "Max",
    "Min",
    "Prod"
);
const REDUCE_BOOL: [OpDef; 2] = defs!(reduce_bool, &["input", "reduction_indices"], "Any", "All");
const ARG: [OpDef; 2] = defs!(arg_reduce, &["input", "dimension"], "ArgMax", "ArgMin");
const CUMULATIVE: [OpDef; 2] = defs!(cumulative, &["x", "axis"], "Cumsum", "Cumprod");

const OTHERS: &[OpDef] = &[
    OpDef::new("Add", &["x", "y"], add_or_concat),
    OpDef::new("LogicalNot", &["x"], logical_not),
    OpDef::new("Cast", &["x"], cast),
    OpDef::new("MatMul", &["a", "b"], matmul),
    OpDef::new("BatchMatMulV2", &["x", "y"], batch_matmul),
    OpDef::new("AddN", &["inputs*"], add_n),
    OpDef::new("Select", &["condition", "t", "e"], select),
    OpDef::new("SelectV2", &["condition", "t", "e"], select_v2),
    OpDef::new("CheckNumerics", &["tensor"], check_numerics).stateful(),
];

/// Every op of this module.
pub fn ops() -> Vec<OpDef> {
    [
        &UNARY_FLOAT[..],
        &UNARY_SIGNED,
        &UNARY_NUMERIC,
        &UNARY_WIDE,
        &PREDICATES,
        &BINARY_SIGNED,
        &[TRUNCATE_MOD],
        &BINARY_WIDE,
        &BINARY_FLOAT,
        &COMPARE,
        &EQUALITY,
        &LOGICAL,
        &REDUCE,
        &REDUCE_BOOL,
        &ARG,
        &CUMULATIVE,
        OTHERS,
    ]
    .concat()
}
