"""TF1's probability distributions (``tf.compat.v1.distributions``), the part of them
classic programs use: ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical``, ``Gamma``,
``Exponential``, ``Beta``, ``Laplace``, ``StudentT``, ``Dirichlet`` and ``Multinomial`` with ``sample``,
``log_prob``/``prob``, ``cdf``/``log_cdf``/``survival_function``, ``entropy``, ``mean``/``mode``/
``stddev``/``variance``, ``kl_divergence`` and ``cross_entropy``, plus ``kl_divergence`` with its
``RegisterKL`` registry (Normal, Bernoulli, Categorical, Gamma, Beta and Dirichlet pairs registered).

The formulas are TensorFlow's (the same ops in the same order), so results agree with it to rounding.
Samples come from the same random ops with the same seeds, which give TensorFlow's bits.
Not provided: DirichletMultinomial.
"""

import math

import numpy as np

from ferroflow.framework import dtypes, ops, tensor_shape, tensor_util
from ferroflow.ops import (
    array_ops,
    array_ops_extra,
    check_ops,
    functional_ops,
    linalg_ops,
    math_ops,
    nn_ops,
    random_ops,
    special_math_ops,
    stateless_random_ops,
)

__all__ = [
    "Bernoulli",
    "Beta",
    "Categorical",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "FULLY_REPARAMETERIZED",
    "Gamma",
    "Laplace",
    "Multinomial",
    "NOT_REPARAMETERIZED",
    "Normal",
    "RegisterKL",
    "ReparameterizationType",
    "StudentT",
    "Uniform",
    "kl_divergence",
]


class ReparameterizationType:
    """Whether samples can be differentiated with respect to the parameters."""

    def __init__(self, rep_type):
        self._rep_type = rep_type

    def __repr__(self):
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def _scope_name(name):
    """The distribution's name scope, "/"-terminated as TensorFlow keeps it: its methods re-enter that scope
    ("q/log_prob/..."), and a name that is not yet a scope becomes a fresh unique one."""
    if name.endswith("/"):
        return name
    with ops.name_scope(name) as scope:
        return scope


