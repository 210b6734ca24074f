"""The deterministic ops of ``tf.image`` (every name of TF1's ``tf.image`` but the codecs and the random
ops), shared by the fixture generator (``tools/make_image_fixtures.py``, run under real TensorFlow)
and the golden test (``test_image_golden.py``, run under ferroflow).

No TensorFlow or ferroflow import here: every ``case_<name>(tf)`` takes the TF1-style module
(``tensorflow.compat.v1`` with v2 behavior disabled, or ``ferroflow``), builds its graph in the
current default graph with the public ``tf.image`` API and returns ``(fetches, feed_dict)``:
``fetches`` maps a plain name to one tensor, ``feed_dict`` maps placeholders to NumPy arrays drawn
from a seeded ``RandomState``. Inputs go through placeholders where the unknown-shape paths matter
(``[None, None, None, 3]``, no shape at all, a fed size) and are constants otherwise.

Fixture files are ``tests/fixtures/image/<name>.npz``: one array per fetch key, plus
``<key>__static_shape`` (see ``static_shape``) recording the static shape TensorFlow inferred for
that fetch when the graph was built.

Float fetches are compared with ``tolerance(case, dtype)``: exact where the op only moves, casts or
rounds values, otherwise a few ulps of float32 by default; a case that may differ more because the
order of TF's arithmetic (reductions, convolutions, matmuls) is not the only reasonable one says so
with ``@_tol`` and a comment. Integer and bool fetches are always compared exactly.
"""

from __future__ import annotations

import functools

import numpy as np

STATIC_SHAPE_SUFFIX = "__static_shape"
UNKNOWN_RANK = -2  # a 0-d array holding this value: the fetch's static rank is unknown

# Default (rtol, atol) by the fetch's dtype; a case can override it with @_tol.
DEFAULT_TOLERANCE = {
    np.dtype(np.float16): (1e-3, 1e-3),
    np.dtype(np.float32): (2e-6, 1e-6),
    np.dtype(np.float64): (1e-12, 1e-12),
}

BATCH = (2, 5, 7, 3)  # [N, H, W, C]
SINGLE = (6, 8, 3)  # [H, W, C]


def static_shape(t):
    """The static shape of a tensor as an int64 array: a 1-D array of the dims (-1 where unknown),
    or a 0-d array holding ``UNKNOWN_RANK`` when even the rank is unknown."""
    shape = t.shape
    if shape.ndims is None:
        return np.array(UNKNOWN_RANK, dtype=np.int64)
    return np.array([-1 if d is None else int(d) for d in shape.as_list()], dtype=np.int64)


def tolerance(name, key, dtype):
    """(rtol, atol) for the float fetch ``key`` of case ``name``: (0, 0) for an exact case, else
    the loosest of the case's ``@_tol`` rules that match the key, else the dtype's default. A
    float16 fetch is never held tighter than the float16 default (one ulp is 1e-3)."""
    fn = CASES[name]
    dtype = np.dtype(dtype)
    if getattr(fn, "exact", False):
        return (0.0, 0.0)
    rules = [(r, a) for match, r, a in getattr(fn, "tolerance_rules", ()) if match is None or match in key]
    if not rules:
        return DEFAULT_TOLERANCE[dtype]
    rtol, atol = max(r for r, _ in rules), max(a for _, a in rules)
    if dtype == np.float16:
        rtol, atol = max(rtol, DEFAULT_TOLERANCE[dtype][0]), max(atol, DEFAULT_TOLERANCE[dtype][1])
    return rtol, atol


def _tol(rtol, atol, key=None):
    """Loosen a case's float comparisons: for every fetch, or for those whose key contains ``key``.
    Rules stack (the loosest matching one applies)."""

    def wrap(fn):
        fn.tolerance_rules = (*getattr(fn, "tolerance_rules", ()), (key, rtol, atol))
        return fn

    return wrap


def _exact(fn):
    """Float fetches must match bit for bit (pure data movement, casts, TF's rounding rules)."""
    fn.exact = True
    return fn


# Resampling (bilinear, bicubic, area, crop_and_resize) sums weighted taps; an equally valid order
# of those few float32 operations moves a result by some ulps of the input's scale, not of the
# result: up to ~3e-5 for bilinear and ~2e-4 for bicubic on 0..255 inputs (measured against a
# NumPy re-implementation that orders the sums differently), ~1e-6 on 0..1 inputs.
_RESAMPLE_U8 = (1e-6, 3e-4)
_RESAMPLE_F = (2e-6, 2e-6)


def _resample_tol(fn, *, uint8_keys=(), all_uint8=False):
    """Resampling tolerances: ``_RESAMPLE_F`` for the case, ``_RESAMPLE_U8`` for the fetches whose
    key contains one of ``uint8_keys`` (or all of them)."""
    fn = _tol(*_RESAMPLE_F)(fn)
    if all_uint8:
        fn = _tol(*_RESAMPLE_U8)(fn)
    for k in uint8_keys:
        fn = _tol(*_RESAMPLE_U8, key=k)(fn)
    return fn


def _rng(seed):
    return np.random.RandomState(seed)


def _u8(rng, shape):
    return rng.randint(0, 256, size=shape).astype(np.uint8)


def _f32(rng, shape):
    return rng.rand(*shape).astype(np.float32)


def _ph(tf, value, feed, shape="static", name="image"):
    """A placeholder fed with ``value``: ``shape="static"`` gives it the value's shape, ``None`` no
    shape at all, a list that list (None for unknown dims)."""
    value = np.asarray(value)
    dtype = tf.as_dtype(value.dtype)
    if shape == "static":
        shape = list(value.shape)
    p = tf.placeholder(dtype, shape, name=name)
    feed[p] = value
    return p


def _unknown_hw(value):
    """[None, None, None, C] for a batch, [None, None, C] for one image."""
    return [None] * (value.ndim - 1) + [value.shape[-1]]


def _weighted_sum(tf, y, rng, shape):
    """A scalar loss whose gradient at ``y`` is a fixed random array (not all ones)."""
    w = tf.constant((rng.randn(*shape)).astype(np.float32))
    return tf.reduce_sum(y * w)


# -- tf.image.ResizeMethod ------------------------------------------------------------------------


@_exact
def case_resize_method_constants(tf):
    m = tf.image.ResizeMethod
    return {"values": tf.constant([m.BILINEAR, m.NEAREST_NEIGHBOR, m.BICUBIC, m.AREA], dtype=tf.int32)}, {}


# -- resize_images (v1; tf.image.resize is the same function in TF1) -------------------------------

_METHODS = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}


def _resize_images_case(method, dtype, batched, size, align_corners=False, seed=10, fn="resize_images"):
    def case(tf):
        rng = _rng(seed)
        shape = BATCH if batched else SINGLE
        x = _u8(rng, shape) if dtype == "uint8" else _f32(rng, shape)
        feed = {}
        img = _ph(tf, x, feed)
        m = getattr(
            tf.image.ResizeMethod,
            {"bilinear": "BILINEAR", "nearest": "NEAREST_NEIGHBOR", "bicubic": "BICUBIC", "area": "AREA"}[
                method
            ],
        )
        resize = getattr(tf.image, fn)
        out = resize(img, size, method=m, align_corners=align_corners)
        return {"out": out}, feed

    case.__doc__ = f"tf.image.{fn}, {method}, {dtype}, {'[N,H,W,C]' if batched else '[H,W,C]'} to {size}"
    if method == "nearest":
        return _exact(case)  # copies pixels
    return _resample_tol(case, all_uint8=dtype == "uint8")


_RESIZE_SIZES = {"up": [11, 13], "down": [3, 4], "mixed": [9, 4]}

for _method in _METHODS:
    for _dtype in ("float32", "uint8"):
        for _dir, _size in _RESIZE_SIZES.items():
            for _batched in (True, False):
                if _dir == "mixed" and not _batched:
                    continue
                _name = f"resize_images_{_method}_{_dtype}_{_dir}_{'batch' if _batched else 'single'}"
                globals()["case_" + _name] = _resize_images_case(_method, _dtype, _batched, _size)
        _name = f"resize_images_{_method}_{_dtype}_align_corners"
        globals()["case_" + _name] = _resize_images_case(_method, _dtype, True, [9, 4], align_corners=True)
