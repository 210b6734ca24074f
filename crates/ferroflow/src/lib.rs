//! ferroflow for Rust programs: build a TensorFlow-1-style graph, create a
//! [`Session`], feed and fetch, and train for real.
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
//! The modules:
//!
//! * [`GraphBuilder`] (`builder.rs`): nodes under name scopes, variables (global and trainable,
//!   `global_variables_initializer`), the op helpers.
//! * [`train`]: gradients, TensorFlow 1's ten optimizers ([`train::Optimizer`] over
//!   [`train::Adam`], [`train::Momentum`], ...: `compute_gradients`, `apply_gradients`,
//!   `minimize`, TensorFlow's slot names), the learning-rate schedules and the global step.
//! * [`saver`]: [`saver::Saver`], TensorFlow's V2 checkpoints with the `checkpoint` state file,
//!   `max_to_keep` and [`saver::latest_checkpoint`]; readable by TensorFlow's and Python
//!   ferroflow's `tf.train.Saver`, and theirs here.
//! * [`summary`]: the TF1 summary ops and a [`summary::FileWriter`] for TensorBoard, and the
//!   TFRecord reader and writer.
//! * [`meta_graph`]: `import_meta_graph` of a `.meta` file (variables, `train_op`, summaries,
//!   the saver), and `export_meta_graph` of a builder's graph in the form TensorFlow imports.
//! * [`saved_model`]: [`SavedModel`] loads a SavedModel (TensorFlow 1.x's
//!   `SavedModelBuilder` / `simple_save` exports, or ferroflow's) and runs its signatures:
//!   serving from Rust without Python (`examples/serve_saved_model.rs`).
//!
//! `examples/train_rust.rs` trains a small model end to end with a schedule, Adam, a Saver and
//! summaries, and resumes from its last checkpoint.
//!
//! Training steps allocate and free many tensor buffers. The Python module
//! serves them from mimalloc under [`alloc::BufferCache`]; a Rust program
//! that trains should install the same global allocator (see
//! `examples/scaling.rs`): with the system allocator a small MLP's steps ran
//! at about 0.6x the rate.

#![warn(missing_docs)]

mod builder;
pub mod meta_graph;
pub mod saved_model;
pub mod saver;
pub mod summary;
pub mod train;

pub use builder::{GraphBuilder, VariableHandle};
pub use ferroflow_graph::{AttrValue, Graph, NodeId, NodeSpec, Output, PartialShape};
pub use ferroflow_runtime::{Session as RuntimeSession, SessionOptions};
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
    static DATA_GRADIENTS: std::sync::Once = std::sync::Once::new();
    DATA_GRADIENTS.call_once(|| {
        for op in ferroflow_data::reader::NOT_DIFFERENTIABLE
            .iter()
            .chain(ferroflow_data::proto::NOT_DIFFERENTIABLE)
            .chain(ferroflow_data::wav::NOT_DIFFERENTIABLE)
        {
            ferroflow_autodiff::not_differentiable(op);
        }
    });
}

/// A session over a graph built with [`GraphBuilder`].
pub struct Session(ferroflow_runtime::Session);

impl Session {
    /// A session over `graph` (registers every op and kernel first).
    pub fn new(graph: Arc<RwLock<Graph>>) -> Session {
        register_all();
        Session(ferroflow_runtime::Session::new(graph))
    }

    /// A session over `graph` configured by `options` (kernel threads,
    /// independent steps at once; see [`SessionOptions`]).
    pub fn with_options(graph: Arc<RwLock<Graph>>, options: SessionOptions) -> Result<Session> {
        register_all();
        Ok(Session(ferroflow_runtime::Session::with_options(
            graph, options,
        )?))
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

    /// Closes the session (its variables' values are dropped).
    pub fn close(&self) {
        self.0.close()
    }
}
