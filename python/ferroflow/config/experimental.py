"""``tf.config.experimental``."""

from ferroflow.framework.config import (  # noqa: F401
    VirtualDeviceConfiguration,
    enable_tensor_float_32_execution,
    get_device_details,
    get_device_policy,
    get_memory_growth,
    get_synchronous_execution,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    set_device_policy,
    set_memory_growth,
    set_synchronous_execution,
    set_visible_devices,
    tensor_float_32_execution_enabled,
)
