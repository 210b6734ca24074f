//! Kernels of the string ops (`tf.strings` and TF1's top-level string
//! names), with TensorFlow's semantics and values: splitting, joining,
//! case mapping, `Substr` by bytes or UTF-8 characters, RE2-syntax regular
//! expressions (through the `regex` crate), `AsString`'s printf formats,
//! `StringToNumber`, the three hash-bucket ops (TensorFlow's `Hash64`,
//! FarmHash `Fingerprint64`, keyed SipHash-2-4), `Fingerprint`, the Unicode
//! decode/encode/transcode/script ops, `StringNGrams`,
//! `UnsortedSegmentJoin`, `StringFormat` and `RaggedTensorToSparse`.

use super::{boxed, farmhash, unicode_script_table};
use crate::kernel::{factory, KernelFactory, OpContext};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::broadcast::broadcast_to;
use ferroflow_tensor::{bail, broadcast_shapes, ensure, DType, Data, Error, Result, Shape, Tensor};
use parking_lot::Mutex;
use std::fmt::Write as _;
use std::sync::Arc;

/// The strings of input `t`, or an InvalidArgument error naming `op`.
fn strs<'a>(t: &'a Tensor, op: &str) -> Result<&'a [Vec<u8>]> {
    t.as_slice::<Vec<u8>>().map_err(|_| {
        Error::invalid_argument(format!("{op}: expected a string tensor, got {}", t.dtype()))
    })
}

/// A scalar string input.
fn scalar_str(t: &Tensor, op: &str, what: &str) -> Result<Vec<u8>> {
    match strs(t, op)? {
        [s] if t.rank() == 0 => Ok(s.clone()),
        _ => Err(Error::invalid_argument(format!(
            "{op}: {what} must be a scalar, got shape {}",
            t.shape()
        ))),
    }
}

/// `s` escaped as TensorFlow's `CEscape` writes it (in messages).
fn c_escape(s: &[u8]) -> String {
    let mut out = String::new();
    for &b in s {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out
}

fn attr_str(init: &crate::kernel::KernelInit<'_>, name: &str, default: &str) -> Result<String> {
    init.node.attrs.str_or(name, default)
}

// ------------------------------------------------------------------ split

fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The tokens of TF1's `StringSplit`: `delim` is a set of bytes (empty: one
/// token per byte).
fn split_v1<'a>(s: &'a [u8], delim: &[u8], skip_empty: bool) -> Vec<&'a [u8]> {
    if delim.is_empty() {
        return s.chunks(1).collect();
    }
    s.split(|b| delim.contains(b))
        .filter(|t| !(skip_empty && t.is_empty()))
        .collect()
}

/// The tokens of `StringSplitV2`, as Python's `str.split(sep, maxsplit)`:
/// an empty `sep` splits on runs of ASCII whitespace.
fn split_v2<'a>(s: &'a [u8], sep: &[u8], maxsplit: i64) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let limit = |n: usize| maxsplit >= 0 && n as i64 >= maxsplit;
    if sep.is_empty() {
        let mut i = 0;
        loop {
            while i < s.len() && is_ascii_space(s[i]) {
                i += 1;
            }
            if i >= s.len() {
                break;
            }
            if limit(out.len()) {
                out.push(&s[i..]);
                break;
            }
            let start = i;
            while i < s.len() && !is_ascii_space(s[i]) {
                i += 1;
            }
            out.push(&s[start..i]);
        }
        return out;
    }
    let mut start = 0;
    let mut i = 0;
    while i + sep.len() <= s.len() {
        if limit(out.len()) {
            break;
        }
        if &s[i..i + sep.len()] == sep {
            out.push(&s[start..i]);
            i += sep.len();
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(&s[start..]);
    out
}

fn split_kernel(ctx: &mut OpContext<'_>, v2: bool, skip_empty: bool, maxsplit: i64) -> Result<()> {
    let op = if v2 { "StringSplitV2" } else { "StringSplit" };
    let input = ctx.input(0)?;
    ensure!(
        input.rank() == 1,
        invalid_argument,
        "{op}: input must be a vector, got shape: {}",
        input.shape()
    );
    let sep = scalar_str(ctx.input(1)?, op, if v2 { "sep" } else { "delimiter" })?;
    let rows = strs(input, op)?;
    let mut indices = Vec::new();
    let mut values = Vec::new();
    let mut width = 0usize;
    for (r, s) in rows.iter().enumerate() {
        let toks = if v2 {
            split_v2(s, &sep, maxsplit)
        } else {
            split_v1(s, &sep, skip_empty)
        };
        width = width.max(toks.len());
        for (c, t) in toks.into_iter().enumerate() {
            indices.push(r as i64);
            indices.push(c as i64);
            values.push(t.to_vec());
        }
    }
    let n = values.len();
    let nrows = rows.len() as i64;
    ctx.output(Tensor::from_vec([n, 2], indices)?);
    ctx.output(Tensor::from_vec([n], values)?);
    ctx.output(Tensor::vector(vec![nrows, width as i64]));
    Ok(())
}

// ------------------------------------------------------------------ elementwise

fn map_strings(
    ctx: &mut OpContext<'_>,
    op: &str,
    f: impl Fn(&[u8]) -> Result<Vec<u8>>,
) -> Result<()> {
    let t = ctx.input(0)?;
    let v = strs(t, op)?
        .iter()
        .map(|s| f(s))
        .collect::<Result<Vec<_>>>()?;
    let shape = t.shape().clone();
    ctx.output(Tensor::from_vec(shape, v)?);
    Ok(())
}

fn is_utf8_lead(b: u8) -> bool {
    (b & 0xc0) != 0x80
}

fn utf8_len(s: &[u8]) -> usize {
    s.iter().filter(|&&b| is_utf8_lead(b)).count()
}

fn case_map(s: &[u8], upper: bool, utf8: bool) -> Vec<u8> {
    if utf8 {
        let text = String::from_utf8_lossy(s);
        let m = if upper {
            text.to_uppercase()
        } else {
            text.to_lowercase()
        };
        m.into_bytes()
    } else if upper {
        s.to_ascii_uppercase()
    } else {
        s.to_ascii_lowercase()
    }
}

fn strip(s: &[u8]) -> Vec<u8> {
    let start = s
        .iter()
        .position(|&b| !is_ascii_space(b))
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&b| !is_ascii_space(b))
        .map_or(start, |e| e + 1);
    s[start..end.max(start)].to_vec()
}

// ------------------------------------------------------------------ substr

/// The byte offset of UTF-8 character `k` of `s` (`s.len()` past the end).
fn char_offset(s: &[u8], k: usize) -> usize {
    let mut seen = 0;
    for (i, &b) in s.iter().enumerate() {
        if is_utf8_lead(b) {
            if seen == k {
                return i;
            }
            seen += 1;
        }
    }
    s.len()
}

fn ints_of(t: &Tensor, op: &str, what: &str) -> Result<Vec<i64>> {
    match t.dtype() {
        DType::Int32 | DType::Int64 => t.to_i64_vec(),
        d => Err(Error::invalid_argument(format!(
            "{op}: {what} must be int32 or int64, got {d}"
        ))),
    }
}

fn substr_kernel(ctx: &mut OpContext<'_>, utf8: bool) -> Result<()> {
    let input = ctx.input(0)?;
    let (pos, len) = (ctx.input(1)?, ctx.input(2)?);
    ensure!(
        pos.shape() == len.shape(),
        invalid_argument,
        "Substr: pos and len should have the same shape, got: {} vs. {}",
        pos.shape(),
        len.shape()
    );
    let strings = strs(input, "Substr")?;
    let (p, l) = (
        ints_of(pos, "Substr", "pos")?,
        ints_of(len, "Substr", "len")?,
    );
    let out_shape = broadcast_shapes(input.dims(), pos.dims()).ok_or_else(|| {
        Error::invalid_argument(format!(
            "Substr: Incompatible shapes: {} vs. {}",
            input.shape(),
            pos.shape()
        ))
    })?;
    let si: Vec<usize> = broadcast_to(
        &(0..strings.len()).collect::<Vec<_>>(),
        input.dims(),
        &out_shape,
    )?;
    let pi: Vec<usize> = broadcast_to(&(0..p.len()).collect::<Vec<_>>(), pos.dims(), &out_shape)?;
    let mut out = Vec::with_capacity(si.len());
    for (k, (&i, &j)) in si.iter().zip(&pi).enumerate() {
        let s = &strings[i];
        let n = if utf8 { utf8_len(s) } else { s.len() } as i64;
        let (pk, lk) = (p[j], l[j]);
        let start = if pk < 0 { n + pk } else { pk };
        if start < 0 || start > n {
            bail!(
                invalid_argument,
                "pos {pk} out of range for string b'{}' at index {k}",
                c_escape(s)
            );
        }
        // A negative length: to the end for bytes (TF's length as an unsigned
        // size), nothing for characters.
        let end = if lk < 0 && !utf8 {
            n
        } else {
            (start + lk.max(0)).min(n)
        };
        let (a, b) = if utf8 {
            (char_offset(s, start as usize), char_offset(s, end as usize))
        } else {
            (start as usize, end as usize)
        };
        out.push(s[a..b].to_vec());
    }
    ctx.output(Tensor::from_vec(out_shape, out)?);
    Ok(())
}

