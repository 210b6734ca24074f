"""``tf.CriticalSection``: run subgraphs one at a time, across concurrent ``Session.run`` calls.

As in TensorFlow, a critical section is a mutex resource (op ``MutexV2``). ``execute(fn)`` adds a
``MutexLock`` op, builds ``fn``'s ops under a control dependency on the lock, and releases the lock with
``ConsumeMutexLock`` once ``fn``'s results are computed; the returned tensors depend on the release. A
``MutexLock`` that finds the mutex held waits (the GIL released) until the other run releases it, or the
run's deadline passes, or the session closes. A run that fails while holding the lock releases it.

ferroflow runs one step's ops one after another in graph order, so the ops ``fn`` reads from outside (made
before the lock) already run before the lock; TensorFlow's extra control edges to the lock for that purpose
are not needed.
"""

from __future__ import annotations

import contextlib
import functools
import threading

from ferroflow.framework import dtypes, errors, ops
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, control_flow_ops
from ferroflow.ops._op_util import make, make_op

__all__ = ["CriticalSection", "nondifferentiable_batch_function"]

CRITICAL_SECTIONS = "critical_sections"
CRITICAL_SECTION_EXECUTIONS = "critical_section_executions"

_STACK = threading.local()


class _ExecutionSignature:
    __slots__ = ("op", "handle", "resources", "exclusive_resource_access")

    def __init__(self, op, handle, resources, exclusive_resource_access):
        self.op = op
        self.handle = handle
        self.resources = resources
        self.exclusive_resource_access = exclusive_resource_access

    def __repr__(self):
        return f"_ExecutionSignature(op={self.op.name!r}, exclusive_resource_access={self.exclusive_resource_access})"


@contextlib.contextmanager
def _push(signature):
    stack = getattr(_STACK, "value", None)
    if stack is None:
        stack = _STACK.value = []
    if signature in stack:
        raise ValueError(
            f"Attempting to lock a CriticalSection (signature={signature}) in which we are already running. "
            "This is illegal and may cause deadlocks.")
    stack.append(signature)
    try:
        yield
    finally:
        stack.pop()


_VARIABLE_OPS = frozenset({"VariableV2", "Variable", "VarHandleOp"})


def _is_resource_like(t):
    # ferroflow's variables are reference variables: an input read straight from a variable op is the
    # variable itself (TensorFlow's resource variables give a resource handle).
    return t.dtype == dtypes.resource or t.dtype._is_ref_dtype or t.op.type in _VARIABLE_OPS


def _identity(x):
    if isinstance(x, ops.Operation):
        return control_flow_ops.group(x)
    if isinstance(x, ops.Tensor):
        return array_ops.identity(x)
    return array_ops.identity(ops.convert_to_tensor(x))


