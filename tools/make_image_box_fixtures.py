"""Makes the TensorFlow reference outputs for the box ops of tf.image
(tests/python/test_image_boxes.py): non-max suppression (v3, v4 padded, v5
soft-NMS, overlaps, float16, combined), crop_and_resize (bilinear, nearest,
uint8, extrapolation, flipped and outside boxes) with its gradients,
draw_bounding_boxes and extract_glimpse (noise="zero").

Run with TensorFlow 2.21: /work/tfvenv/bin/python tools/make_image_box_fixtures.py
Writes tests/fixtures/image_boxes/*.npz (inputs and TF's outputs, seeded).
"""

import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "image_boxes")
R = tf.raw_ops


def save(name, **arrays):
    os.makedirs(OUT, exist_ok=True)
    np.savez_compressed(os.path.join(OUT, name + ".npz"), **{k: np.asarray(v) for k, v in arrays.items()})


def random_boxes(rng, n, flip=True):
    yx = rng.uniform(0, 10, size=(n, 2)).astype(np.float32)
    hw = rng.uniform(0.2, 3, size=(n, 2)).astype(np.float32)
    b = np.concatenate([yx, yx + hw], axis=1)
    if flip:  # some boxes given by the other corners
        f = rng.random(n) < 0.3
        b[f] = b[f][:, [2, 3, 0, 1]]
    b[:3, 2] = b[:3, 0]  # degenerate (zero-area) boxes
    return b


def nms(rng):
    n = 300
    boxes = random_boxes(rng, n)
    scores = (np.floor(rng.random(n) * 25) / 25).astype(np.float32)  # many ties
    cases = {}
    for thr in (0.0, 0.3, 0.5, 0.7):
        cases[f"v3_{thr}"] = R.NonMaxSuppressionV3(boxes=boxes, scores=scores, max_output_size=80,
                                                    iou_threshold=thr, score_threshold=0.2).numpy()
    idx, valid = R.NonMaxSuppressionV4(boxes=boxes, scores=scores, max_output_size=150, iou_threshold=0.5,
                                       score_threshold=0.5, pad_to_max_output_size=True)
    cases["v4_idx"], cases["v4_valid"] = idx.numpy(), valid.numpy()
    idx, sc, valid = R.NonMaxSuppressionV5(boxes=boxes, scores=scores, max_output_size=60, iou_threshold=0.5,
                                           score_threshold=0.05, soft_nms_sigma=0.5, pad_to_max_output_size=False)
    cases["v5_idx"], cases["v5_scores"], cases["v5_valid"] = idx.numpy(), sc.numpy(), valid.numpy()
    b16, s16 = boxes.astype(np.float16), scores.astype(np.float16)
    cases["half_idx"] = R.NonMaxSuppressionV3(boxes=b16, scores=s16, max_output_size=80,
                                              iou_threshold=np.float16(0.5),
                                              score_threshold=np.float16(0.2)).numpy()
    idx, sc, _ = R.NonMaxSuppressionV5(boxes=b16, scores=s16, max_output_size=40, iou_threshold=np.float16(0.5),
                                       score_threshold=np.float16(0.05), soft_nms_sigma=np.float16(0.5),
                                       pad_to_max_output_size=False)
    cases["half_v5_idx"], cases["half_v5_scores"] = idx.numpy(), sc.numpy()
    overlaps = rng.random((40, 40)).astype(np.float32)
    ov_scores = rng.random(40).astype(np.float32)
    cases["overlaps_idx"] = R.NonMaxSuppressionWithOverlaps(overlaps=overlaps, scores=ov_scores,
                                                            max_output_size=15, overlap_threshold=0.6,
                                                            score_threshold=0.1).numpy()
    save("nms", boxes=boxes, scores=scores, overlaps=overlaps, overlap_scores=ov_scores, **cases)


def combined(rng):
    batch, n, classes = 2, 40, 4
    for q in (1, classes):
        yx = rng.uniform(0, 0.9, size=(batch, n, q, 2)).astype(np.float32)
        hw = rng.uniform(0.05, 0.4, size=(batch, n, q, 2)).astype(np.float32)
        boxes = np.concatenate([yx, yx + hw], axis=-1)
        scores = rng.random((batch, n, classes)).astype(np.float32)
        out = {}
        for pad in (False, True):
            for clip in (False, True):
                for total in (7, 100):
                    r = R.CombinedNonMaxSuppression(boxes=boxes, scores=scores, max_output_size_per_class=5,
                                                    max_total_size=total, iou_threshold=0.4, score_threshold=0.3,
                                                    pad_per_class=pad, clip_boxes=clip)
                    for k, v in zip(("boxes", "scores", "classes", "valid"), r):
                        out[f"{int(pad)}{int(clip)}_{total}_{k}"] = v.numpy()
        save(f"combined_q{q}", in_boxes=boxes, in_scores=scores, **out)


