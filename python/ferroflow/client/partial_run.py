"""``Session.partial_run_setup`` / ``Session.partial_run``: one step of a graph whose feeds arrive over
several calls.

TensorFlow runs a partial run as a single step: ``partial_run_setup`` starts the executor on the nodes the
declared fetches need, every node runs once, as soon as its inputs exist, and each ``partial_run`` supplies
some of the declared feeds and collects some of the declared fetches. Here every call (setup included)
runs, as one partition of the graph, the nodes that its feeds made runnable (``_native.PartialRun.step``);
the values later nodes or later fetches need are kept in the native object and fed to the next partitions.
So a node runs once per handle, as in TensorFlow: an ``assign_add`` or a random op that nothing fed
depends on runs during ``partial_run_setup``, and every fetch computed from it sees that one value.

Nodes whose outputs are handles rather than tensors (resource and variant outputs, and a ``VariableV2``'s
reference) cannot be kept; they run again in each partition that reads them. That is right for variables,
datasets and shared resources, but an op creating a new anonymous resource on every run (an anonymous
iterator, a ``TensorArray``) would be a different one in each call of the same handle.

TensorFlow's errors are kept: feeding a tensor not declared in the setup, or one already fed, fetching one
not declared or already fetched, and fetching what needs a declared feed not given yet are
``InvalidArgumentError``; fetching an operation raises ``RuntimeError``. A failure while running ends the
handle, as does having fed every declared feed and fetched every declared fetch; a later call with it
raises ``InvalidArgumentError("Must run 'setup' before performing partial runs!")``. Unlike TensorFlow,
whose check walks the whole graph, a fetch that a fed intermediate tensor cuts off from the placeholders
behind it is computable.
"""

from __future__ import annotations

import itertools

from ferroflow import _native
from ferroflow.client.session import _FetchPlan, _resolve_feed_key
from ferroflow.framework import dtypes, errors
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.framework.sparse_tensor import SparseTensor

_HANDLE_DTYPES = (dtypes.resource, dtypes.variant)
_handle_counter = itertools.count()


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _feed_parts(feed):
    """The tensors a declared feed stands for (a SparseTensor's or IndexedSlices' components)."""
    if isinstance(feed, SparseTensor):
        return [feed.indices, feed.values, feed.dense_shape]
    if isinstance(feed, IndexedSlices):
        parts = [feed.values, feed.indices]
        return parts + ([feed.dense_shape] if feed.dense_shape is not None else [])
    return [feed]


