//! Saver-compatible checkpoints from Rust: TensorFlow 1's `tf.train.Saver`, writing and reading
//! TensorFlow's V2 format through the checkpoint crate's `SaveV2` / `RestoreV2` ops.
//!
//! [`Saver::new`] adds TensorFlow's save/restore subgraph under the name scope `save` (`save_1`,
//! ...), as the Python Saver does: `save/filename/input` and `save/Const` (the prefix, fed at run
//! time), `save/SaveV2` with `save/control_dependency` after it, `save/RestoreV2` with one
//! `save/Assign` per variable grouped by `save/restore_all`. Its [`SaverDef`] names them, so a
//! MetaGraphDef carrying it restores in TensorFlow, and [`Saver::from_saver_def`] drives the
//! subgraph of an imported graph.
//!
//! [`Saver::save`] writes `<prefix>[-<step>]`, records it in the directory's `checkpoint` state
//! file (TensorFlow's text `CheckpointState`, written to a temporary file, synced and renamed)
//! and deletes checkpoints beyond `max_to_keep`; [`latest_checkpoint`] reads the state file back.
//! Checkpoints written here restore with TensorFlow's and Python ferroflow's `tf.train.Saver`,
//! and theirs restore here.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::builder::{GraphBuilder, VariableHandle};
use crate::saved_model::proto::{MetaGraphDef, SaverDef};
use crate::Session;
use ferroflow_checkpoint::{dtype_string, index_path, BundleReader};
use ferroflow_graph::{AttrValue, NodeId, Output, PartialShape};
use ferroflow_tensor::{Code, DType, Error, Result, Tensor};

/// `SaverDef.V2`, the only format ferroflow writes.
const V2: i32 = 2;

