"""TF 1.x guide "Importing Data": Dataset.from_tensors/from_tensor_slices with dict elements and
output_types/output_shapes, zip, concatenate, range, map with num_parallel_calls, filter, flat_map,
interleave(cycle_length, block_length), padded_batch with padded_shapes, from_generator with output_types and
output_shapes, shuffle with a seed, the reinitializable iterator (Iterator.from_structure +
make_initializer for training and validation datasets) and the feedable iterator (string_handle +
tf.data.Iterator.from_string_handle fed through a placeholder), and a train loop on a repeat/batch pipeline.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 4


def drain(sess, nxt, limit=50):
    out = []
    for _ in range(limit):
        try:
            v = sess.run(nxt)
        except Exception as e:  # noqa: BLE001 (the guide's except tf.errors.OutOfRangeError)
            out.append(type(e).__name__)
            break
        out.append(to_json(v))
    return out


def to_json(v):
    if isinstance(v, dict):
        return {k: to_json(x) for k, x in v.items()}
    if isinstance(v, (tuple, list)):
        return [to_json(x) for x in v]
    a = np.asarray(v)
    if a.dtype.kind in "SO":
        return [x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel()]
    return a.tolist()


def main(tf, steps=4):
    tf.reset_default_graph()
    out = {}
    dataset1 = tf.data.Dataset.from_tensor_slices(np.arange(40, dtype=np.float32).reshape(10, 4))
    dataset2 = tf.data.Dataset.from_tensor_slices(
        (tf.range(10, dtype=tf.float32) * 0.5, tf.constant(np.arange(100, dtype=np.int32).reshape(10, 10)))
    )
    dataset3 = tf.data.Dataset.zip((dataset1, dataset2))
    out["types"] = [str(dataset1.output_types), str(dataset2.output_types), str(dataset3.output_types)]
    out["shapes"] = [str(dataset1.output_shapes), str(dataset2.output_shapes), str(dataset3.output_shapes)]
    dataset = tf.data.Dataset.from_tensor_slices(
        {"a": tf.constant([1.0, 2.0, 3.0, 4.0]), "b": tf.constant(np.arange(8, dtype=np.int32).reshape(4, 2))}
    )
    out["dict_types"] = sorted((k, v.name) for k, v in dataset.output_types.items())

    inc_dataset = tf.data.Dataset.range(100)
    dec_dataset = tf.data.Dataset.range(0, -100, -1)
    zipped = tf.data.Dataset.zip((inc_dataset, dec_dataset)).take(3)
    batched = tf.data.Dataset.range(10).map(lambda x: tf.fill([tf.cast(x, tf.int32)], x)).padded_batch(
        4, padded_shapes=(None,)
    )
    concat = tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(7, 9))
    par_map = tf.data.Dataset.range(8).map(lambda x: x * x, num_parallel_calls=4).filter(lambda x: x % 2 == 0)
    flat = tf.data.Dataset.range(3).flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(x + 1))
    inter = tf.data.Dataset.range(1, 4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(4), cycle_length=2, block_length=2
    )

    def gen():
        for i in range(1, 5):
            yield (i, [1] * i)

    from_gen = tf.data.Dataset.from_generator(
        gen, (tf.int64, tf.int64), (tf.TensorShape([]), tf.TensorShape([None]))
    ).padded_batch(2, padded_shapes=([], [None]))
    shuffled = tf.data.Dataset.range(6).shuffle(buffer_size=6, seed=42, reshuffle_each_iteration=False).batch(6)

    with tf.Session() as sess:
        for key, ds in [("zipped", zipped), ("padded", batched), ("concat", concat), ("par_map", par_map),
                        ("flat_map", flat), ("interleave", inter), ("from_generator", from_gen),
                        ("dict", dataset)]:
            out[key] = drain(sess, ds.make_one_shot_iterator().get_next())
        out["shuffle_is_permutation"] = sorted(drain(sess, shuffled.make_one_shot_iterator().get_next())[0]) == list(
            range(6))
        # The seeded order itself, and a repeat reshuffling each epoch (TF's order).
        out["shuffled"] = drain(sess, shuffled.make_one_shot_iterator().get_next())
        out["reshuffled"] = drain(sess, tf.data.Dataset.range(8).shuffle(4, seed=9).repeat(3).batch(8)
                                  .make_one_shot_iterator().get_next())

        # Reinitializable iterator.
        training_dataset = tf.data.Dataset.range(20).map(lambda x: x + 100)
        validation_dataset = tf.data.Dataset.range(5)
        iterator = tf.data.Iterator.from_structure(training_dataset.output_types, training_dataset.output_shapes)
        next_element = iterator.get_next()
        training_init_op = iterator.make_initializer(training_dataset)
        validation_init_op = iterator.make_initializer(validation_dataset)
        reinit = []
        for _ in range(2):
            sess.run(training_init_op)
            reinit.append([int(sess.run(next_element)) for _ in range(3)])
            sess.run(validation_init_op)
            reinit.append(drain(sess, next_element))
        out["reinitializable"] = reinit

        # Feedable iterator.
        handle = tf.placeholder(tf.string, shape=[])
        train_ds = tf.data.Dataset.range(100).map(lambda x: x * 10).repeat()
        val_ds = tf.data.Dataset.range(3)
        iterator = tf.data.Iterator.from_string_handle(handle, train_ds.output_types, train_ds.output_shapes)
        next_el = iterator.get_next()
        training_iterator = train_ds.make_one_shot_iterator()
        validation_iterator = val_ds.make_initializable_iterator()
        training_handle = sess.run(training_iterator.string_handle())
        validation_handle = sess.run(validation_iterator.string_handle())
        feedable = []
        for _ in range(2):
            feedable.append([int(sess.run(next_el, feed_dict={handle: training_handle})) for _ in range(2)])
            sess.run(validation_iterator.initializer)
            feedable.append([int(sess.run(next_el, feed_dict={handle: validation_handle})) for _ in range(3)])
        out["feedable"] = feedable
        out["handle_type"] = type(training_handle).__name__

    # Training from a batch pipeline.
    rng = np.random.RandomState(7)
    features = rng.randn(32, 3).astype(np.float32)
    targets = (features @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices((features, targets)).repeat().batch(8)
    fx, fy = ds.make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([3, 1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(fx, w) - fy))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            losses.append(float(sess.run([train, loss])[1]))
    out["losses"] = losses
    return out


if __name__ == "__main__":
    run_as_script(main, 4)
