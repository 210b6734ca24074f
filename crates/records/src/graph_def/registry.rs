//! TensorFlow's op registry as far as GraphDefs need it: each op's
//! signature and the defaults of its attrs.
//!
//! ferroflow's graph derives a node's dtypes from its inputs, so its nodes
//! carry neither the type attrs (`T`, `Tidx`, `SrcT`/`DstT`, `out_type`, ...)
//! nor the list lengths (`N`) TensorFlow's `OpDef` declares, and TensorFlow
//! refuses a NodeDef that lacks one (`NodeDef missing attr 'T'`).
//! [`add_signature_attrs`] fills them in from the dtypes of the node's actual
//! inputs and outputs, as TensorFlow writes them for every node.
//! [`strip_default_attrs`] and [`missing_defaults`] drop and restore the
//! attrs whose value is the registered default (`strip_default_attrs=True`
//! exports and their import).
//!
//! The table, `tf_op_registry.json` beside this file, is generated from real
//! TensorFlow by `tools/gen_op_attr_defaults.py` and covers every op type
//! ferroflow registers: `op_defs` holds each op's input and output args
//! (`name`; a fixed `type`, or the `type_attr` / `number_attr` /
//! `type_list_attr` naming the attr that gives its dtype or length;
//! `is_ref`) and its attrs' types; `attr_defaults` holds each registered
//! default as a serialized `AttrValue` in hex; `not_in_tensorflow` lists the
//! op types only ferroflow has. Python reads the same table through the
//! native module ([`registry_json`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use prost::Message;
use serde_json::Value as Json;

use super::{attr_value::Value, AttrValue, GraphDef, NodeDef};

const TABLE: &str = include_str!("tf_op_registry.json");

/// One input or output argument of an op's signature.
#[derive(Clone, Debug, Default)]
pub struct ArgSignature {
    pub name: String,
    /// A fixed dtype (`DataType` enum value), when the arg has one.
    pub fixed_type: Option<i32>,
    /// The attr holding the arg's dtype.
    pub type_attr: Option<String>,
    /// The attr holding the arg's length (a list of one dtype).
    pub number_attr: Option<String>,
    /// The attr holding the arg's dtypes (a list of several dtypes).
    pub type_list_attr: Option<String>,
    /// True for an input taken by reference (`Assign`'s `ref`).
    pub is_ref: bool,
}

impl ArgSignature {
    /// The attr giving this arg's length, when it is a list.
    fn list_attr(&self) -> Option<&str> {
        self.number_attr
            .as_deref()
            .or(self.type_list_attr.as_deref())
    }
}

/// An op's signature as TensorFlow's `OpDef` declares it.
#[derive(Clone, Debug, Default)]
pub struct OpSignature {
    pub inputs: Vec<ArgSignature>,
    pub outputs: Vec<ArgSignature>,
    /// Each attr's type (`"type"`, `"int"`, `"list(type)"`, ...).
    pub attrs: BTreeMap<String, String>,
}

struct Registry {
    signatures: HashMap<String, OpSignature>,
    defaults: HashMap<String, BTreeMap<String, AttrValue>>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        // The table is part of the crate, so a malformed one is a build mistake that every test shows.
        let doc: Json = serde_json::from_str(TABLE).expect("tf_op_registry.json is valid JSON");
        let signatures = doc["op_defs"]
            .as_object()
            .expect("op_defs is an object")
            .iter()
            .map(|(op, def)| (op.clone(), signature_from_json(def)))
            .collect();
        let defaults = doc["attr_defaults"]
            .as_object()
            .expect("attr_defaults is an object")
            .iter()
            .map(|(op, attrs)| {
                let attrs = attrs
                    .as_object()
                    .expect("an op's defaults are an object")
                    .iter()
                    .map(|(name, hex)| (name.clone(), attr_from_hex(hex)))
                    .collect();
                (op.clone(), attrs)
            })
            .collect();
        Registry {
            signatures,
            defaults,
        }
    })
}

