"""``tf.keras.initializers``: TF1's initializer classes under Keras's names, and ``get`` for strings."""

from __future__ import annotations

from ferroflow.framework import dtypes
from ferroflow.ops import init_ops
from ferroflow.ops.init_ops import (  # noqa: F401 - re-exported under Keras's names
    Constant,
    GlorotNormal,
    GlorotUniform,
    Identity,
    Initializer,
    Ones,
    Orthogonal,
    VarianceScaling,
    Zeros,
)

__all__ = ["Constant", "GlorotNormal", "GlorotUniform", "Identity", "Initializer", "Ones", "Orthogonal",
           "RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling", "Zeros", "constant", "deserialize",
           "get", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "identity", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "serialize", "uniform", "zeros"]



class RandomUniform(init_ops.RandomUniform):
    """Uniform in ``[minval, maxval)``; Keras's defaults are -0.05 and 0.05."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None, dtype=dtypes.float32):
        super().__init__(minval=minval, maxval=maxval, seed=seed, dtype=dtype)


class RandomNormal(init_ops.RandomNormal):
    """Normal with Keras's defaults (mean 0, standard deviation 0.05)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=dtypes.float32):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


class TruncatedNormal(init_ops.TruncatedNormal):
    """Truncated normal with Keras's defaults (mean 0, standard deviation 0.05)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=dtypes.float32):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


zeros = Zeros
ones = Ones
constant = Constant
uniform = random_uniform = RandomUniform
normal = random_normal = RandomNormal
truncated_normal = TruncatedNormal
identity = Identity
orthogonal = Orthogonal
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
he_normal = init_ops.he_normal
he_uniform = init_ops.he_uniform
lecun_normal = init_ops.lecun_normal
lecun_uniform = init_ops.lecun_uniform

_BY_NAME = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "uniform": RandomUniform, "random_uniform": RandomUniform,
    "normal": RandomNormal, "random_normal": RandomNormal, "truncated_normal": TruncatedNormal,
    "identity": Identity, "orthogonal": Orthogonal, "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
    "he_normal": he_normal, "he_uniform": he_uniform, "lecun_normal": lecun_normal, "lecun_uniform": lecun_uniform,
    "variance_scaling": VarianceScaling,
}


def serialize(initializer):
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config, custom_objects=None):
    if isinstance(config, str):
        key = config
        if custom_objects and key in custom_objects:
            return custom_objects[key]()
        snake = {"Zeros": "zeros", "Ones": "ones", "GlorotUniform": "glorot_uniform",
                 "GlorotNormal": "glorot_normal"}.get(key, key)
        if snake.lower() not in _BY_NAME and snake not in _BY_NAME:
            raise ValueError(f"Unknown initializer: {config}")
        return _BY_NAME.get(snake, _BY_NAME.get(snake.lower()))()
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or globals().get(name)
    if cls is None:
        raise ValueError(f"Unknown initializer: {name}")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    """An initializer from a name (``'glorot_uniform'``, ``'zeros'``, ``'he_normal'``, ...), a config or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
