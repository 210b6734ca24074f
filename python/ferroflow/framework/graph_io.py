"""``tf.io.write_graph`` / ``tf.train.write_graph``: a graph's ``GraphDef`` written to a file."""

from __future__ import annotations

import os

from ferroflow.platform import gfile

__all__ = ["write_graph"]


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the ``GraphDef`` of ``graph_or_graph_def`` (a ``tf.Graph`` or ``tf.GraphDef``) to ``logdir/name``.

    ``as_text`` chooses protobuf text format (the default, as TF) over binary. ``logdir`` is created if
    needed, the file is replaced atomically, and the path written is returned.
    """
    from ferroflow.framework import ops

    if isinstance(graph_or_graph_def, ops.Graph):
        graph_def = graph_or_graph_def.as_graph_def()
    elif hasattr(graph_or_graph_def, "SerializeToString") and hasattr(graph_or_graph_def, "node"):
        graph_def = graph_or_graph_def
    else:
        raise TypeError(
            f"write_graph: graph_or_graph_def must be a tf.Graph or a tf.GraphDef, got "
            f"{type(graph_or_graph_def).__name__}"
        )
    logdir = os.fspath(logdir)
    path = os.path.join(logdir, os.fspath(name))
    gfile.makedirs(os.path.dirname(path) or ".")
    if as_text:
        from google.protobuf import text_format

        gfile.atomic_write_string_to_file(path, text_format.MessageToString(graph_def))
    else:
        gfile.atomic_write_string_to_file(path, graph_def.SerializeToString())
    return path
