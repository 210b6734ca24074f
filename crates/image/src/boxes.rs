//! The box ops of `tf.image`: non-max suppression (`NonMaxSuppression` v1
//! to v5, `NonMaxSuppressionWithOverlaps`, `CombinedNonMaxSuppression`),
//! `CropAndResize` with its two gradient ops, `DrawBoundingBoxes(V2)`,
//! `SampleDistortedBoundingBox(V2)` and `ExtractGlimpse(V2)`, with
//! TensorFlow's op names, inputs, attributes, shape inference, arithmetic
//! and error messages.
//!
//! Non-max suppression follows TensorFlow's greedy selection exactly:
//! candidates leave in order of score (ties: lower index first), a
//! candidate is compared with the boxes already selected, newest first,
//! and hard suppression stops at the first overlap above the threshold.
//! For hard NMS on finite `float32` boxes the candidates are sorted once
//! and compared against a structure-of-arrays copy of the selected boxes
//! with precomputed corners and areas; soft-NMS, `float16` and boxes with
//! NaN or infinite coordinates take the priority-queue path that mirrors
//! TensorFlow step by step (a candidate whose score was lowered goes back
//! into the queue). Both paths give TensorFlow's indices.
//!
//! The crop kernels use TensorFlow's float formulas (including the places
//! where TensorFlow computes in double) so crops and gradients match it
//! bit for bit; they run over boxes (or, for the image gradient, over the
//! images of the batch, each image summing its boxes in box order) on the
//! kernel team, so results never depend on the thread count.

use std::borrow::Cow;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use ferroflow_autodiff::{Builder, Grad};
use ferroflow_graph::{AttrValue, AttrsExt, InferContext, Node, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, KernelInit, OpContext};
use ferroflow_tensor::kernels::parallel;
use ferroflow_tensor::kernels::random::Philox;
use ferroflow_tensor::{bail, ensure, f16, team, DType, Error, Result, Tensor};

/// Registers the box ops, their kernels and gradients (idempotent).
pub fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
    ferroflow_autodiff::register_gradient("CropAndResize", crop_and_resize_grad);
    for op in [
        "NonMaxSuppression",
        "NonMaxSuppressionV2",
        "NonMaxSuppressionV3",
        "NonMaxSuppressionV4",
        "NonMaxSuppressionV5",
        "NonMaxSuppressionWithOverlaps",
        "CombinedNonMaxSuppression",
        "SampleDistortedBoundingBox",
        "SampleDistortedBoundingBoxV2",
        "DrawBoundingBoxes",
        "DrawBoundingBoxesV2",
        "ExtractGlimpse",
        "ExtractGlimpseV2",
    ] {
        ferroflow_autodiff::not_differentiable(op);
    }
}

/// The graph-level definitions of the box ops.
pub fn op_defs() -> Vec<OpDef> {
    const NMS3: &[&str] = &[
        "boxes",
        "scores",
        "max_output_size",
        "iou_threshold",
        "score_threshold",
    ];
    vec![
        OpDef::new(
            "NonMaxSuppression",
            &["boxes", "scores", "max_output_size"],
            infer_nms,
        ),
        OpDef::new(
            "NonMaxSuppressionV2",
            &["boxes", "scores", "max_output_size", "iou_threshold"],
            infer_nms,
        ),
        OpDef::new("NonMaxSuppressionV3", NMS3, infer_nms),
        OpDef::new("NonMaxSuppressionV4", NMS3, infer_nms),
        OpDef::new(
            "NonMaxSuppressionV5",
            &[
                "boxes",
                "scores",
                "max_output_size",
                "iou_threshold",
                "score_threshold",
                "soft_nms_sigma",
            ],
            infer_nms,
        ),
        OpDef::new(
            "NonMaxSuppressionWithOverlaps",
            &[
                "overlaps",
                "scores",
                "max_output_size",
                "overlap_threshold",
                "score_threshold",
            ],
            infer_nms_overlaps,
        ),
        OpDef::new(
            "CombinedNonMaxSuppression",
            &[
                "boxes",
                "scores",
                "max_output_size_per_class",
                "max_total_size",
                "iou_threshold",
                "score_threshold",
            ],
            infer_combined_nms,
        ),
        OpDef::new(
            "CropAndResize",
            &["image", "boxes", "box_ind", "crop_size"],
            infer_crop_and_resize,
        ),
        OpDef::new(
            "CropAndResizeGradImage",
            &["grads", "boxes", "box_ind", "image_size"],
            infer_crop_grad_image,
        ),
        OpDef::new(
            "CropAndResizeGradBoxes",
            &["grads", "image", "boxes", "box_ind"],
            infer_crop_grad_boxes,
        ),
        OpDef::new("DrawBoundingBoxes", &["images", "boxes"], infer_draw),
        OpDef::new(
            "DrawBoundingBoxesV2",
            &["images", "boxes", "colors"],
            infer_draw,
        ),
        OpDef::new(
            "SampleDistortedBoundingBox",
            &["image_size", "bounding_boxes"],
            infer_sample_distorted,
        )
        .stateful(),
        OpDef::new(
            "SampleDistortedBoundingBoxV2",
            &["image_size", "bounding_boxes", "min_object_covered"],
            infer_sample_distorted,
        )
        .stateful(),
        OpDef::new(
            "ExtractGlimpse",
            &["input", "size", "offsets"],
            infer_glimpse,
        )
        .stateful(),
        OpDef::new(
            "ExtractGlimpseV2",
            &["input", "size", "offsets"],
            infer_glimpse,
        )
        .stateful(),
    ]
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        ("NonMaxSuppression", nms_factory(NmsKind::V1)),
        ("NonMaxSuppressionV2", nms_factory(NmsKind::V2)),
        ("NonMaxSuppressionV3", nms_factory(NmsKind::V3)),
        ("NonMaxSuppressionV4", nms_factory(NmsKind::V4)),
        ("NonMaxSuppressionV5", nms_factory(NmsKind::V5)),
        (
            "NonMaxSuppressionWithOverlaps",
            nms_factory(NmsKind::Overlaps),
        ),
        (
            "CombinedNonMaxSuppression",
            factory(|init| {
                let pad_per_class = init.node.attrs.bool_or("pad_per_class", false)?;
                let clip = init.node.attrs.bool_or("clip_boxes", true)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    combined_nms_kernel(ctx, pad_per_class, clip)
                }))
            }),
        ),
        (
            "CropAndResize",
            factory(|init| {
                let method = crop_method(&init.node.attrs, true)?;
                let extrapolation = init.node.attrs.float_or("extrapolation_value", 0.0)? as f32;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    crop_and_resize_kernel(ctx, method, extrapolation)
                }))
            }),
        ),
        (
            "CropAndResizeGradImage",
            factory(|init| {
                let method = crop_method(&init.node.attrs, true)?;
                let t = init.node.attrs.dtype("T")?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    crop_grad_image_kernel(ctx, method, t)
                }))
            }),
        ),
        (
            "CropAndResizeGradBoxes",
            factory(|init| {
                crop_method(&init.node.attrs, false)?;
                Ok(Box::new(crop_grad_boxes_kernel))
            }),
        ),
        ("DrawBoundingBoxes", factory(|_| Ok(Box::new(draw_kernel)))),
        (
            "DrawBoundingBoxesV2",
            factory(|_| Ok(Box::new(draw_kernel))),
        ),
        (
            "SampleDistortedBoundingBox",
            factory(|init| sample_distorted_factory(init, false)),
        ),
        (
            "SampleDistortedBoundingBoxV2",
            factory(|init| sample_distorted_factory(init, true)),
        ),
        ("ExtractGlimpse", factory(|init| glimpse_factory(init, 1))),
        ("ExtractGlimpseV2", factory(|init| glimpse_factory(init, 2))),
    ]
}

// ------------------------------------------------------------------ helpers

/// Eigen's `numext::mini`: `b < a ? b : a` (NaN handling as in TensorFlow).
#[inline(always)]
fn mini(a: f32, b: f32) -> f32 {
    if b < a {
        b
    } else {
        a
    }
}

/// Eigen's `numext::maxi`: `a < b ? b : a`.
#[inline(always)]
fn maxi(a: f32, b: f32) -> f32 {
    if a < b {
        b
    } else {
        a
    }
}

/// A tensor's values as `f32` (a copy only when it holds another type).
fn as_f32(t: &Tensor) -> Result<Cow<'_, [f32]>> {
    if t.dtype() == DType::Float32 {
        return Ok(Cow::Borrowed(t.as_slice::<f32>()?));
    }
    let c = ferroflow_tensor::kernels::elementwise::cast(t, DType::Float32)?;
    Ok(Cow::Owned(c.into_vec::<f32>()?))
}

/// The single value of a 0-D input, after TensorFlow's "must be 0-D" check.
fn scalar_input(ctx: &OpContext<'_>, i: usize, what: &str, rank_note: bool) -> Result<f64> {
    let t = ctx.input(i)?;
    if t.rank() != 0 {
        let note = if rank_note {
            format!(" (Shape must be rank 0 but is rank {})", t.rank())
        } else {
            String::new()
        };
        bail!(
            invalid_argument,
            "{what} must be 0-D, got shape {}{note}",
            t.shape()
        );
    }
    t.scalar_f64()
}

/// Rounds to `float16` when the op computes in half precision.
#[inline(always)]
fn round_to(half: bool, v: f32) -> f32 {
    if half {
        f16::from_f32(v).to_f32()
    } else {
        v
    }
}

fn out_i32(v: Vec<i32>) -> Result<Tensor> {
    let n = v.len();
    Tensor::from_vec(vec![n], v)
}

// --------------------------------------------------------------- inference

/// Merges two possibly unknown dimensions ("Dimensions must be equal").
fn merge_dim(ctx: &InferContext, a: Option<usize>, b: Option<usize>) -> Result<Option<usize>> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => {
            Err(ctx.shape_error(format!("Dimensions must be equal, but are {x} and {y}")))
        }
        (Some(x), _) | (_, Some(x)) => Ok(Some(x)),
        _ => Ok(None),
    }
}

/// Requires a known dimension to equal `want` ("Dimension must be N").
fn expect_dim(ctx: &InferContext, d: Option<usize>, want: usize) -> Result<()> {
    match d {
        Some(v) if v != want => {
            Err(ctx.shape_error(format!("Dimension must be {want} but is {v}")))
        }
        _ => Ok(()),
    }
}

fn dim(ctx: &InferContext, i: usize, k: usize) -> Option<usize> {
    ctx.shape(i)
        .dims()
        .and_then(|d| d.get(k).copied().flatten())
}

fn infer_nms(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let op = ctx.def.name;
    let floats: &[DType] = if op == "NonMaxSuppression" {
        &[DType::Float32]
    } else {
        &[DType::Float16, DType::Float32]
    };
    let t = ctx.expect_dtype(0, floats)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_dtype(2, &[DType::Int32])?;
    for i in 3..ctx.num_inputs() {
        ctx.expect_dtype(i, &[DType::Float16, DType::Float32])?;
    }
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 1)?;
    for i in 2..ctx.num_inputs() {
        ctx.expect_rank(i, 0)?;
    }
    expect_dim(ctx, dim(ctx, 0, 1), 4)?;
    merge_dim(ctx, dim(ctx, 0, 0), dim(ctx, 1, 0))?;
    let pad = ctx.bool_or("pad_to_max_output_size", false)?;
    let n = if pad {
        ctx.const_ints(2)
            .and_then(|v| v.first().copied())
            .filter(|&v| v >= 0)
            .map(|v| v as usize)
    } else {
        None
    };
    let vec_shape = PartialShape::from_dims(vec![n]);
    let mut out = vec![OutputInfo::new(DType::Int32, vec_shape.clone())];
    match op {
        "NonMaxSuppressionV4" => out.push(OutputInfo::new(DType::Int32, PartialShape::scalar())),
        "NonMaxSuppressionV5" => {
            out.push(OutputInfo::new(t, vec_shape));
            out.push(OutputInfo::new(DType::Int32, PartialShape::scalar()));
        }
        _ => {}
    }
    Ok(out)
}

