"""``tf.TensorArray``: a list of tensors for loops (``dynamic_rnn``, ``map_fn``, ``scan``).

A TensorArray is a value: its ``flow`` tensor carries the whole list, and
``write``, ``scatter``, ``unstack`` and ``split`` return a new TensorArray
(in Rust the list is updated in place when nothing else holds it). As in
TF1, use the returned object: ``ta = ta.write(i, x)``. Inside a
``tf.while_loop`` a TensorArray is a loop variable like any tensor.

Gradients flow through reads and writes: the gradient of a list is a list
whose unwritten elements are zeros.

Differences from TF1's resource-based TensorArray: reading an element does
not clear it (``clear_after_read`` is accepted and ignored), ``handle`` is
the flow itself, and ``grad()`` is not provided (``tf.gradients`` through
TensorArray ops covers what it was for).
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, type_spec
from ferroflow.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from ferroflow.ops._op_util import make, make_op, shape_attr, type_attr


class TensorArray:
    """A list of tensors of one dtype, written and read by index in the graph."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None,
                 colocate_with_first_write_call=True, name=None):
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = bool(infer_shape)
        self._element_shape = unknown_shape() if element_shape is None else as_shape(element_shape)
        self._static_size = None
        if handle is not None and flow is None:
            raise ValueError("flow must not be None if handle is not None.")
        if flow is not None:
            if size is not None:
                raise ValueError("Cannot provide both a flow and size at the same time")
            self._flow = flow
            return
        if handle is None and size is None:
            raise ValueError("Argument `size` must be provided if handle is not provided.")
        with ops.name_scope(name, "TensorArray", [size]) as scope:
            size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
            if not self._dynamic_size:
                from ferroflow.framework import tensor_util

                value = tensor_util.constant_value(size)
                self._static_size = None if value is None else int(value)
            self._flow = make(
                "ListReserve", [size], self._attrs(dynamic_size=self._dynamic_size),
                name=tensor_array_name or scope.rstrip("/") or "TensorArray",
            )

    # -- what the object carries ----------------------------------------------------
    def _attrs(self, **extra):
        attrs = {
            "element_dtype": type_attr(self._dtype),
            "element_shape": shape_attr(self._element_shape),
            "infer_shape": self._infer_shape,
            "dynamic_size": self._dynamic_size,
        }
        attrs.update(extra)
        return attrs

    def _with_flow(self, flow):
        ta = TensorArray.__new__(TensorArray)
        ta._dtype = self._dtype
        ta._dynamic_size = self._dynamic_size
        ta._clear_after_read = self._clear_after_read
        ta._infer_shape = self._infer_shape
        ta._element_shape = self._element_shape
        ta._static_size = self._static_size
        ta._flow = flow
        return ta

    def _merge_element_shape(self, shape):
        if not self._infer_shape:
            return
        shape = as_shape(shape)
        if not self._element_shape.is_compatible_with(shape):
            raise ValueError(
                f"Inconsistent shapes: saw {shape} but expected {self._element_shape} "
                "(and infer_shape=True)"
            )
        self._element_shape = self._element_shape.merge_with(shape)

    @property
    def flow(self):
        """The tensor carrying the list (a loop variable, a branch result)."""
        return self._flow

    @property
    def handle(self):
        return self._flow

    @property
    def _type_spec(self):
        return TensorArraySpec.from_value(self)

    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def element_shape(self):
        return self._element_shape

    # -- reading ----------------------------------------------------------------------
    def read(self, index, name=None):
        """The element at ``index``."""
        with ops.name_scope(name, "TensorArrayRead", [self._flow, index]):
            index = ops.convert_to_tensor(index, dtype=dtypes.int32, name="index")
            return make("ListGetItem", [self._flow, index], self._attrs(), name="TensorArrayReadV3")

    def stack(self, name=None):
        """Every element stacked along a new first axis."""
        with ops.name_scope(name, "TensorArrayStack", [self._flow]):
            out = make("ListStack", [self._flow], self._attrs(), name="TensorArrayGatherV3")
            if self._static_size is not None:
                out.set_shape(TensorShape([self._static_size]).concatenate(self._element_shape))
            return out

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked."""
        with ops.name_scope(name, "TensorArrayGather", [self._flow, indices]):
            indices = ops.convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            return make("ListGather", [self._flow, indices], self._attrs(), name="TensorArrayGatherV3")

    def concat(self, name=None):
        """Every element concatenated along its first axis."""
        with ops.name_scope(name, "TensorArrayConcat", [self._flow]):
            return make_op("ListConcat", [self._flow], self._attrs(), name="TensorArrayConcatV3")._outputs[0]

    def size(self, name=None):
        """The number of elements (an int32 scalar)."""
        return make("ListSize", [self._flow], {}, name=name or "TensorArraySizeV3")

    # -- writing ------------------------------------------------------------------------
    def write(self, index, value, name=None):
        """A TensorArray with ``value`` at ``index`` (each index is written once)."""
        with ops.name_scope(name, "TensorArrayWrite", [self._flow, index, value]):
            index = ops.convert_to_tensor(index, dtype=dtypes.int32, name="index")
            value = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
            self._merge_element_shape(value.shape)
            flow = make("ListSetItem", [self._flow, index, value], self._attrs(), name="TensorArrayWriteV3")
            return self._with_flow(flow)

    def scatter(self, indices, value, name=None):
        """A TensorArray with row ``k`` of ``value`` at ``indices[k]``."""
        with ops.name_scope(name, "TensorArrayScatter", [self._flow, indices, value]):
            indices = ops.convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            value = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
            if value.shape.rank is not None:
                self._merge_element_shape(value.shape[1:])
            flow = make("ListScatter", [self._flow, indices, value], self._attrs(), name="TensorArrayScatterV3")
            return self._with_flow(flow)

    def unstack(self, value, name=None):
        """A TensorArray of the rows of ``value``."""
        with ops.name_scope(name, "TensorArrayUnstack", [self._flow, value]):
            value = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
            if value.shape.rank is not None:
                if value.shape.rank == 0:
                    raise ValueError("Shape must be at least rank 1 but is rank 0 (TensorArray.unstack)")
                self._merge_element_shape(value.shape[1:])
            flow = make("ListFromTensor", [value], self._attrs(), name="TensorArrayScatterV3")
            ta = self._with_flow(flow)
            rows = value.shape[0] if value.shape.rank else None
            rows = getattr(rows, "value", rows)
            if rows is not None:
                if self._static_size is not None and rows > self._static_size:
                    raise ValueError(
                        f"Max scatter index must be < array size ({rows - 1} vs. {self._static_size})"
                    )
                ta._static_size = rows if self._static_size is None or self._dynamic_size else self._static_size
            return ta

    def split(self, value, lengths, name=None):
        """A TensorArray of the pieces of ``value`` of the given ``lengths`` along its first axis."""
        with ops.name_scope(name, "TensorArraySplit", [self._flow, value, lengths]):
            value = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
            lengths = ops.convert_to_tensor(lengths, dtype=dtypes.int64, name="lengths")
            if value.shape.rank is not None and value.shape.rank > 1 and self._infer_shape:
                self._merge_element_shape(TensorShape([None]).concatenate(value.shape[1:]))
            flow = make("ListSplit", [value, lengths], self._attrs(), name="TensorArraySplitV3")
            return self._with_flow(flow)

    def identity(self):
        """This TensorArray, through an identity (so control dependencies can order it)."""
        from ferroflow.ops import array_ops

        return self._with_flow(array_ops.identity(self._flow))

    def close(self, name=None):
        """An op that does nothing: a list's memory goes when nothing holds it."""
        from ferroflow.ops import control_flow_ops

        return control_flow_ops.no_op(name=name or "TensorArrayCloseV3")

    def grad(self, source, flow=None, name=None):
        raise NotImplementedError(
            "TensorArray.grad is not supported: gradients flow through TensorArray reads and writes "
            "with tf.gradients."
        )


def is_tensor_array(x):
    return isinstance(x, TensorArray)


def to_flow(x):
    """A loop or branch value: a TensorArray's flow, anything else as it is."""
    return x.flow if isinstance(x, TensorArray) else x


def from_flow(template, x):
    """``x`` as ``template`` was: a TensorArray rebuilt around a flow tensor."""
    return template._with_flow(x) if isinstance(template, TensorArray) else x


class TensorArraySpec(type_spec.TypeSpec):
    """A TensorArray's element shape, dtype, and whether it may grow and infers shapes."""

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(self, element_shape=None, dtype=dtypes.float32, dynamic_size=False, infer_shape=True):
        self._element_shape = as_shape(element_shape)
        self._dtype = type_spec.base_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    @property
    def value_type(self):
        return TensorArray

    def _serialize(self):
        return (self._element_shape, self._dtype, self._dynamic_size, self._infer_shape)

    @classmethod
    def from_value(cls, value):
        shape = getattr(value, "element_shape", None)
        return cls(shape if shape is not None else None, value.dtype,
                   bool(getattr(value, "_dynamic_size", False)), bool(getattr(value, "_infer_shape", True)))
