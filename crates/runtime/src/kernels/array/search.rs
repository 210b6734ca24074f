//! Kernels of the ops that choose or count elements by their values:
//! `Unique`, `UniqueWithCounts`, `Where`, `LowerBound`/`UpperBound`,
//! `HistogramFixedWidth` and `EditDistance`.

use crate::kernel::{factory, KernelFactory};
use crate::kernels::boxed;
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array as k;
use ferroflow_tensor::DType;

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
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
        "Where",
        factory(|_| {
            boxed(|ctx| {
                let y = k::where_indices(ctx.input(0)?)?;
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
}
