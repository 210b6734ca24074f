"""tf.keras model files and configs: HDF5 both ways with TensorFlow 2.21's tf_keras (tests/fixtures/keras/h5, made by
tools/make_keras_h5_fixtures.py), to_json/model_from_json and get_config/from_config, the ImportError without
h5py; and masks and sample weights checked against numpy."""

import builtins
import json
import pathlib

import numpy as np
import pytest

import _keras_cases
import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "keras" / "h5"
keras = tf.keras
K = tf.keras.backend

h5py = pytest.importorskip("h5py")  # an optional dependency of ferroflow ([h5]); the test extra installs it


@pytest.fixture(autouse=True)
def fresh_session():
    K.clear_session()
    yield
    K.clear_session()


@pytest.fixture(scope="module")
def expected():
    return dict(np.load(FIXTURES / "expected.npz"))


@pytest.mark.parametrize("name", ["sequential", "functional", "wrappers"])
def test_load_model_written_by_tensorflow(name, expected):
    _, x = getattr(_keras_cases, f"h5_{name}")(tf)  # the data only
    K.clear_session()
    model = keras.models.load_model(str(FIXTURES / f"tf_{name}.h5"))
    np.testing.assert_allclose(model.predict(x), expected[f"tf_{name}"], rtol=1e-5, atol=1e-6)
    # compiled as saved: TF's optimizer config and loss
    assert model.optimizer.get_config()["learning_rate"] == pytest.approx(0.01 if name == "functional" else 0.02)
    assert type(model.optimizer).__name__ == ("Adam" if name == "sequential" else "RMSprop")
    if name == "wrappers":
        assert [type(layer).__name__ for layer in model.layers][2:4] == ["Bidirectional", "Bidirectional"]
    history = model.fit(x, _keras_cases.h5_targets(x), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_load_weights_written_by_tensorflow_by_order_and_by_name(expected):
    model, x = _keras_cases.h5_sequential(tf)
    model.load_weights(str(FIXTURES / "tf_sequential_weights.h5"))
    np.testing.assert_allclose(model.predict(x), expected["tf_sequential"], rtol=1e-5, atol=1e-6)
    other, _ = _keras_cases.h5_sequential(tf)  # layers named embedding_1, lstm_1, dense_1: nothing matches by name
    before = other.get_weights()
    other.load_weights(str(FIXTURES / "tf_sequential_weights.h5"), by_name=True)
    for a, b in zip(before, other.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["sequential", "functional", "wrappers"])
def test_files_written_by_ferroflow_load_in_tensorflow_and_here(name, expected, tmp_path):
    model, x = getattr(_keras_cases, f"h5_{name}")(tf)
    predicted = model.predict(x)
    np.testing.assert_allclose(predicted, expected[f"ff_{name}"], rtol=1e-5, atol=1e-6)
    # what tf_keras predicted from ferroflow's files when the fixtures were made
    np.testing.assert_allclose(predicted, expected[f"ff_{name}_loaded_by_tf"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(predicted, expected[f"ff_{name}_weights_loaded_by_tf"], rtol=1e-5, atol=1e-6)
    path = tmp_path / "m.h5"
    model.save(str(path))
    with h5py.File(path, "r") as f:
        config = json.loads(f.attrs["model_config"])
        assert config["class_name"] == ("Sequential" if name == "sequential" else "Functional")
        training = json.loads(f.attrs["training_config"])
        assert training["optimizer_config"]["class_name"] == ("Adam" if name == "sequential" else "RMSprop")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["model_weights"].attrs["layer_names"]]
        assert names == [layer.name for layer in model.layers]
    K.clear_session()
    again = keras.models.load_model(str(path))
    np.testing.assert_allclose(again.predict(x), predicted, rtol=1e-6, atol=1e-7)


def test_json_and_config_round_trips_rebuild_the_architecture(tmp_path):
    model, x = _keras_cases.h5_functional(tf)
    text = model.to_json()
    config = json.loads(text)
    assert config["class_name"] == "Functional"
    shared = [layer for layer in config["config"]["layers"] if layer["name"] == "shared"][0]
    assert len(shared["inbound_nodes"]) == 2  # the shared layer's two calls
    rebuilt = keras.models.model_from_json(text)
    assert [type(layer).__name__ for layer in rebuilt.layers] == [type(layer).__name__ for layer in model.layers]
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_allclose(rebuilt.predict(x), model.predict(x), rtol=1e-6)
    seq, xs = _keras_cases.h5_sequential(tf)
    clone = keras.Sequential.from_config(seq.get_config())
    assert clone.layers[0].get_config()["mask_zero"] is True
    assert clone.layers[2].get_config()["activation"] == "softmax"
    clone.set_weights(seq.get_weights())
    np.testing.assert_allclose(clone.predict(xs), seq.predict(xs), rtol=1e-6)
    dense = keras.layers.Dense(3, activation="relu", kernel_initializer=keras.initializers.RandomNormal(stddev=0.1),
                               name="d")
    cfg = dense.get_config()
    assert cfg["units"] == 3 and cfg["kernel_initializer"]["class_name"] == "RandomNormal"
    assert keras.layers.Dense.from_config(cfg).get_config() == cfg


def test_hdf5_without_h5py_is_an_import_error_naming_it(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_h5py(name, *args, **kwargs):
        if name == "h5py":
            raise ImportError("No module named 'h5py'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_h5py)
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    with pytest.raises(ImportError, match="h5py"):
        model.save(str(tmp_path / "m.h5"))
    with pytest.raises(ImportError, match="h5py"):
        model.save_weights(str(tmp_path / "w.h5"))
    with pytest.raises(ImportError, match="h5py"):
        keras.models.load_model(str(tmp_path / "m.h5"))
    model.save_weights(str(tmp_path / "ckpt"))  # TensorFlow checkpoints need no h5py



@pytest.mark.parametrize("name", ["sequential", "functional", "wrappers"])
def test_optimizer_state_goes_across_in_both_directions(name, expected, tmp_path):
    # TF trained two epochs and saved; loading its file here and training on gives TF's continued losses.
    _, x = getattr(_keras_cases, f"h5_{name}")(tf)
    y = _keras_cases.h5_targets(x)
    K.clear_session()
    model = keras.models.load_model(str(FIXTURES / f"tf_{name}_trained.h5"))
    np.testing.assert_allclose(model.predict(x), expected[f"tf_{name}_trained_predict"], rtol=1e-5, atol=1e-6)
    continued = model.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(continued, expected[f"tf_{name}_continued"], rtol=1e-5, atol=1e-6)
    # ferroflow trains and saves; TF continued from that file when the fixtures were made, and so do we here.
    K.clear_session()
    ours, x = getattr(_keras_cases, f"h5_{name}")(tf)
    ours.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0)
    ours.save(str(tmp_path / "trained.h5"))
    with h5py.File(tmp_path / "trained.h5", "r") as f:
        assert "optimizer_weights" in f
    K.clear_session()
    again = keras.models.load_model(str(tmp_path / "trained.h5"))
    continued = again.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(continued, expected[f"ff_{name}_continued_by_tf"], rtol=1e-5, atol=1e-6)


def test_clone_model_has_the_architecture_and_fresh_weights():
    model, x = _keras_cases.h5_functional(tf)
    clone = keras.models.clone_model(model)
    assert [type(a).__name__ for a in clone.layers] == [type(b).__name__ for b in model.layers]
    assert all(a is not b for a, b in zip(clone.weights, model.weights))
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone.predict(x), model.predict(x), rtol=1e-6)


class Scale(keras.layers.Layer):
    """A custom layer: multiplies by a learned vector."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.scale = self.add_weight("scale", shape=(self.units,), initializer="ones")
        self.built = True

    def call(self, inputs):
        return inputs * self.scale

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_custom_layers_load_with_custom_objects_or_a_scope(tmp_path):
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(2,)), Scale(3)])
    model.compile("sgd", lambda y, p: tf.reduce_mean(tf.square(y - p), axis=-1))
    model.layers[1].set_weights([np.array([1.0, 2.0, 3.0], np.float32)])
    x = np.ones((2, 2), np.float32)
    path = str(tmp_path / "custom.h5")
    model.save(path)
    K.clear_session()
    with pytest.raises(ValueError, match="Unknown layer: Scale"):
        keras.models.load_model(path, compile=False)
    loaded = keras.models.load_model(path, custom_objects={"Scale": Scale}, compile=False)
    np.testing.assert_allclose(loaded.layers[1].get_weights()[0], [1.0, 2.0, 3.0])
    with keras.utils.custom_object_scope({"Scale": Scale}):
        again = keras.models.load_model(path, compile=False)
    assert "Scale" not in keras.utils.get_custom_objects()
    np.testing.assert_allclose(again.predict(x), loaded.predict(x), rtol=1e-6)


def test_export_saved_model_serves_and_loads_back(tmp_path):
    model, x = _keras_cases.h5_functional(tf)
    want = model.predict(x)
    path = str(tmp_path / "exported")
    keras.experimental.export_saved_model(model, path)
    assert (tmp_path / "exported" / "assets.extra" / "tf_keras" / "model.json").exists()
    K.clear_session()
    # served: the serve meta graph's signature, inputs and outputs by layer name
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        signature = meta.signature_def["serving_default"]
        assert sorted(signature.inputs) == ["left", "right"] and sorted(signature.outputs) == ["out"]
        feed = {signature.inputs[name].name: value for name, value in zip(["left", "right"], x)}
        np.testing.assert_allclose(sess.run(signature.outputs["out"].name, feed), want, rtol=1e-6)
    loaded = keras.experimental.load_from_saved_model(path)
    np.testing.assert_allclose(loaded.predict(x), want, rtol=1e-6)
