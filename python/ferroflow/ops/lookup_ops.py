"""Lookup tables: ``tf.lookup`` and TF1's table API.

Each table is a resource created by its op (``HashTableV2``, ``MutableHashTableV2``,
``MutableHashTableOfTensorsV2``, ``MutableDenseHashTableV2``); lookups, inserts, exports and the
initializers are ops on its handle that run in Rust (``ferroflow-data``'s ``lookup`` module). A static
table is filled by its initializer, which joins the ``TABLE_INITIALIZERS`` collection that
``tables_initializer()`` (and ``Scaffold``'s default local init op) runs; a ``TextFileInitializer`` whose
file name is a constant also records it in ``ASSET_FILEPATHS``, as TensorFlow does, so a SavedModel export
ships the vocabulary.

Also the helpers TF1's ``tf.contrib.lookup`` offered and ``feature_column`` uses:
``index_table_from_tensor``, ``index_table_from_file``, ``index_to_string_table_from_tensor`` and
``index_to_string_table_from_file``. Out-of-vocabulary hash buckets (``num_oov_buckets > 0``,
``StaticVocabularyTable``, ``IdTableWithHashBuckets``) give an unknown key the id
``vocab_size + hash(key) % num_oov_buckets`` with TensorFlow's hash (FarmHash ``Fingerprint64`` by default,
``StringToHashBucketFast``; integer keys are hashed as their decimal strings), so ids match TensorFlow's.
"""

from __future__ import annotations

import uuid

from ferroflow.framework import dtypes as _dtypes
from ferroflow.framework import ops, saveable_object
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops._op_util import make, make_op, type_attr

__all__ = [
    "LookupInterface",
    "InitializableLookupTableBase",
    "StaticHashTable",
    "StaticHashTableV1",
    "HashTable",
    "TableInitializerBase",
    "KeyValueTensorInitializer",
    "TextFileIndex",
    "TextFileInitializer",
    "TextFileStringTableInitializer",
    "TextFileIdTableInitializer",
    "HasherSpec",
    "FastHashSpec",
    "StrongHashSpec",
    "StaticVocabularyTable",
    "StaticVocabularyTableV1",
    "IdTableWithHashBuckets",
    "MutableHashTable",
    "DenseHashTable",
    "MutableDenseHashTable",
    "index_table_from_tensor",
    "index_table_from_file",
    "index_to_string_table_from_tensor",
    "index_to_string_table_from_file",
    "tables_initializer",
    "initialize_all_tables",
]



def check_table_dtypes(table, key_dtype, value_dtype):
    """Raises TypeError unless ``table`` has these key and value dtypes."""
    if key_dtype.base_dtype != table.key_dtype:
        raise TypeError(f"Invalid key dtype for table, expected {table.key_dtype} but got {key_dtype}.")
    if value_dtype.base_dtype != table.value_dtype:
        raise TypeError(f"Invalid value dtype for table, expected {table.value_dtype} but got {value_dtype}.")


def _table_attrs(key_dtype, value_dtype, shared_name=None, use_node_name_sharing=False):
    return {
        "container": ops.get_default_graph()._container,
        "shared_name": shared_name or "",
        "use_node_name_sharing": bool(use_node_name_sharing),
        "key_dtype": type_attr(key_dtype),
        "value_dtype": type_attr(value_dtype),
    }


