"""Control-flow benchmarks (tf.while_loop, tf.map_fn, tf.nn.dynamic_rnn), side by side with TensorFlow
and PyTorch.

    python benches/control_flow.py [--quick] [--only while,map_fn,lstm,lstm_seq]
                                   [--tf-python PY] [--torch-python PY]

The same TF1 graph code runs under ferroflow and under TensorFlow's ``tf.compat.v1`` (after
``disable_v2_behavior()``: TF1 graphs and TF1 control flow, Switch/Merge/Enter/Exit/NextIteration):

  while   a tf.while_loop of 100,000 iterations whose body is 3 scalar ops (i + 1, x * a + b);
          microseconds per iteration.
  map_fn  tf.map_fn over 10,000 rows of a [10000, 8] matrix, body of 5 ops
          (reduce_sum(tanh(r * 2 + 1) * r)); milliseconds per Session.run.
  lstm    tf.nn.dynamic_rnn with BasicLSTMCell(256), batch 32, 50 time steps, input 256, one
          forward + backward + Adam step; milliseconds per step and achieved GFLOP/s (counting
          the gate matmuls only: 6 * T * B * (input + units) * 4 * units per step). PyTorch runs
          nn.LSTM + Adam on the CPU for the same shapes. ferroflow runs dynamic_rnn as one fused
          BlockLSTM op; a second ferroflow process with FERROFLOW_FUSED_RNN=0 times the
          while_loop path of the same graph code for comparison (skip it with --skip ferroflow-loop).
  lstm_seq  the lstm case as a padded batch: sequence_length with lengths from 25 to 50 (one row
          of each length bucket a bucketing input pipeline would give) and the cell in a
          DropoutWrapper whose output_keep_prob is a placeholder fed 1.0 (as at evaluation);
          outputs past each length are zeros. PyTorch runs nn.LSTM over a PackedSequence
          (pack_padded_sequence, then padded back to 50 steps). The loop path is timed as for lstm.

TensorFlow and PyTorch columns appear when those packages import; each framework runs in its
own process (their bundled LLVMs clash). ``--tf-python``/``--torch-python`` name another
interpreter for those processes (a virtual environment with TensorFlow, say), the default being
this one. A feature ferroflow lacks so far prints "not available" instead of failing the run.
The while and map_fn results and the LSTM's first loss (same initial weights everywhere but
PyTorch) are checked to agree between ferroflow and TensorFlow. Every figure is the median of
several timed repetitions after a warm-up.
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

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# tf.compat.v1.nn.rnn_cell lives in tf-keras (Keras 2); under Keras 3 BasicLSTMCell is gone.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

WHILE_ITERS = 100_000
MAP_ROWS, MAP_COLS = 10_000, 8
LSTM_UNITS, LSTM_BATCH, LSTM_STEPS, LSTM_INPUT = 256, 32, 50, 256
LSTM_FLOPS = 6 * LSTM_STEPS * LSTM_BATCH * (LSTM_INPUT + LSTM_UNITS) * 4 * LSTM_UNITS


# --single-thread: every framework on one thread, timed in process CPU seconds (set for the workers).
SINGLE = os.environ.get("FERROFLOW_BENCH_SINGLE_THREAD") == "1"


def med(fn, repeat, number):
    clock = time.process_time if SINGLE else time.perf_counter
    fn()
    out = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(number):
            fn()
        out.append((clock() - t0) / number)
    return statistics.median(out)


def try_import(name):
    try:
        return __import__(name)
    except Exception:
        return None


def machine():
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}"


# -- the graphs: identical TF1 code for ferroflow and tf.compat.v1 ------------------------------------


def build_while(tf):
    n = tf.placeholder(tf.int32, [], name="n")
    x0 = tf.placeholder(tf.float32, [], name="x0")
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.placeholder(tf.float32, [], name="b")
    _, x = tf.while_loop(lambda i, x: tf.less(i, n), lambda i, x: (i + 1, x * a + b), [tf.constant(0), x0])
    feed = {
        n: np.array(WHILE_ITERS, np.int32),
        x0: np.array(1.0, np.float32),
        a: np.array(0.999, np.float32),
        b: np.array(0.001, np.float32),
    }
    return x, feed


def build_map_fn(tf):
    elems = tf.placeholder(tf.float32, [MAP_ROWS, MAP_COLS], name="elems")
    out = tf.map_fn(lambda r: tf.reduce_sum(tf.tanh(r * 2.0 + 1.0) * r), elems)
    rows = np.random.RandomState(0).randn(MAP_ROWS, MAP_COLS).astype(np.float32)
    return out, {elems: rows}


def lstm_data():
    rng = np.random.RandomState(0)
    x = rng.randn(LSTM_STEPS, LSTM_BATCH, LSTM_INPUT).astype(np.float32)
    y = rng.randn(LSTM_STEPS, LSTM_BATCH, LSTM_UNITS).astype(np.float32) * 0.5
    k = (rng.rand(LSTM_INPUT + LSTM_UNITS, 4 * LSTM_UNITS).astype(np.float32) - 0.5) * 0.1
    return x, y, k


def build_lstm(tf):
    xs, ys, kernel = lstm_data()
    x = tf.placeholder(tf.float32, [LSTM_STEPS, LSTM_BATCH, LSTM_INPUT], name="x")
    y = tf.placeholder(tf.float32, [LSTM_STEPS, LSTM_BATCH, LSTM_UNITS], name="y")
    # The cell's kernel comes from the scope's initializer (a fixed array); its bias is zeros.
    with tf.variable_scope("rnn_bench", initializer=tf.constant_initializer(kernel)):
        cell = tf.nn.rnn_cell.BasicLSTMCell(LSTM_UNITS)
        out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, time_major=True)
    loss = tf.reduce_mean(tf.square(out - y))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return loss, train, {x: xs, y: ys}


def lstm_lengths():
    lengths = np.random.RandomState(1).randint(LSTM_STEPS // 2, LSTM_STEPS + 1, size=LSTM_BATCH)
    lengths[0] = LSTM_STEPS
    return lengths.astype(np.int32)


def build_lstm_seq(tf):
    xs, ys, kernel = lstm_data()
    x = tf.placeholder(tf.float32, [LSTM_STEPS, LSTM_BATCH, LSTM_INPUT], name="x")
    y = tf.placeholder(tf.float32, [LSTM_STEPS, LSTM_BATCH, LSTM_UNITS], name="y")
    lengths = tf.placeholder(tf.int32, [LSTM_BATCH], name="lengths")
    keep = tf.placeholder(tf.float32, [], name="keep")
    with tf.variable_scope("rnn_bench", initializer=tf.constant_initializer(kernel)):
        cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(LSTM_UNITS), output_keep_prob=keep)
        out, _ = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32, time_major=True)
    loss = tf.reduce_mean(tf.square(out - y))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return loss, train, {x: xs, y: ys, lengths: lstm_lengths(), keep: np.float32(1.0)}


def run_tf1(tf, session, case, quick):
    """Times one case with a TF1-style module; returns a dict (or raises)."""
    g = tf.Graph()
    with g.as_default():
        if case == "while":
            x, feed = build_while(tf)
            with session(g) as sess:
                value = float(sess.run(x, feed))
                t = med(lambda: sess.run(x, feed), 3 if quick else 5, 1)
            return {"seconds": t, "value": value}
        if case == "map_fn":
            out, feed = build_map_fn(tf)
            with session(g) as sess:
                value = np.asarray(sess.run(out, feed)).tolist()
                t = med(lambda: sess.run(out, feed), 3 if quick else 7, 1)
            return {"seconds": t, "value": value}
        if case in ("lstm", "lstm_seq"):
            loss, train, feed = (build_lstm if case == "lstm" else build_lstm_seq)(tf)
            with session(g) as sess:
                sess.run(tf.global_variables_initializer())
                first = float(sess.run(loss, feed))
                t = med(lambda: sess.run(train, feed), 3 if quick else 5, 2 if quick else 3)
            return {"seconds": t, "value": first}
    raise ValueError(case)


def run_torch(torch, case, quick):
    if case not in ("lstm", "lstm_seq"):
        return None
    xs, ys, _ = lstm_data()
    model = torch.nn.LSTM(LSTM_INPUT, LSTM_UNITS)  # time-major input [T, B, D]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    lengths = torch.from_numpy(lstm_lengths().astype(np.int64))
    rnn_utils = torch.nn.utils.rnn

    def forward():
        if case == "lstm":
            return model(x)[0]
        packed = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False)
        return rnn_utils.pad_packed_sequence(model(packed)[0], total_length=LSTM_STEPS)[0]

    def step():
        opt.zero_grad()
        out = forward()
        loss = torch.mean((out - y) ** 2)
        loss.backward()
        opt.step()

    return {"seconds": med(step, 3 if quick else 5, 2 if quick else 3)}


def worker(framework, cases, quick):
    out = {}
    if framework == "ferroflow":
        import ferroflow as tf

        out["version"] = getattr(tf, "__version__", "?")
        for case in cases:
            try:
                out[case] = run_tf1(tf, lambda g: tf.Session(graph=g), case, quick)
            except Exception as e:  # features land incrementally: report, don't crash
                out[case] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}
    elif framework == "tensorflow":
        mod = try_import("tensorflow")
        if mod is None:
            print(json.dumps(None))
            return
        v1 = mod.compat.v1
        v1.disable_v2_behavior()
        v1.logging.set_verbosity(v1.logging.ERROR)
        out["version"] = mod.__version__
        config = v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1) if SINGLE else None
        for case in cases:
            out[case] = run_tf1(v1, lambda g: v1.Session(graph=g, config=config), case, quick)
    elif framework == "torch":
        mod = try_import("torch")
        if mod is None:
            print(json.dumps(None))
            return
        mod.set_num_threads(1 if SINGLE else os.cpu_count())
        out["version"] = mod.__version__
        for case in cases:
            out[case] = run_torch(mod, case, quick)
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="while,map_fn,lstm,lstm_seq")
    parser.add_argument("--tf-python", default=sys.executable, help="interpreter with TensorFlow")
    parser.add_argument("--torch-python", default=sys.executable, help="interpreter with PyTorch")
    parser.add_argument("--skip", default="", help="comma-separated frameworks not to run")
    parser.add_argument("--single-thread", action="store_true",
                        help="run every framework on one thread and time process CPU seconds instead of wall "
                             "time (a comparison of work that a loaded machine disturbs less)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cases = [c for c in args.only.split(",") if c]
    if args.worker:
        worker(args.worker, cases, args.quick)
        return

    print(f"machine: {machine()}")
    skip = set(args.skip.split(","))
    res = {}
    for fw, py in (
        ("ferroflow", sys.executable),
        ("ferroflow-loop", sys.executable),
        ("tensorflow", args.tf_python),
        ("torch", args.torch_python),
    ):
        loop_cases = [c for c in cases if c in ("lstm", "lstm_seq")]
        if fw in skip or (fw == "ferroflow-loop" and not loop_cases):
            res[fw] = None
            continue
        env = dict(os.environ)
        if args.single_thread:
            env.update(FERROFLOW_BENCH_SINGLE_THREAD="1", RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1",
                       OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        worker_cases = cases
        if fw == "ferroflow-loop":
            env["FERROFLOW_FUSED_RNN"] = "0"
            worker_cases = loop_cases
        cmd = [py, os.path.abspath(__file__), "--worker", fw.split("-")[0], "--only", ",".join(worker_cases)]
        cmd += ["--quick"] if args.quick else []
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{") or ln == "null"]
        res[fw] = json.loads(lines[-1]) if lines else None
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
            print(f"{fw}: worker failed ({tail[0]})")
            if fw == "ferroflow":
                sys.stderr.write(proc.stderr)
    ff, tfr, tor = res["ferroflow"], res["tensorflow"], res["torch"]
    print(
        f"ferroflow: {ff.get('version') if ff else 'absent'}, TensorFlow: {tfr.get('version') if tfr else 'absent'}, "
        f"PyTorch: {tor.get('version') if tor else 'absent'}"
    )

    def get(r, case):
        v = (r or {}).get(case)
        return v if v and "seconds" in v else None

    def cell(v, scale, width=11):
        return f"{v['seconds'] * scale:{width}.3f}" if v else f"{'-':>{width}s}"

    def ratio(a, b):
        return f"{a['seconds'] / b['seconds']:7.2f}x" if a and b else f"{'-':>8s}"

    def agree(case, f, t):
        if not (f and t):
            return ""
        ok = np.allclose(np.asarray(f["value"]), np.asarray(t["value"]), rtol=1e-4, atol=1e-5)
        return (
            "  results agree"
            if ok
            else f"  RESULTS DIFFER (ferroflow {f['value']!r:.60}, TF {t['value']!r:.60})"
        )

    print("\nTimes: median, lower is better. ff/TF and ff/torch: ferroflow's time over the other's.")
    if args.single_thread:
        print("Single thread: every framework on one thread; times are process CPU seconds.")
    rows = [
        ("while", f"while_loop, {WHILE_ITERS:,} iterations, 3-op body", "us/iter", 1e6 / WHILE_ITERS),
        ("map_fn", f"map_fn over {MAP_ROWS:,} rows, 5-op body", "ms/call", 1e3),
        ("lstm", f"dynamic_rnn LSTM({LSTM_UNITS}) b{LSTM_BATCH} T{LSTM_STEPS} fwd+bwd+Adam", "ms/step", 1e3),
        ("lstm_seq", f"dynamic_rnn LSTM, lengths {LSTM_STEPS // 2}-{LSTM_STEPS}, DropoutWrapper", "ms/step", 1e3),
    ]
    print(
        f"  {'case':50s} {'unit':8s} {'ferroflow':>11s} {'TF':>11s} {'PyTorch':>11s} {'ff/TF':>8s} {'ff/torch':>8s}"
    )
    for case, label, unit, scale in rows:
        if case not in cases:
            continue
        f, t, p = get(ff, case), get(tfr, case), get(tor, case)
        ffcell = cell(f, scale) if f else f"{'n/a':>11s}"
        line = (
            f"  {label:50s} {unit:8s} {ffcell} {cell(t, scale)} {cell(p, scale)} {ratio(f, t)} {ratio(f, p)}"
        )
        print(line + agree(case, f, t))
        if ff and not f:
            err = (ff.get(case) or {}).get("error", "")
            print(f"    ferroflow: not available ({err})")
        if case == "lstm":
            gf = [
                f"{n} {LSTM_FLOPS / v['seconds'] / 1e9:.1f}"
                for n, v in (("ferroflow", f), ("TF", t), ("PyTorch", p))
                if v
            ]
            print(f"    GFLOP/s (gate matmuls, {LSTM_FLOPS / 1e9:.2f} GFLOP a step): {', '.join(gf) or '-'}")
        if case in ("lstm", "lstm_seq"):
            loop = get(res["ferroflow-loop"], case)
            if loop:
                print(
                    f"    ferroflow's while_loop path (FERROFLOW_FUSED_RNN=0): {loop['seconds'] * scale:.3f} {unit}"
                    f"{agree(case, f, loop)}"
                )


if __name__ == "__main__":
    main()
