"""Train a digit classifier the TensorFlow 1.x way: what ``ferroflow demo`` runs.

The model is a small multilayer perceptron over the 8x8 UCI handwritten digits shipped with ferroflow
(``ferroflow.datasets.digits``). Training uses only the public TF1 API (``import ferroflow as tf``):
a graph with placeholders, a ``tf.train`` optimizer, and ``tf.train.MonitoredTrainingSession`` with
hooks that feed batches, stop at a step, draw a progress bar, save checkpoints and TensorBoard
summaries, and evaluate the held-out test set when the session closes. Run again with the same log
directory, the session restores the latest checkpoint and training continues from its global step.
"""

from __future__ import annotations

import getpass
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

import ferroflow as tf
from ferroflow.datasets import digits

__all__ = ["DemoError", "DemoResult", "OPTIMIZERS", "ProgressHook", "build_model", "default_logdir",
           "optimizer_names", "resolve_optimizer", "run"]


class DemoError(ValueError):
    """A bad option given to the demo (the message names the option)."""


@dataclass(frozen=True)
class OptimizerChoice:
    """A ``tf.train`` optimizer class (by name) with the demo's default learning rate and extra
    constructor arguments; ``needs_global_step`` for optimizers that take the global step tensor."""

    class_name: str
    learning_rate: float
    kwargs: dict = field(default_factory=dict)
    needs_global_step: bool = False

    def create(self, learning_rate=None, global_step=None):
        """A new optimizer instance (``learning_rate`` overrides the default)."""
        cls = getattr(tf.train, self.class_name)
        lr = self.learning_rate if learning_rate is None else learning_rate
        kwargs = dict(self.kwargs)
        if self.needs_global_step:
            kwargs["global_step"] = global_step
        return cls(lr, **kwargs)


# Learning rates chosen so that each optimizer, with the default steps and batch size, reaches about the
# same test accuracy on this model (measured; see benches/RESULTS.md). TF's own defaults (e.g. Adadelta's
# 0.001) are tuned for other problems and would barely move in a short run.
OPTIMIZERS = {
    "adam": OptimizerChoice("AdamOptimizer", 0.01),
    "sgd": OptimizerChoice("GradientDescentOptimizer", 0.5),
    "momentum": OptimizerChoice("MomentumOptimizer", 0.05, {"momentum": 0.9}),
    "nesterov": OptimizerChoice("MomentumOptimizer", 0.05, {"momentum": 0.9, "use_nesterov": True}),
    "adagrad": OptimizerChoice("AdagradOptimizer", 0.2),
    "adadelta": OptimizerChoice("AdadeltaOptimizer", 1.0, {"rho": 0.95, "epsilon": 1e-6}),
    "rmsprop": OptimizerChoice("RMSPropOptimizer", 0.002),
    "ftrl": OptimizerChoice("FtrlOptimizer", 0.5),
    "proximal-sgd": OptimizerChoice("ProximalGradientDescentOptimizer", 0.5),
    "proximal-adagrad": OptimizerChoice("ProximalAdagradOptimizer", 0.2),
    "adagrad-da": OptimizerChoice("AdagradDAOptimizer", 0.2, needs_global_step=True),
}

# Other spellings accepted by --optimizer (compared after lower-casing and mapping "_" to "-").
_ALIASES = {
    "gradient-descent": "sgd",
    "gd": "sgd",
    "proximal-gradient-descent": "proximal-sgd",
    "adagradda": "adagrad-da",
    "adagrad-d-a": "adagrad-da",
}
for _name, _choice in OPTIMIZERS.items():
    if _name != "nesterov":
        _ALIASES.setdefault(_choice.class_name.lower(), _name)


def optimizer_names():
    """The names ``--optimizer`` accepts, in the order they are documented."""
    return list(OPTIMIZERS)


def resolve_optimizer(name):
    """The key in ``OPTIMIZERS`` for ``name`` (a demo name such as ``"proximal-sgd"`` or a ``tf.train``
    class name such as ``"ProximalGradientDescentOptimizer"``); ``DemoError`` if there is none."""
    key = str(name).strip().lower().replace("_", "-")
    key = _ALIASES.get(key, key)
    if key not in OPTIMIZERS:
        raise DemoError(f"--optimizer: unknown optimizer {name!r} (choose from {', '.join(OPTIMIZERS)})")
    return key


