//! `tf.train.Example` and `SequenceExample` parsing as graph ops:
//! `ParseExampleV2` (what `tf.compat.v1.parse_example` and
//! `parse_single_example` emit in TensorFlow 2.x), `ParseExample` (v1),
//! `ParseSingleExample`, `ParseSequenceExampleV2` and
//! `ParseSingleSequenceExample`, with TensorFlow's input names, attributes
//! and error messages.
//!
//! The messages are read straight from their wire format ([`wire`]) into
//! the output buffers ([`example`]); tf.data's `parse_example_dataset`
//! reuses [`parse_batch`] directly.

pub mod example;
mod sequence;
pub mod wire;

use ferroflow_graph::{AttrValue, Attrs, AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};

pub use example::{parse_batch, DenseSpec, Parsed, RaggedSpec, SparseSpec, Spec};

/// Registers the parsing ops and kernels (idempotent).
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

/// The graph-level definitions of the parsing ops.
pub fn op_defs() -> Vec<OpDef> {
    let mut v = vec![
        OpDef::new(
            "ParseExampleV2",
            &[
                "serialized",
                "names",
                "sparse_keys",
                "dense_keys",
                "ragged_keys",
                "dense_defaults*",
            ],
            infer_parse_example_v2,
        ),
        OpDef::new(
            "ParseExample",
            &[
                "serialized",
                "names",
                "sparse_keys*",
                "dense_keys*",
                "dense_defaults*",
            ],
            infer_parse_example_v1,
        ),
        OpDef::new(
            "ParseSingleExample",
            &["serialized", "dense_defaults*"],
            infer_parse_single_example,
        ),
    ];
    v.extend(sequence::op_defs());
    v
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    let mut v: Vec<(&'static str, KernelFactory)> = vec![
        (
            "ParseExampleV2",
            factory(|init| {
                let attrs = ExampleAttrs::v2(&init.node.attrs)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let sparse_keys = strings(ctx.input(2)?, "sparse_keys")?.to_vec();
                    let dense_keys = strings(ctx.input(3)?, "dense_keys")?.to_vec();
                    let ragged_keys = strings(ctx.input(4)?, "ragged_keys")?.to_vec();
                    ensure!(
                        ragged_keys.len() == attrs.ragged_types.len(),
                        invalid_argument,
                        "Expected len(ragged_keys) == len(ragged_value_types) but got: {} vs. {}",
                        ragged_keys.len(),
                        attrs.ragged_types.len()
                    );
                    let ragged = ragged_keys
                        .into_iter()
                        .zip(attrs.ragged_types.iter().zip(&attrs.ragged_splits))
                        .map(|(key, (&dtype, &split_dtype))| RaggedSpec {
                            key,
                            dtype,
                            split_dtype,
                        })
                        .collect();
                    run_parse(ctx, &attrs, sparse_keys, dense_keys, ragged, 5, true)
                }))
            }),
        ),
        (
            "ParseExample",
            factory(|init| {
                let attrs = ExampleAttrs::v1(&init.node.attrs)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let ns = attrs.sparse_types.len();
                    let nd = attrs.dense_types.len();
                    let sparse_keys = (0..ns)
                        .map(|i| scalar_string(ctx.input(2 + i)?, "sparse_keys"))
                        .collect::<Result<_>>()?;
                    let dense_keys = (0..nd)
                        .map(|i| scalar_string(ctx.input(2 + ns + i)?, "dense_keys"))
                        .collect::<Result<_>>()?;
                    run_parse(
                        ctx,
                        &attrs,
                        sparse_keys,
                        dense_keys,
                        Vec::new(),
                        2 + ns + nd,
                        true,
                    )
                }))
            }),
        ),
        (
            "ParseSingleExample",
            factory(|init| {
                let a = &init.node.attrs;
                let attrs = ExampleAttrs::single(a)?;
                let sparse_keys = str_list(a, "sparse_keys")?;
                let dense_keys = str_list(a, "dense_keys")?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    run_parse(
                        ctx,
                        &attrs,
                        sparse_keys.clone(),
                        dense_keys.clone(),
                        Vec::new(),
                        1,
                        false,
                    )
                }))
            }),
        ),
    ];
    v.extend(sequence::kernels());
    v
}

