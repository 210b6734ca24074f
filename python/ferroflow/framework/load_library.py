"""``tf.load_op_library`` and friends: TensorFlow's custom-op plugins are C++ shared objects built
against TensorFlow's kernel ABI, which ferroflow does not have; loading one is refused with a
clear error instead of crashing the process."""

from __future__ import annotations

import os

from ferroflow.framework import errors


def _refuse(path, what):
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{path}: cannot open shared object file: No such file or directory")
    raise errors.UnimplementedError(
        None, None, f"{path}: ferroflow cannot load TensorFlow {what} (they are C++ plugins for TensorFlow's "
        "runtime); write the op in Python with tf.py_func or as ferroflow ops"
    )


def load_op_library(library_filename):
    """Refused: TensorFlow custom-op libraries cannot run in ferroflow (NotFoundError if the file is absent)."""
    _refuse(library_filename, "custom-op libraries")


def load_library(library_location):
    """Refused like ``load_op_library`` (for a file or every library in a directory)."""
    _refuse(library_location, "kernel libraries")


def load_file_system_library(library_filename):
    """Refused like ``load_op_library``."""
    _refuse(library_filename, "file-system plugins")
