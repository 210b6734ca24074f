//! Mutual TLS between clients and task servers, over real sockets
//! (`force_rpc`): a client with a certificate from the cluster CA trains; a
//! client without TLS, with a certificate from another CA, or trusting
//! another CA is refused at once with `Unauthenticated`; and no tensor bytes
//! cross the wire in the clear (a recording proxy sits between client and
//! server). The certificates come from `tools/make_test_certs.sh`.

mod common;

use common::{free_port, node, start, values};
use ferroflow_dist::master::DistOptions;
use ferroflow_dist::security::TlsFiles;
use ferroflow_dist::{ClientSecurity, ClusterSpec, DistSession, ServerSecurity, TaskId};
use ferroflow_graph::{AttrValue, Graph, NodeId, Output, PartialShape};
use ferroflow_tensor::{Code, DType, Tensor};
use parking_lot::{Mutex, RwLock};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/tls/{name}"))
}

/// `<who>.pem` and `<who>.key`, trusting `<ca>.pem`.
fn files(who: &str, ca: &str) -> TlsFiles {
    TlsFiles {
        cert: fixture(&format!("{who}.pem")),
        key: fixture(&format!("{who}.key")),
        ca: fixture(&format!("{ca}.pem")),
    }
}

fn tls_server() -> ServerSecurity {
    ServerSecurity::default()
        .with_tls(&files("server", "ca"))
        .unwrap()
}

fn tls_client(who: &str, ca: &str) -> ClientSecurity {
    ClientSecurity::default().with_tls(&files(who, ca)).unwrap()
}

fn options(security: ClientSecurity) -> DistOptions {
    DistOptions {
        security,
        // Long enough that a refusal mistaken for "not up yet" (and retried)
        // fails the tests' one-second bound.
        connect_timeout: Duration::from_secs(5),
        force_rpc: true,
    }
}

/// `v` (N floats) on the ps, set from the fed `x`; `y = read(v) * 2` on
/// `worker` (a device string, "" for the session's task); `v += y` on the ps.
struct Model {
    graph: Arc<RwLock<Graph>>,
    x: Output,
    assign: NodeId,
    read: Output,
    update: NodeId,
}

fn model(n: usize, worker: &str) -> Model {
    let ps = "/job:ps/task:0";
    let mut g = Graph::new();
    let f32_shape = |n: usize| {
        [
            ("dtype", AttrValue::Type(DType::Float32)),
            (
                "shape",
                AttrValue::Shape(PartialShape::from_dims(vec![Some(n)])),
            ),
        ]
    };
    let v = Output::new(node(&mut g, "VariableV2", "v", &[], &f32_shape(n), ps), 0);
    let x = Output::new(
        node(&mut g, "Placeholder", "x", &[], &f32_shape(n), worker),
        0,
    );
    let assign = node(&mut g, "Assign", "v/Assign", &[v, x], &[], ps);
    let read = Output::new(node(&mut g, "Identity", "v/read", &[v], &[], ps), 0);
    let two = Tensor::scalar(2.0f32);
    let two = Output::new(
        node(
            &mut g,
            "Const",
            "two",
            &[],
            &[
                ("dtype", AttrValue::Type(DType::Float32)),
                ("value", AttrValue::Tensor(two)),
            ],
            worker,
        ),
        0,
    );
    let y = Output::new(node(&mut g, "Mul", "y", &[read, two], &[], worker), 0);
    let update = node(&mut g, "AssignAdd", "update", &[v, y], &[], ps);
    Model {
        graph: Arc::new(RwLock::new(g)),
        x,
        assign,
        read,
        update,
    }
}

/// Sets `v` to `x`, runs one update (`v += 2 v`, the doubling on the
/// worker) when `update`, and returns `v`.
fn round_trip(sess: &DistSession, m: &Model, x: &[f32], update: bool) -> Vec<f32> {
    let assign = sess.prepare(&[m.x], &[], &[m.assign]).unwrap();
    let fed = Tensor::from_vec([x.len()], x.to_vec()).unwrap();
    sess.run_plan_until(&assign, vec![fed], None).unwrap();
    if update {
        let step = sess.prepare(&[], &[], &[m.update]).unwrap();
        sess.run_plan_until(&step, vec![], None).unwrap();
    }
    let read = sess.prepare(&[], &[m.read], &[]).unwrap();
    values(&sess.run_plan_until(&read, vec![], None).unwrap()[0])
}

