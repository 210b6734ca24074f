"""Keras's layer wrappers: ``TimeDistributed`` (a layer applied to every time step) and ``Bidirectional`` (an RNN
run forwards and backwards, outputs merged).

As in TF 1.x's Keras: ``TimeDistributed(Dense(n))`` builds the inner layer in its own scope
(``time_distributed/kernel``) and applies it to ``[batch * time, ...]``; the time steps' mask passes through.
``Bidirectional(LSTM(n))`` makes ``forward_lstm`` and ``backward_lstm`` (``go_backwards``) from the layer's config
(``bidirectional/forward_lstm/kernel``), gives both the input mask, reverses the backward sequence back and
merges with ``merge_mode`` (``'concat'``, ``'sum'``, ``'mul'``, ``'ave'``, or None for a list); with
``return_sequences`` masked steps output zeros (Keras forces ``zero_output_for_mask`` there).
"""

from __future__ import annotations

from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.ops import array_ops

__all__ = ["Bidirectional", "TimeDistributed", "Wrapper"]


class Wrapper(Layer):
    """A layer around another layer (``self.layer``), whose weights are its own."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `{type(self).__name__}` layer with a `Layer` instance. You passed: "
                             f"{layer}")
        super().__init__(**kwargs)
        self.layer = layer

    @property
    def trainable_weights(self):
        return self.layer.trainable_weights if self._trainable else []

    @property
    def non_trainable_weights(self):
        return self.layer.non_trainable_weights if self._trainable else self.layer.weights

    @property
    def updates(self):
        return self.layer.updates

    @property
    def losses(self):
        return self.layer.losses + list(self._losses)

    def _checkpoint_node(self):
        return {"layer": self.layer._checkpoint_node()}

    def get_config(self):
        from ferroflow.keras import saving

        config = {"name": self._name, "trainable": self._trainable,
                  "dtype": self._dtype.name if self._dtype is not None else K.floatx(),
                  "layer": saving.serialize(self.layer)}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ferroflow.keras import saving

        config = dict(config)
        config["layer"] = saving.deserialize_layer(config["layer"], custom_objects)
        return cls(**saving.accepted_config(cls, config))


class TimeDistributed(Wrapper):
    """Applies ``layer`` to every time step of ``[batch, time, ...]`` inputs (the same weights each step)."""

    def __init__(self, layer, **kwargs):
        super().__init__(layer, **kwargs)
        self.supports_masking = True

    def build(self, input_shape):
        shape = TensorShape(input_shape)
        if shape.rank is None or shape.rank < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 dimensions, "
                             f"received: {shape}")
        if not self.layer.built:
            self.layer._dtype = self.layer._dtype or self._dtype
            self.layer.build(TensorShape([None]).concatenate(shape[2:]))  # weights in this layer's scope
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None, mask=None):
        kwargs = {}
        if self.layer._expects_training_arg and training is not None:
            kwargs["training"] = training
        dims = inputs.shape.as_list()
        shape = array_ops.shape(inputs)
        flat = array_ops.reshape(inputs, array_ops.concat([[-1], shape[2:]], 0))
        flat.set_shape([None] + dims[2:])
        out = self.layer(flat, **kwargs)
        out_dims = out.shape.as_list()
        result = array_ops.reshape(out, array_ops.concat([shape[:2], array_ops.shape(out)[1:]], 0))
        result.set_shape(dims[:2] + out_dims[1:])
        return result

    def compute_mask(self, inputs, mask=None):
        return mask


class Bidirectional(Wrapper):
    """Runs an RNN layer forwards and backwards over the sequence and merges the two outputs."""

    _MERGE_MODES = ("sum", "mul", "ave", "concat", None)

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        from ferroflow.keras.layers.recurrent import RNN

        if not isinstance(layer, RNN):
            raise ValueError(f"Please initialize `Bidirectional` layer with a `tf.keras.layers.Layer` instance. "
                             f"Received: {layer}")
        if merge_mode not in self._MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}')
        super().__init__(layer, **kwargs)
        self.forward_layer = self._copy(layer, "forward_", layer.go_backwards)
        if backward_layer is None:
            self.backward_layer = self._copy(layer, "backward_", not layer.go_backwards)
        else:
            self.backward_layer = backward_layer
            backward_layer._name = "backward_" + backward_layer.name
        for rnn in (self.forward_layer, self.backward_layer):
            rnn.zero_output_for_mask = rnn.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.stateful = layer.stateful
        self.supports_masking = True
        self._initial_weights = weights

    @staticmethod
    def _copy(layer, prefix, go_backwards):
        config = layer.get_config()
        config["go_backwards"] = go_backwards
        config["name"] = prefix + layer.name
        copy = type(layer).from_config(config)
        return copy

    @property
    def trainable_weights(self):
        if not self._trainable:
            return []
        return self.forward_layer.trainable_weights + self.backward_layer.trainable_weights

    @property
    def non_trainable_weights(self):
        if not self._trainable:
            return self.forward_layer.weights + self.backward_layer.weights
        return self.forward_layer.non_trainable_weights + self.backward_layer.non_trainable_weights

    @property
    def losses(self):
        return self.forward_layer.losses + self.backward_layer.losses + list(self._losses)

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, training=None, mask=None, initial_state=None):
        kwargs = {"mask": mask}
        if training is not None:
            kwargs["training"] = training
        if initial_state is not None:
            half = len(initial_state) // 2
            forward = self.forward_layer(inputs, initial_state=initial_state[:half], **kwargs)
            backward = self.backward_layer(inputs, initial_state=initial_state[half:], **kwargs)
        else:
            forward = self.forward_layer(inputs, **kwargs)
            backward = self.backward_layer(inputs, **kwargs)
        if self.return_state:
            forward, states = forward[0], list(forward[1:]) + list(backward[1:])
            backward = backward[0]
        if self.return_sequences:
            backward = array_ops.reverse(backward, [1])
        if self.merge_mode == "concat":
            output = K.concatenate([forward, backward])
        elif self.merge_mode == "sum":
            output = forward + backward
        elif self.merge_mode == "ave":
            output = (forward + backward) / 2
        elif self.merge_mode == "mul":
            output = forward * backward
        else:
            output = [forward, backward]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.merge_mode is None:
            output_mask = [output_mask, output_mask]
        if self.return_state:
            n = 2 * len(self.forward_layer.cell.state_size) if isinstance(self.forward_layer.cell.state_size,
                                                                          (list, tuple)) else 2
            return (output_mask if isinstance(output_mask, list) else [output_mask]) + [None] * n
        return output_mask

    def _checkpoint_node(self):
        return {"forward_layer": self.forward_layer._checkpoint_node(),
                "backward_layer": self.backward_layer._checkpoint_node()}

    def reset_states(self):
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    def get_config(self):
        config = super().get_config()
        config["merge_mode"] = self.merge_mode
        return config
