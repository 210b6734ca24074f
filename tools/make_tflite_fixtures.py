"""Write tests/fixtures/tflite/: TensorFlow-made .tflite models, their frozen
GraphDefs, TF interpreter outputs on fixed inputs, interpreter details, and
TF's interpreter error wording (issue 22, tf.lite).

Run from the repository root with TensorFlow's Python (never needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_tflite_fixtures.py

(TensorFlow 2.21, tensorflow-cpu.) The output is deterministic in content for a
given TensorFlow version: weights, representative data and inputs all come from
seeded ``np.random.RandomState`` streams.

What it writes (see tests/fixtures/tflite/README.md for the details):

- ``<model>_frozen.pb``: the TF1 graph, frozen with
  ``tf.compat.v1.graph_util.convert_variables_to_constants``.
- ``<model>_{float,dynamic,int8,f16}.tflite``: TF's v1 converter
  (``tf.compat.v1.lite.TFLiteConverter.from_session``) output, with no
  optimization, dynamic-range quantization, full-integer quantization (int8
  in/out) and float16 weights.
- ``<model>_<variant>_io.npz``: fixed inputs and the outputs of TF's
  interpreter with the reference kernels (``BUILTIN_REF``) and with the default
  resolver (XNNPACK), plus the TF Session output of the frozen graph.
- ``tflite_fixtures.json``: per file, input/output/tensor details, operators
  (in execution order, with tensor indices), operator codes and versions, and
  the ``min_runtime_version`` metadata.
- ``tflite_errors.json``: exception class and message of TF's interpreter
  for misuse and bad model bytes.
"""

import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "tflite"

N_SAMPLES = 4  # inputs per model in the io npz files, each run at batch 1
N_REPRESENTATIVE = 32  # representative-dataset samples for full-integer quantization
VARIANTS = ("float", "dynamic", "int8", "f16")


# --------------------------------------------------------------------------
# models


def _var(tf, rng, name, shape, scale):
    value = (rng.standard_normal(shape) * scale).astype(np.float32)
    return tf.Variable(value, name=name)


def build_mlp(tf):
    """input [1,16] -> dense 32 relu -> dense 24 tanh -> dense 10 -> softmax."""
    rng = np.random.RandomState(2201)
    x = tf.placeholder(tf.float32, [1, 16], name="input")
    w1 = _var(tf, rng, "dense1/kernel", [16, 32], 0.35)
    b1 = _var(tf, rng, "dense1/bias", [32], 0.1)
    w2 = _var(tf, rng, "dense2/kernel", [32, 24], 0.25)
    b2 = _var(tf, rng, "dense2/bias", [24], 0.1)
    w3 = _var(tf, rng, "dense3/kernel", [24, 10], 0.4)
    b3 = _var(tf, rng, "dense3/bias", [10], 0.1)
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1), name="dense1/relu")
    h = tf.tanh(tf.nn.bias_add(tf.matmul(h, w2), b2), name="dense2/tanh")
    logits = tf.nn.bias_add(tf.matmul(h, w3), b3, name="logits")
    y = tf.nn.softmax(logits, name="output")
    return x, y


