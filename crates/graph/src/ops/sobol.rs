//! `SobolSample` with TensorFlow's inputs (`dim`, `num_results`, `skip`:
//! int32 scalars) and `dtype` attr (float32 or float64).

use super::{single, InferContext, OpDef};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result};

fn sobol_sample(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    for i in 0..3 {
        ctx.expect_dtype(i, &[DType::Int32])?;
        ctx.expect_rank(i, 0)?;
    }
    let dtype = ctx.type_or("dtype", DType::Float32)?;
    if !matches!(dtype, DType::Float32 | DType::Float64) {
        return Err(Error::type_error(format!(
            "Value passed to parameter 'dtype' has DataType {dtype} not in list of allowed values: float32, float64"
        )));
    }
    // A known non-positive value is the kernel's error to report.
    let known = |i: usize| {
        ctx.const_value(i)
            .and_then(|t| t.scalar_i64().ok())
            .and_then(|v| usize::try_from(v).ok())
    };
    single(dtype, PartialShape::from_dims(vec![known(1), known(0)]))
}

pub fn ops() -> Vec<OpDef> {
    vec![OpDef::new(
        "SobolSample",
        &["dim", "num_results", "skip"],
        sobol_sample,
    )]
}
