"""Write tests/fixtures/math_special/*.npz: TensorFlow 2.21's values and gradients of the ``tf.math`` special
functions, the elementwise ops of issue 23 and its reductions, for tests/python/test_math_special.py.

- ``unary.npz``: for every unary op and for float32 and float64, ``<op>/<dtype>/x`` and ``<op>/<dtype>/y``
  over one wide grid (0, -0, +-inf, nan, poles, domain edges, logarithmic ranges of both signs).
- ``binary.npz``: the same for the two- and three-argument ops (``a``/``b``/``c`` inputs over grids).
- ``grads.npz``: ``tf.gradients(sum(op(...) * r))`` at points inside each op's domain, float64.
- ``composite.npz``: the Python-composed names (reduce_std/variance/euclidean_norm, polyval, lbeta,
  cumulative_logsumexp, bincount, confusion_matrix, invert_permutation, reciprocal_no_nan, erfcinv).

Run from the repository root with a Python that has TensorFlow 2.21:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_math_special_fixtures.py
"""

import pathlib

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
tf1.disable_eager_execution()

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "math_special"
rng = np.random.RandomState(2321)

UNARY = {
    "acos": tf1.math.acos, "asin": tf1.math.asin, "atan": tf1.math.atan, "acosh": tf1.math.acosh,
    "asinh": tf1.math.asinh, "atanh": tf1.math.atanh, "sinh": tf1.math.sinh, "cosh": tf1.math.cosh,
    "erf": tf1.math.erf, "erfc": tf1.math.erfc, "erfinv": tf1.math.erfinv, "erfcinv": tf1.math.erfcinv,
    "ndtri": tf1.math.ndtri, "lgamma": tf1.math.lgamma, "digamma": tf1.math.digamma,
    "bessel_i0": tf1.math.bessel_i0, "bessel_i0e": tf1.math.bessel_i0e, "bessel_i1": tf1.math.bessel_i1,
    "bessel_i1e": tf1.math.bessel_i1e, "rint": tf1.math.rint, "reciprocal_no_nan": tf1.math.reciprocal_no_nan,
}


def unary_grid():
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, -2.5, -1.5, 0.25, 0.75, -0.75,
             np.inf, -np.inf, np.nan, 1e-300, -1e-300, 1e-30, -1e-30, 1e-8, -1e-8, 1e10, -1e10, 1e30, -1e30,
             1e300, -1e300, 0.9999999, -0.9999999, 1.0000001, 1 - 1e-12, 1 + 1e-12, -1 + 1e-12, 1e-45, 5e-324,
             1.4616321449683623, 2.5, 3.5, 4.5, -10.0, -100.0, 100.0, 85.0, 90.0, 710.0, 720.0, 0.1, -0.1,
             1e-3, 1e-5, 1 - 1e-5, 1e-20, 0.5 + 1e-9, 0.5 - 1e-9, -0.5 + 1e-9, 0.3, 0.7, 0.9, 0.99, 0.999, 1.5]
    mags = np.logspace(-12, 12, 97)
    lin = np.linspace(-6, 6, 97)
    unit = np.linspace(-1, 1, 81)
    return np.concatenate([np.array(edges), mags, -mags, lin, unit, rng.uniform(-30, 30, 40)])


def run(build, feeds):
    g = tf1.Graph()
    with g.as_default():
        phs = [tf1.placeholder(v.dtype, v.shape) for v in feeds]
        out = build(*phs)
        with tf1.Session() as s:
            return s.run(out, dict(zip(phs, feeds)))


def unary():
    st = {}
    x = unary_grid()
    for name, f in UNARY.items():
        for dt in (np.float32, np.float64):
            xv = x.astype(dt)
            st[f"{name}/{dt.__name__}/x"] = xv
            st[f"{name}/{dt.__name__}/y"] = run(f, [xv])
    return st


def mesh(a, b):
    A, B = np.meshgrid(np.asarray(a, np.float64), np.asarray(b, np.float64), indexing="ij")
    return A.ravel(), B.ravel()


BINARY = {
    "xlogy": tf1.math.xlogy, "xlog1py": tf1.math.xlog1py, "xdivy": tf1.math.xdivy,
    "multiply_no_nan": tf1.math.multiply_no_nan, "nextafter": tf1.math.nextafter,
    "truncatediv": tf1.truncatediv, "igamma": tf1.math.igamma, "igammac": tf1.math.igammac,
    "polygamma": tf1.math.polygamma, "zeta": tf1.math.zeta,
}


