//! The kernel interface and registry: how an op type computes.
//!
//! A kernel is built once per node when a run plan is compiled (so attribute
//! parsing and resource lookups happen once), then called on every run.

use crate::resources::{SessionState, Variable};
use ferroflow_graph::{Graph, Node, OpDef};
use ferroflow_tensor::{Error, Result, Tensor};
use parking_lot::RwLock;
use smallvec::SmallVec;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// A shared handle to a resource (a queue, a reader, an iterator) or to an
/// opaque value (a dataset): what flows along a `resource` or `variant`
/// edge. Kernels downcast it to the type they expect
/// ([`OpContext::input_resource`]).
pub type Resource = Arc<dyn Any + Send + Sync>;

/// A value flowing along an edge: a tensor, or a reference to a variable.
#[derive(Clone)]
pub enum Value {
    Tensor(Tensor),
    Ref(Arc<Variable>),
    /// A list of tensors (a `TensorArray`), shared until a kernel changes it.
    List(Arc<TensorList>),
    /// What a while loop kept of its iterations for its gradient; passed
    /// between kernels, never fetched.
    History(Arc<LoopHistory>),
    /// A resource handle or an opaque value (see [`Resource`]).
    Resource(Resource),
    /// An input already moved out by [`OpContext::take_input`].
    Taken,
}

impl Value {
    /// The value with a variable reference replaced by the variable's value.
    pub fn deref_variable(self) -> Result<Value> {
        match self {
            Value::Ref(v) => Ok(Value::Tensor(v.read()?)),
            other => Ok(other),
        }
    }

    /// The tensor, reading the variable for a reference.
    pub fn into_tensor(self) -> Result<Tensor> {
        match self {
            Value::Tensor(t) => Ok(t),
            Value::Ref(v) => v.read(),
            Value::List(_) => Err(Error::invalid_argument(
                "a TensorArray's flow is a list of tensors and cannot be read as a tensor",
            )),
            Value::History(_) => Err(Error::internal("a loop's history is not a tensor")),
            Value::Resource(_) => Err(Error::invalid_argument(
                "a resource handle (a queue, reader, iterator or dataset) cannot be read as a tensor",
            )),
            Value::Taken => Err(Error::internal("value was already consumed")),
        }
    }
}

/// A list of tensors, some possibly not written yet.
#[derive(Clone, Debug, Default)]
pub struct TensorList {
    pub items: Vec<Option<Tensor>>,
    /// The shape of every element, once known (from a write or a declaration).
    pub element_shape: Option<ferroflow_tensor::Shape>,
    /// For a list made with `clear_after_read`: which elements were read.
    /// Every version of the list (a write makes a new one) shares it, as
    /// every flow of a TF1 TensorArray reaches the one resource.
    pub reads: Option<Arc<ListReads>>,
}

/// The elements of a TF1 TensorArray's list already read: writing one
/// again fails, and so does a second read when the array clears after
/// reads (TF1's TensorArray frees an element on read).
#[derive(Debug, Default)]
pub struct ListReads {
    /// The array's name in error messages (the node that made the list).
    pub name: String,
    /// Whether a second read of an element fails (`clear_after_read`).
    pub clears: bool,
    pub read: parking_lot::Mutex<Vec<bool>>,
}

impl TensorList {
    /// A list holding `items`, all written.
    pub fn from_tensors(items: Vec<Tensor>) -> TensorList {
        TensorList {
            items: items.into_iter().map(Some).collect(),
            element_shape: None,
            reads: None,
        }
    }
}

/// What a while loop kept of each iteration for its gradient.
#[derive(Debug, Default)]
pub struct LoopHistory {
    /// Per loop variable, its value at the start of each iteration (empty
    /// for the variables the gradient does not read).
    pub columns: Vec<Vec<Value>>,
    /// Per iteration, the forward values the gradient reads (see
    /// `saved_by`); empty when the loop ran its plain body.
    pub saved: Vec<Vec<Value>>,
    /// The body function that produced `saved`.
    pub saved_by: String,
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Tensor(t) => write!(f, "Tensor({})", t.shape()),
            Value::Ref(v) => write!(f, "Ref({})", v.name()),
            Value::List(l) => write!(f, "List({})", l.items.len()),
            Value::History(h) => write!(f, "History({} saved)", h.saved.len()),
            Value::Resource(_) => write!(f, "Resource"),
            Value::Taken => write!(f, "Taken"),
        }
    }
}

