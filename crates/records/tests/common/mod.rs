//! Test support: fixture paths, JSON values, hex/base64, a small npz reader
//! and temporary directories.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value as Json;

/// `tests/fixtures/records` of the repository.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/records")
}

pub fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A float written by the golden generator: a number, or "NaN" /
/// "Infinity" / "-Infinity".
pub fn json_f64(v: &Json) -> f64 {
    match v {
        Json::Number(n) => n.as_f64().expect("number"),
        Json::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            other => other
                .parse()
                .unwrap_or_else(|_| panic!("not a float: {other}")),
        },
        other => panic!("not a float: {other}"),
    }
}

/// An int64 (exact JSON integer, or a proto-JSON string).
pub fn json_i64(v: &Json) -> i64 {
    match v {
        Json::Number(n) => n.as_i64().expect("int64"),
        Json::String(s) => s.parse().expect("int64 string"),
        other => panic!("not an int64: {other}"),
    }
}

/// A `{"hex": ..., "utf8": ...}` string.
pub fn json_bytes(v: &Json) -> Vec<u8> {
    hex(v["hex"].as_str().expect("hex string"))
}

pub fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}

pub fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn base64(s: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => panic!("bad base64 character {c}"),
        }
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c) << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

/// One `.npy` array.
#[derive(Debug, Clone)]
pub struct Npy {
    pub descr: String,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

impl Npy {
    pub fn parse(bytes: &[u8]) -> Npy {
        assert_eq!(&bytes[..6], b"\x93NUMPY", "not an npy file");
        let (header_len, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            _ => (
                u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
                12,
            ),
        };
        let header = std::str::from_utf8(&bytes[start..start + header_len]).unwrap();
        let field = |name: &str| {
            let at = header.find(&format!("'{name}':")).expect(name) + name.len() + 3;
            header[at..].trim_start().to_string()
        };
        let descr = field("descr");
        let descr = descr[1..].split('\'').next().unwrap().to_string();
        assert!(field("fortran_order").starts_with("False"), "C order only");
        let shape_text = field("shape");
        let inner = &shape_text[1..shape_text.find(')').unwrap()];
        let shape = inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        Npy {
            descr,
            shape,
            data: bytes[start + header_len..].to_vec(),
        }
    }

    fn check(&self, descrs: &[&str]) {
        assert!(
            descrs.contains(&self.descr.as_str()),
            "dtype {} not in {descrs:?}",
            self.descr
        );
    }

    pub fn f32s(&self) -> Vec<f32> {
        self.check(&["<f4"]);
        self.data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    pub fn f64s(&self) -> Vec<f64> {
        self.check(&["<f8"]);
        self.data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    pub fn u8s(&self) -> Vec<u8> {
        self.check(&["|u1", "<u1"]);
        self.data.clone()
    }

    /// Any float array as f64.
    pub fn as_f64(&self) -> Vec<f64> {
        match self.descr.as_str() {
            "<f4" => self.f32s().iter().map(|&v| v as f64).collect(),
            "<f8" => self.f64s(),
            other => panic!("not a float array: {other}"),
        }
    }
}

/// Reads every member of an `.npz` (zip of `.npy`, stored or deflated).
pub fn read_npz(path: &Path) -> std::collections::BTreeMap<String, Npy> {
    let zip = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let u16_at = |i: usize| u16::from_le_bytes([zip[i], zip[i + 1]]) as usize;
    let u32_at = |i: usize| u32::from_le_bytes(zip[i..i + 4].try_into().unwrap()) as usize;
    let eocd = (0..=zip.len() - 22)
        .rev()
        .find(|&i| zip[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
        .expect("end of central directory");
    let entries = u16_at(eocd + 10);
    let mut at = u32_at(eocd + 16);
    let mut out = std::collections::BTreeMap::new();
    for _ in 0..entries {
        assert_eq!(
            zip[at..at + 4],
            [0x50, 0x4b, 0x01, 0x02],
            "central directory entry"
        );
        let method = u16_at(at + 10);
        let compressed = u32_at(at + 20);
        let name_len = u16_at(at + 28);
        let extra_len = u16_at(at + 30);
        let comment_len = u16_at(at + 32);
        let local = u32_at(at + 42);
        let name = String::from_utf8(zip[at + 46..at + 46 + name_len].to_vec()).unwrap();
        at += 46 + name_len + extra_len + comment_len;

        let data_start = local + 30 + u16_at(local + 26) + u16_at(local + 28);
        let raw = &zip[data_start..data_start + compressed];
        let bytes = match method {
            0 => raw.to_vec(),
            8 => {
                let mut v = Vec::new();
                flate2::read::DeflateDecoder::new(raw)
                    .read_to_end(&mut v)
                    .unwrap();
                v
            }
            m => panic!("zip method {m} not supported"),
        };
        let key = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        out.insert(key, Npy::parse(&bytes));
    }
    out
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "ferroflow-records-{label}-{}-{n}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Decodes a PNG into (width, height, channels, pixels).
pub fn decode_png(bytes: &[u8]) -> (u32, u32, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes.to_vec()));
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let channels = info.color_type.samples();
    buf.truncate(info.buffer_size());
    (info.width, info.height, channels, buf)
}
