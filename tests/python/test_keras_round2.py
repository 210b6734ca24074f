"""tf.keras, second round: the cases of _keras_round2_cases.py (stateful metric objects on their own, ...) give
what TensorFlow 2.21's tf_keras gives in graph mode (tests/fixtures/keras/round2/*.npz, made by
tools/make_keras_round2_fixtures.py), to 1e-6; plus the errors and configs of the same pieces."""

import json
import pathlib

import numpy as np
import pytest

import _keras_round2_cases
import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "keras" / "round2"
keras = tf.keras
K = tf.keras.backend


@pytest.fixture(autouse=True)
def fresh_session():
    K.clear_session()
    yield
    K.clear_session()


@pytest.mark.parametrize("name", sorted(_keras_round2_cases.CASES))
def test_case_matches_tf_keras(name):
    want = dict(np.load(FIXTURES / f"{name}.npz"))
    np.random.seed(0)
    got = _keras_round2_cases.CASES[name](tf)
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        if value.dtype.kind in "fiub":
            np.testing.assert_allclose(np.asarray(got[key], np.float64), value, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{name}.{key}")
        else:
            assert np.asarray(got[key]).tolist() == value.tolist(), f"{name}.{key}"


def test_confusion_metrics_check_their_arguments():
    with pytest.raises(ValueError, match=r"Threshold values must be in \[0, 1\]. Received: \[1.5\]"):
        keras.metrics.Precision(thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match="`recall` must be in the range"):
        keras.metrics.PrecisionAtRecall(1.2)
    with pytest.raises(ValueError, match="num_thresholds"):
        keras.metrics.AUC(num_thresholds=1)
    with pytest.raises(ValueError, match="Invalid AUC curve"):
        keras.metrics.AUC(curve="XY")
    with pytest.raises(ValueError, match="`num_labels` is needed only when `multi_label` is True"):
        keras.metrics.AUC(num_labels=3)
    with pytest.raises(ValueError, match="must have rank 2"):
        keras.metrics.AUC(multi_label=True).update_state(np.zeros(4), np.zeros(4, np.float32))


def test_confusion_metric_configs_round_trip():
    auc = keras.metrics.AUC(num_thresholds=10, curve="PR", name="pr", thresholds=[0.2, 0.6])
    config = auc.get_config()
    assert config["curve"] == "PR" and config["thresholds"] == [0.2, 0.6] and config["num_thresholds"] == 4
    again = keras.metrics.AUC.from_config(config)
    assert again.name == "pr" and again.thresholds == auc.thresholds
    rec = keras.metrics.deserialize(keras.metrics.serialize(keras.metrics.Recall(top_k=2, class_id=1, name="r")))
    assert isinstance(rec, keras.metrics.Recall) and (rec.top_k, rec.class_id, rec.name) == (2, 1, "r")
    assert isinstance(keras.metrics.get("AUC"), keras.metrics.AUC)


def _tiny_model():
    model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile("sgd", "binary_crossentropy", metrics=["accuracy", keras.metrics.TruePositives(thresholds=[0.3, 0.6])])
    x = np.random.RandomState(0).standard_normal((20, 3)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    model.set_weights([np.array([[0.5], [-0.2], [0.1]], np.float32), np.zeros(1, np.float32)])
    return model, x, y


def test_progress_lines_are_keras_format(capsys):
    import re

    model, x, y = _tiny_model()
    model.fit(x, y, epochs=2, batch_size=7, verbose=2, validation_split=0.25)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["Train on 15 samples, validate on 5 samples", "Epoch 1/2"]
    # TF: '15/15 - 0s - loss: 0.6931 - acc: 0.5333 - true_positives: 2.5000 - val_loss: ... - 3ms/epoch - 200us/sample'
    num = r"\d+\.\d{4}(e[+-]\d\d)?"
    pattern = (rf"15/15 - \d+s - loss: {num} - acc: {num} - true_positives: {num} - val_loss: {num} - val_acc: {num} - "
               rf"val_true_positives: {num} - \d+(s|ms|us)/epoch - \d+(s|ms|us)/sample")
    assert re.fullmatch(pattern, lines[2]), lines[2]
    model.fit(x, y, epochs=1, batch_size=7, verbose=1)
    out = capsys.readouterr().out
    assert out.startswith("Train on 20 samples\nEpoch 1/1\n") and out.endswith("\n")
    final = out.splitlines()[-1].split("\r")[-1]
    assert re.fullmatch(rf"20/20 \[={{30}}\] - \d+s \d+(s|ms|us)/sample - loss: {num} - acc: {num} - "
                        rf"true_positives: {num} *", final), final


def test_lambda_layers_written_by_tensorflow_load():
    """TF's JSON holds the Lambda functions' bytecode: this Python loads it when it is the version that wrote it
    (the predictions are TF's), and any other says why it cannot."""
    import json
    import platform

    record = json.loads((FIXTURES / "lambda_model.json").read_text())
    if platform.python_version_tuple()[:2] == tuple(record["python"].split(".")[:2]):
        model = keras.models.model_from_json(record["json"])
        model.set_weights([np.asarray(w, np.float32) for w in record["weights"]])
        np.testing.assert_allclose(model.predict(np.asarray(record["x"], np.float32)), record["predict"],
                                   rtol=1e-6, atol=1e-6)
    else:
        with pytest.raises(ValueError, match="bytecode"):
            keras.models.model_from_json(record["json"])


def test_lambda_configs_name_functions_and_check_what_they_load():
    def halve(x):
        return x / 2.0

    inp = keras.Input((2,))
    out = keras.layers.Lambda(tf.nn.relu)(keras.layers.Lambda(halve, name="halve")(inp))
    model = keras.Model(inp, out)
    layers = json.loads(model.to_json())["config"]["layers"]
    relu = layers[2]["config"]
    assert (relu["function"], relu["function_type"]) == ("relu", "function")
    again = keras.models.model_from_json(model.to_json())
    x = np.array([[-4.0, 6.0]], np.float32)
    np.testing.assert_allclose(again.predict(x), [[0.0, 3.0]])
    config = model.get_layer("halve").get_config()
    config["function"], config["function_type"] = "no_such_function", "function"
    with pytest.raises(ValueError, match="Unknown function in Lambda layer 'halve': no_such_function"):
        keras.layers.Lambda.from_config(config)
    assert keras.layers.Lambda.from_config(config, custom_objects={"no_such_function": abs}).function is abs
    config["function"], config["function_type"] = ["bm90IGNvZGU=\n", None, None], "lambda"
    with pytest.raises(ValueError, match="bytecode"):
        keras.layers.Lambda.from_config(config)


def test_attention_layers_check_their_inputs():
    q = tf.placeholder(tf.float32, [None, 3, 4])
    with pytest.raises(ValueError, match="must be called on a list of inputs"):
        keras.layers.Attention()(q)
    with pytest.raises(ValueError, match="accepts inputs list of length 2 or 3"):
        keras.layers.AdditiveAttention()([q])
    with pytest.raises(ValueError, match="score_mode"):
        keras.layers.Attention(score_mode="sum")
    config = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, dropout=0.1).get_config()
    assert (config["num_heads"], config["key_dim"], config["value_dim"], config["dropout"]) == (2, 3, 3, 0.1)
    assert config["kernel_initializer"]["class_name"] == "GlorotUniform"


def test_image_and_sequence_utilities_check_their_arguments():
    image = keras.preprocessing.image
    with pytest.raises(ValueError, match="`zoom_range` should be a float or a tuple"):
        image.ImageDataGenerator(zoom_range=[1, 2, 3])
    with pytest.raises(ValueError, match="validation_split"):
        image.ImageDataGenerator(validation_split=1.5)
    with pytest.raises(ValueError, match="should have rank 4"):
        image.ImageDataGenerator().flow(np.zeros((3, 4, 4)))
    with pytest.raises(ValueError, match="should have the same length"):
        image.ImageDataGenerator().flow(np.zeros((3, 4, 4, 1)), np.zeros(2))
    with pytest.raises(ValueError, match="multi-channel 2D images"):
        image.apply_affine_transform(np.zeros((4, 4)), theta=10)
    with pytest.raises(ValueError, match="Data and targets have to be of same length"):
        keras.preprocessing.sequence.TimeseriesGenerator(np.zeros(5), np.zeros(4), length=2)
    with pytest.raises(ValueError, match="is disallowed"):
        keras.preprocessing.sequence.TimeseriesGenerator(np.zeros(5), np.zeros(5), length=6)
    flow = image.ImageDataGenerator(validation_split=0.5).flow(np.zeros((4, 2, 2, 1)), np.array([0, 1, 0, 1]),
                                                               batch_size=2, subset="validation", shuffle=False)
    assert len(flow) == 1 and flow[0][0].shape == (2, 2, 2, 1)


def test_fit_takes_a_sequence_and_a_generator():
    model = keras.Sequential([keras.layers.Flatten(input_shape=(1, 2)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    data = np.arange(20, dtype=np.float32).reshape(10, 2) / 10
    windows = keras.preprocessing.sequence.TimeseriesGenerator(data, data[:, :1], length=1, batch_size=3)
    hist = model.fit(windows, epochs=2, verbose=0, shuffle=False)
    assert len(hist.history["loss"]) == 2

    def batches():
        while True:
            yield data[:, None, :], data[:, :1]

    hist = model.fit(batches(), steps_per_epoch=2, epochs=1, verbose=0)
    assert len(hist.history["loss"]) == 1
    with pytest.raises(ValueError, match="steps_per_epoch=None"):
        model.fit_generator(batches())
    assert model.predict(windows).shape == (9, 1)


def test_optimizer_state_in_tf_format_weights(tmp_path):
    """TF's save_weights checkpoints hold the optimizer (iterations, hyper-parameters, slots): restored here into
    fresh compiled models, one more epoch gives TF's weights; ferroflow's own checkpoints have TF's keys and
    resume the same way."""
    want = dict(np.load(FIXTURES / "optimizer_checkpoint.npz"))
    got = _keras_round2_cases.optimizer_checkpoint(tf, str(FIXTURES / "optimizer_ckpt"), save=False)
    for key, value in got.items():
        np.testing.assert_allclose(value, want[key], rtol=1e-6, atol=1e-6, err_msg=key)
    K.clear_session()
    saved = _keras_round2_cases.optimizer_checkpoint(tf, str(tmp_path), save=True)
    for name in ("Adam", "RMSprop"):
        assert saved.pop(f"{name}_keys").tolist() == want[f"{name}_keys"].tolist()
    for key, value in saved.items():
        np.testing.assert_allclose(value, want[key], rtol=1e-6, atol=1e-6, err_msg=key)
    K.clear_session()
    resumed = _keras_round2_cases.optimizer_checkpoint(tf, str(tmp_path), save=False)
    for key, value in resumed.items():
        np.testing.assert_allclose(value, want[key], rtol=1e-6, atol=1e-6, err_msg=key)
