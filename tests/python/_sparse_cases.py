"""Sparse-tensor cases, each written against a TF1-style module ``tf`` (``ferroflow`` or TensorFlow's
``tf.compat.v1``), so the same code makes the golden fixtures under TensorFlow
(tests/fixtures/sparse/make_sparse.py) and is checked under ferroflow (test_sparse_golden.py).

A case returns ``(fetches, feed_dict)``: ``fetches`` maps a name to a tensor, SparseTensor or gradient.
``run_case`` flattens the results into ``{name: ndarray}`` (a SparseTensorValue as ``name/indices``,
``name/values``, ``name/dense_shape``; an IndexedSlices gradient densified, with ``name/kind`` saying it
was sparse), or ``{"error": class name, "message": text}`` for a case that must fail when run.
Imports nothing but numpy: the module under test is passed in.
"""

import numpy as np

R = np.random.RandomState(1234)


def _f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


# Fixed inputs, made once (the fixture script and the test import the same values).
SP_IND = np.array([[0, 0], [0, 2], [1, 1], [2, 0], [2, 3]], np.int64)
SP_VAL = np.array([1.5, -2.0, 3.0, 0.5, -1.0], np.float32)
SP_SHAPE = np.array([4, 5], np.int64)
DENSE_B = _f32(5, 3)
DENSE_BT = _f32(3, 5)
DENSE_AT = _f32(4, 3)
UPSTREAM_43 = _f32(4, 3)
UPSTREAM_45 = _f32(4, 5)
PARAMS = _f32(6, 4)
SEG_DATA = _f32(5, 3)
WEIGHTS = np.array([0.5, 2.0, 1.0, 1.5, 0.25], np.float32)
IND3 = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 2], [1, 2, 2], [2, 1, 1]], np.int64)
VAL3 = np.array([1.0, -3.0, 2.0, 4.0, -0.5], np.float32)
SHAPE3 = np.array([3, 3, 4], np.int64)


def _sp(tf, ind=SP_IND, val=SP_VAL, shape=SP_SHAPE):
    return tf.SparseTensor(tf.constant(ind), tf.constant(val), tf.constant(shape))


def _var_sp(tf, ind=SP_IND, val=SP_VAL, shape=SP_SHAPE):
    """A SparseTensor whose values are a variable-free differentiable tensor (values * 1)."""
    v = tf.constant(val)
    return tf.SparseTensor(tf.constant(ind), v * 1.0, tf.constant(shape)), v


# --- conversion ---------------------------------------------------------------------------------------------


def to_dense(tf):
    v = tf.constant(np.array([1.0, 2.0, 3.0], np.float32))
    d = tf.constant(np.float32(-1.0))
    out = tf.sparse_to_dense(tf.constant(np.array([[0, 1], [1, 0], [2, 2]], np.int64)), [3, 4], v, d)
    loss = tf.reduce_sum(out * tf.constant(_f32_fixed(3, 4)))
    gv, gd = tf.gradients(loss, [v, d])
    vec = tf.sparse_to_dense(tf.constant(np.array([0, 3], np.int32)), tf.constant(np.array([5], np.int32)), 7.0)
    st = tf.sparse.to_dense(_sp(tf))
    strs = tf.sparse.to_dense(tf.SparseTensor([[0, 1], [2, 0]], tf.constant(["a", "bc"]), [3, 2]))
    return {"out": out, "grad_values": gv, "grad_default": gd, "vector": vec, "st": st, "strings": strs}, None


_FIXED = {}


def _f32_fixed(*shape):
    """A fixed random array per shape (deterministic whatever order the cases run in)."""
    if shape not in _FIXED:
        _FIXED[shape] = np.random.RandomState(sum(shape) * 7 + len(shape)).standard_normal(shape).astype(np.float32)
    return _FIXED[shape]


def to_dense_unordered(tf):
    return {"out": tf.sparse_to_dense(tf.constant(np.array([[1, 0], [0, 1]], np.int64)), [2, 2], [1.0, 2.0])}, None


