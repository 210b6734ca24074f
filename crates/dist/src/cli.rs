//! `ferroflow server`: run one task of a cluster until it is told to stop.
//!
//! Shared by the `ferroflow-server` binary and the Python console script's
//! `server` subcommand, so both take the same flags. With no flags the task
//! comes from `TF_CONFIG` (what Kubeflow's TFJob, SageMaker and hand-written
//! Kubernetes manifests set); flags override it.

use crate::cluster::{ClusterSpec, TaskId, TfConfig};
use crate::security::{read_token_file, ServerSecurity, TlsFiles};
use crate::server::{ps_op_allowlist, Server, ServerOptions};
use clap::Parser;
use ferroflow_tensor::{bail, ensure, Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// The flags of `ferroflow server`.
#[derive(Parser, Debug, Default)]
#[command(
    name = "ferroflow server",
    about = "Run one task (ps, worker, chief) of a TensorFlow 1.x-style cluster",
    long_about = "Runs the server of one task of a ps/worker cluster. With no flags the cluster \
                  and task come from TF_CONFIG. Listens on 127.0.0.1 unless --bind says otherwise; \
                  a non-loopback bind needs a cluster token (--token-file or \
                  FERROFLOW_CLUSTER_TOKEN[_FILE]), mutual TLS, or --insecure. A plain HTTP GET on \
                  the port answers 200 (health probe)."
)]
pub struct ServerArgs {
    /// The cluster: JSON ({"ps": ["host:port", ...], "worker": [...]}) or
    /// `ps=host:port,host:port;worker=host:port`. Default: TF_CONFIG's.
    #[arg(long)]
    pub cluster: Option<String>,
    /// This task's job (default: TF_CONFIG's task.type).
    #[arg(long)]
    pub job: Option<String>,
    /// This task's index in its job (default: TF_CONFIG's task.index, else 0).
    #[arg(long)]
    pub task: Option<u32>,
    /// Address to listen on: an IP (the task's port from the cluster) or IP:port.
    #[arg(long)]
    pub bind: Option<String>,
    /// A file holding the cluster token (e.g. a mounted Kubernetes Secret).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// This server's TLS certificate (PEM); with --tls-key and --tls-ca, mutual TLS.
    #[arg(long)]
    pub tls_cert: Option<PathBuf>,
    /// This server's TLS private key (PEM).
    #[arg(long)]
    pub tls_key: Option<PathBuf>,
    /// The cluster CA (PEM) client certificates must be signed by.
    #[arg(long)]
    pub tls_ca: Option<PathBuf>,
    /// Allow a non-loopback bind without a token or TLS (trusted networks only).
    #[arg(long)]
    pub insecure: bool,
    /// Exit (status 0) when the chief reports that training is done.
    #[arg(long)]
    pub exit_when_chief_done: bool,
    /// Only accept graphs made of the ops a parameter server needs.
    #[arg(long)]
    pub ps_allowlist: bool,
}

/// Parses `ps=h:p,h:p;worker=h:p` or JSON.
pub fn parse_cluster_flag(text: &str) -> Result<ClusterSpec> {
    let t = text.trim();
    if t.starts_with('{') {
        return ClusterSpec::from_json(t);
    }
    let mut tasks: Vec<(String, u32, String)> = Vec::new();
    for job in t.split(';').filter(|j| !j.trim().is_empty()) {
        let (name, addrs) = job.split_once('=').ok_or_else(|| {
            Error::invalid_argument(format!("--cluster: '{job}' is not job=host:port,..."))
        })?;
        for (i, a) in addrs
            .split(',')
            .filter(|a| !a.trim().is_empty())
            .enumerate()
        {
            tasks.push((name.trim().to_string(), i as u32, a.trim().to_string()));
        }
    }
    if tasks.is_empty() {
        bail!(invalid_argument, "--cluster names no tasks");
    }
    Ok(ClusterSpec::from_tasks(
        tasks.iter().map(|(j, i, a)| (j.as_str(), *i, a.as_str())),
    ))
}

