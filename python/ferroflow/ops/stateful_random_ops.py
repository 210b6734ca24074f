"""``tf.random.Generator`` for graphs: a variable holding the Philox state ``[counter_lo, counter_hi, key]`` (int64),
advanced by ``RngReadAndSkip`` and read by the stateless ``...V2`` ops, exactly as TensorFlow 2.21 builds it, so the
same seed gives TensorFlow's numbers. Also ``create_rng_state``, ``get_global_generator``, ``set_global_generator``.

TensorFlow keeps the state in a resource variable; ferroflow's graph variables are reference variables, so the
``RngReadAndSkip``/``StatefulRandomBinomial`` nodes take a reference to it (the values are TensorFlow's).
"""

from __future__ import annotations

import secrets

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import make, type_attr
from ferroflow.ops.stateless_random_ops import Algorithm, convert_alg_to_int

__all__ = ["Generator", "create_rng_state", "get_global_generator", "set_global_generator"]

_STATE_SIZE = {Algorithm.PHILOX.value: 3, Algorithm.THREEFRY.value: 2}
_SEED_BITS = 64


def _state_size(alg):
    if alg not in _STATE_SIZE:
        raise ValueError(f"Unsupported algorithm id: {alg}")
    return _STATE_SIZE[alg]


def _to_int64(x):
    x = int(x) & (2**64 - 1)
    return x - 2**64 if x >= 2**63 else x


def _make_1d_state(size, seed):
    """TensorFlow's ``_make_1d_state``: a Python int is chopped into 64-bit words (low first); sequences are
    truncated to ``size`` and zero-padded on the left."""
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        words = []
        for _ in range(size):
            words.append(seed & (2**64 - 1))
            seed >>= _SEED_BITS
        seed = words
    flat = [_to_int64(s) for s in np.asarray(seed).reshape(-1).tolist()][:size]
    return np.array([0] * (size - len(flat)) + flat, dtype=np.int64)


def create_rng_state(seed, alg):
    """The initial state of a generator of algorithm ``alg`` from an integer (or a sequence of integers) seed."""
    alg = convert_alg_to_int(alg)
    if alg == Algorithm.AUTO_SELECT.value:
        alg = Algorithm.PHILOX.value
    return ops.convert_to_tensor(_make_1d_state(_state_size(alg), seed), dtype=dtypes.int64)


def _shape_tensor(shape):
    from ferroflow.ops.stateless_random_ops import _shape_tensor as st

    return st(shape)


