//! `Einsum` of one or two operands, lowered onto the batched GEMM.
//!
//! Each operand first loses its repeated labels (a diagonal is taken) and
//! the labels no other operand or the output names (they are summed). The
//! labels left fall into batch (both operands and the output), contracted
//! (both operands only) and free (one operand and the output) groups; each
//! operand is then viewed as `[batch, free, contracted]` (or with the last
//! two swapped, which the GEMM reads through a transpose flag, so that the
//! common layouts `bij,bjk`, `bhqd,bhkd` and `ij,kj` copy nothing) and one
//! batched product gives the result, which is transposed into the output's
//! order only when needed. Ellipses broadcast: their dimensions are labels
//! of their own, right-aligned, and a size-1 dimension broadcast against a
//! larger one is dropped from its operand. An output label repeated (as
//! TensorFlow's gradients write `i->ii`) puts the values on that diagonal.

use super::array::transpose;
use super::matmul::{layouts, matmul, sgemm_slices, F32Gemm};
use super::reduce::{reduce, ReduceOp};
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{Data, Element, Tensor};
use crate::with_data;

/// A label: a letter's code, or `ELL + i` for the `i`-th broadcast
/// dimension (counted from the left of the widest ellipsis).
type Label = u32;
const ELL: Label = 1 << 16;

/// A parsed equation: the labels of each operand (ellipses expanded) and
/// of the output.
#[derive(Debug, Clone)]
pub struct Equation {
    pub inputs: Vec<Vec<Label>>,
    pub output: Vec<Label>,
}

/// One side of an equation: letters, with at most one `...` (as None).
fn parse_side(s: &str, eq: &str) -> Result<Vec<Option<Label>>> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    let mut seen_ell = false;
    while i < b.len() {
        let c = b[i];
        if c == b'.' {
            if !s[i..].starts_with("...") || seen_ell {
                return Err(Error::invalid_argument(format!(
                    "Einsum: invalid ellipsis in equation {eq:?}"
                )));
            }
            seen_ell = true;
            out.push(None);
            i += 3;
        } else if c.is_ascii_alphabetic() {
            out.push(Some(Label::from(c)));
            i += 1;
        } else if c == b' ' {
            i += 1;
        } else {
            return Err(Error::invalid_argument(format!(
                "Einsum: invalid character {:?} in equation {eq:?}",
                c as char
            )));
        }
    }
    Ok(out)
}

