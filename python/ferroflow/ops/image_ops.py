"""``tf.image``: resizing, cropping, flipping, color and dtype conversion, augmentation and image
quality measures, TF1's signatures and TensorFlow's arithmetic.

The resize and color kernels run in Rust (``ResizeBilinear``, ``AdjustHue``, ...: crates/image);
everything else is composed from core ops the way TensorFlow composes it, so the same graph gives
the same pixels. Codecs live in ``image_codecs``, box ops in ``image_boxes``.
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops, tensor_util
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops import array_ops, control_flow_ops, math_ops, nn_conv, nn_ops, random_ops
from ferroflow.ops import cond as cond_ops
from ferroflow.ops._op_util import make

__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_jpeg_quality",
    "adjust_saturation",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "extract_image_patches",
    "extract_patches",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "image_gradients",
    "pad_to_bounding_box",
    "per_image_standardization",
    "psnr",
    "random_brightness",
    "random_contrast",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_jpeg_quality",
    "random_saturation",
    "resize",
    "resize_area",
    "resize_bicubic",
    "resize_bilinear",
    "resize_image_with_crop_or_pad",
    "resize_image_with_pad",
    "resize_images",
    "resize_nearest_neighbor",
    "resize_with_crop_or_pad",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "rot90",
    "sobel_edges",
    "ssim",
    "ssim_multiscale",
    "total_variation",
    "transpose",
    "transpose_image",
    "yiq_to_rgb",
    "yuv_to_rgb",
]


class ResizeMethod:
    """TF1's resize methods (``tf.compat.v1.image.ResizeMethod``): integers, as TF1 passes them."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


# TF2's string names of the same methods, accepted wherever a method is.
_METHOD_NAMES = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}


# ------------------------------------------------------------------------------------- helpers
def _is_tensor(x):
    return isinstance(x, ops.Tensor)


def _assert(cond, ex_type, msg):
    """A run-time ``Assert`` for a tensor condition; a Python condition is checked now."""
    if _is_tensor(cond):
        return [control_flow_ops.Assert(cond, [msg])]
    if not cond:
        raise ex_type(msg)
    return []


def _max(x, y):
    return math_ops.maximum(x, y) if _is_tensor(x) or _is_tensor(y) else max(x, y)


def _min(x, y):
    return math_ops.minimum(x, y) if _is_tensor(x) or _is_tensor(y) else min(x, y)


def _equal(x, y):
    return math_ops.equal(x, y) if _is_tensor(x) or _is_tensor(y) else x == y


def _dimensions(image, rank):
    """The image's dimensions: Python ints where the static shape knows them, scalars otherwise."""
    if image.get_shape().is_fully_defined():
        return image.get_shape().as_list()
    static = image.get_shape().with_rank(rank).as_list()
    dynamic = array_ops.unstack(array_ops.shape(image), rank)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def _check_at_least_3d(image, require_static=True):
    """TensorFlow's ``_CheckAtLeast3DImage``: static checks now, a run-time check if needed."""
    try:
        if image.get_shape().ndims is None:
            image_shape = image.get_shape().with_rank(3)
        else:
            image_shape = image.get_shape().with_rank_at_least(3)
    except ValueError:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.") from None
    if require_static and not image_shape.is_fully_defined():
        raise ValueError(f"'image' (shape {image_shape}) must be fully defined.")
    if any(x == 0 for x in image_shape[-3:].as_list()):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {image_shape}")
    if not image_shape[-3:].is_fully_defined():
        return [
            control_flow_ops.Assert(
                math_ops.reduce_all(math_ops.greater(array_ops.shape(image)[-3:], 0)),
                ["inner 3 dims of 'image.shape' must be > 0."],
            )
        ]
    return []


def _with_3d_check(image):
    return control_flow_ops.with_dependencies(_check_at_least_3d(image, require_static=False), image)


def _batched(image, what="image"):
    """``(image as [N,H,W,C], was_batched)`` for a 3-D or 4-D image (unknown rank: treated as 3-D)."""
    ndims = image.get_shape().ndims
    if ndims == 3:
        return array_ops.expand_dims(image, 0), False
    if ndims is None:
        image = array_ops.expand_dims(image, 0)
        image.set_shape([None] * 4)
        return image, False
    if ndims != 4:
        raise ValueError(f"'{what}' (shape {image.get_shape()}) must have either 3 or 4 dimensions.")
    return image, True


def _unbatched(image, was_batched):
    return image if was_batched else array_ops.squeeze(image, axis=[0])


