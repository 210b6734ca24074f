//! The graph: an append-only list of nodes with TensorFlow's naming rules.

use crate::attr::{AttrValue, Attrs};
use crate::ops::{self, InferContext};
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::elementwise::BinaryOp;
use ferroflow_tensor::kernels::reduce::{self, ReduceOp};
use ferroflow_tensor::kernels::{array, elementwise};
use ferroflow_tensor::{DType, Error, Result, Tensor};
use std::collections::HashMap;
use std::fmt;

/// Index of a node in its graph.
pub type NodeId = usize;

/// One output of a node: what a symbolic `Tensor` refers to (`name:index`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Output {
    pub node: NodeId,
    pub index: usize,
}

impl Output {
    pub fn new(node: NodeId, index: usize) -> Output {
        Output { node, index }
    }
}

/// The static type of one output.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputInfo {
    pub dtype: DType,
    pub shape: PartialShape,
    /// True for a variable reference (`VariableV2`, `Assign`, ...): consumers
    /// either update the variable in place or read its current value.
    pub is_ref: bool,
    /// True for a list of tensors (a `TensorArray`'s flow): declared as a
    /// float32 of unknown shape, as TF1 declares the flow, but its value at
    /// run time is a list, and gradients of it are lists too.
    pub is_list: bool,
}

impl OutputInfo {
    pub fn new(dtype: DType, shape: PartialShape) -> OutputInfo {
        OutputInfo {
            dtype,
            shape,
            is_ref: false,
            is_list: false,
        }
    }

    /// A list of tensors (see [`OutputInfo::is_list`]).
    pub fn list() -> OutputInfo {
        OutputInfo {
            dtype: DType::Float32,
            shape: PartialShape::unknown(),
            is_ref: false,
            is_list: true,
        }
    }

    pub fn reference(dtype: DType, shape: PartialShape) -> OutputInfo {
        OutputInfo {
            dtype,
            shape,
            is_ref: true,
            is_list: false,
        }
    }
}

/// A node (TensorFlow's `Operation`).
#[derive(Clone, Debug)]
pub struct Node {
    pub id: NodeId,
    pub name: String,
    /// The op type, e.g. `MatMul`.
    pub op: String,
    pub inputs: Vec<Output>,
    pub control_inputs: Vec<NodeId>,
    pub attrs: Attrs,
    pub device: String,
    pub outputs: Vec<OutputInfo>,
}

/// What a caller supplies to add a node; the graph infers the outputs.
#[derive(Clone, Debug, Default)]
pub struct NodeSpec {
    pub op: String,
    /// The final, unique name (see [`Graph::unique_name`]).
    pub name: String,
    pub inputs: Vec<Output>,
    pub control_inputs: Vec<NodeId>,
    pub attrs: Attrs,
    pub device: String,
}

impl NodeSpec {
    pub fn new(op: &str, name: &str) -> NodeSpec {
        NodeSpec {
            op: op.to_string(),
            name: name.to_string(),
            ..NodeSpec::default()
        }
    }

    pub fn input(mut self, o: Output) -> NodeSpec {
        self.inputs.push(o);
        self
    }

    pub fn inputs(mut self, o: impl IntoIterator<Item = Output>) -> NodeSpec {
        self.inputs.extend(o);
        self
    }

    pub fn control(mut self, n: NodeId) -> NodeSpec {
        self.control_inputs.push(n);
        self
    }

    pub fn attr(mut self, name: &str, v: AttrValue) -> NodeSpec {
        self.attrs.insert(name.to_string(), v);
        self
    }
}

/// A dataflow graph. Nodes are only ever appended, so node ids and any
/// plan compiled from the graph stay valid as it grows.
#[derive(Default, Clone)]
pub struct Graph {
    nodes: Vec<Node>,
    by_name: HashMap<String, NodeId>,
    /// Lower-cased names handed out by `unique_name`, with their use counts.
    names_in_use: HashMap<String, usize>,
    finalized: bool,
    /// The function library: bodies of the control-flow ops (see `function.rs`).
    pub(crate) functions: HashMap<String, std::sync::Arc<crate::function::Function>>,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Graph({} nodes)", self.nodes.len())
    }
}

