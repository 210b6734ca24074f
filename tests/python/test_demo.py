"""``ferroflow demo``: the digits classifier trained with MonitoredTrainingSession (ferroflow/demo/digits.py)
and the ``ferroflow`` command around it (ferroflow/cli.py).

Runs are short (a few hundred steps at most) so the file takes seconds. The accuracy the demo reports
is checked against a numpy forward pass over the weights in the checkpoint it wrote.
"""

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf
from ferroflow import cli
from ferroflow.datasets import digits as digits_data
from ferroflow.demo import digits

REPO = Path(__file__).resolve().parents[2]


def _run(logdir, **kwargs):
    """digits.run with its messages and progress captured; returns (result, stdout text, progress text)."""
    out, progress = io.StringIO(), io.StringIO()
    kwargs.setdefault("steps", 50)
    result = digits.run(logdir=str(logdir), out=out, progress=progress, progress_tty=False, **kwargs)
    return result, out.getvalue(), progress.getvalue()


def _events(logdir):
    """(tag, step, value) of every scalar and the number of graph events in logdir's event files."""
    scalars, graphs = [], 0
    for path in sorted(Path(logdir).glob("events.out.tfevents.*")):
        for event in tf.train.summary_iterator(str(path)):
            if event.graph_def:
                graphs += 1
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    scalars.append((value.tag, event.step, value.simple_value))
    return scalars, graphs


def _numpy_logits(checkpoint, images):
    """The logits of the MLP whose weights are in ``checkpoint`` for uint8 ``images``, in numpy (float64)."""
    reader = tf.train.NewCheckpointReader(checkpoint)
    w1, b1 = reader.get_tensor("hidden/kernel"), reader.get_tensor("hidden/bias")
    w2, b2 = reader.get_tensor("logits/kernel"), reader.get_tensor("logits/bias")
    x = images.reshape(len(images), -1).astype(np.float64) / 16.0
    return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def _numpy_test_accuracy(checkpoint):
    """Accuracy on the held-out split of the MLP whose weights are in ``checkpoint``, computed in numpy."""
    _, (test_x, test_y) = digits_data.train_test_split()
    return (_numpy_logits(checkpoint, test_x).argmax(axis=1) == test_y).mean(), len(test_y)


def _numpy_train_loss(checkpoint):
    """Mean softmax cross-entropy over the whole training split, computed in numpy."""
    (train_x, train_y), _ = digits_data.train_test_split()
    logits = _numpy_logits(checkpoint, train_x)
    logits -= logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -log_probs[np.arange(len(train_y)), train_y].mean()


def test_demo_trains_saves_and_resumes(tmp_path):
    logdir = tmp_path / "run"
    first, out, progress = _run(logdir, steps=300)
    assert first.start_step == 0 and first.final_step == 300
    assert f"log directory: {logdir}" in out
    assert f"tensorboard --logdir {logdir}" in out
    assert "starting from step 0" in out
    # Non-terminal progress: about ten plain lines, the last at the target step.
    lines = progress.strip().splitlines()
    assert 5 <= len(lines) <= 11 and "\r" not in progress
    assert re.match(r"step 300/300 +loss \d+\.\d{4} +\d+ steps/s", lines[-1])

    # The checkpoint holds step 300 and weights whose accuracy is the reported one.
    assert first.checkpoint == tf.train.latest_checkpoint(str(logdir))
    assert first.checkpoint.endswith("model.ckpt-300")
    reader = tf.train.NewCheckpointReader(first.checkpoint)
    assert reader.get_tensor("global_step") == 300
    accuracy, n_test = _numpy_test_accuracy(first.checkpoint)
    assert abs(accuracy - first.test_accuracy) <= 1.0 / n_test  # a near-tie may flip between float32 and float64
    assert first.test_accuracy >= 0.9
    assert f"test accuracy: {first.test_accuracy:.2%}" in out

    # TensorBoard events: the graph, loss/accuracy every 50 steps, steps/sec, and the test accuracy.
    scalars, graphs = _events(logdir)
    assert graphs >= 1
    loss_steps = sorted(step for tag, step, _ in scalars if tag == "loss")
    assert loss_steps[0] == 1 and {51, 101, 151, 201, 251} <= set(loss_steps)
    assert any(tag == "accuracy" for tag, _, _ in scalars)
    assert ("test_accuracy", 300) in {(tag, step) for tag, step, _ in scalars}
    test_values = [v for tag, step, v in scalars if tag == "test_accuracy"]
    assert test_values == [pytest.approx(first.test_accuracy)]
    # TensorBoard's own loader finds the same scalars and the graph.
    from tensorboard.backend.event_processing import event_accumulator as ea

    acc = ea.EventAccumulator(str(logdir), size_guidance={ea.SCALARS: 0})
    acc.Reload()
    assert {"loss", "accuracy", "test_accuracy"} <= set(acc.Tags()[ea.SCALARS])
    assert acc.Tags()[ea.GRAPH] is True
    assert [s.step for s in acc.Scalars("loss")] == loss_steps

    # A second run restores step 300 and continues to 400.
    second, out2, progress2 = _run(logdir, steps=100)
    assert second.start_step == 300 and second.final_step == 400
    assert f"resumed from step 300 (checkpoint {first.checkpoint})" in out2
    assert progress2.strip().splitlines()[-1].startswith("step 400/400")
    assert tf.train.latest_checkpoint(str(logdir)).endswith("model.ckpt-400")
    # Restored weights, not fresh ones: the first logged loss of the resumed run is already small.
    scalars2, _ = _events(logdir)
    first_loss = min(scalars, key=lambda s: s[1] if s[0] == "loss" else 1 << 30)[2]
    resumed_loss = [v for tag, step, v in scalars2 if tag == "loss" and step > 300][0]
    assert resumed_loss < first_loss / 4
    accuracy2, _ = _numpy_test_accuracy(second.checkpoint)
    assert abs(accuracy2 - second.test_accuracy) <= 1.0 / n_test

    # --steps 0 only evaluates the latest checkpoint.
    third, out3, _ = _run(logdir, steps=0)
    assert third.start_step == third.final_step == 400
    assert third.test_accuracy == pytest.approx(second.test_accuracy)
    assert "trained 0 steps" in out3


