"""The op sweep (issue 23): a few hundred commonly used TF1 ops and functions, each with a handful of inputs
that real programs hit (empty tensors, negative axes, integer/unsigned/bool/half dtypes, broadcasting,
keepdims, out-of-range indices, unknown static shapes, bad dtypes and shapes).

The table is written against a TF1-style module ``tf`` (``ferroflow`` or TensorFlow's ``tf.compat.v1``), so the
same code makes the fixtures under TensorFlow (tools/op_sweep_tf.py) and is replayed under ferroflow
(test_op_sweep.py). Imports nothing but numpy: the module under test is passed in.

An entry is ``op(name, cases, fn=None)``: ``fn(tf, *args, **kwargs)`` builds the op (by default the function at
the dotted path ``name`` of the module); a case ``c(*args, **kwargs)`` gives its arguments. Numpy arrays become
constants, ``Hide(a)`` a ``placeholder_with_default`` whose dims are all unknown, ``NoRank(a)`` one whose rank is
unknown; lists and tuples are converted element by element and everything else passes as it is.

``run_op`` builds every case of one entry in one graph and runs each in one session, recording for each case
either its outputs (dtype name, static shape as a string, value) or its failure: the error class and whether it
was raised while building the graph (``build``) or by ``Session.run`` (``run``).
"""

from __future__ import annotations

import functools

import numpy as np

R = np.random.RandomState(2311)
INF, NAN = np.inf, np.nan


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return R.standard_normal(shape).astype(np.float64)


def pos32(*shape):
    return (R.random_sample(shape) + 0.25).astype(np.float32)


def i32(*values):
    return np.array(values, np.int32)


def i64(*values):
    return np.array(values, np.int64)


def u8(*values):
    return np.array(values, np.uint8)


def b(*values):
    return np.array(values, bool)


def s(*values):
    return np.array([v.encode() if isinstance(v, str) else v for v in values], dtype=object).astype(bytes)


class Hide:
    """An input whose static dims are all unknown (``placeholder_with_default(value, [None] * rank)``)."""

    def __init__(self, value):
        self.value = np.asarray(value)

    def __repr__(self):
        return f"Hide({_describe(self.value)})"


class NoRank:
    """An input whose static rank is unknown (``placeholder_with_default(value, None)``)."""

    def __init__(self, value):
        self.value = np.asarray(value)

    def __repr__(self):
        return f"NoRank({_describe(self.value)})"


def _describe(a):
    a = np.asarray(a)
    return f"{a.dtype.name}{list(a.shape)}"


class Case:
    def __init__(self, args, kwargs):
        self.args, self.kwargs = args, kwargs

    def describe(self):
        def d(v):
            if isinstance(v, np.ndarray):
                return _describe(v)
            if isinstance(v, (list, tuple)) and any(isinstance(x, (np.ndarray, Hide, NoRank)) for x in v):
                return "[" + ", ".join(d(x) for x in v) + "]"
            return repr(v)

        parts = [d(a) for a in self.args] + [f"{k}={d(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


def c(*args, **kwargs):
    return Case(args, kwargs)


class Op:
    def __init__(self, name, cases, fn):
        self.name, self.cases, self.fn = name, cases, fn


OPS: dict[str, Op] = {}


def op(name, cases, fn=None):
    assert name not in OPS, name
    OPS[name] = Op(name, list(cases), fn)


def _by_path(tf, name):
    return functools.reduce(getattr, name.split("#")[0].split("."), tf)


def _convert(tf, v):
    if isinstance(v, (np.ndarray, np.generic)):
        return tf.constant(v)
    if isinstance(v, Hide):
        return tf.placeholder_with_default(v.value, [None] * v.value.ndim)
    if isinstance(v, NoRank):
        return tf.placeholder_with_default(v.value, None)
    if isinstance(v, list):
        return [_convert(tf, x) for x in v]
    if isinstance(v, tuple):
        return tuple(_convert(tf, x) for x in v)
    return v


def shape_string(shape):
    """A static shape as ``?`` (unknown rank) or ``[2,?,3]``."""
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _flatten(v, out):
    if hasattr(v, "indices") and hasattr(v, "dense_shape") and hasattr(v, "values"):  # SparseTensor
        for t in (v.indices, v.values, v.dense_shape):
            out.append(t)
    elif hasattr(v, "flat_values") and hasattr(v, "nested_row_splits"):  # RaggedTensor
        out.append(v.flat_values)
        out.extend(v.nested_row_splits)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _flatten(x, out)
    else:
        out.append(v)
    return out


def run_op(tf, entry):
    """Runs every case of ``entry``, each in a graph of its own (TensorFlow places and checks every node of a
    session's graph, so one case's kernel-less node would fail its neighbours): a list with, per case,
    ``{"phase": "ok", "out": [(dtype, shape, value)]}`` or ``{"phase": "build" | "run", "class": ...,
    "message": ...}``."""
    return [run_case(tf, entry, case) for case in entry.cases]


def run_case(tf, entry, case):
    g = tf.Graph()
    with g.as_default():
        try:
            args = [_convert(tf, a) for a in case.args]
            kwargs = {k: _convert(tf, v) for k, v in case.kwargs.items()}
            if entry.fn is not None:
                flat = _flatten(entry.fn(tf, *args, **kwargs), [])
            else:
                flat = _flatten(_by_path(tf, entry.name)(*args, **kwargs), [])
        except Exception as e:  # noqa: BLE001 - the class is the point
            return {"phase": "build", "class": type(e).__name__, "message": _message(e)}
        with tf.Session() as sess:
            try:
                values = sess.run(flat)
            except Exception as e:  # noqa: BLE001
                return {"phase": "run", "class": type(e).__name__, "message": _message(e)}
        return {"phase": "ok", "out": [(t.dtype.name, shape_string(t.shape), np.asarray(v))
                                       for t, v in zip(flat, values)]}


_NOISE = ("Graph execution error", "Detected at node", "File ", "Node:", "[[", "Registered", "device=",
          "Traceback", "Original stack")


def _message(e):
    """The error's own first line, without TensorFlow's graph-execution wrapping."""
    text = getattr(e, "message", None) or str(e)
    lines = [ln.strip() for ln in text.split("\n")]
    lines = [ln for ln in lines if ln and not ln.startswith(_NOISE) and not ln.startswith("self.") and
             not ln.startswith("return ")]
    return (lines[0] if lines else text.strip())[:120]


# --- inputs ---------------------------------------------------------------------------------------------------

SPECIAL = np.array([-INF, -2.5, -1.0, -0.5, -0.0, 0.0, 0.3, 0.5, 1.0, 2.5, INF, NAN], np.float32)
X23 = f32(2, 3)
X3 = f32(3)
X234 = f32(2, 3, 4)
E03 = np.zeros((0, 3), np.float32)

UNARY = [
    c(SPECIAL),
    c(X23),
    c(f64(2, 3)),
    c(np.array([-2.0, -0.5, 0.0, 0.25, 1.5, 60000.0], np.float16)),
    c(E03),
    c(np.float32(0.7)),
    c(Hide(X23)),
    c(NoRank(X234)),
    c(i32(-3, 0, 2, 7)),
    c(i64(-5, 4)),
]

for _name in [
    "abs", "negative", "sign", "square", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "floor", "ceil",
    "round", "rint", "reciprocal", "erf", "erfc", "lgamma", "digamma", "is_nan", "is_inf", "is_finite",
    "math.log_sigmoid", "math.reciprocal_no_nan", "math.bessel_i0e", "math.bessel_i1e", "math.erfinv",
    "math.ndtri", "math.softplus", "nn.softplus", "nn.softsign", "nn.relu", "nn.relu6", "nn.elu", "nn.selu",
    "nn.leaky_relu", "nn.swish", "math.negative", "zeros_like", "ones_like", "identity", "stop_gradient",
]:
    op(_name, UNARY)

op("nn.crelu", [c(X23), c(X234, axis=1), c(E03), c(Hide(X23)), c(i32(1, -2))])
op("nn.leaky_relu#alpha", [c(SPECIAL, alpha=0.3), c(X23, alpha=2.0), c(i32(-3, 4), alpha=0.5)])
op("math.polyval", [c([np.float32(1.0), np.float32(-2.0), np.float32(3.0)], X23), c([], X3)])
op("logical_not", [c(b(True, False)), c(np.zeros((0, 2), bool)), c(X3), c(Hide(b(True)))])
op("math.invert_permutation", [c(i32(2, 0, 1)), c(i64(0)), c(i32(0, 0)), c(i32(3, 0, 1)), c(np.zeros(0, np.int32))])

# Binary arithmetic: same-shape, broadcast, ints, special floats, empty, unknown shapes, mismatches.
A_SP = np.array([1.0, -1.0, 0.0, INF, -INF, NAN, 2.5, -2.5, 0.0, 3.0, 7.0, -7.0], np.float32)
B_SP = np.array([0.0, 0.0, 0.0, INF, 2.0, 1.0, -0.0, 1.5, -0.0, -2.0, 2.0, 2.0], np.float32)
BINARY = [
    c(X23, f32(2, 3)),
    c(X23, X3),
    c(f32(2, 1), f32(1, 3)),
    c(A_SP, B_SP),
    c(i32(7, -7, 7, -7, 0, 5), i32(2, 2, -2, -2, 3, 1)),
    c(i32(7, 1), i32(0, 1)),
    c(i64(9, -9), i64(4, 4)),
    c(u8(250, 3, 0), u8(10, 5, 7)),
    c(np.array([1.5, -2.0], np.float16), np.array([0.5, 3.0], np.float16)),
    c(f64(2, 3), f64(3)),
    c(E03, X3),
    c(Hide(X23), X3),
    c(NoRank(X23), Hide(X3)),
    c(X23, np.float32(2.0)),
    c(X23, 2),
    c(X23, f32(4)),
    c(Hide(X23), Hide(f32(4))),
    c(X23, i32(1, 2, 3)),
]
for _name in [
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "truncatediv", "truncatemod",
    "realdiv", "pow", "maximum", "minimum", "squared_difference", "atan2", "math.xdivy", "math.xlogy",
    "math.xlog1py", "math.divide_no_nan", "math.multiply_no_nan", "math.add", "div", "div_no_nan", "mod",
    "math.igamma", "math.zeta", "math.polygamma",
]:
    op(_name, BINARY)

COMPARE = BINARY + [c(s("a", "b"), s("a", "c")), c(b(True, False), b(True, True))]
for _name in ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]:
    op(_name, COMPARE)

LOGICAL = [
    c(b(True, True, False, False), b(True, False, True, False)),
    c(np.array([[True], [False]]), b(True, False, True)),
    c(np.zeros((0, 2), bool), b(True, False)),
    c(Hide(b(True, False)), b(True)),
    c(b(True), i32(1)),
    c(b(True, False), b(True, False, True)),
]
for _name in ["logical_and", "logical_or", "logical_xor"]:
    op(_name, LOGICAL)

