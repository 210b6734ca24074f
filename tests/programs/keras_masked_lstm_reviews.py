"""TF 1.x's "Text classification with an RNN" done the Keras way on padded reviews: pad_sequences (pre-padding,
maxlen), Embedding(mask_zero=True) so the LSTM skips the padding, LSTM(16) -> Dense(1, sigmoid), Adamax +
binary_crossentropy, class_weight for the rarer class, fit with validation_split; then "Save and restore
models" with HDF5: model.save('reviews.h5'), keras.models.load_model (compiled as saved), the same predictions,
evaluation and one more epoch of training on the loaded model.

Synthetic reviews of 3-14 word ids: positive when the review holds more "good" ids (10-19) than "bad" ones
(20-29), about a third of them.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 3


def _reviews(n, seed):
    rng = np.random.RandomState(seed)
    data, labels = [], []
    for _ in range(n):
        words = list(rng.randint(1, 40, size=rng.randint(3, 15)))
        data.append(words)
        labels.append(int(sum(10 <= w < 20 for w in words) > sum(20 <= w < 30 for w in words) + 1))
    return data, np.array(labels)


def main(tf, steps=3):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    np.random.seed(3)
    train_data, train_labels = _reviews(90, 11)
    test_data, test_labels = _reviews(30, 12)
    train_data = keras.preprocessing.sequence.pad_sequences(train_data, maxlen=10)
    test_data = keras.preprocessing.sequence.pad_sequences(test_data, maxlen=10)

    model = keras.Sequential([
        keras.layers.Embedding(40, 8, mask_zero=True, input_length=10),
        keras.layers.LSTM(16),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.set_weights([fixed_init(w.shape, 700 + i, 0.3) for i, w in enumerate(model.get_weights())])
    model.compile(optimizer=keras.optimizers.Adamax(lr=0.02), loss="binary_crossentropy", metrics=["accuracy"])
    positives = float(train_labels.mean())
    class_weight = {0: 1.0, 1: round((1.0 - positives) / positives, 3)}
    history = model.fit(train_data, train_labels, epochs=steps, batch_size=16, validation_split=0.2,
                        class_weight=class_weight, verbose=0)
    results = model.evaluate(test_data, test_labels, verbose=0)
    predictions = model.predict(test_data[:5])

    root = tempfile.mkdtemp()
    try:
        path = os.path.join(root, "reviews.h5")
        model.save(path)
        keras.backend.clear_session()
        restored = keras.models.load_model(path)
        restored_predictions = restored.predict(test_data[:5])
        restored_results = restored.evaluate(test_data, test_labels, verbose=0)
        more = restored.fit(train_data, train_labels, epochs=1, batch_size=16, verbose=0)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "losses": history.history["loss"],
        "val_loss": history.history["val_loss"],
        "acc": history.history["acc"],
        "val_acc": history.history["val_acc"],
        "class_weight": class_weight,
        "results": [float(r) for r in results],
        "predictions": [float(p) for p in predictions[:, 0]],
        "restored_predictions": [float(p) for p in restored_predictions[:, 0]],
        "restored_results": [float(r) for r in restored_results],
        "restored_layers": [type(layer).__name__ for layer in restored.layers],
        "restored_metrics": list(restored.metrics_names),
        "more_loss": more.history["loss"],
        "padded_first": [int(v) for v in train_data[0]],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
