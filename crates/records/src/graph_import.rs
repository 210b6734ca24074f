//! TensorFlow's `GraphDef` into a ferroflow [`Graph`]: the reverse of
//! [`crate::graph_def`], what `tf.import_graph_def` and the loaders of
//! MetaGraphs and SavedModels do.
//!
//! Nodes are added in dependency order (a GraphDef may list a node before
//! its inputs), with their op types, inputs (`name`, `name:i`, `^control`),
//! devices and attributes. Attribute values become [`Attr`]s the way
//! ferroflow's Python importer converts them; `_output_shapes` and `_class`
//! are dropped (ferroflow infers shapes, and colocation is a placement hint).
//! Constants' `TensorProto`s become tensors by TensorFlow's rules (raw
//! `tensor_content`, or the typed value field with its last value repeated
//! to fill the shape).
//!
//! ferroflow's own fused optimizer updates, which export writes as
//! TensorFlow's per-variable `ApplyAdam`, `ApplyMomentum`, ... ops under a
//! `NoOp` that keeps the original node (attr `_ferroflow_fused`), are put
//! back first ([`restore_fused_updates`]), as the Python importer does;
//! TensorFlow's own update ops import as they are (ferroflow-train runs
//! them).
//!
//! The function library (the bodies of `If`/`While`/`Case` and of
//! ferroflow's gradients of them) is imported first
//! ([`import_function_library`]): each `FunctionDef` becomes a function of
//! the graph's library, its args `_Arg` nodes, and inputs written
//! `node:output_arg:k` are resolved through TensorFlow's signature of the
//! op. TF1's own control flow (`Switch`/`Merge`/`Enter`/...) is turned into
//! functions by the Python importer only.
//!
//! Not supported (clear errors naming what is wrong): attributes holding
//! lists of tensors, and placeholder attributes (which only occur in
//! functions with attrs of their own). Attributes a node
//! lacks get TensorFlow's registered default (a graph exported with
//! `strip_default_attrs`), as TensorFlow's importer does; type attributes
//! are left to ferroflow's inference.

use std::collections::HashMap;

use ferroflow_graph::PartialShape;
use ferroflow_graph::{
    lookup, AttrValue as Attr, Attrs, Function, Graph, NodeId, NodeSpec, Output,
};
use ferroflow_tensor::{bf16, f16, DType, Error, Result, Tensor};

use crate::graph_def::library::{function_names_in, FUNCTION_ATTRS, FUNCTION_LIST_ATTRS};
use crate::graph_def::registry::missing_defaults;
pub use crate::graph_def::tf_form::restore_fused_updates;
use crate::graph_def::{
    attr_value::Value, registry, AttrValue, FunctionDef, FunctionDefLibrary, GraphDef, NodeDef,
};
use crate::proto::{DataType, TensorProto, TensorShapeProto};

/// Options of [`import_graph_def`].
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Put in front of every imported node's name, with a `/` (TensorFlow's
    /// `import_scope`); empty for none.
    pub prefix: String,
    /// Drop the nodes' device placements (`clear_devices`).
    pub clear_devices: bool,
}

/// Most elements a constant whose proto holds fewer values than its shape
/// (TensorFlow's fill rule) may expand to: 2^31, what TensorFlow's own
/// 2 GiB proto limit allows for one-byte elements.
const MAX_SPLAT_ELEMENTS: usize = 1 << 31;

