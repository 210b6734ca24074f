//! The dataset and iterator ops (TensorFlow's names, inputs and attrs) and
//! their kernels.

use super::iterator::{IteratorResource, NamedIterator, HANDLES};
use super::sources::{
    compression, file_names, FixedLengthRecords, Range, TensorSlices, Tensors, TextLines, TfRecords,
};
use super::transforms::{
    autotune, fresh_seed, Batch, Cache, Concatenate, FileCache, Filter, FlatMap, IgnoreErrors,
    Interleave, Map, PaddedBatch, ParallelMap, Prefetch, Repeat, Shard, Shuffle, Skip, Take,
    Unbatch, Zip,
};
use super::windows::{
    reduce, single_element, DirectedInterleave, GroupByReducer, GroupByWindow, RandomStream, Scan,
    TakeWhile, Unique, UnknownCardinality, Window,
};
use super::{Composites, Dataset, DatasetRef, Func, RaggedLeaf};
use ferroflow_graph::{Attrs, AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::blocking::Cancellable;
use ferroflow_runtime::{
    factory, Kernel, KernelFactory, KernelInit, OpContext, Plan, SessionState,
};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};
use parking_lot::Mutex;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

// --- op definitions --------------------------------------------------------

fn variant(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(
        DType::Variant,
        PartialShape::scalar(),
    )])
}

fn resource(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(
        DType::Resource,
        PartialShape::scalar(),
    )])
}

fn nothing(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![])
}

fn string_scalar(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

/// `IteratorGetNext`'s outputs: one per `output_types`, shaped by
/// `output_shapes`.
fn components(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = ctx.attrs();
    let types = a.dtypes("output_types")?;
    let shapes = a.shapes("output_shapes").unwrap_or_default();
    Ok(types
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            OutputInfo::new(
                t,
                shapes.get(i).cloned().unwrap_or_else(PartialShape::unknown),
            )
        })
        .collect())
}

/// Input `i` is a captured variable reference, as the node's
/// `_ref_inputs` attribute lists.
fn listed_ref(attrs: &Attrs, i: usize) -> bool {
    attrs
        .ints("_ref_inputs")
        .is_ok_and(|v| v.contains(&(i as i64)))
}

