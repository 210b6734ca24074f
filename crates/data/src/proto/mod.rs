//! `tf.io.decode_proto` and `tf.io.encode_proto` as TensorFlow's ops
//! `DecodeProtoV2` and `EncodeProto`: fields of any protobuf message to and
//! from tensors, given the message's description.
//!
//! The descriptions come from `descriptor_source` ([`schema`]): a file or
//! `bytes://` string holding a serialized `FileDescriptorSet`, or
//! `local://`, TensorFlow's name for the protos built into the binary. Here
//! that pool starts empty and learns message types on demand: a Rust program
//! adds sets with [`register_local_descriptors`], and the Python module
//! installs a [`set_local_resolver`] hook that finds a type among ferroflow's
//! TensorFlow protos and the protobuf classes Python has imported. The
//! graph's attribute stays `local://`, so exported graphs match TensorFlow's.
//!
//! Messages are read and written directly in the wire format ([`wire`]),
//! with TensorFlow's rules; `prost-reflect` supplies the descriptor pool and,
//! for `message_format="text"` and `sanitize=True`, parses a message and
//! serializes it again before the wire pass, as TensorFlow does.

mod schema;
pub mod wire;

use ferroflow_graph::{AttrValue, Attrs, AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{DType, Error, Result, Tensor};
use prost_reflect::{prost::Message as _, DynamicMessage, MessageDescriptor};

pub use schema::{register_local_descriptors, set_local_resolver, LocalResolver, LOCAL};
use schema::{Field, Schema};
use wire::Values;

/// Neither op has a gradient (TensorFlow's `ops.NotDifferentiable` for both);
/// the facade registers them with the gradient registry.
pub const NOT_DIFFERENTIABLE: &[&str] = &["DecodeProtoV2", "EncodeProto"];

/// Registers both ops and their kernels (idempotent).
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

/// The graph-level definitions.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("DecodeProtoV2", &["bytes"], infer_decode),
        OpDef::new("EncodeProto", &["sizes", "values*"], infer_encode),
    ]
}

/// `sizes` is the input's shape plus one dimension of `len(field_names)`;
/// each value output adds an unknown last dimension (the most values any
/// message has for that field).
fn infer_decode(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let types = ctx.attrs.dtypes("output_types")?;
    let with_last = |last: Option<usize>| match ctx.shape(0).dims() {
        Some(d) => {
            let mut d = d.to_vec();
            d.push(last);
            PartialShape::from_dims(d)
        }
        None => PartialShape::unknown(),
    };
    let mut out = vec![OutputInfo::new(DType::Int32, with_last(Some(types.len())))];
    out.extend(types.iter().map(|&t| OutputInfo::new(t, with_last(None))));
    Ok(out)
}

/// The serialized messages have the values' shape without its last
/// dimension; every value must be at least a matrix.
fn infer_encode(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let mut shape = PartialShape::unknown();
    for i in 1..ctx.num_inputs() {
        let Some(dims) = ctx.shape(i).dims() else {
            continue;
        };
        if dims.len() < 2 {
            return Err(ctx.shape_error(format!(
                "Shape must be at least rank 2 but is rank {} (input 'values' {})",
                dims.len(),
                i - 1
            )));
        }
        let prefix = PartialShape::from_dims(dims[..dims.len() - 1].to_vec());
        shape = shape.merge(&prefix).ok_or_else(|| {
            ctx.shape_error("Dimensions of the values must be equal up to the last dimension")
        })?;
    }
    Ok(vec![OutputInfo::new(DType::String, shape)])
}

fn bytes_attr(a: &Attrs, name: &str, default: &str) -> Result<Vec<u8>> {
    match a.get(name) {
        None => Ok(default.as_bytes().to_vec()),
        Some(AttrValue::Str(v)) => Ok(v.clone()),
        Some(_) => Err(Error::invalid_argument(format!(
            "attribute '{name}' must be a string"
        ))),
    }
}

fn names_attr(a: &Attrs) -> Result<Vec<String>> {
    Ok(crate::parse::str_list(a, "field_names")?
        .into_iter()
        .map(|n| String::from_utf8_lossy(&n).into_owned())
        .collect())
}

