"""TF1's models/tutorials/rnn/ptb (reader.ptb_producer, ptb_word_lm.py with SmallConfig), shrunk: a word-level
LSTM language model over a synthetic corpus. ptb_producer slices batches with range_input_producer; the model
is embedding_lookup, MultiRNNCell of BasicLSTMCells unrolled by hand under variable_scope("RNN") with
reuse_variables, a hand-built sequence loss, clip_by_global_norm, and a learning rate Variable set with
tf.assign; Train/Valid models share variables through variable_scope("Model", reuse=True); a Supervisor runs it.

After initialization every trainable variable is loaded from numpy (`fixed=True`), and keep_prob is 1.0 as in
SmallConfig, so the costs are deterministic.
"""

import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 2  # epochs


class SmallConfig:
    init_scale = 0.1
    learning_rate = 1.0
    max_grad_norm = 5
    num_layers = 2
    num_steps = 5
    hidden_size = 16
    max_epoch = 1
    max_max_epoch = 2
    keep_prob = 1.0
    lr_decay = 0.5
    batch_size = 4
    vocab_size = 40


def ptb_producer(tf, raw_data, batch_size, num_steps, name=None):
    with tf.name_scope(name, "PTBProducer", [raw_data, batch_size, num_steps]):
        raw_data = tf.convert_to_tensor(raw_data, name="raw_data", dtype=tf.int32)
        data_len = tf.size(raw_data)
        batch_len = data_len // batch_size
        data = tf.reshape(raw_data[0 : batch_size * batch_len], [batch_size, batch_len])
        epoch_size = (batch_len - 1) // num_steps
        assertion = tf.assert_positive(
            epoch_size, message="epoch_size == 0, decrease batch_size or num_steps"
        )
        with tf.control_dependencies([assertion]):
            epoch_size = tf.identity(epoch_size, name="epoch_size")
        i = tf.train.range_input_producer(epoch_size, shuffle=False).dequeue()
        x = tf.strided_slice(data, [0, i * num_steps], [batch_size, (i + 1) * num_steps])
        x.set_shape([batch_size, num_steps])
        y = tf.strided_slice(data, [0, i * num_steps + 1], [batch_size, (i + 1) * num_steps + 1])
        y.set_shape([batch_size, num_steps])
        return x, y


class PTBInput:
    def __init__(self, tf, config, data, name=None):
        self.batch_size = batch_size = config.batch_size
        self.num_steps = num_steps = config.num_steps
        self.epoch_size = ((len(data) // batch_size) - 1) // num_steps
        self.input_data, self.targets = ptb_producer(tf, data, batch_size, num_steps, name=name)


class PTBModel:
    def __init__(self, tf, is_training, config, input_):
        self._is_training = is_training
        self._input = input_
        self.batch_size = input_.batch_size
        self.num_steps = input_.num_steps
        size = config.hidden_size
        vocab_size = config.vocab_size

        with tf.device("/cpu:0"):
            embedding = tf.get_variable("embedding", [vocab_size, size], dtype=tf.float32)
            inputs = tf.nn.embedding_lookup(embedding, input_.input_data)
        if is_training and config.keep_prob < 1:
            inputs = tf.nn.dropout(inputs, config.keep_prob)

        def make_cell():
            cell = tf.nn.rnn_cell.BasicLSTMCell(
                config.hidden_size, forget_bias=0.0, state_is_tuple=True, reuse=not is_training
            )
            if is_training and config.keep_prob < 1:
                cell = tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=config.keep_prob)
            return cell

        cell = tf.nn.rnn_cell.MultiRNNCell(
            [make_cell() for _ in range(config.num_layers)], state_is_tuple=True
        )
        self._initial_state = cell.zero_state(config.batch_size, tf.float32)
        state = self._initial_state
        outputs = []
        with tf.variable_scope("RNN"):
            for time_step in range(self.num_steps):
                if time_step > 0:
                    tf.get_variable_scope().reuse_variables()
                (cell_output, state) = cell(inputs[:, time_step, :], state)
                outputs.append(cell_output)
        output = tf.reshape(tf.concat(outputs, 1), [-1, config.hidden_size])

        softmax_w = tf.get_variable("softmax_w", [size, vocab_size], dtype=tf.float32)
        softmax_b = tf.get_variable("softmax_b", [vocab_size], dtype=tf.float32)
        logits = tf.nn.xw_plus_b(output, softmax_w, softmax_b)
        logits = tf.reshape(logits, [self.batch_size, self.num_steps, vocab_size])
        # sequence_loss(average_across_timesteps=False, average_across_batch=True), by hand.
        crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=input_.targets, logits=logits)
        loss = (
            tf.reduce_sum(crossent * tf.ones([self.batch_size, self.num_steps]), axis=[0]) / self.batch_size
        )
        self._cost = tf.reduce_sum(loss)
        self._final_state = state

        if not is_training:
            return
        self._lr = tf.Variable(0.0, trainable=False)
        tvars = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(self._cost, tvars), config.max_grad_norm)
        optimizer = tf.train.GradientDescentOptimizer(self._lr)
        self._train_op = optimizer.apply_gradients(
            zip(grads, tvars), global_step=tf.train.get_or_create_global_step()
        )
        self._new_lr = tf.placeholder(tf.float32, shape=[], name="new_learning_rate")
        self._lr_update = tf.assign(self._lr, self._new_lr)

    def assign_lr(self, session, lr_value):
        session.run(self._lr_update, feed_dict={self._new_lr: lr_value})


