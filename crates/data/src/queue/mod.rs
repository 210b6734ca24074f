//! TF1's queues as resources with blocking kernels: `FIFOQueueV2`,
//! `PaddingFIFOQueueV2`, `RandomShuffleQueueV2` and `PriorityQueueV2`, and
//! the ops on their handles (`QueueEnqueueV2`, `QueueEnqueueManyV2`,
//! `QueueDequeueV2`, `QueueDequeueManyV2`, `QueueDequeueUpToV2`,
//! `QueueCloseV2`, `QueueIsClosedV2`, `QueueSizeV2`).
//!
//! Semantics follow TensorFlow's queue kernels:
//! * An enqueue waits for room (`capacity`), a dequeue for elements; a
//!   closed queue refuses new enqueues (`CancelledError`), lets pending
//!   ones finish unless closed with `cancel_pending_enqueues`, and fails a
//!   dequeue that cannot be satisfied with `OutOfRangeError`
//!   (`dequeue_up_to` returns what is left instead).
//! * Enqueues and dequeues are served in arrival order, each one whole
//!   before the next: the rows of one `enqueue_many` stay together and a
//!   `dequeue_many` larger than the capacity fills up progressively, as in
//!   TensorFlow.
//! * A `RandomShuffleQueue` keeps `min_after_dequeue` elements until it is
//!   closed and picks each dequeued element with TensorFlow's generator
//!   (Philox keyed by `seed`, `seed2`), so a seeded queue fed and drained
//!   by one thread yields TensorFlow's order.
//! * `Session.close` cancels every queue of the session: all waiters get
//!   `CancelledError` at once.
//!
//! The gradient accumulators (`ConditionalAccumulator`,
//! `SparseConditionalAccumulator`) are in [`accumulator`].
//!
//! `enqueue_many` keeps its batch tensors as they are and queues rows that
//! point into them; a `dequeue_many` that takes exactly one whole enqueued
//! batch hands the same buffers back, any other takes one copy per row.

pub mod accumulator;

use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::blocking::{wait_while, Cancellable};
use ferroflow_runtime::{factory, Kernel, KernelFactory, OpContext};
use ferroflow_tensor::kernels::random::Philox;
use ferroflow_tensor::{bail, ensure, DType, Data, Element, Error, Result, Shape, Tensor};
use parking_lot::{Condvar, Mutex};

/// Runs `$body` with `$T` the element type of `$dt` (`Data` result).
macro_rules! for_dtype {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            DType::Float16 => {
                type $T = ferroflow_tensor::f16;
                $body
            }
            DType::BFloat16 => {
                type $T = ferroflow_tensor::bf16;
                $body
            }
            DType::Int8 => {
                type $T = i8;
                $body
            }
            DType::Int16 => {
                type $T = i16;
                $body
            }
            DType::Int32 => {
                type $T = i32;
                $body
            }
            DType::Int64 => {
                type $T = i64;
                $body
            }
            DType::UInt8 => {
                type $T = u8;
                $body
            }
            DType::UInt16 => {
                type $T = u16;
                $body
            }
            DType::Bool => {
                type $T = bool;
                $body
            }
            DType::String => {
                type $T = Vec<u8>;
                $body
            }
            other => {
                bail!(unimplemented, "queues cannot hold {other} tensors")
            }
        }
    };
}

/// Which discipline a queue follows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// First in, first out (`FIFOQueue`).
    Fifo,
    /// First in, first out; `dequeue_many` pads to the batch's largest shape.
    Padding,
    /// Random order, keeping `min_after_dequeue` elements until closed.
    Shuffle,
    /// Lowest `int64` priority (component 0) first.
    Priority,
}

impl QueueKind {
    /// TensorFlow's class name, used in messages.
    pub fn type_name(self) -> &'static str {
        match self {
            QueueKind::Fifo => "FIFOQueue",
            QueueKind::Padding => "PaddingFIFOQueue",
            QueueKind::Shuffle => "RandomShuffleQueue",
            QueueKind::Priority => "PriorityQueue",
        }
    }
}

/// How a queue is built (the queue op's attributes).
#[derive(Clone, Debug)]
pub struct QueueConfig {
    pub kind: QueueKind,
    /// The resource's name in messages (TensorFlow's `_<id>_<node>`).
    pub name: String,
    pub dtypes: Vec<DType>,
    /// One per component, or empty when not given.
    pub shapes: Vec<PartialShape>,
    /// `None`: unbounded.
    pub capacity: Option<usize>,
    pub min_after_dequeue: usize,
    pub seed: u64,
    pub seed2: u64,
}

/// One queued element: its component tensors, or one row of each of the
/// tensors of an `enqueue_many`.
#[derive(Clone)]
struct Elem {
    chunk: Arc<[Tensor]>,
    row: Option<usize>,
}

impl Elem {
    fn shape(&self, c: usize) -> Shape {
        let dims = self.chunk[c].dims();
        match self.row {
            None => Shape::new(dims),
            Some(_) => Shape::new(&dims[1..]),
        }
    }

