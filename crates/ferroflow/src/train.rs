//! Training from Rust: gradients, optimizers and learning-rate schedules,
//! built into the graph exactly as the Python API builds them.

use crate::builder::{GraphBuilder, VariableHandle};
use ferroflow_autodiff::{gradients, Grad, Options};
use ferroflow_graph::{AttrValue, NodeId, Output};
use ferroflow_tensor::{DType, Error, Result, Tensor};

impl GraphBuilder {
    /// Symbolic gradients of `sum(ys)` w.r.t. each of `xs` (None where `ys`
    /// do not depend on an `x`). Sparse (gather) gradients are densified.
    pub fn gradients(&mut self, ys: &[Output], xs: &[Output]) -> Result<Vec<Option<Output>>> {
        let scope = {
            let mut g = self.graph.write();
            g.unique_name("gradients", true)
        };
        let grads = {
            let mut g = self.graph.write();
            let opts = Options {
                scope,
                ..Options::default()
            };
            gradients(&mut g, ys, xs, &[], &opts)?
        };
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
}

/// The update rules available to Rust programs (`tf.train.*Optimizer`).
#[derive(Clone, Debug)]
pub enum Optimizer {
    /// `GradientDescentOptimizer(learning_rate)`.
    Sgd { learning_rate: f32 },
    /// `MomentumOptimizer(learning_rate, momentum, use_nesterov)`.
    Momentum {
        learning_rate: f32,
        momentum: f32,
        nesterov: bool,
    },
    /// `AdamOptimizer(learning_rate, beta1, beta2, epsilon)`.
    Adam {
        learning_rate: f32,
        beta1: f32,
        beta2: f32,
        epsilon: f32,
    },
}

impl Optimizer {
    /// Adam with TensorFlow's defaults for everything but the learning rate.
    pub fn adam(learning_rate: f32) -> Optimizer {
        Optimizer::Adam {
            learning_rate,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Optimizer::Sgd { .. } => "GradientDescent",
            Optimizer::Momentum { .. } => "Momentum",
            Optimizer::Adam { .. } => "Adam",
        }
    }

