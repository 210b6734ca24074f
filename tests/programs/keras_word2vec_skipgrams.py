"""The Keras word2vec tutorial of the TF 1.x era ("Word2Vec in Keras", adventuresinmachinelearning): build
the vocabulary, keras.preprocessing.sequence.make_sampling_table and skipgrams(data, vocab_size,
window_size, sampling_table), a functional model of two Input(1) ids -> a shared Embedding -> Reshape ->
dot(normalize=False) -> Dense(1, sigmoid) trained with train_on_batch on random pairs, and a validation
model with dot(normalize=True) giving cosine similarities of the nearest words; then the same pairs fed to
fit as a TimeseriesGenerator-free Sequence, with a History and the model's metric objects.

The text is synthetic (two topics of words that co-occur); Python's random (skipgrams) and numpy's (the
pairs drawn) are seeded, so the run is the same as TensorFlow's.
"""

import random

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 60


def _corpus(rng, n=400):
    topics = [["cat", "dog", "pet", "fur", "paw"], ["car", "road", "wheel", "fuel", "drive"]]
    words = []
    for _ in range(n // 5):
        words += list(rng.choice(topics[rng.randint(2)], size=5))
    return words


def main(tf, steps=60):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    rng = np.random.RandomState(17)
    words = _corpus(rng)
    vocab = ["UNK"] + sorted(set(words))
    dictionary = {w: i for i, w in enumerate(vocab)}
    data = [dictionary[w] for w in words]
    vocab_size = len(vocab)

    window_size = 2
    vector_dim = 6
    sampling_table = keras.preprocessing.sequence.make_sampling_table(vocab_size, sampling_factor=0.5)
    random.seed(3)
    couples, labels = keras.preprocessing.sequence.skipgrams(data, vocab_size, window_size=window_size,
                                                             sampling_table=sampling_table)
    word_target, word_context = zip(*couples)
    word_target = np.array(word_target, dtype="int32")
    word_context = np.array(word_context, dtype="int32")

    input_target = keras.layers.Input((1,))
    input_context = keras.layers.Input((1,))
    embedding = keras.layers.Embedding(vocab_size, vector_dim, input_length=1, name="embedding")
    target = keras.layers.Reshape((vector_dim, 1))(embedding(input_target))
    context = keras.layers.Reshape((vector_dim, 1))(embedding(input_context))
    similarity = keras.layers.dot([target, context], axes=1, normalize=True)
    dot_product = keras.layers.Reshape((1,))(keras.layers.dot([target, context], axes=1))
    output = keras.layers.Dense(1, activation="sigmoid")(dot_product)
    model = keras.models.Model(inputs=[input_target, input_context], outputs=output)
    model.set_weights([fixed_init(w.shape, 970 + i, 0.5) for i, w in enumerate(model.get_weights())])
    model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.RMSprop(0.05),
                  metrics=[keras.metrics.BinaryAccuracy(name="acc"), keras.metrics.AUC(name="auc")])
    validation_model = keras.models.Model(inputs=[input_target, input_context], outputs=similarity)

    np.random.seed(5)
    losses = []
    arr_1, arr_2, arr_3 = np.zeros((1,)), np.zeros((1,)), np.zeros((1,))
    for _ in range(steps):
        idx = np.random.randint(0, len(labels) - 1)
        arr_1[0], arr_2[0], arr_3[0] = word_target[idx], word_context[idx], labels[idx]
        losses.append(float(model.train_on_batch([arr_1, arr_2], arr_3)[0]))

    def similar(word):
        ids = np.arange(vocab_size)
        sims = validation_model.predict([np.full(vocab_size, dictionary[word]), ids]).reshape(-1)
        return [vocab[i] for i in (-sims).argsort()[1:4]], [float(s) for s in sims]

    class Pairs(keras.utils.Sequence):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            sl = slice(i * 16, (i + 1) * 16)
            return [word_target[sl], word_context[sl]], np.array(labels[sl], np.float32)

    history = model.fit(Pairs(), epochs=2, shuffle=False, verbose=0)
    nearest, sims = similar("cat")
    return {
        "vocab_size": vocab_size,
        "pairs": len(couples),
        "first_couples": [list(map(int, c)) for c in couples[:6]],
        "positives": int(sum(labels)),
        "sampling_table": [float(v) for v in sampling_table],
        "losses": losses,
        "fit_loss": history.history["loss"],
        "fit_auc": history.history["auc"],
        "nearest_cat": nearest,
        "similarities": sims,
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
