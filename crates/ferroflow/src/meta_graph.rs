//! MetaGraphDef import for Rust programs (TensorFlow 1's `tf.train.import_meta_graph`): a
//! `.meta` file written by TensorFlow's or ferroflow's `Saver.save` / `export_meta_graph`, or its
//! bytes, rebuilt in a [`GraphBuilder`]'s graph, with what TF1 programs look up afterwards: the
//! variables (global, trainable, local), the `train_op` collection, the summaries, any other
//! node-list collection by key, and a [`Saver`] over the saver the meta graph names.
//!
//! And the way back: [`export_meta_graph`] writes a builder's graph in the form TensorFlow
//! imports (`ferroflow_records::graph_def::tf_graph_def`), with the saver and the collections
//! TensorFlow 1 keeps (`variables`, `trainable_variables`, `train_op`, `summaries`,
//! `global_step`); [`Saver::set_meta_graph`] writes it next to every checkpoint, as
//! `tf.train.Saver.save` does.
//!
//! The messages are the ones the SavedModel loader reads ([`crate::saved_model::proto`]); the
//! graph goes through `ferroflow_records::graph_import` (TensorFlow's ops and ferroflow's;
//! TensorFlow's per-variable update ops become ferroflow's fused ones). Imported variables are
//! registered with the builder, so [`GraphBuilder::global_variables_initializer`], optimizers and
//! [`Saver::new`] see them.
//!
//! ```no_run
//! use ferroflow::meta_graph::import_meta_graph;
//! use ferroflow::{GraphBuilder, Session};
//!
//! let mut g = GraphBuilder::new();
//! let imported = import_meta_graph(&mut g, "/tmp/run/model.ckpt-100.meta", &Default::default())?;
//! let sess = Session::new(g.graph());
//! imported.saver.as_ref().unwrap().restore(&sess, "/tmp/run/model.ckpt-100")?;
//! sess.run(vec![], &[], &imported.train_op)?; // one more training step
//! # Ok::<(), ferroflow::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use crate::builder::{GraphBuilder, VariableHandle};
use crate::saved_model::proto::{collection_def, BytesList, MetaInfoDef, StringList};
use crate::saver::Saver;
use crate::summary::GRAPH_DEF_VERSION;
use ferroflow_graph::{NodeId, Output};
use ferroflow_records::graph_def::{tf_graph_def, GraphDef};
use ferroflow_records::graph_import::import_graph_def;
use ferroflow_tensor::{Error, Result};
use prost::Message;

pub use crate::saved_model::proto::{CollectionDef, MetaGraphDef, SaverDef};
pub use ferroflow_records::graph_import::ImportOptions;

use crate::saved_model::proto::collection_def::Kind;

/// `tensorflow.VariableDef`: how a `variables` collection entry names a variable's nodes.
#[derive(Clone, PartialEq, Message)]
pub struct VariableDef {
    /// The variable tensor (`w:0`).
    #[prost(string, tag = "1")]
    pub variable_name: String,
    /// The op that assigns the initial value (`w/Assign`).
    #[prost(string, tag = "2")]
    pub initializer_name: String,
    /// The tensor reading the value (`w/read:0`).
    #[prost(string, tag = "3")]
    pub snapshot_name: String,
    /// A resource variable (`VarHandleOp`) rather than a reference one.
    #[prost(bool, tag = "5")]
    pub is_resource: bool,
    /// The initial-value tensor.
    #[prost(string, tag = "6")]
    pub initial_value_name: String,
    /// Whether it is trainable.
    #[prost(bool, tag = "7")]
    pub trainable: bool,
}

/// TensorFlow's collection keys (`tf.GraphKeys`) read by [`import_meta_graph_def`].
pub mod keys {
    /// `GLOBAL_VARIABLES`.
    pub const GLOBAL_VARIABLES: &str = "variables";
    /// `TRAINABLE_VARIABLES`.
    pub const TRAINABLE_VARIABLES: &str = "trainable_variables";
    /// `LOCAL_VARIABLES`.
    pub const LOCAL_VARIABLES: &str = "local_variables";
    /// `TRAIN_OP`.
    pub const TRAIN_OP: &str = "train_op";
    /// `SUMMARIES`.
    pub const SUMMARIES: &str = "summaries";
    /// `GLOBAL_STEP`.
    pub const GLOBAL_STEP: &str = "global_step";
}

