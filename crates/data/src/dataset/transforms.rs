//! Datasets that transform other datasets.

use super::ragged::batch_ragged;
use super::{Composites, Dataset, DatasetIter, DatasetRef, Element, Func, IterCtx, Rows, Wake};
use ferroflow_runtime::blocking;
use ferroflow_tensor::kernels::array::{concat, pad, stack, PadMode};
use ferroflow_tensor::kernels::stateless_random::{PhiloxRandom, SingleSample};
use ferroflow_tensor::{bail, ensure, Code, DType, Data, Error, Result, Shape, Tensor};
use parking_lot::{Condvar, Mutex};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

type Iter = Box<dyn DatasetIter>;

/// What `AUTOTUNE` (-1) means for a parallelism or buffer size: the
/// machine's core count.
pub(crate) fn autotune(n: i64) -> usize {
    if n < 0 {
        std::thread::available_parallelism().map_or(4, |n| n.get())
    } else {
        n as usize
    }
}

// --- zip, concatenate ------------------------------------------------------

/// `Dataset.zip`: one element from each input, components concatenated.
pub struct Zip(pub Vec<DatasetRef>);

struct ZipIter(Vec<Iter>);

impl Dataset for Zip {
    fn cardinality(&self) -> i64 {
        let mut out = -1;
        for d in &self.0 {
            match d.0.cardinality() {
                -2 => return -2,
                -1 => {}
                n if out == -1 || n < out => out = n,
                _ => {}
            }
        }
        out
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        let its = self
            .0
            .iter()
            .map(|d| d.0.iterate(ctx))
            .collect::<Result<_>>()?;
        Ok(Box::new(ZipIter(its)))
    }
}

impl DatasetIter for ZipIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let mut out = Vec::new();
        for it in &mut self.0 {
            match it.next()? {
                Some(e) => out.extend(e),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }
}

/// `Dataset.concatenate`.
pub struct Concatenate(pub DatasetRef, pub DatasetRef);

struct ConcatIter {
    elements: Flatten,
    second: Option<DatasetRef>,
    ctx: IterCtx,
}

impl Dataset for Concatenate {
    fn cardinality(&self) -> i64 {
        match (self.0 .0.cardinality(), self.1 .0.cardinality()) {
            (-2, _) | (_, -2) => -2,
            (-1, _) | (_, -1) => -1,
            (a, b) => a + b,
        }
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(ConcatIter {
            elements: Flatten::new(self.0 .0.iterate(ctx)?),
            second: Some(self.1.clone()),
            ctx: ctx.clone(),
        }))
    }
}

impl DatasetIter for ConcatIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let (second, ctx) = (&mut self.second, &self.ctx);
        self.elements
            .next(|| second.take().map(|d| d.0.iterate(ctx)).transpose())
    }
}

/// The elements of a run of datasets, one after another (`concatenate`,
/// `flat_map`, the reduced windows of `group_by_window`): the open
/// dataset's, then those of the next one its owner opens.
#[derive(Default)]
pub(super) struct Flatten(Option<Iter>);

impl Flatten {
    /// Starts with `first` open.
    pub(super) fn new(first: Iter) -> Flatten {
        Flatten(Some(first))
    }

    /// The next element of the open dataset; once that one is exhausted
    /// (or none is open), of the dataset `open_next` gives, until it gives
    /// none.
    pub(super) fn next(
        &mut self,
        mut open_next: impl FnMut() -> Result<Option<Iter>>,
    ) -> Result<Option<Element>> {
        loop {
            if let Some(it) = &mut self.0 {
                if let Some(e) = it.next()? {
                    return Ok(Some(e));
                }
                self.0 = None;
            }
            match open_next()? {
                Some(it) => self.0 = Some(it),
                None => return Ok(None),
            }
        }
    }
}

/// The next element of `input` that `keep` accepts.
pub(super) fn next_kept(
    input: &mut Iter,
    mut keep: impl FnMut(&Element) -> Result<bool>,
) -> Result<Option<Element>> {
    while let Some(e) = input.next()? {
        if keep(&e)? {
            return Ok(Some(e));
        }
    }
    Ok(None)
}

// --- map, filter, flat_map, interleave -------------------------------------

/// `map` (`num_parallel_calls` of 1: calls one after another).
pub struct Map {
    pub input: DatasetRef,
    pub f: Func,
}

struct MapIter {
    input: Iter,
    f: Func,
}

impl Dataset for Map {
    fn cardinality(&self) -> i64 {
        self.input.0.cardinality()
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(MapIter {
            input: self.input.0.iterate(ctx)?,
            f: self.f.clone(),
        }))
    }
}

impl DatasetIter for MapIter {
    fn next(&mut self) -> Result<Option<Element>> {
        match self.input.next()? {
            Some(e) => self.f.call(e).map(Some),
            None => Ok(None),
        }
    }
}

/// `map(num_parallel_calls=N)`: pulls up to N elements, runs their calls
/// on the rayon pool at once, and yields the results in input order
/// (deterministic, as TensorFlow's default).
pub struct ParallelMap {
    pub input: DatasetRef,
    pub f: Func,
    pub parallelism: usize,
}

struct ParallelMapIter {
    input: Iter,
    f: Func,
    parallelism: usize,
    ready: VecDeque<Result<Element>>,
    input_done: bool,
}

impl Dataset for ParallelMap {
    fn cardinality(&self) -> i64 {
        self.input.0.cardinality()
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(ParallelMapIter {
            input: self.input.0.iterate(ctx)?,
            f: self.f.clone(),
            parallelism: self.parallelism.max(1),
            ready: VecDeque::new(),
            input_done: false,
        }))
    }
}

