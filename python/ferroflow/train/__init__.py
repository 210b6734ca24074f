"""``tf.train``: optimizers, learning-rate schedules, moving averages, the global step, summary writers."""

from ferroflow.framework.graph_io import write_graph  # noqa: F401
from ferroflow.ops.gradients_impl import AggregationMethod  # noqa: F401
from ferroflow.ops.sdca_ops import sdca_fprint, sdca_optimizer, sdca_shrink_l1  # noqa: F401
from ferroflow.summary.writer import FileWriter as SummaryWriter  # noqa: F401
from ferroflow.summary.writer import FileWriterCache as SummaryWriterCache  # noqa: F401
from ferroflow.summary.writer import summary_iterator  # noqa: F401
from ferroflow.train import queue_runner  # noqa: F401  (tf.train.queue_runner)
from ferroflow.training import experimental  # noqa: F401  (tf.train.experimental)
from ferroflow.training.basic_session_run_hooks import *  # noqa: F401,F403
from ferroflow.training.checkpoint_management import *  # noqa: F401,F403
from ferroflow.training.checkpoint_options import *  # noqa: F401,F403
from ferroflow.training.checkpoint_utils import *  # noqa: F401,F403
from ferroflow.training.coordinator import *  # noqa: F401,F403
from ferroflow.training.device_setter import *  # noqa: F401,F403  (replica_device_setter)
from ferroflow.training.input import *  # noqa: F401,F403  (batch, shuffle_batch, the input producers)
from ferroflow.training.learning_rate_decay import *  # noqa: F401,F403
from ferroflow.training.monitored_session import *  # noqa: F401,F403
from ferroflow.training.moving_averages import *  # noqa: F401,F403
from ferroflow.training.optimizers import *  # noqa: F401,F403
from ferroflow.training.protos import *  # noqa: F401,F403
from ferroflow.training.py_checkpoint_reader import NewCheckpointReader  # noqa: F401
from ferroflow.training.quantize_training import do_quantize_training_on_graphdef  # noqa: F401
from ferroflow.training.queue_runner_impl import *  # noqa: F401,F403
from ferroflow.training.saver import *  # noqa: F401,F403
from ferroflow.training.server_lib import *  # noqa: F401,F403  (ClusterSpec, Server)
from ferroflow.training.session_manager import *  # noqa: F401,F403
from ferroflow.training.session_run_hook import *  # noqa: F401,F403
from ferroflow.training.supervisor import *  # noqa: F401,F403
from ferroflow.training.sync_replicas_optimizer import *  # noqa: F401,F403
from ferroflow.training.tracking import Checkpoint  # noqa: F401
from ferroflow.training.training_util import *  # noqa: F401,F403
from ferroflow.training.warm_starting_util import *  # noqa: F401,F403
