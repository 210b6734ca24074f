//! Shape functions of the ops that reshape or rearrange whole tensors:
//! `Reshape`, `Transpose`, `ExpandDims`, `Squeeze`, `ConcatV2` (and
//! `ConcatOffset`, its gradient's helper), `Pack`/`Unpack`,
//! `Split`/`SplitV`, `Tile`, `Pad`/`PadV2`/`MirrorPad`, `ReverseV2`,
//! `BroadcastTo`, `Roll`, `ReverseSequence` and the space/batch ops
//! (`SpaceToBatchND`/`BatchToSpaceND` and the 4-D `SpaceToBatch`/
//! `BatchToSpace` with a `block_size` attr).

use super::{identity, merge};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::ops::{axis_in, single, InferContext, OpDef, INDEX};
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

fn reshape(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let target = ctx.shape_value(1);
    let Some(tdims) = target.dims() else {
        return single(ctx.dtype(0), target);
    };
    // `-1` arrives as an unknown dim; solve it when everything else is known.
    let unknown = tdims.iter().filter(|d| d.is_none()).count();
    let known: usize = tdims.iter().flatten().product();
    let mut dims = tdims.to_vec();
    if let Some(n) = ctx.shape(0).num_elements() {
        if unknown == 0 && known != n {
            return Err(ctx.shape_error(format!(
                "Cannot reshape a tensor with {n} elements to shape {target} ({known} elements)"
            )));
        }
        // Like TensorFlow, a single unknown dim is solved also when the shape
        // tensor is only partly known (e.g. `tf.stack([batch, 3])`).
        if unknown == 1 && !(known == 0 && n == 0) {
            if known == 0 || n % known != 0 {
                return Err(ctx.shape_error(format!(
                    "Cannot reshape a tensor with {n} elements to shape {target}"
                )));
            }
            for d in dims.iter_mut().filter(|d| d.is_none()) {
                *d = Some(n / known);
            }
        }
    }
    single(ctx.dtype(0), PartialShape::from_dims(dims))
}

/// `ReverseV2(tensor, axis)`: the input's shape; constant axes must be in range
/// and distinct (TF's shape-function checks).
fn reverse_v2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    if let (Some(rank), Some(axes)) = (ctx.shape(0).rank(), ctx.const_ints(1)) {
        let mut seen = vec![false; rank];
        for (i, &a) in axes.iter().enumerate() {
            let c = if a < 0 { a + rank as i64 } else { a };
            if c < 0 || c >= rank as i64 {
                return Err(ctx.shape_error(format!(
                    "'axis'[{i}] = {a} is out of valid range [0, {}]",
                    rank as i64 - 1
                )));
            }
            if std::mem::replace(&mut seen[c as usize], true) {
                return Err(ctx.shape_error(format!("axis {c} specified more than once.")));
            }
        }
    }
    identity(ctx)
}

fn transpose(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let input = ctx.shape(0);
    let shape = match (input.dims(), ctx.const_ints(1)) {
        (Some(d), Some(p)) => {
            if p.len() != d.len() {
                return Err(ctx.shape_error(format!(
                    "Dimension must be {} but is {}",
                    d.len(),
                    p.len()
                )));
            }
            let mut out = Vec::with_capacity(d.len());
            for &i in &p {
                out.push(d[axis_in(ctx, i, d.len())?]);
            }
            PartialShape::from_dims(out)
        }
        (Some(d), None) => PartialShape::unknown_dims(d.len()),
        (None, Some(p)) => PartialShape::unknown_dims(p.len()),
        _ => PartialShape::unknown(),
    };
    single(ctx.dtype(0), shape)
}

fn expand_dims(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let shape = match (ctx.shape(0).dims(), ctx.const_ints(1)) {
        (Some(d), Some(a)) if a.len() == 1 => {
            let ax = axis_in(ctx, a[0], d.len() + 1)?;
            let mut out = d.to_vec();
            out.insert(ax, Some(1));
            PartialShape::from_dims(out)
        }
        (Some(d), _) => PartialShape::unknown_dims(d.len() + 1),
        _ => PartialShape::unknown(),
    };
    single(ctx.dtype(0), shape)
}

