//! `GenerateBoundingBoxProposals` (`tf.image.generate_bounding_box_proposals`),
//! the region-proposal step of Faster R-CNN style detectors: per image, rank
//! the anchors by score, decode the best `pre_nms_topn` box deltas against
//! their anchors, clip the boxes to the image, drop those smaller than
//! `min_size` (scaled by the image's scale), run non-max suppression and
//! return the best `post_nms_topn` boxes, zero-padded.
//!
//! TensorFlow 2.21 registers this op for GPUs only (a CPU graph fails with
//! "Could not find device"); this is a CPU kernel with the GPU kernel's
//! semantics: inputs `scores [N, H, W, A]`, `bbox_deltas [N, H, W, 4A]` as
//! `(dy, dx, dh, dw)`, `image_info [N, 5]` as `(height, width, scale, ..)`,
//! `anchors [H, W, 4A]` as `(y1, x1, y2, x2)` shared by the batch; a stable
//! descending sort of the scores (ties keep the lower index first, as the
//! GPU's radix sort); widths as `x2 - x1` (no `+ 1`); `dw`/`dh` capped at
//! `log(1000 / 16)`; boxes clipped to `[0, width] x [0, height]` and kept when
//! their shorter side is at least `min_size * scale`. Its suppression test is
//! the GPU NMS's, not the CPU `NonMaxSuppression`'s that `boxes` implements:
//! a later box is dropped when `intersection > union * threshold` (no
//! division), boxes are not reordered corner-wise, and a box of zero area
//! never suppresses or is suppressed. Outputs: `rois [N, post_nms_topn, 4]`
//! as `(y1, x1, y2, x2)` and `roi_probabilities [N, post_nms_topn]`.

use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Result, Tensor};

/// Registers the op and its kernel (idempotent); TensorFlow marks it not
/// differentiable.
pub fn register() {
    ferroflow_graph::register_op(OpDef::new(
        "GenerateBoundingBoxProposals",
        &[
            "scores",
            "bbox_deltas",
            "image_info",
            "anchors",
            "nms_threshold",
            "pre_nms_topn",
            "min_size",
        ],
        infer,
    ));
    ferroflow_runtime::register_kernel(
        "GenerateBoundingBoxProposals",
        factory(|init| {
            let post = init.node.attrs.int_or("post_nms_topn", 300)?;
            ensure!(
                post > 0,
                invalid_argument,
                "post_nms_topn can't be 0 or less"
            );
            let post = post as usize;
            Ok(Box::new(move |ctx: &mut OpContext<'_>| kernel(ctx, post)))
        }),
    );
    ferroflow_autodiff::not_differentiable("GenerateBoundingBoxProposals");
}

fn infer(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    for i in [0, 1, 2, 3, 4, 6] {
        ctx.expect_dtype(i, &[DType::Float32])?;
    }
    ctx.expect_dtype(5, &[DType::Int32])?;
    for (i, r) in [(0, 4), (1, 4), (2, 2), (3, 3), (4, 0), (5, 0), (6, 0)] {
        ctx.expect_rank(i, r)?;
    }
    let post = ctx.int_or("post_nms_topn", 300)?;
    let post = usize::try_from(post).ok();
    let n = ctx.shape(0).dims().and_then(|d| d[0]);
    Ok(vec![
        OutputInfo::new(
            DType::Float32,
            PartialShape::from_dims(vec![n, post, Some(4)]),
        ),
        OutputInfo::new(DType::Float32, PartialShape::from_dims(vec![n, post])),
    ])
}

/// A scalar input, with TensorFlow's message for another shape.
fn scalar(ctx: &OpContext<'_>, i: usize) -> Result<f64> {
    let t = ctx.input(i)?;
    ensure!(
        t.rank() == 0,
        invalid_argument,
        "Expected a scalar in input {i}but got shape {}",
        t.shape()
    );
    t.scalar_f64()
}

fn floats<'a>(t: &'a Tensor, what: &str) -> Result<&'a [f32]> {
    t.as_slice::<f32>().map_err(|_| {
        ferroflow_tensor::Error::invalid_argument(format!(
            "GenerateBoundingBoxProposals: {what} must be float32, got {}",
            t.dtype()
        ))
    })
}

/// The sizes the kernel works with, after checking the inputs agree.
struct Dims {
    images: usize,
    /// Anchor positions times anchors (`H * W * A`).
    boxes: usize,
}

