"""TensorFlow's v1/v2 behaviour switches, as a TF1 graph library answers them.

ferroflow always builds graphs with TF1 semantics. Switches that only pick
an implementation TF1 programs cannot tell apart (resource variables,
control flow v2) are recorded and reported back, and change nothing here.
Switches whose v2 behaviour ferroflow does not
offer (eager execution, elementwise ``Tensor.__eq__``, int-valued
``TensorShape`` indexing) raise.
"""

from __future__ import annotations

import logging

_state = {"resource_variables": False, "control_flow_v2": False}


def executing_eagerly():
    """Always False: ferroflow runs graphs."""
    return False


def executing_eagerly_outside_functions():
    """Always False: ferroflow runs graphs."""
    return False


def disable_eager_execution():
    """No-op: ferroflow always builds graphs."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Raises: eager execution is not offered."""
    raise NotImplementedError("ferroflow runs graphs only; eager execution is not supported")


def disable_v2_behavior():
    """No-op: ferroflow always has TF1 behaviour."""


def enable_v2_behavior():
    """Raises: TF2 behaviour means eager execution, which ferroflow does not offer."""
    raise NotImplementedError("ferroflow runs TF1 graphs only; enable_v2_behavior (eager execution) is not supported")


def enable_resource_variables():
    """Recorded; variables stay TF1's (reads and writes behave the same in a TF1 graph program)."""
    _state["resource_variables"] = True


def disable_resource_variables():
    """Recorded (the default)."""
    _state["resource_variables"] = False


def resource_variables_enabled():
    """What the last enable/disable_resource_variables call said (False by default)."""
    return _state["resource_variables"]


def enable_control_flow_v2():
    """Recorded; ferroflow's cond/while_loop run in its own executor either way."""
    _state["control_flow_v2"] = True


def disable_control_flow_v2():
    """Recorded (the default)."""
    _state["control_flow_v2"] = False


def control_flow_v2_enabled():
    """What the last enable/disable_control_flow_v2 call said (False by default)."""
    return _state["control_flow_v2"]


def enable_v2_tensorshape():
    """Raises: ``TensorShape`` indexing keeps giving TF1's ``Dimension`` objects."""
    raise NotImplementedError("ferroflow keeps TF1's TensorShape (indexing gives Dimension objects; use "
                              "tf.compat.dimension_value or .as_list() for ints)")


def disable_v2_tensorshape():
    """No-op: TF1's ``TensorShape`` (``Dimension`` objects) is ferroflow's."""


def enable_tensor_equality():
    """Raises: ferroflow keeps TF1's identity-based ``Tensor.__eq__`` (tensors are dict keys)."""
    raise NotImplementedError("ferroflow keeps TF1's Tensor equality (by identity); use tf.equal for elementwise "
                              "comparison")


def disable_tensor_equality():
    """No-op: TF1's identity-based ``Tensor.__eq__`` is ferroflow's."""


def get_logger():
    """The ``tensorflow`` logger (where ``tf.logging`` writes)."""
    return logging.getLogger("tensorflow")
