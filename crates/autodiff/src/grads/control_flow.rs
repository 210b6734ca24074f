//! Gradients of `If`, `Case` and `While`.
//!
//! Both differentiate a function: the gradient function of a body takes the
//! body's arguments followed by one gradient per body output, recomputes
//! the body's forward values from the arguments and returns one gradient
//! per argument (zeros where none flows). `If`'s gradient is an `IfGrad`
//! over the two branches' gradient functions, so only the taken branch's
//! gradient runs (`Case`'s a `CaseGrad` over all of them); `While`'s is a
//! `WhileGrad` that calls the body's gradient function once per recorded
//! iteration, last to first.

use crate::gradients::{gradients, to_dense, Options, Unconnected};
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Function, Node, NodeSpec, Output};
use ferroflow_tensor::{Error, Result};

/// Adds to `g` an argument named `name` of the dtype, shape and kind of `like`.
fn add_arg_like(g: &mut ferroflow_graph::Graph, name: &str, like: Output) -> Result<Output> {
    let info = g.output(like).clone();
    let arg_name = g.unique_name(name, true);
    let id = g.add_node(
        NodeSpec::new("_Arg", &arg_name)
            .attr("T", AttrValue::Type(info.dtype))
            .attr("shape", AttrValue::Shape(info.shape))
            .attr("is_list", AttrValue::Bool(info.is_list)),
    )?;
    Ok(Output::new(id, 0))
}

/// Adds the gradient function of function `name` to the library; returns its name.
fn grad_function(b: &mut Builder<'_>, name: &str) -> Result<String> {
    let (func, _) = build_grad_function(b, name)?;
    let grad_name = b.graph.unique_function_name(&format!("{name}_grad"));
    b.graph.add_function(&grad_name, func)?;
    Ok(grad_name)
}

/// The gradient function of function `name` (not yet in the library), and
/// the number of the forward body's nodes at the front of its graph.
fn build_grad_function(b: &mut Builder<'_>, name: &str) -> Result<(Function, usize)> {
    let f = b.graph.function(name)?.clone();
    let mut g = f.graph.clone();
    let mut grad_args = Vec::with_capacity(f.outputs.len());
    for (j, &o) in f.outputs.iter().enumerate() {
        grad_args.push(add_arg_like(&mut g, &format!("grad_{j}"), o)?);
    }
    let seeds: Vec<Option<Output>> = grad_args.iter().copied().map(Some).collect();
    let scope = g.unique_name("gradients", true);
    let opts = Options {
        scope: scope.clone(),
        unconnected: Unconnected::Zero,
        ..Options::default()
    };
    let grads = gradients(&mut g, &f.outputs, &f.args, &seeds, &opts)?;
    let mut outputs = Vec::with_capacity(grads.len());
    {
        let mut gb = Builder::new(&mut g, &scope);
        for gr in grads {
            let gr = gr.ok_or_else(|| Error::internal("an unconnected gradient was not zeroed"))?;
            outputs.push(to_dense(&mut gb, gr)?);
        }
    }
    let mut args = f.args.clone();
    args.extend(grad_args);
    let forward_nodes = f.graph.len();
    let mut func = Function::new(g, args, outputs)?;
    // The backward pass only recomputes values: side effects ran forward.
    func.control_outputs.clear();
    Ok((func, forward_nodes))
}

/// The nodes of `g` its outputs depend on.
fn needed_nodes(g: &Function) -> Vec<bool> {
    let graph = &g.graph;
    let mut needed = vec![false; graph.len()];
    let mut stack: Vec<usize> = g.outputs.iter().map(|o| o.node).collect();
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut needed[id], true) {
            continue;
        }
        let node = graph.node(id);
        stack.extend(node.inputs.iter().map(|o| o.node));
        stack.extend(node.control_inputs.iter().copied());
    }
    needed
}

