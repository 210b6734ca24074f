"""``tf.GradientTape`` in a TF1 graph.

TensorFlow's tape records operations as they execute eagerly. In a graph
nothing executes while the program is built, so the graph-mode meaning (what
TensorFlow 2.21 itself does with ``disable_v2_behavior()`` and resource
variables) is: the tape records the ops *created* in the default graph while it
is recording (inside ``with``, outside ``stop_recording()``), and
``tape.gradient(target, sources)`` is ``tf.gradients(target, sources)`` cut down
to them:

* a tensor is on the tape when it is watched (``tape.watch(t)``), is a watched
  variable (every trainable variable an op recorded on the tape reads, unless
  ``watch_accessed_variables=False``, and every variable given to ``watch``), or
  is an output of a recorded op with an input on the tape. Recorded ops are
  those created while recording that have an input on the tape;
* gradients flow only back through recorded ops: a tensor computed before the
  ``with`` (or under ``stop_recording``) is a constant to the tape, even when
  it was computed from a watched variable;
* inside a ``tf.function`` body (TF 2's training step: tape, ``gradient``,
  ``apply_gradients``), a variable is read through the body's captures of it,
  and its gradient is taken at those;
* a source not on the tape, or a target the tape never reached, gets None
  (zeros with ``unconnected_gradients='zero'``).

The result is symbolic, for ``Session.run``. A non-persistent tape gives one
``gradient`` (or ``jacobian``) and then raises RuntimeError, as TensorFlow's.
``jacobian``/``batch_jacobian`` unroll one gradient per element of the target
(the number of elements, per example for ``batch_jacobian``, must be known
when the graph is built); ``parallel_iterations`` and ``experimental_use_pfor``
are accepted and change nothing.
"""

from __future__ import annotations

import contextlib

from ferroflow.framework import ops
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops.gradients_impl import UnconnectedGradients, gradients

__all__ = ["GradientTape"]

_USED = "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)"


def _is_variable(x):
    from ferroflow.ops.variables import Variable

    return isinstance(x, Variable)


def _variable_tensors(v):
    """The tensors through which ops read variable ``v``: its reference and its ``read`` snapshot."""
    out = [v._ref()]
    snapshot = getattr(v, "_snapshot", None)
    if snapshot is not None:
        out.append(snapshot)
    return out


