//! Operators that only move elements: reshapes, concatenation, stacking,
//! splitting, transposes, gathers, slices and pads. They work on bytes, so
//! one kernel serves every element type (quantized tensors keep their
//! parameters; TFLite's converter gives these ops equal input and output
//! quantization, except concatenation, which requantizes when they differ).

use super::{const_ints, ints_of, Inputs, Kernel, RunContext};
use crate::error::{LiteError, Result};
use crate::interpreter::Slot;
use crate::model::{DType, OpDef};
use crate::options;
use crate::schema::BuiltinOptions;
use ferroflow_tensor::{bail, ensure};

/// Builds the kernel when `op` is an element-moving operator.
pub fn build(
    op: &OpDef,
    tensors: &[Slot],
    opts: Option<&BuiltinOptions>,
) -> Result<Option<Box<dyn Kernel>>> {
    let out_shape = |i: usize| -> Vec<usize> {
        op.outputs
            .get(i)
            .and_then(|&o| tensors.get(o.max(0) as usize))
            .map(|s| s.shape.clone())
            .unwrap_or_default()
    };
    Ok(Some(match op.code {
        // RESHAPE
        22 => {
            let from_input = if op.inputs.len() > 1
                && op.inputs[1] >= 0
                && tensors[op.inputs[1] as usize].constant
            {
                Some(const_ints(tensors, op, 1, "shape")?)
            } else {
                None
            };
            let from_options = options!(opts, ReshapeOptions)
                .new_shape
                .map(|v| v.into_iter().map(i64::from).collect::<Vec<_>>());
            let target = from_input
                .or(from_options)
                .unwrap_or_else(|| out_shape(0).iter().map(|&d| d as i64).collect());
            Box::new(Reshape { target })
        }
        // SQUEEZE
        43 => Box::new(Squeeze {
            dims: options!(opts, SqueezeOptions)
                .squeeze_dims
                .unwrap_or_default(),
        }),
        // EXPAND_DIMS
        70 => Box::new(ExpandDims {
            axis: const_ints(tensors, op, 1, "axis")?
                .first()
                .copied()
                .unwrap_or(0),
        }),
        // SHAPE
        77 => Box::new(ShapeOf),
        // CONCATENATION
        2 => {
            let o = options!(opts, ConcatenationOptions);
            if o.fused_activation_function != 0 {
                return Ok(None);
            }
            let out = op
                .outputs
                .first()
                .and_then(|&o| tensors.get(o.max(0) as usize));
            let same_quant = op.inputs.iter().all(|&i| {
                tensors
                    .get(i.max(0) as usize)
                    .map(|t| t.quant == out.map(|o| o.quant.clone()).unwrap_or_default())
                    .unwrap_or(false)
            });
            if !same_quant && out.map(|o| o.quant.is_quantized()).unwrap_or(false) {
                return Ok(None); // the quantized kernel requantizes
            }
            Box::new(Concat {
                axis: o.axis as i64,
                outer: 0,
                widths: Vec::new(),
            })
        }
        // PACK
        83 => {
            let o = options!(opts, PackOptions);
            Box::new(Pack {
                axis: o.axis as i64,
            })
        }
        // UNPACK
        88 => {
            let o = options!(opts, UnpackOptions);
            Box::new(Unpack {
                axis: o.axis as i64,
            })
        }
        // SPLIT: inputs (axis, value)
        49 => Box::new(Split {
            axis: const_ints(tensors, op, 0, "axis")?
                .first()
                .copied()
                .unwrap_or(0),
            count: op.outputs.len(),
        }),
        // TRANSPOSE
        39 => Box::new(Transpose {
            perm: const_ints(tensors, op, 1, "perm")?,
        }),
        // GATHER
        36 => {
            let o = options!(opts, GatherOptions);
            ensure!(
                o.batch_dims == 0,
                unimplemented,
                "GATHER with batch_dims is not supported"
            );
            Box::new(Gather {
                axis: o.axis as i64,
            })
        }
        // STRIDED_SLICE
        45 => {
            let o = options!(opts, StridedSliceOptions);
            if o.ellipsis_mask != 0 || o.new_axis_mask != 0 {
                bail!(
                    unimplemented,
                    "STRIDED_SLICE with ellipsis or new-axis masks is not supported"
                );
            }
            Box::new(StridedSlice {
                begin: const_ints(tensors, op, 1, "begin")?,
                end: const_ints(tensors, op, 2, "end")?,
                strides: const_ints(tensors, op, 3, "strides")?,
                begin_mask: o.begin_mask,
                end_mask: o.end_mask,
                shrink: o.shrink_axis_mask,
                offset: o.offset,
                plan: Vec::new(),
            })
        }
        // SLICE
        65 => Box::new(SliceOp {
            begin: const_ints(tensors, op, 1, "begin")?,
            size: const_ints(tensors, op, 2, "size")?,
            plan: Vec::new(),
        }),
        // PAD, PADV2
        34 | 60 => {
            let p = const_ints(tensors, op, 1, "paddings")?;
            Box::new(Pad {
                paddings: p,
                value: Vec::new(),
            })
        }
        _ => return Ok(None),
    }))
}

