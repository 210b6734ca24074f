//! Damaged TFRecord data: every corruption and truncation of the golden
//! files gives the intact records before it and then a `DataLossError` that
//! names the file and the offset, or (where TensorFlow does so, or when
//! asked to tolerate a truncated tail) a clean end. Nothing panics.

mod common;

use std::io::Write;
use std::path::PathBuf;

use common::*;
use ferroflow_records::{Code, Compression, Error, ReadOptions, RecordReader};

struct Golden {
    name: String,
    bytes: Vec<u8>,
    payloads: Vec<Vec<u8>>,
    /// Offset of each record's header.
    offsets: Vec<u64>,
    compressed: Vec<(String, Compression, Vec<u8>)>,
}

fn golden() -> Golden {
    let dir = fixtures().join("tfrecord");
    let manifest = read_json(&dir.join("examples.json"));
    let mut plain = None;
    let mut compressed = Vec::new();
    for (name, c) in manifest["files"].as_object().unwrap() {
        let c = Compression::from_name(c.as_str().unwrap()).unwrap();
        let bytes = std::fs::read(dir.join(name)).unwrap();
        if c == Compression::None {
            plain = Some((name.clone(), bytes));
        } else {
            compressed.push((name.clone(), c, bytes));
        }
    }
    let (name, bytes) = plain.expect("uncompressed file");
    let records = manifest["records"].as_array().unwrap();
    Golden {
        name,
        bytes,
        payloads: records
            .iter()
            .map(|r| hex(r["serialized_hex"].as_str().unwrap()))
            .collect(),
        offsets: records
            .iter()
            .map(|r| r["frame"]["offset"].as_u64().unwrap())
            .collect(),
        compressed,
    }
}

/// Reads everything: the records before the first error, and the error.
fn read(
    name: &str,
    bytes: Vec<u8>,
    c: Compression,
    options: ReadOptions,
) -> (Vec<Vec<u8>>, Option<Error>) {
    let mut reader = RecordReader::from_bytes(name, bytes, c, options);
    let mut got = Vec::new();
    loop {
        match reader.read_record() {
            Ok(Some(r)) => got.push(r.data),
            Ok(None) => return (got, None),
            Err(e) => {
                // After an error the reader stays finished.
                assert!(matches!(reader.read_record(), Ok(None)));
                return (got, Some(e));
            }
        }
    }
}

fn assert_data_loss(err: &Error, what: &str, offset: u64, file: &str) {
    assert_eq!(err.code(), Some(Code::DataLoss), "{err}");
    let expected = format!("{what} at {offset} in {file}");
    assert!(
        err.message().starts_with(&expected),
        "expected {expected:?} in {:?}",
        err.message()
    );
}

#[test]
fn every_flipped_bit_is_detected_at_the_right_offset() {
    let g = golden();
    let mut ends = g.offsets.clone();
    ends.push(g.bytes.len() as u64);
    for pos in 0..g.bytes.len() {
        let record = g.offsets.iter().rposition(|&o| o as usize <= pos).unwrap();
        let start = g.offsets[record];
        for bit in [0u8, 7] {
            let mut bytes = g.bytes.clone();
            bytes[pos] ^= 1 << bit;
            let (got, err) = read(&g.name, bytes, Compression::None, ReadOptions::default());
            assert_eq!(got, g.payloads[..record], "flip at {pos}");
            let err = err.unwrap_or_else(|| panic!("flip at {pos} not detected"));
            let in_header = (pos as u64) < start + 12;
            if in_header {
                // A damaged length or length CRC.
                assert_data_loss(&err, "corrupted record", start, &g.name);
                assert!(
                    err.message().contains("length checksum"),
                    "{}",
                    err.message()
                );
            } else {
                // A damaged payload or payload CRC: TF reports the payload offset.
                assert_data_loss(&err, "corrupted record", start + 12, &g.name);
                assert!(err.message().contains("data checksum"), "{}", err.message());
            }
        }
    }
}

#[test]
fn truncation_at_every_length() {
    let g = golden();
    for cut in 0..=g.bytes.len() {
        let complete = g.offsets.iter().enumerate().filter(|&(i, &o)| {
            let len = g.payloads[i].len() as u64 + 16;
            o + len <= cut as u64
        });
        let n_complete = complete.count();
        let boundary = if n_complete < g.offsets.len() {
            g.offsets[n_complete]
        } else {
            g.bytes.len() as u64
        };
        let into_record = cut as u64 - boundary;
        let bytes = g.bytes[..cut].to_vec();

        // TensorFlow's behaviour: a partial header is the end of the file,
        // a partial payload or footer is DataLoss.
        let (got, err) = read(
            &g.name,
            bytes.clone(),
            Compression::None,
            ReadOptions::default(),
        );
        assert_eq!(got, g.payloads[..n_complete], "cut {cut}");
        match (into_record, err) {
            (0..=11, None) => {}
            (_, Some(e)) if into_record >= 12 => {
                assert_data_loss(&e, "truncated record", boundary, &g.name)
            }
            (_, other) => panic!("cut {cut}: unexpected {other:?}"),
        }

        // Strict: any incomplete record is DataLoss.
        let (got, err) = read(
            &g.name,
            bytes.clone(),
            Compression::None,
            ReadOptions::strict(),
        );
        assert_eq!(got, g.payloads[..n_complete], "cut {cut}");
        match err {
            None => assert_eq!(into_record, 0, "cut {cut}"),
            Some(e) => assert_data_loss(&e, "truncated record", boundary, &g.name),
        }

        // Tailing: a clean end after the complete records.
        let (got, err) = read(&g.name, bytes, Compression::None, ReadOptions::tailing());
        assert_eq!(got, g.payloads[..n_complete], "cut {cut}");
        assert!(err.is_none(), "cut {cut}: {err:?}");
    }
}

