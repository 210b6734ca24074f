//! `ParseSequenceExampleV2` (what `tf.compat.v1.io.parse_single_sequence_example`
//! and `parse_sequence_example` emit): a `SequenceExample`'s context is
//! parsed like an `Example` (both keep their `Features` in field 1), its
//! feature lists (field 2) into per-step sparse, dense or ragged outputs.
//! A ragged feature list gives its values (every step of every example,
//! concatenated), outer row splits (steps per example) and inner row splits
//! (values per step); `tf.io.RaggedFeature`'s partitions are applied in
//! Python.

use ferroflow_graph::{Attrs, AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};

use super::example::{check_dtype, dtype_name, shape_text, splits_tensor, Col, KeyMap};
use super::wire::{for_each_list_feature, for_each_map_entry, FeatureRef, Kind, Malformed};
use super::{parse_batch, shape_list, strings, DenseSpec, RaggedSpec, SparseSpec, Spec};

/// The op definitions of this module.
pub(crate) fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "ParseSingleSequenceExample",
            &[
                "serialized",
                "feature_list_dense_missing_assumed_empty",
                "context_sparse_keys*",
                "context_dense_keys*",
                "feature_list_sparse_keys*",
                "feature_list_dense_keys*",
                "context_dense_defaults*",
                "debug_name",
            ],
            infer_single_sequence,
        ),
        OpDef::new(
            "ParseSequenceExampleV2",
            &[
                "serialized",
                "debug_name",
                "context_sparse_keys",
                "context_dense_keys",
                "context_ragged_keys",
                "feature_list_sparse_keys",
                "feature_list_dense_keys",
                "feature_list_ragged_keys",
                "feature_list_dense_missing_assumed_empty",
                "context_dense_defaults*",
            ],
            infer_sequence_v2,
        ),
    ]
}

/// The kernels of this module.
pub(crate) fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "ParseSingleSequenceExample",
            factory(|init| {
                let attrs = SeqAttrs::new(&init.node.attrs)?;
                expect_len(
                    &init.node.attrs,
                    "Ncontext_dense",
                    attrs.context_dense_types.len(),
                )?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    run_single_sequence(ctx, &attrs)
                }))
            }),
        ),
        (
            "ParseSequenceExampleV2",
            factory(|init| {
                let attrs = SeqAttrs::new(&init.node.attrs)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    run_sequence(ctx, &attrs)
                }))
            }),
        ),
    ]
}

/// The legacy `ParseSingleSequenceExample` (older GraphDefs): one scalar
/// record, keys as scalar inputs, the dense feature lists that may be
/// missing named by key, and no lengths output.
fn run_single_sequence(ctx: &mut OpContext<'_>, a: &SeqAttrs) -> Result<()> {
    let serialized = ctx.input(0)?;
    ensure!(
        serialized.rank() == 0,
        invalid_argument,
        "Expected serialized to be a scalar, got shape: {}",
        serialized.shape()
    );
    let records = strings(serialized, "serialized")?;
    let (cs, cd) = (a.context_sparse_types.len(), a.context_dense_types.len());
    let (fs, fd) = (a.list_sparse_types.len(), a.list_dense_types.len());
    let scalar_keys = |from: usize, n: usize, what: &str| -> Result<Vec<Vec<u8>>> {
        (from..from + n)
            .map(|i| match strings(ctx.input(i)?, what)? {
                [k] => Ok(k.clone()),
                _ => Err(Error::invalid_argument(format!("{what} must be scalars"))),
            })
            .collect()
    };
    let c_sparse = scalar_keys(2, cs, "context_sparse_keys")?;
    let c_dense = scalar_keys(2 + cs, cd, "context_dense_keys")?;
    let f_sparse = scalar_keys(2 + cs + cd, fs, "feature_list_sparse_keys")?;
    let f_dense = scalar_keys(2 + cs + cd + fs, fd, "feature_list_dense_keys")?;
    let may_miss = strings(ctx.input(1)?, "feature_list_dense_missing_assumed_empty")?;
    let missing_ok = f_dense.iter().map(|k| may_miss.contains(k)).collect();
    let first_default = 2 + cs + cd + fs + fd;
    let defaults: Vec<Tensor> = (0..cd)
        .map(|i| ctx.input(first_default + i).cloned())
        .collect::<Result<_>>()?;
    let name_t = ctx.input(first_default + cd)?;
    let names = strings(name_t, "debug_name")?.to_vec();
    let keys = SeqKeys {
        c_sparse,
        c_dense,
        c_ragged: Vec::new(),
        f_sparse,
        f_dense,
        f_ragged: Vec::new(),
        missing_ok,
    };
    let mut outs = parse_sequences(records, &names, true, keys, &defaults, a)?;
    outs.truncate(outs.len() - fd); // no lengths output
    for t in outs {
        ctx.output(t);
    }
    Ok(())
}

