"""TensorFlow 1.x's dataflow control flow, rewritten on import as ferroflow's functional ``If`` and ``While``.

TensorFlow 1.x, and 2.x under ``tf.compat.v1.disable_control_flow_v2()`` (what
TF1-era MetaGraphs, frozen graphs and SavedModels hold), writes ``tf.cond`` and
``tf.while_loop`` with dataflow primitives: ``Switch`` sends its value down one
of two outputs and marks the other dead, ``Merge`` forwards whichever input is
alive, ``Enter`` and ``Exit`` move values into and out of a loop's *frame*
(``frame_name``), ``NextIteration`` hands a value to the next iteration and
``LoopCond`` carries the loop's predicate. ``tf.TensorArray`` is a resource
(``TensorArrayV3`` and its read/write ops) ordered by a float "flow" tensor.
ferroflow runs control flow as functional ops whose branches and bodies are
functions of the graph's library (``ops/cond.py``, ``ops/while_loop.py``), and
TensorArrays as list values; :func:`functionalize` rewrites a ``GraphDef``
from one form into the other before its nodes are imported (TensorFlow's own
``functionalize_control_flow`` does the same for XLA). It works on protocol
buffers only, so it needs no op wrappers.

The rewrite, in order:

1. **TensorArrays.** ``TensorArrayV3`` becomes ``ListReserve`` and each op on
   an array the list op that takes the array's flow as the list
   (``TensorArrayWriteV3`` -> ``ListSetItem``, ``ReadV3`` -> ``ListGetItem``,
   ``GatherV3``, ``ScatterV3``, ``ConcatV3``, ``SplitV3``, ``SizeV3``;
   ``CloseV3`` -> ``NoOp``). TF1 threads the flow through every op of an
   array, so the flow carries exactly what the resource held; the handle goes
   unused. The element dtype, shape and sizing come from the array's
   ``TensorArrayV3`` (its handle is traced back through ``Enter``,
   ``Switch``, ``Identity``, ...).
2. **Loops**, innermost frame first. Each node's frame follows from the
   dataflow (an ``Enter`` opens its ``frame_name``, an ``Exit`` returns to
   the enclosing frame). A frame's non-constant ``Enter`` -> ``Merge`` ->
   ``Switch`` -> ``Exit`` chains are its loop variables; the nodes that
   compute ``LoopCond``'s input from the ``Merge`` values become the cond
   function, those that compute the ``NextIteration`` inputs from the
   ``Switch`` outputs the body; constant Enter ops (``is_constant``:
   loop invariants) become extra inputs that the body passes through, as
   ``tf.while_loop`` passes captured tensors. One ``While`` op (named
   ``<loop scope>/While``) replaces the frame, and each ``Exit`` becomes an
   ``Identity`` of the ``While`` output under the ``Exit``'s name, so
   ``"while/Exit:0"`` still names the loop's result for fetches,
   collections and signatures.
3. **Conds**, innermost first, in the graph and in every function made in
   step 2. Each tensor gets the set of (predicate, branch) pairs under which
   it is alive, as TensorFlow's executor would see it: a ``Switch`` output
   adds its pair, a ``Merge`` drops the pair its inputs differ in. The
   ``Merge`` nodes of one ``tf.cond`` (same predicate, name scope and
   enclosing branches) become one ``If`` (``<cond scope>/If``), whose
   branches are the nodes alive only in that branch, walked back from the
   ``Merge`` inputs; Switch ops on the predicate and tensors from
   outside become the ``If``'s inputs. Each ``Merge`` becomes an
   ``Identity`` of the ``If`` output under its name; its ``value_index``
   output becomes a cast of the predicate. A node that two groups read (a
   forward branch value that the gradient's cond reuses) is copied into both
   functions. A control input on a ``Switch`` waits for what the ``Switch``
   reads (a ``Switch`` itself is never dead).
4. Nodes that went into functions and that nothing reads any more are
   dropped, with unread nodes left in branches no ``Merge`` ends.

A reference variable's read (``v/read``) that enters a loop or a branch is
replaced there by the variable itself, so a body that assigns to it and
reads it again sees the new value, as with TF1's buffer-sharing ``Identity``.

**Gradients.** The gradient of a TF1 loop is another dataflow loop that pops,
from stacks (``StackV2``/``StackPushV2``/``StackPopV2``), the forward values
the forward loop pushed, and it reads and writes TF1's gradient
TensorArrays (``TensorArrayGradV3``), resources shared by name; neither maps
onto value semantics. Those parts are dropped: every stack op, every node of
a gradient frame (a frame named ``<gradient scope>/<forward frame>``, or one
holding a stack pop), everything that reads them (down to the optimizer's
update ops and the train op), and the gradient nodes that only fed them.
Gradients of conds without loops are ordinary conds and are converted like
any other. The optimizer's nodes are then put back on gradients computed
again: for each dropped gradient tensor they read, its name tells what TF1
differentiated (``<scope>/<op>_grad/...`` is the gradient for an input of
``<op>``, the one read from a variable; a gather's gradient is sparse, and
the tensor is then its values, indices or dense shape), ``<scope>/grad_ys_<k>``
gives the weights of the ``ys``, and the rebuilder that the ops layer
registers (:func:`register_gradient_rebuilder`; framework code cannot import
``tf.gradients``) builds ferroflow's gradient of the same loss with respect
to the same variable after the rest of the graph is imported, through the
new ``While`` ops. A rebuilt gradient must have the dtype and the shape
TensorFlow recorded for the tensor it replaces. Where a gradient's origin
cannot be told, or no rebuilder is registered, the dropped nodes that
nothing else reads (the train op) are imported as NoOp ops that fail when
run with an ``UnimplementedError`` (from ferroflow's own ``Unimplemented``
op, which TensorFlow lacks) whose message starts ``'<node>' was not
imported`` and says why; the rest of the graph works. Anything else this module cannot convert raises
``UnimplementedError`` naming the node.

Known differences from TensorFlow: a value a gradient cond reuses from its
forward cond's branch is computed again in the gradient's ``If`` (a random
op there would be drawn again); a TensorArray flow's ``Exit``/``Merge``
name goes (ferroflow's ``Identity`` does not pass a list on), so such a
name no longer resolves; a ``Merge`` whose ``value_index`` is read becomes
a cast of the predicate.
"""

from __future__ import annotations

import collections
import copy
import re

from ferroflow.core.framework import (
    attr_value_pb2,
    function_pb2,
    graph_pb2,
    node_def_pb2,
    tensor_shape_pb2,
    types_pb2,
)
from ferroflow.framework import dtypes, errors

__all__ = ["has_v1_control_flow", "functionalize", "register_gradient_rebuilder", "Conversion"]

#: MetaGraph collections of TF1's control-flow contexts (WhileContextDef, CondContextDef): they describe
#: the dataflow nodes the conversion replaces, so a converted import leaves them out.
CONTEXT_COLLECTIONS = ("while_context", "cond_context")

_SWITCH = frozenset({"Switch", "RefSwitch"})
_MERGE = frozenset({"Merge", "RefMerge"})
_ENTER = frozenset({"Enter", "RefEnter"})
_EXIT = frozenset({"Exit", "RefExit"})
_NEXT = frozenset({"NextIteration", "RefNextIteration"})
_LOOP_COND = frozenset({"LoopCond"})
_V1_CONTROL_FLOW = _SWITCH | _MERGE | _ENTER | _EXIT | _NEXT | _LOOP_COND
_STACK_OPS = frozenset({
    "StackV2", "StackPushV2", "StackPopV2", "StackCloseV2", "Stack", "StackPush", "StackPop", "StackClose",
})
_TA_GRAD_OPS = frozenset({"TensorArrayGradV3", "TensorArrayGradWithShape", "TensorArrayGradV2", "TensorArrayGrad"})
_TA_OPS = frozenset({
    "TensorArrayV3", "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayGatherV3", "TensorArrayScatterV3",
    "TensorArrayConcatV3", "TensorArraySplitV3", "TensorArraySizeV3", "TensorArrayCloseV3",
})
_OLD_TA_OPS = frozenset({
    "TensorArray", "TensorArrayV2", "TensorArrayWrite", "TensorArrayWriteV2", "TensorArrayRead", "TensorArrayReadV2",
    "TensorArrayGather", "TensorArrayGatherV2", "TensorArrayScatter", "TensorArrayScatterV2", "TensorArrayConcat",
    "TensorArrayConcatV2", "TensorArraySplit", "TensorArraySplitV2", "TensorArraySize", "TensorArraySizeV2",
    "TensorArrayClose", "TensorArrayCloseV2", "TensorArrayPack", "TensorArrayUnpack",
})
#: Ops that only forward their (first) input: a TensorArray's handle or flow passes through them.
_FORWARDING = _SWITCH | _MERGE | _ENTER | _EXIT | _NEXT | frozenset({"Identity", "RefIdentity", "Snapshot"})
#: ferroflow's list ops whose output 0 is a list.
_LIST_MAKERS = frozenset({"ListReserve", "ListSetItem", "ListScatter", "ListSplit", "ListFromTensor", "ListZerosLike",
                          "ListAddN", "ListOneHot"})

_DT_BOOL = types_pb2.DT_BOOL
_DT_INT32 = types_pb2.DT_INT32
_DT_FLOAT = types_pb2.DT_FLOAT
_DT_VARIANT = types_pb2.DT_VARIANT

_GRADIENT_REBUILDER = None


