//! Cluster specs, task ids, device strings and `TF_CONFIG`.
//!
//! A cluster maps job names (`ps`, `worker`, `chief`, ...) to tasks, each a
//! `host:port` address under a task index; jobs may be dense (a list) or
//! sparse (a map from index to address), as `tf.train.ClusterSpec` accepts.

use ferroflow_tensor::{bail, Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// One task of a cluster: `/job:<job>/replica:0/task:<task>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId {
    pub job: String,
    pub task: u32,
}

impl TaskId {
    pub fn new(job: &str, task: u32) -> TaskId {
        TaskId {
            job: job.to_string(),
            task,
        }
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/job:{}/replica:0/task:{}", self.job, self.task)
    }
}

/// The jobs of a cluster and the address of each task.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterSpec {
    jobs: BTreeMap<String, BTreeMap<u32, String>>,
}

impl ClusterSpec {
    /// A cluster from `(job, task index, address)` triples.
    pub fn from_tasks<'a>(tasks: impl IntoIterator<Item = (&'a str, u32, &'a str)>) -> ClusterSpec {
        let mut jobs: BTreeMap<String, BTreeMap<u32, String>> = BTreeMap::new();
        for (job, task, addr) in tasks {
            jobs.entry(job.to_string())
                .or_default()
                .insert(task, addr.to_string());
        }
        ClusterSpec { jobs }
    }

    /// Parses the JSON form `{"ps": ["h:p", ...], "worker": {"0": "h:p"}}`
    /// (`TF_CONFIG`'s `cluster`, `ClusterSpec.as_dict()`).
    pub fn from_json(text: &str) -> Result<ClusterSpec> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::invalid_argument(format!("cluster spec is not valid JSON: {e}")))?;
        ClusterSpec::from_value(&value)
    }

    fn from_value(value: &Value) -> Result<ClusterSpec> {
        let obj = value.as_object().ok_or_else(|| {
            Error::invalid_argument("a cluster spec must be a JSON object of jobs")
        })?;
        let mut jobs = BTreeMap::new();
        for (job, tasks) in obj {
            if job.is_empty() || !job.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                bail!(
                    invalid_argument,
                    "cluster spec: '{job}' is not a valid job name"
                );
            }
            let mut by_index = BTreeMap::new();
            let addr = |v: &Value| -> Result<String> {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "cluster spec: job '{job}' has a task address that is not a string: {v}"
                    ))
                })
            };
            match tasks {
                Value::Array(list) => {
                    for (i, v) in list.iter().enumerate() {
                        by_index.insert(i as u32, addr(v)?);
                    }
                }
                Value::Object(map) => {
                    for (k, v) in map {
                        let i: u32 = k.parse().map_err(|_| {
                            Error::invalid_argument(format!(
                                "cluster spec: job '{job}' has task index '{k}', not a non-negative integer"
                            ))
                        })?;
                        by_index.insert(i, addr(v)?);
                    }
                }
                other => {
                    bail!(
                        invalid_argument,
                        "cluster spec: job '{job}' must be a list or a map of addresses, got {other}"
                    )
                }
            }
            jobs.insert(job.clone(), by_index);
        }
        Ok(ClusterSpec { jobs })
    }

    /// The JSON form, sparse jobs as maps and dense ones as lists.
    pub fn to_json(&self) -> String {
        let mut obj = serde_json::Map::new();
        for (job, tasks) in &self.jobs {
            let dense = tasks.keys().copied().eq(0..tasks.len() as u32);
            let v = if dense {
                Value::Array(tasks.values().map(|a| Value::String(a.clone())).collect())
            } else {
                Value::Object(
                    tasks
                        .iter()
                        .map(|(i, a)| (i.to_string(), Value::String(a.clone())))
                        .collect(),
                )
            };
            obj.insert(job.clone(), v);
        }
        Value::Object(obj).to_string()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The address of `task`, if the cluster has it.
    pub fn address(&self, task: &TaskId) -> Option<&str> {
        self.jobs
            .get(&task.job)
            .and_then(|t| t.get(&task.task))
            .map(String::as_str)
    }

    /// Every task, jobs in name order and tasks in index order.
    pub fn tasks(&self) -> impl Iterator<Item = (TaskId, &str)> {
        self.jobs.iter().flat_map(|(job, tasks)| {
            tasks
                .iter()
                .map(move |(i, a)| (TaskId::new(job, *i), a.as_str()))
        })
    }

    /// The task whose address is `addr` (`host:port`), trying the port alone
    /// against loopback names when the host differs (`localhost` vs
    /// `127.0.0.1`).
    pub fn task_at(&self, addr: &str) -> Option<TaskId> {
        if let Some((t, _)) = self.tasks().find(|(_, a)| *a == addr) {
            return Some(t);
        }
        let (host, port) = split_host_port(addr)?;
        if !is_loopback_name(host) {
            return None;
        }
        self.tasks()
            .find(|(_, a)| {
                split_host_port(a).is_some_and(|(h, p)| p == port && is_loopback_name(h))
            })
            .map(|(t, _)| t)
    }

    /// Drops a job (the evaluator is not part of the training cluster).
    pub fn without_job(mut self, job: &str) -> ClusterSpec {
        self.jobs.remove(job);
        self
    }
}