/// The forward values a gradient function reads: outputs of the forward
/// body's nodes (other than arguments and constants) that gradient nodes
/// needed for its outputs take as inputs, in a fixed order.
fn values_read_by_gradient(g: &Function, forward_nodes: usize) -> Vec<Output> {
    let graph = &g.graph;
    let needed = needed_nodes(g);
    let mut read: Vec<Output> = Vec::new();
    for node in &graph.nodes()[forward_nodes..] {
        if !needed[node.id] {
            continue;
        }
        for &input in &node.inputs {
            let src = graph.node(input.node);
            if input.node < forward_nodes
                && !matches!(src.op.as_str(), "_Arg" | "Const")
                && !graph.output(input).is_ref
            {
                read.push(input);
            }
        }
    }
    for &o in &g.outputs {
        if o.node < forward_nodes && !matches!(graph.node(o.node).op.as_str(), "_Arg" | "Const") {
            read.push(o);
        }
    }
    read.sort_unstable();
    read.dedup();
    read
}

/// For a loop body `body` and its gradient function: a forward body that
/// also returns the values the gradient reads (`saved`), and a gradient
/// function that takes those values as extra arguments instead of
/// recomputing them. Returns `(saving body, gradient from saved values,
/// number of saved values)`, or None when the gradient reads no forward value.
fn saving_functions(b: &mut Builder<'_>, body: &str) -> Result<Option<(String, String, usize)>> {
    let (grad, forward_nodes) = build_grad_function(b, body)?;
    saving_functions_of(b, body, &grad, forward_nodes)
}

/// A value a saving body returns for its gradient: a forward value, or the
/// shape of one (`Shape` node `reader` of the gradient function, the only
/// kind of node of the gradient that reads it).
#[derive(Clone, Copy)]
enum Saved {
    Value(Output),
    ShapeOf { value: Output, reader: usize },
}

/// `saved` with each value the gradient reads only through `Shape` nodes
/// (the gradient of a broadcasting add reads no more of its inputs)
/// replaced by those shapes, so that a loop keeps a few integers per
/// iteration instead of the tensor.
fn shapes_where_enough(grad: &Function, forward_nodes: usize, saved: Vec<Output>) -> Vec<Saved> {
    let needed = needed_nodes(grad);
    let graph = &grad.graph;
    let mut out = Vec::with_capacity(saved.len());
    for o in saved {
        let readers: Vec<usize> = graph.nodes()[forward_nodes..]
            .iter()
            .filter(|n| needed[n.id] && n.inputs.contains(&o))
            .map(|n| n.id)
            .collect();
        let shapes_only = !readers.is_empty()
            && !grad.outputs.contains(&o)
            && readers.iter().all(|&r| graph.node(r).op == "Shape");
        if shapes_only {
            out.extend(
                readers
                    .into_iter()
                    .map(|reader| Saved::ShapeOf { value: o, reader }),
            );
        } else {
            out.push(Saved::Value(o));
        }
    }
    out
}

/// [`saving_functions`] for a gradient function already built.
fn saving_functions_of(
    b: &mut Builder<'_>,
    body: &str,
    grad: &Function,
    forward_nodes: usize,
) -> Result<Option<(String, String, usize)>> {
    let saved = values_read_by_gradient(grad, forward_nodes);
    if saved.is_empty() {
        return Ok(None);
    }
    let saved = shapes_where_enough(grad, forward_nodes, saved);
    let f = b.graph.function(body)?.clone();
    let mut saving = (*f).clone();
    for s in &saved {
        saving.outputs.push(match *s {
            Saved::Value(o) => o,
            Saved::ShapeOf { value, reader } => {
                // The forward body's nodes keep their ids in the gradient
                // function, whose graph starts as a copy of the body's.
                let name = saving.graph.unique_name(
                    &format!("{}/saved_shape", saving.graph.node(value.node).name),
                    true,
                );
                let mut spec = NodeSpec::new("Shape", &name).input(value);
                spec.attrs = grad.graph.node(reader).attrs.clone();
                Output::new(saving.graph.add_node(spec)?, 0)
            }
        });
    }
    let saving_name = b.graph.unique_function_name(&format!("{body}_saving"));
    b.graph.add_function(&saving_name, saving)?;

    // Each saved value (or shape) replaces, for the gradient's nodes, the
    // output it was read from.
    let mut g = grad.graph.clone();
    let mut args = grad.args.clone();
    let mut replaced = Vec::with_capacity(saved.len());
    for (k, s) in saved.iter().enumerate() {
        let from = match *s {
            Saved::Value(o) => o,
            Saved::ShapeOf { reader, .. } => Output::new(reader, 0),
        };
        let arg = add_arg_like(&mut g, &format!("saved_{k}"), from)?;
        g.redirect(from, arg, forward_nodes)?;
        args.push(arg);
        replaced.push(from);
    }
    let mut outputs = grad.outputs.clone();
    for (out, &o) in outputs.iter_mut().zip(&grad.outputs) {
        if let Some(k) = replaced.iter().position(|&s| s == o) {
            *out = args[grad.args.len() + k];
        }
    }
    let mut func = Function::new(g, args, outputs)?;
    func.control_outputs.clear();
    let grad_name = b.graph.unique_function_name(&format!("{body}_grad_saved"));
    b.graph.add_function(&grad_name, func)?;
    Ok(Some((saving_name, grad_name, saved.len())))
}

