"""Regenerate tests/fixtures/rnn_cell/ with real TensorFlow (never needed by the tests).

    TF_USE_LEGACY_KERAS=1 TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_rnn_cell_fixtures.py

Builds every case of ``tests/python/_rnn_cell_cases.py`` in one graph with
``tensorflow.compat.v1`` (v2 behaviour disabled; ``TF_USE_LEGACY_KERAS=1``
makes ``tf.nn.rnn_cell`` TF1's cells from tf-keras), gives each variable the
value ``_rnn_cell_cases.variable_value(name, shape)``, and writes

* ``model.ckpt.index``, ``model.ckpt.data-00000-of-00001``: a TF checkpoint of
  every case's variables (``tf.train.Saver``, V2 format);
* ``expected.json``: per case, the variables TensorFlow created (name, shape,
  in creation order); and the argument lists of ``tf.compat.v1.nn.rnn_cell``'s
  classes and of ``static_rnn``/``static_bidirectional_rnn``;
* ``expected.npy``: one float32 vector holding, per case, the outputs, final
  states, loss and gradients (of the loss with respect to every trainable
  variable and every input) for ``_rnn_cell_cases.feed_values(case)``;
  ``expected.json``'s ``arrays`` lists each one's key, offset and shape.
"""

import inspect
import json
import os
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "rnn_cell"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _rnn_cell_cases as cases  # noqa: E402


def _arg_names(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    return [p.name for p in inspect.signature(target).parameters.values() if p.name != "self"]


def main():
    if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
        sys.exit("set TF_USE_LEGACY_KERAS=1 (tf.nn.rnn_cell must be tf-keras's TF1 cells)")
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"tensorflow_version": tf.__version__, "cases": {}, "signatures": {}}
    arrays = {}
    for name in ("BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell", "LSTMCell",
                 "MultiRNNCell", "RNNCell", "ResidualWrapper"):
        meta["signatures"][f"nn.rnn_cell.{name}"] = _arg_names(getattr(tf.nn.rnn_cell, name))
    for name in ("static_rnn", "static_bidirectional_rnn"):
        meta["signatures"][f"nn.{name}"] = _arg_names(getattr(tf.nn, name))

    with tf.Graph().as_default():
        tf.set_random_seed(cases.SEED)
        built = {}
        for case in cases.CASES:
            before = set(tf.global_variables())
            built[case] = cases.build(tf, case)
            new = [v for v in tf.global_variables() if v not in before]
            meta["cases"][case] = {"variables": [[v.op.name, v.shape.as_list()] for v in new]}
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in tf.global_variables():
                v.load(cases.variable_value(v.op.name, v.shape.as_list()), sess)
            for case, (xs, outputs, states, loss) in built.items():
                feed = dict(zip(xs, cases.feed_values(case)))
                tvars = [v for v in tf.trainable_variables() if v.op.name.startswith(case + "/")]
                meta["cases"][case]["trainable"] = [v.op.name for v in tvars]
                grads = tf.gradients(loss, tvars + xs)
                out, st, lv, gv = sess.run((outputs, states, loss, grads), feed)
                for i, a in enumerate(out):
                    arrays[f"{case}/output_{i}"] = a
                for i, a in enumerate(st):
                    arrays[f"{case}/state_{i}"] = a
                arrays[f"{case}/loss"] = np.asarray(lv, np.float32)
                for i, a in enumerate(gv):
                    arrays[f"{case}/grad_{i}"] = a
                meta["cases"][case].update(outputs=len(out), states=len(st), grads=len(gv))
            saver.save(sess, str(OUT / "model.ckpt"), write_meta_graph=False, write_state=False)
    meta["arrays"] = []
    offset = 0
    for key, a in arrays.items():
        a = np.asarray(a, np.float32)
        meta["arrays"].append([key, offset, list(a.shape)])
        offset += a.size
    blob = np.concatenate([np.asarray(a, np.float32).reshape(-1) for a in arrays.values()])
    np.save(OUT / "expected.npy", blob)
    text = json.dumps(meta, indent=None, separators=(",", ":"))
    # One case, signature or array per line keeps diffs readable.
    text = text.replace('},"', '},\n"').replace('],[', '],\n[')
    (OUT / "expected.json").write_text(text + "\n")
    print(f"wrote {OUT}: {len(meta['cases'])} cases, {len(arrays)} arrays")


if __name__ == "__main__":
    main()
