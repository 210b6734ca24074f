"""TensorFlow 1.15's premade estimators over feature columns: ``DNNClassifier``, ``DNNRegressor``,
``LinearClassifier``, ``LinearRegressor`` and ``DNNLinearCombinedClassifier`` (``tf.estimator``'s v1 classes, as
the premade-estimator iris tutorial and the census wide-and-deep tutorial use them).

Their graphs follow TF 1.15's canned ``dnn.py``/``linear.py`` and ``head.py``: the DNN's
``dnn/input_from_feature_columns`` input layer, ``dnn/hiddenlayer_N`` dense layers (glorot uniform kernels, ReLU,
dropout only while training) and ``dnn/logits``; the linear model's ``linear/linear_model``; a softmax (n_classes
> 2), sigmoid (2 classes) or mean-squared-error head whose training loss is the SUM of the examples' losses (the
v1 default reduction); TF's prediction keys (``logits``, ``probabilities``, ``class_ids``, ``classes``,
``all_class_ids``, ``all_classes``; ``logistic`` for two classes; ``predictions`` for regressors) and evaluation
metrics (``accuracy``, ``average_loss``, ``loss``; ``auc``, ``auc_precision_recall``, ``precision``, ``recall``,
``accuracy_baseline``, ``label/mean``, ``prediction/mean`` for two classes; ``label/mean`` and
``prediction/mean`` for regressors). Default optimizers: Adagrad(0.05) for the DNNs, FTRL(min(0.2, 1/sqrt(number of
columns))) for the linear models; the combined classifier trains each part with its own optimizer and then
increments the global step, as TF. ``weight_column`` (a feature key or ``numeric_column``) scales each example's
loss and weighs every metric, the average-loss summary being the training loss over the weights' sum;
``label_vocabulary`` (the class names, as strings) maps string labels to class ids (an unknown label fails the
step's range check) and names the ``classes`` predictions and the exported classes. ``partitioner`` (the linear
models) and ``input_layer_partitioner`` (the DNN input layer; both parts of the combined classifier, as TF)
split those variables into ``part_N`` slices. Not provided: batch norm, the combined regressor and the boosted
trees.
"""

from __future__ import annotations

import math

from ferroflow.estimator import model_fn as model_fn_lib
from ferroflow.estimator.estimator import Estimator
from ferroflow.feature_column import _layers as fc_lib
from ferroflow.framework import dtypes, ops
from ferroflow.layers import core as core_layers
from ferroflow.ops import array_ops, losses_impl, math_ops, metrics_impl, nn_ops, string_ops, variable_scope
from ferroflow.summary import summary_ops
from ferroflow.training import optimizers, training_util

_OPTIMIZERS = {
    "Adagrad": optimizers.AdagradOptimizer,
    "Adam": optimizers.AdamOptimizer,
    "Ftrl": optimizers.FtrlOptimizer,
    "RMSProp": optimizers.RMSPropOptimizer,
    "SGD": optimizers.GradientDescentOptimizer,
}