fn infer_single_sequence(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = SeqAttrs::new(ctx.attrs())?;
    ctx.expect_dtype(0, &[DType::String])?;
    let (cs, cd) = (a.context_sparse_types.len(), a.context_dense_types.len());
    let (fs, fd) = (a.list_sparse_types.len(), a.list_dense_types.len());
    let want = 3 + cs + cd + fs + fd + cd;
    if ctx.num_inputs() != want {
        return Err(ctx.shape_error(format!("Expected {want} inputs, got {}", ctx.num_inputs())));
    }
    let scalar = PartialShape::scalar();
    let mut out = super::example_outputs(
        &scalar,
        &a.context_sparse_types,
        &a.context_dense_types,
        &a.context_dense_shapes,
    );
    for _ in 0..fs {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![None, Some(2)]),
        ));
    }
    for &t in &a.list_sparse_types {
        out.push(OutputInfo::new(t, PartialShape::from_dims(vec![None])));
    }
    for _ in 0..fs {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![Some(2)]),
        ));
    }
    for (&t, shape) in a.list_dense_types.iter().zip(&a.list_dense_shapes) {
        let mut dims = vec![None];
        dims.extend(shape.iter().map(|&d| usize::try_from(d).ok()));
        out.push(OutputInfo::new(t, PartialShape::from_dims(dims)));
    }
    Ok(out)
}

/// The attributes of `ParseSequenceExampleV2`.
struct SeqAttrs {
    context_sparse_types: Vec<DType>,
    context_dense_types: Vec<DType>,
    context_dense_shapes: Vec<Vec<i64>>,
    list_sparse_types: Vec<DType>,
    list_dense_types: Vec<DType>,
    list_dense_shapes: Vec<Vec<i64>>,
    /// Value and row-split dtypes of the ragged context features.
    context_ragged_types: Vec<DType>,
    context_ragged_splits: Vec<DType>,
    /// Value and row-split dtypes of the ragged feature lists.
    list_ragged_types: Vec<DType>,
    list_ragged_splits: Vec<DType>,
}

fn expect_len(a: &Attrs, count: &str, n: usize) -> Result<()> {
    let want = a.int_or(count, n as i64)?;
    if want != n as i64 {
        bail!(
            invalid_argument,
            "{count} is {want} but its type list has {n} entries"
        );
    }
    Ok(())
}

