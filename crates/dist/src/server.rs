//! One task's server (`tf.train.Server`).
//!
//! A server holds its task's resources in one [`SessionState`]: every graph
//! registered with it, by any client, finds variables, queues and
//! accumulators there by name (TensorFlow's default resource container), so
//! the workers of a between-graph-replicated job share the ps's variables.
//! Each connection is served by its own thread; a request runs on that
//! thread, so a step that waits (a `take_grad`, a token `dequeue`) holds only
//! its own connection.
//!
//! Besides the framed protocol, a plain `GET` on the port (when TLS is off)
//! answers `200 ok`: a health endpoint for Kubernetes probes that reveals
//! nothing and runs nothing.

use crate::cluster::{split_host_port, ClusterSpec, TaskId};
use crate::security::{random_u64, ServerSecurity};
use crate::wire::{
    read_frame, read_hello_frame, write_frame, Ack, Body, Envelope, RanGraph, Registered, Welcome,
    PROTOCOL_VERSION,
};
use ferroflow_graph::{Graph, NodeId, Output};
use ferroflow_records::graph_def::GraphDef;
use ferroflow_records::graph_import::{import_graph_def, ImportOptions};
use ferroflow_runtime::{Plan, Session, SessionState};
use ferroflow_tensor::{bail, Error, Result, Tensor};
use parking_lot::{Condvar, Mutex, RwLock};
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How to start a server.
#[derive(Clone, Default)]
pub struct ServerOptions {
    pub cluster: ClusterSpec,
    /// The task this server runs (its port comes from the cluster).
    pub task: TaskId,
    /// Where to listen: an IP (`0.0.0.0`) with the task's port, or
    /// `ip:port`. `None` listens on `127.0.0.1` only.
    pub bind: Option<String>,
    pub security: ServerSecurity,
    /// Stop when the chief sends `Shutdown` (training is done).
    pub exit_when_chief_done: bool,
    /// When set, registered graphs may only use these op types.
    pub op_allowlist: Option<HashSet<String>>,
}

impl Default for TaskId {
    fn default() -> TaskId {
        TaskId::new("localhost", 0)
    }
}

/// Op types a parameter-server task needs: variables and their updates,
/// initializers, queues and accumulators (SyncReplicasOptimizer), and
/// checkpoint shards. No file, reader, process or Python-callback op.
pub fn ps_op_allowlist() -> HashSet<String> {
    const NAMES: &[&str] = &[
        "Const",
        "Placeholder",
        "PlaceholderWithDefault",
        "Identity",
        "IdentityN",
        "NoOp",
        "VariableV2",
        "Variable",
        "Assign",
        "AssignAdd",
        "AssignSub",
        "IsVariableInitialized",
        "ScatterUpdate",
        "ScatterAdd",
        "ScatterSub",
        "ScatterMul",
        "ScatterDiv",
        "ScatterMax",
        "ScatterMin",
        "CountUpTo",
        "ReadVariableOp",
        "Fill",
        "Zeros",
        "ZerosLike",
        "OnesLike",
        "RandomUniform",
        "RandomStandardNormal",
        "TruncatedNormal",
        "RandomUniformInt",
        "Cast",
        "Add",
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "Div",
        "Neg",
        "Sqrt",
        "Rsqrt",
        "Square",
        "Maximum",
        "Minimum",
        "Reshape",
        "Shape",
        "Pack",
        "ConcatV2",
        "Gather",
        "GatherV2",
        "StridedSlice",
        "Slice",
        "Sum",
        "Mean",
        "Tile",
        "ExpandDims",
        "Squeeze",
        "Range",
        "FIFOQueue",
        "FIFOQueueV2",
        "PaddingFIFOQueueV2",
        "RandomShuffleQueueV2",
        "QueueEnqueueV2",
        "QueueEnqueueManyV2",
        "QueueDequeueV2",
        "QueueDequeueManyV2",
        "QueueDequeueUpToV2",
        "QueueSizeV2",
        "QueueCloseV2",
        "QueueEnqueue",
        "QueueEnqueueMany",
        "QueueDequeue",
        "QueueDequeueMany",
        "QueueSize",
        "QueueClose",
        "ConditionalAccumulator",
        "SparseConditionalAccumulator",
        "AccumulatorApplyGradient",
        "AccumulatorTakeGradient",
        "AccumulatorNumAccumulated",
        "AccumulatorSetGlobalStep",
        "SparseAccumulatorApplyGradient",
        "SparseAccumulatorTakeGradient",
        "ResourceConditionalAccumulator",
        "ResourceAccumulatorApplyGradient",
        "ResourceAccumulatorTakeGradient",
        "ResourceAccumulatorNumAccumulated",
        "ResourceAccumulatorSetGlobalStep",
        "SaveV2",
        "RestoreV2",
        "MergeV2Checkpoints",
        "ShardedFilename",
        "StringJoin",
    ];
    let mut set: HashSet<String> = NAMES.iter().map(|s| s.to_string()).collect();
    for op in ferroflow_graph::ops::registered_ops() {
        let update = [
            "Apply",
            "SparseApply",
            "ResourceApply",
            "ResourceSparseApply",
            "Fused",
        ]
        .iter()
        .any(|p| op.starts_with(p));
        if update {
            set.insert(op.to_string());
        }
    }
    set
}

