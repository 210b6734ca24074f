//! More `tf.nn` ops with TensorFlow's names, inputs, outputs and attrs:
//! 3-D convolution (`Conv3D`, `Conv3DBackpropInputV2`,
//! `Conv3DBackpropFilterV2`) and pooling (`MaxPool3D`, `AvgPool3D` and
//! their gradients) over NDHWC tensors, grayscale dilation (`Dilation2D`
//! and its backprops) CTC (`CTCLoss`, `CTCGreedyDecoder`, `CTCBeamSearchDecoder`) and
//! fractional pooling (`FractionalMaxPool`, `FractionalAvgPool` and their
//! gradients).

use super::conv::{dims4, spatial};
use super::{single, InferContext, OpDef, FLOATS, INDEX};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::conv3d::{Conv3dParams, Pool3dParams};
use ferroflow_tensor::kernels::morphology::Dilation2dParams;
use ferroflow_tensor::{DType, Error, Result};

const CONV3D_TYPES: &[DType] = &[
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
];

fn require_ndhwc(ctx: &InferContext) -> Result<()> {
    let f = ctx.attrs().str_or("data_format", "NDHWC")?;
    if f != "NDHWC" {
        return Err(Error::unimplemented(format!(
            "{} '{}': data_format {f} is not supported, ferroflow's CPU kernels are NDHWC only \
             (tf.nn's 3-D functions accept NCDHW and transpose it themselves)",
            ctx.def.name, ctx.name
        )));
    }
    Ok(())
}

fn conv3d_params(ctx: &InferContext) -> Result<Conv3dParams> {
    let a = ctx.attrs();
    Conv3dParams::parse(
        ctx.def.name,
        &a.ints("strides")?,
        &a.ints("dilations")?,
        &a.str_or("padding", "")?,
    )
    .map_err(|e| ctx.shape_error(e.message()))
}

fn pool3d_params(ctx: &InferContext) -> Result<Pool3dParams> {
    let a = ctx.attrs();
    Pool3dParams::parse(
        ctx.def.name,
        &a.ints("ksize")?,
        &a.ints("strides")?,
        &a.str_or("padding", "")?,
    )
    .map_err(|e| ctx.shape_error(e.message()))
}

fn dims5(ctx: &InferContext, i: usize) -> Result<[Option<usize>; 5]> {
    ctx.expect_rank(i, 5)?;
    let s = ctx.shape(i);
    Ok([s.dim(0), s.dim(1), s.dim(2), s.dim(3), s.dim(4)])
}

/// The shape given by a 1-D size input of 5 elements.
fn sizes5(ctx: &InferContext, i: usize) -> Result<PartialShape> {
    ctx.expect_dtype(i, INDEX)?;
    ctx.expect_rank(i, 1)?;
    if let Some(n) = ctx.shape(i).dim(0) {
        if n != 5 {
            return Err(ctx.shape_error(format!("Dimension must be 5 but is {n}")));
        }
    }
    let v = ctx.shape_value(i);
    Ok(if v.rank() == Some(5) {
        v
    } else {
        PartialShape::unknown_dims(5)
    })
}

fn conv3d(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, CONV3D_TYPES)?;
    ctx.expect_same(0, 1)?;
    require_ndhwc(ctx)?;
    let p = conv3d_params(ctx)?;
    let x = dims5(ctx, 0)?;
    let f = dims5(ctx, 1)?;
    if let (Some(ic), Some(fic)) = (x[4], f[3]) {
        if fic == 0 || ic % fic != 0 {
            return Err(ctx.shape_error(format!(
                "Input depth divisible by filter depth: {ic} vs {fic}"
            )));
        }
    }
    let mut out = vec![x[0]];
    for j in 0..3 {
        out.push(spatial(
            ctx,
            x[j + 1],
            f[j],
            p.strides[j + 1],
            p.dilations[j + 1],
            p.padding,
            0,
        )?);
    }
    out.push(f[4]);
    single(d, PartialShape::from_dims(out))
}

