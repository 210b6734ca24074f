"""tf.test: TestCase (sessions, evaluate, assertions), graph comparison, stubs, benchmarks and helpers."""

from __future__ import annotations

import collections
import inspect
import json
import os
import sys
import types
import unittest

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf_v1
from ferroflow.test_util import gradient_checker

Point = collections.namedtuple("Point", ["x", "y"])
Pair = collections.namedtuple("Pair", ["first", "second"])


def _run(case_cls, *method_names):
    """Runs the named methods of a TestCase class with unittest; returns the TestResult."""
    result = unittest.TestResult()
    for name in method_names:
        case_cls(name).run(result)
    return result


def _outcome(result):
    return {
        "failures": [t.id().rsplit(".", 1)[-1] for t, _ in result.failures],
        "errors": [t.id().rsplit(".", 1)[-1] for t, _ in result.errors],
        "skipped": [t.id().rsplit(".", 1)[-1] for t, _ in result.skipped],
        "run": result.testsRun,
    }


def _failure_text(result, name):
    for t, tb in result.failures:
        if t.id().endswith("." + name):
            return tb
    raise AssertionError(f"{name} did not fail: {_outcome(result)}")


@pytest.fixture
def case():
    """A bare TestCase instance for calling assertions directly."""
    tc = tf.test.TestCase()
    tc.setUp()
    yield tc
    tc.tearDown()


# -- API surface -------------------------------------------------------------------


def test_api_names_present_in_ferroflow_and_compat_v1(fixtures):
    manifest = json.loads((fixtures / "api" / "tf_compat_v1_api.json").read_text())["modules"]["test"]
    expected = set(manifest)
    for mod in (tf.test, tf_v1.test, tf.compat.v1.test):
        missing = sorted(n for n in expected if not hasattr(mod, n))
        assert not missing, missing
    assert tf_v1.test is tf.test
    for name in sorted(expected):
        obj = getattr(tf.test, name)
        target = obj.__init__ if isinstance(obj, type) else obj
        args = [p for p in inspect.signature(target).parameters if p != "self"]
        assert args == manifest[name]["args"], (name, args)
    assert tf.test.compute_gradient is gradient_checker.compute_gradient
    assert tf_v1.test.compute_gradient_error is gradient_checker.compute_gradient_error
    members = manifest["TestCase"]["members"]
    for name in ("assertAllClose", "assertAllEqual", "assertRaisesOpError", "assertProtoEquals", "cached_session",
                 "session", "test_session", "evaluate", "get_temp_dir", "assertAllInRange", "assertShapeEqual"):
        assert name in members and callable(getattr(tf.test.TestCase, name)), name


def test_platform_helpers():
    assert tf.test.is_gpu_available() is False
    assert tf.test.is_gpu_available(cuda_only=True, min_cuda_compute_capability=(3, 5)) is False
    assert tf.test.gpu_device_name() == ""
    for fn in (tf.test.is_built_with_cuda, tf.test.is_built_with_rocm, tf.test.is_built_with_gpu_support,
               tf.test.is_built_with_xla):
        assert fn() is False
    import platform

    host = platform.machine().lower()
    host_target = "x86" if host in ("x86_64", "amd64", "i686", "i386") else host
    assert tf.test.is_cpu_target_available(host_target) is True
    assert tf.test.is_cpu_target_available("definitely_not_a_cpu") is False
    path = tf.test.test_src_dir_path("core/framework/graph.proto")
    assert os.path.isfile(path)
    assert os.path.dirname(os.path.dirname(os.path.dirname(path))) == os.path.dirname(tf.__file__)
    config = tf.test.benchmark_config()
    assert isinstance(config, tf.ConfigProto)
    assert config.graph_options.rewrite_options.dependency_optimization == 2  # OFF
    d = tf.test.get_temp_dir()
    assert os.path.isdir(d) and tf.test.get_temp_dir() == d


def test_with_eager_op_as_function_is_identity():
    class C(tf.test.TestCase):
        pass

    assert tf.test.with_eager_op_as_function(C) is C
    assert tf.test.with_eager_op_as_function(only_as_function=True)(C) is C


# -- TestCase fixture and sessions -----------------------------------------------------