fn check_rank(op: &str, axis: i64, rank: usize) -> Result<usize> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a < 0 || a as usize >= rank.max(1) {
        bail!(invalid, "{op}: axis {axis} is out of range for rank {rank}");
    }
    Ok(a as usize)
}

fn copy_all(inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
    let x = inputs.get(0)?;
    outputs[0].data.bytes_mut().copy_from_slice(x.data.bytes());
    Ok(())
}

struct Reshape {
    target: Vec<i64>,
}

impl Kernel for Reshape {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let n = inputs.get(0)?.num_elements();
        let known: usize = self
            .target
            .iter()
            .filter(|&&d| d >= 0)
            .map(|&d| d as usize)
            .product();
        let unknown = self.target.iter().filter(|&&d| d < 0).count();
        let shape: Vec<usize> = match unknown {
            0 => self.target.iter().map(|&d| d as usize).collect(),
            1 if known > 0 && n % known == 0 => self
                .target
                .iter()
                .map(|&d| if d < 0 { n / known } else { d as usize })
                .collect(),
            _ => {
                bail!(
                    invalid,
                    "RESHAPE: cannot reshape {n} elements to {:?}",
                    self.target
                )
            }
        };
        if shape.iter().product::<usize>() != n {
            bail!(invalid, "RESHAPE: cannot reshape {n} elements to {shape:?}");
        }
        Ok(vec![shape])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        copy_all(inputs, outputs)
    }
}

struct Squeeze {
    dims: Vec<i32>,
}

impl Kernel for Squeeze {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = &inputs.get(0)?.shape;
        let mut drop = vec![false; shape.len()];
        if self.dims.is_empty() {
            for (d, &s) in shape.iter().enumerate() {
                drop[d] = s == 1;
            }
        } else {
            for &d in &self.dims {
                let a = check_rank("SQUEEZE", d as i64, shape.len())?;
                ensure!(
                    shape[a] == 1,
                    invalid,
                    "SQUEEZE: dimension {d} of shape {shape:?} is not 1"
                );
                drop[a] = true;
            }
        }
        Ok(vec![shape
            .iter()
            .zip(&drop)
            .filter(|(_, &d)| !d)
            .map(|(&s, _)| s)
            .collect()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        copy_all(inputs, outputs)
    }
}

struct ExpandDims {
    axis: i64,
}

impl Kernel for ExpandDims {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let mut shape = inputs.get(0)?.shape.clone();
        let a = check_rank("EXPAND_DIMS", self.axis, shape.len() + 1)?;
        shape.insert(a, 1);
        Ok(vec![shape])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        copy_all(inputs, outputs)
    }
}

