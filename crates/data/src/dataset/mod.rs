//! (being written; see lib.rs)

/// Registers the dataset and iterator ops and kernels.
pub(crate) fn register() {}
