"""The random ops of tf.image (random_crop, random_flip_*, random_brightness/contrast/hue/saturation,
sample_distorted_bounding_box). These tests check what each op promises rather than golden values
(sample_distorted_bounding_box's seeded boxes are TF's bit for bit since 4559cdf: its Rust test and
tests/programs/inception_preprocessing.py compare them with TF 2.21's): shapes and dtypes, that every
output is one the op may produce (a window of the input, a flip or the identity, an adjustment by a
factor inside the range, a box obeying the constraints), that graph and op seeds make the values
reproducible across graphs and sessions, that different seeds give different values, and that
successive runs draw new values.
"""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

import ferroflow as tf

RUNS = 24


def _image(shape, seed=0):
    """Float32 values in [0, 1), all distinct (so a window of it is found in one place only)."""
    rng = np.random.RandomState(seed)
    n = int(np.prod(shape))
    return ((rng.permutation(n) + 0.5) / n).astype(np.float32).reshape(shape)


def _draws(build, runs=RUNS, graph_seed=None):
    """Builds ``build()`` -> (fetches, feed) in a fresh graph, runs it ``runs`` times in one session."""
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        fetches, feed = build()
        with tf.Session(graph=g) as sess:
            return [sess.run(fetches, feed_dict=feed) for _ in range(runs)]


def _same(a, b):
    if isinstance(a, dict):
        return sorted(a) == sorted(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a, b)


# -- seeds: one table of builders, each taking the op seed -----------------------------------------

_X = _image((6, 8, 3), seed=1)
_XB = _image((4, 5, 7, 3), seed=2)
_X8 = (np.random.RandomState(3).randint(0, 256, (6, 8, 3))).astype(np.uint8)
_OBJECT = np.array([[[0.1, 0.2, 0.6, 0.7]]], np.float32)

SEEDED = {
    "random_crop": lambda seed: tf.image.random_crop(tf.constant(_X), [3, 5, 3], seed=seed),
    "random_flip_left_right": lambda seed: tf.image.random_flip_left_right(tf.constant(_XB), seed=seed),
    "random_flip_up_down": lambda seed: tf.image.random_flip_up_down(tf.constant(_XB), seed=seed),
    "random_brightness": lambda seed: tf.image.random_brightness(tf.constant(_X), 0.3, seed=seed),
    "random_contrast": lambda seed: tf.image.random_contrast(tf.constant(_X), 0.2, 1.8, seed=seed),
    "random_hue": lambda seed: tf.image.random_hue(tf.constant(_X), 0.4, seed=seed),
    "random_saturation": lambda seed: tf.image.random_saturation(tf.constant(_X), 0.1, 2.0, seed=seed),
    "sample_distorted_bounding_box": lambda seed: tf.image.sample_distorted_bounding_box(
        [40, 60, 3], _OBJECT, seed=seed, min_object_covered=0.2, area_range=(0.05, 1.0)
    ),
}


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_graph_and_op_seed_reproduce_across_graphs_and_sessions(name):
    def build():
        return SEEDED[name](5), {}

    first = _draws(build, runs=6, graph_seed=11)
    again = _draws(build, runs=6, graph_seed=11)
    assert _same(first, again), f"{name}: the same graph and op seeds gave different values"


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_op_seed_alone_reproduces(name):
    """An op seed without a graph seed is reproducible too (TF1 fills in a default graph seed)."""

    def build():
        return SEEDED[name](5), {}

    assert _same(_draws(build, runs=6), _draws(build, runs=6))


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_different_seeds_and_successive_runs_differ(name):
    def build(seed):
        return lambda: (SEEDED[name](seed), {})

    a = _draws(build(5), runs=8, graph_seed=11)
    b = _draws(build(6), runs=8, graph_seed=11)
    c = _draws(build(5), runs=8, graph_seed=12)
    assert not _same(a, b), f"{name}: op seeds 5 and 6 gave the same {len(a)} draws"
    if name == "sample_distorted_bounding_box":
        # TF1's sample_distorted_bounding_box hands seed/seed2 to the op as they are: the graph
        # seed plays no part (test_seed2_of_sample_distorted_bounding_box).
        assert _same(a, c), f"{name}: the graph seed changed the draws"
    else:
        assert not _same(a, c), f"{name}: graph seeds 11 and 12 gave the same {len(a)} draws"
    assert any(not _same(a[0], v) for v in a[1:]), f"{name}: every run of one session drew the same value"