fn signature_from_json(def: &Json) -> OpSignature {
    let args = |key: &str| -> Vec<ArgSignature> {
        def[key]
            .as_array()
            .map(|args| {
                args.iter()
                    .map(|a| {
                        let text = |k: &str| a[k].as_str().map(str::to_string);
                        ArgSignature {
                            name: text("name").unwrap_or_default(),
                            fixed_type: a["type"].as_str().and_then(data_type_from_name),
                            type_attr: text("type_attr"),
                            number_attr: text("number_attr"),
                            type_list_attr: text("type_list_attr"),
                            is_ref: a["is_ref"].as_bool().unwrap_or(false),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    OpSignature {
        inputs: args("inputs"),
        outputs: args("outputs"),
        attrs: def["attrs"]
            .as_object()
            .map(|attrs| {
                attrs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The `DataType` value of TensorFlow's enum name (`"DT_FLOAT"` -> 1).
fn data_type_from_name(name: &str) -> Option<i32> {
    const NAMES: [&str; 24] = [
        "DT_INVALID",
        "DT_FLOAT",
        "DT_DOUBLE",
        "DT_INT32",
        "DT_UINT8",
        "DT_INT16",
        "DT_INT8",
        "DT_STRING",
        "DT_COMPLEX64",
        "DT_INT64",
        "DT_BOOL",
        "DT_QINT8",
        "DT_QUINT8",
        "DT_QINT32",
        "DT_BFLOAT16",
        "DT_QINT16",
        "DT_QUINT16",
        "DT_UINT16",
        "DT_COMPLEX128",
        "DT_HALF",
        "DT_RESOURCE",
        "DT_VARIANT",
        "DT_UINT32",
        "DT_UINT64",
    ];
    NAMES.iter().position(|&n| n == name).map(|i| i as i32)
}

fn attr_from_hex(hex: &Json) -> AttrValue {
    let hex = hex.as_str().expect("a default is a hex string").as_bytes();
    let bytes: Vec<u8> = hex
        .chunks(2)
        .map(|pair| {
            let digits = std::str::from_utf8(pair).expect("hex digits");
            u8::from_str_radix(digits, 16).expect("hex digits")
        })
        .collect();
    AttrValue::decode(bytes.as_slice()).expect("a default is a serialized AttrValue")
}

/// The registry table as JSON text (for the Python package).
pub fn registry_json() -> &'static str {
    TABLE
}

/// TensorFlow's signature of `op`; None for an op TensorFlow does not have.
pub fn signature(op: &str) -> Option<&'static OpSignature> {
    registry().signatures.get(op)
}

/// The registered defaults of `op`'s attrs; None for an op TensorFlow does
/// not have.
pub fn attr_defaults(op: &str) -> Option<&'static BTreeMap<String, AttrValue>> {
    registry().defaults.get(op)
}

/// How many of `count` tensors each of `args` takes; None when that cannot
/// be told. An arg is one tensor unless it is a list; a list's length comes
/// from its attr when `attrs` has it, otherwise from what is left over,
/// which works while at most one list's length is unknown.
pub fn arg_lengths(
    args: &[ArgSignature],
    count: usize,
    attrs: &BTreeMap<String, AttrValue>,
) -> Option<Vec<usize>> {
    let mut lengths = Vec::with_capacity(args.len());
    let mut unknown = None;
    for (i, arg) in args.iter().enumerate() {
        let length = match arg.list_attr() {
            None => 1,
            Some(attr) => match attrs.get(attr).and_then(|a| a.value.as_ref()) {
                Some(Value::I(n)) if arg.number_attr.is_some() => usize::try_from(*n).ok()?,
                Some(Value::List(l)) if arg.number_attr.is_none() => l.r#type.len(),
                Some(_) => return None,
                None => {
                    if unknown.replace(i).is_some() {
                        return None;
                    }
                    0
                }
            },
        };
        lengths.push(length);
    }
    let known: usize = lengths.iter().sum();
    match unknown {
        Some(i) => lengths[i] = count.checked_sub(known)?,
        None if known != count => return None,
        None => {}
    }
    Some(lengths)
}

/// Adds to `node` the type, type-list and number attrs its TensorFlow
/// signature declares and it lacks, from `input_types` and `output_types`
/// (the `DataType` values of its data inputs and outputs; reference types
/// count as their base type). Attrs the node has are kept; so are nodes of
/// ops TensorFlow does not have, and args whose tensors cannot be matched up
/// with the signature. Every type attr is written, even one with a
/// registered default (`Tidx`): the default could contradict an int64 axis.
pub fn add_signature_attrs(node: &mut NodeDef, input_types: &[i32], output_types: &[i32]) {
    let Some(signature) = signature(&node.op) else {
        return;
    };
    for (args, types) in [
        (&signature.inputs, input_types),
        (&signature.outputs, output_types),
    ] {
        let Some(lengths) = arg_lengths(args, types.len(), &node.attr) else {
            continue;
        };
        let mut start = 0;
        for (arg, length) in args.iter().zip(lengths) {
            let arg_types: Vec<i32> = types[start..start + length]
                .iter()
                .map(|&t| if t > 100 { t - 100 } else { t })
                .collect();
            start += length;
            let mut set = |name: &Option<String>, value: Value| {
                if let Some(name) = name {
                    node.attr
                        .entry(name.clone())
                        .or_insert(AttrValue { value: Some(value) });
                }
            };
            set(&arg.number_attr, Value::I(length as i64));
            if let Some(&first) = arg_types.first() {
                set(&arg.type_attr, Value::Type(first));
            }
            set(
                &arg.type_list_attr,
                Value::List(super::ListValue {
                    r#type: arg_types,
                    ..Default::default()
                }),
            );
        }
    }
}

/// `(output arg name, index within it)` of output `index` of `node` (which
/// has `count` outputs), as TensorFlow's signature of its op names it;
/// `("output", index)` for ops TensorFlow does not have. Function bodies
/// name a node's outputs this way (`node:output_arg:k`).
pub fn output_arg(node: &NodeDef, index: usize, count: usize) -> (String, usize) {
    let fallback = || ("output".to_string(), index);
    let Some(signature) = signature(&node.op) else {
        return fallback();
    };
    let Some(lengths) = arg_lengths(&signature.outputs, count, &node.attr) else {
        return fallback();
    };
    let mut start = 0;
    for (arg, length) in signature.outputs.iter().zip(lengths) {
        if index < start + length {
            return (arg.name.clone(), index - start);
        }
        start += length;
    }
    fallback()
}

/// For each node of `def`, then each node of each library function in
/// order, the names of its attrs whose value is its op's registered
/// default. Nodes that call a function of the library and nodes of ops
/// TensorFlow does not have get none.
pub fn default_valued_attrs(def: &GraphDef) -> Vec<Vec<String>> {
    let functions: Vec<&str> = def
        .library
        .iter()
        .flat_map(|l| l.function.iter())
        .filter_map(|f| f.signature.as_ref().map(|s| s.name.as_str()))
        .collect();
    let library_nodes = def
        .library
        .iter()
        .flat_map(|l| l.function.iter())
        .flat_map(|f| &f.node_def);
    def.node
        .iter()
        .chain(library_nodes)
        .map(|node| {
            let defaults = match attr_defaults(&node.op) {
                Some(d) if !functions.contains(&node.op.as_str()) => d,
                _ => return Vec::new(),
            };
            node.attr
                .iter()
                // Compared as bytes, as TensorFlow does: 0.0 and -0.0 differ.
                .filter(|(name, value)| {
                    defaults
                        .get(*name)
                        .is_some_and(|d| d.encode_to_vec() == value.encode_to_vec())
                })
                .map(|(name, _)| name.clone())
                .collect()
        })
        .collect()
}

/// Removes, in place, every attr of `def`'s nodes (function bodies included)
/// that holds its op's registered default ([`default_valued_attrs`]).
pub fn strip_default_attrs(def: &mut GraphDef) {
    let mut names = default_valued_attrs(def).into_iter();
    let library_nodes = def
        .library
        .iter_mut()
        .flat_map(|l| l.function.iter_mut())
        .flat_map(|f| f.node_def.iter_mut());
    for node in def.node.iter_mut().chain(library_nodes) {
        for name in names.next().unwrap_or_default() {
            node.attr.remove(&name);
        }
    }
}

/// The registered defaults of the attrs `node` lacks, for import. Type
/// attrs are left out: ferroflow derives a node's types from its inputs and
/// picks the registered default of an output type itself (`ArgMax`'s
/// `output_type`), so filling in `Tidx: DT_INT32` could only contradict an
/// int64 input.
pub fn missing_defaults(node: &NodeDef) -> Vec<(String, AttrValue)> {
    attr_defaults(&node.op)
        .into_iter()
        .flatten()
        .filter(|(name, value)| {
            !node.attr.contains_key(*name) && !matches!(value.value, Some(Value::Type(_)))
        })
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: &str) -> NodeDef {
        NodeDef {
            op: op.to_string(),
            name: "n".to_string(),
            ..Default::default()
        }
    }

    #[test]
    fn signature_attrs_from_the_node_types() {
        let mut concat = node("ConcatV2");
        add_signature_attrs(&mut concat, &[1, 1, 1, 9], &[1]);
        let value = |n: &NodeDef, k: &str| n.attr[k].value.clone();
        assert_eq!(value(&concat, "N"), Some(Value::I(3)));
        assert_eq!(value(&concat, "T"), Some(Value::Type(1)));
        assert_eq!(value(&concat, "Tidx"), Some(Value::Type(9)));
        // A reference input is its base type; an attr the node has is kept.
        let mut assign = node("Assign");
        assign.attr.insert(
            "T".to_string(),
            AttrValue {
                value: Some(Value::Type(2)),
            },
        );
        add_signature_attrs(&mut assign, &[101, 1], &[101]);
        assert_eq!(value(&assign, "T"), Some(Value::Type(2)));
        // Ops TensorFlow lacks are left alone.
        let mut fused = node("ApplyFused");
        add_signature_attrs(&mut fused, &[1], &[]);
        assert!(fused.attr.is_empty());
    }

    #[test]
    fn output_args_count_lists() {
        let mut split = node("Split");
        split.attr.insert(
            "num_split".to_string(),
            AttrValue {
                value: Some(Value::I(3)),
            },
        );
        assert_eq!(output_arg(&split, 2, 3), ("output".to_string(), 2));
        let unique = node("Unique");
        assert_eq!(output_arg(&unique, 1, 2), ("idx".to_string(), 0));
        assert_eq!(
            output_arg(&node("NotAnOp"), 1, 2),
            ("output".to_string(), 1)
        );
    }

    #[test]
    fn defaults_strip_and_come_back() {
        let conv = attr_defaults("Conv2D").expect("Conv2D is registered");
        assert_eq!(conv["data_format"].value, Some(Value::S(b"NHWC".to_vec())));
        assert!(attr_defaults("ApplyFused").is_none());
        let mut def = GraphDef {
            node: vec![node("Conv2D")],
            ..Default::default()
        };
        def.node[0].attr = conv.clone();
        def.node[0].attr.insert(
            "T".to_string(),
            AttrValue {
                value: Some(Value::Type(1)),
            },
        );
        strip_default_attrs(&mut def);
        assert_eq!(def.node[0].attr.keys().collect::<Vec<_>>(), ["T"]);
        let back = missing_defaults(&def.node[0]);
        assert!(back.iter().any(|(k, _)| k == "data_format"));
        assert!(back
            .iter()
            .all(|(_, v)| !matches!(v.value, Some(Value::Type(_)))));
    }
}
