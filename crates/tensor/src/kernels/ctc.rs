//! Connectionist temporal classification: TensorFlow's `CTCLoss` (the
//! negative log probability of each batch element's label sequence and its
//! gradient with respect to the logits, by the forward-backward algorithm in
//! log space) and `CTCGreedyDecoder` (best class per step, blanks and
//! optionally repeats removed).
//!
//! Logits are time-major `[max_time, batch, num_classes]`; `CTCLoss`'s blank
//! is the last class. The loss is computed in f64 and returned in the
//! logits' type.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The boolean attributes of `CTCLoss`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtcLossOptions {
    /// Merge repeated labels before computing the loss.
    pub preprocess_collapse_repeated: bool,
    /// Repeated non-blank outputs merge into one label (standard CTC);
    /// when false, every output is a label of its own.
    pub ctc_merge_repeated: bool,
    /// Batch elements whose labels are longer than their input get loss 0
    /// and gradient 0 instead of an error.
    pub ignore_longer_outputs_than_inputs: bool,
}

impl Default for CtcLossOptions {
    fn default() -> Self {
        CtcLossOptions {
            preprocess_collapse_repeated: false,
            ctc_merge_repeated: true,
            ignore_longer_outputs_than_inputs: false,
        }
    }
}

/// `log(exp(a) + exp(b))` with `-inf` as log zero.
#[inline]
fn log_sum_exp(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    if a > b {
        a + (b - a).exp().ln_1p()
    } else {
        b + (a - b).exp().ln_1p()
    }
}

fn logits_f64(op: &str, inputs: &Tensor) -> Result<Vec<f64>> {
    match inputs.dtype() {
        DType::Float32 => Ok(inputs
            .as_slice::<f32>()?
            .iter()
            .map(|&v| v as f64)
            .collect()),
        DType::Float64 => Ok(inputs.as_slice::<f64>()?.to_vec()),
        d => Err(Error::invalid_argument(format!(
            "{op} is not supported for {d} tensors (float32 or float64)"
        ))),
    }
}

fn from_f64(dims: Vec<usize>, v: Vec<f64>, dtype: DType) -> Result<Tensor> {
    match dtype {
        DType::Float32 => {
            Tensor::from_vec(dims, v.into_iter().map(|x| x as f32).collect::<Vec<_>>())
        }
        _ => Tensor::from_vec(dims, v),
    }
}

/// Checks `inputs` `[max_time, batch, classes]` and `sequence_length`
/// `[batch]`; returns the three sizes and the lengths.
fn check_inputs(
    op: &str,
    inputs: &Tensor,
    sequence_length: &Tensor,
) -> Result<(usize, usize, usize, Vec<usize>)> {
    if inputs.rank() != 3 {
        return Err(Error::invalid_argument(format!(
            "{op}: inputs is not a 3-Tensor, got shape {}",
            inputs.shape()
        )));
    }
    if sequence_length.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "{op}: sequence_length is not a vector, got shape {}",
            sequence_length.shape()
        )));
    }
    let d = inputs.dims();
    let (t, b, c) = (d[0], d[1], d[2]);
    let lens = sequence_length.to_i64_vec()?;
    if lens.len() != b {
        return Err(Error::invalid_argument(format!(
            "{op}: len(sequence_length) != batch_size.  len(sequence_length):  {} batch_size: {b}",
            lens.len()
        )));
    }
    let mut out = Vec::with_capacity(b);
    for (i, &l) in lens.iter().enumerate() {
        if l < 0 || l as usize > t {
            return Err(Error::invalid_argument(format!(
                "{op}: sequence_length({i}) <= {t}, got {l}"
            )));
        }
        out.push(l as usize);
    }
    Ok((t, b, c, out))
}

