//! Stochastic dual coordinate ascent for linear models: TensorFlow's
//! `SdcaOptimizer`/`SdcaOptimizerV2` (one pass of proximal SDCA over a
//! mini-batch, returning weight deltas and the per-example dual state),
//! `SdcaShrinkL1` (the L1 proximal step applied to the weights in place) and
//! `SdcaFprint` (128-bit example-id fingerprints).
//!
//! The update rules, the CoCoA+ scaling by `num_loss_partitions` and the
//! example-state layout (`[dual, primal loss, dual loss, example weight]`)
//! are TensorFlow's. Two deliberate differences, neither visible in the
//! converged model: examples are visited in a seeded order (TensorFlow seeds
//! its shuffle from `std::random_device`, so its passes are not repeatable),
//! and one thread runs the pass (TensorFlow's threads race on the shared
//! deltas, Hogwild style).

use super::{boxed, farmhash};
use crate::kernel::{factory, KernelFactory, OpContext};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::random::{permutation, Philox};
use ferroflow_tensor::{bail, ensure, Error, Result, Tensor};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for (op, adaptive_attr) in [
        ("SdcaOptimizer", "adaptative"),
        ("SdcaOptimizerV2", "adaptive"),
    ] {
        reg(
            op,
            factory(move |init| {
                let options = Arc::new(Options::from_attrs(&init.node.attrs, adaptive_attr)?);
                let passes = AtomicU64::new(0);
                boxed(move |ctx| {
                    let pass = passes.fetch_add(1, Ordering::Relaxed);
                    optimize(&options, pass, ctx)
                })
            }),
        );
    }
    reg(
        "SdcaShrinkL1",
        factory(|init| {
            let a = &init.node.attrs;
            let n = a.int_or("num_features", 0)?.max(0) as usize;
            let reg = Regularization::new(a.float("l1")? as f32, a.float("l2")? as f32);
            boxed(move |ctx| {
                for i in 0..n {
                    let var = ctx.input_ref(i)?.clone();
                    var.update(|t| {
                        for w in t.make_mut::<f32>()? {
                            *w = reg.shrink_f32(*w);
                        }
                        Ok(())
                    })?;
                }
                Ok(())
            })
        }),
    );
    reg(
        "SdcaFprint",
        factory(|_| {
            boxed(|ctx| {
                let input = ctx.input(0)?;
                ensure!(
                    input.dims().len() == 1,
                    invalid_argument,
                    "SdcaFprint: input must be a vector, got shape {}",
                    input.shape()
                );
                let strings = input.as_slice::<Vec<u8>>()?;
                let mut out = Vec::with_capacity(strings.len() * 2);
                for s in strings {
                    let (low, high) = farmhash::fingerprint128(s);
                    // 0 and 1 never appear as the first word, so callers can
                    // use them as sentinels (empty keys of a dense hash table).
                    let low = if low >= 2 {
                        low
                    } else {
                        low.wrapping_add(!1u64)
                    };
                    out.extend([low as i64, high as i64]);
                }
                ctx.output(Tensor::from_vec(vec![strings.len(), 2], out)?);
                Ok(())
            })
        }),
    );
}

/// The primal loss SDCA minimises, with its dual update.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Loss {
    Logistic,
    Squared,
    Hinge,
    SmoothHinge,
    Poisson,
}

/// Smoothing width of the smooth hinge loss (fixed in TensorFlow too).
const SMOOTH_HINGE_GAMMA: f64 = 1.0;
/// Newton steps for the losses without a closed-form dual update; Newton
/// converges quadratically, so ten leave nothing to gain.
const NEWTON_STEPS: usize = 10;

impl Loss {
    fn parse(name: &str) -> Result<Loss> {
        Ok(match name {
            "logistic_loss" => Loss::Logistic,
            "squared_loss" => Loss::Squared,
            "hinge_loss" => Loss::Hinge,
            "smooth_hinge_loss" => Loss::SmoothHinge,
            "poisson_loss" => Loss::Poisson,
            other => {
                bail!(invalid_argument, "Unsupported loss type: {other}")
            }
        })
    }

