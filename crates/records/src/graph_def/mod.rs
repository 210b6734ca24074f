//! A ferroflow graph as TensorFlow's `GraphDef` (what
//! `tf.Graph.as_graph_def()` returns and `FileWriter.add_graph` writes).
//!
//! Nodes keep their names, op types, inputs (`name`, `name:i`, `^control`),
//! devices and attributes; attribute values map onto `AttrValue` the way
//! TensorFlow stores them, and constants are `TensorProto`s laid out like
//! TensorFlow's `make_tensor_proto` (several numeric elements as
//! `tensor_content`, a single one in the typed field, strings in
//! `string_val`). Map entries are written in key order, which is
//! TensorFlow's deterministic serialization.
//!
//! Two forms: [`graph_def`] is ferroflow's own (what ferroflow processes send
//! each other), [`tf_graph_def`] the one TensorFlow imports and runs: every
//! node gets the type and length attrs TensorFlow's `OpDef` declares
//! ([`registry`]), nodes of ops only ferroflow has are written as TensorFlow
//! ops ([`tf_form`]), and the function library is written as `FunctionDef`s
//! ([`library`]). Import ([`crate::graph_import`]) reads both.

use std::collections::BTreeMap;

use ferroflow_graph::{AttrValue as Attr, Graph, Node, PartialShape};
use ferroflow_tensor::{Data, Result, Tensor};

use crate::ops::tensor_to_proto;
use crate::proto::{Dim, TensorProto, TensorShapeProto};

pub mod library;
pub mod registry;
pub mod tf_form;

pub use library::{FunctionDef, FunctionDefLibrary, GradientDef};

/// `tensorflow.GraphDef`: nodes, versions, and the function library as far
/// as an importer needs to see it (the functions' names; their bodies are
/// skipped when decoding, so re-encoding a decoded library loses them).
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphDef {
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeDef>,
    #[prost(message, optional, tag = "2")]
    pub library: Option<FunctionDefLibrary>,
    #[prost(message, optional, tag = "4")]
    pub versions: Option<VersionDef>,
}

/// `tensorflow.VersionDef`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VersionDef {
    #[prost(int32, tag = "1")]
    pub producer: i32,
    #[prost(int32, tag = "2")]
    pub min_consumer: i32,
    #[prost(int32, repeated, tag = "3")]
    pub bad_consumers: Vec<i32>,
}

/// `tensorflow.NodeDef`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeDef {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub op: String,
    #[prost(string, repeated, tag = "3")]
    pub input: Vec<String>,
    #[prost(string, tag = "4")]
    pub device: String,
    #[prost(btree_map = "string, message", tag = "5")]
    pub attr: BTreeMap<String, AttrValue>,
}

/// `tensorflow.AttrValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttrValue {
    #[prost(oneof = "attr_value::Value", tags = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10")]
    pub value: Option<attr_value::Value>,
}

/// `tensorflow.NameAttrList`: a function name with attributes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NameAttrList {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(btree_map = "string, message", tag = "2")]
    pub attr: BTreeMap<String, AttrValue>,
}

/// Nested types of [`AttrValue`].
pub mod attr_value {
    /// The `value` oneof.
    #[allow(clippy::large_enum_variant)]
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        #[prost(message, tag = "1")]
        List(super::ListValue),
        #[prost(bytes, tag = "2")]
        S(Vec<u8>),
        #[prost(int64, tag = "3")]
        I(i64),
        #[prost(float, tag = "4")]
        F(f32),
        #[prost(bool, tag = "5")]
        B(bool),
        #[prost(enumeration = "crate::proto::DataType", tag = "6")]
        Type(i32),
        #[prost(message, tag = "7")]
        Shape(crate::proto::TensorShapeProto),
        #[prost(message, tag = "8")]
        Tensor(crate::proto::TensorProto),
        /// A placeholder for a function attribute (only inside function bodies).
        #[prost(string, tag = "9")]
        Placeholder(String),
        #[prost(message, tag = "10")]
        Func(super::NameAttrList),
    }
}