fn check_inputs(ctx: &OpContext<'_>) -> Result<Dims> {
    let (s, d, info, a) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.input(3)?);
    let name = "GenerateBoundingBoxProposals";
    ensure!(
        s.rank() == 4,
        invalid_argument,
        "{name}: scores must be 4-D [num_images, height, width, num_anchors], got shape {}",
        s.shape()
    );
    let sd = s.dims();
    let (n, h, w, na) = (sd[0], sd[1], sd[2], sd[3]);
    ensure!(
        a.rank() == 3,
        invalid_argument,
        "{name}: anchors must be 3-D [height, width, 4 * num_anchors], got shape {}",
        a.shape()
    );
    if na == 0 || a.dims()[2] / na != 4 {
        bail!(out_of_range, "Box dimensions need to be 4");
    }
    ensure!(
        a.dims()[2] == 4 * na && a.num_elements() == h * w * na * 4,
        invalid_argument,
        "{name}: anchors of shape {} do not match scores of shape {} (want [{h}, {w}, {}])",
        a.shape(),
        s.shape(),
        4 * na
    );
    ensure!(
        d.dims() == [n, h, w, 4 * na],
        invalid_argument,
        "{name}: bbox_deltas must have shape [{n}, {h}, {w}, {}] to match scores, got {}",
        4 * na,
        d.shape()
    );
    ensure!(
        info.rank() == 2 && info.dims()[0] == n && info.dims()[1] == 5,
        invalid_argument,
        "{name}: image_info must have shape [{n}, 5], got {}",
        info.shape()
    );
    Ok(Dims {
        images: n,
        boxes: h * w * na,
    })
}

/// `fdimf`: `a - b` when positive, else 0 (NaN stays NaN).
#[inline]
fn fdim(a: f32, b: f32) -> f32 {
    if a > b {
        a - b
    } else if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        0.0
    }
}

/// The GPU NMS's test: does `b` overlap `a` (of area `a_area`) by more than
/// `threshold`? Boxes are `(x1, y1, x2, y2)`.
#[inline]
fn over_threshold(a: &[f32; 4], b: &[f32; 4], a_area: f32, threshold: f32) -> bool {
    let b_area = (b[2] - b[0]) * (b[3] - b[1]);
    if a_area == 0.0 || b_area == 0.0 {
        return false;
    }
    let w = fdim(b[2].min(a[2]), a[0].max(b[0]));
    let h = fdim(b[3].min(a[3]), a[1].max(b[1]));
    let inter = w * h;
    inter > (a_area + b_area - inter) * threshold
}

/// Greedy NMS over boxes already in score order; the kept positions, at
/// most `max_keep`.
fn nms(boxes: &[[f32; 4]], threshold: f32, max_keep: usize) -> Vec<usize> {
    let mut removed = vec![false; boxes.len()];
    let mut keep = Vec::new();
    for i in 0..boxes.len() {
        if removed[i] {
            continue;
        }
        keep.push(i);
        if keep.len() >= max_keep {
            break;
        }
        let a = &boxes[i];
        let a_area = (a[2] - a[0]) * (a[3] - a[1]);
        for (j, b) in boxes.iter().enumerate().skip(i + 1) {
            if !removed[j] && over_threshold(a, b, a_area, threshold) {
                removed[j] = true;
            }
        }
    }
    keep
}

/// The settings of one run.
struct Params {
    nms_threshold: f32,
    pre_nms_topn: usize,
    min_size: f32,
    post_nms_topn: usize,
}

/// One image's proposals: `(x1, y1, x2, y2)` boxes and their scores, best
/// first, at most `post_nms_topn`.
fn image_proposals(
    scores: &[f32],
    deltas: &[f32],
    anchors: &[f32],
    info: &[f32],
    p: &Params,
) -> (Vec<[f32; 4]>, Vec<f32>) {
    let clip = (1000.0f64 / 16.0).ln() as f32;
    let mut order: Vec<usize> = (0..scores.len()).collect();
    // Descending in IEEE total order (the radix sort's), stable.
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    order.truncate(p.pre_nms_topn);
    let (img_h, img_w) = (info[0], info[1]);
    let min_size = p.min_size * info[2];
    let mut boxes = Vec::with_capacity(order.len());
    let mut kept_scores = Vec::with_capacity(order.len());
    for &k in &order {
        let an = &anchors[4 * k..4 * k + 4];
        let de = &deltas[4 * k..4 * k + 4];
        let (mut x1, mut y1, mut x2, mut y2) = (an[1], an[0], an[3], an[2]);
        let (dy, dx) = (de[0], de[1]);
        let dh = de[2].min(clip);
        let dw = de[3].min(clip);
        let width = x2 - x1;
        let ctr_x = x1 + 0.5 * width;
        let pred_ctr_x = ctr_x + width * dx;
        let pred_w = width * dw.exp();
        x1 = pred_ctr_x - 0.5 * pred_w;
        x2 = pred_ctr_x + 0.5 * pred_w;
        let height = y2 - y1;
        let ctr_y = y1 + 0.5 * height;
        let pred_ctr_y = ctr_y + height * dy;
        let pred_h = height * dh.exp();
        y1 = pred_ctr_y - 0.5 * pred_h;
        y2 = pred_ctr_y + 0.5 * pred_h;
        x1 = x1.min(img_w).max(0.0);
        y1 = y1.min(img_h).max(0.0);
        x2 = x2.min(img_w).max(0.0);
        y2 = y2.min(img_h).max(0.0);
        if (x2 - x1).min(y2 - y1) >= min_size {
            boxes.push([x1, y1, x2, y2]);
            kept_scores.push(scores[k]);
        }
    }
    let keep = nms(&boxes, p.nms_threshold, p.post_nms_topn);
    (
        keep.iter().map(|&i| boxes[i]).collect(),
        keep.iter().map(|&i| kept_scores[i]).collect(),
    )
}

