//! Gradients of elementwise math, reductions and products.

use super::complex::conj_if_complex;
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

fn add(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (ga, gb) = b.broadcast_reduce(g, g, x(n, 0), x(n, 1))?;
    Ok(vec![d(ga), d(gb)])
}

fn sub(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let ng = b.neg(g)?;
    let (ga, gb) = b.broadcast_reduce(g, ng, x(n, 0), x(n, 1))?;
    Ok(vec![d(ga), d(gb)])
}

fn mul(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (ca, cb) = (conj_if_complex(b, x(n, 0))?, conj_if_complex(b, x(n, 1))?);
    let ga = b.mul(g, cb)?;
    let gb = b.mul(ca, g)?;
    let (ga, gb) = b.broadcast_reduce(ga, gb, x(n, 0), x(n, 1))?;
    Ok(vec![d(ga), d(gb)])
}

fn real_div(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, c) = (conj_if_complex(b, x(n, 0))?, conj_if_complex(b, x(n, 1))?);
    let ga = b.div(g, c)?;
    // -a / c / c, in TensorFlow's order of operations.
    let na = b.neg(a)?;
    let t = b.div(na, c)?;
    let t = b.div(t, c)?;
    let gb = b.mul(g, t)?;
    let (ga, gb) = b.broadcast_reduce(ga, gb, a, c)?;
    Ok(vec![d(ga), d(gb)])
}

fn div_no_nan(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, c) = (x(n, 0), x(n, 1));
    let ga = b.binary("DivNoNan", g, c)?;
    let na = b.neg(a)?;
    let t = b.binary("DivNoNan", na, c)?;
    let t = b.binary("DivNoNan", t, c)?;
    let gb = b.mul(g, t)?;
    let (ga, gb) = b.broadcast_reduce(ga, gb, a, c)?;
    Ok(vec![d(ga), d(gb)])
}

fn floor_mod(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, c) = (x(n, 0), x(n, 1));
    let q = b.binary("FloorDiv", a, c)?;
    let t = b.mul(g, q)?;
    let gb = b.neg(t)?;
    let (ga, gb) = b.broadcast_reduce(g, gb, a, c)?;
    Ok(vec![d(ga), d(gb)])
}

fn pow(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, e) = (x(n, 0), x(n, 1));
    let dt = b.dtype(a);
    // d/da = e * a^(e-1)
    let one = b.scalar(dt, 1.0)?;
    let em1 = b.sub(e, one)?;
    let p = b.binary("Pow", a, em1)?;
    let t = b.mul(e, p)?;
    let ga = b.mul(g, t)?;
    // d/de = z * log(a) where a > 0, else 0.
    let zero = b.scalar(dt, 0.0)?;
    let pos = b.binary("Greater", a, zero)?;
    let ones = b.ones_like(a)?;
    let safe = b.op("SelectV2", &[pos, a, ones], vec![])?;
    let lg = b.unary("Log", safe)?;
    let zeros = b.zeros_like(a)?;
    let lg = b.op("SelectV2", &[pos, lg, zeros], vec![])?;
    let t = b.mul(y(n), lg)?;
    let gb = b.mul(g, t)?;
    let (ga, gb) = b.broadcast_reduce(ga, gb, a, e)?;
    Ok(vec![d(ga), d(gb)])
}

fn max_min(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>], cmp: &str) -> R {
    let g = g0(g);
    let (a, c) = (x(n, 0), x(n, 1));
    // Ties send the whole gradient to the first argument, as in TensorFlow.
    let mask = b.binary(cmp, a, c)?;
    let zeros = b.zeros_like(g)?;
    let ga = b.op("SelectV2", &[mask, g, zeros], vec![])?;
    let gb = b.op("SelectV2", &[mask, zeros, g], vec![])?;
    let (ga, gb) = b.broadcast_reduce(ga, gb, a, c)?;
    Ok(vec![d(ga), d(gb)])
}

fn maximum(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    max_min(b, n, g, "GreaterEqual")
}

fn minimum(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    max_min(b, n, g, "LessEqual")
}

