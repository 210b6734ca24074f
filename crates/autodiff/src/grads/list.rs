//! Gradients of the list ops under `tf.TensorArray`: the gradient of a
//! list is a list (absent elements are zeros), summed element-wise.

use super::d;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::Result;

/// The forward node's element attributes, for the gradient's list ops.
fn element_attrs(node: &Node, zeros_if_absent: bool) -> Vec<(&'static str, AttrValue)> {
    let mut attrs = Vec::new();
    for key in ["element_dtype", "element_shape"] {
        if let Some(v) = node.attrs.get(key) {
            attrs.push((key, v.clone()));
        }
    }
    if zeros_if_absent {
        attrs.push(("zeros_if_absent", AttrValue::Bool(true)));
    }
    attrs
}

type Grads = Result<Vec<Option<Grad>>>;

fn set_item(b: &mut Builder<'_>, node: &Node, g: &[Option<Output>]) -> Grads {
    let Some(dl) = g[0] else {
        return Ok(vec![None; 3]);
    };
    // The slot written was empty before, so the list's other elements take
    // the gradient as it is.
    let item = b.op(
        "ListGetItem",
        &[dl, node.inputs[1]],
        element_attrs(node, true),
    )?;
    Ok(vec![d(dl), None, d(item)])
}

fn scatter(b: &mut Builder<'_>, node: &Node, g: &[Option<Output>]) -> Grads {
    let Some(dl) = g[0] else {
        return Ok(vec![None; 3]);
    };
    let value = b.op(
        "ListGather",
        &[dl, node.inputs[1]],
        element_attrs(node, true),
    )?;
    Ok(vec![d(dl), None, d(value)])
}

fn read(b: &mut Builder<'_>, node: &Node, g: &[Option<Output>]) -> Grads {
    let Some(dy) = g[0] else {
        return Ok(vec![None, None]);
    };
    let dl = b.op("ListOneHot", &[node.inputs[0], node.inputs[1], dy], vec![])?;
    Ok(vec![d(dl), None])
}

fn stack(b: &mut Builder<'_>, node: &Node, g: &[Option<Output>]) -> Grads {
    let Some(dy) = g[0] else {
        return Ok(vec![None]);
    };
    let dl = b.op("ListFromTensor", &[dy], element_attrs(node, false))?;
    Ok(vec![d(dl)])
}

fn from_tensor(b: &mut Builder<'_>, node: &Node, g: &[Option<Output>]) -> Grads {
    let Some(dl) = g[0] else {
        return Ok(vec![None]);
    };
    let x = node.inputs[0];
    let info = b.graph.output(x).clone();
    let rows = match info.shape.dims() {
        Some(dims) if !dims.is_empty() => {
            ferroflow_graph::PartialShape::from_dims(dims[1..].to_vec())
        }
        _ => ferroflow_graph::PartialShape::unknown(),
    };
    let dx = b.op(
        "ListStack",
        &[dl],
        vec![
            ("element_dtype", AttrValue::Type(info.dtype)),
            ("element_shape", AttrValue::Shape(rows)),
            ("zeros_if_absent", AttrValue::Bool(true)),
        ],
    )?;
    Ok(vec![d(dx)])
}

fn concat(b: &mut Builder<'_>, node: &Node, g: &[Option<Output>]) -> Grads {
    let Some(dy) = g[0] else {
        return Ok(vec![None]);
    };
    let lengths = Output::new(node.id, 1);
    let dl = b.op("ListSplit", &[dy, lengths], element_attrs(node, false))?;
    Ok(vec![d(dl)])
}

fn split(b: &mut Builder<'_>, node: &Node, g: &[Option<Output>]) -> Grads {
    let Some(dl) = g[0] else {
        return Ok(vec![None, None]);
    };
    let dv = b.op("ListConcat", &[dl], element_attrs(node, true))?;
    Ok(vec![d(dv), None])
}

fn add_n(_: &mut Builder<'_>, node: &Node, g: &[Option<Output>]) -> Grads {
    Ok(node.inputs.iter().map(|_| g[0].map(Grad::Dense)).collect())
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, crate::registry::GradEntry)) {
    use crate::registry::GradEntry::{Func, NotDifferentiable};
    reg("ListSetItem", Func(set_item));
    reg("ListScatter", Func(scatter));
    reg("ListGetItem", Func(read));
    reg("ListGather", Func(read));
    reg("ListStack", Func(stack));
    reg("ListFromTensor", Func(from_tensor));
    reg("ListConcat", Func(concat));
    reg("ListSplit", Func(split));
    reg("ListAddN", Func(add_n));
    for op in ["ListReserve", "ListSize", "ListZerosLike", "ListOneHot"] {
        reg(op, NotDifferentiable);
    }
}