/// Parses `equation` for operands of the given ranks.
pub fn parse(equation: &str, ranks: &[usize]) -> Result<Equation> {
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation, None),
    };
    let sides: Vec<&str> = lhs.split(',').collect();
    if sides.len() != ranks.len() {
        return Err(Error::invalid_argument(format!(
            "Einsum: Expecting {} inputs but got {} in equation {equation:?}",
            sides.len(),
            ranks.len()
        )));
    }
    let parsed: Vec<Vec<Option<Label>>> = sides
        .iter()
        .map(|s| parse_side(s, equation))
        .collect::<Result<_>>()?;
    // Broadcast rank of each operand, and the widest.
    let mut ell_ranks = Vec::new();
    for (i, (p, &r)) in parsed.iter().zip(ranks).enumerate() {
        let letters = p.iter().filter(|l| l.is_some()).count();
        let has_ell = p.len() != letters;
        if r < letters || (!has_ell && r != letters) {
            return Err(Error::invalid_argument(format!(
                "Einsum: Expected input {i} to have rank {letters}{} but got: {r}",
                if has_ell { " or more" } else { "" }
            )));
        }
        ell_ranks.push(r - letters);
    }
    let e = ell_ranks.iter().copied().max().unwrap_or(0) as Label;
    let expand = |p: &[Option<Label>], k: usize| -> Vec<Label> {
        let mut v = Vec::new();
        for l in p {
            match l {
                Some(c) => v.push(*c),
                None => v.extend((e - k as Label..e).map(|j| ELL + j)),
            }
        }
        v
    };
    let inputs: Vec<Vec<Label>> = parsed
        .iter()
        .zip(&ell_ranks)
        .map(|(p, &k)| expand(p, k))
        .collect();
    let output = match rhs {
        Some(r) => {
            let p = parse_side(r, equation)?;
            let mut v = Vec::new();
            for l in &p {
                match l {
                    Some(c) => {
                        if !inputs.iter().any(|inp| inp.contains(c)) {
                            return Err(Error::invalid_argument(format!(
                                "Einsum: output subscript {:?} does not appear in the input subscripts of {equation:?}",
                                char::from(*c as u8)
                            )));
                        }
                        v.push(*c)
                    }
                    None => v.extend((0..e).map(|j| ELL + j)),
                }
            }
            v
        }
        None => {
            // Implicit output: broadcast dims, then letters seen once, sorted.
            let mut v: Vec<Label> = (0..e).map(|j| ELL + j).collect();
            let mut letters: Vec<Label> = Vec::new();
            for inp in &inputs {
                for &l in inp {
                    if l < ELL {
                        letters.push(l);
                    }
                }
            }
            let mut once: Vec<Label> = letters
                .iter()
                .copied()
                .filter(|l| letters.iter().filter(|m| *m == l).count() == 1)
                .collect();
            once.sort_unstable();
            v.extend(once);
            v
        }
    };
    Ok(Equation { inputs, output })
}

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// `x` with labels `labels`: the diagonal over repeated labels, as a
/// tensor with each label once (first occurrences' order).
fn take_diagonal(x: &Tensor, labels: &[Label]) -> Result<(Tensor, Vec<Label>)> {
    let mut uniq: Vec<Label> = Vec::new();
    for &l in labels {
        if !uniq.contains(&l) {
            uniq.push(l);
        }
    }
    if uniq.len() == labels.len() {
        return Ok((x.clone(), uniq));
    }
    let d = x.dims();
    let st = strides(d);
    let mut dims = Vec::new();
    let mut src = Vec::new();
    for &u in &uniq {
        let pos: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == u).collect();
        let n = d[pos[0]];
        if pos.iter().any(|&p| d[p] != n) {
            return Err(Error::invalid_argument(format!(
                "Einsum: repeated label has dimensions of different sizes in shape {}",
                x.shape()
            )));
        }
        dims.push(n);
        src.push(pos.iter().map(|&p| st[p]).sum::<usize>());
    }
    let idx = gather_offsets(&dims, &src);
    fn go<T: Element>(v: &[T], idx: &[usize]) -> Vec<T> {
        idx.iter().map(|&i| v[i].clone()).collect()
    }
    let data: Data = with_data!(x.data(), v => Element::wrap(go(v, &idx)));
    Ok((Tensor::new(Shape::new(&dims), data)?, uniq))
}

/// For each element of a `dims` tensor (row-major), `sum(coord[i] *
/// stride[i])`.
fn gather_offsets(dims: &[usize], stride: &[usize]) -> Vec<usize> {
    let n: usize = dims.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut coord = vec![0usize; dims.len()];
    let mut off = 0usize;
    for _ in 0..n {
        out.push(off);
        for k in (0..dims.len()).rev() {
            coord[k] += 1;
            off += stride[k];
            if coord[k] < dims[k] {
                break;
            }
            off -= stride[k] * coord[k];
            coord[k] = 0;
        }
    }
    out
}

/// Sums `x` (labels `labels`) over the labels not in `keep`.
fn sum_out(
    x: Tensor,
    labels: Vec<Label>,
    keep: impl Fn(Label) -> bool,
) -> Result<(Tensor, Vec<Label>)> {
    let axes: Vec<i64> = (0..labels.len())
        .filter(|&i| !keep(labels[i]))
        .map(|i| i as i64)
        .collect();
    if axes.is_empty() {
        return Ok((x, labels));
    }
    let kept: Vec<Label> = labels.iter().copied().filter(|&l| keep(l)).collect();
    Ok((reduce(ReduceOp::Sum, &x, Some(&axes), false)?, kept))
}

/// `x` (labels `from`) transposed into the order `to` (the same labels).
fn permute(x: Tensor, from: &[Label], to: &[Label]) -> Result<Tensor> {
    if from == to {
        return Ok(x);
    }
    let perm: Vec<usize> = to
        .iter()
        .map(|l| from.iter().position(|m| m == l).expect("same labels"))
        .collect();
    transpose(&x, &perm)
}

