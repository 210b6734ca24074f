"""tf.train.warm_start and tf.train.VocabInfo: variable selection, renaming, and
vocabulary remapping of rows and columns (expectations worked out by hand; they
agree with what TensorFlow's warm_start produces for the same files)."""

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops._op_util import make_op

OLD_VOCAB = ["apple", "banana", "cherry", "date"]
NEW_VOCAB = ["cherry", "zebra", "apple", "date", "banana"]
OLD_COLS = ["x", "y", "z"]
NEW_COLS = ["z", "w", "x"]


@pytest.fixture
def ckpt(tmp_path):
    values = {
        "emb": np.arange(12, dtype=np.float32).reshape(4, 3),
        "bias": np.array([10.0, 11.0, 12.0, 13.0], np.float32),
        "k": np.arange(6, dtype=np.float32).reshape(2, 3),
        "other": np.float32(5.0),
        "scope/w": np.full((2, 2), 3.0, np.float32),
    }
    prefix = str(tmp_path / "m.ckpt")
    names = sorted(values)
    with tf.Graph().as_default():
        save = make_op("SaveV2", [tf.constant(prefix), tf.constant(names), tf.constant([""] * len(names))]
                       + [tf.constant(values[n]) for n in names])
        with tf.Session() as sess:
            sess.run(save)
    files = {}
    for name, tokens in [("old", OLD_VOCAB), ("new", NEW_VOCAB), ("oldc", OLD_COLS), ("newc", NEW_COLS)]:
        path = tmp_path / f"{name}.txt"
        path.write_text("".join(t + "\n" for t in tokens))
        files[name] = str(path)
    return prefix, values, files


def _rows_by_vocab(old, new_tokens, old_tokens, fill):
    """Expected remap of rows: each new token's old row, else ``fill``."""
    out = []
    for tok in new_tokens:
        out.append(old[old_tokens.index(tok)] if tok in old_tokens else np.full(old.shape[1:], fill, old.dtype))
    return np.array(out)


def _init_values(variables):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(variables)


