//! The box kernels on small hand-computed cases: NMS selection order, ties,
//! corner order, degenerate boxes, soft-NMS; crops and their gradients
//! (against finite differences); drawing; seeded crop sampling; glimpses;
//! and bad inputs through a session (typed errors naming the problem).

use ferroflow_graph::{AttrValue, NodeSpec, Output};
use ferroflow_image::boxes::*;
use ferroflow_runtime::Session;
use ferroflow_tensor::kernels::random::Philox;
use ferroflow_tensor::{Code, DType, Tensor};
use std::sync::Arc;

fn hard(max: usize, iou: f32) -> NmsParams {
    NmsParams {
        max_output_size: max,
        iou_threshold: iou,
        score_threshold: f32::MIN,
        soft_nms_sigma: 0.0,
        half: false,
    }
}

fn nms(boxes: &[f32], scores: &[f32], p: &NmsParams) -> (Vec<i32>, Vec<f32>) {
    let t = BoxTable::new(boxes);
    non_max_suppression(scores, &Similarity::Iou(&t), p)
}

const DOC_BOXES: [f32; 24] = [
    0.0, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.1, 0.0, -0.1, 1.0, 0.9, 0.0, 10.0, 1.0, 11.0, 0.0, 10.1,
    1.0, 11.1, 0.0, 100.0, 1.0, 101.0,
];
const DOC_SCORES: [f32; 6] = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3];

#[test]
fn nms_selects_greedily_by_score() {
    assert_eq!(nms(&DOC_BOXES, &DOC_SCORES, &hard(3, 0.5)).0, vec![3, 0, 5]);
    assert_eq!(nms(&DOC_BOXES, &DOC_SCORES, &hard(2, 0.5)).0, vec![3, 0]);
    assert!(nms(&DOC_BOXES, &DOC_SCORES, &hard(0, 0.5)).0.is_empty());
    // Threshold 1: nothing overlaps "too much"; order is by score.
    assert_eq!(
        nms(&DOC_BOXES, &DOC_SCORES, &hard(10, 1.0)).0,
        vec![3, 0, 1, 2, 4, 5]
    );
    // Score threshold: strictly above.
    let p = NmsParams {
        score_threshold: 0.75,
        ..hard(10, 0.5)
    };
    assert_eq!(nms(&DOC_BOXES, &DOC_SCORES, &p).0, vec![3, 0]);
}

#[test]
fn nms_ties_go_to_the_lower_index_and_corners_may_be_flipped() {
    let boxes = [
        0.0, 0.0, 1.0, 1.0, 5.0, 5.0, 6.0, 6.0, 0.0, 0.0, 1.0, 1.0, 5.0, 5.0, 6.0, 6.0,
    ];
    assert_eq!(nms(&boxes, &[0.5; 4], &hard(4, 0.5)).0, vec![0, 1]);
    // Same boxes given by the other two corners.
    let flipped = [
        1.0, 1.0, 0.0, 0.0, 6.0, 5.0, 5.0, 6.0, 1.0, 0.0, 0.0, 1.0, 5.0, 6.0, 6.0, 5.0,
    ];
    assert_eq!(nms(&flipped, &[0.5; 4], &hard(4, 0.5)).0, vec![0, 1]);
}

#[test]
fn nms_degenerate_boxes_never_suppress() {
    // A zero-area box identical in place to a real one: IOU is 0.
    let boxes = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0];
    assert_eq!(nms(&boxes, &[0.9, 0.8, 0.7], &hard(3, 0.5)).0, vec![0, 1]);
    // With threshold 0 any real overlap suppresses, touching edges do not.
    let touching = [0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 2.0];
    assert_eq!(nms(&touching, &[0.9, 0.8], &hard(3, 0.0)).0, vec![0, 1]);
}