fn squared_difference(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, c) = (x(n, 0), x(n, 1));
    let two = b.scalar(b.dtype(a), 2.0)?;
    let diff = b.sub(a, c)?;
    let t = b.mul(two, g)?;
    let ga = b.mul(t, diff)?;
    let gb = b.neg(ga)?;
    let (ga, gb) = b.broadcast_reduce(ga, gb, a, c)?;
    Ok(vec![d(ga), d(gb)])
}

fn atan2(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (yy, xx) = (x(n, 0), x(n, 1));
    let y2 = b.unary("Square", yy)?;
    let x2 = b.unary("Square", xx)?;
    let den = b.add(x2, y2)?;
    let inv = b.unary("Reciprocal", den)?;
    let gi = b.mul(g, inv)?;
    let gy = b.mul(xx, gi)?;
    let t = b.mul(yy, gi)?;
    let gx = b.neg(t)?;
    let (gy, gx) = b.broadcast_reduce(gy, gx, yy, xx)?;
    Ok(vec![d(gy), d(gx)])
}

/// Unary ops whose gradient is `g * f(x, y)` built from other ops.
fn unary(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, out) = (conj_if_complex(b, x(n, 0))?, conj_if_complex(b, y(n))?);
    let dt = b.dtype(a);
    let r = match n.op.as_str() {
        "Neg" => b.neg(g)?,
        "Abs" => {
            let s = b.unary("Sign", a)?;
            b.mul(g, s)?
        }
        "Square" => {
            let two = b.scalar(dt, 2.0)?;
            let t = b.mul(a, two)?;
            b.mul(g, t)?
        }
        "Exp" => b.mul(g, out)?,
        "Log" => {
            let r = b.unary("Reciprocal", a)?;
            b.mul(g, r)?
        }
        "Log1p" => {
            let one = b.scalar(dt, 1.0)?;
            let t = b.add(one, a)?;
            let r = b.unary("Reciprocal", t)?;
            b.mul(g, r)?
        }
        "Expm1" => {
            let e = b.unary("Exp", a)?;
            b.mul(g, e)?
        }
        "Sin" => {
            let c = b.unary("Cos", a)?;
            b.mul(g, c)?
        }
        "Cos" => {
            let s = b.unary("Sin", a)?;
            let t = b.mul(g, s)?;
            b.neg(t)?
        }
        "Tan" => {
            let c = b.unary("Cos", a)?;
            let c2 = b.unary("Square", c)?;
            let r = b.unary("Reciprocal", c2)?;
            b.mul(g, r)?
        }
        // TensorFlow conjugates a complex output for TanhGrad and SigmoidGrad
        // here; the Sqrt, Rsqrt and Reciprocal gradient kernels conjugate it
        // themselves, so they take the output as it is.
        "Tanh" => b.binary("TanhGrad", out, g)?,
        "Sigmoid" => b.binary("SigmoidGrad", out, g)?,
        "Sqrt" => b.binary("SqrtGrad", y(n), g)?,
        "Rsqrt" => b.binary("RsqrtGrad", y(n), g)?,
        "Reciprocal" => b.binary("ReciprocalGrad", y(n), g)?,
        // TensorFlow feeds ReluGrad the op's output (same mask as the input:
        // relu(x) > 0 exactly where x > 0), which also leaves the input to
        // a fused dense layer alone.
        "Relu" => b.binary("ReluGrad", g, out)?,
        "Relu6" => b.binary("Relu6Grad", g, a)?,
        "Elu" => b.binary("EluGrad", g, out)?,
        "Selu" => b.binary("SeluGrad", g, out)?,
        "Softplus" => b.binary("SoftplusGrad", g, a)?,
        "Softsign" => b.binary("SoftsignGrad", g, a)?,
        "LeakyRelu" => {
            let alpha = n.attrs.float_or("alpha", 0.2)?;
            b.op(
                "LeakyReluGrad",
                &[g, a],
                vec![("alpha", AttrValue::Float(alpha))],
            )?
        }
        other => unreachable!("no unary gradient for {other}"),
    };
    Ok(vec![d(r)])
}

