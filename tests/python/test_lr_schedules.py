"""tf.train learning-rate schedules against values recorded by real TensorFlow (graph mode).

Fixtures: tests/fixtures/golden/lr_schedules (copied from the team's TensorFlow-made golden data, its README section b). Every case,
keyword argument, step and dtype is read from the manifest; only the expected TF behaviours that the
golden README and specs/optimizers.md (section 4) describe in words are written here.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "lr_schedules"
API = Path(__file__).resolve().parents[1] / "fixtures" / "api" / "tf_compat_v1_api.json"
RTOL = {"float32": 1e-6, "float64": 1e-12}

SCHEDULE_NAMES = [
    "exponential_decay", "inverse_time_decay", "natural_exp_decay", "piecewise_constant",
    "piecewise_constant_decay", "polynomial_decay", "cosine_decay", "cosine_decay_restarts",
    "linear_cosine_decay", "noisy_linear_cosine_decay",
]


def _manifest():
    meta = json.loads((GOLDEN / "lr_schedules.json").read_text())
    with np.load(GOLDEN / "lr_schedules.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


META, ARRAYS = _manifest()
RECORDED = [c for c in META["cases"] if not c.get("random")]
RANDOM = [c for c in META["cases"] if c.get("random")]


def _schedule(api):
    return getattr(tf.train, api.rsplit(".", 1)[-1])


def _kwargs(case):
    """The manifest kwargs as Python values; ``{"<dtype>": x}`` means ``tf.constant(x, <dtype>)``."""
    out = {}
    for k, v in case["kwargs"].items():
        if isinstance(v, dict):
            ((dtype, value),) = v.items()
            v = tf.constant(value, dtype=tf.as_dtype(dtype))
        out[k] = v
    return out


def _build(case, step):
    fn = _schedule(case["api"])
    kwargs = _kwargs(case)
    if fn is tf.train.piecewise_constant:
        return fn(step, **kwargs)
    return fn(global_step=step, **kwargs)


def _evaluate(case, steps):
    with tf.Graph().as_default():
        gs = tf.placeholder(tf.as_dtype(META["global_step_placeholder_dtype"]), [])
        lr = _build(case, gs)
        with tf.Session() as sess:
            return lr, [sess.run(lr, {gs: s}) for s in steps]


def _steps():
    steps = ARRAYS.get("global_steps", np.asarray(META["global_steps"]))
    assert list(steps) == list(META["global_steps"])
    return steps


def _cosine_argument_slack(case):
    """Absolute slack for one float32 ulp of the cosine argument (0 for other schedules).

    TensorFlow's own graph-mode value is only defined to that precision: Grappler rewrites
    ``pi * (c * fl(1/ds))`` into ``c * fl(pi * fl(1/ds))`` unless ``c * fl(1/ds)`` has another consumer,
    which depends on the rest of the graph. ferroflow builds the standalone form (specs/optimizers.md,
    section 4); the golden files were made with all schedules fetched together from one graph, where common
    subexpression elimination can block the rewrite (checked with TensorFlow 2.21: the two forms differ by
    one ulp of the argument, which near the end of the decay is up to ~3e-6 relative).
    """
    fn = _schedule(case["api"])
    if fn not in (tf.train.cosine_decay, tf.train.linear_cosine_decay):
        return 0.0
    defaults = {k: p.default for k, p in inspect.signature(fn).parameters.items()}
    kw = {**defaults, **case["kwargs"]}
    lr = abs(float(kw["learning_rate"]))
    if fn is tf.train.cosine_decay:
        max_arg, max_slope = math.pi, 0.5 * abs(1 - kw["alpha"])
    else:
        max_arg, max_slope = 2 * math.pi * abs(kw["num_periods"]), 0.5 * (1 + abs(kw["alpha"]))
    return lr * max_slope * float(np.spacing(np.float32(max(max_arg, math.pi))))


@pytest.mark.parametrize("case", RECORDED, ids=[c["case"] for c in RECORDED])
def test_schedule_matches_tensorflow(case):
    steps = _steps()
    want = ARRAYS[case["npz_key"]]
    assert want.dtype == np.dtype(case["output_dtype"])
    lr, got = _evaluate(case, steps)
    assert lr.dtype == tf.as_dtype(case["output_dtype"])
    assert lr.shape.ndims == 0
    got = np.asarray(got)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=RTOL[case["output_dtype"]], atol=_cosine_argument_slack(case),
                               err_msg=case["case"])


@pytest.mark.parametrize("case", RANDOM, ids=[c["case"] for c in RANDOM])
def test_noisy_schedule_dtype_and_shape(case):
    m = re.search(r"Output shape per step: (\[[0-9, ]*\])", case.get("note", ""))
    shape = tuple(json.loads(m.group(1))) if m else ()
    lr, got = _evaluate(case, _steps())
    assert lr.dtype == tf.as_dtype(case["output_dtype"])
    for v in got:
        assert np.asarray(v).dtype == np.dtype(case["output_dtype"])
        assert np.shape(v) == shape
        assert np.all(np.isfinite(v))


def _noisy_samples(kwargs, step, n):
    with tf.Graph().as_default():
        gs = tf.placeholder(tf.int64, [])
        lr = tf.train.noisy_linear_cosine_decay(global_step=gs, **kwargs)
        with tf.Session() as sess:
            return np.array([sess.run(lr, {gs: step}) for _ in range(n)], np.float64)


@pytest.mark.parametrize("case", RANDOM, ids=[c["case"] for c in RANDOM])
def test_noisy_schedule_statistics(case):
    """Mean and spread of the noise follow lr*((alpha + lin + N(0, std))*cos_part + beta)."""
    kwargs = _kwargs(case)
    params = inspect.signature(tf.train.noisy_linear_cosine_decay).parameters
    p = {k: kwargs.get(k, params[k].default) for k in params if k not in ("global_step", "name")}
    lr0, ds = float(p["learning_rate"]), float(p["decay_steps"])
    n = 4000
    for step in (0, int(ds // 2)):
        c = min(step, ds)
        lin = (ds - c) / ds
        cos_part = 0.5 * (1 + math.cos(math.pi * 2 * p["num_periods"] * c / ds))
        std = math.sqrt(p["initial_variance"] / (1 + c) ** p["variance_decay"])
        mean = lr0 * ((p["alpha"] + lin) * cos_part + p["beta"])
        spread = abs(lr0 * cos_part * std)
        samples = _noisy_samples(kwargs, step, n)
        assert len(np.unique(samples)) > n // 2, "fresh noise on every evaluation"
        assert abs(samples.mean() - mean) < 5 * spread / math.sqrt(n) + 1e-7
        assert abs(samples.std() - spread) < 0.1 * spread + 1e-7


def test_noisy_schedule_without_variance_is_linear_cosine():
    with tf.Graph().as_default():
        gs = tf.placeholder(tf.int64, [])
        noisy = tf.train.noisy_linear_cosine_decay(0.1, gs, 20, initial_variance=0.0, num_periods=1.5, alpha=0.1,
                                                   beta=0.01)
        plain = tf.train.linear_cosine_decay(0.1, gs, 20, num_periods=1.5, alpha=0.1, beta=0.01)
        with tf.Session() as sess:
            for s in range(0, 30):
                a, b = sess.run([noisy, plain], {gs: s})
                assert a == b


def test_api_arguments_and_defaults_match_tensorflow():
    entries = json.loads(API.read_text())["modules"]["train"]
    for name in SCHEDULE_NAMES:
        entry = entries[name]
        params = inspect.signature(getattr(tf.train, name)).parameters
        assert list(params) == entry["args"], name
        defaults = {k: repr(p.default) for k, p in params.items() if p.default is not inspect.Parameter.empty}
        assert defaults == entry["defaults"], name
        assert name in tf.train.__dict__ and hasattr(tf.compat.v1.train, name)


def _run_at(build, steps, dtype=tf.int64, initialize=False):
    with tf.Graph().as_default():
        gs = tf.placeholder(dtype, [])
        lr = build(gs)
        with tf.Session() as sess:
            if initialize:
                sess.run(tf.global_variables_initializer())
            return lr, [sess.run(lr, {gs: s}) for s in steps]


def test_python_float_learning_rate_gives_float32_and_float64_tensor_gives_float64():
    lr, vals = _run_at(lambda gs: tf.train.exponential_decay(0.1, gs, 5, 0.5), [3])
    assert lr.dtype == tf.float32 and vals[0].dtype == np.float32
    # Python hyper-parameters become float32 first, then are cast: decay_rate = float64(float32(0.3)).
    lr, vals = _run_at(lambda gs: tf.train.exponential_decay(tf.constant(0.1, tf.float64), gs, 7, 0.3), [3])
    assert lr.dtype == tf.float64
    expected = 0.1 * np.float64(np.float32(0.3)) ** (3 * (1.0 / 7.0))
    assert vals[0] == pytest.approx(expected, rel=1e-15)
    assert vals[0] != pytest.approx(0.1 * 0.3 ** (3 / 7), rel=1e-12)


@pytest.mark.parametrize("fn", ["exponential_decay", "inverse_time_decay", "natural_exp_decay"])
def test_float64_learning_rate_works_for_exp_family(fn):
    lr, vals = _run_at(lambda gs: getattr(tf.train, fn)(tf.constant(0.1, tf.float64), gs, 5, 0.5), [0, 7])
    assert lr.dtype == tf.float64 and vals[0] == 0.1


def test_float64_learning_rate_works_for_piecewise_and_polynomial_without_cycle():
    lr, vals = _run_at(lambda gs: tf.train.polynomial_decay(tf.constant(0.1, tf.float64), gs, 10), [0, 5, 20])
    assert lr.dtype == tf.float64
    assert vals[2] == pytest.approx(np.float64(np.float32(0.0001)), rel=1e-15)
    lr, vals = _run_at(lambda gs: tf.train.piecewise_constant(
        gs, [3], [tf.constant(1.0, tf.float64), tf.constant(0.5, tf.float64)]), [3, 4])
    assert lr.dtype == tf.float64 and vals == [1.0, 0.5]


@pytest.mark.parametrize("build", [
    lambda lr, gs: tf.train.polynomial_decay(lr, gs, 10, cycle=True),
    lambda lr, gs: tf.train.cosine_decay(lr, gs, 10),
    lambda lr, gs: tf.train.cosine_decay_restarts(lr, gs, 10),
    lambda lr, gs: tf.train.linear_cosine_decay(lr, gs, 10),
], ids=["polynomial_cycle", "cosine", "cosine_restarts", "linear_cosine"])
def test_float64_learning_rate_is_a_type_error_where_tensorflow_mixes_float32_constants(build):
    gs = tf.placeholder(tf.int64, [])
    with pytest.raises(TypeError):
        build(tf.constant(0.1, tf.float64), gs)


def test_float64_learning_rate_is_a_value_error_for_noisy_linear_cosine():
    gs = tf.placeholder(tf.int64, [])
    with pytest.raises(ValueError):
        tf.train.noisy_linear_cosine_decay(tf.constant(0.1, tf.float64), gs, 10)


@pytest.mark.parametrize("fn", [f for f in SCHEDULE_NAMES if not f.startswith("piecewise")])
def test_global_step_none_is_a_value_error(fn):
    params = inspect.signature(getattr(tf.train, fn)).parameters
    kwargs = {k: 10.0 for k, p in params.items() if p.default is inspect.Parameter.empty}
    kwargs.update(learning_rate=0.1, global_step=None)
    with pytest.raises(ValueError, match="None values not supported"):
        getattr(tf.train, fn)(**kwargs)


def test_piecewise_constant_boundaries_are_inclusive_on_the_right():
    _, vals = _run_at(lambda x: tf.train.piecewise_constant(x, [2, 4], [1.0, 0.5, 0.25]), range(7))
    assert vals == [1.0, 1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    # float x with float boundaries, and int32 boundaries promoted for an int64 x (above).
    _, vals = _run_at(lambda x: tf.train.piecewise_constant(x, [0.5], [3, 7]), [0.5, 0.6], tf.float32)
    assert vals == [3, 7]
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant


def test_piecewise_constant_errors():
    x = tf.placeholder(tf.int64, [])
    with pytest.raises(ValueError, match="1 less than the length of values"):
        tf.train.piecewise_constant(x, [1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="must have the same dtype as x"):
        tf.train.piecewise_constant(x, [1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="Values must have elements all with the same dtype"):
        tf.train.piecewise_constant(x, [1], [1.0, 2])


def test_polynomial_cycle_uses_graph_mode_reciprocal():
    """TF1 graph mode computes ceil(step * fl(1/decay_steps)); 21 * fl(1/7) rounds up to 3.0000002, so the
    multiplier at step 21 is 4, not 3 (specs/optimizers.md section 4)."""
    _, vals = _run_at(lambda gs: tf.train.polynomial_decay(0.1, gs, 7, end_learning_rate=0.01, power=2.0,
                                                           cycle=True), [0, 21])
    f32 = np.float32
    expected = (f32(0.1) - f32(0.01)) * (f32(1) - f32(21) / f32(28)) ** f32(2) + f32(0.01)
    assert vals[0] == f32(0.1)
    assert vals[1] == pytest.approx(expected, rel=1e-6)
    assert vals[1] != pytest.approx(0.01, rel=1e-3)


def test_schedules_accept_global_step_variable():
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        lr = tf.train.exponential_decay(0.1, gs, 5, 0.5, staircase=True)
        inc = tf.assign_add(gs, 5)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(lr) == np.float32(0.1)
            sess.run(inc)
            assert sess.run(lr) == np.float32(0.05)


def _restarts_reference(lr, steps, fds, t_mul, m_mul, alpha):
    """SGDR in float64: the restart index i and the fraction of the current period."""
    out = []
    for s in steps:
        f = s / fds
        if t_mul == 1.0:
            i = math.floor(f)
            frac = f - i
        else:
            i = math.floor(math.log(1 - f * (1 - t_mul)) / math.log(t_mul))
            frac = (f - (1 - t_mul ** i) / (1 - t_mul)) / t_mul ** i
        out.append(lr * ((1 - alpha) * 0.5 * m_mul ** i * (1 + math.cos(math.pi * frac)) + alpha))
    return np.array(out)


@pytest.mark.parametrize("t_mul", [1.0, 2.0])
def test_cosine_decay_restarts_periods(t_mul):
    steps = list(range(0, 40))
    _, vals = _run_at(lambda gs: tf.train.cosine_decay_restarts(0.1, gs, 6, t_mul=t_mul, m_mul=0.5, alpha=0.05), steps)
    np.testing.assert_allclose(vals, _restarts_reference(0.1, steps, 6, t_mul, 0.5, 0.05), rtol=1e-5, atol=1e-8)
    # t_mul given as a tensor (TensorFlow picks the branch at run time) gives the same values
    _, tensor_vals = _run_at(lambda gs: tf.train.cosine_decay_restarts(
        0.1, gs, 6, t_mul=tf.Variable(t_mul), m_mul=0.5, alpha=0.05), steps, initialize=True)
    np.testing.assert_allclose(tensor_vals, vals, rtol=1e-6)


def test_tensor_hyper_parameters():
    """Variables as hyper-parameters (no constant folding in TensorFlow either): the plain formulas."""
    steps = list(range(0, 30, 3))
    with tf.Graph().as_default():
        gs = tf.placeholder(tf.int64, [])
        ds, rate = tf.Variable(7), tf.Variable(0.3)
        exp = tf.train.exponential_decay(0.1, gs, ds, rate)
        poly = tf.train.polynomial_decay(tf.Variable(0.1), gs, ds, end_learning_rate=0.01, power=2.0)
        lin = tf.train.linear_cosine_decay(0.1, gs, ds, num_periods=tf.Variable(1.5), alpha=0.1, beta=0.01)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = np.array([sess.run([exp, poly, lin], {gs: s}) for s in steps])
    s = np.array(steps, np.float64)
    c = np.minimum(s, 7)
    np.testing.assert_allclose(got[:, 0], 0.1 * 0.3 ** (s / 7), rtol=1e-6)
    np.testing.assert_allclose(got[:, 1], 0.09 * (1 - c / 7) ** 2 + 0.01, rtol=1e-6)
    lin_ref = 0.1 * ((0.1 + (7 - c) / 7) * 0.5 * (1 + np.cos(np.pi * 3.0 * c / 7)) + 0.01)
    np.testing.assert_allclose(got[:, 2], lin_ref, rtol=1e-5, atol=1e-8)
