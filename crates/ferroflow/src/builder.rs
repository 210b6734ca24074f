//! A graph-building API with name scopes for Rust programs: an owner of a shared graph over
//! `ferroflow_graph::Builder`, the one node builder (the gradient code uses it too).
//!
//! The builder also keeps what TensorFlow keeps in graph collections and a Rust program needs:
//! the variables it made (global and trainable, for [`GraphBuilder::global_variables_initializer`],
//! optimizers and [`crate::saver::Saver`]) and the summaries (for [`crate::summary::merge_all`]).

use ferroflow_graph::{AttrValue, Builder, Graph, NodeId, NodeSpec, Output, PartialShape};
use ferroflow_tensor::{DType, Error, Result, Tensor};
use parking_lot::RwLock;
use std::sync::Arc;

/// Builds nodes into a shared graph, prefixing names with the current
/// name scope and making them unique the way TensorFlow does.
pub struct GraphBuilder {
    pub(crate) graph: Arc<RwLock<Graph>>,
    /// The current name scope (no trailing slash; empty at the top).
    scope: String,
    /// Every variable made or registered here, in creation order, and whether it is trainable
    /// (TensorFlow's `GLOBAL_VARIABLES` and `TRAINABLE_VARIABLES` collections).
    variables: Vec<(VariableHandle, bool)>,
    /// Summary ops made here (TensorFlow's `SUMMARIES` collection).
    pub(crate) summaries: Vec<Output>,
}

/// The nodes a variable is made of.
#[derive(Copy, Clone, Debug)]
pub struct VariableHandle {
    /// The variable itself (a reference output).
    pub var: Output,
    /// Assigns the initial value.
    pub initializer: NodeId,
    /// Reads the current value.
    pub value: Output,
}

impl Default for GraphBuilder {
    fn default() -> Self {
        GraphBuilder::new()
    }
}

impl GraphBuilder {
    /// A builder over a new, empty graph.
    pub fn new() -> GraphBuilder {
        GraphBuilder::on(Arc::new(RwLock::new(Graph::new())))
    }

    /// Builds into an existing graph.
    pub fn on(graph: Arc<RwLock<Graph>>) -> GraphBuilder {
        crate::register_all();
        GraphBuilder {
            graph,
            scope: String::new(),
            variables: Vec::new(),
            summaries: Vec::new(),
        }
    }

    /// The current name scope (no trailing slash; empty at the top).
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// Runs `f` at the top of the graph (no name scope), as TensorFlow's `name_scope("")`.
    pub fn at_root<R>(&mut self, f: impl FnOnce(&mut GraphBuilder) -> R) -> R {
        let saved = std::mem::take(&mut self.scope);
        let r = f(self);
        self.scope = saved;
        r
    }

    /// The graph being built (share it with a session).
    pub fn graph(&self) -> Arc<RwLock<Graph>> {
        self.graph.clone()
    }

