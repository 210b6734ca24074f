"""Shared by the ragged fixture tests: loading a fixture set made by TensorFlow 2.21 and comparing static facts."""

import json
import os
import sys

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def load(name):
    """The fixture folder ``tests/fixtures/<name>``, its ``<name>_cases`` module and its ``expected.json``."""
    here = os.path.join(FIXTURES, name)
    if here not in sys.path:
        sys.path.insert(0, here)
    cases = __import__(f"{name}_cases")
    with open(os.path.join(here, "expected.json")) as fh:
        expected = json.load(fh)
    return here, cases, expected


def same_static(got, want, path, tf_may_forget=False):
    """Equal static facts (class, dtype, ragged rank, row-splits dtype), except that a dimension may be unknown
    where TensorFlow knows it (ferroflow neither folds constants in shape inference nor records uniform row
    lengths); with ``tf_may_forget`` also the other way round (TensorFlow forgets the rows where a fed operand's
    are unknown)."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), path
        for g, w in zip(got, want):
            same_static(g, w, path, tf_may_forget)
        return
    assert {k: v for k, v in got.items() if k != "shape"} == {k: v for k, v in want.items() if k != "shape"}, path
    if want.get("shape") is not None:
        assert got["shape"] is not None and len(got["shape"]) == len(want["shape"]), (path, got, want)
        agree = [g is None or g == w or (tf_may_forget and w is None) for g, w in zip(got["shape"], want["shape"])]
        assert all(agree), (path, got, want)
