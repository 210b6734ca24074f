"""``tf.logging``: TensorFlow 1.x's names, levels and counting helpers over Python's logging."""

import logging
import os
import subprocess
import sys

import pytest

import ferroflow as tf
import ferroflow.compat.v1 as v1


@pytest.fixture
def verbosity():
    """Restores both loggers' levels after the test."""
    saved = [logging.getLogger(n).level for n in ("tensorflow", "ferroflow")]
    yield
    for name, level in zip(("tensorflow", "ferroflow"), saved):
        logging.getLogger(name).setLevel(level)


def _messages(caplog):
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "tensorflow"]


def test_names_and_levels_are_tensorflows():
    # dir(tf.compat.v1.logging) of TensorFlow 2.21, less the private names.
    names = ["DEBUG", "ERROR", "FATAL", "INFO", "TaskLevelStatusMessage", "WARN", "debug", "error", "fatal",
             "flush", "get_verbosity", "info", "log", "log_every_n", "log_first_n", "log_if", "set_verbosity",
             "vlog", "warn", "warning"]
    assert [n for n in names if not hasattr(tf.logging, n)] == []
    assert v1.logging is tf.logging
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR, tf.logging.FATAL) == (
        10, 20, 30, 40, 50)


def test_verbosity_governs_tensorflow_and_ferroflow_loggers(verbosity, caplog):
    caplog.set_level(logging.NOTSET)
    tf.logging.set_verbosity(tf.logging.ERROR)
    assert tf.logging.get_verbosity() == tf.logging.ERROR
    assert not logging.getLogger("ferroflow.training.basic_session_run_hooks").isEnabledFor(logging.INFO)
    tf.logging.info("hidden")
    tf.logging.warning("hidden too")
    tf.logging.error("shown %s", "error")
    tf.logging.set_verbosity(tf.logging.DEBUG)
    assert logging.getLogger("ferroflow.training.basic_session_run_hooks").isEnabledFor(logging.DEBUG)
    tf.logging.debug("d")
    tf.logging.warn("w")
    tf.logging.fatal("f")  # logs; does not exit
    tf.logging.log(tf.logging.INFO, "l %d", 1)
    tf.logging.vlog(tf.logging.INFO, "v")
    tf.logging.TaskLevelStatusMessage("status")
    tf.logging.flush()
    assert _messages(caplog) == [(40, "shown error"), (10, "d"), (30, "w"), (50, "f"), (20, "l 1"), (20, "v"),
                                 (40, "status")]
    # Records name the caller, not the logging module.
    assert {r.filename for r in caplog.records if r.name == "tensorflow"} == {os.path.basename(__file__)}


def test_counting_helpers_count_per_call_site(verbosity, caplog):
    caplog.set_level(logging.NOTSET)
    tf.logging.set_verbosity(tf.logging.INFO)
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
    for i in range(5):
        tf.logging.log_first_n(tf.logging.WARN, "first %d", 2, i)
    for i in range(3):
        tf.logging.log_first_n(tf.logging.WARN, "other site %d", 1, i)
    for i in range(4):
        tf.logging.log_if(tf.logging.INFO, "odd %d", i % 2, i)
    assert [m for _, m in _messages(caplog)] == [
        "every 0", "every 3", "every 6", "first 0", "first 1", "other site 0", "odd 1", "odd 3"]


def test_handler_writes_tensorflows_format_to_stderr():
    # A fresh process with an unconfigured root logger: tf.logging adds its stderr handler, and
    # set_verbosity(INFO) makes ferroflow's own INFO lines visible too.
    code = (
        "import logging, ferroflow as tf\n"
        "tf.logging.info('before')\n"
        "tf.logging.set_verbosity(tf.logging.INFO)\n"
        "tf.logging.info('step %d', 5)\n"
        "logging.getLogger('ferroflow.training.x').info('from ferroflow')\n"
        "logging.getLogger('ferroflow.training.x').debug('not shown')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == ["INFO:tensorflow:step 5", "INFO:ferroflow.training.x:from ferroflow"]
