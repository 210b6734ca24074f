"""Full-integer post-training quantization in ferroflow's TFLite converter.

The fixture graphs (``tests/fixtures/tflite/*_frozen.pb``) are converted with
the same representative samples TF 2.21's converter used for the fixture
``*_int8.tflite`` files (regenerated here as ``tools/make_tflite_fixtures.py``
draws them), so the quantization parameters can be compared with TF's, and
the int8 models must stay as close to the float graph as TF's own.
"""

import json
import os

import numpy as np
import pytest

import ferroflow as tf
from ferroflow import lite
from ferroflow.lite.convert import OpsSet, Optimize, RepresentativeDataset, TFLiteConverter

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tflite")
SHAPES = {"mlp": [1, 16], "convnet": [1, 12, 12, 3]}
# Our activation tensor name -> TF's name for the same tensor.
ACTIVATIONS = {
    "mlp": {
        "input": "input",
        "dense1/relu": "MatMul;dense1/relu;BiasAdd",
        "BiasAdd_1": "MatMul_1;BiasAdd_1",
        "dense2/tanh": "dense2/tanh",
        "logits": "MatMul_2;logits",
        "output": "output",
    },
    "convnet": {
        "input": "input",
        "conv1/relu": "conv1/relu;bn/fbn;conv1/bias;conv1/bias_add;conv1/conv1",
        "pool1": "pool1",
        "dw/relu6": "dw/relu6;BiasAdd;dw/conv;dw/bias1",
        "branch_a/avg_pool": "branch_a/avg_pool",
        "branch_b/relu": "branch_b/relu;BiasAdd_1;branch_b/conv;conv2/bias1",
        "concat": "concat",
        "flatten": "flatten",
        "global_mean": "global_mean",
        "fc_mean/logits": "MatMul_1;fc_mean/logits",
        "logits": "logits",
        "output": "output",
        # Not compared: TF gives the FULLY_CONNECTED output feeding the final
        # ADD ("MatMul;fc_flat/logits") the ADD's output parameters rather
        # than its own calibrated range.
    },
}


def _fixture_json():
    with open(os.path.join(FIXTURES, "tflite_fixtures.json")) as f:
        return json.load(f)


def _representative(name):
    """The 32 samples ``tools/make_tflite_fixtures.py`` gave TF's converter."""
    m_index = list(SHAPES).index(name)
    rng = np.random.RandomState(3000 + m_index)
    shape = SHAPES[name]
    if name == "mlp":
        rep = rng.standard_normal([32] + shape[1:]).astype(np.float32)
    else:
        rep = rng.uniform(-1.0, 1.0, [32] + shape[1:]).astype(np.float32)
    return rep.reshape([32] + shape)


def _convert_fixture(name, io_type=tf.int8, int8_only=True, wrap=False):
    conv = TFLiteConverter.from_frozen_graph(
        os.path.join(FIXTURES, f"{name}_frozen.pb"), ["input"], ["output"]
    )
    rep = _representative(name)

    def gen():
        for s in rep:
            yield [s]

    conv.optimizations = [Optimize.DEFAULT]
    conv.representative_dataset = RepresentativeDataset(gen) if wrap else gen
    if int8_only:
        conv.target_spec.supported_ops = {OpsSet.TFLITE_BUILTINS_INT8}
    if io_type is not None:
        conv.inference_input_type = io_type
        conv.inference_output_type = io_type
    return conv.convert()


def _run_quantized(interp, x):
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    if inp["dtype"] == np.float32:
        interp.set_tensor(inp["index"], x)
    else:
        s, z = inp["quantization"]
        info = np.iinfo(inp["dtype"])
        q = np.clip(np.round(x / s) + z, info.min, info.max).astype(inp["dtype"])
        interp.set_tensor(inp["index"], q)
    interp.invoke()
    y = interp.get_tensor(out["index"])
    if out["dtype"] == np.float32:
        return y
    s, z = out["quantization"]
    return (y.astype(np.float32) - z) * s


def _max_error(model, name):
    interp = lite.Interpreter(model_content=model)
    interp.allocate_tensors()
    io = np.load(os.path.join(FIXTURES, f"{name}_int8_io.npz"))
    return max(
        float(np.abs(_run_quantized(interp, x) - want).max())
        for x, want in zip(io["input"], io["output_tf"])
    )


@pytest.mark.parametrize("name", ["mlp", "convnet"])
def test_int8_model_is_as_close_to_the_float_graph_as_tfs(name):
    model = _convert_fixture(name)
    interp = lite.Interpreter(model_content=model)
    interp.allocate_tensors()
    ops = set(interp._native.operator_names())
    assert "QUANTIZE" not in ops and "DEQUANTIZE" not in ops
    for t in interp.get_tensor_details():
        assert t["dtype"] in (np.int8, np.int32), t
    tf_error = _fixture_json()["files"][f"{name}_int8.tflite"]["ref_vs_tf_session_max_abs_diff"]
    err = _max_error(model, name)
    # Softmax outputs are in steps of 1/256; allow two more steps than TF.
    assert err <= tf_error + 2 / 256, (err, tf_error)


