//! The one error type of ferroflow's Rust core.
//!
//! Runtime failures carry TensorFlow's status code so the Python layer can
//! raise the matching `tf.errors` class (`MonitoredSession` recovers on
//! `AbortedError`, input pipelines end on `OutOfRangeError`, ...). Graph
//! construction failures are `Value` / `Type`, raised as Python's
//! `ValueError` / `TypeError` exactly where TensorFlow raises those.

use std::fmt;

/// TensorFlow's canonical status codes (`tensorflow/core/protobuf/error_codes.proto`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Code {
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl Code {
    /// The name of TensorFlow's Python exception class for this code.
    pub fn class_name(self) -> &'static str {
        match self {
            Code::Cancelled => "CancelledError",
            Code::Unknown => "UnknownError",
            Code::InvalidArgument => "InvalidArgumentError",
            Code::DeadlineExceeded => "DeadlineExceededError",
            Code::NotFound => "NotFoundError",
            Code::AlreadyExists => "AlreadyExistsError",
            Code::PermissionDenied => "PermissionDeniedError",
            Code::ResourceExhausted => "ResourceExhaustedError",
            Code::FailedPrecondition => "FailedPreconditionError",
            Code::Aborted => "AbortedError",
            Code::OutOfRange => "OutOfRangeError",
            Code::Unimplemented => "UnimplementedError",
            Code::Internal => "InternalError",
            Code::Unavailable => "UnavailableError",
            Code::DataLoss => "DataLossError",
            Code::Unauthenticated => "UnauthenticatedError",
        }
    }
}

/// An error from building or running a graph.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A failure while running ops, with TensorFlow's status code. `node` is the
    /// name of the op that failed, when known.
    #[error("{message}{}", node.as_ref().map(|n| format!("\n\t [[{{{{node {n}}}}}]]")).unwrap_or_default())]
    Op {
        code: Code,
        message: String,
        node: Option<String>,
    },
    /// An argument with the right type but a bad value (Python `ValueError`),
    /// e.g. incompatible shapes at graph construction.
    #[error("{0}")]
    Value(String),
    /// An argument of the wrong type (Python `TypeError`), e.g. mixing dtypes.
    #[error("{0}")]
    Type(String),
}

/// `Result` with ferroflow's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

macro_rules! status_constructors {
    ($($fn_name:ident => $code:ident),* $(,)?) => {
        $(
            #[doc = concat!("An [`Error::Op`] with code `", stringify!($code), "`.")]
            pub fn $fn_name(message: impl fmt::Display) -> Error {
                Error::Op { code: Code::$code, message: message.to_string(), node: None }
            }
        )*
    };
}

impl Error {
    status_constructors! {
        cancelled => Cancelled,
        unknown => Unknown,
        invalid_argument => InvalidArgument,
        not_found => NotFound,
        already_exists => AlreadyExists,
        permission_denied => PermissionDenied,
        resource_exhausted => ResourceExhausted,
        failed_precondition => FailedPrecondition,
        aborted => Aborted,
        out_of_range => OutOfRange,
        unimplemented => Unimplemented,
        internal => Internal,
        unavailable => Unavailable,
        data_loss => DataLoss,
        deadline_exceeded => DeadlineExceeded,
        unauthenticated => Unauthenticated,
    }

    /// A failed file or stream operation as TensorFlow's status: the code follows the I/O error's kind
    /// (a missing file is `NotFound`, a full disk `ResourceExhausted`, ...), and `message` says what was
    /// being done to which file. Every crate maps I/O errors through here.
    pub fn io(err: &std::io::Error, message: impl fmt::Display) -> Error {
        use std::io::ErrorKind;
        let code = match err.kind() {
            ErrorKind::NotFound => Code::NotFound,
            ErrorKind::PermissionDenied => Code::PermissionDenied,
            ErrorKind::AlreadyExists => Code::AlreadyExists,
            ErrorKind::InvalidInput => Code::InvalidArgument,
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded | ErrorKind::OutOfMemory => {
                Code::ResourceExhausted
            }
            ErrorKind::UnexpectedEof | ErrorKind::InvalidData => Code::DataLoss,
            ErrorKind::TimedOut => Code::DeadlineExceeded,
            ErrorKind::Interrupted => Code::Cancelled,
            _ => Code::Unknown,
        };
        Error::Op {
            code,
            message: message.to_string(),
            node: None,
        }
    }

