"""TensorInfo protos: how a signature names the tensors it reads and returns (``tf.saved_model.utils``)."""

from ferroflow.framework import ops
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.framework.tensor_shape import TensorShape


def _tensor_info_class():
    from ferroflow.core.protobuf.meta_graph_pb2 import TensorInfo

    return TensorInfo


def build_tensor_info(tensor):
    """The ``TensorInfo`` of ``tensor``: its name, dtype and static shape.

    A SparseTensor is described by the names of its three component tensors
    (the ``coo_sparse`` encoding) with the dtype of its values.
    """
    info = _tensor_info_class()()
    if isinstance(tensor, SparseTensor):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        info.dtype = tensor.dtype.as_datatype_enum
        info.tensor_shape.CopyFrom(TensorShape(tensor.get_shape()).as_proto())
        return info
    if not isinstance(tensor, ops.Tensor):
        raise TypeError(f"build_tensor_info takes a Tensor or SparseTensor, not {type(tensor).__name__}: {tensor!r}")
    info.name = tensor.name
    info.dtype = tensor.dtype.as_datatype_enum
    info.tensor_shape.CopyFrom(TensorShape(tensor.get_shape()).as_proto())
    return info


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor (or SparseTensor) of ``graph`` that ``tensor_info`` names.

    Names get ``import_scope/`` in front, as they did when the graph was
    loaded under that scope. Raises KeyError when the graph has no such tensor
    and ValueError for an encoding that is not ``name`` or ``coo_sparse``.
    """
    graph = graph or ops.get_default_graph()

    def tensor(name):
        return graph.get_tensor_by_name(ops.prepend_name_scope(name, import_scope))

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor(tensor_info.name)
    if encoding == "coo_sparse":
        coo = tensor_info.coo_sparse
        return SparseTensor(tensor(coo.indices_tensor_name), tensor(coo.values_tensor_name),
                            tensor(coo.dense_shape_tensor_name))
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding} (ferroflow reads the 'name' and 'coo_sparse' ones)")


def tensor_info_names(tensor_info):
    """The graph tensor names a ``TensorInfo`` refers to (one, or three for a sparse tensor)."""
    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "coo_sparse":
        coo = tensor_info.coo_sparse
        return [coo.indices_tensor_name, coo.values_tensor_name, coo.dense_shape_tensor_name]
    if encoding == "name":
        return [tensor_info.name]
    return []

