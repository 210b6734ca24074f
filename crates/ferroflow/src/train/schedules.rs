//! TensorFlow 1's learning-rate schedules (`tf.train.exponential_decay` and friends) as graph ops
//! of the global step.
//!
//! Each returns a scalar tensor in the dtype of `learning_rate` (float32 for a number), under the
//! name scope TensorFlow uses (`ExponentialDecay`, `PolynomialDecay`, ...), whose last op takes
//! the scope's name. The step and every number are made tensors (float32), then cast to that
//! dtype. As in Python ferroflow (`training/learning_rate_decay.py`, and the optimizer spec,
//! section 4), the graphs are the forms TensorFlow's graph optimizer rewrites them to when the
//! operands are constants (`x / c` as `x * (1/c)`, constant products folded first), so the values
//! match TensorFlow's graph mode bit for bit.

use super::Hyper;
use crate::builder::GraphBuilder;
use ferroflow_graph::{AttrValue, Output};
use ferroflow_tensor::{DType, Error, Result, Tensor};

/// A hyper-parameter cast to the schedule's dtype, and whether TensorFlow sees a constant.
struct Cast {
    tensor: Output,
    is_const: bool,
}

fn cast_hyper(g: &mut GraphBuilder, value: Hyper, dtype: DType, name: &str) -> Result<Cast> {
    let is_const = value.is_const(g);
    let t = value.tensor(g, name)?;
    Ok(Cast {
        tensor: g.cast(t, dtype)?,
        is_const,
    })
}

/// `(learning rate, its dtype, the step cast to it)`.
fn lr_and_step(g: &mut GraphBuilder, lr: Hyper, step: Output) -> Result<(Output, DType, Output)> {
    let lr = lr.tensor(g, "initial_learning_rate")?;
    let dtype = g.dtype(lr);
    if !dtype.is_floating() {
        return Err(Error::type_error(format!(
            "the learning rate of a schedule must be a float tensor, got {dtype}"
        )));
    }
    let step = g.cast(step, dtype)?;
    Ok((lr, dtype, step))
}

fn scalar(g: &mut GraphBuilder, dtype: DType, v: f64) -> Result<Output> {
    g.build(|b| b.scalar(dtype, v))
}

/// `x / c` as graph-mode TensorFlow evaluates it: `x * fl(1/c)` for a constant `c`.
fn div_by(g: &mut GraphBuilder, x: Output, c: &Cast) -> Result<Output> {
    if c.is_const {
        let r = g.unary("Reciprocal", c.tensor)?;
        g.mul(x, r)
    } else {
        g.binary("RealDiv", x, c.tensor)
    }
}

/// TensorFlow mixes float32 constants into some schedules, so another learning-rate dtype fails
/// with the op's `TypeError`.
fn require_float32(dtype: DType, op: &str, arg: &str, other: &str) -> Result<()> {
    if dtype != DType::Float32 {
        return Err(Error::type_error(format!(
            "Input '{arg}' of '{op}' Op has type {dtype} that does not match type float32 of \
             argument '{other}'."
        )));
    }
    Ok(())
}

fn pi(g: &mut GraphBuilder) -> Result<Output> {
    g.constant(Tensor::scalar(std::f32::consts::PI), "Const")
}

/// The last op of a schedule, named after its scope.
fn finish(g: &mut GraphBuilder, op: &str, inputs: &[Output]) -> Result<Output> {
    let scope = g.scope().to_string();
    Ok(Output::new(
        g.add_exact(op, &scope, inputs, vec![], &[])?,
        0,
    ))
}

/// The value of a number or a constant tensor.
fn static_value(g: &GraphBuilder, h: Hyper) -> Option<f64> {
    match h {
        Hyper::Value(v) => Some(v as f32 as f64),
        Hyper::Tensor(t) => {
            let graph = g.graph.read();
            let node = graph.node(t.node);
            if node.op != "Const" {
                return None;
            }
            match node.attrs.get("value") {
                Some(AttrValue::Tensor(v)) => v.scalar_f64().ok(),
                _ => None,
            }
        }
    }
}

