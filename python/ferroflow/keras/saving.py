"""Keras's model files: configs (``get_config``/``to_json``/``model_from_json``) and HDF5 (``model.save('m.h5')``,
``load_model``, ``save_weights('w.h5')``/``load_weights``), in the layout TensorFlow's Keras writes, so files go
both ways between ferroflow and TensorFlow.

HDF5 needs h5py (an optional dependency: ``pip install ferroflow[h5]``); without it these raise an ImportError
naming h5py. The layout (Keras 2 / tf_keras): the root's attributes ``keras_version``, ``backend``,
``model_config`` (the model's config as JSON) and ``training_config`` (loss, metrics, optimizer config); the
group ``model_weights`` (the root itself in a weights-only file) lists ``layer_names``; each layer's group lists
its ``weight_names`` and holds one dataset per weight under that name. Weights load by layer order among the
layers that have weights, or with ``by_name`` by layer name; within a layer, in the layer's weight order.
The optimizer's state goes in ``optimizer_weights`` in Keras's order (``iter``, then each slot for every
trainable weight), so training continues where it stopped, here or in TensorFlow.

Configs are ``{"class_name": ..., "config": ...}``; a layer's config is its name, trainable, dtype and the
arguments its constructor was given (``Layer.get_config``), with activations by name and initializers,
regularizers and constraints as nested configs. Keys a ferroflow layer does not take are dropped with a warning
when loading (TensorFlow 2.x adds a few, such as ``ragged`` on inputs).
"""

from __future__ import annotations

import inspect
import json
import logging

import numpy as np

from ferroflow.framework import dtypes
from ferroflow.keras import backend as K

__all__ = ["deserialize_layer", "load_model", "load_weights_h5", "model_from_config", "model_from_json",
           "save_model", "save_weights_h5", "serialize"]

KERAS_VERSION = "2.2.4-tf"
_LOG = logging.getLogger("ferroflow.keras")


def _h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError("Saving or loading Keras models in HDF5 format (.h5) requires h5py, which is not installed "
                          "(`pip install h5py`, or `pip install ferroflow[h5]`); without it, save weights as a "
                          "TensorFlow checkpoint (a path without .h5).") from None
    return h5py


# -- configs ------------------------------------------------------------------------------------------
def serialize(value):
    """``value`` as JSON-ready config data: layers and Keras objects as ``{"class_name", "config"}``,
    activations and loss functions by name."""
    from ferroflow.keras import activations
    from ferroflow.keras.engine.base_layer import Layer

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dtypes.DType):
        return value.name
    if isinstance(value, (list, tuple)):
        return [serialize(v) for v in value]
    if isinstance(value, dict):
        return {str(k): serialize(v) for k, v in value.items()}
    if isinstance(value, Layer) or hasattr(value, "get_config"):
        return {"class_name": type(value).__name__, "config": serialize(value.get_config())}
    if callable(value) and getattr(value, "__name__", None):
        try:
            return activations.serialize(value)
        except ValueError:
            return value.__name__
    raise TypeError(f"Cannot serialize {value!r} into a Keras config")


def _layer_classes():
    from ferroflow.keras import layers
    from ferroflow.keras.engine.sequential import Sequential
    from ferroflow.keras.engine.training import Model

    table = {name: getattr(layers, name) for name in layers.__all__ if isinstance(getattr(layers, name), type)}
    table.update({"Sequential": Sequential, "Model": Model, "Functional": Model})
    return table


def _known(custom_objects):
    """``custom_objects`` over ``keras.utils.get_custom_objects()``."""
    from ferroflow.keras import utils

    return {**utils.get_custom_objects(), **(custom_objects or {})}


def deserialize_layer(config, custom_objects=None):
    """A layer (or model) from ``{"class_name": ..., "config": ...}``."""
    custom_objects = _known(custom_objects)
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _layer_classes().get(name)
    if cls is None:
        raise ValueError(f"Unknown layer: {name}. Please ensure this object is passed to the `custom_objects` "
                         "argument.")
    if name in ("Sequential", "Model", "Functional"):
        return model_from_config(config, custom_objects)
    if "custom_objects" in inspect.signature(cls.from_config).parameters:  # a Lambda looks its functions up
        return cls.from_config(config["config"], custom_objects=custom_objects)
    return cls.from_config(config["config"]) if not custom_objects else \
        _with_custom_objects(cls, config["config"], custom_objects)