    fn component(&self, c: usize) -> Result<Tensor> {
        let t = &self.chunk[c];
        match self.row {
            None => Ok(t.clone()),
            Some(r) => {
                let shape = self.shape(c);
                let n = shape.num_elements();
                let data = for_dtype!(t.dtype(), T => {
                    let s = t.as_slice::<T>()?;
                    T::wrap(s[r * n..(r + 1) * n].to_vec())
                });
                Tensor::new(shape, data)
            }
        }
    }
}

/// A priority-queue entry: lowest priority first, then arrival order.
struct Prio {
    priority: i64,
    seq: u64,
    elem: Elem,
}

impl PartialEq for Prio {
    fn eq(&self, o: &Self) -> bool {
        (self.priority, self.seq) == (o.priority, o.seq)
    }
}
impl Eq for Prio {}
impl PartialOrd for Prio {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Prio {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        // BinaryHeap pops the largest: the smallest priority must compare largest.
        (o.priority, o.seq).cmp(&(self.priority, self.seq))
    }
}

enum Store {
    Deque(VecDeque<Elem>),
    Bag(Vec<Elem>),
    Heap(BinaryHeap<Prio>),
}

impl Store {
    fn len(&self) -> usize {
        match self {
            Store::Deque(d) => d.len(),
            Store::Bag(b) => b.len(),
            Store::Heap(h) => h.len(),
        }
    }
}

struct State {
    store: Store,
    closed: bool,
    cancel_pending: bool,
    /// Set by `Session.close`: every wait fails with `CancelledError`.
    cancelled: bool,
    /// Waiting enqueues and dequeues, served front first.
    enqueuers: VecDeque<u64>,
    dequeuers: VecDeque<u64>,
    next_ticket: u64,
    /// 32-bit words drawn from the shuffle generator so far.
    drawn: u64,
    /// Arrival counter (priority ties dequeue in arrival order).
    seq: u64,
}

/// A queue resource (see the module docs).
pub struct Queue {
    cfg: QueueConfig,
    philox: Philox,
    state: Mutex<State>,
    cv: Condvar,
    registered: AtomicBool,
}

/// Which dequeue op runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DequeueMode {
    One,
    Many,
    UpTo,
}

impl Queue {
    /// A new, open, empty queue.
    pub fn new(cfg: QueueConfig) -> Result<Queue> {
        if !cfg.shapes.is_empty() && cfg.shapes.len() != cfg.dtypes.len() {
            bail!(
                invalid_argument,
                "{} '{}': {} component types but {} shapes",
                cfg.kind.type_name(),
                cfg.name,
                cfg.dtypes.len(),
                cfg.shapes.len()
            );
        }
        let padding_shapes_missing =
            cfg.shapes.is_empty() || cfg.shapes.iter().any(|s| s.rank().is_none());
        if cfg.kind == QueueKind::Padding && padding_shapes_missing {
            bail!(
                invalid_argument,
                "PaddingFIFOQueue '{}': shapes must be given, each of known rank \
                 (dimensions may be unknown)",
                cfg.name
            );
        }
        if cfg.kind == QueueKind::Priority && cfg.dtypes.first() != Some(&DType::Int64) {
            bail!(
                invalid_argument,
                "PriorityQueue '{}': the first component must be the int64 priority",
                cfg.name
            );
        }
        let store = match cfg.kind {
            QueueKind::Fifo | QueueKind::Padding => Store::Deque(VecDeque::new()),
            QueueKind::Shuffle => Store::Bag(Vec::new()),
            QueueKind::Priority => Store::Heap(BinaryHeap::new()),
        };
        let (mut seed, mut seed2) = (cfg.seed, cfg.seed2);
        if seed == 0 && seed2 == 0 {
            // TensorFlow draws fresh seeds for an unseeded queue.
            use std::hash::BuildHasher;
            let h = std::collections::hash_map::RandomState::new();
            seed = h.hash_one(&cfg.name);
            seed2 = h.hash_one(seed);
        }
        Ok(Queue {
            philox: Philox::new(seed, seed2),
            cfg,
            state: Mutex::new(State {
                store,
                closed: false,
                cancel_pending: false,
                cancelled: false,
                enqueuers: VecDeque::new(),
                dequeuers: VecDeque::new(),
                next_ticket: 0,
                drawn: 0,
                seq: 0,
            }),
            cv: Condvar::new(),
            registered: AtomicBool::new(false),
        })
    }

    /// The queue's configuration.
    pub fn config(&self) -> &QueueConfig {
        &self.cfg
    }

    fn desc(&self) -> String {
        format!("{} '{}'", self.cfg.kind.type_name(), self.cfg.name)
    }

    /// Elements now in the queue.
    pub fn size(&self) -> usize {
        self.state.lock().store.len()
    }

    /// Whether the queue was closed.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Closes the queue; with `cancel_pending_enqueues` the enqueues still
    /// waiting fail with `CancelledError`.
    pub fn close(&self, cancel_pending_enqueues: bool) {
        let mut st = self.state.lock();
        st.closed = true;
        st.cancel_pending |= cancel_pending_enqueues;
        drop(st);
        self.cv.notify_all();
    }

