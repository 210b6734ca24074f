//! Elementwise kernels: unary math, binary arithmetic and comparisons with
//! broadcasting, casts, select and add_n.
//!
//! Kernels take their inputs by value so a buffer that nothing else holds
//! is reused for the output (the executor hands over inputs at their last
//! use). `f16` and `bf16` compute in `f32` and round back once per op.

use super::broadcast::{broadcast_to, Broadcast};
use super::parallel;
use super::scalar::{Float, Scalar};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{broadcast_shapes, Shape};
use crate::tensor::{Data, Element, Tensor};
use crate::{with_data, with_real};
use half::{bf16, f16};
use std::sync::Arc;

/// Elementwise functions of one tensor.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Abs,
    Sign,
    Square,
    Sqrt,
    Rsqrt,
    Exp,
    Log,
    Log1p,
    Expm1,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sigmoid,
    Floor,
    Ceil,
    Round,
    Reciprocal,
    Relu,
    Relu6,
    Elu,
    Selu,
    Softplus,
    Softsign,
    LogicalNot,
    IsFinite,
    IsInf,
    IsNan,
}

/// Elementwise functions of two broadcast tensors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// Floating-point division (`RealDiv`); truncating for integers (`Div`).
    Div,
    FloorDiv,
    FloorMod,
    TruncateMod,
    Pow,
    Maximum,
    Minimum,
    SquaredDifference,
    DivNoNan,
    Atan2,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    LogicalAnd,
    LogicalOr,
}

impl BinaryOp {
    /// True for ops whose result is `bool`.
    pub fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual
        )
    }
}

fn unsupported(op: impl std::fmt::Debug, dtype: DType) -> Error {
    Error::invalid_argument(format!("{op:?} is not supported for {dtype} tensors"))
}

/// Maps `x` elementwise, in place when its buffer is not shared.
fn map_same<T, F>(x: Tensor, f: F) -> Result<Tensor>
where
    T: Element + Copy + Default,
    F: Fn(T) -> T + Sync,
{
    let (shape, mut data) = x.into_parts();
    let buf = T::buffer_mut(&mut data).ok_or_else(|| Error::internal("dtype mismatch"))?;
    if let Some(v) = Arc::get_mut(buf) {
        parallel::map_in_place(v, f);
        return Tensor::new(shape, data);
    }
    let out = parallel::map(buf.as_slice(), f);
    Tensor::from_vec(shape, out)
}

fn map_to<T, O, F>(x: &Tensor, f: F) -> Result<Tensor>
where
    T: Element + Copy,
    O: Element + Copy + Default,
    F: Fn(T) -> O + Sync,
{
    let out = parallel::map(x.as_slice::<T>()?, f);
    Tensor::from_vec(x.shape().clone(), out)
}

/// Applies a unary op.
pub fn unary(op: UnaryOp, x: Tensor) -> Result<Tensor> {
    use UnaryOp::*;
    let dtype = x.dtype();
    match op {
        LogicalNot => {
            if dtype != DType::Bool {
                return Err(unsupported(op, dtype));
            }
            return map_same::<bool, _>(x, |v| !v);
        }
        IsFinite | IsInf | IsNan => {
            return match dtype {
                DType::Float32 => float_predicate::<f32>(op, &x),
                DType::Float64 => float_predicate::<f64>(op, &x),
                DType::Float16 | DType::BFloat16 => {
                    float_predicate::<f32>(op, &cast(&x, DType::Float32)?)
                }
                _ => Err(unsupported(op, dtype)),
            };
        }
        _ => {}
    }
    match dtype {
        DType::Float32 if matches!(op, Tanh | Sigmoid | Exp) => fast_f32_unary(op, x),
        DType::Float32 => float_unary::<f32>(op, x),
        DType::Float64 => float_unary::<f64>(op, x),
        DType::Float16 | DType::BFloat16 => {
            let wide = float_unary::<f32>(op, cast(&x, DType::Float32)?)?;
            cast(&wide, dtype)
        }
        DType::Bool | DType::String => Err(unsupported(op, dtype)),
        DType::Complex64 | DType::Complex128 => super::complex::unary(op, x),
        _ => with_real!(x.data().clone(), _v => int_unary(op, x), _ => Err(unsupported(op, dtype))),
    }
}

/// `Tanh`, `Sigmoid` and `Exp` of a float32 tensor with the vectorized
/// approximations of [`fast_math`](super::fast_math).
fn fast_f32_unary(op: UnaryOp, x: Tensor) -> Result<Tensor> {
    let f = match op {
        UnaryOp::Tanh => super::fast_math::tanh_in_place,
        UnaryOp::Sigmoid => super::fast_math::sigmoid_in_place,
        _ => super::fast_math::exp_in_place,
    };
    let (shape, mut data) = x.into_parts();
    let buf = f32::buffer_mut(&mut data).ok_or_else(|| Error::internal("dtype mismatch"))?;
    if let Some(v) = Arc::get_mut(buf) {
        parallel::fill_indexed(v, |_, chunk| f(chunk));
        return Tensor::new(shape, data);
    }
    let mut out = buf.as_slice().to_vec();
    parallel::fill_indexed(&mut out, |_, chunk| f(chunk));
    Tensor::from_vec(shape, out)
}

fn float_predicate<T: Float>(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    match op {
        UnaryOp::IsFinite => map_to::<T, bool, _>(x, |v| v.is_finite()),
        UnaryOp::IsInf => map_to::<T, bool, _>(x, |v| v.is_infinite()),
        _ => map_to::<T, bool, _>(x, |v| Scalar::is_nan(v)),
    }
}

