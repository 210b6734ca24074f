"""Small Keras models trained the same way by ferroflow (tests/python/test_keras.py) and by TensorFlow 2.21's
tf_keras in graph mode (tools/make_keras_fixtures.py writes tests/fixtures/keras/<case>.npz).

Each case builds its model with ``tf.keras`` of the module it is given, sets every layer's weights from numpy
(layer by layer), trains a few epochs on fixed data with ``shuffle=False`` and returns what it saw: the history,
``evaluate``, ``predict`` and the final weights. ``TF1_NAMES`` maps tf_keras 2.21's metric names to TF 1.x's,
which ferroflow uses. A case may return a fifth item, keyword arguments for ``evaluate`` (sample weights).

The later cases cover sample and class weights (``weighted``, ``temporal``), masks (``masked_rnn``,
``masked_pooling``, ``temporal``) and the optimizers Nadam, Adamax and Keras's Adagrad.
"""

import numpy as np

TF1_NAMES = {"mae": "mean_absolute_error", "mse": "mean_squared_error", "accuracy": "acc"}


def _init_weights(model, seed):
    rng = np.random.RandomState(seed)
    for layer in model.layers:
        ws = layer.get_weights()
        if not ws:
            continue
        new = []
        for w in ws:
            if w.ndim == 1 and np.all(w == 1.0):
                # batch normalization's gamma and moving variance: positive values around one
                new.append(rng.uniform(0.5, 1.5, size=w.shape).astype(np.float32))
            else:
                new.append((rng.standard_normal(w.shape) * 0.3).astype(np.float32))
        layer.set_weights(new)


def _data(seed, n, shape, kind, classes=3):
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((n,) + shape).astype(np.float32)
    if kind == "sparse":
        y = rng.randint(0, classes, size=n)
    elif kind == "onehot":
        y = np.eye(classes, dtype=np.float32)[rng.randint(0, classes, size=n)]
    elif kind == "binary":
        y = rng.randint(0, 2, size=(n, 1)).astype(np.float32)
    else:
        y = rng.standard_normal((n, 1)).astype(np.float32)
    return x, y


def mlp(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.Flatten(input_shape=(4, 4)),
        k.layers.Dense(8, activation="relu", kernel_regularizer=k.regularizers.l2(0.01)),
        k.layers.Dense(3, activation="softmax"),
    ])
    model.compile(optimizer=k.optimizers.Adam(learning_rate=0.01) if not hasattr(k.optimizers, "legacy")
                  else k.optimizers.legacy.Adam(learning_rate=0.01),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = _data(1, 40, (4, 4), "sparse")
    return model, x, y, {"epochs": 3, "batch_size": 8, "validation_split": 0.25}


def cnn(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.Conv2D(4, 3, activation="relu", input_shape=(6, 6, 1)),
        k.layers.MaxPooling2D(),
        k.layers.BatchNormalization(),
        k.layers.Flatten(),
        k.layers.Dense(3, activation="softmax"),
    ])
    sgd = k.optimizers.legacy.SGD if hasattr(k.optimizers, "legacy") else k.optimizers.SGD
    model.compile(optimizer=sgd(learning_rate=0.05, momentum=0.9), loss="categorical_crossentropy",
                  metrics=["acc"])
    x, y = _data(2, 24, (6, 6, 1), "onehot")
    return model, x, y, {"epochs": 3, "batch_size": 6}


def text(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.Embedding(20, 4, input_length=6),
        k.layers.GlobalAveragePooling1D(),
        k.layers.Dense(4, activation="relu"),
        k.layers.Dense(1, activation="sigmoid"),
    ])
    rms = k.optimizers.legacy.RMSprop if hasattr(k.optimizers, "legacy") else k.optimizers.RMSprop
    model.compile(optimizer=rms(learning_rate=0.01), loss="binary_crossentropy", metrics=["accuracy"])
    rng = np.random.RandomState(3)
    x = rng.randint(0, 20, size=(30, 6))
    y = rng.randint(0, 2, size=(30,)).astype(np.float32)
    return model, x, y, {"epochs": 3, "batch_size": 10, "validation_data": (x[:8], y[:8])}