class LookupInterface:
    """What every table offers: its dtypes, name, resource handle, ``size`` and ``lookup``."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dtypes.as_dtype(key_dtype)
        self._value_dtype = _dtypes.as_dtype(value_dtype)
        self._resource_handle = None

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    @property
    def name(self):
        return "LookupInterface"

    @property
    def resource_handle(self):
        """The table's resource handle (the output of its table op)."""
        return self._resource_handle

    def size(self, name=None):
        """An int64 scalar: the number of entries."""
        with ops.name_scope(name, f"{self.name}_Size", [self.resource_handle]):
            return make("LookupTableSizeV2", [self.resource_handle], {})

    def _find(self, keys, default_value, name):
        return make("LookupTableFindV2", [self.resource_handle, keys, default_value],
                    {"Tin": type_attr(self._key_dtype), "Tout": type_attr(self._value_dtype)}, name=name)

    def _lookup_keys(self, keys, default_value, name, scope_name):
        """Looks up a Tensor or the values of a SparseTensor."""
        sparse = isinstance(keys, SparseTensor)
        key_values = keys.values if sparse else keys
        with ops.name_scope(name, scope_name, [self.resource_handle, key_values]):
            key_values = ops.convert_to_tensor(key_values, dtype=self._key_dtype, name="keys")
            if key_values.dtype.base_dtype != self._key_dtype:
                raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype}, got "
                                f"{key_values.dtype}.")
            found = self._find(key_values, default_value, None)
        if sparse:
            return SparseTensor(keys.indices, found, keys.dense_shape)
        return found

    def lookup(self, keys, name=None):
        raise NotImplementedError


class InitializableLookupTableBase(LookupInterface):
    """A table filled once by an initializer (``initializer.initialize(table)``)."""

    def __init__(self, default_value, initializer):
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._default_value = ops.convert_to_tensor(default_value, dtype=self._value_dtype)
        self._default_value.get_shape().merge_with(TensorShape([]))
        self._initializer = initializer
        self._resource_handle = self._create_resource()
        self._init_op = self._initialize()

    def _initialize(self):
        return self._initializer.initialize(self)

    @property
    def initializer(self):
        """The op that fills the table."""
        return self._init_op

    @property
    def default_value(self):
        """The value of keys not in the table."""
        return self._default_value

    def lookup(self, keys, name=None):
        """The value of each key (a Tensor, or a SparseTensor's values), the default where absent."""
        return self._lookup_keys(keys, self._default_value, name, f"{self.name}_Lookup")


class StaticHashTable(InitializableLookupTableBase):
    """A read-only hash table, filled by ``initializer`` (``KeyValueTensorInitializer``,
    ``TextFileInitializer``); ``default_value`` is the value of absent keys."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        self._initializer = initializer
        self._default_value = default_value
        self._is_anonymous = experimental_is_anonymous
        self._shared_name = None if experimental_is_anonymous else initializer._shared_name
        if not self._shared_name and not experimental_is_anonymous:
            # As TensorFlow: a shared name, so every kernel on the table finds the same resource.
            self._shared_name = f"hash_table_{uuid.uuid4()}"
        self._name = name or "hash_table"
        self._table_name = None
        super().__init__(default_value, initializer)
        self._value_shape = self._default_value.get_shape()

    def _create_resource(self):
        handle = make("HashTableV2", [], _table_attrs(self._initializer.key_dtype, self._initializer.value_dtype,
                                                      self._shared_name), name=self._name)
        self._table_name = handle.op.name.split("/")[-1]
        return handle

    @property
    def name(self):
        return self._table_name

    def export(self, name=None):
        """Two tensors: every key and its value (in no particular order)."""
        with ops.name_scope(name, f"{self.name}_Export", [self.resource_handle]):
            op = make_op("LookupTableExportV2", [self.resource_handle],
                         {"Tkeys": type_attr(self._key_dtype), "Tvalues": type_attr(self._value_dtype)})
        return op.outputs[0], op.outputs[1]


class StaticHashTableV1(StaticHashTable):
    """``tf.compat.v1.lookup.StaticHashTable``: a StaticHashTable whose ``initializer`` is run by
    ``tf.tables_initializer()``."""


#: TF1's ``tf.contrib.lookup.HashTable``.
HashTable = StaticHashTableV1


class TableInitializerBase:
    """Base of the table initializers: the key and value dtypes, and ``initialize(table)``."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dtypes.as_dtype(key_dtype)
        self._value_dtype = _dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    def initialize(self, table):
        raise NotImplementedError

    @property
    def _shared_name(self):
        """A name for tables this initializer fills (None: the table makes one)."""
        return None


