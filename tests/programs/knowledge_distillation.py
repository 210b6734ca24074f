"""Knowledge distillation (Hinton et al.) as the TF1 repositories wrote it: a teacher MLP trained first, then a
smaller student under its own variable_scope trained on soft targets tf.nn.softmax(teacher_logits / T) with
tf.stop_gradient, the soft loss tf.nn.softmax_cross_entropy_with_logits_v2(labels=soft, logits=student / T)
scaled by T**2, plus the hard loss, var_list restricted to the student's scope by
tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="student"); also the KL form with tf.distributions
(Categorical kl_divergence) and tf.keras.losses-free log_softmax arithmetic, and temperature sweeps.

Deterministic: weights and data from numpy.
"""

from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    images, labels = fake_mnist(48, seed=51)
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y = tf.placeholder(tf.float32, [None, 10], name="y")
    T = tf.placeholder_with_default(4.0, [], name="temperature")

    with tf.variable_scope("teacher"):
        h = tf.layers.dense(x, 64, activation=tf.nn.relu,
                            kernel_initializer=tf.constant_initializer(fixed_init([784, 64], 5100, 0.05)))
        teacher_logits = tf.layers.dense(h, 10, kernel_initializer=tf.constant_initializer(fixed_init([64, 10], 5101, 0.2)))
    with tf.variable_scope("student"):
        s_w = tf.get_variable("w", initializer=fixed_init([784, 10], 5102, 0.02))
        s_b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
        student_logits = tf.matmul(x, s_w) + s_b

    teacher_loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=teacher_logits))
    teacher_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="teacher")
    train_teacher = tf.train.AdamOptimizer(0.01).minimize(teacher_loss, var_list=teacher_vars)

    soft_targets = tf.stop_gradient(tf.nn.softmax(teacher_logits / T))
    soft_loss = tf.reduce_mean(
        tf.nn.softmax_cross_entropy_with_logits_v2(labels=soft_targets, logits=student_logits / T)) * T * T
    hard_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.argmax(y, 1),
                                                                              logits=student_logits))
    student_loss = 0.9 * soft_loss + 0.1 * hard_loss
    student_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="student")
    train_student = tf.train.GradientDescentOptimizer(0.1).minimize(student_loss, var_list=student_vars)

    # KL(teacher || student) at temperature T, three ways.
    log_p = tf.nn.log_softmax(teacher_logits / T)
    log_q = tf.nn.log_softmax(student_logits / T)
    kl_manual = tf.reduce_mean(tf.reduce_sum(tf.exp(log_p) * (log_p - log_q), axis=1))
    kl_dist = tf.reduce_mean(tf.distributions.kl_divergence(
        tf.distributions.Categorical(logits=teacher_logits / T), tf.distributions.Categorical(logits=student_logits / T)))
    kl_keras = tf.reduce_mean(tf.keras.losses.KLD(tf.nn.softmax(teacher_logits / T), tf.nn.softmax(student_logits / T)))
    agree = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(teacher_logits, 1), tf.argmax(student_logits, 1)), tf.float32))

    out = {"teacher_losses": [], "losses": [], "soft": [], "hard": []}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: images, y: labels}
        for _ in range(steps):
            _, l = sess.run([train_teacher, teacher_loss], feed)
            out["teacher_losses"].append(float(l))
        for _ in range(steps):
            _, l, s, hl = sess.run([train_student, student_loss, soft_loss, hard_loss], feed)
            out["losses"].append(float(l))
            out["soft"].append(float(s))
            out["hard"].append(float(hl))
        for t in (1.0, 2.0, 8.0):
            km, kd, kk = sess.run([kl_manual, kl_dist, kl_keras], {x: images, T: t})
            out[f"kl_T{int(t)}"] = [float(km), float(kd), float(kk)]
        out["agreement"] = float(sess.run(agree, feed))
    out["student_vars"] = [v.name for v in student_vars]
    out["teacher_vars"] = [v.name for v in teacher_vars]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
