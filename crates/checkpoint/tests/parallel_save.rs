//! `BundleWriter::add_all` on more than 1 MiB checksums the tensors on other
//! threads while it writes them: the files must be exactly those of adding
//! the same tensors one by one, whatever the mix (strings, slices, a slice
//! covering the whole tensor), and an error part-way leaves the tensors
//! added before it with their right checksums.

mod common;

use common::TempDir;
use ferroflow_checkpoint::{
    data_path, index_path, BundleReader, BundleWriter, SaveItem, TensorSlice,
};
use ferroflow_tensor::{Code, Tensor};
use std::path::Path;

fn files(prefix: &Path) -> (Vec<u8>, Vec<u8>) {
    (
        std::fs::read(index_path(prefix)).unwrap(),
        std::fs::read(data_path(prefix, 0, 1)).unwrap(),
    )
}

fn floats(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2654435761) ^ seed) as f32 / 7.0)
        .collect()
}

#[test]
fn overlapped_checksums_write_the_same_files_as_one_by_one() {
    let tmp = TempDir::new("parallel");
    let big = Tensor::from_vec([3 << 18], floats(3 << 18, 1)).unwrap(); // 3 MiB
    let part = Tensor::from_vec([4, 1 << 16], floats(4 << 16, 2)).unwrap(); // 1 MiB
    let whole = Tensor::from_vec([2, 3], floats(6, 3)).unwrap();
    let strings = Tensor::vector(vec![b"a".to_vec(), vec![b'z'; 5000], Vec::new()]);
    let ints = Tensor::vector((0..100_000i64).collect::<Vec<_>>());
    let lower = TensorSlice::parse("0,4:-").unwrap();
    let upper = TensorSlice::parse("4,4:-").unwrap();
    let full = TensorSlice::parse("-:-").unwrap();
    let items = vec![
        SaveItem {
            name: b"big",
            tensor: &big,
            slice: None,
        },
        SaveItem {
            name: b"str",
            tensor: &strings,
            slice: None,
        },
        SaveItem {
            name: b"emb",
            tensor: &part,
            slice: Some((vec![8, 1 << 16], upper.clone())),
        },
        SaveItem {
            name: b"emb",
            tensor: &part,
            slice: Some((vec![8, 1 << 16], lower.clone())),
        },
        SaveItem {
            name: b"w",
            tensor: &whole,
            slice: Some((vec![2, 3], full)),
        },
        SaveItem {
            name: b"ints",
            tensor: &ints,
            slice: None,
        },
    ];

    let together = tmp.path().join("together/model.ckpt");
    let mut w = BundleWriter::new(&together).unwrap();
    w.add_all(&items).unwrap();
    w.finish().unwrap();

    let one_by_one = tmp.path().join("one_by_one/model.ckpt");
    let mut w = BundleWriter::new(&one_by_one).unwrap();
    w.add("big", &big).unwrap();
    w.add("str", &strings).unwrap();
    w.add_slice("emb", &[8, 1 << 16], &upper, &part).unwrap();
    w.add_slice("emb", &[8, 1 << 16], &lower, &part).unwrap();
    w.add("w", &whole).unwrap();
    w.add("ints", &ints).unwrap();
    w.finish().unwrap();

    assert_eq!(files(&together), files(&one_by_one));
    let r = BundleReader::open(&together).unwrap();
    r.verify().unwrap();
    assert_eq!(
        r.read("big").unwrap().as_slice::<f32>(),
        big.as_slice::<f32>()
    );
}

#[test]
fn an_error_part_way_keeps_the_earlier_tensors_valid() {
    let tmp = TempDir::new("parallel-error");
    let a = Tensor::from_vec([1 << 19], floats(1 << 19, 4)).unwrap(); // 2 MiB
    let b = Tensor::from_vec([1 << 18], floats(1 << 18, 5)).unwrap();
    let prefix = tmp.path().join("model.ckpt");
    let mut w = BundleWriter::new(&prefix).unwrap();
    let items = vec![
        SaveItem {
            name: b"a",
            tensor: &a,
            slice: None,
        },
        SaveItem {
            name: b"b",
            tensor: &b,
            slice: None,
        },
        SaveItem {
            name: b"a",
            tensor: &b,
            slice: None,
        }, // duplicate key
    ];
    let err = w.add_all(&items).unwrap_err();
    assert_eq!(err.code(), Some(Code::InvalidArgument));
    assert!(
        err.message().contains("duplicate key: a"),
        "{}",
        err.message()
    );
    // The caller may still finish with what was added.
    w.finish().unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    r.verify().unwrap();
    assert_eq!(r.read("a").unwrap().as_slice::<f32>(), a.as_slice::<f32>());
    assert_eq!(r.read("b").unwrap().as_slice::<f32>(), b.as_slice::<f32>());
}
