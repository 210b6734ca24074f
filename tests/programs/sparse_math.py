"""TF1 sparse-tensor math as recommender and NLP code used it: a tf.SparseTensor of ratings, tf.sparse_reorder
of unordered indices, tf.sparse.softmax over each row's entries (attention over present items),
tf.sparse_reduce_sum / sparse_reduce_max (keepdims, sparse outputs), tf.sparse_add of two sparse tensors and
with a threshold, tf.sparse_concat, tf.sparse_reshape, tf.sparse_slice, tf.sparse_retain with a mask,
tf.sparse_fill_empty_rows, tf.sparse_transpose, tf.sparse_maximum/sparse_minimum, tf.sparse.to_dense with a
default, tf.sparse_tensor_dense_matmul (adjoint_a), tf.sparse_segment_sum/mean/sqrt_n over ids, tf.SparseTensor
* dense (sparse_dense_cwise_mul by broadcasting) and the gradient of a loss through sparse_tensor_dense_matmul
into a dense weight, trained by Adagrad.

Deterministic: fixed entries, weights from numpy.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def sp_out(v):
    return {"indices": np.asarray(v.indices).tolist(), "values": np.asarray(v.values).tolist(),
            "shape": np.asarray(v.dense_shape).tolist()}


def main(tf, steps=5):
    tf.reset_default_graph()
    idx = [[2, 1], [0, 0], [0, 3], [1, 2], [2, 0], [0, 1], [3, 3]]
    vals = np.array([4.0, 1.0, 3.0, 5.0, 2.0, 2.5, 1.5], np.float32)
    ratings = tf.sparse_reorder(tf.SparseTensor(indices=idx, values=vals, dense_shape=[5, 4]))
    other = tf.SparseTensor(indices=[[0, 0], [1, 1], [2, 1], [4, 2]], values=[1.0, -2.0, -4.05, 0.5],
                            dense_shape=[5, 4])
    fetch = {
        "reordered": ratings,
        "softmax": tf.sparse.softmax(ratings),
        "row_sum": tf.sparse_reduce_sum(ratings, axis=1),
        "row_sum_keep": tf.sparse_reduce_sum(ratings, axis=1, keepdims=True),
        "col_max": tf.sparse_reduce_max(ratings, axis=0),
        "total": tf.sparse_reduce_sum(ratings),
        "sum_sparse": tf.sparse_reduce_sum_sparse(ratings, axis=0),
        "added": tf.sparse_add(ratings, other),
        "added_thresh": tf.sparse_add(ratings, other, threshold=0.1),
        "added_dense": tf.sparse_add(tf.zeros([5, 4]), ratings),
        "concat": tf.sparse_concat(1, [ratings, other]),
        "reshaped": tf.sparse_reshape(ratings, [10, 2]),
        "sliced": tf.sparse_slice(ratings, [1, 0], [2, 4]),
        "retained": tf.sparse_retain(ratings, tf.greater(ratings.values, 2.0)),
        "transposed": tf.sparse_transpose(ratings),
        "maximum": tf.sparse_maximum(ratings, tf.SparseTensor([[0, 0], [0, 3], [2, 1]], [1.0, 9.0, 0.0], [5, 4])),
        "dense": tf.sparse.to_dense(ratings, default_value=-1.0),
        "scaled": ratings * tf.constant([1.0, 2.0, 3.0, 4.0]),
    }
    filled, empty_rows = tf.sparse_fill_empty_rows(ratings, 0.0)
    fetch["filled"] = filled
    fetch["empty_rows"] = empty_rows
    data = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    seg_ids = tf.constant([0, 0, 1, 2, 2, 2])
    rows = tf.constant([0, 2, 3, 1, 4, 5])
    fetch["seg_sum"] = tf.sparse_segment_sum(data, rows, seg_ids)
    fetch["seg_mean"] = tf.sparse_segment_mean(data, rows, seg_ids)
    fetch["seg_sqrt_n"] = tf.sparse_segment_sqrt_n(data, rows, seg_ids)

    # A sparse-input regression: user rows times an item-factor weight.
    W = tf.Variable(fixed_init([4, 3], 1110, 0.3), name="item_factors")
    u = tf.Variable(fixed_init([5, 3], 1111, 0.3), name="user_bias")
    pred = tf.sparse_tensor_dense_matmul(ratings, W)
    back = tf.sparse_tensor_dense_matmul(ratings, pred, adjoint_a=True)
    target = tf.constant(fixed_init([5, 3], 1112, 1.0))
    loss = tf.reduce_mean(tf.square(pred + u - target)) + 0.01 * tf.reduce_mean(tf.square(back))
    train = tf.train.AdagradOptimizer(0.1).minimize(loss)
    out = {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        r = sess.run(fetch)
        for k, v in r.items():
            out[k] = sp_out(v) if hasattr(v, "indices") else np.asarray(v).tolist()
        out["losses"] = [float(sess.run([train, loss])[1]) for _ in range(steps)]
        out["W"] = sess.run(W).ravel().tolist()
    out["softmax_type"] = type(fetch["softmax"]).__name__
    out["static"] = [str(fetch["row_sum"].shape), str(fetch["dense"].shape), str(pred.shape)]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
