//! Kernels of the 3-D convolution and pooling ops (NDHWC only;
//! construction already rejected other data formats), `Dilation2D` and its
//! backprops, `CTCLoss`, `CTCGreedyDecoder` and `CTCBeamSearchDecoder`.

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::conv3d::{self, Conv3dParams, Pool3dParams};
use ferroflow_tensor::kernels::ctc::{self, CtcLossOptions};
use ferroflow_tensor::kernels::fractional_pool::{self, FractionalParams};
use ferroflow_tensor::kernels::morphology::{self, Dilation2dParams};
use ferroflow_tensor::kernels::random::Philox;
use ferroflow_tensor::{bail, ensure, Error, Result, Tensor};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

fn conv_params(init: &KernelInit<'_>) -> Result<Conv3dParams> {
    let a = &init.node.attrs;
    Conv3dParams::parse(
        &init.node.op,
        &a.ints("strides")?,
        &a.ints("dilations")?,
        &a.str_or("padding", "")?,
    )
    .map_err(Error::into_runtime)
}

fn pool_params(init: &KernelInit<'_>) -> Result<Pool3dParams> {
    let a = &init.node.attrs;
    Pool3dParams::parse(
        &init.node.op,
        &a.ints("ksize")?,
        &a.ints("strides")?,
        &a.str_or("padding", "")?,
    )
    .map_err(Error::into_runtime)
}

fn dilation_params(init: &KernelInit<'_>) -> Result<Dilation2dParams> {
    let a = &init.node.attrs;
    Dilation2dParams::parse(
        &init.node.op,
        &a.ints("strides")?,
        &a.ints("rates")?,
        &a.str_or("padding", "")?,
    )
    .map_err(Error::into_runtime)
}

/// A 5-element size vector input (`input_sizes`, `filter_sizes`, ...).
fn sizes(t: &Tensor, op: &str, what: &str) -> Result<Vec<usize>> {
    let v = t.to_i64_vec()?;
    if t.rank() != 1 || v.len() != 5 || v.iter().any(|&d| d < 0) {
        bail!(
            invalid_argument,
            "{op}: {what} must be a vector of 5 non-negative sizes, got {v:?} of shape {}",
            t.shape()
        );
    }
    Ok(v.into_iter().map(|d| d as usize).collect())
}

/// A list-of-floats attribute.
fn float_list(a: &ferroflow_graph::Attrs, name: &str) -> Result<Vec<f64>> {
    match a.get(name) {
        Some(ferroflow_graph::AttrValue::FloatList(v)) => Ok(v.clone()),
        other => Err(Error::invalid_argument(format!(
            "attr '{name}' must be a list of floats, got {other:?}"
        ))),
    }
}

/// The pooling sequences an int64 vector input holds.
fn sequence(t: &Tensor, op: &str, what: &str) -> Result<Vec<i64>> {
    ensure!(
        t.rank() == 1,
        invalid_argument,
        "{op}: {what} must be a vector, got shape {}",
        t.shape()
    );
    t.to_i64_vec()
}

