//! A graph-building API with name scopes for Rust programs: an owner of a shared graph over
//! `ferroflow_graph::Builder`, the one node builder (the gradient code uses it too).

use ferroflow_graph::{AttrValue, Builder, Graph, NodeId, Output, PartialShape};
use ferroflow_tensor::{DType, Error, Result, Tensor};
use parking_lot::RwLock;
use std::sync::Arc;

/// Builds nodes into a shared graph, prefixing names with the current
/// name scope and making them unique the way TensorFlow does.
pub struct GraphBuilder {
    pub(crate) graph: Arc<RwLock<Graph>>,
    /// The current name scope (no trailing slash; empty at the top).
    scope: String,
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
    pub fn new() -> GraphBuilder {
        GraphBuilder::on(Arc::new(RwLock::new(Graph::new())))
    }

    /// Builds into an existing graph.
    pub fn on(graph: Arc<RwLock<Graph>>) -> GraphBuilder {
        crate::register_all();
        GraphBuilder {
            graph,
            scope: String::new(),
        }
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

    pub fn constant(&mut self, value: Tensor, name: &str) -> Result<Output> {
        let dtype = value.dtype();
        let attrs = vec![
            ("value", AttrValue::Tensor(value)),
            ("dtype", AttrValue::Type(dtype)),
        ];
        Ok(Output::new(self.add("Const", name, &[], attrs)?, 0))
    }

    pub fn placeholder(&mut self, dtype: DType, shape: PartialShape, name: &str) -> Result<Output> {
        let attrs = vec![
            ("dtype", AttrValue::Type(dtype)),
            ("shape", AttrValue::Shape(shape)),
        ];
        Ok(Output::new(self.add("Placeholder", name, &[], attrs)?, 0))
    }

    /// A variable initialised from `initial` (TensorFlow's `VariableV2` +
    /// `Assign` + `read` identity, named like TensorFlow's).
    pub fn variable(&mut self, name: &str, initial: Tensor) -> Result<VariableHandle> {
        let dtype = initial.dtype();
        let shape = PartialShape::from(initial.shape());
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
            let init = self.constant(initial, "initial_value")?;
            let assign = self.add("Assign", "Assign", &[var, init], vec![])?;
            let read = self.add("Identity", "read", &[var], vec![])?;
            Ok(VariableHandle {
                var,
                initializer: assign,
                value: Output::new(read, 0),
            })
        })();
        self.scope = saved;
        result
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

    pub fn add_v2(&mut self, a: Output, b: Output) -> Result<Output> {
        self.build(|bld| bld.add(a, b))
    }

    pub fn sub(&mut self, a: Output, b: Output) -> Result<Output> {
        self.build(|bld| bld.sub(a, b))
    }

    pub fn mul(&mut self, a: Output, b: Output) -> Result<Output> {
        self.build(|bld| bld.mul(a, b))
    }

    pub fn matmul(
        &mut self,
        a: Output,
        b: Output,
        transpose_a: bool,
        transpose_b: bool,
    ) -> Result<Output> {
        self.build(|bld| bld.matmul(a, b, transpose_a, transpose_b))
    }

    pub fn relu(&mut self, x: Output) -> Result<Output> {
        self.unary("Relu", x)
    }

    /// Sum over `axes` (all axes when empty... pass them explicitly).
    pub fn reduce_sum(&mut self, x: Output, axes: &[i32], keep_dims: bool) -> Result<Output> {
        let a = self.constant(Tensor::vector(axes.to_vec()), "reduction_indices")?;
        self.build(|b| b.sum(x, a, keep_dims))
    }

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
