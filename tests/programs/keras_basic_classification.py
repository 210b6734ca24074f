"""TF 1.x's "Train your first neural network: basic classification" (Fashion-MNIST with tf.keras): scale the
images, Sequential([Flatten, Dense(128, relu), Dense(10, softmax)]), compile with adam and
sparse_categorical_crossentropy, fit, evaluate, predict and argmax.

The data is synthetic 28x28 images (a bright band per class). Keras shuffles each epoch with numpy (seeded
here) and the weights start from numpy values, so the numbers are deterministic.
"""

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 3


def main(tf, steps=3):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    np.random.seed(42)
    images, onehot = fake_mnist(300, seed=11, flat=False)
    train_images, train_labels = images[:240, :, :, 0] * 255.0, onehot[:240].argmax(1)
    test_images, test_labels = images[240:, :, :, 0] * 255.0, onehot[240:].argmax(1)
    class_names = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                   "Ankle boot"]

    train_images = train_images / 255.0
    test_images = test_images / 255.0

    model = keras.Sequential([
        keras.layers.Flatten(input_shape=(28, 28)),
        keras.layers.Dense(128, activation=tf.nn.relu),
        keras.layers.Dense(10, activation=tf.nn.softmax),
    ])
    model.set_weights([fixed_init(w.shape, 900 + i, 0.05) for i, w in enumerate(model.get_weights())])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

    history = model.fit(train_images, train_labels, epochs=steps, verbose=0)
    test_loss, test_acc = model.evaluate(test_images, test_labels, verbose=0)
    predictions = model.predict(test_images)
    first = int(np.argmax(predictions[0]))
    return {
        "losses": history.history["loss"],
        "acc": history.history["acc"],
        "test_loss": float(test_loss),
        "test_acc": float(test_acc),
        "first_prediction": class_names[first],
        "prediction_sums": [float(s) for s in predictions.sum(axis=1)[:5]],
        "predicted": [int(p) for p in np.argmax(predictions, axis=1)[:10]],
        "variables": [v.name for v in model.weights],
        "history_keys": sorted(history.history),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
