"""A small tf.keras convnet in the style of the TF 1.x Keras guide and the "CNN on MNIST" blog posts:
Conv2D(8, (3, 3), relu, input_shape) -> MaxPooling2D((2, 2)) -> Conv2D(16, (3, 3), relu) -> MaxPooling2D ->
Flatten -> Dense(32, relu) -> BatchNormalization -> Dense(10, softmax), one-hot labels with
keras.utils.to_categorical, SGD(lr, momentum, nesterov), categorical_crossentropy, fit with validation_data,
evaluate and the trained layer's weights through get_weights.

The images are synthetic 14x14 digits of bands; numpy seeds the shuffling and the starting weights.
"""

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 3


def main(tf, steps=3):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    np.random.seed(1)
    images, onehot = fake_mnist(160, seed=21, flat=False)
    x = images[:, ::2, ::2, :]
    labels = onehot.argmax(1)
    y = keras.utils.to_categorical(labels, 10)
    x_train, y_train, x_test, y_test = x[:120], y[:120], x[120:], y[120:]

    model = keras.models.Sequential()
    model.add(keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu", input_shape=(14, 14, 1)))
    model.add(keras.layers.MaxPooling2D(pool_size=(2, 2)))
    model.add(keras.layers.Conv2D(16, (3, 3), activation="relu"))
    model.add(keras.layers.MaxPooling2D(pool_size=(2, 2)))
    model.add(keras.layers.Flatten())
    model.add(keras.layers.Dense(32, activation="relu"))
    model.add(keras.layers.BatchNormalization())
    model.add(keras.layers.Dense(10, activation="softmax"))
    weights = model.get_weights()
    model.set_weights([np.ones_like(w) if "moving_variance" in v.name or "gamma" in v.name
                       else fixed_init(w.shape, 930 + i, 0.2)
                       for i, (w, v) in enumerate(zip(weights, [v for lay in model.layers for v in lay.weights]))])
    model.compile(loss=keras.losses.categorical_crossentropy,
                  optimizer=keras.optimizers.SGD(lr=0.01, momentum=0.9, nesterov=True), metrics=["accuracy"])
    history = model.fit(x_train, y_train, batch_size=20, epochs=steps, verbose=0, validation_data=(x_test, y_test))
    score = model.evaluate(x_test, y_test, verbose=0)
    bn = model.layers[6]
    return {
        "losses": history.history["loss"],
        "acc": history.history["acc"],
        "val_loss": history.history["val_loss"],
        "score": [float(s) for s in score],
        "moving_mean_sum": float(np.sum(bn.get_weights()[2])),
        "output_shapes": [list(layer.output_shape[1:]) for layer in model.layers],
        "params": model.count_params(),
        "variables": [v.name for v in model.weights],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
