"""tf.nest against TensorFlow 2.21's behaviour (expected values observed with tf.nest there)."""

import collections

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf1

nest = tf.nest
Point = collections.namedtuple("Point", "a b")
PointTwin = collections.namedtuple("Point", "a b")  # same name and fields: TF treats it as the same type


def test_public_names_match_tf():
    assert tf1.nest is nest
    assert sorted(n for n in dir(nest) if not n.startswith("_")) == [
        "assert_same_structure",
        "flatten",
        "is_nested",
        "map_structure",
        "pack_sequence_as",
    ]


@pytest.mark.parametrize(
    "structure, flat",
    [
        (None, [None]),
        ({"b": 1, "a": [2, 3]}, [2, 3, 1]),
        (collections.OrderedDict([("b", 1), ("a", 2)]), [2, 1]),
        ({1, 2}, [{1, 2}]),
        ("abc", ["abc"]),
        ({"a": 1}.keys(), ["a"]),
        ([[], {}, ()], []),
        ({"a": None}, [None]),
        ([1, (2, {"z": 3, "y": [4]})], [1, 2, 4, 3]),
        (Point(1, [2, 3]), [1, 2, 3]),
    ],
)
def test_flatten(structure, flat):
    assert nest.flatten(structure) == flat


def test_flatten_keeps_arrays_and_tensors_whole():
    arr = np.zeros(3)
    assert nest.flatten(arr)[0] is arr
    t = tf.constant([1.0, 2.0])
    assert nest.flatten([t, (t,)]) == [t, t]


def test_flatten_refuses_unsortable_keys():
    with pytest.raises(TypeError):
        nest.flatten({"a": 1, 2: 3})


def test_is_nested():
    assert nest.is_nested([1]) and nest.is_nested({}) and nest.is_nested(Point(1, 2))
    assert nest.is_nested({"a": 1}.values())
    assert not nest.is_nested("a") and not nest.is_nested(np.zeros(2)) and not nest.is_nested({1, 2})
    assert not nest.is_nested(None)


def test_pack_sequence_as_rebuilds_each_container_type():
    assert nest.pack_sequence_as([1, [2, 3]], (4, 5, 6)) == [4, [5, 6]]
    od = nest.pack_sequence_as(collections.OrderedDict([("b", 1), ("a", 2)]), [10, 20])
    assert isinstance(od, collections.OrderedDict) and list(od.items()) == [("b", 20), ("a", 10)]
    dd = collections.defaultdict(list)
    dd["b"], dd["a"] = 1, 2
    packed = nest.pack_sequence_as(dd, [7, 8])
    assert isinstance(packed, collections.defaultdict) and packed.default_factory is list
    assert dict(packed) == {"b": 8, "a": 7} and list(packed) == ["b", "a"]
    assert nest.pack_sequence_as([[], {}, (), 1], [5]) == [[], {}, (), 5]
    assert nest.pack_sequence_as(Point(0, 0), [1, 2]) == Point(1, 2)
    assert nest.pack_sequence_as(7, [9]) == 9


def test_pack_sequence_as_errors():
    with pytest.raises(ValueError, match="Structure had 2 atoms, but flat_sequence had 1 items"):
        nest.pack_sequence_as([1, 2], [1])
    with pytest.raises(ValueError, match="The target structure is of type"):
        nest.pack_sequence_as(1, [1, 2])
    with pytest.raises(TypeError, match="Attempted to pack value"):
        nest.pack_sequence_as(1, 5)


def test_assert_same_structure():
    nest.assert_same_structure({"a": 1}, collections.OrderedDict(a=2))  # mappings of any kind match
    nest.assert_same_structure(Point(1, 2), PointTwin(3, 4))
    nest.assert_same_structure([1], (1,), check_types=False)
    with pytest.raises(TypeError, match="don't have the same sequence type"):
        nest.assert_same_structure([1], (1,))
    with pytest.raises(ValueError, match="don't have the same number of elements"):
        nest.assert_same_structure([1, 2], [1])
    with pytest.raises(ValueError, match="is a sequence, while substructure"):
        nest.assert_same_structure([1, [2]], [1, 2])
    with pytest.raises(ValueError, match="is a sequence, while substructure"):
        nest.assert_same_structure(1, [1])
    with pytest.raises(ValueError, match="don't have the same set of keys"):
        nest.assert_same_structure({"a": 1}, {"b": 1})


def test_map_structure():
    assert nest.map_structure(lambda a, b: a + b, [1, (2,)], [3, (4,)]) == [4, (6,)]
    assert nest.map_structure(lambda a, b: a + b, [1, (2,)], [3, [4]], check_types=False) == [4, (6,)]
    assert nest.map_structure(lambda a, b: (a, b), {"a": 1}, collections.OrderedDict(a=2)) == {"a": (1, 2)}
    assert nest.map_structure(lambda x: x * 2, Point(1, [2, 3])) == Point(2, [4, 6])
    assert nest.map_structure(lambda x: x, None) is None
    with pytest.raises(TypeError):
        nest.map_structure(lambda a, b: a, [1, (2,)], [3, [4]])
    with pytest.raises(ValueError, match="Only valid keyword arguments are `check_types` and `expand_composites`"):
        nest.map_structure(lambda a: a, [1], foo=1)
    with pytest.raises(ValueError, match="Must provide at least one structure"):
        nest.map_structure(lambda a: a)


def test_attrs_objects_are_structures():
    # attrs marks a class with __attrs_attrs__ (fields with .name, in constructor order); nest
    # reads only that, so a hand-made class of the same shape stands in for the package.
    Field = collections.namedtuple("Field", "name")

    class Pair:
        __attrs_attrs__ = (Field("x"), Field("y"))

        def __init__(self, x, y):
            self.x, self.y = x, y

        def __eq__(self, other):
            return type(other) is Pair and (self.x, self.y) == (other.x, other.y)

    assert nest.flatten(Pair([1, 2], 3)) == [1, 2, 3]
    assert nest.pack_sequence_as(Pair(1, 2), [5, 6]) == Pair(5, 6)
    assert nest.is_nested(Pair(1, 2))


def test_expand_composites_splits_sparse_tensors():
    st = tf.SparseTensor([[0, 1]], [3.0], [2, 2])
    assert nest.flatten(st) == [st]
    parts = nest.flatten({"s": st}, expand_composites=True)
    assert parts == [st.indices, st.values, st.dense_shape]
    doubled = nest.map_structure(lambda t: t, st, expand_composites=True)
    assert isinstance(doubled, tf.SparseTensor)
    with tf.Session() as sess:
        dense = sess.run(tf.sparse.to_dense(doubled))
    np.testing.assert_array_equal(dense, [[0.0, 3.0], [0.0, 0.0]])