/// `learning_rate * decay_rate ^ (global_step / decay_steps)`, the exponent floored when
/// `staircase` (`tf.train.exponential_decay`).
pub fn exponential_decay(
    g: &mut GraphBuilder,
    learning_rate: impl Into<Hyper>,
    global_step: Output,
    decay_steps: impl Into<Hyper>,
    decay_rate: impl Into<Hyper>,
    staircase: bool,
) -> Result<Output> {
    let (lr, decay_steps, decay_rate) =
        (learning_rate.into(), decay_steps.into(), decay_rate.into());
    g.with_name_scope("ExponentialDecay", |g| {
        let (lr, dtype, s) = lr_and_step(g, lr, global_step)?;
        exponential(g, lr, dtype, s, decay_steps, decay_rate, staircase)
    })
}

fn exponential(
    g: &mut GraphBuilder,
    lr: Output,
    dtype: DType,
    s: Output,
    decay_steps: Hyper,
    decay_rate: Hyper,
    staircase: bool,
) -> Result<Output> {
    let ds = cast_hyper(g, decay_steps, dtype, "decay_steps")?;
    let rate = cast_hyper(g, decay_rate, dtype, "decay_rate")?;
    let mut p = div_by(g, s, &ds)?;
    if staircase {
        p = g.unary("Floor", p)?;
    }
    let pw = g.binary("Pow", rate.tensor, p)?;
    finish(g, "Mul", &[lr, pw])
}

/// `learning_rate * exp(-decay_rate) ^ (global_step / decay_steps)`, the exponent floored when
/// `staircase` (`tf.train.natural_exp_decay`; `exp(-decay_rate)` is computed first, as
/// TensorFlow does).
pub fn natural_exp_decay(
    g: &mut GraphBuilder,
    learning_rate: impl Into<Hyper>,
    global_step: Output,
    decay_steps: impl Into<Hyper>,
    decay_rate: impl Into<Hyper>,
    staircase: bool,
) -> Result<Output> {
    let (lr, decay_steps, decay_rate) =
        (learning_rate.into(), decay_steps.into(), decay_rate.into());
    g.with_name_scope("ExponentialDecay", |g| {
        let rate = decay_rate.tensor(g, "decay_rate")?;
        let neg = g.unary("Neg", rate)?;
        let natural = g.unary("Exp", neg)?;
        let (lr, dtype, s) = lr_and_step(g, lr, global_step)?;
        exponential(
            g,
            lr,
            dtype,
            s,
            decay_steps,
            Hyper::Tensor(natural),
            staircase,
        )
    })
}

/// `learning_rate / (1 + decay_rate * global_step / decay_steps)`, the ratio floored when
/// `staircase` (`tf.train.inverse_time_decay`).
pub fn inverse_time_decay(
    g: &mut GraphBuilder,
    learning_rate: impl Into<Hyper>,
    global_step: Output,
    decay_steps: impl Into<Hyper>,
    decay_rate: impl Into<Hyper>,
    staircase: bool,
) -> Result<Output> {
    let (lr, decay_steps, decay_rate) =
        (learning_rate.into(), decay_steps.into(), decay_rate.into());
    g.with_name_scope("InverseTimeDecay", |g| {
        let (lr, dtype, s) = lr_and_step(g, lr, global_step)?;
        let ds = cast_hyper(g, decay_steps, dtype, "decay_steps")?;
        let rate = cast_hyper(g, decay_rate, dtype, "decay_rate")?;
        let one = g.constant(Tensor::scalar(1i32), "Const")?;
        let one = g.cast(one, dtype)?;
        let scaled = if staircase {
            let q = div_by(g, s, &ds)?;
            let p = g.unary("Floor", q)?;
            g.mul(rate.tensor, p)?
        } else if ds.is_const && rate.is_const {
            // rate * (s * fl(1/ds)) -> s * fl(rate * fl(1/ds))
            let r = g.unary("Reciprocal", ds.tensor)?;
            let k = g.mul(rate.tensor, r)?;
            g.mul(s, k)?
        } else {
            let q = div_by(g, s, &ds)?;
            g.mul(rate.tensor, q)?
        };
        let denom = g.add_v2(one, scaled)?;
        finish(g, "RealDiv", &[lr, denom])
    })
}

