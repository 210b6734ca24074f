"""The Keras ``Layer`` on TF1 graphs.

It is ``tf.layers.Layer`` (``ferroflow/layers/base.py``) with Keras's naming and bookkeeping, so the Keras
layers reuse the ``tf.layers`` builds and calls:

- names: a layer is named after its class, uniquified per graph (``dense``, ``dense_1``, ...); its call runs
  in a name scope of that name (uniquified by the graph: a second call of the same layer is ``dense_1/...``)
  and its weights are plain variables created there (``dense/kernel:0``), as Keras did on TF 1.x;
- initializers, regularizers, constraints and activations may be given by name (``'glorot_uniform'``,
  ``'l2'``, ``'relu'``); regularization losses are kept in ``layer.losses`` (Keras adds them to the model's
  loss; they do not join ``GraphKeys.REGULARIZATION_LOSSES``);
- a layer whose ``call`` takes ``training`` gets the Keras learning phase when the caller gives none;
- each call records a node (input tensors, output tensors) so a functional ``Model`` can be traced from its
  outputs back to its inputs and re-applied to new tensors; ``layer.input``/``output`` are the first call's;
- masks (``Masking``, ``Embedding(mask_zero=True)``) travel with the tensors (``K.tensor_meta(t, 'mask')``,
  what Keras keeps in ``t._keras_mask``): a layer whose ``call`` takes ``mask`` is given its inputs' masks, and
  a layer that ``supports_masking`` (or overrides ``compute_mask``) gives its outputs the masks
  ``compute_mask`` returns; other layers drop them, as Keras does.
"""

from __future__ import annotations

import inspect

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.keras import backend as K
from ferroflow.keras import constraints as constraints_mod
from ferroflow.keras import initializers as initializers_mod
from ferroflow.keras import regularizers as regularizers_mod
from ferroflow.layers import base as tf_base
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops import variables as variables_mod

__all__ = ["InputSpec", "Layer", "Node"]

InputSpec = tf_base.InputSpec

_KERAS_KWARGS = ("input_shape", "batch_input_shape", "batch_size", "input_dim", "weights")


class Node:
    """One call of a layer: the input and output tensors (structures) and the call's keyword arguments."""

    def __init__(self, layer, inputs, outputs, kwargs):
        self.layer = layer
        self.inputs = inputs
        self.outputs = outputs
        self.kwargs = kwargs

    @property
    def input_tensors(self):
        return nest.flatten(self.inputs)

    @property
    def output_tensors(self):
        return nest.flatten(self.outputs)


def input_masks(inputs):
    """The Keras masks of ``inputs`` (a tensor or a list): None, a mask, or a list with None where there is none."""
    flat = nest.flatten(inputs)
    masks = [K.tensor_meta(t, "mask") for t in flat]
    if all(m is None for m in masks):
        return None
    if isinstance(inputs, (list, tuple)):
        return masks
    return masks[0]


def _shape_tuple(shape):
    if shape is None:
        return None
    return tuple(None if d is None else int(d) for d in shape)


_NOT_CONSTRUCTOR_CONFIG = {"self", "name", "trainable", "dtype", "input_shape", "batch_input_shape", "batch_size",
                           "input_dim", "weights"}