def _by_name(details):
    return {t["name"]: t for t in details}


@pytest.mark.parametrize("name", ["mlp", "convnet"])
def test_quantization_parameters_match_tfs(name):
    fixture = _fixture_json()["files"][f"{name}_int8.tflite"]
    theirs = _by_name(fixture["tensor_details"])
    interp = lite.Interpreter(model_content=_convert_fixture(name))
    interp.allocate_tensors()
    ours = _by_name(interp.get_tensor_details())
    for mine, tf_name in ACTIVATIONS[name].items():
        s, z = ours[mine]["quantization"]
        ts, tz = theirs[tf_name]["quantization"]
        assert s == pytest.approx(ts, rel=1e-5), (mine, s, ts)
        assert abs(z - tz) <= 1, (mine, z, tz)
    # Per-channel weights: matched by shape (each weight shape is unique).
    tf_weights = {
        tuple(t["shape"]): t
        for t in fixture["tensor_details"]
        if t["dtype"] == "int8" and len(t["quantization_parameters"]["scales"]) > 1
    }
    our_weights = {
        tuple(t["shape"]): t
        for t in interp.get_tensor_details()
        if t["dtype"] == np.int8 and len(t["quantization_parameters"]["scales"]) > 1
    }
    assert set(our_weights) == set(tf_weights)
    for shape, t in tf_weights.items():
        mine = our_weights[shape]["quantization_parameters"]
        want = t["quantization_parameters"]
        assert mine["quantized_dimension"] == want["quantized_dimension"], shape
        np.testing.assert_allclose(mine["scales"], want["scales"], rtol=1e-5)
        assert list(mine["zero_points"]) == [0] * len(want["scales"])
    # Biases are int32 with input_scale * weight_scale per channel.
    biases = [t for t in interp.get_tensor_details() if t["dtype"] == np.int32 and len(t["shape"]) == 1
              and len(t["quantization_parameters"]["scales"]) > 1]
    assert len(biases) == len(tf_weights)


def test_operator_versions_match_tfs():
    for name in ("mlp", "convnet"):
        fixture = _fixture_json()["files"][f"{name}_int8.tflite"]["flatbuffer"]
        want = {c["builtin_code"]: c["version"] for c in fixture["operator_codes"]}
        assert _operator_versions(_convert_fixture(name)) == want, name


def _operator_versions(buf):
    """{builtin code: version} read from the flatbuffer by hand (schema:
    Model.operator_codes is field 1; OperatorCode.version field 2 and
    builtin_code field 3)."""
    import struct

    def u32(off):
        return struct.unpack_from("<I", buf, off)[0]

    def field(table, index):
        vtable = table - struct.unpack_from("<i", buf, table)[0]
        pos = 4 + 2 * index
        if pos >= struct.unpack_from("<H", buf, vtable)[0]:
            return None
        off = struct.unpack_from("<H", buf, vtable + pos)[0]
        return table + off if off else None

    codes = field(u32(0), 1)
    vec = codes + u32(codes)
    out = {}
    for k in range(u32(vec)):
        elem = vec + 4 + 4 * k
        table = elem + u32(elem)
        v, c = field(table, 2), field(table, 3)
        version = struct.unpack_from("<i", buf, v)[0] if v else 1
        code = struct.unpack_from("<i", buf, c)[0] if c else 0
        out[code] = version
    return out


def test_float_io_gets_quantize_and_dequantize_at_the_boundary():
    model = _convert_fixture("convnet", io_type=None, int8_only=False, wrap=True)
    interp = lite.Interpreter(model_content=model)
    interp.allocate_tensors()
    ops = interp._native.operator_names()
    assert ops[0] == "QUANTIZE" and ops[-1] == "DEQUANTIZE"
    assert interp.get_input_details()[0]["dtype"] == np.float32
    assert interp.get_output_details()[0]["dtype"] == np.float32
    tf_error = _fixture_json()["files"]["convnet_int8.tflite"]["ref_vs_tf_session_max_abs_diff"]
    assert _max_error(model, "convnet") <= tf_error + 2 / 256


def test_uint8_io_moves_the_zero_point():
    int8 = lite.Interpreter(model_content=_convert_fixture("mlp"))
    uint8 = lite.Interpreter(model_content=_convert_fixture("mlp", io_type=tf.uint8))
    int8.allocate_tensors()
    uint8.allocate_tensors()
    a, b = int8.get_input_details()[0], uint8.get_input_details()[0]
    assert b["dtype"] == np.uint8
    assert b["quantization"][0] == a["quantization"][0]
    assert b["quantization"][1] == a["quantization"][1] + 128
    assert uint8.get_output_details()[0]["dtype"] == np.uint8
    io = np.load(os.path.join(FIXTURES, "mlp_int8_io.npz"))
    for x in io["input"]:
        np.testing.assert_allclose(_run_quantized(uint8, x), _run_quantized(int8, x), atol=1e-6)


