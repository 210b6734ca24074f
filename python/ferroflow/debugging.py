"""``tf.debugging``: assertions and numeric checks."""

from ferroflow.framework.check_numerics import disable_check_numerics, enable_check_numerics  # noqa: F401
from ferroflow.framework.placement_log import get_log_device_placement, set_log_device_placement  # noqa: F401
from ferroflow.framework.traceback_utils import (  # noqa: F401
    disable_traceback_filtering,
    enable_traceback_filtering,
    is_traceback_filtering_enabled,
)
from ferroflow.ops.check_ops import *  # noqa: F401,F403
from ferroflow.ops.control_flow_ops import Assert  # noqa: F401
from ferroflow.ops.math_ops import is_finite, is_inf, is_nan  # noqa: F401
