"""Time of ``import ferroflow`` (and ``import ferroflow.compat.v1``) next to ``import tensorflow``.

    python benches/import_time.py [--repeat N] [--tf-python PATH] [--baseline DIR] [--bytecode cached|source]

Each sample is a fresh interpreter that prints ``time.perf_counter()`` around the import statement alone
(interpreter start-up excluded); the median of ``--repeat`` samples is reported, the candidates interleaved
so that they share the machine's load. ``--tf-python`` is an interpreter with TensorFlow installed (default
/work/tfvenv/bin/python when it exists; otherwise TF is skipped). ``--baseline DIR`` adds another copy of
the ``ferroflow`` package (a directory holding it, put first on PYTHONPATH), e.g. an older commit's
``python/`` with the native module copied in.

``--bytecode``: ``source`` compiles every module from source on each run (``PYTHONDONTWRITEBYTECODE=1``
with no ``__pycache__``, the state of a development checkout here); ``cached`` loads byte code written
by one warm-up run into a private cache (``PYTHONPYCACHEPREFIX``), the state of a pip-installed package.
TensorFlow's site-packages already hold byte code, so it loads cached byte code in both modes.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE.parent / "python"

PROBE = "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"


def sample(python, module, env):
    proc = subprocess.run([python, "-c", PROBE.format(module=module)], capture_output=True, text=True, env=env,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{python} -c 'import {module}' failed:\n{proc.stderr}")
    return float(proc.stdout.strip().splitlines()[-1])


def environment(pythonpath, bytecode, cache_dir):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    if bytecode == "source":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache_dir
    return env


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="samples per import (median reported)")
    default_tf = "/work/tfvenv/bin/python" if os.path.exists("/work/tfvenv/bin/python") else None
    parser.add_argument("--tf-python", default=default_tf, help="interpreter with TensorFlow installed")
    parser.add_argument("--baseline", default=None, help="directory holding another copy of the package")
    parser.add_argument("--bytecode", choices=("source", "cached"), default="source")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        rows = []  # (label, python, module, env)
        for tree, path in (("this tree", SOURCE), ("baseline", args.baseline)):
            if path is None:
                continue
            env = environment(path, args.bytecode, os.path.join(tmp, tree.replace(" ", "_")))
            for module in ("ferroflow", "ferroflow.compat.v1"):
                rows.append((f"`import {module}`, {tree}", sys.executable, module, env))
        if args.tf_python:
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
            rows.append(("`import tensorflow`", args.tf_python, "tensorflow", env))
            rows.append(("`import tensorflow.compat.v1`", args.tf_python, "tensorflow.compat.v1", env))
        for _, python, module, env in rows:  # warm-up: file caches, and byte code in "cached" mode
            sample(python, module, env)
        times = {label: [] for label, *_ in rows}
        for _ in range(args.repeat):
            for label, python, module, env in rows:
                times[label].append(sample(python, module, env))

    print(f"bytecode: {args.bytecode}; {args.repeat} samples each; load average {os.getloadavg()[0]:.1f}")
    print("| import | median (s) | min (s) | max (s) |")
    print("|---|---|---|---|")
    for label, values in times.items():
        print(f"| {label} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")


if __name__ == "__main__":
    main()