class Distribution:
    """Base class: sample shapes, name scopes and the public methods over the subclasses' ``_`` methods."""

    def __init__(
        self,
        dtype,
        reparameterization_type,
        validate_args,
        allow_nan_stats,
        parameters=None,
        graph_parents=None,
        name=None,
    ):
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args = validate_args
        self._allow_nan_stats = allow_nan_stats
        self._parameters = dict(parameters or {})
        self._parameters.pop("self", None)
        self._graph_parents = list(graph_parents or [])
        self._name = _scope_name(name or type(self).__name__)

    def _init_params(self, name, params, validate_args, allow_nan_stats, parameters, positive=(),
                     reparameterization_type=None, derived=None):
        """The constructor of a distribution over float parameters: inside the ``name`` scope the
        ``params`` (name -> value, in order) become tensors of one float dtype kept as ``self._<name>``
        (checked positive where ``positive`` names them and ``validate_args`` asks), then ``derived()``
        may add more (name -> tensor) in the same scope; all of them are the graph parents."""
        with ops.name_scope(name, values=list(params.values())) as scope:
            tensors, dtype = _float_params(list(params.items()), validate_args, positive=positive)
            named = dict(zip(params, tensors))
            for k, t in named.items():
                setattr(self, "_" + k, t)
            for k, t in (derived() if derived is not None else {}).items():
                setattr(self, "_" + k, t)
                named[k] = t
        Distribution.__init__(
            self,
            dtype,
            FULLY_REPARAMETERIZED if reparameterization_type is None else reparameterization_type,
            validate_args,
            allow_nan_stats,
            parameters,
            list(named.values()),
            scope,
        )

    # Properties.
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def parameters(self):
        return dict(self._parameters)

    @property
    def reparameterization_type(self):
        return self._reparameterization_type

    @property
    def allow_nan_stats(self):
        return self._allow_nan_stats

    @property
    def validate_args(self):
        return self._validate_args

    @property
    def batch_shape(self):
        return tensor_shape.TensorShape(self._batch_shape())

    @property
    def event_shape(self):
        return tensor_shape.TensorShape(self._event_shape())

    def copy(self, **override_parameters_kwargs):
        parameters = dict(self.parameters, **override_parameters_kwargs)
        return type(self)(**parameters)

    def _name_scope(self, name, values=None):
        return _NestedScope(self.name, name, list(values or []) + self._graph_parents)

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return ops.convert_to_tensor(
                    self.batch_shape.as_list(), dtype=dtypes.int32, name="batch_shape"
                )
            return self._batch_shape_tensor()

    def event_shape_tensor(self, name="event_shape_tensor"):
        with self._name_scope(name):
            if self.event_shape.is_fully_defined():
                return ops.convert_to_tensor(
                    self.event_shape.as_list(), dtype=dtypes.int32, name="event_shape"
                )
            return self._event_shape_tensor()

    def is_scalar_event(self, name="is_scalar_event"):
        with self._name_scope(name):
            return ops.convert_to_tensor(self.event_shape.ndims == 0, name="is_scalar_event")

    def is_scalar_batch(self, name="is_scalar_batch"):
        with self._name_scope(name):
            return ops.convert_to_tensor(self.batch_shape.ndims == 0, name="is_scalar_batch")

    # Sampling.
    def sample(self, sample_shape=(), seed=None, name="sample"):
        with self._name_scope(name, values=[sample_shape]):
            static = tensor_util.constant_value(ops.convert_to_tensor(sample_shape, dtype=dtypes.int32))
            sample_shape = ops.convert_to_tensor(sample_shape, dtype=dtypes.int32, name="sample_shape")
            if sample_shape.shape.ndims == 0:
                sample_shape = array_ops.reshape(sample_shape, [1])
                static = None if static is None else np.reshape(static, [1])
            n = math_ops.reduce_prod(sample_shape)
            samples = self._sample_n(n, seed)
            final_shape = array_ops.concat([sample_shape, array_ops.shape(samples)[1:]], 0)
            samples = array_ops.reshape(samples, final_shape)
            if static is not None:
                head = tensor_shape.TensorShape([int(d) for d in static])
                samples.set_shape(head.concatenate(self.batch_shape).concatenate(self.event_shape))
            return samples

    # Densities and statistics.
    def _call(self, method, name, value=None):
        with self._name_scope(name, values=[] if value is None else [value]):
            if value is None:
                return getattr(self, method)()
            value = ops.convert_to_tensor(value, name="value", dtype=self._value_dtype())
            return getattr(self, method)(value)

    def _value_dtype(self):
        return self.dtype

    def log_prob(self, value, name="log_prob"):
        return self._call("_log_prob", name, value)

    def prob(self, value, name="prob"):
        return self._call("_prob", name, value)

    def _prob(self, value):
        return math_ops.exp(self._log_prob(value))

    def log_cdf(self, value, name="log_cdf"):
        return self._call("_log_cdf", name, value)

    def _log_cdf(self, value):
        return math_ops.log(self._cdf(value))

    def cdf(self, value, name="cdf"):
        return self._call("_cdf", name, value)

    def log_survival_function(self, value, name="log_survival_function"):
        return self._call("_log_survival_function", name, value)

    def _log_survival_function(self, value):
        return math_ops.log1p(-self._cdf(value))

    def survival_function(self, value, name="survival_function"):
        return self._call("_survival_function", name, value)

    def _survival_function(self, value):
        return 1.0 - self._cdf(value)

    def quantile(self, value, name="quantile"):
        return self._call("_quantile", name, value)

    def entropy(self, name="entropy"):
        return self._call("_entropy", name)

    def mean(self, name="mean"):
        return self._call("_mean", name)

    def mode(self, name="mode"):
        return self._call("_mode", name)

    def variance(self, name="variance"):
        return self._call("_variance", name)

    def _variance(self):
        return math_ops.square(self._stddev())

    def stddev(self, name="stddev"):
        return self._call("_stddev", name)

    def _stddev(self):
        return math_ops.sqrt(self._variance())

    def covariance(self, name="covariance"):
        if not hasattr(self, "_covariance"):
            raise NotImplementedError(f"covariance is not implemented: {type(self).__name__}")
        return self._call("_covariance", name)

    def cross_entropy(self, other, name="cross_entropy"):
        with self._name_scope(name):
            return self._entropy() + kl_divergence(self, other)

    def kl_divergence(self, other, name="kl_divergence"):
        with self._name_scope(name):
            return kl_divergence(self, other)

    def __str__(self):
        return f'tf.distributions.{type(self).__name__}("{self.name}", batch_shape={self.batch_shape}, event_shape={self.event_shape}, dtype={self.dtype.name})'

    def __repr__(self):
        return f"<tf.distributions.{type(self).__name__} '{self.name}' batch_shape={self.batch_shape} event_shape={self.event_shape} dtype={self.dtype.name}>"

    # Defaults for subclasses.
    # The parameters whose broadcast shape is the batch shape (subclasses name them).
    _batch_params = ()

    def _batch_shape_tensor(self):
        shapes = [array_ops.shape(getattr(self, p)) for p in self._batch_params]
        out = shapes[0]
        for s in shapes[1:]:
            out = array_ops_extra.broadcast_dynamic_shape(out, s)
        return out

    def _batch_shape(self):
        shapes = [getattr(self, p).shape for p in self._batch_params]
        out = shapes[0]
        for s in shapes[1:]:
            out = array_ops_extra.broadcast_static_shape(out, s)
        return out

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _event_shape(self):
        return []

    def _event_shape_tensor(self):
        return ops.convert_to_tensor([], dtype=dtypes.int32)


class _NestedScope:
    """``with name_scope(distribution name): with name_scope(method name):``, as TensorFlow's methods open."""

    def __init__(self, outer, inner, values):
        self._outer = ops.name_scope(outer, values=values)
        self._inner = ops.name_scope(inner, values=values)

    def __enter__(self):
        self._outer.__enter__()
        return self._inner.__enter__()

    def __exit__(self, *exc):
        self._inner.__exit__(*exc)
        return self._outer.__exit__(*exc)


def _float_params(names_values, validate_args, positive=()):
    """Convert the parameters to tensors of one float dtype (TF's assert_same_float_dtype)."""
    tensors = [ops.convert_to_tensor(v, name=n) for n, v in names_values]
    dtype = check_ops.assert_same_float_dtype(tensors)
    deps = []
    if validate_args:
        deps = [check_ops.assert_positive(t) for (n, _), t in zip(names_values, tensors) if n in positive]
    with ops.control_dependencies(deps):
        tensors = [array_ops.identity(t, name=n) for (n, _), t in zip(names_values, tensors)]
    return tensors, dtype


# Standard normal CDF and its logarithm (TensorFlow's special_math.ndtr/log_ndtr: the same segments).
def _ndtr(x):
    half_sqrt_2 = 0.5 * math.sqrt(2.0)
    w = x * half_sqrt_2
    z = math_ops.abs(w)
    y = array_ops.where(
        math_ops.less(z, half_sqrt_2),
        1.0 + special_math_ops.erf(w),
        array_ops.where(math_ops.greater(w, 0.0), 2.0 - special_math_ops.erfc(z), special_math_ops.erfc(z)),
    )
    return 0.5 * y


