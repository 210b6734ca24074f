"""Writes tests/fixtures/image/<case>.npz: the values real TensorFlow computes for every tf.image
case in tests/python/_image_cases.py.

    /path/to/python-with-tensorflow tools/make_image_fixtures.py [--only name,name]

Needs TensorFlow (``pip install tensorflow-cpu``); it runs each case with ``tensorflow.compat.v1``
after ``disable_v2_behavior()`` in a fresh graph and session: one ``Session.run(fetches,
feed_dict)``. Each fetch key becomes one array of the .npz, and ``<key>__static_shape`` the static
shape TensorFlow inferred for it (``_image_cases.static_shape``). Also rewrites the folder's
README.md.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "image"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _image_cases  # noqa: E402

README = """# tf.image fixtures

One `.npz` per case of `tests/python/_image_cases.py` (the file name is the case name), holding
one array per fetch key (the values real TensorFlow computed for that graph) and, for each key,
`<key>__static_shape`: the static shape TensorFlow inferred when the graph was built, as int64
(-1 for an unknown dimension; a 0-d array holding -2 when the rank is unknown).
`tests/python/test_image_golden.py` builds the same graphs with ferroflow and compares.

Made by `tools/make_image_fixtures.py` with TensorFlow {tf_version} (`{tf_package}`), NumPy
{np_version}, Python {py_version}, on CPU ({machine}), through `tensorflow.compat.v1` after
`disable_v2_behavior()` (so `tf.image` is TF1's: `resize_images` with `align_corners`, the v1
`crop_and_resize`, `extract_glimpse`, `draw_bounding_boxes` and `resize_image_with_pad`).
Each case runs in a fresh `tf.Graph` and `tf.Session`: a single `Session.run(fetches,
feed_dict)`. Inputs come from seeded `np.random.RandomState`s, so they are rebuilt identically by
the test; only outputs are stored (compressed).

Not here: the codecs (decode/encode JPEG, PNG, GIF, BMP; their own fixtures), the random ops
(random_*, sample_distorted_bounding_box; `tests/python/test_image_random.py` checks their
properties instead), and `generate_bounding_box_proposals` (TensorFlow has no CPU kernel for it).

Regenerate (after changing a case) with a Python that has TensorFlow installed:

    python tools/make_image_fixtures.py            # every case
    python tools/make_image_fixtures.py --only ssim,psnr
"""


def run_case(tf, fn):
    g = tf.Graph()
    with g.as_default():
        fetches, feed = fn(tf)
        shapes = {key: _image_cases.static_shape(t) for key, t in fetches.items()}
        with tf.Session(graph=g) as sess:
            values = sess.run(fetches, feed_dict=feed)
    out = {}
    for key, value in values.items():
        if _image_cases.STATIC_SHAPE_SUFFIX in key:
            raise ValueError(f"fetch key {key!r} uses the reserved suffix")
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TypeError(f"fetch {key!r} is not an array ({type(value).__name__})")
        out[key] = arr
        out[key + _image_cases.STATIC_SHAPE_SUFFIX] = shapes[key]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="comma-separated case names")
    args = parser.parse_args()

    import tensorflow as tf_root

    tf = tf_root.compat.v1
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)

    names = sorted(_image_cases.CASES)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in _image_cases.CASES]
        if unknown:
            raise SystemExit(f"unknown cases: {unknown}")
    else:
        # A full run owns the folder: drop fixtures whose case is gone.
        OUT.mkdir(parents=True, exist_ok=True)
        for old in OUT.glob("*.npz"):
            if old.stem not in _image_cases.CASES:
                old.unlink()

    OUT.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in names:
        try:
            values = run_case(tf, _image_cases.CASES[name])
        except Exception as e:  # report every broken case in one run, then fail
            failed.append(name)
            print(f"{name:44s} FAILED: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            continue
        np.savez_compressed(OUT / f"{name}.npz", **values)
        desc = ", ".join(
            f"{k}{list(v.shape)}:{v.dtype}"
            for k, v in sorted(values.items())
            if not k.endswith(_image_cases.STATIC_SHAPE_SUFFIX)
        )
        print(f"{name:44s} {desc}")

    if failed:
        raise SystemExit(f"{len(failed)} case(s) failed: {', '.join(failed)}")

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
            machine=platform.machine(),
        )
    )


if __name__ == "__main__":
    main()