impl SeqAttrs {
    fn new(a: &Attrs) -> Result<Self> {
        let ragged = |values: &str, splits: &str| -> Result<(Vec<DType>, Vec<DType>)> {
            let (v, sp) = (a.dtypes(values)?, a.dtypes(splits)?);
            ensure!(
                v.len() == sp.len(),
                invalid_argument,
                "len({values}) != len({splits}): {} vs. {}",
                v.len(),
                sp.len()
            );
            for &t in &v {
                check_dtype(t, values)?;
            }
            if let Some(t) = sp
                .iter()
                .find(|t| !matches!(t, DType::Int32 | DType::Int64))
            {
                bail!(invalid_argument, "{splits} must be int32 or int64, got {t}");
            }
            Ok((v, sp))
        };
        let (context_ragged_types, context_ragged_splits) =
            ragged("context_ragged_value_types", "context_ragged_split_types")?;
        let (list_ragged_types, list_ragged_splits) = ragged(
            "feature_list_ragged_value_types",
            "feature_list_ragged_split_types",
        )?;
        let s = SeqAttrs {
            context_sparse_types: a.dtypes("context_sparse_types")?,
            context_dense_types: a.dtypes("Tcontext_dense")?,
            context_dense_shapes: shape_list(a, "context_dense_shapes")?,
            list_sparse_types: a.dtypes("feature_list_sparse_types")?,
            list_dense_types: a.dtypes("feature_list_dense_types")?,
            list_dense_shapes: shape_list(a, "feature_list_dense_shapes")?,
            context_ragged_types,
            context_ragged_splits,
            list_ragged_types,
            list_ragged_splits,
        };
        expect_len(a, "Ncontext_sparse", s.context_sparse_types.len())?;
        expect_len(a, "Nfeature_list_sparse", s.list_sparse_types.len())?;
        expect_len(a, "Nfeature_list_dense", s.list_dense_types.len())?;
        if s.context_dense_shapes.len() != s.context_dense_types.len()
            || s.list_dense_shapes.len() != s.list_dense_types.len()
        {
            bail!(
                invalid_argument,
                "ParseSequenceExampleV2: each dense type needs a dense shape"
            );
        }
        for &t in s.list_sparse_types.iter().chain(&s.list_dense_types) {
            check_dtype(t, "feature list")?;
        }
        if let Some(shape) = s
            .list_dense_shapes
            .iter()
            .find(|s| s.iter().any(|&d| d < 0))
        {
            bail!(
                invalid_argument,
                "feature_list_dense_shapes must be fully defined, got {}",
                shape_text(shape)
            );
        }
        Ok(s)
    }
}

fn infer_sequence_v2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let a = SeqAttrs::new(ctx.attrs())?;
    ctx.expect_dtype(0, &[DType::String])?;
    let want = 9 + a.context_dense_types.len();
    if ctx.num_inputs() != want {
        return Err(ctx.shape_error(format!("Expected {want} inputs, got {}", ctx.num_inputs())));
    }
    let batch = ctx.shape(0).clone();
    let rank = batch.rank();
    if rank.is_some_and(|r| r > 1) {
        return Err(ctx.shape_error("Shape must be at most rank 1"));
    }
    let mut out = super::example_outputs(
        &batch,
        &a.context_sparse_types,
        &a.context_dense_types,
        &a.context_dense_shapes,
    );
    // Row splits over the batch: `[batch + 1]` when the batch size is known.
    let batch_splits = PartialShape::from_dims(vec![match batch.dims() {
        Some([Some(n)]) => Some(n + 1),
        _ => None,
    }]);
    let vector = PartialShape::from_dims(vec![None]);
    for &t in &a.context_ragged_types {
        out.push(OutputInfo::new(t, vector.clone()));
    }
    for &t in &a.context_ragged_splits {
        out.push(OutputInfo::new(t, batch_splits.clone()));
    }
    let width = rank.map(|r| r + 2);
    for _ in &a.list_sparse_types {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![None, width]),
        ));
    }
    for &t in &a.list_sparse_types {
        out.push(OutputInfo::new(t, PartialShape::from_dims(vec![None])));
    }
    for _ in &a.list_sparse_types {
        out.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![width]),
        ));
    }
    for (&t, shape) in a.list_dense_types.iter().zip(&a.list_dense_shapes) {
        let s = match batch.dims() {
            None => PartialShape::unknown(),
            Some(b) => {
                let mut dims = b.to_vec();
                dims.push(None);
                dims.extend(shape.iter().map(|&d| usize::try_from(d).ok()));
                PartialShape::from_dims(dims)
            }
        };
        out.push(OutputInfo::new(t, s));
    }
    for _ in &a.list_dense_types {
        out.push(OutputInfo::new(DType::Int64, batch.clone()));
    }
    for &t in &a.list_ragged_types {
        out.push(OutputInfo::new(t, vector.clone()));
    }
    for &t in &a.list_ragged_splits {
        out.push(OutputInfo::new(t, batch_splits.clone()));
    }
    for &t in &a.list_ragged_splits {
        out.push(OutputInfo::new(t, vector.clone()));
    }
    Ok(out)
}

