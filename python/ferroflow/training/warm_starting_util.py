"""``tf.train.warm_start`` and ``tf.train.VocabInfo``: start a model from an older checkpoint.

Variables without vocabulary changes are mapped with ``init_from_checkpoint``.
A variable with a ``VocabInfo`` has its rows (axis 0) or columns (axis 1)
remapped: entry ``i`` of the new vocabulary file takes the checkpoint's entry
for the same token in the old vocabulary file; tokens the old vocabulary
lacks, and the ``num_oov_buckets`` extra entries, get values from
``backup_initializer`` (zeros by default). The remapping is computed when
``warm_start`` is called (the checkpoint and the vocabulary files are read
then) and becomes the variable's initializer.
"""

from __future__ import annotations

import collections

import numpy as np

from ferroflow.framework import ops
from ferroflow.ops import array_ops, init_ops, state_ops
from ferroflow.training import checkpoint_utils

__all__ = ["VocabInfo", "warm_start"]


class VocabInfo(
    collections.namedtuple(
        "VocabInfo",
        ["new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size", "backup_initializer",
         "axis"],
    )
):
    """How a variable's vocabulary changed since the checkpoint.

    ``new_vocab`` / ``old_vocab``: vocabulary files (one token per line);
    ``new_vocab_size``: how many lines of the new file the variable uses;
    ``num_oov_buckets``: extra entries after them; ``old_vocab_size``: lines
    of the old file to use (-1: all); ``backup_initializer``: fills entries
    the checkpoint cannot supply; ``axis``: 0 remaps rows, 1 remaps columns.
    """

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size=-1,
                backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError(
                f"The only supported values for the axis argument are 0 and 1.  Provided axis: {axis}"
            )
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size,
                               backup_initializer, axis)


def _infer_var_name(var):
    """The checkpoint-facing name: a part's full variable name, else the variable's op name."""
    parts = var if isinstance(var, (list, tuple)) else [var]
    info = parts[0]._get_save_slice_info()
    return info.full_name if info is not None else parts[0].op.name


def _select_variables(vars_to_warm_start, var_name_to_vocab_info):
    from ferroflow.ops import variables
    from ferroflow.ops.partitioned_variables import PartitionedVariable

    if isinstance(vars_to_warm_start, str):
        return ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    if vars_to_warm_start is None:
        return [v for v in ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES)
                if _infer_var_name(v) in var_name_to_vocab_info]
    if isinstance(vars_to_warm_start, (list, tuple)):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            seen, out = set(), []
            for scope in vars_to_warm_start:
                for v in ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, scope=scope):
                    if id(v) not in seen:
                        seen.add(id(v))
                        out.append(v)
            return out
        out = []
        for v in vars_to_warm_start:
            if isinstance(v, PartitionedVariable):
                out.extend(v)
            elif isinstance(v, variables.Variable):
                out.append(v)
            else:
                raise ValueError(
                    "vars_to_warm_start must be a string, a list of strings or a list of Variables; "
                    f"the list holds {v!r}"
                )
        return out
    raise ValueError(f"vars_to_warm_start must be a string, a list of strings or Variables, or None; "
                     f"got {vars_to_warm_start!r}")


def _group(variable_list):
    """``{name: [Variable or parts...]}`` in first-seen order."""
    grouped = {}
    for v in variable_list:
        grouped.setdefault(_infer_var_name(v), []).append(v)
    return grouped


def _read_vocab(path, size, what):
    """The first ``size`` tokens (all when size is -1 or None) of a vocabulary file."""
    try:
        with open(path, "rb") as f:
            tokens = [line.rstrip(b"\r\n") for line in f]
    except OSError as e:
        raise ValueError(f"Cannot read the {what} vocabulary file {path}: {e}") from e
    if size is None or size < 0:
        return tokens
    if size > len(tokens):
        raise ValueError(
            f"The {what} vocabulary size {size} is larger than the {len(tokens)} entries of {path}"
        )
    return tokens[:size]


