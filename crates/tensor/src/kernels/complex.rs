//! Kernels on `complex64` / `complex128` tensors: building and taking apart
//! complex numbers (`Complex`, `Real`, `Imag`, `Conj`, `Angle`,
//! `ComplexAbs`), casts to and from complex, and the complex arms of the
//! elementwise arithmetic, reductions and matrix products.
//!
//! The element types are num-complex's `Complex<f32>` / `Complex<f64>`
//! (TensorFlow's `std::complex<float>` / `<double>` layout: real part, then
//! imaginary part). The real dtypes' kernels never come through here, so the
//! float paths pay nothing for complex support.

use super::broadcast::Broadcast;
use super::elementwise::{BinaryOp, UnaryOp};
use super::matmul::Mat;
use super::parallel;
use super::reduce::ReduceOp;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{Data, Element, Tensor};
use num_complex::{Complex, Complex32, Complex64};
use num_traits::{Float, FloatConst};
use std::fmt::Debug;

/// The real part type of a complex dtype (`f32` for `complex64`, `f64` for
/// `complex128`), tying it to its complex element type.
pub trait Part: Element + Float + FloatConst + Default + Debug + Send + Sync {
    /// The complex dtype whose parts are `Self`.
    const COMPLEX: DType;
    /// Wraps complex elements as tensor data of [`Part::COMPLEX`].
    fn wrap_complex(v: Vec<Complex<Self>>) -> Data;
    /// The complex elements of `t`, if it is of [`Part::COMPLEX`].
    fn complex_slice(t: &Tensor) -> Result<&[Complex<Self>]>;
    /// Converts from `f64` (for constants and casts).
    fn of(v: f64) -> Self;
}

impl Part for f32 {
    const COMPLEX: DType = DType::Complex64;
    fn wrap_complex(v: Vec<Complex32>) -> Data {
        Complex32::wrap(v)
    }
    fn complex_slice(t: &Tensor) -> Result<&[Complex32]> {
        t.as_slice::<Complex32>()
    }
    fn of(v: f64) -> f32 {
        v as f32
    }
}

impl Part for f64 {
    const COMPLEX: DType = DType::Complex128;
    fn wrap_complex(v: Vec<Complex64>) -> Data {
        Complex64::wrap(v)
    }
    fn complex_slice(t: &Tensor) -> Result<&[Complex64]> {
        t.as_slice::<Complex64>()
    }
    fn of(v: f64) -> f64 {
        v
    }
}

fn not_complex(op: &str, d: DType) -> Error {
    Error::invalid_argument(format!(
        "{op} expects a complex64 or complex128 tensor, got {d}"
    ))
}

fn unsupported(op: impl Debug, d: DType) -> Error {
    Error::invalid_argument(format!("{op:?} is not supported for {d} tensors"))
}

/// Runs `$body` with `$t` the part type of the complex tensor `$x`;
/// `$other` for any other dtype.
macro_rules! by_part {
    ($x:expr, $t:ident => $body:expr, _ => $other:expr) => {
        match $x.dtype() {
            DType::Complex64 => {
                type $t = f32;
                $body
            }
            DType::Complex128 => {
                type $t = f64;
                $body
            }
            _ => $other,
        }
    };
}

fn complex_tensor<T: Part>(shape: Shape, v: Vec<Complex<T>>) -> Result<Tensor> {
    Tensor::new(shape, T::wrap_complex(v))
}

/// TensorFlow's `Complex`: `real + i * imag`, broadcasting the two float32
/// (complex64 out) or float64 (complex128 out) operands together.
pub fn complex(real: &Tensor, imag: &Tensor) -> Result<Tensor> {
    fn go<T: Part>(re: &Tensor, im: &Tensor) -> Result<Tensor> {
        let plan = Broadcast::new(re.dims(), im.dims(), &"Complex")?;
        let out = plan.map(re.as_slice::<T>()?, im.as_slice::<T>()?, |a, b| {
            Complex::new(a, b)
        });
        complex_tensor(plan.out.clone(), out)
    }
    match (real.dtype(), imag.dtype()) {
        (DType::Float32, DType::Float32) => go::<f32>(real, imag),
        (DType::Float64, DType::Float64) => go::<f64>(real, imag),
        (a, b) => Err(Error::invalid_argument(format!(
            "Complex: real and imag must both be float32 or both float64, got {a} and {b}"
        ))),
    }
}

