"""Loads the TF-made golden files of tests/fixtures/parsing (see make_parsing.py there)."""

import base64
import json
import pathlib

import numpy as np

import ferroflow as tf

HERE = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "parsing"
DT = {"float32": tf.float32, "int64": tf.int64, "string": tf.string}


def load(name):
    with open(HERE / name) as f:
        return json.load(f)


def unb64(x):
    if isinstance(x, dict) and "b64" in x:
        return base64.b64decode(x["b64"])
    if isinstance(x, list):
        return [unb64(y) for y in x]
    return x


def array(enc):
    """The numpy array a fixture stores as {"dtype", "shape", "data"} (or a scalar string as {"b64"})."""
    if "b64" in enc:
        out = np.empty((), dtype=object)
        out[()] = base64.b64decode(enc["b64"])
        return out
    if enc["dtype"] == "string":
        flat = np.array([base64.b64decode(x) for x in enc["data"]] or [], dtype=object)
        return flat.reshape(enc["shape"])
    return np.array(enc["data"], dtype=enc["dtype"]).reshape(enc["shape"])


def feature(spec):
    spec = unb64(spec)
    kind = spec[0]
    if kind == "fixed":
        return tf.FixedLenFeature(spec[1], DT[spec[2]], default_value=spec[3])
    if kind == "var":
        return tf.VarLenFeature(DT[spec[1]])
    if kind == "seq":
        return tf.FixedLenSequenceFeature(spec[1], DT[spec[2]], allow_missing=spec[3], default_value=spec[4])
    if kind == "sparse":
        return tf.SparseFeature(spec[1], spec[2], DT[spec[3]], spec[4], spec[5])
    raise ValueError(kind)


def assert_value(got, want, what):
    """Compares a fetched value with a fixture's encoded one (exactly; NaN-aware)."""
    if isinstance(want, dict) and want.get("sparse"):
        assert isinstance(got, tf.SparseTensorValue), what
        for part in ("indices", "values", "dense_shape"):
            assert_value(getattr(got, part), want[part], f"{what}.{part}")
        return
    exp = array(want)
    if isinstance(got, bytes):  # np.asarray would drop trailing NUL bytes
        assert exp.shape == () and got == exp[()], what
        return
    got = np.asarray(got)
    assert got.shape == exp.shape, f"{what}: shape {got.shape} != {exp.shape}"
    if exp.dtype == object:
        assert got.reshape(-1).tolist() == exp.reshape(-1).tolist(), what
    else:
        assert got.dtype == exp.dtype, f"{what}: dtype {got.dtype} != {exp.dtype}"
        np.testing.assert_array_equal(got, exp, err_msg=what)