for _method in _METHODS:
    globals()[f"case_resize_alias_{_method}"] = _resize_images_case(
        _method, "float32", False, [4, 11], fn="resize", seed=11
    )
del _method, _dtype, _dir, _size, _batched, _name


@_resample_tol
def case_resize_images_method_as_int(tf):
    """``method`` given as the plain integers of ResizeMethod (what old TF1 code passes)."""
    rng = _rng(12)
    img = tf.constant(_f32(rng, BATCH))
    return {f"method_{k}": tf.image.resize_images(img, [4, 9], method=k) for k in range(4)}, {}


def case_resize_images_same_size_uint8(tf):
    """Statically the same size: TF returns the input untouched (still uint8, no float32 cast)."""
    rng = _rng(13)
    img = tf.constant(_u8(rng, SINGLE))
    return {
        "bilinear": tf.image.resize_images(img, [6, 8]),
        "area": tf.image.resize_images(img, [6, 8], method=tf.image.ResizeMethod.AREA),
    }, {}


@functools.partial(_resample_tol, uint8_keys=("out",))
def case_resize_images_same_size_dynamic(tf):
    """The same size, but only known when run: the op runs (bilinear gives float32 of the same values)."""
    rng = _rng(14)
    feed = {}
    x = _u8(rng, SINGLE)
    img = _ph(tf, x, feed, shape=_unknown_hw(x))
    return {"out": tf.image.resize_images(img, [6, 8])}, feed


@_resample_tol
def case_resize_images_preserve_aspect_ratio(tf):
    rng = _rng(15)
    feed = {}
    img = tf.constant(_f32(rng, SINGLE))  # 6x8
    batch = tf.constant(_f32(rng, BATCH))  # 5x7
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, 3], name="dyn")
    fetches = {
        "up": tf.image.resize_images(img, [12, 30], preserve_aspect_ratio=True),  # 12x16
        "down": tf.image.resize_images(img, [10, 4], preserve_aspect_ratio=True),  # 3x4
        "batch": tf.image.resize_images(
            batch, [10, 10], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR, preserve_aspect_ratio=True
        ),  # 7x10
        "area": tf.image.resize_images(
            batch, [3, 9], method=tf.image.ResizeMethod.AREA, preserve_aspect_ratio=True
        ),
        "dynamic": tf.image.resize_images(dyn, [9, 9], preserve_aspect_ratio=True),
    }
    return fetches, feed


@_resample_tol
def case_resize_images_unknown_shapes(tf):
    """Image of unknown height/width, and a size fed at run time (static new height/width unknown)."""
    rng = _rng(16)
    feed = {}
    x = _f32(rng, BATCH)
    img = _ph(tf, x, feed, shape=_unknown_hw(x))
    size = _ph(tf, np.array([8, 3], np.int32), feed, shape=[2], name="size")
    single = _ph(tf, _u8(rng, SINGLE), feed, shape=[None, None, 3], name="single")
    fetches = {
        "const_size": tf.image.resize_images(img, [4, 10]),
        "fed_size": tf.image.resize_images(img, size, method=tf.image.ResizeMethod.BICUBIC),
        "fed_size_nearest_single": tf.image.resize_images(
            single, size, method=tf.image.ResizeMethod.NEAREST_NEIGHBOR
        ),
    }
    return fetches, feed


# int32 inputs go up to 1000: resampling error scales with them (see _RESAMPLE_U8).
@_tol(1e-6, 2e-3, key="int32")
@_resample_tol
def case_resize_images_other_dtypes(tf):
    """float16/float64/int32 inputs: bilinear/bicubic/area give float32, nearest keeps the dtype."""
    rng = _rng(17)
    x = _f32(rng, BATCH)
    fetches = {}
    for dt_name in ("float16", "float64", "int32"):
        if dt_name == "int32":
            img = tf.constant((x * 1000).astype(np.int32))
        else:
            img = tf.constant(x.astype(dt_name))
        for method, k in _METHODS.items():
            fetches[f"{dt_name}_{method}"] = tf.image.resize_images(img, [8, 5], method=k)
    return fetches, {}


# -- resize_bilinear / resize_nearest_neighbor / resize_bicubic / resize_area ---------------------


def _resize_op_case(op, dtype, seed):
    """Every (align_corners, half_pixel_centers) combination TF accepts, upscale and downscale."""

    def case(tf):
        rng = _rng(seed)
        if dtype == "uint8":
            x = _u8(rng, BATCH)
        elif dtype == "float64":
            x = _f32(rng, BATCH).astype(np.float64)
        else:
            x = _f32(rng, BATCH)
        img = tf.constant(x)
        fn = getattr(tf.image, op)
        fetches = {}
        for tag, size in (("up", [11, 16]), ("down", [3, 4]), ("mixed", [2, 10])):
            if op == "resize_area":
                fetches[f"{tag}"] = fn(img, size)
                fetches[f"{tag}_align"] = fn(img, size, align_corners=True)
                continue
            fetches[f"{tag}"] = fn(img, size)
            fetches[f"{tag}_align"] = fn(img, size, align_corners=True)
            fetches[f"{tag}_half"] = fn(img, size, half_pixel_centers=True)
        return fetches, {}

    case.__doc__ = f"tf.image.{op} on a {dtype} batch"
    if op == "resize_nearest_neighbor":
        return _exact(case)  # copies pixels
    return _resample_tol(case, all_uint8=dtype == "uint8")


for _i, _op in enumerate(("resize_bilinear", "resize_nearest_neighbor", "resize_bicubic", "resize_area")):
    for _j, _dtype in enumerate(("float32", "uint8", "float64")):
        globals()[f"case_{_op}_{_dtype}"] = _resize_op_case(_op, _dtype, 20 + 3 * _i + _j)
del _i, _j, _op, _dtype


@_resample_tol
def case_resize_ops_unknown_shape(tf):
    """The raw ops with unknown input height/width and a fed size: static shape [N, ?, ?, C]."""
    rng = _rng(40)
    feed = {}
    x = _f32(rng, BATCH)
    img = _ph(tf, x, feed, shape=[None, None, None, 3])
    size = _ph(tf, np.array([4, 9], np.int32), feed, shape=[2], name="size")
    return {
        "bilinear": tf.image.resize_bilinear(img, size, half_pixel_centers=True),
        "nearest": tf.image.resize_nearest_neighbor(img, size),
        "bicubic": tf.image.resize_bicubic(img, [3, 3]),
        "area": tf.image.resize_area(img, size),
    }, feed


@_resample_tol
def case_resize_ops_one_pixel(tf):
    """Degenerate sizes: to and from a 1x1 image (align_corners divides by size - 1)."""
    rng = _rng(41)
    img = tf.constant(_f32(rng, BATCH))
    one = tf.constant(_f32(rng, (2, 1, 1, 3)))
    fetches = {}
    for name in ("resize_bilinear", "resize_nearest_neighbor", "resize_bicubic"):
        fn = getattr(tf.image, name)
        fetches[f"{name}_to_1"] = fn(img, [1, 1])
        fetches[f"{name}_to_1_align"] = fn(img, [1, 1], align_corners=True)
        fetches[f"{name}_from_1"] = fn(one, [3, 4])
        fetches[f"{name}_from_1_align"] = fn(one, [3, 4], align_corners=True)
        fetches[f"{name}_from_1_half"] = fn(one, [3, 4], half_pixel_centers=True)
    fetches["resize_area_to_1"] = tf.image.resize_area(img, [1, 1])
    fetches["resize_area_from_1"] = tf.image.resize_area(one, [3, 4])
    return fetches, {}


# -- resize gradients -----------------------------------------------------------------------------


