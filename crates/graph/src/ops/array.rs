//! Sources (constants, placeholders), shape ops and data movement.

use super::{axis_in, single, InferContext, OpDef, INDEX};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::array::{strided_slice_plan_partial, SliceMasks};
use ferroflow_tensor::kernels::bitcast::BITCAST_TYPES;
use ferroflow_tensor::{DType, Error, Result};

fn constant(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = ctx.attrs().tensor("value")?;
    let mut dtype = t.dtype();
    if let Ok(d) = ctx.type_attr("dtype") {
        // A quantized constant holds the integers of its width.
        if d.storage() != t.dtype() {
            return Err(Error::type_error(format!(
                "Const '{}': value has dtype {} but dtype attribute says {d}",
                ctx.name,
                t.dtype()
            )));
        }
        dtype = d;
    }
    single(dtype, PartialShape::from(t.shape()))
}

fn placeholder(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.type_attr("dtype")?, ctx.attrs().shape("shape")?)
}

fn placeholder_with_default(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.dtype(0);
    let declared = ctx.attrs().shape("shape")?;
    if !declared.is_compatible_with(ctx.shape(0)) {
        return Err(ctx.shape_error(format!(
            "default value of shape {} is not compatible with shape {declared}",
            ctx.shape(0)
        )));
    }
    single(d, declared)
}

fn identity(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn no_outputs(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

fn shape_of(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let out = ctx.type_or("out_type", DType::Int32)?;
    let n = ctx.shape(0).rank();
    single(out, PartialShape::from_dims(vec![n]))
}

/// `ShapeN`: the shapes of N tensors at once (TF's conv gradients use it).
fn shape_n(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let out = ctx.type_or("out_type", DType::Int32)?;
    Ok((0..ctx.num_inputs())
        .map(|i| OutputInfo::new(out, PartialShape::from_dims(vec![ctx.shape(i).rank()])))
        .collect())
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

fn size_of(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(
        ctx.type_or("out_type", DType::Int32)?,
        PartialShape::scalar(),
    )
}

fn rank_of(_: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::Int32, PartialShape::scalar())
}

fn fill(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 0)?;
    if let Some(dims) = ctx.const_ints(0) {
        if let Some((i, bad)) = dims.iter().enumerate().find(|(_, &x)| x < 0) {
            return Err(ctx.shape_error(format!(
                "Fill dimensions must be >= 0, but dimension {i} of the shape {dims:?} is {bad}"
            )));
        }
    }
    single(ctx.dtype(1), ctx.shape_value(0))
}

fn range(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.dtype(0);
    for i in 1..3 {
        ctx.expect_same(0, i)?;
    }
    let known = (|| {
        let s = ctx.const_value(0)?.scalar_f64().ok()?;
        let l = ctx.const_value(1)?.scalar_f64().ok()?;
        let st = ctx.const_value(2)?.scalar_f64().ok()?;
        Some((s, l, st))
    })();
    let n = match known {
        Some((s, l, st)) => {
            if st == 0.0 {
                return Err(ctx.shape_error("Requires delta != 0"));
            }
            if (st > 0.0 && s > l) || (st < 0.0 && s < l) {
                let rel = if st > 0.0 { "<=" } else { ">=" };
                let sign = if st > 0.0 { ">" } else { "<" };
                return Err(ctx.shape_error(format!(
                    "Requires start {rel} limit when delta {sign} 0: {s}/{l}"
                )));
            }
            Some(ferroflow_tensor::kernels::array::range_len(s, l, st, d))
        }
        None => None,
    };
    single(d, PartialShape::from_dims(vec![n]))
}

fn linspace(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, super::FLOATS)?;
    let n = ctx
        .const_value(2)
        .and_then(|t| t.scalar_i64().ok())
        .and_then(|v| usize::try_from(v).ok());
    single(d, PartialShape::from_dims(vec![n]))
}

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

fn slice(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.dtype(0);
    let (Some(dims), Some(b), Some(s)) =
        (ctx.shape(0).dims(), ctx.const_ints(1), ctx.const_ints(2))
    else {
        // Known sizes other than -1 give known dims even when begin is unknown.
        let r = ctx.shape(0).rank().or_else(|| ctx.shape(2).dim(0));
        return single(
            d,
            match (r, ctx.const_ints(2)) {
                (Some(r), Some(s)) if s.len() == r => {
                    PartialShape::from_dims(s.iter().map(|&x| usize::try_from(x).ok()).collect())
                }
                (Some(r), _) => PartialShape::unknown_dims(r),
                _ => PartialShape::unknown(),
            },
        );
    };
    if b.len() != dims.len() || s.len() != dims.len() {
        return Err(ctx.shape_error(format!(
            "begin and size must have length {} (the input's rank)",
            dims.len()
        )));
    }
    let mut out = Vec::with_capacity(dims.len());
    for i in 0..dims.len() {
        out.push(if s[i] == -1 {
            dims[i].map(|x| (x as i64 - b[i]).max(0) as usize)
        } else {
            if let Some(x) = dims[i] {
                if b[i] < 0 || s[i] < 0 || b[i] + s[i] > x as i64 {
                    return Err(ctx.shape_error(format!(
                        "Expected begin[{i}] in [0, {x}] and size[{i}] in [0, {}], but got {} and {}",
                        x as i64 - b[i].max(0),
                        b[i],
                        s[i]
                    )));
                }
            }
            Some(s[i] as usize)
        });
    }
    single(d, PartialShape::from_dims(out))
}