fn squeeze(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let axes = ctx.attrs().ints("squeeze_dims")?;
    let Some(d) = ctx.shape(0).dims() else {
        return single(ctx.dtype(0), PartialShape::unknown());
    };
    let mut keep = vec![true; d.len()];
    if axes.is_empty() {
        for (i, x) in d.iter().enumerate() {
            match x {
                Some(1) => keep[i] = false,
                None => return single(ctx.dtype(0), PartialShape::unknown()),
                _ => {}
            }
        }
    } else {
        for a in axes {
            let ax = axis_in(ctx, a, d.len())?;
            if let Some(v) = d[ax] {
                if v != 1 {
                    return Err(ctx.shape_error(format!(
                        "Can not squeeze dim[{ax}], expected a dimension of 1, got {v}"
                    )));
                }
            }
            keep[ax] = false;
        }
    }
    let out = d
        .iter()
        .zip(&keep)
        .filter(|(_, &k)| k)
        .map(|(x, _)| *x)
        .collect();
    single(ctx.dtype(0), PartialShape::from_dims(out))
}

/// Merges the shapes of inputs `range`, except along `axis` where sizes add.
fn join_shapes(
    ctx: &InferContext,
    inputs: std::ops::Range<usize>,
    axis: Option<i64>,
    stacking: bool,
) -> Result<PartialShape> {
    let first = inputs.start;
    let mut merged: Option<PartialShape> = None;
    let mut total: Option<usize> = Some(0);
    for i in inputs.clone() {
        ctx.expect_same(first, i)?;
        let s = ctx.shape(i);
        if !stacking {
            if let (Some(ax), Some(d)) = (axis, s.dims()) {
                let a = axis_in(ctx, ax, d.len())?;
                total = total.zip(d[a]).map(|(t, x)| t + x);
                let mut masked = d.to_vec();
                masked[a] = None;
                let m = PartialShape::from_dims(masked);
                merged = Some(match merged {
                    None => m,
                    Some(prev) => prev.merge(&m).ok_or_else(|| {
                        ctx.shape_error(format!(
                            "Dimensions of inputs should match: {} vs. {}",
                            ctx.shape(first),
                            s
                        ))
                    })?,
                });
                continue;
            }
            total = None;
        }
        // With an unknown axis every dim may differ: only the ranks must agree.
        let s = &match (stacking, axis, s.rank()) {
            (false, None, Some(r)) => PartialShape::unknown_dims(r),
            _ => s.clone(),
        };
        merged = Some(match merged {
            None => s.clone(),
            Some(prev) => prev.merge(s).ok_or_else(|| {
                ctx.shape_error(format!(
                    "Shapes must be equal: {} vs. {}",
                    ctx.shape(first),
                    s
                ))
            })?,
        });
    }
    let merged = merged.unwrap_or_else(PartialShape::unknown);
    if stacking {
        let n = inputs.len();
        return Ok(match (merged.dims(), axis) {
            (Some(d), Some(ax)) => {
                let a = axis_in(ctx, ax, d.len() + 1)?;
                let mut out = d.to_vec();
                out.insert(a, Some(n));
                PartialShape::from_dims(out)
            }
            (Some(d), None) => PartialShape::unknown_dims(d.len() + 1),
            _ => PartialShape::unknown(),
        });
    }
    Ok(match (merged.dims(), axis) {
        (Some(d), Some(ax)) => {
            let a = axis_in(ctx, ax, d.len())?;
            let mut out = d.to_vec();
            out[a] = total;
            PartialShape::from_dims(out)
        }
        (Some(d), None) => PartialShape::unknown_dims(d.len()),
        _ => PartialShape::unknown(),
    })
}

fn concat(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let n = ctx.num_inputs();
    if n < 2 {
        return Err(ctx.shape_error("ConcatV2 needs at least one value and an axis"));
    }
    ctx.expect_dtype(n - 1, INDEX)?;
    let axis = ctx.const_value(n - 1).and_then(|t| t.scalar_i64().ok());
    for i in 0..n - 1 {
        if ctx.shape(i).rank() == Some(0) {
            return Err(ctx.shape_error("Can't concatenate scalars (use tf.stack instead)"));
        }
    }
    single(ctx.dtype(0), join_shapes(ctx, 0..n - 1, axis, false)?)
}

