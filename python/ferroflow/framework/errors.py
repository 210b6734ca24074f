"""TensorFlow's exception classes (``tf.errors``), with TF's status codes.

The native core raises these for runtime failures; they are registered
with it at import time.
"""

from __future__ import annotations

import errno as _errno
import os as _os

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while running ops. ``op`` is the failing Operation (or its name)."""

    def __init__(self, node_def, op, message, error_code=UNKNOWN, *args):
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    def __reduce__(self):
        return type(self), (self._node_def, self._op, self._message) + (
            (self._error_code,) if type(self) is OpError else ()
        )

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def error_code(self):
        return self._error_code

    @property
    def node_def(self):
        return self._node_def

    @property
    def experimental_payloads(self):
        return {}

    def __str__(self):
        return self._message


def _make(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


CancelledError = _make("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT, "An op got an invalid argument.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity (file, key, ...) was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "An entity to create already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED, "The caller may not do this.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED, "The request has no valid credentials.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource ran out.")
FailedPreconditionError = _make(
    "FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state to run the op (e.g. an uninitialized variable)."
)
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted (often a concurrency conflict).")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE, "An iteration or read went past the valid range (e.g. a closed queue).")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or supported.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "The service is currently unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")

_CODE_TO_CLASS = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}
_CLASS_TO_CODE = {v: k for k, v in _CODE_TO_CLASS.items()}


def _errno_table():
    """``{errno: tf.errors class}``: TensorFlow's file-system mapping of POSIX error numbers onto status codes
    (the numbers this platform lacks are left out)."""
    groups = {
        InvalidArgumentError: "EINVAL ENAMETOOLONG E2BIG EDESTADDRREQ EDOM EFAULT EILSEQ ENOPROTOOPT "
        "ENOSTR ENOTSOCK ENOTTY EPROTOTYPE ESPIPE",
        DeadlineExceededError: "ETIMEDOUT ETIME",
        NotFoundError: "ENODEV ENOENT ENXIO ESRCH",
        AlreadyExistsError: "EEXIST EADDRNOTAVAIL EALREADY",
        PermissionDeniedError: "EPERM EACCES EROFS",
        FailedPreconditionError: "ENOTEMPTY EISDIR ENOTDIR EADDRINUSE EBADF EBUSY ECHILD EISCONN "
        "ENOTBLK ENOTCONN EPIPE ESHUTDOWN ETXTBSY",
        ResourceExhaustedError: "ENOSPC EDQUOT EMFILE EMLINK ENFILE ENOBUFS ENODATA ENOMEM ENOSR EUSERS",
        OutOfRangeError: "EFBIG EOVERFLOW ERANGE",
        UnimplementedError: "ENOSYS ENOTSUP EOPNOTSUPP EAFNOSUPPORT EPFNOSUPPORT EPROTONOSUPPORT "
        "ESOCKTNOSUPPORT EXDEV",
        UnavailableError: "EAGAIN ECONNREFUSED ECONNABORTED ECONNRESET EINTR EHOSTDOWN EHOSTUNREACH "
        "ENETDOWN ENETRESET ENETUNREACH ENOLCK ENOLINK ENONET",
        AbortedError: "EDEADLK ESTALE",
        CancelledError: "ECANCELED",
    }
    table = {}
    for cls, names in groups.items():
        for name in names.split():
            code = getattr(_errno, name, None)
            if code is not None:
                table.setdefault(code, cls)
    return table


_ERRNO_TO_CLASS = _errno_table()


def error_from_os_error(what, err):
    """The ``tf.errors`` exception for the ``OSError`` ``err`` about ``what`` (a path, or what was being done):
    its class follows the error number as in TensorFlow's file system (``ENOENT`` -> ``NotFoundError``, an unknown
    number -> ``UnknownError``), its message is ``"<what>; <the OS's reason>"``. Python code that turns OS errors
    into ``tf.errors`` goes through here (the native core maps its I/O errors in ``Error::io``)."""
    code = err.errno
    cls = _ERRNO_TO_CLASS.get(code, UnknownError)
    reason = err.strerror or (_os.strerror(code) if code else str(err))
    return cls(None, None, f"{what}; {reason}")


def exception_type_from_error_code(error_code):
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls):
    return _CLASS_TO_CODE[cls]


class OperatorNotAllowedInGraphError(TypeError):
    """Python code asked a symbolic tensor for a value only a run has (``if tensor:`` while
    ``tf.function`` traces): a TypeError, as in TensorFlow."""


class raise_exception_on_not_ok_status:  # noqa: N801 - TensorFlow's name
    """Context manager kept for old code; ferroflow raises directly."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _register_with_native():
    from ferroflow import _native

    _native._set_error_classes(dict(_CODE_TO_CLASS))


_register_with_native()