def to_dense_repeated(tf):
    return {"out": tf.sparse_to_dense(tf.constant(np.array([[0, 1], [0, 1]], np.int64)), [2, 2], [1.0, 2.0])}, None


def to_dense_out_of_bounds(tf):
    return {"out": tf.sparse_to_dense(tf.constant(np.array([[0, 1], [2, 1]], np.int64)), [2, 2], [1.0, 2.0])}, None


def to_dense_unvalidated(tf):
    out = tf.sparse_to_dense(tf.constant(np.array([[1, 0], [0, 1]], np.int64)), [2, 2], [1.0, 2.0],
                             validate_indices=False)
    return {"out": out}, None


def from_dense(tf):
    x = tf.constant(np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]], np.float32))
    s = tf.sparse.from_dense(x)
    strs = tf.sparse.from_dense(tf.constant([["", "x"], ["y", ""]]))
    return {"sp": s, "strings": strs}, None


# --- matmul -------------------------------------------------------------------------------------------------


def _matmul(tf, adj_a, adj_b):
    sp, v = _var_sp(tf)
    b = tf.constant(DENSE_BT if adj_b else DENSE_B)
    if adj_a:
        sp, v = _var_sp(tf, SP_IND[:, ::-1].copy(), SP_VAL, SP_SHAPE[::-1].copy())
        sp = tf.sparse.reorder(sp)
    out = tf.sparse.sparse_dense_matmul(sp, b, adjoint_a=adj_a, adjoint_b=adj_b)
    loss = tf.reduce_sum(out * tf.constant(UPSTREAM_43))
    gv, gb = tf.gradients(loss, [v, b])
    return {"out": out, "grad_values": gv, "grad_b": gb}, None


def matmul(tf):
    return _matmul(tf, False, False)


def matmul_adjoint_a(tf):
    return _matmul(tf, True, False)


def matmul_adjoint_b(tf):
    return _matmul(tf, False, True)


def matmul_adjoint_both(tf):
    return _matmul(tf, True, True)


def matmul_dense_sparse(tf):
    # A dense matrix times a sparse one (the sparse tensor second).
    a = tf.constant(DENSE_AT.T.copy())
    sp = _sp(tf)
    return {"out": tf.sparse.sparse_dense_matmul(a, sp)}, None


def matmul_inner_mismatch(tf):
    return {"out": tf.sparse.sparse_dense_matmul(_sp(tf), tf.placeholder_with_default(DENSE_BT, None))}, None


# --- structure ----------------------------------------------------------------------------------------------


def reorder(tf):
    ind = np.array([[2, 1], [0, 3], [1, 0], [0, 1]], np.int64)
    sp, v = _var_sp(tf, ind, np.array([1.0, 2.0, 3.0, 4.0], np.float32), SP_SHAPE)
    r = tf.sparse.reorder(sp)
    loss = tf.reduce_sum(r.values * tf.constant(np.array([1.0, 10.0, 100.0, 1000.0], np.float32)))
    return {"sp": r, "grad": tf.gradients(loss, v)[0]}, None


def reshape(tf):
    sp = _sp(tf)
    return {"a": tf.sparse.reshape(sp, [2, 10]), "b": tf.sparse.reshape(sp, [-1, 2, 5]),
            "c": tf.sparse.reshape(_sp(tf, IND3, VAL3, SHAPE3), [9, -1])}, None


def reshape_bad(tf):
    sp = tf.SparseTensor(SP_IND, SP_VAL, tf.placeholder_with_default(SP_SHAPE, [2]))
    return {"a": tf.sparse.reshape(sp, [3, 7])}, None


