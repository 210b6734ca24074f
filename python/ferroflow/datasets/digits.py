"""The UCI handwritten digits: 1,797 grey-scale images of 8x8 pixels, labels 0-9.

"Optical Recognition of Handwritten Digits" by E. Alpaydin and C. Kaynak, UCI Machine Learning
Repository, https://doi.org/10.24432/C50P49, licensed CC BY 4.0. The copy in ``digits.npz`` is
the one scikit-learn bundles (its ``load_digits``), exported by ``tools/export_digits.py``. Each
pixel is a count 0..16 of the "on" pixels in a 4x4 block of the original 32x32 bitmap.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["NUM_CLASSES", "NUM_IMAGES", "IMAGE_SIZE", "MAX_PIXEL", "load", "train_test_split"]

NUM_IMAGES = 1797
NUM_CLASSES = 10
IMAGE_SIZE = 8
MAX_PIXEL = 16
# Of each digit's images, in file order, every TEST_EVERY-th one is held out for testing.
TEST_EVERY = 5

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "digits.npz")


def load(path=None):
    """Returns ``(images, labels)``: uint8 arrays of shape ``[1797, 8, 8]`` (values 0..16) and ``[1797]``.

    ``path`` defaults to the file shipped in the package. Raises ``FileNotFoundError`` if it is missing
    and ``ValueError`` naming the file if its contents are not the digits arrays.
    """
    path = _PATH if path is None else os.fspath(path)
    try:
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise FileNotFoundError(f"digits dataset file not found: {path}") from None
    with archive:
        missing = {"images", "labels"} - set(archive.files)
        if missing:
            raise ValueError(f"digits dataset file {path} lacks the arrays {sorted(missing)}")
        images, labels = archive["images"], archive["labels"]
    if images.ndim != 3 or images.shape[1:] != (IMAGE_SIZE, IMAGE_SIZE) or labels.shape != images.shape[:1]:
        raise ValueError(
            f"digits dataset file {path}: expected images [N, 8, 8] and labels [N], got {images.shape} and "
            f"{labels.shape}"
        )
    return images, labels


def train_test_split(images=None, labels=None):
    """Splits the dataset into a fixed training set and held-out test set.

    The split does not depend on any random seed: of each digit's images, taken in file order, the 5th,
    10th, 15th, ... are test images (355 of 1,797), so every digit has the same share of the test set as
    of the whole. Returns
    ``(train_images, train_labels), (test_images, test_labels)``; with no arguments the shipped dataset
    is loaded.
    """
    if images is None and labels is None:
        images, labels = load()
    elif images is None or labels is None:
        raise ValueError("train_test_split needs both images and labels, or neither")
    labels = np.asarray(labels)
    test = np.zeros(len(labels), dtype=bool)
    for digit in np.unique(labels):
        where = np.flatnonzero(labels == digit)
        test[where[TEST_EVERY - 1 :: TEST_EVERY]] = True
    return (images[~test], labels[~test]), (images[test], labels[test])