/// The state file's name (`latest_filename` in TensorFlow).
pub const CHECKPOINT_STATE_FILE: &str = "checkpoint";

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Saves and restores variables (TensorFlow 1's `tf.train.Saver`).
#[derive(Clone, Debug)]
pub struct Saver {
    def: SaverDef,
    filename: Output,
    save_tensor: Output,
    restore_op: NodeId,
    /// `(checkpoint key, variable, dtype, shape)` when this Saver built the subgraph (for the
    /// restore diagnostics); empty for one made from a `SaverDef`.
    specs: Vec<(String, String, DType, PartialShape)>,
    /// Kept checkpoints and when they were written, oldest first.
    last_checkpoints: Vec<(String, f64)>,
    next_checkpoint_time: f64,
    /// Written as `<checkpoint>.meta` by every save, when set.
    meta_graph: Option<MetaGraphDef>,
}

impl Saver {
    /// A Saver over `var_list` (default: every variable of the builder,
    /// [`GraphBuilder::global_variables`]), each saved under its op name, as
    /// `tf.train.Saver(var_list)` does. Adds the save/restore subgraph.
    pub fn new(g: &mut GraphBuilder, var_list: Option<&[VariableHandle]>) -> Result<Saver> {
        let vars = match var_list {
            Some(v) => v.to_vec(),
            None => g.global_variables(),
        };
        let keyed: Vec<(String, Output)> = {
            let graph = g.graph.read();
            vars.iter()
                .map(|v| (graph.node(v.var.node).name.clone(), v.var))
                .collect()
        };
        Saver::with_keys(g, &keyed)
    }

    /// A Saver over `(checkpoint key, variable)` pairs (`tf.train.Saver({key: var})`), e.g. to
    /// restore a checkpoint written under other names. Keys must be unique.
    pub fn with_keys(g: &mut GraphBuilder, vars: &[(String, Output)]) -> Result<Saver> {
        if vars.is_empty() {
            return Err(Error::value("No variables to save"));
        }
        let mut sorted: Vec<(String, Output)> = vars.to_vec();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::value(format!(
                "At least two variables have the same name: {}",
                w[0].0
            )));
        }
        let specs: Vec<(String, String, DType, PartialShape)> = {
            let graph = g.graph.read();
            sorted
                .iter()
                .map(|(k, v)| {
                    let info = graph.output(*v);
                    (
                        k.clone(),
                        graph.node(v.node).name.clone(),
                        info.dtype,
                        info.shape.clone(),
                    )
                })
                .collect()
        };
        {
            let graph = g.graph.read();
            if let Some((k, v)) = sorted.iter().find(|(_, v)| !graph.output(*v).is_ref) {
                return Err(Error::type_error(format!(
                    "Saver: checkpoint key {k} names {}, which is not a variable",
                    graph.output_name(*v)
                )));
            }
        }
        let strings = |items: Vec<Vec<u8>>| Tensor::vector(items);
        let names = strings(sorted.iter().map(|(k, _)| k.clone().into_bytes()).collect());
        let slices = strings(vec![Vec::new(); sorted.len()]);
        let dtypes: Vec<DType> = specs.iter().map(|s| s.2).collect();
        let (filename, save_tensor, restore_op) = g.with_name_scope("save", |g| {
            let filename = g.with_name_scope("filename", |g| -> Result<Output> {
                let fscope = g.scope().to_string();
                let default = g.constant(Tensor::scalar(b"model".to_vec()), "input")?;
                let id = g.add_exact(
                    "PlaceholderWithDefault",
                    &fscope,
                    &[default],
                    vec![
                        ("dtype", AttrValue::Type(DType::String)),
                        ("shape", AttrValue::Shape(PartialShape::scalar())),
                    ],
                    &[],
                )?;
                Ok(Output::new(id, 0))
            })?;
            // "Const" is the name TensorFlow has always given the filename tensor.
            let filename = Output::new(
                g.add(
                    "PlaceholderWithDefault",
                    "Const",
                    &[filename],
                    vec![
                        ("dtype", AttrValue::Type(DType::String)),
                        ("shape", AttrValue::Shape(PartialShape::scalar())),
                    ],
                )?,
                0,
            );
            let save = g.with_name_scope("SaveV2", |g| -> Result<NodeId> {
                let op_name = g.scope().to_string();
                let n = g.constant(names.clone(), "tensor_names")?;
                let s = g.constant(slices.clone(), "shape_and_slices")?;
                let mut inputs = vec![filename, n, s];
                inputs.extend(sorted.iter().map(|(_, v)| *v));
                g.add_exact(
                    "SaveV2",
                    &op_name,
                    &inputs,
                    vec![("dtypes", AttrValue::TypeList(dtypes.clone()))],
                    &[],
                )
            })?;
            let save_tensor = Output::new(
                g.add_with_control("Identity", "control_dependency", &[filename], &[save])?,
                0,
            );
            let restore = g.with_name_scope("RestoreV2", |g| -> Result<NodeId> {
                let op_name = g.scope().to_string();
                let n = g.constant(names.clone(), "tensor_names")?;
                let s = g.constant(slices.clone(), "shape_and_slices")?;
                g.add_exact(
                    "RestoreV2",
                    &op_name,
                    &[filename, n, s],
                    vec![("dtypes", AttrValue::TypeList(dtypes.clone()))],
                    &[],
                )
            })?;
            let mut assigns = Vec::with_capacity(sorted.len());
            for (i, (_, v)) in sorted.iter().enumerate() {
                assigns.push(g.add("Assign", "Assign", &[*v, Output::new(restore, i)], vec![])?);
            }
            let restore_all = g.group(&assigns, "restore_all")?;
            Ok::<_, Error>((filename, save_tensor, restore_all))
        })?;
        let graph = g.graph.read();
        let def = SaverDef {
            filename_tensor_name: graph.output_name(filename),
            save_tensor_name: graph.output_name(save_tensor),
            restore_op_name: graph.node(restore_op).name.clone(),
            max_to_keep: 5,
            sharded: false,
            keep_checkpoint_every_n_hours: 10000.0,
            version: V2,
        };
        drop(graph);
        let mut saver = Saver::from_parts(def, filename, save_tensor, restore_op);
        saver.specs = specs;
        Ok(saver)
    }

    fn from_parts(
        def: SaverDef,
        filename: Output,
        save_tensor: Output,
        restore_op: NodeId,
    ) -> Saver {
        let hours = def.keep_checkpoint_every_n_hours as f64;
        Saver {
            def,
            filename,
            save_tensor,
            restore_op,
            specs: Vec::new(),
            last_checkpoints: Vec::new(),
            next_checkpoint_time: now() + hours * 3600.0,
            meta_graph: None,
        }
    }

    /// A Saver over the subgraph a `SaverDef` names (e.g. an imported MetaGraphDef's):
    /// `NotFound` if the graph lacks one of its tensors or ops, `Unimplemented` for a V1 saver.
    pub fn from_saver_def(g: &GraphBuilder, def: SaverDef) -> Result<Saver> {
        if def.version != V2 {
            return Err(Error::unimplemented(format!(
                "the SaverDef is for checkpoint format version {}; ferroflow reads and writes V2 \
                 checkpoints only",
                def.version
            )));
        }
        if def.sharded {
            return Err(Error::unimplemented(
                "the SaverDef is sharded; the Rust Saver runs unsharded save subgraphs only",
            ));
        }
        let graph = g.graph.read();
        let tensor = |name: &str, what: &str| {
            graph.output_by_name(name).ok_or_else(|| {
                Error::not_found(format!(
                    "saver_def.{what} names the tensor '{name}', which is not in the graph"
                ))
            })
        };
        let filename = tensor(&def.filename_tensor_name, "filename_tensor_name")?;
        let save_tensor = tensor(&def.save_tensor_name, "save_tensor_name")?;
        let restore_name = def
            .restore_op_name
            .rsplit_once(':')
            .map_or(def.restore_op_name.as_str(), |(op, _)| op);
        let restore_op = graph.node_by_name(restore_name).ok_or_else(|| {
            Error::not_found(format!(
                "saver_def.restore_op_name names the op '{}', which is not in the graph",
                def.restore_op_name
            ))
        })?;
        drop(graph);
        Ok(Saver::from_parts(def, filename, save_tensor, restore_op))
    }

    /// How many recent checkpoints to keep (default 5; 0 keeps all and writes no history).
    pub fn max_to_keep(mut self, n: i32) -> Saver {
        self.def.max_to_keep = n;
        self
    }

    /// Additionally keep one checkpoint every so many hours (default 10000).
    pub fn keep_checkpoint_every_n_hours(mut self, hours: f32) -> Saver {
        self.def.keep_checkpoint_every_n_hours = hours;
        self.next_checkpoint_time = now() + hours as f64 * 3600.0;
        self
    }

    /// Makes every [`save`](Self::save) also write `meta` as `<checkpoint>.meta` (what
    /// `tf.train.Saver.save` does by default); build it with
    /// [`export_meta_graph`](crate::meta_graph::export_meta_graph) once the graph is complete.
    /// `None` stops writing it.
    pub fn set_meta_graph(&mut self, meta: Option<MetaGraphDef>) {
        self.meta_graph = meta;
    }

    /// The `SaverDef` naming the filename tensor, the save tensor and the restore op
    /// (`as_saver_def()`), for a MetaGraphDef.
    pub fn saver_def(&self) -> &SaverDef {
        &self.def
    }

    /// Prefixes of the checkpoints still kept, oldest first.
    pub fn last_checkpoints(&self) -> Vec<String> {
        self.last_checkpoints
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// Takes over `paths` (e.g. a state file's `all_model_checkpoint_paths`) as the kept
    /// checkpoints, so that `max_to_keep` also deletes those of an earlier run; paths whose
    /// index file is missing are dropped (`recover_last_checkpoints`).
    pub fn recover_last_checkpoints(&mut self, paths: &[String]) {
        self.last_checkpoints = paths
            .iter()
            .filter_map(|p| {
                let meta = std::fs::metadata(index_path(Path::new(p))).ok()?;
                let mtime = meta
                    .modified()
                    .ok()?
                    .duration_since(UNIX_EPOCH)
                    .ok()?
                    .as_secs_f64();
                Some((p.clone(), mtime))
            })
            .collect();
    }

    /// Saves the variables to `save_path`, or `save_path-<global_step>` when a step is given,
    /// writes the meta graph next to it if one is set ([`set_meta_graph`](Self::set_meta_graph)),
    /// records the checkpoint in the `checkpoint` state file of its directory, deletes the
    /// checkpoints beyond `max_to_keep` (with their `.meta`), and returns the prefix written.
    pub fn save(
        &mut self,
        sess: &Session,
        save_path: impl AsRef<Path>,
        global_step: Option<i64>,
    ) -> Result<String> {
        let save_path = save_path.as_ref().to_string_lossy().into_owned();
        let checkpoint_file = match global_step {
            Some(step) => format!("{save_path}-{step}"),
            None => {
                if Path::new(&save_path).file_name().and_then(|f| f.to_str())
                    == Some(CHECKPOINT_STATE_FILE)
                {
                    return Err(Error::value(format!(
                        "'latest_filename' collides with 'save_path': '{CHECKPOINT_STATE_FILE}' \
                         and '{save_path}'"
                    )));
                }
                save_path.clone()
            }
        };
        let parent = Path::new(&save_path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let out = sess
            .run(
                vec![(
                    self.filename,
                    Tensor::scalar(checkpoint_file.clone().into_bytes()),
                )],
                &[self.save_tensor],
                &[],
            )
            .map_err(|e| {
                let missing = !parent.as_os_str().is_empty() && !parent.is_dir();
                match e.code() {
                    Some(Code::NotFound | Code::FailedPrecondition) if missing => Error::value(
                        format!("Parent directory of {save_path} doesn't exist, can't save."),
                    ),
                    _ => e,
                }
            })?;
        let written = out[0].scalar_string("the save tensor")?;
        if let Some(meta) = &self.meta_graph {
            crate::meta_graph::write_meta_graph(format!("{checkpoint_file}.meta"), meta)?;
        }
        if self.def.max_to_keep > 0 {
            self.last_checkpoints.retain(|(p, _)| *p != written);
            self.last_checkpoints.push((written.clone(), now()));
            let mut doomed = Vec::new();
            while self.last_checkpoints.len() > self.def.max_to_keep as usize {
                doomed.push(self.last_checkpoints.remove(0));
            }
            update_checkpoint_state(&parent, &written, &self.last_checkpoints())?;
            for (path, stamp) in doomed {
                if stamp > self.next_checkpoint_time {
                    // Kept: one checkpoint every keep_checkpoint_every_n_hours.
                    self.next_checkpoint_time +=
                        self.def.keep_checkpoint_every_n_hours as f64 * 3600.0;
                    continue;
                }
                remove_checkpoint(&path)?;
            }
        } else {
            update_checkpoint_state(&parent, &written, &[])?;
        }
        Ok(written)
    }

    /// Assigns the values saved at `save_path` to the variables. A missing checkpoint is a
    /// `ValueError`; a key missing from it `NotFound` and a dtype or shape that differs
    /// `InvalidArgument`, each listing the variables that do not fit.
    pub fn restore(&self, sess: &Session, save_path: impl AsRef<Path>) -> Result<()> {
        let save_path = save_path.as_ref();
        if !checkpoint_exists(save_path) {
            return Err(Error::value(format!(
                "The passed save_path is not a valid checkpoint: {}",
                save_path.display()
            )));
        }
        let path = save_path.to_string_lossy().into_owned().into_bytes();
        sess.run(
            vec![(self.filename, Tensor::scalar(path))],
            &[],
            &[self.restore_op],
        )
        .map(|_| ())
        .map_err(|e| {
            let why = match e.code() {
                Some(Code::NotFound) => "a Variable name or other graph key that is missing",
                Some(Code::InvalidArgument) => "a mismatch between the current graph and the graph",
                _ => return e,
            };
            let mut text = format!(
                "Restoring from checkpoint failed. This is most likely due to {why} from the \
                 checkpoint. Please ensure that you have not altered the graph expected based on \
                 the checkpoint."
            );
            for line in self.diagnose(save_path) {
                text.push('\n');
                text.push_str(&line);
            }
            text.push_str("\nOriginal error:\n\n");
            text.push_str(e.message());
            match e {
                Error::Op { code, node, .. } => Error::Op {
                    code,
                    message: text,
                    node,
                },
                other => other,
            }
        })
    }

    /// One line per variable that does not fit the checkpoint: a missing key, another dtype or
    /// shape.
    fn diagnose(&self, save_path: &Path) -> Vec<String> {
        let Ok(reader) = BundleReader::open(save_path) else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        for (key, var, dtype, shape) in &self.specs {
            let Ok((stored, dims)) = reader.dtype_and_shape(key) else {
                lines.push(format!(
                    "Key {key} (variable {var}) not found in checkpoint {}",
                    save_path.display()
                ));
                continue;
            };
            let theirs = PartialShape::from_i64(Some(&dims));
            if stored != dtype.as_enum() {
                lines.push(format!(
                    "Variable {var} has dtype {dtype} but checkpoint key {key} holds {} (shapes: \
                     variable {shape}, checkpoint {theirs})",
                    dtype_string(stored)
                ));
            } else if !shape.is_compatible_with(&theirs) {
                lines.push(format!(
                    "Variable {var} has shape {shape} but checkpoint key {key} has shape {theirs}"
                ));
            }
        }
        lines
    }
}

/// Whether a V2 checkpoint (`<prefix>.index`) exists at `prefix`.
pub fn checkpoint_exists(prefix: impl AsRef<Path>) -> bool {
    index_path(prefix.as_ref()).is_file()
}

/// Deletes the files of the checkpoint `prefix`: its index, data shards and `.meta` graph.
pub fn remove_checkpoint(prefix: impl AsRef<Path>) -> Result<()> {
    let prefix = prefix.as_ref();
    let dir = match prefix.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = prefix
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    let data = format!("{base}.data-");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(Error::io(
                &e,
                format_args!("cannot list {} to delete checkpoint {base}", dir.display()),
            ))
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == format!("{base}.index")
            || name == format!("{base}.meta")
            || name.starts_with(&data)
        {
            let path = entry.path();
            std::fs::remove_file(&path)
                .map_err(|e| Error::io(&e, format_args!("cannot delete {}", path.display())))?;
        }
    }
    Ok(())
}

