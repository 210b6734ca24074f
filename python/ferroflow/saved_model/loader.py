"""Loading SavedModels into a session: ``tf.saved_model.loader.load`` and ``SavedModelLoader``.

Loading does what TensorFlow's loader does: pick the meta graph whose tag
set equals the requested one, import its graph and collections, restore the
variables from ``variables/variables``, then run the init op (the
``__saved_model_init_op`` signature, else the ``saved_model_main_op`` or
``legacy_init_op`` collection) with every asset tensor fed the path of its
copy under ``assets/``.
"""

from __future__ import annotations

import logging
import os

from ferroflow.framework import errors, ops
from ferroflow.saved_model import constants
from ferroflow.saved_model.utils import tensor_info_names
from ferroflow.training import saver as saver_lib

_logger = logging.getLogger("ferroflow")


class SavedModelCorruptError(errors.DataLossError, OSError):
    """``saved_model.pb`` (or ``.pbtxt``) cannot be parsed.

    A DataLossError, and also an OSError, the class TensorFlow's loader raises.
    """

    def __init__(self, message):
        errors.DataLossError.__init__(self, None, None, message)


def parse_saved_model(export_dir):
    """The ``SavedModel`` proto in ``export_dir`` (``saved_model.pb``, else ``saved_model.pbtxt``).

    Raises OSError when neither file exists and SavedModelCorruptError (a
    DataLossError and an OSError) when the file cannot be parsed.
    """
    from google.protobuf import message, text_format

    from ferroflow.core.protobuf import saved_model_pb2

    export_dir = _as_str(export_dir)
    pb = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    pbtxt = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    saved_model = saved_model_pb2.SavedModel()
    if os.path.isfile(pb):
        with open(pb, "rb") as f:
            data = f.read()
        try:
            saved_model.ParseFromString(data)
        except message.DecodeError as e:
            raise SavedModelCorruptError(f"Cannot parse file {pb}: {e}.") from None
    elif os.path.isfile(pbtxt):
        with open(pbtxt, "rb") as f:
            data = f.read()
        try:
            text_format.Parse(data.decode("utf-8"), saved_model)
        except (UnicodeDecodeError, text_format.ParseError) as e:
            raise SavedModelCorruptError(f"Cannot parse file {pbtxt}: {e}.") from None
    else:
        raise OSError(f"SavedModel file does not exist at: {export_dir}{os.path.sep}"
                      f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|{constants.SAVED_MODEL_FILENAME_PB}}}")
    return saved_model


def maybe_saved_model_directory(export_dir):
    """Whether ``export_dir`` holds a ``saved_model.pb`` or ``saved_model.pbtxt``."""
    export_dir = _as_str(export_dir)
    return any(os.path.isfile(os.path.join(export_dir, name))
               for name in (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT))


#: TensorFlow 2's name for ``maybe_saved_model_directory``.
contains_saved_model = maybe_saved_model_directory


def _as_str(path):
    path = os.fspath(path)
    return path.decode() if isinstance(path, bytes) else path


def asset_file_defs(meta_graph_def):
    """The ``AssetFileDef``s of a meta graph: its ``asset_file_def`` field, else the ``saved_model_assets``
    collection TF1 builders write."""
    if meta_graph_def.asset_file_def:
        return list(meta_graph_def.asset_file_def)
    from ferroflow.core.protobuf import meta_graph_pb2

    defs = []
    if constants.ASSETS_KEY in meta_graph_def.collection_def:
        for packed in meta_graph_def.collection_def[constants.ASSETS_KEY].any_list.value:
            asset = meta_graph_pb2.AssetFileDef()
            if not packed.Unpack(asset):
                raise ValueError(f"collection {constants.ASSETS_KEY} holds a {packed.type_url}, not an AssetFileDef")
            defs.append(asset)
    return defs


def init_op_name(meta_graph_def):
    """The name of the op a loader runs after restoring (None when the meta graph has none)."""
    signature = meta_graph_def.signature_def.get(constants.INIT_OP_SIGNATURE_KEY)
    if signature is not None and constants.INIT_OP_SIGNATURE_KEY in signature.outputs:
        return signature.outputs[constants.INIT_OP_SIGNATURE_KEY].name
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if key in meta_graph_def.collection_def:
            names = list(meta_graph_def.collection_def[key].node_list.value)
            if len(names) != 1:
                raise RuntimeError(f"Expected exactly one SavedModel init op. Found {len(names)}: {names}.")
            return names[0]
    return None


