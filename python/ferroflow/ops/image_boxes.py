"""The box ops of ``tf.image``: non-max suppression, ``crop_and_resize``,
``draw_bounding_boxes``, ``sample_distorted_bounding_box``,
``extract_glimpse`` and ``generate_bounding_box_proposals``, with TensorFlow
1.x's signatures and defaults.

Each wrapper emits the op TensorFlow's own wrapper emits (``NonMaxSuppressionV3``
for ``non_max_suppression``, ``NonMaxSuppressionV5`` for the ``_with_scores``
form, ``SampleDistortedBoundingBoxV2`` for the sampler, ...); the kernels and
the gradient of ``CropAndResize`` are in Rust (``crates/image/src/boxes.rs``).
"""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, make_op, type_attr

__all__ = [
    "combined_non_max_suppression",
    "crop_and_resize",
    "draw_bounding_boxes",
    "extract_glimpse",
    "generate_bounding_box_proposals",
    "non_max_suppression",
    "non_max_suppression_overlaps",
    "non_max_suppression_padded",
    "non_max_suppression_with_scores",
    "sample_distorted_bounding_box",
]


def _t(value, name, dtype=None):
    return ops.convert_to_tensor(value, dtype=dtype, name=name)


def _float_attrs(boxes, threshold):
    return {"T": type_attr(boxes.dtype.base_dtype), "T_threshold": type_attr(threshold.dtype.base_dtype)}


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                        name=None):
    """Greedily selects boxes in descending order of score (``NonMaxSuppressionV3``).

    Boxes are ``[num_boxes, 4]`` as any two diagonal corners; a box is dropped when its
    IOU with a box already selected exceeds ``iou_threshold``. Returns the selected indices.
    """
    with ops.name_scope(name, "non_max_suppression"):
        boxes = _t(boxes, "boxes")
        scores = _t(scores, "scores", boxes.dtype)
        max_output_size = _t(max_output_size, "max_output_size", dtypes.int32)
        iou_threshold = _t(iou_threshold, "iou_threshold")
        score_threshold = _t(score_threshold, "score_threshold")
        return make("NonMaxSuppressionV3", [boxes, scores, max_output_size, iou_threshold, score_threshold],
                    _float_attrs(boxes, iou_threshold), "NonMaxSuppressionV3")


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0, name=None):
    """Non-max suppression that also returns the scores (``NonMaxSuppressionV5``).

    With ``soft_nms_sigma > 0`` overlapping boxes are not dropped but their scores decay by
    ``exp(-iou**2 / (2 * sigma))`` (Soft-NMS); returns ``(selected_indices, selected_scores)``.
    """
    with ops.name_scope(name, "non_max_suppression_with_scores"):
        boxes = _t(boxes, "boxes")
        t = boxes.dtype.base_dtype
        scores = _t(scores, "scores", t)
        max_output_size = _t(max_output_size, "max_output_size", dtypes.int32)
        iou_threshold = _t(iou_threshold, "iou_threshold", t)
        score_threshold = _t(score_threshold, "score_threshold", t)
        soft_nms_sigma = _t(soft_nms_sigma, "soft_nms_sigma", t)
        op = make_op("NonMaxSuppressionV5",
                     [boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma],
                     {"T": type_attr(t), "pad_to_max_output_size": False}, "NonMaxSuppressionV5")
        return op._outputs[0], op._outputs[1]


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """Non-max suppression on a given ``[num_boxes, num_boxes]`` overlap matrix."""
    with ops.name_scope(name, "non_max_suppression_overlaps"):
        overlaps = _t(overlaps, "overlaps", dtypes.float32)
        scores = _t(scores, "scores", dtypes.float32)
        max_output_size = _t(max_output_size, "max_output_size", dtypes.int32)
        overlap_threshold = _t(overlap_threshold, "overlap_threshold", dtypes.float32)
        score_threshold = _t(score_threshold, "score_threshold", dtypes.float32)
        return make("NonMaxSuppressionWithOverlaps",
                    [overlaps, scores, max_output_size, overlap_threshold, score_threshold], {},
                    "NonMaxSuppressionWithOverlaps")


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                               pad_to_max_output_size=False, name=None, sorted_input=False,
                               canonicalized_coordinates=False, tile_size=512):
    """Non-max suppression returning ``(selected_indices, num_valid)``; with
    ``pad_to_max_output_size`` the indices are zero-padded to ``max_output_size``.

    Runs ``NonMaxSuppressionV4`` on ``[num_boxes, 4]`` boxes (the same selection as
    TensorFlow's tiled implementation); ``sorted_input``, ``canonicalized_coordinates``
    and ``tile_size`` are TensorFlow's speed hints and change nothing here. Batched boxes
    (``[..., num_boxes, 4]``, which need ``pad_to_max_output_size``) run one image at a time
    through ``map_fn``: indices ``[..., max_output_size]``, counts ``[...]``.
    """
    del sorted_input, canonicalized_coordinates, tile_size
    with ops.name_scope(name, "non_max_suppression_padded"):
        boxes = _t(boxes, "boxes")
        rank = boxes.get_shape().ndims
        if rank is not None and rank > 2:
            if not pad_to_max_output_size:
                raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for "
                                 "batched input")
            return _batched_padded_nms(boxes, _t(scores, "scores", boxes.dtype), max_output_size, iou_threshold,
                                       score_threshold)
        scores = _t(scores, "scores", boxes.dtype)
        max_output_size = _t(max_output_size, "max_output_size", dtypes.int32)
        iou_threshold = _t(iou_threshold, "iou_threshold", boxes.dtype)
        score_threshold = _t(score_threshold, "score_threshold", boxes.dtype)
        attrs = _float_attrs(boxes, iou_threshold)
        attrs["pad_to_max_output_size"] = bool(pad_to_max_output_size)
        op = make_op("NonMaxSuppressionV4", [boxes, scores, max_output_size, iou_threshold, score_threshold],
                     attrs, "NonMaxSuppressionV4")
        return op._outputs[0], op._outputs[1]