/// TensorFlow's `CheckpointState`: the newest checkpoint of a directory and those kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointState {
    /// The newest checkpoint's prefix.
    pub model_checkpoint_path: String,
    /// Every kept checkpoint, oldest first (the newest last).
    pub all_model_checkpoint_paths: Vec<String>,
    /// When each kept checkpoint was written (seconds since the epoch), if recorded.
    pub all_model_checkpoint_timestamps: Vec<f64>,
    /// When the last checkpoint kept for `keep_checkpoint_every_n_hours` was written, or 0.
    pub last_preserved_timestamp: f64,
}

impl CheckpointState {
    /// The state file's text (protobuf text format, as TensorFlow writes it: numbers in their
    /// shortest form, `1795301707.0` for a whole one).
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "model_checkpoint_path: \"{}\"\n",
            escape(&self.model_checkpoint_path)
        );
        for p in &self.all_model_checkpoint_paths {
            out.push_str(&format!("all_model_checkpoint_paths: \"{}\"\n", escape(p)));
        }
        for t in &self.all_model_checkpoint_timestamps {
            out.push_str(&format!("all_model_checkpoint_timestamps: {t:?}\n"));
        }
        if self.last_preserved_timestamp != 0.0 {
            out.push_str(&format!(
                "last_preserved_timestamp: {:?}\n",
                self.last_preserved_timestamp
            ));
        }
        out
    }

    /// Parses a state file's text; `what` names it in errors (`DataLoss` for text that is not a
    /// `CheckpointState`).
    pub fn parse(text: &str, what: &str) -> Result<CheckpointState> {
        let bad = |why: String| Error::data_loss(format!("{what} is not a CheckpointState: {why}"));
        let mut state = CheckpointState::default();
        let mut rest = text;
        loop {
            rest = skip_space(rest);
            if rest.is_empty() {
                break;
            }
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let field = &rest[..end];
            if field.is_empty() {
                return Err(bad(format!("unexpected text {:?}", first_line(rest))));
            }
            rest = skip_space(&rest[end..]);
            rest = rest.strip_prefix(':').map_or(rest, skip_space);
            match field {
                "model_checkpoint_path" | "all_model_checkpoint_paths" => {
                    let (value, after) = parse_string(rest).map_err(&bad)?;
                    rest = after;
                    if field == "model_checkpoint_path" {
                        state.model_checkpoint_path = value;
                    } else {
                        state.all_model_checkpoint_paths.push(value);
                    }
                }
                "all_model_checkpoint_timestamps" | "last_preserved_timestamp" => {
                    let end = rest
                        .find(|c: char| c.is_whitespace() || c == '#')
                        .unwrap_or(rest.len());
                    let value: f64 = rest[..end]
                        .parse()
                        .map_err(|_| bad(format!("{field} is not a number: {:?}", &rest[..end])))?;
                    rest = &rest[end..];
                    if field == "last_preserved_timestamp" {
                        state.last_preserved_timestamp = value;
                    } else {
                        state.all_model_checkpoint_timestamps.push(value);
                    }
                }
                other => return Err(bad(format!("unknown field '{other}'"))),
            }
        }
        Ok(state)
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn skip_space(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        match s.strip_prefix('#') {
            Some(comment) => s = comment.split_once('\n').map_or("", |(_, r)| r),
            None => return s,
        }
    }
}

