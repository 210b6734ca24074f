"""``tf.Session``: runs parts of a graph in the Rust core.

``run`` flattens the fetch structure to tensor ids, converts feeds the way
TensorFlow does (``np.asarray(value, dtype=tensor's dtype)``), and calls the
native session, which compiles each distinct signature once and runs the
whole step with the GIL released.

``config`` (a ``tf.ConfigProto``): ``intra_op_parallelism_threads`` sizes the
session's own kernel thread pool (0: the process-wide pool, one thread per
core); every kernel, matrix products included, splits its work over that
pool. Results are identical for any thread count. Concurrent ``run`` calls
on such a session take turns (on the default pool they run side by side).
``inter_op_parallelism_threads`` above 1 lets a run's independent small ops
(elementwise ops, bias gradients, small updates: 256 KiB of input at most)
run on that many threads less one, each on one core, beside the op the
calling thread runs on all the kernel threads; values are the same as with
one op at a time, only ops that nothing orders may run in another order, as
in TensorFlow. 0 and 1 run one op at a time on the calling thread (unlike
TensorFlow, 0 does not pick a pool size: every kernel already uses every
core).
``log_device_placement`` (or ``tf.debugging.set_log_device_placement(True)`` before the
session is made) writes each node's device to stderr when a run first meets it
(``framework/placement_log.py``). Every other field (``device_count``, ``gpu_options``,
``allow_soft_placement``, ``graph_options``,
``session_inter_op_thread_pool``, ``use_per_session_threads``, ...) is
accepted and ignored.

``run(..., options=RunOptions(trace_level=...), run_metadata=RunMetadata())``:
any trace level above ``NO_TRACE`` makes the executor time every node and
fills ``run_metadata.step_stats`` (one ``DeviceStepStats`` for the CPU with a
``NodeExecStats`` per executed node); untraced runs take no timestamps.
``RunOptions.timeout_in_ms`` (or ``ConfigProto.operation_timeout_in_ms`` for
every run) bounds how long a run's kernels may wait on queues and iterators:
past it the run raises ``DeadlineExceededError``. Other ``RunOptions`` fields
(``output_partition_graphs``, ...) are ignored.

``close()`` wakes every run still waiting on a queue or an iterator with
``CancelledError`` before freeing the session's state.
"""

from __future__ import annotations

import collections
import operator
import threading

import numpy as np

from ferroflow import _native
from ferroflow.core.protobuf import config_pb2, rewriter_config_pb2
from ferroflow.framework import dtypes, errors, ops, placement_log, tensor_util, traceback_utils
from ferroflow.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from ferroflow.framework.ops import get_default_session  # noqa: F401  (the client's traditional home)
from ferroflow.framework.sparse_tensor import SparseTensor, SparseTensorValue
from ferroflow.ops import script_ops, session_ops

_BF16 = dtypes.bfloat16
_Operation = ops.Operation
_Tensor = ops.Tensor
_GRAPH_ELEMENTS = (ops.Tensor, ops.Operation)


class _FetchElement:
    """How one leaf of a fetch structure is fetched."""

    __slots__ = ("index", "is_op", "dtype", "handle_dtype")

    def __init__(self, index, is_op, dtype, handle_dtype=None):
        self.index = index
        self.is_op = is_op
        self.dtype = dtype
        # For a GetSessionHandle output: the kept tensor's dtype (the value comes back as a TensorHandle).
        self.handle_dtype = handle_dtype


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