/// `host:port` (or `[v6]:port`) split at the last colon.
pub fn split_host_port(addr: &str) -> Option<(&str, u16)> {
    let (host, port) = addr.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host, port.parse().ok()?))
}

/// `localhost`, `127.x.y.z`, `::1` and `0.0.0.0`-style wildcard names a
/// local process reaches through loopback.
pub fn is_loopback_name(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
}

/// The job and task a device string names (`/job:ps/replica:0/task:1/device:CPU:0`,
/// `/job:worker/task:0/cpu:0`, `/job:ps`); `None` fields were not given.
/// Malformed strings give `InvalidArgument`.
pub fn parse_device(device: &str) -> Result<(Option<String>, Option<u32>)> {
    let mut job = None;
    let mut task = None;
    for part in device.split('/').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once(':').unwrap_or((part, ""));
        match key.to_ascii_lowercase().as_str() {
            "job" => {
                if value.is_empty() {
                    bail!(invalid_argument, "device '{device}' has an empty job name");
                }
                job = Some(value.to_string());
            }
            "task" => {
                task = Some(value.parse().map_err(|_| {
                    Error::invalid_argument(format!(
                        "device '{device}' has task '{value}', not a non-negative integer"
                    ))
                })?)
            }
            _ => {} // replica, device:CPU:0, cpu:0, gpu:*: one CPU device per task here
        }
    }
    Ok((job, task))
}

/// What `TF_CONFIG` says about this process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TfConfig {
    /// The training cluster (the evaluator left out).
    pub cluster: ClusterSpec,
    /// This process's job (`task.type`) and index; `None` without a task.
    pub task: Option<TaskId>,
    /// `rpc_layer`, e.g. `grpc`; empty when absent.
    pub rpc_layer: String,
}

