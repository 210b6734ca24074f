//! TensorFlow 1's optimizers for Rust programs.
//!
//! Each optimizer is a plain struct of TensorFlow 1's constructor arguments with its defaults
//! ([`Adam::new`] takes what `tf.train.AdamOptimizer` requires, setters the rest); an
//! [`Optimizer`] made from one builds the graph `tf.train.*Optimizer` builds:
//!
//! * slot variables at the top of the graph, named `<var>/<name>`, `<var>/<name>_1`, ... in
//!   TensorFlow's creation order, initialised to TensorFlow's values in the variable's dtype;
//!   non-slot variables (Adam's `beta1_power`, `beta2_power`) in the current name scope;
//! * under the optimizer's name scope (`Adam`, `Adam_1`, ...): the hyper-parameters as float32
//!   constants named as TensorFlow's `_prepare` names them (or the tensors given), cast to each
//!   variable dtype; one `ApplyFused` op named `update` per dtype for the dense gradients, one
//!   `SparseApplyFused` per sparse gradient (under `update_<var>`), their inputs ordered by
//!   `ferroflow_train`'s rule table; Adam's beta-power updates after them;
//! * the train op: a `NoOp` named after the scope grouping the updates, or, with a global step,
//!   the `AssignAdd` of the step (named after the scope) that runs after them.

use crate::builder::{GraphBuilder, VariableHandle};
use ferroflow_autodiff::Grad;
use ferroflow_graph::{AttrValue, NodeId, Output, PartialShape};
use ferroflow_tensor::{DType, Error, Result, Tensor};
use ferroflow_train::rules::RuleKind;

/// A hyper-parameter (learning rate, momentum, ...): a number, which becomes a float32 constant
/// as a Python float does in TensorFlow 1, or a tensor (e.g. a learning-rate schedule).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Hyper {
    /// A number (rounded to float32 in the graph, then cast to the variable's dtype).
    Value(f64),
    /// A scalar tensor, cast to the variable's dtype where the update needs it.
    Tensor(Output),
}

impl From<f64> for Hyper {
    fn from(v: f64) -> Hyper {
        Hyper::Value(v)
    }
}

impl From<f32> for Hyper {
    fn from(v: f32) -> Hyper {
        Hyper::Value(v as f64)
    }
}

impl From<Output> for Hyper {
    fn from(t: Output) -> Hyper {
        Hyper::Tensor(t)
    }
}

impl Hyper {
    /// The number, if this is one.
    pub fn value(self) -> Option<f64> {
        match self {
            Hyper::Value(v) => Some(v),
            Hyper::Tensor(_) => None,
        }
    }

    /// The hyper-parameter as a graph tensor: a number becomes a float32 `Const` named `name`
    /// in the current scope; a tensor is returned as it is.
    pub fn tensor(self, g: &mut GraphBuilder, name: &str) -> Result<Output> {
        match self {
            Hyper::Value(v) => g.constant(Tensor::scalar(v as f32), name),
            Hyper::Tensor(t) => Ok(t),
        }
    }

    /// True for a number or a `Const` node (what TensorFlow's graph optimizer folds).
    pub(crate) fn is_const(self, g: &GraphBuilder) -> bool {
        match self {
            Hyper::Value(_) => true,
            Hyper::Tensor(t) => g.graph.read().node(t.node).op == "Const",
        }
    }
}

/// Checks a numeric hyper-parameter as TensorFlow's constructors do (tensors are not checked).
fn check(value: Hyper, ok: impl Fn(f64) -> bool, message: impl Fn(f64) -> String) -> Result<()> {
    match value {
        Hyper::Value(v) if !ok(v) => Err(Error::value(message(v))),
        _ => Ok(()),
    }
}

macro_rules! setters {
    ($ty:ident { $($field:ident: $t:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                pub fn $field(mut self, value: impl Into<$t>) -> Self {
                    self.$field = value.into();
                    self
                }
            )*
        }
    };
}

/// `tf.train.GradientDescentOptimizer`: `var -= learning_rate * grad`.
#[derive(Clone, Debug)]
pub struct GradientDescent {
    /// The step size.
    pub learning_rate: Hyper,
    /// The name scope of the update ops (default `GradientDescent`).
    pub name: String,
}

impl GradientDescent {
    /// `GradientDescentOptimizer(learning_rate)`.
    pub fn new(learning_rate: impl Into<Hyper>) -> Self {
        GradientDescent {
            learning_rate: learning_rate.into(),
            name: "GradientDescent".into(),
        }
    }
}
setters!(GradientDescent { name: String });

/// `tf.train.MomentumOptimizer`: `accum = accum * momentum + grad; var -= lr * accum` (or the
/// Nesterov form).
#[derive(Clone, Debug)]
pub struct Momentum {
    /// The step size.
    pub learning_rate: Hyper,
    /// The momentum.
    pub momentum: Hyper,
    /// Nesterov momentum (default false).
    pub use_nesterov: bool,
    /// The name scope and slot name (default `Momentum`).
    pub name: String,
}

impl Momentum {
    /// `MomentumOptimizer(learning_rate, momentum)`.
    pub fn new(learning_rate: impl Into<Hyper>, momentum: impl Into<Hyper>) -> Self {
        Momentum {
            learning_rate: learning_rate.into(),
            momentum: momentum.into(),
            use_nesterov: false,
            name: "Momentum".into(),
        }
    }
}
setters!(Momentum {
    use_nesterov: bool,
    name: String
});

