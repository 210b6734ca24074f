"""The digits dataset shipped in the package (ferroflow/datasets/digits.npz, exported from scikit-learn's
copy by tools/export_digits.py) and its fixed train/test split.

The expected class counts are those the UCI repository documents for this file (the "optdigits.tes"
test set of "Optical Recognition of Handwritten Digits", 1,797 instances).
"""

import numpy as np
import pytest

from ferroflow.datasets import digits

# Per-class instance counts of optdigits.tes as listed by the UCI repository.
UCI_CLASS_COUNTS = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_shipped_file_has_the_uci_digits():
    images, labels = digits.load()
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
    assert labels.shape == (1797,) and labels.dtype == np.uint8
    assert images.max() == 16 and images.min() == 0
    assert np.bincount(labels, minlength=10).tolist() == UCI_CLASS_COUNTS
    # Real strokes, not padding: every image has ink and no two labels share all images.
    assert (images.reshape(1797, -1).sum(axis=1) > 0).all()
    means = np.stack([images[labels == d].mean(axis=0) for d in range(10)])
    assert len({m.tobytes() for m in means}) == 10


def test_split_is_fixed_disjoint_and_stratified():
    images, labels = digits.load()
    (train_x, train_y), (test_x, test_y) = digits.train_test_split()
    assert len(train_y) + len(test_y) == 1797
    assert train_x.shape[1:] == test_x.shape[1:] == (8, 8)
    # Every image lands on exactly one side: compare the multisets of (image, label) rows.
    together = np.concatenate([np.concatenate([train_x, test_x]).reshape(1797, -1),
                               np.concatenate([train_y, test_y])[:, None]], axis=1)
    original = np.concatenate([images.reshape(1797, -1), labels[:, None]], axis=1)
    assert sorted(map(bytes, together)) == sorted(map(bytes, original))
    # Each digit gives floor(count / 5) images to the test set.
    assert np.bincount(test_y, minlength=10).tolist() == [c // 5 for c in UCI_CLASS_COUNTS]
    # The split does not change between calls (no random state involved).
    (_, train_y2), (test_x2, _) = digits.train_test_split()
    np.testing.assert_array_equal(train_y, train_y2)
    np.testing.assert_array_equal(test_x, test_x2)


def test_split_of_given_arrays_takes_every_fifth_image_of_each_class():
    labels = np.array([0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0])
    images = np.arange(len(labels))
    (train_x, _), (test_x, test_y) = digits.train_test_split(images, labels)
    # Class 0 sits at 0,2,3,5,6,10,11,12,13,14: its 5th and 10th are 6 and 14; class 1's 5th is 9.
    assert sorted(test_x.tolist()) == [6, 9, 14]
    assert sorted(test_y.tolist()) == [0, 0, 1]
    assert len(train_x) == 12


def test_bad_files_and_arguments_raise_named_errors(tmp_path):
    missing = tmp_path / "nope.npz"
    with pytest.raises(FileNotFoundError, match="nope.npz"):
        digits.load(missing)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, pixels=np.zeros((3, 8, 8), np.uint8))
    with pytest.raises(ValueError, match=r"wrong\.npz.*\['images', 'labels'\]"):
        digits.load(wrong)
    shape = tmp_path / "shape.npz"
    np.savez(shape, images=np.zeros((3, 4, 4), np.uint8), labels=np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match=r"shape\.npz.*\(3, 4, 4\)"):
        digits.load(shape)
    with pytest.raises(ValueError, match="both images and labels"):
        digits.train_test_split(images=np.zeros((5, 8, 8)))