impl TfConfig {
    /// Parses a `TF_CONFIG` value; empty text is the local, single-process
    /// configuration. A task outside the cluster (other than an evaluator) is
    /// an `InvalidArgument` error naming it.
    pub fn parse(text: &str) -> Result<TfConfig> {
        if text.trim().is_empty() {
            return Ok(TfConfig {
                cluster: ClusterSpec::default(),
                task: None,
                rpc_layer: String::new(),
            });
        }
        let v: Value = serde_json::from_str(text)
            .map_err(|e| Error::invalid_argument(format!("TF_CONFIG is not valid JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| Error::invalid_argument("TF_CONFIG must be a JSON object"))?;
        let cluster = match obj.get("cluster") {
            Some(c) => ClusterSpec::from_value(c)?.without_job("evaluator"),
            None => ClusterSpec::default(),
        };
        let task = match obj.get("task") {
            None => None,
            Some(t) => {
                let job = t.get("type").and_then(Value::as_str).ok_or_else(|| {
                    Error::invalid_argument("TF_CONFIG: task.type must be a string")
                })?;
                let index = match t.get("index") {
                    None => 0,
                    Some(Value::Number(n)) => n.as_u64().ok_or_else(|| {
                        Error::invalid_argument(format!("TF_CONFIG: task.index {n} is negative"))
                    })?,
                    Some(Value::String(s)) => s.trim().parse().map_err(|_| {
                        Error::invalid_argument(format!(
                            "TF_CONFIG: task.index '{s}' is not an integer"
                        ))
                    })?,
                    Some(other) => {
                        bail!(
                            invalid_argument,
                            "TF_CONFIG: task.index must be an integer, got {other}"
                        )
                    }
                };
                let id = TaskId::new(job, index as u32);
                if job != "evaluator" && !cluster.is_empty() && cluster.address(&id).is_none() {
                    bail!(
                        invalid_argument,
                        "TF_CONFIG: task {id} is not in the cluster {}",
                        cluster.to_json()
                    );
                }
                Some(id)
            }
        };
        let rpc_layer = obj
            .get("rpc_layer")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        Ok(TfConfig {
            cluster,
            task,
            rpc_layer,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_jobs_round_trip() {
        let c = ClusterSpec::from_json(r#"{"ps":["a:1","b:2"],"worker":{"1":"c:3"}}"#).unwrap();
        assert_eq!(c.address(&TaskId::new("ps", 1)), Some("b:2"));
        assert_eq!(c.address(&TaskId::new("worker", 0)), None);
        assert_eq!(c.address(&TaskId::new("worker", 1)), Some("c:3"));
        assert_eq!(ClusterSpec::from_json(&c.to_json()).unwrap(), c);
        assert!(ClusterSpec::from_json(r#"{"ps":[1]}"#).is_err());
        assert!(ClusterSpec::from_json(r#"{"ps":{"x":"a:1"}}"#).is_err());
    }

    #[test]
    fn task_at_matches_loopback_names_by_port() {
        let c = ClusterSpec::from_json(r#"{"ps":["localhost:2222"],"worker":["127.0.0.1:2223"]}"#)
            .unwrap();
        assert_eq!(c.task_at("127.0.0.1:2222"), Some(TaskId::new("ps", 0)));
        assert_eq!(c.task_at("localhost:2223"), Some(TaskId::new("worker", 0)));
        assert_eq!(c.task_at("otherhost:2223"), None);
    }

    #[test]
    fn device_strings() {
        assert_eq!(
            parse_device("/job:ps/replica:0/task:1/device:CPU:0").unwrap(),
            (Some("ps".into()), Some(1))
        );
        assert_eq!(
            parse_device("/job:worker").unwrap(),
            (Some("worker".into()), None)
        );
        assert_eq!(parse_device("/device:CPU:0").unwrap(), (None, None));
        assert_eq!(parse_device("").unwrap(), (None, None));
        assert!(parse_device("/job:ps/task:x").is_err());
    }

    #[test]
    fn tf_config_leaves_the_evaluator_out() {
        let c = TfConfig::parse(
            r#"{"cluster":{"chief":["c:1"],"worker":["w:1"],"ps":["p:1"],"evaluator":["e:1"]},
                "task":{"type":"worker","index":"0"},"rpc_layer":"grpc"}"#,
        )
        .unwrap();
        assert_eq!(c.task, Some(TaskId::new("worker", 0)));
        assert_eq!(c.cluster.tasks().count(), 3);
        assert_eq!(c.rpc_layer, "grpc");
        let e = TfConfig::parse(r#"{"cluster":{"ps":["p:1"]},"task":{"type":"ps","index":3}}"#);
        assert!(e
            .unwrap_err()
            .message()
            .contains("/job:ps/replica:0/task:3"));
        assert_eq!(TfConfig::parse("").unwrap().task, None);
    }
}