def binary_inputs(name):
    special = [0.0, -0.0, 1.0, -1.0, 2.5, -2.0, 1e-30, 1e30, np.inf, -np.inf, np.nan, 0.5, -1e-3, 7.0, 1e-310]
    if name in ("igamma", "igammac"):
        a = np.concatenate([[0.0, -1.0, np.inf, np.nan, 1e-8, 1e-3, 0.5, 1.0, 1.5, 2.0, 10.0, 99.5, 1e3, 1e5],
                            np.logspace(-3, 3, 19)])
        x = np.concatenate([[0.0, -1.0, np.inf, np.nan, 1e-10, 1e-4, 0.5, 1.0, 3.0, 9.0, 11.0, 100.0, 1e3, 1.2e5],
                            np.logspace(-3, 3, 19)])
        return mesh(a, x)
    if name == "polygamma":
        n = [0.0, 1.0, 2.0, 3.0, 4.0, 7.0, 1.5, -1.0, np.nan]
        x = np.concatenate([[0.0, -1.0, -2.5, -0.5, np.inf, -np.inf, np.nan, 1e-8, 0.5, 1.0, 1e8],
                            np.logspace(-3, 3, 19), np.linspace(-4.7, 4.7, 11)])
        return mesh(n, x)
    if name == "zeta":
        s = [1.0, 1.0001, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0, 100.0, 0.5, 0.0, -1.0, np.inf, np.nan, 2.5]
        q = np.concatenate([[0.0, -1.0, -2.0, -2.5, -0.5, 1e-8, 0.5, 1.0, 2.0, 1e5, np.inf, np.nan],
                            np.logspace(-2, 3, 11)])
        return mesh(s, q)
    if name == "nextafter":
        v = [0.0, -0.0, 1.0, -1.0, 1e-45, 1e-320, np.inf, -np.inf, np.nan, 3.4e38, 1.7e308, 2.0, 0.1]
        return mesh(v, v)
    return mesh(special, special)


def binary():
    st = {}
    for name, f in BINARY.items():
        a, b = binary_inputs(name)
        for dt in (np.float32, np.float64):
            av, bv = a.astype(dt), b.astype(dt)
            if name == "truncatediv":
                bv = np.where(bv == 0, dt(3), bv)
            st[f"{name}/{dt.__name__}/a"] = av
            st[f"{name}/{dt.__name__}/b"] = bv
            st[f"{name}/{dt.__name__}/y"] = run(f, [av, bv])
            if dt is np.float32 and name in ("igamma", "igammac"):
                # TF's float64 value at the float32 inputs: where TF's float32 loses digits.
                st[f"{name}/float32/y64"] = run(f, [av.astype(np.float64), bv.astype(np.float64)])
    # truncatediv on integers (rounds toward zero).
    ai = np.array([7, -7, 7, -7, 0, 5, -5, 2**31 - 1, -(2**31), 1], np.int32)
    bi = np.array([2, 2, -2, -2, 3, 7, 7, 3, 3, 1], np.int32)
    for dt in (np.int32, np.int64):
        st[f"truncatediv/{dt.__name__}/a"] = ai.astype(dt)
        st[f"truncatediv/{dt.__name__}/b"] = bi.astype(dt)
        st[f"truncatediv/{dt.__name__}/y"] = run(tf1.truncatediv, [ai.astype(dt), bi.astype(dt)])
    # betainc(a, b, x)
    av = np.concatenate([[0.0, -1.0, np.nan, np.inf, 1e-6, 0.5, 1.0, 2.0, 30.0, 500.0], np.logspace(-2, 3, 6)])
    bv = np.array([0.0, 0.1, 0.5, 1.0, 3.0, 40.0, 1e3, np.nan, np.inf])
    xv = np.array([0.0, 1.0, -0.1, 1.1, np.nan, 1e-10, 1e-3, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999, 1 - 1e-9])
    A, B, X = np.meshgrid(av, bv, xv, indexing="ij")
    for dt in (np.float32, np.float64):
        a3, b3, x3 = A.ravel().astype(dt), B.ravel().astype(dt), X.ravel().astype(dt)
        st[f"betainc/{dt.__name__}/a"] = a3
        st[f"betainc/{dt.__name__}/b"] = b3
        st[f"betainc/{dt.__name__}/c"] = x3
        st[f"betainc/{dt.__name__}/y"] = run(tf1.math.betainc, [a3, b3, x3])
        if dt is np.float32:
            st["betainc/float32/y64"] = run(tf1.math.betainc, [a3.astype(np.float64), b3.astype(np.float64),
                                                                x3.astype(np.float64)])
    return st