def register_gradient_rebuilder(fn):
    """Registers ``fn(graph, requests)`` to recompute dropped TF1 loop gradients after import.

    ``requests`` is a list of ``(ys, grad_ys or None, x, component)`` (Tensors
    of ``graph``; ``component`` as :class:`GradientRequest` has it); ``fn``
    returns, for each, a Tensor of ``graph``: the gradient of ``ys`` with
    respect to ``x`` (dense when ``component`` is None, else that part of a
    sparse gradient), or None where it cannot. The ops layer registers
    ferroflow's ``tf.gradients`` here; framework code cannot import it.
    """
    global _GRADIENT_REBUILDER
    _GRADIENT_REBUILDER = fn


def gradient_rebuilder():
    return _GRADIENT_REBUILDER


def _unimplemented(message):
    return errors.UnimplementedError(None, None, message)


_CONVERTED_OPS = _V1_CONTROL_FLOW | _TA_OPS | _STACK_OPS | _TA_GRAD_OPS | _OLD_TA_OPS


def has_v1_control_flow(graph_def):
    """Whether ``graph_def``'s nodes (or its library's functions) use TF1's dataflow control flow,
    TensorArrays or stacks."""
    return any(node.op in _CONVERTED_OPS for node in graph_def.node) or any(
        node.op in _CONVERTED_OPS for f in graph_def.library.function for node in f.node_def)


# --------------------------------------------------------------------------------------------------------------
# A mutable graph of nodes whose inputs are (node, output) pairs.
# --------------------------------------------------------------------------------------------------------------


class _Node:
    __slots__ = ("name", "op", "inputs", "controls", "attr", "device")

    def __init__(self, name, op, inputs=(), controls=(), attr=None, device=""):
        self.name = name
        self.op = op
        self.inputs = list(inputs)
        self.controls = list(controls)
        self.attr = attr if attr is not None else {}
        self.device = device

    @classmethod
    def from_node_def(cls, nd):
        inputs, controls = [], []
        for text in nd.input:
            if text.startswith("^"):
                controls.append(text[1:])
            else:
                inputs.append(_parse_ref(text))
        attr = {k: copy.deepcopy(v) for k, v in nd.attr.items()}
        return cls(nd.name, nd.op, inputs, controls, attr, nd.device)

    def copy(self):
        return _Node(self.name, self.op, self.inputs, self.controls, {k: copy.deepcopy(v) for k, v in self.attr.items()},
                     self.device)

    def to_node_def(self):
        nd = node_def_pb2.NodeDef(name=self.name, op=self.op, device=self.device)
        nd.input.extend(_format_ref(r) for r in self.inputs)
        nd.input.extend("^" + c for c in self.controls)
        for k, v in self.attr.items():
            nd.attr[k].CopyFrom(v)
        return nd

    def type_attr(self, key="T"):
        value = self.attr.get(key)
        return value.type if value is not None and value.WhichOneof("value") == "type" else None


def _parse_ref(text):
    op, sep, idx = text.rpartition(":")
    if sep and idx.isdigit():
        return op, int(idx)
    return text, 0


def _format_ref(ref):
    return ref[0] if ref[1] == 0 else f"{ref[0]}:{ref[1]}"


class _Arg:
    __slots__ = ("name", "dtype", "is_list", "is_ref", "shape")

    def __init__(self, name, dtype, is_list, is_ref, shape):
        self.name, self.dtype, self.is_list, self.is_ref, self.shape = name, dtype, is_list, is_ref, shape


class _Graph:
    """Nodes by name (in insertion order); a function's graph also has arguments (referenced as
    ``(arg name, 0)``) and outputs."""

    def __init__(self, is_function=False):
        self.nodes = {}
        self.is_function = is_function
        self.args = []
        self.arg_names = set()
        self.outputs = []
        #: Nodes copied into functions made from this graph: they go once nothing reads them.
        self.absorbed = set()

    def add(self, node):
        self.nodes[node.name] = node
        return node

    def consumers(self):
        """``{node name: [(consumer name, input position or None for a control input)]}``."""
        out = collections.defaultdict(list)
        for n in self.nodes.values():
            for i, (src, _) in enumerate(n.inputs):
                out[src].append((n.name, i))
            for c in n.controls:
                out[c].append((n.name, None))
        return out

    def topological_order(self):
        """Node names, inputs first. Raises UnimplementedError on a cycle (a loop left unconverted)."""
        state, order = {}, []
        for root in self.nodes:
            if root in state:
                continue
            stack = [(root, False)]
            while stack:
                name, done = stack.pop()
                if done:
                    state[name] = 2
                    order.append(name)
                    continue
                if state.get(name):
                    continue
                state[name] = 1
                stack.append((name, True))
                node = self.nodes[name]
                for dep in [s for s, _ in node.inputs] + node.controls:
                    if dep not in self.nodes:
                        continue
                    if state.get(dep) == 1:
                        raise _unimplemented(
                            f"TF1 control flow import: node {dep} is on a cycle that is not a while loop this "
                            "importer understands")
                    if not state.get(dep):
                        stack.append((dep, False))
        return order


# --------------------------------------------------------------------------------------------------------------
# The conversion.
# --------------------------------------------------------------------------------------------------------------


class GradientRequest:
    """A dropped TF1 gradient tensor to recompute: d(sum of ``ys`` weighted by ``grad_ys``)/d``x``.

    Names are of the GraphDef being imported (before any import scope):
    ``ys``, ``grad_ys`` (None: ones) and ``x`` are tensor names; ``tensor`` is
    the dropped tensor the gradient stands for, ``dtype`` its DataType and
    ``shape`` the static shape TensorFlow recorded for it (a list with None
    for unknown dimensions; None when not recorded). ``component``: None for
    a dense gradient, else which part of a sparse one (an ``IndexedSlices``
    from a gather of ``x``) the tensor is: ``"values"``, ``"indices"`` or
    ``"dense_shape"``.
    """

    __slots__ = ("tensor", "ys", "grad_ys", "x", "dtype", "shape", "component")

    def __init__(self, tensor, ys, grad_ys, x, dtype=None, shape=None, component=None):
        self.tensor, self.ys, self.grad_ys, self.x = tensor, ys, grad_ys, x
        self.dtype, self.shape, self.component = dtype, shape, component

    def __repr__(self):
        return (f"GradientRequest(tensor={self.tensor!r}, ys={self.ys!r}, grad_ys={self.grad_ys!r}, x={self.x!r}, "
                f"component={self.component!r})")

    def matches(self, tensor):
        """Whether ``tensor`` (a rebuilt gradient) can stand for the dropped one: same dtype, and a shape
        TensorFlow's recorded shape allows (for a dense gradient, the same fully known shape: the
        values of a sparse gradient, ``[?, ...]``, are not a variable's dense gradient)."""
        if self.dtype is not None and tensor.dtype.base_dtype.as_datatype_enum != self.dtype:
            return False
        if self.shape is None:
            return True
        got = tensor.shape.as_list() if tensor.shape.rank is not None else None
        if self.component is not None:
            return got is None or len(got) == len(self.shape) and all(
                a is None or b is None or a == b for a, b in zip(got, self.shape))
        return got is not None and None not in self.shape and got == self.shape


class Conversion:
    """What :func:`functionalize` did: the new GraphDef and what the importer must know.

    - ``graph_def``: the nodes to import first (and the function library);
    - ``after_gradients``: nodes that read recomputed gradients (imported once
      the gradients exist); ``gradient_requests``: the gradients to recompute,
      for the rebuilder; ``fallback_nodes``: what to import instead of
      ``after_gradients`` when the rebuilder cannot (NoOps failing when run);
    - ``removed``: names of nodes that no longer exist (inside functions, or
      dropped), mapped to why, so a collection naming one can say so;
    - ``dropped_gradient_frames``: the TF1 gradient loops that were dropped;
    - ``loops``, ``conds``: how many ``While`` and ``If`` ops were made.
    """

    def __init__(self):
        self.graph_def = None
        self.after_gradients = []
        self.gradient_requests = []
        self.fallback_nodes = []
        self.removed = {}
        self.dropped_gradient_frames = []
        self.loops = 0
        self.conds = 0
        self.tensor_arrays = 0


class _Context:
    def __init__(self, names, function_names):
        #: Every node name in use anywhere (graph and functions), so new names stay unique.
        self.names = set(names)
        self.function_names = set(function_names)
        self.library = []
        #: (node name, output) of every tensor that is a list (a TensorArray's flow).
        self.lists = set()
        #: (node name, output) of every variable reference.
        self.refs = set()
        self.report = Conversion()

    def unique_name(self, base):
        name, k = base, 0
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def unique_function_name(self, base):
        base = re.sub(r"[^A-Za-z0-9_]", "_", base).strip("_") or "fn"
        name, k = base, 0
        while name in self.function_names:
            k += 1
            name = f"{base}_{k}"
        self.function_names.add(name)
        return name


