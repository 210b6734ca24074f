//! A small zero-copy reader of the protobuf wire format, for the messages
//! Example parsing reads (`Example`, `Features`, `Feature`, the value lists,
//! `SequenceExample`, `FeatureLists`, `FeatureList`).
//!
//! Nothing is allocated: length-delimited fields come back as sub-slices of
//! the input. Every read is bounds-checked and reports malformed bytes as
//! `Err(Malformed)`, never a panic.

/// The bytes are not a valid protobuf message of the expected shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed;

/// Result of a wire-format read.
pub type WireResult<T> = std::result::Result<T, Malformed>;

pub const VARINT: u8 = 0;
pub const FIXED64: u8 = 1;
pub const LEN: u8 = 2;
pub const FIXED32: u8 = 5;

/// A cursor over one message's bytes.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Reads a base-128 varint (at most 10 bytes).
    #[inline(always)]
    pub fn varint(&mut self) -> WireResult<u64> {
        // Tags and short lengths are one byte.
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                return Ok(u64::from(b));
            }
            None => return Err(Malformed),
            _ => {}
        }
        let mut out = 0u64;
        for i in 0..10 {
            let b = *self.buf.get(self.pos).ok_or(Malformed)?;
            self.pos += 1;
            out |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(out);
            }
        }
        Err(Malformed)
    }

    /// The next field's number and wire type, or `None` at the end.
    #[inline(always)]
    pub fn field(&mut self) -> WireResult<Option<(u32, u8)>> {
        if self.at_end() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let number = tag >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(Malformed);
        }
        Ok(Some((number as u32, (tag & 7) as u8)))
    }

    /// A length-delimited field's payload.
    #[inline(always)]
    pub fn bytes(&mut self) -> WireResult<&'a [u8]> {
        let len = usize::try_from(self.varint()?).map_err(|_| Malformed)?;
        let end = self.pos.checked_add(len).ok_or(Malformed)?;
        let out = self.buf.get(self.pos..end).ok_or(Malformed)?;
        self.pos = end;
        Ok(out)
    }

    fn take(&mut self, n: usize) -> WireResult<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(Malformed)?;
        let out = self.buf.get(self.pos..end).ok_or(Malformed)?;
        self.pos = end;
        Ok(out)
    }

    /// A fixed32 field's four bytes as a float.
    #[inline]
    pub fn fixed32_f32(&mut self) -> WireResult<f32> {
        let b = self.take(4)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Skips a field of wire type `wt` (groups are not valid here).
    pub fn skip(&mut self, wt: u8) -> WireResult<()> {
        match wt {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            LEN => self.bytes().map(drop),
            FIXED32 => self.take(4).map(drop),
            _ => Err(Malformed),
        }
    }
}

/// The kind of values a `Feature` holds (its `oneof kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No list set: an empty feature.
    Empty,
    Bytes,
    Float,
    Int64,
}

impl Kind {
    /// TensorFlow's name for the dtype of this kind (`DataTypeString`).
    pub fn dtype_name(self) -> &'static str {
        match self {
            Kind::Empty => "invalid",
            Kind::Bytes => "string",
            Kind::Float => "float",
            Kind::Int64 => "int64",
        }
    }
}

/// One `Feature` message: which list it holds and that list's bytes.
#[derive(Clone, Copy, Debug)]
pub struct FeatureRef<'a> {
    pub kind: Kind,
    /// The serialized `BytesList` / `FloatList` / `Int64List`.
    pub list: &'a [u8],
}

impl<'a> FeatureRef<'a> {
    /// Parses a serialized `Feature` (the last list set wins, as in protobuf's
    /// `oneof`).
    #[inline(always)]
    pub fn parse(buf: &'a [u8]) -> WireResult<FeatureRef<'a>> {
        // Fast path: one list field whose one- or two-byte length covers
        // the rest of the message.
        if let [tag @ (0x0a | 0x12 | 0x1a), rest @ ..] = buf {
            let list = match rest {
                [l, body @ ..] if *l < 0x80 && body.len() == *l as usize => Some(body),
                [l0, l1, body @ ..]
                    if *l0 >= 0x80
                        && *l1 < 0x80
                        && body.len() == ((*l0 & 0x7f) as usize | ((*l1 as usize) << 7)) =>
                {
                    Some(body)
                }
                _ => None,
            };
            if let Some(list) = list {
                let kind = match tag {
                    0x0a => Kind::Bytes,
                    0x12 => Kind::Float,
                    _ => Kind::Int64,
                };
                return Ok(FeatureRef { kind, list });
            }
        }
        let mut r = Reader::new(buf);
        let mut out = FeatureRef {
            kind: Kind::Empty,
            list: &[],
        };
        while let Some((field, wt)) = r.field()? {
            let kind = match (field, wt) {
                (1, LEN) => Kind::Bytes,
                (2, LEN) => Kind::Float,
                (3, LEN) => Kind::Int64,
                _ => {
                    r.skip(wt)?;
                    continue;
                }
            };
            out = FeatureRef {
                kind,
                list: r.bytes()?,
            };
        }
        Ok(out)
    }

    /// Number of values in the list (validating its framing).
    pub fn count(&self) -> WireResult<usize> {
        let mut n = 0usize;
        let mut r = Reader::new(self.list);
        while let Some((field, wt)) = r.field()? {
            match (self.kind, field, wt) {
                (Kind::Bytes, 1, LEN) => {
                    r.bytes()?;
                    n += 1;
                }
                (Kind::Float, 1, LEN) => {
                    let p = r.bytes()?;
                    if p.len() % 4 != 0 {
                        return Err(Malformed);
                    }
                    n += p.len() / 4;
                }
                (Kind::Float, 1, FIXED32) => {
                    r.fixed32_f32()?;
                    n += 1;
                }
                (Kind::Int64, 1, LEN) => {
                    let p = r.bytes()?;
                    // Every varint ends in exactly one byte below 0x80.
                    if p.last().is_some_and(|&b| b >= 0x80) {
                        return Err(Malformed);
                    }
                    n += p.iter().filter(|&&b| b < 0x80).count();
                }
                (Kind::Int64, 1, VARINT) => {
                    r.varint()?;
                    n += 1;
                }
                _ => r.skip(wt)?,
            }
        }
        Ok(n)
    }

    /// The payload when the list is exactly one packed field (`0A <len>
    /// payload`, a one-byte length), the usual encoding of numbers.
    #[inline]
    fn single_packed(&self) -> Option<&'a [u8]> {
        match self.list {
            [0x0a, l, body @ ..] if *l < 0x80 && body.len() == *l as usize => Some(body),
            _ => None,
        }
    }