// ------------------------------------------------------------------ regex

/// Compiles an RE2-syntax pattern; a bad one is InvalidArgument naming it.
fn compile_regex(pattern: &[u8], anchored: bool) -> Result<regex::bytes::Regex> {
    let p = String::from_utf8_lossy(pattern);
    let src = if anchored {
        format!(r"\A(?:{p})\z")
    } else {
        p.to_string()
    };
    regex::bytes::Regex::new(&src).map_err(|e| {
        let detail = match &e {
            regex::Error::Syntax(s) => s.lines().last().unwrap_or("").trim().to_string(),
            other => other.to_string(),
        };
        Error::invalid_argument(format!("Invalid pattern: {p}, error: {detail}"))
    })
}

/// RE2's rewrite string (`\1` a group, `\\` a backslash) as the `regex`
/// crate's replacement (`${1}`, literal `$` doubled), checked against the
/// pattern's group count as RE2 does.
fn convert_rewrite(rewrite: &[u8], re: &regex::bytes::Regex) -> Result<Vec<u8>> {
    let groups = re.captures_len() - 1;
    let mut out = Vec::with_capacity(rewrite.len());
    let mut i = 0;
    while i < rewrite.len() {
        match rewrite[i] {
            b'\\' => {
                let bad = || {
                    Error::invalid_argument(format!(
                        "Invalid rewrite pattern: {}",
                        String::from_utf8_lossy(rewrite)
                    ))
                };
                let c = *rewrite.get(i + 1).ok_or_else(bad)?;
                if c == b'\\' {
                    out.push(b'\\');
                } else if c.is_ascii_digit() {
                    let g = usize::from(c - b'0');
                    if g > groups {
                        bail!(
                            invalid_argument,
                            "Invalid rewrite pattern: Rewrite schema requests {g} matches, but \
                             the regexp only has {groups} parenthesized subexpressions."
                        );
                    }
                    out.extend_from_slice(format!("${{{g}}}").as_bytes());
                } else {
                    return Err(bad());
                }
                i += 2;
            }
            b'$' => {
                out.extend_from_slice(b"$$");
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

fn regex_replace_all(
    ctx: &mut OpContext<'_>,
    re: &regex::bytes::Regex,
    rewrite: &[u8],
    global: bool,
) -> Result<()> {
    let rep = convert_rewrite(rewrite, re)?;
    map_strings(ctx, "RegexReplace", |s| {
        Ok(if global {
            re.replace_all(s, rep.as_slice()).into_owned()
        } else {
            re.replace(s, rep.as_slice()).into_owned()
        })
    })
}

fn regex_full_match(ctx: &mut OpContext<'_>, re: &regex::bytes::Regex) -> Result<()> {
    let t = ctx.input(0)?;
    let v: Vec<bool> = strs(t, "RegexFullMatch")?
        .iter()
        .map(|s| re.is_match(s))
        .collect();
    let shape = t.shape().clone();
    ctx.output(Tensor::from_vec(shape, v)?);
    Ok(())
}

/// The compiled regular expression of the last pattern a dynamic-pattern
/// kernel saw (patterns rarely change between runs).
#[derive(Default)]
struct RegexCache(Mutex<Option<(Vec<u8>, Arc<regex::bytes::Regex>)>>);

impl RegexCache {
    fn get(&self, pattern: &[u8], anchored: bool) -> Result<Arc<regex::bytes::Regex>> {
        let mut slot = self.0.lock();
        if let Some((p, re)) = slot.as_ref() {
            if p == pattern {
                return Ok(re.clone());
            }
        }
        let re = Arc::new(compile_regex(pattern, anchored)?);
        *slot = Some((pattern.to_vec(), re.clone()));
        Ok(re)
    }
}

// ------------------------------------------------------------------ reduce join

fn reduce_join_kernel(ctx: &mut OpContext<'_>, keep_dims: bool, sep: &[u8]) -> Result<()> {
    let input = ctx.input(0)?;
    let strings = strs(input, "ReduceJoin")?;
    let axes = ctx.input(1)?.to_i64_vec()?;
    let dims = input.dims().to_vec();
    let r = dims.len() as i64;
    let mut order = Vec::new();
    let mut reduced = vec![false; dims.len()];
    for &a in &axes {
        if a < -r || a >= r {
            bail!(
                invalid_argument,
                "Invalid reduction dimension {a} for input with {r} dimensions"
            );
        }
        let a = (if a < 0 { a + r } else { a }) as usize;
        if reduced[a] {
            bail!(invalid_argument, "Duplicate reduction dimension {a}");
        }
        reduced[a] = true;
        order.push(a);
    }
    let strides = input.shape().strides();
    let kept: Vec<usize> = (0..dims.len()).filter(|&d| !reduced[d]).collect();
    let out_count: usize = kept.iter().map(|&d| dims[d]).product();
    // Reduced dimensions, the first one named varying fastest.
    let inner_count: usize = order.iter().map(|&d| dims[d]).product();
    let mut out = Vec::with_capacity(out_count);
    let mut kidx = vec![0usize; kept.len()];
    for _ in 0..out_count {
        let base: usize = kept.iter().zip(&kidx).map(|(&d, &i)| i * strides[d]).sum();
        let mut s = Vec::new();
        let mut ridx = vec![0usize; order.len()];
        for j in 0..inner_count {
            if j > 0 {
                s.extend_from_slice(sep);
            }
            let off: usize = order.iter().zip(&ridx).map(|(&d, &i)| i * strides[d]).sum();
            s.extend_from_slice(&strings[base + off]);
            for (k, &d) in order.iter().enumerate() {
                ridx[k] += 1;
                if ridx[k] < dims[d] {
                    break;
                }
                ridx[k] = 0;
            }
        }
        out.push(s);
        for k in (0..kept.len()).rev() {
            kidx[k] += 1;
            if kidx[k] < dims[kept[k]] {
                break;
            }
            kidx[k] = 0;
        }
    }
    let shape: Vec<usize> = (0..dims.len())
        .filter_map(|d| match (reduced[d], keep_dims) {
            (true, true) => Some(1),
            (true, false) => None,
            (false, _) => Some(dims[d]),
        })
        .collect();
    ctx.output(Tensor::from_vec(shape, out)?);
    Ok(())
}

// ------------------------------------------------------------------ printf

/// A printf conversion (`%f`, `%e`, `%g`, `%d`) with its flags, width and
/// precision, as `AsString` builds them.
#[derive(Clone, Copy)]
struct Printf {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    width: usize,
    precision: Option<usize>,
    conv: u8,
}

/// `%e` digits of `x` (finite, non-negative) with `p` decimals: mantissa
/// text and exponent.
fn exp_parts(x: f64, p: usize) -> (String, i32) {
    let s = format!("{x:.p$e}");
    let (m, e) = s.split_once('e').expect("exponent");
    (m.to_string(), e.parse().expect("exponent digits"))
}

fn c_exp(x: f64, p: usize, upper: bool) -> String {
    let (m, e) = exp_parts(x, p);
    let sign = if e < 0 { '-' } else { '+' };
    let e_char = if upper { 'E' } else { 'e' };
    format!("{m}{e_char}{sign}{:02}", e.abs())
}

fn strip_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `%g` of a finite non-negative `x` with precision `p`.
fn c_general(x: f64, p: usize) -> String {
    let p = p.max(1);
    let (_, e) = if x == 0.0 {
        (String::new(), 0)
    } else {
        exp_parts(x, p - 1)
    };
    if e < -4 || e >= p as i32 {
        let (m, e) = exp_parts(x, p - 1);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip_zeros(m), e.abs())
    } else {
        let decimals = (p as i32 - 1 - e).max(0) as usize;
        strip_zeros(format!("{x:.decimals$}"))
    }
}

impl Printf {
    fn pad(&self, sign: &str, body: String, numeric: bool) -> String {
        let len = sign.len() + body.len();
        if len >= self.width {
            return format!("{sign}{body}");
        }
        let fill = self.width - len;
        if self.left {
            format!("{sign}{body}{}", " ".repeat(fill))
        } else if self.zero && numeric {
            format!("{sign}{}{body}", "0".repeat(fill))
        } else {
            format!("{}{sign}{body}", " ".repeat(fill))
        }
    }

    fn sign(&self, negative: bool) -> &'static str {
        if negative {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }

    fn float(&self, x: f64) -> String {
        let sign = self.sign(x.is_sign_negative() && !x.is_nan());
        let a = x.abs();
        if !a.is_finite() {
            let body = if a.is_nan() { "nan" } else { "inf" };
            return self.pad(sign, body.to_string(), false);
        }
        let p = self.precision.unwrap_or(6);
        let body = match self.conv {
            b'e' => c_exp(a, p, false),
            b'g' => c_general(a, p),
            _ => format!("{a:.p$}"),
        };
        self.pad(sign, body, true)
    }

    fn int(&self, x: i128) -> String {
        let sign = self.sign(x < 0);
        self.pad(sign, x.unsigned_abs().to_string(), true)
    }
}

fn as_string_kernel(ctx: &mut OpContext<'_>, f: Printf) -> Result<()> {
    let t = ctx.input(0)?;
    let out: Vec<Vec<u8>> = match t.data() {
        Data::Str(v) => v
            .iter()
            .map(|s| {
                f.pad("", String::from_utf8_lossy(s).into_owned(), false)
                    .into_bytes()
            })
            .collect(),
        Data::Bool(v) => v
            .iter()
            .map(|&b| {
                f.pad("", if b { "true" } else { "false" }.into(), false)
                    .into_bytes()
            })
            .collect(),
        _ if t.dtype().is_floating() => t
            .to_f64_vec()?
            .into_iter()
            .map(|x| {
                let x = if t.dtype() == DType::Float64 {
                    x
                } else {
                    f64::from(x as f32)
                };
                f.float(x).into_bytes()
            })
            .collect(),
        Data::U64(v) => v
            .iter()
            .map(|&x| f.int(i128::from(x)).into_bytes())
            .collect(),
        _ => t
            .to_i64_vec()?
            .into_iter()
            .map(|x| f.int(i128::from(x)).into_bytes())
            .collect(),
    };
    let shape = t.shape().clone();
    ctx.output(Tensor::from_vec(shape, out)?);
    Ok(())
}

fn as_string_factory() -> KernelFactory {
    factory(|init| {
        let a = &init.node.attrs;
        let precision = a.int_or("precision", -1)?;
        let scientific = a.bool_or("scientific", false)?;
        let shortest = a.bool_or("shortest", false)?;
        let width = a.int_or("width", -1)?;
        let fill = a.str_or("fill", "")?;
        if fill.len() > 1 {
            bail!(
                invalid_argument,
                "Fill string must be one or fewer characters, got \"{fill}\""
            );
        }
        if scientific && shortest {
            bail!(
                invalid_argument,
                "Cannot select both scientific and shortest notation"
            );
        }
        let mut f = Printf {
            left: false,
            zero: false,
            plus: false,
            space: false,
            width: usize::try_from(width).unwrap_or(0),
            precision: usize::try_from(precision).ok(),
            conv: if scientific {
                b'e'
            } else if shortest {
                b'g'
            } else {
                b'f'
            },
        };
        match fill.as_bytes() {
            [] => {}
            [b'0'] => f.zero = true,
            [b'-'] => f.left = true,
            [b'+'] => f.plus = true,
            [b' '] => f.space = true,
            _ => {
                bail!(invalid_argument, "Fill argument not supported: \"{fill}\"")
            }
        }
        let int_only = if precision > -1 {
            Some("precision")
        } else if scientific {
            Some("scientific")
        } else if shortest {
            Some("shortest")
        } else {
            None
        };
        boxed(move |ctx| {
            let dtype = ctx.input(0)?.dtype();
            if let (false, Some(what)) = (dtype.is_floating(), int_only) {
                bail!(
                    invalid_argument,
                    "{what} not supported for datatype {dtype}"
                );
            }
            as_string_kernel(ctx, f)
        })
    })
}

// ------------------------------------------------------------------ to number

fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let v = if let Some(hex) = lower.strip_prefix("0x") {
        if hex.is_empty() {
            return None;
        }
        u64::from_str_radix(hex, 16).ok()? as f64
    } else if lower.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        || matches!(lower.as_str(), "inf" | "infinity" | "nan")
    {
        lower.parse::<f64>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

fn parse_int(s: &str) -> Option<i64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<i64>().ok()
}

/// An unsigned decimal (surrounding whitespace and a leading `+` allowed,
/// no sign `-`), as TensorFlow's `safe_strtou64` reads one.
fn parse_uint(s: &str) -> Option<u64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix('+').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()
}

fn to_number_kernel(ctx: &mut OpContext<'_>, out: DType) -> Result<()> {
    let t = ctx.input(0)?;
    let strings = strs(t, "StringToNumber")?;
    let bad = |s: &[u8]| {
        Error::invalid_argument(format!(
            "StringToNumberOp could not correctly convert string: {}",
            String::from_utf8_lossy(s)
        ))
    };
    let shape = t.shape().clone();
    let text = |s: &Vec<u8>| String::from_utf8_lossy(s).into_owned();
    let result = match out {
        DType::Float32 => {
            let v = strings
                .iter()
                .map(|s| {
                    parse_float(&text(s))
                        .map(|x| x as f32)
                        .ok_or_else(|| bad(s))
                })
                .collect::<Result<Vec<f32>>>()?;
            Tensor::from_vec(shape, v)?
        }
        DType::Float64 => {
            let v = strings
                .iter()
                .map(|s| parse_float(&text(s)).ok_or_else(|| bad(s)))
                .collect::<Result<Vec<f64>>>()?;
            Tensor::from_vec(shape, v)?
        }
        DType::Int32 => {
            let v = strings
                .iter()
                .map(|s| {
                    parse_int(&text(s))
                        .and_then(|x| i32::try_from(x).ok())
                        .ok_or_else(|| bad(s))
                })
                .collect::<Result<Vec<i32>>>()?;
            Tensor::from_vec(shape, v)?
        }
        DType::Int64 => {
            let v = strings
                .iter()
                .map(|s| parse_int(&text(s)).ok_or_else(|| bad(s)))
                .collect::<Result<Vec<i64>>>()?;
            Tensor::from_vec(shape, v)?
        }
        DType::UInt32 => {
            let v = strings
                .iter()
                .map(|s| {
                    parse_uint(&text(s))
                        .and_then(|x| u32::try_from(x).ok())
                        .ok_or_else(|| bad(s))
                })
                .collect::<Result<Vec<u32>>>()?;
            Tensor::from_vec(shape, v)?
        }
        DType::UInt64 => {
            let v = strings
                .iter()
                .map(|s| parse_uint(&text(s)).ok_or_else(|| bad(s)))
                .collect::<Result<Vec<u64>>>()?;
            Tensor::from_vec(shape, v)?
        }
        d => {
            bail!(
                invalid_argument,
                "StringToNumber: out_type {d} is not supported"
            )
        }
    };
    ctx.output(result);
    Ok(())
}

// ------------------------------------------------------------------ hashing

/// TensorFlow's legacy `Hash64` (`tensorflow/core/lib/hash/hash.cc`, a
/// MurmurHash64A variant with seed `0xDECAFCAFFE`), used by
/// `StringToHashBucket`.
pub(crate) fn tf_hash64(s: &[u8]) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = 0xDE_CAFC_AFFEu64 ^ (s.len() as u64).wrapping_mul(M);
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// SipHash-2-4 of `s` under the 128-bit key `(k0, k1)` (TensorFlow's
/// `StrongKeyedHash`, used by `StringToHashBucketStrong`).
pub(crate) fn siphash24(k0: u64, k1: u64, s: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        let m = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        v[3] ^= m;
        round(&mut v);
        round(&mut v);
        v[0] ^= m;
    }
    let mut last = (s.len() as u64) << 56;
    for (i, &b) in chunks.remainder().iter().enumerate() {
        last |= u64::from(b) << (8 * i);
    }
    v[3] ^= last;
    round(&mut v);
    round(&mut v);
    v[0] ^= last;
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

fn hash_bucket_factory(op: &'static str) -> KernelFactory {
    factory(move |init| {
        let a = &init.node.attrs;
        let buckets = a.int("num_buckets")?;
        if buckets <= 0 {
            bail!(
                invalid_argument,
                "{op}: num_buckets must be positive, got {buckets}"
            );
        }
        let buckets = buckets as u64;
        let key = if op == "StringToHashBucketStrong" {
            match a.ints("key")?.as_slice() {
                [k0, k1] => Some((*k0 as u64, *k1 as u64)),
                k => {
                    bail!(
                        invalid_argument,
                        "Key must have 2 elements, got {}",
                        k.len()
                    )
                }
            }
        } else {
            None
        };
        boxed(move |ctx| {
            let t = ctx.input(0)?;
            let v: Vec<i64> = strs(t, op)?
                .iter()
                .map(|s| {
                    let h = match (op, key) {
                        ("StringToHashBucket", _) => tf_hash64(s),
                        (_, Some((k0, k1))) => siphash24(k0, k1, s),
                        _ => farmhash::fingerprint64(s),
                    };
                    (h % buckets) as i64
                })
                .collect();
            let shape = t.shape().clone();
            ctx.output(Tensor::from_vec(shape, v)?);
            Ok(())
        })
    })
}

/// The little-endian bytes of each numeric element of `t`.
fn raw_bytes(t: &Tensor) -> Result<Vec<u8>> {
    macro_rules! le {
        ($v:expr) => {
            $v.iter().flat_map(|x| x.to_le_bytes()).collect()
        };
    }
    Ok(match t.data() {
        Data::F32(v) => le!(v),
        Data::F64(v) => le!(v),
        Data::I32(v) => le!(v),
        Data::I64(v) => le!(v),
        Data::I16(v) => le!(v),
        Data::I8(v) => le!(v),
        Data::U8(v) => v.to_vec(),
        Data::U16(v) => le!(v),
        Data::U32(v) => le!(v),
        Data::U64(v) => le!(v),
        Data::Bool(v) => v.iter().map(|&b| u8::from(b)).collect(),
        Data::F16(v) => v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect(),
        Data::BF16(v) => v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect(),
        _ => {
            bail!(
                invalid_argument,
                "Fingerprint: unsupported dtype {}",
                t.dtype()
            )
        }
    })
}

fn fingerprint_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let method = scalar_str(ctx.input(1)?, "Fingerprint", "method")?;
    ensure!(
        method == b"farmhash64",
        invalid_argument,
        "Unsupported fingerprint method: {}",
        String::from_utf8_lossy(&method)
    );
    let t = ctx.input(0)?;
    ensure!(
        t.rank() != 0,
        invalid_argument,
        "Fingerprint: data must have rank 1 or higher, got a scalar"
    );
    let n = t.dims()[0];
    let per_row = t.num_elements().checked_div(n).unwrap_or(0);
    let mut out = Vec::with_capacity(n * 8);
    if let Ok(strings) = t.as_slice::<Vec<u8>>() {
        for row in 0..n {
            let fp = if per_row == 1 {
                farmhash::fingerprint64(&strings[row])
            } else {
                let cat: Vec<u8> = strings[row * per_row..(row + 1) * per_row]
                    .iter()
                    .flat_map(|s| farmhash::fingerprint64(s).to_le_bytes())
                    .collect();
                farmhash::fingerprint64(&cat)
            };
            out.extend_from_slice(&fp.to_le_bytes());
        }
    } else {
        let bytes = raw_bytes(t)?;
        let row_bytes = bytes.len().checked_div(n).unwrap_or(0);
        for row in 0..n {
            let fp = farmhash::fingerprint64(&bytes[row * row_bytes..(row + 1) * row_bytes]);
            out.extend_from_slice(&fp.to_le_bytes());
        }
    }
    ctx.output(Tensor::from_vec([n, 8], out)?);
    Ok(())
}

// ------------------------------------------------------------------ unicode

#[derive(Clone, Copy, PartialEq)]
enum Encoding {
    Utf8,
    Utf16Be,
    Utf16Le,
    Utf32Be,
    Utf32Le,
}

fn encoding(name: &str, op: &str, output: bool) -> Result<Encoding> {
    let e = match name.to_ascii_uppercase().replace('_', "-").as_str() {
        "UTF-8" | "UTF8" => Encoding::Utf8,
        "UTF-16-BE" | "UTF-16BE" => Encoding::Utf16Be,
        "UTF-32-BE" | "UTF-32BE" => Encoding::Utf32Be,
        "UTF-16-LE" | "UTF-16LE" if !output => Encoding::Utf16Le,
        "UTF-32-LE" | "UTF-32LE" if !output => Encoding::Utf32Le,
        _ => {
            bail!(
                invalid_argument,
                "{op}: Could not create converter for {} encoding: {name}",
                if output { "output" } else { "input" }
            )
        }
    };
    Ok(e)
}

#[derive(Clone, Copy, PartialEq)]
enum OnError {
    Strict,
    Replace,
    Ignore,
}

fn on_error(name: &str) -> Result<OnError> {
    match name {
        "strict" => Ok(OnError::Strict),
        "replace" => Ok(OnError::Replace),
        "ignore" => Ok(OnError::Ignore),
        _ => Err(Error::invalid_argument(format!(
            "errors must be one of 'strict', 'replace', 'ignore', got '{name}'"
        ))),
    }
}

/// How the Unicode ops treat bad input.
#[derive(Clone, Copy)]
struct DecodeOpts {
    errors: OnError,
    replacement: i32,
    replace_control: bool,
}

fn decode_opts(init: &crate::kernel::KernelInit<'_>) -> Result<DecodeOpts> {
    let a = &init.node.attrs;
    let replacement = a.int_or("replacement_char", 0xfffd)?;
    Ok(DecodeOpts {
        errors: on_error(&attr_str(init, "errors", "replace")?)?,
        replacement: i32::try_from(replacement)
            .map_err(|_| Error::invalid_argument("replacement_char out of range"))?,
        replace_control: a.bool_or("replace_control_characters", false)?,
    })
}

/// Decodes `s`: `(code point, byte offset)` pairs. Invalid sequences (the
/// maximal ill-formed subparts, as ICU counts them) are replaced, dropped or
/// an error, by `opts.errors`.
fn decode(s: &[u8], enc: Encoding, opts: DecodeOpts) -> Result<Vec<(i32, i64)>> {
    let mut out = Vec::new();
    let bad = |out: &mut Vec<(i32, i64)>, at: usize| -> Result<()> {
        match opts.errors {
            OnError::Strict => Err(Error::invalid_argument(
                "Invalid formatting on input string",
            )),
            OnError::Replace => {
                out.push((opts.replacement, at as i64));
                Ok(())
            }
            OnError::Ignore => Ok(()),
        }
    };
    let push = |out: &mut Vec<(i32, i64)>, c: u32, at: usize| {
        let c = if opts.replace_control && c < 0x20 {
            opts.replacement
        } else {
            c as i32
        };
        out.push((c, at as i64));
    };
    match enc {
        Encoding::Utf8 => {
            let mut at = 0;
            for chunk in s.utf8_chunks() {
                for (i, ch) in chunk.valid().char_indices() {
                    push(&mut out, ch as u32, at + i);
                }
                at += chunk.valid().len();
                if !chunk.invalid().is_empty() {
                    bad(&mut out, at)?;
                    at += chunk.invalid().len();
                }
            }
        }
        Encoding::Utf16Be | Encoding::Utf16Le => {
            let unit = |i: usize| {
                let b = [s[i], s[i + 1]];
                u32::from(if enc == Encoding::Utf16Be {
                    u16::from_be_bytes(b)
                } else {
                    u16::from_le_bytes(b)
                })
            };
            let mut i = 0;
            while i + 1 < s.len() {
                let u = unit(i);
                if (0xd800..0xdc00).contains(&u) && i + 3 < s.len() {
                    let lo = unit(i + 2);
                    if (0xdc00..0xe000).contains(&lo) {
                        push(&mut out, 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00), i);
                        i += 4;
                        continue;
                    }
                }
                if (0xd800..0xe000).contains(&u) {
                    bad(&mut out, i)?;
                } else {
                    push(&mut out, u, i);
                }
                i += 2;
            }
            if i < s.len() {
                bad(&mut out, i)?;
            }
        }
        Encoding::Utf32Be | Encoding::Utf32Le => {
            let mut i = 0;
            while i + 3 < s.len() {
                let b = [s[i], s[i + 1], s[i + 2], s[i + 3]];
                let u = if enc == Encoding::Utf32Be {
                    u32::from_be_bytes(b)
                } else {
                    u32::from_le_bytes(b)
                };
                if char::from_u32(u).is_some() {
                    push(&mut out, u, i);
                } else {
                    bad(&mut out, i)?;
                }
                i += 4;
            }
            if i < s.len() {
                bad(&mut out, i)?;
            }
        }
    }
    Ok(out)
}