/// Per example, per step: the number of values (sparse lists), or the
/// number of steps (dense lists).
struct ListAcc {
    values: Col,
    /// Sparse: for each example, its steps' value counts. Dense: one entry
    /// per example holding its step count.
    steps: Vec<Vec<usize>>,
}

fn run_sequence(ctx: &mut OpContext<'_>, a: &SeqAttrs) -> Result<()> {
    let serialized = ctx.input(0)?;
    let scalar = match serialized.rank() {
        0 => true,
        1 => false,
        _ => {
            bail!(
                invalid_argument,
                "Expected serialized to be a scalar or vector, got shape {}",
                serialized.shape()
            )
        }
    };
    let records = strings(serialized, "serialized")?;
    let names = strings(ctx.input(1)?, "debug_name")?;
    let key_list = |i: usize, what: &str, n: usize| -> Result<Vec<Vec<u8>>> {
        let keys = strings(ctx.input(i)?, what)?.to_vec();
        ensure!(
            keys.len() == n,
            invalid_argument,
            "Expected len({what}) == {n}, got {}",
            keys.len()
        );
        Ok(keys)
    };
    let c_sparse = key_list(2, "context_sparse_keys", a.context_sparse_types.len())?;
    let c_dense = key_list(3, "context_dense_keys", a.context_dense_types.len())?;
    let f_sparse = key_list(5, "feature_list_sparse_keys", a.list_sparse_types.len())?;
    let f_dense = key_list(6, "feature_list_dense_keys", a.list_dense_types.len())?;
    let c_ragged = key_list(4, "context_ragged_keys", a.context_ragged_types.len())?;
    let f_ragged = key_list(7, "feature_list_ragged_keys", a.list_ragged_types.len())?;
    let missing_ok_t = ctx.input(8)?;
    let missing_ok = missing_ok_t.as_slice::<bool>().map_err(|_| {
        Error::invalid_argument("feature_list_dense_missing_assumed_empty must be bool")
    })?;
    ensure!(
        missing_ok.len() == f_dense.len(),
        invalid_argument,
        "Expected len(feature_list_dense_missing_assumed_empty) == {}, got {}",
        f_dense.len(),
        missing_ok.len()
    );
    let missing_ok = missing_ok.to_vec();
    let defaults: Vec<Tensor> = (0..a.context_dense_types.len())
        .map(|i| ctx.input(9 + i).cloned())
        .collect::<Result<_>>()?;
    let keys = SeqKeys {
        c_sparse,
        c_dense,
        c_ragged,
        f_sparse,
        f_dense,
        f_ragged,
        missing_ok,
    };
    for t in parse_sequences(records, names, scalar, keys, &defaults, a)? {
        ctx.output(t);
    }
    Ok(())
}

/// The keys a sequence parse looks for.
struct SeqKeys {
    c_sparse: Vec<Vec<u8>>,
    c_dense: Vec<Vec<u8>>,
    c_ragged: Vec<Vec<u8>>,
    f_sparse: Vec<Vec<u8>>,
    f_dense: Vec<Vec<u8>>,
    f_ragged: Vec<Vec<u8>>,
    /// Per dense feature list: whether a missing list counts as empty.
    missing_ok: Vec<bool>,
}