/// `tf.train.AdamOptimizer`, with TensorFlow 1's epsilon-hat form and float32 beta powers.
#[derive(Clone, Debug)]
pub struct Adam {
    /// The step size (default 0.001).
    pub learning_rate: Hyper,
    /// Decay of the first moment (default 0.9).
    pub beta1: Hyper,
    /// Decay of the second moment (default 0.999).
    pub beta2: Hyper,
    /// Added to the denominator (default 1e-8).
    pub epsilon: Hyper,
    /// The name scope and slot name (default `Adam`).
    pub name: String,
}

impl Adam {
    /// `AdamOptimizer(learning_rate)` with the other defaults.
    pub fn new(learning_rate: impl Into<Hyper>) -> Self {
        Adam {
            learning_rate: learning_rate.into(),
            beta1: Hyper::Value(0.9),
            beta2: Hyper::Value(0.999),
            epsilon: Hyper::Value(1e-8),
            name: "Adam".into(),
        }
    }
}

impl Default for Adam {
    fn default() -> Self {
        Adam::new(0.001)
    }
}
setters!(Adam {
    beta1: Hyper,
    beta2: Hyper,
    epsilon: Hyper,
    name: String
});

/// `tf.train.AdagradOptimizer`: `accum += grad^2; var -= lr * grad / sqrt(accum)`.
#[derive(Clone, Debug)]
pub struct Adagrad {
    /// The step size.
    pub learning_rate: Hyper,
    /// The accumulator's starting value, positive (default 0.1).
    pub initial_accumulator_value: f64,
    /// The name scope and slot name (default `Adagrad`).
    pub name: String,
}

impl Adagrad {
    /// `AdagradOptimizer(learning_rate)`.
    pub fn new(learning_rate: impl Into<Hyper>) -> Self {
        Adagrad {
            learning_rate: learning_rate.into(),
            initial_accumulator_value: 0.1,
            name: "Adagrad".into(),
        }
    }
}
setters!(Adagrad {
    initial_accumulator_value: f64,
    name: String
});

/// `tf.train.AdagradDAOptimizer`: Adagrad dual averaging, driven by an int64 global step.
#[derive(Clone, Debug)]
pub struct AdagradDA {
    /// The step size.
    pub learning_rate: Hyper,
    /// The global step (an int64 scalar, e.g. the value of
    /// [`get_or_create_global_step`](crate::train::get_or_create_global_step)).
    pub global_step: Output,
    /// The squared accumulator's starting value, positive (default 0.1).
    pub initial_gradient_squared_accumulator_value: f64,
    /// L1 regularization (default 0).
    pub l1_regularization_strength: Hyper,
    /// L2 regularization (default 0).
    pub l2_regularization_strength: Hyper,
    /// The name scope and slot name (default `AdagradDA`).
    pub name: String,
}

impl AdagradDA {
    /// `AdagradDAOptimizer(learning_rate, global_step)`.
    pub fn new(learning_rate: impl Into<Hyper>, global_step: Output) -> Self {
        AdagradDA {
            learning_rate: learning_rate.into(),
            global_step,
            initial_gradient_squared_accumulator_value: 0.1,
            l1_regularization_strength: Hyper::Value(0.0),
            l2_regularization_strength: Hyper::Value(0.0),
            name: "AdagradDA".into(),
        }
    }
}
setters!(AdagradDA {
    initial_gradient_squared_accumulator_value: f64,
    l1_regularization_strength: Hyper,
    l2_regularization_strength: Hyper,
    name: String,
});

/// `tf.train.AdadeltaOptimizer`.
#[derive(Clone, Debug)]
pub struct Adadelta {
    /// The step size (default 0.001).
    pub learning_rate: Hyper,
    /// The decay rate (default 0.95).
    pub rho: Hyper,
    /// Added for stability (default 1e-8).
    pub epsilon: Hyper,
    /// The name scope and slot name (default `Adadelta`).
    pub name: String,
}

impl Adadelta {
    /// `AdadeltaOptimizer(learning_rate)` with the other defaults.
    pub fn new(learning_rate: impl Into<Hyper>) -> Self {
        Adadelta {
            learning_rate: learning_rate.into(),
            rho: Hyper::Value(0.95),
            epsilon: Hyper::Value(1e-8),
            name: "Adadelta".into(),
        }
    }
}

impl Default for Adadelta {
    fn default() -> Self {
        Adadelta::new(0.001)
    }
}
setters!(Adadelta {
    rho: Hyper,
    epsilon: Hyper,
    name: String
});

/// `tf.train.RMSPropOptimizer` (optionally centered), with momentum.
#[derive(Clone, Debug)]
pub struct RMSProp {
    /// The step size.
    pub learning_rate: Hyper,
    /// Discount of the squared-gradient average (default 0.9).
    pub decay: Hyper,
    /// Momentum (default 0).
    pub momentum: Hyper,
    /// Added to the denominator (default 1e-10).
    pub epsilon: Hyper,
    /// Normalise by the estimated variance rather than the second moment (default false).
    pub centered: bool,
    /// The name scope and slot name (default `RMSProp`).
    pub name: String,
}

impl RMSProp {
    /// `RMSPropOptimizer(learning_rate)` with the other defaults.
    pub fn new(learning_rate: impl Into<Hyper>) -> Self {
        RMSProp {
            learning_rate: learning_rate.into(),
            decay: Hyper::Value(0.9),
            momentum: Hyper::Value(0.0),
            epsilon: Hyper::Value(1e-10),
            centered: false,
            name: "RMSProp".into(),
        }
    }
}
setters!(RMSProp {
    decay: Hyper,
    momentum: Hyper,
    epsilon: Hyper,
    centered: bool,
    name: String
});