/// The server options the flags and `tf_config` (TF_CONFIG's value) give.
pub fn server_options(args: &ServerArgs, tf_config: &str) -> Result<ServerOptions> {
    let env = TfConfig::parse(tf_config)?;
    let cluster = match &args.cluster {
        Some(c) => parse_cluster_flag(c)?,
        None => env.cluster.clone(),
    };
    if cluster.is_empty() {
        bail!(
            invalid_argument,
            "no cluster: set TF_CONFIG or pass --cluster (and --job, --task)"
        );
    }
    let job = args
        .job
        .clone()
        .or_else(|| env.task.as_ref().map(|t| t.job.clone()))
        .ok_or_else(|| Error::invalid_argument("no task: set TF_CONFIG's task or pass --job"))?;
    ensure!(
        job != "evaluator",
        invalid_argument,
        "an evaluator is not part of the training cluster and runs no server"
    );
    let task = args
        .task
        .or_else(|| env.task.as_ref().filter(|t| t.job == job).map(|t| t.task))
        .unwrap_or(0);
    let mut security = ServerSecurity::from_env()?;
    if let Some(f) = &args.token_file {
        security = security.with_token(&read_token_file(f)?)?;
    }
    match (&args.tls_cert, &args.tls_key, &args.tls_ca) {
        (Some(cert), Some(key), Some(ca)) => {
            security = security.with_tls(&TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                ca: ca.clone(),
            })?;
        }
        (None, None, None) => {}
        _ => {
            bail!(
                invalid_argument,
                "TLS needs all of --tls-cert, --tls-key and --tls-ca"
            )
        }
    }
    security.insecure = args.insecure;
    Ok(ServerOptions {
        cluster,
        task: TaskId::new(&job, task),
        bind: args.bind.clone(),
        security,
        exit_when_chief_done: args.exit_when_chief_done,
        op_allowlist: args.ps_allowlist.then(ps_op_allowlist),
    })
}

/// Runs `ferroflow server` with `argv` (without the program and subcommand
/// names) until the server stops or `interrupted()` turns true (polled
/// five times a second); returns the exit status.
pub fn run(argv: &[String], interrupted: &dyn Fn() -> bool) -> i32 {
    let args = match ServerArgs::try_parse_from(
        std::iter::once("ferroflow server".to_string()).chain(argv.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let tf_config = std::env::var("TF_CONFIG").unwrap_or_default();
    let server = match server_options(&args, &tf_config).and_then(Server::start) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ferroflow server: error: {e}");
            return 2;
        }
    };
    eprintln!(
        "ferroflow server: task {} listening on {} (incarnation {:016x})",
        server.task(),
        server.local_addr(),
        server.incarnation()
    );
    loop {
        if server.wait(Some(Duration::from_millis(200))) {
            eprintln!("ferroflow server: task {} stopped", server.task());
            return 0;
        }
        if interrupted() {
            eprintln!(
                "ferroflow server: task {} interrupted; stopping",
                server.task()
            );
            server.stop();
            return 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_flag_forms() {
        let a = parse_cluster_flag("ps=a:1,b:2;worker=c:3").unwrap();
        let b = parse_cluster_flag(r#"{"ps":["a:1","b:2"],"worker":["c:3"]}"#).unwrap();
        assert_eq!(a, b);
        assert!(parse_cluster_flag("ps").is_err());
    }

    #[test]
    fn tf_config_gives_the_task_and_flags_override_it() {
        let tf = r#"{"cluster":{"ps":["127.0.0.1:2222"],"worker":["127.0.0.1:2223"]},
                     "task":{"type":"ps","index":0}}"#;
        let o = server_options(&ServerArgs::default(), tf).unwrap();
        assert_eq!(o.task, TaskId::new("ps", 0));
        let args = ServerArgs {
            job: Some("worker".into()),
            ..Default::default()
        };
        assert_eq!(
            server_options(&args, tf).unwrap().task,
            TaskId::new("worker", 0)
        );
        assert!(server_options(&ServerArgs::default(), "").is_err());
        let eval = r#"{"cluster":{"ps":["h:1"]},"task":{"type":"evaluator","index":0}}"#;
        assert!(server_options(&ServerArgs::default(), eval).is_err());
    }
}
