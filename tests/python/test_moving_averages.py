"""tf.train.ExponentialMovingAverage and assign_moving_average against real TensorFlow.

Fixtures: tests/fixtures/golden/ema (copied from the team's TensorFlow-made golden data, its README section d). Every variable, tensor,
dtype, shape, hyper-parameter, name and apply count is read from the manifests; the replay follows the
README's procedure. Other tests check TF1 semantics from specs/optimizers.md section 6.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.training.moving_averages import assign_moving_average

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "ema"
API = Path(__file__).resolve().parents[1] / "fixtures" / "api" / "tf_compat_v1_api.json"
CASES = sorted(p.stem for p in GOLDEN.glob("*.json"))
# README: float32 rtol 1e-5 / atol 1e-6 per step, float64 rtol 1e-10.
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12),
       "float16": dict(rtol=5e-2, atol=1e-3)}


def _load(case):
    meta = json.loads((GOLDEN / f"{case}.json").read_text())
    with np.load(GOLDEN / f"{case}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


def _constructor_kwargs(meta):
    """The manifest kwargs; a described num_updates is a fed int64 placeholder, a '(default)' name is omitted."""
    kw = dict(meta["constructor_kwargs"])
    if isinstance(kw.get("name"), str) and "(default)" in kw["name"]:
        del kw["name"]
    num_updates = kw.get("num_updates")
    fed = None
    if isinstance(num_updates, str):
        assert "placeholder" in num_updates, num_updates
        fed = tf.placeholder(tf.int64, [], name="num_updates_input")
        kw["num_updates"] = fed
    return kw, fed


class _Replay:
    """The README's graph: variables from ``init.var<i>``, tensors as tf.identity of placeholders, one EMA."""

    def __init__(self, meta, arrays):
        self.meta, self.arrays = meta, arrays
        by_name = {g["tf_name"]: g for g in meta["global_variables_in_creation_order"]}
        self.variables, self.tensors, self.objects = {}, {}, []
        for obj in meta["averaged_objects"]:
            if obj["is_variable"]:
                spec = by_name[obj["tf_name"]]
                init = arrays[f"init.{obj['key']}"].astype(spec["dtype"])
                v = tf.Variable(init, name=obj["tf_name"], trainable=spec["trainable"])
                self.variables[obj["key"]] = v
        for obj in meta["averaged_objects"]:
            if obj["is_variable"]:
                self.objects.append(self.variables[obj["key"]])
            else:
                sample = arrays[f"apply1.input.{obj['key']}"]
                ph = tf.placeholder(tf.as_dtype(sample.dtype.name), sample.shape, name=obj["tf_name"] + "_input")
                self.tensors[obj["key"]] = ph
                self.objects.append(tf.identity(ph, name=obj["tf_name"]))
        kwargs, self.num_updates = _constructor_kwargs(meta)
        self.ema = tf.train.ExponentialMovingAverage(**kwargs)
        self.update = self.ema.apply(self.objects)
        self.new_values = {k: tf.placeholder(v.dtype, v.shape) for k, v in self.variables.items()}
        self.assigns = {k: tf.assign(self.variables[k], ph) for k, ph in self.new_values.items()}

    def run_apply(self, sess, k):
        for key, ph in self.new_values.items():
            sess.run(self.assigns[key], {ph: self.arrays[f"apply{k}.input.{key}"]})
        feed = {ph: self.arrays[f"apply{k}.input.{key}"] for key, ph in self.tensors.items()}
        if self.num_updates is not None:
            feed[self.num_updates] = self.arrays[f"apply{k}.num_updates"]
        sess.run(self.update, feed)


@pytest.mark.parametrize("case", CASES)
def test_ema_values_match_tensorflow(case):
    meta, arrays = _load(case)
    replay = _Replay(meta, arrays)
    specs = meta["global_variables_in_creation_order"]
    gvars = tf.global_variables()
    assert [v.op.name for v in gvars] == [s["tf_name"] for s in specs]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for k in range(meta["applies"] + 1):
            if k:
                replay.run_apply(sess, k)
            for spec, got in zip(specs, sess.run(gvars)):
                want = arrays[f"apply{k}.{spec['npz_key_suffix']}"]
                assert got.dtype == want.dtype and got.shape == want.shape, spec["tf_name"]
                np.testing.assert_allclose(got, want, **TOL[spec["dtype"]], err_msg=f"apply{k} {spec['tf_name']}")