def grads():
    st = {}

    def case(name, build, inputs):
        g = tf1.Graph()
        with g.as_default():
            phs = [tf1.placeholder(tf.float64, v.shape) for v in inputs]
            out = build(*phs)
            r = rng.uniform(0.5, 1.5, size=out.shape.as_list()).astype(np.float64)
            grads = tf1.gradients(tf1.reduce_sum(out * r), phs)
            with tf1.Session() as s:
                vals = s.run([out] + [gr if gr is not None else tf1.constant(np.nan) for gr in grads],
                             dict(zip(phs, inputs)))
        for i, v in enumerate(inputs):
            st[f"{name}/in{i}"] = v
            st[f"{name}/d{i}"] = np.asarray(vals[1 + i])
            st[f"{name}/has_d{i}"] = np.array(grads[i] is not None)
        st[f"{name}/r"] = r
        st[f"{name}/out"] = vals[0]

    u = lambda lo, hi, *shape: rng.uniform(lo, hi, size=shape)  # noqa: E731
    m = tf1.math
    for name, lo, hi in [("acos", -0.95, 0.95), ("asin", -0.95, 0.95), ("atan", -5, 5), ("acosh", 1.1, 9),
                         ("asinh", -5, 5), ("atanh", -0.9, 0.9), ("sinh", -4, 4), ("cosh", -4, 4), ("erf", -3, 3),
                         ("erfc", -3, 3), ("erfinv", -0.95, 0.95), ("ndtri", 0.02, 0.98), ("lgamma", 0.1, 8),
                         ("digamma", 0.1, 8), ("bessel_i0", -6, 6), ("bessel_i0e", -6, 6), ("bessel_i1", -6, 6),
                         ("bessel_i1e", -6, 6), ("rint", -4, 4), ("erfcinv", 0.05, 1.95)]:
        case(name, getattr(m, name), [u(lo, hi, 3, 4)])
    case("bessel_i1_zero", m.bessel_i1, [np.array([0.0, 1.0, -2.0])])
    case("bessel_i1e_zero", m.bessel_i1e, [np.array([0.0, 1.0, -2.0])])
    case("xlogy", m.xlogy, [np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 0.7]]), u(0.1, 4, 3)])
    case("xlog1py", m.xlog1py, [np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 0.7]]), u(0.1, 4, 3)])
    case("xdivy", m.xdivy, [np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 0.7]]), u(0.5, 4, 3)])
    case("multiply_no_nan", m.multiply_no_nan, [u(-2, 2, 2, 3), np.array([0.0, 1.5, -2.0])])
    case("nextafter", m.nextafter, [u(-2, 2, 2, 3), u(-2, 2, 3)])
    case("igamma", m.igamma, [u(0.5, 5, 2, 3), u(0.2, 6, 3)])
    case("igammac", m.igammac, [u(0.5, 5, 3), u(0.2, 6, 2, 3)])
    case("igamma_small", m.igamma, [np.array([0.3, 2.0, 15.0, 40.0]), np.array([0.01, 8.0, 14.0, 60.0])])
    case("polygamma", m.polygamma, [np.array([[0.0], [1.0], [3.0]]), u(0.3, 6, 4)])
    case("zeta", m.zeta, [np.array([[2.0], [3.5]]), u(0.3, 6, 4)])
    case("betainc", m.betainc, [u(0.5, 4, 2, 3), u(0.5, 4, 2, 3), u(0.05, 0.95, 2, 3)])
    case("lbeta", m.lbeta, [u(0.2, 5, 3, 4)])
    case("reduce_std", lambda x: m.reduce_std(x, axis=1), [u(-2, 2, 3, 5)])
    case("reduce_variance", lambda x: m.reduce_variance(x, axis=0, keepdims=True), [u(-2, 2, 3, 5)])
    case("reduce_euclidean_norm", lambda x: m.reduce_euclidean_norm(x, axis=1), [u(-2, 2, 3, 5)])
    case("reduce_euclidean_norm_all", lambda x: m.reduce_euclidean_norm(x), [u(-2, 2, 3, 5)])
    for ex in (False, True):
        for rev in (False, True):
            case(f"cumulative_logsumexp_{int(ex)}{int(rev)}",
                 lambda x, ex=ex, rev=rev: m.cumulative_logsumexp(x, axis=1, exclusive=ex, reverse=rev),
                 [u(-3, 3, 3, 5)])
    case("polyval", lambda c0, c1, c2, x: m.polyval([c0, c1, c2], x), [u(-2, 2), u(-2, 2, 3), u(-2, 2), u(-2, 2, 3)])
    case("reciprocal_no_nan", m.reciprocal_no_nan, [np.array([0.0, 2.0, -0.5, 4.0])])
    return st