/// DecodeProtoV2's kernel, also usable on its own: reads fields out of
/// serialized messages the way `tf.io.decode_proto` does.
pub struct ProtoDecoder {
    fields: Vec<Field>,
    /// The message type when inputs are parsed and serialized again first
    /// (text format, or `sanitize`).
    reserialize: Option<(MessageDescriptor, bool)>,
}

impl ProtoDecoder {
    /// Looks the message and fields up and checks the output types (the
    /// errors TensorFlow gives when it builds the kernel).
    pub fn new(
        descriptor_source: &[u8],
        message_type: &str,
        field_names: &[String],
        output_types: &[DType],
        message_format: &str,
        sanitize: bool,
    ) -> Result<ProtoDecoder> {
        let schema = Schema::load(descriptor_source, message_type)?;
        let fields = schema.decode_fields(field_names, output_types)?;
        if message_format != "binary" && message_format != "text" {
            return Err(Error::invalid_argument(
                "format must be one of binary or text",
            ));
        }
        let text = message_format == "text";
        Ok(ProtoDecoder {
            fields,
            reserialize: (text || sanitize).then(|| (schema.message.clone(), text)),
        })
    }

    fn from_attrs(a: &Attrs) -> Result<ProtoDecoder> {
        ProtoDecoder::new(
            &bytes_attr(a, "descriptor_source", LOCAL)?,
            &a.string("message_type")?,
            &names_attr(a)?,
            &a.dtypes("output_types")?,
            &a.str_or("message_format", "binary")?,
            a.bool_or("sanitize", false)?,
        )
    }

    /// Decodes a batch of messages of shape `batch_shape`: the `sizes`
    /// tensor and one tensor per field.
    pub fn decode(&self, bufs: &[&[u8]], batch_shape: &[usize]) -> Result<(Tensor, Vec<Tensor>)> {
        if bufs.is_empty() {
            return Err(Error::invalid_argument(
                "Bufs argument must contain at least one value",
            ));
        }
        let owned: Vec<Vec<u8>>;
        let views: Vec<&[u8]> = match &self.reserialize {
            None => bufs.to_vec(),
            Some((desc, text)) => {
                owned = bufs
                    .iter()
                    .map(|b| reserialize(desc, b, *text))
                    .collect::<Result<_>>()?;
                owned.iter().map(Vec::as_slice).collect()
            }
        };
        let (sizes, max, columns) = wire::decode_batch(&views, &self.fields)?;
        let mut sizes_shape = batch_shape.to_vec();
        sizes_shape.push(self.fields.len());
        let values = columns
            .into_iter()
            .zip(max)
            .map(|(column, m)| {
                let mut s = batch_shape.to_vec();
                s.push(m);
                column.into_tensor(s)
            })
            .collect::<Result<_>>()?;
        Ok((Tensor::from_vec(sizes_shape, sizes)?, values))
    }

    fn run(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let input = ctx.input(0)?;
        let shape = input.shape().dims().to_vec();
        let bufs: Vec<&[u8]> = crate::parse::strings(input, "bytes")?
            .iter()
            .map(Vec::as_slice)
            .collect();
        let (sizes, values) = self.decode(&bufs, &shape)?;
        ctx.output(sizes);
        for v in values {
            ctx.output(v);
        }
        Ok(())
    }
}

/// Parses one message (text or binary) and serializes it in binary.
fn reserialize(desc: &MessageDescriptor, buf: &[u8], text: bool) -> Result<Vec<u8>> {
    let message = if text {
        std::str::from_utf8(buf)
            .ok()
            .and_then(|s| parse_text(desc, s))
            .ok_or_else(|| Error::data_loss("Unable to parse text protobuf"))?
    } else {
        DynamicMessage::decode(desc.clone(), buf)
            .map_err(|_| Error::data_loss("Unable to parse binary protobuf"))?
    };
    Ok(message.encode_to_vec())
}