/// The labels of each batch element from a sparse `[n, 2]` index matrix
/// (rows in batch order) and its `[n]` values.
fn sparse_labels(
    op: &str,
    indices: &Tensor,
    values: &Tensor,
    batch: usize,
) -> Result<Vec<Vec<i64>>> {
    if indices.rank() != 2 || indices.dims()[1] != 2 {
        return Err(Error::invalid_argument(format!(
            "{op}: labels_indices is not a matrix of 2 columns, got shape {}",
            indices.shape()
        )));
    }
    if values.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "{op}: labels_values is not a vector, got shape {}",
            values.shape()
        )));
    }
    let idx = indices.to_i64_vec()?;
    let vals = values.to_i64_vec()?;
    if idx.len() / 2 != vals.len() {
        return Err(Error::invalid_argument(format!(
            "{op}: labels_indices and labels_values must contain the same number of rows, but saw shapes: {} vs. {}",
            indices.shape(),
            values.shape()
        )));
    }
    let mut labels = vec![Vec::new(); batch];
    let mut last: Option<(i64, i64)> = None;
    for (row, &v) in vals.iter().enumerate() {
        let (b, pos) = (idx[2 * row], idx[2 * row + 1]);
        if b < 0 || b as usize >= batch {
            return Err(Error::invalid_argument(format!(
                "{op}: labels batch index must be in [0, {batch}), but labels_indices[{row}] = [{b},{pos}]"
            )));
        }
        if let Some(prev) = last {
            if (b, pos) <= prev {
                return Err(Error::invalid_argument(format!(
                    "{op}: labels_indices[{row}] = [{b},{pos}] is out of order"
                )));
            }
        }
        last = Some((b, pos));
        labels[b as usize].push(v);
    }
    Ok(labels)
}

/// One batch element's forward-backward pass: `(loss, gradient [len, c])`
/// from log-softmax `logp` (`[len, c]`) and the blank-interleaved labels.
fn ctc_one(logp: &[f64], c: usize, len: usize, l_prime: &[usize], merge: bool) -> (f64, Vec<f64>) {
    let blank = c - 1;
    let u_n = l_prime.len();
    let neg = f64::NEG_INFINITY;
    let mut alpha = vec![neg; u_n * len];
    let mut beta = vec![neg; u_n * len];
    if len == 0 {
        let loss = if u_n == 1 { 0.0 } else { f64::INFINITY };
        return (loss, Vec::new());
    }
    let lp = |t: usize, k: usize| logp[t * c + k];
    // alpha[u, t] includes the output at t; beta[u, t] only what follows.
    alpha[0] = lp(0, blank);
    if u_n > 1 {
        alpha[len] = lp(0, l_prime[1]);
    }
    for t in 1..len {
        let start = u_n.saturating_sub(2 * (len - t));
        let end = u_n.min(2 * (t + 1));
        for u in start..end {
            let mut s = neg;
            if merge || l_prime[u] == blank {
                s = alpha[u * len + t - 1];
            }
            if u > 0 {
                s = log_sum_exp(s, alpha[(u - 1) * len + t - 1]);
            }
            if u > 1 {
                let same = merge && l_prime[u] == l_prime[u - 2];
                if l_prime[u] != blank && !same {
                    s = log_sum_exp(s, alpha[(u - 2) * len + t - 1]);
                }
            }
            alpha[u * len + t] = lp(t, l_prime[u]) + s;
        }
    }
    beta[(u_n - 1) * len + len - 1] = 0.0;
    if u_n > 1 {
        beta[(u_n - 2) * len + len - 1] = 0.0;
    }
    for t in (0..len.saturating_sub(1)).rev() {
        let start = u_n.saturating_sub(2 * (len - t));
        let end = u_n.min(2 * (t + 1));
        for u in start..end {
            let mut s = neg;
            if merge || l_prime[u] == blank {
                s = log_sum_exp(s, beta[u * len + t + 1] + lp(t + 1, l_prime[u]));
            }
            if u + 1 < u_n {
                s = log_sum_exp(s, beta[(u + 1) * len + t + 1] + lp(t + 1, l_prime[u + 1]));
            }
            if u + 2 < u_n {
                let same = merge && l_prime[u] == l_prime[u + 2];
                if l_prime[u] != blank && !same {
                    s = log_sum_exp(s, beta[(u + 2) * len + t + 1] + lp(t + 1, l_prime[u + 2]));
                }
            }
            beta[u * len + t] = s;
        }
    }
    let mut log_p = neg;
    for u in 0..u_n {
        log_p = log_sum_exp(log_p, alpha[u * len] + beta[u * len]);
    }
    let mut grad: Vec<f64> = logp.iter().map(|&v| v.exp()).collect();
    if log_p == neg {
        // No valid path: TensorFlow's gradient is the softmax itself.
        return (f64::INFINITY, grad);
    }
    let mut prob_sum = vec![neg; c];
    for t in 0..len {
        prob_sum.fill(neg);
        for (u, &l) in l_prime.iter().enumerate() {
            prob_sum[l] = log_sum_exp(prob_sum[l], alpha[u * len + t] + beta[u * len + t]);
        }
        for (k, g) in grad[t * c..(t + 1) * c].iter_mut().enumerate() {
            *g -= (prob_sum[k] - log_p).exp();
        }
    }
    (-log_p, grad)
}

