"""The TF 1.x Estimator main loop (tensorflow/models' official r1 scripts and the "Creating Custom
Estimators" guide): a model_fn with tf.layers and tf.losses returning EstimatorSpecs for TRAIN (minimize with
tf.train.get_global_step()), EVAL (eval_metric_ops from tf.metrics.accuracy / mean_absolute_error) and
PREDICT (predictions dict with export_outputs), a tf.estimator.RunConfig with save_checkpoints_steps and
keep_checkpoint_max, tf.estimator.TrainSpec(max_steps) and EvalSpec(steps, start_delay_secs=0,
throttle_secs=0) over tf.data input functions, tf.estimator.train_and_evaluate, export_saved_model,
then evaluate() and predict() on the trained model and the exported SavedModel's directory layout.

TensorFlow 2.21 no longer ships tf.estimator, so this program is checked to run and train (NO_TF_FIXTURE).
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 12
NO_TF_FIXTURE = True


def main(tf, steps=12):
    tf.reset_default_graph()
    rng = np.random.RandomState(160)
    X = rng.randn(64, 4).astype(np.float32)
    Y = (X[:, 0] - X[:, 1] > 0).astype(np.int32)
    model_dir = tempfile.mkdtemp()

    def model_fn(features, labels, mode, params):
        net = tf.layers.dense(features["x"], params["hidden"], activation=tf.nn.relu,
                              kernel_initializer=tf.constant_initializer(fixed_init([4, params["hidden"]], 1600)))
        logits = tf.layers.dense(net, 2, kernel_initializer=tf.constant_initializer(
            fixed_init([params["hidden"], 2], 1601)))
        predicted = tf.argmax(logits, 1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {"class_ids": predicted[:, tf.newaxis], "probabilities": tf.nn.softmax(logits)}
            return tf.estimator.EstimatorSpec(
                mode, predictions=predictions,
                export_outputs={"serving_default": tf.estimator.export.PredictOutput(predictions)})
        loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        metrics = {
            "accuracy": tf.metrics.accuracy(labels=labels, predictions=predicted, name="acc_op"),
            "mae": tf.metrics.mean_absolute_error(tf.cast(labels, tf.float32), tf.cast(predicted, tf.float32)),
        }
        tf.summary.scalar("accuracy", metrics["accuracy"][1])
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
        optimizer = tf.train.AdagradOptimizer(learning_rate=0.3)
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        return ds.shuffle(64, seed=1).repeat().batch(16)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(32)

    def serving_input_receiver_fn():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    losses = []

    class LossHook(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(tf.get_collection(tf.GraphKeys.LOSSES)[0])

        def after_run(self, run_context, run_values):
            losses.append(float(run_values.results))

    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=6, keep_checkpoint_max=2,
                                    tf_random_seed=160)
    classifier = tf.estimator.Estimator(model_fn=model_fn, config=config, params={"hidden": 8})
    train_spec = tf.estimator.TrainSpec(input_fn=train_input_fn, max_steps=steps, hooks=[LossHook()])
    # (No exporter: export directories are named by the second, so a second export waits for a fresh one,
    # as in TF; classifier.export_saved_model is exercised once below.)
    eval_spec = tf.estimator.EvalSpec(input_fn=eval_input_fn, steps=2, start_delay_secs=0, throttle_secs=0)
    tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    result = classifier.evaluate(input_fn=eval_input_fn)
    predictions = list(classifier.predict(input_fn=lambda: tf.data.Dataset.from_tensor_slices({"x": X[:5]}).batch(5)))
    export_path = classifier.export_saved_model(os.path.join(model_dir, "export"), serving_input_receiver_fn)
    exported = sorted(os.listdir(export_path))
    ckpt = tf.train.get_checkpoint_state(model_dir)
    out = {
        "losses": losses,
        "eval": {k: float(v) for k, v in result.items()},
        "predicted": [int(p["class_ids"][0]) for p in predictions],
        "exported": exported,
        "checkpoints": [os.path.basename(p) for p in ckpt.all_model_checkpoint_paths],
    }
    shutil.rmtree(model_dir)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
