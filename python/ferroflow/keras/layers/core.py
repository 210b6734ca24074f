"""Keras's core layers: Dense, Dropout, Flatten (the ``tf.layers`` ones, Keras-named), Activation, Reshape,
Permute, RepeatVector, Lambda, ActivityRegularization, Masking. Dense, Dropout, Activation,
ActivityRegularization and Masking pass masks on; Lambda does when given ``mask``."""

from __future__ import annotations

import inspect

import numpy as np

from ferroflow.framework import ops
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.keras import activations
from ferroflow.keras import regularizers as regularizers_mod
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.keras.layers._wrap import keras_class
from ferroflow.layers import core as tf_core
from ferroflow.ops import array_ops, math_ops

__all__ = ["Activation", "ActivityRegularization", "Dense", "Dropout", "Flatten", "Lambda", "Masking", "Permute",
           "RepeatVector", "Reshape"]

Dense = keras_class(tf_core.Dense, "Dense", {"kernel_initializer": "glorot_uniform", "bias_initializer": "zeros"},
                    "``activation(inputs @ kernel + bias)``: weights ``<name>/kernel`` ``[in, units]`` and "
                    "``<name>/bias``.", masking=True)
Dropout = keras_class(tf_core.Dropout, "Dropout", None,
                      "Drops inputs with probability ``rate`` in the training phase (Keras's learning phase).",
                      masking=True)
Flatten = keras_class(tf_core.Flatten, "Flatten", None, "Flattens each example: ``[batch, -1]``.")