class GradientTape:
    """Records the ops made in a graph while active; ``gradient`` differentiates through them only."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._recording = False
        self._used = False
        self._reset_state()

    def _reset_state(self):
        self._graph = None
        self._intervals = []  # [start op id, end op id or None while recording]
        self._watched = []  # (op count when watched, tensor or variable)

    # -- recording -------------------------------------------------------------
    def __enter__(self):
        self._push_tape()
        return self

    def __exit__(self, typ, value, traceback):
        if self._recording:
            self._pop_tape()

    def _op_count(self, graph):
        graph._sync_native()
        return len(graph._ops)

    def _push_tape(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active "
                             "tape.")
        graph = ops.get_default_graph()
        if self._graph is None:
            self._graph = graph
        if graph is self._graph:
            self._intervals.append([self._op_count(graph), None])
        self._recording = True

    def _pop_tape(self):
        if not self._recording:
            raise ValueError("Tape is not recording.")
        if self._intervals and self._intervals[-1][1] is None:
            self._intervals[-1][1] = self._op_count(self._graph)
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops made inside are not recorded (they are constants to this tape)."""
        if not self._recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        self._pop_tape()
        try:
            yield
        finally:
            self._push_tape()

    def reset(self):
        """Forgets everything recorded and watched so far; recording goes on."""
        self._pop_tape()
        self._reset_state()
        self._used = False
        self._push_tape()

    def watch(self, tensor):
        """Puts ``tensor`` (a tensor, a variable, or a structure of them) on the tape."""
        for t in nest.flatten(tensor):
            if not (_is_variable(t) or isinstance(t, ops.Tensor)):
                raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not tf.Tensor or "
                                 "tf.Variable or ExtensionType.")
            if self._graph is None:
                self._graph = t.graph
            self._watched.append((self._op_count(t.graph), t))

    # -- what the tape holds ---------------------------------------------------
    def _views(self, variables):
        """For each variable (by id): ``(reads, at)``, the tensors of the tape's graph through which ops
        read it and those to differentiate at. In the outermost graph these are the variable's reference
        and ``read`` snapshot (differentiated at the reference, which the snapshot reads); in a function
        body (a tape inside ``tf.function``) the body's captures of them, each differentiated."""
        chain = []
        g = self._graph
        while g is not None:
            chain.append(g)
            g = getattr(g, "outer_graph", None)
        chain.reverse()
        levels = [{(id(outer.graph), outer._tid): inner for outer, inner in g.captures} for g in chain[1:]]
        out = {}
        for v in variables:
            reads = [t for t in _variable_tensors(v) if t.graph is chain[0]]
            if len(chain) == 1:
                out[id(v)] = (reads, reads[:1])
                continue
            for captured in levels:
                reads = [captured[k] for k in ((id(t.graph), t._tid) for t in reads) if k in captured]
            out[id(v)] = (reads, reads)
        return out

    def _trace(self):
        """``(on_tape tensor ids, recorded op ids, watched variables in order, their views)``."""
        graph = self._graph
        if graph is None:
            return set(), set(), [], {}
        end = self._op_count(graph)
        events = []  # (position, variable)
        on_tape = set()
        recorded = set()
        for pos, x in self._watched:
            if _is_variable(x):
                events.append((pos, x))
            elif x.graph is graph:
                on_tape.add(x._tid)
        candidates = [v for _, v in events]
        if self._watch_accessed_variables:
            candidates += [v for v in graph.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES) if _is_variable(v)]
        views = self._views(candidates)
        variable_of = {}
        if self._watch_accessed_variables:
            for v in graph.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES):
                if _is_variable(v):
                    for t in views[id(v)][0]:
                        variable_of[t._tid] = v
        explicit = {id(v) for _, v in events}
        for start, stop in self._intervals:
            for op in graph._ops[start:(stop if stop is not None else end)]:
                for t in op.inputs:
                    v = variable_of.get(t._tid)
                    if v is not None and id(v) not in explicit:
                        explicit.add(id(v))
                        events.append((op._id, v))
        watched_vars = [v for _, v in sorted(events, key=lambda e: e[0])]
        for v in watched_vars:
            for t in views[id(v)][0]:
                on_tape.add(t._tid)
            snapshot = getattr(v, "_snapshot", None)
            if snapshot is not None and snapshot.graph is graph:
                recorded.add(snapshot.op._id)  # the variable's own read passes gradients to its reference
        for start, stop in self._intervals:
            for op in graph._ops[start:(stop if stop is not None else end)]:
                if any(t._tid in on_tape for t in op.inputs):
                    recorded.add(op._id)
                    on_tape.update(t._tid for t in op.outputs)
        return on_tape, recorded, watched_vars, views

    def watched_variables(self):
        """The variables this tape watches, in the order it first saw them."""
        return tuple(self._trace()[2])

    # -- gradients -------------------------------------------------------------
    def _check_usable(self):
        if self._used or not self._intervals:  # TensorFlow's error for a tape never entered too
            raise RuntimeError(_USED)
        if self._recording and not self._persistent:
            self._pop_tape()

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        """The gradients of ``target`` (summed over its tensors) with respect to each of ``sources``
        through the ops this tape recorded, in the structure of ``sources``."""
        self._check_usable()
        if target is None:
            raise TypeError("Argument `target` should be a list or nested structure of Tensors, Variables or "
                            "CompositeTensors to be differentiated, but received None.")
        flat_targets = nest.flatten(target)
        if output_gradients is not None:
            output_gradients = nest.flatten(output_gradients)
            if len(output_gradients) != len(flat_targets):
                raise ValueError(f"output_gradients has {len(output_gradients)} entries for {len(flat_targets)} "
                                 "targets")
        result = self._gradient(flat_targets, nest.flatten(sources), output_gradients,
                                UnconnectedGradients(unconnected_gradients))
        if not self._persistent:
            self._used = True
        return nest.pack_sequence_as(sources, result)

    @contextlib.contextmanager
    def _ensure_recording(self):
        """Records the ops made inside even after the ``with`` (jacobian's slices of the target)."""
        if self._recording:
            yield
            return
        with self._graph.as_default():
            self._push_tape()
            try:
                yield
            finally:
                self._pop_tape()

    def _gradient(self, flat_targets, flat_sources, output_gradients, unconnected):
        on_tape, recorded, watched_vars, views = self._trace()
        watched_ids = {id(v) for v in watched_vars}
        targets = [t._as_tensor() if _is_variable(t) else ops.convert_to_tensor(t) for t in flat_targets]
        keep = [i for i, t in enumerate(targets) if t.graph is self._graph and t._tid in on_tape]
        xs, slots = [], []  # slots: (source index, positions of its tensors in xs)
        for i, s in enumerate(flat_sources):
            if _is_variable(s):
                at = views[id(s)][1] if id(s) in watched_ids else []
            elif not isinstance(s, ops.Tensor):
                raise ValueError(f"Argument `sources` must hold tf.Tensor or tf.Variable objects, got {s!r}")
            else:
                at = [s] if s.graph is self._graph and s._tid in on_tape else []
            if at:
                slots.append((i, list(range(len(xs), len(xs) + len(at)))))
                xs.extend(at)
        out = [None] * len(flat_sources)
        if keep and xs:
            graph = self._graph
            stop = {}
            for op_id in recorded:
                for t in graph._ops[op_id].inputs:
                    if t.op._id not in recorded:
                        stop[t._tid] = t
            grad_ys = None
            if output_gradients is not None:
                grad_ys = [output_gradients[i] for i in keep]
            with graph.as_default():
                grads = gradients([targets[i] for i in keep], xs, grad_ys=grad_ys, stop_gradients=list(stop.values()))
                for i, positions in slots:
                    parts = [grads[p] for p in positions if grads[p] is not None]
                    if len(parts) == 1:
                        out[i] = parts[0]
                    elif parts:
                        out[i] = math_ops.add_n([ops.convert_to_tensor(p) for p in parts])
        if unconnected is UnconnectedGradients.ZERO:
            for i, s in enumerate(flat_sources):
                if out[i] is None:
                    with (self._graph or ops.get_default_graph()).as_default():
                        out[i] = array_ops.zeros_like(s._as_tensor() if _is_variable(s) else s)
        return out

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE, parallel_iterations=None,
                 experimental_use_pfor=True):
        """For each source, the derivative of every element of ``target`` with respect to every element of
        the source: a tensor of shape ``target.shape + source.shape``, in the structure of ``sources``."""
        del parallel_iterations, experimental_use_pfor
        self._check_usable()
        unconnected = UnconnectedGradients(unconnected_gradients)
        target = target._as_tensor() if _is_variable(target) else ops.convert_to_tensor(target)
        n = target.shape.num_elements()
        if not n:
            raise ValueError(f"jacobian needs the number of elements of the target ({target.name}, shape "
                             f"{target.shape}) to be known when the graph is built, and not zero")
        flat_sources = nest.flatten(sources)
        with self._graph.as_default():
            with self._ensure_recording():
                flat_target = array_ops.reshape(target, [-1])
                elements = [flat_target[j] for j in range(n)]
            rows = [self._gradient([e], flat_sources, None, unconnected) for e in elements]
            out = []
            for k, s in enumerate(flat_sources):
                column = [r[k] for r in rows]
                st = s._as_tensor() if _is_variable(s) else s
                if all(g is None for g in column):
                    out.append(None)
                    continue
                dense = [array_ops.zeros_like(st) if g is None else ops.convert_to_tensor(g) for g in column]
                stacked = array_ops.stack(dense)
                shape = array_ops.concat([array_ops.shape(target), array_ops.shape(st)], 0)
                result = array_ops.reshape(stacked, shape)
                result.set_shape(target.shape.concatenate(st.shape))
                out.append(result)
        if not self._persistent:
            self._used = True
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """For a ``target`` of shape ``[b, y...]`` and a ``source`` of shape ``[b, x...]`` whose examples do
        not interact, ``result[i, y..., x...]`` = d target[i, y...] / d source[i, x...]."""
        del parallel_iterations, experimental_use_pfor
        self._check_usable()
        unconnected = UnconnectedGradients(unconnected_gradients)
        target = ops.convert_to_tensor(target)
        src = source._as_tensor() if _is_variable(source) else source
        if target.shape.rank is not None and target.shape.rank < 1:
            raise ValueError(f"Need first dimension of `target` shape ({target.shape}) and `source` shape "
                             f"({src.shape}) to match.")
        if not target.shape[:1].is_compatible_with(src.shape[:1]):
            raise ValueError(f"Need first dimension of `target` shape ({target.shape}) and `source` shape "
                             f"({src.shape}) to match.")
        m = target.shape[1:].num_elements()
        if not m:
            raise ValueError(f"batch_jacobian needs the number of elements per example of the target "
                             f"({target.name}, shape {target.shape}) to be known when the graph is built, and not "
                             "zero")
        with self._graph.as_default():
            with self._ensure_recording():
                per_example = array_ops.reshape(target, array_ops.stack([array_ops.shape(target)[0], m]))
                elements = [per_example[:, j] for j in range(m)]
            columns = [self._gradient([e], [source], None, unconnected)[0] for e in elements]
            if not self._persistent:
                self._used = True
            if all(g is None for g in columns):
                return None
            dense = [array_ops.zeros_like(src) if g is None else ops.convert_to_tensor(g) for g in columns]
            stacked = array_ops.stack(dense, axis=1)
            shape = array_ops.concat([array_ops.shape(target), array_ops.shape(src)[1:]], 0)
            result = array_ops.reshape(stacked, shape)
            result.set_shape(target.shape.concatenate(src.shape[1:]))
            return result
