//! `local://` for `tf.io.decode_proto` / `encode_proto`: the message types
//! Python knows. TensorFlow's `local://` pool holds the protos compiled into
//! its binary; ferroflow's learns a type the first time a kernel asks for it,
//! from `ferroflow.ops.proto_ops._local_descriptor_set`, which looks in
//! ferroflow's TensorFlow protos and in protobuf's default pool (every
//! message class the program has imported) and returns the defining file
//! and its dependencies as a serialized `FileDescriptorSet`.

use std::sync::Arc;

use crate::errors::python_exception;
use ferroflow_tensor::Result;
use pyo3::prelude::*;

const MODULE: &str = "ferroflow.ops.proto_ops";

fn resolve(message_type: &str) -> Result<Option<Vec<u8>>> {
    Python::attach(|py| {
        py.import(MODULE)
            .and_then(|m| m.call_method1("_local_descriptor_set", (message_type,)))
            .and_then(|r| r.extract::<Option<Vec<u8>>>())
            .map_err(|e| {
                python_exception(py, e, &format!("looking up {message_type} for local://"))
            })
    })
}

/// Installs the resolver (called once, at import).
pub fn register() {
    ferroflow_data::proto::set_local_resolver(Arc::new(resolve));
}