/// `tensorflow.AttrValue.ListValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListValue {
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub s: Vec<Vec<u8>>,
    #[prost(int64, repeated, tag = "3")]
    pub i: Vec<i64>,
    #[prost(float, repeated, tag = "4")]
    pub f: Vec<f32>,
    #[prost(bool, repeated, tag = "5")]
    pub b: Vec<bool>,
    #[prost(enumeration = "crate::proto::DataType", repeated, tag = "6")]
    pub r#type: Vec<i32>,
    #[prost(message, repeated, tag = "7")]
    pub shape: Vec<TensorShapeProto>,
    #[prost(message, repeated, tag = "8")]
    pub tensor: Vec<TensorProto>,
    #[prost(message, repeated, tag = "9")]
    pub func: Vec<NameAttrList>,
}

/// A partial shape as `TensorShapeProto` (unknown dimensions are -1).
pub fn shape_proto(s: &PartialShape) -> TensorShapeProto {
    match s.dims() {
        None => TensorShapeProto {
            dim: Vec::new(),
            unknown_rank: true,
        },
        Some(dims) => TensorShapeProto {
            dim: dims
                .iter()
                .map(|d| Dim {
                    size: d.map_or(-1, |v| v as i64),
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        },
    }
}

/// A constant as TensorFlow's Python `make_tensor_proto` writes it.
pub fn const_tensor_proto(t: &Tensor) -> TensorProto {
    let mut proto = tensor_to_proto(t);
    if t.num_elements() != 1 || matches!(t.data(), Data::Str(_)) {
        return proto;
    }
    proto.tensor_content.clear();
    match t.data() {
        Data::F32(v) => proto.float_val = v.to_vec(),
        Data::F64(v) => proto.double_val = v.to_vec(),
        Data::F16(v) => proto.half_val = v.iter().map(|x| x.to_bits() as i32).collect(),
        Data::BF16(v) => proto.half_val = v.iter().map(|x| x.to_bits() as i32).collect(),
        Data::I8(v) => proto.int_val = v.iter().map(|&x| x as i32).collect(),
        Data::I16(v) => proto.int_val = v.iter().map(|&x| x as i32).collect(),
        Data::I32(v) => proto.int_val = v.to_vec(),
        Data::U8(v) => proto.int_val = v.iter().map(|&x| x as i32).collect(),
        Data::U16(v) => proto.int_val = v.iter().map(|&x| x as i32).collect(),
        Data::U32(v) => proto.uint32_val = v.to_vec(),
        Data::U64(v) => proto.uint64_val = v.to_vec(),
        Data::I64(v) => proto.int64_val = v.to_vec(),
        Data::Bool(v) => proto.bool_val = v.to_vec(),
        Data::C64(v) => proto.scomplex_val = v.iter().flat_map(|z| [z.re, z.im]).collect(),
        Data::C128(v) => proto.dcomplex_val = v.iter().flat_map(|z| [z.re, z.im]).collect(),
        Data::Str(_) => {}
    }
    proto
}

fn attr_proto(a: &Attr) -> AttrValue {
    use attr_value::Value as V;
    let list = |l: ListValue| V::List(l);
    let value = match a {
        Attr::Int(v) => V::I(*v),
        Attr::Float(v) => V::F(*v as f32),
        Attr::Bool(v) => V::B(*v),
        Attr::Str(v) => V::S(v.clone()),
        Attr::Type(d) => V::Type(d.as_enum()),
        Attr::Shape(s) => V::Shape(shape_proto(s)),
        Attr::Tensor(t) => V::Tensor(const_tensor_proto(t)),
        Attr::IntList(v) => list(ListValue {
            i: v.clone(),
            ..Default::default()
        }),
        Attr::FloatList(v) => list(ListValue {
            f: v.iter().map(|&x| x as f32).collect(),
            ..Default::default()
        }),
        Attr::BoolList(v) => list(ListValue {
            b: v.clone(),
            ..Default::default()
        }),
        Attr::StrList(v) => list(ListValue {
            s: v.clone(),
            ..Default::default()
        }),
        Attr::TypeList(v) => list(ListValue {
            r#type: v.iter().map(|d| d.as_enum()).collect(),
            ..Default::default()
        }),
        Attr::ShapeList(v) => list(ListValue {
            shape: v.iter().map(shape_proto).collect(),
            ..Default::default()
        }),
    };
    AttrValue { value: Some(value) }
}

/// `n` (a node of `graph`) as a `NodeDef` in ferroflow's own form; with
/// `add_shapes` it gets TensorFlow's `_output_shapes` attribute (the
/// statically known output shapes).
pub fn node_def(graph: &Graph, n: &Node, add_shapes: bool) -> NodeDef {
    let nodes = graph.nodes();
    let mut input: Vec<String> = n
        .inputs
        .iter()
        .map(|o| {
            let src = &nodes[o.node].name;
            if o.index == 0 {
                src.clone()
            } else {
                format!("{src}:{}", o.index)
            }
        })
        .collect();
    input.extend(
        n.control_inputs
            .iter()
            .map(|&c| format!("^{}", nodes[c].name)),
    );
    let mut attr: BTreeMap<String, AttrValue> = n
        .attrs
        .iter()
        .map(|(k, v)| (k.clone(), attr_proto(v)))
        .collect();
    // A quantized constant's value is held as the integers of its
    // width; its proto carries the quantized dtype, as TF's does.
    if let (
        Some(Attr::Type(d)),
        Some(AttrValue {
            value: Some(attr_value::Value::Tensor(t)),
        }),
    ) = (n.attrs.get("dtype"), attr.get_mut("value"))
    {
        if d.is_quantized() {
            t.dtype = d.as_enum();
        }
    }
    if add_shapes {
        let shapes = n.outputs.iter().map(|o| shape_proto(&o.shape)).collect();
        attr.insert(
            "_output_shapes".to_string(),
            AttrValue {
                value: Some(attr_value::Value::List(ListValue {
                    shape: shapes,
                    ..Default::default()
                })),
            },
        );
    }
    NodeDef {
        name: n.name.clone(),
        op: n.op.clone(),
        input,
        device: n.device.clone(),
        attr,
    }
}

fn versions(producer: i32) -> Option<VersionDef> {
    Some(VersionDef {
        producer,
        min_consumer: 0,
        bad_consumers: Vec::new(),
    })
}

/// The nodes of `graph` from `start` on as a `GraphDef` in ferroflow's own
/// form (ops only ferroflow has as they are, no TensorFlow type attrs, no
/// function library), with producer version `producer`. With `add_shapes`,
/// each node gets `_output_shapes`.
pub fn graph_def(graph: &Graph, start: usize, add_shapes: bool, producer: i32) -> GraphDef {
    let nodes = graph.nodes();
    GraphDef {
        node: nodes[start.min(nodes.len())..]
            .iter()
            .map(|n| node_def(graph, n, add_shapes))
            .collect(),
        library: None,
        versions: versions(producer),
    }
}

/// The nodes of `graph` from `start` on as a `GraphDef` TensorFlow imports
/// and runs (module docs): TensorFlow's type attrs on every node, the nodes
/// of ops only ferroflow has in their registered TensorFlow form, and, for
/// the whole graph (`start` 0) of a graph with functions, the function
/// library, with function-valued attrs written as `func`s.
pub fn tf_graph_def(
    graph: &Graph,
    start: usize,
    add_shapes: bool,
    producer: i32,
) -> Result<GraphDef> {
    let nodes = graph.nodes();
    let with_library = start == 0 && !graph.function_names().is_empty();
    let mut out = Vec::with_capacity(nodes.len().saturating_sub(start));
    for n in &nodes[start.min(nodes.len())..] {
        let mut def = node_def(graph, n, add_shapes);
        let input_types: Vec<i32> = n
            .inputs
            .iter()
            .map(|o| nodes[o.node].outputs[o.index].dtype.as_enum())
            .collect();
        if let Some(form) = tf_form::tf_form(&n.op) {
            let input = tf_form::FormInput {
                def: &def,
                input_types,
                input_shapes: n
                    .inputs
                    .iter()
                    .map(|o| nodes[o.node].outputs[o.index].shape.clone())
                    .collect(),
                add_shapes,
            };
            out.extend(form(&input).map_err(|e| {
                e.with_context(format_args!(
                    "writing node '{}' ({}) for TensorFlow",
                    n.name, n.op
                ))
            })?);
            continue;
        }
        let output_types: Vec<i32> = n.outputs.iter().map(|o| o.dtype.as_enum()).collect();
        registry::add_signature_attrs(&mut def, &input_types, &output_types);
        if with_library {
            library::mark_function_attrs(&mut def);
        }
        out.push(def);
    }
    Ok(GraphDef {
        node: out,
        library: if with_library {
            Some(library::function_library(graph, add_shapes)?)
        } else {
            None
        },
        versions: versions(producer),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_graph::NodeSpec;
    use ferroflow_tensor::DType;
    use prost::Message;

    #[test]
    fn nodes_inputs_and_attrs() {
        let mut g = Graph::new();
        let c = g
            .add_node(
                NodeSpec::new("Const", "c")
                    .attr("value", Attr::Tensor(Tensor::vector(vec![1.0f32, 2.0])))
                    .attr("dtype", Attr::Type(DType::Float32)),
            )
            .unwrap();
        let one = g
            .add_node(
                NodeSpec::new("Const", "one")
                    .attr("value", Attr::Tensor(Tensor::scalar(1.0f32)))
                    .attr("dtype", Attr::Type(DType::Float32)),
            )
            .unwrap();
        g.add_node(
            NodeSpec::new("AddV2", "sum")
                .input(ferroflow_graph::Output::new(c, 0))
                .input(ferroflow_graph::Output::new(one, 0))
                .control(c),
        )
        .unwrap();
        let def = graph_def(&g, 0, true, 27);
        let names: Vec<&str> = def.node.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["c", "one", "sum"]);
        assert_eq!(def.node[2].input, ["c", "one", "^c"]);
        let Some(attr_value::Value::Tensor(t)) = &def.node[0].attr["value"].value else {
            panic!("value is not a tensor");
        };
        assert_eq!(t.tensor_content.len(), 8);
        let Some(attr_value::Value::Tensor(t)) = &def.node[1].attr["value"].value else {
            panic!("value is not a tensor");
        };
        assert_eq!(t.float_val, [1.0]);
        assert!(t.tensor_content.is_empty());
        let Some(attr_value::Value::List(shapes)) = &def.node[2].attr["_output_shapes"].value
        else {
            panic!("no _output_shapes");
        };
        assert_eq!(shapes.shape[0].dim[0].size, 2);
        // Round trip through the wire format.
        let back = GraphDef::decode(def.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back, def);
        assert_eq!(graph_def(&g, 2, false, 27).node.len(), 1);
    }

    fn constant(g: &mut Graph, name: &str, t: Tensor) -> ferroflow_graph::Output {
        let dtype = t.dtype();
        let id = g
            .add_node(
                NodeSpec::new("Const", name)
                    .attr("value", Attr::Tensor(t))
                    .attr("dtype", Attr::Type(dtype)),
            )
            .unwrap();
        ferroflow_graph::Output::new(id, 0)
    }

    #[test]
    fn tensorflow_form_adds_type_attrs_and_rewrites_reduced_shape() {
        let mut g = Graph::new();
        let a = constant(&mut g, "a", Tensor::vector(vec![1.0f32, 2.0]));
        let axis = constant(&mut g, "axis", Tensor::scalar(0i64));
        let concat = g
            .add_node(
                NodeSpec::new("ConcatV2", "concat")
                    .input(a)
                    .input(a)
                    .input(axis),
            )
            .unwrap();
        let shape = constant(&mut g, "shape", Tensor::vector(vec![2i32, 3]));
        let axes = constant(&mut g, "axes", Tensor::vector(vec![-1i64]));
        g.add_node(
            NodeSpec::new("ReducedShape", "reduced")
                .input(shape)
                .input(axes)
                .control(concat),
        )
        .unwrap();
        let plain = graph_def(&g, 0, false, 27);
        assert!(!plain.node[2].attr.contains_key("T"));
        let def = tf_graph_def(&g, 0, true, 27).unwrap();
        let by_name: BTreeMap<&str, &NodeDef> =
            def.node.iter().map(|n| (n.name.as_str(), n)).collect();
        let attr = |n: &str, k: &str| by_name[n].attr[k].value.clone();
        assert_eq!(attr("concat", "N"), Some(attr_value::Value::I(2)));
        assert_eq!(attr("concat", "T"), Some(attr_value::Value::Type(1)));
        assert_eq!(attr("concat", "Tidx"), Some(attr_value::Value::Type(9)));
        // ReducedShape is not a TensorFlow op: the node that takes its name is a SelectV2, its helpers
        // (an int64 axes cast to the int32 shape's type first) live under it and keep its control input.
        assert!(def.node.iter().all(|n| n.op != "ReducedShape"));
        assert_eq!(by_name["reduced"].op, "SelectV2");
        assert_eq!(by_name["reduced/axes"].op, "Cast");
        assert!(by_name["reduced/rank"]
            .input
            .contains(&"^concat".to_string()));
        assert!(def.library.is_none());
    }
}