    fn check_dtypes(&self, comps: &[Tensor]) -> Result<()> {
        ensure!(
            comps.len() == self.cfg.dtypes.len(),
            invalid_argument,
            "{}: wrong number of components in tuple. Expected {}, got {}",
            self.desc(),
            self.cfg.dtypes.len(),
            comps.len()
        );
        for (i, (t, &d)) in comps.iter().zip(&self.cfg.dtypes).enumerate() {
            ensure!(
                t.dtype() == d,
                invalid_argument,
                "{}: type mismatch in tuple component {i}. Expected {}, got {}",
                self.desc(),
                d.name(),
                t.dtype().name()
            );
        }
        Ok(())
    }

    fn check_shape(&self, i: usize, got: &[usize], batched: bool) -> Result<()> {
        let Some(spec) = self.cfg.shapes.get(i) else {
            return Ok(());
        };
        let shape = Shape::new(got);
        if !spec.is_compatible_with_shape(&shape) {
            let want = match spec.dims() {
                None => "?".to_string(),
                Some(d) => format!(
                    "[{}]",
                    d.iter()
                        .map(|x| x.map_or("?".to_string(), |v| v.to_string()))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            };
            bail!(
                invalid_argument,
                "{}: shape mismatch in tuple component {i}. Expected {want}, got {shape}{}",
                self.desc(),
                if batched {
                    " (per element of the batch)"
                } else {
                    ""
                }
            );
        }
        Ok(())
    }

    /// Splits the inputs of an enqueue into elements, checking dtypes and
    /// shapes.
    fn elements(&self, comps: Vec<Tensor>, many: bool) -> Result<Vec<(i64, Elem)>> {
        self.check_dtypes(&comps)?;
        if !many {
            for (i, t) in comps.iter().enumerate() {
                self.check_shape(i, t.dims(), false)?;
            }
            let priority = self.priority_of(&comps[..], None)?;
            return Ok(vec![(
                priority,
                Elem {
                    chunk: comps.into(),
                    row: None,
                },
            )]);
        }
        let mut n = None;
        for (i, t) in comps.iter().enumerate() {
            ensure!(
                t.rank() != 0,
                invalid_argument,
                "{}: enqueue_many needs each component to have a batch dimension; \
                     component {i} is a scalar",
                self.desc()
            );
            let d0 = t.dims()[0];
            match n {
                None => n = Some(d0),
                Some(m) if m != d0 => {
                    bail!(
                        invalid_argument,
                        "{}: all components of enqueue_many must have the same size in the \
                         0th dimension: component 0 has {m}, component {i} has {d0}",
                        self.desc()
                    )
                }
                _ => {}
            }
            self.check_shape(i, &t.dims()[1..], true)?;
        }
        let n = n.unwrap_or(0);
        let chunk: Arc<[Tensor]> = comps.into();
        (0..n)
            .map(|r| {
                let p = self.priority_of(&chunk, Some(r))?;
                Ok((
                    p,
                    Elem {
                        chunk: chunk.clone(),
                        row: Some(r),
                    },
                ))
            })
            .collect()
    }

    fn priority_of(&self, comps: &[Tensor], row: Option<usize>) -> Result<i64> {
        if self.cfg.kind != QueueKind::Priority {
            return Ok(0);
        }
        let t = &comps[0];
        let ok = match row {
            None => t.rank() == 0,
            Some(_) => t.rank() == 1,
        };
        ensure!(
            ok,
            invalid_argument,
            "{}: the priority (component 0) must be an int64 scalar per element, got shape {}",
            self.desc(),
            t.shape()
        );
        Ok(t.as_slice::<i64>()?[row.unwrap_or(0)])
    }

    /// `QueueEnqueueV2` (`many` false) and `QueueEnqueueManyV2`.
    pub fn enqueue(&self, comps: Vec<Tensor>, many: bool) -> Result<()> {
        let elems = self.elements(comps, many)?;
        let mut st = self.state.lock();
        if st.closed || st.cancelled {
            bail!(cancelled, "{} is closed.", self.desc());
        }
        let me = st.next_ticket;
        st.next_ticket += 1;
        st.enqueuers.push_back(me);
        let cap = self.cfg.capacity.unwrap_or(usize::MAX);
        let mut pending = elems.into_iter().peekable();
        let result = loop {
            if pending.peek().is_none() {
                break Ok(());
            }
            let waited = wait_while(&self.cv, &mut st, "room in the queue", |s| {
                !s.cancelled
                    && !s.cancel_pending
                    && (s.enqueuers.front() != Some(&me) || s.store.len() >= cap)
            });
            if let Err(e) = waited {
                break Err(e);
            }
            if st.cancelled || st.cancel_pending {
                break Err(Error::cancelled(format!(
                    "Enqueue operation was cancelled ({} was closed)",
                    self.desc()
                )));
            }
            let room = cap - st.store.len();
            let st = &mut *st;
            for (p, e) in pending.by_ref().take(room) {
                st.seq += 1;
                match &mut st.store {
                    Store::Deque(d) => d.push_back(e),
                    Store::Bag(b) => b.push(e),
                    Store::Heap(h) => h.push(Prio {
                        priority: p,
                        seq: st.seq,
                        elem: e,
                    }),
                }
            }
            self.cv.notify_all();
        };
        st.enqueuers.retain(|&t| t != me);
        drop(st);
        self.cv.notify_all();
        result
    }

    /// How many elements a dequeue may take now.
    fn available(&self, s: &State) -> usize {
        let n = s.store.len();
        if self.cfg.kind == QueueKind::Shuffle && !s.closed {
            n.saturating_sub(self.cfg.min_after_dequeue)
        } else {
            n
        }
    }

    fn pop(&self, s: &mut State) -> Elem {
        match &mut s.store {
            Store::Deque(d) => d.pop_front().expect("checked non-empty"),
            Store::Heap(h) => h.pop().expect("checked non-empty").elem,
            Store::Bag(b) => {
                // TensorFlow: index = next 32-bit Philox word % size, then
                // the last element moves into the hole.
                let block = self.philox.block(s.drawn / 4);
                let word = block[(s.drawn % 4) as usize];
                s.drawn += 1;
                let i = (word as u64 % b.len() as u64) as usize;
                b.swap_remove(i)
            }
        }
    }

    /// Puts back what a failed dequeue had taken, in front.
    fn put_back(&self, s: &mut State, taken: Vec<Elem>) {
        match &mut s.store {
            Store::Deque(d) => {
                for e in taken.into_iter().rev() {
                    d.push_front(e);
                }
            }
            Store::Bag(b) => b.extend(taken),
            Store::Heap(h) => {
                for e in taken {
                    // Priorities are recomputed from the element itself.
                    let p = match e.row {
                        None => e.chunk[0].as_slice::<i64>().map(|v| v[0]).unwrap_or(0),
                        Some(r) => e.chunk[0].as_slice::<i64>().map(|v| v[r]).unwrap_or(0),
                    };
                    h.push(Prio {
                        priority: p,
                        seq: 0,
                        elem: e,
                    });
                }
            }
        }
    }

    fn require_batchable(&self, what: &str) -> Result<()> {
        if self.cfg.kind == QueueKind::Padding {
            return Ok(());
        }
        if self.cfg.shapes.is_empty() || !self.cfg.shapes.iter().all(|s| s.is_fully_defined()) {
            bail!(
                invalid_argument,
                "{}: {what} requires the components to have specified shapes.",
                self.desc()
            );
        }
        Ok(())
    }

    /// `QueueDequeueV2` (`n` 1), `QueueDequeueManyV2` and `QueueDequeueUpToV2`:
    /// the dequeued components (batched with a leading dimension except for
    /// [`DequeueMode::One`]).
    pub fn dequeue(&self, n: usize, mode: DequeueMode) -> Result<Vec<Tensor>> {
        match mode {
            DequeueMode::One => {}
            DequeueMode::Many => self.require_batchable("DequeueMany")?,
            DequeueMode::UpTo => self.require_batchable("DequeueUpTo")?,
        }
        let mut taken: Vec<Elem> = Vec::with_capacity(n.min(1 << 16));
        if n > 0 {
            let mut st = self.state.lock();
            let me = st.next_ticket;
            st.next_ticket += 1;
            st.dequeuers.push_back(me);
            let result = loop {
                let waited = wait_while(&self.cv, &mut st, "elements in the queue", |s| {
                    !s.cancelled
                        && (s.dequeuers.front() != Some(&me)
                            || (self.available(s) == 0 && !s.closed))
                });
                if let Err(e) = waited {
                    break Err(e);
                }
                if st.cancelled {
                    break Err(Error::cancelled(format!(
                        "Dequeue operation was cancelled ({} was closed)",
                        self.desc()
                    )));
                }
                let take = self.available(&st).min(n - taken.len());
                for _ in 0..take {
                    let e = self.pop(&mut st);
                    taken.push(e);
                }
                if take > 0 {
                    self.cv.notify_all();
                }
                if taken.len() == n {
                    break Ok(());
                }
                if st.closed && self.available(&st) == 0 {
                    if mode == DequeueMode::UpTo && !taken.is_empty() {
                        break Ok(());
                    }
                    break Err(Error::out_of_range(format!(
                        "{} is closed and has insufficient elements (requested {n}, current size {})",
                        self.desc(),
                        st.store.len() + taken.len()
                    )));
                }
            };
            if result.is_err() {
                let back = std::mem::take(&mut taken);
                self.put_back(&mut st, back);
            }
            st.dequeuers.retain(|&t| t != me);
            drop(st);
            self.cv.notify_all();
            result?;
        }
        let ncomp = self.cfg.dtypes.len();
        if mode == DequeueMode::One {
            let e = &taken[0];
            return (0..ncomp).map(|c| e.component(c)).collect();
        }
        if self.cfg.kind != QueueKind::Padding && whole_chunk(&taken, 0).is_none() {
            if let Some(out) = self.batch_rows(&mut taken)? {
                return Ok(out);
            }
        }
        (0..ncomp).map(|c| self.batch(&taken, c)).collect()
    }

    /// Every component of `elems` stacked, when each component's elements
    /// share one shape (`None` otherwise). Walks the elements once, all
    /// components of each together (they were allocated together), and
    /// moves strings out of elements nothing else holds instead of copying
    /// them.
    fn batch_rows(&self, elems: &mut [Elem]) -> Result<Option<Vec<Tensor>>> {
        let Some(first) = elems.first() else {
            return Ok(None);
        };
        let shapes: Vec<Shape> = (0..self.cfg.dtypes.len()).map(|c| first.shape(c)).collect();
        for e in elems.iter() {
            for (c, s) in shapes.iter().enumerate() {
                let dims = e.chunk[c].dims();
                let own = if e.row.is_some() { &dims[1..] } else { dims };
                if own != s.dims() {
                    return Ok(None);
                }
            }
        }
        let k = elems.len();
        let mut sinks: Vec<Sink> = self
            .cfg
            .dtypes
            .iter()
            .zip(&shapes)
            .map(|(&d, s)| Sink::new(d, k * s.num_elements()))
            .collect::<Result<_>>()?;
        for e in elems.iter_mut() {
            let row = e.row;
            // Unique once the queue let go of it: strings can be moved out.
            let owned = Arc::get_mut(&mut e.chunk);
            match owned {
                Some(tensors) if row.is_none() => {
                    for ((t, sink), s) in tensors.iter_mut().zip(&mut sinks).zip(&shapes) {
                        sink.take_from(t, s.num_elements())?;
                    }
                }
                _ => {
                    for ((t, sink), s) in e.chunk.iter().zip(&mut sinks).zip(&shapes) {
                        sink.copy_from(t, row, s.num_elements())?;
                    }
                }
            }
        }
        sinks
            .into_iter()
            .zip(&shapes)
            .map(|(sink, s)| {
                let mut dims = vec![k];
                dims.extend_from_slice(s.dims());
                Tensor::new(Shape::new(&dims), sink.into_data())
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// Component `c` of `elems` stacked along a new leading dimension
    /// (padded with zeros to the largest shape in a padding queue).
    fn batch(&self, elems: &[Elem], c: usize) -> Result<Tensor> {
        let dtype = self.cfg.dtypes[c];
        if let Some(t) = whole_chunk(elems, c) {
            return Ok(t);
        }
        let shapes: Vec<Shape> = elems.iter().map(|e| e.shape(c)).collect();
        let elem_shape: Shape = if elems.is_empty() {
            // An empty batch: the declared shape, unknown dimensions as 0.
            let dims: Vec<usize> = match self.cfg.shapes.get(c).and_then(|s| s.dims()) {
                Some(d) => d.iter().map(|x| x.unwrap_or(0)).collect(),
                None => Vec::new(),
            };
            Shape::new(&dims)
        } else {
            let mut max = shapes[0].dims().to_vec();
            for s in &shapes[1..] {
                ensure!(
                    s.rank() == max.len(),
                    invalid_argument,
                    "{}: component {c} has elements of different ranks ({} and {}) \
                         and cannot be batched",
                    self.desc(),
                    shapes[0],
                    s
                );
                for (m, &d) in max.iter_mut().zip(s.dims()) {
                    *m = (*m).max(d);
                }
            }
            let max = Shape::new(&max);
            if self.cfg.kind != QueueKind::Padding {
                if let Some(s) = shapes.iter().find(|s| **s != max) {
                    bail!(
                        invalid_argument,
                        "{}: component {c} has elements of shapes {} and {s}, which cannot \
                         be batched",
                        self.desc(),
                        shapes[0]
                    );
                }
            }
            max
        };
        let mut out_dims = vec![elems.len()];
        out_dims.extend_from_slice(elem_shape.dims());
        let out_shape = Shape::new(&out_dims);
        let row_len = elem_shape.num_elements();
        let same = shapes.iter().all(|s| *s == elem_shape);
        let data = if same {
            for_dtype!(dtype, T => T::wrap(gather_rows::<T>(elems, c, row_len)?))
        } else {
            let mut data = Data::zeros(dtype, out_shape.num_elements());
            for_dtype!(dtype, T => {
                let buf = T::buffer_mut(&mut data)
                    .and_then(Arc::get_mut)
                    .ok_or_else(|| Error::internal("fresh buffer is not unique"))?;
                for (i, (e, s)) in elems.iter().zip(&shapes).enumerate() {
                    let src = e.chunk[c].as_slice::<T>()?;
                    let n = s.num_elements();
                    let src = match e.row {
                        None => src,
                        Some(r) => &src[r * n..(r + 1) * n],
                    };
                    copy_padded(&mut buf[i * row_len..(i + 1) * row_len], src, s.dims(), elem_shape.dims());
                }
            });
            data
        };
        Tensor::new(out_shape, data)
    }
}

/// The output buffer of one component of a batch being gathered.
enum Sink {
    Str(Vec<Vec<u8>>),
    Other(Data, usize),
}

impl Sink {
    fn new(dtype: DType, n: usize) -> Result<Sink> {
        Ok(match dtype {
            DType::String => Sink::Str(Vec::with_capacity(n)),
            d @ (DType::Resource | DType::Variant) => {
                bail!(unimplemented, "queues cannot hold {d} tensors")
            }
            // Filled front to back by `copy_from`.
            d => Sink::Other(Data::zeros(d, n), 0),
        })
    }

    /// Appends the `n` elements of row `row` of `t` (all of `t` for `None`).
    fn copy_from(&mut self, t: &Tensor, row: Option<usize>, n: usize) -> Result<()> {
        let start = row.map_or(0, |r| r * n);
        match self {
            Sink::Str(v) => v.extend_from_slice(&t.as_slice::<Vec<u8>>()?[start..start + n]),
            Sink::Other(data, at) => {
                let at0 = *at;
                for_dtype!(t.dtype(), T => {
                    let src = &t.as_slice::<T>()?[start..start + n];
                    let dst = T::buffer_mut(data)
                        .and_then(Arc::get_mut)
                        .ok_or_else(|| Error::internal("batch buffer is not unique"))?;
                    dst[at0..at0 + n].clone_from_slice(src);
                });
                *at += n;
            }
        }
        Ok(())
    }

    /// Like `copy_from` for a whole element this batch owns: strings move.
    fn take_from(&mut self, t: &mut Tensor, n: usize) -> Result<()> {
        match self {
            Sink::Str(v) => {
                let src = t.make_mut::<Vec<u8>>()?;
                v.extend(src[..n].iter_mut().map(std::mem::take));
                Ok(())
            }
            Sink::Other(..) => self.copy_from(t, None, n),
        }
    }

    fn into_data(self) -> Data {
        match self {
            Sink::Str(v) => Data::Str(Arc::new(v)),
            Sink::Other(data, _) => data,
        }
    }
}

/// The batch tensor itself when `elems` are exactly all the rows of one
/// `enqueue_many`, in order (no copy).
fn whole_chunk(elems: &[Elem], c: usize) -> Option<Tensor> {
    let first = elems.first()?;
    let t = &first.chunk[c];
    if t.dims().first() != Some(&elems.len()) {
        return None;
    }
    let in_order = elems
        .iter()
        .enumerate()
        .all(|(i, e)| e.row == Some(i) && Arc::ptr_eq(&e.chunk, &first.chunk));
    in_order.then(|| t.clone())
}

fn gather_rows<T: Element>(elems: &[Elem], c: usize, row_len: usize) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(elems.len() * row_len);
    for e in elems {
        let s = e.chunk[c].as_slice::<T>()?;
        match e.row {
            None => out.extend_from_slice(s),
            Some(r) => out.extend_from_slice(&s[r * row_len..(r + 1) * row_len]),
        }
    }
    Ok(out)
}

/// Copies `src` (of shape `src_dims`) into the top-left corner of `dst`
/// (of shape `dst_dims`, each dimension at least as large).
fn copy_padded<T: Clone>(dst: &mut [T], src: &[T], src_dims: &[usize], dst_dims: &[usize]) {
    match src_dims.len() {
        0 => dst[0] = src[0].clone(),
        1 => dst[..src_dims[0]].clone_from_slice(&src[..src_dims[0]]),
        _ => {
            let inner_src: usize = src_dims[1..].iter().product();
            let inner_dst: usize = dst_dims[1..].iter().product();
            for i in 0..src_dims[0] {
                copy_padded(
                    &mut dst[i * inner_dst..(i + 1) * inner_dst],
                    &src[i * inner_src..(i + 1) * inner_src],
                    &src_dims[1..],
                    &dst_dims[1..],
                );
            }
        }
    }
}

impl Cancellable for Queue {
    fn cancel(&self) {
        let mut st = self.state.lock();
        st.cancelled = true;
        st.closed = true;
        drop(st);
        self.cv.notify_all();
    }
}

/// Unique ids for unshared resources' names (TensorFlow's `_<id>_<node>`).
pub(crate) fn next_resource_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn handle_output() -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(
        DType::Resource,
        PartialShape::scalar(),
    )])
}