def _optimizer(opt, learning_rate):
    if isinstance(opt, str):
        if opt not in _OPTIMIZERS:
            raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: {sorted(_OPTIMIZERS)}")
        return _OPTIMIZERS[opt](learning_rate=learning_rate)
    if callable(opt) and not isinstance(opt, optimizers.Optimizer):
        opt = opt()
    if not isinstance(opt, optimizers.Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")
    return opt


def _hidden_summary(value, tag):
    summary_ops.scalar(f"{tag}/fraction_of_zero_values", nn_ops.zero_fraction(value))
    summary_ops.histogram(f"{tag}/activation", value)


def _dnn_logits(features, mode, units, hidden_units, feature_columns, activation_fn, dropout,
                input_layer_partitioner=None):
    with variable_scope.variable_scope("dnn"):
        with variable_scope.variable_scope("input_from_feature_columns", partitioner=input_layer_partitioner):
            net = fc_lib.input_layer(features=features, feature_columns=feature_columns)
        for layer_id, num_units in enumerate(hidden_units):
            with variable_scope.variable_scope(f"hiddenlayer_{layer_id}") as scope:
                net = core_layers.dense(
                    net, units=num_units, activation=activation_fn, kernel_initializer=_glorot(), name=scope
                )
                if dropout is not None and mode == model_fn_lib.ModeKeys.TRAIN:
                    net = core_layers.dropout(net, rate=dropout, training=True)
            _hidden_summary(net, scope.name)
        with variable_scope.variable_scope("logits") as scope:
            logits = core_layers.dense(
                net, units=units, activation=None, kernel_initializer=_glorot(), name=scope
            )
        _hidden_summary(logits, scope.name)
    return logits


def _glorot():
    from ferroflow.ops import init_ops

    return init_ops.glorot_uniform_initializer()


def _linear_logits(features, units, feature_columns, sparse_combiner, partitioner=None):
    with variable_scope.variable_scope("linear", partitioner=partitioner):
        logits = fc_lib.linear_model(features, feature_columns, units=units, sparse_combiner=sparse_combiner)
        bias = [v for v in variable_scope.get_variable_scope().global_variables() if "bias_weights" in v.name]
        if bias:
            if units > 1:
                summary_ops.histogram("bias", bias[0])
            else:
                summary_ops.scalar("bias", bias[0][0])
    return logits


def _labels(labels, shape_last, dtype):
    if labels is None:
        raise ValueError(
            "You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: Check "
            "that your data contain your label feature. Check that your input_fn properly parses "
            "and returns labels."
        )
    if isinstance(labels, dict):
        raise ValueError("labels must be a Tensor, not a dict (multi-head estimators are not supported).")
    labels = ops.convert_to_tensor(labels)
    if labels.shape.ndims == 1:
        labels = array_ops.expand_dims(labels, -1)
    return math_ops.cast(labels, dtype) if dtype is not None else labels


def _class_predictions(logits, class_ids, probabilities, n_classes, label_vocabulary=None):
    batch = array_ops.shape(logits)[0]
    all_ids = array_ops.tile(array_ops.expand_dims(array_ops.range(n_classes), 0), [batch, 1])
    if label_vocabulary:
        from ferroflow.ops import lookup_ops

        table = lookup_ops.index_to_string_table_from_tensor(
            vocabulary_list=list(label_vocabulary), name="class_string_lookup")
        classes = table.lookup(class_ids)
        all_classes = array_ops.tile(array_ops.expand_dims(list(label_vocabulary), 0), [batch, 1])
    else:
        classes = string_ops.as_string(class_ids, name="str_classes")
        all_classes = string_ops.as_string(all_ids)
    return {
        "logits": logits,
        "probabilities": probabilities,
        "class_ids": class_ids,
        "classes": classes,
        "all_class_ids": all_ids,
        "all_classes": all_classes,
    }


def _example_weights(features, weight_column, logits):
    """TF 1.15's ``_get_weights_and_check_match_logits``: the float32 ``[batch, 1]`` weights of
    ``weight_column`` (a feature key or a ``numeric_column``), or None without one."""
    if weight_column is None:
        return None
    from ferroflow.feature_column import _base as fc_base
    from ferroflow.feature_column import _categorical as fc_categorical
    from ferroflow.ops import check_ops

    if isinstance(weight_column, str):
        weight_column = fc_categorical.numeric_column(key=weight_column, shape=(1,))
    if not isinstance(weight_column, fc_categorical._NumericColumn):
        raise TypeError(f"Weight column must be either a string or _NumericColumn. Given type: "
                        f"{type(weight_column)}.")
    with ops.name_scope(None, "weights"):
        weights = weight_column._get_dense_tensor(fc_base._LazyBuilder(features))
        if not (weights.dtype.is_floating or weights.dtype.is_integer):
            raise ValueError(f"Weight column should be castable to float. Given dtype: {weights.dtype}")
        weights = math_ops.cast(weights, dtypes.float32, name="weights")
        if weights.shape.ndims is not None and logits.shape.ndims is not None and (
                weights.shape.ndims == logits.shape.ndims - 1):
            weights = array_ops.expand_dims(weights, -1)
        expected = array_ops.concat([array_ops.shape(logits)[:-1], [1]], axis=0)
        check = check_ops.assert_equal(
            expected, array_ops.shape(weights), message="weights shape must be [D0, D1, ... DN] or "
            "[D0, D1, ... DN, 1]")
        with ops.control_dependencies([check]):
            return array_ops.identity(weights)


def _label_ids(labels, n_classes, label_vocabulary, dtype):
    """Class ids of ``labels`` (looked up in ``label_vocabulary`` when given), checked to lie in
    [0, n_classes), as ``dtype``."""
    from ferroflow.ops import check_ops, lookup_ops

    if label_vocabulary is not None:
        if labels.dtype != dtypes.string:
            raise ValueError(
                f"Labels dtype should be string if there is a vocabulary. Instead got {labels.dtype}")
        labels = lookup_ops.index_table_from_tensor(
            vocabulary_list=tuple(label_vocabulary), name="class_id_lookup").lookup(labels)
    elif not labels.dtype.is_integer and dtype.is_integer:
        raise ValueError(f"Labels dtype should be integer. Instead got {labels.dtype}.")
    labels = math_ops.cast(labels, dtype)
    with ops.name_scope(None, "assert_range", [labels]):
        below = check_ops.assert_less_equal(
            labels, ops.convert_to_tensor(n_classes - 1, dtype=labels.dtype), message="Labels must <= n_classes - 1")
        above = check_ops.assert_non_negative(labels, message="Labels must >= 0")
        with ops.control_dependencies([below, above]):
            return array_ops.identity(labels)


def _head_spec(mode, logits, labels, optimizer, kind, n_classes=None, features=None, weight_column=None,
               label_vocabulary=None):
    """The EstimatorSpec of TF 1.15's multi-class / binary / regression head over ``logits``, the examples
    weighted by ``weight_column`` and string labels mapped through ``label_vocabulary`` when given."""
    if kind == "multi_class":
        probabilities = nn_ops.softmax(logits, name="probabilities")
        class_ids = array_ops.expand_dims(math_ops.argmax(logits, axis=1), -1, name="class_ids")
        predictions = _class_predictions(logits, class_ids, probabilities, n_classes, label_vocabulary)
    elif kind == "binary":
        logistic = math_ops.sigmoid(logits, name="logistic")
        two = array_ops.concat([array_ops.zeros_like(logits), logits], axis=1)
        probabilities = nn_ops.softmax(two, name="probabilities")
        class_ids = array_ops.expand_dims(math_ops.argmax(two, axis=1), -1, name="class_ids")
        predictions = _class_predictions(logits, class_ids, probabilities, 2, label_vocabulary)
        predictions["logistic"] = logistic
    else:
        predictions = {"predictions": logits}
    if mode == model_fn_lib.ModeKeys.PREDICT:
        from ferroflow.estimator import export as export_lib

        if kind == "regression":
            serving = export_lib.RegressionOutput(logits) if logits.shape[-1] == 1 else None
            outputs = {"serving_default": serving, "regression": serving} if serving else {}
        else:
            classify = export_lib.ClassificationOutput(
                scores=predictions["probabilities"], classes=predictions["all_classes"]
            )
            outputs = {"serving_default": classify, "classification": classify}
            if kind == "binary":
                outputs["regression"] = export_lib.RegressionOutput(predictions["logistic"])
        outputs["predict"] = export_lib.PredictOutput(predictions)
        return model_fn_lib.EstimatorSpec(mode, predictions=predictions, export_outputs=outputs)

    none = losses_impl.Reduction.NONE
    if kind == "multi_class":
        labels = _label_ids(_labels(labels, 1, None), n_classes, label_vocabulary, dtypes.int64)
        unreduced = losses_impl.sparse_softmax_cross_entropy(labels, logits, reduction=none)
        unreduced = array_ops.expand_dims(unreduced, -1)
    elif kind == "binary":
        labels = _labels(labels, 1, None)
        if label_vocabulary is not None or labels.dtype == dtypes.string:
            labels = _label_ids(labels, 2, label_vocabulary, dtypes.float32)
        else:
            labels = math_ops.cast(labels, dtypes.float32)
        unreduced = losses_impl.sigmoid_cross_entropy(labels, logits, reduction=none)
    else:
        labels = _labels(labels, logits.shape[-1], dtypes.float32)
        unreduced = losses_impl.mean_squared_error(labels, logits, reduction=none)
    weights = _example_weights(features or {}, weight_column, logits)
    training_loss = losses_impl.compute_weighted_loss(
        unreduced, weights=1.0 if weights is None else weights, reduction=losses_impl.Reduction.SUM)
    summary_ops.scalar("loss", training_loss)
    if weights is None:
        summary_ops.scalar("average_loss", math_ops.reduce_mean(unreduced))
    else:
        summary_ops.scalar("average_loss", training_loss / math_ops.reduce_sum(
            weights * array_ops.ones_like(unreduced)))

    if mode == model_fn_lib.ModeKeys.TRAIN:
        train_op = (
            optimizer(training_loss)
            if callable(optimizer) and not isinstance(optimizer, optimizers.Optimizer)
            else optimizer.minimize(training_loss, global_step=training_util.get_global_step())
        )
        return model_fn_lib.EstimatorSpec(
            mode, predictions=predictions, loss=training_loss, train_op=train_op
        )

    w = weights
    metrics = {"average_loss": metrics_impl.mean(unreduced, weights=w, name="average_loss")}
    if kind in ("multi_class", "binary"):
        metrics["accuracy"] = metrics_impl.accuracy(labels, predictions["class_ids"], weights=w, name="accuracy")
    if kind == "binary":
        logistic = predictions["logistic"]
        metrics["precision"] = metrics_impl.precision(labels, predictions["class_ids"], weights=w,
                                                      name="precision")
        metrics["recall"] = metrics_impl.recall(labels, predictions["class_ids"], weights=w, name="recall")
        metrics["prediction/mean"] = metrics_impl.mean(logistic, weights=w, name="prediction/mean")
        label_mean = metrics_impl.mean(labels, weights=w, name="label/mean")
        metrics["label/mean"] = label_mean
        metrics["accuracy_baseline"] = (
            math_ops.maximum(label_mean[0], 1.0 - label_mean[0]),
            math_ops.maximum(label_mean[1], 1.0 - label_mean[1]),
        )
        metrics["auc"] = metrics_impl.auc(labels, logistic, weights=w, name="auc")
        metrics["auc_precision_recall"] = metrics_impl.auc(
            labels, logistic, weights=w, curve="PR", name="auc_precision_recall"
        )
    if kind == "regression":
        wide = None if w is None else w * array_ops.ones_like(logits)
        metrics["prediction/mean"] = metrics_impl.mean(logits, weights=wide, name="prediction/mean")
        metrics["label/mean"] = metrics_impl.mean(labels, weights=wide, name="label/mean")
    return model_fn_lib.EstimatorSpec(
        mode, predictions=predictions, loss=training_loss, eval_metric_ops=metrics
    )


def _class_kind(n_classes):
    if n_classes < 2:
        raise ValueError(f"n_classes must be > 1 for classification: {n_classes}")
    return "binary" if n_classes == 2 else "multi_class"


def _check_vocabulary(label_vocabulary, kind):
    if label_vocabulary is not None and not isinstance(label_vocabulary, (list, tuple)):
        # TF 1.15's binary head raises TypeError here, its multi-class head ValueError.
        error = TypeError if kind == "binary" else ValueError
        what = "a list or tuple" if kind == "binary" else "a list or a tuple"
        raise error(f"label_vocabulary should be {what}. Given type: {type(label_vocabulary)}")


def _check_columns(feature_columns):
    feature_columns = tuple(feature_columns or ())
    if not feature_columns:
        raise ValueError("feature_columns must be defined.")
    return feature_columns


class DNNClassifier(Estimator):
    """A feed-forward classifier over ``feature_columns`` (TF 1.15's ``tf.estimator.DNNClassifier``)."""

    def __init__(
        self,
        hidden_units,
        feature_columns,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Adagrad",
        activation_fn=nn_ops.relu,
        dropout=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        loss_reduction=None,
        batch_norm=False,
    ):
        if batch_norm:
            raise NotImplementedError("batch_norm is not supported by ferroflow's DNNClassifier")
        kind, columns = _class_kind(n_classes), _check_columns(feature_columns)
        _check_vocabulary(label_vocabulary, kind)
        units = 1 if kind == "binary" else n_classes

        def _model_fn(features, labels, mode, config):
            logits = _dnn_logits(features, mode, units, hidden_units, columns, activation_fn, dropout,
                                 input_layer_partitioner)
            return _head_spec(mode, logits, labels, _optimizer(optimizer, 0.05), kind, n_classes, features,
                              weight_column, label_vocabulary)

        super().__init__(_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNRegressor(Estimator):
    """A feed-forward regressor over ``feature_columns`` (TF 1.15's ``tf.estimator.DNNRegressor``)."""

    def __init__(
        self,
        hidden_units,
        feature_columns,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        optimizer="Adagrad",
        activation_fn=nn_ops.relu,
        dropout=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        loss_reduction=None,
        batch_norm=False,
    ):
        if batch_norm:
            raise NotImplementedError("batch_norm is not supported by ferroflow's DNNRegressor")
        columns = _check_columns(feature_columns)

        def _model_fn(features, labels, mode, config):
            logits = _dnn_logits(
                features, mode, label_dimension, hidden_units, columns, activation_fn, dropout,
                input_layer_partitioner
            )
            return _head_spec(mode, logits, labels, _optimizer(optimizer, 0.05), "regression",
                              features=features, weight_column=weight_column)

        super().__init__(_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


def _linear_rate(columns):
    return min(0.2, 1.0 / math.sqrt(len(columns)))


class LinearClassifier(Estimator):
    """A linear classifier over ``feature_columns`` (TF 1.15's ``tf.estimator.LinearClassifier``)."""

    def __init__(
        self,
        feature_columns,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Ftrl",
        config=None,
        partitioner=None,
        warm_start_from=None,
        loss_reduction=None,
        sparse_combiner="sum",
    ):
        kind, columns = _class_kind(n_classes), _check_columns(feature_columns)
        _check_vocabulary(label_vocabulary, kind)
        units = 1 if kind == "binary" else n_classes

        def _model_fn(features, labels, mode, config):
            logits = _linear_logits(features, units, columns, sparse_combiner, partitioner)
            return _head_spec(
                mode, logits, labels, _optimizer(optimizer, _linear_rate(columns)), kind, n_classes, features,
                weight_column, label_vocabulary
            )

        super().__init__(_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearRegressor(Estimator):
    """A linear regressor over ``feature_columns`` (TF 1.15's ``tf.estimator.LinearRegressor``)."""

    def __init__(
        self,
        feature_columns,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        optimizer="Ftrl",
        config=None,
        partitioner=None,
        warm_start_from=None,
        loss_reduction=None,
        sparse_combiner="sum",
    ):
        columns = _check_columns(feature_columns)

        def _model_fn(features, labels, mode, config):
            logits = _linear_logits(features, label_dimension, columns, sparse_combiner, partitioner)
            return _head_spec(
                mode, logits, labels, _optimizer(optimizer, _linear_rate(columns)), "regression",
                features=features, weight_column=weight_column
            )

        super().__init__(_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


def _wide_and_deep_model_fn(units, linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
                            dnn_hidden_units, dnn_activation_fn, dnn_dropout, input_layer_partitioner,
                            linear_sparse_combiner, head):
    """The model_fn of the DNNLinearCombined estimators: the wide (linear) and deep (DNN) logits added, each part
    trained by its own optimizer; ``head(mode, logits, labels, train_fn, features)`` makes the spec."""
    linear_columns = tuple(linear_feature_columns or ())
    dnn_columns = tuple(dnn_feature_columns or ())
    if not linear_columns and not dnn_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
    if dnn_columns and not dnn_hidden_units:
        raise ValueError(
            "dnn_hidden_units must be defined when dnn_feature_columns is specified. "
            f"Given: {dnn_hidden_units}"
        )

    def _model_fn(features, labels, mode, config):
        logits = []
        if dnn_columns:
            logits.append(
                _dnn_logits(
                    features, mode, units, dnn_hidden_units, dnn_columns, dnn_activation_fn, dnn_dropout,
                    input_layer_partitioner
                )
            )
        if linear_columns:
            logits.append(_linear_logits(features, units, linear_columns, linear_sparse_combiner,
                                         input_layer_partitioner))
        total = logits[0] if len(logits) == 1 else logits[0] + logits[1]

        def train_both(loss):
            from ferroflow.ops import state_ops

            ops_ = []
            global_step = training_util.get_global_step()
            if dnn_columns:
                ops_.append(
                    _optimizer(dnn_optimizer, 0.05).minimize(
                        loss, var_list=ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, scope="dnn")
                    )
                )
            if linear_columns:
                ops_.append(
                    _optimizer(linear_optimizer, _linear_rate(linear_columns)).minimize(
                        loss,
                        var_list=ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, scope="linear"),
                    )
                )
            with ops.control_dependencies(ops_):
                with ops.colocate_with(global_step):
                    return state_ops.assign_add(global_step, 1)

        return head(mode, total, labels, train_both, features)

    return _model_fn


class DNNLinearCombinedClassifier(Estimator):
    """Wide (linear) and deep (DNN) logits added, each part trained by its own optimizer (TF 1.15's
    ``tf.estimator.DNNLinearCombinedClassifier``, the census wide-and-deep tutorial's model)."""

    def __init__(
        self,
        model_dir=None,
        linear_feature_columns=None,
        linear_optimizer="Ftrl",
        dnn_feature_columns=None,
        dnn_optimizer="Adagrad",
        dnn_hidden_units=None,
        dnn_activation_fn=nn_ops.relu,
        dnn_dropout=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        loss_reduction=None,
        batch_norm=False,
        linear_sparse_combiner="sum",
    ):
        if batch_norm:
            raise NotImplementedError(
                "batch_norm is not supported by ferroflow's DNNLinearCombinedClassifier"
            )
        kind = _class_kind(n_classes)
        _check_vocabulary(label_vocabulary, kind)

        def head(mode, logits, labels, train_fn, features):
            return _head_spec(mode, logits, labels, train_fn, kind, n_classes, features, weight_column,
                              label_vocabulary)

        _model_fn = _wide_and_deep_model_fn(
            1 if kind == "binary" else n_classes, linear_feature_columns, linear_optimizer, dnn_feature_columns,
            dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, input_layer_partitioner,
            linear_sparse_combiner, head)
        super().__init__(_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedRegressor(Estimator):
    """The wide-and-deep model as a regressor: linear and DNN outputs of ``label_dimension`` added, the mean
    squared error head (TF 1.15's ``tf.estimator.DNNLinearCombinedRegressor``)."""

    def __init__(
        self,
        model_dir=None,
        linear_feature_columns=None,
        linear_optimizer="Ftrl",
        dnn_feature_columns=None,
        dnn_optimizer="Adagrad",
        dnn_hidden_units=None,
        dnn_activation_fn=nn_ops.relu,
        dnn_dropout=None,
        label_dimension=1,
        weight_column=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        loss_reduction=None,
        batch_norm=False,
        linear_sparse_combiner="sum",
    ):
        if batch_norm:
            raise NotImplementedError(
                "batch_norm is not supported by ferroflow's DNNLinearCombinedRegressor"
            )

        def head(mode, logits, labels, train_fn, features):
            return _head_spec(mode, logits, labels, train_fn, "regression", features=features,
                              weight_column=weight_column)

        _model_fn = _wide_and_deep_model_fn(
            label_dimension, linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
            dnn_hidden_units, dnn_activation_fn, dnn_dropout, input_layer_partitioner, linear_sparse_combiner,
            head)
        super().__init__(_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)