/// A meta graph imported into a builder's graph.
#[derive(Debug)]
pub struct ImportedMetaGraph {
    /// The MetaGraphDef as read.
    pub meta_graph: MetaGraphDef,
    /// The scope the nodes were imported under (empty for none).
    pub prefix: String,
    /// A Saver over the meta graph's saver (`saver_def`); without one, a new Saver over the
    /// global variables, as TensorFlow makes; `None` when there are no variables.
    pub saver: Option<Saver>,
    /// The `variables` collection.
    pub global_variables: Vec<VariableHandle>,
    /// The `trainable_variables` collection.
    pub trainable_variables: Vec<VariableHandle>,
    /// The `local_variables` collection.
    pub local_variables: Vec<VariableHandle>,
    /// The `train_op` collection.
    pub train_op: Vec<NodeId>,
    /// The `summaries` collection.
    pub summaries: Vec<Output>,
}

/// Parses a serialized MetaGraphDef (`DataLoss` for bytes that are not one).
pub fn parse_meta_graph_def(bytes: &[u8]) -> Result<MetaGraphDef> {
    MetaGraphDef::decode(bytes).map_err(|e| {
        Error::data_loss(format!(
            "not a MetaGraphDef protocol buffer ({} bytes): {e}",
            bytes.len()
        ))
    })
}

/// Reads a binary `.meta` file.
pub fn read_meta_graph_def(path: impl AsRef<Path>) -> Result<MetaGraphDef> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| {
        Error::io(
            &e,
            format_args!("cannot read meta graph {}", path.display()),
        )
    })?;
    parse_meta_graph_def(&bytes).map_err(|e| e.with_context(path.display()))
}

/// Imports the `.meta` file at `path` into `g` ([`import_meta_graph_def`]).
pub fn import_meta_graph(
    g: &mut GraphBuilder,
    path: impl AsRef<Path>,
    options: &ImportOptions,
) -> Result<ImportedMetaGraph> {
    let path = path.as_ref();
    let meta = read_meta_graph_def(path)?;
    import_meta_graph_def(g, meta, options)
        .map_err(|e| e.with_context(format_args!("importing {}", path.display())))
}

/// Imports a serialized MetaGraphDef into `g` ([`import_meta_graph_def`]).
pub fn import_meta_graph_bytes(
    g: &mut GraphBuilder,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<ImportedMetaGraph> {
    import_meta_graph_def(g, parse_meta_graph_def(bytes)?, options)
}

fn scoped(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{}/{name}", prefix.trim_end_matches('/'))
    }
}

/// Adds the meta graph's nodes to `g` (under `options.prefix`, devices dropped with
/// `options.clear_devices`) and returns its variables, collections and saver. A collection entry
/// naming a node the graph lacks is `NotFound`.
pub fn import_meta_graph_def(
    g: &mut GraphBuilder,
    meta: MetaGraphDef,
    options: &ImportOptions,
) -> Result<ImportedMetaGraph> {
    crate::register_all();
    let empty = GraphDef::default();
    {
        let mut graph = g.graph.write();
        import_graph_def(
            &mut graph,
            meta.graph_def.as_ref().unwrap_or(&empty),
            options,
        )?;
    }
    let prefix = options.prefix.trim_end_matches('/').to_string();
    let mut imported = ImportedMetaGraph {
        meta_graph: meta,
        prefix,
        saver: None,
        global_variables: Vec::new(),
        trainable_variables: Vec::new(),
        local_variables: Vec::new(),
        train_op: Vec::new(),
        summaries: Vec::new(),
    };
    imported.global_variables = imported.variables(g, keys::GLOBAL_VARIABLES)?;
    imported.trainable_variables = imported.variables(g, keys::TRAINABLE_VARIABLES)?;
    imported.local_variables = imported.variables(g, keys::LOCAL_VARIABLES)?;
    imported.train_op = imported.nodes(g, keys::TRAIN_OP)?;
    imported.summaries = imported.tensors(g, keys::SUMMARIES)?;
    for v in &imported.global_variables {
        let trainable = imported.trainable_variables.iter().any(|t| t.var == v.var);
        g.register_variable(*v, trainable);
    }
    for s in &imported.summaries {
        if !g.summaries.contains(s) {
            g.summaries.push(*s);
        }
    }
    imported.saver = match imported.meta_graph.saver_def.clone() {
        Some(mut def) => {
            for name in [
                &mut def.filename_tensor_name,
                &mut def.save_tensor_name,
                &mut def.restore_op_name,
            ] {
                *name = scoped(&imported.prefix, name);
            }
            Some(Saver::from_saver_def(g, def)?)
        }
        None if !imported.global_variables.is_empty() => {
            let vars = imported.global_variables.clone();
            Some(Saver::new(g, Some(&vars))?)
        }
        None => None,
    };
    Ok(imported)
}

