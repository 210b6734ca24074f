"""tf.keras in TF1 graph mode: layers, Sequential/functional models, fit/evaluate/predict, callbacks,
backend, utils, masks, sample weights. The models of _keras_cases.py (sample and class weights, masks, stateful
RNNs and the optimizers among them) are checked against TensorFlow 2.21's tf_keras in graph mode
(tests/fixtures/keras/*.npz, made by tools/make_keras_fixtures.py): same history, evaluation, predictions and
final weights to 1e-5."""

import pathlib

import numpy as np
import pytest

import _keras_cases
import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "keras"
keras = tf.keras
K = tf.keras.backend


@pytest.fixture(autouse=True)
def fresh_session():
    K.clear_session()
    yield
    K.clear_session()


@pytest.mark.parametrize("name", sorted(_keras_cases.CASES))
def test_case_matches_tf_keras(name):
    want = dict(np.load(FIXTURES / f"{name}.npz"))
    np.random.seed(0)
    got = _keras_cases.run(tf, name)
    names = [_tf1_variable_name(n) for n in want.pop("variables")]
    assert [str(n) for n in got.pop("variables")] == names
    # every variable, the optimizer's too (training/Adam/iter, training/Adam/dense/kernel/m, ...), in TF's order
    assert [str(n) for n in got.pop("global_variables")] == [_tf1_variable_name(n) for n in want.pop("global_variables")]
    assert list(got.pop("metrics_names")) == list(want.pop("metrics_names"))
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-5, err_msg=f"{name}.{key}")


def _tf1_variable_name(name):
    """TF 2.21 puts an RNN cell's weights under the cell's name; TF 1.x (and ferroflow) under the layer's."""
    for cell in ("/lstm_cell/", "/gru_cell/", "/simple_rnn_cell/"):
        name = str(name).replace(cell, "/")
    return name


def test_layers_in_plain_tf1_code_train_with_a_tf_train_optimizer():
    rng = np.random.RandomState(0)
    x_np = rng.standard_normal((32, 4)).astype(np.float32)
    y_np = (x_np @ rng.standard_normal((4, 1))).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    hidden = keras.layers.Dense(8, activation="tanh", kernel_initializer="he_normal")(x)
    pred = keras.layers.Dense(1, kernel_initializer=keras.initializers.Zeros())(hidden)
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    assert [v.name for v in tf.trainable_variables()] == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0",
                                                         "dense_1/bias:0"]
    assert pred.op.name == "dense_1/BiasAdd" and hidden.op.name == "dense/Tanh"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: x_np, y: y_np})
        assert np.all(sess.run(tf.trainable_variables()[2]) == 0)
        for _ in range(50):
            sess.run(train, {x: x_np, y: y_np})
        assert sess.run(loss, {x: x_np, y: y_np}) < 0.5 * first


def test_layer_weights_regularizers_and_trainable():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = keras.layers.Dense(2, kernel_regularizer=keras.regularizers.l1_l2(l1=0.1, l2=0.2),
                               bias_regularizer="l2", trainable=False)
    out = layer(x)
    assert layer.output is out and layer.input is x
    assert [w.name for w in layer.weights] == ["dense/kernel:0", "dense/bias:0"]
    assert layer.trainable_weights == [] and tf.trainable_variables() == []
    k = np.arange(6, dtype=np.float32).reshape(3, 2) - 2.5
    b = np.array([1.0, -2.0], np.float32)
    layer.set_weights([k, b])
    got_k, got_b = layer.get_weights()
    np.testing.assert_array_equal(got_k, k)
    np.testing.assert_array_equal(got_b, b)
    reg = K.get_session().run(tf.add_n(layer.losses))
    want = 0.1 * np.abs(k).sum() + 0.2 * np.square(k).sum() + 0.01 * np.square(b).sum()
    np.testing.assert_allclose(reg, want, rtol=1e-6)
    with pytest.raises(ValueError, match="weight shape"):
        layer.set_weights([k.T, b])


def test_dropout_and_batch_norm_follow_the_learning_phase():
    model = keras.Sequential([keras.layers.Dropout(0.5, input_shape=(100,)), keras.layers.BatchNormalization()])
    x = np.ones((4, 100), np.float32)
    # predict: the learning phase is off, so no dropout and the moving statistics (0 and 1) are used.
    np.testing.assert_allclose(model.predict(x), x / np.sqrt(1 + 1e-3), rtol=1e-6)
    sess = K.get_session()
    dropped = sess.run(model.layers[0].output, {model.inputs[0]: x, K.learning_phase(): True})
    assert set(np.unique(dropped)) <= {0.0, 2.0} and 0 < (dropped == 0).mean() < 1
    assert len(model.updates) == 2


