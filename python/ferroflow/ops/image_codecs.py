"""Image codecs: ``tf.io.decode_jpeg``, ``encode_png``, ``decode_image``, ...

Thin wrappers over the Rust kernels (``crates/image/src/codec_ops.rs``),
with TensorFlow's argument names and defaults. As in TensorFlow 2.x, every
``decode_*`` op sniffs its input and decodes any of JPEG, PNG and GIF
(``decode_png`` of a JPEG works); ``decode_bmp`` decodes only BMPs. A WebP
decodes through any of them, to ``[frames, height, width, channels]``, and a
JPEG XL to its first frame, ``[height, width, channels]``.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops import math_ops
from ferroflow.ops._op_util import make, type_attr

__all__ = [
    "decode_and_crop_jpeg",
    "decode_bmp",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_jxl",
    "decode_png",
    "decode_webp",
    "encode_jpeg",
    "encode_png",
    "extract_jpeg_shape",
    "is_jpeg",
]


def _contents(contents):
    return ops.convert_to_tensor(contents, dtype=dtypes.string, name="contents")


def _jpeg_attrs(channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method):
    return {
        "channels": int(channels),
        "ratio": int(ratio),
        "fancy_upscaling": bool(fancy_upscaling),
        "try_recover_truncated": bool(try_recover_truncated),
        "acceptable_fraction": float(acceptable_fraction),
        "dct_method": str(dct_method),
    }


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """Decodes a JPEG (or PNG/GIF) to a uint8 ``[height, width, channels]`` tensor.

    ``dct_method`` ``""`` is TensorFlow's default, ``"INTEGER_FAST"``;
    ``"INTEGER_ACCURATE"`` is libjpeg's slow, exact integer IDCT.
    """
    attrs = _jpeg_attrs(channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method)
    return make("DecodeJpeg", [_contents(contents)], attrs, name=name or "DecodeJpeg")


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """Decodes only the ``crop_window`` (``[y, x, height, width]``, int32) of a JPEG."""
    attrs = _jpeg_attrs(channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method)
    crop_window = ops.convert_to_tensor(crop_window, dtype=dtypes.int32, name="crop_window")
    return make("DecodeAndCropJpeg", [_contents(contents), crop_window], attrs, name=name or "DecodeAndCropJpeg")


def extract_jpeg_shape(contents, output_type=dtypes.int32, name=None):
    """The ``[height, width, channels]`` of a JPEG, read from its header."""
    return make("ExtractJpegShape", [_contents(contents)], {"output_type": type_attr(output_type)},
                name=name or "ExtractJpegShape")


def is_jpeg(contents, name=None):
    """A bool tensor: whether ``contents`` starts with JPEG's ``\\xff\\xd8\\xff``."""
    with ops.name_scope(name or "is_jpeg"):
        contents = _contents(contents)
        start = make("Substr", [contents, ops.convert_to_tensor(0, dtype=dtypes.int32),
                                ops.convert_to_tensor(3, dtype=dtypes.int32)], {"unit": "BYTE"}, name="Substr")
        return math_ops.equal(start, ops.convert_to_tensor(b"\xff\xd8\xff", dtype=dtypes.string))


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """Encodes a uint8 ``[height, width, 1 or 3]`` image as a JPEG string."""
    image = ops.convert_to_tensor(image, dtype=dtypes.uint8, name="image")
    if isinstance(xmp_metadata, str):
        xmp_metadata = xmp_metadata.encode("utf-8")
    attrs = {
        "format": str(format),
        "quality": int(quality),
        "progressive": bool(progressive),
        "optimize_size": bool(optimize_size),
        "chroma_downsampling": bool(chroma_downsampling),
        "density_unit": str(density_unit),
        "x_density": int(x_density),
        "y_density": int(y_density),
        "xmp_metadata": bytes(xmp_metadata),
    }
    if attrs["format"] not in ("", "grayscale", "rgb"):
        raise ValueError(f"format must be one of '', 'grayscale', 'rgb', got {format!r}")
    if attrs["density_unit"] not in ("in", "cm"):
        raise ValueError(f"density_unit must be 'in' or 'cm', got {density_unit!r}")
    return make("EncodeJpeg", [image], attrs, name=name or "EncodeJpeg")