    /// The label as the loss expects it: classification losses take 0/1
    /// labels and work with -1/+1.
    fn convert_label(self, label: f32) -> Result<f32> {
        match self {
            Loss::Logistic | Loss::Hinge | Loss::SmoothHinge => {
                if label == 0.0 {
                    Ok(-1.0)
                } else if label == 1.0 {
                    Ok(1.0)
                } else {
                    Err(Error::invalid_argument(format!(
                        "Only labels of 0.0 or 1.0 are supported right now. Found example with label: {label}"
                    )))
                }
            }
            Loss::Poisson if label < 0.0 => Err(Error::invalid_argument(format!(
                "Only non-negative labels can be used with the Poisson log loss. Found example with label: {label}"
            ))),
            Loss::Poisson | Loss::Squared => Ok(label),
        }
    }

    /// The dual variable that maximises the dual objective for one example,
    /// the others held fixed. `scale` is `num_loss_partitions * example
    /// weight * normalized squared norm`.
    fn updated_dual(
        self,
        partitions: f64,
        label: f64,
        weight: f64,
        dual: f64,
        wx: f64,
        norm: f64,
    ) -> f64 {
        let scale = partitions * norm * weight;
        match self {
            Loss::Squared => dual + (label - dual - wx) / (1.0 + scale),
            Loss::Hinge | Loss::SmoothHinge => {
                let gamma = if self == Loss::Hinge {
                    0.0
                } else {
                    SMOOTH_HINGE_GAMMA
                };
                let candidate = dual + (label - wx - gamma * dual) / (scale + gamma);
                if label * candidate < 0.0 {
                    0.0
                } else if label * candidate > 1.0 {
                    label
                } else {
                    candidate
                }
            }
            Loss::Logistic => {
                // Newton on x with dual = (1 + tanh x) / (2 label).
                let mut x = 0.0f64;
                for _ in 0..NEWTON_STEPS {
                    let t = x.tanh();
                    let num = -2.0 * label * x - wx - scale * (0.5 * (1.0 + t) / label - dual);
                    let den = -2.0 * label - scale * (1.0 - t * t) * 0.5 / label;
                    x -= num / den;
                }
                0.5 * (1.0 + x.tanh()) / label
            }
            Loss::Poisson => {
                // Newton on x with dual = label - exp(x), started where exp(x) = label - dual.
                let y_minus_a = label - dual;
                let mut x = if y_minus_a > 0.0 { y_minus_a.ln() } else { 0.0 };
                for _ in 0..NEWTON_STEPS {
                    let e = x.exp();
                    let num = x - wx - scale * (label - dual - e);
                    let den = 1.0 + scale * e;
                    x -= num / den;
                }
                label - x.exp()
            }
        }
    }

    fn primal_loss(self, wx: f64, label: f64, weight: f64) -> f64 {
        let ywx = label * wx;
        match self {
            Loss::Squared => (wx - label) * (wx - label) * weight * 0.5,
            Loss::Hinge => (1.0 - ywx).max(0.0) * weight,
            Loss::SmoothHinge => {
                let g = SMOOTH_HINGE_GAMMA;
                if ywx >= 1.0 {
                    0.0
                } else if ywx <= 1.0 - g {
                    (1.0 - ywx - g / 2.0) * weight
                } else {
                    (1.0 - ywx) * (1.0 - ywx) * weight * 0.5 / g
                }
            }
            Loss::Logistic => {
                if ywx > 0.0 {
                    (-ywx).exp().ln_1p() * weight
                } else {
                    (ywx.exp().ln_1p() - ywx) * weight
                }
            }
            Loss::Poisson => (wx.exp() - wx * label) * weight,
        }
    }