fn infer_queue(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dtypes = ctx.attrs.dtypes("component_types")?;
    let shapes = ctx.attrs.shapes("shapes")?;
    if !shapes.is_empty() && shapes.len() != dtypes.len() {
        bail!(
            value,
            "'{}' ({}): {} component types but {} shapes",
            ctx.name,
            ctx.def.name,
            dtypes.len(),
            shapes.len()
        );
    }
    handle_output()
}

fn infer_none(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

/// The component shapes declared by the queue op producing input 0, if
/// the handle comes straight from one.
fn queue_shapes(ctx: &InferContext) -> Vec<PartialShape> {
    let Some(src) = ctx.inputs.first() else {
        return Vec::new();
    };
    let node = ctx.graph.node(src.node);
    if node.op.ends_with("QueueV2") {
        let mut shapes = node.attrs.shapes("shapes").unwrap_or_default();
        if node.op == "PriorityQueueV2" && !shapes.is_empty() {
            shapes.insert(0, PartialShape::scalar());
        }
        shapes
    } else {
        Vec::new()
    }
}

fn infer_dequeue(ctx: &InferContext, batch: Option<Option<usize>>) -> Result<Vec<OutputInfo>> {
    let dtypes = ctx.attrs.dtypes("component_types")?;
    let shapes = queue_shapes(ctx);
    Ok(dtypes
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let elem = shapes.get(i).cloned().unwrap_or_else(PartialShape::unknown);
            let shape = match (batch, elem.dims()) {
                (None, _) => elem,
                (Some(_), None) => PartialShape::unknown(),
                (Some(b), Some(dims)) => {
                    let mut v = vec![b];
                    v.extend_from_slice(dims);
                    PartialShape::from_dims(v)
                }
            };
            OutputInfo::new(d, shape)
        })
        .collect())
}

