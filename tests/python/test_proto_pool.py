"""ferroflow's message classes live in their own descriptor pool, so TensorFlow's can coexist."""

from google.protobuf import descriptor_pool

import ferroflow as tf
from ferroflow.core import _pool


def test_messages_are_not_in_the_default_pool():
    assert tf.Event.DESCRIPTOR.file.pool is _pool.POOL
    # What TensorFlow's own event_pb2 does on import: register a file defining tensorflow.Event etc.
    # in the default pool. With ferroflow's copies elsewhere there is no "duplicate symbol" clash.
    for message in (tf.Event, tf.train.Example, tf.train.SaverDef, tf.GraphDef):
        _add_recursively(message.DESCRIPTOR.file)
        assert descriptor_pool.Default().FindMessageTypeByName(message.DESCRIPTOR.full_name).full_name == (
            message.DESCRIPTOR.full_name
        )


def _add_recursively(file):
    default = descriptor_pool.Default()
    try:
        default.FindFileByName(file.name)
        return
    except KeyError:
        pass
    for dep in file.dependencies:
        _add_recursively(dep)
    default.AddSerializedFile(file.serialized_pb)


def test_wire_format_and_text_format_unchanged():
    from google.protobuf import text_format

    feature = tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))
    ex = tf.train.Example(features=tf.train.Features(feature={"a": feature}))
    # Example{features{feature{key "a" value{int64_list{value [1, 2] (packed)}}}}}, encoded by hand.
    assert ex.SerializeToString() == b"\x0a\x0d\x0a\x0b\x0a\x01a\x12\x06\x1a\x04\x0a\x02\x01\x02"
    assert text_format.Parse(text_format.MessageToString(ex), tf.train.Example()) == ex