def test_seed2_of_sample_distorted_bounding_box():
    """TF1's sample_distorted_bounding_box takes the two seeds itself (seed, seed2, both given to the
    op unchanged; the graph seed is not used)."""

    def build(seed2):
        return lambda: (
            tf.image.sample_distorted_bounding_box(
                [40, 60, 3], _OBJECT, seed=3, seed2=seed2, area_range=(0.05, 1.0)
            ),
            {},
        )

    assert _same(_draws(build(4), runs=6), _draws(build(4), runs=6))
    assert not _same(_draws(build(4), runs=8), _draws(build(9), runs=8))


# -- random_crop ----------------------------------------------------------------------------------


def _find_window(x, w):
    """Offsets where ``w`` sits inside ``x`` (every dim), or None."""
    for off in np.ndindex(*[a - b + 1 for a, b in zip(x.shape, w.shape)]):
        sl = tuple(slice(o, o + s) for o, s in zip(off, w.shape))
        if np.array_equal(x[sl], w):
            return off
    return None


@pytest.mark.parametrize(
    "shape,size",
    [((6, 8, 3), [3, 5, 3]), ((6, 8, 3), [6, 1, 3]), ((4, 5, 7, 3), [2, 3, 4, 3]), ((6, 8, 3), [6, 8, 3])],
)
def test_random_crop_is_a_window(shape, size):
    x = _image(shape, seed=4)
    crops = {}

    def build():
        out = tf.image.random_crop(tf.constant(x), size, seed=1)
        crops["static"] = out.shape.as_list()
        return out, {}

    draws = _draws(build, graph_seed=2)
    assert crops["static"] == list(size)
    offsets = set()
    for w in draws:
        assert w.shape == tuple(size) and w.dtype == np.float32
        off = _find_window(x, w)
        assert off is not None, f"crop of shape {size} is not a window of the input"
        offsets.add(off)
    if list(size) == list(shape):
        assert offsets == {(0,) * len(shape)}
    else:
        assert len(offsets) > 1, f"{RUNS} crops all at {offsets}"


def test_random_crop_fed_image_of_unknown_shape():
    x = _X8
    p = tf.placeholder(tf.uint8, [None, None, 3])
    out = tf.image.random_crop(p, [2, 3, 3], seed=7)
    assert out.shape.as_list() == [2, 3, 3]
    with tf.Session() as sess:
        for _ in range(8):
            w = sess.run(out, {p: x})
            assert w.dtype == np.uint8 and _find_window(x, w) is not None


def test_random_crop_larger_than_image_fails():
    p = tf.placeholder(tf.float32, [None, None, 3])
    out = tf.image.random_crop(p, [7, 3, 3], seed=7)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(out, {p: _X})


# -- random flips ---------------------------------------------------------------------------------

_FLIPS = {"random_flip_left_right": -2, "random_flip_up_down": -3}  # the axis each one flips


@pytest.mark.parametrize("name", sorted(_FLIPS))
def test_random_flip_single_image_is_flip_or_identity(name):
    axis = _FLIPS[name]
    x = _X

    def build():
        out = getattr(tf.image, name)(tf.constant(x), seed=3)
        assert out.shape.as_list() == list(x.shape)
        return out, {}

    flipped = np.flip(x, axis)
    seen = set()
    for v in _draws(build, runs=40, graph_seed=1):
        if np.array_equal(v, x):
            seen.add("identity")
        elif np.array_equal(v, flipped):
            seen.add("flip")
        else:
            raise AssertionError(f"{name}: output is neither the image nor its flip")
    assert seen == {"identity", "flip"}, f"{name}: 40 runs gave only {seen}"


