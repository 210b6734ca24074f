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

use std::collections::BTreeMap;

use ferroflow_graph::{AttrValue as Attr, Graph, PartialShape};
use ferroflow_tensor::{Data, Tensor};

use crate::ops::tensor_to_proto;
use crate::proto::{Dim, TensorProto, TensorShapeProto};

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

/// `tensorflow.FunctionDefLibrary`, reduced to what says whether a graph
/// has one: its functions' and gradients' names.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FunctionDefLibrary {
    #[prost(message, repeated, tag = "1")]
    pub function: Vec<FunctionDefName>,
    #[prost(message, repeated, tag = "2")]
    pub gradient: Vec<GradientDef>,
}

impl FunctionDefLibrary {
    /// True when the library holds no function and no gradient.
    pub fn is_empty(&self) -> bool {
        self.function.is_empty() && self.gradient.is_empty()
    }
}

/// A `tensorflow.FunctionDef` seen only through its signature's name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FunctionDefName {
    #[prost(message, optional, tag = "1")]
    pub signature: Option<OpDefName>,
}

/// A `tensorflow.OpDef` seen only through its name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpDefName {
    #[prost(string, tag = "1")]
    pub name: String,
}

/// `tensorflow.GradientDef`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GradientDef {
    #[prost(string, tag = "1")]
    pub function_name: String,
    #[prost(string, tag = "2")]
    pub gradient_func: String,
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

/// The nodes of `graph` from `start` on as a `GraphDef` with producer
/// version `producer`. With `add_shapes`, each node gets TensorFlow's
/// `_output_shapes` attribute (the statically known output shapes).
pub fn graph_def(graph: &Graph, start: usize, add_shapes: bool, producer: i32) -> GraphDef {
    let nodes = graph.nodes();
    let node = nodes[start.min(nodes.len())..]
        .iter()
        .map(|n| {
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
        })
        .collect();
    GraphDef {
        node,
        library: None,
        versions: Some(VersionDef {
            producer,
            min_consumer: 0,
            bad_consumers: Vec::new(),
        }),
    }
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
}
