//! Kernels of the `tf.linalg` ops: thin wrappers over
//! `ferroflow_tensor::kernels::{linalg, matrix_diag, einsum}` that read the
//! attrs once and the scalar inputs (`k`, band limits) per run.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::matrix_diag::{self, DiagSpec};
use ferroflow_tensor::kernels::{einsum, linalg};
use ferroflow_tensor::{bail, ensure, DType, Result, Tensor};

fn scalar(t: &Tensor, op: &str, what: &str) -> Result<i64> {
    ensure!(
        t.num_elements() == 1,
        invalid_argument,
        "{op}: {what} must be a scalar, got shape {}",
        t.shape()
    );
    Ok(t.to_i64_vec()?[0])
}

fn diag_k(t: &Tensor, op: &str) -> Result<Vec<i64>> {
    if t.rank() > 1 {
        bail!(
            invalid_argument,
            "{op}: diag_index must be a scalar or vector, got shape {}",
            t.shape()
        );
    }
    t.to_i64_vec()
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "Cholesky",
        factory(|_| {
            boxed(|ctx| {
                let y = linalg::cholesky(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MatrixInverse",
        factory(|init| {
            let adj = init.node.attrs.bool_or("adjoint", false)?;
            boxed(move |ctx| {
                let y = linalg::inverse(ctx.input(0)?, adj)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MatrixSquareRoot",
        factory(|_| {
            boxed(|ctx| {
                let y = linalg::matrix_square_root(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MatrixDeterminant",
        factory(|_| {
            boxed(|ctx| {
                let y = linalg::determinant(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "LogMatrixDeterminant",
        factory(|_| {
            boxed(|ctx| {
                let (s, l) = linalg::log_determinant(ctx.input(0)?)?;
                ctx.output(s);
                ctx.output(l);
                Ok(())
            })
        }),
    );
    reg(
        "Lu",
        factory(|init| {
            let idx = init.node.attrs.dtype_or("output_idx_type", DType::Int32)?;
            boxed(move |ctx| {
                let (lu, p) = linalg::lu(ctx.input(0)?, idx)?;
                ctx.output(lu);
                ctx.output(p);
                Ok(())
            })
        }),
    );
    reg(
        "MatrixSolve",
        factory(|init| {
            let adj = init.node.attrs.bool_or("adjoint", false)?;
            boxed(move |ctx| {
                let y = linalg::solve(ctx.input(0)?, ctx.input(1)?, adj)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MatrixTriangularSolve",
        factory(|init| {
            let lower = init.node.attrs.bool_or("lower", true)?;
            let adj = init.node.attrs.bool_or("adjoint", false)?;
            boxed(move |ctx| {
                let y = linalg::triangular_solve(ctx.input(0)?, ctx.input(1)?, lower, adj)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MatrixSolveLs",
        factory(|init| {
            let fast = init.node.attrs.bool_or("fast", true)?;
            boxed(move |ctx| {
                let l2 = ctx.input(2)?.to_f64_vec()?;
                ensure!(
                    l2.len() == 1,
                    invalid_argument,
                    "MatrixSolveLs: l2_regularizer must be a scalar"
                );
                let y = linalg::solve_ls(ctx.input(0)?, ctx.input(1)?, l2[0], fast)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Qr",
        factory(|init| {
            let full = init.node.attrs.bool_or("full_matrices", false)?;
            boxed(move |ctx| {
                let (q, r) = linalg::qr(ctx.input(0)?, full)?;
                ctx.output(q);
                ctx.output(r);
                Ok(())
            })
        }),
    );
    reg(
        "Svd",
        factory(|init| {
            let full = init.node.attrs.bool_or("full_matrices", false)?;
            let uv = init.node.attrs.bool_or("compute_uv", true)?;
            boxed(move |ctx| {
                let (s, u, v) = linalg::svd(ctx.input(0)?, uv, full)?;
                ctx.output(s);
                ctx.output(u);
                ctx.output(v);
                Ok(())
            })
        }),
    );
    reg(
        "SelfAdjointEigV2",
        factory(|init| {
            let cv = init.node.attrs.bool_or("compute_v", true)?;
            boxed(move |ctx| {
                let (e, v) = linalg::self_adjoint_eig(ctx.input(0)?, cv)?;
                ctx.output(e);
                ctx.output(v);
                Ok(())
            })
        }),
    );
    reg(
        "MatrixBandPart",
        factory(|init| {
            let op = init.node.op.clone();
            boxed(move |ctx| {
                let lo = scalar(ctx.input(1)?, &op, "num_lower")?;
                let up = scalar(ctx.input(2)?, &op, "num_upper")?;
                let y = matrix_diag::band_part(ctx.input(0)?, lo, up)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    for (name, version) in [("MatrixDiag", 1), ("MatrixDiagV2", 2), ("MatrixDiagV3", 3)] {
        reg(
            name,
            factory(move |init| {
                let align = align_of(init, version)?;
                boxed(move |ctx| {
                    let d = ctx.input(0)?;
                    let (spec, rows, cols, pad) = if version == 1 {
                        let zero = Tensor::zeros(d.dtype(), ferroflow_tensor::Shape::new(&[]));
                        (DiagSpec::parse(name, &[0], &align)?, -1, -1, zero)
                    } else {
                        (
                            DiagSpec::parse(name, &diag_k(ctx.input(1)?, name)?, &align)?,
                            scalar(ctx.input(2)?, name, "num_rows")?,
                            scalar(ctx.input(3)?, name, "num_cols")?,
                            ctx.input(4)?.clone(),
                        )
                    };
                    let y = matrix_diag::matrix_diag(d, &spec, rows, cols, &pad)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (name, version) in [
        ("MatrixDiagPart", 1),
        ("MatrixDiagPartV2", 2),
        ("MatrixDiagPartV3", 3),
    ] {
        reg(
            name,
            factory(move |init| {
                let align = align_of(init, version)?;
                boxed(move |ctx| {
                    let x = ctx.input(0)?;
                    let (spec, pad) = if version == 1 {
                        let zero = Tensor::zeros(x.dtype(), ferroflow_tensor::Shape::new(&[]));
                        (DiagSpec::parse(name, &[0], &align)?, zero)
                    } else {
                        (
                            DiagSpec::parse(name, &diag_k(ctx.input(1)?, name)?, &align)?,
                            ctx.input(2)?.clone(),
                        )
                    };
                    let y = matrix_diag::matrix_diag_part(x, &spec, &pad)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for (name, version) in [
        ("MatrixSetDiag", 1),
        ("MatrixSetDiagV2", 2),
        ("MatrixSetDiagV3", 3),
    ] {
        reg(
            name,
            factory(move |init| {
                let align = align_of(init, version)?;
                boxed(move |ctx| {
                    let k = if version == 1 {
                        vec![0]
                    } else {
                        diag_k(ctx.input(2)?, name)?
                    };
                    let spec = DiagSpec::parse(name, &k, &align)?;
                    let y = matrix_diag::matrix_set_diag(ctx.input(0)?, ctx.input(1)?, &spec)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "Diag",
        factory(|_| {
            boxed(|ctx| {
                let y = matrix_diag::diag(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "DiagPart",
        factory(|_| {
            boxed(|ctx| {
                let y = matrix_diag::diag_part(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Cross",
        factory(|_| {
            boxed(|ctx| {
                let y = matrix_diag::cross(ctx.input(0)?, ctx.input(1)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Einsum",
        factory(|init| {
            let eq = init.node.attrs.str_or("equation", "")?;
            boxed(move |ctx| {
                let inputs: Vec<&Tensor> = (0..ctx.num_inputs())
                    .map(|i| ctx.input(i))
                    .collect::<Result<_>>()?;
                let y = einsum::einsum(&eq, &inputs)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}

/// The `align` attr: V3's (default `RIGHT_LEFT`); V1 and V2 pack left.
fn align_of(init: &crate::kernel::KernelInit<'_>, version: u8) -> Result<String> {
    if version == 3 {
        init.node.attrs.str_or("align", "RIGHT_LEFT")
    } else {
        Ok("LEFT_LEFT".to_string())
    }
}