def test_functional_model_is_callable_on_new_tensors_and_shares_weights():
    inp = keras.Input(shape=(3,))
    out = keras.layers.Dense(2, activation="relu")(keras.layers.Dense(4)(inp))
    model = keras.Model(inputs=inp, outputs=out)
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense", "Dense"]
    other = tf.placeholder(tf.float32, [None, 3])
    again = model(other)
    assert len(tf.trainable_variables()) == 4
    x = np.random.RandomState(1).standard_normal((5, 3)).astype(np.float32)
    sess = K.get_session()
    np.testing.assert_allclose(sess.run(again, {other: x}), model.predict(x), rtol=1e-6)


def test_sequential_add_deferred_build_summary_and_predict_classes(capsys):
    model = keras.models.Sequential()
    model.add(keras.layers.Dense(4, activation="relu"))
    model.add(keras.layers.Dense(3, activation="softmax"))
    model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"])
    x = np.random.RandomState(2).standard_normal((10, 5)).astype(np.float32)
    y = keras.utils.to_categorical(np.arange(10) % 3, 3)
    history = model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert sorted(history.history) == ["acc", "loss"] and len(history.history["loss"]) == 2
    assert history.epoch == [0, 1]
    classes = model.predict_classes(x)
    np.testing.assert_array_equal(classes, model.predict(x).argmax(-1))
    model.summary()
    printed = capsys.readouterr().out
    assert 'Model: "sequential"' in printed and "Total params: 39" in printed
    assert model.count_params() == 39


def test_early_stopping_restores_best_weights_and_checkpoints_per_epoch(tmp_path):
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    model.compile(keras.optimizers.SGD(lr=0.5), "mse")
    x = np.array([[1.0, 2.0], [2.0, 1.0], [0.0, 1.0]], np.float32)
    y = np.array([1.0, 2.0, 3.0], np.float32)
    seen = []
    path = str(tmp_path / "w.{epoch:02d}.ckpt")
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=1, restore_best_weights=True)
    history = model.fit(x, y, epochs=30, batch_size=3, verbose=0, callbacks=[
        stop, keras.callbacks.ModelCheckpoint(path, monitor="loss", save_weights_only=True),
        keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append((epoch, logs["loss"])))])
    losses = history.history["loss"]
    assert len(losses) < 30 and stop.stopped_epoch == len(losses) - 1
    assert [e for e, _ in seen] == list(range(len(losses)))
    assert (tmp_path / "w.01.ckpt.index").exists() and (tmp_path / f"w.{len(losses):02d}.ckpt.index").exists()
    best = int(np.argmin(losses))
    # The weights are the best epoch's again: evaluating gives the loss of the epoch after it started from them.
    fresh = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    fresh.load_weights(str(tmp_path / f"w.{best + 1:02d}.ckpt"))
    np.testing.assert_allclose(fresh.get_weights()[0], model.get_weights()[0], rtol=1e-6)


def test_save_and_load_weights_into_a_model_with_other_names(tmp_path):
    def build():
        return keras.Sequential([keras.layers.Dense(3, activation="relu", input_shape=(4,)), keras.layers.Dense(2)])

    a = build()
    x = np.random.RandomState(3).standard_normal((6, 4)).astype(np.float32)
    a.save_weights(str(tmp_path / "ckpt"))
    b = build()
    assert b.layers[0].name == "dense_2"
    b.load_weights(str(tmp_path / "ckpt"))
    np.testing.assert_allclose(b.predict(x), a.predict(x), rtol=1e-6)


def test_fit_on_a_dataset_with_steps_per_epoch():
    x = np.random.RandomState(4).standard_normal((12, 3)).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) > 0).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat()
    model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile(keras.optimizers.Adam(0.1), "binary_crossentropy", metrics=["acc"])
    history = model.fit(ds, epochs=3, steps_per_epoch=3, verbose=0)
    assert len(history.history["loss"]) == 3 and history.history["loss"][-1] < history.history["loss"][0]