def default_logdir():
    """Where the demo keeps checkpoints and events unless told otherwise: one fixed directory per user
    under the system's temporary directory, so a second run finds the first run's checkpoint."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in the environment or password database
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"ferroflow-demo-{user}")


@dataclass
class Model:
    """The tensors of the demo graph."""

    images: object  # float32 [batch, 64] placeholder, pixels scaled to [0, 1]
    labels: object  # int64 [batch] placeholder
    logits: object
    loss: object
    accuracy: object
    global_step: object
    train_op: object
    test_summary: object  # the test-accuracy scalar summary (kept out of the merged training summaries)


def build_model(optimizer, learning_rate=None, hidden=64, seed=0):
    """Builds the classifier in the default graph: 64 inputs -> ``hidden`` ReLU units -> 10 logits,
    mean sparse softmax cross-entropy, trained by ``OPTIMIZERS[optimizer]``. Adds the ``loss`` and
    ``accuracy`` scalar summaries (merged by the training session) and a separate ``test_accuracy`` one."""
    tf.set_random_seed(seed)
    pixels = digits.IMAGE_SIZE * digits.IMAGE_SIZE
    images = tf.placeholder(tf.float32, [None, pixels], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    with tf.variable_scope("hidden"):
        w1 = tf.get_variable("kernel", [pixels, hidden])
        b1 = tf.get_variable("bias", [hidden], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.matmul(images, w1) + b1)
    with tf.variable_scope("logits"):
        w2 = tf.get_variable("kernel", [hidden, digits.NUM_CLASSES])
        b2 = tf.get_variable("bias", [digits.NUM_CLASSES], initializer=tf.zeros_initializer())
        logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                          name="cross_entropy")
    correct = tf.equal(tf.argmax(logits, 1), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="fraction_correct")
    global_step = tf.train.get_or_create_global_step()
    opt = OPTIMIZERS[optimizer].create(learning_rate, global_step=global_step)
    train_op = opt.minimize(loss, global_step=global_step)
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", accuracy)
    test_summary = tf.summary.scalar("test_accuracy", accuracy, collections=[])
    return Model(images, labels, logits, loss, accuracy, global_step, train_op, test_summary)


class _BatchFeeder(tf.train.SessionRunHook):
    """Feeds each training step a batch of shuffled training images (a new permutation every epoch).

    The shuffling is seeded from ``seed`` and the global step the session starts at, so a resumed run
    does not replay the first run's batches."""

    def __init__(self, model, images, labels, batch_size, seed):
        self._model = model
        self._images = images
        self._labels = labels
        self._batch_size = batch_size
        self._seed = seed
        self.start_step = None

    def after_create_session(self, session, coord):
        self.start_step = int(session.run(self._model.global_step))
        self._rng = np.random.default_rng([self._seed, self.start_step])
        self._order = np.empty(0, dtype=np.int64)

    def _next_indices(self):
        while len(self._order) < self._batch_size:
            self._order = np.concatenate([self._order, self._rng.permutation(len(self._labels))])
        taken, self._order = self._order[: self._batch_size], self._order[self._batch_size :]
        return taken

    def before_run(self, run_context):
        idx = self._next_indices()
        feed = {self._model.images: self._images[idx], self._model.labels: self._labels[idx]}
        return tf.train.SessionRunArgs(fetches=None, feed_dict=feed)


