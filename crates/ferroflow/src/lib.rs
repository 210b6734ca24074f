//! ferroflow for Rust programs: build a TensorFlow-1-style graph, create a
//! [`Session`], feed and fetch.
//!
//! ```
//! use ferroflow::{GraphBuilder, Session, Tensor, DType, PartialShape};
//!
//! let mut g = GraphBuilder::new();
//! let x = g.placeholder(DType::Float32, PartialShape::from_dims(vec![None, Some(2)]), "x").unwrap();
//! let w = g.constant(Tensor::from_vec([2, 1], vec![1.0f32, 2.0]).unwrap(), "w").unwrap();
//! let y = g.matmul(x, w, false, false).unwrap();
//! let sess = Session::new(g.graph());
//! let feed = Tensor::from_vec([1, 2], vec![3.0f32, 4.0]).unwrap();
//! let out = sess.run(vec![(x, feed)], &[y], &[]).unwrap();
//! assert_eq!(out[0].as_slice::<f32>().unwrap(), &[11.0]);
//! ```
//!
//! [`SavedModel`] loads a SavedModel (TensorFlow 1.x's `SavedModelBuilder` /
//! `simple_save` exports, or ferroflow's) and runs its signatures: serving
//! from Rust without Python (see [`saved_model`] and
//! `examples/serve_saved_model.rs`).
//!
//! Training steps allocate and free many tensor buffers. The Python module
//! serves them from mimalloc under [`alloc::BufferCache`]; a Rust program
//! that trains should install the same global allocator (see
//! `examples/scaling.rs`): with the system allocator a small MLP's steps ran
//! at about 0.6x the rate.

mod builder;
pub mod saved_model;
pub mod train;

pub use builder::{GraphBuilder, VariableHandle};
pub use ferroflow_graph::{AttrValue, Graph, NodeId, NodeSpec, Output, PartialShape};
pub use ferroflow_runtime::Session as RuntimeSession;
pub use ferroflow_tensor::{alloc, kernels, Code, DType, Error, Result, Shape, Tensor};
pub use saved_model::SavedModel;

use parking_lot::RwLock;
use std::sync::Arc;

/// Registers every op, kernel and gradient outside the core crates: optimizer updates, checkpoints,
/// summaries and TFRecords, input pipelines and parsing, images. The facade is the composition root:
/// [`Session::new`], [`GraphBuilder`], [`SavedModel::load`] and the Python module all call this, so a
/// graph that runs in one runs in the others. Idempotent and cheap after the first call.
pub fn register_all() {
    ferroflow_train::register();
    ferroflow_checkpoint::register();
    ferroflow_records::register();
    ferroflow_data::register();
    ferroflow_image::register();
}

/// A session over a graph built with [`GraphBuilder`].
pub struct Session(ferroflow_runtime::Session);

impl Session {
    pub fn new(graph: Arc<RwLock<Graph>>) -> Session {
        register_all();
        Session(ferroflow_runtime::Session::new(graph))
    }

    /// Feeds `feeds`, runs `targets`, and returns the values of `fetches`.
    pub fn run(
        &self,
        feeds: Vec<(Output, Tensor)>,
        fetches: &[Output],
        targets: &[NodeId],
    ) -> Result<Vec<Tensor>> {
        self.0.run(feeds, fetches, targets)
    }

    /// The underlying runtime session.
    pub fn inner(&self) -> &ferroflow_runtime::Session {
        &self.0
    }

    pub fn close(&self) {
        self.0.close()
    }
}
