//! Kernels for elementwise math, casts, reductions and products.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::elementwise::{
    self, add_n, binary, cast, leaky_relu, unary, BinaryOp, UnaryOp,
};
use ferroflow_tensor::kernels::matmul::matmul;
use ferroflow_tensor::kernels::reduce::{arg_reduce, cumulative, reduce, ReduceOp};
use ferroflow_tensor::{bail, ensure, DType, Shape};

/// The graph ops computed by [`unary`], and the op of each.
pub(crate) const UNARY_OPS: [(&str, UnaryOp); 29] = [
    ("Neg", UnaryOp::Neg),
    ("Abs", UnaryOp::Abs),
    ("Sign", UnaryOp::Sign),
    ("Square", UnaryOp::Square),
    ("Sqrt", UnaryOp::Sqrt),
    ("Rsqrt", UnaryOp::Rsqrt),
    ("Exp", UnaryOp::Exp),
    ("Log", UnaryOp::Log),
    ("Log1p", UnaryOp::Log1p),
    ("Expm1", UnaryOp::Expm1),
    ("Sin", UnaryOp::Sin),
    ("Cos", UnaryOp::Cos),
    ("Tan", UnaryOp::Tan),
    ("Tanh", UnaryOp::Tanh),
    ("Sigmoid", UnaryOp::Sigmoid),
    ("Floor", UnaryOp::Floor),
    ("Ceil", UnaryOp::Ceil),
    ("Round", UnaryOp::Round),
    ("Reciprocal", UnaryOp::Reciprocal),
    ("Relu", UnaryOp::Relu),
    ("Relu6", UnaryOp::Relu6),
    ("Elu", UnaryOp::Elu),
    ("Selu", UnaryOp::Selu),
    ("Softplus", UnaryOp::Softplus),
    ("Softsign", UnaryOp::Softsign),
    ("LogicalNot", UnaryOp::LogicalNot),
    ("IsFinite", UnaryOp::IsFinite),
    ("IsInf", UnaryOp::IsInf),
    ("IsNan", UnaryOp::IsNan),
];

