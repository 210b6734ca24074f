"""TensorFlow's fused LSTM ops over a whole sequence, as ``tf.raw_ops`` names them.

``BlockLSTM`` runs an LSTM cell over the ``[time, batch, input]`` input ``x``
from the state ``(cs_prev, h_prev)`` with the weight ``w``
(``[input + cell, 4 * cell]``, gate blocks ``i, ci, f, o``), the bias ``b``
and, with ``use_peephole``, the peephole weights ``wci, wcf, wco``; it
returns the seven ``[time, batch, cell]`` sequences ``i, cs, f, o, ci, co,
h``. Steps at or past ``seq_len_max`` are zeros. ``forget_bias`` is added to
the forget gate, and the cell state is clipped to ``±cell_clip`` when that is
positive. ``BlockLSTMV2`` orders the gate blocks ``i, f, ci, o`` and has no
``forget_bias``. The gradient ops take the forward op's inputs and outputs and
the gradients of ``cs`` and ``h``. ``tf.gradients`` of ``BlockLSTM(V2)``
builds ``BlockLSTMGrad(V2)``, as in TensorFlow.

The kernels are float32 (float16 raises ``UnimplementedError`` when run).
"""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make_op

__all__ = ["BlockLSTM", "BlockLSTMGrad", "BlockLSTMGradV2", "BlockLSTMV2"]

_BlockLSTMOutput = collections.namedtuple("BlockLSTM", ["i", "cs", "f", "o", "ci", "co", "h"])
_BlockLSTMGradOutput = collections.namedtuple(
    "BlockLSTMGrad",
    ["x_grad", "cs_prev_grad", "h_prev_grad", "w_grad", "wci_grad", "wcf_grad", "wco_grad", "b_grad"],
)

_NAMES = ("x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b")
_GRAD_NAMES = ("i", "cs", "f", "o", "ci", "co", "h", "cs_grad", "h_grad")


def _inputs(seq_len_max, values, names):
    """``seq_len_max`` as int64, then ``values`` converted to the dtype of the first."""
    x = ops.convert_to_tensor(values[0], name=names[0])
    out = [ops.convert_to_tensor(seq_len_max, dtype=dtypes.int64, name="seq_len_max"), x]
    for v, n in zip(values[1:], names[1:]):
        out.append(ops.convert_to_tensor(v, dtype=x.dtype.base_dtype, name=n))
    return out


def _forward(op_type, seq_len_max, values, attrs, name):
    inputs = _inputs(seq_len_max, values, _NAMES)
    op = make_op(op_type, inputs, attrs, name=name or op_type)
    return _BlockLSTMOutput(*op.outputs)


def BlockLSTM(*, seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias=1, cell_clip=3,  # noqa: N802
              use_peephole=False, name=None):
    """The LSTM over every step of ``x`` in one op (gate blocks ``i, ci, f, o``); see the module docs."""
    return _forward("BlockLSTM", seq_len_max, (x, cs_prev, h_prev, w, wci, wcf, wco, b), {
        "forget_bias": float(forget_bias), "cell_clip": float(cell_clip), "use_peephole": bool(use_peephole),
    }, name)


def BlockLSTMV2(*, seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, cell_clip=0, use_peephole=False,  # noqa: N802
                name=None):
    """``BlockLSTM`` with gate blocks ``i, f, ci, o`` and no forget bias."""
    return _forward("BlockLSTMV2", seq_len_max, (x, cs_prev, h_prev, w, wci, wcf, wco, b), {
        "cell_clip": float(cell_clip), "use_peephole": bool(use_peephole),
    }, name)


def _backward(op_type, seq_len_max, values, use_peephole, name):
    inputs = _inputs(seq_len_max, values, _NAMES + _GRAD_NAMES)
    op = make_op(op_type, inputs, {"use_peephole": bool(use_peephole)}, name=name or op_type)
    return _BlockLSTMGradOutput(*op.outputs)


def BlockLSTMGrad(*, seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, h,  # noqa: N802
                  cs_grad, h_grad, use_peephole, name=None):
    """The gradients of ``BlockLSTM``'s inputs ``x`` through ``b`` from those of its ``cs`` and ``h``."""
    values = (x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, h, cs_grad, h_grad)
    return _backward("BlockLSTMGrad", seq_len_max, values, use_peephole, name)


def BlockLSTMGradV2(*, seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, h,  # noqa: N802
                    cs_grad, h_grad, use_peephole, name=None):
    """``BlockLSTMGrad`` for ``BlockLSTMV2``."""
    values = (x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, h, cs_grad, h_grad)
    return _backward("BlockLSTMGradV2", seq_len_max, values, use_peephole, name)
