"""tf.app.flags / tf.flags and tf.app.run, against absl.flags' behaviour (what TF1 used)."""

import subprocess
import sys
import textwrap

import pytest

import ferroflow as tf
from ferroflow.platform import flags

# --------------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def fv():
    """A private FlagValues, so tests never touch the program's FLAGS."""
    return flags.FlagValues()


def _define_all(fv):
    flags.DEFINE_string("name", "x", "a name", flag_values=fv)
    flags.DEFINE_integer("n", 3, "a number", flag_values=fv)
    flags.DEFINE_float("f", 0.5, "a float", flag_values=fv)
    flags.DEFINE_boolean("b", False, "a bool", flag_values=fv)
    flags.DEFINE_bool("t", True, "another bool", flag_values=fv)
    flags.DEFINE_enum("e", "a", ["a", "b"], "an enum", flag_values=fv)
    flags.DEFINE_list("l", "p,q", "a list", flag_values=fv)
    flags.DEFINE_multi_string("ms", [], "strings", flag_values=fv)
    flags.DEFINE_multi_integer("mi", 1, "integers", flag_values=fv)


def _run_python(code, *args):
    """Runs ``code`` as a program (``-c``) with ``args``; returns (exit status, stdout, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=120
    )
    return proc.returncode, proc.stdout, proc.stderr


# --------------------------------------------------------------------------------------------------
# Defaults and parsing of every type
# --------------------------------------------------------------------------------------------------


def test_defaults(fv):
    _define_all(fv)
    assert fv(["prog"]) == ["prog"]
    assert fv.flag_values_dict() == {
        "name": "x",
        "n": 3,
        "f": 0.5,
        "b": False,
        "t": True,
        "e": "a",
        "l": ["p", "q"],
        "ms": [],
        "mi": [1],
    }


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--name=y"], {"name": "y"}),
        (["--name", "y z"], {"name": "y z"}),
        (["-name=y"], {"name": "y"}),
        (["--name="], {"name": ""}),
        (["--n=5"], {"n": 5}),
        (["--n", "-4"], {"n": -4}),
        (["--n=0x1f"], {"n": 31}),
        (["--n=0o17"], {"n": 15}),
        (["--n=1", "--n=2"], {"n": 2}),  # the last one wins
        (["--f=1e3"], {"f": 1000.0}),
        (["--f", "-2.5"], {"f": -2.5}),
        (["--f=3"], {"f": 3.0}),
        (["--b"], {"b": True}),
        (["-b"], {"b": True}),
        (["--b=true"], {"b": True}),
        (["--b=T"], {"b": True}),
        (["--b=1"], {"b": True}),
        (["--not"], {"t": False}),
        (["--t=false"], {"t": False}),
        (["--t=f"], {"t": False}),
        (["--t=0"], {"t": False}),
        (["--e=b"], {"e": "b"}),
        (["--e", "b"], {"e": "b"}),
        (["--l=a, b ,c"], {"l": ["a", "b", "c"]}),
        (['--l="x,y",z'], {"l": ["x,y", "z"]}),
        (["--l="], {"l": []}),
        (["--l=a", "--l=b"], {"l": ["b"]}),
        (["--ms=a", "--ms", "b"], {"ms": ["a", "b"]}),
        (["--mi=4", "--mi", "0x10"], {"mi": [4, 16]}),  # the default [1] is replaced, not extended
    ],
)
def test_parse_values(fv, args, expected):
    _define_all(fv)
    assert fv(["prog", *args]) == ["prog"]
    for name, value in expected.items():
        assert getattr(fv, name) == value
        assert type(getattr(fv, name)) is type(value)
        assert fv[name].present
        assert not fv[name].using_default_value


def test_string_defaults_are_parsed(fv):
    flags.DEFINE_integer("i", "0x10", "", flag_values=fv)
    flags.DEFINE_float("f", 1, "", flag_values=fv)
    flags.DEFINE_boolean("b", "true", "", flag_values=fv)
    flags.DEFINE_multi_integer("m", "7", "", flag_values=fv)
    flags.DEFINE_string("none", None, "", flag_values=fv)
    fv(["p"])
    assert (fv.i, fv.f, fv.b, fv.m, fv.none) == (16, 1.0, True, [7], None)
    assert fv["i"].default == 16


def test_enum_case_insensitive_and_multi_float(fv):
    flags.DEFINE_enum("mode", None, ["Train", "eval"], "", flag_values=fv, case_sensitive=False)
    flags.DEFINE_multi_float("lr", None, "", flag_values=fv)
    flags.DEFINE_multi_enum("opt", None, ["sgd", "adam"], "", flag_values=fv)
    fv(["p", "--mode=TRAIN", "--lr=0.1", "--lr=1", "--opt=adam", "--opt=sgd"])
    assert fv.mode == "Train" and fv.lr == [0.1, 1.0] and fv.opt == ["adam", "sgd"]


def test_positional_arguments_and_double_dash(fv):
    _define_all(fv)
    assert fv(["p", "pos1", "--n=5", "pos2", "--", "--name=z", "-x"]) == [
        "p",
        "pos1",
        "pos2",
        "--name=z",
        "-x",
    ]
    assert fv.n == 5 and fv.name == "x"
    assert fv(["p", "-", "--b"]) == ["p", "-"]
    assert fv.b is True


def test_non_gnu_getopt_stops_at_the_first_positional(fv):
    _define_all(fv)
    fv.set_gnu_getopt(False)
    assert fv(["p", "--n=5", "pos", "--n=6"]) == ["p", "pos", "--n=6"]
    assert fv.n == 5


def test_short_names(fv):
    flags.DEFINE_integer("steps", 1, "", flag_values=fv, short_name="s")
    fv(["p", "-s", "9"])
    assert fv.steps == 9 and fv.s == 9 and fv["s"] is fv["steps"]


def test_tf_old_keyword_names(fv):
    flags.DEFINE_string(flag_name="old", default_value="v", docstring="d", flag_values=fv)
    flags.DEFINE_integer(flag_name="oi", default_value=2, docstring="d", flag_values=fv)
    fv(["p"])
    assert fv.old == "v" and fv["old"].help == "d" and fv.oi == 2


# --------------------------------------------------------------------------------------------------
# Bad values and unknown flags
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "define, arg, message",
    [
        (lambda fv: flags.DEFINE_integer("n", 3, "", flag_values=fv), "--n=abc", "--n=abc"),
        (lambda fv: flags.DEFINE_integer("n", 3, "", flag_values=fv), "--n=1.5", "--n=1.5"),
        (
            lambda fv: flags.DEFINE_integer("n", 3, "", lower_bound=0, flag_values=fv),
            "--n=-1",
            "non-negative",
        ),
        (lambda fv: flags.DEFINE_integer("n", 3, "", upper_bound=5, flag_values=fv), "--n=6", "integer <= 5"),
        (lambda fv: flags.DEFINE_integer("n", 3, "", 1, 4, flag_values=fv), "--n=0", r"range \[1, 4\]"),
        (lambda fv: flags.DEFINE_float("n", 3, "", flag_values=fv), "--n=x", "--n=x"),
        (
            lambda fv: flags.DEFINE_float("n", 3, "", lower_bound=0, flag_values=fv),
            "--n=-0.5",
            "non-negative",
        ),
        (lambda fv: flags.DEFINE_boolean("n", False, "", flag_values=fv), "--n=maybe", "Non-boolean"),
        (lambda fv: flags.DEFINE_enum("n", "a", ["a", "b"], "", flag_values=fv), "--n=c", "<a|b>"),
        (lambda fv: flags.DEFINE_enum("n", "a", ["a", "b"], "", flag_values=fv), "--n=A", "<a|b>"),
        (lambda fv: flags.DEFINE_multi_integer("n", 3, "", flag_values=fv), "--n=z", "--n=z"),
    ],
)
def test_illegal_values(fv, define, arg, message):
    define(fv)
    before = fv["n"].value
    with pytest.raises(flags.IllegalFlagValueError, match=message):
        fv(["p", arg])
    assert fv["n"].value == before
    assert not fv.is_parsed()


@pytest.mark.parametrize(
    "define",
    [
        lambda fv: flags.DEFINE_integer("bad", "x", "", flag_values=fv),
        lambda fv: flags.DEFINE_integer("bad", 10, "", upper_bound=5, flag_values=fv),
        lambda fv: flags.DEFINE_boolean("bad", "yes", "", flag_values=fv),
        lambda fv: flags.DEFINE_enum("bad", "c", ["a", "b"], "", flag_values=fv),
    ],
)
def test_illegal_default(fv, define):
    with pytest.raises(flags.IllegalFlagValueError, match="--bad"):
        define(fv)
    assert "bad" not in fv


def test_negated_boolean_takes_no_value(fv):
    # absl (so TF 2.21) raises a plain ValueError here, not a flags.Error.
    flags.DEFINE_boolean("n", False, "", flag_values=fv)
    with pytest.raises(ValueError, match="--non=1 does not take an argument"):
        fv(["p", "--non=1"])
    assert fv["n"].value is False and not fv.is_parsed()


def test_missing_value(fv):
    _define_all(fv)
    with pytest.raises(flags.Error, match="Missing value for flag --n"):
        fv(["p", "--n"])


def test_unknown_flags(fv):
    _define_all(fv)
    with pytest.raises(flags.UnrecognizedFlagError, match="'nme'") as info:
        fv(["p", "--nme=3"])
    assert info.value.flagname == "nme"
    # absl suggests a flag only within its edit-distance threshold (as TF 2.21: none for 'nme').
    with pytest.raises(flags.UnrecognizedFlagError, match=r"Did you mean: name \?"):
        fv(["p", "--nam=3"])
    assert fv(["p", "--zzz=1", "pos", "--n=4", "--zzz"], known_only=True) == ["p", "--zzz=1", "pos", "--zzz"]
    assert fv.n == 4
    # --undefok names flags that may be given without being defined; they are dropped.
    assert fv(["p", "--undefok=zzz,yy", "--zzz=1", "--noyy", "x"]) == ["p", "x"]


def test_argv_must_be_a_list_with_the_program(fv):
    with pytest.raises(TypeError):
        fv("prog --n=1")
    with pytest.raises(ValueError):
        fv([])


def test_error_classes():
    for cls in (
        flags.IllegalFlagValueError,
        flags.UnrecognizedFlagError,
        flags.DuplicateFlagError,
        flags.CantOpenFlagFileError,
        flags.UnparsedFlagAccessError,
        flags.ValidationError,
        flags.FlagNameConflictsWithMethodError,
    ):
        assert issubclass(cls, flags.Error) and issubclass(cls, Exception)
    assert tf.flags.Error is tf.app.flags.Error is flags.Error


# --------------------------------------------------------------------------------------------------
# Required flags and validators
# --------------------------------------------------------------------------------------------------


def test_mark_flag_as_required(fv):
    flags.DEFINE_string("data_dir", None, "where", flag_values=fv)
    flags.mark_flag_as_required("data_dir", flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError, match="--data_dir must have a value"):
        fv(["p"])
    fv(["p", "--data_dir=/d"])
    assert fv.data_dir == "/d"
    with pytest.raises(flags.IllegalFlagValueError):
        fv.data_dir = None  # validators run on assignment too
    assert fv.data_dir == "/d"  # and a failed assignment is undone


def test_required_keyword_and_mark_flags_as_required(fv):
    flags.DEFINE_integer("a", None, "", flag_values=fv, required=True)
    flags.DEFINE_integer("b", None, "", flag_values=fv)
    flags.DEFINE_integer("c", None, "", flag_values=fv)
    flags.mark_flags_as_required(["b", "c"], flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError) as info:
        fv(["p", "--b=1"])
    assert "--a" in str(info.value) and "--c" in str(info.value) and "--b" not in str(info.value)
    fv(["p", "--a=1", "--b=2", "--c=3"])


def test_mark_flag_as_required_warns_on_a_default_and_needs_the_flag(fv):
    flags.DEFINE_integer("a", 1, "", flag_values=fv)
    with pytest.warns(UserWarning, match="non-None default"):
        flags.mark_flag_as_required("a", flag_values=fv)
    with pytest.raises(KeyError):
        flags.mark_flag_as_required("undefined", flag_values=fv)


def test_validators(fv):
    flags.DEFINE_integer("batch", 8, "", flag_values=fv)
    flags.register_validator("batch", lambda v: v % 2 == 0, message="batch must be even", flag_values=fv)

    @flags.validator("batch", flag_values=fv)
    def _small(value):
        if value > 100:
            raise flags.ValidationError("batch too large")
        return True

    with pytest.raises(flags.IllegalFlagValueError, match="flag --batch=3: batch must be even"):
        fv(["p", "--batch=3"])
    with pytest.raises(flags.IllegalFlagValueError, match="batch too large"):
        fv(["p", "--batch=200"])
    fv(["p", "--batch=64"])
    assert fv.batch == 64


def test_mutually_exclusive(fv):
    flags.DEFINE_string("x", None, "", flag_values=fv)
    flags.DEFINE_string("y", None, "", flag_values=fv)
    flags.mark_flags_as_mutual_exclusive(["x", "y"], flag_values=fv)
    fv(["p", "--x=1"])
    with pytest.raises(flags.IllegalFlagValueError, match="At most one of"):
        fv(["p", "--y=2"])


def test_multi_flags_validator(fv):
    flags.DEFINE_integer("lo", 0, "", flag_values=fv)
    flags.DEFINE_integer("hi", 10, "", flag_values=fv)

    @flags.multi_flags_validator(["lo", "hi"], message="lo must be below hi", flag_values=fv)
    def _ordered(values):
        return values["lo"] < values["hi"]

    fv(["p", "--lo=5"])
    with pytest.raises(flags.IllegalFlagValueError, match="lo must be below hi"):
        fv(["p", "--lo=50"])


# --------------------------------------------------------------------------------------------------
# FlagValues as an object
# --------------------------------------------------------------------------------------------------


def test_unparsed_access(fv):
    holder = flags.DEFINE_integer("n", 3, "", flag_values=fv)
    with pytest.raises(flags.UnparsedFlagAccessError, match="--n"):
        _ = fv.n
    with pytest.raises(flags.UnparsedFlagAccessError):
        _ = holder.value
    assert fv["n"].value == 3 and holder.default == 3 and holder.name == "n"
    fv(["p", "--n=4"])
    assert holder.value == 4 and holder.present


def test_attributes_assignment_and_deletion(fv):
    _define_all(fv)
    fv(["p"])
    fv.n = 7
    assert fv.n == 7 and not fv["n"].using_default_value
    with pytest.raises(flags.UnrecognizedFlagError):
        fv.undefined = 1
    with pytest.raises(AttributeError):
        _ = fv.undefined
    with pytest.raises(KeyError):
        _ = fv["undefined"]
    assert "n" in fv and "undefined" not in fv and len(fv) == 9 and "n" in list(fv)
    # absl's (and TF 2.21's) get_flag_value: the default stands in for a None value, not a missing flag.
    assert fv.get_flag_value("n", None) == 7
    fv.name = None
    assert fv.get_flag_value("name", "d") == "d"
    with pytest.raises(AttributeError):
        fv.get_flag_value("zz", "d")
    del fv.n
    assert "n" not in fv


def test_old_tf1_idiom_reading_the_flag_dict(fv):
    # TF1 programs printed their configuration with FLAGS.__flags (a dict of Flag objects since TF 1.5).
    _define_all(fv)
    fv(["p", "--n=4"])
    got = {name: flag.value for name, flag in fv.__flags.items()}
    assert got == fv.flag_values_dict() and got["n"] == 4


def test_set_default_and_unparse(fv):
    _define_all(fv)
    fv(["p", "--name=given"])
    fv.set_default("n", 11)
    fv.set_default("name", "other")
    assert fv.n == 11 and fv.name == "given"  # only flags still at their default change
    fv.unparse_flags()
    assert not fv.is_parsed() and fv["name"].value == "other" and fv["name"].present == 0  # the new default


def test_duplicate_and_conflicting_names(fv):
    flags.DEFINE_integer("n", 3, "first", flag_values=fv)
    with pytest.raises(flags.DuplicateFlagError, match="'n' is defined twice"):
        flags.DEFINE_string("n", "x", "second", flag_values=fv)
    assert fv["n"].help == "first"
    with pytest.raises(flags.FlagNameConflictsWithMethodError):
        flags.DEFINE_integer("is_parsed", 1, "", flag_values=fv)


def test_flagfile(fv, tmp_path):
    _define_all(fv)
    inner = tmp_path / "inner.flags"
    inner.write_text("--n=9\n")
    outer = tmp_path / "outer.flags"
    outer.write_text(f"# comment\n// another\n\n--name=from_file\n--flagfile={inner}\n--b\n")
    assert fv(["p", f"--flagfile={outer}", "--n=10", "pos"]) == ["p", "pos"]
    assert (fv.name, fv.n, fv.b) == ("from_file", 10, True)  # later arguments win
    fv(["p", "--n=1", "--flagfile", str(outer)])
    assert fv.n == 9
    with pytest.raises(flags.CantOpenFlagFileError):
        fv(["p", f"--flagfile={tmp_path / 'missing'}"])


def test_flags_into_string_round_trips(fv, tmp_path):
    _define_all(fv)
    fv(["p", "--name=q", "--n=4", "--b", "--l=u,v", "--ms=a", "--ms=b"])
    out = tmp_path / "saved.flags"
    fv.append_flags_into_file(str(out))
    other = flags.FlagValues()
    _define_all(other)
    other(["p", f"--flagfile={out}"])
    assert other.flag_values_dict() == fv.flag_values_dict()


def test_help_text(fv):
    _define_all(fv)
    flags.DEFINE_integer("k", 1, "bounded", lower_bound=0, flag_values=fv)
    text = fv.get_help()
    for line in [
        "--[no]b: a bool",
        "--e: <a|b>: an enum",
        "(default: 'p,q')",
        "(a comma separated list)",
        "(a non-negative integer)",
        "repeat this option to specify a list of values",
    ]:
        assert line in text
    assert str(fv) == text


# --------------------------------------------------------------------------------------------------
# The program's FLAGS and tf.app.run (each in its own interpreter)
# --------------------------------------------------------------------------------------------------

_PROGRAM = """
import sys
import ferroflow as tf
flags = tf.app.flags
flags.DEFINE_string("name", "x", "a name")
flags.DEFINE_integer("n", 3, "a number", lower_bound=0)
flags.DEFINE_boolean("b", False, "a bool")
FLAGS = flags.FLAGS