/// Connecting must fail at once (no retries until the connect timeout)
/// with `Unauthenticated` and a message containing `says`.
fn assert_refused(target: &str, security: ClientSecurity, says: &str) {
    let m = model(2, "");
    let started = Instant::now();
    let e = DistSession::connect(m.graph.clone(), target, options(security))
        .err()
        .expect("the connection must be refused");
    assert_eq!(e.code(), Some(Code::Unauthenticated), "{e}");
    assert!(e.message().contains(says), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "refused only after {:?}: {e}",
        started.elapsed()
    );
}

#[test]
fn a_client_with_the_cluster_ca_certificate_trains_across_tls_tasks() {
    let (ps, worker) = (free_port(), free_port());
    let cluster = ClusterSpec::from_json(&format!(
        r#"{{"ps":["127.0.0.1:{ps}"],"worker":["localhost:{worker}"]}}"#
    ))
    .unwrap();
    let _ps = start(&cluster, "ps", None, tls_server()).unwrap();
    let worker = start(&cluster, "worker", None, tls_server()).unwrap();
    let m = model(3, "/job:worker/task:0");
    let started = Instant::now();
    // The worker by its DNS name, the ps by its IP: both names are in the
    // server certificate.
    let sess = DistSession::connect(
        m.graph.clone(),
        &worker.target(),
        options(tls_client("client", "ca")),
    )
    .unwrap();
    assert_eq!(sess.default_task(), &TaskId::new("worker", 0));
    // x is fed to the worker, assigned on the ps, doubled on the worker and
    // added on the ps: every partition crosses a TLS connection.
    assert_eq!(
        round_trip(&sess, &m, &[1.0, -2.5, 4.0], true),
        [3.0, -7.5, 12.0]
    );
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn a_client_without_tls_is_refused() {
    let cluster =
        ClusterSpec::from_json(&format!(r#"{{"ps":["127.0.0.1:{}"]}}"#, free_port())).unwrap();
    let ps = start(&cluster, "ps", None, tls_server()).unwrap();
    let target = format!("grpc://127.0.0.1:{}", ps.local_addr().port());
    assert_refused(&target, ClientSecurity::default(), "requires TLS");
    // A cluster token is no substitute for the certificate.
    assert_refused(
        &target,
        ClientSecurity::default().with_token(b"secret"),
        "FERROFLOW_TLS_CERT",
    );
}

#[test]
fn a_client_certificate_from_another_ca_is_refused() {
    let cluster =
        ClusterSpec::from_json(&format!(r#"{{"ps":["127.0.0.1:{}"]}}"#, free_port())).unwrap();
    let ps = start(&cluster, "ps", None, tls_server()).unwrap();
    let target = format!("grpc://127.0.0.1:{}", ps.local_addr().port());
    // The client trusts the right CA, but its own certificate is not the
    // cluster's.
    assert_refused(
        &target,
        tls_client("other_client", "ca"),
        "refused the TLS connection",
    );
    // The server certificate is not a client certificate either
    // (its extended key usage is serverAuth only).
    assert_refused(
        &target,
        tls_client("server", "ca"),
        "refused the TLS connection",
    );
    // The server still serves the right client afterwards.
    let m = model(2, "");
    let sess = DistSession::connect(
        m.graph.clone(),
        &target,
        options(tls_client("client", "ca")),
    )
    .unwrap();
    assert_eq!(round_trip(&sess, &m, &[5.0, 6.0], false), [5.0, 6.0]);
}

#[test]
fn a_client_that_trusts_another_ca_refuses_the_server() {
    let cluster =
        ClusterSpec::from_json(&format!(r#"{{"ps":["127.0.0.1:{}"]}}"#, free_port())).unwrap();
    let ps = start(&cluster, "ps", None, tls_server()).unwrap();
    let target = format!("grpc://127.0.0.1:{}", ps.local_addr().port());
    assert_refused(
        &target,
        tls_client("client", "other_ca"),
        "does not trust the certificate",
    );
    // Right CA, but a name the server certificate does not carry
    // (127.0.0.2 is loopback too, but only 127.0.0.1 and localhost are in
    // the certificate).
    let port = free_port();
    let cluster = ClusterSpec::from_json(&format!(r#"{{"ps":["127.0.0.2:{port}"]}}"#)).unwrap();
    let _other = start(
        &cluster,
        "ps",
        Some(format!("127.0.0.2:{port}")),
        tls_server(),
    );
    assert_refused(
        &format!("grpc://127.0.0.2:{port}"),
        tls_client("client", "ca"),
        "not valid for name \"127.0.0.2\"",
    );
}

#[test]
fn a_tls_client_is_told_when_the_server_does_not_use_tls() {
    let cluster =
        ClusterSpec::from_json(&format!(r#"{{"ps":["127.0.0.1:{}"]}}"#, free_port())).unwrap();
    let ps = start(&cluster, "ps", None, ServerSecurity::default()).unwrap();
    let target = format!("grpc://127.0.0.1:{}", ps.local_addr().port());
    assert_refused(
        &target,
        tls_client("client", "ca"),
        "the task must use TLS too",
    );
}

/// Bytes a proxy forwarded, per direction.
#[derive(Default)]
struct Recorded {
    to_server: Mutex<Vec<u8>>,
    to_client: Mutex<Vec<u8>>,
}

/// Listens on `listener`, forwards every connection to `upstream` and
/// records both directions. Threads end when their connections close (the
/// accepting one when the test process exits).
fn recording_proxy(listener: TcpListener, upstream: u16) -> Arc<Recorded> {
    let rec = Arc::new(Recorded::default());
    let r = rec.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                return;
            };
            for (from, to, up) in [
                (
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    true,
                ),
                (server, client, false),
            ] {
                let r = r.clone();
                std::thread::spawn(move || pump(from, to, &r, up));
            }
        }
    });
    rec
}

fn pump(mut from: TcpStream, mut to: TcpStream, rec: &Recorded, to_server: bool) {
    let mut buf = [0u8; 16 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let log = if to_server {
            &rec.to_server
        } else {
            &rec.to_client
        };
        log.lock().extend_from_slice(&buf[..n]);
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// One ps behind a recording proxy: the cluster names the proxy's port,
/// the server listens on another. Feeds a known float pattern (client to
/// server) and reads it back (server to client); returns what crossed.
fn run_through_proxy(
    server: ServerSecurity,
    client: ClientSecurity,
    pattern: &[f32],
) -> Arc<Recorded> {
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = proxy.local_addr().unwrap().port();
    let real = free_port();
    let cluster =
        ClusterSpec::from_json(&format!(r#"{{"ps":["127.0.0.1:{proxy_port}"]}}"#)).unwrap();
    let _ps = start(&cluster, "ps", Some(format!("127.0.0.1:{real}")), server).unwrap();
    let rec = recording_proxy(proxy, real);
    let m = model(pattern.len(), "");
    let sess = DistSession::connect(
        m.graph.clone(),
        &format!("grpc://127.0.0.1:{proxy_port}"),
        options(client),
    )
    .unwrap();
    assert_eq!(round_trip(&sess, &m, pattern, false), pattern);
    sess.close();
    drop(sess);
    rec
}

#[test]
fn no_tensor_bytes_cross_the_wire_in_the_clear() {
    // Distinctive values: no TLS record would hold their bytes by chance.
    let pattern: Vec<f32> = (0..4096).map(|i| 1234.5 + i as f32 * 0.25).collect();
    let probe: Vec<u8> = pattern[1000..1016]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();

    // Control: without TLS the proxy sees the tensor both ways.
    let plain = run_through_proxy(
        ServerSecurity::default(),
        ClientSecurity::default(),
        &pattern,
    );
    assert!(
        contains(&plain.to_server.lock(), &probe),
        "fed tensor not seen in plaintext"
    );
    assert!(
        contains(&plain.to_client.lock(), &probe),
        "fetched tensor not seen in plaintext"
    );

    let tls = run_through_proxy(tls_server(), tls_client("client", "ca"), &pattern);
    let (up, down) = (tls.to_server.lock(), tls.to_client.lock());
    // Every connection opens with a TLS ClientHello record.
    assert_eq!(&up[..2], &[0x16, 0x03], "the client did not start with TLS");
    // The tensors went through (more than 16 KiB each way), encrypted.
    assert!(
        up.len() > 16 << 10 && down.len() > 16 << 10,
        "{} {}",
        up.len(),
        down.len()
    );
    assert!(
        !contains(&up, &probe),
        "the fed tensor crossed in the clear"
    );
    assert!(
        !contains(&down, &probe),
        "the fetched tensor crossed in the clear"
    );
    // Nor do a few elements anywhere in the pattern.
    for start in [0, 2047, 4092] {
        let bytes: Vec<u8> = pattern[start..start + 4]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        assert!(
            !contains(&up, &bytes) && !contains(&down, &bytes),
            "{start}"
        );
    }
}
