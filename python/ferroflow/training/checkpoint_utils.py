"""Reading checkpoints by name: ``load_checkpoint``, ``list_variables``,
``load_variable`` and ``init_from_checkpoint``.

``ckpt_dir_or_file`` is either a checkpoint prefix (``.../model.ckpt-100``)
or a directory holding a ``checkpoint`` state file, in which case its newest
checkpoint is used.
"""

from __future__ import annotations

import os

from ferroflow.framework import dtypes, ops
from ferroflow.framework.tensor_shape import as_shape
from ferroflow.ops import state_ops
from ferroflow.ops._op_util import make_op
from ferroflow.training.py_checkpoint_reader import NewCheckpointReader

__all__ = ["init_from_checkpoint", "list_variables", "load_checkpoint", "load_variable"]


def _latest_checkpoint(directory):
    """The newest checkpoint prefix recorded in ``directory/checkpoint`` (None if there is none)."""
    try:
        from ferroflow.training.checkpoint_management import latest_checkpoint
    except ImportError:  # the management module is not there yet: read the state file ourselves
        latest_checkpoint = _read_latest_from_state_file
    return latest_checkpoint(directory)


def _read_latest_from_state_file(directory):
    from google.protobuf import text_format

    from ferroflow.core.protobuf import checkpoint_state_pb2

    path = os.path.join(directory, "checkpoint")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    state = checkpoint_state_pb2.CheckpointState()
    try:
        text_format.Merge(text, state)
    except text_format.ParseError:
        return None
    prefix = state.model_checkpoint_path
    if not prefix:
        return None
    if not os.path.isabs(prefix):
        prefix = os.path.join(directory, prefix)
    return prefix if os.path.exists(prefix + ".index") else None


def _get_checkpoint_filename(ckpt_dir_or_file):
    """The checkpoint prefix for a prefix or a directory."""
    ckpt_dir_or_file = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(ckpt_dir_or_file):
        return _latest_checkpoint(ckpt_dir_or_file)
    return ckpt_dir_or_file


def load_checkpoint(ckpt_dir_or_file):
    """A ``CheckpointReader`` for the checkpoint at (or newest in) ``ckpt_dir_or_file``.

    Raises ``ValueError`` for a directory without checkpoints and
    ``NotFoundError`` for a prefix with no ``.index`` file.
    """
    filename = _get_checkpoint_filename(ckpt_dir_or_file)
    if filename is None:
        raise ValueError(
            f"Couldn't find 'checkpoint' file or checkpoints in given directory {os.fspath(ckpt_dir_or_file)}"
        )
    return NewCheckpointReader(filename)


def load_variable(ckpt_dir_or_file, name):
    """The value (a NumPy array) of the tensor ``name`` in the checkpoint; a ``:0`` suffix is ignored."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file):
    """``[(name, shape), ...]`` for every tensor in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


# -- init_from_checkpoint ---------------------------------------------------------


def _is_variable(x):
    from ferroflow.ops import variables

    return isinstance(x, variables.Variable)


def _is_partitioned(x):
    from ferroflow.ops.partitioned_variables import PartitionedVariable

    return isinstance(x, PartitionedVariable)


def _store_variables():
    """The ``get_variable`` store of the default graph: full name -> Variable (parts by their own names)."""
    from ferroflow.ops import variable_scope

    return variable_scope._get_default_variable_store()._vars


def _collect_partitions(name, store):
    """The parts ``name/part_0``, ``name/part_1``, ... of a partitioned variable, or None."""
    parts = []
    while f"{name}/part_{len(parts)}" in store:
        parts.append(store[f"{name}/part_{len(parts)}"])
    return parts or None


def _restore_initial_value(ckpt_file, tensor_name, slice_spec, variable):
    """A ``RestoreV2`` op (on the CPU, beside the variable) reading ``tensor_name`` for ``variable``."""
    base = variable.dtype.base_dtype
    with ops.device(variable.device), ops.device("/cpu:0"):
        op = make_op(
            "RestoreV2",
            [
                ops.convert_to_tensor(ckpt_file, dtype=dtypes.string, name="prefix"),
                ops.convert_to_tensor([tensor_name], dtype=dtypes.string, name="tensor_names"),
                ops.convert_to_tensor([slice_spec], dtype=dtypes.string, name="shape_and_slices"),
            ],
            {"dtypes": ("list_type", [base.as_datatype_enum])},
            name="checkpoint_initializer",
        )
    value = op.outputs[0]
    if variable.shape.is_fully_defined():
        value.set_shape(variable.shape)
    return value


def _set_checkpoint_initializer(variable, ckpt_file, tensor_name, slice_spec):
    """Makes ``variable.initializer`` assign the checkpoint's value instead of the initial value."""
    value = _restore_initial_value(ckpt_file, tensor_name, slice_spec, variable)
    variable._initializer_op = state_ops.assign(variable, value).op
    variable._initial_value = value


def _set_variable_or_list_initializer(var_or_list, ckpt_file, tensor_name):
    if _is_partitioned(var_or_list):
        var_or_list = list(var_or_list)
    if isinstance(var_or_list, (list, tuple)):
        full_name = None
        for part in var_or_list:
            info = part._get_save_slice_info()
            if info is None:
                raise ValueError(
                    f"Variable {part.name} in the list for checkpoint tensor {tensor_name} is not a partition "
                    "(it has no save_slice_info); pass a Variable or the parts of one partitioned variable."
                )
            if full_name is None:
                full_name = info.full_name
            elif full_name != info.full_name:
                raise ValueError(f"Slices must all be from the same tensor: {full_name} != {info.full_name}")
            _set_checkpoint_initializer(part, ckpt_file, tensor_name, info.spec)
    else:
        _set_checkpoint_initializer(var_or_list, ckpt_file, tensor_name, "")