/// The attributes the three Example ops share (the ragged ones are
/// `ParseExampleV2`'s).
struct ExampleAttrs {
    sparse_types: Vec<DType>,
    dense_types: Vec<DType>,
    dense_shapes: Vec<Vec<i64>>,
    ragged_types: Vec<DType>,
    ragged_splits: Vec<DType>,
}

impl ExampleAttrs {
    fn build(a: &Attrs, num_sparse: &str) -> Result<Self> {
        let sparse_types = a.dtypes("sparse_types")?;
        let n = a.int_or(num_sparse, sparse_types.len() as i64)?;
        if n != sparse_types.len() as i64 {
            bail!(
                invalid_argument,
                "len(sparse_types) != {num_sparse}: {} vs. {n}",
                sparse_types.len()
            );
        }
        let dense_types = a.dtypes("Tdense")?;
        let dense_shapes = shape_list(a, "dense_shapes")?;
        ensure!(
            dense_shapes.len() == dense_types.len(),
            invalid_argument,
            "len(dense_shapes) != len(Tdense): {} vs. {}",
            dense_shapes.len(),
            dense_types.len()
        );
        Ok(ExampleAttrs {
            sparse_types,
            dense_types,
            dense_shapes,
            ragged_types: Vec::new(),
            ragged_splits: Vec::new(),
        })
    }
    fn v2(a: &Attrs) -> Result<Self> {
        let mut s = Self::build(a, "num_sparse")?;
        s.ragged_types = a.dtypes("ragged_value_types")?;
        s.ragged_splits = a.dtypes("ragged_split_types")?;
        ensure!(
            s.ragged_types.len() == s.ragged_splits.len(),
            invalid_argument,
            "len(ragged_value_types) != len(ragged_split_types): {} vs. {}",
            s.ragged_types.len(),
            s.ragged_splits.len()
        );
        for &t in &s.ragged_splits {
            ensure!(
                matches!(t, DType::Int32 | DType::Int64),
                invalid_argument,
                "ragged_split_types must be int32 or int64, got {t}"
            );
        }
        Ok(s)
    }
    fn v1(a: &Attrs) -> Result<Self> {
        let s = Self::build(a, "Nsparse")?;
        let nd = a.int_or("Ndense", s.dense_types.len() as i64)?;
        if nd != s.dense_types.len() as i64 {
            bail!(
                invalid_argument,
                "len(Tdense) != Ndense: {} vs. {nd}",
                s.dense_types.len()
            );
        }
        Ok(s)
    }
    fn single(a: &Attrs) -> Result<Self> {
        Self::build(a, "num_sparse")
    }
}

/// A `list(shape)` attribute as dims (-1 for unknown ones).
pub(crate) fn shape_list(a: &Attrs, name: &str) -> Result<Vec<Vec<i64>>> {
    a.shapes(name)?
        .iter()
        .map(|s| {
            s.dims()
                .map(|d| d.iter().map(|x| x.map_or(-1, |v| v as i64)).collect())
                .ok_or_else(|| {
                    Error::invalid_argument(format!("{name}: every shape must have a known rank"))
                })
        })
        .collect()
}

/// A `list(string)` attribute (an empty list may arrive untyped).
pub(crate) fn str_list(a: &Attrs, name: &str) -> Result<Vec<Vec<u8>>> {
    match a.get(name) {
        None => Ok(Vec::new()),
        Some(AttrValue::StrList(v)) => Ok(v.clone()),
        Some(AttrValue::IntList(v)) if v.is_empty() => Ok(Vec::new()),
        Some(AttrValue::TypeList(v)) if v.is_empty() => Ok(Vec::new()),
        Some(_) => Err(Error::invalid_argument(format!(
            "attribute '{name}' must be a list of strings"
        ))),
    }
}

