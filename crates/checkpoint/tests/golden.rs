//! Golden checkpoints written by TensorFlow 2.21 (`tests/fixtures/checkpoints`):
//! every tensor reads back with the manifest's dtype, shape and value, and
//! re-writing the same tensors gives TensorFlow's `.index` and `.data`
//! files byte for byte. Every parameter comes from the fixture manifests.

mod common;

use common::*;
use ferroflow_checkpoint::{
    dtype_string, merge_bundles, slice::decode_slice_key, BundleReader, BundleWriter, MergeOptions,
    RawData, RawTensor, TensorSlice,
};
use ferroflow_tensor::Code;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// TensorFlow's Python dtype name for an enum (`float32`, `string`...).
fn py_dtype(e: i32) -> &'static str {
    match e {
        1 => "float32",
        2 => "float64",
        3 => "int32",
        4 => "uint8",
        5 => "int16",
        6 => "int8",
        7 => "string",
        8 => "complex64",
        9 => "int64",
        10 => "bool",
        14 => "bfloat16",
        17 => "uint16",
        18 => "complex128",
        19 => "float16",
        22 => "uint32",
        23 => "uint64",
        _ => "?",
    }
}

/// The manifest's listing for `prefix` (the main checkpoint, `written`, or
/// the latest kept one).
fn listing_for(manifest: &Json, case: &Path, prefix: &Path) -> Option<Vec<(String, Vec<i64>)>> {
    let rel = prefix
        .strip_prefix(case)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let key = if manifest["checkpoint_prefix"].as_str() == Some(&rel) {
        "list_variables"
    } else if manifest["written_prefix"].as_str() == Some(&rel) {
        "written_list_variables"
    } else if manifest["latest_checkpoint_basename"].as_str()
        == prefix.file_name().and_then(|f| f.to_str())
    {
        "list_variables_latest"
    } else {
        return None;
    };
    Some(
        manifest[key]
            .as_array()?
            .iter()
            .map(|e| (e[0].as_str().unwrap().to_string(), json_shape(&e[1])))
            .collect(),
    )
}

/// Expected values for one checkpoint of a case.
fn values_for(
    manifest: &Json,
    case: &Path,
    prefix: &Path,
    reader: &BundleReader,
) -> BTreeMap<String, RawTensor> {
    if let Some(v) = kept_values(manifest, prefix, reader) {
        return v;
    }
    let mut all = expected_values(case, manifest);
    // `written` holds the same keys; keep only what this checkpoint lists.
    all.retain(|k, _| reader.contains(k));
    all
}

fn check_read(case: &Path, prefix: &Path) -> usize {
    let manifest = read_json(&case.join("list_variables.json"));
    let reader = BundleReader::open(prefix).unwrap();
    let label = prefix.display().to_string();
    reader
        .verify()
        .unwrap_or_else(|e| panic!("{label}: verify: {e}"));
    let vars = reader.variables();
    if let Some(listing) = listing_for(&manifest, case, prefix) {
        let ours: Vec<(String, Vec<i64>)> = vars
            .iter()
            .map(|v| (v.name.clone(), v.shape.clone()))
            .collect();
        assert_eq!(ours, listing, "{label}: list_variables");
    }
    if manifest["checkpoint_prefix"].as_str()
        == Some(prefix.strip_prefix(case).unwrap().to_str().unwrap())
    {
        for v in manifest["variables"].as_array().into_iter().flatten() {
            let name = v["name"].as_str().unwrap();
            let (dtype, shape) = reader.dtype_and_shape(name).unwrap();
            assert_eq!(
                py_dtype(dtype),
                v["dtype"].as_str().unwrap(),
                "{label}: {name}"
            );
            assert_eq!(shape, json_shape(&v["shape"]), "{label}: {name}");
        }
    }
    let expected = values_for(&manifest, case, prefix, &reader);
    assert!(!expected.is_empty(), "{label}: no expected values");
    for (name, want) in &expected {
        let got = reader.read_raw(name).unwrap();
        assert_eq!(got.dtype, want.dtype, "{label}: {name} dtype");
        assert_eq!(got.shape, want.shape, "{label}: {name} shape");
        assert!(got.data == want.data, "{label}: {name} values differ");
        // Through a ferroflow tensor where ferroflow has the dtype.
        match reader.read(name) {
            Ok(t) => {
                assert_eq!(t.dtype().as_enum(), want.dtype);
                assert_eq!(RawTensor::from_tensor(&t), *want, "{label}: {name} tensor");
            }
            Err(e) => {
                assert_eq!(e.code(), Some(Code::Unimplemented), "{label}: {name}: {e}");
                assert!(e.message().contains(&*dtype_string(want.dtype)), "{e}");
            }
        }
    }
    expected.len()
}

