"""``tf.TensorArray``: a list of tensors for loops (``dynamic_rnn``, ``map_fn``, ``scan``).

A TensorArray is a value: its ``flow`` tensor carries the whole list, and
``write``, ``scatter``, ``unstack`` and ``split`` return a new TensorArray
(in Rust the list is updated in place when nothing else holds it). As in
TF1, use the returned object: ``ta = ta.write(i, x)``. Inside a
``tf.while_loop`` a TensorArray is a loop variable like any tensor.

Gradients flow through reads and writes: the gradient of a list is a list
whose unwritten elements are zeros.

As in TF1, reading an element clears it unless ``clear_after_read=False``
(the default is True, dynamic arrays included): a second read of it, by
``read``, ``stack``, ``gather`` or ``concat``, raises InvalidArgumentError.
All versions of one array (the flows its writes return) share that record,
as they share TF1's one resource.

Differences from TF1's resource-based TensorArray: ``handle`` is the flow
itself; writing an element after reading it is not refused; and
``grad(source)`` returns a new array per source whose versions are shared
only through their flows (see ``grad``). ``tf.gradients`` through
TensorArray ops does not use ``grad``.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, type_spec
from ferroflow.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from ferroflow.ops._op_util import make, make_op, shape_attr, type_attr


class _Identity:
    """What every version of one TensorArray shares (TF1's one resource behind many flows): its
    name, and its gradient arrays by source; for a gradient array, its versions by flow."""

    __slots__ = ("name", "grads", "versions")

    def __init__(self, name):
        self.name = name
        self.grads = {}
        self.versions = None


def _flow_key(flow):
    return (id(flow.graph), flow._tid)


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
        #: The number of elements when known while building (a dynamic array's may grow).
        self._static_size = None
        self._aggregate = False
        if handle is not None and flow is None:
            raise ValueError("flow must not be None if handle is not None.")
        if flow is not None:
            if size is not None:
                raise ValueError("Cannot provide both a flow and size at the same time")
            self._flow = flow
            self._identity = _Identity(flow.op.name)
            return
        if handle is None and size is None:
            raise ValueError("Argument `size` must be provided if handle is not provided.")
        with ops.name_scope(name, "TensorArray", [size]) as scope:
            size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
            from ferroflow.framework import tensor_util

            value = tensor_util.constant_value(size)
            self._static_size = None if value is None else int(value)
            # The array's name in messages: tensor_array_name, else its scope (TF1's resource name).
            self._identity = _Identity(tensor_array_name or scope.rstrip("/") or "TensorArray")
            # The op takes the scope's own name ("arr", not "arr/arr"), as TensorFlow names TensorArrayV3.
            self._flow = make(
                "ListReserve", [size], self._attrs(dynamic_size=self._dynamic_size, **self._clear_attr()),
                name=scope,
            )

    # -- what the object carries ----------------------------------------------------
    def _attrs(self, **extra):
        attrs = {
            "element_dtype": type_attr(self._dtype),
            "element_shape": shape_attr(self._element_shape),
            "infer_shape": self._infer_shape,
            "dynamic_size": self._dynamic_size,
        }
        if self._aggregate:
            attrs["multiple_writes_aggregate"] = True
        attrs.update(extra)
        return attrs

    def _clear_attr(self):
        """The attributes of an op making a new list for this array: its name (messages; a named list
        records reads, so writing an element already read fails, as in TF1) and whether it clears after
        reads."""
        if not self._clear_after_read:
            return {"tensor_array_name": self._identity.name}
        return {"clear_after_read": True, "tensor_array_name": self._identity.name}

    def _with_flow(self, flow, static_size=None, keep_size=True):
        """This array's next version, carried by ``flow`` (its size as known: this one's, unless
        ``keep_size`` is False, then ``static_size``)."""
        ta = TensorArray.__new__(TensorArray)
        ta._dtype = self._dtype
        ta._dynamic_size = self._dynamic_size
        ta._clear_after_read = self._clear_after_read
        ta._infer_shape = self._infer_shape
        ta._element_shape = self._element_shape
        ta._static_size = self._static_size if keep_size else static_size
        ta._aggregate = self._aggregate
        ta._identity = self._identity
        ta._flow = flow
        if self._identity.versions is not None:
            self._identity.versions[_flow_key(flow)] = ta
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
            return self._with_flow(flow, keep_size=not self._dynamic_size)

    def scatter(self, indices, value, name=None):
        """A TensorArray with row ``k`` of ``value`` at ``indices[k]``."""
        with ops.name_scope(name, "TensorArrayScatter", [self._flow, indices, value]):
            indices = ops.convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            value = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
            if value.shape.rank is not None:
                self._merge_element_shape(value.shape[1:])
            flow = make("ListScatter", [self._flow, indices, value], self._attrs(), name="TensorArrayScatterV3")
            return self._with_flow(flow, keep_size=not self._dynamic_size)

    def unstack(self, value, name=None):
        """A TensorArray with row ``k`` of ``value`` at index ``k`` (a scatter to ``0..rows``, as in
        TF1: more rows than a fixed-size array holds raise InvalidArgumentError when run; fewer
        leave the rest unwritten)."""
        from ferroflow.framework import constant_op
        from ferroflow.ops import array_ops

        with ops.name_scope(name, "TensorArrayUnstack", [self._flow, value]):
            value = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
            if value.shape.rank is not None:
                if value.shape.rank == 0:
                    raise ValueError("Shape must be at least rank 1 but is rank 0 (TensorArray.unstack)")
                self._merge_element_shape(value.shape[1:])
            rows = value.shape[0] if value.shape.rank else None
            rows = getattr(rows, "value", rows)
            if rows is not None:
                indices = constant_op.constant(list(range(rows)), dtype=dtypes.int32, name="range")
            else:
                indices = array_ops.range(0, array_ops.shape(value, out_type=dtypes.int32)[0], name="range")
            flow = make("ListScatter", [self._flow, indices, value], self._attrs(), name="TensorArrayScatterV3")
            size = self._static_size
            if self._dynamic_size:
                size = None if size is None or rows is None else max(size, rows)
            return self._with_flow(flow, static_size=size, keep_size=False)

    def split(self, value, lengths, name=None):
        """A TensorArray of the pieces of ``value`` of the given ``lengths`` along its first axis."""
        with ops.name_scope(name, "TensorArraySplit", [self._flow, value, lengths]):
            value = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
            lengths = ops.convert_to_tensor(lengths, dtype=dtypes.int64, name="lengths")
            if value.shape.rank is not None and value.shape.rank > 1 and self._infer_shape:
                self._merge_element_shape(TensorShape([None]).concatenate(value.shape[1:]))
            flow = make("ListSplit", [value, lengths], self._attrs(**self._clear_attr()), name="TensorArraySplitV3")
            return self._with_flow(flow, keep_size=False)

    def identity(self):
        """This TensorArray, through an identity (so control dependencies can order it)."""
        from ferroflow.ops import array_ops

        return self._with_flow(array_ops.identity(self._flow))

    def close(self, name=None):
        """An op that does nothing: a list's memory goes when nothing holds it."""
        from ferroflow.ops import control_flow_ops

        return control_flow_ops.no_op(name=name or "TensorArrayCloseV3")

    def grad(self, source, flow=None, name=None):
        """TF1's gradient array for ``source``: as many elements as this array holds when ``flow``
        is computed, its element shape, each element zeros until written; a second write to an
        element adds to it, and reads clear (TF1's gradient arrays do both).

        TF1 keeps one gradient array per source, shared by every call. Here arrays are values, so
        a later call reaches it only through the flow of one of its versions (``ta.grad(s,
        g.flow)`` returns ``g``, as TF1's gradient functions pass it); a later call with any
        other flow raises NotImplementedError rather than return a separate array."""
        flow = self._flow if flow is None else ops.convert_to_tensor(flow)
        existing = self._identity.grads.get(source)
        if existing is not None:
            ta = existing.versions.get(_flow_key(flow))
            if ta is not None:
                return ta
            raise NotImplementedError(
                f"TensorArray {self._identity.name}: a gradient array for source '{source}' was already "
                "made; pass the flow of (a version of) that array to reach it: a second, separate array "
                "would not share its elements as TensorFlow's does."
            )
        grad_name = f"{self._identity.name}@{source}"
        with ops.name_scope(name, "TensorArrayGrad", [self._flow, flow]):
            attrs = {
                "element_dtype": type_attr(self._dtype),
                "element_shape": shape_attr(self._element_shape),
                "clear_after_read": True,
                "tensor_array_name": grad_name,
            }
            if flow.graph._native.is_list(flow._tid):
                list_flow = make("ListZerosLike", [flow], attrs, name="TensorArrayGradV3")
            else:
                with ops.control_dependencies([flow]):
                    list_flow = make("ListZerosLike", [self._flow], attrs, name="TensorArrayGradV3")
        ta = TensorArray.__new__(TensorArray)
        ta._dtype = self._dtype
        ta._dynamic_size = False
        ta._clear_after_read = True
        ta._infer_shape = True
        ta._element_shape = self._element_shape
        ta._static_size = self._static_size
        ta._aggregate = True
        ta._identity = _Identity(grad_name)
        ta._identity.versions = {}
        ta._flow = list_flow
        ta._identity.versions[_flow_key(list_flow)] = ta
        self._identity.grads[source] = ta._identity
        return ta


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