def test_setup_gives_fresh_graph_and_cached_session_is_per_test():
    seen = {}

    class T(tf.test.TestCase):
        def _body(self, key):
            g = tf.get_default_graph()
            self.assertEqual(g.get_operations(), [])
            c = tf.constant(2.0, name="c")
            self.assertEqual(c.op.name, "c")  # not c_1: nothing left from a previous test
            with self.cached_session() as s1:
                self.assertIs(tf.get_default_session(), s1)
                self.assertEqual(self.evaluate(c), 2.0)
            with self.cached_session() as s2:
                self.assertIs(s1, s2)
            self.assertIsNone(tf.get_default_session())
            self.assertEqual(self.evaluate(c), 2.0)
            self.assertIs(self._cached_session, s1)  # evaluate reused the cached session
            seen[key] = (g, s1)

        def test_a(self):
            self._body("a")

        def test_b(self):
            self._body("b")

    tf.constant(1.0, name="c")  # left in the outer default graph: setUp must drop it
    result = _run(T, "test_a", "test_b")
    assert _outcome(result) == {"failures": [], "errors": [], "skipped": [], "run": 2}, result.failures + result.errors
    (ga, sa), (gb, sb) = seen["a"], seen["b"]
    assert ga is not gb
    assert sa is not sb
    assert sa._closed and sb._closed  # tearDown closes the cached session


def test_cached_session_rejects_another_graph_and_session_is_new(case):
    with case.cached_session():
        pass
    with pytest.raises(ValueError, match="another graph"):
        with case.cached_session(graph=tf.Graph()):
            pass
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1, 2], name="x")
    with case.session(graph=g) as s1:
        assert tf.get_default_session() is s1 and tf.get_default_graph() is g
        np.testing.assert_array_equal(case.evaluate(x), [1, 2])
    with case.session(graph=g) as s2:
        assert s2 is not s1
    assert s1._closed and s2._closed
    with pytest.raises(RuntimeError, match="GPU"):
        with case.session(force_gpu=True):
            pass


def test_test_session_is_skipped_when_collected_and_works_as_helper():
    class T(tf.test.TestCase):
        def test_uses_it(self):
            with self.test_session() as sess:
                self.assertIs(sess, tf.get_default_session())
                self.assertEqual(sess.run(tf.constant(3)), 3)

    loader_names = unittest.TestLoader().getTestCaseNames(T)
    assert "test_session" in loader_names  # unittest collects it because of the name ...
    result = _run(T, "test_session", "test_uses_it")
    out = _outcome(result)
    assert out["skipped"] == ["test_session"]  # ... and it skips itself
    assert out["failures"] == [] and out["errors"] == []


def test_get_temp_dir_per_test(case):
    d = case.get_temp_dir()
    assert os.path.isdir(d)
    assert case.get_temp_dir() == d
    assert os.path.dirname(d) == tf.test.get_temp_dir()
    other = tf.test.TestCase()
    assert other.get_temp_dir() != d


def test_evaluate_nested_structures(case):
    v = tf.Variable([1.0, 2.0], name="v")
    c = tf.constant(3, name="c")
    with case.cached_session() as sess:
        sess.run(tf.global_variables_initializer())
        out = case.evaluate({"a": (v, [c]), "p": Point(x=c, y=v * 2.0)})
    assert set(out) == {"a", "p"}
    np.testing.assert_array_equal(out["a"][0], [1.0, 2.0])
    assert out["a"][1] == [3]
    assert isinstance(out["p"], Point)
    np.testing.assert_array_equal(out["p"].y, [2.0, 4.0])
    assert out["p"].x == 3


def test_evaluate_without_default_session_on_other_graph(case):
    g = tf.Graph()
    with g.as_default():
        t = tf.constant([[1.0]]) * 4.0
    np.testing.assert_array_equal(case.evaluate(t), [[4.0]])


# -- assertions through unittest: pass and fail outcomes ------------------------------