BITS = [
    c(i32(5, -6, 0, 2147483647), i32(3, 3, -1, 1)),
    c(u8(0xF0, 0x0F, 255), u8(0x3C, 0xFF, 1)),
    c(i64(-1, 12), i64(7, 2)),
    c(np.array([7, -8], np.int8), np.array([1, 2], np.int8)),
    c(np.array([[1], [2]], np.int32), i32(1, 2, 3)),
    c(X3, X3),
    c(i32(1), u8(1)),
]
for _name in ["bitwise.bitwise_and", "bitwise.bitwise_or", "bitwise.bitwise_xor"]:
    op(_name, BITS)
SHIFTS = [
    c(i32(1, -8, 5, 1, 1), i32(3, 1, 0, 31, 35)),
    c(u8(1, 200, 3), u8(7, 2, 9)),
    c(i64(-1, 1), i64(63, 62)),
    c(np.array([-128, 64], np.int8), np.array([1, 1], np.int8)),
    c(i32(1, 2), i32(-1, 40)),
]
for _name in ["bitwise.left_shift", "bitwise.right_shift"]:
    op(_name, SHIFTS)
op("bitwise.invert", [c(i32(0, -1, 5)), c(u8(0, 255, 5)), c(np.array([0, 7], np.uint16)), c(X3)])

op("add_n", [
    c([X23, f32(2, 3), f32(2, 3)]),
    c([X23]),
    c([i32(1, 2), i32(3, 4)]),
    c([E03, E03]),
    c([Hide(X23), X23]),
    c([X23, f32(3, 2)]),
    c([X23, X3]),
    c([]),
])
op("math.accumulate_n", [c([X23, f32(2, 3)]), c([i32(1, 2), i32(3, 4)]), c([X23, f32(3, 2)])])
op("scalar_mul", [c(2.0, X23), c(np.float32(-1.0), X3), c(2, i32(1, 2))])

# --- reductions -----------------------------------------------------------------------------------------------

REDUCE = [
    c(X234),
    c(X234, axis=1),
    c(X234, axis=-1, keepdims=True),
    c(X234, axis=[0, 2]),
    c(X234, axis=(-1, 0), keepdims=True),
    c(X234, axis=np.array([1], np.int32)),
    c(X234, axis=[]),
    c(E03, axis=0),
    c(E03, axis=1),
    c(E03),
    c(np.array([[3, -1, 2], [4, 5, -6]], np.int32), axis=0),
    c(np.array([[3, 1, 2], [4, 5, 7]], np.uint8), axis=1),
    c(np.array([[1.5, -2.0], [3.0, 0.25]], np.float16), axis=1),
    c(Hide(X234), axis=1),
    c(Hide(X234), axis=-1, keepdims=True),
    c(NoRank(X234), axis=1),
    c(NoRank(X234), axis=0, keepdims=True),
    c(X234, axis=3),
    c(X234, axis=-4),
    c(Hide(X234), axis=np.array(3, np.int32)),
    c(SPECIAL),
    c(b(True, False), axis=0),
    c(np.float32(2.0)),
    c(X234, axis=[1, 1]),
]
for _name in [
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_logsumexp",
    "math.reduce_std", "math.reduce_variance", "math.reduce_euclidean_norm", "count_nonzero",
]:
    op(_name, REDUCE)
BOOL_REDUCE = [
    c(np.array([[True, False, True], [True, True, True]])),
    c(np.array([[True, False, True], [True, True, True]]), axis=1),
    c(np.array([[True, False, True], [True, True, True]]), axis=-2, keepdims=True),
    c(np.zeros((0, 3), bool), axis=0),
    c(np.zeros((0, 3), bool)),
    c(Hide(b(True, False)), axis=0),
    c(X23, axis=0),
    c(np.array([[True, False]]), axis=2),
]
op("reduce_any", BOOL_REDUCE)
op("reduce_all", BOOL_REDUCE)

ARGMAX = [
    c(X234, axis=1),
    c(X234, axis=-1),
    c(X234, axis=0, output_type="int32"),
    c(np.array([3, 7, 7, 1], np.int32), axis=0),
    c(np.array([2.0, NAN, 5.0, 5.0], np.float32), axis=0),
    c(np.array([[1, 9], [9, 1]], np.uint8), axis=1),
    c(Hide(X234), axis=2),
    c(np.zeros((0, 3), np.float32), axis=1),
    c(np.zeros((0, 3), np.float32), axis=0),
    c(X234, axis=3),
    c(X3),
]
op("argmax", ARGMAX, fn=lambda tf, x, axis=None, output_type=None: tf.argmax(
    x, axis=axis, **({} if output_type is None else {"output_type": getattr(tf, output_type)})))
op("argmin", ARGMAX, fn=lambda tf, x, axis=None, output_type=None: tf.argmin(
    x, axis=axis, **({} if output_type is None else {"output_type": getattr(tf, output_type)})))

op("norm", [
    c(X234),
    c(X234, axis=1),
    c(X234, ord=1, axis=-1, keepdims=True),
    c(X23, ord="fro", axis=[0, 1]),
    c(X23, ord=np.inf, axis=1),
    c(X23, ord=1, axis=[-2, -1]),
    c(X23, ord=np.inf, axis=[0, 1]),
    c(E03, axis=1),
    c(X23, ord=3, axis=1),
    c(X23, ord=0),
])
op("math.reduce_sum#v2", [c(X234, 1, True), c(X234, [0, 1])], fn=lambda tf, x, axis, keepdims=False: tf.math.reduce_sum(
    x, axis, keepdims=keepdims))
op("math.count_nonzero#dtype", [c(X23, dtype="int32"), c(s("", "a", "bc"))], fn=lambda tf, x, dtype=None: (
    tf.math.count_nonzero(x) if dtype is None else tf.math.count_nonzero(x, dtype=getattr(tf, dtype))))

CUMULATIVE = [
    c(X234, axis=1),
    c(X234, axis=-1, exclusive=True),
    c(X234, axis=0, reverse=True),
    c(X234, axis=2, exclusive=True, reverse=True),
    c(i32(3, -1, 4, 1, 5)),
    c(i32(3, -1, 4, 1, 5), exclusive=True, reverse=True),
    c(E03, axis=0),
    c(E03, axis=1, exclusive=True),
    c(Hide(X23), axis=1),
    c(NoRank(X23), axis=-1, reverse=True),
    c(X23, axis=2),
    c(X23, axis=np.array(1, np.int64)),
    c(np.array([1.5, 2.0, -3.0], np.float16)),
    c(np.float32(2.0)),
]
op("cumsum", CUMULATIVE)
op("cumprod", CUMULATIVE)
op("math.cumulative_logsumexp", CUMULATIVE)

# --- segments -------------------------------------------------------------------------------------------------

SEG_DATA = np.array([[1.0, 2.0], [3.0, -4.0], [5.0, 6.0], [-7.0, 8.0], [9.0, 0.5]], np.float32)
SEGMENT = [
    c(SEG_DATA, i32(0, 0, 1, 1, 1)),
    c(SEG_DATA, i32(0, 0, 2, 2, 3)),
    c(SEG_DATA, i64(1, 1, 1, 3, 3)),
    c(i32(4, -2, 7, 1, 0), i32(0, 1, 1, 1, 2)),
    c(SEG_DATA, i32(0, 1, 0, 1, 1)),
    c(SEG_DATA, i32(0, 0, 1)),
    c(SEG_DATA, i32(-1, 0, 1, 1, 1)),
    c(np.zeros((0, 2), np.float32), np.zeros(0, np.int32)),
    c(Hide(SEG_DATA), Hide(i32(0, 0, 1, 1, 1))),
    c(SEG_DATA, np.array([[0, 0, 1, 1, 1]], np.int32)),
]
for _name in ["segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod"]:
    op(_name, SEGMENT)

UNSORTED = [
    c(SEG_DATA, i32(0, 0, 1, 1, 1), 3),
    c(SEG_DATA, i32(2, 0, 2, -1, 0), 4),
    c(i32(4, -2, 7, 1, 0), i32(0, 1, 1, 1, 2), 3),
    c(SEG_DATA, i32(0, 1, 5, 1, 1), 3),
    c(SEG_DATA, i32(0, 0, 1), 2),
    c(np.zeros((0, 2), np.float32), np.zeros(0, np.int32), 2),
    c(SEG_DATA, i32(0, 0, 1, 1, 1), 0),
    c(Hide(SEG_DATA), Hide(i32(0, 0, 1, 1, 1)), np.array(2, np.int64)),
    c(np.arange(12, dtype=np.float32).reshape(2, 3, 2), np.array([[0, 1, 0], [2, 2, 0]], np.int32), 3),
    c(SEG_DATA, i32(0, 0, 1, 1, 1), np.array(-1, np.int32)),
]
for _name in [
    "unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
    "unsorted_segment_mean", "unsorted_segment_sqrt_n",
]:
    op(_name, UNSORTED)

SPARSE_SEGMENT = [
    c(SEG_DATA, i32(0, 2, 4), i32(0, 0, 1)),
    c(SEG_DATA, i32(4, 4, 0, 1), i32(0, 1, 1, 3)),
    c(SEG_DATA, i64(1, 2), i64(0, 0)),
    c(SEG_DATA, i32(0, 7), i32(0, 1)),
    c(SEG_DATA, i32(0, 1), i32(1, 0)),
    c(SEG_DATA, np.zeros(0, np.int32), np.zeros(0, np.int32)),
    c(Hide(SEG_DATA), i32(3, 1), i32(0, 1)),
]
for _name in ["sparse.segment_sum", "sparse.segment_mean", "sparse.segment_sqrt_n"]:
    op(_name, SPARSE_SEGMENT)
op("sparse.segment_sum#num_segments", [
    c(SEG_DATA, i32(0, 2, 4), i32(0, 0, 1), num_segments=4),
    c(SEG_DATA, i32(0, 2), i32(0, 3), num_segments=2),
], fn=lambda tf, *a, **k: tf.sparse.segment_sum(*a, **k))

# --- array ops ------------------------------------------------------------------------------------------------