def functionalize(graph_def, existing_function_names=()):
    """Rewrites ``graph_def``'s TF1 control flow as ``If``/``While`` ops over new library functions.

    Returns a :class:`Conversion`; ``graph_def`` itself is not changed.
    ``existing_function_names``: function names already in the graph being
    imported into (the new functions get other names). Raises
    UnimplementedError naming the node for what cannot be converted.
    """
    ctx = _Context((n.name for n in graph_def.node),
                   list(existing_function_names) + [f.signature.name for f in graph_def.library.function])
    for f in graph_def.library.function:
        for nd in f.node_def:
            if nd.op in _CONVERTED_OPS:
                raise _unimplemented(
                    f"TF1 control flow import: function {f.signature.name} of the GraphDef's library has node "
                    f"{nd.name} ({nd.op}); TF1 control flow is converted in the graph itself, not inside functions")
    g = _Graph()
    for nd in graph_def.node:
        if nd.op in _OLD_TA_OPS:
            raise _unimplemented(
                f"TF1 control flow import: node {nd.name} is a {nd.op}, a TensorArray op older than TensorArrayV3, "
                "which ferroflow does not import")
        g.add(_Node.from_node_def(nd))
    original = set(g.nodes)
    frames, parents = _frames(g)
    kept_aside = _drop_gradient_machinery(ctx, g, frames, parents)
    _rewrite_tensor_arrays(ctx, g)
    _mark_lists(ctx, g)
    _convert_loops(ctx, g, frames, parents)
    _convert_conds(ctx, g)
    _collect_garbage(g)
    _bypass_list_identities(ctx, g)
    _check_converted(g, "the graph")
    report = ctx.report
    for name in original:
        if name not in g.nodes and name not in report.removed:
            report.removed[name] = "it is inside TF1 control flow that became a functional If or While"
    out = graph_pb2.GraphDef()
    out.CopyFrom(graph_def)
    del out.node[:]
    out.node.extend(n.to_node_def() for n in g.nodes.values())
    out.library.function.extend(ctx.library)
    report.graph_def = out
    report.after_gradients = [n.to_node_def() for n in kept_aside]
    return report


# --------------------------------------------------------------------------------------------------------------
# Frames.
# --------------------------------------------------------------------------------------------------------------


def _frames(g):
    """``({node name: frame name}, {frame name: parent frame name})``; the top level is frame ``""``."""
    frame, parents, depth = {}, {"": None}, {"": 0}
    consumers = g.consumers()
    pending = {}
    ready = collections.deque()
    for n in g.nodes.values():
        deps = {s for s, _ in n.inputs if s in g.nodes} | {c for c in n.controls if c in g.nodes}
        pending[n.name] = len(deps)
        if not deps:
            ready.append(n.name)

    def place(n):
        ins = [s for s, _ in n.inputs if s in frame] + [c for c in n.controls if c in frame]
        if not ins:
            return ""
        if n.op in _EXIT:
            inner = frame[n.inputs[0][0]] if n.inputs and n.inputs[0][0] in frame else frame[ins[0]]
            return parents.get(inner) or ""
        outer = max((frame[s] for s in ins), key=lambda f: depth.get(f, 0))
        if n.op in _ENTER:
            name = n.attr["frame_name"].s.decode() if "frame_name" in n.attr else ""
            if name not in parents:
                parents[name] = outer
                depth[name] = depth.get(outer, 0) + 1
            return name
        return outer

    placed = set()
    while ready:
        name = ready.popleft()
        if name in placed:
            continue
        placed.add(name)
        n = g.nodes[name]
        frame[name] = place(n)
        for consumer, _ in consumers.get(name, ()):
            if consumer in placed:
                continue
            c = g.nodes[consumer]
            if c.op in _MERGE:
                # A loop's Merge waits for its NextIteration, which comes after it.
                ready.append(consumer)
                continue
            pending[consumer] -= 1
            if pending[consumer] <= 0:
                ready.append(consumer)
    for name in g.nodes:
        if name not in frame:
            raise _unimplemented(
                f"TF1 control flow import: cannot tell which loop node {name} ({g.nodes[name].op}) belongs to "
                "(it is on a cycle that does not pass through a Merge)")
    return frame, parents


def _frame_depth(parents, f):
    d = 0
    while f:
        f = parents.get(f)
        d += 1
    return d


# --------------------------------------------------------------------------------------------------------------
# Gradient machinery.
# --------------------------------------------------------------------------------------------------------------


def _gradient_frames(g, frames, parents):
    """Frames of TF1 loop gradients: named ``<scope>/<a forward frame>``, or holding a stack pop."""
    names = {f for f in parents if f}
    grad = set()
    for f in names:
        for other in names:
            if other != f and f.endswith("/" + other) and _GRAD_SCOPE.search(f[: -len(other) - 1]):
                grad.add(f)
    for n in g.nodes.values():
        if n.op in ("StackPopV2", "StackPop"):
            grad.add(frames[n.name])
    grad.discard("")
    return grad


def _drop_gradient_machinery(ctx, g, frames, parents):
    """Removes TF1's loop-gradient nodes and what reads them; returns the nodes to import after
    the gradients are rebuilt (empty when they are not)."""
    grad_frames = _gradient_frames(g, frames, parents)
    seeds = {n.name for n in g.nodes.values() if n.op in _STACK_OPS or n.op in _TA_GRAD_OPS}
    seeds |= {name for name, f in frames.items() if f in grad_frames}
    if not seeds:
        return []
    # Frames below a gradient frame are gradients too.
    for name, f in frames.items():
        p = f
        while p:
            if p in grad_frames:
                seeds.add(name)
                break
            p = parents.get(p)
    consumers = g.consumers()
    dropped = set()
    stack = list(seeds)
    while stack:
        name = stack.pop()
        if name in dropped:
            continue
        dropped.add(name)
        stack.extend(c for c, _ in consumers.get(name, ()))
    # A forward loop variable the gradient added (the iteration counter TF1 calls f_count) loses its
    # NextIteration; its Enter then leads nowhere and goes too.
    for name in list(g.nodes):
        n = g.nodes[name]
        if name not in dropped and n.op in _ENTER and consumers.get(name) and all(
                c in dropped for c, _ in consumers[name]):
            dropped.add(name)
    ctx.report.dropped_gradient_frames = sorted(grad_frames)
    scope_roots = _gradient_scopes(grad_frames, parents)
    in_scope = {name for name in dropped if any(name.startswith(s + "/") for s in scope_roots)}
    # The nodes the gradient's own nodes feed that are not gradient nodes themselves: the optimizer.
    after = [g.nodes[name] for name in g.nodes if name in dropped and name not in in_scope]
    reason = (
        "it computes or applies the gradient of a TF1 while loop ({}), which ferroflow does not import "
        "(stacks and TensorArray gradients); build the gradient again on the imported graph, e.g. "
        "optimizer.minimize(loss)".format(", ".join(sorted(grad_frames)) or "stack ops"))
    roots = [g.nodes[name] for name in g.nodes if name in dropped and name not in in_scope
             and not any(c in dropped for c, _ in consumers.get(name, ()))]
    stand_ins = _stand_ins(ctx, roots, reason)
    requests = None
    if _GRADIENT_REBUILDER is not None and after and not any(
            n.op in _V1_CONTROL_FLOW or n.op in _TA_OPS for n in after):
        requests = _gradient_requests(g, in_scope, after)
    for name in dropped:
        del g.nodes[name]
        ctx.report.removed[name] = reason
    _drop_feeders(ctx, g, consumers, scope_roots, reason)
    if requests:
        ctx.report.gradient_requests = requests
        ctx.report.fallback_nodes = [n.to_node_def() for n in stand_ins]
        for n in after:
            ctx.report.removed.pop(n.name, None)
        return after
    # No rebuild: the optimizer's nodes that nothing reads (the train op) become NoOps failing when run.
    for n in stand_ins:
        g.add(n)
        ctx.report.removed.pop(n.name, None)
    return []


def _drop_feeders(ctx, g, consumers, scope_roots, reason):
    """Drops, while there are any, gradient nodes (under a gradient scope) that only fed dropped ones: they
    had readers, and none is left."""
    def in_scope(name):
        return any(name.startswith(s + "/") for s in scope_roots)

    while True:
        read = set()
        for n in g.nodes.values():
            read.update(src for src, _ in n.inputs)
            read.update(n.controls)
        gone = [name for name in g.nodes if name not in read and consumers.get(name) and in_scope(name)]
        if not gone:
            return
        for name in gone:
            del g.nodes[name]
            ctx.report.removed[name] = reason


def _stand_ins(ctx, roots, reason):
    """For each of ``roots``: a NoOp under its name that waits for an ``Unimplemented`` op (ferroflow's own,
    which fails every run with UnimplementedError) whose message names the node and gives ``reason``."""
    out = []
    for root in roots:
        fail_name = ctx.unique_name(root.name + "/ferroflow_not_imported")
        message = f"'{root.name}' was not imported: {reason}"
        out.append(_Node(fail_name, "Unimplemented", attr={"message": attr_value_pb2.AttrValue(s=message.encode())}))
        out.append(_Node(root.name, "NoOp", controls=[fail_name]))
    return out


def _gradient_scopes(grad_frames, parents):
    """The name scopes of the gradient computations: ``gradients`` for the frame ``gradients/while/while_context``."""
    scopes = set()
    forward = [f for f in parents if f and f not in grad_frames]
    for f in grad_frames:
        for fw in forward:
            if f.endswith("/" + fw) and _GRAD_SCOPE.search(f[: -len(fw) - 1]):
                scopes.add(f[: -len(fw) - 1])
    return scopes


_GRAD_SCOPE = re.compile(r"(^|/)gradients(_\d+)?$")
_GRAD_NAME = re.compile(r"^(?P<scope>.*?gradients(?:_\d+)?)/(?P<op>.+?)_grad/")