/// Appends code point `c` to `out` in `enc`; an invalid one is replaced,
/// dropped or an error, by `opts`.
fn encode_into(out: &mut Vec<u8>, c: i32, enc: Encoding, opts: DecodeOpts) -> Result<()> {
    let ch = match u32::try_from(c).ok().and_then(char::from_u32) {
        Some(ch) => ch,
        None => match opts.errors {
            OnError::Strict => {
                bail!(
                    invalid_argument,
                    "Code point is out of range for Unicode, or is a surrogate. (code point {c})"
                )
            }
            OnError::Ignore => return Ok(()),
            OnError::Replace => match u32::try_from(opts.replacement)
                .ok()
                .and_then(char::from_u32)
            {
                Some(r) => r,
                None => return Ok(()),
            },
        },
    };
    match enc {
        Encoding::Utf8 => {
            let mut b = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
        }
        Encoding::Utf16Be | Encoding::Utf16Le => {
            let mut b = [0u16; 2];
            for u in ch.encode_utf16(&mut b) {
                out.extend_from_slice(&if enc == Encoding::Utf16Be {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                });
            }
        }
        Encoding::Utf32Be => out.extend_from_slice(&(ch as u32).to_be_bytes()),
        Encoding::Utf32Le => out.extend_from_slice(&(ch as u32).to_le_bytes()),
    }
    Ok(())
}

