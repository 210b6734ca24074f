"""Writes tests/fixtures/control_flow_more/<case>.npz: what real TensorFlow computes (or the error
it raises) for every case of tests/python/_control_flow_more_cases.py.

    /path/to/python-with-tensorflow tools/make_control_flow_more_fixtures.py [--only name,name]

Needs TensorFlow (``pip install tensorflow-cpu``); runs each case with ``tensorflow.compat.v1``
after ``disable_v2_behavior()`` (TF1 graphs, TF1 control flow, ref variables), in a fresh graph
and session: ``global_variables_initializer``, one ``Session.run(fetches, feed)``, then one
``Session.run(after)``. A value case stores one array per key (``after`` keys prefixed
``after/``). A case where TensorFlow raises stores ``error_type`` (the exception's class name)
and ``error_message`` (TensorFlow's message, without the graph-execution preamble and the trailing
node reference). Also rewrites the folder's README.md.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import re
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "control_flow_more"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _control_flow_more_cases as cases  # noqa: E402

README = """# More control-flow fixtures

One `.npz` per case of `tests/python/_control_flow_more_cases.py` (the file name is the case name):
one array per fetch key (keys of the case's second run prefixed `after/`), or, where TensorFlow
raised, `error_type` and `error_message`. `tests/python/test_control_flow_more_golden.py` builds
the same graphs with ferroflow and compares.

Made by `tools/make_control_flow_more_fixtures.py` with TensorFlow {tf_version} (`{tf_package}`),
NumPy {np_version}, Python {py_version}, on CPU, through `tensorflow.compat.v1` after
`disable_v2_behavior()` (TF1 control flow, ref variables, TensorArrayV3; `tf.switch_case` is a
functional `Case`/`StatelessCase` op even then). Each case runs in a fresh `tf.Graph` and
`tf.Session`: `global_variables_initializer()`, the case's fetches, then its `after` fetches.

Regenerate with a Python that has TensorFlow installed:

    python tools/make_control_flow_more_fixtures.py            # every case
    python tools/make_control_flow_more_fixtures.py --only ta_clear_read_twice
"""


def core_message(tf, e):
    """TensorFlow's own words for error ``e``: for a run-time error, the message its kernel raised
    (without "Graph execution error", the node's traceback and the trailing ``[[{{node ...}}]]``)."""
    text = getattr(e, "message", None) or str(e)
    if isinstance(e, tf.errors.OpError):
        node = re.search(r"\nNode: '[^']*'\n(.*?)(\n\t \[\[|$)", text, re.S)
        if node:
            text = node.group(1)
        text = re.sub(r"\n\t \[\[.*$", "", text, flags=re.S)
    return text.strip()


def run_case(tf, fn):
    g = tf.Graph()
    with g.as_default():
        try:
            spec = fn(tf)
            with tf.Session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                values = sess.run(spec["fetches"], feed_dict=spec.get("feed"))
                after = sess.run(spec["after"]) if spec.get("after") else {}
        except Exception as e:  # what TensorFlow raises is the fixture
            return {"error_type": np.array(type(e).__name__), "error_message": np.array(core_message(tf, e))}
    out = {}
    for prefix, group in (("", values), ("after/", after)):
        for key, value in group.items():
            arr = np.asarray(value)
            if arr.dtype == object:
                raise TypeError(f"fetch {key!r} is not an array ({type(value).__name__})")
            out[prefix + key] = arr
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="comma-separated case names")
    args = parser.parse_args()

    import tensorflow as tf_root

    tf = tf_root.compat.v1
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)

    names = sorted(cases.CASES)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in cases.CASES]
        if unknown:
            raise SystemExit(f"unknown cases: {unknown}")
    else:
        OUT.mkdir(parents=True, exist_ok=True)
        for old in OUT.glob("*.npz"):
            if old.stem not in cases.CASES:
                old.unlink()

    OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        values = run_case(tf, cases.CASES[name])
        np.savez(OUT / f"{name}.npz", **values)
        if "error_type" in values:
            desc = f"raises {values['error_type']}: {str(values['error_message'])[:90]}"
        else:
            desc = ", ".join(f"{k}{list(v.shape)}:{v.dtype}" for k, v in sorted(values.items()))
        print(f"{name:40s} {desc}")

    try:
        from importlib.metadata import version

        pkg = "tensorflow-cpu"
        version(pkg)
    except Exception:
        pkg = "tensorflow"
    (OUT / "README.md").write_text(
        README.format(
            tf_version=tf_root.__version__,
            tf_package=pkg,
            np_version=np.__version__,
            py_version=platform.python_version(),
        )
    )


if __name__ == "__main__":
    main()
