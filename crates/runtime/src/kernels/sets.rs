//! Kernels of `tf.sets` (`ferroflow_graph::ops::sets`): the sets are the
//! values along the last dimension of a dense or sparse tensor, one set per
//! index of the other dimensions (its group). Results are sparse: each
//! group's members in ascending order, the last dimension of the dense
//! shape as long as the largest result set.

use super::boxed;
use crate::kernel::{factory, KernelFactory, OpContext};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::{bail, ensure, DType, Data, Result, Tensor};
use std::collections::BTreeMap;

/// An operand's values as set members: integers widened to `i64` (they
/// compare as integers), strings as the tensor's bytes (they compare
/// bytewise, and only the result's members are copied).
enum Members<'a> {
    Ints(Vec<i64>),
    Bytes(Vec<&'a [u8]>),
}

/// The non-empty sets of an operand by group index (row-major order), each
/// sorted and without repeats.
type Sets<K> = Vec<(Vec<i64>, Vec<K>)>;

fn sorted_set<K: Ord>(mut v: Vec<K>) -> Vec<K> {
    v.sort_unstable();
    v.dedup();
    v
}

fn members<'a>(op: &str, t: &'a Tensor) -> Result<Members<'a>> {
    fn ints<T: Copy + Into<i64>>(v: &[T]) -> Members<'static> {
        Members::Ints(v.iter().map(|&x| x.into()).collect())
    }
    Ok(match t.data() {
        Data::I8(v) => ints(v),
        Data::I16(v) => ints(v),
        Data::I32(v) => ints(v),
        Data::I64(v) => Members::Ints(v.to_vec()),
        Data::U8(v) => ints(v),
        Data::U16(v) => ints(v),
        Data::Str(v) => Members::Bytes(v.iter().map(Vec::as_slice).collect()),
        _ => bail!(
            invalid_argument,
            "{op}: invalid set values of dtype {}: tf.sets takes int8, int16, int32, int64, uint8, uint16 or string",
            t.dtype()
        ),
    })
}

/// A vector of `dtype` (an integer type tf.sets takes) from `i64` members.
fn from_ints(dtype: DType, v: Vec<i64>) -> Result<Tensor> {
    let n = vec![v.len()];
    fn narrow<T>(v: Vec<i64>, f: impl Fn(i64) -> T) -> Vec<T> {
        v.into_iter().map(f).collect()
    }
    Ok(match dtype {
        DType::Int8 => Tensor::from_vec(n, narrow(v, |x| x as i8))?,
        DType::Int16 => Tensor::from_vec(n, narrow(v, |x| x as i16))?,
        DType::Int32 => Tensor::from_vec(n, narrow(v, |x| x as i32))?,
        DType::UInt8 => Tensor::from_vec(n, narrow(v, |x| x as u8))?,
        DType::UInt16 => Tensor::from_vec(n, narrow(v, |x| x as u16))?,
        _ => Tensor::from_vec(n, v)?,
    })
}

