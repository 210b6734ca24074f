"""Pipelines shared by tools/make_dataset_window_fixtures.py (TF 2.21, graph mode) and test_dataset_windows.py:
window, group_by_window, bucket_by_sequence_length, scan, reduce, take_while, unique, choose_from_datasets,
get_single_element and cardinality. ``tf`` is ``tensorflow.compat.v1`` or ``ferroflow``."""

import numpy as np


def _lengths(tf):
    """Sequences 1..11 long, each filled with its length (int64)."""
    return tf.data.Dataset.range(1, 12).map(lambda n: tf.fill(tf.reshape(n, [1]), n))


def pipelines(tf):
    """name -> a dataset to read to its end, or tensors to evaluate."""
    D = tf.data.Dataset
    batch_all = lambda w: w.batch(100)  # noqa: E731
    pairs = D.zip((D.range(6), D.range(6).map(lambda x: x * 10)))
    return {
        "window": D.range(7).window(3).flat_map(batch_all),
        "window_shift1": D.range(7).window(3, shift=1).flat_map(batch_all),
        "window_stride_drop": D.range(12).window(3, shift=2, stride=2, drop_remainder=True).flat_map(batch_all),
        "window_stride_keep": D.range(12).window(3, shift=2, stride=2).flat_map(batch_all),
        "window_shift_gt_size": D.range(10).window(2, shift=4).flat_map(batch_all),
        "window_tuple": pairs.window(4, 2).flat_map(lambda a, b: D.zip((a.batch(4), b.batch(4)))),
        "window_dict": D.from_tensor_slices({"x": [[1, 2], [3, 4], [5, 6]], "y": ["a", "b", "c"]}).window(2, 1)
        .flat_map(lambda d: D.zip((d["x"].batch(2), d["y"].batch(2)))),
        "window_reduce": D.range(8).window(3, 3).flat_map(
            lambda w: D.from_tensors(w.reduce(np.int64(0), lambda s, x: s + x))),
        "group_by_window": D.range(20).apply(tf.data.experimental.group_by_window(
            lambda x: x % 3, lambda k, w: w.batch(4), window_size=4)),
        "group_by_window_size_func": D.range(20).group_by_window(
            lambda x: x % 3, lambda k, w: w.map(lambda x: (k, x)).batch(10), window_size_func=lambda k: k + 2),
        "bucket": _lengths(tf).bucket_by_sequence_length(
            lambda x: tf.shape(x)[0], [3, 6], [2, 3, 2]),
        "bucket_drop_pad_value": _lengths(tf).apply(tf.data.experimental.bucket_by_sequence_length(
            lambda x: tf.shape(x)[0], [4, 8], [3, 3, 3], padding_values=np.int64(-1), drop_remainder=True)),
        "bucket_to_boundary": _lengths(tf).bucket_by_sequence_length(
            lambda x: tf.shape(x)[0], [4, 8, 13], [2, 2, 2, 2], pad_to_bucket_boundary=True),
        "bucket_padded_shapes": _lengths(tf).bucket_by_sequence_length(
            lambda x: tf.shape(x)[0], [5], [4, 4], padded_shapes=[12]),
        "bucket_no_padding": D.range(10).map(lambda x: (x, tf.fill([2], x))).bucket_by_sequence_length(
            lambda x, y: tf.cast(x, tf.int32), [3, 7], [2, 2, 3], no_padding=True),
        "scan": D.range(6).scan(np.int64(0), lambda s, x: (s + x, s * 2)),
        "scan_tuple_state": D.range(7).apply(tf.data.experimental.scan(
            (np.int64(0), np.int64(1)), lambda s, x: ((s[1], s[0] + s[1]), (s[0], x)))),
        "scan_growing_state": D.range(4).scan(
            tf.constant([], tf.int64), lambda s, x: (tf.concat([s, [x]], 0), tf.reduce_sum(s))),
        "take_while": D.range(10).concatenate(D.range(3)).take_while(lambda x: x < 4),
        "take_while_none": D.range(5).apply(tf.data.experimental.take_while(lambda x: x > 10)),
        "unique_int": D.from_tensor_slices(np.array([1, 3, 1, 2, 3, 5, 2], np.int32)).unique(),
        "unique_str": D.from_tensor_slices(["b", "a", "b", "c", "a"]).apply(tf.data.experimental.unique()),
        "choose": tf.data.experimental.choose_from_datasets(
            [D.from_tensors("a").repeat(), D.from_tensors("b").repeat(), D.from_tensors("c").repeat()],
            D.range(3).repeat(3)),
        "choose_stop": D.choose_from_datasets([D.range(2), D.range(10, 13)], D.from_tensor_slices(
            np.array([0, 1, 0, 0, 1, 1], np.int64))),
        "choose_skip": D.choose_from_datasets([D.range(2), D.range(10, 13)], D.from_tensor_slices(
            np.array([0, 1, 0, 0, 1, 1, 1], np.int64)), stop_on_empty_dataset=False),
        "choose_experimental_default": tf.data.experimental.choose_from_datasets(
            [D.range(2), D.range(10, 13)], D.from_tensor_slices(np.array([0, 1, 0, 0, 1, 1, 1], np.int64))),
        "reduce_sum": D.range(10).reduce(np.int64(0), lambda s, x: s + x),
        "reduce_tuple": D.range(1, 6).reduce((np.int64(0), np.int64(1)), lambda s, x: (s[0] + x, s[1] * x)),
        "reduce_empty": D.range(0).reduce(np.int64(7), lambda s, x: s + x),
        "single": D.from_tensors((np.int64(3), "x")).get_single_element(),
        "single_experimental": tf.data.experimental.get_single_element(D.range(5).skip(4)),
    }


