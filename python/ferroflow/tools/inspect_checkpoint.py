"""Lists or prints the tensors of a checkpoint (TensorFlow's ``inspect_checkpoint`` tool).

``python -m ferroflow.tools.inspect_checkpoint --file_name PREFIX`` prints one
``name (DT_...) [dims]`` line per tensor; ``--tensor_name NAME`` prints that
tensor's value; ``--all_tensors`` prints every value; ``--all_tensor_names``
only the names. ``ferroflow inspect-checkpoint PATH [--tensor NAME] [--all]``
is the same through the ``ferroflow`` command. PATH may be a checkpoint
prefix or a directory with a ``checkpoint`` state file.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

_BFLOAT16 = 14


class InspectError(Exception):
    """A checkpoint that cannot be opened or a tensor it does not hold (message names which)."""


def _open(path):
    from ferroflow import _native
    from ferroflow.framework import errors
    from ferroflow.training import checkpoint_management

    path = os.fspath(path)
    prefix = path
    if os.path.isdir(path):
        prefix = checkpoint_management.latest_checkpoint(path)
        if prefix is None:
            raise InspectError(f"no checkpoint found in directory {path} (no valid 'checkpoint' state file)")
    elif path.endswith(".index") and not os.path.exists(path + ".index"):
        prefix = path[: -len(".index")]
    try:
        return prefix, _native.CheckpointReader(prefix)
    except errors.OpError as e:
        raise InspectError(f"cannot read checkpoint {prefix}: {e.message}") from None
    except OSError as e:
        raise InspectError(f"cannot read checkpoint {prefix}: {e}") from None


def _value(reader, prefix, name):
    from ferroflow.framework import errors

    if not reader.has_tensor(name):
        raise InspectError(f"tensor '{name}' is not in checkpoint {prefix}")
    try:
        value = reader.get_tensor(name)
    except errors.OpError as e:
        raise InspectError(f"cannot read tensor '{name}' of checkpoint {prefix}: {e.message}") from None
    if reader.variable_to_dtype_map().get(name) == _BFLOAT16:
        bits = np.asarray(value, dtype=np.uint16).astype(np.uint32) << 16
        value = bits.view(np.float32)
    return value


def inspect(path, tensor_name=None, all_tensors=False, all_tensor_names=False, out=None):
    """Writes what ``inspect_checkpoint`` prints for ``path`` to ``out`` (stdout); raises InspectError."""
    out = out or sys.stdout
    prefix, reader = _open(path)
    if all_tensor_names or all_tensors:
        for name in sorted(reader.variable_to_shape_map()):
            print(f"tensor_name:  {name}", file=out)
            if all_tensors:
                print(_value(reader, prefix, name), file=out)
        return
    if tensor_name:
        print(f"tensor_name:  {tensor_name}", file=out)
        print(_value(reader, prefix, tensor_name), file=out)
        return
    out.write(reader.debug_string().decode("utf-8", "backslashreplace"))


def _total_params(reader, count_exclude_pattern=""):
    import re

    shapes = reader.variable_to_shape_map()
    if count_exclude_pattern:
        pattern = re.compile(count_exclude_pattern)
        excluded = [k for k in shapes if pattern.search(k)]
        n_excluded = sum(int(np.prod(shapes[k])) for k in excluded)
        print(f"# Excluding {len(excluded)} tensors ({n_excluded} params) that match {count_exclude_pattern} "
              "when counting.")
        shapes = {k: v for k, v in shapes.items() if k not in excluded}
    return sum(int(np.prod(v)) for v in shapes.values())


def print_tensors_in_checkpoint_file(file_name, tensor_name, all_tensors, all_tensor_names=False,
                                     count_exclude_pattern=""):
    """TensorFlow's Python function of this tool (the "Save and Restore" guide's ``chkp``), printing as
    TF 2.21 prints: ``tensor: NAME (DTYPE) SHAPE`` lines (each followed by the value when asked), the debug
    string when neither a name nor ``all_*`` is given, then ``# Total number of params: N``. A checkpoint
    that cannot be read prints its error instead, as TF does."""
    from ferroflow.framework import dtypes

    try:
        prefix, reader = _open(file_name)
        shapes = reader.variable_to_shape_map()
        types = reader.variable_to_dtype_map()
        if all_tensors or all_tensor_names:
            for key in sorted(shapes):
                print(f"tensor: {key} ({dtypes.as_dtype(types[key]).name}) {list(shapes[key])}")
                if all_tensors:
                    print(_value(reader, prefix, key))
        elif not tensor_name:
            print(reader.debug_string().decode("utf-8", "ignore"))
        else:
            if not reader.has_tensor(tensor_name):
                print(f"Tensor {tensor_name} not found in checkpoint")
                return
            print(f"tensor: {tensor_name} ({dtypes.as_dtype(types[tensor_name]).name}) "
                  f"{list(shapes[tensor_name])}")
            print(_value(reader, prefix, tensor_name))
        print(f"# Total number of params: {_total_params(reader, count_exclude_pattern)}")
    except InspectError as e:
        print(str(e))


def _option_value(text):
    """A --printoptions value: an int, a float (``inf`` too), a bool, else the string."""
    if text in ("True", "False"):
        return text == "True"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def main(argv=None):
    """``python -m ferroflow.tools.inspect_checkpoint``: TensorFlow's flags."""
    parser = argparse.ArgumentParser(prog="inspect_checkpoint", description=__doc__.splitlines()[0])
    parser.add_argument("--file_name", default="", help="checkpoint prefix or directory")
    parser.add_argument("--tensor_name", default="", help="print only this tensor")
    parser.add_argument("--all_tensors", action="store_true", help="print every tensor's value")
    parser.add_argument("--all_tensor_names", action="store_true", help="print every tensor's name")
    parser.add_argument("--printoptions", nargs="*", default=[], metavar="KEY=VALUE",
                        help="numpy print options, e.g. threshold=100000")
    args = parser.parse_args(argv)
    if not args.file_name:
        print("Usage: inspect_checkpoint --file_name=checkpoint_file_name [--tensor_name=tensor_to_print] "
              "[--all_tensors] [--all_tensor_names] [--printoptions]", file=sys.stderr)
        return 1
    options = {}
    for item in args.printoptions:
        key, _, value = item.partition("=")
        options[key] = _option_value(value)
    try:
        with np.printoptions(**options):
            inspect(args.file_name, args.tensor_name, args.all_tensors, args.all_tensor_names)
    except (InspectError, TypeError) as e:
        print(f"inspect_checkpoint: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