class ProgressHook(tf.train.SessionRunHook):
    """Draws training progress (global step out of the step training stops at, loss, steps per second)
    on ``stream``; the target is the global step the session starts at plus ``num_steps``.

    On a terminal one line is redrawn in place at most ``redraws_per_sec`` times a second; otherwise
    (a pipe, a log file) a plain line is written about every tenth of the run."""

    def __init__(self, loss, num_steps, stream=None, width=24, redraws_per_sec=10.0, is_tty=None):
        self._loss = loss
        self._num_steps = num_steps
        self._stream = sys.stderr if stream is None else stream
        self._width = width
        self._min_interval = 1.0 / redraws_per_sec
        if is_tty is None:
            isatty = getattr(self._stream, "isatty", None)
            is_tty = bool(isatty and isatty())
        self._tty = is_tty

    def begin(self):
        self._global_step = tf.train.get_global_step()

    def after_create_session(self, session, coord):
        self._start_step = self._step = int(session.run(self._global_step))
        self._last_step = self._start_step + self._num_steps
        self._total = max(self._num_steps, 1)
        self._line_every = max(1, math.ceil(self._total / 10))
        self._first_run_end = None
        self._last_draw = 0.0
        self._loss_sum = 0.0
        self._loss_count = 0
        self._shown_loss = float("nan")
        self._drawn = False
        self._drawn_width = 0

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        now = time.perf_counter()
        self._step += 1
        self._loss_sum += float(run_values.results)
        self._loss_count += 1
        if self._first_run_end is None:
            # The first run builds and caches the run plan; the rate is timed from its end.
            self._first_run_end = (now, self._step)
        if self._tty:
            due = now - self._last_draw >= self._min_interval or self._step >= self._last_step
        else:
            due = (self._step - self._start_step) % self._line_every == 0 or self._step >= self._last_step
        if due:
            self._draw(now)

    def end(self, session):
        if self._tty and self._drawn:
            self._stream.write("\n")
            self._stream.flush()

    def steps_per_sec(self, now=None):
        """Training steps per second since the end of the first step (NaN before two steps)."""
        if self._first_run_end is None:
            return float("nan")
        t0, s0 = self._first_run_end
        now = time.perf_counter() if now is None else now
        if self._step <= s0 or now <= t0:
            return float("nan")
        return (self._step - s0) / (now - t0)

    def _draw(self, now):
        if self._loss_count:
            self._shown_loss = self._loss_sum / self._loss_count
            self._loss_sum, self._loss_count = 0.0, 0
        rate = self.steps_per_sec(now)
        rate_text = "  -- steps/s" if math.isnan(rate) else f"{rate:5.0f} steps/s"
        step_width = len(str(self._last_step))
        done = min(self._step - self._start_step, self._total)
        counter = f"step {self._step:{step_width}d}/{self._last_step}"
        if self._tty:
            filled = int(self._width * done / self._total)
            bar = "#" * filled + "-" * (self._width - filled)
            pct = 100.0 * done / self._total
            line = f"{counter} [{bar}] {pct:3.0f}%  loss {self._shown_loss:.4f}  {rate_text}"
            # Blank out what is left of a longer previous frame.
            self._stream.write("\r" + line.ljust(self._drawn_width))
            self._drawn_width = len(line)
        else:
            self._stream.write(f"{counter}  loss {self._shown_loss:.4f}  {rate_text}\n")
        self._stream.flush()
        self._last_draw = now
        self._drawn = True


@dataclass
class DemoResult:
    """What a demo run did."""

    logdir: str
    optimizer: str
    start_step: int
    final_step: int
    test_accuracy: float
    train_seconds: float
    checkpoint: str | None