/// `tf.train.FtrlOptimizer`: FTRL-Proximal, with optional l2 shrinkage and `beta`.
#[derive(Clone, Debug)]
pub struct Ftrl {
    /// The step size.
    pub learning_rate: Hyper,
    /// The learning-rate power, zero or negative (default -0.5).
    pub learning_rate_power: Hyper,
    /// The accumulator's starting value, zero or positive (default 0.1).
    pub initial_accumulator_value: f64,
    /// L1 regularization, zero or positive (default 0).
    pub l1_regularization_strength: Hyper,
    /// L2 regularization, zero or positive (default 0).
    pub l2_regularization_strength: Hyper,
    /// L2 shrinkage regularization, zero or positive (default 0; positive selects
    /// TensorFlow's `ApplyFtrlV2`).
    pub l2_shrinkage_regularization_strength: Hyper,
    /// Added to the l2 strength as `beta / (2 * learning_rate)` (default 0).
    pub beta: f64,
    /// The name of the accumulator slots (default: `name`).
    pub accum_name: Option<String>,
    /// The name of the linear slots (default: `name`).
    pub linear_name: Option<String>,
    /// The name scope and default slot name (default `Ftrl`).
    pub name: String,
}

impl Ftrl {
    /// `FtrlOptimizer(learning_rate)` with the other defaults.
    pub fn new(learning_rate: impl Into<Hyper>) -> Self {
        Ftrl {
            learning_rate: learning_rate.into(),
            learning_rate_power: Hyper::Value(-0.5),
            initial_accumulator_value: 0.1,
            l1_regularization_strength: Hyper::Value(0.0),
            l2_regularization_strength: Hyper::Value(0.0),
            l2_shrinkage_regularization_strength: Hyper::Value(0.0),
            beta: 0.0,
            accum_name: None,
            linear_name: None,
            name: "Ftrl".into(),
        }
    }
}
setters!(Ftrl {
    learning_rate_power: Hyper,
    initial_accumulator_value: f64,
    l1_regularization_strength: Hyper,
    l2_regularization_strength: Hyper,
    l2_shrinkage_regularization_strength: Hyper,
    beta: f64,
    accum_name: Option<String>,
    linear_name: Option<String>,
    name: String,
});

/// `tf.train.ProximalGradientDescentOptimizer`: a gradient step, then the l1/l2 proximal step.
#[derive(Clone, Debug)]
pub struct ProximalGradientDescent {
    /// The step size.
    pub learning_rate: Hyper,
    /// L1 regularization (default 0).
    pub l1_regularization_strength: Hyper,
    /// L2 regularization (default 0).
    pub l2_regularization_strength: Hyper,
    /// The name scope (default `ProximalGradientDescent`).
    pub name: String,
}

impl ProximalGradientDescent {
    /// `ProximalGradientDescentOptimizer(learning_rate)`.
    pub fn new(learning_rate: impl Into<Hyper>) -> Self {
        ProximalGradientDescent {
            learning_rate: learning_rate.into(),
            l1_regularization_strength: Hyper::Value(0.0),
            l2_regularization_strength: Hyper::Value(0.0),
            name: "ProximalGradientDescent".into(),
        }
    }
}
setters!(ProximalGradientDescent {
    l1_regularization_strength: Hyper,
    l2_regularization_strength: Hyper,
    name: String,
});

/// `tf.train.ProximalAdagradOptimizer`: an Adagrad step, then the l1/l2 proximal step.
#[derive(Clone, Debug)]
pub struct ProximalAdagrad {
    /// The step size.
    pub learning_rate: Hyper,
    /// The accumulator's starting value, positive (default 0.1).
    pub initial_accumulator_value: f64,
    /// L1 regularization (default 0).
    pub l1_regularization_strength: Hyper,
    /// L2 regularization (default 0).
    pub l2_regularization_strength: Hyper,
    /// The name scope and slot name (default `ProximalAdagrad`).
    pub name: String,
}

impl ProximalAdagrad {
    /// `ProximalAdagradOptimizer(learning_rate)`.
    pub fn new(learning_rate: impl Into<Hyper>) -> Self {
        ProximalAdagrad {
            learning_rate: learning_rate.into(),
            initial_accumulator_value: 0.1,
            l1_regularization_strength: Hyper::Value(0.0),
            l2_regularization_strength: Hyper::Value(0.0),
            name: "ProximalAdagrad".into(),
        }
    }
}
setters!(ProximalAdagrad {
    initial_accumulator_value: f64,
    l1_regularization_strength: Hyper,
    l2_regularization_strength: Hyper,
    name: String,
});

/// One of the ten optimizers' arguments.
#[derive(Clone, Debug)]
pub enum Config {
    /// `GradientDescentOptimizer`.
    GradientDescent(GradientDescent),
    /// `MomentumOptimizer`.
    Momentum(Momentum),
    /// `AdamOptimizer`.
    Adam(Adam),
    /// `AdagradOptimizer`.
    Adagrad(Adagrad),
    /// `AdagradDAOptimizer`.
    AdagradDA(AdagradDA),
    /// `AdadeltaOptimizer`.
    Adadelta(Adadelta),
    /// `RMSPropOptimizer`.
    RMSProp(RMSProp),
    /// `FtrlOptimizer`.
    Ftrl(Ftrl),
    /// `ProximalGradientDescentOptimizer`.
    ProximalGradientDescent(ProximalGradientDescent),
    /// `ProximalAdagradOptimizer`.
    ProximalAdagrad(ProximalAdagrad),
}

macro_rules! config_from {
    ($($ty:ident),*) => {
        $(
            impl From<$ty> for Config {
                fn from(c: $ty) -> Config {
                    Config::$ty(c)
                }
            }
            impl From<$ty> for Optimizer {
                fn from(c: $ty) -> Optimizer {
                    Optimizer::new(c)
                }
            }
        )*
    };
}
config_from!(
    GradientDescent,
    Momentum,
    Adam,
    Adagrad,
    AdagradDA,
    Adadelta,
    RMSProp,
    Ftrl,
    ProximalGradientDescent,
    ProximalAdagrad
);