    /// Calls `f` on each float of a `FloatList`.
    #[inline]
    pub fn for_each_f32(&self, mut f: impl FnMut(f32)) -> WireResult<()> {
        if let Some(p) = self.single_packed() {
            if p.len() % 4 != 0 {
                return Err(Malformed);
            }
            for c in p.chunks_exact(4) {
                f(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            }
            return Ok(());
        }
        let mut r = Reader::new(self.list);
        while let Some((field, wt)) = r.field()? {
            match (field, wt) {
                (1, LEN) => {
                    let p = r.bytes()?;
                    if p.len() % 4 != 0 {
                        return Err(Malformed);
                    }
                    for c in p.chunks_exact(4) {
                        f(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                    }
                }
                (1, FIXED32) => f(r.fixed32_f32()?),
                _ => r.skip(wt)?,
            }
        }
        Ok(())
    }

    /// Calls `f` on each value of an `Int64List`.
    #[inline]
    pub fn for_each_i64(&self, mut f: impl FnMut(i64)) -> WireResult<()> {
        if let Some(p) = self.single_packed() {
            let mut p = Reader::new(p);
            while !p.at_end() {
                f(p.varint()? as i64);
            }
            return Ok(());
        }
        let mut r = Reader::new(self.list);
        while let Some((field, wt)) = r.field()? {
            match (field, wt) {
                (1, LEN) => {
                    let mut p = Reader::new(r.bytes()?);
                    while !p.at_end() {
                        f(p.varint()? as i64);
                    }
                }
                (1, VARINT) => f(r.varint()? as i64),
                _ => r.skip(wt)?,
            }
        }
        Ok(())
    }

    /// Calls `f` on each value of a `BytesList`.
    #[inline]
    pub fn for_each_bytes(&self, mut f: impl FnMut(&'a [u8])) -> WireResult<()> {
        let mut r = Reader::new(self.list);
        while let Some((field, wt)) = r.field()? {
            match (field, wt) {
                (1, LEN) => f(r.bytes()?),
                _ => r.skip(wt)?,
            }
        }
        Ok(())
    }
}

/// Calls `f(key, feature_bytes)` for each entry of the `Features` maps
/// inside a serialized message whose field `outer` holds a `Features`
/// (`Example.features` is field 1, `SequenceExample.context` is field 1,
/// and `FeatureLists` entries are read with the same helper).
pub fn for_each_map_entry<'a>(
    msg: &'a [u8],
    outer: u32,
    mut f: impl FnMut(&'a [u8], &'a [u8]) -> WireResult<()>,
) -> WireResult<()> {
    let mut r = Reader::new(msg);
    while let Some((field, wt)) = r.field()? {
        if field != outer || wt != LEN {
            r.skip(wt)?;
            continue;
        }
        let mut m = Reader::new(r.bytes()?);
        while let Some((field, wt)) = m.field()? {
            if field != 1 || wt != LEN {
                m.skip(wt)?;
                continue;
            }
            let (key, value) = map_entry(m.bytes()?)?;
            f(key, value)?;
        }
    }
    Ok(())
}

/// A map entry's key (field 1) and value (field 2); absent ones are empty.
#[inline(always)]
fn map_entry(entry: &[u8]) -> WireResult<(&[u8], &[u8])> {
    // Fast path: `0A <key len> key 12 <value len> value`, each length one
    // byte, as every writer lays out a short key and a small feature.
    if let [0x0a, klen, rest @ ..] = entry {
        let klen = *klen as usize;
        if klen < 0x80 && rest.len() > klen + 1 && rest[klen] == 0x12 {
            let (key, tail) = rest.split_at(klen);
            let vlen = tail[1] as usize;
            if vlen < 0x80 && tail.len() == vlen + 2 {
                return Ok((key, &tail[2..]));
            }
        }
    }
    let mut r = Reader::new(entry);
    let (mut key, mut value): (&[u8], &[u8]) = (&[], &[]);
    while let Some((field, wt)) = r.field()? {
        match (field, wt) {
            (1, LEN) => key = r.bytes()?,
            (2, LEN) => value = r.bytes()?,
            _ => r.skip(wt)?,
        }
    }
    Ok((key, value))
}

/// Calls `f` on each `Feature` of a serialized `FeatureList`.
pub fn for_each_list_feature<'a>(
    list: &'a [u8],
    mut f: impl FnMut(&'a [u8]) -> WireResult<()>,
) -> WireResult<()> {
    let mut r = Reader::new(list);
    while let Some((field, wt)) = r.field()? {
        match (field, wt) {
            (1, LEN) => f(r.bytes()?)?,
            _ => r.skip(wt)?,
        }
    }
    Ok(())
}