def _resize_grad_case(op, seed):
    def case(tf):
        rng = _rng(seed)
        feed = {}
        img = _ph(tf, _f32(rng, BATCH), feed)
        fn = getattr(tf.image, op)
        fetches = {}
        for tag, size in (("up", [11, 16]), ("down", [3, 4]), ("mixed", [2, 10])):
            variants = {"": {}, "_align": {"align_corners": True}, "_half": {"half_pixel_centers": True}}
            for suffix, kw in variants.items():
                y = fn(img, size, **kw)
                loss = _weighted_sum(tf, y, rng, (2, size[0], size[1], 3))
                (g,) = tf.gradients(loss, [img])
                fetches[f"grad_{tag}{suffix}"] = g
        return fetches, feed

    case.__doc__ = f"tf.gradients of a weighted sum of tf.image.{op} w.r.t. the image"
    return case


# The gradient kernels scatter-add many weighted terms (weights ~N(0, 1)) into each input pixel;
# ferroflow may add them in another order, and sums that nearly cancel keep an absolute error.
case_grad_resize_bilinear = _tol(1e-5, 1e-5)(_resize_grad_case("resize_bilinear", 50))
case_grad_resize_nearest_neighbor = _tol(1e-5, 1e-5)(_resize_grad_case("resize_nearest_neighbor", 51))
case_grad_resize_bicubic = _tol(1e-5, 1e-5)(_resize_grad_case("resize_bicubic", 52))


@_tol(1e-5, 1e-5)  # as above: scatter-added terms
def case_grad_resize_images(tf):
    """Gradients through v1 resize_images of a single image (expand_dims/squeeze around the op)."""
    rng = _rng(53)
    feed = {}
    img = _ph(tf, _f32(rng, SINGLE), feed)
    fetches = {}
    for method in ("bilinear", "nearest", "bicubic"):
        y = tf.image.resize_images(img, [9, 5], method=_METHODS[method], align_corners=True)
        (g,) = tf.gradients(_weighted_sum(tf, y, rng, (9, 5, 3)), [img])
        fetches[f"grad_{method}"] = g
    return fetches, feed


# -- crop / pad -----------------------------------------------------------------------------------


@_exact
def case_resize_image_with_crop_or_pad(tf):
    rng = _rng(60)
    feed = {}
    single = tf.constant(_u8(rng, SINGLE))  # 6x8
    batch = tf.constant(_f32(rng, BATCH))  # 5x7
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, 3], name="dyn")
    dyn_batch = _ph(tf, _u8(rng, BATCH), feed, shape=[None, None, None, 3], name="dyn_batch")
    f = tf.image.resize_image_with_crop_or_pad
    fetches = {
        "crop_both": f(single, 3, 5),
        "pad_both": f(single, 9, 13),
        "crop_h_pad_w": f(single, 4, 11),
        "pad_h_crop_w": f(batch, 8, 2),
        "same": f(batch, 5, 7),
        "odd_crop": f(batch, 2, 2),
        "odd_pad": f(batch, 8, 10),
        "dynamic": f(dyn, 5, 11),
        "dynamic_batch": f(dyn_batch, 7, 4),
        "alias": tf.image.resize_with_crop_or_pad(single, 7, 3),
    }
    return fetches, feed


@functools.partial(_resample_tol, uint8_keys=("_u8", "area"))
def case_resize_image_with_pad(tf):
    """v1 resize_image_with_pad (method, align_corners): the resized image is float32 unless nearest."""
    rng = _rng(61)
    feed = {}
    single = tf.constant(_f32(rng, SINGLE))  # 6x8
    batch_u8 = tf.constant(_u8(rng, BATCH))  # 5x7
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, 3], name="dyn")
    f = tf.image.resize_image_with_pad
    m = tf.image.ResizeMethod
    fetches = {
        "wide": f(single, 6, 16),
        "tall": f(single, 12, 8),
        "down": f(single, 3, 3),
        "same_aspect": f(single, 9, 12),
        "nearest_u8": f(batch_u8, 10, 9, method=m.NEAREST_NEIGHBOR),
        "bilinear_u8": f(batch_u8, 10, 9),
        "bicubic_align": f(single, 7, 15, method=m.BICUBIC, align_corners=True),
        "area": f(batch_u8, 4, 11, method=m.AREA),
        "dynamic": f(dyn, 10, 10),
    }
    return fetches, feed


@_exact
def case_crop_to_bounding_box(tf):
    rng = _rng(62)
    feed = {}
    single = tf.constant(_u8(rng, SINGLE))
    batch = tf.constant(_f32(rng, BATCH))
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, 3], name="dyn")
    offset = _ph(tf, np.array(2, np.int32), feed, shape=[], name="offset")
    f = tf.image.crop_to_bounding_box
    fetches = {
        "single": f(single, 1, 2, 4, 5),
        "whole": f(single, 0, 0, 6, 8),
        "corner": f(single, 5, 7, 1, 1),
        "batch": f(batch, 2, 0, 3, 7),
        "dynamic": f(dyn, 1, 3, 2, 4),
        "tensor_offset": f(batch, offset, offset, 2, 3),
    }
    return fetches, feed


@_exact
def case_pad_to_bounding_box(tf):
    rng = _rng(63)
    feed = {}
    single = tf.constant(_u8(rng, SINGLE))
    batch = tf.constant(_f32(rng, BATCH))
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, 3], name="dyn")
    offset = _ph(tf, np.array(1, np.int32), feed, shape=[], name="offset")
    f = tf.image.pad_to_bounding_box
    fetches = {
        "single": f(single, 1, 2, 9, 11),
        "none": f(single, 0, 0, 6, 8),
        "bottom_right": f(single, 0, 0, 7, 10),
        "batch": f(batch, 3, 1, 8, 9),
        "dynamic": f(dyn, 2, 2, 10, 12),
        "tensor_offset": f(batch, offset, offset, 7, 9),
    }
    return fetches, feed


@_exact
def case_central_crop(tf):
    rng = _rng(64)
    feed = {}
    single = tf.constant(_u8(rng, SINGLE))
    batch = tf.constant(_f32(rng, BATCH))
    big = tf.constant(_f32(rng, (17, 13, 2)))
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, 3], name="dyn")
    dyn_batch = _ph(tf, _f32(rng, BATCH), feed, shape=[None, None, None, 3], name="dyn_batch")
    f = tf.image.central_crop
    fetches = {
        "half": f(single, 0.5),
        "third": f(single, 0.33),
        "all": f(single, 1.0),
        "batch": f(batch, 0.6),
        "big_07": f(big, 0.7),
        "big_small": f(big, 0.1),
        "dynamic": f(dyn, 0.5),
        "dynamic_batch": f(dyn_batch, 0.75),
    }
    return fetches, feed


# -- crop_and_resize ------------------------------------------------------------------------------

_BOXES = np.array(
    [
        [0.1, 0.2, 0.7, 0.9],  # inside
        [-0.2, -0.1, 1.3, 1.1],  # reaches outside on every side
        [0.8, 0.9, 0.1, 0.2],  # flipped (y1 > y2, x1 > x2)
        [0.5, 0.5, 0.5, 0.5],  # a point
        [0.0, 0.0, 1.0, 1.0],  # the whole image
        [1.2, 1.1, 1.5, 1.6],  # entirely outside
    ],
    np.float32,
)
_BOX_IND = np.array([0, 1, 1, 0, 1, 0], np.int32)