/// A slot's starting value.
#[derive(Copy, Clone, Debug)]
enum SlotInit {
    Zeros,
    Ones,
    Value(f64),
}

impl Config {
    /// The optimizer's name (its name scope and, for most, its slots' name).
    pub fn name(&self) -> &str {
        match self {
            Config::GradientDescent(c) => &c.name,
            Config::Momentum(c) => &c.name,
            Config::Adam(c) => &c.name,
            Config::Adagrad(c) => &c.name,
            Config::AdagradDA(c) => &c.name,
            Config::Adadelta(c) => &c.name,
            Config::RMSProp(c) => &c.name,
            Config::Ftrl(c) => &c.name,
            Config::ProximalGradientDescent(c) => &c.name,
            Config::ProximalAdagrad(c) => &c.name,
        }
    }

    /// The fused update rule.
    pub fn rule(&self) -> RuleKind {
        match self {
            Config::GradientDescent(_) => RuleKind::Sgd,
            Config::Momentum(_) => RuleKind::Momentum,
            Config::Adam(_) => RuleKind::Adam,
            Config::Adagrad(_) => RuleKind::Adagrad,
            Config::AdagradDA(_) => RuleKind::AdagradDa,
            Config::Adadelta(_) => RuleKind::Adadelta,
            Config::RMSProp(_) => RuleKind::RmsProp,
            Config::Ftrl(_) => RuleKind::Ftrl,
            Config::ProximalGradientDescent(_) => RuleKind::ProximalSgd,
            Config::ProximalAdagrad(_) => RuleKind::ProximalAdagrad,
        }
    }

    fn centered(&self) -> bool {
        matches!(self, Config::RMSProp(c) if c.centered)
    }