def test_rows_remapped_with_oov_buckets(ckpt):
    prefix, values, files = ckpt
    emb = tf.get_variable("emb", [7, 3], initializer=tf.constant_initializer(-1.0))
    tf.train.warm_start(prefix, vars_to_warm_start="emb",
                        var_name_to_vocab_info={"emb": tf.train.VocabInfo(files["new"], 5, 2, files["old"])})
    got = _init_values(emb)
    expected = np.concatenate([_rows_by_vocab(values["emb"], NEW_VOCAB, OLD_VOCAB, 0.0), np.zeros((2, 3))])
    # Worked out by hand: cherry->row 2, zebra->backup (zeros), apple->0, date->3, banana->1, 2 OOV rows of zeros.
    np.testing.assert_array_equal(got, [[6, 7, 8], [0, 0, 0], [0, 1, 2], [9, 10, 11], [3, 4, 5], [0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(got, expected)


def test_old_vocab_size_and_backup_initializer(ckpt):
    prefix, values, files = ckpt
    emb = tf.get_variable("emb", [6, 3], initializer=tf.zeros_initializer())
    info = tf.train.VocabInfo(files["new"], 5, 1, files["old"], old_vocab_size=2,
                              backup_initializer=tf.constant_initializer(7.0))
    tf.train.warm_start(prefix, "emb", var_name_to_vocab_info={"emb": info})
    got = _init_values(emb)
    # Only apple and banana count from the old vocabulary.
    expected = np.concatenate([_rows_by_vocab(values["emb"], NEW_VOCAB, OLD_VOCAB[:2], 7.0), np.full((1, 3), 7.0)])
    np.testing.assert_array_equal(got, expected)


def test_partitioned_rows_across_oov_boundary(ckpt):
    prefix, values, files = ckpt
    pv = tf.get_variable("emb", [7, 3], initializer=tf.constant_initializer(-1.0),
                         partitioner=tf.fixed_size_partitioner(3))
    tf.train.warm_start(prefix, "emb", var_name_to_vocab_info={"emb": tf.train.VocabInfo(files["new"], 5, 2,
                                                                                         files["old"])})
    parts = _init_values(list(pv))
    assert [p.shape[0] for p in parts] == [3, 2, 2]
    expected = np.concatenate([_rows_by_vocab(values["emb"], NEW_VOCAB, OLD_VOCAB, 0.0), np.zeros((2, 3))])
    np.testing.assert_array_equal(np.concatenate(parts), expected)


def test_columns_remapped_axis_1(ckpt):
    prefix, values, files = ckpt
    k = tf.get_variable("k", [2, 4], initializer=tf.constant_initializer(-1.0))
    info = tf.train.VocabInfo(files["newc"], 3, 1, files["oldc"], axis=1)
    tf.train.warm_start(prefix, "k", var_name_to_vocab_info={"k": info})
    got = _init_values(k)
    # columns z, w (new), x, then one OOV column.
    np.testing.assert_array_equal(got, [[2, 0, 0, 0], [5, 0, 3, 0]])


def test_one_dimensional_variable(ckpt):
    prefix, values, files = ckpt
    bias = tf.get_variable("bias", [5], initializer=tf.constant_initializer(-1.0))
    tf.train.warm_start(prefix, "bias", var_name_to_vocab_info={"bias": tf.train.VocabInfo(files["new"], 5, 0,
                                                                                           files["old"])})
    np.testing.assert_array_equal(_init_values(bias), [12, 0, 10, 13, 11])


def test_selection_forms_and_renaming(ckpt):
    prefix, values, files = ckpt
    with tf.variable_scope("new"):
        e2 = tf.get_variable("e2", [5, 3], initializer=tf.constant_initializer(-1.0))
        o = tf.get_variable("o", [], trainable=False, initializer=tf.constant_initializer(-1.0))
    untouched = tf.get_variable("untouched", [], initializer=tf.constant_initializer(-1.0))
    # A list of strings selects from GLOBAL_VARIABLES, so the non-trainable `o` is warm-started too.
    tf.train.warm_start(prefix, ["new/"],
                        var_name_to_vocab_info={"new/e2": tf.train.VocabInfo(files["new"], 5, 0, files["old"])},
                        var_name_to_prev_var_name={"new/e2": "emb", "new/o": "other"})
    got = _init_values([e2, o, untouched])
    np.testing.assert_array_equal(got[0], _rows_by_vocab(values["emb"], NEW_VOCAB, OLD_VOCAB, 0.0))
    assert got[1] == 5.0 and got[2] == -1.0


def test_regex_selects_trainable_only(ckpt):
    prefix, _, _ = ckpt
    with tf.variable_scope("new"):
        tf.get_variable("o", [], trainable=False)
    with pytest.raises(ValueError, match=r"var_name_to_prev_var_name that were not used: \['new/o'\]"):
        tf.train.warm_start(prefix, "new/", var_name_to_prev_var_name={"new/o": "other"})


def test_default_warm_starts_every_trainable_variable(ckpt):
    prefix, values, _ = ckpt
    with tf.variable_scope("scope"):
        w = tf.get_variable("w", [2, 2], initializer=tf.zeros_initializer())
    k = tf.Variable(tf.zeros([2, 3]), name="k")  # a plain tf.Variable, by its op name
    tf.train.warm_start(prefix)
    got = _init_values([w, k])
    np.testing.assert_array_equal(got[0], values["scope/w"])
    np.testing.assert_array_equal(got[1], values["k"])


def test_none_selects_only_vocab_variables(ckpt):
    prefix, values, files = ckpt
    emb = tf.get_variable("emb", [5, 3], initializer=tf.constant_initializer(-1.0))
    other = tf.get_variable("other", [], initializer=tf.constant_initializer(-1.0))
    tf.train.warm_start(prefix, None, var_name_to_vocab_info={"emb": tf.train.VocabInfo(files["new"], 5, 0,
                                                                                         files["old"])})
    got = _init_values([emb, other])
    np.testing.assert_array_equal(got[0], _rows_by_vocab(values["emb"], NEW_VOCAB, OLD_VOCAB, 0.0))
    assert got[1] == -1.0


def test_list_of_variables_including_partitioned(ckpt):
    prefix, values, _ = ckpt
    pv = tf.get_variable("emb", [4, 3], initializer=tf.zeros_initializer(), partitioner=tf.fixed_size_partitioner(2))
    skipped = tf.get_variable("k", [2, 3], initializer=tf.zeros_initializer())
    tf.train.warm_start(prefix, [pv])
    parts, k = _init_values([list(pv), skipped])
    np.testing.assert_array_equal(np.concatenate(parts), values["emb"])
    np.testing.assert_array_equal(k, np.zeros((2, 3)))


def test_errors(ckpt):
    prefix, _, files = ckpt
    tf.get_variable("emb", [7, 3])
    tf.get_variable("wide", [7, 4])
    with pytest.raises(ValueError, match=r"var_name_to_vocab_info that were not used: \['nope'\]"):
        tf.train.warm_start(prefix, "emb", var_name_to_vocab_info={"nope": tf.train.VocabInfo(files["new"], 5, 0,
                                                                                               files["old"])})
    with pytest.raises(ValueError, match=r"exceed expected total row count of new_row_vocab_size \(4\) \+ "
                                         r"num_row_oov_buckets \(2\) = 6"):
        tf.train.warm_start(prefix, "emb", var_name_to_vocab_info={"emb": tf.train.VocabInfo(files["new"], 4, 2,
                                                                                              files["old"])})
    with pytest.raises(ValueError, match=r"vocabulary size 6 is larger than the 5 entries of .*new.txt"):
        tf.train.warm_start(prefix, "emb", var_name_to_vocab_info={"emb": tf.train.VocabInfo(files["new"], 6, 1,
                                                                                              files["old"])})
    with pytest.raises(ValueError, match=r"wide:0 has 4 columns but emb .* has 3"):
        tf.train.warm_start(prefix, "wide", var_name_to_vocab_info={"wide": tf.train.VocabInfo(files["new"], 5, 2,
                                                                                                files["old"])},
                            var_name_to_prev_var_name={"wide": "emb"})
    with pytest.raises(ValueError, match="Tensor wide is not found"):
        tf.train.warm_start(prefix, "wide")
    with pytest.raises(ValueError, match="only supported values for the axis argument are 0 and 1"):
        tf.train.VocabInfo(files["new"], 5, 0, files["old"], axis=2)


def test_vocab_info_is_a_namedtuple(ckpt):
    _, _, files = ckpt
    info = tf.train.VocabInfo(files["new"], 5, 2, files["old"])
    assert info.old_vocab_size == -1 and info.backup_initializer is None and info.axis == 0
    assert info.index(5) == 1 and info.count(2) == 1
    assert tuple(info) == (files["new"], 5, 2, files["old"], -1, None, 0)
