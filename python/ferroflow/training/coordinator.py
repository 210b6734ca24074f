"""Thread coordination (``tf.train.Coordinator``, ``tf.train.LooperThread``).

A ``Coordinator`` lets a group of threads stop together: any of them calls
``request_stop()`` (optionally with the exception that made it stop), the
others notice ``should_stop()``, and the main thread's ``join()`` waits for
them all and re-raises the reported exception.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time

from ferroflow.framework import errors

__all__ = ["Coordinator", "LooperThread"]

_log = logging.getLogger(__name__)

# How long join() sleeps at most between looks at the threads it waits for.
_POLL_SECS = 0.1


def _reraise(exc_info):
    raise exc_info[1].with_traceback(exc_info[2])


class Coordinator:
    """A coordinator for threads: a shared stop flag, the first reported exception, and ``join``.

    Threads poll ``should_stop()`` and report failures with ``request_stop(ex)`` (or run their body in
    ``with coord.stop_on_exception():``). ``join(threads)`` waits for the threads, gives them
    ``stop_grace_period_secs`` to finish once a stop was requested, re-raises the first reported exception,
    and otherwise raises ``RuntimeError`` naming the threads that are still running.
    """

    def __init__(self, clean_stop_exception_types=None):
        """``clean_stop_exception_types``: exception types that stop the threads without being re-raised by
        ``join`` (default ``(tf.errors.OutOfRangeError,)``, the end of input)."""
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def _filter_exception(self, ex):
        """``ex`` unless it is a clean-stop exception (then None)."""
        value = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(value, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex=None):
        """Asks every coordinated thread to stop; ``should_stop()`` returns True from now on.

        ``ex``: an Exception being handled, or an ``exc_info`` tuple from ``sys.exc_info()``. The first one
        reported (unless it is a clean-stop type) is re-raised by ``join()``. After ``join()`` has returned,
        a reported exception is raised here instead, since nobody would see it otherwise.
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    _reraise(ex)
                elif ex is not None:
                    raise ex
            if self._stop_event.is_set():
                return
            if ex is not None and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    if len(ex) != 3 or not isinstance(ex[1], BaseException):
                        raise TypeError(f"request_stop expects an Exception or a sys.exc_info() tuple, got {ex!r}")
                    exc_info = ex
                else:
                    if not isinstance(ex, BaseException):
                        raise TypeError(f"request_stop expects an Exception or a sys.exc_info() tuple, got {ex!r}")
                    exc_info = (type(ex), ex, ex.__traceback__)
                _log.info("Error reported to Coordinator: %s", exc_info[1])
                self._exc_info_to_raise = exc_info
            self._stop_event.set()

    def clear_stop(self):
        """Clears the stop flag and the recorded exception; ``should_stop()`` returns False again."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        """True once a stop was requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Context manager reporting any exception raised in its body to ``request_stop()`` (and
        swallowing it: ``join()`` re-raises it)."""
        try:
            yield
        except GeneratorExit:
            raise
        except BaseException:
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Blocks until a stop is requested or ``timeout`` seconds pass; True if a stop was requested."""
        if timeout is not None and timeout < 0:
            timeout = 0
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        """Adds ``thread`` to the threads ``join()`` waits for."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for ``threads`` plus the registered threads to terminate.

        Once a stop is requested the threads get ``stop_grace_period_secs`` seconds to finish. Then the first
        exception passed to ``request_stop()`` is re-raised; otherwise, if any thread is still alive, a
        ``RuntimeError`` names them (only logged with ``ignore_live_threads=True``).
        """
        with self._lock:
            waiting = set(self._registered_threads)
        if threads is not None:
            waiting.update(threads)
        waiting = list(waiting)

        def alive():
            return [t for t in waiting if t.is_alive()]

        # Until every thread ends or a stop is requested.
        while True:
            running = alive()
            if not running or self.should_stop():
                break
            running[0].join(_POLL_SECS)
        # The grace period.
        deadline = time.monotonic() + max(0.0, stop_grace_period_secs)
        while True:
            running = alive()
            remaining = deadline - time.monotonic()
            if not running or remaining <= 0:
                break
            running[0].join(min(remaining, _POLL_SECS))
        stragglers = [t.name for t in alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is not None:
                _reraise(self._exc_info_to_raise)
            if stragglers:
                message = "Coordinator stopped with threads still running: " + " ".join(stragglers)
                if ignore_live_threads:
                    _log.info("%s", message)
                else:
                    raise RuntimeError(message)

    @property
    def joined(self):
        """True once ``join()`` has finished waiting."""
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception passed to ``request_stop()``, if any."""
        with self._lock:
            if self._exc_info_to_raise is not None:
                _reraise(self._exc_info_to_raise)


class LooperThread(threading.Thread):
    """A daemon thread that calls ``target`` (or ``run_loop()``) repeatedly until its coordinator stops.

    With ``timer_interval_secs`` the calls happen at that interval (the first one at once), else back to
    back. An exception in the loop is reported to the coordinator and ends the thread. The thread registers
    itself with the coordinator, so ``coord.join()`` waits for it.
    """

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord!r}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._loop_target = target
        if target is not None:
            self._loop_args = tuple(args or ())
            self._loop_kwargs = dict(kwargs or {})
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts and returns a ``LooperThread`` calling ``target(*args, **kwargs)`` every
        ``timer_interval_secs`` seconds (back to back if None) until ``coord`` stops."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic()
                while not self._coord.wait_for_stop(next_time - time.monotonic()):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once when the thread starts."""

    def stop_loop(self):
        """Called once when the loop ends."""

    def run_loop(self):
        """Called at each ``timer_interval_secs`` boundary; runs ``target`` by default."""
        if self._loop_target is not None:
            self._loop_target(*self._loop_args, **self._loop_kwargs)
