"""The input side of TF's NMT tutorial (nmt/utils/iterator_utils.py and vocab_utils.py) with tf.compat.v1 names:
vocabulary files turned into tables by tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(...)) with an
UNK default (plus a StaticVocabularyTable with OOV buckets and a reverse table for decoding), TextLineDataset
sources zipped with targets, tf.string_split(...).values to tokens, filtering of empty lines, truncation to
max lengths, table lookups cast to int32, sos/eos added with tf.concat, (src, tgt_in, tgt_out, src_len,
tgt_len) tuples, bucketing by tf.data.experimental.group_by_window with a key_func over lengths and a
padded_batch reduce_func, an initializable iterator fed the file names through placeholders, and
tables_initializer; plus string utilities around it (tf.strings.regex_replace/lower/reduce_join/to_number/
as_string/substr/to_hash_bucket_fast, tf.string_to_number) and a bag-of-words model trained on the batches.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import run_as_script

TF_STEPS = 4

SRC = [
    "a b c d", "b c", "e f g", "", "a a b", "c d e f g h", "g", "b d f", "h a", "c c c c c c c c",
    "d e", "f g h a", "a", "b c d e", "e e", "h g f e d",
]
TGT = [
    "D C B A", "C B", "G F E", "", "B A A", "H G F E D C", "G", "F D B", "A H", "C C C C C C C C",
    "E D", "A H G F", "A", "E D C B", "E E", "D E F G H",
]


def main(tf, steps=4):
    tf.reset_default_graph()
    root = tempfile.mkdtemp()
    files = {}
    for name, lines in (("src", SRC), ("tgt", TGT), ("vocab_src", ["<unk>", "<s>", "</s>"] + list("abcdefg")),
                        ("vocab_tgt", ["<unk>", "<s>", "</s>"] + list("ABCDEFGH"))):
        files[name] = os.path.join(root, name + ".txt")
        with open(files[name], "w") as f:
            f.write("\n".join(lines) + "\n")
    UNK_ID = 0

    def create_vocab_table(path):
        init = tf.lookup.TextFileInitializer(path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                                             tf.lookup.TextFileIndex.LINE_NUMBER)
        return tf.lookup.StaticHashTable(init, default_value=UNK_ID)

    src_vocab_table = create_vocab_table(files["vocab_src"])
    tgt_vocab_table = create_vocab_table(files["vocab_tgt"])
    reverse_tgt_table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(files["vocab_tgt"], tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, tf.string,
                                      tf.lookup.TextFileIndex.WHOLE_LINE), default_value="<unk>")
    oov_table = tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "b", "c"]), tf.constant([0, 1, 2], tf.int64)),
        num_oov_buckets=3)

    src_file = tf.placeholder(tf.string, [], name="src_file")
    tgt_file = tf.placeholder(tf.string, [], name="tgt_file")
    sos, eos = "<s>", "</s>"
    src_max_len, tgt_max_len, batch_size, num_buckets = 5, 5, 3, 2
    src_eos_id = tf.cast(src_vocab_table.lookup(tf.constant(eos)), tf.int32)
    tgt_sos_id = tf.cast(tgt_vocab_table.lookup(tf.constant(sos)), tf.int32)
    tgt_eos_id = tf.cast(tgt_vocab_table.lookup(tf.constant(eos)), tf.int32)

    src_dataset = tf.data.TextLineDataset(src_file)
    tgt_dataset = tf.data.TextLineDataset(tgt_file)
    ds = tf.data.Dataset.zip((src_dataset, tgt_dataset))
    ds = ds.map(lambda src, tgt: (tf.string_split([src]).values, tf.string_split([tgt]).values))
    ds = ds.filter(lambda src, tgt: tf.logical_and(tf.size(src) > 0, tf.size(tgt) > 0))
    ds = ds.map(lambda src, tgt: (src[:src_max_len], tgt[:tgt_max_len]))
    ds = ds.map(lambda src, tgt: (tf.cast(src_vocab_table.lookup(src), tf.int32),
                                  tf.cast(tgt_vocab_table.lookup(tgt), tf.int32)))
    ds = ds.map(lambda src, tgt: (src, tf.concat(([tgt_sos_id], tgt), 0), tf.concat((tgt, [tgt_eos_id]), 0)))
    ds = ds.map(lambda src, tgt_in, tgt_out: (src, tgt_in, tgt_out, tf.size(src), tf.size(tgt_in)))

    def batching_func(x):
        return x.padded_batch(
            batch_size,
            padded_shapes=(tf.TensorShape([None]), tf.TensorShape([None]), tf.TensorShape([None]),
                           tf.TensorShape([]), tf.TensorShape([])),
            padding_values=(src_eos_id, tgt_eos_id, tgt_eos_id, 0, 0))

    def key_func(unused_1, unused_2, unused_3, src_len, tgt_len):
        bucket_width = (src_max_len + num_buckets - 1) // num_buckets
        bucket_id = tf.maximum(src_len // bucket_width, tgt_len // bucket_width)
        return tf.to_int64(tf.minimum(num_buckets, bucket_id))

    def reduce_func(unused_key, windowed_data):
        return batching_func(windowed_data)

    batched = ds.apply(tf.data.experimental.group_by_window(key_func=key_func, reduce_func=reduce_func,
                                                            window_size=batch_size))
    iterator = batched.make_initializable_iterator()
    src_ids, tgt_in, tgt_out, src_len, tgt_len = iterator.get_next()

    # A bag-of-words model: predict the count of each target id from the source ids.
    emb = tf.Variable(np.linspace(-0.5, 0.5, 11 * 4, dtype=np.float32).reshape(11, 4), name="emb")
    proj = tf.Variable(np.linspace(0.3, -0.3, 4 * 11, dtype=np.float32).reshape(4, 11), name="proj")
    mask = tf.sequence_mask(src_len, tf.shape(src_ids)[1], dtype=tf.float32)
    bow = tf.reduce_sum(tf.nn.embedding_lookup(emb, src_ids) * mask[:, :, None], 1)
    counts = tf.reduce_sum(tf.one_hot(tgt_out, 11) * tf.sequence_mask(tgt_len, tf.shape(tgt_out)[1],
                                                                      dtype=tf.float32)[:, :, None], 1)
    loss = tf.reduce_mean(tf.square(tf.matmul(bow, proj) - counts))
    train = tf.train.AdagradOptimizer(0.5).minimize(loss)

    words = tf.constant(["Hello, World!", "ferro FLOW 42", "  spaces  "])
    cleaned = tf.strings.lower(tf.strings.regex_replace(words, "[^A-Za-z0-9 ]", ""))
    joined = tf.strings.reduce_join(tf.string_split(cleaned).values, separator="|")
    numbers = tf.strings.to_number(tf.constant(["1.5", "-2", "3e2"]))
    legacy_numbers = tf.string_to_number(tf.constant(["7", "8"]), out_type=tf.int32)
    shown = tf.strings.as_string(tf.constant([3.14159, 2.0]), precision=2)
    prefix = tf.strings.substr(words, 0, 5)
    buckets = tf.strings.to_hash_bucket_fast(words, 1000)

    out = {}
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        sess.run(tf.global_variables_initializer())
        sess.run(iterator.initializer, {src_file: files["src"], tgt_file: files["tgt"]})
        batches = []
        while True:
            try:
                b = sess.run([src_ids, tgt_in, tgt_out, src_len, tgt_len])
            except tf.errors.OutOfRangeError:
                break
            batches.append([v.tolist() for v in b])
        out["batches"] = batches
        sess.run(iterator.initializer, {src_file: files["src"], tgt_file: files["tgt"]})
        losses = []
        for _ in range(steps):
            losses.append(float(sess.run([train, loss])[1]))
        out["losses"] = losses
        out["reverse"] = [s.decode() for s in sess.run(reverse_tgt_table.lookup(tf.constant([3, 10, 99], tf.int64)))]
        out["oov"] = sess.run(oov_table.lookup(tf.constant(["a", "c", "zebra", "b"]))).tolist()
        out["table_size"] = int(sess.run(src_vocab_table.size()))
        out["strings"] = [x.decode() for x in sess.run(cleaned)] + [sess.run(joined).decode()]
        out["numbers"] = sess.run(numbers).tolist() + sess.run(legacy_numbers).tolist()
        out["as_string"] = [x.decode() for x in sess.run(shown)]
        out["substr"] = [x.decode() for x in sess.run(prefix)]
        out["hash_buckets"] = sess.run(buckets).tolist()
    out["types"] = [str(t) for t in batched.output_types]
    out["shapes"] = [str(s) for s in batched.output_shapes]
    shutil.rmtree(root)
    return out


if __name__ == "__main__":
    run_as_script(main, 4)