    /// The constructor checks of TensorFlow (`ValueError`s naming the argument).
    fn validate(&self) -> Result<()> {
        let positive = |what: &'static str, v: f64| {
            check(
                Hyper::Value(v),
                |v| v > 0.0,
                move |v| format!("{what} must be positive: {v}"),
            )
        };
        let non_negative = |what: &'static str, h: Hyper| {
            check(
                h,
                |v| v >= 0.0,
                move |v| format!("{what} {v:.6} needs to be positive or zero"),
            )
        };
        match self {
            Config::Adagrad(c) => {
                positive("initial_accumulator_value", c.initial_accumulator_value)
            }
            Config::ProximalAdagrad(c) => {
                positive("initial_accumulator_value", c.initial_accumulator_value)
            }
            Config::AdagradDA(c) => positive(
                "initial_gradient_squared_accumulator_value",
                c.initial_gradient_squared_accumulator_value,
            ),
            Config::Ftrl(c) => {
                non_negative(
                    "initial_accumulator_value",
                    Hyper::Value(c.initial_accumulator_value),
                )?;
                check(
                    c.learning_rate_power,
                    |v| v <= 0.0,
                    |v| format!("learning_rate_power {v:.6} needs to be negative or zero"),
                )?;
                non_negative("l1_regularization_strength", c.l1_regularization_strength)?;
                non_negative("l2_regularization_strength", c.l2_regularization_strength)?;
                non_negative(
                    "l2_shrinkage_regularization_strength",
                    c.l2_shrinkage_regularization_strength,
                )
            }
            _ => Ok(()),
        }
    }

    /// `(slot name, the variable-name suffix it is created under, starting value)` per slot, in
    /// TensorFlow's creation order.
    fn slots(&self) -> Vec<(&'static str, &str, SlotInit)> {
        let name = self.name();
        match self {
            Config::GradientDescent(_) | Config::ProximalGradientDescent(_) => vec![],
            Config::Momentum(_) => vec![("momentum", name, SlotInit::Zeros)],
            Config::Adam(_) => vec![("m", name, SlotInit::Zeros), ("v", name, SlotInit::Zeros)],
            Config::Adagrad(c) => vec![(
                "accumulator",
                name,
                SlotInit::Value(c.initial_accumulator_value),
            )],
            Config::ProximalAdagrad(c) => vec![(
                "accumulator",
                name,
                SlotInit::Value(c.initial_accumulator_value),
            )],
            Config::AdagradDA(c) => vec![
                ("gradient_accumulator", name, SlotInit::Zeros),
                (
                    "gradient_squared_accumulator",
                    name,
                    SlotInit::Value(c.initial_gradient_squared_accumulator_value),
                ),
            ],
            Config::Adadelta(_) => vec![
                ("accum", name, SlotInit::Zeros),
                ("accum_update", name, SlotInit::Zeros),
            ],
            Config::RMSProp(c) => {
                let mut v = vec![("rms", name, SlotInit::Ones)];
                if c.centered {
                    v.push(("mg", name, SlotInit::Zeros));
                }
                v.push(("momentum", name, SlotInit::Zeros));
                v
            }
            Config::Ftrl(c) => vec![
                (
                    "accum",
                    c.accum_name.as_deref().unwrap_or(name),
                    SlotInit::Value(c.initial_accumulator_value),
                ),
                (
                    "linear",
                    c.linear_name.as_deref().unwrap_or(name),
                    SlotInit::Zeros,
                ),
            ],
        }
    }

    /// The update ops' attributes besides `rule` and `N`.
    fn rule_attrs(&self) -> Vec<(&'static str, AttrValue)> {
        match self {
            Config::Momentum(c) => vec![("use_nesterov", AttrValue::Bool(c.use_nesterov))],
            Config::RMSProp(c) => vec![("centered", AttrValue::Bool(c.centered))],
            Config::Ftrl(c) => {
                let shrink = c
                    .l2_shrinkage_regularization_strength
                    .value()
                    .is_none_or(|v| v > 0.0);
                vec![("shrinkage", AttrValue::Bool(shrink))]
            }
            _ => vec![],
        }
    }

    /// The hyper-parameter tensors (`_prepare`), under the rule table's names, before casting.
    fn prepare(
        &self,
        g: &mut GraphBuilder,
        powers: Option<(VariableHandle, VariableHandle)>,
    ) -> Result<Vec<(&'static str, Output)>> {
        Ok(match self {
            Config::GradientDescent(c) => vec![("lr", c.learning_rate.tensor(g, "learning_rate")?)],
            Config::Momentum(c) => vec![
                ("lr", c.learning_rate.tensor(g, "learning_rate")?),
                ("momentum", c.momentum.tensor(g, "momentum")?),
            ],
            Config::Adam(c) => {
                let (p1, p2) = powers.ok_or_else(|| Error::internal("Adam without beta powers"))?;
                vec![
                    ("lr", c.learning_rate.tensor(g, "learning_rate")?),
                    ("beta1", c.beta1.tensor(g, "beta1")?),
                    ("beta2", c.beta2.tensor(g, "beta2")?),
                    ("epsilon", c.epsilon.tensor(g, "epsilon")?),
                    ("beta1_power", p1.value),
                    ("beta2_power", p2.value),
                ]
            }
            Config::Adagrad(c) => vec![("lr", c.learning_rate.tensor(g, "learning_rate")?)],
            Config::AdagradDA(c) => {
                let lr = c.learning_rate.tensor(g, "learning_rate")?;
                let step_dtype = g.dtype(c.global_step);
                if step_dtype != DType::Int64 {
                    return Err(Error::type_error(format!(
                        "Input 'global_step' of 'ApplyAdagradDA' Op has type {step_dtype} that does \
                         not match expected type of int64."
                    )));
                }
                vec![
                    ("lr", lr),
                    ("l1", c.l1_regularization_strength.tensor(g, "Const")?),
                    ("l2", c.l2_regularization_strength.tensor(g, "Const")?),
                    ("global_step", c.global_step),
                ]
            }
            Config::Adadelta(c) => vec![
                ("lr", c.learning_rate.tensor(g, "lr")?),
                ("rho", c.rho.tensor(g, "rho")?),
                ("epsilon", c.epsilon.tensor(g, "epsilon")?),
            ],
            Config::RMSProp(c) => vec![
                ("lr", c.learning_rate.tensor(g, "learning_rate")?),
                ("rho", c.decay.tensor(g, "decay")?),
                ("momentum", c.momentum.tensor(g, "momentum")?),
                ("epsilon", c.epsilon.tensor(g, "epsilon")?),
            ],
            Config::Ftrl(c) => {
                let lr = c.learning_rate.tensor(g, "learning_rate")?;
                let l1 = c
                    .l1_regularization_strength
                    .tensor(g, "l1_regularization_strength")?;
                let l2 = if c.beta != 0.0 {
                    // l2 + beta / (2 * max(lr, 1e-36)), in the learning rate's dtype.
                    let dtype = g.dtype(lr);
                    let tiny = g.build(|b| b.scalar(dtype, 1e-36))?;
                    let clipped = g.binary("Maximum", lr, tiny)?;
                    let two = g.build(|b| b.scalar(dtype, 2.0))?;
                    let twice = g.mul(two, clipped)?;
                    let beta = g.build(|b| b.scalar(dtype, c.beta))?;
                    let ratio = g.binary("RealDiv", beta, twice)?;
                    let l2 = match c.l2_regularization_strength {
                        Hyper::Value(v) => g.build(|b| b.scalar(dtype, v))?,
                        Hyper::Tensor(t) => t,
                    };
                    g.add_v2(l2, ratio)?
                } else {
                    c.l2_regularization_strength
                        .tensor(g, "adjusted_l2_regularization_strength")?
                };
                vec![
                    ("lr", lr),
                    ("l1", l1),
                    ("l2", l2),
                    (
                        "l2_shrinkage",
                        c.l2_shrinkage_regularization_strength
                            .tensor(g, "l2_shrinkage_regularization_strength")?,
                    ),
                    (
                        "lr_power",
                        c.learning_rate_power.tensor(g, "learning_rate_power")?,
                    ),
                ]
            }
            Config::ProximalGradientDescent(ProximalGradientDescent {
                learning_rate,
                l1_regularization_strength,
                l2_regularization_strength,
                ..
            })
            | Config::ProximalAdagrad(ProximalAdagrad {
                learning_rate,
                l1_regularization_strength,
                l2_regularization_strength,
                ..
            }) => vec![
                ("lr", learning_rate.tensor(g, "learning_rate")?),
                (
                    "l1",
                    l1_regularization_strength.tensor(g, "l1_regularization_strength")?,
                ),
                (
                    "l2",
                    l2_regularization_strength.tensor(g, "l2_regularization_strength")?,
                ),
            ],
        })
    }

    /// TensorFlow's dense proximal kernels take their hyper-parameters uncast, so another dtype
    /// than the variable's is a `TypeError` (the op TensorFlow would have built is named).
    fn uncast_dense_op(&self) -> Option<&'static str> {
        match self {
            Config::ProximalGradientDescent(_) => Some("ApplyProximalGradientDescent"),
            Config::ProximalAdagrad(_) => Some("ApplyProximalAdagrad"),
            _ => None,
        }
    }
}

/// The dtypes optimizers update (`Optimizer._valid_dtypes`).
const FLOATS: [DType; 4] = [
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
];

/// A slot variable made by an [`Optimizer`].
#[derive(Clone, Debug)]
struct Slot {
    graph: usize,
    var: NodeId,
    name: &'static str,
    handle: VariableHandle,
}