class _Handle:
    """The state of one partial run: what is declared, fed, fetched and already run."""

    def __init__(self, session, feed_tensors, plan):
        graph = session.graph
        self.session = session
        self.native = _native.PartialRun(session._native)
        self.feeds = {t._tid: t for t in feed_tensors}
        self.fed = set()
        self.fetches = set(plan.tensors)
        self.fetched = set()
        # Tensor ids whose values the native object holds (fed, or kept for later nodes and fetches).
        self.stored = set()
        self.executed = set()
        self.error = None
        ops = graph._ops
        self.ops = ops
        # The nodes the declared fetches and targets need, stopping at declared feeds.
        closure = set()
        stack = [tid >> _native.TID_SHIFT for tid in plan.tensors] + list(plan.targets)
        while stack:
            i = stack.pop()
            if i in closure:
                continue
            closure.add(i)
            op = ops[i]
            stack.extend(t._op._id for t in op._inputs if t._tid not in self.feeds)
            stack.extend(c._id for c in op._control_inputs)
        self.closure = closure
        self.consumers = {}
        for i in closure:
            for t in ops[i]._inputs:
                self.consumers.setdefault(t._tid, []).append(i)
        native_graph = graph._native
        self.rerun = set()
        for i in sorted(closure):
            op = ops[i]
            outs = op._outputs
            if not outs:
                continue
            if any(t._dtype.base_dtype in _HANDLE_DTYPES for t in outs):
                self.rerun.add(i)
            elif all(native_graph.output_info(t._tid)[2] for t in outs) and all(
                t._op._id in self.rerun for t in op._inputs
            ):
                # A variable's reference (VariableV2, or an Identity of one).
                self.rerun.add(i)

    # -- what can run --------------------------------------------------------
    def _ready_ops(self):
        """The nodes of the closure whose inputs all exist once the current feeds are in."""
        ops, feeds, fed = self.ops, self.feeds, self.fed
        ready = {}
        for root in self.closure:
            if root in ready:
                continue
            stack = [(root, False)]
            while stack:
                i, expanded = stack.pop()
                if i in ready:
                    continue
                op = ops[i]
                deps = [t._op._id for t in op._inputs if t._tid not in feeds] + [c._id for c in op._control_inputs]
                if not expanded:
                    stack.append((i, True))
                    stack.extend((d, False) for d in deps if d not in ready)
                    continue
                ok = all(t._tid in fed for t in op._inputs if t._tid in feeds)
                ready[i] = ok and all(ready.get(d, False) for d in deps)
        return {i for i, ok in ready.items() if ok}

    def _check_computable(self, fetch_tids):
        """TensorFlow's check that the fetches do not need a declared feed that was not given yet (following
        control edges too: such a fetch would never run)."""
        ops, feeds, fed = self.ops, self.feeds, self.fed
        for tid in fetch_tids:
            seen = set()
            queue = [tid >> _native.TID_SHIFT]
            while queue:
                op = ops[queue.pop(0)]
                for t in op._inputs:
                    if t._tid in feeds:
                        if t._tid not in fed:
                            raise _invalid(f"Fetch {t.name} can't be computed from the feeds that have been fed so far.")
                        continue
                    if t._op._id not in seen:
                        seen.add(t._op._id)
                        queue.append(t._op._id)
                for c in op._control_inputs:
                    if c._id not in seen:
                        seen.add(c._id)
                        queue.append(c._id)

    def step(self, fetch_tids, timeout_ms):
        """Runs every node that became runnable (and re-runs the handle nodes they read); returns the values
        of ``fetch_tids``."""
        ops = self.ops
        new = self._ready_ops() - self.executed
        members = set(new)
        pending = [t for t in fetch_tids if t not in self.stored]
        stack = [t >> _native.TID_SHIFT for t in pending if (t >> _native.TID_SHIFT) not in members]
        for i in new:
            stack.extend(t._op._id for t in ops[i]._inputs if t._tid not in self.stored)
        while stack:
            i = stack.pop()
            if i in members or i not in self.rerun:
                continue
            members.add(i)
            stack.extend(t._op._id for t in ops[i]._inputs if t._tid not in self.stored)
        executed = self.executed | new
        requested = set(fetch_tids)
        keep = []
        for i in new:
            if i in self.rerun:
                continue
            for t in ops[i]._outputs:
                tid = t._tid
                later = any(c not in executed for c in self.consumers.get(tid, ()))
                if later or (tid in self.fetches and tid not in self.fetched and tid not in requested):
                    keep.append(tid)
        values = self.native.step(sorted(members), list(fetch_tids), keep, timeout_ms)
        self.executed = executed
        self.stored.update(keep)
        return values

    def done(self):
        return len(self.fed) == len(self.feeds) and len(self.fetched) == len(self.fetches)


