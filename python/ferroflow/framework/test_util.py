"""What ``tf.test`` offers (the public face is ``ferroflow/test.py``): a ``unittest`` base class for graph
tests, graph/proto comparisons, benchmarks and process-wide test helpers.

``class MyTest(tf.test.TestCase)`` gets a fresh default graph per test, sessions (``self.session()``,
``self.cached_session()``), ``self.evaluate`` and numeric assertions such as ``assertAllClose``;
``tf.test.main()`` runs the tests (or, with ``--benchmarks=REGEX``, the ``tf.test.Benchmark`` methods).
TensorFlow keeps the same things in ``framework/test_util.py`` (and ``platform/test.py``,
``platform/benchmark.py``).
"""

from __future__ import annotations

import atexit
import collections.abc
import contextlib
import copy
import difflib
import functools
import inspect
import math
import os
import platform
import random
import re
import shutil
import socket
import sys
import tempfile
import time
import unittest

import numpy as np
from absl.testing import absltest

from ferroflow.client import session as _session_lib
from ferroflow.framework import dtypes as _dtypes
from ferroflow.framework import errors as _errors
from ferroflow.framework import ops as _ops
from ferroflow.framework import random_seed as _random_seed
from ferroflow.training import server_lib as _server_lib

__all__ = [
    "Benchmark",
    "StubOutForTesting",
    "TestCase",
    "assert_equal_graph_def",
    "benchmark_config",
    "create_local_cluster",
    "disable_with_predicate",
    "get_temp_dir",
    "gpu_device_name",
    "is_built_with_cuda",
    "is_built_with_gpu_support",
    "is_built_with_rocm",
    "is_built_with_xla",
    "is_cpu_target_available",
    "is_gpu_available",
    "main",
    "test_src_dir_path",
    "with_eager_op_as_function",
]

# The ferroflow package directory (this module is in its framework/ subpackage).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# -- process-wide helpers -----------------------------------------------------

_process_temp_dir = None


def get_temp_dir():
    """A temporary directory shared by the whole process (``$TEST_TMPDIR`` when set, else a fresh one that is
    removed at exit). It exists when this returns."""
    global _process_temp_dir
    if _process_temp_dir is None or not os.path.isdir(_process_temp_dir):
        env_dir = os.environ.get("TEST_TMPDIR")
        if env_dir:
            os.makedirs(env_dir, exist_ok=True)
            _process_temp_dir = env_dir
        else:
            _process_temp_dir = tempfile.mkdtemp(prefix="ferroflow_test_")
            atexit.register(shutil.rmtree, _process_temp_dir, True)
    return _process_temp_dir


def test_src_dir_path(relative_path):
    """``relative_path`` resolved against the installed ferroflow package directory."""
    return os.path.join(_PACKAGE_DIR, relative_path)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """False: ferroflow runs on the CPU only."""
    return False


def gpu_device_name():
    """The name of a GPU device, or ``""`` when there is none (always, in ferroflow)."""
    return ""


def is_built_with_cuda():
    """False: no CUDA kernels."""
    return False


def is_built_with_rocm():
    """False: no ROCm kernels."""
    return False


def is_built_with_gpu_support():
    """False: neither CUDA nor ROCm."""
    return False


def is_built_with_xla():
    """False: ferroflow has no XLA compiler."""
    return False


_CPU_TARGET_ALIASES = {
    "x86_64": "x86", "amd64": "x86", "x64": "x86", "i386": "x86", "i686": "x86", "x86": "x86",
    "aarch64": "aarch64", "arm64": "aarch64",
    "armv7l": "arm", "armv7": "arm", "armv6l": "arm", "arm": "arm",
    "ppc64le": "powerpc", "ppc64": "powerpc", "powerpc": "powerpc",
    "s390x": "systemz", "systemz": "systemz",
}


def is_cpu_target_available(target):
    """Whether ``target`` (``"x86"``, ``"aarch64"``, ``"arm"``, ...) names the CPU ferroflow runs on; the
    native core is compiled for the host only."""
    wanted = str(target).lower()
    host = platform.machine().lower()
    return _CPU_TARGET_ALIASES.get(wanted, wanted) == _CPU_TARGET_ALIASES.get(host, host)


def benchmark_config():
    """A ``ConfigProto`` for benchmarks: like TensorFlow's, it turns Grappler's dependency optimisation off
    (ferroflow has no Grappler, so this only keeps the field values TensorFlow users expect)."""
    from ferroflow.core.protobuf import config_pb2, rewriter_config_pb2

    config = config_pb2.ConfigProto()
    config.graph_options.rewrite_options.dependency_optimization = rewriter_config_pb2.RewriterConfig.OFF
    return config