/// A TensorFlow 1 optimizer: the arguments of one update rule ([`Config`]) and the slot and
/// non-slot variables it has made (reused when it applies gradients again in the same graph,
/// as TensorFlow's are).
#[derive(Clone, Debug)]
pub struct Optimizer {
    config: Config,
    slots: Vec<Slot>,
    /// `(graph, name, variable)` of the non-slot variables (Adam's beta powers).
    non_slot: Vec<(usize, &'static str, VariableHandle)>,
}

fn graph_key(g: &GraphBuilder) -> usize {
    std::sync::Arc::as_ptr(&g.graph) as usize
}

impl Optimizer {
    /// An optimizer over `config` (any of the ten argument structs).
    pub fn new(config: impl Into<Config>) -> Optimizer {
        Optimizer {
            config: config.into(),
            slots: Vec::new(),
            non_slot: Vec::new(),
        }
    }

    /// `GradientDescentOptimizer(learning_rate)`.
    pub fn gradient_descent(learning_rate: impl Into<Hyper>) -> Optimizer {
        GradientDescent::new(learning_rate).into()
    }

    /// `MomentumOptimizer(learning_rate, momentum)`.
    pub fn momentum(learning_rate: impl Into<Hyper>, momentum: impl Into<Hyper>) -> Optimizer {
        Momentum::new(learning_rate, momentum).into()
    }

    /// `AdamOptimizer(learning_rate)` with TensorFlow's other defaults.
    pub fn adam(learning_rate: impl Into<Hyper>) -> Optimizer {
        Adam::new(learning_rate).into()
    }

    /// The arguments.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The name (`get_name()`).
    pub fn name(&self) -> &str {
        self.config.name()
    }

    /// The slot `name` (`"m"`, `"momentum"`, ...) of `var`, once gradients were applied to it
    /// (`get_slot`).
    pub fn get_slot(
        &self,
        g: &GraphBuilder,
        var: &VariableHandle,
        name: &str,
    ) -> Option<VariableHandle> {
        let key = graph_key(g);
        self.slots
            .iter()
            .find(|s| s.graph == key && s.var == var.var.node && s.name == name)
            .map(|s| s.handle)
    }

    /// The names of the slots made so far, sorted (`get_slot_names`).
    pub fn get_slot_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.slots.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Every slot and non-slot variable made in `g`'s graph (`variables()`), to initialise or
    /// save them. They are also among `g`'s [`global_variables`](GraphBuilder::global_variables).
    pub fn variables(&self, g: &GraphBuilder) -> Vec<VariableHandle> {
        let key = graph_key(g);
        self.non_slot
            .iter()
            .filter(|(k, _, _)| *k == key)
            .map(|(_, _, h)| *h)
            .chain(
                self.slots
                    .iter()
                    .filter(|s| s.graph == key)
                    .map(|s| s.handle),
            )
            .collect()
    }

    /// The initializers of [`variables`](Self::variables) (run them once before training,
    /// or run [`GraphBuilder::global_variables_initializer`]).
    pub fn initializers(&self, g: &GraphBuilder) -> Vec<NodeId> {
        self.variables(g).iter().map(|h| h.initializer).collect()
    }

    /// `[(gradient, variable)]` of `loss` for every variable of `var_list` (default: the
    /// builder's trainable variables); the gradient is `None` where `loss` does not depend on the
    /// variable. Gather gradients stay sparse ([`Grad::Sparse`]).
    pub fn compute_gradients(
        &self,
        g: &mut GraphBuilder,
        loss: Output,
        var_list: Option<&[VariableHandle]>,
    ) -> Result<Vec<(Option<Grad>, VariableHandle)>> {
        let vars = match var_list {
            Some(v) => v.to_vec(),
            None => g.trainable_variables(),
        };
        if vars.is_empty() {
            return Err(Error::value("No variables to optimize."));
        }
        check_dtype(g, loss)?;
        let xs: Vec<Output> = vars.iter().map(|v| v.var).collect();
        let grads = g.raw_gradients(&[loss], &xs)?;
        Ok(grads.into_iter().zip(vars).collect())
    }

