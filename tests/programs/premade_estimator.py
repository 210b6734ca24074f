"""TF1's "Premade Estimators" getting-started tutorial (premade_estimator.py with iris_data.py), on synthetic
iris-like data: numeric feature columns, tf.estimator.DNNClassifier(hidden_units=[10, 10], n_classes=3),
train_input_fn/eval_input_fn built with tf.data from a dict of features, train(steps=...), evaluate() printed
with '{accuracy:0.3f}', predict() read through class_ids and probabilities; then the census tutorial's
LinearClassifier (two classes) and a DNNRegressor/LinearRegressor on the same columns.

TensorFlow 2.21 has no tf.estimator: the program is checked to train (losses decrease) and for the keys and
shapes TF 1.15 gives.
"""

import shutil
import tempfile

import numpy as np
from _common import run_as_script

TF_STEPS = 40
NO_TF_FIXTURE = True
CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]


def load_data(n, seed):
    rng = np.random.RandomState(seed)
    species = rng.randint(3, size=n)
    feats = rng.normal(
        loc=np.stack([5.0 + species, 3.0 + 0 * species, 1.5 + 2 * species, 0.3 + species], 1), scale=0.3
    ).astype(np.float32)
    return {k: feats[:, i] for i, k in enumerate(CSV_COLUMN_NAMES[:-1])}, species.astype(np.int32)


def main(tf, steps=40):
    tf.reset_default_graph()
    train_x, train_y = load_data(120, 40)
    test_x, test_y = load_data(30, 41)

    def train_input_fn(features, labels, batch_size):
        dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
        return dataset.shuffle(1000).repeat().batch(batch_size)

    def eval_input_fn(features, labels, batch_size):
        features = dict(features)
        inputs = features if labels is None else (features, labels)
        dataset = tf.data.Dataset.from_tensor_slices(inputs)
        assert batch_size is not None, "batch_size must not be None"
        return dataset.batch(batch_size)

    my_feature_columns = [tf.feature_column.numeric_column(key=key) for key in CSV_COLUMN_NAMES[:-1]]
    model_dir = tempfile.mkdtemp()
    losses = []

    class Losses(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(tf.get_collection(tf.GraphKeys.LOSSES)[-1])

        def after_run(self, run_context, run_values):
            losses.append(float(run_values.results))

    classifier = tf.estimator.DNNClassifier(
        feature_columns=my_feature_columns,
        hidden_units=[10, 10],
        n_classes=3,
        model_dir=model_dir + "/dnn",
        config=tf.estimator.RunConfig(tf_random_seed=3),
    )
    classifier.train(input_fn=lambda: train_input_fn(train_x, train_y, 16), steps=steps, hooks=[Losses()])
    eval_result = classifier.evaluate(input_fn=lambda: eval_input_fn(test_x, test_y, 16))
    line = "\nTest set accuracy: {accuracy:0.3f}\n".format(**eval_result)
    expected = ["Setosa", "Versicolor", "Virginica"]
    predict_x = {k: v[:3] for k, v in test_x.items()}
    predictions = classifier.predict(input_fn=lambda: eval_input_fn(predict_x, labels=None, batch_size=16))
    described = []
    for pred_dict, expec in zip(predictions, expected):
        class_id = pred_dict["class_ids"][0]
        probability = pred_dict["probabilities"][class_id]
        described.append((int(class_id), float(probability), expec))
    pred_keys = sorted(pred_dict)

    binary_y = (train_y == 2).astype(np.int32)
    linear = tf.estimator.LinearClassifier(
        feature_columns=my_feature_columns, model_dir=model_dir + "/linear"
    )
    linear.train(input_fn=lambda: train_input_fn(train_x, binary_y, 16), steps=20)
    linear_eval = linear.evaluate(input_fn=lambda: eval_input_fn(test_x, (test_y == 2).astype(np.int32), 16))

    target = train_x["PetalLength"] * 2.0
    regressor = tf.estimator.DNNRegressor(
        feature_columns=my_feature_columns, hidden_units=[8], model_dir=model_dir + "/reg"
    )
    regressor.train(input_fn=lambda: train_input_fn(train_x, target, 16), steps=20)
    reg_eval = regressor.evaluate(input_fn=lambda: eval_input_fn(train_x, target, 40))
    lin_reg = tf.estimator.LinearRegressor(
        feature_columns=my_feature_columns, model_dir=model_dir + "/linreg"
    )
    lin_reg.train(input_fn=lambda: train_input_fn(train_x, target, 16), steps=5)
    dnn_vars = sorted(classifier.get_variable_names())
    linear_vars = sorted(linear.get_variable_names())
    shutil.rmtree(model_dir)
    return {
        "losses": losses,
        "accuracy_line": line.strip().split(":")[0],
        "eval_accuracy": float(eval_result["accuracy"]),
        "eval_keys": sorted(eval_result),
        "described": described,
        "prediction_keys": pred_keys,
        "linear_eval_keys": sorted(linear_eval),
        "regressor_eval_keys": sorted(reg_eval),
        "dnn_variables": dnn_vars,
        "linear_variables": linear_vars,
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