def test_backend_functions():
    v = K.variable(np.array([[1.0, 2.0], [3.0, 4.0]]), name="v")
    assert K.int_shape(v) == (2, 2) and K.floatx() == "float32" and K.epsilon() == 1e-7
    np.testing.assert_array_equal(K.get_value(v), [[1, 2], [3, 4]])
    K.set_value(v, np.eye(2))
    ph = K.placeholder(shape=(None, 2))
    fn = K.function([ph], [K.dot(ph, v) * 2.0, K.sum(K.square(ph), axis=1)])
    out, sq = fn([np.array([[1.0, 2.0]], np.float32)])
    np.testing.assert_allclose(out, [[2.0, 4.0]])
    np.testing.assert_allclose(sq, [5.0])
    logits = K.constant([[1.0, 2.0, 0.5]])
    probs = K.softmax(logits)
    ce = K.categorical_crossentropy(K.constant([[0.0, 1.0, 0.0]]), probs)
    e = np.exp([1.0, 2.0, 0.5])
    np.testing.assert_allclose(K.eval(ce), [-np.log(e[1] / e.sum())], rtol=1e-6)
    assert K.batch_get_value([K.constant(1.0), K.constant(2.0)]) == [1.0, 2.0]


def test_clear_session_resets_layer_names():
    assert keras.layers.Dense(1).name == "dense"
    assert keras.layers.Dense(1).name == "dense_1"
    K.clear_session()
    assert keras.layers.Dense(1).name == "dense"


def test_utils_and_preprocessing():
    np.testing.assert_array_equal(keras.utils.to_categorical([0, 2, 1]), np.eye(3)[[0, 2, 1]])
    padded = keras.preprocessing.sequence.pad_sequences([[1, 2, 3], [4], [5, 6, 7, 8, 9]], maxlen=4)
    np.testing.assert_array_equal(padded, [[0, 1, 2, 3], [0, 0, 0, 4], [6, 7, 8, 9]])
    post = keras.preprocessing.sequence.pad_sequences([[1, 2], [3]], padding="post", truncating="post", maxlen=1,
                                                      value=-1)
    np.testing.assert_array_equal(post, [[1], [3]])


def test_datasets_read_the_keras_cache_and_never_download(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="does not download"):
        keras.datasets.mnist.load_data()
    (tmp_path / "datasets").mkdir()
    xs = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    np.savez(tmp_path / "datasets" / "mnist.npz", x_train=xs, y_train=np.array([3, 4]), x_test=xs[:1],
             y_test=np.array([5]))
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    np.testing.assert_array_equal(x_train, xs)
    assert list(y_test) == [5]


def test_compat_v1_and_errors():
    import ferroflow.compat.v1 as v1

    assert v1.keras is tf.keras
    with pytest.raises(ValueError, match="Unknown activation"):
        keras.layers.Dense(2, activation="no_such_thing")
    with pytest.raises(ValueError, match="Unknown optimizer"):
        keras.Sequential([keras.layers.Dense(1, input_shape=(2,))]).compile("nope", "mse")
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    with pytest.raises(RuntimeError, match="compile"):
        model.evaluate(np.zeros((2, 2), np.float32), np.zeros((2, 1), np.float32), verbose=0)


def test_masks_travel_with_the_tensors_and_stop_where_keras_stops_them():
    ids = keras.Input(shape=(4,), dtype="int32")
    emb = keras.layers.Embedding(5, 2, mask_zero=True)(ids)
    dense = keras.layers.Dense(3)(emb)
    seq = keras.layers.SimpleRNN(2, return_sequences=True)(dense)
    last = keras.layers.SimpleRNN(2)(dense)
    flat = keras.layers.Flatten()(emb)
    x = np.array([[0, 1, 2, 0], [3, 0, 0, 4]], np.int32)
    want = x != 0
    sess = K.get_session()
    for t in (emb, dense, seq):
        np.testing.assert_array_equal(sess.run(K.tensor_meta(t, "mask"), {ids: x}), want)
    assert K.tensor_meta(last, "mask") is None and K.tensor_meta(flat, "mask") is None
    values = np.array([[[1.0, 0.0], [0.0, 0.0], [2.0, 3.0]]], np.float32)
    masking = keras.layers.Masking()
    out = masking(tf.constant(values))
    np.testing.assert_array_equal(sess.run(K.tensor_meta(out, "mask")), [[True, False, True]])
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    with pytest.raises(TypeError, match="does not support masking"):
        keras.layers.Reshape((3,)).compute_mask(a, mask=tf.constant([[True, False, True]]))
    assert keras.layers.Add().compute_mask([a, b], [None, None]) is None


