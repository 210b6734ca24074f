"""TF1 summary ops: ``tf.summary.scalar``, ``histogram``, ``image``, ``audio``, ``text``,
``tensor_summary``, ``merge``, ``merge_all`` and the pre-1.0 names (``tf.scalar_summary``, ...).

Each op outputs a scalar string tensor holding a serialized ``tf.Summary``,
computed by a Rust kernel (``ferroflow-records``): TF1 scalars are
``simple_value``s, histograms use TensorFlow's exponential buckets, images
are PNG and audio is 16-bit WAV. Names, tags and graph nodes follow
TensorFlow: ``tf.summary.scalar('loss', x)`` adds a ``Const`` ``loss/tags``
and a ``ScalarSummary`` node ``loss`` whose tag is ``loss`` (prefixed by the
enclosing name scope), and adds the op to ``GraphKeys.SUMMARIES``.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, type_attr

__all__ = [
    "audio", "histogram", "image", "merge", "merge_all", "scalar", "tensor_summary", "text",
    "scalar_summary", "histogram_summary", "image_summary", "audio_summary", "merge_summary",
    "merge_all_summaries",
]

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    """Replaces characters TensorBoard does not allow in tags with ``_`` and drops leading slashes."""
    if name is not None:
        name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    return name


@contextlib.contextmanager
def _summary_scope(name, family=None, default_name=None, values=None):
    """Yields ``(tag, scope)``: the summary's tag and the name scope of its op."""
    name = _clean_tag(name)
    family = _clean_tag(family)
    scope_base_name = name if family is None else f"{family}/{name}"
    with ops.name_scope(scope_base_name, default_name, values=values) as scope:
        if family is None:
            tag = scope.rstrip("/")
        else:
            tag = f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _collect(val, collections, default_collections):
    if collections is None:
        collections = default_collections
    for key in collections:
        ops.add_to_collection(key, val)


def _summary_op(op_type, scope, inputs, attrs):
    """Adds ``op_type`` named ``scope``.

    ``inputs`` are ``(arg_name, value, dtype)``, converted in order as
    ``scope/arg_name`` (as TensorFlow's generated op wrappers do); ``attrs``
    is a dict or a function of the converted tensors.
    """
    with ops.name_scope(scope):
        tensors = [ops.convert_to_tensor(value, dtype=dtype, name=arg) for arg, value, dtype in inputs]
    if callable(attrs):
        attrs = attrs(tensors)
    return make(op_type, tensors, attrs, name=scope)


def _t_attr(tensors):
    """``T``: the dtype of the second input (the summarised tensor)."""
    return {"T": type_attr(tensors[1].dtype)}


# -- TF1 (tf.summary.*) -------------------------------------------------------
def scalar(name, tensor, collections=None, family=None):
    """A summary of one scalar value (a ``Summary`` with one ``simple_value``).

    Raises ``InvalidArgumentError`` when run if ``tensor`` is not a scalar.
    """
    with _summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = _summary_op("ScalarSummary", scope, [("tags", tag, dtypes.string), ("values", tensor, None)], _t_attr)
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def histogram(name, values, collections=None, family=None):
    """A histogram of ``values`` (TensorFlow's exponential buckets); NaN or Inf fail when run."""
    with _summary_scope(name, family, values=[values], default_name="HistogramSummary") as (tag, scope):
        val = _summary_op("HistogramSummary", scope, [("tag", tag, dtypes.string), ("values", values, None)], _t_attr)
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def _image_attrs(max_images):
    def attrs(tensors):
        return {
            "T": type_attr(tensors[1].dtype),
            "max_images": int(max_images),
            "bad_color": ("tensor", np.array([255, 0, 0, 255], np.uint8), dtypes.uint8.as_datatype_enum),
        }

    return attrs


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """PNG summaries of up to ``max_outputs`` images of a ``[batch, height, width, channels]`` tensor.

    uint8 images are written as they are; float images are rescaled per image
    (``[0, 255]`` if all values are non-negative, else centred on 128).
    """
    with _summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = _summary_op("ImageSummary", scope, [("tag", tag, dtypes.string), ("tensor", tensor, None)],
                          _image_attrs(max_outputs))
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """WAV summaries of up to ``max_outputs`` clips of a ``[batch, frames(, channels)]`` float tensor in [-1, 1]."""
    with _summary_scope(name, family=family, values=[tensor]) as (tag, scope):
        sample_rate = ops.convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        val = _summary_op(
            "AudioSummaryV2", scope,
            [("tag", tag, dtypes.string), ("tensor", tensor, dtypes.float32), ("sample_rate", sample_rate, None)],
            {"max_outputs": int(max_outputs)},
        )
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def _summary_metadata_pb2():
    from ferroflow.core.framework import summary_pb2

    return summary_pb2