impl ParallelMapIter {
    fn refill(&mut self) {
        let mut batch: Vec<Result<Element>> = Vec::with_capacity(self.parallelism);
        while batch.len() < self.parallelism {
            match self.input.next() {
                Ok(Some(e)) => batch.push(Ok(e)),
                Ok(None) => {
                    self.input_done = true;
                    break;
                }
                Err(e) => {
                    let stop = e.code() == Some(Code::Cancelled);
                    batch.push(Err(e));
                    if stop {
                        self.input_done = true;
                    }
                    break;
                }
            }
        }
        let f = &self.f;
        let results: Vec<Result<Element>> = if batch.len() <= 1 {
            batch
                .into_iter()
                .map(|r| r.and_then(|e| f.call(e)))
                .collect()
        } else {
            batch
                .into_par_iter()
                .map(|r| r.and_then(|e| f.call(e)))
                .collect()
        };
        self.ready.extend(results);
    }
}

impl DatasetIter for ParallelMapIter {
    fn next(&mut self) -> Result<Option<Element>> {
        if self.ready.is_empty() && !self.input_done {
            self.refill();
        }
        match self.ready.pop_front() {
            Some(r) => r.map(Some),
            None => Ok(None),
        }
    }
}

/// `filter(predicate)`.
pub struct Filter {
    pub input: DatasetRef,
    pub predicate: Func,
}

struct FilterIter {
    input: Iter,
    predicate: Func,
}

impl Dataset for Filter {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(FilterIter {
            input: self.input.0.iterate(ctx)?,
            predicate: self.predicate.clone(),
        }))
    }
}

impl DatasetIter for FilterIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let predicate = &self.predicate;
        next_kept(&mut self.input, |e| predicate.call_predicate(e.clone()))
    }
}

/// `flat_map(f)`: the elements of `f(x)` for each `x` in turn.
pub struct FlatMap {
    pub input: DatasetRef,
    pub f: Func,
}

struct FlatMapIter {
    input: Iter,
    f: Func,
    elements: Flatten,
    ctx: IterCtx,
}

impl Dataset for FlatMap {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(FlatMapIter {
            input: self.input.0.iterate(ctx)?,
            f: self.f.clone(),
            elements: Flatten::default(),
            ctx: ctx.clone(),
        }))
    }
}

impl DatasetIter for FlatMapIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let (input, f, ctx) = (&mut self.input, &self.f, &self.ctx);
        self.elements.next(|| match input.next()? {
            Some(x) => f.call_dataset(x)?.0.iterate(ctx).map(Some),
            None => Ok(None),
        })
    }
}

/// `interleave(f, cycle_length, block_length)`: `block_length` elements
/// from each of `cycle_length` open datasets in turn, TensorFlow's order
/// (also for `num_parallel_calls`, whose deterministic order is the same:
/// there each open dataset fills its own buffer on a background thread, so
/// the `cycle_length` inputs are read and computed at once).
pub struct Interleave {
    pub input: DatasetRef,
    pub f: Func,
    pub cycle_length: usize,
    pub block_length: usize,
    pub parallel: bool,
}

struct InterleaveIter {
    input: Iter,
    f: Func,
    ctx: IterCtx,
    slots: Vec<Option<Iter>>,
    cycle_index: usize,
    block_index: usize,
    block_length: usize,
    num_open: usize,
    end_of_input: bool,
    parallel: bool,
}

impl Dataset for Interleave {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        let cycle = self.cycle_length.max(1);
        Ok(Box::new(InterleaveIter {
            input: self.input.0.iterate(ctx)?,
            f: self.f.clone(),
            ctx: ctx.clone(),
            slots: (0..cycle).map(|_| None).collect(),
            cycle_index: 0,
            block_index: 0,
            block_length: self.block_length.max(1),
            num_open: 0,
            end_of_input: false,
            parallel: self.parallel,
        }))
    }
}

impl InterleaveIter {
    fn advance(&mut self) {
        self.block_index = 0;
        self.cycle_index = (self.cycle_index + 1) % self.slots.len();
    }
}

impl DatasetIter for InterleaveIter {
    fn next(&mut self) -> Result<Option<Element>> {
        while !self.end_of_input || self.num_open > 0 {
            if let Some(it) = &mut self.slots[self.cycle_index] {
                match it.next()? {
                    Some(e) => {
                        self.block_index += 1;
                        if self.block_index == self.block_length {
                            self.advance();
                        }
                        return Ok(Some(e));
                    }
                    None => {
                        self.slots[self.cycle_index] = None;
                        self.num_open -= 1;
                        self.advance();
                    }
                }
            } else if !self.end_of_input {
                match self.input.next()? {
                    Some(x) => {
                        let mut ds = self.f.call_dataset(x)?;
                        if self.parallel {
                            ds = DatasetRef(Arc::new(Prefetch {
                                input: ds,
                                buffer_size: self.block_length.max(2),
                            }));
                        }
                        self.slots[self.cycle_index] = Some(ds.0.iterate(&self.ctx)?);
                        self.num_open += 1;
                    }
                    None => self.end_of_input = true,
                }
            } else {
                self.advance();
            }
        }
        Ok(None)
    }
}

// --- batching --------------------------------------------------------------

