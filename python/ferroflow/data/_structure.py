"""Element structures of ``tf.data``: nested tuples/dicts of tensors, SparseTensors and RaggedTensors.

A dataset's element is described by a structure of specs (``TensorSpec``,
``SparseTensorSpec`` or ``RaggedTensorSpec`` leaves, see
``framework/type_spec.py`` and ``ops/ragged.py``, inside tuples, namedtuples
and dicts). In the graph an element is a flat list of component tensors: one
per dense leaf, three per sparse leaf (indices, values, dense_shape), and
``1 + ragged_rank`` per ragged leaf (flat values, then the row splits of each
ragged dimension, outermost first), in ``nest`` order (dicts by sorted key).
A ragged leaf of ragged rank 0 or below is one dense tensor (TensorFlow gives
such an element as a Tensor). A ragged leaf is rebuilt from its components
where the element is read (``get_next``, a traced function's arguments); the
dataset ops that only pass elements on carry the components unchanged.
Batching, unbatching and slicing combine or cut them in Rust, told where the
sparse and ragged leaves lie by the ``_sparse`` and ``_ragged`` attrs
(:func:`layout_attrs`); the specs change as TensorFlow's ``_batch`` /
``_unbatch`` change them (:func:`batched`, :func:`unbatched`).
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.sparse_tensor import SparseTensor, SparseTensorValue
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.framework.type_spec import SparseTensorSpec, TensorSpec
from ferroflow.ops.ragged import RaggedTensor, RaggedTensorSpec, RaggedTensorValue


class DatasetSpec:
    """A leaf that is itself a dataset (TensorFlow's ``tf.data.DatasetSpec``), of elements ``element_spec``.

    Its one component is the dataset (a ``variant``), as ``group_by_window``'s reduce function gets its
    window; a window of ``Dataset.window`` (``stacked``) is instead carried as its rows stacked along a new
    first dimension, one component per leaf of ``element_spec``, and read back as the dataset of those rows.
    """

    def __init__(self, element_spec, dataset_shape=(), stacked=False):
        self._element_spec = element_spec
        self._dataset_shape = TensorShape(dataset_shape)
        self._stacked = stacked

    element_spec = property(lambda self: self._element_spec)
    shape = property(lambda self: self._dataset_shape)
    dtype = property(lambda self: dtypes.variant)

    @property
    def value_type(self):
        from ferroflow.data.dataset_ops import Dataset

        return Dataset

    def _component_specs(self):
        if not self._stacked:
            return [(dtypes.variant, TensorShape([]))]
        return component_specs(batched(self._element_spec, None))

    def _from_components(self, comps):
        from ferroflow.data.dataset_ops import Dataset

        if not self._stacked:
            return Dataset(comps[0], self._element_spec)
        return Dataset.from_tensor_slices(from_components(batched(self._element_spec, None), comps))

    def __eq__(self, other):
        return (isinstance(other, DatasetSpec) and self._stacked == other._stacked
                and self._dataset_shape == other._dataset_shape
                and same_structure(self._element_spec, other._element_spec)
                and flatten(self._element_spec) == flatten(other._element_spec))

    def __hash__(self):
        return hash((DatasetSpec, self._dataset_shape))

    def __repr__(self):
        return f"DatasetSpec({self._element_spec!r}, TensorShape({self._dataset_shape.as_list()}))"


# -- nesting: tuples, namedtuples and dicts are structure; anything else a leaf --


def is_nested(x):
    return isinstance(x, (tuple, dict))


def _children(x):
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(s):
    if not is_nested(s):
        return [s]
    out = []
    for c in _children(s):
        out.extend(flatten(c))
    return out


def pack_as(structure, flat):
    """``structure`` with its leaves replaced by ``flat``, in order."""
    it = iter(flat)

    def build(s):
        if not is_nested(s):
            return next(it)
        kids = [build(c) for c in _children(s)]
        if isinstance(s, dict):
            by_key = dict(zip(sorted(s), kids))
            return type(s)((k, by_key[k]) for k in s)
        if hasattr(type(s), "_fields"):
            return type(s)(*kids)
        return tuple(kids)

    return build(structure)


def map_structure(fn, s):
    return pack_as(s, [fn(x) for x in flatten(s)])


def same_structure(a, b):
    if is_nested(a) != is_nested(b):
        return False
    if not is_nested(a):
        return True
    if isinstance(a, dict) != isinstance(b, dict):
        return False
    if isinstance(a, dict) and sorted(a) != sorted(b):
        return False
    ka, kb = _children(a), _children(b)
    return len(ka) == len(kb) and all(same_structure(x, y) for x, y in zip(ka, kb))


# -- values <-> components -----------------------------------------------------


def normalize(value, lists_are_structure=False):
    """``value`` with every leaf a Tensor, SparseTensor or RaggedTensor (lists become tensors and fetched
    values their graph counterparts, as TF's tf.data does)."""
    if lists_are_structure and isinstance(value, list):
        value = tuple(value)
    if is_nested(value):
        kids = [normalize(v, lists_are_structure) for v in _children(value)]
        if isinstance(value, dict):
            by_key = dict(zip(sorted(value), kids))
            return type(value)((k, by_key[k]) for k in value)
        if hasattr(type(value), "_fields"):
            return type(value)(*kids)
        return tuple(kids)
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    if isinstance(value, RaggedTensorValue):
        return RaggedTensor.from_nested_row_splits(
            ops.convert_to_tensor(value.flat_values), [ops.convert_to_tensor(s) for s in value.nested_row_splits])
    if isinstance(value, (SparseTensor, RaggedTensor)):
        return value
    return ops.convert_to_tensor(value)


def spec_of(leaf):
    if isinstance(leaf, SparseTensor):
        shape = leaf.shape if isinstance(leaf.shape, TensorShape) else TensorShape(None)
        return SparseTensorSpec(shape, leaf.dtype)
    if isinstance(leaf, RaggedTensor):
        return RaggedTensorSpec(leaf.shape, leaf.dtype, leaf.ragged_rank, leaf.row_splits_dtype)
    return TensorSpec(leaf.shape, leaf.dtype)


def with_shape(spec, shape):
    """``spec`` (a leaf's) with ``shape`` instead of its own."""
    if isinstance(spec, RaggedTensorSpec):
        return RaggedTensorSpec(shape, spec.dtype, spec.ragged_rank, spec.row_splits_dtype)
    return type(spec)(shape, spec.dtype)


def to_components(value):
    """(flat component tensors, structure of specs) of a normalized value."""
    comps = []
    for leaf in flatten(value):
        if isinstance(leaf, SparseTensor):
            comps.extend([leaf.indices, leaf.values, leaf.dense_shape])
        elif isinstance(leaf, RaggedTensor):
            comps.append(leaf.flat_values)
            comps.extend(leaf.nested_row_splits)
        else:
            comps.append(leaf)
    return comps, map_structure(spec_of, value)


def component_specs(structure):
    """(dtype, shape) of each flat component of ``structure``."""
    out = []
    for spec in flatten(structure):
        if isinstance(spec, DatasetSpec):
            out.extend(spec._component_specs())
        elif isinstance(spec, SparseTensorSpec):
            rank = spec.shape.rank
            out.append((dtypes.int64, TensorShape([None, rank])))
            out.append((spec.dtype, TensorShape([None])))
            out.append((dtypes.int64, TensorShape([rank])))
        elif isinstance(spec, RaggedTensorSpec):
            out.append((spec.dtype, _flat_values_shape(spec)))
            if spec.ragged_rank > 0:
                out.append((spec.row_splits_dtype, _outer_splits_shape(spec)))
                out.extend([(spec.row_splits_dtype, TensorShape([None]))] * (spec.ragged_rank - 1))
        else:
            out.append((spec.dtype, spec.shape))
    return out


def _flat_values_shape(spec):
    """A ragged spec's flat values: all its values in one dimension, then its uniform inner dimensions (the
    whole value for a ragged rank of 0 or below)."""
    if spec.ragged_rank <= 0:
        return spec.shape
    if spec.shape.rank is None:
        return TensorShape(None)
    return TensorShape([None]).concatenate(spec.shape[spec.ragged_rank + 1:])


def _outer_splits_shape(spec):
    """The outermost row splits: one more than the rows, when their number is known."""
    rows = spec.shape[0] if spec.shape.rank else None
    rows = getattr(rows, "value", rows)
    return TensorShape([None if rows is None else rows + 1])


def _num_components(spec):
    if isinstance(spec, DatasetSpec):
        return len(spec._component_specs())
    if isinstance(spec, SparseTensorSpec):
        return 3
    if isinstance(spec, RaggedTensorSpec):
        return 1 + max(spec.ragged_rank, 0)
    return 1


def layout_attrs(structure, cut):
    """The ``_sparse`` / ``_ragged`` attrs telling a Rust dataset op which of the components of elements of
    ``structure`` make up SparseTensors (where each starts) and RaggedTensors (start, ragged rank, row-splits
    dtype). ``cut``: the op cuts elements into rows (unbatch, slices), which a ragged leaf of ragged rank 0
    or below undergoes as the dense tensor it is; batching takes a ragged rank of 0 as ragged (rows of any
    length), and one below 0 as dense."""
    sparse, ragged, i = [], [], 0
    for spec in flatten(structure):
        if isinstance(spec, SparseTensorSpec):
            sparse.append(i)
        elif isinstance(spec, RaggedTensorSpec) and spec.ragged_rank >= (1 if cut else 0):
            ragged.extend([i, spec.ragged_rank, spec.row_splits_dtype.as_datatype_enum])
        i += _num_components(spec)
    attrs = {}
    if sparse:
        attrs["_sparse"] = sparse
    if ragged:
        attrs["_ragged"] = ragged
    return attrs


def batched(structure, batch_dim):
    """The structure of a batch of elements of ``structure`` (``batch_dim``: the static batch size or None):
    each leaf one dimension more in front, a ragged leaf one ragged dimension more (TensorFlow's ``_batch``)."""

    def spec(sp):
        if isinstance(sp, DatasetSpec):
            # TensorFlow builds such a batch, but its elements cannot be read back as datasets.
            raise TypeError("ferroflow cannot batch elements that are datasets (the windows of window()): "
                            "batch each window instead, ds.window(n).flat_map(lambda w: w.batch(n)).")
        shape = TensorShape([batch_dim]).concatenate(sp.shape)
        if isinstance(sp, RaggedTensorSpec):
            return RaggedTensorSpec(shape, sp.dtype, sp.ragged_rank + 1, sp.row_splits_dtype)
        return type(sp)(shape, sp.dtype)

    return map_structure(spec, structure)


def unbatched(structure):
    """The structure of the rows of elements of ``structure`` (TensorFlow's ``_unbatch``): each leaf without
    its first dimension, a ragged leaf one ragged dimension less (below 0 for rows of a dense leaf)."""

    def spec(sp):
        shape = sp.shape[1:] if sp.shape.rank else TensorShape(None)
        if isinstance(sp, RaggedTensorSpec):
            return RaggedTensorSpec(shape, sp.dtype, sp.ragged_rank - 1, sp.row_splits_dtype)
        return type(sp)(shape, sp.dtype)

    return map_structure(spec, structure)


def from_components(structure, comps):
    """The value of ``structure`` made of the flat component tensors ``comps``."""
    comps = list(comps)
    leaves = []
    i = 0
    for spec in flatten(structure):
        if isinstance(spec, DatasetSpec):
            k = _num_components(spec)
            leaves.append(spec._from_components(comps[i:i + k]))
            i += k
        elif isinstance(spec, SparseTensorSpec):
            leaves.append(SparseTensor(comps[i], comps[i + 1], comps[i + 2]))
            i += 3
        elif isinstance(spec, RaggedTensorSpec):
            flat, k = comps[i], max(spec.ragged_rank, 0)
            splits = comps[i + 1:i + 1 + k]
            static = [(flat, _flat_values_shape(spec))]
            if k:
                static.append((splits[0], _outer_splits_shape(spec)))
            for t, shape in static:
                try:
                    t.set_shape(shape)
                except (ValueError, AttributeError):
                    pass
            leaves.append(RaggedTensor.from_nested_row_splits(flat, splits, validate=False))
            i += 1 + k
        else:
            t = comps[i]
            if spec.shape.rank is not None:
                try:
                    t.set_shape(spec.shape)
                except (ValueError, AttributeError):
                    pass
            leaves.append(t)
            i += 1
    return pack_as(structure, leaves)


def type_attrs(structure, types_name="output_types", shapes_name="output_shapes"):
    specs = component_specs(structure)
    return {
        types_name: ("list_type", [d.as_datatype_enum for d, _ in specs]),
        shapes_name: ("list_shape", [s._as_native() for _, s in specs]),
    }


def types_of(structure):
    return map_structure(lambda s: s.dtype, structure)


def shapes_of(structure):
    return map_structure(lambda s: s.shape, structure)


def classes_of(structure):
    """TF1's ``output_classes``: a leaf's value type, or for a ragged leaf its spec (as TensorFlow gives)."""
    return map_structure(lambda s: s if isinstance(s, (RaggedTensorSpec, DatasetSpec)) else s.value_type, structure)


def structure_from(types, shapes=None, classes=None):
    """A structure of specs from TF1's output_types / output_shapes / output_classes."""
    if shapes is None:
        shapes = map_structure(lambda _: TensorShape(None), types)
    if classes is None:
        classes = map_structure(lambda _: ops.Tensor, types)
    flat_t, flat_s, flat_c = flatten(types), flatten(shapes), flatten(classes)
    if not (len(flat_t) == len(flat_s) == len(flat_c)):
        raise ValueError("output_types, output_shapes and output_classes must have the same structure")
    specs = [
        c if isinstance(c, DatasetSpec)
        else with_shape(c, s) if isinstance(c, RaggedTensorSpec)
        else SparseTensorSpec(s, t) if c is SparseTensor else TensorSpec(s, t)
        for t, s, c in zip(flat_t, flat_s, flat_c)
    ]
    return pack_as(types, specs)


class HasElements:
    """The element-structure properties of a dataset or an iterator over one (``self._structure``)."""

    _structure = None

    @property
    def output_types(self):
        return types_of(self._structure)

    @property
    def output_shapes(self):
        return shapes_of(self._structure)

    @property
    def output_classes(self):
        return classes_of(self._structure)

    @property
    def element_spec(self):
        return self._structure