/// A text-format string value (one or more adjacent quoted pieces, C escapes), and the rest.
fn parse_string(s: &str) -> std::result::Result<(String, &str), String> {
    let mut bytes = Vec::new();
    let mut rest = s;
    let mut pieces = 0;
    while let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let body = &rest.as_bytes()[1..];
        let mut i = 0;
        loop {
            let Some(&c) = body.get(i) else {
                return Err("unterminated string".into());
            };
            i += 1;
            if c == q as u8 {
                break;
            }
            if c != b'\\' {
                bytes.push(c);
                continue;
            }
            let Some(&e) = body.get(i) else {
                return Err("unterminated escape".into());
            };
            i += 1;
            match e {
                b'n' => bytes.push(b'\n'),
                b'r' => bytes.push(b'\r'),
                b't' => bytes.push(b'\t'),
                b'0'..=b'7' => {
                    let mut v = (e - b'0') as u32;
                    for _ in 0..2 {
                        match body.get(i) {
                            Some(&d @ b'0'..=b'7') => {
                                v = v * 8 + (d - b'0') as u32;
                                i += 1;
                            }
                            _ => break,
                        }
                    }
                    bytes.push(v as u8);
                }
                b'x' => {
                    let hex: String = body[i..]
                        .iter()
                        .take(2)
                        .take_while(|c| c.is_ascii_hexdigit())
                        .map(|&c| c as char)
                        .collect();
                    if hex.is_empty() {
                        return Err("\\x without hex digits".into());
                    }
                    i += hex.len();
                    bytes.push(u8::from_str_radix(&hex, 16).map_err(|e| e.to_string())?);
                }
                other => bytes.push(other),
            }
        }
        rest = skip_space(&rest[1 + i..]);
        pieces += 1;
    }
    if pieces == 0 {
        return Err(format!("expected a quoted string at {:?}", first_line(s)));
    }
    let value = String::from_utf8(bytes).map_err(|_| "a path that is not UTF-8".to_string())?;
    Ok((value, rest))
}

