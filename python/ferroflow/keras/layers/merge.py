"""Keras's merge layers (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot) and their
functional forms (``add``, ``concatenate``, ...): each takes a list of tensors."""

from __future__ import annotations

from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.ops import array_ops, math_ops, nn_ops

__all__ = ["Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply", "Subtract", "add", "average",
           "concatenate", "dot", "maximum", "minimum", "multiply", "subtract"]


class _Merge(Layer):
    """The merge layers' base: a list of at least two inputs; the output's mask keeps a step where every masked
    input keeps it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_mask(self, inputs, mask=None):
        if mask is None or all(m is None for m in mask):
            return None
        masks = [array_ops.expand_dims(m, 0) for m in mask if m is not None]
        return math_ops.reduce_all(array_ops.concat(masks, 0), axis=0)

    def _check(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A merge layer ({type(self).__name__}) should be called on a list of at least 2 "
                             f"inputs. Got: {inputs!r}")

    def call(self, inputs):
        self._check(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return out


class Add(_Merge):
    """The element-wise sum of the inputs."""

    def _merge(self, a, b):
        return math_ops.add(a, b)


class Multiply(_Merge):
    """The element-wise product of the inputs."""

    def _merge(self, a, b):
        return math_ops.multiply(a, b)


class Maximum(_Merge):
    def _merge(self, a, b):
        return math_ops.maximum(a, b)


class Minimum(_Merge):
    def _merge(self, a, b):
        return math_ops.minimum(a, b)


class Subtract(_Merge):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs")
        return math_ops.subtract(inputs[0], inputs[1])


class Average(_Merge):
    """The element-wise mean of the inputs."""

    def call(self, inputs):
        self._check(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = math_ops.add(out, x)
        return out / len(inputs)


class Concatenate(_Merge):
    """The inputs joined along ``axis``."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        self._check(inputs)
        return K.concatenate(list(inputs), axis=self.axis)

    def compute_mask(self, inputs, mask=None):
        """A step is kept where it is kept in every input (inputs without a mask keep every step)."""
        if mask is None or all(m is None for m in mask):
            return None
        masks = []
        for x, m in zip(inputs, mask):
            if m is None:
                masks.append(array_ops.ones_like(x, dtype="bool"))
            elif m.shape.rank < x.shape.rank:
                masks.append(array_ops.expand_dims(m, -1))
            else:
                masks.append(m)
        return math_ops.reduce_all(array_ops.concat(masks, self.axis), axis=-1)


class Dot(_Merge):
    """Batch dot product of two inputs along ``axes`` (optionally of l2-normalized inputs: cosine); ranks 2 and 3
    (``K.batch_dot``: ``[b, n, d] . [b, m, d]`` over axes (2, 2) is ``[b, n, m]``)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        self.axes = axes
        self.normalize = normalize

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError("A `Dot` layer should be called on exactly 2 inputs")
        x, y = inputs
        axes = self.axes if isinstance(self.axes, (list, tuple)) else (self.axes, self.axes)
        axes = [a % x.shape.rank if i == 0 else a % y.shape.rank for i, a in enumerate(axes)]
        if self.normalize:
            x = nn_ops.l2_normalize(x, axis=axes[0])
            y = nn_ops.l2_normalize(y, axis=axes[1])
        return K.batch_dot(x, y, axes)

    def compute_mask(self, inputs, mask=None):
        return None


def _functional(cls):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)

    merge.__name__ = cls.__name__.lower()
    merge.__doc__ = f"``{cls.__name__}(**kwargs)(inputs)``."
    return merge


add = _functional(Add)
subtract = _functional(Subtract)
multiply = _functional(Multiply)
average = _functional(Average)
maximum = _functional(Maximum)
minimum = _functional(Minimum)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    """``Dot(axes, normalize)(inputs)``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