fn infer_nms_overlaps(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Float32])?;
    ctx.expect_dtype(1, &[DType::Float32])?;
    ctx.expect_dtype(2, &[DType::Int32])?;
    ctx.expect_dtype(3, &[DType::Float32])?;
    ctx.expect_dtype(4, &[DType::Float32])?;
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 1)?;
    for i in 2..5 {
        ctx.expect_rank(i, 0)?;
    }
    let n = merge_dim(ctx, dim(ctx, 0, 0), dim(ctx, 0, 1))?;
    merge_dim(ctx, n, dim(ctx, 1, 0))?;
    Ok(vec![OutputInfo::new(
        DType::Int32,
        PartialShape::from_dims(vec![None]),
    )])
}

fn infer_combined_nms(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    for (i, t) in [
        DType::Float32,
        DType::Float32,
        DType::Int32,
        DType::Int32,
        DType::Float32,
        DType::Float32,
    ]
    .into_iter()
    .enumerate()
    {
        ctx.expect_dtype(i, &[t])?;
    }
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 3)?;
    for i in 2..6 {
        ctx.expect_rank(i, 0)?;
    }
    let batch = merge_dim(ctx, dim(ctx, 0, 0), dim(ctx, 1, 0))?;
    merge_dim(ctx, dim(ctx, 0, 1), dim(ctx, 1, 1))?;
    expect_dim(ctx, dim(ctx, 0, 3), 4)?;
    let classes = dim(ctx, 1, 2);
    if let (Some(q), Some(c)) = (dim(ctx, 0, 2), classes) {
        if q != 1 && q != c {
            return Err(ctx.shape_error(
                "third dimension of boxes must be either 1 or equal to the third dimension of scores",
            ));
        }
    }
    let scalar = |i: usize| {
        ctx.const_ints(i)
            .and_then(|v| v.first().copied())
            .filter(|&v| v > 0)
    };
    let total = scalar(3);
    let size = if ctx.bool_or("pad_per_class", false)? {
        match (total, scalar(2), classes) {
            (Some(t), Some(p), Some(c)) => Some(t.min(p.saturating_mul(c as i64)) as usize),
            _ => None,
        }
    } else {
        total.map(|t| t as usize)
    };
    let f =
        |dims: Vec<Option<usize>>| OutputInfo::new(DType::Float32, PartialShape::from_dims(dims));
    Ok(vec![
        f(vec![batch, size, Some(4)]),
        f(vec![batch, size]),
        f(vec![batch, size]),
        OutputInfo::new(DType::Int32, PartialShape::from_dims(vec![batch])),
    ])
}

const CROP_TYPES: &[DType] = &[
    DType::UInt8,
    DType::UInt16,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::Float16,
    DType::Float32,
    DType::Float64,
];

fn infer_crop_and_resize(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, CROP_TYPES)?;
    ctx.expect_dtype(1, &[DType::Float32])?;
    ctx.expect_dtype(2, &[DType::Int32])?;
    ctx.expect_dtype(3, &[DType::Int32])?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 2)?;
    ctx.expect_rank(2, 1)?;
    ctx.expect_rank(3, 1)?;
    expect_dim(ctx, dim(ctx, 1, 1), 4)?;
    expect_dim(ctx, dim(ctx, 3, 0), 2)?;
    let n = merge_dim(ctx, dim(ctx, 1, 0), dim(ctx, 2, 0))?;
    let size = ctx.shape_value(3);
    let (h, w) = match size.dims() {
        Some(d) if d.len() == 2 => (d[0], d[1]),
        _ => (None, None),
    };
    Ok(vec![OutputInfo::new(
        DType::Float32,
        PartialShape::from_dims(vec![n, h, w, dim(ctx, 0, 3)]),
    )])
}

fn infer_crop_grad_image(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = ctx.type_attr("T")?;
    ensure!(
        matches!(t, DType::Float16 | DType::Float32 | DType::Float64),
        type_error,
        "Value for attr 'T' of {t} is not in the list of allowed values: half, float, double"
    );
    ctx.expect_dtype(0, &[DType::Float32])?;
    ctx.expect_dtype(1, &[DType::Float32])?;
    ctx.expect_dtype(2, &[DType::Int32])?;
    ctx.expect_dtype(3, &[DType::Int32])?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 2)?;
    ctx.expect_rank(2, 1)?;
    ctx.expect_rank(3, 1)?;
    expect_dim(ctx, dim(ctx, 3, 0), 4)?;
    let size = ctx.shape_value(3);
    let shape = match size.rank() {
        Some(4) => size,
        _ => PartialShape::unknown_dims(4),
    };
    Ok(vec![OutputInfo::new(t, shape)])
}

fn infer_crop_grad_boxes(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Float32])?;
    ctx.expect_dtype(1, CROP_TYPES)?;
    ctx.expect_dtype(2, &[DType::Float32])?;
    ctx.expect_dtype(3, &[DType::Int32])?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 4)?;
    ctx.expect_rank(2, 2)?;
    ctx.expect_rank(3, 1)?;
    Ok(vec![OutputInfo::new(
        DType::Float32,
        PartialShape::from_dims(vec![dim(ctx, 2, 0), Some(4)]),
    )])
}

fn infer_draw(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = ctx.expect_dtype(0, &[DType::Float32, DType::Float16])?;
    ctx.expect_dtype(1, &[DType::Float32])?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 3)?;
    expect_dim(ctx, dim(ctx, 1, 2), 4)?;
    if ctx.num_inputs() == 3 {
        ctx.expect_dtype(2, &[DType::Float32])?;
    }
    Ok(vec![OutputInfo::new(t, ctx.shape(0).clone())])
}

const SIZE_TYPES: &[DType] = &[
    DType::UInt8,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
];

fn infer_sample_distorted(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = ctx.expect_dtype(0, SIZE_TYPES)?;
    ctx.expect_dtype(1, &[DType::Float32])?;
    ctx.expect_rank(0, 1)?;
    expect_dim(ctx, dim(ctx, 0, 0), 3)?;
    ctx.expect_rank(1, 3)?;
    expect_dim(ctx, dim(ctx, 1, 2), 4)?;
    if ctx.num_inputs() == 3 {
        ctx.expect_dtype(2, &[DType::Float32])?;
        ctx.expect_rank(2, 0)?;
    }
    let v3 = PartialShape::from_dims(vec![Some(3)]);
    Ok(vec![
        OutputInfo::new(t, v3.clone()),
        OutputInfo::new(t, v3),
        OutputInfo::new(
            DType::Float32,
            PartialShape::from_dims(vec![Some(1), Some(1), Some(4)]),
        ),
    ])
}

fn infer_glimpse(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Float32])?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.expect_dtype(2, &[DType::Float32])?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 1)?;
    expect_dim(ctx, dim(ctx, 1, 0), 2)?;
    ctx.expect_rank(2, 2)?;
    let batch = merge_dim(ctx, dim(ctx, 0, 0), dim(ctx, 2, 0))?;
    expect_dim(ctx, dim(ctx, 2, 1), 2)?;
    let size = ctx.shape_value(1);
    let (h, w) = match size.dims() {
        Some(d) if d.len() == 2 => (d[0], d[1]),
        _ => (None, None),
    };
    Ok(vec![OutputInfo::new(
        DType::Float32,
        PartialShape::from_dims(vec![batch, h, w, dim(ctx, 0, 3)]),
    )])
}

// ------------------------------------------------------- non-max suppression

/// Boxes with their corners normalized (`y1 <= y2`, `x1 <= x2`, as
/// TensorFlow's IOU does per pair) and their areas, structure of arrays.
pub struct BoxTable {
    ymin: Vec<f32>,
    xmin: Vec<f32>,
    ymax: Vec<f32>,
    xmax: Vec<f32>,
    area: Vec<f32>,
    /// Whether every corner and area is finite.
    finite: bool,
}

impl BoxTable {
    /// Builds the table from `[n, 4]` boxes given as any two corners.
    pub fn new(boxes: &[f32]) -> BoxTable {
        let n = boxes.len() / 4;
        let mut t = BoxTable {
            ymin: Vec::with_capacity(n),
            xmin: Vec::with_capacity(n),
            ymax: Vec::with_capacity(n),
            xmax: Vec::with_capacity(n),
            area: Vec::with_capacity(n),
            finite: true,
        };
        for b in boxes.chunks_exact(4) {
            let (y0, x0) = (mini(b[0], b[2]), mini(b[1], b[3]));
            let (y1, x1) = (maxi(b[0], b[2]), maxi(b[1], b[3]));
            let a = (y1 - y0) * (x1 - x0);
            t.finite &= y0.is_finite() && x0.is_finite() && y1.is_finite() && x1.is_finite();
            t.finite &= a.is_finite();
            t.ymin.push(y0);
            t.xmin.push(x0);
            t.ymax.push(y1);
            t.xmax.push(x1);
            t.area.push(a);
        }
        t
    }

    /// TensorFlow's intersection-over-union of boxes `i` and `j`.
    #[inline]
    pub fn iou(&self, i: usize, j: usize) -> f32 {
        let (ai, aj) = (self.area[i], self.area[j]);
        if ai <= 0.0 || aj <= 0.0 {
            return 0.0;
        }
        let iy0 = maxi(self.ymin[i], self.ymin[j]);
        let ix0 = maxi(self.xmin[i], self.xmin[j]);
        let iy1 = mini(self.ymax[i], self.ymax[j]);
        let ix1 = mini(self.xmax[i], self.xmax[j]);
        let inter = maxi(iy1 - iy0, 0.0) * maxi(ix1 - ix0, 0.0);
        inter / (ai + aj - inter)
    }
}

/// How two candidates are compared in non-max suppression.
pub enum Similarity<'a> {
    /// Intersection over union of boxes.
    Iou(&'a BoxTable),
    /// A given `[n, n]` overlap matrix (row: candidate, column: selected).
    Matrix(&'a [f32], usize),
}

impl Similarity<'_> {
    #[inline]
    fn get(&self, i: usize, j: usize) -> f32 {
        match self {
            Similarity::Iou(t) => t.iou(i, j),
            Similarity::Matrix(m, n) => m[i * n + j],
        }
    }
}

/// The settings of one non-max suppression.
#[derive(Clone, Copy, Debug)]
pub struct NmsParams {
    /// At most this many boxes are selected.
    pub max_output_size: usize,
    /// Overlap above which a candidate is suppressed (hard NMS).
    pub iou_threshold: f32,
    /// Candidates must score above this.
    pub score_threshold: f32,
    /// Soft-NMS Gaussian sigma; 0 means hard NMS.
    pub soft_nms_sigma: f32,
    /// Whether the op computes in `float16` (scores and thresholds rounded).
    pub half: bool,
}