/// Protobuf text-format escaping of a string (TensorFlow's `CEscape`).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

/// `path` relative to `base` (both taken from the current directory when relative).
fn relpath(path: &str, base: &Path) -> String {
    let (Ok(p), Ok(b)) = (std::path::absolute(path), std::path::absolute(base)) else {
        return path.to_string();
    };
    let p: Vec<_> = p.components().collect();
    let b: Vec<_> = b.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        ".".into()
    } else {
        out.to_string_lossy().into_owned()
    }
}

/// Writes the `checkpoint` state file of `dir`: `model_checkpoint_path` newest, appended to
/// `all_model_checkpoint_paths` if it is not already last. When `dir` is relative the paths are
/// stored relative to it, as TensorFlow does (so the directory can move).
pub fn update_checkpoint_state(
    dir: impl AsRef<Path>,
    model_checkpoint_path: &str,
    all_model_checkpoint_paths: &[String],
) -> Result<()> {
    let dir = dir.as_ref();
    let mut all = all_model_checkpoint_paths.to_vec();
    if all.last().map(String::as_str) != Some(model_checkpoint_path) {
        all.push(model_checkpoint_path.to_string());
    }
    let mut model = model_checkpoint_path.to_string();
    if dir.is_relative() {
        let rel = |p: &str| {
            if Path::new(p).is_absolute() {
                p.to_string()
            } else {
                relpath(p, dir)
            }
        };
        model = rel(&model);
        all = all.iter().map(|p| rel(p)).collect();
    }
    let state_dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let file = state_dir.join(CHECKPOINT_STATE_FILE);
    if Path::new(&model) == file {
        return Err(Error::failed_precondition(format!(
            "Save path '{model_checkpoint_path}' conflicts with path used for checkpoint state. \
             Please use a different save path."
        )));
    }
    let state = CheckpointState {
        model_checkpoint_path: model,
        all_model_checkpoint_paths: all,
        ..CheckpointState::default()
    };
    atomic_write(&file, state.to_text().as_bytes())
}