#[test]
fn golden_checkpoints_read_with_the_manifest_values() {
    let mut checked = 0;
    for case in cases() {
        for prefix in prefixes(&case) {
            checked += check_read(&case, &prefix);
        }
    }
    assert!(checked > 20, "only {checked} tensors checked");
}

/// Where TensorFlow put each stored entry: `(shard, offset, size, key)`,
/// in the order it added them (empty tensors before a tensor at the same
/// offset).
fn add_order(reader: &BundleReader) -> Vec<(i32, i64, i64, Vec<u8>)> {
    let mut v: Vec<_> = reader
        .entries()
        .filter(|(_, e)| e.slices.is_empty())
        .map(|(k, e)| (e.shard_id, e.offset, e.size, k.to_vec()))
        .collect();
    v.sort_by_key(|(s, o, n, _)| (*s, *o, *n != 0));
    v
}

/// Writes the entries of one shard, in TensorFlow's order, as a bundle.
fn write_shard(
    prefix: &Path,
    entries: &[(i32, i64, i64, Vec<u8>)],
    values: &BTreeMap<String, RawTensor>,
) {
    let mut w = BundleWriter::new(prefix).unwrap();
    for (_, _, _, key) in entries {
        let (name, slice) = match decode_slice_key(key) {
            Some((n, s)) => (String::from_utf8(n).unwrap(), Some(s)),
            None => (String::from_utf8(key.clone()).unwrap(), None),
        };
        let full = values
            .get(&name)
            .unwrap_or_else(|| panic!("{}: no value for {name}", prefix.display()));
        let part = match &slice {
            Some(s) => raw_slice(full, s),
            None => full.clone(),
        };
        match (slice, part.clone().into_tensor(&name)) {
            (None, Ok(t)) => w.add(&name, &t).unwrap(),
            (None, Err(_)) => match &part.data {
                RawData::Bytes(b) => w.add_raw(&name, part.dtype, &part.shape, b).unwrap(),
                RawData::Strings(_) => unreachable!("strings are ferroflow tensors"),
            },
            (Some(s), Ok(t)) => w.add_slice(&name, &full.shape, &s, &t).unwrap(),
            (Some(_), Err(e)) => panic!("{name}: slices of this dtype: {e}"),
        }
    }
    w.finish().unwrap();
}