/// Greedy non-max suppression with TensorFlow's selection order; returns
/// the selected indices and their (possibly soft-suppressed) scores.
pub fn non_max_suppression(
    scores: &[f32],
    sim: &Similarity<'_>,
    p: &NmsParams,
) -> (Vec<i32>, Vec<f32>) {
    let soft = p.soft_nms_sigma > 0.0;
    if let Similarity::Iou(table) = sim {
        if !soft && !p.half && table.finite {
            return hard_nms_sorted(scores, table, p);
        }
    }
    nms_queue(scores, sim, p)
}

/// Hard NMS on finite boxes: one sort, then each candidate against the
/// selected boxes (newest first) held as arrays with their areas.
fn hard_nms_sorted(scores: &[f32], t: &BoxTable, p: &NmsParams) -> (Vec<i32>, Vec<f32>) {
    let mut order: Vec<u32> = (0..scores.len() as u32)
        .filter(|&i| scores[i as usize] > p.score_threshold)
        .collect();
    // Highest score first, ties by lower index (TensorFlow's queue order);
    // scores above a threshold are never NaN, so this is a total order.
    let before = |a: &u32, b: &u32| {
        scores[*b as usize]
            .partial_cmp(&scores[*a as usize])
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(b))
    };
    let cap = p.max_output_size.min(order.len());
    let mut sel = Vec::with_capacity(cap);
    let mut sel_scores = Vec::with_capacity(cap);
    // The selected boxes with a positive area; boxes of zero area never
    // suppress (TensorFlow's IOU is 0 for them).
    let (mut y0, mut x0, mut y1, mut x1, mut ar) = (
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
    );
    let thr = p.iou_threshold;
    // Only the best candidates are ever looked at when few boxes are
    // wanted: sort the top `chunk` of what is left, go through them, and
    // take a (twice larger) next chunk only if needed.
    let mut start = 0;
    let mut chunk = (4 * p.max_output_size).max(256);
    while start < order.len() && sel.len() < p.max_output_size {
        let end = (start + chunk).min(order.len());
        if end < order.len() {
            order[start..].select_nth_unstable_by(end - start - 1, before);
        }
        order[start..end].sort_unstable_by(before);
        for &c in &order[start..end] {
            if sel.len() >= p.max_output_size {
                break;
            }
            let c = c as usize;
            let ac = t.area[c];
            let mut keep = true;
            if ac > 0.0 {
                let (cy0, cx0, cy1, cx1) = (t.ymin[c], t.xmin[c], t.ymax[c], t.xmax[c]);
                for j in (0..ar.len()).rev() {
                    let ih = mini(cy1, y1[j]) - maxi(cy0, y0[j]);
                    let iw = mini(cx1, x1[j]) - maxi(cx0, x0[j]);
                    if ih <= 0.0 || iw <= 0.0 {
                        continue;
                    }
                    let inter = ih * iw;
                    let iou = inter / (ac + ar[j] - inter);
                    if iou > thr {
                        keep = false;
                        break;
                    }
                }
            }
            if keep {
                sel.push(c as i32);
                sel_scores.push(scores[c]);
                if ac > 0.0 {
                    y0.push(t.ymin[c]);
                    x0.push(t.xmin[c]);
                    y1.push(t.ymax[c]);
                    x1.push(t.xmax[c]);
                    ar.push(ac);
                }
            }
        }
        start = end;
        chunk *= 2;
    }
    (sel, sel_scores)
}

/// A candidate in the priority queue.
#[derive(Clone, Copy)]
struct Candidate {
    index: usize,
    score: f32,
    suppress_begin: usize,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    /// Greater = leaves the queue first: higher score, then lower index.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.score
            .partial_cmp(&other.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(other.index.cmp(&self.index))
    }
}

/// TensorFlow's `DoNonMaxSuppressionOp`, step by step (soft-NMS, half
/// precision, overlap matrices, non-finite boxes).
fn nms_queue(scores: &[f32], sim: &Similarity<'_>, p: &NmsParams) -> (Vec<i32>, Vec<f32>) {
    let r = |v: f32| round_to(p.half, v);
    let mut queue: BinaryHeap<Candidate> = scores
        .iter()
        .enumerate()
        .filter(|(_, &s)| s > p.score_threshold)
        .map(|(index, &score)| Candidate {
            index,
            score,
            suppress_begin: 0,
        })
        .collect();
    let soft = p.soft_nms_sigma > 0.0;
    let scale = if soft {
        r(-0.5 / p.soft_nms_sigma)
    } else {
        0.0
    };
    let weight = |s: f32| {
        let w = r(r(r(scale * s) * s).exp());
        if soft || s <= p.iou_threshold {
            w
        } else {
            0.0
        }
    };
    let mut selected: Vec<i32> = Vec::new();
    let mut selected_scores = Vec::new();
    while selected.len() < p.max_output_size {
        let Some(mut c) = queue.pop() else { break };
        let original = c.score;
        let mut hard = false;
        for j in (c.suppress_begin..selected.len()).rev() {
            let s = r(sim.get(c.index, selected[j] as usize));
            c.score = r(c.score * weight(s));
            if !soft && s > p.iou_threshold {
                hard = true;
                break;
            }
            if c.score <= p.score_threshold {
                break;
            }
        }
        c.suppress_begin = selected.len();
        if !hard {
            if c.score == original {
                selected.push(c.index as i32);
                selected_scores.push(c.score);
                continue;
            }
            if c.score > p.score_threshold {
                queue.push(c);
            }
        }
    }
    (selected, selected_scores)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum NmsKind {
    V1,
    V2,
    V3,
    V4,
    V5,
    Overlaps,
}

fn nms_factory(kind: NmsKind) -> KernelFactory {
    factory(move |init| {
        let a = &init.node.attrs;
        let iou_attr = if kind == NmsKind::V1 {
            a.float_or("iou_threshold", 0.5)? as f32
        } else {
            0.0
        };
        let pad = a.bool_or("pad_to_max_output_size", false)?;
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            nms_kernel(ctx, kind, iou_attr, pad)
        }))
    })
}

fn check_boxes_2d(boxes: &Tensor) -> Result<usize> {
    ensure!(
        boxes.rank() == 2,
        invalid_argument,
        "boxes must be 2-D{} (Shape must be rank 2 but is rank {})",
        boxes.shape(),
        boxes.rank()
    );
    ensure!(
        boxes.dims()[1] == 4,
        invalid_argument,
        "boxes must have 4 columns (Dimension must be 4 but is {})",
        boxes.dims()[1]
    );
    Ok(boxes.dims()[0])
}

fn check_scores(scores: &Tensor, n: usize) -> Result<()> {
    ensure!(
        scores.rank() == 1,
        invalid_argument,
        "scores must be 1-D{} (Shape must be rank 1 but is rank {})",
        scores.shape(),
        scores.rank()
    );
    ensure!(
        scores.dims()[0] == n,
        invalid_argument,
        "scores has incompatible shape (Dimensions must be equal, but are {n} and {})",
        scores.dims()[0]
    );
    Ok(())
}

fn nms_kernel(ctx: &mut OpContext<'_>, kind: NmsKind, iou_attr: f32, pad: bool) -> Result<()> {
    use NmsKind::*;
    let mos = scalar_input(ctx, 2, "max_output_size", kind == V3)?;
    let half = ctx.input(0)?.dtype() == DType::Float16;
    let r = |v: f64| round_to(half, v as f32);
    let iou = match kind {
        V1 => iou_attr,
        Overlaps => scalar_input(ctx, 3, "overlap_threshold", false)? as f32,
        _ => r(scalar_input(ctx, 3, "iou_threshold", kind == V3)?),
    };
    if kind != Overlaps && !(0.0..=1.0).contains(&iou) {
        bail!(invalid_argument, "iou_threshold must be in [0, 1]");
    }
    let score_threshold = match kind {
        V1 | V2 => f32::MIN,
        _ => r(scalar_input(ctx, 4, "score_threshold", false)?),
    };
    let sigma = if kind == V5 {
        let s = r(scalar_input(ctx, 5, "soft_nms_sigma", false)?);
        if s < 0.0 {
            bail!(invalid_argument, "soft_nms_sigma_val must be >= 0");
        }
        s
    } else {
        0.0
    };
    let first = ctx.input(0)?;
    let n = if kind == Overlaps {
        ensure!(
            first.rank() == 2,
            invalid_argument,
            "overlaps must be 2-D{}",
            first.shape()
        );
        ensure!(
            first.dims()[1] == first.dims()[0],
            invalid_argument,
            "overlaps must be square{}",
            first.shape()
        );
        first.dims()[0]
    } else {
        check_boxes_2d(first)?
    };
    let scores_t = ctx.input(1)?;
    check_scores(scores_t, n)?;
    let out_size = mos as i64;
    if out_size < 0 {
        bail!(invalid_argument, "output size must be non-negative");
    }
    let data = as_f32(first)?;
    let scores = as_f32(scores_t)?;
    let params = NmsParams {
        max_output_size: out_size as usize,
        iou_threshold: iou,
        score_threshold,
        soft_nms_sigma: sigma,
        half,
    };
    let (mut idx, mut sc) = if kind == Overlaps {
        non_max_suppression(&scores, &Similarity::Matrix(&data, n), &params)
    } else {
        let table = BoxTable::new(&data);
        non_max_suppression(&scores, &Similarity::Iou(&table), &params)
    };
    let valid = idx.len() as i32;
    if pad {
        idx.resize(params.max_output_size, 0);
        sc.resize(params.max_output_size, 0.0);
    }
    ctx.output(out_i32(idx)?);
    if kind == V5 {
        let n = sc.len();
        let t = Tensor::from_vec(vec![n], sc)?;
        let t = if half {
            ferroflow_tensor::kernels::elementwise::cast(&t, DType::Float16)?
        } else {
            t
        };
        ctx.output(t);
    }
    if kind == V4 || kind == V5 {
        ctx.output(Tensor::scalar(valid));
    }
    Ok(())
}

// ---------------------------------------------------- combined suppression

/// One selected box of one class.
#[derive(Clone, Copy, Debug)]
struct ResultCandidate {
    index: i32,
    score: f32,
    class: i32,
    coords: [f32; 4],
}

const NO_RESULT: ResultCandidate = ResultCandidate {
    index: -1,
    score: f32::NEG_INFINITY,
    class: -1,
    coords: [0.0; 4],
};

/// A score-only max-heap with libstdc++'s `std::priority_queue` layout, so
/// that equal scores leave in the order TensorFlow's queue gives them.
struct StdHeap {
    v: Vec<(usize, f32)>,
}

impl StdHeap {
    fn less(a: (usize, f32), b: (usize, f32)) -> bool {
        a.1 < b.1
    }

    fn sift_up(&mut self, mut hole: usize, top: usize, value: (usize, f32)) {
        while hole > top {
            let parent = (hole - 1) / 2;
            if !Self::less(self.v[parent], value) {
                break;
            }
            self.v[hole] = self.v[parent];
            hole = parent;
        }
        self.v[hole] = value;
    }

    fn push(&mut self, value: (usize, f32)) {
        self.v.push(value);
        let hole = self.v.len() - 1;
        self.sift_up(hole, 0, value);
    }