fn infer_dequeue_one(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    infer_dequeue(ctx, None)
}

fn infer_dequeue_many(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let n = ctx
        .const_value(1)
        .and_then(|t| t.scalar_i64().ok())
        .and_then(|v| usize::try_from(v).ok());
    infer_dequeue(ctx, Some(n))
}

fn infer_dequeue_up_to(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    infer_dequeue(ctx, Some(None))
}

fn infer_is_closed(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::Bool, PartialShape::scalar())])
}

fn infer_size(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::Int32, PartialShape::scalar())])
}

/// The kernel of a queue op: creates the session's queue on first run
/// (shared by `shared_name` in `container`) and outputs its handle.
struct CreateQueue {
    cfg: QueueConfig,
    container: String,
    shared_name: String,
}

impl Kernel for CreateQueue {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let key = if self.shared_name.is_empty() {
            // Unshared: one queue per node and session.
            format!("\u{0}node:{}", ctx.node)
        } else {
            self.shared_name.clone()
        };
        let q = ctx
            .session
            .get_or_create_shared(&self.container, &key, || {
                let mut cfg = self.cfg.clone();
                cfg.name = if self.shared_name.is_empty() {
                    format!("_{}_{}", next_resource_id(), ctx.node)
                } else {
                    self.shared_name.clone()
                };
                Queue::new(cfg)
            })?;
        if q.cfg.kind != self.cfg.kind || q.cfg.dtypes != self.cfg.dtypes {
            bail!(
                invalid_argument,
                "Shared queue '{}' has component types {:?} ({}), but the op {} requests {:?} ({})",
                self.shared_name,
                q.cfg.dtypes,
                q.cfg.kind.type_name(),
                ctx.node,
                self.cfg.dtypes,
                self.cfg.kind.type_name()
            );
        }
        if !q.registered.swap(true, Ordering::AcqRel) {
            let weak: Weak<dyn Cancellable> = Arc::downgrade(&q) as Weak<dyn Cancellable>;
            ctx.session.register_cancellable(weak);
        }
        ctx.output_resource(q);
        Ok(())
    }
}

