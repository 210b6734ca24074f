"""Recurrent networks over ``tf.nn.rnn_cell`` cells (TensorFlow 1's ``python/ops/rnn.py``).

``static_rnn`` unrolls a cell over a Python list of time steps (one set of ops
per step, variables shared through the ``rnn`` variable scope);
``static_bidirectional_rnn`` runs a forward and a backward cell over the same
list. With ``sequence_length``, every step at or past a sequence's end
outputs zeros and passes that sequence's state through unchanged, so the
final state is the state at each sequence's own last step.

``dynamic_rnn`` over a plain ``BasicLSTMCell`` or ``LSTMCell`` (tanh, no
projection, no cell clip, unpartitioned kernel), a ``DropoutWrapper`` of one
that drops only inputs and outputs (no state dropout, not
``variational_recurrent``), or a ``MultiRNNCell`` of these, with a single
dense float32 input of static length, runs as fused ``BlockLSTM`` ops (one
per layer) instead of a ``while_loop``: the same variables, values and
gradients, in a fraction of the time (see ``_fused_lstm``).
``FERROFLOW_FUSED_RNN=0`` in the environment forces the loop.

On that path ``sequence_length`` costs no kernel of its own: ``BlockLSTM``
runs every row for the longest length, and then each row's outputs from its
length on are replaced by zeros (one select) and its final state is gathered
at its last step (the initial state where the length is 0 or less).
Gradients follow: the zeroed outputs and the unread states after a row's end
pass nothing back (padding that holds inf or NaN poisons the weight
gradients, on this path as in the loop, whose cell also runs those steps).
Dropout draws one mask over all ``[time, batch,
depth]`` inputs or outputs at once (the wrapper's own op and seeds), where
the loop draws one per step: the same distribution, other numbers.
"""

from __future__ import annotations

import contextlib
import os

from ferroflow.framework import dtypes, ops
from ferroflow.framework.tensor_shape import TensorShape, dimension_at_index, dimension_value, unknown_shape
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops import variable_scope as vs
from ferroflow.ops.rnn_cell_impl import _zero_state_tensors, assert_like_rnncell

__all__ = [
    "bidirectional_dynamic_rnn",
    "dynamic_rnn",
    "raw_rnn",
    "static_bidirectional_rnn",
    "static_rnn",
    "static_state_saving_rnn",
]


def _infer_state_dtype(explicit_dtype, state):
    """``explicit_dtype`` if given, else the one dtype of every tensor in ``state``."""
    if explicit_dtype is not None:
        return explicit_dtype
    if nest.is_sequence(state):
        inferred = [e.dtype for e in nest.flatten(state)]
        if not inferred:
            raise ValueError(f"Unable to infer dtype from empty state: {state}")
        if any(d != inferred[0] for d in inferred):
            raise ValueError(f"State has tensors of different inferred_dtypes. Unable to infer a single "
                             f"representative dtype. Dtypes received: {inferred}")
        return inferred[0]
    return state.dtype