    fn pop(&mut self) -> Option<(usize, f32)> {
        let len = self.v.len();
        if len == 0 {
            return None;
        }
        let top = self.v[0];
        let value = self.v[len - 1];
        self.v[len - 1] = top;
        let n = len - 1;
        // __adjust_heap(first, 0, n, value)
        let mut hole = 0usize;
        let mut child = 0usize;
        if n > 0 {
            while child < (n - 1) / 2 {
                child = 2 * (child + 1);
                if Self::less(self.v[child], self.v[child - 1]) {
                    child -= 1;
                }
                self.v[hole] = self.v[child];
                hole = child;
            }
            if n.is_multiple_of(2) && child == (n - 2) / 2 {
                child = 2 * (child + 1);
                self.v[hole] = self.v[child - 1];
                hole = child - 1;
            }
            self.sift_up(hole, 0, value);
        }
        self.v.pop();
        Some(top)
    }
}

#[inline]
fn iou_flat(b: &[f32], i: usize, j: usize) -> f32 {
    let (ymin_i, xmin_i) = (mini(b[i], b[i + 2]), mini(b[i + 1], b[i + 3]));
    let (ymax_i, xmax_i) = (maxi(b[i], b[i + 2]), maxi(b[i + 1], b[i + 3]));
    let (ymin_j, xmin_j) = (mini(b[j], b[j + 2]), mini(b[j + 1], b[j + 3]));
    let (ymax_j, xmax_j) = (maxi(b[j], b[j + 2]), maxi(b[j + 1], b[j + 3]));
    let area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
    let area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
    if area_i <= 0.0 || area_j <= 0.0 {
        return 0.0;
    }
    let inter = maxi(mini(ymax_i, ymax_j) - maxi(ymin_i, ymin_j), 0.0)
        * maxi(mini(xmax_i, xmax_j) - maxi(xmin_i, xmin_j), 0.0);
    inter / (area_i + area_j - inter)
}

/// The shape of a combined suppression: `[batch, boxes, q, 4]` boxes and
/// `[batch, boxes, classes]` scores.
#[derive(Clone, Copy, Debug)]
pub struct CombinedShape {
    pub batch: usize,
    pub num_boxes: usize,
    pub q: usize,
    pub num_classes: usize,
}

/// The outputs of `CombinedNonMaxSuppression`.
#[derive(Clone, Debug, PartialEq)]
pub struct CombinedResult {
    /// Detections per image (padded).
    pub per_batch: usize,
    pub boxes: Vec<f32>,
    pub scores: Vec<f32>,
    pub classes: Vec<f32>,
    pub valid: Vec<i32>,
}