@functools.partial(_resample_tol, uint8_keys=("uint8",))
def case_crop_and_resize(tf):
    """v1 signature (box_ind); bilinear and nearest; extrapolation_value; uint8 input gives float32."""
    rng = _rng(70)
    feed = {}
    img = tf.constant(_f32(rng, BATCH))
    img_u8 = tf.constant(_u8(rng, BATCH))
    boxes = _ph(tf, _BOXES, feed, name="boxes")
    box_ind = _ph(tf, _BOX_IND, feed, name="box_ind")
    f = tf.image.crop_and_resize
    fetches = {
        "bilinear": f(img, boxes, box_ind, [4, 3]),
        "bilinear_extrapolate": f(img, boxes, box_ind, [4, 3], extrapolation_value=-1.5),
        "nearest": f(img, boxes, box_ind, [5, 6], method="nearest"),
        "nearest_extrapolate": f(img, boxes, box_ind, [5, 6], method="nearest", extrapolation_value=9.0),
        "crop_1x1": f(img, boxes, box_ind, [1, 1]),
        "crop_1x4": f(img, boxes, box_ind, [1, 4]),
        "crop_1x1_nearest": f(img, boxes, box_ind, [1, 1], method="nearest"),
        "uint8": f(img_u8, boxes, box_ind, [3, 3]),
        "uint8_nearest": f(img_u8, boxes, box_ind, [3, 3], method="nearest"),
        "box_indices_kw": f(img, boxes, crop_size=[2, 2], box_indices=box_ind),
    }
    return fetches, feed


@_resample_tol
def case_crop_and_resize_unknown_shapes(tf):
    rng = _rng(71)
    feed = {}
    x = _f32(rng, BATCH)
    img = _ph(tf, x, feed, shape=[None, None, None, 3])
    boxes = _ph(tf, _BOXES[:3], feed, shape=[None, 4], name="boxes")
    box_ind = _ph(tf, _BOX_IND[:3], feed, shape=[None], name="box_ind")
    crop = _ph(tf, np.array([3, 2], np.int32), feed, shape=[2], name="crop_size")
    return {
        "const_crop": tf.image.crop_and_resize(img, boxes, box_ind, [2, 5]),
        "fed_crop": tf.image.crop_and_resize(img, boxes, box_ind, crop),
    }, feed


# The gradient kernels accumulate several weighted terms per pixel/box coordinate; ferroflow may
# add them in another order.
@_tol(1e-5, 1e-5)
def case_grad_crop_and_resize(tf):
    """Gradients of a weighted sum of crop_and_resize (bilinear) w.r.t. the image and the boxes.
    Boxes stay inside the image and off pixel-exact positions (the box gradient has kinks there)."""
    rng = _rng(72)
    feed = {}
    img = _ph(tf, _f32(rng, BATCH), feed)
    boxes_value = np.array(
        [[0.13, 0.21, 0.71, 0.87], [0.32, 0.05, 0.93, 0.61], [0.77, 0.66, 0.24, 0.19]], np.float32
    )
    boxes = _ph(tf, boxes_value, feed, name="boxes")
    box_ind = tf.constant(np.array([0, 1, 1], np.int32))
    y = tf.image.crop_and_resize(img, boxes, box_ind, [4, 5])
    gi, gb = tf.gradients(_weighted_sum(tf, y, rng, (3, 4, 5, 3)), [img, boxes])
    y1 = tf.image.crop_and_resize(img, boxes, box_ind, [1, 3])
    gi1, gb1 = tf.gradients(_weighted_sum(tf, y1, rng, (3, 1, 3, 3)), [img, boxes])
    return {"out": y, "grad_image": gi, "grad_boxes": gb, "grad_image_1xw": gi1, "grad_boxes_1xw": gb1}, feed


# -- extract_glimpse (TF1 signature) ---------------------------------------------------------------
# Every window lies inside its image: outside, TF fills with random noise.


@_exact  # whole pixels only: every value of these glimpses is a pixel of the input
def case_extract_glimpse(tf):
    rng = _rng(80)
    x = _f32(rng, (2, 9, 10, 3))
    img = tf.constant(x)
    f = tf.image.extract_glimpse
    fetches = {
        "centered_normalized": f(img, [3, 4], tf.constant([[0.1, -0.2], [-0.3, 0.25]], tf.float32)),
        "centered_pixels": f(
            img, [3, 3], tf.constant([[1.0, -2.0], [0.0, 2.0]], tf.float32), normalized=False
        ),
        "corner_normalized": f(
            img, [4, 3], tf.constant([[0.5, 0.5], [0.3, 0.6]], tf.float32), centered=False
        ),
        "corner_pixels": f(
            img, [3, 5], tf.constant([[4.0, 5.0], [2.0, 3.0]], tf.float32), centered=False, normalized=False
        ),
        "fractional_offsets": f(
            img, [2, 2], tf.constant([[3.4, 4.6], [5.5, 2.5]], tf.float32), centered=False, normalized=False
        ),
        "no_uniform_noise": f(
            img, [4, 4], tf.constant([[0.0, 0.0], [-0.1, 0.1]], tf.float32), uniform_noise=False
        ),
        "whole": f(img, [9, 10], tf.constant([[0.0, 0.0], [0.0, 0.0]], tf.float32)),
    }
    return fetches, {}


# -- flips, rot90, transpose ---------------------------------------------------------------------


@_exact
def case_flips(tf):
    rng = _rng(90)
    feed = {}
    single = tf.constant(_u8(rng, SINGLE))
    batch = tf.constant(_f32(rng, BATCH))
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, None], name="dyn")
    norank = _ph(tf, _f32(rng, BATCH), feed, shape=None, name="norank")
    fetches = {}
    for fname in ("flip_left_right", "flip_up_down"):
        f = getattr(tf.image, fname)
        fetches[f"{fname}_single"] = f(single)
        fetches[f"{fname}_batch"] = f(batch)
        fetches[f"{fname}_dynamic"] = f(dyn)
        fetches[f"{fname}_unknown_rank"] = f(norank)
    return fetches, feed


@_exact
def case_rot90(tf):
    rng = _rng(91)
    feed = {}
    single = tf.constant(_u8(rng, SINGLE))
    batch = tf.constant(_f32(rng, BATCH))
    k_fed = _ph(tf, np.array(3, np.int32), feed, shape=[], name="k")
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, 3], name="dyn")
    fetches = {}
    for k in range(4):
        fetches[f"single_k{k}"] = tf.image.rot90(single, k)
        fetches[f"batch_k{k}"] = tf.image.rot90(batch, k=k)
    fetches["default_k"] = tf.image.rot90(single)
    fetches["k5"] = tf.image.rot90(batch, 5)
    fetches["k_neg1"] = tf.image.rot90(single, -1)
    fetches["k_fed_single"] = tf.image.rot90(single, k_fed)
    fetches["k_fed_batch"] = tf.image.rot90(batch, k_fed)
    fetches["dynamic_k2"] = tf.image.rot90(dyn, 2)
    return fetches, feed


@_exact
def case_transpose(tf):
    rng = _rng(92)
    feed = {}
    single = tf.constant(_u8(rng, SINGLE))
    batch = tf.constant(_f32(rng, BATCH))
    dyn = _ph(tf, _f32(rng, SINGLE), feed, shape=[None, None, 3], name="dyn")
    return {
        "single": tf.image.transpose(single),
        "batch": tf.image.transpose(batch),
        "transpose_image": tf.image.transpose_image(batch),
        "dynamic": tf.image.transpose_image(dyn),
    }, feed


# -- extract_image_patches / extract_patches ------------------------------------------------------


