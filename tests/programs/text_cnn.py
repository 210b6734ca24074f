"""dennybritz/cnn-text-classification-tf (text_cnn.py and train.py) without tf.contrib: an embedding matrix
from tf.random_uniform under tf.device('/cpu:0') and tf.name_scope("embedding"), tf.expand_dims to a
one-channel image, one tf.nn.conv2d + bias + relu + tf.nn.max_pool over time per filter size under
name_scope("conv-maxpool-%s"), tf.concat of the pooled features and a reshape, tf.nn.dropout with a keep_prob
placeholder, l2_loss on the output layer, softmax_cross_entropy_with_logits_v2, accuracy from tf.argmax;
the train script's global_step, AdamOptimizer compute_gradients/apply_gradients, gradient histograms and
tf.nn.zero_fraction sparsity summaries per variable, loss/accuracy summaries merged into train and dev
summary writers, a Saver(tf.global_variables(), max_to_keep=2) and checkpoints every few steps.

tf.set_random_seed fixes the embedding's random start (TF's bits); the other weights come from numpy and
keep_prob is 1.0, so the losses are deterministic.
"""

import glob
import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6


class TextCNN:
    def __init__(self, tf, sequence_length, num_classes, vocab_size, embedding_size, filter_sizes, num_filters,
                 l2_reg_lambda=0.0):
        self.input_x = tf.placeholder(tf.int32, [None, sequence_length], name="input_x")
        self.input_y = tf.placeholder(tf.float32, [None, num_classes], name="input_y")
        self.dropout_keep_prob = tf.placeholder(tf.float32, name="dropout_keep_prob")
        l2_loss = tf.constant(0.0)
        with tf.device("/cpu:0"), tf.name_scope("embedding"):
            self.W = tf.Variable(tf.random_uniform([vocab_size, embedding_size], -1.0, 1.0), name="W")
            self.embedded_chars = tf.nn.embedding_lookup(self.W, self.input_x)
            self.embedded_chars_expanded = tf.expand_dims(self.embedded_chars, -1)
        pooled_outputs = []
        for i, filter_size in enumerate(filter_sizes):
            with tf.name_scope("conv-maxpool-%s" % filter_size):
                filter_shape = [filter_size, embedding_size, 1, num_filters]
                W = tf.Variable(fixed_init(filter_shape, 1100 + i), name="W")
                b = tf.Variable(tf.constant(0.1, shape=[num_filters]), name="b")
                conv = tf.nn.conv2d(self.embedded_chars_expanded, W, strides=[1, 1, 1, 1], padding="VALID",
                                    name="conv")
                h = tf.nn.relu(tf.nn.bias_add(conv, b), name="relu")
                pooled = tf.nn.max_pool(h, ksize=[1, sequence_length - filter_size + 1, 1, 1],
                                        strides=[1, 1, 1, 1], padding="VALID", name="pool")
                pooled_outputs.append(pooled)
        num_filters_total = num_filters * len(filter_sizes)
        self.h_pool = tf.concat(pooled_outputs, 3)
        self.h_pool_flat = tf.reshape(self.h_pool, [-1, num_filters_total])
        with tf.name_scope("dropout"):
            self.h_drop = tf.nn.dropout(self.h_pool_flat, self.dropout_keep_prob)
        with tf.name_scope("output"):
            W = tf.get_variable("W", initializer=fixed_init([num_filters_total, num_classes], 1110))
            b = tf.Variable(tf.constant(0.1, shape=[num_classes]), name="b")
            l2_loss += tf.nn.l2_loss(W)
            l2_loss += tf.nn.l2_loss(b)
            self.scores = tf.nn.xw_plus_b(self.h_drop, W, b, name="scores")
            self.predictions = tf.argmax(self.scores, 1, name="predictions")
        with tf.name_scope("loss"):
            losses = tf.nn.softmax_cross_entropy_with_logits_v2(logits=self.scores, labels=self.input_y)
            self.loss = tf.reduce_mean(losses) + l2_reg_lambda * l2_loss
        with tf.name_scope("accuracy"):
            correct_predictions = tf.equal(self.predictions, tf.argmax(self.input_y, 1))
            self.accuracy = tf.reduce_mean(tf.cast(correct_predictions, "float"), name="accuracy")


