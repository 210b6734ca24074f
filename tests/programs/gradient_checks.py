"""Checking and steering gradients in TF1 graphs, as unit tests and research code did it: tf.test.compute_gradient
and compute_gradient_error on a small network (numeric vs symbolic Jacobians), tf.hessians of a quadratic
form, tf.gradients with grad_ys (a vector-Jacobian product), stop_gradients, unconnected_gradients='zero',
aggregation_method, a gradient through tf.gather (IndexedSlices densified by tf.convert_to_tensor), the
double-backprop gradient penalty of WGAN-GP (the norm of tf.gradients of the critic w.r.t. interpolates, then
minimized), and tf.nn.raw_rnn with a loop_fn emitting a running sum whose gradient flows to the initial state.

Everything is deterministic (numpy inputs, fixed weights, a fixed interpolation coefficient).
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 4


def main(tf, steps=4):
    tf.reset_default_graph()
    out = {}
    x = tf.constant(fixed_init([3, 4], 2000, 1.0), dtype=tf.float64)
    w = tf.constant(fixed_init([4, 2], 2001, 1.0), dtype=tf.float64)
    y = tf.tanh(tf.matmul(x, w))
    with tf.Session() as sess:
        jac_t, jac_n = tf.test.compute_gradient(w, [4, 2], y, [3, 2], x_init_value=fixed_init([4, 2], 2001, 1.0).astype(np.float64))
        out["jacobian_theoretical"] = jac_t.ravel().tolist()
        out["jacobian_agrees"] = bool(np.allclose(jac_t, jac_n, atol=1e-5))
        err = tf.test.compute_gradient_error(x, [3, 4], tf.reduce_sum(y * y), [])
        out["gradient_error_small"] = bool(err < 1e-3)

        v = tf.constant([1.0, -2.0, 0.5], dtype=tf.float64)
        A = tf.constant([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 3.0]], dtype=tf.float64)
        quad = 0.5 * tf.reduce_sum(v * tf.linalg.matvec(A, v)) + tf.reduce_sum(v ** 3)
        out["hessian"] = sess.run(tf.hessians(quad, v)[0]).ravel().tolist()

        a = tf.constant([1.0, 2.0, 3.0])
        b = 2.0 * a
        c = a + b
        vjp = tf.gradients(tf.stack([c, b * b]), a, grad_ys=tf.constant([[1.0, 0.0, 1.0], [0.5, 0.5, 0.5]]))
        stopped = tf.gradients(c, [a, b], stop_gradients=[b])
        unconnected = tf.gradients(c, [a, tf.constant(1.0)], unconnected_gradients="zero")
        tree = tf.gradients(a * a + a * b + b, a, aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)
        table = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
        gathered = tf.gather(table, [0, 2, 2])
        sparse_grad = tf.gradients(tf.reduce_sum(gathered * gathered), table)[0]
        r = sess.run({"vjp": vjp[0], "stopped": stopped, "unconnected": unconnected, "tree": tree[0],
                      "sparse_values": sparse_grad.values, "sparse_indices": sparse_grad.indices,
                      "dense": tf.convert_to_tensor(sparse_grad)})
        out.update({k: np.asarray(v).ravel().tolist() if not isinstance(v, list) else [np.asarray(e).tolist() for e in v]
                    for k, v in r.items()})
        out["sparse_type"] = type(sparse_grad).__name__

    # WGAN-GP gradient penalty (double backprop).
    tf.reset_default_graph()
    real = tf.constant(fixed_init([6, 3], 2002, 1.0))
    fake = tf.constant(fixed_init([6, 3], 2003, 1.0))
    with tf.variable_scope("critic"):
        cw = tf.get_variable("w", initializer=fixed_init([3, 5], 2004, 0.5))
        cv = tf.get_variable("v", initializer=fixed_init([5, 1], 2005, 0.5))

    def critic(inp):
        return tf.matmul(tf.nn.softplus(tf.matmul(inp, cw)), cv)

    alpha = tf.constant(np.linspace(0.1, 0.9, 6).reshape(6, 1).astype(np.float32))
    interpolates = real + alpha * (fake - real)
    grads = tf.gradients(critic(interpolates), [interpolates])[0]
    slopes = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=1))
    penalty = tf.reduce_mean((slopes - 1.0) ** 2)
    critic_loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real)) + 10.0 * penalty
    train = tf.train.AdamOptimizer(0.05, beta1=0.5, beta2=0.9).minimize(critic_loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            # Read the loss first: fetched with the train op, TF may read the weights after their update
            # (nothing orders the loss's last sum before the ref-variable updates).
            losses.append(float(sess.run(critic_loss)))
            sess.run(train)
        out["penalty"] = float(sess.run(penalty))
    out["losses"] = losses

    # raw_rnn with a loop_fn: a running sum of the inputs; the gradient reaches the initial state.
    tf.reset_default_graph()
    max_time, batch, depth = 4, 2, 3
    inputs = tf.constant(fixed_init([max_time, batch, depth], 2006, 1.0))
    sequence_length = tf.constant([4, 2])
    inputs_ta = tf.TensorArray(dtype=tf.float32, size=max_time).unstack(inputs)
    cell = tf.nn.rnn_cell.BasicRNNCell(depth, activation=tf.identity)
    init_state = tf.Variable(np.full([batch, depth], 0.5, np.float32), name="init_state")

    def loop_fn(time, cell_output, cell_state, loop_state):
        emit_output = cell_output
        next_cell_state = init_state if cell_output is None else cell_state
        elements_finished = time >= sequence_length
        finished = tf.reduce_all(elements_finished)
        next_input = tf.cond(finished, lambda: tf.zeros([batch, depth], dtype=tf.float32),
                             lambda: inputs_ta.read(time))
        return elements_finished, next_input, next_cell_state, emit_output, None

    # The kernel [inputs; state] is two stacked identities: h' = x + h (a running sum).
    kernel = np.vstack([np.eye(3), np.eye(3)]).astype(np.float32)
    with tf.variable_scope("rnn", initializer=tf.constant_initializer(kernel)):
        outputs_ta, final_state, _ = tf.nn.raw_rnn(cell, loop_fn)
    outputs = outputs_ta.stack()
    g_init = tf.gradients(tf.reduce_sum(final_state), init_state)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, s, g = sess.run([outputs, final_state, g_init])
    out["raw_rnn_outputs"] = o.ravel().tolist()
    out["raw_rnn_final"] = s.ravel().tolist()
    out["raw_rnn_grad"] = g.ravel().tolist()
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