fn create_factory(kind: QueueKind) -> KernelFactory {
    factory(move |init| {
        let a = &init.node.attrs;
        let capacity = a.int_or("capacity", -1)?;
        let mut dtypes = a.dtypes("component_types")?;
        let mut shapes = a.shapes("shapes")?;
        if kind == QueueKind::Priority {
            // TensorFlow's attrs leave out the int64 priority component.
            dtypes.insert(0, DType::Int64);
            if !shapes.is_empty() {
                shapes.insert(0, PartialShape::scalar());
            }
        }
        let cfg = QueueConfig {
            kind,
            name: init.node.name.clone(),
            dtypes,
            shapes,
            capacity: usize::try_from(capacity).ok(),
            min_after_dequeue: a.int_or("min_after_dequeue", 0)?.max(0) as usize,
            seed: a.int_or("seed", 0)? as u64,
            seed2: a.int_or("seed2", 0)? as u64,
        };
        ensure!(
            capacity != 0,
            invalid_argument,
            "{} '{}': capacity must be positive (or -1 for unbounded), got 0",
            kind.type_name(),
            init.node.name
        );
        Ok(Box::new(CreateQueue {
            cfg,
            container: a.str_or("container", "")?,
            shared_name: a.str_or("shared_name", "")?,
        }))
    })
}

