//! TF1's gradient accumulators (for `SyncReplicasOptimizer`):
//! `ConditionalAccumulator` (`ResourceConditionalAccumulator` and the
//! `ResourceAccumulator*` ops TF1's Python creates, plus the older
//! `ConditionalAccumulator` / `Accumulator*` names) and
//! `SparseConditionalAccumulator` (`SparseAccumulator*`).
//!
//! An accumulator sums the gradients applied with a `local_step` no older
//! than its global step (staler ones are dropped, as in TensorFlow);
//! `take_grad(n)` waits until `n` were summed, returns their mean (or sum,
//! with `reduction_type` `SUM`), resets the sum and increments the global
//! step. A sparse accumulator sums rows by index and averages each row over
//! the gradients that had it. Waiting honours the run's deadline and
//! `Session.close`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::blocking::{wait_while, Cancellable};
use ferroflow_runtime::{factory, Kernel, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Shape, Tensor};
use parking_lot::{Condvar, Mutex};

use super::{next_resource_id, Blocking};

/// How `take_grad` combines the gradients.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Reduction {
    Mean,
    Sum,
}

#[derive(Default)]
struct State {
    global_step: i64,
    count: usize,
    /// Dense: the running sum (f64, converted back on take).
    sum: Option<(Shape, Vec<f64>)>,
    /// Sparse: (index, row sum, gradients that had the row), in the order
    /// indices first arrived (TensorFlow's output order), and where each
    /// index is in that list.
    rows: Vec<(i64, Vec<f64>, usize)>,
    row_of: HashMap<i64, usize>,
    row_shape: Option<Vec<usize>>,
    dense_shape: Option<Vec<i64>>,
    cancelled: bool,
    /// A `take_grad` waiting for this many gradients: the apply that brings
    /// the count there takes them at once (as TensorFlow does), so later
    /// applies of the same step are already stale.
    pending_take: Option<usize>,
    /// What that apply took, for the waiting `take_grad`.
    taken: Option<Taken>,
}

/// Gradients taken out of an accumulator: how many, and their sum.
struct Taken {
    count: usize,
    dense: Option<(Shape, Vec<f64>)>,
    rows: Vec<(i64, Vec<f64>, usize)>,
    row_shape: Option<Vec<usize>>,
    dense_shape: Option<Vec<i64>>,
}

impl State {
    /// Takes the accumulated gradients and advances the global step.
    fn take_all(&mut self) -> Taken {
        let t = Taken {
            count: self.count,
            dense: self.sum.take(),
            rows: std::mem::take(&mut self.rows),
            row_shape: self.row_shape.take(),
            dense_shape: self.dense_shape.take(),
        };
        self.row_of.clear();
        self.count = 0;
        self.global_step += 1;
        t
    }

    /// After an apply: serve a waiting `take_grad` whose count is reached.
    fn serve_pending_take(&mut self) {
        if self.pending_take.is_some_and(|need| self.count >= need) {
            self.pending_take = None;
            self.taken = Some(self.take_all());
        }
    }
}

/// An accumulator resource (see the module docs).
pub struct Accumulator {
    name: String,
    sparse: bool,
    dtype: DType,
    shape: PartialShape,
    reduction: Reduction,
    state: Mutex<State>,
    cv: Condvar,
    registered: AtomicBool,
}

fn to_f64(t: &Tensor) -> Result<Vec<f64>> {
    t.to_f64_vec()
}

fn from_f64(dtype: DType, shape: Shape, v: Vec<f64>) -> Result<Tensor> {
    match dtype {
        DType::Float32 => Tensor::from_vec(shape, v.into_iter().map(|x| x as f32).collect()),
        DType::Float64 => Tensor::from_vec(shape, v),
        DType::Float16 => Tensor::from_vec(
            shape,
            v.into_iter().map(ferroflow_tensor::f16::from_f64).collect(),
        ),
        DType::BFloat16 => Tensor::from_vec(
            shape,
            v.into_iter()
                .map(ferroflow_tensor::bf16::from_f64)
                .collect(),
        ),
        DType::Int32 => Tensor::from_vec(shape, v.into_iter().map(|x| x as i32).collect()),
        DType::Int64 => Tensor::from_vec(shape, v.into_iter().map(|x| x as i64).collect()),
        d => Err(Error::unimplemented(format!(
            "accumulators of {d} are not supported"
        ))),
    }
}

impl Accumulator {
    fn desc(&self) -> String {
        let kind = if self.sparse {
            "SparseConditionalAccumulator"
        } else {
            "ConditionalAccumulator"
        };
        format!("{kind} '{}'", self.name)
    }

