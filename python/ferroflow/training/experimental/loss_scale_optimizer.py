"""``tf.train.experimental.MixedPrecisionLossScaleOptimizer``: TF1's loss-scaling optimizer wrapper."""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.ops import cond as cond_mod
from ferroflow.ops import control_flow_ops, math_ops
from ferroflow.training import optimizers
from ferroflow.training.experimental import loss_scale as loss_scale_module

__all__ = ["MixedPrecisionLossScaleOptimizer"]


class MixedPrecisionLossScaleOptimizer(optimizers.Optimizer):
    """Wraps ``opt``: scales the loss by ``loss_scale``, unscales the gradients, and with a
    ``DynamicLossScale`` applies them only when all are finite (updating the scale either way).
    """

    def __init__(self, opt, loss_scale):
        if not isinstance(opt, optimizers.Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        self._optimizer = opt
        super().__init__(opt._use_locking, opt.get_name())
        self._loss_scale = loss_scale_module.get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")

    @property
    def loss_scale(self):
        return self._loss_scale

    def _doing_dynamic_loss_scaling(self):
        return isinstance(self._loss_scale, loss_scale_module.DynamicLossScale)

    def compute_gradients(self, loss, var_list=None, gate_gradients=optimizers.Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False, grad_loss=None):
        """The wrapped optimizer's ``(gradient, variable)`` pairs for the scaled loss, divided by the scale."""
        loss = self._scale_loss(loss)
        grads_and_vars = self._optimizer.compute_gradients(
            loss=loss, var_list=var_list, gate_gradients=gate_gradients, aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        grads = [g for g, _ in grads_and_vars]
        variables = [v for _, v in grads_and_vars]
        return list(zip(self._unscale_grads(grads), variables))

    def _scale_loss(self, loss):
        scale = self._loss_scale()
        if callable(loss):
            def scaled():
                value = loss()
                return value * math_ops.cast(scale, value.dtype)
            return scaled
        loss = ops.convert_to_tensor(loss)
        return loss * math_ops.cast(scale, loss.dtype)

    def _unscale_grads(self, grads):
        reciprocal = 1 / self._loss_scale()
        out = []
        for g in grads:
            if g is None:
                out.append(None)
            elif isinstance(g, IndexedSlices):
                out.append(IndexedSlices(g.values * reciprocal, g.indices, g.dense_shape))
            else:
                out.append(g * reciprocal)
        return out

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the gradients; with dynamic loss scaling only when all are finite (``global_step`` too)."""
        if not self._doing_dynamic_loss_scaling():
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        grads_and_vars = tuple(grads_and_vars)
        name = name if name is not None else self.get_name()
        grads = [g for g, _ in grads_and_vars]
        update_op, should_apply = self._loss_scale.update(grads)

        def apply_fn():
            return control_flow_ops.group(
                self._optimizer.apply_gradients(grads_and_vars, global_step, name + "-wrapped"))

        maybe_apply = cond_mod.cond(should_apply, apply_fn, control_flow_ops.no_op)
        return control_flow_ops.group(maybe_apply, update_op, name=name)

    def _apply_dense(self, grad, var):
        raise RuntimeError("This function should never be called")

    def _apply_sparse(self, grad, var):
        raise RuntimeError("This function should never be called")

    def _resource_apply_dense(self, grad, handle):
        raise RuntimeError("This function should never be called")

    def _resource_apply_sparse(self, grad, handle, indices):
        raise RuntimeError("This function should never be called")

    # Slots and non-slot variables are the wrapped optimizer's, plus the loss scale's weights
    # (so checkpoints and ``variables()`` include them, as TF tracks ``base_optimizer`` and ``loss_scale``).
    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()

    @property
    def _slots(self):
        return self._optimizer._slots

    @_slots.setter
    def _slots(self, value):
        pass  # the base constructor's empty dict; slots live in the wrapped optimizer

    @property
    def _non_slot_dict(self):
        merged = dict(self._optimizer._non_slot_dict)
        for (name, gid), v in self._loss_scale._weights.items():
            merged.setdefault((name, gid), v)
        return merged

    @_non_slot_dict.setter
    def _non_slot_dict(self, value):
        pass

    def variables(self):
        """The wrapped optimizer's variables, then the loss scale's."""
        return self._optimizer.variables() + self._loss_scale._weights_in_graph()