class KeyValueTensorInitializer(TableInitializerBase):
    """Fills a table from a vector of keys and a vector of values."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        with ops.name_scope(name, "key_value_init", [keys, values]) as scope:
            self._keys = ops.convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = ops.convert_to_tensor(values, dtype=value_dtype, name="values")
            self._name = scope
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        """The op filling ``table`` (also added to TABLE_INITIALIZERS)."""
        check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        with ops.name_scope(self._name, values=(table.resource_handle, self._keys, self._values)):
            init_op = make_op("InitializeTableV2", [table.resource_handle, self._keys, self._values],
                              {"Tkey": type_attr(self._keys.dtype), "Tval": type_attr(self._values.dtype)})
        ops.add_to_collection(ops.GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


class TextFileIndex:
    """Special column indices of ``TextFileInitializer``: the whole line, or the line number."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer(TableInitializerBase):
    """Fills a table from a text file, one entry per line.

    ``key_index`` / ``value_index`` pick a column of the line split by ``delimiter``, or
    ``TextFileIndex.WHOLE_LINE`` (-2, a string or integer) or ``TextFileIndex.LINE_NUMBER`` (-1, int64).
    ``vocab_size`` reads only that many lines (and fails on a shorter file); ``value_index_offset`` is
    added to line numbers (and int32 values). The file is read when the initializer runs: a missing one
    is a ``NotFoundError`` naming it.
    """

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None,
                 delimiter="\t", name=None, value_index_offset=0):
        if not isinstance(filename, ops.Tensor) and not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        self._filename_arg = filename
        key_dtype = _dtypes.as_dtype(key_dtype)
        value_dtype = _dtypes.as_dtype(value_dtype)
        if key_index < -2:
            raise ValueError(f"`key_index` should be >= -2, received: {key_index}.")
        if key_index == TextFileIndex.LINE_NUMBER and key_dtype != _dtypes.int64:
            raise ValueError("`key_dtype` must be int64 if `key_index` is "
                             f"{TextFileIndex.LINE_NUMBER}, received: {key_dtype}")
        if (key_index == TextFileIndex.WHOLE_LINE and not key_dtype.is_integer
                and key_dtype != _dtypes.string):
            raise ValueError("`key_dtype` should be either integer or string for `key_index` "
                             f"{TextFileIndex.WHOLE_LINE}, received: {key_dtype}")
        if value_index < -2:
            raise ValueError(f"`value_index` should be >= -2, received: {value_index}")
        if value_index == TextFileIndex.LINE_NUMBER and value_dtype != _dtypes.int64:
            raise ValueError("`value_dtype` must be int64 for `value_index` "
                             f"{TextFileIndex.LINE_NUMBER}, received: {value_dtype}")
        if value_index == TextFileIndex.WHOLE_LINE and value_dtype != _dtypes.string:
            raise ValueError("`value_dtype` must be string for `value_index` "
                             f"{TextFileIndex.WHOLE_LINE}, received: {value_dtype}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        self._filename = filename
        self._offset = value_index_offset
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        """The op filling ``table`` (also added to TABLE_INITIALIZERS; a constant file name also goes to
        ASSET_FILEPATHS)."""
        check_table_dtypes(table, self.key_dtype, self.value_dtype)
        with ops.name_scope(self._name, "text_file_init", (table.resource_handle,)):
            filename = ops.convert_to_tensor(self._filename, _dtypes.string, name="asset_filepath")
            init_op = make_op(
                "InitializeTableFromTextFileV2", [table.resource_handle, filename],
                {"key_index": int(self._key_index), "value_index": int(self._value_index),
                 "vocab_size": -1 if self._vocab_size is None else int(self._vocab_size),
                 "delimiter": self._delimiter, "offset": int(self._offset)})
        ops.add_to_collection(ops.GraphKeys.TABLE_INITIALIZERS, init_op)
        if filename.op.type == "Const":
            ops.add_to_collection(ops.GraphKeys.ASSET_FILEPATHS, filename)
        return init_op

    @property
    def _shared_name(self):
        if self._vocab_size:
            if self._offset:
                return (f"hash_table_{self._filename_arg}_{self._vocab_size}_{self._key_index}_"
                        f"{self._value_index}_{self._offset}")
            return f"hash_table_{self._filename_arg}_{self._vocab_size}_{self._key_index}_{self._value_index}"
        if self._offset:
            return f"hash_table_{self._filename_arg}_{self._key_index}_{self._value_index}_{self._offset}"
        return f"hash_table_{self._filename_arg}_{self._key_index}_{self._value_index}"


class TextFileStringTableInitializer(TextFileInitializer):
    """A TextFileInitializer for int64 keys (default: line numbers) and string values (default: lines)."""

    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None, delimiter="\t",
                 name="text_file_string_table_init"):
        super().__init__(filename, _dtypes.int64, key_column_index, _dtypes.string, value_column_index,
                         vocab_size=vocab_size, delimiter=delimiter, name=name)