def _log_ndtr(x, series_order=3):
    if x.dtype == dtypes.float64:
        lower, upper = -20.0, 8.0
    else:
        lower, upper = -10.0, 5.0
    x_low = math_ops.minimum(x, lower)
    x_2 = math_ops.square(x_low)
    even_sum = array_ops.zeros_like(x_low)
    odd_sum = array_ops.zeros_like(x_low)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = float(np.prod(np.arange(2 * n - 1, 0, -2))) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    series = 1.0 + even_sum - odd_sum
    log_lower = -0.5 * x_2 - math_ops.log(-x_low) - 0.5 * math.log(2.0 * math.pi) + math_ops.log(series)
    return array_ops.where(
        math_ops.greater(x, upper),
        -_ndtr(-x),
        array_ops.where(
            math_ops.greater(x, lower), math_ops.log(_ndtr(math_ops.maximum(x, lower))), log_lower
        ),
    )


class Normal(Distribution):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``."""

    _batch_params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        parameters = dict(locals())
        self._init_params(name, {"loc": loc, "scale": scale}, validate_args, allow_nan_stats, parameters,
                          positive=("scale",))

    @staticmethod
    def param_shapes(sample_shape, name="NormalParamShapes"):
        s = ops.convert_to_tensor(sample_shape, dtype=dtypes.int32, name=name)
        return {"loc": s, "scale": s}

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        sampled = random_ops.random_normal(shape=shape, mean=0.0, stddev=1.0, dtype=self.loc.dtype, seed=seed)
        return sampled * self.scale + self.loc

    def _z(self, x):
        with ops.name_scope("standardize", values=[x]):
            return (x - self.loc) / self.scale

    def _log_prob(self, x):
        log_unnormalized = -0.5 * math_ops.square(self._z(x))
        log_normalization = 0.5 * math.log(2.0 * math.pi) + math_ops.log(self.scale)
        return log_unnormalized - log_normalization

    def _log_cdf(self, x):
        return _log_ndtr(self._z(x))

    def _cdf(self, x):
        return _ndtr(self._z(x))

    def _log_survival_function(self, x):
        return _log_ndtr(-self._z(x))

    def _survival_function(self, x):
        return _ndtr(-self._z(x))

    def _quantile(self, p):
        return self.loc + self.scale * special_math_ops.ndtri(p)

    def _entropy(self):
        scale = self.scale * array_ops.ones_like(self.loc)
        return 0.5 * math.log(2.0 * math.pi * math.e) + math_ops.log(scale)

    def _mean(self):
        return self.loc * array_ops.ones_like(self.scale)

    def _stddev(self):
        return self.scale * array_ops.ones_like(self.loc)

    _mode = _mean


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``."""

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True, name="Uniform"):
        parameters = dict(locals())
        with ops.name_scope(name, values=[low, high]) as scope:
            (self._low, self._high), dtype = _float_params([("low", low), ("high", high)], False)
            if validate_args:
                with ops.control_dependencies(
                    [
                        check_ops.assert_less(
                            self._low, self._high, message="uniform not defined when low >= high."
                        )
                    ]
                ):
                    self._low = array_ops.identity(self._low)
                    self._high = array_ops.identity(self._high)
        super().__init__(
            dtype,
            FULLY_REPARAMETERIZED,
            validate_args,
            allow_nan_stats,
            parameters,
            [self._low, self._high],
            scope,
        )

    @property
    def low(self):
        return self._low

    @property
    def high(self):
        return self._high

    def range(self, name="range"):
        with self._name_scope(name):
            return self.high - self.low

    _batch_params = ("low", "high")

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        samples = random_ops.random_uniform(shape=shape, dtype=self.dtype, seed=seed)
        return self.low + self.range() * samples

    def _prob(self, x):
        broadcasted_x = x * array_ops.ones(self.batch_shape_tensor(), dtype=x.dtype)
        return array_ops.where(
            math_ops.is_nan(broadcasted_x),
            broadcasted_x,
            array_ops.where(
                math_ops.logical_or(broadcasted_x < self.low, broadcasted_x >= self.high),
                array_ops.zeros_like(broadcasted_x),
                array_ops.ones_like(broadcasted_x) / self.range(),
            ),
        )

    def _log_prob(self, x):
        return math_ops.log(self._prob(x))

    def _cdf(self, x):
        broadcast_shape = array_ops_extra.broadcast_dynamic_shape(
            array_ops.shape(x), self.batch_shape_tensor()
        )
        zeros = array_ops.zeros(broadcast_shape, dtype=self.dtype)
        ones = array_ops.ones(broadcast_shape, dtype=self.dtype)
        broadcasted_x = x * ones
        result_if_not_big = array_ops.where(x < self.low, zeros, (broadcasted_x - self.low) / self.range())
        return array_ops.where(x >= self.high, ones, result_if_not_big)

    def _entropy(self):
        return math_ops.log(self.range())

    def _mean(self):
        return (self.low + self.high) / 2.0

    def _variance(self):
        return math_ops.square(self.range()) / 12.0

    def _stddev(self):
        return self.range() / math.sqrt(12.0)


