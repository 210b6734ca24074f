"""A TF1 recommender (matrix factorization) with the regularization machinery: user/item embeddings from
tf.get_variable with a regularizer lambda (a scaled tf.nn.l2_loss, the tf.contrib-era idiom), a tf.layers.dense
bias tower with kernel_regularizer, tf.losses.mean_squared_error with weights, tf.losses.add_loss of an extra
term, tf.losses.get_regularization_loss / get_regularization_losses / get_total_loss, the REGULARIZATION_LOSSES
and LOSSES collections, per-variable gradient clipping by tf.clip_by_norm in a compute/apply loop, and the
ProximalAdagrad / Adadelta / RMSProp(centered, momentum) optimizers on separate variable groups.

Weights come from numpy, so everything is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    rng = np.random.RandomState(28)
    n_users, n_items, dim = 12, 9, 4
    users = rng.randint(0, n_users, size=40).astype(np.int32)
    items = rng.randint(0, n_items, size=40).astype(np.int32)
    ratings = ((users % 3) + (items % 4) * 0.5 + rng.randn(40) * 0.1).astype(np.float32)
    weights_np = (1.0 + (users % 2)).astype(np.float32)

    u = tf.placeholder(tf.int32, [None])
    i = tf.placeholder(tf.int32, [None])
    r = tf.placeholder(tf.float32, [None])
    w = tf.placeholder(tf.float32, [None])

    def l2_reg(scale):
        return lambda t: scale * tf.nn.l2_loss(t)

    user_emb = tf.get_variable("user_emb", initializer=tf.constant(fixed_init([n_users, dim], 2801)),
                               regularizer=l2_reg(0.01))
    item_emb = tf.get_variable("item_emb", initializer=tf.constant(fixed_init([n_items, dim], 2802)),
                               regularizer=l2_reg(0.02))
    ue = tf.nn.embedding_lookup(user_emb, u)
    ie = tf.nn.embedding_lookup(item_emb, i)
    dot = tf.reduce_sum(ue * ie, axis=1)
    bias = tf.layers.dense(tf.concat([ue, ie], 1), 1, name="bias_tower",
                           kernel_initializer=tf.constant_initializer(0.1),
                           kernel_regularizer=l2_reg(0.001))
    pred = dot + tf.squeeze(bias, 1)
    mse = tf.losses.mean_squared_error(labels=r, predictions=pred, weights=w)
    tf.losses.add_loss(0.001 * tf.reduce_mean(tf.square(pred)))
    reg = tf.losses.get_regularization_loss()
    total = tf.losses.get_total_loss()

    groups = {
        "proximal": ([user_emb], tf.train.ProximalAdagradOptimizer(0.5, l1_regularization_strength=0.001)),
        "adadelta": ([item_emb], tf.train.AdadeltaOptimizer(5.0)),
        "rmsprop": (tf.trainable_variables("bias_tower"), tf.train.RMSPropOptimizer(0.01, momentum=0.5,
                                                                                    centered=True)),
    }
    clipped_groups = []
    for var_list, opt in groups.values():
        gvs = opt.compute_gradients(total, var_list=var_list)
        clipped = [(tf.clip_by_norm(g, 1.0) if not isinstance(g, tf.IndexedSlices)
                    else tf.IndexedSlices(tf.clip_by_norm(g.values, 1.0), g.indices, g.dense_shape), v)
                   for g, v in gvs]
        clipped_groups.append((opt, clipped))
    # Every group's gradients are computed before any update: otherwise TF's executor may apply one group
    # (ref variables, updated in place) while another group's backward pass still reads it, which made TF's
    # own losses change from run to run here.
    all_grads = [g.values if isinstance(g, tf.IndexedSlices) else g for _, c in clipped_groups for g, _ in c]
    with tf.control_dependencies(all_grads):
        train = tf.group(*[opt.apply_gradients(c) for opt, c in clipped_groups])

    out = {"losses": [], "reg": []}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {u: users, i: items, r: ratings, w: weights_np}
        for _ in range(steps):
            m, rg = sess.run([mse, reg], feed)
            sess.run(train, feed)
            out["losses"].append(float(m))
            out["reg"].append(float(rg))
        out["total"] = float(sess.run(total, feed))
        out["reg_losses"] = [float(x) for x in sess.run(tf.losses.get_regularization_losses())]
    out["collections"] = {
        "losses": [t.op.name for t in tf.get_collection(tf.GraphKeys.LOSSES)],
        "regularization": [t.op.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)],
    }
    out["slots"] = sorted(v.op.name for v in tf.global_variables() if v not in tf.trainable_variables())
    return out


if __name__ == "__main__":
    run_as_script(main, 5)