class Generator:
    """A random-number generator whose state lives in a variable (``tf.random.Generator``).

    Each draw reads the state and moves its counter on (``RngReadAndSkip``), then runs TensorFlow's stateless
    ``...V2`` op with the read key and counter, so successive runs give fresh numbers and a given seed replays
    TensorFlow's sequence.
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("When argument `copy_from` is not None, arguments `state` and `alg` must be None.")
            state, alg = copy_from.state.read_value(), copy_from.algorithm
        if state is None:
            raise ValueError("Argument `state` must be given (or use Generator.from_seed).")
        alg = convert_alg_to_int(Algorithm.PHILOX if alg is None else alg)
        if alg == Algorithm.AUTO_SELECT.value:
            alg = Algorithm.PHILOX.value
        if alg != Algorithm.PHILOX.value:
            raise ValueError(f"Unsupported algorithm id: {alg} (only Philox has CPU kernels)")
        self._alg = alg
        from ferroflow.ops.variables import Variable

        with ops.name_scope("random_generator"):
            init = ops.convert_to_tensor(state, dtype=dtypes.int64)
            self._state_var = Variable(init, trainable=False, name="StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose state is ``create_rng_state(seed, alg)``."""
        alg = convert_alg_to_int(Algorithm.PHILOX if alg is None else alg)
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy."""
        alg = convert_alg_to_int(Algorithm.PHILOX if alg is None else alg)
        size = _state_size(Algorithm.PHILOX.value if alg == Algorithm.AUTO_SELECT.value else alg)
        return cls(state=_make_1d_state(size, secrets.randbits(64 * size)), alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        counter = ops.convert_to_tensor(counter, dtype=dtypes.int64)
        key = array_ops.reshape(ops.convert_to_tensor(key, dtype=dtypes.int64), [1])
        return cls(state=array_ops.concat([counter, key], 0), alg=alg)

    @property
    def state(self):
        """The state variable (int64 ``[counter_lo, counter_hi, key]``)."""
        return self._state_var

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        return self._state_var.read_value()[-1]

    def reset(self, state):
        return self._state_var.assign(ops.convert_to_tensor(state, dtype=dtypes.int64))

    def reset_from_seed(self, seed):
        return self.reset(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key, counter):
        counter = ops.convert_to_tensor(counter, dtype=dtypes.int64)
        key = array_ops.reshape(ops.convert_to_tensor(key, dtype=dtypes.int64), [1])
        return self.reset(array_ops.concat([counter, key], 0))

    def skip(self, delta):
        """Moves the counter on as ``delta`` draws would (``RngReadAndSkip``); returns the state before."""
        alg = ops.convert_to_tensor(self._alg, dtype=dtypes.int32)
        delta = math_ops.cast(delta, dtypes.int64)
        return make("RngReadAndSkip", [self._state_var._ref(), alg, delta], {})

    def _prepare_key_counter(self, shape):
        delta = math_ops.reduce_prod(shape)
        ck = self.skip(delta)
        return ck[2:3], ck[:2]

    def _v2(self, op_type, shape, dtype, extra=(), name=None):
        key, counter = self._prepare_key_counter(shape)
        alg = ops.convert_to_tensor(self._alg, dtype=dtypes.int32, name="alg")
        attrs = {"Tshape": type_attr(shape.dtype)}
        if dtype is not None:
            attrs["dtype"] = type_attr(dtype)
        return make(op_type, [shape, key, counter, alg, *extra], attrs, name)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        with ops.name_scope(name, "stateful_normal", [shape, mean, stddev]) as scope:
            shape = _shape_tensor(shape)
            mean = ops.convert_to_tensor(mean, dtype=dtype, name="mean")
            stddev = ops.convert_to_tensor(stddev, dtype=dtype, name="stddev")
            rnd = self._v2("StatelessRandomNormalV2", shape, dtype)
            return math_ops.add(math_ops.multiply(rnd, stddev), mean, name=scope)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        with ops.name_scope(name, "truncated_normal", [shape, mean, stddev]) as scope:
            shape = _shape_tensor(shape)
            mean = ops.convert_to_tensor(mean, dtype=dtype, name="mean")
            stddev = ops.convert_to_tensor(stddev, dtype=dtype, name="stddev")
            rnd = self._v2("StatelessTruncatedNormalV2", shape, dtype)
            return math_ops.add(math_ops.multiply(rnd, stddev), mean, name=scope)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if (minval is None) != (maxval is None):
                raise ValueError(
                    f"For integer `dtype` argument {dtype}, argument `minval` and `maxval` must be both None or "
                    f"not None. Got `minval`={minval} and `maxval`={maxval}."
                )
            if minval is None:
                return self.uniform_full_int(shape=shape, dtype=dtype, name=name)
        elif maxval is None:
            maxval = 1
        with ops.name_scope(name, "stateful_uniform", [shape, minval, maxval]) as scope:
            shape = _shape_tensor(shape)
            lo = ops.convert_to_tensor(minval, dtype=dtype, name="min")
            hi = ops.convert_to_tensor(maxval, dtype=dtype, name="max")
            if dtype.is_integer:
                return self._v2("StatelessRandomUniformIntV2", shape, None, extra=(lo, hi), name=scope)
            rnd = self._v2("StatelessRandomUniformV2", shape, dtype)
            return math_ops.add(math_ops.multiply(rnd, math_ops.subtract(hi, lo)), lo, name=scope)

    def uniform_full_int(self, shape, dtype=dtypes.uint64, name=None):
        """Integers over the whole range of ``dtype`` (int32 or int64 here; uint64 is drawn as int64 bits)."""
        dtype = dtypes.as_dtype(dtype) if dtype in (dtypes.int32, dtypes.int64) else dtypes.int64
        with ops.name_scope(name, "stateful_uniform_full_int", [shape]) as scope:
            shape = _shape_tensor(shape)
            return self._v2("StatelessRandomUniformFullIntV2", shape, dtype, name=scope)

    def binomial(self, shape, counts, probs, dtype=dtypes.int32, name=None):
        """Binomial(counts, probs) samples (``StatefulRandomBinomial``)."""
        dtype = dtypes.as_dtype(dtype)
        with ops.name_scope(name, "binomial", [shape, counts, probs]) as scope:
            counts = ops.convert_to_tensor(counts, name="counts")
            probs = ops.convert_to_tensor(probs, name="probs")
            shape = _shape_tensor(shape)
            alg = ops.convert_to_tensor(self._alg, dtype=dtypes.int64, name="algorithm")
            attrs = {"S": type_attr(shape.dtype), "T": type_attr(counts.dtype), "dtype": type_attr(dtype)}
            return make("StatefulRandomBinomial", [self._state_var._ref(), alg, shape, counts, probs], attrs, scope)

    def _make_int64_keys(self, shape=()):
        return self.uniform_full_int(shape=shape, dtype=dtypes.int64)

    def make_seeds(self, count=1):
        """``[2, count]`` seeds for the stateless ops."""
        keys = self._make_int64_keys(shape=[count])
        zeros = array_ops.zeros_like(keys)
        return array_ops.stack([keys, zeros])

    def split(self, count=1):
        """``count`` new generators, each keyed by a draw from this one."""
        keys = self._make_int64_keys(shape=[count])
        return [
            Generator(state=array_ops.concat([array_ops.zeros([2], dtypes.int64), array_ops.reshape(keys[i], [1])], 0),
                      alg=self._alg)
            for i in range(count)
        ]


_global_generator = None


def get_global_generator():
    """The global generator (created from non-deterministic state on first use)."""
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


def set_global_generator(generator):
    """Replaces the global generator (ops built with the old one keep using it)."""
    global _global_generator
    _global_generator = generator
