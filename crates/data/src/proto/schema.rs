//! Where a proto op's message descriptions come from, and what the kernels
//! keep of them: for each requested field its number, wire type, whether it
//! repeats or packs, and its default value in the output dtype.
//!
//! `descriptor_source` is read as TensorFlow reads it: a registered source
//! first (only `local://` here), then a file holding a serialized
//! `FileDescriptorSet`, then `bytes://` followed by such a set.

use std::sync::{Arc, RwLock};

use ferroflow_tensor::{DType, Error, Result};
use prost_reflect::{DescriptorPool, Kind, MessageDescriptor, Value};

/// The protobuf field types (`FieldDescriptorProto.Type`), which decide the
/// wire format and the dtypes a field may be read into or written from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldType {
    Double,
    Float,
    Int64,
    Uint64,
    Int32,
    Fixed64,
    Fixed32,
    Bool,
    String,
    Group,
    Message,
    Bytes,
    Uint32,
    Enum,
    Sfixed32,
    Sfixed64,
    Sint32,
    Sint64,
}

impl FieldType {
    fn of(kind: &Kind, is_group: bool) -> FieldType {
        match kind {
            Kind::Double => FieldType::Double,
            Kind::Float => FieldType::Float,
            Kind::Int32 => FieldType::Int32,
            Kind::Int64 => FieldType::Int64,
            Kind::Uint32 => FieldType::Uint32,
            Kind::Uint64 => FieldType::Uint64,
            Kind::Sint32 => FieldType::Sint32,
            Kind::Sint64 => FieldType::Sint64,
            Kind::Fixed32 => FieldType::Fixed32,
            Kind::Fixed64 => FieldType::Fixed64,
            Kind::Sfixed32 => FieldType::Sfixed32,
            Kind::Sfixed64 => FieldType::Sfixed64,
            Kind::Bool => FieldType::Bool,
            Kind::String => FieldType::String,
            Kind::Bytes => FieldType::Bytes,
            Kind::Message(_) if is_group => FieldType::Group,
            Kind::Message(_) => FieldType::Message,
            Kind::Enum(_) => FieldType::Enum,
        }
    }

    /// The wire type a value of this field is written with (unpacked).
    pub(crate) fn wire_type(self) -> u32 {
        use FieldType::*;
        match self {
            Double | Fixed64 | Sfixed64 => 1,
            Float | Fixed32 | Sfixed32 => 5,
            String | Message | Bytes => 2,
            Group => 3,
            Int64 | Uint64 | Int32 | Bool | Uint32 | Enum | Sint32 | Sint64 => 0,
        }
    }

    /// The dtypes TensorFlow reads this field into and writes it from
    /// (`proto_utils::IsCompatibleType`).
    pub(crate) fn dtypes(self) -> &'static [DType] {
        use FieldType::*;
        match self {
            Double => &[DType::Float64],
            Float => &[DType::Float32, DType::Float64],
            Int64 | Sfixed64 | Sint64 => &[DType::Int64],
            Int32 | Sfixed32 | Sint32 => &[DType::Int32, DType::Int64],
            Enum => &[DType::Int32],
            Bool => &[DType::Bool],
            String | Group | Message | Bytes => &[DType::String],
            Uint64 | Fixed64 => &[DType::UInt64],
            Uint32 | Fixed32 => &[DType::UInt32, DType::UInt64],
        }
    }

    /// C++'s `FieldDescriptor::CppTypeName`, which TensorFlow's decode errors show.
    fn cpp_type_name(self) -> &'static str {
        use FieldType::*;
        match self {
            Double => "double",
            Float => "float",
            Int64 | Sfixed64 | Sint64 => "int64",
            Uint64 | Fixed64 => "uint64",
            Int32 | Sfixed32 | Sint32 => "int32",
            Uint32 | Fixed32 => "uint32",
            Bool => "bool",
            String | Bytes => "string",
            Group | Message => "message",
            Enum => "enum",
        }
    }

    /// The `.proto` type name (`FieldDescriptor::type_name`), which the encode errors show.
    pub(crate) fn type_name(self) -> &'static str {
        use FieldType::*;
        match self {
            Double => "double",
            Float => "float",
            Int64 => "int64",
            Uint64 => "uint64",
            Int32 => "int32",
            Fixed64 => "fixed64",
            Fixed32 => "fixed32",
            Bool => "bool",
            String => "string",
            Group => "group",
            Message => "message",
            Bytes => "bytes",
            Uint32 => "uint32",
            Enum => "enum",
            Sfixed32 => "sfixed32",
            Sfixed64 => "sfixed64",
            Sint32 => "sint32",
            Sint64 => "sint64",
        }
    }
}

