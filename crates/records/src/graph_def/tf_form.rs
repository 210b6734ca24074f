//! TensorFlow forms of the ops only ferroflow has: export writes such a node
//! as the TensorFlow ops that compute the same thing, so that TensorFlow can
//! import and run the graph.
//!
//! Each crate registers the forms of its own ops ([`register_tf_form`]);
//! this module holds the registry, the [`NodeWriter`] forms build their
//! nodes with, and the form of `ReducedShape` (an op of the core graph that
//! reduction gradients use). A form that stands for a stateful node can
//! keep the original: [`NodeWriter::finish_group`] writes a `NoOp` that takes
//! the node's name and carries it (`_ferroflow_fused`) with the names of the
//! nodes written for it (`_ferroflow_expansion`). TensorFlow ignores attrs
//! that start with `_`; ferroflow's import puts the node back
//! ([`restore_fused_updates`]), so a graph round-tripping through a file
//! keeps, say, one pooled optimizer update for all variables.

use std::collections::{HashMap, HashSet};
use std::sync::{OnceLock, RwLock};

use ferroflow_graph::PartialShape;
use ferroflow_tensor::Result;
use prost::Message;

use super::registry::add_signature_attrs;
use super::{attr_value::Value, shape_proto, AttrValue, ListValue, NodeDef};
use crate::graph_import::parse_input;
use crate::proto::{Dim, TensorProto, TensorShapeProto};

/// The attr of a group's `NoOp` holding the serialized original node.
pub const ORIGINAL_ATTR: &str = "_ferroflow_fused";
/// The attr of a group's `NoOp` listing the names of the nodes written for it.
pub const EXPANSION_ATTR: &str = "_ferroflow_expansion";

/// What a form sees of the node it rewrites.
pub struct FormInput<'a> {
    /// The node as ferroflow writes it: name, op, inputs (`^name` controls
    /// last), device, attrs, and `_output_shapes` when shapes are written.
    pub def: &'a NodeDef,
    /// The `DataType` of each data input (base types, never references).
    pub input_types: Vec<i32>,
    /// The static shape of each data input.
    pub input_shapes: Vec<PartialShape>,
    /// Whether the written nodes get `_output_shapes`.
    pub add_shapes: bool,
}

impl FormInput<'_> {
    /// The node's data inputs (`name` or `name:i`).
    pub fn data_inputs(&self) -> Vec<&str> {
        self.def
            .input
            .iter()
            .filter(|i| !i.starts_with('^'))
            .map(String::as_str)
            .collect()
    }

    /// The node's control inputs, as written (`^name`).
    pub fn control_inputs(&self) -> Vec<String> {
        self.def
            .input
            .iter()
            .filter(|i| i.starts_with('^'))
            .cloned()
            .collect()
    }
}

/// Writes one ferroflow node as TensorFlow nodes, the last of which (or the
/// group `NoOp`) takes its name.
pub type TfForm = fn(&FormInput) -> Result<Vec<NodeDef>>;

fn forms() -> &'static RwLock<HashMap<&'static str, TfForm>> {
    static FORMS: OnceLock<RwLock<HashMap<&'static str, TfForm>>> = OnceLock::new();
    FORMS.get_or_init(|| {
        let mut forms: HashMap<&'static str, TfForm> = HashMap::new();
        forms.insert("ReducedShape", reduced_shape_form);
        RwLock::new(forms)
    })
}

/// Registers the TensorFlow form of ferroflow's op `op` (replacing any earlier one).
pub fn register_tf_form(op: &'static str, form: TfForm) {
    forms()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(op, form);
}

/// The registered TensorFlow form of `op`, if it needs one.
pub fn tf_form(op: &str) -> Option<TfForm> {
    forms()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(op)
        .copied()
}

fn attr(value: Value) -> AttrValue {
    AttrValue { value: Some(value) }
}

fn shape_list(shapes: Vec<TensorShapeProto>) -> AttrValue {
    attr(Value::List(ListValue {
        shape: shapes,
        ..Default::default()
    }))
}

fn dims(sizes: &[i64]) -> TensorShapeProto {
    TensorShapeProto {
        dim: sizes
            .iter()
            .map(|&size| Dim {
                size,
                name: String::new(),
            })
            .collect(),
        unknown_rank: false,
    }
}

