//! Fuzzes the `.tflite` loader and the interpreter behind it: any bytes
//! must give a checked [`Model`] or a typed error; a model that loads is
//! then built into an [`Interpreter`], allocated and invoked on zeroed
//! inputs, each step returning or failing with an error, never panicking
//! or reading out of bounds.
//!
//! Models whose declared tensors add up to more than [`MAX_DECLARED_BYTES`]
//! are skipped after loading (a 2 GiB input tensor is a valid model, and
//! allocating it is not a bug), and so are models whose shapes computed by
//! `allocate_tensors` pass the same bound before `invoke`.
#![no_main]

use ferroflow_lite::{Interpreter, Model};
use libfuzzer_sys::fuzz_target;

/// Tensor bytes a model may declare (or allocate) and still be run.
const MAX_DECLARED_BYTES: usize = 64 << 20;

/// Bytes of every tensor of every subgraph at its declared shape; `None`
/// when the sum overflows.
fn declared_bytes(model: &Model) -> Option<usize> {
    let mut total = 0usize;
    for sg in &model.subgraphs {
        for t in &sg.tensors {
            let mut n = t.dtype.size().max(1);
            for &d in &t.shape {
                n = n.checked_mul(d.max(0) as usize)?;
            }
            total = total.checked_add(n)?;
        }
    }
    Some(total)
}

fuzz_target!(|data: &[u8]| {
    let Ok(model) = Model::from_bytes(data) else {
        return;
    };
    if declared_bytes(&model).is_none_or(|b| b > MAX_DECLARED_BYTES) {
        return;
    }
    // One or two threads, from the input, so both the serial and the
    // split paths of the kernels run.
    let threads = 1 + data.len() % 2;
    let Ok(mut interp) = Interpreter::new(model, threads) else {
        return;
    };
    if interp.allocate_tensors().is_err() {
        return;
    }
    let mut allocated = 0usize;
    for t in interp.tensors() {
        allocated = allocated.saturating_add(t.data.len());
    }
    if allocated > MAX_DECLARED_BYTES {
        return;
    }
    for &i in interp.inputs().to_vec().iter() {
        let (dtype, shape, len) = {
            let s = interp
                .tensor(i as i64)
                .expect("inputs are checked by the loader");
            (s.dtype, s.shape.clone(), s.data.len())
        };
        let _ = interp.set_tensor(i as i64, dtype, &shape, &vec![0u8; len]);
    }
    let _ = interp.invoke();
    // A second run over the same state (variables, reused buffers).
    let _ = interp.invoke();
});
