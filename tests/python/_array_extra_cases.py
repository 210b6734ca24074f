"""Cases of the remaining array ops (issue 23), each written against a TF1-style module ``tf`` (``ferroflow``
or TensorFlow's ``tf.compat.v1``), so the same code makes the fixtures under TensorFlow
(tools/make_array_extra_fixtures.py) and is checked under ferroflow (test_array_extra.py).

A value case returns ``{name: tensor}``; ``run_value_case`` fetches them all (lists of tensors and namedtuples
flattened as ``name/0``, ...) and records each tensor's static shape. Gradients are fetched like values:
``tf.gradients(sum(out * U), x)`` for a fixed upstream ``U``. An error case builds and runs a graph that must
fail; ``run_error_case`` records where (``build`` or ``run``), the error class and TensorFlow's message text.
Inputs that must hide their static shape go through ``placeholder_with_default`` with unknown dims.
Imports nothing but numpy: the module under test is passed in.
"""

import numpy as np

R = np.random.RandomState(2323)


def _f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


X23 = _f32(2, 3)
X234 = _f32(2, 3, 4)
X_TIES = np.array([3.0, 1.0, 2.0, 1.0, 3.0, -0.0, 0.0, 2.0], np.float32)
X_SB = _f32(2, 4, 6, 3)
X_SB3 = _f32(3, 5, 2)
X_BS = _f32(8, 2, 3, 2)
X_VOL = _f32(2, 4, 5, 3, 2)
X_SEQ = _f32(3, 5, 2)
HIST = np.array([-1.0, 0.0, 0.5, 1.2, 2.5, 4.9, 5.0, 7.0, 2.0, 3.3], np.float32)


def _upstream(shape):
    rs = np.random.RandomState(abs(hash(tuple(shape))) % (2 ** 31))
    return rs.standard_normal(shape).astype(np.float32)


def _grad(tf, y, x, shape):
    return tf.gradients(tf.reduce_sum(y * tf.constant(_upstream(shape))), x)[0]


def _hide(tf, value, dtype=None):
    """``value`` as a tensor whose static dims are all unknown."""
    v = np.asarray(value) if dtype is None else np.asarray(value, dtype)
    return tf.placeholder_with_default(v, [None] * v.ndim)


# --- values and gradients -----------------------------------------------------------------------------------


def unique_with_counts(tf):
    a = tf.unique_with_counts(tf.constant(np.array([4, 1, 4, 4, 2, 1], np.int32)))
    b = tf.unique_with_counts(tf.constant(np.array([0.5, -0.0, 0.0, 0.5], np.float32)), out_idx=tf.int64)
    c = tf.unique_with_counts(tf.constant(np.array([b"x", b"y", b"x"])))
    d = tf.unique_with_counts(_hide(tf, np.array([7, 7, 8], np.int64)))
    return {"ints": a, "floats": b, "strings": c, "hidden": d}


def setdiff1d(tf):
    a = tf.setdiff1d(tf.constant(np.array([1, 2, 3, 4, 2, 6], np.int32)), tf.constant(np.array([2, 4], np.int32)))
    b = tf.setdiff1d(tf.constant(np.array([5, 1, 5], np.int64)), tf.constant(np.array([9], np.int64)),
                     index_dtype=tf.int64)
    c = tf.setdiff1d(tf.constant(np.array([b"a", b"b", b"c"])), tf.constant(np.array([b"b"])))
    return {"ints": a, "int64": b, "strings": c}


def searchsorted(tf):
    seq = tf.constant(np.array([[0.0, 1.0, 1.0, 3.0], [-2.0, 0.0, 5.0, 6.0]], np.float32))
    vals = tf.constant(np.array([[1.0, -1.0, 3.5], [5.0, 0.0, 9.0]], np.float32))
    one = tf.constant(np.array([1, 3, 3, 7, 9], np.int32))
    return {
        "left": tf.searchsorted(seq, vals),
        "right": tf.searchsorted(seq, vals, side="right"),
        "int64": tf.searchsorted(seq, vals, out_type=tf.int64),
        "vector": tf.searchsorted(one, tf.constant(np.array([0, 3, 8, 10], np.int32)), side="right"),
        "hidden": tf.searchsorted(_hide(tf, [[1.0, 2.0, 4.0]], np.float64), _hide(tf, [[2.0, 3.0]], np.float64)),
    }