/// Writes `bytes` to a temporary file next to `path`, syncs it and renames it over `path`.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(&e, format_args!("cannot write {}", path.display()))
    })
}

/// The `CheckpointState` of `dir` with relative paths joined to it; `None` without a state
/// file. Text that is not a `CheckpointState` is `DataLoss` (TensorFlow logs it and returns
/// None); a state naming no checkpoint a `ValueError`.
pub fn get_checkpoint_state(dir: impl AsRef<Path>) -> Result<Option<CheckpointState>> {
    let dir = dir.as_ref();
    let file = dir.join(CHECKPOINT_STATE_FILE);
    let text = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::io(
                &e,
                format_args!("cannot read {}", file.display()),
            ))
        }
    };
    let what = file.display().to_string();
    let text = String::from_utf8(text)
        .map_err(|_| Error::data_loss(format!("{what} is not a CheckpointState: not UTF-8")))?;
    let mut state = CheckpointState::parse(&text, &what)?;
    if state.model_checkpoint_path.is_empty() {
        return Err(Error::value(format!(
            "Invalid checkpoint state loaded from {}",
            dir.display()
        )));
    }
    let join = |p: &mut String| {
        if Path::new(p.as_str()).is_relative() {
            *p = dir.join(p.as_str()).to_string_lossy().into_owned();
        }
    };
    join(&mut state.model_checkpoint_path);
    state.all_model_checkpoint_paths.iter_mut().for_each(join);
    Ok(Some(state))
}