    fn dual_loss(self, dual: f64, label: f64, weight: f64) -> f64 {
        match self {
            Loss::Squared => dual * (0.5 * dual - label) * weight,
            Loss::Hinge | Loss::SmoothHinge => {
                let ya = dual * label;
                if !(0.0..=1.0).contains(&ya) {
                    return f64::MAX;
                }
                let smooth = if self == Loss::SmoothHinge {
                    0.5 * SMOOTH_HINGE_GAMMA * dual * dual
                } else {
                    0.0
                };
                (-ya + smooth) * weight
            }
            Loss::Logistic => {
                let ay = dual * label;
                let xlogx = |v: f64| if v > 0.0 { v * v.ln() } else { 0.0 };
                (xlogx(ay) + xlogx(1.0 - ay)) * weight
            }
            Loss::Poisson => {
                let y_minus_a = label - dual;
                if y_minus_a == 0.0 {
                    0.0
                } else if y_minus_a < 0.0 {
                    f64::MAX
                } else {
                    y_minus_a * (y_minus_a.ln() - 1.0) * weight
                }
            }
        }
    }

    fn primal_derivative(self, wx: f64, label: f64, weight: f64) -> f64 {
        let ywx = label * wx;
        match self {
            Loss::Squared => (wx - label) * weight,
            Loss::Hinge => {
                if ywx < 1.0 {
                    -label * weight
                } else {
                    0.0
                }
            }
            // TensorFlow leaves the weight out of the smooth hinge's derivative.
            Loss::SmoothHinge => {
                if ywx >= 1.0 {
                    0.0
                } else if ywx <= 1.0 - SMOOTH_HINGE_GAMMA {
                    -label
                } else {
                    (wx - label) / SMOOTH_HINGE_GAMMA
                }
            }
            Loss::Logistic => {
                let inverse_exp = if ywx > 0.0 {
                    let e = (-ywx).exp();
                    e / (1.0 + e)
                } else {
                    1.0 / (1.0 + ywx.exp())
                };
                -inverse_exp * label * weight
            }
            Loss::Poisson => (wx.exp() - label) * weight,
        }
    }

    /// The Lipschitz constant of the loss's derivative (0: not smooth), used
    /// by adaptive sampling.
    fn smoothness(self) -> f64 {
        match self {
            Loss::Logistic => 4.0,
            Loss::Squared | Loss::Poisson => 1.0,
            Loss::Hinge => 0.0,
            Loss::SmoothHinge => SMOOTH_HINGE_GAMMA,
        }
    }
}

/// L1 and L2 strengths; the L1 term enters as a proximal shrink by l1/l2.
#[derive(Copy, Clone, Debug)]
struct Regularization {
    l2: f32,
    shrinkage: f64,
}

impl Regularization {
    fn new(l1: f32, l2: f32) -> Regularization {
        Regularization {
            l2,
            shrinkage: f64::from(l1) / f64::from(l2),
        }
    }

    fn shrink(&self, w: f64) -> f64 {
        let s = (w.abs() - self.shrinkage).max(0.0);
        if s > 0.0 {
            s.copysign(w)
        } else {
            0.0
        }
    }

    /// The float version TensorFlow applies to dense weights and in
    /// `SdcaShrinkL1`: sign(w) * max(|w| - shrinkage, 0) in float32.
    fn shrink_f32(&self, w: f32) -> f32 {
        let sign = if w > 0.0 {
            1.0
        } else if w < 0.0 {
            -1.0
        } else {
            0.0
        };
        sign * (w.abs() - self.shrinkage as f32).max(0.0)
    }
}

/// A node's attributes.
struct Options {
    loss: Loss,
    adaptive: bool,
    num_sparse: usize,
    num_sparse_with_values: usize,
    num_dense: usize,
    partitions: f64,
    reg: Regularization,
}

impl Options {
    fn from_attrs(a: &ferroflow_graph::Attrs, adaptive_attr: &str) -> Result<Options> {
        let count = |name: &str| -> Result<usize> {
            let v = a.int(name)?;
            usize::try_from(v).map_err(|_| {
                Error::invalid_argument(format!("SdcaOptimizer: {name} must be >= 0, got {v}"))
            })
        };
        let num_sparse = count("num_sparse_features")?;
        let num_dense = count("num_dense_features")?;
        ensure!(
            num_sparse + num_dense != 0,
            invalid_argument,
            "Requires at least one feature to train."
        );
        let partitions = a.int("num_loss_partitions")?;
        if partitions < 1 {
            bail!(
                invalid_argument,
                "SdcaOptimizer: num_loss_partitions must be >= 1, got {partitions}"
            );
        }
        Ok(Options {
            loss: Loss::parse(&a.string("loss_type")?)?,
            adaptive: a.bool_or(adaptive_attr, false)?,
            num_sparse,
            num_sparse_with_values: count("num_sparse_features_with_values")?,
            num_dense,
            partitions: partitions as f64,
            reg: Regularization::new(a.float("l1")? as f32, a.float("l2")? as f32),
        })
    }
}

