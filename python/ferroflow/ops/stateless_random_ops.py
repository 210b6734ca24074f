"""``tf.random``'s stateless ops (pure functions of the seed, TensorFlow's values bit for bit), the samplers
``categorical``/``multinomial``/``gamma``/``poisson``, ``fold_in``/``split`` and ``random_index_shuffle``.

The graphs are TensorFlow 2.21's: ``StatelessRandomGetKeyCounter`` then ``StatelessRandomUniformV2`` and
friends, or the v1 seed ops where TensorFlow still builds them. TensorFlow's uint64 key/counter tensors are int64
here (ferroflow has no unsigned 64-bit dtype); their bits are TensorFlow's.
"""

from __future__ import annotations

import enum

import numpy as np

from ferroflow.framework import dtypes, ops, random_seed
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import as_list_or_tensor, make, make_op, to_int_tensor, type_attr

__all__ = [
    "Algorithm",
    "categorical",
    "fold_in",
    "index_shuffle",
    "multinomial",
    "random_gamma",
    "random_poisson",
    "split",
    "stateless_categorical",
    "stateless_multinomial",
    "stateless_parameterized_truncated_normal",
    "stateless_random_binomial",
    "stateless_random_gamma",
    "stateless_random_normal",
    "stateless_random_poisson",
    "stateless_random_uniform",
    "stateless_truncated_normal",
]


class Algorithm(enum.Enum):
    """The counter-based RNG algorithms (``tf.random.Algorithm``), with TensorFlow's ids."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def convert_alg_to_int(alg):
    """``alg`` (an Algorithm, its name in any case, its id or None) as TensorFlow's integer id."""
    if alg is None:
        return Algorithm.AUTO_SELECT.value
    if isinstance(alg, Algorithm):
        return alg.value
    if isinstance(alg, int):
        return alg
    if isinstance(alg, str):
        key = alg.strip().upper().replace("-", "_")
        if key in Algorithm.__members__:
            return Algorithm[key].value
        raise ValueError(
            f"Argument `alg` got unsupported string value {alg}. Supported string values are "
            f"'philox' for the Philox algorithm, 'threefry' for the ThreeFry algorithm, and 'auto_select'."
        )
    if isinstance(alg, ops.Tensor):
        return alg
    raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) to tf.random.Algorithm.")


def _shape_tensor(shape):
    return to_int_tensor(as_list_or_tensor(shape), "shape")


def _seed_tensor(seed):
    if isinstance(seed, ops.Tensor):
        return seed
    arr = np.asarray(seed)
    dtype = dtypes.int32 if arr.dtype.kind in "iu" and np.all((arr >= -(2**31)) & (arr < 2**31)) else dtypes.int64
    return ops.convert_to_tensor(seed, dtype=dtype, name="seed")


def get_key_counter_alg(seed, alg):
    """(key, counter, alg) for the ``...V2`` ops: TensorFlow's ``_get_key_counter_alg``."""
    alg = convert_alg_to_int(alg)
    seed = _seed_tensor(seed)
    if alg in (Algorithm.AUTO_SELECT.value, Algorithm.PHILOX.value):
        # Philox's scrambling of the seed is what StatelessRandomGetKeyCounter computes.
        op = make_op("StatelessRandomGetKeyCounter", [seed], {"Tseed": type_attr(seed.dtype)})
        key, counter = op._outputs[0], op._outputs[1]
    elif alg == Algorithm.THREEFRY.value:
        key = array_ops.reshape(math_ops.cast(seed, dtypes.int64)[0], [1])
        counter = array_ops.zeros([1], dtypes.int64)
    else:
        key = array_ops.reshape(math_ops.cast(seed, dtypes.int64)[0], [1])
        counter = array_ops.zeros([2], dtypes.int64)
    return key, counter, ops.convert_to_tensor(alg, dtype=dtypes.int32, name="alg")


_UNIFORM_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64,
                   dtypes.uint32, dtypes.uint64)


def _v2(op_type, shape, seed, dtype, alg, extra=(), name=None):
    key, counter, alg = get_key_counter_alg(seed, alg)
    shape = _shape_tensor(shape)
    attrs = {"Tshape": type_attr(shape.dtype)}
    if dtype is not None:
        attrs["dtype"] = type_attr(dtype)
    return make(op_type, [shape, key, counter, alg, *extra], attrs, name)