X24 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
op("reshape", [
    c(X24, [4, 6]),
    c(X24, [-1]),
    c(X24, [2, -1, 3]),
    c(X24, np.array([6, -1], np.int64)),
    c(X24, [5, -1]),
    c(X24, [7, 3]),
    c(X24, [-1, -1]),
    c(E03, [-1, 0]),
    c(E03, [0, -1]),
    c(E03, [3, 0, -1]),
    c(np.float32(3.0), [1, 1]),
    c(X3, []),
    c(np.array([5.0], np.float32), []),
    c(Hide(X24), [4, -1]),
    c(Hide(X24), Hide(i32(5, -1))),
    c(NoRank(X24), [-1, 2]),
    c(X24, Hide(i32(6, 4))),
    c(s("a", "b", "c", "d"), [2, 2]),
])
op("transpose", [
    c(X24),
    c(X24, [1, 0, 2]),
    c(X24, perm=[2, 0, 1]),
    c(X24, np.array([0, 2, 1], np.int64)),
    c(X24, [0, 1]),
    c(X24, [0, 0, 1]),
    c(X24, [0, 1, 3]),
    c(E03, [1, 0]),
    c(Hide(X24), [1, 2, 0]),
    c(NoRank(X24)),
    c(X24, Hide(i32(2, 1, 0))),
    c(b(True, False)),
    c(X24, [-1, 0, 1]),
])
op("concat", [
    c([X23, f32(2, 3)], 0),
    c([X23, f32(2, 1)], 1),
    c([X23, f32(2, 3)], -1),
    c([X23, E03], 0),
    c([X23], 1),
    c([X23, f32(3, 2)], 0),
    c([X23, f32(2, 3)], 2),
    c([X23, f32(2, 3)], -3),
    c([X23, i32(1, 2, 3)], 0),
    c([Hide(X23), f32(1, 3)], 0),
    c([Hide(X23), f32(1, 3)], 1),
    c([NoRank(X23), f32(1, 3)], 0),
    c([X23, f32(2, 3)], np.array(1, np.int64)),
    c([X23, f32(2, 3)], Hide(np.array(0, np.int32))),
    c([s("a"), s("b", "c")], 0),
    c([X3, np.float32(1.0)], 0),
    c([], 0),
])
op("stack", [
    c([X3, f32(3)]),
    c([X3, f32(3)], axis=1),
    c([X3, f32(3)], axis=-1),
    c([X23, f32(2, 3)], axis=-2),
    c([X3]),
    c([X3, f32(4)]),
    c([X3, f32(3)], axis=2),
    c([X3, f32(3)], axis=-3),
    c([Hide(X3), X3]),
    c([np.float32(1.0), np.float32(2.0)]),
    c([E03, E03], axis=1),
    c([]),
])
op("unstack", [
    c(X24),
    c(X24, axis=1),
    c(X24, axis=-1),
    c(X24, num=2),
    c(X24, num=3),
    c(Hide(X24), num=2),
    c(Hide(X24)),
    c(X24, axis=3),
    c(np.zeros((0, 2), np.float32)),
    c(np.zeros((0, 2), np.float32), axis=1),
])
op("split", [
    c(X24, 2),
    c(X24, 3, axis=1),
    c(X24, [1, 3], axis=2),
    c(X24, [1, -1, 1], axis=1),
    c(X24, 3, axis=-1),
    c(X24, [1, 1], axis=1),
    c(X24, 5, axis=2),
    c(X24, [-1, -1], 2),
    c(Hide(X24), 2, axis=0),
    c(Hide(X24), [1, 3], axis=2),
    c(E03, 3, axis=1),
    c(X24, 2, axis=3),
    c(X24, np.array([2, 2], np.int64), axis=2),
    c(X24, 1),
])
IDX = i32(2, 0, 2, 1)
op("gather", [
    c(X23, i32(1, 0, 1)),
    c(X23, i32(2, 0), axis=1),
    c(X234, np.array([[0, 2], [1, 1]], np.int32), axis=-1),
    c(X23, i64(1)),
    c(X23, np.array(1, np.int32)),
    c(X23, i32(0, 2)),
    c(X23, i32(-1)),
    c(X23, i32(3), axis=1),
    c(X23, np.zeros(0, np.int32)),
    c(E03, np.zeros(0, np.int32)),
    c(E03, i32(0)),
    c(X23, i32(0), axis=2),
    c(Hide(X23), i32(1), axis=1),
    c(NoRank(X234), i32(1), axis=1),
    c(s("a", "b", "c"), IDX),
    c(np.array([[1, 2, 3], [4, 5, 6]], np.int32), np.array([[0, 2], [1, 0]], np.int32), axis=1, batch_dims=1),
    c(X23, i32(0, 1), axis=np.array(1, np.int32)),
    c(X23, X3),
])
op("gather_nd", [
    c(X23, np.array([[0, 1], [1, 2]], np.int32)),
    c(X23, np.array([[1], [0]], np.int32)),
    c(X234, np.array([[[0, 1]], [[1, 2]]], np.int64)),
    c(X23, np.zeros((0, 2), np.int32)),
    c(X23, np.array([[2, 0]], np.int32)),
    c(X23, np.array([[0, -1]], np.int32)),
    c(E03, np.array([[0]], np.int32)),
    c(E03, np.zeros((0, 1), np.int32)),
    c(np.zeros((2, 0), np.float32), np.array([[1, 0]], np.int32)),
    c(np.zeros((2, 0), np.float32), np.array([[1]], np.int32)),
    c(X23, np.array([[0, 1, 2]], np.int32)),
    c(X234, np.array([[1], [0]], np.int32), batch_dims=1),
    c(Hide(X23), np.array([[0, 1]], np.int32)),
    c(Hide(X23), Hide(np.array([[1]], np.int32))),
    c(X23, np.zeros((2, 0), np.int32)),
    c(s("a", "b"), np.array([[1]], np.int32)),
])
op("scatter_nd", [
    c(np.array([[0], [2]], np.int32), np.array([1.0, 2.0], np.float32), [4]),
    c(np.array([[1], [1]], np.int32), np.array([1.0, 2.0], np.float32), [3]),
    c(np.array([[0, 1], [1, 0]], np.int64), np.array([5, 7], np.int32), np.array([2, 2], np.int64)),
    c(np.array([[1]], np.int32), np.array([[1.0, 2.0]], np.float32), [2, 2]),
    c(np.array([[3]], np.int32), np.array([1.0], np.float32), [3]),
    c(np.array([[-1]], np.int32), np.array([1.0], np.float32), [3]),
    c(np.zeros((0, 1), np.int32), np.zeros(0, np.float32), [3]),
    c(np.array([[0]], np.int32), np.array([1.0, 2.0], np.float32), [3]),
    c(Hide(np.array([[0], [2]], np.int32)), Hide(np.array([1.0, 2.0], np.float32)), [4]),
    c(np.array([[0], [2]], np.int32), np.array([True, True]), [4]),
])
TSN = [
    c(X23, np.array([[0, 1], [1, 2]], np.int32), np.array([9.0, 8.0], np.float32)),
    c(X23, np.array([[1]], np.int32), np.array([[1.0, 2.0, 3.0]], np.float32)),
    c(X23, np.array([[0, 1], [0, 1]], np.int32), np.array([1.0, 2.0], np.float32)),
    c(X23, np.array([[2, 0]], np.int32), np.array([1.0], np.float32)),
    c(i32(1, 2, 3), np.array([[0], [2]], np.int64), i32(10, 20)),
    c(X23, np.zeros((0, 2), np.int32), np.zeros(0, np.float32)),
    c(Hide(X23), np.array([[1, 1]], np.int32), np.array([5.0], np.float32)),
    c(X23, np.array([[0, 1]], np.int32), np.array([5.0, 6.0], np.float32)),
]
for _name in ["tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
              "tensor_scatter_nd_max", "tensor_scatter_nd_min"]:
    op(_name, TSN)
op("tile", [
    c(X23, [2, 1]),
    c(X23, [1, 3]),
    c(X23, [0, 2]),
    c(X23, np.array([2, 2], np.int64)),
    c(X23, [2]),
    c(X23, [-1, 1]),
    c(E03, [2, 2]),
    c(Hide(X23), [2, 1]),
    c(X23, Hide(i32(1, 2))),
    c(NoRank(X23), [2, 2]),
    c(s("a", "b"), [2]),
    c(b(True, False), [3]),
    c(np.float32(1.0), []),
])
PADS = np.array([[1, 0], [2, 1]], np.int32)
op("pad", [
    c(X23, PADS),
    c(X23, PADS, constant_values=7.5),
    c(X23, PADS, mode="REFLECT"),
    c(X23, [[1, 1], [2, 2]], mode="SYMMETRIC"),
    c(X23, [[0, 0], [3, 0]], mode="REFLECT"),
    c(X23, [[0, 0], [4, 0]], mode="SYMMETRIC"),
    c(X23, [[1, 1], [1, 1]], mode="symmetric"),
    c(X23, [[1, 1]]),
    c(X23, [[-1, 0], [0, 0]]),
    c(E03, [[1, 1], [0, 0]]),
    c(i32(1, 2), [[2, 1]], constant_values=-1),
    c(Hide(X23), PADS),
    c(X23, Hide(PADS)),
    c(NoRank(X23), PADS),
    c(X23, PADS, mode="WRAP"),
    c(s("a"), [[1, 1]]),
    c(np.float32(1.0), np.zeros((0, 2), np.int32)),
])
op("slice", [
    c(X24, [0, 1, 1], [2, 2, 3]),
    c(X24, [1, 0, 0], [-1, -1, 2]),
    c(X24, [0, 0, 0], [0, 3, 4]),
    c(X24, np.array([0, 2, 1], np.int64), np.array([1, 1, -1], np.int64)),
    c(X24, [0, 2, 0], [1, 2, 4]),
    c(X24, [0, 0], [1, 1]),
    c(X24, [-1, 0, 0], [1, 1, 1]),
    c(Hide(X24), [0, 1, 0], [1, -1, 2]),
    c(Hide(X24), [0, 2, 0], [1, 2, 4]),
    c(X24, Hide(i32(1, 0, 0)), [1, 3, 4]),
    c(NoRank(X24), [0, 1, 1], [2, 2, 3]),
])
op("strided_slice", [
    c(X24, [0, 1, 0], [2, 3, 4], [1, 1, 2]),
    c(X24, [0, 0, -1], [0, 0, 0], [1, 1, -1], begin_mask=3, end_mask=7),
    c(X24, [1], [2], [1], shrink_axis_mask=1),
    c(X24, [0, 0], [0, 0], [1, 1], new_axis_mask=2, begin_mask=1, end_mask=1),
    c(X24, [0, 1], [0, 2], [1, 1], ellipsis_mask=1, shrink_axis_mask=2),
    c(X24, [5], [6], [1], shrink_axis_mask=1),
    c(X24, [0], [2], [0]),
    c(X24, [-10], [10], [1]),
    c(X24, [3], [1], [1]),
    c(Hide(X24), [0, 1], [2, 3], [1, -1]),
    c(Hide(X24), [1], [2], [1], shrink_axis_mask=1),
    c(Hide(X24), [5], [6], [1], shrink_axis_mask=1),
    c(E03, [0, 1], [0, 2], [1, 1]),
])
op("getitem", [
    c(X24, "a[1:]"),
    c(X24, "a[::-1]"),
    c(X24, "a[..., 0]"),
    c(X24, "a[:, None, 1]"),
    c(X24, "a[-1, -2, -3]"),
    c(X24, "a[1, ..., ::2]"),
    c(X24, "a[:, 5:]"),
    c(X24, "a[2]"),
    c(X24, "a[:, :, -5]"),
    c(Hide(X24), "a[-1]"),
    c(Hide(X24), "a[:, ::-2]"),
    c(Hide(X24), "a[3]"),
    c(np.float32(1.0), "a[None]"),
    c(X3, "a[np.int32(1)]"),
    c(X24, "a[:, 1:2, np.newaxis]"),
    c(X24, "a[0, 0, 0, 0]"),
], fn=lambda tf, a, expr: eval(expr, {"a": a, "np": np}))
op("where", [
    c(b(True, False, True)),
    c(np.array([[True, False], [False, True]])),
    c(np.array([[0.0, 1.5], [-2.0, 0.0]], np.float32)),
    c(np.zeros((0, 3), bool)),
    c(Hide(np.array([[True, False]]))),
    c(b(True, False, True), X3, f32(3)),
    c(b(True, False), X23, f32(2, 3)),
    c(b(True, False, True), X23, f32(2, 3)),
    c(np.array([[True, False, True], [False, False, True]]), X23, np.float32(0.0)),
    c(b(True, False, True), X3, i32(1, 2, 3)),
    c(Hide(b(True, False)), Hide(X23), Hide(f32(2, 3))),
    c(i32(1, 0), i32(1, 2), i32(3, 4)),
])
op("where_v2", [
    c(b(True, False, True), X23, np.float32(0.0)),
    c(np.array([[True], [False]]), X3, f32(2, 1)),
    c(b(True, False), X23, f32(2, 3)),
    c(b(True, False, True)),
    c(Hide(b(True, False, True)), X3, Hide(f32(2, 3))),
    c(np.zeros((0, 1), bool), X3, X3),
])
op("boolean_mask", [
    c(X23, b(True, False)),
    c(X23, np.array([[True, False, True], [False, False, True]])),
    c(X234, b(False, True, True), axis=1),
    c(X23, b(False, False)),
    c(X23, b(True, False, True)),
    c(Hide(X23), Hide(b(True, True))),
    c(X23, np.array(True)),
    c(E03, np.zeros(0, bool)),
    c(s("a", "b", "c"), b(True, False, True)),
    c(X234, b(True, True, False, True), axis=-1),
])
op("one_hot", [
    c(i32(0, 2, 1), 3),
    c(i32(0, 2, -1, 5), 3),
    c(i64(1, 0), 3, on_value=5.0, off_value=-1.0),
    c(np.array([[0, 1], [2, 0]], np.int32), 3, axis=0),
    c(np.array([[0, 1], [2, 0]], np.int32), 3, axis=1),
    c(np.array([[0, 1], [2, 0]], np.int32), 3, axis=-1),
    c(i32(0, 1), 0),
    c(i32(0, 1), 2, dtype="int32"),
    c(i32(0, 1), 2, on_value=3, off_value=0),
    c(u8(0, 1), 2),
    c(np.zeros(0, np.int32), 4),
    c(Hide(i32(1, 0)), 2),
    c(i32(0, 1), 2, axis=3),
    c(i32(0, 1), -1),
    c(i32(0, 1), 2, on_value=1.0, off_value=0),
    c(X3, 2),
], fn=lambda tf, x, depth, dtype=None, **k: tf.one_hot(
    x, depth, **k, **({} if dtype is None else {"dtype": getattr(tf, dtype)})))