def test_assertions_pass_and_fail_through_unittest():
    class T(tf.test.TestCase):
        def test_close_ok(self):
            self.assertAllClose({"w": [1.0, 2.0], "b": (3.0, Point(1, [2.0, 3.0]))},
                                {"w": np.array([1.0, 2.0 + 1e-7]), "b": (3.0, Point(1, np.array([2.0, 3.0])))})
            self.assertAllClose(tf.constant([1.5, 2.5]), [1.5, 2.5])

        def test_close_bad(self):
            self.assertAllClose([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.5]])

        def test_equal_ok(self):
            self.assertAllEqual([[1, 2], [3, 4]], np.array([[1, 2], [3, 4]]))
            self.assertAllEqual([np.nan, 1.0], [np.nan, 1.0])

        def test_equal_bad(self):
            self.assertAllEqual([1, 2, 3], [1, 5, 3])

        def test_near_ok(self):
            self.assertNear(1.0, 1.05, 0.1)

        def test_near_bad(self):
            self.assertNear(1.0, 1.5, 0.1)

        def test_range_ok(self):
            self.assertAllInRange([0.0, 0.5, 1.0], 0.0, 1.0)

        def test_range_bad(self):
            self.assertAllInRange([0.0, 0.5, 1.0], 0.0, 1.0, open_upper_bound=True)

        def test_op_error_ok(self):
            v = tf.Variable(1.0, name="never_initialized")
            with self.cached_session() as sess:
                with self.assertRaisesOpError("uninitialized"):
                    sess.run(v)

        def test_op_error_not_raised(self):
            with self.cached_session() as sess:
                with self.assertRaisesOpError("uninitialized"):
                    sess.run(tf.constant(1.0))

        def test_op_error_wrong_message(self):
            v = tf.Variable(1.0)
            with self.cached_session() as sess:
                with self.assertRaisesOpError("some other text"):
                    sess.run(v)

        def test_proto_ok(self):
            self.assertProtoEquals("name: 'n' op: 'Const' input: 'a' input: '^b'",
                                   tf.NodeDef(name="n", op="Const", input=["a", "^b"]))

        def test_proto_bad(self):
            self.assertProtoEquals("name: 'n' op: 'Const'", tf.NodeDef(name="n", op="Identity"))

    result = _run(T, *sorted(unittest.TestLoader().getTestCaseNames(T)))
    out = _outcome(result)
    assert out["errors"] == [], result.errors
    assert sorted(out["failures"]) == sorted(
        ["test_close_bad", "test_equal_bad", "test_near_bad", "test_range_bad", "test_op_error_not_raised",
         "test_op_error_wrong_message", "test_proto_bad"]
    ), result.failures
    # The messages point at the mismatch.
    close = _failure_text(result, "test_close_bad")
    assert "(1, 1)" in close and "4.0" in close and "4.5" in close
    equal = _failure_text(result, "test_equal_bad")
    assert "(1,)" in equal and "2" in equal and "5" in equal
    assert "1.0 != 1.5 +/- 0.1" in _failure_text(result, "test_near_bad")
    assert "[0.0, 1.0)" in _failure_text(result, "test_range_bad")
    assert "OpError not raised" in _failure_text(result, "test_op_error_not_raised")
    assert "FailedPreconditionError" in _failure_text(result, "test_op_error_wrong_message")
    proto = _failure_text(result, "test_proto_bad")
    assert '-op: "Const"' in proto and '+op: "Identity"' in proto


# -- assertions called directly ------------------------------------------------------------


