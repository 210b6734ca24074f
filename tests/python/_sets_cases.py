"""tf.sets calls shared by tools/make_sets_fixtures.py (TF 2.21, graph mode) and test_sets.py. ``tf`` is
``tensorflow.compat.v1`` or ``ferroflow``; each case gives a SparseTensor (or a set_size tensor)."""

import numpy as np

A = np.array([[1, 2, 3, 3], [4, 5, 6, 4]], np.int32)
B = np.array([[3, 1, 7], [6, 6, 9]], np.int32)
A3 = np.array([[[1, 2], [2, 3]], [[5, 5], [0, 9]]], np.int64)
B3 = np.array([[[2, 8], [3, 3]], [[1, 5], [9, 0]]], np.int64)


def _sparse(tf, indices, values, shape, dtype):
    return tf.SparseTensor(np.array(indices, np.int64), np.array(values, dtype), np.array(shape, np.int64))


def cases(tf):
    sp_b = _sparse(tf, [[0, 0], [0, 2], [1, 1], [1, 3]], [3, 8, 5, 4], [2, 5], np.int32)
    sp_a = _sparse(tf, [[0, 0], [0, 1], [1, 0]], [2, 1, 6], [2, 5], np.int32)
    sa = _sparse(tf, [[0, 0], [0, 1], [2, 0]], [b"pear", b"fig", b"kiwi"], [3, 4], object)
    sb = _sparse(tf, [[0, 0], [1, 1], [2, 0], [2, 2]], [b"fig", b"plum", b"apple", b"kiwi"], [3, 4], object)
    dup = _sparse(tf, [[0, 0], [0, 1], [0, 2], [2, 1]], [7, 7, 8, 9], [3, 4], np.int64)
    s3 = _sparse(tf, [[0, 0, 0], [0, 1, 1], [1, 1, 0], [1, 1, 1]], [4, 4, 2, 1], [2, 2, 3], np.int64)
    return {
        "dd_intersection": tf.sets.intersection(A, B),
        "dd_union": tf.sets.union(A, B),
        "dd_a_minus_b": tf.sets.difference(A, B),
        "dd_b_minus_a": tf.sets.difference(A, B, aminusb=False),
        "dd_rank3_union": tf.sets.union(A3, B3),
        "dd_rank3_intersection": tf.sets.set_intersection(A3, B3),
        "dd_disjoint": tf.sets.intersection(np.array([[1, 2]], np.int64), np.array([[3, 4]], np.int64)),
        "dd_uint8": tf.sets.union(A.astype(np.uint8), B.astype(np.uint8)),
        "dd_int8_diff": tf.sets.set_difference(A.astype(np.int8), B.astype(np.int8)),
        "dd_uint16": tf.sets.intersection(A.astype(np.uint16), B.astype(np.uint16)),
        "dd_strings": tf.sets.union(np.array([["b", "a"], ["c", "c"]]), np.array([["a", "d"], ["", "c"]])),
        "ds_intersection": tf.sets.intersection(A[:, :3], sp_b),
        "ds_union": tf.sets.set_union(A[:, :3], sp_b),
        "ds_difference": tf.sets.difference(A[:, :3], sp_b),
        "sd_intersection": tf.sets.intersection(sp_b, A[:, :3]),
        "sd_difference": tf.sets.difference(sp_b, A[:, :3]),
        "sd_difference_b": tf.sets.difference(sp_b, A[:, :3], aminusb=False),
        "ss_intersection": tf.sets.intersection(sp_a, sp_b),
        "ss_union": tf.sets.union(sp_a, sp_b),
        "ss_difference": tf.sets.difference(sp_b, sp_a),
        "ss_strings_union": tf.sets.union(sa, sb),
        "ss_strings_difference": tf.sets.difference(sa, sb, aminusb=False),
        "ss_rank3_union": tf.sets.union(s3, _sparse(tf, [[0, 0, 1], [1, 0, 0]], [3, 6], [2, 2, 3], np.int64)),
        "size": tf.sets.size(dup),
        "size_rank3": tf.sets.set_size(s3),
        "size_strings": tf.sets.size(sb),
    }


def run_errors(tf):
    """name -> a function building and running a call that fails at run time."""
    return {
        "group_mismatch": lambda: tf.sets.intersection(np.zeros([2, 3], np.int64), np.zeros([3, 3], np.int64)),
        "out_of_order": lambda: tf.sets.size(_sparse(tf, [[1, 0], [0, 0]], [1, 2], [2, 2], np.int64)),
        "out_of_bounds": lambda: tf.sets.size(_sparse(tf, [[0, 0], [0, 5]], [1, 2], [2, 2], np.int64)),
        "repeated": lambda: tf.sets.size(_sparse(tf, [[0, 1], [0, 1]], [1, 2], [2, 2], np.int64)),
        "sparse_rank1": lambda: tf.sets.size(_sparse(tf, [[0], [1]], [1, 2], [2], np.int64)),
    }
