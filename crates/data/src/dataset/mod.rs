//! `tf.data`: datasets as values, iterators as resources.
//!
//! Design: every dataset op's kernel outputs a [`DatasetRef`] (a `variant`
//! edge), an immutable description of the pipeline holding its inputs
//! (other datasets, captured tensors) and, for ops taking a function (`f`,
//! `predicate`), that graph function compiled once into a [`Plan`]. Running
//! the pipeline means building a fresh tree of [`DatasetIter`]s from the
//! description ([`Dataset::iterate`]); each iterator pulls elements (a
//! `Vec<Tensor>`, one tensor per component) from its inputs.
//!
//! Iterators are resources (`IteratorV2`, see [`iterator`]): `MakeIterator`
//! builds the tree, `IteratorGetNext` pulls one element. Background work
//! (`prefetch`) runs on dedicated threads owned by the iterator tree, so
//! dropping the tree (re-initializing, closing the session) stops them;
//! parallel `map` runs its calls on the rayon pool from the thread that
//! pulls, never leaving a kernel thread waiting.
//!
//! Function bodies run against a private [`SessionState`] of the dataset op
//! (their random generators live there), so a pipeline needs nothing from
//! the session that built it and its threads may outlive any one run.

pub mod iterator;
mod ops;
mod ragged;
mod sources;
mod transforms;
mod windows;

pub use ragged::RaggedLeaf;

use ferroflow_runtime::{Plan, SessionState, Value};
use ferroflow_tensor::{ensure, with_data, Error, Result, Shape, Tensor};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

/// One element of a dataset: one tensor per component.
pub type Element = Vec<Tensor>;

/// An immutable description of a pipeline stage.
pub trait Dataset: Send + Sync + 'static {
    /// A fresh iterator over the elements, from the start.
    fn iterate(&self, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>>;

    /// How many elements an iteration gives, as TensorFlow's
    /// `cardinality()` counts them: `-1` infinite, `-2` unknown.
    fn cardinality(&self) -> i64 {
        windows::UNKNOWN
    }
}

/// A running pipeline stage.
pub trait DatasetIter: Send {
    /// The next element, or `None` at the end.
    fn next(&mut self) -> Result<Option<Element>>;

    /// Up to `n` next elements already stacked along a new first
    /// dimension, with their count (`Ok(None)` at the end), for iterators
    /// that can do it in one copy (slices of a tensor); `None` when this
    /// iterator cannot, and `batch` pulls elements one at a time.
    fn next_stacked(&mut self, _n: usize) -> Option<Result<Option<(Element, usize)>>> {
        None
    }
}

/// What flows along a dataset op's `variant` output.
#[derive(Clone)]
pub struct DatasetRef(pub Arc<dyn Dataset>);

/// Shared by every iterator of one tree: lets `Session.close` wake threads
/// waiting inside the tree.
#[derive(Clone, Default)]
pub struct IterCtx {
    pub(crate) token: Arc<CancelToken>,
}

/// Something waiting inside an iterator tree that cancellation must wake.
pub(crate) trait Wake: Send + Sync {
    fn wake(&self);
}

/// Cancellation of one iterator tree.
#[derive(Default)]
pub struct CancelToken {
    cancelled: AtomicBool,
    waiters: Mutex<Vec<Weak<dyn Wake>>>,
}

impl CancelToken {
    /// Marks the tree cancelled and wakes every waiter.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        let waiters = std::mem::take(&mut *self.waiters.lock());
        for w in waiters.iter().filter_map(Weak::upgrade) {
            w.wake();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    pub(crate) fn register(&self, w: Weak<dyn Wake>) {
        let mut list = self.waiters.lock();
        list.retain(|w| w.strong_count() > 0);
        list.push(w);
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::cancelled(
                "Iterator was cancelled (its session closed)",
            ))
        } else {
            Ok(())
        }
    }
}

/// A graph function of a dataset op, compiled once, with the tensors it
/// captured (`other_arguments`).
#[derive(Clone)]
pub struct Func {
    pub(crate) name: String,
    pub(crate) plan: Arc<Plan>,
    pub(crate) state: Arc<SessionState>,
    pub(crate) captured: Vec<Value>,
}