/// Builds the nodes that stand for one ferroflow node: named under it, on
/// its device.
pub struct NodeWriter<'a> {
    node: &'a NodeDef,
    add_shapes: bool,
    out: Vec<NodeDef>,
}

impl<'a> NodeWriter<'a> {
    pub fn new(input: &'a FormInput) -> NodeWriter<'a> {
        NodeWriter {
            node: input.def,
            add_shapes: input.add_shapes,
            out: Vec::new(),
        }
    }

    /// A node `<name>/<suffix>` of `op` reading `inputs`, after `controls`
    /// (node names), with `attrs` and the type attrs TensorFlow's signature
    /// of `op` needs for `input_types` / `output_types`. `shapes` gives each
    /// output's static shape (None: unknown rank), used when shapes are
    /// written. Returns the node's name.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        suffix: &str,
        op: &str,
        inputs: &[&str],
        input_types: &[i32],
        output_types: &[i32],
        attrs: &[(&str, Value)],
        controls: &[&str],
        shapes: Option<Vec<Option<PartialShape>>>,
    ) -> String {
        let mut n = NodeDef {
            name: format!("{}/{suffix}", self.node.name),
            op: op.to_string(),
            input: inputs
                .iter()
                .map(|i| i.to_string())
                .chain(controls.iter().map(|c| format!("^{c}")))
                .collect(),
            device: self.node.device.clone(),
            attr: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), attr(v.clone())))
                .collect(),
        };
        add_signature_attrs(&mut n, input_types, output_types);
        if self.add_shapes {
            let shapes = shapes.unwrap_or_else(|| vec![None; output_types.len()]);
            let protos = shapes
                .iter()
                .map(|s| shape_proto(s.as_ref().unwrap_or(&PartialShape::unknown())))
                .collect();
            n.attr
                .insert("_output_shapes".to_string(), shape_list(protos));
        }
        self.push(n)
    }

    /// A scalar `Const` `<name>/<suffix>` of `dtype` holding `value`
    /// (converted to `dtype`, written as `tensor_content`).
    pub fn scalar(&mut self, suffix: &str, dtype: i32, value: f64) -> String {
        let content = scalar_bytes(dtype, value);
        let mut n = NodeDef {
            name: format!("{}/{suffix}", self.node.name),
            op: "Const".to_string(),
            device: self.node.device.clone(),
            ..Default::default()
        };
        n.attr.insert("dtype".to_string(), attr(Value::Type(dtype)));
        n.attr.insert(
            "value".to_string(),
            attr(Value::Tensor(TensorProto {
                dtype,
                tensor_content: content,
                ..Default::default()
            })),
        );
        if self.add_shapes {
            n.attr
                .insert("_output_shapes".to_string(), shape_list(vec![dims(&[])]));
        }
        self.push(n)
    }

    fn push(&mut self, n: NodeDef) -> String {
        let name = n.name.clone();
        self.out.push(n);
        name
    }

    /// The nodes written, then a `NoOp` that takes the original node's name,
    /// runs after `updates` and the node's own control inputs, and carries
    /// the original node (module docs).
    pub fn finish_group(self, updates: &[String]) -> Vec<NodeDef> {
        let node = self.node;
        let mut group = NodeDef {
            name: node.name.clone(),
            op: "NoOp".to_string(),
            input: updates
                .iter()
                .map(|u| format!("^{u}"))
                .chain(node.input.iter().filter(|i| i.starts_with('^')).cloned())
                .collect(),
            device: node.device.clone(),
            ..Default::default()
        };
        group.attr.insert(
            ORIGINAL_ATTR.to_string(),
            attr(Value::S(node.encode_to_vec())),
        );
        group.attr.insert(
            EXPANSION_ATTR.to_string(),
            attr(Value::List(ListValue {
                s: self
                    .out
                    .iter()
                    .map(|n| n.name.clone().into_bytes())
                    .collect(),
                ..Default::default()
            })),
        );
        if self.add_shapes {
            group
                .attr
                .insert("_output_shapes".to_string(), shape_list(Vec::new()));
        }
        let mut out = self.out;
        out.push(group);
        out
    }
}