    /// A `ValueError`.
    pub fn value(message: impl fmt::Display) -> Error {
        Error::Value(message.to_string())
    }

    /// A `TypeError`.
    pub fn type_error(message: impl fmt::Display) -> Error {
        Error::Type(message.to_string())
    }

    /// The status code, for runtime errors.
    pub fn code(&self) -> Option<Code> {
        match self {
            Error::Op { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The message without the node annotation.
    pub fn message(&self) -> &str {
        match self {
            Error::Op { message, .. } => message,
            Error::Value(m) | Error::Type(m) => m,
        }
    }

    /// The name of the op that failed, when known.
    pub fn node(&self) -> Option<&str> {
        match self {
            Error::Op { node, .. } => node.as_deref(),
            _ => None,
        }
    }

    /// Records which op failed (kept if already set by an inner op).
    pub fn at_node(self, name: &str) -> Error {
        match self {
            Error::Op {
                code,
                message,
                node: None,
            } => Error::Op {
                code,
                message,
                node: Some(name.to_string()),
            },
            other => other,
        }
    }

    /// The same error (same kind and code) with `context` and ": " in front
    /// of its message, e.g. the file or node being processed.
    pub fn with_context(self, context: impl fmt::Display) -> Error {
        match self {
            Error::Op {
                code,
                message,
                node,
            } => Error::Op {
                code,
                message: format!("{context}: {message}"),
                node,
            },
            Error::Value(m) => Error::Value(format!("{context}: {m}")),
            Error::Type(m) => Error::Type(format!("{context}: {m}")),
        }
    }

    /// Converts a construction-time error into a runtime `InvalidArgument`
    /// (kernels reuse shape checks that construction reports as `ValueError`).
    pub fn into_runtime(self) -> Error {
        match self {
            Error::Value(m) | Error::Type(m) => Error::invalid_argument(m),
            e => e,
        }
    }
}

/// Returns early with an [`Error`] made by the constructor `$kind` from a formatted message:
/// `bail!(invalid_argument, "rank {rank} is too low")` is
/// `return Err(Error::invalid_argument(format!("rank {rank} is too low")))`.
/// `$kind` is any constructor of [`Error`] taking a message (`value`, `type_error`, `not_found`, ...).
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($message:tt)+) => {
        return Err($crate::Error::$kind(format!($($message)+)))
    };
}

/// Bails with `$kind` and the formatted message unless `$condition` holds (see [`bail!`]).
#[macro_export]
macro_rules! ensure {
    ($condition:expr, $kind:ident, $($message:tt)+) => {
        if !$condition {
            $crate::bail!($kind, $($message)+);
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_annotation_is_appended_once() {
        let e = Error::invalid_argument("bad").at_node("a").at_node("b");
        assert_eq!(e.node(), Some("a"));
        assert_eq!(e.to_string(), "bad\n\t [[{{node a}}]]");
        assert_eq!(e.code(), Some(Code::InvalidArgument));
    }

    fn checked(rank: usize) -> Result<usize> {
        crate::ensure!(rank >= 2, invalid_argument, "rank {rank} is below 2");
        if rank > 4 {
            crate::bail!(value, "rank {} is above {}", rank, 4);
        }
        Ok(rank)
    }

    #[test]
    fn bail_and_ensure_return_the_named_error() {
        assert_eq!(checked(3), Ok(3));
        let low = checked(1).unwrap_err();
        assert_eq!(low.code(), Some(Code::InvalidArgument));
        assert_eq!(low.message(), "rank 1 is below 2");
        assert_eq!(checked(5), Err(Error::value("rank 5 is above 4")));
    }
}
