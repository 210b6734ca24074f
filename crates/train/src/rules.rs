//! The update rules of TensorFlow 1's optimizers, one fused pass each.
//!
//! Every formula follows the evaluation order TensorFlow's kernels use
//! (the team's optimizer spec, `specs/optimizers.md`): parenthesised sub-expressions round in
//! the same order, scalars in brackets are formed once per step. The one
//! deliberate difference: `rsqrt` is `1/sqrt(x)` computed exactly, where
//! TensorFlow uses a hardware estimate that differs between CPU models.

use crate::real::Real;

/// Which optimizer an update op runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RuleKind {
    Sgd,
    Momentum,
    Adagrad,
    AdagradDa,
    Adadelta,
    Adam,
    Ftrl,
    ProximalSgd,
    ProximalAdagrad,
    RmsProp,
}

impl RuleKind {
    /// The `rule` attr value of this rule's update ops.
    pub fn name(self) -> &'static str {
        match self {
            RuleKind::Sgd => "sgd",
            RuleKind::Momentum => "momentum",
            RuleKind::Adagrad => "adagrad",
            RuleKind::AdagradDa => "adagrad_da",
            RuleKind::Adadelta => "adadelta",
            RuleKind::Adam => "adam",
            RuleKind::Ftrl => "ftrl",
            RuleKind::ProximalSgd => "proximal_sgd",
            RuleKind::ProximalAdagrad => "proximal_adagrad",
            RuleKind::RmsProp => "rmsprop",
        }
    }

    /// The rule whose `rule` attr value is `name`.
    pub fn from_name(name: &str) -> Option<RuleKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The slot variables an update op takes after the variable, in input order, under TensorFlow's
    /// slot names (`Optimizer.get_slot(var, name)`); RMSProp adds `mg` first when centered.
    pub fn slot_names(self, centered: bool) -> &'static [&'static str] {
        match self {
            RuleKind::Sgd | RuleKind::ProximalSgd => &[],
            RuleKind::Momentum => &["momentum"],
            RuleKind::Adagrad | RuleKind::ProximalAdagrad => &["accumulator"],
            RuleKind::AdagradDa => &["gradient_accumulator", "gradient_squared_accumulator"],
            RuleKind::Adadelta => &["accum", "accum_update"],
            RuleKind::Adam => &["m", "v"],
            RuleKind::Ftrl => &["accum", "linear"],
            RuleKind::RmsProp => {
                if centered {
                    &["mg", "rms", "momentum"]
                } else {
                    &["rms", "momentum"]
                }
            }
        }
    }

    /// Slots per variable (RMSProp: 3 when centered).
    pub fn slots(self, centered: bool) -> usize {
        self.slot_names(centered).len()
    }

    /// Every rule, in declaration order.
    pub const ALL: [RuleKind; 10] = [
        RuleKind::Sgd,
        RuleKind::Momentum,
        RuleKind::Adagrad,
        RuleKind::AdagradDa,
        RuleKind::Adadelta,
        RuleKind::Adam,
        RuleKind::Ftrl,
        RuleKind::ProximalSgd,
        RuleKind::ProximalAdagrad,
        RuleKind::RmsProp,
    ];

    /// Scalar hyper-parameter inputs, in op input order.
    pub fn hyper_names(self) -> &'static [&'static str] {
        match self {
            RuleKind::Sgd | RuleKind::Adagrad => &["lr"],
            RuleKind::Momentum => &["lr", "momentum"],
            RuleKind::AdagradDa => &["lr", "l1", "l2", "global_step"],
            RuleKind::Adadelta => &["lr", "rho", "epsilon"],
            RuleKind::Adam => &[
                "beta1_power",
                "beta2_power",
                "lr",
                "beta1",
                "beta2",
                "epsilon",
            ],
            RuleKind::Ftrl => &["lr", "l1", "l2", "l2_shrinkage", "lr_power"],
            RuleKind::ProximalSgd | RuleKind::ProximalAdagrad => &["lr", "l1", "l2"],
            RuleKind::RmsProp => &["lr", "rho", "momentum", "epsilon"],
        }
    }

    /// Sparse updates sum duplicate indices first (all but plain SGD).
    pub fn dedups(self) -> bool {
        self != RuleKind::Sgd
    }
}

