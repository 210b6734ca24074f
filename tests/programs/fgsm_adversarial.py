"""FGSM adversarial examples (Goodfellow et al.; cleverhans' fgm() in TF1): a small softmax classifier trained on
fake MNIST, then x_adv = tf.stop_gradient(x + eps * tf.sign(tf.gradients(loss, x)[0])) clipped to [0, 1], with
the label leaking fix (labels from the model's own predictions by tf.equal(logits, tf.reduce_max(logits, 1,
keepdims=True)), normalized), the L2 variant (gradient / sqrt(sum(g^2))), iterative FGSM (BIM) in a
tf.while_loop with tf.clip_by_value to the eps-ball, and adversarial training mixing clean and adversarial
losses.

Deterministic: weights from numpy, data from numpy.
"""

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 6


def fgm(tf, x, logits, y=None, eps=0.3, ord_=np.inf, clip_min=0.0, clip_max=1.0):
    if y is None:
        preds_max = tf.reduce_max(logits, 1, keepdims=True)
        y = tf.to_float(tf.equal(logits, preds_max))
        y = tf.stop_gradient(y)
    y = y / tf.reduce_sum(y, 1, keepdims=True)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    grad, = tf.gradients(loss, x)
    if ord_ == np.inf:
        optimal = tf.sign(grad)
        optimal = tf.stop_gradient(optimal)
    else:
        square = tf.maximum(1e-12, tf.reduce_sum(tf.square(grad), axis=1, keepdims=True))
        optimal = grad / tf.sqrt(square)
    adv_x = x + eps * optimal
    return tf.clip_by_value(adv_x, clip_min, clip_max)


def main(tf, steps=6):
    images, labels = fake_mnist(64, seed=41)
    test_images, test_labels = fake_mnist(32, seed=42)
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y_ = tf.placeholder(tf.float32, [None, 10], name="y_")
    W1 = tf.Variable(fixed_init([784, 32], 4100, 0.05))
    b1 = tf.Variable(tf.zeros([32]))
    W2 = tf.Variable(fixed_init([32, 10], 4101, 0.2))
    b2 = tf.Variable(tf.zeros([10]))

    def model(inp):
        return tf.matmul(tf.nn.relu(tf.matmul(inp, W1) + b1), W2) + b2

    logits = model(x)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
    correct = tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    x_adv = fgm(tf, x, logits, eps=0.1)
    x_adv_true = fgm(tf, x, logits, y=y_, eps=0.1)
    x_adv_l2 = fgm(tf, x, logits, y=y_, eps=2.0, ord_=2)
    adv_logits = model(x_adv)
    adv_acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(adv_logits, 1), tf.argmax(y_, 1)), tf.float32))

    # Basic iterative method in a while loop.
    eps, eps_iter, nb_iter = 0.1, 0.03, 4

    def bim_body(i, adv):
        step_adv = fgm(tf, adv, model(adv), y=y_, eps=eps_iter)
        eta = tf.clip_by_value(step_adv - x, -eps, eps)
        return i + 1, tf.clip_by_value(x + eta, 0.0, 1.0)

    _, x_bim = tf.while_loop(lambda i, _: i < nb_iter, bim_body, [tf.constant(0), x], back_prop=False)
    bim_acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(model(x_bim), 1), tf.argmax(y_, 1)), tf.float32))

    adv_loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=model(x_adv_true)))
    total = 0.5 * loss + 0.5 * adv_loss
    train = tf.train.GradientDescentOptimizer(0.5).minimize(total)
    out = {"losses": [], "adv_losses": []}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            _, l, al = sess.run([train, loss, adv_loss], {x: images, y_: labels})
            out["losses"].append(float(l))
            out["adv_losses"].append(float(al))
        feed = {x: test_images, y_: test_labels}
        a, aa, ba, xa, xl2, xb = sess.run([accuracy, adv_acc, bim_acc, x_adv, x_adv_l2, x_bim], feed)
    out["clean_acc"] = float(a)
    out["fgsm_acc"] = float(aa)
    out["bim_acc"] = float(ba)
    out["fgsm_delta_max"] = float(np.abs(xa - test_images).max())
    out["fgsm_sum"] = float(xa.sum())
    out["l2_sum"] = float(xl2.sum())
    out["bim_sum"] = float(xb.sum())
    out["bim_delta_max"] = float(np.abs(xb - test_images).max())
    out["x_adv_name"] = x_adv.name
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
