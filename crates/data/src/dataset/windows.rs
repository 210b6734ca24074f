//! Datasets that group, scan or choose among elements: `window`,
//! `group_by_window`, `group_by_reducer`, `scan`, `take_while`, `unique`, the directed
//! interleave behind `choose_from_datasets` / `sample_from_datasets`, the
//! random stream that drives sampling, and the ops that consume a whole
//! dataset (`reduce`, `get_single_element`, `cardinality`).

use super::transforms::{batch_elements_composite, fresh_seed, next_kept, Flatten, SplitMix};
use super::{Composites, Dataset, DatasetIter, DatasetRef, Element, Func, IterCtx};
use ferroflow_runtime::Value;
use ferroflow_tensor::{bail, ensure, DType, Data, Error, Result, Tensor};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;

type Iter = Box<dyn DatasetIter>;

/// `tf.data.INFINITE_CARDINALITY`.
pub const INFINITE: i64 = -1;
/// `tf.data.UNKNOWN_CARDINALITY`.
pub const UNKNOWN: i64 = -2;

// --- elements held in memory -----------------------------------------------

/// A window of `group_by_window`, as the dataset its reduce function gets.
pub struct Elements(pub Arc<Vec<Element>>);

struct ElementsIter(Arc<Vec<Element>>, usize);

impl Dataset for Elements {
    fn iterate(&self, _: &IterCtx) -> Result<Iter> {
        Ok(Box::new(ElementsIter(self.0.clone(), 0)))
    }

    fn cardinality(&self) -> i64 {
        self.0.len() as i64
    }
}

impl DatasetIter for ElementsIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let e = self.0.get(self.1).cloned();
        self.1 += 1;
        Ok(e)
    }
}

/// A dataset whose cardinality is unknown whatever its input's (TF1's
/// `map`, which does not promise to keep the number of elements).
pub struct UnknownCardinality(pub DatasetRef);

impl Dataset for UnknownCardinality {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        self.0 .0.iterate(ctx)
    }
}

// --- window ----------------------------------------------------------------

/// `window(size, shift, stride, drop_remainder)`. A window starts every
/// `shift` elements and takes every `stride`-th element from there, `size`
/// of them (fewer at the end unless `drop_remainder`). Each window comes
/// out as its elements stacked component by component; ferroflow's Python
/// presents it as the dataset of those rows.
pub struct Window {
    pub input: DatasetRef,
    pub size: usize,
    pub shift: usize,
    pub stride: usize,
    pub drop_remainder: bool,
    /// Where the elements' SparseTensor and RaggedTensor leaves lie: a
    /// window stacks them as batching does.
    pub layout: Arc<Composites>,
}

struct WindowIter {
    input: Iter,
    layout: Arc<Composites>,
    buffer: VecDeque<Element>,
    size: usize,
    shift: usize,
    stride: usize,
    drop_remainder: bool,
    input_done: bool,
    /// Input elements still to drop before the next window starts (a shift
    /// longer than the buffer).
    to_skip: usize,
}

impl Dataset for Window {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(WindowIter {
            input: self.input.0.iterate(ctx)?,
            layout: self.layout.clone(),
            buffer: VecDeque::new(),
            size: self.size,
            shift: self.shift,
            stride: self.stride,
            drop_remainder: self.drop_remainder,
            input_done: false,
            to_skip: 0,
        }))
    }

    fn cardinality(&self) -> i64 {
        let n = self.input.0.cardinality();
        if n < 0 {
            return n;
        }
        let (size, shift, stride) = (self.size as i64, self.shift as i64, self.stride as i64);
        if self.drop_remainder {
            let rest = n - ((size - 1) * stride + 1);
            if rest < 0 {
                0
            } else {
                rest / shift + 1
            }
        } else {
            (n + shift - 1) / shift
        }
    }
}

