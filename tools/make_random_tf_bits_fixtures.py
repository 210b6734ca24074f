"""Write tests/fixtures/random/tf_bits.npz: what TensorFlow 2.21's *stateful* random ops return on CPU for
fixed seeds (graph seed from ``tf.set_random_seed``, op seeds, both, and the counter TF uses for op seeds
when only a graph seed is set), over three successive ``Session.run`` calls, for
tests/python/test_random_tf_bits.py.

Each case is a small tf.compat.v1 program: an optional graph seed and a list of random ops, built by
``build`` below with whichever ``tf`` module it is handed (real TF here, ferroflow in the test), then run
three times in one session. Outputs are stored per case and run as ``<case>/<op>/<run>``; bfloat16 and
float16 results as their uint16 bit patterns. ``specs`` (JSON) records the programs. Run from the
repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_random_tf_bits_fixtures.py
"""

import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "random" / "tf_bits.npz"
RUNS = 3
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def cases():
    """The programs: name -> {"graph_seed": int|None, "ops": [[fn, kwargs], ...]}."""
    out = {}
    seeds = [(None, 7), (1, None), (42, 3), (None, 2**40 + 5), (0, 0), (-3, None)]
    for si, (gs, os_) in enumerate(seeds):
        for shape in ([1], [5], [1000], [1025]):
            if (shape == [1000] and si != 1) or (shape == [1025] and si != 0):
                continue
            ops = []
            for dt in FLOATS:
                if dt in ("float16", "bfloat16") and shape != [5]:
                    continue
                ops.append(["random_uniform", dict(shape=shape, dtype=dt, seed=os_)])
                ops.append(["random_normal", dict(shape=shape, dtype=dt, seed=os_)])
                ops.append(["truncated_normal", dict(shape=shape, dtype=dt, seed=os_)])
            for dt, lo, hi in (("int32", -5, 1000), ("int64", -(2**40), 2**41 + 3)):
                ops.append(["random_uniform", dict(shape=shape, dtype=dt, seed=os_, minval=lo, maxval=hi)])
            ops.append(["random_shuffle", dict(n=shape[0], seed=os_)])
            out[f"s{si}_n{shape[0]}"] = {"graph_seed": gs, "ops": ops}
    # Scaled draws and the usual initializer/dropout paths, op seeds from the graph seed's counter.
    out["paths"] = {
        "graph_seed": 5,
        "ops": [
            ["random_uniform", dict(shape=[2, 3], minval=-2.0, maxval=3.5)],
            ["random_normal", dict(shape=[7], mean=1.0, stddev=0.25)],
            ["truncated_normal", dict(shape=[3, 3], mean=-1.0, stddev=2.0, dtype="float64")],
            ["random_shuffle2d", dict(n=6, seed=None)],
            ["get_variable", dict(name="w_default", shape=[4, 3])],
            ["get_variable", dict(name="w_glorot_n", shape=[5, 2], init="glorot_normal_initializer")],
            ["get_variable", dict(name="w_he", shape=[3, 3, 2, 4], init="initializers.he_normal")],
            ["get_variable", dict(name="w_he_u", shape=[6], init="initializers.he_uniform")],
            ["get_variable", dict(name="w_vs", shape=[8, 2], init="variance_scaling_initializer")],
            ["get_variable", dict(name="w_rn", shape=[9], init="random_normal_initializer")],
            ["get_variable", dict(name="w_tn", shape=[9], init="truncated_normal_initializer")],
            ["get_variable", dict(name="w_ru", shape=[9], init="random_uniform_initializer")],
            ["dropout", dict(shape=[40], rate=0.3)],
            ["random_crop", dict(shape=[6, 5], size=[3, 2])],
        ],
    }
    out["paths_op_seed"] = {
        "graph_seed": None,
        "ops": [
            ["get_variable", dict(name="v_glorot", shape=[4, 3], init="glorot_uniform_initializer", seed=11)],
            ["dropout", dict(shape=[17], rate=0.5, seed=3)],
        ],
    }
    # The samplers that share the generator's layout (multinomial, gamma, Poisson).
    out["samplers"] = {
        "graph_seed": 8,
        "ops": [
            ["multinomial", dict(probs=[[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]], num_samples=7, seed=4)],
            ["multinomial", dict(probs=[[0.5, 0.5]], num_samples=1)],
            ["random_gamma", dict(shape=[5], alpha=[0.5, 2.0], seed=4)],
            ["random_gamma", dict(shape=[3], alpha=[1.0, 7.5], beta=[2.0, 0.5], dtype="float64")],
            ["random_poisson", dict(lam=[1.0, 20.0], shape=[4], seed=4)],
            ["random_poisson", dict(lam=[0.5, 3.0, 150.0], shape=[3], dtype="int32")],
            ["random_poisson", dict(lam=[2.0, 12.0], shape=[2], dtype="float64")],
        ],
    }
    return out


def build(tf, fn, kw):
    """One op of a case with the tf.compat.v1-style module ``tf``; returns (tensor, is_variable)."""
    kw = dict(kw)
    if "dtype" in kw:
        kw["dtype"] = getattr(tf, kw["dtype"])
    if fn == "random_shuffle":
        return tf.random_shuffle(tf.constant(np.arange(kw["n"], dtype=np.int32)), seed=kw["seed"]), False
    if fn == "random_shuffle2d":
        x = tf.constant(np.arange(kw["n"] * 2, dtype=np.float32).reshape(kw["n"], 2))
        return tf.random_shuffle(x, seed=kw["seed"]), False
    if fn == "get_variable":
        init = kw.pop("init", None)
        seed = kw.pop("seed", None)
        initializer = None
        if init is not None:
            make = tf
            for part in init.split("."):
                make = getattr(make, part)
            initializer = make(seed=seed)
        return tf.get_variable(kw["name"], kw["shape"], initializer=initializer), True
    if fn == "dropout":
        return tf.nn.dropout(tf.ones(kw["shape"]), rate=kw["rate"], seed=kw.get("seed")), False
    if fn == "multinomial":
        return tf.multinomial(tf.log(tf.constant(kw["probs"])), kw["num_samples"], seed=kw.get("seed")), False
    if fn == "random_crop":
        x = tf.constant(np.arange(np.prod(kw["shape"]), dtype=np.float32).reshape(kw["shape"]))
        return tf.random_crop(x, kw["size"], seed=kw.get("seed")), False
    return getattr(tf, fn)(**kw), False


def run_case(tf, case, runs=RUNS):
    """``runs`` successive results of every op of ``case`` (variables: re-initialized each run)."""
    g = tf.Graph()
    with g.as_default():
        if case["graph_seed"] is not None:
            tf.set_random_seed(case["graph_seed"])
        built = [build(tf, fn, kw) for fn, kw in case["ops"]]
        init = tf.global_variables_initializer()
        with tf.Session() as s:
            out = []
            for _ in range(runs):
                s.run(init)
                out.append(s.run([t for t, _ in built]))
            return out


def encode(v):
    v = np.asarray(v)
    if v.dtype.name in ("bfloat16", "float16"):
        return v.view(np.uint16)
    return v


def main():
    import tensorflow as tf

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    data = {}
    specs = cases()
    for name, case in specs.items():
        for r, outs in enumerate(run_case(tf1, case)):
            for k, v in enumerate(outs):
                data[f"{name}/{k}/{r}"] = encode(v)
    data["specs"] = np.frombuffer(json.dumps(specs).encode(), dtype=np.uint8)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **data)
    print(f"{len(data) - 1} arrays, {OUT.stat().st_size} bytes -> {OUT}")


if __name__ == "__main__":
    main()