def tensor_summary(name, tensor, summary_description=None, collections=None, summary_metadata=None, family=None,
                   display_name=None):
    """A summary holding a whole tensor plus ``summary_metadata`` (a ``SummaryMetadata``)."""
    summary_pb2 = _summary_metadata_pb2()
    if summary_metadata is None:
        summary_metadata = summary_pb2.SummaryMetadata()
    if summary_description is not None:
        summary_metadata.summary_description = summary_description
    if display_name is not None:
        summary_metadata.display_name = display_name
    serialized_summary_metadata = summary_metadata.SerializeToString()
    with _summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = _summary_op(
            "TensorSummaryV2", scope,
            [("tag", tag, dtypes.string), ("tensor", tensor, None),
             ("serialized_summary_metadata", serialized_summary_metadata, dtypes.string)],
            _t_attr,
        )
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def text(name, tensor, collections=None):
    """A text summary (TensorBoard's text plugin) of a string tensor."""
    tensor = ops.convert_to_tensor(tensor)
    if tensor.dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype}")
    summary_pb2 = _summary_metadata_pb2()
    summary_metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name=name, tensor=tensor, summary_metadata=summary_metadata, collections=collections)


def _merge_op(inputs, name):
    tensors = [ops.convert_to_tensor(x, dtype=dtypes.string) for x in inputs]
    return make("MergeSummary", tensors, {"N": len(tensors)}, name=name)


def merge(inputs, collections=None, name=None):
    """Merges summaries (serialized ``Summary`` tensors) into one; duplicate tags fail when run."""
    name = _clean_tag(name)
    with ops.name_scope(name, "Merge", inputs):
        val = _merge_op(inputs, name)
        _collect(val, collections, [])
    return val


def merge_all(key=ops.GraphKeys.SUMMARIES, scope=None, name=None):
    """Merges every summary in collection ``key`` (None if there is none)."""
    summary_ops = ops.get_collection(key, scope=scope)
    if not summary_ops:
        return None
    return merge(summary_ops, name=name)


# -- pre-1.0 names (tf.scalar_summary, ...) ---------------------------------
def scalar_summary(tags, values, collections=None, name=None):
    """Old ``tf.scalar_summary``: one ``simple_value`` per element of ``tags`` / ``values`` (same shape)."""
    with ops.name_scope(name, "ScalarSummary", [tags, values]) as scope:
        val = _summary_op("ScalarSummary", scope, [("tags", tags, dtypes.string), ("values", values, None)], _t_attr)
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def histogram_summary(tag, values, collections=None, name=None):
    """Old ``tf.histogram_summary``."""
    with ops.name_scope(name, "HistogramSummary", [tag, values]) as scope:
        val = _summary_op("HistogramSummary", scope, [("tag", tag, dtypes.string), ("values", values, None)], _t_attr)
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def image_summary(tag, tensor, max_images=3, collections=None, name=None):
    """Old ``tf.image_summary``."""
    with ops.name_scope(name, "ImageSummary", [tag, tensor]) as scope:
        val = _summary_op("ImageSummary", scope, [("tag", tag, dtypes.string), ("tensor", tensor, None)],
                          _image_attrs(max_images))
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def audio_summary(tag, tensor, sample_rate, max_outputs=3, collections=None, name=None):
    """Old ``tf.audio_summary``."""
    with ops.name_scope(name, "AudioSummary", [tag, tensor]) as scope:
        sample_rate = ops.convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        val = _summary_op(
            "AudioSummaryV2", scope,
            [("tag", tag, dtypes.string), ("tensor", tensor, dtypes.float32), ("sample_rate", sample_rate, None)],
            {"max_outputs": int(max_outputs)},
        )
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def merge_summary(inputs, collections=None, name=None):
    """Old ``tf.merge_summary``."""
    val = _merge_op(inputs, name)
    _collect(val, collections, [])
    return val


def merge_all_summaries(key=ops.GraphKeys.SUMMARIES):
    """Old ``tf.merge_all_summaries``."""
    summary_ops = ops.get_collection(key)
    if not summary_ops:
        return None
    return merge_summary(summary_ops)


# TF 2's summary ops (tf.compat.v2.summary) register themselves here; ferroflow builds TF1 summaries only.
_SUMMARY_V2_COLLECTION = "_SUMMARY_V2"


def all_v2_summary_ops():
    """The TF 2-style summary ops of the default graph (TF's ``_SUMMARY_V2`` collection). ferroflow's
    summary ops are TF1's, so this is empty unless a program adds to that collection itself."""
    return ops.get_collection(_SUMMARY_V2_COLLECTION)


def initialize(graph=None, session=None):
    """TF1's ``tf.summary.initialize``: in graph mode, runs the thread's default TF 2 summary writer's
    initializer in ``session`` (default: the default session) and, given ``graph``, writes it to that
    writer at step 0.

    ferroflow writes summaries through ``FileWriter`` only and has no TF 2 summary writers
    (``tf.contrib.summary`` / ``tf.compat.v2.summary.create_file_writer``), so no thread ever has a
    default one, and this raises ``RuntimeError`` as TensorFlow does in that state, before looking at
    its arguments or touching the graph.
    """
    raise RuntimeError(
        "No default tf.contrib.summary.SummaryWriter found (ferroflow has no TF 2 summary writers; "
        "write summaries with tf.summary.FileWriter)"
    )


def get_summary_description(node_def):
    """The ``SummaryDescription`` in a ``TensorSummary`` node's ``description`` attr (JSON)."""
    from google.protobuf import json_format

    from ferroflow.core.framework.summary_pb2 import SummaryDescription

    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    description = node_def.attr["description"].s
    out = SummaryDescription()
    json_format.Parse(description.decode() if isinstance(description, bytes) else description, out)
    return out
