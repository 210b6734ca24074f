//! The update ops: `ApplyFused` (the dense updates of a whole step, for
//! every variable of one dtype at once) and `SparseApplyFused` (one
//! variable, an `IndexedSlices` gradient).

use crate::dispatch::run_dense;
use crate::real::{Real, B16, H16};
use crate::rules::{Rule, RuleKind, RuleOptions};
use ferroflow_graph::{Attrs, AttrsExt, InferContext, OpDef, OutputInfo};
use ferroflow_runtime::{factory, KernelFactory, OpContext, Variable};
use ferroflow_tensor::prefetch::prefetch_arc;
use ferroflow_tensor::team::Sweep;
use ferroflow_tensor::{bail, bf16, f16, DType, Element, Error, Result, Tensor};
use parking_lot::{Mutex, RwLockWriteGuard};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn options(a: &Attrs) -> Result<RuleOptions> {
    Ok(RuleOptions {
        nesterov: a.bool_or("use_nesterov", false)?,
        centered: a.bool_or("centered", false)?,
        shrinkage: a.bool_or("shrinkage", false)?,
    })
}

fn kind(a: &Attrs) -> Result<RuleKind> {
    let name = a.str_or("rule", "")?;
    RuleKind::from_name(&name).ok_or_else(|| Error::value(format!("unknown update rule '{name}'")))
}

fn dense_refs(a: &Attrs) -> usize {
    let n = a.int_or("N", 0).unwrap_or(0).max(0) as usize;
    let k = kind(a)
        .map(|k| k.slots(a.bool_or("centered", false).unwrap_or(false)))
        .unwrap_or(0);
    n * (1 + k)
}

fn sparse_refs(a: &Attrs) -> usize {
    1 + kind(a)
        .map(|k| k.slots(a.bool_or("centered", false).unwrap_or(false)))
        .unwrap_or(0)
}

fn check_hypers(ctx: &InferContext, first: usize, kind: RuleKind, dtype: DType) -> Result<()> {
    for (i, name) in kind.hyper_names().iter().enumerate() {
        check_hyper(ctx, first + i, name, dtype)?;
    }
    Ok(())
}

/// Checks the hyper-parameter input `at` named `name`: a scalar of the
/// variables' `dtype` (int64 for `global_step`).
pub(crate) fn check_hyper(ctx: &InferContext, at: usize, name: &str, dtype: DType) -> Result<()> {
    let want = if name == "global_step" {
        DType::Int64
    } else {
        dtype
    };
    if ctx.dtype(at) != want {
        bail!(
            type_error,
            "hyper-parameter '{name}' of '{}' must be {want}, got {}",
            ctx.name,
            ctx.dtype(at)
        );
    }
    if !matches!(ctx.shape(at).rank(), None | Some(0)) {
        return Err(ctx.shape_error(format!("hyper-parameter '{name}' must be a scalar")));
    }
    Ok(())
}

fn infer_dense(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = ctx.attrs();
    let kind = kind(a)?;
    let n = a.int("N")? as usize;
    let s = kind.slots(a.bool_or("centered", false)?);
    let want = n * (1 + s) + n + kind.hyper_names().len();
    if ctx.num_inputs() != want {
        bail!(
            value,
            "'{}' expects {want} inputs for {n} variables, got {}",
            ctx.name,
            ctx.num_inputs()
        );
    }
    let dtype = ctx.dtype(0);
    for i in 0..n {
        let var = ctx.shape(i);
        let grad = ctx.shape(n * (1 + s) + i);
        if !var.is_compatible_with(grad) {
            return Err(ctx.shape_error(format!(
                "var and grad do not have the same shape {var} {grad}"
            )));
        }
        for j in 0..n * (1 + s) + n {
            if ctx.dtype(j) != dtype {
                bail!(
                    type_error,
                    "'{}': every variable, slot and gradient must be {dtype}, input {j} is {}",
                    ctx.name,
                    ctx.dtype(j)
                );
            }
        }
    }
    check_hypers(ctx, n * (2 + s), kind, dtype)?;
    Ok(Vec::new())
}