impl DatasetIter for WindowIter {
    fn next(&mut self) -> Result<Option<Element>> {
        while self.to_skip > 0 && !self.input_done {
            if self.input.next()?.is_none() {
                self.input_done = true;
            }
            self.to_skip -= 1;
        }
        let span = (self.size - 1) * self.stride + 1;
        while self.buffer.len() < span && !self.input_done {
            match self.input.next()? {
                Some(e) => self.buffer.push_back(e),
                None => self.input_done = true,
            }
        }
        if self.buffer.is_empty() || (self.drop_remainder && self.buffer.len() < span) {
            return Ok(None);
        }
        let picked: Vec<Element> = self
            .buffer
            .iter()
            .step_by(self.stride)
            .take(self.size)
            .cloned()
            .collect();
        let drop = self.shift.min(self.buffer.len());
        self.buffer.drain(..drop);
        self.to_skip = self.shift - drop;
        batch_elements_composite(&picked, &self.layout)
            .map(Some)
            .map_err(|e| {
                Error::invalid_argument(format!(
                    "window: the elements of one window must have the same shape to be stacked: {}",
                    e.message()
                ))
            })
    }
}

// --- group_by_window -------------------------------------------------------

/// `group_by_window(key_func, reduce_func, window_size_func)`.
pub struct GroupByWindow {
    pub input: DatasetRef,
    pub key_f: Func,
    pub reduce_f: Func,
    pub size_f: Func,
}

struct GroupByWindowIter {
    /// The reduced windows' elements.
    elements: Flatten,
    windows: KeyedWindows,
}

/// Where `group_by_window` stands in its input: the open windows of each
/// key and how long each key's windows are.
struct KeyedWindows {
    input: Iter,
    ctx: IterCtx,
    key_f: Func,
    reduce_f: Func,
    size_f: Func,
    groups: BTreeMap<i64, Vec<Element>>,
    sizes: BTreeMap<i64, usize>,
    input_done: bool,
}

impl Dataset for GroupByWindow {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(GroupByWindowIter {
            elements: Flatten::default(),
            windows: KeyedWindows {
                input: self.input.0.iterate(ctx)?,
                ctx: ctx.clone(),
                key_f: self.key_f.clone(),
                reduce_f: self.reduce_f.clone(),
                size_f: self.size_f.clone(),
                groups: BTreeMap::new(),
                sizes: BTreeMap::new(),
                input_done: false,
            },
        }))
    }
}

fn int64_scalar(out: Element, what: &str) -> Result<i64> {
    match out.as_slice() {
        [t] if t.rank() == 0 && t.dtype() == DType::Int64 => t.scalar_i64(),
        _ => bail!(
            invalid_argument,
            "`{what}` must return a single int64 scalar."
        ),
    }
}

impl KeyedWindows {
    /// The dataset `reduce_func` makes of the window of `key`.
    fn reduce(&mut self, key: i64) -> Result<Option<Iter>> {
        let window = self.groups.remove(&key).unwrap_or_default();
        let args = vec![
            Value::Tensor(Tensor::scalar(key)),
            Value::Resource(Arc::new(DatasetRef(Arc::new(Elements(Arc::new(window)))))),
        ];
        let ds = self.reduce_f.call_dataset_values(args)?;
        ds.0.iterate(&self.ctx).map(Some)
    }

    /// The next full window's reduced dataset; once the input is done, the
    /// partial windows', smallest key first.
    fn next_window(&mut self) -> Result<Option<Iter>> {
        while !self.input_done {
            let Some(e) = self.input.next()? else {
                self.input_done = true;
                break;
            };
            let key = int64_scalar(self.key_f.call(e.clone())?, "key_func")?;
            let size = match self.sizes.get(&key) {
                Some(&s) => s,
                None => {
                    let out = self.size_f.call(vec![Tensor::scalar(key)])?;
                    let s = int64_scalar(out, "window_size_func")?;
                    ensure!(
                        s > 0,
                        invalid_argument,
                        "Window size must be greater than zero, but got {s}."
                    );
                    self.sizes.insert(key, s as usize);
                    s as usize
                }
            };
            let group = self.groups.entry(key).or_default();
            group.push(e);
            if group.len() == size {
                return self.reduce(key);
            }
        }
        match self.groups.keys().next().copied() {
            Some(key) => self.reduce(key),
            None => Ok(None),
        }
    }
}

impl DatasetIter for GroupByWindowIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let windows = &mut self.windows;
        self.elements.next(|| windows.next_window())
    }
}

// --- group_by_reducer ------------------------------------------------------