fn shape_text(s: &[i64]) -> String {
    let parts: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// The sets of a dense tensor whose values are `values`: one per index of
/// its leading dimensions.
fn dense_sets<K: Ord + Clone>(op: &str, t: &Tensor, values: Vec<K>) -> Result<(Vec<i64>, Sets<K>)> {
    ensure!(
        t.rank() >= 2,
        invalid_argument,
        "{op}: Invalid rank {}.",
        t.rank()
    );
    let dims = t.dims();
    let group: Vec<i64> = dims[..dims.len() - 1].iter().map(|&d| d as i64).collect();
    let last = dims[dims.len() - 1];
    let mut sets = Sets::new();
    if let Some(rows) = values.len().checked_div(last) {
        let mut values = values.into_iter();
        for row in 0..rows {
            let chunk: Vec<K> = values.by_ref().take(last).collect();
            let mut idx = vec![0i64; group.len()];
            let mut r = row as i64;
            for d in (0..group.len()).rev() {
                idx[d] = r % group[d];
                r /= group[d];
            }
            sets.push((idx, sorted_set(chunk)));
        }
    }
    Ok((group, sets))
}

/// The sets of the sparse tensor in inputs `i..i + 3` whose values are
/// `values`, its indices checked (in bounds, in row-major order, not
/// repeated) when `validate`.
fn sparse_sets<K: Ord + Clone>(
    op: &str,
    ctx: &OpContext<'_>,
    i: usize,
    validate: bool,
    values: Vec<K>,
) -> Result<(Vec<i64>, Sets<K>)> {
    let (ind, vals, shp) = (ctx.input(i)?, ctx.input(i + 1)?, ctx.input(i + 2)?);
    ensure!(
        ind.rank() == 2 && vals.rank() == 1 && shp.rank() == 1,
        invalid_argument,
        "{op}: a sparse set needs [N, rank] indices, [N] values and a [rank] shape, got shapes {}, {} and {}",
        ind.shape(),
        vals.shape(),
        shp.shape()
    );
    let shape = shp.to_i64_vec()?;
    let rank = shape.len();
    ensure!(rank >= 2, invalid_argument, "{op}: Invalid rank {rank}.");
    let n = vals.num_elements();
    ensure!(
        ind.dims() == [n, rank],
        invalid_argument,
        "{op}: indices of shape {} do not fit {n} values of rank {rank}",
        ind.shape()
    );
    ensure!(
        values.len() == n,
        internal,
        "{op}: {} members for {n} values",
        values.len()
    );
    let idx = ind.to_i64_vec()?;
    let mut by_group: BTreeMap<Vec<i64>, Vec<K>> = BTreeMap::new();
    for (k, value) in values.into_iter().enumerate() {
        let row = &idx[k * rank..(k + 1) * rank];
        if validate {
            ensure!(
                row.iter().zip(&shape).all(|(&x, &d)| x >= 0 && x < d),
                invalid_argument,
                "{op}: indices[{k}] = {} is out of bounds: need 0 <= index < {}",
                shape_text(row),
                shape_text(&shape)
            );
            if k > 0 {
                let prev = &idx[(k - 1) * rank..k * rank];
                ensure!(
                    prev != row,
                    invalid_argument,
                    "{op}: indices[{k}] = {} is repeated",
                    shape_text(row)
                );
                ensure!(
                    prev < row,
                    invalid_argument,
                    "{op}: indices[{k}] = {} is out of order. Many sparse ops require sorted indices.",
                    shape_text(row)
                );
            }
        }
        by_group
            .entry(row[..rank - 1].to_vec())
            .or_default()
            .push(value);
    }
    let sets = by_group
        .into_iter()
        .map(|(g, v)| (g, sorted_set(v)))
        .collect();
    Ok((shape[..rank - 1].to_vec(), sets))
}

/// `SetSize`: each set's number of distinct members (int32).
fn set_size(ctx: &mut OpContext<'_>, validate: bool) -> Result<()> {
    let sizes = match members("SetSize", ctx.input(1)?)? {
        Members::Ints(v) => set_sizes(ctx, validate, v)?,
        Members::Bytes(v) => set_sizes(ctx, validate, v)?,
    };
    ctx.output(sizes);
    Ok(())
}

/// [`set_size`]'s result for the sparse operand's `values`.
fn set_sizes<K: Ord + Clone>(
    ctx: &OpContext<'_>,
    validate: bool,
    values: Vec<K>,
) -> Result<Tensor> {
    let (group, sets) = sparse_sets("SetSize", ctx, 0, validate, values)?;
    let dims: Vec<usize> = group.iter().map(|&d| d.max(0) as usize).collect();
    let total: usize = dims.iter().product();
    let mut out = vec![0i32; total];
    for (idx, set) in &sets {
        if set.is_empty() {
            continue;
        }
        let mut flat = 0usize;
        for (d, &x) in idx.iter().enumerate() {
            flat = flat * dims[d] + x as usize;
        }
        out[flat] = set.len() as i32;
    }
    Tensor::from_vec(dims, out)
}

/// `op` of two sorted sets without repeats, by one merge pass.
fn merge<K: Ord + Clone>(x: &[K], y: &[K], op: SetOp) -> Vec<K> {
    let (x, y, op) = match op {
        SetOp::BMinusA => (y, x, SetOp::AMinusB),
        other => (x, y, other),
    };
    let (keep_x, keep_y, keep_both) = match op {
        SetOp::AMinusB => (true, false, false),
        SetOp::Intersection => (false, false, true),
        _ => (true, true, true),
    };
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => {
                if keep_x {
                    out.push(x[i].clone());
                }
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                if keep_y {
                    out.push(y[j].clone());
                }
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                if keep_both {
                    out.push(x[i].clone());
                }
                i += 1;
                j += 1;
            }
        }
    }
    if keep_x {
        out.extend_from_slice(&x[i..]);
    }
    if keep_y {
        out.extend_from_slice(&y[j..]);
    }
    out
}

#[derive(Clone, Copy)]
enum SetOp {
    AMinusB,
    BMinusA,
    Intersection,
    Union,
}

fn set_op(name: &str) -> Result<SetOp> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "a-b" => SetOp::AMinusB,
        "b-a" => SetOp::BMinusA,
        "intersection" => SetOp::Intersection,
        "union" => SetOp::Union,
        _ => bail!(invalid_argument, "Invalid set_operation {name}."),
    })
}

/// Which form each operand takes.
#[derive(Clone, Copy)]
enum Form {
    DenseDense,
    DenseSparse,
    SparseSparse,
}

