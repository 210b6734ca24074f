"""Export the UCI handwritten digits (8x8, 1,797 images) into ferroflow's package data.

Run once, in an environment that has scikit-learn (it is not a ferroflow dependency)::

    python tools/export_digits.py python/ferroflow/datasets/digits.npz

scikit-learn ships the UCI "Optical Recognition of Handwritten Digits" test set
(Alpaydin & Kaynak, CC BY 4.0, https://doi.org/10.24432/C50P49). Each image is an
8x8 grid of counts 0..16 (the number of "on" pixels in a 4x4 block of the original
32x32 bitmap), so both pixels and labels fit in uint8. The file is written with
``numpy.savez_compressed``; ``ferroflow.datasets.digits.load()`` reads it back.
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="path of the .npz file to write")
    args = parser.parse_args(argv)

    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = np.asarray(bunch.images)
    labels = np.asarray(bunch.target)
    if images.shape != (1797, 8, 8) or labels.shape != (1797,):
        raise SystemExit(f"unexpected shapes from scikit-learn: images {images.shape}, labels {labels.shape}")
    if images.min() < 0 or images.max() > 16 or not np.array_equal(images, np.round(images)):
        raise SystemExit("expected integer pixel counts in 0..16")
    images_u8 = images.astype(np.uint8)
    labels_u8 = labels.astype(np.uint8)
    np.savez_compressed(args.output, images=images_u8, labels=labels_u8)
    digest = hashlib.sha256(images_u8.tobytes() + labels_u8.tobytes()).hexdigest()
    print(f"wrote {args.output}: images {images_u8.shape} uint8, labels {labels_u8.shape} uint8")
    print(f"label counts {np.bincount(labels_u8).tolist()}")
    print(f"sha256 of images+labels bytes: {digest}")


if __name__ == "__main__":
    main()
