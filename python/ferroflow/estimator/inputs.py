"""``tf.estimator.inputs.numpy_input_fn``: an ``input_fn`` over numpy arrays (a dict of them or one array).

TensorFlow 1.15 feeds the arrays through a queue filled by threads; this one slices them with ``tf.data``
(``from_tensor_slices``, shuffle, repeat, batch), which gives the same batches' shapes: a fixed batch size when
repeating forever (TF's ``dequeue_many``), an unknown one with a smaller last batch otherwise
(``dequeue_up_to``). The arrays become graph constants, so very large arrays make a large graph.
"""

from __future__ import annotations

import collections

import numpy as np

from ferroflow.data.dataset_ops import Dataset

_TARGET_KEY = "__target_key__"


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """An ``input_fn`` returning ``(features, target)`` batches of ``x`` and ``y`` (``features`` alone when ``y``
    is None)."""
    if not isinstance(shuffle, bool):
        raise ValueError(
            "shuffle must be provided and explicitly set as boolean (it is recommended to set it as True for "
            f"training); got {shuffle}"
        )
    if not isinstance(x, dict) and not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a dict or array; got {type(x).__name__}")
    if isinstance(x, dict) and y is not None and isinstance(y, dict):
        shared = set(x) & set(y)
        if shared:
            raise ValueError(f"{shared} duplicate keys are found in both x and y: {shared}")
    if isinstance(y, dict) and _TARGET_KEY in y:
        raise ValueError(f"{_TARGET_KEY} is a reserved key")

    def input_fn():
        ordered = collections.OrderedDict(sorted(x.items())) if isinstance(x, dict) else x
        lengths = {len(v) for v in (ordered.values() if isinstance(ordered, dict) else [ordered])}
        if y is not None:
            lengths |= {len(v) for v in (y.values() if isinstance(y, dict) else [y])}
        if len(lengths) != 1:
            raise ValueError(
                "Length of tensors in x and y is mismatched. All elements in x and y must have the same "
                f"length. Lengths: {sorted(lengths)}"
            )
        (n,) = lengths
        elems = ordered if y is None else (ordered, y)
        ds = Dataset.from_tensor_slices(elems)
        if shuffle:
            ds = ds.shuffle(max(1, min(queue_capacity, n)))
        if num_epochs != 1:
            ds = ds.repeat(num_epochs)
        ds = ds.batch(batch_size, drop_remainder=num_epochs is None)
        return ds.make_one_shot_iterator().get_next()

    return input_fn
