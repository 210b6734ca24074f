"""Write tests/fixtures/random/*.npz: outputs of TensorFlow 2.21's stateless random ops (pure functions of the
seed, so ferroflow must match them bit for bit), of ``tf.random.Generator`` in a tf.compat.v1 graph, and of the
deterministic candidate-sampler pieces, for tests/python/test_random_stateless.py and friends.

Each case is one call ``tf.random.<fn>(**kwargs)`` (see ``build``); ``specs`` lists the calls and where each
output lies in the per-dtype arrays ``data/<dtype>``. bfloat16 results are stored as their
uint16 bit patterns, uint64 ones (key/counter) as int64 bit patterns. Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_random_fixtures.py
"""

import json
import pathlib

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
tf1.disable_eager_execution()

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "random"

SEEDS = [[0, 0], [1, 2], [-7, 12345678901], [2**31 - 1, -(2**31)]]
SHAPES = [[0], [1], [3], [2, 5], [17]]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def encode(v):
    v = np.asarray(v)
    if v.dtype.name == "bfloat16":
        return v.view(np.uint16)
    if v.dtype == np.uint64:
        return v.view(np.int64)
    return v


def run(build):
    g = tf1.Graph()
    with g.as_default():
        t = build()
        with tf1.Session() as s:
            return s.run(t)