def _batched_padded_nms(boxes, scores, max_output_size, iou_threshold, score_threshold):
    from ferroflow.ops import array_ops, functional_ops

    batch_shape = array_ops.shape(scores)[:-1]
    flat_boxes = array_ops.reshape(boxes, array_ops.concat([[-1], array_ops.shape(boxes)[-2:]], 0))
    flat_scores = array_ops.reshape(scores, array_ops.concat([[-1], array_ops.shape(scores)[-1:]], 0))

    def one(args):
        return non_max_suppression_padded(args[0], args[1], max_output_size, iou_threshold, score_threshold,
                                          pad_to_max_output_size=True)

    idx, valid = functional_ops.map_fn(one, (flat_boxes, flat_scores), dtype=(dtypes.int32, dtypes.int32))
    idx = array_ops.reshape(idx, array_ops.concat([batch_shape, array_ops.shape(idx)[-1:]], 0))
    valid = array_ops.reshape(valid, batch_shape)
    static_batch = scores.get_shape()[:-1]
    if static_batch.ndims is not None:
        size = max_output_size if isinstance(max_output_size, int) else None
        idx.set_shape(static_batch.concatenate([size]))
        valid.set_shape(static_batch)
    return idx, valid


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold=0.5,
                                 score_threshold=float("-inf"), pad_per_class=False, clip_boxes=True, name=None):
    """Per-class non-max suppression over a batch, then the best ``max_total_size`` per image.

    ``boxes``: ``[batch, num_boxes, q, 4]`` (``q`` is 1 or the number of classes);
    ``scores``: ``[batch, num_boxes, num_classes]``. Returns ``(nmsed_boxes, nmsed_scores,
    nmsed_classes, valid_detections)``.
    """
    with ops.name_scope(name, "combined_non_max_suppression"):
        boxes = _t(boxes, "boxes", dtypes.float32)
        scores = _t(scores, "scores", dtypes.float32)
        per_class = _t(max_output_size_per_class, "max_output_size_per_class", dtypes.int32)
        total = _t(max_total_size, "max_total_size", dtypes.int32)
        iou_threshold = _t(iou_threshold, "iou_threshold", dtypes.float32)
        score_threshold = _t(score_threshold, "score_threshold", dtypes.float32)
        op = make_op("CombinedNonMaxSuppression",
                     [boxes, scores, per_class, total, iou_threshold, score_threshold],
                     {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)},
                     "CombinedNonMaxSuppression")
        return tuple(op._outputs)


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear", extrapolation_value=0,
                    name=None, box_indices=None):
    """Crops boxes out of a batch of images and resizes each crop to ``crop_size``.

    ``boxes`` are ``[num_boxes, 4]`` normalized ``[y1, x1, y2, x2]`` (flipped boxes give
    flipped crops); ``box_ind`` (or its new name ``box_indices``) picks each box's image.
    Returns float32 crops ``[num_boxes, crop_height, crop_width, depth]``. Differentiable with
    respect to ``image`` (float types) and ``boxes``.
    """
    if box_ind is not None and box_indices is not None:
        raise ValueError("Cannot specify both 'box_indices' and its deprecated alias 'box_ind'")
    if box_ind is None:
        box_ind = box_indices
    if box_ind is None or crop_size is None:
        raise TypeError("crop_and_resize() missing required arguments: 'box_ind' and 'crop_size'")
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"method must be 'bilinear' or 'nearest', got {method!r}")
    image = _t(image, "image")
    boxes = _t(boxes, "boxes", dtypes.float32)
    box_ind = _t(box_ind, "box_ind", dtypes.int32)
    crop_size = _t(crop_size, "crop_size", dtypes.int32)
    return make("CropAndResize", [image, boxes, box_ind, crop_size],
                {"T": type_attr(image.dtype.base_dtype), "method": method,
                 "extrapolation_value": float(extrapolation_value)}, name or "CropAndResize")


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """Draws box outlines onto a batch of float images (``[batch, h, w, 1|3|4]``).

    ``boxes``: ``[batch, num_boxes, 4]`` normalized ``[y_min, x_min, y_max, x_max]``;
    ``colors``: ``[num_colors, >= depth]`` cycled over the boxes (TensorFlow's ten default
    colors when None or empty).
    """
    images = _t(images, "images")
    boxes = _t(boxes, "boxes", dtypes.float32)
    attrs = {"T": type_attr(images.dtype.base_dtype)}
    if colors is None:
        return make("DrawBoundingBoxes", [images, boxes], attrs, name or "DrawBoundingBoxes")
    colors = _t(colors, "colors", dtypes.float32)
    return make("DrawBoundingBoxesV2", [images, boxes, colors], attrs, name or "DrawBoundingBoxesV2")


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """Samples a random crop of an image that covers part of its bounding boxes.

    Returns ``(begin, size, bboxes)``: ``begin`` and ``size`` feed ``tf.slice``; ``bboxes``
    (``[1, 1, 4]``) feeds ``draw_bounding_boxes``. As in TF1, ``seed`` and ``seed2`` go to the op
    as given and the graph seed plays no part: with both unset the draws differ run to run
    (reproducible for given seeds; not TensorFlow's exact random stream).
    """
    with ops.name_scope(name, "sample_distorted_bounding_box"):
        image_size = _t(image_size, "image_size")
        bounding_boxes = _t(bounding_boxes, "bounding_boxes", dtypes.float32)
        min_object_covered = _t(min_object_covered, "min_object_covered", dtypes.float32)
        s1, s2 = int(seed or 0), int(seed2 or 0)
        attrs = {
            "T": type_attr(image_size.dtype.base_dtype),
            "seed": s1,
            "seed2": s2,
            "aspect_ratio_range": [float(v) for v in (aspect_ratio_range or (0.75, 1.33))],
            "area_range": [float(v) for v in (area_range or (0.05, 1.0))],
            "max_attempts": int(100 if max_attempts is None else max_attempts),
            "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes or False),
        }
        op = make_op("SampleDistortedBoundingBoxV2", [image_size, bounding_boxes, min_object_covered], attrs,
                     "SampleDistortedBoundingBoxV2")
        return tuple(op._outputs)


