"""In-graph text preprocessing the TF 1.13-1.15 way (tf.strings before tf.text): tf.strings.lower,
regex_replace of punctuation, tf.strings.strip, tf.string_split with a delimiter into a SparseTensor and
tf.sparse.to_dense with a default value, tf.strings.split(result_type="RaggedTensor"), tf.strings.length,
substr (byte unit), tf.strings.join / reduce_join with separators, string_to_hash_bucket_fast and
to_hash_bucket_strong, tf.strings.to_number and as_string with precision, tf.strings.format,
unicode_decode / unicode_encode of UTF-8 text, tf.strings.unicode_script, character n-grams by
tf.strings.ngrams, a vocabulary lookup with StaticVocabularyTable over a KeyValueTensorInitializer and num_oov_buckets, and the resulting
bag-of-words counts (tf.unsorted_segment_sum) feeding a tiny logistic regression in a tf.data pipeline.

Deterministic: every string and weight is fixed.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6
SENTENCES = [
    "The quick brown fox!  Jumps over the LAZY dog.",
    "  A lazy dog sleeps; the fox runs.  ",
    "Bonjour, café crème -- très bien",
    "Quick, quick: the fox is quick",
]


def main(tf, steps=6):
    tf.reset_default_graph()
    text = tf.constant(SENTENCES)
    lowered = tf.strings.lower(text)
    cleaned = tf.strings.strip(tf.strings.regex_replace(lowered, r"[[:punct:]]+", " "))
    squeezed = tf.strings.regex_replace(cleaned, " +", " ")
    sparse_tokens = tf.string_split(squeezed, delimiter=" ")
    dense_tokens = tf.sparse.to_dense(sparse_tokens, default_value="<pad>")
    ragged_tokens = tf.strings.split(squeezed, result_type="RaggedTensor")
    out = {}
    vocab = ["the", "quick", "fox", "lazy", "dog", "over"]
    table = tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant(vocab), tf.range(len(vocab), dtype=tf.int64)), num_oov_buckets=2)
    ids = table.lookup(sparse_tokens)
    counts = tf.unsorted_segment_sum(tf.ones_like(ids.values, tf.float32),
                                     ids.indices[:, 0] * (len(vocab) + 2) + ids.values, 4 * (len(vocab) + 2))
    bow = tf.reshape(counts, [4, len(vocab) + 2])
    numbers = tf.constant(["3.25", "-1e2", "7", "0.5"])
    as_num = tf.strings.to_number(numbers)
    utf8 = tf.constant(["café", "naïve", "日本"])
    codepoints = tf.strings.unicode_decode(utf8, "UTF-8")
    scripts = tf.strings.unicode_script(tf.constant([ord("a"), ord("日"), ord("é"), ord("1")], tf.int32))
    ngrams = tf.strings.ngrams(tf.strings.unicode_split(tf.constant(["quick"]), "UTF-8"), 2, separator="")
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        r = sess.run({
            "lowered": lowered, "cleaned": squeezed, "dense": dense_tokens, "lengths": tf.strings.length(squeezed),
            "char_lengths": tf.strings.length(text, unit="UTF8_CHAR"),
            "substr": tf.strings.substr(squeezed, 2, 5), "joined": tf.strings.join([squeezed, tf.constant("END")], separator="|"),
            "reduce_join": tf.strings.reduce_join(dense_tokens, axis=1, separator=","),
            "hash_fast": tf.strings.to_hash_bucket_fast(sparse_tokens.values, 50),
            "hash_strong": tf.strings.to_hash_bucket_strong(sparse_tokens.values, 50, [1, 2]),
            "ids": ids.values, "bow": bow, "as_num": as_num,
            "as_string": tf.as_string(as_num, precision=2), "as_string_int": tf.as_string(tf.constant([7, -12]), width=4, fill="0"),
            "format": tf.strings.format("loss={} step={}", (tf.constant(0.25), tf.constant(3))),
            "codepoints": codepoints.to_tensor(default_value=-1),
            "encoded": tf.strings.unicode_encode(codepoints, "UTF-8"),
            "scripts": scripts, "ngrams": ngrams.flat_values,
            "ragged_rows": ragged_tokens.row_lengths(), "dense_shape": sparse_tokens.dense_shape,
        })

    def plain(v):
        v = np.asarray(v)
        if v.ndim == 0 and isinstance(v.item(), bytes):
            return v.item().decode("utf-8")
        if v.dtype.kind in "SO":
            return [x.decode("utf-8") if isinstance(x, bytes) else plain(x) for x in v.tolist()]
        return v.tolist()

    out.update({k: plain(v) for k, v in r.items()})

    # Bag-of-words logistic regression over a tf.data pipeline.
    labels = np.array([1.0, 0.0, 0.0, 1.0], np.float32)
    ds = tf.data.Dataset.from_tensor_slices((tf.constant(SENTENCES), labels)).batch(2).repeat()
    it = ds.make_one_shot_iterator()
    batch_text, batch_labels = it.get_next()
    tokens = tf.string_split(tf.strings.regex_replace(tf.strings.lower(batch_text), r"[[:punct:]]+", " "))
    tok_ids = table.lookup(tokens)
    feats = tf.sparse.to_indicator(tf.SparseTensor(tok_ids.indices, tok_ids.values, tok_ids.dense_shape),
                                   len(vocab) + 2)
    w = tf.Variable(fixed_init([len(vocab) + 2, 1], 1500))
    logit = tf.squeeze(tf.matmul(tf.cast(feats, tf.float32), w), 1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=batch_labels, logits=logit))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        for _ in range(steps):
            _, l = sess.run([train_op, loss])
            losses.append(float(l))
    out["losses"] = losses
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
