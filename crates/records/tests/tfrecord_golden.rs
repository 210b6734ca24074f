//! TFRecord files and tf.train.Example / SequenceExample protos against the
//! golden data written by TensorFlow (`tests/fixtures/records/tfrecord`).
//! Every parameter comes from the JSON manifests.

mod common;

use std::io::Read;
use std::path::PathBuf;

use common::*;
use ferroflow_records::crc::masked_crc32c;
use ferroflow_records::proto::{
    Example, Feature, FeatureList, FeatureLists, Features, Message, SequenceExample,
};
use ferroflow_records::{Compression, ReadOptions, RecordReader, RecordWriter};
use serde_json::Value as Json;

fn dir() -> PathBuf {
    fixtures().join("tfrecord")
}

/// A Feature from `{kind, value}` (kind null: no list set).
fn feature_from_json(f: &Json) -> Feature {
    if f.is_null() {
        return Feature::default();
    }
    let values = f["value"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    match f["kind"].as_str() {
        None => Feature::default(),
        Some("bytes_list") => Feature::bytes(values.iter().map(json_bytes)),
        Some("float_list") => Feature::floats(
            values
                .iter()
                .map(|v| json_f64(v) as f32)
                .collect::<Vec<_>>(),
        ),
        Some("int64_list") => Feature::int64s(values.iter().map(json_i64).collect::<Vec<_>>()),
        Some(other) => panic!("unknown feature kind {other}"),
    }
}

fn features_from_json(map: &Json) -> Features {
    map.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, f)| (k.clone(), feature_from_json(f)))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether an optional sub-message was set: the explicit `has_*` flag when
/// the manifest has one, else "present and non-empty".
fn present(record: &Json, field: &str, has_flag: &str) -> bool {
    match record.get(has_flag).and_then(Json::as_bool) {
        Some(flag) => flag,
        None => record
            .get(field)
            .and_then(Json::as_object)
            .is_some_and(|m| !m.is_empty()),
    }
}

fn example_from_json(record: &Json) -> Example {
    Example {
        features: present(record, "features", "has_features_field")
            .then(|| features_from_json(&record["features"])),
    }
}

fn sequence_example_from_json(record: &Json) -> SequenceExample {
    let feature_lists =
        present(record, "feature_lists", "has_feature_lists_field").then(|| FeatureLists {
            feature_list: record["feature_lists"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, steps)| {
                    let feature = steps
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(feature_from_json)
                        .collect();
                    (k.clone(), FeatureList { feature })
                })
                .collect(),
        });
    SequenceExample {
        context: present(record, "context", "has_context_field")
            .then(|| features_from_json(&record["context"])),
        feature_lists,
    }
}

fn records(manifest: &Json) -> &Vec<Json> {
    manifest["records"].as_array().expect("records")
}

fn payloads(manifest: &Json) -> Vec<Vec<u8>> {
    records(manifest)
        .iter()
        .map(|r| hex(r["serialized_hex"].as_str().unwrap()))
        .collect()
}

/// (file name, compression) of every file the manifest lists.
fn files(manifest: &Json) -> Vec<(String, Compression)> {
    if let Some(files) = manifest["files"].as_object() {
        files
            .iter()
            .map(|(name, c)| {
                (
                    name.clone(),
                    Compression::from_name(c.as_str().unwrap()).unwrap(),
                )
            })
            .collect()
    } else {
        vec![(
            manifest["file"].as_str().unwrap().to_string(),
            Compression::None,
        )]
    }
}

fn uncompressed_file(manifest: &Json) -> PathBuf {
    let (name, _) = files(manifest)
        .into_iter()
        .find(|(_, c)| *c == Compression::None)
        .expect("an uncompressed file");
    dir().join(name)
}

fn examples() -> Json {
    read_json(&dir().join("examples.json"))
}

fn sequence_examples() -> Json {
    read_json(&dir().join("sequence_examples.json"))
}