fn set_operation(ctx: &mut OpContext<'_>, form: Form, op: SetOp, validate: bool) -> Result<()> {
    let name = match form {
        Form::DenseDense => "DenseToDenseSetOperation",
        Form::DenseSparse => "DenseToSparseSetOperation",
        Form::SparseSparse => "SparseToSparseSetOperation",
    };
    // The inputs that hold each operand's values.
    let (first, second) = match form {
        Form::DenseDense => (0, 1),
        Form::DenseSparse => (0, 2),
        Form::SparseSparse => (1, 4),
    };
    let dtype = ctx.input(first)?.dtype();
    let dtype2 = ctx.input(second)?.dtype();
    ensure!(
        dtype == dtype2,
        invalid_argument,
        "{name}: the two sets have different dtypes, {dtype} and {dtype2}"
    );
    let a = members(name, ctx.input(first)?)?;
    let b = members(name, ctx.input(second)?)?;
    let (indices, values, shape) = match (a, b) {
        (Members::Ints(a), Members::Ints(b)) => {
            let (indices, values, shape) = operate(ctx, name, form, op, validate, a, b)?;
            (indices, from_ints(dtype, values)?, shape)
        }
        (Members::Bytes(a), Members::Bytes(b)) => {
            let (indices, values, shape) = operate(ctx, name, form, op, validate, a, b)?;
            let values: Vec<Vec<u8>> = values.into_iter().map(<[u8]>::to_vec).collect();
            (
                indices,
                Tensor::from_vec(vec![values.len()], values)?,
                shape,
            )
        }
        _ => bail!(
            internal,
            "{name}: {dtype} values read as two kinds of member"
        ),
    };
    ctx.output(indices);
    ctx.output(values);
    ctx.output(shape);
    Ok(())
}

/// [`set_operation`] on operands whose values are `a` and `b`: the result's
/// sparse indices, members and dense shape.
fn operate<K: Ord + Clone>(
    ctx: &OpContext<'_>,
    name: &str,
    form: Form,
    op: SetOp,
    validate: bool,
    a: Vec<K>,
    b: Vec<K>,
) -> Result<(Tensor, Vec<K>, Tensor)> {
    let ((g1, a), (g2, b)) = match form {
        Form::DenseDense => (
            dense_sets(name, ctx.input(0)?, a)?,
            dense_sets(name, ctx.input(1)?, b)?,
        ),
        Form::DenseSparse => (
            dense_sets(name, ctx.input(0)?, a)?,
            sparse_sets(name, ctx, 1, validate, b)?,
        ),
        Form::SparseSparse => (
            sparse_sets(name, ctx, 0, validate, a)?,
            sparse_sets(name, ctx, 3, validate, b)?,
        ),
    };
    ensure!(
        g1 == g2,
        invalid_argument,
        "{name}: the sets' group shapes (all dimensions but the last) differ: {} vs {}",
        shape_text(&g1),
        shape_text(&g2)
    );
    let mut indices = Vec::new();
    let mut values = Vec::new();
    let mut widest = 0usize;
    let empty: Vec<K> = Vec::new();
    let (mut i, mut j) = (0, 0);
    // Both lists are in group order: walk them together.
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (g, x, y) = match order {
            std::cmp::Ordering::Less => {
                i += 1;
                (&a[i - 1].0, &a[i - 1].1, &empty)
            }
            std::cmp::Ordering::Greater => {
                j += 1;
                (&b[j - 1].0, &empty, &b[j - 1].1)
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
                (&a[i - 1].0, &a[i - 1].1, &b[j - 1].1)
            }
        };
        let result = merge(x, y, op);
        widest = widest.max(result.len());
        for (k, v) in result.into_iter().enumerate() {
            indices.extend_from_slice(g);
            indices.push(k as i64);
            values.push(v);
        }
    }
    let rank = g1.len() + 1;
    let n = values.len();
    let mut shape = g1;
    shape.push(widest as i64);
    Ok((
        Tensor::from_vec(vec![n, rank], indices)?,
        values,
        Tensor::vector(shape),
    ))
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "SetSize",
        factory(|init| {
            let validate = init.node.attrs.bool_or("validate_indices", true)?;
            boxed(move |ctx| set_size(ctx, validate))
        }),
    );
    for (name, form) in [
        ("DenseToDenseSetOperation", Form::DenseDense),
        ("DenseToSparseSetOperation", Form::DenseSparse),
        ("SparseToSparseSetOperation", Form::SparseSparse),
    ] {
        reg(
            name,
            factory(move |init| {
                let op = set_op(&init.node.attrs.string("set_operation")?)?;
                let validate = init.node.attrs.bool_or("validate_indices", true)?;
                boxed(move |ctx| set_operation(ctx, form, op, validate))
            }),
        );
    }
}
