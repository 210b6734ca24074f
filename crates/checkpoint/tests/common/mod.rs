//! Test support: the golden checkpoint fixtures, their manifests and npz
//! values, and temporary directories.
#![allow(dead_code)]

use ferroflow_checkpoint::slice::copy_region;
use ferroflow_checkpoint::{element_size, BundleReader, RawData, RawTensor, TensorSlice};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `tests/fixtures/checkpoints` of the repository.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/checkpoints")
}

/// Every case directory (`dtypes`, `partitioned`, ...), sorted.
pub fn cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixtures/checkpoints")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("list_variables.json").exists())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no checkpoint fixtures found");
    v
}

/// Every checkpoint prefix in a case's `ckpt/` (one per `.index` file).
pub fn prefixes(case: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(case.join("ckpt"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "index"))
        .map(|p| p.with_extension(""))
        .collect();
    v.sort();
    v
}

pub fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}

pub fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One `.npy` array: its dtype descriptor, shape and raw (little-endian,
/// C-order) element bytes.
#[derive(Debug, Clone)]
pub struct Npy {
    pub descr: String,
    pub shape: Vec<i64>,
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
}

/// Reads every member of an `.npz` (zip of `.npy`, stored or deflated).
pub fn read_npz(path: &Path) -> BTreeMap<String, Npy> {
    let zip = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let u16_at = |i: usize| u16::from_le_bytes([zip[i], zip[i + 1]]) as usize;
    let u32_at = |i: usize| u32::from_le_bytes(zip[i..i + 4].try_into().unwrap()) as usize;
    let eocd = (0..=zip.len() - 22)
        .rev()
        .find(|&i| zip[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
        .expect("end of central directory");
    let entries = u16_at(eocd + 10);
    let mut at = u32_at(eocd + 16);
    let mut out = BTreeMap::new();
    for _ in 0..entries {
        assert_eq!(zip[at..at + 4], [0x50, 0x4b, 0x01, 0x02]);
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

/// TensorFlow's Python dtype names (`get_variable_to_dtype_map`) → enum.
pub fn dtype_enum(name: &str) -> i32 {
    match name {
        "float32" => 1,
        "float64" => 2,
        "int32" => 3,
        "uint8" => 4,
        "int16" => 5,
        "int8" => 6,
        "string" => 7,
        "complex64" => 8,
        "int64" => 9,
        "bool" => 10,
        "bfloat16" => 14,
        "uint16" => 17,
        "complex128" => 18,
        "float16" => 19,
        "uint32" => 22,
        "uint64" => 23,
        other => panic!("unknown dtype name {other}"),
    }
}

pub fn sha256_hex(b: &[u8]) -> String {
    to_hex(&Sha256::digest(b))
}

pub fn json_shape(v: &Json) -> Vec<i64> {
    v.as_array()
        .expect("shape list")
        .iter()
        .map(|d| d.as_i64().expect("dim"))
        .collect()
}

/// The golden generator's `formula_tensor`:
/// `x[i] = float32(((i + salt) * 2654435761 mod 2^32) / 2^32 - 0.5)`.
pub fn formula_tensor(formula: &str, n: usize) -> Vec<u8> {
    assert!(
        formula.contains("2654435761") && formula.contains("float32"),
        "unknown formula: {formula}"
    );
    let salt: u64 = formula
        .split("salt=")
        .nth(1)
        .and_then(|s| {
            s.split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|d| d.parse().ok())
        })
        .expect("salt in formula");
    let mut out = Vec::with_capacity(4 * n);
    for i in 0..n as u64 {
        let h = ((i + salt).wrapping_mul(2_654_435_761)) & 0xffff_ffff;
        let x = (h as f64 / 4_294_967_296.0 - 0.5) as f32;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// The expected value of every variable of a manifest, by name, from the
/// npz / JSON alone. `_CHECKPOINTABLE_OBJECT_GRAPH` is re-serialized from
/// its parsed form. Variables whose value the manifest does not give are
/// left out.
pub fn expected_values(case: &Path, manifest: &Json) -> BTreeMap<String, RawTensor> {
    let npz_path = case.join("values.npz");
    let npz = if npz_path.exists() {
        read_npz(&npz_path)
    } else {
        BTreeMap::new()
    };
    let mut out = BTreeMap::new();
    for v in manifest["variables"].as_array().into_iter().flatten() {
        let name = v["name"].as_str().unwrap().to_string();
        let dtype = dtype_enum(v["dtype"].as_str().unwrap());
        let shape = json_shape(&v["shape"]);
        let n: usize = shape.iter().product::<i64>() as usize;
        let data = if let Some(key) = v["npz_key"].as_str() {
            let a = &npz[key];
            assert_eq!(a.shape, shape, "{name}: npz shape");
            RawData::Bytes(a.data.clone())
        } else if let Some(items) = v.get("value_json") {
            let one = |x: &Json| hex(x["hex"].as_str().expect("hex"));
            RawData::Strings(match items {
                Json::Array(a) => a.iter().map(one).collect(),
                x => vec![one(x)],
            })
        } else if let Some(graph) = v.get("parsed_object_graph") {
            RawData::Strings(vec![object_graph::encode(graph)])
        } else if v["value"]["omitted"].as_bool() == Some(true) {
            let bytes = formula_tensor(v["value"]["formula"].as_str().unwrap(), n);
            assert_eq!(
                sha256_hex(&bytes),
                v["value"]["sha256_of_little_endian_bytes"]
                    .as_str()
                    .unwrap(),
                "{name}: formula does not reproduce the recorded digest"
            );
            RawData::Bytes(bytes)
        } else {
            panic!("{name}: no value in the manifest")
        };
        out.insert(name, RawTensor { dtype, shape, data });
    }
    out
}

/// Values for checkpoints the manifest describes only by
/// `values_in_kept_checkpoints` (max_to_keep): dtypes come from the
/// checkpoint's own index, values from the JSON.
pub fn kept_values(
    manifest: &Json,
    prefix: &Path,
    reader: &BundleReader,
) -> Option<BTreeMap<String, RawTensor>> {
    let base = prefix.file_name()?.to_str()?;
    let kept = manifest.get("values_in_kept_checkpoints")?.get(base)?;
    let mut out = BTreeMap::new();
    for (name, value) in kept.as_object()? {
        let (dtype, shape) = reader.dtype_and_shape(name).unwrap();
        let flat: Vec<&Json> = match value {
            Json::Array(a) => a.iter().collect(),
            x => vec![x],
        };
        let mut bytes = Vec::new();
        for x in flat {
            match dtype {
                1 => bytes.extend_from_slice(&(x.as_f64().unwrap() as f32).to_le_bytes()),
                2 => bytes.extend_from_slice(&x.as_f64().unwrap().to_le_bytes()),
                3 => bytes.extend_from_slice(&(x.as_i64().unwrap() as i32).to_le_bytes()),
                9 => bytes.extend_from_slice(&x.as_i64().unwrap().to_le_bytes()),
                d => panic!("{name}: dtype {d} in values_in_kept_checkpoints"),
            }
        }
        out.insert(
            name.clone(),
            RawTensor {
                dtype,
                shape,
                data: RawData::Bytes(bytes),
            },
        );
    }
    Some(out)
}

/// `slice` (of a tensor of `full_shape`) of a full raw tensor.
pub fn raw_slice(full: &RawTensor, slice: &TensorSlice) -> RawTensor {
    let bounds = slice.bounds(&full.shape);
    let full_bounds = TensorSlice::full(full.shape.len()).bounds(&full.shape);
    let shape: Vec<i64> = bounds.iter().map(|&(_, l)| l).collect();
    let n: i64 = shape.iter().product();
    let data = match &full.data {
        RawData::Bytes(b) => {
            let e = element_size(full.dtype).unwrap() as i64;
            let with = |b: &[(i64, i64)]| b.iter().copied().chain([(0, e)]).collect::<Vec<_>>();
            let mut out = vec![0u8; (n * e) as usize];
            copy_region(
                b,
                &with(&full_bounds),
                &mut out,
                &with(&bounds),
                &with(&bounds),
            );
            RawData::Bytes(out)
        }
        RawData::Strings(s) => {
            let mut out = vec![Vec::new(); n as usize];
            copy_region(s, &full_bounds, &mut out, &bounds, &bounds);
            RawData::Strings(out)
        }
    };
    RawTensor {
        dtype: full.dtype,
        shape,
        data,
    }
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
            "ferroflow-checkpoint-{label}-{}-{n}-{nanos}",
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

/// `tensorflow.TrackableObjectGraph`, enough to re-serialize the parsed
/// graph the manifest shows (fields in number order, as protobuf emits).
pub mod object_graph {
    use prost::Message;
    use serde_json::Value as Json;

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Graph {
        #[prost(message, repeated, tag = "1")]
        pub nodes: Vec<Object>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Object {
        #[prost(message, repeated, tag = "1")]
        pub children: Vec<Child>,
        #[prost(message, repeated, tag = "2")]
        pub attributes: Vec<Attribute>,
        #[prost(message, repeated, tag = "3")]
        pub slot_variables: Vec<Slot>,
        #[prost(message, optional, tag = "4")]
        pub registered_saver: Option<Saver>,
        #[prost(message, optional, tag = "5")]
        pub has_checkpoint_values: Option<BoolValue>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Child {
        #[prost(int32, tag = "1")]
        pub node_id: i32,
        #[prost(string, tag = "2")]
        pub local_name: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Attribute {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(string, tag = "2")]
        pub full_name: String,
        #[prost(string, tag = "3")]
        pub checkpoint_key: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Slot {
        #[prost(int32, tag = "1")]
        pub original_variable_node_id: i32,
        #[prost(string, tag = "2")]
        pub slot_name: String,
        #[prost(int32, tag = "3")]
        pub slot_variable_node_id: i32,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Saver {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(string, tag = "2")]
        pub object_name: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BoolValue {
        #[prost(bool, tag = "1")]
        pub value: bool,
    }

    fn s(v: &Json, k: &str) -> String {
        v.get(k).and_then(Json::as_str).unwrap_or("").to_string()
    }

    fn i(v: &Json, k: &str) -> i32 {
        v.get(k).and_then(Json::as_i64).unwrap_or(0) as i32
    }

    fn list<'a>(v: &'a Json, k: &str) -> impl Iterator<Item = &'a Json> {
        v.get(k).and_then(Json::as_array).into_iter().flatten()
    }

    /// Serializes the manifest's `parsed_object_graph`.
    pub fn encode(parsed: &Json) -> Vec<u8> {
        let nodes = list(parsed, "nodes")
            .map(|n| Object {
                children: list(n, "children")
                    .map(|c| Child {
                        node_id: i(c, "node_id"),
                        local_name: s(c, "local_name"),
                    })
                    .collect(),
                attributes: list(n, "attributes")
                    .map(|a| Attribute {
                        name: s(a, "name"),
                        full_name: s(a, "full_name"),
                        checkpoint_key: s(a, "checkpoint_key"),
                    })
                    .collect(),
                slot_variables: list(n, "slot_variables")
                    .map(|a| Slot {
                        original_variable_node_id: i(a, "original_variable_node_id"),
                        slot_name: s(a, "slot_name"),
                        slot_variable_node_id: i(a, "slot_variable_node_id"),
                    })
                    .collect(),
                registered_saver: n.get("registered_saver").map(|r| Saver {
                    name: s(r, "name"),
                    object_name: s(r, "object_name"),
                }),
                has_checkpoint_values: n
                    .get("has_checkpoint_values")
                    .and_then(Json::as_bool)
                    .map(|value| BoolValue { value }),
            })
            .collect();
        Graph { nodes }.encode_to_vec()
    }
}
