"""Write tests/fixtures/feature_column/: what real TensorFlow 2.21's ``tf.compat.v1.feature_column`` computes
for the cases in tests/python/_feature_column_cases.py, for tests/python/test_feature_column.py.

Outputs:
- ``vocab.txt``: the vocabulary file the cases read;
- ``examples.json``: the serialized ``tf.train.Example``s (base64) of the batch every case parses;
- ``values.npz``: the transformed ids of each categorical column (``ids/<case>/<part>``), the input_layer
  output (``input_layer/output``), the linear_model outputs per sparse combiner after deterministic weights
  are assigned (``linear_model/<combiner>``), the sequence columns' dense tensors and lengths
  (``sequence/<col>/<part>``), and the wide-and-deep run: initial variable values (``wide_deep/init/<var>``),
  losses of 5 training steps and the logits after them;
- ``meta.json``: variable names and shapes, collections, cols_to_vars and parse specs;
- ``wide_deep/model.ckpt*``: TensorFlow's checkpoint of the trained wide-and-deep model.

Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_feature_column_fixtures.py
"""

import base64
import json
import pathlib
import shutil
import sys
import types

import numpy as np
import tensorflow as tf
from tensorflow.python.feature_column import feature_column as fc_old
from tensorflow.python.feature_column import feature_column_v2 as fc_v2
from tensorflow.python.feature_column import sequence_feature_column as sfc

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))
import _feature_column_cases as cases  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
fc = tf1.feature_column
OUT = ROOT / "tests" / "fixtures" / "feature_column"


def _sequence_dense(column, features, builder):
    # TF 2.21's sequence_numeric_column is a v2-only column: its dense tensor comes from the v2 API.
    if isinstance(column, sfc.SequenceNumericColumn):
        return column.get_sequence_dense_tensor(fc_v2.FeatureTransformationCache(features), None)
    return column._get_sequence_dense_tensor(builder)


PRIV = types.SimpleNamespace(LazyBuilder=fc_old._LazyBuilder, sequence_dense=_sequence_dense,
                             make_parse_example_spec=tf.feature_column.make_parse_example_spec)
STEPS = 5


def serialize(example):
    feats = {}
    for key, (kind, vals) in example.items():
        if kind == "f":
            feats[key] = tf.train.Feature(float_list=tf.train.FloatList(value=vals))
        elif kind == "i":
            feats[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=vals))
        else:
            feats[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=vals))
    return tf.train.Example(features=tf.train.Features(feature=feats)).SerializeToString()


def run(fetches, init=True, after_init=None):
    with tf1.Session() as sess:
        if init:
            sess.run([tf1.global_variables_initializer(), tf1.tables_initializer()])
        if after_init:
            after_init(sess)
        return sess.run(fetches)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    vocab = str(OUT / "vocab.txt")
    (OUT / "vocab.txt").write_text("\n".join(cases.VOCAB_FILE_LINES) + "\n")
    serialized = [serialize(e) for e in cases.EXAMPLES]
    values, meta = {}, {}

    with tf1.Graph().as_default():
        for k, v in run(cases.ids_fetches(tf1, fc, PRIV, serialized, vocab)).items():
            values[f"ids/{k}"] = v

    with tf1.Graph().as_default():
        fetches, m = cases.input_layer_case(tf1, fc, serialized, vocab)
        values["input_layer/output"] = run(fetches)["output"]
        m["global"] = [(v.name, v.get_shape().as_list()) for v in tf1.global_variables()]
        m["trainable"] = [v.name for v in tf1.trainable_variables()]
        m["model"] = [v.name for v in tf1.get_collection(tf1.GraphKeys.MODEL_VARIABLES)]
        m["my_weights"] = [v.name for v in tf1.get_collection("my_weights")]
        meta["input_layer"] = m

    meta["linear_model"] = {}
    for combiner in ("sum", "mean", "sqrtn"):
        with tf1.Graph().as_default():
            fetches, m = cases.linear_model_case(tf1, fc, serialized, vocab, combiner)
            values[f"linear_model/{combiner}"] = run(fetches, after_init=lambda s: cases.assign_all(tf1, s))["output"]
            m["global"] = [(v.name, v.get_shape().as_list()) for v in tf1.global_variables()]
            m["model"] = [v.name for v in tf1.get_collection(tf1.GraphKeys.MODEL_VARIABLES)]
            meta["linear_model"][combiner] = m

    with tf1.Graph().as_default():
        meta["scope_names"] = cases.scope_names_case(tf1, fc, vocab)

    meta["sequence_spec"] = cases.sequence_spec(tf1, fc, PRIV)
    with tf1.Graph().as_default():
        for k, v in run(cases.sequence_case(tf1, fc, PRIV, serialized)).items():
            values[f"sequence/{k}"] = v

    with tf1.Graph().as_default():
        tf1.set_random_seed(3)
        ser = tf1.placeholder(tf.string, [None])
        logits, loss, train = cases.wide_deep_model(tf1, fc, ser, vocab)
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.tables_initializer()])
            model_vars = [v for v in tf1.global_variables() if "Ftrl" not in v.name and "Adagrad" not in v.name]
            for v, val in zip(model_vars, sess.run(model_vars)):
                values[f"wide_deep/init/{v.op.name}"] = val
            losses = []
            for _ in range(STEPS):
                losses.append(sess.run([loss, train], {ser: serialized})[0])
            values["wide_deep/losses"] = np.array(losses, np.float32)
            values["wide_deep/logits"] = sess.run(logits, {ser: serialized})
            ckpt_dir = OUT / "wide_deep"
            shutil.rmtree(ckpt_dir, ignore_errors=True)
            ckpt_dir.mkdir()
            saver.save(sess, str(ckpt_dir / "model.ckpt"), write_meta_graph=False, write_state=False)
        meta["wide_deep"] = {"global": [(v.name, v.get_shape().as_list()) for v in tf1.global_variables()]}

    np.savez_compressed(OUT / "values.npz", **{k: (v.astype(bytes) if v.dtype == object else v)
                                               for k, v in values.items()})
    (OUT / "examples.json").write_text(json.dumps([base64.b64encode(s).decode() for s in serialized], indent=0))
    (OUT / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    print(f"wrote {len(values)} arrays to {OUT}")


if __name__ == "__main__":
    main()
