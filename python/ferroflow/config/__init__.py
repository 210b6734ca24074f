"""``tf.config``: device and runtime settings (``ferroflow.framework.config`` has the details)."""

from ferroflow.config import experimental, optimizer, threading  # noqa: F401
from ferroflow.framework.config import (  # noqa: F401
    LogicalDevice,
    LogicalDeviceConfiguration,
    PhysicalDevice,
    functions_run_eagerly,
    get_soft_device_placement,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    run_functions_eagerly,
    set_soft_device_placement,
    set_visible_devices,
)
from ferroflow.framework.config import functions_run_eagerly as experimental_functions_run_eagerly  # noqa: F401
from ferroflow.framework.config import run_functions_eagerly as experimental_run_functions_eagerly  # noqa: F401