#[test]
fn example_bytes_equal_tf_bytes() {
    let manifest = examples();
    assert_eq!(
        records(&manifest).len() as u64,
        manifest["num_records"].as_u64().unwrap()
    );
    for record in records(&manifest) {
        let expected = hex(record["serialized_hex"].as_str().unwrap());
        let ours = example_from_json(record).encode_to_vec();
        assert_eq!(
            to_hex(&ours),
            to_hex(&expected),
            "record {}",
            record["index"]
        );
        // Parsing TF's bytes and serializing again gives the same bytes.
        let parsed = Example::decode(expected.as_slice()).unwrap();
        assert_eq!(parsed.encode_to_vec(), expected);
        // And the parsed content is what the manifest describes.
        let features = record["features"].as_object();
        let n = features.map_or(0, |f| f.len());
        assert_eq!(parsed.features.as_ref().map_or(0, |f| f.feature.len()), n);
        for (key, f) in features.into_iter().flatten() {
            let got = parsed.feature(key).expect("feature present");
            assert_eq!(
                got.encode_to_vec(),
                feature_from_json(f).encode_to_vec(),
                "{key}"
            );
        }
    }
}

#[test]
fn sequence_example_bytes_equal_tf_bytes() {
    let manifest = sequence_examples();
    assert_eq!(
        records(&manifest).len() as u64,
        manifest["num_records"].as_u64().unwrap()
    );
    for record in records(&manifest) {
        let expected = hex(record["serialized_hex"].as_str().unwrap());
        let ours = sequence_example_from_json(record).encode_to_vec();
        assert_eq!(
            to_hex(&ours),
            to_hex(&expected),
            "record {}",
            record["index"]
        );
        let parsed = SequenceExample::decode(expected.as_slice()).unwrap();
        assert_eq!(parsed.encode_to_vec(), expected);
    }
}

#[test]
fn frames_match_recorded_offsets_lengths_and_crcs() {
    for manifest in [examples(), sequence_examples()] {
        let file = std::fs::read(uncompressed_file(&manifest)).unwrap();
        for record in records(&manifest) {
            let frame = &record["frame"];
            let offset = frame["offset"].as_u64().unwrap() as usize;
            let length = frame["length"].as_u64().unwrap() as usize;
            let payload = hex(record["serialized_hex"].as_str().unwrap());
            assert_eq!(payload.len(), length);
            let len_bytes = (length as u64).to_le_bytes();
            assert_eq!(file[offset..offset + 8], len_bytes);
            assert_eq!(
                masked_crc32c(&len_bytes) as u64,
                frame["masked_crc32c_of_length"].as_u64().unwrap()
            );
            assert_eq!(
                masked_crc32c(&payload) as u64,
                frame["masked_crc32c_of_data"].as_u64().unwrap()
            );
            assert_eq!(file[offset + 12..offset + 12 + length], payload[..]);
        }
    }
}

#[test]
fn reader_returns_recorded_payloads_for_every_compression() {
    for manifest in [examples(), sequence_examples()] {
        let expected = payloads(&manifest);
        let offsets: Vec<u64> = records(&manifest)
            .iter()
            .map(|r| r["frame"]["offset"].as_u64().unwrap())
            .collect();
        let plain_len = std::fs::metadata(uncompressed_file(&manifest))
            .unwrap()
            .len();
        for (name, compression) in files(&manifest) {
            for options in [
                ReadOptions::default(),
                ReadOptions::strict(),
                ReadOptions::tailing(),
            ] {
                let mut reader =
                    RecordReader::open(dir().join(&name), compression, options).unwrap();
                let mut got = Vec::new();
                let mut got_offsets = Vec::new();
                while let Some(r) = reader.read_record().unwrap() {
                    got_offsets.push(r.offset);
                    got.push(r.data);
                }
                assert_eq!(got, expected, "{name}");
                assert_eq!(got_offsets, offsets, "{name}");
                assert_eq!(reader.offset(), plain_len, "{name}");
            }
            // The iterator API gives the same payloads.
            let reader =
                RecordReader::open(dir().join(&name), compression, ReadOptions::default()).unwrap();
            let all: Vec<Vec<u8>> = reader.map(Result::unwrap).collect();
            assert_eq!(all, expected, "{name}");
        }
    }
}

#[test]
fn compressed_golden_files_decompress_to_the_uncompressed_file() {
    let manifest = examples();
    let plain = std::fs::read(uncompressed_file(&manifest)).unwrap();
    for (name, compression) in files(&manifest) {
        let raw = std::fs::read(dir().join(&name)).unwrap();
        let mut out = Vec::new();
        match compression {
            Compression::None => out = raw,
            Compression::Zlib => {
                flate2::read::ZlibDecoder::new(raw.as_slice())
                    .read_to_end(&mut out)
                    .unwrap();
            }
            Compression::Gzip => {
                flate2::read::MultiGzDecoder::new(raw.as_slice())
                    .read_to_end(&mut out)
                    .unwrap();
            }
        }
        assert_eq!(out, plain, "{name}");
    }
}