fn map_part<T: Part, O: Element + Copy + Default + Send, F>(x: &Tensor, f: F) -> Result<Tensor>
where
    F: Fn(Complex<T>) -> O + Sync,
{
    let out = parallel::map(T::complex_slice(x)?, f);
    Tensor::from_vec(x.shape().clone(), out)
}

/// TensorFlow's `Real`: the real parts.
pub fn real(x: &Tensor) -> Result<Tensor> {
    by_part!(x, T => map_part::<T, T, _>(x, |z| z.re), _ => Err(not_complex("Real", x.dtype())))
}

/// TensorFlow's `Imag`: the imaginary parts.
pub fn imag(x: &Tensor) -> Result<Tensor> {
    by_part!(x, T => map_part::<T, T, _>(x, |z| z.im), _ => Err(not_complex("Imag", x.dtype())))
}

/// TensorFlow's `Angle`: `atan2(imag, real)`.
pub fn angle(x: &Tensor) -> Result<Tensor> {
    by_part!(x, T => map_part::<T, T, _>(x, |z| z.im.atan2(z.re)), _ => Err(not_complex("Angle", x.dtype())))
}

/// TensorFlow's `ComplexAbs`: `|z|`, computed as `hypot` so that it neither
/// overflows nor underflows where the result is representable.
pub fn abs(x: &Tensor) -> Result<Tensor> {
    by_part!(x, T => map_part::<T, T, _>(x, |z| z.re.hypot(z.im)), _ => Err(not_complex("ComplexAbs", x.dtype())))
}

/// TensorFlow's `Conj`: the complex conjugate.
pub fn conj(x: &Tensor) -> Result<Tensor> {
    by_part!(x, T => {
        let out = parallel::map(T::complex_slice(x)?, |z: Complex<T>| z.conj());
        complex_tensor(x.shape().clone(), out)
    }, _ => Err(not_complex("Conj", x.dtype())))
}

/// `x` (a real tensor's values, already in `T`) as complex with zero
/// imaginary parts.
pub fn from_reals<T: Part>(re: &[T]) -> Data {
    T::wrap_complex(parallel::map(re, |r| Complex::new(r, T::zero())))
}

/// The cast of complex data to `to`: another complex width keeps both parts;
/// `bool` is "not zero"; every real dtype takes the real part (as
/// TensorFlow's `Cast` does), returned as `f64`s for the caller to convert.
pub enum FromComplex {
    /// The finished data (complex or bool).
    Done(Data),
    /// The real parts, to be cast to the requested real dtype.
    Reals(Vec<f64>),
}

/// See [`FromComplex`].
pub fn cast_from<T: Part>(src: &[Complex<T>], to: DType) -> FromComplex {
    let re_im = |z: Complex<T>| (z.re.to_f64().unwrap_or(0.0), z.im.to_f64().unwrap_or(0.0));
    match to {
        DType::Complex64 => FromComplex::Done(Complex32::wrap(parallel::map(src, |z| {
            let (r, i) = re_im(z);
            Complex32::new(r as f32, i as f32)
        }))),
        DType::Complex128 => FromComplex::Done(Complex64::wrap(parallel::map(src, |z| {
            let (r, i) = re_im(z);
            Complex64::new(r, i)
        }))),
        DType::Bool => FromComplex::Done(bool::wrap(parallel::map(src, |z| {
            z.re != T::zero() || z.im != T::zero()
        }))),
        _ => FromComplex::Reals(parallel::map(src, |z| re_im(z).0)),
    }
}

