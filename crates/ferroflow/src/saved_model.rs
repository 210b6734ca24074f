//! Loading TensorFlow SavedModels (TF 1.x `SavedModelBuilder` /
//! `simple_save` exports, or ferroflow's) and running their signatures:
//! serving from Rust without Python.
//!
//! ```
//! use ferroflow::saved_model::SavedModel;
//! use ferroflow::Tensor;
//!
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/saved_model/tf_simple_save");
//! let model = SavedModel::load(dir, &["serve"]).unwrap();
//! assert_eq!(model.signature_keys(), ["serving_default"]);
//! let x = Tensor::from_vec([1, 3], vec![1.0f32, 2.0, 3.0]).unwrap();
//! let out = model.run("serving_default", &[("x", x)]).unwrap();
//! assert_eq!(out[0].0, "y");
//! assert_eq!(out[0].1.dims(), &[1, 2]);
//! ```
//!
//! [`SavedModel::load`] does what TensorFlow's loader does: it picks the
//! meta graph whose tag set equals the one asked for, imports its graph
//! ([`ferroflow_records::graph_import`]: TensorFlow's ops and ferroflow's;
//! graphs with a function library, i.e. control flow, are not supported
//! here yet), restores the variables by running the saver's restore op with
//! `<dir>/variables/variables` (skipped for a model without variables), and
//! runs the init op (the `__saved_model_init_op` signature, else the
//! `saved_model_main_op` collection, else `legacy_init_op`) with every
//! asset tensor fed `<dir>/assets/<file>`. TensorFlow 2.21's v1 builder
//! lists assets in the `saved_model_assets` collection rather than in
//! `MetaGraphDef.asset_file_def`; both are read.
//!
//! Errors carry TensorFlow's codes and name the directory: `NotFound` for a
//! missing `saved_model.pb`, a tag set no meta graph has (listing those
//! there are), an unknown signature key or a signature tensor that is not in
//! the graph; `DataLoss` for bytes that do not parse; whatever the restore
//! op raises for a missing or corrupt variables shard.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ferroflow_graph::{Graph, NodeId, Output, PartialShape};
use ferroflow_records::graph_def::GraphDef;
use ferroflow_records::graph_import::{import_graph_def, shape_from_proto, ImportOptions};
use ferroflow_records::proto::TensorShapeProto;
use ferroflow_tensor::{DType, Error, Result, Tensor};
use parking_lot::RwLock;
use prost::Message;

/// Protocol buffer messages of a SavedModel, with TensorFlow's field
/// numbers (`saved_model.proto`, `meta_graph.proto`, `saver.proto`), as far
/// as loading uses them; other fields are skipped when decoding.
pub mod proto {
    use super::*;

    /// `tensorflow.SavedModel`: the `saved_model.pb` file.
    #[derive(Clone, PartialEq, Message)]
    pub struct SavedModel {
        /// The format version (1).
        #[prost(int64, tag = "1")]
        pub saved_model_schema_version: i64,
        /// One meta graph per tag set.
        #[prost(message, repeated, tag = "2")]
        pub meta_graphs: Vec<MetaGraphDef>,
    }

    /// `tensorflow.MetaGraphDef`.
    #[derive(Clone, PartialEq, Message)]
    pub struct MetaGraphDef {
        /// Versions and tags.
        #[prost(message, optional, tag = "1")]
        pub meta_info_def: Option<MetaInfoDef>,
        /// The graph.
        #[prost(message, optional, tag = "2")]
        pub graph_def: Option<GraphDef>,
        /// The saver's ops, if the graph has a saver.
        #[prost(message, optional, tag = "3")]
        pub saver_def: Option<SaverDef>,
        /// Collections by key (`variables`, `train_op`, ...).
        #[prost(btree_map = "string, message", tag = "4")]
        pub collection_def: BTreeMap<String, CollectionDef>,
        /// Signatures by key.
        #[prost(btree_map = "string, message", tag = "5")]
        pub signature_def: BTreeMap<String, SignatureDef>,
        /// Asset files the graph reads.
        #[prost(message, repeated, tag = "6")]
        pub asset_file_def: Vec<AssetFileDef>,
    }

    impl MetaGraphDef {
        /// The meta graph's tags (empty when it has no `meta_info_def`).
        pub fn tags(&self) -> &[String] {
            self.meta_info_def.as_ref().map_or(&[], |m| &m.tags)
        }
    }