/// `CTCLoss(inputs, labels_indices, labels_values, sequence_length)`:
/// `(loss [batch], gradient [max_time, batch, num_classes])`.
pub fn ctc_loss(
    inputs: &Tensor,
    labels_indices: &Tensor,
    labels_values: &Tensor,
    sequence_length: &Tensor,
    o: &CtcLossOptions,
) -> Result<(Tensor, Tensor)> {
    let op = "CTCLoss";
    let (t_max, batch, c, lens) = check_inputs(op, inputs, sequence_length)?;
    if c == 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: num_classes cannot be 0."
        )));
    }
    let labels = sparse_labels(op, labels_indices, labels_values, batch)?;
    let x = logits_f64(op, inputs)?;
    let mut loss = vec![0.0; batch];
    let mut grad = vec![0.0; t_max * batch * c];
    for b in 0..batch {
        let mut l = labels[b].clone();
        if o.preprocess_collapse_repeated {
            l.dedup();
        }
        if let Some(&bad) = l.iter().find(|&&v| v < 0) {
            return Err(Error::invalid_argument(format!(
                "{op}: All labels must be nonnegative integers, batch: {b} labels: {bad}"
            )));
        }
        if l.iter().any(|&v| v as usize >= c) {
            return Err(Error::invalid_argument(format!(
                "{op}: No label may be greater than num_classes. num_classes: {c}, batch: {b} labels: {}",
                l.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
            )));
        }
        let len = lens[b];
        if l.len() > len {
            if o.ignore_longer_outputs_than_inputs {
                continue;
            }
            return Err(Error::invalid_argument(format!(
                "{op}: Not enough time for target transition sequence (required: {}, available: {len}){b}You can turn this error into a warning by using the flag ignore_longer_outputs_than_inputs",
                l.len()
            )));
        }
        // Log-softmax of this element's steps.
        let mut logp = vec![0.0; len * c];
        for t in 0..len {
            let row = &x[(t * batch + b) * c..][..c];
            let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let lse = m + row.iter().map(|&v| (v - m).exp()).sum::<f64>().ln();
            for (d, &v) in logp[t * c..][..c].iter_mut().zip(row) {
                *d = v - lse;
            }
        }
        let mut l_prime = Vec::with_capacity(2 * l.len() + 1);
        l_prime.push(c - 1);
        for &v in &l {
            l_prime.push(v as usize);
            l_prime.push(c - 1);
        }
        let (lb, gb) = ctc_one(&logp, c, len, &l_prime, o.ctc_merge_repeated);
        loss[b] = lb;
        for t in 0..len {
            grad[(t * batch + b) * c..][..c].copy_from_slice(&gb[t * c..][..c]);
        }
    }
    Ok((
        from_f64(vec![batch], loss, inputs.dtype())?,
        from_f64(vec![t_max, batch, c], grad, inputs.dtype())?,
    ))
}

