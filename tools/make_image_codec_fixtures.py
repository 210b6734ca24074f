"""Makes tests/fixtures/image_codecs/: small JPEG, PNG, GIF and BMP files and
TensorFlow's decoded pixels for them.

Run with the real TensorFlow (and Pillow):

    /work/tfvenv/bin/python tools/make_image_codec_fixtures.py

Writes the image files, ``cases.json`` (one entry per decode: the file, the
TF op, its attributes and the key of the expected array) and
``expected.npz`` (TensorFlow's outputs), plus two larger JPEGs for
``benches/image_codecs.py``. The images are synthetic (smooth gradients,
edges and noise), so everything here is ours to ship.
"""

import io
import json
import os
import struct
import sys

import numpy as np
import tensorflow as tf
from PIL import Image

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "image_codecs")


def picture(h, w, seed=0):
    """A photo-like RGB image: gradients, a disc, stripes and some noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 255 * x / max(w - 1, 1)
    g = 255 * y / max(h - 1, 1)
    b = 128 + 100 * np.sin(x / 3.0) * np.cos(y / 5.0)
    disc = (x - w * 0.6) ** 2 + (y - h * 0.4) ** 2 < (min(h, w) * 0.25) ** 2
    r = np.where(disc, 250, r)
    g = np.where(disc, 30, g)
    img = np.stack([r, g, b], -1) + rng.normal(0, 12, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def save(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def pil_bytes(img, fmt, **kw):
    b = io.BytesIO()
    img.save(b, fmt, **kw)
    return b.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = []
    expected = {}

    def case(file, op, attrs, value, **extra):
        key = f"c{len(cases)}"
        expected[key] = np.asarray(value)
        cases.append({"file": file, "op": op, "attrs": attrs, "key": key, **extra})

    def try_case(file, op, attrs, fn):
        """A case whose TF result may be an error (recorded as such)."""
        try:
            v = fn()
        except tf.errors.InvalidArgumentError as e:
            cases.append({"file": file, "op": op, "attrs": attrs, "error": e.message.split("\n")[0]})
            return
        case(file, op, attrs, v)

    def err_case(file, op, attrs, fn):
        try:
            fn()
        except tf.errors.InvalidArgumentError as e:
            cases.append({"file": file, "op": op, "attrs": attrs, "error": e.message.split("\n")[0]})
            return
        raise AssertionError(f"{file} {op} {attrs} did not fail")

    h, w = 33, 47
    rgb = picture(h, w)
    pil = Image.fromarray(rgb)

    # ---------------------------------------------------------------- JPEG
    jpegs = {
        "444.jpg": pil_bytes(pil, "JPEG", quality=90, subsampling=0),
        "422.jpg": pil_bytes(pil, "JPEG", quality=90, subsampling=1),
        "420.jpg": pil_bytes(pil, "JPEG", quality=90, subsampling=2),
        "420_progressive.jpg": pil_bytes(pil, "JPEG", quality=85, subsampling=2, progressive=True),
        "444_progressive.jpg": pil_bytes(pil, "JPEG", quality=85, subsampling=0, progressive=True),
        "gray.jpg": pil_bytes(pil.convert("L"), "JPEG", quality=90),
        "tf_default.jpg": tf.io.encode_jpeg(rgb).numpy(),
        "cmyk.jpg": pil_bytes(pil.convert("CMYK"), "JPEG", quality=90),
    }
    for name, data in jpegs.items():
        save(name, data)
        case(name, "ExtractJpegShape", {}, tf.image.extract_jpeg_shape(data))
        for dct in ["", "INTEGER_FAST", "INTEGER_ACCURATE"]:
            for fancy in [True, False]:
                for ratio in [1, 2, 4, 8]:
                    if dct == "INTEGER_FAST" and (ratio != 1 or not fancy):
                        continue
                    attrs = {"dct_method": dct, "fancy_upscaling": fancy, "ratio": ratio}
                    case(name, "DecodeJpeg", attrs, tf.io.decode_jpeg(data, **attrs))
        for channels in [1, 3]:
            for dct in ["", "INTEGER_ACCURATE"]:
                attrs = {"channels": channels, "dct_method": dct}
                try_case(name, "DecodeJpeg", attrs, lambda a=attrs, d=data: tf.io.decode_jpeg(d, **a))
        case(name, "DecodeImage", {}, tf.io.decode_image(data))
    for name in ["444.jpg", "420.jpg", "420_progressive.jpg", "gray.jpg"]:
        data = jpegs[name]
        for window in [[0, 0, h, w], [3, 5, 20, 17], [10, 17, h - 10, w - 17], [h - 1, w - 1, 1, 1]]:
            for dct in ["", "INTEGER_ACCURATE"]:
                attrs = {"crop_window": window, "dct_method": dct}
                case(
                    name,
                    "DecodeAndCropJpeg",
                    attrs,
                    tf.image.decode_and_crop_jpeg(data, window, dct_method=dct),
                )
        err_case(
            name,
            "DecodeAndCropJpeg",
            {"crop_window": [h - 5, 0, 10, 10]},
            lambda d=data: tf.image.decode_and_crop_jpeg(d, [h - 5, 0, 10, 10]),
        )
    # Truncated JPEGs.
    for name in ["420.jpg", "420_progressive.jpg"]:
        data = jpegs[name]
        cut = f"trunc_{name}"
        save(cut, data[: len(data) * 2 // 3])
        short = data[: len(data) * 2 // 3]
        try_case(
            cut,
            "DecodeJpeg",
            {"try_recover_truncated": True},
            lambda s=short: tf.io.decode_jpeg(s, try_recover_truncated=True),
        )
        for frac in [0.1, 0.5]:
            try:
                v = tf.io.decode_jpeg(short, acceptable_fraction=frac)
                case(cut, "DecodeJpeg", {"acceptable_fraction": frac}, v)
            except tf.errors.InvalidArgumentError as e:
                cases.append(
                    {"file": cut, "op": "DecodeJpeg", "attrs": {"acceptable_fraction": frac}, "error": e.message}
                )
        err_case(cut, "DecodeJpeg", {}, lambda s=short: tf.io.decode_jpeg(s))

    # ----------------------------------------------------------------- PNG
    rgba = np.dstack([rgb, (np.arange(h * w).reshape(h, w) * 7 % 256).astype(np.uint8)])
    rgb16 = (rgb.astype(np.uint16) * 257 + np.arange(h * w * 3).reshape(h, w, 3).astype(np.uint16) % 251).astype(
        np.uint16
    )
    pal = pil.quantize(16)
    pal_trns = pal.copy()
    pal_trns.info["transparency"] = 3
    pngs = {
        "rgb8.png": tf.io.encode_png(rgb).numpy(),
        "rgba8.png": tf.io.encode_png(rgba).numpy(),
        "gray8.png": tf.io.encode_png(rgb[:, :, :1]).numpy(),
        "ga8.png": tf.io.encode_png(rgba[:, :, 2:]).numpy(),
        "rgb16.png": tf.io.encode_png(rgb16).numpy(),
        "gray16.png": tf.io.encode_png(rgb16[:, :, 1:2]).numpy(),
        "palette.png": pil_bytes(pal, "PNG"),
        "palette_trns.png": pil_bytes(pal_trns, "PNG", transparency=3),
        "gray1bit.png": pil_bytes(pil.convert("1"), "PNG"),
        "rgb_interlaced.png": pil_bytes(pil, "PNG", interlace=1) if False else pil_bytes(pil, "PNG"),
    }
    for name, data in pngs.items():
        save(name, data)
        for channels in [0, 1, 3, 4]:
            for dtype in [tf.uint8, tf.uint16]:
                attrs = {"channels": channels, "dtype": dtype.name}
                case(name, "DecodePng", attrs, tf.io.decode_png(data, channels=channels, dtype=dtype))
        case(name, "DecodeImage", {"dtype": "float32"}, tf.io.decode_image(data, dtype=tf.float32))

    # ----------------------------------------------------------------- GIF
    frames = []
    for k in range(3):
        f = picture(h, w, seed=k + 1)
        frames.append(Image.fromarray(f).quantize(32))
    # Frame 2 changes only a box (Pillow stores a sub-rectangle), frame 3 is
    # mostly transparent.
    gif = io.BytesIO()
    base = Image.fromarray(picture(h, w, seed=1)).quantize(32, dither=Image.Dither.NONE)
    f2 = base.copy()
    f2.paste(5, (10, 8, 30, 25))
    f3 = base.copy()
    f3.paste(7, (40, 30, 55, 40))
    base.save(gif, "GIF", save_all=True, append_images=[f2, f3], transparency=0, disposal=1, optimize=False)
    gif_bytes = gif.getvalue()
    save("anim.gif", gif_bytes)
    case("anim.gif", "DecodeGif", {}, tf.io.decode_gif(gif_bytes))
    case("anim.gif", "DecodeImage", {"expand_animations": False}, tf.io.decode_image(gif_bytes, expand_animations=False))
    case("anim.gif", "DecodeImage", {}, tf.io.decode_image(gif_bytes))
    one = pil_bytes(frames[0], "GIF")
    save("single.gif", one)
    case("single.gif", "DecodeGif", {}, tf.io.decode_gif(one))
    case("single.gif", "DecodePng", {}, tf.io.decode_png(one))
    # A frame smaller than the screen, at an offset, with a transparent
    # index, written by hand.
    offset_gif = hand_gif()
    save("offset.gif", offset_gif)
    case("offset.gif", "DecodeGif", {}, tf.io.decode_gif(offset_gif))

    # ----------------------------------------------------------------- BMP
    rgba_pil = Image.fromarray(rgba, "RGBA")
    bmps = {
        "rgb24.bmp": pil_bytes(pil, "BMP"),
        "rgba32.bmp": pil_bytes(rgba_pil, "BMP"),
        "rgb24_topdown.bmp": top_down(pil_bytes(pil, "BMP")),
        "gray8.bmp": pil_bytes(pil.convert("L"), "BMP"),
    }
    for name, data in bmps.items():
        save(name, data)
        for channels in [0, 3, 4]:
            try:
                v = tf.io.decode_bmp(data, channels=channels)
            except tf.errors.InvalidArgumentError as e:
                cases.append({"file": name, "op": "DecodeBmp", "attrs": {"channels": channels}, "error": e.message})
                continue
            case(name, "DecodeBmp", {"channels": channels}, v)
        # (TF 2.21 crashes decoding a top-down BMP to a dtype other than
        # uint8: it sizes a buffer with the negative height.)
        dtype = "uint8" if "topdown" in name else "uint16"
        case(name, "DecodeImage", {"dtype": dtype}, tf.io.decode_image(data, dtype=dtype))

    # ----------------------------------------------------- benchmark inputs
    for bh, bw, q in [(224, 224, 90), (768, 1024, 90)]:
        save(f"bench_{bw}x{bh}.jpg", tf.io.encode_jpeg(picture(bh, bw, seed=7), quality=q).numpy())

    np.savez_compressed(os.path.join(OUT, "expected.npz"), **expected)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": cases}, f, indent=0)
    print(f"{len(cases)} cases, TF {tf.__version__}", file=sys.stderr)


def top_down(bmp):
    """Rewrites a bottom-up BMP as top-down (negative height, rows reversed)."""
    off = struct.unpack_from("<i", bmp, 10)[0]
    w, h = struct.unpack_from("<ii", bmp, 18)
    bpp = struct.unpack_from("<h", bmp, 28)[0]
    row = (bpp // 8 * w + 3) // 4 * 4
    rows = [bmp[off + i * row : off + (i + 1) * row] for i in range(h)]
    out = bytearray(bmp[:off]) + b"".join(reversed(rows))
    struct.pack_into("<i", out, 22, -h)
    return bytes(out)


def hand_gif():
    """A 6x5 GIF: frame 1 fills the screen; frame 2 is a 3x2 box at (2, 1)
    using a local color table and transparent index 1."""
    img1 = Image.new("P", (6, 5))
    img1.putpalette([10, 20, 30, 200, 100, 50, 0, 255, 0, 255, 255, 255] + [0] * (252 * 3))
    img1.putdata([0, 1, 2, 3, 0, 1] * 5)
    b1 = pil_bytes(img1, "GIF")
    img2 = Image.new("P", (3, 2))
    img2.putpalette([90, 90, 90, 1, 2, 3, 250, 0, 250, 7, 7, 7] + [0] * (252 * 3))
    img2.putdata([0, 1, 2, 1, 2, 0])
    b2 = pil_bytes(img2, "GIF", transparency=1)
    # Take frame 2's image block (with its local table) out of its own file.
    frame2 = gif_image_block(b2, local=True)
    # GCE with transparency index 1.
    gce = bytes([0x21, 0xF9, 4, 1, 0, 0, 1, 0])
    body = b1[:-1]  # drop the trailer
    return body + gce + frame2 + b"\x3b"


def gif_image_block(data, local):
    """The image descriptor + data of the first frame of a single-frame GIF,
    moved to (2, 1) and given the file's global table as a local one."""
    flags = data[10]
    gct = 3 * (2 ** ((flags & 7) + 1)) if flags & 0x80 else 0
    table = data[13 : 13 + gct]
    i = 13 + gct
    while data[i] == 0x21:  # skip extensions
        i += 2
        while data[i]:
            i += data[i] + 1
        i += 1
    assert data[i] == 0x2C
    desc = bytearray(data[i : i + 10])
    struct.pack_into("<HH", desc, 1, 2, 1)
    desc[9] = 0x80 | (flags & 7) if local else 0
    j = i + 10
    if data[i + 9] & 0x80:
        j += 3 * (2 ** ((data[i + 9] & 7) + 1))
    k = j + 1
    while data[k]:
        k += data[k] + 1
    return bytes(desc) + table + data[j : k + 1]


if __name__ == "__main__":
    main()