/// The gradient of each output, zeros where none arrived.
fn output_grads(
    b: &mut Builder<'_>,
    node: &Node,
    count: usize,
    grads: &[Option<Output>],
) -> Result<Vec<Output>> {
    (0..count)
        .map(|j| match grads.get(j).copied().flatten() {
            Some(g) => Ok(g),
            None => b.zeros_like(Output::new(node.id, j)),
        })
        .collect()
}

/// Gradients for the inputs `inputs` of `node` from outputs `0..` of `grad_node`.
fn input_grads(b: &Builder<'_>, node: &Node, skip: usize, grad_node: usize) -> Vec<Option<Grad>> {
    let mut out = vec![None; skip];
    for (i, &x) in node.inputs[skip..].iter().enumerate() {
        out.push(
            b.graph
                .output(x)
                .dtype
                .is_floating()
                .then_some(Grad::Dense(Output::new(grad_node, i))),
        );
    }
    out
}

fn if_grad(
    b: &mut Builder<'_>,
    node: &Node,
    grads: &[Option<Output>],
) -> Result<Vec<Option<Grad>>> {
    let tout_len = node.attrs.dtypes("Tout")?.len();
    let history = node.attrs.bool_or("_history", false)?;
    let xs = &node.inputs[1..];
    let tout: Vec<_> = xs.iter().map(|&x| b.graph.output(x).dtype).collect();
    let shapes: Vec<_> = xs
        .iter()
        .map(|&x| b.graph.output(x).shape.clone())
        .collect();
    let mut attrs = vec![
        ("Tout", AttrValue::TypeList(tout)),
        ("output_shapes", AttrValue::ShapeList(shapes)),
    ];
    let mut inputs = node.inputs.clone();
    inputs.extend(output_grads(b, node, tout_len, grads)?);
    if !history {
        // An If without a history output (imported): an If of the two
        // branches' gradient functions, which recompute the forward values.
        let then_grad = grad_function(b, &node.attrs.string("then_branch")?)?;
        let else_grad = grad_function(b, &node.attrs.string("else_branch")?)?;
        attrs.push(("then_branch", AttrValue::Str(then_grad.into_bytes())));
        attrs.push(("else_branch", AttrValue::Str(else_grad.into_bytes())));
        if let Some(r) = node.attrs.get("_ref_inputs") {
            attrs.push(("_ref_inputs", r.clone()));
        }
        attrs.push(("_gradient", AttrValue::Bool(true)));
        let id = b.node("If", &inputs, attrs)?;
        return Ok(input_grads(b, node, 1, id));
    }
    // The forward If keeps what the taken branch's gradient reads; IfGrad
    // runs that branch's gradient on it (or recomputes, see WhileGrad).
    for (branch, key) in [("then_branch", "then"), ("else_branch", "else")] {
        let name = node.attrs.string(branch)?;
        let (grad_name, saving) = branch_grad(b, &name)?;
        attrs.push((
            if key == "then" {
                "then_grad"
            } else {
                "else_grad"
            },
            AttrValue::Str(grad_name.into_bytes()),
        ));
        if let Some((saving_body, grad_saved)) = saving {
            let (s_key, g_key) = if key == "then" {
                ("then_saving", "then_grad_saved")
            } else {
                ("else_saving", "else_grad_saved")
            };
            attrs.push((s_key, AttrValue::Str(saving_body.into_bytes())));
            attrs.push((g_key, AttrValue::Str(grad_saved.into_bytes())));
        }
    }
    inputs.push(Output::new(node.id, tout_len));
    let id = b.node("IfGrad", &inputs, attrs)?;
    Ok(input_grads(b, node, 1, id))
}

