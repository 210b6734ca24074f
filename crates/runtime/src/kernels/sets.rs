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

/// One set member: integers compare as integers, strings bytewise.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Int(i64),
    Bytes(Vec<u8>),
}

/// The non-empty sets of an operand by group index (row-major order), each
/// sorted and without repeats.
type Sets = Vec<(Vec<i64>, Vec<Key>)>;

fn sorted_set(mut v: Vec<Key>) -> Vec<Key> {
    v.sort_unstable();
    v.dedup();
    v
}

fn keys(op: &str, t: &Tensor) -> Result<Vec<Key>> {
    fn ints<T: Copy + Into<i64>>(v: &[T]) -> Vec<Key> {
        v.iter().map(|&x| Key::Int(x.into())).collect()
    }
    Ok(match t.data() {
        Data::I8(v) => ints(v),
        Data::I16(v) => ints(v),
        Data::I32(v) => ints(v),
        Data::I64(v) => ints(v),
        Data::U8(v) => ints(v),
        Data::U16(v) => ints(v),
        Data::Str(v) => v.iter().cloned().map(Key::Bytes).collect(),
        _ => bail!(
            invalid_argument,
            "{op}: invalid set values of dtype {}: tf.sets takes int8, int16, int32, int64, uint8, uint16 or string",
            t.dtype()
        ),
    })
}

fn from_keys(dtype: DType, keys: Vec<Key>) -> Result<Tensor> {
    let n = keys.len();
    let int = |k: Key| match k {
        Key::Int(x) => x,
        Key::Bytes(_) => 0,
    };
    Ok(match dtype {
        DType::Int8 => Tensor::from_vec(vec![n], keys.into_iter().map(|k| int(k) as i8).collect())?,
        DType::Int16 => {
            Tensor::from_vec(vec![n], keys.into_iter().map(|k| int(k) as i16).collect())?
        }
        DType::Int32 => {
            Tensor::from_vec(vec![n], keys.into_iter().map(|k| int(k) as i32).collect())?
        }
        DType::Int64 => Tensor::from_vec(vec![n], keys.into_iter().map(int).collect())?,
        DType::UInt8 => {
            Tensor::from_vec(vec![n], keys.into_iter().map(|k| int(k) as u8).collect())?
        }
        DType::UInt16 => {
            Tensor::from_vec(vec![n], keys.into_iter().map(|k| int(k) as u16).collect())?
        }
        _ => Tensor::from_vec(
            vec![n],
            keys.into_iter()
                .map(|k| match k {
                    Key::Bytes(b) => b,
                    Key::Int(_) => Vec::new(),
                })
                .collect::<Vec<Vec<u8>>>(),
        )?,
    })
}

fn shape_text(s: &[i64]) -> String {
    let parts: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// The sets of a dense tensor: one per index of its leading dimensions.
fn dense_sets(op: &str, t: &Tensor) -> Result<(Vec<i64>, Sets)> {
    ensure!(
        t.rank() >= 2,
        invalid_argument,
        "{op}: Invalid rank {}.",
        t.rank()
    );
    let dims = t.dims();
    let group: Vec<i64> = dims[..dims.len() - 1].iter().map(|&d| d as i64).collect();
    let last = dims[dims.len() - 1];
    let values = keys(op, t)?;
    let mut sets = Sets::new();
    if last > 0 {
        for (row, chunk) in values.chunks(last).enumerate() {
            let mut idx = vec![0i64; group.len()];
            let mut r = row as i64;
            for d in (0..group.len()).rev() {
                idx[d] = r % group[d];
                r /= group[d];
            }
            sets.push((idx, sorted_set(chunk.to_vec())));
        }
    }
    Ok((group, sets))
}

/// The sets of the sparse tensor in inputs `i..i + 3`, its indices checked
/// (in bounds, in row-major order, not repeated) when `validate`.
fn sparse_sets(
    op: &str,
    ctx: &OpContext<'_>,
    i: usize,
    validate: bool,
) -> Result<(Vec<i64>, Sets)> {
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
    let idx = ind.to_i64_vec()?;
    let values = keys(op, vals)?;
    let mut by_group: BTreeMap<Vec<i64>, Vec<Key>> = BTreeMap::new();
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
    let (group, sets) = sparse_sets("SetSize", ctx, 0, validate)?;
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
    ctx.output(Tensor::from_vec(dims, out)?);
    Ok(())
}

/// `op` of two sorted sets without repeats, by one merge pass.
fn merge(x: &[Key], y: &[Key], op: SetOp) -> Vec<Key> {
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
    let (dtype1, dtype2) = match form {
        Form::DenseDense => (ctx.input(0)?.dtype(), ctx.input(1)?.dtype()),
        Form::DenseSparse => (ctx.input(0)?.dtype(), ctx.input(2)?.dtype()),
        Form::SparseSparse => (ctx.input(1)?.dtype(), ctx.input(4)?.dtype()),
    };
    ensure!(
        dtype1 == dtype2,
        invalid_argument,
        "{name}: the two sets have different dtypes, {dtype1} and {dtype2}"
    );
    let ((g1, a), (g2, b)) = match form {
        Form::DenseDense => (
            dense_sets(name, ctx.input(0)?)?,
            dense_sets(name, ctx.input(1)?)?,
        ),
        Form::DenseSparse => (
            dense_sets(name, ctx.input(0)?)?,
            sparse_sets(name, ctx, 1, validate)?,
        ),
        Form::SparseSparse => (
            sparse_sets(name, ctx, 0, validate)?,
            sparse_sets(name, ctx, 3, validate)?,
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
    let empty: Vec<Key> = Vec::new();
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
    ctx.output(Tensor::from_vec(vec![n, rank], indices)?);
    ctx.output(from_keys(dtype1, values)?);
    ctx.output(Tensor::vector(shape));
    Ok(())
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