def build_convnet(tf):
    """input [1,12,12,3] NHWC.

    conv 3x3x3x8 SAME + bias + fused_batch_norm (inference) + relu -> [1,12,12,8]
    max_pool 2x2/2 -> [1,6,6,8]
    depthwise 3x3 multiplier 2 VALID + bias + relu6 -> [1,4,4,16]   (h)
    branch a: avg_pool 2x2/1 SAME (h) -> [1,4,4,16]
    branch b: conv 1x1 16->8 + bias + relu (h) -> [1,4,4,8]
    concat(a, b, axis 3) -> [1,4,4,24]  (c)
    reshape(c, [1,384]) @ [384,10] + bias        (logits_flat)
    mean(c, axis [1,2]) @ [24,10] + bias          (logits_mean)
    add(logits_flat, logits_mean) -> softmax -> output [1,10]
    """
    rng = np.random.RandomState(2202)
    x = tf.placeholder(tf.float32, [1, 12, 12, 3], name="input")
    k1 = _var(tf, rng, "conv1/kernel", [3, 3, 3, 8], 0.3)
    b1 = _var(tf, rng, "conv1/bias", [8], 0.1)
    gamma = tf.Variable(rng.uniform(0.5, 1.5, [8]).astype(np.float32), name="bn/gamma")
    beta = tf.Variable((rng.standard_normal([8]) * 0.2).astype(np.float32), name="bn/beta")
    mean = tf.Variable((rng.standard_normal([8]) * 0.3).astype(np.float32), name="bn/moving_mean")
    var = tf.Variable(rng.uniform(0.4, 2.0, [8]).astype(np.float32), name="bn/moving_variance")
    kd = _var(tf, rng, "dw/depthwise_kernel", [3, 3, 8, 2], 0.3)
    bd = _var(tf, rng, "dw/bias", [16], 0.1)
    k2 = _var(tf, rng, "conv2/kernel", [1, 1, 16, 8], 0.3)
    b2 = _var(tf, rng, "conv2/bias", [8], 0.1)
    wf = _var(tf, rng, "fc_flat/kernel", [384, 10], 0.08)
    bf = _var(tf, rng, "fc_flat/bias", [10], 0.1)
    wm = _var(tf, rng, "fc_mean/kernel", [24, 10], 0.3)
    bm = _var(tf, rng, "fc_mean/bias", [10], 0.1)

    h = tf.nn.conv2d(x, k1, strides=[1, 1, 1, 1], padding="SAME", name="conv1/conv")
    h = tf.nn.bias_add(h, b1, name="conv1/bias_add")
    h, _, _ = tf.nn.fused_batch_norm(
        h, gamma, beta, mean=mean, variance=var, epsilon=1e-3, is_training=False, name="bn/fbn"
    )
    h = tf.nn.relu(h, name="conv1/relu")
    h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID", name="pool1")
    h = tf.nn.depthwise_conv2d(h, kd, strides=[1, 1, 1, 1], padding="VALID", name="dw/conv")
    h = tf.nn.relu6(tf.nn.bias_add(h, bd), name="dw/relu6")
    a = tf.nn.avg_pool(h, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="SAME", name="branch_a/avg_pool")
    b = tf.nn.conv2d(h, k2, strides=[1, 1, 1, 1], padding="SAME", name="branch_b/conv")
    b = tf.nn.relu(tf.nn.bias_add(b, b2), name="branch_b/relu")
    c = tf.concat([a, b], axis=3, name="concat")
    flat = tf.reshape(c, [1, 384], name="flatten")
    logits_flat = tf.nn.bias_add(tf.matmul(flat, wf), bf, name="fc_flat/logits")
    pooled = tf.reduce_mean(c, axis=[1, 2], name="global_mean")
    logits_mean = tf.nn.bias_add(tf.matmul(pooled, wm), bm, name="fc_mean/logits")
    logits = tf.add(logits_flat, logits_mean, name="logits")
    y = tf.nn.softmax(logits, name="output")
    return x, y


MODELS = {"mlp": build_mlp, "convnet": build_convnet}


def model_inputs(name, shape, n, seed):
    rng = np.random.RandomState(seed)
    if name == "mlp":
        return rng.standard_normal([n] + shape).astype(np.float32)
    return rng.uniform(-1.0, 1.0, [n] + shape).astype(np.float32)


# --------------------------------------------------------------------------
# conversion


