"""``tf.train.Checkpoint``: object-based checkpoints, in graph mode.

Objects form a graph: a ``Checkpoint`` depends on its keyword arguments, a
plain Python object on the attributes that hold trackable values (Variables,
optimizers, other objects, lists and dicts of them), an optimizer on its
non-slot variables (``beta1_power``, ...). Every variable is saved under
``<path>/.ATTRIBUTES/VARIABLE_VALUE`` where the path is the chain of
attribute names from the root, and every optimizer slot under
``<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot name>/.ATTRIBUTES/VARIABLE_VALUE``.
The graph itself is stored as a serialized ``TrackableObjectGraph`` under
``_CHECKPOINTABLE_OBJECT_GRAPH``; restoring walks it from the root and
matches children by name, so a checkpoint written by TensorFlow's
``tf.train.Checkpoint`` loads into the same Python structure here, and back.
"""

from __future__ import annotations

import collections
import os
import types
import weakref

import numpy as np

from ferroflow.framework import dtypes, errors, ops
from ferroflow.framework.tensor_shape import as_shape

__all__ = ["Checkpoint"]

OBJECT_GRAPH_PROTO_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_ATTRIBUTES = ".ATTRIBUTES"
_VARIABLE_VALUE = "VARIABLE_VALUE"
_OPTIMIZER_SLOT = ".OPTIMIZER_SLOT"


def _escape_local_name(name):
    """Object-path escaping: '.' becomes '..' and '/' becomes '.S' (as in TensorFlow's keys)."""
    return name.replace(".", "..").replace("/", ".S")


def _is_variable(obj):
    from ferroflow.ops import variables

    return isinstance(obj, variables.Variable)


def _is_optimizer(obj):
    from ferroflow.training.optimizers import Optimizer

    return isinstance(obj, Optimizer)


class AutoTrackable:
    """Base for user objects whose trackable attributes (Variables, optimizers, ...) are checkpointed.

    Any plain Python object works the same way; subclassing also restores
    values into attributes assigned after ``Checkpoint.restore`` at once
    (plain objects are looked at again when a status method runs).
    """

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if _PENDING and _is_trackable(value):
            _dependency_added(self)


def _user_object(obj):
    """A plain Python object (not a ferroflow or library internal) whose attributes may be tracked."""
    if isinstance(obj, AutoTrackable):
        return True
    if isinstance(obj, (type, types.ModuleType, types.FunctionType, types.MethodType, np.ndarray)):
        return False
    if not hasattr(obj, "__dict__"):
        return False
    module = type(obj).__module__ or ""
    return not (module.startswith("ferroflow") or module.startswith("numpy") or module == "builtins")


def _is_trackable(obj, seen=None):
    """Whether ``obj`` is (or holds) something a checkpoint saves."""
    if _is_variable(obj) or _is_optimizer(obj) or isinstance(obj, Checkpoint):
        return True
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    if isinstance(obj, (list, tuple)):
        return any(_is_trackable(x, seen) for x in obj)
    if isinstance(obj, dict):
        return any(isinstance(k, str) and _is_trackable(v, seen) for k, v in obj.items())
    if isinstance(obj, AutoTrackable):
        return True
    if _user_object(obj):
        return any(_is_trackable(v, seen) for v in vars(obj).values())
    return False


def _may_track(obj):
    """Whether ``obj`` can be a dependency: trackable now, or a plain object or container that may be filled later."""
    return _is_trackable(obj) or _user_object(obj) or isinstance(obj, (list, dict))


def _slot_names(optimizer):
    """``{name in checkpoints: the optimizer's slot name}``: an optimizer may name its slots in checkpoints as
    another library does (``_checkpoint_slot_names``, Keras's optimizers), else by their own names."""
    named = getattr(optimizer, "_checkpoint_slot_names", None)
    if named is not None:
        return dict(named())
    return {name: name for name in optimizer.get_slot_names()}