def regression(tf):
    k = tf.keras
    inp = k.Input(shape=(3,))
    h = k.layers.Dense(8, activation="relu")(inp)
    out = k.layers.Dense(1)(h)
    model = k.Model(inp, out)
    rms = k.optimizers.legacy.RMSprop if hasattr(k.optimizers, "legacy") else k.optimizers.RMSprop
    model.compile(optimizer=rms(learning_rate=0.01, momentum=0.5), loss="mse", metrics=["mae", "mse"])
    x, y = _data(4, 32, (3,), "regression")
    return model, x, y, {"epochs": 4, "batch_size": 8, "validation_split": 0.25}


def rnn(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.LSTM(5, return_sequences=True, input_shape=(4, 3), recurrent_activation="hard_sigmoid",
                      implementation=1),
        k.layers.GRU(4, reset_after=False, recurrent_activation="hard_sigmoid"),
        k.layers.Dense(1),
    ])
    sgd = k.optimizers.legacy.SGD if hasattr(k.optimizers, "legacy") else k.optimizers.SGD
    model.compile(optimizer=sgd(learning_rate=0.1), loss="mse")
    x, y = _data(5, 16, (4, 3), "regression")
    return model, x, y, {"epochs": 2, "batch_size": 8}


def merge(tf):
    k = tf.keras
    a = k.Input(shape=(3,), name="a")
    b = k.Input(shape=(2,), name="b")
    ha = k.layers.Dense(4, activation="tanh")(a)
    hb = k.layers.Dense(4, activation="sigmoid")(b)
    s = k.layers.add([ha, hb])
    c = k.layers.concatenate([s, k.layers.Multiply()([ha, hb])])
    out = k.layers.Dense(2, activation="softmax")(c)
    model = k.Model(inputs=[a, b], outputs=out)
    model.compile(optimizer=tf.train.GradientDescentOptimizer(0.2), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    xa, y = _data(6, 20, (3,), "sparse", classes=2)
    xb, _ = _data(7, 20, (2,), "sparse", classes=2)
    return model, [xa, xb], y, {"epochs": 3, "batch_size": 5}


def _opt(k, name, **kwargs):
    legacy = getattr(k.optimizers, "legacy", k.optimizers)
    return getattr(legacy, name)(**kwargs)


def weighted(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.Dense(6, activation="tanh", input_shape=(5,)),
        k.layers.Dense(3, activation="softmax"),
    ])
    model.compile(optimizer=_opt(k, "Nadam", learning_rate=0.02), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], weighted_metrics=["accuracy", "sparse_categorical_crossentropy"])
    x, y = _data(8, 36, (5,), "sparse")
    sw = np.random.RandomState(9).uniform(0.2, 2.0, size=36)
    vx, vy = _data(10, 10, (5,), "sparse")
    vsw = np.random.RandomState(11).uniform(0.0, 1.5, size=10)
    return model, x, y, {"epochs": 3, "batch_size": 8, "sample_weight": sw, "class_weight": {0: 1.0, 1: 2.5, 2: 0.5},
                         "validation_data": (vx, vy, vsw)}, {"sample_weight": sw}


def masked_rnn(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.Embedding(12, 4, mask_zero=True, input_length=7),
        k.layers.LSTM(5, return_sequences=True, recurrent_activation="hard_sigmoid", implementation=1),
        k.layers.GRU(3, reset_after=False, recurrent_activation="hard_sigmoid"),
        k.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer=_opt(k, "Adamax", learning_rate=0.05), loss="binary_crossentropy", metrics=["accuracy"])
    rng = np.random.RandomState(12)
    lengths = rng.randint(1, 8, size=24)
    x = np.zeros((24, 7), np.int64)
    for i, n in enumerate(lengths):
        x[i, 7 - n:] = rng.randint(1, 12, size=n)  # pre-padded, as pad_sequences writes them
    x[3, 2] = 0  # a masked step inside a sequence
    y = rng.randint(0, 2, size=(24,)).astype(np.float32)
    return model, x, y, {"epochs": 3, "batch_size": 6}