def disable_with_predicate(pred, skip_message):
    """Decorator for a test method (or a whole TestCase class): skip it when ``pred()`` is true at run time."""

    def decorator(target):
        if inspect.isclass(target):
            original_setup = target.setUp

            @functools.wraps(original_setup)
            def setUp(self, *args, **kwargs):
                if pred():
                    self.skipTest(skip_message)
                return original_setup(self, *args, **kwargs)

            target.setUp = setUp
            return target

        @functools.wraps(target)
        def wrapper(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return target(self, *args, **kwargs)

        return wrapper

    return decorator


def with_eager_op_as_function(cls=None, only_as_function=False):
    """Returns ``cls`` unchanged: ferroflow has no eager mode, so there is no op-as-function variant to add.
    Works both as ``@with_eager_op_as_function`` and ``@with_eager_op_as_function(...)``."""
    if cls is None:
        return lambda c: c
    return cls


# Ports for local clusters come from below Linux's ephemeral range (32768 up), as portpicker (which
# TensorFlow's version uses) prefers: a server that starts early and connects out to a task that is
# not listening yet then cannot be given that task's port as its own source port.
_LOCAL_PORT_RANGE = (15000, 32768)


def _port_is_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _pick_unused_ports(count):
    """``count`` distinct TCP ports that nothing on this machine listens on right now."""
    rng = random.Random()
    picked = []
    tries = 0
    while len(picked) < count:
        tries += 1
        if tries <= 100 * (count + 1):
            port = rng.randrange(*_LOCAL_PORT_RANGE)
        else:  # a crowded range: let the kernel choose
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        if port not in picked and _port_is_free(port):
            picked.append(port)
    return picked


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None, ps_config=None):
    """Starts a cluster of ``num_workers`` worker tasks and ``num_ps`` ps tasks in this process, on free
    ports of ``localhost``, and returns ``(worker_servers, ps_servers)``, two lists of started
    ``tf.train.Server`` objects indexed by task.

    Every server knows the whole cluster (jobs ``"worker"`` and ``"ps"``, the latter empty when
    ``num_ps`` is 0), so ``tf.Session(workers[i].target)`` can run nodes placed with
    ``tf.device("/job:ps/task:k")`` or ``"/job:worker/task:j"``. ``worker_config``/``ps_config``
    (``tf.ConfigProto``) become the tasks' default session configs; ``protocol`` is checked as
    ``tf.train.Server`` checks it.
    """
    ports = _pick_unused_ports(num_workers + num_ps)
    worker_ports, ps_ports = ports[:num_workers], ports[num_workers:]
    cluster = _server_lib.ClusterSpec({
        "worker": [f"localhost:{port}" for port in worker_ports],
        "ps": [f"localhost:{port}" for port in ps_ports],
    })
    workers = [
        _server_lib.Server(cluster, job_name="worker", task_index=i, protocol=protocol, config=worker_config,
                           start=True)
        for i in range(num_workers)
    ]
    ps_servers = [
        _server_lib.Server(cluster, job_name="ps", task_index=i, protocol=protocol, config=ps_config, start=True)
        for i in range(num_ps)
    ]
    return workers, ps_servers


def main(argv=None):
    """Runs the tests of ``__main__`` (``if __name__ == "__main__": tf.test.main()``). With
    ``--benchmarks=REGEX`` on the command line, runs the matching ``Benchmark`` methods instead."""
    args = list(sys.argv if argv is None else argv)
    flag = next((a for a in args if a.startswith(("--benchmarks=", "-benchmarks="))), None)
    if flag is not None:
        args.remove(flag)
        _run_benchmarks(flag.split("=", 1)[1])
        return None
    return unittest.main(module="__main__", argv=args)


# -- structures and graph elements ----------------------------------------------


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_graph_element(x):
    from ferroflow.ops.variables import Variable

    return isinstance(x, (_ops.Tensor, _ops.Operation, Variable))


def _flatten(x):
    if isinstance(x, collections.abc.Mapping):
        return [leaf for k in x for leaf in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _flatten(item)]
    return [x]


def _graph_of(structure):
    for leaf in _flatten(structure):
        if _is_graph_element(leaf):
            return leaf.graph
    return None


def _run_in_some_session(structure, cached=None):
    """Runs ``structure`` in the default session, else in ``cached()`` when that session runs the right graph,
    else in a temporary session on the graph of the tensors."""
    sess = _session_lib.get_default_session()
    if sess is not None:
        return sess.run(structure)
    graph = _graph_of(structure) or _ops.get_default_graph()
    if cached is not None:
        sess = cached(graph)
        if sess is not None:
            return sess.run(structure)
    with _session_lib.Session(graph=graph) as sess:
        return sess.run(structure)


def _path_str(path):
    return "".join(f"[{p!r}]" for p in path) or "<top level>"


def _as_ndarray(x):
    return x if isinstance(x, np.ndarray) else np.array(x)


def _plain(x):
    """A NumPy scalar or array as a Python value, for readable messages."""
    return x.tolist() if isinstance(x, (np.ndarray, np.generic)) else x


def _numeric(a):
    return a.dtype.kind in "biufc"


def _inexact_comparable(a):
    """Whether ``np.isclose`` applies (numbers other than booleans)."""
    return a.dtype.kind in "iufc"


# -- TestCase -------------------------------------------------------------------


