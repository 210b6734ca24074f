//! A ps and a worker server in one process, a session split across them,
//! variables shared by name, authentication and restarts.

mod common;

use common::{constant, free_port, node, start, values};
use ferroflow_dist::master::DistOptions;
use ferroflow_dist::{
    ClientSecurity, ClusterSpec, DistSession, Server, ServerOptions, ServerSecurity, TaskId,
};
use ferroflow_graph::{AttrValue, Graph, NodeId, Output, PartialShape};
use ferroflow_tensor::{Code, DType, Tensor};
use parking_lot::RwLock;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn two_task_cluster() -> ClusterSpec {
    let (ps, worker) = (free_port(), free_port());
    ClusterSpec::from_json(&format!(
        r#"{{"ps":["127.0.0.1:{ps}"],"worker":["localhost:{worker}"]}}"#
    ))
    .unwrap()
}

/// `v` (2 floats) on the ps, `y = read(v) * x` on the worker, `v += y` on the ps.
struct Model {
    graph: Arc<RwLock<Graph>>,
    init: NodeId,
    read: Output,
    y: Output,
    update: NodeId,
}

fn model() -> Model {
    let mut g = Graph::new();
    let ps = "/job:ps/task:0";
    let v = node(
        &mut g,
        "VariableV2",
        "v",
        &[],
        &[
            ("dtype", AttrValue::Type(DType::Float32)),
            (
                "shape",
                AttrValue::Shape(PartialShape::from_dims(vec![Some(2)])),
            ),
        ],
        ps,
    );
    let v = Output::new(v, 0);
    let init_value = constant(
        &mut g,
        "v/initial_value",
        Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap(),
        ps,
    );
    let init = node(&mut g, "Assign", "v/Assign", &[v, init_value], &[], ps);
    let read = Output::new(node(&mut g, "Identity", "v/read", &[v], &[], ps), 0);
    let x = constant(
        &mut g,
        "x",
        Tensor::from_vec([2], vec![3.0f32, 4.0]).unwrap(),
        "",
    );
    let y = Output::new(node(&mut g, "Mul", "y", &[read, x], &[], ""), 0);
    let update = node(&mut g, "AssignAdd", "update", &[v, y], &[], ps);
    Model {
        graph: Arc::new(RwLock::new(g)),
        init,
        read,
        y,
        update,
    }
}

#[test]
fn a_step_split_across_ps_and_worker_shares_variables_by_name() {
    let cluster = two_task_cluster();
    let _ps = start(&cluster, "ps", None, ServerSecurity::default()).unwrap();
    let worker = start(&cluster, "worker", None, ServerSecurity::default()).unwrap();
    let m = model();
    let sess =
        DistSession::connect(m.graph.clone(), &worker.target(), DistOptions::default()).unwrap();
    assert_eq!(sess.default_task(), &TaskId::new("worker", 0));
    let init = sess.prepare(&[], &[], &[m.init]).unwrap();
    sess.run_plan_until(&init, vec![], None).unwrap();
    let fetch_y = sess.prepare(&[], &[m.y], &[]).unwrap();
    let placement = sess.placement(&fetch_y);
    assert_eq!(placement.len(), 2, "ps and worker partitions");
    assert_eq!(
        values(&sess.run_plan_until(&fetch_y, vec![], None).unwrap()[0]),
        [3.0, 8.0]
    );
    let step = sess.prepare(&[], &[], &[m.update]).unwrap();
    sess.run_plan_until(&step, vec![], None).unwrap();

    // A second client with no server of its own, on its own copy of the
    // graph, reaches the ps directly and sees the same variable.
    let m2 = model();
    let ps_target = format!("grpc://{}", cluster.address(&TaskId::new("ps", 0)).unwrap());
    let rpc = DistOptions {
        force_rpc: true,
        ..Default::default()
    };
    let other = DistSession::connect(m2.graph.clone(), &ps_target, rpc).unwrap();
    let read = other.prepare(&[], &[m2.read], &[]).unwrap();
    assert_eq!(
        values(&other.run_plan_until(&read, vec![], None).unwrap()[0]),
        [4.0, 10.0]
    );

    // Feeding the worker-side value replaces its computation.
    let fed = sess.prepare(&[m.y], &[], &[m.update]).unwrap();
    let delta = Tensor::from_vec([2], vec![0.5f32, 0.5]).unwrap();
    sess.run_plan_until(&fed, vec![delta], None).unwrap();
    assert_eq!(
        values(&other.run_plan_until(&read, vec![], None).unwrap()[0]),
        [4.5, 10.5]
    );
}