/// Gradients of the fused activation-gradient ops themselves (second
/// derivatives, `tf.hessians`), in TensorFlow's formulas, conjugating complex
/// values where TF's do. Inputs are `(y, dy)`: the forward output and the
/// incoming gradient.
fn activation_grad_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let grad = g0(g);
    let (yv, dy) = (x(n, 0), x(n, 1));
    let dt = b.dtype(yv);
    let (gy, gdy) = match n.op.as_str() {
        "TanhGrad" => {
            // dy * (1 - y^2): d/dy = -2 dy y.
            let (ca, cb) = (conj_if_complex(b, yv)?, conj_if_complex(b, dy)?);
            let m2 = b.scalar(dt, -2.0)?;
            let t = b.mul(grad, m2)?;
            let t = b.mul(t, cb)?;
            (b.mul(t, ca)?, b.binary("TanhGrad", ca, grad)?)
        }
        "SigmoidGrad" => {
            // dy * y * (1 - y): d/dy = dy (1 - 2y).
            let (ca, cb) = (conj_if_complex(b, yv)?, conj_if_complex(b, dy)?);
            let gb = b.mul(grad, cb)?;
            let two = b.scalar(dt, 2.0)?;
            let t = b.mul(two, gb)?;
            let t = b.mul(t, ca)?;
            (b.sub(gb, t)?, b.binary("SigmoidGrad", ca, grad)?)
        }
        "SqrtGrad" => {
            // 0.5 dy / conj(y): d/dy = -conj(grad / y) * out, d/ddy = 0.5 grad / y.
            let ga = b.div(grad, yv)?;
            let cga = conj_if_complex(b, ga)?;
            let t = b.mul(cga, y(n))?;
            let half = b.scalar(dt, 0.5)?;
            (b.neg(t)?, b.mul(half, ga)?)
        }
        "RsqrtGrad" => {
            // -0.5 dy conj(y)^3: d/dy = -1.5 conj(grad) dy conj(y)^2.
            let (ca, cg) = (conj_if_complex(b, yv)?, conj_if_complex(b, grad)?);
            let m = b.scalar(dt, -1.5)?;
            let t = b.mul(m, cg)?;
            let t = b.mul(t, dy)?;
            let y2 = b.unary("Square", ca)?;
            (b.mul(t, y2)?, b.binary("RsqrtGrad", ca, grad)?)
        }
        "ReciprocalGrad" => {
            // -dy conj(y)^2: d/dy = -2 conj(grad) dy conj(y).
            let (ca, cg) = (conj_if_complex(b, yv)?, conj_if_complex(b, grad)?);
            let m2 = b.scalar(dt, -2.0)?;
            let t = b.mul(cg, m2)?;
            let t = b.mul(t, dy)?;
            (b.mul(t, ca)?, b.binary("ReciprocalGrad", ca, grad)?)
        }
        other => unreachable!("no activation grad-grad for {other}"),
    };
    Ok(vec![d(gy), d(gdy)])
}

/// Sign: zero almost everywhere (TensorFlow returns zeros, not None).
fn sign(b: &mut Builder<'_>, n: &Node, _: &[Option<Output>]) -> R {
    Ok(vec![d(b.zeros_like(x(n, 0))?)])
}

/// Cumprod, as TensorFlow: `cumsum(cumprod(x) * g, reversed) / x` with
/// `div_no_nan` (so a zero in `x` gets a zero gradient, like TF).
fn cumprod(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let exclusive = n.attrs.bool_or("exclusive", false)?;
    let reverse = n.attrs.bool_or("reverse", false)?;
    let t = b.mul(y(n), g0(g))?;
    let out = b.op(
        "Cumsum",
        &[t, x(n, 1)],
        vec![
            ("exclusive", AttrValue::Bool(exclusive)),
            ("reverse", AttrValue::Bool(!reverse)),
        ],
    )?;
    Ok(vec![d(b.binary("DivNoNan", out, x(n, 0))?), None])
}

fn cast(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let src = b.dtype(x(n, 0));
    if !src.is_floating() || !b.dtype(y(n)).is_floating() {
        return Ok(vec![None]);
    }
    Ok(vec![d(b.cast(g0(g), src)?)])
}