def sort_argsort(tf):
    ties = tf.constant(X_TIES)
    x = tf.constant(X234)
    ints = tf.constant(np.array([[3, -2147483648, 2147483647, 0, 3]], np.int32))
    u8 = tf.constant(np.array([200, 3, 255, 0, 3], np.uint8))
    s0 = tf.sort(x, axis=0)
    s1 = tf.sort(x, axis=1, direction="DESCENDING")
    return {
        "sort_ties": tf.sort(ties),
        "argsort_ties": tf.argsort(ties),
        "argsort_ties_desc": tf.argsort(ties, direction="DESCENDING", stable=True),
        "sort_axis0": s0,
        "sort_axis1_desc": s1,
        "argsort_axis1": tf.argsort(x, axis=1),
        "argsort_axis_neg": tf.argsort(x, axis=-3),
        "sort_ints": tf.sort(ints),
        "argsort_ints": tf.argsort(ints),
        "sort_u8": tf.sort(u8),
        "sort_u8_desc": tf.sort(u8, direction="DESCENDING"),
        "grad_sort_axis0": _grad(tf, s0, x, (2, 3, 4)),
        "grad_sort_axis1_desc": _grad(tf, s1, x, (2, 3, 4)),
        "hidden_sort": tf.sort(_hide(tf, X23), axis=0),
    }


def roll(tf):
    x = tf.constant(X234)
    a = tf.roll(x, shift=[1, -2], axis=[0, 2])
    b = tf.roll(x, shift=[2, 1], axis=[1, 1])
    c = tf.roll(tf.constant(np.arange(5, dtype=np.int64)), 7, 0)
    d = tf.roll(_hide(tf, X23), tf.constant(np.array([-1], np.int64)), tf.constant(np.array([-1], np.int64)))
    e = tf.roll(tf.constant(np.array([b"a", b"b", b"c"])), -1, 0)
    return {"multi": a, "repeated_axis": b, "scalar": c, "hidden": d, "strings": e,
            "grad_multi": _grad(tf, a, x, (2, 3, 4)), "grad_repeated": _grad(tf, b, x, (2, 3, 4))}


def repeat(tf):
    x = tf.constant(X23)
    a = tf.repeat(x, 2, axis=1)
    b = tf.repeat(x, [1, 3], axis=0)
    c = tf.repeat(x, [2, 0, 1], axis=1)
    d = tf.repeat(x, 2)
    e = tf.repeat(tf.constant(np.array([b"p", b"q"])), [2, 1])
    return {"scalar_axis1": a, "vector_axis0": b, "vector_axis1": c, "flat": d, "strings": e,
            "grad_scalar": _grad(tf, a, x, (2, 6)), "grad_vector0": _grad(tf, b, x, (4, 3)),
            "grad_vector1": _grad(tf, c, x, (2, 3)), "grad_flat": _grad(tf, d, x, (12,)),
            "hidden": tf.repeat(_hide(tf, X23), [2, 1], axis=0)}


def reverse_sequence(tf):
    x = tf.constant(X_SEQ)
    a = tf.reverse_sequence(x, tf.constant(np.array([2, 5, 0], np.int64)), seq_axis=1, batch_axis=0)
    b = tf.reverse_sequence(x, tf.constant(np.array([3, 1], np.int32)), seq_axis=0, batch_axis=2)
    c = tf.reverse_sequence(x, [1, 4, 5], seq_dim=1, batch_dim=0)
    return {"seq1_batch0": a, "seq0_batch2": b, "deprecated_names": c,
            "grad_a": _grad(tf, a, x, (3, 5, 2)), "grad_b": _grad(tf, b, x, (3, 5, 2)),
            "hidden": tf.reverse_sequence(_hide(tf, X_SEQ), [2, 2, 2], 1)}


def meshgrid(tf):
    x = tf.constant(np.array([1.0, 2.0, 3.0], np.float32))
    y = tf.constant(np.array([-1.0, 4.0], np.float32))
    z = tf.constant(np.array([0.5, 0.25, 7.0, 8.0], np.float32))
    xy = tf.meshgrid(x, y)
    ij = tf.meshgrid(x, y, z, indexing="ij")
    xyz = tf.meshgrid(x, y, z)
    return {"xy": xy, "ij": ij, "xyz": xyz, "ints": tf.meshgrid([1, 2], [3, 4, 5])}


