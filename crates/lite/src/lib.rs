//! ferroflow's `tf.lite`: TensorFlow Lite models read, run and written in
//! Rust.
//!
//! * [`model`]: a `.tflite` flatbuffer read into checked Rust values
//!   ([`Model`]) and written back ([`writer`]), through the reader and
//!   builder generated from our schema file (`schema/tflite.fbs`).
//! * [`interpreter`]: allocates every tensor once and runs the operators
//!   with float, int8 and hybrid kernels ([`kernels`]); integer kernels use
//!   TFLite's fixed-point arithmetic ([`quant`]) so they match TFLite's
//!   outputs bit for bit.
//! * [`converter`]: a frozen TensorFlow `GraphDef` to a TFLite model, with
//!   TFLite's graph rewrites and post-training quantization.

#[allow(
    clippy::all,
    missing_docs,
    unused_imports,
    dead_code,
    unused_qualifications
)]
mod schema_generated;

/// The generated flatbuffer types of the TFLite schema (owned and reader
/// types), for code that builds or inspects models directly.
pub mod schema {
    pub use crate::schema_generated::tflite::*;
}

pub mod buffer;
pub mod converter;
pub mod error;
pub mod interpreter;
pub mod kernels;
pub mod model;
pub mod op_names;
pub mod quant;
pub mod quantize;
pub mod writer;

pub use error::{Error, Result};
pub use interpreter::Interpreter;
pub use model::{DType, Model, OpDef, Subgraph, TensorDef};
