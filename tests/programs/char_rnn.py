"""sherjilozair/char-rnn-tensorflow's model.py/train.py/sample(), without tf.contrib: a MultiRNNCell of LSTMCells
in DropoutWrapper (keep probabilities 1.0 as its defaults), embedding_lookup, tf.split + squeeze into a list
of inputs for legacy rnn_decoder's role played by static_rnn with the initial_state placeholders of
cell.zero_state, a softmax layer over the concatenated outputs, a per-example loss averaged, lr as a
non-trainable Variable set with tf.assign, clip_by_global_norm over tf.gradients, Adam's apply_gradients,
a Saver of tf.global_variables(); sampling feeds the state tuples back one character at a time (argmax, the
deterministic variant of its 'pick' options).

Weights are loaded from numpy after initialization, so losses and the sampled text are deterministic.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 10
TEXT = "hello world, hello tensorflow. hello rust, hello graph. " * 4


class Model:
    def __init__(self, tf, vocab_size, training=True):
        rnn_size, num_layers = 24, 2
        self.batch_size, self.seq_length = (4, 10) if training else (1, 1)
        cells = []
        for _ in range(num_layers):
            cell = tf.nn.rnn_cell.LSTMCell(rnn_size)
            if training:
                cell = tf.nn.rnn_cell.DropoutWrapper(cell, input_keep_prob=1.0, output_keep_prob=1.0)
            cells.append(cell)
        self.cell = cell = tf.nn.rnn_cell.MultiRNNCell(cells, state_is_tuple=True)
        self.input_data = tf.placeholder(tf.int32, [self.batch_size, self.seq_length])
        self.targets = tf.placeholder(tf.int32, [self.batch_size, self.seq_length])
        self.initial_state = cell.zero_state(self.batch_size, tf.float32)

        with tf.variable_scope("rnnlm"):
            softmax_w = tf.get_variable("softmax_w", [rnn_size, vocab_size])
            softmax_b = tf.get_variable("softmax_b", [vocab_size])
            embedding = tf.get_variable("embedding", [vocab_size, rnn_size])
            inputs = tf.nn.embedding_lookup(embedding, self.input_data)
            inputs = tf.split(inputs, self.seq_length, 1)
            inputs = [tf.squeeze(input_, [1]) for input_ in inputs]
            outputs, last_state = tf.nn.static_rnn(
                cell, inputs, initial_state=self.initial_state, scope="rnnlm"
            )
        output = tf.reshape(tf.concat(outputs, 1), [-1, rnn_size])
        self.logits = tf.matmul(output, softmax_w) + softmax_b
        self.probs = tf.nn.softmax(self.logits)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(self.targets, [-1]), logits=self.logits
        )
        with tf.name_scope("cost"):
            self.cost = tf.reduce_sum(loss) / self.batch_size / self.seq_length
        self.final_state = last_state
        self.lr = tf.Variable(0.0, trainable=False)
        tvars = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(self.cost, tvars), 5.0)
        with tf.name_scope("optimizer"):
            optimizer = tf.train.AdamOptimizer(self.lr)
        self.train_op = optimizer.apply_gradients(zip(grads, tvars))
        tf.summary.histogram("logits", self.logits)
        tf.summary.scalar("train_loss", self.cost)

    def sample(self, tf, sess, chars, vocab, num=20, prime="hel"):
        state = sess.run(self.cell.zero_state(1, tf.float32))
        for char in prime[:-1]:
            x = np.array([[vocab[char]]])
            state = sess.run(self.final_state, {self.input_data: x, self.initial_state: state})
        ret = prime
        char = prime[-1]
        for _ in range(num):
            x = np.array([[vocab[char]]])
            probs, state = sess.run(
                [self.probs, self.final_state], {self.input_data: x, self.initial_state: state}
            )
            char = chars[int(np.argmax(probs[0]))]
            ret += char
        return ret


def main(tf, steps=10):
    tf.reset_default_graph()
    chars = sorted(set(TEXT))
    vocab = {c: i for i, c in enumerate(chars)}
    data = np.array([vocab[c] for c in TEXT])
    n = (len(data) - 1) // 40 * 40
    xdata, ydata = data[:n].reshape(4, -1), data[1 : n + 1].reshape(4, -1)
    save_dir = tempfile.mkdtemp()

    model = Model(tf, len(chars))
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for k, v in enumerate(tf.trainable_variables()):
            v.load(fixed_init(v.shape.as_list(), 1500 + k, scale=0.2), sess)
        saver = tf.train.Saver(tf.global_variables())
        sess.run(tf.assign(model.lr, 0.02))
        state = sess.run(model.initial_state)
        for b in range(steps):
            lo = (b * 10) % xdata.shape[1]
            feed = {model.input_data: xdata[:, lo : lo + 10], model.targets: ydata[:, lo : lo + 10]}
            for i, (c, h) in enumerate(model.initial_state):
                feed[c] = state[i].c
                feed[h] = state[i].h
            train_loss, state, _ = sess.run([model.cost, model.final_state, model.train_op], feed)
            losses.append(float(train_loss))
        saver.save(sess, os.path.join(save_dir, "model.ckpt"), global_step=steps)

    tf.reset_default_graph()
    sampler = Model(tf, len(chars), training=False)
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        saver = tf.train.Saver(tf.global_variables())
        ckpt = tf.train.get_checkpoint_state(save_dir)
        saver.restore(sess, ckpt.model_checkpoint_path)
        text = sampler.sample(tf, sess, chars, vocab)
    shutil.rmtree(save_dir)
    return {"losses": losses, "sample": text, "variables": [v.name for v in tf.global_variables()]}


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
