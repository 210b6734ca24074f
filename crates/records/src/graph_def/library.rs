//! A graph's function library (cond branches, loop bodies, their gradients)
//! as TensorFlow's `FunctionDefLibrary`.
//!
//! Each function's `_Arg` nodes become its signature's input args
//! (`arg_<k>`; a list value as `DT_VARIANT`, a variable passed by reference
//! with `is_ref`, the static shape in `arg_attr`), its other nodes its
//! `node_def`, and its outputs `ret` entries named `output_<i>`. Inside a
//! function a node's input is written `node:<output arg>:<k>` with the
//! output arg names of TensorFlow's signature of the op (`output` for
//! ferroflow's own ops), and an argument by its name. Attrs naming functions
//! ([`FUNCTION_ATTRS`], [`FUNCTION_LIST_ATTRS`]) are written as `func` values,
//! as TensorFlow writes them.

use std::collections::{BTreeMap, HashMap};

use ferroflow_graph::{AttrValue as Attr, Graph, Output};
use ferroflow_tensor::Result;

use super::registry::{add_signature_attrs, output_arg};
use super::{attr_value::Value, node_def, AttrValue, ListValue, NameAttrList, NodeDef};

/// Attrs whose value names a function of the library.
pub const FUNCTION_ATTRS: &[&str] = &[
    "then_branch",
    "else_branch",
    "cond",
    "body",
    "body_grad",
    "f",
    "saving_body",
    "body_grad_saved",
    "then_grad",
    "else_grad",
    "then_saving",
    "else_saving",
    "then_grad_saved",
    "else_grad_saved",
    // tf.data: FilterDataset's predicate, OneShotIterator's dataset_factory.
    "predicate",
    "dataset_factory",
];

/// Attrs whose value is a list of function names (an empty name: none).
pub const FUNCTION_LIST_ATTRS: &[&str] = &[
    "branches",
    "branch_grads",
    "branch_savings",
    "branch_grads_saved",
];

const DT_VARIANT: i32 = 21;

/// `tensorflow.FunctionDefLibrary`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FunctionDefLibrary {
    #[prost(message, repeated, tag = "1")]
    pub function: Vec<FunctionDef>,
    #[prost(message, repeated, tag = "2")]
    pub gradient: Vec<GradientDef>,
}

impl FunctionDefLibrary {
    /// True when the library holds no function and no gradient.
    pub fn is_empty(&self) -> bool {
        self.function.is_empty() && self.gradient.is_empty()
    }
}

/// `tensorflow.FunctionDef`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FunctionDef {
    #[prost(message, optional, tag = "1")]
    pub signature: Option<OpDef>,
    #[prost(btree_map = "string, message", tag = "5")]
    pub attr: BTreeMap<String, AttrValue>,
    #[prost(btree_map = "uint32, message", tag = "7")]
    pub arg_attr: BTreeMap<u32, ArgAttrs>,
    #[prost(message, repeated, tag = "3")]
    pub node_def: Vec<NodeDef>,
    #[prost(btree_map = "string, string", tag = "4")]
    pub ret: BTreeMap<String, String>,
    #[prost(btree_map = "string, string", tag = "6")]
    pub control_ret: BTreeMap<String, String>,
}

/// `tensorflow.FunctionDef.ArgAttrs`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ArgAttrs {
    #[prost(btree_map = "string, message", tag = "1")]
    pub attr: BTreeMap<String, AttrValue>,
}

/// `tensorflow.OpDef`, as far as a function's signature uses it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpDef {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "2")]
    pub input_arg: Vec<ArgDef>,
    #[prost(message, repeated, tag = "3")]
    pub output_arg: Vec<ArgDef>,
    #[prost(string, repeated, tag = "20")]
    pub control_output: Vec<String>,
    #[prost(bool, tag = "17")]
    pub is_stateful: bool,
}

/// `tensorflow.OpDef.ArgDef`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ArgDef {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(enumeration = "crate::proto::DataType", tag = "3")]
    pub r#type: i32,
    #[prost(string, tag = "4")]
    pub type_attr: String,
    #[prost(string, tag = "5")]
    pub number_attr: String,
    #[prost(string, tag = "6")]
    pub type_list_attr: String,
    #[prost(bool, tag = "16")]
    pub is_ref: bool,
}

/// `tensorflow.GradientDef`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GradientDef {
    #[prost(string, tag = "1")]
    pub function_name: String,
    #[prost(string, tag = "2")]
    pub gradient_func: String,
}

