"""Assertions and numeric checks (``tf.debugging``, and the ``tf.assert_*`` names of TF1).

Graph-mode semantics, as in TensorFlow 1.x: each ``assert_*`` returns an op that fails with
``InvalidArgumentError`` when run, or a ``no_op`` when the check already passed statically.
When a check can be decided while the graph is built it fails then instead: element-wise
checks of two constants raise ``InvalidArgumentError``, rank and shape checks ``ValueError``,
dtype checks ``TypeError``.
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, errors, ops, tensor_util
from ferroflow.ops import array_ops, control_flow_ops, math_ops
from ferroflow.ops._op_util import make

__all__ = [
    "add_check_numerics_ops",
    "assert_all_finite",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_integer",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_proper_iterable",
    "assert_rank",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_shapes",
    "assert_type",
    "check_numerics",
    "is_non_decreasing",
    "is_numeric_tensor",
    "is_strictly_increasing",
    "verify_tensor_all_finite",
]

NUMERIC_TYPES = frozenset(
    [
        dtypes.float16,
        dtypes.float32,
        dtypes.float64,
        dtypes.bfloat16,
        dtypes.int8,
        dtypes.int16,
        dtypes.int32,
        dtypes.int64,
        dtypes.uint8,
        dtypes.uint16,
        dtypes.uint32,
        dtypes.uint64,
        dtypes.complex64,
        dtypes.complex128,
    ]
)


def _message_prefix(message):
    return f"{message}.  " if message else ""


def _static_string(item):
    """How a ``data`` item reads in an error raised at graph construction."""
    if not isinstance(item, ops.Tensor):
        return str(item)
    value = tensor_util.constant_value(item)
    return str(item) if value is None else str(value)


def _assert_static(condition, data):
    if not condition:
        raise errors.InvalidArgumentError(None, None, "\n".join(_static_string(d) for d in data))


# -- element-wise comparisons ----------------------------------------------


def _binary_assert(sym, opname, op_func, static_func, x, y, data, summarize, message, name):
    with ops.name_scope(name, opname, [x, y]):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y")
        if data is None:
            data = [
                f"Condition x {sym} y did not hold element-wise:",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        if message is not None:
            data = [message] + list(data)
        condition = math_ops.reduce_all(op_func(x, y))
        x_static = tensor_util.constant_value(x)
        y_static = tensor_util.constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(bool(np.all(static_func(x_static, y_static))), data)
        return control_flow_ops.Assert(condition, data, summarize=summarize)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x == y`` holds element-wise (with broadcasting)."""
    # TensorFlow opens an "assert_equal" name scope of its own first (to short-circuit x is y), so the check's
    # ops land in the next one: "assert_equal_1/..." in a fresh graph.
    with ops.name_scope(name, "assert_equal", [x, y, data]):
        if x is y:
            return control_flow_ops.no_op()
    return _binary_assert(
        "==", "assert_equal", math_ops.equal, np.equal, x, y, data, summarize, message, name
    )


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x != y`` holds for all elements."""
    return _binary_assert(
        "!=", "assert_none_equal", math_ops.not_equal, np.not_equal, x, y, data, summarize, message, name
    )


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x < y`` holds element-wise."""
    return _binary_assert("<", "assert_less", math_ops.less, np.less, x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x <= y`` holds element-wise."""
    return _binary_assert(
        "<=", "assert_less_equal", math_ops.less_equal, np.less_equal, x, y, data, summarize, message, name
    )


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x > y`` holds element-wise."""
    return _binary_assert(
        ">", "assert_greater", math_ops.greater, np.greater, x, y, data, summarize, message, name
    )


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x >= y`` holds element-wise."""
    return _binary_assert(
        ">=",
        "assert_greater_equal",
        math_ops.greater_equal,
        np.greater_equal,
        x,
        y,
        data,
        summarize,
        message,
        name,
    )


def _unary_assert(sym, opname, x, data, summarize, message, name, zero_first, binary):
    message = _message_prefix(message)
    with ops.name_scope(name, opname, [x]):
        x = ops.convert_to_tensor(x, name="x")
        if data is None:
            data = [message, f"Condition x {sym} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = ops.convert_to_tensor(0, dtype=x.dtype)
        a, b = (zero, x) if zero_first else (x, zero)
        return binary(a, b, data=data, summarize=summarize)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x < 0`` holds element-wise."""
    return _unary_assert("<", "assert_negative", x, data, summarize, message, name, False, assert_less)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x > 0`` holds element-wise."""
    return _unary_assert(">", "assert_positive", x, data, summarize, message, name, True, assert_less)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x >= 0`` holds element-wise."""
    return _unary_assert(
        ">=", "assert_non_negative", x, data, summarize, message, name, True, assert_less_equal
    )


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """Assert the condition ``x <= 0`` holds element-wise."""
    return _unary_assert(
        "<=", "assert_non_positive", x, data, summarize, message, name, False, assert_less_equal
    )


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """Assert ``|x - y| < atol + rtol * |y|`` element-wise (tolerances default to ``10 * eps``)."""
    message = _message_prefix(message)
    with ops.name_scope(name, "assert_near", [x, y, rtol, atol]):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype)
        dtype = x.dtype.real_dtype if x.dtype.is_complex else x.dtype
        eps = np.finfo(dtype.as_numpy_dtype).eps
        rtol = ops.convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=dtype)
        atol = ops.convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=dtype)
        if data is None:
            data = [
                message,
                f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        tol = math_ops.add(atol, math_ops.multiply(rtol, math_ops.abs(y)))
        diff = math_ops.abs(math_ops.subtract(x, y))
        condition = math_ops.reduce_all(math_ops.less(diff, tol))
        return control_flow_ops.Assert(condition, data, summarize=summarize)


# -- ranks -------------------------------------------------------------------


class _StaticRankFailure(Exception):
    def __init__(self, actual, expected):
        super().__init__(actual, expected)
        self.actual = actual
        self.expected = expected


def _assert_ranks_condition(x, ranks, static_condition, dynamic_condition, data, summarize):
    """Checks ``static_condition(rank(x), ranks)`` now if it can, else adds an Assert op."""
    for r in ranks:
        assert_type(r, dtypes.int32)
    ranks_static = [tensor_util.constant_value(r) for r in ranks]
    if all(r is not None for r in ranks_static):
        if any(np.ndim(r) != 0 for r in ranks_static):
            raise ValueError("Rank must be a scalar.")
        x_rank = x.shape.ndims
        if x_rank is not None:
            given = tuple(int(r) for r in ranks_static)
            if not static_condition(x_rank, given):
                raise _StaticRankFailure(x_rank, given)
            return control_flow_ops.no_op(name="static_checks_determined_all_ok")
    condition = dynamic_condition(array_ops.rank(x), ranks)
    # Catch assert_rank(x, [n]) (a vector) meant as assert_rank(x, n).
    for r, r_static in zip(ranks, ranks_static):
        if r_static is None:
            rank_check = assert_rank(r, 0, data=["Rank must be a scalar. Received rank: ", r])
            condition = control_flow_ops.with_dependencies([rank_check], condition)
    return control_flow_ops.Assert(condition, data, summarize=summarize)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Assert ``x`` has rank equal to ``rank`` (ValueError if statically known to differ)."""
    with ops.name_scope(name, "assert_rank", [x, rank]):
        x = ops.convert_to_tensor(x, name="x")
        rank = ops.convert_to_tensor(rank, name="rank")
        message = _message_prefix(message)
        if data is None:
            data = [message, f"Tensor {x.name} must have rank", rank, "Received shape: ", array_ops.shape(x)]
        try:
            return _assert_ranks_condition(
                x, [rank], lambda a, g: a == g[0], lambda a, g: math_ops.equal(a, g[0]), data, summarize
            )
        except _StaticRankFailure as e:
            raise ValueError(
                f"{message}Tensor {x.name} must have rank {e.expected[0]}.  Received rank {e.actual}, "
                f"shape {x.shape}"
            ) from None


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Assert ``x`` has rank ``rank`` or higher."""
    with ops.name_scope(name, "assert_rank_at_least", [x, rank]):
        x = ops.convert_to_tensor(x, name="x")
        rank = ops.convert_to_tensor(rank, name="rank")
        message = _message_prefix(message)
        if data is None:
            data = [
                message,
                f"Tensor {x.name} must have rank at least",
                rank,
                "Received shape: ",
                array_ops.shape(x),
            ]
        try:
            return _assert_ranks_condition(
                x,
                [rank],
                lambda a, g: a >= g[0],
                lambda a, g: math_ops.greater_equal(a, g[0]),
                data,
                summarize,
            )
        except _StaticRankFailure as e:
            raise ValueError(
                f"{message}Tensor {x.name} must have rank at least {e.expected[0]}.  Received rank {e.actual}, "
                f"shape {x.shape}"
            ) from None


def _dynamic_rank_in(actual_rank, given_ranks):
    if not given_ranks:
        return ops.convert_to_tensor(False)
    result = math_ops.equal(given_ranks[0], actual_rank)
    for r in given_ranks[1:]:
        result = math_ops.logical_or(result, math_ops.equal(r, actual_rank))
    return result


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Assert the rank of ``x`` is one of ``ranks``."""
    ranks = list(ranks)
    with ops.name_scope(name, "assert_rank_in", [x] + ranks):
        x = ops.convert_to_tensor(x, name="x")
        ranks = [ops.convert_to_tensor(r, name="rank") for r in ranks]
        message = _message_prefix(message)
        if data is None:
            data = (
                [message, f"Tensor {x.name} must have rank in"]
                + ranks
                + ["Received shape: ", array_ops.shape(x)]
            )
        try:
            return _assert_ranks_condition(x, ranks, lambda a, g: a in g, _dynamic_rank_in, data, summarize)
        except _StaticRankFailure as e:
            raise ValueError(
                f"{message}Tensor {x.name} must have rank in {e.expected}.  Received rank {e.actual}, "
                f"shape {x.shape}"
            ) from None


# -- static dtype and shape checks ------------------------------------------


def assert_integer(x, message=None, name=None):
    """TypeError unless ``x`` has an integer dtype; returns a ``no_op``."""
    with ops.name_scope(name, "assert_integer", [x]):
        x = ops.convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(
                f'{_message_prefix(message)}Expected "x" to be integer type.  Found: {x.name} of dtype {x.dtype}'
            )
        return control_flow_ops.no_op("statically_determined_was_integer")


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError unless ``tensor`` has dtype ``tf_type``; returns a ``no_op``."""
    tf_type = dtypes.as_dtype(tf_type)
    with ops.name_scope(name, "assert_type", [tensor]):
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != tf_type:
            raise TypeError(
                f"{_message_prefix(message)}{tensor.name} must be of type {tf_type!r}; got {tensor.dtype!r}"
            )
        return control_flow_ops.no_op("statically_determined_correct_type")


def assert_scalar(tensor, name=None, message=None):
    """Returns ``tensor`` as a Tensor; ValueError unless it is statically known to be a scalar."""
    with ops.name_scope(name, "assert_scalar", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name=scope)
        shape = tensor.shape
        if shape.ndims != 0:
            raise ValueError(
                f"{_message_prefix(message)}Expected scalar shape for {tensor.name}, saw shape: {shape}."
            )
        return tensor


def assert_proper_iterable(values):
    """TypeError unless ``values`` is an iterable other than a Tensor, ndarray, str or bytes."""
    if isinstance(values, (ops.Tensor, np.ndarray, str, bytes)):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def _assert_same_base_type(items, expected_type=None):
    items = [x for x in items if x is not None]
    first = None
    for item in items:
        item_type = item.dtype.base_dtype
        if expected_type is None:
            expected_type, first = item_type, item
        elif item_type != expected_type:
            as_first = f" as {getattr(first, 'name', first)}" if first is not None else ""
            raise ValueError(
                f"{getattr(item, 'name', item)}, type={item_type}, must be of the same type ({expected_type}){as_first}."
            )
    return expected_type


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating dtype of ``tensors`` (and ``dtype``); ValueError on a mismatch or a non-float."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if tensors:
        dtype = _assert_same_base_type(tensors, dtype)
    if dtype is None:
        return dtypes.float32
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    return dtype


def is_numeric_tensor(tensor):
    """True if ``tensor`` is a Tensor with a numeric (integer, floating or complex) dtype."""
    return isinstance(tensor, ops.Tensor) and tensor.dtype in NUMERIC_TYPES


def _monotonic(x, name, default_name, compare):
    with ops.name_scope(name, default_name, [x]):
        flat = array_ops.reshape(ops.convert_to_tensor(x, name="x"), [-1])
        if not is_numeric_tensor(flat):
            raise TypeError(f"Expected x to be numeric, instead found: {flat}")
        # With fewer than two elements both slices are empty and reduce_all gives True.
        return math_ops.reduce_all(compare(flat[1:], flat[:-1]))


def is_non_decreasing(x, name=None):
    """True if ``x[i] <= x[i + 1]`` for every adjacent pair (in row-major order)."""
    return _monotonic(x, name, "is_non_decreasing", math_ops.greater_equal)


def is_strictly_increasing(x, name=None):
    """True if ``x[i] < x[i + 1]`` for every adjacent pair (in row-major order)."""
    return _monotonic(x, name, "is_strictly_increasing", math_ops.greater)


# -- assert_shapes -------------------------------------------------------------


def _dimension_sizes(x):
    """Per-dimension sizes of ``x`` (ints where static, scalar tensors else); a scalar counts as ``[1]``."""
    rank = x.shape.ndims
    if rank == 0:
        return [1]
    dynamic = array_ops.shape(x)
    if rank is not None:
        return [d if d is not None else dynamic[i] for i, d in enumerate(x.shape.as_list())]
    # Unknown rank: shape(x), or [1] for a scalar, without a conditional.
    padded = array_ops.concat([dynamic, [1]], 0)
    return array_ops.slice(padded, [0], array_ops.reshape(math_ops.maximum(array_ops.rank(x), 1), [1]))


def _has_known_value(size):
    if size is None or isinstance(size, ops.Tensor):
        return False
    try:
        int(size)
    except (TypeError, ValueError):
        return False
    return True


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Assert the shapes of tensors and the equality of dimensions named alike across them.

    ``shapes`` is a list of ``(tensor, shape)`` pairs (or a dict). A shape entry is an int (an exact
    size), None or ``'.'`` (any size), or any other hashable symbol (the same size wherever the
    symbol appears). A leading ``...`` or ``'*'`` allows any number of outer dimensions.
    """
    shapes = list(shapes.items() if isinstance(shapes, dict) else shapes)
    prefix = _message_prefix(message)
    with ops.name_scope(name, "assert_shapes", [x for x, _ in shapes]):
        constraints = [(ops.convert_to_tensor(x), s) for x, s in shapes if s is not None]
        entries = []
        for tensor, symbolic in constraints:
            if not (hasattr(symbolic, "__iter__") or hasattr(symbolic, "__getitem__")):
                raise ValueError(
                    f"{prefix}Tensor {tensor.name}.  Specified shape must be an iterable.  An iterable has the "
                    f"attribute `__iter__` or `__getitem__`.  Received specified shape: {symbolic}"
                )
            symbols = tuple(symbolic.as_list() if hasattr(symbolic, "as_list") else symbolic)
            innermost = False
            for i, s in enumerate(symbols):
                if s is Ellipsis or (isinstance(s, str) and s == "*"):
                    if i != 0:
                        raise ValueError(
                            f"{prefix}Tensor {tensor.name} specified shape index {i}.  Symbol `...` or `*` for a "
                            "variable number of unspecified dimensions is only allowed as the first entry"
                        )
                    innermost = True
            symbols = symbols[1:] if innermost else symbols
            entries.append((tensor, innermost, _dimension_sizes(tensor), symbols or (1,)))

        rank_assertions = []
        for tensor, innermost, _, symbols in entries:
            rank = len(symbols)
            kwargs = dict(data=data, summarize=summarize, message=message, name=name)
            if innermost:
                if rank in (0, 1):
                    continue
                rank_assertions.append(assert_rank_at_least(tensor, rank, **kwargs))
            elif rank in (0, 1):
                # A scalar counts as shape [1].
                rank_assertions.append(assert_rank_in(tensor, [0, 1], **kwargs))
            else:
                rank_assertions.append(assert_rank(tensor, rank, **kwargs))

        size_assertions = []
        specified = {}
        for tensor, innermost, actual_sizes, symbols in entries:
            for i, symbol in enumerate(symbols):
                if symbol is None or (isinstance(symbol, str) and symbol == "."):
                    continue
                dim = i - len(symbols) if innermost else i
                known = _has_known_value(symbol)
                if not known and symbol not in specified:
                    with ops.control_dependencies(rank_assertions):
                        specified[symbol] = (actual_sizes[dim], tensor, dim)
                    continue
                if known:
                    want, how = int(symbol), "Specified explicitly"
                else:
                    want, by, at = specified[symbol]
                    how = f"Specified by tensor {by.name} dimension {at}"
                # The size is read only after the rank checks, so the slice cannot go out of range.
                with ops.control_dependencies(rank_assertions):
                    actual = actual_sizes[dim]
                if _has_known_value(actual) and _has_known_value(want):
                    if int(actual) != int(want):
                        raise ValueError(
                            f"{prefix}{how}.  Tensor {tensor.name} dimension {dim} must have size {int(want)}.  "
                            f"Received size {int(actual)}, shape {tensor.shape}"
                        )
                    continue
                condition = math_ops.equal(
                    ops.convert_to_tensor(actual, dtype=dtypes.int32),
                    ops.convert_to_tensor(want, dtype=dtypes.int32),
                )
                this_data = data
                if data is None:
                    this_data = [
                        prefix,
                        how,
                        f"Tensor {tensor.name} dimension",
                        dim,
                        "must have size",
                        want,
                        "Received shape: ",
                        array_ops.shape(tensor),
                    ]
                size_assertions.append(control_flow_ops.Assert(condition, this_data, summarize=summarize))
    with ops.control_dependencies(rank_assertions):
        return control_flow_ops.group(size_assertions)


# -- NaN and Inf ---------------------------------------------------------------


def check_numerics(tensor, message, name=None):
    """``tensor``, failing at run time with InvalidArgumentError if it holds a NaN or Inf."""
    if not isinstance(message, (str, bytes)):
        raise TypeError(f"Expected string for argument 'message' not {message!r}.")
    if isinstance(message, bytes):
        message = message.decode()
    x = ops.convert_to_tensor(tensor, name="tensor")
    return make("CheckNumerics", [x], {"message": message}, name)


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """``t`` (alias ``x``), available only after a CheckNumerics op with ``msg`` (alias ``message``) passed."""
    x = math_ops._lookup("x", x, "t", t)
    message = math_ops._lookup("message", message, "msg", msg)
    with ops.name_scope(name, "VerifyFinite", [x]):
        x = ops.convert_to_tensor(x, name="x")
        with ops.colocate_with(x):
            verify = check_numerics(x, message=message)
            return control_flow_ops.with_dependencies([verify], x)


assert_all_finite = verify_tensor_all_finite


def add_check_numerics_ops():
    """A group of CheckNumerics ops, one for every float16/32/64 tensor now in the default graph.

    The checks are chained so that the one on an op's inputs runs before the ones on its outputs.
    Reference outputs (variables, assignments) are skipped, as TensorFlow does.
    """
    g = ops.get_default_graph()
    checks = []
    for op in g.get_operations():
        for output in op.outputs:
            if output.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
                continue
            if g._native.output_info(output._tid)[2]:
                continue
            with ops.control_dependencies(checks):
                checks = [check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return control_flow_ops.group(*checks)
