"""tf.lite: ferroflow's interpreter on TensorFlow's .tflite files (outputs
equal TF's interpreter's), TF's error messages, and ferroflow's converter
(its models run in ferroflow's interpreter with the Session's outputs)."""

import json
import os

import numpy as np
import pytest

import ferroflow as tf
from ferroflow import lite

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tflite")


def _path(name):
    return os.path.join(FIXTURES, name)


def _run(interp, x):
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    interp.set_tensor(inp["index"], x)
    interp.invoke()
    return interp.get_tensor(out["index"])


@pytest.mark.parametrize("model", ["mlp_float", "convnet_float", "mlp_f16", "convnet_f16"])
def test_float_models_match_tf_interpreter(model):
    interp = lite.Interpreter(model_path=_path(model + ".tflite"))
    interp.allocate_tensors()
    io = np.load(_path(model + "_io.npz"))
    for i in range(io["input"].shape[0]):
        got = _run(interp, io["input"][i])
        want = io["output_ref"][i]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_details_match_tf():
    meta = json.load(open(_path("tflite_fixtures.json")))["files"]["convnet_float.tflite"]
    interp = lite.Interpreter(model_path=_path("convnet_float.tflite"))
    interp.allocate_tensors()
    for ours, theirs in zip(interp.get_input_details(), meta["input_details"]):
        assert ours["name"] == theirs["name"]
        assert ours["index"] == theirs["index"]
        assert list(ours["shape"]) == list(theirs["shape"])
        assert np.dtype(ours["dtype"]).name == theirs["dtype"]
    details = interp.get_tensor_details()
    assert len(details) == len(meta["tensor_details"])
    for ours, theirs in zip(details, meta["tensor_details"]):
        assert ours["name"] == theirs["name"]
        assert list(ours["shape"]) == list(theirs["shape"]), ours["name"]


def test_int8_details_report_per_channel_scales():
    meta = json.load(open(_path("tflite_fixtures.json")))["files"]["convnet_int8.tflite"]
    interp = lite.Interpreter(model_path=_path("convnet_int8.tflite"))
    by_name = {t["name"]: t for t in meta["tensor_details"]}
    for t in interp.get_tensor_details():
        theirs = by_name[t["name"]]
        assert tuple(t["quantization"]) == pytest.approx(tuple(theirs["quantization"]))
        np.testing.assert_allclose(
            t["quantization_parameters"]["scales"], theirs["quantization_parameters"]["scales"], rtol=1e-7
        )
        assert t["quantization_parameters"]["quantized_dimension"] == theirs["quantization_parameters"][
            "quantized_dimension"
        ]


def _errors():
    return json.load(open(_path("tflite_errors.json")))["cases"]


def _expect(case, fn):
    want = _errors()[case]
    with pytest.raises(Exception) as info:
        fn()
    assert type(info.value).__name__ == want["exception"]
    # TF's wording; ferroflow may add what exactly is wrong after it.
    assert str(info.value).startswith(want["message"]), (str(info.value), want["message"])


def test_errors_match_tf_wording():
    content = open(_path("mlp_float.tflite"), "rb").read()

    def fresh():
        return lite.Interpreter(model_content=content)

    _expect("invoke_before_allocate_tensors", lambda: fresh().invoke())
    interp = fresh()
    _expect("set_tensor_before_allocate_tensors", lambda: interp.set_tensor(0, np.zeros((1, 16), np.float32)))
    interp.allocate_tensors()
    idx = interp.get_input_details()[0]["index"]
    _expect("set_tensor_wrong_shape", lambda: interp.set_tensor(idx, np.zeros((2, 16), np.float32)))
    _expect("set_tensor_wrong_rank", lambda: interp.set_tensor(idx, np.zeros((16,), np.float32)))
    _expect("set_tensor_wrong_dtype", lambda: interp.set_tensor(idx, np.zeros((1, 16), np.float64)))
    _expect("get_tensor_index_out_of_range", lambda: interp.get_tensor(10000))
    _expect("get_tensor_negative_index", lambda: interp.get_tensor(-1))
    _expect("model_content_truncated_100_bytes", lambda: lite.Interpreter(model_content=content[:100]))
    garbage = np.random.RandomState(2203).randint(0, 256, 256).astype(np.uint8).tobytes()
    _expect("model_content_garbage_256_bytes", lambda: lite.Interpreter(model_content=garbage))
    _expect("model_content_empty", lambda: lite.Interpreter(model_content=b""))
    _expect("model_path_missing_file", lambda: lite.Interpreter(model_path="/nonexistent/model.tflite"))


