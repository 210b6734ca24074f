"""tf.data and tf.map_fn / tf.gather calls shared by tools/make_data_gaps_fixtures.py (TF 2.21, graph mode) and
test_data_gaps.py. ``tf`` is ``tensorflow.compat.v1`` or ``ferroflow``. ``datasets(tf)`` gives datasets (read
to the end), ``tensors(tf)`` tensors (SparseTensors and RaggedTensors included)."""

import numpy as np


def datasets(tf):
    D = tf.data.Dataset  # noqa: N806 - TensorFlow's name
    exp = tf.data.experimental
    sparse = tf.SparseTensor(np.array([[0, 0], [1, 1], [2, 0], [3, 1]], np.int64), np.array([1, 2, 3, 4], np.int32),
                             np.array([4, 2], np.int64))
    ragged = tf.ragged.constant([[1, 2], [3], [4, 5, 6], [], [7]], dtype=tf.int64)

    def concat_state(s, x):
        return tf.concat([s, tf.reshape(x, [1])], 0)

    offset = tf.constant(100, tf.int64)
    return {
        "window_flat_map_batch": D.range(7).window(3, shift=2).flat_map(lambda w: w.batch(3)),
        "window_stride_drop": D.range(9).window(3, shift=1, stride=2, drop_remainder=True).flat_map(
            lambda w: w.batch(3)),
        "window_tuple_zip": D.from_tensor_slices((np.arange(5), np.arange(5) * 10)).window(2).flat_map(
            lambda a, b: D.zip((a.batch(2), b.batch(2)))),
        "window_dict": D.from_tensor_slices({"x": np.arange(5), "y": np.arange(5) % 2}).window(3).flat_map(
            lambda d: D.zip((d["x"].batch(3), d["y"].batch(3)))),
        "window_interleave": D.range(6).window(2).interleave(lambda w: w.batch(2), cycle_length=2),
        "window_reduce": D.range(7).window(3).map(lambda w: w.reduce(np.int64(0), lambda a, b: a + b)),
        "window_sparse": D.from_tensor_slices(sparse).window(2).flat_map(lambda w: w.batch(2)).map(
            lambda s: tf.sparse.to_dense(s)),
        "window_sparse_values": D.from_tensor_slices(sparse).window(3, shift=2).flat_map(lambda w: w.batch(3)),
        "window_ragged": D.from_tensor_slices(ragged).window(2).flat_map(lambda w: w.batch(2)),
        "window_ragged_drop": D.from_tensor_slices(ragged).window(2, drop_remainder=True).flat_map(
            lambda w: w.batch(2)),
        "reducer_sum": D.range(10).apply(exp.group_by_reducer(
            lambda x: x % 3, exp.Reducer(lambda k: np.int64(0), lambda s, x: s + x, lambda s: s))),
        "reducer_key_order": D.from_tensor_slices(np.array([5, 2, 8, 3, 0, 9, 7], np.int64)).apply(
            exp.group_by_reducer(lambda x: x % 3, exp.Reducer(
                lambda k: np.int64(0), lambda s, x: s * 10 + x, lambda s: s))),
        "reducer_tuple_state": D.range(10).apply(exp.group_by_reducer(
            lambda x: x % 2, exp.Reducer(lambda k: (np.int64(0), k), lambda s, x: (s[0] + x, s[1]),
                                         lambda total, key: (key, total * 2)))),
        "reducer_growing_state": D.range(7).apply(exp.group_by_reducer(
            lambda x: x % 2, exp.Reducer(lambda k: tf.zeros([0], tf.int64), concat_state,
                                         lambda s: tf.reduce_sum(s) + tf.size(s, out_type=tf.int64)))),
        "reducer_captures": D.range(6).apply(exp.group_by_reducer(
            lambda x: x // 3, exp.Reducer(lambda k: k + offset, lambda s, x: s + x, lambda s: s - offset))),
        "reducer_tuple_elements": D.from_tensor_slices((np.arange(6), np.arange(6) * 1.5)).apply(
            exp.group_by_reducer(lambda i, f: tf.cast(i % 2, tf.int64), exp.Reducer(
                lambda k: np.float64(0), lambda s, x: s + x[1], lambda s: s))),
        "reducer_empty": D.range(0).apply(exp.group_by_reducer(
            lambda x: x, exp.Reducer(lambda k: np.int64(0), lambda s, x: s + x, lambda s: s))),
    }


def tensors(tf):
    p = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    i = np.array([[0, 2], [1, 1]])
    rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    rt2 = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]], [], [[7], [], [8, 9]]])
    return {
        "gather_bd1": tf.gather(p, i, batch_dims=1),
        "gather_bd1_axis2": tf.gather(p, i, axis=2, batch_dims=1),
        "gather_bd_neg": tf.gather(p, np.array([[0, 3, 1], [2, 2, 0]]), batch_dims=-1, axis=2),
        "gather_bd2": tf.gather(p, np.array([[[0], [1], [3]], [[2], [2], [0]]]), batch_dims=2),
        "gather_bd1_vector": tf.gather(np.arange(6).reshape(2, 3), np.array([2, 0]), batch_dims=1),
        "map_fn_ragged_sum": tf.map_fn(tf.reduce_sum, rt, dtype=tf.int32),
        "map_fn_ragged_to_ragged": tf.map_fn(lambda r: r * 2, rt,
                                             fn_output_signature=tf.RaggedTensorSpec([None], tf.int32)),
        "map_fn_ragged_max": tf.map_fn(tf.reduce_max, rt, fn_output_signature=tf.int32),
        "map_fn_ragged2_sum": tf.map_fn(lambda r: tf.reduce_sum(r.flat_values), rt2, fn_output_signature=tf.int32),
        "map_fn_ragged2_rows": tf.map_fn(lambda r: r.row_lengths(), rt2,
                                         fn_output_signature=tf.RaggedTensorSpec([None], tf.int64)),
        "map_fn_dense_to_ragged": tf.map_fn(lambda n: tf.range(n), np.array([3, 0, 2], np.int32),
                                            fn_output_signature=tf.RaggedTensorSpec([None], tf.int32)),
        "map_fn_ragged_and_dense": tf.map_fn(lambda a: tf.reduce_sum(a[0]) * a[1], (rt, np.array([1, 10, 100],
                                                                                               np.int32)),
                                             fn_output_signature=tf.int32),
    }