def _with_custom_objects(cls, config, custom_objects):
    from ferroflow.keras import activations

    config = dict(config)
    for key, value in list(config.items()):
        if isinstance(value, str) and value in custom_objects:
            config[key] = custom_objects[value]
        elif key == "activation" and isinstance(value, str) and value not in custom_objects:
            config[key] = activations.deserialize(value)
    return cls.from_config(config)


_COMMON_KEYS = {"name", "trainable", "dtype", "batch_input_shape", "input_shape", "batch_size", "input_dim",
                "weights", "activity_regularizer"}


def _constructor_params(cls):
    """The keyword arguments ``cls(...)`` takes: its own, and those its ``**kwargs`` pass to base classes."""
    explicit = getattr(cls, "_config_params", None)
    if explicit is not None:
        return set(explicit) | _COMMON_KEYS
    params = set()
    for klass in cls.__mro__:
        if "__init__" not in klass.__dict__ or klass is object:
            continue
        sig = inspect.signature(klass.__init__)
        params |= {p.name for p in sig.parameters.values()
                   if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
            break
    return (params - {"self"}) | _COMMON_KEYS


def accepted_config(cls, config):
    """``config`` without the keys ``cls``'s constructor does not take (each dropped key is logged)."""
    params = _constructor_params(cls)
    config = dict(config)
    for key in sorted(set(config) - params):
        _LOG.warning("%s: ignoring the config key %r=%r, which ferroflow's layer does not take", cls.__name__, key,
                     config.pop(key))
    return config


def model_from_config(config, custom_objects=None):
    """A ``Sequential`` or functional ``Model`` from its config (``{"class_name", "config"}``)."""
    from ferroflow.keras.engine.input_layer import InputLayer
    from ferroflow.keras.engine.sequential import Sequential
    from ferroflow.keras.engine.training import Model

    custom_objects = _known(custom_objects)
    class_name, body = config["class_name"], config["config"]
    if class_name == "Sequential":
        layer_configs = body["layers"] if isinstance(body, dict) else body
        model = Sequential(name=body.get("name") if isinstance(body, dict) else None)
        for layer_config in layer_configs:
            if layer_config["class_name"] == "InputLayer":
                model.add(InputLayer(**_input_config(layer_config["config"])))
            else:
                model.add(deserialize_layer(layer_config, custom_objects))
        return model
    if class_name not in ("Model", "Functional"):
        cls = (custom_objects or {}).get(class_name)
        if cls is None:
            raise ValueError(f"Unknown model class {class_name!r}: pass it in custom_objects")
        return cls.from_config(body)
    created, outputs_of = {}, {}
    for layer_config in body["layers"]:
        if layer_config["class_name"] == "InputLayer":
            layer = InputLayer(**_input_config(layer_config["config"]))
            outputs_of[(layer.name, 0)] = [layer.output]
        else:
            layer = deserialize_layer(layer_config, custom_objects)
        created[layer_config["config"].get("name", layer.name)] = (layer, layer_config.get("inbound_nodes", []))
    pending = [(name, i, node) for name, (_, nodes) in created.items() for i, node in enumerate(nodes)]
    while pending:
        progressed, left = False, []
        for name, index, node in pending:
            refs = _node_refs(node)
            if not all((ref[0], ref[1]) in outputs_of for ref in refs):
                left.append((name, index, node))
                continue
            inputs = [outputs_of[(ref[0], ref[1])][ref[2]] for ref in refs]
            kwargs = refs[0][3] if refs and len(refs[0]) > 3 and refs[0][3] else {}
            out = created[name][0](inputs[0] if len(inputs) == 1 else inputs, **kwargs)
            outputs_of[(name, index)] = out if isinstance(out, list) else [out]
            progressed = True
        if not progressed:
            raise ValueError(f"Cannot rebuild the model {body.get('name')!r}: its layers' inputs never become "
                             f"available ({sorted({p[0] for p in left})})")
        pending = left

    def tensors(refs):
        return [outputs_of[(r[0], r[1])][r[2]] for r in refs]

    inputs, outputs = tensors(body["input_layers"]), tensors(body["output_layers"])
    return Model(inputs=inputs if len(inputs) > 1 else inputs[0], outputs=outputs if len(outputs) > 1 else outputs[0],
                 name=body.get("name"))


def _node_refs(node):
    """The ``[layer_name, node_index, tensor_index, kwargs]`` entries of one inbound node (either format)."""
    if isinstance(node, dict):  # Keras 3 style {"args": ..., "kwargs": ...} is not read
        raise ValueError("This model config uses a newer Keras format that ferroflow does not read")
    return [list(ref) for ref in node]


def _input_config(config):
    config = dict(config)
    for key in ("ragged", "optional"):
        if config.pop(key, False):
            raise NotImplementedError(f"InputLayer({key}=True) is not supported by ferroflow's Keras")
    if config.get("batch_input_shape") is None and "batch_shape" in config:
        config["batch_input_shape"] = config.pop("batch_shape")
    return config


def model_config(model):
    """``{"class_name", "config"}`` of a Sequential or functional model (TF 2.x's layout)."""
    return {"class_name": "Sequential" if _is_sequential(model) else "Functional", "config": model.get_config()}


def _is_sequential(model):
    from ferroflow.keras.engine.sequential import Sequential

    return isinstance(model, Sequential)


def model_from_json(json_string, custom_objects=None):
    """A model (new weights) from ``model.to_json()``."""
    return model_from_config(json.loads(json_string), custom_objects)


# -- HDF5 -----------------------------------------------------------------------------------------------
def _write_layers(group, layers):
    group.attrs["layer_names"] = [layer.name.encode("utf8") for layer in layers]
    group.attrs["backend"] = b"tensorflow"
    group.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
    for layer in layers:
        g = group.create_group(layer.name)
        weights = layer.weights
        values = K.batch_get_value(weights)
        names = [w.name.encode("utf8") for w in weights]
        g.attrs["weight_names"] = names
        for name, value in zip(names, values):
            g.create_dataset(name.decode("utf8"), data=value, shape=value.shape, dtype=value.dtype)
    top = group.create_group("top_level_model_weights")
    top.attrs["weight_names"] = np.array([], dtype=np.float64)


def _text(value):
    return value.decode("utf8") if isinstance(value, bytes) else str(value)


def _read_layers(group):
    """``[(layer name, [weight values])]`` in the file's layer order."""
    out = []
    for name in group.attrs["layer_names"]:
        name = _text(name)
        g = group[name]
        out.append((name, [np.asarray(g[_text(w)]) for w in g.attrs["weight_names"]]))
    return out


def _assign(pairs, where):
    for layer, values in pairs:
        weights = layer.weights
        if len(weights) != len(values):
            raise ValueError(f"Layer {layer.name} ({type(layer).__name__}) expects {len(weights)} weight(s), but "
                             f"the saved weights {where} have {len(values)} element(s).")
        for w, v in zip(weights, values):
            if tuple(w.shape.as_list()) != v.shape:
                raise ValueError(f"Shape mismatch in layer {layer.name} for weight {w.name}: the weight has shape "
                                 f"{tuple(w.shape.as_list())}, the saved value {v.shape}")
    K.batch_set_value([(w, v) for layer, values in pairs for w, v in zip(layer.weights, values)])
    for layer, _ in pairs:
        for w in layer.weights:
            w._keras_initialized = True


def _load_into(model, group, by_name, skip_mismatch=False):
    saved = [(name, values) for name, values in _read_layers(group) if values]
    if by_name:
        by = dict(saved)
        pairs = []
        for layer in model.layers:
            if layer.name in by and layer.weights:
                values = by[layer.name]
                if skip_mismatch and (len(values) != len(layer.weights) or any(
                        tuple(w.shape.as_list()) != v.shape for w, v in zip(layer.weights, values))):
                    _LOG.warning("Skipping loading of weights for layer %s due to mismatch", layer.name)
                    continue
                pairs.append((layer, values))
        _assign(pairs, "by name")
        return
    layers = [layer for layer in model.layers if layer.weights]
    if len(layers) != len(saved):
        raise ValueError(f"You are trying to load a weight file containing {len(saved)} layers into a model with "
                         f"{len(layers)} layers.")
    _assign([(layer, values) for layer, (_, values) in zip(layers, saved)], "by layer order")


def save_weights_h5(model, filepath):
    """``model.save_weights('w.h5')``: each layer's weights, in the model's layer order."""
    h5py = _h5py()
    with h5py.File(str(filepath), "w") as f:
        _write_layers(f, model.layers)


def load_weights_h5(model, filepath, by_name=False, skip_mismatch=False):
    """``model.load_weights('w.h5')``: from a weights file or a whole-model file."""
    h5py = _h5py()
    with h5py.File(str(filepath), "r") as f:
        group = f["model_weights"] if "layer_names" not in f.attrs and "model_weights" in f else f
        _load_into(model, group, by_name, skip_mismatch)


def _training_config(model):
    from ferroflow.keras import optimizers

    args = model._compile_args
    config = {"loss": serialize(args["loss"]), "metrics": serialize(args["metrics"]),
              "weighted_metrics": serialize(args["weighted_metrics"] or None),
              "sample_weight_mode": args["sample_weight_mode"], "loss_weights": serialize(args["loss_weights"])}
    if isinstance(model.optimizer, optimizers._KerasOptimizer):
        config["optimizer_config"] = optimizers.serialize(model.optimizer)
    else:
        _LOG.warning("The model's optimizer (%s) is a tf.train optimizer: its configuration is not saved; compile "
                     "the loaded model again.", type(model.optimizer).__name__)
    return config


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """``model.save('m.h5')``: the architecture, the weights, the compile arguments and (once it has trained) the
    optimizer's state in Keras's order (``optimizer_weights``)."""
    from ferroflow.keras import optimizers

    h5py = _h5py()
    with h5py.File(str(filepath), "w") as f:
        f.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
        f.attrs["backend"] = b"tensorflow"
        f.attrs["model_config"] = json.dumps(model_config(model)).encode("utf8")
        if include_optimizer and model._compile_args is not None:
            config = _training_config(model)
            if "optimizer_config" in config:
                f.attrs["training_config"] = json.dumps(config).encode("utf8")
        _write_layers(f.create_group("model_weights"), model.layers)
        if include_optimizer and model._train_op is not None and \
                isinstance(model.optimizer, optimizers._KerasOptimizer):
            pairs = model.optimizer.get_keras_weights(model.trainable_weights)
            group = f.create_group("optimizer_weights")
            group.attrs["weight_names"] = [name.encode("utf8") for name, _ in pairs]
            for name, value in pairs:
                value = np.asarray(value)
                group.create_dataset(name, data=value, shape=value.shape, dtype=value.dtype)


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002 - Keras's argument name
    """A model saved by ``model.save('m.h5')`` (by ferroflow or TensorFlow), compiled as it was saved."""
    from ferroflow.keras import optimizers

    custom_objects = _known(custom_objects)
    h5py = _h5py()
    with h5py.File(str(filepath), "r") as f:
        if "model_config" not in f.attrs:
            raise ValueError(f"No model found in config file {filepath} (a weights-only file? use load_weights)")
        model = model_from_config(json.loads(_text(f.attrs["model_config"])), custom_objects)
        _load_into(model, f["model_weights"], by_name=False)
        training = f.attrs.get("training_config")
        if compile and training is not None:
            config = json.loads(_text(training))
            optimizer = optimizers.deserialize(config["optimizer_config"], custom_objects)
            model.compile(optimizer=optimizer, loss=_objects(config["loss"], custom_objects),
                          metrics=_objects(config.get("metrics"), custom_objects, metric=True),
                          weighted_metrics=_objects(config.get("weighted_metrics"), custom_objects, metric=True),
                          loss_weights=config.get("loss_weights"),
                          sample_weight_mode=config.get("sample_weight_mode"))
            if "optimizer_weights" in f:
                group = f["optimizer_weights"]
                values = [np.asarray(group[_text(n)]) for n in group.attrs["weight_names"]]
                model._make_train_op()  # the slots
                try:
                    model.optimizer.set_keras_weights(model.trainable_weights, values)
                except ValueError as e:
                    _LOG.warning("Error in loading the saved optimizer state (%s): the optimizer starts afresh.", e)
    return model


def _objects(value, custom_objects, metric=False):
    """Loss and metric names back as given (custom ones from ``custom_objects``); loss objects, and with
    ``metric`` metric objects (``AUC``, ``Precision``, ...), from their configs."""
    if isinstance(value, str):
        return (custom_objects or {}).get(value, value)
    if isinstance(value, list):
        return [_objects(v, custom_objects, metric) for v in value]
    if isinstance(value, dict) and "class_name" in value and "config" in value:
        from ferroflow.keras import losses, metrics

        if metric and metrics.metric_class(value["class_name"]) is not None:
            return metrics.deserialize(value, custom_objects)
        return losses.deserialize(value, custom_objects)
    if isinstance(value, dict):
        return {k: _objects(v, custom_objects, metric) for k, v in value.items()}
    return value