impl Graph {
    pub fn new() -> Graph {
        Graph::default()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub fn get(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id)
    }

    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// The static type of an output.
    pub fn output(&self, o: Output) -> &OutputInfo {
        &self.nodes[o.node].outputs[o.index]
    }

    /// `name:index`.
    pub fn output_name(&self, o: Output) -> String {
        format!("{}:{}", self.nodes[o.node].name, o.index)
    }

    /// Looks up `name:index` (or `name`, meaning output 0).
    pub fn output_by_name(&self, name: &str) -> Option<Output> {
        let (op, idx) = match name.rsplit_once(':') {
            Some((op, i)) => (op, i.parse().ok()?),
            None => (name, 0),
        };
        let node = self.node_by_name(op)?;
        (idx < self.nodes[node].outputs.len()).then_some(Output::new(node, idx))
    }

    pub fn finalize(&mut self) {
        self.finalized = true;
    }

    /// Makes a finalized graph editable again (TF's `_unsafe_unfinalize`,
    /// which `MonitoredSession.close` uses to hand the graph back).
    pub fn unfinalize(&mut self) {
        self.finalized = false;
    }

    pub fn is_finalized(&self) -> bool {
        self.finalized
    }

    /// TensorFlow's `Graph.unique_name`: `name` if unused, else `name_1`,
    /// `name_2`, ... Names compare case-insensitively, as TensorFlow's do.
    pub fn unique_name(&mut self, name: &str, mark_as_used: bool) -> String {
        let key = name.to_lowercase();
        let mut i = self.names_in_use.get(&key).copied().unwrap_or(0);
        if mark_as_used {
            self.names_in_use.insert(key.clone(), i + 1);
        }
        if i == 0 {
            return name.to_string();
        }
        let mut candidate = format!("{key}_{i}");
        while self.names_in_use.contains_key(&candidate) {
            i += 1;
            candidate = format!("{key}_{i}");
        }
        if mark_as_used {
            self.names_in_use.insert(candidate, 1);
        }
        format!("{name}_{i}")
    }

    /// Adds a node, checking its inputs and inferring its output types.
    pub fn add_node(&mut self, spec: NodeSpec) -> Result<NodeId> {
        if self.finalized {
            return Err(Error::failed_precondition(
                "Graph is finalized and cannot be modified.",
            ));
        }
        if self.by_name.contains_key(&spec.name) {
            return Err(Error::value(format!(
                "Duplicate node name in graph: '{}'",
                spec.name
            )));
        }
        if spec.name.is_empty() {
            return Err(Error::value("node names must not be empty"));
        }
        for o in &spec.inputs {
            if o.node >= self.nodes.len() || o.index >= self.nodes[o.node].outputs.len() {
                return Err(Error::value(format!(
                    "input {}:{} of '{}' does not exist in this graph",
                    o.node, o.index, spec.name
                )));
            }
        }
        if let Some(bad) = spec.control_inputs.iter().find(|&&c| c >= self.nodes.len()) {
            return Err(Error::value(format!(
                "control input {bad} of '{}' does not exist in this graph",
                spec.name
            )));
        }
        let def = ops::lookup(&spec.op)
            .ok_or_else(|| Error::value(format!("Op type not registered '{}'", spec.op)))?;
        // Ops without a list input take exactly their declared inputs (an
        // imported NodeDef may not).
        if !def.inputs.iter().any(|n| n.ends_with('*')) && spec.inputs.len() != def.inputs.len() {
            return Err(Error::value(format!(
                "'{}' ({}) expects {} inputs ({}), got {}",
                spec.name,
                spec.op,
                def.inputs.len(),
                def.inputs.join(", "),
                spec.inputs.len()
            )));
        }
        for (r, o) in spec.inputs.iter().enumerate() {
            if def.takes_ref(r, &spec.attrs) && !self.output(*o).is_ref {
                return Err(Error::type_error(format!(
                    "'{}' ({}) needs a variable for input {r} ('{}'), got the value {}",
                    spec.name,
                    spec.op,
                    def.inputs.get(r).unwrap_or(&"ref"),
                    self.output_name(*o)
                )));
            }
        }
        let outputs = {
            let ctx = InferContext {
                graph: self,
                def: &def,
                name: &spec.name,
                inputs: &spec.inputs,
                attrs: &spec.attrs,
            };
            (def.infer)(&ctx)?
        };
        let id = self.nodes.len();
        self.names_in_use
            .entry(spec.name.to_lowercase())
            .or_insert(1);
        self.by_name.insert(spec.name.clone(), id);
        let mut control = spec.control_inputs;
        control.sort_unstable();
        control.dedup();
        self.nodes.push(Node {
            id,
            name: spec.name,
            op: spec.op,
            inputs: spec.inputs,
            control_inputs: control,
            attrs: spec.attrs,
            device: spec.device,
            outputs,
        });
        Ok(id)
    }