/// Parses `records` (`SequenceExample`s): the outputs of
/// `ParseSequenceExampleV2` in order (feature-list lengths last).
fn parse_sequences(
    records: &[Vec<u8>],
    names: &[Vec<u8>],
    scalar: bool,
    keys: SeqKeys,
    defaults: &[Tensor],
    a: &SeqAttrs,
) -> Result<Vec<Tensor>> {
    let SeqKeys {
        c_sparse,
        c_dense,
        c_ragged,
        f_sparse,
        f_dense,
        f_ragged,
        missing_ok,
    } = keys;
    let mut out = Vec::new();
    // Context: an Example's parser reads field 1 of the same bytes.
    let mut dense = Vec::new();
    for (i, key) in c_dense.into_iter().enumerate() {
        dense.push(DenseSpec::new(
            key,
            a.context_dense_types[i],
            a.context_dense_shapes[i].clone(),
            Some(defaults[i].clone()),
        )?);
    }
    let sparse = c_sparse
        .into_iter()
        .zip(&a.context_sparse_types)
        .map(|(key, &dtype)| SparseSpec { key, dtype })
        .collect();
    let ragged = c_ragged
        .into_iter()
        .zip(a.context_ragged_types.iter().zip(&a.context_ragged_splits))
        .map(|(key, (&dtype, &split_dtype))| RaggedSpec {
            key,
            dtype,
            split_dtype,
        })
        .collect();
    let context = parse_batch(
        &Spec::with_ragged(sparse, dense, ragged)?,
        records,
        names,
        scalar,
    )?;

    // Feature lists: sparse, then dense, then ragged slots.
    let mut index = KeyMap::default();
    for (slot, key) in f_sparse.iter().chain(&f_dense).chain(&f_ragged).enumerate() {
        if index.insert(key.clone(), slot).is_some() {
            bail!(
                invalid_argument,
                "Duplicate feature list key: {}",
                String::from_utf8_lossy(key)
            );
        }
    }
    let (ns, nd) = (f_sparse.len(), f_dense.len());
    let mut accs: Vec<ListAcc> = a
        .list_sparse_types
        .iter()
        .chain(&a.list_dense_types)
        .chain(&a.list_ragged_types)
        .map(|&t| ListAcc {
            values: Col::new(t),
            steps: Vec::with_capacity(records.len()),
        })
        .collect();
    let mut found: Vec<Option<&[u8]>> = vec![None; accs.len()];
    for (e, bytes) in records.iter().enumerate() {
        let name = match names.get(e) {
            Some(n) if !n.is_empty() => String::from_utf8_lossy(n).into_owned(),
            _ => "<unknown>".to_string(),
        };
        found.iter_mut().for_each(|f| *f = None);
        for_each_map_entry(bytes, 2, |key, list| {
            if let Some(&slot) = index.get(key) {
                found[slot].get_or_insert(list);
            }
            Ok(())
        })
        .map_err(|_| malformed(bytes))?;
        for (slot, acc) in accs.iter_mut().enumerate() {
            let dense = (ns..ns + nd).contains(&slot);
            let (key, dtype) = if slot < ns {
                (&f_sparse[slot], a.list_sparse_types[slot])
            } else if dense {
                (&f_dense[slot - ns], a.list_dense_types[slot - ns])
            } else {
                (
                    &f_ragged[slot - ns - nd],
                    a.list_ragged_types[slot - ns - nd],
                )
            };
            let mut counts = Vec::new();
            match found[slot] {
                Some(list) => {
                    let mut step = 0usize;
                    let res = for_each_list_feature(list, |f| {
                        let f = FeatureRef::parse(f)?;
                        if f.kind != Kind::Empty && f.kind != kind_of(dtype) {
                            return Err(Malformed);
                        }
                        let before = acc.values.len();
                        acc.values.push_feature(&f)?;
                        counts.push(acc.values.len() - before);
                        step += 1;
                        Ok(())
                    });
                    if res.is_err() {
                        // Tell a wrong dtype from malformed bytes.
                        return Err(list_error(list, step, dtype, &name, key, bytes));
                    }
                }
                None if dense && !missing_ok[slot - ns] => {
                    bail!(
                        invalid_argument,
                        "Name: {name}, Feature list '{}' is required but could not be found.  Did you mean to include it in feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?",
                        String::from_utf8_lossy(key)
                    );
                }
                None => {}
            }
            if dense {
                let shape = &a.list_dense_shapes[slot - ns];
                let stride: usize = shape.iter().map(|&d| d as usize).product();
                let total: usize = counts.iter().sum();
                if total != counts.len() * stride {
                    let mut full = vec![-1];
                    full.extend(shape);
                    bail!(
                        invalid_argument,
                        "Feature list '{}' has an unexpected number of values.  Total values size: {total} is not consistent with output shape: {}",
                        String::from_utf8_lossy(key),
                        shape_text(&full)
                    );
                }
                counts = vec![counts.len()];
            }
            acc.steps.push(counts);
        }
    }

    let (mut ci, mut cv, mut cs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, v, s) in context.sparse {
        ci.push(i);
        cv.push(v);
        cs.push(s);
    }
    let (c_values, c_splits): (Vec<_>, Vec<_>) = context.ragged.into_iter().unzip();
    for t in ci
        .into_iter()
        .chain(cv)
        .chain(cs)
        .chain(context.dense)
        .chain(c_values)
        .chain(c_splits)
    {
        out.push(t);
    }
    let ragged_accs = accs.split_off(ns + nd);
    let dense_accs = accs.split_off(ns);
    let mut parts = (Vec::new(), Vec::new(), Vec::new());
    for acc in accs {
        let (i, v, s) = sparse_list_output(acc, scalar)?;
        parts.0.push(i);
        parts.1.push(v);
        parts.2.push(s);
    }
    let mut lengths = Vec::new();
    let mut dense_out = Vec::new();
    for (acc, shape) in dense_accs.into_iter().zip(&a.list_dense_shapes) {
        let (v, l) = dense_list_output(acc, shape, scalar)?;
        dense_out.push(v);
        lengths.push(l);
    }
    for t in parts
        .0
        .into_iter()
        .chain(parts.1)
        .chain(parts.2)
        .chain(dense_out)
        .chain(lengths)
    {
        out.push(t);
    }
    let mut ragged = (Vec::new(), Vec::new(), Vec::new());
    for (acc, &split_dtype) in ragged_accs.into_iter().zip(&a.list_ragged_splits) {
        let (v, o, i) = ragged_list_output(acc, split_dtype, scalar)?;
        ragged.0.push(v);
        ragged.1.push(o);
        ragged.2.push(i);
    }
    out.extend(ragged.0.into_iter().chain(ragged.1).chain(ragged.2));
    Ok(out)
}