class TextFileIdTableInitializer(TextFileInitializer):
    """A TextFileInitializer for string (or integer) keys (default: lines) and int64 ids (default: line
    numbers)."""

    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None, delimiter="\t",
                 name="text_file_id_table_init", key_dtype=_dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, _dtypes.int64, value_column_index,
                         vocab_size=vocab_size, delimiter=delimiter, name=name)


class HasherSpec(tuple):
    """How out-of-vocabulary keys are hashed into buckets: ``(hasher, key)``."""

    __slots__ = ()

    def __new__(cls, hasher, key):
        return tuple.__new__(cls, (hasher, key))

    @property
    def hasher(self):
        return self[0]

    @property
    def key(self):
        return self[1]


#: TensorFlow's default hasher (FarmHash fingerprint).
FastHashSpec = HasherSpec("fasthash", None)


class StrongHashSpec(HasherSpec):
    """A keyed SipHash hasher spec."""

    __slots__ = ()

    def __new__(cls, key):
        if len(key) != 2:
            raise ValueError(f"`key` must have size 2, received {len(key)}")
        if not isinstance(key[0], int) or not isinstance(key[1], int):
            raise TypeError(f"Invalid key {key}. Must be unsigned integer values.")
        return super().__new__(cls, "stronghash", key)


def _as_string(tensor):
    if tensor.dtype.base_dtype == _dtypes.string:
        return tensor
    from ferroflow.ops import string_ops

    return string_ops.as_string(tensor)


def _hash_bucket_fn(hasher_spec):
    from ferroflow.ops import string_ops

    if not isinstance(hasher_spec, HasherSpec):
        raise TypeError(f"hasher_spec must be of type HasherSpec, got {type(hasher_spec)}.")
    if hasher_spec.hasher == "fasthash":
        return string_ops.string_to_hash_bucket_fast
    if hasher_spec.hasher == "legacy":
        return string_ops.string_to_hash_bucket
    if hasher_spec.hasher == "stronghash":
        return lambda x, num_buckets, name=None: string_ops.string_to_hash_bucket_strong(
            x, num_buckets, key=hasher_spec.key, name=name)
    raise ValueError(f"Found unknown hasher {hasher_spec.hasher}")


def _oov_lookup(table, keys, num_oov_buckets, hash_fn, name):
    """TensorFlow's lookup with hash buckets: ``table``'s id for known keys, ``table.size() + bucket`` for
    the others (just the bucket without a table)."""
    from ferroflow.ops import array_ops, math_ops

    sparse = isinstance(keys, SparseTensor)
    values = keys.values if sparse else keys
    if table is not None and table.key_dtype.base_dtype == _dtypes.int64:
        values = math_ops.cast(values, _dtypes.int64)
    with ops.name_scope(None, "hash_bucket"):
        buckets = hash_fn(_as_string(values), num_buckets=num_oov_buckets, name="hash_bucket")
    if table is not None:
        ids = table.lookup(values)
        buckets = math_ops.add(buckets, table.size())
        is_id_non_default = math_ops.not_equal(ids, table.default_value)
        ids = array_ops.where_v2(is_id_non_default, ids, buckets)
    else:
        ids = buckets
    if sparse:
        return SparseTensor(keys.indices, ids, keys.dense_shape)
    return ids