/// The size of each label over all operands (broadcast dims take the
/// largest; other labels must agree).
fn label_sizes(eq: &Equation, inputs: &[&Tensor]) -> Result<Vec<(Label, usize)>> {
    let mut sizes: Vec<(Label, usize)> = Vec::new();
    for (inp, t) in eq.inputs.iter().zip(inputs) {
        for (&l, &d) in inp.iter().zip(t.dims()) {
            match sizes.iter_mut().find(|(m, _)| *m == l) {
                Some((_, s)) => {
                    if *s != d {
                        if l >= ELL && (*s == 1 || d == 1) {
                            *s = (*s).max(d);
                        } else {
                            return Err(Error::invalid_argument(format!(
                                "Einsum: Expected dimension {} at axis of the input shaped {} but got dimension {d}",
                                s,
                                t.shape()
                            )));
                        }
                    }
                }
                None => sizes.push((l, d)),
            }
        }
    }
    Ok(sizes)
}

fn size_of(sizes: &[(Label, usize)], l: Label) -> usize {
    sizes.iter().find(|(m, _)| *m == l).map_or(1, |p| p.1)
}

/// Drops broadcast labels of size 1 that are larger elsewhere.
fn drop_broadcast(
    x: Tensor,
    labels: Vec<Label>,
    sizes: &[(Label, usize)],
) -> Result<(Tensor, Vec<Label>)> {
    let d = x.dims().to_vec();
    let keep: Vec<bool> = labels
        .iter()
        .zip(&d)
        .map(|(&l, &n)| !(l >= ELL && n == 1 && size_of(sizes, l) > 1))
        .collect();
    if keep.iter().all(|&k| k) {
        return Ok((x, labels));
    }
    let dims: Vec<usize> = d.iter().zip(&keep).filter(|p| *p.1).map(|p| *p.0).collect();
    let kept: Vec<Label> = labels
        .iter()
        .zip(&keep)
        .filter(|p| *p.1)
        .map(|p| *p.0)
        .collect();
    Ok((x.reshape(Shape::new(&dims))?, kept))
}

/// `Einsum` of one or two tensors.
pub fn einsum(equation: &str, inputs: &[&Tensor]) -> Result<Tensor> {
    if inputs.is_empty() || inputs.len() > 2 {
        return Err(Error::invalid_argument(format!(
            "Einsum: the op takes 1 or 2 inputs, got {}",
            inputs.len()
        )));
    }
    let ranks: Vec<usize> = inputs.iter().map(|t| t.rank()).collect();
    let eq = parse(equation, &ranks)?;
    let sizes = label_sizes(&eq, inputs)?;
    if inputs.len() == 2 && inputs[0].dtype() != inputs[1].dtype() {
        return Err(Error::invalid_argument(format!(
            "Einsum: inputs must have one dtype, got {} and {}",
            inputs[0].dtype(),
            inputs[1].dtype()
        )));
    }
    // Output labels once each, in order.
    let mut out_uniq: Vec<Label> = Vec::new();
    for &l in &eq.output {
        if !out_uniq.contains(&l) {
            out_uniq.push(l);
        }
    }
    let mut ops: Vec<(Tensor, Vec<Label>)> = Vec::new();
    for (i, t) in inputs.iter().enumerate() {
        let (x, labels) = take_diagonal(t, &eq.inputs[i])?;
        let (x, labels) = drop_broadcast(x, labels, &sizes)?;
        ops.push((x, labels));
    }
    // Sum labels each operand alone holds (not in the output).
    let held: Vec<Vec<Label>> = ops.iter().map(|o| o.1.clone()).collect();
    for (i, (x, labels)) in ops.iter_mut().enumerate() {
        let others: Vec<Label> = held
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, h)| h.iter().copied())
            .collect();
        let (y, l) = sum_out(x.clone(), labels.clone(), |l| {
            out_uniq.contains(&l) || others.contains(&l)
        })?;
        *x = y;
        *labels = l;
    }
    let (result, labels) = if ops.len() == 1 {
        ops.pop().expect("one operand")
    } else {
        let (b, bl) = ops.pop().expect("two operands");
        let (a, al) = ops.pop().expect("two operands");
        contract(a, &al, b, &bl, &out_uniq)?
    };
    finish(result, &labels, &out_uniq, &eq.output, &sizes)
}

