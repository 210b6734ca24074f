//! TensorFlow's lookup tables as session resources: `HashTableV2`,
//! `MutableHashTableV2`, `MutableHashTableOfTensorsV2`,
//! `MutableDenseHashTableV2`, and the ops on their handles
//! (`InitializeTableV2`, `InitializeTableFromTextFileV2`,
//! `LookupTableFindV2`, `LookupTableSizeV2`, `LookupTableInsertV2`,
//! `LookupTableRemoveV2`, `LookupTableExportV2`, `LookupTableImportV2`).
//! The ref-typed names of TF1 graphs (`HashTable`, `LookupTableFind`,
//! `InitializeTable`, ...) run the same kernels, so old GraphDefs import.
//!
//! Tables are shared by `shared_name` in `container` (or, with
//! `use_node_name_sharing`, by the node's name) like queues; an unshared
//! table belongs to its node and session. Semantics and messages follow
//! TensorFlow's kernels: a static table is filled once (duplicate keys
//! must agree), reads before that fail with `FailedPrecondition`; finds
//! take keys of any shape and a default per value or per key.
//!
//! See [`table`] for the resource and [`text`] for text-file parsing.

mod str_index;
pub mod table;
pub mod text;

use std::sync::Arc;

use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Result, Shape, Tensor};

use table::{tf_type_name, Table, TableKind};
use text::TextFileSpec;

/// Which table op creates a table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Creator {
    Hash,
    Mutable,
    MutableOfTensors,
    Dense,
}

/// The attributes of a table op.
struct CreateTable {
    creator: Creator,
    container: String,
    shared_name: String,
    key_dtype: DType,
    value_dtype: DType,
    value_shape: Shape,
    initial_num_buckets: i64,
    max_load_factor: f64,
}

impl CreateTable {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let key = if self.shared_name.is_empty() {
            format!("\u{0}table:{}", ctx.node)
        } else {
            self.shared_name.clone()
        };
        let name = if self.shared_name.is_empty() {
            format!("_{}_{}", crate::queue::next_resource_id(), ctx.node)
        } else {
            self.shared_name.clone()
        };
        let key_dtype = match self.creator {
            Creator::Dense => ctx.input(0)?.dtype(),
            _ => self.key_dtype,
        };
        let table: Arc<Table> = ctx
            .session
            .get_or_create_shared(&self.container, &key, || match self.creator {
                Creator::Hash => Table::new(
                    TableKind::Static,
                    &name,
                    self.key_dtype,
                    self.value_dtype,
                    Shape::scalar(),
                ),
                Creator::Mutable => Table::new(
                    TableKind::Mutable,
                    &name,
                    self.key_dtype,
                    self.value_dtype,
                    Shape::scalar(),
                ),
                Creator::MutableOfTensors => Table::new(
                    TableKind::Mutable,
                    &name,
                    self.key_dtype,
                    self.value_dtype,
                    self.value_shape.clone(),
                ),
                Creator::Dense => Table::new_dense(
                    &name,
                    ctx.input(0)?.clone(),
                    ctx.input(1)?.clone(),
                    self.value_dtype,
                    self.value_shape.clone(),
                    self.initial_num_buckets,
                    self.max_load_factor,
                ),
            })?;
        if table.key_dtype() != key_dtype || table.value_dtype() != self.value_dtype {
            bail!(
                invalid_argument,
                "Conflicting key/value dtypes {}->{} with {}-{} for table {}",
                tf_type_name(key_dtype),
                tf_type_name(self.value_dtype),
                tf_type_name(table.key_dtype()),
                tf_type_name(table.value_dtype()),
                self.shared_name
            );
        }
        ctx.output_resource(table);
        Ok(())
    }
}

fn create_factory(creator: Creator) -> KernelFactory {
    factory(move |init| {
        let a = &init.node.attrs;
        let mut shared_name = a.str_or("shared_name", "")?;
        if shared_name.is_empty() && a.bool_or("use_node_name_sharing", false)? {
            shared_name = init.node.name.clone();
        }
        let value_shape = match creator {
            Creator::MutableOfTensors | Creator::Dense => a
                .shape("value_shape")
                .ok()
                .and_then(|s| s.to_shape())
                .unwrap_or_else(Shape::scalar),
            _ => Shape::scalar(),
        };
        let k = CreateTable {
            creator,
            container: a.str_or("container", "")?,
            shared_name,
            key_dtype: if creator == Creator::Dense {
                DType::Int64
            } else {
                a.dtype("key_dtype")?
            },
            value_dtype: a.dtype("value_dtype")?,
            value_shape,
            initial_num_buckets: a.int_or("initial_num_buckets", 131072)?,
            max_load_factor: a.float_or("max_load_factor", 0.8)?,
        };
        Ok(Box::new(move |ctx: &mut OpContext<'_>| k.compute(ctx)))
    })
}

/// A kernel on a table handle (input 0).
fn on_table(
    f: impl Fn(&Table, &mut OpContext<'_>) -> Result<()> + Send + Sync + Copy + 'static,
) -> KernelFactory {
    factory(move |_| {
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let t = ctx.input_resource::<Table>(0)?;
            f(&t, ctx)
        }))
    })
}

