//! Builds y = relu(x @ w) and runs it with a fed batch.

use ferroflow::{DType, GraphBuilder, PartialShape, Session, Tensor};

fn main() -> ferroflow::Result<()> {
    let mut g = GraphBuilder::new();
    let x = g.placeholder(
        DType::Float32,
        PartialShape::from_dims(vec![None, Some(2)]),
        "x",
    )?;
    let w = g.variable("w", Tensor::from_vec([2, 2], vec![1.0f32, -1.0, 0.5, 2.0])?)?;
    let y = g.with_name_scope("layer", |g| {
        let h = g.matmul(x, w.value, false, false)?;
        g.relu(h)
    })?;
    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[w.initializer])?;
    let batch = Tensor::from_vec([2, 2], vec![1.0f32, 2.0, -1.0, 0.0])?;
    let out = sess.run(vec![(x, batch)], &[y], &[])?;
    println!("relu(x @ w) = {:?}", out[0]);
    Ok(())
}
