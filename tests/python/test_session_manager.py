"""tf.train.SessionManager: prepare_session (initialize, init_fn, local init, readiness errors),
recover_session and wait_for_session."""

import numpy as np
import pytest

import ferroflow as tf


def test_prepare_session_initializes_and_runs_local_init():
    v = tf.get_variable("v", [2], initializer=tf.constant_initializer(3.0))
    lv = tf.get_variable("lv", [], initializer=tf.constant_initializer(7.0),
                         collections=[tf.GraphKeys.LOCAL_VARIABLES])
    sm = tf.train.SessionManager(local_init_op=tf.local_variables_initializer(),
                                 ready_op=tf.report_uninitialized_variables(),
                                 ready_for_local_init_op=tf.report_uninitialized_variables(tf.global_variables()))
    init_fn_values = []
    set_v = v.assign([5.0, 6.0])
    sess = sm.prepare_session("", init_op=tf.global_variables_initializer(),
                              init_fn=lambda s: init_fn_values.append(s.run(set_v)))
    assert np.array_equal(sess.run(v), [5.0, 6.0]) and sess.run(lv) == 7.0
    assert len(init_fn_values) == 1


def test_prepare_session_errors_name_what_is_missing():
    v = tf.get_variable("v", [], initializer=tf.zeros_initializer())
    tf.get_variable("w", [], initializer=tf.zeros_initializer())
    ready = tf.report_uninitialized_variables()
    sm = tf.train.SessionManager(ready_op=ready)
    with pytest.raises(RuntimeError, match="Model is not initialized and no init_op or init_fn or local_init_op"):
        sm.prepare_session("")
    # An init op that leaves w uninitialized.
    with pytest.raises(RuntimeError, match=r"Init operations did not make model ready.*Variables not initialized: w"):
        sm.prepare_session("", init_op=tf.variables_initializer([v]))
    with pytest.raises(ValueError, match="Can not provide both checkpoint_dir and checkpoint_filename_with_path"):
        sm.prepare_session("", init_op=tf.global_variables_initializer(), saver=object(), checkpoint_dir="a",
                           checkpoint_filename_with_path="b")
    with pytest.raises(ValueError, match="If you pass a ready_for_local_init_op you must also pass a local_init_op"):
        tf.train.SessionManager(ready_for_local_init_op=ready)


def test_recover_session_without_checkpoint_reports_not_initialized(tmp_path):
    v = tf.get_variable("v", [], initializer=tf.zeros_initializer())
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    sess, initialized = sm.recover_session("", saver=None, checkpoint_dir=str(tmp_path))
    assert isinstance(sess, tf.Session) and initialized is False
    with pytest.raises(tf.errors.FailedPreconditionError):
        sess.run(v)


def test_wait_for_session_ready_at_once_or_deadline():
    tf.constant(1.0)
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.05)
    assert isinstance(sm.wait_for_session("", max_wait_secs=1), tf.Session)
    tf.reset_default_graph()
    tf.get_variable("v", [], initializer=tf.zeros_initializer())
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.05)
    with pytest.raises(tf.errors.DeadlineExceededError, match="Session was not ready after waiting 0.2 secs"):
        sm.wait_for_session("", max_wait_secs=0.2)
