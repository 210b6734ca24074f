"""Checks that TensorFlow reads ferroflow's checkpoints and ferroflow reads TensorFlow's (not run by CI).

    python tools/tf_interop_check.py --tf-python /work/tfvenv/bin/python [--keep DIR] [--case NAME ...]

Every case builds the same TF1-style graph twice, once with ``import
ferroflow`` and once with ``tensorflow.compat.v1`` (the model code below is
written once, against whichever module is passed in), each in its own
subprocess:

* ``saver_adam``: a dense layer and a global step trained with Adam, saved by
  ``Saver`` (slots ``dense/kernel/Adam``, ``beta1_power``, ...);
* ``saver_sharded``: float32/float64/int32 variables on ``/cpu:0`` and
  ``/cpu:1``, ``Saver(sharded=True)`` (two data files, one merged index);
* ``partitioned``: a [7, 3] variable in 3 parts and a bias trained with Adam,
  ``Saver`` (the parts and their slots are slices of ``emb``, ``emb/Adam``);
* ``checkpoint``: ``tf.train.Checkpoint(model=..., optimizer=Adam).save``;
  the reader calls ``restore()`` before ``minimize()`` creates the slots
  (restore-on-create), then ``assert_consumed()`` and
  ``initialize_or_restore()``.

For each case and direction (ferroflow writes and TensorFlow reads, and the
reverse) the writer trains a few steps, saves, and records every variable's
value; the reader builds the graph afresh, restores (``Saver.restore`` or
``Checkpoint.restore``) and records every variable's value, and both sides
read every key of the file with their own ``tf.train.load_checkpoint``. A
case passes when all of these agree exactly (same names, dtypes, shapes and
bits). The report also says whether the two frameworks' files for the same
case are byte-identical (information only: training numerics may differ in
the last bit). Exit status 1 if any case fails.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = ("saver_adam", "saver_sharded", "partitioned", "checkpoint")
STEPS = 3


# -- the models, written once for both frameworks ------------------------------------------


def _inputs():
    x = np.linspace(-1.0, 1.0, 20, dtype=np.float32).reshape(5, 4)
    y = np.stack([np.sin(3 * x.sum(1)), np.cos(x[:, 0]), x[:, 1] * x[:, 2]], 1).astype(np.float32)
    kernel = (np.arange(12, dtype=np.float32).reshape(4, 3) - 6.0) / 10.0
    return x, y, kernel


def _model_saver_adam(tf):
    x, y, kernel = _inputs()
    with tf.variable_scope("dense"):
        w = tf.get_variable("kernel", [4, 3], initializer=tf.constant_initializer(kernel))
        b = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) + b - y))
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    return {"train": train, "saver": tf.train.Saver(), "setup": []}


def _model_saver_sharded(tf):
    with tf.device("/cpu:0"):
        a = tf.get_variable("cpu0/a", [4], initializer=tf.constant_initializer([1.5, -2.0, 0.25, 8.0]))
        c = tf.get_variable("cpu0/c", [3], dtype=tf.int32, initializer=tf.constant_initializer([7, -3, 11]))
    with tf.device("/cpu:1"):
        b = tf.get_variable("cpu1/b", [2, 3], dtype=tf.float64,
                            initializer=tf.constant_initializer(np.arange(6.0).reshape(2, 3) / 7.0))
    train = tf.group(a.assign(a * 1.5 + 0.125), b.assign(b * b - 0.5), c.assign(c * 2 + 1))
    return {"train": train, "saver": tf.train.Saver(sharded=True), "setup": [],
            "config": tf.ConfigProto(device_count={"CPU": 2})}


def _model_partitioned(tf):
    emb0 = (np.arange(21, dtype=np.float32).reshape(7, 3) - 10.0) / 4.0
    target = np.linspace(-1.0, 1.0, 21, dtype=np.float32).reshape(7, 3)
    emb = tf.get_variable("emb", [7, 3], initializer=tf.zeros_initializer(),
                          partitioner=tf.fixed_size_partitioner(3))
    bias = tf.get_variable("bias", [3], initializer=tf.constant_initializer([0.5, -1.5, 3.0]))
    loss = tf.reduce_sum(tf.square(emb.as_tensor() - target)) + tf.reduce_sum(tf.square(bias - 2.0))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    setup = []
    for part in emb:
        info = part._get_save_slice_info()
        start, rows = info.var_offset[0], info.var_shape[0]
        setup.append(part.assign(emb0[start:start + rows]))
    return {"train": train, "saver": tf.train.Saver(), "setup": setup}


def _model_checkpoint(tf, restore_path=None):
    """Objects first; with ``restore_path`` the checkpoint is restored before minimize() makes the slots."""
    x, y, kernel = _inputs()
    model = tf.Module() if hasattr(tf, "Module") else type("Model", (), {})()
    model.w = tf.Variable(kernel, name="w")
    model.b = tf.Variable(np.zeros(3, np.float32), name="b")
    opt = tf.train.AdamOptimizer(0.05)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    status = ckpt.restore(restore_path) if restore_path else None
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), model.w) + model.b - y))
    train = opt.minimize(loss)
    return {"train": train, "checkpoint": ckpt, "status": status, "setup": []}


MODELS = {"saver_adam": _model_saver_adam, "saver_sharded": _model_saver_sharded,
          "partitioned": _model_partitioned, "checkpoint": _model_checkpoint}


# -- one side, run in a subprocess ----------------------------------------------------------


def _import(framework):
    if framework == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
        tf.logging.set_verbosity(tf.logging.ERROR)
        return tf
    sys.path.insert(0, str(ROOT / "python"))
    import ferroflow as tf

    return tf


def _dump(path, arrays):
    names = sorted(arrays)
    np.savez(path, **{f"a{i}": np.asarray(arrays[n]) for i, n in enumerate(names)})
    pathlib.Path(str(path) + ".json").write_text(json.dumps(names))


def _load(path):
    names = json.loads(pathlib.Path(str(path) + ".json").read_text())
    data = np.load(path, allow_pickle=False)
    return {n: data[f"a{i}"] for i, n in enumerate(names)}


def _variables(tf, sess):
    return {v.op.name: sess.run(v) for v in tf.global_variables()}


def _reader_values(tf, prefix):
    reader = tf.train.load_checkpoint(prefix)
    return {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()}


def run_side(framework, case, action, directory):
    """Writes (trains, saves) or reads (restores) ``case`` in ``directory``; records values as npz."""
    tf = _import(framework)
    directory = pathlib.Path(directory)
    prefix = str(directory / "model")
    with tf.Graph().as_default():
        if action == "write":
            parts = MODELS[case](tf)
            with tf.Session(config=parts.get("config")) as sess:
                sess.run(tf.global_variables_initializer())
                if parts["setup"]:
                    sess.run(parts["setup"])
                for _ in range(STEPS):
                    sess.run(parts["train"])
                if case == "checkpoint":
                    path = parts["checkpoint"].save(prefix, session=sess)
                else:
                    path = parts["saver"].save(sess, prefix, write_meta_graph=False)
                values = _variables(tf, sess)
            (directory / "path.txt").write_text(path)
        else:
            path = (directory / "path.txt").read_text()
            if case == "checkpoint":
                parts = MODELS[case](tf, restore_path=path)
                parts["status"].assert_consumed()
            else:
                parts = MODELS[case](tf)
            with tf.Session(config=parts.get("config")) as sess:
                if case == "checkpoint":
                    parts["status"].initialize_or_restore(sess)
                else:
                    parts["saver"].restore(sess, path)
                values = _variables(tf, sess)
    _dump(directory / f"{action}_{framework}_variables.npz", values)
    _dump(directory / f"{action}_{framework}_reader.npz", _reader_values(tf, path))


# -- the driver -------------------------------------------------------------------------------


def _compare(label, want, got):
    problems = []
    if sorted(want) != sorted(got):
        problems.append(f"{label}: names differ: only in writer {sorted(set(want) - set(got))}, "
                        f"only in reader {sorted(set(got) - set(want))}")
    for name in sorted(set(want) & set(got)):
        a, b = np.asarray(want[name]), np.asarray(got[name])
        if a.dtype != b.dtype or a.shape != b.shape:
            problems.append(f"{label}: {name}: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}")
        elif a.dtype.kind in "OSU":
            if a.tolist() != b.tolist():
                problems.append(f"{label}: {name}: values differ")
        elif a.tobytes() != b.tobytes():
            problems.append(f"{label}: {name}: values differ (max abs diff {np.max(np.abs(a - b))})")
    return problems


def _run(python, framework, case, action, directory):
    cmd = [python, str(pathlib.Path(__file__).resolve()), "--side", framework, case, action, str(directory)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-6:])
        return f"{framework} {action} failed (exit {proc.returncode}):\n{tail}"
    return None


def check(case, writer, reader, pythons, work):
    """Runs one direction of one case; returns a list of problems (empty: pass)."""
    directory = work / f"{case}-{writer}-to-{reader}"
    directory.mkdir(parents=True)
    for framework, action in ((writer, "write"), (reader, "read")):
        error = _run(pythons[framework], framework, case, action, directory)
        if error:
            return [error]
    problems = []
    written = _load(directory / f"write_{writer}_variables.npz")
    restored = _load(directory / f"read_{reader}_variables.npz")
    problems += _compare("restored variables", written, restored)
    problems += _compare("load_checkpoint", _load(directory / f"write_{writer}_reader.npz"),
                         _load(directory / f"read_{reader}_reader.npz"))
    return problems


def _same_bytes(work, case):
    a, b = work / f"{case}-ff-to-tf", work / f"{case}-tf-to-ff"
    names = sorted(p.name for p in a.iterdir() if ".data-" in p.name or p.name.endswith(".index"))
    other = sorted(p.name for p in b.iterdir() if ".data-" in p.name or p.name.endswith(".index"))
    if names != other:
        return "no (different files)"
    same = all((a / n).read_bytes() == (b / n).read_bytes() for n in names)
    return "yes" if same else "no"


def cli_parser(description, cases, side_metavar):
    """The command line both TF checks share: which Python has TensorFlow,
    where to keep the files, which cases, and the hidden per-side call."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tf-python", default="/work/tfvenv/bin/python", help="a Python with TensorFlow 2.x")
    parser.add_argument("--keep", help="keep the files in this directory (default: a temporary one)")
    parser.add_argument("--case", action="append", choices=cases, help="run only these cases")
    parser.add_argument("--side", nargs=len(side_metavar), metavar=side_metavar, help=argparse.SUPPRESS)
    return parser