fn kernel(ctx: &mut OpContext<'_>, post_nms_topn: usize) -> Result<()> {
    let dims = check_inputs(ctx)?;
    let nms_threshold = scalar(ctx, 4)? as f32;
    if !(0.0..=1.0).contains(&nms_threshold) {
        bail!(
            invalid_argument,
            "nms_threshold should be between 0 and 1. Got {nms_threshold}"
        );
    }
    let pre = scalar(ctx, 5)?;
    ensure!(
        pre > 0.0,
        invalid_argument,
        "pre_nms_topn should be greater than 0{pre}"
    );
    let p = Params {
        nms_threshold,
        pre_nms_topn: pre as usize,
        min_size: scalar(ctx, 6)? as f32,
        post_nms_topn,
    };
    let scores = floats(ctx.input(0)?, "scores")?;
    let deltas = floats(ctx.input(1)?, "bbox_deltas")?;
    let info = floats(ctx.input(2)?, "image_info")?;
    let anchors = floats(ctx.input(3)?, "anchors")?;
    let (n, m) = (dims.images, dims.boxes);
    let mut rois = vec![0f32; n * post_nms_topn * 4];
    let mut probs = vec![0f32; n * post_nms_topn];
    for i in 0..n {
        let (b, s) = image_proposals(
            &scores[i * m..(i + 1) * m],
            &deltas[i * m * 4..(i + 1) * m * 4],
            anchors,
            &info[i * 5..i * 5 + 5],
            &p,
        );
        for (k, (bx, sc)) in b.iter().zip(&s).enumerate() {
            let at = (i * post_nms_topn + k) * 4;
            rois[at..at + 4].copy_from_slice(&[bx[1], bx[0], bx[3], bx[2]]);
            probs[i * post_nms_topn + k] = *sc;
        }
    }
    ctx.output(Tensor::from_vec(vec![n, post_nms_topn, 4], rois)?);
    ctx.output(Tensor::from_vec(vec![n, post_nms_topn], probs)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_overlap_rule() {
        let a = [0.0, 0.0, 10.0, 10.0];
        let b = [5.0, 0.0, 15.0, 10.0];
        // intersection 50, union 150: 50 > 150 * t for t < 1/3.
        assert!(over_threshold(&a, &b, 100.0, 0.33));
        assert!(!over_threshold(&a, &b, 100.0, 0.34));
        let flat = [1.0, 1.0, 1.0, 5.0];
        assert!(!over_threshold(&a, &flat, 100.0, 0.0));
        let keep = nms(&[a, b, [20.0, 20.0, 30.0, 30.0], a], 0.3, 10);
        assert_eq!(keep, vec![0, 2]);
        assert_eq!(nms(&[a, b, [20.0, 20.0, 30.0, 30.0]], 0.5, 2), vec![0, 1]);
    }

    #[test]
    fn one_anchor_decodes_and_clips() {
        // One position, one anchor (y1, x1, y2, x2) = (0, 0, 20, 40); zero
        // deltas but dw = ln 2 doubles the width around the center.
        let anchors = [0.0, 0.0, 20.0, 40.0];
        let deltas = [0.0, 0.0, 0.0, 2f32.ln()];
        let p = Params {
            nms_threshold: 0.7,
            pre_nms_topn: 10,
            min_size: 1.0,
            post_nms_topn: 5,
        };
        let (b, s) = image_proposals(&[0.9], &deltas, &anchors, &[100.0, 50.0, 1.0, 0.0, 0.0], &p);
        assert_eq!(s, vec![0.9]);
        // x from -20..60 clipped to 0..50.
        assert_eq!(b, vec![[0.0, 0.0, 50.0, 20.0]]);
        // Scaled min_size drops it.
        let (b, _) = image_proposals(
            &[0.9],
            &deltas,
            &anchors,
            &[100.0, 50.0, 30.0, 0.0, 0.0],
            &p,
        );
        assert!(b.is_empty());
    }
}