def crops(rng):
    image = rng.uniform(-1, 2, size=(2, 9, 11, 3)).astype(np.float32)
    boxes = np.array([
        [0.1, 0.2, 0.8, 0.9],
        [0.9, 0.8, 0.05, 0.1],   # flipped
        [-0.3, 0.4, 1.2, 1.1],   # partly outside
        [0.0, 0.0, 1.0, 1.0],
        [0.33, 0.47, 0.33, 0.47],  # a point
        [0.25, 0.125, 0.75, 0.625],
    ], np.float32)
    ind = np.array([0, 1, 1, 0, 1, 0], np.int32)
    out = {}
    for method in ("bilinear", "nearest"):
        for size in ((5, 4), (1, 1), (1, 6)):
            key = f"{method}_{size[0]}x{size[1]}"
            out[key] = R.CropAndResize(image=image, boxes=boxes, box_ind=ind, crop_size=size, method=method,
                                       extrapolation_value=0.5).numpy()
    u8 = rng.integers(0, 256, size=(2, 9, 11, 3)).astype(np.uint8)
    out["uint8"] = R.CropAndResize(image=u8, boxes=boxes, box_ind=ind, crop_size=(5, 4)).numpy()
    # Gradients of sum(crops * weights) with respect to image and boxes.
    weights = rng.uniform(-1, 1, size=(6, 5, 4, 3)).astype(np.float32)
    for method in ("bilinear", "nearest"):
        img_v, box_v = tf.constant(image), tf.constant(boxes)
        with tf.GradientTape() as tape:
            tape.watch([img_v, box_v])
            c = tf.image.crop_and_resize(img_v, box_v, ind, (5, 4), method=method)
            loss = tf.reduce_sum(c * weights)
        gi, gb = tape.gradient(loss, [img_v, box_v])
        out[f"grad_image_{method}"], out[f"grad_boxes_{method}"] = gi.numpy(), gb.numpy()
    save("crop_and_resize", image=image, image_u8=u8, boxes=boxes, box_ind=ind, weights=weights, **out)


def draw(rng):
    boxes = np.array([[
        [0.1, 0.2, 0.6, 0.7],
        [0.5, 0.5, 0.99, 1.3],   # leaves the image right
        [-0.2, -0.1, 0.3, 0.4],  # starts above-left
        [0.7, 0.1, 0.2, 0.9],    # inverted: not drawn
        [0.0, 0.0, 1.0, 1.0],
    ]] * 2, np.float32)
    boxes[1] = boxes[1][::-1]
    out = {}
    for depth in (1, 3, 4):
        images = rng.random((2, 7, 8, depth)).astype(np.float32)
        out[f"images_{depth}"] = images
        out[f"default_{depth}"] = R.DrawBoundingBoxes(images=images, boxes=boxes).numpy()
        colors = rng.random((3, 4)).astype(np.float32)
        out[f"colors_{depth}"] = colors
        out[f"colored_{depth}"] = R.DrawBoundingBoxesV2(images=images, boxes=boxes, colors=colors).numpy()
    save("draw_bounding_boxes", boxes=boxes, **out)


def glimpse(rng):
    image = rng.random((3, 10, 12, 2)).astype(np.float32)
    offsets = np.array([[0.3, -0.4], [-0.95, 0.9], [0.1, 0.2]], np.float32)
    pixel_offsets = np.array([[3.0, 4.5], [-2.0, 10.0], [8.7, 1.2]], np.float32)
    out = {}
    for version, op in ((1, R.ExtractGlimpse), (2, R.ExtractGlimpseV2)):
        for centered in (False, True):
            for normalized in (False, True):
                offs = offsets if normalized else pixel_offsets
                if normalized and not centered:
                    offs = np.abs(offs)
                key = f"v{version}_{int(centered)}{int(normalized)}"
                out[key + "_offsets"] = offs
                out[key] = op(input=image, size=(4, 5), offsets=offs, centered=centered, normalized=normalized,
                              uniform_noise=False, noise="zero").numpy()
    save("extract_glimpse", image=image, **out)


def main():
    rng = np.random.default_rng(20)
    nms(rng)
    combined(rng)
    crops(rng)
    draw(rng)
    glimpse(rng)
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