/// TensorFlow's `CombinedNonMaxSuppression`: NMS per image and class (in
/// parallel), then the best `max_total_size` over classes per image.
#[allow(clippy::too_many_arguments)]
pub fn combined_non_max_suppression(
    boxes: &[f32],
    scores: &[f32],
    s: CombinedShape,
    max_per_class: usize,
    max_total: usize,
    iou_threshold: f32,
    score_threshold: f32,
    pad_per_class: bool,
    clip: bool,
) -> Result<CombinedResult> {
    let size_per_class = max_per_class.min(s.num_boxes);
    let slots = size_per_class
        .checked_mul(s.num_classes)
        .filter(|&v| v <= i32::MAX as usize)
        .ok_or_else(|| Error::invalid_argument("size_per_class * num_classes causes overflow"))?;
    let mut results = vec![NO_RESULT; s.batch * slots];
    let boxes_per_batch = s.num_boxes * s.q * 4;
    let scores_per_batch = s.num_boxes * s.num_classes;
    if size_per_class > 0 {
        let per_class = |task: usize, out: &mut [ResultCandidate]| {
            let (b, c) = (task / s.num_classes, task % s.num_classes);
            let bx = &boxes[b * boxes_per_batch..(b + 1) * boxes_per_batch];
            let sc = &scores[b * scores_per_batch..(b + 1) * scores_per_batch];
            let mut heap = StdHeap { v: Vec::new() };
            for i in 0..s.num_boxes {
                let v = sc[i * s.num_classes + c];
                if v > score_threshold {
                    heap.push((i, v));
                }
            }
            let class_box = if s.q > 1 { c } else { 0 };
            let mut selected: Vec<usize> = Vec::new();
            while selected.len() < size_per_class {
                let Some((i, v)) = heap.pop() else { break };
                let ci = (i * s.q + class_box) * 4;
                let keep = selected
                    .iter()
                    .rev()
                    .all(|&j| iou_flat(bx, ci, (j * s.q + class_box) * 4) <= iou_threshold);
                if keep {
                    out[selected.len()] = ResultCandidate {
                        index: i as i32,
                        score: v,
                        class: c as i32,
                        coords: [bx[ci], bx[ci + 1], bx[ci + 2], bx[ci + 3]],
                    };
                    selected.push(i);
                }
            }
        };
        team::for_each_chunk_mut(&mut results, size_per_class, per_class);
    }
    let max_total_classes =
        (max_per_class as u64 * s.num_classes as u64).min(i32::MAX as u64) as usize;
    let per_batch = if pad_per_class {
        max_total.min(max_total_classes)
    } else {
        max_total
    };
    let mut out = CombinedResult {
        per_batch,
        boxes: vec![0.0; s.batch * per_batch * 4],
        scores: vec![0.0; s.batch * per_batch],
        classes: vec![0.0; s.batch * per_batch],
        valid: vec![0; s.batch],
    };
    for b in 0..s.batch {
        let cands = &mut results[b * slots..(b + 1) * slots];
        // Stable: equal scores keep class order, then rank within the class
        // (libstdc++'s std::sort does the same below 17 elements).
        cands.sort_by(|x, y| {
            y.score
                .partial_cmp(&x.score)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let found = cands.iter().filter(|r| r.index > -1).count();
        let take = if pad_per_class {
            per_batch.min(found)
        } else {
            found.min(max_total)
        };
        out.valid[b] = take as i32;
        for (k, r) in cands.iter().take(take).enumerate() {
            let o = b * per_batch + k;
            for d in 0..4 {
                let v = r.coords[d];
                out.boxes[o * 4 + d] = if clip { maxi(mini(v, 1.0), 0.0) } else { v };
            }
            out.scores[o] = r.score;
            out.classes[o] = r.class as f32;
        }
    }
    Ok(out)
}

fn combined_nms_kernel(ctx: &mut OpContext<'_>, pad_per_class: bool, clip: bool) -> Result<()> {
    let boxes = ctx.input(0)?;
    let scores = ctx.input(1)?;
    ensure!(
        boxes.rank() == 4,
        invalid_argument,
        "boxes must be 4-D [batch, num_boxes, q, 4], got shape {}",
        boxes.shape()
    );
    ensure!(
        scores.rank() == 3,
        invalid_argument,
        "scores must be 3-D [batch, num_boxes, num_classes], got shape {}",
        scores.shape()
    );
    let (bd, sd) = (boxes.dims(), scores.dims());
    let shape = CombinedShape {
        batch: bd[0],
        num_boxes: bd[1],
        q: bd[2],
        num_classes: sd[2],
    };
    if shape.q != 1 && shape.q != shape.num_classes {
        bail!(
            invalid_argument,
            "third dimension of boxes must be either 1 or num classes"
        );
    }
    ensure!(bd[3] == 4, invalid_argument, "boxes must have 4 columns");
    ensure!(
        sd[1] == shape.num_boxes,
        invalid_argument,
        "scores has incompatible shape"
    );
    ensure!(
        sd[0] == bd[0],
        invalid_argument,
        "boxes and scores must have same batch size"
    );
    let per_class = scalar_input(ctx, 2, "max_size_per_class", false)? as i64;
    if per_class <= 0 {
        bail!(invalid_argument, "max_size_per_class must be positive");
    }
    let total = scalar_input(ctx, 3, "max_total_size", false)? as i64;
    if total <= 0 {
        bail!(invalid_argument, "max_total_size must be > 0");
    }
    let iou = scalar_input(ctx, 4, "iou_threshold", false)? as f32;
    let score_thr = scalar_input(ctx, 5, "score_threshold", false)? as f32;
    if !(0.0..=1.0).contains(&iou) {
        bail!(invalid_argument, "iou_threshold must be in [0, 1]");
    }
    let b = as_f32(boxes)?;
    let s = as_f32(scores)?;
    let r = combined_non_max_suppression(
        &b,
        &s,
        shape,
        per_class as usize,
        total as usize,
        iou,
        score_thr,
        pad_per_class,
        clip,
    )?;
    let (n, k) = (shape.batch, r.per_batch);
    ctx.output(Tensor::from_vec(vec![n, k, 4], r.boxes)?);
    ctx.output(Tensor::from_vec(vec![n, k], r.scores)?);
    ctx.output(Tensor::from_vec(vec![n, k], r.classes)?);
    ctx.output(Tensor::from_vec(vec![n], r.valid)?);
    Ok(())
}

// ---------------------------------------------------------- crop and resize

/// Sampling of `CropAndResize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CropMethod {
    Bilinear,
    Nearest,
}

fn crop_method(attrs: &ferroflow_graph::Attrs, nearest_ok: bool) -> Result<CropMethod> {
    let m = attrs.str_or("method", "bilinear")?;
    match m.as_str() {
        "bilinear" => Ok(CropMethod::Bilinear),
        "nearest" if nearest_ok => Ok(CropMethod::Nearest),
        _ if nearest_ok => Err(Error::invalid_argument(format!(
            "method must be 'bilinear' or 'nearest'{m}"
        ))),
        _ => Err(Error::invalid_argument(format!(
            "method must be 'bilinear'{m}"
        ))),
    }
}

/// The geometry of a crop: image `[batch, height, width, depth]`, crops
/// `[boxes, crop_height, crop_width, depth]`.
#[derive(Clone, Copy, Debug)]
pub struct CropGeometry {
    pub batch: usize,
    pub height: usize,
    pub width: usize,
    pub depth: usize,
    pub crop_height: usize,
    pub crop_width: usize,
}

/// Where row (or column) `y` of a crop samples the image, as TensorFlow
/// computes it (`None`: outside the image).
#[inline]
fn sample_pos(y: usize, c1: f32, c2: f32, scale: f32, crop: usize, size: usize) -> Option<f32> {
    let last = (size as i64 - 1) as f32;
    let v = if crop > 1 {
        c1 * last + y as f32 * scale
    } else {
        // TensorFlow's `0.5 * (y1 + y2) * (image_height - 1)` is in double.
        (0.5 * (c1 + c2) as f64 * (size as i64 - 1) as f64) as f32
    };
    if v < 0.0 || v > last {
        None
    } else {
        Some(v)
    }
}

#[inline]
fn crop_scale(c1: f32, c2: f32, crop: usize, size: usize) -> f32 {
    if crop > 1 {
        (c2 - c1) * (size as i64 - 1) as f32 / (crop as i64 - 1) as f32
    } else {
        0.0
    }
}

/// `CropAndResize` on a float copy of the image; boxes must be finite and
/// box indices in range (checked by the kernel).
pub fn crop_and_resize(
    image: &[f32],
    boxes: &[f32],
    box_ind: &[i32],
    g: CropGeometry,
    method: CropMethod,
    extrapolation: f32,
) -> Vec<f32> {
    let per_box = g.crop_height * g.crop_width * g.depth;
    let mut out = vec![0f32; box_ind.len() * per_box];
    let row = g.width * g.depth;
    let img_len = g.height * row;
    parallel::for_rows(&mut out, per_box.max(1), |first, chunk| {
        for (k, crop) in chunk.chunks_mut(per_box.max(1)).enumerate() {
            let b = first + k;
            let bx = &boxes[b * 4..b * 4 + 4];
            let (y1, x1, y2, x2) = (bx[0], bx[1], bx[2], bx[3]);
            let bi = box_ind[b] as usize;
            let img = &image[bi * img_len..(bi + 1) * img_len];
            let hs = crop_scale(y1, y2, g.crop_height, g.height);
            let ws = crop_scale(x1, x2, g.crop_width, g.width);
            for y in 0..g.crop_height {
                let orow = &mut crop[y * g.crop_width * g.depth..(y + 1) * g.crop_width * g.depth];
                let Some(in_y) = sample_pos(y, y1, y2, hs, g.crop_height, g.height) else {
                    orow.fill(extrapolation);
                    continue;
                };
                let (top, bottom) = (in_y.floor() as usize, in_y.ceil() as usize);
                let y_lerp = in_y - top as f32;
                for x in 0..g.crop_width {
                    let o = &mut orow[x * g.depth..(x + 1) * g.depth];
                    let Some(in_x) = sample_pos(x, x1, x2, ws, g.crop_width, g.width) else {
                        o.fill(extrapolation);
                        continue;
                    };
                    match method {
                        CropMethod::Bilinear => {
                            let (left, right) = (in_x.floor() as usize, in_x.ceil() as usize);
                            let x_lerp = in_x - left as f32;
                            let tl = &img[top * row + left * g.depth..][..g.depth];
                            let tr = &img[top * row + right * g.depth..][..g.depth];
                            let bl = &img[bottom * row + left * g.depth..][..g.depth];
                            let br = &img[bottom * row + right * g.depth..][..g.depth];
                            for d in 0..g.depth {
                                let t = tl[d] + (tr[d] - tl[d]) * x_lerp;
                                let bo = bl[d] + (br[d] - bl[d]) * x_lerp;
                                o[d] = t + (bo - t) * y_lerp;
                            }
                        }
                        CropMethod::Nearest => {
                            let cx = in_x.round() as usize;
                            let cy = in_y.round() as usize;
                            o.copy_from_slice(&img[cy * row + cx * g.depth..][..g.depth]);
                        }
                    }
                }
            }
        }
    });
    out
}

/// TensorFlow's box checks shared by the crop ops; returns the box count.
fn check_crop_boxes(boxes: &Tensor, box_ind: &Tensor) -> Result<usize> {
    if boxes.num_elements() == 0 && box_ind.num_elements() == 0 {
        return Ok(0);
    }
    ensure!(
        boxes.rank() == 2,
        invalid_argument,
        "boxes must be 2-D{}",
        boxes.shape()
    );
    let n = boxes.dims()[0];
    ensure!(
        boxes.dims()[1] == 4,
        invalid_argument,
        "boxes must have 4 columns"
    );
    ensure!(
        box_ind.rank() == 1,
        invalid_argument,
        "box_index must be 1-D{}",
        box_ind.shape()
    );
    ensure!(
        box_ind.dims()[0] == n,
        invalid_argument,
        "box_index has incompatible shape"
    );
    Ok(n)
}

fn check_box_ind(box_ind: &[i32], batch: usize) -> Result<()> {
    if box_ind.iter().any(|&b| b < 0 || b as usize >= batch) {
        bail!(out_of_range, "box_index has values outside [0, batch_size)");
    }
    Ok(())
}

fn crop_and_resize_kernel(
    ctx: &mut OpContext<'_>,
    method: CropMethod,
    extrapolation: f32,
) -> Result<()> {
    let image = ctx.input(0)?;
    let boxes = ctx.input(1)?;
    let box_ind = ctx.input(2)?;
    let crop_size = ctx.input(3)?;
    ensure!(
        image.rank() == 4,
        invalid_argument,
        "input image must be 4-D{}",
        image.shape()
    );
    let d = image.dims();
    if d[1] == 0 || d[2] == 0 {
        bail!(invalid_argument, "image dimensions must be positive");
    }
    ensure!(
        boxes.rank() == 2,
        invalid_argument,
        "boxes must be 2-D, got: {}",
        boxes.shape()
    );
    ensure!(
        box_ind.rank() == 1,
        invalid_argument,
        "box_indices must be rank 1 but is shape {}",
        box_ind.shape()
    );
    let n = check_crop_boxes(boxes, box_ind)?;
    ensure!(
        crop_size.rank() == 1,
        invalid_argument,
        "crop_size must be 1-D{}",
        crop_size.shape()
    );
    ensure!(
        crop_size.dims()[0] == 2,
        invalid_argument,
        "crop_size must have two elements{}",
        crop_size.shape()
    );
    let cs = crop_size.as_slice::<i32>()?;
    if cs[0] <= 0 || cs[1] <= 0 {
        bail!(invalid_argument, "crop dimensions must be positive");
    }
    let bi = box_ind.as_slice::<i32>()?;
    check_box_ind(&bi[..n], d[0])?;
    let bx = boxes.as_slice::<f32>()?;
    if bx.iter().any(|v| !v.is_finite()) {
        bail!(
            invalid_argument,
            "Boxes contains at least one element that is not finite"
        );
    }
    let g = CropGeometry {
        batch: d[0],
        height: d[1],
        width: d[2],
        depth: d[3],
        crop_height: cs[0] as usize,
        crop_width: cs[1] as usize,
    };
    let img = as_f32(image)?;
    let out = crop_and_resize(&img, bx, &bi[..n], g, method, extrapolation);
    ctx.output(Tensor::from_vec(
        vec![n, g.crop_height, g.crop_width, g.depth],
        out,
    )?);
    Ok(())
}

/// An accumulator type of `CropAndResizeGradImage` (TensorFlow adds each
/// contribution in the output type).
trait GradAcc: Copy + Default + Send + Sync {
    fn add(self, v: f32) -> Self;
}
impl GradAcc for f32 {
    #[inline]
    fn add(self, v: f32) -> f32 {
        self + v
    }
}
impl GradAcc for f64 {
    #[inline]
    fn add(self, v: f32) -> f64 {
        self + v as f64
    }
}
impl GradAcc for f16 {
    #[inline]
    fn add(self, v: f32) -> f16 {
        f16::from_f32(self.to_f32() + f16::from_f32(v).to_f32())
    }
}

#[allow(clippy::needless_range_loop)]
/// `CropAndResizeGradImage`: scatters `grads` back onto the image. Each
/// image of the batch sums its boxes in box order (parallel over images).
fn crop_grad_image_into<T: GradAcc>(
    grads: &[f32],
    boxes: &[f32],
    box_ind: &[i32],
    g: CropGeometry,
    method: CropMethod,
) -> Vec<T> {
    let row = g.width * g.depth;
    let img_len = g.height * row;
    let mut out = vec![T::default(); g.batch * img_len];
    let per_box = g.crop_height * g.crop_width * g.depth;
    parallel::for_rows(&mut out, img_len.max(1), |first, chunk| {
        for (k, img) in chunk.chunks_mut(img_len.max(1)).enumerate() {
            let image_index = (first + k) as i32;
            for (b, _) in box_ind
                .iter()
                .enumerate()
                .filter(|(_, &i)| i == image_index)
            {
                let bx = &boxes[b * 4..b * 4 + 4];
                let (y1, x1, y2, x2) = (bx[0], bx[1], bx[2], bx[3]);
                let gb = &grads[b * per_box..(b + 1) * per_box];
                let hs = crop_scale(y1, y2, g.crop_height, g.height);
                let ws = crop_scale(x1, x2, g.crop_width, g.width);
                for y in 0..g.crop_height {
                    let Some(in_y) = sample_pos(y, y1, y2, hs, g.crop_height, g.height) else {
                        continue;
                    };
                    let (top, bottom) = (in_y.floor() as usize, in_y.ceil() as usize);
                    let y_lerp = in_y - top as f32;
                    for x in 0..g.crop_width {
                        let Some(in_x) = sample_pos(x, x1, x2, ws, g.crop_width, g.width) else {
                            continue;
                        };
                        let gp = &gb[(y * g.crop_width + x) * g.depth..][..g.depth];
                        match method {
                            CropMethod::Bilinear => {
                                let (left, right) = (in_x.floor() as usize, in_x.ceil() as usize);
                                let x_lerp = in_x - left as f32;
                                for d in 0..g.depth {
                                    let dtop = (1.0 - y_lerp) * gp[d];
                                    let i = top * row + left * g.depth + d;
                                    img[i] = img[i].add((1.0 - x_lerp) * dtop);
                                    let i = top * row + right * g.depth + d;
                                    img[i] = img[i].add(x_lerp * dtop);
                                    let dbottom = y_lerp * gp[d];
                                    let i = bottom * row + left * g.depth + d;
                                    img[i] = img[i].add((1.0 - x_lerp) * dbottom);
                                    let i = bottom * row + right * g.depth + d;
                                    img[i] = img[i].add(x_lerp * dbottom);
                                }
                            }
                            CropMethod::Nearest => {
                                let cx = in_x.round() as usize;
                                let cy = in_y.round() as usize;
                                for d in 0..g.depth {
                                    let i = cy * row + cx * g.depth + d;
                                    img[i] = img[i].add(gp[d]);
                                }
                            }
                        }
                    }
                }
            }
        }
    });
    out
}

/// `CropAndResizeGradImage` in `float32` (see the kernel for other types).
pub fn crop_and_resize_grad_image(
    grads: &[f32],
    boxes: &[f32],
    box_ind: &[i32],
    g: CropGeometry,
    method: CropMethod,
) -> Vec<f32> {
    crop_grad_image_into::<f32>(grads, boxes, box_ind, g, method)
}

fn crop_grad_image_kernel(ctx: &mut OpContext<'_>, method: CropMethod, t: DType) -> Result<()> {
    let grads = ctx.input(0)?;
    let boxes = ctx.input(1)?;
    let box_ind = ctx.input(2)?;
    let image_size = ctx.input(3)?;
    ensure!(
        grads.rank() == 4,
        invalid_argument,
        "grads image must be 4-D{}",
        grads.shape()
    );
    let gd = grads.dims();
    if gd[1] == 0 || gd[2] == 0 {
        bail!(invalid_argument, "grads dimensions must be positive");
    }
    let n = check_crop_boxes(boxes, box_ind)?;
    ensure!(
        gd[0] == n,
        invalid_argument,
        "boxes and grads have incompatible shape"
    );
    ensure!(
        image_size.rank() == 1,
        invalid_argument,
        "image_size must be 1-D{}",
        image_size.shape()
    );
    ensure!(
        image_size.dims()[0] == 4,
        invalid_argument,
        "image_size must have 4 elements{}",
        image_size.shape()
    );
    let sz = image_size.as_slice::<i32>()?;
    if sz[1] <= 0 || sz[2] <= 0 {
        bail!(invalid_argument, "image dimensions must be positive");
    }
    if sz[0] < 0 || sz[3] < 0 {
        bail!(
            invalid_argument,
            "Dimension {} must be >= 0",
            sz[0].min(sz[3])
        );
    }
    if gd[3] != sz[3] as usize {
        bail!(invalid_argument, "image_size and grads are incompatible");
    }
    let bi = box_ind.as_slice::<i32>()?;
    check_box_ind(&bi[..n], sz[0] as usize)?;
    let g = CropGeometry {
        batch: sz[0] as usize,
        height: sz[1] as usize,
        width: sz[2] as usize,
        depth: sz[3] as usize,
        crop_height: gd[1],
        crop_width: gd[2],
    };
    let gv = grads.as_slice::<f32>()?;
    let bx = boxes.as_slice::<f32>()?;
    let dims = vec![g.batch, g.height, g.width, g.depth];
    let out = match t {
        DType::Float32 => Tensor::from_vec(
            dims,
            crop_grad_image_into::<f32>(gv, bx, &bi[..n], g, method),
        )?,
        DType::Float64 => Tensor::from_vec(
            dims,
            crop_grad_image_into::<f64>(gv, bx, &bi[..n], g, method),
        )?,
        DType::Float16 => Tensor::from_vec(
            dims,
            crop_grad_image_into::<f16>(gv, bx, &bi[..n], g, method),
        )?,
        other => {
            bail!(
                invalid_argument,
                "CropAndResizeGradImage: T must be half, float or double, got {other}"
            )
        }
    };
    ctx.output(out);
    Ok(())
}

/// `CropAndResizeGradBoxes`: the gradient of bilinear crops with respect to
/// the box coordinates (parallel over boxes).
pub fn crop_and_resize_grad_boxes(
    grads: &[f32],
    image: &[f32],
    boxes: &[f32],
    box_ind: &[i32],
    g: CropGeometry,
) -> Vec<f32> {
    let row = g.width * g.depth;
    let img_len = g.height * row;
    let per_box = g.crop_height * g.crop_width * g.depth;
    let mut out = vec![0f32; box_ind.len() * 4];
    let last_h = (g.height as i64 - 1) as f32;
    let last_w = (g.width as i64 - 1) as f32;
    // A few boxes per task (each box's four sums are its own: deterministic).
    const BOXES_PER_TASK: usize = 8;
    team::for_each_chunk_mut(&mut out, 4 * BOXES_PER_TASK, |task, chunk| {
        for (k, gbox) in chunk.chunks_mut(4).enumerate() {
            let b = task * BOXES_PER_TASK + k;
            let bx = &boxes[b * 4..b * 4 + 4];
            let (y1, x1, y2, x2) = (bx[0], bx[1], bx[2], bx[3]);
            let img = &image[box_ind[b] as usize * img_len..][..img_len];
            let gb = &grads[b * per_box..(b + 1) * per_box];
            let h_ratio = if g.crop_height > 1 {
                last_h / (g.crop_height as i64 - 1) as f32
            } else {
                0.0
            };
            let w_ratio = if g.crop_width > 1 {
                last_w / (g.crop_width as i64 - 1) as f32
            } else {
                0.0
            };
            let hs = if g.crop_height > 1 {
                (y2 - y1) * h_ratio
            } else {
                0.0
            };
            let ws = if g.crop_width > 1 {
                (x2 - x1) * w_ratio
            } else {
                0.0
            };
            for y in 0..g.crop_height {
                let Some(in_y) = sample_pos(y, y1, y2, hs, g.crop_height, g.height) else {
                    continue;
                };
                let (top, bottom) = (in_y.floor() as usize, in_y.ceil() as usize);
                let y_lerp = in_y - top as f32;
                for x in 0..g.crop_width {
                    let Some(in_x) = sample_pos(x, x1, x2, ws, g.crop_width, g.width) else {
                        continue;
                    };
                    let (left, right) = (in_x.floor() as usize, in_x.ceil() as usize);
                    let x_lerp = in_x - left as f32;
                    for d in 0..g.depth {
                        let tl = img[top * row + left * g.depth + d];
                        let tr = img[top * row + right * g.depth + d];
                        let bl = img[bottom * row + left * g.depth + d];
                        let br = img[bottom * row + right * g.depth + d];
                        let top_grad = gb[(y * g.crop_width + x) * g.depth + d];
                        let gy = ((1.0 - x_lerp) * (bl - tl) + x_lerp * (br - tr)) * top_grad;
                        let gx = ((1.0 - y_lerp) * (tr - tl) + y_lerp * (br - bl)) * top_grad;
                        if g.crop_height > 1 {
                            gbox[0] += gy * (last_h - y as f32 * h_ratio);
                            gbox[2] += gy * (y as f32 * h_ratio);
                        } else {
                            // `image_grad_y * 0.5 * (image_height - 1)`: double.
                            let v = gy as f64 * 0.5 * (g.height as i64 - 1) as f64;
                            gbox[0] = (gbox[0] as f64 + v) as f32;
                            gbox[2] = (gbox[2] as f64 + v) as f32;
                        }
                        if g.crop_width > 1 {
                            gbox[1] += gx * (last_w - x as f32 * w_ratio);
                            gbox[3] += gx * (x as f32 * w_ratio);
                        } else {
                            let v = gx as f64 * 0.5 * (g.width as i64 - 1) as f64;
                            gbox[1] = (gbox[1] as f64 + v) as f32;
                            gbox[3] = (gbox[3] as f64 + v) as f32;
                        }
                    }
                }
            }
        }
    });
    out
}

fn crop_grad_boxes_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let grads = ctx.input(0)?;
    let image = ctx.input(1)?;
    let boxes = ctx.input(2)?;
    let box_ind = ctx.input(3)?;
    ensure!(
        grads.rank() == 4,
        invalid_argument,
        "grads image must be 4-D{}",
        grads.shape()
    );
    let gd = grads.dims();
    if gd[1] == 0 || gd[2] == 0 {
        bail!(invalid_argument, "grads dimensions must be positive");
    }
    ensure!(
        image.rank() == 4,
        invalid_argument,
        "input image must be 4-D{}",
        image.shape()
    );
    let d = image.dims();
    if d[1] == 0 || d[2] == 0 {
        bail!(invalid_argument, "image dimensions must be positive");
    }
    ensure!(d[3] == gd[3], invalid_argument, "image, grads depth differ");
    let n = check_crop_boxes(boxes, box_ind)?;
    ensure!(
        gd[0] == n,
        invalid_argument,
        "boxes and grads have incompatible shape"
    );
    let bi = box_ind.as_slice::<i32>()?;
    check_box_ind(&bi[..n], d[0])?;
    let g = CropGeometry {
        batch: d[0],
        height: d[1],
        width: d[2],
        depth: d[3],
        crop_height: gd[1],
        crop_width: gd[2],
    };
    let img = as_f32(image)?;
    let out = crop_and_resize_grad_boxes(
        grads.as_slice::<f32>()?,
        &img,
        boxes.as_slice::<f32>()?,
        &bi[..n],
        g,
    );
    ctx.output(Tensor::from_vec(vec![n, 4], out)?);
    Ok(())
}