def _children(obj):
    """``[(local_name, child), ...]`` dependencies of ``obj``, in a stable order."""
    if _is_variable(obj):
        return []
    if isinstance(obj, Checkpoint):
        return [(k, v) for k, v in obj._dependencies.items() if _is_trackable(v)]
    if _is_optimizer(obj) and hasattr(obj, "_checkpoint_children"):
        return obj._checkpoint_children()
    if _is_optimizer(obj):
        graph_id = id(ops.get_default_graph())
        found = [(name, v) for (name, gid), v in obj._non_slot_dict.items() if gid == graph_id]
        return sorted(found, key=lambda kv: kv[0])
    if isinstance(obj, (list, tuple)):
        return [(str(i), x) for i, x in enumerate(obj) if _is_trackable(x)]
    if isinstance(obj, dict):
        return [(k, v) for k, v in obj.items() if isinstance(k, str) and _is_trackable(v)]
    if _user_object(obj):
        return [(k, v) for k, v in vars(obj).items() if _is_trackable(v)]
    return []


def _full_name(variable):
    """The name recorded with a variable's value: a partition's is its whole partitioned variable's (as in TF)."""
    get = getattr(variable, "_get_save_slice_info", None)
    info = get() if get is not None else None
    return info.full_name if info is not None else variable.op.name


class _ObjectGraph:
    """The current Python objects reachable from a root, numbered breadth-first, plus slot variables."""

    def __init__(self, root):
        self.nodes = [root]
        self.paths = {id(root): ""}
        self.ids = {id(root): 0}
        self.children = [[]]
        self.slots = collections.defaultdict(list)  # optimizer node id -> [(slot, original id, slot id)]
        queue = collections.deque([root])
        while queue:
            obj = queue.popleft()
            parent = self.ids[id(obj)]
            for name, child in _children(obj):
                if id(child) not in self.ids:
                    self.ids[id(child)] = len(self.nodes)
                    self.nodes.append(child)
                    self.children.append([])
                    base = self.paths[id(obj)]
                    local = _escape_local_name(name)
                    self.paths[id(child)] = f"{base}/{local}" if base else local
                    queue.append(child)
                self.children[parent].append((name, self.ids[id(child)]))
        non_slot = list(self.nodes)
        for opt_id, opt in enumerate(non_slot):
            if not _is_optimizer(opt):
                continue
            for slot_name, own_name in _slot_names(opt).items():
                for var_id, var in enumerate(non_slot):
                    if not _is_variable(var):
                        continue
                    slot = opt.get_slot(var, own_name)
                    if slot is None:
                        continue
                    if id(slot) in self.ids:
                        raise NotImplementedError(
                            f"A slot variable was re-used as a dependency of a trackable object: {slot.name}"
                        )
                    self.ids[id(slot)] = len(self.nodes)
                    self.nodes.append(slot)
                    self.children.append([])
                    self.paths[id(slot)] = (
                        f"{self.paths[id(var)]}/{_OPTIMIZER_SLOT}/{self.paths[id(opt)]}/{_escape_local_name(slot_name)}"
                    )
                    self.slots[opt_id].append((slot_name, var_id, self.ids[id(slot)]))

    def key(self, obj):
        return f"{self.paths[id(obj)]}/{_ATTRIBUTES}/{_VARIABLE_VALUE}"

    def variables(self):
        return [v for v in self.nodes if _is_variable(v)]

    def to_proto(self):
        from ferroflow.core.protobuf import trackable_object_graph_pb2

        graph = trackable_object_graph_pb2.TrackableObjectGraph()
        for i, obj in enumerate(self.nodes):
            node = graph.nodes.add()
            for name, child_id in self.children[i]:
                node.children.add(node_id=child_id, local_name=name)
            if _is_variable(obj):
                node.attributes.add(name=_VARIABLE_VALUE, full_name=_full_name(obj), checkpoint_key=self.key(obj))
            for slot_name, var_id, slot_id in self.slots.get(i, []):
                node.slot_variables.add(original_variable_node_id=var_id, slot_name=slot_name,
                                        slot_variable_node_id=slot_id)
        # A node has values if it or anything below it (children, slots) does.
        has_values = [bool(n.attributes) for n in graph.nodes]
        for i in reversed(range(len(graph.nodes))):
            n = graph.nodes[i]
            if any(has_values[c.node_id] for c in n.children) or any(
                    has_values[s.slot_variable_node_id] for s in n.slot_variables):
                has_values[i] = True
        for i, n in enumerate(graph.nodes):
            n.has_checkpoint_values.value = has_values[i]
        return graph


