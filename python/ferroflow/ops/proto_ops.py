"""``tf.io.decode_proto`` and ``tf.io.encode_proto``: fields of any protobuf message to and from tensors.

Both add TensorFlow's ops (``DecodeProtoV2``, ``EncodeProto``) with its attributes; the kernels are Rust's
(``ferroflow_data::proto``). ``descriptor_source`` names where the message's description comes from: a
file holding a serialized ``FileDescriptorSet``, ``b"bytes://" + serialized_set``, or ``"local://"``.
TensorFlow's ``local://`` is the protos compiled into its binary; ferroflow's is every message Python
knows: TensorFlow's own (``tensorflow.Example``, ...) and any protobuf class the program has imported.
The graph keeps ``local://`` as its attribute, so an exported graph reads as TensorFlow's.
"""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, make_op

__all__ = ["decode_proto", "encode_proto"]

DecodeProtoV2Output = collections.namedtuple("DecodeProtoV2", ["sizes", "values"])

def decode_proto(bytes, message_type, field_names, output_types, descriptor_source="local://",  # noqa: A002
                 message_format="binary", sanitize=False, name=None):
    """Reads ``field_names`` out of serialized ``message_type`` messages.

    Returns ``(sizes, values)``: ``sizes`` is int32 of shape ``bytes.shape + [len(field_names)]``, how many
    values each message has for each field; ``values[i]`` has shape ``bytes.shape + [n]``, ``n`` the most
    values any message has for field ``i`` (at least 1), padded with the field's default value. A message
    or group field comes out as its serialized bytes. ``message_format`` is ``"binary"`` or ``"text"``.
    """
    output_types = [dtypes.as_dtype(t) for t in output_types]
    bytes = ops.convert_to_tensor(bytes, dtype=dtypes.string, name="bytes")
    op = make_op(
        "DecodeProtoV2",
        [bytes],
        {
            "message_type": message_type,
            "field_names": list(field_names),
            "output_types": ("list_type", [t.as_datatype_enum for t in output_types]),
            "descriptor_source": descriptor_source,
            "message_format": message_format,
            "sanitize": bool(sanitize),
        },
        name=name or "DecodeProtoV2",
    )
    return DecodeProtoV2Output(op._outputs[0], list(op._outputs[1:]))


def encode_proto(sizes, values, field_names, message_type, descriptor_source="local://", name=None):
    """Serializes ``message_type`` messages from tensors: the inverse of :func:`decode_proto`.

    ``values[i]`` has shape ``batch_shape + [n_i]`` and ``sizes`` (int32) ``batch_shape +
    [len(field_names)]``; message ``b`` gets the first ``sizes[b, i]`` values of ``values[i][b]``.
    Returns a string tensor of shape ``batch_shape``.
    """
    values = list(values)
    sizes = ops.convert_to_tensor(sizes, dtype=dtypes.int32, name="sizes")
    values = [ops.convert_to_tensor(v, name=f"values_{i}") for i, v in enumerate(values)]
    return make(
        "EncodeProto",
        [sizes, *values],
        {
            "field_names": list(field_names),
            "message_type": message_type,
            "descriptor_source": descriptor_source,
            "Tinput_types": ("list_type", [v.dtype.base_dtype.as_datatype_enum for v in values]),
        },
        name=name or "EncodeProto",
    )


def _local_descriptor_set(message_type):
    """The serialized ``FileDescriptorSet`` (defining file and its dependencies) of a message type Python
    knows, or None. Called by the native module when a ``local://`` kernel meets a type for the first time."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    import ferroflow.protos  # noqa: F401  (registers TensorFlow's messages in ferroflow's pool)
    from ferroflow.core._pool import POOL

    for pool in (POOL, descriptor_pool.Default()):
        try:
            desc = pool.FindMessageTypeByName(message_type)
        except KeyError:
            continue
        out = descriptor_pb2.FileDescriptorSet()
        _add_file(desc.file, out, set())
        return out.SerializeToString()
    return None


def _add_file(fd, out, seen):
    """Appends ``fd``'s dependencies, then ``fd``, to the FileDescriptorSet ``out`` (each file once)."""
    if fd.name in seen:
        return
    seen.add(fd.name)
    for dep in fd.dependencies:
        _add_file(dep, out, seen)
    out.file.add().ParseFromString(fd.serialized_pb)