/// `(learning_rate - end) * (1 - step / decay_steps) ^ power + end` with the step capped at
/// `decay_steps`, or with `cycle` the horizon extended to the next multiple of `decay_steps`
/// (`tf.train.polynomial_decay`; TensorFlow's defaults: `end_learning_rate` 0.0001, `power` 1,
/// `cycle` false). With `cycle` the learning rate must be float32, as in TensorFlow.
pub fn polynomial_decay(
    g: &mut GraphBuilder,
    learning_rate: impl Into<Hyper>,
    global_step: Output,
    decay_steps: impl Into<Hyper>,
    end_learning_rate: impl Into<Hyper>,
    power: impl Into<Hyper>,
    cycle: bool,
) -> Result<Output> {
    let (lr, decay_steps, end, power) = (
        learning_rate.into(),
        decay_steps.into(),
        end_learning_rate.into(),
        power.into(),
    );
    g.with_name_scope("PolynomialDecay", |g| {
        let (lr, dtype, s) = lr_and_step(g, lr, global_step)?;
        let end = cast_hyper(g, end, dtype, "end_learning_rate")?;
        let pw = cast_hyper(g, power, dtype, "power")?;
        let ds = cast_hyper(g, decay_steps, dtype, "decay_steps")?;
        let p = if cycle {
            require_float32(dtype, "SelectV2", "e", "t")?;
            if let Hyper::Tensor(t) = decay_steps {
                let raw = g.dtype(t);
                if raw != dtype {
                    return Err(Error::type_error(format!(
                        "`x` and `y` must have the same dtype, got {dtype} != {raw}."
                    )));
                }
            }
            let zero = g.constant(Tensor::scalar(0i32), "Const")?;
            let zero = g.cast(zero, dtype)?;
            let is_zero = g.binary("Equal", s, zero)?;
            let one = scalar(g, dtype, 1.0)?;
            let q = div_by(g, s, &ds)?;
            let up = g.unary("Ceil", q)?;
            let multiplier = g.build(|b| b.select(is_zero, one, up))?;
            let horizon = g.mul(ds.tensor, multiplier)?;
            g.binary("RealDiv", s, horizon)?
        } else {
            let capped = g.binary("Minimum", s, ds.tensor)?;
            div_by(g, capped, &ds)?
        };
        let one = scalar(g, dtype, 1.0)?;
        let span = g.sub(lr, end.tensor)?;
        let rest = g.sub(one, p)?;
        let pow = g.binary("Pow", rest, pw.tensor)?;
        let decayed = g.mul(span, pow)?;
        finish(g, "AddV2", &[decayed, end.tensor])
    })
}

