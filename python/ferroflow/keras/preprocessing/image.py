"""``tf.keras.preprocessing.image``: ``ImageDataGenerator`` (augmented batches from arrays, ``flow``, or from a
directory of class folders, ``flow_from_directory``), the affine transforms it applies, and image/array
conversions (``load_img``, ``img_to_array``, ``array_to_img``; these need Pillow).

The transforms are Keras's: a rotation, shift, shear and zoom composed into one affine map about the image
centre, sampled with linear interpolation (``interpolation_order=1``; 0 takes the nearest pixel) and the
``fill_mode`` outside the image (``'nearest'``, ``'constant'`` with ``cval``, ``'reflect'``, ``'wrap'``), then
a channel shift, flips and a brightness change. Random parameters come from numpy's global generator in
Keras's order, so ``flow(..., seed=s)`` (reseeding with ``s`` plus the number of batches seen) and
``get_random_transform(shape, seed)`` give the batches TensorFlow's Keras gives.
"""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np

from ferroflow.keras import backend as K
from ferroflow.keras.utils import Sequence

__all__ = ["DirectoryIterator", "ImageDataGenerator", "Iterator", "NumpyArrayIterator", "apply_affine_transform",
           "apply_brightness_shift", "apply_channel_shift", "array_to_img", "flip_axis", "img_to_array", "load_img",
           "random_brightness", "random_channel_shift", "random_rotation", "random_shear", "random_shift",
           "random_zoom", "save_img", "transform_matrix_offset_center"]


# -- sampling ----------------------------------------------------------------------------------------------------
def _map_index(i, n, mode):
    """Integer pixel indices ``i`` along an axis of ``n`` mapped inside it by ``mode`` (``'constant'`` clamps;
    its outside points are replaced afterwards)."""
    if mode == "reflect":  # d c b a | a b c d | d c b a
        j = np.mod(i, 2 * n)
        return np.where(j >= n, 2 * n - 1 - j, j)
    return np.clip(i, 0, n - 1)


def _map_coordinate(c, n, mode):
    """Coordinates ``c`` mapped before interpolation: ``'wrap'`` repeats with period ``n - 1`` (the last pixel
    falls on the first), the other modes map the neighbours' indices instead."""
    if mode == "wrap":
        return np.mod(c, n - 1) if n > 1 else np.zeros_like(c)
    return c


def _sample_channel(image, matrix, offset, mode, cval, order):
    """``out[o] = image[matrix @ o + offset]`` for every output pixel ``o`` (row, column), interpolated."""
    h, w = image.shape
    rows, cols = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    src_r = matrix[0, 0] * rows + matrix[0, 1] * cols + offset[0]
    src_c = matrix[1, 0] * rows + matrix[1, 1] * cols + offset[1]
    outside = (src_r < 0) | (src_r > h - 1) | (src_c < 0) | (src_c > w - 1)
    src_r, src_c = _map_coordinate(src_r, h, mode), _map_coordinate(src_c, w, mode)
    data = image.astype(np.float64)
    if order == 0:
        r = _map_index(np.floor(src_r + 0.5).astype(np.int64), h, mode)
        c = _map_index(np.floor(src_c + 0.5).astype(np.int64), w, mode)
        out = data[r, c]
    else:
        r0, c0 = np.floor(src_r), np.floor(src_c)
        fr, fc = src_r - r0, src_c - c0
        r0, c0 = r0.astype(np.int64), c0.astype(np.int64)
        out = np.zeros((h, w))
        for dr, wr in ((0, 1.0 - fr), (1, fr)):
            rr = _map_index(r0 + dr, h, mode)
            for dc, wc in ((0, 1.0 - fc), (1, fc)):
                out += wr * wc * data[rr, _map_index(c0 + dc, w, mode)]
    if mode == "constant":
        out = np.where(outside, cval, out)
    return out.astype(image.dtype)


def transform_matrix_offset_center(matrix, x, y):
    """``matrix`` (3x3, homogeneous) applied about the centre of an ``x`` by ``y`` image instead of its corner."""
    cx, cy = float(x) / 2 - 0.5, float(y) / 2 - 0.5
    to_center = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]])
    back = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]])
    return to_center @ matrix @ back


