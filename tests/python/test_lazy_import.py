"""``import ferroflow`` leaves its heavier namespaces unloaded until first use (PEP 562), as TF 1.x does
with tf.estimator and tf.keras, and every public name stays reachable as before.

The import-state checks run in one fresh interpreter (this process has long since loaded everything), which
reports what it saw as JSON; the tests below read that report.
"""

import json
import subprocess
import sys
import textwrap

import pytest

import ferroflow
import ferroflow.compat.v1 as v1
from ferroflow.platform import lazy_loader

LAZY_SUBMODULES = ferroflow._LAZY_SUBMODULES
LAZY_NAMES = ferroflow._LAZY_NAMES
# What the lazy namespaces pull in from outside ferroflow: absl (tf.app, tf.flags, tf.test) and unittest.mock.
HEAVY_THIRD_PARTY = ("absl", "absl.flags", "absl.app", "absl.testing", "unittest", "unittest.mock")

_PROBE = textwrap.dedent("""
    import json, sys

    import ferroflow as tf

    report = {"loaded_after_import": sorted(m for m in sys.modules if m.startswith("ferroflow.") or
                                             m.split(".")[0] in ("absl", "unittest"))}
    from ferroflow.framework import control_flow_v1_import, ops

    report["side_effects"] = [
        ops.get_from_proto_function(ops.GraphKeys.QUEUE_RUNNERS) is not None,
        ops.get_to_proto_function(ops.GraphKeys.QUEUE_RUNNERS) is not None,
        control_flow_v1_import.gradient_rebuilder() is not None,
    ]
    lazy = list(tf._LAZY_SUBMODULES)
    report["dir_has"] = {n: n in dir(tf) for n in lazy + list(tf._LAZY_NAMES)}
    report["all_has"] = {n: n in tf.__all__ for n in lazy + list(tf._LAZY_NAMES)}

    import ferroflow.compat.v1 as v1  # noqa: E402

    report["loaded_after_v1"] = [m for m in ("ferroflow." + n for n in lazy) if m in sys.modules]
    report["v1_dir_has"] = {n: n in dir(v1) for n in lazy}

    # Touch every lazy namespace, half of them through tf.compat.v1 first, then through the other path.
    report["same"], report["is_module"] = {}, {}
    for i, name in enumerate(lazy):
        first, second = (v1, tf) if i % 2 else (tf, v1)
        a = getattr(first, name)
        b = getattr(second, name)
        report["same"][name] = a is b and a is sys.modules["ferroflow." + name] and vars(tf)[name] is a
        report["is_module"][name] = type(a).__name__ == "module"
    for name, (module, attr) in tf._LAZY_NAMES.items():
        value = getattr(v1, name)
        report["same"][name] = value is getattr(tf, name) is getattr(sys.modules[module], attr)

    from ferroflow.keras import layers  # noqa: E402
    from ferroflow import estimator  # noqa: E402
    report["spellings"] = [
        layers is tf.keras.layers,
        estimator is tf.estimator is tf.compat.v1.estimator,
        tf.estimator.DNNClassifier is v1.estimator.DNNClassifier,
        tf.keras.layers.Dense is v1.keras.layers.Dense,
        tf.test.TestCase is v1.test.TestCase,
        tf.app.run is v1.app.run,
        tf.flags.FLAGS is tf.app.flags.FLAGS,
        tf.train.Saver is v1.train.Saver,
    ]
    print(json.dumps(report))
""")


@pytest.fixture(scope="module")
def probe():
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_leaves_the_lazy_namespaces_unloaded(probe):
    loaded = set(probe["loaded_after_import"])
    assert [n for n in LAZY_SUBMODULES if f"ferroflow.{n}" in loaded] == []
    assert [m for m in HEAVY_THIRD_PARTY if m in loaded] == []
    assert [m for m, _ in LAZY_NAMES.values() if m in loaded] == []
    # Importing tf.compat.v1 loads nothing more.
    assert probe["loaded_after_v1"] == []


def test_dir_and_all_list_the_lazy_names_before_they_load(probe):
    assert all(probe["dir_has"].values()), probe["dir_has"]
    assert all(probe["all_has"].values()), probe["all_has"]
    assert all(probe["v1_dir_has"].values()), probe["v1_dir_has"]


def test_first_touch_loads_one_object_for_both_paths(probe):
    assert set(probe["same"]) == set(LAZY_SUBMODULES) | set(LAZY_NAMES)
    assert all(probe["same"].values()), probe["same"]
    assert all(probe["is_module"].values()), probe["is_module"]
    assert all(probe["spellings"]), probe["spellings"]


def test_import_side_effects_still_happen_at_import(probe):
    # What the lazy namespaces must not carry: the proto functions of the QUEUE_RUNNERS collection (for
    # import_meta_graph and SavedModel loads) and the gradient rebuilder that the TF1 loop importer calls.
    assert probe["side_effects"] == [True, True, True]


def test_star_imports_see_every_public_name():
    for module in ("ferroflow", "ferroflow.compat.v1"):
        namespace = {}
        exec(f"from {module} import *", namespace)
        for name in (*LAZY_SUBMODULES, *LAZY_NAMES, "placeholder", "Session", "nn"):
            assert namespace[name] is getattr(ferroflow, name), (module, name)
        assert "_native" not in namespace


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="module 'ferroflow' has no attribute 'no_such_name'"):
        ferroflow.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="module 'ferroflow.compat.v1' has no attribute 'no_such_name'"):
        v1.no_such_name  # noqa: B018
    assert not hasattr(ferroflow, "no_such_name") and not hasattr(v1, "_native")


def test_attach_rejects_a_name_listed_twice():
    with pytest.raises(ValueError, match="both as submodules and as names"):
        lazy_loader.attach("ferroflow", ["train"], {"train": ("ferroflow.train", "Saver")})