struct ShapeOf;

impl Kernel for ShapeOf {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![vec![inputs.get(0)?.shape.len()]])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let shape = &inputs.get(0)?.shape;
        match outputs[0].dtype {
            DType::I64 => outputs[0]
                .as_mut_slice::<i64>()
                .iter_mut()
                .zip(shape)
                .for_each(|(o, &s)| *o = s as i64),
            _ => outputs[0]
                .as_mut_slice::<i32>()
                .iter_mut()
                .zip(shape)
                .for_each(|(o, &s)| *o = s as i32),
        }
        Ok(())
    }
}

/// `(outer, inner-bytes)` split of a shape at `axis`: the product of the
/// dimensions before it and the bytes of one slab from it on.
fn split_at(shape: &[usize], axis: usize, elem: usize) -> (usize, usize) {
    (
        shape[..axis].iter().product(),
        shape[axis..].iter().product::<usize>() * elem,
    )
}

struct Concat {
    axis: i64,
    outer: usize,
    widths: Vec<usize>,
}

impl Kernel for Concat {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let first = inputs.get(0)?;
        let rank = first.shape.len();
        let axis = check_rank("CONCATENATION", self.axis, rank)?;
        let mut shape = first.shape.clone();
        shape[axis] = 0;
        self.widths.clear();
        for i in 0..inputs.len() {
            let t = inputs.get(i)?;
            if t.shape.len() != rank
                || t.shape
                    .iter()
                    .enumerate()
                    .any(|(d, &s)| d != axis && s != first.shape[d])
            {
                bail!(
                    invalid,
                    "CONCATENATION: input {i} has shape {:?}, incompatible with {:?} along axis {axis}",
                    t.shape,
                    first.shape
                );
            }
            shape[axis] += t.shape[axis];
            self.widths.push(split_at(&t.shape, axis, t.dtype.size()).1);
        }
        self.outer = first.shape[..axis].iter().product();
        Ok(vec![shape])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let out = outputs[0].data.bytes_mut();
        let row: usize = self.widths.iter().sum();
        for o in 0..self.outer {
            let mut at = o * row;
            for (i, &w) in self.widths.iter().enumerate() {
                out[at..at + w].copy_from_slice(&inputs.get(i)?.data.bytes()[o * w..(o + 1) * w]);
                at += w;
            }
        }
        Ok(())
    }
}

struct Pack {
    axis: i64,
}

impl Kernel for Pack {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let first = &inputs.get(0)?.shape;
        for i in 1..inputs.len() {
            ensure!(
                &inputs.get(i)?.shape == first,
                invalid,
                "PACK: input {i} has shape {:?}, input 0 {first:?}",
                inputs.get(i)?.shape
            );
        }
        let axis = check_rank("PACK", self.axis, first.len() + 1)?;
        self.axis = axis as i64;
        let mut shape = first.clone();
        shape.insert(axis, inputs.len());
        Ok(vec![shape])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let (outer, w) = split_at(&x.shape, self.axis as usize, x.dtype.size());
        let n = inputs.len();
        let out = outputs[0].data.bytes_mut();
        for i in 0..n {
            let src = inputs.get(i)?.data.bytes();
            for o in 0..outer {
                out[(o * n + i) * w..(o * n + i + 1) * w].copy_from_slice(&src[o * w..(o + 1) * w]);
            }
        }
        Ok(())
    }
}

struct Unpack {
    axis: i64,
}

