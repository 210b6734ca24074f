//! TensorFlow's stateless random ops (pure functions of a seed or of a
//! Philox key and counter), the stateful samplers built on the same
//! distributions (`Multinomial`, `RandomGamma`, `RandomPoissonV2`), and
//! `RandomIndexShuffle`. Input names, order and attrs are TensorFlow's.
//!
//! TensorFlow's key and counter tensors are `uint64`; ferroflow has no
//! unsigned 64-bit dtype, so they travel as `int64` with the same bits.

use super::{single, InferContext, OpDef, FLOATS, INDEX};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

fn seed_vector(ctx: &InferContext, i: usize) -> Result<()> {
    ctx.expect_dtype(i, INDEX)?;
    ctx.expect_rank(i, 1)?;
    if let Some(n) = ctx.shape(i).dim(0) {
        if n != 2 {
            return Err(ctx.shape_error(format!("Dimension must be 2 but is {n}")));
        }
    }
    Ok(())
}

fn float_dtype(ctx: &InferContext, attr: &str) -> Result<DType> {
    let d = ctx.type_attr(attr)?;
    if !FLOATS.contains(&d) {
        return Err(ferroflow_tensor::Error::type_error(format!(
            "{}: {attr} must be half, bfloat16, float or double, got {d}",
            ctx.def.name
        )));
    }
    Ok(d)
}

fn key_counter_alg(ctx: &InferContext, first: usize) -> Result<()> {
    ctx.expect_rank(first, 1)?;
    ctx.expect_rank(first + 1, 1)?;
    ctx.expect_dtype(first + 2, &[DType::Int32])?;
    ctx.expect_rank(first + 2, 0)
}

fn get_key_counter(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    seed_vector(ctx, 0)?;
    let mut out = vec![
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![Some(1)])),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![Some(2)])),
    ];
    if ctx.def.name == "StatelessRandomGetKeyCounterAlg" {
        out.push(OutputInfo::new(DType::Int32, PartialShape::scalar()));
    }
    Ok(out)
}

fn get_alg(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::Int32, PartialShape::scalar())
}

fn v2_float(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    key_counter_alg(ctx, 1)?;
    single(float_dtype(ctx, "dtype")?, ctx.shape_value(0))
}

fn v2_int(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    key_counter_alg(ctx, 1)?;
    let d = ctx.expect_dtype(4, INDEX)?;
    ctx.expect_same(4, 5)?;
    ctx.expect_rank(4, 0)?;
    ctx.expect_rank(5, 0)?;
    single(d, ctx.shape_value(0))
}

fn v2_full_int(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    key_counter_alg(ctx, 1)?;
    single(ctx.type_attr("dtype")?, ctx.shape_value(0))
}

fn v1_float(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    seed_vector(ctx, 1)?;
    single(float_dtype(ctx, "dtype")?, ctx.shape_value(0))
}

fn v1_int(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    seed_vector(ctx, 1)?;
    let d = ctx.expect_dtype(2, INDEX)?;
    ctx.expect_same(2, 3)?;
    single(d, ctx.shape_value(0))
}

fn v1_full_int(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    seed_vector(ctx, 1)?;
    single(ctx.type_attr("dtype")?, ctx.shape_value(0))
}

fn multinomial_out(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_rank(0, 2)?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.expect_rank(1, 0)?;
    let n = ctx.const_ints(1).and_then(|v| v.first().copied());
    let d = ctx.type_or("output_dtype", DType::Int64)?;
    if !INDEX.contains(&d) {
        return Err(ferroflow_tensor::Error::type_error(format!(
            "{}: output_dtype must be int32 or int64, got {d}",
            ctx.def.name
        )));
    }
    let dims = vec![
        ctx.shape(0).dim(0),
        n.filter(|&k| k >= 0).map(|k| k as usize),
    ];
    single(d, PartialShape::from_dims(dims))
}

fn multinomial(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    multinomial_out(ctx)
}

fn stateless_multinomial(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    seed_vector(ctx, 2)?;
    multinomial_out(ctx)
}

/// `shape` followed by the shape of input `param` (RandomGamma, RandomPoisson).
fn shape_then_param(ctx: &InferContext, param: usize) -> PartialShape {
    let s = ctx.shape_value(0);
    match (s.dims(), ctx.shape(param).dims()) {
        (Some(a), Some(b)) => PartialShape::from_dims(a.iter().chain(b).copied().collect()),
        _ => PartialShape::unknown(),
    }
}

fn random_gamma(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    let d = ctx.expect_dtype(1, FLOATS)?;
    single(d, shape_then_param(ctx, 1))
}

fn random_gamma_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Float32, DType::Float64])?;
    ctx.expect_same(0, 1)?;
    single(d, ctx.shape(1).clone())
}

fn random_poisson(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    let d = ctx.type_or("dtype", ctx.dtype(1))?;
    single(d, shape_then_param(ctx, 1))
}

fn stateless_gamma_v2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    seed_vector(ctx, 1)?;
    let d = ctx.expect_dtype(2, FLOATS)?;
    single(d, ctx.shape_value(0))
}

fn stateless_gamma_v3(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    key_counter_alg(ctx, 1)?;
    let d = ctx.expect_dtype(4, FLOATS)?;
    single(d, ctx.shape_value(0))
}

