"""TF1's word2vec_basic.py (tutorials/word2vec): skip-gram batches from a deque window, embeddings from
random_uniform, nce_loss, normalized embeddings and a cosine-similarity matmul, summaries, a Saver, and the
TensorBoard projector config written next to the checkpoint.

nce_loss samples negatives at random: compared with TensorFlow on shapes, names and that it trains.
"""

import collections
import math
import os
import random
import shutil
import tempfile

import numpy as np
from _common import run_as_script

TF_STEPS = 30
# nce_loss samples its negatives at random: checked for training, not against TensorFlow.
RANDOM_KEYS = {"losses": "trained"}


def main(tf, steps=30):
    tf.reset_default_graph()
    rng = random.Random(11)
    vocabulary_size = 50
    # A corpus where word k is followed by k + 1 or k + 2: neighbours share contexts.
    data = [0]
    for _ in range(2000):
        data.append((data[-1] + rng.choice([1, 2])) % vocabulary_size)
    reverse_dictionary = {i: "w%d" % i for i in range(vocabulary_size)}
    data_index = [0]

    def generate_batch(batch_size, num_skips, skip_window):
        assert batch_size % num_skips == 0
        assert num_skips <= 2 * skip_window
        batch = np.ndarray(shape=(batch_size), dtype=np.int32)
        labels = np.ndarray(shape=(batch_size, 1), dtype=np.int32)
        span = 2 * skip_window + 1
        buffer = collections.deque(maxlen=span)
        if data_index[0] + span > len(data):
            data_index[0] = 0
        buffer.extend(data[data_index[0] : data_index[0] + span])
        data_index[0] += span
        for i in range(batch_size // num_skips):
            context_words = [w for w in range(span) if w != skip_window]
            words_to_use = rng.sample(context_words, num_skips)
            for j, context_word in enumerate(words_to_use):
                batch[i * num_skips + j] = buffer[skip_window]
                labels[i * num_skips + j, 0] = buffer[context_word]
            if data_index[0] == len(data):
                buffer.extend(data[0:span])
                data_index[0] = span
            else:
                buffer.append(data[data_index[0]])
                data_index[0] += 1
        data_index[0] = (data_index[0] + len(data) - span) % len(data)
        return batch, labels

    batch_size = 32
    embedding_size = 16
    skip_window = 1
    num_skips = 2
    num_sampled = 8
    valid_size = 4
    valid_window = 20
    valid_examples = np.array(rng.sample(range(valid_window), valid_size))
    log_dir = tempfile.mkdtemp()

    graph = tf.Graph()
    with graph.as_default():
        with tf.name_scope("inputs"):
            train_inputs = tf.placeholder(tf.int32, shape=[batch_size])
            train_labels = tf.placeholder(tf.int32, shape=[batch_size, 1])
            valid_dataset = tf.constant(valid_examples, dtype=tf.int32)
        with tf.device("/cpu:0"):
            with tf.name_scope("embeddings"):
                embeddings = tf.Variable(tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0))
                embed = tf.nn.embedding_lookup(embeddings, train_inputs)
            with tf.name_scope("weights"):
                nce_weights = tf.Variable(
                    tf.truncated_normal(
                        [vocabulary_size, embedding_size], stddev=1.0 / math.sqrt(embedding_size)
                    )
                )
            with tf.name_scope("biases"):
                nce_biases = tf.Variable(tf.zeros([vocabulary_size]))
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(
                tf.nn.nce_loss(
                    weights=nce_weights,
                    biases=nce_biases,
                    labels=train_labels,
                    inputs=embed,
                    num_sampled=num_sampled,
                    num_classes=vocabulary_size,
                )
            )
        tf.summary.scalar("loss", loss)
        with tf.name_scope("optimizer"):
            optimizer = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
        normalized_embeddings = embeddings / norm
        valid_embeddings = tf.nn.embedding_lookup(normalized_embeddings, valid_dataset)
        similarity = tf.matmul(valid_embeddings, normalized_embeddings, transpose_b=True)
        merged = tf.summary.merge_all()
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()

    losses = []
    with tf.Session(graph=graph) as session:
        writer = tf.summary.FileWriter(log_dir, session.graph)
        init.run()
        for step in range(steps):
            batch_inputs, batch_labels = generate_batch(batch_size, num_skips, skip_window)
            feed_dict = {train_inputs: batch_inputs, train_labels: batch_labels}
            run_metadata = tf.RunMetadata()
            _, summary, loss_val = session.run(
                [optimizer, merged, loss], feed_dict=feed_dict, run_metadata=run_metadata
            )
            losses.append(float(loss_val))
            writer.add_summary(summary, step)
            if step == (steps - 1):
                writer.add_run_metadata(run_metadata, "step%d" % step)
        sim = similarity.eval()
        nearest = [(-sim[i, :]).argsort()[1:4].tolist() for i in range(valid_size)]
        final_embeddings = normalized_embeddings.eval()
        with open(log_dir + "/metadata.tsv", "w") as f:
            for i in range(vocabulary_size):
                f.write(reverse_dictionary[i] + "\n")
        saver.save(session, os.path.join(log_dir, "model.ckpt"))
        try:
            from tensorboard.plugins import projector
        except ImportError:
            projector = None
        if projector is not None:
            config = projector.ProjectorConfig()
            embedding_conf = config.embeddings.add()
            embedding_conf.tensor_name = embeddings.name
            embedding_conf.metadata_path = os.path.join(log_dir, "metadata.tsv")
            projector.visualize_embeddings(writer, config)
    writer.close()
    projector_config = None
    if os.path.exists(os.path.join(log_dir, "projector_config.pbtxt")):  # only where tensorboard is installed
        with open(os.path.join(log_dir, "projector_config.pbtxt")) as f:
            projector_config = f.read()
        assert embeddings.name in projector_config and "metadata.tsv" in projector_config, projector_config
    files = sorted(f.split(".tfevents")[0] for f in os.listdir(log_dir) if f != "projector_config.pbtxt")
    shutil.rmtree(log_dir)
    return {
        "losses": losses,
        "similarity_shape": list(sim.shape),
        "nearest_count": len(nearest),
        "norms_are_one": bool(np.allclose(np.linalg.norm(final_embeddings, axis=1), 1.0, atol=1e-5)),
        "embedding_name": embeddings.name,
        "variables": [v.name for v in graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)],
        "files": files,
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
