"""TF 1.x guide "Variables" and "Sharing variables": tf.get_variable with initializers, shapes and dtypes,
collections (trainable=False, tf.GraphKeys.LOCAL_VARIABLES, a custom collection through add_to_collection),
tf.get_variable with a partitioner (fixed_size_partitioner, variable_axis_size_partitioner) read whole,
the conv_relu example shared through tf.variable_scope names and reuse=True / scope.reuse_variables() /
tf.AUTO_REUSE, tf.get_variable_scope(), a scope object reopened, initializer inheritance from the scope,
v.assign / tf.assign_add / v.assign_sub with read_value, v.initialized_value() for dependent initializers,
tf.report_uninitialized_variables, tf.variables_initializer on a subset, and tf.local_variables_initializer.

Values come from constant initializers, so everything is deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 1


def main(tf, steps=1):
    tf.reset_default_graph()
    out = {}
    my_variable = tf.get_variable("my_variable", [1, 2, 3])
    my_int_variable = tf.get_variable("my_int_variable", [1, 2, 3], dtype=tf.int32,
                                      initializer=tf.zeros_initializer)
    other_variable = tf.get_variable("other_variable", dtype=tf.int32, initializer=tf.constant([23, 42]))
    my_local = tf.get_variable("my_local", shape=(), collections=[tf.GraphKeys.LOCAL_VARIABLES])
    my_non_trainable = tf.get_variable("my_non_trainable", shape=(), trainable=False)
    tf.add_to_collection("my_collection_name", my_local)
    out["shapes"] = [my_variable.shape.as_list(), my_int_variable.dtype.base_dtype.name,
                     other_variable.shape.as_list()]
    out["collections"] = {
        "local": [v.name for v in tf.local_variables()],
        "trainable": [v.name for v in tf.trainable_variables()],
        "global": [v.name for v in tf.global_variables()],
        "custom": [v.name for v in tf.get_collection("my_collection_name")],
        "non_trainable": [my_non_trainable in tf.trainable_variables(), my_non_trainable.trainable],
    }

    part = tf.get_variable("partitioned", [10, 4], initializer=tf.glorot_uniform_initializer(seed=3),
                           partitioner=tf.fixed_size_partitioner(3))
    part2 = tf.get_variable("partitioned2", [64, 8], initializer=tf.ones_initializer(),
                            partitioner=tf.variable_axis_size_partitioner(max_shard_bytes=512))
    out["partitions"] = [[v.name for v in part], [v.get_shape().as_list() for v in part2]]

    def conv_relu(input, kernel_shape, bias_shape):  # noqa: A002 (the guide's names)
        weights = tf.get_variable("weights", kernel_shape, initializer=tf.constant_initializer(0.1))
        biases = tf.get_variable("biases", bias_shape, initializer=tf.constant_initializer(0.0))
        conv = tf.nn.conv2d(input, weights, strides=[1, 1, 1, 1], padding="SAME")
        return tf.nn.relu(conv + biases)

    def my_image_filter(input_images):
        with tf.variable_scope("conv1"):
            relu1 = conv_relu(input_images, [3, 3, 1, 2], [2])
        with tf.variable_scope("conv2"):
            return conv_relu(relu1, [3, 3, 2, 2], [2])

    images = tf.constant(np.arange(2 * 5 * 5, dtype=np.float32).reshape(2, 5, 5, 1) / 50.0)
    with tf.variable_scope("model"):
        output1 = my_image_filter(images)
    with tf.variable_scope("model", reuse=True):
        output2 = my_image_filter(images)
    with tf.variable_scope("model2") as scope:
        output3 = my_image_filter(images)
        scope.reuse_variables()
        output4 = my_image_filter(images)
    with tf.variable_scope(scope, reuse=True):
        output5 = my_image_filter(images)
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a1 = tf.get_variable("v", [1], initializer=tf.constant_initializer(5.0))
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a2 = tf.get_variable("v", [1])
    try:
        with tf.variable_scope("model"):
            my_image_filter(images)
        out["duplicate"] = "created"
    except ValueError as e:
        out["duplicate"] = str(e).splitlines()[0]
    try:
        with tf.variable_scope("fresh", reuse=True):
            tf.get_variable("missing", [1])
        out["missing"] = "created"
    except ValueError as e:
        out["missing"] = str(e).splitlines()[0]
    with tf.variable_scope("init_scope", initializer=tf.constant_initializer(0.4)):
        inherited = tf.get_variable("inherited", [2])
        with tf.variable_scope("inner"):
            inherited_inner = tf.get_variable("v", [1])
    out["scope_names"] = [tf.get_variable_scope().name, scope.name, scope.original_name_scope]
    out["shared"] = [a1 is a2, output1.name, output2.name, output3.name, output4.name, output5.name]

    v = tf.get_variable("v", shape=(), initializer=tf.zeros_initializer())
    assignment = v.assign_add(1)
    w = tf.get_variable("w", initializer=v.initialized_value() + 1)
    counter = tf.Variable(10, name="counter")
    inc = tf.assign_add(counter, 5)
    dec = counter.assign_sub(2, read_value=False)
    setv = counter.assign(100)
    unused = tf.Variable(3.0, name="unused")

    with tf.Session() as sess:
        out["uninitialized_before"] = sorted(x.decode() for x in sess.run(tf.report_uninitialized_variables()))
        sess.run(tf.variables_initializer([v, w, counter]))
        out["uninitialized_after_subset"] = sorted(
            x.decode() for x in sess.run(tf.report_uninitialized_variables()))
        sess.run(tf.global_variables_initializer())
        sess.run(tf.local_variables_initializer())
        out["assign_add"] = [float(sess.run(assignment)), float(sess.run(assignment)), float(v.eval())]
        out["w"] = float(sess.run(w))
        out["counter"] = [int(sess.run(inc)), sess.run(dec), int(sess.run(counter)), int(sess.run(setv))]
        out["dec_type"] = type(dec).__name__ if dec is not None else None
        out["outputs"] = [float(np.sum(sess.run(t))) for t in (output1, output2, output3, output4, output5)]
        out["part_value"] = sess.run(part.as_tensor() if hasattr(part, "as_tensor") else tf.concat(list(part), 0))[
            :, 0].tolist()
        out["inherited"] = sess.run(inherited).tolist() + sess.run(inherited_inner).tolist()
        out["unused"] = float(sess.run(unused))
    out["all_vars"] = [x.name for x in tf.global_variables()]
    return out


if __name__ == "__main__":
    run_as_script(main, 1)
