"""``tf.train.Saver``: saves and restores variables as TensorFlow V2 checkpoints.

The Saver adds TensorFlow's save/restore subgraph to the graph (under the
name scope ``save``, ``save_1``, ...):

* ``save/filename/input`` (Const holding ``filename``), ``save/filename``
  and ``save/Const`` (PlaceholderWithDefault): the checkpoint prefix, fed
  at run time;
* ``save/SaveV2`` (with its ``tensor_names`` and ``shape_and_slices``
  constants) and ``save/control_dependency``, the identity of the prefix
  that runs after the save; a sharded Saver instead writes one
  ``save/ShardedFilename``-named temporary bundle per device and merges them
  with ``save/MergeV2Checkpoints`` (``save/Identity`` is then the save
  tensor);
* ``save/RestoreV2`` and one ``save/Assign`` per variable, grouped by
  ``save/restore_all``.

The file formats are TensorFlow's, so checkpoints move freely between
ferroflow and TensorFlow. Bookkeeping (the ``checkpoint`` state file,
``max_to_keep``, ``keep_checkpoint_every_n_hours``) follows TensorFlow too.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from ferroflow.framework import constant_op, dtypes, errors, ops
from ferroflow.framework.meta_graph import export_meta_graph, import_scoped_meta_graph
from ferroflow.framework.saveable_object import SaveableObject, SaveSpec
from ferroflow.ops import array_ops, control_flow_ops, state_ops
from ferroflow.ops._op_util import make, shape_attr, type_attr
from ferroflow.protos import SaverDef
from ferroflow.training import checkpoint_management

__all__ = ["Saver", "export_meta_graph", "import_meta_graph"]

_logger = logging.getLogger("ferroflow")

_VARIABLE_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "VarHandleOp", "ReadVariableOp")

# The key under which an object-based (tf.train.Checkpoint) checkpoint keeps its object graph.
OBJECT_GRAPH_PROTO_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


class ReferenceVariableSaveable(SaveableObject):
    """A TF1 reference variable (or a part of a partitioned one)."""

    def __init__(self, var, slice_spec, name):
        ref = state_ops._ref(var) if state_ops._is_variable(var) else var
        super().__init__(var, [SaveSpec(ref, slice_spec, name, dtype=ref.dtype)], name)
        self._var = var
        self._ref = ref

    def restore(self, restored_tensors, restored_shapes):
        tensor = restored_tensors[0]
        if restored_shapes is not None:
            tensor = array_ops.reshape(tensor, restored_shapes[0])
        validate = restored_shapes is None and self._ref.shape.is_fully_defined()
        return state_ops.assign(self._ref, tensor, validate_shape=validate)


class _TensorSaveable(SaveableObject):
    """A plain tensor: saved, but there is nothing to restore it into."""

    def __init__(self, tensor, name):
        super().__init__(tensor, [SaveSpec(tensor, "", name)], name)

    def restore(self, restored_tensors, restored_shapes):
        return control_flow_ops.no_op()


def _is_partitioned(x):
    return hasattr(x, "_get_variable_list") and not isinstance(x, ops.Tensor)


def _slice_info(v):
    get = getattr(v, "_get_save_slice_info", None)
    return get() if get is not None else getattr(v, "_save_slice_info", None)


def _var_key(var):
    """The checkpoint key TensorFlow gives a variable in a var_list list."""
    info = _slice_info(var)
    if info is not None:
        return info.full_name
    if isinstance(var, ops.Tensor):
        return var.op.name
    return var.op.name


def op_list_to_dict(op_list):
    """``{checkpoint key: variable(s)}`` for a list of variables (partitioned ones become lists of parts)."""
    if not isinstance(op_list, (list, tuple, set)):
        raise TypeError(f"Variables to save should be passed in a dict or a list: {op_list!r}")
    items = []
    for var in op_list:
        if _is_partitioned(var):
            items.append((var.name, var))
        else:
            items.append((_var_key(var), var))
    names_to_saveables = {}
    for name, var in sorted(items, key=lambda x: x[0]):
        if _is_partitioned(var):
            if name in names_to_saveables:
                raise ValueError(f"At least two variables have the same name: {name}")
            names_to_saveables[name] = list(var._get_variable_list())
        elif _slice_info(var) is not None:
            names_to_saveables.setdefault(name, [])
            if not isinstance(names_to_saveables[name], list):
                raise ValueError(f"Mixing slices and non-slices with the same name: {name}")
            names_to_saveables[name].append(var)
        else:
            if name in names_to_saveables:
                raise ValueError(f"At least two variables have the same name: {name}")
            names_to_saveables[name] = var
    return names_to_saveables


def _saveables_for(name, value):
    """The SaveableObjects for one ``name: value`` entry of a var_list dict."""
    if isinstance(value, SaveableObject) or (hasattr(value, "specs") and hasattr(value, "restore")):
        return [value]
    if _is_partitioned(value):
        value = list(value._get_variable_list())
    if isinstance(value, (list, tuple)):
        out = []
        for part in value:
            info = _slice_info(part)
            if info is None:
                raise ValueError(f"Slices must all be slices: {name} has part {part!r} without save_slice_info")
            if info.full_name != name:
                raise ValueError(
                    f"Slice {part.name} of variable {name} belongs to {info.full_name}: slices of one checkpoint "
                    "key must all come from the same variable"
                )
            out.append(ReferenceVariableSaveable(part, info.spec, name))
        return out
    if state_ops._is_variable(value):
        info = _slice_info(value)
        return [ReferenceVariableSaveable(value, info.spec if info is not None else "", name)]
    if isinstance(value, ops.Tensor):
        if value.op.type in _VARIABLE_OPS:
            return [ReferenceVariableSaveable(value, "", name)]
        return [_TensorSaveable(value, name)]
    raise TypeError(f"Can not convert a {type(value).__name__} into a Variable to save: {name} -> {value!r}")


def validate_and_slice_inputs(names_to_saveables):
    """Sorted SaveableObjects for ``{key: variable}``, checking keys are unique."""
    if not isinstance(names_to_saveables, dict):
        names_to_saveables = op_list_to_dict(names_to_saveables)
    saveables = []
    seen_ops = set()
    for name, value in sorted(names_to_saveables.items(), key=lambda x: x[0]):
        if not isinstance(name, str):
            raise TypeError(f"Checkpoint keys must be strings, got {name!r}")
        for saveable in _saveables_for(name, value):
            key = id(saveable.op)
            if key in seen_ops:
                raise ValueError(f"The same saveable will be restored with two names: {name}")
            seen_ops.add(key)
            saveables.append(saveable)
    return saveables


def _string_const(value, name):
    return constant_op.constant(value, dtype=dtypes.string, name=name)


class BaseSaverBuilder:
    """Builds the save and restore ops of a Saver (TensorFlow's ``BulkSaverBuilder``)."""

    SaveSpec = SaveSpec
    SaveableObject = SaveableObject

    def __init__(self, write_version=SaverDef.V2):
        self._write_version = write_version

    # -- save --------------------------------------------------------------
    def save_op(self, filename_tensor, saveables):
        """A SaveV2 op writing every saveable's specs to ``filename_tensor``."""
        names, slices, tensors = [], [], []
        for saveable in saveables:
            for spec in saveable.specs:
                names.append(spec.name)
                slices.append(spec.slice_spec)
                tensors.append(spec.tensor)
        if self._write_version != SaverDef.V2:
            raise ValueError(
                f"Unexpected write_version {self._write_version}: ferroflow writes V2 checkpoints only "
                "(SaverDef.V2)"
            )
        with ops.name_scope(None, "SaveV2") as scope:
            names_t = _string_const(names, "tensor_names")
            slices_t = _string_const(slices, "shape_and_slices")
            attrs = {"dtypes": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in tensors])}
            return make_op("SaveV2", [filename_tensor, names_t, slices_t] + tensors, attrs, scope)

    def bulk_restore(self, filename_tensor, saveables, preferred_shard, restore_sequentially):
        """One RestoreV2 op for every spec of ``saveables``; returns its outputs."""
        del preferred_shard, restore_sequentially
        names, slices, dts = [], [], []
        for saveable in saveables:
            for spec in saveable.specs:
                names.append(spec.name)
                slices.append(spec.slice_spec)
                dts.append(spec.dtype)
        with ops.name_scope(None, "RestoreV2") as scope:
            names_t = _string_const(names, "tensor_names")
            slices_t = _string_const(slices, "shape_and_slices")
            attrs = {"dtypes": ("list_type", [d.as_datatype_enum for d in dts])}
            op = make_op("RestoreV2", [filename_tensor, names_t, slices_t], attrs, scope)
        return op.outputs

    def _AddSaveOps(self, filename_tensor, saveables):  # noqa: N802 - TensorFlow's name
        save = self.save_op(filename_tensor, saveables)
        return control_flow_ops.with_dependencies([save], filename_tensor, name="control_dependency")

    def _AddShardedSaveOpsForV2(self, checkpoint_prefix, per_device):  # noqa: N802 - TensorFlow's name
        is_s3 = make("StaticRegexFullMatch", [checkpoint_prefix], {"pattern": "^s3://.*"})
        suffix = array_ops.where(is_s3, _string_const(".part", "Const"), _string_const("_temp/part", "Const"))
        tmp_prefix = make("StringJoin", [checkpoint_prefix, suffix], {"separator": ""})
        num_shards = len(per_device)
        num_shards_t = constant_op.constant(num_shards, dtype=dtypes.int32, name="num_shards")
        sharded_saves, sharded_prefixes = [], []
        last_device = None
        for shard, (device, saveables) in enumerate(per_device):
            last_device = device
            with ops.device(device or None):
                with ops.name_scope(None, "ShardedFilename") as scope:
                    shard_t = constant_op.constant(shard, dtype=dtypes.int32, name="shard")
                    sharded_filename = make("ShardedFilename", [tmp_prefix, shard_t, num_shards_t], {}, scope)
                sharded_prefixes.append(sharded_filename)
                sharded_saves.append(self._AddSaveOps(sharded_filename, saveables))
        with ops.control_dependencies([x.op for x in sharded_saves]):
            with ops.device(last_device or None):
                with ops.name_scope(None, "MergeV2Checkpoints") as scope:
                    prefixes = array_ops.stack(sharded_prefixes, name="checkpoint_prefixes")
                    merge = make_op(
                        "MergeV2Checkpoints", [prefixes, checkpoint_prefix],
                        {"delete_old_dirs": True, "allow_missing_files": False}, scope,
                    )
                with ops.control_dependencies([merge]):
                    return array_ops.identity(checkpoint_prefix)

    # -- restore -----------------------------------------------------------
    def _AddRestoreOps(self, filename_tensor, saveables, restore_sequentially, reshape,  # noqa: N802
                       preferred_shard=-1, name="restore_all"):
        all_tensors = self.bulk_restore(filename_tensor, saveables, preferred_shard, restore_sequentially)
        assign_ops = []
        idx = 0
        for saveable in saveables:
            shapes = None
            if reshape:
                shapes = []
                for spec in saveable.specs:
                    v = spec.tensor
                    shape = v.shape
                    if not shape.is_fully_defined():
                        shape = array_ops.shape(v)
                    shapes.append(shape)
            n = len(saveable.specs)
            assign_ops.append(saveable.restore(all_tensors[idx:idx + n], shapes))
            idx += n
        return control_flow_ops.group(*assign_ops, name=name)

    def _AddShardedRestoreOps(self, filename_tensor, per_device, restore_sequentially, reshape):  # noqa: N802
        sharded_restores = []
        for shard, (device, saveables) in enumerate(per_device):
            with ops.device(device or None):
                sharded_restores.append(
                    self._AddRestoreOps(filename_tensor, saveables, restore_sequentially, reshape,
                                        preferred_shard=shard, name="restore_shard")
                )
        return control_flow_ops.group(*sharded_restores, name="restore_all")

    @staticmethod
    def _GroupByDevices(saveables):  # noqa: N802 - TensorFlow's name
        per_device = {}
        for saveable in saveables:
            per_device.setdefault(saveable.device or "", []).append(saveable)
        return sorted(per_device.items(), key=lambda x: x[0])

    # -- everything --------------------------------------------------------
    def build(self, names_to_saveables, reshape=False, sharded=False, max_to_keep=5,
              keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, filename="model"):
        """Adds the save/restore ops for ``names_to_saveables``; returns their ``SaverDef``."""
        return self._build_internal(names_to_saveables, reshape=reshape, sharded=sharded, max_to_keep=max_to_keep,
                                    keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours, name=name,
                                    restore_sequentially=restore_sequentially, filename=filename)

    def _build_internal(self, names_to_saveables, reshape=False, sharded=False, max_to_keep=5,
                        keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                        filename="model", build_save=True, build_restore=True):
        saveables = validate_and_slice_inputs(names_to_saveables)
        if max_to_keep is None:
            max_to_keep = 0
        graph = ops.get_default_graph()
        with ops.name_scope(name, "save") as name:
            with ops.name_scope(None, "filename") as fscope:
                default = _string_const(filename or "model", "input")
                filename_tensor = make(
                    "PlaceholderWithDefault", [default],
                    {"dtype": type_attr(dtypes.string), "shape": shape_attr([])}, fscope,
                )
            # "Const" is the name TensorFlow has always given the filename tensor.
            filename_tensor = array_ops.placeholder_with_default(filename_tensor, shape=[], name="Const")
            if sharded:
                per_device = self._GroupByDevices(saveables)
                save_tensor = self._AddShardedSaveOpsForV2(filename_tensor, per_device) if build_save else None
                restore_op = (self._AddShardedRestoreOps(filename_tensor, per_device, restore_sequentially, reshape)
                              if build_restore else None)
            else:
                save_tensor = self._AddSaveOps(filename_tensor, saveables) if build_save else None
                restore_op = (self._AddRestoreOps(filename_tensor, saveables, restore_sequentially, reshape)
                              if build_restore else None)
        del graph
        return SaverDef(
            filename_tensor_name=filename_tensor.name,
            save_tensor_name=save_tensor.name if save_tensor is not None else "",
            restore_op_name=restore_op.name if restore_op is not None else "",
            max_to_keep=max_to_keep,
            sharded=sharded,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            version=self._write_version,
        )