class _FetchPlan:
    """Flattens a nested fetch structure into unique tensors and ops, and rebuilds results."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.tensors = []
        self.targets = []
        self._tensor_index = {}
        self._target_set = set()
        self.structure = self._build(fetches)

    def _leaf(self, fetch):
        g = self.graph
        if fetch is None:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or Tensor. (Can not convert a NoneType into a Tensor or Operation.)")
        try:
            el = g.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError(
                f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or Tensor. ({e})"
            ) from None
        except ValueError as e:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({e})") from None
        except KeyError as e:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({e})") from None
        return self._element(el)

    def _element(self, el):
        """The leaf for ``el``, a tensor or op of this graph."""
        if self.graph._unfetchable and not self.graph.is_fetchable(el):
            raise ValueError(f"Operation {el.name!r} has been marked as not fetchable.")
        if isinstance(el, _Operation):
            if el._id not in self._target_set:
                self._target_set.add(el._id)
                self.targets.append(el._id)
            return _FetchElement(-1, True, None)
        idx = self._tensor_index.get(el._tid)
        if idx is None:
            idx = len(self.tensors)
            self._tensor_index[el._tid] = idx
            self.tensors.append(el._tid)
        handle_dtype = el._op._inputs[0].dtype if el._op._type == "GetSessionHandle" else None
        return _FetchElement(idx, False, el._dtype, handle_dtype)

    def _build(self, fetch):
        if isinstance(fetch, _GRAPH_ELEMENTS) and fetch.graph is self.graph:
            return self._element(fetch)
        if isinstance(fetch, IndexedSlices):
            parts = [fetch.values, fetch.indices] + ([fetch.dense_shape] if fetch.dense_shape is not None else [])
            return ("indexed_slices", None, [self._build(p) for p in parts])
        if isinstance(fetch, SparseTensor):
            return ("sparse", None, [self._build(p) for p in (fetch.indices, fetch.values, fetch.dense_shape)])
        if hasattr(fetch, "_session_fetch_components") and not isinstance(fetch, type):
            # A composite (a RaggedTensor): fetched as its component tensors, rebuilt from their values.
            return ("composite", fetch._session_fetch_rebuild,
                    [self._build(p) for p in fetch._session_fetch_components()])
        if isinstance(fetch, (list, tuple)) and not _is_namedtuple(fetch):
            return (type(fetch), [self._build(f) for f in fetch])
        if _is_namedtuple(fetch):
            return ("namedtuple", type(fetch), [self._build(f) for f in fetch])
        if isinstance(fetch, dict):
            return ("dict", type(fetch), [(k, self._build(v)) for k, v in fetch.items()])
        return self._leaf(fetch)

    def rebuild(self, values, node=None, session=None):
        """The fetched ``values`` in the fetch structure; ``session`` owns the TensorHandles of handle fetches."""
        node = self.structure if node is None else node
        if isinstance(node, _FetchElement):
            if node.is_op:
                return None
            v = values[node.index]
            if node.handle_dtype is not None:
                return session_ops.TensorHandle(v, node.handle_dtype, session)
            return tensor_util.from_native(v, node.dtype) if node.dtype is _BF16 else v
        if node[0] == "indexed_slices":
            vals = [self.rebuild(values, n, session) for n in node[2]]
            return IndexedSlicesValue(vals[0], vals[1], vals[2] if len(vals) > 2 else None)
        if node[0] == "sparse":
            return SparseTensorValue(*[self.rebuild(values, n, session) for n in node[2]])
        if node[0] == "composite":
            return node[1]([self.rebuild(values, n, session) for n in node[2]])
        if node[0] == "namedtuple":
            return node[1](*[self.rebuild(values, n, session) for n in node[2]])
        if node[0] == "dict":
            cls = node[1]
            items = [(k, self.rebuild(values, n, session)) for k, n in node[2]]
            if cls is collections.defaultdict:
                return dict(items)
            try:
                return cls(items)
            except TypeError:
                return dict(items)
        cls, children = node
        vals = [self.rebuild(values, n, session) for n in children]
        return vals if cls is list else (tuple(vals) if cls is tuple else cls(vals))


# The NumPy dtype of each numeric dtype that ndarrays are fed as unchanged (strings and bfloat16 convert).
_FEED_AS_IS = {
    dt.as_datatype_enum: np.dtype(dt.as_numpy_dtype)
    for dt in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
               dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.bool)
}


def _feed_value(tensor, value, dt=None):
    """``value`` as the native layer takes it for feeding ``tensor`` (whose base dtype is ``dt``)."""
    if dt is None:
        dt = tensor.dtype.base_dtype
    if type(value) is np.ndarray and value.dtype == _FEED_AS_IS.get(dt._type_enum):
        # The common case in a training loop: a batch already of the placeholder's dtype.
        return value
    if isinstance(value, ops.Tensor):
        raise TypeError(
            "The value of a feed cannot be a tf.Tensor object. Acceptable feed values include Python scalars, "
            "strings, lists, numpy ndarrays, or TensorHandles."
        )
    if dt == dtypes.string:
        if isinstance(value, session_ops.TensorHandle):
            value = value.handle
        arr = np.asarray(value, dtype=object)
        return tensor_util.to_native(arr, dt)
    if dt == _BF16:
        return tensor_util.to_native(np.asarray(value), dt)
    if dt.is_quantized:
        try:
            return tensor_util.quantized_storage(np.asarray(value), dt)
        except (ValueError, TypeError) as e:
            raise TypeError(f"Cannot convert the value fed for {tensor.name!r} to {dt.name}: {e}") from None
    try:
        if dt.is_integer:
            # Out-of-range Python ints wrap around, as TensorFlow feeds them.
            with np.errstate(invalid="ignore", over="ignore"):
                arr = tensor_util.wrap_integers(value, dt.as_numpy_dtype)
        else:
            arr = np.asarray(value, dtype=dt.as_numpy_dtype)
    except (ValueError, TypeError) as e:
        raise TypeError(
            f"Cannot convert the value fed for {tensor.name!r} to {dt.name}: {e}"
        ) from None
    if arr.dtype == object:
        raise TypeError(f"Cannot feed a value of type object to {tensor.name!r}")
    return arr


def _sparse_feed_pairs(key, value):
    """The (tensor, value) feeds of a SparseTensor key: its indices, values and dense_shape from a
    ``SparseTensorValue`` or an ``(indices, values, dense_shape)`` tuple, as TensorFlow accepts."""
    if isinstance(value, SparseTensor):
        raise TypeError(
            "The value of a feed cannot be a tf.Tensor object. Acceptable feed values include Python scalars, "
            "strings, lists, numpy ndarrays, or TensorHandles."
        )
    if not isinstance(value, tuple) or len(value) != 3:
        raise TypeError(
            f"The value fed for the SparseTensor {key.values.name!r} must be a SparseTensorValue or an "
            f"(indices, values, dense_shape) tuple, got {type(value).__name__}."
        )
    return tuple(zip((key.indices, key.values, key.dense_shape), value))


def _flatten_feed_items(feed_dict):
    """TensorFlow's ``nest.flatten_dict_items``: a tuple key (an RNN's state, ``{cell_state: state}``) feeds each
    of its tensors from the matching leaf of the value."""
    from ferroflow.ops import _nest

    flat = {}
    for key, value in feed_dict.items():
        if not isinstance(key, tuple):
            pairs = [(key, value)]
        else:
            keys, values = _nest.flatten(key), _nest.flatten(value)
            if len(keys) != len(values):
                raise ValueError(
                    f"Could not flatten dictionary. Key had {len(keys)} elements, but value had {len(values)} "
                    f"elements. Key: {keys}, value: {values}."
                )
            pairs = zip(keys, values)
        for k, v in pairs:
            if k in flat:
                raise ValueError(f"Could not flatten dictionary: key {k} is not unique.")
            flat[k] = v
    return flat.items()


def _resolve_feed_key(graph, key):
    if isinstance(key, ops.Tensor):
        if key.graph is not graph:
            raise ValueError(f"Tensor {key} is not an element of this graph.")
        return key
    conv = getattr(key, "_as_graph_element", None)
    if conv is not None:
        return conv()
    try:
        return graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
    except (KeyError, ValueError, TypeError) as e:
        raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None


def _timeout_ms(options, default_ms):
    """How long a run's kernels may wait, in ms (0: no limit): the run's own ``timeout_in_ms``, else the session's
    ``operation_timeout_in_ms``."""
    if options is not None and options.timeout_in_ms > 0:
        return options.timeout_in_ms
    return default_ms


def _wants_trace(options, run_metadata):
    """Whether a run must record step stats; checks the argument types as TensorFlow does."""
    if options is not None and not isinstance(options, config_pb2.RunOptions):
        raise TypeError(f"options must be a tf.RunOptions, but got {type(options)}")
    if run_metadata is not None and not isinstance(run_metadata, config_pb2.RunMetadata):
        raise TypeError(f"run_metadata must be a tf.RunMetadata, but got {type(run_metadata)}")
    return run_metadata is not None and options is not None and options.trace_level != config_pb2.RunOptions.NO_TRACE


def _fill_run_metadata(run_metadata, step_trace):
    """Replaces ``run_metadata`` by the step stats of a traced run (see ``_native.StepTrace``)."""
    device, nodes, threads = step_trace
    run_metadata.Clear()
    dev = run_metadata.step_stats.dev_stats.add()
    dev.device = device
    for name, label, start, op_start, op_end, all_end, tid in nodes:
        ns = dev.node_stats.add()
        ns.node_name = name
        ns.timeline_label = label
        ns.all_start_nanos = start
        ns.all_start_micros = start // 1000
        ns.scheduled_nanos = start
        ns.scheduled_micros = start // 1000
        ns.op_start_rel_nanos = op_start
        ns.op_start_rel_micros = op_start // 1000
        ns.op_end_rel_nanos = op_end
        ns.op_end_rel_micros = op_end // 1000
        ns.all_end_rel_nanos = all_end
        ns.all_end_rel_micros = all_end // 1000
        ns.thread_id = tid
    for tid, tname in threads:
        dev.thread_names[tid] = tname


def _bf16_rewrite_on(config):
    """Whether ``config`` turns on the CPU bfloat16 rewrite (``auto_mixed_precision_onednn_bfloat16``,
    or its old name ``auto_mixed_precision_mkl``): ON or AGGRESSIVE, as TensorFlow reads the toggle."""
    if config is None:
        return False
    rewrite = config.graph_options.rewrite_options
    on = (rewriter_config_pb2.RewriterConfig.ON, rewriter_config_pb2.RewriterConfig.AGGRESSIVE)
    return rewrite.auto_mixed_precision_onednn_bfloat16 in on or rewrite.auto_mixed_precision_mkl in on


class BaseSession:
    """Shared implementation of ``Session`` and ``InteractiveSession``."""

    def __init__(self, target="", graph=None, config=None):
        self._graph = ops.get_default_graph() if graph is None else graph
        if not isinstance(self._graph, ops.Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(self._graph)}")
        self._target = target
        if config is not None and not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        self._config = config
        intra = max(0, config.intra_op_parallelism_threads) if config is not None else 0
        inter = max(0, config.inter_op_parallelism_threads) if config is not None else 0
        if isinstance(target, bytes):
            target = target.decode()
        target = target or ""
        # Only grpc:// targets reach a cluster; others ('', 'local') run in-process as before.
        cluster_target = target if target.startswith("grpc://") else ""
        self._native = _native.Session(
            self._graph._native, intra, cluster_target, mixed_precision_bf16=_bf16_rewrite_on(config),
            inter_op_threads=inter)
        self._timeout_ms = max(0, config.operation_timeout_in_ms) if config is not None else 0
        log_placement = placement_log.get_log_device_placement() or (config is not None and config.log_device_placement)
        self._placement_logger = placement_log.PlacementLogger() if log_placement else None
        self._closed = False
        # Fetch structures of flat lists/tuples of graph elements, by their items' ids (see _fetch_plan).
        self._fetch_plans = {}
        self._default_session_ctx = None
        self._default_graph_ctx = None
        self._lock = threading.Lock()

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def() if hasattr(self._graph, "as_graph_def") else None

    @property
    def sess_str(self):
        return self._target

    def list_devices(self):
        return [_DeviceAttributes("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, 0)]

    def as_default(self):
        """Makes this the default session for ``Tensor.eval`` and ``Operation.run``."""
        return ops._default_session_stack.get_controller(self)

    # TensorHandles dropped by Python are deleted from the session in batches of this many, as in TF.
    _DEAD_HANDLES_THRESHOLD = 10

    def _register_dead_handle(self, handle):
        """Called when a TensorHandle of this session is garbage collected: once enough have gathered,
        their tensors are dropped from the session."""
        dead = self.__dict__.setdefault("_dead_handles", [])
        dead.append(handle)
        if len(dead) < self._DEAD_HANDLES_THRESHOLD or self._closed:
            return
        self._dead_handles = []
        for handle in dead:
            try:
                holder, deleter = session_ops._get_handle_deleter(self._graph, handle)
                self.run(deleter, feed_dict={holder: handle})
            except (errors.OpError, RuntimeError):  # deleted already, or a finalized graph has no deleter yet
                pass

    def _check_open(self):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")

    @traceback_utils.filter_traceback
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in ``fetches`` (any nesting of lists, tuples, dicts,
        namedtuples), feeding ``feed_dict``. Returns values in the same structure."""
        graph = self._graph
        if self._placement_logger is not None:
            self._placement_logger(graph)
        # Fast paths: one op (a training step) or one tensor, no options, nothing marked unfetchable. Kept to a
        # few attribute reads: after a step that streamed megabytes through the caches, every line of Python
        # this touches is a cache miss.
        if options is None and run_metadata is None and not self._timeout_ms and not self._closed and not graph._unfetchable:
            if isinstance(fetches, _Operation) and fetches._graph is graph:
                try:
                    if feed_dict:
                        self._native.run(*self._prepare_feeds(feed_dict), [], [fetches._id])
                    else:
                        self._native.run_target(fetches._id)
                except errors.OpError as e:
                    raise self._attach_op(e) from None
                return None
            if isinstance(fetches, _Tensor):
                if fetches.graph is not graph:
                    raise ValueError(
                        f"Fetch argument {fetches!r} cannot be interpreted as a Tensor. (Tensor {fetches} is not an "
                        "element of this graph.)"
                    )
                try:
                    if feed_dict:
                        v = self._native.run(*self._prepare_feeds(feed_dict), [fetches._tid], [])[0]
                    else:
                        v = self._native.run_fetch(fetches._tid)
                except errors.OpError as e:
                    raise self._attach_op(e) from None
                if type(v) is bytes and fetches._op._type == "GetSessionHandle":
                    return session_ops.TensorHandle(v, fetches._op._inputs[0].dtype, self)
                return tensor_util.from_native(v, fetches.dtype) if fetches._dtype is _BF16 else v
        self._check_open()
        trace = _wants_trace(options, run_metadata)
        plan = self._fetch_plan(graph, fetches)
        feed_ids, feed_vals, feed_types = self._prepare_feeds(feed_dict)
        timeout = _timeout_ms(options, self._timeout_ms)
        out = self._call_native(feed_ids, feed_vals, feed_types, plan.tensors, plan.targets, trace, timeout)
        if trace:
            out, step_trace = out
            _fill_run_metadata(run_metadata, step_trace)
        elif run_metadata is not None:
            run_metadata.Clear()
        return plan.rebuild(out, session=self)

    def _fetch_plan(self, graph, fetches):
        """The ``_FetchPlan`` of ``fetches``. A training loop fetches the same list every step
        (``[train_op, loss]``), so flat lists and tuples of this graph's tensors and ops are remembered, keyed by
        their items' ids; the entry keeps the items alive, so a hit whose items are the same objects is the same
        structure."""
        if type(fetches) not in (list, tuple) or len(fetches) > 16 or graph._unfetchable:
            return _FetchPlan(graph, fetches)
        key = (type(fetches), *map(id, fetches))
        hit = self._fetch_plans.get(key)
        if hit is not None and all(map(operator.is_, hit[0], fetches)):
            return hit[1]
        plan = _FetchPlan(graph, fetches)
        if all(isinstance(f, _GRAPH_ELEMENTS) for f in fetches):
            if len(self._fetch_plans) >= 64:
                self._fetch_plans.clear()
            self._fetch_plans[key] = (tuple(fetches), plan)
        return plan

    def _prepare_feeds(self, feed_dict):
        feed_ids, feed_vals, feed_types = [], [], []
        if not feed_dict:
            return feed_ids, feed_vals, feed_types
        graph = self._graph
        unfeedable = graph._unfeedable
        items = feed_dict.items()
        if any(type(k) is not _Tensor and isinstance(k, tuple) for k in feed_dict):
            items = _flatten_feed_items(feed_dict)
        for key, value in items:
            if isinstance(key, _Tensor):
                pairs = ((key, value),)
            elif isinstance(key, SparseTensor):
                pairs = _sparse_feed_pairs(key, value)
            elif hasattr(key, "_session_feed_pairs"):
                # A composite key (a RaggedTensor of placeholders) names its parts' feeds.
                pairs = key._session_feed_pairs(value)
            else:
                t = _resolve_feed_key(graph, key)
                if not isinstance(t, _Tensor):
                    raise TypeError(f"Cannot interpret feed_dict key as Tensor: {key!r} is not a Tensor")
                pairs = ((t, value),)
            for t, v in pairs:
                if t.graph is not graph:
                    raise ValueError(f"Tensor {t} is not an element of this graph.")
                if unfeedable and t in unfeedable:
                    raise ValueError(f"Tensor {t.name} may not be fed.")
                dt = t._dtype.base_dtype
                feed_ids.append(t._tid)
                feed_vals.append(_feed_value(t, v, dt))
                feed_types.append(dt._type_enum)
        return feed_ids, feed_vals, feed_types

    def _call_native(self, feed_ids, feed_vals, feed_types, fetch_ids, target_ids, trace=False, timeout_ms=0):
        try:
            return self._native.run(feed_ids, feed_vals, feed_types, fetch_ids, target_ids, trace, timeout_ms)
        except errors.OpError as e:
            raise self._attach_op(e) from None

    def _attach_op(self, e):
        if isinstance(e.op, str):
            op = self._graph._get_operation_by_name_unsafe(e.op)
            if op is not None:
                e._op = op
                e._node_def = op.node_def
        return e

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function running ``fetches`` with positional values for ``feed_list``; the plan is compiled once."""
        self._check_open()
        if self._placement_logger is not None:
            self._placement_logger(self._graph)
        plan = _FetchPlan(self._graph, fetches)
        # A SparseTensor in feed_list takes one value (a SparseTensorValue or a 3-tuple) for its three parts.
        keys = list(feed_list or [])
        sparse_at = [isinstance(f, SparseTensor) for f in keys]
        feeds = []
        for f, is_sparse in zip(keys, sparse_at):
            feeds.extend((f.indices, f.values, f.dense_shape) if is_sparse else (_resolve_feed_key(self._graph, f),))
        runner = self._native.make_callable(
            [t._tid for t in feeds],
            [t.dtype.base_dtype.as_datatype_enum for t in feeds],
            plan.tensors,
            plan.targets,
        )
        session = self

        def call(*args, **kwargs):
            options = run_metadata = None
            if accept_options:
                options = kwargs.pop("options", None)
                run_metadata = kwargs.pop("run_metadata", None)
            if kwargs:
                raise TypeError(f"callable got unexpected keyword arguments: {sorted(kwargs)}")
            if len(args) != len(keys):
                raise TypeError(f"Expected {len(keys)} feed values, got {len(args)}")
            if any(sparse_at):
                args = [p for k, a, sp in zip(keys, args, sparse_at)
                        for p in ((v for _, v in _sparse_feed_pairs(k, a)) if sp else (a,))]
            session._check_open()
            trace = _wants_trace(options, run_metadata)
            timeout = _timeout_ms(options, session._timeout_ms)
            vals = [_feed_value(t, v) for t, v in zip(feeds, args)]
            try:
                out = runner(vals, trace, timeout) if trace or timeout else runner(vals)
            except errors.OpError as e:
                raise session._attach_op(e) from None
            if trace:
                out, step_trace = out
                _fill_run_metadata(run_metadata, step_trace)
            elif run_metadata is not None:
                run_metadata.Clear()
            return plan.rebuild(out, session=session)

        return call

    def partial_run_setup(self, fetches, feeds=None):
        """Declares the ``fetches`` and ``feeds`` of a partial run and returns its handle (see
        ``client/partial_run.py``)."""
        from ferroflow.client import partial_run

        return partial_run.setup(self, fetches, feeds)

    def partial_run(self, handle, fetches, feed_dict=None):
        """Feeds ``feed_dict`` to the partial run ``handle`` and returns ``fetches``, each node running once
        per handle."""
        from ferroflow.client import partial_run

        return partial_run.run(self, handle, fetches, feed_dict)

    def close(self):
        """Frees the session's resources (variables)."""
        if not self._closed:
            self._closed = True
            if "_partial_runs" in self.__dict__:
                from ferroflow.client import partial_run

                partial_run.close_all(self)
            self._native.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