/// TensorFlow's `DataTypeString` (`float`, `double`, `half`, else the usual name).
pub(crate) fn type_string(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
        DType::Float64 => "double",
        DType::Float16 => "half",
        other => other.name(),
    }
}

/// TensorFlow's `DataType` enum name (`DT_FLOAT`), as its decode errors print dtypes.
fn dt_name(d: DType) -> String {
    format!("DT_{}", type_string(d).to_uppercase())
}

/// A field's default value, already in the output dtype.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Default {
    F32(f32),
    F64(f64),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    Bool(bool),
    Str(Vec<u8>),
}

impl Default {
    fn new(value: &Value, dtype: DType) -> Default {
        let (i, f): (i128, f64) = match value {
            Value::Bool(b) => (*b as i128, *b as u8 as f64),
            Value::I32(v) | Value::EnumNumber(v) => (*v as i128, *v as f64),
            Value::I64(v) => (*v as i128, *v as f64),
            Value::U32(v) => (*v as i128, *v as f64),
            Value::U64(v) => (*v as i128, *v as f64),
            Value::F32(v) => (*v as i128, *v as f64),
            Value::F64(v) => (*v as i128, *v),
            Value::String(s) => return Default::Str(s.as_bytes().to_vec()),
            Value::Bytes(b) => return Default::Str(b.to_vec()),
            Value::Message(_) | Value::List(_) | Value::Map(_) => return Default::Str(Vec::new()),
        };
        match dtype {
            DType::Float32 => Default::F32(f as f32),
            DType::Float64 => Default::F64(f),
            DType::Int32 => Default::I32(i as i32),
            DType::Int64 => Default::I64(i as i64),
            DType::UInt32 => Default::U32(i as u32),
            DType::UInt64 => Default::U64(i as u64),
            DType::Bool => Default::Bool(i != 0),
            _ => Default::Str(Vec::new()),
        }
    }
}

/// One field as a kernel sees it.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub name: String,
    pub number: u32,
    pub ty: FieldType,
    pub repeated: bool,
    pub packed: bool,
    /// Decode only: the output dtype and the default in it.
    pub dtype: DType,
    pub default: Default,
}

/// A message type found in a descriptor pool.
pub(crate) struct Schema {
    pub message: MessageDescriptor,
}

impl Schema {
    /// Finds `message_type` in the pool `descriptor_source` names.
    pub(crate) fn load(descriptor_source: &[u8], message_type: &str) -> Result<Schema> {
        let pool = pool_for(descriptor_source, message_type)?;
        let message = pool.get_message_by_name(message_type).ok_or_else(|| {
            let mut msg = format!("No descriptor found for message type {message_type}");
            if descriptor_source == LOCAL.as_bytes() {
                msg.push_str(
                    " (local:// holds TensorFlow's messages and those of the protobuf classes \
                     Python has imported)",
                );
            }
            Error::invalid_argument(msg)
        })?;
        Ok(Schema { message })
    }

    /// A field by name; `extensions` also finds the message's extensions by
    /// their full names (as decode_proto does, encode_proto does not).
    pub(crate) fn field(
        &self,
        name: &str,
        extensions: bool,
    ) -> Result<(u32, FieldType, bool, bool, Value)> {
        if let Some(f) = self.message.get_field_by_name(name) {
            let default = if f.is_list() {
                f.kind().default_value()
            } else {
                f.default_value()
            };
            return Ok((
                f.number(),
                FieldType::of(&f.kind(), f.is_group()),
                f.is_list(),
                f.is_packed(),
                default,
            ));
        }
        if extensions {
            if let Some(x) = self.message.extensions().find(|x| x.full_name() == name) {
                let default = if x.is_list() {
                    x.kind().default_value()
                } else {
                    x.default_value()
                };
                return Ok((
                    x.number(),
                    FieldType::of(&x.kind(), x.is_group()),
                    x.is_list(),
                    x.is_packed(),
                    default,
                ));
            }
        }
        Err(Error::invalid_argument(format!(
            "Unknown field: {name} in message type {}",
            self.message.full_name()
        )))
    }

    /// The fields decode_proto reads, in the order of `field_names`, with
    /// TensorFlow's check of each output type.
    pub(crate) fn decode_fields(&self, names: &[String], dtypes: &[DType]) -> Result<Vec<Field>> {
        if names.len() != dtypes.len() {
            return Err(Error::invalid_argument(
                "field_names and output_types attributes must have the same length",
            ));
        }
        names
            .iter()
            .zip(dtypes)
            .map(|(name, &dtype)| {
                let (number, ty, repeated, packed, value) = self.field(name, true)?;
                if !ty.dtypes().contains(&dtype) {
                    let full = if name.contains('.') {
                        name.clone()
                    } else {
                        format!("{}.{name}", self.message.full_name())
                    };
                    return Err(Error::invalid_argument(format!(
                        "Unexpected output type for {full}: {} to {}",
                        ty.cpp_type_name(),
                        dt_name(dtype)
                    )));
                }
                Ok(Field {
                    name: name.clone(),
                    number,
                    ty,
                    repeated,
                    packed,
                    dtype,
                    default: Default::new(&value, dtype),
                })
            })
            .collect()
    }

