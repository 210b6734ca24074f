"""``tf.Module``: named containers of variables and submodules (``module.py``)."""