/// `tf.data.experimental.group_by_reducer(key_func, Reducer(init_func,
/// reduce_func, finalize_func))`: each key's state starts as
/// `init_func(key)` and becomes `reduce_func(state, element)` for every
/// element of that key; once the input is done, `finalize_func(state)` of
/// each key is one output element, smallest key first (as TensorFlow's
/// kernel, whose states sit in an ordered map).
pub struct GroupByReducer {
    pub input: DatasetRef,
    pub key_f: Func,
    pub init_f: Func,
    pub reduce_f: Func,
    pub finalize_f: Func,
}

struct GroupByReducerIter {
    input: Option<Iter>,
    key_f: Func,
    init_f: Func,
    reduce_f: Func,
    finalize_f: Func,
    states: BTreeMap<i64, Element>,
}

impl Dataset for GroupByReducer {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(GroupByReducerIter {
            input: Some(self.input.0.iterate(ctx)?),
            key_f: self.key_f.clone(),
            init_f: self.init_f.clone(),
            reduce_f: self.reduce_f.clone(),
            finalize_f: self.finalize_f.clone(),
            states: BTreeMap::new(),
        }))
    }
}

impl DatasetIter for GroupByReducerIter {
    fn next(&mut self) -> Result<Option<Element>> {
        if let Some(input) = &mut self.input {
            while let Some(e) = input.next()? {
                let key = int64_scalar(self.key_f.call(e.clone())?, "key_func")?;
                let state = match self.states.remove(&key) {
                    Some(state) => state,
                    None => self.init_f.call(vec![Tensor::scalar(key)])?,
                };
                let (state, _) = scan_step(&self.reduce_f, &state, e)?;
                self.states.insert(key, state);
            }
            self.input = None;
        }
        match self.states.pop_first() {
            Some((_, state)) => self.finalize_f.call(state).map(Some),
            None => Ok(None),
        }
    }
}

// --- scan, take_while, unique ----------------------------------------------

/// `scan(initial_state, scan_func)`: `f(state, element)` gives the new
/// state followed by the output element.
pub struct Scan {
    pub input: DatasetRef,
    pub initial: Element,
    pub f: Func,
}

struct ScanIter {
    input: Iter,
    state: Element,
    f: Func,
}

impl Dataset for Scan {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(ScanIter {
            input: self.input.0.iterate(ctx)?,
            state: self.initial.clone(),
            f: self.f.clone(),
        }))
    }

    fn cardinality(&self) -> i64 {
        self.input.0.cardinality()
    }
}

/// One step of a scan or reduce function: the new state (checked against
/// the old one's dtypes) and the rest of the outputs.
pub(crate) fn scan_step(f: &Func, state: &Element, e: Element) -> Result<(Element, Element)> {
    let mut args = state.clone();
    args.extend(e);
    let mut out = f.call(args)?;
    let k = state.len();
    ensure!(
        out.len() >= k,
        invalid_argument,
        "function '{}' returned {} values, fewer than the {k} state components",
        f.name,
        out.len()
    );
    for (i, (old, new)) in state.iter().zip(&out).enumerate() {
        ensure!(
            old.dtype() == new.dtype(),
            invalid_argument,
            "State component {i} changed dtype from {} to {} in function '{}'",
            old.dtype(),
            new.dtype(),
            f.name
        );
    }
    let rest = out.split_off(k);
    Ok((out, rest))
}

impl DatasetIter for ScanIter {
    fn next(&mut self) -> Result<Option<Element>> {
        match self.input.next()? {
            Some(e) => {
                let (state, out) = scan_step(&self.f, &self.state, e)?;
                self.state = state;
                Ok(Some(out))
            }
            None => Ok(None),
        }
    }
}

/// `take_while(predicate)`: the elements up to the first for which
/// `predicate` is false.
pub struct TakeWhile {
    pub input: DatasetRef,
    pub predicate: Func,
}

struct TakeWhileIter {
    input: Option<Iter>,
    predicate: Func,
}

impl Dataset for TakeWhile {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(TakeWhileIter {
            input: Some(self.input.0.iterate(ctx)?),
            predicate: self.predicate.clone(),
        }))
    }
}

impl DatasetIter for TakeWhileIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let Some(input) = &mut self.input else {
            return Ok(None);
        };
        match input.next()? {
            Some(e) if self.predicate.call_predicate(e.clone())? => Ok(Some(e)),
            _ => {
                self.input = None;
                Ok(None)
            }
        }
    }
}

/// `unique()`: each element the first time it appears (one int32, int64 or
/// string scalar... or tensor: compared by dtype, shape and values).
pub struct Unique(pub DatasetRef);