op("reverse", [
    c(X24, [0]),
    c(X24, [-1, 1]),
    c(X24, np.array([2], np.int64)),
    c(X24, []),
    c(X24, [3]),
    c(X24, [1, 1]),
    c(Hide(X24), [1]),
    c(E03, [0, 1]),
    c(s("a", "b"), [0]),
])
op("reverse_sequence", [
    c(X234, i32(2, 3), seq_axis=1, batch_axis=0),
    c(X234, i64(0, 1), seq_axis=2, batch_axis=0),
    c(X234, i32(4, 1), seq_axis=1, batch_axis=0),
    c(X234, i32(1, 1, 1), seq_axis=1, batch_axis=0),
])
op("roll", [
    c(X24, 1, 0),
    c(X24, [1, -2], [1, 2]),
    c(X24, 7, -1),
    c(X24, [1, 1], [2, 2]),
    c(X24, 1, 3),
    c(E03, 1, 0),
    c(Hide(X24), [-1], [1]),
    c(X24, [1, 2], [0]),
])
op("unique", [
    c(i32(1, 1, 2, 4, 4, 4, 7, 8, 8)),
    c(np.array([3.0, NAN, 3.0, NAN, -0.0, 0.0], np.float32)),
    c(s("b", "a", "b")),
    c(np.zeros(0, np.int64)),
    c(i32(5, 5), out_idx="int64"),
    c(Hide(i32(2, 1, 2))),
    c(np.array([[1, 2]], np.int32)),
    c(b(True, False, True)),
], fn=lambda tf, x, out_idx=None: tf.unique(x, **({} if out_idx is None else {"out_idx": getattr(tf, out_idx)})))
op("unique_with_counts", [c(i32(1, 1, 2, 4, 4)), c(np.zeros(0, np.float32)), c(np.array([[1]], np.int32))])
SORTS = [
    c(np.array([3.0, 1.0, NAN, -INF, 2.0, 1.0, -0.0, 0.0], np.float32)),
    c(X234, axis=1),
    c(X234, axis=0, direction="DESCENDING"),
    c(i32(3, -2147483648, 2147483647, 0)),
    c(u8(200, 3, 255, 0), direction="DESCENDING"),
    c(np.zeros((2, 0), np.float32)),
    c(Hide(X23)),
    c(X23, axis=2),
    c(X23, direction="UP"),
    c(np.float32(1.0)),
    c(np.array([1.5, -2.0, 0.5], np.float16)),
]
op("sort", SORTS)
op("argsort", SORTS)
op("nn.top_k", [
    c(np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], np.float32), 3),
    c(np.array([1.0, 2.0, 2.0, 2.0, 1.0], np.float32), 2),
    c(X234, 2),
    c(X234, 4, sorted=False),
    c(i32(7, -1, 7, 3), 3),
    c(X23, 0),
    c(X23, 4),
    c(X23, -1),
    c(Hide(X23), 2),
    c(Hide(X23), 5),
    c(np.float32(1.0), 1),
    c(np.array([NAN, 1.0, INF], np.float32), 2),
    c(X23, np.array(2, np.int32)),
])
op("nn.in_top_k", [
    c(np.array([[0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], np.float32), i32(1, 0), 1),
    c(np.array([[0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], np.float32), i32(0, 1), 2),
    c(np.array([[0.5, 0.5, 0.1]], np.float32), i64(1), 1),
    c(np.array([[0.1, 0.8, 0.1]], np.float32), i32(3), 1),
    c(np.array([[NAN, 0.8, 0.1]], np.float32), i32(0), 1),
    c(np.array([[0.1, 0.8, 0.1]], np.float32), i32(0, 1), 1),
])
op("squeeze", [
    c(np.zeros((1, 2, 1, 3), np.float32)),
    c(np.zeros((1, 2, 1, 3), np.float32), [0]),
    c(np.zeros((1, 2, 1, 3), np.float32), axis=[-2, 0]),
    c(np.zeros((1, 2, 1, 3), np.float32), [1]),
    c(np.zeros((1, 2, 1, 3), np.float32), [4]),
    c(Hide(np.zeros((1, 2, 1), np.float32))),
    c(Hide(np.zeros((1, 2, 1), np.float32)), [2]),
    c(Hide(np.zeros((1, 2, 1), np.float32)), [1]),
    c(np.zeros((1, 0, 1), np.float32)),
    c(np.float32(1.0)),
])
op("expand_dims", [
    c(X23, 0),
    c(X23, -1),
    c(X23, 2),
    c(X23, -3),
    c(X23, 3),
    c(X23, -4),
    c(np.float32(1.0), 0),
    c(Hide(X23), 1),
    c(NoRank(X23), 1),
    c(X23, np.array(1, np.int64)),
    c(X23, np.array([1], np.int32)),
])
op("shape", [c(X24), c(Hide(X24)), c(NoRank(X24)), c(E03, out_type="int64"), c(np.float32(1.0))],
   fn=lambda tf, x, out_type=None: tf.shape(x, **({} if out_type is None else {"out_type": getattr(tf, out_type)})))
op("size", [c(X24), c(Hide(X24)), c(NoRank(X24)), c(E03), c(np.float32(1.0))])
op("rank", [c(X24), c(Hide(X24)), c(NoRank(X24)), c(np.float32(1.0))])
op("shape_n", [c([X24, X3]), c([Hide(X23), E03])])
op("fill", [
    c([2, 3], 1.5),
    c(np.array([2, 0], np.int64), 7),
    c([], np.float32(2.0)),
    c([2, -1], 1.0),
    c(Hide(i32(2, 2)), np.float32(1.0)),
    c([2], s("x")),
    c([2], True),
    c([2], X3),
])
op("zeros", [c([2, 3]), c([0]), c([2, 2], dtype="int32"), c([2], dtype="bool"), c([-1]),
             c(np.array([3], np.int64), dtype="float16"), c(Hide(i32(2, 1)))],
   fn=lambda tf, shape, dtype="float32": tf.zeros(shape, dtype=getattr(tf, dtype)))
op("ones", [c([2, 3]), c([0]), c([2, 2], dtype="int32"), c([2], dtype="bool"), c([-1]),
            c(np.array([3], np.int64), dtype="uint8"), c(Hide(i32(2, 1)))],
   fn=lambda tf, shape, dtype="float32": tf.ones(shape, dtype=getattr(tf, dtype)))
op("zeros_like#dtype", [c(X23, dtype="int32"), c(s("a"), dtype=None), c(b(True), dtype=None), c(Hide(X23), None)],
   fn=lambda tf, x, dtype: tf.zeros_like(x, **({} if dtype is None else {"dtype": getattr(tf, dtype)})))
op("ones_like#dtype", [c(X23, dtype="bool"), c(b(True), dtype=None), c(Hide(i32(1, 2)), "float64")],
   fn=lambda tf, x, dtype: tf.ones_like(x, **({} if dtype is None else {"dtype": getattr(tf, dtype)})))
op("range", [
    c(5),
    c(2, 9, 3),
    c(5, 1, -1),
    c(0),
    c(5, 1),
    c(0.5, 2.0, 0.25),
    c(1, 7, 0),
    c(np.array(4, np.int64)),
    c(3, dtype="float32"),
    c(Hide(np.array(3, np.int32))),
    c(np.array(2.5, np.float32), 4),
    c(1, 5, -1),
], fn=lambda tf, *a, dtype=None: tf.range(*a, **({} if dtype is None else {"dtype": getattr(tf, dtype)})))
op("linspace", [
    c(np.float32(0.0), np.float32(1.0), 5),
    c(np.float32(2.0), np.float32(-1.0), 4),
    c(np.float32(1.0), np.float32(1.0), 1),
    c(np.float64(0.0), np.float64(1.0), 3),
    c(np.float32(0.0), np.float32(1.0), 0),
    c(np.float32(0.0), np.float32(1.0), -1),
    c(0, 1, 3),
])
op("eye", [c(3), c(2, 4), c(2, batch_shape=[3]), c(0), c(2, dtype="int32"), c(-1)],
   fn=lambda tf, *a, dtype=None, **k: tf.eye(*a, **k, **({} if dtype is None else {"dtype": getattr(tf, dtype)})))
op("diag", [c(X3), c(X23), c(i32(1, 2)), c(np.zeros(0, np.float32)), c(np.float32(1.0))])
op("diag_part", [c(f32(3, 3)), c(f32(2, 3, 2, 3)), c(f32(2, 3)), c(np.float32(1.0))])
op("matrix_diag", [c(X3), c(X23), c(np.zeros((2, 0), np.float32)), c(i32(1, 2)), c(np.float32(1.0))])
op("matrix_diag_part", [c(f32(3, 3)), c(f32(2, 3, 4)), c(f32(4, 2)), c(X3), c(Hide(f32(3, 3)))])
op("matrix_set_diag", [c(f32(3, 3), X3), c(f32(2, 3, 4), f32(2, 3)), c(f32(3, 3), f32(2)), c(f32(2, 4), f32(2))])
op("matrix_band_part", [
    c(f32(4, 4), 1, 0),
    c(f32(4, 4), -1, 1),
    c(f32(2, 3, 4), 0, -1),
    c(f32(4, 4), 5, 5),
    c(f32(4, 4), np.array(1, np.int64), np.array(1, np.int64)),
    c(X3, 0, 0),
    c(f32(4, 4), -2, 0),
])
op("broadcast_to", [
    c(X3, [2, 3]),
    c(f32(2, 1), [2, 4]),
    c(X3, [2, 1, 3]),
    c(X3, [2, 4]),
    c(X23, [3]),
    c(X3, [0, 3]),
    c(Hide(X3), [2, 3]),
    c(X3, Hide(i32(2, 3))),
    c(np.float32(1.0), []),
    c(i32(1, 2), np.array([2, 2], np.int64)),
])
op("meshgrid", [c(X3, f32(2)), c(X3, f32(2), indexing="ij"), c(i32(1, 2), i32(3)), c(X3)])
op("sequence_mask", [
    c(i32(1, 3, 2), 5),
    c(i32(1, 3, 2)),
    c(np.array([[1, 0], [2, 3]], np.int64), 3),
    c(i32(1, 3), 2),
    c(i32(1, -1), 3),
    c(i32(1, 2), 3, dtype="float32"),
    c(Hide(i32(2, 0)), 2),
    c(X3, 2),
], fn=lambda tf, x, maxlen=None, dtype=None: tf.sequence_mask(
    x, maxlen, **({} if dtype is None else {"dtype": getattr(tf, dtype)})))
op("cast", [
    c(np.array([1.7, -1.7, 0.5, -0.5, 300.0, -300.0], np.float32), "int32"),
    c(np.array([1.7, -1.7, 0.0, 2.0], np.float32), "bool"),
    c(np.array([1.0, 70000.0, -70000.0, 1e-8, NAN], np.float32), "float16"),
    c(np.array([1.0, 3.5, 1e39], np.float64), "float32"),
    c(i32(-1, 256, 1000), "uint8"),
    c(i64(2 ** 40 + 5, -1), "int32"),
    c(b(True, False), "float32"),
    c(u8(255, 0), "int8"),
    c(np.array([255, 65535], np.uint16), "int16"),
    c(i32(3, 0), "bool"),
    c(np.array([0.1, 1.5], np.float32), "bfloat16"),
    c(np.array([0.1, 1.5], np.float32), "float64"),
    c(s("1"), "int32"),
    c(i32(1, 2), "string"),
    c(E03, "int64"),
    c(Hide(X23), "int32"),
    c(i32(1, 2), "complex64"),
], fn=lambda tf, x, dtype: tf.cast(x, getattr(tf, dtype)))
op("saturate_cast", [
    c(np.array([1.7, -300.0, 300.0, NAN], np.float32), "uint8"),
    c(i32(-1, 70000), "int16"),
    c(np.array([1e10, -1e10], np.float64), "int32"),
    c(i64(-5, 5), "uint32"),
], fn=lambda tf, x, dtype: tf.saturate_cast(x, getattr(tf, dtype)))
op("bitcast", [
    c(np.array([1.0, -2.0], np.float32), "int32"),
    c(i32(1, 2), "uint8"),
    c(np.array([[1, 2, 3, 4]], np.uint8), "int32"),
    c(u8(1, 2, 3), "int16"),
    c(np.array([1.0], np.float64), "float32"),
], fn=lambda tf, x, dtype: tf.bitcast(x, getattr(tf, dtype)))
op("clip_by_value", [
    c(X23, -0.5, 0.5),
    c(X23, f32(3) - 1.0, f32(3) + 1.0),
    c(i32(-5, 0, 5), 0, 3),
    c(SPECIAL, -1.0, 1.0),
    c(X23, 1.0, -1.0),
    c(E03, 0.0, 1.0),
    c(Hide(X23), np.float32(0.0), np.float32(1.0)),
    c(X23, f32(4), 1.0),
    c(X23, 0, 1),
    c(u8(0, 200), u8(10), u8(100)),
])
op("clip_by_norm", [
    c(X23, 1.0),
    c(X23, 1.0, axes=[1]),
    c(X23, 100.0),
    c(np.zeros((2, 2), np.float32), 1.0),
    c(X23, np.float32(0.5), axes=np.array([0], np.int32)),
    c(Hide(X23), 1.0, axes=[-1]),
    c(E03, 1.0),
    c(i32(3, 4), 1),
])
op("clip_by_global_norm", [
    c([X23, X3], 1.0),
    c([X23, None, X3], 1.0),
    c([X23], 100.0),
    c([np.zeros(2, np.float32)], 1.0),
    c([X23, X3], 1.0, use_norm=np.float32(4.0)),
    c([np.array([INF, 1.0], np.float32)], 1.0),
])
op("global_norm", [c([X23, X3]), c([X23, None]), c([]), c([np.array([3.0, 4.0], np.float64)])])
op("clip_by_average_norm", [c(X23, 0.5), c(X23, 100.0)])
op("searchsorted", [
    c(np.array([[0.0, 1.0, 3.0]], np.float32), np.array([[1.0, 4.0, -1.0]], np.float32)),
    c(np.array([[0.0, 1.0, 3.0]], np.float32), np.array([[1.0, 4.0]], np.float32), side="right"),
    c(i32(1, 3, 3, 9), i32(3, 0)),
    c(np.array([[0.0, 1.0]], np.float32), np.array([[1.0]], np.float64)),
    c(np.array([[0.0, 1.0], [1.0, 2.0]], np.float32), np.array([[1.0]], np.float32)),
])
op("setdiff1d", [c(i32(1, 2, 3, 2), i32(2)), c(np.zeros(0, np.int32), i32(1)), c(i32(1), np.array([[1]], np.int32))])
op("bincount", [
    c(i32(1, 1, 3, 0)),
    c(i32(1, 1, 3), minlength=6),
    c(i32(1, 1, 3), maxlength=2),
    c(i32(1, 2), weights=np.array([0.5, 2.0], np.float32)),
    c(np.zeros(0, np.int32)),
    c(i32(1, -1)),
    c(np.array([[1, 2], [2, 2]], np.int32)),
])
op("histogram_fixed_width", [
    c(np.array([-1.0, 0.0, 0.5, 2.0, 5.0, NAN], np.float32), np.array([0.0, 4.0], np.float32), nbins=4),
    c(i32(1, 2, 9), i32(0, 10), nbins=2),
    c(np.array([1.0], np.float32), np.array([1.0, 0.0], np.float32), nbins=2),
    c(np.array([1.0], np.float32), np.array([0.0, 1.0], np.float32), nbins=0),
])
op("unravel_index", [c(i32(1, 5, 7), i32(2, 4)), c(np.array(3, np.int64), i64(2, 2)), c(i32(8), i32(2, 4)),
                     c(i32(-1), i32(2, 4))])
op("math.confusion_matrix", [
    c(i32(0, 1, 2, 1), i32(0, 2, 2, 1)),
    c(i32(0, 1), i32(1, 1), num_classes=3),
    c(i32(0, 1), i32(1, 1), weights=np.array([0.5, 2.0], np.float32)),
    c(i32(0, 3), i32(1, 1), num_classes=3),
    c(i32(0, -1), i32(1, 1)),
])
op("space_to_depth", [c(f32(1, 4, 4, 2), 2), c(f32(1, 3, 4, 2), 2), c(f32(1, 2, 2, 1), 1)])
op("depth_to_space", [c(f32(1, 2, 2, 8), 2), c(f32(1, 2, 2, 6), 2), c(f32(1, 2, 2, 4), 1)])
op("batch_to_space_nd", [c(f32(4, 1, 1, 2), [2, 2], [[0, 0], [0, 0]]), c(f32(4, 2, 2, 1), [2, 2], [[0, 1], [1, 0]]),
                         c(f32(3, 1, 1, 1), [2, 2], [[0, 0], [0, 0]])])
op("space_to_batch_nd", [c(f32(1, 4, 4, 1), [2, 2], [[0, 0], [0, 0]]), c(f32(1, 3, 3, 1), [2, 2], [[1, 0], [0, 1]]),
                         c(f32(1, 3, 3, 1), [2, 2], [[0, 0], [0, 0]])])
op("identity_n", [c([X23, i32(1)])])
op("ensure_shape", [c(X23, [2, 3]), c(X23, [None, 3]), c(Hide(X23), [2, 3]), c(Hide(X23), [3, 2]),
                    c(X23, [2, 4])])

# --- math: matrices -------------------------------------------------------------------------------------------

op("matmul", [
    c(X23, f32(3, 4)),
    c(X23, f32(4, 3), transpose_b=True),
    c(f32(3, 2), f32(3, 4), transpose_a=True),
    c(f32(2, 2, 3), f32(2, 3, 4)),
    c(f32(2, 2, 3), f32(3, 4)),
    c(f32(2, 1, 2, 3), f32(3, 3, 2)),
    c(np.array([[1, 2], [3, 4]], np.int32), np.array([[5], [6]], np.int32)),
    c(f64(2, 3), f64(3, 1)),
    c(np.array([[1.0, 2.0]], np.float16), np.array([[3.0], [4.0]], np.float16)),
    c(X23, f32(2, 4)),
    c(X3, f32(3, 2)),
    c(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)),
    c(np.zeros((0, 3), np.float32), f32(3, 2)),
    c(Hide(X23), f32(3, 4)),
    c(Hide(X23), Hide(f32(4, 4))),
    c(X23, i32(1, 2)),
    c(f32(2, 2, 3), f32(3, 3, 4)),
    c(X23, f32(3, 4), adjoint_b=False, a_is_sparse=True),
])
op("tensordot", [c(X234, f32(4, 5), 1), c(X234, f32(3, 4, 2), 2), c(X234, f32(3, 2), [[1], [0]]),
                 c(X23, f32(3), 0), c(X23, f32(4), [[1], [0]])])
op("einsum", [
    c("ij,jk->ik", X23, f32(3, 4)),
    c("bij,bjk->bik", f32(2, 2, 3), f32(2, 3, 4)),
    c("ii->i", f32(3, 3)),
    c("ij->", X23),
    c("i,j->ij", X3, f32(2)),
    c("...ij,...jk->...ik", f32(2, 2, 3), f32(3, 4)),
    c("ij,jk->ik", X23, f32(4, 4)),
    c("ij->ji", X23),
], fn=lambda tf, eq, *xs: tf.einsum(eq, *xs))
op("matrix_transpose", [c(X234), c(X23, conjugate=True), c(X3), c(Hide(X234))])
op("linalg.inv", [c(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)), c(f64(2, 3, 3) + 3 * np.eye(3)),
                  c(np.zeros((2, 2), np.float32)), c(X23)])