def _check_options(steps, batch_size, learning_rate, hidden):
    if not isinstance(steps, int) or steps < 0:
        raise DemoError(f"--steps: must be a whole number >= 0, got {steps!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise DemoError(f"--batch-size: must be a whole number >= 1, got {batch_size!r}")
    if learning_rate is not None and not (math.isfinite(learning_rate) and learning_rate > 0):
        raise DemoError(f"--learning-rate: must be a finite number > 0, got {learning_rate!r}")
    if not isinstance(hidden, int) or hidden < 1:
        raise DemoError(f"--hidden: must be a whole number >= 1, got {hidden!r}")


def run(steps=2000, batch_size=64, optimizer="adam", learning_rate=None, logdir=None, seed=0, hidden=64,
        save_checkpoint_steps=1000, save_summaries_steps=50, out=None, progress=None, progress_tty=None,
        hooks=None):
    """Trains (or resumes training of) the digit classifier for ``steps`` more global steps and returns a
    ``DemoResult``. Messages go to ``out`` (default stdout), the progress display to ``progress``
    (default stderr; drawn in place if it is a terminal or ``progress_tty`` is true). ``hooks`` are
    extra ``SessionRunHook``s for the training session.

    A ``KeyboardInterrupt`` during training ends it early but normally: the last checkpoint is saved and
    the test set evaluated."""
    out = sys.stdout if out is None else out
    _check_options(steps, batch_size, learning_rate, hidden)
    key = resolve_optimizer(optimizer)
    logdir = os.path.abspath(os.path.expanduser(default_logdir() if logdir is None else os.fspath(logdir)))
    if os.path.exists(logdir) and not os.path.isdir(logdir):
        raise DemoError(f"--logdir: {logdir} exists and is not a directory")
    try:
        os.makedirs(logdir, exist_ok=True)
    except OSError as e:
        raise DemoError(f"--logdir: cannot create {logdir}: {e.strerror or e}") from None

    (train_x, train_y), (test_x, test_y) = digits.train_test_split()
    scale = np.float32(1.0 / digits.MAX_PIXEL)
    train_x = train_x.reshape(len(train_x), -1).astype(np.float32) * scale
    test_x = test_x.reshape(len(test_x), -1).astype(np.float32) * scale
    train_y = train_y.astype(np.int64)
    test_y = test_y.astype(np.int64)

    choice = OPTIMIZERS[key]
    lr = choice.learning_rate if learning_rate is None else learning_rate
    print(f"ferroflow demo: {len(train_y)} training and {len(test_y)} test images of handwritten digits (8x8)",
          file=out)
    print(f"model: 64 -> {hidden} relu -> 10, optimizer {choice.class_name}(learning_rate={lr:g}), "
          f"batch size {batch_size}", file=out)
    print(f"log directory: {logdir}", file=out)
    print(f"  open it with: tensorboard --logdir {logdir}", file=out)
    out.flush()

    with tf.Graph().as_default():
        model = build_model(key, learning_rate, hidden=hidden, seed=seed)
        feeder = _BatchFeeder(model, train_x, train_y, batch_size, seed)
        final = tf.train.FinalOpsHook(
            {"accuracy": model.accuracy, "summary": model.test_summary, "step": model.global_step},
            final_ops_feed_dict={model.images: test_x, model.labels: test_y},
        )
        stop = tf.train.StopAtStepHook(num_steps=steps)
        progress_hook = ProgressHook(model.loss, steps, stream=progress, is_tty=progress_tty)
        try:
            session = tf.train.MonitoredTrainingSession(
                checkpoint_dir=logdir,
                hooks=[feeder, stop, progress_hook, final, *(hooks or [])],
                save_checkpoint_steps=save_checkpoint_steps,
                save_summaries_steps=save_summaries_steps,
            )
        except (tf.errors.InvalidArgumentError, tf.errors.NotFoundError) as e:
            latest = tf.train.latest_checkpoint(logdir)
            if latest is None:
                raise
            raise DemoError(
                f"--logdir: cannot resume from {latest}, saved for another model or optimizer "
                f"({_restore_mismatch(e)}); give a new --logdir, or the --optimizer and --hidden used before"
            ) from None
        with session as sess:
            start_step = feeder.start_step
            if start_step > 0:
                print(f"resumed from step {start_step} (checkpoint {tf.train.latest_checkpoint(logdir)})", file=out)
            else:
                print("starting from step 0 (no checkpoint in the log directory)", file=out)
            out.flush()
            t0 = time.perf_counter()
            try:
                while steps and not sess.should_stop():
                    sess.run(model.train_op)
            except KeyboardInterrupt:
                # Leave the session normally so that its hooks save a checkpoint and evaluate.
                print("\ninterrupted: saving a checkpoint and evaluating (interrupt again to abort)", file=out)
            train_seconds = time.perf_counter() - t0
        values = final.final_ops_values
        step = int(values["step"])
        writer = tf.summary.FileWriterCache.get(logdir)
        writer.add_summary(values["summary"], step)
        writer.flush()

    accuracy = float(values["accuracy"])
    trained = step - start_step
    rate = f" ({trained / train_seconds:.0f} steps/s)" if trained and train_seconds > 0 else ""
    print(f"trained {trained} steps in {train_seconds:.1f} s{rate}; global step is now {step}", file=out)
    print(f"test accuracy: {accuracy:.2%} ({round(accuracy * len(test_y))}/{len(test_y)} held-out images)",
          file=out)
    checkpoint = tf.train.latest_checkpoint(logdir)
    print(f"checkpoint: {checkpoint}", file=out)
    out.flush()
    return DemoResult(logdir, key, start_step, step, accuracy, train_seconds, checkpoint)


def _restore_mismatch(error):
    """The first specific line (which variable, which key) of a failed restore's message."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for line in lines[1:]:
        if line.startswith(("Variable ", "Key ")):
            return line
    return lines[0] if lines else type(error).__name__