@_exact
def case_extract_image_patches(tf):
    rng = _rng(100)
    feed = {}
    x = _f32(rng, (2, 7, 9, 2))
    img = tf.constant(x)
    img_u8 = tf.constant(_u8(rng, (1, 6, 5, 3)))
    dyn = _ph(tf, x, feed, shape=[None, None, None, 2], name="dyn")
    fetches = {}
    configs = {
        "k2_s1_valid": ([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
        "k3_s2_same": ([1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
        "k3x2_s2x3_valid": ([1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1], "VALID"),
        "k2_rate2_valid": ([1, 2, 2, 1], [1, 1, 1, 1], [1, 2, 2, 1], "VALID"),
        "k2_rate2x3_s2_same": ([1, 2, 2, 1], [1, 2, 2, 1], [1, 2, 3, 1], "SAME"),
        "k4_s3_same": ([1, 4, 4, 1], [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),
        "k1": ([1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
    }
    for tag, (sizes, strides, rates, padding) in configs.items():
        fetches[f"{tag}"] = tf.image.extract_patches(img, sizes, strides, rates, padding)
    fetches["uint8_same"] = tf.image.extract_patches(img_u8, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 1, 1], "SAME")
    fetches["v1_ksizes"] = tf.image.extract_image_patches(
        img, ksizes=[1, 2, 3, 1], strides=[1, 1, 2, 1], rates=[1, 1, 1, 1], padding="VALID"
    )
    fetches["v1_sizes_kw"] = tf.image.extract_image_patches(
        img, sizes=[1, 3, 3, 1], strides=[1, 1, 1, 1], rates=[1, 1, 1, 1], padding="SAME"
    )
    fetches["toplevel"] = tf.extract_image_patches(
        img, ksizes=[1, 2, 2, 1], strides=[1, 2, 2, 1], rates=[1, 2, 1, 1], padding="SAME"
    )
    fetches["dynamic"] = tf.image.extract_patches(dyn, [1, 2, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
    return fetches, feed


# -- draw_bounding_boxes --------------------------------------------------------------------------


@_exact
def case_draw_bounding_boxes(tf):
    rng = _rng(110)
    boxes = np.array(
        [
            [[0.1, 0.2, 0.6, 0.8], [0.0, 0.0, 1.0, 1.0], [0.5, 0.6, 0.3, 0.1]],
            [[-0.2, 0.3, 0.5, 1.4], [0.4, 0.4, 0.4, 0.4], [0.7, 0.1, 0.95, 0.5]],
        ],
        np.float32,
    )
    fetches = {}
    for channels in (1, 3, 4):
        img = tf.constant(_f32(rng, (2, 9, 11, channels)))
        fetches[f"default_colors_c{channels}"] = tf.image.draw_bounding_boxes(img, boxes)
    img = tf.constant(_f32(rng, (2, 9, 11, 3)))
    colors = np.array([[1.0, 0.0, 0.0, 1.0], [0.2, 0.9, 0.4, 1.0]], np.float32)
    fetches["colors"] = tf.image.draw_bounding_boxes(img, boxes, colors=colors)
    many = np.concatenate([boxes, boxes[:, ::-1] * 0.9 + 0.05], axis=1)  # 6 boxes > 2 colors: cycles
    fetches["colors_cycle"] = tf.image.draw_bounding_boxes(img, many, colors=colors)
    fetches["many_default"] = tf.image.draw_bounding_boxes(
        img, np.concatenate([many, many * 0.5 + 0.2], axis=1)
    )
    return fetches, {}


# -- convert_image_dtype --------------------------------------------------------------------------

_CONVERT_DTYPES = ("uint8", "uint16", "int16", "int32", "float16", "float32", "float64")


def _convert_source(dtype, rng):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        special = [
            info.min,
            info.min + 1,
            -1,
            0,
            1,
            2,
            info.max // 2,
            info.max // 2 + 1,
            info.max - 1,
            info.max,
        ]
        special = [v for v in special if info.min <= v <= info.max]
        rand = rng.randint(info.min, int(info.max) + 1, size=14, dtype=np.int64)
        return np.concatenate([np.array(special, np.int64), rand]).astype(dt)
    # Floats: the unit range with rounding boundaries of the 8- and 16-bit scalings, then values
    # below 0 (for signed targets) and above 1 (for saturate=True).
    special = [
        0.0,
        1.0,
        0.5,
        1 / 255,
        0.5 / 255,
        1.5 / 255,
        254.5 / 255.5,
        0.25,
        0.75,
        0.999,
        1e-6,
        1 / 65535,
        0.5 / 65535,
        1 / 32767,
    ]
    big = 6e4 if dt == np.float16 else 1e6
    outside = [-1.0, -0.75, -0.5, -1 / 255, -0.5 / 32767, -1e-6, -2.0, 1.001, 1.5, 2.0, big, -big]
    return np.concatenate([np.array(special), rng.rand(10), np.array(outside)]).astype(dt)


def _float_to_int_defined(x, dst, saturate):
    """The inputs whose conversion TF defines: float->int is ``cast(x * (max + 0.5))`` in x's dtype
    (after a clamp when saturating), and a C++ cast of a NaN, an infinity or an out-of-range value
    is undefined behaviour (TF's result then depends on the CPU and on vectorization). So without
    saturate only products that truncate into range are kept, with saturate only non-NaN ones
    (0 * inf is NaN: float16 -> int32/uint16 scales by an infinite float16)."""
    info = np.iinfo(np.dtype(dst))
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = x * x.dtype.type(float(info.max) + 0.5)
        if saturate:
            ok = ~np.isnan(scaled)
        else:
            t = np.trunc(scaled.astype(np.float64))
            ok = np.isfinite(t) & (t >= float(info.min)) & (t <= float(info.max))
    return x[ok]


def _convert_case(src):
    def case(tf):
        rng = _rng(120 + _CONVERT_DTYPES.index(src))
        x = _convert_source(src, rng)
        feed = {}
        img = _ph(tf, x, feed)
        fetches = {}
        for dst in _CONVERT_DTYPES:
            dst_dt = getattr(tf, dst)
            for saturate in (False, True):
                key = f"to_{dst}" + ("_saturate" if saturate else "")
                if np.dtype(src).kind == "f" and np.dtype(dst).kind in "iu":
                    subset = _float_to_int_defined(x, dst, saturate)
                    if subset.size == 0:
                        continue  # float16 -> uint16/int32 without saturate: nothing is defined
                    inp = _ph(tf, subset, feed, name=key)
                else:
                    inp = img
                fetches[key] = tf.image.convert_image_dtype(inp, dst_dt, saturate=saturate)
        return fetches, feed

    case.__doc__ = f"convert_image_dtype from {src} to every dtype, saturate False and True"
    return case


for _src in _CONVERT_DTYPES:
    # Exact: a cast and one multiply (or shift) in TF's dtype; the rounding rules are the spec.
    globals()[f"case_convert_image_dtype_from_{_src}"] = _exact(_convert_case(_src))
del _src


@_exact
def case_convert_image_dtype_image_shapes(tf):
    """On real image tensors (static and unknown shapes)."""
    rng = _rng(130)
    feed = {}
    u8 = _ph(tf, _u8(rng, BATCH), feed, shape=[None, None, None, 3], name="u8")
    f = _ph(tf, _f32(rng, SINGLE), feed, name="f")
    return {
        "u8_to_f32": tf.image.convert_image_dtype(u8, tf.float32),
        "f32_to_u8": tf.image.convert_image_dtype(f, tf.uint8),
        "f32_to_u8_saturate": tf.image.convert_image_dtype(f, tf.uint8, saturate=True),
        "same_dtype": tf.image.convert_image_dtype(f, tf.float32),
    }, feed


# -- colour spaces --------------------------------------------------------------------------------


def _color_probe_pixels():
    """Pixels that hit every branch of the HSV conversion: greys, primaries, ties between channels."""
    px = [
        [0, 0, 0],
        [1, 1, 1],
        [0.5, 0.5, 0.5],
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
        [1, 1, 0],
        [0, 1, 1],
        [1, 0, 1],
        [0.2, 0.4, 0.4],
        [0.4, 0.2, 0.4],
        [0.4, 0.4, 0.2],
        [0.9, 0.1, 0.5],
        [0.1, 0.9, 0.5],
        [0.5, 0.1, 0.9],
        [0.3, 0.3, 0.7],
        [0.7, 0.3, 0.3],
        [0.25, 0.75, 0.25],
    ]
    return np.array(px, np.float32).reshape(2, 3, 3, 3)


@_tol(2e-7, 1e-7, key="float64")  # float64 images are weighted in float32 (convert_image_dtype first)
def case_rgb_to_grayscale(tf):
    """float32/float64 and uint8 (converted to float, weighted, converted back with rounding)."""
    rng = _rng(140)
    feed = {}
    dyn = _ph(tf, _f32(rng, BATCH), feed, shape=[None, None, None, 3], name="dyn")
    return {
        "float32_batch": tf.image.rgb_to_grayscale(tf.constant(_f32(rng, BATCH))),
        "float32_single": tf.image.rgb_to_grayscale(tf.constant(_f32(rng, SINGLE))),
        "float64": tf.image.rgb_to_grayscale(tf.constant(_f32(rng, SINGLE).astype(np.float64))),
        "uint8": tf.image.rgb_to_grayscale(tf.constant(_u8(rng, BATCH))),
        "dynamic": tf.image.rgb_to_grayscale(dyn),
    }, feed


@_exact
def case_grayscale_to_rgb(tf):
    rng = _rng(141)
    feed = {}
    dyn = _ph(tf, _f32(rng, (6, 8, 1)), feed, shape=[None, None, 1], name="dyn")
    return {
        "single": tf.image.grayscale_to_rgb(tf.constant(_u8(rng, (6, 8, 1)))),
        "batch": tf.image.grayscale_to_rgb(tf.constant(_f32(rng, (2, 5, 7, 1)))),
        "dynamic": tf.image.grayscale_to_rgb(dyn),
    }, feed


def case_rgb_to_hsv_and_back(tf):
    rng = _rng(142)
    probe = _color_probe_pixels()
    rand = _f32(rng, BATCH)
    hsv = _f32(rng, BATCH)
    hsv_edges = np.array(
        [
            [0, 0, 0],
            [0, 1, 1],
            [1, 1, 1],
            [1 / 6, 1, 0.5],
            [0.5, 0.5, 0.5],
            [0.999, 0.3, 0.8],
            [2 / 6, 0.2, 1],
            [5 / 6, 1, 1],
            [0.25, 0, 0.6],
        ],
        np.float32,
    ).reshape(1, 3, 3, 3)
    return {
        "rgb_to_hsv_probe": tf.image.rgb_to_hsv(tf.constant(probe)),
        "rgb_to_hsv_random": tf.image.rgb_to_hsv(tf.constant(rand)),
        "rgb_to_hsv_float64": tf.image.rgb_to_hsv(tf.constant(rand.astype(np.float64))),
        "rgb_to_hsv_single": tf.image.rgb_to_hsv(tf.constant(_f32(rng, SINGLE))),
        "hsv_to_rgb_random": tf.image.hsv_to_rgb(tf.constant(hsv)),
        "hsv_to_rgb_edges": tf.image.hsv_to_rgb(tf.constant(hsv_edges)),
        "hsv_to_rgb_float64": tf.image.hsv_to_rgb(tf.constant(hsv.astype(np.float64))),
        "round_trip": tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(tf.constant(rand))),
    }, {}


# rgb_to_yiq & co. are a tensordot with a 3x3 kernel (a matmul in TF); the sum order of its three
# terms may differ in ferroflow.
@_tol(1e-5, 2e-6)
def case_yiq_yuv(tf):
    rng = _rng(143)
    feed = {}
    batch = tf.constant(_f32(rng, BATCH))
    single = tf.constant(_f32(rng, SINGLE))
    dyn = _ph(tf, _f32(rng, BATCH), feed, shape=[None, None, None, 3], name="dyn")
    f64 = tf.constant(_f32(rng, SINGLE).astype(np.float64))
    fetches = {}
    for name in ("rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb"):
        f = getattr(tf.image, name)
        fetches[f"{name}_batch"] = f(batch)
        fetches[f"{name}_single"] = f(single)
        fetches[f"{name}_dynamic"] = f(dyn)
        fetches[f"{name}_float64"] = f(f64)
    fetches["yiq_round_trip"] = tf.image.yiq_to_rgb(tf.image.rgb_to_yiq(batch))
    fetches["yuv_round_trip"] = tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(batch))
    return fetches, feed


# -- adjust_* -------------------------------------------------------------------------------------


def case_adjust_brightness(tf):
    rng = _rng(150)
    f = tf.image.adjust_brightness
    return {
        "float32": f(tf.constant(_f32(rng, BATCH)), 0.2),
        "float32_negative": f(tf.constant(_f32(rng, SINGLE)), -0.35),
        "float64": f(tf.constant(_f32(rng, SINGLE).astype(np.float64)), 0.1),
        "uint8": f(tf.constant(_u8(rng, BATCH)), 0.1),
        "uint8_negative": f(tf.constant(_u8(rng, SINGLE)), -0.3),
        "uint8_big": f(tf.constant(_u8(rng, SINGLE)), 1.5),
        "float16": f(tf.constant(_f32(rng, SINGLE).astype(np.float16)), 0.25),
    }, {}


# The per-image-and-channel mean is a float reduction; ferroflow may sum in another order.
@_tol(1e-5, 1e-5)
def case_adjust_contrast(tf):
    rng = _rng(151)
    feed = {}
    f = tf.image.adjust_contrast
    factor = _ph(tf, np.array(0.6, np.float32), feed, shape=[], name="factor")
    return {
        "float32": f(tf.constant(_f32(rng, BATCH)), 1.8),
        "float32_single": f(tf.constant(_f32(rng, SINGLE)), 0.3),
        "float32_negative_factor": f(tf.constant(_f32(rng, SINGLE)), -1.0),
        "uint8": f(tf.constant(_u8(rng, BATCH)), 2.5),
        "uint8_low": f(tf.constant(_u8(rng, SINGLE)), 0.4),
        "fed_factor": f(tf.constant(_f32(rng, BATCH)), factor),
        # (TF has no CPU kernel of AdjustContrastv2 for float16.)
    }, feed


# pow() of float32: libm and Rust's powf may differ in the last ulp.
@_tol(1e-5, 1e-6)
def case_adjust_gamma(tf):
    rng = _rng(152)
    f = tf.image.adjust_gamma
    return {
        "float32": f(tf.constant(_f32(rng, BATCH)), gamma=2.2),
        "float32_gain": f(tf.constant(_f32(rng, SINGLE)), gamma=0.5, gain=1.3),
        "float32_default": f(tf.constant(_f32(rng, SINGLE))),
        "float64": f(tf.constant(_f32(rng, SINGLE).astype(np.float64)), 1.7, 0.9),
        "uint8": f(tf.constant(_u8(rng, BATCH)), gamma=0.7),
        "uint8_gain": f(tf.constant(_u8(rng, SINGLE)), gamma=1.5, gain=2.0),
        "float16": f(tf.constant(_f32(rng, SINGLE).astype(np.float16)), 1.2),
    }, {}


# AdjustHue/AdjustSaturation run an RGB->HSV->RGB conversion per pixel in float32; ferroflow may
# order those few operations differently.
@_tol(1e-5, 2e-6)
def case_adjust_hue(tf):
    rng = _rng(153)
    f = tf.image.adjust_hue
    probe = tf.constant(_color_probe_pixels())
    return {
        "float32": f(tf.constant(_f32(rng, BATCH)), 0.2),
        "float32_negative": f(tf.constant(_f32(rng, SINGLE)), -0.45),
        "float32_half_turn": f(tf.constant(_f32(rng, SINGLE)), 0.5),
        "probe": f(probe, 0.3),
        "probe_negative": f(probe, -0.1),
        "uint8": f(tf.constant(_u8(rng, BATCH)), 0.1),
        "uint8_negative": f(tf.constant(_u8(rng, SINGLE)), -0.25),
        # (TF has no CPU kernel of AdjustHue for float16.)
    }, {}


@_tol(1e-5, 2e-6)  # as adjust_hue
def case_adjust_saturation(tf):
    rng = _rng(154)
    f = tf.image.adjust_saturation
    probe = tf.constant(_color_probe_pixels())
    return {
        "float32": f(tf.constant(_f32(rng, BATCH)), 1.7),
        "float32_desaturate": f(tf.constant(_f32(rng, SINGLE)), 0.3),
        "float32_zero": f(tf.constant(_f32(rng, SINGLE)), 0.0),
        "probe": f(probe, 2.5),
        "uint8": f(tf.constant(_u8(rng, BATCH)), 1.4),
        "uint8_low": f(tf.constant(_u8(rng, SINGLE)), 0.5),
        # (TF has no CPU kernel of AdjustSaturation for float16.)
    }, {}


# Mean and standard deviation are float reductions; ferroflow may sum in another order.
@_tol(1e-5, 1e-5)
def case_per_image_standardization(tf):
    rng = _rng(155)
    feed = {}
    dyn = _ph(tf, _u8(rng, BATCH), feed, shape=[None, None, None, 3], name="dyn")
    f = tf.image.per_image_standardization
    return {
        "float32_single": f(tf.constant(_f32(rng, SINGLE))),
        "float32_batch": f(tf.constant(_f32(rng, BATCH))),
        "uint8_single": f(tf.constant(_u8(rng, SINGLE))),
        "uint8_batch": f(tf.constant(_u8(rng, BATCH))),
        "constant_image": f(tf.constant(np.full(SINGLE, 0.4, np.float32))),
        "constant_uint8": f(tf.constant(np.full(BATCH, 200, np.uint8))),
        "float64": f(tf.constant(_f32(rng, SINGLE).astype(np.float64))),
        "dynamic": f(dyn),
    }, feed


# Gradients of compositions: reductions in the forward and backward pass, as above.
@_tol(1e-5, 1e-5)
def case_grad_compositions(tf):
    rng = _rng(156)
    feed = {}
    img = _ph(tf, _f32(rng, BATCH), feed)
    fetches = {}
    # (adjust_contrast is one op, AdjustContrastv2, with no gradient in TF: tf.gradients raises.)
    for name, fn in (
        ("adjust_brightness", lambda x: tf.image.adjust_brightness(x, 0.3)),
        ("per_image_standardization", tf.image.per_image_standardization),
        ("rgb_to_grayscale", tf.image.rgb_to_grayscale),
        ("rgb_to_yuv", tf.image.rgb_to_yuv),
        ("adjust_gamma", lambda x: tf.image.adjust_gamma(x, 1.5, 0.8)),
        ("flip_left_right", tf.image.flip_left_right),
        ("central_crop", lambda x: tf.image.central_crop(x, 0.5)),
        ("total_variation", tf.image.total_variation),
    ):
        y = fn(img)
        shape = tuple(y.shape.as_list())
        (g,) = tf.gradients(_weighted_sum(tf, y, rng, shape), [img])
        fetches[f"grad_{name}"] = g
    return fetches, feed


# -- analysis -------------------------------------------------------------------------------------


# Sums over the image; ferroflow may add in another order.
@_tol(1e-5, 1e-4)
def case_total_variation(tf):
    rng = _rng(160)
    feed = {}
    dyn = _ph(tf, _f32(rng, BATCH), feed, shape=[None, None, None, 3], name="dyn")
    f = tf.image.total_variation
    return {
        "single": f(tf.constant(_f32(rng, SINGLE))),
        "batch": f(tf.constant(_f32(rng, BATCH))),
        "float64": f(tf.constant(_f32(rng, BATCH).astype(np.float64))),
        "int32": f(tf.constant(_u8(rng, BATCH).astype(np.int32))),
        "dynamic": f(dyn),
    }, feed


@_exact
def case_image_gradients(tf):
    rng = _rng(161)
    feed = {}
    dyn = _ph(tf, _f32(rng, BATCH), feed, shape=[None, None, None, 3], name="dyn")
    dy, dx = tf.image.image_gradients(tf.constant(_f32(rng, BATCH)))
    dy64, dx64 = tf.image.image_gradients(tf.constant(_f32(rng, (1, 4, 3, 2)).astype(np.float64)))
    dyd, dxd = tf.image.image_gradients(dyn)
    return {
        "dy": dy,
        "dx": dx,
        "dy_float64": dy64,
        "dx_float64": dx64,
        "dy_dynamic": dyd,
        "dx_dynamic": dxd,
    }, feed


# A depthwise convolution with reflect padding: nine products summed per output.
@_tol(1e-5, 1e-5)
def case_sobel_edges(tf):
    rng = _rng(162)
    feed = {}
    dyn = _ph(tf, _f32(rng, BATCH), feed, shape=[None, None, None, 3], name="dyn")
    return {
        "float32": tf.image.sobel_edges(tf.constant(_f32(rng, BATCH))),
        "one_channel": tf.image.sobel_edges(tf.constant(_f32(rng, (1, 6, 4, 1)))),
        "float64": tf.image.sobel_edges(tf.constant(_f32(rng, (1, 4, 5, 2)).astype(np.float64))),
        "dynamic": tf.image.sobel_edges(dyn),
    }, feed


# A mean over the image and a log10: float reduction order and libm.
@_tol(1e-5, 1e-5)
def case_psnr(tf):
    rng = _rng(163)
    a = _f32(rng, BATCH)
    b = np.clip(a + rng.randn(*BATCH).astype(np.float32) * 0.05, 0, 1)
    a8 = _u8(rng, BATCH)
    b8 = np.clip(a8.astype(np.int32) + rng.randint(-12, 13, BATCH), 0, 255).astype(np.uint8)
    return {
        "float32": tf.image.psnr(tf.constant(a), tf.constant(b), max_val=1.0),
        "single": tf.image.psnr(tf.constant(a[0]), tf.constant(b[0]), 1.0),
        "uint8": tf.image.psnr(tf.constant(a8), tf.constant(b8), max_val=255),
        "identical": tf.image.psnr(tf.constant(a), tf.constant(a), max_val=1.0),
        "float64_maxval2": tf.image.psnr(
            tf.constant(a.astype(np.float64)), tf.constant(b.astype(np.float64)), 2.0
        ),
    }, {}


def _ssim_pair(rng, shape, noise):
    a = _f32(rng, shape)
    b = np.clip(a + rng.randn(*shape).astype(np.float32) * noise, 0, 1).astype(np.float32)
    return a, b


# Gaussian-filter convolutions and means over the image: float reduction order.
@_tol(2e-5, 2e-5)
def case_ssim(tf):
    rng = _rng(164)
    a, b = _ssim_pair(rng, (2, 16, 16, 3), 0.1)
    a8 = (a * 255).astype(np.uint8)
    b8 = (b * 255).astype(np.uint8)
    a_s, b_s = _ssim_pair(rng, (9, 10, 1), 0.2)
    return {
        "float32": tf.image.ssim(tf.constant(a), tf.constant(b), max_val=1.0),
        "uint8": tf.image.ssim(tf.constant(a8), tf.constant(b8), max_val=255),
        "identical": tf.image.ssim(tf.constant(a), tf.constant(a), 1.0),
        "small_filter_single": tf.image.ssim(
            tf.constant(a_s), tf.constant(b_s), 1.0, filter_size=3, filter_sigma=0.8
        ),
        "k_args": tf.image.ssim(tf.constant(a), tf.constant(b), 1.0, k1=0.02, k2=0.05),
        "index_map": tf.image.ssim(tf.constant(a), tf.constant(b), 1.0, filter_size=5, return_index_map=True),
    }, {}


@_tol(2e-5, 2e-5)  # as ssim
def case_ssim_multiscale(tf):
    rng = _rng(165)
    # Five scales of an 11-tap filter need at least (11 - 1) * 2**4 + 1 = 161 pixels a side.
    a, b = _ssim_pair(rng, (1, 168, 170, 1), 0.1)
    c, d = _ssim_pair(rng, (2, 24, 20, 3), 0.15)
    c8 = (c * 255).astype(np.uint8)
    d8 = (d * 255).astype(np.uint8)
    return {
        "default_factors": tf.image.ssim_multiscale(tf.constant(a), tf.constant(b), max_val=1.0),
        "three_scales": tf.image.ssim_multiscale(
            tf.constant(c), tf.constant(d), 1.0, power_factors=(0.3, 0.4, 0.3), filter_size=3
        ),
        "uint8": tf.image.ssim_multiscale(
            tf.constant(c8), tf.constant(d8), 255, power_factors=[0.5, 0.5], filter_size=5, filter_sigma=1.0
        ),
    }, {}


# -- non-max suppression --------------------------------------------------------------------------


def _nms_boxes(rng, n, clusters=4, flipped=0.25):
    """Boxes in clusters, so that many overlap; a fraction ``flipped`` given with swapped corners
    ([y2, x2, y1, x1]), 1.0 for all of them."""
    centers = rng.rand(clusters, 2) * 0.6 + 0.2
    which = rng.randint(0, clusters, n)
    c = centers[which] + rng.randn(n, 2) * 0.04
    hw = rng.rand(n, 2) * 0.2 + 0.1
    boxes = np.concatenate([c - hw / 2, c + hw / 2], axis=1)
    flip = rng.rand(n) < flipped
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    return boxes.astype(np.float32)


@_exact
def case_non_max_suppression(tf):
    rng = _rng(170)
    feed = {}
    boxes = _ph(tf, _nms_boxes(rng, 20), feed, name="boxes")
    scores = _ph(tf, rng.rand(20).astype(np.float32), feed, name="scores")
    max_out = _ph(tf, np.array(4, np.int32), feed, shape=[], name="max_out")
    f = tf.image.non_max_suppression
    return {
        "default": f(boxes, scores, 10),
        "iou_03": f(boxes, scores, 20, iou_threshold=0.3),
        "iou_07": f(boxes, scores, 20, iou_threshold=0.7),
        "score_threshold": f(boxes, scores, 20, 0.5, score_threshold=0.4),
        "fed_max": f(boxes, scores, max_out),
        "max_zero": f(boxes, scores, 0),
        "all_below_threshold": f(boxes, scores, 5, score_threshold=2.0),
    }, feed


@_exact
def case_non_max_suppression_ties(tf):
    """Equal scores: TF keeps the lower index first; identical boxes suppress each other."""
    boxes = np.array(
        [
            [0, 0, 1, 1],
            [0, 0, 1, 1],
            [0.5, 0.5, 1.5, 1.5],
            [2, 2, 3, 3],
            [2, 2, 3, 3],
            [0, 0, 0, 0],
            [5, 5, 5, 6],
        ],
        np.float32,
    )
    scores = np.array([0.5, 0.5, 0.5, 0.9, 0.9, 0.7, 0.7], np.float32)
    return {
        "selected": tf.image.non_max_suppression(tf.constant(boxes), tf.constant(scores), 7, 0.1),
        "iou_zero": tf.image.non_max_suppression(tf.constant(boxes), tf.constant(scores), 7, 0.0),
    }, {}


@_exact
def case_non_max_suppression_overlaps(tf):
    rng = _rng(171)
    n = 12
    m = rng.rand(n, n).astype(np.float32)
    overlaps = ((m + m.T) / 2).astype(np.float32)
    np.fill_diagonal(overlaps, 1.0)
    scores = rng.rand(n).astype(np.float32)
    f = tf.image.non_max_suppression_overlaps
    o, s = tf.constant(overlaps), tf.constant(scores)
    return {
        "default": f(o, s, 12),
        "threshold_07": f(o, s, 12, overlap_threshold=0.7),
        "score_threshold": f(o, s, 5, overlap_threshold=0.8, score_threshold=0.3),
    }, {}


@_exact
def case_non_max_suppression_padded(tf):
    # TF canonicalizes the corners of every box by looking at the first box only (if its y1 > y2, it
    # swaps y1/y2 of all boxes; x likewise), so each set of boxes here is either all in
    # [y1, x1, y2, x2] order or all flipped, never mixed.
    rng = _rng(172)
    feed = {}
    boxes_v = _nms_boxes(rng, 16, flipped=0.0)
    scores_v = rng.rand(16).astype(np.float32)
    boxes = _ph(tf, boxes_v, feed, name="boxes")
    scores = _ph(tf, scores_v, feed, name="scores")
    batch_boxes = tf.constant(np.stack([boxes_v, _nms_boxes(rng, 16, flipped=0.0)]))
    all_flipped = tf.constant(_nms_boxes(rng, 16, flipped=1.0))
    batch_scores = tf.constant(np.stack([scores_v, rng.rand(16).astype(np.float32)]))
    order = np.argsort(-scores_v, kind="stable")
    f = tf.image.non_max_suppression_padded
    fetches = {}
    for tag, (idx, valid) in {
        "unpadded": f(boxes, scores, 8),
        "padded": f(boxes, scores, 8, pad_to_max_output_size=True),
        # Fewer boxes survive than max_output_size: the tail is padding (zeros).
        "padded_few": f(
            boxes, scores, 16, iou_threshold=0.3, score_threshold=0.3, pad_to_max_output_size=True
        ),
        "batch": f(batch_boxes, batch_scores, 12, iou_threshold=0.3, pad_to_max_output_size=True),
        "all_flipped": f(all_flipped, scores, 9, iou_threshold=0.3, pad_to_max_output_size=True),
        "sorted_canonical": f(
            tf.constant(boxes_v[order]),
            tf.constant(scores_v[order]),
            7,
            pad_to_max_output_size=True,
            sorted_input=True,
            canonicalized_coordinates=True,
        ),
        "tile_4": f(boxes, scores, 10, iou_threshold=0.3, pad_to_max_output_size=True, tile_size=4),
    }.items():
        fetches[f"{tag}_indices"] = idx
        fetches[f"{tag}_valid"] = valid
    return fetches, feed


# Soft-NMS rescales scores with exp(); libm may differ in the last ulp.
@_tol(1e-6, 1e-7)
def case_non_max_suppression_with_scores(tf):
    rng = _rng(173)
    feed = {}
    boxes = _ph(tf, _nms_boxes(rng, 18), feed, name="boxes")
    scores = _ph(tf, rng.rand(18).astype(np.float32), feed, name="scores")
    f = tf.image.non_max_suppression_with_scores
    fetches = {}
    for tag, (idx, sc) in {
        "hard": f(boxes, scores, 10, iou_threshold=0.5),
        "soft_05": f(boxes, scores, 18, iou_threshold=1.0, soft_nms_sigma=0.5),
        "soft_01_threshold": f(boxes, scores, 18, iou_threshold=0.6, score_threshold=0.2, soft_nms_sigma=0.1),
    }.items():
        fetches[f"{tag}_indices"] = idx
        fetches[f"{tag}_scores"] = sc
    return fetches, feed


@_exact
def case_combined_non_max_suppression(tf):
    rng = _rng(174)
    n_boxes, n_classes = 10, 3
    shared = np.stack([_nms_boxes(rng, n_boxes) for _ in range(2)])[:, :, None, :]  # q = 1
    per_class = np.stack(
        [np.stack([_nms_boxes(rng, n_boxes) for _ in range(n_classes)], axis=1) for _ in range(2)]
    )  # q = num_classes
    scores = rng.rand(2, n_boxes, n_classes).astype(np.float32)
    # Some boxes reach outside [0, 1] so clip_boxes matters.
    shared = (shared * 1.4 - 0.2).astype(np.float32)
    f = tf.image.combined_non_max_suppression
    fetches = {}
    for tag, out in {
        "shared": f(tf.constant(shared), tf.constant(scores), 4, 8),
        "shared_no_clip": f(tf.constant(shared), tf.constant(scores), 4, 8, clip_boxes=False),
        "per_class": f(tf.constant(per_class), tf.constant(scores), 3, 6, iou_threshold=0.4),
        "pad_per_class": f(tf.constant(per_class), tf.constant(scores), 2, 20, pad_per_class=True),
        "pad_per_class_small": f(tf.constant(per_class), tf.constant(scores), 2, 4, pad_per_class=True),
        "score_threshold": f(tf.constant(shared), tf.constant(scores), 5, 12, 0.5, score_threshold=0.6),
    }.items():
        boxes_out, scores_out, classes_out, valid = out
        fetches[f"{tag}_boxes"] = boxes_out
        fetches[f"{tag}_scores"] = scores_out
        fetches[f"{tag}_classes"] = classes_out
        fetches[f"{tag}_valid"] = valid
    return fetches, {}


CASES = {name[len("case_") :]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}
