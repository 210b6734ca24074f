"""Makes tests/fixtures/image_webp/: small WebP files (still and animated,
lossless and lossy, with and without alpha) and TensorFlow 2.21's decodes
of them.

Run with the real TensorFlow and Pillow (Pillow encodes the files with its
bundled libwebp):

    /work/tfvenv/bin/python tools/make_webp_fixtures.py

Writes the files, ``cases.json`` (per TensorFlow call: the file, the op, its
attributes, and the key of the expected array in ``expected.npz`` or TF's
error message) and ``expected.npz``. One animation (RGB frames, no alpha
flag) crashes TensorFlow 2.21's kernel (it sizes the output for 3 channels
and copies 4), so its frames are taken from Pillow instead, which decodes
animations with the same libwebp animation decoder; that case says so
(``reference: "pillow"``). Every picture is synthetic, ours to ship.
"""

import io
import json
import os
import sys

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "image_webp")


def picture(h, w, seed=0, alpha=False):
    """Gradients, a disc, stripes and noise; alpha a ramp with holes."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 255 * x / max(w - 1, 1)
    g = 255 * y / max(h - 1, 1)
    b = 128 + 100 * np.sin(x / 3.0 + seed) * np.cos(y / 5.0)
    disc = (x - w * 0.6) ** 2 + (y - h * 0.4) ** 2 < (min(h, w) * 0.25) ** 2
    r = np.where(disc, 250, r)
    g = np.where(disc, 30, g)
    chans = [r, g, b]
    if alpha:
        a = 255 * (x + y) / (w + h - 2)
        a = np.where((x.astype(int) + y.astype(int)) % 7 == 0, 0, a)
        a = np.where(disc, 255, a)
        chans.append(a)
    img = np.stack(chans, -1)
    img[..., :3] += rng.normal(0, 12, (h, w, 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def encode(arr_or_frames, **kw):
    b = io.BytesIO()
    if isinstance(arr_or_frames, list):
        ims = [Image.fromarray(a) for a in arr_or_frames]
        ims[0].save(b, "WEBP", save_all=True, append_images=ims[1:], **kw)
    else:
        Image.fromarray(arr_or_frames).save(b, "WEBP", **kw)
    return b.getvalue()


def moving_frames(n, h, w, alpha, seed):
    """Frames where a patch moves over a still background, so the encoder
    writes sub-rectangles with blending and disposal."""
    base = picture(h, w, seed, alpha)
    rng = np.random.default_rng(seed + 1)
    frames = []
    for k in range(n):
        f = base.copy()
        y0, x0 = 2 + 3 * k, 1 + 4 * k
        f[y0:y0 + 6, x0:x0 + 7, :3] = rng.integers(0, 256, (6, 7, 3), dtype=np.uint8)
        if alpha:
            f[y0:y0 + 6, x0:x0 + 7, 3] = rng.choice([0, 40, 128, 255], (6, 7))
        frames.append(f)
    return frames


FILES = {}


def make_files():
    FILES["lossless_rgb.webp"] = encode(picture(13, 17, 1), lossless=True)
    FILES["lossless_rgba.webp"] = encode(picture(15, 11, 2, alpha=True), lossless=True, exact=True)
    FILES["lossy_rgb.webp"] = encode(picture(33, 47, 3), quality=80)
    FILES["lossy_rgb_q30.webp"] = encode(picture(31, 20, 4), quality=30, method=6)
    FILES["lossy_rgba.webp"] = encode(picture(26, 19, 5, alpha=True), quality=75)
    FILES["anim_rgba_lossless.webp"] = encode(
        moving_frames(4, 24, 30, True, 6), lossless=True, exact=True, duration=50)
    FILES["anim_rgba_lossy.webp"] = encode(moving_frames(3, 20, 26, True, 7), quality=70, duration=50)
    FILES["anim_rgba_mixed.webp"] = encode(
        moving_frames(3, 18, 22, True, 8), allow_mixed=True, quality=60, duration=50)
    # RGB frames over a still background: the encoder still sets the alpha
    # flag (its sub-rectangles need transparency), so TF decodes it.
    FILES["anim_rgb_moving.webp"] = encode(moving_frames(3, 16, 20, False, 9), lossless=True, duration=50)
    # Wholly different RGB frames: no alpha flag (the case TF 2.21 crashes on).
    rng = np.random.default_rng(10)
    FILES["anim_rgb.webp"] = encode([rng.integers(0, 256, (6, 8, 3), dtype=np.uint8) for _ in range(3)],
                                    lossless=True, duration=50)
    lossless = FILES["lossless_rgb.webp"]
    FILES["trunc_lossless.webp"] = lossless[: len(lossless) * 2 // 3]
    FILES["trunc_lossy.webp"] = FILES["lossy_rgb.webp"][:60]
    FILES["bad_header.webp"] = b"RIFF\x20\x00\x00\x00WEBPVP8Z" + bytes(20)
    FILES["riff_only.webp"] = lossless[:12]
    for name, data in FILES.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


# (file, op, attrs)
CALLS = []
for f in ["lossless_rgb.webp", "lossy_rgb.webp", "lossy_rgb_q30.webp"]:
    CALLS += [(f, "DecodeWebP", {}), (f, "DecodeWebP", {"channels": 3}), (f, "DecodeWebP", {"channels": 4})]
for f in ["lossless_rgba.webp", "lossy_rgba.webp"]:
    CALLS += [(f, "DecodeWebP", {}), (f, "DecodeWebP", {"channels": 4}), (f, "DecodeWebP", {"channels": 3})]
CALLS += [
    ("lossless_rgb.webp", "DecodeWebP", {"channels": 1}),
    ("lossless_rgb.webp", "DecodeImage", {}),
    ("lossless_rgb.webp", "DecodeImage", {"expand_animations": False}),
    ("lossless_rgb.webp", "DecodeImage", {"channels": 3}),
    ("lossless_rgb.webp", "DecodeImage", {"dtype": "float32"}),
    ("lossless_rgb.webp", "DecodePng", {}),
    ("lossless_rgb.webp", "DecodePng", {"dtype": "uint16"}),
    ("lossless_rgb.webp", "DecodeJpeg", {}),
    ("lossless_rgb.webp", "DecodeGif", {}),
    ("lossless_rgb.webp", "DecodeBmp", {}),
    ("lossless_rgba.webp", "DecodeGif", {}),
    ("lossless_rgba.webp", "DecodeImage", {"expand_animations": False}),
    ("trunc_lossless.webp", "DecodeWebP", {}),
    ("trunc_lossy.webp", "DecodeWebP", {}),
    ("bad_header.webp", "DecodeWebP", {}),
    ("riff_only.webp", "DecodeWebP", {}),
]
for f in ["anim_rgba_lossless.webp", "anim_rgba_lossy.webp", "anim_rgba_mixed.webp", "anim_rgb_moving.webp"]:
    CALLS += [
        (f, "DecodeWebP", {}),
        (f, "DecodeWebP", {"channels": 3}),
        (f, "DecodeImage", {"expand_animations": False}),
        (f, "DecodeWebP", {"channels": 4}),
        (f, "DecodeImage", {}),
    ]


def tf_call(tf, data, op, attrs):
    a = dict(attrs)
    if "dtype" in a:
        a["dtype"] = getattr(tf, a["dtype"])
    fn = {
        "DecodeWebP": tf.io.decode_webp,
        "DecodeImage": tf.io.decode_image,
        "DecodePng": tf.io.decode_png,
        "DecodeJpeg": tf.io.decode_jpeg,
        "DecodeBmp": tf.io.decode_bmp,
        "DecodeGif": tf.io.decode_gif,
    }[op]
    return fn(data, **a).numpy()


def run_tf():
    import tensorflow as tf

    cases, expected = [], {}
    for i, (f, op, attrs) in enumerate(CALLS):
        case = {"file": f, "op": op, "attrs": attrs}
        try:
            out = tf_call(tf, FILES[f], op, attrs)
            key = f"case{i}"
            expected[key] = out
            case["expected"] = key
        except tf.errors.InvalidArgumentError as e:
            case["error"] = e.message.split(" [Op:")[0].split("}} ")[-1]
        cases.append(case)
    # The RGB animation crashes TF 2.21's kernel: frames from Pillow (libwebp's
    # WebPAnimDecoder) instead, in a case marked as such.
    im = Image.open(io.BytesIO(FILES["anim_rgb.webp"]))
    frames = []
    for k in range(im.n_frames):
        im.seek(k)
        frames.append(np.asarray(im.convert("RGBA")))
    expected["anim_rgb_pillow"] = np.stack(frames)
    cases.append({"file": "anim_rgb.webp", "op": "DecodeWebP", "attrs": {},
                  "expected": "anim_rgb_pillow", "reference": "pillow"})
    assert FILES["anim_rgb.webp"][20] & 0x10 == 0, "anim_rgb.webp should have no alpha flag"
    for attrs in ({"channels": 3}, {"channels": 4}):
        try:
            tf_call(tf, FILES["anim_rgb.webp"], "DecodeWebP", attrs)
            raise AssertionError("expected an error")
        except tf.errors.InvalidArgumentError as e:
            cases.append({"file": "anim_rgb.webp", "op": "DecodeWebP", "attrs": attrs,
                          "error": e.message.split(" [Op:")[0].split("}} ")[-1]})
    # Static shapes of the graph ops.
    shapes = {}
    g = tf.Graph()
    with g.as_default():
        c = tf.compat.v1.placeholder(tf.string, [])
        shapes["DecodeWebP"] = tf.io.decode_webp(c).shape.as_list()
        shapes["DecodeWebP_channels4"] = tf.io.decode_webp(c, channels=4).shape.as_list()
    np.savez_compressed(os.path.join(OUT, "expected.npz"), **expected)
    with open(os.path.join(OUT, "cases.json"), "w") as fh:
        json.dump({"tensorflow": tf.__version__, "cases": cases, "static_shapes": shapes}, fh, indent=1)
    print(f"{len(cases)} cases, {len(expected)} arrays")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    make_files()
    run_tf()
    sys.exit(0)
