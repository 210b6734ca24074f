"""TF1's "Build a Convolutional Neural Network using Estimators" (tutorials/layers/cnn_mnist.py), shrunk: a
cnn_model_fn of tf.layers returning EstimatorSpecs for PREDICT/TRAIN/EVAL, tf.estimator.Estimator with a
model_dir, tf.estimator.inputs.numpy_input_fn, a LoggingTensorHook on "softmax_tensor", train(steps=...),
evaluate() with tf.metrics.accuracy, predict(), a second train() resuming from the checkpoint, and
train_and_evaluate with TrainSpec/EvalSpec.

TensorFlow 2.21 has no tf.estimator, so there is no TensorFlow run to compare with: the test checks the
Estimator against the same model trained by hand (tests/python/test_estimator.py) and that it trains here.
"""

import shutil
import tempfile

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 20
# No TensorFlow fixture (TF 2.21 removed tf.estimator): the losses are checked to decrease.
NO_TF_FIXTURE = True


def cnn_model_fn(tf, features, labels, mode):
    input_layer = tf.reshape(features["x"], [-1, 28, 28, 1])
    conv1 = tf.layers.conv2d(
        inputs=input_layer, filters=4, kernel_size=[5, 5], padding="same", activation=tf.nn.relu
    )
    pool1 = tf.layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)
    conv2 = tf.layers.conv2d(
        inputs=pool1, filters=8, kernel_size=[5, 5], padding="same", activation=tf.nn.relu
    )
    pool2 = tf.layers.max_pooling2d(inputs=conv2, pool_size=[2, 2], strides=2)
    pool2_flat = tf.reshape(pool2, [-1, 7 * 7 * 8])
    dense = tf.layers.dense(inputs=pool2_flat, units=32, activation=tf.nn.relu)
    dropout = tf.layers.dropout(inputs=dense, rate=0.4, training=mode == tf.estimator.ModeKeys.TRAIN)
    logits = tf.layers.dense(inputs=dropout, units=10)
    predictions = {
        "classes": tf.argmax(input=logits, axis=1),
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.05)
        train_op = optimizer.minimize(loss=loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    eval_metric_ops = {"accuracy": tf.metrics.accuracy(labels=labels, predictions=predictions["classes"])}
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)


def main(tf, steps=20):
    tf.reset_default_graph()
    train_data, train_onehot = fake_mnist(200, seed=30)
    eval_data, eval_onehot = fake_mnist(60, seed=31)
    train_labels = train_onehot.argmax(1).astype(np.int32)
    eval_labels = eval_onehot.argmax(1).astype(np.int32)
    model_dir = tempfile.mkdtemp()

    mnist_classifier = tf.estimator.Estimator(
        model_fn=lambda features, labels, mode: cnn_model_fn(tf, features, labels, mode),
        model_dir=model_dir,
        config=tf.estimator.RunConfig(tf_random_seed=1, log_step_count_steps=10, save_summary_steps=10),
    )
    logged = []

    class Collect(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs("sparse_softmax_cross_entropy_loss/value:0")

        def after_run(self, run_context, run_values):
            logged.append(float(run_values.results))

    tensors_to_log = {"probabilities": "softmax_tensor"}
    logging_hook = tf.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=50)
    train_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": train_data}, y=train_labels, batch_size=20, num_epochs=None, shuffle=True
    )
    mnist_classifier.train(input_fn=train_input_fn, steps=steps, hooks=[logging_hook, Collect()])
    eval_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": eval_data}, y=eval_labels, num_epochs=1, shuffle=False
    )
    eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)

    pred_input_fn = tf.estimator.inputs.numpy_input_fn(x={"x": eval_data[:7]}, num_epochs=1, shuffle=False)
    predictions = list(mnist_classifier.predict(input_fn=pred_input_fn))

    mnist_classifier.train(input_fn=train_input_fn, steps=5)
    resumed_step = int(mnist_classifier.get_variable_value("global_step"))

    train_spec = tf.estimator.TrainSpec(input_fn=train_input_fn, max_steps=resumed_step + 5)
    eval_spec = tf.estimator.EvalSpec(input_fn=eval_input_fn, steps=None, throttle_secs=0)
    final_eval, _ = tf.estimator.train_and_evaluate(mnist_classifier, train_spec, eval_spec)
    names = mnist_classifier.get_variable_names()
    shutil.rmtree(model_dir)
    return {
        "losses": logged,
        "eval_keys": sorted(eval_results),
        "eval_accuracy": float(eval_results["accuracy"]),
        "eval_global_step": int(eval_results["global_step"]),
        "prediction_count": len(predictions),
        "prediction_keys": sorted(predictions[0]),
        "probabilities_sum": float(np.sum(predictions[0]["probabilities"])),
        "resumed_step": resumed_step,
        "final_global_step": int(final_eval["global_step"]),
        "variables": names,
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