    /// Adds the ops that apply the gradients of `loss` to `vars`; returns
    /// the train op and the initializers of the optimizer's own variables
    /// (slots, Adam's beta powers) to run once before training.
    pub fn minimize(
        &self,
        b: &mut GraphBuilder,
        loss: Output,
        vars: &[VariableHandle],
    ) -> Result<(NodeId, Vec<NodeId>)> {
        if vars.is_empty() {
            return Err(Error::value("No variables to optimize."));
        }
        let xs: Vec<Output> = vars.iter().map(|v| v.var).collect();
        let grads = b.gradients(&[loss], &xs)?;
        let pairs: Vec<(Output, &VariableHandle)> = grads
            .iter()
            .zip(vars)
            .filter_map(|(g, v)| g.map(|g| (g, v)))
            .collect();
        if pairs.is_empty() {
            return Err(Error::value("No gradients provided for any variable."));
        }
        let mut inits = Vec::new();
        let name = self.name();
        let dtype = b.dtype(pairs[0].1.var);
        let shapes: Vec<Tensor> = {
            let g = b.graph.read();
            pairs
                .iter()
                .map(|(_, v)| {
                    let s = g.output(v.var).shape.to_shape().ok_or_else(|| {
                        Error::value("optimizer variables need fully known shapes")
                    })?;
                    Ok(Tensor::zeros(dtype, s))
                })
                .collect::<Result<_>>()?
        };
        let var_name = |b: &GraphBuilder, v: Output| b.graph.read().node(v.node).name.clone();
        let slot = |b: &mut GraphBuilder,
                    v: Output,
                    init: Tensor,
                    inits: &mut Vec<NodeId>|
         -> Result<Output> {
            let base = format!("{}/{name}", var_name(b, v));
            let h = b.variable(&base, init)?;
            inits.push(h.initializer);
            Ok(h.var)
        };
        let mut refs: Vec<Output> = pairs.iter().map(|(_, v)| v.var).collect();
        let (rule, hypers, attrs): (&str, Vec<f32>, Vec<(&str, AttrValue)>) = match *self {
            Optimizer::Sgd { learning_rate } => ("sgd", vec![learning_rate], vec![]),
            Optimizer::Momentum {
                learning_rate,
                momentum,
                nesterov,
            } => {
                for ((_, v), z) in pairs.iter().zip(&shapes) {
                    refs.push(slot(b, v.var, z.clone(), &mut inits)?);
                }
                (
                    "momentum",
                    vec![learning_rate, momentum],
                    vec![("use_nesterov", AttrValue::Bool(nesterov))],
                )
            }
            Optimizer::Adam {
                learning_rate,
                beta1,
                beta2,
                epsilon,
            } => {
                for ((_, v), z) in pairs.iter().zip(&shapes) {
                    refs.push(slot(b, v.var, z.clone(), &mut inits)?);
                    refs.push(slot(b, v.var, z.clone(), &mut inits)?);
                }
                ("adam", vec![learning_rate, beta1, beta2, epsilon], vec![])
            }
        };
        let mut inputs = refs;
        inputs.extend(pairs.iter().map(|(g, _)| *g));
        let mut finish = Vec::new();
        if let Optimizer::Adam { beta1, beta2, .. } = *self {
            let p1 = b.variable("beta1_power", Tensor::scalar(beta1))?;
            let p2 = b.variable("beta2_power", Tensor::scalar(beta2))?;
            inits.extend([p1.initializer, p2.initializer]);
            for p in [p1, p2] {
                let v = b.cast(p.value, dtype)?;
                inputs.push(v);
            }
            finish = vec![(p1, beta1), (p2, beta2)];
        }
        for h in hypers {
            let c = b.constant(Tensor::scalar(h), "hyper")?;
            inputs.push(b.cast(c, dtype)?);
        }
        let mut all_attrs = vec![
            ("rule", AttrValue::Str(rule.as_bytes().to_vec())),
            ("N", AttrValue::Int(pairs.len() as i64)),
        ];
        all_attrs.extend(attrs);
        let update = b.add("ApplyFused", &format!("{name}/update"), &inputs, all_attrs)?;
        let mut deps = vec![update];
        for (p, beta) in finish {
            // beta_power *= beta, after the update.
            let read = b.add_with_control(
                "Identity",
                &format!("{name}/read_power"),
                &[p.var],
                &[update],
            )?;
            let c = b.constant(Tensor::scalar(beta), "beta")?;
            let next = b.mul(Output::new(read, 0), c)?;
            let assign = b.add(
                "Assign",
                &format!("{name}/update_power"),
                &[p.var, next],
                vec![],
            )?;
            deps.push(assign);
        }
        let train = b.group(&deps, name)?;
        Ok((train, inits))
    }
}

/// `learning_rate * decay_rate ^ (global_step / decay_steps)` (floored when
/// `staircase`), TensorFlow's `exponential_decay`, as a float32 tensor.
pub fn exponential_decay(
    b: &mut GraphBuilder,
    learning_rate: f32,
    global_step: Output,
    decay_steps: f32,
    decay_rate: f32,
    staircase: bool,
) -> Result<Output> {
    let step = b.cast(global_step, DType::Float32)?;
    let inv = b.constant(Tensor::scalar(1.0f32 / decay_steps), "inv_decay_steps")?;
    let mut p = b.mul(step, inv)?;
    if staircase {
        p = b.unary("Floor", p)?;
    }
    let rate = b.constant(Tensor::scalar(decay_rate), "decay_rate")?;
    let pw = b.binary("Pow", rate, p)?;
    let lr = b.constant(Tensor::scalar(learning_rate), "learning_rate")?;
    b.mul(lr, pw)
}