def histograms(tf):
    v = tf.constant(HIST)
    return {
        "hist": tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5),
        "hist_int64": tf.histogram_fixed_width(v, [-1.0, 3.0], nbins=3, dtype=tf.int64),
        "hist_ints": tf.histogram_fixed_width(tf.constant(np.array([1, 5, 9, 10, -3], np.int32)), [0, 10], nbins=4),
        "hist_double": tf.histogram_fixed_width(tf.constant(HIST.astype(np.float64).reshape(2, 5)), [0.1, 4.0]),
        "bins": tf.histogram_fixed_width_bins(tf.constant(HIST.reshape(2, 5)), [0.0, 5.0], nbins=5),
        "hist_hidden_nbins": tf.histogram_fixed_width(v, [0.0, 5.0], nbins=tf.placeholder_with_default(4, [])),
    }


def unravel_index(tf):
    return {
        "vector": tf.unravel_index(tf.constant(np.array([0, 5, 7, 23], np.int32)), [2, 3, 4]),
        "scalar": tf.unravel_index(tf.constant(np.int64(17)), tf.constant(np.array([3, 6], np.int64))),
        "hidden": tf.unravel_index(_hide(tf, np.array([1, 2], np.int32)), [3, 1]),
    }


def space_batch(tf):
    x = tf.constant(X_SB)
    xb = tf.constant(X_BS)
    a = tf.space_to_batch_nd(x, [2, 3], [[1, 1], [0, 3]])
    b = tf.batch_to_space_nd(xb, [2, 2], [[1, 0], [0, 2]])
    x3 = tf.constant(X_SB3)
    c = tf.space_to_batch_nd(x3, [2], [[1, 0]])
    d = tf.space_to_batch(x, [[0, 0], [2, 0]], block_size=2)
    e = tf.batch_to_space(xb, [[0, 1], [1, 1]], 2)
    f = tf.nn.space_to_batch(x, [[0, 0], [0, 0]], 2)
    h = tf.space_to_batch_nd(_hide(tf, X_SB), [2, 2], _hide(tf, np.array([[0, 0], [1, 1]], np.int32)))
    return {"s2b": a, "b2s": b, "s2b_1d": c, "s2b_v1": d, "b2s_v1": e, "nn_s2b": f, "hidden": h,
            "grad_s2b": _grad(tf, a, x, (12, 3, 3, 3)), "grad_b2s": _grad(tf, b, xb, (2, 3, 4, 2)),
            "grad_s2b_1d": _grad(tf, c, x3, (6, 3, 2)), "grad_s2b_v1": _grad(tf, d, x, (8, 2, 4, 3)),
            "grad_b2s_v1": _grad(tf, e, xb, (2, 3, 4, 2))}


def required_paddings(tf):
    p, c = tf.required_space_to_batch_paddings([5, 4], [2, 3], [[1, 0], [0, 1]])
    p2, c2 = tf.required_space_to_batch_paddings(tf.placeholder_with_default(np.array([7, 2], np.int32), [2]),
                                                 [4, 2])
    return {"paddings": p, "crops": c, "paddings_dynamic": p2, "crops_dynamic": c2}


def space_depth(tf):
    x = tf.constant(X_SB)
    return {"s2d": tf.space_to_depth(x, 2), "d2s": tf.depth_to_space(tf.constant(_f32(1, 2, 3, 8)), 2)}


def volume_patches(tf):
    x = tf.constant(X_VOL)
    a = tf.extract_volume_patches(x, [1, 2, 3, 2, 1], [1, 2, 2, 1, 1], "SAME")
    b = tf.extract_volume_patches(x, [1, 3, 2, 2, 1], [1, 1, 2, 2, 1], "VALID")
    return {"same": a, "valid": b, "grad_same": _grad(tf, a, x, (2, 2, 3, 3, 24)),
            "grad_valid": _grad(tf, b, x, (2, 2, 2, 1, 24))}


