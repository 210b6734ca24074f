"""``tf.train.SyncReplicasOptimizer``: synchronous data-parallel training over replicas that share variables.

Each replica computes its gradients and hands them to one accumulator per variable (a
``ConditionalAccumulator``, or a ``SparseConditionalAccumulator`` for ``IndexedSlices``), created on the
variable's device and shared between replicas by ``shared_name = var.name + "/grad_accum"``. A replica's
train op applies its gradients tagged with its local step, then waits for a token from the shared
``sync_token_q`` queue (the barrier) and sets its local step to the token.

The chief runs one more op in a queue-runner thread (``get_chief_queue_runner()``): it takes the mean of
``replicas_to_aggregate`` gradients from each accumulator (waiting for them), applies the means with the
wrapped optimizer (which increments the global step), then puts ``max(total_num_replicas,
replicas_to_aggregate)`` tokens holding the new global step into the token queue, and optionally updates
moving averages. Taking from an accumulator advances its step, so a gradient computed at an older step
(a straggler's) is dropped.

Gradients are averaged, not summed: with more replicas each update moves by the same learning rate over a
larger batch.
"""

from __future__ import annotations

import logging

from ferroflow.framework import ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.ops import array_ops, control_flow_ops, data_flow_ops, state_ops
from ferroflow.ops import variables as variables_mod
from ferroflow.training import queue_runner_impl, session_manager
from ferroflow.training.optimizers import Optimizer
from ferroflow.training.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]

_log = logging.getLogger(__name__)


