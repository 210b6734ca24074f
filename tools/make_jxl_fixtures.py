"""Makes tests/fixtures/image_jxl/: small JPEG XL files and TensorFlow 2.21's
decodes of them (TensorFlow decodes JPEG XL with libjxl).

The files are encoded by libjxl's ``cjxl`` (Debian's ``libjxl-tools``:
``apt-get install libjxl-tools``) from synthetic PNGs Pillow writes, then
decoded by the real TensorFlow:

    /work/tfvenv/bin/python tools/make_jxl_fixtures.py

Writes the ``.jxl`` files, ``cases.json`` (per TensorFlow call: the file, the
op, its attributes, and the key of the expected array in ``expected.npz`` or
TF's error message) and ``expected.npz``.
"""

import io
import json
import os
import subprocess
import tempfile

import numpy as np
import tensorflow as tf
from PIL import Image

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "image_jxl")


def picture(h, w, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 255 * x / (w - 1)
    g = 255 * y / (h - 1)
    b = 128 + 100 * np.sin(x / 3.0) * np.cos(y / 5.0)
    a = 255 * (x + y) / (w + h - 2)
    img = np.stack([r, g, b, a], -1)
    img[..., :3] += rng.normal(0, 10, (h, w, 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def cjxl(png_bytes, *args, suffix=".png"):
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in" + suffix), os.path.join(d, "out.jxl")
        with open(src, "wb") as f:
            f.write(png_bytes)
        subprocess.run(["cjxl", src, dst, *args], check=True, capture_output=True)
        with open(dst, "rb") as f:
            return f.read()


def png(arr, mode):
    b = io.BytesIO()
    Image.fromarray(arr, mode).save(b, "PNG")
    return b.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    p = picture(21, 34, 0)
    sources = {
        "gray": png(p[..., 0], "L"),
        "gray_alpha": png(p[..., [0, 3]], "LA"),
        "rgb": png(p[..., :3], "RGB"),
        "rgba": png(p, "RGBA"),
    }
    files = {}
    for name, data in sources.items():
        files[f"{name}_lossless.jxl"] = cjxl(data, "-d", "0")
        files[f"{name}_d1.jxl"] = cjxl(data, "-d", "1")
    files["rgb_d3_effort7.jxl"] = cjxl(png(picture(40, 29, 1)[..., :3], "RGB"), "-d", "3", "-e", "7")
    rng = np.random.default_rng(2)
    frames = [Image.fromarray(rng.integers(0, 256, (10, 12, 3), dtype=np.uint8)) for _ in range(3)]
    gif = io.BytesIO()
    frames[0].save(gif, "GIF", save_all=True, append_images=frames[1:], duration=100)
    files["anim_lossless.jxl"] = cjxl(gif.getvalue(), "-d", "0", suffix=".gif")
    rgb = files["rgb_lossless.jxl"]
    files["trunc_rgb.jxl"] = rgb[: len(rgb) // 2]
    # libjxl reads a (nonsense) header from these bits, then fails on the frame.
    files["bad_header.jxl"] = b"\xff\x0a\xff\xff\xff\xff\xff\xff"
    files["short_header.jxl"] = b"\xff\x0a\x00"
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)

    calls = []
    for name in files:
        if name.startswith(("trunc", "bad", "short")):
            calls.append((name, "DecodeJxl", {}))
            continue
        calls.append((name, "DecodeJxl", {}))
        if name.startswith("rgb_") or name.startswith("gray_lossless"):
            for c in (1, 3, 4):
                calls.append((name, "DecodeJxl", {"channels": c}))
    calls += [
        ("rgb_lossless.jxl", "DecodeImage", {}),
        ("rgb_lossless.jxl", "DecodeImage", {"expand_animations": False}),
        ("rgb_lossless.jxl", "DecodeImage", {"dtype": "float32"}),
        ("rgb_lossless.jxl", "DecodePng", {}),
        ("rgb_lossless.jxl", "DecodeGif", {}),
        ("rgba_lossless.jxl", "DecodeGif", {}),
        ("gray_lossless.jxl", "DecodeBmp", {}),
        ("anim_lossless.jxl", "DecodeImage", {}),
    ]
    fns = {
        "DecodeJxl": tf.io.decode_jxl,
        "DecodeImage": tf.io.decode_image,
        "DecodePng": tf.io.decode_png,
        "DecodeGif": tf.io.decode_gif,
        "DecodeBmp": tf.io.decode_bmp,
    }
    cases, expected = [], {}
    for i, (name, op, attrs) in enumerate(calls):
        a = dict(attrs)
        if "dtype" in a:
            a["dtype"] = getattr(tf, a["dtype"])
        case = {"file": name, "op": op, "attrs": attrs}
        try:
            out = fns[op](files[name], **a).numpy()
            expected[f"case{i}"] = out
            case["expected"] = f"case{i}"
        except tf.errors.InvalidArgumentError as e:
            case["error"] = e.message.split(" [Op:")[0].split("}} ")[-1]
        cases.append(case)
    g = tf.Graph()
    with g.as_default():
        c = tf.compat.v1.placeholder(tf.string, [])
        shapes = {"DecodeJxl": tf.io.decode_jxl(c).shape.as_list(),
                  "DecodeJxl_channels3": tf.io.decode_jxl(c, channels=3).shape.as_list()}
    np.savez_compressed(os.path.join(OUT, "expected.npz"), **expected)
    with open(os.path.join(OUT, "cases.json"), "w") as fh:
        json.dump({"tensorflow": tf.__version__, "cases": cases, "static_shapes": shapes}, fh, indent=1)
    print(f"{len(cases)} cases, {len(expected)} arrays")


if __name__ == "__main__":
    main()