    fn check_shape(&self, got: &[usize], what: &str) -> Result<()> {
        ensure!(
            self.shape.is_compatible_with_shape(&Shape::new(got)),
            invalid_argument,
            "{}: shape mismatch: expected {:?}, got {what} of shape {:?}",
            self.desc(),
            self.shape.dims(),
            got
        );
        Ok(())
    }

    /// Adds a dense gradient unless `local_step` is stale.
    pub fn apply_dense(&self, local_step: i64, grad: &Tensor) -> Result<()> {
        self.check_shape(grad.dims(), "a gradient")?;
        let values = to_f64(grad)?;
        let mut st = self.state.lock();
        if local_step < st.global_step {
            return Ok(());
        }
        match &mut st.sum {
            None => st.sum = Some((grad.shape().clone(), values)),
            Some((shape, sum)) => {
                ensure!(
                    shape == grad.shape(),
                    invalid_argument,
                    "{}: shape mismatch: expected {shape}, got {}",
                    self.desc(),
                    grad.shape()
                );
                for (s, v) in sum.iter_mut().zip(values) {
                    *s += v;
                }
            }
        }
        st.count += 1;
        st.serve_pending_take();
        drop(st);
        self.cv.notify_all();
        Ok(())
    }

    /// Adds a sparse gradient (rows `values[i]` at `indices[i]`) unless
    /// `local_step` is stale.
    pub fn apply_sparse(
        &self,
        local_step: i64,
        indices: &Tensor,
        values: &Tensor,
        dense_shape: Option<&Tensor>,
    ) -> Result<()> {
        let idx = indices.to_i64_vec()?;
        if indices.rank() != 1 || values.rank() == 0 || values.dims()[0] != idx.len() {
            bail!(
                invalid_argument,
                "{}: indices (shape {}) and values (shape {}) do not have the same first dimension",
                self.desc(),
                indices.shape(),
                values.shape()
            );
        }
        let row_shape = values.dims()[1..].to_vec();
        let mut full = vec![usize::MAX];
        full.extend_from_slice(&row_shape);
        if let Some(dims) = self.shape.dims() {
            let ok = dims.len() == full.len()
                && dims[1..]
                    .iter()
                    .zip(&row_shape)
                    .all(|(d, &r)| d.is_none_or(|d| d == r));
            ensure!(
                ok,
                invalid_argument,
                "{}: shape mismatch: expected {:?}, got values of shape {}",
                self.desc(),
                dims,
                values.shape()
            );
        }
        let shape = dense_shape.map(Tensor::to_i64_vec).transpose()?;
        let vals = to_f64(values)?;
        let n: usize = row_shape.iter().product();
        let mut st = self.state.lock();
        if local_step < st.global_step {
            return Ok(());
        }
        if let Some(prev) = &st.row_shape {
            ensure!(
                *prev == row_shape,
                invalid_argument,
                "{}: shape mismatch: accumulated rows have shape {prev:?}, got {row_shape:?}",
                self.desc()
            );
        }
        st.row_shape = Some(row_shape);
        if shape.is_some() {
            st.dense_shape = shape;
        }
        for (k, &i) in idx.iter().enumerate() {
            let row = &vals[k * n..(k + 1) * n];
            let st = &mut *st;
            let at = *st.row_of.entry(i).or_insert_with(|| {
                st.rows.push((i, vec![0.0; n], 0));
                st.rows.len() - 1
            });
            let entry = &mut st.rows[at];
            for (s, v) in entry.1.iter_mut().zip(row) {
                *s += v;
            }
            entry.2 += 1;
        }
        st.count += 1;
        st.serve_pending_take();
        drop(st);
        self.cv.notify_all();
        Ok(())
    }

    /// Waits for `num_required` gradients, then takes them.
    fn take(&self, num_required: i64) -> Result<Taken> {
        if num_required <= 0 {
            bail!(
                invalid_argument,
                "Argument num_required must be positive, but was {num_required}"
            );
        }
        let need = num_required as usize;
        let mut st = self.state.lock();
        if !st.cancelled && st.count >= need {
            return Ok(st.take_all());
        }
        st.pending_take = Some(need);
        let waited = wait_while(&self.cv, &mut st, "gradients in the accumulator", |s| {
            !s.cancelled && s.taken.is_none()
        });
        if let Some(t) = st.taken.take() {
            return Ok(t);
        }
        st.pending_take = None;
        waited?;
        Err(Error::cancelled(format!(
            "TakeGrad operation was cancelled ({} was closed)",
            self.desc()
        )))
    }

