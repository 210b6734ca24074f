//! Gradients of the special functions and the elementwise ops and
//! reductions around them, in the formulas of TensorFlow's `math_grad.py`.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::{DType, Result};

type R = Result<Vec<Option<Grad>>>;

fn g0(grads: &[Option<Output>]) -> Output {
    grads[0].expect("the algorithm only calls gradient functions with some output gradient")
}

fn x(n: &Node, i: usize) -> Output {
    n.inputs[i]
}

fn y(n: &Node) -> Output {
    Output::new(n.id, 0)
}

/// `1 - v^2`.
fn one_minus_square(b: &mut Builder<'_>, v: Output) -> Result<Output> {
    let dt = b.dtype(v);
    let one = b.scalar(dt, 1.0)?;
    let v2 = b.unary("Square", v)?;
    b.sub(one, v2)
}

/// `exp(-v^2)`.
fn exp_neg_square(b: &mut Builder<'_>, v: Output) -> Result<Output> {
    let v2 = b.unary("Square", v)?;
    let n = b.neg(v2)?;
    b.unary("Exp", n)
}

/// One-input functions: `g * f'(x)` as TensorFlow builds it.
fn unary(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, out) = (x(n, 0), y(n));
    let dt = b.dtype(a);
    let pi = std::f64::consts::PI;
    let r = match n.op.as_str() {
        "Acos" | "Asin" => {
            let t = one_minus_square(b, a)?;
            let den = b.unary("Sqrt", t)?;
            let inv = b.unary("Reciprocal", den)?;
            if n.op == "Acos" {
                let ng = b.neg(g)?;
                b.mul(ng, inv)?
            } else {
                b.mul(g, inv)?
            }
        }
        "Atan" => {
            let one = b.scalar(dt, 1.0)?;
            let a2 = b.unary("Square", a)?;
            let t = b.add(one, a2)?;
            let inv = b.unary("Reciprocal", t)?;
            b.mul(g, inv)?
        }
        "Atanh" => {
            let t = one_minus_square(b, a)?;
            let inv = b.unary("Reciprocal", t)?;
            b.mul(g, inv)?
        }
        "Asinh" => {
            let c = b.unary("Cosh", out)?;
            b.div(g, c)?
        }
        "Acosh" => {
            let s = b.unary("Sinh", out)?;
            b.div(g, s)?
        }
        "Sinh" => {
            let c = b.unary("Cosh", a)?;
            b.mul(g, c)?
        }
        "Cosh" => {
            let s = b.unary("Sinh", a)?;
            b.mul(g, s)?
        }
        "Erf" | "Erfc" => {
            let sign = if n.op == "Erf" { 2.0 } else { -2.0 };
            let k = b.scalar(dt, sign / pi.sqrt())?;
            let t = b.mul(g, k)?;
            let e = exp_neg_square(b, a)?;
            b.mul(t, e)?
        }
        "Erfinv" => {
            let k = b.scalar(dt, pi.sqrt() / 2.0)?;
            let t = b.mul(g, k)?;
            let y2 = b.unary("Square", out)?;
            let e = b.unary("Exp", y2)?;
            b.mul(t, e)?
        }
        "Ndtri" => {
            let k = b.scalar(dt, (2.0 * pi).sqrt())?;
            let t = b.mul(g, k)?;
            let y2 = b.unary("Square", out)?;
            let two = b.scalar(dt, 2.0)?;
            let h = b.div(y2, two)?;
            let e = b.unary("Exp", h)?;
            b.mul(t, e)?
        }
        "Lgamma" => {
            let p = b.unary("Digamma", a)?;
            b.mul(g, p)?
        }
        "Digamma" => {
            let one = b.scalar(dt, 1.0)?;
            let p = b.binary("Polygamma", one, a)?;
            b.mul(g, p)?
        }
        "BesselI0" => {
            let p = b.unary("BesselI1", a)?;
            b.mul(g, p)?
        }
        "BesselI0e" => {
            let i1e = b.unary("BesselI1e", a)?;
            let s = b.unary("Sign", a)?;
            let t = b.mul(s, out)?;
            let p = b.sub(i1e, t)?;
            b.mul(g, p)?
        }
        "BesselI1" | "BesselI1e" => {
            // The main branch divides by x; TF imputes the limit at x = 0.
            let zero = b.scalar(dt, 0.0)?;
            let at0 = b.binary("Equal", a, zero)?;
            let (limit, p) = if n.op == "BesselI1" {
                let i0 = b.unary("BesselI0", a)?;
                let q = b.div(out, a)?;
                (1.0, b.sub(i0, q)?)
            } else {
                let i0e = b.unary("BesselI0e", a)?;
                let s = b.unary("Sign", a)?;
                let r = b.unary("Reciprocal", a)?;
                let t = b.add(s, r)?;
                let t = b.mul(out, t)?;
                (0.5, b.sub(i0e, t)?)
            };
            let lim = b.scalar(dt, limit)?;
            let p = b.select(at0, lim, p)?;
            b.mul(g, p)?
        }
        other => unreachable!("no special unary gradient for {other}"),
    };
    Ok(vec![d(r)])
}