def concat(tf):
    a = _sp(tf)
    b = tf.SparseTensor(tf.constant(np.array([[0, 1], [3, 0]], np.int64)), tf.constant([7.0, 8.0]),
                        tf.constant(np.array([4, 2], np.int64)))
    c = tf.SparseTensor(tf.constant(np.array([[1, 4]], np.int64)), tf.constant([9.0]),
                        tf.constant(np.array([2, 5], np.int64)))
    return {
        "axis1": tf.sparse.concat(1, [a, b]),
        "axis_neg": tf.sparse.concat(-1, [b, a, b]),
        "axis0": tf.sparse.concat(0, [a, c]),
        "expand": tf.sparse.concat(1, [c, b], expand_nonconcat_dim=True),
    }, None


def concat_mismatch(tf):
    a = _sp(tf)
    b = tf.SparseTensor(tf.constant(np.array([[0, 1]], np.int64)), tf.constant([7.0]),
                        tf.placeholder_with_default(np.array([3, 2], np.int64), [2]))
    return {"out": tf.sparse.concat(1, [a, b])}, None


def retain_reset_transpose(tf):
    sp = _sp(tf)
    keep = tf.constant([True, False, True, True, False])
    s3 = _sp(tf, IND3, VAL3, SHAPE3)
    return {
        "retain": tf.sparse.retain(sp, keep),
        "reset_tight": tf.sparse.reset_shape(sp),
        "reset_new": tf.sparse.reset_shape(sp, [6, 7]),
        "transpose": tf.sparse.transpose(sp),
        "transpose3": tf.sparse.transpose(s3, [1, 2, 0]),
        "expand0": tf.sparse.expand_dims(sp, 0),
        "expand_last": tf.sparse.expand_dims(sp),
        "expand1": tf.sparse.expand_dims(s3, 1),
        "eye": tf.sparse.eye(3, 4),
        "eye_square": tf.sparse.eye(3, dtype=tf.int32),
    }, None


def merge_indicator(tf):
    ids = tf.SparseTensor(tf.constant(np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]], np.int64)),
                          tf.constant(np.array([3, 0, 2, 4, 3], np.int64)), tf.constant(np.array([3, 2], np.int64)))
    vals = tf.SparseTensor(ids.indices, tf.constant([0.1, 0.2, 0.3, 0.4, 0.5]), ids.dense_shape)
    return {"merged": tf.sparse.merge(ids, vals, 5), "indicator": tf.sparse.to_indicator(ids, 6)}, None