/// A ragged feature list: the values of every step of every example,
/// concatenated; the outer row splits (steps per example, `batch + 1` of
/// them; empty for a scalar input, where TensorFlow's kernel leaves them
/// unset and its Python never reads them); and the inner row splits
/// (values per step, one more than the steps of the whole batch).
fn ragged_list_output(
    acc: ListAcc,
    split_dtype: DType,
    scalar: bool,
) -> Result<(Tensor, Tensor, Tensor)> {
    let total = acc.values.len();
    let mut outer = Vec::with_capacity(if scalar { 0 } else { acc.steps.len() + 1 });
    let mut inner = vec![0i64];
    if !scalar {
        outer.push(0);
    }
    let mut end = 0i64;
    for steps in &acc.steps {
        for &c in steps {
            end += c as i64;
            inner.push(end);
        }
        if !scalar {
            outer.push(inner.len() as i64 - 1);
        }
    }
    Ok((
        acc.values.into_tensor(vec![total])?,
        splits_tensor(outer, split_dtype)?,
        splits_tensor(inner, split_dtype)?,
    ))
}

fn kind_of(d: DType) -> Kind {
    match d {
        DType::Float32 => Kind::Float,
        DType::Int64 => Kind::Int64,
        _ => Kind::Bytes,
    }
}

fn malformed(bytes: &[u8]) -> Error {
    Error::invalid_argument(format!(
        "Could not parse example input, value: '{}'",
        String::from_utf8_lossy(bytes)
    ))
}

