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


def image_augmentation(tf):
    """ImageDataGenerator: every affine part and fill mode by explicit parameters (channels last and first,
    linear and nearest sampling), flips and channel shifts; seeded random flows (next() and indexing),
    feature-wise statistics and ZCA from ``fit``; the ``keras.preprocessing.image`` functions."""
    image = tf.keras.preprocessing.image
    rng = np.random.RandomState(9)
    x = rng.uniform(0, 255, size=(6, 7, 9, 3)).astype(np.float32)
    out = {}
    params = {"theta": 27.0, "tx": 1.5, "ty": -2.25, "shear": 12.0, "zx": 0.8, "zy": 1.3}
    for mode in ("nearest", "constant", "reflect", "wrap"):
        gen = image.ImageDataGenerator(fill_mode=mode, cval=17.0)
        out[f"affine_{mode}"] = gen.apply_transform(x[0], params)
    first = image.ImageDataGenerator(data_format="channels_first", interpolation_order=0)
    out["affine_channels_first"] = first.apply_transform(x[1].transpose(2, 0, 1), params)
    plain = image.ImageDataGenerator()
    out["flips_shift"] = plain.apply_transform(x[2], {"flip_horizontal": True, "flip_vertical": True,
                                                      "channel_shift_intensity": 30.0})
    out["rotation_only"] = plain.apply_transform(x[3], {"theta": 90.0})
    aug = image.ImageDataGenerator(rotation_range=20, width_shift_range=0.1, height_shift_range=[1, 2],
                                   shear_range=5, zoom_range=0.2, horizontal_flip=True, vertical_flip=True,
                                   channel_shift_range=10.0, rescale=1.0 / 255, fill_mode="reflect")
    y = np.arange(6)
    flow = aug.flow(x, y, batch_size=4, seed=3)
    for i in range(3):
        bx, by = next(flow)
        out[f"flow_{i}_x"], out[f"flow_{i}_y"] = bx, by
    indexed = aug.flow(x, y, batch_size=4, seed=5, shuffle=False)
    out["indexed_1_x"], out["indexed_1_y"] = indexed[1]
    out["random_transform"] = aug.random_transform(x[4], seed=11)
    out["params"] = np.array([float(v) for v in aug.get_random_transform(x[4].shape, seed=12).values()
                              if v is not None])
    stats = image.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True, rescale=0.5)
    stats.fit(x)
    out["mean"], out["std"] = stats.mean, stats.std
    out["standardized"] = stats.standardize(x[5].copy() * 0.5)
    zca = image.ImageDataGenerator(zca_whitening=True, samplewise_center=True)
    small = x[:, :3, :3, :1]
    zca.fit(small)
    out["zca"] = zca.standardize(small[0].copy())
    np.random.seed(21)
    out["random_rotation"] = image.random_rotation(x[0].transpose(2, 0, 1), 30)
    out["random_shift"] = image.random_shift(x[0].transpose(2, 0, 1), 0.2, 0.1)
    out["random_zoom"] = image.random_zoom(x[0], (0.7, 1.2), row_axis=0, col_axis=1, channel_axis=2)
    return out


def sequence_utilities(tf):
    """TimeseriesGenerator (strides, sampling rate, reverse, shuffled rows, lengths), skipgrams (Python's random
    seeded; a sampling table; categorical labels) and make_sampling_table."""
    import random

    seq = tf.keras.preprocessing.sequence
    data = np.arange(50, dtype=np.float32).reshape(25, 2)
    targets = np.arange(25) * 10
    out = {}
    gens = {"plain": seq.TimeseriesGenerator(data, targets, length=4, batch_size=3),
            "strided": seq.TimeseriesGenerator(data, targets, length=6, sampling_rate=2, stride=3, start_index=2,
                                               end_index=20, reverse=True, batch_size=2)}
    for name, gen in gens.items():
        out[f"{name}_len"] = np.array(len(gen))
        for i in (0, len(gen) - 1):
            out[f"{name}_{i}_x"], out[f"{name}_{i}_y"] = gen[i]
    np.random.seed(2)
    shuffled = seq.TimeseriesGenerator(data, targets, length=3, shuffle=True, batch_size=5)
    out["shuffled_x"], out["shuffled_y"] = shuffled[0]
    random.seed(7)
    couples, labels = seq.skipgrams([1, 4, 0, 3, 9, 2, 4, 7], vocabulary_size=10, window_size=2)
    out["skip_couples"], out["skip_labels"] = np.array(couples), np.array(labels)
    table = seq.make_sampling_table(12, sampling_factor=0.05)
    out["table"] = table
    random.seed(8)
    couples, labels = seq.skipgrams([3, 5, 1, 8, 2, 6, 11, 4], vocabulary_size=12, window_size=1,
                                    negative_samples=0.5, categorical=True, sampling_table=table, seed=99)
    out["sampled_couples"], out["sampled_labels"] = np.array(couples), np.array(labels)
    return out


