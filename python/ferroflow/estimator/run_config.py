"""``tf.estimator.RunConfig``: where an Estimator keeps its model and how often it saves, summarizes and logs;
the cluster properties come from ``TF_CONFIG`` as TensorFlow reads it (``ferroflow.distribute.run_config``)."""

from __future__ import annotations

import copy

from ferroflow.distribute.run_config import TFConfig

_DEFAULT_SAVE_CHECKPOINTS_SECS = 600
_REPLACEABLE = (
    "model_dir",
    "tf_random_seed",
    "save_summary_steps",
    "save_checkpoints_steps",
    "save_checkpoints_secs",
    "session_config",
    "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours",
    "log_step_count_steps",
    "train_distribute",
    "device_fn",
    "protocol",
    "eval_distribute",
    "experimental_distribute",
    "experimental_max_worker_delay_secs",
    "session_creation_timeout_secs",
)


class RunConfig:
    """Estimator run settings (TensorFlow 1.15's arguments and defaults)."""

    def __init__(
        self,
        model_dir=None,
        tf_random_seed=None,
        save_summary_steps=100,
        save_checkpoints_steps=None,
        save_checkpoints_secs=None,
        session_config=None,
        keep_checkpoint_max=5,
        keep_checkpoint_every_n_hours=10000,
        log_step_count_steps=100,
        train_distribute=None,
        device_fn=None,
        protocol=None,
        eval_distribute=None,
        experimental_distribute=None,
        experimental_max_worker_delay_secs=None,
        session_creation_timeout_secs=7200,
    ):
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not specify both save_checkpoints_steps and save_checkpoints_secs.")
        if save_checkpoints_steps is None and save_checkpoints_secs is None:
            save_checkpoints_secs = _DEFAULT_SAVE_CHECKPOINTS_SECS
        for name, value in (
            ("save_summary_steps", save_summary_steps),
            ("save_checkpoints_steps", save_checkpoints_steps),
            ("save_checkpoints_secs", save_checkpoints_secs),
            ("keep_checkpoint_max", keep_checkpoint_max),
            ("log_step_count_steps", log_step_count_steps),
        ):
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0, given {name}={value}")
        tf_config = TFConfig.from_env()
        if model_dir is None:
            model_dir = tf_config.model_dir
        elif tf_config.model_dir and tf_config.model_dir != model_dir:
            raise ValueError(
                f"`model_dir` provided in RunConfig construct, if set, must have the same value as the model_dir "
                f'in TF_CONFIG. model_dir: {model_dir}\nTF_CONFIG["model_dir"]: {tf_config.model_dir}.\n'
            )
        self._model_dir = model_dir
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = train_distribute
        self._device_fn = device_fn
        self._protocol = protocol
        self._eval_distribute = eval_distribute
        self._experimental_distribute = experimental_distribute
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._tf_config = tf_config

    def replace(self, **kwargs):
        """A copy with the given settings changed (the ones the constructor takes)."""
        for key in kwargs:
            if key not in _REPLACEABLE:
                raise ValueError(f"{key} is not a valid property.")
        new = copy.copy(self)
        args = {k: getattr(self, k) for k in _REPLACEABLE}
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
            args["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs:
            args["save_checkpoints_steps"] = None
        args.update(kwargs)
        new.__init__(**args)
        return new

    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: self._train_distribute)
    device_fn = property(lambda self: self._device_fn)
    protocol = property(lambda self: self._protocol)
    eval_distribute = property(lambda self: self._eval_distribute)
    experimental_distribute = property(lambda self: self._experimental_distribute)
    experimental_max_worker_delay_secs = property(lambda self: self._experimental_max_worker_delay_secs)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    cluster_spec = property(lambda self: self._tf_config.cluster_spec)
    task_type = property(lambda self: self._tf_config.task_type)
    task_id = property(lambda self: self._tf_config.task_id)
    master = property(lambda self: self._tf_config.master)
    evaluation_master = property(lambda self: self._tf_config.evaluation_master)
    is_chief = property(lambda self: self._tf_config.is_chief)
    num_ps_replicas = property(lambda self: self._tf_config.num_ps_replicas)
    num_worker_replicas = property(lambda self: self._tf_config.num_worker_replicas)
    global_id_in_cluster = property(lambda self: self._tf_config.global_id_in_cluster)
    service = property(lambda self: self._tf_config.tf_config.get("service"))
