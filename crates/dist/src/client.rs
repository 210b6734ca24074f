//! Connections to a peer task.
//!
//! A [`Peer`] keeps a pool of open connections (one per request in flight,
//! so a blocked `take_grad` does not hold up a variable read) and the
//! incarnation the peer had when first reached: a later connection that finds
//! another incarnation means the task restarted and lost its state, which is
//! TensorFlow's `AbortedError`. A connection that breaks mid-request is
//! `UnavailableError`. Opening a connection retries (refused, unresolvable
//! host) with backoff until a deadline, logging every ten seconds which task
//! it waits for and why, so start order does not matter.

use crate::cluster::{split_host_port, TaskId};
use crate::security::ClientSecurity;
use crate::server::Stream;
use crate::wire::{read_frame, write_frame, Body, Envelope, Hello, Welcome, PROTOCOL_VERSION};
use ferroflow_tensor::{bail, Code, Error, Result, Tensor};
use parking_lot::Mutex;
use std::io::{BufRead, BufReader};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

type Conn = BufReader<Box<dyn Stream>>;

/// A task this process talks to.
pub struct Peer {
    task: TaskId,
    addr: String,
    security: ClientSecurity,
    idle: Mutex<Vec<Conn>>,
    incarnation: Mutex<Option<u64>>,
}

impl Peer {
    pub fn new(task: TaskId, addr: &str, security: ClientSecurity) -> Peer {
        Peer {
            task,
            addr: addr.to_string(),
            security,
            idle: Mutex::new(Vec::new()),
            incarnation: Mutex::new(None),
        }
    }

    pub fn task(&self) -> &TaskId {
        &self.task
    }

    /// The peer's incarnation, once reached.
    pub fn incarnation(&self) -> Option<u64> {
        *self.incarnation.lock()
    }

    /// Sends a request and waits for its reply. A `Failure` reply becomes
    /// the error it carries. New connections may be tried until
    /// `connect_deadline`.
    pub fn call(
        &self,
        request: Envelope,
        tensors: &[Tensor],
        connect_deadline: Instant,
    ) -> Result<(Envelope, Vec<Tensor>)> {
        let pooled = self.idle.lock().pop();
        let mut conn = match pooled {
            Some(c) => c,
            None => self.connect(connect_deadline)?.0,
        };
        let lost = |e: &dyn std::fmt::Display| {
            Error::unavailable(format!(
                "lost the connection to task {} at {}: {e}",
                self.task, self.addr
            ))
        };
        write_frame(conn.get_mut(), request, tensors).map_err(|e| lost(&e))?;
        let reply = match read_frame(&mut conn) {
            Ok(Some(r)) => r,
            Ok(None) => return Err(lost(&"the peer closed it")),
            Err(e) if e.code() == Some(Code::Unavailable) => return Err(lost(&e.message())),
            Err(e) => return Err(e),
        };
        self.idle.lock().push(conn);
        match reply {
            (
                Envelope {
                    body: Some(Body::Failure(f)),
                    ..
                },
                _,
            ) => Err(f.into_error()),
            r => Ok(r),
        }
    }

    /// Connects (retrying until `deadline`) and returns the server's
    /// welcome; the connection stays in the pool.
    pub(crate) fn welcome(&self, deadline: Instant) -> Result<Welcome> {
        let (conn, welcome) = self.connect(deadline)?;
        self.idle.lock().push(conn);
        Ok(welcome)
    }