impl ImportedMetaGraph {
    /// The keys of the meta graph's collections, sorted.
    pub fn collection_keys(&self) -> Vec<&str> {
        self.meta_graph
            .collection_def
            .keys()
            .map(String::as_str)
            .collect()
    }

    /// The collection `key` as stored (`None` if there is none).
    pub fn collection(&self, key: &str) -> Option<&CollectionDef> {
        self.meta_graph.collection_def.get(key)
    }

    /// The names a node-list collection holds, with the import scope in front (empty if the
    /// collection is missing; `InvalidArgument` if it holds another kind of list).
    pub fn node_names(&self, key: &str) -> Result<Vec<String>> {
        match self.collection(key).and_then(|c| c.kind.as_ref()) {
            None => Ok(Vec::new()),
            Some(Kind::NodeList(l)) => {
                Ok(l.value.iter().map(|n| scoped(&self.prefix, n)).collect())
            }
            Some(_) => Err(Error::invalid_argument(format!(
                "collection '{key}' is not a node list"
            ))),
        }
    }

    /// The ops a node-list collection names (`tf.get_collection(key)` of operations, e.g.
    /// `train_op`; a tensor name stands for its op).
    pub fn nodes(&self, g: &GraphBuilder, key: &str) -> Result<Vec<NodeId>> {
        let graph = g.graph.read();
        self.node_names(key)?
            .iter()
            .map(|name| {
                let op = name.rsplit_once(':').map_or(name.as_str(), |(op, _)| op);
                graph.node_by_name(op).ok_or_else(|| missing(key, name))
            })
            .collect()
    }

    /// The tensors a node-list collection names (`name:i`; a bare op name means output 0).
    pub fn tensors(&self, g: &GraphBuilder, key: &str) -> Result<Vec<Output>> {
        let graph = g.graph.read();
        self.node_names(key)?
            .iter()
            .map(|name| graph.output_by_name(name).ok_or_else(|| missing(key, name)))
            .collect()
    }

    /// The variables a `VariableDef` collection (`variables`, `trainable_variables`, ...)
    /// lists.
    pub fn variables(&self, g: &GraphBuilder, key: &str) -> Result<Vec<VariableHandle>> {
        let list = match self.collection(key).and_then(|c| c.kind.as_ref()) {
            None => return Ok(Vec::new()),
            Some(Kind::BytesList(l)) => &l.value,
            Some(_) => {
                return Err(Error::invalid_argument(format!(
                    "collection '{key}' is not a list of VariableDefs"
                )))
            }
        };
        let graph = g.graph.read();
        list.iter()
            .map(|bytes| {
                let def = VariableDef::decode(bytes.as_slice()).map_err(|e| {
                    Error::data_loss(format!(
                        "collection '{key}' holds a malformed VariableDef: {e}"
                    ))
                })?;
                let tensor = |name: &str| {
                    let name = scoped(&self.prefix, name);
                    graph
                        .output_by_name(&name)
                        .ok_or_else(|| missing(key, &name))
                };
                let var = tensor(&def.variable_name)?;
                let initializer = {
                    let name = scoped(&self.prefix, &def.initializer_name);
                    graph
                        .node_by_name(&name)
                        .ok_or_else(|| missing(key, &name))?
                };
                let value = if def.snapshot_name.is_empty() {
                    var
                } else {
                    tensor(&def.snapshot_name)?
                };
                Ok(VariableHandle {
                    var,
                    initializer,
                    value,
                })
            })
            .collect()
    }
}

/// The TensorFlow version exported meta graphs record (Python ferroflow's `VERSION`: a PEP 440
/// version, which TensorFlow's `import_meta_graph` parses).
pub const TENSORFLOW_VERSION: &str = "1.15.0+ferroflow";

