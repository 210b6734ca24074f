"""Regenerate tests/fixtures/meta_graph/ with real TensorFlow (never needed by the tests).

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/gen_meta_graph_fixtures.py

Builds ``tests/python/_meta_graph_model.py``'s model with
``tensorflow.compat.v1`` (graph mode, reference variables), initializes it
and writes, into tests/fixtures/meta_graph/:

* ``model.ckpt.{index,data-00000-of-00001,meta}``: ``Saver.save(...,
  strip_default_attrs=True, save_debug_info=True)``, so the ``.meta`` is a
  meta graph TensorFlow stripped of its default-valued attrs;
* ``model.ckpt.debug``: the ``GraphDebugInfo`` TensorFlow wrote next to it;
* ``expected.json``: TensorFlow's version, every node's attr names after
  stripping (``stripped_attrs``) and before (``full_attrs``), and the logits
  and loss for ``_meta_graph_model.batch()``.
"""

import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "meta_graph"


def main():
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import tensorflow.compat.v1 as tf

    import _meta_graph_model as model

    tf.disable_eager_execution()
    tf.disable_resource_variables()
    OUT.mkdir(parents=True, exist_ok=True)
    for f in OUT.glob("model.ckpt*"):
        f.unlink()
    with tf.Graph().as_default():
        x, labels, logits, loss = model.build(tf)
        saver = tf.train.Saver()
        full = saver.export_meta_graph()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            bx, bl = model.batch()
            out_logits, out_loss = sess.run([logits, loss], {x: bx, labels: bl})
            saver.save(
                sess,
                str(OUT / "model.ckpt"),
                write_state=False,
                strip_default_attrs=True,
                save_debug_info=True,
            )
    from tensorflow.core.protobuf import meta_graph_pb2

    stripped = meta_graph_pb2.MetaGraphDef.FromString((OUT / "model.ckpt.meta").read_bytes())
    doc = {
        "tensorflow_version": tf.__version__,
        "stripped_default_attrs": stripped.meta_info_def.stripped_default_attrs,
        "stripped_attrs": {n.name: {"op": n.op, "attrs": sorted(n.attr)} for n in stripped.graph_def.node},
        "full_attrs": {n.name: {"op": n.op, "attrs": sorted(n.attr)} for n in full.graph_def.node},
        "logits": out_logits.tolist(),
        "loss": float(out_loss),
    }
    with open(OUT / "expected.json", "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