op("matrix_determinant", [c(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)), c(f64(2, 3, 3)), c(X23),
                          c(np.zeros((0, 0), np.float32))])
# Only the lower triangle: TF leaves the upper one of a failed factorization uninitialized.
op("cholesky", [c(np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)), c(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)),
                c(X23)], fn=lambda tf, x: tf.matrix_band_part(tf.cholesky(x), -1, 0))
op("trace", [c(f32(3, 3)), c(X234), c(X3), c(i32(1, 2, 3, 4).reshape(2, 2))])
op("cross", [c(f32(2, 3), f32(2, 3)), c(f32(2, 4), f32(2, 4)), c(i32(1, 0, 0), i32(0, 1, 0))])
op("matrix_solve", [c(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32), f32(2, 3)),
                    c(np.zeros((2, 2), np.float32), f32(2, 1)), c(f32(2, 2), f32(3, 1))])
op("matrix_triangular_solve", [c(np.array([[2.0, 0.0], [1.0, 3.0]], np.float32), f32(2, 3)),
                               c(np.array([[2.0, 1.0], [0.0, 3.0]], np.float32), f32(2, 1), lower=False)])
op("nn.l2_normalize", [c(X23, axis=1), c(X23, axis=0, epsilon=1e-3), c(np.zeros((2, 2), np.float32), axis=1),
                       c(X234, axis=[1, 2]), c(Hide(X23), axis=-1), c(i32(3, 4), axis=0)])
