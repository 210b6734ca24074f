"""Deep & Cross Network (Wang et al. 2017) and wide-and-deep built on tf.feature_column in a TF1 graph, as the
CTR repositories wrote them: features parsed from a dict of tensors, categorical_column_with_vocabulary_list /
_with_hash_bucket / _with_identity, bucketized_column over numeric_column, crossed_column, embedding_column
(combiner, initializer) and indicator_column, weighted_categorical_column, shared_embedding_columns-free
two-tower ids, tf.feature_column.input_layer for the dense input x0, cross layers x_{l+1} = x0 * (x_l . w_l)
+ b_l + x_l written with tf.tensordot, a deep tower of tf.layers.dense, their concatenation to a logit, the wide
part by tf.feature_column.linear_model, and Adam on the log loss; also tf.feature_column.make_parse_example_spec
used to parse serialized tf.train.Example records.

Deterministic: every trainable variable is loaded from numpy after initialization.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    rng = np.random.RandomState(181)
    n = 32
    raw = {
        "age": rng.uniform(18, 70, size=(n, 1)).astype(np.float32),
        "income": rng.lognormal(3, 0.5, size=(n, 1)).astype(np.float32),
        "city": rng.choice(["paris", "tokyo", "lima", "oslo", "cairo"], size=(n, 1)).astype(np.bytes_),
        "device": rng.choice(["ios", "android", "web"], size=(n, 1)).astype(np.bytes_),
        "ad_id": rng.randint(0, 20, size=(n, 1)).astype(np.int64),
        "score": rng.uniform(0, 1, size=(n, 1)).astype(np.float32),
    }
    label = ((raw["age"][:, 0] < 40) ^ (raw["device"][:, 0] == b"web")).astype(np.float32)[:, None]
    fc = None
    out = {}
    tf.reset_default_graph()
    fc = tf.feature_column
    age = fc.numeric_column("age")
    income = fc.numeric_column("income", normalizer_fn=lambda x: tf.log1p(x))
    age_b = fc.bucketized_column(age, boundaries=[25, 35, 45, 55])
    city = fc.categorical_column_with_vocabulary_list("city", ["paris", "tokyo", "lima", "oslo"], num_oov_buckets=1)
    device = fc.categorical_column_with_hash_bucket("device", 8)
    ad = fc.categorical_column_with_identity("ad_id", num_buckets=20)
    ad_w = fc.weighted_categorical_column(ad, "score")
    cross = fc.crossed_column([age_b, "device"], hash_bucket_size=16)
    deep_columns = [age, income, age_b, fc.indicator_column(city), fc.embedding_column(device, 3),
                    fc.embedding_column(ad_w, 4, combiner="sqrtn"), fc.embedding_column(cross, 2)]
    wide_columns = [age_b, city, device, cross]
    features = {k: tf.constant(v) for k, v in raw.items()}
    x0 = fc.input_layer(features, deep_columns)
    d = x0.get_shape().as_list()[1]
    xl = x0
    for layer in range(2):
        with tf.variable_scope(f"cross_{layer}"):
            w = tf.get_variable("w", [d, 1])
            b = tf.get_variable("b", [d], initializer=tf.zeros_initializer())
        xl = x0 * tf.tensordot(xl, w, axes=1) + b + xl
    deep = tf.layers.dense(x0, 8, activation=tf.nn.relu, name="deep1")
    deep = tf.layers.dense(deep, 4, activation=tf.nn.relu, name="deep2")
    dcn_logit = tf.layers.dense(tf.concat([xl, deep], 1), 1, name="dcn_out")
    wide_logit = fc.linear_model(features, wide_columns)
    logits = dcn_logit + wide_logit
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant(label), logits=logits))
    train = tf.train.AdamOptimizer(0.02).minimize(loss)
    auc, auc_update = tf.metrics.auc(tf.constant(label), tf.sigmoid(logits))
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer(), tf.tables_initializer()])
        for i, v in enumerate(sorted(tf.trainable_variables(), key=lambda v: v.op.name)):
            shape = v.shape.as_list()
            v.load((np.random.RandomState(1800 + i).standard_normal(shape) * 0.1).astype(np.float32), sess)
        out["x0_sum"] = float(sess.run(x0).sum())
        out["x0_row0"] = sess.run(x0)[0].tolist()
        out["losses"] = [float(sess.run([train, loss])[1]) for _ in range(steps)]
        sess.run(auc_update)
        out["auc"] = float(sess.run(auc))
    out["x0_width"] = d
    out["variables"] = sorted(v.op.name for v in tf.trainable_variables())

    # Parsing serialized Examples with the columns' spec.
    tf.reset_default_graph()
    spec = fc.make_parse_example_spec([age, income, city, fc.embedding_column(ad_w, 4)])
    out["spec"] = {k: type(v).__name__ for k, v in sorted(spec.items())}
    records = []
    for i in range(4):
        ex = tf.train.Example(features=tf.train.Features(feature={
            "age": tf.train.Feature(float_list=tf.train.FloatList(value=[float(raw["age"][i, 0])])),
            "income": tf.train.Feature(float_list=tf.train.FloatList(value=[float(raw["income"][i, 0])])),
            "city": tf.train.Feature(bytes_list=tf.train.BytesList(value=[raw["city"][i, 0]])),
            "ad_id": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(raw["ad_id"][i, 0])])),
            "score": tf.train.Feature(float_list=tf.train.FloatList(value=[float(raw["score"][i, 0])])),
        }))
        records.append(ex.SerializeToString())
    parsed = tf.parse_example(tf.constant(records), spec)
    dense = fc.input_layer(parsed, [age, income, fc.indicator_column(city)])
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        out["parsed_dense"] = sess.run(dense).ravel().tolist()
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