pub(crate) fn strings<'a>(t: &'a Tensor, what: &str) -> Result<&'a [Vec<u8>]> {
    t.as_slice::<Vec<u8>>().map_err(|_| {
        Error::invalid_argument(format!("{what} must be a string tensor, got {}", t.dtype()))
    })
}

fn scalar_string(t: &Tensor, what: &str) -> Result<Vec<u8>> {
    match (t.rank(), strings(t, what)?) {
        (0, [s]) => Ok(s.clone()),
        _ => Err(Error::invalid_argument(format!(
            "{what} must be scalars, got shape {}",
            t.shape()
        ))),
    }
}

fn run_parse(
    ctx: &mut OpContext<'_>,
    attrs: &ExampleAttrs,
    sparse_keys: Vec<Vec<u8>>,
    dense_keys: Vec<Vec<u8>>,
    ragged: Vec<RaggedSpec>,
    defaults_at: usize,
    has_names: bool,
) -> Result<()> {
    ensure!(
        sparse_keys.len() == attrs.sparse_types.len(),
        invalid_argument,
        "Expected len(sparse_keys) == len(sparse_types) but got: {} vs. {}",
        sparse_keys.len(),
        attrs.sparse_types.len()
    );
    ensure!(
        dense_keys.len() == attrs.dense_types.len(),
        invalid_argument,
        "Expected len(dense_keys) == len(Tdense) but got: {} vs. {}",
        dense_keys.len(),
        attrs.dense_types.len()
    );
    let sparse = sparse_keys
        .into_iter()
        .zip(&attrs.sparse_types)
        .map(|(key, &dtype)| SparseSpec { key, dtype })
        .collect();
    let mut dense = Vec::with_capacity(dense_keys.len());
    for (i, key) in dense_keys.into_iter().enumerate() {
        let default = ctx.input(defaults_at + i)?.clone();
        dense.push(DenseSpec::new(
            key,
            attrs.dense_types[i],
            attrs.dense_shapes[i].clone(),
            Some(default),
        )?);
    }
    let spec = Spec::with_ragged(sparse, dense, ragged)?;
    let serialized = ctx.input(0)?;
    let scalar = match serialized.rank() {
        0 => true,
        1 => false,
        r => {
            bail!(
                invalid_argument,
                "Expected serialized to be a scalar or vector, got shape {} (rank {r})",
                serialized.shape()
            )
        }
    };
    if !has_names && !scalar {
        bail!(
            invalid_argument,
            "Expected serialized to be a scalar, got shape: {}",
            serialized.shape()
        );
    }
    let records = strings(serialized, "serialized")?;
    let names: &[Vec<u8>] = if has_names {
        let n = ctx.input(1)?;
        let names = strings(n, "names")?;
        if !names.is_empty() && n.dims() != serialized.dims() {
            bail!(
                invalid_argument,
                "Expected names have the same shape as serialized: {} vs {}",
                n.shape(),
                serialized.shape()
            );
        }
        names
    } else {
        &[]
    };
    let parsed = parse_batch(&spec, records, names, scalar)?;
    let (mut idx, mut vals, mut shapes) = (Vec::new(), Vec::new(), Vec::new());
    for (i, v, s) in parsed.sparse {
        idx.push(i);
        vals.push(v);
        shapes.push(s);
    }
    let (ragged_values, ragged_splits): (Vec<_>, Vec<_>) = parsed.ragged.into_iter().unzip();
    for t in idx
        .into_iter()
        .chain(vals)
        .chain(shapes)
        .chain(parsed.dense)
        .chain(ragged_values)
        .chain(ragged_splits)
    {
        ctx.output(t);
    }
    Ok(())
}