    /// `take_grad`: the mean (or sum) of the accumulated dense gradients.
    pub fn take_dense(&self, num_required: i64) -> Result<Tensor> {
        let taken = self.take(num_required)?;
        let (shape, mut sum) = taken
            .dense
            .ok_or_else(|| Error::internal(format!("{}: no gradient accumulated", self.desc())))?;
        if self.reduction == Reduction::Mean {
            let c = taken.count as f64;
            sum.iter_mut().for_each(|v| *v /= c);
        }
        from_f64(self.dtype, shape, sum)
    }

    /// `take_indexed_slices_grad`: the indices (in the order they first
    /// arrived), their mean (or summed) rows, and the dense shape.
    pub fn take_sparse(&self, num_required: i64) -> Result<(Tensor, Tensor, Tensor)> {
        let taken = self.take(num_required)?;
        let rows = taken.rows;
        let row_shape = taken.row_shape.unwrap_or_default();
        let dense_shape = taken.dense_shape;
        let n: usize = row_shape.iter().product();
        let mut indices = Vec::with_capacity(rows.len());
        let mut values = Vec::with_capacity(rows.len() * n);
        for (i, sum, count) in rows {
            indices.push(i);
            let div = if self.reduction == Reduction::Mean {
                count as f64
            } else {
                1.0
            };
            values.extend(sum.into_iter().map(|v| v / div));
        }
        let mut vshape = vec![indices.len()];
        vshape.extend_from_slice(&row_shape);
        let shape = dense_shape.unwrap_or_else(|| {
            let mut s = vec![-1i64];
            s.extend(row_shape.iter().map(|&d| d as i64));
            s
        });
        Ok((
            Tensor::vector(indices),
            from_f64(self.dtype, Shape::new(&vshape), values)?,
            Tensor::vector(shape),
        ))
    }

    /// Gradients accumulated since the last take.
    pub fn num_accumulated(&self) -> usize {
        self.state.lock().count
    }

    /// Sets the global step (TensorFlow only warns when it goes back).
    pub fn set_global_step(&self, step: i64) {
        self.state.lock().global_step = step;
    }
}

impl Cancellable for Accumulator {
    fn cancel(&self) {
        self.state.lock().cancelled = true;
        self.cv.notify_all();
    }
}

struct CreateAccumulator {
    sparse: bool,
    dtype: DType,
    shape: PartialShape,
    reduction: Reduction,
    container: String,
    shared_name: String,
}

impl Kernel for CreateAccumulator {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let key = if self.shared_name.is_empty() {
            format!("\u{0}accumulator:{}", ctx.node)
        } else {
            self.shared_name.clone()
        };
        let acc = ctx
            .session
            .get_or_create_shared(&self.container, &key, || {
                Ok(Accumulator {
                    name: if self.shared_name.is_empty() {
                        format!("_{}_{}", next_resource_id(), ctx.node)
                    } else {
                        self.shared_name.clone()
                    },
                    sparse: self.sparse,
                    dtype: self.dtype,
                    shape: self.shape.clone(),
                    reduction: self.reduction,
                    state: Mutex::new(State::default()),
                    cv: Condvar::new(),
                    registered: AtomicBool::new(false),
                })
            })?;
        if !acc.registered.swap(true, Ordering::AcqRel) {
            let weak: Weak<dyn Cancellable> = Arc::downgrade(&acc) as Weak<dyn Cancellable>;
            ctx.session.register_cancellable(weak);
        }
        ctx.output_resource(acc);
        Ok(())
    }
}

fn create_factory(sparse: bool) -> KernelFactory {
    factory(move |init| {
        let a = &init.node.attrs;
        let reduction = match a.str_or("reduction_type", "MEAN")?.as_str() {
            "MEAN" => Reduction::Mean,
            "SUM" => Reduction::Sum,
            other => {
                bail!(
                    invalid_argument,
                    "{}: reduction_type must be MEAN or SUM, got {other:?}",
                    init.node.name
                )
            }
        };
        Ok(Box::new(CreateAccumulator {
            sparse,
            dtype: a.dtype("dtype")?,
            shape: a.shape("shape")?,
            reduction,
            container: a.str_or("container", "")?,
            shared_name: a.str_or("shared_name", "")?,
        }))
    })
}

fn infer_handle(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(
        DType::Resource,
        PartialShape::scalar(),
    )])
}

fn infer_none(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

fn infer_count(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::Int32, PartialShape::scalar())])
}

fn infer_take(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(
        ctx.type_attr("dtype")?,
        PartialShape::unknown(),
    )])
}

fn infer_take_sparse(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let v = PartialShape::from_dims(vec![None]);
    Ok(vec![
        OutputInfo::new(DType::Int64, v.clone()),
        OutputInfo::new(ctx.type_attr("dtype")?, PartialShape::unknown()),
        OutputInfo::new(DType::Int64, v),
    ])
}