/// A kernel on a queue handle that may wait.
pub(crate) struct Blocking<F>(pub(crate) F);

impl<F: Fn(&mut OpContext<'_>) -> Result<()> + Send + Sync> Kernel for Blocking<F> {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        (self.0)(ctx)
    }
    fn may_block(&self) -> bool {
        true
    }
}

fn enqueue_kernel(ctx: &mut OpContext<'_>, many: bool) -> Result<()> {
    let q = ctx.input_resource::<Queue>(0)?;
    let comps = (1..ctx.num_inputs())
        .map(|i| ctx.take_input(i))
        .collect::<Result<Vec<_>>>()?;
    q.enqueue(comps, many)
}

fn dequeue_kernel(ctx: &mut OpContext<'_>, mode: DequeueMode) -> Result<()> {
    let q = ctx.input_resource::<Queue>(0)?;
    let n = match mode {
        DequeueMode::One => 1,
        _ => {
            let n = ctx.input(1)?.scalar_i64()?;
            usize::try_from(n).map_err(|_| {
                Error::invalid_argument(format!(
                    "{} '{}': the number of elements to dequeue must be non-negative, got {n}",
                    q.cfg.kind.type_name(),
                    q.cfg.name
                ))
            })?
        }
    };
    for t in q.dequeue(n, mode)? {
        ctx.output(t);
    }
    Ok(())
}

fn close_factory() -> KernelFactory {
    factory(|init| {
        let cancel = init.node.attrs.bool_or("cancel_pending_enqueues", false)?;
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            ctx.input_resource::<Queue>(0)?.close(cancel);
            Ok(())
        }))
    })
}

