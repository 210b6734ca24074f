"""tf.keras pieces run the same way by ferroflow (tests/python/test_keras_round2.py) and by TensorFlow 2.21's
tf_keras in graph mode (tools/make_keras_round2_fixtures.py writes tests/fixtures/keras/round2/<case>.npz).

Each case takes the module (``ferroflow`` or ``tensorflow.compat.v1``) and returns a dict of numpy arrays (or
strings) to compare: stateful metric objects used on their own (update_state / result / reset_states), Lambda
layers through ``to_json``/``model_from_json``, masks on layer outputs, bilinear up-sampling, ...
"""

import numpy as np


def _run_metric(tf, sess, metric, batches):
    """The metric's result after each batch (``(y_true, y_pred, sample_weight)``), then after reset_states."""
    updates = [metric.update_state(y, p, sample_weight=w) for y, p, w in batches]
    result = metric.result()
    sess.run(tf.variables_initializer(metric.variables))
    out = []
    for u in updates:
        sess.run(u)
        out.append(np.asarray(sess.run(result), np.float64))
    metric.reset_states()
    out.append(np.asarray(sess.run(result), np.float64))
    return out


def standalone_metrics(tf):
    """Every confusion-matrix metric on its own over two batches (the second weighted), reset at the end; the
    names TF gives metric objects made without one; a metric called (update and result in one tensor)."""
    k = tf.keras
    rng = np.random.RandomState(0)
    y = (rng.rand(30, 2) > 0.5).astype(np.float32)
    p = rng.rand(30, 2).astype(np.float32)
    w = rng.rand(30).astype(np.float32)
    binary = [(y[:12], p[:12], None), (y[12:], p[12:], w[12:])]
    metrics = [
        k.metrics.Precision(), k.metrics.Recall(thresholds=[0.2, 0.7]), k.metrics.AUC(), k.metrics.AUC(curve="PR"),
        k.metrics.AUC(num_thresholds=17, summation_method="minoring"),
        k.metrics.AUC(multi_label=True, num_thresholds=50),
        k.metrics.AUC(curve="PR", summation_method="majoring", thresholds=[0.3, 0.5]),
        k.metrics.AUC(curve="PRGAIN", num_thresholds=20), k.metrics.AUC(from_logits=True, num_thresholds=25),
        k.metrics.AUC(multi_label=True, label_weights=[0.3, 1.2], curve="PR"),
        k.metrics.AUC(label_weights=[0.5, 2.0], num_thresholds=30),
        k.metrics.TruePositives(), k.metrics.FalseNegatives(thresholds=[0.1, 0.9]), k.metrics.TrueNegatives(),
        k.metrics.FalsePositives(thresholds=0.35),
        k.metrics.PrecisionAtRecall(0.6), k.metrics.SensitivityAtSpecificity(0.5, num_thresholds=30),
        k.metrics.SpecificityAtSensitivity(0.4), k.metrics.RecallAtPrecision(0.5),
        k.metrics.Precision(top_k=1), k.metrics.Recall(class_id=1), k.metrics.Precision(top_k=1, thresholds=[0.4]),
    ]
    sess = k.backend.get_session()
    out = {"names": np.array([m.name for m in metrics])}
    for i, m in enumerate(metrics):
        for j, value in enumerate(_run_metric(tf, sess, m, binary)):
            out[f"m{i}_{j}"] = value
    labels = rng.randint(0, 3, 20)
    preds = rng.randint(0, 3, 20).astype(np.float32)
    iou = k.metrics.MeanIoU(num_classes=4)
    for j, value in enumerate(_run_metric(tf, sess, iou, [(labels, preds, None), (labels[::-1], preds, w[:20])])):
        out[f"iou_{j}"] = value
    onehot = np.eye(3, dtype=np.float32)[labels]
    probs = rng.rand(20, 3).astype(np.float32)
    iou2 = k.metrics.MeanIoU(num_classes=3, sparse_y_true=False, sparse_y_pred=False, name="iou_onehot")
    out["iou_onehot"] = _run_metric(tf, sess, iou2, [(onehot, probs, None)])[0]
    top = k.metrics.TopKCategoricalAccuracy(k=2)
    out["top_k"] = _run_metric(tf, sess, top, [(onehot, probs, None), (onehot[:5], probs[5:10], w[:5])])[1]
    called = k.metrics.AUC(name="called")
    value = called(y[:, :1], p[:, :1])
    sess.run(tf.variables_initializer(called.variables))
    out["called"] = np.asarray(sess.run(value), np.float64)
    return out


def lambda_model(tf):
    """A Sequential with Lambda layers (a lambda, one with a default, one with ``arguments`` and an output
    shape): returns the model and its input (``lambda_json`` records the predictions and configs)."""
    k = tf.keras
    model = k.Sequential([
        k.layers.Dense(3, input_shape=(4,)),
        k.layers.Lambda(lambda x: x * 2.0 + 1.0),
        k.layers.Lambda(lambda x, shift=0.5: x - shift, name="shifted"),
        k.layers.Lambda(lambda x, a: x * a, arguments={"a": -1.5}, output_shape=(3,)),
    ])
    rng = np.random.RandomState(4)
    model.set_weights([rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)])
    return model, rng.standard_normal((5, 4)).astype(np.float32)