class CriticalSection:
    """A mutex in the graph: ``execute(fn)`` runs ``fn``'s ops while holding it, so two executions (in
    one run or in concurrent runs, from any threads) never interleave."""

    def __init__(self, name=None, shared_name=None, critical_section_def=None, import_scope=None):
        if critical_section_def and name is not None:
            raise ValueError(f"Arguments critical_section_def={critical_section_def} and shared_name={shared_name} "
                             "are mutually exclusive. Please only specify one of them.")
        if critical_section_def:
            raise ValueError("Argument `critical_section_def` is not supported.")
        del import_scope
        with ops.name_scope(name, "CriticalSection", []) as scope:
            with ops.init_scope():
                graph = ops.get_default_graph()
                container = graph._container or ""
                if shared_name is None:
                    shared_name = scope
                self._handle = make("MutexV2", [], {"container": container, "shared_name": shared_name}, scope)
        self._signature = (container, shared_name)
        ops.add_to_collections(CRITICAL_SECTIONS, self)

    @property
    def name(self):
        return self._handle.op.name

    def _is_self_handle(self, t):
        return (t.op.type == "MutexV2" and t.op.get_attr("shared_name")
                and t.op.get_attr("shared_name") == self._handle.op.get_attr("shared_name")
                and t.op.get_attr("container") == self._handle.op.get_attr("container"))

    def execute(self, fn, exclusive_resource_access=True, name=None):
        """Runs ``fn()`` (no arguments; use a lambda to pass some) inside the critical section and returns
        its tensors (any nested structure), computed while the section is held.

        Raises ValueError if ``fn`` executes this critical section again (that would deadlock), or, with
        ``exclusive_resource_access`` (the default), if another critical section has an execution that
        uses the same variables or resources as ``fn`` (either one asking for exclusive access)."""
        graph = ops.get_default_graph()
        with ops.name_scope(name, "critical_section_execute", []):
            with _push(self._signature):
                lock = make("MutexLock", [self._handle], {}, "MutexLock")
                before = len(graph.get_operations())
                with ops.control_dependencies([lock]):
                    r = fn()
                created = graph.get_operations()[before:]
            captured = {}
            for op in created:
                for t in op.inputs:
                    if _is_resource_like(t):
                        captured[t._tid] = t
            if any(self._is_self_handle(t) for t in captured.values()):
                raise ValueError(
                    f"Attempting to lock a CriticalSection in which we are already running "
                    f"(signature={self._signature}). This is illegal and may cause deadlocks.")
            self._check_multiple_access(captured, exclusive_resource_access)
            if r is None or not nest.flatten(r):
                raise ValueError("CriticalSection.execute: fn must return at least one tensor or op")
            r_flat = [_identity(x) for x in nest.flatten(r)]
            with ops.control_dependencies(r_flat):
                with ops.colocate_with(self._handle):
                    released = make_op("ConsumeMutexLock", [lock], {}, "ConsumeMutexLock")
            with ops.control_dependencies([released]):
                outputs = [_identity(x) for x in r_flat]
            ops.add_to_collections(CRITICAL_SECTION_EXECUTIONS, _ExecutionSignature(
                lock.op, self._handle, list(captured.values()), exclusive_resource_access))
            return nest.pack_sequence_as(r, outputs)

    def _check_multiple_access(self, captured, exclusive_resource_access):
        for sg in ops.get_collection(CRITICAL_SECTION_EXECUTIONS):
            if self._is_self_handle(sg.handle):
                continue
            if not (exclusive_resource_access or sg.exclusive_resource_access):
                continue
            shared = [t for t in sg.resources if t._tid in captured]
            if shared:
                raise ValueError(
                    f"This execution would access resources: {[t.name for t in shared]}. Either this lock "
                    f"(CriticalSection: {self._handle.name}) or lock '{sg}' (CriticalSection: {sg.handle.name}) "
                    "requested exclusive resource access of this resource. Did you mean to call execute with "
                    "keyword argument exclusive_resource_access=False?")


def nondifferentiable_batch_function(num_batch_threads, max_batch_size, batch_timeout_micros,
                                     allowed_batch_sizes=None, max_enqueued_batches=10, autograph=True,
                                     enable_large_batch_splitting=True):
    """A decorator for a function of tensors (each batched along dimension 0) whose results have no gradient.

    TensorFlow gathers the inputs of concurrent calls into batches of up to ``max_batch_size`` rows, runs the
    function once per batch and splits the results. ferroflow checks the batching arguments as TensorFlow
    does but does not batch: each call runs the function on its own inputs, which gives the same values
    (the function must treat rows independently for TensorFlow's batching to be correct at all). The
    results are wrapped in ``stop_gradient``: ``tf.gradients`` through them gives None."""
    del autograph, enable_large_batch_splitting
    for what, v in (("num_batch_threads", num_batch_threads), ("max_batch_size", max_batch_size),
                    ("max_enqueued_batches", max_enqueued_batches)):
        if int(v) <= 0:
            raise errors.InvalidArgumentError(None, None, f"Batch: {what} must be positive, got {v}")
    if int(batch_timeout_micros) < 0:
        raise errors.InvalidArgumentError(
            None, None, f"Batch: batch_timeout_micros must be non-negative, got {batch_timeout_micros}")
    if allowed_batch_sizes:
        sizes = [int(s) for s in allowed_batch_sizes]
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise errors.InvalidArgumentError(
                None, None, f"Batch: allowed_batch_sizes entries must be monotonically increasing, got {sizes}")

    def decorator(fn):
        @functools.wraps(fn)
        def decorated(*args):
            with ops.name_scope("batch"):
                tensors = [ops.convert_to_tensor(a, name=f"in_{i}") for i, a in enumerate(args)]
                for i, t in enumerate(tensors):
                    if t.shape.rank == 0:
                        raise ValueError(f"batch_function: argument {i} is a scalar; batched inputs need a "
                                         "first (batch) dimension")
                out = fn(*tensors)
                return nest.map_structure(
                    lambda x: array_ops.stop_gradient(x) if isinstance(x, ops.Tensor) else x, out)

        return decorated

    return decorator