/// TensorFlow's gradient of `CropAndResize`: `CropAndResizeGradImage` for
/// float images, `CropAndResizeGradBoxes` for the boxes, nothing for
/// `box_ind` and `crop_size`.
fn crop_and_resize_grad(
    b: &mut Builder<'_>,
    n: &Node,
    grads: &[Option<ferroflow_graph::Output>],
) -> Result<Vec<Option<Grad>>> {
    let Some(g) = grads[0] else {
        return Ok(vec![None, None, None, None]);
    };
    let (image, boxes, box_ind) = (n.inputs[0], n.inputs[1], n.inputs[2]);
    let t = b.dtype(image);
    let method = n
        .attrs
        .get("method")
        .cloned()
        .unwrap_or(AttrValue::Str(b"bilinear".to_vec()));
    let d_image = if matches!(t, DType::Float16 | DType::Float32 | DType::Float64) {
        let size = b.shape(image)?;
        Some(Grad::Dense(b.op(
            "CropAndResizeGradImage",
            &[g, boxes, box_ind, size],
            vec![("T", AttrValue::Type(t)), ("method", method)],
        )?))
    } else {
        None
    };
    let d_boxes = b.op(
        "CropAndResizeGradBoxes",
        &[g, image, boxes, box_ind],
        vec![
            ("T", AttrValue::Type(t)),
            ("method", AttrValue::Str(b"bilinear".to_vec())),
        ],
    )?;
    Ok(vec![d_image, Some(Grad::Dense(d_boxes)), None, None])
}

// ------------------------------------------------------ drawing the boxes

/// TensorFlow's default box colors (RGBA), cycled over the boxes.
const DEFAULT_COLORS: [[f32; 4]; 10] = [
    [1.0, 1.0, 0.0, 1.0],
    [0.0, 0.0, 1.0, 1.0],
    [1.0, 0.0, 0.0, 1.0],
    [0.0, 1.0, 0.0, 1.0],
    [0.5, 0.0, 0.5, 1.0],
    [0.5, 0.5, 0.0, 1.0],
    [0.5, 0.0, 0.0, 1.0],
    [0.0, 0.0, 0.5, 1.0],
    [0.0, 1.0, 1.0, 1.0],
    [1.0, 0.0, 1.0, 1.0],
];

/// Draws the outlines of `boxes` (`[batch, n, 4]`, `[y_min, x_min, y_max,
/// x_max]` relative to the image) onto `images` (`[batch, h, w, depth]`),
/// in place, with TensorFlow's pixel rounding (truncation of `v * (h - 1)`).
/// `colors` holds one row of `depth` values per color.
pub fn draw_bounding_boxes<T: Copy>(
    images: &mut [T],
    dims: [usize; 4],
    boxes: &[f32],
    num_boxes: usize,
    colors: &[Vec<T>],
) {
    let [batch, h, w, depth] = dims;
    let (hh, ww) = (h as i64, w as i64);
    for b in 0..batch {
        let img = &mut images[b * h * w * depth..(b + 1) * h * w * depth];
        for bb in 0..num_boxes {
            let color = &colors[bb % colors.len()];
            let bx = &boxes[(b * num_boxes + bb) * 4..][..4];
            let min_row = (bx[0] * (hh - 1) as f32) as i64;
            let max_row = (bx[2] * (hh - 1) as f32) as i64;
            let min_col = (bx[1] * (ww - 1) as f32) as i64;
            let max_col = (bx[3] * (ww - 1) as f32) as i64;
            if min_row > max_row || min_col > max_col {
                continue;
            }
            if min_row >= hh || max_row < 0 || min_col >= ww || max_col < 0 {
                continue;
            }
            let (r0, r1) = (min_row.max(0), max_row.min(hh - 1));
            let (c0, c1) = (min_col.max(0), max_col.min(ww - 1));
            let mut put = |r: i64, c: i64| {
                let o = ((r * ww + c) as usize) * depth;
                img[o..o + depth].copy_from_slice(&color[..depth]);
            };
            if min_row >= 0 {
                for c in c0..=c1 {
                    put(min_row, c);
                }
            }
            if max_row < hh {
                for c in c0..=c1 {
                    put(max_row, c);
                }
            }
            if min_col >= 0 {
                for r in r0..=r1 {
                    put(r, min_col);
                }
            }
            if max_col < ww {
                for r in r0..=r1 {
                    put(r, max_col);
                }
            }
        }
    }
}