def _session_for(session):
    session = session or ops.get_default_session()
    if session is None:
        raise ValueError(
            "No session: pass session= or call inside `with tf.Session() as sess:` (graph-mode checkpoints run ops)."
        )
    return session


# Restorations that still hold checkpoint values no Python object has taken. Creating a dependency later
# (an optimizer's slot or non-slot variable, an attribute of a Checkpoint or AutoTrackable) matches it
# against them at once, so its restore op exists before the graph is finalized. Weak: a restoration
# whose status is gone has nobody left to run its ops.
_PENDING = weakref.WeakSet()


class _Restoration:
    """One ``restore()`` of an object-based checkpoint: which checkpoint node each Python object took.

    The match grows: objects created or attached after ``restore()`` are
    matched when they appear (or when a status method looks again), and each
    newly matched variable gets its own restore op, appended to
    ``restore_ops``. This is TensorFlow's restore-on-create, in graph mode.
    """

    def __init__(self, root, save_path, reader, proto, graph):
        self.root = root
        self.save_path = save_path
        self.reader = reader
        self.proto = proto
        self.graph = graph
        self.matched = {0: root}  # checkpoint node id -> Python object
        self._node_of = {id(root): 0}  # id(Python object) -> checkpoint node id (matched keeps objects alive)
        self.restore_ops = []
        # optimizer node id -> {(original variable node id, slot name): slot variable node id}
        self._slot_refs = {}
        for node_id, node in enumerate(proto.nodes):
            if node.slot_variables:
                self._slot_refs[node_id] = {
                    (r.original_variable_node_id, r.slot_name): r.slot_variable_node_id for r in node.slot_variables
                }
        self._valued = [i for i, node in enumerate(proto.nodes) if node.attributes]

    def matched_ids(self):
        return {id(o) for o in self.matched.values()}

    def pending(self):
        """Whether some checkpoint value has no Python object yet."""
        return any(i not in self.matched for i in self._valued)

    def _bind(self, node_id, obj):
        if _is_variable(obj) and obj.graph is not self.graph:
            return False  # a variable of another graph cannot take this graph's restore op
        self.matched[node_id] = obj
        self._node_of.setdefault(id(obj), node_id)
        return True

    def node_of(self, obj):
        node_id = self._node_of.get(id(obj))
        if node_id is None or self.matched.get(node_id) is not obj:
            return None
        return node_id

    def extend(self, start=(0,)):
        """Matches checkpoint nodes below the already matched ``start`` nodes; creates restore ops for new variables."""
        new = []
        with self.graph.as_default():
            queue = collections.deque(start)
            seen = set()
            while queue:
                node_id = queue.popleft()
                if node_id in seen:
                    continue
                seen.add(node_id)
                kids = None
                for ref in self.proto.nodes[node_id].children:
                    if ref.node_id in self.matched:
                        queue.append(ref.node_id)
                        continue
                    if kids is None:
                        kids = dict(_children(self.matched[node_id]))
                    child = kids.get(ref.local_name)
                    if child is not None and self._bind(ref.node_id, child):
                        new.append(ref.node_id)
                        queue.append(ref.node_id)
            # Slots last: their original variables may have been matched after their optimizer.
            for opt_id, refs in self._slot_refs.items():
                opt = self.matched.get(opt_id)
                if opt is None or not _is_optimizer(opt):
                    continue
                for (var_id, slot_name), slot_id in refs.items():
                    if slot_id in self.matched or var_id not in self.matched:
                        continue
                    original = self.matched[var_id]
                    own_name = _slot_names(opt).get(slot_name)
                    slot = opt.get_slot(original, own_name) if _is_variable(original) and own_name else None
                    if slot is not None and self._bind(slot_id, slot):
                        new.append(slot_id)
            self._add_restore_ops(new)
        return new

    def slot_created(self, optimizer, variable, slot_name, slot):
        """An optimizer made ``slot`` for ``variable``: restore it if the checkpoint has a value for it."""
        opt_id = self.node_of(optimizer)
        var_id = self.node_of(variable)
        if opt_id is None or var_id is None:
            return
        named = {own: key for key, own in _slot_names(optimizer).items()}
        slot_id = self._slot_refs.get(opt_id, {}).get((var_id, named.get(slot_name, slot_name)))
        if slot_id is None or slot_id in self.matched:
            return
        if self._bind(slot_id, slot):
            with self.graph.as_default():
                self._add_restore_ops([slot_id])

    def _add_restore_ops(self, node_ids):
        pairs = []
        for node_id in sorted(node_ids):
            obj = self.matched[node_id]
            if not _is_variable(obj):
                continue
            for attr in self.proto.nodes[node_id].attributes:
                if attr.name == _VARIABLE_VALUE:
                    pairs.append((obj, attr.checkpoint_key))
        if pairs:
            try:
                with ops.init_scope():
                    self.restore_ops.append(_restore_ops(self.save_path, pairs, self.reader, self.save_path))
            except Exception:
                for node_id in node_ids:  # unmatched again: the next look raises the same error
                    obj = self.matched.pop(node_id)
                    if self._node_of.get(id(obj)) == node_id:
                        del self._node_of[id(obj)]
                raise
        if not self.pending():
            _PENDING.discard(self)


