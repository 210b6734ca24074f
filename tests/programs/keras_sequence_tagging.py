"""A sequence-tagging tutorial in TF 1.x Keras: variable-length feature sequences padded with zeros,
Masking -> GRU(return_sequences=True) -> Dense(softmax) on every step, sparse_categorical_crossentropy with
sample_weight_mode="temporal" (padding steps weigh 0, rarer tags weigh more), weighted_metrics, the Nadam
optimizer; then save_weights('tagger.h5') into a model rebuilt from model.to_json() (model_from_json +
load_weights), and evaluate with and without the per-step weights.

Synthetic sequences of 2-8 steps of 3 features; a step's tag is the sign pattern of two of its features.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 3
MAXLEN = 8


def _sequences(n, seed):
    rng = np.random.RandomState(seed)
    x = np.zeros((n, MAXLEN, 3), np.float32)
    tags = np.zeros((n, MAXLEN, 1), np.int64)
    weights = np.zeros((n, MAXLEN), np.float32)
    for i in range(n):
        length = rng.randint(2, MAXLEN + 1)
        steps = rng.standard_normal((length, 3)).astype(np.float32)
        x[i, :length] = steps
        tag = (steps[:, 0] > 0).astype(int) + (steps[:, 1] > 0.8).astype(int)
        tags[i, :length, 0] = tag
        weights[i, :length] = np.where(tag == 2, 2.0, 1.0)
    return x, tags, weights


def main(tf, steps=3):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    np.random.seed(5)
    x_train, y_train, w_train = _sequences(64, 21)
    x_test, y_test, w_test = _sequences(24, 22)

    model = keras.Sequential([
        keras.layers.Masking(mask_value=0.0, input_shape=(MAXLEN, 3)),
        keras.layers.GRU(10, return_sequences=True),
        keras.layers.Dense(3, activation="softmax"),
    ])
    model.set_weights([fixed_init(w.shape, 800 + i, 0.4) for i, w in enumerate(model.get_weights())])
    model.compile(optimizer=keras.optimizers.Nadam(lr=0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], weighted_metrics=["accuracy"], sample_weight_mode="temporal")
    history = model.fit(x_train, y_train, sample_weight=w_train, epochs=steps, batch_size=8,
                        validation_data=(x_test, y_test, w_test), verbose=0)
    weighted = model.evaluate(x_test, y_test, sample_weight=w_test, verbose=0)
    unweighted = model.evaluate(x_test, y_test, verbose=0)
    tags = model.predict(x_test[:3]).argmax(-1)

    root = tempfile.mkdtemp()
    try:
        path = os.path.join(root, "tagger.h5")
        model.save_weights(path)
        config = model.to_json()
        keras.backend.clear_session()
        rebuilt = keras.models.model_from_json(config)
        rebuilt.load_weights(path)
        rebuilt_tags = rebuilt.predict(x_test[:3]).argmax(-1)
        rebuilt_probs = rebuilt.predict(x_test[:1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "losses": history.history["loss"],
        "acc": history.history["acc"],
        "weighted_acc": history.history["weighted_acc"],
        "val_loss": history.history["val_loss"],
        "val_weighted_acc": history.history["val_weighted_acc"],
        "weighted": [float(v) for v in weighted],
        "unweighted": [float(v) for v in unweighted],
        "metrics_names": list(model.metrics_names),
        "tags": tags.tolist(),
        "rebuilt_tags": rebuilt_tags.tolist(),
        "rebuilt_probs": [float(v) for v in rebuilt_probs.reshape(-1)],
        "rebuilt_layers": [type(layer).__name__ for layer in rebuilt.layers],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
