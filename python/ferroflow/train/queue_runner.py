"""``tf.train.queue_runner``: ``QueueRunner``, ``add_queue_runner`` and ``start_queue_runners``."""

from ferroflow.training.queue_runner_impl import QueueRunner, add_queue_runner, start_queue_runners

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]