/// One batched product of `a` and `b` over their shared labels not in the
/// output; the result's labels are `batch, free_a, free_b`.
fn contract(
    a: Tensor,
    al: &[Label],
    b: Tensor,
    bl: &[Label],
    out: &[Label],
) -> Result<(Tensor, Vec<Label>)> {
    let batch: Vec<Label> = out
        .iter()
        .copied()
        .filter(|l| al.contains(l) && bl.contains(l))
        .collect();
    let contracted: Vec<Label> = al
        .iter()
        .copied()
        .filter(|l| bl.contains(l) && !out.contains(l))
        .collect();
    let free_a: Vec<Label> = al.iter().copied().filter(|l| !bl.contains(l)).collect();
    let free_b: Vec<Label> = bl.iter().copied().filter(|l| !al.contains(l)).collect();
    // Result order: batch, then the free groups in the output's order when
    // the output puts b's first (then a and b swap roles).
    let first_out = |f: &[Label]| f.first().and_then(|l| out.iter().position(|m| m == l));
    let swap = match (first_out(&free_a), first_out(&free_b)) {
        (Some(x), Some(y)) => y < x,
        _ => false,
    };
    let (a, al, b, bl, free_a, free_b) = if swap {
        (b, bl, a, al, free_b, free_a)
    } else {
        (a, al, b, bl, free_a, free_b)
    };
    let size = |x: &Tensor, l: &[Label], m: Label| -> usize {
        x.dims()[l.iter().position(|n| *n == m).expect("label")]
    };
    let group = |x: &Tensor, l: &[Label], g: &[Label]| -> Vec<usize> {
        g.iter().map(|&m| size(x, l, m)).collect()
    };
    let mut shape = group(&a, al, &batch);
    shape.extend(group(&a, al, &free_a));
    shape.extend(group(&b, bl, &free_b));
    let nb: usize = group(&a, al, &batch).iter().product();
    let m: usize = group(&a, al, &free_a).iter().product();
    let k: usize = group(&a, al, &contracted).iter().product();
    let n: usize = group(&b, bl, &free_b).iter().product();
    let cat = |p: &[&[Label]]| -> Vec<Label> { p.concat() };
    // a as [batch, free, contracted] or [batch, contracted, free] (transposed).
    let a_plain = cat(&[&batch, &free_a, &contracted]);
    let a_trans = cat(&[&batch, &contracted, &free_a]);
    let (a2, ta) = if al == a_trans.as_slice() && al != a_plain.as_slice() {
        (a, true)
    } else {
        (permute(a, al, &a_plain)?, false)
    };
    let b_plain = cat(&[&batch, &contracted, &free_b]);
    let b_trans = cat(&[&batch, &free_b, &contracted]);
    let (b2, tb) = if bl == b_trans.as_slice() && bl != b_plain.as_slice() {
        (b, true)
    } else {
        (permute(b, bl, &b_plain)?, false)
    };
    let a3 = a2.reshape(Shape::new(&if ta { [nb, k, m] } else { [nb, m, k] }))?;
    let b3 = b2.reshape(Shape::new(&if tb { [nb, n, k] } else { [nb, k, n] }))?;
    let r = match batched_f32(&a3, &b3, ta, tb, nb, m, k, n)? {
        Some(r) => r,
        None => matmul(&a3, &b3, ta, tb)?,
    };
    let labels = cat(&[&batch, &free_a, &free_b]);
    Ok((r.reshape(Shape::new(&shape))?, labels))
}

