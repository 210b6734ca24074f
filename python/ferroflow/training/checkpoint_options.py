"""``tf.train.CheckpointOptions``: options for object-based checkpoint saving and restoring."""

from __future__ import annotations

__all__ = ["CheckpointOptions"]


class CheckpointOptions:
    """Options for saving object-based checkpoints (``CheckpointManager.save(options=...)``), with TF's fields.

    ferroflow saves on the calling thread and on the local CPU: ``experimental_io_device`` is recorded
    but moves no work, and ``enable_async`` / ``experimental_enable_async_checkpoint`` still save
    synchronously (a save that returns is complete on disk). ``experimental_write_callbacks`` run after
    each save made by a ``CheckpointManager``, given the checkpoint path if they take an argument.
    """

    __slots__ = (
        "experimental_io_device",
        "experimental_enable_async_checkpoint",
        "experimental_write_callbacks",
        "enable_async",
        "experimental_skip_slot_variables",
        "experimental_sharding_callback",
    )

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False, experimental_skip_slot_variables=False,
                 experimental_sharding_callback=None):
        if experimental_io_device is not None and not isinstance(experimental_io_device, str):
            raise TypeError(f"experimental_io_device must be a device string or None, got {experimental_io_device!r}")
        callbacks = list(experimental_write_callbacks or [])
        for cb in callbacks:
            if not callable(cb):
                raise TypeError(f"experimental_write_callbacks must hold callables, got {cb!r}")
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = bool(experimental_enable_async_checkpoint)
        self.experimental_write_callbacks = callbacks
        self.enable_async = bool(enable_async or experimental_enable_async_checkpoint)
        self.experimental_skip_slot_variables = bool(experimental_skip_slot_variables)
        self.experimental_sharding_callback = experimental_sharding_callback

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"CheckpointOptions({fields})"
