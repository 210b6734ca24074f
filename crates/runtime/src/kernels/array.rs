//! Kernels for sources, shape ops and data movement.

use super::{boxed, tf_type_name};
use crate::kernel::{factory, Fixed, Forward, KernelFactory, Value};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array::{self as k, PadMode, SliceMasks};
use ferroflow_tensor::kernels::elementwise::cast;
use ferroflow_tensor::{normalize_axis, DType, Data, Error, Result, Shape, Tensor};

/// A shape given as a 1-D integer tensor.
fn shape_arg(t: &Tensor, what: &str) -> Result<Shape> {
    if t.rank() > 1 {
        return Err(Error::invalid_argument(format!(
            "{what} must be a vector, got shape {}",
            t.shape()
        )));
    }
    Shape::from_i64(&t.to_i64_vec()?)
}

fn ones_like(x: &Tensor) -> Result<Tensor> {
    let one = cast(&Tensor::scalar(1i64), x.dtype())?;
    k::fill(x.shape(), &one)
}

/// Resolves a `Reshape` target, filling in at most one `-1`.
fn reshape_target(x: &Tensor, t: &Tensor) -> Result<Shape> {
    let dims = t.to_i64_vec()?;
    let n = x.num_elements();
    let mut unknown = None;
    let mut known: usize = 1;
    for (i, &d) in dims.iter().enumerate() {
        if d == -1 {
            if unknown.replace(i).is_some() {
                return Err(Error::invalid_argument(format!(
                    "only one input size may be -1, not both {} and {i}",
                    unknown.unwrap_or(0)
                )));
            }
        } else if d < 0 {
            return Err(Error::invalid_argument(format!(
                "size {i} must be non-negative, not {d}"
            )));
        } else {
            known *= d as usize;
        }
    }
    let mut out: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = unknown {
        if known == 0 || !n.is_multiple_of(known) {
            return Err(Error::invalid_argument(format!(
                "Input to reshape is a tensor with {n} values, but the requested shape requires a multiple of {known}"
            )));
        }
        out[i] = n / known;
    } else if known != n {
        return Err(Error::invalid_argument(format!(
            "Input to reshape is a tensor with {n} values, but the requested shape has {known}"
        )));
    }
    Ok(Shape::from(out))
}

