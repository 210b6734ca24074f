"""Outputs sized by user input never abort the process (issue 23).

``sess.run(tf.zeros([100000, 100000, 100000]))`` used to abort Python with "memory allocation of ...
failed"; ``tf.fill([2**31, 2**31], 1.0)``, ``tf.range(0, 2**62)`` and ``tf.tile`` to 2**62 elements
panicked (InternalError); ``tf.random_normal([2**40])`` ran for minutes. TensorFlow 2.21 raises
``ResourceExhaustedError`` ("OOM when allocating tensor with shape[...] and type float ...") for each,
and ``InvalidArgumentError`` / ``ValueError`` for a negative dimension. Every case runs in a child
process, so an abort fails the test instead of killing pytest.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import textwrap

import pytest

# Each family: a snippet building ``out`` from ``dims`` (a list of ints, fed through ``shape_ph`` where
# the family says so, so the runtime kernel, not shape inference, sees it).
FAMILIES = {
    "zeros": "out = tf.zeros(dims)",
    "ones_fed": "out = tf.ones(shape_ph); feed = {shape_ph: dims}",
    "fill": "out = tf.fill(dims, 1.0)",
    "fill_fed": "out = tf.fill(shape_ph, 1.0); feed = {shape_ph: dims}",
    "random_normal": "out = tf.random_normal(shape_ph); feed = {shape_ph: dims}",
    "random_uniform": "out = tf.random_uniform(shape_ph); feed = {shape_ph: dims}",
    "truncated_normal": "out = tf.truncated_normal(shape_ph); feed = {shape_ph: dims}",
    "random_uniform_int": "out = tf.random_uniform(shape_ph, maxval=5, dtype=tf.int64); feed = {shape_ph: dims}",
    "broadcast_to": "out = tf.broadcast_to(tf.constant(1.0), shape_ph); feed = {shape_ph: dims}",
    "tile": "out = tf.tile(tf.ones([1] * len(dims)), mult_ph); feed = {mult_ph: dims}",
    "pad": "out = tf.pad(tf.ones([1] * len(dims)), pad_ph); feed = {pad_ph: [[0, d] for d in dims]}",
    "range": "out = tf.range(tf.constant(0, tf.int64), lim_ph); feed = {lim_ph: dims[0]}",
    # 2**20 indices, so that a depth of at most 2**31 - 1 (an int32) still asks for too much.
    "one_hot": "out = tf.one_hot(tf.zeros([2**20], tf.int32), depth_ph); feed = {depth_ph: dims[0]}",
}

CHILD = textwrap.dedent(
    """
    import json, sys
    import ferroflow as tf
    cases = json.loads(sys.stdin.read())
    for family, code, dims in cases:
        tf.reset_default_graph()
        shape_ph = tf.placeholder(tf.int64, [len(dims)])
        mult_ph = tf.placeholder(tf.int64, [len(dims)])
        pad_ph = tf.placeholder(tf.int64, [len(dims), 2])
        lim_ph = tf.placeholder(tf.int64, [])
        depth_ph = tf.placeholder(tf.int32, [])
        feed = None
        try:
            ns = dict(tf=tf, dims=dims, shape_ph=shape_ph, mult_ph=mult_ph, pad_ph=pad_ph,
                      lim_ph=lim_ph, depth_ph=depth_ph, feed=None)
            exec(code, ns)
            with tf.Session() as sess:
                sess.run(ns["out"].op, ns["feed"])
            result = ("ok", "")
        except Exception as e:
            result = (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        print(json.dumps([family, dims, *result]), flush=True)
    """
)

TYPED = {"ResourceExhaustedError", "InvalidArgumentError", "ValueError"}


def _run_child(cases, timeout=120):
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("[")]
    assert proc.returncode == 0, (
        f"child exited with {proc.returncode} after {len(results)} of {len(cases)} cases "
        f"(next: {cases[len(results)] if len(results) < len(cases) else None}); stderr: {proc.stderr[-2000:]}"
    )
    return results


def test_tf_examples_raise_resource_exhausted():
    cases = [
        ("zeros", FAMILIES["zeros"], [100000, 100000, 100000]),
        ("ones_fed", FAMILIES["ones_fed"], [100000, 100000, 100000]),
        ("fill", FAMILIES["fill"], [2**31, 2**31]),
        ("range", FAMILIES["range"], [2**62]),
        ("tile", FAMILIES["tile"], [2**62]),
        ("random_normal", FAMILIES["random_normal"], [2**40]),
    ]
    for family, dims, cls, msg in _run_child(cases, timeout=60):
        assert cls == "ResourceExhaustedError", (family, dims, cls, msg)
        assert msg.startswith("OOM when allocating tensor with shape["), (family, msg)
        assert "shape[" + ",".join(str(d) for d in dims) + "]" in msg or family in ("tile", "range"), msg


def test_negative_dimensions_are_named():
    cases = [
        ("zeros", FAMILIES["zeros"], [-1, 3]),
        ("ones_fed", FAMILIES["ones_fed"], [2, -3]),
        ("random_normal", FAMILIES["random_normal"], [4, -2]),
    ]
    (_, _, c0, m0), (_, _, c1, m1), (_, _, c2, m2) = _run_child(cases, timeout=60)
    assert c0 == "ValueError" and "dimension 0" in m0 and "-1" in m0, m0
    assert c1 == "InvalidArgumentError" and m1.startswith("Dimension -3 must be >= 0 (dimension 1"), m1
    assert c2 == "InvalidArgumentError" and "dimension 1" in m2, m2


def _drawn_cases(seed=23, per_family=6):
    rng = random.Random(seed)
    cases = []
    for family, code in FAMILIES.items():
        one_dim = family in ("range", "one_hot")
        for _ in range(per_family):
            rank = 1 if one_dim else rng.randint(1, 4)
            dims = []
            for _ in range(rank):
                r = rng.random()
                if r < 0.15:
                    dims.append(-rng.randint(1, 2**31 - 1))
                elif r < 0.85:
                    dims.append(2 ** rng.randint(20, 62) + rng.randint(0, 7))
                else:
                    dims.append(rng.randint(1, 4))
            if family == "one_hot":
                dims = [dims[0] if dims[0] < 0 else 2**31 - 1 - rng.randint(0, 2**20)]
            elif not any(d < 0 for d in dims) and math.prod(dims) < 2**40:
                dims[0] = 2**40  # every case asks for more than any machine has
            cases.append((family, code, dims))
    return cases


@pytest.mark.parametrize("seed", [23, 2026])
def test_drawn_huge_and_negative_shapes_give_typed_errors(seed):
    cases = _drawn_cases(seed)
    results = _run_child(cases)
    assert len(results) == len(cases)
    for family, dims, cls, msg in results:
        assert cls in TYPED, (family, dims, cls, msg)
        if cls == "ResourceExhaustedError":
            assert msg.startswith("OOM when allocating tensor with shape["), msg
