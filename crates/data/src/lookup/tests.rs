use super::table::{Table, TableKind};
use super::text::{self, TextFileSpec};
use ferroflow_tensor::{Code, DType, Shape, Tensor};

fn strs(v: &[&str]) -> Tensor {
    Tensor::vector(v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>())
}

fn static_table() -> Table {
    Table::new(
        TableKind::Static,
        "t",
        DType::String,
        DType::Int64,
        Shape::scalar(),
    )
    .unwrap()
}

#[test]
fn static_table_finds_with_default_and_any_key_shape() {
    let t = static_table();
    let err = t.find(&strs(&["a"]), &Tensor::scalar(-1i64)).unwrap_err();
    assert_eq!(err.code(), Some(Code::FailedPrecondition));
    assert_eq!(err.message(), "Table not initialized.");
    t.initialize(&strs(&["a", "b", "a"]), &Tensor::vector(vec![1i64, 2, 1]))
        .unwrap();
    assert_eq!(t.size(), 2);
    let keys = strs(&["b", "zz", "a", "a"]).reshape([2, 2]).unwrap();
    let out = t.find(&keys, &Tensor::scalar(-1i64)).unwrap();
    assert_eq!(out.dims(), &[2, 2]);
    assert_eq!(out.as_slice::<i64>().unwrap(), &[2, -1, 1, 1]);
    // One default per key.
    let defs = Tensor::from_vec([2, 2], vec![10i64, 11, 12, 13]).unwrap();
    let out = t.find(&keys, &defs).unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), &[2, 11, 1, 1]);
    let err = t
        .find(&strs(&["a", "b"]), &Tensor::vector(vec![1i64, 2, 3]))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Expected shape [] or [2] for default value, got [3]"
    );
    let err = t
        .find(&Tensor::vector(vec![1i64]), &Tensor::scalar(-1i64))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Signature mismatch, have: resource, int64, int64->int64 expected: resource, string, int64->int64"
    );
}

#[test]
fn static_table_rules_match_tensorflow() {
    let t = static_table();
    let err = t
        .initialize(&strs(&["a", "a"]), &Tensor::vector(vec![1i64, 2]))
        .unwrap_err();
    assert_eq!(err.code(), Some(Code::FailedPrecondition));
    assert_eq!(
        err.message(),
        "HashTable has different value for same key. Key a has 1 and trying to add value 2"
    );
    // A failed initialization leaves the table empty and uninitialized.
    assert_eq!(t.size(), 0);
    t.initialize(&strs(&["a"]), &Tensor::vector(vec![1i64]))
        .unwrap();
    // Same number of entries: ignored, as TensorFlow.
    t.initialize(&strs(&["b"]), &Tensor::vector(vec![2i64]))
        .unwrap();
    let out = t.find(&strs(&["a", "b"]), &Tensor::scalar(-1i64)).unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), &[1, -1]);
    let err = t
        .initialize(&strs(&["b", "c"]), &Tensor::vector(vec![1i64, 2]))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Table was already initialized with different data."
    );
    let err = t
        .insert(&strs(&["a"]), &Tensor::vector(vec![1i64]))
        .unwrap_err();
    assert_eq!(err.code(), Some(Code::Unimplemented));
}

#[test]
fn mutable_table_insert_remove_export_import() {
    let t = Table::new(
        TableKind::Mutable,
        "m",
        DType::Int64,
        DType::String,
        Shape::scalar(),
    )
    .unwrap();
    t.insert(
        &Tensor::vector(vec![5i64, 7, 9]),
        &strs(&["five", "seven", "nine"]),
    )
    .unwrap();
    t.insert(&Tensor::vector(vec![7i64]), &strs(&["SEVEN"]))
        .unwrap();
    t.remove(&Tensor::vector(vec![5i64, 100])).unwrap();
    assert_eq!(t.size(), 2);
    let out = t
        .find(
            &Tensor::vector(vec![5i64, 7, 9]),
            &strs(&["?"]).reshape(Shape::scalar()).unwrap(),
        )
        .unwrap();
    let got: Vec<&[u8]> = out
        .as_slice::<Vec<u8>>()
        .unwrap()
        .iter()
        .map(|v| &v[..])
        .collect();
    assert_eq!(got, vec![&b"?"[..], b"SEVEN", b"nine"]);
    // A freed row is reused.
    t.insert(&Tensor::vector(vec![11i64]), &strs(&["eleven"]))
        .unwrap();
    let (k, v) = t.export().unwrap();
    let mut pairs: Vec<(i64, Vec<u8>)> = k
        .as_slice::<i64>()
        .unwrap()
        .iter()
        .copied()
        .zip(v.as_slice::<Vec<u8>>().unwrap().iter().cloned())
        .collect();
    pairs.sort();
    assert_eq!(
        pairs,
        vec![
            (7, b"SEVEN".to_vec()),
            (9, b"nine".to_vec()),
            (11, b"eleven".to_vec())
        ]
    );
    t.import(&Tensor::vector(vec![1i64]), &strs(&["one"]))
        .unwrap();
    assert_eq!(t.size(), 1);
    let err = t
        .insert(&Tensor::vector(vec![1i64, 2]), &strs(&["a", "b", "c"]))
        .unwrap_err();
    assert_eq!(err.message(), "Expected shape [2] for value, got [3]");
}

