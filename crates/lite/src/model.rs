//! A TensorFlow Lite model in memory: the flatbuffer read once, checked, and
//! turned into plain Rust values (the interpreter and the converter both
//! work on these), and written back to flatbuffer bytes.

use crate::error::{Error, LiteError, Result};
use crate::op_names::BUILTIN_OPERATOR_NAMES;
use crate::quant::QuantParams;
use crate::schema_generated::tflite as fb;
use ferroflow_tensor::{bail, ensure};

/// TFLite's element types (`TensorType` in the schema), by code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DType {
    /// `FLOAT32` (0).
    #[default]
    F32,
    /// `FLOAT16` (1).
    F16,
    /// `INT32` (2).
    I32,
    /// `UINT8` (3).
    U8,
    /// `INT64` (4).
    I64,
    /// `STRING` (5).
    String,
    /// `BOOL` (6).
    Bool,
    /// `INT16` (7).
    I16,
    /// `INT8` (9).
    I8,
    /// `FLOAT64` (10).
    F64,
}

impl DType {
    /// The schema code.
    pub fn code(self) -> i8 {
        match self {
            DType::F32 => 0,
            DType::F16 => 1,
            DType::I32 => 2,
            DType::U8 => 3,
            DType::I64 => 4,
            DType::String => 5,
            DType::Bool => 6,
            DType::I16 => 7,
            DType::I8 => 9,
            DType::F64 => 10,
        }
    }

    /// The type with schema code `code`; an error names unsupported ones.
    pub fn from_code(code: i8) -> Result<DType> {
        Ok(match code {
            0 => DType::F32,
            1 => DType::F16,
            2 => DType::I32,
            3 => DType::U8,
            4 => DType::I64,
            5 => DType::String,
            6 => DType::Bool,
            7 => DType::I16,
            9 => DType::I8,
            10 => DType::F64,
            other => {
                let name = match other {
                    8 => "COMPLEX64",
                    11 => "COMPLEX128",
                    12 => "UINT64",
                    13 => "RESOURCE",
                    14 => "VARIANT",
                    15 => "UINT32",
                    16 => "UINT16",
                    17 => "INT4",
                    18 => "BFLOAT16",
                    _ => "an unknown type",
                };
                bail!(
                    unimplemented,
                    "tensor type {name} (code {other}) is not supported"
                );
            }
        })
    }

    /// TFLite's name (`FLOAT32`, `INT8`, ...), as its error messages use.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "FLOAT32",
            DType::F16 => "FLOAT16",
            DType::I32 => "INT32",
            DType::U8 => "UINT8",
            DType::I64 => "INT64",
            DType::String => "STRING",
            DType::Bool => "BOOL",
            DType::I16 => "INT16",
            DType::I8 => "INT8",
            DType::F64 => "FLOAT64",
        }
    }

    /// Bytes per element (strings: 0, they are variable-length).
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::F16 | DType::I16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::I64 | DType::F64 => 8,
            DType::String => 0,
        }
    }
}

/// One tensor of a subgraph.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorDef {
    /// The tensor's name.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Static shape.
    pub shape: Vec<i32>,
    /// Shape with -1 for dimensions that may change (batch), when given.
    pub shape_signature: Option<Vec<i32>>,
    /// Quantization parameters (empty when not quantized).
    pub quant: QuantParams,
    /// Constant contents (weights), little-endian, when the tensor has them.
    pub data: Option<Vec<u8>>,
    /// A variable tensor (state kept across invocations).
    pub is_variable: bool,
}

impl TensorDef {
    /// Number of elements of the static shape; saturates at `usize::MAX`
    /// (such a shape then fails every size check instead of overflowing).
    pub fn num_elements(&self) -> usize {
        self.shape
            .iter()
            .fold(1usize, |n, &d| n.saturating_mul(d.max(0) as usize))
    }
}

/// An operator: its code, options and tensor indices (-1: optional input
/// left out).
#[derive(Clone, Debug, PartialEq)]
pub struct OpDef {
    /// Builtin operator code (`BuiltinOperator`), or 32 (`CUSTOM`).
    pub code: i32,
    /// The custom operator's name for code 32.
    pub custom_code: Option<String>,
    /// Operator version (what the runtime must support).
    pub version: i32,
    /// Input tensor indices.
    pub inputs: Vec<i32>,
    /// Output tensor indices.
    pub outputs: Vec<i32>,
    /// Builtin options (`None` when absent or of a kind this reader does
    /// not know; operators that need them then fail by name).
    pub options: Option<fb::BuiltinOptions>,
}

impl OpDef {
    /// TFLite's name of the operator (`CONV_2D`, or the custom code).
    pub fn name(&self) -> String {
        if let Some(custom) = &self.custom_code {
            return custom.clone();
        }
        builtin_name(self.code)
    }
}

