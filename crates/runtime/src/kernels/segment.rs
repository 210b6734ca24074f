//! Kernels of the segment reductions, the scatters added beside
//! `ScatterUpdate`/`Add`/`Sub` (on variables and on tensors) and
//! `DynamicPartition` / `DynamicStitch` (numeric code in
//! `ferroflow_tensor::kernels::segment`).

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array::{scatter, ScatterOp};
use ferroflow_tensor::kernels::segment::{
    dynamic_partition, dynamic_stitch, ignore_bad_indices, scatter_nd_apply, segment_reduce,
    unsorted_segment_reduce, SegmentOp,
};
use ferroflow_tensor::Tensor;

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    use SegmentOp::*;
    for op in [Sum, Mean, Prod, Max, Min] {
        reg(
            op.name(true),
            factory(move |_| {
                boxed(move |ctx| {
                    let y = segment_reduce(ctx.input(0)?, ctx.input(1)?, op)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for op in [Prod, Max, Min] {
        reg(
            op.name(false),
            factory(move |_| {
                boxed(move |ctx| {
                    let num = ctx.input(2)?.scalar_i64()?;
                    let y = unsorted_segment_reduce(ctx.input(0)?, ctx.input(1)?, num, op)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (name, op) in [
        ("ScatterMul", ScatterOp::Mul),
        ("ScatterDiv", ScatterOp::Div),
        ("ScatterMax", ScatterOp::Max),
        ("ScatterMin", ScatterOp::Min),
    ] {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let var = ctx.input_ref(0)?.clone();
                    let (indices, updates) = (ctx.input(1)?, ctx.input(2)?);
                    var.update(|t| scatter(t, indices, updates, op))?;
                    ctx.output_ref(var);
                    Ok(())
                })
            }),
        );
    }
    for (name, op) in [
        ("ScatterNdAdd", ScatterOp::Add),
        ("ScatterNdSub", ScatterOp::Sub),
        ("ScatterNdUpdate", ScatterOp::Update),
    ] {
        reg(
            name,
            factory(move |init| {
                let ignore =
                    ignore_bad_indices(&init.node.attrs.str_or("bad_indices_policy", "")?)?;
                boxed(move |ctx| {
                    let var = ctx.input_ref(0)?.clone();
                    let (indices, updates) = (ctx.input(1)?, ctx.input(2)?);
                    var.update(|t| scatter_nd_apply(t, indices, updates, op, name, ignore))?;
                    ctx.output_ref(var);
                    Ok(())
                })
            }),
        );
    }
    for (name, op) in [
        ("TensorScatterUpdate", ScatterOp::Update),
        ("TensorScatterAdd", ScatterOp::Add),
        ("TensorScatterSub", ScatterOp::Sub),
        ("TensorScatterMax", ScatterOp::Max),
        ("TensorScatterMin", ScatterOp::Min),
    ] {
        reg(
            name,
            factory(move |init| {
                let ignore =
                    ignore_bad_indices(&init.node.attrs.str_or("bad_indices_policy", "")?)?;
                boxed(move |ctx| {
                    // Taken, so an unshared input buffer is updated in place.
                    let mut t = ctx.take_input(0)?;
                    scatter_nd_apply(&mut t, ctx.input(1)?, ctx.input(2)?, op, name, ignore)?;
                    ctx.output(t);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "DynamicPartition",
        factory(|init| {
            let num = init.node.attrs.int("num_partitions")?.max(1) as usize;
            boxed(move |ctx| {
                for t in dynamic_partition(ctx.input(0)?, ctx.input(1)?, num)? {
                    ctx.output(t);
                }
                Ok(())
            })
        }),
    );
    for name in ["DynamicStitch", "ParallelDynamicStitch"] {
        reg(
            name,
            factory(|_| {
                boxed(|ctx| {
                    let n = ctx.num_inputs() / 2;
                    let mut indices: Vec<Tensor> = Vec::with_capacity(n);
                    let mut data: Vec<Tensor> = Vec::with_capacity(n);
                    for i in 0..n {
                        indices.push(ctx.input(i)?.clone());
                        data.push(ctx.input(n + i)?.clone());
                    }
                    ctx.output(dynamic_stitch(&indices, &data)?);
                    Ok(())
                })
            }),
        );
    }
}