#[test]
fn nms_sorted_and_queue_paths_agree() {
    // The overlap matrix form always takes the priority-queue path.
    let mut state = 12345u64;
    let mut rnd = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 40) as f32) / (1u64 << 24) as f32
    };
    let n = 300;
    let mut boxes = Vec::new();
    let mut scores = Vec::new();
    for _ in 0..n {
        let (y, x, h, w) = (rnd() * 10.0, rnd() * 10.0, rnd() * 2.0, rnd() * 2.0);
        boxes.extend_from_slice(&[y, x, y + h, x + w]);
        // Coarse scores make many ties.
        scores.push((rnd() * 20.0).floor() / 20.0);
    }
    let t = BoxTable::new(&boxes);
    let m: Vec<f32> = (0..n * n).map(|k| t.iou(k / n, k % n)).collect();
    for thr in [0.0, 0.3, 0.5, 0.9] {
        let p = NmsParams {
            score_threshold: 0.2,
            ..hard(n, thr)
        };
        let a = non_max_suppression(&scores, &Similarity::Iou(&t), &p);
        let b = non_max_suppression(&scores, &Similarity::Matrix(&m, n), &p);
        assert_eq!(a, b, "threshold {thr}");
    }
}

#[test]
fn soft_nms_decays_overlapping_scores() {
    // Box 1 overlaps box 0 with IOU 1/3 (two unit-height boxes, half shifted).
    let boxes = [0.0, 0.0, 1.0, 2.0, 0.0, 1.0, 1.0, 3.0];
    let p = NmsParams {
        soft_nms_sigma: 0.5,
        score_threshold: 0.0,
        ..hard(2, 0.5)
    };
    let (idx, sc) = nms(&boxes, &[0.9, 0.8], &p);
    assert_eq!(idx, vec![0, 1]);
    let iou = 1.0f32 / 3.0;
    let want = 0.8f32 * ((-0.5f32 / 0.5) * iou * iou).exp();
    assert_eq!(sc[0], 0.9);
    assert!((sc[1] - want).abs() < 1e-6, "{} vs {want}", sc[1]);
}

#[test]
fn combined_nms_keeps_the_best_over_classes() {
    // One image, three boxes shared by two classes.
    let boxes = [0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5, 0.55, 0.5, 0.5, 1.2, 1.0];
    let scores = [0.9, 0.1, 0.8, 0.7, 0.3, 0.6];
    let s = CombinedShape {
        batch: 1,
        num_boxes: 3,
        q: 1,
        num_classes: 2,
    };
    let r = combined_non_max_suppression(&boxes, &scores, s, 2, 3, 0.5, 0.2, false, true).unwrap();
    assert_eq!(r.valid, vec![3]);
    assert_eq!(r.scores, vec![0.9, 0.7, 0.6]);
    assert_eq!(r.classes, vec![0.0, 1.0, 1.0]);
    // The third box is clipped to [0, 1].
    assert_eq!(&r.boxes[8..], &[0.5, 0.5, 1.0, 1.0]);
    let r = combined_non_max_suppression(&boxes, &scores, s, 2, 10, 0.5, 0.2, true, false).unwrap();
    assert_eq!(r.per_batch, 4);
    assert_eq!(r.valid, vec![4]);
    assert_eq!(r.scores, vec![0.9, 0.7, 0.6, 0.3]);
    assert_eq!(r.boxes[8..12], [0.5, 0.5, 1.2, 1.0]);
}

fn geom(batch: usize, h: usize, w: usize, d: usize, ch: usize, cw: usize) -> CropGeometry {
    CropGeometry {
        batch,
        height: h,
        width: w,
        depth: d,
        crop_height: ch,
        crop_width: cw,
    }
}