/// Many small f32 products (attention heads, per-example matrices): one
/// whole product per task of the kernel team, each on one thread, instead
/// of splitting every small product across the team in turn. None when the
/// products are few or large enough for the GEMM's own split.
#[allow(clippy::too_many_arguments)]
fn batched_f32(
    a: &Tensor,
    b: &Tensor,
    ta: bool,
    tb: bool,
    nb: usize,
    m: usize,
    k: usize,
    n: usize,
) -> Result<Option<Tensor>> {
    let threads = crate::team::threads();
    if a.dtype() != crate::DType::Float32
        || threads < 2
        || nb < 2 * threads
        || m * n * k > 1 << 21
        || m * n == 0
    {
        return Ok(None);
    }
    let (x, y) = (a.as_slice::<f32>()?, b.as_slice::<f32>()?);
    let (la, lb) = layouts(m, k, n, ta, tb);
    let lib = F32Gemm::for_product(m, k, n, la, lb);
    let mut out: Vec<f32> = super::parallel::zeroed(nb * m * n);
    crate::team::for_each_chunk_mut(&mut out, m * n, |i, c| {
        let xa = &x[i * m * k..(i + 1) * m * k];
        let yb = &y[i * k * n..(i + 1) * k * n];
        sgemm_slices(lib, m, k, n, xa, la, yb, lb, c, false);
    });
    Ok(Some(Tensor::from_vec(Shape::new(&[nb, m, n]), out)?))
}