    /// Makes the nodes from `first` on read `to` wherever they read `from`.
    ///
    /// Only for building a function graph whose argument `to` (an `_Arg`,
    /// which may come after its readers: arguments are fed, never run)
    /// stands for a value the graph would otherwise compute.
    pub fn redirect(&mut self, from: Output, to: Output, first: NodeId) -> Result<()> {
        if self.output(from).dtype != self.output(to).dtype {
            return Err(Error::internal(format!(
                "cannot redirect {} to {}: their dtypes differ",
                self.output_name(from),
                self.output_name(to)
            )));
        }
        for node in &mut self.nodes[first..] {
            for input in &mut node.inputs {
                if *input == from {
                    *input = to;
                }
            }
        }
        Ok(())
    }

    /// A node to change in place, for rewrites of a private copy of a graph
    /// (a session's mixed-precision plans); the caller keeps the node's
    /// attributes, inputs and output types consistent.
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id]
    }

    /// Narrows the static shape of an output (`Tensor.set_shape`).
    pub fn set_output_shape(&mut self, o: Output, shape: &PartialShape) -> Result<()> {
        let cur = &self.nodes[o.node].outputs[o.index].shape;
        let merged = cur.merge(shape).ok_or_else(|| {
            Error::value(format!(
                "Tensor's shape {cur} is not compatible with supplied shape {shape}"
            ))
        })?;
        self.nodes[o.node].outputs[o.index].shape = merged;
        Ok(())
    }

    /// The node's device string (`Graph.device` records it; placement is the
    /// distributed runtime's business).
    pub fn set_device(&mut self, id: NodeId, device: &str) {
        self.nodes[id].device = device.to_string();
    }

    /// Adds a control input to an existing node (used by `tf.group` helpers
    /// and the Python `Operation._add_control_input`).
    pub fn add_control_input(&mut self, id: NodeId, control: NodeId) -> Result<()> {
        if control >= id {
            return Err(Error::value(
                "a control input must be created before the op that waits for it",
            ));
        }
        let c = &mut self.nodes[id].control_inputs;
        if !c.contains(&control) {
            c.push(control);
            c.sort_unstable();
        }
        Ok(())
    }

    /// The value of an output when it can be computed at graph-construction
    /// time (TensorFlow's `constant_value`): constants and simple functions
    /// of them and of known shapes.
    pub fn const_value(&self, o: Output) -> Option<Tensor> {
        self.const_value_depth(o, 0, &std::cell::Cell::new(CONST_EVAL_NODES))
    }

    /// `budget` counts the nodes one query may visit, so that a graph sharing
    /// subexpressions (`x = a + a; y = x + x; ...`) cannot make it exponential.
    fn const_value_depth(
        &self,
        o: Output,
        depth: usize,
        budget: &std::cell::Cell<usize>,
    ) -> Option<Tensor> {
        if depth > 32 || budget.get() == 0 {
            return None;
        }
        budget.set(budget.get() - 1);
        let n = &self.nodes[o.node];
        let input = |i: usize| self.const_value_depth(n.inputs[i], depth + 1, budget);
        let out_type = || match n.attrs.get("out_type") {
            Some(AttrValue::Type(t)) => *t,
            _ => DType::Int32,
        };
        match n.op.as_str() {
            "Const" => match n.attrs.get("value") {
                Some(AttrValue::Tensor(t)) => Some(t.clone()),
                _ => None,
            },
            "Identity" | "StopGradient" | "Snapshot" => input(0),
            "Shape" => {
                let s = self.output(n.inputs[0]).shape.to_shape()?;
                elementwise::cast(&Tensor::vector(s.to_i64()), out_type()).ok()
            }
            "Size" => {
                let k = self.output(n.inputs[0]).shape.num_elements()?;
                elementwise::cast(&Tensor::scalar(k as i64), out_type()).ok()
            }
            "Rank" => {
                let r = self.output(n.inputs[0]).shape.rank()?;
                Some(Tensor::scalar(r as i32))
            }
            "Cast" => {
                let to = match n.attrs.get("DstT") {
                    Some(AttrValue::Type(t)) => *t,
                    _ => return None,
                };
                elementwise::cast(&input(0)?, to).ok()
            }
            "Pack" => {
                let vals: Option<Vec<Tensor>> = (0..n.inputs.len()).map(input).collect();
                let axis = match n.attrs.get("axis") {
                    Some(AttrValue::Int(a)) => *a,
                    _ => 0,
                };
                array::stack(&vals?, axis).ok()
            }
            "ConcatV2" => {
                let k = n.inputs.len() - 1;
                let vals: Option<Vec<Tensor>> = (0..k).map(input).collect();
                let axis = input(k)?.scalar_i64().ok()?;
                array::concat(&vals?, axis).ok()
            }
            // Small arithmetic on known values, as TF's shape refiner evaluates
            // constant subgraphs: sizes such as `max(x) + 1` (bincount,
            // confusion_matrix) or `maximum(0, max(lengths))` (sequence_mask).
            op => {
                let small = |t: Tensor| (t.num_elements() <= CONST_EVAL_LIMIT).then_some(t);
                if let Some(b) = const_binary_op(op) {
                    let (x, y) = (small(input(0)?)?, small(input(1)?)?);
                    return elementwise::binary(b, x, y).ok();
                }
                let r = const_reduce_op(op)?;
                let x = small(input(0)?)?;
                let axes = input(1)?.to_i64_vec().ok()?;
                let keep = matches!(n.attrs.get("keep_dims"), Some(AttrValue::Bool(true)));
                reduce::reduce(r, &x, Some(&axes), keep).ok()
            }
        }
    }

    /// The shape described by a 1-D shape tensor, as far as it is known at
    /// construction time (TensorFlow's `constant_value_as_shape`); `-1`
    /// entries are unknown dimensions.
    pub fn shape_value(&self, o: Output) -> PartialShape {
        if let Some(t) = self.const_value(o) {
            if let Ok(v) = t.to_i64_vec() {
                if t.rank() == 1 {
                    return PartialShape::from_i64(Some(&v));
                }
            }
        }
        let n = &self.nodes[o.node];
        match n.op.as_str() {
            "Shape" => return self.output(n.inputs[0]).shape.clone(),
            "Pack" => {
                let dims = n.inputs.iter().map(|&i| self.scalar_dim_value(i)).collect();
                return PartialShape::from_dims(dims);
            }
            "ConcatV2" => {
                let k = n.inputs.len() - 1;
                let mut dims = Vec::new();
                for &i in &n.inputs[..k] {
                    match self.shape_value(i).dims() {
                        Some(d) => dims.extend_from_slice(d),
                        None => return PartialShape::unknown(),
                    }
                }
                return PartialShape::from_dims(dims);
            }
            // `tf.shape(x)[a:b]`, as TF's constant_value_as_shape reads it.
            "StridedSlice" => {
                if let Some(dims) = self.slice_of_shape(n) {
                    return PartialShape::from_dims(dims);
                }
            }
            _ => {}
        }
        match self.output(o).shape.dims() {
            Some([Some(k)]) => PartialShape::unknown_dims(*k),
            _ => PartialShape::unknown(),
        }
    }

    /// The dims a one-axis, unit-stride `StridedSlice` node takes from a `Shape`
    /// node's output (`tf.shape(x)[a:b]`) of known rank.
    fn slice_of_shape(&self, n: &Node) -> Option<Vec<Option<usize>>> {
        let src = &self.nodes[n.inputs[0].node];
        if src.op != "Shape" {
            return None;
        }
        let shape = &self.output(src.inputs[0]).shape;
        let dims = shape.dims()?;
        let (b, e, s) = (
            self.const_value(n.inputs[1])?.to_i64_vec().ok()?,
            self.const_value(n.inputs[2])?.to_i64_vec().ok()?,
            self.const_value(n.inputs[3])?.to_i64_vec().ok()?,
        );
        let mask = |k: &str| matches!(n.attrs.get(k), Some(AttrValue::Int(m)) if m & 1 == 1);
        let other = ["ellipsis_mask", "new_axis_mask", "shrink_axis_mask"]
            .iter()
            .any(|k| matches!(n.attrs.get(*k), Some(AttrValue::Int(m)) if *m != 0));
        if b.len() != 1 || e.len() != 1 || s != [1] || other {
            return None;
        }
        let r = dims.len() as i64;
        let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
        let lo = if mask("begin_mask") { 0 } else { clamp(b[0]) };
        let hi = if mask("end_mask") {
            r as usize
        } else {
            clamp(e[0])
        };
        Some(dims[lo..hi.max(lo)].to_vec())
    }

    /// A scalar used as a dimension: its value when constant, or the matching
    /// static dimension for `tf.shape(x)[i]`.
    fn scalar_dim_value(&self, o: Output) -> Option<usize> {
        if let Some(t) = self.const_value(o) {
            return t.scalar_i64().ok().and_then(|v| usize::try_from(v).ok());
        }
        let n = &self.nodes[o.node];
        if n.op == "StridedSlice"
            && matches!(n.attrs.get("shrink_axis_mask"), Some(AttrValue::Int(1)))
        {
            let src = &self.nodes[n.inputs[0].node];
            if src.op == "Shape" {
                let b = self.const_value(n.inputs[1])?.to_i64_vec().ok()?;
                let shape = &self.output(src.inputs[0]).shape;
                let rank = shape.rank()? as i64;
                let i = if b[0] < 0 { b[0] + rank } else { b[0] };
                return shape.dim(usize::try_from(i).ok()?);
            }
        }
        None
    }
}