/// The gradient function of branch `name` (added to the library), and the
/// branch's saving variant with the gradient from its saved values, when
/// the gradient reads forward values.
fn branch_grad(b: &mut Builder<'_>, name: &str) -> Result<(String, Option<(String, String)>)> {
    let (grad, forward_nodes) = build_grad_function(b, name)?;
    let saving = saving_functions_of(b, name, &grad, forward_nodes)?;
    let grad_name = b.graph.unique_function_name(&format!("{name}_grad"));
    b.graph.add_function(&grad_name, grad)?;
    Ok((grad_name, saving.map(|(s, g, _)| (s, g))))
}

/// The function names of list attribute `attr` of `node`.
fn function_names(node: &Node, attr: &str) -> Result<Vec<String>> {
    match node.attrs.get(attr) {
        Some(AttrValue::StrList(v)) => Ok(v
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()),
        _ => Err(Error::value(format!(
            "'{}' ({}) has no list of functions '{attr}'",
            node.name, node.op
        ))),
    }
}

/// The gradient of `Case` (and `StatelessCase`): as `If`'s, over every
/// branch; the index picks the taken branch's gradient.
fn case_grad(
    b: &mut Builder<'_>,
    node: &Node,
    grads: &[Option<Output>],
) -> Result<Vec<Option<Grad>>> {
    let tout_len = node.attrs.dtypes("Tout")?.len();
    let history = node.attrs.bool_or("_history", false)?;
    let branches = function_names(node, "branches")?;
    let xs = &node.inputs[1..];
    let tout: Vec<_> = xs.iter().map(|&x| b.graph.output(x).dtype).collect();
    let shapes: Vec<_> = xs
        .iter()
        .map(|&x| b.graph.output(x).shape.clone())
        .collect();
    let mut attrs = vec![
        ("Tout", AttrValue::TypeList(tout.clone())),
        ("output_shapes", AttrValue::ShapeList(shapes)),
    ];
    let mut inputs = node.inputs.clone();
    inputs.extend(output_grads(b, node, tout_len, grads)?);
    let as_list =
        |v: Vec<String>| AttrValue::StrList(v.into_iter().map(String::into_bytes).collect());
    if !history {
        // An imported Case: a Case of the branches' gradient functions,
        // which recompute the forward values.
        let grad_names = branches
            .iter()
            .map(|name| grad_function(b, name))
            .collect::<Result<Vec<_>>>()?;
        let mut tin: Vec<_> = tout;
        tin.extend((0..tout_len).map(|j| b.graph.output(Output::new(node.id, j)).dtype));
        attrs.push(("Tin", AttrValue::TypeList(tin)));
        attrs.push(("branches", as_list(grad_names)));
        if let Some(r) = node.attrs.get("_ref_inputs") {
            attrs.push(("_ref_inputs", r.clone()));
        }
        attrs.push(("_gradient", AttrValue::Bool(true)));
        let id = b.node("Case", &inputs, attrs)?;
        return Ok(input_grads(b, node, 1, id));
    }
    let mut grad_names = Vec::new();
    let mut savings = Vec::new();
    let mut grads_saved = Vec::new();
    for name in &branches {
        let (grad_name, saving) = branch_grad(b, name)?;
        grad_names.push(grad_name);
        let (s, g) = saving.unwrap_or_default();
        savings.push(s);
        grads_saved.push(g);
    }
    attrs.push(("branch_grads", as_list(grad_names)));
    attrs.push(("branch_savings", as_list(savings)));
    attrs.push(("branch_grads_saved", as_list(grads_saved)));
    inputs.push(Output::new(node.id, tout_len));
    let id = b.node("CaseGrad", &inputs, attrs)?;
    Ok(input_grads(b, node, 1, id))
}

