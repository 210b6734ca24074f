"""Policy gradients the way Géron's TF1 "Hands-On Machine Learning" (chapter 16) wrote REINFORCE for
CartPole: a policy network of tf.layers.dense with a variance-scaling initializer, an action sampled by
tf.multinomial(tf.log(tf.concat([p_left, 1 - p_left], axis=1)), num_samples=1), the cross-entropy with the
sampled action as target, optimizer.compute_gradients, one tf.placeholder per gradient (shape from
grad.get_shape()) fed with the discounted, normalized rewards times the recorded gradients, and
optimizer.apply_gradients over the placeholders; the environment is a tiny deterministic numpy cart, and the
sampled actions come from the graph seed.

Initial weights come from numpy; tf.set_random_seed and the op seed make the sampled actions TF's own.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 3


class Cart:
    """A 1-D pole: the state drifts with the chosen push; the episode ends when |angle| > 1."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.s = self.rng.uniform(-0.2, 0.2, size=4).astype(np.float32)
        return self.s.copy()

    def step(self, action):
        push = 0.1 if action == 1 else -0.1
        x, v, a, w = self.s
        w = w + 0.3 * a - push
        a = a + 0.5 * w
        v = v + push
        x = x + 0.1 * v
        self.s = np.array([x, v, a, w], np.float32)
        done = abs(a) > 1.0 or abs(x) > 2.0
        return self.s.copy(), 1.0, done


def discount_rewards(rewards, discount_rate):
    discounted = np.empty(len(rewards))
    cumulative = 0.0
    for step in reversed(range(len(rewards))):
        cumulative = rewards[step] + cumulative * discount_rate
        discounted[step] = cumulative
    return discounted


def discount_and_normalize_rewards(all_rewards, discount_rate):
    all_discounted = [discount_rewards(r, discount_rate) for r in all_rewards]
    flat = np.concatenate(all_discounted)
    mean, std = flat.mean(), flat.std()
    return [(d - mean) / std for d in all_discounted]


def main(tf, steps=3):
    tf.reset_default_graph()
    tf.set_random_seed(42)
    n_inputs, n_hidden, n_outputs = 4, 4, 1
    learning_rate = 0.01

    X = tf.placeholder(tf.float32, shape=[None, n_inputs])
    hidden = tf.layers.dense(X, n_hidden, activation=tf.nn.elu,
                             kernel_initializer=tf.constant_initializer(fixed_init([4, 4], 1000, 0.5)))
    logits = tf.layers.dense(hidden, n_outputs,
                             kernel_initializer=tf.constant_initializer(fixed_init([4, 1], 1001, 0.5)))
    outputs = tf.nn.sigmoid(logits)
    p_left_and_right = tf.concat(axis=1, values=[outputs, 1 - outputs])
    action = tf.multinomial(tf.log(p_left_and_right), num_samples=1, seed=7)
    y = 1.0 - tf.to_float(action)
    cross_entropy = tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits)
    optimizer = tf.train.AdamOptimizer(learning_rate)
    grads_and_vars = optimizer.compute_gradients(cross_entropy)
    gradients = [grad for grad, variable in grads_and_vars]
    gradient_placeholders = []
    grads_and_vars_feed = []
    for grad, variable in grads_and_vars:
        gradient_placeholder = tf.placeholder(tf.float32, shape=grad.get_shape())
        gradient_placeholders.append(gradient_placeholder)
        grads_and_vars_feed.append((gradient_placeholder, variable))
    training_op = optimizer.apply_gradients(grads_and_vars_feed)
    init = tf.global_variables_initializer()

    env = Cart(3)
    n_games_per_update = 3
    n_max_steps = 12
    discount_rate = 0.95
    out = {
        "gradient_names": [g.name for g in gradients],
        "placeholder_shapes": [str(p.shape) for p in gradient_placeholders],
        "action_dtype": action.dtype.name,
    }
    episode_lengths, actions_taken, mean_grads = [], [], []
    with tf.Session() as sess:
        init.run()
        for _ in range(steps):
            all_rewards = []
            all_gradients = []
            for _ in range(n_games_per_update):
                current_rewards = []
                current_gradients = []
                obs = env.reset()
                for _ in range(n_max_steps):
                    action_val, gradients_val = sess.run([action, gradients], feed_dict={X: obs.reshape(1, n_inputs)})
                    actions_taken.append(int(action_val[0][0]))
                    obs, reward, done = env.step(action_val[0][0])
                    current_rewards.append(reward)
                    current_gradients.append(gradients_val)
                    if done:
                        break
                episode_lengths.append(len(current_rewards))
                all_rewards.append(current_rewards)
                all_gradients.append(current_gradients)
            all_rewards = discount_and_normalize_rewards(all_rewards, discount_rate)
            feed_dict = {}
            for var_index, gradient_placeholder in enumerate(gradient_placeholders):
                mean_gradients = np.mean(
                    [reward * all_gradients[game_index][step][var_index]
                     for game_index, rewards in enumerate(all_rewards)
                     for step, reward in enumerate(rewards)], axis=0)
                feed_dict[gradient_placeholder] = mean_gradients
            mean_grads.append(float(np.abs(feed_dict[gradient_placeholders[0]]).sum()))
            sess.run(training_op, feed_dict=feed_dict)
        final_p = sess.run(outputs, {X: np.ones((1, 4), np.float32)})
    out["episode_lengths"] = episode_lengths
    out["actions"] = actions_taken
    out["mean_grads"] = mean_grads
    out["final_p_left"] = float(final_p[0, 0])
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