fn text_file_factory() -> KernelFactory {
    factory(|init| {
        let a = &init.node.attrs;
        let delimiter = a.str_or("delimiter", "\t")?;
        let spec = TextFileSpec {
            key_index: a.int("key_index")?,
            value_index: a.int("value_index")?,
            vocab_size: a.int_or("vocab_size", -1)?,
            delimiter: delimiter.as_bytes().first().copied().unwrap_or(b'\t'),
            offset: a.int_or("offset", 0)?,
        };
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let t = ctx.input_resource::<Table>(0)?;
            let filename = ctx.input(1)?;
            if filename.rank() != 0 || filename.dtype() != DType::String {
                bail!(
                    invalid_argument,
                    "filename should be a single string, but got {}",
                    filename.shape()
                );
            }
            let filename =
                String::from_utf8_lossy(&filename.as_slice::<Vec<u8>>()?[0]).into_owned();
            ensure!(
                t.kind() == TableKind::Static,
                invalid_argument,
                "Table {} is not initializable",
                t.name()
            );
            text::check_indices(&spec, t.key_dtype(), t.value_dtype())?;
            if t.is_initialized() {
                // TensorFlow ignores a second initialization from a file.
                return Ok(());
            }
            let (keys, values) = text::read(&filename, &spec, t.key_dtype(), t.value_dtype())?;
            t.initialize(&keys, &values)
        }))
    })
}

fn handle_output(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(
        DType::Resource,
        PartialShape::scalar(),
    )])
}

fn infer_none(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

fn infer_size(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::Int64, PartialShape::scalar())])
}

/// The value shape of the table op producing input 0, if known.
fn table_value_shape(ctx: &InferContext) -> Option<PartialShape> {
    let src = ctx.inputs.first()?;
    let node = ctx.graph.node(src.node);
    match node.op.as_str() {
        "HashTableV2" | "HashTable" | "MutableHashTableV2" | "MutableHashTable" => {
            Some(PartialShape::scalar())
        }
        "MutableHashTableOfTensorsV2"
        | "MutableHashTableOfTensors"
        | "MutableDenseHashTableV2"
        | "MutableDenseHashTable" => Some(
            node.attrs
                .shape("value_shape")
                .unwrap_or_else(|_| PartialShape::scalar()),
        ),
        _ => None,
    }
}

fn infer_find(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dtype = ctx.dtype(2);
    let shape = match (table_value_shape(ctx), ctx.shape(1).dims()) {
        (Some(v), Some(k)) => match v.dims() {
            Some(vd) => {
                let mut d = k.to_vec();
                d.extend_from_slice(vd);
                PartialShape::from_dims(d)
            }
            None => PartialShape::unknown(),
        },
        _ => PartialShape::unknown(),
    };
    Ok(vec![OutputInfo::new(dtype, shape)])
}

fn infer_initialize(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 1)?;
    if let (Some(a), Some(b)) = (ctx.shape(1).dim(0), ctx.shape(2).dim(0)) {
        if a != b {
            return Err(ctx.shape_error(format!(
                "Dimension 0 in both shapes must be equal, but are {a} and {b}. Shapes are [{a}] \
                 and [{b}]."
            )));
        }
    }
    Ok(Vec::new())
}

fn infer_text_file(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_rank(1, 0)?;
    Ok(Vec::new())
}

fn infer_export(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let kd = ctx.attrs.dtype("Tkeys")?;
    let vd = ctx.attrs.dtype("Tvalues")?;
    let src = ctx
        .inputs
        .first()
        .map(|s| ctx.graph.node(s.node).op.clone());
    let dense = src
        .as_deref()
        .is_some_and(|op| op.starts_with("MutableDenseHashTable"));
    let (ks, vs) = if dense {
        (
            PartialShape::from_dims(vec![None, Some(1)]),
            PartialShape::unknown_dims(2),
        )
    } else {
        let vs = match table_value_shape(ctx).and_then(|v| v.dims().map(|d| d.to_vec())) {
            Some(d) => {
                let mut all = vec![None];
                all.extend(d);
                PartialShape::from_dims(all)
            }
            None => PartialShape::unknown(),
        };
        (PartialShape::unknown_dims(1), vs)
    };
    Ok(vec![OutputInfo::new(kd, ks), OutputInfo::new(vd, vs)])
}