fn float_unary<T: Float>(op: UnaryOp, x: Tensor) -> Result<Tensor> {
    use UnaryOp::*;
    let one = T::one();
    let zero = T::zero();
    macro_rules! m {
        ($f:expr) => {
            map_same::<T, _>(x, $f)
        };
    }
    match op {
        Neg => m!(|v: T| -v),
        Abs => m!(|v: T| Scalar::abs(v)),
        Sign => m!(move |v: T| if v > zero {
            one
        } else if v < zero {
            -one
        } else {
            v
        }),
        Square => m!(|v: T| v * v),
        Sqrt => m!(|v: T| v.sqrt()),
        Rsqrt => m!(move |v: T| one / v.sqrt()),
        Exp => m!(|v: T| v.exp()),
        Log => m!(|v: T| v.ln()),
        Log1p => m!(|v: T| v.ln_1p()),
        Expm1 => m!(|v: T| v.exp_m1()),
        Sin => m!(|v: T| v.sin()),
        Cos => m!(|v: T| v.cos()),
        Tan => m!(|v: T| v.tan()),
        Tanh => m!(|v: T| v.tanh()),
        Sigmoid => m!(move |v: T| one / (one + (-v).exp())),
        Floor => m!(|v: T| v.floor()),
        Ceil => m!(|v: T| v.ceil()),
        Round => m!(|v: T| v.round_ties_even()),
        Reciprocal => m!(move |v: T| one / v),
        // NaN passes through, as in TensorFlow.
        Relu => m!(move |v: T| if v > zero || Scalar::is_nan(v) {
            v
        } else {
            zero
        }),
        Relu6 => {
            let six = T::lit(6.0);
            m!(move |v: T| if v <= zero {
                zero
            } else if v >= six {
                six
            } else {
                v
            })
        }
        // TensorFlow computes `exp(x) - 1` here (not expm1); so do we, for its results.
        Elu => m!(move |v: T| if v < zero { v.exp() - one } else { v }),
        Selu => {
            let scale = T::lit(1.050_700_987_355_480_5);
            let alpha = T::lit(1.673_263_242_354_377_3);
            m!(move |v: T| if v < zero {
                scale * alpha * (v.exp() - one)
            } else {
                scale * v
            })
        }
        Softplus => {
            // TensorFlow's thresholds: past them log1p(exp(x)) equals x (or
            // exp(x)) to the type's precision.
            let threshold = T::EPSILON.ln() + T::lit(2.0);
            m!(move |v: T| {
                if v > -threshold {
                    v
                } else if v < threshold {
                    v.exp()
                } else {
                    v.exp().ln_1p()
                }
            })
        }
        Softsign => m!(move |v: T| v / (one + Scalar::abs(v))),
        LogicalNot | IsFinite | IsInf | IsNan => Err(unsupported(op, T::DTYPE)),
    }
}

fn int_unary(op: UnaryOp, x: Tensor) -> Result<Tensor> {
    fn go<T: Scalar>(op: UnaryOp, x: Tensor) -> Result<Tensor> {
        use UnaryOp::*;
        let zero = T::zero();
        let one = T::one();
        match op {
            Neg => map_same::<T, _>(x, |v: T| v.neg()),
            Abs => map_same::<T, _>(x, |v: T| v.abs()),
            Sign => map_same::<T, _>(x, move |v: T| {
                if v > zero {
                    one
                } else if v < zero {
                    one.neg()
                } else {
                    zero
                }
            }),
            Square => map_same::<T, _>(x, |v: T| v.mul(v)),
            Reciprocal => map_same::<T, _>(x, move |v: T| one.div(v)),
            Relu => map_same::<T, _>(x, move |v: T| if v > zero { v } else { zero }),
            Relu6 => {
                let six = T::from_i64(6);
                map_same::<T, _>(x, move |v: T| {
                    if v <= zero {
                        zero
                    } else if v >= six {
                        six
                    } else {
                        v
                    }
                })
            }
            Round | Floor | Ceil => Ok(x),
            _ => Err(unsupported(op, T::DTYPE)),
        }
    }
    let dtype = x.dtype();
    match dtype {
        DType::Int8 => go::<i8>(op, x),
        DType::Int16 => go::<i16>(op, x),
        DType::Int32 => go::<i32>(op, x),
        DType::Int64 => go::<i64>(op, x),
        DType::UInt8 => go::<u8>(op, x),
        DType::UInt16 => go::<u16>(op, x),
        DType::UInt32 => go::<u32>(op, x),
        DType::UInt64 => go::<u64>(op, x),
        _ => Err(unsupported(op, dtype)),
    }
}

/// `max(x, alpha * x)`-style leaky ReLU: `x` where positive, `alpha * x` elsewhere.
pub fn leaky_relu(x: Tensor, alpha: f64) -> Result<Tensor> {
    let dtype = x.dtype();
    match dtype {
        DType::Float32 => {
            let a = alpha as f32;
            map_same::<f32, _>(x, move |v| if v > 0.0 { v } else { a * v })
        }
        DType::Float64 => {
            // The `alpha` attr is a float32 in TensorFlow's op definition.
            let a = alpha as f32 as f64;
            map_same::<f64, _>(x, move |v| if v > 0.0 { v } else { a * v })
        }
        DType::Float16 | DType::BFloat16 => {
            cast(&leaky_relu(cast(&x, DType::Float32)?, alpha)?, dtype)
        }
        _ => Err(unsupported("LeakyRelu", dtype)),
    }
}