#[test]
fn table_of_tensors_rows() {
    let t = Table::new(
        TableKind::Mutable,
        "m",
        DType::String,
        DType::Float32,
        Shape::new(&[2]),
    )
    .unwrap();
    t.insert(
        &strs(&["a"]),
        &Tensor::from_vec([1, 2], vec![1f32, 2.0]).unwrap(),
    )
    .unwrap();
    let out = t
        .find(&strs(&["a", "b"]), &Tensor::vector(vec![9f32, 8.0]))
        .unwrap();
    assert_eq!(out.dims(), &[2, 2]);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[1.0, 2.0, 9.0, 8.0]);
    let err = t
        .find(&strs(&["a", "b"]), &Tensor::scalar(9f32))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Expected shape [2] or [2,2] for default value, got []"
    );
}

#[test]
fn large_lookups_run_in_pieces_and_agree() {
    let n = 100_000usize;
    let t = static_table();
    let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("w{i}").into_bytes()).collect();
    t.initialize(
        &Tensor::vector(keys.clone()),
        &Tensor::vector((0..n as i64).collect::<Vec<_>>()),
    )
    .unwrap();
    let q: Vec<Vec<u8>> = (0..3 * n)
        .map(|i| format!("w{}", (i * 7919) % (2 * n)).into_bytes())
        .collect();
    let out = t
        .find(&Tensor::vector(q.clone()), &Tensor::scalar(-1i64))
        .unwrap();
    for (i, v) in out.as_slice::<i64>().unwrap().iter().enumerate() {
        let want = (i * 7919) % (2 * n);
        assert_eq!(*v, if want < n { want as i64 } else { -1 });
    }
}

#[test]
fn dense_table_reserved_keys_and_export_layout() {
    let t = Table::new_dense(
        "d",
        Tensor::scalar(-1i64),
        Tensor::scalar(-2i64),
        DType::Int64,
        Shape::scalar(),
        8,
        0.8,
    )
    .unwrap();
    t.insert(
        &Tensor::vector((1..=7i64).collect::<Vec<_>>()),
        &Tensor::vector((1..=7i64).map(|x| 10 * x).collect::<Vec<_>>()),
    )
    .unwrap();
    assert_eq!(t.size(), 7);
    let (k, v) = t.export().unwrap();
    // TensorFlow grows to 16 buckets and puts key i in bucket i.
    assert_eq!(k.dims(), &[16, 1]);
    assert_eq!(v.dims(), &[16, 1]);
    let mut want_k = [-1i64; 16];
    let mut want_v = [0i64; 16];
    for i in 1..=7 {
        want_k[i] = i as i64;
        want_v[i] = 10 * i as i64;
    }
    assert_eq!(k.as_slice::<i64>().unwrap(), &want_k[..]);
    assert_eq!(v.as_slice::<i64>().unwrap(), &want_v[..]);
    let err = t
        .insert(&Tensor::vector(vec![-1i64]), &Tensor::vector(vec![1i64]))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Using the empty_key as a table key is not allowed"
    );
    let err = t
        .find(&Tensor::vector(vec![-2i64]), &Tensor::scalar(0i64))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Using the deleted_key as a table key is not allowed"
    );
    // Import takes the exported buckets back.
    let u = Table::new_dense(
        "e",
        Tensor::scalar(-1i64),
        Tensor::scalar(-2i64),
        DType::Int64,
        Shape::scalar(),
        4,
        0.8,
    )
    .unwrap();
    u.import(&k, &v).unwrap();
    assert_eq!(u.size(), 7);
    let out = u
        .find(&Tensor::vector(vec![3i64, 8]), &Tensor::scalar(0i64))
        .unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), &[30, 0]);
    for (b, msg) in [
        (
            6,
            "Number of buckets must be at least 4 and a power of 2, got: 6",
        ),
        (
            2,
            "Number of buckets must be at least 4 and a power of 2, got: 2",
        ),
    ] {
        let err = Table::new_dense(
            "x",
            Tensor::scalar(-1i64),
            Tensor::scalar(-2i64),
            DType::Int64,
            Shape::scalar(),
            b,
            0.8,
        )
        .err()
        .unwrap();
        assert_eq!(err.message(), msg);
    }
    let err = Table::new_dense(
        "x",
        Tensor::scalar(-1i64),
        Tensor::scalar(-1i64),
        DType::Int64,
        Shape::scalar(),
        8,
        0.8,
    )
    .err()
    .unwrap();
    assert_eq!(err.message(), "Empty and deleted keys cannot be equal");
}