class _InterruptAt(tf.train.SessionRunHook):
    """Raises KeyboardInterrupt after the run that takes the global step to ``step`` (a Ctrl-C)."""

    def __init__(self, step):
        self._step = step

    def begin(self):
        self._global_step = tf.train.get_global_step()

    def after_run(self, run_context, run_values):
        if run_context.session.run(self._global_step) == self._step:
            raise KeyboardInterrupt


def test_interrupt_saves_a_checkpoint_and_evaluates(tmp_path):
    result, out, _ = _run(tmp_path, steps=500, hooks=[_InterruptAt(37)])
    assert "interrupted: saving a checkpoint and evaluating" in out
    assert result.final_step == 37
    assert result.checkpoint == os.path.join(str(tmp_path), "model.ckpt-37")
    accuracy, n_test = _numpy_test_accuracy(result.checkpoint)
    assert abs(accuracy - result.test_accuracy) <= 1.0 / n_test
    resumed, out2, _ = _run(tmp_path, steps=3)
    assert resumed.start_step == 37 and resumed.final_step == 40


@pytest.mark.parametrize("name", digits.optimizer_names())
def test_every_optimizer_trains(tmp_path, name):
    result, out, _ = _run(tmp_path, steps=20, optimizer=name, save_summaries_steps=None)
    assert result.final_step == 20 and result.optimizer == name
    assert f"optimizer {digits.OPTIMIZERS[name].class_name}(" in out
    # The session saved the initial weights (step 0) and the final ones; training lowered the loss over
    # the whole training set.
    initial = os.path.join(str(tmp_path), "model.ckpt-0")
    assert result.checkpoint == os.path.join(str(tmp_path), "model.ckpt-20")
    assert _numpy_train_loss(result.checkpoint) < _numpy_train_loss(initial) - 0.01
    accuracy, n_test = _numpy_test_accuracy(result.checkpoint)
    assert abs(accuracy - result.test_accuracy) <= 1.0 / n_test


def test_optimizer_names_and_class_names_resolve():
    assert digits.resolve_optimizer("Adam") == "adam"
    assert digits.resolve_optimizer("ProximalGradientDescentOptimizer") == "proximal-sgd"
    assert digits.resolve_optimizer("proximal_adagrad") == "proximal-adagrad"
    assert digits.resolve_optimizer("AdagradDAOptimizer") == "adagrad-da"
    assert digits.resolve_optimizer("gradient-descent") == "sgd"
    for name in digits.optimizer_names():
        assert isinstance(getattr(tf.train, digits.OPTIMIZERS[name].class_name)(1.0, **(
            {"global_step": tf.Variable(0, dtype=tf.int64)} if digits.OPTIMIZERS[name].needs_global_step else {}
        ) | digits.OPTIMIZERS[name].kwargs), tf.train.Optimizer)
    with pytest.raises(digits.DemoError, match="--optimizer: unknown optimizer 'lbfgs'"):
        digits.resolve_optimizer("lbfgs")