fn conv3d_backprop_input(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(1, CONV3D_TYPES)?;
    ctx.expect_same(1, 2)?;
    require_ndhwc(ctx)?;
    conv3d_params(ctx)?;
    let sizes = sizes5(ctx, 0)?;
    let f = dims5(ctx, 1)?;
    let dy = dims5(ctx, 2)?;
    if let (Some(a), Some(b)) = (dy[4], f[4]) {
        if a != b {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}")));
        }
    }
    let s = sizes.dims().unwrap_or(&[]);
    let out = vec![s[0].or(dy[0]), s[1], s[2], s[3], s[4].or(f[3])];
    single(d, PartialShape::from_dims(out))
}

fn conv3d_backprop_filter(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, CONV3D_TYPES)?;
    ctx.expect_same(0, 2)?;
    require_ndhwc(ctx)?;
    conv3d_params(ctx)?;
    let sizes = sizes5(ctx, 1)?;
    let x = dims5(ctx, 0)?;
    let dy = dims5(ctx, 2)?;
    let s = sizes.dims().unwrap_or(&[]);
    let out = vec![s[0], s[1], s[2], s[3].or(x[4]), s[4].or(dy[4])];
    single(d, PartialShape::from_dims(out))
}

fn pooled3d(ctx: &InferContext, i: usize, p: &Pool3dParams) -> Result<PartialShape> {
    let x = dims5(ctx, i)?;
    let mut out = vec![x[0]];
    for j in 0..3 {
        out.push(spatial(
            ctx,
            x[j + 1],
            Some(p.ksize[j + 1]),
            p.strides[j + 1],
            1,
            p.padding,
            0,
        )?);
    }
    out.push(x[4]);
    Ok(PartialShape::from_dims(out))
}

fn pool3d(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, CONV3D_TYPES)?;
    require_ndhwc(ctx)?;
    let p = pool3d_params(ctx)?;
    single(d, pooled3d(ctx, 0, &p)?)
}

/// MaxPool3DGrad(orig_input, orig_output, grad) -> orig_input's shape;
/// MaxPool3DGradGrad(...) -> orig_output's shape.
fn max_pool3d_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(2, CONV3D_TYPES)?;
    ctx.expect_dtype(0, CONV3D_TYPES)?;
    ctx.expect_same(0, 1)?;
    require_ndhwc(ctx)?;
    let p = pool3d_params(ctx)?;
    let x = ctx.shape(0).with_rank(5, "orig_input");
    let x = x.map_err(|e| ctx.shape_error(e.message()))?;
    let y = pooled3d(ctx, 0, &p)?;
    let y = y.merge(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error("orig_output does not have the shape the pool of orig_input has")
    })?;
    let (gshape, out) = if ctx.def.name == "MaxPool3DGrad" {
        (&y, x.clone())
    } else {
        (&x, y.clone())
    };
    if !ctx.shape(2).is_compatible_with(gshape) {
        return Err(ctx.shape_error(format!("grad must have shape {gshape}")));
    }
    single(d, out)
}

fn avg_pool3d_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(1, CONV3D_TYPES)?;
    require_ndhwc(ctx)?;
    pool3d_params(ctx)?;
    ctx.expect_dtype(0, &[DType::Int32])?;
    let sizes = sizes5(ctx, 0)?;
    ctx.expect_rank(1, 5)?;
    single(d, sizes)
}

fn dilation_params(ctx: &InferContext) -> Result<Dilation2dParams> {
    let a = ctx.attrs();
    Dilation2dParams::parse(
        ctx.def.name,
        &a.ints("strides")?,
        &a.ints("rates")?,
        &a.str_or("padding", "")?,
    )
    .map_err(|e| ctx.shape_error(e.message()))
}

fn dilation2d_out(ctx: &InferContext) -> Result<(DType, PartialShape)> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_same(0, 1)?;
    let p = dilation_params(ctx)?;
    let x = dims4(ctx, 0)?;
    ctx.expect_rank(1, 3)?;
    let f = ctx.shape(1);
    if let (Some(a), Some(b)) = (x[3], f.dim(2)) {
        if a != b {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}")));
        }
    }
    let (s, r) = (p.strides, p.rates);
    let oh = spatial(ctx, x[1], f.dim(0), s[1], r[1], p.padding, 0)?;
    let ow = spatial(ctx, x[2], f.dim(1), s[2], r[2], p.padding, 1)?;
    Ok((
        d,
        PartialShape::from_dims(vec![x[0], oh, ow, x[3].or(f.dim(2))]),
    ))
}