def work_dir(keep, prefix):
    """``keep`` emptied (or a new temporary directory) for a check's files."""
    work = pathlib.Path(keep or tempfile.mkdtemp(prefix=prefix))
    if keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    return work


def report(line, problems):
    """Prints a case's PASS/FAIL line and its problems; returns 1 if it failed."""
    print(f"{'PASS' if not problems else 'FAIL'}  {line}")
    for p in problems:
        print("      " + p.replace("\n", "\n      "))
    return int(bool(problems))


def finish(work, keep, failed):
    """Removes the scratch files (unless kept) and prints the verdict; the exit status."""
    if not keep:
        shutil.rmtree(work)
    print(f"{failed} failed" if failed else "all passed")
    return 1 if failed else 0


def main(argv=None):
    parser = cli_parser(__doc__.split("\n")[0], CASES, ("FRAMEWORK", "CASE", "ACTION", "DIR"))
    args = parser.parse_args(argv)
    if args.side:
        run_side(*args.side)
        return 0
    pythons = {"ff": sys.executable, "tf": args.tf_python}
    work = work_dir(args.keep, "tf_interop_")
    failed = 0
    for case in args.case or CASES:
        for writer, reader in (("ff", "tf"), ("tf", "ff")):
            problems = check(case, writer, reader, pythons, work)
            name = {"ff": "ferroflow", "tf": "TensorFlow"}
            failed += report(f"{case:14s} {name[writer]} writes, {name[reader]} reads", problems)
        ok = all((work / f"{case}-{d}").exists() for d in ("ff-to-tf", "tf-to-ff"))
        if ok:
            print(f"      files of both writers byte-identical: {_same_bytes(work, case)}")
    return finish(work, args.keep, failed)


if __name__ == "__main__":
    sys.exit(main())