/// The meta graph of `g`'s graph: the whole graph as TensorFlow imports it (with output
/// shapes), `saver`'s `SaverDef`, and the collections TensorFlow 1 keeps: `variables` and
/// `trainable_variables` (`VariableDef`s of the builder's variables), `train_op` (`train_ops`),
/// `summaries` (the builder's summary ops) and `global_step`. Write it with
/// [`write_meta_graph`]; TensorFlow's and ferroflow's `import_meta_graph` read it.
pub fn export_meta_graph(
    g: &GraphBuilder,
    saver: Option<&Saver>,
    train_ops: &[NodeId],
) -> Result<MetaGraphDef> {
    let graph = g.graph.read();
    let def = tf_graph_def(&graph, 0, true, GRAPH_DEF_VERSION)?;
    let variable_def = |h: &VariableHandle, trainable: bool| {
        let node = graph.node(h.var.node);
        // The initial value is what the initializer assigns.
        let initial = graph
            .node(h.initializer)
            .inputs
            .get(1)
            .map(|o| graph.output_name(*o))
            .unwrap_or_default();
        VariableDef {
            variable_name: graph.output_name(h.var),
            initializer_name: graph.node(h.initializer).name.clone(),
            snapshot_name: graph.output_name(h.value),
            is_resource: node.op == "VarHandleOp",
            initial_value_name: initial,
            trainable,
        }
        .encode_to_vec()
    };
    let trainable = g.trainable_variables();
    let is_trainable = |h: &VariableHandle| trainable.iter().any(|t| t.var == h.var);
    let mut collections = BTreeMap::new();
    let bytes = |values: Vec<Vec<u8>>| CollectionDef {
        kind: Some(collection_def::Kind::BytesList(BytesList { value: values })),
    };
    let names = |values: Vec<String>| CollectionDef {
        kind: Some(collection_def::Kind::NodeList(StringList { value: values })),
    };
    let globals = g.global_variables();
    if !globals.is_empty() {
        collections.insert(
            keys::GLOBAL_VARIABLES.to_string(),
            bytes(
                globals
                    .iter()
                    .map(|h| variable_def(h, is_trainable(h)))
                    .collect(),
            ),
        );
    }
    if !trainable.is_empty() {
        collections.insert(
            keys::TRAINABLE_VARIABLES.to_string(),
            bytes(trainable.iter().map(|h| variable_def(h, true)).collect()),
        );
    }
    if !train_ops.is_empty() {
        collections.insert(
            keys::TRAIN_OP.to_string(),
            names(
                train_ops
                    .iter()
                    .map(|&n| graph.node(n).name.clone())
                    .collect(),
            ),
        );
    }
    if !g.summaries.is_empty() {
        collections.insert(
            keys::SUMMARIES.to_string(),
            names(g.summaries.iter().map(|&o| graph.output_name(o)).collect()),
        );
    }
    drop(graph);
    if let Some(step) = crate::train::get_global_step(g)? {
        let name = g.graph.read().output_name(step.var);
        collections.insert(keys::GLOBAL_STEP.to_string(), names(vec![name]));
    }
    Ok(MetaGraphDef {
        meta_info_def: Some(MetaInfoDef {
            meta_graph_version: String::new(),
            tags: Vec::new(),
            tensorflow_version: TENSORFLOW_VERSION.to_string(),
            tensorflow_git_version: format!("ferroflow-{}", env!("CARGO_PKG_VERSION")),
            stripped_default_attrs: false,
        }),
        graph_def: Some(def),
        saver_def: saver.map(|s| s.saver_def().clone()),
        collection_def: collections,
        signature_def: BTreeMap::new(),
        asset_file_def: Vec::new(),
    })
}

/// Writes `meta` as a binary `.meta` file (to a temporary file, synced and renamed).
pub fn write_meta_graph(path: impl AsRef<Path>, meta: &MetaGraphDef) -> Result<()> {
    crate::saver::atomic_write(path.as_ref(), &meta.encode_to_vec())
}

fn missing(key: &str, name: &str) -> Error {
    Error::not_found(format!(
        "collection '{key}' names '{name}', which is not in the imported graph"
    ))
}
