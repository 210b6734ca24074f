"""Wall time and test accuracy of ``ferroflow demo``, once per optimizer.

    python benches/demo.py [--optimizers adam,sgd,...] [--steps N] [--repeat R] [--python PATH]

Each run is a fresh process (``python -m ferroflow demo``, so import, graph building, session creation,
checkpoints and event files are all counted) with a fresh log directory; a second run of the default
configuration measures resuming from the first run's checkpoint. ``--python`` picks the interpreter,
e.g. a venv with a release wheel installed (``maturin build --release``); by default the current one.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def run_demo(python, logdir, args):
    """Runs the demo once; returns (wall seconds, test accuracy %, training steps/s)."""
    t0 = time.perf_counter()
    proc = subprocess.run([python, "-m", "ferroflow", "demo", "--logdir", logdir, *args],
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"demo failed ({' '.join(args)}):\n{proc.stderr}")
    accuracy = float(re.search(r"test accuracy: ([\d.]+)%", proc.stdout).group(1))
    rate = re.search(r"\((\d+) steps/s\)", proc.stdout)
    return wall, accuracy, float(rate.group(1)) if rate else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optimizers", default=None, help="comma-separated names (default: all)")
    parser.add_argument("--steps", type=int, default=None, help="--steps for the demo (default: its own)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per optimizer (median reported)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the demo")
    args = parser.parse_args()
    if args.optimizers:
        names = args.optimizers.split(",")
    else:
        names = subprocess.run(
            [args.python, "-c", "from ferroflow.demo import digits; print(','.join(digits.optimizer_names()))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip().split(",")
    extra = ["--steps", str(args.steps)] if args.steps is not None else []
    print(f"python: {args.python}; load average {os.getloadavg()[0]:.1f}")
    print("| optimizer | wall time (s) | test accuracy | training steps/s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            runs = [run_demo(args.python, os.path.join(tmp, f"{name}-{i}"), ["--optimizer", name, *extra])
                    for i in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            acc = statistics.median(r[1] for r in runs)
            rate = statistics.median(r[2] for r in runs)
            print(f"| {name} | {wall:.2f} | {acc:.2f}% | {rate:.0f} |", flush=True)
        logdir = os.path.join(tmp, "resume")
        run_demo(args.python, logdir, extra)
        wall, acc, rate = run_demo(args.python, logdir, extra)
        print(f"| adam, resumed run | {wall:.2f} | {acc:.2f}% | {rate:.0f} |")


if __name__ == "__main__":
    main()
