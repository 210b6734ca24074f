"""tf.config and tf.version as TF1.15-era scripts use them at their top (behaviour checked by hand against
TensorFlow 2.21's tf.compat.v1 on a CPU-only machine: the same devices, errors and defaults)."""

import pytest

import ferroflow as tf
from ferroflow.framework import config as config_impl


@pytest.fixture(autouse=True)
def fresh_settings(monkeypatch):
    monkeypatch.setattr(config_impl, "_settings", config_impl._Settings())


def test_gpu_setup_preamble_runs():
    gpus = tf.config.experimental.list_physical_devices("GPU")
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    assert gpus == []
    (cpu,) = tf.config.list_physical_devices()
    assert cpu == tf.config.PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")
    assert tf.config.list_physical_devices("CPU") == [cpu]
    assert tf.config.get_visible_devices() == [cpu]
    assert tf.config.get_visible_devices("GPU") == []
    tf.config.set_visible_devices([cpu])
    tf.config.set_visible_devices([], "GPU")
    assert tf.config.list_logical_devices() == [
        tf.config.LogicalDevice(name="/device:CPU:0", device_type="CPU")
    ]
    assert tf.config.list_logical_devices("GPU") == []


def test_errors_as_tensorflow():
    (cpu,) = tf.config.list_physical_devices("CPU")
    with pytest.raises(ValueError, match="Cannot set memory growth on non-GPU"):
        tf.config.experimental.set_memory_growth(cpu, True)
    with pytest.raises(KeyError):
        tf.config.experimental.get_memory_growth(cpu)
    gpu = tf.config.PhysicalDevice(name="/physical_device:GPU:0", device_type="GPU")
    with pytest.raises(ValueError, match="Unrecognized device"):
        tf.config.experimental.set_memory_growth(gpu, True)
    with pytest.raises(ValueError, match="Invalid value for device_policy"):
        tf.config.experimental.set_device_policy("loud")


def test_settings_before_and_after_initialization():
    assert tf.config.threading.get_inter_op_parallelism_threads() == 0
    tf.config.threading.set_inter_op_parallelism_threads(2)
    tf.config.threading.set_intra_op_parallelism_threads(3)
    assert tf.config.threading.get_inter_op_parallelism_threads() == 2
    assert tf.config.threading.get_intra_op_parallelism_threads() == 3
    tf.config.list_logical_devices()
    with pytest.raises(RuntimeError, match="cannot be modified after initialization"):
        tf.config.threading.set_inter_op_parallelism_threads(4)
    tf.config.threading.set_inter_op_parallelism_threads(2)  # unchanged: allowed
    with pytest.raises(RuntimeError, match="cannot be modified after being initialized"):
        tf.config.set_visible_devices([])
    assert tf.config.get_soft_device_placement() is False
    tf.config.set_soft_device_placement(True)
    assert tf.config.get_soft_device_placement() is True
    assert tf.config.experimental.get_device_policy() is None
    tf.config.experimental.set_device_policy("silent")
    assert tf.config.experimental.get_device_policy() == "silent"
    assert tf.config.optimizer.get_experimental_options() == {
        "disable_model_pruning": False,
        "disable_meta_optimizer": False,
    }
    tf.config.optimizer.set_experimental_options({"layout_optimizer": False})
    assert tf.config.optimizer.get_experimental_options()["layout_optimizer"] is False
    assert tf.config.functions_run_eagerly() is False
    assert tf.config.experimental.VirtualDeviceConfiguration(memory_limit=1024).memory_limit == 1024


def test_version_module():
    assert tf.version.VERSION == tf.VERSION
    assert tf.version.GIT_VERSION == tf.GIT_VERSION
    assert tf.version.GRAPH_DEF_VERSION == tf.GRAPH_DEF_VERSION
    assert tf.GRAPH_DEF_VERSION_MIN_CONSUMER == 0 and tf.GRAPH_DEF_VERSION_MIN_PRODUCER == 0
    assert isinstance(tf.version.COMPILER_VERSION, str)
    assert tf.qint8 in tf.QUANTIZED_DTYPES
    import ferroflow.compat.v1 as v1

    assert v1.version.VERSION == tf.VERSION and v1.config.list_physical_devices("GPU") == []