/// `value` as one element of `dtype`, in little-endian bytes.
fn scalar_bytes(dtype: i32, value: f64) -> Vec<u8> {
    use ferroflow_tensor::DType;
    match DType::from_enum(dtype) {
        Some(DType::Float64) => value.to_le_bytes().to_vec(),
        Some(DType::Float16) => half::f16::from_f64(value).to_le_bytes().to_vec(),
        Some(DType::BFloat16) => half::bf16::from_f64(value).to_le_bytes().to_vec(),
        Some(DType::Int64) => (value as i64).to_le_bytes().to_vec(),
        Some(DType::Int32) => (value as i32).to_le_bytes().to_vec(),
        _ => (value as f32).to_le_bytes().to_vec(),
    }
}

/// `ReducedShape(input_shape, axes)` is `input_shape` with the entries at
/// `axes` (negative ones counting from the end) set to 1. As TensorFlow
/// ops: `rank = Size(input_shape)`; the axes flattened and made
/// non-negative by adding `rank` to the negative ones (not `FloorMod`, which
/// ferroflow refuses for a rank 0 even with no axes); a `[rank, len(axes)]`
/// table of `Range(rank)[:, None] == axes`; `Any` over its rows; and
/// `SelectV2(hit, 1, input_shape)`, which takes the node's name. The helper
/// nodes are named under it and share its device and control inputs.
fn reduced_shape_form(input: &FormInput) -> Result<Vec<NodeDef>> {
    const INT32: i32 = 3;
    let shape_type = input.input_types[0];
    let axes_type = input.input_types[1];
    let data = input.data_inputs();
    let t = Value::Type;
    let mut w = PlainWriter {
        node: input.def,
        controls: input.control_inputs(),
        add_shapes: input.add_shapes,
        out: Vec::new(),
    };
    let mut axes_in = data[1].to_string();
    if axes_type != shape_type {
        let cast = [
            ("SrcT", t(axes_type)),
            ("DstT", t(shape_type)),
            ("Truncate", Value::B(false)),
        ];
        axes_in = w.add("/axes", "Cast", &[&axes_in], &cast, Some(&[-1]));
    }
    let flat_shape = w.constant("/flat_shape", INT32, -1, &[1]);
    let zero = w.constant("/zero", shape_type, 0, &[]);
    let one = w.constant("/one", shape_type, 1, &[]);
    let column = w.constant("/column", INT32, 1, &[]);
    let shape_in = data[0];
    let typed = [("T", t(shape_type))];
    let rank = w.add(
        "/rank",
        "Size",
        &[shape_in],
        &[("T", t(shape_type)), ("out_type", t(shape_type))],
        Some(&[]),
    );
    let flat = w.add(
        "/flat_axes",
        "Reshape",
        &[&axes_in, &flat_shape],
        &[("T", t(shape_type)), ("Tshape", t(INT32))],
        Some(&[-1]),
    );
    let shifted = w.add(
        "/shifted_axes",
        "AddV2",
        &[&flat, &rank],
        &typed,
        Some(&[-1]),
    );
    let negative = w.add(
        "/negative_axes",
        "Less",
        &[&flat, &zero],
        &typed,
        Some(&[-1]),
    );
    let axes = w.add(
        "/reduced_axes",
        "SelectV2",
        &[&negative, &shifted, &flat],
        &typed,
        Some(&[-1]),
    );
    let range = w.add(
        "/dims",
        "Range",
        &[&zero, &rank, &one],
        &[("Tidx", t(shape_type))],
        Some(&[-1]),
    );
    let column_dims = w.add(
        "/dims_column",
        "ExpandDims",
        &[&range, &column],
        &[("T", t(shape_type)), ("Tdim", t(INT32))],
        Some(&[-1, 1]),
    );
    let hits = w.add(
        "/hits",
        "Equal",
        &[&column_dims, &axes],
        &[
            ("T", t(shape_type)),
            ("incompatible_shape_error", Value::B(true)),
        ],
        Some(&[-1, -1]),
    );
    let reduced = w.add(
        "/reduced",
        "Any",
        &[&hits, &column],
        &[("Tidx", t(INT32)), ("keep_dims", Value::B(false))],
        Some(&[-1]),
    );
    w.add("", "SelectV2", &[&reduced, &one, shape_in], &typed, None);
    Ok(w.out)
}

/// Writes nodes with exactly the attrs given (no signature lookup), each
/// after the original node's control inputs; `ReducedShape`'s form.
struct PlainWriter<'a> {
    node: &'a NodeDef,
    controls: Vec<String>,
    add_shapes: bool,
    out: Vec<NodeDef>,
}

