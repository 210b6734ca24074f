"""Regenerate tests/fixtures/block_lstm/ with real TensorFlow (never needed by the tests).

    /work/tfvenv/bin/python tools/make_block_lstm_fixtures.py

Runs ``tf.raw_ops.BlockLSTM`` / ``BlockLSTMV2`` and their gradient ops on seeded random inputs and
writes ``block_lstm.npz``: for each case ``<case>/<name>`` arrays: the inputs (``seq_len_max``,
``x``, ``cs_prev``, ``h_prev``, ``w``, ``wci``, ``wcf``, ``wco``, ``b``), the attrs
(``forget_bias``, ``cell_clip``, ``use_peephole``), the seven forward outputs, random ``cs_grad`` and
``h_grad``, and the eight outputs of the gradient op fed them (``x_grad`` ... ``b_grad``).
TensorFlow leaves ``i, f, o, ci, co`` past ``seq_len_max`` uninitialized, so the fixtures hold
zeros there (``cs`` and ``h`` are zeros there in TensorFlow too).
"""

from __future__ import annotations

import os
import pathlib

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "block_lstm"

# name: (op, time, batch, input, cell, seq_len_max, forget_bias, cell_clip, use_peephole)
CASES = {
    "v1_peephole_clip": ("BlockLSTM", 5, 3, 4, 6, 5, 0.7, 0.8, True),
    "v1_short": ("BlockLSTM", 6, 2, 3, 5, 4, 1.0, 3.0, False),
    "v1_no_clip": ("BlockLSTM", 4, 3, 7, 20, 4, 1.0, -1.0, False),
    "v2_peephole": ("BlockLSTMV2", 5, 4, 3, 6, 5, None, 0.0, True),
    "v2_short_clip": ("BlockLSTMV2", 5, 2, 4, 3, 2, None, 0.5, False),
}

OUTPUTS = ("i", "cs", "f", "o", "ci", "co", "h")
GRADS = ("x_grad", "cs_prev_grad", "h_prev_grad", "w_grad", "wci_grad", "wcf_grad", "wco_grad", "b_grad")

README = """# Fixtures for the fused LSTM ops

Written by `tools/make_block_lstm_fixtures.py` with TensorFlow {tf_version}, NumPy {np_version},
on CPU: `block_lstm.npz` holds, per case (`<case>/<name>`), the inputs and attrs of
`tf.raw_ops.BlockLSTM` or `BlockLSTMV2`, its seven outputs (`i, f, o, ci, co` zeroed past
`seq_len_max`, where TensorFlow leaves them uninitialized), random `cs_grad` and `h_grad`, and the
outputs of `BlockLSTMGrad` / `BlockLSTMGradV2` for them. Used by `tests/python/test_block_lstm.py`,
which never imports TensorFlow.
"""


def main():
    import tensorflow as tf

    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261128)
    out = {}
    for name, (op, t, b, n_in, c, slm, forget_bias, cell_clip, peephole) in CASES.items():
        f32 = lambda *shape, scale=1.0: (rng.standard_normal(shape) * scale).astype(np.float32)  # noqa: E731
        args = dict(
            seq_len_max=np.int64(slm), x=f32(t, b, n_in), cs_prev=f32(b, c), h_prev=f32(b, c),
            w=f32(n_in + c, 4 * c, scale=0.5), wci=f32(c, scale=0.5), wcf=f32(c, scale=0.5),
            wco=f32(c, scale=0.5), b=f32(4 * c, scale=0.5),
        )
        attrs = dict(cell_clip=cell_clip, use_peephole=peephole)
        if forget_bias is not None:
            attrs["forget_bias"] = forget_bias
        fwd = getattr(tf.raw_ops, op)(**args, **attrs)
        fwd = [np.array(v) for v in fwd]
        for j, key in enumerate(OUTPUTS):
            if key not in ("cs", "h"):
                fwd[j][slm:] = 0.0
        cs_grad, h_grad = f32(t, b, c), f32(t, b, c)
        grads = getattr(tf.raw_ops, op.replace("LSTM", "LSTMGrad"))(
            **args, **dict(zip(OUTPUTS, fwd)), cs_grad=cs_grad, h_grad=h_grad, use_peephole=peephole,
        )
        record = dict(args, **dict(zip(OUTPUTS, fwd)), cs_grad=cs_grad, h_grad=h_grad,
                      **{k: np.array(v) for k, v in zip(GRADS, grads)})
        record["forget_bias"] = np.float32(0.0 if forget_bias is None else forget_bias)
        record["cell_clip"] = np.float32(cell_clip)
        record["use_peephole"] = np.bool_(peephole)
        record["op"] = np.array(op)
        for key, value in record.items():
            out[f"{name}/{key}"] = np.asarray(value)
    np.savez_compressed(OUT / "block_lstm.npz", **out)
    (OUT / "README.md").write_text(README.format(tf_version=tf.__version__, np_version=np.__version__))
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