/// `ConcatOffset(concat_dim, shape_0..shape_n)`: where each input of a concat starts along the
/// axis (the concat gradient slices with it); one vector like each shape.
fn concat_offset(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int32])?;
    ctx.expect_rank(0, 0)?;
    if ctx.num_inputs() < 3 {
        return Err(ctx.shape_error(format!(
            "ConcatOffset needs at least 2 shapes, got {}",
            ctx.num_inputs() - 1
        )));
    }
    let dtype = ctx.expect_dtype(1, INDEX)?;
    (1..ctx.num_inputs())
        .map(|i| {
            ctx.expect_rank(i, 1)?;
            Ok(OutputInfo::new(dtype, ctx.shape(i).clone()))
        })
        .collect()
}

fn pack(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    if ctx.num_inputs() == 0 {
        return Err(ctx.shape_error("Pack needs at least one value"));
    }
    let axis = ctx.int_or("axis", 0)?;
    single(
        ctx.dtype(0),
        join_shapes(ctx, 0..ctx.num_inputs(), Some(axis), true)?,
    )
}

fn unpack(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let axis = ctx.int_or("axis", 0)?;
    let num = ctx.int("num")?;
    let shape = match ctx.shape(0).dims() {
        Some(d) => {
            let a = axis_in(ctx, axis, d.len())?;
            if let Some(k) = d[a] {
                if k as i64 != num {
                    return Err(ctx.shape_error(format!(
                        "Dimension {a} has size {k}, which does not match num = {num}"
                    )));
                }
            }
            let mut out = d.to_vec();
            out.remove(a);
            PartialShape::from_dims(out)
        }
        None => PartialShape::unknown(),
    };
    Ok(vec![
        OutputInfo::new(ctx.dtype(0), shape);
        num.max(0) as usize
    ])
}

fn split(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    // Split(axis, value)
    ctx.expect_dtype(0, &[DType::Int32])?;
    let num = ctx.int("num_split")?;
    if num <= 0 {
        return Err(ctx.shape_error(format!("num_split must be positive, got {num}")));
    }
    let shape = match (
        ctx.shape(1).dims(),
        ctx.const_value(0).and_then(|t| t.scalar_i64().ok()),
    ) {
        (Some(d), Some(ax)) => {
            let a = axis_in(ctx, ax, d.len())?;
            let mut out = d.to_vec();
            if let Some(k) = d[a] {
                if k % num as usize != 0 {
                    return Err(ctx.shape_error(format!(
                        "Dimension size must be evenly divisible by {num} but is {k}"
                    )));
                }
                out[a] = Some(k / num as usize);
            }
            PartialShape::from_dims(out)
        }
        (Some(d), None) => PartialShape::unknown_dims(d.len()),
        _ => PartialShape::unknown(),
    };
    Ok(vec![OutputInfo::new(ctx.dtype(1), shape); num as usize])
}

fn split_v(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    // SplitV(value, size_splits, axis)
    let num = ctx.int("num_split")?;
    let sizes = ctx.const_ints(1);
    let axis = ctx.const_value(2).and_then(|t| t.scalar_i64().ok());
    let d = ctx.dtype(0);
    let Some(dims) = ctx.shape(0).dims() else {
        return Ok(vec![
            OutputInfo::new(d, PartialShape::unknown());
            num as usize
        ]);
    };
    let Some(ax) = axis else {
        return Ok(vec![
            OutputInfo::new(
                d,
                PartialShape::unknown_dims(dims.len())
            );
            num as usize
        ]);
    };
    let a = axis_in(ctx, ax, dims.len())?;
    let mut outs = Vec::new();
    match sizes {
        Some(s) => {
            if s.len() as i64 != num {
                return Err(ctx.shape_error(format!(
                    "size_splits has {} entries but num_split is {num}",
                    s.len()
                )));
            }
            if s.iter().filter(|&&x| x == -1).count() > 1 {
                return Err(ctx.shape_error("size_splits can only have one -1"));
            }
            let known: i64 = s.iter().filter(|&&x| x >= 0).sum();
            for &x in &s {
                let mut o = dims.to_vec();
                o[a] = if x >= 0 {
                    Some(x as usize)
                } else {
                    dims[a].map(|t| (t as i64 - known).max(0) as usize)
                };
                outs.push(OutputInfo::new(d, PartialShape::from_dims(o)));
            }
            if let Some(t) = dims[a] {
                if !s.contains(&-1) && known != t as i64 {
                    return Err(ctx.shape_error(format!(
                        "Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: {known}"
                    )));
                }
            }
        }
        None => {
            let mut o = dims.to_vec();
            o[a] = None;
            outs = vec![OutputInfo::new(d, PartialShape::from_dims(o)); num as usize];
        }
    }
    Ok(outs)
}