fn strided_slice(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.dtype(0);
    let masks = SliceMasks {
        begin: ctx.int_or("begin_mask", 0)?,
        end: ctx.int_or("end_mask", 0)?,
        ellipsis: ctx.int_or("ellipsis_mask", 0)?,
        new_axis: ctx.int_or("new_axis_mask", 0)?,
        shrink_axis: ctx.int_or("shrink_axis_mask", 0)?,
    };
    // Like TensorFlow, known strides and input rank suffice: unknown begin/end
    // leave the dimensions they bound unknown.
    let (Some(dims), Some(s)) = (ctx.shape(0).dims(), ctx.const_ints(3)) else {
        return single(d, PartialShape::unknown());
    };
    let (b, e) = (ctx.const_ints(1), ctx.const_ints(2));
    let plan = strided_slice_plan_partial(dims, b.as_deref(), e.as_deref(), &s, masks)
        .map_err(|e| ctx.shape_error(e.message()))?;
    single(d, PartialShape::from_dims(plan.final_shape))
}

fn gather(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let batch = ctx.int_or("batch_dims", 0)?;
    let (p, i) = (ctx.shape(0), ctx.shape(1));
    let axis = ctx.const_value(2).and_then(|t| t.scalar_i64().ok());
    let shape = match (p.dims(), i.dims(), axis) {
        (Some(pd), Some(id), Some(ax)) => {
            let a = axis_in(ctx, ax, pd.len())?;
            let b = if batch < 0 {
                batch + id.len() as i64
            } else {
                batch
            } as usize;
            if b > a || b > id.len() {
                return Err(ctx.shape_error(format!(
                    "batch_dims ({batch}) must be at most axis and indices rank"
                )));
            }
            let out: Vec<Option<usize>> = pd[..a]
                .iter()
                .chain(&id[b..])
                .chain(&pd[a + 1..])
                .copied()
                .collect();
            PartialShape::from_dims(out)
        }
        (Some(pd), Some(id), None) if pd.len() + id.len() > batch.max(0) as usize => {
            PartialShape::unknown_dims(pd.len() + id.len() - 1 - batch.max(0) as usize)
        }
        _ => PartialShape::unknown(),
    };
    single(ctx.dtype(0), shape)
}

fn gather_nd(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let shape = match (ctx.shape(0).dims(), ctx.shape(1).dims()) {
        (Some(pd), Some(id)) if !id.is_empty() => match id[id.len() - 1] {
            Some(k) if k <= pd.len() => {
                PartialShape::from_dims(id[..id.len() - 1].iter().chain(&pd[k..]).copied().collect())
            }
            Some(k) => {
                return Err(ctx.shape_error(format!(
                    "indices.shape[-1] must be <= params.rank, but saw indices.shape[-1] = {k} and params.rank = {}",
                    pd.len()
                )))
            }
            None => PartialShape::unknown(),
        },
        _ => PartialShape::unknown(),
    };
    single(ctx.dtype(0), shape)
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
        (Some(d), None) => PartialShape::unknown_dims(d.len()),
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

fn one_hot(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::UInt8, DType::Int32, DType::Int64])?;
    ctx.expect_same(2, 3)?;
    let axis = ctx.int_or("axis", -1)?;
    let depth = ctx
        .const_value(1)
        .and_then(|t| t.scalar_i64().ok())
        .map(|v| v.max(0) as usize);
    let shape = match ctx.shape(0).dims() {
        Some(d) => {
            let a = if axis == -1 {
                d.len()
            } else {
                axis_in(ctx, axis, d.len() + 1)?
            };
            let mut out = d.to_vec();
            out.insert(a, depth);
            PartialShape::from_dims(out)
        }
        None => PartialShape::unknown(),
    };
    single(ctx.dtype(2), shape)
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

