//! Kernels of the remaining array ops (`Roll`, `ReverseSequence`, the
//! space/batch ops, `HistogramFixedWidth`, `UnravelIndex`, the bound
//! searches, `ExtractVolumePatches`, `EditDistance`, `IdentityN`,
//! `EnsureShape`, `BroadcastArgs`, `UniqueWithCounts`); the numeric work is
//! in `ferroflow_tensor::kernels::array_extra`.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array_extra as k;
use ferroflow_tensor::{DType, Error, Tensor};

/// The `[b, b]` block shape of the 4-D ops' `block_size` attr.
fn square_block(b: i64) -> Tensor {
    Tensor::vector(vec![b, b])
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "UniqueWithCounts",
        factory(|init| {
            let out_idx = init.node.attrs.dtype_or("out_idx", DType::Int32)?;
            boxed(move |ctx| {
                let (y, idx, count) = k::unique_with_counts(ctx.input(0)?, out_idx)?;
                ctx.output(y);
                ctx.output(idx);
                ctx.output(count);
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
                    return Err(Error::invalid_argument(format!(
                        "Value for attr 'block_size' of {b} must be at least minimum 2"
                    )));
                }
                let block = square_block(b);
                boxed(move |ctx| {
                    let (x, p) = (ctx.input(0)?, ctx.input(1)?);
                    if x.rank() != 4 {
                        return Err(Error::invalid_argument(format!(
                            "input must be 4-dimensional, got shape {}",
                            x.shape()
                        )));
                    }
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
    reg(
        "HistogramFixedWidth",
        factory(|init| {
            let out = init.node.attrs.dtype_or("dtype", DType::Int32)?;
            boxed(move |ctx| {
                let y = k::histogram_fixed_width(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, out)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "UnravelIndex",
        factory(|_| {
            boxed(|ctx| {
                let y = k::unravel_index(ctx.input(0)?, ctx.input(1)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    for (name, upper) in [("LowerBound", false), ("UpperBound", true)] {
        reg(
            name,
            factory(move |init| {
                let out = init.node.attrs.dtype_or("out_type", DType::Int32)?;
                boxed(move |ctx| {
                    let y = k::search_sorted(ctx.input(0)?, ctx.input(1)?, upper, out)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "ExtractVolumePatches",
        factory(|init| {
            let a = &init.node.attrs;
            let w = k::VolumeWindows::parse(
                &a.ints("ksizes")?,
                &a.ints("strides")?,
                &a.string("padding")?,
            )?;
            boxed(move |ctx| {
                let y = k::extract_volume_patches(ctx.input(0)?, &w)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "EditDistance",
        factory(|init| {
            let normalize = init.node.attrs.bool_or("normalize", true)?;
            boxed(move |ctx| {
                let i = [
                    ctx.input(0)?,
                    ctx.input(1)?,
                    ctx.input(2)?,
                    ctx.input(3)?,
                    ctx.input(4)?,
                    ctx.input(5)?,
                ];
                let y = k::edit_distance(i, normalize)?;
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
                if !want.is_compatible_with_shape(x.shape()) {
                    return Err(Error::invalid_argument(format!(
                        "Shape of tensor {name} {} is not compatible with expected shape {}.",
                        x.shape(),
                        tf_text(&want)
                    )));
                }
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