#[test]
fn crop_and_resize_by_hand() {
    // A 2x2 image [[0, 1], [2, 3]] cropped whole to 3x3: bilinear midpoints.
    let img = [0.0, 1.0, 2.0, 3.0];
    let g = geom(1, 2, 2, 1, 3, 3);
    let out = crop_and_resize(
        &img,
        &[0.0, 0.0, 1.0, 1.0],
        &[0],
        g,
        CropMethod::Bilinear,
        0.0,
    );
    assert_eq!(out, vec![0.0, 0.5, 1.0, 1.0, 1.5, 2.0, 2.0, 2.5, 3.0]);
    let out = crop_and_resize(
        &img,
        &[0.0, 0.0, 1.0, 1.0],
        &[0],
        g,
        CropMethod::Nearest,
        0.0,
    );
    // roundf rounds halves away from zero.
    assert_eq!(out, vec![0.0, 1.0, 1.0, 2.0, 3.0, 3.0, 2.0, 3.0, 3.0]);
    // Flipped box: the crop is mirrored; outside samples take the
    // extrapolation value.
    let out = crop_and_resize(
        &img,
        &[1.0, 1.0, 0.0, 0.0],
        &[0],
        g,
        CropMethod::Bilinear,
        0.0,
    );
    assert_eq!(out, vec![3.0, 2.5, 2.0, 2.0, 1.5, 1.0, 1.0, 0.5, 0.0]);
    let g2 = geom(1, 2, 2, 1, 2, 2);
    let out = crop_and_resize(
        &img,
        &[0.0, 0.0, 2.0, 1.0],
        &[0],
        g2,
        CropMethod::Bilinear,
        -7.0,
    );
    assert_eq!(out, vec![0.0, 1.0, -7.0, -7.0]);
    // A 1x1 crop samples the box center.
    let g1 = geom(1, 2, 2, 1, 1, 1);
    let out = crop_and_resize(
        &img,
        &[0.0, 0.0, 1.0, 1.0],
        &[0],
        g1,
        CropMethod::Bilinear,
        0.0,
    );
    assert_eq!(out, vec![1.5]);
}

fn lcg(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32) / (1u64 << 24) as f32
        })
        .collect()
}

#[test]
fn crop_gradients_match_finite_differences() {
    let g = geom(2, 5, 6, 2, 3, 4);
    let img = lcg(2 * 5 * 6 * 2, 7);
    let boxes = [
        0.1, 0.23, 0.8, 0.7, 0.3, 0.05, 0.9, 0.95, 0.02, 0.1, 0.6, 0.5,
    ];
    let ind = [0, 1, 1];
    let up = lcg(3 * 3 * 4 * 2, 9);
    let loss = |img: &[f32], boxes: &[f32]| -> f64 {
        crop_and_resize(img, boxes, &ind, g, CropMethod::Bilinear, 0.0)
            .iter()
            .zip(&up)
            .map(|(a, b)| (*a as f64) * (*b as f64))
            .sum()
    };
    // The image gradient is exact (the crop is linear in the image).
    let gi = crop_and_resize_grad_image(&up, &boxes, &ind, g, CropMethod::Bilinear);
    for k in [0, 13, 37, 60, 71, 119] {
        let mut p = img.clone();
        p[k] += 1.0;
        let fd = loss(&p, &boxes) - loss(&img, &boxes);
        assert!(
            (fd - gi[k] as f64).abs() < 1e-4,
            "pixel {k}: {fd} vs {}",
            gi[k]
        );
    }
    // Box gradients: central differences (boxes stay inside pixel cells).
    let gb = crop_and_resize_grad_boxes(&up, &img, &boxes, &ind, g);
    for k in 0..12 {
        let h = 1e-3f32;
        let (mut a, mut b) = (boxes, boxes);
        a[k] += h;
        b[k] -= h;
        let fd = (loss(&img, &a) - loss(&img, &b)) / (2.0 * h as f64);
        assert!(
            (fd - gb[k] as f64).abs() < 2e-2 * (1.0 + fd.abs()),
            "coord {k}: {fd} vs {}",
            gb[k]
        );
    }
}

#[test]
fn draws_box_outlines_with_tf_rounding() {
    let mut img = vec![0f32; 5 * 5];
    // Rows 0.25*4 = 1 .. 0.9*4 = 3.6 -> 3; cols 0 .. 4; second box inverted.
    let boxes = [0.25, 0.0, 0.9, 1.0, 0.9, 0.0, 0.1, 1.0];
    draw_bounding_boxes(&mut img, [1, 5, 5, 1], &boxes, 2, &[vec![1.0], vec![2.0]]);
    #[rustfmt::skip]
    let want = [
        0.0, 0.0, 0.0, 0.0, 0.0,
        1.0, 1.0, 1.0, 1.0, 1.0,
        1.0, 0.0, 0.0, 0.0, 1.0,
        1.0, 1.0, 1.0, 1.0, 1.0,
        0.0, 0.0, 0.0, 0.0, 0.0,
    ];
    assert_eq!(img, want);
}