fn paddings(t: &Tensor) -> Result<Vec<(i64, i64)>> {
    let v = t.to_i64_vec()?;
    if t.rank() != 2 || t.dims()[1] != 2 {
        return Err(Error::invalid_argument(format!(
            "paddings must be a matrix with 2 columns: {}",
            t.shape()
        )));
    }
    Ok(v.chunks(2).map(|c| (c[0], c[1])).collect())
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
        "ConcatOffset",
        factory(|_| {
            boxed(|ctx| {
                let shapes = (1..ctx.num_inputs())
                    .map(|i| ctx.input(i)?.to_i64_vec())
                    .collect::<Result<Vec<_>>>()?;
                let axis = ctx.input(0)?.scalar_i64()?;
                let dtype = ctx.input(1)?.dtype();
                for offsets in concat_offsets(axis, &shapes)? {
                    ctx.output(cast(&Tensor::vector(offsets), dtype)?);
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
        "Fill",
        factory(|_| {
            boxed(|ctx| {
                let shape = shape_arg(ctx.input(0)?, "dims")?;
                let y = k::fill(&shape, ctx.input(1)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "ZerosLike",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.input(0)?;
                let y = Tensor::zeros(x.dtype(), x.shape().clone());
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "OnesLike",
        factory(|_| {
            boxed(|ctx| {
                let y = ones_like(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Range",
        factory(|_| {
            boxed(|ctx| {
                let d = ctx.input(0)?.dtype();
                let (s, l, st) = (
                    ctx.input(0)?.scalar_f64()?,
                    ctx.input(1)?.scalar_f64()?,
                    ctx.input(2)?.scalar_f64()?,
                );
                ctx.output(k::range(s, l, st, d)?);
                Ok(())
            })
        }),
    );
    reg(
        "LinSpace",
        factory(|_| {
            boxed(|ctx| {
                let d = ctx.input(0)?.dtype();
                let (s, e, n) = (
                    ctx.input(0)?.scalar_f64()?,
                    ctx.input(1)?.scalar_f64()?,
                    ctx.input(2)?.scalar_i64()?,
                );
                ctx.output(k::linspace(s, e, n, d)?);
                Ok(())
            })
        }),
    );
    reg(
        "Reshape",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.take_input(0)?;
                let target = reshape_target(&x, ctx.input(1)?)?;
                ctx.output(x.with_shape(target)?);
                Ok(())
            })
        }),
    );
    reg(
        "Transpose",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.input(0)?;
                let rank = x.rank();
                let perm = ctx
                    .input(1)?
                    .to_i64_vec()?
                    .into_iter()
                    .map(|p| normalize_axis(p, rank, "Transpose"))
                    .collect::<Result<Vec<_>>>()?;
                let y = k::transpose(x, &perm)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "ExpandDims",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.take_input(0)?;
                let axis = ctx.input(1)?.to_i64_vec()?;
                let [a] = axis[..] else {
                    return Err(Error::invalid_argument(
                        "'dim' must be a tensor with a single value",
                    ));
                };
                let ax = normalize_axis(a, x.rank() + 1, "ExpandDims")?;
                let mut s = x.shape().clone();
                s.insert(ax, 1);
                ctx.output(x.with_shape(s)?);
                Ok(())
            })
        }),
    );
    reg(
        "Squeeze",
        factory(|init| {
            let axes = init.node.attrs.ints("squeeze_dims")?;
            boxed(move |ctx| {
                let x = ctx.take_input(0)?;
                let dims = x.dims().to_vec();
                let mut keep = vec![true; dims.len()];
                if axes.is_empty() {
                    for (i, &d) in dims.iter().enumerate() {
                        keep[i] = d != 1;
                    }
                } else {
                    for &a in &axes {
                        let ax = normalize_axis(a, dims.len(), "Squeeze")?;
                        if dims[ax] != 1 {
                            return Err(Error::invalid_argument(format!(
                                "Can not squeeze dim[{ax}], expected a dimension of 1, got {}",
                                dims[ax]
                            )));
                        }
                        keep[ax] = false;
                    }
                }
                let s: Shape = dims
                    .iter()
                    .zip(&keep)
                    .filter(|(_, &k)| k)
                    .map(|(&d, _)| d)
                    .collect();
                ctx.output(x.with_shape(s)?);
                Ok(())
            })
        }),
    );
    reg(
        "ConcatV2",
        factory(|_| {
            boxed(|ctx| {
                let n = ctx.num_inputs();
                let axis = ctx.input(n - 1)?.scalar_i64()?;
                let values = (0..n - 1)
                    .map(|i| ctx.input(i).cloned())
                    .collect::<Result<Vec<_>>>()?;
                ctx.output(k::concat(&values, axis)?);
                Ok(())
            })
        }),
    );
    reg(
        "Pack",
        factory(|init| {
            let axis = init.node.attrs.int_or("axis", 0)?;
            boxed(move |ctx| {
                let values = (0..ctx.num_inputs())
                    .map(|i| ctx.input(i).cloned())
                    .collect::<Result<Vec<_>>>()?;
                ctx.output(k::stack(&values, axis)?);
                Ok(())
            })
        }),
    );
    reg(
        "Unpack",
        factory(|init| {
            let axis = init.node.attrs.int_or("axis", 0)?;
            let num = init.node.attrs.int("num")? as usize;
            boxed(move |ctx| {
                let parts = k::unstack(ctx.input(0)?, axis)?;
                if parts.len() != num {
                    return Err(Error::invalid_argument(format!(
                        "Input shape axis {axis} must equal {num}, got shape {}",
                        ctx.input(0)?.shape()
                    )));
                }
                parts.into_iter().for_each(|p| ctx.output(p));
                Ok(())
            })
        }),
    );
    reg(
        "Split",
        factory(|init| {
            let num = init.node.attrs.int("num_split")? as usize;
            boxed(move |ctx| {
                let axis = ctx.input(0)?.scalar_i64()?;
                let x = ctx.input(1)?;
                let ax = normalize_axis(axis, x.rank(), "Split")?;
                let d = x.dims()[ax];
                if d % num != 0 {
                    return Err(Error::invalid_argument(format!(
                    "Number of ways to split should evenly divide the split dimension, but got split_dim {ax} (size = {d}) and num_split {num}"
                )));
                }
                let parts = k::split(x, axis, &vec![d / num; num])?;
                parts.into_iter().for_each(|p| ctx.output(p));
                Ok(())
            })
        }),
    );
    reg(
        "SplitV",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.input(0)?;
                let axis = ctx.input(2)?.scalar_i64()?;
                let ax = normalize_axis(axis, x.rank(), "SplitV")?;
                let d = x.dims()[ax] as i64;
                let mut sizes = ctx.input(1)?.to_i64_vec()?;
                let known: i64 = sizes.iter().filter(|&&s| s >= 0).sum();
                if let Some(i) = sizes.iter().position(|&s| s == -1) {
                    sizes[i] = d - known;
                }
                if sizes.iter().any(|&s| s < 0) || sizes.iter().sum::<i64>() != d {
                    return Err(Error::invalid_argument(format!(
                "Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: {known}"
            )));
                }
                let sizes: Vec<usize> = sizes.into_iter().map(|s| s as usize).collect();
                let parts = k::split(x, axis, &sizes)?;
                parts.into_iter().for_each(|p| ctx.output(p));
                Ok(())
            })
        }),
    );
    reg(
        "Slice",
        factory(|_| {
            boxed(|ctx| {
                let y = k::slice(
                    ctx.input(0)?,
                    &ctx.input(1)?.to_i64_vec()?,
                    &ctx.input(2)?.to_i64_vec()?,
                )?;
                ctx.output(y);
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
        "StridedSlice",
        factory(|init| {
            let a = &init.node.attrs;
            let masks = SliceMasks {
                begin: a.int_or("begin_mask", 0)?,
                end: a.int_or("end_mask", 0)?,
                ellipsis: a.int_or("ellipsis_mask", 0)?,
                new_axis: a.int_or("new_axis_mask", 0)?,
                shrink_axis: a.int_or("shrink_axis_mask", 0)?,
            };
            boxed(move |ctx| {
                let (b, e, s) = (
                    ctx.input(1)?.to_i64_vec()?,
                    ctx.input(2)?.to_i64_vec()?,
                    ctx.input(3)?.to_i64_vec()?,
                );
                let y = k::strided_slice(ctx.input(0)?, &b, &e, &s, masks)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "GatherV2",
        factory(|init| {
            let batch = init.node.attrs.int_or("batch_dims", 0)?;
            boxed(move |ctx| {
                let axis = ctx.input(2)?.scalar_i64()?;
                let y = k::gather(ctx.input(0)?, ctx.input(1)?, axis, batch)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "GatherNd",
        factory(|_| {
            boxed(|ctx| {
                let y = k::gather_nd(ctx.input(0)?, ctx.input(1)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Tile",
        factory(|_| {
            boxed(|ctx| {
                let y = k::tile(ctx.input(0)?, &ctx.input(1)?.to_i64_vec()?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Pad",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.input(0)?;
                let zero = Tensor::zeros(x.dtype(), Shape::scalar());
                let y = k::pad(x, &paddings(ctx.input(1)?)?, PadMode::Constant, &zero)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "PadV2",
        factory(|_| {
            boxed(|ctx| {
                let y = k::pad(
                    ctx.input(0)?,
                    &paddings(ctx.input(1)?)?,
                    PadMode::Constant,
                    ctx.input(2)?,
                )?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MirrorPad",
        factory(|init| {
            let mode = match init
                .node
                .attrs
                .str_or("mode", "REFLECT")?
                .to_uppercase()
                .as_str()
            {
                "REFLECT" => PadMode::Reflect,
                "SYMMETRIC" => PadMode::Symmetric,
                other => return Err(Error::value(format!("MirrorPad: unknown mode {other}"))),
            };
            boxed(move |ctx| {
                let x = ctx.input(0)?;
                let zero = Tensor::zeros(x.dtype(), Shape::scalar());
                let y = k::pad(x, &paddings(ctx.input(1)?)?, mode, &zero)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "OneHot",
        factory(|init| {
            let axis = init.node.attrs.int_or("axis", -1)?;
            boxed(move |ctx| {
                let depth = ctx.input(1)?.scalar_i64()?;
                let y = k::one_hot(ctx.input(0)?, depth, ctx.input(2)?, ctx.input(3)?, axis)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "ReverseV2",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.input(0)?;
                let axes = ctx
                    .input(1)?
                    .to_i64_vec()?
                    .into_iter()
                    .map(|a| normalize_axis(a, x.rank(), "ReverseV2"))
                    .collect::<Result<Vec<_>>>()?;
                let y = k::reverse(x, &axes)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "BroadcastTo",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.input(0)?;
                let target = shape_arg(ctx.input(1)?, "shape")?;
                Tensor::check_allocation("BroadcastTo", x.dtype(), target.dims())?;
                let y = ferroflow_tensor::kernels::elementwise::select(
                    &Tensor::scalar(true),
                    x,
                    &Tensor::zeros(x.dtype(), target),
                )?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Unique",
        factory(|init| {
            let out_idx = init.node.attrs.dtype_or("out_idx", DType::Int32)?;
            boxed(move |ctx| {
                let (y, idx) = k::unique(ctx.input(0)?, out_idx)?;
                ctx.output(y);
                ctx.output(idx);
                Ok(())
            })
        }),
    );
    reg(
        "Where",
        factory(|_| {
            boxed(|ctx| {
                let y = k::where_indices(ctx.input(0)?)?;
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
}

/// TensorFlow's `ConcatOffset`: for each shape, a vector of zeros but for the concat axis, where it
/// holds the sum of the earlier shapes' sizes along it. The shapes must agree everywhere else.
fn concat_offsets(axis: i64, shapes: &[Vec<i64>]) -> Result<Vec<Vec<i64>>> {
    let first = &shapes[0];
    let rank = first.len() as i64;
    if axis < -rank || axis >= rank {
        return Err(Error::invalid_argument(format!(
            "Concat dim is out of range: {axis} vs. {rank}"
        )));
    }
    let axis = axis.rem_euclid(rank.max(1)) as usize;
    let mut offset = 0;
    let mut out = Vec::with_capacity(shapes.len());
    for (i, shape) in shapes.iter().enumerate() {
        if shape.len() != first.len() {
            return Err(Error::invalid_argument(format!(
                "input {i} should contain {} elements, but got {}",
                first.len(),
                shape.len()
            )));
        }
        if let Some(d) = (0..shape.len()).find(|&d| d != axis && shape[d] != first[d]) {
            return Err(Error::invalid_argument(format!(
                "All dimensions except {axis} must match. Input {i} has shape {shape:?} and doesn't \
                 match input 0 with shape {first:?} (dimension {d})."
            )));
        }
        let mut offsets = vec![0; shape.len()];
        offsets[axis] = offset;
        offset += shape[axis];
        out.push(offsets);
    }
    Ok(out)
}

#[cfg(test)]
mod concat_offset_tests {
    use super::concat_offsets;
    use ferroflow_tensor::Code;

    #[test]
    fn offsets_accumulate_along_the_axis() {
        // TensorFlow's documented example: concat_dim 1 of [2, 2, 7], [2, 3, 7], [2, 5, 7].
        let shapes = vec![vec![2, 2, 7], vec![2, 3, 7], vec![2, 5, 7]];
        let want = vec![vec![0, 0, 0], vec![0, 2, 0], vec![0, 5, 0]];
        assert_eq!(concat_offsets(1, &shapes).unwrap(), want);
        assert_eq!(concat_offsets(-2, &shapes).unwrap(), want);
    }

    #[test]
    fn bad_axes_and_shapes_are_invalid_arguments() {
        let e = concat_offsets(3, &[vec![2, 3, 7], vec![2, 3, 7]]).unwrap_err();
        assert_eq!(e.code(), Some(Code::InvalidArgument));
        assert!(e.message().contains("out of range"), "{e}");
        let e = concat_offsets(0, &[vec![2, 3], vec![2, 3, 1]]).unwrap_err();
        assert!(e.message().contains("should contain 2 elements"), "{e}");
        let e = concat_offsets(0, &[vec![2, 3], vec![4, 5]]).unwrap_err();
        assert!(
            e.message().contains("All dimensions except 0 must match"),
            "{e}"
        );
    }
}