def test_masked_simple_rnn_carries_the_state_and_repeats_the_output_over_masked_steps():
    x = np.random.RandomState(5).standard_normal((2, 5, 3)).astype(np.float32)
    x[0, :2] = 0.0  # pre-padding
    x[1, 3] = 0.0  # a masked step inside the sequence
    inp = keras.Input(shape=(5, 3))
    layer = keras.layers.SimpleRNN(4, return_sequences=True)
    out = layer(keras.layers.Masking()(inp))
    kernel, recurrent, bias = K.get_session().run(layer.weights)
    got = K.get_session().run(out, {inp: x})
    for i in range(2):
        h = np.zeros(4, np.float32)
        prev = np.zeros(4, np.float32)
        for t in range(5):
            if np.any(x[i, t] != 0):
                h = np.tanh(x[i, t] @ kernel + bias + h @ recurrent)
                prev = h
            np.testing.assert_allclose(got[i, t], prev, rtol=1e-5, atol=1e-6)


def test_sample_and_class_weights_weigh_the_loss_and_reject_bad_shapes():
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,), kernel_initializer="ones")])
    model.compile(keras.optimizers.SGD(0.0), "mse", weighted_metrics=["mse"])
    x = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], np.float32)
    y = np.zeros((3, 1), np.float32)
    sw = np.array([1.0, 0.5, 0.0])
    loss, wmse = model.evaluate(x, y, sample_weight=sw, verbose=0)
    errors = np.array([1.0, 4.0, 4.0])
    assert loss == pytest.approx((errors * sw).sum() / 3)  # Keras's SUM_OVER_BATCH_SIZE
    assert wmse == pytest.approx((errors * sw).sum() / sw.sum())
    assert model.metrics_names == ["loss", "weighted_mean_squared_error"]
    with pytest.raises(ValueError, match="sample_weight_mode"):
        model.evaluate(x, y, sample_weight=np.ones((3, 2)), verbose=0)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        model.evaluate(x, y, sample_weight=np.ones(2), verbose=0)
    classifier = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(2,))])
    classifier.compile("sgd", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="class_weight"):
        classifier.fit(x, np.array([0, 1, 1]), class_weight={0: 1.0}, verbose=0)


def test_tf_format_weights_go_both_ways_with_tensorflow(tmp_path):
    # tests/fixtures/keras/h5 (tools/make_keras_h5_fixtures.py): TF's save_weights('tf_sequential_ckpt') and what TF
    # predicted after load_weights of ferroflow's checkpoint of the same model.
    fixtures = FIXTURES / "h5"
    expected = dict(np.load(fixtures / "expected.npz"))
    model, x = _keras_cases.h5_sequential(tf)
    np.testing.assert_allclose(model.predict(x), expected["ff_sequential_ckpt_loaded_by_tf"], rtol=1e-5, atol=1e-6)
    model.load_weights(str(fixtures / "tf_sequential_ckpt"))
    np.testing.assert_allclose(model.predict(x), expected["tf_sequential"], rtol=1e-5, atol=1e-6)
    model.save_weights(str(tmp_path / "ours"))
    reader = tf.train.load_checkpoint(str(tmp_path / "ours"))
    keys = set(reader.get_variable_to_shape_map())
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" in keys
    assert "layer_with_weights-1/cell/recurrent_kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ours")


def test_sample_weights_from_a_dataset_or_a_generator_weigh_as_arrays_do():
    x = np.random.RandomState(6).standard_normal((8, 3)).astype(np.float32)
    y = np.random.RandomState(7).standard_normal((8, 1)).astype(np.float32)
    sw = np.linspace(0.0, 2.0, 8)
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,), kernel_initializer="ones")])
    model.compile(keras.optimizers.SGD(0.0), "mse", weighted_metrics=["mae"])
    want = model.evaluate(x, y, sample_weight=sw, batch_size=4, verbose=0)
    ds = tf.data.Dataset.from_tensor_slices((x, y, sw)).batch(4)
    np.testing.assert_allclose(model.evaluate(ds, verbose=0), want, rtol=1e-6)

    def batches():
        while True:
            for i in (0, 4):
                yield x[i:i + 4], y[i:i + 4], sw[i:i + 4]

    np.testing.assert_allclose(model.evaluate_generator(batches(), steps=2), want, rtol=1e-6)
    with pytest.raises(ValueError, match="third element"):
        model.fit(ds, sample_weight=sw, verbose=0)