/// The result (labels `labels`, each once) in the output's order and
/// shape: missing labels are size-1 broadcast dims, repeated output labels
/// put the values on a diagonal.
fn finish(
    x: Tensor,
    labels: &[Label],
    out_uniq: &[Label],
    output: &[Label],
    sizes: &[(Label, usize)],
) -> Result<Tensor> {
    let present: Vec<Label> = out_uniq
        .iter()
        .copied()
        .filter(|l| labels.contains(l))
        .collect();
    let x = permute(x, labels, &present)?;
    let uniq_dims: Vec<usize> = out_uniq
        .iter()
        .map(|&l| {
            if labels.contains(&l) {
                size_of(sizes, l)
            } else {
                1
            }
        })
        .collect();
    let x = x.reshape(Shape::new(&uniq_dims))?;
    if out_uniq.len() == output.len() {
        return Ok(x);
    }
    // Repeated output labels: scatter onto the diagonal.
    let out_dims: Vec<usize> = output
        .iter()
        .map(|l| uniq_dims[out_uniq.iter().position(|m| m == l).expect("label")])
        .collect();
    let ost = strides(&out_dims);
    let dst: Vec<usize> = out_uniq
        .iter()
        .map(|u| {
            (0..output.len())
                .filter(|&i| output[i] == *u)
                .map(|i| ost[i])
                .sum()
        })
        .collect();
    let offs = gather_offsets(&uniq_dims, &dst);
    let total: usize = out_dims.iter().product();
    Tensor::check_allocation("Einsum", x.dtype(), &out_dims)?;
    fn go<T: Element>(v: &[T], zero: &Data, offs: &[usize], total: usize) -> Vec<T> {
        let z = T::buffer(zero).expect("same dtype")[0].clone();
        let mut out = vec![z; total];
        for (s, &o) in v.iter().zip(offs) {
            out[o] = s.clone();
        }
        out
    }
    let zero = Data::zeros(x.dtype(), 1);
    let data: Data = with_data!(x.data(), v => Element::wrap(go(v, &zero, &offs, total)));
    Tensor::new(Shape::new(&out_dims), data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize], v: Vec<f64>) -> Tensor {
        Tensor::from_vec(Shape::new(shape), v).unwrap()
    }

    fn seq(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        t(shape, (0..n).map(|i| (i as f64) * 0.5 - 1.0).collect())
    }

    /// Reference: a direct sum over every label assignment.
    fn naive(eq: &str, xs: &[&Tensor]) -> (Vec<usize>, Vec<f64>) {
        let ranks: Vec<usize> = xs.iter().map(|x| x.rank()).collect();
        let e = parse(eq, &ranks).unwrap();
        let sizes = label_sizes(&e, xs).unwrap();
        let all: Vec<Label> = sizes.iter().map(|p| p.0).collect();
        let dims: Vec<usize> = sizes.iter().map(|p| p.1).collect();
        let out_dims: Vec<usize> = e.output.iter().map(|&l| size_of(&sizes, l)).collect();
        let mut out = vec![0.0; out_dims.iter().product()];
        let total: usize = dims.iter().product();
        for flat in 0..total {
            let mut rem = flat;
            let mut val = vec![0usize; dims.len()];
            for k in (0..dims.len()).rev() {
                val[k] = rem % dims[k];
                rem /= dims[k];
            }
            let at = |l: &Label| val[all.iter().position(|m| m == l).unwrap()];
            let mut prod = 1.0;
            for (x, labels) in xs.iter().zip(&e.inputs) {
                let st = strides(x.dims());
                let off: usize = labels
                    .iter()
                    .zip(x.dims())
                    .zip(&st)
                    .map(|((l, &d), s)| if d == 1 { 0 } else { at(l) * s })
                    .sum();
                prod *= x.as_slice::<f64>().unwrap()[off];
            }
            // Repeated output labels: only the diagonal.
            let ost = strides(&out_dims);
            let o: usize = e.output.iter().zip(&ost).map(|(l, s)| at(l) * s).sum();
            out[o] += prod;
        }
        (out_dims, out)
    }

    #[test]
    fn matches_direct_sums() {
        let cases: &[(&str, &[&[usize]])] = &[
            ("ij,jk->ik", &[&[2, 3], &[3, 4]]),
            ("bij,bjk->bik", &[&[2, 2, 3], &[2, 3, 4]]),
            ("bhqd,bhkd->bhqk", &[&[2, 2, 3, 4], &[2, 2, 5, 4]]),
            ("ij,kj->ik", &[&[2, 3], &[4, 3]]),
            ("ij,jk->ki", &[&[2, 3], &[3, 4]]),
            ("ji,jk->ik", &[&[3, 2], &[3, 4]]),
            ("i,j->ij", &[&[2], &[3]]),
            ("i,i->", &[&[4], &[4]]),
            ("ii->i", &[&[3, 3]]),
            ("ii", &[&[3, 3]]),
            ("ij->", &[&[3, 4]]),
            ("ij->ji", &[&[3, 4]]),
            ("i->ii", &[&[3]]),
            ("...ij,...jk->...ik", &[&[2, 1, 2, 3], &[3, 3, 4]]),
            ("bij,jk", &[&[2, 2, 3], &[3, 4]]),
            ("abc,cd->abd", &[&[2, 3, 4], &[4, 5]]),
            ("ab,cd->abcd", &[&[2, 3], &[2, 2]]),
            ("aab,bc->ac", &[&[2, 2, 3], &[3, 4]]),
            ("ijk,ikj->i", &[&[2, 3, 4], &[2, 4, 3]]),
            ("bik,bkj->bji", &[&[2, 3, 4], &[2, 4, 5]]),
            ("i...,i...->...", &[&[2, 3], &[2, 3]]),
            ("ij,ij->ij", &[&[2, 3], &[2, 3]]),
        ];
        for (eq, shapes) in cases {
            let xs: Vec<Tensor> = shapes.iter().map(|s| seq(s)).collect();
            let refs: Vec<&Tensor> = xs.iter().collect();
            let got = einsum(eq, &refs).unwrap_or_else(|e| panic!("{eq}: {e}"));
            let (dims, want) = naive(eq, &refs);
            assert_eq!(got.dims(), dims.as_slice(), "{eq}");
            let g = got.into_vec::<f64>().unwrap();
            for (a, b) in g.iter().zip(&want) {
                assert!((a - b).abs() < 1e-9, "{eq}: {g:?} vs {want:?}");
            }
        }
    }

    #[test]
    fn many_small_f32_products_match_f64() {
        let (a, b) = (seq(&[9, 3, 4]), seq(&[9, 5, 4]));
        let want = einsum("bij,bkj->bik", &[&a, &b])
            .unwrap()
            .into_vec::<f64>()
            .unwrap();
        let cast =
            |t: &Tensor| crate::kernels::elementwise::cast(t, crate::DType::Float32).unwrap();
        let got = einsum("bij,bkj->bik", &[&cast(&a), &cast(&b)]).unwrap();
        assert_eq!(got.dims(), &[9, 3, 5]);
        for (g, w) in got.into_vec::<f32>().unwrap().iter().zip(&want) {
            assert!((f64::from(*g) - w).abs() < 1e-4);
        }
    }

    #[test]
    fn bad_equations_are_invalid_arguments() {
        let x = seq(&[2, 3]);
        assert!(einsum("ij,jk->ik", &[&x]).is_err());
        assert!(einsum("ijk->i", &[&x]).is_err());
        assert!(einsum("ij->iz", &[&x]).is_err());
        assert!(einsum("ij,jk->ik", &[&x, &seq(&[4, 2])]).is_err());
    }
}
