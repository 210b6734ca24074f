//! Inputs that once cost the frame decoder more than they should (see
//! `crates/dist/fuzz` and benches/RESULTS.md, "Fuzzing").

use ferroflow_dist::wire::{decode_frame, Ack, Body, Envelope, TensorMeta};
use ferroflow_tensor::{Code, DType};
use prost::Message;

/// A frame whose header declares one tensor of `n` elements and whose body
/// is 16 bytes, far short of it.
fn short_frame(dtype: DType, n: usize) -> Vec<u8> {
    let env = Envelope {
        body: Some(Body::Ack(Ack {})),
        tensors: vec![TensorMeta {
            dtype: dtype.as_enum(),
            dims: vec![n as i64],
            byte_len: (n * dtype.size().unwrap()) as u64,
        }],
    };
    let header = env.encode_to_vec();
    let mut frame = (header.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&header);
    frame.extend_from_slice(&[0; 16]);
    frame
}

/// The process's peak resident memory (`VmHWM`), in KiB.
#[cfg(target_os = "linux")]
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
#[cfg(target_os = "linux")]
fn a_short_frame_declaring_a_huge_tensor_touches_little_memory() {
    // 512 MiB per tensor: the decoder used to fill f16, bf16 and complex
    // buffers with zeros element by element before reading, so these frames
    // of under 60 bytes each made it touch 2 GiB.
    let before = peak_rss_kib();
    for dtype in [
        DType::Complex128,
        DType::Complex64,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
    ] {
        let n = (512 << 20) / dtype.size().unwrap();
        let frame = short_frame(dtype, n);
        assert!(frame.len() < 64);
        let e = decode_frame(&frame).unwrap_err();
        // The stream ended inside the tensor (or, on a machine with less
        // memory than the tensor, the allocation check refused it).
        assert!(
            matches!(e.code(), Some(Code::Unavailable | Code::ResourceExhausted)),
            "{dtype:?}: {e}"
        );
    }
    let grew_mib = (peak_rss_kib() - before) / 1024;
    assert!(
        grew_mib < 128,
        "peak resident memory grew by {grew_mib} MiB"
    );
}
