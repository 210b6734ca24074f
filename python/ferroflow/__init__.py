"""ferroflow: TensorFlow 1.x's training stack with a Rust core. ``import ferroflow as tf``."""
from ferroflow.framework import errors as _errors  # noqa: F401  (registers error classes)
from ferroflow.framework.dtypes import *  # noqa: F401,F403
from ferroflow.framework.ops import *  # noqa: F401,F403
from ferroflow.framework.constant_op import constant  # noqa: F401
from ferroflow.ops.array_ops import *  # noqa: F401,F403
from ferroflow.ops.math_ops import *  # noqa: F401,F403
from ferroflow.client.session import Session, InteractiveSession, get_default_session  # noqa: F401