def main(tf, steps=6):
    tf.reset_default_graph()
    rng = np.random.RandomState(110)
    vocab, seq_len = 30, 12
    x_train = rng.randint(1, vocab, size=(40, seq_len)).astype(np.int32)
    label = (x_train[:, :3] < 10).any(axis=1).astype(int)
    y_train = np.eye(2, dtype=np.float32)[label]
    x_dev, y_dev = x_train[:10], y_train[:10]
    out_dir = tempfile.mkdtemp()

    with tf.Graph().as_default():
        tf.set_random_seed(110)
        session_conf = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False)
        sess = tf.Session(config=session_conf)
        with sess.as_default():
            cnn = TextCNN(tf, sequence_length=seq_len, num_classes=2, vocab_size=vocab, embedding_size=8,
                          filter_sizes=[2, 3, 4], num_filters=4, l2_reg_lambda=0.01)
            global_step = tf.Variable(0, name="global_step", trainable=False)
            optimizer = tf.train.AdamOptimizer(1e-2)
            grads_and_vars = optimizer.compute_gradients(cnn.loss)
            train_op = optimizer.apply_gradients(grads_and_vars, global_step=global_step)
            grad_summaries = []
            for g, v in grads_and_vars:
                if g is not None:
                    grad_hist_summary = tf.summary.histogram(f"{v.name}/grad/hist", g)
                    sparsity_summary = tf.summary.scalar(f"{v.name}/grad/sparsity", tf.nn.zero_fraction(g))
                    grad_summaries.append(grad_hist_summary)
                    grad_summaries.append(sparsity_summary)
            grad_summaries_merged = tf.summary.merge(grad_summaries)
            loss_summary = tf.summary.scalar("loss", cnn.loss)
            acc_summary = tf.summary.scalar("accuracy", cnn.accuracy)
            train_summary_op = tf.summary.merge([loss_summary, acc_summary, grad_summaries_merged])
            train_summary_writer = tf.summary.FileWriter(os.path.join(out_dir, "summaries", "train"), sess.graph)
            dev_summary_op = tf.summary.merge([loss_summary, acc_summary])
            dev_summary_writer = tf.summary.FileWriter(os.path.join(out_dir, "summaries", "dev"), sess.graph)
            checkpoint_dir = os.path.abspath(os.path.join(out_dir, "checkpoints"))
            checkpoint_prefix = os.path.join(checkpoint_dir, "model")
            os.makedirs(checkpoint_dir)
            saver = tf.train.Saver(tf.global_variables(), max_to_keep=2)
            sess.run(tf.global_variables_initializer())
            emb_sum = float(np.abs(sess.run(cnn.W)).sum())

            losses, accs, sparsity = [], [], []
            for i in range(steps):
                idx = np.arange(i * 8, i * 8 + 8) % 40
                feed_dict = {cnn.input_x: x_train[idx], cnn.input_y: y_train[idx], cnn.dropout_keep_prob: 1.0}
                _, step, summaries, loss, accuracy = sess.run(
                    [train_op, global_step, train_summary_op, cnn.loss, cnn.accuracy], feed_dict)
                train_summary_writer.add_summary(summaries, step)
                losses.append(float(loss))
                accs.append(float(accuracy))
                current_step = tf.train.global_step(sess, global_step)
                if current_step % 2 == 0:
                    feed_dict = {cnn.input_x: x_dev, cnn.input_y: y_dev, cnn.dropout_keep_prob: 1.0}
                    step, summaries, loss, accuracy = sess.run(
                        [global_step, dev_summary_op, cnn.loss, cnn.accuracy], feed_dict)
                    dev_summary_writer.add_summary(summaries, step)
                if current_step % 3 == 0:
                    saver.save(sess, checkpoint_prefix, global_step=current_step)
            sparsity = sess.run([tf.nn.zero_fraction(g) for g, _ in grads_and_vars],
                                {cnn.input_x: x_dev, cnn.input_y: y_dev, cnn.dropout_keep_prob: 1.0})
            train_summary_writer.close()
            dev_summary_writer.close()
        sess.close()
        tags = set()
        for path in glob.glob(os.path.join(out_dir, "summaries", "train", "events.out.tfevents.*")):
            for e in tf.train.summary_iterator(path):
                for v in e.summary.value:
                    tags.add(v.tag)
        out = {
            "losses": losses,
            "accuracies": accs,
            "embedding_abs_sum": emb_sum,
            "sparsity": [float(s) for s in sparsity],
            "summary_tags": sorted(tags),
            "checkpoints": sorted(os.path.basename(p) for p in glob.glob(os.path.join(checkpoint_dir, "*.index"))),
            "variables": [v.op.name for v in tf.global_variables()],
            "h_pool_shape": str(cnn.h_pool.shape),
            "device": cnn.W.device,
        }
    shutil.rmtree(out_dir)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