class SyncReplicasOptimizer(Optimizer):
    """Wraps ``opt`` so that replicas aggregate their gradients and update the variables together.

    ``replicas_to_aggregate``: how many gradients (from any replicas) make one update.
    ``total_num_replicas``: how many replicas run (default: ``replicas_to_aggregate``); replicas beyond
    ``replicas_to_aggregate`` are backups whose late gradients are dropped, fewer replicas each compute
    several gradients per update. ``variable_averages`` (an ``ExponentialMovingAverage``) is applied to
    ``variables_to_average`` after each update. ``use_locking`` and ``name`` are the ``Optimizer``'s.

    After ``apply_gradients`` (or ``minimize``) every replica runs the returned train op, with the hook of
    ``make_session_run_hook(is_chief)`` in its ``MonitoredTrainingSession`` (or, without one, the chief runs
    ``chief_init_op``, ``get_init_tokens_op()`` and starts ``get_chief_queue_runner()``, and the other
    replicas run ``local_step_init_op``, once ``ready_for_local_init_op`` reports nothing uninitialized).
    """

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None, variable_averages=None,
                 variables_to_average=None, use_locking=False, name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        _log.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                  replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._local_step = None
        # (accumulator, device of its variable), for chief_init_op's set_global_step ops.
        self._accumulator_list = []
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's ``compute_gradients``: each replica computes its own gradients."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Builds the replica's train op and the chief's aggregation op; returns the train op.

        The train op adds each gradient to its variable's accumulator (tagged with the replica's local step),
        then takes a token from ``sync_token_q`` and assigns it to the local step; its value is the token.
        ``global_step`` is required (ValueError otherwise): staleness is measured against it. ``name`` is
        accepted for the Optimizer interface and unused, as in TensorFlow.
        """
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        step_dtype = global_step.dtype.base_dtype
        train_ops = []
        aggregated_grads = []
        var_list = []

        # An op placed on this replica's own device; the local step is colocated with it so that a device
        # function (replica_device_setter) never puts it on a parameter server.
        local_anchor = control_flow_ops.no_op()
        with ops.colocate_with(local_anchor):
            self._local_step = variables_mod.Variable(
                initial_value=0, trainable=False, collections=[ops.GraphKeys.LOCAL_VARIABLES],
                dtype=step_dtype, name="sync_rep_local_step",
            )
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = variables_mod.report_uninitialized_variables(
            variables_mod.global_variables())

        with ops.name_scope(None, self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                with ops.device(var.device):
                    if grad is None:
                        aggregated_grads.append(None)
                        continue
                    if isinstance(grad, ops.Tensor):
                        accum = data_flow_ops.ConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(), shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                        aggregated_grads.append(accum.take_grad(self._replicas_to_aggregate))
                    elif isinstance(grad, IndexedSlices):
                        # TensorFlow passes shape=(), which its kernel reads as "no constraint" (a
                        # prefix of the gradient's shape); ferroflow's kernel checks the whole shape, so
                        # the unconstrained shape is spelled as unknown here.
                        accum = data_flow_ops.SparseConditionalAccumulator(
                            grad.dtype, shape=None, shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_indexed_slices_grad(grad, local_step=self._local_step))
                        aggregated_grads.append(accum.take_indexed_slices_grad(self._replicas_to_aggregate))
                    else:
                        raise ValueError(f"Unknown grad type! (the gradient of {var.name} is a "
                                         f"{type(grad).__name__}, not a Tensor or IndexedSlices)")
                    self._accumulator_list.append((accum, var.device))

            # The update, the token queue and the barrier live with the global step.
            with ops.device(global_step.device), ops.name_scope(""):
                update_op = self._opt.apply_gradients(list(zip(aggregated_grads, var_list)), global_step)

            with ops.device(global_step.device), ops.name_scope(""):
                self._sync_token_queue = data_flow_ops.FIFOQueue(
                    -1, step_dtype, shapes=(), name="sync_token_q", shared_name="sync_token_q")

            with ops.device(global_step.device), ops.name_scope(""):
                with ops.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = state_ops.assign(self._local_step, token)

                with ops.control_dependencies([update_op]):
                    # One token per replica for the next step, each holding the new global step.
                    tokens = array_ops.fill([self._tokens_per_step], global_step)
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))

                if self._variable_averages is not None:
                    with ops.control_dependencies([sync_op]), ops.name_scope(""):
                        sync_op = self._variable_averages.apply(self._variables_to_average)

                # As TensorFlow 2.21: the runner's queue is the token queue itself.
                self._chief_queue_runner = queue_runner_impl.QueueRunner(self._sync_token_queue, [sync_op])

            for accum, device in self._accumulator_list:
                with ops.device(device):
                    chief_init_ops.append(accum.set_global_step(global_step, name="SetGlobalStep"))
            self.chief_init_op = control_flow_ops.group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def get_chief_queue_runner(self):
        """The ``QueueRunner`` whose thread (on the chief) aggregates, updates and hands out tokens.

        Raises ValueError before ``apply_gradients``.
        """
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        """The wrapped optimizer's slot ``name`` for ``var`` (or None)."""
        return self._opt.get_slot(*args, **kwargs)

    def variables(self):
        """The wrapped optimizer's variables (the local step is not among them)."""
        return self._opt.variables()

    def get_slot_names(self, *args, **kwargs):
        """The wrapped optimizer's slot names."""
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens=-1):
        """An op putting ``num_tokens`` tokens (default ``replicas_to_aggregate``) holding the global step into
        the token queue, for the chief to run once before training (a no-op when ``num_tokens`` is 0).

        Raises ValueError before ``apply_gradients``, or when ``num_tokens`` is less than
        ``replicas_to_aggregate - total_num_replicas`` (too few to finish the first update).
        """
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(
                f"Too few tokens to finish the first step: {num_tokens} (given) vs {tokens_needed} (needed); "
                "num_tokens must be at least replicas_to_aggregate - total_num_replicas")
        if num_tokens > 0:
            with ops.device(self._global_step.device), ops.name_scope(""):
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return control_flow_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A hook that, once the session exists, runs the local init op (``chief_init_op`` on the chief,
        ``local_step_init_op`` elsewhere) and, on the chief, the init-tokens op and the chief queue runner."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Initializes a replica for ``SyncReplicasOptimizer`` when its session is created."""

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        """Runs the replica's init ops; on the chief, fills the token queue and starts the sync thread."""
        ready, msg = session_manager._ready(
            self._ready_for_local_init_op, session, "Model is not ready for SyncReplicasOptimizer local init.")
        if not ready:
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                f"Init op: {self._local_init_op.name}, error: {msg}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
