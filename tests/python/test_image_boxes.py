"""The box ops of tf.image against TensorFlow 2.21's outputs (fixtures made by
tools/make_image_box_fixtures.py): NMS selection and tie order, soft-NMS scores,
float16, overlaps, combined NMS, crop_and_resize pixels and gradients, box
drawing and glimpses (exact unless noted), plus shapes, seeds and errors."""

import numpy as np
import pytest

import ferroflow as tf
from conftest import FIXTURES
from ferroflow.ops import image_boxes as ib
from ferroflow.ops._op_util import make

DIR = FIXTURES / "image_boxes"


def load(name):
    with np.load(DIR / f"{name}.npz") as z:
        return {k: z[k] for k in z.files}


def run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches) if len(fetches) > 1 else fetches[0], feed)


# ---------------------------------------------------------------- suppression

@pytest.mark.parametrize("thr", ["0.0", "0.3", "0.5", "0.7"])
def test_nms_matches_tf_including_ties(thr):
    f = load("nms")
    sel = ib.non_max_suppression(f["boxes"], f["scores"], 80, float(thr), 0.2)
    assert sel.dtype == tf.int32 and sel.shape.as_list() == [None]
    np.testing.assert_array_equal(run(sel), f[f"v3_{thr}"])


def test_nms_padded_and_soft_nms_match_tf():
    f = load("nms")
    idx, valid = ib.non_max_suppression_padded(f["boxes"], f["scores"], 150, 0.5, 0.5, pad_to_max_output_size=True)
    assert idx.shape.as_list() == [150]
    i, v = run(idx, valid)
    np.testing.assert_array_equal(i, f["v4_idx"])
    assert v == f["v4_valid"]
    idx, valid = ib.non_max_suppression_padded(f["boxes"], f["scores"], 150, 0.5, 0.5)
    i, v = run(idx, valid)
    np.testing.assert_array_equal(i, f["v4_idx"][:v])
    idx, scores = ib.non_max_suppression_with_scores(f["boxes"], f["scores"], 60, 0.5, 0.05, soft_nms_sigma=0.5)
    i, s = run(idx, scores)
    np.testing.assert_array_equal(i, f["v5_idx"])
    np.testing.assert_array_equal(s, f["v5_scores"])


def test_nms_float16_and_overlaps_match_tf():
    f = load("nms")
    b16, s16 = f["boxes"].astype(np.float16), f["scores"].astype(np.float16)
    sel = ib.non_max_suppression(tf.constant(b16), tf.constant(s16), 80, np.float16(0.5), np.float16(0.2))
    np.testing.assert_array_equal(run(sel), f["half_idx"])
    idx, sc = ib.non_max_suppression_with_scores(tf.constant(b16), tf.constant(s16), 40, 0.5, 0.05, 0.5)
    i, s = run(idx, sc)
    assert s.dtype == np.float16
    np.testing.assert_array_equal(i, f["half_v5_idx"])
    np.testing.assert_array_equal(s, f["half_v5_scores"])
    sel = ib.non_max_suppression_overlaps(f["overlaps"], f["overlap_scores"], 15, 0.6, 0.1)
    np.testing.assert_array_equal(run(sel), f["overlaps_idx"])


@pytest.mark.parametrize("q", [1, 4])
def test_combined_nms_matches_tf(q):
    f = load(f"combined_q{q}")
    for pad in (0, 1):
        for clip in (0, 1):
            for total in (7, 100):
                out = ib.combined_non_max_suppression(f["in_boxes"], f["in_scores"], 5, total, 0.4, 0.3,
                                                      pad_per_class=bool(pad), clip_boxes=bool(clip))
                got = run(*out)
                key = f"{pad}{clip}_{total}_"
                for name, g in zip(("boxes", "scores", "classes", "valid"), got):
                    np.testing.assert_array_equal(g, f[key + name], err_msg=key + name)
                    assert list(out[0].shape)[:2] == [2, f[key + "scores"].shape[1]]


def test_nms_errors_name_the_problem():
    boxes = np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError, match="Dimension must be 4 but is 3"):
        ib.non_max_suppression(np.zeros((4, 3), np.float32), np.zeros(4, np.float32), 2)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 5"):
        ib.non_max_suppression(boxes, np.zeros(5, np.float32), 2)
    k = tf.placeholder(tf.int32, [])
    sel = ib.non_max_suppression(boxes, np.zeros(4, np.float32), k)
    with pytest.raises(tf.errors.InvalidArgumentError, match="output size must be non-negative"):
        run(sel, feed={k: -1})
    thr = tf.placeholder(tf.float32, [])
    sel = ib.non_max_suppression(boxes, np.zeros(4, np.float32), 2, thr)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"iou_threshold must be in \[0, 1\]"):
        run(sel, feed={thr: 1.5})
    with pytest.raises(ValueError, match="must be True for batched input"):
        ib.non_max_suppression_padded(np.zeros((2, 4, 4), np.float32), np.zeros((2, 4), np.float32), 2)


# --------------------------------------------------------------------- crops

