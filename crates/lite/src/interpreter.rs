//! The interpreter: a model's main subgraph with every tensor allocated
//! once, and its operators prepared (weights repacked, quantized
//! multipliers computed) before the first invocation.

use crate::buffer::Buffer;
use crate::error::{Error, LiteError, Result};
use crate::kernels::{self, Inputs, Kernel};
use crate::model::{DType, Model};
use crate::quant::QuantParams;
use ferroflow_tensor::{bail, ensure};

/// One tensor of the running model.
#[derive(Clone, Default)]
pub struct Slot {
    /// The tensor's name in the model.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Current shape.
    pub shape: Vec<usize>,
    /// Shape signature from the model (-1: resizable), if any.
    pub shape_signature: Option<Vec<i32>>,
    /// Quantization parameters.
    pub quant: QuantParams,
    /// Contents.
    pub data: Buffer,
    /// A constant (weights) from the model file.
    pub constant: bool,
}

impl Slot {
    /// Number of elements; saturates at `usize::MAX`.
    pub fn num_elements(&self) -> usize {
        self.shape.iter().fold(1usize, |n, &d| n.saturating_mul(d))
    }

    /// The data as `T` (the caller knows the dtype).
    pub fn as_slice<T: bytemuck::Pod>(&self) -> &[T] {
        self.data.as_slice()
    }

    /// The data as `T`, mutable.
    pub fn as_mut_slice<T: bytemuck::Pod>(&mut self) -> &mut [T] {
        self.data.as_mut_slice()
    }

    fn byte_len(&self) -> usize {
        self.num_elements().saturating_mul(self.dtype.size())
    }

    /// Bytes of the current shape, `None` when that overflows `usize`.
    fn checked_byte_len(&self) -> Option<usize> {
        if self.shape.contains(&0) {
            return Some(0);
        }
        self.shape
            .iter()
            .try_fold(self.dtype.size(), |n, &d| n.checked_mul(d))
    }

    /// Gives the slot the bytes of its current shape; an error when the
    /// size overflows or the memory cannot be had.
    fn allocate(&mut self) -> Result<()> {
        let len = self.checked_byte_len().ok_or_else(|| {
            Error::resource_exhausted(format!(
                "tensor {:?} is too large: shape {:?} of {}",
                self.name,
                self.shape,
                self.dtype.name()
            ))
        })?;
        if self.data.len() != len {
            self.data.try_resize(len).map_err(|_| {
                Error::resource_exhausted(format!(
                    "tensor {:?} is too large: {len} bytes cannot be allocated",
                    self.name
                ))
            })?;
        }
        Ok(())
    }
}

/// Checks that the operators, in order, only read tensors that hold values
/// by then (constants, model inputs, variables, outputs of earlier
/// operators) and that each tensor they write is written once, by one
/// operator, and is neither a constant nor a model input nor one of the
/// operator's own inputs. Kernels size their work from what they saw when
/// prepared; a tensor written twice or read before it is written would
/// break that.
fn check_dataflow(sg: &crate::model::Subgraph) -> Result<()> {
    let mut ready: Vec<bool> = sg
        .tensors
        .iter()
        .map(|t| t.data.is_some() || t.is_variable)
        .collect();
    for &i in &sg.inputs {
        ready[i as usize] = true;
    }
    for (k, op) in sg.operators.iter().enumerate() {
        for &i in op.inputs.iter().filter(|&&i| i >= 0) {
            ensure!(
                ready[i as usize],
                invalid,
                "operator {k} ({}) reads tensor {i}, which no earlier operator writes",
                op.name()
            );
        }
        for &o in &op.outputs {
            if ready[o as usize] {
                bail!(
                    invalid,
                    "operator {k} ({}) writes tensor {o}, which is a constant, a model input, a variable or written before",
                    op.name()
                );
            }
            ready[o as usize] = true;
        }
    }
    Ok(())
}

/// Runs a TFLite model.
pub struct Interpreter {
    model: Model,
    tensors: Vec<Slot>,
    kernels: Vec<Box<dyn Kernel>>,
    taken: Vec<Slot>,
    allocated: bool,
    num_threads: usize,
}