/// The result of a CTC decoder for one path: a sparse `[batch, max_len]`
/// int64 matrix of labels.
#[derive(Clone, Debug)]
pub struct Decoded {
    /// `[n, 2]` int64 (batch, position) indices.
    pub indices: Tensor,
    /// `[n]` int64 labels.
    pub values: Tensor,
    /// `[2]` int64: `[batch, longest decoded length]`.
    pub shape: Tensor,
}

fn decoded(seqs: &[Vec<i64>]) -> Result<Decoded> {
    let mut idx = Vec::new();
    let mut vals = Vec::new();
    let mut longest = 0;
    for (b, s) in seqs.iter().enumerate() {
        longest = longest.max(s.len());
        for (i, &v) in s.iter().enumerate() {
            idx.push(b as i64);
            idx.push(i as i64);
            vals.push(v);
        }
    }
    let n = vals.len();
    Ok(Decoded {
        indices: Tensor::from_vec(vec![n, 2], idx)?,
        values: Tensor::from_vec(vec![n], vals)?,
        shape: Tensor::from_vec(vec![2], vec![seqs.len() as i64, longest as i64])?,
    })
}

/// `CTCGreedyDecoder(inputs, sequence_length)`: the most likely class at
/// each step, blanks dropped (and repeats merged when `merge_repeated`);
/// the log probability is minus the sum of each step's largest logit.
/// `blank_index` -1 means the last class.
pub fn ctc_greedy_decoder(
    inputs: &Tensor,
    sequence_length: &Tensor,
    merge_repeated: bool,
    blank_index: i64,
) -> Result<(Decoded, Tensor)> {
    let op = "CTCGreedyDecoder";
    let (_, batch, c, lens) = check_inputs(op, inputs, sequence_length)?;
    if c == 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: num_classes cannot be 0."
        )));
    }
    let blank = if blank_index < 0 {
        blank_index + c as i64
    } else {
        blank_index
    };
    if blank < 0 || blank >= c as i64 {
        return Err(Error::invalid_argument(format!(
            "{op}: blank_index expected to be between {} and {} but was {blank_index}",
            -(c as i64),
            c - 1
        )));
    }
    let x = logits_f64(op, inputs)?;
    let mut seqs = vec![Vec::new(); batch];
    let mut log_prob = vec![0.0; batch];
    for b in 0..batch {
        let mut prev: Option<usize> = None;
        let mut acc = 0.0f64;
        for t in 0..lens[b] {
            let row = &x[(t * batch + b) * c..][..c];
            let mut best = 0;
            for k in 1..c {
                if row[k] > row[best] {
                    best = k;
                }
            }
            acc -= row[best];
            if best as i64 != blank && !(merge_repeated && prev == Some(best)) {
                seqs[b].push(best as i64);
            }
            prev = Some(best);
        }
        log_prob[b] = acc;
    }
    Ok((
        decoded(&seqs)?,
        from_f64(vec![batch, 1], log_prob, inputs.dtype())?,
    ))
}

/// Log probabilities of a beam entry: ending in a blank, ending in its
/// label, and their sum.
#[derive(Clone, Copy, Debug)]
struct BeamProb {
    blank: f64,
    label: f64,
    total: f64,
}

impl BeamProb {
    const ZERO: BeamProb = BeamProb {
        blank: f64::NEG_INFINITY,
        label: f64::NEG_INFINITY,
        total: f64::NEG_INFINITY,
    };
}

/// One prefix in the beam's tree.
#[derive(Clone, Debug)]
struct BeamEntry {
    parent: Option<usize>,
    label: usize,
    /// First child and count: the children (one per non-blank class) are
    /// made when the entry is first expanded.
    children: Option<usize>,
    oldp: BeamProb,
    newp: BeamProb,
}

