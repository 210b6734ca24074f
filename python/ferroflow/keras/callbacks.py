"""``tf.keras.callbacks``: hooks ``Model.fit`` calls at the start and end of training, epochs and batches.

``History`` (``model.fit``'s return value), ``EarlyStopping``, ``ModelCheckpoint``, ``LambdaCallback``,
``LearningRateScheduler``, ``ReduceLROnPlateau``, ``TerminateOnNaN``, ``CSVLogger``, ``ProgbarLogger`` and
``TensorBoard`` (epoch scalars through ``tf.summary.FileWriter``).
"""

from __future__ import annotations

import csv
import math
import os
import sys
import time
import warnings

import numpy as np

from ferroflow.keras import backend as K

__all__ = ["BaseLogger", "Callback", "CallbackList", "CSVLogger", "EarlyStopping", "History", "LambdaCallback",
           "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger", "ReduceLROnPlateau", "TensorBoard",
           "TerminateOnNaN"]


class Callback:
    """Base class: override any of the ``on_*`` methods; ``self.model`` and ``self.params`` are set by fit."""

    def __init__(self):
        self.model = None
        self.params = {}
        self.validation_data = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass


class CallbackList:
    """Calls each hook on every callback in order."""

    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])

    def append(self, callback):
        self.callbacks.append(callback)

    def set_params(self, params):
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        for c in self.callbacks:
            c.set_model(model)

    def __getattr__(self, name):
        if not name.startswith("on_"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            for c in self.callbacks:
                getattr(c, name)(*args, **kwargs)

        return call

    def __iter__(self):
        return iter(self.callbacks)


class BaseLogger(Callback):
    """Kept for compatibility: ``fit`` itself averages the epoch's metrics over its samples."""

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])