impl PlainWriter<'_> {
    /// A node `<name><suffix>`; `shape` None takes the original node's output shapes.
    fn add(
        &mut self,
        suffix: &str,
        op: &str,
        inputs: &[&str],
        attrs: &[(&str, Value)],
        shape: Option<&[i64]>,
    ) -> String {
        let mut n = NodeDef {
            name: format!("{}{suffix}", self.node.name),
            op: op.to_string(),
            input: inputs
                .iter()
                .map(|i| i.to_string())
                .chain(self.controls.iter().cloned())
                .collect(),
            device: self.node.device.clone(),
            attr: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), attr(v.clone())))
                .collect(),
        };
        if self.add_shapes {
            let shapes = match shape {
                None => self
                    .node
                    .attr
                    .get("_output_shapes")
                    .cloned()
                    .unwrap_or_default(),
                Some(sizes) => shape_list(vec![dims(sizes)]),
            };
            n.attr.insert("_output_shapes".to_string(), shapes);
        }
        let name = n.name.clone();
        self.out.push(n);
        name
    }

    /// An integer `Const` of `dtype` and `shape` filled with `value`.
    fn constant(&mut self, suffix: &str, dtype: i32, value: i64, shape: &[i64]) -> String {
        const INT64: i32 = 9;
        let mut proto = TensorProto {
            dtype,
            // A scalar's shape is left unset, as TensorFlow's Python writes it.
            tensor_shape: (!shape.is_empty()).then(|| dims(shape)),
            ..Default::default()
        };
        if dtype == INT64 {
            proto.int64_val = vec![value];
        } else {
            proto.int_val = vec![value as i32];
        }
        let attrs = [
            ("dtype", Value::Type(dtype)),
            ("value", Value::Tensor(proto)),
        ];
        self.add(suffix, "Const", &[], &attrs, Some(shape))
    }
}

/// What [`restore_fused_updates`] changes in a node list.
#[derive(Clone, Debug, Default)]
pub struct Restoration {
    /// `(index of a group's NoOp, the node it carries)`: put the node in its place.
    pub restored: Vec<(usize, NodeDef)>,
    /// The indices of the nodes written for those groups: drop them.
    pub dropped: HashSet<usize>,
}

/// The groups export wrote for nodes only ferroflow has that can be put
/// back (see [`restore_fused_updates`]).
pub fn fused_groups(nodes: &[NodeDef]) -> Restoration {
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let mut out = Restoration::default();
    for (i, n) in nodes.iter().enumerate() {
        if n.op != "NoOp" {
            continue;
        }
        let Some(Value::S(bytes)) = n.attr.get(ORIGINAL_ATTR).and_then(|a| a.value.as_ref()) else {
            continue;
        };
        let Ok(mut original) = NodeDef::decode(bytes.as_slice()) else {
            continue;
        };
        let written: Vec<Option<usize>> =
            match n.attr.get(EXPANSION_ATTR).and_then(|a| a.value.as_ref()) {
                Some(Value::List(l)) => {
                    l.s.iter()
                        .map(|s| index.get(String::from_utf8_lossy(s).as_ref()).copied())
                        .collect()
                }
                _ => Vec::new(),
            };
        let all_there = written.iter().all(Option::is_some)
            && original
                .input
                .iter()
                .all(|i| index.contains_key(parse_input(i).0));
        // Only a node of an op TensorFlow lacks is carried this way.
        if super::registry::signature(&original.op).is_some()
            || original.name != n.name
            || !all_there
        {
            continue;
        }
        original.device = n.device.clone();
        out.restored.push((i, original));
        out.dropped.extend(written.into_iter().flatten());
    }
    out
}

/// `nodes` with every group export wrote for a node only ferroflow has put
/// back: the `NoOp` replaced by the node it carries, the nodes written for
/// it dropped. A group whose written nodes or original inputs are not all
/// there (the graph was edited since) stays as TensorFlow's ops.
pub fn restore_fused_updates(nodes: &[NodeDef]) -> Vec<NodeDef> {
    let Restoration { restored, dropped } = fused_groups(nodes);
    let mut restored: HashMap<usize, NodeDef> = restored.into_iter().collect();
    nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| !dropped.contains(i))
        .map(|(i, n)| restored.remove(&i).unwrap_or_else(|| n.clone()))
        .collect()
}
