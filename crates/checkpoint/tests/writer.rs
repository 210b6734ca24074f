//! Writing bundles: round trips of every dtype, slices, merges of sharded
//! saves, TensorFlow's errors, and crash safety (temporary files, fsync,
//! rename data first and index last).

mod common;

use common::TempDir;
use ferroflow_checkpoint::{
    data_path, index_path, merge_bundles, save, BundleReader, BundleWriter, MergeOptions, RawData,
    RawTensor, SaveItem, TensorSlice,
};
use ferroflow_tensor::{bf16, f16, Code, Complex32, Tensor};
use std::path::Path;

fn every_dtype() -> Vec<(&'static str, Tensor)> {
    vec![
        (
            "f32",
            Tensor::from_vec(
                [2, 3],
                vec![1.5f32, -2.0, 0.0, f32::MAX, f32::MIN_POSITIVE, -0.0],
            )
            .unwrap(),
        ),
        ("f64", Tensor::vector(vec![std::f64::consts::PI, -1e300])),
        (
            "f16",
            Tensor::from_vec([2], vec![f16::from_f32(0.5), f16::from_f32(-65504.0)]).unwrap(),
        ),
        (
            "bf16",
            Tensor::from_vec(
                [3],
                vec![
                    bf16::from_f32(1.0),
                    bf16::from_f32(-3.5),
                    bf16::from_f32(1e30),
                ],
            )
            .unwrap(),
        ),
        ("i8", Tensor::vector(vec![i8::MIN, 0, i8::MAX])),
        ("i16", Tensor::vector(vec![i16::MIN, 7, i16::MAX])),
        (
            "i32",
            Tensor::from_vec([2, 2], vec![i32::MIN, -1, 1, i32::MAX]).unwrap(),
        ),
        ("i64", Tensor::scalar(i64::MIN)),
        (
            "u8",
            Tensor::from_vec([1, 2, 2], vec![0u8, 1, 254, 255]).unwrap(),
        ),
        ("u16", Tensor::vector(vec![0u16, 65535])),
        ("bool", Tensor::vector(vec![true, false, true])),
        (
            "str",
            Tensor::vector(vec![
                b"".to_vec(),
                b"hello".to_vec(),
                vec![0, 255, 10],
                vec![b'x'; 300],
            ]),
        ),
        ("str_scalar", Tensor::scalar(b"scalar".to_vec())),
        (
            "empty_f32",
            Tensor::from_vec([0, 3], Vec::<f32>::new()).unwrap(),
        ),
        (
            "empty_str",
            Tensor::from_vec([0], Vec::<Vec<u8>>::new()).unwrap(),
        ),
        ("scope/with/slashes", Tensor::scalar(3.0f32)),
    ]
}

fn same(a: &Tensor, b: &Tensor) -> bool {
    RawTensor::from_tensor(a) == RawTensor::from_tensor(b)
}