    /// Adds the ops that apply `grads_and_vars` and returns the train op; with `global_step`,
    /// the train op also adds one to it after the updates. Pairs without a gradient are skipped.
    pub fn apply_gradients(
        &mut self,
        g: &mut GraphBuilder,
        grads_and_vars: &[(Option<Grad>, VariableHandle)],
        global_step: Option<&VariableHandle>,
    ) -> Result<NodeId> {
        if grads_and_vars.is_empty() {
            return Err(Error::value("No variables provided."));
        }
        self.config.validate()?;
        let pairs: Vec<(Grad, VariableHandle)> = grads_and_vars
            .iter()
            .filter_map(|(gr, v)| gr.map(|gr| (gr, *v)))
            .collect();
        if pairs.is_empty() {
            let names: Vec<String> = grads_and_vars.iter().map(|(_, v)| var_name(g, v)).collect();
            return Err(Error::value(format!(
                "No gradients provided for any variable: [{}].",
                names.join(", ")
            )));
        }
        for (i, (_, v)) in pairs.iter().enumerate() {
            if pairs[..i].iter().any(|(_, w)| w.var == v.var) {
                return Err(Error::value(format!(
                    "Variable {}:0 appears more than once in grads_and_vars.",
                    var_name(g, v)
                )));
            }
            if !g.graph.read().output(v.var).is_ref {
                return Err(Error::type_error(format!(
                    "Variable must be a tf.Variable: {} is not a variable",
                    var_name(g, v)
                )));
            }
            check_dtype(g, v.var)?;
        }
        let vars: Vec<VariableHandle> = pairs.iter().map(|(_, v)| *v).collect();
        let powers = self.create_slots(g, &vars)?;
        let this: &Optimizer = self;
        let config = &this.config;
        g.with_name_scope(config.name(), |g| -> Result<NodeId> {
            let scope = g.scope().to_string();
            let hypers = config.prepare(g, powers)?;
            let mut updates = Vec::new();
            // One fused op per dtype for the dense gradients, in first-seen order.
            let mut dtypes: Vec<DType> = Vec::new();
            for (gr, v) in &pairs {
                if let Grad::Dense(_) = gr {
                    let d = g.dtype(v.var);
                    if !dtypes.contains(&d) {
                        dtypes.push(d);
                    }
                }
            }
            for dtype in dtypes {
                let group: Vec<(Output, VariableHandle)> = pairs
                    .iter()
                    .filter_map(|(gr, v)| match gr {
                        Grad::Dense(o) if g.dtype(v.var) == dtype => Some((*o, *v)),
                        _ => None,
                    })
                    .collect();
                updates.push(this.fused_dense(g, config, &group, dtype, &hypers)?);
            }
            for (gr, v) in &pairs {
                if let Grad::Sparse {
                    values, indices, ..
                } = gr
                {
                    let op_name = var_name(g, v);
                    let op = g.with_name_scope(&format!("update_{op_name}"), |g| {
                        this.fused_sparse(g, config, *values, *indices, v, &hypers)
                    })?;
                    updates.push(op);
                }
            }
            if let Some((p1, p2)) = powers {
                // beta_power *= beta after the updates, where the powers live.
                let Config::Adam(_) = config else {
                    unreachable!()
                };
                let beta1 = lookup(&hypers, "beta1")?;
                let beta2 = lookup(&hypers, "beta2")?;
                for (p, beta) in [(p1, beta1), (p2, beta2)] {
                    let assign = g.build(|b| {
                        b.control = updates.clone();
                        let next = b.mul(p.value, beta)?;
                        b.node("Assign", &[p.var, next], vec![])
                    })?;
                    updates.push(assign);
                }
            }
            match global_step {
                None => g.add_exact("NoOp", &scope, &[], vec![], &updates),
                Some(step) => {
                    let finish = g.group(&updates, "update")?;
                    let dtype = g.dtype(step.var);
                    let one = g.build(|b| b.scalar(dtype, 1.0))?;
                    g.add_exact("AssignAdd", &scope, &[step.var, one], vec![], &[finish])
                }
            }
        })
    }

    /// [`compute_gradients`](Self::compute_gradients) then
    /// [`apply_gradients`](Self::apply_gradients): the train op. `var_list` defaults to the
    /// builder's trainable variables.
    pub fn minimize(
        &mut self,
        g: &mut GraphBuilder,
        loss: Output,
        var_list: Option<&[VariableHandle]>,
        global_step: Option<&VariableHandle>,
    ) -> Result<NodeId> {
        let grads = self.compute_gradients(g, loss, var_list)?;
        if grads.iter().all(|(gr, _)| gr.is_none()) {
            let names: Vec<String> = grads.iter().map(|(_, v)| var_name(g, v)).collect();
            let loss_name = g.graph.read().output_name(loss);
            return Err(Error::value(format!(
                "No gradients provided for any variable, check your graph for ops that do not \
                 support gradients, between variables [{}] and loss {loss_name}.",
                names.join(", ")
            )));
        }
        self.apply_gradients(g, &grads, global_step)
    }

    /// Makes the slots (and Adam's powers) `vars` lack; returns Adam's powers.
    fn create_slots(
        &mut self,
        g: &mut GraphBuilder,
        vars: &[VariableHandle],
    ) -> Result<Option<(VariableHandle, VariableHandle)>> {
        let key = graph_key(g);
        let mut powers = None;
        if let Config::Adam(c) = &self.config {
            let mut made = Vec::new();
            for (name, initial) in [("beta1_power", c.beta1), ("beta2_power", c.beta2)] {
                let existing = self
                    .non_slot
                    .iter()
                    .find(|(k, n, _)| *k == key && *n == name)
                    .map(|(_, _, h)| *h);
                let h = match existing {
                    Some(h) => h,
                    None => {
                        let h = match initial {
                            Hyper::Value(v) => {
                                g.variable_with(name, Tensor::scalar(v as f32), false)?
                            }
                            Hyper::Tensor(t) => {
                                let (dtype, shape) = {
                                    let graph = g.graph.read();
                                    let info = graph.output(t);
                                    (info.dtype, info.shape.clone())
                                };
                                g.variable_from(name, dtype, shape, false, |_| Ok(t))?
                            }
                        };
                        self.non_slot.push((key, name, h));
                        h
                    }
                };
                made.push(h);
            }
            powers = Some((made[0], made[1]));
        }
        for v in vars {
            for (slot, suffix, init) in self.config.slots() {
                if self
                    .slots
                    .iter()
                    .any(|s| s.graph == key && s.var == v.var.node && s.name == slot)
                {
                    continue;
                }
                let handle = make_slot(g, v, suffix, init)?;
                self.slots.push(Slot {
                    graph: key,
                    var: v.var.node,
                    name: slot,
                    handle,
                });
            }
        }
        Ok(powers)
    }

    fn slot_refs(&self, g: &GraphBuilder, v: &VariableHandle) -> Result<Vec<Output>> {
        let centered = self.config.centered();
        self.config
            .rule()
            .slot_names(centered)
            .iter()
            .map(|name| {
                self.get_slot(g, v, name).map(|h| h.var).ok_or_else(|| {
                    Error::internal(format!(
                        "{}: no slot '{name}' for {}",
                        self.name(),
                        var_name(g, v)
                    ))
                })
            })
            .collect()
    }