fn splits_tensor(v: Vec<i64>, dtype: DType) -> Result<Tensor> {
    if dtype == DType::Int32 {
        let v = v
            .into_iter()
            .map(|x| {
                i32::try_from(x)
                    .map_err(|_| Error::invalid_argument("row_splits overflow int32 (use int64)"))
            })
            .collect::<Result<Vec<i32>>>()?;
        Ok(Tensor::vector(v))
    } else {
        Ok(Tensor::vector(v))
    }
}

fn unicode_decode_factory(with_offsets: bool) -> KernelFactory {
    factory(move |init| {
        let enc = encoding(
            &attr_str(init, "input_encoding", "UTF-8")?,
            "UnicodeDecode",
            false,
        )?;
        let opts = decode_opts(init)?;
        let tsplits = init.node.attrs.dtype_or("Tsplits", DType::Int64)?;
        boxed(move |ctx| {
            let t = ctx.input(0)?;
            let strings = strs(t, "UnicodeDecode")?;
            let mut splits = Vec::with_capacity(strings.len() + 1);
            splits.push(0i64);
            let (mut chars, mut offsets) = (Vec::new(), Vec::new());
            for s in strings {
                for (c, o) in decode(s, enc, opts)? {
                    chars.push(c);
                    offsets.push(o);
                }
                splits.push(chars.len() as i64);
            }
            ctx.output(splits_tensor(splits, tsplits)?);
            ctx.output(Tensor::vector(chars));
            if with_offsets {
                ctx.output(Tensor::vector(offsets));
            }
            Ok(())
        })
    })
}