/// The tensor a `TensorProto` holds (a constant's `value`, a
/// `PlaceholderWithDefault`'s default, ...).
///
/// Numeric values come from `tensor_content` (little-endian, row-major)
/// when it is set, else from the typed repeated field, whose last value
/// fills the rest of the shape (no values at all: zeros), as TensorFlow's
/// `MakeNdarray` / `Tensor::FromProto` read them.
pub fn tensor_from_proto(p: &TensorProto) -> Result<Tensor> {
    let shape = p.tensor_shape.clone().unwrap_or_default();
    if shape.unknown_rank || shape.dim.iter().any(|d| d.size < 0) {
        return Err(Error::invalid_argument(format!(
            "a TensorProto needs a fully known shape, got {}",
            shape_text(&shape)
        )));
    }
    let dims: Vec<usize> = shape.dim.iter().map(|d| d.size as usize).collect();
    let n = shape.num_elements().ok_or_else(|| {
        Error::invalid_argument(format!(
            "a TensorProto of shape {} has too many elements",
            shape_text(&shape)
        ))
    })?;
    let dtype = DataType::try_from(p.dtype).map_err(|_| {
        Error::invalid_argument(format!("a TensorProto has an unknown dtype {}", p.dtype))
    })?;
    // Quantized values are read as the integers of their width.
    let dtype = match dtype {
        DataType::DtQint8 => DataType::DtInt8,
        DataType::DtQuint8 => DataType::DtUint8,
        DataType::DtQint16 => DataType::DtInt16,
        DataType::DtQuint16 => DataType::DtUint16,
        DataType::DtQint32 => DataType::DtInt32,
        d => d,
    };
    let c = &p.tensor_content;
    let t = match dtype {
        DataType::DtFloat => {
            let v = values(c, 4, &p.float_val, n, |b| {
                f32::from_le_bytes([b[0], b[1], b[2], b[3]])
            })?;
            Tensor::from_vec(dims, v)?
        }
        DataType::DtDouble => {
            let v = values(c, 8, &p.double_val, n, |b| {
                f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
            })?;
            Tensor::from_vec(dims, v)?
        }
        DataType::DtInt64 => {
            let v = values(c, 8, &p.int64_val, n, |b| {
                i64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
            })?;
            Tensor::from_vec(dims, v)?
        }
        DataType::DtInt32 => {
            let v = values(c, 4, &p.int_val, n, |b| {
                i32::from_le_bytes([b[0], b[1], b[2], b[3]])
            })?;
            Tensor::from_vec(dims, v)?
        }
        DataType::DtInt16 => {
            let v = values(c, 2, &p.int_val, n, |b| {
                i32::from(i16::from_le_bytes([b[0], b[1]]))
            })?;
            Tensor::from_vec(dims, v.into_iter().map(|x| x as i16).collect())?
        }
        DataType::DtInt8 => {
            let v = values(c, 1, &p.int_val, n, |b| i32::from(b[0] as i8))?;
            Tensor::from_vec(dims, v.into_iter().map(|x| x as i8).collect())?
        }
        DataType::DtUint8 => {
            let v = values(c, 1, &p.int_val, n, |b| i32::from(b[0]))?;
            Tensor::from_vec(dims, v.into_iter().map(|x| x as u8).collect())?
        }
        DataType::DtUint16 => {
            let v = values(c, 2, &p.int_val, n, |b| {
                i32::from(u16::from_le_bytes([b[0], b[1]]))
            })?;
            Tensor::from_vec(dims, v.into_iter().map(|x| x as u16).collect())?
        }
        DataType::DtUint32 => {
            let v = values(c, 4, &p.uint32_val, n, |b| {
                u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            })?;
            Tensor::from_vec(dims, v)?
        }
        DataType::DtUint64 => {
            let v = values(c, 8, &p.uint64_val, n, |b| {
                u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
            })?;
            Tensor::from_vec(dims, v)?
        }
        DataType::DtHalf | DataType::DtBfloat16 => {
            let v = values(c, 2, &p.half_val, n, |b| {
                i32::from(u16::from_le_bytes([b[0], b[1]]))
            })?;
            let bits = v.into_iter().map(|x| x as u16);
            if dtype == DataType::DtHalf {
                Tensor::from_vec(dims, bits.map(f16::from_bits).collect())?
            } else {
                Tensor::from_vec(dims, bits.map(bf16::from_bits).collect())?
            }
        }
        DataType::DtBool => {
            let v = values(c, 1, &p.bool_val, n, |b| b[0] != 0)?;
            Tensor::from_vec(dims, v)?
        }
        DataType::DtString => {
            let v = if c.is_empty() {
                values(&[], 1, &p.string_val, n, |_| Vec::new())?
            } else {
                string_content(c, n)?
            };
            Tensor::from_vec(dims, v)?
        }
        // Complex values are (real, imaginary) pairs, in tensor_content or
        // in scomplex_val / dcomplex_val (the last pair filling the rest).
        DataType::DtComplex64 => {
            let pairs: Vec<[f32; 2]> = p
                .scomplex_val
                .chunks_exact(2)
                .map(|c| [c[0], c[1]])
                .collect();
            let v = values(c, 8, &pairs, n, |b| {
                [
                    f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                    f32::from_le_bytes([b[4], b[5], b[6], b[7]]),
                ]
            })?;
            Tensor::from_vec(
                dims,
                v.into_iter()
                    .map(|[r, i]| ferroflow_tensor::Complex32::new(r, i))
                    .collect(),
            )?
        }
        DataType::DtComplex128 => {
            let pairs: Vec<[f64; 2]> = p
                .dcomplex_val
                .chunks_exact(2)
                .map(|c| [c[0], c[1]])
                .collect();
            let v = values(c, 16, &pairs, n, |b| {
                [
                    f64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])),
                    f64::from_le_bytes(b[8..].try_into().unwrap_or([0; 8])),
                ]
            })?;
            Tensor::from_vec(
                dims,
                v.into_iter()
                    .map(|[r, i]| ferroflow_tensor::Complex64::new(r, i))
                    .collect(),
            )?
        }
        other => {
            return Err(Error::unimplemented(format!(
                "a TensorProto of dtype {other:?} cannot be a ferroflow tensor"
            )))
        }
    };
    Ok(t)
}