/// `learning_rate * ((1 - alpha) * cosine + alpha)` with `cosine = 0.5 * (1 + cos(pi *
/// min(step, decay_steps) / decay_steps))` (`tf.train.cosine_decay`; TensorFlow's default
/// `alpha` is 0). The learning rate must be float32, as in TensorFlow.
pub fn cosine_decay(
    g: &mut GraphBuilder,
    learning_rate: impl Into<Hyper>,
    global_step: Output,
    decay_steps: impl Into<Hyper>,
    alpha: impl Into<Hyper>,
) -> Result<Output> {
    let (lr, decay_steps, alpha) = (learning_rate.into(), decay_steps.into(), alpha.into());
    g.with_name_scope("CosineDecay", |g| {
        let (lr, dtype, s) = lr_and_step(g, lr, global_step)?;
        require_float32(dtype, "Mul", "y", "x")?;
        let ds = cast_hyper(g, decay_steps, dtype, "decay_steps")?;
        let c = g.binary("Minimum", s, ds.tensor)?;
        let pi = pi(g)?;
        let arg = if ds.is_const {
            // pi * (c * R(ds)) -> c * [pi * R(ds)]
            let r = g.unary("Reciprocal", ds.tensor)?;
            let k = g.mul(pi, r)?;
            g.mul(c, k)?
        } else {
            let q = g.binary("RealDiv", c, ds.tensor)?;
            g.mul(pi, q)?
        };
        let one = scalar(g, dtype, 1.0)?;
        let cos = g.unary("Cos", arg)?;
        let one_plus_cos = g.add_v2(one, cos)?;
        let alpha_t = cast_hyper(g, alpha, dtype, "alpha")?;
        let decayed = match alpha {
            Hyper::Value(a) => {
                // (1 - alpha) rounded once to float32; A * (0.5 * y) -> y * [A * 0.5].
                let a1 = scalar(g, dtype, (1.0 - a) as f32 as f64)?;
                let half = scalar(g, dtype, 0.5)?;
                let factor = g.mul(a1, half)?;
                let scaled = g.mul(one_plus_cos, factor)?;
                g.add_v2(scaled, alpha_t.tensor)?
            }
            Hyper::Tensor(_) => {
                let half = scalar(g, dtype, 0.5)?;
                let cd = g.mul(half, one_plus_cos)?;
                let one = scalar(g, dtype, 1.0)?;
                let a1 = g.sub(one, alpha_t.tensor)?;
                let scaled = g.mul(a1, cd)?;
                g.add_v2(scaled, alpha_t.tensor)?
            }
        };
        finish(g, "Mul", &[lr, decayed])
    })
}

/// Cosine decay with warm restarts (SGDR, `tf.train.cosine_decay_restarts`): the first period
/// lasts `first_decay_steps`, each next one `t_mul` times longer, with its peak `m_mul` times
/// lower, decaying to `alpha` times the peak (TensorFlow's defaults: `t_mul` 2, `m_mul` 1,
/// `alpha` 0). The learning rate must be float32, as in TensorFlow.
pub fn cosine_decay_restarts(
    g: &mut GraphBuilder,
    learning_rate: impl Into<Hyper>,
    global_step: Output,
    first_decay_steps: impl Into<Hyper>,
    t_mul: impl Into<Hyper>,
    m_mul: impl Into<Hyper>,
    alpha: impl Into<Hyper>,
) -> Result<Output> {
    let (lr, first, t_mul, m_mul, alpha) = (
        learning_rate.into(),
        first_decay_steps.into(),
        t_mul.into(),
        m_mul.into(),
        alpha.into(),
    );
    g.with_name_scope("SGDRDecay", |g| {
        let (lr, dtype, s) = lr_and_step(g, lr, global_step)?;
        require_float32(dtype, "Mul", "y", "x")?;
        let fds = cast_hyper(g, first, dtype, "first_decay_steps")?;
        let alpha_t = cast_hyper(g, alpha, dtype, "alpha")?;
        let t_mul_t = cast_hyper(g, t_mul, dtype, "t_mul")?;
        let m_mul_t = cast_hyper(g, m_mul, dtype, "m_mul")?;
        let one = scalar(g, dtype, 1.0)?;
        let f = div_by(g, s, &fds)?;
        let arithmetic = |g: &mut GraphBuilder| -> Result<(Output, Output)> {
            let i = g.unary("Floor", f)?;
            let frac = g.sub(f, i)?;
            Ok((i, frac))
        };
        let geometric = |g: &mut GraphBuilder| -> Result<(Output, Output)> {
            let one_minus_t = g.sub(one, t_mul_t.tensor)?;
            let log_t = g.unary("Log", t_mul_t.tensor)?;
            let scaled = g.mul(f, one_minus_t)?;
            let inner = g.sub(one, scaled)?;
            let log_inner = g.unary("Log", inner)?;
            let ratio = if t_mul_t.is_const {
                let r = g.unary("Reciprocal", log_t)?;
                g.mul(log_inner, r)?
            } else {
                g.binary("RealDiv", log_inner, log_t)?
            };
            let i = g.unary("Floor", ratio)?;
            let t_pow_i = g.binary("Pow", t_mul_t.tensor, i)?;
            let num = g.sub(one, t_pow_i)?;
            let sum_r = if t_mul_t.is_const {
                let r = g.unary("Reciprocal", one_minus_t)?;
                g.mul(num, r)?
            } else {
                g.binary("RealDiv", num, one_minus_t)?
            };
            let rest = g.sub(f, sum_r)?;
            let frac = g.binary("RealDiv", rest, t_pow_i)?;
            Ok((i, frac))
        };
        let (i, frac) = match static_value(g, t_mul) {
            Some(1.0) => arithmetic(g)?,
            Some(_) => geometric(g)?,
            None => {
                // TensorFlow picks a branch with tf.cond; both are computed and one selected.
                let is_one = g.binary("Equal", t_mul_t.tensor, one)?;
                let (ia, fa) = arithmetic(g)?;
                let (ig, fg) = geometric(g)?;
                let i = g.build(|b| b.select(is_one, ia, ig))?;
                let frac = g.build(|b| b.select(is_one, fa, fg))?;
                (i, frac)
            }
        };
        let half = scalar(g, dtype, 0.5)?;
        let m_pow = g.binary("Pow", m_mul_t.tensor, i)?;
        let a = g.mul(half, m_pow)?;
        let pi = pi(g)?;
        let arg = g.mul(pi, frac)?;
        let cos = g.unary("Cos", arg)?;
        let b = g.add_v2(one, cos)?;
        let one_minus_alpha = g.sub(one, alpha_t.tensor)?;
        let scaled = if alpha_t.is_const {
            // [1 - alpha] * (a * b) -> ([1 - alpha] * a) * b
            let k = g.mul(one_minus_alpha, a)?;
            g.mul(k, b)?
        } else {
            let ab = g.mul(a, b)?;
            g.mul(one_minus_alpha, ab)?
        };
        let decayed = g.add_v2(scaled, alpha_t.tensor)?;
        finish(g, "Mul", &[lr, decayed])
    })
}