fn files_of(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn check_rewrite(case: &Path, prefix: &Path) {
    let manifest = read_json(&case.join("list_variables.json"));
    let golden = BundleReader::open(prefix).unwrap();
    let values = values_for(&manifest, case, prefix, &golden);
    let label = prefix.display().to_string();
    let tmp = TempDir::new("rewrite");
    let stem = prefix.file_name().unwrap();
    let out = tmp.path().join(stem);
    let order = add_order(&golden);
    let n = golden.num_shards() as i32;
    if n == 1 {
        write_shard(&out, &order, &values);
    } else {
        // As the sharded Saver does: one bundle per device, then a merge.
        let parts: Vec<PathBuf> = (0..n)
            .map(|s| {
                let part = tmp
                    .path()
                    .join(format!("{}_temp", stem.to_str().unwrap()))
                    .join(format!("part-{s:05}-of-{n:05}"));
                let mine: Vec<_> = order.iter().filter(|e| e.0 == s).cloned().collect();
                write_shard(&part, &mine, &values);
                part
            })
            .collect();
        merge_bundles(&parts, &out, MergeOptions::default()).unwrap();
    }
    let ours = files_of(tmp.path());
    let want: Vec<PathBuf> = std::iter::once(ferroflow_checkpoint::index_path(prefix))
        .chain((0..n).map(|s| ferroflow_checkpoint::data_path(prefix, s, n)))
        .collect();
    assert_eq!(
        ours.iter()
            .map(|p| p.file_name().unwrap())
            .collect::<Vec<_>>(),
        {
            let mut w: Vec<_> = want.iter().map(|p| p.file_name().unwrap()).collect();
            w.sort();
            w
        },
        "{label}: files written"
    );
    for file in &want {
        let theirs = std::fs::read(file).unwrap();
        let mine = std::fs::read(tmp.path().join(file.file_name().unwrap())).unwrap();
        if theirs != mine {
            let at = theirs.iter().zip(&mine).position(|(a, b)| a != b);
            panic!(
                "{}: differs from TensorFlow's (sizes {} vs {}, first difference at {at:?})",
                file.display(),
                mine.len(),
                theirs.len()
            );
        }
    }
}

#[test]
fn rewriting_golden_tensors_gives_tensorflows_bytes() {
    let mut n = 0;
    for case in cases() {
        for prefix in prefixes(&case) {
            check_rewrite(&case, &prefix);
            n += 1;
        }
    }
    assert!(n >= 6, "only {n} checkpoints re-written");
}

#[test]
fn partitioned_tensors_read_whole_and_by_any_sub_slice() {
    let mut checked = 0;
    for case in cases() {
        let manifest = read_json(&case.join("list_variables.json"));
        let Some(parts) = manifest["partitions"].as_array() else {
            continue;
        };
        let prefix = case.join(manifest["checkpoint_prefix"].as_str().unwrap());
        let reader = BundleReader::open(&prefix).unwrap();
        let values = expected_values(&case, &manifest);
        for p in parts {
            let full_name = p["full_name"].as_str().unwrap();
            let spec = p["save_slice_info_spec"].as_str().unwrap();
            let parsed = ferroflow_checkpoint::parse_shape_and_slice(spec).unwrap();
            let full = &values[full_name];
            assert_eq!(parsed.full_shape, full.shape);
            // The stored partition itself.
            let got = reader.read_slice(full_name, &parsed.slice).unwrap();
            assert_eq!(RawTensor::from_tensor(&got), raw_slice(full, &parsed.slice));
            checked += 1;
        }
        // Every rectangular sub-slice, most spanning several stored slices.
        let name = parts[0]["full_name"].as_str().unwrap();
        let full = &values[name];
        let dims = &full.shape;
        for s0 in 0..dims[0] {
            for l0 in 1..=dims[0] - s0 {
                for (s1, l1) in [(0, dims[1]), (1.min(dims[1] - 1), 1)] {
                    let slice = TensorSlice::parse(&format!("{s0},{l0}:{s1},{l1}")).unwrap();
                    let got = reader.read_slice(name, &slice).unwrap();
                    assert_eq!(
                        RawTensor::from_tensor(&got),
                        raw_slice(full, &slice),
                        "{slice}"
                    );
                    checked += 1;
                }
            }
        }
        let e = reader
            .read_slice(
                name,
                &TensorSlice::parse(&format!("0,{}:-", dims[0] + 1)).unwrap(),
            )
            .unwrap_err();
        assert_eq!(e.code(), Some(Code::InvalidArgument), "{e}");
    }
    assert!(checked > 0, "no partitioned case in the fixtures");
}

#[test]
fn debug_string_lists_stored_entries_like_tensorflow() {
    for case in cases() {
        for prefix in prefixes(&case) {
            let reader = BundleReader::open(&prefix).unwrap();
            let text = reader.debug_string();
            let lines: Vec<&[u8]> = text
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .collect();
            let stored = reader
                .entries()
                .filter(|(_, e)| e.slices.is_empty())
                .count();
            assert_eq!(lines.len(), stored);
            for (key, e) in reader.entries().filter(|(_, e)| e.slices.is_empty()) {
                let dims: Vec<String> = e
                    .shape
                    .as_ref()
                    .map(|s| s.dims())
                    .unwrap_or_default()
                    .iter()
                    .map(|d| d.to_string())
                    .collect();
                let mut line = key.to_vec();
                line.extend_from_slice(
                    format!(
                        " ({}) [{}]",
                        ferroflow_checkpoint::dtype_enum_name(e.dtype),
                        dims.join(",")
                    )
                    .as_bytes(),
                );
                assert!(lines.contains(&line.as_slice()));
            }
        }
    }
}