impl Kernel for Unpack {
    fn prepare(&mut self, inputs: Inputs<'_>, outputs: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = &inputs.get(0)?.shape;
        let axis = check_rank("UNPACK", self.axis, shape.len())?;
        self.axis = axis as i64;
        ensure!(
            shape[axis] == outputs.len(),
            invalid,
            "UNPACK: dimension {axis} of {shape:?} is not {}",
            outputs.len()
        );
        let mut s = shape.clone();
        s.remove(axis);
        Ok(vec![s; outputs.len()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let axis = self.axis as usize;
        let outer: usize = x.shape[..axis].iter().product();
        let w = x.shape[axis + 1..].iter().product::<usize>() * x.dtype.size();
        let n = outputs.len();
        let src = x.data.bytes();
        for (i, out) in outputs.iter_mut().enumerate() {
            let dst = out.data.bytes_mut();
            for o in 0..outer {
                dst[o * w..(o + 1) * w].copy_from_slice(&src[(o * n + i) * w..(o * n + i + 1) * w]);
            }
        }
        Ok(())
    }
}

struct Split {
    axis: i64,
    count: usize,
}

impl Kernel for Split {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = &inputs.get(1)?.shape;
        let axis = check_rank("SPLIT", self.axis, shape.len())?;
        self.axis = axis as i64;
        if self.count == 0 || shape[axis] % self.count != 0 {
            bail!(
                invalid,
                "SPLIT: dimension {axis} of {shape:?} does not split into {}",
                self.count
            );
        }
        let mut s = shape.clone();
        s[axis] /= self.count;
        Ok(vec![s; self.count])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(1)?;
        let axis = self.axis as usize;
        let outer: usize = x.shape[..axis].iter().product();
        let w = x.shape[axis..].iter().product::<usize>() * x.dtype.size() / self.count;
        let src = x.data.bytes();
        for (i, out) in outputs.iter_mut().enumerate() {
            let dst = out.data.bytes_mut();
            for o in 0..outer {
                let at = (o * self.count + i) * w;
                dst[o * w..(o + 1) * w].copy_from_slice(&src[at..at + w]);
            }
        }
        Ok(())
    }
}

/// Gathers elements by an index map computed at prepare time: output
/// element `j` is input element `map[j]` (or the pad value for `usize::MAX`).
fn gather_bytes(src: &[u8], dst: &mut [u8], map: &[usize], elem: usize, pad: &[u8]) {
    for (j, &i) in map.iter().enumerate() {
        let d = &mut dst[j * elem..(j + 1) * elem];
        if i == usize::MAX {
            d.copy_from_slice(&pad[..elem]);
        } else {
            d.copy_from_slice(&src[i * elem..(i + 1) * elem]);
        }
    }
}

fn strides_of(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// For an output of `out_shape` whose coordinate `c` reads the input at
/// `source(c)` (or padding when `None`), the flat source of every element.
fn index_map(
    out_shape: &[usize],
    in_shape: &[usize],
    source: impl Fn(&[usize], &mut [usize]) -> bool,
) -> Vec<usize> {
    let n: usize = out_shape.iter().product();
    let in_strides = strides_of(in_shape);
    let mut coord = vec![0usize; out_shape.len()];
    let mut src = vec![0usize; in_shape.len()];
    let mut map = Vec::with_capacity(n);
    for _ in 0..n {
        if source(&coord, &mut src) {
            map.push(src.iter().zip(&in_strides).map(|(a, b)| a * b).sum());
        } else {
            map.push(usize::MAX);
        }
        for d in (0..coord.len()).rev() {
            coord[d] += 1;
            if coord[d] < out_shape[d] {
                break;
            }
            coord[d] = 0;
        }
    }
    map
}

struct Transpose {
    perm: Vec<i64>,
}

impl Kernel for Transpose {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = &inputs.get(0)?.shape;
        let mut seen = vec![false; shape.len()];
        if self.perm.len() != shape.len()
            || self.perm.iter().any(|&p| {
                p < 0 || p as usize >= shape.len() || std::mem::replace(&mut seen[p as usize], true)
            })
        {
            bail!(
                invalid,
                "TRANSPOSE: {:?} is not a permutation of rank {}",
                self.perm,
                shape.len()
            );
        }
        Ok(vec![self.perm.iter().map(|&p| shape[p as usize]).collect()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let out_shape = outputs[0].shape.clone();
        let perm = &self.perm;
        let map = index_map(&out_shape, &x.shape, |c, s| {
            for (d, &p) in perm.iter().enumerate() {
                s[p as usize] = c[d];
            }
            true
        });
        gather_bytes(
            x.data.bytes(),
            outputs[0].data.bytes_mut(),
            &map,
            x.dtype.size(),
            &[],
        );
        Ok(())
    }
}

struct Gather {
    axis: i64,
}

impl Kernel for Gather {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let p = &inputs.get(0)?.shape;
        let idx = &inputs.get(1)?.shape;
        let axis = check_rank("GATHER", self.axis, p.len())?;
        self.axis = axis as i64;
        let mut s = p[..axis].to_vec();
        s.extend_from_slice(idx);
        s.extend_from_slice(&p[axis + 1..]);
        Ok(vec![s])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let p = inputs.get(0)?;
        let indices = ints_of(inputs.get(1)?, "indices")?;
        let axis = self.axis as usize;
        let outer: usize = p.shape[..axis].iter().product();
        let n = p.shape[axis];
        let w = p.shape[axis + 1..].iter().product::<usize>() * p.dtype.size();
        let src = p.data.bytes();
        let dst = outputs[0].data.bytes_mut();
        let mut at = 0;
        for o in 0..outer {
            for &i in &indices {
                if i < 0 || i as usize >= n {
                    bail!(invalid, "GATHER: index {i} is out of range [0, {n})");
                }
                let s = (o * n + i as usize) * w;
                dst[at..at + w].copy_from_slice(&src[s..s + w]);
                at += w;
            }
        }
        Ok(())
    }
}

/// Per output dimension: (input dimension, start, step, count) and whether
/// it is kept in the output shape.
type SlicePlan = Vec<(i64, i64, usize, bool)>;

struct StridedSlice {
    begin: Vec<i64>,
    end: Vec<i64>,
    strides: Vec<i64>,
    begin_mask: i32,
    end_mask: i32,
    shrink: i32,
    offset: bool,
    plan: SlicePlan,
}

impl Kernel for StridedSlice {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = &inputs.get(0)?.shape;
        let n = self.begin.len();
        if n > shape.len() || self.end.len() != n || self.strides.len() != n {
            bail!(
                invalid,
                "STRIDED_SLICE: begin, end and strides must have one entry per sliced dimension"
            );
        }
        self.plan.clear();
        for (d, &dim) in shape.iter().enumerate() {
            if d >= n {
                self.plan.push((0, 1, dim, true));
                continue;
            }
            let dim = dim as i64;
            let stride = self.strides[d];
            ensure!(
                stride != 0,
                invalid,
                "STRIDED_SLICE: strides must be non-zero"
            );
            let norm = |v: i64| if v < 0 { v + dim } else { v };
            let shrink = self.shrink & (1 << d) != 0;
            let (lo, hi) = if stride > 0 { (0, dim) } else { (-1, dim - 1) };
            let mut b = if self.begin_mask & (1 << d) != 0 {
                if stride > 0 {
                    0
                } else {
                    dim - 1
                }
            } else {
                norm(self.begin[d]).clamp(lo, hi)
            };
            let mut e = if shrink {
                b = norm(self.begin[d]);
                if b < 0 || b >= dim {
                    bail!(
                        invalid,
                        "STRIDED_SLICE: index {} is out of range for dimension {d} of size {dim}",
                        self.begin[d]
                    );
                }
                b + 1
            } else if self.end_mask & (1 << d) != 0 {
                if stride > 0 {
                    dim
                } else {
                    -1
                }
            } else if self.offset {
                (b + self.end[d]).clamp(lo, hi)
            } else {
                norm(self.end[d]).clamp(lo, hi)
            };
            if shrink {
                e = b + 1;
            }
            let count = if stride > 0 {
                ((e - b).max(0) as u64).div_ceil(stride as u64)
            } else {
                ((b - e).max(0) as u64).div_ceil((-stride) as u64)
            };
            self.plan
                .push((b, if shrink { 1 } else { stride }, count as usize, !shrink));
        }
        Ok(vec![self
            .plan
            .iter()
            .filter(|p| p.3)
            .map(|p| p.2)
            .collect()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let full: Vec<usize> = self.plan.iter().map(|p| p.2).collect();
        let plan = &self.plan;
        let map = index_map(&full, &x.shape, |c, s| {
            for (d, p) in plan.iter().enumerate() {
                s[d] = (p.0 + c[d] as i64 * p.1) as usize;
            }
            true
        });
        gather_bytes(
            x.data.bytes(),
            outputs[0].data.bytes_mut(),
            &map,
            x.dtype.size(),
            &[],
        );
        Ok(())
    }
}

struct SliceOp {
    begin: Vec<i64>,
    size: Vec<i64>,
    plan: Vec<(usize, usize)>,
}

impl Kernel for SliceOp {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = &inputs.get(0)?.shape;
        if self.begin.len() != shape.len() || self.size.len() != shape.len() {
            bail!(
                invalid,
                "SLICE: begin and size must have one entry per dimension"
            );
        }
        self.plan.clear();
        for (d, &dim) in shape.iter().enumerate() {
            let b = self.begin[d];
            let s = if self.size[d] < 0 {
                dim as i64 - b
            } else {
                self.size[d]
            };
            if b < 0 || s < 0 || (b + s) as usize > dim {
                bail!(
                    invalid,
                    "SLICE: begin {b} and size {s} do not fit dimension {d} of size {dim}"
                );
            }
            self.plan.push((b as usize, s as usize));
        }
        Ok(vec![self.plan.iter().map(|p| p.1).collect()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let out_shape: Vec<usize> = self.plan.iter().map(|p| p.1).collect();
        let plan = &self.plan;
        let map = index_map(&out_shape, &x.shape, |c, s| {
            for d in 0..c.len() {
                s[d] = plan[d].0 + c[d];
            }
            true
        });
        gather_bytes(
            x.data.bytes(),
            outputs[0].data.bytes_mut(),
            &map,
            x.dtype.size(),
            &[],
        );
        Ok(())
    }
}

struct Pad {
    paddings: Vec<i64>,
    value: Vec<u8>,
}

impl Kernel for Pad {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        let shape = &x.shape;
        if self.paddings.len() != 2 * shape.len() || self.paddings.iter().any(|&p| p < 0) {
            bail!(
                invalid,
                "PAD: paddings {:?} do not fit rank {}",
                self.paddings,
                shape.len()
            );
        }
        // The pad value: PADV2's third input, else zero (the zero point
        // for quantized tensors).
        let elem = x.dtype.size();
        self.value = match inputs.opt(2) {
            Some(v) if v.data.len() >= elem => v.data.bytes()[..elem].to_vec(),
            _ => match x.dtype {
                DType::I8 => vec![x.quant.zero_point0() as i8 as u8],
                DType::U8 => vec![x.quant.zero_point0() as u8],
                _ => vec![0; elem],
            },
        };
        Ok(vec![shape
            .iter()
            .enumerate()
            .map(|(d, &s)| s + (self.paddings[2 * d] + self.paddings[2 * d + 1]) as usize)
            .collect()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let out_shape = outputs[0].shape.clone();
        let p = &self.paddings;
        let map = index_map(&out_shape, &x.shape, |c, s| {
            for d in 0..c.len() {
                let v = c[d] as i64 - p[2 * d];
                if v < 0 || v as usize >= x.shape[d] {
                    return false;
                }
                s[d] = v as usize;
            }
            true
        });
        gather_bytes(
            x.data.bytes(),
            outputs[0].data.bytes_mut(),
            &map,
            x.dtype.size(),
            &self.value,
        );
        Ok(())
    }
}