/// A graph registered by a client, compiled once.
pub(crate) struct Registration {
    session: Session,
    plan: Arc<Plan>,
}

/// The state a server shares with its connections and with in-process
/// sessions (see [`local_task`]).
pub(crate) struct Inner {
    pub(crate) task: TaskId,
    pub(crate) cluster: ClusterSpec,
    pub(crate) incarnation: u64,
    /// The task's resources, shared by every registered graph.
    pub(crate) state: Arc<SessionState>,
    graphs: RwLock<HashMap<u64, Arc<Registration>>>,
    next_handle: AtomicU64,
    security: ServerSecurity,
    allowlist: Option<HashSet<String>>,
    exit_when_chief_done: bool,
    stopped: Mutex<bool>,
    stop_signal: Condvar,
    stopping: AtomicBool,
    addr: SocketAddr,
    /// Open connections (clones of their sockets), shut down on stop.
    connections: Mutex<HashMap<u64, TcpStream>>,
    next_connection: AtomicU64,
    /// The accept loop, joined on stop so the port is free when stop returns.
    accept_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// Servers running in this process, found by the sessions that target them.
static LOCAL_SERVERS: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());

/// The in-process server listening at `addr` (`host:port`), if any.
pub(crate) fn local_task(addr: &str) -> Option<Arc<Inner>> {
    let (host, port) = split_host_port(addr)?;
    let mut list = LOCAL_SERVERS.lock();
    list.retain(|w| w.strong_count() > 0);
    list.iter().filter_map(Weak::upgrade).find(|s| {
        !s.stopping.load(Ordering::Acquire)
            && s.addr.port() == port
            && (crate::cluster::is_loopback_name(host)
                || s.cluster.address(&s.task).is_some_and(|a| a == addr))
    })
}

/// A running server.
pub struct Server {
    inner: Arc<Inner>,
}