fn shape_text(t: &Tensor) -> String {
    format!(
        "[{}]",
        t.dims()
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// Stacks component `c` of the elements.
fn stack_component(elements: &[Element], c: usize) -> Result<Tensor> {
    let first = &elements[0][c];
    let items: Vec<Tensor> = elements.iter().map(|e| e[c].clone()).collect();
    for (i, t) in items.iter().enumerate().skip(1) {
        ensure!(
            t.shape() == first.shape(),
            invalid_argument,
            "Cannot batch tensors with different shapes in component {c}. First element had shape {} and element {i} had shape {}.",
            shape_text(first),
            shape_text(t)
        );
    }
    stack(&items, 0)
}

/// Stacks the elements' components into one batch element.
pub(crate) fn batch_elements(elements: &[Element]) -> Result<Element> {
    (0..elements[0].len())
        .map(|c| stack_component(elements, c))
        .collect()
}

/// Like [`batch_elements`], with SparseTensor and RaggedTensor leaves
/// batched as TensorFlow batches them: a SparseTensor into one of one more
/// dimension (the element's index first, each dense dimension the largest
/// of the batch), a RaggedTensor into one of one more ragged dimension
/// (see [`batch_ragged`]).
pub(crate) fn batch_elements_composite(
    elements: &[Element],
    layout: &Composites,
) -> Result<Element> {
    if layout.is_empty() {
        return batch_elements(elements);
    }
    let sparse = &layout.sparse;
    let n = elements[0].len();
    let mut out = Vec::with_capacity(n);
    let mut c = 0;
    while c < n {
        if let Some(leaf) = layout.ragged.iter().find(|r| r.start == c) {
            out.extend(batch_ragged(elements, leaf)?);
            c += leaf.num_components();
        } else if sparse.contains(&c) && c + 2 < n {
            out.extend(batch_sparse(elements, c)?);
            c += 3;
        } else {
            out.push(stack_component(elements, c)?);
            c += 1;
        }
    }
    Ok(out)
}

fn batch_sparse(elements: &[Element], c: usize) -> Result<[Tensor; 3]> {
    let rank = elements[0][c + 2].num_elements();
    let mut shape = vec![0i64; rank];
    let mut indices: Vec<i64> = Vec::new();
    let mut values = Vec::with_capacity(elements.len());
    for (b, e) in elements.iter().enumerate() {
        let dense = e[c + 2].to_i64_vec()?;
        ensure!(
            dense.len() == rank,
            invalid_argument,
            "Cannot batch SparseTensors of different ranks in component {c}: the first element has rank {rank} and element {b} rank {}.",
            dense.len()
        );
        for (m, d) in shape.iter_mut().zip(&dense) {
            *m = (*m).max(*d);
        }
        let idx = e[c].to_i64_vec()?;
        for row in idx.chunks(rank.max(1)).take(e[c + 1].num_elements()) {
            indices.push(b as i64);
            indices.extend_from_slice(&row[..rank]);
        }
        values.push(e[c + 1].clone());
    }
    let nnz = indices.len() / (rank + 1);
    let mut dense_shape = vec![elements.len() as i64];
    dense_shape.extend(shape);
    Ok([
        Tensor::from_vec(vec![nnz, rank + 1], indices)?,
        concat(&values, 0)?,
        Tensor::vector(dense_shape),
    ])
}

/// How many batches of `size` an input of `n` elements gives.
fn batched_cardinality(n: i64, size: usize, drop_remainder: bool) -> i64 {
    if n < 0 || size == 0 {
        return n;
    }
    let size = size as i64;
    if drop_remainder {
        n / size
    } else {
        (n + size - 1) / size
    }
}

/// `batch(batch_size, drop_remainder)`.
pub struct Batch {
    pub input: DatasetRef,
    pub batch_size: usize,
    pub drop_remainder: bool,
    /// Which components make up SparseTensors and RaggedTensors (see
    /// [`batch_elements_composite`]).
    pub composites: Arc<Composites>,
}

struct BatchIter {
    input: Iter,
    batch_size: usize,
    drop_remainder: bool,
    composites: Arc<Composites>,
}

impl Dataset for Batch {
    fn cardinality(&self) -> i64 {
        batched_cardinality(
            self.input.0.cardinality(),
            self.batch_size,
            self.drop_remainder,
        )
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        ensure!(
            self.batch_size != 0,
            invalid_argument,
            "Batch size must be greater than zero."
        );
        Ok(Box::new(BatchIter {
            input: self.input.0.iterate(ctx)?,
            batch_size: self.batch_size,
            drop_remainder: self.drop_remainder,
            composites: self.composites.clone(),
        }))
    }
}

/// Pulls up to `n` elements (fewer at the end).
fn pull(input: &mut Iter, n: usize) -> Result<Vec<Element>> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        match input.next()? {
            Some(e) => out.push(e),
            None => break,
        }
    }
    Ok(out)
}

impl DatasetIter for BatchIter {
    fn next(&mut self) -> Result<Option<Element>> {
        // Runs of stacked elements (from inputs that slice a tensor) and of
        // single elements, in order.
        let mut parts: Vec<Element> = Vec::new();
        let mut singles: Vec<Element> = Vec::new();
        let mut have = 0;
        if !self.composites.is_empty() {
            let items = pull(&mut self.input, self.batch_size)?;
            if items.is_empty() || (self.drop_remainder && items.len() < self.batch_size) {
                return Ok(None);
            }
            return batch_elements_composite(&items, &self.composites).map(Some);
        }
        while have < self.batch_size {
            match self.input.next_stacked(self.batch_size - have) {
                Some(r) => match r? {
                    Some((e, k)) => {
                        if !singles.is_empty() {
                            parts.push(batch_elements(&std::mem::take(&mut singles))?);
                        }
                        parts.push(e);
                        have += k;
                    }
                    None => break,
                },
                None => match self.input.next()? {
                    Some(e) => {
                        singles.push(e);
                        have += 1;
                    }
                    None => break,
                },
            }
        }
        if have == 0 || (self.drop_remainder && have < self.batch_size) {
            return Ok(None);
        }
        if parts.is_empty() {
            return batch_elements(&singles).map(Some);
        }
        if !singles.is_empty() {
            parts.push(batch_elements(&singles)?);
        }
        if parts.len() == 1 {
            return Ok(parts.pop());
        }
        (0..parts[0].len())
            .map(|c| {
                let items: Vec<Tensor> = parts.iter().map(|p| p[c].clone()).collect();
                concat(&items, 0)
            })
            .collect::<Result<_>>()
            .map(Some)
    }
}

