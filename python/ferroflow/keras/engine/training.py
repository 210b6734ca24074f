"""Keras's ``Model`` on TF1 graphs: the functional model (``Model(inputs, outputs)``), subclassed models, and
``compile``/``fit``/``evaluate``/``predict`` as Keras ran them on TensorFlow 1.x.

``compile`` builds the loss in the graph (``loss/<output>_loss``: the mean of the per-sample loss, plus the
layers' regularization losses) and one (sum, count) pair per metric; the train op (``training/...``) is made
by the optimizer on the first ``fit``. Each step feeds a batch and the learning phase (True) and runs the train
op with the layers' updates (batch normalization's moving averages); the loss fetched is the batch's before
the update. An epoch's ``loss`` is the batch losses' mean weighted by batch size, an output's loss (several
outputs) the plain mean of its batch values, and a metric its mean over every sample of the epoch, as TF 1.x's
``BaseLogger`` and stateful metrics report them; metric names are TF
1.x's (``'accuracy'`` is logged as ``'acc'``, ``'mae'`` as ``'mean_absolute_error'``).

``save_weights``/``load_weights`` write/read a TensorFlow object-based checkpoint (V2 format, with the
``_CHECKPOINTABLE_OBJECT_GRAPH`` TensorFlow's Keras writes) whose keys follow the layers' order
(``layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE``, an RNN's under ``.../cell/...``), so weights load
into the same architecture built again under other names, here or in TensorFlow; with a ``.h5`` path (or ``save_format='h5'``) they
write/read Keras's HDF5 layout, as ``save``/``keras.models.load_model`` do for whole models (``saving.py``;
HDF5 needs the optional h5py).
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, errors, ops
from ferroflow.keras import backend as K
from ferroflow.keras import callbacks as callbacks_mod
from ferroflow.keras import losses as losses_mod
from ferroflow.keras import metrics as metrics_mod
from ferroflow.keras import optimizers as optimizers_mod
from ferroflow.keras.engine import weighting
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.keras.engine.input_layer import InputLayer
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, control_flow_ops, math_ops
from ferroflow.training import optimizers as tf_optimizer

__all__ = ["Model"]

_H5_SUFFIXES = (".h5", ".hdf5", ".keras")


def _is_h5(filepath, save_format):
    return save_format in ("h5", "hdf5", "keras") or str(filepath).endswith(_H5_SUFFIXES)


def _batches(n, batch_size):
    return [(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]


def _slice(arrays, idx):
    return [a[idx] for a in arrays]


class Model(Layer):
    """``Model(inputs, outputs)`` (functional) or a subclass whose ``call`` computes the outputs."""

    def __init__(self, *args, **kwargs):
        inputs = kwargs.pop("inputs", None)
        outputs = kwargs.pop("outputs", None)
        if len(args) >= 2:
            inputs, outputs = args[0], args[1]
        elif len(args) == 1:
            inputs = args[0]
        name = kwargs.pop("name", None)
        object.__setattr__(self, "_tracked_layers", [])
        Layer.__init__(self, name=name, trainable=kwargs.pop("trainable", True), dtype=kwargs.pop("dtype", None),
                       **kwargs)
        self.inputs = []
        self.outputs = []
        self._nested_outputs = None
        self._nodes_in_order = []
        self._graph_layers = []
        self._is_graph_network = False
        self.optimizer = None
        self.stop_training = False
        self.history = None
        self._compiled = False
        self._train_op = None
        self.metrics_names = ["loss"]
        if inputs is not None and outputs is not None:
            self._init_graph_network(inputs, outputs)

    # -- layers and weights ---------------------------------------------------------------------------
    def __setattr__(self, name, value):
        tracked = self.__dict__.get("_tracked_layers")
        if tracked is not None and isinstance(value, Layer) and not name.startswith("_") and \
                all(value is not t for t in tracked):
            tracked.append(value)
        elif tracked is not None and isinstance(value, (list, tuple)) and not name.startswith("_"):
            for v in value:
                if isinstance(v, Layer) and all(v is not t for t in tracked):
                    tracked.append(v)
        object.__setattr__(self, name, value)

    @property
    def layers(self):
        if self._is_graph_network:
            return list(self._graph_layers)
        return [t for t in self._tracked_layers if t is not self]

    def get_layer(self, name=None, index=None):
        """The layer named ``name`` or at position ``index`` of ``layers``."""
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only has "
                                 f"{len(self.layers)} layers.")
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}.")

    def _gather(self, attr):
        seen, out = set(), []
        for layer in self.layers:
            for w in getattr(layer, attr):
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        for w in getattr(Layer, attr).fget(self):
            if id(w) not in seen:
                seen.add(id(w))
                out.append(w)
        return out

    @property
    def trainable_weights(self):
        return self._gather("trainable_weights") if self._trainable else []

    @property
    def non_trainable_weights(self):
        if self._trainable:
            return self._gather("non_trainable_weights")
        return self._gather("weights")

    @property
    def weights(self):
        """Every weight, layer by layer (as TensorFlow's Keras lists a model's weights)."""
        own = [w for w in Layer.weights.fget(self) if all(w is not x for x in self._layer_weights())]
        return self._layer_weights() + own

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def losses(self):
        out = []
        for layer in self.layers:
            out.extend(layer.losses)
        out.extend(self._losses)
        return out

    @property
    def updates(self):
        if not self._trainable:
            return []
        out = []
        for layer in self.layers:
            out.extend(layer.updates)
        out.extend(self._updates)
        return out

    def _layer_weights(self):
        """Weights layer by layer (TF 1.x's ``get_weights``/``set_weights`` order)."""
        seen, out = set(), []
        for layer in self.layers:
            for w in layer.weights:
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    def get_weights(self):
        """Every layer's weights, layer by layer, as numpy arrays."""
        return K.batch_get_value(self._layer_weights())

    def set_weights(self, weights):
        """Assigns ``weights`` (numpy arrays in ``get_weights`` order)."""
        params = self._layer_weights()
        if len(params) != len(weights):
            raise ValueError(f"You called `set_weights(weights)` on model \"{self.name}\" with a weight list of "
                             f"length {len(weights)}, but the model was expecting {len(params)} weights.")
        pairs = []
        for p, w in zip(params, weights):
            w = np.asarray(w)
            if tuple(p.shape.as_list()) != w.shape:
                raise ValueError(f"Layer weight shape {tuple(p.shape.as_list())} of {p.name} not compatible with "
                                 f"provided weight shape {w.shape}")
            pairs.append((p, w))
        K.batch_set_value(pairs)

    @property
    def input(self):
        """The model's input tensor(s) (TensorFlow's first node of a model is the one its inputs make)."""
        if not self._inbound_nodes and self.inputs:
            return self.inputs[0] if len(self.inputs) == 1 else list(self.inputs)
        return Layer.input.fget(self)

    @property
    def output(self):
        """The model's output tensor(s)."""
        if not self._inbound_nodes and self.outputs:
            return self.outputs[0] if len(self.outputs) == 1 else list(self.outputs)
        return Layer.output.fget(self)

    def reset_states(self):
        """Resets the states of the model's stateful layers (stateful RNNs)."""
        for layer in self.layers:
            if getattr(layer, "stateful", False) and hasattr(layer, "reset_states"):
                layer.reset_states()

    def count_params(self):
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    # -- the graph network ---------------------------------------------------------------------------------
    def _init_graph_network(self, inputs, outputs):
        self._nested_outputs = outputs
        self.inputs = list(nest.flatten(inputs))
        self.outputs = list(nest.flatten(outputs))
        for t in self.inputs + self.outputs:
            if K.tensor_meta(t, "history") is None:
                raise ValueError(f"Tensor {t.name} is not the output of a Keras layer (or an Input): model inputs "
                                 "and outputs must come from tf.keras.Input and Keras layers (wrap TensorFlow ops "
                                 "in a tf.keras.layers.Lambda).")
        input_ids = {id(t) for t in self.inputs}
        order, seen_nodes, layers = [], set(), []

        def visit(tensor):
            layer, node_index, _ = K.tensor_meta(tensor, "history")
            node = layer._inbound_nodes[node_index]
            if id(node) in seen_nodes:
                return
            seen_nodes.add(id(node))
            if id(tensor) not in input_ids:
                if isinstance(layer, InputLayer):
                    raise ValueError(f"Graph disconnected: cannot obtain value for tensor {tensor.name} at layer "
                                     f"\"{layer.name}\". It is not among the model's inputs.")
                for t in node.input_tensors:
                    if K.tensor_meta(t, "history") is None:
                        raise ValueError(f"Tensor {t.name}, an input of layer \"{layer.name}\", is not the output "
                                         "of a Keras layer: wrap TensorFlow ops in a tf.keras.layers.Lambda.")
                    visit(t)
            order.append(node)

        for t in self.inputs:
            visit(t)
        for t in self.outputs:
            visit(t)
        del layers
        self._nodes_in_order = order
        self._graph_layers = _layers_by_depth(self.inputs, self.outputs)
        self._is_graph_network = True
        self.built = True
        self.input_names = [K.tensor_meta(t, "history")[0].name for t in self.inputs]
        self.output_names = [K.tensor_meta(t, "history")[0].name for t in self.outputs]

    def call(self, inputs, training=None, mask=None):
        """Applies the model's layers, in the order of the graph, to new ``inputs``."""
        if not self._is_graph_network:
            raise NotImplementedError("A subclassed Model must implement call()")
        flat = nest.flatten(inputs)
        if len(flat) != len(self.inputs):
            raise ValueError(f"Model {self.name} expects {len(self.inputs)} input(s), got {len(flat)}")
        mapping = {id(a): b for a, b in zip(self.inputs, flat)}
        for node in self._nodes_in_order:
            if isinstance(node.layer, InputLayer):
                continue
            args = nest.map_structure(lambda t: mapping[id(t)], node.inputs)
            kwargs = dict(node.kwargs)
            if training is not None and node.layer._expects_training_arg and "training" not in kwargs:
                kwargs["training"] = training
            outs = node.layer(args, **kwargs)
            for a, b in zip(node.output_tensors, nest.flatten(outs)):
                mapping[id(a)] = b
        return nest.map_structure(lambda t: mapping[id(t)], self._nested_outputs)

    def _ensure_built(self, x_list):
        """A model without inputs yet (deferred Sequential, subclassed model) is built from the data's shapes."""
        if self.outputs:
            return
        graph = ops.get_default_graph()
        with graph.as_default():
            placeholders = []
            for i, x in enumerate(x_list):
                x = np.asarray(x)
                dtype = K.floatx() if x.dtype.kind == "f" else x.dtype
                placeholders.append(array_ops.placeholder(dtypes.as_dtype(dtype), shape=(None,) + x.shape[1:],
                                                          name=f"input_{i + 1}"))
            self._build_on(placeholders if len(placeholders) > 1 else placeholders[0])

    def _build_on(self, inputs):
        outputs = self(inputs)
        self.inputs = list(nest.flatten(inputs))
        self.outputs = list(nest.flatten(outputs))
        self._nested_outputs = outputs
        self.input_names = [f"input_{i + 1}" for i in range(len(self.inputs))]
        self.output_names = [f"output_{i + 1}" for i in range(len(self.outputs))]
        if self._compile_args is not None:
            self._build_training_graph()

    # -- compile ------------------------------------------------------------------------------------------
    _compile_args = None

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, sample_weight_mode=None,
                weighted_metrics=None, target_tensors=None, **kwargs):
        """Sets the optimizer (a name, a Keras or ``tf.train`` optimizer), the loss(es) and the metrics."""
        if kwargs:
            raise TypeError(f"Invalid keyword argument(s) in `compile`: {sorted(kwargs)}")
        if loss is None:
            raise ValueError("The model must be compiled with a loss")
        self.optimizer = optimizers_mod.get(optimizer)
        self.loss = loss
        self._compile_args = {"loss": loss, "metrics": metrics or [], "loss_weights": loss_weights,
                              "target_tensors": target_tensors, "sample_weight_mode": sample_weight_mode,
                              "weighted_metrics": weighted_metrics or []}
        self._train_op = None
        self._compiled = True
        if self.outputs:
            self._build_training_graph()

    def _per_output(self, value, what):
        n = len(self.outputs)
        if isinstance(value, dict):
            return [value.get(name) for name in self.output_names]
        if isinstance(value, (list, tuple)) and what not in ("metrics", "weighted_metrics"):
            if len(value) != n:
                raise ValueError(f"When passing a list as {what}, it should have one entry per model output. The "
                                 f"model has {n} outputs, but you passed {what}={value!r}")
            return list(value)
        if what in ("metrics", "weighted_metrics") and isinstance(value, (list, tuple)) and value and \
                all(isinstance(v, (list, tuple)) for v in value):
            return [list(v) for v in value]
        return [value] * n

    @staticmethod
    def _metric_fn(metric, loss_fn, output):
        """The function and TF 1.x's name of a metric given as a string or a callable."""
        loss_fn = losses_mod.unwrap(loss_fn)
        if isinstance(metric, (metrics_mod.MeanMetricWrapper, metrics_mod.RootMeanSquaredError)):
            return metric.values, metric.name
        if isinstance(metric, str) and metric in ("accuracy", "acc"):
            last = output.shape.as_list()[-1] if output.shape.rank else None
            if loss_fn is losses_mod.binary_crossentropy or last == 1:
                return metrics_mod.binary_accuracy, "acc"
            if loss_fn is losses_mod.sparse_categorical_crossentropy:
                return metrics_mod.sparse_categorical_accuracy, "acc"
            return metrics_mod.categorical_accuracy, "acc"
        if isinstance(metric, str) and metric in ("crossentropy", "ce"):
            if loss_fn is losses_mod.sparse_categorical_crossentropy:
                return losses_mod.sparse_categorical_crossentropy, "ce"
            if loss_fn is losses_mod.binary_crossentropy:
                return losses_mod.binary_crossentropy, "ce"
            return losses_mod.categorical_crossentropy, "ce"
        fn = metrics_mod.get(metric)
        return fn, getattr(fn, "__name__", type(fn).__name__)

    def _build_training_graph(self):
        args = self._compile_args
        graph = self.outputs[0].graph
        with graph.as_default():
            loss_fns = [losses_mod.get(v) for v in self._per_output(args["loss"], "loss")]
            weights = args["loss_weights"]
            weights = self._per_output(weights, "loss_weights") if weights is not None else [1.0] * len(self.outputs)
            targets = args["target_tensors"]
            targets = list(nest.flatten(targets)) if targets is not None else None
            metric_lists = self._per_output(args["metrics"], "metrics")
            weighted_lists = self._per_output(args["weighted_metrics"], "weighted_metrics")
            modes = self._per_output(args["sample_weight_mode"], "sample_weight_mode")
            self._sample_weight_modes = modes
            self._targets = []
            self._sample_weights = []
            for i, (out, name) in enumerate(zip(self.outputs, self.output_names)):
                if targets is not None:
                    self._targets.append(targets[i])
                else:
                    rank = out.shape.rank
                    shape = None if rank is None else [None] * rank
                    with ops.name_scope(""):
                        self._targets.append(array_ops.placeholder(dtypes.float32, shape=shape, name=f"{name}_target"))
                # Weights default to ones, one per sample (per step when temporal): fed only when given.
                axes = 2 if modes[i] == "temporal" else 1
                with ops.name_scope(""):
                    ones = array_ops.ones(array_ops.shape(out)[:axes], dtype=dtypes.float32)
                    self._sample_weights.append(array_ops.placeholder_with_default(
                        ones, shape=[None] * axes, name=f"{name}_sample_weights"))
            masks = [K.tensor_meta(out, "mask") for out in self.outputs]
            multi = len(self.outputs) > 1
            output_losses = []
            with ops.name_scope("loss"):
                total = None
                for out, tgt, fn, w, name, sw, mask in zip(self.outputs, self._targets, loss_fns, weights,
                                                         self.output_names, self._sample_weights, masks):
                    if fn is None:
                        continue
                    with ops.name_scope(f"{name}_loss"):
                        if isinstance(fn, losses_mod.Loss):  # a loss object: its call, weighed, its reduction
                            if fn.reduction == losses_mod.Reduction.NONE:
                                raise ValueError("A loss with reduction NONE cannot be a model's loss: compile "
                                                 "needs a scalar (use AUTO, SUM or SUM_OVER_BATCH_SIZE)")
                            per_sample = math_ops.cast(fn.call(tgt, out), dtypes.float32)
                            value = weighting.reduce_loss(per_sample, sw, fn.reduction, mask)
                        else:
                            per_sample = math_ops.cast(fn(tgt, out), dtypes.float32)
                            value = weighting.weighted_loss(per_sample, sw, mask)
                    output_losses.append(value)
                    term = value if w == 1.0 else math_ops.multiply(value, float(w))
                    total = term if total is None else math_ops.add(total, term)
                if total is None:
                    raise ValueError("The model cannot be compiled because it has no loss to optimize.")
                reg = self.losses
                if reg:
                    total = math_ops.add(total, math_ops.add_n([math_ops.cast(r, dtypes.float32) for r in reg]))
            self.total_loss = total
            self._output_losses = output_losses if multi else []
            names = ["loss"] + ([f"{n}_loss" for n, f in zip(self.output_names, loss_fns) if f is not None]
                                if multi else [])
            # Per metric: (sum, count) of a mean (aggregated here over the batches), or (value,) of a stateful
            # metric object (its variables aggregate; the value fetched is its result after the batch).
            self._metric_tensors = []
            self._metric_finish = []
            self._stateful_metrics = []
            with ops.name_scope("metrics"):
                for i, (out, tgt, fn, oname) in enumerate(zip(self.outputs, self._targets, loss_fns,
                                                              self.output_names)):
                    listed = [(m, False) for m in metric_lists[i] or []] + \
                        [(m, True) for m in weighted_lists[i] or []]
                    for m, weighted in listed:
                        if isinstance(m, str) and m in metrics_mod._STATEFUL:
                            m = metrics_mod.get(m)
                        stateful = _is_stateful(m)
                        mfn, mname = (None, m.name) if stateful else self._metric_fn(m, fn, out)
                        if weighted:
                            mname = "weighted_" + mname
                        full = f"{oname}_{mname}" if multi else mname
                        with ops.name_scope(full):
                            sw = self._sample_weights[i] if weighted else None
                            if stateful:
                                self._metric_tensors.append(
                                    (m(tgt, out, sample_weight=weighting.with_mask(out, sw, masks[i])),))
                                self._stateful_metrics.append(m)
                            else:
                                self._metric_tensors.append(weighting.mean_parts(mfn(tgt, out), sw, masks[i]))
                        self._metric_finish.append(getattr(m, "finish", None))
                        names.append(full)
            self.metrics_names = names

    def _make_train_op(self):
        if self._train_op is not None:
            return self._train_op
        if not self._compiled:
            raise RuntimeError("You must compile your model before training/testing. Use `model.compile(optimizer, "
                               "loss)`.")
        graph = self.total_loss.graph
        before = {id(v) for v in graph.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)}
        with graph.as_default(), ops.name_scope("training"):
            deps = [self.total_loss] + [t for pair in self._metric_tensors for t in pair] + self._output_losses
            with ops.control_dependencies(deps):
                params = self.trainable_weights
                ops_ = []
                if params:
                    # Keras's own optimizers take plain gradients (OptimizerV2.get_gradients); a tf.train
                    # optimizer gates them per op (GATE_OP), as TF 1.x's Keras TFOptimizer calls it.
                    gate = {"gate_gradients": tf_optimizer.Optimizer.GATE_NONE} \
                        if isinstance(self.optimizer, optimizers_mod._KerasOptimizer) else {}
                    grads = self.optimizer.compute_gradients(self.total_loss, var_list=params, **gate)
                    if all(g is None for g, _ in grads):
                        raise ValueError("No gradients provided for any variable of the model")
                    step = {}
                    if not isinstance(self.optimizer, optimizers_mod._KerasOptimizer):
                        # TF 1.x's Keras wraps a tf.train optimizer in a TFOptimizer counting the steps.
                        from ferroflow.ops import variables as variables_mod

                        with ops.init_scope(), ops.name_scope("TFOptimizer/"):
                            step["global_step"] = variables_mod.Variable(0, name="iterations", trainable=False,
                                                                         dtype=dtypes.int64)
                    ops_.append(self.optimizer.apply_gradients([(g, v) for g, v in grads if g is not None],
                                                               **step))
                ops_.extend(self.updates)
                self._train_op = control_flow_ops.group(*ops_) if ops_ else control_flow_ops.no_op()
        for v in graph.get_collection(ops.GraphKeys.GLOBAL_VARIABLES):
            if id(v) not in before:
                K._track_variable(v)  # the optimizer's slots: get_session initializes them
        return self._train_op

    # -- data -----------------------------------------------------------------------------------------------
    def _x_list(self, x):
        if isinstance(x, dict):
            names = getattr(self, "input_names", None) or list(x)
            return [np.asarray(x[n]) for n in names]
        if isinstance(x, (list, tuple)):
            if len(self.inputs) > 1:
                return [np.asarray(v) for v in x]
            if not self.inputs and len(x) > 1 and all(isinstance(v, np.ndarray) for v in x):
                return [np.asarray(v) for v in x]
        return [np.asarray(x)]

    def _y_list(self, y):
        if y is None:
            return None
        if isinstance(y, dict):
            ys = [np.asarray(y[n]) for n in self.output_names]
        elif isinstance(y, (list, tuple)) and len(self.outputs) > 1:
            ys = [np.asarray(v) for v in y]
        else:
            ys = [np.asarray(y)]
        out = []
        for v, t in zip(ys, self._targets):
            rank = t.shape.rank
            if rank is not None and v.ndim == rank - 1:
                v = v.reshape(v.shape + (1,))
            out.append(v)
        return out

    def _sw_list(self, sample_weight, class_weight, ys):
        """Per output: the weights of its samples (``sample_weight`` and/or ``class_weight``), or None."""
        n = len(self.outputs)
        if sample_weight is None and class_weight is None:
            return None
        if isinstance(sample_weight, dict) or (n > 1 and isinstance(sample_weight, (list, tuple))):
            sws = self._per_output(sample_weight, "sample_weight")
        else:
            sws = [sample_weight] * n
        if isinstance(class_weight, dict) and n > 1 and set(class_weight) <= set(self.output_names):
            cws = [class_weight.get(name) for name in self.output_names]
        else:
            cws = [class_weight] * n
        modes = getattr(self, "_sample_weight_modes", [None] * n)
        out = [weighting.standardize_weights(y, sw, cw, mode) for y, sw, cw, mode in zip(ys, sws, cws, modes)]
        return None if all(w is None for w in out) else out

    def _feed(self, xs, ys=None, training=False, sws=None):
        # a 1-D array for an input of higher rank is a column, as TF's Keras standardizes it
        feed = {ph: (v[:, None] if np.ndim(v) == 1 and ph.shape.rank not in (None, 1) else v)
                for ph, v in zip(self.inputs, xs)}
        if ys is not None:
            feed.update({ph: v for ph, v in zip(self._targets, ys)})
        if sws is not None:
            feed.update({ph: v for ph, v in zip(self._sample_weights, sws) if v is not None})
        phase = K.learning_phase()
        if isinstance(phase, ops.Tensor):
            feed[phase] = bool(training)
        return feed

    def _check_lengths(self, arrays):
        lengths = {len(a) for a in arrays}
        if len(lengths) > 1:
            raise ValueError(f"All input arrays (x) and target arrays (y) should have the same number of samples. "
                             f"Got array sizes: {sorted(lengths)}")
        return lengths.pop() if lengths else 0

    # -- fit / evaluate / predict -------------------------------------------------------------------------
    def _run_batches(self, batches, fetch_train, callbacks=None, mode="train", per_step=False):
        """Runs each (xs, ys) of ``batches``; returns the epoch's averaged loss(es) and metrics by name (the total
        loss weighted by batch size; with ``per_step``, as TF's Keras evaluates generators, the plain mean of the
        batches')."""
        session = K.get_session()
        loss_fetches = [self.total_loss] + list(self._output_losses)
        metric_fetches = [t for pair in self._metric_tensors for t in pair]
        fetches = loss_fetches + metric_fetches + ([fetch_train] if fetch_train is not None else [])
        n_loss = len(loss_fetches)
        # The total loss is averaged over samples (batches weighted by size); an output's loss, as TF's Keras keeps
        # it in a Mean metric of the batch values, over batches.
        loss_sums = np.zeros(n_loss)
        batch_weights = np.zeros(n_loss)
        metrics = _MetricTotals(self._metric_tensors, self._metric_finish)
        for m in self._stateful_metrics:
            m.reset_states()
        seen = 0
        for b, (xs, ys, sws) in enumerate(batches):
            size = len(xs[0])
            logs = {"batch": b, "size": size}
            if callbacks is not None:
                (callbacks.on_train_batch_begin if mode == "train" else callbacks.on_test_batch_begin)(b, logs)
            values = session.run(fetches, feed_dict=self._feed(xs, ys, training=mode == "train", sws=sws))
            weight = np.array([1 if per_step else size] + [1] * (n_loss - 1), np.float64)
            loss_sums += np.asarray(values[:n_loss], np.float64) * weight
            batch_weights += weight
            metrics.add(values[n_loss:n_loss + len(metric_fetches)])
            seen += size
            if callbacks is not None:
                for name, v in zip(self.metrics_names[:n_loss], values[:n_loss]):
                    logs[name] = float(v)
                logs.update(zip(self.metrics_names[n_loss:], metrics.values()))
                (callbacks.on_train_batch_end if mode == "train" else callbacks.on_test_batch_end)(b, logs)
            if mode == "train" and self.stop_training:
                break
        if seen == 0:
            raise ValueError("No data to run the model on (0 samples)")
        results = {}
        for name, s, w in zip(self.metrics_names[:n_loss], loss_sums, batch_weights):
            results[name] = float(s / w)
        results.update(zip(self.metrics_names[n_loss:], metrics.values()))
        return results

    def _array_batches(self, xs, ys, batch_size, shuffle=False, sws=None):
        n = self._check_lengths(xs + (ys or []) + [w for w in sws or [] if w is not None])
        index = np.arange(n)
        if shuffle == "batch":
            chunks = [index[a:b] for a, b in _batches(n, batch_size)]
            np.random.shuffle(chunks)
            index = np.concatenate(chunks) if chunks else index
        elif shuffle:
            np.random.shuffle(index)
        for a, b in _batches(n, batch_size):
            idx = index[a:b]
            yield (_slice(xs, idx), (_slice(ys, idx) if ys is not None else None),
                   ([None if w is None else w[idx] for w in sws] if sws is not None else None))

    def _dataset_batches(self, dataset, steps):
        """Batches drawn from a ``tf.data`` dataset (or an iterator) of ``(x, y)`` elements."""
        session = K.get_session()
        if hasattr(dataset, "get_next"):
            element = dataset.get_next()
        else:
            iterator = getattr(self, "_dataset_iterators", {}).get(id(dataset))
            if iterator is None:
                iterator = dataset.make_initializable_iterator()
                self.__dict__.setdefault("_dataset_iterators", {})[id(dataset)] = (iterator, dataset)
            else:
                iterator = iterator[0]
            if steps is None:
                session.run(iterator.initializer)
            elif not getattr(iterator, "_ff_initialized", False):
                session.run(iterator.initializer)
                iterator._ff_initialized = True
            element = iterator.get_next()
        step = 0
        while steps is None or step < steps:
            try:
                value = session.run(element)
            except errors.OutOfRangeError:
                if steps is not None:
                    raise ValueError(f"The dataset ran out of data after {step} of {steps} steps (use "
                                     f"dataset.repeat())") from None
                return
            yield self._unpack_batch(value)
            step += 1

    def _unpack_batch(self, value, class_weight=None):
        """``(xs, ys, sample weights)`` of a batch given as ``x``, ``(x, y)`` or ``(x, y, sample_weight)``."""
        if isinstance(value, tuple) and len(value) >= 2:
            xs, ys = self._x_list(value[0]), self._y_list(value[1])
            sws = self._sw_list(value[2] if len(value) > 2 else None, class_weight, ys)
            return xs, ys, sws
        return self._x_list(value), None, None

    def _generator_batches(self, generator, steps, class_weight=None):
        for _ in range(steps):
            yield self._unpack_batch(tuple(next(generator)), class_weight)

    @staticmethod
    def _is_dataset(x):
        return hasattr(x, "make_initializable_iterator") or (hasattr(x, "get_next") and hasattr(x, "initializer"))

    def _first_batch_shapes(self, x):
        if self._is_dataset(x):
            shapes = getattr(x, "output_shapes", None)
            types = getattr(x, "output_types", None)
            if shapes is None:
                raise ValueError("Build the model (give input_shape) before fitting it on a dataset")
            first_shape, first_type = (shapes[0], types[0]) if isinstance(shapes, tuple) else (shapes, types)
            dims = first_shape.as_list()
            return [np.zeros([1] + dims[1:], dtype=first_type.as_numpy_dtype)]
        return self._x_list(x)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_freq=1, **kwargs):
        """Trains for ``epochs`` epochs; returns the ``History`` (``history.history['loss']``, ...)."""
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        if x is None:
            raise ValueError("fit needs x (numpy arrays, a tf.data dataset or an iterator)")
        if _is_generator(x):
            if y is not None:
                raise ValueError("`y` argument is not supported when data is a generator or a keras.utils.Sequence; "
                                 "the batches hold the targets.")
            return self.fit_generator(x, steps_per_epoch=steps_per_epoch, epochs=epochs, verbose=verbose,
                                      callbacks=callbacks, validation_data=validation_data,
                                      validation_steps=validation_steps, class_weight=class_weight, shuffle=shuffle,
                                      initial_epoch=initial_epoch, validation_freq=validation_freq)
        self._ensure_built(self._first_batch_shapes(x))
        train_op = self._make_train_op()
        batch_size = 32 if batch_size is None else int(batch_size)
        dataset = self._is_dataset(x)
        val_x = val_y = val_sws = None
        if not dataset:
            xs, ys = self._x_list(x), self._y_list(y)
            if ys is None:
                raise ValueError("fit on arrays needs y (the targets)")
            sws = self._sw_list(sample_weight, class_weight, ys)
            n = self._check_lengths(xs + ys + [w for w in sws or [] if w is not None])
            if validation_data is not None:
                val_x, val_y, val_sws = self._unpack_batch(tuple(validation_data))
            elif validation_split and 0.0 < validation_split < 1.0:
                split = int(n * (1.0 - validation_split))
                val_x, val_y = [a[split:] for a in xs], [a[split:] for a in ys]
                xs, ys = [a[:split] for a in xs], [a[:split] for a in ys]
                if sws is not None:
                    val_sws = [None if w is None else w[split:] for w in sws]
                    sws = [None if w is None else w[:split] for w in sws]
                n = split
        else:
            n = None
            if class_weight is not None or sample_weight is not None:
                raise ValueError("`sample_weight` argument is not supported when input `x` is a dataset or a dataset "
                                 "iterator. Instead, you can provide sample_weight as the third element of your "
                                 "dataset, i.e. (inputs, targets, sample_weight).")
            if validation_data is not None:
                if self._is_dataset(validation_data):
                    val_x = validation_data
                else:
                    val_x, val_y, val_sws = self._unpack_batch(tuple(validation_data))
        do_validation = val_x is not None
        if verbose and n is not None:
            if do_validation and val_y is not None:
                print(f"Train on {n} samples, validate on {len(val_x[0])} samples")
            else:
                print(f"Train on {n} samples")
        self.history = callbacks_mod.History()
        cbs = list(callbacks or []) + [self.history]
        if verbose:
            cbs.append(callbacks_mod.ProgbarLogger("steps" if dataset else "samples"))
        cb = callbacks_mod.CallbackList(cbs)
        cb.set_model(self)
        names = list(self.metrics_names)
        # a dataset is counted in steps (TF's params: no batch size, the steps as the samples)
        cb.set_params({"batch_size": None if dataset else batch_size, "epochs": epochs, "steps": steps_per_epoch,
                       "samples": steps_per_epoch if dataset else n,
                       "verbose": verbose, "do_validation": do_validation,
                       "metrics": names + (["val_" + m for m in names] if do_validation else [])})
        self.stop_training = False
        cb.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            cb.on_epoch_begin(epoch, {})
            if dataset:
                batches = self._dataset_batches(x, steps_per_epoch)
            else:
                batches = self._array_batches(xs, ys, batch_size, shuffle=shuffle, sws=sws)
            logs = self._run_batches(batches, train_op, callbacks=cb, mode="train", per_step=dataset)
            if do_validation and (epoch + 1) % validation_freq == 0:
                if val_y is None:
                    val_logs = self._run_batches(self._dataset_batches(val_x, validation_steps), None, mode="test",
                                                 per_step=True)
                else:
                    # TF 1.x's validation loop shuffles too (it leaves `shuffle` at its default): the same
                    # numpy draws keep the next epochs' orders the same as TensorFlow's.
                    val_logs = self._run_batches(self._array_batches(val_x, val_y, batch_size, shuffle=bool(shuffle),
                                                                     sws=val_sws), None, mode="test")
                logs.update({"val_" + k: v for k, v in val_logs.items()})
            cb.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cb.on_train_end()
        return self.history

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None, steps=None, callbacks=None,
                 **kwargs):
        """The loss (and metrics) over ``x``/``y``: a scalar, or ``[loss, metric, ...]`` (``metrics_names``)."""
        if _is_generator(x):
            return self.evaluate_generator(x, steps=steps)
        self._ensure_built(self._first_batch_shapes(x))
        if not self._compiled:
            raise RuntimeError("You must compile your model before training/testing. Use `model.compile(optimizer, "
                               "loss)`.")
        batch_size = 32 if batch_size is None else int(batch_size)
        if self._is_dataset(x):
            if sample_weight is not None:
                raise ValueError("`sample_weight` argument is not supported when input `x` is a dataset or a dataset "
                                 "iterator; give it as the third element of the dataset's elements.")
            batches = self._dataset_batches(x, steps)
        else:
            ys = self._y_list(y)
            batches = self._array_batches(self._x_list(x), ys, batch_size, sws=self._sw_list(sample_weight, None, ys))
        # TF's Keras averages a dataset's loss over the steps, arrays' over the samples
        logs = self._run_batches(batches, None, mode="test", per_step=self._is_dataset(x))
        # verbose draws nothing: TF's graph-mode Keras (tf_keras 2.21) shows no progress for evaluate
        values = [logs[name] for name in self.metrics_names]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None, **kwargs):
        """The outputs for ``x`` (the learning phase off), batch by batch, concatenated."""
        if _is_generator(x):
            return self.predict_generator(x, steps=steps)
        self._ensure_built(self._first_batch_shapes(x))
        session = K.get_session()
        batch_size = 32 if batch_size is None else int(batch_size)
        if self._is_dataset(x):
            batches = ((xs, None, None) for xs, _, _ in self._dataset_batches(x, steps))
        else:
            batches = self._array_batches(self._x_list(x), None, batch_size)
        parts = [[] for _ in self.outputs]
        for xs, _, _ in batches:
            values = session.run(self.outputs, feed_dict=self._feed(xs))
            for p, v in zip(parts, values):
                p.append(v)
        if not parts[0]:
            raise ValueError("predict got no data")
        result = [np.concatenate(p, axis=0) for p in parts]
        return result[0] if len(result) == 1 else result

    def train_on_batch(self, x, y, sample_weight=None, class_weight=None, reset_metrics=True):
        """One training step on one batch; returns its loss (and metrics)."""
        xs = self._x_list(x)
        self._ensure_built(xs)
        train_op = self._make_train_op()
        ys = self._y_list(y)
        logs = self._run_batches([(xs, ys, self._sw_list(sample_weight, class_weight, ys))], train_op, mode="train")
        values = [logs[n] for n in self.metrics_names]
        return values[0] if len(values) == 1 else values

    def test_on_batch(self, x, y, sample_weight=None, reset_metrics=True):
        xs = self._x_list(x)
        self._ensure_built(xs)
        ys = self._y_list(y)
        logs = self._run_batches([(xs, ys, self._sw_list(sample_weight, None, ys))], None, mode="test")
        values = [logs[n] for n in self.metrics_names]
        return values[0] if len(values) == 1 else values

    def predict_on_batch(self, x):
        xs = self._x_list(x)
        self._ensure_built(xs)
        values = K.get_session().run(self.outputs, feed_dict=self._feed(xs))
        return values[0] if len(values) == 1 else values

    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1, callbacks=None,
                      validation_data=None, validation_steps=None, class_weight=None, max_queue_size=10, workers=1,
                      use_multiprocessing=False, shuffle=True, initial_epoch=0, validation_freq=1):
        """``fit`` on a Python generator of ``(x, y[, sample_weight])`` batches, or a ``keras.utils.Sequence``
        (read by index, in an order shuffled each pass by Python's ``random`` with ``shuffle``, as TF's ordered
        enqueuer reads it), ``steps_per_epoch`` batches an epoch (a Sequence's length by default)."""
        steps_per_epoch = _steps(generator, steps_per_epoch, "steps_per_epoch")
        stream = _batch_stream(generator, shuffle)
        first = next(stream)
        self._ensure_built(self._x_list(first[0] if isinstance(first, tuple) else first))
        train_op = self._make_train_op()

        def chained():
            yield first
            yield from stream

        source = chained()
        val_source = None
        if validation_data is not None and not isinstance(validation_data, tuple):
            validation_steps = _steps(validation_data, validation_steps, "validation_steps")
            val_source = _batch_stream(validation_data, False)
        self.history = callbacks_mod.History()
        cbs = list(callbacks or []) + [self.history] + ([callbacks_mod.ProgbarLogger("steps")] if verbose else [])
        cb = callbacks_mod.CallbackList(cbs)
        cb.set_model(self)
        names = list(self.metrics_names)
        cb.set_params({"batch_size": None, "epochs": epochs, "steps": steps_per_epoch, "samples": steps_per_epoch,
                       "verbose": verbose, "do_validation": validation_data is not None,
                       "metrics": names + (["val_" + m for m in names] if validation_data is not None else [])})
        self.stop_training = False
        cb.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            cb.on_epoch_begin(epoch, {})
            sizes = []
            logs = self._run_batches(_noting_sizes(self._generator_batches(source, steps_per_epoch, class_weight),
                                                   sizes), train_op, callbacks=cb)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                if isinstance(validation_data, tuple):
                    # TF's generator loop batches validation arrays by the size of the epoch's last batch and
                    # averages the loss over those steps
                    vx, vy, vsw = self._unpack_batch(validation_data)
                    val = self._run_batches(self._array_batches(vx, vy, sizes[-1], sws=vsw), None, mode="test",
                                            per_step=True)
                else:
                    val = self._run_batches(self._generator_batches(val_source, validation_steps), None,
                                            mode="test", per_step=True)
                logs.update({"val_" + k: v for k, v in val.items()})
            cb.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cb.on_train_end()
        return self.history

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10, workers=1,
                           use_multiprocessing=False, verbose=0):
        """The loss (and metrics) over ``steps`` batches of a generator or Sequence (all of a Sequence)."""
        steps = _steps(generator, steps, "steps")
        logs = self._run_batches(self._generator_batches(_batch_stream(generator, False), steps), None, mode="test",
                                 per_step=True)
        values = [logs[n] for n in self.metrics_names]
        return values[0] if len(values) == 1 else values

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10, workers=1,
                          use_multiprocessing=False, verbose=0):
        """The outputs for ``steps`` batches of a generator or Sequence, concatenated."""
        steps = _steps(generator, steps, "steps")
        source = _batch_stream(generator, False)
        outs = [self.predict_on_batch(_x_only(next(source))) for _ in range(steps)]
        if isinstance(outs[0], list):
            return [np.concatenate(parts, axis=0) for parts in zip(*outs)]
        return np.concatenate(outs, axis=0)

    # -- saving ---------------------------------------------------------------------------------------------------
    def _checkpoint_tree(self):
        """The weights as TensorFlow's Keras tracks them: ``{"layer_with_weights-<i>": {"kernel": v, ...}}`` over the
        layers that have weights (``Layer._checkpoint_node``: an RNN's under ``cell``, a wrapper's under its
        layers)."""
        tree = {}
        index = 0
        for layer in self.layers:
            ws = layer.weights
            if not ws:
                continue
            tree[f"layer_with_weights-{index}"] = layer._checkpoint_node()
            index += 1
        return tree

    def _checkpoint_vars(self):
        """``{checkpoint key: variable}`` of ``_checkpoint_tree``'s paths."""
        out = {}

        def walk(prefix, node):
            for name, child in node.items():
                path = f"{prefix}/{name}" if prefix else name
                if isinstance(child, dict):
                    walk(path, child)
                else:
                    out[f"{path}/.ATTRIBUTES/VARIABLE_VALUE"] = child

        walk("", self._checkpoint_tree())
        return out

    def save_weights(self, filepath, overwrite=True, save_format=None):
        """Writes the weights as a TensorFlow object-based checkpoint at ``filepath`` (a prefix), with TF's keys
        and object graph, so TensorFlow's ``load_weights`` reads it; or an HDF5 file (``.h5``)."""
        import os

        from ferroflow.keras import saving
        from ferroflow.training import tracking

        if _is_h5(filepath, save_format):
            saving.save_weights_h5(self, filepath)
            return
        tree = self._checkpoint_tree()
        if not tree:
            raise ValueError(f"Model {self.name} has no weights to save (build it first)")
        if self._train_op is not None and isinstance(self.optimizer, optimizers_mod._KerasOptimizer):
            tree["optimizer"] = self.optimizer  # its iterations, hyper-parameters and slots, under TF's keys
        session = K.get_session()
        with session.graph.as_default():
            path = tracking.Checkpoint(**tree).write(os.fspath(filepath), session=session)
        tracking._write_state_file(os.path.dirname(path), path)

    def load_weights(self, filepath, by_name=False, skip_mismatch=False):
        """Restores weights written by ``save_weights`` (ferroflow's or TensorFlow's: matched by the layers'
        order among those with weights); an HDF5 file also ``by_name``."""
        import os

        from ferroflow.keras import saving
        from ferroflow.training import tracking
        from ferroflow.training.py_checkpoint_reader import NewCheckpointReader
        from ferroflow.training.saver import Saver

        if _is_h5(filepath, None):
            saving.load_weights_h5(self, filepath, by_name=by_name, skip_mismatch=skip_mismatch)
            return
        if by_name:
            raise NotImplementedError("load_weights(by_name=True) applies to HDF5 files (a path ending in .h5)")
        session = K.get_session()
        filepath = os.fspath(filepath)
        reader = NewCheckpointReader(filepath)
        tree = self._checkpoint_tree()
        if self._compiled and isinstance(self.optimizer, optimizers_mod._KerasOptimizer) and \
                any(k.startswith("optimizer/") for k in reader.get_variable_to_shape_map()):
            self._make_train_op()  # the slots the checkpoint's optimizer state restores into
            tree["optimizer"] = self.optimizer
        with session.graph.as_default():
            if reader.has_tensor(tracking.OBJECT_GRAPH_PROTO_KEY):
                status = tracking.Checkpoint(**tree).read(filepath)
                status.assert_existing_objects_matched()
                status.run_restore_ops(session)
            else:  # written by a ferroflow without the object graph: the same keys
                Saver(var_list=self._checkpoint_vars()).restore(session, filepath)
        restored = list(self.weights)
        if "optimizer" in tree:
            opt = self.optimizer
            restored += [v for _, v in opt._checkpoint_children()]
            restored += [opt.get_slot(w, name) for w in self.trainable_weights for _, name in
                         opt._checkpoint_slot_names() if opt.get_slot(w, name) is not None]
        for v in restored:
            v._keras_initialized = True

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None):
        """Saves the architecture, weights and compile arguments to an HDF5 file, whatever the path's suffix
        (TF 1.x's default format; ``keras.models.load_model`` reads it, and so does TensorFlow's)."""
        from ferroflow.keras import saving

        if save_format not in (None, "h5", "hdf5", "keras"):  # TF 1.x's default format is HDF5
            raise NotImplementedError("model.save in the SavedModel format (save_format='tf') is not supported by "
                                      "ferroflow's Keras; save to HDF5 (the default) or use save_weights")
        saving.save_model(self, filepath, overwrite=overwrite, include_optimizer=include_optimizer)

    # -- configs -------------------------------------------------------------------------------------------------
    def get_config(self):
        """A functional model's layers with their inbound nodes, its input and output layers (Keras's layout)."""
        from ferroflow.keras import saving

        if not self._is_graph_network:
            raise NotImplementedError(f"get_config of the subclassed model {type(self).__name__}: subclassed models "
                                      "have no config (override get_config and from_config)")
        node_index = {}
        for node in self._nodes_in_order:
            node_index[id(node)] = sum(1 for n in self._nodes_in_order[:self._nodes_in_order.index(node)]
                                       if n.layer is node.layer)

        def ref(tensor):
            layer, index, tensor_index = K.tensor_meta(tensor, "history")
            return [layer.name, node_index.get(id(layer._inbound_nodes[index]), 0), tensor_index]

        layers = []
        for layer in self.layers:
            inbound = []
            if not isinstance(layer, InputLayer):
                for node in self._nodes_in_order:
                    if node.layer is layer:
                        kwargs = saving.serialize({k: v for k, v in node.kwargs.items() if k not in ("mask",)})
                        inbound.append([ref(t) + [kwargs] for t in node.input_tensors])
            layers.append({"class_name": type(layer).__name__, "config": layer.get_config(), "name": layer.name,
                           "inbound_nodes": inbound})
        return {"name": self.name, "layers": layers, "input_layers": [ref(t) for t in self.inputs],
                "output_layers": [ref(t) for t in self.outputs]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ferroflow.keras import saving

        return saving.model_from_config({"class_name": "Functional", "config": config}, custom_objects)

    def to_json(self, **kwargs):
        """The model's config as JSON (``keras.models.model_from_json`` rebuilds it, with new weights)."""
        import json

        from ferroflow.keras import saving

        return json.dumps({**saving.model_config(self), "keras_version": saving.KERAS_VERSION,
                           "backend": "tensorflow"}, **kwargs)

    # -- summary -----------------------------------------------------------------------------------------
    def summary(self, line_length=None, positions=None, print_fn=None):
        """Prints the layers, their output shapes and parameter counts."""
        if not self.built or not self.layers:
            raise ValueError("This model has not yet been built. Build the model first by calling `build()` or "
                             "calling `fit()` with some data, or specify an `input_shape` argument in the first "
                             "layer(s) for automatic build.")
        print_fn = print_fn or print
        line_length = line_length or 65
        positions = positions or [0.45, 0.85, 1.0]
        stops = [int(line_length * p) if p <= 1 else p for p in positions]
        cols = ["Layer (type)", "Output Shape", "Param #"]

        def row(fields):
            line = ""
            for f, stop in zip(fields, stops):
                line = (line + str(f))[: stop - 1].ljust(stop)
            print_fn(line)

        print_fn(f'Model: "{self.name}"')
        print_fn("_" * line_length)
        row(cols)
        print_fn("=" * line_length)
        layers = self.layers
        for i, layer in enumerate(layers):
            try:
                shape = layer.output_shape
            except AttributeError:
                shape = "multiple"
            params = int(sum(np.prod(w.shape.as_list()) for w in layer.weights))
            row([f"{layer.name} ({type(layer).__name__})", shape, params])
            print_fn(("=" if i == len(layers) - 1 else "_") * line_length)
        trainable = int(sum(np.prod(w.shape.as_list()) for w in self.trainable_weights))
        total = int(sum(np.prod(w.shape.as_list()) for w in self.weights))
        print_fn(f"Total params: {total:,}")
        print_fn(f"Trainable params: {trainable:,}")
        print_fn(f"Non-trainable params: {total - trainable:,}")
        print_fn("_" * line_length)


def _finish_mean(total, count, finish=None):
    """A metric's reported value from its (weighted) sum and count: the mean, or ``finish(mean)`` (RMSE)."""
    mean = float(total / count) if count else 0.0
    return finish(mean) if finish is not None else mean


def _is_stateful(metric):
    """Whether ``compile`` runs ``metric`` as an object (its own variables and result: precision, AUC, ...) rather
    than averaging a per-sample function over the samples."""
    return isinstance(metric, metrics_mod.Metric) and \
        not isinstance(metric, (metrics_mod.MeanMetricWrapper, metrics_mod.RootMeanSquaredError))


class _MetricTotals:
    """The compiled metrics over the batches run so far: sums and counts of the means, the latest result of
    each stateful metric (a float, or an array for a metric over several thresholds)."""

    def __init__(self, tensors, finish):
        self._sizes = [len(t) for t in tensors]
        self._finish = finish
        self._sums = [0.0] * len(tensors)
        self._counts = [0.0] * len(tensors)
        self._latest = [None] * len(tensors)

    def add(self, fetched):
        """Adds one batch's fetched values (in the order of the metrics' tensors, flattened)."""
        at = 0
        for i, size in enumerate(self._sizes):
            if size == 2:
                self._sums[i] += float(fetched[at])
                self._counts[i] += float(fetched[at + 1])
            else:
                value = np.asarray(fetched[at])
                self._latest[i] = float(value) if value.ndim == 0 else value
            at += size

    def values(self):
        return [self._latest[i] if size == 1 else _finish_mean(self._sums[i], self._counts[i], self._finish[i])
                for i, size in enumerate(self._sizes)]


def _x_only(value):
    return value[0] if isinstance(value, tuple) else value


def _layers_by_depth(inputs, outputs):
    """A functional model's layers in Keras's order: deepest first (a layer's depth is the longest path from it
    to an output), layers of one depth in the order a depth-first walk from the outputs first meets them."""
    order, index, finished = [], {}, set()

    def walk(tensor):
        layer, node_index, _ = K.tensor_meta(tensor, "history")
        node = layer._inbound_nodes[node_index]
        if id(node) in finished:
            return
        index.setdefault(id(layer), (len(index), layer))
        if not isinstance(layer, InputLayer) and all(t is not tensor for t in inputs):
            for t in node.input_tensors:
                walk(t)
        finished.add(id(node))
        order.append(node)

    for t in outputs:
        walk(t)
    node_depth, layer_depth = {}, {}
    for node in reversed(order):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        if isinstance(node.layer, InputLayer):
            continue
        for t in node.input_tensors:
            layer, node_index, _ = K.tensor_meta(t, "history")
            parent = id(layer._inbound_nodes[node_index])
            node_depth[parent] = max(depth + 1, node_depth.get(parent, 0))
    for t in inputs:  # inputs no output depends on
        layer = K.tensor_meta(t, "history")[0]
        if id(layer) not in layer_depth:
            layer_depth[id(layer)] = 0
            index[id(layer)] = (-1, layer)
    ranked = sorted(index.values(), key=lambda item: (-layer_depth[id(item[1])], item[0]))
    return [layer for _, layer in ranked]


def _noting_sizes(batches, sizes):
    """``batches`` passed on, each one's size appended to ``sizes``."""
    for batch in batches:
        sizes.append(len(batch[0][0]))
        yield batch


def _is_sequence(data):
    from ferroflow.keras.utils import Sequence

    return isinstance(data, Sequence)


def _is_generator(data):
    """A Keras Sequence or a Python iterator of batches (what ``fit`` hands to ``fit_generator``)."""
    return _is_sequence(data) or (hasattr(data, "__next__") and not isinstance(data, np.ndarray))


def _steps(data, steps, what):
    if steps is not None:
        return int(steps)
    if _is_sequence(data):
        return len(data)
    raise ValueError(f"`{what}=None` is only valid for a generator based on the `keras.utils.Sequence` class. "
                     f"Please specify `{what}` or use the `keras.utils.Sequence` class.")


def _batch_stream(data, shuffle):
    """Batches of a generator, or of a Sequence read pass after pass by index (each pass in an order shuffled
    by Python's ``random`` with ``shuffle``; ``on_epoch_end`` after each)."""
    import random

    if not _is_sequence(data):
        return iter(data)

    def passes():
        order = list(range(len(data)))
        while True:
            if shuffle:
                random.shuffle(order)  # the previous pass's order shuffled again, as TF's enqueuer does
            for i in order:
                yield data[i]
            data.on_epoch_end()

    return passes()
