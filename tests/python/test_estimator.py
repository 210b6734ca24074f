"""tf.estimator.Estimator with a custom model_fn against the same model trained, evaluated and run by hand with
tf.train (TensorFlow 2.21 has no tf.estimator to make fixtures with): same losses, metrics, predictions and
checkpoints; plus EstimatorSpec/RunConfig/numpy_input_fn checks as TensorFlow 1.15 makes them."""

import os

import numpy as np
import pytest

import ferroflow as tf

RNG = np.random.RandomState(0)
X = RNG.rand(24, 3).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5], np.float32) > 0).astype(np.int32)
W0 = RNG.randn(3, 2).astype(np.float32) * 0.3


def model(features, labels, mode, params):
    w = tf.get_variable("w", initializer=tf.constant(W0))
    b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
    logits = tf.matmul(features["x"], w) + b
    predictions = {"classes": tf.argmax(logits, 1), "logits": logits}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(
        loss, global_step=tf.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, predictions["classes"])},
    )


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(8)


def eval_input_fn():
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=10, num_epochs=1, shuffle=False)()


def by_hand(steps):
    """The same training with tf.train only: losses per step, then the metrics over X and the logits."""
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        x, y = (
            tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
            .repeat()
            .batch(8)
            .make_one_shot_iterator()
            .get_next()
        )
        spec = model(x, y, tf.estimator.ModeKeys.TRAIN, {"lr": 0.5})
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                losses.append(sess.run([spec.train_op, spec.loss])[1])
            w, b = sess.run(["w:0", "b:0"])
            assert sess.run(gs) == steps
    logits = X @ w + b
    shifted = logits - logits.max(1, keepdims=True)
    xent = -(shifted[np.arange(len(Y)), Y] - np.log(np.exp(shifted).sum(1)))
    return losses, logits, xent, w


def test_train_evaluate_predict_as_by_hand(tmp_path):
    est = tf.estimator.Estimator(
        model,
        model_dir=str(tmp_path),
        params={"lr": 0.5},
        config=tf.estimator.RunConfig(log_step_count_steps=None),
    )
    seen = []

    class Losses(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs("sparse_softmax_cross_entropy_loss/value:0")

        def after_run(self, run_context, run_values):
            seen.append(run_values.results)

    est.train(input_fn, steps=6, hooks=[Losses()])
    want_losses, logits, xent, w = by_hand(6)
    np.testing.assert_allclose(seen, want_losses, rtol=1e-6)
    assert est.latest_checkpoint().endswith("model.ckpt-6")
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-6)
    assert sorted(est.get_variable_names()) == ["b", "global_step", "w"]

    result = est.evaluate(eval_input_fn)
    assert sorted(result) == ["accuracy", "global_step", "loss"]
    assert result["global_step"] == 6
    assert result["accuracy"] == pytest.approx(np.mean(logits.argmax(1) == Y))
    # The loss metric is the mean of the batches' mean losses (batches of 10, 10 and 4).
    batch_means = [xent[i : i + 10].mean() for i in range(0, 24, 10)]
    assert result["loss"] == pytest.approx(np.mean(batch_means), rel=1e-5)
    events = [f for f in os.listdir(tmp_path / "eval") if f.startswith("events.out.tfevents")]
    assert len(events) == 1
    tags = {
        v.tag for e in tf.train.summary_iterator(str(tmp_path / "eval" / events[0])) for v in e.summary.value
    }
    assert tags == {"accuracy", "loss"}

    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": X[:5]}, num_epochs=1, shuffle=False)))
    assert len(preds) == 5 and sorted(preds[0]) == ["classes", "logits"]
    np.testing.assert_allclose([p["logits"] for p in preds], logits[:5], rtol=1e-5)
    batches = list(
        est.predict(
            lambda: tf.data.Dataset.from_tensors({"x": X[:4]}),
            predict_keys=["classes"],
            yield_single_examples=False,
        )
    )
    assert len(batches) == 1 and list(batches[0]) == ["classes"]

    # Resuming: max_steps counts from the checkpoint's global step; reached already means no training.
    est.train(input_fn, max_steps=9)
    assert est.get_variable_value("global_step") == 9
    est.train(input_fn, max_steps=9)
    assert est.get_variable_value("global_step") == 9
    assert est.latest_checkpoint().endswith("model.ckpt-9")


