"""``ferroflow inspect-checkpoint`` and ``python -m ferroflow.tools.inspect_checkpoint`` on TF-written checkpoints."""

import json
import subprocess
import sys

import numpy as np

from ferroflow import cli
from ferroflow.tools import inspect_checkpoint


def _case(fixtures, case):
    m = json.loads((fixtures / "checkpoints" / case / "list_variables.json").read_text())
    return m, str(fixtures / "checkpoints" / case / m["checkpoint_prefix"])


_DT = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "int32": "DT_INT32", "int64": "DT_INT64"}


def test_lists_names_dtypes_and_shapes(fixtures, capsys):
    m, prefix = _case(fixtures, "adam_model")
    assert cli.main(["inspect-checkpoint", prefix]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = sorted(f"{v['name']} ({_DT[v['dtype']]}) [{','.join(map(str, v['shape']))}]" for v in m["variables"])
    assert sorted(lines) == expected
    # A directory with a state file works too.
    assert cli.main(["inspect-checkpoint", str(fixtures / "checkpoints" / "adam_model" / "ckpt")]) == 0
    assert sorted(capsys.readouterr().out.splitlines()) == expected


def test_prints_one_tensor_or_all(fixtures, capsys):
    m, prefix = _case(fixtures, "partitioned")
    values = np.load(fixtures / "checkpoints" / "partitioned" / "values.npz")
    var = m["variables"][0]
    assert cli.main(["inspect-checkpoint", prefix, "--tensor", var["name"]]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"tensor_name:  {var['name']}"
    with np.printoptions(threshold=10**6):
        assert out.split("\n", 1)[1] == str(values[var["npz_key"]]) + "\n"
    assert cli.main(["inspect-checkpoint", prefix, "--all"]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("tensor_name:")] == [
        f"tensor_name:  {name}" for name in sorted(v["name"] for v in m["variables"])
    ]


def test_errors_name_the_file_or_tensor(tmp_path, fixtures, capsys):
    missing = str(tmp_path / "nothing")
    assert cli.main(["inspect-checkpoint", missing]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and missing in err and "Traceback" not in err
    bad = tmp_path / "bad"
    (tmp_path / "bad.index").write_bytes(b"\0" * 100)
    assert cli.main(["inspect-checkpoint", str(bad)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and err.count("\n") == 1
    _, prefix = _case(fixtures, "adam_model")
    assert cli.main(["inspect-checkpoint", prefix, "--tensor", "no/such"]) == 1
    err = capsys.readouterr().err
    assert "no/such" in err and prefix in err
    assert cli.main(["inspect-checkpoint", str(tmp_path)]) == 1
    assert str(tmp_path) in capsys.readouterr().err


def test_bfloat16_values_print_as_numbers(fixtures):
    import io

    m, prefix = _case(fixtures, "dtypes")
    bf = [v for v in m["variables"] if v["dtype"] == "bfloat16"]
    assert bf, "the dtypes fixture should hold a bfloat16 tensor"
    out = io.StringIO()
    inspect_checkpoint.inspect(prefix, tensor_name=bf[0]["name"], out=out)
    bits = np.load(fixtures / "checkpoints" / "dtypes" / "values.npz")[bf[0]["npz_key"]]
    expected = (bits.astype(np.uint32) << 16).view(np.float32)
    assert out.getvalue().split("\n", 1)[1] == str(expected) + "\n"


def test_python_module_with_tensorflows_flags(fixtures):
    m, prefix = _case(fixtures, "sharded")
    run = subprocess.run(
        [sys.executable, "-m", "ferroflow.tools.inspect_checkpoint", f"--file_name={prefix}", "--all_tensor_names"],
        capture_output=True, text=True, check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [f"tensor_name:  {n}" for n in sorted(v["name"] for v in m["variables"])]
    run = subprocess.run([sys.executable, "-m", "ferroflow.tools.inspect_checkpoint", "--file_name=/nonexistent/x"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1 and "/nonexistent/x" in run.stderr and "Traceback" not in run.stderr


def test_print_tensors_in_checkpoint_file_prints_as_tensorflow_2_21(fixtures, capsys):
    # The Python function of TF's tool (the "Save and Restore" guide calls it as chkp.print_tensors_...):
    # "tensor: NAME (DTYPE) [dims]" lines, values when all_tensors, and the parameter count; the
    # saved_model_guide program checks the full text against TF 2.21's.
    m, prefix = _case(fixtures, "partitioned")
    values = np.load(fixtures / "checkpoints" / "partitioned" / "values.npz")
    total = sum(int(np.prod(v["shape"])) for v in m["variables"])
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix, tensor_name="", all_tensors=False,
                                                        all_tensor_names=True)
    heads = [f"tensor: {v['name']} ({v['dtype']}) {list(v['shape'])}"
             for v in sorted(m["variables"], key=lambda v: v["name"])]
    assert capsys.readouterr().out.splitlines() == heads + [f"# Total number of params: {total}"]
    var = m["variables"][0]
    with np.printoptions(threshold=10**6):
        inspect_checkpoint.print_tensors_in_checkpoint_file(prefix, tensor_name=var["name"], all_tensors=False)
        expected = str(values[var["npz_key"]])
    out = capsys.readouterr().out
    assert out == (f"tensor: {var['name']} ({var['dtype']}) {list(var['shape'])}\n{expected}\n"
                   f"# Total number of params: {total}\n")
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix, tensor_name="no/such", all_tensors=False)
    assert capsys.readouterr().out == "Tensor no/such not found in checkpoint\n"
    # An unreadable checkpoint prints its error (TF prints the exception's text) instead of raising.
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix + "-missing", tensor_name="", all_tensors=True)
    assert prefix + "-missing" in capsys.readouterr().out