/// `padded_batch(batch_size, padded_shapes, padding_values)`: each
/// component padded to its padded shape (-1: the batch's largest).
pub struct PaddedBatch {
    pub input: DatasetRef,
    pub batch_size: usize,
    pub padded_shapes: Vec<Vec<i64>>,
    pub padding_values: Vec<Tensor>,
    pub drop_remainder: bool,
}

struct PaddedBatchIter {
    input: Iter,
    spec: Arc<PaddedSpec>,
}

struct PaddedSpec {
    batch_size: usize,
    padded_shapes: Vec<Vec<i64>>,
    padding_values: Vec<Tensor>,
    drop_remainder: bool,
}

impl Dataset for PaddedBatch {
    fn cardinality(&self) -> i64 {
        batched_cardinality(
            self.input.0.cardinality(),
            self.batch_size,
            self.drop_remainder,
        )
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        ensure!(
            self.batch_size != 0,
            invalid_argument,
            "Batch size must be greater than zero."
        );
        Ok(Box::new(PaddedBatchIter {
            input: self.input.0.iterate(ctx)?,
            spec: Arc::new(PaddedSpec {
                batch_size: self.batch_size,
                padded_shapes: self.padded_shapes.clone(),
                padding_values: self.padding_values.clone(),
                drop_remainder: self.drop_remainder,
            }),
        }))
    }
}

impl DatasetIter for PaddedBatchIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let s = &self.spec;
        let items = pull(&mut self.input, s.batch_size)?;
        if items.is_empty() || (s.drop_remainder && items.len() < s.batch_size) {
            return Ok(None);
        }
        let n = items[0].len();
        if s.padded_shapes.len() != n || s.padding_values.len() != n {
            bail!(
                invalid_argument,
                "padded_batch: {n} components but {} padded shapes and {} padding values",
                s.padded_shapes.len(),
                s.padding_values.len()
            );
        }
        let mut out = Vec::with_capacity(n);
        for c in 0..n {
            let want = &s.padded_shapes[c];
            let rank = want.len();
            let mut target = vec![0usize; rank];
            for e in &items {
                let t = &e[c];
                ensure!(
                    t.rank() == rank,
                    invalid_argument,
                    "Mismatch in the number of dimensions of component {c}: the padded shape has {rank} dimensions but an element has shape {}.",
                    shape_text(t)
                );
                for (d, &size) in t.dims().iter().enumerate() {
                    target[d] = target[d].max(size);
                }
            }
            for (d, &w) in want.iter().enumerate() {
                if w >= 0 {
                    if (w as usize) < target[d] {
                        bail!(
                            data_loss,
                            "Attempted to pad to a smaller size than the input element (component {c}, dimension {d}: {} > {w}).",
                            target[d]
                        );
                    }
                    target[d] = w as usize;
                }
            }
            let value = &s.padding_values[c];
            let padded = items
                .iter()
                .map(|e| {
                    let t = &e[c];
                    let paddings: Vec<(i64, i64)> = t
                        .dims()
                        .iter()
                        .zip(&target)
                        .map(|(&have, &want)| (0, (want - have) as i64))
                        .collect();
                    if paddings.iter().all(|p| p.1 == 0) {
                        Ok(t.clone())
                    } else {
                        pad(t, &paddings, PadMode::Constant, value)
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            out.push(stack(&padded, 0)?);
        }
        Ok(Some(out))
    }
}

/// `unbatch()`: the rows of each element (SparseTensor and RaggedTensor
/// components split as TensorFlow splits them).
pub struct Unbatch {
    pub input: DatasetRef,
    pub composites: Arc<Composites>,
}

struct UnbatchIter {
    input: Iter,
    composites: Arc<Composites>,
    current: Option<Rows>,
    index: usize,
}

impl Dataset for Unbatch {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(UnbatchIter {
            input: self.input.0.iterate(ctx)?,
            composites: self.composites.clone(),
            current: None,
            index: 0,
        }))
    }
}

impl DatasetIter for UnbatchIter {
    fn next(&mut self) -> Result<Option<Element>> {
        loop {
            if let Some(rows) = &self.current {
                if self.index < rows.len() {
                    self.index += 1;
                    return rows.row(self.index - 1).map(Some);
                }
                self.current = None;
            }
            let Some(e) = self.input.next()? else {
                return Ok(None);
            };
            self.current = Some(Rows::new(e, &self.composites).map_err(|e| {
                Error::invalid_argument(format!(
                    "Input element must have the same batch size in each component: {}",
                    e.message()
                ))
            })?);
            self.index = 0;
        }
    }
}

// --- order and counts ------------------------------------------------------

/// A small, fast generator (SplitMix64) for shuffling and sampling.
pub(super) struct SplitMix(pub(super) u64);