fn unicode_encode_factory() -> KernelFactory {
    factory(|init| {
        let enc = encoding(
            &attr_str(init, "output_encoding", "UTF-8")?,
            "UnicodeEncode",
            true,
        )?;
        let opts = decode_opts(init)?;
        boxed(move |ctx| {
            let values = ctx.input(0)?.as_slice::<i32>()?.to_vec();
            let splits = ctx.input(1)?.to_i64_vec()?;
            if splits.first().is_some_and(|&s| s != 0) {
                bail!(
                    invalid_argument,
                    "UnicodeEncode: first value of input_splits must be 0"
                );
            }
            let mut out = Vec::with_capacity(splits.len().saturating_sub(1));
            for w in splits.windows(2) {
                if w[0] > w[1] || w[1] as usize > values.len() {
                    bail!(
                        invalid_argument,
                        "UnicodeEncode: input_splits must be sorted and within [0, {}], got {} then {}",
                        values.len(),
                        w[0],
                        w[1]
                    );
                }
                let mut s = Vec::new();
                for &c in &values[w[0] as usize..w[1] as usize] {
                    encode_into(&mut s, c, enc, opts)?;
                }
                out.push(s);
            }
            ctx.output(Tensor::vector(out));
            Ok(())
        })
    })
}

fn unicode_transcode_factory() -> KernelFactory {
    factory(|init| {
        let from = encoding(
            &attr_str(init, "input_encoding", "UTF-8")?,
            "UnicodeTranscode",
            false,
        )?;
        let to = encoding(
            &attr_str(init, "output_encoding", "UTF-8")?,
            "UnicodeTranscode",
            true,
        )?;
        let opts = decode_opts(init)?;
        boxed(move |ctx| {
            map_strings(ctx, "UnicodeTranscode", |s| {
                let mut out = Vec::with_capacity(s.len());
                for (c, _) in decode(s, from, opts)? {
                    encode_into(&mut out, c, to, opts)?;
                }
                Ok(out)
            })
        })
    })
}

/// ICU's script code of code point `c` (USCRIPT_INVALID_CODE, -1, outside
/// Unicode's range).
pub(crate) fn unicode_script(c: i32) -> i32 {
    let Ok(c) = u32::try_from(c) else { return -1 };
    if c > 0x10ffff {
        return -1;
    }
    let t = unicode_script_table::RANGES;
    let i = t.partition_point(|&(start, _)| start <= c);
    i32::from(t[i - 1].1)
}

// ------------------------------------------------------------------ ngrams

struct NGrams {
    separator: Vec<u8>,
    widths: Vec<i64>,
    left_pad: Vec<u8>,
    right_pad: Vec<u8>,
    pad_width: i64,
    preserve_short: bool,
}

impl NGrams {
    fn pad_width(&self, width: i64) -> i64 {
        let p = if self.pad_width < 0 {
            width - 1
        } else {
            self.pad_width
        };
        p.min(width - 1)
    }

    fn count(&self, length: i64, width: i64) -> i64 {
        (length + 2 * self.pad_width(width) - width + 1).max(0)
    }

    fn make(&self, data: &[Vec<u8>], num: i64, width: i64, out: &mut Vec<Vec<u8>>) {
        let pad = self.pad_width(width);
        for k in 0..num {
            let left = (pad - k).max(0);
            let right = (pad - (num - (k + 1))).max(0);
            let tokens = width - (left + right);
            let start = if left > 0 { 0 } else { k - pad };
            let mut g = Vec::new();
            for _ in 0..left {
                g.extend_from_slice(&self.left_pad);
                g.extend_from_slice(&self.separator);
            }
            for n in 0..tokens - 1 {
                g.extend_from_slice(&data[(start + n) as usize]);
                g.extend_from_slice(&self.separator);
            }
            if tokens > 0 {
                g.extend_from_slice(&data[(start + tokens - 1) as usize]);
                for _ in 0..right {
                    g.extend_from_slice(&self.separator);
                    g.extend_from_slice(&self.right_pad);
                }
            } else {
                for _ in 0..right - 1 {
                    g.extend_from_slice(&self.right_pad);
                    g.extend_from_slice(&self.separator);
                }
                g.extend_from_slice(&self.right_pad);
            }
            out.push(g);
        }
    }

    fn run(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let data = strs(ctx.input(0)?, "StringNGrams")?;
        let splits_t = ctx.input(1)?;
        let splits = splits_t.to_i64_vec()?;
        let n = data.len() as i64;
        if splits.is_empty() {
            bail!(
                invalid_argument,
                "StringNGrams: data_splits must have at least one element"
            );
        }
        if splits[0] != 0 || splits.windows(2).any(|w| w[0] > w[1]) || splits[splits.len() - 1] != n
        {
            bail!(
                invalid_argument,
                "Invalid split value: data_splits must start at 0, be non-decreasing and end at \
                 the number of data elements ({n})"
            );
        }
        let mut out = Vec::new();
        let mut out_splits = vec![0i64];
        for w in splits.windows(2) {
            let row = &data[w[0] as usize..w[1] as usize];
            let length = row.len() as i64;
            let before = out.len();
            for &width in &self.widths {
                let num = self.count(length, width);
                self.make(row, num, width, &mut out);
            }
            if self.preserve_short && out.len() == before && length > 0 {
                self.make(row, 1, length + 2 * self.pad_width, &mut out);
            }
            out_splits.push(out.len() as i64);
        }
        let dtype = splits_t.dtype();
        ctx.output(Tensor::vector(out));
        ctx.output(splits_tensor(out_splits, dtype)?);
        Ok(())
    }
}

fn ngrams_factory() -> KernelFactory {
    factory(|init| {
        let a = &init.node.attrs;
        let widths = a.ints("ngram_widths")?;
        if widths.iter().any(|&w| w < 1) {
            bail!(
                invalid_argument,
                "StringNGrams: ngram_widths must be positive, got {widths:?}"
            );
        }
        let g = Arc::new(NGrams {
            separator: attr_str(init, "separator", " ")?.into_bytes(),
            widths,
            left_pad: attr_str(init, "left_pad", "")?.into_bytes(),
            right_pad: attr_str(init, "right_pad", "")?.into_bytes(),
            pad_width: a.int_or("pad_width", 0)?,
            preserve_short: a.bool_or("preserve_short_sequences", false)?,
        });
        boxed(move |ctx| g.run(ctx))
    })
}

// ------------------------------------------------------------------ segment join

fn unsorted_segment_join_kernel(ctx: &mut OpContext<'_>, sep: &[u8]) -> Result<()> {
    let input = ctx.input(0)?;
    let strings = strs(input, "UnsortedSegmentJoin")?;
    let ids_t = ctx.input(1)?;
    let ids = ids_t.to_i64_vec()?;
    let num = ctx.input(2)?.scalar_i64()?;
    if num < 0 {
        bail!(
            invalid_argument,
            "Number of segments cannot be negative, got {num}"
        );
    }
    let r = ids_t.rank();
    if r > input.rank() || ids_t.dims() != &input.dims()[..r] {
        bail!(
            invalid_argument,
            "UnsortedSegmentJoin: segment_ids.shape = {} is not a prefix of inputs.shape = {}",
            ids_t.shape(),
            input.shape()
        );
    }
    let inner: usize = input.dims()[r..].iter().product();
    let mut dims = vec![num as usize];
    dims.extend_from_slice(&input.dims()[r..]);
    Tensor::check_allocation("UnsortedSegmentJoin", DType::String, &dims)?;
    let mut out = vec![Vec::new(); num as usize * inner];
    let mut started = vec![false; num as usize];
    for (i, &id) in ids.iter().enumerate() {
        if id < 0 || id >= num {
            bail!(
                invalid_argument,
                "segment_ids are not allowed to exceed num_segments or to have negative values \
                 (segment_ids[{i}] = {id}, num_segments = {num})."
            );
        }
        let id = id as usize;
        for j in 0..inner {
            let o = &mut out[id * inner + j];
            if started[id] {
                o.extend_from_slice(sep);
            }
            o.extend_from_slice(&strings[i * inner + j]);
        }
        started[id] = true;
    }
    ctx.output(Tensor::from_vec(dims, out)?);
    Ok(())
}