def test_train_and_evaluate(tmp_path):
    est = tf.estimator.Estimator(model, model_dir=str(tmp_path), params={"lr": 0.5})
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(input_fn, max_steps=4), tf.estimator.EvalSpec(eval_input_fn, steps=None)
    )
    assert exports == [] and metrics["global_step"] == 4
    assert metrics == est.evaluate(eval_input_fn)


def test_model_fn_arguments_and_spec_checks(tmp_path):
    with pytest.raises(ValueError, match="must include features argument"):
        tf.estimator.Estimator(lambda x, mode: None)
    with pytest.raises(ValueError, match="does not include params argument"):
        tf.estimator.Estimator(lambda features, mode: None, params={"a": 1})
    with pytest.raises(ValueError, match="different values"):
        tf.estimator.Estimator(model, model_dir="/a", config=tf.estimator.RunConfig(model_dir="/b"))

    def no_labels(features, mode):
        return tf.estimator.EstimatorSpec(mode, predictions=features["x"])

    est = tf.estimator.Estimator(no_labels, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="does not take labels, but input_fn returns labels"):
        est.train(input_fn, steps=1)
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps"):
        est.train(input_fn, steps=1, max_steps=2)

    x = tf.constant([1.0])
    with pytest.raises(ValueError, match="Missing train_op"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="Missing loss"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL)
    with pytest.raises(ValueError, match="Missing predictions"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT)
    with pytest.raises(ValueError, match="Loss must be scalar"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="metric_value, update_op"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=x[0], eval_metric_ops={"m": x})
    assert tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=x).loss.shape.ndims == 0
    assert tf.estimator.ModeKeys.PREDICT == "infer"


def test_run_config_and_numpy_input_fn():
    config = tf.estimator.RunConfig()
    assert config.save_checkpoints_secs == 600 and config.save_checkpoints_steps is None
    assert config.is_chief and config.num_ps_replicas == 0 and config.master == ""
    stepped = config.replace(save_checkpoints_steps=10)
    assert stepped.save_checkpoints_steps == 10 and stepped.save_checkpoints_secs is None
    with pytest.raises(ValueError, match="Can not specify both"):
        tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with pytest.raises(ValueError, match="not a valid property"):
        config.replace(bogus=1)

    with pytest.raises(ValueError, match="shuffle must be provided"):
        tf.estimator.inputs.numpy_input_fn({"x": X})
    with pytest.raises(ValueError, match="duplicate keys"):
        tf.estimator.inputs.numpy_input_fn({"x": X}, {"x": Y}, shuffle=False)
    feats, labels = tf.estimator.inputs.numpy_input_fn(
        {"x": X}, Y, batch_size=5, num_epochs=None, shuffle=True
    )()
    assert feats["x"].shape.as_list() == [5, 3] and labels.shape.as_list() == [5]
    one = tf.estimator.inputs.numpy_input_fn(X, batch_size=10, num_epochs=1, shuffle=False)()
    assert one.shape.as_list() == [None, 3]
    with tf.Session() as sess:
        sizes = []
        while True:
            try:
                sizes.append(len(sess.run(one)))
            except tf.errors.OutOfRangeError:
                break
    assert sizes == [10, 10, 4]


def _columns():
    return [tf.feature_column.numeric_column(k) for k in ("a", "b", "c")]


def _feats(x):
    return {"a": x[:, 0], "b": x[:, 1], "c": x[:, 2]}


def _batches(x, y, n):
    return lambda: tf.data.Dataset.from_tensor_slices((_feats(x), y)).batch(n)


