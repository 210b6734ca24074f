"""Neural-network ops (``tf.nn``)."""

from __future__ import annotations

import collections
import numbers

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, math_ops, random_ops
from ferroflow.ops._op_util import make, make_op
from ferroflow.ops._ragged_hook import on_flat_values


def _act(op_type):
    @on_flat_values("features")
    def f(features, name=None):
        with ops.name_scope(name, op_type, [features]) as scope:
            x = ops.convert_to_tensor(features, name="features")
            return make(op_type, [x], {}, scope)

    f.__name__ = op_type.lower()
    f.__doc__ = f"``{op_type}`` activation."
    return f


relu = _act("Relu")
relu6 = _act("Relu6")
elu = _act("Elu")
selu = _act("Selu")
softplus = _act("Softplus")
softsign = _act("Softsign")
sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


@on_flat_values("features")
def leaky_relu(features, alpha=0.2, name=None):
    """``x`` where positive, ``alpha * x`` elsewhere."""
    with ops.name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        x = ops.convert_to_tensor(features, name="features")
        if x.dtype.is_integer:
            x = array_ops.cast(x, dtypes.float32)
        if isinstance(alpha, numbers.Real):
            return make("LeakyRelu", [x], {"alpha": float(alpha)}, scope)
        return math_ops.maximum(math_ops.multiply(alpha, x), x, name=scope)


def swish(features, beta=1.0):
    x = ops.convert_to_tensor(features, name="features")
    return math_ops.multiply(x, math_ops.sigmoid(math_ops.multiply(beta, x)))


silu = swish


def _last_axis_op(op_type, logits, axis, name):
    x = ops.convert_to_tensor(logits)
    nd = x.shape.ndims
    if axis is not None and nd is not None and not -nd <= axis < nd:
        from ferroflow.framework import errors

        raise errors.InvalidArgumentError(
            None, None,
            f"`dim` must be in the range [{-nd}, {nd}) where {nd} is the number of dimensions in the input. "
            f"Received: dim={axis}")
    if axis is None or axis == -1 or (nd is not None and axis == nd - 1):
        return make(op_type, [x], {}, name)
    if nd is None:
        raise ValueError(f"{op_type} over axis {axis} needs a tensor of known rank")
    axis = axis % nd
    perm = list(range(nd))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    with ops.name_scope(name, op_type, [x]) as scope:
        y = make(op_type, [array_ops.transpose(x, perm)], {})
        return array_ops.transpose(y, perm, name=scope)


