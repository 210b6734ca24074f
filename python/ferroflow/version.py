"""``tf.version``: the version constants (``tf.version.VERSION`` is ``tf.VERSION``)."""

from ferroflow.framework.versions import (  # noqa: F401
    COMPILER_VERSION,
    GIT_VERSION,
    GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER,
    VERSION,
)
