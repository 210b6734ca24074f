//! Who may talk to a task: a cluster token, mutual TLS, or loopback only.
//!
//! A server listens on `127.0.0.1` unless given another bind address, and a
//! server that listens beyond loopback refuses to start unless it checks a
//! cluster token, requires mutual TLS, or was told `insecure` explicitly.
//! The token is checked on every connection before any request is read, by
//! comparing SHA-256 digests in constant time (the comparison reveals
//! neither the token nor its length). With TLS, both sides present
//! certificates signed by the cluster's CA.
//!
//! The environment configures both sides the same way, so one Kubernetes
//! Secret serves servers and workers: `FERROFLOW_CLUSTER_TOKEN` (or
//! `FERROFLOW_CLUSTER_TOKEN_FILE`), and `FERROFLOW_TLS_CERT`,
//! `FERROFLOW_TLS_KEY`, `FERROFLOW_TLS_CA` (PEM files).

use ferroflow_tensor::{bail, Error, Result};
use ring::digest::{digest, SHA256};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// PEM files of one side's TLS identity and the cluster CA.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca: PathBuf,
}

impl TlsFiles {
    /// From `FERROFLOW_TLS_CERT`/`_KEY`/`_CA`, when all three are set.
    pub fn from_env() -> Result<Option<TlsFiles>> {
        let get = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        match (
            get("FERROFLOW_TLS_CERT"),
            get("FERROFLOW_TLS_KEY"),
            get("FERROFLOW_TLS_CA"),
        ) {
            (Some(cert), Some(key), Some(ca)) => Ok(Some(TlsFiles { cert, key, ca })),
            (None, None, None) => Ok(None),
            _ => Err(Error::invalid_argument(
                "TLS needs all of FERROFLOW_TLS_CERT, FERROFLOW_TLS_KEY and FERROFLOW_TLS_CA",
            )),
        }
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls_error(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("TLS {what} '{}': {e}", path.display()))
}

fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| tls_error("certificate file", path, e))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| tls_error("certificate file", path, e))?;
    if certs.is_empty() {
        return Err(tls_error("certificate file", path, "holds no certificate"));
    }
    Ok(certs)
}

fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| tls_error("private key file", path, e))
}

fn load_roots(path: &Path) -> Result<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    for c in load_certs(path)? {
        roots
            .add(c)
            .map_err(|e| tls_error("CA certificate", path, e))?;
    }
    Ok(roots)
}

/// The token from `FERROFLOW_CLUSTER_TOKEN`, else the file named by
/// `FERROFLOW_CLUSTER_TOKEN_FILE` (surrounding whitespace trimmed).
pub fn token_from_env() -> Result<Option<Vec<u8>>> {
    if let Some(t) = std::env::var_os("FERROFLOW_CLUSTER_TOKEN").filter(|v| !v.is_empty()) {
        return Ok(Some(t.into_encoded_bytes()));
    }
    match std::env::var_os("FERROFLOW_CLUSTER_TOKEN_FILE").filter(|v| !v.is_empty()) {
        Some(p) => read_token_file(Path::new(&p)).map(Some),
        None => Ok(None),
    }
}

/// A token file's contents without surrounding whitespace; an empty token is
/// refused (it would let anyone in).
pub fn read_token_file(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::not_found(format!(
            "cannot read the cluster token file '{}': {e}",
            path.display()
        ))
    })?;
    let t = bytes.trim_ascii().to_vec();
    if t.is_empty() {
        bail!(
            invalid_argument,
            "the cluster token file '{}' is empty",
            path.display()
        );
    }
    Ok(t)
}

/// How a server checks its clients.
#[derive(Clone, Default)]
pub struct ServerSecurity {
    token_digest: Option<[u8; 32]>,
    tls: Option<Arc<rustls::ServerConfig>>,
    /// Listening beyond loopback without a token or TLS was asked for.
    pub insecure: bool,
}

impl ServerSecurity {
    /// Requires `token` from every client.
    pub fn with_token(mut self, token: &[u8]) -> Result<ServerSecurity> {
        if token.is_empty() {
            bail!(invalid_argument, "the cluster token is empty");
        }
        self.token_digest = Some(sha256(token));
        Ok(self)
    }