def softmax(logits, axis=None, name=None, dim=None):
    """``exp(x) / sum(exp(x))`` along ``axis`` (the last by default)."""
    axis = math_ops._lookup("axis", axis, "dim", dim)
    return _last_axis_op("Softmax", logits, axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    axis = math_ops._lookup("axis", axis, "dim", dim)
    return _last_axis_op("LogSoftmax", logits, axis, name)


def bias_add(value, bias, data_format=None, name=None):
    """Adds a 1-D ``bias`` along the channel dimension (last for NHWC, second for NCHW)."""
    with ops.name_scope(name, "BiasAdd", [value, bias]) as scope:
        v = ops.convert_to_tensor(value, name="input")
        b = ops.convert_to_tensor(bias, dtype=v.dtype, name="bias")
        fmt = "NHWC" if data_format is None else data_format
        if fmt.startswith("NC"):
            fmt = "NCHW"
        elif fmt.startswith("N") and fmt.endswith("C"):
            fmt = "NHWC"
        else:
            raise ValueError(f"data_format must be of the form `N...C` or `NC...`, got {data_format}")
        return make("BiasAdd", [v, b], {"data_format": fmt}, scope)


def xw_plus_b(x, weights, biases, name=None):
    with ops.name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        return bias_add(math_ops.matmul(x, weights), biases, name=scope)


def relu_layer(x, weights, biases, name=None):
    with ops.name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        return relu(bias_add(math_ops.matmul(x, weights), biases), name=scope)


def _flatten_outer_dims(x):
    """``x`` as a matrix of its last dimension, built as TensorFlow builds it (Rank, Shape, Sub, Slice, concat,
    Reshape), so the graph's names are TF's."""
    rank = array_ops.rank(x)
    last_dim_size = array_ops.slice(array_ops.shape(x), [math_ops.subtract(rank, 1)], [1])
    out = array_ops.reshape(x, array_ops.concat([[-1], last_dim_size], 0))
    dims = x.shape.dims
    if dims is not None and all(d is not None for d in dims):
        product = 1
        for d in dims[:-1]:
            product *= d
        out.set_shape([product, dims[-1]])
    elif dims is not None and dims[-1] is not None:
        out.set_shape([None, dims[-1]])
    return out


def _xent(labels, logits, axis, name):
    """TF's softmax_cross_entropy_with_logits_v2 helper: both operands flattened to matrices, the op named by
    the scope itself, its cost reshaped back (the output is ``<scope>/Reshape_2``)."""
    with ops.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        x = ops.convert_to_tensor(logits, name="logits")
        y = ops.convert_to_tensor(labels, name="labels")
        y = math_ops.cast(y, x.dtype) if y.dtype.base_dtype != x.dtype.base_dtype else y
        static = x.shape
        nd = static.ndims
        if axis is not None and axis != -1:
            if nd is None:
                raise ValueError("softmax_cross_entropy_with_logits over a given axis needs logits of known rank")
            if axis % nd != nd - 1:
                perm = list(range(nd))
                a = axis % nd
                perm[a], perm[-1] = perm[-1], perm[a]
                x = array_ops.transpose(x, perm)
                y = array_ops.transpose(y, perm)
        input_rank = array_ops.rank(x)
        input_shape = array_ops.shape(x)
        flat_x = _flatten_outer_dims(x)
        flat_y = _flatten_outer_dims(y)
        # The op takes the scope's own name, as TF's does.
        cost = make_op("SoftmaxCrossEntropyWithLogits", [flat_x, flat_y], {}, scope).outputs[0]
        output_shape = array_ops.slice(input_shape, [0], [math_ops.subtract(input_rank, 1)])
        cost = array_ops.reshape(cost, output_shape)
        if static.dims is not None:
            dims = list(static.dims)
            del dims[-1 if axis is None else axis]
            cost.set_shape(dims)
        return cost


def softmax_cross_entropy_with_logits(labels=None, logits=None, dim=-1, name=None, axis=None):
    """TF1 softmax cross-entropy: no gradient flows into ``labels`` (TF's ``_sg`` scope)."""
    axis = math_ops._lookup("axis", axis, "dim", None if dim == -1 else dim)
    with ops.name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return _xent(labels, logits, -1 if axis is None else axis, scope)


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """Softmax cross-entropy that also back-propagates into ``labels``."""
    axis = math_ops._lookup("axis", axis, "dim", dim)
    return _xent(labels, logits, -1 if axis is None else axis, name)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Cross-entropy against integer class ids (``labels`` has one fewer dimension than ``logits``)."""
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with ops.name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        y = ops.convert_to_tensor(labels)
        x = ops.convert_to_tensor(logits)
        ls, ys = x.shape, y.shape
        labels_shape = array_ops.shape(y)
        if ls.ndims is not None and ls.ndims == 0:
            raise ValueError(f"Logits cannot be scalars - received shape {ls}.")
        if ls.ndims is not None and ys.ndims is not None:
            if ls.ndims != ys.ndims + 1:
                raise ValueError(
                    f"Rank mismatch: Rank of labels (received {ys.ndims}) should equal rank of logits minus 1 "
                    f"(received {ls.ndims})."
                )
            if not ys.is_compatible_with(ls[:-1]):
                raise ValueError(
                    f"`labels.shape` must equal `logits.shape` except for the last dimension. Received: "
                    f"labels.shape={ys} and logits.shape={ls}"
                )
        # As TF: the op keeps the caller's name (its default inside the scope), no identity after it.
        if ls.ndims == 2:
            return make_op("SparseSoftmaxCrossEntropyWithLogits", [x, y], {}, name).outputs[0]
        num_classes = array_ops.shape(x)[array_ops.rank(x) - 1]
        flat_x = array_ops.reshape(x, [-1, num_classes])
        flat_y = array_ops.reshape(y, [-1])
        cost = make_op("SparseSoftmaxCrossEntropyWithLogits", [flat_x, flat_y], {}, name).outputs[0]
        cost = array_ops.reshape(cost, labels_shape)
        cost.set_shape(ys)
        return cost


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """``max(x, 0) - x * z + log(1 + exp(-|x|))``: stable logistic loss."""
    with ops.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        x = ops.convert_to_tensor(logits, name="logits")
        # Labels keep their own dtype, as TensorFlow converts them: others are the Mul op's TypeError.
        z = ops.convert_to_tensor(labels, name="labels")
        if not x.shape.is_compatible_with(z.shape):
            raise ValueError(
                f"`logits` and `labels` must have the same shape, received ({x.shape} vs {z.shape})."
            )
        zeros = array_ops.zeros_like(x, dtype=x.dtype)
        cond = math_ops.greater_equal(x, zeros)
        relu_logits = array_ops.where(cond, x, zeros)
        neg_abs = array_ops.where(cond, math_ops.negative(x), x)
        return math_ops.add(
            math_ops.subtract(relu_logits, math_ops.multiply(x, z)), math_ops.log1p(math_ops.exp(neg_abs)), name=scope
        )


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None, targets=None):
    labels = math_ops._lookup("labels", labels, "targets", targets)
    with ops.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        x = ops.convert_to_tensor(logits, name="logits")
        z = ops.convert_to_tensor(labels, dtype=x.dtype, name="labels")
        log_weight = math_ops.add(1.0, math_ops.multiply(math_ops.subtract(pos_weight, 1.0), z))
        return math_ops.add(
            math_ops.multiply(math_ops.subtract(1.0, z), x),
            math_ops.multiply(
                log_weight,
                math_ops.add(math_ops.log1p(math_ops.exp(math_ops.negative(math_ops.abs(x)))), relu(math_ops.negative(x))),
            ),
            name=scope,
        )


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``."""
    x = ops.convert_to_tensor(t, name="t")
    return make("L2Loss", [x], {}, name)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(sum(x ** 2), epsilon))`` along ``axis``."""
    axis = math_ops._lookup("axis", axis, "dim", dim)
    with ops.name_scope(name, "l2_normalize", [x]) as scope:
        t = ops.convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(t), axis, keepdims=True)
        inv = math_ops.rsqrt(math_ops.maximum(square_sum, ops.convert_to_tensor(epsilon, dtype=t.dtype)))
        return math_ops.multiply(t, inv, name=scope)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """Mean and variance over ``axes``."""
    keep = math_ops._lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keep = bool(keep)
    with ops.name_scope(name, "moments", [x, axes]):
        # A RaggedTensor goes through the ragged reductions and broadcasting.
        t = x if getattr(type(x), "_ragged_elementwise", False) else ops.convert_to_tensor(x)
        y = array_ops.cast(t, dtypes.float32) if t.dtype == dtypes.float16 else t
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes, keepdims=True, name="variance"
        )
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if t.dtype == dtypes.float16:
            return array_ops.cast(mean, dtypes.float16), array_ops.cast(variance, dtypes.float16)
        return mean, variance


@on_flat_values("x")
def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Zeroes elements with probability ``rate`` (= ``1 - keep_prob``) and scales the rest by ``1/(1-rate)``."""
    if rate is not None and keep_prob is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'")
    if rate is None:
        if keep_prob is None:
            raise ValueError("You must provide a rate to dropout.")
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError(f"`keep_prob` must be a scalar tensor or a float in the range (0, 1], got {keep_prob}")
        rate = 1 - keep_prob if isinstance(keep_prob, numbers.Real) else math_ops.subtract(1.0, keep_prob)
    elif isinstance(rate, numbers.Real) and not 0 <= rate < 1:
        raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
    with ops.name_scope(name, "dropout", [x]) as scope:
        t = ops.convert_to_tensor(x, name="x")
        if not t.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. Got a {t.dtype} tensor instead.")
        if isinstance(rate, numbers.Real) and rate == 0:
            return t
        r = ops.convert_to_tensor(rate, dtype=t.dtype, name="rate")
        r.shape.assert_has_rank(0)
        ns = array_ops.shape(t) if noise_shape is None else noise_shape
        keep = math_ops.subtract(ops.convert_to_tensor(1.0, dtype=t.dtype), r)
        random = random_ops.random_uniform(ns, seed=seed, dtype=t.dtype)
        mask = math_ops.greater_equal(random, r)
        scaled = math_ops.multiply(t, math_ops.reciprocal(keep))
        out = math_ops.multiply(scaled, array_ops.cast(mask, t.dtype), name=scope)
        # As in TF: the rate is a scalar, so the result has x's shape even when the rate's
        # static shape is unknown (a fed ``keep_prob = tf.placeholder(tf.float32)``).
        out.set_shape(t.shape)
        return out