fn add_n(_: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    Ok(n.inputs.iter().map(|_| d(g0(g))).collect())
}

/// The reduced output's gradient reshaped (keep_dims) and tiled to the input.
fn broadcast_to_input(b: &mut Builder<'_>, n: &Node, g: Output) -> Result<Output> {
    let input = x(n, 0);
    let in_shape = b.shape(input)?;
    let axes = x(n, 1);
    let keep = n.attrs.bool_or("keep_dims", false)?;
    let g = if keep {
        g
    } else {
        // Output shape with the reduced axes set to 1 (TF's reduced_shape).
        let kept = b.op("ReducedShape", &[in_shape, axes], vec![])?;
        b.reshape(g, kept)?
    };
    b.op("BroadcastTo", &[g, in_shape], vec![])
}

fn sum(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let r = broadcast_to_input(b, n, g0(g))?;
    Ok(vec![d(r), None])
}

fn mean(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let input = x(n, 0);
    let r = broadcast_to_input(b, n, g0(g))?;
    let in_size = b.size(input)?;
    let out_size = b.size(y(n))?;
    let one = b.scalar_i32(1)?;
    let out_size = b.binary("Maximum", out_size, one)?;
    let factor = b.binary("FloorDiv", in_size, out_size)?;
    let factor = b.cast(factor, b.dtype(input))?;
    let r = b.div(r, factor)?;
    Ok(vec![d(r), None])
}

/// Max/Min: the gradient is split equally among tied extrema, as in TF.
fn max_reduce(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let input = x(n, 0);
    let yb = broadcast_to_input(b, n, y(n))?;
    let gb = broadcast_to_input(b, n, g0(g))?;
    let eq = b.binary("Equal", yb, input)?;
    let ind = b.cast(eq, b.dtype(input))?;
    let count = b.sum(ind, x(n, 1), true)?;
    let in_shape = b.shape(input)?;
    let count = b.op("BroadcastTo", &[count, in_shape], vec![])?;
    let share = b.div(ind, count)?;
    let r = b.mul(share, gb)?;
    Ok(vec![d(r), None])
}

/// Prod: each element's gradient is the product of all the others, computed
/// with exclusive cumulative products from both sides (no division), as in
/// TensorFlow: the reduced axes are moved to the front and flattened into one.
/// Everything is computed at run time, so dynamic axes and unknown ranks work.
fn prod(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let input = x(n, 0);
    let gb = broadcast_to_input(b, n, g0(g))?;
    let in_shape = b.shape(input)?;
    let rank = b.rank(input)?;
    let flat = b.const_i32(vec![-1])?;
    let axes = b.cast(x(n, 1), DType::Int32)?;
    let axes = b.reshape(axes, flat)?;
    // Non-negative reduced axes, and the others in order.
    let t = b.add(axes, rank)?;
    let reduced = b.binary("FloorMod", t, rank)?;
    let zero = b.scalar_i32(0)?;
    let one = b.scalar_i32(1)?;
    let idx = b.op(
        "Range",
        &[zero, rank, one],
        vec![("Tidx", AttrValue::Type(DType::Int32))],
    )?;
    let last = b.scalar_i32(-1)?;
    let col = b.op("ExpandDims", &[idx, last], vec![])?;
    let row = b.op("ExpandDims", &[reduced, zero], vec![])?;
    let eq = b.binary("Equal", col, row)?;
    let is_reduced = b.op(
        "Any",
        &[eq, one],
        vec![("keep_dims", AttrValue::Bool(false))],
    )?;
    let keep = b.unary("LogicalNot", is_reduced)?;
    let other = b.unary("Where", keep)?;
    let other = b.cast(other, DType::Int32)?;
    let other = b.reshape(other, flat)?;
    let axis0 = b.scalar_i32(0)?;
    let perm = b.concat(&[reduced, other], axis0)?;
    // [reduced elements, other elements]
    let zr = b.const_i32(vec![0])?;
    let r_dims = b.op("GatherV2", &[in_shape, reduced, axis0], vec![])?;
    let k_dims = b.op("GatherV2", &[in_shape, other, axis0], vec![])?;
    let keep_dims = || vec![("keep_dims", AttrValue::Bool(true))];
    let r_n = b.op("Prod", &[r_dims, zr], keep_dims())?;
    let k_n = b.op("Prod", &[k_dims, zr], keep_dims())?;
    let flat_shape = b.concat(&[r_n, k_n], axis0)?;
    let permuted = b.transpose(input, perm)?;
    let pshape = b.shape(permuted)?;
    let reshaped = b.reshape(permuted, flat_shape)?;
    let left = b.op(
        "Cumprod",
        &[reshaped, axis0],
        vec![("exclusive", AttrValue::Bool(true))],
    )?;
    let right = b.op(
        "Cumprod",
        &[reshaped, axis0],
        vec![
            ("exclusive", AttrValue::Bool(true)),
            ("reverse", AttrValue::Bool(true)),
        ],
    )?;
    let others = b.mul(left, right)?;
    let others = b.reshape(others, pshape)?;
    let inv = b.op("InvertPermutation", &[perm], vec![])?;
    let others = b.transpose(others, inv)?;
    let r = b.mul(gb, others)?;
    Ok(vec![d(r), None])
}

