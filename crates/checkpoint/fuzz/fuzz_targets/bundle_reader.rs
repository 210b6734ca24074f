//! Fuzzes the whole bundle reader: the input is split into an `.index` and
//! a `.data-00000-of-00001` file (the first two bytes give the index
//! length), written to a scratch directory, opened, listed and read tensor
//! by tensor (whole and raw, slices assembled). Must never panic.
//! Seed the corpus with the fixtures' checkpoints for useful coverage.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn scratch() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ferroflow-ckpt-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch directory");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let split = (u16::from_le_bytes(*head) as usize).min(rest.len());
    let (index, bundle_data) = rest.split_at(split);
    ferroflow_checkpoint::fuzzing::read_bundle_bytes(scratch(), index, bundle_data);
});
