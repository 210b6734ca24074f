"""tf.train.replica_device_setter and tf.device: op.device strings as TensorFlow 2.21 gives them.

Each case of tests/fixtures/distributed/placements.json (tools/make_distributed_fixtures.py) is a
graph-building snippet TensorFlow ran with tf.compat.v1 and the device of every op it made; the same
snippet runs here with ``tf`` bound to ferroflow. Ops both graphs have (same name and type) must
have the same device, and every variable, its Assign and read, and the named compute ops must be
among them (ferroflow names a few helper constants differently, e.g. ``Mean/Const``).
"""

import json
import pathlib

import pytest

import ferroflow as tf
from ferroflow.training import device_setter

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "distributed"
PLACEMENTS = json.loads((FIXTURES / "placements.json").read_text())
del PLACEMENTS["tensorflow_version"]


def _build(code):
    graph = tf.Graph()
    with graph.as_default():
        exec("import numpy as np\n" + code, {"tf": tf})
    return {op.name: (op.type, op.device) for op in graph.get_operations()}


@pytest.mark.parametrize("name", sorted(PLACEMENTS))
def test_placements_match_tensorflow(name):
    case = PLACEMENTS[name]
    ours = _build(case["code"])
    compared = 0
    for op_name, op_type, device in case["devices"]:
        essential = op_type in ("VariableV2", "Assign", "AssignAdd", "Placeholder") or not (
            "/" in op_name or op_type == "Const" and op_name.startswith("Const"))
        if op_name not in ours:
            assert not essential, f"{name}: TensorFlow's op {op_name} ({op_type}) is missing here"
            continue
        if ours[op_name][0] != op_type:
            assert not essential, f"{name}: {op_name} is {ours[op_name][0]} here, {op_type} in TensorFlow"
            continue
        assert ours[op_name][1] == device, f"{name}: {op_name} ({op_type}) on {ours[op_name][1]!r}, TF {device!r}"
        compared += 1
    assert compared >= len(case["devices"]) // 2


def test_variables_round_robin_in_creation_order():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            vs = [tf.Variable(0.0, name=f"v{i}") for i in range(7)]
            total = tf.add_n(vs)
        assert [v.op.device for v in vs] == [f"/job:ps/task:{i % 3}" for i in range(7)]
        assert [v.initializer.device for v in vs] == [v.op.device for v in vs]
        assert total.op.device == "/job:worker"


def test_no_ps_tasks_gives_none():
    assert tf.train.replica_device_setter() is None
    assert tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None
    assert tf.train.replica_device_setter(cluster=tf.train.ClusterDef()) is None
    assert tf.train.replica_device_setter(cluster={"ps": ["p:1"]}) is not None
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)
    with pytest.raises(TypeError, match="`cluster` must be a dictionary"):
        tf.train.replica_device_setter(cluster="ps:1")


def test_custom_strategy_sees_the_op():
    seen = []

    def strategy(op):
        seen.append((op.name, op.type, op.device))
        return 1

    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
            with tf.device("/device:CPU:0"):
                v = tf.Variable([1.0, 2.0], name="v")
        assert v.op.device == "/job:ps/task:1/device:CPU:0"
    assert seen == [("v", "VariableV2", "/device:CPU:0")]


def test_greedy_load_balancing_by_bytes():
    strategy = device_setter.GreedyLoadBalancingStrategy(2, device_setter.byte_size_load_fn)
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
            big = tf.Variable(tf.zeros([100, 10]), name="big")  # 4000 bytes -> task 0
            small = tf.Variable(tf.zeros([10]), name="small")  # 40 bytes -> task 1
            small2 = tf.Variable(tf.zeros([10], dtype=tf.float64), name="small2")  # 80 bytes -> task 1
            medium = tf.Variable(tf.zeros([1000]), name="medium")  # 4000 bytes -> task 1 (120 < 4000)
            scalar = tf.Variable(1.0, name="scalar")  # 4 bytes -> task 0 (4000 < 4120)
        assert [v.op.device for v in (big, small, small2, medium, scalar)] == [
            "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:1", "/job:ps/task:1", "/job:ps/task:0"]
        assert device_setter.byte_size_load_fn(big.op) == 4000
        with pytest.raises(ValueError, match="must have a single output"):
            device_setter.byte_size_load_fn(tf.no_op())


def test_device_function_returning_device_spec_and_nested_none():
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:1"):
            with tf.device(lambda op: tf.DeviceSpec(device_type="CPU", device_index=0)):
                a = tf.constant(1.0)
            with tf.device(None):
                b = tf.constant(1.0)
            with tf.device(""):
                c = tf.constant(1.0)
        assert a.op.device == "/job:worker/task:1/device:CPU:0"
        assert b.op.device == ""
        assert c.op.device == "/job:worker/task:1"


def test_graph_with_devices_runs_locally():
    # ferroflow runs every op in-process; devices are recorded for the distributed runtime.
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            x = tf.placeholder(tf.float32, [None, 2])
            w = tf.Variable([[1.0], [2.0]])
            y = tf.matmul(x, w)
            step = tf.train.get_or_create_global_step()
            train = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(y), global_step=step)
        assert step.op.device == "/job:ps/task:1"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {x: [[1.0, 1.0]]})
            assert sess.run(step) == 1
            assert sess.run(w).tolist() == [[0.5], [1.5]]