#[test]
fn writer_reproduces_tf_files() {
    let tmp = TempDir::new("writer");
    for manifest in [examples(), sequence_examples()] {
        let expected = payloads(&manifest);
        let plain = std::fs::read(uncompressed_file(&manifest)).unwrap();
        for compression in [Compression::None, Compression::Zlib, Compression::Gzip] {
            let path = tmp.path().join(format!("out{}", compression.name()));
            let mut w = RecordWriter::create(&path, compression).unwrap();
            for p in &expected {
                w.write(p).unwrap();
            }
            assert_eq!(w.offset(), plain.len() as u64);
            w.close().unwrap();
            w.close().unwrap();
            assert!(w.write(b"late").is_err());

            let raw = std::fs::read(&path).unwrap();
            let mut decompressed = Vec::new();
            match compression {
                // Uncompressed output is byte-identical to TensorFlow's.
                Compression::None => decompressed = raw.clone(),
                // Deflate bytes depend on the zlib implementation; the
                // decompressed stream must be identical.
                Compression::Zlib => {
                    assert_eq!(raw[0], 0x78, "zlib header");
                    flate2::read::ZlibDecoder::new(raw.as_slice())
                        .read_to_end(&mut decompressed)
                        .unwrap();
                }
                Compression::Gzip => {
                    assert_eq!(raw[..4], [0x1f, 0x8b, 0x08, 0x00], "gzip header, no name");
                    assert_eq!(raw[4..8], [0, 0, 0, 0], "mtime 0");
                    assert_eq!(raw[9], 3, "OS = Unix, as zlib writes for TF");
                    flate2::read::MultiGzDecoder::new(raw.as_slice())
                        .read_to_end(&mut decompressed)
                        .unwrap();
                }
            }
            assert_eq!(decompressed, plain, "{compression:?}");
            let back: Vec<Vec<u8>> = RecordReader::open(&path, compression, ReadOptions::strict())
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(back, expected);
        }
    }
}

#[test]
fn flushed_compressed_stream_still_reads_back() {
    let tmp = TempDir::new("flush");
    let expected = payloads(&examples());
    for compression in [Compression::Zlib, Compression::Gzip] {
        let path = tmp.path().join("flushed");
        let mut w = RecordWriter::create(&path, compression).unwrap();
        for p in &expected {
            w.write(p).unwrap();
            w.flush().unwrap();
        }
        w.sync().unwrap();
        drop(w); // finishes the stream
        let back: Vec<Vec<u8>> = RecordReader::open(&path, compression, ReadOptions::strict())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(back, expected);
    }
}

#[test]
fn gzip_with_header_fields_and_several_members_is_read() {
    use std::io::Write;
    let expected = payloads(&examples());
    let plain = std::fs::read(uncompressed_file(&examples())).unwrap();
    // Split the framed stream in two gzip members, the first with a file
    // name and mtime in its header (as Python's gzip module writes).
    let cut = plain.len() / 3;
    let mut bytes = Vec::new();
    let mut first = flate2::GzBuilder::new()
        .filename("examples.tfrecord")
        .mtime(1_700_000_000)
        .write(Vec::new(), flate2::Compression::best());
    first.write_all(&plain[..cut]).unwrap();
    bytes.extend(first.finish().unwrap());
    let mut second = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    second.write_all(&plain[cut..]).unwrap();
    bytes.extend(second.finish().unwrap());
    let back: Vec<Vec<u8>> = RecordReader::from_bytes(
        "two-members.gz",
        bytes,
        Compression::Gzip,
        ReadOptions::strict(),
    )
    .map(Result::unwrap)
    .collect();
    assert_eq!(back, expected);
}

#[test]
fn reading_a_compressed_file_without_compression_is_data_loss_at_0() {
    let manifest = examples();
    for (name, compression) in files(&manifest) {
        if compression == Compression::None {
            continue;
        }
        let err = RecordReader::open(dir().join(&name), Compression::None, ReadOptions::default())
            .unwrap()
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(err.code(), Some(ferroflow_records::Code::DataLoss));
        assert!(
            err.message().contains("corrupted record at 0"),
            "{}",
            err.message()
        );
        assert!(err.message().contains(&name), "{}", err.message());
    }
}
