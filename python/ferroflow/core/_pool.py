"""The descriptor pool holding ferroflow's copies of TensorFlow's messages.

The messages keep TensorFlow's full names (``tensorflow.Event``, ...), so they
cannot live in protobuf's default pool next to TensorFlow's own copies: a
program importing both packages would fail with "duplicate symbol". The
generated ``*_pb2`` modules register their files here instead
(``tools/gen_protos.sh`` rewrites that one line), which changes nothing on the
wire, in text format or in ``Any`` type URLs.
"""

from google.protobuf import any_pb2, descriptor_pool, wrappers_pb2

POOL = descriptor_pool.DescriptorPool()

# Well-known types our .proto files import.
for _dependency in (any_pb2, wrappers_pb2):
    POOL.AddSerializedFile(_dependency.DESCRIPTOR.serialized_pb)