def test_corrupted_models_give_value_errors():
    content = bytearray(open(_path("convnet_float.tflite"), "rb").read())
    rng = np.random.RandomState(7)
    for _ in range(200):
        bad = bytearray(content)
        for pos in rng.randint(0, len(bad), 8):
            bad[pos] = rng.randint(0, 256)
        try:
            interp = lite.Interpreter(model_content=bytes(bad))
            interp.allocate_tensors()
            interp.invoke()
        except (ValueError, RuntimeError, tf.errors.OpError):
            pass


def test_resize_input_batch():
    interp = lite.Interpreter(model_path=_path("mlp_float.tflite"))
    idx = interp.get_input_details()[0]["index"]
    interp.resize_tensor_input(idx, [3, 16])
    interp.allocate_tensors()
    io = np.load(_path("mlp_float_io.npz"))
    x = io["input"][:3].reshape(3, 16)
    got = _run(interp, x)
    np.testing.assert_allclose(got, io["output_ref"][:3].reshape(3, -1), rtol=1e-5, atol=1e-6)


def _mlp_session(seed=0):
    rng = np.random.RandomState(seed)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 16], name="input")
        w1 = tf.Variable(rng.randn(16, 64).astype(np.float32) * 0.3)
        b1 = tf.Variable(rng.randn(64).astype(np.float32) * 0.1)
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        w2 = tf.Variable(rng.randn(64, 32).astype(np.float32) * 0.3)
        h2 = tf.nn.relu6(tf.nn.bias_add(tf.matmul(h, w2), tf.constant(rng.randn(32).astype(np.float32))))
        w3 = tf.Variable(rng.randn(32, 10).astype(np.float32) * 0.3)
        y = tf.nn.softmax(tf.matmul(tf.tanh(h2), w3), name="output")
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
    return g, sess, x, y


def test_converter_mlp_runs_with_session_outputs():
    g, sess, x, y = _mlp_session()
    with g.as_default():
        model = lite.TFLiteConverter.from_session(sess, [x], [y]).convert()
    interp = lite.Interpreter(model_content=model)
    interp.allocate_tensors()
    ops = interp._native.operator_names()
    assert ops == ["FULLY_CONNECTED", "FULLY_CONNECTED", "TANH", "FULLY_CONNECTED", "SOFTMAX"]
    inp = interp.get_input_details()[0]
    assert list(inp["shape_signature"]) == [-1, 16]
    xs = np.random.RandomState(1).randn(4, 1, 16).astype(np.float32)
    for v in xs:
        want = sess.run(y, {x: v})
        np.testing.assert_allclose(_run(interp, v), want, rtol=1e-5, atol=1e-6)