// ------------------------------------------------------------------ format

/// One element as TensorFlow's `SummarizeValue` prints it (print_v2 style).
fn format_element(t: &Tensor, i: usize, out: &mut String) {
    match t.data() {
        Data::Str(v) => {
            let _ = write!(out, "\"{}\"", c_escape(&v[i]));
        }
        Data::Bool(v) => out.push(if v[i] { '1' } else { '0' }),
        Data::F32(v) => out.push_str(&shortest_float(f64::from(v[i]), 6, 9)),
        Data::F64(v) => out.push_str(&shortest_float(v[i], 15, 17)),
        Data::F16(v) => out.push_str(&shortest_float(f64::from(v[i].to_f32()), 6, 9)),
        Data::BF16(v) => out.push_str(&shortest_float(f64::from(v[i].to_f32()), 6, 9)),
        _ => {
            let v = t.to_i64_vec().map(|v| v[i]).unwrap_or_default();
            let _ = write!(out, "{v}");
        }
    }
}

/// `%.{short}g`, or `%.{long}g` when that does not round-trip (TensorFlow's
/// `FloatToBuffer`/`DoubleToBuffer`).
fn shortest_float(x: f64, short: usize, long: usize) -> String {
    let f = Printf {
        left: false,
        zero: false,
        plus: false,
        space: false,
        width: 0,
        precision: Some(short),
        conv: b'g',
    };
    let s = f.float(x);
    let round_trips = if long == 9 {
        s.parse::<f32>().ok() == Some(x as f32)
    } else {
        s.parse::<f64>().ok() == Some(x)
    };
    if round_trips || !x.is_finite() {
        s
    } else {
        Printf {
            precision: Some(long),
            ..f
        }
        .float(x)
    }
}

fn dim_spacing(dim: usize, ndims: usize, out: &mut String) {
    if dim == ndims - 1 {
        out.push(' ');
        return;
    }
    for _ in 0..ndims - dim - 1 {
        out.push('\n');
    }
    for _ in 0..=dim {
        out.push(' ');
    }
}

fn format_dim(t: &Tensor, dim: usize, ends: usize, base: usize, out: &mut String) {
    let dims = t.dims();
    if dim == dims.len() {
        format_element(t, base, out);
        return;
    }
    out.push('[');
    let count = dims[dim];
    let per: usize = dims[dim + 1..].iter().product();
    let start_of_end = ends.max(count.saturating_sub(ends));
    for i in 0..ends.min(count) {
        if i > 0 {
            dim_spacing(dim, dims.len(), out);
        }
        format_dim(t, dim + 1, ends, base + per * i, out);
    }
    if count > 2 * ends {
        dim_spacing(dim, dims.len(), out);
        out.push_str("...");
    }
    for i in start_of_end..count {
        dim_spacing(dim, dims.len(), out);
        format_dim(t, dim + 1, ends, base + per * i, out);
    }
    out.push(']');
}

fn summarize(t: &Tensor, summarize: i64) -> String {
    let mut out = String::new();
    if t.rank() == 0 {
        format_element(t, 0, &mut out);
        return out;
    }
    if t.num_elements() == 0 {
        return "[]".into();
    }
    let ends = if summarize < 0 {
        t.num_elements()
    } else {
        summarize as usize
    };
    format_dim(t, 0, ends, 0, &mut out);
    out
}

fn string_format_factory() -> KernelFactory {
    factory(|init| {
        let template = attr_str(init, "template", "%s")?;
        let placeholder = attr_str(init, "placeholder", "%s")?;
        let n_summarize = init.node.attrs.int_or("summarize", 3)?;
        let pieces: Vec<String> = if placeholder.is_empty() {
            vec![template.clone()]
        } else {
            template
                .split(placeholder.as_str())
                .map(String::from)
                .collect()
        };
        boxed(move |ctx| {
            let n = ctx.num_inputs();
            ensure!(
                pieces.len() == n + 1,
                invalid_argument,
                "num placeholders in template and num inputs must match: {} vs. {n}",
                pieces.len() - 1
            );
            let mut s = pieces[0].clone();
            for i in 0..n {
                s.push_str(&summarize(ctx.input(i)?, n_summarize));
                s.push_str(&pieces[i + 1]);
            }
            ctx.output(Tensor::scalar(s.into_bytes()));
            Ok(())
        })
    })
}

// ------------------------------------------------------------------ ragged

fn ragged_to_sparse_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let n = ctx.num_inputs();
    let splits: Vec<Vec<i64>> = (0..n - 1)
        .map(|i| ctx.input(i)?.to_i64_vec())
        .collect::<Result<_>>()?;
    let values = ctx.input(n - 1)?;
    let nvals = values.dims().first().copied().unwrap_or(1);
    let inner_dims = values.dims().get(1..).unwrap_or(&[]).to_vec();
    let inner: usize = inner_dims.iter().product();
    // Validate and find, for each level, each element's parent row and position.
    let mut prefixes: Vec<Vec<i64>> = vec![Vec::new()];
    let mut widths = Vec::new();
    let mut rows = splits.first().map_or(0, |s| s.len().saturating_sub(1));
    let nrows = rows;
    for (k, s) in splits.iter().enumerate() {
        let limit = if k + 1 < splits.len() {
            splits[k + 1].len().saturating_sub(1)
        } else {
            nvals
        } as i64;
        if s.is_empty()
            || s[0] != 0
            || s.windows(2).any(|w| w[0] > w[1])
            || s[s.len() - 1] != limit
            || s.len() != rows + 1
        {
            bail!(
                invalid_argument,
                "RaggedTensorToSparse: invalid ragged splits at level {k}"
            );
        }
        let mut next = Vec::with_capacity(limit as usize);
        let mut width = 0i64;
        for (r, w) in s.windows(2).enumerate() {
            width = width.max(w[1] - w[0]);
            for j in 0..w[1] - w[0] {
                let mut p = prefixes[r.min(prefixes.len() - 1)].clone();
                if k == 0 {
                    p = vec![r as i64];
                }
                p.push(j);
                next.push(p);
            }
        }
        widths.push(width);
        prefixes = next;
        rows = limit as usize;
    }
    let rank = 1 + splits.len() + inner_dims.len();
    let mut indices = Vec::with_capacity(prefixes.len() * inner * rank);
    for p in &prefixes {
        for j in 0..inner {
            indices.extend_from_slice(p);
            let mut rem = j;
            let mut tail = vec![0i64; inner_dims.len()];
            for (d, &size) in inner_dims.iter().enumerate().rev() {
                tail[d] = (rem % size) as i64;
                rem /= size;
            }
            indices.extend_from_slice(&tail);
        }
    }
    let total = prefixes.len() * inner;
    let flat = values.reshape(Shape::new(&[total]))?;
    let mut dense_shape = vec![nrows as i64];
    dense_shape.extend(widths);
    dense_shape.extend(inner_dims.iter().map(|&d| d as i64));
    ctx.output(Tensor::from_vec([total, rank], indices)?);
    ctx.output(flat);
    ctx.output(Tensor::vector(dense_shape));
    Ok(())
}

/// The numbers `RaggedRange` counts in, with TensorFlow's row sizes and
/// values (each the previous plus `delta`, in the type's own arithmetic, so
/// float rows accumulate rounding as TensorFlow's do).
trait RangeNum: Copy + PartialOrd + ferroflow_tensor::Element {
    const ZERO: Self;
    fn row_size(start: Self, limit: Self, delta: Self) -> Result<i64>;
    fn next(value: Self, delta: Self) -> Self;
}

macro_rules! range_int {
    ($t:ty) => {
        impl RangeNum for $t {
            const ZERO: Self = 0;
            fn row_size(start: Self, limit: Self, delta: Self) -> Result<i64> {
                let span = (limit as i128 - start as i128).abs();
                let step = (delta as i128).abs();
                Ok(((span + step - 1) / step) as i64)
            }
            fn next(value: Self, delta: Self) -> Self {
                value.wrapping_add(delta)
            }
        }
    };
}
range_int!(i32);
range_int!(i64);

fn float_size(size: f64) -> Result<i64> {
    ensure!(
        size <= i64::MAX as f64,
        invalid_argument,
        "Requires ((limit - start) / delta) <= {}",
        i64::MAX
    );
    Ok(size as i64)
}

impl RangeNum for f32 {
    const ZERO: Self = 0.0;
    fn row_size(start: Self, limit: Self, delta: Self) -> Result<i64> {
        float_size(((limit - start) / delta).abs().ceil() as f64)
    }
    fn next(value: Self, delta: Self) -> Self {
        value + delta
    }
}

impl RangeNum for f64 {
    const ZERO: Self = 0.0;
    fn row_size(start: Self, limit: Self, delta: Self) -> Result<i64> {
        float_size(((limit - start) / delta).abs().ceil())
    }
    fn next(value: Self, delta: Self) -> Self {
        value + delta
    }
}