fn dilation2d(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let (d, out) = dilation2d_out(ctx)?;
    single(d, out)
}

fn dilation2d_backprop(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let (d, out) = dilation2d_out(ctx)?;
    ctx.expect_same(0, 2)?;
    if !ctx.shape(2).is_compatible_with(&out) {
        return Err(ctx.shape_error(format!("out_backprop must have shape {out}")));
    }
    let which = if ctx.def.name == "Dilation2DBackpropInput" {
        0
    } else {
        1
    };
    single(d, ctx.shape(which).clone())
}

/// CTCLoss(inputs [T, B, C], labels_indices, labels_values, sequence_length)
/// -> (loss [B], gradient [T, B, C]).
fn ctc_loss(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Float32, DType::Float64])?;
    ctx.expect_rank(0, 3)?;
    ctx.expect_dtype(1, &[DType::Int64])?;
    ctx.expect_rank(1, 2)?;
    ctx.expect_dtype(2, &[DType::Int32])?;
    ctx.expect_rank(2, 1)?;
    ctx.expect_dtype(3, &[DType::Int32])?;
    ctx.expect_rank(3, 1)?;
    let x = ctx.shape(0).clone();
    let batch = match (x.dim(1), ctx.shape(3).dim(0)) {
        (Some(a), Some(b)) if a != b => {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}")))
        }
        (a, b) => a.or(b),
    };
    let grad = PartialShape::from_dims(vec![x.dim(0), batch, x.dim(2)]);
    Ok(vec![
        OutputInfo::new(d, PartialShape::from_dims(vec![batch])),
        OutputInfo::new(d, grad),
    ])
}

/// CTCGreedyDecoder(inputs, sequence_length) -> (decoded_indices,
/// decoded_values, decoded_shape, log_probability [B, 1]).
fn ctc_greedy_decoder(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Float32, DType::Float64])?;
    ctx.expect_rank(0, 3)?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.expect_rank(1, 1)?;
    let batch = ctx.shape(0).dim(1).or(ctx.shape(1).dim(0));
    Ok(vec![
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![None, Some(2)])),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![None])),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![Some(2)])),
        OutputInfo::new(d, PartialShape::from_dims(vec![batch, Some(1)])),
    ])
}

/// CTCBeamSearchDecoder(inputs, sequence_length) -> (top_paths x
/// decoded_indices, top_paths x decoded_values, top_paths x decoded_shape,
/// log_probability [B, top_paths]).
fn ctc_beam_search_decoder(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Float32, DType::Float64])?;
    ctx.expect_rank(0, 3)?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.expect_rank(1, 1)?;
    let top = ctx.int("top_paths")?;
    let width = ctx.int("beam_width")?;
    if top <= 0 || width <= 0 {
        return Err(ctx.shape_error(format!(
            "beam_width ({width}) and top_paths ({top}) must be positive"
        )));
    }
    let batch = ctx.shape(0).dim(1).or(ctx.shape(1).dim(0));
    let top = top as usize;
    let mut out = Vec::with_capacity(3 * top + 1);
    for _ in 0..top {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![None, Some(2)]),
        ));
    }
    for _ in 0..top {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![None]),
        ));
    }
    for _ in 0..top {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![Some(2)]),
        ));
    }
    out.push(OutputInfo::new(
        d,
        PartialShape::from_dims(vec![batch, Some(top)]),
    ));
    Ok(out)
}

/// FractionalMaxPool / FractionalAvgPool(value) -> (output,
/// row_pooling_sequence, col_pooling_sequence).
fn fractional_pool(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Float32, DType::Float64])?;
    let x = dims4(ctx, 0)?;
    let ratio = match ctx.attrs().get("pooling_ratio") {
        Some(crate::attr::AttrValue::FloatList(v)) => v.clone(),
        _ => return Err(ctx.shape_error("pooling_ratio must be a list of 4 floats")),
    };
    if ratio.len() != 4 {
        return Err(ctx.shape_error(format!(
            "pooling_ratio field must specify 4 dimensions, got {}",
            ratio.len()
        )));
    }
    if ratio[0] != 1.0 || ratio[3] != 1.0 {
        return Err(ctx.shape_error(
            "Fractional pooling is not yet supported on the batch nor channel dimension.",
        ));
    }
    let mut out = vec![x[0]];
    for i in 1..3 {
        if ratio[i] < 1.0 {
            return Err(ctx.shape_error(format!(
                "pooling_ratio cannot be smaller than 1, got: {}",
                ratio[i]
            )));
        }
        out.push(x[i].map(|v| (v as f64 / ratio[i]).floor() as usize));
    }
    out.push(x[3]);
    let (rows, cols) = (out[1].map(|v| v + 1), out[2].map(|v| v + 1));
    Ok(vec![
        OutputInfo::new(d, PartialShape::from_dims(out)),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![rows])),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![cols])),
    ])
}