@pytest.mark.parametrize("case", CASES)
def test_ema_names_collections_and_restore_map(case):
    meta, arrays = _load(case)
    replay = _Replay(meta, arrays)
    ema = replay.ema
    for obj, x in zip(meta["averaged_objects"], replay.objects):
        assert ema.average_name(x) == obj["average_name"]
        assert ema.average(x).op.name == obj["average_variable"]
        assert not ema.average(x).trainable
    for spec, v in zip(meta["global_variables_in_creation_order"], tf.global_variables()):
        assert v.op.name == spec["tf_name"]
        assert v.dtype.base_dtype == tf.as_dtype(spec["dtype"])
        assert v.shape.as_list() == spec["shape"]
        assert v.trainable == spec["trainable"]
        assert (v in tf.trainable_variables()) == spec["trainable"]
    restore = {name: v.op.name for name, v in ema.variables_to_restore().items()}
    assert restore == meta["variables_to_restore"]
    averaged_vars = [x for o, x in zip(meta["averaged_objects"], replay.objects) if o["is_variable"]]
    assert tf.moving_average_variables() == averaged_vars


def test_api_arguments_and_defaults_match_tensorflow():
    entry = json.loads(API.read_text())["modules"]["train"]["ExponentialMovingAverage"]
    params = inspect.signature(tf.train.ExponentialMovingAverage.__init__).parameters
    assert [p for p in params if p != "self"] == entry["args"]
    defaults = {k: repr(p.default) for k, p in params.items() if p.default is not inspect.Parameter.empty}
    assert defaults == entry["defaults"]
    for member in entry["members"]:
        assert hasattr(tf.train.ExponentialMovingAverage(0.9), member)
    params = list(inspect.signature(assign_moving_average).parameters.items())
    assert [k for k, _ in params] == ["variable", "value", "decay", "zero_debias", "name"]
    assert params[3][1].default is True


def _ema_numpy(values, decay, dtype, num_updates=None):
    """The TF1 update in numpy: float32 decay, float32 ``1 - decay`` cast to the average's dtype."""
    d = np.float32(decay)
    shadow = values[0].astype(dtype)
    out = []
    for i, x in enumerate(values[1:]):
        di = d
        if num_updates is not None:
            n = np.float32(num_updates[i])
            di = min(d, (np.float32(1) + n) / (np.float32(10) + n))
        k = dtype(np.float32(1) - np.float32(di))
        shadow = shadow - (shadow - x.astype(dtype)) * k
        out.append(shadow)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float64_average_uses_float32_one_minus_decay(dtype):
    rng = np.random.default_rng(7)
    values = [rng.standard_normal(4).astype(dtype) for _ in range(4)]
    v = tf.Variable(values[0], name="w")
    ema = tf.train.ExponentialMovingAverage(0.999)
    op = ema.apply([v])
    ph = tf.placeholder(v.dtype, [4])
    assign = tf.assign(v, ph)
    expected = _ema_numpy(values, 0.999, dtype)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for x, want in zip(values[1:], expected):
            sess.run(assign, {ph: x})
            sess.run(op)
            got = sess.run(ema.average(v))
            np.testing.assert_allclose(got, want, rtol=1e-15 if dtype == np.float64 else 1e-6)
    if dtype == np.float64:
        naive = values[0] - (values[0] - values[1]) * (1 - 0.999)
        assert not np.allclose(expected[0], naive, rtol=1e-13, atol=0)


def test_num_updates_caps_the_decay():
    v = tf.Variable(np.zeros(2, np.float32), name="v")
    n = tf.placeholder(tf.int32, [])
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=n)
    op = ema.apply([v])
    values = [np.zeros(2, np.float32)] + [np.full(2, i + 1.0, np.float32) for i in range(3)]
    ph = tf.placeholder(tf.float32, [2])
    assign = tf.assign(v, ph)
    counts = [0, 5, 100000]
    expected = _ema_numpy(values, 0.99, np.float32, num_updates=counts)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for x, c, want in zip(values[1:], counts, expected):
            sess.run(assign, {ph: x})
            sess.run(op, {n: c})
            np.testing.assert_allclose(sess.run(ema.average(v)), want, rtol=1e-6)


def test_shadow_starts_at_initial_value_and_is_not_trainable():
    v = tf.Variable([1.0, 2.0], name="v")
    t = tf.identity(tf.constant([5.0, 6.0]), name="t")
    ema = tf.train.ExponentialMovingAverage(0.5, name="Avg")
    op = ema.apply([v, t])
    assert op.name == "Avg"
    sv, st = ema.average(v), ema.average(t)
    assert sv.op.name == "v/Avg" and st.op.name == "t/Avg"
    assert sv in tf.global_variables() and sv not in tf.trainable_variables()
    assert tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES) == [v]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(sv).tolist() == [1.0, 2.0]
        assert sess.run(st).tolist() == [0.0, 0.0]
        sess.run(op)
        assert sess.run(st).tolist() == [2.5, 3.0]


