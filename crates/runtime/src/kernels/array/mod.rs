//! Kernels of the array ops, along the seams of the op definitions
//! (`ferroflow_graph`'s `ops/array/`) and of the numeric work they call
//! (`ferroflow_tensor::kernels::array`, split the same way):
//!
//! * `layout`: reshaping and rearranging whole tensors (`Reshape`,
//!   `Transpose`, concat/split, `Pack`/`Unpack`, `Tile`, the pads,
//!   reverses, `Roll`, `BroadcastTo`, the space/batch ops);
//! * `indexing`: parts chosen by position (`Slice`, `StridedSlice`,
//!   gathers, `UnravelIndex`, `ExtractVolumePatches`);
//! * `fill`: tensors made from a few numbers (`Fill`, `ZerosLike`,
//!   `OnesLike`, `Range`, `LinSpace`, `OneHot`);
//! * `search`: elements chosen or counted by their values (`Unique`,
//!   `UniqueWithCounts`, `Where`, the bound searches,
//!   `HistogramFixedWidth`, `EditDistance`);
//! * this module: sources (`Const`, `Placeholder`), the identity family,
//!   the shape queries, `Bitcast`, `EnsureShape`, `BroadcastArgs` and
//!   `Assert`, with the tensor formatting `Assert` and `Print` share.

mod fill;
mod indexing;
mod layout;
mod search;

use super::{boxed, tf_type_name};
use crate::kernel::{factory, Fixed, Forward, KernelFactory, Value};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array as k;
use ferroflow_tensor::kernels::elementwise::cast;
use ferroflow_tensor::{bail, ensure, DType, Data, Error, Result, Shape, Tensor};

/// A shape given as a 1-D integer tensor.
fn shape_arg(t: &Tensor, what: &str) -> Result<Shape> {
    if t.rank() > 1 {
        bail!(
            invalid_argument,
            "{what} must be a vector, got shape {}",
            t.shape()
        );
    }
    Shape::from_i64(&t.to_i64_vec()?)
}

