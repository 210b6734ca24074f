"""TF 1.x's "Text classification with movie reviews" (IMDB with tf.keras): pad the word-id lists with
keras.preprocessing.sequence.pad_sequences (value=<PAD>, padding='post'), Embedding(vocab, 16) ->
GlobalAveragePooling1D -> Dense(16, relu) -> Dense(1, sigmoid), adam + binary_crossentropy, fit with
validation_data, evaluate, and the history dict the tutorial plots.

Synthetic reviews: a review is positive when it holds more "good" ids (10-19) than "bad" ones (20-29).
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 4


def _reviews(n, seed):
    rng = np.random.RandomState(seed)
    data, labels = [], []
    for _ in range(n):
        length = rng.randint(5, 30)
        words = list(rng.randint(1, 50, size=length))
        data.append([1] + words)
        labels.append(int(sum(10 <= w < 20 for w in words) > sum(20 <= w < 30 for w in words)))
    return data, np.array(labels)


def main(tf, steps=4):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    np.random.seed(7)
    train_data, train_labels = _reviews(120, 1)
    test_data, test_labels = _reviews(40, 2)
    word_index = {"<PAD>": 0, "<START>": 1}

    train_data = keras.preprocessing.sequence.pad_sequences(train_data, value=word_index["<PAD>"],
                                                            padding="post", maxlen=24)
    test_data = keras.preprocessing.sequence.pad_sequences(test_data, value=word_index["<PAD>"],
                                                           padding="post", maxlen=24)
    vocab_size = 50

    model = keras.Sequential()
    model.add(keras.layers.Embedding(vocab_size, 16))
    model.add(keras.layers.GlobalAveragePooling1D())
    model.add(keras.layers.Dense(16, activation=tf.nn.relu))
    model.add(keras.layers.Dense(1, activation=tf.nn.sigmoid))
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["acc"])

    x_val, partial_x_train = train_data[:30], train_data[30:]
    y_val, partial_y_train = train_labels[:30], train_labels[30:]
    # The model is built by its first fit; start it from numpy weights (a zero-epoch fit builds it).
    model.fit(partial_x_train[:1], partial_y_train[:1], epochs=0, verbose=0)
    model.set_weights([fixed_init(w.shape, 910 + i, 0.2) for i, w in enumerate(model.get_weights())])
    history = model.fit(partial_x_train, partial_y_train, epochs=steps, batch_size=16,
                        validation_data=(x_val, y_val), verbose=0)
    results = model.evaluate(test_data, test_labels, verbose=0)
    history_dict = history.history
    return {
        "losses": history_dict["loss"],
        "val_loss": history_dict["val_loss"],
        "acc": history_dict["acc"],
        "val_acc": history_dict["val_acc"],
        "results": [float(r) for r in results],
        "padded_shape": list(train_data.shape),
        "padded_first": [int(v) for v in train_data[0]],
        "variables": [v.name for v in model.weights],
        "history_keys": sorted(history_dict),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