BulkSaverBuilder = BaseSaverBuilder


def make_op(op_type, inputs, attrs, name):
    """Adds one op (name as given: a trailing ``/`` means exactly that name)."""
    from ferroflow.ops._op_util import make_op as _make_op

    return _make_op(op_type, inputs, attrs, name)


class Saver:
    """Saves and restores variables (TensorFlow 1's ``tf.train.Saver``).

    ``var_list`` is None (all saveable variables: the GLOBAL_VARIABLES and
    SAVEABLE_OBJECTS collections), a list (keys are the variables' op
    names; partitioned variables are saved under their full name as
    slices), or a dict from checkpoint key to variable, list of slices or
    PartitionedVariable. ``save`` writes ``save_path[-global_step]`` and
    updates the ``checkpoint`` state file; ``restore`` assigns the saved
    values back.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=SaverDef.V2,
                 pad_step_number=False, save_relative_paths=False, filename=None):
        if defer_build and var_list:
            raise ValueError(
                "If `var_list` is provided then build cannot be deferred. Either set defer_build=False or "
                "var_list=None."
            )
        if write_version not in (SaverDef.V1, SaverDef.V2):
            raise ValueError(f"write_version must be SaverDef.V1 or SaverDef.V2, got {write_version!r}")
        if write_version == SaverDef.V1:
            raise ValueError(
                "ferroflow writes V2 checkpoints only: Saver(write_version=SaverDef.V1) is not supported"
            )
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._builder = builder
        self._is_built = False
        self._allow_empty = allow_empty
        self._is_empty = None
        self._write_version = write_version
        self._pad_step_number = pad_step_number
        self._filename = filename
        self._last_checkpoints = []
        self._checkpoints_to_be_deleted = []
        self._save_relative_paths = save_relative_paths
        self._object_restore_saver = None
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        if not defer_build:
            self.build()
        if self.saver_def:
            self._check_saver_def()
            self._write_version = self.saver_def.version

    # -- building ----------------------------------------------------------
    def build(self):
        """Adds the save/restore ops to the default graph (once)."""
        self._build(self._filename, build_save=True, build_restore=True)

    def _build(self, checkpoint_path, build_save, build_restore):
        if self._is_built:
            return
        self._is_built = True
        if not self.saver_def:
            if self._builder is None:
                self._builder = BulkSaverBuilder(self._write_version)
            if self._var_list is None:
                self._var_list = list(ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)) + list(
                    ops.get_collection(ops.GraphKeys.SAVEABLE_OBJECTS)
                )
            if not self._var_list:
                if self._allow_empty:
                    self._is_empty = True
                    return
                raise ValueError("No variables to save")
            self._is_empty = False
            var_list = self._var_list
            if not isinstance(var_list, dict):
                var_list = op_list_to_dict(list(var_list))
            self.saver_def = self._builder._build_internal(
                var_list,
                reshape=self._reshape,
                sharded=self._sharded,
                max_to_keep=self._max_to_keep,
                keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
                name=self._name,
                restore_sequentially=self._restore_sequentially,
                filename=checkpoint_path,
                build_save=build_save,
                build_restore=build_restore,
            )
        elif self.saver_def and self._name:
            # A Saver rebuilt from a SaverDef under a new scope (import_meta_graph(import_scope=...)).
            self.saver_def.filename_tensor_name = ops.prepend_name_scope(self.saver_def.filename_tensor_name, self._name)
            self.saver_def.save_tensor_name = ops.prepend_name_scope(self.saver_def.save_tensor_name, self._name)
            self.saver_def.restore_op_name = ops.prepend_name_scope(self.saver_def.restore_op_name, self._name)
        self._check_saver_def()
        self._write_version = self.saver_def.version

    def _check_saver_def(self):
        if not isinstance(self.saver_def, SaverDef):
            raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {self.saver_def!r}")
        if not self.saver_def.save_tensor_name:
            raise ValueError(f"saver_def must specify the save_tensor_name: {self.saver_def}")
        if not self.saver_def.restore_op_name:
            raise ValueError(f"saver_def must specify the restore_op_name: {self.saver_def}")

    # -- protos ------------------------------------------------------------
    def as_saver_def(self):
        """The ``SaverDef`` naming this Saver's filename tensor, save tensor and restore op."""
        return self.saver_def

    def to_proto(self, export_scope=None):
        """The ``SaverDef`` with ``export_scope/`` stripped from its names (None if outside the scope)."""
        if export_scope is None:
            return self.saver_def
        scope = export_scope.rstrip("/") + "/"
        if not (self.saver_def.filename_tensor_name.startswith(scope)
                and self.saver_def.save_tensor_name.startswith(scope)
                and self.saver_def.restore_op_name.startswith(scope)):
            return None
        saver_def = SaverDef()
        saver_def.CopyFrom(self.saver_def)
        saver_def.filename_tensor_name = ops.strip_name_scope(saver_def.filename_tensor_name, export_scope)
        saver_def.save_tensor_name = ops.strip_name_scope(saver_def.save_tensor_name, export_scope)
        saver_def.restore_op_name = ops.strip_name_scope(saver_def.restore_op_name, export_scope)
        return saver_def

    @staticmethod
    def from_proto(saver_def, import_scope=None):
        """A Saver over the ops a ``SaverDef`` names (prefixed with ``import_scope/``)."""
        return Saver(saver_def=_copy_saver_def(saver_def), name=import_scope)

    # -- bookkeeping -------------------------------------------------------
    @property
    def last_checkpoints(self):
        """Prefixes of the checkpoints this Saver still keeps, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        """Replaces the kept-checkpoint list (deprecated in TF; they are never time-preserved)."""
        if not isinstance(last_checkpoints, list):
            raise TypeError(f"last_checkpoints must be a list: {last_checkpoints!r}")
        self._last_checkpoints = [(s, np.inf) for s in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        """Replaces the kept-checkpoint list with ``[(prefix, timestamp), ...]``."""
        if not isinstance(last_checkpoints_with_time, list):
            raise TypeError(f"last_checkpoints_with_time must be a list: {last_checkpoints_with_time!r}")
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Takes over ``checkpoint_paths`` (e.g. from a state file) with their files' mtimes; missing ones are dropped."""
        checkpoints_with_mtimes = []
        for checkpoint_path in checkpoint_paths:
            try:
                mtime = checkpoint_management.get_checkpoint_mtimes([checkpoint_path])
            except (errors.NotFoundError, OSError):
                continue
            if mtime:
                checkpoints_with_mtimes.append((checkpoint_path, mtime[0]))
        self.set_last_checkpoints_with_time(checkpoints_with_mtimes)

    def _record_last_checkpoint(self, latest_save_path):
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != latest_save_path]
        self._last_checkpoints.append((latest_save_path, time.time()))
        if len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix="meta"):
        if not self._checkpoints_to_be_deleted:
            return
        path, stamp = self._checkpoints_to_be_deleted.pop(0)
        # Keep one checkpoint every keep_checkpoint_every_n_hours.
        if stamp > self._next_checkpoint_time:
            self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
            return
        try:
            checkpoint_management.remove_checkpoint(path, self.saver_def.version, meta_graph_suffix)
        except OSError as e:
            _logger.warning("Ignoring: %s", e)

    # -- saving ------------------------------------------------------------
    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Saves the variables to ``save_path`` (``save_path-<global_step>`` if a step is given).

        Returns the checkpoint prefix written (None if the Saver has
        nothing to save). Updates the ``checkpoint`` state file unless
        ``write_state=False`` and writes ``<prefix>.meta`` unless
        ``write_meta_graph=False``; ``strip_default_attrs`` and
        ``save_debug_info`` (a ``<prefix>.debug`` file of creation stack
        traces) apply to that meta graph as in ``tf.train.export_meta_graph``.
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        if latest_filename is None:
            latest_filename = "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if isinstance(save_path, bytes):
            save_path = save_path.decode()
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                from ferroflow.training import training_util

                global_step = training_util.global_step(sess, global_step)
            if self._pad_step_number:
                checkpoint_file = f"{save_path}-{int(global_step):08d}"
            else:
                checkpoint_file = f"{save_path}-{int(global_step)}"
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(
                    f"'latest_filename' collides with 'save_path': '{latest_filename}' and '{save_path}'"
                )
        if not hasattr(sess, "run") or not hasattr(sess, "graph"):
            raise TypeError(f"'sess' must be a Session; {sess!r}")
        save_path_parent = os.path.dirname(save_path)
        model_checkpoint_path = None
        if not self._is_empty:
            # As in TF, the save op creates a missing last directory level itself; when it
            # cannot (a deeper level is missing too) the error becomes a ValueError.
            try:
                model_checkpoint_path = sess.run(
                    self.saver_def.save_tensor_name, {self.saver_def.filename_tensor_name: checkpoint_file}
                )
            except (errors.FailedPreconditionError, errors.NotFoundError) as exc:
                if save_path_parent and not os.path.isdir(save_path_parent):
                    raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.") from exc
                raise
            if isinstance(model_checkpoint_path, bytes):
                model_checkpoint_path = model_checkpoint_path.decode()
            model_checkpoint_path = str(model_checkpoint_path)
            if write_state:
                self._record_last_checkpoint(model_checkpoint_path)
                checkpoint_management.update_checkpoint_state_internal(
                    save_dir=save_path_parent,
                    model_checkpoint_path=model_checkpoint_path,
                    all_model_checkpoint_paths=self.last_checkpoints,
                    latest_filename=latest_filename,
                    save_relative_paths=self._save_relative_paths,
                )
                self._maybe_delete_old_checkpoints(meta_graph_suffix=meta_graph_suffix)
        if write_meta_graph:
            meta_file = checkpoint_management.meta_graph_filename(checkpoint_file, meta_graph_suffix=meta_graph_suffix)
            with sess.graph.as_default():
                self.export_meta_graph(meta_file, strip_default_attrs=strip_default_attrs,
                                       save_debug_info=save_debug_info)
        return model_checkpoint_path

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False, export_scope=None,
                          clear_devices=False, clear_extraneous_savers=False, strip_default_attrs=False,
                          save_debug_info=False):
        """Writes (and returns) the default graph's ``MetaGraphDef`` with this Saver's ``SaverDef``.

        The options are those of ``tf.train.export_meta_graph``.
        """
        return export_meta_graph(
            filename=filename,
            graph_def=ops.get_default_graph().as_graph_def(add_shapes=True),
            saver_def=self.saver_def,
            collection_list=collection_list,
            as_text=as_text,
            export_scope=export_scope,
            clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs,
            save_debug_info=save_debug_info,
        )

    # -- restoring ---------------------------------------------------------
    def restore(self, sess, save_path):
        """Assigns the values saved at ``save_path`` to the variables.

        Raises ValueError if there is no checkpoint at ``save_path``,
        NotFoundError naming the keys missing from it, and
        InvalidArgumentError naming each variable whose shape or dtype
        differs from the stored tensor (with both shapes).
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if isinstance(save_path, bytes):
            save_path = save_path.decode()
        if not checkpoint_management.checkpoint_exists_internal(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: " + save_path)
        _logger.info("Restoring parameters from %s", save_path)
        try:
            sess.run(self.saver_def.restore_op_name, {self.saver_def.filename_tensor_name: save_path})
        except errors.NotFoundError as err:
            names_to_keys = _object_graph_key_mapping(save_path)
            if names_to_keys is None:
                raise _wrap_restore_error(
                    err, "a Variable name or other graph key that is missing", self._diagnose(save_path)
                ) from err
            # An object-based checkpoint (tf.train.Checkpoint): map names through its object graph.
            self._object_restore_saver = _saver_from_object_based_checkpoint(save_path, self._var_list, names_to_keys)
            self._object_restore_saver.restore(sess=sess, save_path=save_path)
        except errors.InvalidArgumentError as err:
            raise _wrap_restore_error(
                err, "a mismatch between the current graph and the graph", self._diagnose(save_path)
            ) from err

    def _diagnose(self, save_path):
        """Lines naming each variable that does not fit the checkpoint (missing key, other shape or dtype)."""
        var_list = self._var_list
        if var_list is None:
            return []
        if not isinstance(var_list, dict):
            try:
                var_list = op_list_to_dict(list(var_list))
            except (TypeError, ValueError):
                return []
        try:
            from ferroflow import _native

            reader = _native.CheckpointReader(save_path)
            shapes = reader.variable_to_shape_map()
            dts = reader.variable_to_dtype_map()
        except Exception:  # noqa: BLE001 - diagnosis is best effort; the original error is raised anyway
            return []
        lines = []
        for key, value in sorted(var_list.items()):
            try:
                saveables = _saveables_for(key, value)
            except (TypeError, ValueError):
                continue
            for saveable in saveables:
                for spec in saveable.specs:
                    var_name = getattr(saveable.op, "name", key)
                    if spec.name not in shapes:
                        lines.append(f"Key {spec.name} (variable {var_name}) not found in checkpoint {save_path}")
                        continue
                    stored = list(shapes[spec.name])
                    if spec.slice_spec:
                        full = [int(d) for d in spec.slice_spec.split(" ")[:-1]]
                        mine, theirs = full, stored
                    else:
                        mine = spec.tensor.shape.as_list() if spec.tensor.shape.dims is not None else None
                        theirs = stored
                    if dts.get(spec.name) != spec.dtype.as_datatype_enum:
                        lines.append(
                            f"Variable {var_name} has dtype {spec.dtype.name} but checkpoint key {spec.name} holds "
                            f"{dtypes.as_dtype(dts[spec.name]).name} (shapes: variable {mine}, checkpoint {theirs})"
                        )
                    elif mine is not None and mine != theirs and not (
                        self._reshape and not spec.slice_spec and _num(mine) == _num(theirs)
                    ):
                        lines.append(
                            f"Variable {var_name} has shape {mine} but checkpoint key {spec.name} has shape {theirs}"
                        )
        return lines


def _num(shape):
    n = 1
    for d in shape:
        n *= d if d is not None else 1
    return n


def _copy_saver_def(saver_def):
    out = SaverDef()
    out.CopyFrom(saver_def)
    return out


def _wrap_restore_error(err, message, details):
    text = (
        "Restoring from checkpoint failed. This is most likely due to " + message + " from the checkpoint. "
        "Please ensure that you have not altered the graph expected based on the checkpoint."
    )
    if details:
        text += "\n" + "\n".join(details)
    text += "\nOriginal error:\n\n" + str(err)
    return type(err)(err.node_def, err.op, text)


def _object_graph_key_mapping(save_path):
    """``{variable name: checkpoint key}`` from an object-based checkpoint's object graph (None if it has none)."""
    from ferroflow import _native
    from ferroflow.core.protobuf import trackable_object_graph_pb2

    try:
        reader = _native.CheckpointReader(save_path)
    except errors.OpError:
        return None
    if not reader.has_tensor(OBJECT_GRAPH_PROTO_KEY):
        return None
    data = reader.get_tensor(OBJECT_GRAPH_PROTO_KEY)
    if isinstance(data, np.ndarray):
        data = data.item()
    graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(data)
    names_to_keys = {}
    for node in graph.nodes:
        for attr in node.attributes:
            names_to_keys[attr.full_name] = attr.checkpoint_key
    return names_to_keys