#[test]
fn tailing_reader_resumes_when_the_writer_appends() {
    let g = golden();
    let tmp = TempDir::new("tail");
    let path: PathBuf = tmp.path().join("growing.tfrecord");
    // Cut points: inside a header, inside a payload, inside a footer and at
    // a boundary, for the first records.
    let mut cuts = Vec::new();
    for (i, &o) in g.offsets.iter().enumerate().take(3) {
        let len = g.payloads[i].len() as u64;
        cuts.extend([o, o + 5, o + 12, o + 12 + len / 2, o + 12 + len + 2]);
    }
    for cut in cuts {
        let cut = cut as usize;
        std::fs::write(&path, &g.bytes[..cut]).unwrap();
        let mut reader =
            RecordReader::open(&path, Compression::None, ReadOptions::tailing()).unwrap();
        let mut got = Vec::new();
        while let Some(r) = reader.read_record().unwrap() {
            got.push(r.data);
        }
        let first = got.len();
        assert_eq!(
            reader.offset(),
            g.offsets
                .get(first)
                .copied()
                .unwrap_or(g.bytes.len() as u64)
        );
        // The writer appends the rest.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&g.bytes[cut..]).unwrap();
        f.flush().unwrap();
        while let Some(r) = reader.read_record().unwrap() {
            got.push(r.data);
        }
        assert_eq!(got, g.payloads, "cut {cut}");
    }
}

#[test]
fn truncated_compressed_files_end_in_data_loss() {
    let g = golden();
    for (name, c, bytes) in &g.compressed {
        for cut in 1..bytes.len() {
            let (got, err) = read(name, bytes[..cut].to_vec(), *c, ReadOptions::default());
            assert_eq!(got, g.payloads[..got.len()], "{name} cut {cut}");
            let err = err.unwrap_or_else(|| panic!("{name} cut {cut}: no error"));
            assert_eq!(err.code(), Some(Code::DataLoss), "{err}");
            assert!(err.message().contains(name.as_str()), "{err}");
            assert!(err.message().contains("decompressed stream"), "{err}");

            let (got2, err) = read(name, bytes[..cut].to_vec(), *c, ReadOptions::tailing());
            assert!(err.is_none(), "{name} cut {cut}: {err:?}");
            assert_eq!(got2, got);
        }
        // An empty compressed file holds no records.
        let (got, err) = read(name, Vec::new(), *c, ReadOptions::strict());
        assert!(got.is_empty() && err.is_none());
    }
}

#[test]
fn corrupted_compressed_files_never_yield_wrong_records() {
    let g = golden();
    for (name, c, bytes) in &g.compressed {
        for pos in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[pos] ^= 0x55;
            let (got, err) = read(name, damaged, *c, ReadOptions::default());
            // The record CRCs catch whatever the decompressor lets through.
            assert_eq!(got, g.payloads[..got.len()], "{name} flip at {pos}");
            if let Some(err) = err {
                assert_eq!(
                    err.code(),
                    Some(Code::DataLoss),
                    "{name} flip at {pos}: {err}"
                );
                assert!(err.message().contains(name.as_str()), "{err}");
            }
        }
    }
}

#[test]
fn a_huge_length_with_a_valid_checksum_does_not_allocate_it() {
    let len = (u64::MAX - 3).to_le_bytes();
    let mut bytes = len.to_vec();
    bytes.extend(ferroflow_records::crc::masked_crc32c(&len).to_le_bytes());
    bytes.extend([1, 2, 3]);
    let (got, err) = read("huge", bytes, Compression::None, ReadOptions::default());
    assert!(got.is_empty());
    assert_data_loss(&err.unwrap(), "truncated record", 0, "huge");
}

#[test]
fn missing_file_is_not_found() {
    let err = RecordReader::open(
        "/nonexistent/dir/x.tfrecord",
        Compression::None,
        ReadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), Some(Code::NotFound));
    assert!(err.message().contains("/nonexistent/dir/x.tfrecord"));
}

/// Pseudo-random mutations of the golden streams through the fuzz entry
/// point (the same code the cargo-fuzz target runs).
#[test]
fn random_mutations_do_not_panic() {
    let g = golden();
    let mut inputs: Vec<Vec<u8>> = vec![g.bytes.clone()];
    inputs.extend(g.compressed.iter().map(|(_, _, b)| b.clone()));
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..3000 {
        let base = &inputs[i % inputs.len()];
        let mut data = vec![(rand() % 64) as u8];
        data.extend_from_slice(base);
        for _ in 0..(1 + rand() % 4) {
            let n = data.len();
            match rand() % 4 {
                0 => data[1 + (rand() as usize % (n - 1))] ^= 1 << (rand() % 8),
                1 => data.truncate(1 + rand() as usize % n),
                2 => {
                    let at = 1 + rand() as usize % (n - 1);
                    data.insert(at, rand() as u8);
                }
                _ => {
                    let at = 1 + rand() as usize % (n - 1);
                    data[at] = 0xff;
                }
            }
            if data.len() < 2 {
                data.push(0);
            }
        }
        ferroflow_records::fuzzing::read_records(&data);
    }
    // Unmutated inputs read completely.
    let mut plain = vec![0u8];
    plain.extend_from_slice(&g.bytes);
    assert_eq!(
        ferroflow_records::fuzzing::read_records(&plain),
        g.payloads.len()
    );
}