class Activation(Layer):
    """Applies an activation function (a name such as ``'relu'`` or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)


class Reshape(Layer):
    """Reshapes each example to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def _static_target(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        target = list(self.target_shape)
        if -1 in target and None not in dims[1:]:
            known = int(np.prod([d for d in target if d != -1]))
            total = int(np.prod(dims[1:]))
            if known == 0 or total % known:
                raise ValueError(f"total size of new array must be unchanged, input_shape = {dims[1:]}, "
                                 f"output_shape = {self.target_shape}")
            target[target.index(-1)] = total // known
        return [None if d == -1 else d for d in target]

    def call(self, inputs):
        batch = array_ops.shape(inputs)[0]
        out = array_ops.reshape(inputs, array_ops.stack([batch] + [ops.convert_to_tensor(d) for d in
                                                                     self.target_shape]))
        out.set_shape([inputs.shape.as_list()[0]] + self._static_target(inputs.shape))
        return out

    def compute_output_shape(self, input_shape):
        return TensorShape([TensorShape(input_shape).as_list()[0]] + self._static_target(input_shape))


class Permute(Layer):
    """Permutes the non-batch axes (``dims`` counts them from 1)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation `dims` for Permute Layer: {dims}. The set of indices in `dims` "
                             "must be consecutive and start from 1.")

    def call(self, inputs):
        return array_ops.transpose(inputs, perm=(0,) + self.dims)


class RepeatVector(Layer):
    """``[batch, features]`` to ``[batch, n, features]``."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = int(n)

    def call(self, inputs):
        return array_ops.tile(array_ops.expand_dims(inputs, 1), [1, self.n, 1])


class Lambda(Layer):
    """Wraps an arbitrary function of the inputs as a layer (``arguments`` are passed as keywords)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape
        self.mask = mask
        self.supports_masking = mask is not None

    def call(self, inputs, mask=None):
        arguments = dict(self.arguments)
        try:
            takes_mask = "mask" in inspect.signature(self.function).parameters
        except (TypeError, ValueError):
            takes_mask = False
        if takes_mask:
            arguments["mask"] = mask
        return self.function(inputs, **arguments)

    def compute_mask(self, inputs, mask=None):
        """``mask(inputs, mask)`` when ``mask`` is a function, else the ``mask`` given (None: no mask)."""
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def get_config(self):
        """TensorFlow's Lambda config: a Python function (a ``lambda`` or a ``def``) as its marshalled bytecode
        in base64 with its defaults and closure values (``function_type`` ``'lambda'``), another callable by
        name (``'function'``), each with its module; ``output_shape`` and ``mask`` likewise; ``arguments``."""
        config = {"name": self._name, "trainable": self._trainable,
                  "dtype": self._dtype.name if self._dtype is not None else "float32"}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        config["function"], config["function_type"], config["module"] = _function_config(self.function, self.name)
        config["output_shape"], config["output_shape_type"], config["output_shape_module"] = \
            _function_config(self._output_shape, self.name, raw=True)
        if self.mask is not None:
            config["mask"], config["mask_type"], config["mask_module"] = \
                _function_config(self.mask, self.name, raw=True)
        from ferroflow.keras import saving

        config["arguments"] = saving.serialize(self.arguments)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A Lambda from ``get_config``'s (or TensorFlow's) config: bytecode is loaded (Python code from the
        config runs: load configs you trust), names are looked up in ``custom_objects`` and the function's
        module."""
        from ferroflow.keras import saving

        config = dict(config)
        custom_objects = saving._known(custom_objects)
        config["function"] = _function_from_config(config, "function", custom_objects)
        if config.get("output_shape") is not None:
            config["output_shape"] = _function_from_config(config, "output_shape", custom_objects)
        if config.get("mask") is not None:
            config["mask"] = _function_from_config(config, "mask", custom_objects)
        for key in ("function_type", "module", "output_shape_type", "output_shape_module", "mask_type",
                    "mask_module"):
            config.pop(key, None)
        return cls(**config)


def _json_ready(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_json_ready(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_ready(v) for k, v in value.items())
    return False


def _function_config(function, layer, raw=False):
    """``(value, type, module)`` of a function in a Lambda's config (``raw``: a value that is no function)."""
    import base64
    import marshal
    import sys
    import types

    if isinstance(function, types.LambdaType):
        closure = None
        if function.__closure__:
            closure = [cell.cell_contents for cell in function.__closure__]
            if not all(_json_ready(v) for v in closure):
                # a decorated library function (tf.nn.relu): by name when its module has it, as a callable
                module = sys.modules.get(function.__module__)
                if module is not None and getattr(module, function.__name__, None) is function:
                    return function.__name__, "function", function.__module__
                raise ValueError(f"Cannot serialize the function {function.__qualname__} of Lambda layer {layer!r}: "
                                 "its closure holds values that are not JSON data")
        code = base64.encodebytes(marshal.dumps(function.__code__)).decode("ascii")
        return [code, list(function.__defaults__) if function.__defaults__ else None, closure], "lambda", \
            function.__module__
    if callable(function):
        name = getattr(function, "__name__", None)
        if name is None:
            raise ValueError(f"Cannot serialize the callable {function!r} of Lambda layer {layer!r}: it has no "
                             "__name__")
        return name, "function", getattr(function, "__module__", None)
    if raw:
        if isinstance(function, tuple):
            function = list(function)
        return function, "raw", None
    raise ValueError(f"Lambda layer {layer!r}: the function {function!r} is not callable")


def _function_from_config(config, key, custom_objects):
    """The function (or raw value) stored under ``key`` of a Lambda's config."""
    import base64
    import marshal
    import sys
    import types

    value = config[key]
    if callable(value):
        return value
    kind = config.get(f"{key}_type" if key != "function" else "function_type", "raw")
    module = config.get("module" if key == "function" else f"{key}_module")
    scope = {}
    if module in sys.modules:
        scope.update(vars(sys.modules[module]))
    scope.update(custom_objects or {})
    name = config.get("name")
    if kind == "function":
        if value in scope:
            return scope[value]
        raise ValueError(f"Unknown function in Lambda layer {name!r}: {value}. Please ensure this object is passed "
                         "to the `custom_objects` argument.")
    if kind == "lambda":
        code, defaults, closure = value if isinstance(value, (list, tuple)) else (value, None, None)
        try:
            code = marshal.loads(base64.decodebytes(code.encode("ascii")))
        except (ValueError, EOFError, TypeError) as e:
            raise ValueError(f"Lambda layer {name!r}: its function's bytecode cannot be loaded by this Python "
                             f"({sys.version.split()[0]}): {e}. Python bytecode is specific to the Python "
                             "version that wrote it; rebuild the layer in code or save it from this Python.") from None
        if not isinstance(code, types.CodeType):
            raise ValueError(f"Lambda layer {name!r}: its config does not hold a function's bytecode")
        cells = tuple(types.CellType(v) for v in closure) if closure else None
        scope.setdefault("__builtins__", __builtins__)
        return types.FunctionType(code, scope, code.co_name, tuple(defaults) if defaults else None, cells)
    if isinstance(value, list) and key == "output_shape":
        return tuple(value)
    return value


class ActivityRegularization(Layer):
    """The identity, adding ``l1``/``l2`` penalties of its output to the layer's losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers_mod.L1L2(l1=l1, l2=l2), **kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return inputs


class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value``: they are zeroed and the output's mask
    (``[batch, time]``, True where a step is kept) makes RNN layers skip them and losses and metrics leave
    them out."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.mask_value = mask_value

    def _keep(self, inputs, keepdims):
        return math_ops.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1, keepdims=keepdims)

    def compute_mask(self, inputs, mask=None):
        return self._keep(inputs, keepdims=False)

    def call(self, inputs):
        return inputs * math_ops.cast(self._keep(inputs, keepdims=True), inputs.dtype)

    def get_config(self):
        config = super().get_config()
        config["mask_value"] = self.mask_value
        return config