/// One input of a running kernel: a value the step owns, or one bound into
/// the plan when it was compiled (a constant's tensor, a variable
/// reference), lent for the call. Lending spares an `Arc` clone and drop per
/// input, which an update over hundreds of variables pays for each of them.
pub(crate) enum Input<'a> {
    Owned(Value),
    Lent(&'a Value),
}

impl Input<'_> {
    fn value(&self) -> &Value {
        match self {
            Input::Owned(v) => v,
            Input::Lent(v) => v,
        }
    }
}

/// What a kernel sees while running.
pub struct OpContext<'a> {
    pub(crate) inputs: SmallVec<[Input<'a>; 4]>,
    pub(crate) outputs: SmallVec<[Value; 2]>,
    /// The node being run.
    pub node: &'a str,
    /// The session's resources.
    pub session: &'a SessionState,
    /// Bit `i` set: output `i` is read by a later step or fetched (only
    /// computed for kernels that [ask](Kernel::wants_output_mask); all set
    /// otherwise).
    pub(crate) wanted: u64,
}

impl<'a> OpContext<'a> {
    /// A context with the given inputs (for running kernels directly).
    pub fn new(node: &'a str, session: &'a SessionState, inputs: Vec<Value>) -> OpContext<'a> {
        OpContext {
            inputs: inputs.into_iter().map(Input::Owned).collect(),
            outputs: SmallVec::new(),
            node,
            session,
            wanted: u64::MAX,
        }
    }

    /// Whether output `i` is read by anything in this run (always true
    /// past the 64th output).
    pub fn output_wanted(&self, i: usize) -> bool {
        i >= 64 || self.wanted & (1 << i) != 0
    }

    /// Moves input `i` out as a value (a variable reference stays one).
    pub fn take_value(&mut self, i: usize) -> Value {
        match std::mem::replace(&mut self.inputs[i], Input::Owned(Value::Taken)) {
            Input::Owned(v) => v,
            Input::Lent(v) => v.clone(),
        }
    }

    pub fn output_value(&mut self, v: Value) {
        self.outputs.push(v);
    }

    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Input `i` as a tensor.
    pub fn input(&self, i: usize) -> Result<&Tensor> {
        match self.inputs[i].value() {
            Value::Tensor(t) => Ok(t),
            Value::Ref(v) => Err(Error::internal(format!(
                "input {i} of {} is the variable {} itself, not its value",
                self.node,
                v.name()
            ))),
            Value::List(_) | Value::History(_) => Err(Error::invalid_argument(format!(
                "input {i} of {} is a list of tensors (a TensorArray's flow), not a tensor",
                self.node
            ))),
            Value::Resource(_) => Err(Error::invalid_argument(format!(
                "input {i} of {} is a resource handle, not a tensor",
                self.node
            ))),
            Value::Taken => Err(Error::internal("input already taken")),
        }
    }

    /// Input `i` as a list of tensors.
    pub fn input_list(&self, i: usize) -> Result<&Arc<TensorList>> {
        match self.inputs[i].value() {
            Value::List(l) => Ok(l),
            _ => Err(Error::internal(format!(
                "input {i} of {} is not a list of tensors",
                self.node
            ))),
        }
    }

    /// Input `i` as a resource of type `T` (a queue, a reader, a dataset...).
    pub fn input_resource<T: Any + Send + Sync>(&self, i: usize) -> Result<Arc<T>> {
        match self.inputs[i].value() {
            Value::Resource(r) => r.clone().downcast::<T>().map_err(|_| {
                Error::invalid_argument(format!(
                    "input {i} of {} is a handle to another kind of resource than {}",
                    self.node,
                    short_type_name::<T>()
                ))
            }),
            _ => Err(Error::invalid_argument(format!(
                "input {i} of {} is not a resource handle",
                self.node
            ))),
        }
    }

    /// Outputs a resource handle or opaque value.
    pub fn output_resource(&mut self, r: Resource) {
        self.outputs.push(Value::Resource(r));
    }

    /// Moves input `i` out, so a kernel may reuse its buffer (a lent input,
    /// which the plan keeps, comes out as a shared handle).
    pub fn take_input(&mut self, i: usize) -> Result<Tensor> {
        match std::mem::replace(&mut self.inputs[i], Input::Owned(Value::Taken)) {
            Input::Owned(Value::Tensor(t)) => Ok(t),
            Input::Lent(Value::Tensor(t)) => Ok(t.clone()),
            other => {
                self.inputs[i] = other;
                Err(Error::internal(format!(
                    "input {i} of {} is not a tensor",
                    self.node
                )))
            }
        }
    }

    /// Input `i` as a variable reference.
    pub fn input_ref(&self, i: usize) -> Result<&Arc<Variable>> {
        match self.inputs[i].value() {
            Value::Ref(v) => Ok(v),
            _ => Err(Error::internal(format!(
                "input {i} of {} is not a variable",
                self.node
            ))),
        }
    }

    pub fn output(&mut self, t: Tensor) {
        self.outputs.push(Value::Tensor(t));
    }

    pub fn output_ref(&mut self, v: Arc<Variable>) {
        self.outputs.push(Value::Ref(v));
    }

    pub(crate) fn take_outputs(&mut self) -> SmallVec<[Value; 2]> {
        std::mem::take(&mut self.outputs)
    }
}