def apply_affine_transform(x, theta=0, tx=0, ty=0, shear=0, zx=1, zy=1, row_axis=1, col_axis=2, channel_axis=0,
                           fill_mode="nearest", cval=0.0, order=1):
    """An image (rank 3) rotated by ``theta`` degrees, shifted by ``tx`` rows and ``ty`` columns, sheared by
    ``shear`` degrees and zoomed by ``zx``/``zy`` (the map from output to input pixels, about the centre)."""
    if len({row_axis, col_axis, channel_axis}) != 3:
        raise ValueError("'row_axis', 'col_axis', and 'channel_axis' must be distinct")
    if {row_axis, col_axis, channel_axis} != {0, 1, 2}:
        raise ValueError(f"Invalid axis' indices: {sorted({row_axis, col_axis, channel_axis} - {0, 1, 2})}")
    if x.ndim != 3:
        raise ValueError("Input arrays must be multi-channel 2D images.")
    if channel_axis not in (0, 2):
        raise ValueError("Channels are allowed and the first and last dimensions.")
    if fill_mode not in ("constant", "nearest", "reflect", "wrap"):
        raise ValueError(f"Unknown fill_mode {fill_mode!r}: one of 'constant', 'nearest', 'reflect', 'wrap'")
    if order not in (0, 1):
        raise NotImplementedError(f"interpolation_order={order}: ferroflow's Keras samples images with order 0 "
                                  "(nearest) or 1 (linear)")
    parts = []
    if theta != 0:
        t = np.deg2rad(theta)
        parts.append(np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]]))
    if tx != 0 or ty != 0:
        parts.append(np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]]))
    if shear != 0:
        s = np.deg2rad(shear)
        parts.append(np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]]))
    if zx != 1 or zy != 1:
        parts.append(np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]]))
    if not parts:
        return x
    matrix = parts[0]
    for p in parts[1:]:
        matrix = matrix @ p
    matrix = transform_matrix_offset_center(matrix, x.shape[row_axis], x.shape[col_axis])
    if col_axis > row_axis:  # Keras's matrix has its first two axes the other way round from the channel images'
        matrix = matrix[[1, 0, 2]][:, [1, 0, 2]]
    channels = np.moveaxis(x, channel_axis, 0)
    out = np.stack([_sample_channel(c, matrix[:2, :2], matrix[:2, 2], fill_mode, cval, order) for c in channels])
    return np.moveaxis(out, 0, channel_axis)


def flip_axis(x, axis):
    """``x`` reversed along ``axis``."""
    return np.flip(np.asarray(x), axis)


def apply_channel_shift(x, intensity, channel_axis=0):
    """``intensity`` added to every channel, clipped to the image's range."""
    low, high = np.min(x), np.max(x)
    return np.clip(x + intensity, low, high).astype(np.asarray(x).dtype)


def random_channel_shift(x, intensity_range, channel_axis=0):
    return apply_channel_shift(x, np.random.uniform(-intensity_range, intensity_range), channel_axis)


def _pil():
    try:
        from PIL import Image, ImageEnhance
    except ImportError:
        raise ImportError("Loading images and brightness shifts need Pillow (`pip install pillow`).") from None
    return Image, ImageEnhance


def apply_brightness_shift(x, brightness, scale=True):
    """The image's brightness scaled by ``brightness`` (through Pillow, as an 8-bit image)."""
    _, enhance = _pil()
    low, high = np.min(x), np.max(x)
    local_scale = low < 0 or high > 255
    img = array_to_img(x, scale=local_scale or scale)
    x = img_to_array(enhance.Brightness(img).enhance(brightness))
    if not scale and local_scale:
        x = x / 255 * (high - low) + low
    return x


def random_brightness(x, brightness_range, scale=True):
    if len(brightness_range) != 2:
        raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
    return apply_brightness_shift(x, np.random.uniform(brightness_range[0], brightness_range[1]), scale)


