//! What the cluster tests share: free ports, starting a task, building graph nodes by hand.
#![allow(dead_code)] // each test file uses its own part

use ferroflow_dist::{ClusterSpec, Server, ServerOptions, ServerSecurity, TaskId};
use ferroflow_graph::{AttrValue, Graph, NodeId, NodeSpec, Output};
use ferroflow_tensor::{DType, Tensor};

/// A free port below Linux's ephemeral range (32768 and up), so that no
/// outgoing connection takes it while a test restarts a server on it.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let seed = (std::process::id() % 8000) as u16;
    loop {
        let p = 20000 + (seed + NEXT.fetch_add(7, Ordering::Relaxed)) % 12000;
        if std::net::TcpListener::bind(("127.0.0.1", p)).is_ok() {
            return p;
        }
    }
}

/// Starts `job`'s task 0 of `cluster`, listening on `bind` when given.
pub fn start(
    cluster: &ClusterSpec,
    job: &str,
    bind: Option<String>,
    security: ServerSecurity,
) -> ferroflow_tensor::Result<Server> {
    Server::start(ServerOptions {
        cluster: cluster.clone(),
        task: TaskId::new(job, 0),
        bind,
        security,
        ..Default::default()
    })
}

/// Adds a node placed on `device` ("" for the session's task).
pub fn node(
    g: &mut Graph,
    op: &str,
    name: &str,
    inputs: &[Output],
    attrs: &[(&str, AttrValue)],
    device: &str,
) -> NodeId {
    let mut spec = NodeSpec::new(op, name).inputs(inputs.iter().copied());
    for (k, v) in attrs {
        spec = spec.attr(k, v.clone());
    }
    spec.device = device.to_string();
    g.add_node(spec).unwrap()
}

/// A float32 constant on `device`.
pub fn constant(g: &mut Graph, name: &str, value: Tensor, device: &str) -> Output {
    let attrs = [
        ("dtype", AttrValue::Type(DType::Float32)),
        ("value", AttrValue::Tensor(value)),
    ];
    Output::new(node(g, "Const", name, &[], &attrs, device), 0)
}

pub fn values(t: &Tensor) -> Vec<f32> {
    t.as_slice::<f32>().unwrap().to_vec()
}
