"""TF 1.x's "Predict house prices: regression" (Boston housing / Auto MPG with tf.keras): normalize the
features with the training statistics, a Sequential of Dense(64, relu, input_shape) -> Dense(64, relu) ->
Dense(1), RMSprop(0.001), loss 'mse' with metrics ['mae', 'mse'], fit with validation_split=0.2 and an
EarlyStopping(monitor='val_loss', patience=...) callback, a LambdaCallback printing dots, then evaluate.

Synthetic houses: the price is a fixed linear function of 6 features plus noise.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 40


def main(tf, steps=40):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    np.random.seed(3)
    rng = np.random.RandomState(5)
    train_data = rng.uniform(0, 10, size=(80, 6)).astype(np.float32)
    test_data = rng.uniform(0, 10, size=(20, 6)).astype(np.float32)
    coef = np.array([1.5, -2.0, 0.5, 3.0, 0.0, -1.0], np.float32)
    train_labels = train_data @ coef + 20 + rng.standard_normal(80).astype(np.float32)
    test_labels = test_data @ coef + 20

    mean = train_data.mean(axis=0)
    std = train_data.std(axis=0)
    train_data = (train_data - mean) / std
    test_data = (test_data - mean) / std

    def build_model():
        model = keras.Sequential([
            keras.layers.Dense(64, activation=tf.nn.relu, input_shape=(train_data.shape[1],)),
            keras.layers.Dense(64, activation=tf.nn.relu),
            keras.layers.Dense(1),
        ])
        optimizer = keras.optimizers.RMSprop(0.01)
        model.compile(loss="mse", optimizer=optimizer, metrics=["mae", "mse"])
        return model

    model = build_model()
    model.set_weights([fixed_init(w.shape, 920 + i, 0.1) for i, w in enumerate(model.get_weights())])
    dots = []

    class PrintDot(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs):
            dots.append("." if epoch % 10 else "\n")

    early_stop = keras.callbacks.EarlyStopping(monitor="val_loss", patience=3)
    history = model.fit(train_data, train_labels, epochs=steps, validation_split=0.2, verbose=0,
                        callbacks=[early_stop, PrintDot()])
    hist = history.history
    mae_key = "mean_absolute_error" if "mean_absolute_error" in hist else "mae"
    loss, mae, mse = model.evaluate(test_data, test_labels, verbose=0)
    test_predictions = model.predict(test_data).flatten()
    return {
        "losses": hist["loss"],
        "val_loss": hist["val_loss"],
        "mae": hist[mae_key],
        "val_mae": hist["val_" + mae_key],
        "epochs_run": len(history.epoch),
        "dots": len(dots),
        "test": [float(loss), float(mae), float(mse)],
        "predictions": [float(p) for p in test_predictions[:5]],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
