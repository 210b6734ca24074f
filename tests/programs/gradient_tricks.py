"""TF1 gradient tricks from well-known repositories: the domain-adaptation "flip_gradient" (a FlipGradientBuilder
that registers a uniquely named gradient with tf.RegisterGradient and applies it through
g.gradient_override_map({"Identity": grad_name})), guided-backprop style overriding of "Relu" gradients, a
shared network made with tf.make_template and called twice, tf.custom_gradient for a clipped gradient, and a
DANN-style training step where the domain classifier's loss reaches the features reversed.

Weights come from numpy, so everything is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 4


class FlipGradientBuilder:
    def __init__(self):
        self.num_calls = 0

    def __call__(self, tf, x, l=1.0):
        grad_name = "FlipGradient%d_%d" % (id(tf) % 1000, self.num_calls)

        @tf.RegisterGradient(grad_name)
        def _flip_gradients(op, grad):
            return [tf.negative(grad) * l]

        g = tf.get_default_graph()
        with g.gradient_override_map({"Identity": grad_name}):
            y = tf.identity(x)
        self.num_calls += 1
        return y


flip_gradient = FlipGradientBuilder()


def main(tf, steps=4):
    tf.reset_default_graph()
    rng = np.random.RandomState(21)
    out = {}

    x = tf.placeholder(tf.float32, [None, 3])
    flipped = flip_gradient(tf, x, l=0.5)
    out["flip_grad"] = None
    g_flip = tf.gradients(tf.reduce_sum(flipped * tf.constant([1.0, 2.0, 3.0])), x)[0]

    @tf.RegisterGradient("GuidedRelu%d" % (id(tf) % 1000))
    def _guided_relu(op, grad):
        relu_grad = grad * tf.cast(op.outputs[0] > 0.0, tf.float32)  # gen_nn_ops.relu_grad
        return tf.where(0.0 < grad, relu_grad, tf.zeros(tf.shape(grad)))

    z = tf.placeholder(tf.float32, [4])
    with tf.get_default_graph().gradient_override_map({"Relu": "GuidedRelu%d" % (id(tf) % 1000)}):
        r = tf.nn.relu(z)
    g_guided = tf.gradients(tf.reduce_sum(r * tf.constant([1.0, -1.0, 2.0, -2.0])), z)[0]

    @tf.custom_gradient
    def clip_grad(v):
        def grad(dy):
            return tf.clip_by_value(dy, -0.1, 0.1)

        return tf.identity(v), grad

    c = tf.placeholder(tf.float32, [3])
    g_clip = tf.gradients(tf.reduce_sum(clip_grad(c) * tf.constant([0.05, 1.0, -3.0])), c)[0]

    def feature_net(inp):
        w = tf.get_variable("w", initializer=tf.constant(fixed_init([3, 4], 2101)))
        return tf.nn.relu(tf.matmul(inp, w))

    shared = tf.make_template("features", feature_net)
    feats_src = shared(x)
    x_tgt = tf.placeholder(tf.float32, [None, 3])
    feats_tgt = shared(x_tgt)
    out["template_vars"] = [v.name for v in tf.global_variables()]
    out["template_scopes"] = [feats_src.op.name, feats_tgt.op.name]

    # DANN: label loss on the source, domain loss through the flipped features on both.
    y = tf.placeholder(tf.float32, [None, 1])
    w_label = tf.Variable(fixed_init([4, 1], 2102), name="label_w")
    w_domain = tf.Variable(fixed_init([4, 1], 2103), name="domain_w")
    label_loss = tf.reduce_mean(tf.square(tf.matmul(feats_src, w_label) - y))
    both = tf.concat([feats_src, feats_tgt], 0)
    domain_logits = tf.matmul(flip_gradient(tf, both, l=0.3), w_domain)
    domain_labels = tf.concat([tf.zeros_like(y), tf.ones_like(y)], 0)
    domain_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=domain_labels, logits=domain_logits))
    total = label_loss + domain_loss
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(total)

    xs = rng.randn(8, 3).astype(np.float32)
    xt = (rng.randn(8, 3) + 0.5).astype(np.float32)
    ys = xs[:, :1] * 2.0
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out["flip_grad"] = sess.run(g_flip, {x: np.ones((2, 3), np.float32)}).tolist()
        out["guided_grad"] = sess.run(g_guided, {z: [1.0, 2.0, -1.0, 3.0]}).tolist()
        out["clipped_grad"] = sess.run(g_clip, {c: [1.0, 2.0, 3.0]}).tolist()
        for _ in range(steps):
            _, a, b = sess.run([train, label_loss, domain_loss], {x: xs, x_tgt: xt, y: ys})
            losses.append([float(a), float(b)])
        out["features_w"] = sess.run(tf.trainable_variables()[0]).ravel().tolist()
    out["losses"] = losses
    return out


if __name__ == "__main__":
    run_as_script(main, 4)