/// Parses a text-format message. protobuf's C++ parser (TensorFlow's) also
/// takes a group field by its field name (`mygroup { ... }`) where the text
/// format names it by its type (`MyGroup { ... }`), which prost-reflect
/// insists on: when a parse fails and the schema has groups, it is retried
/// with those field names written as their type names.
fn parse_text(desc: &MessageDescriptor, text: &str) -> Option<DynamicMessage> {
    if let Ok(m) = DynamicMessage::parse_text_format(desc.clone(), text) {
        return Some(m);
    }
    let groups = group_names(desc);
    if groups.is_empty() {
        return None;
    }
    DynamicMessage::parse_text_format(desc.clone(), &rename_fields(text, &groups)).ok()
}

/// Group fields reachable from `desc`: (field name, type name) where they differ.
fn group_names(desc: &MessageDescriptor) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut seen = vec![desc.full_name().to_string()];
    let mut todo = vec![desc.clone()];
    while let Some(m) = todo.pop() {
        for f in m.fields() {
            if let prost_reflect::Kind::Message(sub) = f.kind() {
                if f.is_group() && f.name() != sub.name() {
                    out.push((f.name().to_string(), sub.name().to_string()));
                }
                if !seen.iter().any(|n| n == sub.full_name()) {
                    seen.push(sub.full_name().to_string());
                    todo.push(sub);
                }
            }
        }
    }
    out
}