    /// `tensorflow.MetaGraphDef.MetaInfoDef`.
    #[derive(Clone, PartialEq, Message)]
    pub struct MetaInfoDef {
        /// A free-form version of the meta graph.
        #[prost(string, tag = "1")]
        pub meta_graph_version: String,
        /// The tags a SavedModel picks meta graphs by (`serve`, `train`, ...).
        #[prost(string, repeated, tag = "4")]
        pub tags: Vec<String>,
        /// The TensorFlow version that wrote it.
        #[prost(string, tag = "5")]
        pub tensorflow_version: String,
        /// The TensorFlow git version that wrote it.
        #[prost(string, tag = "6")]
        pub tensorflow_git_version: String,
        /// Whether attrs with their default value were left out of the graph.
        #[prost(bool, tag = "7")]
        pub stripped_default_attrs: bool,
    }

    /// `tensorflow.SaverDef`.
    #[derive(Clone, PartialEq, Message)]
    pub struct SaverDef {
        /// The tensor fed with the checkpoint prefix (`save/Const:0`).
        #[prost(string, tag = "1")]
        pub filename_tensor_name: String,
        /// The tensor that runs the save and returns the prefix (`save/control_dependency:0`).
        #[prost(string, tag = "2")]
        pub save_tensor_name: String,
        /// The op that restores every variable (`save/restore_all`).
        #[prost(string, tag = "3")]
        pub restore_op_name: String,
        /// How many recent checkpoints to keep.
        #[prost(int32, tag = "4")]
        pub max_to_keep: i32,
        /// Whether the saver writes one shard per device.
        #[prost(bool, tag = "5")]
        pub sharded: bool,
        /// How often to keep a checkpoint beyond `max_to_keep`.
        #[prost(float, tag = "6")]
        pub keep_checkpoint_every_n_hours: f32,
        /// 0: LEGACY (V1), 1: V1, 2: V2.
        #[prost(int32, tag = "7")]
        pub version: i32,
    }

    /// `tensorflow.CollectionDef`.
    #[derive(Clone, PartialEq, Message)]
    pub struct CollectionDef {
        /// Which list the collection holds.
        #[prost(oneof = "collection_def::Kind", tags = "1, 2, 3, 4, 5")]
        pub kind: Option<collection_def::Kind>,
    }

    /// Nested types of [`CollectionDef`].
    pub mod collection_def {
        /// The `kind` oneof.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Kind {
            /// Node or tensor names.
            #[prost(message, tag = "1")]
            NodeList(super::StringList),
            /// Byte strings.
            #[prost(message, tag = "2")]
            BytesList(super::BytesList),
            /// Integers.
            #[prost(message, tag = "3")]
            Int64List(super::Int64List),
            /// Floats.
            #[prost(message, tag = "4")]
            FloatList(super::FloatList),
            /// Messages of any type.
            #[prost(message, tag = "5")]
            AnyList(super::AnyList),
        }
    }

    /// `CollectionDef.NodeList`: node or tensor names.
    #[derive(Clone, PartialEq, Message)]
    pub struct StringList {
        /// The names.
        #[prost(string, repeated, tag = "1")]
        pub value: Vec<String>,
    }

    /// `CollectionDef.BytesList`.
    #[derive(Clone, PartialEq, Message)]
    pub struct BytesList {
        /// The values (often serialized protocol buffers such as `VariableDef`s).
        #[prost(bytes = "vec", repeated, tag = "1")]
        pub value: Vec<Vec<u8>>,
    }

    /// `CollectionDef.Int64List`.
    #[derive(Clone, PartialEq, Message)]
    pub struct Int64List {
        /// The values.
        #[prost(int64, repeated, tag = "1")]
        pub value: Vec<i64>,
    }

    /// `CollectionDef.FloatList`.
    #[derive(Clone, PartialEq, Message)]
    pub struct FloatList {
        /// The values.
        #[prost(float, repeated, tag = "1")]
        pub value: Vec<f32>,
    }

    /// `CollectionDef.AnyList`.
    #[derive(Clone, PartialEq, Message)]
    pub struct AnyList {
        /// The values.
        #[prost(message, repeated, tag = "1")]
        pub value: Vec<Any>,
    }

    /// `google.protobuf.Any`.
    #[derive(Clone, PartialEq, Message)]
    pub struct Any {
        /// The message's type, e.g. `type.googleapis.com/tensorflow.AssetFileDef`.
        #[prost(string, tag = "1")]
        pub type_url: String,
        /// The serialized message.
        #[prost(bytes = "vec", tag = "2")]
        pub value: Vec<u8>,
    }

    /// `tensorflow.SignatureDef`.
    #[derive(Clone, PartialEq, Message)]
    pub struct SignatureDef {
        /// Inputs by key.
        #[prost(btree_map = "string, message", tag = "1")]
        pub inputs: BTreeMap<String, TensorInfo>,
        /// Outputs by key.
        #[prost(btree_map = "string, message", tag = "2")]
        pub outputs: BTreeMap<String, TensorInfo>,
        /// `tensorflow/serving/predict`, `.../classify`, ...
        #[prost(string, tag = "3")]
        pub method_name: String,
    }

    /// `tensorflow.TensorInfo`; only the dense encoding (`name`) is
    /// modelled, a sparse or composite one decodes with `name` unset.
    #[derive(Clone, PartialEq, Message)]
    pub struct TensorInfo {
        /// The graph tensor (`op:index`).
        #[prost(string, optional, tag = "1")]
        pub name: Option<String>,
        /// The declared dtype (TensorFlow's enum).
        #[prost(int32, tag = "2")]
        pub dtype: i32,
        /// The declared shape.
        #[prost(message, optional, tag = "3")]
        pub tensor_shape: Option<TensorShapeProto>,
    }

    /// `tensorflow.AssetFileDef`.
    #[derive(Clone, PartialEq, Message)]
    pub struct AssetFileDef {
        /// The tensor fed with the asset's path.
        #[prost(message, optional, tag = "1")]
        pub tensor_info: Option<TensorInfo>,
        /// The asset's file name under `assets/`.
        #[prost(string, tag = "2")]
        pub filename: String,
    }
}