def composite():
    st = {}
    x = rng.normal(size=(3, 4, 5)) * 3
    x32 = x.astype(np.float32)
    for dt in (np.float32, np.float64):
        xv = x.astype(dt)
        st[f"input/{dt.__name__}"] = xv
        for name in ("reduce_std", "reduce_variance", "reduce_euclidean_norm"):
            f = getattr(tf1.math, name)
            for tag, kw in [("all", {}), ("ax1", {"axis": 1}), ("ax02k", {"axis": [0, 2], "keepdims": True}),
                            ("axm1", {"axis": -1})]:
                st[f"{name}/{tag}/{dt.__name__}"] = run(lambda t, f=f, kw=kw: f(t, **kw), [xv])
        for ex in (False, True):
            for rev in (False, True):
                for ax in (0, 1, -1):
                    st[f"cumulative_logsumexp/{ax}{int(ex)}{int(rev)}/{dt.__name__}"] = run(
                        lambda t, ax=ax, ex=ex, rev=rev: tf1.math.cumulative_logsumexp(t, ax, ex, rev), [xv])
    big = np.array([[1e30, -np.inf, 3.0, np.inf], [-np.inf, -np.inf, 0.0, np.nan]], np.float32)
    st["cumulative_logsumexp/edge/x"] = big
    st["cumulative_logsumexp/edge/y"] = run(lambda t: tf1.math.cumulative_logsumexp(t, axis=1), [big])
    st["reduce_euclidean_norm/int32/x"] = np.array([[3, 4, 0], [1, 2, 2]], np.int32)
    st["reduce_euclidean_norm/int32/y"] = run(lambda t: tf1.math.reduce_euclidean_norm(t, 1),
                                              [st["reduce_euclidean_norm/int32/x"]])
    del x32
    # polyval
    xs = rng.uniform(-2, 2, size=(2, 3))
    coeffs = [1.5, -2.0, 0.25, 3.0]
    st["polyval/x"] = xs
    st["polyval/coeffs"] = np.array(coeffs)
    st["polyval/y"] = run(lambda t: tf1.math.polyval([tf1.constant(c, tf.float64) for c in coeffs], t), [xs])
    # lbeta
    lb = rng.uniform(0.1, 6, size=(4, 3))
    st["lbeta/x"] = lb
    st["lbeta/y"] = run(tf1.math.lbeta, [lb])
    # bincount
    arr = np.array([1, 1, 2, 3, 5, 5, 5, 0], np.int32)
    w = rng.uniform(0, 2, size=arr.shape).astype(np.float32)
    st["bincount/arr"] = arr
    st["bincount/w"] = w
    st["bincount/plain"] = run(lambda a: tf1.math.bincount(a), [arr])
    st["bincount/weights"] = run(lambda a, ww: tf1.math.bincount(a, weights=ww), [arr, w])
    st["bincount/minlength"] = run(lambda a: tf1.math.bincount(a, minlength=9), [arr])
    st["bincount/maxlength"] = run(lambda a: tf1.math.bincount(a, maxlength=3), [arr])
    st["bincount/int64_dtype"] = run(lambda a: tf1.math.bincount(a, dtype=tf.int64), [arr])
    st["bincount/float64_dtype"] = run(lambda a: tf1.math.bincount(a, dtype=tf.float64), [arr])
    arr2 = np.array([[0, 2], [2, 4]], np.int32)
    st["bincount/arr2"] = arr2
    st["bincount/rank2"] = run(lambda a: tf1.math.bincount(a), [arr2])
    st["bincount/empty"] = run(lambda a: tf1.math.bincount(a), [np.zeros([0], np.int32)])
    # confusion_matrix
    labels = np.array([1, 2, 4, 0, 2], np.int64)
    preds = np.array([2, 2, 4, 0, 1], np.int64)
    cw = np.array([1.0, 2.0, 0.5, 1.5, 3.0])
    st["confusion_matrix/labels"] = labels
    st["confusion_matrix/preds"] = preds
    st["confusion_matrix/w"] = cw
    st["confusion_matrix/plain"] = run(lambda a, b: tf1.math.confusion_matrix(a, b), [labels, preds])
    st["confusion_matrix/n6"] = run(lambda a, b: tf1.math.confusion_matrix(a, b, num_classes=6), [labels, preds])
    st["confusion_matrix/weighted"] = run(
        lambda a, b, ww: tf1.math.confusion_matrix(a, b, weights=ww, dtype=tf.float64), [labels, preds, cw])
    # invert_permutation
    perm = np.array([3, 0, 4, 1, 2], np.int32)
    st["invert_permutation/x"] = perm
    st["invert_permutation/y"] = run(tf1.math.invert_permutation, [perm])
    return st


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, f in [("unary", unary), ("binary", binary), ("grads", grads), ("composite", composite)]:
        st = f()
        np.savez_compressed(OUT / f"{name}.npz", **st)
        print(name, len(st), "arrays")


if __name__ == "__main__":
    main()
