//! Invoke latency of one `.tflite` model in our interpreter, without Python:
//! for profiling kernels (`perf record`) and quick before/after checks.
//! The side-by-side figures against TensorFlow Lite come from
//! `benches/tflite.py`.
//!
//! ```text
//! cargo run --release -p ferroflow-lite --example invoke_latency -- MODEL.tflite [THREADS] [SECONDS]
//! ```
//!
//! Fills every input with seeded pseudo-random bytes, warms up, then prints
//! the median, best and mean per-invoke time over rounds of about 0.2 s,
//! and the process's CPU time per invoke (from `/proc/self/stat` on Linux),
//! which other programs' load inflates less than the wall-clock time.

use ferroflow_lite::Interpreter;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: invoke_latency MODEL.tflite [THREADS] [SECONDS]");
    let threads: usize = args.get(2).map_or(1, |s| s.parse().expect("THREADS"));
    let seconds: f64 = args.get(3).map_or(3.0, |s| s.parse().expect("SECONDS"));
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut interp = Interpreter::from_bytes(&bytes, threads).expect("model");
    interp.allocate_tensors().expect("allocate");

    // A small xorshift generator: the values only need to be repeatable
    // and spread over the byte range.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for &index in interp.inputs().to_vec().iter() {
        let slot = interp.tensor(index as i64).expect("input");
        let (dtype, shape) = (slot.dtype, slot.shape.clone());
        let len = slot.num_elements() * dtype.size();
        let data: Vec<u8> = if dtype == ferroflow_lite::DType::F32 {
            (0..len / 4)
                .flat_map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    ((state >> 40) as f32 / (1u64 << 24) as f32).to_le_bytes()
                })
                .collect()
        } else {
            (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 56) as u8
                })
                .collect()
        };
        interp
            .set_tensor(index as i64, dtype, &shape, &data)
            .expect("set input");
    }

    let warm = Instant::now();
    let mut per_round = 0usize;
    while warm.elapsed().as_secs_f64() < 0.2 {
        interp.invoke().expect("invoke");
        per_round += 1;
    }
    let mut rounds = Vec::new();
    let cpu_start = process_cpu_seconds();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < seconds {
        let t = Instant::now();
        for _ in 0..per_round {
            interp.invoke().expect("invoke");
        }
        rounds.push(t.elapsed().as_secs_f64() / per_round as f64);
    }
    let cpu = process_cpu_seconds()
        .zip(cpu_start)
        .map(|(end, start)| end - start);
    let invokes = (rounds.len() * per_round) as f64;
    rounds.sort_by(f64::total_cmp);
    let mean = rounds.iter().sum::<f64>() / rounds.len() as f64;
    println!(
        "{path}: threads {threads}, {} rounds of {per_round}: median {:.3} ms, best {:.3} ms, mean {:.3} ms",
        rounds.len(),
        rounds[rounds.len() / 2] * 1e3,
        rounds[0] * 1e3,
        mean * 1e3
    );
    if let Some(cpu) = cpu {
        println!("  CPU time per invoke {:.3} ms", cpu / invokes * 1e3);
    }
}

/// User plus system CPU seconds of this process so far (Linux; `None`
/// elsewhere). The fields after the command name (which may hold spaces)
/// are counted from its closing parenthesis.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13
    // after the state field; ticks of 1/100 s on Linux.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