#[test]
fn sampled_crops_are_seeded_and_satisfy_constraints() {
    let p = DistortParams {
        min_object_covered: 0.5,
        aspect_ratio_range: [0.75, 1.33],
        area_range: [0.1, 1.0],
        max_attempts: 100,
    };
    let obj = [Rect {
        min_x: 20,
        min_y: 30,
        max_x: 60,
        max_y: 70,
    }];
    let run = |seed| {
        let mut w = Words::new(Philox::new(seed, 7), 0);
        (0..20)
            .map(|_| sample_distorted_crop(100, 120, &obj, &p, &mut w))
            .collect::<Vec<_>>()
    };
    let a = run(1);
    assert_eq!(a, run(1));
    assert_ne!(a, run(2));
    for c in &a {
        assert!(c.min_x >= 0 && c.min_y >= 0 && c.max_x <= 120 && c.max_y <= 100);
        let (w, h) = ((c.max_x - c.min_x) as f32, (c.max_y - c.min_y) as f32);
        let ix = (c.max_x.min(60) - c.min_x.max(20)).max(0) as f32;
        let iy = (c.max_y.min(70) - c.min_y.max(30)).max(0) as f32;
        assert!(ix * iy / 1600.0 >= 0.5, "{c:?}");
        assert!(w * h >= 0.1 * 12000.0 && w * h <= 12000.0);
    }
    // Impossible constraints: the whole image.
    let p2 = DistortParams {
        min_object_covered: 2.0,
        ..p
    };
    let mut w = Words::new(Philox::new(3, 4), 0);
    let c = sample_distorted_crop(100, 120, &obj, &p2, &mut w);
    assert_eq!((c.min_x, c.min_y, c.max_x, c.max_y), (0, 0, 120, 100));
}

#[test]
fn sampled_crops_are_tensorflows() {
    // TF 2.21: tf.image.sample_distorted_bounding_box([24, 32, 3], [[[0.1, 0.1, 0.9, 0.8]]], seed=5,
    // min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 1.0),
    // max_attempts=100) run twice: begin [3, 8] size [19, 16], then begin [1, 3] size [21, 23]
    // (each run reserves max_attempts Philox blocks).
    let p = DistortParams {
        min_object_covered: 0.1,
        aspect_ratio_range: [0.75, 1.33],
        area_range: [0.05, 1.0],
        max_attempts: 100,
    };
    let obj = [Rect {
        min_x: 3,
        min_y: 2,
        max_x: 25,
        max_y: 21,
    }];
    let crop =
        |first| sample_distorted_crop(24, 32, &obj, &p, &mut Words::new(Philox::new(5, 0), first));
    let c = crop(0);
    assert_eq!(
        (c.min_y, c.min_x, c.max_y - c.min_y, c.max_x - c.min_x),
        (3, 8, 19, 16)
    );
    let c = crop(100);
    assert_eq!(
        (c.min_y, c.min_x, c.max_y - c.min_y, c.max_x - c.min_x),
        (1, 3, 21, 23)
    );
}

#[test]
fn glimpses_with_zero_noise() {
    // 3x3 image 0..9, one channel.
    let img: Vec<f32> = (0..9).map(|v| v as f32).collect();
    let mut rng = Words::new(Philox::new(1, 1), 0);
    let p = GlimpseParams {
        height: 2,
        width: 2,
        centered: false,
        normalized: false,
        noise: GlimpseNoise::Zero,
        version: 1,
    };
    // Version 1: offsets are the window center.
    let out = extract_glimpse(&img, [1, 3, 3, 1], &[1.0, 1.0], &p, &mut rng);
    assert_eq!(out, vec![0.0, 1.0, 3.0, 4.0]);
    // Version 2: offsets are the top-left corner.
    let p2 = GlimpseParams { version: 2, ..p };
    let out = extract_glimpse(&img, [1, 3, 3, 1], &[1.0, 1.0], &p2, &mut rng);
    assert_eq!(out, vec![4.0, 5.0, 7.0, 8.0]);
    // Partly outside: zeros there.
    let out = extract_glimpse(&img, [1, 3, 3, 1], &[-1.0, 2.0], &p2, &mut rng);
    assert_eq!(out, vec![0.0, 0.0, 2.0, 0.0]);
}

