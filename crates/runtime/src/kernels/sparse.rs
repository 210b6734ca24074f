//! Kernels of the sparse-tensor ops (`ferroflow_graph::ops::sparse`).
//!
//! A sparse tensor arrives as three inputs: int64 `indices` `[N, rank]`,
//! `values` `[N]` and an int64 `dense_shape` `[rank]`. Ops that TensorFlow
//! documents as needing indices in row-major ("canonical") order assume it,
//! as TensorFlow does; those that reorder sort index rows with
//! `sort_unstable_by`, ties broken by position so the result is stable.

use super::{boxed, farmhash};
use crate::kernel::{factory, KernelFactory, OpContext};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::scalar::Scalar;
use ferroflow_tensor::{
    bail, ensure, with_data, with_real, DType, Element, Error, Result, Shape, Tensor,
};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

/// A sparse tensor read from three consecutive inputs.
struct Sp<'a> {
    idx: Vec<i64>,
    n: usize,
    rank: usize,
    shape: Vec<i64>,
    values: &'a Tensor,
}

impl Sp<'_> {
    fn row(&self, i: usize) -> &[i64] {
        &self.idx[i * self.rank..(i + 1) * self.rank]
    }
}

fn shape_text(v: &[i64]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

fn unsupported(op: &str, d: DType) -> Error {
    Error::invalid_argument(format!("{op} does not support values of type {}", d.name()))
}

/// Checks the ranks and sizes of `(indices, values, shape)` as TensorFlow's sparse kernels do.
fn check_parts(ind: &Tensor, values: &Tensor, shape: &Tensor) -> Result<()> {
    ensure!(
        ind.rank() == 2,
        invalid_argument,
        "Input indices should be a matrix but received shape {}",
        ind.shape()
    );
    ensure!(
        values.rank() == 1,
        invalid_argument,
        "Input values should be a vector but received shape {}",
        values.shape()
    );
    ensure!(
        shape.rank() == 1,
        invalid_argument,
        "Input shape should be a vector but received shape {}",
        shape.shape()
    );
    ensure!(
        values.dims()[0] == ind.dims()[0],
        invalid_argument,
        "Number of values must match first dimension of indices. Got {} values, indices shape: {}",
        values.dims()[0],
        ind.shape()
    );
    ensure!(
        shape.dims()[0] == ind.dims()[1],
        invalid_argument,
        "Number of dimensions must match second dimension of indices. Got {} dimensions, indices shape: {}",
        shape.dims()[0],
        ind.shape()
    );
    Ok(())
}

/// The sparse tensor in inputs `first..first + 3`.
fn read_sparse<'a>(ctx: &'a OpContext<'_>, first: usize) -> Result<Sp<'a>> {
    let (ind, values, shape) = (
        ctx.input(first)?,
        ctx.input(first + 1)?,
        ctx.input(first + 2)?,
    );
    check_parts(ind, values, shape)?;
    Ok(Sp {
        idx: ind.to_i64_vec()?,
        n: ind.dims()[0],
        rank: ind.dims()[1],
        shape: shape.to_i64_vec()?,
        values,
    })
}

fn index_text(row: &[i64]) -> String {
    row.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Every index within the dense shape (InvalidArgumentError naming the first that is not).
fn check_bounds(idx: &[i64], rank: usize, shape: &[i64]) -> Result<()> {
    for (i, row) in idx
        .chunks_exact(rank.max(1))
        .enumerate()
        .take(if rank == 0 { 0 } else { usize::MAX })
    {
        if row.iter().zip(shape).any(|(&x, &d)| x < 0 || x >= d) {
            bail!(
                invalid_argument,
                "indices[{i}] = [{}] is out of bounds: need 0 <= index < {}",
                index_text(row),
                shape_text(shape)
            );
        }
    }
    Ok(())
}

/// TensorFlow's message for index `i` (`row`) repeating or coming out of order.
fn order_error(i: usize, row: &[i64], repeated: bool) -> Error {
    if repeated {
        Error::invalid_argument(format!("indices[{i}] = [{}] is repeated", index_text(row)))
    } else {
        Error::invalid_argument(format!(
            "indices[{i}] = [{}] is out of order. Many sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n",
            index_text(row)
        ))
    }
}

/// Indices strictly increasing in row-major order (TensorFlow's message otherwise).
fn check_order(idx: &[i64], rank: usize) -> Result<()> {
    if rank == 0 {
        return Ok(());
    }
    let rows: Vec<&[i64]> = idx.chunks_exact(rank).collect();
    for i in 1..rows.len() {
        match rows[i - 1].cmp(rows[i]) {
            Ordering::Less => {}
            o => return Err(order_error(i, rows[i], o == Ordering::Equal)),
        }
    }
    Ok(())
}

/// Row-major strides of a dense shape.
fn strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

fn linear(row: &[i64], strides: &[i64]) -> i64 {
    row.iter().zip(strides).map(|(a, b)| a * b).sum()
}

fn dims_of(shape: &[i64]) -> Result<Shape> {
    Shape::from_i64(shape)
}

fn vector<T: Element>(v: Vec<T>) -> Tensor {
    Tensor::vector(v)
}

fn indices_tensor(idx: Vec<i64>, rank: usize) -> Result<Tensor> {
    let n = idx.len().checked_div(rank).unwrap_or(0);
    Tensor::from_vec(vec![n, rank], idx)
}

fn take<T: Element>(v: &[T], pos: &[usize]) -> Tensor {
    vector(pos.iter().map(|&p| v[p].clone()).collect())
}

/// `values[pos[i]]` for each `i`, of any dtype.
fn take_values(values: &Tensor, pos: &[usize]) -> Result<Tensor> {
    with_data!(values.data(), v => Ok(take(v, pos)))
}

fn rows_at(idx: &[i64], rank: usize, pos: &[usize]) -> Vec<i64> {
    let mut out = Vec::with_capacity(pos.len() * rank);
    for &p in pos {
        out.extend_from_slice(&idx[p * rank..(p + 1) * rank]);
    }
    out
}

/// Each row's row-major position in `shape`, when every index lies inside
/// it and the positions fit in a `u64` (then they sort like the rows).
fn linear_keys(idx: &[i64], rank: usize, shape: &[i64]) -> Option<Vec<u64>> {
    let mut total = 1u64;
    for &d in shape {
        total = total.checked_mul(u64::try_from(d).ok()?)?;
    }
    let st: Vec<u64> = strides(shape).iter().map(|&s| s as u64).collect();
    idx.chunks_exact(rank)
        .map(|row| {
            row.iter()
                .zip(shape)
                .zip(&st)
                .try_fold(0u64, |acc, ((&x, &d), &s)| {
                    (0..d).contains(&x).then(|| acc + x as u64 * s)
                })
        })
        .collect()
}

/// The permutation sorting index rows into row-major order (stable). With
/// the dense `shape`, in-bounds rows sort by one integer key each.
fn sort_perm(idx: &[i64], rank: usize, n: usize, shape: Option<&[i64]>) -> Vec<usize> {
    if rank == 0 {
        return (0..n).collect();
    }
    if let Some(keys) = shape.and_then(|s| linear_keys(idx, rank, s)) {
        let mut pairs: Vec<(u64, usize)> = keys.into_iter().zip(0..n).collect();
        pairs.sort_unstable();
        return pairs.into_iter().map(|(_, i)| i).collect();
    }
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_unstable_by(|&a, &b| {
        idx[a * rank..(a + 1) * rank]
            .cmp(&idx[b * rank..(b + 1) * rank])
            .then(a.cmp(&b))
    });
    perm
}

fn to_dense_typed<T: Element>(
    vals: &[T],
    def: &Tensor,
    lin: &[usize],
    total: usize,
    shape: Shape,
) -> Result<Tensor> {
    let d = def.as_slice::<T>()?[0].clone();
    let mut out = vec![d; total];
    for (i, &l) in lin.iter().enumerate() {
        out[l] = vals[if vals.len() == 1 { 0 } else { i }].clone();
    }
    Tensor::from_vec(shape, out)
}

fn sparse_to_dense(ctx: &mut OpContext<'_>, validate: bool) -> Result<()> {
    let ind = ctx.input(0)?;
    let out_shape = ctx.input(1)?;
    let vals = ctx.input(2)?;
    let def = ctx.input(3)?;
    if ind.rank() > 2 {
        bail!(
            invalid_argument,
            "sparse_indices should be a scalar, vector, or matrix, got shape {}",
            ind.shape()
        );
    }
    if out_shape.rank() > 1 {
        bail!(
            invalid_argument,
            "output_shape should be a scalar or vector, got shape {}",
            out_shape.shape()
        );
    }
    let (n, rank) = match ind.rank() {
        0 => (1, 1),
        1 => (ind.dims()[0], 1),
        _ => (ind.dims()[0], ind.dims()[1]),
    };
    let shape = out_shape.to_i64_vec()?;
    ensure!(
        shape.len() == rank,
        invalid_argument,
        "output_shape has incorrect number of elements: {} should be: {rank}",
        shape.len()
    );
    ensure!(
        vals.rank() == 0 || (vals.rank() == 1 && vals.dims()[0] == n),
        invalid_argument,
        "sparse_values has incorrect shape {}, should be [] or [{n}]",
        vals.shape()
    );
    ensure!(
        def.rank() == 0,
        invalid_argument,
        "default_value should be a scalar, got shape {}",
        def.shape()
    );
    // int64 indices are read in place; int32 ones converted.
    let converted;
    let idx: &[i64] = match ind.dtype() {
        DType::Int64 => ind.as_slice::<i64>()?,
        _ => {
            converted = ind.to_i64_vec()?;
            &converted
        }
    };
    let lin = dense_positions(idx, rank, n, &shape, validate)?;
    let dims = dims_of(&shape)?;
    let total = dims.num_elements();
    let y = with_data!(vals.data(), v => to_dense_typed(v, def, &lin, total, dims))?;
    ctx.output(y);
    Ok(())
}

/// Each index row's row-major position in `shape`, in one pass: every row
/// must lie inside the shape, and with `ordered` rows must strictly increase
/// (for in-bounds rows row-major order is the order of positions), with
/// TensorFlow's messages naming the first bad index.
fn dense_positions(
    idx: &[i64],
    rank: usize,
    n: usize,
    shape: &[i64],
    ordered: bool,
) -> Result<Vec<usize>> {
    if rank == 0 {
        // A scalar output: every entry lands on its one element.
        return Ok(vec![0; n]);
    }
    let st = strides(shape);
    let mut lin = Vec::with_capacity(n);
    let mut prev: Option<i64> = None;
    for (i, row) in idx.chunks_exact(rank).take(n).enumerate() {
        let mut l = 0i64;
        for ((&x, &d), &s) in row.iter().zip(shape).zip(&st) {
            if x < 0 || x >= d {
                bail!(
                    invalid_argument,
                    "indices[{i}] = [{}] is out of bounds: need 0 <= index < {}",
                    index_text(row),
                    shape_text(shape)
                );
            }
            l += x * s;
        }
        if ordered {
            if let Some(p) = prev {
                if l <= p {
                    return Err(order_error(i, row, l == p));
                }
            }
            prev = Some(l);
        }
        lin.push(l as usize);
    }
    Ok(lin)
}

#[allow(clippy::too_many_arguments)]
fn spmm<T: Scalar>(
    av: &[T],
    b: &Tensor,
    rows: &[usize],
    cols: &[usize],
    m: usize,
    n: usize,
    adj_b: bool,
) -> Result<Tensor> {
    let bv = b.as_slice::<T>()?;
    let b1 = b.dims()[1];
    let mut out = vec![T::zero(); m * n];
    for ((&r, &c), &v) in rows.iter().zip(cols).zip(av) {
        let o = &mut out[r * n..(r + 1) * n];
        if adj_b {
            for (j, x) in o.iter_mut().enumerate() {
                *x = x.add(v.mul(bv[j * b1 + c]));
            }
        } else {
            for (x, &y) in o.iter_mut().zip(&bv[c * b1..c * b1 + n]) {
                *x = x.add(v.mul(y));
            }
        }
    }
    Tensor::from_vec(vec![m, n], out)
}

fn dense_matmul(ctx: &mut OpContext<'_>, adj_a: bool, adj_b: bool) -> Result<()> {
    let (ind, vals, a_shape, b) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.input(3)?);
    if a_shape.rank() != 1 || a_shape.num_elements() != 2 {
        bail!(
            invalid_argument,
            "Tensor 'a_shape' is not a vector of length 2, got shape {}",
            a_shape.shape()
        );
    }
    ensure!(
        b.rank() == 2,
        invalid_argument,
        "Tensor 'b' is not a matrix, got shape {}",
        b.shape()
    );
    if ind.rank() != 2 || ind.dims()[1] != 2 || vals.rank() != 1 || vals.dims()[0] != ind.dims()[0]
    {
        bail!(
            invalid_argument,
            "Tensor 'a_indices' must be [N, 2] and 'a_values' [N], got {} and {}",
            ind.shape(),
            vals.shape()
        );
    }
    let s = a_shape.to_i64_vec()?;
    let (m, k) = if adj_a { (s[1], s[0]) } else { (s[0], s[1]) };
    let (bk, n) = if adj_b {
        (b.dims()[1], b.dims()[0])
    } else {
        (b.dims()[0], b.dims()[1])
    };
    if k as usize != bk {
        bail!(
            invalid_argument,
            "Cannot multiply A and B because inner dimension does not match: {k} vs. {bk}.  Did you forget a transpose?  Dimensions of A: [{}, {}).  Dimensions of B: {}",
            s[0],
            s[1],
            b.shape()
        );
    }
    let idx = ind.to_i64_vec()?;
    let mut rows = Vec::with_capacity(idx.len() / 2);
    let mut cols = Vec::with_capacity(idx.len() / 2);
    for (i, p) in idx.chunks_exact(2).enumerate() {
        let (r, c) = if adj_a { (p[1], p[0]) } else { (p[0], p[1]) };
        let (ri, ci) = if adj_a { (1, 0) } else { (0, 1) };
        if r < 0 || r >= m {
            bail!(
                invalid_argument,
                "m ({r}) from index[{i},{ri}] out of bounds (>={m})"
            );
        }
        if c < 0 || c >= k {
            bail!(
                invalid_argument,
                "k ({c}) from index[{i},{ci}] out of bounds (>={k})"
            );
        }
        rows.push(r as usize);
        cols.push(c as usize);
    }
    let y = with_real!(vals.data(), v => spmm(v, b, &rows, &cols, m as usize, n, adj_b),
        _ => Err(unsupported("SparseTensorDenseMatMul", vals.dtype())))?;
    ctx.output(y);
    Ok(())
}

fn reorder(ctx: &mut OpContext<'_>) -> Result<()> {
    let sp = read_sparse(ctx, 0)?;
    let perm = sort_perm(&sp.idx, sp.rank, sp.n, Some(&sp.shape));
    let idx = indices_tensor(rows_at(&sp.idx, sp.rank, &perm), sp.rank)?;
    let vals = take_values(sp.values, &perm)?;
    ctx.output(idx);
    ctx.output(vals);
    Ok(())
}

fn reshape(ctx: &mut OpContext<'_>) -> Result<()> {
    let ind = ctx.input(0)?;
    let in_shape = ctx.input(1)?.to_i64_vec()?;
    let target = ctx.input(2)?.to_i64_vec()?;
    if ind.rank() != 2 || ind.dims()[1] != in_shape.len() {
        bail!(
            invalid_argument,
            "Input indices should be a matrix of {} columns but received shape {}",
            in_shape.len(),
            ind.shape()
        );
    }
    let dense: i64 = in_shape.iter().product();
    let mut known = 1i64;
    let mut unknown = None;
    for (d, &s) in target.iter().enumerate() {
        if s == -1 {
            if let Some(u) = unknown {
                bail!(
                    invalid_argument,
                    "only one output dimension may be -1, not both {u} and {d}"
                );
            }
            unknown = Some(d);
        } else if s < 0 {
            bail!(invalid_argument, "size {d} must be non-negative, not {s}");
        } else {
            known *= s;
        }
    }
    let mut out_shape = target.clone();
    if let Some(u) = unknown {
        if known == 0 || dense % known != 0 {
            bail!(
                invalid_argument,
                "Input to reshape is a SparseTensor with {dense} dense values, but the requested shape requires a multiple of {known}. input_shape={} output_shape={}",
                shape_text(&in_shape),
                shape_text(&target)
            );
        }
        out_shape[u] = dense / known;
    } else if known != dense {
        bail!(
            invalid_argument,
            "Input to reshape is a tensor with {dense} dense values, but the requested shape has {known}. input_shape={} output_shape={}",
            shape_text(&in_shape),
            shape_text(&target)
        );
    }
    let n = ind.dims()[0];
    if dense == 0 && n > 0 {
        bail!(
            invalid_argument,
            "Input to reshape is a SparseTensor with {n} entries but a dense shape {} of no elements",
            shape_text(&in_shape)
        );
    }
    let (si, so) = (strides(&in_shape), strides(&out_shape));
    let rank_in = in_shape.len();
    let idx = ind.to_i64_vec()?;
    let mut out = Vec::with_capacity(n * out_shape.len());
    for i in 0..n {
        let mut l = linear(&idx[i * rank_in..(i + 1) * rank_in], &si);
        for &s in &so {
            out.push(l / s);
            l %= s;
        }
    }
    let r = out_shape.len();
    ctx.output(indices_tensor(out, r)?);
    ctx.output(vector(out_shape));
    Ok(())
}

fn concat(ctx: &mut OpContext<'_>, concat_dim: i64) -> Result<()> {
    let k = ctx.num_inputs() / 3;
    let mut parts = Vec::with_capacity(k);
    for i in 0..k {
        let (ind, vals, shape) = (ctx.input(i)?, ctx.input(k + i)?, ctx.input(2 * k + i)?);
        check_parts(ind, vals, shape)?;
        parts.push((ind.to_i64_vec()?, shape.to_i64_vec()?));
    }
    let rank = parts[0].1.len();
    let r = rank as i64;
    if concat_dim < -r || concat_dim >= r {
        bail!(
            invalid_argument,
            "Concat dimension must be in range [{}, {r}), got {concat_dim}",
            -r
        );
    }
    let cd = ((concat_dim + r) % r.max(1)) as usize;
    let mut out_shape = parts[0].1.clone();
    out_shape[cd] = 0;
    for (i, (_, s)) in parts.iter().enumerate() {
        ensure!(
            s.len() == rank,
            invalid_argument,
            "Ranks of all input tensors must match: expected {rank} but got {} at position {i}",
            s.len()
        );
        for (d, (&got, &want)) in s.iter().zip(&parts[0].1).enumerate() {
            if d != cd && got != want {
                bail!(
                    invalid_argument,
                    "Input shapes must match: expected {want} for dimension {d} but got {got} at position {i}"
                );
            }
        }
    }
    let mut idx = Vec::new();
    for (ind, s) in &parts {
        let off = out_shape[cd];
        for row in ind.chunks_exact(rank) {
            let start = idx.len();
            idx.extend_from_slice(row);
            idx[start + cd] += off;
        }
        out_shape[cd] += s[cd];
    }
    let total = idx.len() / rank.max(1);
    // Inputs in order along dimension 0 are already in order; otherwise sort.
    let perm = if cd == 0 {
        (0..total).collect()
    } else {
        sort_perm(&idx, rank, total, Some(&out_shape))
    };
    let values: Vec<Tensor> = (0..k)
        .map(|i| ctx.input(k + i).cloned())
        .collect::<Result<_>>()?;
    let all = ferroflow_tensor::kernels::array::concat(&values, 0)?;
    ctx.output(indices_tensor(rows_at(&idx, rank, &perm), rank)?);
    ctx.output(take_values(&all, &perm)?);
    ctx.output(vector(out_shape));
    Ok(())
}

/// Both operands' shapes equal (TensorFlow's messages otherwise).
fn same_shapes(a: &[i64], b: &[i64]) -> Result<()> {
    ensure!(
        a.len() == b.len(),
        invalid_argument,
        "Operands do not have the same ranks; got shapes: {} and {}",
        shape_text(a),
        shape_text(b)
    );
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        ensure!(
            x == y,
            invalid_argument,
            "Operands' shapes do not match: got {x} and {y} for dimension {i}"
        );
    }
    Ok(())
}