def fill_empty_rows(tf):
    ind = np.array([[0, 1], [2, 0], [2, 3], [4, 2]], np.int64)
    v = tf.constant(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    d = tf.constant(np.float32(-7.0))
    sp = tf.SparseTensor(tf.constant(ind), v * 1.0, tf.constant(np.array([6, 4], np.int64)))
    filled, empty = tf.sparse.fill_empty_rows(sp, d)
    loss = tf.reduce_sum(filled.values * tf.range(1.0, 1.0 + tf.cast(tf.size(filled.values), tf.float32)))
    gv, gd = tf.gradients(loss, [v, d])
    strs, sempty = tf.sparse.fill_empty_rows(
        tf.SparseTensor(tf.constant(np.array([[1, 0]], np.int64)), tf.constant(["x"]), tf.constant(np.array([3, 2], np.int64))), "")
    return {"filled": filled, "empty": empty, "grad_values": gv, "grad_default": gd, "strings": strs,
            "strings_empty": sempty}, None


def fill_empty_rows_bad_row(tf):
    sp = tf.SparseTensor(tf.constant(np.array([[0, 1], [5, 0]], np.int64)), tf.constant([1.0, 2.0]),
                         tf.constant(np.array([3, 2], np.int64)))
    return {"out": tf.sparse.fill_empty_rows(sp, 0.0)[0]}, None


def split(tf):
    sp = _sp(tf)
    outs = {}
    for i, s in enumerate(tf.sparse.split(sp_input=sp, num_split=3, axis=1)):
        outs[f"axis1_{i}"] = s
    for i, s in enumerate(tf.sparse.split(sp_input=sp, num_split=2, axis=0)):
        outs[f"axis0_{i}"] = s
    return outs, None


def slice_(tf):
    sp, v = _var_sp(tf)
    s = tf.sparse.slice(sp, [1, 0], [2, 4])
    t = tf.sparse.slice(sp, [0, 2], [10, 10])
    loss = tf.reduce_sum(s.values * 3.0) + tf.reduce_sum(t.values * t.values)
    return {"a": s, "b": t, "grad": tf.gradients(loss, v)[0]}, None


def softmax(tf):
    sp, v = _var_sp(tf, IND3, VAL3, SHAPE3)
    y = tf.sparse.softmax(sp)
    loss = tf.reduce_sum(y.values * tf.constant(np.array([1.0, -2.0, 0.5, 3.0, 1.0], np.float32)))
    s2, v2 = _var_sp(tf)
    y2 = tf.sparse.softmax(s2)
    loss2 = tf.reduce_sum(y2.values * tf.constant(np.arange(5, dtype=np.float32)))
    return {"y3": y, "grad3": tf.gradients(loss, v)[0], "y2": y2, "grad2": tf.gradients(loss2, v2)[0]}, None


def maximum_minimum(tf):
    a = _sp(tf)
    b = tf.SparseTensor(tf.constant(np.array([[0, 0], [0, 1], [2, 3], [3, 4]], np.int64)),
                        tf.constant([2.0, -1.0, -4.0, 5.0]), tf.constant(SP_SHAPE))
    return {"max": tf.sparse.maximum(a, b), "min": tf.sparse.minimum(a, b)}, None


# --- arithmetic ---------------------------------------------------------------------------------------------


def add(tf):
    a, va = _var_sp(tf)
    bind = np.array([[0, 0], [0, 1], [2, 3], [3, 4]], np.int64)
    b, vb = _var_sp(tf, bind, np.array([-1.5, 4.0, 1.0, 2.0], np.float32), SP_SHAPE)
    s = tf.sparse.add(a, b)
    t = tf.sparse.add(a, b, threshold=0.5)
    loss = tf.reduce_sum(s.values * tf.range(1.0, 8.0))
    ga, gb = tf.gradients(loss, [va, vb])
    dense = tf.constant(UPSTREAM_45)
    sd = tf.sparse.add(a, dense)
    ds = tf.sparse.add(dense, a)
    gd_a, gd_d = tf.gradients(tf.reduce_sum(sd * sd), [va, dense])
    return {"sum": s, "thresh": t, "grad_a": ga, "grad_b": gb, "sparse_dense": sd, "dense_sparse": ds,
            "grad_sd_values": gd_a, "grad_sd_dense": gd_d}, None


def add_shape_mismatch(tf):
    a = _sp(tf)
    b = tf.SparseTensor(tf.constant(np.array([[0, 0]], np.int64)), tf.constant([1.0]),
                        tf.placeholder_with_default(np.array([4, 6], np.int64), [2]))
    return {"out": tf.sparse.add(a, b)}, None


def cwise(tf):
    sp, v = _var_sp(tf)
    row = tf.constant(np.array([1.0, 2.0, -1.0, 4.0, 0.5], np.float32))
    full = tf.constant(UPSTREAM_45 + 3.0)
    col = tf.constant(np.array([[2.0], [3.0], [4.0], [5.0]], np.float32))
    m = sp * row
    dv = sp / full
    c = sp * col
    loss = tf.reduce_sum(m.values * 2.0) + tf.reduce_sum(dv.values * dv.values) + tf.reduce_sum(c.values)
    gv, grow, gfull, gcol = tf.gradients(loss, [v, row, full, col])
    return {"mul": m, "div": dv, "col": c, "grad_values": gv, "grad_row": grow, "grad_full": gfull,
            "grad_col": gcol}, None


def reduce(tf):
    sp, v = _var_sp(tf)
    neg = _sp(tf, SP_IND, -np.abs(SP_VAL) - 1.0, SP_SHAPE)
    s3, v3 = _var_sp(tf, IND3, VAL3, SHAPE3)
    r1 = tf.sparse.reduce_sum(sp, 1)
    r3 = tf.sparse.reduce_sum(s3, [0, 2], keepdims=True)
    loss = tf.reduce_sum(r1 * tf.constant(np.array([1.0, 2.0, 3.0, 4.0], np.float32))) + tf.reduce_sum(r3 * r3)
    g, g3 = tf.gradients(loss, [v, v3])
    return {
        "sum_all": tf.sparse.reduce_sum(sp),
        "sum_0": tf.sparse.reduce_sum(sp, 0),
        "sum_1": r1,
        "sum_neg1_keep": tf.sparse.reduce_sum(sp, -1, keepdims=True),
        "sum_3": r3,
        "sum_sparse_1": tf.sparse.reduce_sum_sparse(sp, 1),
        "sum_sparse_3": tf.sparse.reduce_sum_sparse(s3, [1]),
        "max_all": tf.sparse.reduce_max(neg),
        "max_1": tf.sparse.reduce_max(neg, 1),
        "max_0": tf.sparse.reduce_max(sp, 0),
        "max_sparse_1": tf.sparse.reduce_max_sparse(neg, 1),
        "grad": g,
        "grad3": g3,
    }, None


def tensor_dense_add(tf):
    sp, v = _var_sp(tf)
    d = tf.constant(UPSTREAM_45)
    out = tf.sparse.add(d, sp)
    return {"out": out, "grads": tf.gradients(tf.reduce_sum(out * out), [v, d])}, None


def segments(tf):
    data = tf.constant(SEG_DATA)
    idx = tf.constant(np.array([0, 2, 2, 4, 1, 3], np.int32))
    seg = tf.constant(np.array([0, 0, 1, 1, 1, 3], np.int32))
    outs = {}
    for name, fn in (("sum", tf.sparse.segment_sum), ("mean", tf.sparse.segment_mean),
                     ("sqrt_n", tf.sparse.segment_sqrt_n)):
        y = fn(data, idx, seg)
        yn = fn(data, idx, seg, num_segments=6)
        outs[name] = y
        outs[name + "_num"] = yn
        loss = tf.reduce_sum(y * tf.constant(_f32_fixed(4, 3))) + tf.reduce_sum(yn)
        outs[name + "_grad"] = tf.gradients(loss, data)[0]
    outs["sum_top"] = tf.sparse_segment_sum(data, tf.constant(np.array([1, 1], np.int64)), [0, 2])
    return outs, None


def segments_unsorted(tf):
    return {"out": tf.sparse.segment_sum(tf.constant(SEG_DATA), [0, 1], [1, 0])}, None


def segments_bad_index(tf):
    return {"out": tf.sparse.segment_sum(tf.constant(SEG_DATA), [0, 9], [0, 0])}, None


def cross(tf):
    a = tf.SparseTensor(tf.constant(np.array([[0, 0], [1, 0], [1, 1]], np.int64)), tf.constant(["a", "b", "c"]),
                        tf.constant(np.array([2, 2], np.int64)))
    b = tf.SparseTensor(tf.constant(np.array([[0, 0], [0, 1], [1, 0]], np.int64)),
                        tf.constant(np.array([10, 11, 12], np.int64)), tf.constant(np.array([2, 2], np.int64)))
    d = tf.constant([["d"], ["e"]])
    return {"ab": tf.sparse.cross([a, b]), "adb": tf.sparse.cross([a, d, b]),
            "sep": tf.sparse.cross([b, a], separator="|")}, None


# Strings of every length class of FarmHash's Fingerprint64 (0, 1-3, 4-7, 8-16, 17-32, 33-64, and the
# 64-byte block loop with and without a partial last block).
HASH_LENGTHS = [0, 1, 2, 3, 4, 7, 8, 12, 16, 17, 25, 32, 33, 50, 64, 65, 100, 128, 129, 200, 300]


def cross_hashed(tf):
    words = [bytes((i * 37 + k * 11) % 251 + 1 for k in range(n)) for i, n in enumerate(HASH_LENGTHS)]
    rows = len(words)
    a = tf.SparseTensor(tf.constant(np.array([[i, 0] for i in range(rows)], np.int64)),
                        tf.constant(np.array(words, dtype=object)), tf.constant(np.array([rows, 1], np.int64)))
    b = tf.SparseTensor(tf.constant(np.array([[i, j] for i in range(rows) for j in range(2)], np.int64)),
                        tf.constant(np.arange(2 * rows, dtype=np.int64) * 7919 - 40000),
                        tf.constant(np.array([rows, 2], np.int64)))
    d = tf.constant(np.array([[w[:5]] for w in words], dtype=object))
    return {"single": tf.sparse.cross_hashed([a]), "ab": tf.sparse.cross_hashed([a, b]),
            "ab_buckets": tf.sparse.cross_hashed([a, b], num_buckets=1000),
            "bad_key": tf.sparse.cross_hashed([b, d, a], num_buckets=97, hash_key=12345)}, None


def bincount(tf):
    v = tf.constant(np.array([[1, 3, 3, 0], [5, 1, 1, 1]], np.int64))
    w = tf.constant(np.array([[0.5, 1.0, 2.0, 1.5], [1.0, 0.25, 0.25, 3.0]], np.float32))
    sp = tf.SparseTensor(tf.constant(np.array([[0, 0], [0, 2], [2, 1], [2, 3]], np.int64)),
                         tf.constant(np.array([4, 2, 4, 4], np.int32)), tf.constant(np.array([3, 5], np.int64)))
    return {
        "flat": tf.sparse.bincount(v),
        "rows": tf.sparse.bincount(v, axis=-1),
        "weighted_rows": tf.sparse.bincount(v, weights=w, axis=-1),
        "minlength": tf.sparse.bincount(v, minlength=9),
        "maxlength": tf.sparse.bincount(v, axis=-1, maxlength=3),
        "binary": tf.sparse.bincount(v, axis=-1, binary_output=True),
        "sparse_flat": tf.sparse.bincount(sp),
        "sparse_rows": tf.sparse.bincount(sp, axis=-1, minlength=6),
        "sparse_weighted": tf.sparse.bincount(sp, weights=tf.SparseTensor(sp.indices, tf.constant([1.0, 2.0, 3.0, 4.0]),
                                                                          sp.dense_shape), axis=-1),
    }, None


def segment_sparse_gradient(tf):
    data = tf.constant(SEG_DATA)
    idx = tf.constant(np.array([0, 2, 2, 4, 1, 2], np.int32))
    seg = tf.constant(np.array([0, 0, 1, 1, 1, 3], np.int32))
    outs = {}
    for name, fn in (("sum", tf.sparse.segment_sum), ("mean", tf.sparse.segment_mean),
                     ("sqrt_n", tf.sparse.segment_sqrt_n)):
        y = fn(data, idx, seg, sparse_gradient=True)
        outs[name + "_grad"] = tf.gradients(tf.reduce_sum(y * tf.constant(_f32_fixed(4, 3))), data)[0]
    return outs, None


def mask(tf):
    a = tf.IndexedSlices(tf.constant(_f32_fixed(4, 2)), tf.constant(np.array([12, 26, 37, 45], np.int32)),
                         tf.constant(np.array([60, 2], np.int32)))
    m = tf.sparse.mask(a, [12, 45])
    return {"values": m.values, "indices": m.indices}, None


# --- placeholders and feeds ---------------------------------------------------------------------------------


def placeholder_feed(tf):
    p = tf.sparse_placeholder(tf.float32, shape=[None, 5], name="p")
    q = tf.sparse.placeholder(tf.int64)
    feed = {p: tf.SparseTensorValue(SP_IND, SP_VAL, SP_SHAPE),
            q: (np.array([[0, 1, 2]], np.int64), np.array([7], np.int64), np.array([2, 3, 4], np.int64))}
    return {"p_dense": tf.sparse.to_dense(p), "p": p, "q_sum": tf.sparse.reduce_sum(q), "q": q}, feed


def placeholder_default_shape(tf):
    # Not feeding dense_shape: it defaults to the static shape given.
    p = tf.sparse_placeholder(tf.float32, shape=[4, 5])
    feed = {p.indices: SP_IND, p.values: SP_VAL}
    return {"dense": tf.sparse.to_dense(p), "sum_0": tf.sparse.reduce_sum(p, 0)}, feed


# --- embeddings ---------------------------------------------------------------------------------------------


def _ids(tf):
    ind = np.array([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], np.int64)
    return (tf.SparseTensor(tf.constant(ind), tf.constant(np.array([1, 3, 1, 5, 1], np.int64)),
                            tf.constant(np.array([4, 3], np.int64))),
            tf.SparseTensor(tf.constant(ind), tf.constant(WEIGHTS), tf.constant(np.array([4, 3], np.int64))))


def embedding_lookup_sparse(tf):
    params = tf.constant(PARAMS)
    ids, w = _ids(tf)
    outs = {}
    for comb in ("sum", "mean", "sqrtn"):
        for weighted in (False, True):
            y = tf.nn.embedding_lookup_sparse(params, ids, w if weighted else None, combiner=comb)
            key = f"{comb}_{'w' if weighted else 'u'}"
            outs[key] = y
            outs[key + "_grad"] = tf.gradients(tf.reduce_sum(y * y), params)[0]
    return outs, None


def embedding_lookup_sparse_sharded(tf):
    ids, w = _ids(tf)
    mod = [tf.constant(PARAMS[0::2]), tf.constant(PARAMS[1::2])]
    div = [tf.constant(PARAMS[:3]), tf.constant(PARAMS[3:])]
    outs = {
        "mod": tf.nn.embedding_lookup_sparse(mod, ids, w, combiner="sum"),
        "div": tf.nn.embedding_lookup_sparse(div, ids, None, partition_strategy="div", combiner="sqrtn"),
        "max_norm": tf.nn.embedding_lookup_sparse(tf.constant(PARAMS), ids, w, max_norm=1.0),
    }
    outs["mod_grads"] = tf.gradients(tf.reduce_sum(outs["mod"] * outs["mod"]), mod)
    return outs, None


def safe_embedding_lookup_sparse(tf):
    params = tf.constant(PARAMS)
    ind = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [3, 0]], np.int64)
    ids = tf.SparseTensor(tf.constant(ind), tf.constant(np.array([1, -1, 4, 2, 5], np.int64)),
                          tf.constant(np.array([5, 2], np.int64)))
    w = tf.SparseTensor(tf.constant(ind), tf.constant(np.array([1.0, 1.0, -2.0, 0.5, 3.0], np.float32)),
                        tf.constant(np.array([5, 2], np.int64)))
    ind3 = np.array([[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 1, 0]], np.int64)
    ids3 = tf.SparseTensor(tf.constant(ind3), tf.constant(np.array([0, 3, -2, 5], np.int64)),
                           tf.constant(np.array([2, 2, 2], np.int64)))
    outs = {
        "mean": tf.nn.safe_embedding_lookup_sparse(params, ids),
        "sum_w": tf.nn.safe_embedding_lookup_sparse(params, ids, w, combiner="sum"),
        "mean_w": tf.nn.safe_embedding_lookup_sparse(params, ids, w),
        "default": tf.nn.safe_embedding_lookup_sparse(params, ids, w, combiner="sqrtn", default_id=2),
        "rank3": tf.nn.safe_embedding_lookup_sparse(params, ids3),
    }
    outs["mean_w_grad"] = tf.gradients(tf.reduce_sum(outs["mean_w"] * outs["mean_w"]), params)[0]
    return outs, None


