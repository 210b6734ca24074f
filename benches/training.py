"""Optimizer-apply and training-step benchmarks, side by side with TensorFlow and PyTorch.

    python benches/training.py [--quick] [--only apply,train]

Optimizer apply: one update step (`Session.run(train_op)` / `optimizer.step()`)
on (a) one 16M-parameter float32 variable (memory-bound), (b) one 1M variable
(cache-resident), (c) 500 variables of 4K parameters (overhead-bound), with
gradients already in memory; each figure is the median over repeats (7 of 3
steps at 16M, 21 of 20 steps below). Training: steps per second of an MLP with
Adam, feeding a NumPy batch every step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

OPTIMIZERS = ["Adam", "Momentum", "SGD", "RMSProp", "Adagrad"]
# Bytes each update reads and writes per parameter (float32): var, slots, grad.
BYTES_PER_PARAM = {"Adam": 28, "Momentum": 20, "SGD": 12, "RMSProp": 28, "Adagrad": 20}
SHAPES = {"16M x1": [(1 << 24,)], "1M x1": [(1 << 20,)], "4K x500": [(4096,)] * 500}


def med(fn, repeat, number):
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number)
    return statistics.median(out)


def try_import(name):
    try:
        return __import__(name)
    except Exception:
        return None


def ff_apply(name, shapes, repeat, number):
    import ferroflow as tf

    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        vs = [tf.Variable(rng.standard_normal(s, dtype=np.float32)) for s in shapes]
        gs = [tf.Variable(rng.standard_normal(s, dtype=np.float32) * 1e-3, trainable=False) for s in shapes]
        opt = {
            "Adam": lambda: tf.train.AdamOptimizer(1e-3),
            "Momentum": lambda: tf.train.MomentumOptimizer(1e-3, 0.9),
            "SGD": lambda: tf.train.GradientDescentOptimizer(1e-3),
            "RMSProp": lambda: tf.train.RMSPropOptimizer(1e-3),
            "Adagrad": lambda: tf.train.AdagradOptimizer(1e-3),
        }[name]()
        train = opt.apply_gradients([(g.value(), v) for g, v in zip(gs, vs)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return med(lambda: sess.run(train), repeat, number)


def tf_apply(tf, name, shapes, repeat, number):
    rng = np.random.default_rng(0)
    g = tf.Graph()
    with g.as_default():
        vs = [tf.compat.v1.Variable(rng.standard_normal(s, dtype=np.float32)) for s in shapes]
        gs = [tf.compat.v1.Variable(rng.standard_normal(s, dtype=np.float32) * 1e-3, trainable=False) for s in shapes]
        t = tf.compat.v1.train
        opt = {
            "Adam": lambda: t.AdamOptimizer(1e-3),
            "Momentum": lambda: t.MomentumOptimizer(1e-3, 0.9),
            "SGD": lambda: t.GradientDescentOptimizer(1e-3),
            "RMSProp": lambda: t.RMSPropOptimizer(1e-3),
            "Adagrad": lambda: t.AdagradOptimizer(1e-3),
        }[name]()
        train = opt.apply_gradients([(gv.read_value(), v) for gv, v in zip(gs, vs)])
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            return med(lambda: sess.run(train), repeat, number)


def torch_apply(torch, name, shapes, repeat, number, mode):
    rng = np.random.default_rng(0)
    ps = [torch.nn.Parameter(torch.from_numpy(rng.standard_normal(s, dtype=np.float32))) for s in shapes]
    for p in ps:
        p.grad = torch.from_numpy(rng.standard_normal(p.shape, dtype=np.float32) * 1e-3)
    kw = {"foreach": True} if mode == "foreach" else {"fused": True}
    try:
        opt = {
            "Adam": lambda: torch.optim.Adam(ps, lr=1e-3, **kw),
            "Momentum": lambda: torch.optim.SGD(ps, lr=1e-3, momentum=0.9, **kw),
            "SGD": lambda: torch.optim.SGD(ps, lr=1e-3, **kw),
            "RMSProp": lambda: torch.optim.RMSprop(ps, lr=1e-3, **kw),
            "Adagrad": lambda: torch.optim.Adagrad(ps, lr=1e-3, **kw),
        }[name]()
        opt.step()
    except (RuntimeError, TypeError, ValueError):
        return None
    with torch.no_grad():
        return med(opt.step, repeat, number)


def triad_gbs(n, repeat):
    b = np.ones(n, np.float32)
    c = np.ones(n, np.float32)
    a = np.empty_like(b)

    def triad():
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)

    return 5 * 4 * n / med(triad, repeat, 1) / 1e9


# -- training steps ------------------------------------------------------------


def ff_train(sizes, batch, steps):
    import ferroflow as tf

    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, sizes[0]), dtype=np.float32)
    ys = rng.integers(0, sizes[-1], batch).astype(np.int32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, sizes[0]])
        y = tf.placeholder(tf.int32, [None])
        h = x
        for i in range(len(sizes) - 1):
            with tf.variable_scope(f"l{i}"):
                w = tf.get_variable("w", [sizes[i], sizes[i + 1]])
                b = tf.get_variable("b", [sizes[i + 1]], initializer=tf.zeros_initializer())
            h = tf.matmul(h, w) + b
            if i < len(sizes) - 2:
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: xs, y: ys}
            return med(lambda: sess.run(train, feed), 5, steps)


def tf_train(tf, sizes, batch, steps):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, sizes[0]), dtype=np.float32)
    ys = rng.integers(0, sizes[-1], batch).astype(np.int32)
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, sizes[0]])
        y = v1.placeholder(tf.int32, [None])
        h = x
        for i in range(len(sizes) - 1):
            with v1.variable_scope(f"l{i}"):
                w = v1.get_variable("w", [sizes[i], sizes[i + 1]])
                b = v1.get_variable("b", [sizes[i + 1]], initializer=v1.zeros_initializer())
            h = tf.matmul(h, w) + b
            if i < len(sizes) - 2:
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = v1.train.AdamOptimizer(1e-3).minimize(loss)
        with v1.Session(graph=g) as sess:
            sess.run(v1.global_variables_initializer())
            feed = {x: xs, y: ys}
            return med(lambda: sess.run(train, feed), 5, steps)


def torch_train(torch, sizes, batch, steps):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, sizes[0]), dtype=np.float32)
    ys = rng.integers(0, sizes[-1], batch).astype(np.int64)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        x = torch.from_numpy(xs)
        y = torch.from_numpy(ys)
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()

    return med(step, 5, steps)


def worker(framework, groups, quick):
    """Measures one framework (each runs in its own process: TensorFlow and
    PyTorch cannot share one, their bundled LLVMs clash)."""
    import json

    out = {"apply": {}, "train": {}}
    mod = None
    if framework == "tensorflow":
        mod = try_import("tensorflow")
        if mod is None:
            print(json.dumps(None))
            return
        mod.compat.v1.disable_eager_execution()
    elif framework == "torch":
        mod = try_import("torch")
        if mod is None:
            print(json.dumps(None))
            return
        mod.set_num_threads(os.cpu_count())
    rep = 3 if quick else 7
    if "apply" in groups:
        for label, shapes in SHAPES.items():
            n = sum(int(np.prod(s)) for s in shapes)
            number = 3 if n >= 1 << 24 else 20
            # Sub-millisecond steps take 21 repeats (about 0.1-0.2 s a case for ferroflow): with 7, one
            # 50 ms burst of other load on the machine could move the median.
            case_rep = 3 if quick else (7 if n >= 1 << 24 else 21)
            for name in OPTIMIZERS:
                key = f"{label} {name}"
                if framework == "ferroflow":
                    out["apply"][key] = ff_apply(name, shapes, case_rep, number)
                elif framework == "tensorflow":
                    out["apply"][key] = tf_apply(mod, name, shapes, case_rep, number)
                else:
                    out["apply"][key] = [torch_apply(mod, name, shapes, case_rep, number, m) for m in ("foreach", "fused")]
        if framework == "ferroflow":
            out["triad"] = triad_gbs(1 << 24, rep)
    if "train" in groups:
        for label, sizes, batch, steps in TRAIN_CASES:
            steps = max(5, steps // 4) if quick else steps
            fn = {"ferroflow": ff_train, "tensorflow": lambda *a: tf_train(mod, *a), "torch": lambda *a: torch_train(mod, *a)}
            out["train"][label] = fn[framework](sizes, batch, steps)
    if framework == "ferroflow":
        from ferroflow.training import optimizers  # noqa: F401

    print(json.dumps(out))


TRAIN_CASES = [
    ("784-512-512-10 b128", [784, 512, 512, 10], 128, 20),
    ("784-512-512-10 b32", [784, 512, 512, 10], 32, 50),
    ("64-32-10 b16", [64, 32, 10], 16, 300),
]


def main():
    import json
    import subprocess
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="apply,train")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    groups = set(args.only.split(","))
    if args.worker:
        worker(args.worker, groups, args.quick)
        return
    res = {}
    for fw in ("ferroflow", "tensorflow", "torch"):
        cmd = [sys.executable, __file__, "--worker", fw, "--only", args.only] + (["--quick"] if args.quick else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{") or ln == "null"]
        res[fw] = json.loads(lines[-1]) if lines else None
        if proc.returncode != 0 and fw == "ferroflow":
            sys.stderr.write(proc.stderr)
            raise SystemExit(1)
    ff, tfr, tor = res["ferroflow"], res["tensorflow"], res["torch"]
    print(f"TensorFlow: {'present' if tfr else 'absent'}, PyTorch: {'present' if tor else 'absent'}")

    def ms(t):
        return f"{t * 1e3:8.3f}ms" if t else "         -"

    if "apply" in groups:
        print("\nOptimizer apply, one step (median; lower is better). Ratios: other's time / ferroflow's.")
        print(f"  {'case':18s} {'ferroflow':>10s} {'GB/s':>6s} {'TF':>10s} {'torch fe':>10s} {'torch fu':>10s}"
              f" {'vs TF':>7s} {'vs best torch':>13s}")
        for key, t_ff in ff["apply"].items():
            name = key.rsplit(" ", 1)[1]
            n = sum(int(np.prod(s)) for s in SHAPES[key.rsplit(" ", 1)[0]])
            t_tf = tfr["apply"].get(key) if tfr else None
            fe, fu = tor["apply"].get(key, [None, None]) if tor else (None, None)
            best = min([t for t in (fe, fu) if t], default=None)
            gbs = BYTES_PER_PARAM[name] * n / t_ff / 1e9
            print(f"  {key:18s} {ms(t_ff)} {gbs:6.1f} {ms(t_tf)} {ms(fe)} {ms(fu)} "
                  f"{(t_tf / t_ff) if t_tf else float('nan'):6.2f}x {(best / t_ff) if best else float('nan'):12.2f}x")
        print(f"  STREAM-style triad (NumPy, 16M float32): {ff['triad']:.1f} GB/s")
    if "train" in groups:
        print("\nTraining steps/s, Adam, NumPy batch fed every step (higher is better)")
        print(f"  {'model':22s} {'ferroflow':>10s} {'TF':>10s} {'PyTorch':>10s} {'vs TF':>7s} {'vs torch':>9s}")
        for label, sizes, batch, _ in TRAIN_CASES:
            f = 1 / ff["train"][label]
            t = 1 / tfr["train"][label] if tfr else None
            p = 1 / tor["train"][label] if tor else None
            flops = 6 * batch * sum(a * b for a, b in zip(sizes, sizes[1:]))
            print(f"  {label:22s} {f:10.1f} {t or float('nan'):10.1f} {p or float('nan'):10.1f} "
                  f"{f / t if t else float('nan'):6.2f}x {f / p if p else float('nan'):8.2f}x"
                  f"   ({f * flops / 1e9:.1f} GFLOP/s)")


if __name__ == "__main__":
    main()