def main(argv):
    print("ARGV", argv)
    print("VALS", FLAGS.name, FLAGS.n, FLAGS.b)
    return FLAGS.n
"""


def test_module_objects_are_shared():
    assert tf.flags.FLAGS is tf.app.flags.FLAGS is tf.compat.v1.flags.FLAGS
    assert tf.flags.DEFINE_string is tf.app.flags.DEFINE_string
    assert tf.app.run is tf.compat.v1.app.run
    assert isinstance(tf.flags.FLAGS, flags.FlagValues)


def test_app_run_passes_remaining_argv_and_exits_with_mains_value():
    code = _PROGRAM + "tf.app.run()\n"
    status, out, err = _run_python(code, "pos1", "--name=y", "-n", "5", "--unknown=3", "--b", "pos2")
    assert status == 5, err
    assert "ARGV ['-c', 'pos1', '--unknown=3', 'pos2']" in out
    assert "VALS y 5 True" in out


def test_app_run_takes_main_and_argv_arguments():
    code = _PROGRAM + "tf.app.run(main=lambda argv: print('LAMBDA', argv), argv=['prog', '--n=0', 'rest'])\n"
    status, out, err = _run_python(code, "--n=9")
    assert status == 0, err
    assert "LAMBDA ['prog', 'rest']" in out


def test_app_run_exit_status_none_and_message():
    status, out, err = _run_python(_PROGRAM + "tf.app.run(lambda argv: None)\n")
    assert status == 0, err
    status, _, err = _run_python(_PROGRAM + "tf.app.run(lambda argv: 'failed: reason')\n")
    assert status == 1 and "failed: reason" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--n=-1"], "IllegalFlagValueError: flag --n=-1: -1 is not a non-negative integer"),
        (["--n=abc"], "IllegalFlagValueError: flag --n=abc"),
        (["--n"], "Missing value for flag --n"),
    ],
)
def test_app_run_bad_flags_fail(args, message):
    status, out, err = _run_python(_PROGRAM + "tf.app.run()\n", *args)
    assert status == 1
    assert message in err
    assert "VALS" not in out


def test_app_run_required_flag():
    code = (
        _PROGRAM
        + "flags.DEFINE_string('out', None, 'output')\nflags.mark_flag_as_required('out')\ntf.app.run()\n"
    )
    status, out, err = _run_python(code)
    assert status == 1 and "--out must have a value other than None" in err and "VALS" not in out
    status, out, err = _run_python(code, "--out=o")
    assert status == 3, err


def test_flags_parse_lazily_from_sys_argv():
    code = _PROGRAM + "print('LAZY', FLAGS.n, FLAGS.is_parsed())\n"
    status, out, err = _run_python(code, "--n=7", "positional")
    assert status == 0, err
    assert "LAZY 7 True" in out
    status, out, err = _run_python(code, "--typo=1")
    assert status == 1 and "UnrecognizedFlagError" in err


@pytest.mark.parametrize("arg", ["--help", "--helpshort", "-?", "--helpfull"])
def test_help_prints_flags_and_exits(arg):
    code = '"""Trains a thing with %s."""\n' + _PROGRAM + "tf.app.run()\n"
    status, out, err = _run_python(code, arg)
    assert status == 1, err
    assert "Trains a thing with -c." in out
    assert "--name: a name" in out and "(default: 'x')" in out and "(a non-negative integer)" in out
    assert "--[no]b: a bool" in out
    assert "VALS" not in out
    assert ("--[no]helpfull" in out) == (arg == "--helpfull")