@pytest.mark.parametrize("name", sorted(_FLIPS))
def test_random_flip_batch_flips_each_image_independently(name):
    axis = _FLIPS[name]
    x = _XB
    p = tf.placeholder(tf.float32, [None, None, None, 3])
    out = getattr(tf.image, name)(p, seed=4)
    assert out.shape.as_list() == [None, None, None, 3]
    mixed = False
    with tf.Session() as sess:
        for _ in range(30):
            v = sess.run(out, {p: x})
            assert v.shape == x.shape
            flips = []
            for i in range(len(x)):
                if np.array_equal(v[i], x[i]):
                    flips.append(False)
                elif np.array_equal(v[i], np.flip(x[i], axis)):
                    flips.append(True)
                else:
                    raise AssertionError(f"{name}: image {i} is neither itself nor its flip")
            mixed |= len(set(flips)) == 2
    assert mixed, f"{name}: the images of a batch were always flipped together"


@pytest.mark.parametrize("name", sorted(_FLIPS))
def test_random_flip_keeps_dtype(name):
    out = getattr(tf.image, name)(tf.constant(_X8), seed=1)
    assert out.dtype == tf.uint8
    with tf.Session() as sess:
        v = sess.run(out)
    assert v.dtype == np.uint8 and sorted(v.ravel()) == sorted(_X8.ravel())


# -- random_brightness / random_contrast ----------------------------------------------------------


def test_random_brightness_adds_one_delta_in_range():
    max_delta = 0.3
    deltas = []
    for v in _draws(
        lambda: (tf.image.random_brightness(tf.constant(_XB), max_delta, seed=2), {}), graph_seed=1
    ):
        assert v.shape == _XB.shape and v.dtype == np.float32
        d = v - _XB
        assert np.ptp(d) < 1e-5, "one delta for the whole tensor"
        deltas.append(float(d.mean()))
    assert all(-max_delta - 1e-6 <= d <= max_delta + 1e-6 for d in deltas), deltas
    assert len({round(d, 6) for d in deltas}) > RUNS // 2


def test_random_brightness_uint8_saturates():
    max_delta = 0.5
    for v in _draws(
        lambda: (tf.image.random_brightness(tf.constant(_X8), max_delta, seed=2), {}), graph_seed=1
    ):
        assert v.dtype == np.uint8 and v.shape == _X8.shape
        # Some delta in range explains every pixel to within one step of rounding.
        x = _X8.astype(np.float64)
        inner = (v > 0) & (v < 255)
        if inner.any():
            delta = float(np.median(v[inner].astype(np.float64) - x[inner])) / 255.0
            assert abs(delta) <= max_delta + 2 / 255
            want = np.clip(x + delta * 255, 0, 255)
            assert np.abs(v - want).max() <= 1.5


def test_random_contrast_one_factor_in_range():
    lower, upper = 0.2, 1.8
    factors = []
    for v in _draws(
        lambda: (tf.image.random_contrast(tf.constant(_XB), lower, upper, seed=2), {}), graph_seed=1
    ):
        assert v.shape == _XB.shape and v.dtype == np.float32
        mean = _XB.mean(axis=(1, 2), keepdims=True)  # per image and channel
        dx = _XB - mean
        keep = np.abs(dx) > 0.05
        f = (v - mean)[keep] / dx[keep]
        assert np.ptp(f) < 1e-3, "one contrast factor for the whole batch"
        factors.append(float(f.mean()))
    assert all(lower - 1e-4 <= f <= upper + 1e-4 for f in factors), factors
    assert len({round(f, 4) for f in factors}) > RUNS // 2


def test_random_contrast_rejects_bad_range():
    with pytest.raises(ValueError):
        tf.image.random_contrast(tf.constant(_X), 1.5, 0.5)
    with pytest.raises(ValueError):
        tf.image.random_contrast(tf.constant(_X), -0.5, 0.5)


def test_random_brightness_rejects_negative_delta():
    with pytest.raises(ValueError):
        tf.image.random_brightness(tf.constant(_X), -0.1)


# -- random_hue / random_saturation ---------------------------------------------------------------


def _hsv(img):
    flat = img.reshape(-1, 3).astype(np.float64)
    return np.array([colorsys.rgb_to_hsv(*p) for p in flat]).reshape(img.shape)