CASES = [
    to_dense, to_dense_unordered, to_dense_repeated, to_dense_out_of_bounds, to_dense_unvalidated, from_dense,
    matmul, matmul_adjoint_a, matmul_adjoint_b, matmul_adjoint_both, matmul_dense_sparse, matmul_inner_mismatch,
    reorder, reshape, reshape_bad, concat, concat_mismatch, retain_reset_transpose, merge_indicator,
    fill_empty_rows, fill_empty_rows_bad_row, split, slice_, softmax, maximum_minimum, add, add_shape_mismatch,
    cwise, reduce, tensor_dense_add, segments, segments_unsorted, segments_bad_index, cross, cross_hashed, bincount, segment_sparse_gradient,
    mask,
    placeholder_feed, placeholder_default_shape, embedding_lookup_sparse, embedding_lookup_sparse_sharded,
    safe_embedding_lookup_sparse,
]


def _flatten(name, value, out):
    kind = type(value).__name__
    if kind == "SparseTensorValue":
        out[name + "/indices"] = np.asarray(value.indices)
        out[name + "/values"] = np.asarray(value.values)
        out[name + "/dense_shape"] = np.asarray(value.dense_shape)
    elif kind == "IndexedSlicesValue":
        shape = tuple(int(d) for d in value.dense_shape)
        dense = np.zeros(shape, np.asarray(value.values).dtype)
        np.add.at(dense, np.asarray(value.indices), np.asarray(value.values))
        out[name] = dense
        out[name + "/kind"] = np.array(b"IndexedSlices")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten(f"{name}/{i}", v, out)
    else:
        out[name] = np.asarray(value)