/// `cast(x != 0, dtype)`.
fn not_zero(b: &mut Builder<'_>, v: Output) -> Result<Output> {
    let dt = b.dtype(v);
    let zero = b.scalar(dt, 0.0)?;
    let ne = b.binary("NotEqual", v, zero)?;
    b.cast(ne, dt)
}

/// Two-input ops whose gradients are `(partial_a * g, partial_b * g)`
/// summed back to each input's shape.
fn binary(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, c) = (x(n, 0), x(n, 1));
    let dt = b.dtype(a);
    let (pa, pb) = match n.op.as_str() {
        "Xlogy" | "Xlog1py" | "Xdivy" => {
            let nz = not_zero(b, a)?;
            let pa = b.binary(&n.op, nz, c)?;
            let pb = match n.op.as_str() {
                "Xlogy" => b.binary("Xdivy", a, c)?,
                "Xlog1py" => {
                    let one = b.scalar(dt, 1.0)?;
                    let c1 = b.add(c, one)?;
                    b.binary("Xdivy", a, c1)?
                }
                _ => {
                    let na = b.neg(a)?;
                    let c2 = b.unary("Square", c)?;
                    b.binary("Xdivy", na, c2)?
                }
            };
            (pa, pb)
        }
        "MulNoNan" => {
            let ga = b.binary("MulNoNan", g, c)?;
            let gb = b.binary("MulNoNan", a, g)?;
            let (ga, gb) = b.broadcast_reduce(ga, gb, a, c)?;
            return Ok(vec![d(ga), d(gb)]);
        }
        "NextAfter" => {
            let ones = b.ones_like(a)?;
            let zeros = b.zeros_like(c)?;
            (ones, zeros)
        }
        "Igamma" | "Igammac" => {
            let pa = b.binary("IgammaGradA", a, c)?;
            // exp(-x + (a - 1) log x - lgamma(a)), in log space.
            let one = b.scalar(dt, 1.0)?;
            let am1 = b.sub(a, one)?;
            let lx = b.unary("Log", c)?;
            let t = b.mul(am1, lx)?;
            let nx = b.neg(c)?;
            let t = b.add(nx, t)?;
            let lg = b.unary("Lgamma", a)?;
            let t = b.sub(t, lg)?;
            let px = b.unary("Exp", t)?;
            if n.op == "Igammac" {
                (b.neg(pa)?, b.neg(px)?)
            } else {
                (pa, px)
            }
        }
        other => unreachable!("no special binary gradient for {other}"),
    };
    let ga = b.mul(pa, g)?;
    let gb = b.mul(pb, g)?;
    let (ga, gb) = b.broadcast_reduce(ga, gb, a, c)?;
    Ok(vec![d(ga), d(gb)])
}

/// Zeta and Polygamma: only the second input (q, x) has a gradient.
fn second_only(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, c) = (x(n, 0), x(n, 1));
    let dt = b.dtype(a);
    let one = b.scalar(dt, 1.0)?;
    let a1 = b.add(a, one)?;
    let p = if n.op == "Zeta" {
        // -x * zeta(x + 1, q)
        let na = b.neg(a)?;
        let z = b.binary("Zeta", a1, c)?;
        b.mul(na, z)?
    } else {
        b.binary("Polygamma", a1, c)?
    };
    let gc = b.mul(p, g)?;
    let (_, gc) = b.broadcast_reduce(gc, gc, a, c)?;
    Ok(vec![None, d(gc)])
}