def generator_training(tf):
    """fit_generator on Sequences: a TimeseriesGenerator into an LSTM (shuffle off; evaluate_generator and
    predict_generator), and an ImageDataGenerator flow (seeded, batches shuffled by Python's random) into a
    small convnet. (A flow for validation would draw numpy numbers in TF's enqueuer thread while the training
    Sequence's epoch end draws its permutation: TF's own order is a race there, so validation is arrays.)"""
    import random

    k = tf.keras
    series = np.sin(np.arange(60) * 0.3).astype(np.float32)[:, None]
    windows = k.preprocessing.sequence.TimeseriesGenerator(series, series, length=5, batch_size=8)
    rnn = k.Sequential([k.layers.LSTM(3, input_shape=(5, 1)), k.layers.Dense(1)])
    rng = np.random.RandomState(13)
    rnn.set_weights([(rng.standard_normal(w.shape) * 0.3).astype(np.float32) for w in rnn.get_weights()])
    rnn.compile(optimizer=k.optimizers.SGD(0.1) if not hasattr(k.optimizers, "legacy") else
                k.optimizers.legacy.SGD(0.1), loss="mse")
    out = {}
    hist = rnn.fit_generator(windows, epochs=2, shuffle=False, verbose=0)
    out["rnn_loss"] = np.array(hist.history["loss"])
    out["rnn_eval"] = np.array(rnn.evaluate_generator(windows))
    out["rnn_predict"] = rnn.predict_generator(windows)
    images = rng.uniform(0, 1, size=(12, 6, 6, 1)).astype(np.float32)
    labels = (images.mean(axis=(1, 2, 3)) > 0.5).astype(np.float32)
    cnn = k.Sequential([k.layers.Conv2D(2, 3, activation="relu", input_shape=(6, 6, 1)), k.layers.Flatten(),
                        k.layers.Dense(1, activation="sigmoid")])
    cnn.set_weights([(rng.standard_normal(w.shape) * 0.3).astype(np.float32) for w in cnn.get_weights()])
    cnn.compile(optimizer=k.optimizers.SGD(0.5) if not hasattr(k.optimizers, "legacy") else
                k.optimizers.legacy.SGD(0.5), loss="binary_crossentropy", metrics=["accuracy"])
    aug = k.preprocessing.image.ImageDataGenerator(rotation_range=15, horizontal_flip=True, width_shift_range=0.1)
    random.seed(4)
    np.random.seed(4)
    hist = cnn.fit_generator(aug.flow(images, labels, batch_size=5, seed=6), epochs=3, verbose=0,
                             validation_data=(images[:6], labels[:6]))
    for key, values in hist.history.items():
        out["cnn_" + ("val_" if key.startswith("val_") else "") + ("acc" if "acc" in key else "loss")] = \
            np.array(values)
    return out


def directory_flow(tf):
    """flow_from_directory over class folders of PNG files written here (resized by Pillow, nearest): the
    classes, file order and batches, in order and seeded-shuffled with augmentation, grayscale and binary."""
    import tempfile

    from PIL import Image

    image = tf.keras.preprocessing.image
    rng = np.random.RandomState(15)
    out = {}
    with tempfile.TemporaryDirectory() as root:
        import os

        for label in ("dogs", "cats"):
            os.makedirs(os.path.join(root, label))
            for i in range(3):
                pixels = rng.randint(0, 256, size=(8, 6, 3)).astype(np.uint8)
                Image.fromarray(pixels).save(os.path.join(root, label, f"img{i}.png"))
        plain = image.ImageDataGenerator(rescale=1.0 / 255).flow_from_directory(
            root, target_size=(4, 5), batch_size=4, shuffle=False)
        out["classes"] = np.array(sorted(plain.class_indices.items()))
        out["filenames"] = np.array(plain.filenames)
        out["plain_0_x"], out["plain_0_y"] = plain[0]
        out["plain_1_x"], out["plain_1_y"] = plain[1]
        aug = image.ImageDataGenerator(rotation_range=10, horizontal_flip=True).flow_from_directory(
            root, target_size=(5, 5), color_mode="grayscale", class_mode="binary", batch_size=3, seed=2)
        for i in range(2):
            out[f"aug_{i}_x"], out[f"aug_{i}_y"] = next(aug)
    return out