def _logits_and_probs(logits, probs, multidimensional, validate_args, dtype=None):
    """One of logits/probs given: the other derived as TensorFlow's get_logits_and_probs does."""
    if (probs is None) == (logits is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if probs is None:
        logits = ops.convert_to_tensor(logits, name="logits", dtype=dtype)
        if not logits.dtype.is_floating:
            raise TypeError("logits must having floating type.")
        with ops.name_scope("probs"):
            probs = nn_ops.softmax(logits) if multidimensional else math_ops.sigmoid(logits)
        return logits, probs
    probs = ops.convert_to_tensor(probs, name="probs", dtype=dtype)
    if not probs.dtype.is_floating:
        raise TypeError("probs must having floating type.")
    if validate_args:
        deps = [
            check_ops.assert_non_negative(probs, message="probs has components less than 0."),
            check_ops.assert_less_equal(probs, 1.0, message="probs has components greater than 1."),
        ]
        with ops.control_dependencies(deps):
            probs = array_ops.identity(probs)
    with ops.name_scope("logits"):
        if multidimensional:
            logits = math_ops.log(probs)
        else:
            logits = math_ops.log(probs) - math_ops.log1p(-1.0 * probs)
    return logits, probs


class Bernoulli(Distribution):
    """Bernoulli distribution over {0, 1}, parameterized by ``logits`` or ``probs`` (P[1])."""

    def __init__(
        self,
        logits=None,
        probs=None,
        dtype=dtypes.int32,
        validate_args=False,
        allow_nan_stats=True,
        name="Bernoulli",
    ):
        parameters = dict(locals())
        with ops.name_scope(name) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs, False, validate_args)
        super().__init__(
            dtypes.as_dtype(dtype),
            NOT_REPARAMETERIZED,
            validate_args,
            allow_nan_stats,
            parameters,
            [self._logits, self._probs],
            scope,
        )

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

    def _value_dtype(self):
        return None

    _batch_params = ("logits",)

    def _sample_n(self, n, seed=None):
        new_shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        uniform = random_ops.random_uniform(new_shape, seed=seed, dtype=self.probs.dtype)
        sample = math_ops.less(uniform, self.probs)
        return array_ops.cast(sample, self.dtype)

    def _log_prob(self, event):
        event = array_ops.cast(event, self.logits.dtype)
        logits = self.logits
        if not (
            event.shape.is_fully_defined() and logits.shape.is_fully_defined() and event.shape == logits.shape
        ):
            logits, event = array_ops.ones_like(event) * logits, array_ops.ones_like(logits) * event
        return -nn_ops.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return -self.logits * (math_ops.sigmoid(self.logits) - 1) + nn_ops.softplus(-self.logits)

    def _mean(self):
        return array_ops.identity(self.probs)

    def _variance(self):
        return self._mean() * (1.0 - self.probs)

    def _mode(self):
        return array_ops.cast(math_ops.greater(self.probs, 0.5), self.dtype)


class Categorical(Distribution):
    """Categorical distribution over ``{0, ..., K-1}``, parameterized by ``logits`` or ``probs`` ([..., K])."""

    def __init__(
        self,
        logits=None,
        probs=None,
        dtype=dtypes.int32,
        validate_args=False,
        allow_nan_stats=True,
        name="Categorical",
    ):
        parameters = dict(locals())
        with ops.name_scope(name, values=[logits, probs]) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs, True, validate_args)
            ndims = self._logits.shape.ndims
            if ndims == 0:
                raise ValueError("logits/probs of a Categorical need at least one dimension, got a scalar")
            self._event_size = (
                self._logits.shape.dims[-1].value
                if ndims is not None and self._logits.shape.dims[-1].value is not None
                else array_ops.shape(self._logits, name="event_size")[-1]
            )
        super().__init__(
            dtypes.as_dtype(dtype),
            NOT_REPARAMETERIZED,
            validate_args,
            allow_nan_stats,
            parameters,
            [self._logits, self._probs],
            scope,
        )

    @property
    def event_size(self):
        return self._event_size

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

    def _value_dtype(self):
        return None

    def _batch_shape_tensor(self):
        return array_ops.shape(self.logits)[:-1]

    def _batch_shape(self):
        return self.logits.shape[:-1]

    def _sample_n(self, n, seed=None):
        if self.logits.shape.ndims == 2:
            logits_2d = self.logits
        else:
            logits_2d = array_ops.reshape(self.logits, [-1, self.event_size])
        sample_dtype = dtypes.int64 if self.dtype.size > 4 else dtypes.int32
        draws = stateless_random_ops.multinomial(logits_2d, n, seed=seed, output_dtype=sample_dtype)
        draws = array_ops.reshape(
            array_ops.transpose(draws), array_ops.concat([[n], self.batch_shape_tensor()], 0)
        )
        return array_ops.cast(draws, self.dtype)

    def _log_prob(self, k):
        if self.logits.shape[:-1] == k.shape:
            logits = self.logits
        else:
            logits = self.logits * array_ops.ones_like(array_ops.expand_dims(k, -1), dtype=self.logits.dtype)
            logits_shape = array_ops.shape(logits)[:-1]
            k = k * array_ops.ones(logits_shape, dtype=k.dtype)
            k.set_shape(logits.shape[:-1])
        return -nn_ops.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self):
        return -math_ops.reduce_sum(nn_ops.log_softmax(self.logits) * self.probs, axis=-1)

    def _mode(self):
        ret = math_ops.argmax(self.logits, axis=-1)
        ret = array_ops.cast(ret, self.dtype)
        ret.set_shape(self.batch_shape)
        return ret

    def _mean(self):
        raise NotImplementedError("mean is not implemented: Categorical")

    def _variance(self):
        raise NotImplementedError("variance is not implemented: Categorical")