def test_random_hue_shifts_hue_by_one_delta():
    max_delta = 0.4
    base = _hsv(_X)
    coloured = base[..., 1] > 0.1
    shifts = []
    for v in _draws(lambda: (tf.image.random_hue(tf.constant(_X), max_delta, seed=2), {}), graph_seed=1):
        assert v.shape == _X.shape and v.dtype == np.float32
        assert v.min() >= -1e-6 and v.max() <= 1 + 1e-6
        hsv = _hsv(v)
        np.testing.assert_allclose(
            hsv[..., 1:], base[..., 1:], atol=2e-5, err_msg="saturation and value kept"
        )
        d = (hsv[..., 0] - base[..., 0])[coloured]
        d = (d + 0.5) % 1.0 - 0.5
        assert np.ptp(d) < 2e-4, "one hue delta for the whole image"
        shifts.append(float(np.median(d)))
    assert all(abs(s) <= max_delta + 1e-4 for s in shifts), shifts
    assert len({round(s, 3) for s in shifts}) > RUNS // 2


def test_random_saturation_scales_saturation_by_one_factor():
    lower, upper = 0.1, 2.0
    base = _hsv(_X)
    factors = []
    for v in _draws(
        lambda: (tf.image.random_saturation(tf.constant(_X), lower, upper, seed=2), {}), graph_seed=1
    ):
        assert v.shape == _X.shape and v.dtype == np.float32
        hsv = _hsv(v)
        np.testing.assert_allclose(hsv[..., 2], base[..., 2], atol=2e-5, err_msg="value kept")
        keep = (base[..., 1] > 0.05) & (hsv[..., 1] < 0.999)  # not clipped at 1
        f = hsv[..., 1][keep] / base[..., 1][keep]
        assert np.ptp(f) < 1e-3, "one saturation factor for the whole image"
        factors.append(float(np.median(f)))
        clipped = base[..., 1] * factors[-1] >= 1.0
        assert np.all(hsv[..., 1][clipped] > 0.999)
    assert all(lower - 1e-4 <= f <= upper + 1e-4 for f in factors), factors


@pytest.mark.parametrize(
    "make",
    [
        lambda x: tf.image.random_hue(x, 0.3, seed=1),
        lambda x: tf.image.random_saturation(x, 0.5, 1.5, seed=1),
        lambda x: tf.image.random_contrast(x, 0.5, 1.5, seed=1),
        lambda x: tf.image.random_brightness(x, 0.2, seed=1),
    ],
    ids=["hue", "saturation", "contrast", "brightness"],
)
def test_random_colour_ops_keep_uint8(make):
    out = make(tf.constant(_X8))
    assert out.dtype == tf.uint8 and out.shape.as_list() == list(_X8.shape)
    with tf.Session() as sess:
        v = sess.run(out)
    assert v.dtype == np.uint8 and v.shape == _X8.shape


def test_random_hue_rejects_delta_above_half():
    with pytest.raises(ValueError):
        tf.image.random_hue(tf.constant(_X), 0.6)


# -- sample_distorted_bounding_box ----------------------------------------------------------------


def _check_box(begin, size, bboxes, height, width, obj, min_covered, aspect_range, area_range):
    """True if the box is a proper sample, False if it is the whole-image fallback; raises otherwise."""
    assert begin.dtype == size.dtype and begin.shape == (3,) and size.shape == (3,)
    y, x, c0 = (int(v) for v in begin)
    h, w, c1 = (int(v) for v in size)
    assert c0 == 0 and c1 == -1, f"channel begin/size {c0}/{c1}"
    assert h >= 1 and w >= 1 and 0 <= y and y + h <= height and 0 <= x and x + w <= width, (begin, size)
    assert bboxes.shape == (1, 1, 4) and bboxes.dtype == np.float32
    np.testing.assert_allclose(
        bboxes[0, 0], [y / height, x / width, (y + h) / height, (x + w) / width], atol=1e-6
    )
    if (y, x, h, w) == (0, 0, height, width):
        return False
    area = h * w / (height * width)
    assert area_range[0] - 1e-6 <= area <= area_range[1] + 1e-6, f"area fraction {area}"
    # width = round(height * aspect): the integer box's aspect ratio is off by up to half a pixel.
    slack = 1.0 / h + 1.0 / w
    assert aspect_range[0] - slack <= w / h <= aspect_range[1] + slack, f"aspect ratio {w / h}"
    oy1, ox1, oy2, ox2 = obj[0] * height, obj[1] * width, obj[2] * height, obj[3] * width
    inter = max(0.0, min(y + h, oy2) - max(y, oy1)) * max(0.0, min(x + w, ox2) - max(x, ox1))
    covered = inter / ((oy2 - oy1) * (ox2 - ox1))
    # TF rounds the object box to whole pixels before measuring: allow a pixel's worth.
    pixel = ((oy2 - oy1) + (ox2 - ox1)) / ((oy2 - oy1) * (ox2 - ox1))
    assert covered >= min_covered - pixel, f"covers {covered:.3f} of the object, needs {min_covered}"
    return True


