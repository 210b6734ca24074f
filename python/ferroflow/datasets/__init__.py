"""Small datasets shipped inside the ferroflow package (used by ``ferroflow demo`` and examples)."""

from ferroflow.datasets import digits  # noqa: F401
