"""``tf.keras.experimental``: TF 1.x's ``export_saved_model``/``load_from_saved_model``.

``export_saved_model(model, path)`` writes a SavedModel with a ``serve`` meta graph whose ``serving_default``
signature maps the model's input layer names to its inputs and its output layer names to its outputs (so
``tf.saved_model.loader.load`` and serving read it), keeps the model's config in
``assets.extra/tf_keras/model.json`` and its weights as the TF-format checkpoint ``save_weights`` writes, under
``variables/variables`` (the meta graph's saver restores the same keys). ``load_from_saved_model`` rebuilds the
model from that config and loads those weights; as in TF 1.x it is not compiled (the optimizer is not saved).
"""

from __future__ import annotations

import os

from ferroflow.keras import backend as K
from ferroflow.keras import saving

__all__ = ["export_saved_model", "load_from_saved_model"]

_MODEL_JSON = os.path.join("assets.extra", "tf_keras", "model.json")


def export_saved_model(model, saved_model_path, custom_objects=None, as_text=False, input_signature=None,
                       serving_only=False):
    """Writes ``model`` as a SavedModel at ``saved_model_path`` (a new or empty directory)."""
    from ferroflow.saved_model import builder as builder_mod
    from ferroflow.saved_model import signature_constants, signature_def_utils, tag_constants
    from ferroflow.training.saver import Saver

    if input_signature is not None:
        raise NotImplementedError("export_saved_model(input_signature=...) is not supported by ferroflow")
    if not model.outputs:
        raise ValueError("Build the model (call it or fit it) before exporting it")
    session = K.get_session()
    signature = signature_def_utils.predict_signature_def(
        inputs=dict(zip(model.input_names, model.inputs)), outputs=dict(zip(model.output_names, model.outputs)))
    builder = builder_mod.SavedModelBuilder(str(saved_model_path))
    with session.graph.as_default():
        saver = Saver(var_list=model._checkpoint_vars(), max_to_keep=None)
    builder.add_meta_graph_and_variables(
        session, [tag_constants.SERVING],
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature}, saver=saver)
    builder.save(as_text=as_text)
    path = os.fspath(saved_model_path)
    os.makedirs(os.path.dirname(os.path.join(path, _MODEL_JSON)), exist_ok=True)
    with open(os.path.join(path, _MODEL_JSON), "w", encoding="utf-8") as f:
        f.write(model.to_json())
    # The same keys again, with the object graph TensorFlow's load_weights wants.
    model.save_weights(os.path.join(path, "variables", "variables"))


def load_from_saved_model(saved_model_path, custom_objects=None):
    """The model ``export_saved_model`` wrote, with its weights (not compiled)."""
    path = os.fspath(saved_model_path)
    with open(os.path.join(path, _MODEL_JSON), encoding="utf-8") as f:
        model = saving.model_from_json(f.read(), custom_objects)
    model.load_weights(os.path.join(path, "variables", "variables"))
    return model