def edit_distance(tf):
    hyp = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 1, 2]],
                          ["a", "b", "c", "k", "i", "t"], [2, 2, 3])
    truth = tf.SparseTensor([[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1], [1, 1, 2],
                             [1, 1, 3]], ["a", "x", "c", "d", "s", "i", "t", "e"], [2, 2, 4])
    ih = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant(np.array([1, 2, 3], np.int64)), [3, 2])
    it = tf.SparseTensor([[0, 0], [1, 0]], tf.constant(np.array([1, 5], np.int64)), [2, 1])
    return {"normalized": tf.edit_distance(hyp, truth), "raw": tf.edit_distance(hyp, truth, normalize=False),
            "ints": tf.edit_distance(ih, it), "ints_raw": tf.edit_distance(ih, it, normalize=False)}


def identity_n_ensure(tf):
    x = tf.constant(X23)
    y = tf.constant(np.array([1, 2], np.int64))
    a, b = tf.identity_n([x * 2.0, y])
    e = tf.ensure_shape(_hide(tf, X23), [None, 3])
    e2 = tf.ensure_shape(x, (2, 3))
    return {"identity_n_0": a, "identity_n_1": b, "grad_identity_n": _grad(tf, a, x, (2, 3)),
            "ensure": e, "ensure_static": e2, "grad_ensure": _grad(tf, e2 * 3.0, x, (2, 3))}


def broadcast_shapes(tf):
    return {
        "dynamic": tf.broadcast_dynamic_shape([2, 1, 3], [4, 1]),
        "dynamic_int64": tf.broadcast_dynamic_shape(tf.constant(np.array([5, 1], np.int64)),
                                                    tf.constant(np.array([1, 1, 7], np.int64))),
        "dynamic_hidden": tf.broadcast_dynamic_shape(_hide(tf, np.array([3, 1], np.int32)), [1, 6]),
    }


VALUE_CASES = [unique_with_counts, setdiff1d, searchsorted, sort_argsort, roll, repeat, reverse_sequence, meshgrid,
               histograms, unravel_index, space_batch, required_paddings, space_depth, volume_patches, edit_distance,
               identity_n_ensure, broadcast_shapes]

# ``broadcast_static_shape`` pairs (Python-only; unknown dims as None, unknown rank as "?").
STATIC_SHAPE_PAIRS = [([2, 1, 3], [4, 1]), ([None, 3], [2, 1, 1]), ([None, 1], [5, None]), ([1, None], [None]),
                      ([], [3]), ("?", [2])]


# --- errors -------------------------------------------------------------------------------------------------


def _s2b_not_divisible(tf):
    return tf.space_to_batch_nd(_hide(tf, np.zeros((1, 5, 4, 1), np.float32)), [2, 2], [[0, 0], [0, 0]])


