"""The "How to use the TimeseriesGenerator for time series forecasting in Keras" tutorial (machinelearningmastery,
TF 1.x era), extended the way its readers did: TimeseriesGenerator(series, series, length=n_input,
batch_size) windows over a univariate series (and a multivariate one with a separate target), an LSTM whose
sequence goes through self-attention (keras.layers.Attention) and GlobalAveragePooling1D to Dense(1),
fit_generator with validation windows, EarlyStopping(restore_best_weights) and CSVLogger, evaluate_generator,
then a one-step forecast from the last window with predict.

The series are a noisy sine and its lagged copy; nothing is random once seeded.
"""

import csv
import os
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    TimeseriesGenerator = keras.preprocessing.sequence.TimeseriesGenerator
    rng = np.random.RandomState(12)
    series = (np.sin(np.arange(80) * 0.25) + rng.normal(0, 0.05, 80)).astype(np.float32)

    # the tutorial's first example: windows of a list, printed
    small = np.array([10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
    small_gen = TimeseriesGenerator(small, small, length=2, batch_size=1)
    windows = [[small_gen[i][0].tolist(), small_gen[i][1].tolist()] for i in range(len(small_gen))]

    # multivariate input, a separate target series, reversed windows and a stride
    dataset = np.hstack([series[:, None], np.roll(series, 1)[:, None]])
    multi = TimeseriesGenerator(dataset, series, length=4, stride=2, reverse=True, batch_size=5)
    multi_first = multi[0]

    n_input, n_features = 6, 1
    data = series.reshape((len(series), n_features))
    train_gen = TimeseriesGenerator(data[:60], data[:60], length=n_input, batch_size=8)
    val_gen = TimeseriesGenerator(data[54:], data[54:], length=n_input, batch_size=8)

    inputs = keras.Input(shape=(n_input, n_features))
    seq = keras.layers.LSTM(8, return_sequences=True)(inputs)
    context = keras.layers.Attention()([seq, seq])
    pooled = keras.layers.GlobalAveragePooling1D()(keras.layers.concatenate([seq, context]))
    model = keras.Model(inputs, keras.layers.Dense(1)(pooled))
    model.set_weights([fixed_init(w.shape, 990 + i, 0.3) for i, w in enumerate(model.get_weights())])
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse", metrics=["mae"])

    with tempfile.TemporaryDirectory() as tmp:
        log_path = os.path.join(tmp, "training.log")
        early = keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
        history = model.fit_generator(train_gen, steps_per_epoch=len(train_gen), epochs=steps,
                                      validation_data=val_gen, callbacks=[early, keras.callbacks.CSVLogger(log_path)],
                                      verbose=0, shuffle=False)
        with open(log_path) as f:
            rows = list(csv.reader(f))
    hist = history.history
    mae_key = "mean_absolute_error" if "mean_absolute_error" in hist else "mae"
    scores = model.evaluate_generator(val_gen)
    x_input = data[-n_input:].reshape((1, n_input, n_features))
    forecast = model.predict(x_input, verbose=0)
    return {
        "windows": windows,
        "multi_first": [multi_first[0].tolist(), multi_first[1].tolist()],
        "batches": [len(train_gen), len(val_gen), len(multi)],
        "losses": hist["loss"],
        "mae": hist[mae_key],
        "val_loss": hist["val_loss"],
        "epochs_run": len(history.epoch),
        "csv_rows": len(rows) - 1,
        "evaluate": [float(s) for s in scores],
        "forecast": float(forecast[0, 0]),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