# ------------------------------------------------------------------------------------- resizing
def _resize_op(op_type, images, size, align_corners, half_pixel_centers, name):
    images = ops.convert_to_tensor(images, name="images")
    size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
    attrs = {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}
    return make(op_type, [images, size], attrs, name=name or op_type)


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Bilinear resize of ``[batch, height, width, channels]`` images to ``size``; float32 result."""
    return _resize_op("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Nearest-neighbour resize; keeps the dtype."""
    return _resize_op("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Bicubic resize (TF1's a=-0.75 kernel; Keys' a=-0.5 with half-pixel centres); float32 result."""
    return _resize_op("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images, size, align_corners=False, name=None):
    """Area (box-average) resize; float32 result."""
    images = ops.convert_to_tensor(images, name="images")
    size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
    return make("ResizeArea", [images, size], {"align_corners": bool(align_corners)}, name=name or "ResizeArea")


def _method_index(method):
    if isinstance(method, str):
        if method not in _METHOD_NAMES:
            raise ValueError(f"Resize method is not implemented: {method}")
        return _METHOD_NAMES[method]
    return method


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """TF1's ``tf.image.resize_images``: 3-D or 4-D images to ``size`` = ``[new_height, new_width]``.

    Nearest neighbour keeps the dtype, the other methods give float32; when the static size already
    matches, the images come back unchanged.
    """
    method = _method_index(method)
    if method not in (0, 1, 2, 3):
        raise ValueError(f"Resize method is not implemented: {method}")
    with ops.name_scope(name, "resize", [images, size]):
        images = ops.convert_to_tensor(images, name="images")
        if images.get_shape().ndims is None:
            raise ValueError("'images' contains no shape.")
        images, was_batched = _batched(images, "images")
        _, height, width, _ = images.get_shape().as_list()
        try:
            size = ops.convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.get_shape().is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        static_size = tensor_util.constant_value(size)
        if preserve_aspect_ratio and static_size is not None and None not in (height, width):
            # Everything is known now: the same float32 arithmetic (and round-half-to-even) as the
            # graph below, done here so the result's static shape is known, as TensorFlow's
            # constant-folding shape inference knows it.
            h32, w32 = np.float32(height), np.float32(width)
            scale = min(np.float32(static_size[0]) / h32, np.float32(static_size[1]) / w32)
            size = ops.convert_to_tensor(
                [int(np.round(scale * h32)), int(np.round(scale * w32))], dtypes.int32, name="size"
            )
        elif preserve_aspect_ratio:
            _, cur_h, cur_w, _ = _dimensions(images, 4)
            cur_h = math_ops.cast(cur_h, dtypes.float32)
            cur_w = math_ops.cast(cur_w, dtypes.float32)
            scale = math_ops.minimum(
                math_ops.cast(size[0], dtypes.float32) / cur_h, math_ops.cast(size[1], dtypes.float32) / cur_w
            )
            new_h = math_ops.cast(math_ops.round(scale * cur_h), dtypes.int32)
            new_w = math_ops.cast(math_ops.round(scale * cur_w), dtypes.int32)
            size = ops.convert_to_tensor([new_h, new_w], dtypes.int32, name="size")
        known = tensor_util.constant_value_as_shape(size)
        new_h_const, new_w_const = (known.as_list() if known.ndims == 2 else [None, None])
        if None not in (new_h_const, new_w_const, height, width) and (height, width) == (new_h_const, new_w_const):
            return _unbatched(images, was_batched)
        if method == ResizeMethod.BILINEAR:
            out = resize_bilinear(images, size, align_corners=align_corners)
        elif method == ResizeMethod.NEAREST_NEIGHBOR:
            out = resize_nearest_neighbor(images, size, align_corners=align_corners)
        elif method == ResizeMethod.BICUBIC:
            out = resize_bicubic(images, size, align_corners=align_corners)
        else:
            out = resize_area(images, size, align_corners=align_corners)
        out.set_shape([None, new_h_const, new_w_const, None])
        return _unbatched(out, was_batched)


resize = resize_images


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``target_height x target_width`` window of ``image`` whose top-left corner is at the offsets."""
    with ops.name_scope(None, "crop_to_bounding_box", [image]):
        image = ops.convert_to_tensor(image, name="image")
        image, was_batched = _batched(image)
        checks = _check_at_least_3d(image, require_static=False)
        batch, height, width, depth = _dimensions(image, 4)
        checks += _assert(offset_width >= 0, ValueError, "offset_width must be >= 0.")
        checks += _assert(offset_height >= 0, ValueError, "offset_height must be >= 0.")
        checks += _assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += _assert(target_height > 0, ValueError, "target_height must be > 0.")
        checks += _assert(width >= (target_width + offset_width), ValueError, "width must be >= target + offset.")
        checks += _assert(height >= (target_height + offset_height), ValueError,
                          "height must be >= target + offset.")
        image = control_flow_ops.with_dependencies(checks, image)
        cropped = array_ops.slice(
            image,
            array_ops.stack([0, offset_height, offset_width, 0]),
            array_ops.stack([-1, target_height, target_width, -1]),
        )
        cropped.set_shape([
            None if _is_tensor(batch) else batch,
            None if _is_tensor(target_height) else target_height,
            None if _is_tensor(target_width) else target_width,
            None if _is_tensor(depth) else depth,
        ])
        return _unbatched(cropped, was_batched)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Zero-pads ``image`` to ``target_height x target_width``, placing it at the offsets."""
    with ops.name_scope(None, "pad_to_bounding_box", [image]):
        image = ops.convert_to_tensor(image, name="image")
        image, was_batched = _batched(image)
        checks = _check_at_least_3d(image, require_static=False)
        batch, height, width, depth = _dimensions(image, 4)
        after_w = target_width - offset_width - width
        after_h = target_height - offset_height - height
        checks += _assert(offset_height >= 0, ValueError, "offset_height must be >= 0")
        checks += _assert(offset_width >= 0, ValueError, "offset_width must be >= 0")
        checks += _assert(after_w >= 0, ValueError, "width must be <= target - offset")
        checks += _assert(after_h >= 0, ValueError, "height must be <= target - offset")
        image = control_flow_ops.with_dependencies(checks, image)
        paddings = array_ops.reshape(
            array_ops.stack([0, 0, offset_height, after_h, offset_width, after_w, 0, 0]), [4, 2]
        )
        padded = array_ops.pad(image, paddings)
        padded.set_shape([None if _is_tensor(d) else d for d in (batch, target_height, target_width, depth)])
        return _unbatched(padded, was_batched)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Centrally crops and/or zero-pads ``image`` to ``target_height x target_width``."""
    with ops.name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image = ops.convert_to_tensor(image, name="image")
        image, was_batched = _batched(image)
        checks = _check_at_least_3d(image, require_static=False)
        checks += _assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += _assert(target_height > 0, ValueError, "target_height must be > 0.")
        image = control_flow_ops.with_dependencies(checks, image)
        if _is_tensor(target_height):
            target_height = control_flow_ops.with_dependencies(checks, target_height)
        if _is_tensor(target_width):
            target_width = control_flow_ops.with_dependencies(checks, target_width)
        _, height, width, _ = _dimensions(image, 4)
        width_diff = target_width - width
        height_diff = target_height - height
        cropped = crop_to_bounding_box(
            image,
            _max(-height_diff // 2, 0),
            _max(-width_diff // 2, 0),
            _min(target_height, height),
            _min(target_width, width),
        )
        resized = pad_to_bounding_box(
            cropped, _max(height_diff // 2, 0), _max(width_diff // 2, 0), target_height, target_width
        )
        if resized.get_shape().ndims is None:
            raise ValueError("resized contains no shape.")
        return _unbatched(resized, was_batched)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def resize_image_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, align_corners=False):
    """Resizes ``image`` to fit in ``target_height x target_width`` keeping its aspect ratio, then
    zero-pads it to exactly that size (TF1's version)."""
    with ops.name_scope(None, "resize_image_with_pad", [image]):
        image = ops.convert_to_tensor(image, name="image")
        image, was_batched = _batched(image)
        checks = _check_at_least_3d(image, require_static=False)
        checks += _assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += _assert(target_height > 0, ValueError, "target_height must be > 0.")
        image = control_flow_ops.with_dependencies(checks, image)
        _, height, width, _ = _dimensions(image, 4)
        f_height = math_ops.cast(height, dtypes.float32)
        f_width = math_ops.cast(width, dtypes.float32)
        f_target_height = math_ops.cast(target_height, dtypes.float32)
        f_target_width = math_ops.cast(target_width, dtypes.float32)
        ratio = math_ops.maximum(f_width / f_target_width, f_height / f_target_height)
        resized_height_float = f_height / ratio
        resized_width_float = f_width / ratio
        resized_height = math_ops.cast(math_ops.floor(resized_height_float), dtypes.int32)
        resized_width = math_ops.cast(math_ops.floor(resized_width_float), dtypes.int32)
        padding_height = (f_target_height - resized_height_float) / 2
        padding_width = (f_target_width - resized_width_float) / 2
        p_height = math_ops.maximum(0, math_ops.cast(math_ops.floor(padding_height), dtypes.int32))
        p_width = math_ops.maximum(0, math_ops.cast(math_ops.floor(padding_width), dtypes.int32))
        resized = resize_images(image, [resized_height, resized_width], method, align_corners=align_corners)
        padded = pad_to_bounding_box(resized, p_height, p_width, target_height, target_width)
        if padded.get_shape().ndims is None:
            raise ValueError("padded contains no shape.")
        return _unbatched(padded, was_batched)


def central_crop(image, central_fraction):
    """The central ``central_fraction`` of a 3-D or 4-D image (in each of height and width)."""
    with ops.name_scope(None, "central_crop", [image]):
        image = ops.convert_to_tensor(image, name="image")
        fraction = tensor_util.constant_value(central_fraction) if _is_tensor(central_fraction) else central_fraction
        if fraction is not None:
            fraction = float(fraction)
            if fraction <= 0.0 or fraction > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if fraction == 1.0:
                return image
        else:
            frac = ops.convert_to_tensor(central_fraction, dtype=dtypes.float32, name="central_fraction")
            in_range = math_ops.logical_and(math_ops.greater(frac, 0.0), math_ops.less_equal(frac, 1.0))
            checks = [control_flow_ops.Assert(in_range, ["central_fraction must be within (0, 1]"])]
            image = control_flow_ops.with_dependencies(checks, image)
        _check_at_least_3d(image, require_static=False)
        rank = image.get_shape().ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {rank}.")
        first = rank - 3

        def dim(idx):
            static = image.get_shape().as_list()[idx]
            return (static, False) if static is not None else (array_ops.shape(image)[idx], True)

        img_h, dyn_h = dim(first)
        img_w, dyn_w = dim(first + 1)
        dyn_h = dyn_h or fraction is None
        dyn_w = dyn_w or fraction is None

        def start(size, dynamic):
            if dynamic:
                sd = math_ops.cast(size, dtypes.float64)
                frac = math_ops.cast(central_fraction, dtypes.float64)
                return math_ops.cast((sd - sd * frac) / 2, dtypes.int32)
            return int((float(size) - float(size) * fraction) / 2)

        h_start, w_start = start(img_h, dyn_h), start(img_w, dyn_w)
        h_size = img_h - h_start * 2
        w_size = img_w - w_start * 2
        if rank == 3:
            begin, size = array_ops.stack([h_start, w_start, 0]), array_ops.stack([h_size, w_size, -1])
        else:
            begin, size = array_ops.stack([0, h_start, w_start, 0]), array_ops.stack([-1, h_size, w_size, -1])
        out = array_ops.slice(image, begin, size)
        static = image.get_shape().as_list()
        hw = [None if dyn_h else h_size, None if dyn_w else w_size]
        out.set_shape(hw + [static[2]] if rank == 3 else [static[0]] + hw + [static[3]])
        return out


# ------------------------------------------------------------------------------------- geometry
def _flip(image, axis, scope_name):
    with ops.name_scope(None, scope_name, [image]):
        image = ops.convert_to_tensor(image, name="image")
        image = _with_3d_check(image)
        ndims = image.get_shape().ndims
        if ndims is None:
            return cond_ops.cond(
                math_ops.equal(array_ops.rank(image), 3),
                lambda: array_ops.reverse(image, [axis]),
                lambda: array_ops.reverse(image, [axis + 1]),
            )
        if ndims == 3:
            return array_ops.reverse(image, [axis])
        if ndims == 4:
            return array_ops.reverse(image, [axis + 1])
        raise ValueError(f"'image' (shape {image.get_shape()})must have either 3 or 4 dimensions.")


def flip_left_right(image):
    """Mirrors images horizontally (the width axis)."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    """Mirrors images vertically (the height axis)."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, axis, seed, scope_name):
    with ops.name_scope(None, scope_name, [image]) as scope:
        image = ops.convert_to_tensor(image, name="image")
        image = _with_3d_check(image)
        ndims = image.get_shape().ndims

        def single():
            coin = random_ops.random_uniform([], 0, 1.0, seed=seed)
            out = cond_ops.cond(math_ops.less(coin, 0.5), lambda: array_ops.reverse(image, [axis]), lambda: image,
                                name=scope)
            out.set_shape(image.get_shape())
            return out

        def batch():
            n = array_ops.shape(image)[0]
            coins = random_ops.random_uniform([n], 0, 1.0, seed=seed)
            flips = math_ops.cast(math_ops.round(array_ops.reshape(coins, [n, 1, 1, 1])), image.dtype)
            flipped = array_ops.reverse(image, [axis + 1])
            return flips * flipped + (1 - flips) * image

        if ndims is None:
            return cond_ops.cond(math_ops.equal(array_ops.rank(image), 3), single, batch)
        if ndims == 3:
            return single()
        if ndims == 4:
            return batch()
        raise ValueError(f"'image' (shape {image.get_shape()}) must have either 3 or 4 dimensions.")


def random_flip_left_right(image, seed=None):
    """Mirrors each image horizontally with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Mirrors each image vertically with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def _rot90_by(image, k, batched):
    """Rotation by a Python ``k`` in {0, 1, 2, 3} quarter turns counter-clockwise."""
    h, w = (1, 2) if batched else (0, 1)
    perm = [0, 2, 1, 3] if batched else [1, 0, 2]
    if k == 0:
        return array_ops.identity(image)
    if k == 1:
        return array_ops.transpose(array_ops.reverse(image, [w]), perm)
    if k == 2:
        return array_ops.reverse(image, [h, w])
    return array_ops.reverse(array_ops.transpose(image, perm), [w])


def rot90(image, k=1, name=None):
    """Rotates images by ``k`` quarter turns counter-clockwise (``k`` may be a tensor)."""
    with ops.name_scope(name, "rot90", [image, k]) as scope:
        image = ops.convert_to_tensor(image, name="image")
        image = _with_3d_check(image)
        ndims = image.get_shape().ndims
        if ndims not in (3, 4):
            raise ValueError(f"'image' (shape {image.get_shape()}) must have either 3 or 4 dimensions.")
        batched = ndims == 4
        k_static = tensor_util.constant_value(k) if _is_tensor(k) else k
        if k_static is not None:
            out = _rot90_by(image, int(k_static) % 4, batched)
            return array_ops.identity(out, name=scope)
        k = math_ops.floormod(ops.convert_to_tensor(k, dtype=dtypes.int32, name="k"), 4)
        pairs = [(math_ops.equal(k, i), (lambda i=i: _rot90_by(image, i, batched))) for i in (1, 2, 3)]
        out = cond_ops.case(pairs, default=lambda: array_ops.identity(image), exclusive=True, name=scope)
        static = image.get_shape().as_list()
        out.set_shape([static[0], None, None, static[3]] if batched else [None, None, static[2]])
        return out


def transpose(image, name=None):
    """Swaps the height and width of 3-D or 4-D images."""
    with ops.name_scope(name, "transpose", [image]):
        image = ops.convert_to_tensor(image, name="image")
        image = _with_3d_check(image)
        ndims = image.get_shape().ndims
        if ndims is None:
            return cond_ops.cond(
                math_ops.equal(array_ops.rank(image), 3),
                lambda: array_ops.transpose(image, [1, 0, 2]),
                lambda: array_ops.transpose(image, [0, 2, 1, 3]),
            )
        if ndims == 3:
            return array_ops.transpose(image, [1, 0, 2])
        if ndims == 4:
            return array_ops.transpose(image, [0, 2, 1, 3])
        raise ValueError(f"'image' (shape {image.get_shape()}) must have either 3 or 4 dimensions.")


transpose_image = transpose


def _four(values, what):
    values = list(values)
    if len(values) != 4:
        raise ValueError(f"{what} must be a list of 4 ints, got {values}")
    return [int(v) for v in values]


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """Every ``sizes`` window of the images, flattened into the depth of the result."""
    images = ops.convert_to_tensor(images, name="images")
    padding = padding.decode() if isinstance(padding, bytes) else str(padding)
    attrs = {
        "ksizes": _four(sizes, "sizes"),
        "strides": _four(strides, "strides"),
        "rates": _four(rates, "rates"),
        "padding": padding.upper(),
    }
    return make("ExtractImagePatches", [images], attrs, name=name or "ExtractImagePatches")


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None, name=None, sizes=None):
    """TF1's name for :func:`extract_patches` (``ksizes``, or ``sizes``)."""
    if ksizes is not None and sizes is not None:
        raise ValueError("Cannot specify both 'sizes' and 'ksizes'")
    return extract_patches(images, ksizes if ksizes is not None else sizes, strides, rates, padding, name=name)


# ------------------------------------------------------------------------------------- dtype and color
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts pixel values between dtypes, rescaling: floats are in [0, 1), integers span
    ``[0, dtype.max]`` (TensorFlow's rules: integer scaling by powers of two, ``x * (max + 0.5)``
    truncated from float)."""
    image = ops.convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if not (image.dtype.is_floating or image.dtype.is_integer):
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype == image.dtype:
        return array_ops.identity(image, name=name)
    with ops.name_scope(name, "convert_image", [image]) as scope:
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = image.dtype.max, dtype.max
            if scale_in > scale_out:
                scaled = math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1))
                if saturate:
                    return math_ops.saturate_cast(scaled, dtype, name=scope)
                return math_ops.cast(scaled, dtype, name=scope)
            cast = math_ops.saturate_cast(image, dtype) if saturate else math_ops.cast(image, dtype)
            return math_ops.multiply(cast, (scale_out + 1) // (scale_in + 1), name=scope)
        if image.dtype.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if image.dtype.is_integer:
            cast = math_ops.cast(image, dtype)
            return math_ops.multiply(cast, 1.0 / image.dtype.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        if saturate:
            return math_ops.saturate_cast(scaled, dtype, name=scope)
        return math_ops.cast(scaled, dtype, name=scope)


def _as_float(image):
    """Float16/float32 images as they are, others converted to float32 (the adjust ops' rule)."""
    if image.dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


def rgb_to_grayscale(images, name=None):
    """Luma of RGB images (``0.2989 R + 0.5870 G + 0.1140 B``), keeping a last dimension of 1."""
    with ops.name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = ops.convert_to_tensor(images, name="images")
        orig_dtype = images.dtype
        flt = convert_image_dtype(images, dtypes.float32)
        gray = math_ops.tensordot(flt, [0.2989, 0.5870, 0.1140], [-1, -1])
        gray = array_ops.expand_dims(gray, -1)
        return convert_image_dtype(gray, orig_dtype, name=scope)


def grayscale_to_rgb(images, name=None):
    """Repeats a single-channel image into three channels."""
    with ops.name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = ops.convert_to_tensor(images, name="images")
        shape = images.get_shape()
        if shape.ndims is not None:
            if shape.ndims < 2:
                raise ValueError(f"'image' (shape {shape}) must be at least two-dimensional.")
            if shape[-1] is not None and shape.as_list()[-1] != 1:
                raise ValueError(f"Last dimension of a grayscale image should be size 1, got {shape}.")
        rank_1 = array_ops.expand_dims(array_ops.rank(images) - 1, 0)
        multiples = array_ops.concat([array_ops.ones(rank_1, dtype=dtypes.int32), [3]], 0)
        rgb = array_ops.tile(images, multiples, name=scope)
        if shape.ndims is not None:
            rgb.set_shape(shape[:-1].concatenate([3]))
        return rgb


def rgb_to_hsv(images, name=None):
    """RGB to HSV for float images in [0, 1] (each of H, S, V in [0, 1])."""
    images = ops.convert_to_tensor(images, name="images")
    return make("RGBToHSV", [images], {}, name=name or "RGBToHSV")


def hsv_to_rgb(images, name=None):
    """HSV to RGB for float images."""
    images = ops.convert_to_tensor(images, name="images")
    return make("HSVToRGB", [images], {}, name=name or "HSVToRGB")


_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _color_matrix(images, matrix):
    images = ops.convert_to_tensor(images, name="images")
    kernel = ops.convert_to_tensor(np.asarray(matrix), dtype=images.dtype, name="kernel")
    ndims = images.get_shape().ndims
    return math_ops.tensordot(images, kernel, axes=[[ndims - 1], [0]])


def rgb_to_yiq(images):
    """RGB to YIQ for float images."""
    return _color_matrix(images, _RGB_TO_YIQ)


def yiq_to_rgb(images):
    """YIQ to RGB for float images."""
    return _color_matrix(images, _YIQ_TO_RGB)


def rgb_to_yuv(images):
    """RGB to YUV for float images."""
    return _color_matrix(images, _RGB_TO_YUV)


def yuv_to_rgb(images):
    """YUV to RGB for float images."""
    return _color_matrix(images, _YUV_TO_RGB)


def adjust_brightness(image, delta):
    """Adds ``delta`` to every pixel (in the [0, 1] float scale); integers saturate."""
    with ops.name_scope(None, "adjust_brightness", [image, delta]) as scope:
        image = ops.convert_to_tensor(image, name="image")
        orig_dtype = image.dtype
        flt = _as_float(image)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype), name=scope)
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """Moves each pixel away from (or towards) its image's per-channel mean by ``contrast_factor``."""
    with ops.name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        images = ops.convert_to_tensor(images, name="images")
        orig_dtype = images.dtype
        flt = _as_float(images)
        factor = ops.convert_to_tensor(contrast_factor, dtype=dtypes.float32, name="contrast_factor")
        adjusted = make("AdjustContrastv2", [flt, factor], {}, name=scope)
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """Gamma correction: ``gain * image ** gamma`` (in the [0, 1] float scale)."""
    with ops.name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = ops.convert_to_tensor(image, name="image")
        orig_dtype = image.dtype
        flt = _as_float(image)
        checks = _assert(gamma >= 0, ValueError, "Gamma should be a non-negative real number.")
        if checks:
            gamma = control_flow_ops.with_dependencies(checks, gamma)
        adjusted = gain * flt**gamma
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def adjust_hue(image, delta, name=None):
    """Rotates the hue of RGB images by ``delta`` (a fraction of a full turn, in [-1, 1])."""
    with ops.name_scope(name, "adjust_hue", [image]) as scope:
        image = ops.convert_to_tensor(image, name="image")
        orig_dtype = image.dtype
        flt = _as_float(image)
        delta = ops.convert_to_tensor(delta, dtype=dtypes.float32, name="delta")
        rotated = make("AdjustHue", [flt, delta], {}, name=scope)
        return convert_image_dtype(rotated, orig_dtype)


def adjust_saturation(image, saturation_factor, name=None):
    """Scales the saturation of RGB images by ``saturation_factor`` (clamped to [0, 1])."""
    with ops.name_scope(name, "adjust_saturation", [image]) as scope:
        image = ops.convert_to_tensor(image, name="image")
        orig_dtype = image.dtype
        flt = _as_float(image)
        factor = ops.convert_to_tensor(saturation_factor, dtype=dtypes.float32, name="saturation_factor")
        adjusted = make("AdjustSaturation", [flt, factor], {}, name=scope)
        return convert_image_dtype(adjusted, orig_dtype)


def random_brightness(image, max_delta, seed=None):
    """:func:`adjust_brightness` by a delta drawn uniformly from ``[-max_delta, max_delta)``."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def _check_range(lower, upper):
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def random_contrast(image, lower, upper, seed=None):
    """:func:`adjust_contrast` by a factor drawn uniformly from ``[lower, upper)``."""
    _check_range(lower, upper)
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)


def random_hue(image, max_delta, seed=None):
    """:func:`adjust_hue` by a delta drawn uniformly from ``[-max_delta, max_delta)`` (at most 0.5)."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed=None):
    """:func:`adjust_saturation` by a factor drawn uniformly from ``[lower, upper)``."""
    _check_range(lower, upper)
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_saturation(image, factor)


def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None):
    """Re-encodes the image as a JPEG of ``jpeg_quality`` and decodes it (JPEG artefacts as augmentation)."""
    from ferroflow.ops import image_codecs

    with ops.name_scope(name, "adjust_jpeg_quality", [image]):
        image = ops.convert_to_tensor(image, name="image")
        channels = image.get_shape().as_list()[-1]
        orig_dtype = image.dtype
        image = convert_image_dtype(image, dtypes.uint8, saturate=True)
        quality = ops.convert_to_tensor(jpeg_quality, dtype=dtypes.int32, name="jpeg_quality")
        encoded = make("EncodeJpegVariableQuality", [image, quality], {}, name="EncodeJpegVariableQuality")
        decoded = image_codecs.decode_jpeg(encoded, channels=channels, dct_method=dct_method)
        return convert_image_dtype(decoded, orig_dtype, saturate=True)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """:func:`adjust_jpeg_quality` with a quality drawn uniformly from ``[min, max)``."""
    if min(min_jpeg_quality, max_jpeg_quality) < 0 or max(min_jpeg_quality, max_jpeg_quality) > 100:
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_ops.random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed, dtype=dtypes.int32)
    return adjust_jpeg_quality(image, quality)


