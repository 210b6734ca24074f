//! `_native.Server`: one task's server (`tf.train.Server`), run in this
//! process by `ferroflow_dist`, and the `TF_CONFIG` parser the Python face
//! and the `ferroflow server` command share.

use crate::errors::{guard, IntoPyResult};
use ferroflow_dist::security::{read_token_file, TlsFiles};
use ferroflow_dist::server::ps_op_allowlist;
use ferroflow_dist::{ClusterSpec, ServerOptions, ServerSecurity, TaskId, TfConfig};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

/// A running task server.
#[pyclass(module = "ferroflow._native", frozen)]
pub(crate) struct Server {
    inner: ferroflow_dist::Server,
}

#[pymethods]
impl Server {
    /// Starts the server of task `task` of job `job` in the cluster given as
    /// JSON. Listens on `127.0.0.1` unless `bind` is given; beyond loopback
    /// it needs a token (`token`, `token_file`, or the
    /// `FERROFLOW_CLUSTER_TOKEN[_FILE]` environment), mutual TLS
    /// (`tls_cert`/`tls_key`/`tls_ca` or `FERROFLOW_TLS_*`), or `insecure`.
    /// `ps_allowlist` limits registered graphs to the ops a ps needs.
    #[new]
    #[pyo3(signature = (cluster_json, job, task, bind = None, token = None, token_file = None,
                        tls_cert = None, tls_key = None, tls_ca = None, insecure = false,
                        exit_when_chief_done = false, ps_allowlist = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        cluster_json: &str,
        job: &str,
        task: u32,
        bind: Option<String>,
        token: Option<Vec<u8>>,
        token_file: Option<PathBuf>,
        tls_cert: Option<PathBuf>,
        tls_key: Option<PathBuf>,
        tls_ca: Option<PathBuf>,
        insecure: bool,
        exit_when_chief_done: bool,
        ps_allowlist: bool,
    ) -> PyResult<Server> {
        let cluster_json = cluster_json.to_string();
        let job = job.to_string();
        py.detach(|| {
            guard(|| {
                let mut security = ServerSecurity::from_env()?;
                if let Some(t) = token {
                    security = security.with_token(&t)?;
                } else if let Some(f) = token_file {
                    security = security.with_token(&read_token_file(&f)?)?;
                }
                match (tls_cert, tls_key, tls_ca) {
                    (Some(cert), Some(key), Some(ca)) => {
                        security = security.with_tls(&TlsFiles { cert, key, ca })?;
                    }
                    (None, None, None) => {}
                    _ => {
                        return Err(ferroflow_tensor::Error::invalid_argument(
                            "TLS needs all of tls_cert, tls_key and tls_ca",
                        ))
                    }
                }
                security.insecure = insecure;
                let inner = ferroflow_dist::Server::start(ServerOptions {
                    cluster: ClusterSpec::from_json(&cluster_json)?,
                    task: TaskId::new(&job, task),
                    bind,
                    security,
                    exit_when_chief_done,
                    op_allowlist: ps_allowlist.then(ps_op_allowlist),
                })?;
                Ok(Server { inner })
            })
        })
        .py(py)
    }

    /// `grpc://localhost:<port>`.
    #[getter]
    fn target(&self) -> String {
        self.inner.target()
    }

    /// The port the server listens on.
    #[getter]
    fn port(&self) -> u16 {
        self.inner.local_addr().port()
    }

    /// The server's random incarnation (changes when the task restarts).
    #[getter]
    fn incarnation(&self) -> u64 {
        self.inner.incarnation()
    }

    /// Blocks until the server stops (Ctrl-C interrupts), or until
    /// `timeout_s` passes; returns whether it stopped.
    #[pyo3(signature = (timeout_s = None))]
    fn join(&self, py: Python<'_>, timeout_s: Option<f64>) -> PyResult<bool> {
        let end =
            timeout_s.map(|t| std::time::Instant::now() + Duration::from_secs_f64(t.max(0.0)));
        loop {
            let slice = Duration::from_millis(200);
            if py.detach(|| self.inner.wait(Some(slice))) {
                return Ok(true);
            }
            py.check_signals()?;
            if end.is_some_and(|e| std::time::Instant::now() >= e) {
                return Ok(false);
            }
        }
    }

    /// Stops serving.
    fn stop(&self) {
        self.inner.stop();
    }
}

/// `(cluster as JSON, (job, index) or None, rpc_layer)`.
type ParsedTfConfig = (String, Option<(String, u32)>, String);

/// Parses a `TF_CONFIG` value: `(cluster as JSON, (job, index) or None,
/// rpc_layer)`, the evaluator left out of the cluster.
#[pyfunction]
pub(crate) fn parse_tf_config(py: Python<'_>, text: &str) -> PyResult<ParsedTfConfig> {
    let c = TfConfig::parse(text).py(py)?;
    Ok((
        c.cluster.to_json(),
        c.task.map(|t| (t.job, t.task)),
        c.rpc_layer,
    ))
}

/// Runs `ferroflow server` with `argv` (the flags after the subcommand)
/// until the server stops or a signal (Ctrl-C; SIGTERM when the caller maps
/// it to KeyboardInterrupt) arrives; returns the exit status.
#[pyfunction]
pub(crate) fn serve(py: Python<'_>, argv: Vec<String>) -> i32 {
    let interrupted = || Python::attach(|py| py.check_signals().is_err());
    py.detach(|| ferroflow_dist::cli::run(&argv, &interrupted))
}