/// Flags that change a rule's formula.
#[derive(Copy, Clone, Debug, Default)]
pub struct RuleOptions {
    pub nesterov: bool,
    pub centered: bool,
    /// Ftrl with l2 shrinkage (TensorFlow's `ApplyFtrlV2`).
    pub shrinkage: bool,
}

/// A rule with its hyper-parameters resolved in the variable's dtype.
#[derive(Copy, Clone, Debug)]
pub struct Rule<T: Real> {
    pub kind: RuleKind,
    pub opts: RuleOptions,
    /// Hyper-parameters in `kind.hyper_names()` order, as `T` (the graph
    /// already cast them, as TensorFlow does).
    pub h: [T; 6],
    /// AdagradDA's `t = global_step + 1`.
    pub t: i64,
}

impl<T: Real> Rule<T> {
    /// Dense update of one contiguous run.
    #[inline(always)]
    pub fn dense(&self, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
        let h = &self.h;
        match self.kind {
            RuleKind::Sgd => {
                let lr = h[0];
                for (v, &g) in var.iter_mut().zip(g) {
                    *v = v.sub(g.mul(lr));
                }
            }
            RuleKind::Momentum => {
                let (lr, mu) = (h[0], h[1]);
                let [acc] = slots else { unreachable!() };
                if self.opts.nesterov {
                    for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
                        *a = a.mul(mu).add(g);
                        *v = v.sub(g.mul(lr).add(a.mul(mu).mul(lr)));
                    }
                } else {
                    for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
                        *a = a.mul(mu).add(g);
                        *v = v.sub(a.mul(lr));
                    }
                }
            }
            RuleKind::Adagrad => {
                let lr = h[0];
                let [acc] = slots else { unreachable!() };
                for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
                    *a = a.add(g.mul(g));
                    *v = v.sub(g.mul(lr).mul(a.rsqrt()));
                }
            }
            RuleKind::AdagradDa => {
                let (lr, l1, l2) = (h[0], h[1], h[2]);
                let tf = T::from_f64(self.t as f32 as f64);
                let tlr = tf.mul(lr);
                let tl1 = tf.mul(l1);
                let neg_lr = lr.mul(T::from_f64(-1.0));
                let [ga, gg] = slots else { unreachable!() };
                let zero = T::zero();
                for (((v, a), s), &g) in var.iter_mut().zip(ga.iter_mut()).zip(gg.iter_mut()).zip(g)
                {
                    *a = a.add(g);
                    *s = s.add(g.mul(g));
                    let den = l2.mul(tlr).add(s.sqrt());
                    *v = if l1 > zero {
                        neg_lr
                            .mul(a.sign())
                            .mul(a.abs().sub(tl1).max(zero))
                            .div(den)
                    } else {
                        lr.mul(*a).mul(T::from_f64(-1.0)).div(den)
                    };
                }
            }
            RuleKind::Adadelta => {
                let (lr, rho, eps) = (h[0], h[1], h[2]);
                let k = T::one().sub(rho);
                let [acc, au] = slots else { unreachable!() };
                for (((v, a), u_acc), &g) in
                    var.iter_mut().zip(acc.iter_mut()).zip(au.iter_mut()).zip(g)
                {
                    *a = a.mul(rho).add(g.mul(g).mul(k));
                    let u = u_acc.add(eps).sqrt().mul(a.add(eps).rsqrt()).mul(g);
                    *v = v.sub(u.mul(lr));
                    *u_acc = u_acc.mul(rho).add(u.mul(u).mul(k));
                }
            }
            RuleKind::Adam => {
                let (alpha, b1c, b2c, eps) = self.adam_scalars();
                let [m, s] = slots else { unreachable!() };
                for (((v, m), s), &g) in var.iter_mut().zip(m.iter_mut()).zip(s.iter_mut()).zip(g) {
                    *m = m.add(g.sub(*m).mul(b1c));
                    *s = s.add(g.mul(g).sub(*s).mul(b2c));
                    *v = v.sub(m.mul(alpha).div(s.sqrt().add(eps)));
                }
            }
            RuleKind::Ftrl => {
                let f = self.ftrl_scalars();
                let [acc, lin] = slots else { unreachable!() };
                for (((v, a), l), &g) in var
                    .iter_mut()
                    .zip(acc.iter_mut())
                    .zip(lin.iter_mut())
                    .zip(g)
                {
                    let na = a.add(g.mul(g));
                    let gs = if self.opts.shrinkage {
                        g.add(f.two_l2s.mul(*v))
                    } else {
                        g
                    };
                    let pna = f.p(na);
                    *l = l.add(gs.sub(pna.sub(f.p(*a)).div(f.lr).mul(*v)));
                    let x = f.l1.mul(l.sign()).sub(*l);
                    let y = pna.div(f.lr).add(f.two_l2);
                    *v = if l.abs() > f.l1 { x.div(y) } else { T::zero() };
                    *a = na;
                }
            }
            RuleKind::ProximalSgd => {
                let (lr, l1, l2) = (h[0], h[1], h[2]);
                let lr_l1 = lr.mul(l1);
                let den = T::one().add(l2.mul(lr));
                let zero = T::zero();
                for (v, &g) in var.iter_mut().zip(g) {
                    let prox = v.sub(g.mul(lr));
                    *v = if l1 > zero {
                        prox.sign().mul(prox.abs().sub(lr_l1).max(zero)).div(den)
                    } else {
                        prox.div(den)
                    };
                }
            }
            RuleKind::ProximalAdagrad => {
                let (lr, l1, l2) = (h[0], h[1], h[2]);
                let zero = T::zero();
                let [acc] = slots else { unreachable!() };
                for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
                    *a = a.add(g.mul(g));
                    let e = lr.mul(a.rsqrt());
                    let prox = v.sub(g.mul(e));
                    let den = T::one().add(l2.mul(e));
                    *v = if l1 > zero {
                        prox.sign()
                            .mul(prox.abs().sub(e.mul(l1)).max(zero))
                            .div(den)
                    } else {
                        prox.div(den)
                    };
                }
            }
            RuleKind::RmsProp => {
                let (lr, rho, mu, eps) = (h[0], h[1], h[2], h[3]);
                let k = T::one().sub(rho);
                if self.opts.centered {
                    let [mg, ms, mom] = slots else { unreachable!() };
                    for ((((v, mg), ms), mom), &g) in var
                        .iter_mut()
                        .zip(mg.iter_mut())
                        .zip(ms.iter_mut())
                        .zip(mom.iter_mut())
                        .zip(g)
                    {
                        *ms = ms.add(g.mul(g).sub(*ms).mul(k));
                        *mg = mg.add(g.sub(*mg).mul(k));
                        let den = ms.sub(mg.mul(*mg)).add(eps);
                        *mom = mom.mul(mu).add(g.mul(lr).div(den.sqrt()));
                        *v = v.sub(*mom);
                    }
                } else {
                    let [ms, mom] = slots else { unreachable!() };
                    for (((v, ms), mom), &g) in
                        var.iter_mut().zip(ms.iter_mut()).zip(mom.iter_mut()).zip(g)
                    {
                        *ms = ms.add(g.mul(g).sub(*ms).mul(k));
                        let den = ms.add(eps);
                        *mom = mom.mul(mu).add(g.mul(lr).div(den.sqrt()));
                        *v = v.sub(*mom);
                    }
                }
            }
        }
    }

    /// `(alpha, 1 - beta1, 1 - beta2, epsilon)` of Adam, formed once per step.
    #[inline(always)]
    pub fn adam_scalars(&self) -> (T, T, T, T) {
        let h = &self.h;
        let (p1, p2, lr, b1, b2, eps) = (h[0], h[1], h[2], h[3], h[4], h[5]);
        let one = T::one();
        let alpha = lr.mul(one.sub(p2).sqrt()).div(one.sub(p1));
        (alpha, one.sub(b1), one.sub(b2), eps)
    }

    #[inline(always)]
    fn ftrl_scalars(&self) -> Ftrl<T> {
        let h = &self.h;
        let two = T::from_f64(2.0);
        Ftrl {
            lr: h[0],
            l1: h[1],
            two_l2: two.mul(h[2]),
            two_l2s: two.mul(h[3]),
            lr_power: h[4],
            half_power: h[4] == T::from_f64(-0.5),
        }
    }

    /// Sparse update of one row (rows longer than one element, and rules
    /// without a scalar path). `g` is the summed gradient of the row.
    #[inline(always)]
    pub fn row(&self, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
        let h = &self.h;
        match self.kind {
            RuleKind::Momentum => {
                let (lr, mu) = (h[0], h[1]);
                let lr_mu = lr.mul(mu);
                let [acc] = slots else { unreachable!() };
                for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
                    *a = a.mul(mu).add(g);
                    *v = if self.opts.nesterov {
                        v.sub(lr.mul(g).add(lr_mu.mul(*a)))
                    } else {
                        v.sub(lr.mul(*a))
                    };
                }
            }
            RuleKind::Adagrad => {
                let lr = h[0];
                let [acc] = slots else { unreachable!() };
                for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
                    *a = a.add(g.mul(g));
                    *v = v.sub(lr.mul(g).mul(a.rsqrt()));
                }
            }
            RuleKind::AdagradDa => {
                let (lr, l1, l2) = (h[0], h[1], h[2]);
                let tt = T::from_f64(self.t as f64);
                let s = tt.mul(lr);
                let zero = T::zero();
                let minus_one = T::from_f64(-1.0);
                let [ga, gg] = slots else { unreachable!() };
                for (((v, a), sq), &g) in
                    var.iter_mut().zip(ga.iter_mut()).zip(gg.iter_mut()).zip(g)
                {
                    *a = a.add(g);
                    *sq = sq.add(g.mul(g));
                    let den = l2.add(sq.sqrt().div(s));
                    *v = if l1 > zero {
                        minus_one
                            .mul(a.sign())
                            .mul(a.abs().div(tt).sub(l1).max(zero))
                            .div(den)
                    } else {
                        minus_one.mul(a.div(tt)).div(den)
                    };
                }
            }
            RuleKind::Ftrl => {
                let f = self.ftrl_scalars();
                let [acc, lin] = slots else { unreachable!() };
                for (((v, a), l), &g) in var
                    .iter_mut()
                    .zip(acc.iter_mut())
                    .zip(lin.iter_mut())
                    .zip(g)
                {
                    let na = a.add(g.mul(g));
                    let gs = if self.opts.shrinkage {
                        g.add(f.two_l2s.mul(*v))
                    } else {
                        g
                    };
                    let pna = f.p(na);
                    *l = l.add(gs.sub(pna.sub(f.p(*a)).div(f.lr).mul(*v)));
                    let y = pna.div(f.lr).add(f.two_l2);
                    *v = l.max(f.l1.neg()).min(f.l1).sub(*l).div(y);
                    *a = na;
                }
            }
            RuleKind::RmsProp => {
                let (lr, rho, mu, eps) = (h[0], h[1], h[2], h[3]);
                let k = T::one().sub(rho);
                if self.opts.centered {
                    let [mg, ms, mom] = slots else { unreachable!() };
                    for ((((v, mg), ms), mom), &g) in var
                        .iter_mut()
                        .zip(mg.iter_mut())
                        .zip(ms.iter_mut())
                        .zip(mom.iter_mut())
                        .zip(g)
                    {
                        *ms = ms.mul(rho).add(g.mul(g).mul(k));
                        *mg = mg.mul(rho).add(g.mul(k));
                        let den = ms.add(eps).sub(mg.mul(*mg));
                        *mom = mom.mul(mu).add(den.rsqrt().mul(lr).mul(g));
                        *v = v.sub(*mom);
                    }
                } else {
                    let [ms, mom] = slots else { unreachable!() };
                    for (((v, ms), mom), &g) in
                        var.iter_mut().zip(ms.iter_mut()).zip(mom.iter_mut()).zip(g)
                    {
                        *ms = ms.mul(rho).add(g.mul(g).mul(k));
                        let den = ms.add(eps);
                        *mom = mom.mul(mu).add(den.rsqrt().mul(lr).mul(g));
                        *v = v.sub(*mom);
                    }
                }
            }
            // Adadelta, ProximalSgd and ProximalAdagrad rows use the dense
            // formula; Sgd and Adam sparse updates do not come through here.
            _ => self.dense(var, slots, g),
        }
    }

    /// True if rows of one element take TensorFlow's separate scalar path.
    pub fn has_scalar_path(&self) -> bool {
        matches!(
            self.kind,
            RuleKind::Adagrad
                | RuleKind::AdagradDa
                | RuleKind::Ftrl
                | RuleKind::ProximalSgd
                | RuleKind::ProximalAdagrad
        )
    }

    /// Sparse update of a one-element row (the scalar path).
    #[inline(always)]
    pub fn scalar(&self, v: &mut T, slots: &mut [&mut T], g: T) {
        let h = &self.h;
        match self.kind {
            RuleKind::Adagrad => {
                let lr = h[0];
                let [a] = slots else { unreachable!() };
                **a = a.add(g.mul(g));
                *v = v.sub(lr.mul(g).div(a.sqrt()));
            }
            RuleKind::AdagradDa => {
                // TensorFlow computes this path in double, even for float32.
                let (lr, l1, l2) = (h[0].to_f64(), h[1].to_f64(), h[2].to_f64());
                let t = self.t as f64;
                let [ga, gg] = slots else { unreachable!() };
                let gd = g.to_f64();
                **ga = T::from_f64(ga.to_f64() + gd);
                **gg = T::from_f64(gg.to_f64() + gd * gd);
                let q = gg.sqrt().to_f64();
                let a = (t * l2) * lr;
                let nga = ga.neg();
                *v = if h[1] > T::zero() {
                    let m = (ga.abs().to_f64() - t * l1).max(0.0);
                    T::from_f64(((nga.sign().to_f64() * lr) * m) / (a + q))
                } else {
                    T::from_f64((nga.to_f64() * lr) / (a + q))
                };
            }
            RuleKind::Ftrl => {
                let f = self.ftrl_scalars();
                let [a, l] = slots else { unreachable!() };
                let p = f.lr_power.neg();
                let ge = if self.opts.shrinkage {
                    g.add(f.two_l2s.mul(*v))
                } else {
                    g
                };
                let na = a.add(g.mul(g));
                let sig = na.powf(p).sub(a.powf(p)).div(f.lr);
                **l = l.add(ge).sub(sig.mul(*v));
                let pna = if f.half_power { na.sqrt() } else { na.powf(p) };
                let quad = pna.div(f.lr).add(f.two_l2);
                *v = l.max(f.l1.neg()).min(f.l1).sub(**l).div(quad);
                **a = na;
            }
            RuleKind::ProximalSgd => {
                let (lr, l1, l2) = (h[0], h[1], h[2]);
                let prox = v.sub(lr.mul(g));
                let d = 1.0 + l2.mul(lr).to_f64();
                *v = if l1 > T::zero() {
                    T::from_f64(
                        prox.sign()
                            .mul(prox.abs().sub(lr.mul(l1)).max(T::zero()))
                            .to_f64()
                            / d,
                    )
                } else {
                    T::from_f64(prox.to_f64() / d)
                };
            }
            RuleKind::ProximalAdagrad => {
                let (lr, l1, l2) = (h[0], h[1], h[2]);
                let [a] = slots else { unreachable!() };
                **a = a.add(g.mul(g));
                let e = lr.div(a.sqrt());
                let prox = v.sub(e.mul(g));
                let d = 1.0 + l2.mul(e).to_f64();
                *v = if l1 > T::zero() {
                    T::from_f64(
                        prox.sign()
                            .mul(prox.abs().sub(e.mul(l1)).max(T::zero()))
                            .to_f64()
                            / d,
                    )
                } else {
                    T::from_f64(prox.to_f64() / d)
                };
            }
            _ => {
                let mut one = [*v];
                let mut slot_vals: Vec<T> = slots.iter().map(|s| **s).collect();
                {
                    let mut refs: Vec<&mut [T]> =
                        slot_vals.iter_mut().map(std::slice::from_mut).collect();
                    self.row(&mut one, &mut refs, &[g]);
                }
                *v = one[0];
                for (s, val) in slots.iter_mut().zip(slot_vals) {
                    **s = val;
                }
            }
        }
    }
}

#[derive(Copy, Clone)]
struct Ftrl<T: Real> {
    lr: T,
    l1: T,
    two_l2: T,
    two_l2s: T,
    lr_power: T,
    half_power: bool,
}

impl<T: Real> Ftrl<T> {
    /// `na^(-lr_power)`: sqrt for the default power, libm pow otherwise.
    #[inline(always)]
    fn p(&self, x: T) -> T {
        if self.half_power {
            x.sqrt()
        } else {
            x.powf(self.lr_power.neg())
        }
    }
}