fn spec(key_index: i64, value_index: i64) -> TextFileSpec {
    TextFileSpec {
        key_index,
        value_index,
        vocab_size: -1,
        delimiter: b'\t',
        offset: 0,
    }
}

#[test]
fn text_files_parse_as_tensorflow() {
    // Whole line -> line number, CRLF endings, no final newline, offset.
    let s = TextFileSpec {
        offset: 5,
        ..spec(-2, -1)
    };
    let (k, v) = text::parse("f", b"one\r\ntwo\nthree", &s, DType::String, DType::Int64).unwrap();
    assert_eq!(
        k.as_slice::<Vec<u8>>().unwrap(),
        &[b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
    );
    assert_eq!(v.as_slice::<i64>().unwrap(), &[5, 6, 7]);
    // Columns, whitespace around numbers, the int32 offset.
    let s = TextFileSpec {
        delimiter: b',',
        offset: 100,
        ..spec(0, 1)
    };
    let (k, v) = text::parse("f", b" 12 ,3\n-4,+5\n", &s, DType::Int64, DType::Int32).unwrap();
    assert_eq!(k.as_slice::<i64>().unwrap(), &[12, -4]);
    assert_eq!(v.as_slice::<i32>().unwrap(), &[103, 105]);
    // vocab_size truncates, and fails on a shorter file.
    let s = TextFileSpec {
        vocab_size: 1,
        ..spec(-2, -1)
    };
    let (k, _) = text::parse("f", b"a\nb\n", &s, DType::String, DType::Int64).unwrap();
    assert_eq!(k.num_elements(), 1);
    let s = TextFileSpec {
        vocab_size: 5,
        ..spec(0, -1)
    };
    let err = text::parse("f", b"x\t1\ny\tfoo\n", &s, DType::String, DType::Int64).unwrap_err();
    assert_eq!(
        err.message(),
        "Invalid vocab_size in f: expected 5 but got 2"
    );
    let cases: [(&[u8], TextFileSpec, DType, DType, &str); 5] = [
        (
            b"a\tb\n\nc\n",
            spec(-2, -1),
            DType::String,
            DType::Int64,
            "Invalid content in f: empty line found at position 5.",
        ),
        (
            b"x\t1\ny\tfoo\n",
            spec(0, 1),
            DType::String,
            DType::Int64,
            "Field foo in line 1 is not a valid int64.",
        ),
        (
            b"x\t1\n",
            spec(0, 2),
            DType::String,
            DType::Int64,
            "Invalid number of columns in f line 0 (x\t1) : expected at least 3 got 2",
        ),
        (
            b"x\n",
            spec(-1, -2),
            DType::String,
            DType::Int64,
            "Key index for line number requires table key dtype of int64, got string",
        ),
        (
            b"x\n",
            spec(-2, -1),
            DType::String,
            DType::Int32,
            "Value index for line number requires table value dtype of int64, got int32",
        ),
    ];
    for (contents, s, kd, vd, msg) in cases {
        let err = text::parse("f", contents, &s, kd, vd).unwrap_err();
        assert_eq!(err.code(), Some(Code::InvalidArgument));
        assert_eq!(err.message(), msg);
    }
    let err = text::read(
        "/nonexistent/vocab.txt",
        &spec(-2, -1),
        DType::String,
        DType::Int64,
    )
    .unwrap_err();
    assert_eq!(err.code(), Some(Code::NotFound));
    assert_eq!(
        err.message(),
        "/nonexistent/vocab.txt; No such file or directory"
    );
}