/// The graph ops computed by [`binary`] (with broadcasting), and the op of each.
pub(crate) const BINARY_OPS: [(&str, BinaryOp); 23] = [
    ("AddV2", BinaryOp::Add),
    ("Add", BinaryOp::Add),
    ("Sub", BinaryOp::Sub),
    ("Mul", BinaryOp::Mul),
    ("RealDiv", BinaryOp::Div),
    ("Div", BinaryOp::Div),
    ("FloorDiv", BinaryOp::FloorDiv),
    ("FloorMod", BinaryOp::FloorMod),
    ("TruncateMod", BinaryOp::TruncateMod),
    ("Pow", BinaryOp::Pow),
    ("Maximum", BinaryOp::Maximum),
    ("Minimum", BinaryOp::Minimum),
    ("SquaredDifference", BinaryOp::SquaredDifference),
    ("DivNoNan", BinaryOp::DivNoNan),
    ("Atan2", BinaryOp::Atan2),
    ("Equal", BinaryOp::Equal),
    ("NotEqual", BinaryOp::NotEqual),
    ("Less", BinaryOp::Less),
    ("LessEqual", BinaryOp::LessEqual),
    ("Greater", BinaryOp::Greater),
    ("GreaterEqual", BinaryOp::GreaterEqual),
    ("LogicalAnd", BinaryOp::LogicalAnd),
    ("LogicalOr", BinaryOp::LogicalOr),
];

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for (name, op) in UNARY_OPS {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let x = ctx.take_input(0)?;
                    ctx.output(unary(op, x)?);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "LeakyRelu",
        factory(|init| {
            let alpha = init.node.attrs.float_or("alpha", 0.2)?;
            boxed(move |ctx| {
                let x = ctx.take_input(0)?;
                ctx.output(leaky_relu(x, alpha)?);
                Ok(())
            })
        }),
    );
    for (name, op) in BINARY_OPS {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let a = ctx.take_input(0)?;
                    let b = ctx.take_input(1)?;
                    ctx.output(binary(op, a, b)?);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "Cast",
        factory(|init| {
            let to = init.node.attrs.dtype("DstT")?;
            boxed(move |ctx| {
                let x = ctx.input(0)?;
                let y = cast(x, to)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    let reductions = [
        ("Sum", ReduceOp::Sum),
        ("Mean", ReduceOp::Mean),
        ("Max", ReduceOp::Max),
        ("Min", ReduceOp::Min),
        ("Prod", ReduceOp::Prod),
        ("Any", ReduceOp::Any),
        ("All", ReduceOp::All),
    ];
    for (name, op) in reductions {
        reg(
            name,
            factory(move |init| {
                let keep = init.node.attrs.bool_or("keep_dims", false)?;
                boxed(move |ctx| {
                    let axes = ctx.input(1)?.to_i64_vec()?;
                    let y = reduce(op, ctx.input(0)?, Some(&axes), keep)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (name, max) in [("ArgMax", true), ("ArgMin", false)] {
        reg(
            name,
            factory(move |init| {
                let out = init.node.attrs.dtype_or("output_type", DType::Int64)?;
                boxed(move |ctx| {
                    let axis = ctx.input(1)?.scalar_i64()?;
                    let y = arg_reduce(ctx.input(0)?, axis, max, out)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (name, prod) in [("Cumsum", false), ("Cumprod", true)] {
        reg(
            name,
            factory(move |init| {
                let exclusive = init.node.attrs.bool_or("exclusive", false)?;
                let reverse = init.node.attrs.bool_or("reverse", false)?;
                boxed(move |ctx| {
                    let axis = ctx.input(1)?.scalar_i64()?;
                    let y = cumulative(ctx.input(0)?, axis, exclusive, reverse, prod)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "MatMul",
        factory(|init| {
            let ta = init.node.attrs.bool_or("transpose_a", false)?;
            let tb = init.node.attrs.bool_or("transpose_b", false)?;
            boxed(move |ctx| {
                let y = matmul(ctx.input(0)?, ctx.input(1)?, ta, tb)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "BatchMatMulV2",
        factory(|init| {
            let ta = init.node.attrs.bool_or("adj_x", false)?;
            let tb = init.node.attrs.bool_or("adj_y", false)?;
            boxed(move |ctx| {
                // Complex adjoints conjugate as well as transpose.
                let y = ferroflow_tensor::kernels::complex::matmul_adjoint(
                    ctx.input(0)?,
                    ctx.input(1)?,
                    ta,
                    tb,
                )?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "AddN",
        factory(|_| {
            boxed(|ctx| {
                let inputs = (0..ctx.num_inputs())
                    .map(|i| ctx.take_input(i))
                    .collect::<Result<Vec<_>, _>>()?;
                ctx.output(add_n(inputs)?);
                Ok(())
            })
        }),
    );
    reg(
        "SelectV2",
        factory(|_| {
            boxed(|ctx| {
                let y = elementwise::select(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Select",
        factory(|_| {
            boxed(|ctx| {
                let (c, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
                ensure!(
                    t.shape() == e.shape(),
                    invalid_argument,
                    "'then' and 'else' must have the same size.  but received: {} vs. {}",
                    t.shape(),
                    e.shape()
                );
                let cond = if c.rank() == 1 && t.rank() > 1 {
                    ensure!(
                        c.dims()[0] == t.dims()[0],
                        invalid_argument,
                        "Number of batches of 'then' must match size of 'cond', but saw: {} vs. {}",
                        t.dims()[0],
                        c.dims()[0]
                    );
                    let mut s = vec![1usize; t.rank()];
                    s[0] = c.dims()[0];
                    c.reshape(Shape::from(s))?
                } else if c.shape() != t.shape() {
                    bail!(
                        invalid_argument,
                        "'cond' and 'then' must have the same size: {} vs. {}",
                        c.shape(),
                        t.shape()
                    );
                } else {
                    c.clone()
                };
                let y = elementwise::select(&cond, t, e)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "CheckNumerics",
        factory(|init| {
            let message = init.node.attrs.str_or("message", "")?;
            boxed(move |ctx| {
                let x = ctx.take_input(0)?;
                let v = cast(&x, DType::Float64)?;
                let vals = v.as_slice::<f64>()?;
                if vals.iter().any(|f| f.is_nan()) {
                    bail!(invalid_argument, "{message} : Tensor had NaN values");
                }
                if vals.iter().any(|f| f.is_infinite()) {
                    bail!(invalid_argument, "{message} : Tensor had Inf values");
                }
                ctx.output(x);
                Ok(())
            })
        }),
    );
}
