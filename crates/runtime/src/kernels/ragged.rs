//! Kernels of TensorFlow's `RaggedTensorToTensor` and `RaggedGather` (op
//! definitions in `ferroflow_graph::ops::ragged`). Both work on any dtype:
//! the row bookkeeping is done on the splits, and the values move as whole
//! items (a typed copy into the padded output; the dtype-generic gather).

use super::boxed;
use crate::kernel::{factory, KernelFactory, OpContext};
use ferroflow_graph::{AttrValue, AttrsExt};
use ferroflow_tensor::kernels::elementwise::select;
use ferroflow_tensor::{bail, ensure, with_data, DType, Element, Result, Shape, Tensor};

/// How a `RaggedTensorToTensor` partition tensor describes its level.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Partition {
    FirstDimSize,
    ValueRowIds,
    RowSplits,
}

fn partition_types(attr: Option<&AttrValue>) -> Result<Vec<Partition>> {
    let list = match attr {
        Some(AttrValue::StrList(v)) => v,
        None => return Ok(Vec::new()),
        Some(_) => bail!(
            invalid_argument,
            "RaggedTensorToTensor: row_partition_types must be a list of strings"
        ),
    };
    list.iter()
        .map(|s| match s.as_slice() {
            b"FIRST_DIM_SIZE" => Ok(Partition::FirstDimSize),
            b"VALUE_ROWIDS" => Ok(Partition::ValueRowIds),
            b"ROW_SPLITS" => Ok(Partition::RowSplits),
            other => bail!(
                invalid_argument,
                "RaggedTensorToTensor: unknown row partition type {:?}",
                String::from_utf8_lossy(other)
            ),
        })
        .collect()
}

/// Checks `splits` as the row splits of `rows` rows over `values` items.
fn check_splits(splits: &[i64], rows: Option<usize>, values: usize, what: &str) -> Result<()> {
    ensure!(
        !splits.is_empty() && splits[0] == 0,
        invalid_argument,
        "{what}: row splits must start with 0"
    );
    ensure!(
        splits.windows(2).all(|w| w[0] <= w[1]),
        invalid_argument,
        "{what}: row splits must be sorted in ascending order"
    );
    ensure!(
        splits[splits.len() - 1] == values as i64,
        invalid_argument,
        "{what}: the last row split ({}) must equal the number of values ({values})",
        splits[splits.len() - 1]
    );
    if let Some(r) = rows {
        ensure!(
            splits.len() == r + 1,
            invalid_argument,
            "{what}: {} row splits for {r} rows",
            splits.len()
        );
    }
    Ok(())
}

/// Row splits from sorted `value_rowids` of `nrows` rows.
fn splits_from_rowids(rowids: &[i64], nrows: usize) -> Result<Vec<i64>> {
    let mut splits = vec![0i64; nrows + 1];
    let mut previous = 0i64;
    for (i, &r) in rowids.iter().enumerate() {
        ensure!(
            r >= previous && (r as usize) < nrows,
            invalid_argument,
            "RaggedTensorToTensor: value_rowids[{i}] = {r} must be sorted and in [0, {nrows})"
        );
        previous = r;
        splits[r as usize + 1] += 1;
    }
    for i in 0..nrows {
        splits[i + 1] += splits[i];
    }
    Ok(splits)
}