def _convnet_session():
    rng = np.random.RandomState(3)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 12, 12, 3], name="input")
        f = tf.constant(rng.randn(3, 3, 3, 8).astype(np.float32) * 0.3)
        c = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME")
        c = tf.nn.bias_add(c, tf.constant(rng.randn(8).astype(np.float32) * 0.1))
        c = tf.nn.relu(c)
        p = tf.nn.max_pool(c, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        a = tf.nn.avg_pool(p, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
        flat = tf.reshape(a, [1, -1])
        w = tf.constant(rng.randn(6 * 6 * 8, 10).astype(np.float32) * 0.1)
        y = tf.nn.softmax(tf.matmul(flat, w) + tf.constant(rng.randn(10).astype(np.float32)), name="output")
        sess = tf.Session(graph=g)
    return g, sess, x, y


def test_converter_convnet_folds_bias_and_activation():
    g, sess, x, y = _convnet_session()
    with g.as_default():
        conv = lite.TFLiteConverter.from_session(sess, [x], [y])
        model = conv.convert()
    interp = lite.Interpreter(model_content=model)
    interp.allocate_tensors()
    assert interp._native.operator_names() == [
        "CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX",
    ]
    v = np.random.RandomState(2).randn(1, 12, 12, 3).astype(np.float32)
    np.testing.assert_allclose(_run(interp, v), sess.run(y, {x: v}), rtol=1e-5, atol=1e-6)


def test_converter_from_tf_frozen_graph_matches_tf_lite_model():
    conv = lite.TFLiteConverter.from_frozen_graph(
        _path("convnet_frozen.pb"), ["input"], ["output"], {"input": [1, 12, 12, 3]}
    )
    ours = lite.Interpreter(model_content=conv.convert())
    ours.allocate_tensors()
    io = np.load(_path("convnet_float_io.npz"))
    for i in range(io["input"].shape[0]):
        np.testing.assert_allclose(_run(ours, io["input"][i]), io["output_ref"][i], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("quant", ["float16", "dynamic_range"])
def test_converter_quantized_weights(quant):
    g, sess, x, y = _mlp_session(seed=5)
    with g.as_default():
        conv = lite.TFLiteConverter.from_session(sess, [x], [y])
        conv.optimizations = [lite.Optimize.DEFAULT]
        if quant == "float16":
            conv.target_spec.supported_types = [tf.float16]
        model = conv.convert()
    interp = lite.Interpreter(model_content=model)
    interp.allocate_tensors()
    types = {np.dtype(t["dtype"]).name for t in interp.get_tensor_details()}
    assert ("float16" in types) == (quant == "float16")
    v = np.random.RandomState(9).randn(1, 16).astype(np.float32)
    np.testing.assert_allclose(_run(interp, v), sess.run(y, {x: v}), atol=2e-2)


def test_converter_errors_name_the_problem():
    g, sess, x, y = _mlp_session()
    with g.as_default():
        conv = lite.TFLiteConverter(g.as_graph_def(), [x], [y])
        with pytest.raises(ValueError, match="freeze"):
            conv.convert()
    with pytest.raises(ValueError, match="Keras"):
        lite.TFLiteConverter.from_keras_model_file("model.h5")


def test_thread_count_does_not_change_results():
    content = open(_path("convnet_float.tflite"), "rb").read()
    io = np.load(_path("convnet_float_io.npz"))
    outs = []
    for threads in (1, 2):
        interp = lite.Interpreter(model_content=content, num_threads=threads)
        interp.allocate_tensors()
        outs.append(_run(interp, io["input"][0]))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_signature_runner():
    g, sess, x, y = _mlp_session()
    with g.as_default():
        model = lite.TFLiteConverter.from_session(sess, [x], [y]).convert()
    interp = lite.Interpreter(model_content=model)
    assert interp.get_signature_list() == {"serving_default": {"inputs": ["input"], "outputs": ["output"]}}
    run = interp.get_signature_runner()
    v = np.random.RandomState(4).randn(2, 16).astype(np.float32)
    np.testing.assert_allclose(run(input=v)["output"], sess.run(y, {x: v}), rtol=1e-5, atol=1e-6)


def test_tensorflow_interpreter_runs_converted_models():
    """Runs when TensorFlow is importable (not in the default test run)."""
    real_tf = pytest.importorskip("tensorflow")
    for make in (_mlp_session, _convnet_session):
        g, sess, x, y = make()
        with g.as_default():
            model = lite.TFLiteConverter.from_session(sess, [x], [y]).convert()
        theirs = real_tf.lite.Interpreter(model_content=model)
        theirs.allocate_tensors()
        shape = [1] + [int(d) for d in x.get_shape().as_list()[1:]]
        v = np.random.RandomState(6).randn(*shape).astype(np.float32)
        np.testing.assert_allclose(_run(theirs, v), sess.run(y, {x: v}), rtol=1e-5, atol=1e-6)


def test_experimental_lstm_trains_like_lstm_cell():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.random.RandomState(0).randn(5, 2, 3).astype(np.float32))
        cell = lite.experimental.nn.TFLiteLSTMCell(4)
        out, _ = lite.experimental.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        assert out.get_shape().as_list() == [5, 2, 4]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert np.all(np.isfinite(sess.run(out)))


def test_converter_from_saved_model(tmp_path):
    g, sess, x, y = _mlp_session(seed=2)
    export_dir = str(tmp_path / "model")
    with g.as_default():
        tf.saved_model.simple_save(sess, export_dir, inputs={"x": x}, outputs={"y": y})
    model = lite.TFLiteConverter.from_saved_model(export_dir, input_shapes={"input": [1, 16]}).convert()
    interp = lite.Interpreter(model_content=model)
    interp.allocate_tensors()
    v = np.random.RandomState(8).randn(1, 16).astype(np.float32)
    np.testing.assert_allclose(_run(interp, v), sess.run(y, {x: v}), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="signature"):
        lite.TFLiteConverter.from_saved_model(export_dir, signature_key="nope")