def _check_oov_table(table_key_dtype, key_dtype, value_dtype):
    if table_key_dtype not in (_dtypes.int64, _dtypes.string):
        raise TypeError(f"Invalid `key_dtype`, expected one of (int64, string), but got {table_key_dtype}.")
    if table_key_dtype.is_integer != key_dtype.is_integer:
        raise TypeError(f"Invalid `key dtype`, expected {'integer' if key_dtype.is_integer else 'non-integer'} but "
                        f"got {table_key_dtype}.")
    if value_dtype != _dtypes.int64:
        raise TypeError(f"Invalid `value_dtype`: expected int64 but got {value_dtype}.")


class StaticVocabularyTable(LookupInterface):
    """A vocabulary table hashing unknown keys into ``num_oov_buckets`` buckets: a key of the vocabulary
    (``initializer``, int64 values) gets its id, any other key ``vocab_size + Fingerprint64(key) %
    num_oov_buckets``, as TensorFlow. Without an initializer every key is hashed."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if initializer is not None:
            if lookup_key_dtype is None:
                lookup_key_dtype = initializer.key_dtype
            lookup_key_dtype = _dtypes.as_dtype(lookup_key_dtype)
            _check_oov_table(initializer.key_dtype, lookup_key_dtype, initializer.value_dtype)
            self._table = self._table_class()(initializer, default_value=-1,
                                              experimental_is_anonymous=experimental_is_anonymous)
            name = name or self._table.name
        else:
            lookup_key_dtype = _dtypes.string
            self._table = None
            name = name or "hash_bucket"
        if (not lookup_key_dtype.is_integer) and lookup_key_dtype != _dtypes.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got {lookup_key_dtype}")
        self._num_oov_buckets = num_oov_buckets
        self._name = name
        super().__init__(lookup_key_dtype, _dtypes.int64)

    @staticmethod
    def _table_class():
        return StaticHashTable

    @property
    def name(self):
        return self._name

    @property
    def resource_handle(self):
        return self._table.resource_handle if self._table is not None else None

    @property
    def initializer(self):
        return self._table.initializer if self._table is not None else None

    def size(self, name=None):
        """The vocabulary size plus ``num_oov_buckets``."""
        with ops.name_scope(name, f"{self.name}_Size"):
            if self._table is None:
                return ops.convert_to_tensor(self._num_oov_buckets, dtype=_dtypes.int64)
            return self._table.size() + self._num_oov_buckets

    def lookup(self, keys, name=None):
        """The id of each key (a Tensor or a SparseTensor's values)."""
        if getattr(keys, "dtype", self._key_dtype).base_dtype != self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype}, got {keys.dtype}.")
        with ops.name_scope(name, f"{self.name}_Lookup"):
            return _oov_lookup(self._table, keys, self._num_oov_buckets, _hash_bucket_fn(FastHashSpec), None)


class StaticVocabularyTableV1(StaticVocabularyTable):
    """``tf.compat.v1.lookup.StaticVocabularyTable`` (its table's initializer joins TABLE_INITIALIZERS)."""

    @staticmethod
    def _table_class():
        return StaticHashTableV1