impl SplitMix {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `shuffle(buffer_size, seed, reshuffle_each_iteration)`, TensorFlow's
/// `ShuffleDataset` bit for bit: each iteration draws its element from a
/// ring buffer of `buffer_size` slots with a Philox stream keyed by the
/// iteration's seed pair. Without reshuffling every iteration uses the op's
/// seeds; with it, TF's seed generator (a Philox stream keyed by the op's
/// seeds, shared by the dataset's iterations) hands each iteration two fresh
/// words, so the epochs of a `repeat` differ while a re-made dataset (an
/// initializable iterator run again) starts over.
pub struct Shuffle {
    pub input: DatasetRef,
    pub buffer_size: usize,
    /// The op's seed pair (TF's `RandomSeeds`: both drawn afresh when both are 0).
    pub seeds: (u64, u64),
    pub reshuffle: bool,
    /// Words the seed generator has handed out (two per reshuffled iteration).
    pub seed_words: AtomicU64,
}

impl Shuffle {
    /// A shuffle of `input` with the op's `seed` and `seed2` inputs.
    pub fn new(
        input: DatasetRef,
        buffer_size: usize,
        seed: i64,
        seed2: i64,
        reshuffle: bool,
    ) -> Shuffle {
        let seeds = if seed == 0 && seed2 == 0 {
            (fresh_seed(), fresh_seed())
        } else {
            (seed as u64, seed2 as u64)
        };
        Shuffle {
            input,
            buffer_size,
            seeds,
            reshuffle,
            seed_words: AtomicU64::new(0),
        }
    }
}

/// TF's `PhiloxRandom(seed, seed2)` read a word at a time (`SingleSampleAdapter`), from word `skip` on.
fn philox_words(seed: u64, seed2: u64, skip: u64) -> SingleSample {
    let gen = PhiloxRandom::from_key_counter(seed, [0, seed2]).skipped(skip / 4);
    let mut words = SingleSample::new(gen);
    for _ in 0..skip % 4 {
        words.next_u32();
    }
    words
}

struct ShuffleIter {
    input: Iter,
    /// Ring slots: element `p` (counted from the first one buffered) sits in slot `p % size`.
    slots: Vec<Option<Element>>,
    size: usize,
    /// The buffered elements are `start..end`.
    start: u64,
    end: u64,
    rng: SingleSample,
    input_done: bool,
}

impl Dataset for Shuffle {
    fn cardinality(&self) -> i64 {
        self.input.0.cardinality()
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        ensure!(
            self.buffer_size != 0,
            invalid_argument,
            "buffer_size must be greater than zero."
        );
        let (seed, seed2) = if self.reshuffle {
            let k = self.seed_words.fetch_add(2, Ordering::Relaxed);
            let mut gen = philox_words(self.seeds.0, self.seeds.1, k);
            (gen.next_u32() as u64, gen.next_u32() as u64)
        } else {
            self.seeds
        };
        Ok(Box::new(ShuffleIter {
            input: self.input.0.iterate(ctx)?,
            slots: Vec::new(),
            size: self.buffer_size,
            start: 0,
            end: 0,
            rng: philox_words(seed, seed2, 0),
            input_done: false,
        }))
    }
}

impl DatasetIter for ShuffleIter {
    fn next(&mut self) -> Result<Option<Element>> {
        while !self.input_done && ((self.end - self.start) as usize) < self.size {
            match self.input.next()? {
                Some(e) => {
                    // Slots are made as the buffer first fills; later ones reuse the slot just emptied.
                    let slot = (self.end % self.size as u64) as usize;
                    if slot == self.slots.len() {
                        self.slots.push(Some(e));
                    } else {
                        self.slots[slot] = Some(e);
                    }
                    self.end += 1;
                }
                None => self.input_done = true,
            }
        }
        if self.start == self.end {
            return Ok(None);
        }
        // As TF: a word modulo the count picks the element; the first buffered one moves into its slot.
        let offset = self.rng.next_u32() as u64 % (self.end - self.start);
        let size = self.size as u64;
        let index = ((self.start + offset) % size) as usize;
        let first = (self.start % size) as usize;
        self.slots.swap(index, first);
        self.start += 1;
        Ok(self.slots[first].take())
    }
}

/// A seed from the clock, for a shuffle whose seeds are both 0 (TF's
/// "random seed").
pub(crate) fn fresh_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    SplitMix(t ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(32)).next()
}

/// `repeat(count)` (-1: forever).
pub struct Repeat {
    pub input: DatasetRef,
    pub count: i64,
}

struct RepeatIter {
    input: DatasetRef,
    ctx: IterCtx,
    current: Option<Iter>,
    remaining: i64,
    /// The current epoch gave no element yet.
    fresh: bool,
}

impl Dataset for Repeat {
    fn cardinality(&self) -> i64 {
        let n = self.input.0.cardinality();
        if self.count < 0 {
            return if n == 0 { 0 } else { -1 };
        }
        if self.count == 0 {
            return 0;
        }
        if n < 0 {
            return n;
        }
        n.saturating_mul(self.count)
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(RepeatIter {
            input: self.input.clone(),
            ctx: ctx.clone(),
            current: None,
            remaining: self.count,
            fresh: true,
        }))
    }
}

