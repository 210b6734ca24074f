"""Recurrent networks over ``tf.nn.rnn_cell`` cells (TensorFlow 1's ``python/ops/rnn.py``).

``static_rnn`` unrolls a cell over a Python list of time steps (one set of ops
per step, variables shared through the ``rnn`` variable scope);
``static_bidirectional_rnn`` runs a forward and a backward cell over the same
list. With ``sequence_length``, every step at or past a sequence's end
outputs zeros and passes that sequence's state through unchanged, so the
final state is the state at each sequence's own last step.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.tensor_shape import TensorShape, dimension_at_index, dimension_value, unknown_shape
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops import variable_scope as vs
from ferroflow.ops.rnn_cell_impl import _zero_state_tensors, assert_like_rnncell

__all__ = ["static_bidirectional_rnn", "static_rnn"]


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


def _dims(size):
    return [size] if isinstance(size, int) else TensorShape(size).as_list()


def _reverse_sequence(x, lengths):
    """``x`` (``[time, batch, ...]``) with the first ``lengths[b]`` steps of each batch entry ``b``
    reversed (TensorFlow's ``reverse_sequence(x, lengths, seq_axis=0, batch_axis=1)``), as one
    ``gather_nd``."""
    with ops.name_scope("ReverseSequence", values=[x, lengths]):
        steps = dimension_value(x.shape[0])
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
