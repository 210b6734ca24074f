//! The small string ops a sharded `tf.train.Saver` puts in its graph:
//! `StringJoin` (the temporary shard prefix), `ShardedFilename`
//! (`<base>-00000-of-00002`) and `StaticRegexFullMatch` (TensorFlow checks
//! for an `s3://` prefix to choose the temporary-shard suffix).

use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{DType, Error, Result, Tensor};

fn strings<'a>(t: &'a Tensor, what: &str) -> Result<&'a [Vec<u8>]> {
    t.as_slice::<Vec<u8>>()
        .map_err(|_| Error::invalid_argument(format!("Input {what} must be a string tensor")))
}

fn infer_string_join(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let mut shape = PartialShape::scalar();
    for i in 0..ctx.num_inputs() {
        ctx.expect_dtype(i, &[DType::String])?;
        let s = ctx.shape(i);
        if s.rank() == Some(0) {
            continue;
        }
        shape = if shape.rank() == Some(0) {
            s.clone()
        } else {
            shape.merge(s).ok_or_else(|| {
                ctx.shape_error(format!(
                    "StringJoin inputs must be scalars or have the same shape: {shape:?} vs {s:?}"
                ))
            })?
        };
    }
    Ok(vec![OutputInfo::new(DType::String, shape)])
}

fn string_join_kernel(ctx: &mut OpContext<'_>, separator: &[u8]) -> Result<()> {
    let n = ctx.num_inputs();
    let inputs: Vec<&Tensor> = (0..n).map(|i| ctx.input(i)).collect::<Result<_>>()?;
    let mut shape = None;
    for (i, t) in inputs.iter().enumerate() {
        strings(t, &format!("{i} of StringJoin"))?;
        if t.rank() == 0 {
            continue;
        }
        match &shape {
            None => shape = Some(t.shape().clone()),
            Some(s) if s != t.shape() => {
                return Err(Error::invalid_argument(format!(
                    "StringJoin: input shapes do not match: {s} vs. {}",
                    t.shape()
                )))
            }
            Some(_) => {}
        }
    }
    let count = shape.as_ref().map_or(1, |s| s.num_elements());
    let mut out = vec![Vec::new(); count];
    for (i, t) in inputs.iter().enumerate() {
        let v = strings(t, "StringJoin")?;
        for (j, o) in out.iter_mut().enumerate() {
            if i > 0 {
                o.extend_from_slice(separator);
            }
            o.extend_from_slice(if t.rank() == 0 { &v[0] } else { &v[j] });
        }
    }
    let t = match shape {
        Some(s) => Tensor::from_vec(s, out)?,
        None => Tensor::scalar(out.pop().unwrap_or_default()),
    };
    ctx.output(t);
    Ok(())
}

fn infer_sharded_filename(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    if ctx.num_inputs() != 3 {
        return Err(Error::value(format!(
            "'{}' (ShardedFilename) takes basename, shard and num_shards",
            ctx.name
        )));
    }
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.expect_dtype(2, &[DType::Int32])?;
    for i in 0..3 {
        ctx.expect_rank(i, 0)?;
    }
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

fn sharded_filename_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let base = match strings(ctx.input(0)?, "basename")? {
        [b] => b.clone(),
        v => {
            return Err(Error::invalid_argument(format!(
                "ShardedFilename: basename must be a scalar, got {} elements",
                v.len()
            )))
        }
    };
    let shard = ctx.input(1)?.scalar_i64()?;
    let num_shards = ctx.input(2)?.scalar_i64()?;
    let mut name = base;
    name.extend_from_slice(format!("-{shard:05}-of-{num_shards:05}").as_bytes());
    ctx.output(Tensor::scalar(name));
    Ok(())
}

/// One element of the regular expressions `StaticRegexFullMatch` accepts:
/// literal bytes, `.` (any byte), each optionally followed by `*`.
#[derive(Clone, Copy, Debug)]
enum Atom {
    Byte(u8),
    Any,
}

#[derive(Clone, Copy, Debug)]
struct Piece {
    atom: Atom,
    star: bool,
}