    /// Requires mutual TLS: clients must present a certificate signed by the
    /// CA in `files.ca`.
    pub fn with_tls(mut self, files: &TlsFiles) -> Result<ServerSecurity> {
        let roots = Arc::new(load_roots(&files.ca)?);
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(roots, provider())
                .build()
                .map_err(|e| tls_error("CA certificate", &files.ca, e))?;
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::internal(format!("TLS setup: {e}")))?
            .with_client_cert_verifier(verifier)
            .with_single_cert(load_certs(&files.cert)?, load_key(&files.key)?)
            .map_err(|e| tls_error("certificate/key pair", &files.cert, e))?;
        self.tls = Some(Arc::new(config));
        Ok(self)
    }

    /// Token and TLS from the environment (see the module docs).
    pub fn from_env() -> Result<ServerSecurity> {
        let mut s = ServerSecurity::default();
        if let Some(t) = token_from_env()? {
            s = s.with_token(&t)?;
        }
        if let Some(files) = TlsFiles::from_env()? {
            s = s.with_tls(&files)?;
        }
        Ok(s)
    }

    /// True when clients must prove who they are.
    pub fn authenticates(&self) -> bool {
        self.token_digest.is_some() || self.tls.is_some()
    }

    pub fn tls(&self) -> Option<&Arc<rustls::ServerConfig>> {
        self.tls.as_ref()
    }

    /// Checks a client's token; `Unauthenticated` unless it matches (or the
    /// server needs none).
    pub fn check_token(&self, token: &[u8]) -> Result<()> {
        match &self.token_digest {
            None => Ok(()),
            Some(want) => {
                let got = sha256(token);
                // Constant time over the fixed-size digests.
                let diff = want.iter().zip(&got).fold(0u8, |acc, (a, b)| acc | (a ^ b));
                if diff == 0 {
                    Ok(())
                } else {
                    Err(Error::unauthenticated(
                        "the cluster token is missing or wrong (set FERROFLOW_CLUSTER_TOKEN or \
                         FERROFLOW_CLUSTER_TOKEN_FILE to the cluster's token)",
                    ))
                }
            }
        }
    }
}

/// How a client proves itself to servers.
#[derive(Clone, Default)]
pub struct ClientSecurity {
    pub token: Vec<u8>,
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl ClientSecurity {
    pub fn with_token(mut self, token: &[u8]) -> ClientSecurity {
        self.token = token.to_vec();
        self
    }

    /// Presents `files.cert` and trusts servers signed by `files.ca`.
    pub fn with_tls(mut self, files: &TlsFiles) -> Result<ClientSecurity> {
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::internal(format!("TLS setup: {e}")))?
            .with_root_certificates(load_roots(&files.ca)?)
            .with_client_auth_cert(load_certs(&files.cert)?, load_key(&files.key)?)
            .map_err(|e| tls_error("certificate/key pair", &files.cert, e))?;
        self.tls = Some(Arc::new(config));
        Ok(self)
    }

    /// Token and TLS from the environment (see the module docs).
    pub fn from_env() -> Result<ClientSecurity> {
        let mut s = ClientSecurity::default();
        if let Some(t) = token_from_env()? {
            s = s.with_token(&t);
        }
        if let Some(files) = TlsFiles::from_env()? {
            s = s.with_tls(&files)?;
        }
        Ok(s)
    }

    pub fn tls(&self) -> Option<&Arc<rustls::ClientConfig>> {
        self.tls.as_ref()
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let d = digest(&SHA256, bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// A random 64-bit value (a server's incarnation), never 0.
pub fn random_u64() -> u64 {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 8];
    // The system RNG does not fail on supported platforms; fall back to the
    // clock rather than panic if it ever does.
    if ring::rand::SystemRandom::new().fill(&mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        b = (t ^ u64::from(std::process::id()).rotate_left(32)).to_le_bytes();
    }
    u64::from_le_bytes(b).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_check() {
        let s = ServerSecurity::default().with_token(b"s3cret").unwrap();
        assert!(s.check_token(b"s3cret").is_ok());
        let e = s.check_token(b"s3cre").unwrap_err();
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::Unauthenticated));
        assert!(s.check_token(b"").is_err());
        assert!(ServerSecurity::default().check_token(b"").is_ok());
        assert!(ServerSecurity::default().with_token(b"").is_err());
        assert_ne!(random_u64(), random_u64());
    }
}