def _nan_where_undefined(mode, defined, allow_nan_stats, message):
    """``mode`` where ``defined``, NaN elsewhere (or an assertion when NaN statistics are not allowed)."""
    if allow_nan_stats:
        nan = array_ops.fill(array_ops.shape(mode), np.array(np.nan, dtype=mode.dtype.as_numpy_dtype))
        return array_ops.where(defined, mode, nan)
    with ops.control_dependencies([check_ops.assert_equal(math_ops.reduce_all(defined), True, message=message)]):
        return array_ops.identity(mode)


class Gamma(Distribution):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``."""

    _batch_params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True, name="Gamma"):
        parameters = dict(locals())
        self._init_params(name, {"concentration": concentration, "rate": rate}, validate_args, allow_nan_stats,
                          parameters, positive=("concentration", "rate"))

    @property
    def concentration(self):
        return self._concentration

    @property
    def rate(self):
        return self._rate

    def _sample_n(self, n, seed=None):
        return stateless_random_ops.random_gamma(
            shape=[n], alpha=self.concentration, beta=self.rate, dtype=self.dtype, seed=seed
        )

    def _log_unnormalized_prob(self, x):
        return special_math_ops.xlogy(self.concentration - 1.0, x) - self.rate * x

    def _log_normalization(self):
        return special_math_ops.lgamma(self.concentration) - self.concentration * math_ops.log(self.rate)

    def _cdf(self, x):
        return special_math_ops.igamma(self.concentration, self.rate * x)

    def _entropy(self):
        return (
            self.concentration
            - math_ops.log(self.rate)
            + special_math_ops.lgamma(self.concentration)
            + (1.0 - self.concentration) * special_math_ops.digamma(self.concentration)
        )

    def _mean(self):
        return self.concentration / self.rate

    def _variance(self):
        return self.concentration / math_ops.square(self.rate)

    def _stddev(self):
        return math_ops.sqrt(self.concentration) / self.rate

    def _mode(self):
        mode = (self.concentration - 1.0) / self.rate
        return _nan_where_undefined(mode, self.concentration > 1.0, self.allow_nan_stats,
                                    "mode not defined when any concentration <= 1")


class Exponential(Gamma):
    """The exponential distribution with inverse scale ``rate`` (a Gamma of concentration 1)."""

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        parameters = dict(locals())
        with ops.name_scope(name, values=[rate]) as scope:
            self._rate = ops.convert_to_tensor(rate, name="rate")
        super().__init__(
            concentration=array_ops.ones_like(self._rate),
            rate=self._rate,
            allow_nan_stats=allow_nan_stats,
            validate_args=validate_args,
            name=scope,
        )
        self._parameters = parameters
        self._graph_parents = [self._rate]

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], array_ops.shape(self._rate)], 0)
        # Uniform in (0, 1): the smallest normal number as the lower bound keeps log() finite.
        sampled = random_ops.random_uniform(
            shape, minval=np.finfo(self.dtype.as_numpy_dtype).tiny, maxval=1.0, seed=seed, dtype=self.dtype
        )
        return -math_ops.log(sampled) / self._rate


class Beta(Distribution):
    """The beta distribution on (0, 1) with concentrations ``concentration1`` (alpha) and
    ``concentration0`` (beta)."""

    def __init__(self, concentration1=None, concentration0=None, validate_args=False, allow_nan_stats=True,
                 name="Beta"):
        parameters = dict(locals())
        self._init_params(
            name, {"concentration1": concentration1, "concentration0": concentration0}, validate_args,
            allow_nan_stats, parameters, positive=("concentration1", "concentration0"),
            derived=lambda: {"total_concentration": self._concentration1 + self._concentration0},
        )

    @property
    def concentration1(self):
        return self._concentration1

    @property
    def concentration0(self):
        return self._concentration0

    @property
    def total_concentration(self):
        return self._total_concentration

    _batch_params = ("total_concentration",)

    def _sample_n(self, n, seed=None):
        ones = array_ops.ones_like(self.total_concentration, dtype=self.dtype)
        gamma1 = stateless_random_ops.random_gamma(
            shape=[n], alpha=ones * self.concentration1, dtype=self.dtype, seed=seed
        )
        gamma2 = stateless_random_ops.random_gamma(
            shape=[n], alpha=ones * self.concentration0, dtype=self.dtype, seed=_new_seed(seed, "beta")
        )
        return gamma1 / (gamma1 + gamma2)

    def _log_unnormalized_prob(self, x):
        return special_math_ops.xlogy(self.concentration1 - 1.0, x) + (self.concentration0 - 1.0) * math_ops.log1p(-x)

    def _log_normalization(self):
        return (
            special_math_ops.lgamma(self.concentration1)
            + special_math_ops.lgamma(self.concentration0)
            - special_math_ops.lgamma(self.total_concentration)
        )

    def _cdf(self, x):
        return special_math_ops.betainc(self.concentration1, self.concentration0, x)

    def _entropy(self):
        return (
            self._log_normalization()
            - (self.concentration1 - 1.0) * special_math_ops.digamma(self.concentration1)
            - (self.concentration0 - 1.0) * special_math_ops.digamma(self.concentration0)
            + (self.total_concentration - 2.0) * special_math_ops.digamma(self.total_concentration)
        )

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        return self._mean() * (1.0 - self._mean()) / (1.0 + self.total_concentration)

    def _mode(self):
        mode = (self.concentration1 - 1.0) / (self.total_concentration - 2.0)
        defined = math_ops.logical_and(self.concentration1 > 1.0, self.concentration0 > 1.0)
        return _nan_where_undefined(mode, defined, self.allow_nan_stats,
                                    "Mode undefined for concentration1 <= 1 or concentration0 <= 1.")


def _new_seed(seed, salt):
    """TF's distribution_util.gen_new_seed: a second op seed derived from ``seed`` and ``salt``."""
    if seed is None:
        return None
    import hashlib

    return int(hashlib.md5((str(seed) + salt).encode("utf-8")).hexdigest()[:8], 16) & 0x7FFFFFFF