fn matmul(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, c) = (conj_if_complex(b, x(n, 0))?, conj_if_complex(b, x(n, 1))?);
    let ta = n.attrs.bool_or("transpose_a", false)?;
    let tb = n.attrs.bool_or("transpose_b", false)?;
    let (ga, gb) = match (ta, tb) {
        (false, false) => (b.matmul(g, c, false, true)?, b.matmul(a, g, true, false)?),
        (false, true) => (b.matmul(g, c, false, false)?, b.matmul(g, a, true, false)?),
        (true, false) => (b.matmul(c, g, false, true)?, b.matmul(a, g, false, false)?),
        (true, true) => (b.matmul(c, g, true, true)?, b.matmul(g, a, true, true)?),
    };
    Ok(vec![d(ga), d(gb)])
}

fn batch_matmul(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (a, c) = (x(n, 0), x(n, 1));
    let ta = n.attrs.bool_or("adj_x", false)?;
    let tb = n.attrs.bool_or("adj_y", false)?;
    let bmm = |b: &mut Builder<'_>, p: Output, q: Output, tp: bool, tq: bool| {
        b.op(
            "BatchMatMulV2",
            &[p, q],
            vec![
                ("adj_x", AttrValue::Bool(tp)),
                ("adj_y", AttrValue::Bool(tq)),
            ],
        )
    };
    let (ga, gb) = match (ta, tb) {
        (false, false) => (bmm(b, g, c, false, true)?, bmm(b, a, g, true, false)?),
        (false, true) => (bmm(b, g, c, false, false)?, bmm(b, g, a, true, false)?),
        (true, false) => (bmm(b, c, g, false, true)?, bmm(b, a, g, false, false)?),
        (true, true) => (bmm(b, c, g, true, true)?, bmm(b, g, a, true, true)?),
    };
    // Broadcast batch dimensions sum back to each input's shape.
    let sa = b.shape(a)?;
    let sc = b.shape(c)?;
    let ra = sum_to_batch_shape(b, ga, sa)?;
    let rc = sum_to_batch_shape(b, gb, sc)?;
    Ok(vec![d(ra), d(rc)])
}

/// Sums `g` over leading (batch) dimensions it has beyond `shape` and
/// reshapes it to `shape`.
fn sum_to_batch_shape(b: &mut Builder<'_>, g: Output, shape: Output) -> Result<Output> {
    let gs = b.shape(g)?;
    let args = b.node("BroadcastGradientArgs", &[shape, gs], vec![])?;
    b.sum_to_shape(g, Output::new(args, 0), shape)
}

fn cumsum(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let exclusive = n.attrs.bool_or("exclusive", false)?;
    let reverse = n.attrs.bool_or("reverse", false)?;
    let r = b.op(
        "Cumsum",
        &[g0(g), x(n, 1)],
        vec![
            ("exclusive", AttrValue::Bool(exclusive)),
            ("reverse", AttrValue::Bool(!reverse)),
        ],
    )?;
    Ok(vec![d(r), None])
}