fn op_defs() -> Vec<OpDef> {
    // Dataset ops are stateful: their outputs are fresh descriptions
    // (shuffle seeds, caches), never folded or merged.
    let ds = |name, inputs| OpDef::new(name, inputs, variant).stateful();
    let fds = |name, inputs| OpDef::new(name, inputs, variant).ref_input(listed_ref);
    vec![
        ds("TensorSliceDataset", &["components*"]),
        ds("TensorDataset", &["components*"]),
        ds("RangeDataset", &["start", "stop", "step"]),
        ds("ZipDataset", &["input_datasets*"]),
        ds("ConcatenateDataset", &["input_dataset", "another_dataset"]),
        ds(
            "TFRecordDataset",
            &["filenames", "compression_type", "buffer_size"],
        ),
        ds(
            "TextLineDataset",
            &["filenames", "compression_type", "buffer_size"],
        ),
        ds(
            "FixedLengthRecordDatasetV2",
            &[
                "filenames",
                "header_bytes",
                "record_bytes",
                "footer_bytes",
                "buffer_size",
                "compression_type",
            ],
        ),
        fds("MapDataset", &["input_dataset", "other_arguments*"]),
        fds(
            "ParallelMapDatasetV2",
            &["input_dataset", "other_arguments*", "num_parallel_calls"],
        ),
        fds("FilterDataset", &["input_dataset", "other_arguments*"]),
        fds("FlatMapDataset", &["input_dataset", "other_arguments*"]),
        fds(
            "InterleaveDataset",
            &[
                "input_dataset",
                "other_arguments*",
                "cycle_length",
                "block_length",
            ],
        ),
        fds(
            "ParallelInterleaveDatasetV4",
            &[
                "input_dataset",
                "other_arguments*",
                "cycle_length",
                "block_length",
                "buffer_output_elements",
                "prefetch_input_elements",
                "num_parallel_calls",
            ],
        ),
        fds(
            "LegacyParallelInterleaveDatasetV2",
            &[
                "input_dataset",
                "other_arguments*",
                "cycle_length",
                "block_length",
                "buffer_output_elements",
                "prefetch_input_elements",
            ],
        ),
        fds(
            "MapAndBatchDataset",
            &[
                "input_dataset",
                "other_arguments*",
                "batch_size",
                "num_parallel_calls",
                "drop_remainder",
            ],
        ),
        ds(
            "BatchDatasetV2",
            &["input_dataset", "batch_size", "drop_remainder"],
        ),
        ds(
            "PaddedBatchDatasetV2",
            &[
                "input_dataset",
                "batch_size",
                "padded_shapes*",
                "padding_values*",
                "drop_remainder",
            ],
        ),
        ds("UnbatchDataset", &["input_dataset"]),
        ds(
            "ShuffleDataset",
            &["input_dataset", "buffer_size", "seed", "seed2"],
        ),
        ds(
            "ShuffleAndRepeatDataset",
            &["input_dataset", "buffer_size", "seed", "seed2", "count"],
        ),
        ds("RepeatDataset", &["input_dataset", "count"]),
        ds("TakeDataset", &["input_dataset", "count"]),
        ds("SkipDataset", &["input_dataset", "count"]),
        ds("PrefetchDataset", &["input_dataset", "buffer_size"]),
        ds("CacheDataset", &["input_dataset", "filename"]),
        ds("ShardDataset", &["input_dataset", "num_shards", "index"]),
        ds("IgnoreErrorsDataset", &["input_dataset"]),
        ds(
            "WindowDataset",
            &["input_dataset", "size", "shift", "stride", "drop_remainder"],
        ),
        fds(
            "GroupByWindowDataset",
            &[
                "input_dataset",
                "key_func_other_arguments*",
                "reduce_func_other_arguments*",
                "window_size_func_other_arguments*",
            ],
        ),
        fds(
            "ExperimentalGroupByReducerDataset",
            &GROUP_BY_REDUCER_INPUTS,
        )
        .stateful(),
        fds("GroupByReducerDataset", &GROUP_BY_REDUCER_INPUTS).stateful(),
        fds(
            "ScanDataset",
            &["input_dataset", "initial_state*", "other_arguments*"],
        ),
        fds("TakeWhileDataset", &["input_dataset", "other_arguments*"]),
        ds("UniqueDataset", &["input_dataset"]),
        ds(
            "DirectedInterleaveDataset",
            &["selector_input_dataset", "data_input_datasets*"],
        ),
        ds("RandomDataset", &["seed", "seed2"]),
        OpDef::new(
            "ReduceDataset",
            &["input_dataset", "initial_state*", "other_arguments*"],
            components,
        )
        .ref_input(listed_ref)
        .stateful(),
        OpDef::new("DatasetToSingleElement", &["dataset"], components).stateful(),
        OpDef::new("DatasetCardinality", &["input_dataset"], |_| {
            Ok(vec![OutputInfo::new(DType::Int64, PartialShape::scalar())])
        })
        .stateful(),
        OpDef::new("IteratorV2", &[], resource).stateful(),
        OpDef::new("OneShotIteratorFromDataset", &["dataset"], resource).stateful(),
        OpDef::new("OneShotIterator", &[], resource).stateful(),
        OpDef::new("MakeIterator", &["dataset", "iterator"], nothing).stateful(),
        OpDef::new("IteratorGetNext", &["iterator"], components).stateful(),
        OpDef::new("IteratorGetNextSync", &["iterator"], components).stateful(),
        OpDef::new(
            "IteratorToStringHandle",
            &["resource_handle"],
            string_scalar,
        )
        .stateful(),
        OpDef::new("IteratorFromStringHandleV2", &["string_handle"], resource).stateful(),
    ]
}

// --- kernel helpers --------------------------------------------------------

fn input_dataset(ctx: &OpContext<'_>, i: usize) -> Result<DatasetRef> {
    Ok((*ctx.input_resource::<DatasetRef>(i)?).clone())
}

fn output_dataset(ctx: &mut OpContext<'_>, d: impl Dataset) {
    ctx.output_resource(Arc::new(DatasetRef(Arc::new(d))));
}

fn int_input(ctx: &OpContext<'_>, i: usize, what: &str) -> Result<i64> {
    ctx.input(i)?.scalar_i64().map_err(|_| {
        Error::invalid_argument(format!("{what} of {} must be an integer scalar", ctx.node))
    })
}

fn bool_input(ctx: &OpContext<'_>, i: usize, what: &str) -> Result<bool> {
    ctx.input(i)?.scalar_bool().map_err(|_| {
        Error::invalid_argument(format!("{what} of {} must be a bool scalar", ctx.node))
    })
}

fn string_input(ctx: &OpContext<'_>, i: usize, what: &str) -> Result<String> {
    let t = ctx.input(i)?;
    match (t.rank(), t.as_slice::<Vec<u8>>()) {
        (0, Ok([s])) => Ok(String::from_utf8_lossy(s).into_owned()),
        _ => Err(Error::invalid_argument(format!(
            "{what} of {} must be a string scalar",
            ctx.node
        ))),
    }
}

fn positive(v: i64, what: &str) -> Result<usize> {
    if v <= 0 {
        bail!(invalid_argument, "{what} must be greater than zero.");
    }
    Ok(v as usize)
}