use proto::collection_def::Kind;

/// The signature key TensorFlow 2's builders store the init op under; it is
/// run at load and not listed among [`SavedModel::signature_keys`].
pub const INIT_OP_SIGNATURE_KEY: &str = "__saved_model_init_op";
/// The collection TensorFlow 1's builder stores `main_op` in.
pub const MAIN_OP_KEY: &str = "saved_model_main_op";
/// The collection of TensorFlow 1's `legacy_init_op`.
pub const LEGACY_INIT_OP_KEY: &str = "legacy_init_op";
/// The collection TensorFlow 1's builder lists assets in (as `AssetFileDef`s).
pub const ASSETS_KEY: &str = "saved_model_assets";
/// `tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY`.
pub const DEFAULT_SERVING_SIGNATURE_DEF_KEY: &str = "serving_default";

/// One input or output of a signature.
#[derive(Clone, Debug)]
pub struct TensorSpec {
    /// The graph tensor (`op:index`); `None` for a sparse or composite
    /// tensor, which this loader cannot feed or fetch.
    pub name: Option<String>,
    /// The declared dtype (`None` when the signature names one ferroflow
    /// does not have, or none).
    pub dtype: Option<DType>,
    /// The declared shape.
    pub shape: PartialShape,
}

/// A signature: its method name and its inputs and outputs by key.
#[derive(Clone, Debug)]
pub struct Signature {
    /// `tensorflow/serving/predict`, `.../classify`, `.../regress`, ...
    pub method_name: String,
    /// Inputs by key, in key order.
    pub inputs: BTreeMap<String, TensorSpec>,
    /// Outputs by key, in key order.
    pub outputs: BTreeMap<String, TensorSpec>,
}

fn tensor_spec(info: &proto::TensorInfo) -> TensorSpec {
    TensorSpec {
        name: info.name.clone(),
        dtype: DType::from_enum(info.dtype),
        shape: info
            .tensor_shape
            .as_ref()
            .map_or_else(PartialShape::unknown, shape_from_proto),
    }
}

fn tag_set_text(tags: &[String]) -> String {
    let set: BTreeSet<&str> = tags.iter().map(String::as_str).collect();
    let items: Vec<String> = set.iter().map(|t| format!("'{t}'")).collect();
    format!("{{{}}}", items.join(", "))
}

/// A loaded SavedModel: its graph in a session with the variables restored
/// and the init op run, ready to run signatures.
pub struct SavedModel {
    dir: PathBuf,
    tags: Vec<String>,
    graph: Arc<RwLock<Graph>>,
    session: ferroflow_runtime::Session,
    meta_graph: proto::MetaGraphDef,
    signatures: BTreeMap<String, Signature>,
}