def per_image_standardization(image):
    """``(x - mean) / max(stddev, 1 / sqrt(num_pixels))`` per image; float32 result."""
    with ops.name_scope(None, "per_image_standardization", [image]) as scope:
        image = ops.convert_to_tensor(image, name="image")
        image = _with_3d_check(image)
        image = math_ops.cast(image, dtypes.float32)
        num_pixels = math_ops.reduce_prod(array_ops.shape(image)[-3:])
        mean = math_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        variance = math_ops.reduce_mean(math_ops.squared_difference(image, mean), axis=[-1, -2, -3], keepdims=True)
        stddev = math_ops.sqrt(variance)
        min_stddev = math_ops.rsqrt(math_ops.cast(num_pixels, dtypes.float32))
        adjusted_stddev = math_ops.maximum(stddev, min_stddev)
        return math_ops.divide(image - mean, adjusted_stddev, name=scope)


# ------------------------------------------------------------------------------------- analysis
def total_variation(images, name=None):
    """Sum of absolute differences of neighbouring pixels, per image."""
    with ops.name_scope(name, "total_variation", [images]):
        images = ops.convert_to_tensor(images, name="images")
        ndims = images.get_shape().ndims
        if ndims == 3:
            dif1 = images[1:, :, :] - images[:-1, :, :]
            dif2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return math_ops.reduce_sum(math_ops.abs(dif1), axis=axis) + math_ops.reduce_sum(math_ops.abs(dif2), axis=axis)


