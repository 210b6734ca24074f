//! The protobuf wire format as TensorFlow's DecodeProtoV2 and EncodeProto
//! kernels read and write it.
//!
//! Decoding makes TensorFlow's two passes over each serialized message: one
//! counts every requested field (the `sizes` output, and each output's last
//! dimension), one reads the values into the outputs and pads them with the
//! field's default. Both follow TensorFlow's rules, quirks included: a
//! singular field keeps the last value on the wire (a submessage too, whole,
//! not merged), values whose wire type does not fit the schema are skipped,
//! a group is kept with its start and end tags, a packed `int32` read into
//! `int64` is not sign-extended, and a packed run given for a singular field
//! is counted but leaves the default.

use ferroflow_tensor::{DType, Error, Result, Tensor};

use super::schema::{Default, Field, FieldType};

/// How deep groups may nest inside one another (protobuf's default recursion limit).
const RECURSION_LIMIT: u32 = 100;

fn data_loss(msg: impl std::fmt::Display) -> Error {
    Error::data_loss(msg)
}

/// A cursor over one serialized message.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The last `read_tag` returned 0 because the input ended there.
    clean_end: bool,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            clean_end: false,
        }
    }

    /// A varint of at most ten bytes (bits past 64 are dropped, as protobuf does).
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            v |= ((b & 0x7f) as u64).checked_shl(7 * i).unwrap_or(0);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    fn varint32(&mut self) -> Option<u32> {
        self.varint().map(|v| v as u32)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N).map(|s| s.try_into().expect("N bytes"))
    }

    /// The next tag, 0 at the end of the input or on a malformed tag.
    fn read_tag(&mut self) -> u32 {
        if self.pos >= self.buf.len() {
            self.clean_end = true;
            return 0;
        }
        self.clean_end = false;
        self.varint32().unwrap_or(0)
    }

    /// A length for a packed run (fails past `i32::MAX`, as protobuf does).
    fn size(&mut self) -> Option<usize> {
        let v = self.varint()?;
        (v <= i32::MAX as u64).then_some(v as usize)
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn make_tag(number: u32, wire: u32) -> u32 {
    number << 3 | wire
}

/// Skips one field whose tag was just read, copying it (canonically
/// re-encoded, as protobuf's `WireFormatLite::SkipField` does) into `out`.
/// Returns false on malformed input.
fn skip_field(r: &mut Reader<'_>, tag: u32, mut out: Option<&mut Vec<u8>>, depth: u32) -> bool {
    if tag >> 3 == 0 {
        return false;
    }
    let emit = |out: &mut Option<&mut Vec<u8>>, bytes: &[u8]| {
        if let Some(o) = out.as_deref_mut() {
            o.extend_from_slice(bytes);
        }
    };
    let tag_bytes = {
        let mut t = Vec::with_capacity(5);
        put_varint(&mut t, tag as u64);
        t
    };
    match tag & 7 {
        0 => {
            let Some(v) = r.varint() else { return false };
            emit(&mut out, &tag_bytes);
            if let Some(o) = out.as_deref_mut() {
                put_varint(o, v);
            }
            true
        }
        1 => match r.take(8) {
            Some(s) => {
                emit(&mut out, &tag_bytes);
                emit(&mut out, s);
                true
            }
            None => false,
        },
        2 => {
            let Some(len) = r.varint32() else {
                return false;
            };
            let Some(s) = (len <= i32::MAX as u32)
                .then(|| r.take(len as usize))
                .flatten()
            else {
                return false;
            };
            emit(&mut out, &tag_bytes);
            if let Some(o) = out.as_deref_mut() {
                put_varint(o, len as u64);
            }
            emit(&mut out, s);
            true
        }
        3 => {
            emit(&mut out, &tag_bytes);
            if depth >= RECURSION_LIMIT {
                return false;
            }
            // The fields inside, up to the end tag (or the end of the input).
            let last = loop {
                let t = r.read_tag();
                if t == 0 {
                    break 0;
                }
                if t & 7 == 4 {
                    let mut b = Vec::with_capacity(5);
                    put_varint(&mut b, t as u64);
                    emit(&mut out, &b);
                    break t;
                }
                if !skip_field(r, t, out.as_deref_mut(), depth + 1) {
                    return false;
                }
            };
            last == make_tag(tag >> 3, 4)
        }
        5 => match r.take(4) {
            Some(s) => {
                emit(&mut out, &tag_bytes);
                emit(&mut out, s);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// What the two passes do with the values of the requested fields.
trait Collector {
    fn value(&mut self, r: &mut Reader<'_>, field: &Field) -> Result<()>;
    fn packed(&mut self, r: &mut Reader<'_>, field: &Field, len: usize) -> Result<()>;
}

/// The requested fields by number: for each distinct number, the first
/// field (in the caller's order) that asked for it. Later requests of the
/// same field get no values, as in TensorFlow.
pub(crate) struct Lookup {
    by_number: Vec<(u32, usize)>,
}

impl Lookup {
    pub(crate) fn new(fields: &[Field]) -> Self {
        let mut by_number: Vec<(u32, usize)> = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if !by_number.iter().any(|&(n, _)| n == f.number) {
                by_number.push((f.number, i));
            }
        }
        by_number.sort_unstable();
        Lookup { by_number }
    }

    fn get(&self, number: u32) -> Option<usize> {
        self.by_number
            .binary_search_by_key(&number, |&(n, _)| n)
            .ok()
            .map(|i| self.by_number[i].1)
    }
}

/// Walks one message, handing each requested field's values to `collectors`
/// (indexed like `fields`) and skipping everything else. `what` names the
/// pass in the error for trailing garbage.
fn collect<C: Collector>(
    buf: &[u8],
    fields: &[Field],
    lookup: &Lookup,
    collectors: &mut [C],
    what: &str,
) -> Result<()> {
    let mut r = Reader::new(buf);
    loop {
        let tag = r.read_tag();
        if tag == 0 || tag & 7 == 4 {
            break;
        }
        let Some(fi) = lookup.get(tag >> 3) else {
            if !skip_field(&mut r, tag, None, 0) {
                return Err(data_loss("Failed skipping unrequested field"));
            }
            continue;
        };
        let field = &fields[fi];
        let wire = tag & 7;
        let schema_wire = field.ty.wire_type();
        if wire == 2 && schema_wire != 2 {
            let len = r
                .size()
                .ok_or_else(|| data_loss("CollectField: Failed reading packed size"))?;
            collectors[fi].packed(&mut r, field, len)?;
        } else if wire != schema_wire {
            if !skip_field(&mut r, make_tag(field.number, wire), None, 0) {
                return Err(data_loss("CollectField: Failed skipping malformed field"));
            }
        } else {
            collectors[fi].value(&mut r, field)?;
        }
    }
    if !r.clean_end {
        return Err(data_loss(format!(
            "{what}: Failed to consume entire buffer"
        )));
    }
    Ok(())
}

/// The first pass: how many values each field has.
struct Counter {
    count: i32,
}

impl Counter {
    fn skip_value(r: &mut Reader<'_>, field: &Field) -> bool {
        use FieldType::*;
        match field.ty {
            Double | Fixed64 | Sfixed64 => r.take(8).is_some(),
            Float | Fixed32 | Sfixed32 => r.take(4).is_some(),
            Int64 | Uint64 | Int32 | Bool | Uint32 | Enum | Sint32 | Sint64 => r.varint().is_some(),
            String | Message | Bytes => match r.varint32() {
                Some(len) if len <= i32::MAX as u32 => r.take(len as usize).is_some(),
                _ => false,
            },
            Group => skip_field(r, make_tag(field.number, 3), None, 0),
        }
    }
}

impl Collector for Counter {
    fn value(&mut self, r: &mut Reader<'_>, field: &Field) -> Result<()> {
        if self.count == 0 || field.repeated {
            self.count += 1;
        }
        if !Self::skip_value(r, field) {
            return Err(data_loss("ReadValue: Failed skipping field when counting"));
        }
        Ok(())
    }

    fn packed(&mut self, r: &mut Reader<'_>, field: &Field, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let buf = r
            .take(len)
            .ok_or_else(|| data_loss("ReadPackedValues: Skipping packed field failed"))?;
        use FieldType::*;
        let n = match field.ty {
            Double | Fixed64 | Sfixed64 | Float | Fixed32 | Sfixed32 => {
                let size = if field.ty.wire_type() == 1 { 8 } else { 4 };
                if !len.is_multiple_of(size) {
                    return Err(data_loss(format!(
                        "Illegal data length for packed fixed-size type: {len}"
                    )));
                }
                len / size
            }
            String | Group | Message | Bytes => {
                let name = match field.ty {
                    String => "TYPE_STRING",
                    Group => "TYPE_GROUP",
                    Message => "TYPE_MESSAGE",
                    _ => "TYPE_BYTES",
                };
                return Err(data_loss(format!("{name} encountered as packed")));
            }
            _ => {
                if buf[len - 1] & 0x80 != 0 {
                    return Err(data_loss("Corrupt packed varint"));
                }
                let mut p = Reader::new(buf);
                let mut n = 0;
                while p.pos < len {
                    p.varint()
                        .ok_or_else(|| data_loss("Corrupt packed varint"))?;
                    n += 1;
                }
                n
            }
        };
        self.count = self.count.saturating_add(n.min(i32::MAX as usize) as i32);
        if !field.repeated && self.count > 1 {
            self.count = 1;
        }
        Ok(())
    }
}

/// A decode output's values, `max` slots per message.
pub(crate) enum Column {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    Str(Vec<Vec<u8>>),
}

impl Column {
    fn new(dtype: DType, n: usize) -> Column {
        match dtype {
            DType::Float32 => Column::F32(vec![0.0; n]),
            DType::Float64 => Column::F64(vec![0.0; n]),
            DType::Int32 => Column::I32(vec![0; n]),
            DType::Int64 => Column::I64(vec![0; n]),
            DType::UInt32 => Column::U32(vec![0; n]),
            DType::UInt64 => Column::U64(vec![0; n]),
            DType::Bool => Column::Bool(vec![false; n]),
            _ => Column::Str(vec![Vec::new(); n]),
        }
    }

    pub(crate) fn into_tensor(self, shape: Vec<usize>) -> Result<Tensor> {
        match self {
            Column::F32(v) => Tensor::from_vec(shape, v),
            Column::F64(v) => Tensor::from_vec(shape, v),
            Column::I32(v) => Tensor::from_vec(shape, v),
            Column::I64(v) => Tensor::from_vec(shape, v),
            Column::U32(v) => Tensor::from_vec(shape, v),
            Column::U64(v) => Tensor::from_vec(shape, v),
            Column::Bool(v) => Tensor::from_vec(shape, v),
            Column::Str(v) => Tensor::from_vec(shape, v),
        }
    }
}

/// One decoded scalar before it is stored in its column.
enum Scalar {
    F64(f64),
    I64(i64),
    Bool(bool),
}

/// The second pass for one field of one message: stores values at `base`
/// onwards in the column, then pads to `max` with the default.
struct Filler<'c> {
    column: &'c mut Column,
    base: usize,
    max: usize,
    next: usize,
    default: &'c Default,
}

impl Filler<'_> {
    fn store(&mut self, index: usize, field: &Field, v: Scalar) -> Result<()> {
        if index >= self.max {
            return Err(data_loss(format!(
                "ReadPackedValues: Tried to write more entries than allowed.  Field tag: {}, Max entries allowed: {}",
                field.number, self.max
            )));
        }
        let i = self.base + index;
        match (&mut *self.column, v) {
            (Column::F32(c), Scalar::F64(x)) => c[i] = x as f32,
            (Column::F64(c), Scalar::F64(x)) => c[i] = x,
            (Column::I32(c), Scalar::I64(x)) => c[i] = x as i32,
            (Column::I64(c), Scalar::I64(x)) => c[i] = x,
            // (Unsigned values travel as their bits in an i64.)
            (Column::U32(c), Scalar::I64(x)) => c[i] = x as u32,
            (Column::U64(c), Scalar::I64(x)) => c[i] = x as u64,
            (Column::Bool(c), Scalar::Bool(x)) => c[i] = x,
            _ => {
                return Err(Error::internal(
                    "decode_proto: value and output type disagree",
                ))
            }
        }
        Ok(())
    }

    fn store_bytes(&mut self, index: usize, field: &Field, v: Vec<u8>) -> Result<()> {
        match &mut *self.column {
            Column::Str(c) if index < self.max => {
                c[self.base + index] = v;
                Ok(())
            }
            _ => Err(data_loss(format!(
                "Failed reading bytes of field {}",
                field.number
            ))),
        }
    }

    fn fill_defaults(&mut self) {
        let range = self.base + self.next.min(self.max)..self.base + self.max;
        match (&mut *self.column, self.default) {
            (Column::F32(c), Default::F32(d)) => c[range].fill(*d),
            (Column::F64(c), Default::F64(d)) => c[range].fill(*d),
            (Column::I32(c), Default::I32(d)) => c[range].fill(*d),
            (Column::I64(c), Default::I64(d)) => c[range].fill(*d),
            (Column::U32(c), Default::U32(d)) => c[range].fill(*d),
            (Column::U64(c), Default::U64(d)) => c[range].fill(*d),
            (Column::Bool(c), Default::Bool(d)) => c[range].fill(*d),
            (Column::Str(c), Default::Str(d)) => c[range].iter_mut().for_each(|s| s.clone_from(d)),
            _ => {}
        }
    }
}

/// Reads one unpacked value of `field` (TensorFlow's `ReadPrimitive`).
fn read_scalar(r: &mut Reader<'_>, field: &Field) -> Option<Scalar> {
    use FieldType::*;
    Some(match field.ty {
        Double => Scalar::F64(f64::from_le_bytes(r.fixed::<8>()?)),
        Float => Scalar::F64(f32::from_le_bytes(r.fixed::<4>()?) as f64),
        Int64 | Uint64 => Scalar::I64(r.varint()? as i64),
        Int32 | Enum => Scalar::I64(r.varint32()? as i32 as i64),
        // Zero-extended: a uint32 field read into a uint64 output.
        Uint32 => Scalar::I64(r.varint32()? as i64),
        Sint32 => Scalar::I64(zigzag32(r.varint32()?) as i64),
        Sint64 => Scalar::I64(zigzag64(r.varint()?)),
        Fixed64 | Sfixed64 => Scalar::I64(i64::from_le_bytes(r.fixed::<8>()?)),
        Fixed32 => Scalar::I64(u32::from_le_bytes(r.fixed::<4>()?) as i64),
        Sfixed32 => Scalar::I64(i32::from_le_bytes(r.fixed::<4>()?) as i64),
        Bool => Scalar::Bool(r.varint()? != 0),
        String | Bytes | Message | Group => return None,
    })
}

/// Reads one value of a packed run (TensorFlow's `ReadFromArray`, which
/// differs from the unpacked reads in one place: `int32` into `int64` is
/// zero-extended).
fn read_packed_scalar(r: &mut Reader<'_>, field: &Field) -> Option<Scalar> {
    if field.ty == FieldType::Int32 && field.dtype == DType::Int64 {
        return Some(Scalar::I64(r.varint32()? as i64));
    }
    read_scalar(r, field)
}

fn zigzag32(v: u32) -> i32 {
    (v >> 1) as i32 ^ -((v & 1) as i32)
}

fn zigzag64(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

impl Collector for Filler<'_> {
    fn value(&mut self, r: &mut Reader<'_>, field: &Field) -> Result<()> {
        let index = if field.repeated { self.next } else { 0 };
        self.next = index + 1;
        match field.ty {
            FieldType::String | FieldType::Bytes | FieldType::Message => {
                let bytes = r
                    .varint32()
                    .filter(|&n| n <= i32::MAX as u32)
                    .and_then(|n| r.take(n as usize))
                    .ok_or_else(|| data_loss("Failed reading bytes"))?;
                self.store_bytes(index, field, bytes.to_vec())
            }
            FieldType::Group => {
                let mut out = Vec::new();
                if !skip_field(r, make_tag(field.number, 3), Some(&mut out), 0) {
                    return Err(data_loss("Failed reading group"));
                }
                self.store_bytes(index, field, out)
            }
            _ => {
                let v =
                    read_scalar(r, field).ok_or_else(|| data_loss("Failed reading primitive"))?;
                self.store(index, field, v)
            }
        }
    }

    fn packed(&mut self, r: &mut Reader<'_>, field: &Field, len: usize) -> Result<()> {
        let buf = r.take(len).ok_or_else(|| {
            data_loss(format!(
                "ReadPackedValues: Skipping packed field failed.  Field tag: {}",
                field.number
            ))
        })?;
        if self.next >= self.max {
            return Err(data_loss(format!(
                "ReadPackedValues: Tried to write more entries than allowed.  Field tag: {}, Max entries allowed: {}",
                field.number, self.max
            )));
        }
        if matches!(
            field.ty,
            FieldType::String | FieldType::Group | FieldType::Message | FieldType::Bytes
        ) {
            return Err(data_loss("Non-primitive type encountered as packed"));
        }
        // A singular field's values all land on one slot, and (as in
        // TensorFlow) do not count as read, so the default fills it.
        let stride = usize::from(field.repeated);
        let mut p = Reader::new(buf);
        let mut count = 0;
        while p.pos < len {
            let v = read_packed_scalar(&mut p, field)
                .ok_or_else(|| data_loss("Corrupt packed varint"))?;
            self.store(self.next + count, field, v)?;
            count += stride;
        }
        self.next += count;
        Ok(())
    }
}

/// Counts each field's values in one message (the `sizes` row).
pub(crate) fn count(buf: &[u8], fields: &[Field], lookup: &Lookup) -> Result<Vec<i32>> {
    let mut counters: Vec<Counter> = fields.iter().map(|_| Counter { count: 0 }).collect();
    collect(buf, fields, lookup, &mut counters, "CountFields")?;
    Ok(counters.into_iter().map(|c| c.count).collect())
}

/// Decodes a batch of serialized messages: the `sizes` values (row-major,
/// one row per message) and one column per field with `max[i]` slots per message.
pub(crate) fn decode_batch(
    bufs: &[&[u8]],
    fields: &[Field],
) -> Result<(Vec<i32>, Vec<usize>, Vec<Column>)> {
    let lookup = Lookup::new(fields);
    let nf = fields.len();
    let mut sizes = Vec::with_capacity(bufs.len() * nf);
    let mut max = vec![1usize; nf];
    for buf in bufs {
        let row = count(buf, fields, &lookup)?;
        for (m, &c) in max.iter_mut().zip(&row) {
            *m = (*m).max(c as usize);
        }
        sizes.extend(row);
    }
    let mut columns: Vec<Column> = fields
        .iter()
        .zip(&max)
        .map(|(f, &m)| Column::new(f.dtype, m * bufs.len()))
        .collect();
    for (mi, buf) in bufs.iter().enumerate() {
        let mut fillers: Vec<Filler<'_>> = columns
            .iter_mut()
            .zip(fields)
            .zip(&max)
            .map(|((column, f), &m)| Filler {
                column,
                base: mi * m,
                max: m,
                next: 0,
                default: &f.default,
            })
            .collect();
        collect(buf, fields, &lookup, &mut fillers, "AccumulateFields")?;
        for f in &mut fillers {
            f.fill_defaults();
        }
    }
    Ok((sizes, max, columns))
}

/// The values of one encode input, read as the field's wire form wants them.
pub(crate) enum Values<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    Bool(&'a [bool]),
    Str(&'a [Vec<u8>]),
}

impl Values<'_> {
    fn int(&self, i: usize) -> i64 {
        match self {
            Values::I32(v) => v[i] as i64,
            Values::I64(v) => v[i],
            Values::U32(v) => v[i] as i64,
            // The bits: every write below keeps the low 64 (or 32) of them.
            Values::U64(v) => v[i] as i64,
            Values::Bool(v) => v[i] as i64,
            Values::F32(v) => v[i] as i64,
            Values::F64(v) => v[i] as i64,
            Values::Str(_) => 0,
        }
    }

    fn float(&self, i: usize) -> f64 {
        match self {
            Values::F32(v) => v[i] as f64,
            Values::F64(v) => v[i],
            _ => self.int(i) as f64,
        }
    }
}

/// Writes one value without its tag.
fn put_scalar(out: &mut Vec<u8>, ty: FieldType, v: &Values<'_>, i: usize) {
    use FieldType::*;
    match ty {
        Double => out.extend_from_slice(&v.float(i).to_le_bytes()),
        Float => out.extend_from_slice(&(v.float(i) as f32).to_le_bytes()),
        Int64 | Uint64 => put_varint(out, v.int(i) as u64),
        // int32 and enum values are sign-extended to ten bytes when negative.
        Int32 | Enum => put_varint(out, v.int(i) as i32 as i64 as u64),
        Uint32 => put_varint(out, v.int(i) as u32 as u64),
        Sint32 => {
            let x = v.int(i) as i32;
            put_varint(out, ((x << 1) ^ (x >> 31)) as u32 as u64)
        }
        Sint64 => {
            let x = v.int(i);
            put_varint(out, ((x << 1) ^ (x >> 63)) as u64)
        }
        Fixed64 | Sfixed64 => out.extend_from_slice(&v.int(i).to_le_bytes()),
        Fixed32 | Sfixed32 => out.extend_from_slice(&(v.int(i) as i32).to_le_bytes()),
        Bool => out.push(u8::from(v.int(i) != 0)),
        String | Bytes | Message | Group => {}
    }
}

/// Appends `size` values (from `offset` in `values`) of `field` to `out`.
/// A negative size writes nothing, or an empty run for a packed field (as
/// TensorFlow does).
pub(crate) fn write_field(
    out: &mut Vec<u8>,
    field: &Field,
    values: &Values<'_>,
    offset: usize,
    size: i32,
) {
    let n = size.max(0) as usize;
    let tag = |out: &mut Vec<u8>, wire: u32| put_varint(out, make_tag(field.number, wire) as u64);
    match (field.ty, values) {
        (FieldType::Group, Values::Str(v)) => {
            for s in &v[offset..offset + n] {
                tag(out, 3);
                out.extend_from_slice(s);
                tag(out, 4);
            }
        }
        (FieldType::String | FieldType::Bytes | FieldType::Message, Values::Str(v)) => {
            for s in &v[offset..offset + n] {
                tag(out, 2);
                put_varint(out, s.len() as u64);
                out.extend_from_slice(s);
            }
        }
        (ty, _) if field.packed => {
            let mut run = Vec::new();
            for i in offset..offset + n {
                put_scalar(&mut run, ty, values, i);
            }
            tag(out, 2);
            put_varint(out, run.len() as u64);
            out.extend_from_slice(&run);
        }
        (ty, _) => {
            for i in offset..offset + n {
                tag(out, ty.wire_type());
                put_scalar(out, ty, values, i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u32, ty: FieldType, repeated: bool, dtype: DType, default: Default) -> Field {
        Field {
            name: format!("f{number}"),
            number,
            ty,
            repeated,
            packed: false,
            dtype,
            default,
        }
    }

    #[test]
    fn varints_and_zigzag() {
        let mut out = Vec::new();
        put_varint(&mut out, u64::MAX);
        assert_eq!(out.len(), 10);
        assert_eq!(Reader::new(&out).varint(), Some(u64::MAX));
        assert_eq!(Reader::new(&[0x80; 11]).varint(), None);
        assert_eq!(zigzag32(1), -1);
        assert_eq!(zigzag32(4), 2);
        assert_eq!(zigzag64(u64::MAX), i64::MIN);
    }

    #[test]
    fn singular_keeps_last_and_repeated_pads() {
        let fields = [
            field(1, FieldType::Int32, false, DType::Int32, Default::I32(-5)),
            field(2, FieldType::Sint64, true, DType::Int64, Default::I64(0)),
        ];
        // f1 = 3, f2 = [-1], f1 = 4 ; second message empty.
        let msg = [0x08, 3, 0x10, 1, 0x08, 4];
        let (sizes, max, cols) = decode_batch(&[&msg, &[]], &fields).unwrap();
        assert_eq!(sizes, vec![1, 1, 0, 0]);
        assert_eq!(max, vec![1, 1]);
        match (&cols[0], &cols[1]) {
            (Column::I32(a), Column::I64(b)) => {
                assert_eq!(a, &vec![4, -5]);
                assert_eq!(b, &vec![-1, 0]);
            }
            _ => panic!("column types"),
        }
    }

    #[test]
    fn group_kept_with_its_tags_and_deep_nesting_refused() {
        let fields = [field(
            2,
            FieldType::Group,
            false,
            DType::String,
            Default::Str(vec![]),
        )];
        let msg = [0x13, 0x08, 0x01, 0x14];
        let (_, _, cols) = decode_batch(&[&msg], &fields).unwrap();
        match &cols[0] {
            Column::Str(s) => assert_eq!(s[0], msg.to_vec()),
            _ => panic!("column type"),
        }
        let mut deep = vec![0x1b; 200]; // start group 3, nested
        deep.extend(vec![0x1c; 200]);
        assert!(decode_batch(&[&deep], &fields).is_err());
    }
}
