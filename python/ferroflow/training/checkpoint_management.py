"""The ``checkpoint`` state file and checkpoint bookkeeping (``tf.train.latest_checkpoint`` & co.).

A checkpoint directory holds checkpoints (``P.index`` + ``P.data-*`` and
optionally ``P.meta``) and a ``checkpoint`` file: a text-format
``CheckpointState`` naming the newest one and the ones still kept. The state
file is replaced atomically (written to a temporary file in the same
directory, flushed, fsync'ed, renamed), so a reader never sees half of it.
"""

from __future__ import annotations

import glob
import logging
import os
import re
import time

from ferroflow.framework import errors
from ferroflow.framework.ops import get_default_session
from ferroflow.platform import gfile
from ferroflow.protos import CheckpointState, SaverDef

__all__ = [
    "CheckpointManager",
    "checkpoint_exists",
    "checkpoints_iterator",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "latest_checkpoint",
    "remove_checkpoint",
    "update_checkpoint_state",
]

_logger = logging.getLogger("ferroflow")

_SHARD_SUFFIX = re.compile(r"-[\d?]+-of-\d+$")


def _text_format():
    from google.protobuf import text_format

    return text_format


def _glob(pattern):
    """Files matching ``pattern`` (a literal path that exists also matches)."""
    if os.path.exists(pattern):
        return [pattern]
    try:
        return glob.glob(pattern)
    except re.error:
        return []


def _prefix_to_checkpoint_path(prefix, format_version=SaverDef.V2):
    """The file whose existence says the checkpoint ``prefix`` exists."""
    if format_version == SaverDef.V2:
        return prefix + ".index"
    return prefix


def meta_graph_filename(checkpoint_filename, meta_graph_suffix="meta"):
    """``model.ckpt-3`` -> ``model.ckpt-3.meta`` (a V1 shard suffix ``-?????-of-N`` is dropped first)."""
    basename = _SHARD_SUFFIX.sub("", checkpoint_filename)
    return basename + "." + meta_graph_suffix


def _get_checkpoint_filename(save_dir, latest_filename):
    if latest_filename is None:
        latest_filename = "checkpoint"
    return os.path.join(save_dir, latest_filename)


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    """A ``CheckpointState`` for ``save_dir``.

    ``model_checkpoint_path`` is appended to ``all_model_checkpoint_paths``
    if it is not already last. If ``save_dir`` is relative, relative paths
    are rewritten relative to it (so the directory can be moved).
    """
    if all_model_checkpoint_paths is None:
        all_model_checkpoint_paths = []
    all_model_checkpoint_paths = list(all_model_checkpoint_paths)
    if not all_model_checkpoint_paths or all_model_checkpoint_paths[-1] != model_checkpoint_path:
        _logger.info("%s is not in all_model_checkpoint_paths. Manually adding it.", model_checkpoint_path)
        all_model_checkpoint_paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps and len(all_model_checkpoint_timestamps) != len(all_model_checkpoint_paths):
        raise ValueError(
            f"Checkpoint timestamps, if provided, must match checkpoint paths (got paths "
            f"{all_model_checkpoint_paths} and timestamps {all_model_checkpoint_timestamps})"
        )
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        all_model_checkpoint_paths = [
            p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in all_model_checkpoint_paths
        ]
    return CheckpointState(
        model_checkpoint_path=model_checkpoint_path,
        all_model_checkpoint_paths=all_model_checkpoint_paths,
        all_model_checkpoint_timestamps=all_model_checkpoint_timestamps or [],
        last_preserved_timestamp=last_preserved_timestamp or 0.0,
    )


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None, latest_filename=None,
                            all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    """Writes the ``checkpoint`` state file of ``save_dir`` (atomically)."""
    update_checkpoint_state_internal(
        save_dir=save_dir,
        model_checkpoint_path=model_checkpoint_path,
        all_model_checkpoint_paths=all_model_checkpoint_paths,
        latest_filename=latest_filename,
        save_relative_paths=False,
        all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
        last_preserved_timestamp=last_preserved_timestamp,
    )


