"""``tf.estimator.experimental``: early stopping hooks and ``read_eval_metrics``."""

from ferroflow.estimator.early_stopping import (  # noqa: F401
    make_early_stopping_hook,
    read_eval_metrics,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