def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Uniform values in ``[minval, maxval)``, a pure function of ``seed`` (TensorFlow's values).

    For integer dtypes ``minval=None, maxval=None`` draws from the whole range of the type.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_DTYPES:
        raise ValueError(
            f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are "
            f"{tuple(str(d) for d in _UNIFORM_DTYPES)}."
        )
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(
                f"For integer `dtype` argument {dtype}, argument `minval` and `maxval` must be both None or "
                f"not None. Got `minval`={minval} and `maxval`={maxval}."
            )
        if minval is not None and dtype in (dtypes.uint32, dtypes.uint64):
            # (TensorFlow draws unsigned integers over their full range only.)
            raise ValueError(
                f"Argument `dtype` got invalid value {dtype} when argument `minval` is not None. Please don't use "
                "unsigned integers in this case."
            )
    elif maxval is None:
        maxval = 1
    with ops.name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        if dtype.is_integer and minval is None:
            return _v2("StatelessRandomUniformFullIntV2", shape, seed, dtype, alg, name=scope)
        lo = ops.convert_to_tensor(minval, dtype=dtype, name="min")
        hi = ops.convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return _v2("StatelessRandomUniformIntV2", shape, seed, None, alg, extra=(lo, hi), name=scope)
        rnd = _v2("StatelessRandomUniformV2", shape, seed, dtype, alg)
        return math_ops.add(math_ops.multiply(rnd, math_ops.subtract(hi, lo)), lo, name=scope)


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Normal values ``mean + stddev * N(0, 1)``, a pure function of ``seed`` (TensorFlow's values)."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "stateless_random_normal", [shape, seed, mean, stddev]) as scope:
        m = ops.convert_to_tensor(mean, dtype=dtype, name="mean")
        s = ops.convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = _v2("StatelessRandomNormalV2", shape, seed, dtype, alg)
        return math_ops.add(math_ops.multiply(rnd, s), m, name=scope)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Normal values redrawn beyond two standard deviations, a pure function of ``seed``."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "stateless_truncated_normal", [shape, seed, mean, stddev]) as scope:
        m = ops.convert_to_tensor(mean, dtype=dtype, name="mean")
        s = ops.convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = _v2("StatelessTruncatedNormalV2", shape, seed, dtype, alg)
        return math_ops.add(math_ops.multiply(rnd, s), m, name=scope)


def _multinomial_dtype(dtype):
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.int64
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are int32 and int64.")
    return dtype


def _stateless_multinomial(logits, num_samples, seed, output_dtype, name, default_name):
    with ops.name_scope(name, default_name, [logits, seed]):
        logits = ops.convert_to_tensor(logits, name="logits")
        n = ops.convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        seed = _seed_tensor(seed)
        attrs = {
            "T": type_attr(logits.dtype),
            "Tseed": type_attr(seed.dtype),
            "output_dtype": type_attr(_multinomial_dtype(output_dtype)),
        }
        return make("StatelessMultinomial", [logits, n, seed], attrs)


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """Class indices drawn from ``softmax(logits)`` per row, a pure function of ``seed`` (TensorFlow's values)."""
    return _stateless_multinomial(logits, num_samples, seed, dtype, name, "stateless_categorical")


def stateless_multinomial(logits, num_samples, seed, output_dtype=dtypes.int64, name=None):
    """Deprecated alias of ``stateless_categorical`` (TF1's argument name ``output_dtype``)."""
    return _stateless_multinomial(logits, num_samples, seed, output_dtype, name, "stateless_multinomial")


def stateless_random_binomial(shape, seed, counts, probs, output_dtype=dtypes.int32, name=None):
    """Binomial(counts, probs) samples; ``shape`` must end with the broadcast shape of counts and probs."""
    with ops.name_scope(name, "stateless_random_binomial", [shape, seed, counts, probs]) as scope:
        shape = _shape_tensor(shape)
        probs = ops.convert_to_tensor(probs, dtype_hint=dtypes.float32, name="probs")
        counts = ops.convert_to_tensor(counts, dtype_hint=probs.dtype, name="counts")
        seed = _seed_tensor(seed)
        attrs = {
            "S": type_attr(shape.dtype),
            "Tseed": type_attr(seed.dtype),
            "T": type_attr(counts.dtype),
            "dtype": type_attr(output_dtype),
        }
        return make("StatelessRandomBinomial", [shape, seed, counts, probs], attrs, scope)


def _tiny(dtype):
    return float(np.finfo(dtypes.as_dtype(dtype).as_numpy_dtype).tiny)


def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None):
    """Gamma(alpha, beta) samples (TensorFlow's values), floored at the dtype's smallest normal number."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]) as scope:
        shape = _shape_tensor(shape)
        alpha = ops.convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = ops.convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        from ferroflow.ops.array_ops_extra import broadcast_dynamic_shape

        bshape = broadcast_dynamic_shape(array_ops.shape(alpha), array_ops.shape(beta))
        alpha_b = array_ops.broadcast_to(alpha, bshape)
        key, counter, alg = get_key_counter_alg(seed, "auto_select")
        attrs = {"shape_dtype": type_attr(shape.dtype), "dtype": type_attr(dtype)}
        rnd = make("StatelessRandomGammaV3", [shape, key, counter, alg, alpha_b], attrs)
        return math_ops.maximum(_tiny(dtype), math_ops.truediv(rnd, beta), name=scope)


def stateless_random_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """Poisson(lam) samples (TensorFlow's values); ``shape`` must end with lam's shape."""
    with ops.name_scope(name, "stateless_random_poisson", [shape, seed, lam]) as scope:
        shape = _shape_tensor(shape)
        lam = ops.convert_to_tensor(lam, name="lam")
        seed = _seed_tensor(seed)
        attrs = {
            "Rtype": type_attr(lam.dtype),
            "dtype": type_attr(dtype),
            "T": type_attr(shape.dtype),
            "Tseed": type_attr(seed.dtype),
        }
        return make("StatelessRandomPoisson", [shape, seed, lam], attrs, scope)


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0, maxvals=2.0,
                                             name=None):
    """Normal(means, stddevs) samples truncated to ``[minvals, maxvals]`` (broadcast against ``shape``)."""
    with ops.name_scope(name, "stateless_parameterized_truncated_normal",
                        [shape, means, stddevs, minvals, maxvals]) as scope:
        shape = _shape_tensor(shape)
        means = ops.convert_to_tensor(means, name="means")
        stddevs = ops.convert_to_tensor(stddevs, name="stddevs")
        minvals = ops.convert_to_tensor(minvals, name="minvals")
        maxvals = ops.convert_to_tensor(maxvals, name="maxvals")
        seed = _seed_tensor(seed)
        attrs = {"S": type_attr(shape.dtype), "Tseed": type_attr(seed.dtype), "dtype": type_attr(means.dtype)}
        return make("StatelessParameterizedTruncatedNormal", [shape, seed, means, stddevs, minvals, maxvals], attrs,
                    scope)


def _seed_attrs(seed):
    s1, s2 = random_seed.get_seed(seed)
    return {"seed": int(s1 or 0), "seed2": int(s2 or 0)}


def _multinomial(logits, num_samples, seed, output_dtype, name, default_name):
    with ops.name_scope(name, default_name, [logits]):
        logits = ops.convert_to_tensor(logits, name="logits")
        n = ops.convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        attrs = dict(_seed_attrs(seed), T=type_attr(logits.dtype), output_dtype=type_attr(_multinomial_dtype(output_dtype)))
        return make("Multinomial", [logits, n], attrs)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Class indices drawn from ``softmax(logits)`` per row (``Multinomial``)."""
    return _multinomial(logits, num_samples, seed, dtype, name, "categorical")


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """TF1's name of ``categorical``."""
    return _multinomial(logits, num_samples, seed, output_dtype, name, "multinomial")


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Gamma(alpha, beta) samples of shape ``shape + broadcast(alpha, beta).shape`` (``RandomGamma``)."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape = ops.convert_to_tensor(as_list_or_tensor(shape), name="shape", dtype=dtypes.int32)
        alpha = ops.convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = ops.convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        from ferroflow.ops.array_ops_extra import broadcast_dynamic_shape

        bshape = broadcast_dynamic_shape(array_ops.shape(alpha), array_ops.shape(beta))
        alpha_b = array_ops.broadcast_to(alpha, bshape)
        attrs = dict(_seed_attrs(seed), S=type_attr(shape.dtype), T=type_attr(dtype))
        rnd = make("RandomGamma", [shape, alpha_b], attrs)
        return math_ops.maximum(_tiny(dtype), math_ops.truediv(rnd, beta))


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """Poisson(lam) samples of shape ``shape + lam.shape`` (``RandomPoissonV2``); TF1's argument order."""
    with ops.name_scope(name, "random_poisson", [lam, shape]):
        shape = ops.convert_to_tensor(as_list_or_tensor(shape), name="shape", dtype=dtypes.int32)
        lam = ops.convert_to_tensor(lam, name="lam")
        attrs = dict(_seed_attrs(seed), S=type_attr(shape.dtype), R=type_attr(lam.dtype), dtype=type_attr(dtype))
        return make("RandomPoissonV2", [shape, lam], attrs)


def fold_in(seed, data, alg="auto_select"):
    """A new seed from ``seed`` and an integer ``data`` (TensorFlow's values)."""
    data = ops.convert_to_tensor(data)
    seed1 = stateless_random_uniform(shape=[], seed=seed, dtype=data.dtype, minval=None, maxval=None, alg=alg)
    return array_ops.stack([seed1, data])


def split(seed, num=2, alg="auto_select"):
    """``num`` new seeds (a ``[num, 2]`` tensor) from ``seed`` (TensorFlow's values)."""
    seed = _seed_tensor(seed)
    return stateless_random_uniform(shape=[num, 2], seed=seed, dtype=seed.dtype, minval=None, maxval=None, alg=alg)


def index_shuffle(index, seed, max_index, rounds=4, name=None):
    """A position in a random permutation of ``[0, max_index]`` keyed by a 3-element ``seed``
    (``RandomIndexShuffle``: a bijection, so distinct indices map to distinct positions)."""
    index = ops.convert_to_tensor(index, name="index")
    seed = ops.convert_to_tensor(seed, name="seed")
    max_index = ops.convert_to_tensor(max_index, dtype=index.dtype, name="max_index")
    attrs = {"dtype": type_attr(index.dtype), "Tseed": type_attr(seed.dtype), "rounds": int(rounds)}
    return make("RandomIndexShuffle", [index, seed, max_index], attrs, name)
