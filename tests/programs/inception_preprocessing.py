"""TF-Slim's inception_preprocessing.py with tf.compat.v1 names: distorted_bounding_box_crop by
tf.image.sample_distorted_bounding_box (bounding_boxes, min_object_covered, aspect_ratio_range, area_range,
max_attempts, use_image_if_no_bounding_boxes, seeded), tf.slice to the sampled box, tf.image.draw_bounding_boxes
of the box, tf.image.resize_images with each ResizeMethod (bilinear, nearest, bicubic, area) chosen by
apply_with_random_selector's tf.case-free switch (control_flow_ops.merge replaced by a tf.case over a fixed
selector), random_flip_left_right, distort_color's fixed color orderings (brightness/saturation/hue/contrast
with max_delta), tf.subtract(0.5)/tf.multiply(2.0) scaling; the eval branch: central_crop(0.875),
resize_bilinear with align_corners=False, and tf.image.resize_image_with_pad / crop_to_bounding_box /
pad_to_bounding_box / extract_glimpse-free crop_and_resize for boxes.

The eval path, every resize method and the fixed color orderings are deterministic and compared with TF; so are
the seeded sampled boxes (TF's Philox stream, run after run).
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 1


def distort_color(tf, image, color_ordering=0):
    if color_ordering == 0:
        image = tf.image.adjust_brightness(image, 32.0 / 255.0)
        image = tf.image.adjust_saturation(image, 1.3)
        image = tf.image.adjust_hue(image, 0.1)
        image = tf.image.adjust_contrast(image, 0.7)
    else:
        image = tf.image.adjust_saturation(image, 0.6)
        image = tf.image.adjust_brightness(image, -20.0 / 255.0)
        image = tf.image.adjust_contrast(image, 1.4)
        image = tf.image.adjust_hue(image, -0.15)
    return tf.clip_by_value(image, 0.0, 1.0)


def main(tf, steps=1):
    rng = np.random.RandomState(171)
    raw = (rng.uniform(0, 255, size=(24, 32, 3))).astype(np.uint8)
    out = {}
    tf.reset_default_graph()
    tf.set_random_seed(17)
    image = tf.image.convert_image_dtype(tf.constant(raw), dtype=tf.float32)
    bbox = tf.constant([0.1, 0.1, 0.9, 0.8], dtype=tf.float32, shape=[1, 1, 4])
    begin, size, distort_bbox = tf.image.sample_distorted_bounding_box(
        tf.shape(image), bounding_boxes=bbox, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
        area_range=(0.05, 1.0), max_attempts=100, use_image_if_no_bounding_boxes=True, seed=5)
    cropped = tf.slice(image, begin, size)
    drawn = tf.image.draw_bounding_boxes(tf.expand_dims(image, 0), distort_bbox)
    resized = {}
    for method in range(4):
        resized[method] = tf.image.resize_images(cropped, [12, 12], method=method)
    by_case = tf.case([(tf.equal(tf.constant(2), k), (lambda m=k: resized[m])) for k in range(4)],
                      default=lambda: resized[0], exclusive=True)
    colors = [distort_color(tf, resized[0], k) for k in range(2)]
    train_image = tf.multiply(tf.subtract(colors[0], 0.5), 2.0)

    # Eval branch.
    central = tf.image.central_crop(image, central_fraction=0.875)
    ev = tf.image.resize_bilinear(tf.expand_dims(central, 0), [16, 16], align_corners=False)
    ev = tf.multiply(tf.subtract(tf.squeeze(ev, [0]), 0.5), 2.0)
    padded = tf.image.resize_image_with_pad(image, 20, 20)
    crop_box = tf.image.crop_to_bounding_box(image, 2, 3, 10, 12)
    pad_box = tf.image.pad_to_bounding_box(crop_box, 1, 2, 14, 16)
    car = tf.image.crop_and_resize(tf.expand_dims(image, 0), [[0.0, 0.0, 0.5, 0.5], [0.2, 0.3, 0.9, 1.0]],
                                   [0, 0], [6, 6])
    resize_methods = {
        "bilinear": tf.image.ResizeMethod.BILINEAR, "nearest": tf.image.ResizeMethod.NEAREST_NEIGHBOR,
        "bicubic": tf.image.ResizeMethod.BICUBIC, "area": tf.image.ResizeMethod.AREA}
    up = {k: tf.image.resize_images(image, [30, 41], method=m) for k, m in resize_methods.items()}
    up_ac = tf.image.resize_images(image, [30, 41], align_corners=True)
    keep = tf.image.resize_images(image, [20, 20], preserve_aspect_ratio=True)
    with tf.Session() as sess:
        r = sess.run({"begin": begin, "size": size, "bbox": distort_bbox, "drawn": drawn,
                      "resized": resized, "case": by_case, "colors": colors, "train": train_image,
                      "eval": ev, "padded": padded, "pad_box": pad_box, "car": car, "up": up,
                      "up_ac": up_ac, "keep": keep})
        # The op's stream moves on: three more draws.
        out["later_boxes"] = [np.concatenate(sess.run([begin, size])).tolist() for _ in range(3)]
    out["begin"] = r["begin"].tolist()
    out["size"] = r["size"].tolist()
    out["bbox"] = r["bbox"].ravel().tolist()
    out["drawn_sum"] = float(r["drawn"].sum())
    for k, v in r["resized"].items():
        out[f"resize_{k}"] = v.ravel()[:60].tolist()
        out[f"resize_{k}_sum"] = float(v.sum())
    out["case_is_bicubic"] = bool(np.array_equal(r["case"], r["resized"][2]))
    out["colors"] = [float(c.sum()) for c in r["colors"]]
    out["color0"] = r["colors"][0].ravel()[:60].tolist()
    out["color1"] = r["colors"][1].ravel()[:60].tolist()
    out["train_sum"] = float(r["train"].sum())
    out["eval"] = r["eval"].ravel()[::7].tolist()
    out["padded_sum"] = float(r["padded"].sum())
    out["pad_box_sum"] = float(r["pad_box"].sum())
    out["car"] = r["car"].ravel()[::5].tolist()
    for k, v in r["up"].items():
        out[f"up_{k}"] = v.ravel()[::17].tolist()
    out["up_align_corners"] = r["up_ac"].ravel()[::17].tolist()
    out["keep_shape"] = list(r["keep"].shape)
    out["static"] = [str(t.shape) for t in (cropped, resized[0], central, padded, keep)]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