def setup(session, fetches, feeds=None):
    """``Session.partial_run_setup``: declares the feeds and fetches, runs what needs none of the feeds, and
    returns the handle (a string)."""
    session._check_open()
    graph = session.graph
    if feeds is None:
        feeds = []
    if not isinstance(feeds, (list, tuple)):
        feeds = [feeds]
    feed_tensors = []
    for feed in feeds:
        for part in _feed_parts(feed):
            try:
                t = _resolve_feed_key(graph, part)
            except (TypeError, ValueError) as e:
                raise type(e)(f"Cannot interpret argument `feed` key as Tensor: {e}") from None
            if not hasattr(t, "_tid"):
                raise TypeError(f"Cannot interpret argument `feed` key as Tensor: {part!r} is not a Tensor")
            feed_tensors.append(t)
    seen = set()
    for t in feed_tensors:
        if t._tid in seen:
            raise _invalid(f'Endpoint "{t.name}" fed more than once.')
        seen.add(t._tid)
    plan = _FetchPlan(graph, fetches)
    for tid in plan.tensors:
        if tid in seen:
            raise _invalid(f"{graph._tensor_from_tid(tid).name} is both fed and fetched.")
    graph._sync_native()
    handle = _Handle(session, feed_tensors, plan)
    name = "{}->{}/{}/;{}".format(
        ",".join(t.name for t in feed_tensors),
        ",".join(graph._tensor_from_tid(t).name for t in plan.tensors),
        ",".join(graph._ops[i].name for i in plan.targets),
        next(_handle_counter),
    )
    # The nodes that need none of the feeds run now, as TensorFlow starts the step here; a failure is
    # reported by the next partial_run.
    try:
        handle.step([], session._timeout_ms)
    except errors.OpError as e:
        handle.error = session._attach_op(e)
    session.__dict__.setdefault("_partial_runs", {})[name] = handle
    return name


def run(session, handle, fetches, feed_dict=None):
    """``Session.partial_run``: feeds ``feed_dict``, runs what that made runnable, returns ``fetches``."""
    session._check_open()
    graph = session.graph
    plan = _FetchPlan(graph, fetches)
    feed_ids, feed_vals, feed_types = session._prepare_feeds(feed_dict)
    for tid, value in zip(feed_ids, feed_vals):
        shape = getattr(value, "shape", None)
        t = graph._tensor_from_tid(tid)
        if shape is not None and not t.get_shape().is_compatible_with(shape):
            raise ValueError(f"Cannot feed value of shape {tuple(shape)} for Tensor {t.name}, which has shape "
                             f"{t.get_shape()}")
    if plan.targets:
        targets = [graph._ops[i] for i in plan.targets]
        raise RuntimeError(f"partial_run() requires empty `target_list`. Received: target_list={targets} "
                           "(non-empty)")
    if not plan.tensors and not feed_ids:
        return plan.rebuild([], session=session)
    runs = session.__dict__.get("_partial_runs", {})
    state = runs.get(handle) if isinstance(handle, str) else None
    if state is None:
        raise _invalid("Must run 'setup' before performing partial runs!")
    if state.error is not None:
        del runs[handle]
        raise state.error
    for tid in feed_ids:
        name = graph._tensor_from_tid(tid).name
        if tid not in state.feeds:
            raise _invalid(f"The feed {name} was not specified in partial_run_setup.")
        if tid in state.fed:
            raise _invalid(f"The feed {name} has already been fed.")
    for tid in plan.tensors:
        name = graph._tensor_from_tid(tid).name
        if tid not in state.fetches:
            raise _invalid(f"The fetch {name} was not specified in partial_run_setup.")
        if tid in state.fetched:
            raise _invalid(f"The fetch {name} has already been fetched.")
    fed_before = set(state.fed)
    state.fed.update(feed_ids)
    try:
        state._check_computable(plan.tensors)
    except errors.OpError:
        state.fed = fed_before
        raise
    state.native.feed(feed_ids, feed_vals, feed_types)
    state.stored.update(feed_ids)
    try:
        values = state.step(plan.tensors, session._timeout_ms)
    except errors.OpError as e:
        del runs[handle]
        raise session._attach_op(e) from None
    state.fetched.update(plan.tensors)
    if state.done():
        del runs[handle]
    return plan.rebuild(values, session=session)


def close_all(session):
    """Forgets every partial run of a closing session."""
    runs = session.__dict__.pop("_partial_runs", None)
    for state in (runs or {}).values():
        state.native.clear()