def test_crop_and_resize_matches_tf_pixels():
    f = load("crop_and_resize")
    for method in ("bilinear", "nearest"):
        for size in ((5, 4), (1, 1), (1, 6)):
            c = ib.crop_and_resize(f["image"], f["boxes"], f["box_ind"], size, method=method, extrapolation_value=0.5)
            assert c.shape.as_list() == [6, size[0], size[1], 3]
            np.testing.assert_array_equal(run(c), f[f"{method}_{size[0]}x{size[1]}"], err_msg=f"{method} {size}")
    c = ib.crop_and_resize(f["image_u8"], f["boxes"], box_indices=f["box_ind"], crop_size=(5, 4))
    assert c.dtype == tf.float32
    np.testing.assert_array_equal(run(c), f["uint8"])


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_gradients_match_tf(method):
    f = load("crop_and_resize")
    image = tf.constant(f["image"])
    boxes = tf.constant(f["boxes"])
    crops = ib.crop_and_resize(image, boxes, f["box_ind"], (5, 4), method=method)
    loss = tf.reduce_sum(crops * f["weights"])
    gi, gb = tf.gradients(loss, [image, boxes])
    assert gi.op.type == "CropAndResizeGradImage" and gb.op.type == "CropAndResizeGradBoxes"
    a, b = run(gi, gb)
    # Both add the same float32 terms in TF's order: bit for bit.
    np.testing.assert_array_equal(a, f[f"grad_image_{method}"])
    np.testing.assert_array_equal(b, f[f"grad_boxes_{method}"])


def test_crop_and_resize_bad_box_index_is_out_of_range():
    c = ib.crop_and_resize(np.zeros((1, 4, 4, 1), np.float32), [[0, 0, 1, 1]], [1], (2, 2))
    with pytest.raises(tf.errors.OutOfRangeError, match=r"box_index has values outside \[0, batch_size\)"):
        run(c)
    with pytest.raises(ValueError, match="must be 'bilinear' or 'nearest'"):
        ib.crop_and_resize(np.zeros((1, 4, 4, 1), np.float32), [[0, 0, 1, 1]], [0], (2, 2), method="area")


# ------------------------------------------------------------ drawing, glimpses

@pytest.mark.parametrize("depth", [1, 3, 4])
def test_draw_bounding_boxes_matches_tf(depth):
    f = load("draw_bounding_boxes")
    images = f[f"images_{depth}"]
    np.testing.assert_array_equal(run(ib.draw_bounding_boxes(images, f["boxes"])), f[f"default_{depth}"])
    out = ib.draw_bounding_boxes(images, f["boxes"], colors=f[f"colors_{depth}"])
    np.testing.assert_array_equal(run(out), f[f"colored_{depth}"])


def test_extract_glimpse_matches_tf_with_zero_noise():
    f = load("extract_glimpse")
    for version, op in ((1, "ExtractGlimpse"), (2, "ExtractGlimpseV2")):
        for centered in (0, 1):
            for normalized in (0, 1):
                key = f"v{version}_{centered}{normalized}"
                out = make(op, [tf.constant(f["image"]), tf.constant([4, 5]), tf.constant(f[key + "_offsets"])],
                           {"centered": bool(centered), "normalized": bool(normalized), "uniform_noise": False,
                            "noise": "zero"})
                assert out.shape.as_list() == [3, 4, 5, 2]
                np.testing.assert_array_equal(run(out), f[key], err_msg=key)


def test_extract_glimpse_noise_stays_in_the_image_range():
    image = np.random.default_rng(0).random((1, 6, 6, 1)).astype(np.float32)
    g = run(ib.extract_glimpse(image, [4, 4], [[0.9, 0.9]]))
    assert g.min() >= image.min() and g.max() <= image.max()


# --------------------------------------------------------- distorted crops

def test_sample_distorted_bounding_box_is_seeded_and_valid():
    bbox = np.array([[[0.2, 0.3, 0.6, 0.7]]], np.float32)
    begin, size, box = ib.sample_distorted_bounding_box([100, 120, 3], bbox, seed=3, min_object_covered=0.5,
                                                        area_range=(0.1, 1.0))
    assert begin.shape.as_list() == [3] and box.shape.as_list() == [1, 1, 4]
    with tf.Session() as s1:
        first = [s1.run([begin, size, box]) for _ in range(5)]
    with tf.Session() as s2:
        again = [s2.run([begin, size, box]) for _ in range(5)]
    for (b, s, bx), (b2, s2_, _bx2) in zip(first, again):
        np.testing.assert_array_equal(b, b2)
        np.testing.assert_array_equal(s, s2_)
        assert b[2] == 0 and s[2] == -1
        assert 0 <= b[0] and b[0] + s[0] <= 100 and 0 <= b[1] and b[1] + s[1] <= 120
        np.testing.assert_allclose(bx[0, 0], [b[0] / 100, b[1] / 120, (b[0] + s[0]) / 100, (b[1] + s[1]) / 120],
                                   rtol=1e-6)
        iy = min(b[0] + s[0], 60) - max(b[0], 20)
        ix = min(b[1] + s[1], 84) - max(b[1], 36)
        assert max(iy, 0) * max(ix, 0) >= 0.5 * 40 * 48
    assert len({tuple(x[0]) for x in first}) > 1  # successive runs draw fresh crops


def test_sample_distorted_bounding_box_errors():
    out = ib.sample_distorted_bounding_box([10, 10, 3], np.zeros((1, 0, 4), np.float32), seed=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No bounding boxes provided"):
        run(out)
    out = ib.sample_distorted_bounding_box([10, 10, 3], [[[0.0, 0.0, 1.5, 1.0]]], seed=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"must be in \[0.0, 1.0\]"):
        run(out)
    b, s, _ = ib.sample_distorted_bounding_box([10, 10, 3], np.zeros((1, 0, 4), np.float32), seed=1,
                                               use_image_if_no_bounding_boxes=True, min_object_covered=0.0)
    bb, ss = run(b, s)
    assert bb[0] + ss[0] <= 10 and bb[1] + ss[1] <= 10