def _session_model():
    rng = np.random.RandomState(11)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 8], name="input")
        w = tf.Variable(rng.randn(8, 12).astype(np.float32) * 0.5)
        b = tf.Variable(rng.randn(12).astype(np.float32) * 0.1)
        h = tf.nn.relu(tf.matmul(x, w) + b)
        h = tf.maximum(h, 0.25)
        w2 = tf.Variable(rng.randn(12, 5).astype(np.float32) * 0.5)
        y = tf.nn.sigmoid(tf.matmul(h, w2), name="output")
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
    return g, sess, x, y


def _session_converter(g, sess, x, y):
    with g.as_default():
        conv = lite.TFLiteConverter.from_session(sess, [x], [y])
    rep = np.random.RandomState(12).randn(16, 1, 8).astype(np.float32)
    conv.optimizations = [lite.Optimize.DEFAULT]
    conv.representative_dataset = lite.RepresentativeDataset(lambda: ([s] for s in rep))
    return conv


def test_session_model_keeps_ops_without_int8_kernels_in_float():
    g, sess, x, y = _session_model()
    conv = _session_converter(g, sess, x, y)
    model = conv.convert()
    interp = lite.Interpreter(model_content=model)
    interp.allocate_tensors()
    ops = interp._native.operator_names()
    assert ops.count("MAXIMUM") == 1
    i = ops.index("MAXIMUM")
    assert ops[i - 1] == "DEQUANTIZE" and ops[i + 1] == "QUANTIZE"
    assert "LOGISTIC" in ops
    xs = np.random.RandomState(13).randn(8, 1, 8).astype(np.float32)
    err = max(float(np.abs(_run_quantized(interp, v) - sess.run(y, {x: v})).max()) for v in xs)
    assert err < 0.02, err
    # LOGISTIC's int8 output has TF's fixed parameters.
    logistic = [t for t in interp.get_tensor_details() if t["name"] == "output_int8"]
    assert logistic and logistic[0]["quantization"] == (pytest.approx(1 / 256), -128)


def test_int8_only_names_the_op_without_an_int8_kernel():
    g, sess, x, y = _session_model()
    conv = _session_converter(g, sess, x, y)
    conv.target_spec.supported_ops = {lite.OpsSet.TFLITE_BUILTINS_INT8}
    with pytest.raises(tf.errors.UnimplementedError, match="MAXIMUM"):
        conv.convert()


def test_argument_errors():
    g, sess, x, y = _session_model()
    with g.as_default():
        conv = lite.TFLiteConverter.from_session(sess, [x], [y])
    conv.optimizations = [lite.Optimize.DEFAULT]
    conv.target_spec.supported_ops = {lite.OpsSet.TFLITE_BUILTINS_INT8}
    with pytest.raises(ValueError, match="representative_dataset"):
        conv.convert()
    conv.representative_dataset = lambda: iter([])
    with pytest.raises(ValueError, match="no samples"):
        conv.convert()
    conv.representative_dataset = lambda: iter([[np.zeros([1, 8]), np.zeros([1, 8])]])
    with pytest.raises(ValueError, match="2 arrays"):
        conv.convert()
    conv.inference_type = tf.uint8
    conv.quantized_input_stats = {"input": (0.0, 1.0)}
    with pytest.raises(NotImplementedError, match="quantized_input_stats"):
        conv.convert()


def test_tensorflow_interpreter_runs_our_int8_models():
    """Runs when TensorFlow is importable (not in the default test run)."""
    real_tf = pytest.importorskip("tensorflow")
    for name in ("mlp", "convnet"):
        model = _convert_fixture(name)
        theirs = real_tf.lite.Interpreter(model_content=model)
        theirs.allocate_tensors()
        ours = lite.Interpreter(model_content=model)
        ours.allocate_tensors()
        io = np.load(os.path.join(FIXTURES, f"{name}_int8_io.npz"))
        for x in io["input"]:
            # Integer kernels on both sides: bit for bit.
            np.testing.assert_array_equal(_run_quantized(theirs, x), _run_quantized(ours, x))
    # Float boundaries, uint8 boundaries, and a float op between int8 ones.
    g, sess, x, y = _session_model()
    models = [
        (_convert_fixture("convnet", io_type=None, int8_only=False), "convnet"),
        (_convert_fixture("mlp", io_type=tf.uint8), "mlp"),
        (_session_converter(g, sess, x, y).convert(), None),
    ]
    for model, name in models:
        theirs = real_tf.lite.Interpreter(model_content=model)
        theirs.allocate_tensors()
        ours = lite.Interpreter(model_content=model)
        ours.allocate_tensors()
        if name is None:
            inputs = np.random.RandomState(13).randn(4, 1, 8).astype(np.float32)
        else:
            inputs = np.load(os.path.join(FIXTURES, f"{name}_int8_io.npz"))["input"]
        for v in inputs:
            np.testing.assert_allclose(_run_quantized(theirs, v), _run_quantized(ours, v), atol=1 / 256 + 1e-6)
