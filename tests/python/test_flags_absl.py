"""tf.flags as the thin layer over absl.flags that TensorFlow's is: one registry with absl's, TF's additions
(implicit parse, old keyword names) on top. The behaviour itself is in test_flags.py."""

import inspect
import logging
import subprocess
import sys
import textwrap

import absl.flags
import pytest

import ferroflow as tf
from ferroflow.platform import flags


def _run_python(code, *args):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=120
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_the_names_are_absls():
    for name in absl.flags.__all__:
        assert hasattr(tf.flags, name), name
    for name in ("FlagValues", "Error", "IllegalFlagValueError", "DEFINE_enum_class", "DEFINE_alias", "FlagHolder"):
        assert getattr(tf.flags, name) is getattr(absl.flags, name)
    # The wrapped DEFINE_* keep absl's signatures (what the API coverage check compares).
    for name in ("DEFINE_string", "DEFINE_integer", "DEFINE_float", "DEFINE_boolean", "DEFINE_multi_enum"):
        assert inspect.signature(getattr(tf.flags, name)) == inspect.signature(getattr(absl.flags, name))
    assert tf.flags.DEFINE_bool is tf.flags.DEFINE_boolean


def test_flags_is_absls_registry():
    # absl.logging's flags live there, as they do under TensorFlow.
    assert "verbosity" in tf.flags.FLAGS and tf.flags.FLAGS["log_dir"] is absl.flags.FLAGS["log_dir"]
    assert type(tf.flags.FLAGS) is not absl.flags.FlagValues and isinstance(tf.flags.FLAGS, absl.flags.FlagValues)


def test_old_keyword_names_are_logged(caplog):
    fv = flags.FlagValues()
    with caplog.at_level(logging.WARNING):
        flags.DEFINE_multi_integer(flag_name="ks", default_value=[1], docstring="d", flag_values=fv)
    assert "flag_name, default_value, docstring" in caplog.text
    fv(["p", "--ks=2", "--ks=3"])
    assert fv.ks == [2, 3] and fv["ks"].help.startswith("d;")
    with pytest.raises(TypeError):
        flags.DEFINE_string("s", "v", "h", flag_values=fv, default_value="w")  # twice: absl's own TypeError


_PROGRAM = """
import absl.flags
import ferroflow as tf
absl.flags.DEFINE_integer("from_absl", 1, "defined through absl")
tf.flags.DEFINE_string("from_tf", "x", "defined through tf.flags")
FLAGS = tf.flags.FLAGS
"""


def test_absl_and_tf_flags_parse_together_in_app_run():
    code = _PROGRAM + (
        "def main(argv):\n"
        "    print('VALS', FLAGS.from_absl, absl.flags.FLAGS.from_tf, argv[1:])\n"
        "tf.app.run(main)\n"
    )
    status, out, err = _run_python(code, "--from_absl=5", "--from_tf=y", "--other=1", "pos")
    assert status == 0, err
    assert "VALS 5 y ['--other=1', 'pos']" in out


def test_help_on_a_program_that_only_reads_flags():
    status, out, err = _run_python('"""Reads %s lazily."""\n' + _PROGRAM + "print('VALUE', FLAGS.from_tf)\n", "--help")
    assert status == 1, err
    assert "Reads -c lazily." in out and "--from_tf: defined through tf.flags" in out and "VALUE" not in out