impl std::fmt::Debug for SavedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedModel")
            .field("dir", &self.dir)
            .field("tags", &self.tags)
            .field("signatures", &self.signatures.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// True if `dir` holds a SavedModel (`saved_model.pb` or
/// `saved_model.pbtxt`), TensorFlow's `maybe_saved_model_directory`.
pub fn contains_saved_model(dir: impl AsRef<Path>) -> bool {
    let dir = dir.as_ref();
    dir.join("saved_model.pb").is_file() || dir.join("saved_model.pbtxt").is_file()
}

/// Reads and parses `<dir>/saved_model.pb`.
pub fn read_saved_model(dir: impl AsRef<Path>) -> Result<proto::SavedModel> {
    let dir = dir.as_ref();
    let pb = dir.join("saved_model.pb");
    let bytes = match std::fs::read(&pb) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if dir.join("saved_model.pbtxt").is_file() {
                return Err(Error::unimplemented(format!(
                    "{} holds a text-format saved_model.pbtxt; only binary saved_model.pb \
                     is read from Rust",
                    dir.display()
                )));
            }
            return Err(Error::not_found(format!(
                "SavedModel file does not exist at: {}{}{{saved_model.pbtxt|saved_model.pb}}",
                dir.display(),
                std::path::MAIN_SEPARATOR
            )));
        }
        Err(e) => {
            return Err(Error::unknown(format!(
                "could not read {}: {e}",
                pb.display()
            )))
        }
    };
    proto::SavedModel::decode(bytes.as_slice()).map_err(|e| {
        Error::data_loss(format!(
            "{} is not a SavedModel protocol buffer ({} bytes): {e}",
            pb.display(),
            bytes.len()
        ))
    })
}

impl SavedModel {
    /// The tag sets of the meta graphs in the SavedModel at `export_dir`.
    pub fn tag_sets(export_dir: impl AsRef<Path>) -> Result<Vec<Vec<String>>> {
        Ok(read_saved_model(export_dir)?
            .meta_graphs
            .iter()
            .map(|m| m.tags().to_vec())
            .collect())
    }

    /// Loads the meta graph tagged exactly `tags` (as a set) from the
    /// SavedModel at `export_dir`: imports its graph, restores its variables
    /// and runs its init op (see the module docs).
    pub fn load(export_dir: impl AsRef<Path>, tags: &[&str]) -> Result<SavedModel> {
        let dir = export_dir.as_ref().to_path_buf();
        let saved = read_saved_model(&dir)?;
        let want: BTreeSet<&str> = tags.iter().copied().collect();
        let Some(meta) = saved
            .meta_graphs
            .into_iter()
            .find(|m| m.tags().iter().map(String::as_str).collect::<BTreeSet<_>>() == want)
        else {
            let available: Vec<String> = Self::tag_sets(&dir)?
                .iter()
                .map(|t| format!("[{}]", t.join(", ")))
                .collect();
            let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
            return Err(Error::not_found(format!(
                "MetaGraphDef associated with tags {} could not be found in SavedModel at {}; \
                 the tag sets there are: {}",
                tag_set_text(&tags),
                dir.display(),
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            )));
        };
        crate::register_all();
        let here = format!("SavedModel at {}", dir.display());
        let mut graph = Graph::new();
        let empty = GraphDef::default();
        import_graph_def(
            &mut graph,
            meta.graph_def.as_ref().unwrap_or(&empty),
            &ImportOptions::default(),
        )
        .map_err(|e| e.with_context(format_args!("{here}: importing the graph")))?;
        let graph = Arc::new(RwLock::new(graph));
        let session = ferroflow_runtime::Session::new(graph.clone());
        let signatures = meta
            .signature_def
            .iter()
            .filter(|(k, _)| k.as_str() != INIT_OP_SIGNATURE_KEY)
            .map(|(k, s)| {
                let sig = Signature {
                    method_name: s.method_name.clone(),
                    inputs: s
                        .inputs
                        .iter()
                        .map(|(k, v)| (k.clone(), tensor_spec(v)))
                        .collect(),
                    outputs: s
                        .outputs
                        .iter()
                        .map(|(k, v)| (k.clone(), tensor_spec(v)))
                        .collect(),
                };
                (k.clone(), sig)
            })
            .collect();
        let model = SavedModel {
            dir,
            tags: meta.tags().to_vec(),
            graph,
            session,
            meta_graph: meta,
            signatures,
        };
        model.restore_variables()?;
        model.run_init_op()?;
        Ok(model)
    }

    fn context(&self) -> String {
        format!("SavedModel at {}", self.dir.display())
    }

