"""Writing SavedModels: ``tf.saved_model.builder.SavedModelBuilder`` and ``simple_save``.

A SavedModel directory holds ``saved_model.pb`` (a ``SavedModel`` proto: one
``MetaGraphDef`` per tag set, with signatures), ``variables/variables.*`` (a
V2 checkpoint of every variable, written once and shared by the meta graphs)
and ``assets/`` (files the graph reads, e.g. vocabularies, copied in).

Nothing appears at ``export_dir`` until ``save()``: the builder writes into a
hidden staging directory next to it and renames that into place, so a
process that dies half way leaves no half-written model behind.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile

from ferroflow.framework import errors, ops, tensor_util
from ferroflow.saved_model import constants
from ferroflow.saved_model.utils import tensor_info_names

_logger = logging.getLogger("ferroflow")


def _meta_graph_pb2():
    from ferroflow.core.protobuf import meta_graph_pb2

    return meta_graph_pb2


def write_saved_model_file(saved_model, export_dir, as_text=False):
    """Writes ``saved_model`` as ``export_dir/saved_model.pb`` (or ``.pbtxt``) atomically; returns the path."""
    name = constants.SAVED_MODEL_FILENAME_PBTXT if as_text else constants.SAVED_MODEL_FILENAME_PB
    path = os.path.join(export_dir, name)
    data = str(saved_model).encode() if as_text else saved_model.SerializeToString(deterministic=True)
    fd, tmp = tempfile.mkstemp(dir=export_dir, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def _asset_path_from_tensor(path_tensor):
    """The file name a scalar string Const holds (the way asset paths enter a graph)."""
    if not isinstance(path_tensor, ops.Tensor):
        raise TypeError(f"Asset path tensor {path_tensor!r} must be a Tensor.")
    if path_tensor.op.type != "Const":
        raise TypeError(f"Asset path tensor {path_tensor.name} must be of type constant. "
                        f"Has type {path_tensor.op.type} instead.")
    if path_tensor.dtype.base_dtype.name != "string":
        raise TypeError(f"Asset path tensor {path_tensor.name} must be of dtype string. "
                        f"Has type {path_tensor.dtype.name} instead.")
    value = tensor_util.constant_value(path_tensor)
    if value is None or getattr(value, "ndim", 0) != 0:
        raise TypeError(f"Asset path tensor {path_tensor.name} must be a scalar.")
    value = value.item() if hasattr(value, "item") else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _asset_filename(source, filename_map):
    """The name ``source`` gets under ``assets/``: its base name, made unique when another file has it."""
    base = os.path.basename(source)
    name, i = base, 1
    while name in filename_map and filename_map[name] != source:
        with open(filename_map[name], "rb") as a, open(source, "rb") as b:
            if a.read() == b.read():
                return name  # the same contents under the same name: one copy serves both
        name = f"{base}_{i}"
        i += 1
    return name


class SavedModelBuilder:
    """Builds a SavedModel: ``add_meta_graph_and_variables`` once, ``add_meta_graph`` for more tag sets, ``save``.

    Raises AssertionError when ``export_dir`` exists and is not empty, as
    TensorFlow does.
    """

    def __init__(self, export_dir):
        from ferroflow.core.protobuf import saved_model_pb2

        export_dir = os.fspath(export_dir)
        if isinstance(export_dir, bytes):
            export_dir = export_dir.decode()
        self._export_dir = export_dir
        _refuse_non_empty(export_dir)
        parent = os.path.dirname(os.path.abspath(export_dir))
        os.makedirs(parent, exist_ok=True)
        self._staging_dir = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(os.path.abspath(export_dir))}.",
                                             suffix=".saving")
        self._saved_model = saved_model_pb2.SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._has_saved_variables = False
        self._saved_asset_files = {}  # name under assets/ -> source path

    @property
    def _target_dir(self):
        """Where files go now: the staging directory until the first ``save``, then the export directory."""
        return self._staging_dir or self._export_dir

    # -- what goes into a meta graph ---------------------------------------
    def _validate_signature_def_map(self, signature_def_map, graph):
        signature_class = _meta_graph_pb2().SignatureDef
        for key, signature in signature_def_map.items():
            if not isinstance(signature, signature_class):
                raise TypeError(f"signature_def_map['{key}'] must be a SignatureDef (see "
                                f"tf.saved_model.signature_def_utils), got {type(signature).__name__}.")
            for kind, infos in (("input", signature.inputs), ("output", signature.outputs)):
                for info_key, info in infos.items():
                    encoding = info.WhichOneof("encoding")
                    if encoding is None:
                        raise AssertionError(f"Invalid `tensor_info` for {kind} '{info_key}' of signature "
                                             f"'{key}': {info}.")
                    if encoding == "name" and (not info.name or not info.dtype):
                        raise AssertionError("All TensorInfo protos used in the SignatureDefs must have the name "
                                             f"and dtype fields set (signature '{key}', {kind} '{info_key}').")
                    for name in tensor_info_names(info):
                        try:
                            graph.as_graph_element(name, allow_tensor=True, allow_operation=False)
                        except (KeyError, ValueError):
                            raise ValueError(f"Signature '{key}' {kind} '{info_key}' names tensor '{name}', which "
                                             "is not in the graph being exported.") from None
        for reserved, what in ((constants.INIT_OP_SIGNATURE_KEY, "initialization"),
                               (constants.TRAIN_OP_SIGNATURE_KEY, "the train op")):
            if reserved in signature_def_map:
                raise KeyError(f'SignatureDef map key "{reserved}" is reserved for {what}. Please use a different '
                               "key.")

    def _maybe_add_main_op(self, main_op):
        if main_op is None:
            return
        if not isinstance(main_op, ops.Operation):
            raise TypeError(f"Expected {main_op!r} to be an Operation but got type {type(main_op).__name__} "
                            "instead.")
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            if ops.get_collection(key):
                raise ValueError(f"Graph already contains one or more main ops under the collection {key}.")
        ops.add_to_collection(constants.MAIN_OP_KEY, main_op)

    def _add_assets(self, assets_collection):
        """Copies the files named by ``assets_collection`` into ``assets/`` and records them in the graph."""
        if not assets_collection:
            return
        meta_graph_pb2 = _meta_graph_pb2()
        from ferroflow.saved_model.utils import build_tensor_info

        added = {}
        for tensor in assets_collection:
            source = _asset_path_from_tensor(tensor)
            if not source:
                raise ValueError(f"Asset filepath tensor {tensor.name} is empty.")
            if not os.path.isfile(source):
                raise errors.NotFoundError(None, None, f"Asset file {source} (named by tensor {tensor.name}) "
                                           "does not exist.")
            name = _asset_filename(source, {**self._saved_asset_files, **added})
            added[name] = source
            holder = meta_graph_pb2.CollectionDef()
            packed = holder.any_list.value.add()
            packed.Pack(meta_graph_pb2.AssetFileDef(filename=name, tensor_info=build_tensor_info(tensor)))
            ops.add_to_collection(constants.ASSETS_KEY, packed)
        assets_dir = os.path.join(self._target_dir, constants.ASSETS_DIRECTORY)
        os.makedirs(assets_dir, exist_ok=True)
        for name, source in added.items():
            if name not in self._saved_asset_files:
                shutil.copyfile(source, os.path.join(assets_dir, name))
                self._saved_asset_files[name] = source

    def _add_collections(self, assets_collection, main_op):
        self._maybe_add_main_op(main_op)
        self._add_assets(assets_collection)

    @staticmethod
    def _maybe_create_saver(saver):
        if saver:
            return saver
        from ferroflow.core.protobuf import saver_pb2
        from ferroflow.training.saver import Saver

        saveables = list(ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)) + list(
            ops.get_collection(ops.GraphKeys.SAVEABLE_OBJECTS))
        return Saver(saveables, sharded=True, write_version=saver_pb2.SaverDef.V2, allow_empty=True)

    def _tag_and_add_meta_graph(self, meta_graph_def, tags, signature_def_map):
        meta_graph_def.meta_info_def.tags.extend(tags)
        for key in sorted(signature_def_map):
            meta_graph_def.signature_def[key].CopyFrom(signature_def_map[key])
        self._saved_model.meta_graphs.add().CopyFrom(meta_graph_def)

    @staticmethod
    def _tags(tags):
        if tags is None:
            raise ValueError("`tags` must be a list of strings naming the meta graph (e.g. [tf.saved_model."
                             "tag_constants.SERVING]).")
        return [tags] if isinstance(tags, str) else list(tags)

    # -- public API ----------------------------------------------------------
    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, assets_collection=None,
                                     legacy_init_op=None, clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Saves the session's variables and adds the first meta graph, tagged ``tags``.

        ``main_op`` (or ``legacy_init_op``) is run by loaders after the
        variables are restored; ``assets_collection`` lists scalar string
        Consts naming files to copy into ``assets/`` (loaders feed those
        tensors the copies' paths); ``saver`` defaults to a sharded V2 Saver
        of every global variable and saveable object.
        """
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been saved. Please "
                                 "invoke `add_meta_graph()` instead.")
        tags = self._tags(tags)
        signature_def_map = signature_def_map or {}
        with sess.graph.as_default():
            self._validate_signature_def_map(signature_def_map, sess.graph)
            self._add_collections(assets_collection, main_op if main_op is not None else legacy_init_op)
            variables_dir = os.path.join(self._target_dir, constants.VARIABLES_DIRECTORY)
            os.makedirs(variables_dir, exist_ok=True)
            saver = self._maybe_create_saver(saver)
            saver.save(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME), write_meta_graph=False,
                       write_state=False)
            meta_graph_def = saver.export_meta_graph(clear_devices=clear_devices,
                                                     strip_default_attrs=strip_default_attrs)
        self._tag_and_add_meta_graph(meta_graph_def, tags, signature_def_map)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None, legacy_init_op=None,
                       clear_devices=False, main_op=None, strip_default_attrs=False, saver=None):
        """Adds another meta graph (the default graph, tagged ``tags``) that shares the saved variables."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved yet. Please "
                                 "invoke `add_meta_graph_and_variables()` first.")
        tags = self._tags(tags)
        signature_def_map = signature_def_map or {}
        graph = ops.get_default_graph()
        self._validate_signature_def_map(signature_def_map, graph)
        self._add_collections(assets_collection, main_op if main_op is not None else legacy_init_op)
        saver = self._maybe_create_saver(saver)
        meta_graph_def = saver.export_meta_graph(clear_devices=clear_devices, strip_default_attrs=strip_default_attrs)
        self._tag_and_add_meta_graph(meta_graph_def, tags, signature_def_map)

    def save(self, as_text=False):
        """Writes ``saved_model.pb`` (``saved_model.pbtxt`` with ``as_text``) and moves the model into place.

        Returns the path of the file written, as bytes (as TensorFlow 1.x did).
        """
        path = write_saved_model_file(self._saved_model, self._target_dir, as_text)
        if self._staging_dir is not None:
            _refuse_non_empty(self._export_dir)
            if os.path.isdir(self._export_dir):
                os.rmdir(self._export_dir)  # empty, checked above; rename() needs it gone or empty
            os.rename(self._staging_dir, self._export_dir)
            self._staging_dir = None
            path = os.path.join(self._export_dir, os.path.basename(path))
        return path.encode()

    def __del__(self):
        staging = getattr(self, "_staging_dir", None)
        if staging and os.path.isdir(staging):
            shutil.rmtree(staging, ignore_errors=True)


def _refuse_non_empty(export_dir):
    if os.path.exists(export_dir) and (not os.path.isdir(export_dir) or os.listdir(export_dir)):
        raise AssertionError(f"Export directory {export_dir} already exists, and isn't empty. Please choose a "
                             "different export directory, or delete all the contents of the specified directory.")


#: TensorFlow 1.x's other name for the builder.
Builder = SavedModelBuilder


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Saves a serving model in one call: a Predict signature ``serving_default`` from ``{key: Tensor}`` dicts.

    The meta graph is tagged ``serve``, devices are cleared, and the files
    named in the ``tf.GraphKeys.ASSET_FILEPATHS`` collection become assets.
    """
    from ferroflow.saved_model import signature_constants, signature_def_utils, tag_constants

    signature_def_map = {
        signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature_def_utils.predict_signature_def(
            inputs, outputs)
    }
    builder = SavedModelBuilder(export_dir)
    with session.graph.as_default():
        assets = ops.get_collection(ops.GraphKeys.ASSET_FILEPATHS)
    builder.add_meta_graph_and_variables(session, tags=[tag_constants.SERVING], signature_def_map=signature_def_map,
                                         assets_collection=assets, main_op=legacy_init_op, clear_devices=True)
    builder.save()