def test_assert_all_close_structures_and_tolerances(case):
    case.assertAllClose(1.0, 1.0 + 5e-7)
    case.assertAllClose([1.0, 2.0], [1.1, 2.1], atol=0.2)
    case.assertAllClose(100.0, 101.0, rtol=0.02, atol=0)
    case.assertAllClose([{"a": 1.0}, (2.0, [3.0])], [{"a": 1.0}, (2.0, [3.0])])
    case.assertAllClose(np.array([np.nan, 1.0]), [np.nan, 1.0])
    case.assertAllClose([True, False], np.array([True, False]))
    with pytest.raises(AssertionError, match="shape mismatch"):
        case.assertAllClose([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(AssertionError, match="dict keys differ"):
        case.assertAllClose({"a": 1.0}, {"b": 1.0})
    with pytest.raises(AssertionError, match="dict with a non-dict"):
        case.assertAllClose({"a": 1.0}, [1.0])
    with pytest.raises(AssertionError, match="length mismatch"):
        case.assertAllClose([{"a": 1.0}], [{"a": 1.0}, {"a": 1.0}])
    with pytest.raises(AssertionError, match="namedtuple fields differ"):
        case.assertAllClose(Point(1.0, 2.0), Pair(1.0, 2.0))
    with pytest.raises(AssertionError, match=r"\['b'\]\[1\]"):
        case.assertAllClose({"a": [1.0], "b": (0.0, {"c": 1.0})}, {"a": [1.0], "b": (0.0, {"c": 1.5})})
    with pytest.raises(AssertionError, match="custom note"):
        case.assertAllClose(1.0, 2.0, msg="custom note")
    case.assertNotAllClose([1.0, 2.0], [1.0, 2.5])
    with pytest.raises(AssertionError, match="close at all elements"):
        case.assertNotAllClose([1.0, 2.0], [1.0, 2.0])


def test_assert_all_close_according_to_type(case):
    a16 = np.array([1.0, 2.0], np.float16)
    b16 = np.array([1.0005, 2.0], np.float16)
    case.assertAllCloseAccordingToType(a16, b16)  # half tolerances: 1e-3
    with pytest.raises(AssertionError):
        case.assertAllClose(a16, b16)
    with pytest.raises(AssertionError):
        case.assertAllCloseAccordingToType(np.array([1.0], np.float32), np.array([1.0005], np.float32))
    case.assertAllCloseAccordingToType(np.array([1.0], np.float32), np.array([1.0005], np.float32), float_rtol=1e-3,
                                       float_atol=1e-3)


def test_assert_all_equal_and_not_all_equal(case):
    case.assertAllEqual(3, 3)
    case.assertAllEqual([b"a", b"b"], np.array([b"a", b"b"]))
    case.assertAllEqual(tf.constant([[1, 2]]), [[1, 2]])
    with pytest.raises(AssertionError, match="shape mismatch"):
        case.assertAllEqual([1, 2], [[1, 2]])
    with pytest.raises(AssertionError, match="not equal"):
        case.assertAllEqual(1, 2)
    case.assertNotAllEqual([1, 2], [1, 3])
    with pytest.raises(AssertionError, match="equal at all elements"):
        case.assertNotAllEqual([1, 2], [1, 2])


def test_near_family(case):
    case.assertArrayNear([1.0, 2.0], [1.01, 1.99], 0.02)
    with pytest.raises(AssertionError, match="element 1"):
        case.assertArrayNear([1.0, 2.0], [1.0, 2.5], 0.1)
    with pytest.raises(AssertionError):
        case.assertArrayNear([1.0], [1.0, 2.0], 0.1)
    case.assertNDArrayNear(np.ones((2, 2)), np.ones((2, 2)) + 0.01, 0.05)
    with pytest.raises(AssertionError, match="norm of the difference"):
        case.assertNDArrayNear(np.ones((2, 2)), np.ones((2, 2)) + 0.1, 0.05)


def test_range_set_and_comparisons(case):
    case.assertAllInRange(np.arange(5), 0, 4)
    case.assertAllInRange([0.5], 0.0, 1.0, open_lower_bound=True, open_upper_bound=True)
    with pytest.raises(AssertionError, match=r"outside \(0.0, 1.0\]"):
        case.assertAllInRange([0.0, 0.5], 0.0, 1.0, open_lower_bound=True)
    with pytest.raises(AssertionError, match="NaN"):
        case.assertAllInRange([0.5, np.nan], 0.0, 1.0)
    with pytest.raises(AssertionError, match="ordered numeric"):
        case.assertAllInRange([b"a"], 0, 1)
    case.assertAllInSet([[1, 2], [2, 1]], {1, 2})
    with pytest.raises(AssertionError, match=r"\[3\]"):
        case.assertAllInSet([1, 2, 3], [1, 2])
    case.assertAllGreater([2, 3], 1)
    case.assertAllGreaterEqual([1, 3], 1)
    case.assertAllLess([0.5, -1.0], 1.0)
    case.assertAllLessEqual([1.0, -1.0], 1.0)
    with pytest.raises(AssertionError, match=r"1 of 2 element\(s\) are not greater than 1"):
        case.assertAllGreater([1, 3], 1)
    with pytest.raises(AssertionError, match="not less than"):
        case.assertAllLess([[0.0, 2.0]], 1.0)
    with pytest.raises(AssertionError):
        case.assertAllGreaterEqual(0, 1)
    with pytest.raises(AssertionError):
        case.assertAllLessEqual(np.array([2.0]), 1.0)


def test_shape_dtype_and_string_assertions(case):
    t = tf.placeholder(tf.float32, [2, 3])
    case.assertShapeEqual(np.zeros((2, 3)), t)
    case.assertShapeEqual(np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(AssertionError, match="shapes differ"):
        case.assertShapeEqual(np.zeros((3, 2)), t)
    with pytest.raises(TypeError):
        case.assertShapeEqual([1, 2], t)
    case.assertDTypeEqual(np.zeros(2, np.float32), np.float32)
    case.assertDTypeEqual(np.zeros(2, np.int64), tf.int64)
    case.assertDTypeEqual(t, tf.float32)
    case.assertDTypeEqual([np.zeros(1, np.int32), np.ones(1, np.int32)], np.int32)
    with pytest.raises(AssertionError):
        case.assertDTypeEqual(np.zeros(2, np.float64), np.float32)
    case.assertStartsWith("prefix/name", "prefix/")
    with pytest.raises(AssertionError, match="does not start with"):
        case.assertStartsWith("name", "prefix/")
    case.assertLen([1, 2], 2)
    case.assertEmpty([])
    with pytest.raises(AssertionError):
        case.assertNotEmpty(())
    case.assertItemsEqual([1, 2, 2], [2, 1, 2])


def test_raises_with_predicate_match(case):
    with case.assertRaisesWithPredicateMatch(ValueError, lambda e: "bad" in str(e)):
        raise ValueError("bad value")
    with pytest.raises(AssertionError, match="Exception of type"):
        with case.assertRaisesWithPredicateMatch(ValueError, lambda e: False):
            raise ValueError("bad value")
    with pytest.raises(AssertionError, match="Exception of type .*KeyError"):
        with case.assertRaisesWithPredicateMatch(ValueError, "x"):
            raise KeyError("x")
    with pytest.raises(AssertionError, match="ValueError not raised"):
        with case.assertRaisesWithPredicateMatch(ValueError, "x"):
            pass
    a = tf.placeholder(tf.float32, [None])
    b = tf.placeholder(tf.float32, [None])
    with case.cached_session() as sess:
        with case.assertRaisesIncompatibleShapesError():
            sess.run(a + b, {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})
        with case.assertRaisesOpError(r"Caused by: add"):  # the failing op's name is searched too
            sess.run(a + b, {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})
    with case.assertRaisesWithLiteralMatch(KeyError, "'k'"):
        {}["k"]


def test_assert_proto_equals_accepts_messages_and_bytes(case):
    node = tf.NodeDef(name="n", op="Const")
    case.assertProtoEquals(tf.NodeDef(name="n", op="Const"), node)
    case.assertProtoEquals(b"name: 'n' op: 'Const'", node)
    with pytest.raises(AssertionError, match="protos differ"):
        case.assertProtoEquals(tf.NodeDef(name="m", op="Const"), node)
    with pytest.raises(AssertionError, match="cannot compare"):
        case.assertProtoEquals(3, node)


# -- graph comparison --------------------------------------------------------------------


def _build(value=1.0, reverse=False, device=""):
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        if reverse:
            b = tf.placeholder(tf.float32, [2], name="b")
            a = tf.constant([value, 2.0], name="a")
        else:
            a = tf.constant([value, 2.0], name="a")
            b = tf.placeholder(tf.float32, [2], name="b")
        s = tf.add(a, b, name="sum")
        with tf.control_dependencies([s]):
            tf.identity(b, name="out")
    return g.as_graph_def()


def test_assert_equal_graph_def():
    tf.test.assert_equal_graph_def(_build(), _build())
    tf.test.assert_equal_graph_def(_build(), _build(reverse=True))  # node order does not matter
    with pytest.raises(AssertionError, match="node 'a' attr 'value'"):
        tf.test.assert_equal_graph_def(_build(1.0), _build(5.0))
    extra = _build()
    extra.node.add(name="extra", op="NoOp")
    with pytest.raises(AssertionError, match="unexpected node 'extra"):
        tf.test.assert_equal_graph_def(extra, _build())
    with pytest.raises(AssertionError, match="Did not find expected node 'extra"):
        tf.test.assert_equal_graph_def(_build(), extra)
    swapped = _build()
    next(n for n in swapped.node if n.name == "sum").input[:] = ["b", "a"]
    with pytest.raises(AssertionError, match="node 'sum' has inputs"):
        tf.test.assert_equal_graph_def(swapped, _build())
    with pytest.raises(TypeError, match="actual"):
        tf.test.assert_equal_graph_def(_build().SerializeToString(), _build())
    with pytest.raises(TypeError, match="expected"):
        tf.test.assert_equal_graph_def(_build(), tf.NodeDef())


def test_assert_equal_graph_def_strips_random_names_without_mutating():
    def with_temp(name):
        g = tf.GraphDef()
        n = g.node.add(name="filename", op="Const")
        n.attr["dtype"].type = tf.string.as_datatype_enum
        t = n.attr["value"].tensor
        t.dtype = tf.string.as_datatype_enum
        t.string_val.append(f"model_temp_{name}/part".encode())
        return g

    g1, g2 = with_temp("a" * 32), with_temp("b" * 32)
    with pytest.raises(AssertionError):
        tf.test.assert_equal_graph_def(g1, g2)
    tf.test.assert_equal_graph_def(g1, g2, checkpoint_v2=True)
    assert "value" in g1.node[0].attr  # the caller's protos are untouched
    tables = []
    for suffix in ("1", "2"):
        g = tf.GraphDef()
        n = g.node.add(name="table", op="HashTableV2")
        n.attr["shared_name"].s = f"hash_table_{suffix}".encode()
        tables.append(g)
    with pytest.raises(AssertionError):
        tf.test.assert_equal_graph_def(*tables)
    tf.test.assert_equal_graph_def(*tables, hash_table_shared_name=True)


# -- gradients ---------------------------------------------------------------------------


def test_compute_gradient_error_via_tf_test():
    x = tf.placeholder(tf.float64, [3, 2], name="x")
    err = tf.test.compute_gradient_error(x, [3, 2], tf.square(x), [3, 2])
    assert err < 1e-3
    a = tf.placeholder(tf.float64, [2, 3], name="a")
    b = tf.constant(np.arange(12.0).reshape(3, 4))
    err = tf_v1.test.compute_gradient_error(a, [2, 3], tf.matmul(a, b), [2, 4])
    assert err < 1e-3
    theoretical, numerical = tf.test.compute_gradient(x, [3, 2], tf.square(x), [3, 2])
    assert theoretical.shape == (6, 6)
    np.testing.assert_allclose(theoretical, numerical, atol=1e-3)


def test_gradient_check_inside_a_test_case():
    class T(tf.test.TestCase):
        def test_grad(self):
            with self.cached_session():
                x = tf.constant([1.0, 2.0], dtype=tf.float64)
                y = x * x * 3.0
                self.assertLess(tf.test.compute_gradient_error(x, [2], y, [2]), 1e-3)

    out = _outcome(_run(T, "test_grad"))
    assert out == {"failures": [], "errors": [], "skipped": [], "run": 1}


# -- stubs ---------------------------------------------------------------------------------


def test_stub_out_for_testing_restores():
    mod = types.ModuleType("stub_target")
    mod.value = 1

    class Base:
        def greet(self):
            return "base"

        @staticmethod
        def helper():
            return "static"

    class Child(Base):
        pass

    obj = Child()
    stubs = tf.test.StubOutForTesting()
    stubs.Set(mod, "value", 2)
    stubs.Set(mod, "value", 3)
    stubs.Set(Base, "helper", lambda: "stubbed")
    stubs.SmartSet(obj, "greet", lambda: "instance stub")
    stubs.SmartSet(Child, "greet", lambda self: "class stub")
    assert mod.value == 3
    assert Base.helper() == "stubbed"
    assert obj.greet() == "instance stub"
    assert Child().greet() == "class stub"
    with pytest.raises(AttributeError):
        stubs.Set(mod, "missing", 1)
    with pytest.raises(AttributeError):
        stubs.SmartSet(obj, "missing", 1)
    stubs.UnsetAll()
    assert mod.value == 1
    assert Base.helper() == "static" and isinstance(Base.__dict__["helper"], staticmethod)
    assert obj.greet() == "instance stub"  # SmartSet stubs stay until SmartUnsetAll
    stubs.SmartUnsetAll()
    assert obj.greet() == "base" and "greet" not in vars(obj)
    assert "greet" not in vars(Child)  # inheritance restored, not a copied attribute
    with tf.test.StubOutForTesting() as s:
        s.Set(os.path, "sep", "!")
        s.SmartSet(sys, "maxsize", 7)
        assert os.path.sep == "!" and sys.maxsize == 7
    assert os.path.sep == "/" and sys.maxsize > 7


# -- skipping ---------------------------------------------------------------------------------


def test_disable_with_predicate():
    flag = {"skip": True}
    ran = []

    class T(tf.test.TestCase):
        @tf.test.disable_with_predicate(lambda: flag["skip"], "not on this platform")
        def test_maybe(self):
            ran.append(1)

    out = _outcome(_run(T, "test_maybe"))
    assert out["skipped"] == ["test_maybe"] and ran == []
    result = unittest.TestResult()
    T("test_maybe").run(result)
    assert result.skipped[0][1] == "not on this platform"
    flag["skip"] = False
    out = _outcome(_run(T, "test_maybe"))
    assert out["skipped"] == [] and out["failures"] == [] and ran == [1]

    @tf.test.disable_with_predicate(lambda: True, "whole class")
    class U(tf.test.TestCase):
        def test_x(self):
            ran.append(2)

    assert _outcome(_run(U, "test_x"))["skipped"] == ["test_x"] and ran == [1]


# -- benchmarks ---------------------------------------------------------------------------------


def test_benchmark_run_op_benchmark(capsys):
    class MyBench(tf.test.Benchmark):
        def benchmark_square(self):
            x = tf.constant(np.ones((64, 64), np.float32))
            y = tf.matmul(x, x)
            with tf.Session() as sess:
                return self.run_op_benchmark(sess, y, burn_iters=1, min_iters=5, extras={"k": 1}, mbs=1)

    assert tf.test.Benchmark.is_abstract() and not MyBench.is_abstract()
    values = MyBench().benchmark_square()
    assert values["wall_time"] > 0
    assert values["iters"] == 5
    assert values["extras"] == {"k": 1}
    assert values["throughput"] == pytest.approx(1 / values["wall_time"])
    out = capsys.readouterr().out
    assert "benchmark: MyBench.benchmark_square" in out and "iters=5" in out

    bench = MyBench()
    with tf.Session() as sess:
        traced = bench.run_op_benchmark(sess, tf.constant(2.0) * 3.0, min_iters=2, store_trace=True, name="traced")
    trace = json.loads(traced["extras"]["full_trace_chrome_format"])
    assert trace["traceEvents"]
    bench.report_benchmark(iters=3, wall_time=0.5, name="manual", extras={"note": "x"})
    assert bench._reported[-1] == {"name": "manual", "iters": 3, "wall_time": 0.5, "extras": {"note": "x"}}
    c = tf.constant([1, 2])
    with tf.Session() as sess, sess.as_default():
        np.testing.assert_array_equal(bench.evaluate(c), [1, 2])
    np.testing.assert_array_equal(bench.evaluate({"c": c})["c"], [1, 2])


def test_main_runs_selected_benchmarks():
    calls = []

    class SelectedBench(tf.test.Benchmark):
        def benchmark_one(self):
            calls.append("one")

        def benchmark_two(self):
            calls.append("two")

    assert tf.test.main(argv=["prog", "--benchmarks=SelectedBench.benchmark_one"]) is None
    assert calls == ["one"]


def test_main_runs_unittests(monkeypatch):
    class T(tf.test.TestCase):
        def test_ok(self):
            self.assertAllEqual([1], [1])

    fake_main = types.ModuleType("__main__")
    fake_main.T = T
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    with pytest.raises(SystemExit) as exit_info:
        tf.test.main(argv=["prog", "-q"])
    assert exit_info.value.code in (0, False)


def test_test_case_has_absl_assertions():
    class Probe(tf.test.TestCase):
        def runTest(self):
            self.assertContainsSubset([1, 2], [3, 2, 1])
            self.assertSameStructure({"a": [1]}, {"a": [1]})
            with self.assertRaises(AssertionError):
                self.assertSameStructure({"a": [1]}, {"b": [1]})
            with self.assertRaises(AssertionError):
                self.assertContainsSubset([4], [1, 2])

    result = Probe().run()
    assert result.wasSuccessful(), result.failures + result.errors