def random_rotation(x, rg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                    interpolation_order=1):
    return apply_affine_transform(x, theta=np.random.uniform(-rg, rg), row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_shift(x, wrg, hrg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                 interpolation_order=1):
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_shear(x, intensity, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                 interpolation_order=1):
    return apply_affine_transform(x, shear=np.random.uniform(-intensity, intensity), row_axis=row_axis,
                                  col_axis=col_axis, channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_zoom(x, zoom_range, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                interpolation_order=1):
    if len(zoom_range) != 2:
        raise ValueError(f"`zoom_range` should be a tuple or list of two floats. Received: {zoom_range}")
    zx, zy = (1, 1) if zoom_range[0] == 1 and zoom_range[1] == 1 else \
        np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


# -- images and arrays -----------------------------------------------------------------------------------------
def img_to_array(img, data_format=None, dtype=None):
    """A Pillow image as a float array ``[rows, cols, channels]`` (channels first with ``'channels_first'``)."""
    data_format = data_format or K.image_data_format()
    x = np.asarray(img, dtype=dtype or K.floatx())
    if x.ndim == 2:
        x = x[:, :, None]
    elif x.ndim != 3:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    return np.transpose(x, (2, 0, 1)) if data_format == "channels_first" else x


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """An array ``[rows, cols, 1|3|4]`` as a Pillow image (scaled to 0..255 with ``scale``)."""
    image, _ = _pil()
    data_format = data_format or K.image_data_format()
    x = np.asarray(x, dtype=dtype or K.floatx())
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = np.transpose(x, (1, 2, 0))
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x = x / top
        x = x * 255
    channels = x.shape[2]
    if channels == 4:
        return image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    array_to_img(x, data_format=data_format, scale=scale).save(path, format=file_format, **kwargs)


_RESAMPLE = {"nearest": 0, "bilinear": 2, "bicubic": 3, "lanczos": 1, "box": 4, "hamming": 5}


def load_img(path, grayscale=False, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """The image at ``path`` (Pillow), converted to ``color_mode`` and resized to ``target_size`` (rows, cols)."""
    image, _ = _pil()
    if grayscale:
        color_mode = "grayscale"
    with open(path, "rb") as f:
        img = image.open(f)
        img.load()
    modes = {"grayscale": ("L", "I;16", "I"), "rgba": ("RGBA",), "rgb": ("RGB",)}
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode not in modes[color_mode]:
        img = img.convert({"grayscale": "L", "rgba": "RGBA", "rgb": "RGB"}[color_mode])
    if target_size is not None:
        size = (target_size[1], target_size[0])
        if img.size != size:
            if interpolation not in _RESAMPLE:
                raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported methods are "
                                 f"{', '.join(_RESAMPLE)}")
            if keep_aspect_ratio:
                w, h = img.size
                crop_w, crop_h = min(w, h * size[0] // size[1]), min(h, w * size[1] // size[0])
                left, top = (w - crop_w) // 2, (h - crop_h) // 2
                img = img.crop((left, top, left + crop_w, top + crop_h))
            img = img.resize(size, _RESAMPLE[interpolation])
    return img


# -- iterators ---------------------------------------------------------------------------------------------------
class Iterator(Sequence):
    """Batches of ``n`` samples (``batch_size`` at a time, shuffled each epoch with ``shuffle``): indexable as a
    ``Sequence`` and iterable without end, as Keras's."""

    white_list_formats = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")

    def __init__(self, n, batch_size, shuffle, seed):
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array = None
        self.index_generator = self._flow_index()

    def _set_index_array(self):
        self.index_array = np.random.permutation(self.n) if self.shuffle else np.arange(self.n)

    def __getitem__(self, idx):
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length {len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        return self._get_batches_of_transformed_samples(
            self.index_array[self.batch_size * idx:self.batch_size * (idx + 1)])

    def __len__(self):
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self):
        self._set_index_array()

    def reset(self):
        self.batch_index = 0

    def _flow_index(self):
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            start = self.batch_index * self.batch_size % self.n if self.n else 0
            self.batch_index = self.batch_index + 1 if self.n > start + self.batch_size else 0
            self.total_batches_seen += 1
            yield self.index_array[start:start + self.batch_size]

    def __iter__(self):
        return self

    def __next__(self):
        return self.next()

    def next(self):
        with self.lock:
            index_array = next(self.index_generator)
        return self._get_batches_of_transformed_samples(index_array)

    def _get_batches_of_transformed_samples(self, index_array):
        raise NotImplementedError


class NumpyArrayIterator(Iterator):
    """Batches ``(x, y[, sample_weight])`` of images from a rank-4 array, each transformed and standardized by
    ``image_data_generator``."""

    def __init__(self, x, y, image_data_generator, batch_size=32, shuffle=False, sample_weight=None, seed=None,
                 data_format=None, save_to_dir=None, save_prefix="", save_format="png", subset=None,
                 ignore_class_split=False, dtype=None):
        data_format = data_format or K.image_data_format()
        self.dtype = dtype or K.floatx()
        x_misc = []
        if isinstance(x, (tuple, list)):
            x_misc = [np.asarray(x[1])] if not isinstance(x[1], list) else [np.asarray(v) for v in x[1]]
            x = x[0]
            for extra in x_misc:
                if len(x) != len(extra):
                    raise ValueError(f"All of the arrays in `x` should have the same length. Found a pair with: "
                                     f"len(x[0]) = {len(x)}, len(x[?]) = {len(extra)}")
        if y is not None and len(x) != len(y):
            raise ValueError(f"`x` (images tensor) and `y` (labels) should have the same length. Found: x.shape = "
                             f"{np.asarray(x).shape}, y.shape = {np.asarray(y).shape}")
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError(f"`x` (images tensor) and `sample_weight` should have the same length. Found: x.shape = "
                             f"{np.asarray(x).shape}, sample_weight.shape = {np.asarray(sample_weight).shape}")
        if subset is not None:
            if subset not in ("training", "validation"):
                raise ValueError(f"Invalid subset name: {subset}; expected \"training\" or \"validation\".")
            split = int(len(x) * image_data_generator._validation_split)
            if y is not None and not ignore_class_split and \
                    not np.array_equal(np.unique(y[:split]), np.unique(y[split:])):
                raise ValueError("Training and validation subsets have different number of classes after the split. "
                                 "If your numpy arrays are sorted by the label, you might want to shuffle them.")
            part = slice(None, split) if subset == "validation" else slice(split, None)
            x, x_misc = x[part], [np.asarray(v[part]) for v in x_misc]
            y = y[part] if y is not None else None
        self.x = np.asarray(x, dtype=self.dtype)
        self.x_misc = x_misc
        if self.x.ndim != 4:
            raise ValueError(f"Input data in `NumpyArrayIterator` should have rank 4. You passed an array with shape "
                             f"{self.x.shape}")
        channels_axis = 3 if data_format == "channels_last" else 1
        if self.x.shape[channels_axis] not in (1, 3, 4):
            warnings.warn(f"NumpyArrayIterator is set to use the data format convention \"{data_format}\" (channels "
                          f"on axis {channels_axis}), i.e. expected either 1, 3, or 4 channels on axis "
                          f"{channels_axis}. However, it was passed an array with shape {self.x.shape} "
                          f"({self.x.shape[channels_axis]} channels).", stacklevel=2)
        self.y = np.asarray(y) if y is not None else None
        self.sample_weight = np.asarray(sample_weight) if sample_weight is not None else None
        self.image_data_generator = image_data_generator
        self.data_format = data_format
        self.save_to_dir = save_to_dir
        self.save_prefix = save_prefix
        self.save_format = save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array):
        gen = self.image_data_generator
        batch = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        for i, j in enumerate(index_array):
            x = self.x[j]
            params = gen.get_random_transform(x.shape)
            batch[i] = gen.standardize(gen.apply_transform(x.astype(self.dtype), params))
        if self.save_to_dir:
            for i, j in enumerate(index_array):
                name = f"{self.save_prefix}_{j}_{np.random.randint(1e4)}.{self.save_format}"
                array_to_img(batch[i], self.data_format, scale=True).save(os.path.join(self.save_to_dir, name))
        misc = [v[index_array] for v in self.x_misc]
        out = (batch if not misc else [batch] + misc,)
        if self.y is None:
            return out[0]
        out += (self.y[index_array],)
        if self.sample_weight is not None:
            out += (self.sample_weight[index_array],)
        return out


class DirectoryIterator(Iterator):
    """Batches of images read from ``directory/<class>/<file>``: classes are the sub-folders (sorted), files
    the images with a known extension in each (sorted, recursively); labels by ``class_mode``
    (``'categorical'`` one-hot, ``'binary'``, ``'sparse'``, ``'input'`` the images themselves, None)."""

    def __init__(self, directory, image_data_generator, target_size=(256, 256), color_mode="rgb", classes=None,
                 class_mode="categorical", batch_size=32, shuffle=True, seed=None, data_format=None, save_to_dir=None,
                 save_prefix="", save_format="png", follow_links=False, subset=None, interpolation="nearest",
                 keep_aspect_ratio=False, dtype=None):
        if class_mode not in ("categorical", "binary", "sparse", "input", None):
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of \"categorical\", \"binary\", "
                             "\"sparse\", \"input\" or None.")
        if color_mode not in ("rgb", "rgba", "grayscale"):
            raise ValueError(f"Invalid color mode: {color_mode}; expected \"rgb\", \"rgba\", or \"grayscale\".")
        self.directory = directory
        self.image_data_generator = image_data_generator
        self.target_size = tuple(target_size)
        self.color_mode = color_mode
        self.data_format = data_format or K.image_data_format()
        self.dtype = dtype or K.floatx()
        self.class_mode = class_mode
        self.interpolation = interpolation
        self.keep_aspect_ratio = keep_aspect_ratio
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        channels = {"rgba": 4, "rgb": 3, "grayscale": 1}[color_mode]
        self.image_shape = self.target_size + (channels,) if self.data_format == "channels_last" else \
            (channels,) + self.target_size
        if classes is None:
            classes = sorted(d for d in os.listdir(directory) if os.path.isdir(os.path.join(directory, d)))
        self.num_classes = len(classes)
        self.class_indices = dict(zip(classes, range(len(classes))))
        split = image_data_generator._validation_split
        filenames, labels = [], []
        for name in classes:
            root = os.path.join(directory, name)
            files = []
            for dirpath, _, names in sorted(os.walk(root, followlinks=follow_links), key=lambda t: t[0]):
                for f in sorted(names):
                    if f.lower().endswith(tuple("." + e for e in self.white_list_formats)):
                        files.append(os.path.relpath(os.path.join(dirpath, f), directory))
            if split and subset is not None:
                cut = int(split * len(files))
                files = files[:cut] if subset == "validation" else files[cut:]
            filenames += files
            labels += [self.class_indices[name]] * len(files)
        self.filenames = filenames
        self.classes = np.array(labels, dtype="int32")
        self.samples = len(filenames)
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def filepaths(self):
        return [os.path.join(self.directory, f) for f in self.filenames]

    @property
    def labels(self):
        return self.classes

    def _get_batches_of_transformed_samples(self, index_array):
        gen = self.image_data_generator
        batch = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        paths = self.filepaths
        for i, j in enumerate(index_array):
            img = load_img(paths[j], color_mode=self.color_mode, target_size=self.target_size,
                           interpolation=self.interpolation, keep_aspect_ratio=self.keep_aspect_ratio)
            x = img_to_array(img, data_format=self.data_format)
            if hasattr(img, "close"):
                img.close()
            params = gen.get_random_transform(x.shape)
            batch[i] = gen.standardize(gen.apply_transform(x, params))
        if self.class_mode == "input":
            return batch, batch.copy()
        if self.class_mode is None:
            return batch
        labels = self.classes[index_array]
        if self.class_mode == "sparse":
            return batch, labels.astype(self.dtype)
        if self.class_mode == "binary":
            return batch, labels.astype(self.dtype)
        return batch, np.eye(self.num_classes, dtype=self.dtype)[labels]


class ImageDataGenerator:
    """Augments and standardizes batches of images: ``rescale``, sample- or feature-wise centring and scaling
    (``fit`` computes the feature-wise statistics, and ZCA whitening), random rotations (degrees), shifts
    (a fraction of the size, pixels, or a list of choices), shears, zooms, channel shifts, flips and brightness,
    ``preprocessing_function``, and a ``validation_split`` for ``flow(..., subset=...)``."""

    def __init__(self, featurewise_center=False, samplewise_center=False, featurewise_std_normalization=False,
                 samplewise_std_normalization=False, zca_whitening=False, zca_epsilon=1e-6, rotation_range=0,
                 width_shift_range=0.0, height_shift_range=0.0, brightness_range=None, shear_range=0.0,
                 zoom_range=0.0, channel_shift_range=0.0, fill_mode="nearest", cval=0.0, horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None, data_format=None,
                 validation_split=0.0, interpolation_order=1, dtype=None):
        data_format = data_format or K.image_data_format()
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"`data_format` should be `\"channels_last\"` (channel after row and column) or "
                             f"`\"channels_first\"` (channel before row and column). Received: {data_format}")
        if validation_split and not 0 < validation_split < 1:
            raise ValueError(f"`validation_split` must be strictly between 0 and 1.  Received: {validation_split}")
        if isinstance(zoom_range, (float, int)):
            zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2 and all(isinstance(v, (float, int)) for v in zoom_range):
            zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f"`zoom_range` should be a float or a tuple or list of two floats. Received: "
                             f"{zoom_range}")
        if brightness_range is not None and (not isinstance(brightness_range, (tuple, list)) or
                                             len(brightness_range) != 2):
            raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
        self.featurewise_center = featurewise_center or zca_whitening or featurewise_std_normalization
        self.featurewise_std_normalization = featurewise_std_normalization and not zca_whitening
        self.samplewise_center = samplewise_center or samplewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening = zca_whitening
        self.zca_epsilon = zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range = width_shift_range
        self.height_shift_range = height_shift_range
        self.shear_range = shear_range
        self.zoom_range = zoom_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode = fill_mode
        self.cval = cval
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.brightness_range = brightness_range
        self.interpolation_order = interpolation_order
        self.dtype = dtype or K.floatx()
        self.data_format = data_format
        self.channel_axis, self.row_axis, self.col_axis = (1, 2, 3) if data_format == "channels_first" else (3, 1, 2)
        self._validation_split = validation_split
        self.mean = None
        self.std = None
        self.zca_whitening_matrix = None

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None, save_to_dir=None,
             save_prefix="", save_format="png", ignore_class_split=False, subset=None):
        """An iterator of transformed batches of the arrays ``x`` (and ``y``, ``sample_weight``)."""
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle, sample_weight=sample_weight,
                                  seed=seed, data_format=self.data_format, save_to_dir=save_to_dir,
                                  save_prefix=save_prefix, save_format=save_format,
                                  ignore_class_split=ignore_class_split, subset=subset, dtype=self.dtype)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb", classes=None,
                            class_mode="categorical", batch_size=32, shuffle=True, seed=None, save_to_dir=None,
                            save_prefix="", save_format="png", follow_links=False, subset=None,
                            interpolation="nearest", keep_aspect_ratio=False):
        """An iterator of transformed batches of the images under ``directory`` (one folder per class)."""
        return DirectoryIterator(directory, self, target_size=target_size, color_mode=color_mode, classes=classes,
                                 class_mode=class_mode, batch_size=batch_size, shuffle=shuffle, seed=seed,
                                 data_format=self.data_format, save_to_dir=save_to_dir, save_prefix=save_prefix,
                                 save_format=save_format, follow_links=follow_links, subset=subset,
                                 interpolation=interpolation, keep_aspect_ratio=keep_aspect_ratio, dtype=self.dtype)

    def standardize(self, x):
        """``x`` (in place where it can) through ``preprocessing_function``, ``rescale`` and the normalizations."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        if self.featurewise_center:
            if self.mean is not None:
                x -= self.mean
            else:
                warnings.warn("This ImageDataGenerator specifies `featurewise_center`, but it hasn't been fit on any "
                              "training data. Fit it first by calling `.fit(numpy_data)`.", stacklevel=2)
        if self.featurewise_std_normalization:
            if self.std is not None:
                x /= self.std + 1e-6
            else:
                warnings.warn("This ImageDataGenerator specifies `featurewise_std_normalization`, but it hasn't been "
                              "fit on any training data. Fit it first by calling `.fit(numpy_data)`.", stacklevel=2)
        if self.zca_whitening:
            if self.zca_whitening_matrix is not None:
                x = np.reshape(x.reshape(-1, np.prod(x.shape[-3:])) @ self.zca_whitening_matrix, x.shape)
            else:
                warnings.warn("This ImageDataGenerator specifies `zca_whitening`, but it hasn't been fit on any "
                              "training data. Fit it first by calling `.fit(numpy_data)`.", stacklevel=2)
        return x

    @staticmethod
    def _shift(value_range, size):
        """A random shift: one of the listed values with a random sign, or uniform in +-range; fractions of
        ``size`` when every value is below 1."""
        try:
            shift = np.random.choice(value_range)
            shift *= np.random.choice([-1, 1])
        except ValueError:  # a number, not a list of choices
            shift = np.random.uniform(-value_range, value_range)
        if np.max(value_range) < 1:
            shift *= size
        return shift

    def get_random_transform(self, img_shape, seed=None):
        """Random parameters for ``apply_transform`` (theta, tx, ty, shear, zx, zy, flips, channel shift,
        brightness), drawn from numpy's generator in Keras's order (reseeded with ``seed``)."""
        row_axis, col_axis = self.row_axis - 1, self.col_axis - 1
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) if self.rotation_range else 0
        tx = self._shift(self.height_shift_range, img_shape[row_axis]) if self.height_shift_range else 0
        ty = self._shift(self.width_shift_range, img_shape[col_axis]) if self.width_shift_range else 0
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_h = (np.random.random() < 0.5) * self.horizontal_flip
        flip_v = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift = np.random.uniform(-self.channel_shift_range, self.channel_shift_range) \
            if self.channel_shift_range != 0 else None
        brightness = np.random.uniform(self.brightness_range[0], self.brightness_range[1]) \
            if self.brightness_range is not None else None
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy, "flip_horizontal": flip_h,
                "flip_vertical": flip_v, "channel_shift_intensity": channel_shift, "brightness": brightness}

    def apply_transform(self, x, transform_parameters):
        """One image (rank 3) transformed by the given parameters (any may be left out)."""
        p = transform_parameters
        row_axis, col_axis, channel_axis = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        x = apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0), p.get("shear", 0),
                                   p.get("zx", 1), p.get("zy", 1), row_axis=row_axis, col_axis=col_axis,
                                   channel_axis=channel_axis, fill_mode=self.fill_mode, cval=self.cval,
                                   order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], channel_axis)
        if p.get("flip_horizontal", False):
            x = flip_axis(x, col_axis)
        if p.get("flip_vertical", False):
            x = flip_axis(x, row_axis)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x, seed=None):
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x, augment=False, rounds=1, seed=None):
        """The feature-wise mean and standard deviation (per channel) and the ZCA matrix of the images ``x``
        (rescaled; ``augment`` adds ``rounds`` randomly transformed copies first)."""
        x = np.array(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input to `.fit()` should have rank 4. Got array with shape: {x.shape}")
        if seed is not None:
            np.random.seed(seed)
        if self.rescale:
            x *= self.rescale
        if augment:
            copies = np.zeros((rounds * x.shape[0],) + x.shape[1:], dtype=self.dtype)
            for r in range(rounds):
                for i in range(x.shape[0]):
                    copies[i + r * x.shape[0]] = self.random_transform(x[i])
            x = copies
        shape = [1, 1, 1]
        shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=(0, self.row_axis, self.col_axis)), shape)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=(0, self.row_axis, self.col_axis)), shape)
            x /= self.std + 1e-6
        if self.zca_whitening:
            n = len(x)
            u, s, _ = np.linalg.svd(np.reshape(x, (n, -1)).T, full_matrices=False)
            self.zca_whitening_matrix = (u * (np.sqrt(n) / (s + self.zca_epsilon))).dot(u.T)