def test_loss_objects_weigh_and_reduce_like_keras():
    y_true = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, -1.0]], np.float32)
    y_pred = np.array([[0.5, 1.0], [0.0, 3.0], [2.0, 1.0]], np.float32)
    per_sample = np.mean((y_true - y_pred) ** 2, axis=-1)
    sw = np.array([1.0, 0.0, 2.0], np.float32)
    mse = keras.losses.MeanSquaredError()
    assert mse.name == "mean_squared_error" and mse.reduction == keras.losses.Reduction.AUTO
    run = K.get_session().run
    np.testing.assert_allclose(run(mse(y_true, y_pred)), per_sample.mean(), rtol=1e-6)
    np.testing.assert_allclose(run(mse(y_true, y_pred, sample_weight=sw)), (per_sample * sw).sum() / 3, rtol=1e-6)
    summed = keras.losses.MeanSquaredError(reduction="sum")
    np.testing.assert_allclose(run(summed(y_true, y_pred, sample_weight=sw)), (per_sample * sw).sum(), rtol=1e-6)
    none = keras.losses.MeanSquaredError(reduction=keras.losses.Reduction.NONE)
    np.testing.assert_allclose(run(none(y_true, y_pred)), per_sample, rtol=1e-6)
    huber = keras.losses.Huber(delta=1.0)
    err = np.abs(y_true - y_pred)
    want = np.mean(np.where(err <= 1.0, 0.5 * err ** 2, err - 0.5), axis=-1).mean()
    np.testing.assert_allclose(run(huber(y_true, y_pred)), want, rtol=1e-6)
    logits = np.array([[2.0, 0.5, -1.0]], np.float32)
    sparse = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    want = -np.log(np.exp(logits[0, 0]) / np.exp(logits).sum())
    np.testing.assert_allclose(run(sparse(np.array([0]), logits)), want, rtol=1e-5)
    assert keras.losses.SparseCategoricalCrossentropy.from_config(sparse.get_config()).get_config() == \
        sparse.get_config()
    with pytest.raises(ValueError, match="uninstantiated"):
        keras.Sequential([keras.layers.Dense(1, input_shape=(2,))]).compile("sgd", keras.losses.MeanSquaredError)
    with pytest.raises(ValueError, match="Invalid Reduction"):
        keras.losses.MeanSquaredError(reduction="mean")


def test_noise_and_spatial_dropout_act_in_training_only():
    x = np.ones((2, 5, 4), np.float32)
    inp = keras.Input(shape=(5, 4))
    layers = [keras.layers.GaussianNoise(0.5), keras.layers.GaussianDropout(0.4), keras.layers.SpatialDropout1D(0.5)]
    outs = [layer(inp) for layer in layers]
    sess = K.get_session()
    for out in sess.run(outs, {inp: x}):
        np.testing.assert_array_equal(out, x)  # the learning phase defaults to test
    noisy, gdrop, spatial = sess.run(outs, {inp: x, K.learning_phase(): True})
    assert noisy.std() > 0.1 and gdrop.std() > 0.1
    # SpatialDropout1D drops whole channels: within a channel every step is the same (0 or 2)
    assert np.all(spatial == spatial[:, :1, :]) and set(np.unique(spatial)) <= {0.0, 2.0}
    up = keras.layers.UpSampling1D(3)(tf.constant([[[1.0], [2.0]]]))
    np.testing.assert_array_equal(sess.run(up)[0, :, 0], [1, 1, 1, 2, 2, 2])


def test_metric_objects_keep_state_in_uncollected_variables():
    mean = keras.metrics.Mean()
    result = mean([1.0, 2.0, 6.0], sample_weight=[1.0, 1.0, 2.0])
    acc = keras.metrics.SparseCategoricalAccuracy()
    update = acc.update_state([1, 0, 1], [[0.1, 0.9], [0.2, 0.8], [0.6, 0.4]])
    assert tf.global_variables() == [] and [v.name for v in mean.variables] == ["mean/total:0", "mean/count:0"]
    sess = K.get_session()
    assert sess.run(result) == pytest.approx(15.0 / 4)
    assert sess.run(result) == pytest.approx(15.0 / 4)  # the same batch again: the same mean
    assert sess.run(acc.result()) == 0.0
    sess.run(update)
    assert sess.run(acc.result()) == pytest.approx(1.0 / 3)
    acc.reset_states()
    assert sess.run(acc.result()) == 0.0
    total = keras.metrics.Sum()
    summed = total([1.0, 2.0])
    assert K.get_session().run(summed) == 3.0 and total.name == "sum"  # get_session initializes the new variables
    assert keras.metrics.TopKCategoricalAccuracy(k=2).get_config()["k"] == 2