class _NameBasedRestoration:
    """A checkpoint without an object graph (written by ``tf.train.Saver``): variables matched by name.

    As in TensorFlow's graph mode, variables are looked up by name whenever
    a status method runs, so ones created after ``restore()`` are included.
    """

    def __init__(self, root, save_path, reader, graph):
        self.root = root
        self.save_path = save_path
        self.reader = reader
        self.graph = graph
        self.keys = set(reader.get_variable_to_shape_map())
        self.matched = {0: root}
        self.used = set()
        self.restore_ops = []

    def matched_ids(self):
        return {id(o) for o in self.matched.values()}

    def extend(self, start=(0,)):
        with self.graph.as_default():
            have = self.matched_ids()
            pairs = []
            for v in _ObjectGraph(self.root).variables():
                if id(v) in have:
                    continue
                info = v._get_save_slice_info()
                if info is not None and info.full_name in self.keys:
                    pairs.append((v, info.full_name, info.spec))  # a part of a partitioned variable
                elif v.op.name in self.keys:
                    pairs.append((v, v.op.name))
            for entry in pairs:
                self.matched[len(self.matched)] = entry[0]
                self.used.add(entry[1])
            if pairs:
                with ops.init_scope():
                    self.restore_ops.append(_restore_ops(self.save_path, pairs, self.reader, self.save_path))
        return pairs


def _dependency_added(obj):
    """``obj`` gained a dependency: pending restorations that matched ``obj`` look below it again."""
    for restoration in list(_PENDING):
        node_id = restoration.node_of(obj)
        if node_id is not None:
            restoration.extend([node_id])


def _slot_created(optimizer, variable, slot_name, slot):
    """Called by optimizers after creating a slot variable."""
    for restoration in list(_PENDING):
        restoration.slot_created(optimizer, variable, slot_name, slot)


class _CheckpointStatus:
    """What ``Checkpoint.restore`` matched; runs the restore ops and checks the match.

    Every method first matches objects created since ``restore()`` (the list
    of restore ops grows as the Python program adds dependencies).
    """

    def __init__(self, checkpoint, restoration):
        self._checkpoint = checkpoint
        self._restoration = restoration
        self._save_path = restoration.save_path
        self._graph = restoration.graph

    @property
    def _matched(self):
        return self._restoration.matched

    def _refresh(self):
        self._restoration.extend()

    def _current(self):
        with self._graph.as_default():
            return _ObjectGraph(self._checkpoint._root)

    def assert_consumed(self):
        """Raises AssertionError unless every checkpoint value and every current variable were matched."""
        self._refresh()
        proto = self._restoration.proto
        for node_id, node in enumerate(proto.nodes):
            if node.attributes and node_id not in self._matched:
                raise AssertionError(
                    f"Unresolved object in checkpoint {self._save_path}: "
                    f"{node.attributes[0].checkpoint_key} ({node.attributes[0].full_name})"
                )
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """Raises AssertionError if a variable reachable from the root now got no value from the checkpoint."""
        self._refresh()
        matched = self._restoration.matched_ids()
        current = self._current()
        for v in current.variables():
            if id(v) not in matched:
                raise AssertionError(
                    f"Object not assigned a value from checkpoint {self._save_path}: {v.name} "
                    f"(would be {current.key(v)})"
                )
        return self

    def assert_nontrivial_match(self):
        """Raises AssertionError if nothing but the root was matched."""
        self._refresh()
        if len(self._matched) <= 1:
            raise AssertionError(f"Nothing except the root object matched a checkpointed value in {self._save_path}")
        return self

    def expect_partial(self):
        """Marks a partial restore as intended (ferroflow does not warn about it)."""
        return self

    def run_restore_ops(self, session=None):
        """Assigns the checkpoint's values to every variable matched so far."""
        self._refresh()
        if self._restoration.restore_ops:
            _session_for(session).run(self._restoration.restore_ops)

    def initialize_or_restore(self, session=None):
        """Restores the matched variables and runs the initializers of the other reachable ones."""
        session = _session_for(session)
        self._refresh()
        matched = self._restoration.matched_ids()
        with self._graph.as_default():
            others = [v for v in self._current().variables() if id(v) not in matched]
        if others:
            session.run([v.initializer for v in others])
        self.run_restore_ops(session)


