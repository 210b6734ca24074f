//! `tf.debugging.enable_check_numerics`: nodes created while it is on carry
//! the attr [`CHECK_NUMERICS_ATTR`], and the plan wraps their kernels so a
//! NaN or infinity in any floating-point output fails the run at the op that
//! produced it, naming the op, the output, its dtype and shape.
//!
//! TensorFlow inserts a `CheckNumericsV2` node after each such output; a
//! wrapper gives the same error without changing the graph the user sees
//! (an exported GraphDef keeps the attr, which TensorFlow ignores, as it
//! ignores every attr whose name starts with `_`).

use crate::kernel::{Kernel, OpContext, Value};
use ferroflow_tensor::kernels::elementwise::cast;
use ferroflow_tensor::{bail, DType, Result, Tensor};

/// The node attr that asks for the check (set by the Python layer).
pub const CHECK_NUMERICS_ATTR: &str = "_check_numerics";

/// A kernel whose floating-point outputs are checked after each run.
pub(crate) struct Checked {
    inner: Box<dyn Kernel>,
    /// The op type, which TensorFlow's message names (the node name comes
    /// with the error's node context).
    op: String,
}

impl Checked {
    pub(crate) fn wrap(inner: Box<dyn Kernel>, op: &str) -> Box<dyn Kernel> {
        Box::new(Checked {
            inner,
            op: op.to_string(),
        })
    }
}

/// Whether `t` holds a NaN or an infinity (only floating-point tensors can).
fn non_finite(t: &Tensor) -> Result<bool> {
    let (nan, inf) = match t.dtype() {
        DType::Float32 => {
            let v = t.as_slice::<f32>()?;
            (
                v.iter().any(|x| x.is_nan()),
                v.iter().any(|x| x.is_infinite()),
            )
        }
        DType::Float64 => {
            let v = t.as_slice::<f64>()?;
            (
                v.iter().any(|x| x.is_nan()),
                v.iter().any(|x| x.is_infinite()),
            )
        }
        DType::Float16 | DType::BFloat16 => {
            let wide = cast(t, DType::Float32)?;
            let v = wide.as_slice::<f32>()?;
            (
                v.iter().any(|x| x.is_nan()),
                v.iter().any(|x| x.is_infinite()),
            )
        }
        _ => (false, false),
    };
    Ok(nan || inf)
}

/// A shape as Python prints a tuple: `(2,)`, `(3, 4)`, `()`.
fn python_shape(dims: &[usize]) -> String {
    match dims {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl Kernel for Checked {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        self.inner.compute(ctx)?;
        let count = ctx.outputs.len();
        for (i, v) in ctx.outputs.iter().enumerate() {
            if let Value::Tensor(t) = v {
                if non_finite(t)? {
                    // TensorFlow's wording, so log scrapers and users' habits carry over.
                    bail!(
                        invalid_argument,
                        "\n!!! Detected Infinity or NaN in output {i} of graph op \"{}\" (# of outputs: {count}) !!!\n  dtype: <dtype: '{}'>\n  shape: {}\n",
                        self.op,
                        t.dtype(),
                        python_shape(t.dims())
                    );
                }
            }
        }
        Ok(())
    }

    // Never report a fixed output or a forwarded input: the executor would
    // then skip `compute`, and with it the check.

    fn wants_output_mask(&self) -> bool {
        self.inner.wants_output_mask()
    }

    fn may_block(&self) -> bool {
        self.inner.may_block()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;
    use crate::resources::SessionState;
    use ferroflow_graph::{AttrValue, Graph, NodeSpec, Output};

    /// `Log(Const(values))`, the Log node checked or not.
    fn log_of(values: Vec<f32>, checked: bool) -> (Graph, Output) {
        let mut g = Graph::new();
        let n = values.len();
        let c = g
            .add_node(
                NodeSpec::new("Const", "x")
                    .attr(
                        "value",
                        AttrValue::Tensor(Tensor::from_vec(vec![n], values).unwrap()),
                    )
                    .attr("dtype", AttrValue::Type(DType::Float32)),
            )
            .unwrap();
        let mut spec = NodeSpec::new("Log", "mylog")
            .input(Output::new(c, 0))
            .attr("T", AttrValue::Type(DType::Float32));
        if checked {
            spec = spec.attr(CHECK_NUMERICS_ATTR, AttrValue::Bool(true));
        }
        let y = g.add_node(spec).unwrap();
        (g, Output::new(y, 0))
    }

    #[test]
    fn a_checked_op_fails_the_run_on_nan_or_infinity() {
        let state = SessionState::default();
        let (g, y) = log_of(vec![1.0, 0.0], true);
        let plan = Plan::compile(&g, &state, &[], &[y], &[]).unwrap();
        let err = plan.run(&state, vec![]).unwrap_err().to_string();
        assert!(
            err.contains("Detected Infinity or NaN in output 0 of graph op \"Log\""),
            "{err}"
        );
        assert!(err.contains("shape: (2,)"), "{err}");
    }

    #[test]
    fn finite_outputs_and_unchecked_ops_pass() {
        let state = SessionState::default();
        let (g, y) = log_of(vec![1.0, 2.0], true);
        let plan = Plan::compile(&g, &state, &[], &[y], &[]).unwrap();
        assert!(plan.run(&state, vec![]).is_ok());
        let (g, y) = log_of(vec![1.0, 0.0], false);
        let plan = Plan::compile(&g, &state, &[], &[y], &[]).unwrap();
        assert!(plan.run(&state, vec![]).is_ok());
    }

    #[test]
    fn python_style_shapes() {
        assert_eq!(python_shape(&[]), "()");
        assert_eq!(python_shape(&[2]), "(2,)");
        assert_eq!(python_shape(&[3, 4]), "(3, 4)");
    }
}