def stateless_cases():
    cases = []
    for i, seed in enumerate(SEEDS):
        for j, shape in enumerate(SHAPES):
            for dt in FLOATS:
                if (i + j) % 2 and dt in ("float16", "bfloat16") and shape != [17]:
                    continue
                cases.append(("stateless_uniform", dict(shape=shape, seed=seed, dtype=dt)))
                cases.append(("stateless_normal", dict(shape=shape, seed=seed, dtype=dt)))
                cases.append(("stateless_truncated_normal", dict(shape=shape, seed=seed, dtype=dt)))
            for dt in ["int32", "int64"]:
                cases.append(("stateless_uniform", dict(shape=shape, seed=seed, dtype=dt, minval=-5, maxval=1000)))
                cases.append(("stateless_uniform", dict(shape=shape, seed=seed, dtype=dt, minval=None, maxval=None)))
    extra = [
        ("stateless_uniform", dict(shape=[2, 3, 4], seed=[3, 4], minval=-2.5, maxval=7.0)),
        ("stateless_uniform", dict(shape=[5], seed=[3, 4], minval=-2.5, maxval=7.0, dtype="float64")),
        ("stateless_uniform", dict(shape=[5], seed=[3, 4], minval=-2, maxval=3, dtype="float16")),
        ("stateless_uniform", dict(shape=[9], seed=[3, 4], minval=-(2**31), maxval=2**31 - 1, dtype="int32")),
        ("stateless_uniform", dict(shape=[9], seed=[3, 4], minval=-(2**62), maxval=2**62, dtype="int64")),
        ("stateless_uniform", dict(shape=[6], seed=[3, 4], alg="philox")),
        ("stateless_uniform", dict(shape=[6], seed=[3, 4], alg="auto_select")),
        ("stateless_normal", dict(shape=[4, 3], seed=[9, 8], mean=1.5, stddev=0.25)),
        ("stateless_normal", dict(shape=[4, 3], seed=[9, 8], mean=[1.0, 2.0, 3.0], stddev=2.0, dtype="float64")),
        ("stateless_normal", dict(shape=[300], seed=[5, 6])),
        ("stateless_truncated_normal", dict(shape=[4, 3], seed=[9, 8], mean=-1.0, stddev=3.0)),
        ("stateless_truncated_normal", dict(shape=[300], seed=[5, 6])),
        ("stateless_truncated_normal", dict(shape=[101], seed=[5, 6], dtype="float64")),
        ("stateless_uniform", dict(shape=[100], seed=[5, 6], dtype="float64")),
        ("stateless_uniform", dict(shape=[2**11 + 3], seed=[11, 12])),
    ]
    cases += extra
    logits = [
        [[0.0, 1.0, 2.0]],
        [[-1.0, 0.5, 0.25, 3.0], [10.0, 10.0, -10.0, 0.0]],
        [[0.0, float("-inf"), 1.0], [float("-inf"), 2.0, float("-inf")]],
    ]
    for lg in logits:
        for n in [1, 5, 7]:
            for seed in SEEDS[1:3]:
                cases.append(("stateless_categorical", dict(logits=lg, num_samples=n, seed=seed)))
    cases.append(("stateless_categorical", dict(logits=[[1.0, 2.0, 3.0]] * 4, num_samples=3, seed=[4, 4], dtype="int32")))
    cases.append(("stateless_categorical", dict(logits=np.linspace(-3, 3, 50).reshape(2, 25).tolist(), num_samples=11, seed=[4, 5])))
    cases.append(("stateless_multinomial", dict(logits=[[1.0, 2.0, 3.0]], num_samples=6, seed=[4, 4])))
    cases.append(("stateless_categorical", dict(logits=[[1.0, 2.0, 3.0]], num_samples=6, seed=[4, 4], logits_dtype="float64")))
    # Binomial: inversion (n*p < 10), BTRS (n*p >= 10), p > 0.5, edge probabilities, broadcasting.
    for seed in SEEDS[1:3]:
        cases.append(("stateless_binomial", dict(shape=[7], seed=seed, counts=5.0, probs=0.3)))
        cases.append(("stateless_binomial", dict(shape=[7], seed=seed, counts=100.0, probs=0.4)))
        cases.append(("stateless_binomial", dict(shape=[7], seed=seed, counts=100.0, probs=0.9)))
        cases.append(("stateless_binomial", dict(shape=[7], seed=seed, counts=20.0, probs=0.8)))
        cases.append(("stateless_binomial", dict(shape=[3, 4], seed=seed, counts=[10.0, 50.0, 0.0, 1000.0], probs=[[0.5], [0.0], [1.0]])))
        cases.append(("stateless_binomial", dict(shape=[4, 2, 1], seed=seed, counts=[[7.0], [300.0]], probs=0.25, output_dtype="float32")))
        cases.append(("stateless_binomial", dict(shape=[5], seed=seed, counts=30.0, probs=0.6, output_dtype="int64", dtype_T="float64")))
        # Gamma: alpha = 1 (exponential), < 1, > 1; several dtypes; broadcasting.
        cases.append(("stateless_gamma", dict(shape=[6], seed=seed, alpha=1.0)))
        cases.append(("stateless_gamma", dict(shape=[6], seed=seed, alpha=0.3)))
        cases.append(("stateless_gamma", dict(shape=[4, 3], seed=seed, alpha=[0.5, 2.0, 7.5], beta=[2.0, 1.0, 0.5])))
        cases.append(("stateless_gamma", dict(shape=[5], seed=seed, alpha=3.0, dtype="float64")))
        cases.append(("stateless_gamma", dict(shape=[5], seed=seed, alpha=3.0, dtype="float16")))
        # Poisson: Knuth (lam < 10), Hormann (lam >= 10), output dtypes.
        cases.append(("stateless_poisson", dict(shape=[8], seed=seed, lam=3.5)))
        cases.append(("stateless_poisson", dict(shape=[8], seed=seed, lam=25.0)))
        cases.append(("stateless_poisson", dict(shape=[2, 3], seed=seed, lam=[0.5, 12.0, 400.0], dtype="int64")))
        cases.append(("stateless_poisson", dict(shape=[4, 2], seed=seed, lam=[2.0, 60.0], dtype="float32")))
        cases.append(("stateless_poisson", dict(shape=[4], seed=seed, lam=6.0, dtype="float64")))
        # Parameterized truncated normal.
        cases.append(("stateless_parameterized_truncated_normal", dict(shape=[9], seed=seed)))
        cases.append(("stateless_parameterized_truncated_normal", dict(shape=[2, 4], seed=seed, means=1.0, stddevs=2.0, minvals=-1.0, maxvals=4.0)))
        cases.append(("stateless_parameterized_truncated_normal", dict(shape=[2, 3], seed=seed, means=[0.0, 1.0, 2.0], stddevs=1.0, minvals=[3.0, -10.0, 1.5], maxvals=[5.0, -9.0, 2.5])))
        cases.append(("stateless_parameterized_truncated_normal", dict(shape=[6], seed=seed, means=0.0, stddevs=1.0, minvals=-0.1, maxvals=0.1)))
    return cases


def norm_dtype(kw, key="dtype"):
    if key in kw and isinstance(kw[key], str):
        kw[key] = tf.as_dtype(kw[key])


def build(fn, kw):
    kw = dict(kw)
    if fn == "stateless_categorical" or fn == "stateless_multinomial":
        ldt = kw.pop("logits_dtype", "float32")
        kw["logits"] = tf.constant(np.array(kw["logits"], dtype=ldt))
        if fn == "stateless_multinomial":
            kw["output_dtype"] = kw.pop("dtype", tf.int64)
        norm_dtype(kw)
        norm_dtype(kw, "output_dtype")
        return getattr(tf1.random, fn)(**kw)
    if fn == "stateless_binomial":
        t = kw.pop("dtype_T", "float32")
        kw["counts"] = tf.constant(kw["counts"], dtype=t)
        kw["probs"] = tf.constant(kw["probs"], dtype=t)
        norm_dtype(kw, "output_dtype")
        return tf.random.stateless_binomial(**kw)
    if fn == "stateless_poisson":
        norm_dtype(kw)
        return tf.random.stateless_poisson(**kw)
    norm_dtype(kw)
    return getattr(tf.random, fn)(**kw)