/// FractionalMaxPoolGrad(orig_input, orig_output, out_backprop, rows, cols)
/// -> orig_input's shape.
fn fractional_max_pool_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Float32, DType::Float64])?;
    ctx.expect_same(0, 2)?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_dtype(3, &[DType::Int64])?;
    ctx.expect_dtype(4, &[DType::Int64])?;
    single(d, ctx.shape(0).clone())
}

/// FractionalAvgPoolGrad(orig_input_tensor_shape, out_backprop, rows, cols)
/// -> the shape given by its first input.
fn fractional_avg_pool_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(1, &[DType::Float32, DType::Float64])?;
    ctx.expect_dtype(0, &[DType::Int64])?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_dtype(2, &[DType::Int64])?;
    ctx.expect_dtype(3, &[DType::Int64])?;
    let v = ctx.shape_value(0);
    single(
        d,
        if v.rank() == Some(4) {
            v
        } else {
            PartialShape::unknown_dims(4)
        },
    )
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Conv3D", &["input", "filter"], conv3d),
        OpDef::new(
            "Conv3DBackpropInputV2",
            &["input_sizes", "filter", "out_backprop"],
            conv3d_backprop_input,
        ),
        OpDef::new(
            "Conv3DBackpropFilterV2",
            &["input", "filter_sizes", "out_backprop"],
            conv3d_backprop_filter,
        ),
        OpDef::new("MaxPool3D", &["input"], pool3d),
        OpDef::new("AvgPool3D", &["input"], pool3d),
        OpDef::new(
            "MaxPool3DGrad",
            &["orig_input", "orig_output", "grad"],
            max_pool3d_grad,
        ),
        OpDef::new(
            "MaxPool3DGradGrad",
            &["orig_input", "orig_output", "grad"],
            max_pool3d_grad,
        ),
        OpDef::new(
            "AvgPool3DGrad",
            &["orig_input_shape", "grad"],
            avg_pool3d_grad,
        ),
        OpDef::new("Dilation2D", &["input", "filter"], dilation2d),
        OpDef::new(
            "Dilation2DBackpropInput",
            &["input", "filter", "out_backprop"],
            dilation2d_backprop,
        ),
        OpDef::new(
            "Dilation2DBackpropFilter",
            &["input", "filter", "out_backprop"],
            dilation2d_backprop,
        ),
        OpDef::new(
            "CTCLoss",
            &[
                "inputs",
                "labels_indices",
                "labels_values",
                "sequence_length",
            ],
            ctc_loss,
        ),
        OpDef::new(
            "CTCGreedyDecoder",
            &["inputs", "sequence_length"],
            ctc_greedy_decoder,
        ),
        OpDef::new(
            "CTCBeamSearchDecoder",
            &["inputs", "sequence_length"],
            ctc_beam_search_decoder,
        ),
        OpDef::new("FractionalMaxPool", &["value"], fractional_pool).stateful(),
        OpDef::new("FractionalAvgPool", &["value"], fractional_pool).stateful(),
        OpDef::new(
            "FractionalMaxPoolGrad",
            &[
                "orig_input",
                "orig_output",
                "out_backprop",
                "row_pooling_sequence",
                "col_pooling_sequence",
            ],
            fractional_max_pool_grad,
        ),
        OpDef::new(
            "FractionalAvgPoolGrad",
            &[
                "orig_input_tensor_shape",
                "out_backprop",
                "row_pooling_sequence",
                "col_pooling_sequence",
            ],
            fractional_avg_pool_grad,
        ),
    ]
}