/// Computes one node.
pub trait Kernel: Send + Sync {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()>;

    /// The one output this kernel gives on every run, if it never changes
    /// (a constant's tensor, a variable's reference). The executor then
    /// skips the call and copies the value (an `Arc` clone) straight into
    /// the output slot; with hundreds of variables in a step, the calls
    /// are a measurable part of the step.
    fn fixed_output(&self) -> Option<&Value> {
        None
    }

    /// Whether the kernel's one output is its one input, unchanged
    /// (`Identity` and its kin). The executor then moves the value along
    /// itself instead of calling the kernel.
    fn forwards_input(&self) -> bool {
        false
    }

    /// Whether the kernel wants to know which of its outputs the run reads
    /// ([`OpContext::output_wanted`]), to skip work for the others.
    fn wants_output_mask(&self) -> bool {
        false
    }

    /// Whether the kernel may wait for another run (a dequeue waiting for
    /// data, an enqueue waiting for room). A plan holding such a kernel
    /// runs on its caller's thread, never on a pool worker, so waiting
    /// runs cannot starve the runs they wait for (see
    /// [`crate::blocking`]).
    fn may_block(&self) -> bool {
        false
    }
}

/// The last path segment of a type's name (`FifoQueue`), for messages.
fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

/// A kernel whose single output is the same value on every run.
pub struct Fixed(pub Value);

impl Kernel for Fixed {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        ctx.outputs.push(self.0.clone());
        Ok(())
    }

    fn fixed_output(&self) -> Option<&Value> {
        Some(&self.0)
    }
}

/// A kernel whose output is its input (`Identity`, `StopGradient`, ...).
pub struct Forward;

impl Kernel for Forward {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let x = ctx.take_value(0).deref_variable()?;
        ctx.output_value(x);
        Ok(())
    }

    fn forwards_input(&self) -> bool {
        true
    }
}

impl<F: Fn(&mut OpContext<'_>) -> Result<()> + Send + Sync> Kernel for F {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        self(ctx)
    }
}

/// What a kernel factory gets: the node, its graph and the session.
pub struct KernelInit<'a> {
    pub node: &'a Node,
    pub graph: &'a Graph,
    pub session: &'a SessionState,
}

/// Builds the kernel of one node.
pub type KernelFactory = Arc<dyn Fn(&KernelInit<'_>) -> Result<Box<dyn Kernel>> + Send + Sync>;

static KERNELS: LazyLock<RwLock<HashMap<String, KernelFactory>>> = LazyLock::new(|| {
    let mut m = HashMap::new();
    crate::kernels::register_builtin(&mut |name: &str, f: KernelFactory| {
        m.insert(name.to_string(), f);
    });
    RwLock::new(m)
});

/// Registers (or replaces) the kernel of an op type.
pub fn register_kernel(op: &str, factory: KernelFactory) {
    KERNELS.write().insert(op.to_string(), factory);
}

/// Registers a set of ops: each definition in the graph's op registry and
/// each `(op type, factory)` in the kernel registry. Both registries replace
/// an entry of the same name, so registering the same set again changes
/// nothing; the crates that own ops outside the core call this from their
/// `register()`, which runs it once behind a `Once`.
pub fn register_ops<'a>(
    defs: impl IntoIterator<Item = OpDef>,
    kernels: impl IntoIterator<Item = (&'a str, KernelFactory)>,
) {
    for def in defs {
        ferroflow_graph::register_op(def);
    }
    for (op, factory) in kernels {
        register_kernel(op, factory);
    }
}

/// The kernel factory of an op type.
pub fn kernel_factory(op: &str) -> Option<KernelFactory> {
    KERNELS.read().get(op).cloned()
}

/// Wraps a closure as a factory.
pub fn factory<F>(f: F) -> KernelFactory
where
    F: Fn(&KernelInit<'_>) -> Result<Box<dyn Kernel>> + Send + Sync + 'static,
{
    Arc::new(f)
}