/// One sparse feature group's weights: the nominal values passed in, the
/// deltas this pass accumulates, and where each feature index lives.
struct SparseWeights {
    position: HashMap<i64, usize>,
    nominal: Vec<f32>,
    delta: Vec<f32>,
}

/// One dense feature group's weights.
struct DenseWeights {
    nominal: Vec<f32>,
    delta: Vec<f32>,
}

/// One sparse feature group of the batch: for example `e`, its features are
/// `feature[range[e]]` (with `value[range[e]]`, or 1.0 when absent).
struct SparseGroup<'a> {
    ranges: Vec<std::ops::Range<usize>>,
    feature: &'a [i64],
    value: Option<&'a [f32]>,
}

impl SparseGroup<'_> {
    fn entries(&self, e: usize) -> impl Iterator<Item = (i64, f64)> + '_ {
        let r = self.ranges[e].clone();
        let vals = self.value.map(|v| &v[r.clone()]);
        self.feature[r]
            .iter()
            .enumerate()
            .map(move |(k, &f)| (f, vals.map_or(1.0, |v| f64::from(v[k]))))
    }
}

/// One dense feature group of the batch: a `[num_examples, width]` matrix.
struct DenseGroup<'a> {
    data: &'a [f32],
    width: usize,
}

impl DenseGroup<'_> {
    fn row(&self, e: usize) -> &[f32] {
        &self.data[e * self.width..(e + 1) * self.width]
    }
}

/// The batch and the model as one pass sees them.
struct Problem<'a> {
    sparse: Vec<SparseGroup<'a>>,
    dense: Vec<DenseGroup<'a>>,
    sparse_weights: Vec<SparseWeights>,
    dense_weights: Vec<DenseWeights>,
    squared_norm: Vec<f64>,
}

impl Problem<'_> {
    /// w·x with the weights as they were passed in and with this pass's
    /// deltas added (scaled by the partitions, as CoCoA+ does), both shrunk.
    fn wx(&self, e: usize, o: &Options) -> (f64, f64) {
        let (mut prev, mut now) = (0.0f64, 0.0f64);
        for (group, w) in self.sparse.iter().zip(&self.sparse_weights) {
            for (f, v) in group.entries(e) {
                let p = w.position[&f];
                let nominal = w.nominal[p];
                let current = f64::from(nominal) + f64::from(w.delta[p]) * o.partitions;
                prev += v * o.reg.shrink(f64::from(nominal));
                now += v * o.reg.shrink(current);
            }
        }
        for (group, w) in self.dense.iter().zip(&self.dense_weights) {
            let (mut p, mut c) = (0.0f32, 0.0f32);
            for (k, &x) in group.row(e).iter().enumerate() {
                let current = w.nominal[k] + w.delta[k] * o.partitions as f32;
                p += x * o.reg.shrink_f32(w.nominal[k]);
                c += x * o.reg.shrink_f32(current);
            }
            prev += f64::from(p);
            now += f64::from(c);
        }
        (prev, now)
    }

    fn add_deltas(&mut self, e: usize, step: f64) {
        for (group, w) in self.sparse.iter().zip(self.sparse_weights.iter_mut()) {
            for (f, v) in group.entries(e) {
                let p = w.position[&f];
                w.delta[p] = (f64::from(w.delta[p]) + v * step) as f32;
            }
        }
        for (group, w) in self.dense.iter().zip(self.dense_weights.iter_mut()) {
            for (k, &x) in group.row(e).iter().enumerate() {
                w.delta[k] = (f64::from(w.delta[k]) + f64::from(x) * step) as f32;
            }
        }
    }
}

fn vector_input<'a, T: ferroflow_tensor::Element>(
    ctx: &'a OpContext<'_>,
    i: usize,
    what: &str,
) -> Result<&'a [T]> {
    ctx.input(i)?
        .as_slice::<T>()
        .map_err(|e| Error::invalid_argument(format!("SdcaOptimizer: {what}: {e}")))
}

