//! The fused updates as TensorFlow writes updates, for GraphDefs TensorFlow
//! imports (registered with `ferroflow_records::graph_def::tf_form`).
//!
//! `ApplyFused` (one op for all the variables of a step) becomes
//! TensorFlow's per-variable update ops (`ApplyAdam`, `ApplyMomentum`, ...,
//! from [`tf_update_ops`]), each waiting for every gradient as the fused op
//! does. `SparseApplyFused` (one variable, an `IndexedSlices` gradient)
//! becomes what TensorFlow 1's optimizers build for such a gradient: `Unique`
//! and `UnsortedSegmentSum` summing duplicate rows, then `SparseApplyAdagrad`,
//! `SparseApplyMomentum`, ...; `ScatterSub` for plain SGD (duplicates applied
//! one by one); and for Adam, which has no sparse op, the decay of both
//! moments, their scatter-adds and the update of every row written out.
//! Both end in a `NoOp` that takes the node's name and carries it, so
//! ferroflow's import puts the fused op back.

use std::collections::{BTreeSet, HashMap};

use ferroflow_records::graph_def::attr_value::Value;
use ferroflow_records::graph_def::tf_form::{register_tf_form, FormInput, NodeWriter};
use ferroflow_records::graph_def::NodeDef;
use ferroflow_tensor::{bail, Result};

use crate::{tf_update_ops, TfUpdateOp};

const INT32: i32 = 3;
const INT64: i32 = 9;
/// TensorFlow's reference types are the base type plus 100.
const REF: i32 = 100;

/// Registers the TensorFlow forms of `ApplyFused` and `SparseApplyFused`.
pub(crate) fn register() {
    register_tf_form("ApplyFused", dense_form);
    register_tf_form("SparseApplyFused", sparse_form);
}

fn flag(node: &NodeDef, key: &str) -> bool {
    matches!(
        node.attr.get(key).and_then(|a| a.value.as_ref()),
        Some(Value::B(true))
    )
}

fn rule(node: &NodeDef) -> String {
    match node.attr.get("rule").and_then(|a| a.value.as_ref()) {
        Some(Value::S(s)) => String::from_utf8_lossy(s).into_owned(),
        _ => String::new(),
    }
}

/// TensorFlow's update op for the fused update `node` and the number of
/// slots it takes.
fn tf_update_op(node: &NodeDef, sparse: bool) -> Result<(TfUpdateOp, usize)> {
    let rule = rule(node);
    let (centered, shrinkage) = (flag(node, "centered"), flag(node, "shrinkage"));
    let Some(spec) = tf_update_ops().into_iter().find(|s| {
        s.rule == rule
            && s.centered == centered
            && s.shrinkage == shrinkage
            && s.indices.is_some() == sparse
    }) else {
        bail!(
            invalid_argument,
            "no TensorFlow update op for the '{rule}' rule"
        );
    };
    // The leading inputs that are neither gradient, indices nor hyper-parameters: the slots.
    let slots = (1..spec.inputs.len())
        .filter(|&i| i != spec.grad && Some(i) != spec.indices && !spec.hypers.contains(&Some(i)))
        .count();
    Ok((spec, slots))
}

/// `{input position: (tensor, dtype)}` of the update op's hyper-parameters,
/// given the fused op's. TensorFlow's AdagradDA is fed the step counting
/// from 1; the fused op adds the 1 itself.
fn hyper_inputs(
    w: &mut NodeWriter,
    spec: &TfUpdateOp,
    hypers: &[&str],
    hyper_types: &[i32],
) -> HashMap<usize, (String, i32)> {
    let mut out = HashMap::new();
    for ((pos, &name), &dtype) in spec.hypers.iter().zip(hypers).zip(hyper_types) {
        let Some(pos) = *pos else {
            continue; // ApplyFtrl has no l2 shrinkage input
        };
        let mut name = name.to_string();
        if spec.inputs[pos] == "global_step" {
            let one = w.scalar("one", INT64, 1.0);
            name = w.add(
                "global_step_plus_one",
                "AddV2",
                &[&name, &one],
                &[dtype, dtype],
                &[dtype],
                &[],
                &[],
                None,
            );
        }
        out.insert(pos, (name, dtype));
    }
    out
}

/// The `use_nesterov` attr of a momentum update, when the fused node sets it.
fn nesterov(spec: &TfUpdateOp, node: &NodeDef) -> Vec<(&'static str, Value)> {
    if spec.rule == "momentum" && node.attr.contains_key("use_nesterov") {
        return vec![("use_nesterov", Value::B(flag(node, "use_nesterov")))];
    }
    Vec::new()
}

fn node_name(input: &str) -> &str {
    input.split(':').next().unwrap_or(input)
}