/// A function attr of a node compiled into a plan over a private state.
struct FuncTemplate {
    name: String,
    plan: Arc<Plan>,
    state: Arc<SessionState>,
}

impl FuncTemplate {
    fn compile(init: &KernelInit<'_>, attr: &str) -> Result<FuncTemplate> {
        let name = init.node.attrs.string(attr)?;
        let f = init.graph.function(&name)?.clone();
        let state = Arc::new(SessionState::default());
        let plan = Plan::compile(&f.graph, &state, &f.args, &f.outputs, &f.control_outputs)
            .map_err(|e| {
                Error::invalid_argument(format!(
                    "cannot compile function '{name}' of {}: {}",
                    init.node.name,
                    e.message()
                ))
            })?;
        Ok(FuncTemplate {
            name,
            plan: Arc::new(plan),
            state,
        })
    }

    /// The function with the captured inputs `first..end` of the node.
    fn bind(&self, ctx: &mut OpContext<'_>, first: usize, end: usize) -> Func {
        Func {
            name: self.name.clone(),
            plan: self.plan.clone(),
            state: self.state.clone(),
            captured: (first..end).map(|i| ctx.take_value(i)).collect(),
        }
    }
}

/// Builds a function-taking dataset: the bound function, where the trailing
/// scalar inputs start, and the `_sparse`/`_ragged` attrs (see [`composites`]).
type MakeWithFunc = fn(&mut OpContext<'_>, Func, usize, &Arc<Composites>) -> Result<()>;

type Compute = dyn Fn(&mut OpContext<'_>) -> Result<()> + Send + Sync;

fn simple(f: impl Fn(&mut OpContext<'_>) -> Result<()> + Send + Sync + 'static) -> KernelFactory {
    let f: Arc<Compute> = Arc::new(f);
    factory(move |_| {
        let f = f.clone();
        Ok(Box::new(move |ctx: &mut OpContext<'_>| f(ctx)))
    })
}

/// A kernel of a function-taking op: `trailing` scalar inputs follow the
/// captured `other_arguments`; `make` gets the bound function and the
/// trailing inputs' positions.
fn with_func(attr: &'static str, trailing: usize, make: MakeWithFunc) -> KernelFactory {
    factory(move |init| {
        let t = FuncTemplate::compile(init, attr)?;
        let layout = composites(init);
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let end = ctx.num_inputs() - trailing;
            let f = t.bind(ctx, 1, end);
            make(ctx, f, end, &layout)
        }))
    })
}

/// A shuffle seed from TF's (seed, seed2) pair; both 0: a fresh one.
fn seed_of(seed: i64, seed2: i64) -> u64 {
    if seed == 0 && seed2 == 0 {
        fresh_seed()
    } else {
        ((seed as u64) << 32) ^ (seed2 as u64) ^ 0x5DEE_CE66_D1CE_4E5B
    }
}

// --- iterator kernels ------------------------------------------------------

fn iterator_of(ctx: &OpContext<'_>, i: usize) -> Result<Arc<IteratorResource>> {
    ctx.input_resource::<IteratorResource>(i)
}

fn register_iterator(session: &SessionState, it: &Arc<IteratorResource>) {
    if !it.registered.swap(true, Ordering::AcqRel) {
        let weak: Weak<dyn Cancellable> = Arc::downgrade(it) as _;
        session.register_cancellable(weak);
    }
}

/// `IteratorV2`: the node's iterator (or one shared by name).
fn iterator_v2(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let id = init.node.id;
    let name = init.node.name.clone();
    let shared_name = init.node.attrs.str_or("shared_name", "")?;
    let container = init.node.attrs.str_or("container", "")?;
    let types = init.node.attrs.dtypes("output_types").unwrap_or_default();
    let shapes = init.node.attrs.shapes("output_shapes").unwrap_or_default();
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let make = || IteratorResource::new(&name, types.clone(), shapes.clone());
        let it = if shared_name.is_empty() {
            ctx.session.get_or_create(id, make)?
        } else {
            ctx.session
                .get_or_create_shared(&container, &shared_name, || Ok(make()))?
        };
        register_iterator(ctx.session, &it);
        ctx.output_resource(it);
        Ok(())
    }))
}

/// `OneShotIteratorFromDataset`: ferroflow's one-shot iterator, started on
/// its dataset input the first time it runs (TensorFlow's `OneShotIterator`
/// builds the dataset from a factory function instead; to the program the
/// two are the same).
fn one_shot(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let id = init.node.id;
    let name = init.node.name.clone();
    let types = init.node.attrs.dtypes("output_types").unwrap_or_default();
    let shapes = init.node.attrs.shapes("output_shapes").unwrap_or_default();
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let it = ctx.session.get_or_create(id, || {
            IteratorResource::new(&name, types.clone(), shapes.clone())
        })?;
        register_iterator(ctx.session, &it);
        it.make_once(|| input_dataset(ctx, 0))?;
        ctx.output_resource(it);
        Ok(())
    }))
}