    /// The hyper-parameter inputs for variables of `dtype`, in the rule table's order.
    fn hyper_inputs(
        &self,
        g: &mut GraphBuilder,
        config: &Config,
        hypers: &[(&'static str, Output)],
        dtype: DType,
        dense: bool,
    ) -> Result<Vec<Output>> {
        let kind = config.rule();
        let names = kind.hyper_names();
        if names.len() != hypers.len() || names.iter().any(|n| lookup(hypers, n).is_err()) {
            return Err(Error::internal(format!(
                "{} gives hyper-parameters {:?}, rule '{}' takes {names:?}",
                config.name(),
                hypers.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
                kind.name()
            )));
        }
        names
            .iter()
            .map(|name| {
                let t = lookup(hypers, name)?;
                if *name == "global_step" {
                    return Ok(t);
                }
                match config.uncast_dense_op() {
                    Some(op) if dense => {
                        let have = g.dtype(t);
                        if have != dtype {
                            return Err(Error::type_error(format!(
                                "Input '{name}' of '{op}' Op has type {have} that does not match \
                                 type {dtype} of argument 'var'."
                            )));
                        }
                        Ok(t)
                    }
                    _ => g.cast(t, dtype),
                }
            })
            .collect()
    }

    fn fused_dense(
        &self,
        g: &mut GraphBuilder,
        config: &Config,
        group: &[(Output, VariableHandle)],
        dtype: DType,
        hypers: &[(&'static str, Output)],
    ) -> Result<NodeId> {
        let mut inputs: Vec<Output> = group.iter().map(|(_, v)| v.var).collect();
        for (_, v) in group {
            inputs.extend(self.slot_refs(g, v)?);
        }
        for (grad, _) in group {
            inputs.push(g.cast(*grad, dtype)?);
        }
        inputs.extend(self.hyper_inputs(g, config, hypers, dtype, true)?);
        let mut attrs = vec![
            (
                "rule",
                AttrValue::Str(config.rule().name().as_bytes().to_vec()),
            ),
            ("N", AttrValue::Int(group.len() as i64)),
        ];
        attrs.extend(config.rule_attrs());
        g.add("ApplyFused", "update", &inputs, attrs)
    }

    fn fused_sparse(
        &self,
        g: &mut GraphBuilder,
        config: &Config,
        values: Output,
        indices: Output,
        v: &VariableHandle,
        hypers: &[(&'static str, Output)],
    ) -> Result<NodeId> {
        let dtype = g.dtype(v.var);
        let mut inputs = vec![v.var];
        inputs.extend(self.slot_refs(g, v)?);
        inputs.push(g.cast(values, dtype)?);
        inputs.push(indices);
        inputs.extend(self.hyper_inputs(g, config, hypers, dtype, false)?);
        let mut attrs = vec![(
            "rule",
            AttrValue::Str(config.rule().name().as_bytes().to_vec()),
        )];
        attrs.extend(config.rule_attrs());
        g.add("SparseApplyFused", "update", &inputs, attrs)
    }
}

fn lookup(hypers: &[(&'static str, Output)], name: &str) -> Result<Output> {
    hypers
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| Error::internal(format!("no hyper-parameter '{name}'")))
}

fn var_name(g: &GraphBuilder, v: &VariableHandle) -> String {
    g.graph.read().node(v.var.node).name.clone()
}

fn check_dtype(g: &GraphBuilder, t: Output) -> Result<()> {
    let graph = g.graph.read();
    let dtype = graph.output(t).dtype;
    if !FLOATS.contains(&dtype) {
        let valid: Vec<String> = FLOATS.iter().map(|d| d.to_string()).collect();
        return Err(Error::value(format!(
            "Invalid type {dtype} for {}, expected: [{}].",
            graph.output_name(t),
            valid.join(", ")
        )));
    }
    Ok(())
}

/// A slot variable `<var>/<suffix>` (made unique) at the top of the graph, non-trainable, of the
/// variable's dtype and shape, initialised as TensorFlow's slot initializers do
/// (`<slot>/Initializer/zeros`, `.../ones`, `.../Const`: a `Fill` of the value in that dtype).
fn make_slot(
    g: &mut GraphBuilder,
    v: &VariableHandle,
    suffix: &str,
    init: SlotInit,
) -> Result<VariableHandle> {
    let (name, dtype, shape) = {
        let graph = g.graph.read();
        let info = graph.output(v.var);
        (
            graph.node(v.var.node).name.clone(),
            info.dtype,
            info.shape.clone(),
        )
    };
    let dims = shape.to_shape().ok_or_else(|| {
        Error::value(format!(
            "cannot make the slot '{name}/{suffix}': variable {name} has shape {shape}, and \
             slots need a fully known shape"
        ))
    })?;
    let dims: Vec<i64> = dims.dims().iter().map(|&d| d as i64).collect();
    let dims32: Vec<i32> = dims.iter().map(|&d| d as i32).collect();
    let (init_name, value) = match init {
        SlotInit::Zeros => ("zeros", 0.0),
        SlotInit::Ones => ("ones", 1.0),
        SlotInit::Value(v) => ("Const", v),
    };
    g.at_root(|g| {
        g.variable_from(
            &format!("{name}/{suffix}"),
            dtype,
            PartialShape::from_i64(Some(&dims)),
            false,
            |g| {
                g.with_name_scope("Initializer", |g| {
                    g.with_name_scope(init_name, |g| {
                        let fill_name = g.scope().to_string();
                        let shape =
                            g.constant(Tensor::vector(dims32.clone()), "shape_as_tensor")?;
                        let value = g.build(|b| b.scalar(dtype, value))?;
                        let fill = g.add_exact("Fill", &fill_name, &[shape, value], vec![], &[])?;
                        Ok(Output::new(fill, 0))
                    })
                })
            },
        )
    })
}