class History(Callback):
    """Records each epoch's logs: ``history.history['loss']``, ``['acc']``, ``['val_loss']``, ...; and ``epoch``."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


def _format_value(v, signed=True):
    """A logged value as Keras's progress bar prints it: 4 decimals, or 4 significant digits when small (an array
    of values, one per threshold, by its mean); verbose 2 tests the value itself, verbose 1 its magnitude."""
    v = float(np.mean(v))
    return f"{v:.4f}" if (abs(v) if signed else v) > 1e-3 else f"{v:.4e}"


def _format_time(seconds, unit):
    """`` 12ms/sample``: a duration per unit in s, ms or us, as Keras prints it."""
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/{unit}"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/{unit}"
    return f" {seconds * 1e6:.0f}us/{unit}"


class ProgbarLogger(Callback):
    """Prints progress to stdout as Keras's progress bar does: ``Epoch 1/5``, then with verbose 1 a bar redrawn
    after each batch (``\\r``, at most every 0.05 s) that ends as ``60/60 [======] - 0s 1ms/sample - loss: ...``;
    with verbose 2 one line per epoch, ``60/60 - 0s - loss: ... - 52ms/epoch - 1ms/sample``. Counts are samples
    (arrays) or steps (datasets, generators)."""

    _WIDTH = 30
    _INTERVAL = 0.05

    def __init__(self, count_mode="samples", stateful_metrics=None):
        super().__init__()
        self.count_mode = count_mode

    def on_train_begin(self, logs=None):
        self.verbose = self.params.get("verbose", 1)
        self.epochs = self.params.get("epochs", 1)

    def _by_samples(self):
        return self.count_mode != "steps" and bool(self.params.get("samples"))

    def _target(self):
        return (self.params.get("samples") if self._by_samples() else self.params.get("steps")) or 0

    def _unit(self):
        return "sample" if self._by_samples() else "step"

    def on_epoch_begin(self, epoch, logs=None):
        if self.verbose:
            print(f"Epoch {epoch + 1}/{self.epochs}")
            self._start = time.time()
            self._last_update = 0.0
            self._seen = 0
            self._width = 0

    def _bar(self, current, target):
        if not target:  # a dataset or generator of unknown length
            return f"{current:7d}/Unknown"
        digits = len(str(target))
        done = int(self._WIDTH * current / target) if target else self._WIDTH
        arrow = "=" * (done - 1) + ("=" if current >= target else ">") if done > 0 else ""
        return f"{current:>{digits}d}/{target} [" + arrow + "." * (self._WIDTH - done) + "]"

    def _redraw(self, text):
        pad = " " * max(self._width - len(text), 0)
        sys.stdout.write("\b" * self._width + "\r" + text + pad)
        self._width = len(text)

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        self._seen += logs.get("size", 0) if self._by_samples() else 1
        if self.verbose != 1:
            return
        now = time.time()
        target = self._target()
        if now - self._last_update < self._INTERVAL or (target and self._seen >= target):
            return  # the epoch's end draws the finished bar
        self._last_update = now
        per_unit = (now - self._start) / max(self._seen, 1)
        eta = per_unit * (target - self._seen)
        eta_text = (f"{int(eta // 3600)}:{int(eta % 3600 // 60):02d}:{int(eta % 60):02d}" if eta > 3600 else
                    f"{int(eta // 60)}:{int(eta % 60):02d}" if eta > 60 else f"{int(eta)}s")
        parts = "".join(f" - {k}: {_format_value(v)}" for k, v in logs.items() if k not in ("batch", "size"))
        self._redraw(self._bar(self._seen, target) + f" - ETA: {eta_text}" + parts)
        sys.stdout.flush()

    def on_epoch_end(self, epoch, logs=None):
        if not self.verbose:
            return
        target = self._target() or self._seen
        took = time.time() - self._start
        per_unit = took / max(target, 1)
        if self.verbose == 1:
            parts = "".join(f" - {k}: {_format_value(v)}" for k, v in (logs or {}).items())
            self._redraw(self._bar(target, target) + f" - {took:.0f}s" + _format_time(per_unit, self._unit())
                         + parts)
            sys.stdout.write("\n")
        else:
            parts = "".join(f" - {k}: {_format_value(v, signed=False)}" for k, v in (logs or {}).items())
            sys.stdout.write(f"{target:>{len(str(target))}d}/{target} - {took:.0f}s" + parts + " -"
                             + _format_time(took, "epoch") + " -" + _format_time(per_unit, self._unit()) + "\n")
        sys.stdout.flush()


def _monitor_op(mode, monitor):
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"mode {mode} is unknown, fallback to auto mode.", stacklevel=3)
        mode = "auto"
    if mode == "min" or (mode == "auto" and not ("acc" in monitor or monitor.startswith("fmeasure"))):
        return np.less
    return np.greater


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has not improved by ``min_delta`` for ``patience`` epochs."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.restore_best_weights = restore_best_weights
        self.monitor_op = _monitor_op(mode, monitor)
        if self.monitor_op == np.less:
            self.min_delta *= -1
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op == np.less else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                          f"Available metrics are: {','.join(logs or {})}", stacklevel=2)
            return
        if self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.wait = 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.model.stop_training = True
                if self.restore_best_weights and self.best_weights is not None:
                    if self.verbose > 0:
                        print("Restoring model weights from the end of the best epoch.")
                    self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1:05d}: early stopping")


class ModelCheckpoint(Callback):
    """Saves the model (or only its weights) after each ``period`` epochs to ``filepath`` (formatted with
    ``epoch`` and the logs, e.g. ``'weights.{epoch:02d}-{val_loss:.2f}.ckpt'``); ``save_best_only`` saves only
    when ``monitor`` improves."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", period=1, save_freq="epoch", **kwargs):
        super().__init__()
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.period = period
        self.monitor_op = _monitor_op(mode, monitor)
        self.best = np.inf if self.monitor_op == np.less else -np.inf
        self.epochs_since_last_save = 0

    def _save(self, filepath):
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        self.epochs_since_last_save += 1
        if self.epochs_since_last_save < self.period:
            return
        self.epochs_since_last_save = 0
        filepath = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                warnings.warn(f"Can save best model only with {self.monitor} available, skipping.", stacklevel=2)
                return
            if self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1:05d}: {self.monitor} improved from {self.best:.5f} to {current:.5f},"
                          f" saving model to {filepath}")
                self.best = current
                self._save(filepath)
            elif self.verbose > 0:
                print(f"\nEpoch {epoch + 1:05d}: {self.monitor} did not improve from {self.best:.5f}")
        else:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1:05d}: saving model to {filepath}")
            self._save(filepath)