/// Applies a binary op with broadcasting. `name` labels shape errors.
pub fn binary(op: BinaryOp, a: Tensor, b: Tensor) -> Result<Tensor> {
    use BinaryOp::*;
    let (da, db) = (a.dtype(), b.dtype());
    if da != db {
        return Err(Error::invalid_argument(format!(
            "{op:?}: both inputs must have one dtype, got {da} and {db}"
        )));
    }
    let plan = Broadcast::new(a.dims(), b.dims(), &format_args!("{op:?}"))?;
    match da {
        DType::Float32 => float_binary::<f32>(op, a, b, &plan),
        DType::Float64 => float_binary::<f64>(op, a, b, &plan),
        DType::Float16 | DType::BFloat16 => {
            // TensorFlow's half FloorDiv floors the quotient after rounding it to half.
            let wide_op = if op == FloorDiv { Div } else { op };
            let wide = float_binary::<f32>(
                wide_op,
                cast(&a, DType::Float32)?,
                cast(&b, DType::Float32)?,
                &plan,
            )?;
            if wide.dtype() == DType::Bool {
                Ok(wide)
            } else if op == FloorDiv {
                unary(UnaryOp::Floor, cast(&wide, da)?)
            } else {
                cast(&wide, da)
            }
        }
        DType::Bool => match op {
            LogicalAnd => same_type::<bool, _>(a, b, &plan, |x, y| x & y),
            LogicalOr => same_type::<bool, _>(a, b, &plan, |x, y| x | y),
            Equal => compare::<bool, _>(&a, &b, &plan, |x, y| x == y),
            NotEqual => compare::<bool, _>(&a, &b, &plan, |x, y| x != y),
            _ => Err(unsupported(op, da)),
        },
        DType::String => match op {
            Equal | NotEqual => {
                let (x, y) = (a.as_slice::<Vec<u8>>()?, b.as_slice::<Vec<u8>>()?);
                // Strings are not Copy; compare through indices.
                let ix: Vec<u32> = (0..x.len() as u32).collect();
                let iy: Vec<u32> = (0..y.len() as u32).collect();
                let eq = op == Equal;
                let out = plan.map(&ix, &iy, |i, j| (x[i as usize] == y[j as usize]) == eq);
                Tensor::from_vec(plan.out.clone(), out)
            }
            Add => {
                // String concatenation (TensorFlow's `Add` on strings).
                let (x, y) = (a.as_slice::<Vec<u8>>()?, b.as_slice::<Vec<u8>>()?);
                let ix: Vec<u32> = (0..x.len() as u32).collect();
                let iy: Vec<u32> = (0..y.len() as u32).collect();
                let pairs = plan.map(&ix, &iy, |i, j| (i, j));
                let out: Vec<Vec<u8>> = pairs
                    .into_iter()
                    .map(|(i, j)| [&x[i as usize][..], &y[j as usize][..]].concat())
                    .collect();
                Tensor::from_vec(plan.out.clone(), out)
            }
            _ => Err(unsupported(op, da)),
        },
        DType::Complex64 | DType::Complex128 => super::complex::binary(op, &a, &b, &plan),
        _ => {
            // An empty result divides nothing (TensorFlow returns it even
            // when the divisor holds a zero).
            if matches!(op, Div | FloorDiv | FloorMod | TruncateMod) && plan.num_elements() > 0 {
                let has_zero =
                    with_real!(b.data(), v => v.iter().any(|x| *x == Scalar::zero()), _ => false);
                if has_zero {
                    return Err(Error::invalid_argument("Integer division by zero"));
                }
            }
            match da {
                DType::Int8 => int_binary::<i8>(op, a, b, &plan),
                DType::Int16 => int_binary::<i16>(op, a, b, &plan),
                DType::Int32 => int_binary::<i32>(op, a, b, &plan),
                DType::Int64 => int_binary::<i64>(op, a, b, &plan),
                DType::UInt8 => int_binary::<u8>(op, a, b, &plan),
                DType::UInt16 => int_binary::<u16>(op, a, b, &plan),
                DType::UInt32 => int_binary::<u32>(op, a, b, &plan),
                DType::UInt64 => int_binary::<u64>(op, a, b, &plan),
                _ => Err(unsupported(op, da)),
            }
        }
    }
}

/// Output of the same dtype: reuses the buffer of whichever input has the
/// output's shape and is not shared.
fn same_type<T, F>(a: Tensor, b: Tensor, plan: &Broadcast, f: F) -> Result<Tensor>
where
    T: Element + Copy + Default,
    F: Fn(T, T) -> T + Sync,
{
    let out_shape = plan.out.clone();
    match Operands::<T>::of(a, b, &out_shape)? {
        Operands::IntoLeft(mut ad, bv) => {
            let av = unique_buffer::<T>(&mut ad);
            plan.update_left(av, &bv, f);
            Tensor::new(out_shape, ad)
        }
        Operands::IntoRight(av, mut bd) => {
            let bv = unique_buffer::<T>(&mut bd);
            plan.update_right(&av, bv, f);
            Tensor::new(out_shape, bd)
        }
        Operands::New(av, bv) => Tensor::from_vec(out_shape, plan.map(&av, &bv, f)),
    }
}

/// The inputs of a same-dtype binary op and where its result goes: into
/// the buffer of an input that has the output's shape and is not shared
/// (kept as `Data`, the other input's buffer beside it), or a new one.
/// Apart from [`same_type`] so that this part is compiled once per element
/// type, not once per op.
enum Operands<T> {
    IntoLeft(Data, Arc<Vec<T>>),
    IntoRight(Arc<Vec<T>>, Data),
    New(Arc<Vec<T>>, Arc<Vec<T>>),
}

impl<T: Element> Operands<T> {
    fn of(a: Tensor, b: Tensor, out_shape: &Shape) -> Result<Operands<T>> {
        let (ash, mut ad) = a.into_parts();
        let (bsh, mut bd) = b.into_parts();
        let buffer = |d: &Data| {
            T::buffer(d)
                .cloned()
                .ok_or_else(|| Error::internal("dtype"))
        };
        let unique = |d: &mut Data| T::buffer_mut(d).and_then(Arc::get_mut).is_some();
        if ash == *out_shape && unique(&mut ad) {
            return Ok(Operands::IntoLeft(ad, buffer(&bd)?));
        }
        if bsh == *out_shape && unique(&mut bd) {
            return Ok(Operands::IntoRight(buffer(&ad)?, bd));
        }
        Ok(Operands::New(buffer(&ad)?, buffer(&bd)?))
    }
}