/// The prefix of the newest checkpoint recorded in `dir` if its files exist
/// (`tf.train.latest_checkpoint`).
pub fn latest_checkpoint(dir: impl AsRef<Path>) -> Result<Option<String>> {
    Ok(get_checkpoint_state(dir)?
        .map(|s| s.model_checkpoint_path)
        .filter(|p| checkpoint_exists(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_text_round_trips_with_escapes() {
        let state = CheckpointState {
            model_checkpoint_path: "dir with \"quotes\"/model.ckpt-3".into(),
            all_model_checkpoint_paths: vec!["a\\b\n".into(), "é".into()],
            all_model_checkpoint_timestamps: vec![1.5, 1700000000.25],
            last_preserved_timestamp: 12.0,
        };
        let text = state.to_text();
        assert!(text.contains(r#"model_checkpoint_path: "dir with \"quotes\"/model.ckpt-3""#));
        assert!(
            text.contains(r#"all_model_checkpoint_paths: "\303\251""#),
            "{text}"
        );
        assert_eq!(CheckpointState::parse(&text, "t").unwrap(), state);
    }

    #[test]
    fn state_text_is_tensorflows() {
        // TensorFlow 2.21's text for this state (the case of Python ferroflow's
        // tests/python/test_checkpoint_management.py).
        let state = CheckpointState {
            model_checkpoint_path: "/d/ckpt-3".into(),
            all_model_checkpoint_paths: vec!["/d/ckpt-2".into(), "/d/ckpt-3".into()],
            all_model_checkpoint_timestamps: vec![1795301709.083236, 1795301709.093584],
            last_preserved_timestamp: 1795301707.0,
        };
        assert_eq!(
            state.to_text(),
            "model_checkpoint_path: \"/d/ckpt-3\"\n\
             all_model_checkpoint_paths: \"/d/ckpt-2\"\n\
             all_model_checkpoint_paths: \"/d/ckpt-3\"\n\
             all_model_checkpoint_timestamps: 1795301709.083236\n\
             all_model_checkpoint_timestamps: 1795301709.093584\n\
             last_preserved_timestamp: 1795301707.0\n"
        );
    }

    #[test]
    fn state_parser_takes_tensorflow_text_and_rejects_other() {
        // Comments, single quotes, adjacent pieces, \x escapes, no colon before a value.
        let text = "# written by TF\nmodel_checkpoint_path: 'm\\x41' \"b\"\n\
                    all_model_checkpoint_paths \"x\"\n";
        let s = CheckpointState::parse(text, "t").unwrap();
        assert_eq!(s.model_checkpoint_path, "mAb");
        assert_eq!(s.all_model_checkpoint_paths, vec!["x"]);
        for bad in [
            "nonsense: 1",
            "model_checkpoint_path: \"open",
            "model_checkpoint_path: 3",
        ] {
            let e = CheckpointState::parse(bad, "file").unwrap_err();
            assert_eq!(e.code(), Some(Code::DataLoss), "{bad}: {e}");
        }
    }

    #[test]
    fn relpath_walks_up_and_down() {
        assert_eq!(relpath("a/b/c", Path::new("a")), "b/c");
        assert_eq!(relpath("x/m", Path::new("a/b")), "../../x/m");
    }
}