/// The most elements an input of a constant-folded arithmetic op may have.
const CONST_EVAL_LIMIT: usize = 1 << 12;

/// The most nodes one `Graph::const_value` query visits.
const CONST_EVAL_NODES: usize = 256;

/// The binary ops `Graph::const_value` evaluates.
fn const_binary_op(op: &str) -> Option<BinaryOp> {
    Some(match op {
        "Add" | "AddV2" => BinaryOp::Add,
        "Sub" => BinaryOp::Sub,
        "Mul" => BinaryOp::Mul,
        "Maximum" => BinaryOp::Maximum,
        "Minimum" => BinaryOp::Minimum,
        "FloorDiv" => BinaryOp::FloorDiv,
        "Greater" => BinaryOp::Greater,
        "GreaterEqual" => BinaryOp::GreaterEqual,
        "Less" => BinaryOp::Less,
        "LessEqual" => BinaryOp::LessEqual,
        _ => return None,
    })
}

/// The reductions `Graph::const_value` evaluates.
fn const_reduce_op(op: &str) -> Option<ReduceOp> {
    Some(match op {
        "Max" => ReduceOp::Max,
        "Min" => ReduceOp::Min,
        "Sum" => ReduceOp::Sum,
        "Prod" => ReduceOp::Prod,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_follow_tensorflow() {
        let mut g = Graph::new();
        assert_eq!(g.unique_name("Adam", true), "Adam");
        assert_eq!(g.unique_name("Adam", true), "Adam_1");
        assert_eq!(g.unique_name("adam", true), "adam_2");
        assert_eq!(g.unique_name("Adam_1", true), "Adam_1_1");
        assert_eq!(g.unique_name("x", false), "x");
        assert_eq!(g.unique_name("x", true), "x");
        assert_eq!(g.unique_name("x", false), "x_1");
    }

    #[test]
    fn nodes_and_constant_shapes() {
        let mut g = Graph::new();
        let c = g
            .add_node(
                NodeSpec::new("Const", "c")
                    .attr(
                        "value",
                        AttrValue::Tensor(Tensor::from_vec([2, 3], vec![0f32; 6]).unwrap()),
                    )
                    .attr("dtype", AttrValue::Type(DType::Float32)),
            )
            .unwrap();
        assert_eq!(g.output(Output::new(c, 0)).shape.to_string(), "(2, 3)");
        let s = g
            .add_node(NodeSpec::new("Shape", "s").input(Output::new(c, 0)))
            .unwrap();
        assert_eq!(g.shape_value(Output::new(s, 0)).to_string(), "(2, 3)");
        let dup = g.add_node(NodeSpec::new("Shape", "s").input(Output::new(c, 0)));
        assert!(matches!(dup, Err(Error::Value(_))));
        let unknown = g.add_node(NodeSpec::new("NoSuchOp", "z"));
        assert!(unknown.unwrap_err().to_string().contains("not registered"));
        assert_eq!(g.output_by_name("s:0"), Some(Output::new(s, 0)));
        assert_eq!(g.output_by_name("s:1"), None);
    }

    #[test]
    fn small_arithmetic_on_constants_is_folded_within_a_budget() {
        let mut g = Graph::new();
        let konst = |g: &mut Graph, name: &str, t: Tensor| {
            let d = t.dtype();
            let spec = NodeSpec::new("Const", name)
                .attr("value", AttrValue::Tensor(t))
                .attr("dtype", AttrValue::Type(d));
            Output::new(g.add_node(spec).unwrap(), 0)
        };
        let x = konst(&mut g, "x", Tensor::vector(vec![3i32, 7, 1]));
        let axes = konst(&mut g, "axes", Tensor::vector(vec![0i32]));
        let one = konst(&mut g, "one", Tensor::scalar(1i32));
        let max = g
            .add_node(NodeSpec::new("Max", "max").input(x).input(axes))
            .unwrap();
        let size = g
            .add_node(
                NodeSpec::new("AddV2", "size")
                    .input(Output::new(max, 0))
                    .input(one),
            )
            .unwrap();
        let v = g.const_value(Output::new(size, 0)).unwrap();
        assert_eq!(v.scalar_i64().unwrap(), 8);
        // A chain that shares each sum twice would take 2^40 visits without the budget.
        let mut y = one;
        for i in 0..40 {
            let n = NodeSpec::new("AddV2", &format!("y{i}")).input(y).input(y);
            y = Output::new(g.add_node(n).unwrap(), 0);
        }
        assert!(g.const_value(y).is_none());
    }
}
