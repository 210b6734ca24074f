//! Op definitions: for each op type, its input names, whether it has side
//! effects, which inputs are variable references, and a shape/type
//! inference function run when a node is added.
//!
//! The registry is open: crates above this one (optimizers, checkpoints,
//! summaries) register their own ops with [`register_op`].

mod array;
mod bitwise;
mod bucketize;
mod candidate;
mod complex;
mod control_flow;
mod conv;
mod fake_quant;
mod fft;
mod grad;
mod linalg;
mod list;
mod logging;
mod lstm;
mod math;
mod math_special;
mod nn;
mod nn_layers;
mod nn_more;
mod quantize;
mod quantized_nn;
mod ragged;
mod random;
mod sdca;
mod segment;
mod sets;
mod sobol;
mod sparse;
mod state;
mod stateless_random;
mod strings;
mod sync;

use crate::attr::{Attrs, AttrsExt};
use crate::graph::{Graph, Output, OutputInfo};
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result, Tensor};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Infers the outputs of a node from its inputs and attributes.
pub type InferFn = fn(&InferContext) -> Result<Vec<OutputInfo>>;

/// The static description of an op type.
#[derive(Clone, Copy)]
pub struct OpDef {
    pub name: &'static str,
    /// Input argument names (for messages); a trailing `*` marks a list.
    pub inputs: &'static [&'static str],
    pub infer: InferFn,
    /// Ops with side effects or fresh results on every run (variables,
    /// assignments, random numbers, asserts) are never folded or merged.
    pub stateful: bool,
    /// Inputs that must be variable references (updated in place).
    pub ref_inputs: &'static [usize],
    /// For ops with a variable number of references: how many leading
    /// inputs are references, given the node's attributes.
    pub ref_prefix: Option<fn(&Attrs) -> usize>,
    /// For ops whose reference inputs are listed by an attribute (control
    /// flow passing variables into its functions): whether input `i` is one.
    pub ref_input: Option<fn(&Attrs, usize) -> bool>,
}

impl OpDef {
    pub const fn new(name: &'static str, inputs: &'static [&'static str], infer: InferFn) -> OpDef {
        OpDef {
            name,
            inputs,
            infer,
            stateful: false,
            ref_inputs: &[],
            ref_prefix: None,
            ref_input: None,
        }
    }

    pub const fn stateful(mut self) -> OpDef {
        self.stateful = true;
        self
    }

    pub const fn refs(mut self, r: &'static [usize]) -> OpDef {
        self.ref_inputs = r;
        self.stateful = true;
        self
    }

    /// The first `f(attrs)` inputs are variable references.
    pub const fn ref_prefix(mut self, f: fn(&Attrs) -> usize) -> OpDef {
        self.ref_prefix = Some(f);
        self.stateful = true;
        self
    }

    /// Input `i` takes a reference when `f(attrs, i)` says so.
    pub const fn ref_input(mut self, f: fn(&Attrs, usize) -> bool) -> OpDef {
        self.ref_input = Some(f);
        self.stateful = true;
        self
    }

    /// True if input `i` of a node with `attrs` takes a variable reference.
    pub fn takes_ref(&self, i: usize, attrs: &Attrs) -> bool {
        self.ref_inputs.contains(&i)
            || self.ref_prefix.is_some_and(|f| i < f(attrs))
            || self.ref_input.is_some_and(|f| f(attrs, i))
    }
}

static REGISTRY: LazyLock<RwLock<HashMap<&'static str, OpDef>>> = LazyLock::new(|| {
    let mut m = HashMap::new();
    for list in [
        array::ops(),
        bitwise::ops(),
        bucketize::ops(),
        candidate::ops(),
        complex::ops(),
        control_flow::ops(),
        conv::ops(),
        fake_quant::ops(),
        fft::ops(),
        grad::ops(),
        linalg::ops(),
        list::ops(),
        logging::ops(),
        lstm::ops(),
        math::ops(),
        math_special::ops(),
        nn::ops(),
        nn_layers::ops(),
        nn_more::ops(),
        quantize::ops(),
        quantized_nn::ops(),
        ragged::ops(),
        random::ops(),
        sdca::ops(),
        segment::ops(),
        sobol::ops(),
        sets::ops(),
        sparse::ops(),
        state::ops(),
        stateless_random::ops(),
        strings::ops(),
        sync::ops(),
    ] {
        for d in list {
            m.insert(d.name, d);
        }
    }
    RwLock::new(m)
});

/// Adds (or replaces) an op definition.
pub fn register_op(def: OpDef) {
    REGISTRY.write().insert(def.name, def);
}

/// The definition of an op type.
pub fn lookup(name: &str) -> Option<OpDef> {
    REGISTRY.read().get(name).copied()
}

/// Every registered op type name.
pub fn registered_ops() -> Vec<&'static str> {
    let mut v: Vec<_> = REGISTRY.read().keys().copied().collect();
    v.sort_unstable();
    v
}

