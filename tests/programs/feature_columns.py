"""The TF1 feature-column recipe without an Estimator (the "Feature Columns" guide and the wide-and-deep
census tutorial's columns): numeric, bucketized, vocabulary-list, hash-bucket and crossed columns turned into a
dense tensor with tf.feature_column.input_layer (indicator and embedding columns) plus a linear_model part, a
logistic output trained with FTRL/Adagrad, and tf.metrics.accuracy/auc/mean with local variables.

Every trainable variable is loaded from numpy after initialization, so the losses and metrics are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 8


def make_data(n, seed):
    rng = np.random.RandomState(seed)
    colors = np.array(["R", "G", "B", "X"])
    cities = np.array(["paris", "oslo", "lima", "rome", "kyiv"])
    data = {
        "price": rng.uniform(0, 10, size=(n, 1)).astype(np.float32),
        "age": rng.randint(10, 60, size=(n, 1)).astype(np.float32),
        "color": colors[rng.randint(0, 4, size=(n, 1))],
        "city": cities[rng.randint(0, 5, size=(n, 1))],
    }
    label = ((data["price"][:, 0] > 5) ^ (data["color"][:, 0] == "R")).astype(np.float32)[:, None]
    return data, label


def main(tf, steps=8):
    tf.reset_default_graph()
    data, labels_np = make_data(64, seed=12)

    price = tf.feature_column.numeric_column("price")
    age = tf.feature_column.numeric_column("age")
    age_buckets = tf.feature_column.bucketized_column(age, boundaries=[18, 25, 30, 40, 50])
    color = tf.feature_column.categorical_column_with_vocabulary_list("color", ["R", "G", "B"])
    city = tf.feature_column.categorical_column_with_hash_bucket("city", hash_bucket_size=7)
    crossed = tf.feature_column.crossed_column([age_buckets, "color"], hash_bucket_size=16)

    deep_columns = [
        price,
        tf.feature_column.indicator_column(color),
        tf.feature_column.embedding_column(city, dimension=3),
        tf.feature_column.indicator_column(age_buckets),
    ]
    wide_columns = [color, age_buckets, crossed]

    features = {
        k: tf.placeholder(tf.float32 if v.dtype.kind == "f" else tf.string, [None, 1], name=k)
        for k, v in data.items()
    }
    labels = tf.placeholder(tf.float32, [None, 1])
    net_input = tf.feature_column.input_layer(features, deep_columns)
    net = tf.layers.dense(net_input, 8, activation=tf.nn.relu)
    deep_logits = tf.layers.dense(net, 1)
    wide_logits = tf.feature_column.linear_model(features, wide_columns)
    logits = deep_logits + wide_logits
    loss = tf.losses.sigmoid_cross_entropy(labels, logits)

    global_step = tf.train.get_or_create_global_step()
    deep_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="dense") + [
        v for v in tf.trainable_variables() if "embedding_weights" in v.name
    ]
    wide_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="linear_model")
    train_deep = tf.train.AdagradOptimizer(0.1).minimize(loss, var_list=deep_vars)
    train_wide = tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.001).minimize(
        loss, var_list=wide_vars, global_step=global_step
    )
    train_op = tf.group(train_deep, train_wide)

    probs = tf.sigmoid(logits)
    predictions = tf.cast(probs > 0.5, tf.float32)
    acc, acc_op = tf.metrics.accuracy(labels=labels, predictions=predictions)
    auc, auc_op = tf.metrics.auc(labels=labels, predictions=probs, num_thresholds=50)
    mean_loss, mean_op = tf.metrics.mean(loss)

    feed = {features[k]: v for k, v in data.items()}
    feed[labels] = labels_np
    losses = []
    with tf.Session() as sess:
        sess.run(
            [tf.global_variables_initializer(), tf.local_variables_initializer(), tf.tables_initializer()]
        )
        for k, v in enumerate(tf.trainable_variables()):
            v.load(fixed_init(v.shape.as_list(), 500 + k, scale=0.2), sess)
        dense_width = sess.run(tf.shape(net_input), feed)
        for _ in range(steps):
            _, l = sess.run([train_op, loss], feed)
            losses.append(float(l))
            sess.run([acc_op, auc_op, mean_op], feed)
        metrics = sess.run([acc, auc, mean_loss])
        step = sess.run(global_step)
    return {
        "losses": losses,
        "accuracy": float(metrics[0]),
        "auc": float(metrics[1]),
        "mean_loss": float(metrics[2]),
        "global_step": int(step),
        "input_layer_shape": dense_width.tolist(),
        "trainable": [v.name for v in tf.trainable_variables()],
        "local_variables": sorted(v.name for v in tf.local_variables()),
        "metric_variables": len(tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
