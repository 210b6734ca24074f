"""``tf.layers.BatchNormalization`` and ``tf.layers.batch_normalization`` (TF1 semantics).

Variables, in TensorFlow's order: ``<layer>/gamma`` and ``<layer>/beta`` (trainable, when ``scale``/
``center``), ``<layer>/moving_mean`` and ``<layer>/moving_variance`` (global, not trainable).

With ``training`` true (a bool, or a bool tensor: then both paths are built and the tensor picks one) the
layer normalises with the batch's mean and (biased) variance and adds two ops to ``GraphKeys.UPDATE_OPS``
(``<layer>/AssignMovingAvg``, ``<layer>/AssignMovingAvg_1``): ``moving -= (moving - batch) * (1 - momentum)``.
Run them with the train op (``with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))``).
With ``training`` false it normalises with the moving statistics and adds no updates.

As in TensorFlow, a 4-D input normalised over its channel axis (1 or 3) takes the "fused" path unless
``fused=False``: its moving variance is updated with the batch variance's unbiased (n / (n - 1)) form, while
the other inputs (and ``fused=False``) use the biased one. ferroflow computes both from the same graph ops
(moments, rsqrt), so gradients flow through the batch statistics.

``renorm``, ``virtual_batch_size`` and ``adjustment`` are not supported (NotImplementedError).
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.tensor_shape import TensorShape, dimension_value
from ferroflow.layers.base import InputSpec, Layer, constant_value, smart_cond
from ferroflow.ops import array_ops, init_ops, math_ops, nn_ops, state_ops

__all__ = ["BatchNormalization", "batch_normalization"]


class BatchNormalization(Layer):
    """Batch normalization: ``gamma * (x - mean) / sqrt(variance + epsilon) + beta`` per ``axis`` entry."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=init_ops.zeros_initializer(), gamma_initializer=init_ops.ones_initializer(),
                 moving_mean_initializer=init_ops.zeros_initializer(),
                 moving_variance_initializer=init_ops.ones_initializer(), beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, renorm=False,
                 renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm:
            raise NotImplementedError("BatchNormalization(renorm=True) (batch renormalization) is not supported by "
                                      "ferroflow yet")
        if virtual_batch_size is not None:
            raise NotImplementedError("BatchNormalization(virtual_batch_size=...) is not supported by ferroflow yet")
        if adjustment is not None:
            raise NotImplementedError("BatchNormalization(adjustment=...) is not supported by ferroflow yet")
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError(f"Expected an int or a list/tuple of ints for the argument 'axis', but received: {axis}")
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.renorm = False
        self.fused = fused
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        ndims = input_shape.rank
        if ndims is None:
            raise ValueError(f"Input has undefined rank. Received: input_shape={input_shape}.")
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for i, a in enumerate(axes):
            if a < 0:
                axes[i] = ndims + a
        for a in axes:
            if a < 0 or a >= ndims:
                raise ValueError(f"Invalid axis. Expected 0 <= axis < inputs.rank (with inputs.rank={ndims}). "
                                 f"Received: layer.axis={self.axis}")
        if len(axes) != len(set(axes)):
            raise ValueError(f"Duplicate axis: {self.axis}")
        self.axis = axes
        self.fused = (self.fused is None or bool(self.fused)) and ndims == 4 and axes in ([1], [3])
        dims = {}
        for a in axes:
            d = dimension_value(input_shape[a])
            if d is None:
                raise ValueError(f"Input has undefined `axis` dimension. Received input with shape {input_shape} "
                                 f"and axis={self.axis}")
            dims[a] = d
        self.input_spec = InputSpec(ndim=ndims, axes=dims)
        if len(axes) == 1:
            param_shape = (dims[axes[0]],)
        else:
            param_shape = tuple(dims.get(i, 1) for i in range(ndims))
        param_dtype = dtypes.float32 if self.dtype in (dtypes.float16, dtypes.bfloat16) else self.dtype
        self._param_dtype = param_dtype
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight("gamma", shape=param_shape, dtype=param_dtype,
                                         initializer=self.gamma_initializer, regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, trainable=True)
        if self.center:
            self.beta = self.add_weight("beta", shape=param_shape, dtype=param_dtype,
                                        initializer=self.beta_initializer, regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, trainable=True)
        self.moving_mean = self.add_weight("moving_mean", shape=param_shape, dtype=param_dtype,
                                           initializer=self.moving_mean_initializer, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape=param_shape, dtype=param_dtype,
                                               initializer=self.moving_variance_initializer, trainable=False)
        self.built = True

    def _assign_moving_average(self, variable, value, momentum):
        with ops.name_scope(None, "AssignMovingAvg", [variable, value, momentum]) as scope:
            decay = math_ops.subtract(ops.convert_to_tensor(1.0, dtype=variable.dtype.base_dtype),
                                      math_ops.cast(momentum, variable.dtype.base_dtype))
            delta = math_ops.multiply(math_ops.subtract(variable, math_ops.cast(value, variable.dtype.base_dtype)),
                                      decay)
            return state_ops.assign_sub(variable, delta, name=scope)

    def call(self, inputs, training=False):
        ndims = inputs.shape.rank
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        training_value = constant_value(training)

        def broadcast(v):
            # Parameters of a single non-last axis are reshaped to broadcast against the input.
            if v is None or len(self.axis) != 1 or self.axis[0] == ndims - 1:
                return v
            shape = [1] * ndims
            shape[self.axis[0]] = dimension_value(inputs.shape[self.axis[0]])
            return array_ops.reshape(v, shape)

        x = inputs
        if x.dtype.base_dtype != self._param_dtype:
            x = math_ops.cast(x, self._param_dtype)
        if training_value is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            keep_dims = len(self.axis) > 1
            batch_mean, batch_var = nn_ops.moments(x, reduction_axes, keep_dims=keep_dims)
            if self.fused:
                # The fused kernel reports (and the moving average takes) the unbiased variance.
                n = 1
                for a in reduction_axes:
                    n *= dimension_value(inputs.shape[a]) or 0
                if n == 0:
                    count = math_ops.cast(math_ops.reduce_prod(array_ops.gather(
                        array_ops.shape(inputs), reduction_axes)), batch_var.dtype)
                else:
                    count = ops.convert_to_tensor(float(n), dtype=batch_var.dtype)
                one = ops.convert_to_tensor(1.0, dtype=batch_var.dtype)
                update_var = math_ops.multiply(batch_var, math_ops.truediv(count, math_ops.maximum(
                    math_ops.subtract(count, one), one)))
            mean = smart_cond(training, lambda: batch_mean, lambda: ops.convert_to_tensor(self.moving_mean))
            variance = smart_cond(training, lambda: batch_var, lambda: ops.convert_to_tensor(self.moving_variance))
            new_mean = mean
            new_var = variance
            if self.fused:
                new_var = update_var if training_value else smart_cond(
                    training, lambda: update_var, lambda: ops.convert_to_tensor(self.moving_variance))
            momentum = self.momentum if training_value else smart_cond(
                training, lambda: ops.convert_to_tensor(float(self.momentum)),
                lambda: ops.convert_to_tensor(1.0))
            self.add_update(self._assign_moving_average(self.moving_mean, new_mean, momentum))
            self.add_update(self._assign_moving_average(self.moving_variance, new_var, momentum))

        mean = math_ops.cast(mean, inputs.dtype)
        variance = math_ops.cast(variance, inputs.dtype)
        gamma = None if self.gamma is None else math_ops.cast(self.gamma, inputs.dtype)
        beta = None if self.beta is None else math_ops.cast(self.beta, inputs.dtype)
        eps = ops.convert_to_tensor(self.epsilon, dtype=inputs.dtype)
        if self.fused:
            # (x - mean) * (gamma * rsqrt(var + eps)) + beta, as the fused kernel computes it.
            inv = math_ops.rsqrt(math_ops.add(variance, eps))
            if gamma is not None:
                inv = math_ops.multiply(inv, gamma)
            outputs = math_ops.multiply(math_ops.subtract(inputs, broadcast(mean)), broadcast(inv))
            if beta is not None:
                outputs = math_ops.add(outputs, broadcast(beta))
        else:
            # tf.nn.batch_normalization: x * inv + (beta - mean * inv).
            inv = math_ops.rsqrt(math_ops.add(broadcast(variance), eps))
            if gamma is not None:
                inv = math_ops.multiply(inv, broadcast(gamma))
            shift = math_ops.negative(math_ops.multiply(broadcast(mean), inv))
            if beta is not None:
                shift = math_ops.add(broadcast(beta), shift)
            outputs = math_ops.add(math_ops.multiply(inputs, inv), shift)
        outputs.set_shape(inputs.shape)
        return outputs

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=init_ops.zeros_initializer(), gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(), beta_regularizer=None,
                        gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, training=False,
                        trainable=True, name=None, reuse=None, renorm=False, renorm_clipping=None,
                        renorm_momentum=0.99, fused=None, virtual_batch_size=None, adjustment=None):
    """Batch normalization; with ``training`` its moving-average updates join ``GraphKeys.UPDATE_OPS``."""
    layer = BatchNormalization(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                               beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                               moving_mean_initializer=moving_mean_initializer,
                               moving_variance_initializer=moving_variance_initializer,
                               beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
                               beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
                               renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
                               trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
                               name=name, _scope=name, _reuse=reuse)
    return layer(inputs, training=training)