fn shape_text(s: &TensorShapeProto) -> String {
    if s.unknown_rank {
        return "<unknown>".to_string();
    }
    let dims: Vec<String> = s.dim.iter().map(|d| d.size.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

/// `n` elements from raw `content` (`width` bytes each) when it is set,
/// else from `repeated`, the last value filling the rest.
fn values<T: Clone + Default>(
    content: &[u8],
    width: usize,
    repeated: &[T],
    n: usize,
    conv: impl Fn(&[u8]) -> T,
) -> Result<Vec<T>> {
    if !content.is_empty() {
        if content.len() != n.saturating_mul(width) {
            return Err(Error::invalid_argument(format!(
                "a TensorProto's tensor_content has {} bytes, but {n} elements of {width} bytes need {}",
                content.len(),
                n.saturating_mul(width)
            )));
        }
        return Ok(content.chunks_exact(width).map(conv).collect());
    }
    if repeated.len() >= n {
        return Ok(repeated[..n].to_vec());
    }
    if n > MAX_SPLAT_ELEMENTS {
        return Err(Error::invalid_argument(format!(
            "a TensorProto with {} values would fill {n} elements (more than {MAX_SPLAT_ELEMENTS})",
            repeated.len()
        )));
    }
    let mut v = Vec::with_capacity(n);
    v.extend_from_slice(repeated);
    let last = repeated.last().cloned().unwrap_or_default();
    v.resize(n, last);
    Ok(v)
}

/// The `n` strings of a string tensor's `tensor_content`, as TensorFlow's C++
/// `Tensor::AsProtoTensorContent` writes them (a TensorProto attr of more than one
/// element made by a C++ graph rewrite): every length as a varint, then the bytes.
fn string_content(content: &[u8], n: usize) -> Result<Vec<Vec<u8>>> {
    let bad = || {
        Error::invalid_argument(format!(
            "a string TensorProto's tensor_content ({} bytes) does not hold {n} length-prefixed strings",
            content.len()
        ))
    };
    let mut pos = 0;
    let mut lengths = Vec::with_capacity(n.min(content.len()));
    for _ in 0..n {
        let mut len: u64 = 0;
        let mut shift = 0;
        loop {
            let byte = *content.get(pos).ok_or_else(bad)?;
            pos += 1;
            if shift > 28 {
                return Err(bad());
            }
            len |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        lengths.push(usize::try_from(len).map_err(|_| bad())?);
    }
    let mut out = Vec::with_capacity(lengths.len());
    for len in lengths {
        let end = pos
            .checked_add(len)
            .filter(|&e| e <= content.len())
            .ok_or_else(bad)?;
        out.push(content[pos..end].to_vec());
        pos = end;
    }
    if pos != content.len() {
        return Err(bad());
    }
    Ok(out)
}

/// A `TensorShapeProto` as a partial shape (size -1: unknown).
pub fn shape_from_proto(s: &TensorShapeProto) -> PartialShape {
    if s.unknown_rank {
        return PartialShape::unknown();
    }
    PartialShape::from_dims(s.dim.iter().map(|d| usize::try_from(d.size).ok()).collect())
}

fn dtype_from(v: i32, node: &str, key: &str) -> Result<DType> {
    DType::from_enum(v).ok_or_else(|| {
        Error::invalid_argument(format!(
            "node {node}: attribute '{key}' names dtype {v}, which ferroflow does not have"
        ))
    })
}

/// An `AttrValue` as the attribute ferroflow's graph takes, the way the
/// Python importer converts it (a function attribute becomes its name).
pub fn attr_from_proto(value: &AttrValue, node: &str, key: &str) -> Result<Attr> {
    let unsupported = |what: &str| {
        Error::invalid_argument(format!(
            "node {node}: attribute '{key}' holds {what}, which ferroflow cannot represent"
        ))
    };
    let Some(v) = &value.value else {
        return Err(unsupported("no value"));
    };
    Ok(match v {
        Value::S(s) => Attr::Str(s.clone()),
        Value::I(i) => Attr::Int(*i),
        Value::F(f) => Attr::Float(f64::from(*f)),
        Value::B(b) => Attr::Bool(*b),
        Value::Type(t) => Attr::Type(dtype_from(*t, node, key)?),
        Value::Shape(s) => Attr::Shape(shape_from_proto(s)),
        Value::Tensor(t) => Attr::Tensor(tensor_from_proto(t).map_err(|e| {
            Error::invalid_argument(format!("node {node}: attribute '{key}': {}", e.message()))
        })?),
        Value::Func(f) => Attr::Str(f.name.clone().into_bytes()),
        Value::Placeholder(p) => return Err(unsupported(&format!("the placeholder '{p}'"))),
        Value::List(l) => {
            if !l.r#type.is_empty() {
                Attr::TypeList(
                    l.r#type
                        .iter()
                        .map(|&t| dtype_from(t, node, key))
                        .collect::<Result<_>>()?,
                )
            } else if !l.shape.is_empty() {
                Attr::ShapeList(l.shape.iter().map(shape_from_proto).collect())
            } else if !l.s.is_empty() {
                Attr::StrList(l.s.clone())
            } else if !l.i.is_empty() {
                Attr::IntList(l.i.clone())
            } else if !l.f.is_empty() {
                Attr::FloatList(l.f.iter().map(|&x| f64::from(x)).collect())
            } else if !l.b.is_empty() {
                Attr::BoolList(l.b.clone())
            } else if !l.tensor.is_empty() {
                return Err(unsupported("a list of tensors"));
            } else if !l.func.is_empty() {
                Attr::StrList(l.func.iter().map(|f| f.name.clone().into_bytes()).collect())
            } else {
                Attr::IntList(Vec::new())
            }
        }
    })
}

/// `"^a"` -> (`a`, None); `"a:1"` -> (`a`, Some(1)); `"a"` -> (`a`, Some(0)).
pub(crate) fn parse_input(input: &str) -> (&str, Option<usize>) {
    if let Some(name) = input.strip_prefix('^') {
        return (name, None);
    }
    if let Some((name, idx)) = input.rsplit_once(':') {
        if !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(i) = idx.parse() {
                return (name, Some(i));
            }
        }
    }
    (input, Some(0))
}

/// The node an input names: `a` for `^a`, `a`, `a:1` and, in a function
/// body, `a:output_arg:1`.
fn input_node(input: &str) -> &str {
    let name = parse_input(input).0;
    match name.split_once(':') {
        Some((node, _)) => node,
        None => name,
    }
}

/// The order to create `nodes` in: every node after its inputs. An input
/// for which `outside` holds (a function's argument) names no node.
fn dependency_order(nodes: &[NodeDef], outside: &dyn Fn(&str) -> bool) -> Result<Vec<usize>> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        if index.insert(n.name.as_str(), i).is_some() {
            return Err(Error::invalid_argument(format!(
                "the GraphDef has two nodes named '{}'",
                n.name
            )));
        }
    }
    // 0: not seen, 1: on the stack, 2: done.
    let mut state = vec![0u8; nodes.len()];
    let mut order = Vec::with_capacity(nodes.len());
    for root in 0..nodes.len() {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, false)];
        while let Some((i, done)) = stack.pop() {
            if done {
                state[i] = 2;
                order.push(i);
                continue;
            }
            match state[i] {
                2 => continue,
                1 => {
                    return Err(Error::invalid_argument(format!(
                        "the GraphDef has a cycle through node '{}'",
                        nodes[i].name
                    )))
                }
                _ => {}
            }
            state[i] = 1;
            stack.push((i, true));
            for input in &nodes[i].input {
                let dep = input_node(input);
                if outside(dep) && !index.contains_key(dep) {
                    continue;
                }
                let Some(&d) = index.get(dep) else {
                    return Err(Error::invalid_argument(format!(
                        "node '{}' has input '{input}', which is not a node of the GraphDef",
                        nodes[i].name
                    )));
                };
                match state[d] {
                    0 => stack.push((d, false)),
                    1 => {
                        return Err(Error::invalid_argument(format!(
                            "the GraphDef has a cycle through node '{}'",
                            nodes[d].name
                        )))
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(order)
}

/// Adds every node of `def` to `graph` and returns the graph's node for each
/// node name of `def` (as written in `def`, without the prefix).
///
/// The op types must be registered (by the crates whose ops the graph uses:
/// `ferroflow_train::register()`, `ferroflow_checkpoint::register()`, ...).
/// Errors are `InvalidArgument` naming the node for an input that names no
/// node, an output index past a node's outputs, a cycle, two nodes of one
/// name, an attribute ferroflow cannot represent or a node its op rejects;
/// `NotFound` for an op type ferroflow does not have. On error the nodes added so far stay in
/// `graph` (a graph only grows); import into a fresh graph to discard them.
pub fn import_graph_def(
    graph: &mut Graph,
    def: &GraphDef,
    options: &ImportOptions,
) -> Result<HashMap<String, NodeId>> {
    if let Some(library) = def.library.as_ref().filter(|l| !l.is_empty()) {
        import_function_library(graph, library)?;
    }
    let nodes = restore_fused_updates(&def.node);
    create_nodes(graph, &nodes, options, &HashMap::new())
}

/// Adds every function of `library` to `graph`'s library (functions already
/// there are kept). A function's nested functions go into its own graph's
/// library first, as the Python importer builds them.
pub fn import_function_library(graph: &mut Graph, library: &FunctionDefLibrary) -> Result<()> {
    let fdefs: HashMap<&str, &FunctionDef> = library
        .function
        .iter()
        .filter_map(|f| f.signature.as_ref().map(|s| (s.name.as_str(), f)))
        .collect();
    let mut budget = MAX_FUNCTION_BUILDS;
    for name in fdefs.keys() {
        build_function(graph, name, &fdefs, 0, &mut budget)?;
    }
    Ok(())
}

/// How deep functions may nest (a library calling itself would recurse forever).
const MAX_FUNCTION_DEPTH: usize = 64;
/// How many function bodies one import may build. Each function's nested
/// functions are built into its own library, so a library whose functions
/// each call two others could otherwise ask for exponentially many.
const MAX_FUNCTION_BUILDS: usize = 100_000;

fn build_function(
    target: &mut Graph,
    name: &str,
    fdefs: &HashMap<&str, &FunctionDef>,
    depth: usize,
    budget: &mut usize,
) -> Result<()> {
    if target.function(name).is_ok() {
        return Ok(());
    }
    if *budget == 0 {
        return Err(Error::invalid_argument(format!(
            "the function library needs more than {MAX_FUNCTION_BUILDS} function bodies built \
             (at function '{name}')"
        )));
    }
    *budget -= 1;
    let Some(fdef) = fdefs.get(name) else {
        return Err(Error::invalid_argument(format!(
            "function '{name}' is used but not in the GraphDef's library"
        )));
    };
    if depth > MAX_FUNCTION_DEPTH {
        return Err(Error::invalid_argument(format!(
            "function '{name}' nests functions more than {MAX_FUNCTION_DEPTH} deep (a cycle?)"
        )));
    }
    let context = |e: Error| e.with_context(format_args!("importing function '{name}'"));
    let signature = fdef.signature.clone().unwrap_or_default();
    let mut body = Graph::new();
    let mut args: HashMap<String, Output> = HashMap::new();
    let mut arg_list = Vec::with_capacity(signature.input_arg.len());
    for (k, arg) in signature.input_arg.iter().enumerate() {
        let shape = fdef
            .arg_attr
            .get(&(k as u32))
            .and_then(|a| a.attr.get("_output_shapes"))
            .and_then(|v| match &v.value {
                Some(Value::List(l)) => l.shape.first().map(shape_from_proto),
                _ => None,
            })
            .unwrap_or_else(PartialShape::unknown);
        let is_list = arg.r#type == DataType::DtVariant as i32;
        let dtype = if is_list {
            DType::Float32
        } else {
            dtype_from(arg.r#type, name, &arg.name).map_err(context)?
        };
        let id = body
            .add_node(
                NodeSpec::new("_Arg", &arg.name)
                    .attr("T", Attr::Type(dtype))
                    .attr("shape", Attr::Shape(shape))
                    .attr("is_ref", Attr::Bool(arg.is_ref))
                    .attr("is_list", Attr::Bool(is_list)),
            )
            .map_err(context)?;
        args.insert(arg.name.clone(), Output::new(id, 0));
        arg_list.push(Output::new(id, 0));
    }
    for node in &fdef.node_def {
        for key in FUNCTION_ATTRS.iter().chain(FUNCTION_LIST_ATTRS) {
            if let Some(value) = node.attr.get(*key) {
                for nested in function_names_in(value) {
                    if !nested.is_empty() {
                        build_function(&mut body, &nested, fdefs, depth + 1, budget)?;
                    }
                }
            }
        }
    }
    let created = create_nodes(&mut body, &fdef.node_def, &ImportOptions::default(), &args)
        .map_err(context)?;
    let mut outputs = Vec::with_capacity(signature.output_arg.len());
    for out in &signature.output_arg {
        let Some(source) = fdef.ret.get(&out.name) else {
            return Err(context(Error::invalid_argument(format!(
                "output '{}' has no ret entry",
                out.name
            ))));
        };
        outputs.push(resolve(&body, source, &created, &args, &fdef.node_def).map_err(context)?);
    }
    let function = Function::new(body, arg_list, outputs).map_err(context)?;
    target.add_function(name, function).map_err(context)
}

/// The tensor a data input names: an argument, `node`, `node:i`, or (in a
/// function body) `node:output_arg:k`.
fn resolve(
    graph: &Graph,
    input: &str,
    created: &HashMap<String, NodeId>,
    args: &HashMap<String, Output>,
    defs: &[NodeDef],
) -> Result<Output> {
    if let Some(&arg) = args.get(input) {
        return Ok(arg);
    }
    let parts: Vec<&str> = input.split(':').collect();
    let (dep, index) = match parts[..] {
        [node, arg_name, k] => {
            let k: usize = k.parse().map_err(|_| {
                Error::invalid_argument(format!("input '{input}' has a bad output index"))
            })?;
            let Some(&id) = created.get(node) else {
                return Err(Error::invalid_argument(format!(
                    "input '{input}' names no node"
                )));
            };
            let def = defs.iter().find(|d| d.name == node);
            let count = graph.node(id).outputs.len();
            (node, def.map_or(k, |d| output_index(d, arg_name, k, count)))
        }
        _ => match parse_input(input) {
            (node, Some(i)) => (node, i),
            (node, None) => (node, 0),
        },
    };
    let Some(&id) = created.get(dep) else {
        return Err(Error::invalid_argument(format!(
            "input '{input}' is neither a node nor an argument"
        )));
    };
    let outputs = graph.node(id).outputs.len();
    if index >= outputs {
        return Err(Error::invalid_argument(format!(
            "input '{input}': '{dep}' has {outputs} outputs"
        )));
    }
    Ok(Output::new(id, index))
}

/// The output number of `node` that `node:arg_name:k` names, from
/// TensorFlow's signature of its op (`k` for an op TensorFlow lacks).
fn output_index(node: &NodeDef, arg_name: &str, k: usize, count: usize) -> usize {
    let Some(signature) = registry::signature(&node.op) else {
        return k;
    };
    let Some(lengths) = registry::arg_lengths(&signature.outputs, count, &node.attr) else {
        return k;
    };
    let mut start = 0;
    for (arg, length) in signature.outputs.iter().zip(lengths) {
        if arg.name == arg_name {
            return start + k;
        }
        start += length;
    }
    k
}

/// Creates `nodes` in `graph` in dependency order; an input naming one of
/// `args` reads that argument (a function body's).
fn create_nodes(
    graph: &mut Graph,
    nodes: &[NodeDef],
    options: &ImportOptions,
    args: &HashMap<String, Output>,
) -> Result<HashMap<String, NodeId>> {
    let order = dependency_order(nodes, &|name| args.contains_key(name))?;
    for n in nodes {
        if lookup(&n.op).is_none() {
            return Err(Error::not_found(format!(
                "node '{}': op type '{}' is not registered in ferroflow (register the crate that \
                 has it, or the graph needs an op ferroflow does not have)",
                n.name, n.op
            )));
        }
    }
    let mut created: HashMap<String, NodeId> = HashMap::with_capacity(nodes.len());
    for i in order {
        let n = &nodes[i];
        let mut spec = NodeSpec::new(
            &n.op,
            &if options.prefix.is_empty() {
                n.name.clone()
            } else {
                format!("{}/{}", options.prefix.trim_end_matches('/'), n.name)
            },
        );
        for input in &n.input {
            if let Some(control) = input.strip_prefix('^') {
                // dependency_order checked that every input names a node or an argument.
                if let Some(&id) = created.get(control) {
                    spec.control_inputs.push(id);
                }
                continue;
            }
            let output = resolve(graph, input, &created, args, nodes)
                .map_err(|e| e.with_context(format_args!("node '{}'", n.name)))?;
            spec.inputs.push(output);
        }
        let mut attrs = Attrs::new();
        for (k, v) in &n.attr {
            if k == "_output_shapes" || k == "_class" {
                continue;
            }
            attrs.insert(k.clone(), attr_from_proto(v, &n.name, k)?);
        }
        // A graph exported with strip_default_attrs lacks the attrs that had their default value.
        for (k, v) in missing_defaults(n) {
            attrs.insert(k.clone(), attr_from_proto(&v, &n.name, &k)?);
        }
        spec.attrs = attrs;
        if !options.clear_devices {
            spec.device = n.device.clone();
        }
        let id = graph.add_node(spec).map_err(|e| {
            e.with_context(format_args!("importing node '{}' ({})", n.name, n.op))
                .into_runtime()
        })?;
        created.insert(n.name.clone(), id);
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph_def::{graph_def, ListValue};
    use prost::Message;
    use std::collections::BTreeMap;

    fn node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, Value)]) -> NodeDef {
        NodeDef {
            name: name.into(),
            op: op.into(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            device: String::new(),
            attr: attrs
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        AttrValue {
                            value: Some(v.clone()),
                        },
                    )
                })
                .collect::<BTreeMap<_, _>>(),
        }
    }

    fn float_const(name: &str, v: &[f32], dims: &[i64]) -> NodeDef {
        let t = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(dims)),
            float_val: v.to_vec(),
            ..Default::default()
        };
        node(
            name,
            "Const",
            &[],
            &[
                ("value", Value::Tensor(t)),
                ("dtype", Value::Type(DataType::DtFloat as i32)),
            ],
        )
    }

    fn def(nodes: Vec<NodeDef>) -> GraphDef {
        GraphDef {
            node: nodes,
            library: None,
            versions: None,
        }
    }

    #[test]
    fn imports_out_of_order_with_controls_and_round_trips() {
        // "sum" comes before its inputs; "b" is a splat constant.
        let d = def(vec![
            node(
                "sum",
                "AddV2",
                &["a", "b:0", "^a"],
                &[("T", Value::Type(1))],
            ),
            float_const("a", &[1.0, 2.0, 3.0], &[3]),
            float_const("b", &[5.0], &[3]),
        ]);
        let mut g = Graph::new();
        let ids = import_graph_def(&mut g, &d, &ImportOptions::default()).unwrap();
        let sum = g.node(ids["sum"]);
        assert_eq!(
            sum.inputs,
            [Output::new(ids["a"], 0), Output::new(ids["b"], 0)]
        );
        assert_eq!(sum.control_inputs, [ids["a"]]);
        let b = g.const_value(Output::new(ids["b"], 0)).unwrap();
        assert_eq!(b.as_slice::<f32>().unwrap(), &[5.0, 5.0, 5.0]);
        // Exporting the imported graph gives back the same nodes (in
        // dependency order).
        let back = graph_def(&g, 0, false, 27);
        let names: Vec<&str> = back.node.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "sum"]);
        assert_eq!(back.node[2].input, ["a", "b", "^a"]);
    }

    #[test]
    fn prefix_and_clear_devices() {
        let mut a = float_const("a", &[1.0], &[]);
        a.device = "/device:CPU:0".into();
        let d = def(vec![
            a,
            node("i", "Identity", &["a"], &[("T", Value::Type(1))]),
        ]);
        let mut g = Graph::new();
        let opts = ImportOptions {
            prefix: "scope".into(),
            clear_devices: true,
        };
        let ids = import_graph_def(&mut g, &d, &opts).unwrap();
        assert_eq!(g.node(ids["i"]).name, "scope/i");
        assert_eq!(g.node(ids["a"]).device, "");
        assert!(g.node_by_name("scope/a").is_some());
    }

    #[test]
    fn bad_graphs_name_the_node() {
        let err = |d: GraphDef| {
            import_graph_def(&mut Graph::new(), &d, &ImportOptions::default()).unwrap_err()
        };
        let e = err(def(vec![node("i", "Identity", &["nowhere:1"], &[])]));
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::InvalidArgument));
        assert!(
            e.message().contains("'i'") && e.message().contains("nowhere:1"),
            "{e}"
        );

        let e = err(def(vec![
            node("x", "Identity", &["y"], &[]),
            node("y", "Identity", &["x"], &[]),
        ]));
        assert!(e.message().contains("cycle"), "{e}");

        let e = err(def(vec![node("q", "NoSuchOpAnywhere", &[], &[])]));
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::NotFound));
        assert!(e.message().contains("NoSuchOpAnywhere") && e.message().contains("'q'"));

        let e = err(def(vec![
            float_const("a", &[1.0], &[]),
            node("i", "Identity", &["a:3"], &[]),
        ]));
        assert!(e.message().contains("has 1 outputs"), "{e}");

        let e = err(def(vec![
            float_const("a", &[1.0], &[]),
            float_const("a", &[1.0], &[]),
        ]));
        assert!(e.message().contains("two nodes named 'a'"), "{e}");

        let tensors = ListValue {
            tensor: vec![TensorProto::default()],
            ..Default::default()
        };
        let e = err(def(vec![node(
            "n",
            "NoOp",
            &[],
            &[("l", Value::List(tensors))],
        )]));
        assert!(e.message().contains("list of tensors") && e.message().contains("node n"));

        let mut with_lib = def(vec![]);
        with_lib.library = Some(crate::graph_def::FunctionDefLibrary {
            function: vec![crate::graph_def::FunctionDef {
                signature: Some(crate::graph_def::library::OpDef {
                    name: "body".into(),
                    ..Default::default()
                }),
                node_def: vec![node("n", "Identity", &["missing:output:0"], &[])],
                ..Default::default()
            }],
            gradient: vec![],
        });
        // A function whose node reads neither a node nor an argument.
        let e = err(with_lib);
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::InvalidArgument));
        assert!(
            e.message().contains("body") && e.message().contains("missing"),
            "{e}"
        );

        // A constant whose content does not fit its shape.
        let bad = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[2])),
            tensor_content: vec![0; 5],
            ..Default::default()
        };
        let e = err(def(vec![node(
            "c",
            "Const",
            &[],
            &[("value", Value::Tensor(bad)), ("dtype", Value::Type(1))],
        )]));
        assert!(
            e.message().contains("node c") && e.message().contains("5 bytes"),
            "{e}"
        );
    }

    #[test]
    fn tensor_protos() {
        let p = TensorProto {
            dtype: DataType::DtInt32 as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[2, 2])),
            tensor_content: [1i32, -2, 3, 4]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
            ..Default::default()
        };
        let t = tensor_from_proto(&p).unwrap();
        assert_eq!(t.dims(), &[2, 2]);
        assert_eq!(t.as_slice::<i32>().unwrap(), &[1, -2, 3, 4]);
        let s = TensorProto {
            dtype: DataType::DtString as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[2])),
            string_val: vec![b"ab".to_vec()],
            ..Default::default()
        };
        let t = tensor_from_proto(&s).unwrap();
        assert_eq!(
            t.as_slice::<Vec<u8>>().unwrap(),
            &[b"ab".to_vec(), b"ab".to_vec()]
        );
        // TensorFlow's C++ writes a string vector as varint lengths, then the bytes.
        let mut long = vec![b'x'; 200];
        long[0] = b'y';
        let mut content = vec![2, 0, 0xc8, 0x01];
        content.extend_from_slice(b"ab");
        content.extend_from_slice(&long);
        let packed = TensorProto {
            dtype: DataType::DtString as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[3])),
            tensor_content: content.clone(),
            ..Default::default()
        };
        let t = tensor_from_proto(&packed).unwrap();
        assert_eq!(
            t.as_slice::<Vec<u8>>().unwrap(),
            &[b"ab".to_vec(), Vec::new(), long]
        );
        for cut in [content.len() - 1, 3, 1] {
            let short = TensorProto {
                tensor_content: content[..cut].to_vec(),
                ..packed.clone()
            };
            let err = tensor_from_proto(&short).unwrap_err().to_string();
            assert!(err.contains("length-prefixed strings"), "{err}");
        }
        let z = TensorProto {
            dtype: DataType::DtInt64 as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[3])),
            ..Default::default()
        };
        assert_eq!(
            tensor_from_proto(&z).unwrap().as_slice::<i64>().unwrap(),
            &[0, 0, 0]
        );
        let h = TensorProto {
            dtype: DataType::DtHalf as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[])),
            half_val: vec![f16::from_f32(1.5).to_bits() as i32],
            ..Default::default()
        };
        assert_eq!(
            tensor_from_proto(&h).unwrap().as_slice::<f16>().unwrap(),
            &[f16::from_f32(1.5)]
        );
        let unknown = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[-1])),
            ..Default::default()
        };
        assert!(tensor_from_proto(&unknown).is_err());
        let huge = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[1 << 40])),
            float_val: vec![0.0],
            ..Default::default()
        };
        assert!(tensor_from_proto(&huge).is_err());
    }

    #[test]
    fn attrs_convert_like_python() {
        let a = |v: Value| attr_from_proto(&AttrValue { value: Some(v) }, "n", "k").unwrap();
        assert!(matches!(a(Value::I(3)), Attr::Int(3)));
        assert!(matches!(a(Value::Type(102)), Attr::Type(DType::Float64)));
        let list = |l: ListValue| a(Value::List(l));
        assert!(matches!(list(ListValue::default()), Attr::IntList(v) if v.is_empty()));
        assert!(matches!(
            list(ListValue { i: vec![1, 2], ..Default::default() }),
            Attr::IntList(v) if v == [1, 2]
        ));
        assert!(matches!(
            list(ListValue { r#type: vec![1, 3], ..Default::default() }),
            Attr::TypeList(v) if v == [DType::Float32, DType::Int32]
        ));
        let f = a(Value::Func(crate::graph_def::NameAttrList {
            name: "f".into(),
            attr: BTreeMap::new(),
        }));
        assert!(matches!(f, Attr::Str(s) if s == b"f"));
        let shape = a(Value::Shape(TensorShapeProto::from_dims(&[-1, 4])));
        assert!(matches!(shape, Attr::Shape(s) if s.dims() == Some(&[None, Some(4)][..])));
        let e = attr_from_proto(
            &AttrValue {
                value: Some(Value::Type(99)),
            },
            "n",
            "T",
        )
        .unwrap_err();
        assert!(e.message().contains("node n") && e.message().contains("'T'"));
    }

    #[test]
    fn fused_updates_come_back() {
        let original = node("train", "ApplyFused", &["v", "g"], &[]);
        let noop = node(
            "train",
            "NoOp",
            &["^train/update_v"],
            &[
                (
                    crate::graph_def::tf_form::ORIGINAL_ATTR,
                    Value::S(original.encode_to_vec()),
                ),
                (
                    crate::graph_def::tf_form::EXPANSION_ATTR,
                    Value::List(ListValue {
                        s: vec![b"train/update_v".to_vec()],
                        ..Default::default()
                    }),
                ),
            ],
        );
        let nodes = vec![
            node("v", "VariableV2", &[], &[]),
            node("g", "Const", &[], &[]),
            node(
                "train/update_v",
                "ApplyGradientDescent",
                &["v", "lr", "g"],
                &[],
            ),
            noop.clone(),
        ];
        let back = restore_fused_updates(&nodes);
        let names: Vec<(&str, &str)> = back
            .iter()
            .map(|n| (n.name.as_str(), n.op.as_str()))
            .collect();
        assert_eq!(
            names,
            [("v", "VariableV2"), ("g", "Const"), ("train", "ApplyFused")]
        );
        // An edited graph (an input gone) keeps TensorFlow's ops.
        let edited = vec![node("v", "VariableV2", &[], &[]), nodes[2].clone(), noop];
        assert_eq!(restore_fused_updates(&edited), edited);
    }

    fn library(functions: Vec<FunctionDef>) -> GraphDef {
        GraphDef {
            node: vec![],
            library: Some(FunctionDefLibrary {
                function: functions,
                gradient: vec![],
            }),
            versions: None,
        }
    }

    fn function(
        name: &str,
        args: &[&str],
        nodes: Vec<NodeDef>,
        ret: &[(&str, &str)],
    ) -> FunctionDef {
        use crate::graph_def::library::{ArgDef, OpDef};
        FunctionDef {
            signature: Some(OpDef {
                name: name.into(),
                input_arg: args
                    .iter()
                    .map(|a| ArgDef {
                        name: a.to_string(),
                        r#type: DataType::DtFloat as i32,
                        ..Default::default()
                    })
                    .collect(),
                output_arg: ret
                    .iter()
                    .map(|(k, _)| ArgDef {
                        name: k.to_string(),
                        r#type: DataType::DtFloat as i32,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            node_def: nodes,
            ret: ret
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn function_libraries_import_and_crafted_ones_fail_cleanly() {
        let call = |f: &str| {
            Value::Func(crate::graph_def::NameAttrList {
                name: f.into(),
                attr: BTreeMap::new(),
            })
        };
        // A body reading its argument and a node output by TensorFlow's `node:output_arg:k`.
        let body = function(
            "body",
            &["x"],
            vec![
                node("neg", "Neg", &["x"], &[("T", Value::Type(1))]),
                node("sq", "Square", &["neg:y:0"], &[("T", Value::Type(1))]),
            ],
            &[("out", "sq:y:0")],
        );
        let mut g = Graph::new();
        import_graph_def(
            &mut g,
            &library(vec![body.clone()]),
            &ImportOptions::default(),
        )
        .unwrap();
        let f = g.function("body").unwrap();
        assert_eq!((f.args.len(), f.outputs.len()), (1, 1));
        assert_eq!(f.graph.node(f.outputs[0].node).op, "Square");

        let fails = |d: GraphDef| {
            import_graph_def(&mut Graph::new(), &d, &ImportOptions::default()).unwrap_err()
        };
        // A function that calls itself (through a function attr) nests without end.
        let selfish = function(
            "selfish",
            &["x"],
            vec![node(
                "n",
                "Identity",
                &["x"],
                &[("T", Value::Type(1)), ("f", call("selfish"))],
            )],
            &[("out", "n:output:0")],
        );
        assert!(fails(library(vec![selfish]))
            .message()
            .contains("nests functions"));
        // A function naming one the library lacks, an output index past the node's outputs, a ret
        // naming nothing, and an argument of a dtype ferroflow does not have.
        let missing = function(
            "missing",
            &["x"],
            vec![node(
                "n",
                "Identity",
                &["x"],
                &[("T", Value::Type(1)), ("f", call("nowhere"))],
            )],
            &[("out", "n:output:0")],
        );
        assert!(fails(library(vec![missing])).message().contains("nowhere"));
        let far = function("far", &["x"], vec![], &[("out", "x:output:99999999999")]);
        assert!(fails(library(vec![far])).message().contains("far"));
        let mut bad_type = body.clone();
        bad_type.signature.as_mut().unwrap().input_arg[0].r#type = 99;
        assert!(fails(library(vec![bad_type])).message().contains("dtype"));
    }
}