impl Func {
    /// Calls the function on an element's components followed by the
    /// captured values; returns its results (a dataset result stays a
    /// resource).
    pub fn call_values(&self, args: Element) -> Result<Vec<Value>> {
        let mut all: Vec<Value> = args.into_iter().map(Value::Tensor).collect();
        all.extend(self.captured.iter().cloned());
        self.plan.run_function(&self.state, all)
    }

    /// Like [`Func::call_values`], with every result a tensor.
    pub fn call(&self, args: Element) -> Result<Element> {
        self.call_values(args)?
            .into_iter()
            .map(|v| {
                v.into_tensor().map_err(|e| {
                    Error::invalid_argument(format!(
                        "function '{}' must return tensors: {}",
                        self.name,
                        e.message()
                    ))
                })
            })
            .collect()
    }

    /// Calls a function returning one dataset (`flat_map`, `interleave`).
    pub fn call_dataset(&self, args: Element) -> Result<DatasetRef> {
        self.call_dataset_values(args.into_iter().map(Value::Tensor).collect())
    }

    /// Like [`Func::call_dataset`], with arguments that may be datasets
    /// (`group_by_window`'s reduce function gets its window as one).
    pub fn call_dataset_values(&self, mut args: Vec<Value>) -> Result<DatasetRef> {
        args.extend(self.captured.iter().cloned());
        let mut out = self.plan.run_function(&self.state, args)?;
        match (out.len(), out.pop()) {
            (1, Some(Value::Resource(r))) => r
                .downcast::<DatasetRef>()
                .map(|d| (*d).clone())
                .map_err(|_| self.not_a_dataset()),
            _ => Err(self.not_a_dataset()),
        }
    }

    fn not_a_dataset(&self) -> Error {
        Error::invalid_argument(format!(
            "function '{}' must return a single dataset",
            self.name
        ))
    }

    /// Calls a predicate: a scalar bool.
    pub fn call_predicate(&self, args: Element) -> Result<bool> {
        let out = self.call(args)?;
        match out.as_slice() {
            [t] if t.rank() == 0 && t.dtype() == ferroflow_tensor::DType::Bool => t.scalar_bool(),
            _ => Err(Error::invalid_argument(
                "Filter predicate `f` must return a scalar bool.",
            )),
        }
    }
}

/// Row `i` of `t` along its first dimension.
pub(crate) fn row(t: &Tensor, i: usize) -> Result<Tensor> {
    let dims = &t.dims()[1..];
    let n: usize = dims.iter().product();
    let shape = Shape::new(dims);
    with_data!(t.data(), v => Tensor::from_vec(shape, v[i * n..(i + 1) * n].to_vec()))
}

/// Rows `start..start + k` of `t` along its first dimension (one copy).
pub(crate) fn rows(t: &Tensor, start: usize, k: usize) -> Result<Tensor> {
    let mut dims = t.dims().to_vec();
    let n: usize = dims[1..].iter().product();
    dims[0] = k;
    let shape = Shape::new(&dims);
    with_data!(t.data(), v => Tensor::from_vec(shape, v[start * n..(start + k) * n].to_vec()))
}

/// Which components of an element make up SparseTensors and
/// RaggedTensors (set by ferroflow's Python on the ops that batch, unbatch
/// or slice elements: the `_sparse` and `_ragged` attrs); every other
/// component is a dense tensor.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Composites {
    /// Where each SparseTensor's (indices, values, dense_shape) start.
    pub sparse: Vec<usize>,
    /// Each RaggedTensor's components (flat values, then its row splits).
    pub ragged: Vec<RaggedLeaf>,
}

impl Composites {
    pub fn is_empty(&self) -> bool {
        self.sparse.is_empty() && self.ragged.is_empty()
    }

    fn ragged_at(&self, c: usize) -> Option<&RaggedLeaf> {
        self.ragged.iter().find(|r| r.start == c)
    }
}

/// The rows of an element along its first dimension, SparseTensor and
/// RaggedTensor leaves included: `from_tensor_slices` and `unbatch`.
pub(crate) struct Rows {
    comps: Vec<Tensor>,
    sparse: Vec<SparseRows>,
    ragged: Vec<ragged::RaggedRows>,
    n: usize,
}