class TestCase(absltest.TestCase):
    """Base class for ferroflow graph tests: a fresh default graph and fixed seeds in every ``setUp``,
    sessions, ``evaluate``, and array/proto assertions; absl's ``absltest.TestCase`` underneath, as in
    TensorFlow (``assertContainsSubset``, ``create_tempdir``, ``enter_context``, ...)."""

    def __init__(self, methodName="runTest"):
        super().__init__(methodName)
        self._tempdir = None
        self._cached_session = None
        self._cached_session_args = None

    # fixture --------------------------------------------------------------------

    def setUp(self):
        """Closes any cached session, seeds Python/NumPy and starts a fresh default graph with a fixed seed."""
        super().setUp()
        self._clear_cached_session()
        random.seed(_random_seed.DEFAULT_GRAPH_SEED)
        np.random.seed(_random_seed.DEFAULT_GRAPH_SEED)
        _ops.reset_default_graph()
        _random_seed.set_random_seed(_random_seed.DEFAULT_GRAPH_SEED)

    def tearDown(self):
        self._clear_cached_session()
        super().tearDown()

    def _clear_cached_session(self):
        if self._cached_session is not None:
            self._cached_session.close()
        self._cached_session = None
        self._cached_session_args = None

    def get_temp_dir(self):
        """A temporary directory of this test (created on first use, under the process-wide one)."""
        if not self._tempdir or not os.path.isdir(self._tempdir):
            self._tempdir = tempfile.mkdtemp(dir=get_temp_dir())
        return self._tempdir

    # sessions -------------------------------------------------------------------

    @staticmethod
    def _check_device_args(force_gpu):
        if force_gpu:
            raise RuntimeError("force_gpu=True, but ferroflow has no GPU device to place the ops on")

    @contextlib.contextmanager
    def _as_default(self, sess):
        with sess.graph.as_default(), sess.as_default():
            yield sess

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new session on ``graph`` (the default graph when None), made the default session and its graph
        the default graph inside the ``with``; closed when the block ends. ``use_gpu`` has no effect."""
        self._check_device_args(force_gpu)
        with _session_lib.Session(graph=graph, config=config) as sess:
            with self._as_default(sess):
                yield sess

    def _get_cached_session(self, graph, config, force_gpu, strict):
        self._check_device_args(force_gpu)
        args = (graph, config, force_gpu)
        if self._cached_session is None or self._cached_session._closed:
            self._cached_session = _session_lib.Session(graph=graph, config=config)
            self._cached_session_args = args
        elif strict:
            old_graph, old_config, old_force_gpu = self._cached_session_args
            if old_graph is not graph:
                raise ValueError(
                    "cached_session() was asked for another graph than the one its cached session was created "
                    "with; use self.session(graph) for a separate session"
                )
            if old_config is not config:
                raise ValueError("cached_session() was asked for another config than the cached session's")
            if old_force_gpu != force_gpu:
                raise ValueError("cached_session() was asked for another force_gpu than the cached session's")
        return self._cached_session

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """One session per test, created on first use and closed in ``tearDown``; the default session inside the
        ``with``. Asking again with another graph or config raises ValueError."""
        sess = self._get_cached_session(graph, config, force_gpu, strict=True)
        with self._as_default(sess):
            yield sess

    def test_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """The older name: the cached session when ``graph`` is None, else a new ``session(graph)``."""
        if self.id().endswith(".test_session"):
            # unittest collects this method as a test because of its name.
            self.skipTest("test_session is TestCase's session helper, not a test")
        if graph is None:
            return self._as_default(self._get_cached_session(None, config, force_gpu, strict=False))
        return self.session(graph, config, use_gpu, force_gpu)

    def _cached_for_graph(self, graph):
        if self._cached_session is None or self._cached_session._closed:
            if graph is not _ops.get_default_graph():
                return None
            return self._get_cached_session(None, None, False, strict=False)
        return self._cached_session if self._cached_session.graph is graph else None

    def evaluate(self, tensors):
        """The values of ``tensors`` (any nesting of lists, tuples, dicts and namedtuples), run in the default
        session, else in this test's cached session."""
        return _run_in_some_session(tensors, self._cached_for_graph)

    def evaluate_if_both_tensors(self, a, b):
        """``(a, b)`` evaluated when both are tensors, else unchanged."""
        if _is_graph_element(a) and _is_graph_element(b):
            return self.evaluate((a, b))
        return a, b

    def _evaluate_leaves(self, x):
        """``x`` with every tensor/variable inside it replaced by its value."""
        if _is_graph_element(x):
            return self.evaluate(x)
        if isinstance(x, collections.abc.Mapping):
            return {k: self._evaluate_leaves(v) for k, v in x.items()}
        if _is_namedtuple(x):
            return type(x)(*[self._evaluate_leaves(v) for v in x])
        if isinstance(x, (list, tuple)):
            return type(x)(self._evaluate_leaves(v) for v in x)
        return x

    def _get_ndarray(self, a):
        if _is_graph_element(a):
            a = self.evaluate(a)
        return _as_ndarray(a)

    # closeness --------------------------------------------------------------------

    def _format_mismatch(self, a, b, bad, what, msg):
        lines = [msg] if msg else []
        if a.ndim:
            where = np.argwhere(bad)
            shown = [tuple(int(j) for j in i) for i in where[:10]]
            lines.append(f"{len(where)} of {a.size} element(s) {what}; first at indices {shown}")
            lines.append(f"  lhs: {[_plain(a[i]) for i in shown]}")
            lines.append(f"  rhs: {[_plain(b[i]) for i in shown]}")
        else:
            lines.append(f"values {what}: lhs {_plain(a)!r}, rhs {_plain(b)!r}")
        return lines

    def _assert_arrays_close(self, a, b, rtol, atol, msg, path):
        a = _as_ndarray(a)
        b = _as_ndarray(b)
        where = f" at {_path_str(path)}" if path else ""
        if a.shape != b.shape:
            self.fail(f"{msg + ': ' if msg else ''}shape mismatch{where}: {a.shape} vs {b.shape}"
                      + (f"\nlhs: {a!r}\nrhs: {b!r}" if a.size < 500 and b.size < 500 else ""))
        if not (_inexact_comparable(a) and _inexact_comparable(b)):
            if not np.array_equal(a, b):
                bad = np.asarray(a != b) if a.shape else np.bool_(True)
                self.fail("\n".join(self._format_mismatch(a, b, bad, f"differ{where}", msg)))
            return
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if not np.all(close):
            bad = np.logical_not(close)
            lines = self._format_mismatch(a, b, bad, f"not close{where}", msg)
            with np.errstate(all="ignore"):
                diff = np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) - b)
            lines.append(f"  max |lhs - rhs| = {np.nanmax(diff) if diff.size else diff}, rtol={rtol}, atol={atol}")
            lines.append(f"  dtypes: {a.dtype} vs {b.dtype}, shape {a.shape}")
            self.fail("\n".join(lines))

    def _assert_close_recursive(self, a, b, rtol, atol, msg, path):
        a_map = isinstance(a, collections.abc.Mapping)
        if a_map != isinstance(b, collections.abc.Mapping):
            self.fail(f"{msg + ': ' if msg else ''}cannot compare a dict with a non-dict at {_path_str(path)}: "
                      f"{type(a).__name__} vs {type(b).__name__}")
        if a_map:
            if set(a) != set(b):
                self.fail(f"{msg + ': ' if msg else ''}dict keys differ at {_path_str(path)}: "
                          f"only in lhs {sorted(map(repr, set(a) - set(b)))}, "
                          f"only in rhs {sorted(map(repr, set(b) - set(a)))}")
            for k in a:
                self._assert_close_recursive(a[k], b[k], rtol, atol, msg, path + (k,))
            return
        a_seq = isinstance(a, (list, tuple))
        b_seq = isinstance(b, (list, tuple))
        if _is_namedtuple(a) and _is_namedtuple(b) and a._fields != b._fields:
            self.fail(f"{msg + ': ' if msg else ''}namedtuple fields differ at {_path_str(path)}: "
                      f"{type(a).__name__}{a._fields} vs {type(b).__name__}{b._fields}")
        if a_seq and b_seq:
            # Plain nested numbers compare fastest as arrays; fall back to walking the structure.
            try:
                a_arr, b_arr = np.array(a), np.array(b)
            except (ValueError, TypeError):
                a_arr = b_arr = None
            if a_arr is not None and _numeric(a_arr) and _numeric(b_arr):
                self._assert_arrays_close(a_arr, b_arr, rtol, atol, msg, path)
                return
            if len(a) != len(b):
                self.fail(f"{msg + ': ' if msg else ''}length mismatch at {_path_str(path)}: {len(a)} vs {len(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                self._assert_close_recursive(x, y, rtol, atol, msg, path + (i,))
            return
        if (a_seq and _is_structured(a)) or (b_seq and _is_structured(b)):
            self.fail(f"{msg + ': ' if msg else ''}structure mismatch at {_path_str(path)}: "
                      f"{type(a).__name__} vs {type(b).__name__}")
        self._assert_arrays_close(a, b, rtol, atol, msg, path)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """Fails unless ``|a - b| <= atol + rtol * |b|`` everywhere. ``a`` and ``b`` may be arrays, scalars,
        tensors, or matching nests of dicts, lists, tuples and namedtuples; shapes must be equal."""
        a = self._evaluate_leaves(a)
        b = self._evaluate_leaves(b)
        self._assert_close_recursive(a, b, rtol, atol, msg, ())

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """Fails if ``assertAllClose(a, b, ...)`` would pass."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        self.fail(f"{msg + ': ' if msg else ''}the two values are close at all elements")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,
                                      half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        """``assertAllClose`` with the tolerances widened to those of the least precise float type involved."""
        a = self._get_ndarray(a)
        b = self._get_ndarray(b)
        dts = {a.dtype, b.dtype}
        if dts & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in dts:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if any(d.name == "bfloat16" for d in dts):
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertAllEqual(self, a, b, msg=None):
        """Fails unless ``a`` and ``b`` have the same shape and equal elements (NaN equals NaN)."""
        a = self._get_ndarray(a)
        b = self._get_ndarray(b)
        if a.shape != b.shape:
            self.fail(f"{msg + ': ' if msg else ''}shape mismatch: {a.shape} vs {b.shape}"
                      + (f"\nlhs: {a!r}\nrhs: {b!r}" if a.size < 500 and b.size < 500 else ""))
        same = np.asarray(a == b)
        if same.shape != a.shape:  # elementwise comparison not possible (e.g. mixed object types)
            same = np.full(a.shape, bool(np.array_equal(a, b)))
        if a.dtype.kind in "fc" and b.dtype.kind in "fc":
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if not np.all(same):
            self.fail("\n".join(self._format_mismatch(a, b, np.logical_not(same), "not equal", msg)))

    def assertNotAllEqual(self, a, b, msg=None):
        """Fails if ``assertAllEqual(a, b)`` would pass."""
        try:
            self.assertAllEqual(a, b, msg)
        except AssertionError:
            return
        self.fail(f"{msg + ': ' if msg else ''}the two values are equal at all elements")

    def assertNear(self, f1, f2, err, msg=None):
        """Fails unless the numbers ``f1`` and ``f2`` are within ``err`` of each other."""
        if not (f1 == f2 or math.fabs(f1 - f2) <= err):
            self.fail(f"{f1!r} != {f2!r} +/- {err!r}{' : ' + str(msg) if msg else ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):
        """``assertNear`` on every pair of elements of two equally long sequences of floats."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for i, (f1, f2) in enumerate(zip(farray1, farray2)):
            if not (f1 == f2 or math.fabs(float(f1) - float(f2)) <= err):
                self.fail(f"element {i}: {f1!r} != {f2!r} +/- {err!r}{' : ' + str(msg) if msg else ''}")

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):
        """Fails unless the Euclidean norm of ``ndarray1 - ndarray2`` is below ``err``."""
        dist = np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2))
        if not dist < err:
            self.fail(f"{msg + ': ' if msg else ''}norm of the difference is {dist}, not below {err}")

    def assertShapeEqual(self, input_a, input_b, msg=None):
        """Fails unless two NumPy arrays/scalars or tensors (static shape) have the same shape."""

        def shape_of(x, which):
            if isinstance(x, _ops.Tensor):
                return x.get_shape().as_list()
            if isinstance(x, (np.ndarray, np.generic)):
                return list(x.shape)
            raise TypeError(f"{which} must be a NumPy ndarray, a NumPy scalar or a Tensor, got {type(x).__name__}")

        shape_a, shape_b = shape_of(input_a, "input_a"), shape_of(input_b, "input_b")
        if shape_a != shape_b:
            self.fail(f"{msg + ': ' if msg else ''}shapes differ: {shape_a} vs {shape_b}")

    def assertDTypeEqual(self, target, expected_dtype):
        """Fails unless ``target`` (an array, a tensor, or a list of them) has dtype ``expected_dtype``
        (a NumPy type or a ``tf.DType``)."""
        if isinstance(expected_dtype, _dtypes.DType):
            expected_dtype = expected_dtype.as_numpy_dtype
        expected = np.dtype(expected_dtype)
        for t in target if isinstance(target, list) else [target]:
            if _is_graph_element(t) and hasattr(t, "dtype"):
                got = np.dtype(_dtypes.as_dtype(t.dtype).base_dtype.as_numpy_dtype)
            else:
                got = _as_ndarray(t).dtype
            if got != expected:
                self.fail(f"dtype {got} is not {expected}")

    def _ordered_ndarray(self, target):
        a = self._get_ndarray(target)
        if a.dtype.kind not in "iuf":
            self.fail(f"{a!r} does not have an ordered numeric type, it has dtype {a.dtype}")
        return a

    def _fail_where(self, a, bad, description):
        where = np.argwhere(bad)
        shown = [tuple(int(j) for j in i) for i in where[:10]]
        self.fail(f"{len(where)} of {a.size} element(s) {description}; first at indices {shown} "
                  f"with values {[_plain(a[i]) for i in shown]}")

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,
                         open_upper_bound=False):
        """Fails unless every element lies within the bounds (inclusive unless ``open_*``); NaN fails."""
        a = self._ordered_ndarray(target)
        nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
        if np.any(nan):
            self._fail_where(a, nan, "are NaN")
        below = np.less_equal(a, lower_bound) if open_lower_bound else np.less(a, lower_bound)
        above = np.greater_equal(a, upper_bound) if open_upper_bound else np.greater(a, upper_bound)
        bad = np.logical_or(below, above)
        if np.any(bad):
            lo, hi = "(" if open_lower_bound else "[", ")" if open_upper_bound else "]"
            self._fail_where(a, bad, f"are outside {lo}{lower_bound}, {upper_bound}{hi}")

    def assertAllInSet(self, target, expected_set):
        """Fails unless every element of ``target`` is in ``expected_set``."""
        a = self._get_ndarray(target)
        allowed = list(expected_set)
        extra = np.setdiff1d(a.ravel(), allowed)
        if extra.size:
            self.fail(f"{extra.size} distinct element(s) not in {set(allowed)!r}: {extra.tolist()}")

    def _assert_all_compare(self, a, comparison_target, op, word):
        arr = self._get_ndarray(a)
        ok = np.asarray(op(arr, comparison_target))
        if not np.all(ok):
            self._fail_where(arr, np.logical_not(ok), f"are not {word} {comparison_target!r}")

    def assertAllGreater(self, a, comparison_target):
        """Fails unless every element of ``a`` is > ``comparison_target``."""
        self._assert_all_compare(a, comparison_target, np.greater, "greater than")

    def assertAllLess(self, a, comparison_target):
        """Fails unless every element of ``a`` is < ``comparison_target``."""
        self._assert_all_compare(a, comparison_target, np.less, "less than")

    def assertAllGreaterEqual(self, a, comparison_target):
        """Fails unless every element of ``a`` is >= ``comparison_target``."""
        self._assert_all_compare(a, comparison_target, np.greater_equal, "greater than or equal to")

    def assertAllLessEqual(self, a, comparison_target):
        """Fails unless every element of ``a`` is <= ``comparison_target``."""
        self._assert_all_compare(a, comparison_target, np.less_equal, "less than or equal to")

    # exceptions -------------------------------------------------------------------

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):
        """Context manager: the block must raise ``exception_type`` whose message matches the regex (searched in
        the message plus the failing op's name) or for which the predicate returns true."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            pattern = expected_err_re_or_predicate

            def predicate(e):
                text = e.message if isinstance(e, _errors.OpError) else str(e)
                op = getattr(e, "op", None) if isinstance(e, _errors.OpError) else None
                if op is not None:
                    text += "\nCaused by: " + (op if isinstance(op, str) else getattr(op, "name", str(op)))
                return re.search(pattern, text) is not None

        names = (exception_type.__name__ if isinstance(exception_type, type)
                 else " or ".join(t.__name__ for t in exception_type))
        try:
            yield
        except Exception as e:  # any other exception (or a non-matching one) fails the assertion
            if not isinstance(e, exception_type) or not predicate(e):
                raise AssertionError(f"Exception of type {type(e)}: {e}") from e
            return
        self.fail(f"{names} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        """``assertRaisesWithPredicateMatch(tf.errors.OpError, ...)``."""
        return self.assertRaisesWithPredicateMatch(_errors.OpError, expected_err_re_or_predicate)

    def assertRaisesWithLiteralMatch(self, expected_exception, expected_exception_message, *args, **kwargs):
        """Like ``assertRaises``, but the message must equal ``expected_exception_message`` exactly."""

        def check(e):
            if str(e) != expected_exception_message:
                raise AssertionError(f"exception message {str(e)!r} != {expected_exception_message!r}") from e
            return True

        ctx = self.assertRaisesWithPredicateMatch(expected_exception, check)
        if args:
            with ctx:
                args[0](*args[1:], **kwargs)
            return None
        return ctx

    def assertRaisesIncompatibleShapesError(self, exception_type=_errors.InvalidArgumentError):
        """Context manager: the block must raise ``exception_type`` about incompatible shapes."""
        return self.assertRaisesWithPredicateMatch(
            exception_type,
            r"Incompatible shapes|Dimensions must be equal|required broadcastable shapes",
        )

    # protos -------------------------------------------------------------------------

    def assertProtoEquals(self, expected_message_maybe_ascii, message, msg=None):
        """Fails unless ``message`` equals the expected protobuf message, given either as a message of the same
        type or as its text format."""
        from google.protobuf import text_format

        if isinstance(expected_message_maybe_ascii, type(message)):
            expected = expected_message_maybe_ascii
        elif isinstance(expected_message_maybe_ascii, (str, bytes)):
            expected = type(message)()
            text = expected_message_maybe_ascii
            text_format.Merge(text.decode() if isinstance(text, bytes) else text, expected)
        else:
            self.fail(f"cannot compare protos of types {type(expected_message_maybe_ascii).__name__} and "
                      f"{type(message).__name__}")
        if expected == message:
            return
        want = text_format.MessageToString(expected).splitlines()
        got = text_format.MessageToString(message).splitlines()
        diff = "\n".join(difflib.unified_diff(want, got, "expected", "actual", lineterm=""))
        self.fail(f"{msg + ': ' if msg else ''}protos differ:\n{diff or '(same text, different unknown fields)'}")

    def assertStartsWith(self, actual, expected_start, msg=None):
        """Fails unless ``actual`` starts with ``expected_start``."""
        if not actual.startswith(expected_start):
            self.fail(f"{actual!r} does not start with {expected_start!r}{' : ' + str(msg) if msg else ''}")

    def assertNotStartsWith(self, actual, unexpected_start, msg=None):
        """Fails if ``actual`` starts with ``unexpected_start``."""
        if actual.startswith(unexpected_start):
            self.fail(f"{actual!r} starts with {unexpected_start!r}{' : ' + str(msg) if msg else ''}")

    def assertEndsWith(self, actual, expected_end, msg=None):
        """Fails unless ``actual`` ends with ``expected_end``."""
        if not actual.endswith(expected_end):
            self.fail(f"{actual!r} does not end with {expected_end!r}{' : ' + str(msg) if msg else ''}")

    def assertNotEndsWith(self, actual, unexpected_end, msg=None):
        """Fails if ``actual`` ends with ``unexpected_end``."""
        if actual.endswith(unexpected_end):
            self.fail(f"{actual!r} ends with {unexpected_end!r}{' : ' + str(msg) if msg else ''}")

    # a few container helpers TensorFlow tests use (from absltest) -------------------

    def assertLen(self, container, expected_len, msg=None):
        """Fails unless ``len(container) == expected_len``."""
        if len(container) != expected_len:
            self.fail(f"{msg + ': ' if msg else ''}{container!r} has length {len(container)}, "
                      f"expected {expected_len}")

    def assertEmpty(self, container, msg=None):
        """Fails unless ``container`` is empty."""
        if len(container):
            self.fail(f"{msg + ': ' if msg else ''}{container!r} has length {len(container)}, expected empty")

    def assertNotEmpty(self, container, msg=None):
        """Fails if ``container`` is empty."""
        if not len(container):
            self.fail(f"{msg + ': ' if msg else ''}{container!r} is empty")

    def assertItemsEqual(self, first, second, msg=None):
        """The same elements with the same counts, in any order (``assertCountEqual``)."""
        self.assertCountEqual(first, second, msg)

    def assertSameElements(self, expected_seq, actual_seq, msg=None):
        """The same set of distinct elements (counts ignored)."""
        expected, actual = list(expected_seq), list(actual_seq)
        missing = [e for e in expected if e not in actual]
        unexpected = [a for a in actual if a not in expected]
        if missing or unexpected:
            self.fail(f"{msg + ': ' if msg else ''}expected but missing: {missing!r}; unexpected: {unexpected!r}")

    def assertBetween(self, value, minv, maxv, msg=None):
        """Fails unless ``minv <= value <= maxv``."""
        if not minv <= value <= maxv:
            self.fail(f"{msg + ': ' if msg else ''}{value!r} is not between {minv!r} and {maxv!r}")


def _is_structured(x):
    """Whether a list/tuple holds further dicts, lists or tuples (so it cannot be one array)."""
    return any(isinstance(v, (collections.abc.Mapping, list, tuple)) for v in x)


# -- graph comparison ---------------------------------------------------------------

_SHARDED_SAVE_TEMP = re.compile(rb"_temp_[0-9a-z]{32}/part")
_TABLE_SHARED_NAME = re.compile(rb"^hash_table_[0-9a-z\-]+$")
_HASH_TABLE_OPS = ("HashTable", "HashTableV2", "MutableHashTable", "MutableHashTableV2",
                   "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2")


def _strip_randomized_checkpoint_names(graph_def):
    """Drops the value of string constants holding a sharded save's random temporary file name."""
    for node in graph_def.node:
        if "value" not in node.attr:
            continue
        tensor = node.attr["value"].tensor
        if len(tensor.string_val) == 1 and _SHARDED_SAVE_TEMP.search(tensor.string_val[0]):
            del node.attr["value"]