def _vocab_map(new_tokens, old_tokens):
    """For every new token, its index in the old vocabulary (first occurrence) or -1."""
    index = {}
    for i, tok in enumerate(old_tokens):
        index.setdefault(tok, i)
    return np.array([index.get(tok, -1) for tok in new_tokens], dtype=np.int64)


def _remapped_part(old, row_map, col_map, rows, cols):
    """The part's values from ``old`` and a mask of the entries it cannot supply.

    ``row_map[r]`` / ``col_map[c]`` give the old row / column of each of the
    part's rows / columns, -1 for none.
    """
    values = np.zeros((rows, cols), dtype=old.dtype)
    missing = np.ones((rows, cols), dtype=bool)
    r_ok = row_map >= 0
    c_ok = col_map >= 0
    rr = np.nonzero(r_ok)[0]
    cc = np.nonzero(c_ok)[0]
    if rr.size and cc.size:
        values[np.ix_(rr, cc)] = old[np.ix_(row_map[rr], col_map[cc])]
        missing[np.ix_(rr, cc)] = False
    return values, missing


def _initial_value(values, missing, shape, dtype, backup_initializer, name):
    """A tensor of ``shape`` holding ``values`` with the missing entries (row-major) drawn from the backup."""
    n_missing = int(missing.sum())
    if n_missing == 0:
        return array_ops.reshape(ops.convert_to_tensor(values, dtype=dtype), shape)
    init = backup_initializer if backup_initializer is not None else init_ops.zeros_initializer()
    backup = ops.convert_to_tensor(init([n_missing], dtype=dtype), dtype=dtype)
    flat_missing = missing.reshape(-1)
    loaded = values.reshape(-1)[~flat_missing]
    # Gather index: missing entries take backup[k] in order, the others loaded[j] after them.
    src = np.empty(flat_missing.size, dtype=np.int64)
    src[flat_missing] = np.arange(n_missing)
    src[~flat_missing] = n_missing + np.arange(loaded.size)
    pool = array_ops.concat([backup, ops.convert_to_tensor(loaded, dtype=dtype)], 0)
    return array_ops.reshape(array_ops.gather(pool, ops.convert_to_tensor(src)), shape, name=name)