fn draw_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let images = ctx.input(0)?;
    let boxes = ctx.input(1)?;
    ensure!(
        images.rank() == 4,
        invalid_argument,
        "The rank of the images should be 4"
    );
    ensure!(
        boxes.rank() == 3,
        invalid_argument,
        "The rank of the boxes tensor should be 3"
    );
    ensure!(
        images.dims()[0] == boxes.dims()[0],
        invalid_argument,
        "The batch sizes should be the same"
    );
    let d = images.dims();
    let depth = d[3];
    ensure!(
        matches!(depth, 1 | 3 | 4),
        invalid_argument,
        "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)"
    );
    ensure!(
        boxes.dims()[2] == 4,
        invalid_argument,
        "The size of the third dimension of the box must be 4. Received: {}",
        boxes.dims()[2]
    );
    let mut table: Vec<Vec<f32>> = Vec::new();
    if ctx.num_inputs() == 3 {
        let colors = ctx.input(2)?;
        ensure!(
            colors.rank() == 2,
            invalid_argument,
            "colors must be a 2-D matrix{}",
            colors.shape()
        );
        if colors.dims()[1] < depth {
            bail!(
                invalid_argument,
                "colors must have equal or more channels than the image provided: {}",
                colors.shape()
            );
        }
        if colors.num_elements() != 0 {
            let cols = colors.dims()[1];
            table = colors
                .as_slice::<f32>()?
                .chunks_exact(cols)
                .map(|c| c[..depth].to_vec())
                .collect();
        }
    }
    if table.is_empty() {
        table = DEFAULT_COLORS
            .iter()
            .map(|c| {
                let mut c = c.to_vec();
                if depth == 1 {
                    c[0] = 1.0;
                }
                c
            })
            .collect();
    }
    let dims = [d[0], d[1], d[2], d[3]];
    let nb = boxes.dims()[1];
    let bx = boxes.as_slice::<f32>()?;
    let out = match images.dtype() {
        DType::Float32 => {
            let mut v = images.as_slice::<f32>()?.to_vec();
            draw_bounding_boxes(&mut v, dims, bx, nb, &table);
            Tensor::from_vec(d.to_vec(), v)?
        }
        DType::Float16 => {
            let mut v = images.as_slice::<f16>()?.to_vec();
            let t16: Vec<Vec<f16>> = table
                .iter()
                .map(|c| c.iter().map(|&x| f16::from_f32(x)).collect())
                .collect();
            draw_bounding_boxes(&mut v, dims, bx, nb, &t16);
            Tensor::from_vec(d.to_vec(), v)?
        }
        other => {
            bail!(
                invalid_argument,
                "DrawBoundingBoxes: images must be half or float, got {other}"
            )
        }
    };
    ctx.output(out);
    Ok(())
}

// --------------------------------------------- sampling a distorted crop

/// A node's Philox generator and how many blocks it has used.
struct RandomStream {
    gen: Philox,
    next: AtomicU64,
}

fn random_stream(init: &KernelInit<'_>) -> Result<Arc<RandomStream>> {
    let a = &init.node.attrs;
    let (mut seed, mut seed2) = (a.int_or("seed", 0)? as u64, a.int_or("seed2", 0)? as u64);
    if seed == 0 && seed2 == 0 {
        // No seed: TensorFlow draws a fresh one; so do we.
        use std::hash::BuildHasher;
        let h = std::collections::hash_map::RandomState::new();
        seed = h.hash_one(init.node.id);
        seed2 = h.hash_one(seed);
    }
    init.session.get_or_create(init.node.id, || RandomStream {
        gen: Philox::new(seed, seed2),
        next: AtomicU64::new(0),
    })
}

/// 32-bit words from a reserved range of Philox blocks.
pub struct Words {
    gen: Philox,
    block: u64,
    buf: [u32; 4],
    used: usize,
}

impl Words {
    /// Words from block `first` of `gen` on.
    pub fn new(gen: Philox, first: u64) -> Words {
        Words {
            gen,
            block: first,
            buf: [0; 4],
            used: 4,
        }
    }

    /// The next word.
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.buf = self.gen.block(self.block);
            self.block += 1;
            self.used = 0;
        }
        self.used += 1;
        self.buf[self.used - 1]
    }

    /// A uniform float in [0, 1), as TensorFlow's `Uint32ToFloat`: the word's low 23 bits
    /// are the mantissa of a float in [1, 2).
    pub fn rand_float(&mut self) -> f32 {
        f32::from_bits((self.next_u32() & 0x007F_FFFF) | 0x3F80_0000) - 1.0
    }

    /// A uniform integer in [0, n) (`n > 0`), as TensorFlow's `ExactUniformInt`: words
    /// below `(2^32 - 1) % n + 1) % n` (the biased remainder) are drawn again.
    pub fn uniform(&mut self, n: u32) -> u32 {
        let rem = (u32::MAX % n + 1) % n;
        loop {
            let u = self.next_u32();
            if u >= rem {
                return u % n;
            }
        }
    }

    /// A standard normal (Box-Muller).
    pub fn normal(&mut self) -> f32 {
        let u1 = (self.next_u32() as f64 + 1.0) / 4_294_967_296.0;
        let u2 = self.next_u32() as f64 / 4_294_967_296.0;
        ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
    }
}

/// A rectangle of whole pixels, `[min, max)` on each axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    pub min_x: i32,
    pub min_y: i32,
    pub max_x: i32,
    pub max_y: i32,
}

impl Rect {
    fn area(&self) -> f32 {
        ((self.max_x - self.min_x) * (self.max_y - self.min_y)) as f32
    }

    fn intersect(&self, r: &Rect) -> Rect {
        let (x0, y0) = (self.min_x.max(r.min_x), self.min_y.max(r.min_y));
        let (x1, y1) = (self.max_x.min(r.max_x), self.max_y.min(r.max_y));
        if x0 > x1 || y0 > y1 {
            Rect::default()
        } else {
            Rect {
                min_x: x0,
                min_y: y0,
                max_x: x1,
                max_y: y1,
            }
        }
    }
}

fn covers(crop: &Rect, min_covered: f32, objects: &[Rect]) -> bool {
    if crop.area() < 1.0 {
        return false;
    }
    objects.iter().any(|o| {
        let a = o.area();
        a >= 1.0 && crop.intersect(o).area() / a >= min_covered
    })
}

#[inline]
fn lrint(v: f32) -> i64 {
    v.round_ties_even() as i64
}

/// TensorFlow's `GenerateRandomCrop`: a crop of the given aspect ratio
/// whose area is within the relative range, placed uniformly.
fn random_crop(
    width: i32,
    height: i32,
    min_rel: f32,
    max_rel: f32,
    aspect: f32,
    rng: &mut Words,
) -> Option<Rect> {
    if max_rel <= 0.0 || aspect <= 0.0 || width <= 0 || height <= 0 || min_rel > max_rel {
        return None;
    }
    let min_area = min_rel * width as f32 * height as f32;
    let max_area = max_rel * width as f32 * height as f32;
    let mut h = lrint((min_area / aspect).sqrt()) as i32;
    let mut max_h = lrint((max_area / aspect).sqrt()) as i32;
    if lrint(max_h as f32 * aspect) > width as i64 {
        const EPS: f32 = 0.000_000_1;
        max_h = ((width as f64 + 0.5 - EPS as f64) / aspect as f64) as i32;
        if lrint(max_h as f32 * aspect) > width as i64 {
            max_h -= 1;
        }
    }
    max_h = max_h.min(height);
    if h >= max_h {
        h = max_h;
    }
    if h < max_h {
        h += rng.uniform((max_h - h + 1) as u32) as i32;
    }
    let mut w = lrint(h as f32 * aspect) as i32;
    let mut area = (w * h) as f32;
    if area < min_area {
        h += 1;
        w = lrint(h as f32 * aspect) as i32;
        area = (w * h) as f32;
    }
    if area > max_area {
        h -= 1;
        w = lrint(h as f32 * aspect) as i32;
        area = (w * h) as f32;
    }
    if area < min_area || area > max_area || w > width || h > height || w <= 0 || h <= 0 {
        return None;
    }
    let y = if h < height {
        rng.uniform((height - h) as u32) as i32
    } else {
        0
    };
    let x = if w < width {
        rng.uniform((width - w) as u32) as i32
    } else {
        0
    };
    Some(Rect {
        min_x: x,
        min_y: y,
        max_x: x + w,
        max_y: y + h,
    })
}

/// The constraints of `SampleDistortedBoundingBox`.
#[derive(Clone, Copy, Debug)]
pub struct DistortParams {
    pub min_object_covered: f32,
    pub aspect_ratio_range: [f32; 2],
    pub area_range: [f32; 2],
    pub max_attempts: usize,
}

/// Samples a crop of a `height x width` image covering at least
/// `min_object_covered` of one of `objects`; after `max_attempts` failed
/// tries, the whole image.
pub fn sample_distorted_crop(
    height: i32,
    width: i32,
    objects: &[Rect],
    p: &DistortParams,
    rng: &mut Words,
) -> Rect {
    let [amin, amax] = p.aspect_ratio_range;
    for _ in 0..p.max_attempts {
        let aspect = rng.rand_float() * (amax - amin) + amin;
        if let Some(c) = random_crop(width, height, p.area_range[0], p.area_range[1], aspect, rng) {
            if covers(&c, p.min_object_covered, objects) {
                return c;
            }
        }
    }
    Rect {
        min_x: 0,
        min_y: 0,
        max_x: width,
        max_y: height,
    }
}

fn float_pair(attrs: &ferroflow_graph::Attrs, name: &str, default: [f32; 2]) -> Result<Vec<f32>> {
    match attrs.get(name) {
        None => Ok(default.to_vec()),
        Some(AttrValue::FloatList(v)) => Ok(v.iter().map(|&x| x as f32).collect()),
        Some(AttrValue::IntList(v)) => Ok(v.iter().map(|&x| x as f32).collect()),
        Some(_) => Err(Error::type_error(format!(
            "attribute '{name}' must be list(float)"
        ))),
    }
}

fn sample_distorted_factory(
    init: &KernelInit<'_>,
    v2: bool,
) -> Result<Box<dyn ferroflow_runtime::Kernel>> {
    let a = &init.node.attrs;
    let min_covered = if v2 {
        0.0
    } else {
        let m = a.float_or("min_object_covered", 0.1)? as f32;
        if m < 0.0 {
            bail!(
                invalid_argument,
                "Min object covered must be non-negative: {m}"
            );
        }
        m
    };
    let use_image = a.bool_or("use_image_if_no_bounding_boxes", false)?;
    let aspect = float_pair(a, "aspect_ratio_range", [0.75, 1.33])?;
    ensure!(
        aspect.len() == 2,
        invalid_argument,
        "Aspect ratio range field must specify 2 dimensions"
    );
    ensure!(
        aspect[0] > 0.0 && aspect[1] > 0.0,
        invalid_argument,
        "Aspect ratio range must be non-negative: [{}, {}]",
        aspect[0],
        aspect[1]
    );
    let area = float_pair(a, "area_range", [0.05, 1.0])?;
    ensure!(
        area.len() == 2,
        invalid_argument,
        "Area range field must specify 2 dimensions"
    );
    ensure!(
        area[0] > 0.0 && area[1] > 0.0,
        invalid_argument,
        "Area range must be non-negative: [{}, {}]",
        area[0],
        area[1]
    );
    ensure!(
        area[0] <= 1.0 && area[1] <= 1.0,
        invalid_argument,
        "Area range must be less then or equal to 1.0: [{}, {}]",
        area[0],
        area[1]
    );
    let attempts = a.int_or("max_attempts", 100)?;
    if attempts <= 0 {
        bail!(
            invalid_argument,
            "Max attempts must be non-negative: {attempts}"
        );
    }
    let stream = random_stream(init)?;
    let params = DistortParams {
        min_object_covered: min_covered,
        aspect_ratio_range: [aspect[0], aspect[1]],
        area_range: [area[0], area[1]],
        max_attempts: attempts as usize,
    };
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        sample_distorted_kernel(ctx, &stream, params, use_image, v2)
    }))
}