/// Rewrites `node`'s function-name attrs from strings to `func` values, in place.
pub fn mark_function_attrs(node: &mut NodeDef) {
    for (key, value) in node.attr.iter_mut() {
        let new = match &value.value {
            Some(Value::S(name)) if FUNCTION_ATTRS.contains(&key.as_str()) => {
                Value::Func(function_ref(name))
            }
            Some(Value::List(l))
                if FUNCTION_LIST_ATTRS.contains(&key.as_str()) && !l.s.is_empty() =>
            {
                Value::List(ListValue {
                    func: l.s.iter().map(|name| function_ref(name)).collect(),
                    ..Default::default()
                })
            }
            _ => continue,
        };
        value.value = Some(new);
    }
}

fn function_ref(name: &[u8]) -> NameAttrList {
    NameAttrList {
        name: String::from_utf8_lossy(name).into_owned(),
        attr: BTreeMap::new(),
    }
}

/// The function names an attr value holds (a `func`, a string, or a list of them).
pub fn function_names_in(value: &AttrValue) -> Vec<String> {
    match &value.value {
        Some(Value::Func(f)) => vec![f.name.clone()],
        Some(Value::S(s)) => vec![String::from_utf8_lossy(s).into_owned()],
        Some(Value::List(l)) => l
            .func
            .iter()
            .map(|f| f.name.clone())
            .chain(l.s.iter().map(|s| String::from_utf8_lossy(s).into_owned()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every function of `graph`'s library as a `FunctionDef`.
pub fn function_library(graph: &Graph, add_shapes: bool) -> Result<FunctionDefLibrary> {
    let mut library = FunctionDefLibrary::default();
    for name in graph.function_names() {
        let f = graph.function(name)?;
        library.function.push(function_def(
            name, &f.graph, &f.args, &f.outputs, add_shapes,
        ));
    }
    Ok(library)
}

fn function_def(
    name: &str,
    body: &Graph,
    args: &[Output],
    outputs: &[Output],
    add_shapes: bool,
) -> FunctionDef {
    let nodes = body.nodes();
    let mut fdef = FunctionDef {
        signature: Some(OpDef {
            name: name.to_string(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let signature = fdef.signature.as_mut().expect("set above");
    let mut arg_names: HashMap<usize, String> = HashMap::new();
    for (k, arg) in args.iter().enumerate() {
        let node = &nodes[arg.node];
        let flag = |key: &str| matches!(node.attrs.get(key), Some(Attr::Bool(true)));
        let arg_name = format!("arg_{k}");
        arg_names.insert(arg.node, arg_name.clone());
        let dtype = match node.attrs.get("T") {
            Some(Attr::Type(d)) => d.as_enum(),
            _ => 0,
        };
        signature.input_arg.push(ArgDef {
            name: arg_name,
            r#type: if flag("is_list") { DT_VARIANT } else { dtype },
            is_ref: flag("is_ref"),
            ..Default::default()
        });
        let shape = match node.attrs.get("shape") {
            Some(Attr::Shape(s)) => super::shape_proto(s),
            _ => Default::default(),
        };
        let shapes = AttrValue {
            value: Some(Value::List(ListValue {
                shape: vec![shape],
                ..Default::default()
            })),
        };
        fdef.arg_attr.insert(
            k as u32,
            ArgAttrs {
                attr: BTreeMap::from([("_output_shapes".to_string(), shapes)]),
            },
        );
    }
    let plain: Vec<NodeDef> = nodes
        .iter()
        .map(|n| node_def(body, n, add_shapes))
        .collect();
    let reference = |o: &Output| -> String {
        if let Some(arg) = arg_names.get(&o.node) {
            return arg.clone();
        }
        let node = &plain[o.node];
        let (arg, k) = output_arg(node, o.index, nodes[o.node].outputs.len());
        format!("{}:{arg}:{k}", node.name)
    };
    for (i, n) in nodes.iter().enumerate() {
        if arg_names.contains_key(&i) {
            continue;
        }
        let mut nd = plain[i].clone();
        nd.input = n
            .inputs
            .iter()
            .map(&reference)
            .chain(
                n.control_inputs
                    .iter()
                    .map(|&c| format!("^{}", nodes[c].name)),
            )
            .collect();
        mark_function_attrs(&mut nd);
        let input_types: Vec<i32> = n
            .inputs
            .iter()
            .map(|o| nodes[o.node].outputs[o.index].dtype.as_enum())
            .collect();
        let output_types: Vec<i32> = n.outputs.iter().map(|o| o.dtype.as_enum()).collect();
        add_signature_attrs(&mut nd, &input_types, &output_types);
        fdef.node_def.push(nd);
    }
    let signature = fdef.signature.as_mut().expect("set above");
    for (j, out) in outputs.iter().enumerate() {
        let info = &nodes[out.node].outputs[out.index];
        let arg_name = format!("output_{j}");
        signature.output_arg.push(ArgDef {
            name: arg_name.clone(),
            r#type: if info.is_list {
                DT_VARIANT
            } else {
                info.dtype.as_enum()
            },
            ..Default::default()
        });
        fdef.ret.insert(arg_name, reference(out));
    }
    fdef
}
