//! Convolution and pooling ops (NHWC): Conv2D and its two backprops,
//! MaxPool, AvgPool and their gradients, with TensorFlow's output-size
//! rules for SAME, VALID and EXPLICIT padding, strides and dilations.

use super::{single, InferContext, OpDef, FLOATS, INDEX, NUMERIC};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::conv::{Conv2dParams, Padding, Pool2dParams};
use ferroflow_tensor::{DType, Error, Result};

const CONV_TYPES: &[DType] = &[
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
    DType::Int32,
];

/// Only NHWC has kernels; `tf.nn` transposes NCHW tensors around the op.
pub(super) fn require_nhwc(ctx: &InferContext) -> Result<()> {
    let f = ctx.attrs().str_or("data_format", "NHWC")?;
    if f != "NHWC" {
        return Err(Error::unimplemented(format!(
            "{} '{}': data_format {f} is not supported, ferroflow's CPU kernels are NHWC only \
             (tf.nn's conv and pool functions accept NCHW and transpose it themselves)",
            ctx.def.name, ctx.name
        )));
    }
    Ok(())
}

pub(super) fn conv_params(ctx: &InferContext) -> Result<Conv2dParams> {
    let a = ctx.attrs();
    Conv2dParams::parse(
        ctx.def.name,
        &a.ints("strides")?,
        &a.ints("dilations")?,
        &a.str_or("padding", "")?,
        &a.ints("explicit_paddings")?,
    )
    .map_err(|e| ctx.shape_error(e.message()))
}

pub(super) fn pool_params(ctx: &InferContext) -> Result<Pool2dParams> {
    let a = ctx.attrs();
    let p = Pool2dParams::parse(
        ctx.def.name,
        &a.ints("ksize")?,
        &a.ints("strides")?,
        &a.str_or("padding", "")?,
        &a.ints("explicit_paddings")?,
    )
    .map_err(|e| ctx.shape_error(e.message()))?;
    if ctx.def.name.starts_with("AvgPool") && matches!(p.padding, Padding::Explicit { .. }) {
        return Err(ctx.shape_error(format!(
            "Attr 'padding' of '{}' Op passed string 'EXPLICIT' not in: \"SAME\", \"VALID\".",
            ctx.def.name
        )));
    }
    if p.ksize[3] != 1 || p.strides[3] != 1 {
        return Err(Error::unimplemented(format!(
            "{} '{}': pooling across the depth dimension (ksize {:?}, strides {:?}) is not supported",
            ctx.def.name, ctx.name, p.ksize, p.strides
        )));
    }
    Ok(p)
}

/// The four dimensions of a rank-4 input (all unknown for an unknown rank).
pub(super) fn dims4(ctx: &InferContext, i: usize) -> Result<[Option<usize>; 4]> {
    ctx.expect_rank(i, 4)?;
    let s = ctx.shape(i);
    Ok([s.dim(0), s.dim(1), s.dim(2), s.dim(3)])
}

/// One spatial output size (`dim`: 0 height, 1 width), as far as known.
pub(super) fn spatial(
    ctx: &InferContext,
    input: Option<usize>,
    window: Option<usize>,
    stride: usize,
    dilation: usize,
    padding: Padding,
    dim: usize,
) -> Result<Option<usize>> {
    let Some(input) = input else { return Ok(None) };
    if padding == Padding::Same {
        return Ok(Some(input.div_ceil(stride.max(1))));
    }
    let Some(window) = window else {
        return Ok(None);
    };
    let eff = (window.max(1) - 1) * dilation + 1;
    let padded = match padding {
        Padding::Explicit { h, w } => {
            let (b, a) = if dim == 0 { h } else { w };
            input + b + a
        }
        _ => input,
    };
    if padded < eff {
        return Err(ctx.shape_error(format!(
            "Negative dimension size caused by subtracting {eff} from {padded}"
        )));
    }
    let r = ferroflow_tensor::kernels::conv::windowed_output(
        input, window, stride, dilation, padding, dim,
    );
    Ok(r.ok().map(|(out, _)| out))
}

fn conv2d(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, CONV_TYPES)?;
    ctx.expect_same(0, 1)?;
    require_nhwc(ctx)?;
    let p = conv_params(ctx)?;
    let x = dims4(ctx, 0)?;
    let f = dims4(ctx, 1)?;
    if let (Some(ic), Some(fic)) = (x[3], f[2]) {
        if fic == 0 || ic % fic != 0 {
            return Err(ctx.shape_error(format!(
                "Depth of input ({ic}) is not a multiple of input depth of filter ({fic})"
            )));
        }
    }
    let (s, dl) = (p.strides, p.dilations);
    let oh = spatial(ctx, x[1], f[0], s[1], dl[1], p.padding, 0)?;
    let ow = spatial(ctx, x[2], f[1], s[2], dl[2], p.padding, 1)?;
    single(d, PartialShape::from_dims(vec![x[0], oh, ow, f[3]]))
}

