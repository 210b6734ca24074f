//! Loads a SavedModel and runs a signature on a batch of zeros (or ones):
//! serving from Rust without Python.
//!
//! ```text
//! cargo run -p ferroflow --example serve_saved_model -- DIR [TAG ...]
//! ```
//!
//! Without arguments it serves the TensorFlow-written MLP under
//! `tests/fixtures/saved_model/tf_mlp` with tag `serve`. Each signature's
//! inputs are fed a batch of one (unknown dimensions become 1) filled with
//! ones; its outputs are printed.

use ferroflow::saved_model::SavedModel;
use ferroflow::{DType, Tensor};

fn main() -> ferroflow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/saved_model/tf_mlp"
        )
        .to_string()
    });
    let mut tags: Vec<String> = args.collect();
    if tags.is_empty() {
        tags.push("serve".to_string());
    }
    let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
    let model = SavedModel::load(&dir, &tags)?;
    println!(
        "{dir} {:?}: signatures {:?}",
        model.tags(),
        model.signature_keys()
    );
    for key in model.signature_keys() {
        let sig = model.signature(key)?;
        let mut inputs = Vec::new();
        for (name, spec) in &sig.inputs {
            let dims: Vec<usize> = match spec.shape.dims() {
                Some(d) => d.iter().map(|x| x.unwrap_or(1)).collect(),
                None => vec![1],
            };
            let n = dims.iter().product();
            let t = match spec.dtype {
                Some(DType::Float32) | None => Tensor::from_vec(dims, vec![1.0f32; n])?,
                Some(DType::Int64) => Tensor::from_vec(dims, vec![1i64; n])?,
                Some(DType::Int32) => Tensor::from_vec(dims, vec![1i32; n])?,
                Some(other) => {
                    println!("  {key}: skipped (input {name} is {})", other.name());
                    inputs.clear();
                    break;
                }
            };
            println!(
                "  {key}: input {name} {} {}",
                spec.dtype.map_or("?", DType::name),
                t.shape()
            );
            inputs.push((name.as_str(), t));
        }
        if inputs.len() != sig.inputs.len() {
            continue;
        }
        for (name, value) in model.run(key, &inputs)? {
            println!("  {key}: output {name} = {value:?}");
        }
    }
    Ok(())
}