def test_explicit_learning_rate_is_used(tmp_path):
    _, out, _ = _run(tmp_path, steps=5, optimizer="sgd", learning_rate=0.125, save_summaries_steps=None)
    assert "GradientDescentOptimizer(learning_rate=0.125)" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--steps", "-3"], "--steps: must be a whole number >= 0, got -3"),
        (["--steps", "ten"], "argument --steps: invalid int value: 'ten'"),
        (["--batch-size", "0"], "--batch-size: must be a whole number >= 1, got 0"),
        (["--learning-rate", "-0.1"], "--learning-rate: must be a finite number > 0, got -0.1"),
        (["--learning-rate", "nan"], "--learning-rate: must be a finite number > 0, got nan"),
        (["--optimizer", "newton"], "--optimizer: unknown optimizer 'newton' (choose from adam, sgd"),
        (["--hidden", "0"], "--hidden: must be a whole number >= 1, got 0"),
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    ],
)
def test_bad_options_give_one_line_errors(tmp_path, capsys, argv, message):
    try:
        code = cli.main(["demo", "--logdir", str(tmp_path / "x"), *argv])
    except SystemExit as e:  # argparse's own errors exit from inside parse_args
        code = e.code
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("ferroflow") and message in err
    assert not (tmp_path / "x").exists()


def test_logdir_that_is_a_file_is_rejected(tmp_path, capsys):
    path = tmp_path / "file"
    path.write_text("not a directory")
    assert cli.main(["demo", "--steps", "1", "--logdir", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"ferroflow demo: error: --logdir: {path} exists and is not a directory"


@pytest.mark.parametrize(
    "changed, detail",
    [
        (["--hidden", "32"], "Variable hidden/bias:0 has shape [32] but checkpoint key hidden/bias has shape [64]"),
        (["--optimizer", "momentum"], "Key hidden/bias/Momentum (variable hidden/bias/Momentum:0) not found"),
    ],
)
def test_resuming_a_different_model_is_a_one_line_error(tmp_path, capsys, changed, detail):
    assert cli.main(["demo", "--steps", "5", "--logdir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert cli.main(["demo", "--steps", "5", "--logdir", str(tmp_path), *changed]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith(f"ferroflow demo: error: --logdir: cannot resume from {tmp_path / 'model.ckpt-5'}, ")
    assert detail in err
    # The first run's checkpoint is untouched.
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-5")


def test_progress_on_a_terminal_redraws_one_line():
    stream = io.StringIO()
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        loss = tf.constant(0.5)
        train = tf.assign_add(step, 1)
        hook = digits.ProgressHook(loss, num_steps=40, stream=stream, is_tty=True, redraws_per_sec=1e9)
        with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=40), hook]) as sess:
            while not sess.should_stop():
                sess.run(train)
    text = stream.getvalue()
    frames = text.split("\r")[1:]
    assert len(frames) == 40 and text.endswith("\n") and text.count("\n") == 1
    assert frames[0].startswith("step  1/40 [" + "-" * 24 + "]   2%  loss 0.5000")
    assert frames[-1].startswith("step 40/40 [" + "#" * 24 + "] 100%  loss 0.5000")
    assert re.search(r"\d+ steps/s", frames[-1])


def test_default_logdir_is_stable_and_under_the_temp_dir():
    import tempfile

    assert digits.default_logdir() == digits.default_logdir()
    assert os.path.dirname(digits.default_logdir()) == tempfile.gettempdir()


def test_cli_help_lists_the_subcommands():
    proc = subprocess.run([sys.executable, "-m", "ferroflow", "--help"], capture_output=True, text=True,
                          env=_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    choices = re.search(r"\{([\w,-]+)\}", proc.stdout).group(1).split(",")
    assert "demo" in choices
    for name in choices:  # each subcommand is listed with its help line
        assert re.search(rf"^\s+{re.escape(name)}\s+\S", proc.stdout, re.M), name


def test_console_script_entry_point(tmp_path):
    # pyproject's [project.scripts] names ferroflow.cli:main; run it the way the generated script does.
    scripts = re.search(r"\[project\.scripts\]\s*\n(.*?)(\n\[|\Z)", (REPO / "pyproject.toml").read_text(), re.S)
    target = re.search(r'^ferroflow\s*=\s*"([\w.]+):(\w+)"', scripts.group(1), re.M)
    assert target.groups() == ("ferroflow.cli", "main")
    code = f"import sys; from {target.group(1)} import {target.group(2)}; sys.exit({target.group(2)}())"
    logdir = tmp_path / "logs"
    proc = subprocess.run([sys.executable, "-c", code, "demo", "--steps", "30", "--logdir", str(logdir),
                           "--optimizer", "momentum"], capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "test accuracy:" in proc.stdout and f"tensorboard --logdir {logdir}" in proc.stdout
    assert "step 30/30" in proc.stderr  # progress goes to stderr, plain lines when not a terminal
    assert tf.train.latest_checkpoint(str(logdir)).endswith("model.ckpt-30")


def _env():
    """The environment for a child Python that imports the same ferroflow as this process (the source tree
    or the installed package)."""
    env = dict(os.environ)
    package_parent = str(Path(tf.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    return env