fn select(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let c = x(n, 0);
    let zeros = b.zeros_like(g)?;
    let v2 = n.op == "SelectV2";
    let cond = if v2 {
        c
    } else {
        // TF1 Select with a row selector: reshape it to broadcast over rows.
        let cr = b.graph.output(c).shape.rank();
        let tr = b.graph.output(x(n, 1)).shape.rank();
        match (cr, tr) {
            (Some(1), Some(r)) if r > 1 => {
                let mut dims = vec![-1i32];
                dims.extend(std::iter::repeat_n(1, r - 1));
                let s = b.const_i32(dims)?;
                b.reshape(c, s)?
            }
            _ => c,
        }
    };
    let gt = b.op("SelectV2", &[cond, g, zeros], vec![])?;
    let ge = b.op("SelectV2", &[cond, zeros, g], vec![])?;
    if !v2 {
        return Ok(vec![None, d(gt), d(ge)]);
    }
    let (t, e) = (x(n, 1), x(n, 2));
    let st = b.shape(t)?;
    let se = b.shape(e)?;
    let gts = b.shape(gt)?;
    let at = b.node("BroadcastGradientArgs", &[st, gts], vec![])?;
    let ae = b.node("BroadcastGradientArgs", &[se, gts], vec![])?;
    let rt = b.sum_to_shape(gt, Output::new(at, 0), st)?;
    let re = b.sum_to_shape(ge, Output::new(ae, 0), se)?;
    Ok(vec![None, d(rt), d(re)])
}

fn l2_loss(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    Ok(vec![d(b.mul(x(n, 0), g0(g))?)])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    for op in ["AddV2", "Add"] {
        reg(op, GradEntry::Func(add));
    }
    reg("Sub", GradEntry::Func(sub));
    reg("Mul", GradEntry::Func(mul));
    for op in ["RealDiv", "Div"] {
        reg(op, GradEntry::Func(real_div));
    }
    reg("DivNoNan", GradEntry::Func(div_no_nan));
    reg("FloorMod", GradEntry::Func(floor_mod));
    reg("Pow", GradEntry::Func(pow));
    reg("Maximum", GradEntry::Func(maximum));
    reg("Minimum", GradEntry::Func(minimum));
    reg("SquaredDifference", GradEntry::Func(squared_difference));
    reg("Atan2", GradEntry::Func(atan2));
    for op in [
        "Neg",
        "Abs",
        "Square",
        "Exp",
        "Log",
        "Log1p",
        "Expm1",
        "Sin",
        "Cos",
        "Tan",
        "Tanh",
        "Sigmoid",
        "Sqrt",
        "Rsqrt",
        "Reciprocal",
        "Relu",
        "Relu6",
        "Elu",
        "Selu",
        "Softplus",
        "Softsign",
        "LeakyRelu",
    ] {
        reg(op, GradEntry::Func(unary));
    }
    reg("Cast", GradEntry::Func(cast));
    reg("AddN", GradEntry::Func(add_n));
    reg("Sum", GradEntry::Func(sum));
    reg("Mean", GradEntry::Func(mean));
    reg("Max", GradEntry::Func(max_reduce));
    reg("Min", GradEntry::Func(max_reduce));
    reg("Prod", GradEntry::Func(prod));
    reg("MatMul", GradEntry::Func(matmul));
    reg("BatchMatMulV2", GradEntry::Func(batch_matmul));
    reg("Cumsum", GradEntry::Func(cumsum));
    reg("Cumprod", GradEntry::Func(cumprod));
    reg("Sign", GradEntry::Func(sign));
    for op in [
        "TanhGrad",
        "SigmoidGrad",
        "SqrtGrad",
        "RsqrtGrad",
        "ReciprocalGrad",
    ] {
        reg(op, GradEntry::Func(activation_grad_grad));
    }
    reg("Select", GradEntry::Func(select));
    reg("SelectV2", GradEntry::Func(select));
    reg("L2Loss", GradEntry::Func(l2_loss));
}