class IdTableWithHashBuckets(LookupInterface):
    """TF1's id table with out-of-vocabulary hash buckets: ``table``'s id for known keys,
    ``table.size() + hash(key) % num_oov_buckets`` for others (``hasher_spec``: FastHashSpec,
    ``HasherSpec("legacy", None)`` or ``StrongHashSpec(key)``); with ``table=None`` only the bucket."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None, key_dtype=None):
        if name:
            name = name.rstrip("/")
        if table is not None:
            key_dtype = table.key_dtype if key_dtype is None else _dtypes.as_dtype(key_dtype)
            _check_oov_table(table.key_dtype, key_dtype, table.value_dtype)
            name = name or table.name
        else:
            if num_oov_buckets <= 0:
                raise ValueError("`oov_buckets` must be > 0 if no table is supplied.")
            key_dtype = _dtypes.string if key_dtype is None else _dtypes.as_dtype(key_dtype)
            name = name or "hash_bucket"
        if (not key_dtype.is_integer) and key_dtype != _dtypes.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got {key_dtype}.")
        if not isinstance(hasher_spec, HasherSpec):
            raise TypeError(f"`hasher_spec` must be of type HasherSpec, got {type(hasher_spec)}.")
        self._table = table
        self._num_oov_buckets = num_oov_buckets
        self._hasher_spec = hasher_spec
        self._table_name = name.split("/")[-1] if name else None
        super().__init__(key_dtype, _dtypes.int64)

    @property
    def name(self):
        return self._table_name

    @property
    def resource_handle(self):
        return self._table.resource_handle if self._table is not None else None

    @property
    def initializer(self):
        if self._table is not None:
            return self._table.initializer
        from ferroflow.ops import control_flow_ops

        return control_flow_ops.no_op()

    def size(self, name=None):
        """The table's size plus ``num_oov_buckets``."""
        with ops.name_scope(name, f"{self.name}_Size"):
            if self._table is None:
                return ops.convert_to_tensor(self._num_oov_buckets, dtype=_dtypes.int64)
            return self._table.size() + self._num_oov_buckets

    def lookup(self, keys, name=None):
        """The id of each key (a Tensor or a SparseTensor's values)."""
        if getattr(keys, "dtype", self._key_dtype).base_dtype != self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype}, got {keys.dtype}.")
        if self._num_oov_buckets == 0:
            values = keys.values if isinstance(keys, SparseTensor) else keys
            if self._table.key_dtype.base_dtype == _dtypes.int64:
                from ferroflow.ops import math_ops

                values = math_ops.cast(values, _dtypes.int64)
            ids = self._table.lookup(values, name=name)
            if isinstance(keys, SparseTensor):
                return SparseTensor(keys.indices, ids, keys.dense_shape)
            return ids
        with ops.name_scope(name, f"{self.name}_Lookup"):
            return _oov_lookup(self._table, keys, self._num_oov_buckets, _hash_bucket_fn(self._hasher_spec), None)


class _MutableTableSaveable(saveable_object.SaveableObject):
    """Saves a mutable table as ``<name>-keys`` and ``<name>-values`` (its export) and restores by import."""

    def __init__(self, table, name):
        keys, values = table.export()
        specs = [saveable_object.SaveSpec(keys, "", name + "-keys"),
                 saveable_object.SaveSpec(values, "", name + "-values")]
        super().__init__(table.resource_handle, specs, name)
        self._table = table

    def restore(self, restored_tensors, restored_shapes):
        table = self._table
        with ops.name_scope(f"{table.name}_table_restore"):
            return make_op("LookupTableImportV2",
                           [table.resource_handle, restored_tensors[0], restored_tensors[1]],
                           {"Tin": type_attr(table.key_dtype), "Tout": type_attr(table.value_dtype)})