op("math.l2_normalize", [c(X23), c(SPECIAL)])

# --- tf.nn ------------------------------------------------------------------------------------------------------

LOGITS = np.array([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0], [-INF, 0.0, 1.0]], np.float32)
for _name in ["nn.softmax", "nn.log_softmax"]:
    op(_name, [
        c(X23),
        c(LOGITS),
        c(X234, axis=1),
        c(X234, axis=-2),
        c(X23, axis=0),
        c(X23, axis=2),
        c(E03),
        c(np.zeros((2, 0), np.float32)),
        c(X3),
        c(Hide(X23)),
        c(np.array([[1.0, 2.0]], np.float16)),
        c(f64(2, 3)),
        c(i32(1, 2)),
        c(np.float32(1.0)),
    ])
LABELS = np.array([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0], [0.0, 1.0, 0.0]], np.float32)
op("nn.softmax_cross_entropy_with_logits_v2", [
    c(labels=LABELS, logits=LOGITS),
    c(labels=LABELS[:2], logits=X23),
    c(labels=np.array([0.0, 1.0, 0.0], np.float32), logits=X3),
    c(labels=LABELS, logits=LOGITS, axis=0),
    c(labels=LABELS[:2], logits=f32(2, 4)),
    c(labels=Hide(LABELS), logits=Hide(LOGITS)),
    c(labels=np.zeros((0, 3), np.float32), logits=E03),
    c(labels=f64(2, 3), logits=f64(2, 3)),
])
op("nn.softmax_cross_entropy_with_logits", [c(labels=LABELS, logits=LOGITS), c(labels=LABELS[:2], logits=f32(2, 4))])
op("nn.sparse_softmax_cross_entropy_with_logits", [
    c(labels=i32(2, 0, 1), logits=LOGITS),
    c(labels=i64(1, 2), logits=X23),
    c(labels=i32(3, 0, 1), logits=LOGITS),
    c(labels=i32(-1, 0, 1), logits=LOGITS),
    c(labels=i32(0, 1), logits=LOGITS),
    c(labels=np.array([[0, 1]], np.int32), logits=f32(1, 2, 3)),
    c(labels=Hide(i32(2, 0)), logits=Hide(X23)),
    c(labels=np.zeros(0, np.int32), logits=E03),
    c(labels=X3, logits=LOGITS),
    c(labels=i32(1), logits=X3),
])
op("nn.sigmoid_cross_entropy_with_logits", [
    c(labels=np.array([0.0, 1.0, 0.5, 1.0], np.float32), logits=np.array([-100.0, 100.0, 0.0, -3.0], np.float32)),
    c(labels=X23 * 0 + 1, logits=X23),
    c(labels=X3, logits=X23),
    c(labels=Hide(X3), logits=Hide(X3)),
    c(labels=i32(1), logits=X3[:1]),
])
op("nn.weighted_cross_entropy_with_logits", [
    c(labels=np.array([0.0, 1.0, 0.5], np.float32), logits=X3, pos_weight=2.0),
    c(labels=np.ones((2, 3), np.float32), logits=X23, pos_weight=X3),
])
op("nn.l2_loss", [c(X23), c(E03), c(np.float32(3.0)), c(f64(2)), c(i32(1, 2)), c(np.array([1.0, 2.0], np.float16))])
op("nn.log_poisson_loss", [c(pos32(3), X3), c(pos32(3), X3, compute_full_loss=True),
                           c(np.array([0.0, 1.0], np.float32), f32(2), compute_full_loss=True)])
op("nn.bias_add", [
    c(X23, X3),
    c(X234, f32(4)),
    c(f32(1, 2, 2, 3), f32(2), data_format="NCHW"),
    c(X23, f32(2)),
    c(X3, X3),
    c(i32(1, 2), i32(3, 4)),
    c(Hide(X23), X3),
    c(X23, f32(1, 3)),
])
op("nn.moments", [c(X234, [0]), c(X234, [0, 1], keep_dims=True), c(X234, axes=[-1]), c(Hide(X234), [0, 2]),
                  c(X234, [3])])