/// One SparseTensor's entries grouped by their first index.
struct SparseRows {
    start: usize,
    rank: usize,
    indices: Vec<i64>,
    by_row: Vec<Vec<i64>>,
    dense: Vec<i64>,
}

impl Rows {
    /// Checks every component has the same number of rows.
    pub(crate) fn new(comps: Vec<Tensor>, layout: &Composites) -> Result<Rows> {
        let sparse = &layout.sparse[..];
        let mut n: Option<usize> = None;
        let mut check = |d: usize| -> Result<()> {
            match n {
                Some(m) if m != d => Err(Error::invalid_argument(format!(
                    "All components must have the same size in the 0th dimension, got {m} and {d}"
                ))),
                _ => {
                    n = Some(d);
                    Ok(())
                }
            }
        };
        let mut groups = Vec::new();
        let mut ragged = Vec::new();
        let mut c = 0;
        while c < comps.len() {
            if let Some(leaf) = layout.ragged_at(c) {
                let r = ragged::RaggedRows::new(&comps, *leaf)?;
                check(r.len())?;
                c += leaf.num_components();
                ragged.push(r);
            } else if sparse.contains(&c) && c + 2 < comps.len() {
                let dense = comps[c + 2].to_i64_vec()?;
                let rank = dense.len();
                ensure!(
                    rank != 0,
                    invalid_argument,
                    "a SparseTensor to slice must be at least 1-dimensional"
                );
                let rows = usize::try_from(dense[0]).unwrap_or(0);
                check(rows)?;
                let indices = comps[c].to_i64_vec()?;
                let nnz = comps[c + 1].num_elements();
                ensure!(
                    indices.len() == nnz * rank,
                    invalid_argument,
                    "a SparseTensor's indices must be [{nnz}, {rank}] for {nnz} values of rank {rank}, got shape {}",
                    comps[c].shape()
                );
                let mut by_row = vec![Vec::new(); rows];
                for (k, entry) in indices.chunks(rank).enumerate() {
                    let r = usize::try_from(entry[0])
                        .ok()
                        .filter(|&r| r < rows)
                        .ok_or_else(|| {
                            Error::invalid_argument(format!(
                                "SparseTensor index {} is out of bounds for its dense shape {dense:?}",
                                entry[0]
                            ))
                        })?;
                    by_row[r].push(k as i64);
                }
                groups.push(SparseRows {
                    start: c,
                    rank,
                    indices,
                    by_row,
                    dense,
                });
                c += 3;
            } else {
                let t = &comps[c];
                ensure!(
                    t.rank() != 0,
                    invalid_argument,
                    "Input element must have a non-scalar value in each component."
                );
                check(t.dims()[0])?;
                c += 1;
            }
        }
        Ok(Rows {
            comps,
            sparse: groups,
            ragged,
            n: n.unwrap_or(0),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Row `i` of every component.
    pub(crate) fn row(&self, i: usize) -> Result<Element> {
        let mut out = Vec::with_capacity(self.comps.len());
        let mut c = 0;
        while c < self.comps.len() {
            if let Some(r) = self.ragged.iter().find(|r| r.leaf.start == c) {
                out.extend(r.row(i)?);
                c += r.leaf.num_components();
            } else if let Some(g) = self.sparse.iter().find(|g| g.start == c) {
                let picks = &g.by_row[i];
                let mut idx = Vec::with_capacity(picks.len() * (g.rank - 1));
                for &k in picks {
                    let k = k as usize;
                    idx.extend_from_slice(&g.indices[k * g.rank + 1..(k + 1) * g.rank]);
                }
                out.push(Tensor::from_vec(vec![picks.len(), g.rank - 1], idx)?);
                let which = Tensor::vector(picks.clone());
                out.push(ferroflow_tensor::kernels::array::gather(
                    &self.comps[c + 1],
                    &which,
                    0,
                    0,
                )?);
                out.push(Tensor::vector(g.dense[1..].to_vec()));
                c += 3;
            } else {
                out.push(row(&self.comps[c], i)?);
                c += 1;
            }
        }
        Ok(out)
    }
}

/// Registers the dataset and iterator ops and kernels.
pub(crate) fn register() {
    ops::register();
}