def lambda_json(tf):
    """The Lambda layers' config keys and the predictions of the model rebuilt from ``to_json``."""
    import json

    model, x = lambda_model(tf)
    config = json.loads(model.to_json())["config"]["layers"]
    lambdas = [layer["config"] for layer in config if layer["class_name"] == "Lambda"]
    again = tf.keras.models.model_from_json(model.to_json())
    again.set_weights(model.get_weights())
    return {"predict": model.predict(x), "predict_again": again.predict(x),
            "lambda_keys": np.array([",".join(sorted(c)) for c in lambdas]),
            "function_types": np.array([c["function_type"] for c in lambdas]),
            "arguments": np.array([json.dumps(c["arguments"]) for c in lambdas]),
            "output_shapes": np.array([json.dumps(c["output_shape"]) for c in lambdas])}


def masks_and_upsampling(tf):
    """``tensor._keras_mask`` on layer outputs (Embedding(mask_zero) through an LSTM and Dense, Masking, a
    masked GlobalAveragePooling1D which ends the mask; None where no mask), and bilinear UpSampling2D
    (channels last and first, non-square sizes)."""
    k = tf.keras
    sess = k.backend.get_session()
    ids = k.Input((5,), dtype="int32")
    emb = k.layers.Embedding(7, 3, mask_zero=True)(ids)
    seq = k.layers.LSTM(2, return_sequences=True)(emb)
    dense = k.layers.Dense(2)(seq)
    pooled = k.layers.GlobalAveragePooling1D()(dense)
    feats = k.Input((4, 2))
    masked = k.layers.Masking(mask_value=0.5)(feats)
    model = k.Model([ids, feats], [pooled, masked])
    rng = np.random.RandomState(6)
    model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in model.get_weights()])
    id_values = np.array([[1, 2, 0, 0, 0], [3, 0, 4, 5, 6]], np.int32)
    feat_values = rng.standard_normal((2, 4, 2)).astype(np.float32)
    feat_values[0, 1] = 0.5
    feat_values[1, 3] = 0.5
    feed = {ids: id_values, feats: feat_values}
    out = {"has_mask": np.array([t._keras_mask is not None for t in (emb, seq, dense, pooled, masked)])}
    values = sess.run([emb._keras_mask, seq._keras_mask, dense._keras_mask, masked._keras_mask, pooled], feed)
    for name, v in zip(["emb_mask", "seq_mask", "dense_mask", "masking_mask", "pooled"], values):
        out[name] = v
    image = rng.standard_normal((2, 3, 4, 2)).astype(np.float32)
    up = k.Sequential([k.layers.UpSampling2D((2, 3), interpolation="bilinear", input_shape=(3, 4, 2))])
    out["bilinear"] = up.predict(image)
    up_cf = k.Sequential([k.layers.UpSampling2D(3, data_format="channels_first", interpolation="bilinear",
                                                input_shape=(2, 3, 4))])
    out["bilinear_cf"] = up_cf.predict(image.transpose(0, 3, 1, 2))
    out["bilinear_shape"] = np.array(up.output_shape[1:])
    return out


def attention_scores(tf):
    """Attention layers called on placeholders: scores returned (``return_attention_scores``), masks given to the
    call, MultiHeadAttention with an explicit ``attention_mask``, a causal mask, a key and ``output_shape``."""
    k = tf.keras
    sess = k.backend.get_session()
    rng = np.random.RandomState(8)
    q_in = tf.placeholder(tf.float32, [None, 3, 4])
    v_in = tf.placeholder(tf.float32, [None, 5, 4])
    k_in = tf.placeholder(tf.float32, [None, 5, 2])
    q_mask = tf.constant([[True, True, False], [True, False, True]])
    v_mask = tf.constant([[True, True, True, False, False], [True, True, True, True, True]])
    att = k.layers.Attention(use_scale=True)
    out, scores = att([q_in, v_in], mask=[q_mask, v_mask], return_attention_scores=True)
    add = k.layers.AdditiveAttention(use_scale=False)
    add_out, add_scores = add([q_in, v_in], return_attention_scores=True, use_causal_mask=True)
    mha = k.layers.MultiHeadAttention(num_heads=3, key_dim=2, value_dim=3, output_shape=5)
    pairs = tf.constant(rng.rand(2, 3, 5) > 0.3)
    mha_out, mha_scores = mha(q_in, v_in, key=k_in, attention_mask=pairs, return_attention_scores=True)
    causal = k.layers.MultiHeadAttention(num_heads=1, key_dim=4, use_bias=False)
    causal_out = causal(q_in, q_in, use_causal_mask=True)
    for layer in (att, mha, causal):
        layer.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in layer.get_weights()])
    feed = {q_in: rng.standard_normal((2, 3, 4)), v_in: rng.standard_normal((2, 5, 4)),
            k_in: rng.standard_normal((2, 5, 2))}
    names = ["out", "scores", "add_out", "add_scores", "mha_out", "mha_scores", "causal_out"]
    values = sess.run([out, scores, add_out, add_scores, mha_out, mha_scores, causal_out], feed)
    result = dict(zip(names, values))
    result["weight_names"] = np.array([w.name for w in mha.weights + causal.weights])
    return result


CASES = {"standalone_metrics": standalone_metrics, "lambda_json": lambda_json,
         "masks_and_upsampling": masks_and_upsampling, "attention_scores": attention_scores}