/// The elements of a buffer [`Operands::of`] found unshared.
fn unique_buffer<T: Element>(d: &mut Data) -> &mut Vec<T> {
    T::buffer_mut(d)
        .and_then(Arc::get_mut)
        .expect("an unshared buffer of this type")
}

fn compare<T, F>(a: &Tensor, b: &Tensor, plan: &Broadcast, f: F) -> Result<Tensor>
where
    T: Element + Copy,
    F: Fn(T, T) -> bool + Sync,
{
    let out = plan.map(a.as_slice::<T>()?, b.as_slice::<T>()?, f);
    Tensor::from_vec(plan.out.clone(), out)
}

fn comparisons<T: Scalar>(
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    plan: &Broadcast,
) -> Result<Tensor> {
    use BinaryOp::*;
    match op {
        Equal => compare::<T, _>(a, b, plan, |x, y| x == y),
        NotEqual => compare::<T, _>(a, b, plan, |x, y| x != y),
        Less => compare::<T, _>(a, b, plan, |x, y| x < y),
        LessEqual => compare::<T, _>(a, b, plan, |x, y| x <= y),
        Greater => compare::<T, _>(a, b, plan, |x, y| x > y),
        GreaterEqual => compare::<T, _>(a, b, plan, |x, y| x >= y),
        _ => Err(unsupported(op, T::DTYPE)),
    }
}

fn float_binary<T: Float>(op: BinaryOp, a: Tensor, b: Tensor, plan: &Broadcast) -> Result<Tensor> {
    use BinaryOp::*;
    let zero = T::zero();
    match op {
        Add => same_type::<T, _>(a, b, plan, |x, y| x + y),
        Sub => same_type::<T, _>(a, b, plan, |x, y| x - y),
        Mul => same_type::<T, _>(a, b, plan, |x, y| x * y),
        Div => same_type::<T, _>(a, b, plan, |x, y| x / y),
        DivNoNan => same_type::<T, _>(a, b, plan, move |x, y| if y == zero { zero } else { x / y }),
        FloorDiv => same_type::<T, _>(a, b, plan, |x, y| (x / y).floor()),
        FloorMod => same_type::<T, _>(a, b, plan, float_floor_mod),
        TruncateMod => same_type::<T, _>(a, b, plan, |x, y| x.rem(y)),
        Pow => same_type::<T, _>(a, b, plan, |x, y| x.powf(y)),
        Maximum => same_type::<T, _>(a, b, plan, float_max),
        Minimum => same_type::<T, _>(a, b, plan, float_min),
        SquaredDifference => same_type::<T, _>(a, b, plan, |x, y| (x - y) * (x - y)),
        Atan2 => same_type::<T, _>(a, b, plan, |x, y| x.atan2(y)),
        LogicalAnd | LogicalOr => Err(unsupported(op, T::DTYPE)),
        _ => comparisons::<T>(op, &a, &b, plan),
    }
}

fn int_pow<T: Scalar>(base: T, exp: T) -> T {
    let mut e = exp.to_i64();
    let mut b = base;
    let mut acc = T::one();
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.mul(b);
        }
        b = b.mul(b);
        e >>= 1;
    }
    acc
}

fn int_binary<T: Scalar>(op: BinaryOp, a: Tensor, b: Tensor, plan: &Broadcast) -> Result<Tensor> {
    use BinaryOp::*;
    let zero = T::zero();
    match op {
        Add => same_type::<T, _>(a, b, plan, |x, y| x.add(y)),
        Sub => same_type::<T, _>(a, b, plan, |x, y| x.sub(y)),
        Mul => same_type::<T, _>(a, b, plan, |x, y| x.mul(y)),
        Div => same_type::<T, _>(a, b, plan, |x, y| x.div(y)),
        DivNoNan => same_type::<T, _>(
            a,
            b,
            plan,
            move |x, y| if y == zero { zero } else { x.div(y) },
        ),
        FloorDiv => same_type::<T, _>(a, b, plan, int_floor_div),
        FloorMod => same_type::<T, _>(a, b, plan, int_floor_mod),
        TruncateMod => same_type::<T, _>(a, b, plan, |x, y| x.rem(y)),
        Pow => {
            if T::IS_SIGNED && b.as_slice::<T>()?.iter().any(|&e| e < zero) {
                return Err(Error::invalid_argument(
                    "Integers to negative integer powers are not allowed",
                ));
            }
            same_type::<T, _>(a, b, plan, int_pow)
        }
        Maximum => same_type::<T, _>(a, b, plan, |x, y| if x > y { x } else { y }),
        Minimum => same_type::<T, _>(a, b, plan, |x, y| if x < y { x } else { y }),
        SquaredDifference => same_type::<T, _>(a, b, plan, |x, y| x.sub(y).mul(x.sub(y))),
        Atan2 | LogicalAnd | LogicalOr => Err(unsupported(op, T::DTYPE)),
        _ => comparisons::<T>(op, &a, &b, plan),
    }
}

/// Python's `%` on floats: the remainder takes the divisor's sign.
#[inline(always)]
fn float_floor_mod<T: Float>(x: T, y: T) -> T {
    let zero = T::zero();
    let r = x.rem(y);
    if r != zero && ((r < zero) != (y < zero)) {
        r + y
    } else {
        r
    }
}

/// TensorFlow's `Maximum`: a NaN on the left wins.
#[inline(always)]
fn float_max<T: Float>(x: T, y: T) -> T {
    if Scalar::is_nan(x) || x > y {
        x
    } else {
        y
    }
}

/// TensorFlow's `Minimum`: a NaN on the left wins.
#[inline(always)]
fn float_min<T: Float>(x: T, y: T) -> T {
    if Scalar::is_nan(x) || x < y {
        x
    } else {
        y
    }
}