def test_dnn_classifier_heads_against_numpy(tmp_path):
    y3 = (X[:, 0] * 3).astype(np.int32).clip(0, 2)
    est = tf.estimator.DNNClassifier(
        [5],
        _columns(),
        n_classes=3,
        model_dir=str(tmp_path / "m"),
        config=tf.estimator.RunConfig(tf_random_seed=2),
    )
    est.train(lambda: tf.data.Dataset.from_tensor_slices((_feats(X), y3)).repeat().batch(8), steps=5)
    names = est.get_variable_names()
    assert "dnn/hiddenlayer_0/kernel" in names and "dnn/logits/bias/Adagrad" in names
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(_feats(X)).batch(10)))
    logits = np.array([p["logits"] for p in preds])
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    np.testing.assert_allclose([p["probabilities"] for p in preds], probs, rtol=1e-5, atol=1e-7)
    assert [p["class_ids"][0] for p in preds] == list(logits.argmax(1))
    assert preds[0]["classes"][0] == str(logits[0].argmax()).encode()
    assert list(preds[0]["all_class_ids"]) == [0, 1, 2] and list(preds[0]["all_classes"]) == [
        b"0",
        b"1",
        b"2",
    ]
    result = est.evaluate(_batches(X, y3, 10))
    xent = -np.log(probs[np.arange(len(y3)), y3])
    assert result["average_loss"] == pytest.approx(xent.mean(), rel=1e-5)
    # The v1 heads train on the SUM over the batch; 'loss' is that sum's mean over the batches.
    assert result["loss"] == pytest.approx(
        np.mean([xent[i : i + 10].sum() for i in range(0, 24, 10)]), rel=1e-5
    )
    assert result["accuracy"] == pytest.approx(np.mean(logits.argmax(1) == y3))


def test_binary_linear_classifier_and_regressors_against_numpy(tmp_path):
    est = tf.estimator.LinearClassifier(_columns(), model_dir=str(tmp_path / "lin"))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((_feats(X), Y)).repeat().batch(8), steps=4)
    assert "linear/linear_model/a/weights" in est.get_variable_names()
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(_feats(X)).batch(24)))
    logits = np.array([p["logits"][0] for p in preds])
    p1 = 1 / (1 + np.exp(-logits))
    np.testing.assert_allclose([p["logistic"][0] for p in preds], p1, rtol=1e-5)
    np.testing.assert_allclose(
        [p["probabilities"] for p in preds], np.stack([1 - p1, p1], 1), rtol=1e-5, atol=1e-6
    )
    result = est.evaluate(_batches(X, Y, 24))
    assert result["accuracy"] == pytest.approx(np.mean((logits > 0) == Y))
    assert result["accuracy_baseline"] == pytest.approx(max(Y.mean(), 1 - Y.mean()))
    assert result["label/mean"] == pytest.approx(Y.mean()) and result["prediction/mean"] == pytest.approx(
        p1.mean()
    )
    assert 0.0 <= result["auc"] <= 1.0 and {"precision", "recall", "auc_precision_recall"} <= set(result)

    target = X.sum(1)
    for cls, kwargs in (
        (tf.estimator.DNNRegressor, {"hidden_units": [4], "feature_columns": _columns()}),
        (tf.estimator.LinearRegressor, {"feature_columns": _columns()}),
        (tf.estimator.DNNLinearCombinedRegressor, {"linear_feature_columns": _columns(),
                                                   "dnn_feature_columns": _columns(), "dnn_hidden_units": [4]}),
    ):
        reg = cls(model_dir=str(tmp_path / cls.__name__), **kwargs)
        reg.train(lambda: tf.data.Dataset.from_tensor_slices((_feats(X), target)).repeat().batch(8), steps=3)
        out = np.array(
            [
                p["predictions"][0]
                for p in reg.predict(lambda: tf.data.Dataset.from_tensor_slices(_feats(X)).batch(24))
            ]
        )
        res = reg.evaluate(_batches(X, target, 24))
        assert res["average_loss"] == pytest.approx(np.mean((out - target) ** 2), rel=1e-5)
        assert res["loss"] == pytest.approx(np.sum((out - target) ** 2), rel=1e-5)
    with pytest.raises(ValueError, match="n_classes must be > 1"):
        tf.estimator.DNNClassifier([3], _columns(), n_classes=1)
    # weight_column and label_vocabulary are supported (test_estimator_weights.py); a vocabulary must be a list.
    with pytest.raises(TypeError, match="label_vocabulary should be a list or tuple"):
        tf.estimator.LinearClassifier(_columns(), label_vocabulary="ab")


