//! Whole-file ops: `ReadFile`, `WriteFile` (atomic: a temporary file in
//! the same directory, synced, then renamed) and `MatchingFiles` (glob
//! patterns, results sorted as TensorFlow sorts them).
//!
//! [`matching_files`] is the glob itself, for `Dataset.list_files` too.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use ferroflow_graph::{InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, DType, Error, Result, Tensor};

/// Whether `name` matches the glob `pat` (`*`, `?`, `[abc]`, `[a-z]`,
/// `[!a]`, `\` escapes), as TensorFlow's `fnmatch`-style matching does
/// within one path component.
pub fn glob_match(pat: &[u8], name: &[u8]) -> bool {
    // Iterative matching with backtracking to the last `*`.
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pat.len() {
            match pat[p] {
                b'*' => {
                    star = Some((p, n));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    n += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class_match(pat, p, name[n]) {
                        if matched {
                            p = next;
                            n += 1;
                            continue;
                        }
                    } else if name[n] == b'[' {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
                b'\\' if p + 1 < pat.len() => {
                    if pat[p + 1] == name[n] {
                        p += 2;
                        n += 1;
                        continue;
                    }
                }
                c => {
                    if c == name[n] {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    while p < pat.len() && pat[p] == b'*' {
        p += 1;
    }
    p == pat.len()
}

/// Matches `c` against the class starting at `pat[start] == '['`: whether
/// it matched and where the pattern continues, or `None` when the class is
/// not closed (then `[` is literal).
fn class_match(pat: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = i < pat.len() && (pat[i] == b'!' || pat[i] == b'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pat.len() && (pat[i] != b']' || first) {
        first = false;
        let lo = pat[i];
        if i + 2 < pat.len() && pat[i + 1] == b'-' && pat[i + 2] != b']' {
            if lo <= c && c <= pat[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if lo == c {
                matched = true;
            }
            i += 1;
        }
    }
    if i >= pat.len() {
        return None;
    }
    Some((matched != negate, i + 1))
}

fn has_wildcard(s: &str) -> bool {
    s.bytes().any(|b| matches!(b, b'*' | b'?' | b'['))
}

/// The paths matching the glob `pattern`, sorted. Wildcards may appear in
/// any path component; a pattern without wildcards matches itself if it
/// exists. A directory that cannot be read contributes nothing, as in
/// TensorFlow.
pub fn matching_files(pattern: &str) -> Result<Vec<String>> {
    if !has_wildcard(pattern) {
        return Ok(if Path::new(pattern).exists() {
            vec![pattern.to_string()]
        } else {
            Vec::new()
        });
    }
    let absolute = pattern.starts_with('/');
    let parts: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    // Start from the longest wildcard-free prefix.
    let fixed = parts.iter().take_while(|p| !has_wildcard(p)).count();
    let mut base = String::new();
    if absolute {
        base.push('/');
    }
    base.push_str(&parts[..fixed].join("/"));
    let mut current: Vec<String> = vec![base];
    for (k, part) in parts[fixed..].iter().enumerate() {
        let last = fixed + k + 1 == parts.len();
        let mut next = Vec::new();
        for dir in &current {
            if !has_wildcard(part) {
                let p = join(dir, part);
                if Path::new(&p).exists() {
                    next.push(p);
                }
                continue;
            }
            let read_from = if dir.is_empty() { "." } else { dir.as_str() };
            let Ok(entries) = fs::read_dir(read_from) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if !glob_match(part.as_bytes(), name.as_bytes()) {
                    continue;
                }
                let p = join(dir, &name);
                if last || Path::new(&p).is_dir() {
                    next.push(p);
                }
            }
        }
        current = next;
    }
    current.sort();
    Ok(current)
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Reads a whole file; a missing file is `NotFoundError` naming it.
pub fn read_file(path: &str) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| io_error(&e, path))
}

/// TensorFlow's error for a failed file operation on `path`.
pub fn io_error(e: &std::io::Error, path: &str) -> Error {
    use std::io::ErrorKind;
    // TensorFlow's wording: the kind alone for the errors it names, the whole error otherwise.
    match e.kind() {
        ErrorKind::NotFound | ErrorKind::PermissionDenied | ErrorKind::AlreadyExists => {
            Error::io(e, format_args!("{path}; {}", e.kind()))
        }
        _ => Error::io(e, format_args!("{path}; {e}")),
    }
}

/// Writes `contents` to `path` atomically (temporary file, fsync, rename),
/// creating missing parent directories as TensorFlow's `WriteFile` does.
pub fn write_file_atomic(path: &str, contents: &[u8]) -> Result<()> {
    let target = PathBuf::from(path);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    fs::create_dir_all(&dir).map_err(|e| io_error(&e, &dir.display().to_string()))?;
    let file_name = target
        .file_name()
        .ok_or_else(|| Error::invalid_argument(format!("{path} is not a file name")))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}.{}",
        file_name.to_string_lossy(),
        std::process::id(),
        crate::queue::next_resource_id()
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        fs::rename(&tmp, &target)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(io_error(&e, path));
    }
    Ok(())
}

fn infer_read(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_rank(0, 0)?;
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

fn infer_write(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_dtype(1, &[DType::String])?;
    ctx.expect_rank(0, 0)?;
    ctx.expect_rank(1, 0)?;
    Ok(Vec::new())
}

fn infer_matching(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    if ctx.shape(0).rank().is_some_and(|r| r > 1) {
        return Err(ctx.shape_error("Shape must be at most rank 1"));
    }
    Ok(vec![OutputInfo::new(
        DType::String,
        PartialShape::from_dims(vec![None]),
    )])
}

fn read_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let path = ctx.input(0)?.scalar_string("filename")?;
    let bytes = read_file(&path)?;
    ctx.output(Tensor::scalar(bytes));
    Ok(())
}

fn write_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let path = ctx.input(0)?.scalar_string("filename")?;
    let contents = ctx.input(1)?;
    let bytes = match (contents.rank(), contents.as_slice::<Vec<u8>>()) {
        (0, Ok([b])) => b,
        _ => {
            bail!(
                invalid_argument,
                "contents must be a scalar string, got shape {}",
                contents.shape()
            )
        }
    };
    write_file_atomic(&path, bytes)
}

fn matching_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let t = ctx.input(0)?;
    if t.rank() > 1 {
        bail!(
            invalid_argument,
            "Input patterns tensor must be scalar or vector, but had shape: {}",
            t.shape()
        );
    }
    let mut all = Vec::new();
    for p in t.as_slice::<Vec<u8>>()? {
        all.extend(matching_files(&String::from_utf8_lossy(p))?);
    }
    all.sort();
    let out: Vec<Vec<u8>> = all.into_iter().map(String::into_bytes).collect();
    ctx.output(Tensor::vector(out));
    Ok(())
}

