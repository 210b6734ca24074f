//! `FERROFLOW_CHECKPOINT_SYNC=0` skips the fsyncs (and the early writeback)
//! of a save, so files reach the page cache only, but changes nothing else:
//! the same bytes, the same temporary-file-and-rename sequence, merges
//! included. Its own test binary, since it sets a process-wide environment
//! variable.

mod common;

use common::TempDir;
use ferroflow_checkpoint::{
    data_path, index_path, merge_bundles, save, BundleReader, MergeOptions, SaveItem,
};
use ferroflow_tensor::Tensor;
use std::path::Path;

fn files(prefix: &Path, shards: i32) -> Vec<Vec<u8>> {
    let mut out = vec![std::fs::read(index_path(prefix)).unwrap()];
    for s in 0..shards {
        out.push(std::fs::read(data_path(prefix, s, shards)).unwrap());
    }
    out
}

fn save_and_merge(dir: &Path) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let a = Tensor::from_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let b = Tensor::vector(vec![7i64, -8]);
    // Larger than the 16 MiB pieces a durable save starts writing back
    // while it writes.
    let n = (5 << 20) + 3;
    let big = Tensor::from_vec([n], (0..n).map(|i| i as f32).collect()).unwrap();
    let items = [
        SaveItem {
            name: b"a",
            tensor: &a,
            slice: None,
        },
        SaveItem {
            name: b"big",
            tensor: &big,
            slice: None,
        },
    ];
    let single = dir.join("single/model.ckpt");
    save(&single, &items).unwrap();
    let part0 = dir.join("model.ckpt_temp/part-00000-of-00002");
    let part1 = dir.join("model.ckpt_temp/part-00001-of-00002");
    save(&part0, &items).unwrap();
    save(
        &part1,
        &[SaveItem {
            name: b"b",
            tensor: &b,
            slice: None,
        }],
    )
    .unwrap();
    let merged = dir.join("merged/model.ckpt");
    merge_bundles(&[part0, part1], &merged, MergeOptions::default()).unwrap();
    let read_b = BundleReader::open(&merged).unwrap().read("b").unwrap();
    assert_eq!(read_b.as_slice::<i64>().unwrap(), &[7, -8]);
    let read_big = BundleReader::open(&single).unwrap().read("big").unwrap();
    assert_eq!(read_big.as_slice::<f32>(), big.as_slice::<f32>());
    // Only the final files are left: no temporaries.
    for d in [dir.join("single"), dir.join("merged")] {
        for f in std::fs::read_dir(&d).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            assert!(
                !name.contains("tempstate"),
                "{name} left in {}",
                d.display()
            );
        }
    }
    (files(&single, 1), files(&merged, 2))
}

#[test]
fn saves_without_fsync_write_the_same_files() {
    let tmp = TempDir::new("nosync");
    std::env::remove_var("FERROFLOW_CHECKPOINT_SYNC");
    let synced = save_and_merge(&tmp.path().join("synced"));
    std::env::set_var("FERROFLOW_CHECKPOINT_SYNC", "0");
    let unsynced = save_and_merge(&tmp.path().join("unsynced"));
    std::env::set_var("FERROFLOW_CHECKPOINT_SYNC", "1");
    let synced_again = save_and_merge(&tmp.path().join("synced_again"));
    std::env::remove_var("FERROFLOW_CHECKPOINT_SYNC");
    assert_eq!(unsynced, synced);
    assert_eq!(synced_again, synced);
}