/// The row splits of every ragged level of a `RaggedTensorToTensor` input,
/// outermost first, checked against each other and the number of values.
fn nested_splits(ctx: &OpContext<'_>, types: &[Partition], nvals: usize) -> Result<Vec<Vec<i64>>> {
    let parts: Vec<&Tensor> = (3..ctx.num_inputs())
        .map(|i| ctx.input(i))
        .collect::<Result<_>>()?;
    ensure!(
        parts.len() == types.len() && !types.is_empty(),
        invalid_argument,
        "RaggedTensorToTensor: {} row partition tensors for {} row_partition_types",
        parts.len(),
        types.len()
    );
    let mut levels: Vec<Vec<i64>> = Vec::new();
    let mut first_dim: Option<usize> = None;
    for (k, (t, ty)) in parts.iter().zip(types).enumerate() {
        match ty {
            Partition::FirstDimSize => {
                ensure!(
                    k == 0,
                    invalid_argument,
                    "RaggedTensorToTensor: FIRST_DIM_SIZE may only be the first row partition type"
                );
                let n = t.scalar_i64()?;
                ensure!(
                    n >= 0,
                    invalid_argument,
                    "RaggedTensorToTensor: the first dimension size must not be negative, got {n}"
                );
                first_dim = Some(n as usize);
            }
            Partition::ValueRowIds => {
                let rows = match levels.last() {
                    Some(s) => *s.last().unwrap_or(&0) as usize,
                    None => first_dim.ok_or_else(|| {
                        ferroflow_tensor::Error::invalid_argument(
                            "RaggedTensorToTensor: VALUE_ROWIDS at the first level needs FIRST_DIM_SIZE before it",
                        )
                    })?,
                };
                levels.push(splits_from_rowids(&t.to_i64_vec()?, rows)?);
            }
            Partition::RowSplits => {
                ensure!(
                    first_dim.is_none() || !levels.is_empty(),
                    invalid_argument,
                    "RaggedTensorToTensor: FIRST_DIM_SIZE must be followed by VALUE_ROWIDS"
                );
                ensure!(
                    t.rank() == 1,
                    invalid_argument,
                    "RaggedTensorToTensor: row splits must be a vector, got shape {}",
                    t.shape()
                );
                levels.push(t.to_i64_vec()?);
            }
        }
    }
    for k in 0..levels.len() {
        let count = if k + 1 < levels.len() {
            levels[k + 1].len().saturating_sub(1)
        } else {
            nvals
        };
        check_splits(&levels[k], None, count, "RaggedTensorToTensor")?;
    }
    Ok(levels)
}

fn ragged_to_tensor_kernel(ctx: &mut OpContext<'_>, types: &[Partition]) -> Result<()> {
    let values = ctx.input(1)?;
    let default = ctx.input(2)?;
    ensure!(
        values.rank() >= 1,
        invalid_argument,
        "RaggedTensorToTensor: values must have rank at least 1, got shape {}",
        values.shape()
    );
    let nvals = values.dims()[0];
    let inner: Vec<usize> = values.dims()[1..].to_vec();
    let inner_size: usize = inner.iter().product();
    let levels = nested_splits(ctx, types, nvals)?;
    let ragged_rank = levels.len();
    let rank = ragged_rank + 1 + inner.len();
    // The bounding box: rows, then the longest row of each ragged level.
    let mut dims: Vec<usize> = vec![levels[0].len() - 1];
    for s in &levels {
        dims.push(
            s.windows(2)
                .map(|w| (w[1] - w[0]) as usize)
                .max()
                .unwrap_or(0),
        );
    }
    dims.extend_from_slice(&inner);
    let shape = ctx.input(0)?.to_i64_vec()?;
    if ctx.input(0)?.rank() == 1 {
        ensure!(
            shape.len() == rank,
            invalid_argument,
            "RaggedTensorToTensor: shape has {} dimensions but the ragged tensor has rank {rank}",
            shape.len()
        );
        for (k, &want) in shape.iter().enumerate() {
            if want < 0 {
                continue;
            }
            if k > ragged_rank {
                ensure!(
                    want as usize == dims[k],
                    invalid_argument,
                    "RaggedTensorToTensor: shape[{k}] = {want} but the values' dimension is {}",
                    dims[k]
                );
            }
            dims[k] = want as usize;
        }
    }
    let dtype = values.dtype();
    Tensor::check_allocation("RaggedTensorToTensor", dtype, &dims)?;
    let outer: usize = dims[..=ragged_rank].iter().product();
    // The default, broadcast to one item, fills every cell no value lands in.
    ensure!(
        default.rank() < values.rank(),
        invalid_argument,
        "RaggedTensorToTensor: default_value of shape {} must have a rank below the values' ({})",
        default.shape(),
        values.shape()
    );
    let item = select(
        &Tensor::scalar(true),
        default,
        &Tensor::zeros(dtype, Shape::new(&inner)),
    )?;
    ensure!(
        item.dims() == inner.as_slice(),
        invalid_argument,
        "RaggedTensorToTensor: default_value of shape {} does not broadcast to the values' items {:?}",
        default.shape(),
        inner
    );
    let cells: Vec<usize>;
    let place = if ragged_rank == 1 {
        Place::Rows {
            splits: &levels[0],
            rows: dims[0],
            width: dims[1],
        }
    } else {
        // For every value, its cell among the outer (first ragged_rank + 1) output dimensions, or NONE when a
        // truncated dimension leaves it out.
        let mut placed: Vec<usize> = (0..levels[0].len() - 1)
            .map(|i| if i < dims[0] { i } else { NONE })
            .collect();
        for (k, s) in levels.iter().enumerate() {
            let width = dims[k + 1];
            let mut next = Vec::with_capacity(*s.last().unwrap_or(&0) as usize);
            for (row, w) in s.windows(2).enumerate() {
                let cell = placed[row];
                for j in 0..(w[1] - w[0]) as usize {
                    next.push(if cell == NONE || j >= width {
                        NONE
                    } else {
                        cell * width + j
                    });
                }
            }
            placed = next;
        }
        cells = placed;
        Place::Cells(&cells)
    };
    let fill = Fill {
        place,
        outer,
        inner: inner_size,
    };
    let out = with_data!(values.data(), v => fill.run(v, &item, &dims))?;
    ctx.output(out);
    Ok(())
}