/// The name of builtin operator `code`, or `code N` for unknown ones.
pub fn builtin_name(code: i32) -> String {
    usize::try_from(code)
        .ok()
        .and_then(|c| BUILTIN_OPERATOR_NAMES.get(c))
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("code {code}"))
}

/// A subgraph: tensors, operators in execution order, inputs and outputs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Subgraph {
    /// Name (for messages).
    pub name: String,
    /// All tensors.
    pub tensors: Vec<TensorDef>,
    /// Indices of the inputs fed for inference.
    pub inputs: Vec<i32>,
    /// Indices of the outputs.
    pub outputs: Vec<i32>,
    /// Operators in execution order.
    pub operators: Vec<OpDef>,
}

/// A signature: named inputs and outputs of a subgraph.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Signature {
    /// The signature's key (`serving_default`).
    pub key: String,
    /// Input names and tensor indices.
    pub inputs: Vec<(String, u32)>,
    /// Output names and tensor indices.
    pub outputs: Vec<(String, u32)>,
    /// The subgraph the signature runs.
    pub subgraph: u32,
}

/// A whole model.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Model {
    /// Schema version (3).
    pub version: u32,
    /// Description string.
    pub description: String,
    /// Subgraphs; the first is the main one.
    pub subgraphs: Vec<Subgraph>,
    /// Named metadata buffers (`min_runtime_version`, ...).
    pub metadata: Vec<(String, Vec<u8>)>,
    /// Signatures.
    pub signatures: Vec<Signature>,
}

/// Largest model accepted (flatbuffers address 2 GiB; bigger models keep
/// buffers after the flatbuffer, which `offset`/`size` reach).
const MAX_MODEL_BYTES: usize = 1 << 40;

fn fb_err(what: &str) -> impl Fn(planus::Error) -> Error + '_ {
    move |e| {
        Error::invalid(format!(
            "The model is not a valid Flatbuffer buffer: {what}: {e}"
        ))
    }
}

fn index_in(what: &str, i: i64, len: usize) -> Result<()> {
    if i < 0 || i as usize >= len {
        bail!(
            invalid,
            "{what} index {i} is out of range (the model has {len})"
        );
    }
    Ok(())
}