def _gradient_requests(g, in_scope, after):
    """For each dropped gradient tensor an optimizer node reads, what it is the gradient of: a list of
    :class:`GradientRequest`, or None when some tensor's ``x`` or the ``ys`` cannot be told (then
    nothing is rebuilt)."""
    wanted = []
    for n in after:
        for ref in n.inputs:
            if ref[0] in in_scope and ref not in wanted:
                wanted.append(ref)
    if not wanted:
        return None
    requests = []
    for ref in wanted:
        source = _gradient_source(g, ref)
        if source is None:
            return None
        x, component = source
        scope = _GRAD_NAME.match(ref[0])
        ys = _gradient_ys(g, scope.group("scope") if scope else ref[0].split("/", 1)[0])
        if ys is None:
            return None
        shape = _tensor_shape(g, ref)
        shape = None if shape.unknown_rank else [d.size if d.size >= 0 else None for d in shape.dim]
        try:
            dtype = _tensor_dtype(g, ref)
        except errors.UnimplementedError:
            dtype = None
        requests.append(GradientRequest(_format_ref(ref), ys[0], ys[1], _format_ref(x), dtype, shape, component))
    return requests


def _gradient_ys(g, scope):
    """``([y tensor names], [grad_y tensor names])`` of the ``tf.gradients`` call under ``scope``.

    TF1 names the gradient of each ``y`` ``<scope>/grad_ys_<k>`` and feeds it
    to the gradient function of ``y``'s op, named ``<scope>/<y op>_grad/...``.
    """
    ys, grad_ys = [], []
    k = 0
    while f"{scope}/grad_ys_{k}" in g.nodes:
        gy = f"{scope}/grad_ys_{k}"
        y = None
        for n in g.nodes.values():
            if (gy, 0) in n.inputs:
                m = _GRAD_NAME.match(n.name)
                if m and m.group("scope") == scope and m.group("op") in g.nodes:
                    y = m.group("op")
                    break
        if y is None:
            return None
        ys.append(y + ":0")
        grad_ys.append(gy + ":0")
        k += 1
    if not ys:
        return None
    return ys, grad_ys


def _gradient_source(g, ref):
    """``(forward tensor, component)``: what TF1 computed ``ref`` as the gradient of, told from its name;
    None when that cannot be told.

    ``<scope>/<op>_grad/...`` is a gradient for an input of forward op
    ``<op>``; a sum (``<scope>/AddN``) adds gradients for one tensor read by
    several ops. Of the op's inputs, the one that is (read from) a variable
    is the one meant; ``tuple/control_dependency_<k>`` (``gate_gradients``)
    names the k-th input when several qualify. The gradient of a gather is
    sparse: ``ref`` is then its values (a float), its indices (a reshape of
    the gather's indices) or its dense shape.
    """
    name = ref[0]
    node = g.nodes.get(name)
    if node is not None and node.op in ("AddN", "Add", "AddV2") and _GRAD_NAME.match(name) is None:
        found = {_gradient_source(g, r) for r in node.inputs}
        return found.pop() if len(found) == 1 and None not in found else None
    m = _GRAD_NAME.match(name)
    if m is None:
        return None
    fwd = g.nodes.get(m.group("op"))
    if fwd is None:
        return None
    if fwd.op in _SPARSE_GRADIENT_OPS:
        if node is None or not fwd.inputs:
            return None
        try:
            dtype = _tensor_dtype(g, ref)
        except errors.UnimplementedError:
            return None
        if _is_floating(dtype):
            component = "values"
        elif node.op == "Reshape":
            component = "indices"
        else:
            component = "dense_shape"
        return _variable_of(g, fwd.inputs[0]), component
    candidates = [r for r in fwd.inputs if _reads_variable(g, r)]
    if len(candidates) == 1:
        return _variable_of(g, candidates[0]), None
    if len(fwd.inputs) == 1:
        return _variable_of(g, fwd.inputs[0]), None
    k = re.search(r"/tuple/control_dependency(?:_(\d+))?$", name)
    if k is not None:
        index = int(k.group(1) or 0)
        if index < len(fwd.inputs):
            return _variable_of(g, fwd.inputs[index]), None
    return None


_VARIABLE_OPS = frozenset({"VariableV2", "Variable", "VarHandleOp"})
_REF_VARIABLE_OPS = frozenset({"VariableV2", "Variable"})


def _variable_snapshot(g, ref):
    """The reference variable whose read (``v/read``, an Identity of ``v``) ``ref`` is, else None.

    TF1's Identity of a reference variable forwards the variable's buffer, so
    a branch or loop body that reads it after an assignment sees the new
    value. A converted If or While is given the variable itself (a reference
    argument, read when its function reads it), which keeps that behaviour.
    """
    n = g.nodes.get(ref[0])
    if n is None or n.op != "Identity" or not n.inputs or n.controls:
        return None
    src = g.nodes.get(n.inputs[0][0])
    if src is not None and src.op in _REF_VARIABLE_OPS:
        return n.inputs[0]
    return None


#: Ops whose gradient with respect to input 0 TF1 gives as an IndexedSlices.
_SPARSE_GRADIENT_OPS = frozenset({"Gather", "GatherV2", "ResourceGather"})


def _reads_variable(g, ref):
    seen = 0
    while ref[0] in g.nodes and seen < 64:
        n = g.nodes[ref[0]]
        if n.op in _VARIABLE_OPS:
            return True
        if n.op not in ("Identity", "Enter", "RefEnter", "ReadVariableOp", "Switch", "RefSwitch") or not n.inputs:
            return False
        ref = n.inputs[0]
        seen += 1
    return False


def _variable_of(g, ref):
    """The variable ``ref`` reads (through ``Enter``/``Identity``), else ``ref`` itself outside any loop."""
    seen = 0
    cur = ref
    while cur[0] in g.nodes and seen < 64:
        n = g.nodes[cur[0]]
        if n.op in _VARIABLE_OPS:
            return cur
        if n.op not in ("Identity", "Enter", "RefEnter", "ReadVariableOp") or not n.inputs:
            break
        cur = n.inputs[0]
        seen += 1
    node = g.nodes.get(ref[0])
    if node is not None and node.op in _ENTER:
        return node.inputs[0]
    return ref


# --------------------------------------------------------------------------------------------------------------
# TensorArrays.
# --------------------------------------------------------------------------------------------------------------


def _ta_creator(g, ref, user, creators):
    """The ``TensorArrayV3`` node (of names ``creators``) whose handle ``ref`` is, traced through
    forwarding ops."""
    seen = set()
    cur = ref
    while True:
        n = g.nodes.get(cur[0])
        if n is None or cur[0] in seen:
            break
        seen.add(cur[0])
        if cur[0] in creators:
            return n
        if n.op in _FORWARDING and n.inputs:
            cur = n.inputs[0]
            continue
        break
    raise _unimplemented(
        f"TF1 control flow import: node {user} ({g.nodes[user].op}) uses a TensorArray handle that does not come "
        f"from a TensorArrayV3 (it comes from {cur[0]}); ferroflow imports TensorArrays only as lists made by "
        "TensorArrayV3")


def _rewrite_tensor_arrays(ctx, g):
    """TensorArrayV3 and its ops -> ferroflow's list ops, the flow carrying the list."""
    creators = [n for n in g.nodes.values() if n.op == "TensorArrayV3"]
    if not creators:
        return
    consumers = g.consumers()
    specs = {}
    for n in creators:
        dtype = n.attr["dtype"].type
        shape = n.attr["element_shape"].shape if "element_shape" in n.attr else _unknown_shape()
        spec = {
            "element_dtype": _type_attr(dtype),
            "element_shape": attr_value_pb2.AttrValue(shape=shape),
            "dynamic_size": attr_value_pb2.AttrValue(b=_bool(n, "dynamic_size", False)),
            "infer_shape": attr_value_pb2.AttrValue(b=_bool(n, "identical_element_shapes", False)),
        }
        specs[n.name] = spec
        new_attr = dict((k, copy.deepcopy(v)) for k, v in spec.items())
        if _bool(n, "clear_after_read", True):
            new_attr["clear_after_read"] = attr_value_pb2.AttrValue(b=True)
            ta_name = n.attr["tensor_array_name"].s if "tensor_array_name" in n.attr else b""
            new_attr["tensor_array_name"] = attr_value_pb2.AttrValue(s=ta_name or n.name.encode())
        # Output 1 (the flow) becomes output 0 of the list op; readers of the handle (output 0)
        # read the list too: they are the TensorArray ops rewritten below, or forwarding ops
        # that then lead nowhere.
        for consumer, pos in consumers.get(n.name, ()):
            if pos is None:
                continue
            c = g.nodes[consumer]
            if c.inputs[pos] == (n.name, 1):
                c.inputs[pos] = (n.name, 0)
        g.nodes[n.name] = _Node(n.name, "ListReserve", n.inputs[:1], n.controls, new_attr, n.device)
        ctx.report.tensor_arrays += 1

    def elem(user, handle_ref, override_shape=None):
        creator = _ta_creator(g, handle_ref, user, specs)
        spec = {k: copy.deepcopy(v) for k, v in specs[creator.name].items()}
        if override_shape is not None and _shape_known_rank(override_shape) and not _shape_known_rank(
                spec["element_shape"].shape):
            spec["element_shape"] = attr_value_pb2.AttrValue(shape=override_shape)
        return spec

    for name in list(g.nodes):
        n = g.nodes[name]
        op = n.op
        if op not in _TA_OPS or op == "TensorArrayV3":
            continue
        if op == "TensorArrayWriteV3":  # handle, index, value, flow_in
            new = _Node(name, "ListSetItem", [n.inputs[3], n.inputs[1], n.inputs[2]], n.controls,
                        elem(name, n.inputs[0]), n.device)
        elif op == "TensorArrayScatterV3":  # handle, indices, value, flow_in
            new = _Node(name, "ListScatter", [n.inputs[3], n.inputs[1], n.inputs[2]], n.controls,
                        elem(name, n.inputs[0]), n.device)
        elif op == "TensorArrayReadV3":  # handle, index, flow_in
            new = _Node(name, "ListGetItem", [n.inputs[2], n.inputs[1]], n.controls, elem(name, n.inputs[0]),
                        n.device)
        elif op == "TensorArrayGatherV3":  # handle, indices, flow_in
            shape = n.attr["element_shape"].shape if "element_shape" in n.attr else None
            new = _Node(name, "ListGather", [n.inputs[2], n.inputs[1]], n.controls,
                        elem(name, n.inputs[0], shape), n.device)
        elif op == "TensorArrayConcatV3":  # handle, flow_in -> value, lengths
            new = _Node(name, "ListConcat", [n.inputs[1]], n.controls, elem(name, n.inputs[0]), n.device)
        elif op == "TensorArraySplitV3":  # handle, value, lengths, flow_in
            spec = elem(name, n.inputs[0])
            creator = _ta_creator(g, n.inputs[0], name, specs)
            for key in ("clear_after_read", "tensor_array_name"):
                if key in creator.attr:
                    spec[key] = copy.deepcopy(creator.attr[key])
            new = _Node(name, "ListSplit", [n.inputs[1], n.inputs[2]], n.controls + [n.inputs[3][0]], spec,
                        n.device)
        elif op == "TensorArraySizeV3":  # handle, flow_in
            new = _Node(name, "ListSize", [n.inputs[1]], n.controls, {}, n.device)
        else:  # TensorArrayCloseV3: lists are freed when nothing holds them
            new = _Node(name, "NoOp", [], n.controls + [n.inputs[0][0]], {}, n.device)
        g.nodes[name] = new