def run_case(tf, case):
    """Runs ``case`` in a fresh graph under ``tf``; returns ``{name: ndarray}`` or the error raised."""
    g = tf.Graph()
    with g.as_default():
        fetches, feed = case(tf)
        with tf.Session(graph=g) as sess:
            try:
                values = sess.run(fetches, feed)
            except tf.errors.OpError as e:
                return {"error": type(e).__name__, "message": e.message}
    out = {}
    for k, v in values.items():
        _flatten(k, v, out)
    return out


def static_shapes(tf):
    """Static shapes of sparse results, as lists (None for unknown dims)."""
    g = tf.Graph()
    with g.as_default():
        p = tf.sparse_placeholder(tf.float32, shape=[None, 5])
        q = tf.sparse_placeholder(tf.float32, shape=[3, -1, 2])
        r = tf.sparse_placeholder(tf.float32)
        s = tf.SparseTensor(SP_IND, SP_VAL, SP_SHAPE)

        def as_list(shape):
            return None if shape.rank is None else [d if d is None else int(d) for d in shape.as_list()]

        return {
            "p": as_list(p.shape),
            "p_indices": as_list(p.indices.shape),
            "q": as_list(q.get_shape()),
            "q_values": as_list(q.values.shape),
            "r": as_list(r.shape),
            "r_indices": as_list(r.indices.shape),
            "s": as_list(s.shape),
            "to_dense_p": as_list(tf.sparse.to_dense(p).shape),
            "to_dense_s": as_list(tf.sparse.to_dense(s).shape),
            "reduce_s_1": as_list(tf.sparse.reduce_sum(s, 1).shape),
            "reduce_s_keep": as_list(tf.sparse.reduce_sum(s, 0, keepdims=True).shape),
            "matmul": as_list(tf.sparse.sparse_dense_matmul(s, DENSE_B).shape),
            "reorder_p": as_list(tf.sparse.reorder(p).shape),
            "reshape_s": as_list(tf.sparse.reshape(s, [-1, 2]).shape),
            "concat_s": as_list(tf.sparse.concat(1, [s, s]).shape),
            "transpose_s": as_list(tf.sparse.transpose(s).shape),
            "expand_s": as_list(tf.sparse.expand_dims(s, 1).shape),
        }