impl RangeNum for ferroflow_tensor::bf16 {
    const ZERO: Self = ferroflow_tensor::bf16::ZERO;
    fn row_size(start: Self, limit: Self, delta: Self) -> Result<i64> {
        // Each bfloat16 operation rounds its float result back to bfloat16.
        let r = |v: f32| ferroflow_tensor::bf16::from_f32(v).to_f32();
        let q = r(r(limit.to_f32() - start.to_f32()) / delta.to_f32());
        float_size(q.abs().ceil() as f64)
    }
    fn next(value: Self, delta: Self) -> Self {
        ferroflow_tensor::bf16::from_f32(value.to_f32() + delta.to_f32())
    }
}

/// `RaggedRange`: row `r` is `range(starts[r], limits[r], deltas[r])`, scalar
/// inputs repeating for every row.
fn ragged_range_typed<T: RangeNum>(
    ins: [&Tensor; 3],
    splits_type: DType,
) -> Result<(Tensor, Tensor)> {
    let names = ["starts", "limits", "deltas"];
    let mut rows = None;
    for (t, name) in ins.iter().zip(names) {
        ensure!(
            t.rank() <= 1,
            invalid_argument,
            "RaggedRange: {name} must be a scalar or vector, got shape {}",
            t.shape()
        );
        if t.rank() == 1 {
            let n = t.dims()[0];
            ensure!(
                rows.is_none_or(|r| r == n),
                invalid_argument,
                "RaggedRange: starts, limits, and deltas must have the same shape"
            );
            rows = Some(n);
        }
    }
    let nrows = rows.unwrap_or(1);
    let vals: Vec<&[T]> = ins
        .iter()
        .map(|t| t.as_slice::<T>())
        .collect::<Result<_>>()?;
    let get = |k: usize, r: usize| {
        if ins[k].rank() == 0 {
            vals[k][0]
        } else {
            vals[k][r]
        }
    };
    let mut splits = Vec::with_capacity(nrows + 1);
    splits.push(0i64);
    for r in 0..nrows {
        let (start, limit, delta) = (get(0, r), get(1, r), get(2, r));
        ensure!(
            delta != T::ZERO,
            invalid_argument,
            "RaggedRange: Requires delta != 0"
        );
        let size = if (delta > T::ZERO && limit < start) || (delta < T::ZERO && limit > start) {
            0
        } else {
            T::row_size(start, limit, delta)?
        };
        let total = splits[r].checked_add(size).ok_or_else(|| {
            Error::invalid_argument("RaggedRange: the total range size overflowed")
        })?;
        ensure!(
            splits_type != DType::Int32 || total <= i32::MAX as i64,
            invalid_argument,
            "The total range size overflowed. Consider using int64 instead of int32 for row_splits_dtype."
        );
        splits.push(total);
    }
    let mut values = Vec::with_capacity(splits[nrows] as usize);
    for r in 0..nrows {
        let (mut value, delta) = (get(0, r), get(2, r));
        for _ in 0..splits[r + 1] - splits[r] {
            values.push(value);
            value = T::next(value, delta);
        }
    }
    let splits = if splits_type == DType::Int32 {
        Tensor::vector(splits.into_iter().map(|v| v as i32).collect())
    } else {
        Tensor::vector(splits)
    };
    Ok((splits, Tensor::vector(values)))
}

fn ragged_range_kernel(ctx: &mut OpContext<'_>, splits_type: DType) -> Result<()> {
    let ins = [ctx.input(0)?, ctx.input(1)?, ctx.input(2)?];
    let dt = ins[0].dtype();
    ensure!(
        ins.iter().all(|t| t.dtype() == dt),
        invalid_argument,
        "RaggedRange: starts, limits and deltas must have one dtype"
    );
    let (splits, values) = match dt {
        DType::Float32 => ragged_range_typed::<f32>(ins, splits_type)?,
        DType::Float64 => ragged_range_typed::<f64>(ins, splits_type)?,
        DType::Int32 => ragged_range_typed::<i32>(ins, splits_type)?,
        DType::Int64 => ragged_range_typed::<i64>(ins, splits_type)?,
        DType::BFloat16 => ragged_range_typed::<ferroflow_tensor::bf16>(ins, splits_type)?,
        d => bail!(
            invalid_argument,
            "RaggedRange: unsupported dtype {}",
            d.name()
        ),
    };
    ctx.output(splits);
    ctx.output(values);
    Ok(())
}

// ------------------------------------------------------------------ registration

fn string_join_kernel(ctx: &mut OpContext<'_>, separator: &[u8]) -> Result<()> {
    let n = ctx.num_inputs();
    let inputs: Vec<&Tensor> = (0..n).map(|i| ctx.input(i)).collect::<Result<_>>()?;
    let mut shape: Option<Shape> = None;
    for t in &inputs {
        strs(t, "StringJoin")?;
        if t.rank() == 0 {
            continue;
        }
        match &shape {
            None => shape = Some(t.shape().clone()),
            Some(s) if s != t.shape() => {
                bail!(
                    invalid_argument,
                    "StringJoin: input shapes do not match: {s} vs. {}",
                    t.shape()
                )
            }
            Some(_) => {}
        }
    }
    let count = shape.as_ref().map_or(1, |s| s.num_elements());
    let mut out = vec![Vec::new(); count];
    for (i, t) in inputs.iter().enumerate() {
        let v = strs(t, "StringJoin")?;
        for (j, o) in out.iter_mut().enumerate() {
            if i > 0 {
                o.extend_from_slice(separator);
            }
            o.extend_from_slice(if t.rank() == 0 { &v[0] } else { &v[j] });
        }
    }
    let shape = shape.unwrap_or_else(Shape::scalar);
    ctx.output(Tensor::from_vec(shape, out)?);
    Ok(())
}

fn case_factory(upper: bool) -> KernelFactory {
    factory(move |init| {
        let enc = attr_str(init, "encoding", "")?;
        let utf8 = match enc.as_str() {
            "" => false,
            "utf-8" => true,
            _ => {
                bail!(
                    invalid_argument,
                    "only utf-8 or '' (no encoding) is supported, received {enc}"
                )
            }
        };
        let op = if upper { "StringUpper" } else { "StringLower" };
        boxed(move |ctx| map_strings(ctx, op, |s| Ok(case_map(s, upper, utf8))))
    })
}