fn infer_sparse(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = ctx.attrs();
    let kind = kind(a)?;
    let s = kind.slots(a.bool_or("centered", false)?);
    let want = 1 + s + 2 + kind.hyper_names().len();
    if ctx.num_inputs() != want {
        bail!(
            value,
            "'{}' expects {want} inputs, got {}",
            ctx.name,
            ctx.num_inputs()
        );
    }
    let dtype = ctx.dtype(0);
    ctx.expect_dtype(s + 2, &[DType::Int32, DType::Int64])?;
    if ctx.dtype(s + 1) != dtype {
        bail!(
            type_error,
            "'{}': gradient values must be {dtype}",
            ctx.name
        );
    }
    check_hypers(ctx, s + 3, kind, dtype)?;
    Ok(Vec::new())
}

/// The graph-level definitions of the update ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("ApplyFused", &["vars*"], infer_dense).ref_prefix(dense_refs),
        OpDef::new("SparseApplyFused", &["var", "slots*"], infer_sparse).ref_prefix(sparse_refs),
    ]
}

/// A float type that lives in tensors as `Stored`.
trait Lanes: Real {
    type Stored: Element + Copy;
}

impl Lanes for f32 {
    type Stored = f32;
}
impl Lanes for f64 {
    type Stored = f64;
}
impl Lanes for H16 {
    type Stored = f16;
}
impl Lanes for B16 {
    type Stored = bf16;
}

fn view<T: Lanes>(t: &Tensor) -> Result<&[T]> {
    let s = t.as_slice::<T::Stored>()?;
    // SAFETY: `T` is `T::Stored` itself or a `repr(transparent)` wrapper of it.
    Ok(unsafe { std::slice::from_raw_parts(s.as_ptr() as *const T, s.len()) })
}

fn view_mut<T: Lanes>(t: &mut Tensor) -> Result<&mut [T]> {
    let s = t.make_mut::<T::Stored>()?;
    // SAFETY: as in `view`.
    Ok(unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut T, s.len()) })
}

/// Write locks on a set of variables, taken in address order so two steps
/// locking overlapping sets cannot deadlock.
struct Locks<'a> {
    guards: Vec<RwLockWriteGuard<'a, Option<Tensor>>>,
}

/// The address order of an update's variables, kept from the previous run:
/// an op updates the same variables every step, and sorting a thousand of
/// them again each time costs tens of microseconds.
#[derive(Default)]
pub(crate) struct LockOrder {
    addresses: Vec<usize>,
    order: Vec<usize>,
}

