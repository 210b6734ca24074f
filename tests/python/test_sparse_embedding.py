"""Training through tf.nn.embedding_lookup_sparse: the gradient reaching a params variable is an
IndexedSlices over the distinct ids looked up, and an SGD step moves exactly those rows by TensorFlow's
gradient (tests/fixtures/sparse, case embedding_lookup_sparse)."""

import pathlib

import numpy as np

import _sparse_cases as cases
import ferroflow as tf

GOLDEN = np.load(pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "sparse" / "sparse.npz")


def test_sgd_step_moves_looked_up_rows_by_tensorflows_gradient():
    with tf.Graph().as_default():
        params = tf.Variable(cases.PARAMS)
        ids, w = cases._ids(tf)
        y = tf.nn.embedding_lookup_sparse(params, ids, w, combiner="sum")
        loss = tf.reduce_sum(y * y)
        (grad,) = tf.gradients(loss, [params])
        assert isinstance(grad, tf.IndexedSlices)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            g = sess.run(grad)
            # One slice per distinct id (1, 3, 5), as TensorFlow's unique-then-gather lookup gives.
            assert sorted(np.asarray(g.indices).tolist()) == [1, 3, 5]
            sess.run(train)
            want = cases.PARAMS - 0.1 * GOLDEN["embedding_lookup_sparse:sum_w_grad"]
            np.testing.assert_allclose(sess.run(params), want, rtol=1e-5, atol=1e-6)
            untouched = [0, 2, 4]
            np.testing.assert_array_equal(sess.run(params)[untouched], cases.PARAMS[untouched])


def test_safe_lookup_of_fed_ids_with_empty_and_invalid_rows():
    with tf.Graph().as_default():
        params = tf.constant(cases.PARAMS)
        sp = tf.sparse_placeholder(tf.int64, shape=[None, 3])
        y = tf.nn.safe_embedding_lookup_sparse(params, sp)
        assert y.shape.as_list() == [None, 4]
        with tf.Session() as sess:
            got = sess.run(y, {sp: ([[0, 0], [0, 2], [2, 1]], [4, 1, -3], [4, 3])})
        want = np.zeros([4, 4], np.float32)
        want[0] = (cases.PARAMS[4] + cases.PARAMS[1]) / 2
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _examples(rows):
    out = []
    for ids in rows:
        feature = {"ids": tf.train.Feature(int64_list=tf.train.Int64List(value=ids))}
        out.append(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return out


def test_parsed_var_len_ids_train_a_bag_of_embeddings():
    """A TF1 program's shape: VarLenFeature ids -> safe_embedding_lookup_sparse (mean) -> linear -> loss,
    trained with SGD; the lookup equals NumPy's mean of the ids' rows (zeros for an example without ids)."""
    rows = [[1, 3], [], [5, 5, 2], [0]]
    targets = np.array([1.0, 0.0, -1.0, 0.5], np.float32)
    with tf.Graph().as_default():
        serialized = tf.placeholder(tf.string, [None])
        ids = tf.parse_example(serialized, {"ids": tf.VarLenFeature(tf.int64)})["ids"]
        emb = tf.Variable(cases.PARAMS)
        bag = tf.nn.safe_embedding_lookup_sparse(emb, ids)
        w = tf.Variable(np.ones([4, 1], np.float32))
        pred = tf.reshape(tf.matmul(bag, w), [-1])
        loss = tf.reduce_mean(tf.square(pred - targets))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        feed = {serialized: _examples(rows)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(bag, feed)
            want = np.stack([cases.PARAMS[r].mean(0) if r else np.zeros(4, np.float32) for r in rows])
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
            first = sess.run(loss, feed)
            for _ in range(50):
                sess.run(train, feed)
            assert sess.run(loss, feed) < 0.1 * first
            # Row 4 of the table is never looked up: untouched by training.
            np.testing.assert_array_equal(sess.run(emb)[4], cases.PARAMS[4])