def dataset_metrics_h5(tf):
    """fit on a repeated tf.data dataset with steps_per_epoch and a dataset for validation, evaluate on a
    dataset with steps (TF averages those losses over the steps), with AUC as a metric; the model saved to
    HDF5 and loaded back compiled with its metric objects."""
    import os
    import tempfile

    k = tf.keras
    model = k.Sequential([k.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.set_weights([np.array([[0.3], [-0.2], [0.5]], np.float32), np.zeros(1, np.float32)])
    model.compile(optimizer=k.optimizers.legacy.SGD(0.1) if hasattr(k.optimizers, "legacy") else
                  k.optimizers.SGD(0.1), loss="binary_crossentropy", metrics=[k.metrics.AUC(), "accuracy"])
    rng = np.random.RandomState(0)
    x = rng.standard_normal((10, 3)).astype(np.float32)
    y = (rng.uniform(size=(10, 1)) > 0.5).astype(np.float32)
    train = tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat()
    val = tf.data.Dataset.from_tensor_slices((x, y)).batch(3).repeat()
    hist = model.fit(train, steps_per_epoch=3, epochs=2, verbose=0, validation_data=val, validation_steps=4)
    out = {f"hist_{key}": np.asarray(v, np.float64) for key, v in hist.history.items()}
    out["evaluate"] = np.asarray(model.evaluate(tf.data.Dataset.from_tensor_slices((x, y)).batch(4), steps=3,
                                                verbose=0), np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.h5")
        model.save(path)
        loaded = k.models.load_model(path)
        out["loaded_names"] = np.array([("acc" if n == "accuracy" else n) for n in loaded.metrics_names])
        out["loaded_evaluate"] = np.asarray(loaded.evaluate(x, y, verbose=0), np.float64)
    return out


def conv_lstm(tf):
    """ConvLSTM2D (same padding returning sequences, then valid padding with strides and return_state; one
    going backwards) trained two epochs: history, predictions and weights."""
    k = tf.keras
    inp = k.Input((4, 6, 6, 2))
    seq = k.layers.ConvLSTM2D(3, 3, padding="same", return_sequences=True, name="clstm_a")(inp)
    out, h, c = k.layers.ConvLSTM2D(2, (3, 2), strides=(2, 1), return_state=True, go_backwards=True,
                                    name="clstm_b")(seq)
    joined = k.layers.concatenate([k.layers.Flatten()(out), k.layers.Flatten()(c)])
    model = k.Model(inp, k.layers.Dense(1)(joined))
    rng = np.random.RandomState(33)
    model.set_weights([(rng.standard_normal(w.shape) * 0.3).astype(np.float32) for w in model.get_weights()])
    model.compile(optimizer=k.optimizers.legacy.SGD(0.05) if hasattr(k.optimizers, "legacy") else
                  k.optimizers.SGD(0.05), loss="mse")
    x = rng.standard_normal((6, 4, 6, 6, 2)).astype(np.float32)
    y = rng.standard_normal((6, 1)).astype(np.float32)
    hist = model.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0)
    out = {"loss": np.array(hist.history["loss"]), "predict": model.predict(x),
           "shapes": np.array([d for t in (seq, out, h, c) for d in t.shape.as_list()[1:]])}
    for i, w in enumerate(model.get_weights()):
        out[f"weight_{i}"] = w
    return out


def functional_layer_order(tf):
    """A branchy functional model (attention layers, a ConvLSTM2D branch, bilinear up-sampling): its layers in
    Keras's order (deepest first), so get_weights/set_weights line up with TF's; predictions, and the same after
    an HDF5 round trip."""
    import os
    import tempfile

    k = tf.keras
    inp = k.Input((5, 4), name="series")
    a = k.layers.Attention(use_scale=True, name="att")([inp, inp])
    b = k.layers.AdditiveAttention(name="add_att")([inp, inp])
    c = k.layers.MultiHeadAttention(2, 3, name="mha")(inp, inp)
    d = k.layers.ConvLSTM2D(2, 3, padding="same", name="clstm")(k.layers.Reshape((5, 2, 2, 1), name="grid")(inp))
    u = k.layers.UpSampling2D(interpolation="bilinear", name="up")(d)
    flat = [k.layers.Flatten(name=f"flat_{i}")(t) for i, t in enumerate((a, b, c, u))]
    model = k.Model(inp, k.layers.Dense(1, name="out")(k.layers.concatenate(flat, name="joined")))
    rng = np.random.RandomState(0)
    model.set_weights([(rng.standard_normal(w.shape) * 0.3).astype(np.float32) for w in model.get_weights()])
    model.compile(optimizer="adam", loss="mse")
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    out = {"layers": np.array([layer.name for layer in model.layers]), "predict": model.predict(x),
           "shapes": np.array([str(w.shape) for w in model.get_weights()])}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.h5")
        model.save(path)
        out["loaded_predict"] = k.models.load_model(path).predict(x)
    return out


def bidirectional_merges(tf):
    """Bidirectional over GRU/LSTM with every merge mode (concat, sum, ave, mul, None: a list), with
    return_state, over a masked input; TimeDistributed(Dense) on the merged sequence."""
    k = tf.keras
    ids = k.Input((5,), dtype="int32")
    emb = k.layers.Embedding(6, 3, mask_zero=True)(ids)
    outs = []
    for mode in ("concat", "sum", "ave", "mul"):
        outs.append(k.layers.Bidirectional(k.layers.GRU(2, return_sequences=True, reset_after=False),
                                           merge_mode=mode)(emb))
    forward, backward = k.layers.Bidirectional(k.layers.LSTM(2, return_sequences=True), merge_mode=None)(emb)
    last, fh, fc, bh, bc = k.layers.Bidirectional(k.layers.LSTM(2, return_state=True))(emb)
    seq = k.layers.TimeDistributed(k.layers.Dense(2))(k.layers.concatenate(outs + [forward, backward]))
    model = k.Model(ids, [seq, last, fh, fc, bh, bc])
    rng = np.random.RandomState(35)
    model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in model.get_weights()])
    x = np.array([[1, 2, 3, 0, 0], [4, 5, 1, 2, 3], [2, 0, 0, 0, 0]], np.int32)
    return {f"out_{i}": v for i, v in enumerate(model.predict(x))}