impl<'a> Locks<'a> {
    fn take(vars: &[&'a Arc<Variable>], memo: Option<&Mutex<LockOrder>>) -> Result<Locks<'a>> {
        let mut guards: Vec<Option<RwLockWriteGuard<'a, Option<Tensor>>>> =
            (0..vars.len()).map(|_| None).collect();
        let mut lock_all = |order: &[usize]| -> Result<()> {
            for &i in order {
                let g = vars[i].lock();
                if g.is_none() {
                    return Err(vars[i].uninitialized());
                }
                guards[i] = Some(g);
            }
            Ok(())
        };
        let mut memo = memo.and_then(Mutex::try_lock);
        let same = memo.as_deref().is_some_and(|m| {
            m.addresses.len() == vars.len()
                && m.addresses
                    .iter()
                    .zip(vars)
                    .all(|(&a, v)| a == Arc::as_ptr(v) as usize)
        });
        match memo.as_deref_mut() {
            Some(m) if same => lock_all(&m.order)?,
            _ => {
                let addresses: Vec<usize> = vars.iter().map(|v| Arc::as_ptr(v) as usize).collect();
                let mut order: Vec<usize> = (0..vars.len()).collect();
                order.sort_unstable_by_key(|&i| addresses[i]);
                for w in order.windows(2) {
                    if addresses[w[0]] == addresses[w[1]] {
                        bail!(
                            invalid_argument,
                            "variable {} appears twice in one update",
                            vars[w[0]].name()
                        );
                    }
                }
                lock_all(&order)?;
                if let Some(m) = memo.as_deref_mut() {
                    m.order = order;
                    m.addresses = addresses;
                }
            }
        }
        drop(memo);
        Ok(Locks {
            guards: guards.into_iter().map(|g| g.expect("locked")).collect(),
        })
    }

    /// Mutable element views of every locked variable, in input order.
    fn views<T: Lanes>(&mut self) -> Result<Vec<&mut [T]>> {
        self.guards
            .iter_mut()
            .map(|g| view_mut::<T>(g.as_mut().expect("checked initialized")))
            .collect()
    }
}

fn hypers(ctx: &OpContext<'_>, first: usize, kind: RuleKind) -> Result<([f64; 6], i64)> {
    let mut h = [0.0; 6];
    let mut t = 0;
    for (i, name) in kind.hyper_names().iter().enumerate() {
        let v = ctx.input(first + i)?;
        if *name == "global_step" {
            t = v.scalar_i64()? + 1;
        } else {
            h[i] = v.scalar_f64()?;
        }
    }
    Ok((h, t))
}

fn rule<T: Real>(kind: RuleKind, opts: RuleOptions, h: [f64; 6], t: i64) -> Rule<T> {
    Rule {
        kind,
        opts,
        h: h.map(T::from_f64),
        t,
    }
}

/// The run-time argument checks some TensorFlow kernels make. (Negated
/// comparisons on purpose: a NaN hyper-parameter must fail them.)
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn check_args(kind: RuleKind, h: &[f64; 6], sparse: bool, shrinkage: bool) -> Result<()> {
    let bad = |what: &str| Err(Error::invalid_argument(what.to_string()));
    match kind {
        RuleKind::ProximalAdagrad => {
            if !(h[0] > 0.0) {
                return bad("lr is not a positive scalar");
            }
            if !(h[1] >= 0.0) {
                return bad("l1 regularization strength is not a non-negative scalar");
            }
            if !(h[2] >= 0.0) {
                return bad("l2 regularization strength is not a non-negative scalar");
            }
        }
        RuleKind::Ftrl if sparse => {
            if !(h[0] > 0.0) {
                return bad("lr is not a positive scalar");
            }
            if !(h[1] >= 0.0) {
                return bad("l1 regularization strength is not a non-negative scalar");
            }
            if !(h[2] >= 0.0) {
                return bad("l2 regularization strength is not a non-negative scalar");
            }
            if shrinkage && !(h[3] >= 0.0) {
                return bad("l2 shrinkage regularization strength is not a non-negative scalar");
            }
            if !(h[4] <= 0.0) {
                return bad("lr_power is not a non-positive scalar");
            }
        }
        _ => {}
    }
    Ok(())
}

fn dense_kernel<T: Lanes>(
    ctx: &mut OpContext<'_>,
    kind: RuleKind,
    opts: RuleOptions,
    n: usize,
    s: usize,
    sweep: Sweep,
    lock_order: &Mutex<LockOrder>,
) -> Result<()> {
    let ctx: &OpContext<'_> = ctx;
    let refs: Vec<&Arc<Variable>> = (0..n * (1 + s))
        .map(|i| ctx.input_ref(i))
        .collect::<Result<_>>()?;
    let grads: Vec<&Tensor> = (0..n)
        .map(|i| ctx.input(n * (1 + s) + i))
        .collect::<Result<_>>()?;
    // The last step's data pushed these scattered headers out of the cache:
    // request them all up front so the misses overlap instead of coming one
    // after another (500-variable SGD step: 10-20 µs less).
    for v in &refs {
        prefetch_arc(v);
    }
    for g in &grads {
        g.prefetch_header();
    }
    let (h, t) = hypers(ctx, n * (2 + s), kind)?;
    check_args(kind, &h, false, opts.shrinkage)?;
    let mut locks = Locks::take(&refs, Some(lock_order))?;
    for g in &locks.guards {
        if let Some(t) = g.as_ref() {
            t.prefetch_header();
        }
    }
    for i in 0..n {
        let vshape = locks.guards[i].as_ref().expect("initialized").shape();
        if vshape.dims() != grads[i].dims() {
            bail!(
                invalid_argument,
                "var and grad do not have the same shape{} {}",
                vshape,
                grads[i].shape()
            );
        }
        for j in 0..s {
            let slot = locks.guards[n + i * s + j].as_ref().expect("initialized");
            if slot.dims() != vshape.dims() {
                bail!(
                    invalid_argument,
                    "var and {} do not have the same shape{} {}",
                    refs[n + i * s + j].name(),
                    vshape,
                    slot.shape()
                );
            }
        }
    }
    // Guards are in input order: the n variables, then each one's s slots.
    let (var_guards, slot_guards) = locks.guards.split_at_mut(n);
    let mut slot_guards = slot_guards.iter_mut();
    let mut work = Vec::with_capacity(n);
    for (var, grad) in var_guards.iter_mut().zip(&grads) {
        let slots = slot_guards
            .by_ref()
            .take(s)
            .map(|g| view_mut::<T>(g.as_mut().expect("checked initialized")))
            .collect::<Result<_>>()?;
        let var = view_mut::<T>(var.as_mut().expect("checked initialized"))?;
        work.push((var, slots, view::<T>(grad)?));
    }
    run_dense(&rule::<T>(kind, opts, h, t), work, sweep);
    Ok(())
}

/// Unique indices (first-occurrence order) with their rows summed, starting
/// from zero and adding in index order, as TensorFlow's deduplication does.
fn dedup<T: Real>(indices: &[i64], values: &[T], inner: usize) -> (Vec<i64>, Vec<T>) {
    let mut pos: HashMap<i64, usize> = HashMap::new();
    let mut uniq = Vec::new();
    let mut sums: Vec<T> = Vec::new();
    for (k, &i) in indices.iter().enumerate() {
        let p = *pos.entry(i).or_insert_with(|| {
            uniq.push(i);
            sums.extend(std::iter::repeat_n(T::zero(), inner));
            uniq.len() - 1
        });
        for j in 0..inner {
            sums[p * inner + j] = sums[p * inner + j].add(values[k * inner + j]);
        }
    }
    (uniq, sums)
}

fn sparse_kernel<T: Lanes>(
    ctx: &mut OpContext<'_>,
    kind: RuleKind,
    opts: RuleOptions,
    s: usize,
) -> Result<()> {
    let ctx: &OpContext<'_> = ctx;
    let refs: Vec<&Arc<Variable>> = (0..1 + s)
        .map(|i| ctx.input_ref(i))
        .collect::<Result<_>>()?;
    let values = ctx.input(1 + s)?;
    let indices = ctx.input(2 + s)?.to_i64_vec()?;
    let (h, t) = hypers(ctx, 3 + s, kind)?;
    check_args(kind, &h, true, opts.shrinkage)?;
    let mut locks = Locks::take(&refs, None)?;
    let vshape = locks.guards[0]
        .as_ref()
        .expect("initialized")
        .shape()
        .clone();
    let rows = vshape.dims().first().copied().ok_or_else(|| {
        Error::invalid_argument(format!(
            "{}: a sparse update needs a variable of rank >= 1",
            refs[0].name()
        ))
    })?;
    let inner: usize = vshape.num_elements() / std::cmp::max(rows, 1);
    if values.num_elements() != indices.len() * inner {
        bail!(
            invalid_argument,
            "{}: gradient values of shape {} do not match {} indices of rows of {inner} elements",
            refs[0].name(),
            values.shape(),
            indices.len()
        );
    }
    for (k, &i) in indices.iter().enumerate() {
        if i < 0 || i as usize >= rows {
            bail!(
                invalid_argument,
                "Index {i} at offset {k} in indices is out of range"
            );
        }
    }
    let r = rule::<T>(kind, opts, h, t);
    let g = view::<T>(values)?;
    let mut views = locks.views::<T>()?;
    let (var, slots) = views.split_first_mut().expect("var");
    match kind {
        RuleKind::Sgd => {
            // No deduplication: duplicates apply one at a time, in order.
            for (k, &i) in indices.iter().enumerate() {
                let row = &mut var[i as usize * inner..(i as usize + 1) * inner];
                r.dense(row, &mut [], &g[k * inner..(k + 1) * inner]);
            }
        }
        RuleKind::Adam => sparse_adam(&r, var, slots, &indices, g, inner),
        _ => {
            let (uniq, sums) = dedup(&indices, g, inner);
            for (p, &i) in uniq.iter().enumerate() {
                let range = i as usize * inner..(i as usize + 1) * inner;
                let grow = &sums[p * inner..(p + 1) * inner];
                if inner == 1 && r.has_scalar_path() {
                    let mut srefs: Vec<&mut T> =
                        slots.iter_mut().map(|sl| &mut sl[range.start]).collect();
                    r.scalar(&mut var[range.start], &mut srefs, grow[0]);
                } else {
                    let mut srows: Vec<&mut [T]> =
                        slots.iter_mut().map(|sl| &mut sl[range.clone()]).collect();
                    r.row(&mut var[range.clone()], &mut srows, grow);
                }
            }
        }
    }
    Ok(())
}

/// TensorFlow 1's sparse Adam (not lazy): every row of `m` and `v` decays
/// and every row of the variable moves; touched rows add their gradient.
fn sparse_adam<T: Real>(
    r: &Rule<T>,
    var: &mut [T],
    slots: &mut [&mut [T]],
    indices: &[i64],
    g: &[T],
    inner: usize,
) {
    let (alpha, b1c, b2c, eps) = r.adam_scalars();
    let (b1, b2) = (r.h[3], r.h[4]);
    let (uniq, sums) = dedup(indices, g, inner);
    let [m, v] = slots else {
        unreachable!("adam has two slots")
    };
    for x in m.iter_mut() {
        *x = x.mul(b1);
    }
    for (p, &i) in uniq.iter().enumerate() {
        for j in 0..inner {
            let at = i as usize * inner + j;
            m[at] = m[at].add(sums[p * inner + j].mul(b1c));
        }
    }
    for x in v.iter_mut() {
        *x = x.mul(b2);
    }
    for (p, &i) in uniq.iter().enumerate() {
        for j in 0..inner {
            let at = i as usize * inner + j;
            let gj = sums[p * inner + j];
            v[at] = v[at].add(gj.mul(gj.mul(b2c)));
        }
    }
    for ((x, &mm), &vv) in var.iter_mut().zip(m.iter()).zip(v.iter()) {
        *x = x.sub(alpha.mul(mm).div(vv.sqrt().add(eps)));
    }
}

macro_rules! by_dtype {
    ($dtype:expr, $f:ident, $($arg:expr),*) => {
        match $dtype {
            DType::Float32 => $f::<f32>($($arg),*),
            DType::Float64 => $f::<f64>($($arg),*),
            DType::Float16 => $f::<H16>($($arg),*),
            DType::BFloat16 => $f::<B16>($($arg),*),
            d => Err(Error::invalid_argument(format!("optimizer updates need a float variable, got {d}"))),
        }
    };
}

/// Runs the dense update of one variable, with `ctx` laid out as
/// `ApplyFused`'s inputs for `N = 1` (for TensorFlow's own update ops).
pub(crate) fn update_one_variable(
    ctx: &mut OpContext<'_>,
    dtype: DType,
    kind: RuleKind,
    opts: RuleOptions,
    s: usize,
    lock_order: &Mutex<LockOrder>,
) -> Result<()> {
    by_dtype!(
        dtype,
        dense_kernel,
        ctx,
        kind,
        opts,
        1,
        s,
        Sweep::Forward,
        lock_order
    )
}

/// Runs the sparse update of one variable, with `ctx` laid out as
/// `SparseApplyFused`'s inputs (for TensorFlow's own sparse update ops).
pub(crate) fn update_one_sparse(
    ctx: &mut OpContext<'_>,
    dtype: DType,
    kind: RuleKind,
    opts: RuleOptions,
    s: usize,
) -> Result<()> {
    by_dtype!(dtype, sparse_kernel, ctx, kind, opts, s)
}

/// The kernels of the update ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "ApplyFused",
            factory(|init| {
                let a = &init.node.attrs;
                let kind = kind(a)?;
                let opts = options(a)?;
                let n = a.int("N")? as usize;
                let s = kind.slots(opts.centered);
                let dtype = init
                    .node
                    .inputs
                    .first()
                    .map(|o| init.graph.output(*o).dtype)
                    .unwrap_or(DType::Float32);
                // Successive runs sweep the variables in alternate directions
                // (see `run_dense`).
                let backward = AtomicBool::new(false);
                let lock_order = Mutex::new(LockOrder::default());
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let sweep = if backward.fetch_xor(true, Ordering::Relaxed) {
                        Sweep::Backward
                    } else {
                        Sweep::Forward
                    };
                    by_dtype!(
                        dtype,
                        dense_kernel,
                        ctx,
                        kind,
                        opts,
                        n,
                        s,
                        sweep,
                        &lock_order
                    )
                }))
            }),
        ),
        (
            "SparseApplyFused",
            factory(|init| {
                let a = &init.node.attrs;
                let kind = kind(a)?;
                let opts = options(a)?;
                let s = kind.slots(opts.centered);
                let dtype = init.graph.output(init.node.inputs[0]).dtype;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    by_dtype!(dtype, sparse_kernel, ctx, kind, opts, s)
                }))
            }),
        ),
    ]
}