def extract_glimpse(input, size, offsets, centered=True, normalized=True, uniform_noise=True,  # noqa: A002
                    name=None):
    """Extracts a ``size`` window per image around ``offsets`` (``[batch, 2]``, ``(y, x)``)
    (TF1 semantics, ``ExtractGlimpse``); parts outside the image are filled with uniform
    noise. As in TensorFlow 2.x's ``tf.compat.v1``, ``uniform_noise=False`` still gives
    uniform noise (the op's ``noise`` attribute, "uniform", wins).
    """
    input = _t(input, "input", dtypes.float32)
    size = _t(size, "size", dtypes.int32)
    offsets = _t(offsets, "offsets", dtypes.float32)
    return make("ExtractGlimpse", [input, size, offsets],
                {"centered": bool(centered), "normalized": bool(normalized), "uniform_noise": bool(uniform_noise),
                 "noise": "uniform" if uniform_noise else ""}, name or "ExtractGlimpse")


_Proposals = collections.namedtuple("GenerateBoundingBoxProposals", ["rois", "roi_probabilities"])


def generate_bounding_box_proposals(scores, bbox_deltas, image_info, anchors, nms_threshold=0.7, pre_nms_topn=6000,
                                    min_size=16, post_nms_topn=300, name=None):
    """Region proposals from anchor scores and box deltas (``GenerateBoundingBoxProposals``).

    ``scores``: ``[num_images, height, width, num_anchors]``; ``bbox_deltas``:
    ``[num_images, height, width, 4 * num_anchors]`` as ``(dy, dx, dh, dw)``;
    ``image_info``: ``[num_images, 5]`` (height, width, scale, ...); ``anchors``:
    ``[height, width, 4 * num_anchors]`` as ``(y1, x1, y2, x2)``. Per image the
    best ``pre_nms_topn`` anchors are decoded, clipped to the image, filtered by
    ``min_size * scale`` and suppressed at ``nms_threshold``; returns ``(rois,
    roi_probabilities)``, ``[num_images, post_nms_topn, 4]`` and ``[num_images,
    post_nms_topn]``, zero-padded. TensorFlow 2.21 runs this op on GPUs only;
    ferroflow's kernel runs on the CPU with the GPU kernel's rules.
    """
    inputs = [
        _t(scores, "scores", dtypes.float32),
        _t(bbox_deltas, "bbox_deltas", dtypes.float32),
        _t(image_info, "image_info", dtypes.float32),
        _t(anchors, "anchors", dtypes.float32),
        _t(nms_threshold, "nms_threshold", dtypes.float32),
        _t(pre_nms_topn, "pre_nms_topn", dtypes.int32),
        _t(min_size, "min_size", dtypes.float32),
    ]
    op = make_op("GenerateBoundingBoxProposals", inputs, {"post_nms_topn": int(post_nms_topn)},
                 name or "GenerateBoundingBoxProposals")
    return _Proposals(*op._outputs)