/// TensorFlow's `OneShotIterator`: started, the first time it runs, on the
/// dataset its `dataset_factory` function returns (graphs TensorFlow's
/// `make_one_shot_iterator` exported).
fn one_shot_factory(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let id = init.node.id;
    let name = init.node.name.clone();
    let types = init.node.attrs.dtypes("output_types").unwrap_or_default();
    let shapes = init.node.attrs.shapes("output_shapes").unwrap_or_default();
    let factory_fn = FuncTemplate::compile(init, "dataset_factory")?;
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let it = ctx.session.get_or_create(id, || {
            IteratorResource::new(&name, types.clone(), shapes.clone())
        })?;
        register_iterator(ctx.session, &it);
        it.make_once(|| {
            let f = Func {
                name: factory_fn.name.clone(),
                plan: factory_fn.plan.clone(),
                state: factory_fn.state.clone(),
                captured: Vec::new(),
            };
            f.call_dataset(Vec::new())
        })?;
        ctx.output_resource(it);
        Ok(())
    }))
}

/// `IteratorGetNext`: waits for its prefetching threads, so it may block.
struct GetNext;

impl Kernel for GetNext {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let it = iterator_of(ctx, 0)?;
        for t in it.get_next()? {
            ctx.output(t);
        }
        Ok(())
    }

    fn may_block(&self) -> bool {
        true
    }
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "TensorSliceDataset",
            factory(|init| {
                let layout = composites(init);
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let comps = (0..ctx.num_inputs())
                        .map(|i| ctx.input(i).cloned())
                        .collect::<Result<Vec<Tensor>>>()?;
                    let d = TensorSlices::new(comps, layout.clone())?;
                    output_dataset(ctx, d);
                    Ok(())
                }))
            }),
        ),
        (
            "TensorDataset",
            simple(|ctx| {
                let components = (0..ctx.num_inputs())
                    .map(|i| ctx.input(i).cloned())
                    .collect::<Result<Vec<Tensor>>>()?;
                output_dataset(ctx, Tensors { components });
                Ok(())
            }),
        ),
        (
            "RangeDataset",
            factory(|init| {
                let dtype = init
                    .node
                    .attrs
                    .dtypes("output_types")
                    .ok()
                    .and_then(|v| v.first().copied())
                    .unwrap_or(DType::Int64);
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let d = Range {
                        start: int_input(ctx, 0, "start")?,
                        stop: int_input(ctx, 1, "stop")?,
                        step: int_input(ctx, 2, "step")?,
                        dtype,
                    };
                    ensure!(
                        d.step != 0,
                        invalid_argument,
                        "step must be a non-zero integer."
                    );
                    output_dataset(ctx, d);
                    Ok(())
                }))
            }),
        ),
        (
            "ZipDataset",
            simple(|ctx| {
                let inputs = (0..ctx.num_inputs())
                    .map(|i| input_dataset(ctx, i))
                    .collect::<Result<Vec<_>>>()?;
                output_dataset(ctx, Zip(inputs));
                Ok(())
            }),
        ),
        (
            "ConcatenateDataset",
            simple(|ctx| {
                let d = Concatenate(input_dataset(ctx, 0)?, input_dataset(ctx, 1)?);
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "TFRecordDataset",
            simple(|ctx| {
                let d = TfRecords {
                    files: file_names(ctx.input(0)?)?,
                    compression: compression(&string_input(ctx, 1, "compression_type")?)?,
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "TextLineDataset",
            simple(|ctx| {
                let d = TextLines {
                    files: file_names(ctx.input(0)?)?,
                    compression: compression(&string_input(ctx, 1, "compression_type")?)?,
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "FixedLengthRecordDatasetV2",
            simple(|ctx| {
                let nonneg = |v: i64, what: &str| {
                    usize::try_from(v).map_err(|_| {
                        Error::invalid_argument(format!("{what} must be >= 0 not {v}"))
                    })
                };
                let d = FixedLengthRecords {
                    files: file_names(ctx.input(0)?)?,
                    header_bytes: nonneg(int_input(ctx, 1, "header_bytes")?, "header_bytes")?,
                    record_bytes: positive(int_input(ctx, 2, "record_bytes")?, "record_bytes")?,
                    footer_bytes: nonneg(int_input(ctx, 3, "footer_bytes")?, "footer_bytes")?,
                    compression: compression(&string_input(ctx, 5, "compression_type")?)?,
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        ("MapDataset", map_factory(false)),
        ("ParallelMapDatasetV2", map_factory(true)),
        (
            "FilterDataset",
            with_func("predicate", 0, |ctx, predicate, _, _layout| {
                let input = input_dataset(ctx, 0)?;
                output_dataset(ctx, Filter { input, predicate });
                Ok(())
            }),
        ),
        (
            "FlatMapDataset",
            with_func("f", 0, |ctx, f, _, _layout| {
                let input = input_dataset(ctx, 0)?;
                output_dataset(ctx, FlatMap { input, f });
                Ok(())
            }),
        ),
        ("InterleaveDataset", with_func("f", 2, interleave)),
        ("ParallelInterleaveDatasetV4", with_func("f", 5, interleave)),
        // tf.data.experimental.parallel_interleave as TensorFlow emits it:
        // one background reader per open dataset, deterministic order.
        (
            "LegacyParallelInterleaveDatasetV2",
            with_func("f", 4, |ctx, f, end, _layout| {
                let input = input_dataset(ctx, 0)?;
                let cycle_length = autotune(int_input(ctx, end, "cycle_length")?);
                let block_length =
                    positive(int_input(ctx, end + 1, "block_length")?, "block_length")?;
                output_dataset(
                    ctx,
                    Interleave {
                        input,
                        f,
                        cycle_length,
                        block_length,
                        parallel: true,
                    },
                );
                Ok(())
            }),
        ),
        (
            "MapAndBatchDataset",
            with_func("f", 3, |ctx, f, end, layout| {
                let input = input_dataset(ctx, 0)?;
                let batch_size = positive(int_input(ctx, end, "batch_size")?, "batch_size")?;
                let parallelism = autotune(int_input(ctx, end + 1, "num_parallel_calls")?);
                let drop_remainder = bool_input(ctx, end + 2, "drop_remainder")?;
                let composites = layout.clone();
                let mapped = DatasetRef(Arc::new(ParallelMap {
                    input,
                    f,
                    parallelism: parallelism.max(batch_size.min(64)),
                }));
                output_dataset(
                    ctx,
                    Batch {
                        input: mapped,
                        batch_size,
                        drop_remainder,
                        composites,
                    },
                );
                Ok(())
            }),
        ),
        (
            "BatchDatasetV2",
            factory(|init| {
                let layout = composites(init);
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let d = Batch {
                        input: input_dataset(ctx, 0)?,
                        batch_size: positive(int_input(ctx, 1, "batch_size")?, "Batch size")?,
                        drop_remainder: bool_input(ctx, 2, "drop_remainder")?,
                        composites: layout.clone(),
                    };
                    output_dataset(ctx, d);
                    Ok(())
                }))
            }),
        ),
        ("PaddedBatchDatasetV2", simple(padded_batch)),
        (
            "UnbatchDataset",
            factory(|init| {
                let layout = composites(init);
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let d = Unbatch {
                        input: input_dataset(ctx, 0)?,
                        composites: layout.clone(),
                    };
                    output_dataset(ctx, d);
                    Ok(())
                }))
            }),
        ),
        (
            "ShuffleDataset",
            factory(|init| {
                let reshuffle = init.node.attrs.bool_or("reshuffle_each_iteration", true)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let d = Shuffle::new(
                        input_dataset(ctx, 0)?,
                        positive(int_input(ctx, 1, "buffer_size")?, "buffer_size")?,
                        int_input(ctx, 2, "seed")?,
                        int_input(ctx, 3, "seed2")?,
                        reshuffle,
                    );
                    output_dataset(ctx, d);
                    Ok(())
                }))
            }),
        ),
        (
            "ShuffleAndRepeatDataset",
            factory(|init| {
                let reshuffle = init.node.attrs.bool_or("reshuffle_each_iteration", true)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let shuffled = DatasetRef(Arc::new(Shuffle::new(
                        input_dataset(ctx, 0)?,
                        positive(int_input(ctx, 1, "buffer_size")?, "buffer_size")?,
                        int_input(ctx, 2, "seed")?,
                        int_input(ctx, 3, "seed2")?,
                        reshuffle,
                    )));
                    let d = Repeat {
                        input: shuffled,
                        count: int_input(ctx, 4, "count")?,
                    };
                    output_dataset(ctx, d);
                    Ok(())
                }))
            }),
        ),
        (
            "RepeatDataset",
            simple(|ctx| {
                let d = Repeat {
                    input: input_dataset(ctx, 0)?,
                    count: int_input(ctx, 1, "count")?,
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "TakeDataset",
            simple(|ctx| {
                let d = Take {
                    input: input_dataset(ctx, 0)?,
                    count: int_input(ctx, 1, "count")?,
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "SkipDataset",
            simple(|ctx| {
                let d = Skip {
                    input: input_dataset(ctx, 0)?,
                    count: int_input(ctx, 1, "count")?,
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "PrefetchDataset",
            simple(|ctx| {
                let d = Prefetch {
                    input: input_dataset(ctx, 0)?,
                    buffer_size: autotune(int_input(ctx, 1, "buffer_size")?).max(1),
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "CacheDataset",
            simple(|ctx| {
                let filename = string_input(ctx, 1, "filename")?;
                if !filename.is_empty() {
                    let input = input_dataset(ctx, 0)?;
                    output_dataset(ctx, FileCache { input, filename });
                    return Ok(());
                }
                let d = Cache {
                    input: input_dataset(ctx, 0)?,
                    cached: Arc::new(Mutex::new(None)),
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "ShardDataset",
            simple(|ctx| {
                let num_shards = int_input(ctx, 1, "num_shards")?;
                let index = int_input(ctx, 2, "index")?;
                if num_shards <= 0 {
                    bail!(
                        invalid_argument,
                        "Number of shards must be greater than zero (currently num_shards = {num_shards})."
                    );
                }
                if index < 0 || index >= num_shards {
                    bail!(
                        invalid_argument,
                        "Index must be between 0 and {} (currently index = {index}).",
                        num_shards - 1
                    );
                }
                let d = Shard {
                    input: input_dataset(ctx, 0)?,
                    num_shards: num_shards as usize,
                    index: index as usize,
                };
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "IgnoreErrorsDataset",
            simple(|ctx| {
                let d = IgnoreErrors(input_dataset(ctx, 0)?);
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        ("WindowDataset", factory(window)),
        ("GroupByWindowDataset", factory(group_by_window)),
        (
            "ExperimentalGroupByReducerDataset",
            factory(group_by_reducer),
        ),
        ("GroupByReducerDataset", factory(group_by_reducer)),
        ("ScanDataset", factory(scan)),
        (
            "TakeWhileDataset",
            with_func("predicate", 0, |ctx, predicate, _, _layout| {
                let input = input_dataset(ctx, 0)?;
                output_dataset(ctx, TakeWhile { input, predicate });
                Ok(())
            }),
        ),
        (
            "UniqueDataset",
            simple(|ctx| {
                let d = Unique(input_dataset(ctx, 0)?);
                output_dataset(ctx, d);
                Ok(())
            }),
        ),
        (
            "DirectedInterleaveDataset",
            factory(|init| {
                let stop_on_empty = init.node.attrs.bool_or("stop_on_empty_dataset", false)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let selector = input_dataset(ctx, 0)?;
                    let inputs = (1..ctx.num_inputs())
                        .map(|i| input_dataset(ctx, i))
                        .collect::<Result<_>>()?;
                    output_dataset(
                        ctx,
                        DirectedInterleave {
                            selector,
                            inputs,
                            stop_on_empty,
                        },
                    );
                    Ok(())
                }))
            }),
        ),
        (
            "RandomDataset",
            simple(|ctx| {
                let (seed, seed2) = (int_input(ctx, 0, "seed")?, int_input(ctx, 1, "seed2")?);
                let seed = (seed != 0 || seed2 != 0).then(|| seed_of(seed, seed2));
                output_dataset(ctx, RandomStream { seed });
                Ok(())
            }),
        ),
        ("ReduceDataset", factory(reduce_dataset)),
        (
            "DatasetToSingleElement",
            simple(|ctx| {
                let input = input_dataset(ctx, 0)?;
                for t in single_element(&input)? {
                    ctx.output(t);
                }
                Ok(())
            }),
        ),
        (
            "DatasetCardinality",
            simple(|ctx| {
                let n = input_dataset(ctx, 0)?.0.cardinality();
                ctx.output(Tensor::scalar(n));
                Ok(())
            }),
        ),
        ("IteratorV2", factory(iterator_v2)),
        ("OneShotIteratorFromDataset", factory(one_shot)),
        ("OneShotIterator", factory(one_shot_factory)),
        (
            "MakeIterator",
            simple(|ctx| {
                let d = input_dataset(ctx, 0)?;
                iterator_of(ctx, 1)?.make(&d)
            }),
        ),
        ("IteratorGetNext", factory(|_| Ok(Box::new(GetNext)))),
        ("IteratorGetNextSync", factory(|_| Ok(Box::new(GetNext)))),
        (
            "IteratorToStringHandle",
            simple(|ctx| {
                let it = iterator_of(ctx, 0)?;
                let handle = it.handle.clone();
                ctx.session
                    .get_or_create_shared(HANDLES, &handle, || Ok(NamedIterator(it.clone())))?;
                ctx.output(Tensor::scalar(handle.into_bytes()));
                Ok(())
            }),
        ),
        (
            "IteratorFromStringHandleV2",
            factory(|init| {
                let types = init.node.attrs.dtypes("output_types").unwrap_or_default();
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let handle = string_input(ctx, 0, "string_handle")?;
                    let named = ctx.session.get_or_create_shared::<NamedIterator>(
                        HANDLES,
                        &handle,
                        || {
                            Err(Error::invalid_argument(format!(
                                "no iterator has the string handle {handle:?} in this session"
                            )))
                        },
                    )?;
                    let it = named.0.clone();
                    if !types.is_empty() && !it.output_types.is_empty() && it.output_types != types
                    {
                        bail!(
                            invalid_argument,
                            "The iterator of handle {handle:?} yields {:?}, but this one expects {types:?}",
                            it.output_types
                        );
                    }
                    ctx.output_resource(it);
                    Ok(())
                }))
            }),
        ),
    ]
}

/// The `_sparse` and `_ragged` attrs ferroflow's Python sets on the ops
/// that batch, unbatch or slice elements: where each SparseTensor's three
/// components start, and each RaggedTensor's (start, ragged rank, row
/// splits dtype) (see [`RaggedLeaf::from_attr`]).
fn composites(init: &KernelInit<'_>) -> Arc<Composites> {
    let attrs = &init.node.attrs;
    Arc::new(Composites {
        sparse: attrs
            .ints("_sparse")
            .unwrap_or_default()
            .into_iter()
            .map(|v| v as usize)
            .collect(),
        ragged: RaggedLeaf::from_attr(&attrs.ints("_ragged").unwrap_or_default()),
    })
}

fn interleave(
    ctx: &mut OpContext<'_>,
    f: Func,
    end: usize,
    _layout: &Arc<Composites>,
) -> Result<()> {
    let input = input_dataset(ctx, 0)?;
    let cycle_length = autotune(int_input(ctx, end, "cycle_length")?);
    let block_length = positive(int_input(ctx, end + 1, "block_length")?, "block_length")?;
    // ParallelInterleaveDatasetV4 has five scalars after the captures.
    let parallel =
        ctx.num_inputs() - end == 5 && autotune(int_input(ctx, end + 4, "num_parallel_calls")?) > 1;
    output_dataset(
        ctx,
        Interleave {
            input,
            f,
            cycle_length,
            block_length,
            parallel,
        },
    );
    Ok(())
}

/// `PaddedBatchDatasetV2(input, batch_size, padded_shapes[N], padding_values[N], drop_remainder)`.
fn padded_batch(ctx: &mut OpContext<'_>) -> Result<()> {
    let n = (ctx.num_inputs() - 3) / 2;
    let input = input_dataset(ctx, 0)?;
    let batch_size = positive(int_input(ctx, 1, "batch_size")?, "Batch size")?;
    let padded_shapes = (0..n)
        .map(|i| ctx.input(2 + i)?.to_i64_vec())
        .collect::<Result<Vec<_>>>()?;
    let padding_values = (0..n)
        .map(|i| ctx.input(2 + n + i).cloned())
        .collect::<Result<Vec<_>>>()?;
    let drop_remainder = bool_input(ctx, 2 + 2 * n, "drop_remainder")?;
    output_dataset(
        ctx,
        PaddedBatch {
            input,
            batch_size,
            padded_shapes,
            padding_values,
            drop_remainder,
        },
    );
    Ok(())
}

// --- map, window, group_by_window, scan, reduce ----------------------------

/// `MapDataset` / `ParallelMapDatasetV2` (`parallel`: a trailing
/// `num_parallel_calls` input). Without `preserve_cardinality` (TF1's
/// `map`) the result's cardinality is unknown, as in TensorFlow.
fn map_factory(parallel: bool) -> KernelFactory {
    factory(move |init| {
        let t = FuncTemplate::compile(init, "f")?;
        let preserve = init.node.attrs.bool_or("preserve_cardinality", false)?;
        let trailing = usize::from(parallel);
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let end = ctx.num_inputs() - trailing;
            let f = t.bind(ctx, 1, end);
            let input = input_dataset(ctx, 0)?;
            let parallelism = if parallel {
                autotune(int_input(ctx, end, "num_parallel_calls")?)
            } else {
                1
            };
            let d: Arc<dyn Dataset> = if parallelism <= 1 {
                Arc::new(Map { input, f })
            } else {
                Arc::new(ParallelMap {
                    input,
                    f,
                    parallelism,
                })
            };
            let d = if preserve {
                d
            } else {
                Arc::new(UnknownCardinality(DatasetRef(d)))
            };
            ctx.output_resource(Arc::new(DatasetRef(d)));
            Ok(())
        }))
    })
}

// --- window, group_by_window, scan, reduce ---------------------------------

fn window(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let layout = composites(init);
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let input = input_dataset(ctx, 0)?;
        let size = int_input(ctx, 1, "size")?;
        let shift = int_input(ctx, 2, "shift")?;
        let stride = int_input(ctx, 3, "stride")?;
        ensure!(
            size > 0,
            invalid_argument,
            "Window size must be greater than zero."
        );
        ensure!(
            shift > 0,
            invalid_argument,
            "Window shift must be greater than zero."
        );
        ensure!(
            stride > 0,
            invalid_argument,
            "Window stride must be greater than zero."
        );
        let drop_remainder = bool_input(ctx, 4, "drop_remainder")?;
        output_dataset(
            ctx,
            Window {
                input,
                size: size as usize,
                shift: shift as usize,
                stride: stride as usize,
                drop_remainder,
                layout: layout.clone(),
            },
        );
        Ok(())
    }))
}

/// The number of entries of a list-of-types attr (how many inputs of a
/// list input there are).
fn list_len(init: &KernelInit<'_>, attr: &str) -> Result<usize> {
    Ok(init.node.attrs.dtypes(attr).map(|v| v.len()).unwrap_or(0))
}

fn group_by_window(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let key = FuncTemplate::compile(init, "key_func")?;
    let reduce_f = FuncTemplate::compile(init, "reduce_func")?;
    let size = FuncTemplate::compile(init, "window_size_func")?;
    let nk = list_len(init, "Tkey_func_other_arguments")?;
    let nr = list_len(init, "Treduce_func_other_arguments")?;
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let end = ctx.num_inputs();
        let key_f = key.bind(ctx, 1, 1 + nk);
        let reduce_f = reduce_f.bind(ctx, 1 + nk, 1 + nk + nr);
        let size_f = size.bind(ctx, 1 + nk + nr, end);
        let input = input_dataset(ctx, 0)?;
        output_dataset(
            ctx,
            GroupByWindow {
                input,
                key_f,
                reduce_f,
                size_f,
            },
        );
        Ok(())
    }))
}

/// The inputs of `GroupByReducerDataset` (and its `Experimental` name).
const GROUP_BY_REDUCER_INPUTS: [&str; 5] = [
    "input_dataset",
    "key_func_other_arguments*",
    "init_func_other_arguments*",
    "reduce_func_other_arguments*",
    "finalize_func_other_arguments*",
];

fn group_by_reducer(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let names = ["key_func", "init_func", "reduce_func", "finalize_func"];
    let mut templates = Vec::with_capacity(4);
    let mut counts = Vec::with_capacity(4);
    for name in names {
        templates.push(FuncTemplate::compile(init, name)?);
        counts.push(list_len(init, &format!("T{name}_other_arguments"))?);
    }
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let mut start = 1;
        let mut funcs = Vec::with_capacity(4);
        for (t, &n) in templates.iter().zip(&counts) {
            funcs.push(t.bind(ctx, start, start + n));
            start += n;
        }
        let [key_f, init_f, reduce_f, finalize_f]: [Func; 4] = funcs
            .try_into()
            .map_err(|_| Error::internal("group_by_reducer: four functions"))?;
        let input = input_dataset(ctx, 0)?;
        output_dataset(
            ctx,
            GroupByReducer {
                input,
                key_f,
                init_f,
                reduce_f,
                finalize_f,
            },
        );
        Ok(())
    }))
}

/// The initial state (inputs `1..1 + Tstate`) and the bound function of
/// `ScanDataset` / `ReduceDataset`.
fn state_and_func(
    ctx: &mut OpContext<'_>,
    t: &FuncTemplate,
    n_state: usize,
) -> Result<(Vec<Tensor>, Func)> {
    let initial = (1..1 + n_state)
        .map(|i| ctx.input(i).cloned())
        .collect::<Result<Vec<_>>>()?;
    let end = ctx.num_inputs();
    Ok((initial, t.bind(ctx, 1 + n_state, end)))
}

fn scan(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let t = FuncTemplate::compile(init, "f")?;
    let n_state = list_len(init, "Tstate")?;
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let (initial, f) = state_and_func(ctx, &t, n_state)?;
        let input = input_dataset(ctx, 0)?;
        output_dataset(ctx, Scan { input, initial, f });
        Ok(())
    }))
}

fn reduce_dataset(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let t = FuncTemplate::compile(init, "f")?;
    let n_state = list_len(init, "Tstate")?;
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let (initial, f) = state_and_func(ctx, &t, n_state)?;
        let input = input_dataset(ctx, 0)?;
        for t in reduce(&input, initial, &f)? {
            ctx.output(t);
        }
        Ok(())
    }))
}