#[test]
fn every_dtype_round_trips() {
    let tmp = TempDir::new("roundtrip");
    let prefix = tmp.path().join("sub/dir/model.ckpt");
    let tensors = every_dtype();
    let mut w = BundleWriter::new(&prefix).unwrap();
    // Added in reverse: the data file is in add order, the index sorted.
    for (name, t) in tensors.iter().rev() {
        w.add(name, t).unwrap();
    }
    w.add_raw(
        "c64",
        8,
        &[2],
        &[0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64],
    )
    .unwrap();
    w.finish().unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    r.verify().unwrap();
    for (name, t) in &tensors {
        let got = r.read(name).unwrap();
        assert!(same(&got, t), "{name}: {got:?} vs {t:?}");
    }
    let c = r.read_raw("c64").unwrap();
    assert_eq!((c.dtype, c.shape.as_slice()), (8, &[2i64][..]));
    // Raw complex64 bytes (re, im pairs) read back as a complex64 tensor.
    let c = r.read("c64").unwrap();
    assert_eq!(
        c.as_slice::<Complex32>().unwrap(),
        &[Complex32::new(1.0, 2.0), Complex32::new(3.0, 4.0)]
    );
    let names: Vec<String> = r.variables().into_iter().map(|v| v.name).collect();
    let mut want: Vec<String> = tensors.iter().map(|(n, _)| n.to_string()).collect();
    want.push("c64".into());
    want.sort();
    assert_eq!(names, want);
    // Entries record TensorFlow's dtype numbers.
    assert_eq!(r.dtype_and_shape("bf16").unwrap(), (14, vec![3]));
    assert_eq!(r.dtype_and_shape("f16").unwrap(), (19, vec![2]));
    // The only files are the bundle's: no temporary file is left behind.
    let files: Vec<String> = std::fs::read_dir(prefix.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
}

#[test]
fn large_and_many_tensors_round_trip_in_parallel() {
    let tmp = TempDir::new("large");
    let prefix = tmp.path().join("big");
    let big: Vec<f32> = (0..3_000_000).map(|i| (i as f32).sin()).collect();
    let tensors: Vec<(String, Tensor)> = std::iter::once(("big".to_string(), Tensor::vector(big)))
        .chain((0..3000).map(|i| (format!("v/{i:05}"), Tensor::vector(vec![i as i64; 50]))))
        .collect();
    let items: Vec<SaveItem> = tensors
        .iter()
        .map(|(n, t)| SaveItem {
            name: n.as_bytes(),
            tensor: t,
            slice: None,
        })
        .collect();
    save(&prefix, &items).unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    // 3001 keys span several index data blocks.
    assert!(std::fs::metadata(index_path(&prefix)).unwrap().len() > 60_000);
    let requests: Vec<(&[u8], Option<&TensorSlice>)> =
        tensors.iter().map(|(n, _)| (n.as_bytes(), None)).collect();
    let got = r.read_many(&requests).unwrap();
    for ((n, t), g) in tensors.iter().zip(&got) {
        assert!(same(t, g), "{n}");
    }
}

#[test]
fn slices_are_stored_like_tensorflow_and_read_back() {
    let tmp = TempDir::new("slices");
    let prefix = tmp.path().join("part");
    let full: Vec<i32> = (0..20).collect();
    let full_t = Tensor::from_vec([5, 4], full.clone()).unwrap();
    let mut w = BundleWriter::new(&prefix).unwrap();
    for spec in ["0,2:-", "2,3:0,2", "2,3:2,2"] {
        let s = TensorSlice::parse(spec).unwrap();
        let bounds = s.bounds(&[5, 4]);
        let mut part = Vec::new();
        for r in bounds[0].0..bounds[0].0 + bounds[0].1 {
            for c in bounds[1].0..bounds[1].0 + bounds[1].1 {
                part.push(full[(r * 4 + c) as usize]);
            }
        }
        let shape: Vec<usize> = bounds.iter().map(|&(_, l)| l as usize).collect();
        w.add_slice("m", &[5, 4], &s, &Tensor::from_vec(shape, part).unwrap())
            .unwrap();
    }
    // A slice that covers everything is stored as a plain tensor.
    w.add_slice(
        "whole",
        &[2],
        &TensorSlice::parse("0,2").unwrap(),
        &Tensor::vector(vec![1.0f32, 2.0]),
    )
    .unwrap();
    // Errors: wrong slice shape, duplicate slice, duplicate plain key.
    let e = w
        .add_slice(
            "m",
            &[5, 4],
            &TensorSlice::parse("0,1:-").unwrap(),
            &Tensor::vector(vec![1i32]),
        )
        .unwrap_err();
    assert_eq!(e.code(), Some(Code::InvalidArgument));
    let e = w
        .add_slice(
            "m",
            &[5, 4],
            &TensorSlice::parse("0,2:-").unwrap(),
            &Tensor::from_vec([2, 4], vec![0i32; 8]).unwrap(),
        )
        .unwrap_err();
    assert!(e.message().contains("duplicate key"), "{e}");
    let e = w.add("whole", &Tensor::scalar(1.0f32)).unwrap_err();
    assert!(e.message().contains("Adding duplicate key: whole"), "{e}");
    w.finish().unwrap();

    let r = BundleReader::open(&prefix).unwrap();
    assert!(same(&r.read("m").unwrap(), &full_t));
    let entry = r.entry("m").unwrap();
    assert_eq!((entry.size, entry.offset, entry.crc32c), (0, 0, 0));
    assert_eq!(entry.slices.len(), 3);
    assert!(r.entry("whole").unwrap().slices.is_empty());
    // Slices hide from the listing; the debug string shows them raw, as TF's does.
    let vars: Vec<(String, Vec<i64>)> = r
        .variables()
        .into_iter()
        .map(|v| (v.name, v.shape))
        .collect();
    assert_eq!(
        vars,
        vec![("m".into(), vec![5, 4]), ("whole".into(), vec![2])]
    );
    let debug = r.debug_string();
    assert_eq!(
        debug
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count(),
        4
    );
    assert!(debug.ends_with(b"whole (DT_FLOAT) [2]\n"));
    // A sub-slice across all three stored slices.
    let got = r
        .read_slice("m", &TensorSlice::parse("1,3:1,2").unwrap())
        .unwrap();
    assert_eq!(got.as_slice::<i32>().unwrap(), &[5, 6, 9, 10, 13, 14]);
    assert_eq!(got.dims(), &[3, 2]);
    // A sub-slice of a tensor stored whole.
    let got = r
        .read_slice("whole", &TensorSlice::parse("1,1").unwrap())
        .unwrap();
    assert_eq!(got.as_slice::<f32>().unwrap(), &[2.0]);
}

#[test]
fn incomplete_slices_are_reported() {
    let tmp = TempDir::new("incomplete");
    let prefix = tmp.path().join("p");
    let mut w = BundleWriter::new(&prefix).unwrap();
    w.add_slice(
        "v",
        &[4],
        &TensorSlice::parse("0,2").unwrap(),
        &Tensor::vector(vec![1.0f32, 2.0]),
    )
    .unwrap();
    w.finish().unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    let e = r.read("v").unwrap_err();
    assert!(
        e.message().contains("Does not have sufficient slices"),
        "{e}"
    );
    let ok = r
        .read_slice("v", &TensorSlice::parse("1,1").unwrap())
        .unwrap();
    assert_eq!(ok.as_slice::<f32>().unwrap(), &[2.0]);
}

fn write(prefix: &Path, tensors: &[(&str, Tensor)]) {
    let mut w = BundleWriter::new(prefix).unwrap();
    for (n, t) in tensors {
        w.add(n, t).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn merging_sharded_saves() {
    let tmp = TempDir::new("merge");
    let final_prefix = tmp.path().join("model.ckpt");
    let parts: Vec<_> = (0..3)
        .map(|i| {
            tmp.path()
                .join("model.ckpt_temp")
                .join(format!("part-{i:05}-of-00003"))
        })
        .collect();
    write(&parts[0], &[("a", Tensor::vector(vec![1.0f32, 2.0]))]);
    // Slices of one tensor saved by two devices merge into one full entry.
    for (i, spec, v) in [(1, "0,1", 10i64), (2, "1,1", 20i64)] {
        let mut w = BundleWriter::new(&parts[i]).unwrap();
        w.add_slice(
            "s",
            &[2],
            &TensorSlice::parse(spec).unwrap(),
            &Tensor::vector(vec![v]),
        )
        .unwrap();
        if i == 2 {
            w.add("z", &Tensor::scalar(b"last".to_vec())).unwrap();
        }
        w.finish().unwrap();
    }
    merge_bundles(&parts, &final_prefix, MergeOptions::default()).unwrap();
    let r = BundleReader::open(&final_prefix).unwrap();
    assert_eq!(r.num_shards(), 3);
    assert_eq!(r.header().num_shards, 3);
    assert_eq!(r.read("a").unwrap().as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    assert_eq!(r.read("s").unwrap().as_slice::<i64>().unwrap(), &[10, 20]);
    assert_eq!(r.entry("s").unwrap().slices.len(), 2);
    assert_eq!(r.entry("z").unwrap().shard_id, 2);
    for s in 0..3 {
        assert!(data_path(&final_prefix, s, 3).exists());
    }
    // The temporary directory is gone with its indexes.
    assert!(!tmp.path().join("model.ckpt_temp").exists());

    // A duplicate plain key is an error; missing inputs are one unless allowed.
    let p1 = tmp.path().join("d1/x");
    let p2 = tmp.path().join("d2/x");
    write(&p1, &[("k", Tensor::scalar(1i32))]);
    write(&p2, &[("k", Tensor::scalar(2i32))]);
    let e =
        merge_bundles(&[&p1, &p2], tmp.path().join("dup"), MergeOptions::default()).unwrap_err();
    assert!(e.message().contains("Duplicate tensor keyed by k"), "{e}");
    let missing = tmp.path().join("nope/x");
    let e = merge_bundles(
        &[&p1, &missing],
        tmp.path().join("m1"),
        MergeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.code(), Some(Code::NotFound), "{e}");
    merge_bundles(
        &[&p1, &missing],
        tmp.path().join("m2"),
        MergeOptions {
            delete_old_dirs: false,
            allow_missing_files: true,
        },
    )
    .unwrap();
    assert_eq!(
        BundleReader::open(tmp.path().join("m2"))
            .unwrap()
            .read("k")
            .unwrap()
            .scalar_i64()
            .unwrap(),
        1
    );
    assert!(
        tmp.path().join("d1").exists(),
        "delete_old_dirs=false keeps the directory"
    );
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".tempstate"))
        .collect()
}

#[test]
fn a_crash_mid_save_leaves_the_previous_checkpoint_intact() {
    let tmp = TempDir::new("crash");
    let prefix = tmp.path().join("model.ckpt");
    write(
        &prefix,
        &[
            ("w", Tensor::vector(vec![1.0f32, 2.0, 3.0])),
            ("step", Tensor::scalar(7i64)),
        ],
    );
    let before_index = std::fs::read(index_path(&prefix)).unwrap();
    let before_data = std::fs::read(data_path(&prefix, 0, 1)).unwrap();

    // A process that dies while streaming tensors: its writer is never
    // finished (nor dropped), and a partial temporary file stays behind.
    let mut w = BundleWriter::new(&prefix).unwrap();
    w.add("w", &Tensor::vector(vec![9.0f32; 100_000])).unwrap();
    std::mem::forget(w);
    // ... and one that died while writing its index.
    std::fs::write(
        tmp.path().join("model.ckpt.index.tempstate1234567890"),
        &before_index[..before_index.len() / 2],
    )
    .unwrap();
    assert_eq!(temp_files(tmp.path()).len(), 2);

    assert_eq!(std::fs::read(index_path(&prefix)).unwrap(), before_index);
    assert_eq!(
        std::fs::read(data_path(&prefix, 0, 1)).unwrap(),
        before_data
    );
    let r = BundleReader::open(&prefix).unwrap();
    r.verify().unwrap();
    assert_eq!(
        r.read("w").unwrap().as_slice::<f32>().unwrap(),
        &[1.0, 2.0, 3.0]
    );
    assert_eq!(r.read("step").unwrap().scalar_i64().unwrap(), 7);

    // A reader opened before a new save keeps its view (the files it
    // mapped are replaced by rename, never overwritten in place).
    write(
        &prefix,
        &[
            ("w", Tensor::vector(vec![4.0f32, 5.0])),
            ("step", Tensor::scalar(8i64)),
        ],
    );
    assert_eq!(
        r.read("w").unwrap().as_slice::<f32>().unwrap(),
        &[1.0, 2.0, 3.0]
    );
    let r2 = BundleReader::open(&prefix).unwrap();
    assert_eq!(
        r2.read("w").unwrap().as_slice::<f32>().unwrap(),
        &[4.0, 5.0]
    );

    // An abandoned (dropped) writer removes its own temporary file.
    let mut w = BundleWriter::new(&prefix).unwrap();
    w.add("w", &Tensor::vector(vec![1.0f32])).unwrap();
    drop(w);
    assert_eq!(
        temp_files(tmp.path()).len(),
        2,
        "only the crashed writers' files remain"
    );
    assert_eq!(r2.read("step").unwrap().scalar_i64().unwrap(), 8);
}

#[test]
fn a_failed_save_keeps_the_previous_checkpoint() {
    let tmp = TempDir::new("failed");
    let prefix = tmp.path().join("model.ckpt");
    write(&prefix, &[("w", Tensor::scalar(1.0f32))]);
    // The index cannot be renamed into place: a directory is in the way of
    // the data file, so the save fails before touching the old index.
    let mut w = BundleWriter::new(&prefix).unwrap();
    w.add("w", &Tensor::scalar(2.0f32)).unwrap();
    std::fs::remove_file(data_path(&prefix, 0, 1)).unwrap();
    std::fs::create_dir(data_path(&prefix, 0, 1)).unwrap();
    std::fs::write(data_path(&prefix, 0, 1).join("blocker"), b"x").unwrap();
    assert!(w.finish().is_err());
    assert!(
        temp_files(tmp.path()).is_empty(),
        "{:?}",
        temp_files(tmp.path())
    );
    assert!(index_path(&prefix).exists());
}

#[test]
fn missing_checkpoints_and_data_files() {
    let tmp = TempDir::new("missing");
    let e = BundleReader::open(tmp.path().join("nothing"))
        .err()
        .unwrap();
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(e.message().starts_with(
        "Unsuccessful TensorSliceReader constructor: Failed to find any matching files for"
    ));
    assert!(e.message().contains("nothing"), "{e}");
    let prefix = tmp.path().join("m");
    write(&prefix, &[("w", Tensor::scalar(1.0f32))]);
    std::fs::remove_file(data_path(&prefix, 0, 1)).unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    let e = r.read("w").unwrap_err();
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(e.message().contains("m.data-00000-of-00001"), "{e}");
    let e = r.read("nope").unwrap_err();
    assert_eq!(e.code(), Some(Code::NotFound));
    assert!(
        e.message().contains("Key nope not found in checkpoint"),
        "{e}"
    );
}

#[test]
fn empty_bundles_and_raw_strings() {
    let tmp = TempDir::new("empty");
    let prefix = tmp.path().join("e");
    BundleWriter::new(&prefix).unwrap().finish().unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    assert!(r.variables().is_empty());
    assert_eq!(
        std::fs::metadata(data_path(&prefix, 0, 1)).unwrap().len(),
        0
    );
    let prefix = tmp.path().join("s");
    write(
        &prefix,
        &[("s", Tensor::vector(vec![b"a".to_vec(), b"bc".to_vec()]))],
    );
    let raw = BundleReader::open(&prefix).unwrap().read_raw("s").unwrap();
    assert_eq!(
        raw.data,
        RawData::Strings(vec![b"a".to_vec(), b"bc".to_vec()])
    );
}