class _InitializationOnlyStatus(_CheckpointStatus):
    """``restore(None)``: nothing to restore; ``initialize_or_restore`` initializes everything."""

    def __init__(self, checkpoint, graph):
        self._checkpoint = checkpoint
        self._restoration = None
        self._save_path = None
        self._graph = graph

    @property
    def _matched(self):
        return {}

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_existing_objects_matched(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_nontrivial_match(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def run_restore_ops(self, session=None):
        """Nothing to restore."""

    def initialize_or_restore(self, session=None):
        """Runs the initializers of every variable reachable from the root."""
        session = _session_for(session)
        with self._graph.as_default():
            variables = self._current().variables()
        if variables:
            session.run([v.initializer for v in variables])


class _NameBasedStatus(_CheckpointStatus):
    """A checkpoint without an object graph (written by ``tf.train.Saver``): variables matched by name."""

    def assert_existing_objects_matched(self):
        """Every reachable variable except the save counter (Saver checkpoints have none) got a value."""
        self._refresh()
        matched = self._restoration.matched_ids()
        counter = self._checkpoint._save_counter
        for v in self._current().variables():
            if id(v) not in matched and v is not counter:
                raise AssertionError(f"Object not assigned a value from checkpoint {self._save_path}: {v.name}")
        return self

    def assert_consumed(self):
        self._refresh()
        unused = self._restoration.keys - self._restoration.used
        if unused:
            raise AssertionError(
                f"Name-based checkpoint {self._save_path} has values no variable took: {sorted(unused)}"
            )
        return self.assert_existing_objects_matched()


def _restore_ops(prefix, pairs, reader, save_path):
    """One RestoreV2 for ``[(variable, key[, slice_spec]), ...]`` and an Assign per variable.

    Checks dtypes and shapes first (a slice spec's full shape against the
    checkpoint's, the variable against the slice).
    """
    from ferroflow.ops import control_flow_ops, state_ops
    from ferroflow.ops._op_util import make_op

    if not pairs:
        return None
    shapes = reader.get_variable_to_shape_map()
    dtype_map = reader.get_variable_to_dtype_map()
    specs = []
    for entry in pairs:
        var, key = entry[0], entry[1]
        spec = entry[2] if len(entry) > 2 else ""
        specs.append(spec)
        stored_dtype = dtype_map[key]
        if stored_dtype != var.dtype.base_dtype:
            raise errors.InvalidArgumentError(
                None, None,
                f"Restoring {var.op.name} from {key} in {save_path}: the variable is {var.dtype.base_dtype.name} "
                f"but the checkpoint holds {stored_dtype.name}",
            )
        stored = list(shapes[key])
        if spec:
            info = var._get_save_slice_info()
            if list(info.full_shape) != stored:
                raise errors.InvalidArgumentError(
                    None, None,
                    f"Restoring {var.op.name} (a slice of {key}, full shape {list(info.full_shape)}) in {save_path}: "
                    f"the checkpoint holds {key} with shape {stored}",
                )
            stored = list(info.var_shape)
        if not var.get_shape().is_compatible_with(as_shape(stored)):
            raise errors.InvalidArgumentError(
                None, None,
                f"Restoring {var.op.name} from {key} in {save_path}: shape {var.get_shape()} of the variable does "
                f"not match shape {stored} in the checkpoint",
            )
    with ops.name_scope("restore"):
        op = make_op(
            "RestoreV2",
            [ops.convert_to_tensor(prefix, dtype=dtypes.string),
             ops.convert_to_tensor([e[1] for e in pairs], dtype=dtypes.string),
             ops.convert_to_tensor(specs, dtype=dtypes.string)],
            {"dtypes": ("list_type", [e[0].dtype.base_dtype.as_datatype_enum for e in pairs])},
            name="RestoreV2",
        )
        assigns = [state_ops.assign(e[0], t) for e, t in zip(pairs, op.outputs)]
        return control_flow_ops.group(*assigns)


class Checkpoint:
    """Groups trackable objects (Variables, optimizers, models) for saving and restoring.

    ``tf.train.Checkpoint(model=model, optimizer=opt)``; then
    ``save(prefix, session)`` writes ``prefix-<n>`` and updates the
    ``checkpoint`` state file, ``restore(path)`` returns a status whose
    ``run_restore_ops`` / ``initialize_or_restore`` load the values.
    """

    def __init__(self, **kwargs):
        self._dependencies = {}
        for name, value in sorted(kwargs.items(), key=lambda kv: kv[0]):
            if not _may_track(value):
                raise ValueError(
                    f"`Checkpoint` was expecting a trackable object (an object derived from `Trackable`), got "
                    f"{value!r} for {name!r}. If you believe this object should be trackable (i.e. it is part of "
                    "the TensorFlow Python API and manages state), please open an issue."
                )
            self._dependencies[name] = value
        self._root = self
        self._save_counter = None
        self._save_cache = {}
        self._counter_assign = {}

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name.startswith("_"):
            return
        # Containers and plain objects may be filled after assignment; the walk keeps the trackable ones.
        if _may_track(value):
            self._dependencies[name] = value
            if _PENDING:
                _dependency_added(self)
        else:
            self._dependencies.pop(name, None)

    def __getattr__(self, name):
        deps = self.__dict__.get("_dependencies", {})
        if name in deps:
            return deps[name]
        raise AttributeError(f"'Checkpoint' object has no attribute {name!r}")

    # -- the save counter ----------------------------------------------------------
    def _maybe_create_save_counter(self):
        from ferroflow.ops import init_ops, variable_scope, variables

        graph = ops.get_default_graph()
        if self._save_counter is None or self._save_counter.graph is not graph:
            with ops.init_scope(), ops.name_scope(None), ops.device("/cpu:0"):
                with variable_scope.variable_scope(variable_scope.VariableScope(False)):
                    self._save_counter = variables.Variable(
                        init_ops.zeros_initializer()([], dtype=dtypes.int64), name="save_counter", trainable=False,
                        dtype=dtypes.int64, use_resource=True,
                    )  # in GLOBAL_VARIABLES, as TF's (global_variables_initializer resets it; Saver() saves it)
            self._dependencies["save_counter"] = self._save_counter

    @property
    def save_counter(self):
        """An int64 variable counting ``save`` calls (created on first use); numbers the checkpoints."""
        self._maybe_create_save_counter()
        return self._save_counter

    # -- writing ------------------------------------------------------------------
    def _save_ops(self, graph_obj):
        from ferroflow.ops import array_ops
        from ferroflow.ops._op_util import make_op

        variables = graph_obj.variables()
        keys = tuple(graph_obj.key(v) for v in variables)
        graph = ops.get_default_graph()
        cache_key = (id(graph), keys, tuple(id(v) for v in variables))
        cached = self._save_cache.get(cache_key)
        if cached is None:
            with ops.init_scope(), ops.name_scope("save"):
                prefix = array_ops.placeholder(dtypes.string, [], name="file_prefix")
                object_graph = array_ops.placeholder(dtypes.string, [], name="object_graph")
                names = list(keys) + [OBJECT_GRAPH_PROTO_KEY]
                tensors = [v.value() for v in variables] + [object_graph]
                with ops.device("/cpu:0"):
                    op = make_op(
                        "SaveV2",
                        [prefix, ops.convert_to_tensor(names, dtype=dtypes.string),
                         ops.convert_to_tensor([""] * len(names), dtype=dtypes.string)] + tensors,
                        name="SaveV2",
                    )
            cached = (prefix, object_graph, op)
            self._save_cache[cache_key] = cached
        return cached

    def write(self, file_prefix, session=None):
        """Writes a checkpoint at ``file_prefix`` (no numbering, no state file); returns the prefix."""
        session = _session_for(session)
        file_prefix = os.fspath(file_prefix)
        with session.graph.as_default():
            graph_obj = _ObjectGraph(self)
            prefix_ph, graph_ph, save_op = self._save_ops(graph_obj)
            serialized = graph_obj.to_proto().SerializeToString()
        directory = os.path.dirname(file_prefix)
        if directory:
            os.makedirs(directory, exist_ok=True)
        session.run(save_op, {prefix_ph: file_prefix, graph_ph: serialized})
        return file_prefix

    def save(self, file_prefix, session=None):
        """Increments ``save_counter``, writes ``<file_prefix>-<counter>`` and records it in the state file.

        Returns the path written.
        """
        session = _session_for(session)
        file_prefix = os.fspath(file_prefix)
        number = self._increment_save_counter(session)
        path = self.write(f"{file_prefix}-{number}", session=session)
        _write_state_file(os.path.dirname(path), path)
        return path

    def _increment_save_counter(self, session=None):
        """Adds one to ``save_counter`` (initializing a new one to 0 first); returns the new value.

        ``CheckpointManager`` calls this to number the checkpoints it writes.
        """
        session = _session_for(session)
        with session.graph.as_default():
            counter = self.save_counter
            cached = self._counter_assign.get(id(counter))
            if cached is None:
                from ferroflow.ops import state_ops

                with ops.init_scope():
                    cached = (state_ops.is_variable_initialized(counter), counter.assign_add(1))
                self._counter_assign[id(counter)] = cached
        is_initialized, assign = cached
        # A new counter starts at 0 (one restored from a checkpoint keeps its value).
        if not session.run(is_initialized):
            session.run(counter.initializer)
        return int(session.run(assign))

    # -- reading ------------------------------------------------------------------
    def restore(self, save_path):
        """Matches the checkpoint at ``save_path`` to the current objects; returns a status.

        Nothing is assigned until ``status.run_restore_ops()`` or
        ``status.initialize_or_restore()`` runs in a session. ``save_path=None``
        gives a status whose ``initialize_or_restore`` only initializes.
        """
        self._maybe_create_save_counter()
        return self.read(save_path)

    def read(self, save_path):
        """Like ``restore`` but does not create the save counter first."""
        from ferroflow.core.protobuf import trackable_object_graph_pb2
        from ferroflow.training.py_checkpoint_reader import NewCheckpointReader

        graph = ops.get_default_graph()
        if save_path is None:
            return _InitializationOnlyStatus(self, graph)
        save_path = os.fspath(save_path)
        reader = NewCheckpointReader(save_path)
        if not reader.has_tensor(OBJECT_GRAPH_PROTO_KEY):
            return self._name_based(save_path, reader, graph)
        proto = trackable_object_graph_pb2.TrackableObjectGraph()
        proto.ParseFromString(reader.get_tensor(OBJECT_GRAPH_PROTO_KEY))
        restoration = _Restoration(self, save_path, reader, proto, graph)
        restoration.extend()
        if restoration.pending():
            _PENDING.add(restoration)
        return _CheckpointStatus(self, restoration)

    def _name_based(self, save_path, reader, graph):
        restoration = _NameBasedRestoration(self, save_path, reader, graph)
        restoration.extend()
        return _NameBasedStatus(self, restoration)


def _write_state_file(directory, path):
    """Records ``path`` (relative to ``directory``) as the newest checkpoint, replacing the file atomically."""
    from google.protobuf import text_format

    from ferroflow.core.protobuf import checkpoint_state_pb2

    rel = os.path.relpath(path, directory or ".")
    state = checkpoint_state_pb2.CheckpointState(model_checkpoint_path=rel, all_model_checkpoint_paths=[rel])
    target = os.path.join(directory, "checkpoint")
    tmp = f"{target}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text_format.MessageToString(state))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