impl Server {
    /// Starts listening and serving. Fails if the task is not in the
    /// cluster, the port is taken, or the server would listen beyond
    /// loopback without authentication (and `insecure` was not asked for).
    pub fn start(opts: ServerOptions) -> Result<Server> {
        let own = opts.cluster.address(&opts.task).ok_or_else(|| {
            Error::invalid_argument(format!(
                "task {} is not in the cluster {}",
                opts.task,
                opts.cluster.to_json()
            ))
        })?;
        let (_, port) = split_host_port(own).ok_or_else(|| {
            Error::invalid_argument(format!(
                "task {} has address '{own}', not host:port",
                opts.task
            ))
        })?;
        let bind: SocketAddr = match opts.bind.as_deref() {
            None => SocketAddr::from(([127, 0, 0, 1], port)),
            Some(b) => b
                .parse::<SocketAddr>()
                .or_else(|_| {
                    b.parse::<std::net::IpAddr>()
                        .map(|ip| SocketAddr::new(ip, port))
                })
                .map_err(|_| {
                    Error::invalid_argument(format!("bind address '{b}' is not an IP or IP:port"))
                })?,
        };
        if !bind.ip().is_loopback() && !opts.security.authenticates() && !opts.security.insecure {
            bail!(
                failed_precondition,
                "refusing to listen on {bind} without authentication: anyone who can reach it \
                 could run graphs. Set a cluster token (FERROFLOW_CLUSTER_TOKEN or \
                 --token-file), or mutual TLS (--tls-cert/--tls-key/--tls-ca), or pass \
                 --insecure on a trusted network"
            );
        }
        if !bind.ip().is_loopback() && !opts.security.authenticates() {
            eprintln!(
                "ferroflow server {}: WARNING: listening on {bind} with no authentication \
                 (--insecure): any host that reaches this port can run graphs here",
                opts.task
            );
        }
        let listener = TcpListener::bind(bind).map_err(|e| {
            Error::unavailable(format!("task {} cannot listen on {bind}: {e}", opts.task))
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::internal(format!("listener address: {e}")))?;
        let inner = Arc::new(Inner {
            task: opts.task,
            cluster: opts.cluster,
            incarnation: random_u64(),
            state: Arc::new(SessionState::default()),
            graphs: RwLock::new(HashMap::new()),
            next_handle: AtomicU64::new(1),
            security: opts.security,
            allowlist: opts.op_allowlist,
            exit_when_chief_done: opts.exit_when_chief_done,
            stopped: Mutex::new(false),
            stop_signal: Condvar::new(),
            stopping: AtomicBool::new(false),
            addr,
            connections: Mutex::new(HashMap::new()),
            next_connection: AtomicU64::new(0),
            accept_thread: Mutex::new(None),
        });
        LOCAL_SERVERS.lock().push(Arc::downgrade(&inner));
        let weak = Arc::downgrade(&inner);
        let handle = std::thread::Builder::new()
            .name(format!("ferroflow server {}", inner.task))
            .spawn(move || accept_loop(listener, weak))
            .map_err(|e| Error::resource_exhausted(format!("cannot start a server thread: {e}")))?;
        *inner.accept_thread.lock() = Some(handle);
        Ok(Server { inner })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.addr
    }

    pub fn task(&self) -> &TaskId {
        &self.inner.task
    }

    pub fn cluster(&self) -> &ClusterSpec {
        &self.inner.cluster
    }

    /// Random per process: how peers notice a restart.
    pub fn incarnation(&self) -> u64 {
        self.inner.incarnation
    }

    /// `grpc://localhost:<port>`, what `tf.Session` takes.
    pub fn target(&self) -> String {
        format!("grpc://localhost:{}", self.inner.addr.port())
    }

    /// Blocks until the server stops ([`Server::stop`], or `Shutdown` from
    /// the chief when started with `exit_when_chief_done`), or until
    /// `timeout` passes; true once stopped.
    pub fn wait(&self, timeout: Option<Duration>) -> bool {
        let mut stopped = self.inner.stopped.lock();
        let end = timeout.map(|t| Instant::now() + t);
        while !*stopped {
            match end {
                None => self.inner.stop_signal.wait(&mut stopped),
                Some(end) => {
                    if self
                        .inner
                        .stop_signal
                        .wait_until(&mut stopped, end)
                        .timed_out()
                    {
                        break;
                    }
                }
            }
        }
        *stopped
    }

    /// Stops accepting connections and wakes [`Server::wait`]ers. Waiting
    /// kernels of the task are cancelled.
    pub fn stop(&self) {
        self.inner.stop();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.inner.stop();
    }
}

impl Inner {
    fn stop(&self) {
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        self.state.cancel_all();
        for (_, c) in self.connections.lock().drain() {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
        // Wake the accept loop (it checks `stopping` after each accept) and
        // wait for it to drop the listener, so the port is free on return.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(h) = self.accept_thread.lock().take() {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
        *self.stopped.lock() = true;
        self.stop_signal.notify_all();
    }

    /// Registers a partition graph; returns its handle.
    pub(crate) fn register(
        &self,
        graph_def: &[u8],
        feeds: &[String],
        fetches: &[String],
        targets: &[String],
    ) -> Result<u64> {
        let reg = compile_registration(
            &self.state,
            &self.task,
            self.allowlist.as_ref(),
            graph_def,
            feeds,
            fetches,
            targets,
        )?;
        let handle = self.next_handle.fetch_add(1, Ordering::Relaxed);
        self.graphs.write().insert(handle, Arc::new(reg));
        Ok(handle)
    }

    /// Runs a registered graph.
    pub(crate) fn run(
        &self,
        handle: u64,
        feeds: Vec<Tensor>,
        timeout_ms: i64,
        client: Option<&TcpStream>,
    ) -> Result<Vec<Tensor>> {
        let reg = self.graphs.read().get(&handle).cloned().ok_or_else(|| {
            Error::aborted(format!(
                "task {} has no graph with handle {handle} (the task restarted, or the graph was \
                 deregistered)",
                self.task
            ))
        })?;
        let deadline =
            (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
        let Some(tcp) = client.filter(|_| reg.plan.may_block()) else {
            return reg.session.run_plan_until(&reg.plan, feeds, deadline);
        };
        // A step that may wait (a token dequeue, a take_grad) is abandoned
        // when its client goes away, as TF cancels a RunGraph whose call is
        // cancelled: else a dead worker's step would still take the next
        // token or the next gradients. The client sends nothing until the
        // reply, so a watcher peeking at the socket sees only its close.
        let abandoned = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let watcher = tcp.try_clone().ok().and_then(|sock| {
            let (abandoned, done) = (abandoned.clone(), done.clone());
            sock.set_read_timeout(Some(Duration::from_millis(25)))
                .ok()?;
            std::thread::Builder::new()
                .name("ferroflow step watcher".into())
                .spawn(move || {
                    let mut byte = [0u8; 1];
                    while !done.load(Ordering::Acquire) {
                        match sock.peek(&mut byte) {
                            Ok(0) => return abandoned.store(true, Ordering::Release),
                            Ok(_) => return,
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                                ) => {}
                            Err(_) => return abandoned.store(true, Ordering::Release),
                        }
                    }
                })
                .ok()
        });
        let result = ferroflow_runtime::blocking::with_abandon_flag(abandoned, || {
            reg.session.run_plan_until(&reg.plan, feeds, deadline)
        });
        done.store(true, Ordering::Release);
        if let Some(w) = watcher {
            let _ = w.join();
        }
        let _ = tcp.set_read_timeout(None);
        result
    }

    pub(crate) fn deregister(&self, handle: u64) {
        self.graphs.write().remove(&handle);
    }

    fn check_incarnation(&self, want: u64) -> Result<()> {
        if want != 0 && want != self.incarnation {
            bail!(
                aborted,
                "task {} restarted (incarnation {:016x}, the client expected {want:016x}): its \
                 state was lost; recreate the session",
                self.task,
                self.incarnation
            );
        }
        Ok(())
    }
}

/// RegisterGraph's work, without a server or a network: decodes
/// `graph_def`, checks its ops against `allowlist`, imports it, resolves the
/// feed, fetch and target names and compiles the run signature against the
/// task's resources in `state`. [`crate::fuzzing`] feeds it untrusted bytes.
pub(crate) fn compile_registration(
    state: &Arc<SessionState>,
    task: &TaskId,
    allowlist: Option<&HashSet<String>>,
    graph_def: &[u8],
    feeds: &[String],
    fetches: &[String],
    targets: &[String],
) -> Result<Registration> {
    let def = GraphDef::decode(graph_def).map_err(|e| {
        Error::invalid_argument(format!("RegisterGraph: the GraphDef does not parse: {e}"))
    })?;
    if let Some(allow) = allowlist {
        if let Some(n) = def.node.iter().find(|n| !allow.contains(&n.op)) {
            bail!(
                permission_denied,
                "RegisterGraph: op '{}' (node '{}') is not allowed on task {} (its op \
                     allowlist)",
                n.op,
                n.name,
                task
            );
        }
    }
    let mut graph = Graph::new();
    let names = import_graph_def(&mut graph, &def, &ImportOptions::default())?;
    let output = |name: &str| -> Result<Output> {
        let (node, index) = match name.rsplit_once(':') {
            Some((n, i)) => (n, i.parse::<usize>().map_err(|_| bad_name(name))?),
            None => (name, 0),
        };
        let id = *names.get(node).ok_or_else(|| bad_name(name))?;
        if index >= graph.node(id).outputs.len() {
            return Err(bad_name(name));
        }
        Ok(Output::new(id, index))
    };
    let feeds = feeds
        .iter()
        .map(|n| output(n))
        .collect::<Result<Vec<_>>>()?;
    let fetches = fetches
        .iter()
        .map(|n| output(n))
        .collect::<Result<Vec<_>>>()?;
    let targets = targets
        .iter()
        .map(|n| names.get(n.as_str()).copied().ok_or_else(|| bad_name(n)))
        .collect::<Result<Vec<NodeId>>>()?;
    let session = Session::with_shared_state(Arc::new(RwLock::new(graph)), state.clone());
    let plan = session.prepare(&feeds, &fetches, &targets)?;
    Ok(Registration { session, plan })
}

fn bad_name(name: &str) -> Error {
    Error::invalid_argument(format!(
        "RegisterGraph: '{name}' names no node output of the graph"
    ))
}

fn accept_loop(listener: TcpListener, server: Weak<Inner>) {
    for stream in listener.incoming() {
        let Some(inner) = server.upgrade() else {
            return;
        };
        if inner.stopping.load(Ordering::Acquire) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let id = inner.next_connection.fetch_add(1, Ordering::Relaxed);
        if let Ok(clone) = stream.try_clone() {
            inner.connections.lock().insert(id, clone);
        }
        let _ = std::thread::Builder::new()
            .name(format!("ferroflow conn {}", inner.task))
            .spawn(move || {
                let result = serve_connection(&inner, stream);
                inner.connections.lock().remove(&id);
                if let Err(e) = result {
                    if std::env::var_os("FERROFLOW_VERBOSE_CLUSTER").is_some() {
                        eprintln!("ferroflow server {}: connection ended: {e}", inner.task);
                    }
                }
            });
    }
}

/// A byte stream a connection runs on (plain TCP or TLS over it).
pub(crate) trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

fn serve_connection(inner: &Arc<Inner>, stream: TcpStream) -> Result<()> {
    let io = |e: std::io::Error| Error::unavailable(format!("connection: {e}"));
    stream.set_nodelay(true).map_err(io)?;
    // An idle or slow client may not hold a thread before it authenticates.
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(io)?;
    let tls = inner.security.tls().cloned();
    if tls.is_none() {
        let mut head = [0u8; 6];
        let seen = stream.peek(&mut head).unwrap_or(0);
        if seen >= 4 && &head[..4] == b"GET " {
            return answer_health(stream, inner);
        }
        if seen == 6 && is_tls_client_hello(&head) {
            // A client configured for TLS: tell it so (a fatal
            // handshake_failure alert) instead of waiting for a frame.
            let mut stream = stream;
            let _ = stream.write_all(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]);
            bail!(
                unauthenticated,
                "a TLS client connected, but this server does not use TLS"
            );
        }
    }
    let tcp = stream.try_clone().map_err(io)?;
    let conn: Box<dyn Stream> = match tls {
        Some(cfg) => {
            let session = rustls::ServerConnection::new(cfg)
                .map_err(|e| Error::internal(format!("TLS: {e}")))?;
            Box::new(rustls::StreamOwned::new(session, stream))
        }
        None => Box::new(stream),
    };
    let mut conn = BufReader::with_capacity(256 << 10, conn);
    // The first frame must be a Hello with the right token.
    let hello = match read_hello_frame(&mut conn)? {
        Some(Envelope {
            body: Some(Body::Hello(h)),
            ..
        }) => h,
        Some(_) => {
            let e = Error::unauthenticated("the first request on a connection must be Hello");
            let _ = write_frame(conn.get_mut(), Envelope::failure(&e), &[]);
            return Err(e);
        }
        None => return Ok(()),
    };
    let verdict = inner.security.check_token(&hello.token).and_then(|()| {
        if hello.protocol_version != PROTOCOL_VERSION {
            Err(Error::failed_precondition(format!(
                "protocol version {} is not this server's {PROTOCOL_VERSION}",
                hello.protocol_version
            )))
        } else {
            Ok(())
        }
    });
    if let Err(e) = verdict {
        let _ = write_frame(conn.get_mut(), Envelope::failure(&e), &[]);
        return Err(e);
    }
    let welcome = Welcome {
        incarnation: inner.incarnation,
        job: inner.task.job.clone(),
        task: inner.task.task,
        cluster_json: inner.cluster.to_json(),
    };
    write_frame(conn.get_mut(), Envelope::new(Body::Welcome(welcome)), &[]).map_err(io)?;
    tcp.set_read_timeout(None).map_err(io)?;
    loop {
        let Some((env, tensors)) = read_frame(&mut conn)? else {
            return Ok(());
        };
        let (reply, out) = match handle_request(inner, env, tensors, &tcp) {
            Ok(r) => r,
            Err(e) => (Envelope::failure(&e), Vec::new()),
        };
        write_frame(conn.get_mut(), reply, &out).map_err(io)?;
    }
}

fn handle_request(
    inner: &Arc<Inner>,
    env: Envelope,
    tensors: Vec<Tensor>,
    tcp: &TcpStream,
) -> Result<(Envelope, Vec<Tensor>)> {
    match env.body {
        Some(Body::RegisterGraph(r)) => {
            inner.check_incarnation(r.incarnation)?;
            let handle = inner.register(&r.graph_def, &r.feeds, &r.fetches, &r.targets)?;
            Ok((
                Envelope::new(Body::Registered(Registered { handle })),
                Vec::new(),
            ))
        }
        Some(Body::RunGraph(r)) => {
            inner.check_incarnation(r.incarnation)?;
            let out = inner.run(r.handle, tensors, r.timeout_ms, Some(tcp))?;
            Ok((Envelope::new(Body::RanGraph(RanGraph {})), out))
        }
        Some(Body::DeregisterGraph(r)) => {
            inner.deregister(r.handle);
            Ok((Envelope::new(Body::Ack(Ack {})), Vec::new()))
        }
        Some(Body::Shutdown(_)) => {
            if inner.exit_when_chief_done {
                eprintln!(
                    "ferroflow server {}: the chief is done; stopping",
                    inner.task
                );
                let inner = inner.clone();
                // Reply first, then stop.
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(50));
                    inner.stop();
                });
            }
            Ok((Envelope::new(Body::Ack(Ack {})), Vec::new()))
        }
        _ => Err(Error::invalid_argument("unexpected request")),
    }
}

/// True when `head` starts a TLS record holding a ClientHello (content
/// type 22, version 3.x, handshake type 1). A Hello frame cannot look so:
/// its first bytes would declare a header of at least 790 bytes, while its
/// sixth (the length of the Hello inside) would make the header 3 bytes.
fn is_tls_client_hello(head: &[u8; 6]) -> bool {
    matches!(head, [0x16, 0x03, minor, _, _, 0x01] if *minor <= 0x04)
}

fn answer_health(mut stream: TcpStream, inner: &Inner) -> Result<()> {
    let mut buf = [0u8; 1024];
    let _ = stream.read(&mut buf);
    let body = format!("ok {}\n", inner.task);
    let reply = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(reply.as_bytes())
        .map_err(|e| Error::unavailable(format!("health reply: {e}")))
}