/// A cell no value lands in.
const NONE: usize = usize::MAX;

/// Where the values go in `RaggedTensorToTensor`'s output.
enum Place<'a> {
    /// Ragged rank 1: row `r`'s first `width` values start cell `r * width`
    /// (for the first `rows` rows).
    Rows {
        splits: &'a [i64],
        rows: usize,
        width: usize,
    },
    /// Value `p` goes to cell `cells[p]` (NONE: nowhere).
    Cells(&'a [usize]),
}

/// `outer` cells of `inner` elements each, filled with the default item and
/// then the values where `place` puts them.
struct Fill<'a> {
    place: Place<'a>,
    outer: usize,
    inner: usize,
}

impl Fill<'_> {
    fn run<T: Element>(&self, values: &[T], item: &Tensor, dims: &[usize]) -> Result<Tensor> {
        let item = item.as_slice::<T>()?;
        let mut out: Vec<T> = Vec::with_capacity(self.outer * self.inner);
        if self.inner == 1 {
            out.resize(self.outer, item[0].clone());
        } else {
            for _ in 0..self.outer {
                out.extend_from_slice(item);
            }
        }
        let n = self.inner;
        match self.place {
            Place::Rows {
                splits,
                rows,
                width,
            } => {
                for (r, w) in splits.windows(2).take(rows).enumerate() {
                    let (lo, len) = (w[0] as usize, ((w[1] - w[0]) as usize).min(width));
                    let at = r * width * n;
                    out[at..at + len * n].clone_from_slice(&values[lo * n..(lo + len) * n]);
                }
            }
            Place::Cells(cells) => {
                for (p, &c) in cells.iter().enumerate() {
                    if c != NONE {
                        out[c * n..(c + 1) * n].clone_from_slice(&values[p * n..(p + 1) * n]);
                    }
                }
            }
        }
        Tensor::from_vec(dims.to_vec(), out)
    }
}