@on_flat_values("ids")
def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True, max_norm=None):
    """Rows of ``params`` (a tensor, variable, list of shards or PartitionedVariable) for ``ids``."""
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable: look up in its parts
        params = params._get_variable_list()
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            return _sharded_lookup(list(params), ids, partition_strategy, name, max_norm)
        params = params[0]
    with ops.name_scope(name, "embedding_lookup", [params, ids]) as scope:
        p = ops.convert_to_tensor(params, name="params")
        i = ops.convert_to_tensor(ids, name="ids")
        out = array_ops.gather(p, i, name=None if max_norm else scope)
        if max_norm is not None:
            norms = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(out), -1, keepdims=True))
            scale = math_ops.minimum(1.0, math_ops.div_no_nan(ops.convert_to_tensor(max_norm, dtype=out.dtype), norms))
            out = math_ops.multiply(out, scale, name=scope)
        return out


def _sharded_lookup(params, ids, strategy, name, max_norm):
    n = len(params)
    with ops.name_scope(name, "embedding_lookup", params + [ids]) as scope:
        i = ops.convert_to_tensor(ids, name="ids")
        flat = array_ops.reshape(i, [-1])
        if strategy == "mod":
            shard = math_ops.floormod(flat, n)
            local = math_ops.floordiv(flat, n)
        elif strategy == "div":
            sizes = [p.shape[0].value for p in params]
            if any(s is None for s in sizes):
                raise ValueError("'div' partitioning needs shards of known size")
            bounds = [sum(sizes[:k]) for k in range(n)]
            shard = array_ops.zeros_like(flat)
            for b in bounds[1:]:
                shard = math_ops.add(shard, array_ops.cast(math_ops.greater_equal(flat, b), flat.dtype))
            local = math_ops.subtract(flat, array_ops.gather(ops.convert_to_tensor(bounds, dtype=flat.dtype), shard))
        else:
            raise ValueError(f"Unrecognized partition strategy: {strategy}. Must be one of either `mod` or `div`.")
        # Gather from each shard, then pick per id.
        pieces = []
        for p in params:
            pt = ops.convert_to_tensor(p)
            safe = math_ops.minimum(local, array_ops.shape(pt, out_type=local.dtype)[0] - 1)
            pieces.append(array_ops.gather(pt, safe))
        out = pieces[0]
        for k in range(1, n):
            sel = math_ops.equal(shard, k)
            out = array_ops.where(sel, pieces[k], out)
        dims = array_ops.concat([array_ops.shape(i), array_ops.shape(out)[1:]], 0)
        return array_ops.reshape(out, dims, name=scope)