def test_apply_again_reuses_shadow_and_default_is_trainable_variables():
    a = tf.Variable(1.0, name="a")
    tf.Variable(2.0, name="b", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.9)
    ema.apply()
    shadow = ema.average(a)
    ema.apply([a])
    assert ema.average(a) is shadow
    assert [v.op.name for v in tf.global_variables()] == ["a", "b", "a/ExponentialMovingAverage"]
    # a second EMA with the same name gets a uniquified shadow
    ema2 = tf.train.ExponentialMovingAverage(0.5)
    assert ema2.average_name(a) == "a/ExponentialMovingAverage_1"
    ema2.apply([a])
    assert ema2.average(a).op.name == "a/ExponentialMovingAverage_1"


def test_zero_debias_is_ignored_for_variables():
    rng = np.random.default_rng(3)
    values = [rng.standard_normal(3).astype(np.float32) for _ in range(3)]
    v = tf.Variable(values[0], name="v")
    ema = tf.train.ExponentialMovingAverage(0.8, zero_debias=True)
    op = ema.apply([v])
    assert [x.op.name for x in tf.global_variables()] == ["v", "v/ExponentialMovingAverage"]
    ph = tf.placeholder(tf.float32, [3])
    assign = tf.assign(v, ph)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for x, want in zip(values[1:], _ema_numpy(values, 0.8, np.float32)):
            sess.run(assign, {ph: x})
            sess.run(op)
            np.testing.assert_allclose(sess.run(ema.average(v)), want, rtol=1e-6)


def test_zero_debias_for_tensors():
    ph = tf.placeholder(tf.float32, [2])
    loss = tf.identity(ph, name="loss")
    ema = tf.train.ExponentialMovingAverage(0.9, zero_debias=True)
    op = ema.apply([loss])
    names = [v.op.name for v in tf.global_variables()]
    assert names == ["loss/ExponentialMovingAverage", "loss/ExponentialMovingAverage/biased",
                     "loss/ExponentialMovingAverage/local_step"]
    assert all(not v.trainable for v in tf.global_variables())
    xs = [np.array([1.0, -2.0], np.float32), np.array([3.0, 0.5], np.float32)]
    k = np.float32(1) - np.float32(0.9)
    biased = np.zeros(2, np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step, x in enumerate(xs, start=1):
            sess.run(op, {ph: x})
            biased = biased - (biased - x) * k
            want = biased / (np.float32(1) - (np.float32(1) - k) ** np.float32(step))
            np.testing.assert_allclose(sess.run(ema.average(loss)), want, rtol=1e-6)
        assert sess.run(tf.global_variables()[2]) == len(xs)


def test_assign_moving_average_standalone():
    v = tf.Variable([1.0, 2.0], name="avg", trainable=False)
    x = tf.placeholder(tf.float32, [2])
    plain = assign_moving_average(v, x, 0.75, zero_debias=False)
    debiased = assign_moving_average(v, x, 0.75)  # zero_debias defaults to True
    assert [u.op.name for u in tf.global_variables()] == ["avg", "avg/biased", "avg/local_step"]
    assert plain.op.name == "AssignMovingAvg" and debiased.op.name == "AssignMovingAvg_1"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(plain, {x: [3.0, 2.0]})
        np.testing.assert_allclose(got, [1.0 - (1.0 - 3.0) * 0.25, 2.0], rtol=1e-6)
        got = sess.run(debiased, {x: [4.0, -4.0]})
        np.testing.assert_allclose(got, [4.0, -4.0], rtol=1e-6)


def test_non_float_variables_are_rejected():
    v = tf.Variable([1, 2], name="ints")
    with pytest.raises(TypeError, match="must be half, float, or double: ints"):
        tf.train.ExponentialMovingAverage(0.9).apply([v])


def test_average_name_and_variables_to_restore_without_apply():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b", trainable=False)
    c = tf.Variable(3.0, name="c")
    ema = tf.train.ExponentialMovingAverage(0.9)
    assert ema.average_name(a) == "a/ExponentialMovingAverage"
    assert ema.average(a) is None
    ema.apply([a])
    restore = ema.variables_to_restore()
    assert restore == {"a/ExponentialMovingAverage": a, "c/ExponentialMovingAverage": c, "b": b}
    assert ema.variables_to_restore([b]) == {"b/ExponentialMovingAverage": b, "a": a, "c": c,
                                             "a/ExponentialMovingAverage": ema.average(a)}