def convert(tf2, tf, sess, x, y, variant, representative):
    """One TFLiteConverter.from_session conversion; returns (bytes, settings note)."""
    conv = tf.lite.TFLiteConverter.from_session(sess, [x], [y])
    note = "TFLiteConverter.from_session, defaults"
    if variant == "dynamic":
        conv.optimizations = [tf2.lite.Optimize.DEFAULT]
        note = "optimizations=[Optimize.DEFAULT], no representative_dataset"
    elif variant == "int8":
        conv.optimizations = [tf2.lite.Optimize.DEFAULT]

        def gen():
            for sample in representative:
                yield [sample]

        conv.representative_dataset = gen
        conv.target_spec.supported_ops = [tf2.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf2.int8
        conv.inference_output_type = tf2.int8
        note = (
            f"optimizations=[Optimize.DEFAULT], representative_dataset ({len(representative)} seeded "
            "samples), target_spec.supported_ops=[TFLITE_BUILTINS_INT8], inference_input_type=int8, "
            "inference_output_type=int8"
        )
    elif variant == "f16":
        # supported_types=[float16] only takes effect together with Optimize.DEFAULT;
        # without it the converter writes the plain float model (checked in main()).
        conv.optimizations = [tf2.lite.Optimize.DEFAULT]
        conv.target_spec.supported_types = [tf2.float16]
        note = "optimizations=[Optimize.DEFAULT], target_spec.supported_types=[float16]"
    return conv.convert(), note


# --------------------------------------------------------------------------
# flatbuffer facts


def builtin_names():
    from tensorflow.lite.python import schema_py_generated as schema

    return {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}


def tensor_type_names():
    from tensorflow.lite.python import schema_py_generated as schema

    return {v: k for k, v in vars(schema.TensorType).items() if not k.startswith("_")}


def flatbuffer_facts(content):
    from tensorflow.lite.python import schema_py_generated as schema

    names = builtin_names()
    ttypes = tensor_type_names()
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAs(content, 0))
    codes = []
    for oc in model.operatorCodes:
        code = max(oc.builtinCode, oc.deprecatedBuiltinCode)
        codes.append(
            {
                "builtin_code": int(code),
                "name": names.get(code, str(code)),
                "deprecated_builtin_code": int(oc.deprecatedBuiltinCode),
                "version": int(oc.version),
                "custom_code": oc.customCode.decode() if oc.customCode else None,
            }
        )
    metadata = {}
    for m in model.metadata or []:
        data = model.buffers[m.buffer].data
        raw = bytes(data) if data is not None else b""
        key = m.name.decode()
        if key == "min_runtime_version":
            metadata[key] = raw.rstrip(b"\x00").decode()
        else:
            metadata[key] = {"buffer": int(m.buffer), "bytes": len(raw)}
    subgraphs = []
    for sg in model.subgraphs:
        ops = []
        for op in sg.operators:
            opts = op.builtinOptions
            fused = getattr(opts, "fusedActivationFunction", None) if opts is not None else None
            ops.append(
                {
                    "op": codes[op.opcodeIndex]["name"],
                    "opcode_index": int(op.opcodeIndex),
                    "inputs": [int(i) for i in op.inputs],
                    "outputs": [int(i) for i in op.outputs],
                    "fused_activation": fused_activation_name(fused),
                    "options_type": type(opts).__name__[:-1] if opts is not None else None,
                    "options": _jsonable(vars(opts)) if opts is not None else None,
                }
            )
        tensors = []
        for i, t in enumerate(sg.tensors):
            q = t.quantization
            tensors.append(
                {
                    "index": i,
                    "name": t.name.decode(),
                    "type": ttypes.get(t.type, str(t.type)),
                    "shape": [int(d) for d in (t.shape if t.shape is not None else [])],
                    "buffer": int(t.buffer),
                    "has_data": bool(
                        t.buffer < len(model.buffers)
                        and model.buffers[t.buffer].data is not None
                        and len(model.buffers[t.buffer].data) > 0
                    ),
                    "per_channel": bool(q is not None and q.scale is not None and len(q.scale) > 1),
                }
            )
        subgraphs.append(
            {
                "name": sg.name.decode() if sg.name else "",
                "inputs": [int(i) for i in sg.inputs],
                "outputs": [int(i) for i in sg.outputs],
                "operators": ops,
                "tensors": tensors,
            }
        )
    return {
        "version": int(model.version),
        "description": model.description.decode() if model.description else "",
        "operator_codes": codes,
        "builtin_ops": sorted({c["name"] for c in codes}),
        "metadata": metadata,
        "num_buffers": len(model.buffers),
        "signature_defs": len(model.signatureDefs or []),
        "subgraphs": subgraphs,
    }


def fused_activation_name(value):
    if value is None:
        return None
    from tensorflow.lite.python import schema_py_generated as schema

    names = {v: k for k, v in vars(schema.ActivationFunctionType).items() if not k.startswith("_")}
    return names.get(value, str(value))


# --------------------------------------------------------------------------
# interpreter facts


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    return value


def detail(d):
    out = {
        "name": d["name"],
        "index": int(d["index"]),
        "shape": [int(v) for v in d["shape"]],
        "shape_signature": [int(v) for v in d["shape_signature"]],
        "dtype": np.dtype(d["dtype"]).name,
        "quantization": [float(d["quantization"][0]), int(d["quantization"][1])],
    }
    qp = d.get("quantization_parameters")
    if qp is not None:
        out["quantization_parameters"] = {
            "scales": [float(v) for v in qp["scales"]],
            "zero_points": [int(v) for v in qp["zero_points"]],
            "quantized_dimension": int(qp["quantized_dimension"]),
        }
    return out


def interpreter(tf2, content, ref):
    kwargs = {"model_content": content, "num_threads": 1}
    if ref:
        kwargs["experimental_op_resolver_type"] = tf2.lite.experimental.OpResolverType.BUILTIN_REF
        # keep every intermediate readable after invoke (no arena reuse): for the ref_tensor_* arrays
        kwargs["experimental_preserve_all_tensors"] = True
    interp = tf2.lite.Interpreter(**kwargs)
    interp.allocate_tensors()
    return interp