impl Interpreter {
    /// Builds an interpreter for the model's main subgraph, with `num_threads`
    /// threads for the heavy kernels (0: one per core). Unsupported
    /// operators or types fail here, by name.
    pub fn new(model: Model, num_threads: usize) -> Result<Interpreter> {
        let sg = model
            .subgraphs
            .first()
            .ok_or_else(|| Error::invalid("The model has no subgraph"))?;
        let mut tensors = Vec::with_capacity(sg.tensors.len());
        for t in &sg.tensors {
            let shape: Vec<usize> = t.shape.iter().map(|&d| d.max(0) as usize).collect();
            let (data, constant) = match &t.data {
                Some(d) => (Buffer::from_bytes(d), true),
                None => (Buffer::default(), false),
            };
            tensors.push(Slot {
                name: t.name.clone(),
                dtype: t.dtype,
                shape,
                shape_signature: t.shape_signature.clone(),
                quant: t.quant.clone(),
                data,
                constant,
            });
        }
        check_dataflow(sg)?;
        let mut built = Vec::with_capacity(sg.operators.len());
        for (i, op) in sg.operators.iter().enumerate() {
            let k = kernels::build(op, &tensors)
                .map_err(|e| e.with_context(format!("operator {i} ({})", op.name())))?;
            let k = fold_constant_dequantize(op, k, &mut tensors)
                .map_err(|e| e.with_context(format!("operator {i} ({})", op.name())))?;
            built.push(k);
        }
        let num_threads = if num_threads == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            num_threads
        };
        Ok(Interpreter {
            model,
            tensors,
            kernels: built,
            taken: Vec::new(),
            allocated: false,
            num_threads,
        })
    }

    /// Reads a model from bytes and builds an interpreter for it.
    pub fn from_bytes(bytes: &[u8], num_threads: usize) -> Result<Interpreter> {
        Interpreter::new(Model::from_bytes(bytes)?, num_threads)
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Threads used by the heavy kernels.
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }

    /// Indices of the main subgraph's inputs.
    pub fn inputs(&self) -> &[i32] {
        &self.model.subgraphs[0].inputs
    }

    /// Indices of the main subgraph's outputs.
    pub fn outputs(&self) -> &[i32] {
        &self.model.subgraphs[0].outputs
    }

    /// All tensors.
    pub fn tensors(&self) -> &[Slot] {
        &self.tensors
    }

    /// True once [`Interpreter::allocate_tensors`] ran after the last resize.
    pub fn is_allocated(&self) -> bool {
        self.allocated
    }

    /// Tensor `index`, with TFLite's message for a bad index.
    pub fn tensor(&self, index: i64) -> Result<&Slot> {
        self.check_index(index)?;
        Ok(&self.tensors[index as usize])
    }

    fn check_index(&self, index: i64) -> Result<()> {
        if index < 0 || index as usize >= self.tensors.len() {
            bail!(
                invalid,
                "Invalid tensor index {index} exceeds max tensor index {}",
                self.tensors.len()
            );
        }
        Ok(())
    }

    /// Gives input `index` a new shape; tensors are allocated again by the
    /// next [`Interpreter::allocate_tensors`].
    pub fn resize_input(&mut self, index: i64, shape: &[usize], strict: bool) -> Result<()> {
        self.check_index(index)?;
        ensure!(
            self.inputs().contains(&(index as i32)),
            invalid,
            "Tensor {index} is not an input of the model"
        );
        let slot = &self.tensors[index as usize];
        if strict {
            let sig = slot
                .shape_signature
                .clone()
                .unwrap_or_else(|| slot.shape.iter().map(|&d| d as i32).collect());
            let ok = sig.len() == shape.len()
                && sig
                    .iter()
                    .zip(shape)
                    .all(|(&s, &d)| s == -1 || s as usize == d);
            ensure!(
                ok,
                invalid,
                "ResizeInputTensorStrict only allows mutating unknown dimensions identified by -1; tensor {index} has signature {sig:?}"
            );
        }
        if slot.shape != shape {
            self.tensors[index as usize].shape = shape.to_vec();
            self.allocated = false;
        }
        Ok(())
    }

    /// Computes every tensor's shape from the inputs' and allocates it.
    pub fn allocate_tensors(&mut self) -> Result<()> {
        let sg = &self.model.subgraphs[0];
        for &i in &sg.inputs {
            self.tensors[i as usize].allocate()?;
        }
        // Variables start as zeros of their declared shape.
        for (slot, def) in self.tensors.iter_mut().zip(&sg.tensors) {
            if def.is_variable && def.data.is_none() && slot.data.is_empty() {
                slot.allocate()?;
            }
        }
        for (k, (kernel, op)) in self.kernels.iter_mut().zip(&sg.operators).enumerate() {
            let ins = Inputs {
                tensors: &self.tensors,
                index: &op.inputs,
            };
            let shapes = kernel
                .prepare(ins, &op.outputs)
                .map_err(|e| e.with_context(format!("operator {k} ({})", op.name())))?;
            ensure!(
                shapes.len() == op.outputs.len(),
                internal,
                "operator {k} ({}) produced {} shapes for {} outputs",
                op.name(),
                shapes.len(),
                op.outputs.len()
            );
            for (&o, shape) in op.outputs.iter().zip(shapes) {
                let s = &mut self.tensors[o as usize];
                s.shape = shape;
                s.allocate()?;
            }
        }
        self.allocated = true;
        Ok(())
    }

    /// Copies `bytes` into input tensor `index` after checking its dtype
    /// and shape (TF's messages).
    pub fn set_tensor(
        &mut self,
        index: i64,
        dtype: DType,
        shape: &[usize],
        bytes: &[u8],
    ) -> Result<()> {
        self.check_index(index)?;
        ensure!(
            self.allocated,
            invalid,
            "Cannot set tensor: Tensor is unallocated. Try calling allocate_tensors() first"
        );
        let slot = &mut self.tensors[index as usize];
        ensure!(
            dtype == slot.dtype,
            invalid,
            "Cannot set tensor: Got value of type {} but expected type {} for input {index}, name: {} ",
            dtype.name(),
            slot.dtype.name(),
            slot.name
        );
        ensure!(
            shape.len() == slot.shape.len(),
            invalid,
            "Cannot set tensor: Dimension mismatch. Got {} but expected {} for input {index}.",
            shape.len(),
            slot.shape.len()
        );
        for (d, (&got, &want)) in shape.iter().zip(&slot.shape).enumerate() {
            ensure!(
                got == want,
                invalid,
                "Cannot set tensor: Dimension mismatch. Got {got} but expected {want} for dimension {d} of input {index}."
            );
        }
        ensure!(
            bytes.len() == slot.byte_len(),
            invalid,
            "Cannot set tensor: {} bytes given for a tensor of {} bytes",
            bytes.len(),
            slot.byte_len()
        );
        if slot.data.len() != bytes.len() {
            slot.data.resize(bytes.len());
        }
        slot.data.bytes_mut().copy_from_slice(bytes);
        Ok(())
    }

    /// Runs every operator once.
    pub fn invoke(&mut self) -> Result<()> {
        ensure!(
            self.allocated,
            failed_precondition,
            "Invoke called on model that is not ready."
        );
        let sg = &self.model.subgraphs[0];
        let ctx = kernels::RunContext {
            num_threads: self.num_threads,
        };
        for (k, (kernel, op)) in self.kernels.iter().zip(&sg.operators).enumerate() {
            self.taken.clear();
            for &o in &op.outputs {
                self.taken
                    .push(std::mem::take(&mut self.tensors[o as usize]));
            }
            let ins = Inputs {
                tensors: &self.tensors,
                index: &op.inputs,
            };
            let result = kernel.run(&ctx, ins, &mut self.taken);
            for (&o, slot) in op.outputs.iter().zip(self.taken.drain(..)) {
                self.tensors[o as usize] = slot;
            }
            result.map_err(|e| e.with_context(format!("operator {k} ({})", op.name())))?;
        }
        Ok(())
    }

    /// Restores variable tensors to zeros (TFLite's `reset_all_variables`).
    pub fn reset_all_variables(&mut self) {
        for (slot, def) in self
            .tensors
            .iter_mut()
            .zip(&self.model.subgraphs[0].tensors)
        {
            if def.is_variable {
                slot.data.bytes_mut().fill(0);
            }
        }
    }
}

