"""tf.image.generate_bounding_box_proposals against a numpy model of
TensorFlow's kernel.

TensorFlow 2.21 has this op for GPUs only: on a CPU build it fails with
NotFoundError ("Could not find device for node ... All kernels registered for
op GenerateBoundingBoxProposals: device='GPU'"), so no fixture can come from
it here. The reference below follows the GPU kernel's documented steps
(generate_box_proposals_op.cu.cc): stable descending sort of the scores, the
best pre_nms_topn decoded against their anchors with dw/dh capped at
log(1000/16), boxes clipped to the image and kept when their shorter side is
at least min_size * scale, then greedy NMS where a box is dropped when its
intersection with a kept box exceeds threshold * union.
"""

import numpy as np
import pytest

import ferroflow as tf


def reference(scores, deltas, info, anchors, nms_threshold, pre_nms_topn, min_size, post_nms_topn):
    n, h, w, a = scores.shape
    f = np.float32
    clip = f(np.log(1000.0 / 16.0))
    rois = np.zeros((n, post_nms_topn, 4), np.float32)
    probs = np.zeros((n, post_nms_topn), np.float32)
    anc = anchors.reshape(-1, 4)
    for i in range(n):
        s = scores[i].reshape(-1)
        d = deltas[i].reshape(-1, 4)
        order = np.argsort(-s, kind="stable")[:pre_nms_topn]
        y1, x1, y2, x2 = (anc[order, k] for k in range(4))
        dy, dx = d[order, 0], d[order, 1]
        dh, dw = np.minimum(d[order, 2], clip), np.minimum(d[order, 3], clip)
        bw = x2 - x1
        cx = x1 + f(0.5) * bw + bw * dx
        pw = bw * np.exp(dw)
        bh = y2 - y1
        cy = y1 + f(0.5) * bh + bh * dy
        ph = bh * np.exp(dh)
        img_h, img_w, scale = info[i, 0], info[i, 1], info[i, 2]
        nx1 = np.clip(cx - f(0.5) * pw, 0, img_w)
        nx2 = np.clip(cx + f(0.5) * pw, 0, img_w)
        ny1 = np.clip(cy - f(0.5) * ph, 0, img_h)
        ny2 = np.clip(cy + f(0.5) * ph, 0, img_h)
        keep = np.minimum(nx2 - nx1, ny2 - ny1) >= f(min_size) * scale
        boxes = np.stack([nx1, ny1, nx2, ny2], 1)[keep]
        sc = s[order][keep]
        area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        removed = np.zeros(len(boxes), bool)
        kept = []
        for j in range(len(boxes)):
            if removed[j]:
                continue
            kept.append(j)
            if len(kept) >= post_nms_topn:
                break
            rest = np.arange(j + 1, len(boxes))
            iw = np.maximum(np.minimum(boxes[rest, 2], boxes[j, 2]) - np.maximum(boxes[rest, 0], boxes[j, 0]), 0)
            ih = np.maximum(np.minimum(boxes[rest, 3], boxes[j, 3]) - np.maximum(boxes[rest, 1], boxes[j, 1]), 0)
            inter = iw * ih
            over = inter > (area[j] + area[rest] - inter) * f(nms_threshold)
            over &= (area[j] != 0) & (area[rest] != 0)
            removed[rest[over]] = True
        for k, j in enumerate(kept):
            rois[i, k] = boxes[j, [1, 0, 3, 2]]
            probs[i, k] = sc[j]
    return rois, probs


def random_case(seed, n, h, w, a):
    rng = np.random.default_rng(seed)
    scores = rng.random((n, h, w, a), dtype=np.float32)
    deltas = (rng.normal(size=(n, h, w, 4 * a)) * 0.3).astype(np.float32)
    deltas[..., 2::4][rng.random(deltas[..., 2::4].shape) < 0.05] = 9.0  # past the dh/dw cap
    # Anchors on a stride-8 grid, a sizes/aspects per position.
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32) * 8
    sizes = np.linspace(12, 60, a, dtype=np.float32)
    ratio = np.linspace(0.5, 2.0, a, dtype=np.float32)
    ah = sizes * np.sqrt(ratio)
    aw = sizes / np.sqrt(ratio)
    cy, cx = ys[..., None] + 4, xs[..., None] + 4
    anchors = np.stack([cy - ah / 2, cx - aw / 2, cy + ah / 2, cx + aw / 2], -1).reshape(h, w, 4 * a)
    info = np.stack([np.full(n, h * 8 - 3), np.full(n, w * 8 + 5), rng.uniform(0.5, 1.5, n),
                     np.zeros(n), np.zeros(n)], 1).astype(np.float32)
    return scores, deltas, info, anchors.astype(np.float32)