def save(name, cases):
    """All outputs of one dtype concatenated into ``data/<dtype>``; ``specs`` (JSON) gives each case's call,
    dtype, shape and offset (one array per dtype keeps the file small)."""
    specs, chunks = [], {}
    for fn, kw in cases:
        out = np.asarray(run(lambda fn=fn, kw=kw: build(fn, kw)))
        enc = encode(out)
        parts = chunks.setdefault(out.dtype.name, [])
        offset = sum(p.size for p in parts)
        parts.append(enc.ravel())
        specs.append({"fn": fn, "kwargs": kw, "dtype": out.dtype.name, "shape": list(out.shape), "offset": offset})
    store = {f"data/{k}": np.concatenate(v) for k, v in chunks.items()}
    store["specs"] = np.array(json.dumps(specs))
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT / f"{name}.npz", **store)
    print(name, len(cases), (OUT / f"{name}.npz").stat().st_size, "bytes")


def key_counter_cases():
    """StatelessRandomGetKeyCounter / ...Alg, fold_in and split (TF1's tf.random names)."""
    store = {}
    for i, seed in enumerate(SEEDS):
        k, c = run(lambda seed=seed: tf.raw_ops.StatelessRandomGetKeyCounter(seed=tf.constant(seed, tf.int64)))
        store[f"kc{i}/seed"] = np.array(seed, np.int64)
        store[f"kc{i}/key"] = encode(k)
        store[f"kc{i}/counter"] = encode(c)
        store[f"fold{i}/out"] = run(lambda seed=seed: tf1.random.fold_in(seed, 42))
        store[f"split{i}/out"] = run(lambda seed=seed: tf1.random.split(seed, 3))
    store["split_default/out"] = run(lambda: tf1.random.split([5, 6]))
    store["fold_big/out"] = run(lambda: tf1.random.fold_in(tf.constant([5, 6], tf.int64), 2**40))
    np.savez_compressed(OUT / "key_counter.npz", **store)


def generator_cases():
    """tf.random.Generator in a compat.v1 graph: outputs of successive calls and the final state."""
    store = {}
    g = tf1.Graph()
    with g.as_default():
        gen = tf.random.Generator.from_seed(1234)
        ts = {
            "normal": gen.normal([5]),
            "uniform": gen.uniform([3, 2]),
            "uniform_f64": gen.uniform([3], dtype=tf.float64, minval=2.0, maxval=3.0),
            "uniform_int": gen.uniform([6], minval=-3, maxval=9, dtype=tf.int32),
            "full_int": gen.uniform_full_int([4], dtype=tf.int64),
            "truncated": gen.truncated_normal([7], mean=1.0, stddev=2.0),
            "binomial": gen.binomial([4], counts=[10.0, 20.0, 30.0, 40.0], probs=0.5),
            "make_seeds": gen.make_seeds(3),
        }
        state0 = gen.state.read_value()
        with tf1.Session() as s:
            s.run(tf1.global_variables_initializer())
            store["state0"] = s.run(state0)
            for k in ["normal", "uniform", "uniform_f64", "uniform_int", "full_int", "truncated", "binomial", "make_seeds"]:
                store[k] = s.run(ts[k])
            store["normal_again"] = s.run(ts["normal"])
            store["state1"] = s.run(gen.state.read_value())
    g = tf1.Graph()
    with g.as_default():
        gen = tf.random.Generator.from_seed(77, alg="philox")
        a = gen.normal([4])
        with tf1.Session() as s:
            s.run(tf1.global_variables_initializer())
            store["philox77_state"] = s.run(gen.state.read_value())
            store["philox77_normal"] = s.run(a)
        # split/skip/from_state are eager-only or build generators from the current state.
        store["create_rng_state_5"] = run(lambda: tf.random.create_rng_state(5, "philox"))
        store["create_rng_state_seq"] = run(lambda: tf.random.create_rng_state([1, 2, 3], "philox"))
    np.savez_compressed(OUT / "generator.npz", **store)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    save("stateless", stateless_cases())
    key_counter_cases()
    generator_cases()