def _strip_hash_table_shared_names(graph_def):
    for node in graph_def.node:
        if node.op in _HASH_TABLE_OPS and "shared_name" in node.attr:
            if _TABLE_SHARED_NAME.match(node.attr["shared_name"].s):
                del node.attr["shared_name"]


def _attr_equal(a, b):
    if a == b:
        return True
    # Tensors may spell the same value differently (tensor_content vs. repeated *_val fields).
    if a.WhichOneof("value") == "tensor" and b.WhichOneof("value") == "tensor":
        from ferroflow.framework import tensor_util

        ta, tb = a.tensor, b.tensor
        if ta.dtype != tb.dtype:
            return False
        try:
            va, vb = tensor_util.make_ndarray(ta), tensor_util.make_ndarray(tb)
        except Exception:  # undecodable: the protos already compared unequal
            return False
        return va.shape == vb.shape and va.dtype == vb.dtype and bool(np.array_equal(va, vb))
    return False


def _node_summary(node):
    inputs = ", ".join(node.input)
    return f"{node.name} = {node.op}({inputs})"


def _node_difference(actual, expected):
    """A description of how two NodeDefs of the same name differ, or None."""
    name = actual.name
    if actual.op != expected.op:
        return f"node '{name}' has op '{actual.op}', expected '{expected.op}'"
    if actual.device != expected.device:
        return f"node '{name}' has device '{actual.device}', expected '{expected.device}'"
    a_data = [i for i in actual.input if not i.startswith("^")]
    e_data = [i for i in expected.input if not i.startswith("^")]
    if a_data != e_data:
        return f"node '{name}' has inputs {a_data}, expected {e_data}"
    a_ctrl = {i for i in actual.input if i.startswith("^")}
    e_ctrl = {i for i in expected.input if i.startswith("^")}
    if a_ctrl != e_ctrl:
        return (f"node '{name}' control inputs differ: unexpected {sorted(a_ctrl - e_ctrl)}, "
                f"missing {sorted(e_ctrl - a_ctrl)}")
    a_attrs = {k for k in actual.attr if not k.startswith("_")}
    e_attrs = {k for k in expected.attr if not k.startswith("_")}
    if a_attrs != e_attrs:
        return (f"node '{name}' attrs differ: unexpected {sorted(a_attrs - e_attrs)}, "
                f"missing {sorted(e_attrs - a_attrs)}")
    for key in sorted(a_attrs):
        if not _attr_equal(actual.attr[key], expected.attr[key]):
            return (f"node '{name}' attr '{key}' is {str(actual.attr[key]).strip()!r}, "
                    f"expected {str(expected.attr[key]).strip()!r}")
    return None


