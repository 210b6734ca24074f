"""tf.train.SequenceExample records (the TF1 "youtube-8m"/im2txt input style): context features (a label, a
length, a bytes id) and feature_lists (token ids, per-frame float vectors) built with the proto classes
(tf.train.SequenceExample, tf.train.FeatureList, feature_lists.feature_list["tokens"].feature.add()),
written by tf.python_io.TFRecordWriter, read by TFRecordDataset and parsed with
tf.io.parse_single_sequence_example (FixedLenFeature context, FixedLenSequenceFeature and VarLenFeature
sequences), padded_batch by length, and an averaged-embedding classifier trained on the batches; the same
records also parsed by tf.parse_single_sequence_example in a graph over a tf.TFRecordReader queue.

Deterministic: no shuffling, weights from numpy.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6


def make_example(tf, tokens, frames, label):
    ex = tf.train.SequenceExample()
    ex.context.feature["length"].int64_list.value.append(len(tokens))
    ex.context.feature["label"].int64_list.value.append(label)
    ex.context.feature["video_id"].bytes_list.value.append(("vid%d" % label).encode())
    fl_tokens = ex.feature_lists.feature_list["tokens"]
    fl_frames = ex.feature_lists.feature_list["frames"]
    fl_tags = ex.feature_lists.feature_list["tags"]
    for t, f in zip(tokens, frames):
        fl_tokens.feature.add().int64_list.value.append(int(t))
        fl_frames.feature.add().float_list.value.extend([float(v) for v in f])
        fl_tags.feature.add().int64_list.value.extend(list(range(int(t) % 3)))
    return ex


def main(tf, steps=6):
    rng = np.random.RandomState(71)
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "seq.tfrecord")
    n, vocab = 12, 20
    examples = []
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(n):
            length = int(rng.randint(2, 7))
            label = i % 2
            tokens = rng.randint(1, vocab, size=length) if label else rng.randint(1, vocab // 2, size=length)
            frames = rng.uniform(-1, 1, size=(length, 3)).astype(np.float32)
            ex = make_example(tf, tokens, frames, label)
            examples.append(ex)
            writer.write(ex.SerializeToString())
    out = {"proto_size": len(examples[0].SerializeToString())}
    rt = tf.train.SequenceExample.FromString(examples[1].SerializeToString())
    out["proto_tokens"] = [f.int64_list.value[0] for f in rt.feature_lists.feature_list["tokens"].feature]

    context_features = {
        "length": tf.FixedLenFeature([], dtype=tf.int64),
        "label": tf.FixedLenFeature([], dtype=tf.int64),
        "video_id": tf.FixedLenFeature([], dtype=tf.string),
    }
    sequence_features = {
        "tokens": tf.FixedLenSequenceFeature([], dtype=tf.int64),
        "frames": tf.FixedLenSequenceFeature([3], dtype=tf.float32),
        "tags": tf.VarLenFeature(dtype=tf.int64),
    }

    def parse(serialized):
        context, sequence = tf.io.parse_single_sequence_example(
            serialized, context_features=context_features, sequence_features=sequence_features)
        return (tf.cast(sequence["tokens"], tf.int32), sequence["frames"], tf.cast(context["length"], tf.int32),
                tf.cast(context["label"], tf.int32))

    tf.reset_default_graph()
    ds = tf.data.TFRecordDataset([path]).map(parse)
    ds = ds.padded_batch(4, padded_shapes=([None], [None, 3], [], []))
    ds = ds.repeat()
    tokens, frames, lengths, labels = ds.make_one_shot_iterator().get_next()
    emb = tf.Variable(fixed_init([vocab, 8], 7100, 0.5), name="embedding")
    w = tf.Variable(fixed_init([11, 1], 7101, 0.3), name="w")
    mask = tf.sequence_mask(lengths, tf.shape(tokens)[1], dtype=tf.float32)
    embedded = tf.nn.embedding_lookup(emb, tokens) * mask[:, :, None]
    mean_emb = tf.reduce_sum(embedded, 1) / tf.cast(lengths, tf.float32)[:, None]
    mean_frames = tf.reduce_sum(frames, 1) / tf.cast(lengths, tf.float32)[:, None]
    logits = tf.squeeze(tf.matmul(tf.concat([mean_emb, mean_frames], 1), w), 1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(labels, tf.float32), logits=logits))
    train = tf.train.AdagradOptimizer(0.3).minimize(loss)
    out["static_shapes"] = [str(tokens.shape), str(frames.shape), str(lengths.shape)]
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run([tokens, frames, lengths, labels])
        for _ in range(steps):
            losses.append(float(sess.run([train, loss])[1]))
    out["first_tokens"] = first[0].tolist()
    out["first_frames_sum"] = float(first[1].sum())
    out["first_lengths"] = first[2].tolist()
    out["first_labels"] = first[3].tolist()
    out["losses"] = losses

    # The queue-based reader with tf.parse_single_sequence_example.
    tf.reset_default_graph()
    queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(queue)
    context, sequence = tf.parse_single_sequence_example(
        serialized, context_features=context_features, sequence_features=sequence_features)
    tags = sequence["tags"]
    got = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        for _ in range(3):
            c, s, tg = sess.run([context, sequence["tokens"], tags])
            got.append({"length": int(c["length"]), "video_id": c["video_id"].decode(), "tokens": s.tolist(),
                        "tag_indices": tg.indices.tolist(), "tag_values": tg.values.tolist(),
                        "tag_shape": tg.dense_shape.tolist()})
        coord.request_stop()
        coord.join(threads)
    out["reader"] = got
    out["tags_type"] = type(tags).__name__
    shutil.rmtree(tmp)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