/// Static shapes of the outputs: sparse indices `[?, rank+1]`, values
/// `[?]`, dense shapes `[rank+1]`, dense values `batch + shape`.
pub(crate) fn example_outputs(
    batch: &PartialShape,
    sparse_types: &[DType],
    dense_types: &[DType],
    dense_shapes: &[Vec<i64>],
) -> Vec<OutputInfo> {
    let width = batch.rank().map(|r| r + 1);
    let mut out = Vec::new();
    for _ in sparse_types {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![None, width]),
        ));
    }
    for &t in sparse_types {
        out.push(OutputInfo::new(t, PartialShape::from_dims(vec![None])));
    }
    for _ in sparse_types {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![width]),
        ));
    }
    for (&t, shape) in dense_types.iter().zip(dense_shapes) {
        let s = match batch.dims() {
            None => PartialShape::unknown(),
            Some(b) => {
                let mut dims = b.to_vec();
                dims.extend(shape.iter().map(|&d| usize::try_from(d).ok()));
                PartialShape::from_dims(dims)
            }
        };
        out.push(OutputInfo::new(t, s));
    }
    out
}

fn infer_common(ctx: &InferContext, attrs: &ExampleAttrs, first_default: usize) -> Result<()> {
    ctx.expect_dtype(0, &[DType::String])?;
    let want = first_default + attrs.dense_types.len();
    if ctx.num_inputs() != want {
        return Err(ctx.shape_error(format!(
            "Expected {want} inputs ({} dense defaults), got {}",
            attrs.dense_types.len(),
            ctx.num_inputs()
        )));
    }
    for (i, &t) in attrs.dense_types.iter().enumerate() {
        ensure!(
            ctx.dtype(first_default + i) == t,
            type_error,
            "dense_defaults[{i}] of '{}' must be {t}, got {}",
            ctx.name,
            ctx.dtype(first_default + i)
        );
    }
    Ok(())
}

fn infer_parse_example_v2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let attrs = ExampleAttrs::build(ctx.attrs(), "num_sparse")?;
    infer_common(ctx, &attrs, 5)?;
    let batch = ctx.shape(0).clone();
    if batch.rank().is_some_and(|r| r > 1) {
        return Err(ctx.shape_error("Shape must be at most rank 1"));
    }
    let mut out = example_outputs(
        &batch,
        &attrs.sparse_types,
        &attrs.dense_types,
        &attrs.dense_shapes,
    );
    // Ragged outputs: values, then row splits (`[batch + 1]`, empty for a
    // scalar input).
    let values = ctx.attrs().dtypes("ragged_value_types")?;
    let splits = ctx.attrs().dtypes("ragged_split_types")?;
    for t in values {
        out.push(OutputInfo::new(t, PartialShape::from_dims(vec![None])));
    }
    // TensorFlow's static shape: `[batch + 1]` when the batch size is known.
    let rows = match batch.dims() {
        Some([Some(n)]) => Some(n + 1),
        _ => None,
    };
    for t in splits {
        out.push(OutputInfo::new(t, PartialShape::from_dims(vec![rows])));
    }
    Ok(out)
}

fn infer_parse_example_v1(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let attrs = ExampleAttrs::v1(ctx.attrs())?;
    infer_common(
        ctx,
        &attrs,
        2 + attrs.sparse_types.len() + attrs.dense_types.len(),
    )?;
    let batch = ctx.shape(0).with_rank(1, "serialized")?;
    Ok(example_outputs(
        &batch,
        &attrs.sparse_types,
        &attrs.dense_types,
        &attrs.dense_shapes,
    ))
}

fn infer_parse_single_example(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let attrs = ExampleAttrs::single(ctx.attrs())?;
    infer_common(ctx, &attrs, 1)?;
    let batch = ctx.shape(0).with_rank(0, "serialized")?;
    Ok(example_outputs(
        &batch,
        &attrs.sparse_types,
        &attrs.dense_types,
        &attrs.dense_shapes,
    ))
}