/// The gradient of a function call: a call of the function's gradient
/// function (which recomputes the forward values it reads).
fn call_grad(
    b: &mut Builder<'_>,
    node: &Node,
    grads: &[Option<Output>],
) -> Result<Vec<Option<Grad>>> {
    let grad = grad_function(b, &node.attrs.string("f")?)?;
    let mut inputs = node.inputs.clone();
    inputs.extend(output_grads(b, node, node.outputs.len(), grads)?);
    let id = b.node(
        "PartitionedCall",
        &inputs,
        vec![
            ("f", AttrValue::Str(grad.into_bytes())),
            ("_gradient", AttrValue::Bool(true)),
        ],
    )?;
    Ok(input_grads(b, node, 0, id))
}

fn while_grad(
    b: &mut Builder<'_>,
    node: &Node,
    grads: &[Option<Output>],
) -> Result<Vec<Option<Grad>>> {
    let n = node.inputs.len();
    if !node.attrs.bool_or("_history", false)? {
        return Err(Error::value(format!(
            "the while loop '{}' was built with back_prop=False (or without floating-point \
             loop variables) and keeps no history to differentiate",
            node.name
        )));
    }
    let body = node.attrs.string("body")?;
    let body_grad = grad_function(b, &body)?;
    // Iteration values are kept only for the loop variables the backward
    // body reads and the forward body changes; the others are fed the
    // loop's input (an invariant's value, or a placeholder never read).
    let from_history: Vec<bool> = {
        let invariant: Vec<bool> = {
            let f = b.graph.function(&body)?;
            (0..n).map(|i| f.passes_through(i)).collect()
        };
        let needed = args_read(b.graph.function(&body_grad)?);
        let mut h: Vec<bool> = (0..n).map(|i| needed[i] && !invariant[i]).collect();
        // One history at least: its length is the number of iterations.
        if !h.iter().any(|&x| x) {
            h[invariant.iter().position(|&x| !x).unwrap_or(0)] = true;
        }
        h
    };
    let dy = output_grads(b, node, n, grads)?;
    let mut inputs = node.inputs.clone();
    inputs.extend((0..n).map(|i| {
        if from_history[i] {
            Output::new(node.id, n + i)
        } else {
            node.inputs[i]
        }
    }));
    inputs.extend(dy);
    let mut attrs = vec![
        ("body_grad", AttrValue::Str(body_grad.into_bytes())),
        ("from_history", AttrValue::BoolList(from_history)),
    ];
    // Where the forward loop can keep the values the backward body reads,
    // the backward body takes them instead of recomputing them.
    if let Some((saving_body, grad_saved, n_saved)) = saving_functions(b, &body)? {
        attrs.push(("saving_body", AttrValue::Str(saving_body.into_bytes())));
        attrs.push(("body_grad_saved", AttrValue::Str(grad_saved.into_bytes())));
        attrs.push(("num_saved", AttrValue::Int(n_saved as i64)));
    }
    let id = b.node("WhileGrad", &inputs, attrs)?;
    Ok(input_grads(b, node, 0, id))
}

/// Which of a function's arguments its outputs depend on.
fn args_read(f: &Function) -> Vec<bool> {
    let g = &f.graph;
    let mut seen = vec![false; g.len()];
    let mut stack: Vec<usize> = f.outputs.iter().map(|o| o.node).collect();
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id], true) {
            continue;
        }
        let node = g.node(id);
        stack.extend(node.inputs.iter().map(|o| o.node));
        stack.extend(node.control_inputs.iter().copied());
    }
    f.args.iter().map(|a| seen[a.node]).collect()
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, crate::registry::GradEntry)) {
    use crate::registry::GradEntry::Func;
    reg("If", Func(if_grad));
    reg("PartitionedCall", Func(call_grad));
    reg("StatefulPartitionedCall", Func(call_grad));
    reg("IfGrad", crate::registry::GradEntry::NotDifferentiable);
    reg("Case", Func(case_grad));
    reg("StatelessCase", Func(case_grad));
    reg("CaseGrad", crate::registry::GradEntry::NotDifferentiable);
    reg("While", Func(while_grad));
}