fn apply_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let acc = ctx.input_resource::<Accumulator>(0)?;
    let step = ctx.input(1)?.scalar_i64()?;
    acc.apply_dense(step, ctx.input(2)?)
}

fn sparse_apply_factory() -> KernelFactory {
    factory(|init| {
        let known = init.node.attrs.bool_or("has_known_shape", false)?;
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let acc = ctx.input_resource::<Accumulator>(0)?;
            let step = ctx.input(1)?.scalar_i64()?;
            let shape = if known { Some(ctx.input(4)?) } else { None };
            acc.apply_sparse(step, ctx.input(2)?, ctx.input(3)?, shape)
        }))
    })
}

fn take_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let acc = ctx.input_resource::<Accumulator>(0)?;
    let n = ctx.input(1)?.scalar_i64()?;
    let t = acc.take_dense(n)?;
    ctx.output(t);
    Ok(())
}

fn take_sparse_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let acc = ctx.input_resource::<Accumulator>(0)?;
    let n = ctx.input(1)?.scalar_i64()?;
    let (i, v, s) = acc.take_sparse(n)?;
    ctx.output(i);
    ctx.output(v);
    ctx.output(s);
    Ok(())
}

fn count_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let n = ctx.input_resource::<Accumulator>(0)?.num_accumulated();
    ctx.output(Tensor::scalar(n as i32));
    Ok(())
}

fn set_step_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let acc = ctx.input_resource::<Accumulator>(0)?;
    acc.set_global_step(ctx.input(1)?.scalar_i64()?);
    Ok(())
}

/// The graph-level definitions of the accumulator ops.
pub fn op_defs() -> Vec<OpDef> {
    let mut defs = Vec::new();
    for (create, apply, take, count, step) in [
        (
            "ResourceConditionalAccumulator",
            "ResourceAccumulatorApplyGradient",
            "ResourceAccumulatorTakeGradient",
            "ResourceAccumulatorNumAccumulated",
            "ResourceAccumulatorSetGlobalStep",
        ),
        (
            "ConditionalAccumulator",
            "AccumulatorApplyGradient",
            "AccumulatorTakeGradient",
            "AccumulatorNumAccumulated",
            "AccumulatorSetGlobalStep",
        ),
    ] {
        defs.push(OpDef::new(create, &[], infer_handle).stateful());
        defs.push(OpDef::new(apply, &["handle", "local_step", "gradient"], infer_none).stateful());
        defs.push(OpDef::new(take, &["handle", "num_required"], infer_take).stateful());
        defs.push(OpDef::new(count, &["handle"], infer_count).stateful());
        defs.push(OpDef::new(step, &["handle", "new_global_step"], infer_none).stateful());
    }
    defs.push(OpDef::new("SparseConditionalAccumulator", &[], infer_handle).stateful());
    defs.push(
        OpDef::new(
            "SparseAccumulatorApplyGradient",
            &[
                "handle",
                "local_step",
                "gradient_indices",
                "gradient_values",
                "gradient_shape",
            ],
            infer_none,
        )
        .stateful(),
    );
    defs.push(
        OpDef::new(
            "SparseAccumulatorTakeGradient",
            &["handle", "num_required"],
            infer_take_sparse,
        )
        .stateful(),
    );
    defs
}

/// The runtime kernels of the accumulator ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    let blocking = |f: fn(&mut OpContext<'_>) -> Result<()>| {
        factory(move |_| Ok(Box::new(Blocking(f)) as Box<dyn Kernel>))
    };
    let plain = |f: fn(&mut OpContext<'_>) -> Result<()>| {
        factory(move |_| Ok(Box::new(f) as Box<dyn Kernel>))
    };
    let mut out = Vec::new();
    for (create, apply, take, count, step) in [
        (
            "ResourceConditionalAccumulator",
            "ResourceAccumulatorApplyGradient",
            "ResourceAccumulatorTakeGradient",
            "ResourceAccumulatorNumAccumulated",
            "ResourceAccumulatorSetGlobalStep",
        ),
        (
            "ConditionalAccumulator",
            "AccumulatorApplyGradient",
            "AccumulatorTakeGradient",
            "AccumulatorNumAccumulated",
            "AccumulatorSetGlobalStep",
        ),
    ] {
        out.push((create, create_factory(false)));
        out.push((apply, plain(apply_kernel)));
        out.push((take, blocking(take_kernel)));
        out.push((count, plain(count_kernel)));
        out.push((step, plain(set_step_kernel)));
    }
    out.push(("SparseConditionalAccumulator", create_factory(true)));
    out.push(("SparseAccumulatorApplyGradient", sparse_apply_factory()));
    out.push((
        "SparseAccumulatorTakeGradient",
        blocking(take_sparse_kernel),
    ));
    out
}
