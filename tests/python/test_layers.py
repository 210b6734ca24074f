"""``tf.layers`` against TensorFlow 2.21: values, gradients, moving averages, variable names, checkpoints.

The graphs are ``_layers_cases.py``'s; the expected values were computed by real TensorFlow
(``tools/make_layers_fixtures.py``, fixtures in ``tests/fixtures/layers``).
"""

import pathlib

import numpy as np
import pytest

import _layers_cases as cases
import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "layers"


def _run(fn):
    """What ``tools/make_layers_fixtures.run_case`` records, computed by ferroflow."""
    g = tf.Graph()
    out = {}
    with g.as_default():
        tf.set_random_seed(0)
        runs = fn(tf)
        gvars = tf.global_variables()
        out["global_variables"] = [v.name for v in gvars]
        out["trainable_variables"] = [v.name for v in tf.trainable_variables()]
        out["update_ops"] = [u.name for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS)]
        out["regularization_losses"] = [t.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)]
        for v in gvars:
            out[v.name + "__shape"] = v.shape.as_list()
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            for i, (fetches, feed) in enumerate(runs):
                values = sess.run(fetches, feed)
                for key, value in values.items():
                    if not isinstance(fetches[key], tf.Operation):
                        out[f"{i}/{key}"] = np.asarray(value)
    return out


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_matches_tensorflow(name):
    expected = dict(np.load(FIXTURES / f"{name}.npz"))
    got = _run(cases.CASES[name])
    for key in ("global_variables", "trainable_variables", "regularization_losses"):
        assert got[key] == expected[key].tolist(), key
    # TF names a tensor-`training` update after its tf.cond ("bn/cond_2/Merge"); the layer scope matches.
    assert [u.split("/")[0] for u in got["update_ops"]] == [u.split("/")[0] for u in expected["update_ops"]]
    value_keys = sorted(k for k in expected if "/" in k and not k.endswith("__shape")
                        and k not in ("global_variables",))
    assert sorted(k for k in got if k in expected) == sorted(expected)
    rtol, atol = cases.TOLERANCE
    for key in sorted(expected):
        if key.endswith("__shape"):
            assert list(got[key]) == expected[key].tolist(), key
    for key in value_keys:
        if key.endswith("__shape"):
            continue
        np.testing.assert_allclose(got[key], expected[key], rtol=rtol, atol=atol, err_msg=key)
        assert got[key].shape == expected[key].shape, key


def test_update_ops_gate_the_train_op_and_moving_averages_follow():
    """The TF1 idiom: run UPDATE_OPS with the train op; moving stats move only when training."""
    with tf.Graph().as_default():
        x = tf.constant(np.arange(24, dtype=np.float32).reshape(6, 4))
        training = tf.placeholder_with_default(True, [])
        y = tf.layers.batch_normalization(x, training=training, momentum=0.5)
        mm = tf.global_variables()[2]
        assert mm.op.name == "batch_normalization/moving_mean"
        assert mm not in tf.trainable_variables()
        loss = tf.reduce_sum(tf.square(y))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(mm), 0.5 * np.arange(24).reshape(6, 4).mean(0), rtol=1e-6)
            sess.run(train, {training: False})
            np.testing.assert_allclose(sess.run(mm), 0.5 * np.arange(24).reshape(6, 4).mean(0), rtol=1e-6)


def test_dropout_training_tensor_drops_and_scales():
    with tf.Graph().as_default():
        x = tf.ones([200, 50])
        training = tf.placeholder_with_default(False, [])
        y = tf.layers.dropout(x, rate=0.25, training=training, seed=3)
        assert y.shape.as_list() == [200, 50]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), np.ones([200, 50]))
            dropped = sess.run(y, {training: True})
        assert set(np.unique(dropped).tolist()) <= {0.0, np.float32(1 / 0.75)}
        assert 0.2 < (dropped == 0).mean() < 0.3


def test_tensorflow_checkpoint_restores_into_the_same_model():
    with tf.Graph().as_default():
        x, logits = cases.checkpoint_model(tf)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, str(FIXTURES / "checkpoint" / "model.ckpt"))
            got = sess.run(logits, {x: cases.checkpoint_input()})
    expected = np.load(FIXTURES / "checkpoint" / "expected.npz")["logits"]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_layer_object_reuses_its_variables_and_reports_them():
    with tf.Graph().as_default():
        v = tf.placeholder(tf.float32, [None, 5])
        layer = tf.layers.Dense(3, activation=tf.nn.relu, name="fc")
        with pytest.raises(ValueError, match="has not been used yet"):
            _ = layer.scope_name
        a, b = layer(v), layer(v)
        assert (a.name, b.name) == ("fc/Relu:0", "fc/Relu_1:0")
        assert layer.scope_name == "fc"
        assert [w.name for w in layer.trainable_weights] == ["fc/kernel:0", "fc/bias:0"]
        assert layer.count_params() == 18
        bn = tf.layers.BatchNormalization()
        bn(v, training=True)
        assert [w.name for w in bn.non_trainable_weights] == ["batch_normalization/moving_mean:0",
                                                               "batch_normalization/moving_variance:0"]
        assert [u.name for u in bn.updates] == ["batch_normalization/AssignMovingAvg",
                                                "batch_normalization/AssignMovingAvg_1"]


def test_bad_input_raises_typed_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="last dimension of the inputs to a Dense layer should be defined"):
            tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
        with pytest.raises(ValueError, match="expected min_ndim=4"):
            tf.layers.conv2d(tf.placeholder(tf.float32, [None, 3]), 2, 3)
        with pytest.raises(ValueError, match="padding"):
            tf.layers.conv2d(tf.placeholder(tf.float32, [None, 4, 4, 3]), 2, 3, padding="full")
        with pytest.raises(ValueError, match="kernel_size"):
            tf.layers.conv2d(tf.placeholder(tf.float32, [None, 4, 4, 3]), 2, (3, 3, 3))
        with pytest.raises(NotImplementedError, match="renorm"):
            tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, 3]), renorm=True)
        with pytest.raises(ValueError, match="already exists"):
            v = tf.placeholder(tf.float32, [None, 3])
            tf.layers.dense(v, 2, name="twice")
            tf.layers.dense(v, 2, name="twice")
        with pytest.raises(TypeError, match="Keyword argument not understood"):
            tf.layers.Dense(2, nonsense=1)


def test_names_are_tensorflows():
    # dir(tf.compat.v1.layers) of TensorFlow 2.21 (tf-keras), less "experimental" (keras_style_scope).
    names = ["AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "BatchNormalization", "Conv1D", "Conv2D",
             "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "Dense", "Dropout", "Flatten", "InputSpec", "Layer",
             "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "SeparableConv1D", "SeparableConv2D",
             "average_pooling1d", "average_pooling2d", "average_pooling3d", "batch_normalization", "conv1d",
             "conv2d", "conv2d_transpose", "conv3d", "conv3d_transpose", "dense", "dropout", "flatten",
             "max_pooling1d", "max_pooling2d", "max_pooling3d", "separable_conv1d", "separable_conv2d"]
    assert [n for n in names if not hasattr(tf.layers, n)] == []
    import ferroflow.compat.v1 as v1

    assert v1.layers is tf.layers
