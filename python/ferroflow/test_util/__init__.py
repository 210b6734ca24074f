"""Test helpers (exposed as ``tf.test``): the numerical gradient checker."""

from ferroflow.test_util.gradient_checker import compute_gradient, compute_gradient_error

__all__ = ["compute_gradient", "compute_gradient_error"]