/// TensorFlow's `Bitcast` shape function (see
/// [`ferroflow_tensor::kernels::bitcast::bitcast_shape`] for the rule).
fn bitcast(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let from = ctx.expect_dtype(0, BITCAST_TYPES)?;
    let to = ctx.type_attr("type")?;
    if !BITCAST_TYPES.contains(&to) {
        return Err(Error::type_error(format!(
            "Value for attr 'type' of {to} is not in the list of allowed values"
        )));
    }
    let (a, b) = (from.size().unwrap_or(1), to.size().unwrap_or(1));
    let Some(dims) = ctx.shape(0).dims() else {
        return single(to, PartialShape::unknown());
    };
    let mut out = dims.to_vec();
    if a > b {
        out.push(Some(a / b));
    } else if a < b {
        match out.pop() {
            None => return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0")),
            Some(Some(last)) if last != b / a => {
                return Err(ctx.shape_error(format!(
                    "Cannot bitcast from {} to {} due to shape. {last} does not match {}",
                    from.as_enum(),
                    to.as_enum(),
                    b / a
                )))
            }
            Some(_) => {}
        }
    }
    single(to, PartialShape::from_dims(out))
}

fn where_op(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let r = ctx.shape(0).rank();
    single(DType::Int64, PartialShape::from_dims(vec![None, r]))
}

fn unique(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_rank(0, 1)?;
    let idx = ctx.type_or("out_idx", DType::Int32)?;
    if !INDEX.contains(&idx) {
        return Err(Error::type_error(format!(
            "'{}': out_idx must be int32 or int64, got {idx}",
            ctx.name
        )));
    }
    Ok(vec![
        OutputInfo::new(ctx.dtype(0), PartialShape::from_dims(vec![None])),
        OutputInfo::new(idx, ctx.shape(0).clone()),
    ])
}

fn zeros_like(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn assert_op(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Bool])?;
    if !matches!(ctx.shape(0).num_elements(), None | Some(1)) {
        return Err(ctx.shape_error("In[0] (condition) must be a scalar"));
    }
    Ok(Vec::new())
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Const", &[], constant),
        OpDef::new("Placeholder", &[], placeholder),
        OpDef::new(
            "PlaceholderWithDefault",
            &["input"],
            placeholder_with_default,
        ),
        OpDef::new("Identity", &["input"], identity),
        OpDef::new("StopGradient", &["input"], identity),
        OpDef::new("Snapshot", &["input"], identity),
        // A promise to the graph that the input never changes between runs.
        OpDef::new("GuaranteeConst", &["input"], identity),
        OpDef::new("NoOp", &[], no_outputs),
        OpDef::new("Shape", &["input"], shape_of),
        OpDef::new("ShapeN", &["input*"], shape_n),
        OpDef::new("ConcatOffset", &["concat_dim", "shape*"], concat_offset),
        OpDef::new("Size", &["input"], size_of),
        OpDef::new("Rank", &["input"], rank_of),
        OpDef::new("Fill", &["dims", "value"], fill),
        OpDef::new("ZerosLike", &["x"], zeros_like),
        OpDef::new("OnesLike", &["x"], zeros_like),
        OpDef::new("Range", &["start", "limit", "delta"], range),
        OpDef::new("LinSpace", &["start", "stop", "num"], linspace),
        OpDef::new("Reshape", &["tensor", "shape"], reshape),
        OpDef::new("Transpose", &["x", "perm"], transpose),
        OpDef::new("ExpandDims", &["input", "dim"], expand_dims),
        OpDef::new("Squeeze", &["input"], squeeze),
        OpDef::new("ConcatV2", &["values*"], concat),
        OpDef::new("Pack", &["values*"], pack),
        OpDef::new("Unpack", &["value"], unpack),
        OpDef::new("Split", &["split_dim", "value"], split),
        OpDef::new("SplitV", &["value", "size_splits", "split_dim"], split_v),
        OpDef::new("Slice", &["input", "begin", "size"], slice),
        OpDef::new(
            "StridedSlice",
            &["input", "begin", "end", "strides"],
            strided_slice,
        ),
        OpDef::new("GatherV2", &["params", "indices", "axis"], gather),
        OpDef::new("GatherNd", &["params", "indices"], gather_nd),
        OpDef::new("Tile", &["input", "multiples"], tile),
        OpDef::new("Pad", &["input", "paddings"], pad),
        OpDef::new("PadV2", &["input", "paddings", "constant_values"], pad),
        OpDef::new("MirrorPad", &["input", "paddings"], pad),
        OpDef::new(
            "OneHot",
            &["indices", "depth", "on_value", "off_value"],
            one_hot,
        ),
        OpDef::new("ReverseV2", &["tensor", "axis"], identity),
        OpDef::new("BroadcastTo", &["input", "shape"], broadcast_to),
        OpDef::new("Bitcast", &["input"], bitcast),
        OpDef::new("Where", &["input"], where_op),
        OpDef::new("Unique", &["x"], unique),
        OpDef::new("Assert", &["condition", "data*"], assert_op).stateful(),
    ]
}