def cardinalities(tf):
    """name -> a dataset whose cardinality() is recorded."""
    D = tf.data.Dataset
    r = D.range(10)
    return {
        "range": r,
        "range_step": D.range(3, 20, 4),
        "range_neg": D.range(10, 0, -3),
        "range_empty": D.range(5, 2),
        "slices": D.from_tensor_slices(np.zeros([7, 2])),
        "tensors": D.from_tensors([1, 2]),
        "map": r.map(lambda x: x + 1),
        "map_parallel": r.map(lambda x: x + 1, num_parallel_calls=2),
        "filter": r.filter(lambda x: x > 3),
        "repeat_inf": r.repeat(),
        "repeat_3": r.repeat(3),
        "repeat_0": r.repeat(0),
        "repeat_empty_inf": D.range(0).repeat(),
        "repeat_filter_3": r.filter(lambda x: x > 3).repeat(3),
        "repeat_filter_inf": r.filter(lambda x: x > 3).repeat(),
        "take_inf": r.repeat().take(5),
        "take_more": r.take(50),
        "take_all": r.take(-1),
        "take_filter": r.filter(lambda x: x > 3).take(5),
        "skip": r.skip(3),
        "skip_more": r.skip(30),
        "skip_all": r.skip(-1),
        "skip_inf": r.repeat().skip(3),
        "batch": r.batch(3),
        "batch_drop": r.batch(3, drop_remainder=True),
        "batch_inf": r.repeat().batch(3),
        "padded_batch": r.map(lambda x: tf.fill([2], x)).padded_batch(4),
        "unbatch": r.batch(3).unbatch(),
        "zip": D.zip((r, D.range(4))),
        "zip_inf": D.zip((r.repeat(), D.range(4))),
        "zip_unknown": D.zip((r.filter(lambda x: x > 1), r)),
        "concatenate": r.concatenate(D.range(5)),
        "concatenate_inf": r.concatenate(D.range(5).repeat()),
        "shard": r.shard(3, 1),
        "shard_last": r.shard(3, 2),
        "shuffle": r.shuffle(4),
        "prefetch": r.prefetch(2),
        "cache": r.cache(),
        "flat_map": r.flat_map(lambda x: D.range(x)),
        "window": r.window(3),
        "window_drop": r.window(3, 2, 2, drop_remainder=True),
        "window_shift": r.window(4, shift=3),
        "scan": r.scan(np.int64(0), lambda s, x: (s + x, s)),
        "take_while": r.take_while(lambda x: x < 3),
        "unique": r.unique(),
        "group_by_window": r.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), window_size=2),
        "enumerate": r.enumerate(),
    }