def run_epoch(session, model, eval_op=None):
    costs = 0.0
    iters = 0
    state = session.run(model._initial_state)
    fetches = {"cost": model._cost, "final_state": model._final_state}
    if eval_op is not None:
        fetches["eval_op"] = eval_op
    for _ in range(model._input.epoch_size):
        feed_dict = {}
        for i, (c, h) in enumerate(model._initial_state):
            feed_dict[c] = state[i].c
            feed_dict[h] = state[i].h
        vals = session.run(fetches, feed_dict)
        cost = vals["cost"]
        state = vals["final_state"]
        costs += cost
        iters += model._input.num_steps
    return float(np.exp(costs / iters))


def main(tf, steps=2, fixed=True):
    tf.reset_default_graph()
    rng = np.random.RandomState(7)
    # A corpus with structure: word k is mostly followed by word k + 1.
    words = [0]
    for _ in range(499):
        words.append((words[-1] + 1) % 40 if rng.rand() < 0.8 else rng.randint(40))
    train_data, valid_data = words[:400], words[400:]
    config = SmallConfig()
    config.max_max_epoch = steps
    eval_config = SmallConfig()
    save_path = tempfile.mkdtemp()

    with tf.Graph().as_default():
        initializer = tf.random_uniform_initializer(-config.init_scale, config.init_scale)
        with tf.name_scope("Train"):
            train_input = PTBInput(tf, config=config, data=train_data, name="TrainInput")
            with tf.variable_scope("Model", reuse=None, initializer=initializer):
                m = PTBModel(tf, is_training=True, config=config, input_=train_input)
            tf.summary.scalar("Training Loss", m._cost)
            tf.summary.scalar("Learning Rate", m._lr)
        with tf.name_scope("Valid"):
            valid_input = PTBInput(tf, config=eval_config, data=valid_data, name="ValidInput")
            with tf.variable_scope("Model", reuse=True, initializer=initializer):
                mvalid = PTBModel(tf, is_training=False, config=eval_config, input_=valid_input)
            tf.summary.scalar("Validation Loss", mvalid._cost)

        tvars = tf.trainable_variables()
        names = [v.op.name for v in tvars]
        shapes = [v.shape.as_list() for v in tvars]
        # No summary thread: it would evaluate the summaries (and so dequeue a batch from the
        # input queues) at a moment that races with the first step, in TF as here.
        sv = tf.train.Supervisor(logdir=save_path, save_summaries_secs=0)
        config_proto = tf.ConfigProto(allow_soft_placement=True)
        train_ppl, valid_ppl = [], []
        with sv.managed_session(config=config_proto) as session:
            if fixed:
                for k, v in enumerate(tvars):
                    v.load(fixed_init(v.shape.as_list(), 300 + k), session)
            for i in range(config.max_max_epoch):
                lr_decay = config.lr_decay ** max(i + 1 - config.max_epoch, 0.0)
                m.assign_lr(session, config.learning_rate * lr_decay)
                train_ppl.append(run_epoch(session, m, eval_op=m._train_op))
                valid_ppl.append(run_epoch(session, mvalid))
            lr = float(session.run(m._lr))
            step = int(session.run(tf.train.get_global_step()))
            sv.saver.save(session, save_path + "/model", global_step=sv.global_step)
        ckpt = tf.train.latest_checkpoint(save_path)
    shutil.rmtree(save_path)
    return {
        "train_perplexity": train_ppl,
        "valid_perplexity": valid_ppl,
        "final_lr": lr,
        "global_step": step,
        "trainable": names,
        "shapes": shapes,
        "checkpoint_name": ckpt.rsplit("/", 1)[-1],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