class Laplace(Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``."""

    _batch_params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Laplace"):
        parameters = dict(locals())
        self._init_params(name, {"loc": loc, "scale": scale}, validate_args, allow_nan_stats, parameters,
                          positive=("scale",))

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        # Uniform in the open interval (-1, 1): -1 itself would give an infinite sample.
        np_dtype = self.dtype.as_numpy_dtype
        uniform_samples = random_ops.random_uniform(
            shape=shape, minval=np.nextafter(np_dtype(-1.0), np_dtype(0.0)), maxval=1.0, dtype=self.dtype,
            seed=seed,
        )
        return self.loc - self.scale * math_ops.sign(uniform_samples) * math_ops.log1p(
            -math_ops.abs(uniform_samples)
        )

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _log_prob(self, x):
        return -math_ops.abs(self._z(x)) - (math.log(2.0) + math_ops.log(self.scale))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 - 0.5 * math_ops.sign(z) * math_ops.expm1(-math_ops.abs(z))

    def _log_cdf(self, x):
        z = self._z(x)
        # TF's special_math.log_cdf_laplace: each branch where it is accurate.
        lower = math.log(0.5) + z
        safe_exp_neg_z = math_ops.exp(-math_ops.abs(z))
        upper = math_ops.log1p(-0.5 * safe_exp_neg_z)
        return array_ops.where(z < 0.0, lower, upper)

    def _entropy(self):
        scale = self.scale + array_ops.zeros_like(self.loc)
        return math.log(2.0) + 1.0 + math_ops.log(scale)

    def _mean(self):
        return self.loc + array_ops.zeros_like(self.scale)

    def _stddev(self):
        return math.sqrt(2.0) * self.scale + array_ops.zeros_like(self.loc)

    _mode = _mean


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""

    _batch_params = ("df", "loc", "scale")

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True, name="StudentT"):
        parameters = dict(locals())
        self._init_params(name, {"df": df, "loc": loc, "scale": scale}, validate_args, allow_nan_stats, parameters,
                          positive=("df", "scale"))

    @property
    def df(self):
        return self._df

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _ones(self):
        return array_ops.ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _sample_n(self, n, seed=None):
        # X / sqrt(Z / df) with X ~ Normal(0, 1), Z ~ Chi2(df) = Gamma(df / 2, 1 / 2).
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        normal = random_ops.random_normal(shape, dtype=self.dtype, seed=seed)
        df = self.df * self._ones()
        gamma = stateless_random_ops.random_gamma(
            [n], 0.5 * df, beta=0.5, dtype=self.dtype, seed=_new_seed(seed, "student_t")
        )
        return normal * math_ops.rsqrt(gamma / df) * self.scale + self.loc

    def _log_unnormalized_prob(self, x):
        y = (x - self.loc) / self.scale
        return -0.5 * (self.df + 1.0) * math_ops.log1p(y**2.0 / self.df)

    def _log_normalization(self):
        return (
            math_ops.log(math_ops.abs(self.scale))
            + 0.5 * math_ops.log(self.df)
            + 0.5 * np.log(np.pi)
            + special_math_ops.lgamma(0.5 * self.df)
            - special_math_ops.lgamma(0.5 * (self.df + 1.0))
        )

    def _cdf(self, x):
        y = (x - self.loc) / math_ops.abs(self.scale)
        x_t = self.df / (y**2.0 + self.df)
        neg_cdf = 0.5 * special_math_ops.betainc(0.5 * self.df, 0.5, x_t)
        return array_ops.where(math_ops.less(y, 0.0), neg_cdf, 1.0 - neg_cdf)

    def _entropy(self):
        v = array_ops.expand_dims(self._ones(), -1)
        u = v * array_ops.expand_dims(self.df, -1)
        beta_arg = array_ops.concat([u, v], -1) / 2.0
        return (
            math_ops.log(math_ops.abs(self.scale))
            + 0.5 * math_ops.log(self.df)
            + special_math_ops.lbeta(beta_arg)
            + 0.5 * (self.df + 1.0)
            * (special_math_ops.digamma(0.5 * (self.df + 1.0)) - special_math_ops.digamma(0.5 * self.df))
        )

    def _mean(self):
        return _nan_where_undefined(self.loc * self._ones(), math_ops.greater(self.df, self._ones()),
                                    self.allow_nan_stats, "mean not defined for components of df <= 1")

    def _variance(self):
        # The inner where keeps NaN out of the gradient for df <= 2.
        denom = array_ops.where(math_ops.greater(self.df, 2.0), self.df - 2.0, array_ops.ones_like(self.df))
        var = self._ones() * math_ops.square(self.scale) * self.df / denom
        inf = array_ops.fill(self.batch_shape_tensor(), np.array(np.inf, dtype=self.dtype.as_numpy_dtype))
        defined = array_ops.where(self.df > array_ops.fill(self.batch_shape_tensor(), 2.0), var, inf)
        return _nan_where_undefined(defined, math_ops.greater(self.df, self._ones()), self.allow_nan_stats,
                                    "variance not defined for components of df <= 1")

    def _mode(self):
        return array_ops.identity(self.loc)


class Dirichlet(Distribution):
    """The Dirichlet distribution over the probability simplex, with ``concentration`` (alpha) in its last
    dimension: batch shape ``concentration.shape[:-1]``, event shape ``[k]``."""

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True, name="Dirichlet"):
        parameters = dict(locals())
        self._init_params(
            name, {"concentration": concentration}, validate_args, allow_nan_stats, parameters,
            positive=("concentration",),
            derived=lambda: {"total_concentration": math_ops.reduce_sum(self._concentration, -1)},
        )

    @property
    def concentration(self):
        return self._concentration

    @property
    def total_concentration(self):
        return self._total_concentration

    _batch_params = ("total_concentration",)

    def _event_shape_tensor(self):
        return array_ops.shape(self.concentration)[-1:]

    def _event_shape(self):
        return self.concentration.shape.with_rank_at_least(1)[-1:]

    def _k(self):
        return math_ops.cast(self.event_shape_tensor()[0], self.dtype)

    def _sample_n(self, n, seed=None):
        gamma = stateless_random_ops.random_gamma(shape=[n], alpha=self.concentration, dtype=self.dtype, seed=seed)
        return gamma / math_ops.reduce_sum(gamma, -1, keepdims=True)

    def _log_unnormalized_prob(self, x):
        return math_ops.reduce_sum(special_math_ops.xlogy(self.concentration - 1.0, x), -1)

    def _log_normalization(self):
        return special_math_ops.lbeta(self.concentration)

    def _entropy(self):
        return (
            self._log_normalization()
            + (self.total_concentration - self._k()) * special_math_ops.digamma(self.total_concentration)
            - math_ops.reduce_sum((self.concentration - 1.0) * special_math_ops.digamma(self.concentration), -1)
        )

    def _mean(self):
        return self.concentration / array_ops.expand_dims(self.total_concentration, -1)

    def _scale_term(self):
        return math_ops.rsqrt(1.0 + array_ops.expand_dims(self.total_concentration, -1))

    def _variance(self):
        scale = self._scale_term()
        x = scale * self._mean()
        return x * (scale - x)

    def _covariance(self):
        x = self._scale_term() * self._mean()
        outer = math_ops.matmul(array_ops.expand_dims(x, -1), array_ops.expand_dims(x, -2))
        return linalg_ops.matrix_set_diag(-outer, self._variance())

    def _mode(self):
        mode = (self.concentration - 1.0) / (array_ops.expand_dims(self.total_concentration, -1) - self._k())
        defined = math_ops.reduce_all(self.concentration > 1.0, axis=-1, keepdims=True)
        defined = math_ops.logical_and(defined, array_ops.ones_like(mode, dtype=dtypes.bool))
        return _nan_where_undefined(mode, defined, self.allow_nan_stats, "Mode undefined when any concentration <= 1")


class Multinomial(Distribution):
    """Counts of ``total_count`` draws over ``k`` classes of probabilities ``probs`` (or ``logits``) in the
    last dimension: batch shape the broadcast of ``total_count`` and ``probs.shape[:-1]``, event shape ``[k]``."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False, allow_nan_stats=True,
                 name="Multinomial"):
        parameters = dict(locals())
        with ops.name_scope(name, values=[total_count, logits, probs]) as scope:
            self._total_count = ops.convert_to_tensor(total_count, name="total_count")
            self._logits, self._probs = _logits_and_probs(logits, probs, True, validate_args)
            self._mean_val = array_ops.expand_dims(self._total_count, -1) * self._probs
        super().__init__(
            self._probs.dtype,
            NOT_REPARAMETERIZED,
            validate_args,
            allow_nan_stats,
            parameters,
            [self._total_count, self._logits, self._probs],
            scope,
        )

    @property
    def total_count(self):
        return self._total_count

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

    def _batch_shape_tensor(self):
        return array_ops.shape(self._mean_val)[:-1]

    def _batch_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[:-1]

    def _event_shape_tensor(self):
        return array_ops.shape(self._mean_val)[-1:]

    def _event_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[-1:]

    def _sample_n(self, n, seed=None):
        # As TF: one multinomial op per batch member (in a map_fn), its draws one-hot encoded and summed.
        n_draws = math_ops.cast(self.total_count, dtype=dtypes.int32)
        k = self.event_shape_tensor()[0]
        n_draws = array_ops.ones_like(self.logits[..., 0], dtype=n_draws.dtype) * n_draws
        logits = array_ops.ones_like(array_ops.expand_dims(n_draws, -1), dtype=self.logits.dtype) * self.logits
        flat_logits = array_ops.reshape(logits, [-1, k])
        flat_ndraws = n * array_ops.reshape(n_draws, [-1])

        def sample_one(args):
            one_logits, n_draw = args[0], args[1]
            x = stateless_random_ops.multinomial(array_ops.expand_dims(one_logits, 0), n_draw, seed)
            x = array_ops.reshape(x, shape=[n, -1])
            return math_ops.reduce_sum(array_ops.one_hot(x, depth=k), axis=-2)

        x = functional_ops.map_fn(sample_one, [flat_logits, flat_ndraws], dtype=self.dtype)
        x = array_ops.transpose(x, perm=[1, 0, 2])
        final_shape = array_ops.concat([[n], self.batch_shape_tensor(), [k]], 0)
        return array_ops.reshape(x, final_shape)

    def _log_prob(self, counts):
        return self._log_unnormalized_prob(counts) - self._log_normalization(counts)

    def _log_unnormalized_prob(self, counts):
        return math_ops.reduce_sum(counts * nn_ops.log_softmax(self.logits), -1)

    def _log_normalization(self, counts):
        # -log(n! / prod(counts!)), TF's log_combinations.
        return -(special_math_ops.lgamma(self.total_count + 1.0)
                 - math_ops.reduce_sum(special_math_ops.lgamma(counts + 1.0), axis=-1))

    def _mean(self):
        return array_ops.identity(self._mean_val)

    def _variance(self):
        p = self.probs * array_ops.expand_dims(array_ops.ones_like(self.total_count), -1)
        return self._mean_val - self._mean_val * p

    def _covariance(self):
        p = self.probs * array_ops.expand_dims(array_ops.ones_like(self.total_count), -1)
        outer = math_ops.matmul(array_ops.expand_dims(self._mean_val, -1), array_ops.expand_dims(p, -2))
        return linalg_ops.matrix_set_diag(-outer, self._variance())


