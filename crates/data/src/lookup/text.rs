//! Reading a table's entries from a text file
//! (`InitializeTableFromTextFileV2`), with TensorFlow's rules: one entry
//! per line; a key or value is a column of the line split by `delimiter`
//! (index `>= 0`), the whole line (`-2`) or the line number plus `offset`
//! (`-1`); `vocab_size` reads only that many lines and fails on a shorter
//! file; an empty line is an error; `int32` columns get `offset` added.

use ferroflow_tensor::{bail, DType, Error, Result, Tensor};

use super::table::tf_type_name;

/// TensorFlow's `TextFileIndex.LINE_NUMBER`.
pub const LINE_NUMBER: i64 = -1;
/// TensorFlow's `TextFileIndex.WHOLE_LINE`.
pub const WHOLE_LINE: i64 = -2;

/// How to read a text file into keys and values (the op's attributes).
#[derive(Clone, Debug)]
pub struct TextFileSpec {
    pub key_index: i64,
    pub value_index: i64,
    /// `-1`: every line.
    pub vocab_size: i64,
    pub delimiter: u8,
    pub offset: i64,
}

/// One column of parsed entries.
enum Column {
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Str(Vec<Vec<u8>>),
}

impl Column {
    fn new(d: DType) -> Result<Column> {
        Ok(match d {
            DType::Int32 => Column::I32(Vec::new()),
            DType::Int64 => Column::I64(Vec::new()),
            DType::Float32 => Column::F32(Vec::new()),
            DType::Float64 => Column::F64(Vec::new()),
            DType::String => Column::Str(Vec::new()),
            other => {
                bail!(
                    invalid_argument,
                    "Data type {} not supported.",
                    tf_type_name(other)
                )
            }
        })
    }

    fn into_tensor(self) -> Tensor {
        match self {
            Column::I32(v) => Tensor::vector(v),
            Column::I64(v) => Tensor::vector(v),
            Column::F32(v) => Tensor::vector(v),
            Column::F64(v) => Tensor::vector(v),
            Column::Str(v) => Tensor::vector(v),
        }
    }

    /// Appends the entry of `line` (line number `id`) at `index`.
    fn push(
        &mut self,
        line: &[u8],
        tokens: &[&[u8]],
        index: i64,
        id: i64,
        offset: i64,
    ) -> Result<()> {
        if index == LINE_NUMBER {
            if let Column::I64(v) = self {
                v.push(id + offset);
            }
            return Ok(());
        }
        let token = if index == WHOLE_LINE {
            line
        } else {
            tokens[index as usize]
        };
        let bad = |what: &str| {
            Error::invalid_argument(format!(
                "Field {} in line {id} is not a valid {what}.",
                String::from_utf8_lossy(token)
            ))
        };
        let text = || {
            std::str::from_utf8(token)
                .map(|s| s.trim_matches(|c: char| c.is_ascii_whitespace()))
                .ok()
        };
        match self {
            Column::I32(v) => {
                let x: i32 = text()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad("int32"))?;
                v.push((i64::from(x) + offset) as i32);
            }
            Column::I64(v) => v.push(
                text()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad("int64"))?,
            ),
            Column::F32(v) => v.push(
                text()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad("float"))?,
            ),
            Column::F64(v) => v.push(
                text()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad("double"))?,
            ),
            Column::Str(v) => v.push(token.to_vec()),
        }
        Ok(())
    }
}

/// Checks the key and value indices against the table's dtypes, as
/// TensorFlow does before opening the file.
pub fn check_indices(spec: &TextFileSpec, key_dtype: DType, value_dtype: DType) -> Result<()> {
    let integer_or_string = |d: DType| d.is_integer() || d == DType::String;
    if spec.key_index == LINE_NUMBER && key_dtype != DType::Int64 {
        bail!(
            invalid_argument,
            "Key index for line number requires table key dtype of int64, got {}",
            tf_type_name(key_dtype)
        );
    }
    if spec.key_index == WHOLE_LINE && !integer_or_string(key_dtype) {
        bail!(
            invalid_argument,
            "Key index for whole line requires string or integer table key, got {}",
            tf_type_name(key_dtype)
        );
    }
    if spec.value_index == LINE_NUMBER && value_dtype != DType::Int64 {
        bail!(
            invalid_argument,
            "Value index for line number requires table value dtype of int64, got {}",
            tf_type_name(value_dtype)
        );
    }
    if spec.value_index == WHOLE_LINE && !integer_or_string(value_dtype) {
        bail!(
            invalid_argument,
            "Value index for whole line requires table value dtype of integer or string, got {}",
            tf_type_name(value_dtype)
        );
    }
    for (what, i) in [
        ("key_index", spec.key_index),
        ("value_index", spec.value_index),
    ] {
        if i < WHOLE_LINE {
            bail!(
                invalid_argument,
                "{what} must be -2 (whole line), -1 (line number) or a column index, got {i}"
            );
        }
    }
    Ok(())
}

/// Parses `contents` (the file `filename`) into key and value vectors.
pub fn parse(
    filename: &str,
    contents: &[u8],
    spec: &TextFileSpec,
    key_dtype: DType,
    value_dtype: DType,
) -> Result<(Tensor, Tensor)> {
    check_indices(spec, key_dtype, value_dtype)?;
    let mut keys = Column::new(key_dtype)?;
    let mut values = Column::new(value_dtype)?;
    let need_split = spec.key_index.max(spec.value_index) >= 0;
    let columns = (spec.key_index.max(spec.value_index) + 1).max(0) as usize;
    let mut id: i64 = 0;
    let mut pos = 0usize;
    let mut tokens: Vec<&[u8]> = Vec::new();
    while pos < contents.len() {
        let end = contents[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(contents.len(), |i| pos + i);
        let mut line = &contents[pos..end];
        pos = (end + 1).min(contents.len());
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        if spec.vocab_size != -1 && id >= spec.vocab_size {
            break;
        }
        if line.is_empty() {
            bail!(
                invalid_argument,
                "Invalid content in {filename}: empty line found at position {pos}."
            );
        }
        tokens.clear();
        if need_split {
            tokens.extend(line.split(|&b| b == spec.delimiter));
            if tokens.len() < columns {
                bail!(
                    invalid_argument,
                    "Invalid number of columns in {filename} line {id} ({}) : expected at least \
                     {columns} got {}",
                    String::from_utf8_lossy(line),
                    tokens.len()
                );
            }
        }
        keys.push(line, &tokens, spec.key_index, id, spec.offset)?;
        values.push(line, &tokens, spec.value_index, id, spec.offset)?;
        id += 1;
    }
    if spec.vocab_size != -1 && id < spec.vocab_size {
        bail!(
            invalid_argument,
            "Invalid vocab_size in {filename}: expected {} but got {id}",
            spec.vocab_size
        );
    }
    Ok((keys.into_tensor(), values.into_tensor()))
}

/// Reads and parses the file `filename` (`NotFoundError` naming it when it
/// does not exist).
pub fn read(
    filename: &str,
    spec: &TextFileSpec,
    key_dtype: DType,
    value_dtype: DType,
) -> Result<(Tensor, Tensor)> {
    check_indices(spec, key_dtype, value_dtype)?;
    let contents = std::fs::read(filename).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::io(&e, format_args!("{filename}; No such file or directory"))
        }
        std::io::ErrorKind::PermissionDenied => {
            Error::io(&e, format_args!("{filename}; Permission denied"))
        }
        _ => Error::io(&e, format_args!("{filename}; {e}")),
    })?;
    parse(filename, &contents, spec, key_dtype, value_dtype)
}
