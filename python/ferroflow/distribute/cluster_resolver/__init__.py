"""``tf.distribute.cluster_resolver``: where the cluster's tasks are and which one this process is."""

from ferroflow.distribute.cluster_resolver.cluster_resolver import (  # noqa: F401
    ClusterResolver,
    SimpleClusterResolver,
    UnionClusterResolver,
)
from ferroflow.distribute.cluster_resolver.tfconfig_cluster_resolver import TFConfigClusterResolver  # noqa: F401

UnionResolver = UnionClusterResolver