fn tile(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let shape = match (ctx.shape(0).dims(), ctx.const_ints(1)) {
        (Some(d), Some(m)) => {
            if m.len() != d.len() {
                return Err(ctx.shape_error(format!("multiples must have {} entries", d.len())));
            }
            PartialShape::from_dims(
                d.iter()
                    .zip(&m)
                    .map(|(x, &k)| x.map(|v| v * k as usize))
                    .collect(),
            )
        }
        // Multiples known in part (a Pack of constants and tensors, as `tf.tile(w, [batch, 1, 1])`
        // builds): the dims they fix stay known, as TF's shape function keeps them.
        (Some(d), None) => match ctx.shape_value(1).dims() {
            Some(m) if m.len() == d.len() => PartialShape::from_dims(
                d.iter()
                    .zip(m)
                    .map(|(x, k)| match (x, k) {
                        (Some(v), Some(k)) => Some(v * k),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => PartialShape::unknown_dims(d.len()),
        },
        (None, Some(m)) => PartialShape::unknown_dims(m.len()),
        _ => PartialShape::unknown(),
    };
    single(ctx.dtype(0), shape)
}

fn pad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    if ctx.num_inputs() == 3 {
        ctx.expect_same(0, 2)?;
    }
    let shape = match (ctx.shape(0).dims(), ctx.const_ints(1)) {
        (Some(d), Some(p)) => {
            if p.len() != 2 * d.len() {
                return Err(ctx.shape_error(format!("paddings must be a [{}, 2] matrix", d.len())));
            }
            if p.iter().any(|&x| x < 0) {
                return Err(ctx.shape_error("Paddings must be non-negative"));
            }
            PartialShape::from_dims(
                d.iter()
                    .enumerate()
                    .map(|(i, x)| x.map(|v| (v as i64 + p[2 * i] + p[2 * i + 1]) as usize))
                    .collect(),
            )
        }
        (Some(d), None) => PartialShape::unknown_dims(d.len()),
        _ => match ctx.shape(1).dim(0) {
            Some(r) => PartialShape::unknown_dims(r),
            None => PartialShape::unknown(),
        },
    };
    single(ctx.dtype(0), shape)
}

/// TensorFlow's `BroadcastTo` shape function: the requested shape, where each
/// input dimension greater than 1 fills in (or must equal) the output dimension
/// it lines up with from the right.
fn broadcast_to(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let target = ctx.shape_value(1);
    if ctx.shape(0).broadcast(&target).is_none() {
        return Err(ctx.shape_error(format!("Unable to broadcast {} to {target}", ctx.shape(0))));
    }
    let (Some(input), Some(out)) = (ctx.shape(0).dims(), target.dims()) else {
        return single(ctx.dtype(0), target);
    };
    if input.len() > out.len() {
        return Err(ctx.shape_error(format!(
            "Shape must be at most rank {} but is rank {}",
            out.len(),
            input.len()
        )));
    }
    let mut dims = out.to_vec();
    let offset = out.len() - input.len();
    for (i, d) in input.iter().enumerate() {
        if let Some(v) = d.filter(|&v| v > 1) {
            dims[offset + i] = Some(v);
        }
    }
    single(ctx.dtype(0), PartialShape::from_dims(dims))
}

/// Requires input `i` to have rank at most `r` when known.
fn rank_at_most(ctx: &InferContext, i: usize, r: usize) -> Result<()> {
    match ctx.shape(i).rank() {
        Some(k) if k > r => {
            Err(ctx.shape_error(format!("Shape must be at most rank {r} but is rank {k}")))
        }
        _ => Ok(()),
    }
}

/// Requires input `i` to have rank at least `r` when known.
fn rank_at_least(ctx: &InferContext, i: usize, r: usize) -> Result<()> {
    match ctx.shape(i).rank() {
        Some(k) if k < r => {
            Err(ctx.shape_error(format!("Shape must be at least rank {r} but is rank {k}")))
        }
        _ => Ok(()),
    }
}

fn roll(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    rank_at_least(ctx, 0, 1)?;
    rank_at_most(ctx, 1, 1)?;
    rank_at_most(ctx, 2, 1)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_dtype(2, INDEX)?;
    merge(ctx, ctx.shape(1), ctx.shape(2))?;
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn reverse_sequence(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(1, 1)?;
    let seq = ctx.int("seq_dim")?;
    let batch = ctx.int_or("batch_dim", 0)?;
    let x = ctx.shape(0);
    let Some(dims) = x.dims() else {
        return single(ctx.dtype(0), x.clone());
    };
    let rank = dims.len() as i64;
    if batch >= rank {
        return Err(ctx.shape_error(format!(
            "batch_dim must be < input rank: {batch} vs. {rank}"
        )));
    }
    if seq >= rank {
        return Err(ctx.shape_error(format!("seq_dim must be < input rank: {seq} vs. {rank}")));
    }
    let mut out = dims.to_vec();
    if batch >= 0 {
        let b = batch as usize;
        match (dims[b], ctx.shape(1).dim(0)) {
            (Some(p), Some(q)) if p != q => {
                return Err(
                    ctx.shape_error(format!("Dimensions must be equal, but are {p} and {q}"))
                )
            }
            (p, q) => out[b] = p.or(q),
        }
    }
    single(ctx.dtype(0), PartialShape::from_dims(out))
}

/// The block sizes and `[m, 2]` pads/crops of a space-batch op, as far as
/// they are known at construction: `(m, block, pairs)`.
type BlockInfo = (usize, Option<Vec<i64>>, Option<Vec<i64>>);

/// Block shape and paddings (or crops) of `SpaceToBatchND`/`BatchToSpaceND`.
fn nd_blocks(ctx: &InferContext) -> Result<BlockInfo> {
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_dtype(2, INDEX)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 2)?;
    let Some(m) = ctx.shape(1).dim(0) else {
        return Err(ctx.shape_error("block_shape must have known size."));
    };
    if let Some(d) = ctx.shape(2).dims() {
        if d[0].is_some_and(|r| r != m) || d[1].is_some_and(|c| c != 2) {
            return Err(ctx.shape_error(format!(
                "Dimension 0 in both shapes must be equal, but are {} and {m}",
                d[0].map_or("?".to_string(), |r| r.to_string())
            )));
        }
    }
    let block = ctx.const_ints(1);
    if let Some(b) = &block {
        if let Some((i, v)) = b.iter().enumerate().find(|(_, &v)| v < 1) {
            return Err(ctx.shape_error(format!("block_shape must be positive, got {v} at {i}")));
        }
    }
    let pairs = ctx.const_ints(2);
    if let Some(p) = &pairs {
        if p.iter().any(|&v| v < 0) {
            return Err(ctx.shape_error("paddings and crops must be non-negative"));
        }
    }
    Ok((m, block, pairs))
}

/// The 4-D ops' `block_size` attr as a two-dimensional block; their
/// paddings/crops input is the second one.
fn block_size_blocks(ctx: &InferContext) -> Result<BlockInfo> {
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 2)?;
    let b = ctx.int("block_size")?;
    if b < 2 {
        return Err(ctx.shape_error(format!(
            "Value for attr 'block_size' of {b} must be at least minimum 2"
        )));
    }
    Ok((2, Some(vec![b, b]), ctx.const_ints(1)))
}

fn space_batch(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let (m, block, pairs) = match ctx.def.name {
        "SpaceToBatch" | "BatchToSpace" => block_size_blocks(ctx)?,
        _ => nd_blocks(ctx)?,
    };
    let to_batch = ctx.def.name.starts_with("SpaceToBatch");
    let x = ctx.shape(0);
    let Some(dims) = x.dims() else {
        return single(ctx.dtype(0), x.clone());
    };
    if dims.len() < 1 + m {
        return Err(ctx.shape_error(format!(
            "Shape must be at least rank {} but is rank {}",
            1 + m,
            dims.len()
        )));
    }
    let mut out = dims.to_vec();
    let prod = block.as_ref().map(|b| b.iter().product::<i64>() as usize);
    out[0] = match (dims[0], &block) {
        (Some(n), Some(_)) if to_batch => Some(n * prod.unwrap_or(1)),
        (Some(mut n), Some(b)) => {
            for &k in b {
                let k = k as usize;
                if n % k != 0 {
                    return Err(ctx.shape_error(format!(
                        "Dimension size must be evenly divisible by {k} but is {n}"
                    )));
                }
                n /= k;
            }
            Some(n)
        }
        _ => None,
    };
    for d in 0..m {
        out[d + 1] = match (dims[d + 1], &block, &pairs) {
            (Some(s), Some(b), Some(p)) => {
                let (k, lo, hi) = (b[d], p[2 * d], p[2 * d + 1]);
                if to_batch {
                    let padded = s as i64 + lo + hi;
                    if padded % k != 0 {
                        return Err(ctx.shape_error(format!(
                            "Dimension size must be evenly divisible by {k} but is {padded}"
                        )));
                    }
                    Some((padded / k) as usize)
                } else {
                    let full = s as i64 * k;
                    if full - lo < 0 {
                        return Err(ctx.shape_error(format!(
                            "Negative dimension size caused by subtracting {lo} from {full}"
                        )));
                    }
                    if full - lo - hi < 0 {
                        return Err(ctx.shape_error(format!(
                            "Negative dimension size caused by subtracting {hi} from {}",
                            full - lo
                        )));
                    }
                    Some((full - lo - hi) as usize)
                }
            }
            _ => None,
        };
    }
    single(ctx.dtype(0), PartialShape::from_dims(out))
}

pub(super) fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Reshape", &["tensor", "shape"], reshape),
        OpDef::new("Transpose", &["x", "perm"], transpose),
        OpDef::new("ExpandDims", &["input", "dim"], expand_dims),
        OpDef::new("Squeeze", &["input"], squeeze),
        OpDef::new("ConcatV2", &["values*"], concat),
        OpDef::new("ConcatOffset", &["concat_dim", "shape*"], concat_offset),
        OpDef::new("Pack", &["values*"], pack),
        OpDef::new("Unpack", &["value"], unpack),
        OpDef::new("Split", &["split_dim", "value"], split),
        OpDef::new("SplitV", &["value", "size_splits", "split_dim"], split_v),
        OpDef::new("Tile", &["input", "multiples"], tile),
        OpDef::new("Pad", &["input", "paddings"], pad),
        OpDef::new("PadV2", &["input", "paddings", "constant_values"], pad),
        OpDef::new("MirrorPad", &["input", "paddings"], pad),
        OpDef::new("ReverseV2", &["tensor", "axis"], reverse_v2),
        OpDef::new("BroadcastTo", &["input", "shape"], broadcast_to),
        OpDef::new("Roll", &["input", "shift", "axis"], roll),
        OpDef::new(
            "ReverseSequence",
            &["input", "seq_lengths"],
            reverse_sequence,
        ),
        OpDef::new(
            "SpaceToBatchND",
            &["input", "block_shape", "paddings"],
            space_batch,
        ),
        OpDef::new(
            "BatchToSpaceND",
            &["input", "block_shape", "crops"],
            space_batch,
        ),
        OpDef::new("SpaceToBatch", &["input", "paddings"], space_batch),
        OpDef::new("BatchToSpace", &["input", "crops"], space_batch),
    ]
}