class Layer(tf_base.Layer):
    """A Keras layer: ``build(input_shape)`` makes weights with ``add_weight``; ``call(inputs)`` computes."""

    def __new__(cls, *args, **kwargs):
        # The constructor's arguments are the layer's config (get_config), as Keras layers list them.
        obj = super().__new__(cls)
        obj._init_call = (args, dict(kwargs))
        return obj

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        name = self._keras_setup(name, kwargs)
        tf_base.Layer.__init__(self, trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._keras_finish()

    # -- set-up shared by every Keras layer class --------------------------------------------
    def _keras_setup(self, name, kwargs):
        """Pops Keras's own keyword arguments from ``kwargs``; returns the layer's (unique) name."""
        batch_shape = kwargs.pop("batch_input_shape", None)
        input_shape = kwargs.pop("input_shape", None)
        input_dim = kwargs.pop("input_dim", None)
        batch_size = kwargs.pop("batch_size", None)
        if input_shape is None and input_dim is not None:
            input_shape = (input_dim,)
        if batch_shape is None and input_shape is not None:
            batch_shape = (batch_size,) + tuple(input_shape)
        self._batch_input_shape = _shape_tuple(batch_shape)
        self._initial_weights = kwargs.pop("weights", None)
        self._inbound_nodes = []
        if name is None:
            name = K.unique_object_name(tf_base._to_snake_case(type(self).__name__))
        elif not isinstance(name, str):
            raise TypeError(f"A layer's name must be a string, got {name!r}")
        return name

    def _keras_finish(self):
        try:
            params = inspect.signature(self.call).parameters
        except (TypeError, ValueError):
            params = {}
        self._expects_training_arg = "training" in params
        self._expects_mask_arg = "mask" in params
        if not hasattr(self, "supports_masking"):
            self.supports_masking = False

    # -- weights ----------------------------------------------------------------------------------
    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                   constraint=None, partitioner=None, use_resource=None, synchronization=None, aggregation=None,
                   **kwargs):
        """A variable ``name`` in the current name scope (the layer's, while it builds)."""
        kwargs.pop("experimental_autocast", None)
        kwargs.pop("getter", None)
        if kwargs:
            raise TypeError(f"Unknown keyword argument(s) {sorted(kwargs)} passed to add_weight")
        if partitioner is not None:
            raise NotImplementedError("Keras layers do not take a partitioner in ferroflow")
        if shape is None:
            shape = ()
        dtype = dtypes.as_dtype(dtype or self._dtype or K.floatx())
        if trainable is None:
            trainable = True
        initializer = initializers_mod.get(initializer)
        if initializer is None:
            if dtype.is_floating:
                initializer = initializers_mod.GlorotUniform()
            elif dtype.is_integer or dtype.is_bool:
                initializer = initializers_mod.Zeros()
            else:
                raise ValueError(f"An initializer for variable {name} of type {dtype.name} is required for layer "
                                 f"{self.name}")
        regularizer = regularizers_mod.get(regularizer)
        constraint = constraints_mod.get(constraint)
        shape = TensorShape(shape).as_list()

        def initial_value():
            return initializer(shape, dtype=dtype)

        with ops.init_scope():
            variable = variables_mod.Variable(initial_value, name=name, dtype=dtype,
                                              trainable=bool(trainable and self._trainable), constraint=constraint)
        K._track_variable(variable)
        if regularizer is not None:
            with ops.name_scope(name + "/Regularizer"):
                loss = regularizer(variable)
            if loss is not None:
                self._losses.append(loss)
        target = self._trainable_weights if trainable else self._non_trainable_weights
        target.append(variable)
        return variable

    add_variable = add_weight

    def add_loss(self, losses, inputs=None):
        """Adds loss tensors (or zero-argument callables making them) to ``layer.losses``."""
        for loss in nest.flatten(losses):
            if callable(loss):
                loss = loss()
            if loss is None:
                continue
            if not isinstance(loss, ops.Tensor):
                loss = ops.convert_to_tensor(loss, dtype=dtypes.float32)
            self._losses.append(loss)

    def get_weights(self):
        """The weights' values (numpy arrays, in ``weights`` order)."""
        return K.batch_get_value(self.weights)

    def set_weights(self, weights):
        """Assigns numpy values to the weights, in ``weights`` order (shapes must match)."""
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f"You called `set_weights(weights)` on layer \"{self.name}\" with a weight list of "
                             f"length {len(weights)}, but the layer was expecting {len(params)} weights.")
        pairs = []
        for p, w in zip(params, weights):
            w = np.asarray(w)
            if tuple(p.shape.as_list()) != w.shape:
                raise ValueError(f"Layer weight shape {tuple(p.shape.as_list())} not compatible with provided "
                                 f"weight shape {w.shape}")
            pairs.append((p, w))
        K.batch_set_value(pairs)

    # -- calling --------------------------------------------------------------------------------
    def _maybe_build(self, inputs):
        if self.built:
            return
        flat = nest.flatten(inputs)
        if self._dtype is None and flat and hasattr(flat[0], "dtype"):
            first = flat[0].dtype.base_dtype
            self._dtype = first if first.is_floating else dtypes.as_dtype(K.floatx())
        shapes = nest.map_structure(lambda x: x.shape, inputs)
        if isinstance(shapes, (list, tuple)) and len(shapes) == 1:
            shapes = shapes[0]
        self.build(shapes)
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def __call__(self, inputs, *args, **kwargs):
        """Builds the layer on its first call, then runs ``call`` in the layer's name scope; records the node."""
        node_kwargs = dict(kwargs)
        if self._expects_training_arg and kwargs.get("training") is None:
            phase = K.learning_phase()
            kwargs["training"] = bool(phase) if isinstance(phase, int) else phase
        elif not self._expects_training_arg:
            kwargs.pop("training", None)

        def convert(x):
            if isinstance(x, ops.Tensor) or hasattr(x, "_ref"):
                return x
            return ops.convert_to_tensor(x, dtype=self._dtype if self._dtype is not None else None)

        inputs = nest.map_structure(convert, inputs)
        if kwargs.get("mask") is not None:
            previous_mask = kwargs["mask"]
        else:
            previous_mask = input_masks(inputs)
        if self._expects_mask_arg:
            kwargs["mask"] = previous_mask
        else:
            kwargs.pop("mask", None)
        graph = nest.flatten(inputs)[0].graph if nest.flatten(inputs) else ops.get_default_graph()
        with graph.as_default(), ops.name_scope(self._name):
            if not self.built:
                self._maybe_build(inputs)
            tf_base._check_input_spec(self.input_spec, inputs, self._name)
            outputs = self.call(inputs, *args, **kwargs)
            if self._activity_regularizer is not None:
                with ops.name_scope("ActivityRegularizer"):
                    for out in nest.flatten(outputs):
                        loss = self._activity_regularizer(out)
                        batch = math_ops.cast(array_ops.shape(out)[0], loss.dtype)
                        self._losses.append(math_ops.truediv(loss, batch))
            self._set_output_masks(inputs, outputs, previous_mask)
        tf_base._add_to_collection_once(ops.GraphKeys.UPDATE_OPS, self.updates)
        self._add_node(inputs, outputs, node_kwargs)
        return outputs

    # -- masking --------------------------------------------------------------------------------
    def compute_mask(self, inputs, mask=None):
        """The outputs' mask: the input mask for a layer that ``supports_masking``, else None (a mask given to
        a layer that does not support masking is a TypeError)."""
        if not self.supports_masking:
            if any(m is not None for m in nest.flatten(mask)):
                raise TypeError(f"Layer {self.name} does not support masking, but was passed an input_mask: "
                                f"{mask}")
            return None
        return mask

    def _set_output_masks(self, inputs, outputs, previous_mask):
        flat = nest.flatten(outputs)
        if all(K.tensor_meta(t, "mask") is not None for t in flat):
            return  # the call made them (a model, or a layer calling masking layers)
        if not (self.supports_masking or type(self).compute_mask is not Layer.compute_mask):
            return
        masks = self.compute_mask(inputs, previous_mask)
        if masks is None:
            return
        flat_masks = nest.flatten(masks) if isinstance(masks, (list, tuple)) else [masks] * len(flat)
        for t, m in zip(flat, flat_masks):
            if isinstance(t, ops.Tensor) and m is not None:
                K.set_tensor_meta(t, "mask", m)

    def _add_node(self, inputs, outputs, kwargs):
        node_index = len(self._inbound_nodes)
        self._inbound_nodes.append(Node(self, inputs, outputs, kwargs))
        for i, t in enumerate(nest.flatten(outputs)):
            if isinstance(t, ops.Tensor):
                K.set_tensor_meta(t, "history", (self, node_index, i))

    # -- what the first call saw ---------------------------------------------------------------
    def _first_node(self, what):
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no {what} to return.")
        return self._inbound_nodes[0]

    @property
    def input(self):
        node = self._first_node("input")
        return node.inputs[0] if isinstance(node.inputs, list) and len(node.inputs) == 1 else node.inputs

    @property
    def output(self):
        node = self._first_node("output")
        return node.outputs

    @property
    def input_shape(self):
        if not self._inbound_nodes and self._batch_input_shape is not None:
            return self._batch_input_shape
        return nest.map_structure(lambda t: _shape_tuple(t.shape.as_list()), self.input)

    @property
    def output_shape(self):
        return nest.map_structure(lambda t: _shape_tuple(t.shape.as_list()), self.output)

    @property
    def updates(self):
        return list(self._updates) if self._trainable else []

    def _checkpoint_node(self):
        """The layer's weights as TensorFlow's object-based checkpoints name them: ``{"kernel": v, ...}``."""
        return {w.op.name.rsplit("/", 1)[-1]: w for w in self.weights}

    def _constructor_args(self):
        """The arguments the layer was made with, by name (``**kwargs`` spread out)."""
        explicit = getattr(self, "_config_args", None)
        if explicit is not None:
            return dict(explicit)
        args, kwargs = getattr(self, "_init_call", ((), {}))
        sig = inspect.signature(type(self).__init__)
        try:
            bound = sig.bind(self, *args, **kwargs)
        except TypeError:
            return dict(kwargs)
        out = {}
        for key, value in bound.arguments.items():
            kind = sig.parameters[key].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                out.update(value)
            elif kind is not inspect.Parameter.VAR_POSITIONAL:
                out[key] = value
        return out

    def get_config(self):
        """The layer's name, trainable, dtype (and input shape) and the arguments it was constructed with
        (serialized: activations by name, initializers and regularizers as nested configs)."""
        from ferroflow.keras import saving

        config = {"name": self._name, "trainable": self._trainable,
                  "dtype": self._dtype.name if self._dtype is not None else K.floatx()}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        own = set(inspect.signature(type(self).__init__).parameters) - {"kwargs"}
        for key, value in self._constructor_args().items():
            if key not in _NOT_CONSTRUCTOR_CONFIG or (key == "input_dim" and key in own):
                config[key] = saving.serialize(value)
        return config

    @classmethod
    def from_config(cls, config):
        """A new layer from ``get_config()``'s output (keys this class does not take are dropped, logged)."""
        from ferroflow.keras import saving

        return cls(**saving.accepted_config(cls, config))

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object named {self._name!r}>"