ERROR_CASES = {
    "s2b_not_divisible_static": lambda tf: tf.space_to_batch_nd(np.zeros((1, 5, 4, 1), np.float32), [2, 2],
                                                               [[0, 0], [0, 0]]),
    "s2b_not_divisible": _s2b_not_divisible,
    "s2b_unknown_block_size": lambda tf: tf.space_to_batch_nd(_hide(tf, np.zeros((1, 4, 4, 1), np.float32)),
                                                             _hide(tf, np.array([2, 2], np.int32)), [[0, 0], [0, 0]]),
    "s2b_negative_paddings": lambda tf: tf.space_to_batch_nd(_hide(tf, np.zeros((1, 4, 4, 1), np.float32)), [2, 2],
                                                            _hide(tf, np.array([[-1, 1], [0, 0]], np.int32))),
    "s2b_paddings_shape": lambda tf: tf.space_to_batch_nd(_hide(tf, np.zeros((1, 4, 4, 1), np.float32)), [2, 2],
                                                         _hide(tf, np.array([[0, 0, 0]], np.int32))),
    "b2s_not_divisible": lambda tf: tf.batch_to_space_nd(_hide(tf, np.zeros((3, 2, 2, 1), np.float32)), [2, 2],
                                                        [[0, 0], [0, 0]]),
    "b2s_not_divisible_static": lambda tf: tf.batch_to_space_nd(np.zeros((3, 2, 2, 1), np.float32), [2, 2],
                                                               [[0, 0], [0, 0]]),
    "b2s_crops_too_big": lambda tf: tf.batch_to_space_nd(_hide(tf, np.zeros((4, 2, 2, 1), np.float32)), [2, 2],
                                                        _hide(tf, np.array([[3, 2], [0, 0]], np.int32))),
    "b2s_crops_too_big_static": lambda tf: tf.batch_to_space_nd(np.zeros((4, 2, 2, 1), np.float32), [2, 2],
                                                               [[3, 2], [0, 0]]),
    "rs_length_too_long": lambda tf: tf.reverse_sequence(_hide(tf, np.zeros((2, 3), np.float32)),
                                                        _hide(tf, np.array([4, 1], np.int64)), 1, 0),
    "rs_negative_length": lambda tf: tf.reverse_sequence(_hide(tf, np.zeros((2, 3), np.float32)),
                                                        _hide(tf, np.array([-1, 1], np.int64)), 1, 0),
    "rs_lengths_count": lambda tf: tf.reverse_sequence(_hide(tf, np.zeros((2, 3), np.float32)),
                                                      _hide(tf, np.array([1, 1, 1], np.int64)), 1, 0),
    "rs_lengths_count_static": lambda tf: tf.reverse_sequence(np.zeros((2, 3), np.float32),
                                                             np.array([1, 1, 1], np.int64), 1, 0),
    "rs_same_axes": lambda tf: tf.reverse_sequence(np.zeros((2, 3), np.float32), np.array([1, 1], np.int64), 0, 0),
    "rs_seq_axis_out_of_range": lambda tf: tf.reverse_sequence(np.zeros((2, 3), np.float32),
                                                              np.array([1, 1], np.int64), 2, 0),
    "roll_sizes_static": lambda tf: tf.roll(np.zeros((2, 3), np.float32), [1, 2], [0]),
    "roll_sizes": lambda tf: tf.roll(_hide(tf, np.zeros((2, 3), np.float32)), _hide(tf, np.array([1, 2], np.int32)),
                                     _hide(tf, np.array([0], np.int32))),
    "roll_axis_out_of_range": lambda tf: tf.roll(np.zeros((2, 3), np.float32), 1, 2),
    "roll_scalar_input": lambda tf: tf.roll(np.float32(1.0), 1, 0),
    "hist_nbins_zero": lambda tf: tf.histogram_fixed_width(_hide(tf, np.zeros(3, np.float32)), [0.0, 1.0],
                                                           nbins=tf.placeholder_with_default(0, [])),
    "hist_bad_range": lambda tf: tf.histogram_fixed_width(_hide(tf, np.zeros(3, np.float32)), [1.0, 0.0], nbins=5),
    "hist_range_shape": lambda tf: tf.histogram_fixed_width(_hide(tf, np.zeros(3, np.float32)),
                                                            _hide(tf, np.array([0.0, 1.0, 2.0], np.float32)),
                                                            nbins=5),
    "unravel_out_of_bounds": lambda tf: tf.unravel_index(_hide(tf, np.array([7], np.int32)), [2, 3]),
    "unravel_matrix": lambda tf: tf.unravel_index(_hide(tf, np.array([[1, 2], [3, 4]], np.int32)), [2, 3]),
    "unravel_negative_dims": lambda tf: tf.unravel_index(_hide(tf, np.array([1], np.int32)),
                                                         _hide(tf, np.array([-2, 3], np.int32))),
    "searchsorted_rows": lambda tf: tf.searchsorted(_hide(tf, np.array([[1.0, 2.0], [1.0, 2.0]], np.float32)),
                                                    _hide(tf, np.array([[0.5], [1.0], [1.0]], np.float32))),
    "searchsorted_side": lambda tf: tf.searchsorted([1.0, 2.0], [1.0], side="middle"),
    "ensure_shape_run": lambda tf: tf.ensure_shape(_hide(tf, np.zeros((2, 3), np.float32)), [2, 4]),
    "ensure_shape_rank": lambda tf: tf.ensure_shape(tf.placeholder_with_default(np.zeros((2, 3), np.float32), None),
                                                    [2, 3, 1]),
    "ensure_shape_static": lambda tf: tf.ensure_shape(np.zeros((2, 3), np.float32), [2, 4]),
    "broadcast_dynamic_incompatible": lambda tf: tf.broadcast_dynamic_shape(_hide(tf, np.array([2, 3], np.int32)),
                                                                            [4, 1]),
    "unique_with_counts_matrix": lambda tf: tf.unique_with_counts(_hide(tf, np.zeros((2, 2), np.int32))),
    "setdiff1d_matrix": lambda tf: tf.setdiff1d(np.zeros((2, 2), np.int32), np.array([2], np.int32)),
    "volume_patches_ksizes_batch": lambda tf: tf.extract_volume_patches(np.zeros((1, 4, 4, 4, 1), np.float32),
                                                                        [2, 2, 2, 2, 1], [1, 1, 1, 1, 1], "SAME"),
    "volume_patches_rank": lambda tf: tf.extract_volume_patches(np.zeros((2, 5, 6, 3), np.float32),
                                                                [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "SAME"),
    "volume_patches_ksizes_length": lambda tf: tf.extract_volume_patches(np.zeros((1, 4, 4, 4, 1), np.float32),
                                                                         [1, 2, 2, 1], [1, 1, 1, 1, 1], "SAME"),
    "edit_distance_dense": lambda tf: tf.edit_distance(tf.constant([1, 2]), tf.SparseTensor([[0, 0]], [1], [2, 3])),
    "edit_distance_ranks": lambda tf: tf.edit_distance(tf.SparseTensor([[0, 0]], ["a"], [2, 2]),
                                                       tf.SparseTensor([[0, 0, 0]], ["a"], [2, 3, 1])),
    "edit_distance_types": lambda tf: tf.edit_distance(tf.SparseTensor([[0, 0]], ["a"], [2, 2]),
                                                       tf.SparseTensor([[0, 0]], [1], [2, 3])),
    "edit_distance_out_of_bounds": lambda tf: tf.edit_distance(
        tf.SparseTensor(_hide(tf, np.array([[0, 0], [5, 0]], np.int64)), ["a", "b"], [2, 2]),
        tf.SparseTensor([[0, 0]], ["a"], [2, 3])),
    "sort_axis_not_constant": lambda tf: tf.sort(np.zeros((2, 3), np.float32), axis=tf.placeholder_with_default(0, [])),
    "sort_direction": lambda tf: tf.sort(np.zeros((2, 3), np.float32), direction="UP"),
    "argsort_strings": lambda tf: tf.argsort(tf.constant(["a", "b"])),
    "repeat_counts": lambda tf: tf.repeat(np.zeros((2, 3), np.float32), [1, 2, 3], axis=0),
    "meshgrid_dtypes": lambda tf: tf.meshgrid(np.arange(3), np.arange(2.0)),
    "meshgrid_indexing": lambda tf: tf.meshgrid([1, 2], indexing="xx"),
}


# --- runners ------------------------------------------------------------------------------------------------


def _flatten(name, value, out):
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten(f"{name}/{i}", v, out)
    else:
        out[name] = value


def run_value_case(tf, case):
    """Builds ``case`` in a fresh graph and runs it: ``({name: ndarray}, {name: static shape or None})``."""
    g = tf.Graph()
    with g.as_default():
        flat = {}
        for k, v in case(tf).items():
            _flatten(k, v, flat)
        shapes = {k: (None if t.shape.ndims is None else [d for d in t.shape.as_list()]) for k, t in flat.items()}
        with tf.Session() as s:
            vals = s.run(flat)
    return {k: np.asarray(v) for k, v in vals.items()}, shapes


def core_message(message):
    """The error's own text: TensorFlow's runtime messages carry graph context around it."""
    if "Node:" in message:
        lines = [ln for ln in message.split("Node:")[-1].split("\n")[1:] if ln.strip()]
        if lines:
            message = lines[0]
    for cut in (" for '{{node", " for '"):
        if cut in message:
            message = message.split(cut)[0]
    return message.strip()


def run_error_case(tf, case):
    """``{"phase": "build" | "run" | "none", "class": error class name, "message": its core text}``."""
    g = tf.Graph()
    with g.as_default():
        try:
            out = case(tf)
        except Exception as e:  # noqa: BLE001 - the class is the point
            return {"phase": "build", "class": type(e).__name__, "message": core_message(str(e))}
        with tf.Session() as s:
            try:
                s.run(out)
            except Exception as e:  # noqa: BLE001
                return {"phase": "run", "class": type(e).__name__,
                        "message": core_message(getattr(e, "message", str(e)))}
    return {"phase": "none", "class": "", "message": ""}