class _DeviceAttributes:
    def __init__(self, name, device_type, memory_limit_bytes, incarnation):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit_bytes
        self.incarnation = incarnation

    def __repr__(self):
        return f"_DeviceAttributes({self.name}, {self.device_type}, {self.memory_limit_bytes}, {self.incarnation})"


class Session(BaseSession):
    """A session: ``with tf.Session() as sess: sess.run(...)``."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)

    def __enter__(self):
        if self._default_graph_ctx is None:
            self._default_graph_ctx = self._graph.as_default()
        self._default_session_ctx = self.as_default()
        self._default_graph_ctx.__enter__()
        self._default_session_ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self._default_session_ctx.__exit__(exc_type, exc, tb)
            self._default_graph_ctx.__exit__(exc_type, exc, tb)
        finally:
            self._default_session_ctx = None
            self._default_graph_ctx = None
            self.close()
        return False

    @staticmethod
    def reset(target, containers=None, config=None):
        """Distributed sessions only; a no-op in-process."""


class InteractiveSession(BaseSession):
    """A session that installs itself as the default on creation (for shells and notebooks)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._graph_ctx = self._graph.as_default()
        self._graph_ctx.__enter__()
        self._session_ctx = self.as_default()
        self._session_ctx.__enter__()
        self._explicitly_closed = False

    def close(self):
        if not self._closed:
            try:
                self._session_ctx.__exit__(None, None, None)
                self._graph_ctx.__exit__(None, None, None)
            except (IndexError, ValueError):  # pragma: no cover - closed from another thread
                pass
        super().close()


def _evaluate_in_own_session(tensors):
    """Values of graph tensors built inside a py_function's function (TF runs those ops eagerly)."""
    with Session(graph=ops.get_default_graph()) as sess:
        return sess.run(list(tensors))


script_ops._evaluate_tensors = _evaluate_in_own_session