/// The leaves of the beam: at most `width` entries, the lowest total
/// dropped first (as TensorFlow's `gtl::TopN`).
struct Leaves {
    width: usize,
    items: Vec<usize>,
}

impl Leaves {
    fn full(&self) -> bool {
        self.items.len() >= self.width
    }

    /// Index (into `items`) of the entry with the lowest total.
    fn bottom(&self, e: &[BeamEntry]) -> usize {
        let mut worst = 0;
        for (i, &it) in self.items.iter().enumerate() {
            if e[it].newp.total < e[self.items[worst]].newp.total {
                worst = i;
            }
        }
        worst
    }

    fn push(&mut self, id: usize, e: &[BeamEntry]) {
        if !self.full() {
            self.items.push(id);
            return;
        }
        let b = self.bottom(e);
        if e[id].newp.total > e[self.items[b]].newp.total {
            self.items[b] = id;
        }
    }

    /// The entries, highest total first (ties in insertion order).
    fn sorted(&self, e: &[BeamEntry]) -> Vec<usize> {
        let mut v = self.items.clone();
        v.sort_by(|&a, &b| e[b].newp.total.total_cmp(&e[a].newp.total));
        v
    }
}

/// Prefix beam search over one batch element's `[len, c]` logits (blank:
/// the last class): the `top` best label sequences and their log
/// probabilities, in TensorFlow's `CTCBeamSearchDecoder` order of updates.
fn beam_search_one(
    x: &[f64],
    c: usize,
    len: usize,
    width: usize,
    top: usize,
    merge_repeated: bool,
) -> Result<Vec<(Vec<i64>, f64)>> {
    let blank = c - 1;
    let mut e = vec![BeamEntry {
        parent: None,
        label: usize::MAX,
        children: None,
        oldp: BeamProb::ZERO,
        newp: BeamProb {
            blank: 0.0,
            label: f64::NEG_INFINITY,
            total: 0.0,
        },
    }];
    let mut leaves = Leaves {
        width,
        items: vec![0],
    };
    for t in 0..len {
        let row = &x[t * c..][..c];
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let norm = m + row.iter().map(|&v| (v - m).exp()).sum::<f64>().ln();
        let branches = leaves.sorted(&e);
        leaves.items.clear();
        for &b in &branches {
            e[b].oldp = e[b].newp;
        }
        for &b in &branches {
            if let Some(p) = e[b].parent {
                if e[p].newp.total != f64::NEG_INFINITY {
                    let prev = if e[b].label == e[p].label {
                        e[p].oldp.blank
                    } else {
                        e[p].oldp.total
                    };
                    e[b].newp.label = log_sum_exp(e[b].newp.label, prev);
                }
                e[b].newp.label += row[e[b].label] - norm;
            }
            e[b].newp.blank = e[b].oldp.total + row[blank] - norm;
            e[b].newp.total = log_sum_exp(e[b].newp.blank, e[b].newp.label);
            leaves.push(b, &e);
        }
        let candidate = |p: &BeamProb, leaves: &Leaves, e: &[BeamEntry]| {
            p.total > f64::NEG_INFINITY
                && (!leaves.full() || p.total > e[leaves.items[leaves.bottom(e)]].newp.total)
        };
        for &b in &branches {
            if !candidate(&e[b].oldp, &leaves, &e) {
                continue;
            }
            let first = match e[b].children {
                Some(f) => f,
                None => {
                    let f = e.len();
                    for label in 0..blank {
                        e.push(BeamEntry {
                            parent: Some(b),
                            label,
                            children: None,
                            oldp: BeamProb::ZERO,
                            newp: BeamProb::ZERO,
                        });
                    }
                    e[b].children = Some(f);
                    f
                }
            };
            for ch in first..first + blank {
                if e[ch].newp.total != f64::NEG_INFINITY {
                    continue;
                }
                let prev = if e[ch].label == e[b].label {
                    e[b].oldp.blank
                } else {
                    e[b].oldp.total
                };
                let label = row[e[ch].label] - norm + prev;
                e[ch].newp = BeamProb {
                    blank: f64::NEG_INFINITY,
                    label,
                    total: label,
                };
                if candidate(&e[ch].newp, &leaves, &e) {
                    if leaves.full() {
                        let w = leaves.bottom(&e);
                        let gone = leaves.items.swap_remove(w);
                        e[gone].newp = BeamProb::ZERO;
                    }
                    leaves.push(ch, &e);
                } else {
                    e[ch].oldp = BeamProb::ZERO;
                    e[ch].newp = BeamProb::ZERO;
                }
            }
        }
    }
    let best = leaves.sorted(&e);
    if best.len() < top {
        return Err(Error::invalid_argument(format!(
            "CTCBeamSearchDecoder: Less leaves in the beam search than requested ({} < top_paths {top})",
            best.len()
        )));
    }
    Ok(best[..top]
        .iter()
        .map(|&id| {
            let mut labels = Vec::new();
            let mut prev = usize::MAX;
            let mut cur = id;
            while let Some(p) = e[cur].parent {
                if !merge_repeated || e[cur].label != prev {
                    labels.push(e[cur].label as i64);
                }
                prev = e[cur].label;
                cur = p;
            }
            labels.reverse();
            (labels, e[id].newp.total)
        })
        .collect())
}