def test_export_saved_model_serves_the_predictions(tmp_path):
    est = tf.estimator.Estimator(model, model_dir=str(tmp_path / "m"), params={"lr": 0.5})
    est.train(input_fn, steps=3)
    want = [p["logits"] for p in est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(24))]
    receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3], name="x")}
    )
    path = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
    assert isinstance(path, bytes) and os.path.basename(path).isdigit()
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], path)
        sig = meta.signature_def["serving_default"]
        assert sorted(sig.outputs) == ["classes", "logits"]
        got = sess.run(sig.outputs["logits"].name, {sig.inputs["x"].name: X})
    np.testing.assert_allclose(got, want, rtol=1e-6)

    # A premade classifier behind a parsing receiver: TF's classify signature and the predict one.
    cls = tf.estimator.DNNClassifier([4], _columns(), n_classes=3, model_dir=str(tmp_path / "dnn"))
    y3 = (X[:, 0] * 3).astype(np.int32).clip(0, 2)
    cls.train(lambda: tf.data.Dataset.from_tensor_slices((_feats(X), y3)).repeat().batch(8), steps=2)
    spec = tf.feature_column.make_parse_example_spec(_columns())
    path = cls.export_savedmodel(
        str(tmp_path / "export2"), tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    )
    example = tf.train.Example(
        features=tf.train.Features(
            feature={
                k: tf.train.Feature(float_list=tf.train.FloatList(value=[float(X[0, i])]))
                for i, k in enumerate("abc")
            }
        )
    )
    want = next(cls.predict(lambda: tf.data.Dataset.from_tensor_slices(_feats(X[:1])).batch(1)))
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        assert sorted(meta.signature_def) == ["classification", "predict", "serving_default"]
        sig = meta.signature_def["serving_default"]
        assert sig.method_name == "tensorflow/serving/classify"
        scores, classes = sess.run(
            [sig.outputs["scores"].name, sig.outputs["classes"].name],
            {sig.inputs["inputs"].name: [example.SerializeToString()]},
        )
    np.testing.assert_allclose(scores[0], want["probabilities"], rtol=1e-5)
    assert list(classes[0]) == [b"0", b"1", b"2"]


def test_train_and_evaluate_runs_the_exporters(tmp_path, monkeypatch):
    # Export directories are named by the second; a counter stands in for the clock so the test need not wait.
    from ferroflow.estimator import export as export_lib

    stamps = iter(range(1000, 2000))
    monkeypatch.setattr(
        export_lib,
        "timestamped_dir",
        lambda base: os.path.join(os.fsencode(base), str(next(stamps)).encode()),
    )
    receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3], name="x")}
    )
    est = tf.estimator.Estimator(
        model,
        model_dir=str(tmp_path),
        params={"lr": 0.5},
        config=tf.estimator.RunConfig(save_checkpoints_steps=2),
    )
    exporters = [
        tf.estimator.FinalExporter("final", receiver_fn),
        tf.estimator.LatestExporter("latest", receiver_fn, exports_to_keep=1),
        tf.estimator.BestExporter(serving_input_receiver_fn=receiver_fn),
    ]
    metrics, paths = tf.estimator.train_and_evaluate(
        est,
        tf.estimator.TrainSpec(input_fn, max_steps=4),
        tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0, exporters=exporters),
    )
    assert metrics["global_step"] == 4 and len(paths) == 3
    final, latest, _ = paths
    assert os.path.dirname(final) == os.fsencode(tmp_path / "export" / "final")
    assert os.listdir(tmp_path / "export" / "latest") == [os.path.basename(latest).decode()]
    assert os.listdir(tmp_path / "export" / "best_exporter")
    with pytest.raises(ValueError, match="unique names"):
        tf.estimator.EvalSpec(
            eval_input_fn, exporters=[exporters[0], tf.estimator.FinalExporter("final", receiver_fn)]
        )
    with pytest.raises(TypeError, match="must be an Exporter"):
        tf.estimator.EvalSpec(eval_input_fn, exporters=["nope"])


