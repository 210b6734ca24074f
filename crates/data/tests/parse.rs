//! The Example parser on its own: values against the prost messages they
//! were encoded from, packed and unpacked encodings, the threaded path
//! against the single-threaded one, and malformed bytes (errors, never
//! panics).

use ferroflow_data::parse::{parse_batch, DenseSpec, RaggedSpec, SparseSpec, Spec};
use ferroflow_records::proto::{Example, Feature, Message};
use ferroflow_tensor::{Code, DType, Tensor};

fn spec(dense: Vec<(&str, DType, Vec<i64>, Option<Tensor>)>, sparse: Vec<(&str, DType)>) -> Spec {
    let sparse = sparse
        .into_iter()
        .map(|(k, dtype)| SparseSpec {
            key: k.as_bytes().to_vec(),
            dtype,
        })
        .collect();
    let dense = dense
        .into_iter()
        .map(|(k, d, s, def)| DenseSpec::new(k.as_bytes().to_vec(), d, s, def).unwrap())
        .collect();
    Spec::new(sparse, dense).unwrap()
}

/// A small deterministic generator (no rand dependency).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_example(rng: &mut Lcg, blob: usize) -> (Example, Vec<f32>, i64, Vec<i64>, Vec<u8>) {
    let floats: Vec<f32> = (0..3)
        .map(|_| rng.below(1000) as f32 / 7.0 - 50.0)
        .collect();
    let label = rng.below(1 << 40) as i64 - (1 << 39);
    let ids: Vec<i64> = (0..rng.below(6))
        .map(|_| rng.below(1000) as i64 - 500)
        .collect();
    let bytes: Vec<u8> = (0..blob).map(|_| rng.below(256) as u8).collect();
    let ex = Example::from_features([
        ("floats", Feature::floats(floats.clone())),
        ("label", Feature::int64s(vec![label])),
        ("ids", Feature::int64s(ids.clone())),
        ("blob", Feature::bytes([bytes.clone()])),
        ("ignored", Feature::bytes([b"x".to_vec()])),
    ]);
    (ex, floats, label, ids, bytes)
}

fn batch_spec() -> Spec {
    spec(
        vec![
            ("floats", DType::Float32, vec![3], None),
            ("label", DType::Int64, vec![], None),
            ("blob", DType::String, vec![], None),
            (
                "absent",
                DType::Int64,
                vec![2],
                Some(Tensor::from_vec(vec![2], vec![7i64, 8]).unwrap()),
            ),
        ],
        vec![("ids", DType::Int64)],
    )
}

#[test]
fn batch_values_match_the_encoded_messages() {
    let mut rng = Lcg(7);
    let mut serialized = Vec::new();
    let mut expect = Vec::new();
    for _ in 0..40 {
        let (ex, f, l, ids, b) = random_example(&mut rng, 16);
        serialized.push(ex.encode_to_vec());
        expect.push((f, l, ids, b));
    }
    let parsed = parse_batch(&batch_spec(), &serialized, &[], false).unwrap();
    let floats = parsed.dense[0].as_slice::<f32>().unwrap();
    let labels = parsed.dense[1].as_slice::<i64>().unwrap();
    let blobs = parsed.dense[2].as_slice::<Vec<u8>>().unwrap();
    assert_eq!(parsed.dense[0].dims(), &[40, 3]);
    assert_eq!(
        parsed.dense[3].as_slice::<i64>().unwrap(),
        [7, 8].repeat(40)
    );
    let (indices, values, shape) = &parsed.sparse[0];
    let (indices, values) = (
        indices.as_slice::<i64>().unwrap(),
        values.as_slice::<i64>().unwrap(),
    );
    let mut at = 0;
    let mut max = 0;
    for (e, (f, l, ids, b)) in expect.iter().enumerate() {
        assert_eq!(&floats[e * 3..e * 3 + 3], f.as_slice());
        assert_eq!(labels[e], *l);
        assert_eq!(&blobs[e], b);
        for (j, id) in ids.iter().enumerate() {
            assert_eq!(&indices[2 * at..2 * at + 2], &[e as i64, j as i64]);
            assert_eq!(values[at], *id);
            at += 1;
        }
        max = max.max(ids.len());
    }
    assert_eq!(at, values.len());
    assert_eq!(shape.as_slice::<i64>().unwrap(), &[40, max as i64]);
}

