//! Control flow: function arguments (`_Arg`), function calls
//! (`PartitionedCall`, `Defun`'s op), `If`, `Case`, `While`, and their
//! gradients when the forward op kept what they read (`IfGrad`,
//! `CaseGrad`, `WhileGrad`). The ops name their bodies by
//! attribute; the bodies are [`Function`](crate::Function)s in the graph's
//! library.

use super::{InferContext, OpDef};
use crate::attr::{AttrValue, Attrs, AttrsExt};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result};

/// Input `i` is a variable reference passed into a function, as listed by
/// the node's `_ref_inputs` attribute.
fn listed_ref(attrs: &Attrs, i: usize) -> bool {
    attrs
        .ints("_ref_inputs")
        .is_ok_and(|v| v.contains(&(i as i64)))
}

fn arg(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = ctx.attrs();
    let dtype = a.dtype("T")?;
    let shape = a.shape("shape")?;
    Ok(vec![if a.bool_or("is_list", false)? {
        OutputInfo::list()
    } else if a.bool_or("is_ref", false)? {
        OutputInfo::reference(dtype, shape)
    } else {
        OutputInfo::new(dtype, shape)
    }])
}

/// The declared outputs: `types` with `shapes` (unknown where not given).
fn declared(types: &[DType], shapes: &[PartialShape]) -> Vec<OutputInfo> {
    types
        .iter()
        .enumerate()
        .map(|(i, &d)| OutputInfo::new(d, shapes.get(i).cloned().unwrap_or_default()))
        .collect()
}

/// Checks that function `name` takes the inputs `ins` (dtypes) and gives `outs`.
fn check_signature(
    ctx: &InferContext,
    attr: &str,
    ins: &[DType],
    outs: Option<&[DType]>,
) -> Result<()> {
    check_function(ctx, &ctx.attrs().string(attr)?, attr, ins, outs)
}

/// Checks that function `name` (named by attribute `attr`) takes `ins` and gives `outs`.
fn check_function(
    ctx: &InferContext,
    name: &str,
    attr: &str,
    ins: &[DType],
    outs: Option<&[DType]>,
) -> Result<()> {
    let f = ctx.graph.function(name).map_err(|_| {
        Error::value(format!(
            "'{}' ({}): function '{name}' ({attr}) is not in the graph's library",
            ctx.name, ctx.def.name
        ))
    })?;
    let arg_types: Vec<DType> = f.args.iter().map(|&a| f.graph.output(a).dtype).collect();
    if arg_types != ins {
        return Err(Error::value(format!(
            "'{}' ({}): function '{name}' takes {arg_types:?}, but the op passes {ins:?}",
            ctx.name, ctx.def.name
        )));
    }
    if let Some(outs) = outs {
        let out_types: Vec<DType> = f.outputs.iter().map(|&o| f.graph.output(o).dtype).collect();
        if out_types != outs {
            return Err(Error::value(format!(
                "'{}' ({}): function '{name}' returns {out_types:?}, but the op declares {outs:?}",
                ctx.name, ctx.def.name
            )));
        }
    }
    Ok(())
}

fn if_op(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = ctx.attrs();
    let tout = a.dtypes("Tout")?;
    let ins: Vec<DType> = (1..ctx.num_inputs()).map(|i| ctx.dtype(i)).collect();
    check_signature(ctx, "then_branch", &ins, Some(&tout))?;
    check_signature(ctx, "else_branch", &ins, Some(&tout))?;
    let then_fn = ctx.graph.function(&a.string("then_branch")?)?;
    let mut outs = declared(&tout, &a.shapes("output_shapes")?);
    for (o, &f) in outs.iter_mut().zip(&then_fn.outputs) {
        if then_fn.graph.output(f).is_list {
            *o = OutputInfo::list();
        }
    }
    if a.bool_or("_history", false)? {
        // What the taken branch kept for the gradient (read by `IfGrad`).
        outs.push(OutputInfo::list());
    }
    Ok(outs)
}

/// The function names of list attribute `attr`.
fn function_list(ctx: &InferContext, attr: &str) -> Result<Vec<String>> {
    match ctx.attrs().get(attr) {
        Some(AttrValue::StrList(v)) => Ok(v
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()),
        _ => Err(Error::value(format!(
            "'{}' ({}) needs attribute '{attr}': a list of function names",
            ctx.name, ctx.def.name
        ))),
    }
}