/// The complex arms of [`super::elementwise::unary`].
pub fn unary(op: UnaryOp, x: Tensor) -> Result<Tensor> {
    fn go<T: Part>(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
        use UnaryOp::*;
        let one = Complex::new(T::one(), T::zero());
        let zero = Complex::new(T::zero(), T::zero());
        macro_rules! m {
            ($f:expr) => {
                complex_tensor(x.shape().clone(), parallel::map(T::complex_slice(x)?, $f))
            };
        }
        match op {
            Neg => m!(|z: Complex<T>| -z),
            Square => m!(|z: Complex<T>| z * z),
            Sqrt => m!(|z: Complex<T>| z.sqrt()),
            Rsqrt => m!(move |z: Complex<T>| one / z.sqrt()),
            Exp => m!(|z: Complex<T>| z.exp()),
            Log => m!(|z: Complex<T>| z.ln()),
            Log1p => m!(move |z: Complex<T>| (one + z).ln()),
            Expm1 => m!(move |z: Complex<T>| z.exp() - one),
            Sin => m!(|z: Complex<T>| z.sin()),
            Cos => m!(|z: Complex<T>| z.cos()),
            Tan => m!(|z: Complex<T>| z.tan()),
            Tanh => m!(|z: Complex<T>| z.tanh()),
            Sigmoid => m!(move |z: Complex<T>| one / (one + (-z).exp())),
            Reciprocal => m!(move |z: Complex<T>| one / z),
            // TensorFlow's complex sign: z / |z|, and 0 at 0.
            Sign => m!(move |z: Complex<T>| {
                let r = z.re.hypot(z.im);
                if r == T::zero() {
                    zero
                } else {
                    Complex::new(z.re / r, z.im / r)
                }
            }),
            _ => Err(unsupported(op, T::COMPLEX)),
        }
    }
    by_part!(x, T => go::<T>(op, &x), _ => Err(not_complex(&format!("{op:?}"), x.dtype())))
}

/// The complex arms of [`super::elementwise::binary`] (dtypes already
/// checked equal, `plan` made from the operands' shapes).
pub fn binary(op: BinaryOp, a: &Tensor, b: &Tensor, plan: &Broadcast) -> Result<Tensor> {
    fn go<T: Part>(op: BinaryOp, a: &Tensor, b: &Tensor, plan: &Broadcast) -> Result<Tensor> {
        use BinaryOp::*;
        let (x, y) = (T::complex_slice(a)?, T::complex_slice(b)?);
        let zero = Complex::new(T::zero(), T::zero());
        macro_rules! m {
            ($f:expr) => {
                complex_tensor(plan.out.clone(), plan.map(x, y, $f))
            };
        }
        match op {
            Add => m!(|p: Complex<T>, q: Complex<T>| p + q),
            Sub => m!(|p: Complex<T>, q: Complex<T>| p - q),
            Mul => m!(|p: Complex<T>, q: Complex<T>| p * q),
            Div => m!(|p: Complex<T>, q: Complex<T>| p / q),
            DivNoNan => {
                m!(move |p: Complex<T>, q: Complex<T>| if q == zero { zero } else { p / q })
            }
            Pow => m!(move |p: Complex<T>, q: Complex<T>| if q == zero {
                Complex::new(T::one(), T::zero())
            } else {
                p.powc(q)
            }),
            // TensorFlow: (x - y) * conj(x - y), a real value held as complex.
            SquaredDifference => m!(|p: Complex<T>, q: Complex<T>| {
                let d = p - q;
                Complex::new(d.norm_sqr(), T::zero())
            }),
            Equal => Tensor::from_vec(plan.out.clone(), plan.map(x, y, |p, q| p == q)),
            NotEqual => Tensor::from_vec(plan.out.clone(), plan.map(x, y, |p, q| p != q)),
            _ => Err(unsupported(op, T::COMPLEX)),
        }
    }
    by_part!(a, T => go::<T>(op, a, b, plan), _ => Err(not_complex(&format!("{op:?}"), a.dtype())))
}