/// `learning_rate * ((alpha + linear) * cosine + beta)` with `linear = (decay_steps - step) /
/// decay_steps` and `cosine = 0.5 * (1 + cos(pi * 2 * num_periods * step / decay_steps))`, the
/// step capped at `decay_steps` (`tf.train.linear_cosine_decay`; TensorFlow's defaults:
/// `num_periods` 0.5, `alpha` 0, `beta` 0.001). The learning rate must be float32.
pub fn linear_cosine_decay(
    g: &mut GraphBuilder,
    learning_rate: impl Into<Hyper>,
    global_step: Output,
    decay_steps: impl Into<Hyper>,
    num_periods: impl Into<Hyper>,
    alpha: impl Into<Hyper>,
    beta: impl Into<Hyper>,
) -> Result<Output> {
    let (lr, decay_steps, num_periods, alpha, beta) = (
        learning_rate.into(),
        decay_steps.into(),
        num_periods.into(),
        alpha.into(),
        beta.into(),
    );
    g.with_name_scope("LinearCosineDecay", |g| {
        let (lr, dtype, s) = lr_and_step(g, lr, global_step)?;
        require_float32(dtype, "Mul", "y", "x")?;
        let alpha_t = cast_hyper(g, alpha, dtype, "alpha")?;
        let beta_t = cast_hyper(g, beta, dtype, "beta")?;
        let ds = cast_hyper(g, decay_steps, dtype, "decay_steps")?;
        let periods = cast_hyper(g, num_periods, dtype, "num_periods")?;
        let c = g.binary("Minimum", s, ds.tensor)?;
        let left = g.sub(ds.tensor, c)?;
        let linear = div_by(g, left, &ds)?;
        let two = scalar(g, dtype, 2.0)?;
        let two_periods = g.mul(two, periods.tensor)?;
        let pi = pi(g)?;
        let arg = match (ds.is_const, periods.is_const) {
            (true, true) => {
                // pi * ([2 * periods] * (c * R(ds))) -> c * [pi * [[2 * periods] * R(ds)]]
                let r = g.unary("Reciprocal", ds.tensor)?;
                let k = g.mul(two_periods, r)?;
                let k = g.mul(pi, k)?;
                g.mul(c, k)?
            }
            (false, true) => {
                // pi * ([2 * periods] * (c / ds)) -> (c / ds) * [pi * [2 * periods]]
                let q = g.binary("RealDiv", c, ds.tensor)?;
                let k = g.mul(pi, two_periods)?;
                g.mul(q, k)?
            }
            (true, false) => {
                // pi * (2p * (c * R(ds))) -> 2p * (c * [pi * R(ds)])
                let r = g.unary("Reciprocal", ds.tensor)?;
                let k = g.mul(pi, r)?;
                let ck = g.mul(c, k)?;
                g.mul(two_periods, ck)?
            }
            (false, false) => {
                // pi * (2p * (c / ds)) -> 2p * (pi * (c / ds))
                let q = g.binary("RealDiv", c, ds.tensor)?;
                let pq = g.mul(pi, q)?;
                g.mul(two_periods, pq)?
            }
        };
        let half = scalar(g, dtype, 0.5)?;
        let one = scalar(g, dtype, 1.0)?;
        let cos = g.unary("Cos", arg)?;
        let one_plus_cos = g.add_v2(one, cos)?;
        let cosine = g.mul(half, one_plus_cos)?;
        let a = g.add_v2(alpha_t.tensor, linear)?;
        let ac = g.mul(a, cosine)?;
        let decayed = g.add_v2(ac, beta_t.tensor)?;
        finish(g, "Mul", &[lr, decayed])
    })
}