/// Splits a group's example-index vector into one range per example. Like
/// TensorFlow, it expects the indices grouped by example in increasing order.
fn example_ranges(example_index: &[i64], n: usize) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::with_capacity(n);
    let mut end = 0;
    for e in 0..n as i64 {
        let start = end;
        while end < example_index.len() && example_index[end] == e {
            end += 1;
        }
        ranges.push(start..end);
    }
    ranges
}

fn optimize(o: &Options, pass: u64, ctx: &mut OpContext<'_>) -> Result<()> {
    let (s, v, d) = (o.num_sparse, o.num_sparse_with_values, o.num_dense);
    let expected = 4 * s + v + 2 * d + 3;
    ensure!(
        ctx.num_inputs() == expected,
        invalid_argument,
        "SdcaOptimizer: expected {expected} inputs, got {}",
        ctx.num_inputs()
    );
    let values_at = 2 * s;
    let dense_at = values_at + v;
    let weights_at = dense_at + d;
    let labels_at = weights_at + 1;
    let sparse_indices_at = labels_at + 1;
    let sparse_weights_at = sparse_indices_at + s;
    let dense_weights_at = sparse_weights_at + s;
    let state_at = dense_weights_at + d;

    let example_weights = vector_input::<f32>(ctx, weights_at, "example_weights")?;
    let n = example_weights.len();
    let labels = vector_input::<f32>(ctx, labels_at, "example_labels")?;
    ensure!(
        labels.len() == n,
        invalid_argument,
        "Expected {n} example labels but got {}",
        labels.len()
    );

    let mut sparse_weights = Vec::with_capacity(s);
    for g in 0..s {
        let indices = vector_input::<i64>(ctx, sparse_indices_at + g, "sparse_indices")?;
        let nominal = vector_input::<f32>(ctx, sparse_weights_at + g, "sparse_weights")?.to_vec();
        ensure!(
            indices.len() == nominal.len(),
            invalid_argument,
            "SdcaOptimizer: sparse_indices[{g}] has {} entries but sparse_weights[{g}] has {}",
            indices.len(),
            nominal.len()
        );
        let position = indices.iter().enumerate().map(|(p, &f)| (f, p)).collect();
        let delta = vec![0.0; nominal.len()];
        sparse_weights.push(SparseWeights {
            position,
            nominal,
            delta,
        });
    }
    let mut dense_weights = Vec::with_capacity(d);
    for g in 0..d {
        let nominal = vector_input::<f32>(ctx, dense_weights_at + g, "dense_weights")?.to_vec();
        let delta = vec![0.0; nominal.len()];
        dense_weights.push(DenseWeights { nominal, delta });
    }

    let mut sparse = Vec::with_capacity(s);
    for (g, weights) in sparse_weights.iter().enumerate() {
        let example_index = vector_input::<i64>(ctx, g, "sparse_example_indices")?;
        let feature = vector_input::<i64>(ctx, s + g, "sparse_feature_indices")?;
        ensure!(
            example_index.len() == feature.len(),
            invalid_argument,
            "Found mismatched example_indices and feature_indices in sparse feature group {g}: {} vs {} entries",
            example_index.len(),
            feature.len()
        );
        let value = if g < v {
            let vals = vector_input::<f32>(ctx, values_at + g, "sparse_feature_values")?;
            ensure!(
                vals.len() == feature.len(),
                invalid_argument,
                "SdcaOptimizer: sparse_feature_values[{g}] has {} entries but sparse_feature_indices[{g}] has {}",
                vals.len(),
                feature.len()
            );
            Some(vals)
        } else {
            None
        };
        let ranges = example_ranges(example_index, n);
        for r in &ranges {
            for &f in &feature[r.clone()] {
                ensure!(
                    weights.position.contains_key(&f),
                    invalid_argument,
                    "Found sparse feature indices out of valid range: {f}"
                );
            }
        }
        sparse.push(SparseGroup {
            ranges,
            feature,
            value,
        });
    }
    let mut dense = Vec::with_capacity(d);
    for (g, weights) in dense_weights.iter().enumerate() {
        let t = ctx.input(dense_at + g)?;
        ensure!(
            t.dims().len() == 2,
            invalid_argument,
            "Dense features at index {g} must be rank 2 but is rank {}",
            t.dims().len()
        );
        let (rows, width) = (t.dims()[0], t.dims()[1]);
        ensure!(
            rows == n,
            invalid_argument,
            "SdcaOptimizer: dense_features[{g}] has {rows} rows for {n} examples"
        );
        if width > weights.nominal.len() {
            bail!(
                invalid_argument,
                "More dense features than we have parameters for: {width}"
            );
        }
        let data = t
            .as_slice::<f32>()
            .map_err(|e| Error::invalid_argument(format!("SdcaOptimizer: dense_features: {e}")))?;
        dense.push(DenseGroup { data, width });
    }

    let mut squared_norm = vec![0.0f64; n];
    let mut seen = HashSet::new();
    for (e, norm) in squared_norm.iter_mut().enumerate() {
        for group in &sparse {
            seen.clear();
            for (f, val) in group.entries(e) {
                ensure!(
                    seen.insert(f),
                    invalid_argument,
                    "Duplicate index in sparse vector."
                );
                *norm += val * val;
            }
        }
        for group in &dense {
            *norm += f64::from(group.row(e).iter().map(|x| x * x).sum::<f32>());
        }
    }

    let state_in = ctx.input(state_at)?;
    ensure!(
        state_in.dims() == [n, 4],
        invalid_argument,
        "Expected shape [{n},4] for example_state_data, got {}",
        state_in.shape()
    );
    let mut state = vector_input::<f32>(ctx, state_at, "example_state_data")?.to_vec();

    let mut problem = Problem {
        sparse,
        dense,
        sparse_weights,
        dense_weights,
        squared_norm,
    };
    let mut converted = Vec::with_capacity(n);
    for &l in labels {
        converted.push(f64::from(o.loss.convert_label(l)?));
    }
    let gen = Philox::new(0x5dca_5dca, pass);
    let order = if o.adaptive {
        adaptive_order(&problem, o, &converted, example_weights, &state, &gen)
    } else {
        permutation(&gen, 0, n)
    };

    let l2 = f64::from(o.reg.l2);
    for e in order {
        let dual = f64::from(state[4 * e]);
        let weight = f64::from(example_weights[e]);
        let label = converted[e];
        let (prev_wx, wx) = problem.wx(e, o);
        let norm = problem.squared_norm[e] / l2;
        let new_dual = o
            .loss
            .updated_dual(o.partitions, label, weight, dual, wx, norm);
        problem.add_deltas(e, (new_dual - dual) * weight / l2);
        state[4 * e] = new_dual as f32;
        state[4 * e + 1] = o.loss.primal_loss(prev_wx, label, weight) as f32;
        state[4 * e + 2] = o.loss.dual_loss(dual, label, weight) as f32;
        state[4 * e + 3] = weight as f32;
    }

    let mut outputs = vec![Tensor::from_vec(vec![n, 4], state)?];
    for (g, w) in problem.sparse_weights.into_iter().enumerate() {
        let shape = ctx.input(sparse_weights_at + g)?.shape().clone();
        outputs.push(Tensor::from_vec(shape, w.delta)?);
    }
    for (g, w) in problem.dense_weights.into_iter().enumerate() {
        let shape = ctx.input(dense_weights_at + g)?.shape().clone();
        outputs.push(Tensor::from_vec(shape, w.delta)?);
    }
    for t in outputs {
        ctx.output(t);
    }
    Ok(())
}

