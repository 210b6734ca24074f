//! Test support: the repository's fixtures (JSON manifests and numpy `.npz` archives written by
//! TensorFlow's generators), read without numpy.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use ferroflow::{DType, Tensor};
use serde_json::Value as Json;

/// `tests/fixtures/<rel>` of the repository.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

/// A JSON file.
pub fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One array of an `.npz`: its dtype (numpy's `descr`), shape and values as f64.
#[derive(Clone, Debug)]
pub struct Array {
    pub descr: String,
    pub shape: Vec<usize>,
    pub values: Vec<f64>,
}

impl Array {
    /// The ferroflow dtype of the array.
    pub fn dtype(&self) -> DType {
        match &self.descr[1..] {
            "f2" => DType::Float16,
            "f4" => DType::Float32,
            "f8" => DType::Float64,
            "i4" => DType::Int32,
            "i8" => DType::Int64,
            other => panic!("npy dtype {other} not handled"),
        }
    }

    /// The array as a tensor of its own dtype.
    pub fn tensor(&self) -> Tensor {
        self.tensor_as(self.dtype())
    }

    /// The array as a tensor of `dtype` (values converted).
    pub fn tensor_as(&self, dtype: DType) -> Tensor {
        let t = Tensor::from_vec(self.shape.clone(), self.values.clone()).unwrap();
        ferroflow::kernels::elementwise::cast(&t, dtype).unwrap()
    }
}

fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits >> 15 == 1 { -1.0 } else { 1.0 };
    let exp = ((bits >> 10) & 0x1f) as i32;
    let frac = (bits & 0x3ff) as f64;
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

fn parse_npy(bytes: &[u8]) -> Array {
    assert_eq!(&bytes[..6], b"\x93NUMPY", "not an .npy member");
    let (len, start) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&bytes[start..start + len]).unwrap();
    let value_of = |key: &str| {
        let at = header.find(&format!("'{key}':")).unwrap() + key.len() + 3;
        header[at..].trim_start()
    };
    let descr = value_of("descr")[1..]
        .split('\'')
        .next()
        .unwrap()
        .to_string();
    assert!(value_of("fortran_order").starts_with("False"));
    let shape_text = value_of("shape");
    let shape: Vec<usize> = shape_text[1..shape_text.find(')').unwrap()]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert!(descr.starts_with('<') || descr.starts_with('|'), "{descr}");
    let data = &bytes[start + len..];
    let values: Vec<f64> = match &descr[1..] {
        "f2" => data
            .chunks_exact(2)
            .map(|c| f16_to_f64(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        "f4" => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        "f8" => data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "i4" => data
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        "i8" => data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        other => panic!("npy dtype {other} not handled"),
    };
    Array {
        descr,
        shape,
        values,
    }
}

/// Every array of an `.npz` (a zip of `.npy` members, stored or deflated), by key.
pub fn read_npz(path: &Path) -> BTreeMap<String, Array> {
    let zip = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let u16_at = |i: usize| u16::from_le_bytes([zip[i], zip[i + 1]]) as usize;
    let u32_at = |i: usize| u32::from_le_bytes(zip[i..i + 4].try_into().unwrap()) as usize;
    // The end-of-central-directory record, then each central-directory entry.
    let end = (0..=zip.len() - 22)
        .rev()
        .find(|&i| zip[i..i + 4] == *b"PK\x05\x06")
        .expect("not a zip file");
    let mut at = u32_at(end + 16);
    let mut out = BTreeMap::new();
    for _ in 0..u16_at(end + 10) {
        assert_eq!(zip[at..at + 4], *b"PK\x01\x02");
        let method = u16_at(at + 10);
        let size = u32_at(at + 20);
        let name_len = u16_at(at + 28);
        let skip = name_len + u16_at(at + 30) + u16_at(at + 32);
        let local = u32_at(at + 42);
        let name = std::str::from_utf8(&zip[at + 46..at + 46 + name_len])
            .unwrap()
            .to_string();
        at += 46 + skip;
        let begin = local + 30 + u16_at(local + 26) + u16_at(local + 28);
        let raw = &zip[begin..begin + size];
        let member = match method {
            0 => raw.to_vec(),
            8 => {
                let mut v = Vec::new();
                flate2::read::DeflateDecoder::new(raw)
                    .read_to_end(&mut v)
                    .unwrap();
                v
            }
            m => panic!("zip method {m}"),
        };
        let key = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        out.insert(key, parse_npy(&member));
    }
    out
}

/// Asserts `got` is within `rtol`/`atol` of `want` element by element (numpy's `allclose`).
pub fn assert_close(got: &[f64], want: &[f64], rtol: f64, atol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= atol + rtol * w.abs(),
            "{what}[{i}]: got {g}, want {w} (rtol {rtol}, atol {atol})"
        );
    }
}

/// A fresh, empty directory under the system's temporary directory.
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ferroflow-facade-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
