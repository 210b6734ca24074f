//! Errors: ferroflow's one vocabulary ([`ferroflow_tensor::Error`]). TF's
//! Python interpreter raises `ValueError` for bad models and bad arguments,
//! so most failures here are [`Error::Value`]; a model ferroflow cannot run
//! (an operator or type it lacks) is `Unimplemented`, and calling in the
//! wrong order (invoke before allocate_tensors) is `FailedPrecondition`.

pub use ferroflow_tensor::{Error, Result};

/// Helpers that name the failing part of a model.
pub trait LiteError {
    /// A malformed model or a bad argument (`ValueError`).
    fn invalid(message: impl std::fmt::Display) -> Error;
}

impl LiteError for Error {
    fn invalid(message: impl std::fmt::Display) -> Error {
        Error::value(message)
    }
}
