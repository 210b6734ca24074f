"""TF 1.x's "Save and restore models" with tf.keras: a ModelCheckpoint callback saving weights only
(save_weights_only=True, a '{epoch:04d}' file name, period), tf.train.latest_checkpoint on its directory, a
fresh untrained model that load_weights() brings back to the trained accuracy, and manual save_weights /
load_weights.

Synthetic flattened digits; numpy seeds the shuffling and the starting weights.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 2


def main(tf, steps=2):
    tf.reset_default_graph()
    keras = tf.keras
    keras.backend.clear_session()
    np.random.seed(9)
    images, onehot = fake_mnist(200, seed=31)
    train_images, train_labels = images[:150], onehot[:150].argmax(1)
    test_images, test_labels = images[150:], onehot[150:].argmax(1)

    def create_model(seed=0):
        model = keras.models.Sequential([
            keras.layers.Dense(32, activation=tf.nn.relu, input_shape=(784,)),
            keras.layers.Dense(10, activation=tf.nn.softmax),
        ])
        model.set_weights([fixed_init(w.shape, seed + i, 0.05) for i, w in enumerate(model.get_weights())])
        model.compile(optimizer=keras.optimizers.Adam(), loss=keras.losses.sparse_categorical_crossentropy,
                      metrics=["accuracy"])
        return model

    root = tempfile.mkdtemp()
    try:
        checkpoint_path = os.path.join(root, "training_2", "cp-{epoch:04d}.ckpt")
        checkpoint_dir = os.path.dirname(checkpoint_path)
        os.makedirs(checkpoint_dir)
        cp_callback = keras.callbacks.ModelCheckpoint(checkpoint_path, verbose=0, save_weights_only=True, period=1)
        model = create_model(940)
        history = model.fit(train_images, train_labels, epochs=steps, callbacks=[cp_callback],
                            validation_data=(test_images, test_labels), verbose=0)
        files = sorted(f for f in os.listdir(checkpoint_dir) if f.endswith(".index"))
        latest = tf.train.latest_checkpoint(checkpoint_dir)

        fresh = create_model(950)
        untrained = fresh.evaluate(test_images, test_labels, verbose=0)
        fresh.load_weights(latest)
        restored = fresh.evaluate(test_images, test_labels, verbose=0)
        trained = model.evaluate(test_images, test_labels, verbose=0)

        manual = os.path.join(root, "checkpoints", "my_checkpoint")
        model.save_weights(manual)
        third = create_model(960)
        third.load_weights(manual)
        same = bool(np.allclose(third.predict(test_images), model.predict(test_images), atol=1e-6))
        return {
            "losses": history.history["loss"],
            "val_acc": history.history["val_acc"],
            "files": files,
            "latest": os.path.basename(latest),
            "untrained": [float(v) for v in untrained],
            "restored": [float(v) for v in restored],
            "trained": [float(v) for v in trained],
            "manual_restore_same": same,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