#[test]
fn tokens_are_checked_and_nothing_runs_without_one() {
    let cluster = two_task_cluster();
    let security = ServerSecurity::default()
        .with_token(b"cluster-secret")
        .unwrap();
    let _ps = start(&cluster, "ps", None, security).unwrap();
    let m = model();
    let ps_target = format!("grpc://{}", cluster.address(&TaskId::new("ps", 0)).unwrap());
    let options = |token: &[u8]| DistOptions {
        security: ClientSecurity::default().with_token(token),
        connect_timeout: Duration::from_secs(5),
        force_rpc: true,
    };
    for bad in [&b""[..], b"wrong"] {
        let e = DistSession::connect(m.graph.clone(), &ps_target, options(bad))
            .err()
            .unwrap();
        assert_eq!(e.code(), Some(Code::Unauthenticated), "{e}");
    }
    let sess =
        DistSession::connect(m.graph.clone(), &ps_target, options(b"cluster-secret")).unwrap();
    let init = sess.prepare(&[], &[m.read], &[m.init]).unwrap();
    assert_eq!(
        values(&sess.run_plan_until(&init, vec![], None).unwrap()[0]),
        [1.0, 2.0]
    );
}

#[test]
fn listening_beyond_loopback_needs_authentication() {
    let cluster = two_task_cluster();
    let e = Server::start(ServerOptions {
        cluster: cluster.clone(),
        task: TaskId::new("ps", 0),
        bind: Some("0.0.0.0".into()),
        ..Default::default()
    })
    .err()
    .unwrap();
    assert_eq!(e.code(), Some(Code::FailedPrecondition));
    assert!(e.message().contains("without authentication"), "{e}");
}

#[test]
fn a_restarted_ps_is_unavailable_then_aborted() {
    let cluster = two_task_cluster();
    let ps = start(&cluster, "ps", None, ServerSecurity::default()).unwrap();
    let worker = start(&cluster, "worker", None, ServerSecurity::default()).unwrap();
    let m = model();
    let options = DistOptions {
        connect_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let sess = DistSession::connect(m.graph.clone(), &worker.target(), options).unwrap();
    let init = sess.prepare(&[], &[m.y], &[m.init]).unwrap();
    sess.run_plan_until(&init, vec![], None).unwrap();
    ps.stop();
    drop(ps);
    let step = sess.prepare(&[], &[], &[m.update]).unwrap();
    let started = Instant::now();
    let e = sess.run_plan_until(&step, vec![], None).unwrap_err();
    assert_eq!(e.code(), Some(Code::Unavailable), "{e}");
    let _ps = start(&cluster, "ps", None, ServerSecurity::default()).unwrap();
    let e = sess.run_plan_until(&step, vec![], None).unwrap_err();
    assert_eq!(e.code(), Some(Code::Aborted), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_missing_task_is_unavailable_after_the_connect_timeout() {
    let cluster = two_task_cluster();
    let worker = start(&cluster, "worker", None, ServerSecurity::default()).unwrap();
    let m = model();
    let options = DistOptions {
        connect_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let sess = DistSession::connect(m.graph.clone(), &worker.target(), options).unwrap();
    let init = sess.prepare(&[], &[], &[m.init]).unwrap();
    let e = sess.run_plan_until(&init, vec![], None).unwrap_err();
    assert_eq!(e.code(), Some(Code::Unavailable), "{e}");
    assert!(e.message().contains("/job:ps/replica:0/task:0"), "{e}");
}