/// Formats a tensor the way TensorFlow's `Assert` and `Print` show it: the
/// first `limit` elements, nested brackets for every dimension but the
/// outermost (`1 2 3`, `[1 2][3 4]`), `...` when truncated, bools as 1/0 and
/// floats in their shortest round-trip form.
pub(crate) fn summarize(t: &Tensor, limit: usize) -> String {
    let items: Vec<String> = match t.data() {
        Data::Str(v) => v
            .iter()
            .take(limit)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect(),
        Data::Bool(v) => v
            .iter()
            .take(limit)
            .map(|&b| u8::from(b).to_string())
            .collect(),
        Data::F32(v) => v.iter().take(limit).map(|x| x.to_string()).collect(),
        Data::F64(v) => v.iter().take(limit).map(|x| x.to_string()).collect(),
        Data::F16(v) => v
            .iter()
            .take(limit)
            .map(|x| x.to_f32().to_string())
            .collect(),
        Data::BF16(v) => v
            .iter()
            .take(limit)
            .map(|x| x.to_f32().to_string())
            .collect(),
        _ => t
            .to_i64_vec()
            .unwrap_or_default()
            .iter()
            .take(limit)
            .map(|x| x.to_string())
            .collect(),
    };
    let dims = t.dims();
    if dims.is_empty() {
        return items.into_iter().next().unwrap_or_default();
    }
    let mut out = String::new();
    let strides = t.shape().strides();
    for (i, item) in items.iter().enumerate() {
        // Open a bracket for every inner dimension that starts at element i.
        let opens = (1..dims.len()).filter(|&d| i % strides[d - 1] == 0).count();
        if i > 0 && opens == 0 {
            out.push(' ');
        }
        out.push_str(&"[".repeat(opens));
        out.push_str(item);
        let closes = (1..dims.len())
            .filter(|&d| (i + 1) % strides[d - 1] == 0)
            .count();
        out.push_str(&"]".repeat(closes));
    }
    if t.num_elements() > limit {
        out.push_str("...");
    }
    out
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "Const",
        factory(|init| {
            let value = init.node.attrs.tensor("value")?.clone();
            Ok(Box::new(Fixed(Value::Tensor(value))))
        }),
    );
    reg(
        "Placeholder",
        factory(|init| {
            let dtype = init.node.attrs.dtype("dtype")?;
            let shape = init.node.attrs.shape("shape")?;
            let shape = match shape.dims() {
                None => "<unknown>".to_string(),
                Some(d) => format!(
                    "[{}]",
                    d.iter()
                        .map(|x| x.map_or("?".into(), |v| v.to_string()))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            };
            let msg = format!(
                "You must feed a value for placeholder tensor '{}' with dtype {} and shape {shape}",
                init.node.name,
                tf_type_name(dtype)
            );
            boxed(move |_| Err(Error::invalid_argument(msg.clone())))
        }),
    );
    for name in [
        "PlaceholderWithDefault",
        "Identity",
        "StopGradient",
        "Snapshot",
        "GuaranteeConst",
    ] {
        reg(name, factory(|_| Ok(Box::new(Forward))));
    }
    reg("NoOp", factory(|_| boxed(|_| Ok(()))));
    for name in ["Shape", "Size"] {
        let size = name == "Size";
        reg(
            name,
            factory(move |init| {
                let out = init.node.attrs.dtype_or("out_type", DType::Int32)?;
                boxed(move |ctx| {
                    let x = ctx.input(0)?;
                    let v = if size {
                        Tensor::scalar(x.num_elements() as i64)
                    } else {
                        Tensor::vector(x.shape().to_i64())
                    };
                    ctx.output(cast(&v, out)?);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "ShapeN",
        factory(|init| {
            let out = init.node.attrs.dtype_or("out_type", DType::Int32)?;
            boxed(move |ctx| {
                for i in 0..ctx.num_inputs() {
                    let v = Tensor::vector(ctx.input(i)?.shape().to_i64());
                    ctx.output(cast(&v, out)?);
                }
                Ok(())
            })
        }),
    );
    reg(
        "Rank",
        factory(|_| {
            boxed(|ctx| {
                let r = ctx.input(0)?.rank() as i32;
                ctx.output(Tensor::scalar(r));
                Ok(())
            })
        }),
    );
    reg(
        "Bitcast",
        factory(|init| {
            let to = init.node.attrs.dtype("type")?;
            boxed(move |ctx| {
                let y = ferroflow_tensor::kernels::bitcast::bitcast(ctx.input(0)?, to)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "IdentityN",
        factory(|_| {
            boxed(|ctx| {
                for i in 0..ctx.num_inputs() {
                    let t = ctx.input(i)?.clone();
                    ctx.output(t);
                }
                Ok(())
            })
        }),
    );
    reg(
        "EnsureShape",
        factory(|init| {
            let want = init.node.attrs.shape("shape")?;
            let input = init.node.inputs[0];
            let src = &init.graph.node(input.node).name;
            let name = if input.index == 0 {
                src.clone()
            } else {
                format!("{src}:{}", input.index)
            };
            boxed(move |ctx| {
                let x = ctx.input(0)?;
                ensure!(
                    want.is_compatible_with_shape(x.shape()),
                    invalid_argument,
                    "Shape of tensor {name} {} is not compatible with expected shape {}.",
                    x.shape(),
                    tf_text(&want)
                );
                let t = x.clone();
                ctx.output(t);
                Ok(())
            })
        }),
    );
    reg(
        "BroadcastArgs",
        factory(|_| {
            boxed(|ctx| {
                let y = k::broadcast_args(ctx.input(0)?, ctx.input(1)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Assert",
        factory(|init| {
            let summarize_n = init.node.attrs.int_or("summarize", 3)?.max(0) as usize;
            boxed(move |ctx| {
                if ctx.input(0)?.scalar_bool()? {
                    return Ok(());
                }
                let parts: Vec<String> = (1..ctx.num_inputs())
                    .map(|i| ctx.input(i).map(|t| summarize(t, summarize_n)))
                    .collect::<Result<_>>()?;
                Err(Error::invalid_argument(format!(
                    "assertion failed: [{}]",
                    parts.join("] [")
                )))
            })
        }),
    );
    reg(
        "Unimplemented",
        factory(|init| {
            let message = init.node.attrs.string("message")?;
            boxed(move |_| Err(Error::unimplemented(message.clone())))
        }),
    );
    layout::register(reg);
    indexing::register(reg);
    fill::register(reg);
    search::register(reg);
}

/// `[2,?]`, as TensorFlow prints a partial shape at run time.
fn tf_text(s: &ferroflow_graph::PartialShape) -> String {
    match s.dims() {
        None => "<unknown>".to_string(),
        Some(d) => format!(
            "[{}]",
            d.iter()
                .map(|x| x.map_or("?".to_string(), |v| v.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}