def assert_equal_graph_def(actual, expected, checkpoint_v2=False, hash_table_shared_name=False):
    """Raises AssertionError describing the first difference between two GraphDefs' nodes (matched by name, in
    any order; attributes starting with ``_`` and the ``versions``/``library`` fields are ignored).

    ``checkpoint_v2`` ignores the random temporary file name of sharded V2 saves; ``hash_table_shared_name``
    ignores the generated ``shared_name`` of hash tables. The arguments are not modified.
    """
    from ferroflow.core.framework import graph_pb2

    if not isinstance(actual, graph_pb2.GraphDef):
        raise TypeError(f"Expected tf.GraphDef for actual, got {type(actual).__name__}")
    if not isinstance(expected, graph_pb2.GraphDef):
        raise TypeError(f"Expected tf.GraphDef for expected, got {type(expected).__name__}")
    if checkpoint_v2 or hash_table_shared_name:
        actual, expected = copy.deepcopy(actual), copy.deepcopy(expected)
        for g in (actual, expected):
            if checkpoint_v2:
                _strip_randomized_checkpoint_names(g)
            if hash_table_shared_name:
                _strip_hash_table_shared_names(g)
    actual_nodes = {n.name: n for n in actual.node}
    expected_nodes = {n.name: n for n in expected.node}
    for node in actual.node:
        if node.name not in expected_nodes:
            raise AssertionError(f"Found unexpected node '{_node_summary(node)}' (not in the expected graph)")
    for node in expected.node:
        if node.name not in actual_nodes:
            raise AssertionError(f"Did not find expected node '{_node_summary(node)}'")
        problem = _node_difference(actual_nodes[node.name], node)
        if problem:
            raise AssertionError(problem)