def _saver_from_object_based_checkpoint(save_path, var_list, names_to_keys):
    if var_list is None:
        var_list = list(ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES))
    if not isinstance(var_list, dict):
        var_list = op_list_to_dict(list(var_list))
    missing = sorted(name for name in var_list if name not in names_to_keys)
    if missing:
        raise errors.NotFoundError(
            None, None,
            f"Existing variables not in the object-based checkpoint {save_path}: {', '.join(missing)}",
        )
    mapped = {names_to_keys[name]: value for name, value in var_list.items()}
    return Saver(var_list=mapped, name="object_restore")


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Rebuilds a ``MetaGraphDef`` (or file) in the default graph; returns a Saver for it (None without variables).

    The nodes, the collections (variables come back as Variables) and the
    saver's ops are recreated, so ``saver.restore`` followed by running
    ops fetched by name (or from collections such as ``train_op``) continues
    where the exporting process stopped.
    """
    if kwargs:
        raise TypeError(f"import_meta_graph got unexpected keyword arguments: {sorted(kwargs)}")
    meta, variables = import_scoped_meta_graph(meta_graph_or_file, clear_devices=clear_devices,
                                               import_scope=import_scope)
    if meta.HasField("saver_def"):
        saver_def = type(meta.saver_def)()
        saver_def.CopyFrom(meta.saver_def)
        return Saver(saver_def=saver_def, name=import_scope)
    # As TensorFlow: a Saver only when there is something to save (local variables are not).
    if ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, scope=import_scope):
        return Saver()
    _logger.info("Saver not created because there are no variables in the graph to restore")
    return None
