"""``tf.config``: the device and runtime settings TF1.15-era scripts set at their top.

ferroflow runs on the CPU only: ``list_physical_devices()`` gives one CPU and no GPU, so the usual
``for gpu in tf.config.experimental.list_physical_devices('GPU'): set_memory_growth(gpu, True)`` does
nothing, and asking for memory growth on the CPU fails as it does in TensorFlow. As in TensorFlow's graph mode,
these settings belong to the eager context, not to ``tf.Session`` (which takes a ``ConfigProto``): they are
recorded and read back. Once ``list_logical_devices`` has run, the devices count as initialized and the
visible devices and thread counts can no longer change (TensorFlow's RuntimeErrors).
"""

from __future__ import annotations

import collections

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
LogicalDeviceConfiguration = collections.namedtuple(
    "LogicalDeviceConfiguration", ["memory_limit", "experimental_priority", "experimental_device_ordinal"]
)
LogicalDeviceConfiguration.__new__.__defaults__ = (None, None, None)
VirtualDeviceConfiguration = LogicalDeviceConfiguration

_CPU = PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")
_DEVICE_POLICIES = (None, "silent", "silent_for_int32", "warn", "explicit")


class _Settings:
    def __init__(self):
        self.initialized = False
        self.visible = [_CPU]
        self.inter_op = 0
        self.intra_op = 0
        self.soft_placement = False
        self.device_policy = None
        self.synchronous = True
        self.tf32 = True
        self.run_eagerly = False
        self.optimizer_options = {"disable_model_pruning": False, "disable_meta_optimizer": False}


_settings = _Settings()


def _check_device(device):
    if device != _CPU:
        raise ValueError(f"Unrecognized device: {device!r}")


def list_physical_devices(device_type=None):
    """The physical devices: ferroflow's one CPU (``device_type`` ``"CPU"`` or None), else none."""
    return [_CPU] if device_type in (None, "CPU") else []


def list_logical_devices(device_type=None):
    """The logical devices of the visible physical ones; marks the devices initialized."""
    _settings.initialized = True
    if device_type not in (None, "CPU") or _CPU not in _settings.visible:
        return []
    return [LogicalDevice(name="/device:CPU:0", device_type="CPU")]


def get_visible_devices(device_type=None):
    return [d for d in _settings.visible if device_type in (None, d.device_type)]


def set_visible_devices(devices, device_type=None):
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for d in devices:
        _check_device(d)
    if device_type not in (None, "CPU"):
        return
    if _settings.initialized and devices != _settings.visible:
        raise RuntimeError("Visible devices cannot be modified after being initialized")
    _settings.visible = devices


def set_memory_growth(device, enable):
    _check_device(device)
    raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")


def get_memory_growth(device):
    _check_device(device)
    raise KeyError(device)


def get_device_details(device):
    _check_device(device)
    return {}


def get_inter_op_parallelism_threads():
    return _settings.inter_op


def set_inter_op_parallelism_threads(num_threads):
    if _settings.initialized and num_threads != _settings.inter_op:
        raise RuntimeError("Inter op parallelism cannot be modified after initialization.")
    _settings.inter_op = int(num_threads)


def get_intra_op_parallelism_threads():
    return _settings.intra_op


def set_intra_op_parallelism_threads(num_threads):
    if _settings.initialized and num_threads != _settings.intra_op:
        raise RuntimeError("Intra op parallelism cannot be modified after initialization.")
    _settings.intra_op = int(num_threads)


def get_soft_device_placement():
    return _settings.soft_placement


def set_soft_device_placement(enabled):
    _settings.soft_placement = bool(enabled)


def get_device_policy():
    return _settings.device_policy


def set_device_policy(device_policy):
    if device_policy not in _DEVICE_POLICIES:
        raise ValueError(
            f"Invalid value for device_policy: {device_policy}. Supported values are: "
            "None, 'silent', 'silent_for_int32', 'warn' and 'explicit'."
        )
    _settings.device_policy = device_policy


def get_synchronous_execution():
    return _settings.synchronous


def set_synchronous_execution(enable):
    _settings.synchronous = bool(enable)


def tensor_float_32_execution_enabled():
    return _settings.tf32


def enable_tensor_float_32_execution(enabled):
    _settings.tf32 = bool(enabled)


def functions_run_eagerly():
    return _settings.run_eagerly


def run_functions_eagerly(run_eagerly):
    _settings.run_eagerly = bool(run_eagerly)


def get_experimental_options():
    return dict(_settings.optimizer_options)


def set_experimental_options(options):
    _settings.optimizer_options.update(options)