def _bool(n, key, default):
    value = n.attr.get(key)
    return value.b if value is not None and value.WhichOneof("value") == "b" else default


def _mark_lists(ctx, g):
    """Finds the tensors that carry lists: list ops' outputs and what forwards them."""
    lists = ctx.lists
    for n in g.nodes.values():
        if n.op in _LIST_MAKERS:
            lists.add((n.name, 0))
    changed = True
    while changed:
        changed = False
        for n in g.nodes.values():
            if n.op in _FORWARDING and n.inputs and n.inputs[0] in lists:
                ports = (0, 1) if n.op in _SWITCH else (0,)
                for p in ports:
                    if (n.name, p) not in lists:
                        lists.add((n.name, p))
                        changed = True
            if n.op in _MERGE and any(r in lists for r in n.inputs) and (n.name, 0) not in lists:
                lists.add((n.name, 0))
                changed = True
    for n in g.nodes.values():
        if n.op in ("RefEnter", "RefSwitch", "RefMerge", "RefIdentity", "RefExit", "RefNextIteration"):
            ports = (0, 1) if n.op == "RefSwitch" else (0,)
            for p in ports:
                ctx.refs.add((n.name, p))


# --------------------------------------------------------------------------------------------------------------
# Dtypes and shapes of tensors at function boundaries.
# --------------------------------------------------------------------------------------------------------------


def _tensor_dtype(g, ref):
    """The DataType enum of tensor ``ref`` of ``g`` (an argument or a node output)."""
    if ref[0] in g.arg_names:
        return next(a.dtype for a in g.args if a.name == ref[0])
    n = g.nodes.get(ref[0])
    if n is None:
        raise _unimplemented(f"TF1 control flow import: no node {ref[0]}")
    if n.op in _MERGE and ref[1] == 1:
        return _DT_INT32
    if n.op in _FORWARDING or n.op in ("While",):
        t = n.type_attr("T")
        if t is not None:
            return t
        if n.op == "While" and "T" in n.attr:
            return n.attr["T"].list.type[ref[1]]
    if n.op == "LoopCond":
        return _DT_BOOL
    if n.op == "If":
        return n.attr["Tout"].list.type[ref[1]]
    if n.op in _LIST_MAKERS:
        return _DT_FLOAT
    if n.op in ("ListGetItem", "ListGather", "ListStack"):
        return n.attr["element_dtype"].type
    if n.op == "ListConcat":
        return n.attr["element_dtype"].type if ref[1] == 0 else types_pb2.DT_INT64
    if n.op == "ListSize":
        return _DT_INT32
    from ferroflow.framework.op_signatures import op_signature, output_arg_lengths

    sig = op_signature(n.op)
    if sig is not None:
        lengths = output_arg_lengths(n.op, n.attr, max(ref[1] + 1, len(sig["outputs"]))) or [1] * len(sig["outputs"])
        start = 0
        for arg, length in zip(sig["outputs"], lengths):
            if ref[1] < start + length:
                if "type" in arg:
                    return types_pb2.DataType.Value(arg["type"])
                if "type_attr" in arg and arg["type_attr"] in n.attr:
                    return n.attr[arg["type_attr"]].type
                if "type_list_attr" in arg and arg["type_list_attr"] in n.attr:
                    return n.attr[arg["type_list_attr"]].list.type[ref[1] - start]
                break
            start += length
    raise _unimplemented(
        f"TF1 control flow import: cannot tell the dtype of {_format_ref(ref)} ({n.op}), which a converted cond or "
        "loop reads")


def _tensor_shape(g, ref):
    """The static shape recorded for ``ref`` (``_output_shapes``), else an unknown shape."""
    if ref[0] in g.arg_names:
        return next(a.shape for a in g.args if a.name == ref[0])
    n = g.nodes.get(ref[0])
    shapes = n.attr.get("_output_shapes") if n is not None else None
    if shapes is not None and ref[1] < len(shapes.list.shape):
        return copy.deepcopy(shapes.list.shape[ref[1]])
    return _unknown_shape()


def _unknown_shape():
    return tensor_shape_pb2.TensorShapeProto(unknown_rank=True)


def _shape_known_rank(shape):
    return not shape.unknown_rank


def _type_attr(t):
    return attr_value_pb2.AttrValue(type=t)


def _is_floating(t):
    try:
        return dtypes.as_dtype(t).is_floating
    except (TypeError, ValueError, KeyError):
        return False


# --------------------------------------------------------------------------------------------------------------
# Functions.
# --------------------------------------------------------------------------------------------------------------


class _FunctionBuilder:
    """Copies nodes of ``source`` into a new function graph, walking back from its outputs.

    ``classify(ref)`` tells, for a tensor a copied node reads: None (copy its
    node too) or a hashable key naming the argument that stands for it
    (``arg_info[key]`` gives ``(outer ref, dtype, is_list, is_ref, shape)``).
    ``classify_control(name)`` tells, for a control input: ``"copy"``,
    ``"drop"``, or ``"outer"`` (the calling op waits for it instead).
    """

    def __init__(self, ctx, source, classify, classify_control):
        self.ctx = ctx
        self.source = source
        self.classify = classify
        self.classify_control = classify_control
        self.graph = _Graph(is_function=True)
        self.arg_for = {}
        self.arg_info = {}
        self.outer_controls = []
        self.copied = set()

    def arg(self, key, info):
        """The argument for ``key`` (made on first use); ``info`` = (outer ref, dtype, is_list, is_ref, shape)."""
        if key not in self.arg_for:
            k = len(self.arg_for)
            name = f"arg_{k}"
            while name in self.ctx.names:
                name = "_" + name
            self.arg_for[key] = name
            self.arg_info[key] = info
        return (self.arg_for[key], 0)

    def map_ref(self, ref):
        key = self.classify(ref)
        if key is None:
            self._copy(ref[0])
            return ref
        return self.arg(key, self.info_of(key, ref))

    def info_of(self, key, ref):
        raise NotImplementedError

    def _copy(self, root):
        stack = [root]
        while stack:
            name = stack.pop()
            if name in self.copied:
                continue
            self.copied.add(name)
            self.source.absorbed.add(name)
            src = self.source.nodes[name]
            node = src.copy()
            new_inputs = []
            for ref in src.inputs:
                key = self.classify(ref)
                if key is None:
                    stack.append(ref[0])
                    new_inputs.append(ref)
                else:
                    new_inputs.append(self.arg(key, self.info_of(key, ref)))
            controls = []
            for c in src.controls:
                kind = self.classify_control(c)
                if kind == "copy":
                    stack.append(c)
                    controls.append(c)
                elif kind == "outer" and c not in self.outer_controls:
                    self.outer_controls.append(c)
            node.inputs = new_inputs
            node.controls = controls
            self.graph.add(node)

    def finish(self, keys, outputs, out_dtypes, base_name):
        """Makes the function: arguments for ``keys`` in order, returning ``outputs`` (refs of the new
        graph); converts the conds inside it; adds it to the library. Returns its name."""
        g = self.graph
        for key in keys:
            if key not in self.arg_for:
                raise _unimplemented(f"TF1 control flow import: internal error: no argument for {key!r}")
            name = self.arg_for[key]
            _, dtype, is_list, is_ref, shape = self.arg_info[key]
            g.args.append(_Arg(name, dtype, is_list, is_ref, shape))
            g.arg_names.add(name)
        g.outputs = list(outputs)
        for ref in g.outputs:
            if ref[0] not in g.nodes and ref[0] not in g.arg_names:
                raise _unimplemented(f"TF1 control flow import: internal error: output {ref} of {base_name}")
        _convert_conds(self.ctx, g)
        _collect_garbage(g)
        _bypass_list_identities(self.ctx, g)
        _check_converted(g, f"function {base_name}")
        fname = self.ctx.unique_function_name(base_name)
        self.ctx.library.append(_function_def(self.ctx, g, fname, out_dtypes))
        return fname