# KL divergence registry.
_DIVERGENCES = {}


class RegisterKL:
    """Decorator registering ``fn(dist_a, dist_b, name=None)`` as KL(a || b) for a pair of classes."""

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _DIVERGENCES:
            raise ValueError(
                f"KL({self._key[0].__name__} || {self._key[1].__name__}) has already been registered to: {_DIVERGENCES[self._key]}"
            )
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn


def _registered_kl(type_a, type_b):
    """The registered function for the closest pair of ancestors (the sum of MRO distances, as TF picks)."""
    best, best_dist = None, None
    for i, a in enumerate(type_a.__mro__):
        for j, b in enumerate(type_b.__mro__):
            fn = _DIVERGENCES.get((a, b))
            if fn is not None and (best_dist is None or i + j < best_dist):
                best, best_dist = fn, i + j
    return best


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(distribution_a || distribution_b), from the function registered for their types."""
    kl_fn = _registered_kl(type(distribution_a), type(distribution_b))
    if kl_fn is None:
        raise NotImplementedError(
            f"No KL(distribution_a || distribution_b) registered for distribution_a type {type(distribution_a).__name__} and distribution_b "
            f"type {type(distribution_b).__name__}"
        )
    with ops.name_scope("KullbackLeibler"):
        kl_t = kl_fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl_t
        kl_t = array_ops.identity(kl_t, name="kl")
        with ops.control_dependencies(
            [
                check_ops.assert_equal(
                    math_ops.reduce_any(math_ops.is_nan(kl_t)),
                    False,
                    message=f"KL calculation between {distribution_a.name} and {distribution_b.name} returned NaN values (and was called with "
                    "allow_nan_stats=False). Values:",
                )
            ]
        ):
            return array_ops.identity(kl_t, name="checked_kl")


@RegisterKL(Normal, Normal)
def _kl_normal_normal(n_a, n_b, name=None):
    with ops.name_scope(name, "kl_normal_normal", [n_a.loc, n_b.loc]):
        s_a_squared = math_ops.square(n_a.scale)
        s_b_squared = math_ops.square(n_b.scale)
        ratio = s_a_squared / s_b_squared
        return math_ops.squared_difference(n_a.loc, n_b.loc) / (2.0 * s_b_squared) + 0.5 * (
            ratio - 1.0 - math_ops.log(ratio)
        )


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    with ops.name_scope(name, "kl_bernoulli_bernoulli", values=[a.logits, b.logits]):
        delta_probs0 = nn_ops.softplus(-b.logits) - nn_ops.softplus(-a.logits)
        delta_probs1 = nn_ops.softplus(b.logits) - nn_ops.softplus(a.logits)
        return math_ops.sigmoid(a.logits) * delta_probs0 + math_ops.sigmoid(-a.logits) * delta_probs1


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    with ops.name_scope(name, "kl_categorical_categorical", values=[a.logits, b.logits]):
        delta_log_probs1 = nn_ops.log_softmax(a.logits) - nn_ops.log_softmax(b.logits)
        return math_ops.reduce_sum(nn_ops.softmax(a.logits) * delta_log_probs1, axis=-1)


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0, g1, name=None):
    with ops.name_scope(name, "kl_gamma_gamma", values=[g0.concentration, g0.rate, g1.concentration, g1.rate]):
        return (
            (g0.concentration - g1.concentration) * special_math_ops.digamma(g0.concentration)
            + special_math_ops.lgamma(g1.concentration)
            - special_math_ops.lgamma(g0.concentration)
            + g1.concentration * math_ops.log(g0.rate)
            - g1.concentration * math_ops.log(g1.rate)
            + g0.concentration * (g1.rate / g0.rate - 1.0)
        )


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    with ops.name_scope(name, "kl_beta_beta", values=[d1.concentration1, d1.concentration0, d1.total_concentration,
                                                      d2.concentration1, d2.concentration0, d2.total_concentration]):
        return (
            (d2._log_normalization() - d1._log_normalization())
            - special_math_ops.digamma(d1.concentration1) * (d2.concentration1 - d1.concentration1)
            - special_math_ops.digamma(d1.concentration0) * (d2.concentration0 - d1.concentration0)
            + special_math_ops.digamma(d1.total_concentration) * (d2.total_concentration - d1.total_concentration)
        )


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1, d2, name=None):
    with ops.name_scope(name, "kl_dirichlet_dirichlet", values=[d1.concentration, d2.concentration]):
        digamma_sum_d1 = special_math_ops.digamma(math_ops.reduce_sum(d1.concentration, axis=-1, keepdims=True))
        digamma_diff = special_math_ops.digamma(d1.concentration) - digamma_sum_d1
        concentration_diff = d1.concentration - d2.concentration
        return (
            math_ops.reduce_sum(concentration_diff * digamma_diff, axis=-1)
            - special_math_ops.lbeta(d1.concentration)
            + special_math_ops.lbeta(d2.concentration)
        )
