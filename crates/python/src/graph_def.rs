//! GraphDefs TensorFlow reads, for Python: `Graph.as_graph_def` and the
//! TensorFlow-compatibility steps of `tf.import_graph_def` and the MetaGraph
//! functions. The mapping itself lives in `ferroflow_records::graph_def`;
//! Python only parses and builds its protobuf objects around it.

use std::collections::HashMap;

use crate::errors::IntoPyResult;
use ferroflow_records::graph_def::{library, registry, tf_form, GraphDef, NodeDef};
use ferroflow_records::proto::Message;
use ferroflow_tensor::Error;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn decode<M: Message + Default>(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<M> {
    M::decode(bytes)
        .map_err(|e| Error::invalid_argument(format!("not a serialized {what}: {e}")))
        .py(py)
}

/// The serialized `GraphDef` of `graph`'s nodes from `start` on, in the form
/// TensorFlow imports (`Graph.as_graph_def`); `add_shapes` adds
/// `_output_shapes` attributes.
#[pyfunction]
#[pyo3(signature = (graph, start = 0, add_shapes = false, producer = 0))]
fn graph_def(
    py: Python<'_>,
    graph: &crate::Graph,
    start: usize,
    add_shapes: bool,
    producer: i32,
) -> PyResult<Py<PyBytes>> {
    let def = {
        let g = graph.inner.read();
        ferroflow_records::graph_def::tf_graph_def(&g, start, add_shapes, producer)
    };
    Ok(PyBytes::new(py, &def.py(py)?.encode_to_vec()).unbind())
}

/// TensorFlow's op registry table (signatures and attr defaults) as JSON.
#[pyfunction]
fn tf_op_registry() -> &'static str {
    registry::registry_json()
}

/// `{attr name: serialized AttrValue}`: the registered defaults of the
/// attrs the serialized NodeDef lacks (type attrs excepted), for import.
#[pyfunction]
fn missing_default_attrs(
    py: Python<'_>,
    node_def: &[u8],
) -> PyResult<HashMap<String, Py<PyBytes>>> {
    let node: NodeDef = decode(py, node_def, "NodeDef")?;
    Ok(registry::missing_defaults(&node)
        .into_iter()
        .map(|(k, v)| (k, PyBytes::new(py, &v.encode_to_vec()).unbind()))
        .collect())
}

/// `(restored: [(index, serialized node)], dropped: [index])`, see [`fused_groups`].
type FusedGroups = (Vec<(usize, Py<PyBytes>)>, Vec<usize>);

/// What putting back the fused updates export wrote as TensorFlow's ops
/// changes in a node list, given every node's name and the serialized
/// `NoOp`s that may carry one (by index): `(restored, dropped)`, `restored`
/// as `(index of the group's NoOp, serialized original node)`, `dropped` the
/// indices of the nodes written for them. (Only names and the groups cross
/// the boundary: serializing every node would cost more than the check.)
#[pyfunction]
fn fused_groups(
    py: Python<'_>,
    names: Vec<String>,
    groups: Vec<(usize, Vec<u8>)>,
) -> PyResult<FusedGroups> {
    let mut nodes: Vec<NodeDef> = names
        .into_iter()
        .map(|name| NodeDef {
            name,
            ..Default::default()
        })
        .collect();
    for (i, bytes) in groups {
        if i < nodes.len() {
            nodes[i] = decode(py, &bytes, "NodeDef")?;
        }
    }
    let found = tf_form::fused_groups(&nodes);
    let mut dropped: Vec<usize> = found.dropped.into_iter().collect();
    dropped.sort_unstable();
    Ok((
        found
            .restored
            .into_iter()
            .map(|(i, n)| (i, PyBytes::new(py, &n.encode_to_vec()).unbind()))
            .collect(),
        dropped,
    ))
}

/// How many of `count` outputs each output arg of the serialized NodeDef's
/// op takes (TensorFlow's signature; list lengths from the node's attrs);
/// None for an op TensorFlow lacks or a count that does not fit.
#[pyfunction]
fn output_arg_lengths(
    py: Python<'_>,
    node_def: &[u8],
    count: usize,
) -> PyResult<Option<Vec<usize>>> {
    let node: NodeDef = decode(py, node_def, "NodeDef")?;
    Ok(registry::signature(&node.op)
        .and_then(|s| registry::arg_lengths(&s.outputs, count, &node.attr)))
}

/// For each node of the serialized GraphDef, then each node of each library
/// function in order, the names of its attrs that hold their op's
/// registered default (what `strip_default_attrs=True` removes).
#[pyfunction]
fn default_valued_attrs(py: Python<'_>, graph_def: &[u8]) -> PyResult<Vec<Vec<String>>> {
    let def: GraphDef = decode(py, graph_def, "GraphDef")?;
    Ok(registry::default_valued_attrs(&def))
}

/// `(attrs naming one function, attrs naming a list of functions)`.
#[pyfunction]
fn function_attr_names() -> (Vec<&'static str>, Vec<&'static str>) {
    (
        library::FUNCTION_ATTRS.to_vec(),
        library::FUNCTION_LIST_ATTRS.to_vec(),
    )
}

/// Adds the GraphDef functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TF_FORM_ORIGINAL_ATTR", tf_form::ORIGINAL_ATTR)?;
    m.add_function(wrap_pyfunction!(graph_def, m)?)?;
    m.add_function(wrap_pyfunction!(tf_op_registry, m)?)?;
    m.add_function(wrap_pyfunction!(default_valued_attrs, m)?)?;
    m.add_function(wrap_pyfunction!(output_arg_lengths, m)?)?;
    m.add_function(wrap_pyfunction!(missing_default_attrs, m)?)?;
    m.add_function(wrap_pyfunction!(fused_groups, m)?)?;
    m.add_function(wrap_pyfunction!(function_attr_names, m)?)?;
    Ok(())
}