/// Compiles the subset of RE2 syntax ferroflow supports (literals, `\`
/// escapes, `.`, `*`, and the anchors `^`/`$` at the ends, which full
/// matching implies anyway). Anything else is an Unimplemented error.
fn compile_pattern(pattern: &str) -> Result<Vec<Piece>> {
    let bytes = pattern.as_bytes();
    let mut body = bytes;
    if let [b'^', rest @ ..] = body {
        body = rest;
    }
    if body.ends_with(b"$") && !body.ends_with(b"\\$") {
        body = &body[..body.len() - 1];
    }
    let mut pieces: Vec<Piece> = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let atom = match body[i] {
            b'\\' if i + 1 < body.len() && !body[i + 1].is_ascii_alphanumeric() => {
                i += 1;
                Atom::Byte(body[i])
            }
            b'.' => Atom::Any,
            b'*' => {
                match pieces.last_mut() {
                    Some(p) if !p.star => p.star = true,
                    _ => {
                        return Err(Error::invalid_argument(format!(
                            "Invalid pattern: {pattern} (misplaced '*')"
                        )))
                    }
                }
                i += 1;
                continue;
            }
            c @ (b'\\' | b'[' | b']' | b'(' | b')' | b'{' | b'}' | b'|' | b'+' | b'?' | b'^'
            | b'$') => {
                return Err(Error::unimplemented(format!(
                    "StaticRegexFullMatch: '{}' in pattern {pattern} is not supported \
                     (only literals, '.', '*' and the anchors '^'/'$')",
                    c as char
                )))
            }
            c => Atom::Byte(c),
        };
        pieces.push(Piece { atom, star: false });
        i += 1;
    }
    Ok(pieces)
}

fn full_match(pieces: &[Piece], s: &[u8]) -> bool {
    // reach[j]: the pieces so far can match exactly s[..j].
    let n = s.len();
    let mut reach = vec![false; n + 1];
    reach[0] = true;
    for p in pieces {
        let hits = |c: u8| match p.atom {
            Atom::Any => true,
            Atom::Byte(b) => b == c,
        };
        let mut next = vec![false; n + 1];
        for j in 0..=n {
            next[j] = if p.star {
                reach[j] || (j > 0 && next[j - 1] && hits(s[j - 1]))
            } else {
                j > 0 && reach[j - 1] && hits(s[j - 1])
            };
        }
        reach = next;
    }
    reach[n]
}

fn infer_regex(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    compile_pattern(&ctx.attrs().str_or("pattern", "")?)?;
    Ok(vec![OutputInfo::new(DType::Bool, ctx.shape(0).clone())])
}

fn regex_kernel(ctx: &mut OpContext<'_>, pieces: &[Piece]) -> Result<()> {
    let t = ctx.input(0)?;
    let v: Vec<bool> = strings(t, "input")?
        .iter()
        .map(|s| full_match(pieces, s))
        .collect();
    let shape = t.shape().clone();
    ctx.output(Tensor::from_vec(shape, v)?);
    Ok(())
}

/// Graph definitions of the string ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("StringJoin", &["inputs*"], infer_string_join),
        OpDef::new(
            "ShardedFilename",
            &["basename", "shard", "num_shards"],
            infer_sharded_filename,
        ),
        OpDef::new("StaticRegexFullMatch", &["input"], infer_regex),
    ]
}

/// Kernels of the string ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "StringJoin",
            factory(|init| {
                let sep = init.node.attrs.str_or("separator", "")?.into_bytes();
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    string_join_kernel(ctx, &sep)
                }))
            }),
        ),
        (
            "ShardedFilename",
            factory(|_| Ok(Box::new(sharded_filename_kernel))),
        ),
        (
            "StaticRegexFullMatch",
            factory(|init| {
                let pieces = compile_pattern(&init.node.attrs.str_or("pattern", "")?)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    regex_kernel(ctx, &pieces)
                }))
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        full_match(&compile_pattern(p).unwrap(), s.as_bytes())
    }

    #[test]
    fn regex_subset() {
        assert!(m("^s3://.*", "s3://bucket/x"));
        assert!(!m("^s3://.*", "/tmp/s3://x"));
        assert!(!m("^s3://.*", "s3:/"));
        assert!(m("a.c", "abc"));
        assert!(!m("a.c", "abcd"));
        assert!(m("a*b*", ""));
        assert!(m("a*b*", "aaabb"));
        assert!(!m("a*b*", "aba"));
        assert!(m("x.*y.*z", "x12y34z"));
        assert!(m("\\.txt", ".txt"));
        assert!(!m("\\.txt", "atxt"));
        assert!(compile_pattern("a|b").is_err());
        assert!(compile_pattern("*a").is_err());
    }
}