struct UniqueIter {
    input: Iter,
    seen: HashSet<(Vec<usize>, Vec<u8>)>,
}

impl Dataset for Unique {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(UniqueIter {
            input: self.0 .0.iterate(ctx)?,
            seen: HashSet::new(),
        }))
    }
}

fn unique_key(e: &Element) -> Result<(Vec<usize>, Vec<u8>)> {
    let [t] = e.as_slice() else {
        bail!(
            invalid_argument,
            "unique() takes elements of one component, got {}",
            e.len()
        );
    };
    let bytes = match t.data() {
        Data::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Data::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Data::Str(v) => {
            let mut out = Vec::new();
            for s in v.iter() {
                out.extend((s.len() as u64).to_le_bytes());
                out.extend_from_slice(s);
            }
            out
        }
        _ => bail!(
            unimplemented,
            "Unique does not support dtype {}; use int32, int64 or string",
            t.dtype()
        ),
    };
    Ok((t.dims().to_vec(), bytes))
}

impl DatasetIter for UniqueIter {
    fn next(&mut self) -> Result<Option<Element>> {
        let seen = &mut self.seen;
        next_kept(&mut self.input, |e| Ok(seen.insert(unique_key(e)?)))
    }
}

// --- choose_from_datasets / sample_from_datasets ---------------------------

/// `DirectedInterleaveDataset`: each selector element (an int64 index)
/// picks the dataset giving the next element.
pub struct DirectedInterleave {
    pub selector: DatasetRef,
    pub inputs: Vec<DatasetRef>,
    pub stop_on_empty: bool,
}

struct DirectedInterleaveIter {
    selector: Iter,
    inputs: Vec<Option<Iter>>,
    stop_on_empty: bool,
    done: bool,
}

impl Dataset for DirectedInterleave {
    fn iterate(&self, ctx: &IterCtx) -> Result<Iter> {
        Ok(Box::new(DirectedInterleaveIter {
            selector: self.selector.0.iterate(ctx)?,
            inputs: self
                .inputs
                .iter()
                .map(|d| d.0.iterate(ctx).map(Some))
                .collect::<Result<_>>()?,
            stop_on_empty: self.stop_on_empty,
            done: false,
        }))
    }
}

impl DatasetIter for DirectedInterleaveIter {
    fn next(&mut self) -> Result<Option<Element>> {
        while !self.done {
            if self.inputs.iter().all(Option::is_none) {
                break;
            }
            let Some(sel) = self.selector.next()? else {
                break;
            };
            let i = match sel.as_slice() {
                [t] if t.rank() == 0 && t.dtype() == DType::Int64 => t.scalar_i64()?,
                _ => bail!(
                    invalid_argument,
                    "The selector dataset must give int64 scalars."
                ),
            };
            let n = self.inputs.len();
            if i < 0 || i as usize >= n {
                bail!(invalid_argument, "Selector index out of range: {i} >= {n}");
            }
            let Some(it) = &mut self.inputs[i as usize] else {
                continue;
            };
            match it.next()? {
                Some(e) => return Ok(Some(e)),
                None => {
                    self.inputs[i as usize] = None;
                    if self.stop_on_empty {
                        self.done = true;
                    }
                }
            }
        }
        self.done = true;
        Ok(None)
    }
}

/// `RandomDataset(seed, seed2)`: random int64s without end (SplitMix64),
/// from a fresh seed each iteration when both seeds are 0.
pub struct RandomStream {
    pub seed: Option<u64>,
}

struct RandomStreamIter(SplitMix);

impl Dataset for RandomStream {
    fn iterate(&self, _: &IterCtx) -> Result<Iter> {
        Ok(Box::new(RandomStreamIter(SplitMix(
            self.seed.unwrap_or_else(fresh_seed),
        ))))
    }

    fn cardinality(&self) -> i64 {
        INFINITE
    }
}

impl DatasetIter for RandomStreamIter {
    fn next(&mut self) -> Result<Option<Element>> {
        Ok(Some(vec![Tensor::scalar((self.0.next() >> 1) as i64)]))
    }
}

// --- whole-dataset consumers -----------------------------------------------

