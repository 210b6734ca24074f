//! Kernels of the ops that choose parts of a tensor by position: `Slice`,
//! `StridedSlice`, `GatherV2`, `GatherNd`, `UnravelIndex` and
//! `ExtractVolumePatches`.

use crate::kernel::{factory, KernelFactory};
use crate::kernels::boxed;
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array::{self as k, SliceMasks};

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
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
        "UnravelIndex",
        factory(|_| {
            boxed(|ctx| {
                let y = k::unravel_index(ctx.input(0)?, ctx.input(1)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
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
}