/// Sum, mean or product over the middle axis of `x` viewed as
/// `[outer, red, inner]` (the complex arm of [`super::reduce::reduce`]).
pub fn reduce_axis(
    op: ReduceOp,
    x: &Tensor,
    outer: usize,
    red: usize,
    inner: usize,
    out: Shape,
) -> Result<Tensor> {
    fn go<T: Part>(
        op: ReduceOp,
        x: &Tensor,
        (o, r, i): (usize, usize, usize),
        out: Shape,
    ) -> Result<Tensor> {
        let v = T::complex_slice(x)?;
        let zero = Complex::new(T::zero(), T::zero());
        let one = Complex::new(T::one(), T::zero());
        use super::reduce::fold_axis as fold;
        let res = match op {
            ReduceOp::Sum => fold(v, o, r, i, zero, |p, q| p + q),
            ReduceOp::Prod => fold(v, o, r, i, one, |p, q| p * q),
            ReduceOp::Mean => {
                let s = fold(v, o, r, i, zero, |p, q| p + q);
                // Mean of nothing is 0/0, as for floats.
                let n = T::of(r as f64);
                s.into_iter().map(|z| z / n).collect()
            }
            _ => {
                return Err(Error::invalid_argument(format!(
                    "{op:?} is not supported for {} tensors",
                    T::COMPLEX
                )))
            }
        };
        complex_tensor(out, res)
    }
    by_part!(x, T => go::<T>(op, x, (outer, red, inner), out), _ => Err(not_complex(&format!("{op:?}"), x.dtype())))
}

/// `c = a @ b` for one complex matrix pair (row-major `c` of `m x n`; `a`
/// and `b` addressed through the strides of `la` / `lb`), by the `gemm`
/// crate's complex kernels. The signature is the real GEMMs' in
/// [`super::matmul`].
#[allow(clippy::too_many_arguments)] // BLAS-style signature
pub fn gemm<C: Copy + Default + Send + Sync + 'static>(
    m: usize,
    k: usize,
    n: usize,
    a: &[C],
    la: Mat,
    b: &[C],
    lb: Mat,
    c: &mut [C],
) {
    if m == 0 || n == 0 {
        return;
    }
    let par = if m * n * k >= 1 << 18 {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: `matmul` checked that `a` holds `m x k` and `b` `k x n`
    // elements at the given strides and `c` holds `m * n`; `C` is
    // Complex<f32> or Complex<f64>, gemm's c32 / c64. With `read_dst` false
    // and `k == 0` gemm writes zeros (beta * 0).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            la.cs,
            la.rs,
            b.as_ptr(),
            lb.cs,
            lb.rs,
            C::default(),
            one::<C>(),
            false,
            false,
            false,
            par,
        )
    }
}

/// `BatchMatMulV2` with `adj_x` / `adj_y`: the adjoint of a complex operand
/// is its conjugate transpose; real operands are only transposed.
pub fn matmul_adjoint(a: &Tensor, b: &Tensor, adj_a: bool, adj_b: bool) -> Result<Tensor> {
    if a.dtype().is_complex() && (adj_a || adj_b) {
        let ca = if adj_a { conj(a)? } else { a.clone() };
        let cb = if adj_b && b.dtype().is_complex() {
            conj(b)?
        } else {
            b.clone()
        };
        return super::matmul::matmul(&ca, &cb, adj_a, adj_b);
    }
    super::matmul::matmul(a, b, adj_a, adj_b)
}