/// The shape given by a 1-D size input of 4 elements.
pub(super) fn sizes_input(ctx: &InferContext, i: usize) -> Result<PartialShape> {
    ctx.expect_dtype(i, INDEX)?;
    ctx.expect_rank(i, 1)?;
    if let Some(n) = ctx.shape(i).dim(0) {
        if n != 4 {
            return Err(ctx.shape_error(format!("Dimension must be 4 but is {n}")));
        }
    }
    let v = ctx.shape_value(i);
    Ok(if v.rank() == Some(4) {
        v
    } else {
        PartialShape::unknown_dims(4)
    })
}

fn conv2d_backprop_input(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(1, CONV_TYPES)?;
    ctx.expect_same(1, 2)?;
    require_nhwc(ctx)?;
    conv_params(ctx)?;
    let sizes = sizes_input(ctx, 0)?;
    let f = dims4(ctx, 1)?;
    let dy = dims4(ctx, 2)?;
    if let (Some(a), Some(b)) = (dy[3], f[3]) {
        if a != b {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}")));
        }
    }
    let s = sizes.dims().unwrap_or(&[]);
    let out = vec![s[0].or(dy[0]), s[1], s[2], s[3].or(f[2])];
    single(d, PartialShape::from_dims(out))
}

fn conv2d_backprop_filter(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, CONV_TYPES)?;
    ctx.expect_same(0, 2)?;
    require_nhwc(ctx)?;
    conv_params(ctx)?;
    let sizes = sizes_input(ctx, 1)?;
    let x = dims4(ctx, 0)?;
    let dy = dims4(ctx, 2)?;
    let s = sizes.dims().unwrap_or(&[]);
    let out = vec![s[0], s[1], s[2].or(x[3]), s[3].or(dy[3])];
    single(d, PartialShape::from_dims(out))
}

/// Output shape of a pool over input `i`.
pub(super) fn pooled(ctx: &InferContext, i: usize, p: &Pool2dParams) -> Result<PartialShape> {
    let x = dims4(ctx, i)?;
    let (k, s) = (p.ksize, p.strides);
    let oh = spatial(ctx, x[1], Some(k[1]), s[1], 1, p.padding, 0)?;
    let ow = spatial(ctx, x[2], Some(k[2]), s[2], 1, p.padding, 1)?;
    Ok(PartialShape::from_dims(vec![x[0], oh, ow, x[3]]))
}

fn max_pool(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC)?;
    require_nhwc(ctx)?;
    let p = pool_params(ctx)?;
    single(d, pooled(ctx, 0, &p)?)
}

fn avg_pool(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    require_nhwc(ctx)?;
    let p = pool_params(ctx)?;
    single(d, pooled(ctx, 0, &p)?)
}

/// MaxPoolGrad(orig_input, orig_output, grad) -> orig_input's shape;
/// MaxPoolGradGrad(...) -> orig_output's shape.
fn max_pool_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_same(0, 2)?;
    require_nhwc(ctx)?;
    let p = pool_params(ctx)?;
    let x = ctx.shape(0).with_rank(4, "orig_input");
    let x = x.map_err(|e| ctx.shape_error(e.message()))?;
    let y = pooled(ctx, 0, &p)?;
    let y = y.merge(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error("orig_output does not have the shape the pool of orig_input has")
    })?;
    let (gshape, out) = if ctx.def.name == "MaxPoolGrad" {
        (&y, x.clone())
    } else {
        (&x, y.clone())
    };
    if !ctx.shape(2).is_compatible_with(gshape) {
        return Err(ctx.shape_error(format!("grad must have shape {gshape}")));
    }
    single(d, out)
}

fn avg_pool_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(1, FLOATS)?;
    require_nhwc(ctx)?;
    pool_params(ctx)?;
    let sizes = sizes_input(ctx, 0)?;
    ctx.expect_rank(1, 4)?;
    single(d, sizes)
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Conv2D", &["input", "filter"], conv2d),
        OpDef::new(
            "Conv2DBackpropInput",
            &["input_sizes", "filter", "out_backprop"],
            conv2d_backprop_input,
        ),
        OpDef::new(
            "Conv2DBackpropFilter",
            &["input", "filter_sizes", "out_backprop"],
            conv2d_backprop_filter,
        ),
        OpDef::new("MaxPool", &["input"], max_pool),
        OpDef::new(
            "MaxPoolGrad",
            &["orig_input", "orig_output", "grad"],
            max_pool_grad,
        ),
        OpDef::new(
            "MaxPoolGradGrad",
            &["orig_input", "orig_output", "grad"],
            max_pool_grad,
        ),
        OpDef::new("AvgPool", &["value"], avg_pool),
        OpDef::new("AvgPoolGrad", &["orig_input_shape", "grad"], avg_pool_grad),
    ]
}
