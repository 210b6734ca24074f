"""A TF1 DQN the way the 2016-2018 tutorials wrote it: online and target Q-networks built by one function under
two variable scopes, the target synced by a list of tf.assign ops over tf.get_collection(TRAINABLE_VARIABLES,
scope=...), Q(s, a) picked with tf.one_hot and reduce_sum, the TD target from the target network's reduce_max
through tf.stop_gradient, tf.losses.huber_loss, RMSProp with momentum, epsilon-greedy actions in numpy on a
tiny deterministic chain environment, and a replay buffer sampled with a seeded numpy RandomState.

Weights are loaded from numpy after initialization, so the losses and Q-values are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 30
N_STATES = 6
N_ACTIONS = 2


def q_network(tf, states, scope):
    with tf.variable_scope(scope):
        h = tf.layers.dense(states, 16, activation=tf.nn.relu, name="hidden")
        return tf.layers.dense(h, N_ACTIONS, name="q")


def env_step(state, action):
    nxt = min(state + 1, N_STATES - 1) if action == 1 else max(state - 1, 0)
    reward = 1.0 if nxt == N_STATES - 1 else 0.0
    return nxt, reward, nxt == N_STATES - 1


def main(tf, steps=30):
    tf.reset_default_graph()
    rng = np.random.RandomState(22)
    gamma = 0.9

    states = tf.placeholder(tf.float32, [None, N_STATES], name="states")
    actions = tf.placeholder(tf.int32, [None], name="actions")
    rewards = tf.placeholder(tf.float32, [None], name="rewards")
    next_states = tf.placeholder(tf.float32, [None, N_STATES], name="next_states")
    done = tf.placeholder(tf.float32, [None], name="done")

    q = q_network(tf, states, "online")
    q_next = q_network(tf, next_states, "target")
    q_sa = tf.reduce_sum(q * tf.one_hot(actions, N_ACTIONS), axis=1)
    target = rewards + gamma * (1.0 - done) * tf.reduce_max(q_next, axis=1)
    loss = tf.losses.huber_loss(tf.stop_gradient(target), q_sa)
    online_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="online")
    target_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="target")
    optimizer = tf.train.RMSPropOptimizer(0.01, decay=0.95, momentum=0.5, epsilon=0.01)
    train_op = optimizer.minimize(loss, var_list=online_vars)
    sync = tf.group(*[tf.assign(t, o) for o, t in zip(online_vars, target_vars)])
    greedy = tf.argmax(q, axis=1)

    def onehot(s):
        return np.eye(N_STATES, dtype=np.float32)[s]

    losses, episode_lengths = [], []
    buffer = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for k, v in enumerate(online_vars):
            v.load(fixed_init(v.shape.as_list(), 1100 + k, scale=0.3), sess)
        sess.run(sync)
        state, length = 0, 0
        for step in range(steps):
            eps = max(0.1, 1.0 - step / 20.0)
            if rng.rand() < eps:
                action = rng.randint(N_ACTIONS)
            else:
                action = int(sess.run(greedy, {states: onehot([state])})[0])
            nxt, reward, terminal = env_step(state, action)
            buffer.append((state, action, reward, nxt, float(terminal)))
            state, length = (0, 0) if terminal else (nxt, length + 1)
            if terminal:
                episode_lengths.append(length)
            batch = [buffer[i] for i in rng.randint(len(buffer), size=8)]
            s, a, r, s2, d = (np.array(x) for x in zip(*batch))
            _, l = sess.run(
                [train_op, loss],
                {states: onehot(s), actions: a, rewards: r, next_states: onehot(s2), done: d},
            )
            losses.append(float(l))
            if step % 10 == 9:
                sess.run(sync)
        q_values = sess.run(q, {states: np.eye(N_STATES, dtype=np.float32)})
    return {
        "losses": losses,
        "q_values": q_values.tolist(),
        "episode_lengths": episode_lengths,
        "online_vars": [v.name for v in online_vars],
        "target_vars": [v.name for v in target_vars],
        "slots": sorted(optimizer.get_slot_names()),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