def _function_def(ctx, g, name, out_dtypes):
    fdef = function_pb2.FunctionDef()
    fdef.signature.name = name
    for k, a in enumerate(g.args):
        arg = fdef.signature.input_arg.add()
        arg.name = a.name
        arg.type = _DT_VARIANT if a.is_list else a.dtype
        arg.is_ref = bool(a.is_ref)
        fdef.arg_attr[k].attr["_output_shapes"].list.shape.add().CopyFrom(
            _unknown_shape() if a.is_list else a.shape)
    for n in g.nodes.values():
        nd = n.to_node_def()
        nd.attr.pop("_output_shapes", None)
        fdef.node_def.append(nd)
    for j, (ref, dtype) in enumerate(zip(g.outputs, out_dtypes)):
        out = fdef.signature.output_arg.add()
        out.name = f"output_{j}"
        is_list = ref in ctx.lists or any(a.is_list for a in g.args if a.name == ref[0])
        out.type = _DT_VARIANT if is_list else dtype
        fdef.ret[out.name] = _format_ref(ref)
    return fdef


def _func_attr(name):
    v = attr_value_pb2.AttrValue()
    v.func.name = name
    return v


def _list_type_attr(types):
    v = attr_value_pb2.AttrValue()
    v.list.SetInParent()
    v.list.type.extend(types)
    return v


def _list_shape_attr(shapes):
    v = attr_value_pb2.AttrValue()
    v.list.SetInParent()
    for s in shapes:
        v.list.shape.add().CopyFrom(s)
    return v


def _list_int_attr(values):
    v = attr_value_pb2.AttrValue()
    v.list.SetInParent()
    v.list.i.extend(values)
    return v


# --------------------------------------------------------------------------------------------------------------
# Loops.
# --------------------------------------------------------------------------------------------------------------


def _convert_loops(ctx, g, frames, parents):
    loop_frames = [f for f in parents if f and any(frames.get(n) == f for n in g.nodes)]
    loop_frames.sort(key=lambda f: -_frame_depth(parents, f))
    for f in loop_frames:
        members = [name for name in g.nodes if frames.get(name) == f]
        if not members:
            continue
        _convert_loop(ctx, g, f, members, frames, parents)


def _loop_scope(frame_name):
    return frame_name[: -len("/while_context")] if frame_name.endswith("/while_context") else frame_name


def _convert_loop(ctx, g, frame_name, members, frames, parents):
    member_set = set(members)
    consumers = g.consumers()
    nodes = g.nodes
    enters = [nodes[m] for m in members if nodes[m].op in _ENTER]
    loop_conds = [nodes[m] for m in members if nodes[m].op in _LOOP_COND]
    if len(loop_conds) != 1:
        where = enters[0].name if enters else members[0]
        raise _unimplemented(
            f"TF1 control flow import: loop frame '{frame_name}' (entered at {where}) has {len(loop_conds)} "
            "LoopCond nodes; a while loop has one")
    loop_cond = loop_conds[0]
    variables = []  # (enter, merge, switch, next_iteration, exits)
    invariants = []
    for e in enters:
        if e.attr.get("is_constant") is not None and e.attr["is_constant"].b:
            invariants.append(e)
            continue
        merges = [nodes[c] for c, pos in consumers.get(e.name, ()) if pos is not None and nodes[c].op in _MERGE]
        if not merges:
            if not consumers.get(e.name):
                continue  # leads nowhere (a gradient's counter whose loop was dropped)
            raise _unimplemented(
                f"TF1 control flow import: node {e.name} enters loop '{frame_name}' as a loop variable but no "
                "Merge reads it")
        m = merges[0]
        nexts = [nodes[r[0]] for r in m.inputs if r[0] in nodes and nodes[r[0]].op in _NEXT]
        switches = [nodes[c] for c, pos in consumers.get(m.name, ())
                    if pos == 0 and nodes[c].op in _SWITCH and nodes[c].inputs[1][0] == loop_cond.name]
        if len(nexts) != 1 or len(switches) != 1:
            raise _unimplemented(
                f"TF1 control flow import: loop variable {e.name} of '{frame_name}' does not have the "
                "Enter -> Merge -> Switch -> NextIteration shape of tf.while_loop (Merge " + m.name + ")")
        s = switches[0]
        exits = [nodes[c] for c, pos in consumers.get(s.name, ())
                 if pos is not None and nodes[c].op in _EXIT]
        variables.append((e, m, s, nexts[0], exits))
    if not variables:
        raise _unimplemented(f"TF1 control flow import: loop frame '{frame_name}' has no loop variables")
    merge_index = {v[1].name: i for i, v in enumerate(variables)}
    switch_index = {v[2].name: i for i, v in enumerate(variables)}
    invariant_names = {e.name for e in invariants}
    structural = set(merge_index) | set(switch_index) | {v[3].name for v in variables} | {
        x.name for v in variables for x in v[4]} | {loop_cond.name} | {e.name for e in enters}

    def var_info(i):
        e, m, _, _, _ = variables[i]
        ref = e.inputs[0]
        return (ref, e.type_attr("T"), (e.name, 0) in ctx.lists, (e.name, 0) in ctx.refs, _tensor_shape(g, (m.name, 0)))

    def inv_info(e):
        snapshot = _variable_snapshot(g, e.inputs[0])
        if snapshot is not None:
            return (snapshot, e.type_attr("T"), False, True, _tensor_shape(g, (e.name, 0)))
        return (e.inputs[0], e.type_attr("T"), (e.name, 0) in ctx.lists, (e.name, 0) in ctx.refs,
                _tensor_shape(g, (e.name, 0)))

    def outside(ref_name, user):
        n = nodes.get(ref_name)
        if n is not None and not n.inputs and not n.controls and n.op == "Const":
            return None  # a constant without a control input: copy it in
        raise _unimplemented(
            f"TF1 control flow import: node {user} of loop '{frame_name}' reads {ref_name}, which is outside the "
            "loop but did not enter it through an Enter")

    class _LoopBuilder(_FunctionBuilder):
        def info_of(self, key, ref):
            if key[0] == "var":
                return var_info(key[1])
            return inv_info(nodes[key[1]])

    def make_classify(kind):
        def classify(ref):
            name = ref[0]
            if name in merge_index:
                if ref[1] != 0:
                    raise _unimplemented(
                        f"TF1 control flow import: loop '{frame_name}' reads the value_index of its Merge {name}")
                return ("var", merge_index[name])
            if name in switch_index:
                if ref[1] != 1 or kind != "body":
                    raise _unimplemented(
                        f"TF1 control flow import: loop '{frame_name}' reads {_format_ref(ref)} where a "
                        "while loop's body would not")
                return ("var", switch_index[name])
            if name in invariant_names:
                return ("inv", name)
            if name in structural:
                raise _unimplemented(
                    f"TF1 control flow import: the {kind} of loop '{frame_name}' reads {name} "
                    f"({nodes[name].op}), which a tf.while_loop {kind} does not")
            if name not in member_set:
                return outside(name, "?")
            return None

        def classify_control(name):
            if name in merge_index or name in switch_index or name in invariant_names:
                return "drop"
            if name in structural:
                return "drop"
            if name not in member_set:
                n = nodes.get(name)
                if n is not None and not n.inputs and not n.controls and n.op == "Const":
                    return "drop"
                raise _unimplemented(
                    f"TF1 control flow import: a node of loop '{frame_name}' waits for {name}, which is outside "
                    "the loop")
            return "copy"
        return classify, classify_control

    scope = _loop_scope(frame_name)
    # cond: LoopCond's input from the Merge values.
    cls, ctl = make_classify("cond")
    cb = _LoopBuilder(ctx, g, cls, ctl)
    for i in range(len(variables)):
        cb.arg(("var", i), var_info(i))
    pred = cb.map_ref(loop_cond.inputs[0])
    for c in loop_cond.controls:
        kind = ctl(c)
        if kind == "copy":
            cb._copy(c)
    # body: the NextIteration inputs from the Switch outputs.
    cls, ctl = make_classify("body")
    bb = _LoopBuilder(ctx, g, cls, ctl)
    for i in range(len(variables)):
        bb.arg(("var", i), var_info(i))
    body_out = []
    for _, _, _, nxt, _ in variables:
        ref = bb.map_ref(nxt.inputs[0])
        extra = []
        for c in nxt.controls:
            kind = ctl(c)
            if kind == "copy":
                bb._copy(c)
                extra.append(c)
        if extra:
            # The iteration's side effects (controls of NextIteration) happen before its result goes on.
            wrap = ctx.unique_name(nxt.name + "/ferroflow_after")
            dtype = nxt.type_attr("T")
            bb.graph.add(_Node(wrap, "Identity", [ref], extra, {"T": _type_attr(dtype)}))
            if ref in ctx.lists:
                ctx.lists.add((wrap, 0))
            ref = (wrap, 0)
        body_out.append(ref)
    # Invariants: those either function reads, in one order; the body passes them through.
    inv_keys = []
    for b in (cb, bb):
        for key in b.arg_for:
            if key[0] == "inv" and key not in inv_keys:
                inv_keys.append(key)
    for key in inv_keys:
        for b in (cb, bb):
            b.arg(key, inv_info(nodes[key[1]]))
    keys = [("var", i) for i in range(len(variables))] + inv_keys
    body_out += [bb.arg(k, None) for k in inv_keys]
    var_types = [var_info(i)[1] for i in range(len(variables))]
    inv_types = [inv_info(nodes[k[1]])[1] for k in inv_keys]
    cond_name = cb.finish(keys, [pred], [_DT_BOOL], scope + "_cond")
    body_name = bb.finish(keys, body_out, var_types + inv_types, scope + "_body")
    # The While op, in the enclosing frame.
    outer_inputs = [v[0].inputs[0] for v in variables] + [inv_info(nodes[k[1]])[0] for k in inv_keys]
    ref_inputs = [i for i, k in enumerate(keys) if (var_info(k[1]) if k[0] == "var" else inv_info(nodes[k[1]]))[3]]
    controls = []
    for e in [v[0] for v in variables] + [nodes[k[1]] for k in inv_keys]:
        for c in e.controls:
            if c not in controls:
                controls.append(c)
    for b in (cb, bb):
        for c in b.outer_controls:
            if c not in controls:
                controls.append(c)
    types = var_types + inv_types
    shapes = [var_info(i)[4] for i in range(len(variables))] + [inv_info(nodes[k[1]])[4] for k in inv_keys]
    list_flags = [var_info(i)[2] for i in range(len(variables))] + [inv_info(nodes[k[1]])[2] for k in inv_keys]
    shapes = [_unknown_shape() if is_list else s for s, is_list in zip(shapes, list_flags)]
    parallel = variables[0][0].attr.get("parallel_iterations")
    while_name = ctx.unique_name(scope + "/While")
    attr = {
        "cond": _func_attr(cond_name),
        "body": _func_attr(body_name),
        "T": _list_type_attr(types),
        "output_shapes": _list_shape_attr(shapes),
        "parallel_iterations": attr_value_pb2.AttrValue(i=parallel.i if parallel is not None else 10),
        "_history": attr_value_pb2.AttrValue(b=any(_is_floating(t) for t in types)),
        "_ref_inputs": _list_int_attr(ref_inputs),
    }
    device = variables[0][0].device
    parent = parents.get(frame_name) or ""
    g.add(_Node(while_name, "While", outer_inputs, controls, attr, device))
    frames[while_name] = parent
    for i, flag in enumerate(list_flags):
        if flag:
            ctx.lists.add((while_name, i))
    # Remove the frame; each Exit becomes an Identity of the While output under its name.
    for name in members:
        g.nodes.pop(name, None)
    for i, (e, _, _, _, exits) in enumerate(variables):
        for x in exits:
            attr = {"T": _type_attr(x.type_attr("T") or e.type_attr("T"))}
            if "_output_shapes" in x.attr:
                attr["_output_shapes"] = x.attr["_output_shapes"]
            g.add(_Node(x.name, "Identity", [(while_name, i)], [], attr, x.device))
            frames[x.name] = parent
            if list_flags[i]:
                ctx.lists.add((x.name, 0))
    ctx.report.loops += 1