@pytest.mark.parametrize(
    "min_covered,aspect_range,area_range",
    [(0.1, (0.75, 1.33), (0.05, 1.0)), (0.5, (0.5, 2.0), (0.1, 0.6)), (0.9, (0.3, 3.0), (0.2, 1.0))],
)
def test_sample_distorted_bounding_box_obeys_constraints(min_covered, aspect_range, area_range):
    height, width = 40, 60
    obj = np.array([0.1, 0.2, 0.6, 0.7], np.float32)
    static = {}

    def build():
        begin, size, bboxes = tf.image.sample_distorted_bounding_box(
            tf.constant([height, width, 3], tf.int32),
            tf.constant(obj.reshape(1, 1, 4)),
            seed=7,
            min_object_covered=min_covered,
            aspect_ratio_range=aspect_range,
            area_range=area_range,
            max_attempts=100,
        )
        static["shapes"] = [t.shape.as_list() for t in (begin, size, bboxes)]
        return (begin, size, bboxes), {}

    draws = _draws(build, runs=30, graph_seed=3)
    assert static["shapes"] == [[3], [3], [1, 1, 4]]
    proper = set()
    for begin, size, bboxes in draws:
        assert begin.dtype == np.int32
        if _check_box(begin, size, bboxes, height, width, obj, min_covered, aspect_range, area_range):
            proper.add((tuple(begin), tuple(size)))
    assert len(proper) >= 3, f"only {len(proper)} distinct boxes in 30 draws"


def test_sample_distorted_bounding_box_without_boxes_uses_the_image():
    height, width = 30, 20
    whole = np.array([0.0, 0.0, 1.0, 1.0], np.float32)

    def build():
        return (
            tf.image.sample_distorted_bounding_box(
                tf.constant([height, width, 1], tf.int64),
                tf.zeros([1, 0, 4], tf.float32),
                seed=2,
                min_object_covered=0.3,
                area_range=(0.3, 0.9),
                use_image_if_no_bounding_boxes=True,
            ),
            {},
        )

    proper = set()
    for begin, size, bboxes in _draws(build, runs=20, graph_seed=5):
        assert begin.dtype == np.int64
        if _check_box(begin, size, bboxes, height, width, whole, 0.3, (0.75, 1.33), (0.3, 0.9)):
            proper.add((tuple(begin), tuple(size)))
    assert len(proper) >= 3


def test_sample_distorted_bounding_box_impossible_constraints_fall_back_to_the_image():
    """No crop can cover all of an object that is the whole image with at most half its area: after
    max_attempts TF returns the whole image."""

    def build():
        return (
            tf.image.sample_distorted_bounding_box(
                [20, 20, 3],
                np.array([[[0.0, 0.0, 1.0, 1.0]]], np.float32),
                seed=1,
                min_object_covered=1.0,
                area_range=(0.1, 0.5),
                max_attempts=5,
            ),
            {},
        )

    for begin, size, bboxes in _draws(build, runs=5, graph_seed=1):
        assert begin.tolist() == [0, 0, 0] and size.tolist() == [20, 20, -1]
        np.testing.assert_allclose(bboxes.reshape(4), [0, 0, 1, 1])
