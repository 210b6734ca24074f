"""GraphDef export and import, side by side with TensorFlow.

    python benches/graph_def.py [--quick] [--layers 40]

Builds the same TF1 training graph in each framework (an MLP of `--layers`
64x64 layers with ReLU, a mean-square loss and `AdamOptimizer.minimize`),
then times `Graph.as_graph_def()` (with and without `add_shapes`),
`tf.train.export_meta_graph()` and `tf.train.import_meta_graph()` of that
MetaGraphDef into a fresh graph. Each framework runs in its own child
process (TensorFlow through `tensorflow.compat.v1` with eager execution
off); run it with a Python that has TensorFlow installed to get its column,
e.g. `PYTHONPATH=python /work/tfvenv/bin/python benches/graph_def.py`.
Figures are medians; ratios are TensorFlow's time over ferroflow's
(above 1: ferroflow is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _median_ms(fn, repeat):
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e3


def worker(framework, layers, quick):
    import numpy as np

    if framework == "ferroflow":
        import ferroflow.compat.v1 as tf
    else:
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
    repeat = 5 if quick else 15
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 64])
        h = x
        for i in range(layers):
            w = tf.Variable(np.full([64, 64], 0.01, np.float32), name=f"w{i}")
            h = tf.nn.relu(tf.matmul(h, w) + 1.0)
        tf.train.AdamOptimizer(0.01).minimize(tf.reduce_mean(tf.square(h)))
        res = {
            "ops": len(g.get_operations()),
            "as_graph_def": _median_ms(lambda: g.as_graph_def(), repeat),
            "as_graph_def(add_shapes)": _median_ms(lambda: g.as_graph_def(add_shapes=True), repeat),
            "export_meta_graph": _median_ms(lambda: tf.train.export_meta_graph(), repeat),
        }
        meta = tf.train.export_meta_graph()

    def load():
        with tf.Graph().as_default():
            tf.train.import_meta_graph(meta)

    res["import_meta_graph"] = _median_ms(load, max(3, repeat // 2))
    res["nodes"] = len(meta.graph_def.node)
    print(json.dumps(res))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--layers", type=int, default=40)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.layers, args.quick)
        return
    results = {}
    for framework in ("ferroflow", "tensorflow"):
        cmd = [sys.executable, __file__, "--worker", framework, "--layers", str(args.layers)]
        proc = subprocess.run(cmd + (["--quick"] if args.quick else []), capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        results[framework] = json.loads(lines[-1]) if lines else None
        if results[framework] is None and framework == "ferroflow":
            sys.stderr.write(proc.stderr)
            raise SystemExit(1)
    ff, tf = results["ferroflow"], results["tensorflow"]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; TensorFlow {'present' if tf else 'absent'}")
    print(f"graph: {args.layers} layers + Adam: ferroflow {ff['ops']} ops ({ff['nodes']} exported nodes)"
          + (f", TensorFlow {tf['ops']} ops ({tf['nodes']} nodes)" if tf else ""))
    print(f"  {'case':28s} {'ferroflow':>11s} {'TensorFlow':>11s} {'TF/ff':>7s}")
    for key in ("as_graph_def", "as_graph_def(add_shapes)", "export_meta_graph", "import_meta_graph"):
        other = tf[key] if tf else None
        theirs = f"{other:8.2f} ms" if other else "         -"
        ratio = f"{other / ff[key]:6.2f}x" if other else "      -"
        print(f"  {key:28s} {ff[key]:8.2f} ms {theirs} {ratio}")


if __name__ == "__main__":
    main()