/// Betainc: TensorFlow differentiates x only.
fn betainc(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, bb, xv) = (x(n, 0), x(n, 1), x(n, 2));
    let dt = b.dtype(a);
    let la = b.unary("Lgamma", a)?;
    let lb = b.unary("Lgamma", bb)?;
    let ab = b.add(a, bb)?;
    let lab = b.unary("Lgamma", ab)?;
    let s = b.add(la, lb)?;
    let log_beta = b.sub(s, lab)?;
    let one = b.scalar(dt, 1.0)?;
    let bm1 = b.sub(bb, one)?;
    let nx = b.neg(xv)?;
    let t1 = b.binary("Xlog1py", bm1, nx)?;
    let am1 = b.sub(a, one)?;
    let t2 = b.binary("Xlogy", am1, xv)?;
    let t = b.add(t1, t2)?;
    let t = b.sub(t, log_beta)?;
    let px = b.unary("Exp", t)?;
    let gx = b.mul(px, g)?;
    let (_, gx) = b.broadcast_reduce(gx, gx, a, xv)?;
    Ok(vec![None, None, d(gx)])
}

/// Gradient of `log(cumsum(exp(x)))`, split by the sign of the incoming
/// gradient so both halves stay in log space (TensorFlow's formula).
fn cumulative_logsumexp(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (xv, axis, out) = (x(n, 0), x(n, 1), y(n));
    let dt = b.dtype(xv);
    let exclusive = n.attrs.bool_or("exclusive", false)?;
    let reverse = n.attrs.bool_or("reverse", false)?;
    let lowest = match dt {
        DType::Float64 => f64::MIN,
        DType::Float16 => -65504.0,
        _ => f32::MIN as f64,
    };
    let zero = b.scalar(dt, 0.0)?;
    let low = b.scalar(dt, lowest)?;
    let part = |b: &mut Builder<'_>, positive: bool| -> Result<Output> {
        let (cond, v) = if positive {
            (b.binary("Greater", g, zero)?, g)
        } else {
            (b.binary("Less", g, zero)?, b.neg(g)?)
        };
        let lg = b.unary("Log", v)?;
        let lg = b.select(cond, lg, low)?;
        let t = b.sub(lg, out)?;
        let c = b.op(
            "CumulativeLogsumexp",
            &[t, axis],
            vec![
                ("exclusive", AttrValue::Bool(exclusive)),
                ("reverse", AttrValue::Bool(!reverse)),
            ],
        )?;
        let s = b.add(c, xv)?;
        b.unary("Exp", s)
    };
    let pos = part(b, true)?;
    let neg = part(b, false)?;
    let r = b.sub(pos, neg)?;
    Ok(vec![d(r), None])
}

/// `x / (norm / g)`, with the norm and g reshaped to keep the reduced axes.
fn euclidean_norm(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let mut g = g0(g);
    let (xv, axes) = (x(n, 0), x(n, 1));
    let mut out = y(n);
    if !n.attrs.bool_or("keep_dims", false)? {
        let in_shape = b.shape(xv)?;
        let kept = b.op("ReducedShape", &[in_shape, axes], vec![])?;
        out = b.reshape(out, kept)?;
        g = b.reshape(g, kept)?;
    }
    let q = b.div(out, g)?;
    let r = b.div(xv, q)?;
    Ok(vec![d(r), None])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    for op in [
        "Acos",
        "Asin",
        "Atan",
        "Acosh",
        "Asinh",
        "Atanh",
        "Sinh",
        "Cosh",
        "Erf",
        "Erfc",
        "Erfinv",
        "Ndtri",
        "Lgamma",
        "Digamma",
        "BesselI0",
        "BesselI0e",
        "BesselI1",
        "BesselI1e",
    ] {
        reg(op, GradEntry::Func(unary));
    }
    for op in [
        "Xlogy",
        "Xlog1py",
        "Xdivy",
        "MulNoNan",
        "NextAfter",
        "Igamma",
        "Igammac",
    ] {
        reg(op, GradEntry::Func(binary));
    }
    reg("Zeta", GradEntry::Func(second_only));
    reg("Polygamma", GradEntry::Func(second_only));
    reg("Betainc", GradEntry::Func(betainc));
    reg("CumulativeLogsumexp", GradEntry::Func(cumulative_logsumexp));
    reg("EuclideanNorm", GradEntry::Func(euclidean_norm));
    // TensorFlow's gradients of these return None for every input.
    reg("Rint", GradEntry::NotDifferentiable);
    reg("TruncateDiv", GradEntry::NotDifferentiable);
}
