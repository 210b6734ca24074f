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

/// A connection's first frame is read before its token is checked: a stranger's
/// header may be at most `MAX_HELLO_BYTES`, and the frame may carry no tensors.
#[test]
fn a_hello_frame_is_small_and_carries_no_tensors() {
    use ferroflow_dist::wire::{
        read_frame, read_hello_frame, Hello, MAX_HELLO_BYTES, PROTOCOL_VERSION,
    };

    let hello = Envelope::new(Body::Hello(Hello {
        protocol_version: PROTOCOL_VERSION,
        token: b"secret".to_vec(),
    }));
    let header = hello.encode_to_vec();
    let mut frame = (header.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&header);
    let read = read_hello_frame(&mut frame.as_slice()).unwrap().unwrap();
    assert_eq!(read, hello);

    // A header just over the limit is refused from its length alone (only the
    // four length bytes are present: nothing else is read).
    let too_long = ((MAX_HELLO_BYTES + 1) as u32).to_le_bytes();
    let e = read_hello_frame(&mut too_long.as_slice()).unwrap_err();
    assert_eq!(e.code(), Some(Code::DataLoss), "{e}");
    assert!(e.message().contains("exceeds the limit"), "{e}");
    // The same length is fine once authenticated (the stream then ends early).
    let e = read_frame(&mut too_long.as_slice()).unwrap_err();
    assert_eq!(e.code(), Some(Code::Unavailable), "{e}");

    // A first frame declaring a tensor is refused before any tensor byte is read.
    let with_tensor = short_frame(DType::Float32, 1 << 28);
    let e = read_hello_frame(&mut with_tensor.as_slice()).unwrap_err();
    assert_eq!(e.code(), Some(Code::DataLoss), "{e}");
    assert!(e.message().contains("no tensors"), "{e}");
}