    /// A graph tensor by name (`op:i` or `op`), or `NotFound` naming `what`.
    fn tensor(&self, name: &str, what: &str) -> Result<Output> {
        self.graph.read().output_by_name(name).ok_or_else(|| {
            Error::not_found(format!(
                "{}: {what} names the tensor '{name}', which is not in the graph",
                self.context()
            ))
        })
    }

    /// A graph node by name (a trailing `:0` tolerated), or `NotFound`.
    fn node(&self, name: &str, what: &str) -> Result<NodeId> {
        let g = self.graph.read();
        let plain = name.strip_prefix('^').unwrap_or(name);
        g.node_by_name(plain)
            .or_else(|| {
                plain
                    .rsplit_once(':')
                    .and_then(|(op, _)| g.node_by_name(op))
            })
            .ok_or_else(|| {
                Error::not_found(format!(
                    "{}: {what} names the op '{name}', which is not in the graph",
                    self.context()
                ))
            })
    }

    fn restore_variables(&self) -> Result<()> {
        let Some(saver) = self
            .meta_graph
            .saver_def
            .as_ref()
            .filter(|s| !s.restore_op_name.is_empty())
        else {
            return Ok(());
        };
        let variables = self.dir.join("variables");
        let prefix = variables.join("variables");
        if !variables.join("variables.index").is_file() {
            // TensorFlow skips the restore for a model without variables;
            // data shards without their index are a broken export.
            let has_shards = std::fs::read_dir(&variables).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("variables.data")
                })
            });
            if has_shards {
                return Err(Error::not_found(format!(
                    "{}: the variables index {} is missing",
                    self.context(),
                    variables.join("variables.index").display()
                )));
            }
            return Ok(());
        }
        let restore = self.node(&saver.restore_op_name, "saver_def.restore_op_name")?;
        let filename = self.tensor(
            &saver.filename_tensor_name,
            "saver_def.filename_tensor_name",
        )?;
        let path = Tensor::scalar(prefix.to_string_lossy().into_owned().into_bytes());
        self.session
            .run(vec![(filename, path)], &[], &[restore])
            .map_err(|e| {
                e.with_context(format_args!(
                    "{}: restoring the variables from {}",
                    self.context(),
                    prefix.display()
                ))
            })?;
        Ok(())
    }

    /// The asset tensors and the paths they are fed at load.
    fn asset_feeds(&self) -> Result<Vec<(Output, Tensor)>> {
        let mut defs = self.meta_graph.asset_file_def.clone();
        if let Some(Kind::AnyList(list)) = self
            .meta_graph
            .collection_def
            .get(ASSETS_KEY)
            .and_then(|c| c.kind.as_ref())
        {
            for any in &list.value {
                if !any.type_url.ends_with("tensorflow.AssetFileDef") {
                    continue;
                }
                let def = proto::AssetFileDef::decode(any.value.as_slice()).map_err(|e| {
                    Error::data_loss(format!(
                        "{}: collection {ASSETS_KEY} holds a malformed AssetFileDef: {e}",
                        self.context()
                    ))
                })?;
                if !defs.contains(&def) {
                    defs.push(def);
                }
            }
        }
        let assets = self.dir.join("assets");
        defs.iter()
            .filter_map(|d| {
                let name = d.tensor_info.as_ref()?.name.as_ref()?;
                Some((name, &d.filename))
            })
            .map(|(name, file)| {
                let t = self.tensor(name, &format!("the asset file def of '{file}'"))?;
                let path = assets.join(file).to_string_lossy().into_owned();
                Ok((t, Tensor::scalar(path.into_bytes())))
            })
            .collect()
    }

    /// The init op's name: TF 2's signature, else TF 1's collections.
    fn init_op_name(&self) -> Option<String> {
        let meta = &self.meta_graph;
        if let Some(sig) = meta.signature_def.get(INIT_OP_SIGNATURE_KEY) {
            if let Some(name) = sig
                .outputs
                .get(INIT_OP_SIGNATURE_KEY)
                .and_then(|t| t.name.clone())
            {
                return Some(name);
            }
        }
        [MAIN_OP_KEY, LEGACY_INIT_OP_KEY].iter().find_map(|key| {
            match meta.collection_def.get(*key)?.kind.as_ref()? {
                Kind::NodeList(l) => l.value.first().cloned(),
                _ => None,
            }
        })
    }

    fn run_init_op(&self) -> Result<()> {
        let Some(name) = self.init_op_name() else {
            return Ok(());
        };
        let init = self.node(&name, "the init op")?;
        let feeds = self.asset_feeds()?;
        self.session.run(feeds, &[], &[init]).map_err(|e| {
            e.with_context(format_args!(
                "{}: running the init op {name}",
                self.context()
            ))
        })?;
        Ok(())
    }

    /// The directory the model was loaded from.
    pub fn export_dir(&self) -> &Path {
        &self.dir
    }

    /// The tags of the loaded meta graph.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// The signature keys, sorted (the init op's signature left out).
    pub fn signature_keys(&self) -> Vec<&str> {
        self.signatures.keys().map(String::as_str).collect()
    }

    /// The signature `key`, or `NotFound` listing the keys there are.
    pub fn signature(&self, key: &str) -> Result<&Signature> {
        self.signatures.get(key).ok_or_else(|| {
            Error::not_found(format!(
                "{}: no signature '{key}' in the meta graph tagged {}; its signatures are: {}",
                self.context(),
                tag_set_text(&self.tags),
                self.signature_keys().join(", ")
            ))
        })
    }

    /// Runs signature `key` on `inputs` (input key, value) and returns every
    /// output as (output key, value), in key order.
    pub fn run(&self, key: &str, inputs: &[(&str, Tensor)]) -> Result<Vec<(String, Tensor)>> {
        let keys: Vec<&str> = self
            .signature(key)?
            .outputs
            .keys()
            .map(String::as_str)
            .collect();
        let values = self.run_outputs(key, inputs, &keys)?;
        Ok(keys.into_iter().map(String::from).zip(values).collect())
    }

    /// Runs signature `key` on `inputs` and returns the outputs `outputs`
    /// (by output key), in that order.
    pub fn run_outputs(
        &self,
        key: &str,
        inputs: &[(&str, Tensor)],
        outputs: &[&str],
    ) -> Result<Vec<Tensor>> {
        let sig = self.signature(key)?;
        let what = |kind: &str, k: &str| format!("{kind} '{k}' of signature '{key}'");
        let resolve = |spec: &TensorSpec, desc: String| -> Result<Output> {
            let name = spec.name.as_deref().ok_or_else(|| {
                Error::unimplemented(format!(
                    "{}: {desc} is a sparse or composite tensor, which the Rust loader \
                     cannot feed or fetch",
                    self.context()
                ))
            })?;
            self.tensor(name, &desc)
        };
        let mut feeds = Vec::with_capacity(inputs.len());
        let mut seen: HashSet<&str> = HashSet::new();
        for (k, v) in inputs {
            let Some(spec) = sig.inputs.get(*k) else {
                return Err(Error::invalid_argument(format!(
                    "{}: signature '{key}' has no input '{k}'; its inputs are: {}",
                    self.context(),
                    sig.inputs.keys().cloned().collect::<Vec<_>>().join(", ")
                )));
            };
            if !seen.insert(k) {
                return Err(Error::invalid_argument(format!(
                    "{}: input '{k}' of signature '{key}' is given twice",
                    self.context()
                )));
            }
            if let Some(d) = spec.dtype.filter(|d| *d != v.dtype()) {
                return Err(Error::invalid_argument(format!(
                    "{}: {} is {}, got a {} tensor",
                    self.context(),
                    what("input", k),
                    d.name(),
                    v.dtype().name()
                )));
            }
            if !spec.shape.is_compatible_with_shape(v.shape()) {
                return Err(Error::invalid_argument(format!(
                    "{}: {} has shape {}, got a tensor of shape {}",
                    self.context(),
                    what("input", k),
                    spec.shape,
                    v.shape()
                )));
            }
            feeds.push((resolve(spec, what("input", k))?, v.clone()));
        }
        let fetches = outputs
            .iter()
            .map(|k| {
                let spec = sig.outputs.get(*k).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "{}: signature '{key}' has no output '{k}'; its outputs are: {}",
                        self.context(),
                        sig.outputs.keys().cloned().collect::<Vec<_>>().join(", ")
                    ))
                })?;
                resolve(spec, what("output", k))
            })
            .collect::<Result<Vec<_>>>()?;
        self.session.run(feeds, &fetches, &[])
    }

    /// The loaded graph.
    pub fn graph(&self) -> &Arc<RwLock<Graph>> {
        &self.graph
    }

    /// The session the variables live in (to run other tensors of the
    /// graph).
    pub fn session(&self) -> &ferroflow_runtime::Session {
        &self.session
    }

    /// The loaded meta graph as stored (collections, saver, signatures).
    pub fn meta_graph(&self) -> &proto::MetaGraphDef {
        &self.meta_graph
    }
}