fn infer_count_up_to(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Int32, DType::Int64])?;
    ctx.expect_rank(0, 0)?;
    Ok(vec![OutputInfo::new(d, PartialShape::scalar())])
}

/// `CountUpTo`: increments a scalar integer variable and outputs its old
/// value, or fails with `OutOfRangeError` once it has reached `limit`
/// (`limit_epochs` counts epochs with it).
fn count_up_to_factory() -> KernelFactory {
    factory(|init| {
        let limit = init.node.attrs.int("limit")?;
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let var = ctx.input_ref(0)?.clone();
            let old = var.update(|t| {
                fn bump<T: Element + Copy + Into<i64>>(
                    t: &mut Tensor,
                    limit: i64,
                    one: T,
                    add: fn(T, T) -> T,
                ) -> Result<Tensor> {
                    let v = t.make_mut::<T>()?;
                    let old = v[0];
                    if old.into() >= limit {
                        bail!(out_of_range, "Reached limit of {limit}");
                    }
                    v[0] = add(old, one);
                    Ok(Tensor::scalar(old))
                }
                match t.dtype() {
                    DType::Int32 => bump::<i32>(t, limit, 1, |a, b| a + b),
                    DType::Int64 => bump::<i64>(t, limit, 1, |a, b| a + b),
                    d => Err(Error::invalid_argument(format!(
                        "CountUpTo needs an int32 or int64 variable, got {d}"
                    ))),
                }
            })?;
            ctx.output(old);
            Ok(())
        }))
    })
}

/// The graph-level definitions of the queue ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("CountUpTo", &["ref"], infer_count_up_to).refs(&[0]),
        OpDef::new("FIFOQueueV2", &[], infer_queue).stateful(),
        OpDef::new("PaddingFIFOQueueV2", &[], infer_queue).stateful(),
        OpDef::new("RandomShuffleQueueV2", &[], infer_queue).stateful(),
        OpDef::new("PriorityQueueV2", &[], infer_queue).stateful(),
        OpDef::new("QueueEnqueueV2", &["handle", "components*"], infer_none).stateful(),
        OpDef::new("QueueEnqueueManyV2", &["handle", "components*"], infer_none).stateful(),
        OpDef::new("QueueDequeueV2", &["handle"], infer_dequeue_one).stateful(),
        OpDef::new("QueueDequeueManyV2", &["handle", "n"], infer_dequeue_many).stateful(),
        OpDef::new("QueueDequeueUpToV2", &["handle", "n"], infer_dequeue_up_to).stateful(),
        OpDef::new("QueueCloseV2", &["handle"], infer_none).stateful(),
        OpDef::new("QueueIsClosedV2", &["handle"], infer_is_closed).stateful(),
        OpDef::new("QueueSizeV2", &["handle"], infer_size).stateful(),
    ]
}

/// The runtime kernels of the queue ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        ("CountUpTo", count_up_to_factory()),
        ("FIFOQueueV2", create_factory(QueueKind::Fifo)),
        ("PaddingFIFOQueueV2", create_factory(QueueKind::Padding)),
        ("RandomShuffleQueueV2", create_factory(QueueKind::Shuffle)),
        ("PriorityQueueV2", create_factory(QueueKind::Priority)),
        (
            "QueueEnqueueV2",
            factory(|_| {
                Ok(Box::new(Blocking(|ctx: &mut OpContext<'_>| {
                    enqueue_kernel(ctx, false)
                })))
            }),
        ),
        (
            "QueueEnqueueManyV2",
            factory(|_| {
                Ok(Box::new(Blocking(|ctx: &mut OpContext<'_>| {
                    enqueue_kernel(ctx, true)
                })))
            }),
        ),
        (
            "QueueDequeueV2",
            factory(|_| {
                Ok(Box::new(Blocking(|ctx: &mut OpContext<'_>| {
                    dequeue_kernel(ctx, DequeueMode::One)
                })))
            }),
        ),
        (
            "QueueDequeueManyV2",
            factory(|_| {
                Ok(Box::new(Blocking(|ctx: &mut OpContext<'_>| {
                    dequeue_kernel(ctx, DequeueMode::Many)
                })))
            }),
        ),
        (
            "QueueDequeueUpToV2",
            factory(|_| {
                Ok(Box::new(Blocking(|ctx: &mut OpContext<'_>| {
                    dequeue_kernel(ctx, DequeueMode::UpTo)
                })))
            }),
        ),
        ("QueueCloseV2", close_factory()),
        (
            "QueueIsClosedV2",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let closed = ctx.input_resource::<Queue>(0)?.is_closed();
                    ctx.output(Tensor::scalar(closed));
                    Ok(())
                }))
            }),
        ),
        (
            "QueueSizeV2",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let n = ctx.input_resource::<Queue>(0)?.size();
                    ctx.output(Tensor::scalar(n as i32));
                    Ok(())
                }))
            }),
        ),
    ]
}

/// Registers this module's ops and kernels (queues and accumulators).
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
    ferroflow_runtime::register_ops(accumulator::op_defs(), accumulator::kernels());
}