/// Python's `//` on integers (rounds toward negative infinity; callers
/// check for a zero divisor).
#[inline(always)]
fn int_floor_div<T: Scalar>(x: T, y: T) -> T {
    let zero = T::zero();
    let q = x.div(y);
    if (x.rem(y) != zero) && ((x < zero) != (y < zero)) {
        q.sub(T::one())
    } else {
        q
    }
}

/// Python's `%` on integers (the remainder takes the divisor's sign).
#[inline(always)]
fn int_floor_mod<T: Scalar>(x: T, y: T) -> T {
    let zero = T::zero();
    let r = x.rem(y);
    if r != zero && ((r < zero) != (y < zero)) {
        r.add(y)
    } else {
        r
    }
}

/// `op` on one pair of float elements, as [`binary`] computes each element
/// of a float tensor; `None` for the ops whose result is `bool` and those
/// floats do not have.
#[inline]
pub fn float_element<T: Float>(op: BinaryOp, x: T, y: T) -> Option<T> {
    use BinaryOp::*;
    let zero = T::zero();
    Some(match op {
        Add => x + y,
        Sub => x - y,
        Mul => x * y,
        Div => x / y,
        DivNoNan => {
            if y == zero {
                zero
            } else {
                x / y
            }
        }
        FloorDiv => (x / y).floor(),
        FloorMod => float_floor_mod(x, y),
        TruncateMod => x.rem(y),
        Maximum => float_max(x, y),
        Minimum => float_min(x, y),
        SquaredDifference => (x - y) * (x - y),
        _ => return None,
    })
}

/// `op` on one pair of integer elements, as [`binary`] computes each
/// element of an integer tensor (wrapping); `None` for the ops whose result
/// is `bool`, for `Pow` and for `Atan2`. Division by zero is the caller's
/// to refuse, as [`binary`] does.
#[inline]
pub fn int_element<T: Scalar>(op: BinaryOp, x: T, y: T) -> Option<T> {
    use BinaryOp::*;
    let zero = T::zero();
    Some(match op {
        Add => x.add(y),
        Sub => x.sub(y),
        Mul => x.mul(y),
        Div => x.div(y),
        DivNoNan => {
            if y == zero {
                zero
            } else {
                x.div(y)
            }
        }
        FloorDiv => int_floor_div(x, y),
        FloorMod => int_floor_mod(x, y),
        TruncateMod => x.rem(y),
        Maximum => {
            if x > y {
                x
            } else {
                y
            }
        }
        Minimum => {
            if x < y {
                x
            } else {
                y
            }
        }
        SquaredDifference => x.sub(y).mul(x.sub(y)),
        _ => return None,
    })
}

/// A comparison `op` of two elements, as [`binary`] compares; `None` for
/// the other ops.
#[inline]
pub fn compare_element<T: PartialOrd>(op: BinaryOp, x: T, y: T) -> Option<bool> {
    use BinaryOp::*;
    Some(match op {
        Equal => x == y,
        NotEqual => x != y,
        Less => x < y,
        LessEqual => x <= y,
        Greater => x > y,
        GreaterEqual => x >= y,
        _ => return None,
    })
}

/// `op` on one float element, as [`unary`] computes it, for the ops that
/// are exact on every CPU (no transcendental functions); `None` otherwise.
#[inline]
pub fn float_unary_element<T: Float>(op: UnaryOp, v: T) -> Option<T> {
    use UnaryOp::*;
    Some(match op {
        Neg => -v,
        Abs => Scalar::abs(v),
        Square => v * v,
        Floor => v.floor(),
        Ceil => v.ceil(),
        Round => v.round_ties_even(),
        _ => return None,
    })
}

/// `op` on one integer element, as [`unary`] computes it (wrapping), for
/// `Neg`, `Abs` and `Square`; `None` otherwise.
#[inline]
pub fn int_unary_element<T: Scalar>(op: UnaryOp, v: T) -> Option<T> {
    use UnaryOp::*;
    Some(match op {
        Neg => v.neg(),
        Abs => v.abs(),
        Square => v.mul(v),
        _ => return None,
    })
}

/// Conversions between every pair of non-string dtypes.
trait CastElement: Element + Copy + Default {
    const FLOAT_SOURCE: bool;
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    /// From a `uint64` source: integers keep the low bits, floats round to
    /// nearest (values above `i64::MAX` must not pass through `i64`).
    fn from_u64(v: u64) -> Self;
}

macro_rules! cast_prim {
    ($($t:ty: $float:expr),*) => {$(
        impl CastElement for $t {
            const FLOAT_SOURCE: bool = $float;
            #[inline(always)] fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn to_i64(self) -> i64 { self as i64 }
            #[inline(always)] fn from_f64(v: f64) -> Self { v as $t }
            #[inline(always)] fn from_i64(v: i64) -> Self { v as $t }
            #[inline(always)] fn from_u64(v: u64) -> Self { v as $t }
        }
    )*};
}
cast_prim!(
    f32: true, f64: true, i8: false, i16: false, i32: false, i64: false, u8: false, u16: false,
    u32: false, u64: false
);

impl CastElement for bool {
    const FLOAT_SOURCE: bool = false;
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn from_u64(v: u64) -> Self {
        v != 0
    }
}

macro_rules! cast_half {
    ($($t:ty),*) => {$(
        impl CastElement for $t {
            const FLOAT_SOURCE: bool = true;
            fn to_f64(self) -> f64 { <$t>::to_f64(self) }
            fn to_i64(self) -> i64 { <$t>::to_f64(self) as i64 }
            fn from_f64(v: f64) -> Self { <$t>::from_f64(v) }
            fn from_i64(v: i64) -> Self { <$t>::from_f64(v as f64) }
            fn from_u64(v: u64) -> Self { <$t>::from_f64(v as f64) }
        }
    )*};
}
cast_half!(f16, bf16);