    /// The fields encode_proto writes, in the order of `field_names`.
    pub(crate) fn encode_fields(&self, names: &[String]) -> Result<Vec<Field>> {
        names
            .iter()
            .map(|name| {
                let (number, ty, repeated, packed, _) = self.field(name, false)?;
                Ok(Field {
                    name: name.clone(),
                    number,
                    ty,
                    repeated,
                    packed,
                    dtype: DType::String,
                    default: Default::Str(Vec::new()),
                })
            })
            .collect()
    }
}

/// The registered source name for the protos "linked into the binary".
pub const LOCAL: &str = "local://";

/// Finds a `local://` message type's `FileDescriptorSet` (the file defining
/// it and its dependencies) when the pool does not know it yet. The Python
/// module installs one that looks in ferroflow's TensorFlow protos and in
/// protobuf's default pool.
pub type LocalResolver = dyn Fn(&str) -> Result<Option<Vec<u8>>> + Send + Sync;

struct Local {
    pool: DescriptorPool,
    resolver: Option<Arc<LocalResolver>>,
}

fn local() -> &'static RwLock<Local> {
    static LOCAL_POOL: std::sync::OnceLock<RwLock<Local>> = std::sync::OnceLock::new();
    LOCAL_POOL.get_or_init(|| {
        RwLock::new(Local {
            pool: DescriptorPool::new(),
            resolver: None,
        })
    })
}

/// Adds a serialized `FileDescriptorSet` to the `local://` pool (files
/// already there by name are kept).
pub fn register_local_descriptors(file_descriptor_set: &[u8]) -> Result<()> {
    let mut guard = local().write().unwrap_or_else(|e| e.into_inner());
    let mut pool = guard.pool.clone();
    pool.decode_file_descriptor_set(file_descriptor_set)
        .map_err(|e| Error::invalid_argument(format!("Failed to load FileDescriptorProto: {e}")))?;
    guard.pool = pool;
    Ok(())
}

/// Installs the function `local://` asks for message types it does not know.
pub fn set_local_resolver(resolver: Arc<LocalResolver>) {
    local().write().unwrap_or_else(|e| e.into_inner()).resolver = Some(resolver);
}

fn local_pool(message_type: &str) -> Result<DescriptorPool> {
    let (pool, resolver) = {
        let guard = local().read().unwrap_or_else(|e| e.into_inner());
        (guard.pool.clone(), guard.resolver.clone())
    };
    if pool.get_message_by_name(message_type).is_some() {
        return Ok(pool);
    }
    // Ask without holding the lock: the resolver may take the GIL.
    if let Some(resolver) = resolver {
        if let Some(set) = resolver(message_type)? {
            register_local_descriptors(&set)?;
        }
    }
    Ok(local()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .pool
        .clone())
}

fn pool_for(source: &[u8], message_type: &str) -> Result<DescriptorPool> {
    if source == LOCAL.as_bytes() {
        return local_pool(message_type);
    }
    let decode = |bytes: &[u8]| DescriptorPool::decode(bytes);
    let load_error = |e: prost_reflect::DescriptorError| {
        Error::invalid_argument(format!("Failed to load FileDescriptorProto: {e}"))
    };
    if let Ok(path) = std::str::from_utf8(source) {
        if !path.is_empty() && std::path::Path::new(path).is_file() {
            let bytes = std::fs::read(path)
                .map_err(|e| Error::io(&e, format!("reading descriptor_source {path}: {e}")))?;
            if prost_reflect::prost::Message::decode(bytes.as_slice())
                .map(|_: prost_reflect::prost_types::FileDescriptorSet| ())
                .is_err()
            {
                return Err(Error::invalid_argument(format!(
                    "descriptor_source contains invalid FileDescriptorSet: {path}"
                )));
            }
            return decode(&bytes).map_err(load_error);
        }
    }
    let not_a_set = || {
        Error::invalid_argument(format!(
            "Source does not represent serialized file descriptor set proto. This may be due to a \
             missing dependency on the file containing REGISTER_DESCRIPTOR_POOL(\"{}\", ...);",
            String::from_utf8_lossy(source)
        ))
    };
    let set = source.strip_prefix(b"bytes://").ok_or_else(not_a_set)?;
    let parsed: std::result::Result<prost_reflect::prost_types::FileDescriptorSet, _> =
        prost_reflect::prost::Message::decode(set);
    if parsed.is_err() {
        return Err(not_a_set());
    }
    decode(set).map_err(load_error)
}
