"""``ferroflow saved-model show`` / ``run`` (TensorFlow's saved_model_cli commands) on a TF-written SavedModel."""

import os

import numpy as np
import pytest

from ferroflow import cli

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "saved_model")
CONV = os.path.join(FIXTURES, "tf_conv")
MLP = os.path.join(FIXTURES, "tf_mlp")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"), allow_pickle=False)


def _cli(capsys, *argv):
    status = cli.main(["saved-model", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_show_tag_sets_signatures_and_one_signature(capsys):
    status, out, _ = _cli(capsys, "show", "--dir", CONV)
    assert status == 0
    assert out.splitlines() == ["The given SavedModel contains the following tag-sets:", "'serve'", "'train'"]
    status, out, _ = _cli(capsys, "show", "--dir", MLP, "--tag_set", "serve")
    assert out.splitlines() == ["The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:",
                                'SignatureDef key: "classes"', 'SignatureDef key: "serving_default"']
    status, out, _ = _cli(capsys, "show", "--dir", MLP, "--tag_set", "serve", "--signature_def", "classes")
    assert status == 0
    assert out.splitlines() == [
        "The given SavedModel SignatureDef contains the following input(s):",
        "  inputs['x'] tensor_info:",
        "      dtype: DT_FLOAT",
        "      shape: (-1, 4)",
        "      name: x:0",
        "The given SavedModel SignatureDef contains the following output(s):",
        "  outputs['class_ids'] tensor_info:",
        "      dtype: DT_INT64",
        "      shape: (-1)",
        "      name: class_ids:0",
        "  outputs['probs'] tensor_info:",
        "      dtype: DT_FLOAT",
        "      shape: (-1, 3)",
        "      name: probs:0",
        "Method name is: tensorflow/serving/predict",
    ]
    status, out, _ = _cli(capsys, "show", "--dir", CONV, "--all")
    assert "MetaGraphDef with tag-set: 'train' contains the following SignatureDefs:" in out
    assert "signature_def['loss']:" in out and "'Conv2D'" in out


def test_show_errors(capsys, tmp_path):
    status, _, err = _cli(capsys, "show", "--dir", str(tmp_path))
    assert status == 1 and "SavedModel file does not exist at" in err
    status, _, err = _cli(capsys, "show", "--dir", MLP, "--tag_set", "serve,gpu")
    assert status == 1 and "could not be found" in err and "[['serve']]" in err
    status, _, err = _cli(capsys, "show", "--dir", MLP, "--tag_set", "serve", "--signature_def", "nope")
    assert status == 1 and "has no SignatureDef 'nope'; it has: classes, serving_default" in err


def test_run_prints_and_saves_outputs(capsys, tmp_path):
    x = EXPECTED["tf_mlp/serving_default/inputs/x"]
    np.save(tmp_path / "x.npy", x)
    status, out, err = _cli(capsys, "run", "--dir", MLP, "--tag_set", "serve", "--signature_def", "serving_default",
                            "--inputs", f"x={tmp_path / 'x.npy'}", "--outdir", str(tmp_path / "out"))
    assert status == 0, err
    assert "Output probs is saved to" in out
    np.testing.assert_allclose(np.load(tmp_path / "out" / "probs.npy"), EXPECTED["tf_mlp/serving_default/outputs/probs"],
                               rtol=1e-5)
    status, _, err = _cli(capsys, "run", "--dir", MLP, "--tag_set", "serve", "--signature_def", "serving_default",
                          "--inputs", f"x={tmp_path / 'x.npy'}", "--outdir", str(tmp_path / "out"))
    assert status == 1 and "--overwrite" in err
    np.savez(tmp_path / "in.npz", a=x, b=x)
    status, out, err = _cli(capsys, "run", "--dir", MLP, "--tag_set", "serve", "--signature_def", "classes",
                            "--inputs", f"x={tmp_path / 'in.npz'}[b]")
    assert status == 0, err
    want = EXPECTED["tf_mlp/classes/outputs/class_ids"]
    assert f"Result for output key class_ids:\n{want}" in out
    status, out, err = _cli(capsys, "run", "--dir", MLP, "--tag_set", "serve", "--signature_def", "classes",
                            "--input_exprs", "x=np.zeros((2, 4), dtype=np.float32)")
    assert status == 0, err
    assert "Result for output key probs" in out


@pytest.mark.parametrize("args,message", [
    (["--input_exprs", "y=[1.0]"], "has no input(s) y"),
    ([], "no value given for input(s) x"),
    (["--input_exprs", "x=[[1.0"], "cannot evaluate"),
    (["--inputs", "x=/no/such.npy"], "input file /no/such.npy does not exist"),
    (["--input_exprs", "x=[[1.0, 2.0]]"], "x:0"),  # wrong shape: the run's error names the tensor
])
def test_run_errors(capsys, args, message):
    status, _, err = _cli(capsys, "run", "--dir", MLP, "--tag_set", "serve", "--signature_def", "serving_default",
                          *args)
    assert status == 1
    assert message in err


def test_input_examples_become_serialized_examples():
    from ferroflow.protos import Example
    from ferroflow.tools import saved_model_cli

    feeds = saved_model_cli.collect_inputs(input_examples='inputs=[{"age": [30.0], "id": [7], "name": ["x"]}]')
    example = Example.FromString(feeds["inputs"][0])
    assert list(example.features.feature["age"].float_list.value) == [30.0]
    assert list(example.features.feature["id"].int64_list.value) == [7]
    assert list(example.features.feature["name"].bytes_list.value) == [b"x"]
