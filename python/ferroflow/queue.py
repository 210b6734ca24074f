"""``tf.queue``: the TF1 queues (see ``ferroflow.ops.data_flow_ops``)."""

from ferroflow.ops.data_flow_ops import (
    FIFOQueue,
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]