impl Model {
    /// Reads and checks a .tflite file's bytes: every offset, every tensor
    /// and buffer index, buffer sizes against tensor shapes. Errors are
    /// `ValueError`s naming the part at fault; nothing reads out of bounds.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        use planus::ReadAsRoot;
        if bytes.len() < 8 {
            bail!(
                invalid,
                "The model is not a valid Flatbuffer buffer: it is shorter than a header"
            );
        }
        if bytes.len() > MAX_MODEL_BYTES {
            bail!(invalid, "The model is larger than 1 TiB");
        }
        ensure!(
            &bytes[4..8] == b"TFL3",
            invalid,
            "The model is not a valid Flatbuffer buffer: its file identifier is not TFL3"
        );
        let root = fb::ModelRef::read_as_root(bytes).map_err(fb_err("model"))?;
        let version = root.version().map_err(fb_err("version"))?;
        ensure!(
            version == 3,
            invalid,
            "Model provided has model identifier version {version}, should be 3"
        );
        // Buffers: inline data or (offset, size) past the flatbuffer.
        let mut buffers: Vec<Option<&[u8]>> = Vec::new();
        if let Some(bufs) = root.buffers().map_err(fb_err("buffers"))? {
            for (i, b) in bufs.iter().enumerate() {
                let b = b.map_err(fb_err("buffer"))?;
                let data = b.data().map_err(fb_err("buffer data"))?;
                let offset = b.offset().map_err(fb_err("buffer offset"))?;
                let size = b.size().map_err(fb_err("buffer size"))?;
                let slice = if offset > 1 {
                    let end = offset
                        .checked_add(size)
                        .filter(|&e| e <= bytes.len() as u64);
                    match end {
                        Some(end) => Some(&bytes[offset as usize..end as usize]),
                        None => {
                            bail!(
                                invalid,
                                "buffer {i} reaches bytes {offset}..{} of a {}-byte model",
                                offset.saturating_add(size),
                                bytes.len()
                            )
                        }
                    }
                } else {
                    data.map(|d| d as &[u8]).filter(|d| !d.is_empty())
                };
                buffers.push(slice);
            }
        }
        let mut codes: Vec<(i32, Option<String>, i32)> = Vec::new();
        if let Some(ocs) = root.operator_codes().map_err(fb_err("operator codes"))? {
            for oc in ocs.iter() {
                let oc = oc.map_err(fb_err("operator code"))?;
                let deprecated = oc
                    .deprecated_builtin_code()
                    .map_err(fb_err("operator code"))? as i32;
                let extended = oc.builtin_code().map_err(fb_err("operator code"))?;
                // Codes past 127 only fit the extended field; older files
                // set only the deprecated byte.
                let code = deprecated.max(extended);
                let custom = oc
                    .custom_code()
                    .map_err(fb_err("custom code"))?
                    .map(str::to_string);
                let version = oc.version().map_err(fb_err("operator version"))?;
                codes.push((code, custom, version));
            }
        }
        let mut subgraphs = Vec::new();
        let sgs = root.subgraphs().map_err(fb_err("subgraphs"))?;
        let sgs = sgs.ok_or_else(|| Error::invalid("The model has no subgraph"))?;
        if sgs.is_empty() {
            bail!(invalid, "The model has no subgraph");
        }
        for (si, sg) in sgs.iter().enumerate() {
            let sg = sg.map_err(fb_err("subgraph"))?;
            subgraphs.push(read_subgraph(si, sg, &buffers, &codes)?);
        }
        let mut metadata = Vec::new();
        if let Some(md) = root.metadata().map_err(fb_err("metadata"))? {
            for m in md.iter() {
                let m = m.map_err(fb_err("metadata"))?;
                let name = m
                    .name()
                    .map_err(fb_err("metadata name"))?
                    .unwrap_or("")
                    .to_string();
                let b = m.buffer().map_err(fb_err("metadata buffer"))? as i64;
                index_in("metadata buffer", b, buffers.len())?;
                metadata.push((name, buffers[b as usize].unwrap_or(&[]).to_vec()));
            }
        }
        let mut signatures = Vec::new();
        if let Some(sds) = root.signature_defs().map_err(fb_err("signature defs"))? {
            for sd in sds.iter() {
                let sd = sd.map_err(fb_err("signature def"))?;
                let subgraph = sd.subgraph_index().map_err(fb_err("signature def"))?;
                index_in("signature subgraph", subgraph as i64, subgraphs.len())?;
                let ntensors = subgraphs[subgraph as usize].tensors.len();
                let read_maps = |v: Option<
                    planus::Vector<'_, planus::Result<fb::TensorMapRef<'_>>>,
                >|
                 -> Result<Vec<(String, u32)>> {
                    let mut out = Vec::new();
                    for tm in v.iter().flat_map(|v| v.iter()) {
                        let tm = tm.map_err(fb_err("signature tensor"))?;
                        let name = tm
                            .name()
                            .map_err(fb_err("signature tensor name"))?
                            .unwrap_or("")
                            .to_string();
                        let index = tm
                            .tensor_index()
                            .map_err(fb_err("signature tensor index"))?;
                        index_in("signature tensor", index as i64, ntensors)?;
                        out.push((name, index));
                    }
                    Ok(out)
                };
                signatures.push(Signature {
                    key: sd
                        .signature_key()
                        .map_err(fb_err("signature key"))?
                        .unwrap_or("")
                        .to_string(),
                    inputs: read_maps(sd.inputs().map_err(fb_err("signature inputs"))?)?,
                    outputs: read_maps(sd.outputs().map_err(fb_err("signature outputs"))?)?,
                    subgraph,
                });
            }
        }
        Ok(Model {
            version,
            description: root
                .description()
                .map_err(fb_err("description"))?
                .unwrap_or("")
                .to_string(),
            subgraphs,
            metadata,
            signatures,
        })
    }

    /// The value of metadata entry `name`, as text.
    pub fn metadata_str(&self, name: &str) -> Option<String> {
        self.metadata.iter().find(|(n, _)| n == name).map(|(_, v)| {
            String::from_utf8_lossy(v)
                .trim_end_matches('\0')
                .to_string()
        })
    }
}

fn int_vec(v: Option<planus::Vector<'_, i32>>) -> Vec<i32> {
    v.map(|v| v.iter().collect()).unwrap_or_default()
}