def _warm_start_var_with_vocab(parts, ckpt, prev_name, info):
    """Sets every part's initializer to its slice of the vocabulary-remapped checkpoint tensor."""
    if not (info.new_vocab and info.new_vocab_size and ckpt):
        raise ValueError("Invalid args: Must provide all of [current_vocab_path, current_vocab_size, prev_ckpt].")
    reader = checkpoint_utils.load_checkpoint(ckpt)
    if not reader.has_tensor(prev_name):
        raise ValueError(f"Tensor {prev_name} is not found in {ckpt} checkpoint")
    old = np.asarray(reader.get_tensor(prev_name))
    if old.ndim == 1:
        old = old.reshape(-1, 1)
    if old.ndim != 2:
        raise ValueError(f"Vocabulary remapping needs a 1-D or 2-D tensor; {prev_name} has shape {list(old.shape)}")
    new_tokens = _read_vocab(info.new_vocab, info.new_vocab_size, "new")
    old_tokens = _read_vocab(info.old_vocab, info.old_vocab_size, "old")
    vocab_to_old = _vocab_map(new_tokens, old_tokens)
    if (vocab_to_old >= (old.shape[0] if info.axis == 0 else old.shape[1])).any():
        raise ValueError(
            f"The old vocabulary {info.old_vocab} has more entries than {prev_name} has along axis {info.axis} "
            f"(shape {list(old.shape)})"
        )
    oov = info.num_oov_buckets or 0
    total_rows = sum(p.get_shape().as_list()[0] for p in parts)
    ckpt_file = checkpoint_utils._get_checkpoint_filename(ckpt)
    for v in parts:
        shape = v.get_shape().as_list()
        if len(shape) not in (1, 2):
            raise ValueError(f"Vocabulary remapping needs a 1-D or 2-D variable; {v.name} has shape {shape}")
        rows = shape[0]
        cols = shape[1] if len(shape) == 2 else 1
        slice_info = v._get_save_slice_info()
        offset = slice_info.var_offset[0] if slice_info is not None else 0
        if info.axis == 0:
            expected_rows, expected_cols = info.new_vocab_size + oov, old.shape[1]
            if offset + rows > expected_rows:
                raise ValueError(
                    f"Trying to initialize {rows} additional rows of {v.name} after {offset} rows have already been "
                    f"initialized, which would exceed expected total row count of new_row_vocab_size "
                    f"({info.new_vocab_size}) + num_row_oov_buckets ({oov}) = {expected_rows}."
                )
            if cols != expected_cols:
                raise ValueError(
                    f"Variable {v.name} has {cols} columns but {prev_name} in {ckpt_file} has {old.shape[1]} "
                    f"(shapes {shape} and {list(old.shape)})"
                )
            idx = np.arange(offset, offset + rows)
            row_map = np.where(idx < info.new_vocab_size, vocab_to_old[np.minimum(idx, info.new_vocab_size - 1)], -1)
            col_map = np.arange(cols)
        else:
            if len(shape) != 2:
                raise ValueError(f"axis=1 remaps columns; {v.name} has shape {shape}")
            if cols != info.new_vocab_size + oov:
                raise ValueError(
                    f"Expected shape[1] ({cols}) of {v.name} to be equal to new_col_vocab_size "
                    f"({info.new_vocab_size}) + num_col_oov_buckets ({oov})"
                )
            if total_rows != old.shape[0]:
                raise ValueError(
                    f"Variable {_infer_var_name(parts)} has {total_rows} rows but {prev_name} in {ckpt_file} has "
                    f"{old.shape[0]}; axis=1 keeps the rows"
                )
            row_map = np.arange(offset, offset + rows)
            col_map = np.concatenate([vocab_to_old, -np.ones(oov, dtype=np.int64)])
        values, missing = _remapped_part(old, row_map, col_map, rows, cols)
        with ops.init_scope(), ops.name_scope(v.op.name + "/warm_start/"):
            value = _initial_value(values, missing, shape, v.dtype.base_dtype, info.backup_initializer, "remapped")
            v._initializer_op = state_ops.assign(v, value).op
        v._initial_value = value


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Makes the selected variables' initializers load from ``ckpt_to_initialize_from``.

    ``vars_to_warm_start``: a regex over TRAINABLE_VARIABLES, a list of
    regexes over GLOBAL_VARIABLES, a list of Variables, or None (only the
    variables in ``var_name_to_vocab_info``). ``var_name_to_vocab_info`` maps
    a (full, unpartitioned) variable name to a ``VocabInfo``;
    ``var_name_to_prev_var_name`` maps it to its name in the checkpoint.
    Raises ValueError when either dict names a variable that was not warm-started.
    """
    var_name_to_vocab_info = dict(var_name_to_vocab_info or {})
    var_name_to_prev_var_name = dict(var_name_to_prev_var_name or {})
    grouped = _group(_select_variables(vars_to_warm_start, var_name_to_vocab_info))
    # Check both dicts before touching any initializer.
    unused_prev = set(var_name_to_prev_var_name) - set(grouped)
    unused_vocab = set(var_name_to_vocab_info) - set(grouped)
    viable = sorted(grouped)
    if unused_prev:
        raise ValueError(
            f"You provided the following variables in var_name_to_prev_var_name that were not used: "
            f"{sorted(unused_prev)}.  Perhaps you misspelled them?  Here is the list of viable variable names: "
            f"{viable}"
        )
    if unused_vocab:
        raise ValueError(
            f"You provided the following variables in var_name_to_vocab_info that were not used: "
            f"{sorted(unused_vocab)}.  Perhaps you misspelled them?  Here is the list of viable variable names: "
            f"{viable}"
        )
    for name, parts in grouped.items():
        prev_name = var_name_to_prev_var_name.get(name) or name
        info = var_name_to_vocab_info.get(name)
        if info is not None:
            _warm_start_var_with_vocab(parts, ckpt_to_initialize_from, prev_name, info)
        else:
            target = parts[0] if len(parts) == 1 and parts[0]._get_save_slice_info() is None else parts
            checkpoint_utils.init_from_checkpoint(ckpt_to_initialize_from, {prev_name: target})