/// `Case`: input 0 picks one of the functions `branches`, which take the
/// other inputs and give `Tout`.
fn case_op(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = ctx.attrs();
    ctx.expect_dtype(0, &[DType::Int32])?;
    let tout = a.dtypes("Tout")?;
    let ins: Vec<DType> = (1..ctx.num_inputs()).map(|i| ctx.dtype(i)).collect();
    let branches = function_list(ctx, "branches")?;
    if branches.is_empty() {
        return Err(Error::value(format!(
            "'{}' ({}): branches must not be empty",
            ctx.name, ctx.def.name
        )));
    }
    for (k, name) in branches.iter().enumerate() {
        check_function(ctx, name, &format!("branches[{k}]"), &ins, Some(&tout))?;
    }
    let first = ctx.graph.function(&branches[0])?;
    let mut outs = declared(&tout, &a.shapes("output_shapes")?);
    for (o, &f) in outs.iter_mut().zip(&first.outputs) {
        if first.graph.output(f).is_list {
            *o = OutputInfo::list();
        }
    }
    if a.bool_or("_history", false)? {
        // What the taken branch kept for the gradient (read by `CaseGrad`).
        outs.push(OutputInfo::list());
    }
    Ok(outs)
}

/// A call of function `f`: its outputs are the function's.
fn call(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let name = ctx.attrs().string("f")?;
    let ins: Vec<DType> = (0..ctx.num_inputs()).map(|i| ctx.dtype(i)).collect();
    check_signature(ctx, "f", &ins, None)?;
    let f = ctx.graph.function(&name)?;
    Ok(f.outputs
        .iter()
        .map(|&o| {
            let mut info = f.graph.output(o).clone();
            info.is_ref = false;
            info
        })
        .collect())
}

fn if_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = ctx.attrs();
    let mut outs = declared(&a.dtypes("Tout")?, &a.shapes("output_shapes")?);
    // The gradient of a forward input that is a list (a TensorArray's flow
    // captured by a branch) is a list too; the forward inputs follow the
    // branch index.
    for (i, o) in outs.iter_mut().enumerate() {
        if i + 1 < ctx.num_inputs() && ctx.info(i + 1).is_list {
            *o = OutputInfo::list();
        }
    }
    Ok(outs)
}

fn while_op(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = ctx.attrs();
    let types: Vec<DType> = (0..ctx.num_inputs()).map(|i| ctx.dtype(i)).collect();
    check_signature(ctx, "cond", &types, None)?;
    check_signature(ctx, "body", &types, Some(&types))?;
    let shapes = a.shapes("output_shapes")?;
    let mut outs = declared(&types, &shapes);
    for (i, o) in outs.iter_mut().enumerate() {
        if ctx.info(i).is_list {
            *o = OutputInfo::list();
        }
    }
    if a.bool_or("_history", false)? {
        // Each loop variable's values at the start of every iteration: a
        // list the runtime hands to `WhileGrad` (declared as the variable's
        // dtype with an unknown shape; never fetched).
        outs.extend(types.iter().map(|_| OutputInfo::list()));
    }
    Ok(outs)
}

fn while_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let n = ctx.num_inputs() / 3;
    if ctx.num_inputs() != 3 * n {
        return Err(Error::value(format!(
            "'{}' (WhileGrad) takes the forward inputs, histories and gradients, got {} inputs",
            ctx.name,
            ctx.num_inputs()
        )));
    }
    Ok((0..n)
        .map(|i| {
            let mut info = ctx.info(i).clone();
            info.is_ref = false;
            info
        })
        .collect())
}

pub(super) fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("_Arg", &[], arg),
        OpDef::new("If", &["cond", "input*"], if_op).ref_input(listed_ref),
        OpDef::new("While", &["input*"], while_op).ref_input(listed_ref),
        OpDef::new("WhileGrad", &["input*"], while_grad),
        OpDef::new("IfGrad", &["cond", "input*"], if_grad),
        OpDef::new("Case", &["branch_index", "input*"], case_op).ref_input(listed_ref),
        OpDef::new("StatelessCase", &["branch_index", "input*"], case_op),
        OpDef::new("CaseGrad", &["branch_index", "input*"], if_grad),
        OpDef::new("PartitionedCall", &["args*"], call),
        OpDef::new("StatefulPartitionedCall", &["args*"], call).ref_input(listed_ref),
    ]
}