fn ragged_gather_kernel(ctx: &mut OpContext<'_>, out_ragged_rank: usize) -> Result<()> {
    let n = ctx.num_inputs();
    let k = n - 2;
    let splits: Vec<Vec<i64>> = (0..k)
        .map(|i| ctx.input(i)?.to_i64_vec())
        .collect::<Result<_>>()?;
    let splits_type = ctx.input(0)?.dtype();
    let values = ctx.input(n - 2)?;
    let indices = ctx.input(n - 1)?;
    ensure!(
        values.rank() >= 1,
        invalid_argument,
        "RaggedGather: params_dense_values must have rank at least 1, got shape {}",
        values.shape()
    );
    for level in 0..k {
        let count = if level + 1 < k {
            splits[level + 1].len().saturating_sub(1)
        } else {
            values.dims()[0]
        };
        check_splits(&splits[level], None, count, "RaggedGather")?;
    }
    let idims = indices.dims().to_vec();
    ensure!(
        out_ragged_rank + 1 == idims.len() + k,
        invalid_argument,
        "RaggedGather: OUTPUT_RAGGED_RANK ({out_ragged_rank}) must be rank(indices) + PARAMS_RAGGED_RANK - 1 = {}",
        (idims.len() + k) as i64 - 1
    );
    let nrows = splits[0].len() - 1;
    let idx = indices.to_i64_vec()?;
    for (pos, &v) in idx.iter().enumerate() {
        ensure!(
            v >= 0 && (v as usize) < nrows,
            invalid_argument,
            "indices[{pos}] = {v} is not in [0, {nrows})"
        );
    }
    let mut out: Vec<Vec<i64>> = Vec::new();
    // The dimensions of indices after the first are uniform rows of the result.
    for d in 1..idims.len() {
        let width = idims[d] as i64;
        let count: usize = idims[..d].iter().product();
        out.push((0..=count as i64).map(|i| i * width).collect());
    }
    // Each level: the chosen rows' lengths, then their contiguous ranges one level down.
    let mut ranges: Vec<(i64, i64)> = idx.iter().map(|&i| (i, i + 1)).collect();
    for s in &splits {
        let mut level = Vec::with_capacity(ranges.len() + 1);
        level.push(0i64);
        let mut total = 0i64;
        let mut next = Vec::with_capacity(ranges.len());
        for &(lo, hi) in &ranges {
            for j in lo..hi {
                total += s[j as usize + 1] - s[j as usize];
                level.push(total);
            }
            next.push((s[lo as usize], s[hi as usize]));
        }
        out.push(level);
        ranges = next;
    }
    if idims.is_empty() {
        out.remove(0); // one row: its own splits are dropped
    }
    let inner: usize = values.dims()[1..].iter().product();
    let mut dims = vec![ranges
        .iter()
        .map(|&(lo, hi)| (hi - lo) as usize)
        .sum::<usize>()];
    dims.extend_from_slice(&values.dims()[1..]);
    let dense = with_data!(values.data(), v => copy_ranges(v, &ranges, inner, dims))?;
    for s in out {
        ctx.output(if splits_type == DType::Int32 {
            Tensor::vector(s.into_iter().map(|v| v as i32).collect::<Vec<i32>>())
        } else {
            Tensor::vector(s)
        });
    }
    ctx.output(dense);
    Ok(())
}

/// The rows `lo..hi` of each range (rows of `inner` elements), in order.
fn copy_ranges<T: Element>(
    values: &[T],
    ranges: &[(i64, i64)],
    inner: usize,
    dims: Vec<usize>,
) -> Result<Tensor> {
    let mut out = Vec::with_capacity(dims.iter().product());
    for &(lo, hi) in ranges {
        out.extend_from_slice(&values[lo as usize * inner..hi as usize * inner]);
    }
    Tensor::from_vec(dims, out)
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "RaggedTensorToTensor",
        factory(|init| {
            let types = partition_types(init.node.attrs.get("row_partition_types"))?;
            boxed(move |ctx| ragged_to_tensor_kernel(ctx, &types))
        }),
    );
    reg(
        "RaggedGather",
        factory(|init| {
            let rank = init.node.attrs.int("OUTPUT_RAGGED_RANK")?;
            ensure!(
                rank >= 0,
                invalid_argument,
                "RaggedGather: OUTPUT_RAGGED_RANK must be at least 0, got {rank}"
            );
            boxed(move |ctx| ragged_gather_kernel(ctx, rank as usize))
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rowids_become_splits() {
        assert_eq!(
            splits_from_rowids(&[0, 0, 2], 4).unwrap(),
            vec![0, 2, 2, 3, 3]
        );
        assert!(splits_from_rowids(&[1, 0], 2).is_err());
        assert!(splits_from_rowids(&[0, 3], 3).is_err());
    }

    #[test]
    fn splits_are_checked() {
        assert!(check_splits(&[0, 2, 3], Some(2), 3, "t").is_ok());
        assert!(check_splits(&[1, 2, 3], None, 3, "t").is_err());
        assert!(check_splits(&[0, 3, 2], None, 2, "t").is_err());
        assert!(check_splits(&[0, 2], None, 3, "t").is_err());
    }
}