def masked_pooling(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.Embedding(15, 3, mask_zero=True, input_length=6),
        k.layers.GlobalAveragePooling1D(),
        k.layers.Dense(4, activation="relu"),
        k.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer=_opt(k, "Adagrad", learning_rate=0.1), loss="binary_crossentropy",
                  metrics=["accuracy"])
    rng = np.random.RandomState(13)
    x = rng.randint(1, 15, size=(20, 6))
    for i, n in enumerate(rng.randint(0, 5, size=20)):
        x[i, 6 - n:] = 0  # post-padded
    y = rng.randint(0, 2, size=(20,)).astype(np.float32)
    return model, x, y, {"epochs": 3, "batch_size": 5, "validation_split": 0.2}


def temporal(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.Masking(mask_value=0.0, input_shape=(5, 2)),
        k.layers.SimpleRNN(4, return_sequences=True),
        k.layers.Dense(3, activation="softmax"),
    ])
    model.compile(optimizer=_opt(k, "Adagrad", learning_rate=0.2, initial_accumulator_value=0.0),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"], weighted_metrics=["accuracy"],
                  sample_weight_mode="temporal")
    rng = np.random.RandomState(14)
    x = rng.standard_normal((16, 5, 2)).astype(np.float32)
    for i, n in enumerate(rng.randint(0, 4, size=16)):
        x[i, 5 - n:] = 0.0
    x[2, 1] = 0.0
    y = rng.randint(0, 3, size=(16, 5, 1))
    sw = rng.uniform(0.1, 1.0, size=(16, 5))
    return model, x, y, {"epochs": 2, "batch_size": 4, "sample_weight": sw}, {"sample_weight": sw}


def stateful(tf):
    k = tf.keras
    model = k.Sequential([
        k.layers.LSTM(3, stateful=True, return_sequences=True, batch_input_shape=(4, 3, 2),
                      recurrent_activation="hard_sigmoid", implementation=1),
        k.layers.SimpleRNN(2, stateful=True),
        k.layers.Dense(1),
    ])
    model.compile(optimizer=_opt(k, "SGD", learning_rate=0.1), loss="mse")
    x, y = _data(15, 12, (3, 2), "regression")
    return model, x, y, {"epochs": 2, "batch_size": 4}, {"batch_size": 4}


def sparse_updates(tf):
    """Nadam and Adadelta on an embedding (sparse gradients: Nadam updates only the rows seen) and dense weights."""
    k = tf.keras
    ids = k.Input(shape=(3,), dtype="int32")
    first = k.layers.Flatten()(k.layers.Embedding(10, 2)(ids))
    second = k.layers.Flatten()(k.layers.Embedding(10, 2)(ids))
    out = k.layers.Dense(1)(k.layers.concatenate([first, second]))
    model = k.Model(ids, out)
    model.compile(optimizer=_opt(k, "Nadam", learning_rate=0.05), loss="mse")
    rng = np.random.RandomState(16)
    x = rng.randint(0, 6, size=(12, 3))  # ids 6-9 never seen
    y = rng.standard_normal((12, 1)).astype(np.float32)
    return model, x, y, {"epochs": 2, "batch_size": 4}


def adadelta(tf):
    k = tf.keras
    model = k.Sequential([k.layers.Dense(4, activation="relu", input_shape=(3,)), k.layers.Dense(1)])
    model.compile(optimizer=_opt(k, "Adadelta", learning_rate=1.0), loss="mae", metrics=["mse"])
    x, y = _data(17, 16, (3,), "regression")
    return model, x, y, {"epochs": 3, "batch_size": 4}