def run_all(interp, feeds, keep=()):
    """Outputs for each feed, stacked; and the tensors in ``keep``, each stacked the same way."""
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    results = []
    kept = {i: [] for i in keep}
    for feed in feeds:
        interp.set_tensor(inp["index"], feed)
        interp.invoke()
        results.append(interp.get_tensor(out["index"]).copy())
        for i in keep:
            kept[i].append(interp.get_tensor(i).copy())
    return np.stack(results), {i: np.stack(v) for i, v in kept.items()}


def quantize(x, scale, zero_point, dtype):
    info = np.iinfo(dtype)
    q = np.round(x / scale) + zero_point
    return np.clip(q, info.min, info.max).astype(dtype)


# --------------------------------------------------------------------------
# errors


def capture(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - recording whatever TF raises
        return {"exception": type(exc).__name__, "message": str(exc)}
    return {"exception": None, "message": None}


def error_cases(tf2, mlp_float, mlp_int8):
    cases = {}

    def fresh(content=mlp_float):
        return tf2.lite.Interpreter(model_content=content, num_threads=1)

    def invoke_before_allocate():
        interp = fresh()
        interp.invoke()

    cases["invoke_before_allocate_tensors"] = capture(invoke_before_allocate)

    def set_tensor_before_allocate():
        interp = fresh()
        interp.set_tensor(interp.get_input_details()[0]["index"], np.zeros([1, 16], np.float32))

    cases["set_tensor_before_allocate_tensors"] = capture(set_tensor_before_allocate)

    def set_wrong_shape():
        interp = fresh()
        interp.allocate_tensors()
        interp.set_tensor(interp.get_input_details()[0]["index"], np.zeros([2, 16], np.float32))

    cases["set_tensor_wrong_shape"] = capture(set_wrong_shape)

    def set_wrong_rank():
        interp = fresh()
        interp.allocate_tensors()
        interp.set_tensor(interp.get_input_details()[0]["index"], np.zeros([16], np.float32))

    cases["set_tensor_wrong_rank"] = capture(set_wrong_rank)

    def set_wrong_dtype():
        interp = fresh()
        interp.allocate_tensors()
        interp.set_tensor(interp.get_input_details()[0]["index"], np.zeros([1, 16], np.float64))

    cases["set_tensor_wrong_dtype"] = capture(set_wrong_dtype)

    def set_float_into_int8():
        interp = fresh(mlp_int8)
        interp.allocate_tensors()
        interp.set_tensor(interp.get_input_details()[0]["index"], np.zeros([1, 16], np.float32))

    cases["set_tensor_float_into_int8_input"] = capture(set_float_into_int8)

    def get_out_of_range():
        interp = fresh()
        interp.allocate_tensors()
        interp.get_tensor(10000)

    cases["get_tensor_index_out_of_range"] = capture(get_out_of_range)

    def get_negative():
        interp = fresh()
        interp.allocate_tensors()
        interp.get_tensor(-1)

    cases["get_tensor_negative_index"] = capture(get_negative)

    def set_out_of_range():
        interp = fresh()
        interp.allocate_tensors()
        interp.set_tensor(10000, np.zeros([1, 16], np.float32))

    cases["set_tensor_index_out_of_range"] = capture(set_out_of_range)

    cases["model_content_truncated_100_bytes"] = capture(lambda: fresh(mlp_float[:100]))
    garbage = np.random.RandomState(2203).randint(0, 256, 256).astype(np.uint8).tobytes()
    cases["model_content_garbage_256_bytes"] = capture(lambda: fresh(garbage))
    cases["model_content_empty"] = capture(lambda: fresh(b""))
    cases["model_path_missing_file"] = capture(
        lambda: tf2.lite.Interpreter(model_path="/nonexistent/model.tflite")
    )
    cases["no_model_path_or_content"] = capture(lambda: tf2.lite.Interpreter())
    notes = {
        "tensorflow": tf2.__version__,
        "model": "mlp_float.tflite (input index/shape from get_input_details) unless the case names int8",
        "garbage": "256 bytes from np.random.RandomState(2203).randint(0, 256, 256)",
        "how": "tf.lite.Interpreter(model_content=..., num_threads=1); exception type name and str(exc)",
    }
    return {"notes": notes, "cases": cases}


# --------------------------------------------------------------------------


def main():
    import tensorflow as tf2

    tf = tf2.compat.v1
    OUT.mkdir(parents=True, exist_ok=True)
    fixtures = {"tensorflow": tf2.__version__, "files": {}}
    contents = {}
    f16_check = {}

    for m_index, (name, build) in enumerate(MODELS.items()):
        graph = tf.Graph()
        with graph.as_default():
            x, y = build(tf)
            with tf.Session(graph=graph) as sess:
                sess.run(tf.global_variables_initializer())
                frozen = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), [y.op.name])
                (OUT / f"{name}_frozen.pb").write_bytes(frozen.SerializeToString(deterministic=True))
                in_shape = x.shape.as_list()
                representative = model_inputs(name, in_shape[1:], N_REPRESENTATIVE, 3000 + m_index)
                representative = representative.reshape([N_REPRESENTATIVE] + in_shape)
                samples = model_inputs(name, in_shape[1:], N_SAMPLES, 4000 + m_index)
                samples = samples.reshape([N_SAMPLES] + in_shape)
                output_tf = np.stack([sess.run(y, {x: s}) for s in samples])
                notes = {}
                for variant in VARIANTS:
                    content, note = convert(tf2, tf, sess, x, y, variant, representative)
                    contents[f"{name}_{variant}"] = content
                    notes[variant] = note
                # supported_types=[float16] alone (no optimizations): does it change anything?
                conv = tf.lite.TFLiteConverter.from_session(sess, [x], [y])
                conv.target_spec.supported_types = [tf2.float16]
                alone = conv.convert()
                f16_check[name] = alone == contents[f"{name}_float"]

        for variant in VARIANTS:
            key = f"{name}_{variant}"
            content = contents[key]
            fname = f"{key}.tflite"
            (OUT / fname).write_bytes(content)
            ref = interpreter(tf2, content, ref=True)
            dflt = interpreter(tf2, content, ref=False)
            inp = dflt.get_input_details()[0]
            arrays = {"input": samples, "output_tf": output_tf}
            feeds = samples
            if np.dtype(inp["dtype"]) != np.float32:
                scale, zp = inp["quantization"]
                feeds = quantize(samples, scale, zp, np.dtype(inp["dtype"]))
                arrays["input_" + np.dtype(inp["dtype"]).name] = feeds
            facts = flatbuffer_facts(content)
            activations = [t["index"] for t in facts["subgraphs"][0]["tensors"] if not t["has_data"]]
            arrays["output_ref"], kept = run_all(ref, feeds, activations)
            for i, value in kept.items():
                arrays[f"ref_tensor_{i}"] = value
            arrays["output_default"], _ = run_all(dflt, feeds)
            out = dflt.get_output_details()[0]
            if np.dtype(out["dtype"]) != np.float32:
                scale, zp = out["quantization"]
                arrays["output_ref_dequantized"] = (
                    (arrays["output_ref"].astype(np.float32) - zp) * np.float32(scale)
                ).astype(np.float32)
            np.savez(OUT / f"{key}_io.npz", **arrays)
            o_ref = arrays["output_ref"].astype(np.float64)
            o_def = arrays["output_default"].astype(np.float64)
            fixtures["files"][fname] = {
                "model": name,
                "variant": variant,
                "converter": notes[variant],
                "bytes": len(content),
                "input_details": [detail(d) for d in dflt.get_input_details()],
                "output_details": [detail(d) for d in dflt.get_output_details()],
                "tensor_details": [detail(d) for d in dflt.get_tensor_details()],
                "flatbuffer": facts,
                "ref_vs_default_max_abs_diff": float(np.max(np.abs(o_ref - o_def))),
                "ref_vs_tf_session_max_abs_diff": (
                    float(
                        np.max(np.abs(arrays.get("output_ref_dequantized", arrays["output_ref"]) - output_tf))
                    )
                ),
                "io_npz": f"{key}_io.npz",
            }

    fixtures["f16_supported_types_without_optimizations_equals_float"] = f16_check
    (OUT / "tflite_fixtures.json").write_text(json.dumps(_jsonable(fixtures), indent=1) + "\n")
    errors = error_cases(tf2, contents["mlp_float"], contents["mlp_int8"])
    (OUT / "tflite_errors.json").write_text(json.dumps(errors, indent=1) + "\n")

    for fname, info in fixtures["files"].items():
        print(
            f"{fname:24s} {info['bytes']:7d} B ops={info['flatbuffer']['builtin_ops']} "
            f"min_rt={info['flatbuffer']['metadata'].get('min_runtime_version')} "
            f"ref-vs-default={info['ref_vs_default_max_abs_diff']:.3g} "
            f"ref-vs-session={info['ref_vs_tf_session_max_abs_diff']:.3g}"
        )
    print("f16 supported_types alone == float:", f16_check)
    for case, err in errors["cases"].items():
        print(f"{case}: {err['exception']}: {err['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
