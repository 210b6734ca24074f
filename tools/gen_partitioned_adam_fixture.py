"""Write tests/fixtures/checkpoints/partitioned_adam with real TensorFlow (never needed by the tests).

Run with a Python that has TensorFlow installed:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/gen_partitioned_adam_fixture.py \
        tests/fixtures/checkpoints/partitioned_adam

The model: ``emb`` of shape [7, 3] in 3 parts (fixed_size_partitioner) and a
plain ``bias`` of shape [3], trained 2 Adam steps on
``sum((emb - target)^2) + sum((bias - 2)^2)`` from fixed starting values.
Written twice from the same session:

* ``saver.*``: ``tf.compat.v1.train.Saver().save`` (name-based; the parts
  and their Adam slots are slices of ``emb``, ``emb/Adam``, ``emb/Adam_1``);
* ``obj.*``: ``tf.train.Checkpoint(parts=list(emb), bias=bias,
  optimizer=opt).write`` (object-based; one unsliced key per part).

``manifest.json`` lists both files' variables (name, dtype, shape) and the
object graph; ``values.npz`` holds every logical tensor as TF reads it back.
"""

import json
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf
from google.protobuf import json_format
from tensorflow.core.protobuf import trackable_object_graph_pb2

SHAPE = [7, 3]
PARTS = 3
LR = 0.05
STEPS = 2


def start_values():
    emb = (np.arange(21, dtype=np.float32).reshape(SHAPE) - 10.0) / 4.0
    target = np.linspace(-1.0, 1.0, 21, dtype=np.float32).reshape(SHAPE)
    bias = np.array([0.5, -1.5, 3.0], np.float32)
    return emb, target, bias


def main(out):
    tf.disable_eager_execution()
    os.makedirs(out, exist_ok=True)
    emb0, target, bias0 = start_values()
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", SHAPE, initializer=tf.zeros_initializer(),
                              partitioner=tf.fixed_size_partitioner(PARTS))
        bias = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
        opt = tf.train.AdamOptimizer(LR)
        loss = tf.reduce_sum(tf.square(emb.as_tensor() - target)) + tf.reduce_sum(tf.square(bias - 2.0))
        train = opt.minimize(loss)
        parts = list(emb)
        setters = [p.assign(emb0[p._save_slice_info.var_offset[0]:][:p.shape[0]]) for p in parts]
        setters.append(bias.assign(bias0))
        ckpt = tf.train.Checkpoint(parts=parts, bias=bias, optimizer=opt)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(setters)
            for _ in range(STEPS):
                sess.run(train)
            saver.save(sess, os.path.join(out, "saver"), write_meta_graph=False, write_state=False)
            ckpt.write(os.path.join(out, "obj"), session=sess)
    manifest = {"shape": SHAPE, "parts": PARTS, "learning_rate": LR, "steps": STEPS, "files": {}}
    values = {}
    for name in ("saver", "obj"):
        reader = tf.train.load_checkpoint(os.path.join(out, name))
        dtypes = reader.get_variable_to_dtype_map()
        entries = []
        for key, shape in sorted(reader.get_variable_to_shape_map().items()):
            entry = {"name": key, "dtype": dtypes[key].name, "shape": shape}
            if key == "_CHECKPOINTABLE_OBJECT_GRAPH":
                graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(reader.get_tensor(key))
                entry["parsed_object_graph"] = json_format.MessageToDict(graph, preserving_proto_field_name=True)
            else:
                entry["npz_key"] = f"{name}:{key}"
                values[entry["npz_key"]] = reader.get_tensor(key)
            entries.append(entry)
        manifest["files"][name] = entries
    np.savez(os.path.join(out, "values.npz"), **values)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
