//! The `ferroflow._native` extension module: graphs and sessions for the
//! Python package. Everything TensorFlow-API-shaped lives in Python; this
//! layer only converts values and calls the Rust core, releasing the GIL
//! while a step runs.
//!
//! Where things live: `graph` (the `Graph` class and `registered_ops`),
//! `gradients` (`GradientRun`, `has_gradient`), `session` (`Session`,
//! `Runner`), `partial_run` (`PartialRun`), `server` (`Server`, `parse_tf_config`, `serve`), `optimizers`
//! (the fused rule tables), `convert` (values and attributes across the
//! boundary), `errors` (the mapping onto `tf.errors`), `checkpoint`,
//! `records`, `graph_def` (GraphDefs in TensorFlow's form), `lite`, `py_func` and
//! `generator` (each registering its own
//! classes or ops). This file keeps the allocator and the module init.

mod checkpoint;
mod convert;
mod errors;
mod generator;
mod gradients;
mod graph;
mod graph_def;
mod lite;
mod optimizers;
mod partial_run;
mod proto;
mod py_func;
mod records;
mod server;
mod session;

use gradients::GradientRun;
pub(crate) use graph::Graph;
use pyo3::prelude::*;

/// Large tensor buffers are reused instead of mapped fresh for every step
/// (see `ferroflow_tensor::alloc`); `fork()` handlers keep it usable in a
/// forked child (installed at import). Everything else comes from mimalloc,
/// whose arenas the kernel backs with transparent huge pages: a model's
/// hundreds of small variables then span a few TLB entries instead of
/// thousands (500x4K SGD step about 5% faster than on glibc's malloc).
#[global_allocator]
static ALLOCATOR: ferroflow_tensor::alloc::BufferCache<mimalloc::MiMalloc> =
    ferroflow_tensor::alloc::BufferCache::with_allocator(mimalloc::MiMalloc);

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Before any thread pool starts: forked children (multiprocessing) must
    // know their pools' threads are gone.
    ferroflow_tensor::team::install_fork_guard();
    ALLOCATOR.install_fork_handlers();
    // Every op of the engine (the facade is the composition root), then the ones only Python has.
    ferroflow::register_all();
    checkpoint::register(m)?;
    generator::register();
    py_func::register();
    proto::register();
    records::register(m)?;
    graph_def::register(m)?;
    lite::register(m)?;
    m.add_class::<Graph>()?;
    m.add_class::<GradientRun>()?;
    m.add_class::<session::Session>()?;
    m.add_class::<session::Runner>()?;
    m.add_class::<partial_run::PartialRun>()?;
    m.add_class::<server::Server>()?;
    m.add_function(wrap_pyfunction!(server::parse_tf_config, m)?)?;
    m.add_function(wrap_pyfunction!(server::serve, m)?)?;
    m.add_function(wrap_pyfunction!(graph::registered_ops, m)?)?;
    m.add_function(wrap_pyfunction!(gradients::has_gradient, m)?)?;
    m.add_function(wrap_pyfunction!(optimizers::tf_update_ops, m)?)?;
    m.add_function(wrap_pyfunction!(optimizers::optimizer_rules, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_set_error_classes, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_raise_status, m)?)?;
    m.add("TID_SHIFT", convert::TID_SHIFT)?;
    Ok(())
}
