//! The reader checks a record that lies whole in its read buffer in place
//! and copies the others (records straddling the buffer's end, compressed
//! streams). Both ways must give the same records, offsets and errors: here
//! the golden file (intact, with every bit flip and at every truncation) is
//! read through buffers from 1 byte to larger than the file, and a file
//! with records larger than the 256 KiB buffer of `RecordReader::open`.

mod common;

use std::io::{BufReader, Cursor};

use common::*;
use ferroflow_records::{Compression, ReadOptions, RecordReader, RecordWriter};

/// Records (offset, payload) until the end or the first error, and the
/// error (code and message).
type Outcome = (Vec<(u64, Vec<u8>)>, Option<String>);

fn read_through(bytes: &[u8], capacity: Option<usize>, options: ReadOptions) -> Outcome {
    let name = "golden.tfrecord";
    let mut reader = match capacity {
        None => RecordReader::from_bytes(name, bytes.to_vec(), Compression::None, options),
        Some(cap) => RecordReader::from_buf_reader(
            name,
            BufReader::with_capacity(cap, Cursor::new(bytes.to_vec())),
            Compression::None,
            options,
        ),
    };
    let mut got = Vec::new();
    loop {
        match reader.read_record_with(|d| d.to_vec()) {
            Ok(Some(r)) => got.push(r),
            Ok(None) => return (got, None),
            Err(e) => return (got, Some(format!("{:?}: {}", e.code(), e.message()))),
        }
    }
}

const CAPACITIES: [usize; 5] = [1, 13, 100, 600, 1 << 16];

fn golden_bytes() -> Vec<u8> {
    std::fs::read(fixtures().join("tfrecord/examples.tfrecord")).unwrap()
}

#[test]
fn every_buffer_size_reads_the_golden_file_alike() {
    let bytes = golden_bytes();
    let whole = read_through(&bytes, None, ReadOptions::default());
    assert!(whole.1.is_none(), "{:?}", whole.1);
    assert!(whole.0.len() > 3);
    for cap in CAPACITIES {
        assert_eq!(
            read_through(&bytes, Some(cap), ReadOptions::default()),
            whole,
            "capacity {cap}"
        );
    }
}

#[test]
fn flipped_bits_give_the_same_error_whatever_the_buffer() {
    let bytes = golden_bytes();
    for pos in 0..bytes.len() {
        for bit in [0u8, 5] {
            let mut damaged = bytes.clone();
            damaged[pos] ^= 1 << bit;
            let whole = read_through(&damaged, None, ReadOptions::default());
            assert!(whole.1.is_some(), "flip at {pos} not detected");
            for cap in CAPACITIES {
                assert_eq!(
                    read_through(&damaged, Some(cap), ReadOptions::default()),
                    whole,
                    "flip at {pos}, capacity {cap}"
                );
            }
        }
    }
}

#[test]
fn truncations_give_the_same_outcome_whatever_the_buffer() {
    let bytes = golden_bytes();
    for cut in 0..=bytes.len() {
        for options in [
            ReadOptions::default(),
            ReadOptions::strict(),
            ReadOptions::tailing(),
        ] {
            let whole = read_through(&bytes[..cut], None, options);
            for cap in CAPACITIES {
                assert_eq!(
                    read_through(&bytes[..cut], Some(cap), options),
                    whole,
                    "cut {cut}, capacity {cap}, {options:?}"
                );
            }
        }
    }
}

#[test]
fn records_larger_than_the_file_buffer_round_trip() {
    let tmp = TempDir::new("buffered");
    let path = tmp.path().join("big.tfrecord");
    // Sizes around and beyond the reader's 256 KiB buffer, so records start
    // at many positions relative to its end.
    let sizes = [
        0usize,
        1,
        1000,
        255 * 1024,
        256 * 1024,
        300 * 1024,
        7,
        1 << 20,
        12,
        4096,
    ];
    let payloads: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| (0..n).map(|j| (j * 31 + i * 7) as u8).collect())
        .collect();
    let mut w = RecordWriter::create(&path, Compression::None).unwrap();
    let mut offsets = Vec::new();
    for p in &payloads {
        offsets.push(w.offset());
        w.write(p).unwrap();
    }
    w.close().unwrap();

    let mut r = RecordReader::open(&path, Compression::None, ReadOptions::strict()).unwrap();
    let mut got = Vec::new();
    while let Some((offset, len_and_sum)) = r
        .read_record_with(|d| (d.len(), d.iter().map(|&b| b as u64).sum::<u64>()))
        .unwrap()
    {
        got.push((offset, len_and_sum));
    }
    let expected: Vec<(u64, (usize, u64))> = offsets
        .iter()
        .zip(&payloads)
        .map(|(&o, p)| (o, (p.len(), p.iter().map(|&b| b as u64).sum())))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(r.offset(), std::fs::metadata(&path).unwrap().len());

    let all: Vec<Vec<u8>> = RecordReader::open(&path, Compression::None, ReadOptions::strict())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(all, payloads);
}