/// `reduce(initial_state, reduce_func)`: the state after every element.
pub(crate) fn reduce(input: &DatasetRef, initial: Element, f: &Func) -> Result<Element> {
    let ctx = IterCtx::default();
    let mut it = input.0.iterate(&ctx)?;
    let mut state = initial;
    while let Some(e) = it.next()? {
        let (s, rest) = scan_step(f, &state, e)?;
        ensure!(
            rest.is_empty(),
            invalid_argument,
            "reduce function '{}' must return only the new state",
            f.name
        );
        state = s;
    }
    Ok(state)
}

/// `get_single_element()`: the one element of a dataset.
pub(crate) fn single_element(input: &DatasetRef) -> Result<Element> {
    let ctx = IterCtx::default();
    let mut it = input.0.iterate(&ctx)?;
    let Some(e) = it.next()? else {
        bail!(invalid_argument, "Dataset was empty.");
    };
    if it.next()?.is_some() {
        bail!(invalid_argument, "Dataset had more than one element.");
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(n: i64) -> DatasetRef {
        let items = (0..n).map(|i| vec![Tensor::scalar(i)]).collect();
        DatasetRef(Arc::new(Elements(Arc::new(items))))
    }

    fn read(d: &dyn Dataset) -> Vec<Vec<i64>> {
        let mut it = d.iterate(&IterCtx::default()).unwrap();
        let mut out = Vec::new();
        while let Some(e) = it.next().unwrap() {
            out.push(e[0].to_i64_vec().unwrap());
        }
        out
    }

    fn window(n: i64, size: usize, shift: usize, stride: usize, drop_remainder: bool) -> Window {
        Window {
            input: numbers(n),
            size,
            shift,
            stride,
            drop_remainder,
            layout: Arc::new(Composites::default()),
        }
    }

    #[test]
    fn windows_start_every_shift_and_take_every_stride() {
        let w = window(7, 3, 2, 2, false);
        assert_eq!(
            read(&w),
            vec![vec![0, 2, 4], vec![2, 4, 6], vec![4, 6], vec![6]]
        );
        assert_eq!(w.cardinality(), 4);
        let w = window(7, 3, 2, 2, true);
        assert_eq!(read(&w), vec![vec![0, 2, 4], vec![2, 4, 6]]);
        assert_eq!(w.cardinality(), 2);
        // A shift longer than the window skips input elements.
        let w = window(10, 2, 4, 1, false);
        assert_eq!(read(&w), vec![vec![0, 1], vec![4, 5], vec![8, 9]]);
        assert_eq!(w.cardinality(), 3);
    }

    #[test]
    fn flatten_runs_datasets_one_after_another() {
        use super::super::transforms::Concatenate;
        // Empty datasets are skipped, at the start, between and at the end.
        let mut next = [0, 2, 0, 3, 0].map(numbers).into_iter();
        let ctx = IterCtx::default();
        let mut flat = Flatten::default();
        let mut got = Vec::new();
        while let Some(e) = flat
            .next(|| next.next().map(|d| d.0.iterate(&ctx)).transpose())
            .unwrap()
        {
            got.push(e[0].scalar_i64().unwrap());
        }
        assert_eq!(got, [0, 1, 0, 1, 2]);
        let c = Concatenate(numbers(2), numbers(3));
        assert_eq!(read(&c), [[0], [1], [0], [1], [2]]);
        assert_eq!(read(&Concatenate(numbers(0), numbers(1))), [[0]]);
        assert_eq!(c.cardinality(), 5);
    }

    #[test]
    fn unique_and_directed_interleave() {
        let items = [3i64, 1, 3, 2, 1]
            .iter()
            .map(|&i| vec![Tensor::scalar(i)])
            .collect();
        let u = Unique(DatasetRef(Arc::new(Elements(Arc::new(items)))));
        assert_eq!(read(&u), vec![vec![3], vec![1], vec![2]]);
        let choose = |stop_on_empty| DirectedInterleave {
            selector: DatasetRef(Arc::new(Elements(Arc::new(
                [0i64, 1, 0, 0, 1]
                    .iter()
                    .map(|&i| vec![Tensor::scalar(i)])
                    .collect(),
            )))),
            inputs: vec![numbers(2), numbers(3)],
            stop_on_empty,
        };
        assert_eq!(read(&choose(true)), vec![vec![0], vec![0], vec![1]]);
        assert_eq!(
            read(&choose(false)),
            vec![vec![0], vec![0], vec![1], vec![1]]
        );
    }
}
