"""TF1 graph-network and memory idioms: a GCN layer by message passing (tf.gather of source-node features
per edge, tf.unsorted_segment_sum / unsorted_segment_mean / unsorted_segment_max into destinations), the
same layer with a normalized adjacency built by tf.scatter_nd and applied with tf.sparse_tensor_dense_matmul,
a memory bank variable updated in the graph by tf.scatter_update / tf.scatter_add / tf.scatter_nd_add, and
learning-rate schedules (polynomial_decay with cycle, cosine_decay, inverse_time_decay, natural_exp_decay,
exponential_decay staircase) driving MomentumOptimizer through global_step.

Weights come from numpy, so everything is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    rng = np.random.RandomState(23)
    n_nodes, n_feat, n_hidden = 6, 4, 5
    edges = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [0, 3], [1, 1]], np.int32)
    feats = rng.randn(n_nodes, n_feat).astype(np.float32)
    labels = np.array([0, 0, 0, 1, 1, 1], np.int32)

    x = tf.placeholder(tf.float32, [n_nodes, n_feat])
    src, dst = tf.constant(edges[:, 0]), tf.constant(edges[:, 1])
    w1 = tf.Variable(fixed_init([n_feat, n_hidden], 2301, 0.5), name="w1")
    w2 = tf.Variable(fixed_init([n_hidden, 2], 2302, 0.5), name="w2")

    messages = tf.gather(tf.matmul(x, w1), src)
    agg_sum = tf.unsorted_segment_sum(messages, dst, n_nodes)
    agg_mean = tf.unsorted_segment_mean(messages, dst, n_nodes)
    agg_max = tf.unsorted_segment_max(messages, dst, n_nodes)
    h = tf.nn.relu(agg_sum + agg_mean)
    logits = tf.matmul(h, w2)

    # The adjacency route: D^-1/2 (A + I) D^-1/2 as a sparse matrix.
    self_loops = np.stack([np.arange(n_nodes), np.arange(n_nodes)], 1).astype(np.int64)
    idx = tf.constant(np.concatenate([edges[:, ::-1].astype(np.int64), self_loops]))
    adj = tf.scatter_nd(idx, tf.ones([len(edges) + n_nodes]), [n_nodes, n_nodes])
    deg = tf.reduce_sum(adj, 1)
    norm = adj / tf.sqrt(deg[:, None] * deg[None, :])
    sp = tf.SparseTensor(idx, tf.gather_nd(norm, idx), [n_nodes, n_nodes])
    h2 = tf.nn.relu(tf.sparse_tensor_dense_matmul(tf.sparse_reorder(sp), tf.matmul(x, w1)))
    logits2 = tf.matmul(h2, w2)

    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)) + \
        tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits2))

    global_step = tf.train.get_or_create_global_step()
    schedules = {
        "polynomial": tf.train.polynomial_decay(0.1, global_step, 3, 0.01, power=2.0, cycle=True),
        "cosine": tf.train.cosine_decay(0.1, global_step, 4, alpha=0.1),
        "inverse_time": tf.train.inverse_time_decay(0.1, global_step, 2, 0.5, staircase=True),
        "natural_exp": tf.train.natural_exp_decay(0.1, global_step, 2, 0.3),
        "exponential": tf.train.exponential_decay(0.1, global_step, 2, 0.5, staircase=True),
    }
    train = tf.train.MomentumOptimizer(schedules["polynomial"], 0.9).minimize(loss, global_step=global_step)

    memory = tf.Variable(tf.zeros([4, 3]), name="memory")
    write = tf.scatter_update(memory, [1, 3], tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    add = tf.scatter_add(memory, [1, 1, 0], tf.ones([3, 3]))
    nd_add = tf.scatter_nd_add(memory, [[2, 0], [2, 2]], [7.0, 9.0])

    out = {"losses": [], "lrs": {k: [] for k in schedules}}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        aggs = sess.run([agg_sum, agg_mean, agg_max], {x: feats})
        out["aggregates"] = [np.round(a, 5).tolist() for a in aggs]
        out["norm_adj_rowsum"] = np.round(sess.run(tf.reduce_sum(norm, 1)), 5).tolist()
        for _ in range(steps):
            lrs = sess.run(schedules)
            for k in schedules:
                out["lrs"][k].append(float(lrs[k]))
            out["losses"].append(float(sess.run([train, loss], {x: feats})[1]))
        sess.run(write)
        sess.run(add)
        out["memory"] = sess.run(nd_add).tolist()
        out["global_step"] = int(sess.run(global_step))
    return out


if __name__ == "__main__":
    run_as_script(main, 5)