# --------------------------------------------------------------------------------------------------------------
# Conds.
# --------------------------------------------------------------------------------------------------------------


def _pred_key(g, ref):
    """A Switch's predicate, followed back through Identity ops (TF1 switches values on ``cond/pred_id``,
    an Identity of the predicate, and the predicate on itself)."""
    seen = 0
    while ref[0] in g.nodes and seen < 64:
        n = g.nodes[ref[0]]
        if n.op != "Identity" or not n.inputs:
            break
        ref = n.inputs[0]
        seen += 1
    return ref


def _cond_states(g, order):
    """``{(node, output): frozenset of (predicate ref, branch)}``: the branches a tensor is alive under."""
    state = {}
    node_state = {}

    def of(ref):
        if ref[0] in g.arg_names:
            return frozenset()
        return state.get(ref, node_state.get(ref[0], frozenset()))

    merges = {}
    for name in order:
        n = g.nodes[name]
        ins = [of(r) for r in n.inputs] + [node_state.get(c, frozenset()) for c in n.controls]
        if n.op in _MERGE:
            data = [of(r) for r in n.inputs]
            common = frozenset.intersection(*data) if data else frozenset()
            differ = set().union(*data) - common if data else set()
            preds = {p for p, _ in differ}
            control_state = frozenset().union(*[node_state.get(c, frozenset()) for c in n.controls])
            s = common | control_state
            node_state[name] = s
            for k in (0, 1):
                state[(name, k)] = s
            merges[name] = (preds, s, data)
            continue
        s = frozenset().union(*ins) if ins else frozenset()
        seen = {}
        for p, b in s:
            if seen.setdefault(p, b) != b:
                raise _unimplemented(
                    f"TF1 control flow import: node {name} ({n.op}) reads values from both branches of the cond "
                    f"on {_format_ref(p)}, so it could never run")
        node_state[name] = s
        if n.op in _SWITCH:
            key = _pred_key(g, n.inputs[1])
            for k in (0, 1):
                state[(name, k)] = s | {(key, k)}
    return state, node_state, merges


def _convert_conds(ctx, g):
    """Turns every TF1 cond (Switch/Merge) of ``g`` into ``If`` ops, innermost first; then drops what is
    left in branches that no Merge ends (nothing could read it)."""
    if not any(n.op in _MERGE or n.op in _SWITCH for n in g.nodes.values()):
        return
    _controls_past_switches(g)
    while True:
        order = g.topological_order()
        state, node_state, merges = _cond_states(g, order)
        if not merges:
            _drop_dead_branches(g, node_state)
            return
        groups = collections.OrderedDict()
        for name, (preds, outer, _) in merges.items():
            if len(preds) != 1:
                what = "no Switch" if not preds else "several predicates: " + ", ".join(
                    sorted(_format_ref(p) for p in preds))
                raise _unimplemented(
                    f"TF1 control flow import: Merge {name} is not the end of a tf.cond (its inputs depend on "
                    f"{what})")
            pred = next(iter(preds))
            scope = name.rsplit("/", 1)[0] if "/" in name else ""
            groups.setdefault((pred, outer, scope), []).append(name)
        # Innermost first: the groups inside the most branches; convert one depth per pass.
        deepest = max(len(k[1]) for k in groups)
        for key, names in groups.items():
            if len(key[1]) != deepest:
                continue
            for part in _split_for_cycles(g, names, key[0], state, node_state):
                _convert_cond(ctx, g, key[0], key[1], part, state, node_state)
        _collect_garbage(g)


def _drop_dead_branches(g, node_state):
    """Drops, while there are any, unread nodes that live only in a branch (a Switch output feeds them):
    the part of a cond whose Merge went with a dropped gradient, say."""
    while True:
        read = set()
        for n in g.nodes.values():
            read.update(src for src, _ in n.inputs)
            read.update(n.controls)
        read.update(r[0] for r in g.outputs)
        gone = [name for name, n in g.nodes.items()
                if name not in read and (n.op in _SWITCH or node_state.get(name))]
        if not gone:
            return
        for name in gone:
            del g.nodes[name]


def _controls_past_switches(g):
    """A control input on a Switch becomes control inputs on what the Switch reads.

    A Switch marks only one of its outputs dead, never itself, so a node that
    waits for it (TF1's gradients group with ``tuple/group_deps`` NoOps that
    do) waits for its inputs and runs in either branch.
    """
    for n in g.nodes.values():
        if not any(c in g.nodes and g.nodes[c].op in _SWITCH for c in n.controls):
            continue
        controls = []
        stack = list(reversed(n.controls))
        seen = set()
        while stack:
            c = stack.pop()
            if c in seen:
                continue
            seen.add(c)
            sw = g.nodes.get(c)
            if sw is not None and sw.op in _SWITCH:
                stack.extend(reversed([src for src, _ in sw.inputs] + sw.controls))
                continue
            if c not in controls and (c in g.nodes or c in g.arg_names) and c != n.name:
                controls.append(c)
        n.controls = [c for c in controls if c not in g.arg_names]


def _split_for_cycles(g, names, pred, state, node_state):
    """``names`` as one group, or each alone when one Merge's result feeds another's inputs."""
    if len(names) == 1:
        return [names]
    members = set(names)
    for name in names:
        # Walk back from this Merge's inputs; reaching another member means a cycle after merging.
        stack = [r[0] for r in g.nodes[name].inputs]
        seen = set()
        while stack:
            cur = stack.pop()
            if cur in seen or cur not in g.nodes:
                continue
            seen.add(cur)
            if cur in members and cur != name:
                return [[n] for n in names]
            n = g.nodes[cur]
            stack.extend(r[0] for r in n.inputs)
            stack.extend(n.controls)
    return [names]


