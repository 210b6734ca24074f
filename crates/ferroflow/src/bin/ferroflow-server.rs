//! `ferroflow-server`: runs one task (ps, worker, chief) of a TensorFlow
//! 1.x-style cluster, configured by `TF_CONFIG` or flags (`--help`), with
//! every op ferroflow has. The same command as the Python package's
//! `ferroflow server`, without Python: what a parameter-server container
//! needs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn main() {
    ferroflow::register_all();
    let stop = Arc::new(AtomicBool::new(false));
    // SIGTERM (Kubernetes stopping the pod) and Ctrl-C stop the server cleanly.
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(signal, stop.clone()) {
            eprintln!("ferroflow-server: cannot handle signal {signal}: {e}");
        }
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let status = ferroflow_dist::cli::run(&args, &|| stop.load(Ordering::Relaxed));
    std::process::exit(status);
}