def image_gradients(image):
    """``(dy, dx)``: forward differences along height and width, zero in the last row / column."""
    if image.get_shape().ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.get_shape()}.")
    shape = array_ops.shape(image)
    batch, height, width, depth = array_ops.unstack(shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = array_ops.concat([dy, array_ops.zeros(array_ops.stack([batch, 1, width, depth]), image.dtype)], 1)
    dy = array_ops.reshape(dy, shape)
    dx = array_ops.concat([dx, array_ops.zeros(array_ops.stack([batch, height, 1, depth]), image.dtype)], 2)
    dx = array_ops.reshape(dx, shape)
    return dy, dx


def _per_channel_conv(images, kernels):
    """Convolves every channel of ``[batch, h, w, c]`` images on its own with each of ``kernels``
    (``[kh, kw, k]``, VALID): ``[batch, h', w', c, k]`` (a depthwise convolution, as channels folded
    into the batch)."""
    shape = array_ops.shape(images)
    planes = array_ops.reshape(array_ops.transpose(images, [0, 3, 1, 2]),
                               array_ops.stack([-1, shape[1], shape[2], 1]))
    kernels = array_ops.expand_dims(kernels, 2)  # [kh, kw, 1, k]
    out = nn_conv.conv2d(planes, kernels, [1, 1, 1, 1], "VALID")
    out_shape = array_ops.shape(out)
    out = array_ops.reshape(out, array_ops.stack([shape[0], shape[3], out_shape[1], out_shape[2], out_shape[3]]))
    return array_ops.transpose(out, [0, 2, 3, 1, 4])


def sobel_edges(image):
    """Sobel edge maps ``[batch, h, w, channels, 2]``: vertical (dy) then horizontal (dx) responses,
    with reflected borders."""
    image = ops.convert_to_tensor(image, name="image")
    static = image.get_shape()
    kernels = np.transpose(np.asarray([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]),
                           (1, 2, 0))
    padded = array_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = _per_channel_conv(padded, constant_op.constant(kernels, dtype=image.dtype))
    if static.ndims is not None:
        out.set_shape(static.concatenate([2]))
    return out


def _verify_compatible_image_shapes(img1, img2):
    shape1 = img1.get_shape().with_rank_at_least(3)
    shape2 = img2.get_shape().with_rank_at_least(3)
    shape1[-3:].assert_is_compatible_with(shape2[-3:])
    if shape1.ndims is not None and shape2.ndims is not None:
        for dim1, dim2 in zip(reversed(shape1.dims[:-3]), reversed(shape2.dims[:-3])):
            d1 = getattr(dim1, "value", dim1)
            d2 = getattr(dim2, "value", dim2)
            if not (d1 == 1 or d2 == 1 or TensorShape([d1]).is_compatible_with(TensorShape([d2]))):
                raise ValueError(f"Two images are not compatible: {shape1} and {shape2}")
    s1, s2 = array_ops.shape_n([img1, img2])
    checks = [control_flow_ops.Assert(math_ops.greater_equal(array_ops.size(s1), 3), [s1, s2], summarize=10),
              control_flow_ops.Assert(math_ops.reduce_all(math_ops.equal(s1[-3:], s2[-3:])), [s1, s2], summarize=10)]
    return s1, s2, checks


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio in dB between images, per image."""
    with ops.name_scope(name, "PSNR", [a, b]):
        a = ops.convert_to_tensor(a, name="a")
        b = ops.convert_to_tensor(b, name="b")
        max_val = math_ops.cast(max_val, a.dtype)
        max_val = convert_image_dtype(max_val, dtypes.float32)
        a = convert_image_dtype(a, dtypes.float32)
        b = convert_image_dtype(b, dtypes.float32)
        mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        value = math_ops.subtract(20 * math_ops.log(max_val) / math_ops.log(10.0),
                                  np.float32(10 / np.log(10)) * math_ops.log(mse), name="psnr")
        _, _, checks = _verify_compatible_image_shapes(a, b)
        with ops.control_dependencies(checks):
            return array_ops.identity(value)


def _gaussian_kernel(size, sigma):
    """The normalised ``size x size`` Gaussian window SSIM uses, as ``[size, size, 1]``."""
    size = ops.convert_to_tensor(size, dtypes.int32)
    sigma = ops.convert_to_tensor(sigma)
    coords = math_ops.cast(math_ops.range(size), sigma.dtype)
    coords -= math_ops.cast(size - 1, sigma.dtype) / 2.0
    g = math_ops.square(coords)
    g *= -0.5 / math_ops.square(sigma)
    g = array_ops.reshape(g, [1, -1]) + array_ops.reshape(g, [-1, 1])
    g = nn_ops.softmax(array_ops.reshape(g, [1, -1]))
    return array_ops.reshape(g, array_ops.stack([size, size, 1]))


def _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2, return_index_map=False):
    filter_size_t = constant_op.constant(filter_size, dtype=dtypes.int32)
    filter_sigma_t = constant_op.constant(filter_sigma, dtype=img1.dtype)
    shape1, shape2 = array_ops.shape_n([img1, img2])
    checks = [
        control_flow_ops.Assert(math_ops.reduce_all(math_ops.greater_equal(shape1[-3:-1], filter_size_t)),
                                [shape1, filter_size_t], summarize=8),
        control_flow_ops.Assert(math_ops.reduce_all(math_ops.greater_equal(shape2[-3:-1], filter_size_t)),
                                [shape2, filter_size_t], summarize=8),
    ]
    with ops.control_dependencies(checks):
        img1 = array_ops.identity(img1)
    kernel = _gaussian_kernel(filter_size_t, filter_sigma_t)

    def reducer(x):
        shape = array_ops.shape(x)
        x = array_ops.reshape(x, array_ops.concat([[-1], shape[-3:]], 0))
        y = _per_channel_conv(x, kernel)[..., 0]
        return array_ops.reshape(y, array_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))

    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0 = reducer(img1)
    mean1 = reducer(img2)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(img1 * img2) * 2.0
    den1 = reducer(math_ops.square(img1) + math_ops.square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if return_index_map:
        return luminance * cs, cs
    axes = constant_op.constant([-3, -2], dtype=dtypes.int32)
    return math_ops.reduce_mean(luminance * cs, axes), math_ops.reduce_mean(cs, axes)


def _ssim_inputs(img1, img2, max_val):
    img1 = ops.convert_to_tensor(img1, name="img1")
    img2 = ops.convert_to_tensor(img2, name="img2")
    shape1, shape2, checks = _verify_compatible_image_shapes(img1, img2)
    with ops.control_dependencies(checks):
        img1 = array_ops.identity(img1)
    max_val = convert_image_dtype(math_ops.cast(max_val, img1.dtype), dtypes.float32)
    return (convert_image_dtype(img1, dtypes.float32), convert_image_dtype(img2, dtypes.float32), max_val,
            shape1, shape2)


def _ssim_static_shape(img1, img2, window):
    """The static shape of an SSIM result: the broadcast batch dimensions, then (for an index map)
    the positions of the ``window``-sized filter."""
    s1, s2 = img1.get_shape(), img2.get_shape()
    if s1.ndims is None or s2.ndims is None:
        return TensorShape(None)
    heads = np.broadcast_shapes(*[tuple(1 if d is None else d for d in s.as_list()[:-3]) for s in (s1, s2)])
    unknown = any(d is None for s in (s1, s2) for d in s.as_list()[:-3])
    dims = [None] * len(heads) if unknown else list(heads)
    if window is not None:
        h, w = s1.as_list()[-3:-1]
        dims += [None if h is None else h - window + 1, None if w is None else w - window + 1]
    return TensorShape(dims)


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """Structural similarity of two (batches of) images, averaged over channels."""
    with ops.name_scope(None, "SSIM", [img1, img2]):
        img1, img2, max_val, _, _ = _ssim_inputs(img1, img2, max_val)
        per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2, return_index_map)
        out = math_ops.reduce_mean(per_channel, [-1])
        out.set_shape(_ssim_static_shape(img1, img2, filter_size if return_index_map else None))
        return out


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5, k1=0.01,
                    k2=0.03):
    """Multi-scale SSIM: contrast-structure at each of ``len(power_factors)`` halvings, SSIM at the
    coarsest, combined as a weighted geometric mean."""
    with ops.name_scope(None, "MS-SSIM", [img1, img2]):
        img1, img2, max_val, shape1, shape2 = _ssim_inputs(img1, img2, max_val)
        imgs = [img1, img2]
        heads = [s[:-3] for s in (shape1, shape2)]
        tails = [s[-3:] for s in (shape1, shape2)]
        divisor = [1, 2, 2, 1]
        divisor_tensor = constant_op.constant(divisor[1:], dtype=dtypes.int32)

        def do_pad(images, remainder):
            padding = array_ops.expand_dims(remainder, -1)
            padding = array_ops.pad(padding, [[1, 0], [1, 0]])
            return [array_ops.pad(x, padding, mode="SYMMETRIC") for x in images]

        mcs = []
        per_channel = None
        for k in range(len(power_factors)):
            with ops.name_scope(None, f"Scale{k}", imgs):
                if k > 0:
                    flat = [array_ops.reshape(x, array_ops.concat([[-1], t], 0)) for x, t in zip(imgs, tails)]
                    remainder = tails[0] % divisor_tensor
                    need_padding = math_ops.reduce_any(math_ops.not_equal(remainder, 0))
                    padded = cond_ops.cond(need_padding, lambda f=flat, r=remainder: do_pad(f, r), lambda f=flat: f)
                    down = [nn_conv.avg_pool(x, ksize=divisor, strides=divisor, padding="VALID") for x in padded]
                    tails = [x[1:] for x in array_ops.shape_n(down)]
                    imgs = [array_ops.reshape(x, array_ops.concat([h, t], 0)) for x, h, t in zip(down, heads, tails)]
                per_channel, cs = _ssim_per_channel(imgs[0], imgs[1], max_val, filter_size, filter_sigma, k1, k2)
                mcs.append(nn_ops.relu(cs))
        mcs.pop()
        stacked = array_ops.stack(mcs + [nn_ops.relu(per_channel)], axis=-1)
        weights = ops.convert_to_tensor(np.asarray(power_factors), dtype=stacked.dtype)
        ms_ssim = math_ops.reduce_prod(math_ops.pow(stacked, weights), [-1])
        out = math_ops.reduce_mean(ms_ssim, [-1])
        out.set_shape(_ssim_static_shape(img1, img2, None))
        return out