/// `ApplyFused` as one TensorFlow update op per variable.
fn dense_form(input: &FormInput) -> Result<Vec<NodeDef>> {
    let node = input.def;
    let (spec, slots) = tf_update_op(node, false)?;
    let n = match node.attr.get("N").and_then(|a| a.value.as_ref()) {
        Some(Value::I(n)) => *n as usize,
        _ => bail!(invalid_argument, "ApplyFused has no N attr"),
    };
    let data = input.data_inputs();
    let types = &input.input_types;
    let (first_grad, first_hyper) = (n * (1 + slots), n * (2 + slots));
    if data.len() < first_hyper {
        bail!(
            invalid_argument,
            "ApplyFused has {} inputs, fewer than its {n} variables need",
            data.len()
        );
    }
    let dtype = types[0];
    let mut w = NodeWriter::new(input);
    let hypers = hyper_inputs(&mut w, &spec, &data[first_hyper..], &types[first_hyper..]);
    // The fused op changes no variable before every gradient is computed. With reference variables a
    // gradient may still read a variable another update is writing, so each update waits for all the
    // gradients, as the fused op does.
    let grad_nodes: BTreeSet<&str> = data[first_grad..first_grad + n]
        .iter()
        .map(|g| node_name(g))
        .collect();
    let grad_nodes: Vec<&str> = grad_nodes.into_iter().collect();
    let ready = w.add(
        "gradients_ready",
        "NoOp",
        &[],
        &[],
        &[],
        &[],
        &grad_nodes,
        None,
    );
    let mut updates = Vec::with_capacity(n);
    for k in 0..n {
        let mut inputs: Vec<String> = Vec::new();
        let mut in_types = Vec::new();
        for pos in 0..spec.inputs.len() {
            if pos <= slots {
                let at = if pos == 0 { k } else { n + k * slots + pos - 1 };
                inputs.push(data[at].to_string());
                in_types.push(dtype + REF);
            } else if pos == spec.grad {
                inputs.push(data[first_grad + k].to_string());
                in_types.push(types[first_grad + k]);
            } else {
                let (name, t) = &hypers[&pos];
                inputs.push(name.clone());
                in_types.push(*t);
            }
        }
        let suffix = if k == 0 {
            spec.op.to_string()
        } else {
            format!("{}_{k}", spec.op)
        };
        let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let shape = input.input_shapes[k].clone();
        updates.push(w.add(
            &suffix,
            spec.op,
            &inputs,
            &in_types,
            &[dtype + REF],
            &nesterov(&spec, node),
            &[&ready],
            Some(vec![shape.dims().map(|_| shape.clone())]),
        ));
    }
    Ok(w.finish_group(&updates))
}