# -- stubs -----------------------------------------------------------------------------

_NOT_OWN = object()


def _own_attr(parent, name):
    """The raw entry of ``name`` in ``parent.__dict__`` (keeping staticmethod/classmethod wrappers), or
    ``_NOT_OWN`` when the attribute is inherited or ``parent`` has no ``__dict__``."""
    try:
        return vars(parent).get(name, _NOT_OWN)
    except TypeError:
        return _NOT_OWN


def _restore(parent, name, own, value):
    if own is not _NOT_OWN:
        setattr(parent, name, own)
        return
    try:
        delattr(parent, name)  # the stub shadowed an inherited attribute: uncover it again
    except (AttributeError, TypeError):
        pass
    if not hasattr(parent, name):  # e.g. a __slots__ value, which deleting removed for good
        setattr(parent, name, value)


class StubOutForTesting:
    """Replaces attributes of modules, classes or objects for a test and puts the originals back.

    ``Set``/``SmartSet`` record the original (``UnsetAll``/``SmartUnsetAll`` undo them, newest first), ``CleanUp``
    undoes both; also usable as ``with tf.test.StubOutForTesting() as stubs:``.
    """

    def __init__(self):
        self.cache = []
        self.stubs = []

    def __del__(self):
        try:
            self.CleanUp()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, tb):
        self.CleanUp()
        return False

    def Set(self, parent, child_name, new_child):
        """``setattr(parent, child_name, new_child)``, remembering the original (which must exist)."""
        old_value = getattr(parent, child_name)
        self.cache.append((parent, child_name, _own_attr(parent, child_name), old_value))
        setattr(parent, child_name, new_child)

    def SmartSet(self, obj, attr_name, new_attr):
        """Like ``Set``, for modules, classes and instances alike: when the attribute is inherited, the stub is
        set on ``obj`` and later removed again, so inheritance is intact after ``SmartUnsetAll``."""
        if not hasattr(obj, attr_name):
            raise AttributeError(f"{obj!r} has no attribute {attr_name!r} to stub out")
        old_value = getattr(obj, attr_name)
        self.stubs.append((obj, attr_name, _own_attr(obj, attr_name), old_value))
        setattr(obj, attr_name, new_attr)

    def UnsetAll(self):
        """Undoes every ``Set``, the most recent first."""
        while self.cache:
            _restore(*self.cache.pop())

    def SmartUnsetAll(self):
        """Undoes every ``SmartSet``, the most recent first."""
        while self.stubs:
            _restore(*self.stubs.pop())

    def CleanUp(self):
        """Undoes all stubs."""
        self.UnsetAll()
        self.SmartUnsetAll()


