"""The TF1 "wide and deep" census tutorial (official/r1/wide_deep) on synthetic census-like rows:
tf.estimator.DNNLinearCombinedClassifier with linear_feature_columns (bucketized age, vocabulary and hashed
categorical columns, a crossed column) and dnn_feature_columns (numeric, indicator and embedding columns),
dnn_hidden_units, linear_optimizer Ftrl and dnn_optimizer Adagrad, an input_fn over tf.data from a dict of
features, a model_dir of its own, train(steps) read back through a LoggingTensorHook-free loss hook,
evaluate() (accuracy, auc, precision, recall, label/mean, prediction/mean, average_loss keys) and predict()
(probabilities, class_ids, logits), and the DNNLinearCombinedRegressor on the same columns.

TensorFlow 2.21 has no tf.estimator: the program is checked to train (losses decrease) and for the keys TF 1.15
reports.
"""

import shutil
import tempfile

import numpy as np
from _common import run_as_script

TF_STEPS = 30
NO_TF_FIXTURE = True


def census(n, seed):
    rng = np.random.RandomState(seed)
    age = rng.uniform(18, 80, size=n).astype(np.float32)
    hours = rng.uniform(10, 60, size=n).astype(np.float32)
    education = rng.choice(["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"], size=n)
    occupation = rng.choice(["Tech-support", "Sales", "Exec-managerial", "Craft-repair"], size=n)
    label = ((hours > 40) & (np.isin(education, ["Masters", "Doctorate", "Bachelors"])) | (age > 60)).astype(np.int32)
    feats = {"age": age, "hours_per_week": hours, "education": education, "occupation": occupation}
    return feats, label


def main(tf, steps=30):
    tf.reset_default_graph()
    feats, labels = census(200, 191)
    fc = tf.feature_column
    age = fc.numeric_column("age")
    hours = fc.numeric_column("hours_per_week")
    education = fc.categorical_column_with_vocabulary_list(
        "education", ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"])
    occupation = fc.categorical_column_with_hash_bucket("occupation", hash_bucket_size=20)
    age_buckets = fc.bucketized_column(age, boundaries=[25, 35, 45, 55, 65])
    wide = [education, occupation, age_buckets,
            fc.crossed_column(["education", "occupation"], hash_bucket_size=50)]
    deep = [age, hours, fc.indicator_column(education), fc.embedding_column(occupation, dimension=4)]

    def input_fn(shuffle, epochs=None, batch=32):
        ds = tf.data.Dataset.from_tensor_slices((dict(feats), labels))
        if shuffle:
            ds = ds.shuffle(200, seed=1)
        return ds.repeat(epochs).batch(batch)

    class LossRecorder(tf.train.SessionRunHook):
        def __init__(self):
            self.losses = []

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(tf.get_collection(tf.GraphKeys.LOSSES)[0])

        def after_run(self, run_context, run_values):
            self.losses.append(float(np.mean(run_values.results)))

    out = {}
    model_dir = tempfile.mkdtemp()
    try:
        model = tf.estimator.DNNLinearCombinedClassifier(
            model_dir=model_dir, linear_feature_columns=wide, dnn_feature_columns=deep,
            dnn_hidden_units=[16, 8], linear_optimizer=tf.train.FtrlOptimizer(0.1),
            dnn_optimizer=tf.train.AdagradOptimizer(0.1),
            config=tf.estimator.RunConfig(tf_random_seed=7, save_checkpoints_steps=None,
                                          save_checkpoints_secs=None, log_step_count_steps=None))
        recorder = LossRecorder()
        model.train(lambda: input_fn(True), steps=steps, hooks=[recorder])
        out["losses"] = recorder.losses
        metrics = model.evaluate(lambda: input_fn(False, epochs=1))
        out["eval_keys"] = sorted(metrics)
        out["global_step"] = int(metrics["global_step"])
        preds = list(model.predict(lambda: input_fn(False, epochs=1)))
        out["predict_keys"] = sorted(preds[0])
        out["n_predictions"] = len(preds)
        regressor = tf.estimator.DNNLinearCombinedRegressor(
            model_dir=model_dir + "_reg", linear_feature_columns=wide, dnn_feature_columns=deep,
            dnn_hidden_units=[8])
        regressor.train(lambda: input_fn(True), steps=5)
        out["regressor_keys"] = sorted(regressor.evaluate(lambda: input_fn(False, epochs=1)))
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)
        shutil.rmtree(model_dir + "_reg", ignore_errors=True)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