    /// Opens and authenticates a connection, retrying until `deadline`.
    fn connect(&self, deadline: Instant) -> Result<(Conn, Welcome)> {
        let started = Instant::now();
        let mut next_log = started + Duration::from_secs(10);
        let mut backoff = Duration::from_millis(20);
        loop {
            match self.try_connect() {
                Ok(c) => return Ok(c),
                // Refused, unresolvable, reset: the task may not be up yet.
                Err(e) if e.code() == Some(Code::Unavailable) => {
                    let now = Instant::now();
                    if now >= deadline {
                        bail!(
                            unavailable,
                            "task {} at {} did not answer within {:.0} s: {}",
                            self.task,
                            self.addr,
                            (now - started).as_secs_f64(),
                            e.message()
                        );
                    }
                    if now >= next_log {
                        eprintln!(
                            "ferroflow: still waiting for task {} at {} ({:.0} s): {}",
                            self.task,
                            self.addr,
                            (now - started).as_secs_f64(),
                            e.message()
                        );
                        next_log = now + Duration::from_secs(10);
                    }
                    std::thread::sleep(backoff.min(deadline - now));
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn try_connect(&self) -> Result<(Conn, Welcome)> {
        let unavailable = |e: &dyn std::fmt::Display| Error::unavailable(format!("{e}"));
        let addrs: Vec<_> = self
            .addr
            .to_socket_addrs()
            .map_err(|e| unavailable(&format!("cannot resolve '{}': {e}", self.addr)))?
            .collect();
        let mut last = None;
        let mut tcp = None;
        for a in &addrs {
            match TcpStream::connect_timeout(a, Duration::from_secs(5)) {
                // Loopback with no listener can connect a socket to itself
                // (its ephemeral port chosen equal to the target's): that
                // is a refusal, and the socket must go so the task can bind.
                Ok(s) if s.local_addr().ok() == s.peer_addr().ok() => {
                    last = Some(std::io::Error::new(
                        std::io::ErrorKind::ConnectionRefused,
                        "connection refused (the connection reached itself)",
                    ));
                }
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let tcp = tcp.ok_or_else(|| {
            unavailable(&last.map_or_else(|| "no address".to_string(), |e| e.to_string()))
        })?;
        tcp.set_nodelay(true).map_err(|e| unavailable(&e))?;
        // A peer that accepts but never answers (not a ferroflow task, or a
        // TLS/plaintext mismatch) may not hold the connect loop forever.
        tcp.set_read_timeout(Some(HELLO_TIMEOUT))
            .map_err(|e| unavailable(&e))?;
        let plain = tcp.try_clone().map_err(|e| unavailable(&e))?;
        let stream: Box<dyn Stream> = match self.security.tls() {
            Some(cfg) => {
                let host = split_host_port(&self.addr).map_or(self.addr.as_str(), |(h, _)| h);
                let name =
                    rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| {
                        Error::invalid_argument(format!("TLS server name '{host}': {e}"))
                    })?;
                let mut session = rustls::ClientConnection::new(cfg.clone(), name)
                    .map_err(|e| Error::internal(format!("TLS: {e}")))?;
                let mut tcp = tcp;
                // Handshake before the first frame, so that a certificate
                // refused here is told apart from a task that is not up yet.
                while session.is_handshaking() {
                    session
                        .complete_io(&mut tcp)
                        .map_err(|e| self.handshake_error(&e))?;
                }
                Box::new(rustls::StreamOwned::new(session, tcp))
            }
            None => Box::new(tcp),
        };
        let mut conn = BufReader::with_capacity(256 << 10, stream);
        let hello = Hello {
            protocol_version: PROTOCOL_VERSION,
            token: self.security.token.clone(),
        };
        let written = write_frame(conn.get_mut(), Envelope::new(Body::Hello(hello)), &[]);
        // The server's first bytes: a TLS alert when it refused this
        // client's certificate (TLS 1.3 tells the client only now) or when it
        // requires TLS and this client spoke plaintext.
        match conn.fill_buf() {
            Err(e) => return Err(self.handshake_error(&e)),
            Ok(head) if self.security.tls().is_none() && is_tls_alert(head) => {
                bail!(
                    unauthenticated,
                    "{} requires TLS and this client has no TLS configuration: set \
                     FERROFLOW_TLS_CERT, FERROFLOW_TLS_KEY and FERROFLOW_TLS_CA (a certificate \
                     signed by the cluster's CA)",
                    self.who()
                )
            }
            Ok(_) => written.map_err(|e| self.handshake_error(&e))?,
        }
        let welcome: Welcome = match read_frame(&mut conn) {
            Ok(Some((
                Envelope {
                    body: Some(Body::Welcome(w)),
                    ..
                },
                _,
            ))) => w,
            Ok(Some((
                Envelope {
                    body: Some(Body::Failure(f)),
                    ..
                },
                _,
            ))) => return Err(f.into_error()),
            Ok(_) => {
                bail!(
                    unavailable,
                    "handshake with task {} failed: no welcome",
                    self.task
                )
            }
            Err(e) => return Err(e),
        };
        plain.set_read_timeout(None).map_err(|e| unavailable(&e))?;
        let mut known = self.incarnation.lock();
        match *known {
            Some(k) if k != welcome.incarnation => {
                bail!(
                    aborted,
                    "task {} at {} restarted (incarnation {k:016x} became {:016x}): the state it \
                     held was lost; recreate the session",
                    self.task,
                    self.addr,
                    welcome.incarnation
                )
            }
            _ => *known = Some(welcome.incarnation),
        }
        drop(known);
        Ok((conn, welcome))
    }
}

/// How long a new connection may wait for the server's TLS handshake and
/// welcome before the attempt counts as failed (and is retried).
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// True when `head` starts with a TLS alert record (content type 21,
/// version 3.x, length 2): what a TLS server answers plaintext with. A
/// frame's fifth byte is its envelope's first field tag, never 2.
fn is_tls_alert(head: &[u8]) -> bool {
    matches!(head, [0x15, 0x03, minor, 0x00, 0x02, ..] if *minor <= 0x04)
}

impl Peer {
    /// "task ... at host:port", or "the server at host:port" for a session's
    /// first connection, made before it knows the task.
    fn who(&self) -> String {
        if self.task.job == "?" {
            format!("the server at {}", self.addr)
        } else {
            format!("task {} at {}", self.task, self.addr)
        }
    }

    /// An I/O error while opening a connection. One raised inside TLS (a
    /// certificate refused by either side, a fatal alert, a peer that does not
    /// speak TLS) is `Unauthenticated`: retrying cannot help. Anything else
    /// (reset, closed, timed out) is `Unavailable`: the task may be starting.
    fn handshake_error(&self, e: &std::io::Error) -> Error {
        let Some(tls) = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        else {
            return Error::unavailable(format!("handshake with task {} failed: {e}", self.task));
        };
        let peer = self.who();
        let why = match tls {
            rustls::Error::InvalidCertificate(_) => format!(
                "this client does not trust the certificate of {peer} ({tls}): \
                 FERROFLOW_TLS_CA must be the cluster's CA, and the server's certificate must \
                 name the host the cluster spec gives"
            ),
            rustls::Error::AlertReceived(_) => format!(
                "{peer} refused the TLS connection ({tls}): the client certificate must be \
                 signed by the cluster's CA, and the task must use TLS too"
            ),
            _ => format!("TLS handshake with {peer} failed: {tls}"),
        };
        Error::unauthenticated(why)
    }
}