/// A DEQUANTIZE of a constant (float16 or int8 weights stored compactly)
/// runs once, here: its output becomes a constant, so the kernels reading
/// it see float weights they can repack, and invocations skip it.
fn fold_constant_dequantize(
    op: &crate::model::OpDef,
    mut kernel: Box<dyn Kernel>,
    tensors: &mut [Slot],
) -> Result<Box<dyn Kernel>> {
    let (input, output) = match (op.inputs.as_slice(), op.outputs.as_slice()) {
        (&[i], &[o]) if i >= 0 && o >= 0 => (i as usize, o as usize),
        _ => return Ok(kernel),
    };
    if op.code != 6 || !tensors[input].constant {
        return Ok(kernel);
    }
    let ins = Inputs {
        tensors,
        index: &op.inputs,
    };
    let shape = kernel.prepare(ins, &op.outputs)?.swap_remove(0);
    let mut out = std::mem::take(&mut tensors[output]);
    out.shape = shape.clone();
    out.allocate()?;
    let ctx = kernels::RunContext { num_threads: 1 };
    let mut outs = [out];
    kernel.run(
        &ctx,
        Inputs {
            tensors,
            index: &op.inputs,
        },
        &mut outs,
    )?;
    let [mut out] = outs;
    out.constant = true;
    tensors[output] = out;
    Ok(Box::new(kernels::Folded { shape }))
}