def encode_png(image, compression=-1, name=None):
    """Encodes a uint8 or uint16 ``[..., height, width, channels]`` image as PNG string(s)."""
    image = ops.convert_to_tensor(image, name="image")
    if image.dtype.base_dtype not in (dtypes.uint8, dtypes.uint16):
        image = ops.convert_to_tensor(image, dtype=dtypes.uint8)
    return make("EncodePng", [image], {"compression": int(compression), "T": type_attr(image.dtype.base_dtype)},
                name=name or "EncodePng")


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """Decodes a PNG (or JPEG/GIF) to a ``[height, width, channels]`` uint8 or uint16 tensor."""
    return make("DecodePng", [_contents(contents)], {"channels": int(channels), "dtype": type_attr(dtype)},
                name=name or "DecodePng")


def decode_gif(contents, name=None):
    """Decodes every frame of a GIF to a uint8 ``[num_frames, height, width, 3]`` tensor."""
    return make("DecodeGif", [_contents(contents)], {}, name=name or "DecodeGif")


def decode_bmp(contents, channels=0, name=None):
    """Decodes a BMP (8-, 24- or 32-bit, uncompressed) to a uint8 tensor."""
    return make("DecodeBmp", [_contents(contents)], {"channels": int(channels)}, name=name or "DecodeBmp")


def decode_webp(contents, channels=0, dtype=dtypes.uint8, name=None):
    """Decodes a WebP to a uint8 ``[num_frames, height, width, channels]`` tensor.

    ``channels`` is 0 (the file's own: 3, or 4 with alpha) or must equal the
    file's; animations decode to RGBA frames composited on the canvas.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.uint8:
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed "
                        "values: uint8")
    return make("DecodeWebP", [_contents(contents)], {"channels": int(channels), "dtype": type_attr(dtype)},
                name=name or "DecodeWebP")


def decode_jxl(contents, channels=0, dtype=dtypes.uint8, name=None):
    """Decodes a JPEG XL to a uint8 ``[height, width, channels]`` tensor (its first frame).

    ``channels`` is 0 (the file's own: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA)
    or must equal the file's.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.uint8:
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed "
                        "values: uint8")
    return make("DecodeJxl", [_contents(contents)], {"channels": int(channels), "dtype": type_attr(dtype)},
                name=name or "DecodeJxl")


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """Decodes a BMP, GIF, JPEG, JPEG XL, PNG or WebP, chosen by its first bytes (TF1 signature).

    GIFs give ``[num_frames, height, width, 3]`` and WebPs ``[num_frames,
    height, width, channels]`` unless ``expand_animations`` is False (then
    only the first frame); the rest ``[height, width, channels]``. The op decodes to uint8, uint16 or float32 (TensorFlow's
    scaling); other dtypes go through ``convert_image_dtype`` from uint16.
    """
    dtype = dtypes.as_dtype(dtype)
    attrs = {
        "channels": 0 if channels is None else int(channels),
        "expand_animations": bool(expand_animations),
    }
    contents = _contents(contents)
    if dtype in (dtypes.uint8, dtypes.uint16, dtypes.float32):
        attrs["dtype"] = type_attr(dtype)
        return make("DecodeImage", [contents], attrs, name=name or "decode_image")
    from ferroflow.ops.image_ops import convert_image_dtype

    with ops.name_scope(name or "decode_image"):
        attrs["dtype"] = type_attr(dtypes.uint16)
        return convert_image_dtype(make("DecodeImage", [contents], attrs, name="DecodeImage"), dtype)