fn sample_distorted_kernel(
    ctx: &mut OpContext<'_>,
    stream: &RandomStream,
    mut p: DistortParams,
    use_image: bool,
    v2: bool,
) -> Result<()> {
    let size = ctx.input(0)?;
    ensure!(
        size.rank() == 1,
        invalid_argument,
        "image_size must be 1-dimensional{}",
        size.shape()
    );
    ensure!(
        size.dims()[0] == 3,
        invalid_argument,
        "image_size must contain 3 elements{}",
        size.shape()
    );
    let sv = size.to_i64_vec()?;
    let t = size.dtype();
    // TensorFlow reads the sizes as unsigned 64-bit values.
    let (hr, wr) = (sv[0] as u64, sv[1] as u64);
    if hr >= i32::MAX as u64 {
        bail!(invalid_argument, "image height cannot be >= int32 max");
    }
    if wr >= i32::MAX as u64 {
        bail!(invalid_argument, "image width cannot be >= int32 max");
    }
    let (height, width) = (hr as i32, wr as i32);
    let boxes = ctx.input(1)?;
    ensure!(
        boxes.rank() == 3,
        invalid_argument,
        "input boxes must be 3-dimensional [batch, num_boxes, coords]: {}",
        boxes.shape()
    );
    ensure!(
        boxes.dims()[2] == 4,
        invalid_argument,
        "bounding boxes must have shape [4] or [*, 4], got {}",
        boxes.shape()
    );
    if v2 {
        let m = scalar_input(ctx, 2, "min_object_covered", false)? as f32;
        if m.is_nan() || m < 0.0 {
            bail!(
                invalid_argument,
                "Min object covered must be non-negative: {m}"
            );
        }
        p.min_object_covered = m;
    }
    let mut objects = Vec::new();
    for b in boxes.as_slice::<f32>()?.chunks_exact(4) {
        if let Some(&v) = b.iter().find(|&&v| !(0.0..=1.0).contains(&v)) {
            bail!(
                invalid_argument,
                "All bounding box coordinates must be in [0.0, 1.0]: {v}"
            );
        }
        objects.push(Rect {
            min_x: (b[1] * width as f32) as i32,
            min_y: (b[0] * height as f32) as i32,
            max_x: (b[3] * width as f32) as i32,
            max_y: (b[2] * height as f32) as i32,
        });
    }
    if objects.is_empty() {
        ensure!(
            use_image,
            invalid_argument,
            "No bounding boxes provided as input. One must enable use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes."
        );
        objects.push(Rect {
            min_x: 0,
            min_y: 0,
            max_x: width,
            max_y: height,
        });
    }
    // At most four words per attempt, as TensorFlow reserves.
    let first = stream
        .next
        .fetch_add(p.max_attempts as u64, AtomicOrdering::Relaxed);
    let mut rng = Words::new(stream.gen, first);
    let c = sample_distorted_crop(height, width, &objects, &p, &mut rng);
    let begin = [c.min_y as i64, c.min_x as i64, 0];
    let size = [(c.max_y - c.min_y) as i64, (c.max_x - c.min_x) as i64, -1];
    let cast = |v: [i64; 3]| -> Result<Tensor> {
        Ok(match t {
            DType::UInt8 => Tensor::vector(v.iter().map(|&x| x as u8).collect::<Vec<_>>()),
            DType::Int8 => Tensor::vector(v.iter().map(|&x| x as i8).collect::<Vec<_>>()),
            DType::Int16 => Tensor::vector(v.iter().map(|&x| x as i16).collect::<Vec<_>>()),
            DType::Int32 => Tensor::vector(v.iter().map(|&x| x as i32).collect::<Vec<_>>()),
            DType::Int64 => Tensor::vector(v.to_vec()),
            other => {
                bail!(
                    invalid_argument,
                    "SampleDistortedBoundingBox: image_size of type {other} is not supported"
                )
            }
        })
    };
    ctx.output(cast(begin)?);
    ctx.output(cast(size)?);
    let (h, w) = (height as f32, width as f32);
    ctx.output(Tensor::from_vec(
        vec![1, 1, 4],
        vec![
            c.min_y as f32 / h,
            c.min_x as f32 / w,
            c.max_y as f32 / h,
            c.max_x as f32 / w,
        ],
    )?);
    Ok(())
}

// ------------------------------------------------------------- glimpses

/// What fills the part of a glimpse outside the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlimpseNoise {
    Uniform,
    Gaussian,
    Zero,
}

/// The settings of `ExtractGlimpse` (version 1) or `ExtractGlimpseV2`.
#[derive(Clone, Copy, Debug)]
pub struct GlimpseParams {
    pub height: usize,
    pub width: usize,
    pub centered: bool,
    pub normalized: bool,
    pub noise: GlimpseNoise,
    pub version: u8,
}

/// Extracts one `[height, width, depth]` glimpse per image of `input`
/// (`[batch, h, w, depth]`) at `offsets` (`[batch, 2]`, `(y, x)`).
pub fn extract_glimpse(
    input: &[f32],
    dims: [usize; 4],
    offsets: &[f32],
    p: &GlimpseParams,
    rng: &mut Words,
) -> Vec<f32> {
    let [batch, ih, iw, depth] = dims;
    let (gh, gw) = (p.height as i64, p.width as i64);
    let mut out = vec![0f32; batch * p.height * p.width * depth];
    let img_len = ih * iw * depth;
    let out_len = p.height * p.width * depth;
    for i in 0..batch {
        let img = &input[i * img_len..(i + 1) * img_len];
        let o = &mut out[i * out_len..(i + 1) * out_len];
        let (mut y, mut x) = (offsets[i * 2], offsets[i * 2 + 1]);
        let (wf, hf) = (iw as f32, ih as f32);
        let shift = |v: &mut f32, size: f32, glimpse: i64| {
            *v /= 2.0;
            *v += size / 2.0;
            *v -= glimpse as f32 / 2.0;
        };
        if p.version == 1 {
            if p.normalized {
                x *= wf;
                y *= hf;
            }
            if p.centered {
                x /= 2.0;
                y /= 2.0;
                x += wf / 2.0;
                y += hf / 2.0;
            }
            x -= gw as f32 / 2.0;
            y -= gh as f32 / 2.0;
        } else if p.normalized {
            x *= wf;
            y *= hf;
            if p.centered {
                shift(&mut x, wf, gw);
                shift(&mut y, hf, gh);
            }
        } else if p.centered {
            x += wf / 2.0;
            y += hf / 2.0;
        }
        let (ox, oy) = (x as i64, y as i64);
        let (iwi, ihi) = (iw as i64, ih as i64);
        // Per axis: (source start, extent, destination start, partial).
        let axis = |off: i64, g: i64, size: i64| -> (i64, i64, i64, bool) {
            if off < 0 {
                let gl = (g + off).max(0);
                (0, gl.min(size), g - gl, true)
            } else if off + g >= size {
                let gl = (size - off).max(0);
                (off, gl.min(size), 0, true)
            } else {
                (off, g, 0, false)
            }
        };
        let (sx, ex, bx, px) = axis(ox, gw, iwi);
        let (sy, ey, by, py) = axis(oy, gh, ihi);
        if px || py {
            match p.noise {
                GlimpseNoise::Zero => o.fill(0.0),
                GlimpseNoise::Uniform => {
                    let lo = img.iter().copied().fold(f32::INFINITY, f32::min);
                    let hi = img.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    for v in o.iter_mut() {
                        *v = lo + rng.rand_float() * (hi - lo);
                    }
                }
                GlimpseNoise::Gaussian => {
                    for d in 0..depth {
                        let ch: Vec<f32> = img.iter().skip(d).step_by(depth).copied().collect();
                        let n = ch.len().max(1) as f32;
                        let mean = ch.iter().sum::<f32>() / n;
                        let sigma =
                            (ch.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n).sqrt();
                        let lo = ch.iter().copied().fold(f32::INFINITY, f32::min);
                        let hi = ch.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                        for v in o.iter_mut().skip(d).step_by(depth) {
                            *v = (mean + rng.normal() * sigma).min(hi).max(lo);
                        }
                    }
                }
            }
        }
        if ex <= 0 || ey <= 0 {
            continue;
        }
        for r in 0..ey {
            let src = (((sy + r) * iwi + sx) as usize) * depth;
            let dst = (((by + r) * gw + bx) as usize) * depth;
            let len = ex as usize * depth;
            o[dst..dst + len].copy_from_slice(&img[src..src + len]);
        }
    }
    out
}

fn glimpse_factory(
    init: &KernelInit<'_>,
    version: u8,
) -> Result<Box<dyn ferroflow_runtime::Kernel>> {
    let a = &init.node.attrs;
    let normalized = a.bool_or("normalized", true)?;
    let centered = a.bool_or("centered", true)?;
    let uniform = a.bool_or("uniform_noise", true)?;
    let noise = a.str_or("noise", "uniform")?;
    if uniform && !noise.is_empty() && noise != "uniform" {
        bail!(
            invalid_argument,
            "The uniform_noise and noise could not be specified at the same time"
        );
    }
    let noise = match noise.as_str() {
        "" if uniform => GlimpseNoise::Uniform,
        "" => GlimpseNoise::Gaussian,
        "uniform" => GlimpseNoise::Uniform,
        "gaussian" => GlimpseNoise::Gaussian,
        "zero" => GlimpseNoise::Zero,
        other => {
            bail!(
                invalid_argument,
                "The noise could only be uniform, gaussian, or zero, got{other}"
            )
        }
    };
    let stream = random_stream(init)?;
    Ok(Box::new(move |ctx: &mut OpContext<'_>| {
        let input = ctx.input(0)?;
        ensure!(
            input.rank() == 4,
            invalid_argument,
            "input must be 4-dimensional (batch_size, height, width, depth){}",
            input.shape()
        );
        let d = input.dims();
        let size = ctx.input(1)?;
        if size.rank() != 1 || size.dims()[0] != 2 {
            bail!(
                invalid_argument,
                "input must be a vector of size 2 (height, width){}",
                size.shape()
            );
        }
        let sz = size.as_slice::<i32>()?;
        if let Some(&neg) = sz.iter().find(|&&v| v < 0) {
            bail!(invalid_argument, "Dimension {neg} must be >= 0");
        }
        let offsets = ctx.input(2)?;
        ensure!(
            offsets.rank() == 2,
            invalid_argument,
            "input must be a matrix{}",
            offsets.shape()
        );
        ensure!(
            offsets.dims()[0] == d[0],
            invalid_argument,
            "first dimension should be batch{}",
            offsets.shape()
        );
        ensure!(
            offsets.dims()[1] == 2,
            invalid_argument,
            "second dimension should be of size 2 (y,x){}",
            offsets.shape()
        );
        let p = GlimpseParams {
            height: sz[0] as usize,
            width: sz[1] as usize,
            centered,
            normalized,
            noise,
            version,
        };
        let out_dims = vec![d[0], p.height, p.width, d[3]];
        let n: usize = out_dims.iter().product();
        if n == 0 {
            ctx.output(Tensor::from_vec(out_dims, Vec::<f32>::new())?);
            return Ok(());
        }
        // Enough words for two per output value (Gaussian noise).
        let first = stream
            .next
            .fetch_add(n.div_ceil(2) as u64, AtomicOrdering::Relaxed);
        let mut rng = Words::new(stream.gen, first);
        let out = extract_glimpse(
            input.as_slice::<f32>()?,
            [d[0], d[1], d[2], d[3]],
            offsets.as_slice::<f32>()?,
            &p,
            &mut rng,
        );
        ctx.output(Tensor::from_vec(out_dims, out)?);
        Ok(())
    }))
}