def history_params(tf):
    """``history.params``, ``history.epoch`` and the history's keys after fit on arrays (validation split), a
    generator and a dataset: what callbacks see."""
    k = tf.keras
    model = k.Sequential([k.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile("sgd", "binary_crossentropy", metrics=["accuracy", k.metrics.AUC()])
    x = np.ones((10, 3), np.float32)
    y = np.ones((10, 1), np.float32)

    def batches():
        while True:
            yield x[:4], y[:4]

    runs = [model.fit(x, y, epochs=2, verbose=0, validation_split=0.2, batch_size=4),
            model.fit_generator(batches(), steps_per_epoch=2, epochs=1, verbose=0),
            model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat(), steps_per_epoch=3, epochs=1,
                      verbose=0)]
    out = {}
    for i, h in enumerate(runs):
        out[f"params_{i}"] = np.array([f"{key}={h.params[key]!r}" for key in sorted(h.params)])
        out[f"epoch_{i}"] = np.array(h.epoch)
        out[f"keys_{i}"] = np.array(sorted(h.history))
    return out


def optimizer_checkpoint(tf, path, save):
    """Two models (Adam; RMSprop with momentum) trained one epoch; with ``save`` they are saved with
    ``save_weights(path + '/<optimizer>')`` (TF's format: the optimizer's iterations, hyper-parameters and slots
    under TF's keys) after a first epoch, else restored from there into fresh compiled models; either way one
    more epoch follows. Returns the checkpoint keys (when saving) and the weights and iterations at the end."""
    k = tf.keras
    out = {}
    for name in ("Adam", "RMSprop"):
        model = k.Sequential([k.layers.Dense(4, activation="tanh", input_shape=(3,)), k.layers.Dense(1)])
        rng = np.random.RandomState(31)
        model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in model.get_weights()])
        opts = k.optimizers.legacy if hasattr(k.optimizers, "legacy") else k.optimizers
        opt = opts.Adam(0.05) if name == "Adam" else opts.RMSprop(0.02, momentum=0.5)
        model.compile(optimizer=opt, loss="mse")
        x = rng.standard_normal((16, 3)).astype(np.float32)
        y = rng.standard_normal((16, 1)).astype(np.float32)
        prefix = f"{path}/{name.lower()}"
        if save:
            model.fit(x, y, epochs=1, batch_size=4, shuffle=False, verbose=0)
            model.save_weights(prefix)
            reader = tf.train.NewCheckpointReader(prefix)
            out[f"{name}_keys"] = np.array(sorted(reader.get_variable_to_shape_map()))
        else:
            model.load_weights(prefix)
        model.fit(x, y, epochs=1, batch_size=4, shuffle=False, verbose=0)
        for i, w in enumerate(model.get_weights()):
            out[f"{name}_weight_{i}"] = w
        out[f"{name}_iterations"] = np.array(k.backend.get_value(model.optimizer.iterations))
    return out


CASES = {"standalone_metrics": standalone_metrics, "lambda_json": lambda_json,
         "masks_and_upsampling": masks_and_upsampling, "attention_scores": attention_scores,
         "image_augmentation": image_augmentation, "sequence_utilities": sequence_utilities,
         "generator_training": generator_training, "directory_flow": directory_flow,
         "dataset_metrics_h5": dataset_metrics_h5, "conv_lstm": conv_lstm,
         "functional_layer_order": functional_layer_order, "bidirectional_merges": bidirectional_merges,
         "history_params": history_params}
