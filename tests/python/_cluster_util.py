"""Ports and cluster specs for the tests that start servers.

Ports come from the package's own picker (the one ``tf.test.create_local_cluster`` uses): below Linux's
ephemeral range, so that no outgoing connection (a worker retrying its connection to a ps that is not up
yet) takes a port before, or while, a test restarts a server on it.
"""

from ferroflow.framework.test_util import _pick_unused_ports as free_ports


def free_port():
    return free_ports(1)[0]


def cluster(ps=1, workers=1):
    """A ``{"ps": [...], "worker": [...]}`` spec on free localhost ports."""
    ports = free_ports(ps + workers)
    return {"ps": [f"localhost:{p}" for p in ports[:ps]], "worker": [f"localhost:{p}" for p in ports[ps:]]}