fn cast_slice<S: CastElement, T: CastElement>(src: &[S]) -> Vec<T> {
    if S::FLOAT_SOURCE {
        parallel::map(src, |x| T::from_f64(x.to_f64()))
    } else if S::DTYPE == DType::UInt64 {
        // `to_i64` kept the bits; reading them back as u64 is exact.
        parallel::map(src, |x| T::from_u64(x.to_i64() as u64))
    } else {
        parallel::map(src, |x| T::from_i64(x.to_i64()))
    }
}

/// x86's truncating float to `i32` conversion (`cvttsd2si`): NaN and values
/// whose truncation falls outside `i32` give `i32::MIN`.
#[inline(always)]
fn cvtt_i32(x: f64) -> i32 {
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// Like [`cvtt_i32`] for `i64`: out of range or NaN gives `i64::MIN`.
#[inline(always)]
fn cvtt_i64(x: f64) -> i64 {
    // -2^63 is the lowest value that truncates into range (f64 has no
    // representable value in (-2^63 - 1, -2^63)).
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// Float to `uint64` as TensorFlow's CPU kernel computes it (the compiler's
/// unsigned conversion built from two signed ones): a value that converts to
/// a non-negative `i64` keeps it; otherwise the first conversion's bits are
/// or-ed with those of `x - 2^63`. So -1.0 gives 2^64-1, 1.5e19 converts
/// exactly, and NaN, infinities and values out of range give 2^63.
#[inline(always)]
fn float_to_u64(x: f64) -> u64 {
    let lo = cvtt_i64(x);
    if lo >= 0 {
        lo as u64
    } else {
        (lo | cvtt_i64(x - 9_223_372_036_854_775_808.0)) as u64
    }
}

/// Float to `uint32`, the rule of TensorFlow's vectorized loop (packets of
/// 8): the same two-conversion construction at 32 bits, so NaN, infinities,
/// values of 2^32 and up and values below -2^31 give 2^31.
#[inline(always)]
fn float_to_u32_packet(x: f64) -> u32 {
    let lo = cvtt_i32(x);
    if lo >= 0 {
        lo as u32
    } else {
        (lo | cvtt_i32(x - 2_147_483_648.0)) as u32
    }
}

/// Float to `uint32`, the rule of TensorFlow's scalar loop (the last
/// `n % 8` elements of a tensor): convert to `i64` as [`cvtt_i64`] does and
/// keep the low 32 bits, so NaN and values out of `i64` give 0 and 1e10
/// gives 1e10 mod 2^32.
#[inline(always)]
fn float_to_u32_scalar(x: f64) -> u32 {
    cvtt_i64(x) as u32
}

/// How many elements TensorFlow's cast loops convert in packets; the rest
/// go through its scalar loop.
const CAST_PACKET: usize = 8;

/// Float to `uint32`/`uint64` the way TensorFlow 2.x's x86 CPU kernel does
/// (its results for NaN and out-of-range values are what its compiled code
/// happens to produce, and for `uint32` they differ between the packet and
/// the tail loops: `tools/make_uint32_64_fixtures.py` records them).
fn float_to_unsigned<S: CastElement>(src: &[S], to: DType) -> Data {
    if to == DType::UInt64 {
        return u64::wrap(parallel::map(src, |x| float_to_u64(x.to_f64())));
    }
    let mut v = parallel::map(src, |x| float_to_u32_packet(x.to_f64()));
    let tail = src.len() - src.len() % CAST_PACKET;
    for (o, x) in v[tail..].iter_mut().zip(&src[tail..]) {
        *o = float_to_u32_scalar(x.to_f64());
    }
    u32::wrap(v)
}

fn cast_from<S: CastElement>(src: &[S], to: DType) -> Result<Data> {
    if S::FLOAT_SOURCE && matches!(to, DType::UInt32 | DType::UInt64) {
        return Ok(float_to_unsigned(src, to));
    }
    Ok(match to {
        DType::Float32 => f32::wrap(cast_slice(src)),
        DType::Float64 => f64::wrap(cast_slice(src)),
        DType::Float16 => f16::wrap(cast_slice(src)),
        DType::BFloat16 => bf16::wrap(cast_slice(src)),
        DType::Int8 => i8::wrap(cast_slice(src)),
        DType::Int16 => i16::wrap(cast_slice(src)),
        DType::Int32 => i32::wrap(cast_slice(src)),
        DType::Int64 => i64::wrap(cast_slice(src)),
        DType::UInt8 => u8::wrap(cast_slice(src)),
        DType::UInt16 => u16::wrap(cast_slice(src)),
        DType::UInt32 => u32::wrap(cast_slice(src)),
        DType::UInt64 => u64::wrap(cast_slice(src)),
        DType::Bool => bool::wrap(cast_slice(src)),
        DType::Complex64 => super::complex::from_reals::<f32>(&cast_slice(src)),
        DType::Complex128 => super::complex::from_reals::<f64>(&cast_slice(src)),
        DType::String
        | DType::Resource
        | DType::Variant
        | DType::QInt8
        | DType::QUInt8
        | DType::QInt16
        | DType::QUInt16
        | DType::QInt32 => {
            return Err(Error::unimplemented(format!(
                "Cast {} to {to} is not supported",
                S::DTYPE
            )))
        }
    })
}

/// Finishes a cast from complex: real targets take the real parts.
fn from_complex(c: super::complex::FromComplex, to: DType) -> Result<Data> {
    match c {
        super::complex::FromComplex::Done(d) => Ok(d),
        super::complex::FromComplex::Reals(re) => cast_from(&re, to),
    }
}

/// Converts `x` to `to` (truncating toward zero for float to integer).
pub fn cast(x: &Tensor, to: DType) -> Result<Tensor> {
    if x.dtype() == to {
        return Ok(x.clone());
    }
    let data = match x.data() {
        Data::F32(v) => cast_from(v, to)?,
        Data::F64(v) => cast_from(v, to)?,
        Data::F16(v) => cast_from(v, to)?,
        Data::BF16(v) => cast_from(v, to)?,
        Data::I8(v) => cast_from(v, to)?,
        Data::I16(v) => cast_from(v, to)?,
        Data::I32(v) => cast_from(v, to)?,
        Data::I64(v) => cast_from(v, to)?,
        Data::U8(v) => cast_from(v, to)?,
        Data::U16(v) => cast_from(v, to)?,
        Data::U32(v) => cast_from(v, to)?,
        Data::U64(v) => cast_from(v, to)?,
        Data::Bool(v) => cast_from(v, to)?,
        Data::C64(v) => from_complex(super::complex::cast_from(v, to), to)?,
        Data::C128(v) => from_complex(super::complex::cast_from(v, to), to)?,
        Data::Str(_) => {
            return Err(Error::unimplemented(format!(
                "Cast string to {to} is not supported"
            )))
        }
    };
    Tensor::new(x.shape().clone(), data)
}

/// `cond ? x : y` elementwise, all three broadcast together (`SelectV2`).
pub fn select(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if x.dtype() != y.dtype() {
        return Err(Error::invalid_argument(format!(
            "Select: x and y must have one dtype, got {} and {}",
            x.dtype(),
            y.dtype()
        )));
    }
    let xy = broadcast_shapes(x.dims(), y.dims());
    let out = xy
        .and_then(|s| broadcast_shapes(cond.dims(), s.dims()))
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "Select: condition, x and y cannot be broadcast together: {}, {} and {}",
                cond.shape(),
                x.shape(),
                y.shape()
            ))
        })?;
    if cond.dims() == out.dims() && x.dims() == out.dims() && y.dims() == out.dims() {
        // Nothing to broadcast (a dense `tf.where`): pick straight from the
        // inputs, in parallel, without materialising copies of them.
        macro_rules! direct {
            ($t:ty) => {{
                let (c, xs, ys) = (
                    cond.as_slice::<bool>()?,
                    x.as_slice::<$t>()?,
                    y.as_slice::<$t>()?,
                );
                let v: Vec<$t> = super::parallel::filled(c.len(), |start, chunk| {
                    let end = start + chunk.len();
                    let picks = c[start..end]
                        .iter()
                        .zip(&xs[start..end])
                        .zip(&ys[start..end]);
                    for (o, ((&c, &a), &b)) in chunk.iter_mut().zip(picks) {
                        *o = if c { a } else { b };
                    }
                });
                return Tensor::from_vec(out, v);
            }};
        }
        match x.dtype() {
            DType::Float32 => direct!(f32),
            DType::Float64 => direct!(f64),
            DType::Int32 => direct!(i32),
            DType::Int64 => direct!(i64),
            _ => {}
        }
    }
    let c = broadcast_to(cond.as_slice::<bool>()?, cond.dims(), &out)?;
    fn pick<T: Element>(
        _: &Arc<Vec<T>>,
        c: &[bool],
        x: &Tensor,
        y: &Tensor,
        out: &Shape,
    ) -> Result<Data> {
        let xs = broadcast_to(x.as_slice::<T>()?, x.dims(), out)?;
        let ys = broadcast_to(y.as_slice::<T>()?, y.dims(), out)?;
        Ok(T::wrap(
            c.iter()
                .zip(xs)
                .zip(ys)
                .map(|((&c, a), b)| if c { a } else { b })
                .collect(),
        ))
    }
    let data = with_data!(x.data(), v => pick(v, &c, x, y, &out)?);
    Tensor::new(out, data)
}