class _MutableTable(LookupInterface):
    """Shared methods of the mutable tables: insert, remove, lookup, export."""

    def _setup(self, default_value, name, checkpoint, default_name=None):
        self._default_value = ops.convert_to_tensor(default_value, dtype=self._value_dtype, name=default_name)
        self._value_shape = self._default_value.get_shape()
        self._name = name
        self._resource_handle = self._create_resource()
        self._table_name = self._resource_handle.op.name.split("/")[-1]
        if checkpoint:
            ops.add_to_collection(ops.GraphKeys.SAVEABLE_OBJECTS,
                                  _MutableTableSaveable(self, self._resource_handle.op.name))

    @property
    def name(self):
        return self._table_name

    def lookup(self, keys, dynamic_default_values=None, name=None):
        """The value of each key, the default (or ``dynamic_default_values``, one per key) where absent."""
        default = self._default_value if dynamic_default_values is None else dynamic_default_values
        return self._lookup_keys(keys, default, name, f"{self.name}_lookup_table_find")

    def insert(self, keys, values, name=None):
        """An op adding (or overwriting) ``keys`` with ``values``."""
        with ops.name_scope(name, f"{self.name}_lookup_table_insert", [self.resource_handle, keys, values]):
            keys = ops.convert_to_tensor(keys, self._key_dtype, name="keys")
            values = ops.convert_to_tensor(values, self._value_dtype, name="values")
            return make_op("LookupTableInsertV2", [self.resource_handle, keys, values],
                           {"Tin": type_attr(self._key_dtype), "Tout": type_attr(self._value_dtype)})

    def remove(self, keys, name=None):
        """An op removing ``keys`` (absent ones are ignored)."""
        if _dtypes.as_dtype(getattr(keys, "dtype", self._key_dtype)) != self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype}, got {keys.dtype}.")
        with ops.name_scope(name, f"{self.name}_lookup_table_remove", (self.resource_handle, keys)):
            keys = ops.convert_to_tensor(keys, self._key_dtype, name="keys")
            return make_op("LookupTableRemoveV2", [self.resource_handle, keys], {"Tin": type_attr(self._key_dtype)})

    def export(self, name=None):
        """Two tensors: the keys and their values."""
        with ops.name_scope(name, f"{self.name}_lookup_table_export_values", [self.resource_handle]):
            op = make_op("LookupTableExportV2", [self.resource_handle],
                         {"Tkeys": type_attr(self._key_dtype), "Tvalues": type_attr(self._value_dtype)})
        return op.outputs[0], op.outputs[1]


class MutableHashTable(_MutableTable):
    """A hash table updated by ``insert`` and ``remove``; values are scalars or tensors of
    ``default_value``'s shape. With ``checkpoint`` the Saver saves it as ``<name>-keys`` /
    ``<name>-values``."""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype)
        self._shared_name = None
        self._setup(default_value, name, checkpoint)

    def _create_resource(self):
        attrs = _table_attrs(self._key_dtype, self._value_dtype, self._shared_name,
                             use_node_name_sharing=self._shared_name is None)
        if self._value_shape.ndims == 0:
            return make("MutableHashTableV2", [], attrs, name=self._name)
        attrs["value_shape"] = ("shape", self._value_shape.as_list())
        return make("MutableHashTableOfTensorsV2", [], attrs, name=self._name)


class DenseHashTable(_MutableTable):
    """A mutable hash table with open addressing (TensorFlow's ``MutableDenseHashTable``): keys equal to
    ``empty_key`` or ``deleted_key`` are not allowed; ``export`` gives the bucket arrays."""

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key, initial_num_buckets=None,
                 name="MutableDenseHashTable", checkpoint=True, experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype)
        self._initial_num_buckets = initial_num_buckets
        self._shared_name = None
        self._empty_key = empty_key
        self._deleted_key = deleted_key
        self._setup(default_value, name, checkpoint, default_name="default_value")

    def _create_resource(self):
        empty_key = ops.convert_to_tensor(self._empty_key, dtype=self._key_dtype, name="empty_key")
        deleted_key = ops.convert_to_tensor(self._deleted_key, dtype=self._key_dtype, name="deleted_key")
        attrs = _table_attrs(self._key_dtype, self._value_dtype, self._shared_name,
                             use_node_name_sharing=self._shared_name is None)
        attrs["value_shape"] = ("shape", self._value_shape.as_list())
        attrs["initial_num_buckets"] = int(self._initial_num_buckets or 131072)
        attrs["max_load_factor"] = 0.8
        return make("MutableDenseHashTableV2", [empty_key, deleted_key], attrs, name=self._name)

    def insert_or_assign(self, keys, values, name=None):
        """``insert`` under TF2's name."""
        return self.insert(keys, values, name)

    def erase(self, keys, name=None):
        """``remove`` under TF2's name."""
        return self.remove(keys, name)


#: The raw op's name for DenseHashTable.
MutableDenseHashTable = DenseHashTable