// ------------------------------------------------------------ through a session

#[test]
fn ops_run_in_a_session_and_refuse_bad_input() {
    ferroflow_image::register();
    let graph = Arc::new(Default::default());
    let session = || Session::new(Arc::clone(&graph));
    let mut n = 0;
    let mut op = |op: &str, inputs: Vec<Output>, attrs: Vec<(&str, AttrValue)>| {
        n += 1;
        let mut spec = NodeSpec::new(op, &format!("{op}{n}")).inputs(inputs);
        for (k, v) in attrs {
            spec = spec.attr(k, v);
        }
        graph.write().add_node(spec).map(|id| Output::new(id, 0))
    };
    let mut c = |t: Tensor| {
        let attrs = vec![
            ("dtype", AttrValue::Type(t.dtype())),
            ("value", AttrValue::Tensor(t)),
        ];
        op("Const", vec![], attrs).unwrap()
    };
    let boxes = c(Tensor::from_vec(vec![6, 4], DOC_BOXES.to_vec()).unwrap());
    let scores = c(Tensor::vector(DOC_SCORES.to_vec()));
    let k = c(Tensor::scalar(3i32));
    let iou = c(Tensor::scalar(0.5f32));
    let st = c(Tensor::scalar(f32::NEG_INFINITY));
    let big = c(Tensor::scalar(1.5f32));
    let bad = c(Tensor::zeros(DType::Float32, vec![6, 3]));
    let image = c(Tensor::zeros(DType::Float32, vec![1, 4, 4, 1]));
    let cb = c(Tensor::from_vec(vec![1, 4], vec![0f32, 0.0, 1.0, 1.0]).unwrap());
    let bi = c(Tensor::vector(vec![1i32]));
    let b0 = c(Tensor::vector(vec![0i32]));
    let cs = c(Tensor::vector(vec![2i32, 2]));
    let nb = c(Tensor::from_vec(vec![1, 4], vec![0f32, f32::NAN, 1.0, 1.0]).unwrap());
    let run = |o: Output| session().run(vec![], &[o], &[]).map(|mut v| v.remove(0));

    let sel = op(
        "NonMaxSuppressionV3",
        vec![boxes, scores, k, iou, st],
        vec![],
    )
    .unwrap();
    assert_eq!(run(sel).unwrap().as_slice::<i32>().unwrap(), &[3, 0, 5]);

    // Shape inference refuses [6,3] boxes at construction.
    let e = op("NonMaxSuppressionV3", vec![bad, scores, k, iou, st], vec![]).unwrap_err();
    assert!(e.message().contains("Dimension must be 4 but is 3"), "{e}");

    // An iou_threshold outside [0, 1] fails at run time.
    let sel = op(
        "NonMaxSuppressionV3",
        vec![boxes, scores, k, big, st],
        vec![],
    )
    .unwrap();
    let e = run(sel).unwrap_err();
    assert_eq!(e.code(), Some(Code::InvalidArgument));
    assert!(
        e.message().contains("iou_threshold must be in [0, 1]"),
        "{e}"
    );

    // box_ind out of range: TensorFlow's OutOfRange error.
    let crop = op("CropAndResize", vec![image, cb, bi, cs], vec![]).unwrap();
    let e = run(crop).unwrap_err();
    assert_eq!(e.code(), Some(Code::OutOfRange));
    assert!(
        e.message()
            .contains("box_index has values outside [0, batch_size)"),
        "{e}"
    );

    // Non-finite boxes.
    let crop = op("CropAndResize", vec![image, nb, b0, cs], vec![]).unwrap();
    let e = run(crop).unwrap_err();
    assert!(e.message().contains("not finite"), "{e}");

    // An unknown method is refused when the kernel is built.
    let method = vec![("method", AttrValue::Str(b"bicubic".to_vec()))];
    let crop = op("CropAndResize", vec![image, cb, b0, cs], method).unwrap();
    let e = run(crop).unwrap_err();
    assert!(
        e.message()
            .contains("method must be 'bilinear' or 'nearest'"),
        "{e}"
    );
}