/// Sum of tensors of one shape and dtype (`AddN`).
pub fn add_n(inputs: Vec<Tensor>) -> Result<Tensor> {
    let mut it = inputs.into_iter();
    let mut acc = it
        .next()
        .ok_or_else(|| Error::invalid_argument("AddN needs at least one input"))?;
    for t in it {
        if t.shape() != acc.shape() {
            return Err(Error::invalid_argument(format!(
                "AddN: inputs must have one shape, got {} and {}",
                acc.shape(),
                t.shape()
            )));
        }
        acc = binary(BinaryOp::Add, acc, t)?;
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(t: &Tensor) -> Vec<f32> {
        t.as_slice::<f32>().unwrap().to_vec()
    }

    #[test]
    fn floats_to_unsigned_follow_tensorflows_two_loops() {
        // 9 elements: the first 8 take the packet rule, the last the tail
        // rule (values from TensorFlow 2.21, tests/fixtures/uint32_64).
        let x = Tensor::vector(vec![
            f32::NAN,
            -1.0,
            4_294_967_296.0,
            1e10,
            3e9,
            -0.5,
            f32::INFINITY,
            -3e9,
            f32::NAN,
        ]);
        let u = cast(&x, DType::UInt32).unwrap();
        let top = 1u32 << 31;
        assert_eq!(
            u.as_slice::<u32>().unwrap(),
            &[top, u32::MAX, top, top, 3_000_000_000, 0, top, top, 0]
        );
        let tail = cast(&Tensor::vector(vec![1e10f64, -3e9, -1.0]), DType::UInt32).unwrap();
        assert_eq!(
            tail.as_slice::<u32>().unwrap(),
            &[1_410_065_408, 1_294_967_296, u32::MAX]
        );
        let w = cast(&x, DType::UInt64).unwrap();
        let big = 1u64 << 63;
        assert_eq!(
            w.as_slice::<u64>().unwrap(),
            &[
                big,
                u64::MAX,
                1 << 32,
                10_000_000_000,
                3_000_000_000,
                0,
                big,
                u64::MAX - 2_999_999_999,
                big
            ]
        );
        let exact = cast(&Tensor::vector(vec![1.5e19f64]), DType::UInt64).unwrap();
        assert_eq!(
            exact.as_slice::<u64>().unwrap(),
            &[15_000_000_000_000_000_000]
        );
    }

    #[test]
    fn uint64_casts_do_not_pass_through_int64() {
        let x = Tensor::vector(vec![u64::MAX, 1 << 63, 7]);
        let f = cast(&x, DType::Float64).unwrap();
        assert_eq!(
            f.as_slice::<f64>().unwrap(),
            &[1.8446744073709552e19, 9.223372036854776e18, 7.0]
        );
        let h = cast(&x, DType::Float16).unwrap();
        assert!(h.as_slice::<f16>().unwrap()[0].is_infinite());
        let i = cast(&x, DType::Int32).unwrap();
        assert_eq!(i.as_slice::<i32>().unwrap(), &[-1, 0, 7]);
        let back = cast(&cast(&x, DType::Int64).unwrap(), DType::UInt64).unwrap();
        assert_eq!(
            back.as_slice::<u64>().unwrap(),
            x.as_slice::<u64>().unwrap()
        );
        let n = cast(&Tensor::vector(vec![-1i8, 5]), DType::UInt32).unwrap();
        assert_eq!(n.as_slice::<u32>().unwrap(), &[u32::MAX, 5]);
    }

    #[test]
    fn add_broadcasts_and_reuses_unique_buffers() {
        let a = Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let b = Tensor::from_vec([2], vec![10.0f32, 20.0]).unwrap();
        let ptr = a.as_slice::<f32>().unwrap().as_ptr();
        let c = binary(BinaryOp::Add, a, b).unwrap();
        assert_eq!(f32s(&c), vec![11.0, 22.0, 13.0, 24.0]);
        assert_eq!(c.as_slice::<f32>().unwrap().as_ptr(), ptr);
    }

    #[test]
    fn select_without_broadcasting_matches_the_broadcasting_path() {
        let n = (1 << 17) + 3;
        let c: Vec<bool> = (0..n).map(|i| i % 3 == 0 || i % 7 == 1).collect();
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let y: Vec<f32> = (0..n).map(|i| -(i as f32) - 0.5).collect();
        let (ct, xt, yt) = (
            Tensor::vector(c.clone()),
            Tensor::vector(x.clone()),
            Tensor::vector(y.clone()),
        );
        let direct = select(&ct, &xt, &yt).unwrap();
        // The same values with a [1, n] condition go through broadcasting.
        let c2 = Tensor::from_vec([1, n], c.clone()).unwrap();
        let general = select(&c2, &xt, &yt).unwrap();
        assert_eq!(direct.dims(), &[n]);
        assert_eq!(general.dims(), &[1, n]);
        assert_eq!(f32s(&direct), f32s(&general));
        let want: Vec<f32> = (0..n).map(|i| if c[i] { x[i] } else { y[i] }).collect();
        assert_eq!(f32s(&direct), want);
        let ints = select(
            &ct,
            &Tensor::vector(vec![1i64; n]),
            &Tensor::vector(vec![2i64; n]),
        )
        .unwrap();
        assert_eq!(ints.as_slice::<i64>().unwrap()[..3], [1, 1, 2]);
    }

    #[test]
    fn shared_inputs_are_not_modified() {
        let a = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
        let keep = a.clone();
        let c = binary(BinaryOp::Mul, a, Tensor::scalar(3.0f32)).unwrap();
        assert_eq!(f32s(&c), vec![3.0, 6.0]);
        assert_eq!(f32s(&keep), vec![1.0, 2.0]);
    }

    #[test]
    fn integer_division_semantics() {
        let a = Tensor::vector(vec![7i32, -7, 7, -7]);
        let b = Tensor::vector(vec![2i32, 2, -2, -2]);
        let fd = binary(BinaryOp::FloorDiv, a.clone(), b.clone()).unwrap();
        assert_eq!(fd.as_slice::<i32>().unwrap(), &[3, -4, -4, 3]);
        let fm = binary(BinaryOp::FloorMod, a.clone(), b.clone()).unwrap();
        assert_eq!(fm.as_slice::<i32>().unwrap(), &[1, 1, -1, -1]);
        let err = binary(BinaryOp::FloorDiv, a, Tensor::scalar(0i32)).unwrap_err();
        assert!(err.to_string().contains("division by zero"));
    }

    #[test]
    fn half_rounds_back() {
        let a = cast(&Tensor::vector(vec![1.0f32, 2.0]), DType::Float16).unwrap();
        let s = unary(UnaryOp::Sqrt, a).unwrap();
        assert_eq!(s.dtype(), DType::Float16);
        let back = cast(&s, DType::Float32).unwrap();
        assert_eq!(f32s(&back), vec![1.0, f16::from_f32(2f32.sqrt()).to_f32()]);
    }

    #[test]
    fn casts() {
        let a = Tensor::vector(vec![1.7f32, -1.7, 0.0]);
        assert_eq!(
            cast(&a, DType::Int32).unwrap().as_slice::<i32>().unwrap(),
            &[1, -1, 0]
        );
        assert_eq!(
            cast(&a, DType::Bool).unwrap().as_slice::<bool>().unwrap(),
            &[true, true, false]
        );
        let s = Tensor::vector(vec![b"x".to_vec()]);
        assert!(cast(&s, DType::Float32).is_err());
    }

    #[test]
    fn select_broadcasts() {
        let c = Tensor::vector(vec![true, false]);
        let x = Tensor::from_vec([2, 2], vec![1i64, 2, 3, 4]).unwrap();
        let y = Tensor::scalar(0i64);
        let r = select(&c, &x, &y).unwrap();
        assert_eq!(r.as_slice::<i64>().unwrap(), &[1, 0, 3, 0]);
    }

    #[test]
    fn round_is_half_to_even() {
        let r = unary(UnaryOp::Round, Tensor::vector(vec![0.5f32, 1.5, 2.5, -0.5])).unwrap();
        assert_eq!(f32s(&r), vec![0.0, 2.0, 2.0, -0.0]);
    }
}