def bidirectional_tagger(tf):
    """Embedding(mask_zero) -> Bidirectional(LSTM, sequences) -> TimeDistributed(Dense softmax) per step, and a
    second branch Bidirectional(GRU, merge_mode='sum') summed into the tags; the mask reaches the loss."""
    k = tf.keras
    ids = k.Input(shape=(6,), dtype="int32")
    emb = k.layers.Embedding(9, 3, mask_zero=True)(ids)
    seq = k.layers.Bidirectional(k.layers.LSTM(3, return_sequences=True, recurrent_activation="hard_sigmoid",
                                               implementation=1))(emb)
    other = k.layers.Bidirectional(k.layers.GRU(4, return_sequences=True, reset_after=False,
                                                recurrent_activation="hard_sigmoid"), merge_mode="sum")(emb)
    tags = k.layers.TimeDistributed(k.layers.Dense(3, activation="softmax"))(k.layers.concatenate([seq, other]))
    model = k.Model(ids, tags)
    model.compile(optimizer=_opt(k, "RMSprop", learning_rate=0.02), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    rng = np.random.RandomState(18)
    x = rng.randint(1, 9, size=(12, 6))
    for i, n in enumerate(rng.randint(0, 4, size=12)):
        x[i, 6 - n:] = 0
    y = rng.randint(0, 3, size=(12, 6, 1))
    return model, x, y, {"epochs": 2, "batch_size": 4}


def layer_zoo(tf):
    """Weightless image layers (ZeroPadding2D, UpSampling2D, Cropping2D), activation layers (LeakyReLU, PReLU,
    ReLU with a cap and slope, ELU, Softmax) and a loss object (SparseCategoricalCrossentropy on logits)."""
    k = tf.keras
    inp = k.Input(shape=(4, 4, 1))
    h = k.layers.Conv2D(2, 3)(k.layers.ZeroPadding2D(1)(inp))
    h = k.layers.Cropping2D(((1, 0), (0, 1)))(k.layers.UpSampling2D()(k.layers.LeakyReLU(0.2)(h)))
    h = k.layers.PReLU()(k.layers.Dense(6)(k.layers.Flatten()(h)))
    h = k.layers.ELU(0.5)(k.layers.ReLU(max_value=1.5, negative_slope=0.1)(k.layers.Dense(5)(h)))
    logits = k.layers.Dense(3)(h)
    probs = k.layers.Softmax()(logits)
    model = k.Model(inp, [logits, probs])
    model.compile(optimizer=_opt(k, "SGD", learning_rate=0.1, momentum=0.5),
                  loss=[k.losses.SparseCategoricalCrossentropy(from_logits=True),
                        k.losses.Huber(delta=0.5, reduction="sum")],
                  loss_weights=[1.0, 0.1], metrics=["accuracy"])
    x, y = _data(19, 12, (4, 4, 1), "sparse")
    onehot = np.eye(3, dtype=np.float32)[y]
    return model, x, [y, onehot], {"epochs": 2, "batch_size": 4, "sample_weight": [np.linspace(0.5, 1.5, 12), None]}


def metric_objects(tf):
    """Metric objects in compile (RMSE, MAE under another name, a weighted MSE; SparseCategoricalAccuracy and a
    top-1 accuracy) next to metric names, with a Huber loss object and sample weights."""
    k = tf.keras
    inp = k.Input(shape=(4,))
    h = k.layers.Dense(5, activation="tanh")(inp)
    value = k.layers.Dense(1, name="value")(h)
    label = k.layers.Dense(3, activation="softmax", name="label")(h)
    model = k.Model(inp, [value, label])
    model.compile(optimizer=_opt(k, "Adam", learning_rate=0.05),
                  loss=[k.losses.Huber(), "sparse_categorical_crossentropy"],
                  metrics={"value": [k.metrics.RootMeanSquaredError(), k.metrics.MeanAbsoluteError(name="mae_obj"),
                                     "mse"],
                           "label": [k.metrics.SparseCategoricalAccuracy(),
                                     k.metrics.SparseTopKCategoricalAccuracy(k=1, name="top1")]},
                  weighted_metrics={"value": [k.metrics.MeanSquaredError()], "label": []})
    x, y = _data(20, 16, (4,), "regression")
    _, labels = _data(21, 16, (4,), "sparse")
    sw = np.linspace(0.2, 1.8, 16)
    return model, x, [y, labels], {"epochs": 2, "batch_size": 5, "sample_weight": [sw, sw]}


def gru_reset_after(tf):
    """TF 2.x-style recurrent cells in the TF1 layers: GRU(reset_after=True) (two bias rows) and LSTM with the
    sigmoid gate activation, going backwards, with dropout off; SimpleRNN returning its state."""
    k = tf.keras
    inp = k.Input(shape=(5, 3))
    seq = k.layers.GRU(4, reset_after=True, recurrent_activation="sigmoid", return_sequences=True)(inp)
    lstm = k.layers.LSTM(3, recurrent_activation="sigmoid", go_backwards=True, implementation=1)(seq)
    out, state = k.layers.SimpleRNN(2, return_state=True)(seq)
    model = k.Model(inp, k.layers.Dense(1)(k.layers.concatenate([lstm, out, state])))
    model.compile(optimizer=_opt(k, "Adam", learning_rate=0.02), loss="mse")
    x, y = _data(22, 10, (5, 3), "regression")
    return model, x, y, {"epochs": 2, "batch_size": 5}


def attention_dot(tf):
    """Keras seq2seq with dot-product attention: scores = dot([decoder, encoder], axes=[2, 2]), softmax, context =
    dot([weights, encoder], axes=[2, 1]); plus a cosine Dot(normalize=True) of two vectors."""
    k = tf.keras
    enc_in = k.Input(shape=(5, 3))
    dec_in = k.Input(shape=(4, 3))
    encoder = k.layers.LSTM(4, return_sequences=True, recurrent_activation="hard_sigmoid", implementation=1)(enc_in)
    decoder = k.layers.GRU(4, return_sequences=True, reset_after=False, recurrent_activation="hard_sigmoid")(dec_in)
    weights = k.layers.Activation("softmax")(k.layers.dot([decoder, encoder], axes=[2, 2]))
    context = k.layers.dot([weights, encoder], axes=[2, 1])
    cosine = k.layers.Dot(axes=1, normalize=True)([k.layers.Flatten()(enc_in), k.layers.Flatten()(
        k.layers.Dense(3)(enc_in))])
    joined = k.layers.concatenate([context, decoder, k.layers.RepeatVector(4)(cosine)])
    out = k.layers.TimeDistributed(k.layers.Dense(3, activation="softmax"))(joined)
    model = k.Model([enc_in, dec_in], out)
    model.compile(optimizer=_opt(k, "RMSprop", learning_rate=0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    enc, _ = _data(23, 8, (5, 3), "regression")
    dec, _ = _data(24, 8, (4, 3), "regression")
    y = np.random.RandomState(25).randint(0, 3, size=(8, 4, 1))
    return model, [enc, dec], y, {"epochs": 2, "batch_size": 4}


def depthwise_layernorm(tf):
    """DepthwiseConv2D (depth multiplier 2, same padding, stride 2) and LayerNormalization (last axis, and over two
    axes) in a small image model."""
    k = tf.keras
    model = k.Sequential([
        k.layers.Conv2D(3, 1, input_shape=(6, 6, 2)),
        k.layers.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2, activation="relu"),
        k.layers.LayerNormalization(),
        k.layers.LayerNormalization(axis=[1, 3], epsilon=1e-5),
        k.layers.GlobalMaxPooling2D(),
        k.layers.Dense(2, activation="softmax"),
    ])
    model.compile(optimizer=_opt(k, "Adam", learning_rate=0.02), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    x, y = _data(26, 12, (6, 6, 2), "sparse", classes=2)
    return model, x, y, {"epochs": 2, "batch_size": 4}


def confusion_metrics(tf):
    """Stateful metric objects in compile: precision, recall (two thresholds: arrays in the history), ROC and PR
    AUC, counts, precision at recall and sensitivity at specificity, a weighted AUC; a class name ('AUC')."""
    k = tf.keras
    model = k.Sequential([
        k.layers.Dense(6, activation="tanh", input_shape=(5,)),
        k.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer=_opt(k, "Adam", learning_rate=0.05), loss="binary_crossentropy",
                  metrics=["accuracy", k.metrics.Precision(), k.metrics.Recall(thresholds=[0.3, 0.7]),
                           k.metrics.AUC(num_thresholds=50), k.metrics.AUC(curve="PR", name="pr_auc"),
                           k.metrics.TruePositives(), k.metrics.FalseNegatives(thresholds=[0.2, 0.8]),
                           k.metrics.PrecisionAtRecall(0.5, num_thresholds=40),
                           k.metrics.SensitivityAtSpecificity(0.5), "AUC"],
                  weighted_metrics=[k.metrics.AUC(name="weighted_roc")])
    x, y = _data(27, 30, (5,), "binary")
    return model, x, y, {"epochs": 3, "batch_size": 8, "validation_data": (x[:10], y[:10]),
                         "sample_weight": np.linspace(0.3, 1.7, 30)}


def multiclass_metrics(tf):
    """Metric objects on a softmax output: top-k accuracy, precision of the top-1 class, recall of one class,
    a multi-label AUC over the three columns, a minoring AUC."""
    k = tf.keras
    model = k.Sequential([
        k.layers.Dense(6, activation="relu", input_shape=(4,)),
        k.layers.Dense(3, activation="softmax"),
    ])
    model.compile(optimizer=_opt(k, "RMSprop", learning_rate=0.02), loss="categorical_crossentropy",
                  metrics=[k.metrics.TopKCategoricalAccuracy(k=2), k.metrics.Precision(top_k=1),
                           k.metrics.Recall(class_id=2), k.metrics.AUC(multi_label=True, num_thresholds=30),
                           k.metrics.AUC(summation_method="minoring", name="auc_min")])
    x, y = _data(28, 24, (4,), "onehot")
    return model, x, y, {"epochs": 2, "batch_size": 6, "validation_split": 0.25}


def attention_layers(tf):
    """Attention (scaled dot, and concat scores with a causal mask), AdditiveAttention with a key, and
    MultiHeadAttention (two heads) over a masked embedding, pooled with its mask."""
    k = tf.keras
    ids = k.Input((6,), dtype="int32")
    emb = k.layers.Embedding(9, 4, mask_zero=True)(ids)
    query = k.layers.Dense(4)(emb)
    dot = k.layers.Attention(use_scale=True)([query, emb])
    additive = k.layers.AdditiveAttention()([query, emb, emb])
    heads = k.layers.MultiHeadAttention(num_heads=2, key_dim=3)(query, emb)
    causal = k.layers.Attention(score_mode="concat")([query, emb], use_causal_mask=True)
    pooled = k.layers.GlobalAveragePooling1D()(k.layers.concatenate([dot, additive, heads, causal]))
    model = k.Model(ids, k.layers.Dense(2, activation="softmax")(pooled))
    # SGD: the key projection's bias has a zero gradient up to rounding (a softmax ignores a shift), which Adam
    # would blow up into steps of the learning rate's size
    model.compile(optimizer=_opt(k, "SGD", learning_rate=0.2, momentum=0.5), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    rng = np.random.RandomState(29)
    x = rng.randint(1, 9, size=(12, 6))
    x[np.arange(12) % 3 == 0, 4:] = 0
    x[np.arange(12) % 4 == 1, 2:] = 0
    y = rng.randint(0, 2, size=12)
    return model, x, y, {"epochs": 2, "batch_size": 4}


CASES = {"mlp": mlp, "cnn": cnn, "text": text, "regression": regression, "rnn": rnn, "merge": merge,
         "weighted": weighted, "masked_rnn": masked_rnn, "masked_pooling": masked_pooling, "temporal": temporal, "stateful": stateful,
         "sparse_updates": sparse_updates, "adadelta": adadelta, "bidirectional_tagger": bidirectional_tagger,
         "layer_zoo": layer_zoo, "metric_objects": metric_objects,
         "gru_reset_after": gru_reset_after, "attention_dot": attention_dot,
         "depthwise_layernorm": depthwise_layernorm, "confusion_metrics": confusion_metrics,
         "multiclass_metrics": multiclass_metrics, "attention_layers": attention_layers}


def _tf1_name(name):
    prefix = "weighted_" if name.startswith("weighted_") else ""
    base = name[len(prefix):]
    return prefix + TF1_NAMES.get(base, base)


def run(tf, name):
    """Builds, initializes (seeded numpy), trains and evaluates case ``name``; returns a dict of arrays."""
    model, x, y, fit_args, *rest = CASES[name](tf)
    _init_weights(model, seed=10)
    hist = model.fit(x, y, shuffle=False, verbose=0, **fit_args)
    eval_args = {"batch_size": 16, **(rest[0] if rest else {})}
    ev = model.evaluate(x, y, verbose=0, **eval_args)
    pred = model.predict(x, batch_size=eval_args["batch_size"])
    if isinstance(pred, list):  # one array per output
        out = {f"predict_{i}": np.asarray(p) for i, p in enumerate(pred)}
    else:
        out = {"predict": np.asarray(pred)}
    ev = ev if isinstance(ev, list) else [ev]  # a metric over several thresholds gives an array: flattened
    out.update({"evaluate": np.concatenate([np.ravel(np.asarray(v, np.float64)) for v in ev]),
           "metrics_names": np.array([_tf1_name(n) for n in model.metrics_names])})
    for key, values in hist.history.items():
        base = key[4:] if key.startswith("val_") else key
        name_ = ("val_" if key.startswith("val_") else "") + _tf1_name(base)
        out["hist_" + name_] = np.asarray(values, np.float64)
    for i, w in enumerate([w for lay in model.layers for w in lay.get_weights()]):
        out[f"weight_{i}"] = w
    out["variables"] = np.array([v.name for lay in model.layers for v in lay.weights])
    out["global_variables"] = np.array([v.name for v in tf.global_variables()])
    return out


# -- HDF5 files (tools/make_keras_h5_fixtures.py, tests/python/test_keras_saving.py) ----------------------------
def h5_sequential(tf):
    """A masked text model: Embedding(mask_zero) -> LSTM -> Dense, compiled with Adam."""
    k = tf.keras
    model = k.Sequential([
        k.layers.Embedding(12, 4, mask_zero=True, input_length=5),
        k.layers.LSTM(3, recurrent_activation="hard_sigmoid", implementation=1),
        k.layers.Dense(2, activation=tf.nn.softmax, kernel_regularizer=k.regularizers.l2(0.01)),
    ])
    model.compile(optimizer=_opt(k, "Adam", learning_rate=0.02), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    _init_weights(model, seed=21)
    x = np.random.RandomState(22).randint(0, 12, size=(6, 5))
    return model, x


def h5_functional(tf):
    """Two inputs, shared Dense, concatenate, Dropout, BatchNormalization; compiled with RMSprop."""
    k = tf.keras
    a = k.Input(shape=(3,), name="left")
    b = k.Input(shape=(3,), name="right")
    shared = k.layers.Dense(4, activation="tanh", name="shared")
    merged = k.layers.concatenate([shared(a), shared(b)])
    h = k.layers.Dropout(0.0)(k.layers.BatchNormalization()(merged))  # no randomness: training is compared
    out = k.layers.Dense(1, activation="sigmoid", name="out")(h)
    model = k.Model(inputs=[a, b], outputs=out)
    model.compile(optimizer=_opt(k, "RMSprop", learning_rate=0.01), loss="binary_crossentropy", metrics=["acc"])
    _init_weights(model, seed=23)
    rng = np.random.RandomState(24)
    return model, [rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)]


def h5_wrappers(tf):
    """The bidirectional tagger (Bidirectional, TimeDistributed, masks), compiled with RMSprop."""
    model, x, _, _ = bidirectional_tagger(tf)
    _init_weights(model, seed=25)
    return model, x


def h5_targets(x):
    """Targets for the HDF5 models' training: class = parity of the id sum (sequential), sign of a sum
    (functional), each id modulo 3 (the tagger's 6-step inputs)."""
    if isinstance(x, list):
        return (x[0].sum(axis=1) + x[1].sum(axis=1) > 0).astype(np.float32)
    if x.shape[1] == 6:
        return (x % 3)[..., None]
    return (x.sum(axis=1) % 2).astype(np.int64)
