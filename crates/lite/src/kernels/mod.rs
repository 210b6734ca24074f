//! Operator kernels. Each operator becomes a [`Kernel`]: built once from the
//! model (weights repacked, parameters checked), prepared whenever input
//! shapes change (output shapes computed, quantized multipliers derived),
//! then run on the allocated tensors.

pub mod float;
pub mod geometry;
pub mod hybrid;
pub mod int8;
pub mod qgemm;
pub mod qgemm_avx2;
pub mod requant;
pub mod sgemm;
pub mod shape_ops;
pub mod simd;

use crate::error::{Error, LiteError, Result};
use crate::interpreter::Slot;
use crate::model::{builtin_name, DType, OpDef};
use crate::schema::BuiltinOptions;
use ferroflow_tensor::{bail, ensure};

/// What a kernel may use while running.
pub struct RunContext {
    /// Threads the heavy kernels may use.
    pub num_threads: usize,
}

/// An operator's input tensors (optional inputs are index -1).
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    /// All tensors of the subgraph (the operator's outputs taken out).
    pub tensors: &'a [Slot],
    /// The operator's input indices.
    pub index: &'a [i32],
}

impl<'a> Inputs<'a> {
    /// Input `i`; an error when it is missing.
    pub fn get(&self, i: usize) -> Result<&'a Slot> {
        self.opt(i)
            .ok_or_else(|| Error::invalid(format!("input {i} is missing")))
    }

    /// Input `i`, or `None` for an omitted optional input.
    pub fn opt(&self, i: usize) -> Option<&'a Slot> {
        let idx = *self.index.get(i)?;
        if idx < 0 {
            return None;
        }
        self.tensors.get(idx as usize)
    }

    /// Number of inputs listed (including omitted ones).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when the operator has no inputs.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

/// One prepared operator.
pub trait Kernel: Send + Sync {
    /// Computes the output shapes from the current input shapes (and
    /// derives whatever depends on them).
    fn prepare(&mut self, inputs: Inputs<'_>, outputs: &[i32]) -> Result<Vec<Vec<usize>>>;

    /// Computes the outputs.
    fn run(&self, ctx: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()>;
}

/// An operator whose output was computed once when the interpreter was
/// built (a DEQUANTIZE of constant weights): nothing left to run.
pub struct Folded {
    /// The constant output's shape.
    pub shape: Vec<usize>,
}

impl Kernel for Folded {
    fn prepare(&mut self, _: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![self.shape.clone()])
    }

    fn run(&self, _: &RunContext, _: Inputs<'_>, _: &mut [Slot]) -> Result<()> {
        Ok(())
    }
}

/// The value range a fused activation clamps to, for float kernels.
pub fn activation_range(code: i8) -> Result<(f32, f32)> {
    Ok(match code {
        0 => (f32::NEG_INFINITY, f32::INFINITY),
        1 => (0.0, f32::INFINITY),
        2 => (-1.0, 1.0),
        3 => (0.0, 6.0),
        other => {
            let name = match other {
                4 => "TANH",
                5 => "SIGN_BIT",
                _ => "unknown",
            };
            bail!(
                unimplemented,
                "fused activation {name} (code {other}) is not supported"
            );
        }
    })
}

/// The element type of the operator's first input and of its first output.
fn io_types(op: &OpDef, tensors: &[Slot]) -> (Option<DType>, Option<DType>) {
    let t = |i: Option<&i32>| {
        i.filter(|&&i| i >= 0)
            .and_then(|&i| tensors.get(i as usize))
            .map(|s| s.dtype)
    };
    (t(op.inputs.first()), t(op.outputs.first()))
}

/// Builds the kernel for `op`: an error names operators, versions or types
/// ferroflow does not run.
pub fn build(op: &OpDef, tensors: &[Slot]) -> Result<Box<dyn Kernel>> {
    let (input, output) = io_types(op, tensors);
    let opts = op.options.as_ref();
    if let Some(k) = shape_ops::build(op, tensors, opts)? {
        return Ok(k);
    }
    if let Some(k) = int8::build(op, tensors, opts, input, output)? {
        return Ok(k);
    }
    if let Some(k) = hybrid::build(op, tensors, opts, input, output)? {
        return Ok(k);
    }
    if let Some(k) = float::build(op, tensors, opts, input, output)? {
        return Ok(k);
    }
    let types = match (input, output) {
        (Some(i), Some(o)) => format!(" with {} input and {} output", i.name(), o.name()),
        _ => String::new(),
    };
    if op.custom_code.is_some() {
        bail!(
            unimplemented,
            "Encountered unresolved custom op: {}. See instructions: https://www.tensorflow.org/lite/guide/ops_custom",
            op.name()
        );
    }
    Err(Error::unimplemented(format!(
        "Didn't find op for builtin opcode '{}' version '{}'{types}",
        builtin_name(op.code),
        op.version
    )))
}

/// Fetches the options of the expected kind, or the schema defaults when
/// the operator carries none.
#[macro_export]
#[doc(hidden)]
macro_rules! options {
    ($opts:expr, $variant:ident) => {
        match $opts {
            Some($crate::schema::BuiltinOptions::$variant(o)) => (**o).clone(),
            _ => Default::default(),
        }
    };
}

/// A constant input's values as i64 (axes, shapes, paddings); an error
/// names the input when it is not a constant integer tensor.
pub fn const_ints(tensors: &[Slot], op: &OpDef, i: usize, what: &str) -> Result<Vec<i64>> {
    let idx = *op
        .inputs
        .get(i)
        .ok_or_else(|| Error::invalid(format!("the {what} input is missing")))?;
    let s = tensors
        .get(idx.max(0) as usize)
        .filter(|_| idx >= 0)
        .ok_or_else(|| Error::invalid(format!("the {what} input is missing")))?;
    ensure!(
        s.constant,
        unimplemented,
        "the {what} input must be a constant"
    );
    ints_of(s, what)
}

/// An integer tensor's values as i64.
pub fn ints_of(s: &Slot, what: &str) -> Result<Vec<i64>> {
    Ok(match s.dtype {
        DType::I32 => s.as_slice::<i32>().iter().map(|&v| v as i64).collect(),
        DType::I64 => s.as_slice::<i64>().to_vec(),
        other => {
            bail!(
                invalid,
                "the {what} tensor must be INT32 or INT64, not {}",
                other.name()
            )
        }
    })
}

/// Unused-import guard for the options macro's path.
#[allow(dead_code)]
fn _options_type(_: &BuiltinOptions) {}
