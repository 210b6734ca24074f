"""``tf.distribute``: what TF1 ps/worker programs use before they touch a server.

``tf.distribute.cluster_resolver`` reads the cluster and this task's role
(``TFConfigClusterResolver`` from the ``TF_CONFIG`` environment variable that
Kubeflow's TFJob, SageMaker and Ray set); ``tf.distribute.Server`` is
``tf.train.Server``, which is not built yet (it raises UnimplementedError).
"""

from ferroflow.distribute import cluster_resolver  # noqa: F401
from ferroflow.training.server_lib import Server  # noqa: F401