/// `SparseApplyFused` as TensorFlow 1's optimizers write a sparse update.
fn sparse_form(input: &FormInput) -> Result<Vec<NodeDef>> {
    let node = input.def;
    let rule = rule(node);
    let data = input.data_inputs();
    let types = &input.input_types[..data.len()];
    let (dtype, var_ref) = (types[0], types[0] + REF);
    let mut w = NodeWriter::new(input);
    let t1 = [dtype];
    let t2 = [dtype, dtype];
    if rule == "sgd" {
        // var, values, indices, lr: duplicates apply one after another, as ScatterSub does.
        let [var, values, indices, lr] = data[..] else {
            bail!(
                invalid_argument,
                "sparse SGD takes 4 inputs, not {}",
                data.len()
            );
        };
        let scaled = w.add("mul", "Mul", &[values, lr], &t2, &t1, &[], &[], None);
        let update = w.add(
            "ScatterSub",
            "ScatterSub",
            &[var, indices, &scaled],
            &[var_ref, types[2], dtype],
            &[var_ref],
            &[],
            &[],
            None,
        );
        return Ok(w.finish_group(&[update]));
    }
    // (TensorFlow has no sparse Adam op: its optimizer writes the update out in ops, as below.)
    let (spec, slots) = if rule == "adam" {
        (None, 2)
    } else {
        let (spec, slots) = tf_update_op(node, true)?;
        (Some(spec), slots)
    };
    if data.len() < 3 + slots {
        bail!(
            invalid_argument,
            "SparseApplyFused ({rule}) has {} inputs, fewer than {}",
            data.len(),
            3 + slots
        );
    }
    let (var, slot_refs) = (data[0], &data[1..1 + slots]);
    let (values, indices) = (data[1 + slots], data[2 + slots]);
    let index_type = types[2 + slots];
    let (hypers, hyper_types) = (&data[3 + slots..], &types[3 + slots..]);
    // Duplicate rows summed in index order, as TensorFlow 1's optimizers do before the update.
    let out_idx = [("out_idx", Value::Type(INT32))];
    let unique = w.add(
        "Unique",
        "Unique",
        &[indices],
        &[index_type],
        &[index_type, INT32],
        &out_idx,
        &[],
        None,
    );
    let count = w.add(
        "Size",
        "Size",
        &[&unique],
        &[index_type],
        &[INT32],
        &[("out_type", Value::Type(INT32))],
        &[],
        None,
    );
    let positions = format!("{unique}:1");
    let summed = w.add(
        "UnsortedSegmentSum",
        "UnsortedSegmentSum",
        &[values, &positions, &count],
        &[dtype, INT32, INT32],
        &t1,
        &[],
        &[],
        None,
    );
    let Some(spec) = spec else {
        let [p1, p2, lr, beta1, beta2, eps] = hypers[..] else {
            bail!(
                invalid_argument,
                "sparse Adam takes 6 hyper-parameters, not {}",
                hypers.len()
            );
        };
        let (m, v) = (slot_refs[0], slot_refs[1]);
        let op = |w: &mut NodeWriter, suffix: &str, op: &str, inputs: &[&str], types: &[i32]| {
            let out = if matches!(op, "Assign" | "ScatterAdd" | "AssignSub") {
                var_ref
            } else {
                dtype
            };
            w.add(suffix, op, inputs, types, &[out], &[], &[], None)
        };
        let one = w.scalar("one", dtype, 1.0);
        let b1c = op(&mut w, "one_minus_beta1", "Sub", &[&one, beta1], &t2);
        let b2c = op(&mut w, "one_minus_beta2", "Sub", &[&one, beta2], &t2);
        let p2c = op(&mut w, "one_minus_beta2_power", "Sub", &[&one, p2], &t2);
        let root = op(&mut w, "sqrt_one_minus_beta2_power", "Sqrt", &[&p2c], &t1);
        let lr_root = op(&mut w, "lr_root", "Mul", &[lr, &root], &t2);
        let p1c = op(&mut w, "one_minus_beta1_power", "Sub", &[&one, p1], &t2);
        let alpha = op(&mut w, "alpha", "RealDiv", &[&lr_root, &p1c], &t2);
        let refs = [var_ref, dtype];
        let scatter = [var_ref, index_type, dtype];
        let m_beta1 = op(&mut w, "m_beta1", "Mul", &[m, beta1], &refs);
        let m_decay = op(&mut w, "m_decay", "Assign", &[m, &m_beta1], &refs);
        let m_scaled = op(&mut w, "m_scaled", "Mul", &[&summed, &b1c], &t2);
        let m_new = op(
            &mut w,
            "m_scatter",
            "ScatterAdd",
            &[&m_decay, &unique, &m_scaled],
            &scatter,
        );
        let v_beta2 = op(&mut w, "v_beta2", "Mul", &[v, beta2], &refs);
        let v_decay = op(&mut w, "v_decay", "Assign", &[v, &v_beta2], &refs);
        let g_b2c = op(&mut w, "g_b2c", "Mul", &[&summed, &b2c], &t2);
        let v_scaled = op(&mut w, "v_scaled", "Mul", &[&summed, &g_b2c], &t2);
        let v_new = op(
            &mut w,
            "v_scatter",
            "ScatterAdd",
            &[&v_decay, &unique, &v_scaled],
            &scatter,
        );
        let v_sqrt = op(&mut w, "v_sqrt", "Sqrt", &[&v_new], &[var_ref]);
        let den = op(&mut w, "denominator", "AddV2", &[&v_sqrt, eps], &t2);
        let alpha_m = op(
            &mut w,
            "alpha_m",
            "Mul",
            &[&alpha, &m_new],
            &[dtype, var_ref],
        );
        let step = op(&mut w, "step", "RealDiv", &[&alpha_m, &den], &t2);
        let update = op(&mut w, "AssignSub", "AssignSub", &[var, &step], &refs);
        return Ok(w.finish_group(&[update]));
    };
    let hyper = hyper_inputs(&mut w, &spec, hypers, hyper_types);
    let mut inputs: Vec<String> = Vec::new();
    let mut in_types = Vec::new();
    for pos in 0..spec.inputs.len() {
        if pos <= slots {
            inputs.push(data[pos].to_string());
            in_types.push(var_ref);
        } else if pos == spec.grad {
            inputs.push(summed.clone());
            in_types.push(dtype);
        } else if Some(pos) == spec.indices {
            inputs.push(unique.clone());
            in_types.push(index_type);
        } else {
            let (name, t) = &hyper[&pos];
            inputs.push(name.clone());
            in_types.push(*t);
        }
    }
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let update = w.add(
        spec.op,
        spec.op,
        &inputs,
        &in_types,
        &[var_ref],
        &nesterov(&spec, node),
        &[],
        None,
    );
    Ok(w.finish_group(&[update]))
}
