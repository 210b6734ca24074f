"""``Saver.save`` into a directory that does not exist yet (issue 23).

TensorFlow 2.21's save kernel creates the checkpoint's directory, one level only (``Env::CreateDir``):
``Saver.save(sess, "new_dir/model.ckpt")`` works when ``new_dir``'s parent exists, and writes the
``checkpoint`` state file and the ``.meta`` there; a deeper missing level, or a sharded save (its parts
go one level further down, ``<prefix>_temp/``), raises ``ValueError("Parent directory of ... doesn't
exist, can't save.")``. Checked against TF 2.21 with the same calls.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import ferroflow as tf


def _model():
    v = tf.Variable([1.0, 2.0], name="v")
    return v, tf.train.Saver()


def test_save_creates_the_missing_directory(tmp_path):
    v, saver = _model()
    target = tmp_path / "new_dir"
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(target / "model.ckpt"), global_step=3)
    assert path == str(target / "model.ckpt-3")
    assert sorted(os.listdir(target)) == [
        "checkpoint",
        "model.ckpt-3.data-00000-of-00001",
        "model.ckpt-3.index",
        "model.ckpt-3.meta",
    ]
    assert tf.train.latest_checkpoint(str(target)) == path
    with tf.Session() as sess:
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_save_refuses_two_missing_levels(tmp_path):
    v, saver = _model()
    with tf.Session() as sess:
        sess.run(v.initializer)
        prefix = str(tmp_path / "a" / "b" / "model.ckpt")
        with pytest.raises(ValueError, match=r"Parent directory of .*model\.ckpt doesn't exist, can't save\."):
            saver.save(sess, prefix)
    assert not (tmp_path / "a").exists()


def test_sharded_save_needs_the_directory(tmp_path):
    v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver(sharded=True)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(ValueError, match="doesn't exist, can't save"):
            saver.save(sess, str(tmp_path / "missing" / "model.ckpt"))
        # Into an existing directory it works as before.
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
        saver.restore(sess, path)


def test_save_op_missing_grandparent_is_not_found(tmp_path):
    v, saver = _model()
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
            sess.run(saver.saver_def.save_tensor_name,
                     {saver.saver_def.filename_tensor_name: str(tmp_path / "x" / "y" / "ckpt")})