    /// Runs `f` with a [`Builder`] at the current scope, holding the graph's write lock.
    pub fn build<R>(&mut self, f: impl FnOnce(&mut Builder<'_>) -> Result<R>) -> Result<R> {
        let mut graph = self.graph.write();
        let mut builder = Builder::new(&mut graph, &self.scope);
        f(&mut builder)
    }

    /// Runs `f` inside name scope `name` (made unique like TensorFlow's).
    pub fn with_name_scope<R>(&mut self, name: &str, f: impl FnOnce(&mut GraphBuilder) -> R) -> R {
        let full = {
            let mut graph = self.graph.write();
            let builder = Builder::new(&mut graph, &self.scope);
            let joined = builder.join(name);
            graph.unique_name(&joined, true)
        };
        let saved = std::mem::replace(&mut self.scope, full);
        let r = f(self);
        self.scope = saved;
        r
    }

    /// Adds a node named exactly `name` (no scope, not made unique): what TensorFlow does for a
    /// name ending in `/`, e.g. the op that takes its name scope's name. A taken name is a
    /// `ValueError`.
    pub fn add_exact(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[Output],
        attrs: Vec<(&str, AttrValue)>,
        control: &[NodeId],
    ) -> Result<NodeId> {
        let mut spec = NodeSpec::new(op, name).inputs(inputs.iter().copied());
        for (k, v) in attrs {
            spec = spec.attr(k, v);
        }
        spec.control_inputs = control.to_vec();
        self.graph.write().add_node(spec)
    }

    /// Adds a node of type `op` named `name` (in the current scope).
    pub fn add(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[Output],
        attrs: Vec<(&str, AttrValue)>,
    ) -> Result<NodeId> {
        self.build(|b| b.node_named(op, name, inputs, attrs))
    }

    /// A `Const` holding `value`.
    pub fn constant(&mut self, value: Tensor, name: &str) -> Result<Output> {
        let dtype = value.dtype();
        let attrs = vec![
            ("value", AttrValue::Tensor(value)),
            ("dtype", AttrValue::Type(dtype)),
        ];
        Ok(Output::new(self.add("Const", name, &[], attrs)?, 0))
    }

    /// A `Placeholder` of `dtype` and `shape`, fed at run time.
    pub fn placeholder(&mut self, dtype: DType, shape: PartialShape, name: &str) -> Result<Output> {
        let attrs = vec![
            ("dtype", AttrValue::Type(dtype)),
            ("shape", AttrValue::Shape(shape)),
        ];
        Ok(Output::new(self.add("Placeholder", name, &[], attrs)?, 0))
    }

    /// A trainable variable initialised from `initial` (TensorFlow's `VariableV2` +
    /// `Assign` + `read` identity, named like TensorFlow's).
    pub fn variable(&mut self, name: &str, initial: Tensor) -> Result<VariableHandle> {
        self.variable_with(name, initial, true)
    }

    /// A variable initialised from `initial`, trainable or not (`tf.Variable(..., trainable=)`):
    /// every variable is in [`global_variables`](Self::global_variables), trainable ones also in
    /// [`trainable_variables`](Self::trainable_variables).
    pub fn variable_with(
        &mut self,
        name: &str,
        initial: Tensor,
        trainable: bool,
    ) -> Result<VariableHandle> {
        let dtype = initial.dtype();
        let shape = PartialShape::from(initial.shape());
        self.variable_from(name, dtype, shape, trainable, |g| {
            g.constant(initial, "initial_value")
        })
    }

    /// A variable of `dtype` and `shape` whose initial value `init` builds (called inside the
    /// variable's own name scope, e.g. `w/Adam/Initializer/zeros`).
    pub fn variable_from(
        &mut self,
        name: &str,
        dtype: DType,
        shape: PartialShape,
        trainable: bool,
        init: impl FnOnce(&mut GraphBuilder) -> Result<Output>,
    ) -> Result<VariableHandle> {
        let attrs = vec![
            ("dtype", AttrValue::Type(dtype)),
            ("shape", AttrValue::Shape(shape)),
        ];
        let var_id = self.add("VariableV2", name, &[], attrs)?;
        let var_name = self.graph.read().node(var_id).name.clone();
        let var = Output::new(var_id, 0);
        // The initializer and the read live under the variable's own name, as TensorFlow's do.
        let saved = std::mem::replace(&mut self.scope, var_name);
        let result = (|| {
            let initial = init(self)?;
            let assign = self.add("Assign", "Assign", &[var, initial], vec![])?;
            let read = self.add("Identity", "read", &[var], vec![])?;
            Ok(VariableHandle {
                var,
                initializer: assign,
                value: Output::new(read, 0),
            })
        })();
        self.scope = saved;
        let handle = result?;
        self.variables.push((handle, trainable));
        Ok(handle)
    }

    /// Records a variable made elsewhere (e.g. imported from a MetaGraphDef) so that
    /// [`global_variables`](Self::global_variables), optimizers and savers see it. A variable
    /// already recorded is left as it is.
    pub fn register_variable(&mut self, handle: VariableHandle, trainable: bool) {
        if !self.variables.iter().any(|(h, _)| h.var == handle.var) {
            self.variables.push((handle, trainable));
        }
    }

    /// Every variable made or registered here, in creation order (`tf.global_variables()`).
    pub fn global_variables(&self) -> Vec<VariableHandle> {
        self.variables.iter().map(|(h, _)| *h).collect()
    }

    /// The trainable ones among them (`tf.trainable_variables()`), the default of
    /// [`Optimizer::minimize`](crate::train::Optimizer::minimize).
    pub fn trainable_variables(&self) -> Vec<VariableHandle> {
        self.variables
            .iter()
            .filter(|(_, t)| *t)
            .map(|(h, _)| *h)
            .collect()
    }

    /// One op that runs every variable's initializer (`tf.global_variables_initializer()`,
    /// a `NoOp` named `init`).
    pub fn global_variables_initializer(&mut self) -> Result<NodeId> {
        let inits: Vec<NodeId> = self.variables.iter().map(|(h, _)| h.initializer).collect();
        self.group(&inits, "init")
    }

    /// Like [`GraphBuilder::add`], with control inputs.
    pub fn add_with_control(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[Output],
        control: &[NodeId],
    ) -> Result<NodeId> {
        self.build(|b| {
            b.control = control.to_vec();
            b.node_named(op, name, inputs, vec![])
        })
    }

    /// A one-input op (`Relu`, `Exp`, `Floor`, ...).
    pub fn unary(&mut self, op: &str, x: Output) -> Result<Output> {
        self.build(|b| b.unary(op, x))
    }

    /// A two-input op with broadcasting (`Pow`, `Maximum`, ...).
    pub fn binary(&mut self, op: &str, a: Output, b: Output) -> Result<Output> {
        self.build(|bld| bld.binary(op, a, b))
    }

    /// Converts to `dtype` (no op when it already is).
    pub fn cast(&mut self, x: Output, dtype: DType) -> Result<Output> {
        self.build(|b| b.cast(x, dtype))
    }

    /// Mean over all elements.
    pub fn reduce_mean(&mut self, x: Output) -> Result<Output> {
        let rank = self.graph.read().output(x).shape.rank().unwrap_or(0);
        let axes: Vec<i32> = (0..rank as i32).collect();
        let a = self.constant(Tensor::vector(axes), "reduction_indices")?;
        self.build(|b| b.op("Mean", &[x, a], vec![("keep_dims", AttrValue::Bool(false))]))
    }

    /// `sparse_softmax_cross_entropy_with_logits` per example.
    pub fn sparse_softmax_cross_entropy(
        &mut self,
        logits: Output,
        labels: Output,
    ) -> Result<Output> {
        let id = self.add(
            "SparseSoftmaxCrossEntropyWithLogits",
            "xent",
            &[logits, labels],
            vec![],
        )?;
        Ok(Output::new(id, 0))
    }

    /// `a + b` (`AddV2`, broadcasting).
    pub fn add_v2(&mut self, a: Output, b: Output) -> Result<Output> {
        self.build(|bld| bld.add(a, b))
    }

    /// `a - b` (broadcasting).
    pub fn sub(&mut self, a: Output, b: Output) -> Result<Output> {
        self.build(|bld| bld.sub(a, b))
    }

    /// `a * b` (broadcasting).
    pub fn mul(&mut self, a: Output, b: Output) -> Result<Output> {
        self.build(|bld| bld.mul(a, b))
    }

    /// `a @ b`, either operand transposed first.
    pub fn matmul(
        &mut self,
        a: Output,
        b: Output,
        transpose_a: bool,
        transpose_b: bool,
    ) -> Result<Output> {
        self.build(|bld| bld.matmul(a, b, transpose_a, transpose_b))
    }

    /// `max(x, 0)`.
    pub fn relu(&mut self, x: Output) -> Result<Output> {
        self.unary("Relu", x)
    }

    /// Sum over `axes` (all axes when empty... pass them explicitly).
    pub fn reduce_sum(&mut self, x: Output, axes: &[i32], keep_dims: bool) -> Result<Output> {
        let a = self.constant(Tensor::vector(axes.to_vec()), "reduction_indices")?;
        self.build(|b| b.sum(x, a, keep_dims))
    }

    /// `tf.assign(var, value)`: sets a variable; returns its new value.
    pub fn assign(&mut self, var: Output, value: Output) -> Result<Output> {
        self.build(|b| b.op("Assign", &[var, value], vec![]))
    }

    /// `tf.assign_add(var, delta)`: adds to a variable; returns its new value.
    pub fn assign_add(&mut self, var: Output, delta: Output) -> Result<Output> {
        self.build(|b| b.op("AssignAdd", &[var, delta], vec![]))
    }

    /// A node that runs all of `deps` (TensorFlow's `tf.group`).
    pub fn group(&mut self, deps: &[NodeId], name: &str) -> Result<NodeId> {
        self.add_with_control("NoOp", name, &[], deps)
    }

    /// The static type of an output.
    pub fn dtype(&self, o: Output) -> DType {
        self.graph.read().output(o).dtype
    }

    /// Looks up an output by `name:index`.
    pub fn output_by_name(&self, name: &str) -> Result<Output> {
        self.graph
            .read()
            .output_by_name(name)
            .ok_or_else(|| Error::not_found(format!("no tensor named {name}")))
    }
}
