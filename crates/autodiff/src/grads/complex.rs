//! Gradients of the complex-number ops, as TensorFlow's `math_grad.py`
//! defines them (the gradient of a real loss with respect to a complex
//! input is the conjugate of the Wirtinger derivative, TF's convention).

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::{DType, Result};

type R = Result<Vec<Option<Grad>>>;

fn g0(grads: &[Option<Output>]) -> Output {
    grads[0].expect("the algorithm only calls gradient functions with some output gradient")
}

/// `Complex(re, im)` with TensorFlow's `Tout` for the parts' dtype.
fn make_complex(b: &mut Builder<'_>, re: Output, im: Output) -> Result<Output> {
    let out = if b.dtype(re) == DType::Float64 {
        DType::Complex128
    } else {
        DType::Complex64
    };
    b.op("Complex", &[re, im], vec![("Tout", AttrValue::Type(out))])
}

/// `Real` / `Imag` of `z`, with `Tout` its part type.
fn part(b: &mut Builder<'_>, op: &str, z: Output) -> Result<Output> {
    let t = b.dtype(z).real_dtype();
    b.op(op, &[z], vec![("Tout", AttrValue::Type(t))])
}

/// d/d(re, im) of `Complex`: the real and imaginary parts of the gradient,
/// summed back over broadcast dimensions.
fn complex(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let re = part(b, "Real", g)?;
    let im = part(b, "Imag", g)?;
    let (gr, gi) = b.broadcast_reduce(re, im, n.inputs[0], n.inputs[1])?;
    Ok(vec![d(gr), d(gi)])
}

/// `Real`: `complex(grad, 0)`.
fn real(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let zero = b.zeros_like(g)?;
    Ok(vec![d(make_complex(b, g, zero)?)])
}

/// `Imag`: `complex(0, grad)`.
fn imag(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let zero = b.zeros_like(g)?;
    Ok(vec![d(make_complex(b, zero, g)?)])
}

/// `Conj`: `conj(grad)`.
fn conj(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    Ok(vec![d(b.unary("Conj", g)?)])
}

/// `Angle`: `-complex(grad, 0) / complex(imag(x), real(x))`.
fn angle(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let x = n.inputs[0];
    let re = part(b, "Real", x)?;
    let im = part(b, "Imag", x)?;
    let zc = make_complex(b, im, re)?;
    let z = b.unary("Reciprocal", zc)?;
    let zero = b.zeros_like(g)?;
    let cg = make_complex(b, g, zero)?;
    let ncg = b.neg(cg)?;
    Ok(vec![d(b.mul(ncg, z)?)])
}

/// `ComplexAbs`: `div_no_nan(complex(grad, 0) * x, complex(|x|, 0))`.
fn complex_abs(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let x = n.inputs[0];
    let y = Output::new(n.id, 0);
    let zg = b.zeros_like(g)?;
    let cg = make_complex(b, g, zg)?;
    let num = b.mul(cg, x)?;
    let zy = b.zeros_like(y)?;
    let cy = make_complex(b, y, zy)?;
    Ok(vec![d(b.binary("DivNoNan", num, cy)?)])
}

/// `conj(o)` for a complex `o` (TensorFlow conjugates the inputs its
/// gradients multiply by); `o` itself for real dtypes, adding no node.
pub(super) fn conj_if_complex(b: &mut Builder<'_>, o: Output) -> Result<Output> {
    if b.dtype(o).is_complex() {
        b.unary("Conj", o)
    } else {
        Ok(o)
    }
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    use GradEntry::Func;
    reg("Complex", Func(complex));
    reg("Real", Func(real));
    reg("Imag", Func(imag));
    reg("Conj", Func(conj));
    reg("Angle", Func(angle));
    reg("ComplexAbs", Func(complex_abs));
}