fn read_subgraph(
    si: usize,
    sg: fb::SubGraphRef<'_>,
    buffers: &[Option<&[u8]>],
    codes: &[(i32, Option<String>, i32)],
) -> Result<Subgraph> {
    let mut tensors = Vec::new();
    for (ti, t) in sg
        .tensors()
        .map_err(fb_err("tensors"))?
        .iter()
        .flat_map(|v| v.iter())
        .enumerate()
    {
        let t = t.map_err(fb_err("tensor"))?;
        let name = t
            .name()
            .map_err(fb_err("tensor name"))?
            .unwrap_or("")
            .to_string();
        let at = |what: &str| format!("tensor {ti} ({name:?}) of subgraph {si}: {what}");
        let dtype = DType::from_code(t.type_().map_err(fb_err("tensor type"))?)
            .map_err(|e| e.with_context(at("")))?;
        let shape = int_vec(t.shape().map_err(fb_err("tensor shape"))?);
        if shape.iter().any(|&d| d < -1) {
            return Err(Error::invalid(at(&format!(
                "negative dimension in shape {shape:?}"
            ))));
        }
        let shape_signature = t
            .shape_signature()
            .map_err(fb_err("shape signature"))?
            .map(|v| v.iter().collect());
        if t.sparsity().map_err(fb_err("sparsity"))?.is_some() {
            return Err(Error::unimplemented(at("sparse tensors are not supported")));
        }
        let mut quant = QuantParams::default();
        if let Some(q) = t.quantization().map_err(fb_err("quantization"))? {
            let scale: Vec<f32> = q
                .scale()
                .map_err(fb_err("scale"))?
                .map(|v| v.iter().collect())
                .unwrap_or_default();
            let zero_point: Vec<i64> = q
                .zero_point()
                .map_err(fb_err("zero point"))?
                .map(|v| v.iter().collect())
                .unwrap_or_default();
            let axis = q
                .quantized_dimension()
                .map_err(fb_err("quantized dimension"))?;
            if !scale.is_empty() {
                if zero_point.len() != scale.len() {
                    return Err(Error::invalid(at(&format!(
                        "{} scales but {} zero points",
                        scale.len(),
                        zero_point.len()
                    ))));
                }
                if scale.len() > 1
                    && (axis < 0
                        || axis as usize >= shape.len()
                        || shape[axis as usize] as usize != scale.len())
                {
                    return Err(Error::invalid(at(&format!(
                        "{} per-channel scales do not match dimension {axis} of shape {shape:?}",
                        scale.len()
                    ))));
                }
                quant = QuantParams {
                    scale,
                    zero_point,
                    axis: axis.max(0) as usize,
                };
            }
        }
        let b = t.buffer().map_err(fb_err("tensor buffer"))? as i64;
        let data = if b == 0 && buffers.is_empty() {
            None
        } else {
            index_in(&at("buffer"), b, buffers.len())?;
            buffers[b as usize].map(|d| d.to_vec())
        };
        let def = TensorDef {
            name,
            dtype,
            shape,
            shape_signature,
            quant,
            data,
            is_variable: t.is_variable().map_err(fb_err("is_variable"))?,
        };
        if let Some(d) = &def.data {
            if dtype != DType::String {
                let want = def.num_elements().checked_mul(dtype.size());
                ensure!(
                    want == Some(d.len()),
                    invalid,
                    "tensor {ti} ({:?}) of subgraph {si}: its buffer holds {} bytes, its shape {:?} of {} needs {}",
                    def.name,
                    d.len(),
                    def.shape,
                    dtype.name(),
                    want.map(|w| w.to_string()).unwrap_or_else(|| "too many".into())
                );
            }
        }
        tensors.push(def);
    }
    let n = tensors.len();
    let check_list = |what: &str, v: &[i32], optional: bool| -> Result<()> {
        for &i in v {
            if !(optional && i == -1) {
                index_in(what, i as i64, n)?;
            }
        }
        Ok(())
    };
    let inputs = int_vec(sg.inputs().map_err(fb_err("subgraph inputs"))?);
    let outputs = int_vec(sg.outputs().map_err(fb_err("subgraph outputs"))?);
    check_list("subgraph input tensor", &inputs, false)?;
    check_list("subgraph output tensor", &outputs, false)?;
    let mut operators = Vec::new();
    for (oi, op) in sg
        .operators()
        .map_err(fb_err("operators"))?
        .iter()
        .flat_map(|v| v.iter())
        .enumerate()
    {
        let op = op.map_err(fb_err("operator"))?;
        let ci = op.opcode_index().map_err(fb_err("opcode index"))? as i64;
        index_in(&format!("operator {oi}: opcode"), ci, codes.len())?;
        let (code, custom, version) = codes[ci as usize].clone();
        let op_inputs = int_vec(op.inputs().map_err(fb_err("operator inputs"))?);
        let op_outputs = int_vec(op.outputs().map_err(fb_err("operator outputs"))?);
        check_list(
            &format!("operator {oi} ({}) input tensor", builtin_name(code)),
            &op_inputs,
            true,
        )?;
        check_list(
            &format!("operator {oi} ({}) output tensor", builtin_name(code)),
            &op_outputs,
            false,
        )?;
        let options = match op.builtin_options() {
            Ok(Some(o)) => {
                Some(fb::BuiltinOptions::try_from(o).map_err(fb_err("builtin options"))?)
            }
            // An options table this reader does not know belongs to an
            // operator it cannot run; the interpreter names that operator.
            Ok(None) | Err(_) => None,
        };
        operators.push(OpDef {
            code,
            custom_code: custom,
            version,
            inputs: op_inputs,
            outputs: op_outputs,
            options,
        });
    }
    Ok(Subgraph {
        name: sg
            .name()
            .map_err(fb_err("subgraph name"))?
            .unwrap_or("")
            .to_string(),
        tensors,
        inputs,
        outputs,
        operators,
    })
}