/// The graph-level definitions of the file ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("ReadFile", &["filename"], infer_read),
        OpDef::new("WriteFile", &["filename", "contents"], infer_write).stateful(),
        OpDef::new("MatchingFiles", &["pattern"], infer_matching),
    ]
}

/// The runtime kernels of the file ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        ("ReadFile", factory(|_| Ok(Box::new(read_kernel)))),
        ("WriteFile", factory(|_| Ok(Box::new(write_kernel)))),
        ("MatchingFiles", factory(|_| Ok(Box::new(matching_kernel)))),
    ]
}

/// Registers this module's ops and kernels.
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(b"*.txt", b"a.txt"));
        assert!(!glob_match(b"*.txt", b"a.txt2"));
        assert!(glob_match(b"a?c", b"abc"));
        assert!(glob_match(b"f[0-9]", b"f7"));
        assert!(!glob_match(b"f[!0-9]", b"f7"));
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"a*b*c", b"axxbyyc"));
    }

    #[test]
    fn matches_sorted_across_directories() {
        let dir = std::env::temp_dir().join(format!("ff_glob_{}", std::process::id()));
        for sub in ["d1", "d2"] {
            fs::create_dir_all(dir.join(sub)).unwrap();
            for f in ["b.rec", "a.rec", "c.txt"] {
                fs::write(dir.join(sub).join(f), b"x").unwrap();
            }
        }
        let pat = format!("{}/d*/*.rec", dir.display());
        let got = matching_files(&pat).unwrap();
        let want: Vec<String> = ["d1/a.rec", "d1/b.rec", "d2/a.rec", "d2/b.rec"]
            .iter()
            .map(|s| format!("{}/{s}", dir.display()))
            .collect();
        assert_eq!(got, want);
        fs::remove_dir_all(&dir).unwrap();
    }
}