/// A fractional pool kernel: its generator (the op's seeds, or fresh ones
/// when both are 0), a counter of runs, and (when `deterministic`) the
/// sequences of its first run.
fn fractional_factory(max: bool) -> KernelFactory {
    factory(move |init| {
        let a = &init.node.attrs;
        let op = init.node.op.clone();
        let p = FractionalParams {
            ratio: float_list(a, "pooling_ratio")?,
            pseudo_random: a.bool_or("pseudo_random", false)?,
            overlapping: a.bool_or("overlapping", false)?,
        };
        let deterministic = a.bool_or("deterministic", false)?;
        let (mut seed, mut seed2) = (a.int_or("seed", 0)?, a.int_or("seed2", 0)?);
        if !deterministic && (seed != 0 || seed2 != 0) {
            bail!(
                invalid_argument,
                "{op}: Both seed and seed2 should be 0 if `deterministic` is false."
            );
        }
        if seed == 0 && seed2 == 0 {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            seed = (t ^ (std::process::id() as u64) << 32) as i64;
            seed2 = (t.rotate_left(17) ^ 0x9E37_79B9_7F4A_7C15) as i64;
        }
        let gen = Philox::new(seed as u64, seed2 as u64);
        let runs = AtomicU64::new(0);
        let fixed: Mutex<Option<(Vec<i64>, Vec<i64>)>> = Mutex::new(None);
        boxed(move |ctx| {
            let x = ctx.input(0)?;
            let base = if deterministic {
                0
            } else {
                runs.fetch_add(1, Ordering::Relaxed) << 40
            };
            let (r, c) = fractional_pool::pooling_sequences(&op, x.dims(), &p, &gen, base)?;
            let (r, c) = if deterministic {
                let mut f = fixed
                    .lock()
                    .map_err(|_| Error::internal(format!("{op}: a previous run panicked")))?;
                match &*f {
                    Some((r0, c0)) if r0.len() == r.len() && c0.len() == c.len() => {}
                    _ => *f = Some((r, c)),
                }
                f.clone().expect("set above")
            } else {
                (r, c)
            };
            let y = fractional_pool::pool_with_sequences(x, &r, &c, p.overlapping, max)?;
            ctx.output(y);
            ctx.output(Tensor::from_vec(vec![r.len()], r)?);
            ctx.output(Tensor::from_vec(vec![c.len()], c)?);
            Ok(())
        })
    })
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg("FractionalMaxPool", fractional_factory(true));
    reg("FractionalAvgPool", fractional_factory(false));
    reg(
        "FractionalMaxPoolGrad",
        factory(|init| {
            let overlapping = init.node.attrs.bool_or("overlapping", false)?;
            boxed(move |ctx| {
                let op = "FractionalMaxPoolGrad";
                let r = sequence(ctx.input(3)?, op, "row_pooling_sequence")?;
                let c = sequence(ctx.input(4)?, op, "col_pooling_sequence")?;
                let dx = fractional_pool::fractional_max_pool_grad(
                    ctx.input(0)?,
                    ctx.input(1)?,
                    ctx.input(2)?,
                    &r,
                    &c,
                    overlapping,
                )?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "FractionalAvgPoolGrad",
        factory(|init| {
            let overlapping = init.node.attrs.bool_or("overlapping", false)?;
            boxed(move |ctx| {
                let op = "FractionalAvgPoolGrad";
                let shape = ctx.input(0)?.to_i64_vec()?;
                if shape.len() != 4 || shape.iter().any(|&d| d < 0) {
                    bail!(
                        invalid_argument,
                        "{op}: orig_input_tensor_shape must be a vector of 4 non-negative sizes, got {shape:?}"
                    );
                }
                let shape: Vec<usize> = shape.into_iter().map(|d| d as usize).collect();
                let r = sequence(ctx.input(2)?, op, "row_pooling_sequence")?;
                let c = sequence(ctx.input(3)?, op, "col_pooling_sequence")?;
                let dx = fractional_pool::fractional_avg_pool_grad(
                    &shape,
                    ctx.input(1)?,
                    &r,
                    &c,
                    overlapping,
                )?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "Conv3D",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let y = conv3d::conv3d(ctx.input(0)?, ctx.input(1)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Conv3DBackpropInputV2",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let s = sizes(ctx.input(0)?, "Conv3DBackpropInputV2", "input_sizes")?;
                let dx = conv3d::conv3d_backprop_input(&s, ctx.input(1)?, ctx.input(2)?, &p)?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "Conv3DBackpropFilterV2",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let s = sizes(ctx.input(1)?, "Conv3DBackpropFilterV2", "filter_sizes")?;
                let dw = conv3d::conv3d_backprop_filter(ctx.input(0)?, &s, ctx.input(2)?, &p)?;
                ctx.output(dw);
                Ok(())
            })
        }),
    );
    reg(
        "MaxPool3D",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let y = conv3d::max_pool3d(ctx.input(0)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "AvgPool3D",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let y = conv3d::avg_pool3d(ctx.input(0)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MaxPool3DGrad",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let dx = conv3d::max_pool3d_grad(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, &p)?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "MaxPool3DGradGrad",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let y =
                    conv3d::max_pool3d_grad_grad(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "AvgPool3DGrad",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let s = sizes(ctx.input(0)?, "AvgPool3DGrad", "orig_input_shape")?;
                let dx = conv3d::avg_pool3d_grad(&s, ctx.input(1)?, &p)?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "Dilation2D",
        factory(|init| {
            let p = dilation_params(init)?;
            boxed(move |ctx| {
                let y = morphology::dilation2d(ctx.input(0)?, ctx.input(1)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Dilation2DBackpropInput",
        factory(|init| {
            let p = dilation_params(init)?;
            boxed(move |ctx| {
                let dx = morphology::dilation2d_backprop_input(
                    ctx.input(0)?,
                    ctx.input(1)?,
                    ctx.input(2)?,
                    &p,
                )?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "Dilation2DBackpropFilter",
        factory(|init| {
            let p = dilation_params(init)?;
            boxed(move |ctx| {
                let df = morphology::dilation2d_backprop_filter(
                    ctx.input(0)?,
                    ctx.input(1)?,
                    ctx.input(2)?,
                    &p,
                )?;
                ctx.output(df);
                Ok(())
            })
        }),
    );
    reg(
        "CTCLoss",
        factory(|init| {
            let a = &init.node.attrs;
            let o = CtcLossOptions {
                preprocess_collapse_repeated: a.bool_or("preprocess_collapse_repeated", false)?,
                ctc_merge_repeated: a.bool_or("ctc_merge_repeated", true)?,
                ignore_longer_outputs_than_inputs: a
                    .bool_or("ignore_longer_outputs_than_inputs", false)?,
            };
            boxed(move |ctx| {
                let (loss, grad) = ctc::ctc_loss(
                    ctx.input(0)?,
                    ctx.input(1)?,
                    ctx.input(2)?,
                    ctx.input(3)?,
                    &o,
                )?;
                ctx.output(loss);
                ctx.output(grad);
                Ok(())
            })
        }),
    );
    reg(
        "CTCGreedyDecoder",
        factory(|init| {
            let a = &init.node.attrs;
            let merge = a.bool_or("merge_repeated", false)?;
            let blank = a.int_or("blank_index", -1)?;
            boxed(move |ctx| {
                let (d, lp) = ctc::ctc_greedy_decoder(ctx.input(0)?, ctx.input(1)?, merge, blank)?;
                ctx.output(d.indices);
                ctx.output(d.values);
                ctx.output(d.shape);
                ctx.output(lp);
                Ok(())
            })
        }),
    );
    reg(
        "CTCBeamSearchDecoder",
        factory(|init| {
            let a = &init.node.attrs;
            let width = a.int("beam_width")?;
            let top = a.int("top_paths")?;
            let merge = a.bool_or("merge_repeated", true)?;
            boxed(move |ctx| {
                let (paths, lp) =
                    ctc::ctc_beam_search_decoder(ctx.input(0)?, ctx.input(1)?, width, top, merge)?;
                for p in &paths {
                    ctx.output(p.indices.clone());
                }
                for p in &paths {
                    ctx.output(p.values.clone());
                }
                for p in paths {
                    ctx.output(p.shape);
                }
                ctx.output(lp);
                Ok(())
            })
        }),
    );
}