/// Where each entry of a merged walk over two sorted operands comes from.
enum Side {
    A(usize),
    B(usize),
    Both(usize, usize),
}

fn merge_walk(a: &Sp, b: &Sp) -> Vec<Side> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.n.max(b.n));
    while i < a.n && j < b.n {
        match a.row(i).cmp(b.row(j)) {
            Ordering::Less => {
                out.push(Side::A(i));
                i += 1;
            }
            Ordering::Greater => {
                out.push(Side::B(j));
                j += 1;
            }
            Ordering::Equal => {
                out.push(Side::Both(i, j));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend((i..a.n).map(Side::A));
    out.extend((j..b.n).map(Side::B));
    out
}

fn add_typed<T: Scalar>(av: &[T], a: &Sp, b: &Sp, thresh: f64) -> Result<(Vec<i64>, Tensor)> {
    let bv = b.values.as_slice::<T>()?;
    let mut idx = Vec::new();
    let mut vals = Vec::new();
    for s in merge_walk(a, b) {
        match s {
            Side::A(i) => {
                idx.extend_from_slice(a.row(i));
                vals.push(av[i]);
            }
            Side::B(j) => {
                idx.extend_from_slice(b.row(j));
                vals.push(bv[j]);
            }
            Side::Both(i, j) => {
                let v = av[i].add(bv[j]);
                if v.to_f64().abs() >= thresh {
                    idx.extend_from_slice(a.row(i));
                    vals.push(v);
                }
            }
        }
    }
    Ok((idx, vector(vals)))
}

fn sparse_add(ctx: &mut OpContext<'_>) -> Result<()> {
    let a = read_sparse(ctx, 0)?;
    let b = read_sparse(ctx, 3)?;
    same_shapes(&a.shape, &b.shape)?;
    let thresh = ctx.input(6)?;
    ensure!(
        thresh.rank() == 0,
        invalid_argument,
        "The magnitude threshold must be a scalar: got shape {}",
        thresh.shape()
    );
    let thresh = thresh.scalar_f64()?;
    ensure!(
        a.values.dtype() == b.values.dtype(),
        invalid_argument,
        "SparseAdd operands must have the same dtype"
    );
    let (idx, vals) = with_real!(a.values.data(), v => add_typed(v, &a, &b, thresh),
        _ => Err(unsupported("SparseAdd", a.values.dtype())))?;
    let rank = a.rank;
    let shape = a.shape.clone();
    drop((a, b));
    ctx.output(indices_tensor(idx, rank)?);
    ctx.output(vals);
    ctx.output(vector(shape));
    Ok(())
}

fn row_map(idx: &[i64], rank: usize) -> HashMap<&[i64], usize> {
    idx.chunks_exact(rank.max(1))
        .enumerate()
        .map(|(i, r)| (r, i))
        .collect()
}

fn gather_or_zero<T: Scalar>(
    g: &[T],
    map: &HashMap<&[i64], usize>,
    idx: &[i64],
    rank: usize,
) -> Tensor {
    vector(
        idx.chunks_exact(rank.max(1))
            .map(|r| map.get(r).map_or(T::zero(), |&p| g[p]))
            .collect(),
    )
}

fn sparse_add_grad(ctx: &mut OpContext<'_>) -> Result<()> {
    let g = ctx.input(0)?;
    let (a, b, s) = (ctx.input(1)?, ctx.input(2)?, ctx.input(3)?);
    for (t, what) in [(a, "a_indices"), (b, "b_indices"), (s, "sum_indices")] {
        ensure!(
            t.rank() == 2,
            invalid_argument,
            "Input {what} should be a matrix but received shape: {}",
            t.shape()
        );
    }
    let rank = s.dims()[1];
    let (ai, bi, si) = (a.to_i64_vec()?, b.to_i64_vec()?, s.to_i64_vec()?);
    let map = row_map(&si, rank);
    let (ga, gb) = with_real!(g.data(), v => (gather_or_zero(v, &map, &ai, rank), gather_or_zero(v, &map, &bi, rank)),
        _ => return Err(unsupported("SparseAddGrad", g.dtype())));
    ctx.output(ga);
    ctx.output(gb);
    Ok(())
}

/// Which dimensions a reduction removes, from the `reduction_axes` input.
fn reduction_mask(axes: &[i64], rank: usize) -> Result<Vec<bool>> {
    let r = rank as i64;
    let mut mask = vec![false; rank];
    for &a in axes {
        if a < -r || a >= r {
            bail!(
                invalid_argument,
                "Invalid reduction dimension {a}, for input with {rank} dimensions."
            );
        }
        mask[((a + r) % r) as usize] = true;
    }
    Ok(mask)
}

/// Sum or max of the values falling on each output position, in row-major
/// order of the positions that have values.
fn reduce_groups<T: Scalar>(v: &[T], lin: &[i64], max: bool) -> BTreeMap<i64, T> {
    let mut acc: BTreeMap<i64, T> = BTreeMap::new();
    for (&l, &x) in lin.iter().zip(v) {
        acc.entry(l)
            .and_modify(|a| {
                *a = if max {
                    if x > *a || x.is_nan() {
                        x
                    } else {
                        *a
                    }
                } else {
                    a.add(x)
                }
            })
            .or_insert(x);
    }
    acc
}

fn reduce_dense<T: Scalar>(v: &[T], lin: &[i64], max: bool, shape: Shape) -> Result<Tensor> {
    // Positions without entries are 0 for max as for sum (TensorFlow's result).
    let mut out = vec![T::zero(); shape.num_elements()];
    for (l, x) in reduce_groups(v, lin, max) {
        out[l as usize] = x;
    }
    Tensor::from_vec(shape, out)
}

fn reduce_sparse_typed<T: Scalar>(v: &[T], lin: &[i64], max: bool) -> (Vec<i64>, Tensor) {
    let (pos, vals): (Vec<i64>, Vec<T>) = reduce_groups(v, lin, max).into_iter().unzip();
    (pos, vector(vals))
}

fn sparse_reduce(ctx: &mut OpContext<'_>, max: bool, sparse_out: bool, keep: bool) -> Result<()> {
    let sp = read_sparse(ctx, 0)?;
    let axes = ctx.input(3)?.to_i64_vec()?;
    let mask = reduction_mask(&axes, sp.rank)?;
    check_bounds(&sp.idx, sp.rank, &sp.shape)?;
    // The output's dense shape, and the input dimensions it keeps.
    let mut out_shape = Vec::new();
    let mut kept = Vec::new();
    for (d, &reduced) in mask.iter().enumerate() {
        if !reduced {
            out_shape.push(sp.shape[d]);
            kept.push(Some(d));
        } else if keep {
            out_shape.push(1);
            kept.push(None);
        }
    }
    let st = strides(&out_shape);
    let lin: Vec<i64> = (0..sp.n)
        .map(|i| {
            let row = sp.row(i);
            kept.iter()
                .zip(&st)
                .map(|(k, s)| k.map_or(0, |d| row[d] * s))
                .sum()
        })
        .collect();
    let op = if max {
        "SparseReduceMax"
    } else {
        "SparseReduceSum"
    };
    if sparse_out {
        let (pos, vals) = with_real!(sp.values.data(), v => reduce_sparse_typed(v, &lin, max),
            _ => return Err(unsupported(op, sp.values.dtype())));
        let r = out_shape.len();
        let mut idx = Vec::with_capacity(pos.len() * r);
        for mut l in pos {
            for &s in &st {
                idx.push(l / s);
                l %= s;
            }
        }
        ctx.output(indices_tensor(idx, r)?);
        ctx.output(vals);
        ctx.output(vector(out_shape));
    } else {
        let shape = dims_of(&out_shape)?;
        let y = with_real!(sp.values.data(), v => reduce_dense(v, &lin, max, shape),
            _ => Err(unsupported(op, sp.values.dtype())))?;
        ctx.output(y);
    }
    Ok(())
}

fn fill_values<T: Element>(v: &[T], def: &Tensor, src: &[Option<usize>]) -> Result<Tensor> {
    let d = def.as_slice::<T>()?[0].clone();
    Ok(vector(
        src.iter()
            .map(|s| s.map_or_else(|| d.clone(), |p| v[p].clone()))
            .collect(),
    ))
}

fn fill_empty_rows(ctx: &mut OpContext<'_>) -> Result<()> {
    let def = ctx.input(3)?;
    ensure!(
        def.rank() == 0,
        invalid_argument,
        "default_value must be a scalar, saw: {}",
        def.shape()
    );
    let sp = read_sparse(ctx, 0)?;
    ensure!(
        sp.rank != 0,
        invalid_argument,
        "dense_shape must be a vector of at least one element"
    );
    let rows = sp.shape[0];
    if rows == 0 && sp.n > 0 {
        bail!(
            invalid_argument,
            "Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = {}",
            sp.n
        );
    }
    let rows = rows.max(0) as usize;
    let mut counts = vec![0usize; rows];
    for i in 0..sp.n {
        let r = sp.row(i)[0];
        if r < 0 {
            bail!(invalid_argument, "indices({i}, 0) is invalid: {r} < 0");
        }
        if r as usize >= rows {
            bail!(
                invalid_argument,
                "indices({i}, 0) is invalid: {r} >= {rows}"
            );
        }
        counts[r as usize] += 1;
    }
    // Each row's first output position: its entries in input order, or one default entry.
    let mut offsets = vec![0usize; rows + 1];
    for r in 0..rows {
        offsets[r + 1] = offsets[r] + counts[r].max(1);
    }
    let total = offsets[rows];
    let mut src = vec![None; total];
    let mut idx = vec![0i64; total * sp.rank];
    let mut rmap = vec![0i64; sp.n];
    let mut fill = offsets.clone();
    for (i, back) in rmap.iter_mut().enumerate() {
        let r = sp.row(i)[0] as usize;
        let p = fill[r];
        fill[r] += 1;
        src[p] = Some(i);
        idx[p * sp.rank..(p + 1) * sp.rank].copy_from_slice(sp.row(i));
        *back = p as i64;
    }
    let empty: Vec<bool> = counts.iter().map(|&c| c == 0).collect();
    for r in 0..rows {
        if counts[r] == 0 {
            idx[offsets[r] * sp.rank] = r as i64;
        }
    }
    let vals = with_data!(sp.values.data(), v => fill_values(v, def, &src))?;
    let rank = sp.rank;
    ctx.output(indices_tensor(idx, rank)?);
    ctx.output(vals);
    ctx.output(vector(empty));
    ctx.output(vector(rmap));
    Ok(())
}

fn fill_grad_typed<T: Scalar>(g: &[T], rmap: &[i64]) -> Result<(Tensor, Tensor)> {
    let mut hit = vec![false; g.len()];
    let mut dv = Vec::with_capacity(rmap.len());
    for (i, &p) in rmap.iter().enumerate() {
        if p < 0 || p as usize >= g.len() {
            bail!(
                invalid_argument,
                "Invalid reverse_index_map[{i}] = {p}: need 0 <= index < {}",
                g.len()
            );
        }
        hit[p as usize] = true;
        dv.push(g[p as usize]);
    }
    let dd = g
        .iter()
        .zip(&hit)
        .filter(|(_, &h)| !h)
        .fold(T::zero(), |a, (&x, _)| a.add(x));
    Ok((vector(dv), Tensor::scalar(dd)))
}

fn fill_empty_rows_grad(ctx: &mut OpContext<'_>) -> Result<()> {
    let rmap = ctx.input(0)?.to_i64_vec()?;
    let g = ctx.input(1)?;
    let (dv, dd) = with_real!(g.data(), v => fill_grad_typed(v, &rmap),
        _ => Err(unsupported("SparseFillEmptyRowsGrad", g.dtype())))?;
    ctx.output(dv);
    ctx.output(dd);
    Ok(())
}

fn split(ctx: &mut OpContext<'_>, k: usize) -> Result<()> {
    let axis = ctx.input(0)?.scalar_i64()?;
    let sp = read_sparse(ctx, 1)?;
    let r = sp.rank as i64;
    if axis < -r || axis >= r {
        bail!(
            invalid_argument,
            "Input split_dim should be between {} and {r}, got {axis}",
            -r
        );
    }
    let ax = ((axis + r) % r) as usize;
    let dim = sp.shape[ax];
    if k < 1 || k as i64 > dim {
        bail!(
            invalid_argument,
            "Input num_split should be between 1 and the splitting dimension size ({dim}), got {k}"
        );
    }
    let k64 = k as i64;
    let (size, residual) = (dim / k64, dim % k64);
    let big = (size + 1) * residual;
    let slice_of = |x: i64| -> (usize, i64) {
        if x < big {
            ((x / (size + 1)) as usize, (x / (size + 1)) * (size + 1))
        } else {
            let s = residual + (x - big) / size;
            (s as usize, big + (s - residual) * size)
        }
    };
    let mut idx: Vec<Vec<i64>> = vec![Vec::new(); k];
    let mut pos: Vec<Vec<usize>> = vec![Vec::new(); k];
    for i in 0..sp.n {
        let row = sp.row(i);
        let x = row[ax];
        if x < 0 || x >= dim {
            bail!(
                invalid_argument,
                "indices[{i}] = [{}] is out of bounds: need 0 <= index < {}",
                index_text(row),
                shape_text(&sp.shape)
            );
        }
        let (s, start) = slice_of(x);
        let at = idx[s].len();
        idx[s].extend_from_slice(row);
        idx[s][at + ax] -= start;
        pos[s].push(i);
    }
    let rank = sp.rank;
    let mut vals = Vec::with_capacity(k);
    let mut shapes = Vec::with_capacity(k);
    for (s, p) in pos.iter().enumerate() {
        vals.push(take_values(sp.values, p)?);
        let mut sh = sp.shape.clone();
        sh[ax] = if (s as i64) < residual {
            size + 1
        } else {
            size
        };
        shapes.push(sh);
    }
    for i in idx {
        ctx.output(indices_tensor(i, rank)?);
    }
    for v in vals {
        ctx.output(v);
    }
    for s in shapes {
        ctx.output(vector(s));
    }
    Ok(())
}

fn slice(ctx: &mut OpContext<'_>) -> Result<()> {
    let sp = read_sparse(ctx, 0)?;
    let start = ctx.input(3)?.to_i64_vec()?;
    let size = ctx.input(4)?.to_i64_vec()?;
    for (v, what) in [(&start, "start"), (&size, "size")] {
        ensure!(
            v.len() == sp.rank,
            invalid_argument,
            "Expected {what} to be a vector of length {} but got length {}",
            sp.rank,
            v.len()
        );
    }
    let mut idx = Vec::new();
    let mut pos = Vec::new();
    for i in 0..sp.n {
        let row = sp.row(i);
        if (0..sp.rank).all(|d| row[d] >= start[d] && row[d] < start[d].saturating_add(size[d])) {
            idx.extend(row.iter().zip(&start).map(|(x, s)| x - s));
            pos.push(i);
        }
    }
    let out_shape: Vec<i64> = (0..sp.rank)
        .map(|d| (start[d].saturating_add(size[d]).min(sp.shape[d]) - start[d]).max(0))
        .collect();
    let vals = take_values(sp.values, &pos)?;
    let rank = sp.rank;
    ctx.output(indices_tensor(idx, rank)?);
    ctx.output(vals);
    ctx.output(vector(out_shape));
    Ok(())
}

fn slice_grad(ctx: &mut OpContext<'_>) -> Result<()> {
    let g = ctx.input(0)?;
    let input = ctx.input(1)?;
    let start = ctx.input(2)?.to_i64_vec()?;
    let out = ctx.input(3)?;
    if input.rank() != 2
        || out.rank() != 2
        || input.dims()[1] != start.len()
        || out.dims()[1] != start.len()
    {
        bail!(
            invalid_argument,
            "SparseSliceGrad: input_indices {} and output_indices {} must be matrices with {} columns",
            input.shape(),
            out.shape(),
            start.len()
        );
    }
    let rank = start.len();
    let oi = out.to_i64_vec()?;
    let shifted: Vec<i64> = oi
        .chunks_exact(rank.max(1))
        .flat_map(|r| r.iter().zip(&start).map(|(x, s)| x + s).collect::<Vec<_>>())
        .collect();
    let map = row_map(&shifted, rank);
    let ii = input.to_i64_vec()?;
    let y = with_real!(g.data(), v => gather_or_zero(v, &map, &ii, rank),
        _ => return Err(unsupported("SparseSliceGrad", g.dtype())));
    ctx.output(y);
    Ok(())
}

fn softmax_typed<T: Scalar>(v: &[T], groups: &[Vec<usize>]) -> Tensor {
    let mut out = vec![T::zero(); v.len()];
    for g in groups {
        let m = g
            .iter()
            .map(|&i| v[i].to_f64())
            .fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = g.iter().map(|&i| (v[i].to_f64() - m).exp()).collect();
        let s: f64 = e.iter().sum();
        for (&i, x) in g.iter().zip(e) {
            out[i] = T::from_f64(x / s);
        }
    }
    vector(out)
}

fn softmax(ctx: &mut OpContext<'_>) -> Result<()> {
    let sp = read_sparse(ctx, 0)?;
    if sp.rank < 2 {
        bail!(
            invalid_argument,
            "Input should have rank >= 2, but received shape: {}",
            shape_text(&sp.shape)
        );
    }
    // Entries sharing all but the last coordinate form one softmax.
    let mut by_prefix: HashMap<&[i64], usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..sp.n {
        let p = &sp.row(i)[..sp.rank - 1];
        let g = *by_prefix.entry(p).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    let y = match sp.values.dtype() {
        DType::Float32 => softmax_typed(sp.values.as_slice::<f32>()?, &groups),
        DType::Float64 => softmax_typed(sp.values.as_slice::<f64>()?, &groups),
        d => return Err(unsupported("SparseSoftmax", d)),
    };
    ctx.output(y);
    Ok(())
}

fn sparse_sparse_typed<T: Scalar>(
    av: &[T],
    a: &Sp,
    b: &Sp,
    max: bool,
) -> Result<(Vec<i64>, Tensor)> {
    let bv = b.values.as_slice::<T>()?;
    let pick = |x: T, y: T| if (x > y) == max { x } else { y };
    let mut idx = Vec::new();
    let mut vals = Vec::new();
    for s in merge_walk(a, b) {
        let (row, v) = match s {
            Side::A(i) => (a.row(i), pick(av[i], T::zero())),
            Side::B(j) => (b.row(j), pick(T::zero(), bv[j])),
            Side::Both(i, j) => (a.row(i), pick(av[i], bv[j])),
        };
        idx.extend_from_slice(row);
        vals.push(v);
    }
    Ok((idx, vector(vals)))
}

fn sparse_sparse(ctx: &mut OpContext<'_>, max: bool) -> Result<()> {
    let a = read_sparse(ctx, 0)?;
    let b = read_sparse(ctx, 3)?;
    same_shapes(&a.shape, &b.shape)?;
    check_order(&a.idx, a.rank)?;
    check_order(&b.idx, b.rank)?;
    let op = if max {
        "SparseSparseMaximum"
    } else {
        "SparseSparseMinimum"
    };
    let (idx, vals) = with_real!(a.values.data(), v => sparse_sparse_typed(v, &a, &b, max),
        _ => Err(unsupported(op, a.values.dtype())))?;
    let rank = a.rank;
    ctx.output(indices_tensor(idx, rank)?);
    ctx.output(vals);
    Ok(())
}

#[derive(Clone, Copy)]
enum Cwise {
    Mul,
    Div,
    Add,
}

fn cwise_typed<T: Scalar>(v: &[T], dense: &Tensor, pos: &[usize], op: Cwise) -> Result<Tensor> {
    let d = dense.as_slice::<T>()?;
    Ok(vector(
        v.iter()
            .zip(pos)
            .map(|(&x, &p)| match op {
                Cwise::Mul => x.mul(d[p]),
                Cwise::Div => x.div(d[p]),
                Cwise::Add => x.add(d[p]),
            })
            .collect(),
    ))
}

fn dense_cwise(ctx: &mut OpContext<'_>, op: Cwise) -> Result<()> {
    let sp = read_sparse(ctx, 0)?;
    let dense = ctx.input(3)?;
    let dd: Vec<i64> = dense.dims().iter().map(|&d| d as i64).collect();
    let incompatible = || {
        Error::invalid_argument(format!(
            "SparseDenseBinaryOpShared broadcasts dense to sparse only; got incompatible shapes: {} vs. {}",
            shape_text(&sp.shape),
            shape_text(&dd)
        ))
    };
    if dd.len() > sp.rank {
        return Err(incompatible());
    }
    let off = sp.rank - dd.len();
    for (k, &d) in dd.iter().enumerate() {
        if d != 1 && d != sp.shape[off + k] {
            return Err(incompatible());
        }
    }
    check_bounds(&sp.idx, sp.rank, &sp.shape)?;
    let st = strides(&dd);
    let pos: Vec<usize> = (0..sp.n)
        .map(|i| {
            let row = &sp.row(i)[off..];
            row.iter()
                .zip(&dd)
                .zip(&st)
                .map(|((&x, &d), &s)| if d == 1 { 0 } else { x * s })
                .sum::<i64>() as usize
        })
        .collect();
    let name = match op {
        Cwise::Mul => "SparseDenseCwiseMul",
        Cwise::Div => "SparseDenseCwiseDiv",
        Cwise::Add => "SparseDenseCwiseAdd",
    };
    if dense.dtype() != sp.values.dtype() {
        return Err(unsupported(name, dense.dtype()));
    }
    let y = with_real!(sp.values.data(), v => cwise_typed(v, dense, &pos, op),
        _ => Err(unsupported(name, sp.values.dtype())))?;
    ctx.output(y);
    Ok(())
}

fn dense_add_typed<T: Scalar>(v: &[T], b: &Tensor, lin: &[usize]) -> Result<Tensor> {
    let mut out = b.as_slice::<T>()?.to_vec();
    for (&l, &x) in lin.iter().zip(v) {
        out[l] = out[l].add(x);
    }
    Tensor::from_vec(b.shape().clone(), out)
}

fn tensor_dense_add(ctx: &mut OpContext<'_>) -> Result<()> {
    let (ind, vals, shape, b) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.input(3)?);
    check_parts(ind, vals, shape)?;
    let s = shape.to_i64_vec()?;
    ensure!(
        s.len() == b.rank(),
        invalid_argument,
        "Dimension mismatch: the sparse tensor has rank {} but the dense tensor has rank {}; no broadcasting is supported",
        s.len(),
        b.rank()
    );
    for (d, (&x, &y)) in s.iter().zip(b.dims()).enumerate() {
        if x != y as i64 {
            bail!(
                invalid_argument,
                "Dimension {d} does not equal (no broadcasting is supported): sparse side {x} vs dense side {y}"
            );
        }
    }
    let rank = s.len();
    let idx = ind.to_i64_vec()?;
    check_bounds(&idx, rank, &s)?;
    let st = strides(&s);
    let lin: Vec<usize> = idx
        .chunks_exact(rank.max(1))
        .take(ind.dims()[0])
        .map(|r| linear(r, &st) as usize)
        .collect();
    let y = with_real!(vals.data(), v => dense_add_typed(v, b, &lin),
        _ => Err(unsupported("SparseTensorDenseAdd", vals.dtype())))?;
    ctx.output(y);
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Seg {
    Sum,
    Mean,
    SqrtN,
}

impl Seg {
    fn scale(self, count: usize) -> f64 {
        match self {
            Seg::Sum => 1.0,
            Seg::Mean => 1.0 / count.max(1) as f64,
            Seg::SqrtN => 1.0 / (count.max(1) as f64).sqrt(),
        }
    }
}

/// Reads `indices` and `segment_ids`, checking their sizes and that the ids are sorted.
fn segment_inputs(ctx: &OpContext<'_>) -> Result<(Vec<i64>, Vec<i64>)> {
    let (ind, ids) = (ctx.input(1)?, ctx.input(2)?);
    if ind.rank() != 1 || ids.rank() != 1 || ind.dims()[0] != ids.dims()[0] {
        bail!(
            invalid_argument,
            "segment_ids and indices should have same size: indices {} vs. segment_ids {}",
            ind.shape(),
            ids.shape()
        );
    }
    let (ind, ids) = (ind.to_i64_vec()?, ids.to_i64_vec()?);
    for i in 1..ids.len() {
        if ids[i] < ids[i - 1] {
            bail!(invalid_argument, "segment ids are not increasing");
        }
    }
    if ids.first().is_some_and(|&s| s < 0) {
        bail!(invalid_argument, "segment ids must be >= 0, got {}", ids[0]);
    }
    Ok((ind, ids))
}

fn segment_typed<T: Scalar>(
    d: &[T],
    row: usize,
    ind: &[i64],
    ids: &[i64],
    rows: usize,
    op: Seg,
) -> Vec<T> {
    let mut out = vec![T::zero(); rows * row];
    let mut counts = vec![0usize; rows];
    for (&i, &s) in ind.iter().zip(ids) {
        let (i, s) = (i as usize, s as usize);
        counts[s] += 1;
        for (o, &x) in out[s * row..(s + 1) * row]
            .iter_mut()
            .zip(&d[i * row..(i + 1) * row])
        {
            *o = o.add(x);
        }
    }
    if op != Seg::Sum {
        for (s, &c) in counts.iter().enumerate() {
            if c > 0 {
                let f = op.scale(c);
                for o in &mut out[s * row..(s + 1) * row] {
                    *o = T::from_f64(o.to_f64() * f);
                }
            }
        }
    }
    out
}

fn sparse_segment(ctx: &mut OpContext<'_>, op: Seg, with_num: bool) -> Result<()> {
    let data = ctx.input(0)?;
    ensure!(
        data.rank() != 0,
        invalid_argument,
        "data must be at least rank 1"
    );
    let (ind, ids) = segment_inputs(ctx)?;
    let d0 = data.dims()[0] as i64;
    for (i, &x) in ind.iter().enumerate() {
        if x < 0 || x >= d0 {
            bail!(
                invalid_argument,
                "Bad: indices[{i}] == {x} out of range [0, {d0})"
            );
        }
    }
    let last = ids.last().map_or(0, |&s| s + 1);
    let rows = if with_num {
        let n = ctx.input(3)?.scalar_i64()?;
        if last > n {
            bail!(
                invalid_argument,
                "segment ids must be < num_segments: got segment id {} with num_segments {n}",
                last - 1
            );
        }
        n
    } else {
        last
    } as usize;
    let row: usize = data.dims()[1..].iter().product();
    let mut dims = data.dims().to_vec();
    dims[0] = rows;
    let name = match op {
        Seg::Sum => "SparseSegmentSum",
        Seg::Mean => "SparseSegmentMean",
        Seg::SqrtN => "SparseSegmentSqrtN",
    };
    let y = with_real!(data.data(), v => Tensor::from_vec(dims, segment_typed(v, row, &ind, &ids, rows, op)),
        _ => Err(unsupported(name, data.dtype())))?;
    ctx.output(y);
    Ok(())
}

fn segment_grad_typed<T: Scalar>(
    g: &[T],
    row: usize,
    ind: &[i64],
    ids: &[i64],
    rows: usize,
    op: Seg,
) -> Vec<T> {
    let nseg = ids.last().map_or(0, |&s| s as usize + 1);
    let mut counts = vec![0usize; nseg];
    for &s in ids {
        counts[s as usize] += 1;
    }
    let mut out = vec![T::zero(); rows * row];
    for (&i, &s) in ind.iter().zip(ids) {
        let (i, s) = (i as usize, s as usize);
        let f = op.scale(counts[s]);
        for (o, &x) in out[i * row..(i + 1) * row]
            .iter_mut()
            .zip(&g[s * row..(s + 1) * row])
        {
            *o = if op == Seg::Sum {
                o.add(x)
            } else {
                T::from_f64(o.to_f64() + x.to_f64() * f)
            };
        }
    }
    out
}

fn sparse_segment_grad(ctx: &mut OpContext<'_>, op: Seg) -> Result<()> {
    let g = ctx.input(0)?;
    let (ind, ids) = segment_inputs(ctx)?;
    let rows = ctx.input(3)?.scalar_i64()?;
    ensure!(
        g.rank() != 0,
        invalid_argument,
        "grad must be at least rank 1"
    );
    let g0 = g.dims()[0] as i64;
    for (i, &s) in ids.iter().enumerate() {
        if s >= g0 {
            bail!(
                invalid_argument,
                "Invalid segment_ids[{i}] = {s}: need < {g0}"
            );
        }
    }
    for (i, &x) in ind.iter().enumerate() {
        if x < 0 || x >= rows {
            bail!(
                invalid_argument,
                "Index {x} at position {i} is out of range [0, {rows})"
            );
        }
    }
    let row: usize = g.dims()[1..].iter().product();
    let mut dims = g.dims().to_vec();
    dims[0] = rows as usize;
    let y = with_real!(g.data(), v => Tensor::from_vec(dims, segment_grad_typed(v, row, &ind, &ids, rows as usize, op)),
        _ => Err(unsupported("SparseSegmentGrad", g.dtype())))?;
    ctx.output(y);
    Ok(())
}

fn segment_grad_v2_typed<T: Scalar>(
    g: &[T],
    row: usize,
    ind: &[i64],
    ids: &[i64],
    op: Seg,
) -> (Vec<i64>, Vec<T>) {
    let nseg = ids.last().map_or(0, |&s| s as usize + 1);
    let mut counts = vec![0usize; nseg];
    for &s in ids {
        counts[s as usize] += 1;
    }
    let mut uniq: Vec<i64> = ind.to_vec();
    uniq.sort_unstable();
    uniq.dedup();
    let mut out = vec![T::zero(); uniq.len() * row];
    for (&i, &s) in ind.iter().zip(ids) {
        let k = uniq.binary_search(&i).unwrap_or(0);
        let s = s as usize;
        let f = op.scale(counts[s]);
        for (o, &x) in out[k * row..(k + 1) * row]
            .iter_mut()
            .zip(&g[s * row..(s + 1) * row])
        {
            *o = if op == Seg::Sum {
                o.add(x)
            } else {
                T::from_f64(o.to_f64() + x.to_f64() * f)
            };
        }
    }
    (uniq, out)
}

/// `SparseSegment*GradV2`: the gradient rows of the distinct indices only
/// (sorted), for an `IndexedSlices` gradient (`sparse_gradient=True`).
fn sparse_segment_grad_v2(ctx: &mut OpContext<'_>, op: Seg) -> Result<()> {
    let g = ctx.input(0)?;
    let (ind, ids) = segment_inputs(ctx)?;
    let rows = ctx.input(3)?.scalar_i64()?;
    ensure!(
        g.rank() != 0,
        invalid_argument,
        "grad must be at least rank 1"
    );
    let g0 = g.dims()[0] as i64;
    if let Some((i, &s)) = ids.iter().enumerate().find(|(_, &s)| s >= g0) {
        bail!(
            invalid_argument,
            "Invalid segment_ids[{i}] = {s}: need < {g0}"
        );
    }
    if let Some((i, &x)) = ind.iter().enumerate().find(|(_, &x)| x < 0 || x >= rows) {
        bail!(
            invalid_argument,
            "Index {x} at position {i} is out of range [0, {rows})"
        );
    }
    let row: usize = g.dims()[1..].iter().product();
    let idx_type = ctx.input(1)?.dtype();
    let (uniq, vals) = with_real!(g.data(), v => {
        let (u, o) = segment_grad_v2_typed(v, row, &ind, &ids, op);
        let mut dims = g.dims().to_vec();
        dims[0] = u.len();
        (u, Tensor::from_vec(dims, o)?)
    }, _ => return Err(unsupported("SparseSegmentGradV2", g.dtype())));
    let uniq = if idx_type == DType::Int32 {
        vector(uniq.into_iter().map(|x| x as i32).collect())
    } else {
        vector(uniq)
    };
    ctx.output(vals);
    ctx.output(uniq);
    Ok(())
}

/// Attributes of `DenseCountSparseOutput` / `SparseCountSparseOutput`.
#[derive(Clone, Copy)]
struct Counting {
    minlength: i64,
    maxlength: i64,
    binary: bool,
}

fn count_typed<W: Scalar>(
    w: &[W],
    values: &[i64],
    batch_of: &[usize],
    batches: usize,
    two_d: bool,
    c: Counting,
) -> Result<(Vec<i64>, Tensor, Vec<i64>)> {
    if !w.is_empty() && w.len() != values.len() {
        bail!(
            invalid_argument,
            "Weights and values must have the same shape. Weight shape: [{}]; values shape: [{}]",
            w.len(),
            values.len()
        );
    }
    let mut per_batch: Vec<BTreeMap<i64, f64>> = vec![BTreeMap::new(); batches];
    let mut max_value = 0i64;
    for (k, (&v, &b)) in values.iter().zip(batch_of).enumerate() {
        if v < 0 {
            bail!(
                invalid_argument,
                "Input values must all be non-negative; got {v} at position {k}"
            );
        }
        if c.maxlength >= 0 && v >= c.maxlength {
            continue;
        }
        max_value = max_value.max(v);
        let add = if w.is_empty() { 1.0 } else { w[k].to_f64() };
        let e = per_batch[b].entry(v).or_insert(0.0);
        *e = if c.binary { 1.0 } else { *e + add };
    }
    let size = if c.maxlength > 0 {
        c.maxlength
    } else {
        (max_value + 1).max(c.minlength)
    };
    let mut idx = Vec::new();
    let mut out = Vec::new();
    for (b, m) in per_batch.iter().enumerate() {
        for (&v, &x) in m {
            if two_d {
                idx.push(b as i64);
            }
            idx.push(v);
            out.push(W::from_f64(x));
        }
    }
    let shape = if two_d {
        vec![batches as i64, size]
    } else {
        vec![size]
    };
    Ok((idx, vector(out), shape))
}

/// Counts of each value (per batch row when the values are 2-D) as a sparse tensor.
fn count_sparse_output(ctx: &mut OpContext<'_>, sparse_input: bool, c: Counting) -> Result<()> {
    let (values, batch_of, batches, two_d, weights) = if sparse_input {
        let sp = read_sparse(ctx, 0)?;
        if sp.rank == 0 || sp.rank > 2 {
            bail!(
                invalid_argument,
                "Input indices must be a 2-dimensional tensor with 1 or 2 columns; got {} columns",
                sp.rank
            );
        }
        let two_d = sp.rank == 2;
        let batches = if two_d {
            sp.shape[0].max(0) as usize
        } else {
            1
        };
        let mut rows = Vec::with_capacity(sp.n);
        for i in 0..sp.n {
            let r = if two_d { sp.row(i)[0] } else { 0 };
            if r < 0 || r as usize >= batches.max(1) {
                bail!(
                    invalid_argument,
                    "Indices must be within the dense shape: indices[{i}] = [{}] for dense_shape {}",
                    index_text(sp.row(i)),
                    shape_text(&sp.shape)
                );
            }
            rows.push(r as usize);
        }
        (
            sp.values.to_i64_vec()?,
            rows,
            batches.max(1),
            two_d,
            ctx.input(3)?,
        )
    } else {
        let v = ctx.input(0)?;
        if v.rank() == 0 || v.rank() > 2 {
            bail!(
                invalid_argument,
                "Input must be a 1 or 2-dimensional tensor. Got: {}",
                v.shape()
            );
        }
        let two_d = v.rank() == 2;
        let (batches, width) = if two_d {
            (v.dims()[0], v.dims()[1])
        } else {
            (1, v.dims()[0])
        };
        let rows = (0..v.num_elements()).map(|k| k / width.max(1)).collect();
        (v.to_i64_vec()?, rows, batches, two_d, ctx.input(1)?)
    };
    let (idx, vals, shape) = with_real!(weights.data(),
        w => count_typed(w, &values, &batch_of, batches, two_d, c)?,
        _ => return Err(unsupported("CountSparseOutput", weights.dtype())));
    let rank = if two_d { 2 } else { 1 };
    ctx.output(indices_tensor(idx, rank)?);
    ctx.output(vals);
    ctx.output(vector(shape));
    Ok(())
}

/// One feature of a crossed column: a string, or an integer (int32/int64 inputs).
#[derive(Clone)]
enum Cell {
    Str(Vec<u8>),
    Int(i64),
}

impl Cell {
    /// The feature as it appears in a string cross (integers in decimal).
    fn text(&self) -> Vec<u8> {
        match self {
            Cell::Str(s) => s.clone(),
            Cell::Int(v) => v.to_string().into_bytes(),
        }
    }

    /// The feature as a hashed cross takes it: a string's FarmHash fingerprint, an integer as is.
    fn hash(&self) -> u64 {
        match self {
            Cell::Str(s) => farmhash::fingerprint64(s),
            Cell::Int(v) => *v as u64,
        }
    }
}

fn cells(t: &Tensor) -> Result<Vec<Cell>> {
    match t.dtype() {
        DType::String => Ok(t
            .as_slice::<Vec<u8>>()?
            .iter()
            .cloned()
            .map(Cell::Str)
            .collect()),
        DType::Int64 | DType::Int32 => Ok(t.to_i64_vec()?.into_iter().map(Cell::Int).collect()),
        d => Err(Error::invalid_argument(format!(
            "SparseCross inputs must be int64 or string, got {}",
            d.name()
        ))),
    }
}

/// One crossed column: its features in each batch row.
fn column_features(
    ctx: &OpContext<'_>,
    i: usize,
    n: usize,
    sparse: bool,
    batch: usize,
) -> Result<Vec<Vec<Cell>>> {
    let mut out = vec![Vec::new(); batch];
    if sparse {
        let (ind, vals) = (ctx.input(i)?, ctx.input(n + i)?);
        if ind.rank() != 2
            || ind.dims()[1] == 0
            || vals.rank() != 1
            || ind.dims()[0] != vals.dims()[0]
        {
            bail!(
                invalid_argument,
                "Sparse input {i} needs indices [N, rank] and values [N], got {} and {}",
                ind.shape(),
                vals.shape()
            );
        }
        let idx = ind.to_i64_vec()?;
        let rank = ind.dims()[1];
        for (k, s) in cells(vals)?.into_iter().enumerate() {
            let r = idx[k * rank];
            if r < 0 || r as usize >= batch {
                bail!(
                    invalid_argument,
                    "Invalid index in input {i}: batch row {r} out of range [0, {batch})"
                );
            }
            out[r as usize].push(s);
        }
    } else {
        let t = ctx.input(i)?;
        if t.rank() != 2 || t.dims()[0] != batch {
            bail!(
                invalid_argument,
                "Dense inputs should be matrices with {batch} rows, got shape {}",
                t.shape()
            );
        }
        let w = t.dims()[1].max(1);
        for (k, s) in cells(t)?.into_iter().enumerate() {
            out[k / w].push(s);
        }
    }
    Ok(out)
}

/// How a hashed cross combines its features (`hashed_output` of `SparseCross`).
#[derive(Clone, Copy)]
struct Hashing {
    num_buckets: i64,
    hash_key: u64,
}

/// TensorFlow's `FingerprintCat64`: folds fingerprint `fp2` into `fp1`.
fn fingerprint_cat64(fp1: u64, fp2: u64) -> u64 {
    const MUL: u64 = 0xc6a4_a793_5bd1_e995;
    let shift_mix = |v: u64| v ^ (v >> 47);
    let mut r = fp1 ^ MUL;
    r ^= shift_mix(fp2.wrapping_mul(MUL)).wrapping_mul(MUL);
    r = r.wrapping_mul(MUL);
    r = shift_mix(r).wrapping_mul(MUL);
    shift_mix(r)
}

/// Appends the crosses of batch row `b` of the columns `cols` (every
/// combination of one feature per column, the last column varying fastest)
/// to `strs` (joined by `sep`) or, when `hashing`, to `hashes`; returns how
/// many there were (none when a column has no feature in the row).
fn cross_row(
    cols: &[Vec<Vec<Cell>>],
    b: usize,
    sep: &[u8],
    hashing: Option<Hashing>,
    strs: &mut Vec<Vec<u8>>,
    hashes: &mut Vec<i64>,
) -> i64 {
    let counts: Vec<usize> = cols.iter().map(|c| c[b].len()).collect();
    if cols.is_empty() || counts.contains(&0) {
        return 0;
    }
    let mut pick = vec![0usize; cols.len()];
    let mut k = 0i64;
    loop {
        match hashing {
            Some(h) => {
                let mut fp = h.hash_key;
                for (c, &p) in pick.iter().enumerate() {
                    fp = fingerprint_cat64(fp, cols[c][b][p].hash());
                }
                let m = if h.num_buckets > 0 {
                    h.num_buckets as u64
                } else {
                    i64::MAX as u64
                };
                hashes.push((fp % m) as i64);
            }
            None => {
                let mut s = Vec::new();
                for (c, &p) in pick.iter().enumerate() {
                    if c > 0 {
                        s.extend_from_slice(sep);
                    }
                    s.extend_from_slice(&cols[c][b][p].text());
                }
                strs.push(s);
            }
        }
        k += 1;
        // Advance like an odometer, the last column fastest; done when the first wraps.
        let mut c = cols.len();
        loop {
            c -= 1;
            pick[c] += 1;
            if pick[c] < counts[c] {
                break;
            }
            pick[c] = 0;
            if c == 0 {
                return k;
            }
        }
    }
}

/// Crosses the `n` sparse and the dense columns among the first `end` inputs:
/// for each batch row, every combination of one feature per column (the last
/// column varying fastest), joined by `sep` or hashed.
fn cross(
    ctx: &mut OpContext<'_>,
    n: usize,
    end: usize,
    sep: Option<Vec<u8>>,
    hashing: Option<Hashing>,
) -> Result<()> {
    let sep = sep.unwrap_or_else(|| b"_X_".to_vec());
    let n_dense = end.saturating_sub(3 * n);
    let batch = if n > 0 {
        ctx.input(2 * n)?
            .to_i64_vec()?
            .first()
            .copied()
            .unwrap_or(0) as usize
    } else if n_dense > 0 {
        ctx.input(0)?.dims()[0]
    } else {
        0
    };
    let mut cols = Vec::with_capacity(n + n_dense);
    for i in 0..n {
        cols.push(column_features(ctx, i, n, true, batch)?);
    }
    for i in 0..n_dense {
        cols.push(column_features(ctx, 3 * n + i, n, false, batch)?);
    }
    let mut idx = Vec::new();
    let mut strs: Vec<Vec<u8>> = Vec::new();
    let mut hashes: Vec<i64> = Vec::new();
    let mut width = 0;
    for b in 0..batch {
        let k = cross_row(&cols, b, &sep, hashing, &mut strs, &mut hashes);
        for j in 0..k {
            idx.extend_from_slice(&[b as i64, j]);
        }
        width = width.max(k);
    }
    ctx.output(indices_tensor(idx, 2)?);
    if hashing.is_some() {
        ctx.output(vector(hashes));
    } else {
        ctx.output(vector(strs));
    }
    ctx.output(vector(vec![batch as i64, width]));
    Ok(())
}

/// How `RaggedCross` finds its inputs: `nr` ragged (values, then splits),
/// `ns` sparse (indices, values, shapes), then `nd` dense, crossed in
/// `order` (one of `R`, `S`, `D` per feature).
struct RaggedCrossSpec {
    nr: usize,
    ns: usize,
    nd: usize,
    order: Vec<u8>,
    hashing: Option<Hashing>,
    splits_type: DType,
}

/// `RaggedCross`: the feature cross of rank-2 ragged, sparse and dense
/// inputs, as a ragged tensor (values and row splits).
fn ragged_cross(ctx: &mut OpContext<'_>, spec: &RaggedCrossSpec) -> Result<()> {
    let (nr, ns, nd) = (spec.nr, spec.ns, spec.nd);
    ensure!(
        ctx.num_inputs() == 2 * nr + 3 * ns + nd,
        invalid_argument,
        "RaggedCross: expected {} inputs, got {}",
        2 * nr + 3 * ns + nd,
        ctx.num_inputs()
    );
    ensure!(
        spec.order.len() == nr + ns + nd
            && spec.order.iter().filter(|&&c| c == b'R').count() == nr
            && spec.order.iter().filter(|&&c| c == b'S').count() == ns,
        invalid_argument,
        "RaggedCross: invalid input_order {:?}",
        String::from_utf8_lossy(&spec.order)
    );
    // Every input's batch size must agree.
    let mut sizes = Vec::new();
    for i in 0..nr {
        let s = ctx.input(nr + i)?;
        ensure!(
            s.rank() == 1 && s.dims()[0] >= 1,
            invalid_argument,
            "RaggedCross: ragged_row_splits[{i}] must be a non-empty vector, got shape {}",
            s.shape()
        );
        sizes.push(s.dims()[0] as i64 - 1);
    }
    for i in 0..ns {
        let shape = ctx.input(2 * nr + 2 * ns + i)?.to_i64_vec()?;
        ensure!(
            shape.len() == 2,
            invalid_argument,
            "RaggedCross: tf.ragged.cross only supports inputs with rank=2 (sparse input {i} has shape {:?})",
            shape
        );
        sizes.push(shape[0]);
    }
    for i in 0..nd {
        let t = ctx.input(2 * nr + 3 * ns + i)?;
        ensure!(
            t.rank() == 2,
            invalid_argument,
            "RaggedCross: tf.ragged.cross only supports inputs with rank=2 (dense input {i} has shape {})",
            t.shape()
        );
        sizes.push(t.dims()[0] as i64);
    }
    let batch = sizes.first().copied().unwrap_or(0);
    ensure!(
        sizes.iter().all(|&s| s == batch),
        invalid_argument,
        "inputs must all have the same batch dimension size."
    );
    let batch = batch.max(0) as usize;
    let mut cols = Vec::with_capacity(spec.order.len());
    let (mut r, mut s, mut d) = (0, 0, 0);
    for &kind in &spec.order {
        let mut col = vec![Vec::new(); batch];
        match kind {
            b'R' => {
                let (vals, splits) = (ctx.input(r)?, ctx.input(nr + r)?);
                let feats = cells(vals)?;
                let sp = splits.to_i64_vec()?;
                if sp[0] != 0
                    || sp.windows(2).any(|w| w[0] > w[1])
                    || sp[batch] as usize != feats.len()
                {
                    bail!(
                        invalid_argument,
                        "RaggedCross: invalid ragged_row_splits[{r}] for {} values",
                        feats.len()
                    );
                }
                for (b, row) in col.iter_mut().enumerate() {
                    row.extend_from_slice(&feats[sp[b] as usize..sp[b + 1] as usize]);
                }
                r += 1;
            }
            b'S' => {
                let ind = ctx.input(2 * nr + s)?;
                let vals = ctx.input(2 * nr + ns + s)?;
                ensure!(
                    ind.rank() == 2 && ind.dims()[1] == 2 && ind.dims()[0] == vals.num_elements(),
                    invalid_argument,
                    "RaggedCross: sparse input {s} needs indices [N, 2] and values [N], got {} and {}",
                    ind.shape(),
                    vals.shape()
                );
                let idx = ind.to_i64_vec()?;
                for (k, f) in cells(vals)?.into_iter().enumerate() {
                    let row = idx[2 * k];
                    ensure!(
                        row >= 0 && (row as usize) < batch,
                        invalid_argument,
                        "RaggedCross: sparse input {s} has batch row {row} out of range [0, {batch})"
                    );
                    col[row as usize].push(f);
                }
                s += 1;
            }
            b'D' => {
                let t = ctx.input(2 * nr + 3 * ns + d)?;
                let w = t.dims()[1];
                for (k, f) in cells(t)?.into_iter().enumerate() {
                    col[k / w].push(f);
                }
                d += 1;
            }
            c => bail!(
                invalid_argument,
                "RaggedCross: unexpected {:?} in input_order",
                c as char
            ),
        }
        cols.push(col);
    }
    let mut strs: Vec<Vec<u8>> = Vec::new();
    let mut hashes: Vec<i64> = Vec::new();
    let mut splits = Vec::with_capacity(batch + 1);
    splits.push(0i64);
    for b in 0..batch {
        let k = cross_row(&cols, b, b"_X_", spec.hashing, &mut strs, &mut hashes);
        splits.push(splits[b] + k);
    }
    if spec.hashing.is_some() {
        ctx.output(vector(hashes));
    } else {
        ctx.output(vector(strs));
    }
    if spec.splits_type == DType::Int32 {
        ensure!(
            splits[batch] <= i32::MAX as i64,
            invalid_argument,
            "RaggedCross: the output has more values than int32 row splits can index"
        );
        ctx.output(vector(
            splits.into_iter().map(|v| v as i32).collect::<Vec<_>>(),
        ));
    } else {
        ctx.output(vector(splits));
    }
    Ok(())
}

fn list_diff_typed<T: Element + std::hash::Hash + Eq>(
    x: &[T],
    y: &Tensor,
    out_idx: DType,
) -> Result<(Tensor, Tensor)> {
    let drop: std::collections::HashSet<&T> = y.as_slice::<T>()?.iter().collect();
    let keep: Vec<usize> = (0..x.len()).filter(|&i| !drop.contains(&x[i])).collect();
    let idx = match out_idx {
        DType::Int64 => vector(keep.iter().map(|&i| i as i64).collect()),
        _ => vector(keep.iter().map(|&i| i as i32).collect()),
    };
    Ok((take(x, &keep), idx))
}

/// `ListDiff`: the entries of `x` not in `y`, and their positions in `x`.
fn list_diff(ctx: &mut OpContext<'_>, out_idx: DType) -> Result<()> {
    let (x, y) = (ctx.input(0)?, ctx.input(1)?);
    if x.rank() != 1 || y.rank() != 1 {
        bail!(
            invalid_argument,
            "x and y should be 1D, got shapes {} and {}",
            x.shape(),
            y.shape()
        );
    }
    if x.dtype() != y.dtype() {
        return Err(unsupported("ListDiff", y.dtype()));
    }
    let (out, idx) = match x.data() {
        ferroflow_tensor::Data::I32(v) => list_diff_typed(v, y, out_idx)?,
        ferroflow_tensor::Data::I64(v) => list_diff_typed(v, y, out_idx)?,
        ferroflow_tensor::Data::I8(v) => list_diff_typed(v, y, out_idx)?,
        ferroflow_tensor::Data::I16(v) => list_diff_typed(v, y, out_idx)?,
        ferroflow_tensor::Data::U8(v) => list_diff_typed(v, y, out_idx)?,
        ferroflow_tensor::Data::U16(v) => list_diff_typed(v, y, out_idx)?,
        ferroflow_tensor::Data::U32(v) => list_diff_typed(v, y, out_idx)?,
        ferroflow_tensor::Data::U64(v) => list_diff_typed(v, y, out_idx)?,
        ferroflow_tensor::Data::Str(v) => list_diff_typed(v, y, out_idx)?,
        _ => return Err(unsupported("ListDiff", x.dtype())),
    };
    ctx.output(out);
    ctx.output(idx);
    Ok(())
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "SparseToDense",
        factory(|init| {
            let validate = init.node.attrs.bool_or("validate_indices", true)?;
            boxed(move |ctx| sparse_to_dense(ctx, validate))
        }),
    );
    reg(
        "SparseTensorDenseMatMul",
        factory(|init| {
            let adj_a = init.node.attrs.bool_or("adjoint_a", false)?;
            let adj_b = init.node.attrs.bool_or("adjoint_b", false)?;
            boxed(move |ctx| dense_matmul(ctx, adj_a, adj_b))
        }),
    );
    reg("SparseReorder", factory(|_| boxed(reorder)));
    reg(
        "ListDiff",
        factory(|init| {
            let out_idx = init.node.attrs.dtype_or("out_idx", DType::Int32)?;
            boxed(move |ctx| list_diff(ctx, out_idx))
        }),
    );
    reg("SparseReshape", factory(|_| boxed(reshape)));
    reg(
        "SparseConcat",
        factory(|init| {
            let dim = init.node.attrs.int("concat_dim")?;
            boxed(move |ctx| concat(ctx, dim))
        }),
    );
    reg("SparseAdd", factory(|_| boxed(sparse_add)));
    reg("SparseAddGrad", factory(|_| boxed(sparse_add_grad)));
    for (name, max, sparse_out) in [
        ("SparseReduceSum", false, false),
        ("SparseReduceMax", true, false),
        ("SparseReduceSumSparse", false, true),
        ("SparseReduceMaxSparse", true, true),
    ] {
        reg(
            name,
            factory(move |init| {
                let keep = init.node.attrs.bool_or("keep_dims", false)?;
                boxed(move |ctx| sparse_reduce(ctx, max, sparse_out, keep))
            }),
        );
    }
    reg("SparseFillEmptyRows", factory(|_| boxed(fill_empty_rows)));
    reg(
        "SparseFillEmptyRowsGrad",
        factory(|_| boxed(fill_empty_rows_grad)),
    );
    reg(
        "SparseSplit",
        factory(|init| {
            let k = init.node.attrs.int("num_split")?.max(0) as usize;
            boxed(move |ctx| split(ctx, k))
        }),
    );
    reg("SparseSlice", factory(|_| boxed(slice)));
    reg("SparseSliceGrad", factory(|_| boxed(slice_grad)));
    reg("SparseSoftmax", factory(|_| boxed(softmax)));
    reg(
        "SparseSparseMaximum",
        factory(|_| boxed(|ctx| sparse_sparse(ctx, true))),
    );
    reg(
        "SparseSparseMinimum",
        factory(|_| boxed(|ctx| sparse_sparse(ctx, false))),
    );
    for (name, op) in [
        ("SparseDenseCwiseMul", Cwise::Mul),
        ("SparseDenseCwiseDiv", Cwise::Div),
        ("SparseDenseCwiseAdd", Cwise::Add),
    ] {
        reg(
            name,
            factory(move |_| boxed(move |ctx| dense_cwise(ctx, op))),
        );
    }
    reg("SparseTensorDenseAdd", factory(|_| boxed(tensor_dense_add)));
    for (name, op, with_num) in [
        ("SparseSegmentSum", Seg::Sum, false),
        ("SparseSegmentMean", Seg::Mean, false),
        ("SparseSegmentSqrtN", Seg::SqrtN, false),
        ("SparseSegmentSumWithNumSegments", Seg::Sum, true),
        ("SparseSegmentMeanWithNumSegments", Seg::Mean, true),
        ("SparseSegmentSqrtNWithNumSegments", Seg::SqrtN, true),
    ] {
        reg(
            name,
            factory(move |_| boxed(move |ctx| sparse_segment(ctx, op, with_num))),
        );
    }
    for (name, op) in [
        ("SparseSegmentSumGrad", Seg::Sum),
        ("SparseSegmentMeanGrad", Seg::Mean),
        ("SparseSegmentSqrtNGrad", Seg::SqrtN),
    ] {
        reg(
            name,
            factory(move |_| boxed(move |ctx| sparse_segment_grad(ctx, op))),
        );
    }
    for (name, op) in [
        ("SparseSegmentSumGradV2", Seg::Sum),
        ("SparseSegmentMeanGradV2", Seg::Mean),
        ("SparseSegmentSqrtNGradV2", Seg::SqrtN),
    ] {
        reg(
            name,
            factory(move |_| boxed(move |ctx| sparse_segment_grad_v2(ctx, op))),
        );
    }
    for (name, sparse_input) in [
        ("DenseCountSparseOutput", false),
        ("SparseCountSparseOutput", true),
    ] {
        reg(
            name,
            factory(move |init| {
                let a = &init.node.attrs;
                let c = Counting {
                    minlength: a.int_or("minlength", -1)?,
                    maxlength: a.int_or("maxlength", -1)?,
                    binary: a.bool_or("binary_output", false)?,
                };
                boxed(move |ctx| count_sparse_output(ctx, sparse_input, c))
            }),
        );
    }
    reg(
        "SparseCross",
        factory(|init| {
            let a = &init.node.attrs;
            let n = a.int("N")? as usize;
            let hashing = if a.bool_or("hashed_output", false)? {
                Some(Hashing {
                    num_buckets: a.int_or("num_buckets", 0)?,
                    hash_key: a.int_or("hash_key", 0)? as u64,
                })
            } else {
                None
            };
            boxed(move |ctx| {
                let end = ctx.num_inputs();
                cross(ctx, n, end, None, hashing)
            })
        }),
    );
    reg(
        "RaggedCross",
        factory(|init| {
            let a = &init.node.attrs;
            let hashing = if a.bool_or("hashed_output", false)? {
                Some(Hashing {
                    num_buckets: a.int_or("num_buckets", 0)?,
                    hash_key: a.int_or("hash_key", 0)? as u64,
                })
            } else {
                None
            };
            let spec = RaggedCrossSpec {
                nr: a.dtypes("ragged_values_types")?.len(),
                ns: a.int_or("Nsparse", 0)?.max(0) as usize,
                nd: a.dtypes("dense_types")?.len(),
                order: a.str_or("input_order", "")?.into_bytes(),
                hashing,
                splits_type: a.dtype_or("out_row_splits_type", DType::Int64)?,
            };
            boxed(move |ctx| ragged_cross(ctx, &spec))
        }),
    );
    reg(
        "SparseCrossV2",
        factory(|init| {
            let n = init.node.attrs.int("N")? as usize;
            boxed(move |ctx| {
                let last = ctx.num_inputs() - 1;
                let sep = ctx
                    .input(last)?
                    .as_slice::<Vec<u8>>()?
                    .first()
                    .cloned()
                    .unwrap_or_default();
                // The separator is the last input, not a dense column.
                cross(ctx, n, last, Some(sep), None)
            })
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows in a small box, with repeats, in a scrambled order.
    fn scrambled_rows(n: usize, shape: &[i64]) -> Vec<i64> {
        let mut state = 12345u64;
        let mut out = Vec::with_capacity(n * shape.len());
        for _ in 0..n {
            for &d in shape {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                out.push(((state >> 33) % d as u64) as i64);
            }
        }
        out
    }

    #[test]
    fn key_sort_agrees_with_row_comparison_and_is_stable() {
        let shape = [3i64, 4, 5];
        let idx = scrambled_rows(200, &shape);
        let by_key = sort_perm(&idx, 3, 200, Some(&shape));
        let by_rows = sort_perm(&idx, 3, 200, None);
        assert_eq!(by_key, by_rows);
        for w in by_key.windows(2) {
            let (a, b) = (&idx[w[0] * 3..w[0] * 3 + 3], &idx[w[1] * 3..w[1] * 3 + 3]);
            assert!(a < b || (a == b && w[0] < w[1]));
        }
    }

    #[test]
    fn linear_keys_refuse_out_of_bounds_rows_and_overflow() {
        assert_eq!(linear_keys(&[0, 1, 2, 3], 2, &[3, 4]), Some(vec![1, 11]));
        assert_eq!(linear_keys(&[0, 4], 2, &[3, 4]), None);
        assert_eq!(linear_keys(&[-1, 0], 2, &[3, 4]), None);
        assert_eq!(linear_keys(&[0, 0], 2, &[i64::MAX, 4]), None);
        // Out-of-bounds rows still sort, by comparison.
        assert_eq!(sort_perm(&[5, 0, 0, 9], 2, 2, Some(&[3, 4])), vec![1, 0]);
    }

    #[test]
    fn order_check_names_the_first_bad_index() {
        assert!(check_order(&[0, 1, 1, 0, 1, 2], 2).is_ok());
        let e = check_order(&[1, 0, 0, 1], 2).unwrap_err();
        assert!(e
            .message()
            .starts_with("indices[1] = [0,1] is out of order"));
        let e = check_order(&[0, 1, 0, 1], 2).unwrap_err();
        assert_eq!(e.message(), "indices[1] = [0,1] is repeated");
        let e = check_bounds(&[0, 1, 2, 0], 2, &[2, 2]).unwrap_err();
        assert_eq!(
            e.message(),
            "indices[1] = [2,0] is out of bounds: need 0 <= index < [2,2]"
        );
    }

    #[test]
    fn fingerprint_cat_folds_in_order() {
        // FingerprintCat64 is not symmetric: a cross of (a, b) differs from (b, a).
        let (a, b) = (farmhash::fingerprint64(b"a"), farmhash::fingerprint64(b"b"));
        assert_ne!(
            fingerprint_cat64(fingerprint_cat64(7, a), b),
            fingerprint_cat64(fingerprint_cat64(7, b), a)
        );
        assert_eq!(farmhash::fingerprint64(b""), 0x9ae1_6a3b_2f90_404f);
    }
}