fn stateless_poisson(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    seed_vector(ctx, 1)?;
    ctx.expect_dtype(
        2,
        &[
            DType::Float16,
            DType::Float32,
            DType::Float64,
            DType::Int32,
            DType::Int64,
        ],
    )?;
    single(ctx.type_attr("dtype")?, ctx.shape_value(0))
}

fn stateless_binomial(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    seed_vector(ctx, 1)?;
    ctx.expect_dtype(2, &[DType::Float16, DType::Float32, DType::Float64])?;
    ctx.expect_same(2, 3)?;
    single(ctx.type_or("dtype", DType::Int64)?, ctx.shape_value(0))
}

fn stateless_ptn(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    seed_vector(ctx, 1)?;
    let d = ctx.expect_dtype(2, &[DType::Float16, DType::Float32, DType::Float64])?;
    for i in 3..6 {
        ctx.expect_same(2, i)?;
    }
    single(d, ctx.shape_value(0))
}

fn index_shuffle(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Int32, DType::Int64])?;
    ctx.expect_same(0, 2)?;
    ctx.expect_dtype(1, INDEX)?;
    single(d, ctx.shape(0).clone())
}

fn rng_read_and_skip(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int64])?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    single(DType::Int64, PartialShape::from_dims(vec![Some(3)]))
}

fn stateful_binomial(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int64])?;
    ctx.expect_dtype(2, INDEX)?;
    ctx.expect_dtype(3, &[DType::Float16, DType::Float32, DType::Float64])?;
    ctx.expect_same(3, 4)?;
    single(ctx.type_or("dtype", DType::Int64)?, ctx.shape_value(2))
}

pub fn ops() -> Vec<OpDef> {
    let key = &["shape", "key", "counter", "alg"];
    vec![
        OpDef::new("StatelessRandomGetKeyCounter", &["seed"], get_key_counter),
        OpDef::new(
            "StatelessRandomGetKeyCounterAlg",
            &["seed"],
            get_key_counter,
        ),
        OpDef::new("StatelessRandomGetAlg", &[], get_alg),
        OpDef::new("StatelessRandomUniformV2", key, v2_float),
        OpDef::new("StatelessRandomNormalV2", key, v2_float),
        OpDef::new("StatelessTruncatedNormalV2", key, v2_float),
        OpDef::new(
            "StatelessRandomUniformIntV2",
            &["shape", "key", "counter", "alg", "minval", "maxval"],
            v2_int,
        ),
        OpDef::new("StatelessRandomUniformFullIntV2", key, v2_full_int),
        OpDef::new("StatelessRandomUniform", &["shape", "seed"], v1_float),
        OpDef::new("StatelessRandomNormal", &["shape", "seed"], v1_float),
        OpDef::new("StatelessTruncatedNormal", &["shape", "seed"], v1_float),
        OpDef::new(
            "StatelessRandomUniformInt",
            &["shape", "seed", "minval", "maxval"],
            v1_int,
        ),
        OpDef::new(
            "StatelessRandomUniformFullInt",
            &["shape", "seed"],
            v1_full_int,
        ),
        OpDef::new(
            "StatelessMultinomial",
            &["logits", "num_samples", "seed"],
            stateless_multinomial,
        ),
        OpDef::new(
            "StatelessRandomBinomial",
            &["shape", "seed", "counts", "probs"],
            stateless_binomial,
        ),
        OpDef::new(
            "StatelessRandomGammaV2",
            &["shape", "seed", "alpha"],
            stateless_gamma_v2,
        ),
        OpDef::new(
            "StatelessRandomGammaV3",
            &["shape", "key", "counter", "alg", "alpha"],
            stateless_gamma_v3,
        ),
        OpDef::new(
            "StatelessRandomPoisson",
            &["shape", "seed", "lam"],
            stateless_poisson,
        ),
        OpDef::new(
            "StatelessParameterizedTruncatedNormal",
            &["shape", "seed", "means", "stddevs", "minvals", "maxvals"],
            stateless_ptn,
        ),
        OpDef::new("Multinomial", &["logits", "num_samples"], multinomial).stateful(),
        OpDef::new("RandomGamma", &["shape", "alpha"], random_gamma).stateful(),
        OpDef::new("RandomGammaGrad", &["alpha", "sample"], random_gamma_grad),
        OpDef::new("RandomPoisson", &["shape", "rate"], random_poisson).stateful(),
        OpDef::new("RandomPoissonV2", &["shape", "rate"], random_poisson).stateful(),
        // tf.random.Generator's ops. TensorFlow passes the state as a resource
        // handle; ferroflow passes a reference to the int64 state variable.
        OpDef::new(
            "RngReadAndSkip",
            &["resource", "alg", "delta"],
            rng_read_and_skip,
        )
        .refs(&[0]),
        OpDef::new(
            "StatefulRandomBinomial",
            &["resource", "algorithm", "shape", "counts", "probs"],
            stateful_binomial,
        )
        .refs(&[0]),
        OpDef::new(
            "RandomIndexShuffle",
            &["index", "seed", "max_index"],
            index_shuffle,
        ),
    ]
}