impl DatasetIter for RepeatIter {
    fn next_stacked(&mut self, n: usize) -> Option<Result<Option<(Element, usize)>>> {
        loop {
            if self.current.is_none() {
                if self.remaining == 0 {
                    return Some(Ok(None));
                }
                if let Err(e) = self.ctx.token.check() {
                    return Some(Err(e));
                }
                match self.input.0.iterate(&self.ctx) {
                    Ok(it) => self.current = Some(it),
                    Err(e) => return Some(Err(e)),
                }
                self.fresh = true;
            }
            let it = self.current.as_mut().expect("made above");
            match it.next_stacked(n)? {
                Ok(Some(r)) => {
                    self.fresh = false;
                    return Some(Ok(Some(r)));
                }
                Ok(None) => {
                    self.current = None;
                    if self.remaining > 0 {
                        self.remaining -= 1;
                    }
                    if self.fresh {
                        return Some(Ok(None));
                    }
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }

    fn next(&mut self) -> Result<Option<Element>> {
        loop {
            if self.current.is_none() {
                if self.remaining == 0 {
                    return Ok(None);
                }
                self.ctx.token.check()?;
                self.current = Some(self.input.0.iterate(&self.ctx)?);
                self.fresh = true;
            }
            let it = self.current.as_mut().expect("made above");
            if let Some(e) = it.next()? {
                self.fresh = false;
                return Ok(Some(e));
            }
            self.current = None;
            if self.remaining > 0 {
                self.remaining -= 1;
            }
            // An empty input repeated forever is empty, not a hang.
            if self.fresh {
                return Ok(None);
            }
        }
    }
}

/// `take(count)` (-1: all).
pub struct Take {
    pub input: DatasetRef,
    pub count: i64,
}

struct TakeIter {
    input: Iter,
    remaining: i64,
}

impl Dataset for Take {
    fn cardinality(&self) -> i64 {
        let n = self.input.0.cardinality();
        if n == -2 {
            -2
        } else if n == -1 {
            self.count
        } else if self.count < 0 {
            n
        } else {
            n.min(self.count)
        }
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(TakeIter {
            input: self.input.0.iterate(ctx)?,
            remaining: self.count,
        }))
    }
}

impl DatasetIter for TakeIter {
    fn next(&mut self) -> Result<Option<Element>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        let e = self.input.next()?;
        if e.is_some() && self.remaining > 0 {
            self.remaining -= 1;
        }
        Ok(e)
    }
}

/// `skip(count)` (-1: all).
pub struct Skip {
    pub input: DatasetRef,
    pub count: i64,
}

struct SkipIter {
    input: Iter,
    to_skip: i64,
}

impl Dataset for Skip {
    fn cardinality(&self) -> i64 {
        let n = self.input.0.cardinality();
        if n < 0 {
            n
        } else if self.count < 0 {
            0
        } else {
            (n - self.count).max(0)
        }
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(SkipIter {
            input: self.input.0.iterate(ctx)?,
            to_skip: self.count,
        }))
    }
}

impl DatasetIter for SkipIter {
    fn next(&mut self) -> Result<Option<Element>> {
        while self.to_skip != 0 {
            if self.input.next()?.is_none() {
                self.to_skip = 0;
                return Ok(None);
            }
            if self.to_skip > 0 {
                self.to_skip -= 1;
            }
        }
        self.input.next()
    }
}

/// `shard(num_shards, index)`.
pub struct Shard {
    pub input: DatasetRef,
    pub num_shards: usize,
    pub index: usize,
}

struct ShardIter {
    input: Iter,
    num_shards: usize,
    index: usize,
    position: usize,
}

impl Dataset for Shard {
    fn cardinality(&self) -> i64 {
        let n = self.input.0.cardinality();
        if n < 0 {
            n
        } else {
            let (k, i) = (self.num_shards as i64, self.index as i64);
            n / k + i64::from(n % k > i)
        }
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(ShardIter {
            input: self.input.0.iterate(ctx)?,
            num_shards: self.num_shards,
            index: self.index,
            position: 0,
        }))
    }
}

impl DatasetIter for ShardIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let (position, num_shards, index) = (&mut self.position, self.num_shards, self.index);
        next_kept(&mut self.input, |_| {
            let p = *position;
            *position += 1;
            Ok(p % num_shards == index)
        })
    }
}

/// `ignore_errors()`: elements whose computation failed are dropped.
pub struct IgnoreErrors(pub DatasetRef);

struct IgnoreErrorsIter(Iter);

impl Dataset for IgnoreErrors {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(IgnoreErrorsIter(self.0 .0.iterate(ctx)?)))
    }
}

impl DatasetIter for IgnoreErrorsIter {
    fn next(&mut self) -> Result<Option<Element>> {
        loop {
            match self.0.next() {
                Ok(e) => return Ok(e),
                // A cancelled pipeline or a passed deadline is no bad element.
                Err(e) if matches!(e.code(), Some(Code::Cancelled | Code::DeadlineExceeded)) => {
                    return Err(e)
                }
                Err(_) => continue,
            }
        }
    }
}

/// `cache()` in memory: the first complete pass records the elements; later
/// iterations of the same dataset (the next epochs of a `repeat`) replay
/// them without running the input again.
pub struct Cache {
    pub input: DatasetRef,
    pub cached: Arc<Mutex<Option<Arc<Vec<Element>>>>>,
}

struct CacheWriter {
    input: Iter,
    seen: Vec<Element>,
    cell: Arc<Mutex<Option<Arc<Vec<Element>>>>>,
}

struct CacheReader {
    elements: Arc<Vec<Element>>,
    index: usize,
}

impl Dataset for Cache {
    fn cardinality(&self) -> i64 {
        self.input.0.cardinality()
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        if let Some(elements) = self.cached.lock().clone() {
            return Ok(Box::new(CacheReader { elements, index: 0 }));
        }
        Ok(Box::new(CacheWriter {
            input: self.input.0.iterate(ctx)?,
            seen: Vec::new(),
            cell: self.cached.clone(),
        }))
    }
}

impl DatasetIter for CacheWriter {
    fn next(&mut self) -> Result<Option<Element>> {
        match self.input.next()? {
            Some(e) => {
                self.seen.push(e.clone());
                Ok(Some(e))
            }
            None => {
                let seen = std::mem::take(&mut self.seen);
                self.cell.lock().get_or_insert_with(|| Arc::new(seen));
                Ok(None)
            }
        }
    }
}

impl DatasetIter for CacheReader {
    fn next(&mut self) -> Result<Option<Element>> {
        let e = self.elements.get(self.index).cloned();
        self.index += 1;
        Ok(e)
    }
}

// --- prefetch --------------------------------------------------------------

/// `prefetch(buffer_size)`: a background thread keeps up to `buffer_size`
/// elements ready.
pub struct Prefetch {
    pub input: DatasetRef,
    pub buffer_size: usize,
}

struct PrefetchState {
    buffer: VecDeque<Result<Option<Element>>>,
    /// The consumer is gone: the producer stops.
    stop: bool,
    /// The producer has returned: nothing more will come.
    done: bool,
}

