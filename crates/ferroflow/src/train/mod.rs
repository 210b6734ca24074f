//! Training from Rust: gradients, TensorFlow 1's ten optimizers, learning-rate schedules and the
//! global step, built into the graph the way the Python API builds them.
//!
//! * [`GraphBuilder::gradients`] / [`GraphBuilder::raw_gradients`]: `tf.gradients`.
//! * [`Optimizer`] over one of the ten update rules ([`GradientDescent`], [`Momentum`],
//!   [`Adam`], [`Adagrad`], [`AdagradDA`], [`Adadelta`], [`RMSProp`], [`Ftrl`],
//!   [`ProximalGradientDescent`], [`ProximalAdagrad`]), with TensorFlow 1's constructor
//!   arguments and defaults: `compute_gradients`, `apply_gradients`, `minimize`, slots named as
//!   TensorFlow names them (`var/Adam`, `var/Adam_1`, `beta1_power`, ...). The updates are the
//!   fused `ApplyFused` / `SparseApplyFused` ops of `ferroflow_train`, whose input order comes
//!   from its rule table ([`ferroflow_train::rules::RuleKind`]).
//! * Schedules ([`exponential_decay`], [`piecewise_constant`], [`polynomial_decay`],
//!   [`natural_exp_decay`], [`inverse_time_decay`], [`cosine_decay`],
//!   [`cosine_decay_restarts`], [`linear_cosine_decay`]): graph ops of the global step that an
//!   optimizer takes as its learning rate ([`Hyper::Tensor`]).
//! * [`get_or_create_global_step`] / [`get_global_step`].

mod optimizer;
mod schedules;

pub use ferroflow_autodiff::Grad;
pub use optimizer::{
    Adadelta, Adagrad, AdagradDA, Adam, Config, Ftrl, GradientDescent, Hyper, Momentum, Optimizer,
    ProximalAdagrad, ProximalGradientDescent, RMSProp,
};
pub use schedules::{
    cosine_decay, cosine_decay_restarts, exponential_decay, inverse_time_decay,
    linear_cosine_decay, natural_exp_decay, piecewise_constant, polynomial_decay,
};

use crate::builder::{GraphBuilder, VariableHandle};
use ferroflow_autodiff::{gradients, Options};
use ferroflow_graph::{Output, PartialShape};
use ferroflow_tensor::{DType, Error, Result, Tensor};

/// The name TensorFlow gives the global step variable (`tf.GraphKeys.GLOBAL_STEP`).
pub const GLOBAL_STEP: &str = "global_step";

impl GraphBuilder {
    /// Symbolic gradients of `sum(ys)` w.r.t. each of `xs` (None where `ys`
    /// do not depend on an `x`). Sparse (gather) gradients are densified.
    pub fn gradients(&mut self, ys: &[Output], xs: &[Output]) -> Result<Vec<Option<Output>>> {
        let grads = self.raw_gradients(ys, xs)?;
        grads
            .into_iter()
            .map(|g| match g {
                None => Ok(None),
                Some(Grad::Dense(o)) => Ok(Some(o)),
                Some(sparse) => {
                    let mut g = self.graph.write();
                    let mut b = ferroflow_autodiff::Builder::new(&mut g, "gradients_densify");
                    ferroflow_autodiff::to_dense(&mut b, sparse).map(Some)
                }
            })
            .collect()
    }

    /// Symbolic gradients of `sum(ys)` w.r.t. each of `xs` as TensorFlow returns them: the
    /// gradient of a gather (an embedding lookup) stays [`Grad::Sparse`] (`IndexedSlices`), which
    /// optimizers apply row by row.
    pub fn raw_gradients(&mut self, ys: &[Output], xs: &[Output]) -> Result<Vec<Option<Grad>>> {
        let mut g = self.graph.write();
        let scope = g.unique_name("gradients", true);
        let opts = Options {
            scope,
            ..Options::default()
        };
        gradients(&mut g, ys, xs, &[], &opts)
    }
}

/// The global step variable if there is one (`tf.train.get_global_step()`): the variable named
/// [`GLOBAL_STEP`] among the builder's variables, else a node of that name in the graph (e.g.
/// imported), which must be an int32 or int64 scalar variable.
pub fn get_global_step(b: &GraphBuilder) -> Result<Option<VariableHandle>> {
    let known = b.global_variables().into_iter().find(|h| {
        let g = b.graph.read();
        g.node(h.var.node).name == GLOBAL_STEP
    });
    let handle = match known {
        Some(h) => h,
        None => {
            let g = b.graph.read();
            let Some(id) = g.node_by_name(GLOBAL_STEP) else {
                return Ok(None);
            };
            let by_name = |n: &str| g.node_by_name(&format!("{GLOBAL_STEP}/{n}"));
            VariableHandle {
                var: Output::new(id, 0),
                initializer: by_name("Assign").unwrap_or(id),
                value: by_name("read").map_or(Output::new(id, 0), |r| Output::new(r, 0)),
            }
        }
    };
    let g = b.graph.read();
    let info = g.output(handle.var);
    if !matches!(info.dtype, DType::Int32 | DType::Int64) {
        return Err(Error::type_error(format!(
            "Existing \"global_step\" does not have integer type: {}",
            info.dtype
        )));
    }
    if !matches!(info.shape.rank(), Some(0)) {
        return Err(Error::type_error(format!(
            "Existing \"global_step\" is not scalar: {}",
            info.shape
        )));
    }
    Ok(Some(handle))
}

/// The global step (`tf.train.get_or_create_global_step()`): the existing one
/// ([`get_global_step`]), else a new non-trainable int64 scalar variable named `global_step` at
/// the top of the graph, initialised to 0 (`global_step/Initializer/zeros`).
pub fn get_or_create_global_step(b: &mut GraphBuilder) -> Result<VariableHandle> {
    if let Some(h) = get_global_step(b)? {
        return Ok(h);
    }
    b.at_root(|b| {
        b.variable_from(
            GLOBAL_STEP,
            DType::Int64,
            PartialShape::scalar(),
            false,
            |g| g.with_name_scope("Initializer", |g| g.constant(Tensor::scalar(0i64), "zeros")),
        )
    })
}
