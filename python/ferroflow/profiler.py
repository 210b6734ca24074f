"""``tf.profiler``: parameter and float-operation counts of a graph (``ferroflow.framework.profiler_impl``)."""

from ferroflow.framework.profiler_impl import (  # noqa: F401
    GraphNodeProto,
    MultiGraphNodeProto,
    ProfileOptionBuilder,
    profile,
)