/// `CTCBeamSearchDecoder(inputs, sequence_length)`: for each of the
/// `top_paths` best paths a sparse matrix of labels, and the log
/// probabilities `[batch, top_paths]`.
pub fn ctc_beam_search_decoder(
    inputs: &Tensor,
    sequence_length: &Tensor,
    beam_width: i64,
    top_paths: i64,
    merge_repeated: bool,
) -> Result<(Vec<Decoded>, Tensor)> {
    let op = "CTCBeamSearchDecoder";
    let (_, batch, c, lens) = check_inputs(op, inputs, sequence_length)?;
    if beam_width <= 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: beam_width must be > 0, got {beam_width}"
        )));
    }
    if top_paths <= 0 || top_paths > beam_width {
        return Err(Error::invalid_argument(format!(
            "{op}: top_paths must be > 0 and <= beam_width, got top_paths {top_paths} and beam_width {beam_width}"
        )));
    }
    if c == 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: num_classes cannot be 0."
        )));
    }
    let (width, top) = (beam_width as usize, top_paths as usize);
    let x = logits_f64(op, inputs)?;
    let mut seqs = vec![vec![Vec::new(); batch]; top];
    let mut log_prob = vec![0.0; batch * top];
    let mut row = Vec::new();
    for b in 0..batch {
        row.clear();
        for t in 0..lens[b] {
            row.extend_from_slice(&x[(t * batch + b) * c..][..c]);
        }
        let paths = beam_search_one(&row, c, lens[b], width, top, merge_repeated)?;
        for (i, (labels, lp)) in paths.into_iter().enumerate() {
            seqs[i][b] = labels;
            log_prob[b * top + i] = lp;
        }
    }
    let decoded = seqs
        .iter()
        .map(|s| decoded(s))
        .collect::<Result<Vec<_>>>()?;
    Ok((
        decoded,
        from_f64(vec![batch, top], log_prob, inputs.dtype())?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss_of(x: &[f64], t: usize, c: usize, labels: &[i64], merge: bool) -> (f64, Vec<f64>) {
        let inputs = Tensor::from_vec(vec![t, 1, c], x.to_vec()).unwrap();
        let n = labels.len();
        let idx: Vec<i64> = (0..n).flat_map(|i| [0, i as i64]).collect();
        let (l, g) = ctc_loss(
            &inputs,
            &Tensor::from_vec(vec![n, 2], idx).unwrap(),
            &Tensor::from_vec(
                vec![n],
                labels.iter().map(|&v| v as i32).collect::<Vec<_>>(),
            )
            .unwrap(),
            &Tensor::from_vec(vec![1], vec![t as i32]).unwrap(),
            &CtcLossOptions {
                ctc_merge_repeated: merge,
                ..Default::default()
            },
        )
        .unwrap();
        (
            l.as_slice::<f64>().unwrap()[0],
            g.as_slice::<f64>().unwrap().to_vec(),
        )
    }

    #[test]
    fn ctc_loss_sums_the_alignments_and_its_gradient_matches_finite_differences() {
        // Two steps, classes {a, blank}, label "a": alignments a-, -a, aa.
        let x = [0.3, -0.2, 0.5, 0.1];
        let (l, _) = loss_of(&x, 2, 2, &[0], true);
        let p = |t: usize, k: usize| {
            let r = &x[t * 2..t * 2 + 2];
            r[k].exp() / (r[0].exp() + r[1].exp())
        };
        let want = -(p(0, 0) * p(1, 1) + p(0, 1) * p(1, 0) + p(0, 0) * p(1, 0)).ln();
        assert!((l - want).abs() < 1e-12);
        let x: Vec<f64> = (0..20)
            .map(|i| ((i * 37 % 11) as f64) / 7.0 - 0.6)
            .collect();
        let (l0, g) = loss_of(&x, 5, 4, &[1, 1, 2], true);
        for i in 0..x.len() {
            let mut xp = x.clone();
            xp[i] += 1e-6;
            let (l1, _) = loss_of(&xp, 5, 4, &[1, 1, 2], true);
            assert!(((l1 - l0) / 1e-6 - g[i]).abs() < 1e-4, "{i}");
        }
    }

    #[test]
    fn greedy_decoder_merges_repeats_and_drops_blanks() {
        // Steps pick 0, 0, blank(2), 0, 1.
        let x = vec![
            1.0f32, 0., 0., 1., 0., 0., 0., 0., 1., 1., 0., 0., 0., 2., 0.,
        ];
        let inputs = Tensor::from_vec(vec![5, 1, 3], x).unwrap();
        let lens = Tensor::from_vec(vec![1], vec![5i32]).unwrap();
        let (d, lp) = ctc_greedy_decoder(&inputs, &lens, true, -1).unwrap();
        assert_eq!(d.values.as_slice::<i64>().unwrap(), &[0, 0, 1]);
        assert_eq!(d.shape.as_slice::<i64>().unwrap(), &[1, 3]);
        assert_eq!(lp.as_slice::<f32>().unwrap(), &[-6.0]);
        let (d, _) = ctc_greedy_decoder(&inputs, &lens, false, -1).unwrap();
        assert_eq!(d.values.as_slice::<i64>().unwrap(), &[0, 0, 0, 1]);
    }

    #[test]
    fn beam_search_sums_alignments_of_a_prefix() {
        // One step, classes {a, blank}: the paths "a" (p(a)) and "" (p(blank)).
        let x = vec![0.5f64, -0.5];
        let inputs = Tensor::from_vec(vec![1, 1, 2], x).unwrap();
        let lens = Tensor::from_vec(vec![1], vec![1i32]).unwrap();
        let (d, lp) = ctc_beam_search_decoder(&inputs, &lens, 4, 2, true).unwrap();
        assert_eq!(d[0].values.as_slice::<i64>().unwrap(), &[0]);
        assert_eq!(d[1].values.as_slice::<i64>().unwrap(), &[] as &[i64]);
        let pa = 1.0 / (1.0 + (-1.0f64).exp());
        let lp = lp.as_slice::<f64>().unwrap();
        assert!((lp[0] - pa.ln()).abs() < 1e-12 && (lp[1] - (1.0 - pa).ln()).abs() < 1e-12);
        assert!(ctc_beam_search_decoder(&inputs, &lens, 1, 2, true).is_err());
    }
}
