"""TF 1.x's "Image classification" tutorial (cats vs dogs with tf.keras): ImageDataGenerator(rescale=1./255)
with rotation, shifts, flips and zoom for training, flow_from_directory(batch_size, directory, shuffle=True,
target_size, class_mode='binary') over a folder per class, a Sequential of Conv2D/MaxPooling2D blocks ->
Flatten -> Dense(relu) -> Dense(1, sigmoid), compile('adam', 'binary_crossentropy') with accuracy,
Precision, Recall and AUC as metrics, fit_generator with steps_per_epoch and validation data, callbacks
ReduceLROnPlateau, TerminateOnNaN and a LambdaCallback, then evaluate.

Synthetic pictures (PNG files written to a temporary directory): "cats" are bright discs, "dogs" bright
bars, over noise. The generator's seed and Python's random (the order of the batches) make the run the same
as TensorFlow's.
"""

import os
import random
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 3


def _picture(rng, kind, size=20):
    img = rng.uniform(0, 90, size=(size, size, 3))
    rr, cc = np.mgrid[:size, :size]
    cy, cx = rng.randint(6, size - 6, size=2)
    if kind == "cats":
        img[(rr - cy) ** 2 + (cc - cx) ** 2 < 16] += 150
    else:
        img[cy - 1:cy + 2, 2:size - 2] += 150
    return np.clip(img, 0, 255).astype(np.uint8)


def main(tf, steps=3):
    from PIL import Image

    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    rng = np.random.RandomState(40)
    with tempfile.TemporaryDirectory() as base_dir:
        train_dir = os.path.join(base_dir, "train")
        for kind in ("cats", "dogs"):
            os.makedirs(os.path.join(train_dir, kind))
            for i in range(10):
                Image.fromarray(_picture(rng, kind)).save(os.path.join(train_dir, kind, f"{kind[:-1]}.{i}.png"))
        val_images = np.stack([_picture(rng, kind)[2:18, 2:18] for kind in ("cats", "dogs") * 4]).astype(np.float32) / 255.0
        val_labels = np.array([0.0, 1.0] * 4, np.float32)

        batch_size = 6
        IMG_HEIGHT = IMG_WIDTH = 16
        train_image_generator = keras.preprocessing.image.ImageDataGenerator(
            rescale=1.0 / 255, rotation_range=45, width_shift_range=0.15, height_shift_range=0.15,
            horizontal_flip=True, zoom_range=0.5)
        train_data_gen = train_image_generator.flow_from_directory(
            batch_size=batch_size, directory=train_dir, shuffle=True, target_size=(IMG_HEIGHT, IMG_WIDTH),
            class_mode="binary", seed=7)
        sample_training_images, sample_labels = next(train_data_gen)

        model = keras.models.Sequential([
            keras.layers.Conv2D(4, 3, padding="same", activation="relu", input_shape=(IMG_HEIGHT, IMG_WIDTH, 3)),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ])
        model.set_weights([fixed_init(w.shape, 950 + i, 0.3) for i, w in enumerate(model.get_weights())])
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy",
                      metrics=["accuracy", keras.metrics.Precision(), keras.metrics.Recall(),
                               keras.metrics.AUC(name="auc")])
        lrs = []
        reduce_lr = keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1, min_lr=1e-4)
        record_lr = keras.callbacks.LambdaCallback(
            on_epoch_end=lambda epoch, logs: lrs.append(float(keras.backend.get_value(model.optimizer.lr))))
        random.seed(11)
        history = model.fit_generator(train_data_gen, steps_per_epoch=len(train_data_gen), epochs=steps,
                                      validation_data=(val_images, val_labels), verbose=0,
                                      callbacks=[reduce_lr, keras.callbacks.TerminateOnNaN(), record_lr])
        scores = model.evaluate(val_images, val_labels, verbose=0)
        hist = history.history
        acc_key = "acc" if "acc" in hist else "accuracy"
        return {
            "classes": sorted(train_data_gen.class_indices.items()),
            "samples": train_data_gen.samples,
            "first_batch": [float(sample_training_images.sum()), sample_labels.tolist()],
            "losses": hist["loss"],
            "accuracy": hist[acc_key],
            "precision": hist["precision"],
            "recall": hist["recall"],
            "auc": hist["auc"],
            "val_loss": hist["val_loss"],
            "val_auc": hist["val_auc"],
            "learning_rates": lrs,
            "evaluate": [float(v) for v in scores],
            "metrics_names": [("acc" if n == "accuracy" else n) for n in model.metrics_names],
        }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