/// `values[0]` while `x <= boundaries[0]`, `values[i]` for `boundaries[i-1] < x <=
/// boundaries[i]`, `values[last]` beyond the last boundary (`tf.train.piecewise_constant`).
/// The boundaries become constants of `x`'s dtype; the values must share one dtype (numbers are
/// float32).
pub fn piecewise_constant(
    g: &mut GraphBuilder,
    x: Output,
    boundaries: &[i64],
    values: &[Hyper],
) -> Result<Output> {
    if boundaries.is_empty() {
        return Err(Error::value(
            "piecewise_constant needs at least one boundary",
        ));
    }
    if boundaries.len() + 1 != values.len() {
        return Err(Error::value(
            "The length of boundaries should be 1 less than the length of values",
        ));
    }
    let xdtype = g.dtype(x);
    let bounds = boundaries
        .iter()
        .map(|&b| scalar(g, xdtype, b as f64))
        .collect::<Result<Vec<_>>>()?;
    let vals = values
        .iter()
        .map(|v| v.tensor(g, "Const"))
        .collect::<Result<Vec<_>>>()?;
    let dtype = g.dtype(vals[0]);
    if let Some(other) = vals.iter().map(|v| g.dtype(*v)).find(|d| *d != dtype) {
        return Err(Error::value(format!(
            "Values must have elements all with the same dtype ({dtype} vs {other})."
        )));
    }
    g.with_name_scope("PiecewiseConstant", |g| {
        let mut pairs = Vec::with_capacity(vals.len());
        pairs.push((g.binary("LessEqual", x, bounds[0])?, vals[0]));
        let last = *bounds.last().expect("at least one boundary");
        pairs.push((g.binary("Greater", x, last)?, *vals.last().expect("values")));
        for (i, v) in vals[1..vals.len() - 1].iter().enumerate() {
            let above = g.binary("Greater", x, bounds[i])?;
            let below = g.binary("LessEqual", x, bounds[i + 1])?;
            pairs.push((g.binary("LogicalAnd", above, below)?, *v));
        }
        let mut result = vals[0];
        for (pred, v) in pairs.into_iter().rev() {
            result = g.build(|b| b.select(pred, v, result))?;
        }
        finish(g, "Identity", &[result])
    })
}