def _convert_cond(ctx, g, pred, outer_state, merge_names, state, node_state):
    nodes = g.nodes

    def branch_of(ref):
        s = state.get(ref, node_state.get(ref[0], frozenset())) if ref[0] not in g.arg_names else frozenset()
        for p, b in s:
            if p == pred:
                return b
        return None

    # Which Merge input comes from which branch.
    per_merge = []
    for name in merge_names:
        m = nodes[name]
        branches = [branch_of(r) for r in m.inputs]
        if len(m.inputs) != 2:
            raise _unimplemented(f"TF1 control flow import: Merge {name} has {len(m.inputs)} inputs; a cond's has 2")
        if branches[0] is None and branches[1] is not None:
            branches[0] = 1 - branches[1]
        if branches[1] is None and branches[0] is not None:
            branches[1] = 1 - branches[0]
        if sorted(branches) != [0, 1]:
            raise _unimplemented(
                f"TF1 control flow import: the inputs of Merge {name} do not come from the two branches of the cond "
                f"on {_format_ref(pred)}")
        per_merge.append((m, {b: m.inputs[i] for i, b in enumerate(branches)}))

    class _BranchBuilder(_FunctionBuilder):
        def info_of(self, key, ref):
            outer = key
            snapshot = _variable_snapshot(g, outer)
            if snapshot is not None:
                outer = snapshot
            n = nodes.get(outer[0])
            is_ref = outer in ctx.refs or (n is not None and n.op in _REF_VARIABLE_OPS) or (
                ref[0] in nodes and nodes[ref[0]].op == "RefSwitch")
            if ref[0] in nodes and nodes[ref[0]].op in _SWITCH:
                sw = nodes[ref[0]]
                dtype = sw.type_attr("T")
                shape = _tensor_shape(g, ref)
                is_list = ref in ctx.lists
            else:
                dtype = _tensor_dtype(g, outer)
                shape = _tensor_shape(g, outer)
                is_list = outer in ctx.lists
            return (outer, dtype, is_list, is_ref, shape)

    switches_used = set()

    def make_classify(b):
        def classify(ref):
            n = nodes.get(ref[0])
            if n is None:  # an argument of the enclosing function
                return ref
            if n.op in _SWITCH and _pred_key(g, n.inputs[1]) == pred:
                if ref[1] != b:
                    raise _unimplemented(
                        f"TF1 control flow import: branch {b} of the cond on {_format_ref(pred)} reads "
                        f"{_format_ref(ref)}, the other branch's output of Switch {n.name}")
                switches_used.add(n.name)
                return n.inputs[0]
            if branch_of(ref) != b:
                return ref  # from outside the cond: an input of the If
            return None

        def classify_control(name):
            n = nodes.get(name)
            if n is None:
                return "drop"
            if n.op in _SWITCH and _pred_key(g, n.inputs[1]) == pred:
                switches_used.add(name)
                return "drop"
            s = node_state.get(name, frozenset())
            if (pred, b) in s:
                return "copy"
            if any(p == pred for p, _ in s):
                raise _unimplemented(
                    f"TF1 control flow import: a node of branch {b} of the cond on {_format_ref(pred)} waits for "
                    f"{name}, which is in the other branch")
            return "outer"
        return classify, classify_control

    builders = {}
    outs = {}
    for b in (0, 1):
        cls, ctl = make_classify(b)
        builder = _BranchBuilder(ctx, g, cls, ctl)
        outs[b] = [builder.map_ref(inputs[b]) for _, inputs in per_merge]
        builders[b] = builder
    keys = []
    for b in (0, 1):
        for key in builders[b].arg_for:
            if key not in keys:
                keys.append(key)
    for key in keys:
        for b in (0, 1):
            if key not in builders[b].arg_for:
                other = builders[1 - b]
                builders[b].arg(key, other.arg_info[key])
    out_types = [m.type_attr("T") for m, _ in per_merge]
    scope = merge_names[0].rsplit("/", 1)[0] if "/" in merge_names[0] else "cond"
    else_name = builders[0].finish(keys, outs[0], out_types, scope + "_false")
    then_name = builders[1].finish(keys, outs[1], out_types, scope + "_true")
    info = builders[1].arg_info
    inputs = [pred] + [info[k][0] for k in keys]
    ref_inputs = [i + 1 for i, k in enumerate(keys) if info[k][3]]
    controls = []
    for b in (0, 1):
        for c in builders[b].outer_controls:
            if c not in controls:
                controls.append(c)
    shapes = []
    for m, _ in per_merge:
        shapes.append(_unknown_shape() if (m.name, 0) in ctx.lists else _tensor_shape(g, (m.name, 0)))
    in_types = [info[k][1] for k in keys]
    if_name = ctx.unique_name(scope + "/If")
    attr = {
        "then_branch": _func_attr(then_name),
        "else_branch": _func_attr(else_name),
        "Tcond": _type_attr(_DT_BOOL),
        "Tin": _list_type_attr(in_types),
        "Tout": _list_type_attr(out_types),
        "output_shapes": _list_shape_attr(shapes),
        "_history": attr_value_pb2.AttrValue(b=any(_is_floating(t) for t in in_types + out_types)),
        "_ref_inputs": _list_int_attr(ref_inputs),
    }
    g.add(_Node(if_name, "If", inputs, controls, attr, per_merge[0][0].device))
    node_state[if_name] = outer_state
    consumers = g.consumers()
    for k, (m, _) in enumerate(per_merge):
        is_list = (m.name, 0) in ctx.lists
        index_readers = [(c, pos) for c, pos in consumers.get(m.name, ()) if pos is not None
                         and nodes[c].inputs[pos] == (m.name, 1)]
        if index_readers:
            # value_index: 1 when input 1 (the taken branch's) arrived.
            true_pos = 1 if per_merge[k][1][1] == m.inputs[1] else 0
            idx = ctx.unique_name(m.name + "/value_index")
            src = pred
            if true_pos == 0:
                src_name = ctx.unique_name(m.name + "/value_index/not")
                g.add(_Node(src_name, "LogicalNot", [pred], [], {}, m.device))
                src = (src_name, 0)
            g.add(_Node(idx, "Cast", [src], [], {"SrcT": _type_attr(_DT_BOOL), "DstT": _type_attr(_DT_INT32)},
                        m.device))
            for c, pos in index_readers:
                nodes[c].inputs[pos] = (idx, 0)
        attr = {"T": _type_attr(m.type_attr("T"))}
        if "_output_shapes" in m.attr:
            attr["_output_shapes"] = m.attr["_output_shapes"]
        g.add(_Node(m.name, "Identity", [(if_name, k)], [], attr, m.device))
        node_state[m.name] = outer_state
        if is_list:
            ctx.lists.add((if_name, k))
    ctx.report.conds += 1


# --------------------------------------------------------------------------------------------------------------
# Clean-up and checks.
# --------------------------------------------------------------------------------------------------------------


def _collect_garbage(g):
    """Drops, while there are any, the nodes nothing reads that went into functions, leftover TF1
    control-flow nodes (a TensorArray handle's Enter, a cond's unused Switch; not a Merge still to be
    converted), and unread nodes that read either (inside a branch, where nothing took them)."""
    while True:
        read = set()
        for n in g.nodes.values():
            read.update(s for s, _ in n.inputs)
            read.update(n.controls)
        read.update(r[0] for r in g.outputs)
        gone = [name for name, n in g.nodes.items()
                if name not in read and n.op not in _MERGE and (
                    name in g.absorbed or n.op in _V1_CONTROL_FLOW or any(
                        src in g.absorbed or src in g.nodes and g.nodes[src].op in _V1_CONTROL_FLOW
                        for src in [s for s, _ in n.inputs] + n.controls))]
        if not gone:
            return
        for name in gone:
            del g.nodes[name]


def _bypass_list_identities(ctx, g):
    """ferroflow's Identity does not pass a list on as a list: its readers read its input instead
    (an Exit or Merge name that stood for a list then no longer exists)."""
    def is_list(ref):
        return ref in ctx.lists or any(a.is_list for a in g.args if a.name == ref[0])

    bypass = {name: n for name, n in g.nodes.items()
              if n.op in ("Identity", "Snapshot", "StopGradient") and n.inputs and is_list(n.inputs[0])}
    if not bypass:
        return

    def resolve(ref):
        while ref[0] in bypass:
            ref = bypass[ref[0]].inputs[0]
        return ref

    def resolve_control(name):
        out = []
        stack = [name]
        while stack:
            cur = stack.pop()
            if cur in bypass:
                n = bypass[cur]
                stack.extend(n.controls)
                if n.inputs[0][0] in g.nodes:
                    stack.append(n.inputs[0][0])
            elif cur in g.nodes:
                out.append(cur)
        return out

    for n in g.nodes.values():
        if n.name in bypass:
            continue
        extra = []
        for i, ref in enumerate(n.inputs):
            if ref[0] in bypass:
                extra.extend(c for c in resolve_control(ref[0]) if c != resolve(ref)[0])
                n.inputs[i] = resolve(ref)
        controls = []
        for c in n.controls:
            controls.extend(resolve_control(c) if c in bypass else [c])
        for c in extra:
            if c not in controls and bypass.get(c) is None and c != n.name:
                controls.append(c)
        n.controls = [c for i, c in enumerate(controls) if c not in controls[:i]]
    g.outputs = [resolve(r) for r in g.outputs]
    for name in bypass:
        del g.nodes[name]
        ctx.report.removed.setdefault(
            name, "it passed a TensorArray's flow on, and ferroflow reads the list (the array) from where it is made")


def _check_converted(g, where):
    for n in g.nodes.values():
        if n.op in _V1_CONTROL_FLOW:
            raise _unimplemented(
                f"TF1 control flow import: node {n.name} ({n.op}) in {where} is not part of a tf.cond or "
                "tf.while_loop this importer can turn into If/While")
        if n.op in _TA_OPS or n.op in _STACK_OPS or n.op in _TA_GRAD_OPS:
            raise _unimplemented(f"TF1 control flow import: node {n.name} ({n.op}) in {where} could not be converted")