/// `text` with each field-name token (an identifier followed by `{`, `<` or
/// `:`, outside strings and comments) found in `names` replaced.
fn rename_fields(text: &str, names: &[(String, String)]) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push_str(&text[start..i]);
        } else if c == b'#' {
            let start = i;
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            out.push_str(&text[start..i]);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            let next = b[i..].iter().find(|x| !x.is_ascii_whitespace());
            let after_dot = start > 0 && b[start - 1] == b'.';
            match names.iter().find(|(n, _)| n == word) {
                Some((_, ty)) if !after_dot && matches!(next, Some(b'{' | b'<' | b':')) => {
                    out.push_str(ty)
                }
                _ => out.push_str(word),
            }
        } else {
            let ch = text[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// A built EncodeProto kernel.
struct Encoder {
    fields: Vec<Field>,
    /// Indices into `fields` by ascending field number: the order written.
    order: Vec<usize>,
}

impl Encoder {
    fn new(a: &Attrs) -> Result<Encoder> {
        let source = bytes_attr(a, "descriptor_source", LOCAL)?;
        let message_type = a.string("message_type")?;
        let schema = Schema::load(&source, &message_type)?;
        let fields = schema.encode_fields(&names_attr(a)?)?;
        let mut order: Vec<usize> = (0..fields.len()).collect();
        order.sort_by_key(|&i| fields[i].number);
        Ok(Encoder { fields, order })
    }

    fn run(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let nf = self.fields.len();
        if ctx.num_inputs() != nf + 1 {
            return Err(Error::invalid_argument(
                "Length of inputs list must match field_names",
            ));
        }
        let sizes_t = ctx.input(0)?;
        let mut prefix: Vec<usize> = Vec::new();
        let mut widths = Vec::with_capacity(nf);
        let mut values = Vec::with_capacity(nf);
        for (i, field) in self.fields.iter().enumerate() {
            let v = ctx.input(i + 1)?;
            if !field.ty.dtypes().contains(&v.dtype()) {
                return Err(Error::invalid_argument(format!(
                    "Incompatible type for field {}.  Saw dtype: {} but field type is: {}",
                    field.name,
                    schema::type_string(v.dtype()),
                    field.ty.type_name()
                )));
            }
            let dims = v.shape().dims();
            if dims.len() < 2 {
                return Err(Error::invalid_argument(format!(
                    "Invalid shape for field {}.  Saw shape {} but it should be at least a matrix.",
                    field.name,
                    v.shape()
                )));
            }
            let p = &dims[..dims.len() - 1];
            if i == 0 {
                prefix = p.to_vec();
            } else if p != prefix.as_slice() {
                return Err(Error::invalid_argument(
                    "Values must match up to the last dimension",
                ));
            }
            widths.push(dims[dims.len() - 1]);
            values.push(values_of(v, field)?);
        }
        let messages: usize = if nf == 0 { 0 } else { prefix.iter().product() };
        let mut expected = prefix.clone();
        expected.push(nf);
        if sizes_t.shape().dims() != expected.as_slice() {
            return Err(Error::invalid_argument(format!(
                "sizes should be batch_size + [len(field_names)].  Saw: {} but expected: {}",
                sizes_t.shape(),
                ferroflow_tensor::Shape::from(expected.clone())
            )));
        }
        let sizes = sizes_t.as_slice::<i32>().map_err(|_| {
            Error::invalid_argument(format!("sizes must be int32, got {}", sizes_t.dtype()))
        })?;
        for (i, &w) in widths.iter().enumerate() {
            for m in 0..messages {
                let s = sizes[m * nf + i];
                if s as i64 > w as i64 {
                    return Err(Error::invalid_argument(format!(
                        "Size to write must not be larger than value tensor; but saw: {s} > {w} at message {m} field {i}"
                    )));
                }
            }
        }
        let mut out = Vec::with_capacity(messages.max(1));
        for m in 0..messages {
            let mut buf = Vec::new();
            for &i in &self.order {
                let size = sizes[m * nf + i];
                if size == 0 {
                    continue;
                }
                wire::write_field(&mut buf, &self.fields[i], &values[i], m * widths[i], size);
            }
            out.push(buf);
        }
        if nf == 0 {
            out.push(Vec::new());
        }
        ctx.output(Tensor::from_vec(prefix, out)?);
        Ok(())
    }
}

fn values_of<'a>(t: &'a Tensor, field: &Field) -> Result<Values<'a>> {
    Ok(match t.dtype() {
        DType::Float32 => Values::F32(t.as_slice()?),
        DType::Float64 => Values::F64(t.as_slice()?),
        DType::Int32 => Values::I32(t.as_slice()?),
        DType::Int64 => Values::I64(t.as_slice()?),
        DType::UInt32 => Values::U32(t.as_slice()?),
        DType::UInt64 => Values::U64(t.as_slice()?),
        DType::Bool => Values::Bool(t.as_slice()?),
        DType::String => Values::Str(t.as_slice()?),
        d => {
            return Err(Error::invalid_argument(format!(
                "Incompatible type for field {}.  Saw dtype: {} but field type is: {}",
                field.name,
                schema::type_string(d),
                field.ty.type_name()
            )))
        }
    })
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "DecodeProtoV2",
            factory(|init| {
                let decoder = ProtoDecoder::from_attrs(&init.node.attrs)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| decoder.run(ctx)))
            }),
        ),
        (
            "EncodeProto",
            factory(|init| {
                let encoder = Encoder::new(&init.node.attrs)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| encoder.run(ctx)))
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_groups_by_field_name_are_renamed_outside_strings() {
        let names = vec![("fgroup".to_string(), "FGroup".to_string())];
        assert_eq!(
            rename_fields(
                "fgroup { g: 1 } s: \"fgroup {\" # fgroup {\nx.fgroup: fgroup",
                &names
            ),
            "FGroup { g: 1 } s: \"fgroup {\" # fgroup {\nx.fgroup: fgroup"
        );
    }

    #[test]
    fn text_format_group_by_field_name_decodes_like_its_type_name() {
        let mut source = b"bytes://".to_vec();
        source.extend_from_slice(include_bytes!(
            "../../../../tests/fixtures/proto_ops/test_messages.desc"
        ));
        let names = ["fgroup".to_string(), "f_int32".to_string()];
        let types = [DType::String, DType::Int32];
        let d = ProtoDecoder::new(
            &source,
            "ferroflow.test.AllTypes",
            &names,
            &types,
            "text",
            false,
        )
        .unwrap();
        let a: &[u8] = b"fgroup { g: 1 } f_int32: 3";
        let b: &[u8] = b"FGroup { g: 1 } f_int32: 3";
        let (sa, va) = d.decode(&[a], &[]).unwrap();
        let (sb, vb) = d.decode(&[b], &[]).unwrap();
        assert_eq!(sa.as_slice::<i32>().unwrap(), sb.as_slice::<i32>().unwrap());
        assert_eq!(
            va[0].as_slice::<Vec<u8>>().unwrap(),
            vb[0].as_slice::<Vec<u8>>().unwrap()
        );
        assert_eq!(
            va[0].as_slice::<Vec<u8>>().unwrap()[0],
            b"\x93\x01\x98\x01\x01\x94\x01"
        );
    }
}
