"""ferroflow.lite.Interpreter on TF 2.21's quantized .tflite files.

Full-integer models (``*_int8.tflite``) must give TF's interpreter outputs
bit for bit, and so must every intermediate tensor of TF's reference run
(``ref_tensor_<i>`` in the fixtures). Dynamic-range models
(``*_dynamic.tflite``: float activations, int8 weights quantized on the fly)
must be close to TF's outputs.
"""

import os

import numpy as np
import pytest

from ferroflow.lite import Interpreter

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tflite")


def _load(name):
    path = os.path.join(FIXTURES, name + ".tflite")
    io = np.load(os.path.join(FIXTURES, name + "_io.npz"))
    interp = Interpreter(model_path=path)
    interp.allocate_tensors()
    return interp, io


def _ref_tensors(io):
    return {int(k[len("ref_tensor_") :]): io[k] for k in io.files if k.startswith("ref_tensor_")}


@pytest.mark.parametrize("name", ["mlp_int8", "convnet_int8"])
def test_int8_outputs_and_intermediates_are_bit_exact(name):
    interp, io = _load(name)
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    assert inp["dtype"] == np.int8 and out["dtype"] == np.int8
    refs = _ref_tensors(io)
    assert len(refs) > 4
    for n in range(io["input_int8"].shape[0]):
        interp.set_tensor(inp["index"], io["input_int8"][n])
        interp.invoke()
        got = interp.get_tensor(out["index"])
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got, io["output_ref"][n])
        np.testing.assert_array_equal(got, io["output_default"][n])
        for idx, values in refs.items():
            t = interp.get_tensor(idx)
            assert t.dtype == values.dtype, idx
            np.testing.assert_array_equal(t, values[n], err_msg=f"tensor {idx}")


@pytest.mark.parametrize("name", ["mlp_int8", "convnet_int8"])
def test_int8_dequantized_output_is_close_to_the_float_graph(name):
    interp, io = _load(name)
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    scale, zero_point = out["quantization"]
    for n in range(io["input_int8"].shape[0]):
        interp.set_tensor(inp["index"], io["input_int8"][n])
        interp.invoke()
        got = (interp.get_tensor(out["index"]).astype(np.float32) - zero_point) * scale
        np.testing.assert_allclose(got, io["output_ref_dequantized"][n], rtol=1e-6, atol=0)
        # Softmax probabilities: within a few output steps of the float graph.
        assert np.max(np.abs(got - io["output_tf"][n])) < 0.03


@pytest.mark.parametrize("name", ["mlp_dynamic", "convnet_dynamic"])
def test_dynamic_range_models_match_tf(name):
    interp, io = _load(name)
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    assert inp["dtype"] == np.float32 and out["dtype"] == np.float32
    refs = _ref_tensors(io)
    for n in range(io["input"].shape[0]):
        interp.set_tensor(inp["index"], io["input"][n])
        interp.invoke()
        got = interp.get_tensor(out["index"])
        np.testing.assert_allclose(got, io["output_ref"][n], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, io["output_default"][n], rtol=1e-5, atol=1e-6)
        for idx, values in refs.items():
            np.testing.assert_allclose(
                interp.get_tensor(idx), values[n], rtol=1e-5, atol=1e-6, err_msg=f"tensor {idx}"
            )


def test_convnet_dynamic_has_a_hybrid_fully_connected():
    interp, _ = _load("convnet_dynamic")
    int8_weights = [d for d in interp.get_tensor_details() if d["dtype"] == np.int8]
    assert [d["shape"].tolist() for d in int8_weights] == [[10, 384]]
    assert len(int8_weights[0]["quantization_parameters"]["scales"]) == 10


def test_int8_batch_resize_keeps_rows_independent():
    interp, io = _load("mlp_int8")
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    interp.resize_tensor_input(inp["index"], [4, 16])
    interp.allocate_tensors()
    interp.set_tensor(inp["index"], io["input_int8"].reshape(4, 16))
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(out["index"]), io["output_ref"].reshape(4, 10))
