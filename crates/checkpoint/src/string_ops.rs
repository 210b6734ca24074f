//! `ShardedFilename` (`<base>-00000-of-00002`), the string op a sharded
//! `tf.train.Saver` needs besides `StringJoin` and `StaticRegexFullMatch`
//! (TensorFlow checks for an `s3://` prefix to choose the temporary-shard
//! suffix), which are general string ops with their kernels in
//! `ferroflow-runtime`.

use ferroflow_graph::{InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};

fn strings<'a>(t: &'a Tensor, what: &str) -> Result<&'a [Vec<u8>]> {
    t.as_slice::<Vec<u8>>()
        .map_err(|_| Error::invalid_argument(format!("Input {what} must be a string tensor")))
}

fn infer_sharded_filename(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ensure!(
        ctx.num_inputs() == 3,
        value,
        "'{}' (ShardedFilename) takes basename, shard and num_shards",
        ctx.name
    );
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.expect_dtype(2, &[DType::Int32])?;
    for i in 0..3 {
        ctx.expect_rank(i, 0)?;
    }
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

fn sharded_filename_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let base = match strings(ctx.input(0)?, "basename")? {
        [b] => b.clone(),
        v => {
            bail!(
                invalid_argument,
                "ShardedFilename: basename must be a scalar, got {} elements",
                v.len()
            )
        }
    };
    let shard = ctx.input(1)?.scalar_i64()?;
    let num_shards = ctx.input(2)?.scalar_i64()?;
    let mut name = base;
    name.extend_from_slice(format!("-{shard:05}-of-{num_shards:05}").as_bytes());
    ctx.output(Tensor::scalar(name));
    Ok(())
}

/// Graph definitions of the string ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![OpDef::new(
        "ShardedFilename",
        &["basename", "shard", "num_shards"],
        infer_sharded_filename,
    )]
}

/// Kernels of the string ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![(
        "ShardedFilename",
        factory(|_| Ok(Box::new(sharded_filename_kernel))),
    )]
}