/// Adaptive SDCA's visiting order (Csiba, Qu and Richtárik, 2015): examples
/// drawn with probability proportional to their weighted duality gap, a
/// picked example's chance decaying tenfold per pick; examples never picked
/// follow, most probable first.
fn adaptive_order(
    problem: &Problem<'_>,
    o: &Options,
    labels: &[f64],
    weights: &[f32],
    state: &[f32],
    gen: &Philox,
) -> Vec<usize> {
    let n = labels.len();
    let l2 = f64::from(o.reg.l2);
    let probability: Vec<f64> = (0..n)
        .map(|e| {
            let (_, wx) = problem.wx(e, o);
            let kappa = f64::from(state[4 * e]) + o.loss.primal_derivative(wx, labels[e], 1.0);
            f64::from(weights[e])
                * (problem.squared_norm[e] + l2 * o.loss.smoothness()).sqrt()
                * kappa.abs()
        })
        .collect();
    let total: f64 = probability.iter().sum();
    let mut cumulative = Vec::with_capacity(n);
    let mut acc = 0.0;
    for p in &probability {
        acc += p;
        cumulative.push(acc);
    }
    let mut picks = vec![0u32; n];
    let mut order = Vec::with_capacity(n);
    let uniform = |i: u64, word: usize| {
        let b = gen.block(1 << 40 | i);
        f64::from(b[word]) / 4_294_967_296.0
    };
    let mut draw = 0u64;
    let mut retries = 0;
    while total > 0.0 && total.is_finite() && order.len() < n && retries < n {
        let u = uniform(draw, 0) * total;
        let keep = uniform(draw, 1);
        draw += 1;
        let picked = cumulative.partition_point(|&c| c <= u).min(n - 1);
        if keep > 0.1f64.powi(picks[picked] as i32) {
            retries += 1;
            continue;
        }
        picks[picked] += 1;
        order.push(picked);
    }
    let mut unseen: Vec<usize> = (0..n).filter(|&e| picks[e] == 0).collect();
    unseen.sort_by(|&a, &b| probability[b].total_cmp(&probability[a]));
    order.extend(unseen.into_iter().take(n - order.len()));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squared_loss_dual_update_is_the_closed_form() {
        // One example, x = [1], l2 = 1: the update lands on the optimum of
        // 0.5 (w - y)^2 + 0.5 w^2 in one step, w = y / 2.
        let o = Loss::Squared;
        let dual = o.updated_dual(1.0, 3.0, 1.0, 0.0, 0.0, 1.0);
        assert!((dual - 1.5).abs() < 1e-12);
    }

    #[test]
    fn logistic_dual_update_solves_its_optimality_condition() {
        let o = Loss::Logistic;
        let (label, wx, norm) = (1.0, 0.3, 2.0);
        let a = o.updated_dual(1.0, label, 1.0, 0.1, wx, norm);
        // At the optimum, -log-odds of a*y equals wx + norm * (a - a0) * y.
        let lhs = (a * label / (1.0 - a * label)).ln();
        let rhs = -(wx + norm * (a - 0.1)) * label;
        assert!((lhs - rhs).abs() < 1e-9, "{lhs} vs {rhs}");
    }

    #[test]
    fn hinge_dual_is_clipped_to_the_box() {
        let o = Loss::Hinge;
        assert_eq!(o.updated_dual(1.0, 1.0, 1.0, 0.0, -50.0, 0.01), 1.0);
        assert_eq!(o.updated_dual(1.0, 1.0, 1.0, 0.0, 50.0, 0.01), 0.0);
        assert_eq!(o.updated_dual(1.0, -1.0, 1.0, 0.0, 50.0, 0.01), -1.0);
    }

    #[test]
    fn shrink_is_soft_thresholding() {
        let r = Regularization::new(0.5, 1.0);
        assert_eq!(r.shrink(2.0), 1.5);
        assert_eq!(r.shrink(-2.0), -1.5);
        assert_eq!(r.shrink(0.25), 0.0);
        assert_eq!(r.shrink_f32(-0.75), -0.25);
    }

    #[test]
    fn labels_are_checked_per_loss() {
        assert_eq!(Loss::Logistic.convert_label(0.0).unwrap(), -1.0);
        assert!(Loss::Hinge.convert_label(0.5).is_err());
        assert!(Loss::Poisson.convert_label(-1.0).is_err());
        assert_eq!(Loss::Squared.convert_label(-2.5).unwrap(), -2.5);
    }

    #[test]
    fn example_ranges_group_sorted_indices() {
        let r = example_ranges(&[0, 0, 2, 2, 2], 4);
        assert_eq!(r, vec![0..2, 2..2, 2..5, 5..5]);
    }
}
