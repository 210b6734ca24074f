//! Kernels for variables and in-place updates.

use super::boxed;
use crate::kernel::{factory, Fixed, KernelFactory, Value};
use crate::resources::{SessionState, Variable};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array::{scatter, strided_slice_assign, ScatterOp, SliceMasks};
use ferroflow_tensor::kernels::elementwise::{binary, BinaryOp};
use ferroflow_tensor::{bail, ensure, Error, Result, Tensor};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Tensors kept in a session between runs by `GetSessionHandle` (TF1's `tf.get_session_handle`),
/// by handle string.
#[derive(Default)]
struct SessionTensors {
    tensors: Mutex<HashMap<String, Tensor>>,
    next_id: AtomicU64,
}

fn session_tensors(session: &SessionState) -> Result<Arc<SessionTensors>> {
    session.get_or_create_shared("\u{1}session_tensors", "", || Ok(SessionTensors::default()))
}

/// The device TensorFlow writes at the end of a handle (`name;id;device`).
const HANDLE_DEVICE: &str = "/job:localhost/replica:0/task:0/device:CPU:0";

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "GetSessionHandle",
        factory(|init| {
            let store = session_tensors(init.session)?;
            let name = init.node.name.clone();
            boxed(move |ctx| {
                let value = ctx.take_input(0)?;
                let id = store.next_id.fetch_add(1, Ordering::Relaxed);
                let handle = format!("{name};{id};{HANDLE_DEVICE}");
                store.tensors.lock().insert(handle.clone(), value);
                ctx.output(Tensor::scalar(handle.into_bytes()));
                Ok(())
            })
        }),
    );
    reg(
        "GetSessionTensor",
        factory(|init| {
            let store = session_tensors(init.session)?;
            let dtype = init.node.attrs.dtype("dtype")?;
            boxed(move |ctx| {
                let handle = ctx.input(0)?.scalar_string("handle")?;
                let value = store.tensors.lock().get(&handle).cloned().ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "The tensor with handle '{handle}' is not in the session store."
                    ))
                })?;
                ensure!(
                    value.dtype() == dtype,
                    invalid_argument,
                    "The tensor with handle '{handle}' is {}, not the {dtype} this op reads",
                    value.dtype()
                );
                ctx.output(value);
                Ok(())
            })
        }),
    );
    reg(
        "DeleteSessionTensor",
        factory(|init| {
            let store = session_tensors(init.session)?;
            boxed(move |ctx| {
                let handle = ctx.input(0)?.scalar_string("handle")?;
                if store.tensors.lock().remove(&handle).is_none() {
                    bail!(
                        invalid_argument,
                        "The tensor with handle '{handle}' is not in the session store."
                    );
                }
                Ok(())
            })
        }),
    );
    reg(
        "VariableV2",
        factory(|init| {
            let node = init.node;
            let dtype = node.attrs.dtype("dtype")?;
            let declared = node.attrs.shape("shape")?.to_shape();
            // Found by name, as TensorFlow's resource manager finds a ref
            // variable (`container`, `shared_name` or else the node's name):
            // graphs that several clients register with one cluster task
            // share it.
            let container = node.attrs.str_or("container", "")?;
            let shared_name = node.attrs.str_or("shared_name", "")?;
            let name = if shared_name.is_empty() {
                &node.name
            } else {
                &shared_name
            };
            let var = init.session.get_or_create_shared(
                &format!("\u{1}variables/{container}"),
                name,
                || Ok(Variable::new(&node.name, dtype, declared)),
            )?;
            Ok(Box::new(Fixed(Value::Ref(var))))
        }),
    );
    reg(
        "Assign",
        factory(|init| {
            let validate = init.node.attrs.bool_or("validate_shape", true)?;
            boxed(move |ctx| {
                let value = ctx.take_input(1)?;
                let var = ctx.input_ref(0)?.clone();
                ensure!(
                    value.dtype() == var.dtype(),
                    invalid_argument,
                    "Assign: cannot assign a {} value to the {} variable {}",
                    value.dtype(),
                    var.dtype(),
                    var.name()
                );
                if validate {
                    let guard = var.lock();
                    let lhs = guard
                        .as_ref()
                        .map(|t| t.shape().clone())
                        .or_else(|| var.declared_shape().cloned());
                    if let Some(lhs) = lhs {
                        ensure!(
                            &lhs == value.shape(),
                            invalid_argument,
                            "Assign requires shapes of both tensors to match. lhs shape= {lhs} rhs shape= {}",
                            value.shape()
                        );
                    }
                }
                var.set(value);
                ctx.output_ref(var);
                Ok(())
            })
        }),
    );
    for (name, op) in [("AssignAdd", BinaryOp::Add), ("AssignSub", BinaryOp::Sub)] {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let delta = ctx.take_input(1)?;
                    let var = ctx.input_ref(0)?.clone();
                    {
                        let mut guard = var.lock();
                        let current = guard.take().ok_or_else(|| var.uninitialized())?;
                        if current.shape() != delta.shape() {
                            let err = Error::invalid_argument(format!(
                                "{name}: the variable {} has shape {} but the update has shape {}",
                                var.name(),
                                current.shape(),
                                delta.shape()
                            ));
                            *guard = Some(current);
                            return Err(err);
                        }
                        // `current` was moved out of the store: if no reader holds it,
                        // the add runs in place on the variable's own buffer.
                        let backup = current.clone();
                        match binary(op, current, delta) {
                            Ok(t) => *guard = Some(t),
                            Err(e) => {
                                *guard = Some(backup);
                                return Err(e);
                            }
                        }
                    }
                    ctx.output_ref(var);
                    Ok(())
                })
            }),
        );
    }
    for (name, op) in [
        ("ScatterUpdate", ScatterOp::Update),
        ("ScatterAdd", ScatterOp::Add),
        ("ScatterSub", ScatterOp::Sub),
    ] {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let var = ctx.input_ref(0)?.clone();
                    let (indices, updates) = (ctx.input(1)?, ctx.input(2)?);
                    var.update(|t| scatter(t, indices, updates, op))?;
                    ctx.output_ref(var);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "StridedSliceAssign",
        factory(|init| {
            let a = &init.node.attrs;
            let masks = SliceMasks {
                begin: a.int_or("begin_mask", 0)?,
                end: a.int_or("end_mask", 0)?,
                ellipsis: a.int_or("ellipsis_mask", 0)?,
                new_axis: a.int_or("new_axis_mask", 0)?,
                shrink_axis: a.int_or("shrink_axis_mask", 0)?,
            };
            boxed(move |ctx| {
                let var = ctx.input_ref(0)?.clone();
                let (b, e, s) = (
                    ctx.input(1)?.to_i64_vec()?,
                    ctx.input(2)?.to_i64_vec()?,
                    ctx.input(3)?.to_i64_vec()?,
                );
                let value = ctx.input(4)?;
                var.update(|t| strided_slice_assign(t, &b, &e, &s, masks, value))?;
                ctx.output_ref(var);
                Ok(())
            })
        }),
    );
    reg(
        "IsVariableInitialized",
        factory(|_| {
            boxed(|ctx| {
                let init = ctx.input_ref(0)?.is_initialized();
                ctx.output(Tensor::scalar(init));
                Ok(())
            })
        }),
    );
}
