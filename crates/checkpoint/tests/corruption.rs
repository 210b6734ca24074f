//! Corrupting a small checkpoint at every byte, and truncating it at every
//! length: each read gives the right value or a `DataLossError`, never a
//! panic and never wrong data.

mod common;

use common::TempDir;
use ferroflow_checkpoint::{
    data_path, index_path, BundleReader, BundleWriter, RawTensor, TensorSlice,
};
use ferroflow_tensor::{Code, Tensor};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// A small bundle with a few dtypes, a string tensor, an empty tensor and
/// a partitioned one.
fn small_bundle(prefix: &Path) -> BTreeMap<String, RawTensor> {
    let tensors = vec![
        (
            "a",
            Tensor::from_vec([2, 2], vec![1.0f32, -2.0, 3.5, 0.25]).unwrap(),
        ),
        ("b/int", Tensor::vector(vec![7i64, -9])),
        ("flag", Tensor::scalar(true)),
        (
            "s",
            Tensor::vector(vec![b"xy".to_vec(), Vec::new(), b"\x00\xff".to_vec()]),
        ),
        ("empty", Tensor::from_vec([0], Vec::<i32>::new()).unwrap()),
    ];
    let mut w = BundleWriter::new(prefix).unwrap();
    let mut want = BTreeMap::new();
    for (n, t) in &tensors {
        w.add(n, t).unwrap();
        want.insert(n.to_string(), RawTensor::from_tensor(t));
    }
    let full = [10u16, 11, 12, 13, 14, 15];
    for (spec, part) in [("0,2:-", &full[..4]), ("2,1:-", &full[4..])] {
        let s = TensorSlice::parse(spec).unwrap();
        let rows = part.len() / 2;
        w.add_slice(
            "p",
            &[3, 2],
            &s,
            &Tensor::from_vec([rows, 2], part.to_vec()).unwrap(),
        )
        .unwrap();
    }
    want.insert(
        "p".into(),
        RawTensor::from_tensor(&Tensor::from_vec([3, 2], full.to_vec()).unwrap()),
    );
    w.finish().unwrap();
    want
}

/// Opens and reads everything; every outcome must be the right value or DataLoss.
fn check(prefix: &Path, want: &BTreeMap<String, RawTensor>, what: &str) -> (usize, usize) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let (mut good, mut lost) = (0, 0);
        let r = match BundleReader::open(prefix) {
            Ok(r) => r,
            Err(e) => {
                assert_eq!(e.code(), Some(Code::DataLoss), "{what}: open: {e}");
                assert!(
                    e.message().contains(".index"),
                    "{what}: names the file: {e}"
                );
                return (0, 1);
            }
        };
        let _ = r.debug_string();
        let _ = r.variables();
        for (name, value) in want {
            match r.read_raw(name) {
                Ok(got) => {
                    assert_eq!(&got, value, "{what}: {name} read wrong data");
                    good += 1;
                }
                Err(e) => {
                    assert_eq!(e.code(), Some(Code::DataLoss), "{what}: {name}: {e}");
                    assert!(e.message().contains(".data-00000-of-00001"), "{what}: {e}");
                    lost += 1;
                }
            }
        }
        if let Err(e) = r.verify() {
            assert_eq!(e.code(), Some(Code::DataLoss), "{what}: verify: {e}");
        }
        (good, lost)
    }));
    match outcome {
        Ok(counts) => counts,
        Err(_) => panic!("{what}: the reader panicked"),
    }
}

#[test]
fn every_corrupted_or_truncated_byte_is_data_loss_or_harmless() {
    let tmp = TempDir::new("corrupt");
    let prefix = tmp.path().join("ck");
    let want = small_bundle(&prefix);
    let index = std::fs::read(index_path(&prefix)).unwrap();
    let data = std::fs::read(data_path(&prefix, 0, 1)).unwrap();
    assert_eq!(check(&prefix, &want, "intact"), (want.len(), 0));

    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let p = work.join("ck");
    let put = |i: &[u8], d: &[u8]| {
        std::fs::write(index_path(&p), i).unwrap();
        std::fs::write(data_path(&p, 0, 1), d).unwrap();
    };
    let mut detected = 0;
    for (file, bytes) in [("index", &index), ("data", &data)] {
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = bytes.clone();
                bad[at] ^= flip;
                if file == "index" {
                    put(&bad, &data)
                } else {
                    put(&index, &bad)
                }
                let (_, lost) = check(&p, &want, &format!("{file} byte {at} ^ {flip:#x}"));
                detected += (lost > 0) as usize;
            }
        }
        for len in 0..bytes.len() {
            if file == "index" {
                put(&bytes[..len], &data)
            } else {
                put(&index, &bytes[..len])
            }
            let (_, lost) = check(&p, &want, &format!("{file} truncated to {len}"));
            assert!(lost > 0, "{file} truncated to {len} went unnoticed");
        }
    }
    // Undetected (and harmless) may only be changes to what no reader
    // looks at: the metaindex block (13 bytes, TensorFlow never reads it
    // either), its handle in the footer and the footer's zero padding.
    let unread = 13 + 40;
    assert!(
        detected >= 3 * (index.len() + data.len() - unread),
        "only {detected} corruptions detected"
    );
}

#[test]
fn garbage_never_panics() {
    let tmp = TempDir::new("garbage");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let prefix = tmp.path().join("ck");
    small_bundle(&prefix);
    let index = std::fs::read(index_path(&prefix)).unwrap();
    let data = std::fs::read(data_path(&prefix, 0, 1)).unwrap();
    for round in 0..2000 {
        let mut i = index.clone();
        let mut d = data.clone();
        // Several random byte changes anywhere, sometimes in both files.
        for _ in 0..1 + next() % 6 {
            let r = next();
            if r % 3 == 0 {
                let at = (next() as usize) % d.len();
                d[at] = next() as u8;
            } else {
                let at = (next() as usize) % i.len();
                i[at] = next() as u8;
            }
        }
        let n = catch_unwind(AssertUnwindSafe(|| {
            ferroflow_checkpoint::fuzzing::parse_index(&i);
            ferroflow_checkpoint::fuzzing::read_bundle_bytes(tmp.path(), &i, &d)
        }));
        assert!(n.is_ok(), "round {round} panicked");
    }
}