pub const FLOATS: &[DType] = &[
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
];
pub const INTS: &[DType] = &[
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::UInt8,
    DType::UInt16,
];
pub const INDEX: &[DType] = &[DType::Int32, DType::Int64];
pub const NUMERIC: &[DType] = &[
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::UInt8,
    DType::UInt16,
];
/// [`NUMERIC`] and uint32/uint64: the ops TensorFlow registers CPU kernels
/// of those two types for (arithmetic, comparisons, reductions) take these.
pub const NUMERIC_WIDE: &[DType] = &[
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::UInt8,
    DType::UInt16,
    DType::UInt32,
    DType::UInt64,
];
pub const SIGNED_NUMERIC: &[DType] = &[
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
];

/// What an inference function sees.
pub struct InferContext<'a> {
    pub graph: &'a Graph,
    pub def: &'a OpDef,
    pub name: &'a str,
    pub inputs: &'a [Output],
    pub attrs: &'a Attrs,
}

fn dims_text(s: &PartialShape) -> String {
    match s.dims() {
        None => "?".to_string(),
        Some(d) => format!(
            "[{}]",
            d.iter()
                .map(|x| x.map_or("?".to_string(), |v| v.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

impl InferContext<'_> {
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    pub fn info(&self, i: usize) -> &OutputInfo {
        self.graph.output(self.inputs[i])
    }

    pub fn dtype(&self, i: usize) -> DType {
        self.info(i).dtype
    }

    pub fn shape(&self, i: usize) -> &PartialShape {
        &self.info(i).shape
    }

    /// The input's value if known at construction time.
    pub fn const_value(&self, i: usize) -> Option<Tensor> {
        self.graph.const_value(self.inputs[i])
    }

    /// A constant integer vector input (axes, perm, multiples, ...).
    pub fn const_ints(&self, i: usize) -> Option<Vec<i64>> {
        self.const_value(i).and_then(|t| t.to_i64_vec().ok())
    }

    /// A shape given as a 1-D tensor input, as far as it is known.
    pub fn shape_value(&self, i: usize) -> PartialShape {
        self.graph.shape_value(self.inputs[i])
    }

    pub fn attrs(&self) -> &Attrs {
        self.attrs
    }

    fn arg_name(&self, i: usize) -> String {
        let names = self.def.inputs;
        match names.get(i) {
            Some(n) => n.trim_end_matches('*').to_string(),
            None => names
                .last()
                .filter(|n| n.ends_with('*'))
                .map(|n| n.trim_end_matches('*').to_string())
                .unwrap_or_else(|| format!("input {i}")),
        }
    }

    /// A `ValueError` in TensorFlow's style, naming the node and the input shapes.
    pub fn shape_error(&self, msg: impl std::fmt::Display) -> Error {
        let shapes: Vec<String> = (0..self.num_inputs())
            .map(|i| dims_text(self.shape(i)))
            .collect();
        Error::value(format!(
            "{msg} for '{}' (op: '{}') with input shapes: {}.",
            self.name,
            self.def.name,
            shapes.join(", ")
        ))
    }

    /// Requires input `i`'s dtype to be one of `allowed` (TypeError otherwise).
    pub fn expect_dtype(&self, i: usize, allowed: &[DType]) -> Result<DType> {
        let d = self.dtype(i);
        if allowed.contains(&d) {
            return Ok(d);
        }
        Err(Error::type_error(format!(
            "Value passed to parameter '{}' has DataType {d} not in list of allowed values: {}",
            self.arg_name(i),
            allowed
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    /// Requires inputs `i` and `j` to share a dtype (TypeError otherwise).
    pub fn expect_same(&self, i: usize, j: usize) -> Result<DType> {
        let (a, b) = (self.dtype(i), self.dtype(j));
        if a != b {
            return Err(Error::type_error(format!(
                "Input '{}' of '{}' Op has type {b} that does not match type {a} of argument '{}'.",
                self.arg_name(j),
                self.def.name,
                self.arg_name(i)
            )));
        }
        Ok(a)
    }

    /// Requires input `i` to have rank `r` when its rank is known.
    pub fn expect_rank(&self, i: usize, r: usize) -> Result<()> {
        match self.shape(i).rank() {
            Some(k) if k != r => {
                Err(self.shape_error(format!("Shape must be rank {r} but is rank {k}")))
            }
            _ => Ok(()),
        }
    }

    pub fn int(&self, name: &str) -> Result<i64> {
        self.attrs.int(name)
    }

    pub fn int_or(&self, name: &str, d: i64) -> Result<i64> {
        self.attrs.int_or(name, d)
    }

    pub fn bool_or(&self, name: &str, d: bool) -> Result<bool> {
        self.attrs.bool_or(name, d)
    }

    pub fn type_attr(&self, name: &str) -> Result<DType> {
        self.attrs.dtype(name)
    }

    pub fn type_or(&self, name: &str, d: DType) -> Result<DType> {
        self.attrs.dtype_or(name, d)
    }
}

/// One non-reference output.
pub fn single(dtype: DType, shape: PartialShape) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(dtype, shape)])
}

/// Normalises an axis against a known rank, as a construction-time error.
pub fn axis_in(ctx: &InferContext, axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(ctx.shape_error(format!(
            "axis {axis} is out of bounds for a tensor of rank {rank}; expected a value in [{}, {})",
            -r, r
        )));
    }
    Ok(if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    })
}