op("nn.batch_normalization", [
    c(X234, f32(4), pos32(4), f32(4), pos32(4), 1e-3),
    c(X234, np.float32(0.1), np.float32(2.0), None, None, 1e-5),
    c(X23, X3, pos32(3), None, pos32(3), 0.0),
])
op("nn.fused_batch_norm", [
    c(f32(2, 3, 3, 2), pos32(2), f32(2)),
    c(f32(2, 3, 3, 2), pos32(3), f32(3)),
])
# Inference: only y is fetched (TF 2.21's grappler rewrites the op into Mul/Add and then cannot fetch output 1).
op("nn.fused_batch_norm#inference", [
    c(f32(2, 3, 3, 2), pos32(2), f32(2), mean=f32(2), variance=pos32(2), is_training=False),
    c(Hide(f32(2, 3, 3, 2)), pos32(2), f32(2), mean=f32(2), variance=pos32(2), epsilon=0.1, is_training=False),
], fn=lambda tf, *a, **k: tf.nn.fused_batch_norm(*a, **k)[0])
op("nn.lrn", [c(f32(1, 2, 2, 6)), c(f32(1, 2, 2, 6), depth_radius=2, bias=2.0, alpha=0.5, beta=0.75), c(X23)])
op("nn.local_response_normalization", [c(f32(1, 2, 2, 3), 1)])
IMG = f32(2, 5, 5, 3)
op("nn.max_pool", [
    c(IMG, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    c(IMG, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    c(IMG, 2, 1, "VALID"),
    c(IMG, [1, 6, 6, 1], [1, 1, 1, 1], "VALID"),
    c(IMG, [1, 2, 2, 1], [1, 2, 2, 1], "FULL"),
    c(Hide(IMG), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
    c(np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    c(np.array([[[[-INF], [NAN]], [[1.0], [2.0]]]], np.float32), [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    c(X23, [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    c(IMG, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", data_format="NCHW"),
    c(np.array([[[[1.0], [2.0]]]], np.float16), [1, 1, 2, 1], [1, 1, 1, 1], "VALID"),
])
op("nn.avg_pool", [
    c(IMG, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    c(IMG, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    c(IMG, [1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
    c(IMG, [1, 6, 6, 1], [1, 1, 1, 1], "VALID"),
    c(Hide(IMG), [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    c(np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
])
op("nn.pool", [c(IMG, [2, 2], "MAX", padding="SAME"), c(IMG, [2, 2], "AVG", padding="VALID", strides=[2, 2]),
               c(f32(1, 6, 2), [3], "AVG", padding="SAME", dilation_rate=[2])])
op("nn.max_pool1d", [c(f32(2, 6, 3), 2, 2, "VALID"), c(f32(2, 5, 3), 3, 2, "SAME")])
op("nn.avg_pool1d", [c(f32(2, 6, 3), 2, 2, "VALID"), c(f32(2, 5, 3), 3, 2, "SAME")])
op("nn.max_pool3d", [c(f32(1, 4, 4, 4, 2), [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID")])
op("nn.avg_pool3d", [c(f32(1, 4, 3, 4, 2), [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME")])
op("nn.max_pool_with_argmax", [c(f32(1, 4, 4, 2), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                               c(f32(2, 3, 3, 1), [1, 2, 2, 1], [1, 1, 1, 1], "SAME", include_batch_in_index=True)])
W = f32(3, 3, 3, 4)
op("nn.conv2d", [
    c(IMG, W, [1, 1, 1, 1], "SAME"),
    c(IMG, W, [1, 2, 2, 1], "VALID"),
    c(IMG, W, [1, 2, 1, 1], "SAME"),
    c(IMG, W, strides=1, padding="SAME", dilations=[1, 2, 2, 1]),
    c(IMG, W, [1, 1, 1, 1], [[0, 0], [1, 0], [0, 2], [0, 0]]),
    c(IMG, f32(3, 3, 2, 4), [1, 1, 1, 1], "SAME"),
    c(IMG, f32(6, 6, 3, 1), [1, 1, 1, 1], "VALID"),
    c(IMG, W, [1, 1, 1, 1], "FULL"),
    c(Hide(IMG), W, [1, 1, 1, 1], "SAME"),
    c(IMG, Hide(W), [1, 2, 2, 1], "VALID"),
    c(f64(1, 3, 3, 1), f64(2, 2, 1, 1), [1, 1, 1, 1], "VALID"),
    c(np.ones((1, 3, 3, 1), np.int32), np.ones((2, 2, 1, 1), np.int32), [1, 1, 1, 1], "VALID"),
    c(f32(1, 3, 3, 4), f32(1, 1, 2, 2), [1, 1, 1, 1], "VALID"),
    c(np.zeros((0, 5, 5, 3), np.float32), W, [1, 1, 1, 1], "SAME"),
])
op("nn.conv1d", [c(f32(2, 7, 3), f32(3, 3, 2), 1, "SAME"), c(f32(2, 7, 3), f32(3, 3, 2), 2, "VALID"),
                 c(f32(2, 7, 3), f32(3, 3, 2), stride=1, padding="SAME", dilations=2)])
op("nn.conv3d", [c(f32(1, 4, 4, 4, 2), f32(2, 2, 2, 2, 3), [1, 1, 1, 1, 1], "SAME"),
                 c(f32(1, 4, 5, 4, 2), f32(3, 2, 2, 2, 3), [1, 2, 1, 2, 1], "VALID")])
op("nn.depthwise_conv2d", [
    c(IMG, f32(3, 3, 3, 2), [1, 1, 1, 1], "SAME"),
    c(IMG, f32(2, 2, 3, 1), [1, 2, 2, 1], "VALID"),
    c(IMG, f32(3, 3, 3, 1), [1, 1, 1, 1], "SAME", rate=[2, 2]),
    c(IMG, f32(3, 3, 2, 1), [1, 1, 1, 1], "SAME"),
])
op("nn.separable_conv2d", [c(IMG, f32(3, 3, 3, 2), f32(1, 1, 6, 4), [1, 1, 1, 1], "SAME"),
                           c(IMG, f32(2, 2, 3, 1), f32(1, 1, 3, 2), [1, 2, 2, 1], "VALID")])
op("nn.conv2d_transpose", [
    c(f32(2, 3, 3, 4), f32(3, 3, 2, 4), [2, 5, 5, 2], [1, 1, 1, 1], "VALID"),
    c(f32(2, 3, 3, 4), f32(3, 3, 2, 4), [2, 6, 6, 2], [1, 2, 2, 1], "SAME"),
    c(f32(2, 3, 3, 4), f32(3, 3, 2, 4), [2, 7, 7, 2], [1, 2, 2, 1], "VALID"),
    c(f32(2, 3, 3, 4), f32(3, 3, 2, 4), [2, 9, 9, 2], [1, 2, 2, 1], "VALID"),
    c(f32(2, 3, 3, 4), f32(3, 3, 2, 3), [2, 5, 5, 2], [1, 1, 1, 1], "VALID"),
    c(Hide(f32(2, 3, 3, 4)), f32(3, 3, 2, 4), np.array([2, 5, 5, 2], np.int32), [1, 1, 1, 1], "VALID"),
])
op("nn.atrous_conv2d", [c(IMG, f32(2, 2, 3, 2), 2, "SAME"), c(IMG, f32(2, 2, 3, 2), 2, "VALID")])
op("nn.embedding_lookup", [
    c(X23, i32(1, 0, 1)),
    c(X23, np.array([[0], [1]], np.int64)),
    c([X23, f32(2, 3)], i32(0, 1, 2, 3)),
    c([X23, f32(1, 3)], i32(0, 1, 2), partition_strategy="div"),
    c(X23, i32(2)),
    c(X23, np.zeros(0, np.int32)),
    c(X23, i32(1), max_norm=0.1),
])
op("nn.embedding_lookup_sparse", [
    c(f32(4, 3), ("sparse", [[0, 0], [0, 1], [1, 0]], i64(1, 3, 2), [2, 2]), None, combiner="sum"),
    c(f32(4, 3), ("sparse", [[0, 0], [0, 1], [1, 0]], i64(1, 3, 2), [2, 2]), None),
    c(f32(4, 3), ("sparse", [[0, 0], [0, 1], [2, 0]], i64(1, 3, 2), [3, 2]), None, combiner="sqrtn"),
], fn=lambda tf, p, sp, w, **k: tf.nn.embedding_lookup_sparse(p, tf.SparseTensor(
    np.array(sp[1], np.int64), sp[2], np.array(sp[3], np.int64)), w, **k))
op("nn.dropout#keep1", [c(X23, keep_prob=1.0), c(X23, rate=0.0), c(X23, keep_prob=0.0), c(X23, rate=1.0),
                        c(X23, keep_prob=1.5)], fn=lambda tf, x, **k: tf.nn.dropout(x, **k))
op("nn.normalize_moments", [c(np.float32(4.0), f32(3), pos32(3) + 5, None),
                            c(np.float32(4.0), f32(3), pos32(3) + 5, np.float32(0.5))])
op("nn.zero_fraction", [c(np.array([0.0, 1.0, 0.0, 2.0], np.float32)), c(E03), c(i32(0, 0, 1))])
op("nn.ctc_greedy_decoder#values", [
    c(f32(4, 2, 3), i32(4, 3)),
    c(f32(4, 2, 3), i32(4, 3), merge_repeated=False),
], fn=lambda tf, x, n, **k: tf.nn.ctc_greedy_decoder(x, n, **k))

# --- losses ---------------------------------------------------------------------------------------------------

Y_T = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], np.float32)
Y_P = np.array([[0.1, 0.8, 0.6], [0.9, 0.2, 0.3]], np.float32)
LOSS = [
    c(Y_T, Y_P),
    c(Y_T, Y_P, weights=2.0),
    c(Y_T, Y_P, weights=np.array([[1.0], [0.0]], np.float32)),
    c(Y_T, Y_P, weights=np.zeros((2, 3), np.float32)),
    c(Y_T, Y_P, reduction="none"),
    c(Y_T, Y_P, reduction="weighted_sum"),
    c(Y_T, Y_P, reduction="weighted_mean"),
    c(Y_T, Y_P, reduction="weighted_sum_by_nonzero_weights", weights=np.array([[1.0], [0.0]], np.float32)),
    c(Y_T, Y_P[:, :2]),
    c(Hide(Y_T), Hide(Y_P)),
    c(Y_T, Y_P, weights=np.array([1.0, 2.0, 3.0], np.float32)),
]


def _loss(fn_name):
    def build(tf, labels, predictions, reduction=None, **k):
        if reduction is not None:
            k["reduction"] = {"none": tf.losses.Reduction.NONE, "weighted_sum": tf.losses.Reduction.SUM,
                              "weighted_mean": tf.losses.Reduction.MEAN,
                              "weighted_sum_by_nonzero_weights":
                                  tf.losses.Reduction.SUM_BY_NONZERO_WEIGHTS}[reduction]
        return getattr(tf.losses, fn_name)(labels, predictions, **k)

    return build


for _name in ["mean_squared_error", "absolute_difference", "log_loss", "hinge_loss", "huber_loss"]:
    op("losses." + _name, LOSS, fn=_loss(_name))
op("losses.mean_pairwise_squared_error", [cc for cc in LOSS if "reduction" not in cc.kwargs],
   fn=_loss("mean_pairwise_squared_error"))
op("losses.sigmoid_cross_entropy", [c(Y_T, Y_P), c(Y_T, Y_P, label_smoothing=0.2), c(Y_T, Y_P, weights=2.0),
                                    c(Y_T, Y_P[:, :2])])
op("losses.softmax_cross_entropy", [c(LABELS, LOGITS), c(LABELS, LOGITS, label_smoothing=0.1),
                                    c(LABELS, LOGITS, weights=np.array([1.0, 0.0, 2.0], np.float32)),
                                    c(LABELS[:2], LOGITS)])
op("losses.sparse_softmax_cross_entropy", [c(i32(2, 0, 1), LOGITS), c(i32(2, 0, 1), LOGITS, weights=2.0),
                                           c(np.array([[2], [0], [1]], np.int32), LOGITS), c(i32(3, 0, 1), LOGITS)])
op("losses.cosine_distance", [c(Y_T, Y_P, axis=1), c(Y_T, Y_P, axis=0, reduction="none")], fn=lambda tf, a, p, reduction=None, **k: tf.losses.cosine_distance(
    a, p, **k, **({} if reduction is None else {"reduction": tf.losses.Reduction.NONE})))

# --- strings --------------------------------------------------------------------------------------------------

WORDS = s("hello", "", "TensorFlow 1", "héllo")
op("strings.length", [c(WORDS), c(WORDS, unit="UTF8_CHAR"), c(s()), c(Hide(s("ab", "c")))])
op("strings.substr", [
    c(WORDS, 1, 3),
    c(WORDS, 0, 100),
    c(s("hello"), -3, 2),
    c(s("hello"), 6, 1),
    c(s("ab", "cd"), i32(0, 1), i32(1, 1)),
    c(s("héllo"), 1, 2, unit="UTF8_CHAR"),
    c(s("hello"), 1, -1),
])
op("strings.join", [c([s("a", "b"), s("c", "d")]), c([s("a", "b"), s("c")], separator="-"), c([s("a", "b"), s("c", "d", "e")])])
op("strings.reduce_join", [c(np.array([[b"a", b"b"], [b"c", b"d"]]), axis=1), c(np.array([[b"a", b"b"], [b"c", b"d"]])),
                           c(np.array([[b"a", b"b"], [b"c", b"d"]]), axis=0, separator=",", keepdims=True),
                           c(s(), axis=0)])
op("strings.to_number", [c(s("1.5", "-2", "1e3")), c(s("7", "-3"), out_type="int32"), c(s("abc")),
                         c(s("99999999999"), out_type="int32"), c(s(" 4 "))],
   fn=lambda tf, x, out_type=None: tf.strings.to_number(
       x, **({} if out_type is None else {"out_type": getattr(tf, out_type)})))
op("strings.regex_replace", [c(WORDS, "l+", "L"), c(WORDS, "[a-z]", "", replace_global=False),
                             c(s("a.b"), ".", "-"), c(s("x"), "(", "")])
op("strings.regex_full_match", [c(WORDS, "h.*o"), c(s("abc"), "[")])
op("strings.upper", [c(WORDS)])
op("strings.lower", [c(WORDS)])
op("strings.strip", [c(s("  a b ", "\tc\n", ""))])
op("strings.to_hash_bucket_fast", [c(WORDS, 10), c(s("a"), 1), c(s("a"), 0)])
op("strings.to_hash_bucket_strong", [c(WORDS, 10, [1, 2])])
op("string_to_hash_bucket_fast", [c(WORDS, 7)])
op("as_string", [
    c(np.array([1.5, -0.25, 1e10, NAN, INF], np.float32)),
    c(i32(1, -22)),
    c(b(True, False)),
    c(np.array([3.14159], np.float32), precision=2),
    c(i32(5), width=4, fill="0"),
    c(np.array([1.5], np.float64), scientific=True),
    c(s("a")),
])
op("string_split", [c(s("a b", "c  d e", "")), c(s("a,b,,c"), delimiter=","), c(s("a,b,,c"), delimiter=",", skip_empty=False)])
op("strings.split#sparse", [c(s("a b", "c  d e", "")), c(s("a,b,,c"), sep=",")],
   fn=lambda tf, x, sep=None: tf.strings.split(x, sep=sep, result_type="SparseTensor"))
op("strings.format", [c("x={} y={}", [X3, i32(7)]), c("{}", [s("a")]), c("{} {}", [X3])])
op("substr", [c(WORDS, 0, 2)])
op("strings.unicode_decode", [c(s("hé", "abc"), "UTF-8"), c(s("hé"), "UTF-8", errors="replace")],
   fn=lambda tf, x, enc, **k: tf.strings.unicode_decode(x, enc, **k).to_tensor())

# --- sparse ---------------------------------------------------------------------------------------------------


def _sp(tf, parts):
    idx, vals, shape = parts
    return tf.SparseTensor(np.array(idx, np.int64).reshape(-1, len(shape)), vals, np.array(shape, np.int64))


SP = ([[0, 1], [1, 0], [2, 2]], np.array([1.0, 2.0, 3.0], np.float32), [3, 3])
SP_UNORDERED = ([[2, 2], [0, 1], [1, 0]], np.array([3.0, 1.0, 2.0], np.float32), [3, 3])
SP_DUP = ([[0, 1], [0, 1]], np.array([1.0, 2.0], np.float32), [3, 3])
SP_OOB = ([[0, 1], [3, 0]], np.array([1.0, 2.0], np.float32), [3, 3])
SP_EMPTY = ([], np.zeros(0, np.float32), [2, 3])
SP_INT = ([[0], [2]], i32(5, -1), [4])

op("sparse.to_dense", [c(SP), c(SP, default_value=-1.0), c(SP_UNORDERED), c(SP_UNORDERED, validate_indices=False),
                       c(SP_DUP), c(SP_OOB), c(SP_EMPTY), c(SP_INT)],
   fn=lambda tf, sp, **k: tf.sparse.to_dense(_sp(tf, sp), **k))
op("sparse.reorder", [c(SP_UNORDERED), c(SP_EMPTY), c(SP_INT)], fn=lambda tf, sp: tf.sparse.reorder(_sp(tf, sp)))
op("sparse.reduce_sum", [c(SP), c(SP, axis=1), c(SP, axis=0, keepdims=True), c(SP_EMPTY, axis=-1), c(SP_INT),
                         c(SP, axis=2)],
   fn=lambda tf, sp, **k: tf.sparse.reduce_sum(_sp(tf, sp), **k))
op("sparse.reduce_max", [c(SP), c(SP, axis=1), c(SP_EMPTY, axis=0), c(SP_INT)],
   fn=lambda tf, sp, **k: tf.sparse.reduce_max(_sp(tf, sp), **k))
op("sparse.add", [c(SP, SP_UNORDERED), c(SP, SP_EMPTY), c(SP, ([[0, 1]], np.array([-1.0], np.float32), [3, 3]), 0.5),
                  c(SP, SP_INT)],
   fn=lambda tf, a, b2, *t: tf.sparse.add(_sp(tf, a), _sp(tf, b2), *t))
op("sparse.add#dense", [c(SP, f32(3, 3)), c(SP, f32(3, 2))],
   fn=lambda tf, a, d: tf.sparse.add(_sp(tf, a), d))
op("sparse.reshape", [c(SP, [9]), c(SP, [-1, 1]), c(SP, [4, 2]), c(SP_EMPTY, [3, -1])],
   fn=lambda tf, sp, shape: tf.sparse.reshape(_sp(tf, sp), shape))
op("sparse.transpose", [c(SP), c(SP, [1, 0]), c(SP_EMPTY)], fn=lambda tf, sp, *p: tf.sparse.transpose(_sp(tf, sp), *p))
op("sparse.slice", [c(SP, [0, 0], [2, 2]), c(SP, [1, 1], [5, 5]), c(SP_EMPTY, [0, 0], [1, 1])],
   fn=lambda tf, sp, start, size: tf.sparse.slice(_sp(tf, sp), start, size))
op("sparse.concat", [c(1, [SP, SP]), c(0, [SP, SP_INT]), c(0, [SP, SP_EMPTY]), c(-1, [SP, SP])],
   fn=lambda tf, axis, sps: tf.sparse.concat(axis, [_sp(tf, x) for x in sps]))
op("sparse.retain", [c(SP, b(True, False, True)), c(SP, b(True))],
   fn=lambda tf, sp, keep: tf.sparse.retain(_sp(tf, sp), keep))
op("sparse.fill_empty_rows", [c(SP_EMPTY, 0.0), c(([[1, 0]], np.array([5.0], np.float32), [3, 2]), -1.0),
                              c(SP, 1)],
   fn=lambda tf, sp, d: tf.sparse.fill_empty_rows(_sp(tf, sp), d))
op("sparse.sparse_dense_matmul", [c(SP, f32(3, 2)), c(SP, f32(3, 2), adjoint_a=True), c(SP, f32(2, 2)),
                                  c(SP_OOB, f32(3, 2))],
   fn=lambda tf, sp, d, **k: tf.sparse.sparse_dense_matmul(_sp(tf, sp), d, **k))
op("sparse.softmax", [c(SP), c(([[0, 0], [0, 2], [1, 1]], np.array([1.0, 3.0, 2.0], np.float32), [2, 3]))],
   fn=lambda tf, sp: tf.sparse.softmax(_sp(tf, sp)))
op("sparse.maximum", [c(SP, SP_UNORDERED), c(SP, ([[0, 0]], np.array([9.0], np.float32), [3, 3]))],
   fn=lambda tf, a, b2: tf.sparse.maximum(_sp(tf, a), _sp(tf, b2)))
op("sparse_to_dense", [
    c(i32(0, 2), [4], np.float32(1.5)),
    c(np.array([[0, 1], [1, 0]], np.int64), [2, 2], i64(3, 4), -1),
    c(i32(2, 0), [4], np.float32(1.0)),
    c(i32(2, 0), [4], np.float32(1.0), validate_indices=False),
    c(i32(1, 1), [4], np.float32(1.0)),
    c(i32(5), [4], np.float32(1.0)),
])
op("sparse.eye", [c(3), c(2, 3)])
op("sparse.from_dense", [c(np.array([[0.0, 1.0], [2.0, 0.0]], np.float32)), c(i32(0, 3, 0)), c(E03),
                         c(s("", "a"))])
op("sparse.split", [c(SP, 3, 0), c(SP, 2, 1)],
   fn=lambda tf, sp, n, axis: tf.sparse.split(sp_input=_sp(tf, sp), num_split=n, axis=axis))
op("sparse.sparse_dense_cwise", [c(SP, f32(3, 3)), c(SP, X3)],
   fn=lambda tf, sp, d: _sp(tf, sp) * d)

# --- images ---------------------------------------------------------------------------------------------------

RGB = R.random_sample((2, 4, 5, 3)).astype(np.float32)
RGB1 = RGB[0]
RGB_U8 = (RGB * 255).astype(np.uint8)
for _name in ["image.flip_left_right", "image.flip_up_down", "image.transpose_image", "image.rot90",
              "image.rgb_to_grayscale", "image.per_image_standardization", "image.rgb_to_hsv",
              "image.hsv_to_rgb", "image.total_variation", "image.rgb_to_yiq", "image.rgb_to_yuv",
              "image.image_gradients", "image.sobel_edges"]:
    op(_name, [c(RGB), c(RGB1), c(RGB_U8), c(Hide(RGB)), c(f32(4, 5)), c(np.zeros((1, 0, 2, 3), np.float32))])
op("image.rot90#k", [c(RGB1, 2), c(RGB, -1), c(RGB, np.array(3, np.int32))], fn=lambda tf, x, k: tf.image.rot90(x, k))
op("image.resize_images", [
    c(RGB, [8, 10]),
    c(RGB, [3, 2]),
    c(RGB, [8, 10], method=1),
    c(RGB, [3, 7], method=1, align_corners=True),
    c(RGB, [6, 6], method=2),
    c(RGB, [6, 6], method=3),
    c(RGB1, [2, 2]),
    c(RGB_U8, [3, 3]),
    c(RGB_U8, [3, 3], method=1),
    c(RGB, [8, 10], preserve_aspect_ratio=True),
    c(Hide(RGB), [3, 3]),
    c(RGB, [0, 3]),
    c(RGB, [3]),
])
op("image.resize_bilinear", [c(RGB, [7, 3]), c(RGB, [7, 3], align_corners=True), c(RGB, [7, 3], half_pixel_centers=True)])
op("image.resize_nearest_neighbor", [c(RGB, [7, 3]), c(RGB, [7, 3], align_corners=True),
                                     c(RGB, [7, 3], half_pixel_centers=True)])
op("image.resize_bicubic", [c(RGB, [7, 3]), c(RGB, [7, 3], half_pixel_centers=True)])
op("image.resize_area", [c(RGB, [2, 3]), c(RGB, [7, 3])])
op("image.adjust_brightness", [c(RGB, 0.2), c(RGB_U8, 0.2), c(RGB, -1.0)])
op("image.adjust_contrast", [c(RGB, 1.5), c(RGB_U8, 0.5), c(RGB1, 0.0)])
op("image.adjust_saturation", [c(RGB, 1.5), c(RGB_U8, 0.5), c(f32(2, 2, 2), 1.0)])
op("image.adjust_hue", [c(RGB, 0.2), c(RGB, -0.4), c(RGB_U8, 0.1)])
op("image.adjust_gamma", [c(RGB, 2.0), c(RGB, 0.5, 2.0), c(RGB_U8, 1.0), c(RGB, -1.0)])
op("image.convert_image_dtype", [
    c(RGB, "uint8"),
    c(RGB_U8, "float32"),
    c(RGB_U8, "int32"),
    c(np.array([-0.5, 1.5], np.float32), "uint8", saturate=True),
    c(RGB, "float64"),
    c(np.array([1, 2], np.int32), "uint8"),
    c(np.array([1, 70000], np.int32), "uint16"),
], fn=lambda tf, x, dtype, **k: tf.image.convert_image_dtype(x, getattr(tf, dtype), **k))
op("image.central_crop", [c(RGB, 0.5), c(RGB1, 1.0), c(RGB1, 0.3), c(RGB, 0.0), c(RGB, 1.5)])
op("image.crop_to_bounding_box", [c(RGB, 1, 1, 2, 3), c(RGB1, 0, 0, 4, 5), c(RGB, 3, 3, 2, 3), c(Hide(RGB), 0, 1, 2, 2)])
op("image.pad_to_bounding_box", [c(RGB, 1, 2, 6, 8), c(RGB1, 0, 0, 4, 5), c(RGB, 1, 1, 4, 5)])
op("image.resize_image_with_crop_or_pad", [c(RGB, 6, 3), c(RGB1, 2, 8), c(RGB, 4, 5)])
op("image.resize_image_with_pad", [c(RGB, 6, 3), c(RGB1, 8, 8)])
op("image.extract_image_patches", [
    c(f32(1, 5, 5, 2), [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    c(f32(1, 5, 5, 2), [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
    c(f32(1, 5, 5, 2), [1, 2, 2, 1], [1, 1, 1, 1], [1, 2, 2, 1], "VALID"),
])
op("image.psnr", [c(RGB, RGB * 0.9, 1.0), c(RGB_U8, RGB_U8, 255)])
# Correlated images: SSIM of independent noise is a small difference of large sums, whose float32 rounding
# depends on the order of the filter's sums.
SSIM_A = R.random_sample((1, 16, 16, 1)).astype(np.float32)
SSIM_B = (SSIM_A * 0.8 + 0.1 + 0.05 * R.random_sample((1, 16, 16, 1))).astype(np.float32)
op("image.ssim", [c(SSIM_A, SSIM_B, 1.0), c(SSIM_A[..., 0], SSIM_B[..., 0], 1.0)])
op("image.non_max_suppression", [
    c(np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3], [0, 10, 1, 11]], np.float32),
      np.array([0.9, 0.8, 0.7, 0.95], np.float32), 3),
    c(np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1]], np.float32), np.array([0.9, 0.8], np.float32), 3, iou_threshold=0.95),
    c(np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1]], np.float32), np.array([0.9, 0.8], np.float32), 2,
      score_threshold=0.85),
    c(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), 2),
])
op("image.crop_and_resize", [
    c(RGB, np.array([[0, 0, 1, 1], [0.2, 0.1, 0.7, 0.9]], np.float32), i32(0, 1), [3, 3]),
    c(RGB, np.array([[0.5, 0.5, 0.0, 0.0]], np.float32), i32(1), [2, 2], method="nearest"),
    c(RGB, np.array([[0, 0, 1, 1]], np.float32), i32(2), [2, 2]),
    c(RGB, np.array([[-1, -1, 2, 2]], np.float32), i32(0), [3, 3], extrapolation_value=0.5),
])
op("image.draw_bounding_boxes", [c(RGB, np.array([[[0.1, 0.1, 0.6, 0.6]], [[0, 0, 1, 1]]], np.float32))])