/// The value one of a complex element type (gemm's `beta`).
fn one<C: 'static + Copy>() -> C {
    use std::any::Any;
    let c32: &dyn Any = &Complex32::new(1.0, 0.0);
    let c64: &dyn Any = &Complex64::new(1.0, 0.0);
    *c32.downcast_ref::<C>()
        .or_else(|| c64.downcast_ref::<C>())
        .expect("gemm is only called with complex64 or complex128")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c64(v: &[(f32, f32)]) -> Tensor {
        Tensor::vector(v.iter().map(|&(r, i)| Complex32::new(r, i)).collect())
    }

    #[test]
    fn build_and_take_apart() {
        let re = Tensor::from_vec([2, 1], vec![1.0f32, 2.0]).unwrap();
        let im = Tensor::vector(vec![3.0f32, -4.0]);
        let z = complex(&re, &im).unwrap();
        assert_eq!(z.dims(), &[2, 2]);
        assert_eq!(z.dtype(), DType::Complex64);
        assert_eq!(
            real(&z).unwrap().as_slice::<f32>().unwrap(),
            &[1.0, 1.0, 2.0, 2.0]
        );
        assert_eq!(
            imag(&z).unwrap().as_slice::<f32>().unwrap(),
            &[3.0, -4.0, 3.0, -4.0]
        );
        assert_eq!(abs(&z).unwrap().as_slice::<f32>().unwrap()[1], 17f32.sqrt());
        let c = conj(&z).unwrap();
        assert_eq!(
            c.as_slice::<Complex32>().unwrap()[0],
            Complex32::new(1.0, -3.0)
        );
        let a = angle(&c64(&[(0.0, 1.0)])).unwrap();
        assert_eq!(a.as_slice::<f32>().unwrap(), &[std::f32::consts::FRAC_PI_2]);
        assert!(complex(&re, &Tensor::vector(vec![1.0f64])).is_err());
        assert!(real(&re).is_err());
    }

    #[test]
    fn arithmetic_and_reductions() {
        let a = c64(&[(1.0, 2.0), (3.0, -1.0)]);
        let b = c64(&[(0.0, 1.0), (2.0, 0.0)]);
        let plan = Broadcast::new(a.dims(), b.dims(), &"Mul").unwrap();
        let p = binary(BinaryOp::Mul, &a, &b, &plan).unwrap();
        assert_eq!(
            p.as_slice::<Complex32>().unwrap(),
            &[Complex32::new(-2.0, 1.0), Complex32::new(6.0, -2.0)]
        );
        let s = reduce_axis(ReduceOp::Sum, &a, 1, 2, 1, Shape::scalar()).unwrap();
        assert_eq!(
            s.as_slice::<Complex32>().unwrap(),
            &[Complex32::new(4.0, 1.0)]
        );
        let m = reduce_axis(ReduceOp::Mean, &a, 1, 2, 1, Shape::scalar()).unwrap();
        assert_eq!(
            m.as_slice::<Complex32>().unwrap(),
            &[Complex32::new(2.0, 0.5)]
        );
        assert!(reduce_axis(ReduceOp::Max, &a, 1, 2, 1, Shape::scalar()).is_err());
        let sq = unary(UnaryOp::Square, a.clone()).unwrap();
        assert_eq!(
            sq.as_slice::<Complex32>().unwrap()[0],
            Complex32::new(-3.0, 4.0)
        );
        assert!(unary(UnaryOp::Floor, a).is_err());
    }

    #[test]
    fn complex_gemm_matches_naive() {
        let (m, k, n) = (3, 4, 2);
        let a: Vec<Complex64> = (0..m * k)
            .map(|i| Complex64::new(i as f64, 1.0 - i as f64))
            .collect();
        let b: Vec<Complex64> = (0..k * n)
            .map(|i| Complex64::new(0.5 * i as f64, 2.0))
            .collect();
        let mut c = vec![Complex64::default(); m * n];
        let la = Mat {
            rs: k as isize,
            cs: 1,
        };
        let lb = Mat {
            rs: n as isize,
            cs: 1,
        };
        gemm(m, k, n, &a, la, &b, lb, &mut c);
        for i in 0..m {
            for j in 0..n {
                let want: Complex64 = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
                assert!((c[i * n + j] - want).norm() < 1e-12);
            }
        }
    }
}