def _rnn_step(time, sequence_length, zero_output, state, call_cell):
    """One step of a run with ``sequence_length``: the cell's output and new state where
    ``time < sequence_length``, and ``zero_output`` and the old ``state`` elsewhere.

    TensorFlow wraps this in conds that skip the selects when every sequence is still
    running (or has ended); the values are the same.
    """
    flat_state = nest.flatten(state)
    flat_zero_output = nest.flatten(zero_output)
    copy_cond = math_ops.less_equal(sequence_length, time)

    def copy_one_through(old, new):
        if new.shape.ndims == 0:
            return new
        with ops.colocate_with(new.op):
            return array_ops.where(copy_cond, old, new)

    new_output, new_state = call_cell()
    nest.assert_same_structure(zero_output, new_output)
    nest.assert_same_structure(state, new_state)
    flat_new_output = nest.flatten(new_output)
    flat_new_state = nest.flatten(new_state)
    final_output = [copy_one_through(z, n) for z, n in zip(flat_zero_output, flat_new_output)]
    final_state = [copy_one_through(s, n) for s, n in zip(flat_state, flat_new_state)]
    for out, z in zip(final_output, flat_zero_output):
        out.set_shape(z.shape)
    for sub, old in zip(final_state, flat_state):
        sub.set_shape(old.shape)
    return (nest.pack_sequence_as(zero_output, final_output), nest.pack_sequence_as(state, final_state))


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Unrolls ``cell`` over ``inputs``, a list of ``[batch_size, input_size]`` tensors (or nested
    structures of them), one per time step.

    Returns ``(outputs, state)``: the list of per-step outputs and the final state. Without
    ``initial_state``, the state starts at ``cell.zero_state(batch_size, dtype)``, so ``dtype`` is
    then required. Variables live under ``scope`` (default ``"rnn"``).
    """
    assert_like_rnncell("cell", cell)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    inputs = [nest.map_structure(ops.convert_to_tensor, x) for x in inputs]

    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        first_input = inputs
        while nest.is_sequence(first_input):
            first_input = first_input[0]
        if first_input.shape.ndims != 1:
            fixed_batch_size = first_input.shape.with_rank_at_least(2)[0]
            for flat_input in nest.flatten(inputs):
                input_shape = flat_input.shape.with_rank_at_least(2)
                fixed_batch_size = fixed_batch_size.merge_with(dimension_at_index(input_shape, 0))
                for i, size in enumerate(input_shape[1:].as_list()):
                    if size is None:
                        raise ValueError(f"Input size (dimension {i} of inputs) must be accessible via shape "
                                         "inference, but saw value None.")
        else:
            fixed_batch_size = first_input.shape.with_rank_at_least(1)[0]
        static_batch = dimension_value(fixed_batch_size)
        batch_size = static_batch if static_batch else array_ops.shape(first_input)[0]

        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If no initial_state is provided, dtype must be specified")
            if getattr(cell, "get_initial_state", None) is not None:
                state = cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
            else:
                state = cell.zero_state(batch_size, dtype)

        if sequence_length is not None:
            sequence_length = ops.convert_to_tensor(sequence_length, name="sequence_length")
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError("sequence_length must be a vector of length batch_size")
            out_dtype = _infer_state_dtype(dtype, state)

            zero_output = _zero_state_tensors(cell.output_size, batch_size, out_dtype)
            for z, size in zip(nest.flatten(zero_output), nest.flatten(cell.output_size)):
                z.set_shape(TensorShape([static_batch]).concatenate(TensorShape(_dims(size))))
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)

        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(input_=input_, state=state):
                return cell(input_, state)

            if sequence_length is not None:
                output, state = _rnn_step(time, sequence_length, zero_output, state, call_cell)
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state



def static_state_saving_rnn(cell, inputs, state_saver, state_name, sequence_length=None, scope=None):
    """``static_rnn`` whose initial state is ``state_saver.state(state_name)`` and whose final
    state goes back through ``state_saver.save_state(state_name, final_state)``.

    ``state_saver`` is any object with those two methods (a ``SequenceQueueingStateSaver``'s
    batch, or one of your own keeping the state in variables), so a long sequence can be run
    piece by piece, each run starting where the previous one ended. When ``cell.state_size`` is
    a nested structure, ``state_name`` is a structure of as many names (one per flattened piece
    of the state); a single string otherwise.

    The last output and the returned state are identities made under a control dependency on
    every ``save_state`` result: fetching either saves the state. Returns ``(outputs, state)``.
    """
    state_size = cell.state_size
    nested_state = nest.is_sequence(state_size)
    if nested_state != nest.is_sequence(state_name):
        raise ValueError("Argument `state_name` should be the same type as `cell.state_size`. Received: "
                         f"state_name={state_name!s}, cell.state_size={state_size!s}.")
    if nested_state:
        names = nest.flatten(state_name)
        n_pieces = len(nest.flatten(state_size))
        if len(names) != n_pieces:
            raise ValueError("Number of elements in argument `state_name` and `cell.state_size` are "
                             f"mismatched. Received state_name={state_name} with {len(names)} elements and "
                             f"cell.state_size={state_size} with {n_pieces} elements.")
        initial_state = nest.pack_sequence_as(state_size, [state_saver.state(n) for n in names])
    else:
        names = [state_name]
        initial_state = state_saver.state(state_name)

    outputs, state = static_rnn(cell, inputs, initial_state=initial_state, sequence_length=sequence_length,
                                scope=scope)
    flat_state = nest.flatten(state)
    saves = [state_saver.save_state(n, piece) for n, piece in zip(names, flat_state)]
    with ops.control_dependencies(saves):
        last = outputs[-1]
        outputs[-1] = nest.pack_sequence_as(last, [array_ops.identity(t) for t in nest.flatten(last)])
        state = nest.pack_sequence_as(state, [array_ops.identity(t) for t in flat_state])
    return outputs, state

def _dims(size):
    return [size] if isinstance(size, int) else TensorShape(size).as_list()


def _reverse_sequence(x, lengths):
    """``x`` (``[time, batch, ...]``) with the first ``lengths[b]`` steps of each batch entry ``b``
    reversed (TensorFlow's ``reverse_sequence(x, lengths, seq_axis=0, batch_axis=1)``), as one
    ``gather_nd``."""
    with ops.name_scope("ReverseSequence", values=[x, lengths]):
        steps = dimension_value(x.shape[0])
        if steps is None:  # a time axis of unknown length ([batch, None, dims] inputs)
            steps = array_ops.shape(x, out_type=dtypes.int32)[0]
        t = array_ops.expand_dims(math_ops.range(steps, dtype=dtypes.int32), 1)
        lens = array_ops.expand_dims(math_ops.cast(lengths, dtypes.int32), 0)
        src = array_ops.where_v2(math_ops.less(t, lens), lens - 1 - t, t)
        batch = array_ops.expand_dims(math_ops.range(array_ops.shape(lens)[1], dtype=dtypes.int32), 0)
        index = array_ops.stack([src, array_ops.zeros_like(src) + batch], axis=2)
        return array_ops.gather_nd(x, index)


def _reverse_seq(input_seq, lengths):
    """The list ``input_seq`` reversed in time, per sequence up to its length when ``lengths`` is given."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_input_seq = [nest.flatten(x) for x in input_seq]
    flat_results = [[] for _ in input_seq]
    for sequence in zip(*flat_input_seq):
        input_shape = unknown_shape(rank=sequence[0].shape.ndims)
        for x in sequence:
            input_shape = input_shape.merge_with(x.shape)
            x.set_shape(input_shape)
        reversed_steps = array_ops.unstack(_reverse_sequence(array_ops.stack(sequence), lengths))
        for r, flat_result in zip(reversed_steps, flat_results):
            r.set_shape(input_shape)
            flat_result.append(r)
    return [nest.pack_sequence_as(x, flat) for x, flat in zip(input_seq, flat_results)]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """``static_rnn`` forward with ``cell_fw`` and backward (over each sequence's own length) with
    ``cell_bw``; variables under ``scope`` (default ``"bidirectional_rnn"``) ``/fw`` and ``/bw``.

    Returns ``(outputs, output_state_fw, output_state_bw)``; each output is the forward and the
    (re-reversed) backward output concatenated along axis 1.
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    inputs = [nest.map_structure(ops.convert_to_tensor, x) for x in inputs]

    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length,
                                                    scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, sequence_length)
            tmp, output_state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length,
                                              scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    flat_fw = nest.flatten(output_fw)
    flat_bw = nest.flatten(output_bw)
    flat_outputs = tuple(array_ops.concat([fw, bw], 1) for fw, bw in zip(flat_fw, flat_bw))
    outputs = nest.pack_sequence_as(output_fw, flat_outputs)
    return outputs, output_state_fw, output_state_bw


def _transpose_batch_time(x):
    """``x`` with its first two axes swapped (batch-major <-> time-major)."""
    x = ops.convert_to_tensor(x)
    if x.shape.rank is None:
        raise ValueError(f"Expected an input of known rank >= 2, got {x}")
    if x.shape.rank < 2:
        return x
    perm = [1, 0] + list(range(2, x.shape.rank))
    y = array_ops.transpose(x, perm)
    y.set_shape(TensorShape([x.shape[1], x.shape[0]]).concatenate(x.shape[2:]))
    return y


def _shape_tuple(shape):
    dims = ["None" if d is None else str(d) for d in shape.as_list()]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _best_effort_batch_size(flat_input):
    """The batch size (axis 1 of time-major inputs): static where known, else a tensor."""
    for x in flat_input:
        if x.shape.rank is None:
            continue
        if x.shape.rank < 2:
            raise ValueError(f"Input tensor should have rank >= 2, got {x.shape.rank} ({x.name})")
        b = dimension_value(x.shape[1])
        if b is not None:
            return b
    return array_ops.shape(flat_input[0])[1]


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """Runs ``cell`` over the time steps of ``inputs`` in one ``tf.while_loop`` (or as ``BlockLSTM``
    ops, for the LSTM cells the module docs list).

    ``inputs`` is ``[batch, time, ...]`` (``[time, batch, ...]`` with ``time_major``), or a nested
    structure of such tensors. Returns ``(outputs, state)``: the per-step outputs, stacked in the
    inputs' layout, and the final state. With ``sequence_length``, a sequence's outputs past its end
    are zeros and its state is carried from its last step. Variables live under ``scope`` (default
    ``"rnn"``), named as TensorFlow names them, so TF1 checkpoints restore.
    """
    from ferroflow.ops.tensor_array_ops import TensorArray
    from ferroflow.ops.while_loop import while_loop

    assert_like_rnncell("cell", cell)
    with vs.variable_scope(scope or "rnn"):
        flat_input = [ops.convert_to_tensor(x) for x in nest.flatten(inputs)]
        for x in flat_input:
            if x.shape.rank is not None and x.shape.rank < 3:
                raise ValueError(f"Shape {_shape_tuple(x.shape)} must have rank at least 3")
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = math_ops.cast(ops.convert_to_tensor(sequence_length), dtypes.int32)
            if sequence_length.shape.rank not in (None, 1):
                raise ValueError(
                    f"sequence_length must be a vector of length batch_size, but saw shape: "
                    f"{sequence_length.shape}"
                )
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
        batch_size = _best_effort_batch_size(flat_input)
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If no initial_state is provided, argument `dtype` must be specified")
            if getattr(cell, "get_initial_state", None) is not None:
                state = cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
            else:
                state = cell.zero_state(batch_size, dtype)
        if _can_fuse(cell, flat_input, inputs, state):
            lengths = None if sequence_length is None else _FusedLengths(sequence_length, flat_input[0])
            outputs, final_state = _fused_lstm(cell, flat_input[0], state, lengths)
            if lengths is not None:
                zero = array_ops.zeros([], dtype=outputs.dtype)
                outputs = array_ops.where_v2(lengths.running, outputs, zero, name="mask_outputs")
        else:
            outputs, final_state = _dynamic_rnn_loop(
                cell, flat_input, inputs, state, parallel_iterations, swap_memory, sequence_length, dtype,
                TensorArray, while_loop,
            )
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _fusable_lstm(cell):
    """Whether ``BlockLSTM`` computes ``cell``: exactly ``BasicLSTMCell`` or ``LSTMCell`` with the tanh
    activation, for ``LSTMCell`` without projection, cell clip or unit shards (``BlockLSTMGrad``, as
    in TensorFlow, ignores a cell clip, where the loop's ``clip_by_value`` stops the gradient), and a
    kernel that is not partitioned."""
    from ferroflow.ops.rnn_cell_impl import BasicLSTMCell, LSTMCell

    if type(cell) not in (BasicLSTMCell, LSTMCell) or cell._activation is not math_ops.tanh:
        return False
    if isinstance(cell, LSTMCell) and (cell._num_proj is not None or cell._cell_clip is not None
                                       or cell._num_unit_shards is not None):
        return False
    if cell.built:
        return not hasattr(getattr(cell, "_kernel", None), "_get_variable_list")
    return vs.get_variable_scope().partitioner is None  # else its kernel would be partitioned


def _fusable_dropout(cell):
    """Whether ``cell`` is a ``DropoutWrapper`` that drops only its inputs and outputs, each step
    independently: no state dropout (``state_keep_prob`` the float 1.0) and no
    ``variational_recurrent`` mask. Its dropout over all steps at once then draws from the same
    distribution as one dropout per step."""
    from ferroflow.ops.rnn_cell_impl import DropoutWrapper

    return (type(cell) is DropoutWrapper and not cell._variational_recurrent
            and isinstance(cell._state_keep_prob, float) and cell._state_keep_prob == 1.0)


def _fusable(cell):
    """Whether ``_fused_lstm`` computes ``cell``: a ``BlockLSTM``-computable cell (``_fusable_lstm``),
    a ``MultiRNNCell`` (tuple state) of fusable cells, or an input/output-only ``DropoutWrapper``
    (``_fusable_dropout``) around a fusable cell."""
    from ferroflow.ops.rnn_cell_impl import MultiRNNCell

    if type(cell) is MultiRNNCell:
        return cell._state_is_tuple and all(_fusable(c) for c in cell._cells)
    if _fusable_dropout(cell):
        return _fusable(cell._cell)
    return _fusable_lstm(cell)


def _can_fuse(cell, flat_input, inputs, state):
    """Whether ``dynamic_rnn`` may run ``cell`` over the time-major ``flat_input`` as ``BlockLSTM`` ops.

    The cell is fusable (``_fusable``: LSTM cells, ``MultiRNNCell`` stacks and input/output
    ``DropoutWrapper`` s of them), the input one float32 tensor of known time length and depth, the
    state float32.
    """
    if os.environ.get("FERROFLOW_FUSED_RNN", "1") == "0":
        return False
    if not _fusable(cell):
        return False
    if len(flat_input) != 1 or not isinstance(inputs, ops.Tensor):
        return False
    x = flat_input[0]
    if x.dtype.base_dtype != dtypes.float32 or x.shape.rank != 3:
        return False
    time_steps, depth = dimension_value(x.shape[0]), dimension_value(x.shape[2])
    if not time_steps or depth is None:
        return False
    return all(s.dtype.base_dtype == dtypes.float32 for s in nest.flatten(state))


@contextlib.contextmanager
def _cell_scope(cell, x):
    """Enters ``cell``'s variable and name scopes and builds it, as its first call on a step of the
    time-major ``x`` would (``RNNCell.__call__``), so variables get the loop path's names."""
    from ferroflow.ops.rnn_cell_impl import LayerRNNCell

    if cell._scope is None and not isinstance(cell, LayerRNNCell):
        with vs.variable_scope(vs.get_variable_scope()):
            cell._set_scope(None)
    cell._set_scope(None)
    reuse = True if cell.built else cell._reuse
    with vs.variable_scope(cell._scope, reuse=reuse, auxiliary_name_scope=False) as vscope:
        with ops.name_scope(vscope.original_name_scope):
            if not cell.built:
                if cell._dtype is None:
                    cell._dtype = x.dtype.base_dtype
                cell.build(x.shape[1:])
                cell.built = True
            yield


class _FusedLengths:
    """What the fused path needs of ``sequence_length`` (int32 ``[batch]``) over ``time_steps`` steps:
    ``seq_len_max``, the steps ``BlockLSTM`` runs (the longest length, clamped to ``[0,
    time_steps]``); ``last``, the ``gather_nd`` index ``[batch, 2]`` of each row's last step
    (``length - 1`` clamped to the run); ``started``, the rows of positive length (the others keep
    their initial state); ``running``, ``[time, batch, 1]``, true where ``t < length``."""

    def __init__(self, sequence_length, x):
        time_steps = dimension_value(x.shape[0])
        rows = dimension_value(sequence_length.shape[0]) if sequence_length.shape.rank == 1 else None
        batch_size = dimension_value(x.shape[1])
        if None not in (rows, batch_size) and rows != batch_size:
            raise ValueError(f"sequence_length must be a vector of length batch_size ({batch_size}), but saw "
                             f"shape: {sequence_length.shape}")
        with ops.name_scope("fused_sequence_length", values=[sequence_length]):
            lengths = sequence_length
            steps = math_ops.range(time_steps, dtype=dtypes.int32)
            batch = math_ops.range(array_ops.shape(x)[1], dtype=dtypes.int32)
            last = math_ops.minimum(math_ops.maximum(lengths - 1, 0), time_steps - 1)
            self.last = array_ops.stack([last, batch], axis=1)
            self.started = math_ops.greater(lengths, 0)
            longest = math_ops.minimum(math_ops.maximum(math_ops.reduce_max(lengths), 0), time_steps)
            self.seq_len_max = math_ops.cast(longest, dtypes.int64)
            running = math_ops.less(array_ops.expand_dims(steps, 1), array_ops.expand_dims(lengths, 0))
            self.running = array_ops.expand_dims(running, 2)


def _keeps_all(keep_prob):
    """Whether a ``DropoutWrapper`` keep probability means no dropout (as the wrapper decides it)."""
    return isinstance(keep_prob, float) and keep_prob >= 1


def _fused_lstm(cell, x, state, lengths=None):
    """``cell`` (see ``_can_fuse``) over the time-major ``x`` as ``BlockLSTM`` ops: ``(outputs, final state)``.

    A ``MultiRNNCell`` runs one op per layer, each over the previous layer's outputs, in the
    ``cell_<i>`` scopes its ``call`` uses. ``BlockLSTM``'s gate blocks (``i, ci, f, o``) are the
    cells' (``i, j, f, o``), and it adds ``forget_bias`` to the forget gate as they do. A
    ``DropoutWrapper`` applies its dropout op (same seeds) to the whole ``[time, batch, depth]``
    input and to the whole output; the state passed on is its cell's, undropped, as in its ``call``.

    With ``lengths`` (a ``_FusedLengths``), each layer's final state is its state after the row's
    last step (the initial state for rows of length 0). The outputs are not masked here: past a
    row's end they are values nothing reads (the loop too feeds a stack's later layers the lower
    layers' outputs of those steps, and then discards the results); ``dynamic_rnn`` zeroes the top
    layer's once.
    """
    from ferroflow.ops.rnn_cell_impl import MultiRNNCell

    if type(cell) is MultiRNNCell:
        with _cell_scope(cell, x):
            states = []
            for i, layer in enumerate(cell._cells):
                with vs.variable_scope(f"cell_{i}"):
                    x, layer_state = _fused_lstm(layer, x, state[i], lengths)
                states.append(layer_state)
        return x, tuple(states)
    if _fusable_dropout(cell):
        cell.built = True
        if not _keeps_all(cell._input_keep_prob):
            x = cell._dropout(x, "input", cell._recurrent_input_noise, cell._input_keep_prob)
        outputs, new_state = _fused_lstm(cell._cell, x, state, lengths)
        if not _keeps_all(cell._output_keep_prob):
            outputs = cell._dropout(outputs, "output", cell._recurrent_output_noise, cell._output_keep_prob)
        return outputs, new_state
    return _fused_lstm_layer(cell, x, state, lengths)


def _fused_lstm_layer(cell, x, state, lengths):
    from ferroflow.ops import lstm_ops
    from ferroflow.ops.rnn_cell_impl import LSTMCell, LSTMStateTuple

    n = cell._num_units
    time_steps = dimension_value(x.shape[0])
    batch = dimension_value(x.shape[1])
    with _cell_scope(cell, x):
        if hasattr(cell._kernel, "_get_variable_list"):
            raise ValueError("dynamic_rnn's fused LSTM cannot take a partitioned kernel")
        if cell._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(state, 2, axis=1)
        peephole = isinstance(cell, LSTMCell) and cell._use_peepholes
        if peephole:
            wci, wcf, wco = cell._w_i_diag, cell._w_f_diag, cell._w_o_diag
        else:
            wci = wcf = wco = array_ops.zeros([n], dtype=dtypes.float32)
        if lengths is None:
            seq_len_max = ops.convert_to_tensor(time_steps, dtype=dtypes.int64)
        else:
            seq_len_max = lengths.seq_len_max
        out = lstm_ops.BlockLSTM(
            seq_len_max=seq_len_max, x=x, cs_prev=c, h_prev=h,
            w=cell._kernel, wci=wci, wcf=wcf, wco=wco, b=cell._bias, forget_bias=float(cell._forget_bias),
            cell_clip=-1.0, use_peephole=peephole, name="BlockLSTM",
        )
        outputs = out.h
        outputs.set_shape(TensorShape([time_steps, batch, n]))
        if lengths is None:
            new_c, new_h = out.cs[time_steps - 1], out.h[time_steps - 1]
        else:
            new_c = array_ops.where(lengths.started, array_ops.gather_nd(out.cs, lengths.last), c)
            new_h = array_ops.where(lengths.started, array_ops.gather_nd(out.h, lengths.last), h)
            new_c.set_shape(TensorShape([batch, n]))
            new_h.set_shape(TensorShape([batch, n]))
    if cell._state_is_tuple:
        return outputs, LSTMStateTuple(new_c, new_h)
    return outputs, array_ops.concat([new_c, new_h], 1)


def _dynamic_rnn_loop(cell, flat_input, inputs, initial_state, parallel_iterations, swap_memory,
                      sequence_length, dtype, TensorArray, while_loop):  # noqa: N803 - the class, passed in
    """The loop of ``dynamic_rnn`` over time-major ``flat_input``: ``(outputs, final state)``."""
    static_time = dimension_value(flat_input[0].shape[0]) if flat_input[0].shape.rank else None
    time_steps = static_time if static_time is not None else array_ops.shape(flat_input[0])[0]
    batch = dimension_value(flat_input[0].shape[1]) if flat_input[0].shape.rank else None
    batch_size = batch if batch is not None else array_ops.shape(flat_input[0])[1]
    for x in flat_input:
        for i, d in enumerate(x.shape.as_list()[2:] if x.shape.rank else []):
            if d is None:
                raise ValueError(f"Input size (depth of inputs) must be accessible via shape inference, but "
                                 f"saw value None (dimension {i + 2} of {x.name}).")
    state_dtype = _infer_state_dtype(dtype, initial_state)
    flat_output_size = nest.flatten(cell.output_size)
    with ops.name_scope("dynamic_rnn") as scope:
        base_name = scope
    input_tas = [
        TensorArray(x.dtype, size=time_steps, element_shape=x.shape[1:], tensor_array_name=base_name + f"input_{i}")
        .unstack(x)
        for i, x in enumerate(flat_input)
    ]
    output_tas = [
        TensorArray(state_dtype, size=time_steps, element_shape=TensorShape([batch]).concatenate(_dims(size)),
                    tensor_array_name=base_name + f"output_{i}")
        for i, size in enumerate(flat_output_size)
    ]
    if sequence_length is not None:
        zero_output = _zero_state_tensors(cell.output_size, batch_size, state_dtype)

    def body(time, tas, state):
        flat_x = [ta.read(time) for ta in input_tas]
        for x, src in zip(flat_x, flat_input):
            x.set_shape(src.shape[1:])
        input_t = nest.pack_sequence_as(inputs, flat_x)

        def call_cell():
            return cell(input_t, state)

        if sequence_length is not None:
            output, new_state = _rnn_step(time, sequence_length, zero_output, state, call_cell)
        else:
            output, new_state = call_cell()
        flat_out = nest.flatten(output)
        return time + 1, [ta.write(time, o) for ta, o in zip(tas, flat_out)], new_state

    time = ops.convert_to_tensor(0, dtype=dtypes.int32, name="time")
    _, output_tas, final_state = while_loop(
        lambda time, *_: time < time_steps, body, (time, output_tas, initial_state),
        parallel_iterations=parallel_iterations, swap_memory=swap_memory, return_same_structure=True,
    )
    flat_outputs = []
    for ta, size in zip(output_tas, flat_output_size):
        out = ta.stack()
        out.set_shape(TensorShape([static_time, batch]).concatenate(_dims(size)))
        flat_outputs.append(out)
    return nest.pack_sequence_as(cell.output_size, flat_outputs), final_state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """``dynamic_rnn`` forward with ``cell_fw`` and over the reversed sequences with ``cell_bw``.

    Returns ``((output_fw, output_bw), (output_state_fw, output_state_bw))``; the backward outputs
    are put back in forward time order. Variables live under ``scope`` (default
    ``"bidirectional_rnn"``) ``/fw`` and ``/bw``.
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length=sequence_length, initial_state=initial_state_fw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory, time_major=time_major,
                scope=fw_scope)

        def reverse(x):
            x = ops.convert_to_tensor(x)
            if not time_major:
                x = _transpose_batch_time(x)
            if sequence_length is None:
                x = array_ops.reverse(x, axis=[0])
            else:
                x = _reverse_sequence(x, sequence_length)
            return x if time_major else _transpose_batch_time(x)

        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(reverse, inputs)
            tmp, output_state_bw = dynamic_rnn(
                cell_bw, reversed_inputs, sequence_length=sequence_length, initial_state=initial_state_bw,
                dtype=dtype, parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
    output_bw = nest.map_structure(reverse, tmp)
    return (output_fw, output_bw), (output_state_fw, output_state_bw)


def _batched_zeros(batch_size, e):
    """Zeros of shape ``[batch_size] + shape(e)`` and ``e``'s dtype (a finished entry's emit in raw_rnn)."""
    if e.shape.is_fully_defined() and not isinstance(batch_size, ops.Tensor):
        return array_ops.zeros([batch_size] + e.shape.as_list(), e.dtype)
    shape = array_ops.concat([array_ops.reshape(batch_size, [1]), array_ops.shape(e)], 0)
    return array_ops.zeros(shape, e.dtype)


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """Runs ``cell`` in a ``tf.while_loop`` driven by ``loop_fn``, TF1's most general RNN.

    ``loop_fn(time, cell_output, cell_state, loop_state)`` returns ``(finished, next_input,
    next_cell_state, emit_output, next_loop_state)``; it is called once at time 0 with
    ``cell_output``, ``cell_state`` and ``loop_state`` None (giving the initial state, and the
    structure of what is emitted when ``emit_output`` is not None), then after every step. The loop
    stops when every batch entry is finished; a finished entry emits zeros and keeps its state.
    Returns ``(emit_ta, final_state, final_loop_state)``, ``emit_ta`` a (structure of)
    TensorArray(s) of the emitted values.
    """
    from ferroflow.ops.tensor_array_ops import TensorArray
    from ferroflow.ops.while_loop import while_loop

    assert_like_rnncell("cell", cell)
    if not callable(loop_fn):
        raise TypeError("loop_fn must be a callable")
    parallel_iterations = parallel_iterations or 32
    with vs.variable_scope(scope or "rnn"):
        time = ops.convert_to_tensor(0, dtype=dtypes.int32, name="time")
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(time, None, None, None)
        finished = ops.convert_to_tensor(finished)
        flat_input = [ops.convert_to_tensor(x) for x in nest.flatten(next_input)]
        static_batch = dimension_value(flat_input[0].shape[0]) if flat_input[0].shape.rank else None
        batch_size = static_batch if static_batch is not None else array_ops.shape(flat_input[0])[0]
        state = initial_state
        flat_state = nest.flatten(state)
        if emit_structure is not None:
            flat_emit = [ops.convert_to_tensor(e) for e in nest.flatten(emit_structure)]
            emit_dtypes = [e.dtype for e in flat_emit]
            # Each emitted value is [batch] + the shape of its entry in emit_structure (as TF1).
            zero_emit = nest.pack_sequence_as(emit_structure, [_batched_zeros(batch_size, e) for e in flat_emit])
        else:
            emit_structure = cell.output_size
            emit_dtypes = [ops.convert_to_tensor(flat_state[0]).dtype] * len(nest.flatten(emit_structure))
            zero_emit = _zero_state_tensors(emit_structure, batch_size, emit_dtypes[0])
        emit_tas = [TensorArray(d, size=0, dynamic_size=True, element_shape=z.shape)
                    for d, z in zip(emit_dtypes, nest.flatten(zero_emit))]
        has_loop_state = init_loop_state is not None

        def cond(time, finished, *_):
            return math_ops.logical_not(math_ops.reduce_all(finished))

        def body(time, finished, current_input, state, tas, loop_state):
            output, cell_state = cell(current_input, state)
            nest.assert_same_structure(state, cell_state)
            next_time = time + 1
            next_finished, next_input, next_state, emit, next_loop_state = loop_fn(
                next_time, output, cell_state, loop_state if has_loop_state else None)
            nest.assert_same_structure(state, next_state)
            emit = output if emit is None else emit
            nest.assert_same_structure(zero_emit, emit)

            def keep_if_finished(old, new):
                new = ops.convert_to_tensor(new)
                if new.shape.rank == 0:
                    return new
                return array_ops.where(finished, old, new)

            emit = nest.map_structure(keep_if_finished, zero_emit, emit)
            next_state = nest.map_structure(keep_if_finished, state, next_state)
            tas = [ta.write(time, e) for ta, e in zip(tas, nest.flatten(emit))]
            next_finished = math_ops.logical_or(finished, next_finished)
            return (next_time, next_finished, next_input, next_state, tas,
                    next_loop_state if has_loop_state else loop_state)

        loop_vars = (time, finished, next_input, state, emit_tas,
                     init_loop_state if has_loop_state else ops.convert_to_tensor(0, name="no_loop_state"))
        out = while_loop(cond, body, loop_vars, parallel_iterations=parallel_iterations,
                         swap_memory=swap_memory, return_same_structure=True)
        _, _, _, final_state, emit_tas, final_loop_state = out
        emit_ta = nest.pack_sequence_as(emit_structure, emit_tas)
        return emit_ta, final_state, final_loop_state if has_loop_state else None
