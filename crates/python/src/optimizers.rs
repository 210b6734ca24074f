//! The fused optimizer rules as the Python optimizers read them: each
//! rule's slot and hyper-parameter inputs, and TensorFlow's update ops with
//! the rule each maps onto (`ferroflow_train` is the one source of both).

use pyo3::prelude::*;

/// The fused update rules as `{rule: {"slots": [...], "centered_slots": [...], "hypers": [...]}}`: the
/// slot and hyper-parameter inputs of `ApplyFused`/`SparseApplyFused` in input order. The Python
/// optimizers order their inputs by this table (`ferroflow_train::rules::RuleKind` is the one source).
#[pyfunction]
pub(crate) fn optimizer_rules(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let rules = pyo3::types::PyDict::new(py);
    for kind in ferroflow_train::rules::RuleKind::ALL {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("slots", kind.slot_names(false).to_vec())?;
        d.set_item("centered_slots", kind.slot_names(true).to_vec())?;
        d.set_item("hypers", kind.hyper_names().to_vec())?;
        rules.set_item(kind.name(), d)?;
    }
    Ok(rules)
}

/// TensorFlow's update ops and the fused rule each maps onto, as dicts (see
/// `ferroflow_train::TfUpdateOp`): how `graph_def_util` writes `ApplyFused`
/// as TensorFlow's ops.
#[pyfunction]
pub(crate) fn tf_update_ops(py: Python<'_>) -> PyResult<Vec<Bound<'_, pyo3::types::PyDict>>> {
    ferroflow_train::tf_update_ops()
        .into_iter()
        .map(|u| {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("op", u.op)?;
            d.set_item("rule", u.rule)?;
            d.set_item("centered", u.centered)?;
            d.set_item("shrinkage", u.shrinkage)?;
            d.set_item("inputs", u.inputs.to_vec())?;
            d.set_item("grad", u.grad)?;
            d.set_item("indices", u.indices)?;
            d.set_item("hypers", u.hypers)?;
            Ok(d)
        })
        .collect()
}