CASES = [
    # seed, n, h, w, a, nms_threshold, pre_nms_topn, min_size, post_nms_topn
    (0, 1, 5, 6, 3, 0.7, 6000, 16, 300),
    (1, 2, 7, 5, 9, 0.5, 100, 8, 50),
    (2, 3, 4, 4, 1, 0.3, 10, 4, 8),
    (3, 2, 8, 8, 4, 0.9, 64, 0, 20),
    (4, 1, 3, 9, 2, 0.0, 6000, 2, 5),
    (5, 4, 6, 3, 5, 1.0, 30, 10, 40),
]


@pytest.mark.parametrize("case", CASES, ids=[f"seed{c[0]}-n{c[1]}-a{c[4]}" for c in CASES])
def test_matches_reference(case):
    seed, n, h, w, a, thr, pre, min_size, post = case
    scores, deltas, info, anchors = random_case(seed, n, h, w, a)
    want_rois, want_probs = reference(scores, deltas, info, anchors, thr, pre, min_size, post)
    with tf.Graph().as_default():
        out = tf.image.generate_bounding_box_proposals(scores, deltas, info, anchors, nms_threshold=thr,
                                                       pre_nms_topn=pre, min_size=min_size, post_nms_topn=post)
        assert out.rois.shape.as_list() == [n, post, 4]
        assert out.roi_probabilities.shape.as_list() == [n, post]
        with tf.Session() as sess:
            rois, probs = sess.run(out)
    np.testing.assert_array_equal(probs, want_probs)
    np.testing.assert_allclose(rois, want_rois, rtol=1e-5, atol=1e-4)
    # Past the kept boxes every row is zero (scores here are all positive).
    for i in range(n):
        k = int((probs[i] > 0).sum())
        assert not rois[i, k:].any() and not probs[i, k:].any()


def test_defaults_and_static_shapes():
    with tf.Graph().as_default():
        s = tf.placeholder(tf.float32, [None, 2, 2, 1])
        d = tf.placeholder(tf.float32, [None, 2, 2, 4])
        info = tf.placeholder(tf.float32, [None, 5])
        anchors = tf.placeholder(tf.float32, [2, 2, 4])
        rois, probs = tf.image.generate_bounding_box_proposals(s, d, info, anchors)
        assert rois.shape.as_list() == [None, 300, 4]
        assert probs.shape.as_list() == [None, 300]
        assert rois.op.type == "GenerateBoundingBoxProposals"
        with pytest.raises(ValueError, match="rank"):
            tf.image.generate_bounding_box_proposals(tf.zeros([2, 2, 1]), d, info, anchors)
        scores, deltas, inf, anc = random_case(7, 1, 2, 2, 1)
        with tf.Session() as sess:
            r, p = sess.run([rois, probs], {s: scores, d: deltas, info: inf, anchors: anc})
        want_r, want_p = reference(scores, deltas, inf, anc, 0.7, 6000, 16, 300)
        np.testing.assert_array_equal(p, want_p)
        np.testing.assert_allclose(r, want_r, rtol=1e-5, atol=1e-4)
        assert tf.gradients(rois, [s])[0] is None


def test_bad_inputs_are_typed_errors():
    scores, deltas, info, anchors = random_case(8, 2, 3, 3, 2)
    with tf.Graph().as_default():
        def run(**kw):
            args = dict(scores=scores, bbox_deltas=deltas, image_info=info, anchors=anchors)
            args.update(kw)
            out = tf.image.generate_bounding_box_proposals(**args)
            with tf.Session() as sess:
                return sess.run(out)

        with pytest.raises(tf.errors.InvalidArgumentError, match="nms_threshold should be between 0 and 1"):
            run(nms_threshold=1.5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="pre_nms_topn should be greater than 0"):
            run(pre_nms_topn=0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="post_nms_topn can't be 0 or less"):
            run(post_nms_topn=0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="GenerateBoundingBoxProposals: bbox_deltas"):
            run(bbox_deltas=deltas[:, :, :, :4])
        with pytest.raises(tf.errors.InvalidArgumentError, match="GenerateBoundingBoxProposals: image_info"):
            run(image_info=info[:1])
        with pytest.raises(tf.errors.OutOfRangeError, match="Box dimensions need to be 4"):
            run(anchors=anchors[:, :, :4])