class LambdaCallback(Callback):
    """A callback from functions: ``on_epoch_begin(epoch, logs)``, ``on_epoch_end``, ``on_batch_begin(batch,
    logs)``, ``on_batch_end``, ``on_train_begin(logs)``, ``on_train_end``."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
                 on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        noop2 = lambda a, logs=None: None  # noqa: E731
        noop1 = lambda logs=None: None  # noqa: E731
        self.on_epoch_begin = on_epoch_begin or noop2
        self.on_epoch_end = on_epoch_end or noop2
        self.on_batch_begin = on_batch_begin or noop2
        self.on_batch_end = on_batch_end or noop2
        self.on_train_begin = on_train_begin or noop1
        self.on_train_end = on_train_end or noop1
        for k, v in kwargs.items():
            setattr(self, k, v)


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate to ``schedule(epoch)`` (or ``schedule(epoch, lr)``) each epoch."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr_var = getattr(self.model.optimizer, "lr", None)
        if lr_var is None or callable(lr_var) and not hasattr(lr_var, "op"):
            raise ValueError('Optimizer must have a "lr" attribute.')
        try:
            lr = self.schedule(epoch, float(K.get_value(lr_var)))
        except TypeError:
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, np.floating, int)):
            raise ValueError('The output of the "schedule" function should be float.')
        K.set_value(lr_var, lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = float(K.get_value(self.model.optimizer.lr))


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` when ``monitor`` stalls for ``patience`` epochs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, verbose
        self.min_delta, self.cooldown, self.min_lr = min_delta, cooldown, min_lr
        op = _monitor_op(mode, monitor)
        self.monitor_op = (lambda a, b: np.less(a, b - min_delta)) if op == np.less else \
            (lambda a, b: np.greater(a, b + min_delta))
        self.best = np.inf if op == np.less else -np.inf
        self.wait = 0
        self.cooldown_counter = 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        logs["lr"] = float(K.get_value(self.model.optimizer.lr))
        current = logs.get(self.monitor)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(K.get_value(self.model.optimizer.lr))
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    K.set_value(self.model.optimizer.lr, new)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1:05d}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class TerminateOnNaN(Callback):
    """Stops training when a batch's loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (math.isnan(loss) or math.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class CSVLogger(Callback):
    """Writes each epoch's logs as a row of ``filename`` (``epoch`` first, then the keys in sorted order)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self._file = None
        self._writer = None

    def on_train_begin(self, logs=None):
        exists = os.path.exists(self.filename) and self.append
        self._file = open(self.filename, "a" if self.append else "w", newline="")  # noqa: SIM115
        self._has_header = exists

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        keys = sorted(logs)
        if self._writer is None:
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch"] + keys, delimiter=self.sep)
            if not self._has_header:
                self._writer.writeheader()
        self._writer.writerow(dict({"epoch": epoch}, **{k: logs[k] for k in keys}))
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
        self._file = None
        self._writer = None


class TensorBoard(Callback):
    """Writes each epoch's logs as scalar summaries to ``log_dir`` (one event file, ``tf.summary.FileWriter``);
    ``write_graph`` adds the graph. Histograms, images and embeddings are not written."""

    def __init__(self, log_dir="./logs", histogram_freq=0, batch_size=32, write_graph=True, write_grads=False,
                 write_images=False, update_freq="epoch", **kwargs):
        super().__init__()
        self.log_dir = os.fspath(log_dir)
        self.write_graph = write_graph
        self.update_freq = update_freq
        self.writer = None

    def set_model(self, model):
        from ferroflow.summary.writer import FileWriter

        super().set_model(model)
        graph = K.get_session().graph if self.write_graph else None
        self.writer = FileWriter(self.log_dir, graph=graph)

    def on_epoch_end(self, epoch, logs=None):
        from ferroflow.core.framework import summary_pb2

        summary = summary_pb2.Summary()
        for name, value in (logs or {}).items():
            if name in ("batch", "size"):
                continue
            summary.value.add(tag=name, simple_value=float(value))
        self.writer.add_summary(summary, epoch)
        self.writer.flush()

    def on_train_end(self, logs=None):
        if self.writer is not None:
            self.writer.close()
