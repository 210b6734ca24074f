//! ferroflow's symbolic graphs.
//!
//! A [`Graph`] is an append-only list of [`Node`]s. Adding a node runs its
//! op's inference function (see [`ops`]), so every output has a dtype and a
//! [`PartialShape`] from the start, and construction errors surface where
//! TensorFlow raises them. Names follow TensorFlow's uniquifying rules,
//! because checkpoints match variables by name. A graph also holds a
//! library of [`Function`]s, the bodies of its control-flow ops.

mod attr;
mod builder;
mod function;
mod graph;
pub mod ops;
mod shape;

pub use attr::{AttrValue, Attrs, AttrsExt};
pub use builder::Builder;
pub use function::Function;
pub use graph::{Graph, Node, NodeId, NodeSpec, Output, OutputInfo};
pub use ops::{lookup, register_op, InferContext, OpDef};
pub use shape::PartialShape;