def test_early_stopping_hooks_read_the_eval_directory(tmp_path):
    est = tf.estimator.Estimator(model, model_dir=str(tmp_path), params={"lr": 0.5})
    writer = tf.summary.FileWriter(est.eval_dir())
    for step, loss in ((10, 0.9), (20, 0.5), (30, 0.6), (40, 0.7)):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=loss)]), step)
    writer.close()
    assert list(tf.estimator.experimental.read_eval_metrics(est.eval_dir())) == [10, 20, 30, 40]

    def stops(hook):
        hook.begin()
        ctx = tf.train.SessionRunContext(None, None)
        hook.after_run(ctx, tf.train.SessionRunValues(results=0, options=None, run_metadata=None))
        return ctx.stop_requested

    exp = tf.estimator.experimental
    assert stops(exp.stop_if_no_decrease_hook(est, "loss", 20, run_every_secs=None, run_every_steps=1))
    assert not stops(exp.stop_if_no_decrease_hook(est, "loss", 25, run_every_secs=None, run_every_steps=1))
    assert stops(exp.stop_if_lower_hook(est, "loss", 0.6, run_every_secs=None, run_every_steps=1))
    assert not stops(
        exp.stop_if_lower_hook(est, "loss", 0.6, min_steps=25, run_every_secs=None, run_every_steps=1)
    )
    assert stops(exp.stop_if_higher_hook(est, "loss", 0.8, run_every_secs=None, run_every_steps=1))
    assert not stops(exp.stop_if_no_increase_hook(est, "loss", 40, run_every_secs=None, run_every_steps=1))
    # In training: stops at once because the evaluations already show no decrease.
    est.train(
        input_fn,
        steps=50,
        hooks=[exp.stop_if_no_decrease_hook(est, "loss", 20, run_every_secs=None, run_every_steps=1)],
    )
    assert est.get_variable_value("global_step") == 1


def test_wide_and_deep_classifier(tmp_path):
    rng = np.random.RandomState(3)
    n = 40
    feats = {
        "age": rng.randint(18, 70, n).astype(np.float32),
        "job": rng.choice(["a", "b", "c"], n),
        "city": rng.choice(["x", "y"], n),
    }
    label = ((feats["age"] > 40) ^ (feats["job"] == "a")).astype(np.int32)
    age = tf.feature_column.numeric_column("age")
    job = tf.feature_column.categorical_column_with_vocabulary_list("job", ["a", "b", "c"])
    city = tf.feature_column.categorical_column_with_hash_bucket("city", 4)
    buckets = tf.feature_column.bucketized_column(age, [30, 40, 50])
    wide = [job, city, buckets, tf.feature_column.crossed_column([buckets, "job"], 16)]
    deep = [age, tf.feature_column.indicator_column(job), tf.feature_column.embedding_column(city, 2)]
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path),
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=[6, 3],
    )
    train = lambda: tf.data.Dataset.from_tensor_slices((feats, label)).repeat().batch(10)  # noqa: E731
    est.train(train, steps=12)
    names = est.get_variable_names()
    assert est.get_variable_value("global_step") == 12
    assert "dnn/hiddenlayer_1/kernel/Adagrad" in names and "linear/linear_model/job/weights/Ftrl" in names
    result = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((feats, label)).batch(40))
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(feats).batch(40)))
    assert result["accuracy"] == pytest.approx(np.mean([p["class_ids"][0] for p in preds] == label))
    with pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
        tf.estimator.DNNLinearCombinedClassifier(dnn_feature_columns=deep)
