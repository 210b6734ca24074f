"""``tf.estimator``: Estimator with a custom ``model_fn``, the DNN and linear premade estimators, EstimatorSpec,
ModeKeys, RunConfig,
inputs.numpy_input_fn, train_and_evaluate, and TensorFlow's aliases of the tf.train hooks."""

from ferroflow.estimator import experimental, export, inputs  # noqa: F401
from ferroflow.estimator.canned import (  # noqa: F401
    DNNClassifier,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearClassifier,
    LinearRegressor,
)
from ferroflow.estimator.estimator import Estimator, WarmStartSettings  # noqa: F401
from ferroflow.estimator.model_fn import EstimatorSpec, ModeKeys  # noqa: F401
from ferroflow.estimator.run_config import RunConfig  # noqa: F401
from ferroflow.estimator.training import (  # noqa: F401
    BestExporter,
    EvalSpec,
    Exporter,
    FinalExporter,
    LatestExporter,
    TrainSpec,
    train_and_evaluate,
)
from ferroflow.training.basic_session_run_hooks import (  # noqa: F401
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    ProfilerHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from ferroflow.training.session_run_hook import (  # noqa: F401
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