def update_checkpoint_state_internal(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                                     latest_filename=None, save_relative_paths=False,
                                     all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    """``update_checkpoint_state`` with the option to store every path relative to ``save_dir``."""
    coord_checkpoint_filename = _get_checkpoint_filename(save_dir, latest_filename)
    if save_relative_paths:
        rel_model = (os.path.relpath(model_checkpoint_path, save_dir)
                     if os.path.isabs(model_checkpoint_path) else model_checkpoint_path)
        rel_all = [p if not os.path.isabs(p) else os.path.relpath(p, save_dir)
                   for p in (all_model_checkpoint_paths or [])]
        ckpt = generate_checkpoint_state_proto(
            save_dir, rel_model, all_model_checkpoint_paths=rel_all,
            all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
            last_preserved_timestamp=last_preserved_timestamp,
        )
    else:
        ckpt = generate_checkpoint_state_proto(
            save_dir, model_checkpoint_path, all_model_checkpoint_paths=all_model_checkpoint_paths,
            all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
            last_preserved_timestamp=last_preserved_timestamp,
        )
    if coord_checkpoint_filename == ckpt.model_checkpoint_path:
        raise RuntimeError(
            f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint state. "
            "Please use a different save path."
        )
    gfile.atomic_write_string_to_file(coord_checkpoint_filename, _text_format().MessageToString(ckpt))


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The ``CheckpointState`` in ``checkpoint_dir`` with relative paths joined to it, or None.

    A missing or unparsable state file gives None (a warning is logged); a
    state naming no checkpoint raises ValueError.
    """
    if isinstance(checkpoint_dir, os.PathLike):
        checkpoint_dir = os.fspath(checkpoint_dir)
    coord_checkpoint_filename = _get_checkpoint_filename(checkpoint_dir, latest_filename)
    if not os.path.isfile(coord_checkpoint_filename):
        return None
    try:
        with open(coord_checkpoint_filename, encoding="utf-8") as f:
            text = f.read()
        ckpt = CheckpointState()
        _text_format().Merge(text, ckpt)
    except (OSError, UnicodeDecodeError, _text_format().ParseError) as e:
        _logger.warning("%s: Checkpoint ignored: %s", type(e).__name__, coord_checkpoint_filename)
        return None
    if not ckpt.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not os.path.isabs(ckpt.model_checkpoint_path):
        ckpt.model_checkpoint_path = os.path.join(checkpoint_dir, ckpt.model_checkpoint_path)
    for i, p in enumerate(ckpt.all_model_checkpoint_paths):
        if not os.path.isabs(p):
            ckpt.all_model_checkpoint_paths[i] = os.path.join(checkpoint_dir, p)
    return ckpt


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint recorded in ``checkpoint_dir`` if its files exist, else None."""
    ckpt = get_checkpoint_state(checkpoint_dir, latest_filename)
    if ckpt and ckpt.model_checkpoint_path:
        v2_path = _prefix_to_checkpoint_path(ckpt.model_checkpoint_path, SaverDef.V2)
        v1_path = _prefix_to_checkpoint_path(ckpt.model_checkpoint_path, SaverDef.V1)
        if _glob(v2_path) or _glob(v1_path):
            return ckpt.model_checkpoint_path
        _logger.error("Couldn't match files for checkpoint %s", ckpt.model_checkpoint_path)
    return None


def checkpoint_exists_internal(checkpoint_prefix):
    """Whether a V2 (``P.index``) or V1 (``P``) checkpoint exists at ``checkpoint_prefix``."""
    pathname = _prefix_to_checkpoint_path(checkpoint_prefix, SaverDef.V2)
    if _glob(pathname):
        return True
    return bool(_glob(checkpoint_prefix))


def checkpoint_exists(checkpoint_prefix):
    """Whether a checkpoint exists at ``checkpoint_prefix`` (deprecated in TF; kept for TF1 code)."""
    return checkpoint_exists_internal(os.fspath(checkpoint_prefix))


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification times (seconds) of the checkpoints that exist among ``checkpoint_prefixes``."""
    mtimes = []

    def match(pattern):
        files = _glob(pattern)
        if not files:
            return False
        mtimes.append(os.stat(files[0]).st_mtime)
        return True

    for prefix in checkpoint_prefixes:
        if match(_prefix_to_checkpoint_path(prefix, SaverDef.V2)):
            continue
        match(prefix)
    return mtimes


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=SaverDef.V2, meta_graph_suffix="meta"):
    """Deletes a checkpoint's files (and its ``.meta``); files already gone are ignored."""
    _delete_file_if_exists(meta_graph_filename(checkpoint_prefix, meta_graph_suffix))
    if checkpoint_format_version == SaverDef.V2:
        _delete_file_if_exists(checkpoint_prefix + ".index")
        _delete_file_if_exists(checkpoint_prefix + ".data-?????-of-?????")
    else:
        _delete_file_if_exists(checkpoint_prefix)


def _delete_file_if_exists(filespec):
    for path in _glob(filespec):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1, timeout=None):
    """Blocks until ``checkpoint_dir`` has a checkpoint other than ``last_checkpoint``; None on timeout."""
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        checkpoint_path = latest_checkpoint(checkpoint_dir)
        if checkpoint_path is None or checkpoint_path == last_checkpoint:
            if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
                return None
            time.sleep(seconds_to_sleep)
        else:
            return checkpoint_path


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint of ``checkpoint_dir`` as it appears.

    Waits at least ``min_interval_secs`` between yields. After ``timeout``
    seconds without a new checkpoint, stops unless ``timeout_fn`` returns
    False (then keeps waiting).
    """
    checkpoint_path = None
    while True:
        new_checkpoint_path = wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout=timeout)
        if new_checkpoint_path is None:
            if not timeout_fn:
                _logger.info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        checkpoint_path = new_checkpoint_path
        yield checkpoint_path
        time_to_next_eval = start + min_interval_secs - time.time()
        if time_to_next_eval > 0:
            time.sleep(time_to_next_eval)


class CheckpointManager:
    """Keeps a directory of numbered checkpoints of one checkpointable object.

    ``checkpoint`` is anything with TensorFlow's ``tf.train.Checkpoint``
    methods: ``write(file_prefix, session=None)`` returning the path written
    (preferred: the manager owns the numbering and the state file), or else
    ``save(file_prefix, session=None)``. Saves are named
    ``<directory>/<checkpoint_name>-<N>``; the oldest fall off once there are
    more than ``max_to_keep`` (None keeps all), except one every
    ``keep_checkpoint_every_n_hours``.
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None,
                 last_checkpoint_step=None):
        self._checkpoint = checkpoint
        self._save_counter_assign = None
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(
                f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}."
            )
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        if isinstance(directory, os.PathLike):
            directory = os.fspath(directory)
        self._directory = directory
        self._checkpoint_prefix = os.path.join(directory, checkpoint_name)
        self._init_fn = init_fn
        if checkpoint_interval is not None:
            if step_counter is None:
                raise ValueError(
                    "`step_counter` should be passed if `checkpoint_interval` is not None."
                )
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._last_checkpoint_step = last_checkpoint_step
        recovered_state = get_checkpoint_state(directory)
        current_clock = time.time()
        self._maybe_delete = {}
        if recovered_state is None:
            self._latest_checkpoint = None
            self._last_preserved_timestamp = current_clock
        else:
            self._latest_checkpoint = recovered_state.model_checkpoint_path
            self._last_preserved_timestamp = recovered_state.last_preserved_timestamp
            if current_clock < self._last_preserved_timestamp:
                # The clock went backwards (or the directory came from another
                # machine): preserving by time is meaningless; start afresh.
                _logger.warning(
                    "time.time() returned a value %f seconds behind the last preserved checkpoint "
                    "timestamp.", self._last_preserved_timestamp - current_clock,
                )
                self._last_preserved_timestamp = current_clock
            all_timestamps = list(recovered_state.all_model_checkpoint_timestamps)
            all_paths = list(recovered_state.all_model_checkpoint_paths)
            if not all_timestamps:
                all_timestamps = [self._last_preserved_timestamp] * len(all_paths)
            for filename, timestamp in zip(all_paths, all_timestamps):
                timestamp = min(timestamp, current_clock)
                if timestamp > self._last_preserved_timestamp:
                    self._maybe_delete[filename] = timestamp
        if self._step_counter is not None and self._last_checkpoint_step is None and self._latest_checkpoint:
            step = _checkpoint_number(self._latest_checkpoint)
            self._last_checkpoint_step = step

    @property
    def directory(self):
        """The checkpoint directory."""
        return self._directory

    @property
    def checkpoint_interval(self):
        """Minimum steps between saves (None: no limit)."""
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self):
        """The prefix of the newest checkpoint, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self):
        """Prefixes of the managed checkpoints, oldest first."""
        return list(self._maybe_delete.keys())

    @property
    def checkpoint(self):
        """The managed object."""
        return self._checkpoint

    def _sweep(self):
        """Deletes the oldest checkpoints beyond ``max_to_keep`` (except time-preserved ones)."""
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            filename, timestamp = next(iter(self._maybe_delete.items()))
            del self._maybe_delete[filename]
            if (self._keep_checkpoint_every_n_hours
                    and timestamp - self._keep_checkpoint_every_n_hours * 3600.0 >= self._last_preserved_timestamp):
                self._last_preserved_timestamp = timestamp
                continue
            _delete_file_if_exists(filename + ".index")
            _delete_file_if_exists(filename + ".data-?????-of-?????")

    def _record_state(self):
        filenames, timestamps = zip(*self._maybe_delete.items()) if self._maybe_delete else ((), ())
        update_checkpoint_state_internal(
            self._directory,
            model_checkpoint_path=self.latest_checkpoint,
            all_model_checkpoint_paths=list(filenames),
            all_model_checkpoint_timestamps=list(timestamps),
            last_preserved_timestamp=self._last_preserved_timestamp,
            save_relative_paths=True,
        )

    def _step(self, session):
        value = self._step_counter
        if hasattr(value, "eval") and session is not None:
            value = session.run(value)
        elif hasattr(value, "numpy"):
            value = value.numpy()
        elif hasattr(value, "eval"):
            value = value.eval()
        return int(value)

    def save(self, checkpoint_number=None, check_interval=True, options=None, session=None):
        """Saves a new numbered checkpoint, updates the state file and deletes old ones.

        The number is ``checkpoint_number`` if given, else the checkpoint's
        ``save_counter`` after incrementing it. With ``checkpoint_interval``,
        returns None without saving when fewer steps than that have passed.
        """
        if self._checkpoint_interval is not None and check_interval:
            current_step = self._step(session)
            if self._last_checkpoint_step is not None and current_step < self._last_checkpoint_step + self._checkpoint_interval:
                return None
            if checkpoint_number is None:
                checkpoint_number = current_step
            self._last_checkpoint_step = current_step
        if checkpoint_number is None:
            checkpoint_number = self._next_save_number(session)
        prefix = f"{self._checkpoint_prefix}-{int(checkpoint_number)}"
        os.makedirs(self._directory or ".", exist_ok=True)
        writer = getattr(self._checkpoint, "write", None) or getattr(self._checkpoint, "_write", None)
        if writer is not None:
            save_path = _call_with_session(writer, prefix, session)
        else:
            save_path = _call_with_session(self._checkpoint.save, prefix, session)
        save_path = os.fspath(save_path) if save_path is not None else prefix
        timestamp = time.time()
        if save_path in self._maybe_delete:
            del self._maybe_delete[save_path]
        self._maybe_delete[save_path] = timestamp
        self._latest_checkpoint = save_path
        self._sweep()
        self._record_state()
        if options is not None:
            _run_write_callbacks(options, save_path)
        return save_path

    def _next_save_number(self, session):
        counter = getattr(self._checkpoint, "save_counter", None)
        if counter is None:
            raise AttributeError(
                f"CheckpointManager.save: the checkpoint object {self._checkpoint!r} has no save_counter; "
                "pass checkpoint_number"
            )
        increment = getattr(self._checkpoint, "_increment_save_counter", None)
        if increment is not None:
            return int(_call_with_session(increment, None, session, positional=False))
        if hasattr(counter, "assign_add"):
            op = counter.assign_add(1, read_value=True)
            if session is None:
                session = get_default_session()
            if session is None:
                raise errors.FailedPreconditionError(
                    None, None, "CheckpointManager.save needs a session to increment save_counter"
                )
            return int(session.run(op))
        return int(counter) + 1

    def restore_or_initialize(self):
        """Restores the newest checkpoint if there is one (returning its path), else runs ``init_fn`` (None)."""
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            if self._checkpoint_interval is not None:
                self._last_checkpoint_step = _checkpoint_number(self._latest_checkpoint)
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

    def sync(self):
        """Waits for pending asynchronous writes (saves here are synchronous)."""


def _checkpoint_number(prefix):
    m = re.search(r"-(\d+)$", prefix)
    return int(m.group(1)) if m else None


def _call_with_session(fn, arg, session, positional=True):
    """Calls ``fn(arg, session=session)``, or without ``session`` if ``fn`` takes none."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
        takes_session = "session" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())
    except (TypeError, ValueError):
        takes_session = False
    args = (arg,) if positional else ()
    if takes_session:
        return fn(*args, session=session)
    return fn(*args)


def _run_write_callbacks(options, save_path):
    """Calls ``options.experimental_write_callbacks`` after a save: with the path if they take an argument."""
    import inspect

    for callback in getattr(options, "experimental_write_callbacks", None) or ():
        try:
            takes_path = bool(inspect.signature(callback).parameters)
        except (TypeError, ValueError):
            takes_path = True
        if takes_path:
            callback(save_path)
        else:
            callback()