def zero_fraction(value, name=None):
    """The fraction of zeros in ``value``, as a float32 scalar."""
    with ops.name_scope(name, "zero_fraction", [value]) as scope:
        v = ops.convert_to_tensor(value, name="value")
        zero = array_ops.zeros([], dtype=v.dtype)
        # TensorFlow's arithmetic: float32(count of zeros) / float32(size).
        num_zero = math_ops.reduce_sum(array_ops.cast(math_ops.equal(v, zero), dtypes.int64))
        size = array_ops.size(v, out_type=dtypes.int64)
        return math_ops.truediv(
            array_ops.cast(num_zero, dtypes.float32), array_ops.cast(size, dtypes.float32), name=scope
        )


def in_top_k(predictions, targets, k, name=None):
    """Whether each target is among the ``k`` largest predictions of its row."""
    with ops.name_scope(name, "in_top_k") as scope:
        p = ops.convert_to_tensor(predictions, dtype=dtypes.float32, name="predictions")
        t = ops.convert_to_tensor(targets, name="targets")
        kk = ops.convert_to_tensor(k, dtype=t.dtype, name="k")
        return make("InTopKV2", [p, t, kk], {}, scope)


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """The ``k`` largest values of the last dimension and their indices."""
    x = ops.convert_to_tensor(input)
    kk = ops.convert_to_tensor(k, dtype=dtypes.int32, name="k")
    op = make_op("TopKV2", [x, kk], {"sorted": bool(sorted)}, name)
    values, indices = op.outputs
    if dtypes.as_dtype(index_type) != dtypes.int32:
        indices = array_ops.cast(indices, index_type)
    return _TopKV2(values, indices)