/// The graph-level definitions of the table ops (V2 names and TF1's
/// ref-typed names).
pub fn op_defs() -> Vec<OpDef> {
    let mut v = Vec::new();
    for (v2, v1) in [
        ("HashTableV2", "HashTable"),
        ("MutableHashTableV2", "MutableHashTable"),
        ("MutableHashTableOfTensorsV2", "MutableHashTableOfTensors"),
    ] {
        v.push(OpDef::new(v2, &[], handle_output).stateful());
        v.push(OpDef::new(v1, &[], handle_output).stateful());
    }
    for name in ["MutableDenseHashTableV2", "MutableDenseHashTable"] {
        v.push(OpDef::new(name, &["empty_key", "deleted_key"], handle_output).stateful());
    }
    for name in ["InitializeTableV2", "InitializeTable"] {
        v.push(OpDef::new(name, &["table_handle", "keys", "values"], infer_initialize).stateful());
    }
    for name in [
        "InitializeTableFromTextFileV2",
        "InitializeTableFromTextFile",
    ] {
        v.push(OpDef::new(name, &["table_handle", "filename"], infer_text_file).stateful());
    }
    for name in ["LookupTableFindV2", "LookupTableFind"] {
        v.push(OpDef::new(name, &["table_handle", "keys", "default_value"], infer_find).stateful());
    }
    for name in ["LookupTableSizeV2", "LookupTableSize"] {
        v.push(OpDef::new(name, &["table_handle"], infer_size).stateful());
    }
    for name in ["LookupTableInsertV2", "LookupTableInsert"] {
        v.push(OpDef::new(name, &["table_handle", "keys", "values"], infer_none).stateful());
    }
    v.push(OpDef::new("LookupTableRemoveV2", &["table_handle", "keys"], infer_none).stateful());
    for name in ["LookupTableExportV2", "LookupTableExport"] {
        v.push(OpDef::new(name, &["table_handle"], infer_export).stateful());
    }
    for name in ["LookupTableImportV2", "LookupTableImport"] {
        v.push(OpDef::new(name, &["table_handle", "keys", "values"], infer_none).stateful());
    }
    v
}

/// The runtime kernels of the table ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    let mut v: Vec<(&'static str, KernelFactory)> = Vec::new();
    for (names, c) in [
        (["HashTableV2", "HashTable"], Creator::Hash),
        (["MutableHashTableV2", "MutableHashTable"], Creator::Mutable),
        (
            ["MutableHashTableOfTensorsV2", "MutableHashTableOfTensors"],
            Creator::MutableOfTensors,
        ),
        (
            ["MutableDenseHashTableV2", "MutableDenseHashTable"],
            Creator::Dense,
        ),
    ] {
        for n in names {
            v.push((n, create_factory(c)));
        }
    }
    for n in ["InitializeTableV2", "InitializeTable"] {
        v.push((
            n,
            on_table(|t, ctx| t.initialize(ctx.input(1)?, ctx.input(2)?)),
        ));
    }
    for n in [
        "InitializeTableFromTextFileV2",
        "InitializeTableFromTextFile",
    ] {
        v.push((n, text_file_factory()));
    }
    for n in ["LookupTableFindV2", "LookupTableFind"] {
        v.push((
            n,
            on_table(|t, ctx| {
                let out = t.find(ctx.input(1)?, ctx.input(2)?)?;
                ctx.output(out);
                Ok(())
            }),
        ));
    }
    for n in ["LookupTableSizeV2", "LookupTableSize"] {
        v.push((
            n,
            on_table(|t, ctx| {
                ctx.output(Tensor::scalar(t.size() as i64));
                Ok(())
            }),
        ));
    }
    for n in ["LookupTableInsertV2", "LookupTableInsert"] {
        v.push((n, on_table(|t, ctx| t.insert(ctx.input(1)?, ctx.input(2)?))));
    }
    v.push((
        "LookupTableRemoveV2",
        on_table(|t, ctx| t.remove(ctx.input(1)?)),
    ));
    for n in ["LookupTableExportV2", "LookupTableExport"] {
        v.push((
            n,
            on_table(|t, ctx| {
                let (k, val) = t.export()?;
                ctx.output(k);
                ctx.output(val);
                Ok(())
            }),
        ));
    }
    for n in ["LookupTableImportV2", "LookupTableImport"] {
        v.push((n, on_table(|t, ctx| t.import(ctx.input(1)?, ctx.input(2)?))));
    }
    v
}

/// Registers the table ops and kernels.
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

#[cfg(test)]
mod tests;