struct PrefetchShared {
    state: Mutex<PrefetchState>,
    cv: Condvar,
    capacity: usize,
}

impl Wake for PrefetchShared {
    fn wake(&self) {
        let mut s = self.state.lock();
        s.stop = true;
        self.cv.notify_all();
    }
}

struct PrefetchIter {
    shared: Arc<PrefetchShared>,
    thread: Option<JoinHandle<()>>,
    ctx: IterCtx,
    finished: bool,
}

impl Dataset for Prefetch {
    fn cardinality(&self) -> i64 {
        self.input.0.cardinality()
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        let mut input = self.input.0.iterate(ctx)?;
        let shared = Arc::new(PrefetchShared {
            state: Mutex::new(PrefetchState {
                buffer: VecDeque::new(),
                stop: false,
                done: false,
            }),
            cv: Condvar::new(),
            capacity: self.buffer_size.max(1),
        });
        let weak: std::sync::Weak<dyn Wake> = Arc::downgrade(&shared) as _;
        ctx.token.register(weak);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("ferroflow prefetch".into())
            .spawn(move || {
                let _flush = ferroflow_tensor::denormal::FlushDenormals::new();
                /// Marks the producer done however it returns.
                struct Done(Arc<PrefetchShared>);
                impl Drop for Done {
                    fn drop(&mut self) {
                        self.0.state.lock().done = true;
                        self.0.cv.notify_all();
                    }
                }
                let _done = Done(s.clone());
                loop {
                    {
                        let mut st = s.state.lock();
                        while st.buffer.len() >= s.capacity && !st.stop {
                            s.cv.wait(&mut st);
                        }
                        if st.stop {
                            return;
                        }
                    }
                    // A panic below must not leave the consumer waiting forever.
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| input.next()))
                        .unwrap_or_else(|_| {
                            Err(Error::internal(
                                "the pipeline's prefetching thread panicked",
                            ))
                        });
                    let failed = matches!(&r, Err(e) if e.code() == Some(Code::Internal));
                    let end = failed
                        || matches!(r, Ok(None))
                        || matches!(&r, Err(e) if e.code() == Some(Code::Cancelled));
                    let mut st = s.state.lock();
                    st.buffer.push_back(r);
                    s.cv.notify_all();
                    if end {
                        return;
                    }
                }
            })
            .map_err(|e| {
                Error::resource_exhausted(format!("cannot start a prefetch thread: {e}"))
            })?;
        Ok(Box::new(PrefetchIter {
            shared,
            thread: Some(thread),
            ctx: ctx.clone(),
            finished: false,
        }))
    }
}

impl DatasetIter for PrefetchIter {
    fn next(&mut self) -> Result<Option<Element>> {
        if self.finished {
            return Ok(None);
        }
        let token = self.ctx.token.clone();
        let mut st = self.shared.state.lock();
        blocking::wait_while(
            &self.shared.cv,
            &mut st,
            "the next element of a prefetching dataset",
            |s| s.buffer.is_empty() && !s.done && !token.is_cancelled(),
        )?;
        let Some(r) = st.buffer.pop_front() else {
            if token.is_cancelled() {
                bail!(cancelled, "Iterator was cancelled (its session closed)");
            }
            // The producer stopped after reporting its failure.
            self.finished = true;
            return Ok(None);
        };
        self.shared.cv.notify_all();
        if matches!(r, Ok(None)) {
            self.finished = true;
        }
        r
    }
}