class SavedModelLoader:
    """Loads the meta graphs of one SavedModel directory into sessions."""

    def __init__(self, export_dir):
        self._export_dir = _as_str(export_dir)
        self._variables_path = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY,
                                            constants.VARIABLES_FILENAME)
        self._saved_model = parse_saved_model(self._export_dir)

    @property
    def export_dir(self):
        return self._export_dir

    @property
    def variables_path(self):
        return self._variables_path

    @property
    def saved_model(self):
        return self._saved_model

    def get_meta_graph_def_from_tags(self, tags):
        """The ``MetaGraphDef`` whose tag set equals ``tags``; RuntimeError listing the tag sets there are."""
        tags = [tags] if isinstance(tags, str) else list(tags)
        available = []
        for meta_graph_def in self._saved_model.meta_graphs:
            found = set(meta_graph_def.meta_info_def.tags)
            if found == set(tags):
                return meta_graph_def
            available.append(sorted(found))
        raise RuntimeError(f"MetaGraphDef associated with tags {str(tags).strip('[]')} could not be found in "
                           f"SavedModel {self._export_dir}, with available tags '{available}'. To inspect available "
                           "tag-sets in the SavedModel, please use the SavedModel CLI: `ferroflow saved-model show`.")

    def load_graph(self, graph, tags, import_scope=None, **saver_kwargs):
        """Imports the meta graph tagged ``tags`` into ``graph``; returns ``(saver, None)``."""
        meta_graph_def = self.get_meta_graph_def_from_tags(tags)
        clear_devices = saver_kwargs.pop("clear_devices", False)
        if saver_kwargs:
            raise TypeError(f"load got unexpected keyword arguments: {sorted(saver_kwargs)}")
        with graph.as_default():
            saver = saver_lib.import_meta_graph(meta_graph_def, clear_devices=clear_devices,
                                               import_scope=import_scope)
            self._check_signatures(meta_graph_def, graph, import_scope)
        return saver, None

    def _check_signatures(self, meta_graph_def, graph, import_scope):
        for key, signature in meta_graph_def.signature_def.items():
            for kind, infos in (("input", signature.inputs), ("output", signature.outputs)):
                for info_key, info in infos.items():
                    for name in tensor_info_names(info):
                        try:
                            graph.as_graph_element(ops.prepend_name_scope(name, import_scope))
                        except (KeyError, ValueError):
                            raise ValueError(f"SavedModel {self._export_dir}: signature '{key}' {kind} '{info_key}' "
                                             f"names '{name}', which is not in the graph.") from None

    def restore_variables(self, sess, saver, import_scope=None):
        """Restores the variables from ``variables/variables`` (nothing to do for a model without any)."""
        with sess.graph.as_default():
            if saver is None:
                if ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, scope=import_scope):
                    raise ValueError(f"SavedModel {self._export_dir} has variables but no saver to restore them.")
                _logger.info("The specified SavedModel has no variables; no checkpoints were restored.")
                return
            if not os.path.isfile(self._variables_path + ".index"):
                raise errors.NotFoundError(None, None, f"SavedModel {self._export_dir} has no variables checkpoint: "
                                           f"{self._variables_path}.index does not exist.")
            saver.restore(sess, self._variables_path)

    def run_init_ops(self, sess, tags, import_scope=None):
        """Runs the meta graph's init op with each asset tensor fed its file's path under ``assets/``."""
        meta_graph_def = self.get_meta_graph_def_from_tags(tags)
        with sess.graph.as_default():
            feeds = {}
            for asset in asset_file_defs(meta_graph_def):
                tensor = sess.graph.get_tensor_by_name(ops.prepend_name_scope(asset.tensor_info.name, import_scope))
                path = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY, asset.filename)
                if not os.path.isfile(path):
                    raise errors.NotFoundError(None, None, f"SavedModel {self._export_dir}: asset file {path} "
                                               "does not exist.")
                feeds[tensor] = path.encode()
            name = init_op_name(meta_graph_def)
            if name is not None:
                sess.run([sess.graph.as_graph_element(ops.prepend_name_scope(name, import_scope))], feed_dict=feeds)

    def load(self, sess, tags, import_scope=None, **saver_kwargs):
        """Imports, restores and initializes the meta graph tagged ``tags`` in ``sess``; returns its MetaGraphDef."""
        with sess.graph.as_default():
            saver, _ = self.load_graph(sess.graph, tags, import_scope, **saver_kwargs)
            self.restore_variables(sess, saver, import_scope)
            self.run_init_ops(sess, tags, import_scope)
        return self.get_meta_graph_def_from_tags(tags)


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the SavedModel at ``export_dir`` into ``sess`` (see ``SavedModelLoader.load``)."""
    return SavedModelLoader(export_dir).load(sess, tags, import_scope, **saver_kwargs)