def _check_vocab_args(num_oov_buckets):
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got {num_oov_buckets}.")


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None, default_value=-1,
                          hasher_spec=FastHashSpec, key_dtype=_dtypes.string, name=None,
                          key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """A table mapping each line (or column) of ``vocabulary_file`` to its line number (int64);
    ``default_value`` for other keys."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}. For vocabulary_file: "
                         f"{vocabulary_file}.")
    key_dtype = _dtypes.as_dtype(key_dtype)
    if (not key_dtype.is_integer) and key_dtype != _dtypes.string:
        raise TypeError(f"Dtype for `keys` should be either integer or string, got {key_dtype}.")
    _check_vocab_args(num_oov_buckets)
    with ops.name_scope(name, "string_to_index"), ops.name_scope(None, "hash_table"):
        table_key_dtype = _dtypes.int64 if key_dtype.is_integer else key_dtype
        init = TextFileIdTableInitializer(vocabulary_file, vocab_size=vocab_size, key_dtype=table_key_dtype,
                                          name="table_init", key_column_index=key_column_index,
                                          value_column_index=value_column_index, delimiter=delimiter)
        table = StaticHashTableV1(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets, hasher_spec=hasher_spec,
                                           key_dtype=key_dtype)
        return table


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1, hasher_spec=FastHashSpec,
                            dtype=_dtypes.string, name=None):
    """A table mapping each element of ``vocabulary_list`` to its position (int64); ``default_value`` for
    other keys. Duplicate elements fail when the table is initialized."""
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` must be specified.")
    _check_vocab_args(num_oov_buckets)
    dtype = _dtypes.as_dtype(dtype)
    with ops.name_scope(name, "string_to_index"):
        keys = ops.convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Invalid `dtype`: Expected {'integer' if dtype.is_integer else 'non-integer'}, got "
                             f"{keys.dtype}.")
        if (not dtype.is_integer) and (keys.dtype.base_dtype != dtype):
            raise ValueError(f"Invalid `dtype`: Expected {dtype}, got {keys.dtype}.")
        from ferroflow.ops import array_ops

        values = array_ops.cast(array_ops.range(array_ops.size(keys)), _dtypes.int64)
        with ops.name_scope(None, "hash_table"):
            table_keys = array_ops.cast(keys, _dtypes.int64) if keys.dtype.is_integer else keys
            init = KeyValueTensorInitializer(table_keys, values, table_keys.dtype.base_dtype, _dtypes.int64,
                                             name="table_init")
            table = StaticHashTableV1(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets, hasher_spec=hasher_spec,
                                           key_dtype=dtype)
        return table


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK", name=None,
                                    key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE, delimiter="\t"):
    """A table mapping int64 line numbers of ``vocabulary_file`` to its lines (or a column)."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    with ops.name_scope(name, "index_to_string"):
        init = TextFileStringTableInitializer(vocabulary_file, vocab_size=vocab_size, name="table_init",
                                              key_column_index=key_column_index,
                                              value_column_index=value_column_index, delimiter=delimiter)
        return StaticHashTableV1(init, default_value)


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table mapping int64 positions to the elements of ``vocabulary_list``."""
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` argument must be specified.")
    from ferroflow.ops import array_ops

    with ops.name_scope(name, "index_to_string"):
        vocabulary_list = ops.convert_to_tensor(vocabulary_list, _dtypes.string)
        num_elements = array_ops.size(vocabulary_list)
        keys = array_ops.cast(array_ops.range(num_elements), _dtypes.int64)
        init = KeyValueTensorInitializer(keys, vocabulary_list, _dtypes.int64, _dtypes.string, name="table_init")
        return StaticHashTableV1(init, default_value)


def tables_initializer(name="init_all_tables"):
    """An op running every initializer in TABLE_INITIALIZERS (a no-op when there is none)."""
    from ferroflow.ops import control_flow_ops

    initializers = ops.get_collection(ops.GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return control_flow_ops.group(*initializers, name=name)
    return control_flow_ops.no_op(name=name)


def initialize_all_tables(name="init_all_tables"):
    """Deprecated name of ``tables_initializer``."""
    return tables_initializer(name)