impl Drop for PrefetchIter {
    fn drop(&mut self) {
        self.shared.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

// --- cache to a file ---------------------------------------------------------

/// `cache(filename)`: the first complete pass writes the elements to
/// `filename.ffcache` (TFRecord framing, one record per element holding its
/// components as serialized `TensorProto`s); any later iteration, in this
/// session or another, reads them back from there instead of running the
/// input. The file appears (by an atomic rename) only once a pass ends, so
/// an interrupted pass leaves no partial cache behind.
pub struct FileCache {
    pub input: DatasetRef,
    pub filename: String,
}

impl FileCache {
    fn path(&self) -> String {
        format!("{}.ffcache", self.filename)
    }
}

struct FileCacheWriter {
    input: Iter,
    writer: Option<ferroflow_records::RecordWriter>,
    tmp: String,
    path: String,
}

struct FileCacheReader {
    reader: ferroflow_records::RecordReader,
}

/// An element as bytes: per component its dtype, dims and little-endian
/// values (strings length-prefixed).
fn encode_element(e: &Element) -> Result<Vec<u8>> {
    let mut out = (e.len() as u32).to_le_bytes().to_vec();
    for t in e {
        out.extend_from_slice(&t.dtype().as_enum().to_le_bytes());
        out.push(t.rank() as u8);
        for &d in t.dims() {
            out.extend_from_slice(&(d as u64).to_le_bytes());
        }
        macro_rules! le {
            ($v:expr) => {
                for x in $v.iter() {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            };
        }
        match t.data() {
            Data::F32(v) => le!(v),
            Data::F64(v) => le!(v),
            Data::F16(v) => le!(v),
            Data::BF16(v) => le!(v),
            Data::I8(v) => le!(v),
            Data::I16(v) => le!(v),
            Data::I32(v) => le!(v),
            Data::I64(v) => le!(v),
            Data::U8(v) => le!(v),
            Data::U16(v) => le!(v),
            Data::U32(v) => le!(v),
            Data::U64(v) => le!(v),
            Data::Bool(v) => out.extend(v.iter().map(|&b| b as u8)),
            Data::C64(v) => {
                for z in v.iter() {
                    out.extend_from_slice(&z.re.to_le_bytes());
                    out.extend_from_slice(&z.im.to_le_bytes());
                }
            }
            Data::C128(v) => {
                for z in v.iter() {
                    out.extend_from_slice(&z.re.to_le_bytes());
                    out.extend_from_slice(&z.im.to_le_bytes());
                }
            }
            Data::Str(v) => {
                for s in v.iter() {
                    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                    out.extend_from_slice(s);
                }
            }
        }
    }
    Ok(out)
}

/// Reads what [`encode_element`] wrote.
fn decode_element(mut b: &[u8], path: &str) -> Result<Element> {
    let bad = || Error::data_loss(format!("the cache file {path} is corrupt"));
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if b.len() < n {
            return None;
        }
        let (head, rest) = b.split_at(n);
        *b = rest;
        Some(head)
    }
    let u64_of =
        |b: &mut &[u8]| -> Option<u64> { Some(u64::from_le_bytes(take(b, 8)?.try_into().ok()?)) };
    let n = u32::from_le_bytes(
        take(&mut b, 4)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?,
    );
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let code = i32::from_le_bytes(
            take(&mut b, 4)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        );
        let dtype = DType::from_enum(code).ok_or_else(bad)?;
        let rank = take(&mut b, 1).ok_or_else(bad)?[0] as usize;
        let dims = (0..rank)
            .map(|_| u64_of(&mut b).map(|d| d as usize))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let count: usize = dims.iter().product();
        let shape = Shape::new(&dims);
        macro_rules! le {
            ($t:ty) => {{
                let w = std::mem::size_of::<$t>();
                let bytes = take(&mut b, count * w).ok_or_else(bad)?;
                let v: Vec<$t> = bytes
                    .chunks_exact(w)
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunk of the width")))
                    .collect();
                Tensor::from_vec(shape, v)?
            }};
        }
        let t = match dtype {
            DType::Float32 => le!(f32),
            DType::Float64 => le!(f64),
            DType::Float16 => le!(ferroflow_tensor::f16),
            DType::BFloat16 => le!(ferroflow_tensor::bf16),
            DType::Int8 => le!(i8),
            DType::Int16 => le!(i16),
            DType::Int32 => le!(i32),
            DType::Int64 => le!(i64),
            DType::UInt8 => le!(u8),
            DType::UInt16 => le!(u16),
            DType::UInt32 => le!(u32),
            DType::UInt64 => le!(u64),
            DType::Complex64 => {
                let bytes = take(&mut b, count * 8).ok_or_else(bad)?;
                let part = |c: &[u8]| f32::from_le_bytes(c.try_into().expect("chunk of the width"));
                let v = bytes
                    .chunks_exact(8)
                    .map(|c| ferroflow_tensor::Complex32::new(part(&c[..4]), part(&c[4..])))
                    .collect();
                Tensor::from_vec(shape, v)?
            }
            DType::Complex128 => {
                let bytes = take(&mut b, count * 16).ok_or_else(bad)?;
                let part = |c: &[u8]| f64::from_le_bytes(c.try_into().expect("chunk of the width"));
                let v = bytes
                    .chunks_exact(16)
                    .map(|c| ferroflow_tensor::Complex64::new(part(&c[..8]), part(&c[8..])))
                    .collect();
                Tensor::from_vec(shape, v)?
            }
            DType::Bool => {
                let bytes = take(&mut b, count).ok_or_else(bad)?;
                Tensor::from_vec(shape, bytes.iter().map(|&x| x != 0).collect::<Vec<bool>>())?
            }
            DType::String => {
                let mut v = Vec::with_capacity(count);
                for _ in 0..count {
                    let len =
                        usize::try_from(u64_of(&mut b).ok_or_else(bad)?).map_err(|_| bad())?;
                    v.push(take(&mut b, len).ok_or_else(bad)?.to_vec());
                }
                Tensor::from_vec(shape, v)?
            }
            _ => return Err(bad()),
        };
        out.push(t);
    }
    Ok(out)
}

impl Dataset for FileCache {
    fn cardinality(&self) -> i64 {
        self.input.0.cardinality()
    }

    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        let path = self.path();
        if std::path::Path::new(&path).exists() {
            let reader = ferroflow_records::RecordReader::open(
                &path,
                ferroflow_records::Compression::None,
                ferroflow_records::ReadOptions::strict(),
            )?;
            return Ok(Box::new(FileCacheReader { reader }));
        }
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let tmp = format!(
            "{path}.tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let writer =
            ferroflow_records::RecordWriter::create(&tmp, ferroflow_records::Compression::None)?;
        Ok(Box::new(FileCacheWriter {
            input: self.input.0.iterate(ctx)?,
            writer: Some(writer),
            tmp,
            path,
        }))
    }
}

impl DatasetIter for FileCacheWriter {
    fn next(&mut self) -> Result<Option<Element>> {
        let e = self.input.next()?;
        let Some(writer) = self.writer.as_mut() else {
            return Ok(e);
        };
        match e {
            Some(e) => {
                writer.write(&encode_element(&e)?)?;
                Ok(Some(e))
            }
            None => {
                let mut writer = self.writer.take().expect("checked above");
                writer.close()?;
                std::fs::rename(&self.tmp, &self.path).map_err(|err| {
                    Error::unknown(format!(
                        "cannot rename {} to {}: {err}",
                        self.tmp, self.path
                    ))
                })?;
                Ok(None)
            }
        }
    }
}

impl Drop for FileCacheWriter {
    fn drop(&mut self) {
        // A pass that did not finish leaves no cache.
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

impl DatasetIter for FileCacheReader {
    fn next(&mut self) -> Result<Option<Element>> {
        let name = self.reader.name().to_string();
        match self.reader.read_record()? {
            Some(r) => decode_element(&r.data, &name).map(Some),
            None => Ok(None),
        }
    }
}
