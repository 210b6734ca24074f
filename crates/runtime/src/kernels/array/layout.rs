//! Kernels of the ops that reshape or rearrange whole tensors: `Reshape`,
//! `Transpose`, `ExpandDims`, `Squeeze`, `ConcatV2` and `ConcatOffset`,
//! `Pack`/`Unpack`, `Split`/`SplitV`, `Tile`, `Pad`/`PadV2`/`MirrorPad`,
//! `ReverseV2`, `BroadcastTo`, `Roll`, `ReverseSequence` and the
//! space/batch ops.

use super::shape_arg;
use crate::kernel::{factory, KernelFactory};
use crate::kernels::boxed;
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array::{self as k, PadMode};
use ferroflow_tensor::kernels::elementwise::cast;
use ferroflow_tensor::{bail, ensure, normalize_axis, Result, Shape, Tensor};

/// Resolves a `Reshape` target, filling in at most one `-1`.
fn reshape_target(x: &Tensor, t: &Tensor) -> Result<Shape> {
    let dims = t.to_i64_vec()?;
    let n = x.num_elements();
    let mut unknown = None;
    let mut known: usize = 1;
    for (i, &d) in dims.iter().enumerate() {
        if d == -1 {
            if unknown.replace(i).is_some() {
                bail!(
                    invalid_argument,
                    "only one input size may be -1, not both {} and {i}",
                    unknown.unwrap_or(0)
                );
            }
        } else if d < 0 {
            bail!(invalid_argument, "size {i} must be non-negative, not {d}");
        } else {
            known *= d as usize;
        }
    }
    let mut out: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
    if let (Some(i), true) = (unknown, dims.contains(&0)) {
        // TF's rule when the target has a zero dim: the -1 takes the product of
        // the input's non-zero dims over the target's non-zero ones ([0, 3] to
        // [-1, 0] is [3, 0]), so the result is empty whatever it solves to.
        let nonzero = |v: &mut dyn Iterator<Item = usize>| v.filter(|&d| d > 0).product::<usize>();
        let have = nonzero(&mut x.dims().iter().copied());
        let want = nonzero(
            &mut out
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &d)| d),
        );
        out[i] = have / want.max(1);
    } else if let Some(i) = unknown {
        if known == 0 || !n.is_multiple_of(known) {
            bail!(
                invalid_argument,
                "Input to reshape is a tensor with {n} values, but the requested shape requires a multiple of {known}"
            );
        }
        out[i] = n / known;
    } else if known != n {
        bail!(
            invalid_argument,
            "Input to reshape is a tensor with {n} values, but the requested shape has {known}"
        );
    }
    Ok(Shape::from(out))
}

fn paddings(t: &Tensor) -> Result<Vec<(i64, i64)>> {
    let v = t.to_i64_vec()?;
    if t.rank() != 2 || t.dims()[1] != 2 {
        bail!(
            invalid_argument,
            "paddings must be a matrix with 2 columns: {}",
            t.shape()
        );
    }
    Ok(v.chunks(2).map(|c| (c[0], c[1])).collect())
}

/// The `[b, b]` block shape of the 4-D ops' `block_size` attr.
fn square_block(b: i64) -> Tensor {
    Tensor::vector(vec![b, b])
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
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
                    bail!(
                        invalid_argument,
                        "'dim' must be a tensor with a single value"
                    );
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
                        ensure!(
                            dims[ax] == 1,
                            invalid_argument,
                            "Can not squeeze dim[{ax}], expected a dimension of 1, got {}",
                            dims[ax]
                        );
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
                ensure!(
                    parts.len() == num,
                    invalid_argument,
                    "Input shape axis {axis} must equal {num}, got shape {}",
                    ctx.input(0)?.shape()
                );
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
                ensure!(
                    d % num == 0,
                    invalid_argument,
                    "Number of ways to split should evenly divide the split dimension, but got split_dim {ax} (size = {d}) and num_split {num}"
                );
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
                    bail!(
                        invalid_argument,
                        "Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: {known}"
                    );
                }
                let sizes: Vec<usize> = sizes.into_iter().map(|s| s as usize).collect();
                let parts = k::split(x, axis, &sizes)?;
                parts.into_iter().for_each(|p| ctx.output(p));
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
                other => bail!(value, "MirrorPad: unknown mode {other}"),
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
        "Roll",
        factory(|_| {
            boxed(|ctx| {
                let y = k::roll(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "ReverseSequence",
        factory(|init| {
            let seq = init.node.attrs.int("seq_dim")?;
            let batch = init.node.attrs.int_or("batch_dim", 0)?;
            boxed(move |ctx| {
                let y = k::reverse_sequence(ctx.input(0)?, ctx.input(1)?, seq, batch)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    for (name, to_batch) in [("SpaceToBatchND", true), ("BatchToSpaceND", false)] {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let (x, b, p) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
                    let y = if to_batch {
                        k::space_to_batch_nd(x, b, p)?
                    } else {
                        k::batch_to_space_nd(x, b, p)?
                    };
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (name, to_batch) in [("SpaceToBatch", true), ("BatchToSpace", false)] {
        reg(
            name,
            factory(move |init| {
                let b = init.node.attrs.int("block_size")?;
                if b < 2 {
                    bail!(
                        invalid_argument,
                        "Value for attr 'block_size' of {b} must be at least minimum 2"
                    );
                }
                let block = square_block(b);
                boxed(move |ctx| {
                    let (x, p) = (ctx.input(0)?, ctx.input(1)?);
                    ensure!(
                        x.rank() == 4,
                        invalid_argument,
                        "input must be 4-dimensional, got shape {}",
                        x.shape()
                    );
                    let y = if to_batch {
                        k::space_to_batch_nd(x, &block, p)?
                    } else {
                        k::batch_to_space_nd(x, &block, p)?
                    };
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
}

/// TensorFlow's `ConcatOffset`: for each shape, a vector of zeros but for the concat axis, where it
/// holds the sum of the earlier shapes' sizes along it. The shapes must agree everywhere else.
fn concat_offsets(axis: i64, shapes: &[Vec<i64>]) -> Result<Vec<Vec<i64>>> {
    let first = &shapes[0];
    let rank = first.len() as i64;
    if axis < -rank || axis >= rank {
        bail!(
            invalid_argument,
            "Concat dim is out of range: {axis} vs. {rank}"
        );
    }
    let axis = axis.rem_euclid(rank.max(1)) as usize;
    let mut offset = 0;
    let mut out = Vec::with_capacity(shapes.len());
    for (i, shape) in shapes.iter().enumerate() {
        ensure!(
            shape.len() == first.len(),
            invalid_argument,
            "input {i} should contain {} elements, but got {}",
            first.len(),
            shape.len()
        );
        if let Some(d) = (0..shape.len()).find(|&d| d != axis && shape[d] != first[d]) {
            bail!(
                invalid_argument,
                "All dimensions except {axis} must match. Input {i} has shape {shape:?} and doesn't \
                 match input 0 with shape {first:?} (dimension {d})."
            );
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
