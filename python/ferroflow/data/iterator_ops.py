"""``tf.data.Iterator``: the TF1 iterators over datasets.

An iterator is a resource of the session (``IteratorV2``); ``MakeIterator``
(its ``initializer``) starts it at a dataset's beginning and
``IteratorGetNext`` pulls the next element, raising ``OutOfRangeError`` at
the end. ``string_handle`` names the iterator so that
``Iterator.from_string_handle`` can switch between iterators by feeding a
handle (feedable iterators).
"""

from __future__ import annotations

from ferroflow.data import _structure as structure
from ferroflow.data import dataset_ops
from ferroflow.framework import constant_op, dtypes, ops, tensor_util
from ferroflow.framework.func_graph import FuncGraph, to_function
from ferroflow.ops._op_util import make, make_op

__all__ = ["Iterator", "make_initializable_iterator", "make_one_shot_iterator"]


class Iterator(structure.HasElements):
    """Elements of a dataset, one ``get_next()`` run at a time."""

    def __init__(self, iterator_resource, initializer, output_types, output_shapes, output_classes):
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._structure = structure.structure_from(output_types, output_shapes, output_classes)
        self._string_handle = None

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An iterator for elements of this structure, not bound to a dataset (``make_initializer`` binds it)."""
        s = structure.structure_from(output_types, output_shapes, output_classes)
        attrs = structure.type_attrs(s)
        attrs.update(shared_name=shared_name or "", container="")
        handle = make("IteratorV2", [], attrs, name="Iterator")
        return Iterator(handle, None, structure.types_of(s), structure.shapes_of(s), structure.classes_of(s))

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """The iterator whose ``string_handle()`` is fed to ``string_handle`` (a string placeholder)."""
        s = structure.structure_from(output_types, output_shapes, output_classes)
        string_handle = ops.convert_to_tensor(string_handle, dtype=dtypes.string)
        handle = make("IteratorFromStringHandleV2", [string_handle], structure.type_attrs(s))
        return Iterator(handle, None, structure.types_of(s), structure.shapes_of(s), structure.classes_of(s))

    @staticmethod
    def _one_shot(dataset):
        """TensorFlow's ``OneShotIterator``, whose ``dataset_factory`` function builds the pipeline again
        (so TensorFlow runs the exported graph); a pipeline using a tensor that is not a constant (a
        placeholder, a variable) gets ferroflow's ``OneShotIteratorFromDataset`` over the dataset instead."""
        attrs = dataset._attrs()
        attrs.update(shared_name="", container="")
        factory = _dataset_factory(dataset)
        if factory is not None:
            attrs["dataset_factory"] = factory
            handle = make("OneShotIterator", [], attrs, name="OneShotIterator")
        else:
            handle = make("OneShotIteratorFromDataset", [dataset._variant_tensor], attrs, name="OneShotIterator")
        return Iterator(handle, None, dataset.output_types, dataset.output_shapes, dataset.output_classes)

    @property
    def initializer(self):
        """The op that starts the iterator at its dataset's beginning."""
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """An op that starts this iterator at ``dataset``'s beginning (its structure must match)."""
        if not structure.same_structure(self._structure, dataset._structure):
            raise TypeError(
                f"Expected output types {self.output_types} but got dataset with output types {dataset.output_types}."
            )
        for a, b in zip(structure.flatten(self._structure), structure.flatten(dataset._structure)):
            if a.dtype != b.dtype:
                raise TypeError(
                    f"Expected output types {self.output_types} but got dataset with output types "
                    f"{dataset.output_types}."
                )
            if not a.shape.is_compatible_with(b.shape):
                raise TypeError(
                    f"Expected output shapes compatible with {self.output_shapes} but got dataset with output "
                    f"shapes {dataset.output_shapes}."
                )
        with ops.name_scope(name, "make_initializer"):
            return make_op("MakeIterator", [dataset._variant_tensor, self._iterator_resource], {})

    def get_next(self, name=None):
        """The next element (a structure of tensors); running it past the end raises OutOfRangeError."""
        op = make_op("IteratorGetNext", [self._iterator_resource], structure.type_attrs(self._structure),
                     name=name or "IteratorGetNext")
        return structure.from_components(self._structure, op._outputs)

    def string_handle(self, name=None):
        """A scalar string naming this iterator, to feed to ``from_string_handle``."""
        if name is None and self._string_handle is not None:
            return self._string_handle
        h = make("IteratorToStringHandle", [self._iterator_resource], {}, name=name)
        if name is None:
            self._string_handle = h
        return h



class _FactoryGraph(FuncGraph):
    """The body of a ``dataset_factory``: it takes no arguments, so outer constants are copied in by value."""

    def capture(self, tensor):
        key = (id(tensor.graph), tensor._tid)
        inner = self._captured.get(key)
        if inner is not None:
            return inner
        value = tensor_util.constant_value(tensor) if tensor.op.type == "Const" else None
        if value is None:
            raise dataset_ops._NotReplayable(f"the pipeline uses {tensor.name}, which is not a constant")
        with self.as_default():
            inner = constant_op.constant(value, dtype=tensor.dtype)
        self._captured[key] = inner
        return inner


def _dataset_factory(dataset):
    """The name of a library function returning ``dataset`` built afresh, or None if it cannot be."""
    outer = ops.get_default_graph()
    if dataset._variant_tensor.graph is not outer:
        return None
    g = _FactoryGraph("make_dataset", outer)
    try:
        with g.as_default():
            variant = dataset._rebuilt()._variant_tensor
    except dataset_ops._NotReplayable:
        return None
    g.inputs = []
    return to_function(g, [variant], "make_dataset")


def make_one_shot_iterator(dataset):
    """``tf.compat.v1.data.make_one_shot_iterator``."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    """``tf.compat.v1.data.make_initializable_iterator``."""
    return dataset.make_initializable_iterator(shared_name)