def _check_shape(var_or_list, tensor_name, ckpt_shape):
    """Raises ValueError (naming both shapes) when the variable cannot hold the checkpoint tensor."""
    if _is_partitioned(var_or_list):
        name, shape = var_or_list.name, var_or_list.get_shape()
    elif isinstance(var_or_list, (list, tuple)):
        info = var_or_list[0]._get_save_slice_info()
        if info is None:
            return
        name, shape = info.full_name, as_shape(info.full_shape)
    else:
        name, shape = var_or_list.name, var_or_list.get_shape()
    if not shape.is_compatible_with(as_shape(ckpt_shape)):
        raise ValueError(
            f"Shape of variable {name} ({shape}) doesn't match with shape of tensor {tensor_name} "
            f"({list(ckpt_shape)}) from checkpoint reader."
        )


def _resolve_target(target, store):
    """A Variable, list of parts or PartitionedVariable named or given by ``target``; None for a scope."""
    if _is_variable(target) or _is_partitioned(target):
        return target
    if isinstance(target, (list, tuple)):
        if target and all(_is_variable(v) for v in target):
            return list(target)
        raise ValueError(f"Assignment map values must be names, Variables or lists of Variables; got {target!r}")
    if not isinstance(target, str):
        raise ValueError(f"Assignment map values must be names, Variables or lists of Variables; got {target!r}")
    found = store.get(target)
    if found is None:
        found = _collect_partitions(target, store)
    return found


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Makes the initializers of the mapped variables load from a checkpoint.

    Nothing is read now: each mapped variable's initializer becomes an
    ``Assign`` of a ``RestoreV2`` op, so running
    ``global_variables_initializer()`` (built afterwards) fills the variables
    from the checkpoint. ``assignment_map`` maps checkpoint names to current
    variables:

    * ``'ckpt_scope/': 'scope/'`` (or ``'scope'``) maps every ``get_variable``
      variable under ``scope`` to the tensor with the same relative name under
      ``ckpt_scope``; ``'/': 'scope/'`` reads them from the checkpoint's root;
    * ``'ckpt_scope/name': 'scope/name'`` maps one variable by name (a
      partitioned variable's name selects all its parts);
    * ``'name': variable`` or ``'name': [part_0, part_1, ...]`` (or a
      ``PartitionedVariable``) maps given objects.

    Raises ValueError for a tensor missing from the checkpoint, a shape
    mismatch, or a scope mapped to a single name.
    """
    ckpt_file = _get_checkpoint_filename(ckpt_dir_or_file)
    reader = load_checkpoint(ckpt_dir_or_file)
    ckpt_shapes = reader.get_variable_to_shape_map()
    store = _store_variables()
    for tensor_name, target in sorted(assignment_map.items(), key=lambda kv: kv[0]):
        var = _resolve_target(target, store)
        if var is not None:
            if tensor_name not in ckpt_shapes:
                raise ValueError(
                    f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} checkpoint "
                    f"{ {k: ckpt_shapes[k] for k in sorted(ckpt_shapes)} }"
                )
            _check_shape(var, tensor_name, ckpt_shapes[tensor_name])
            _set_variable_or_list_initializer(var, ckpt_file, tensor_name)
            continue
        _init_scope_from_checkpoint(ckpt_dir_or_file, ckpt_file, ckpt_shapes, store, tensor_name, target)


def _init_scope_from_checkpoint(ckpt_dir_or_file, ckpt_file, ckpt_shapes, store, tensor_name, scope_name):
    """The ``'ckpt_scope/': 'scope/'`` form: every store variable under ``scope_name``."""
    # 'scope/', 'scope' and '/' (the root) all name a scope; TensorFlow's docs use both spellings.
    scope = scope_name.rstrip("/")
    if not tensor_name.endswith("/"):
        raise ValueError(
            f"Assignment map with scope only name {scope_name!r} should map to scope only {tensor_name!r}. "
            "Should be 'scope/': 'other_scope/'."
        )
    names = set()
    for name in store:
        if scope and not name.startswith(scope + "/"):
            continue
        if "/part_" in name:  # one entry per partitioned variable
            name = name[: name.index("/part_")]
        names.add(name)
    if not names:
        raise ValueError(
            f"Assignment map entry {tensor_name!r}: {scope_name!r} matches no variable created with "
            "tf.get_variable in the current graph."
        )
    for name in sorted(names):
        relative = name[len(scope) + 1:] if scope else name
        full = relative if tensor_name == "/" else tensor_name + relative
        full = full.rstrip("/")
        if full not in ckpt_shapes:
            raise ValueError(
                f"Tensor {full} ({relative} in {tensor_name}) is not found in {ckpt_dir_or_file} checkpoint"
            )
        var = store.get(name)
        if var is None:
            var = _collect_partitions(name, store)
        _check_shape(var, full, ckpt_shapes[full])
        _set_variable_or_list_initializer(var, ckpt_file, full)