fn unit_is_utf8(init: &crate::kernel::KernelInit<'_>, op: &str) -> Result<bool> {
    match attr_str(init, "unit", "BYTE")?.as_str() {
        "BYTE" => Ok(false),
        "UTF8_CHAR" => Ok(true),
        u => Err(Error::invalid_argument(format!(
            "{op}: unit must be one of BYTE, UTF8_CHAR, got {u}"
        ))),
    }
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "StringSplit",
        factory(|init| {
            let skip = init.node.attrs.bool_or("skip_empty", true)?;
            boxed(move |ctx| split_kernel(ctx, false, skip, -1))
        }),
    );
    reg(
        "StringSplitV2",
        factory(|init| {
            let maxsplit = init.node.attrs.int_or("maxsplit", -1)?;
            boxed(move |ctx| split_kernel(ctx, true, true, maxsplit))
        }),
    );
    reg(
        "StringJoin",
        factory(|init| {
            let sep = attr_str(init, "separator", "")?.into_bytes();
            boxed(move |ctx| string_join_kernel(ctx, &sep))
        }),
    );
    reg(
        "StringLength",
        factory(|init| {
            let utf8 = unit_is_utf8(init, "StringLength")?;
            boxed(move |ctx| {
                let t = ctx.input(0)?;
                let v: Vec<i32> = strs(t, "StringLength")?
                    .iter()
                    .map(|s| if utf8 { utf8_len(s) } else { s.len() } as i32)
                    .collect();
                let shape = t.shape().clone();
                ctx.output(Tensor::from_vec(shape, v)?);
                Ok(())
            })
        }),
    );
    reg("StringLower", case_factory(false));
    reg("StringUpper", case_factory(true));
    reg(
        "StringStrip",
        factory(|_| boxed(|ctx| map_strings(ctx, "StringStrip", |s| Ok(strip(s))))),
    );
    reg(
        "Substr",
        factory(|init| {
            let utf8 = unit_is_utf8(init, "Substr")?;
            boxed(move |ctx| substr_kernel(ctx, utf8))
        }),
    );
    reg(
        "RegexFullMatch",
        factory(|_| {
            let cache = RegexCache::default();
            boxed(move |ctx| {
                let p = scalar_str(ctx.input(1)?, "RegexFullMatch", "pattern")?;
                let re = cache.get(&p, true)?;
                regex_full_match(ctx, &re)
            })
        }),
    );
    reg(
        "StaticRegexFullMatch",
        factory(|init| {
            let re = compile_regex(attr_str(init, "pattern", "")?.as_bytes(), true)?;
            boxed(move |ctx| regex_full_match(ctx, &re))
        }),
    );
    reg(
        "RegexReplace",
        factory(|init| {
            let global = init.node.attrs.bool_or("replace_global", true)?;
            let cache = RegexCache::default();
            boxed(move |ctx| {
                let p = scalar_str(ctx.input(1)?, "RegexReplace", "pattern")?;
                let rw = scalar_str(ctx.input(2)?, "RegexReplace", "rewrite")?;
                let re = cache.get(&p, false)?;
                regex_replace_all(ctx, &re, &rw, global)
            })
        }),
    );
    reg(
        "StaticRegexReplace",
        factory(|init| {
            let global = init.node.attrs.bool_or("replace_global", true)?;
            let re = compile_regex(attr_str(init, "pattern", "")?.as_bytes(), false)?;
            let rw = attr_str(init, "rewrite", "")?.into_bytes();
            convert_rewrite(&rw, &re)?;
            boxed(move |ctx| regex_replace_all(ctx, &re, &rw, global))
        }),
    );
    reg(
        "ReduceJoin",
        factory(|init| {
            let keep = init.node.attrs.bool_or("keep_dims", false)?;
            let sep = attr_str(init, "separator", "")?.into_bytes();
            boxed(move |ctx| reduce_join_kernel(ctx, keep, &sep))
        }),
    );
    reg("StringFormat", string_format_factory());
    reg("AsString", as_string_factory());
    reg(
        "StringToNumber",
        factory(|init| {
            let out = init.node.attrs.dtype_or("out_type", DType::Float32)?;
            boxed(move |ctx| to_number_kernel(ctx, out))
        }),
    );
    for op in [
        "StringToHashBucket",
        "StringToHashBucketFast",
        "StringToHashBucketStrong",
    ] {
        reg(op, hash_bucket_factory(op));
    }
    reg("Fingerprint", factory(|_| boxed(fingerprint_kernel)));
    reg("UnicodeDecode", unicode_decode_factory(false));
    reg("UnicodeDecodeWithOffsets", unicode_decode_factory(true));
    reg("UnicodeEncode", unicode_encode_factory());
    reg("UnicodeTranscode", unicode_transcode_factory());
    reg(
        "UnicodeScript",
        factory(|_| {
            boxed(|ctx| {
                let t = ctx.input(0)?;
                let v: Vec<i32> = t
                    .as_slice::<i32>()?
                    .iter()
                    .map(|&c| unicode_script(c))
                    .collect();
                let shape = t.shape().clone();
                ctx.output(Tensor::from_vec(shape, v)?);
                Ok(())
            })
        }),
    );
    reg("StringNGrams", ngrams_factory());
    reg(
        "UnsortedSegmentJoin",
        factory(|init| {
            let sep = attr_str(init, "separator", "")?.into_bytes();
            boxed(move |ctx| unsorted_segment_join_kernel(ctx, &sep))
        }),
    );
    reg(
        "RaggedTensorToSparse",
        factory(|_| boxed(ragged_to_sparse_kernel)),
    );
    reg(
        "RaggedRange",
        factory(|init| {
            let splits_type = init.node.attrs.dtype_or("Tsplits", DType::Int64)?;
            boxed(move |ctx| ragged_range_kernel(ctx, splits_type))
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ragged_range_rows_and_errors() {
        let (s, l, d) = (
            Tensor::vector(vec![0i32, 5, 8, 10]),
            Tensor::vector(vec![3i32, 3, 12, 0]),
            Tensor::vector(vec![1i32, 1, 1, -3]),
        );
        let (splits, values) = ragged_range_typed::<i32>([&s, &l, &d], DType::Int32).unwrap();
        assert_eq!(splits.as_slice::<i32>().unwrap(), [0, 3, 3, 7, 11]);
        assert_eq!(
            values.as_slice::<i32>().unwrap(),
            [0, 1, 2, 8, 9, 10, 11, 10, 7, 4, 1]
        );
        // Floats accumulate delta as TensorFlow's kernel does: the 8th value of
        // range(0, 1, 0.1) in float32 is 0.70000005, not 7 * 0.1.
        let f = |v: f32| Tensor::scalar(v);
        let (splits, values) =
            ragged_range_typed::<f32>([&f(0.0), &f(1.0), &f(0.1)], DType::Int64).unwrap();
        assert_eq!(splits.as_slice::<i64>().unwrap(), [0, 10]);
        assert_eq!(values.as_slice::<f32>().unwrap()[7].to_bits(), 0x3f33_3334);
        let zero = Tensor::scalar(0i64);
        let err = ragged_range_typed::<i64>([&zero, &Tensor::scalar(3i64), &zero], DType::Int64);
        assert!(err.unwrap_err().to_string().contains("Requires delta != 0"));
        let big = Tensor::scalar(i64::MAX);
        let one = Tensor::scalar(1i64);
        let err = ragged_range_typed::<i64>([&zero, &big, &one], DType::Int32);
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("int64 instead of int32"));
    }

    #[test]
    fn tf_hash64_matches_tensorflow_buckets() {
        // tf.strings.to_hash_bucket(["", "a", "hello world 12345"], 1000000007) in TF 2.21.
        let b: Vec<u64> = [&b""[..], b"a", b"hello world 12345"]
            .iter()
            .map(|s| tf_hash64(s) % 1_000_000_007)
            .collect();
        assert_eq!(b, [727_638_525, 395_105_680, 819_059_317]);
    }

    #[test]
    fn siphash_matches_tensorflow_buckets() {
        // tf.strings.to_hash_bucket_strong(["", "a", "hello world"], 1000003, [1, 2]).
        let b: Vec<u64> = [&b""[..], b"a", b"hello world"]
            .iter()
            .map(|s| siphash24(1, 2, s) % 1_000_003)
            .collect();
        assert_eq!(b, [383_377, 332_029, 598_105]);
    }

    #[test]
    fn siphash_reference_vector() {
        // The SipHash paper's test vector: key 00..0f, message 00..0e.
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let msg: Vec<u8> = (0..15).collect();
        assert_eq!(siphash24(k0, k1, &msg), 0xa129_ca61_49be_45e5);
    }

    #[test]
    fn splits_follow_python_and_tf1() {
        let t = |v: Vec<&[u8]>| v.iter().map(|s| s.to_vec()).collect::<Vec<_>>();
        assert_eq!(
            t(split_v2(b"  a b  c ", b"", -1)),
            t(vec![b"a", b"b", b"c"])
        );
        assert_eq!(t(split_v2(b"  a b  c ", b"", 1)), t(vec![b"a", b"b  c "]));
        assert_eq!(
            t(split_v2(b"1<>2<><>3", b"<>", -1)),
            t(vec![b"1", b"2", b"", b"3"])
        );
        assert_eq!(t(split_v2(b"a,b,c", b",", 1)), t(vec![b"a", b"b,c"]));
        assert_eq!(t(split_v2(b"", b",", -1)), t(vec![b""]));
        assert_eq!(
            t(split_v1(b"a,b;;c", b",;", false)),
            t(vec![b"a", b"b", b"", b"c"])
        );
        assert_eq!(
            t(split_v1(b"a,b;;c", b",;", true)),
            t(vec![b"a", b"b", b"c"])
        );
    }

    #[test]
    fn printf_formats_match_c() {
        let f = |conv, p: Option<usize>, x: f64| {
            Printf {
                left: false,
                zero: false,
                plus: false,
                space: false,
                width: 0,
                precision: p,
                conv,
            }
            .float(x)
        };
        assert_eq!(f(b'f', None, 1e10), "10000000000.000000");
        assert_eq!(f(b'e', Some(3), -2.25), "-2.250e+00");
        assert_eq!(f(b'e', None, 1e-5), "1.000000e-05");
        assert_eq!(f(b'g', None, 1e-5), "1e-05");
        assert_eq!(f(b'g', None, 1e10), "1e+10");
        assert_eq!(f(b'g', None, 123456.0), "123456");
        assert_eq!(f(b'g', None, 1234567.0), "1.23457e+06");
        assert_eq!(f(b'g', None, 0.0001), "0.0001");
        assert_eq!(f(b'g', None, 0.0), "0");
        assert_eq!(f(b'g', Some(17), 1.0 / 3.0), "0.33333333333333331");
        assert_eq!(shortest_float(0.1f32 as f64, 6, 9), "0.1");
        assert_eq!(shortest_float(1.0 / 3.0, 15, 17), "0.33333333333333331");
    }

    #[test]
    fn utf8_decode_replaces_maximal_subparts() {
        let opts = DecodeOpts {
            errors: OnError::Replace,
            replacement: 0xfffd,
            replace_control: false,
        };
        let d = decode(b"a\xff\xe2\x82b\xf0\x9f\x98\x80", Encoding::Utf8, opts).unwrap();
        assert_eq!(
            d,
            vec![(97, 0), (0xfffd, 1), (0xfffd, 2), (98, 4), (0x1f600, 5)]
        );
    }

    #[test]
    fn script_table_lookups() {
        assert_eq!(unicode_script(i32::from(b'a')), 25); // Latin
        assert_eq!(unicode_script(0x4e2d), 17); // Han
        assert_eq!(unicode_script(0x0416), 8); // Cyrillic
        assert_eq!(unicode_script(i32::from(b' ')), 0); // Common
        assert_eq!(unicode_script(-1), -1);
        assert_eq!(unicode_script(0x110000), -1);
    }
}
