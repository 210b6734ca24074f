"""TF1 object-detection building blocks as the SSD/Faster R-CNN repositories wrote them: anchors from
tf.meshgrid, pairwise IoU by broadcasting (tf.maximum/tf.minimum of expanded boxes), box encoding/decoding
against anchors with tf.unstack/tf.stack, matching by tf.argmax + tf.reduce_max with a threshold and
tf.where/tf.boolean_mask, hard-negative mining with tf.nn.top_k, smooth-L1 loss by hand, tf.image.
non_max_suppression (and its padded/with-scores variants), tf.image.crop_and_resize (RoI pooling), tf.image.
resize_images with each method, tf.image.draw_bounding_boxes, and per_image_standardization / rgb_to_grayscale
/ adjust_brightness / adjust_contrast on the crops.

Everything is computed from fixed inputs, so it is deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 1


def main(tf, steps=1):
    tf.reset_default_graph()
    rng = np.random.RandomState(25)
    out = {}
    # Anchors on a 4x4 grid, two sizes.
    ys, xs = tf.meshgrid(tf.range(4, dtype=tf.float32), tf.range(4, dtype=tf.float32), indexing="ij")
    centers = tf.reshape(tf.stack([(ys + 0.5) / 4.0, (xs + 0.5) / 4.0], -1), [-1, 1, 2])
    sizes = tf.constant([[0.2, 0.2], [0.4, 0.3]])
    anchors = tf.reshape(tf.concat([centers - sizes / 2.0, centers + sizes / 2.0], -1), [-1, 4])  # [32, 4]

    gt = tf.constant([[0.1, 0.1, 0.4, 0.35], [0.5, 0.55, 0.95, 0.9], [0.3, 0.6, 0.5, 0.8]])

    def iou(a, b):
        a = tf.expand_dims(a, 1)
        b = tf.expand_dims(b, 0)
        ymin = tf.maximum(a[..., 0], b[..., 0])
        xmin = tf.maximum(a[..., 1], b[..., 1])
        ymax = tf.minimum(a[..., 2], b[..., 2])
        xmax = tf.minimum(a[..., 3], b[..., 3])
        inter = tf.maximum(ymax - ymin, 0.0) * tf.maximum(xmax - xmin, 0.0)
        area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
        area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
        return inter / (area_a + area_b - inter)

    overlaps = iou(anchors, gt)  # [32, 3]
    best_gt = tf.argmax(overlaps, axis=1)
    best_iou = tf.reduce_max(overlaps, axis=1)
    positive = best_iou >= 0.3
    pos_idx = tf.where(positive)[:, 0]
    matched = tf.gather(gt, best_gt)

    def encode(boxes, anc):
        ymin, xmin, ymax, xmax = tf.unstack(boxes, axis=1)
        aymin, axmin, aymax, axmax = tf.unstack(anc, axis=1)
        ah, aw = aymax - aymin, axmax - axmin
        acy, acx = aymin + 0.5 * ah, axmin + 0.5 * aw
        h, w = ymax - ymin, xmax - xmin
        cy, cx = ymin + 0.5 * h, xmin + 0.5 * w
        return tf.stack([(cy - acy) / ah * 10.0, (cx - acx) / aw * 10.0, tf.log(h / ah) * 5.0,
                         tf.log(w / aw) * 5.0], axis=1)

    def decode(codes, anc):
        ty, tx, th, tw = tf.unstack(codes, axis=1)
        aymin, axmin, aymax, axmax = tf.unstack(anc, axis=1)
        ah, aw = aymax - aymin, axmax - axmin
        acy, acx = aymin + 0.5 * ah, axmin + 0.5 * aw
        h, w = tf.exp(th / 5.0) * ah, tf.exp(tw / 5.0) * aw
        cy, cx = ty / 10.0 * ah + acy, tx / 10.0 * aw + acx
        return tf.stack([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], axis=1)

    targets = encode(matched, anchors)
    roundtrip = tf.reduce_max(tf.abs(decode(targets, anchors) - matched))
    preds = tf.constant(rng.randn(32, 4).astype(np.float32) * 0.5)
    diff = tf.abs(tf.boolean_mask(preds - targets, positive))
    smooth_l1 = tf.reduce_sum(tf.where(diff < 1.0, 0.5 * tf.square(diff), diff - 0.5))
    cls_loss = tf.constant(rng.rand(32).astype(np.float32))
    neg_loss = tf.where(positive, tf.zeros_like(cls_loss), cls_loss)
    hard_vals, hard_idx = tf.nn.top_k(neg_loss, k=6)

    scores = tf.constant(rng.rand(32).astype(np.float32))
    boxes = decode(preds * 0.1 + targets, anchors)
    nms = tf.image.non_max_suppression(boxes, scores, max_output_size=5, iou_threshold=0.5)
    nms_t = tf.image.non_max_suppression(boxes, scores, 10, iou_threshold=0.3, score_threshold=0.4)
    nms_scores, nms_sel_scores = tf.image.non_max_suppression_with_scores(boxes, scores, 4, 0.5)
    nms_padded, nms_valid = tf.image.non_max_suppression_padded(boxes, scores, 6, 0.5, pad_to_max_output_size=True)

    image = tf.constant(rng.rand(2, 12, 12, 3).astype(np.float32))
    crops = tf.image.crop_and_resize(image, tf.constant([[0.0, 0.0, 0.5, 0.5], [0.25, 0.3, 0.9, 1.0],
                                                         [0.1, 0.1, 0.4, 0.9]]), tf.constant([0, 1, 1]), [4, 4])
    resized = {m: tf.image.resize_images(image[:1], [5, 7], method=getattr(tf.image.ResizeMethod, m))
               for m in ("BILINEAR", "NEAREST_NEIGHBOR", "BICUBIC", "AREA")}
    drawn = tf.image.draw_bounding_boxes(image, tf.reshape(gt[:2], [2, 1, 4]))
    std = tf.image.per_image_standardization(crops[0])
    gray = tf.image.rgb_to_grayscale(crops)
    bright = tf.image.adjust_brightness(crops, 0.1)
    contrast = tf.image.adjust_contrast(crops, 1.5)

    with tf.Session() as sess:
        r = sess.run({
            "best_gt": best_gt, "best_iou": best_iou, "pos_idx": pos_idx, "roundtrip": roundtrip,
            "smooth_l1": smooth_l1, "hard_idx": hard_idx, "hard_vals": hard_vals, "nms": nms, "nms_t": nms_t,
            "nms_scores": nms_scores, "nms_sel_scores": nms_sel_scores, "nms_padded": nms_padded,
            "nms_valid": nms_valid, "crops": crops, "drawn": drawn, "std": std, "gray": gray, "bright": bright,
            "contrast": contrast, "resized": resized,
        })
    out["best_gt"] = r["best_gt"].tolist()
    out["best_iou"] = r["best_iou"].tolist()
    out["pos_idx"] = r["pos_idx"].tolist()
    out["roundtrip_small"] = bool(r["roundtrip"] < 1e-5)
    out["smooth_l1"] = float(r["smooth_l1"])
    out["hard"] = [r["hard_idx"].tolist(), r["hard_vals"].tolist()]
    out["nms"] = [r["nms"].tolist(), r["nms_t"].tolist(), r["nms_scores"].tolist(), r["nms_sel_scores"].tolist(),
                  r["nms_padded"].tolist(), int(r["nms_valid"])]
    out["crop_sums"] = [float(c.sum()) for c in r["crops"]]
    out["drawn_sum"] = float(r["drawn"].sum())
    out["std_moments"] = [float(r["std"].mean()), float(r["std"].std())]
    out["gray_sum"] = float(r["gray"].sum())
    out["adjust_sums"] = [float(r["bright"].sum()), float(r["contrast"].sum())]
    out["resized_sums"] = {k: float(v.sum()) for k, v in r["resized"].items()}
    out["shapes"] = [anchors.get_shape().as_list(), overlaps.get_shape().as_list(), crops.get_shape().as_list(),
                     nms.get_shape().as_list(), gray.get_shape().as_list()]
    return out


if __name__ == "__main__":
    run_as_script(main, 1)
