"""Keras's engine for graph mode: the Keras ``Layer`` (``base_layer``), ``Input`` (``input_layer``), the
functional ``Model`` and its training loop (``training``) and ``Sequential`` (``sequential``)."""