#[test]
fn threaded_batches_equal_one_example_at_a_time() {
    let mut rng = Lcg(11);
    // 256 examples of ~1 KB: above the thresholds of the threaded path.
    let serialized: Vec<Vec<u8>> = (0..256)
        .map(|_| random_example(&mut rng, 1024).0.encode_to_vec())
        .collect();
    let spec = batch_spec();
    let whole = parse_batch(&spec, &serialized, &[], false).unwrap();
    let mut rows: Vec<Vec<i64>> = Vec::new();
    for (e, s) in serialized.iter().enumerate() {
        let one = parse_batch(&spec, std::slice::from_ref(s), &[], false).unwrap();
        assert_eq!(
            one.dense[0].as_slice::<f32>().unwrap(),
            &whole.dense[0].as_slice::<f32>().unwrap()[e * 3..e * 3 + 3]
        );
        assert_eq!(
            one.dense[2].as_slice::<Vec<u8>>().unwrap()[0],
            whole.dense[2].as_slice::<Vec<u8>>().unwrap()[e]
        );
        rows.push(one.sparse[0].1.as_slice::<i64>().unwrap().to_vec());
    }
    let flat: Vec<i64> = rows.concat();
    assert_eq!(
        whole.sparse[0].1.as_slice::<i64>().unwrap(),
        flat.as_slice()
    );
    // Deterministic: the same bytes parse to the same tensors every time.
    let again = parse_batch(&spec, &serialized, &[], false).unwrap();
    assert_eq!(
        again.sparse[0].0.as_slice::<i64>().unwrap(),
        whole.sparse[0].0.as_slice::<i64>().unwrap()
    );
}

#[test]
fn threaded_errors_name_the_first_bad_example() {
    let mut rng = Lcg(3);
    let mut serialized: Vec<Vec<u8>> = (0..256)
        .map(|_| random_example(&mut rng, 1024).0.encode_to_vec())
        .collect();
    for bad in [250usize, 100] {
        serialized[bad] =
            Example::from_features([("label", Feature::floats(vec![1.0]))]).encode_to_vec();
    }
    let err = parse_batch(&batch_spec(), &serialized, &[], false).unwrap_err();
    assert_eq!(err.code(), Some(Code::InvalidArgument));
    assert!(
        err.message().contains("Key: label, Index: 100."),
        "{}",
        err.message()
    );
}

#[test]
fn ragged_features_concatenate_values_with_row_splits() {
    let mut rng = Lcg(5);
    // 256 examples of ~1 KB (the threaded path), some without "ids".
    let examples: Vec<_> = (0..256).map(|_| random_example(&mut rng, 1024)).collect();
    let serialized: Vec<Vec<u8>> = examples
        .iter()
        .enumerate()
        .map(|(i, (ex, ..))| {
            let mut ex = ex.clone();
            if i % 5 == 0 {
                ex.features.as_mut().unwrap().feature.remove("ids");
            }
            ex.encode_to_vec()
        })
        .collect();
    let ragged = |split_dtype| {
        vec![
            RaggedSpec {
                key: b"ids".to_vec(),
                dtype: DType::Int64,
                split_dtype,
            },
            RaggedSpec {
                key: b"floats".to_vec(),
                dtype: DType::Float32,
                split_dtype,
            },
        ]
    };
    let sparse = vec![SparseSpec {
        key: b"label".to_vec(),
        dtype: DType::Int64,
    }];
    let spec = Spec::with_ragged(sparse.clone(), vec![], ragged(DType::Int64)).unwrap();
    let got = parse_batch(&spec, &serialized, &[], false).unwrap();
    assert_eq!((got.sparse.len(), got.ragged.len()), (1, 2));
    let mut want_ids = Vec::new();
    let mut want_splits = vec![0i64];
    for (i, (_, _, _, ids, _)) in examples.iter().enumerate() {
        if i % 5 != 0 {
            want_ids.extend_from_slice(ids);
        }
        want_splits.push(want_ids.len() as i64);
    }
    assert_eq!(
        got.ragged[0].0.as_slice::<i64>().unwrap(),
        want_ids.as_slice()
    );
    assert_eq!(
        got.ragged[0].1.as_slice::<i64>().unwrap(),
        want_splits.as_slice()
    );
    let splits: Vec<i64> = (0..=256).map(|i| 3 * i).collect();
    assert_eq!(
        got.ragged[1].1.as_slice::<i64>().unwrap(),
        splits.as_slice()
    );
    assert_eq!(got.ragged[1].0.dims(), &[768]);
    // int32 splits, and one example: no splits at all (as TensorFlow).
    let spec = Spec::with_ragged(sparse, vec![], ragged(DType::Int32)).unwrap();
    let one = parse_batch(&spec, &serialized[1..2], &[], true).unwrap();
    assert_eq!(
        one.ragged[0].0.as_slice::<i64>().unwrap(),
        examples[1].3.as_slice()
    );
    assert_eq!(one.ragged[0].1.dtype(), DType::Int32);
    assert_eq!(one.ragged[0].1.dims(), &[0]);
    // Bad split dtypes and kinds are typed errors naming the feature.
    let bad = Spec::with_ragged(
        vec![],
        vec![],
        vec![RaggedSpec {
            key: b"ids".to_vec(),
            dtype: DType::Int64,
            split_dtype: DType::Float32,
        }],
    );
    assert!(bad
        .err()
        .unwrap()
        .message()
        .contains("ragged feature 'ids'"));
    let spec = Spec::with_ragged(
        vec![],
        vec![],
        vec![RaggedSpec {
            key: b"ids".to_vec(),
            dtype: DType::Float32,
            split_dtype: DType::Int32,
        }],
    )
    .unwrap();
    let err = parse_batch(&spec, &serialized[1..3], &[], false).unwrap_err();
    assert_eq!(err.code(), Some(Code::InvalidArgument));
    assert!(
        err.message().contains("Key: ids, Index: 0."),
        "{}",
        err.message()
    );
}