# -- benchmarks --------------------------------------------------------------------------

_BENCHMARK_CLASSES = []


def _median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2.0


class Benchmark:
    """Base class for benchmarks: methods named ``benchmark*`` time something and call ``report_benchmark``
    (or ``run_op_benchmark``). ``tf.test.main()`` runs them with ``--benchmarks=REGEX``."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _BENCHMARK_CLASSES.append(cls)

    def __init__(self):
        self._reported = []

    @classmethod
    def is_abstract(cls):
        """True for this base class itself, False for benchmark subclasses."""
        return cls is Benchmark

    def _default_name(self):
        frame = inspect.currentframe()
        while frame is not None:
            if frame.f_locals.get("self") is self and frame.f_code.co_name.startswith("benchmark"):
                return f"{type(self).__name__}.{frame.f_code.co_name}"
            frame = frame.f_back
        return type(self).__name__

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None, extras=None, name=None,
                         metrics=None):
        """Records one result (printed as a line starting with ``benchmark:``). Times are in seconds;
        ``extras`` maps names to numbers or strings; ``metrics`` is a list of ``{"name", "value"}`` dicts."""
        entry = {"name": name or self._default_name()}
        for key, value in (("iters", iters), ("cpu_time", cpu_time), ("wall_time", wall_time),
                           ("throughput", throughput), ("extras", extras), ("metrics", metrics)):
            if value is not None:
                entry[key] = value
        self.__dict__.setdefault("_reported", []).append(entry)
        fields = " ".join(f"{k}={v!r}" for k, v in entry.items() if k != "name")
        print(f"benchmark: {entry['name']} {fields}".rstrip(), flush=True)

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2, min_iters=10, store_trace=False,
                         store_memory_usage=True, name=None, extras=None, mbs=0):
        """Runs ``op_or_tensor`` ``burn_iters`` times untimed, then ``min_iters`` times timed, and reports the
        median wall time. ``store_trace`` adds a Chrome trace of one more run to the extras (ferroflow records
        no memory usage, so ``store_memory_usage`` adds nothing). Returns the reported values as a dict."""
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(max(1, min_iters)):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.perf_counter() - start)
        extras = dict(extras) if extras is not None else {}
        if store_trace:
            from ferroflow.client.timeline import Timeline
            from ferroflow.core.protobuf import config_pb2

            run_metadata = config_pb2.RunMetadata()
            sess.run(op_or_tensor, feed_dict=feed_dict,
                     options=config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE),
                     run_metadata=run_metadata)
            extras["full_trace_chrome_format"] = Timeline(run_metadata.step_stats).generate_chrome_trace_format()
        wall_time = _median(deltas)
        values = {"iters": len(deltas), "wall_time": wall_time, "extras": extras, "name": name,
                  "throughput": mbs / wall_time if wall_time > 0 else 0.0}
        self.report_benchmark(**values)
        return values

    def evaluate(self, tensors):
        """The values of ``tensors``, run in the default session (else in a temporary one)."""
        return _run_in_some_session(tensors)


def _run_benchmarks(regex):
    """Runs the ``benchmark*`` methods of every concrete Benchmark subclass whose ``module.Class.method`` name
    matches ``regex`` (``"all"`` or ``"."`` for every one)."""
    for cls in list(_BENCHMARK_CLASSES):
        if cls.is_abstract():
            continue
        instance = None
        for attr in sorted(dir(cls)):
            if not attr.startswith("benchmark"):
                continue
            full_name = f"{cls.__module__}.{cls.__name__}.{attr}"
            if regex != "all" and not re.search(regex, full_name):
                continue
            method = getattr(cls, attr)
            if not callable(method):
                continue
            if instance is None:
                instance = cls()
            getattr(instance, attr)()