/// The error for step `step` of a feature list that did not read: a wrong
/// dtype (TensorFlow's message) or malformed bytes.
fn list_error(
    list: &[u8],
    step: usize,
    dtype: DType,
    name: &str,
    key: &[u8],
    bytes: &[u8],
) -> Error {
    let mut i = 0usize;
    let mut wrong = false;
    let _ = for_each_list_feature(list, |f| {
        if i == step {
            wrong = FeatureRef::parse(f)
                .is_ok_and(|f| f.kind != Kind::Empty && f.kind != kind_of(dtype));
        }
        i += 1;
        Ok(())
    });
    if wrong {
        Error::invalid_argument(format!(
            "Name: {name}, Feature list: {}, Index: {step}.  Data types don't match. Expected type: {}",
            String::from_utf8_lossy(key),
            dtype_name(dtype)
        ))
    } else {
        malformed(bytes)
    }
}

/// Indices `[N, 3]` (example, step, position) or `[N, 2]`, values, and the
/// dense shape `[batch, max steps, max values]` (or without `batch`).
fn sparse_list_output(acc: ListAcc, scalar: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let total = acc.values.len();
    let width = if scalar { 2 } else { 3 };
    let mut indices = Vec::with_capacity(total * width);
    let (mut max_steps, mut max_len) = (0usize, 0usize);
    for (e, steps) in acc.steps.iter().enumerate() {
        max_steps = max_steps.max(steps.len());
        for (t, &c) in steps.iter().enumerate() {
            max_len = max_len.max(c);
            for j in 0..c {
                if !scalar {
                    indices.push(e as i64);
                }
                indices.push(t as i64);
                indices.push(j as i64);
            }
        }
    }
    let mut shape = if scalar {
        vec![]
    } else {
        vec![acc.steps.len() as i64]
    };
    shape.extend([max_steps as i64, max_len as i64]);
    Ok((
        Tensor::from_vec(vec![total, width], indices)?,
        acc.values.into_tensor(vec![total])?,
        Tensor::vector(shape),
    ))
}

/// `[batch, max steps] + shape` padded with zeros (or `[steps] + shape`),
/// and the step counts.
fn dense_list_output(acc: ListAcc, shape: &[i64], scalar: bool) -> Result<(Tensor, Tensor)> {
    let stride: usize = shape.iter().map(|&d| d as usize).product();
    let steps: Vec<usize> = acc.steps.iter().map(|s| s[0]).collect();
    let max_steps = steps.iter().copied().max().unwrap_or(0);
    let n = steps.len();
    let per = max_steps * stride;
    let dtype = match &acc.values {
        Col::F32(_) => DType::Float32,
        Col::I64(_) => DType::Int64,
        Col::Str(_) => DType::String,
    };
    let mut out = Col::filled(dtype, n * per, None)?;
    let mut offset = 0usize;
    for (e, &t) in steps.iter().enumerate() {
        let c = t * stride;
        let dst = e * per..e * per + c;
        let src = offset..offset + c;
        match (&mut out, &acc.values) {
            (Col::F32(o), Col::F32(v)) => o[dst].copy_from_slice(&v[src]),
            (Col::I64(o), Col::I64(v)) => o[dst].copy_from_slice(&v[src]),
            (Col::Str(o), Col::Str(v)) => o[dst].clone_from_slice(&v[src]),
            _ => unreachable!("columns of one feature share a dtype"),
        }
        offset += c;
    }
    let mut dims: Vec<usize> = if scalar { vec![] } else { vec![n] };
    dims.push(max_steps);
    dims.extend(shape.iter().map(|&d| d as usize));
    let lengths: Vec<i64> = steps.iter().map(|&t| t as i64).collect();
    let lengths = if scalar {
        Tensor::scalar(lengths.first().copied().unwrap_or(0))
    } else {
        Tensor::vector(lengths)
    };
    Ok((out.into_tensor(dims)?, lengths))
}