/// `Feature` bytes written by hand: field 2 (float_list) / 3 (int64_list).
fn example_with_raw_feature(key: &str, feature: &[u8]) -> Vec<u8> {
    fn len(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag, body.len() as u8];
        v.extend_from_slice(body);
        v
    }
    let mut entry = len(0x0a, key.as_bytes());
    entry.extend(len(0x12, feature));
    len(0x0a, &len(0x0a, &entry))
}

#[test]
fn unpacked_and_split_repeated_fields() {
    // FloatList with two unpacked values and a packed run of one.
    let mut floats = vec![0x0d];
    floats.extend(1.5f32.to_le_bytes());
    floats.push(0x0d);
    floats.extend((-2.0f32).to_le_bytes());
    floats.extend([0x0a, 4]);
    floats.extend(4.0f32.to_le_bytes());
    let mut feature = vec![0x12, floats.len() as u8];
    feature.extend(&floats);
    // Int64List: unpacked -1 (ten bytes) then a packed [1, 300].
    let mut ints = vec![
        0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    ];
    ints.extend([0x0a, 3, 0x01, 0xac, 0x02]);
    let mut ifeature = vec![0x1a, ints.len() as u8];
    ifeature.extend(&ints);
    let s = spec(
        vec![("f", DType::Float32, vec![3], None)],
        vec![("i", DType::Int64)],
    );
    let mut ex = example_with_raw_feature("f", &feature);
    ex.extend(example_with_raw_feature("i", &ifeature));
    let parsed = parse_batch(&s, &[ex], &[], true).unwrap();
    assert_eq!(
        parsed.dense[0].as_slice::<f32>().unwrap(),
        &[1.5, -2.0, 4.0]
    );
    assert_eq!(parsed.dense[0].dims(), &[3]);
    assert_eq!(parsed.sparse[0].1.as_slice::<i64>().unwrap(), &[-1, 1, 300]);
    assert_eq!(parsed.sparse[0].0.dims(), &[3, 1]);
}

#[test]
fn malformed_bytes_are_errors_never_panics() {
    let mut rng = Lcg(5);
    let spec = batch_spec();
    let valid: Vec<Vec<u8>> = (0..20)
        .map(|_| random_example(&mut rng, 8).0.encode_to_vec())
        .collect();
    let mut errors = 0;
    for round in 0..4000 {
        let mut bytes = valid[round % valid.len()].clone();
        match rng.below(3) {
            0 => bytes.truncate(rng.below(bytes.len() as u64) as usize),
            1 => {
                let i = rng.below(bytes.len() as u64) as usize;
                bytes[i] = rng.below(256) as u8;
            }
            _ => {
                let i = rng.below(bytes.len() as u64) as usize;
                bytes.insert(i, rng.below(256) as u8);
            }
        }
        if let Err(e) = parse_batch(&spec, &[bytes], &[], false) {
            assert_eq!(e.code(), Some(Code::InvalidArgument));
            errors += 1;
        }
    }
    assert!(
        errors > 100,
        "mutations should mostly fail, got {errors} errors"
    );
    let err = parse_batch(&spec, &[b"\x0a\x05abc".to_vec()], &[], false).unwrap_err();
    assert_eq!(
        err.message(),
        "Could not parse example input, value: '\n\u{5}abc'"
    );
}