# TensorFlow's result type: a namedtuple, so ``sess.run(top_k(...))`` returns one too.
_TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])

_ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])
_APPROX_TOP_K_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32)


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,  # noqa: A002
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """The ``k`` largest (``is_max_k``) or smallest values along ``reduction_dimension`` and their
    int32 indices. TensorFlow approximates only on TPUs; on a CPU, as here, the result is exact
    (``recall_target`` and ``reduction_input_size_override`` change nothing; ties go to the lower
    index, as TensorFlow's CPU kernel does)."""
    del recall_target, reduction_input_size_override, aggregate_to_topk
    with ops.name_scope(name, "ApproxTopK", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        if x.dtype.base_dtype not in _APPROX_TOP_K_DTYPES:
            raise TypeError(f"Value passed to parameter 'input' has DataType {x.dtype.name} not in list of "
                            "allowed values: float16, bfloat16, float32")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("approx_top_k needs an input of known rank")
        axis = reduction_dimension + rank if reduction_dimension < 0 else reduction_dimension
        if not 0 <= axis < rank:
            raise ValueError(f"reduction_dimension {reduction_dimension} is out of range for rank {rank}")
        perm = [d for d in range(rank) if d != axis] + [axis]
        inverse = [perm.index(d) for d in range(rank)]
        moved = x if axis == rank - 1 else array_ops.transpose(x, perm)
        values, indices = top_k(moved if is_max_k else math_ops.negative(moved), k)
        if not is_max_k:
            values = math_ops.negative(values)
        if axis != rank - 1:
            values, indices = array_ops.transpose(values, inverse), array_ops.transpose(indices, inverse)
        return _ApproxTopK(array_ops.identity(values, name=scope), indices)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """``(values, indices)`` of the ``k`` largest entries along ``reduction_dimension`` (exact on a CPU)."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, True, reduction_input_size_override,
                        aggregate_to_topk, name)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """``(values, indices)`` of the ``k`` smallest entries along ``reduction_dimension`` (exact on a CPU)."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, False, reduction_input_size_override,
                        aggregate_to_topk, name)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    with ops.name_scope(name, "log_poisson_loss", [log_input, targets]) as scope:
        li = ops.convert_to_tensor(log_input, name="log_input")
        t = ops.convert_to_tensor(targets, dtype=li.dtype, name="targets")
        result = math_ops.subtract(math_ops.exp(li), math_ops.multiply(li, t))
        if compute_full_loss:
            import math

            point_five = ops.convert_to_tensor(0.5, dtype=t.dtype)
            two_pi = ops.convert_to_tensor(2 * math.pi, dtype=t.dtype)
            stirling = math_ops.add(
                math_ops.subtract(math_ops.multiply(t, math_ops.log(t)), t),
                math_ops.multiply(point_five, math_ops.log(math_ops.multiply(two_pi, t))),
            )
            cond = math_ops.logical_and(math_ops.greater_equal(t, 0), math_ops.less_equal(t, 1))
            result = math_ops.add(result, array_ops.where(cond, array_ops.zeros_like(t), stirling))
        return array_ops.identity(result, name=scope)

