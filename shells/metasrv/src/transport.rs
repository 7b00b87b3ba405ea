//! How Lake's gRPC services are reached: TLS (rustls, through tonic's `tls-ring` support)
//! for the network, and an in-process transport for a server and its client in one
//! process, which then listens on no port at all.
//!
//! * [`ServerTls`]: a server's certificate chain and key, and optionally the CA that every
//!   client certificate must chain to (mutual TLS, as Metasrv uses it so that only Query
//!   replicas and operators holding a certificate can call it).
//! * [`ClientTls`]: the CA a client trusts (default: the system's roots) and optionally the
//!   client's own certificate and key.
//! * [`in_process`]: a tonic channel whose connections are in-memory pipes to a server in
//!   this process.
//!
//! Certificates and keys are PEM files (RFC 7468): the certificate file holds the chain,
//! leaf first; the key file one PKCS#8, PKCS#1 or SEC1 private key.

use std::path::Path;

use futures::{Stream, StreamExt as _};
use tonic::transport::{
    Certificate, Channel, ClientTlsConfig, Endpoint, Identity, Server, ServerTlsConfig,
};

use crate::MetasrvError;

/// Longest a TLS handshake may take before the connection is dropped: a client that opens
/// a connection and sends nothing must not hold a server task.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Makes ring rustls' process-wide crypto provider, once. The build links rustls with two
/// providers (the AWS SDK brings aws-lc-rs), and then rustls cannot pick one itself: a
/// server TLS config built without a provider would panic.
fn install_crypto_provider() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // Err: another part of the process installed one first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Reads a PEM file named by `flag`, checking that it holds a PEM block of `kind`
/// (`CERTIFICATE`, or `PRIVATE KEY` for any of the key forms).
fn read_pem(path: &Path, flag: &str, kind: &str) -> Result<Vec<u8>, MetasrvError> {
    let bytes = std::fs::read(path)
        .map_err(|e| MetasrvError::Tls(format!("{flag} {}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    let holds_kind = text.lines().any(|line| {
        line.strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
            .is_some_and(|label| label.ends_with(kind))
    });
    if !holds_kind {
        return Err(MetasrvError::Tls(format!(
            "{flag} {}: no PEM block of a {kind} (a file with a \"-----BEGIN {kind}-----\" line)",
            path.display()
        )));
    }
    Ok(bytes)
}

/// A TLS server's settings.
#[derive(Clone)]
pub struct ServerTls {
    config: ServerTlsConfig,
    mutual: bool,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("mutual", &self.mutual)
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Settings from PEM bytes: `cert` (the chain, leaf first) and `key`; with `client_ca`,
    /// clients must present a certificate that chains to it (mutual TLS) or the handshake
    /// fails.
    ///
    /// # Errors
    /// [`MetasrvError::Tls`] when the certificate, key or CA does not parse or the key
    /// does not belong to the certificate (rustls' checks).
    pub fn from_pem(
        cert: &[u8],
        key: &[u8],
        client_ca: Option<&[u8]>,
    ) -> Result<Self, MetasrvError> {
        install_crypto_provider();
        let mut config = ServerTlsConfig::new()
            .identity(Identity::from_pem(cert, key))
            .timeout(HANDSHAKE_TIMEOUT);
        if let Some(ca) = client_ca {
            config = config.client_ca_root(Certificate::from_pem(ca));
        }
        // Building a server checks the identity now rather than at the first connection.
        Server::builder()
            .tls_config(config.clone())
            .map_err(|e| MetasrvError::Tls(format!("server certificate or key: {e}")))?;
        Ok(Self {
            config,
            mutual: client_ca.is_some(),
        })
    }

    /// Settings from PEM files (see [`Self::from_pem`]); `flags` names the three settings
    /// for error messages, e.g. `["--tls-cert", "--tls-key", "--tls-client-ca"]`.
    ///
    /// # Errors
    /// [`MetasrvError::Tls`] naming the file and setting that is unreadable or not PEM of
    /// the right kind, or as [`Self::from_pem`].
    pub fn load(
        cert: &Path,
        key: &Path,
        client_ca: Option<&Path>,
        flags: [&str; 3],
    ) -> Result<Self, MetasrvError> {
        let cert = read_pem(cert, flags[0], "CERTIFICATE")?;
        let key = read_pem(key, flags[1], "PRIVATE KEY")?;
        let client_ca = client_ca
            .map(|ca| read_pem(ca, flags[2], "CERTIFICATE"))
            .transpose()?;
        Self::from_pem(&cert, &key, client_ca.as_deref())
    }

    /// Whether clients must present a certificate.
    pub fn is_mutual(&self) -> bool {
        self.mutual
    }

    /// `builder` serving TLS with these settings.
    ///
    /// # Errors
    /// [`MetasrvError::Tls`] (not expected: [`Self::from_pem`] built the same config).
    pub fn apply(&self, builder: Server) -> Result<Server, MetasrvError> {
        install_crypto_provider();
        builder
            .tls_config(self.config.clone())
            .map_err(|e| MetasrvError::Tls(e.to_string()))
    }
}

/// A TLS client's settings.
#[derive(Clone, Default)]
pub struct ClientTls {
    ca: Option<Vec<u8>>,
    identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls")
            .field("custom_ca", &self.ca.is_some())
            .field("client_certificate", &self.identity.is_some())
            .finish()
    }
}

impl ClientTls {
    /// Settings from PEM bytes: servers must present a certificate chaining to `ca` (the
    /// system's roots when `None`); `identity` (certificate chain, key) is presented to
    /// servers that ask for one.
    pub fn from_pem(ca: Option<&[u8]>, identity: Option<(&[u8], &[u8])>) -> Self {
        Self {
            ca: ca.map(<[u8]>::to_vec),
            identity: identity.map(|(cert, key)| (cert.to_vec(), key.to_vec())),
        }
    }

    /// Settings from PEM files; `flags` names the three settings for error messages, e.g.
    /// `["--metasrv-ca", "--metasrv-cert", "--metasrv-key"]`.
    ///
    /// # Errors
    /// [`MetasrvError::Tls`] naming the file and setting that is unreadable or not PEM of
    /// the right kind, or when only one of the certificate and the key is given.
    pub fn load(
        ca: Option<&Path>,
        cert: Option<&Path>,
        key: Option<&Path>,
        flags: [&str; 3],
    ) -> Result<Self, MetasrvError> {
        let ca = ca
            .map(|ca| read_pem(ca, flags[0], "CERTIFICATE"))
            .transpose()?;
        let identity = match (cert, key) {
            (Some(cert), Some(key)) => Some((
                read_pem(cert, flags[1], "CERTIFICATE")?,
                read_pem(key, flags[2], "PRIVATE KEY")?,
            )),
            (None, None) => None,
            _ => {
                return Err(MetasrvError::Tls(format!(
                    "{} and {} go together: give both or neither",
                    flags[1], flags[2]
                )));
            }
        };
        Ok(Self { ca, identity })
    }

    /// `endpoint` speaking TLS with these settings.
    ///
    /// # Errors
    /// [`MetasrvError::Tls`] when the CA or the identity does not parse.
    pub fn apply(&self, endpoint: Endpoint) -> Result<Endpoint, MetasrvError> {
        let mut config = ClientTlsConfig::new().timeout(HANDSHAKE_TIMEOUT);
        config = match &self.ca {
            Some(ca) => config.ca_certificate(Certificate::from_pem(ca)),
            None => config.with_native_roots(),
        };
        if let Some((cert, key)) = &self.identity {
            config = config.identity(Identity::from_pem(cert, key));
        }
        endpoint
            .tls_config(config)
            .map_err(|e| MetasrvError::Tls(format!("client TLS settings: {e}")))
    }
}

/// A connection of [`in_process`]: one end of an in-memory pipe.
pub type InProcessStream = tokio::io::DuplexStream;

/// Bytes buffered in each direction of an in-process connection.
const PIPE_BYTES: usize = 1 << 20;

/// A channel to a server in this process, and the connections that server must accept:
/// pass the stream to `Server::serve_with_incoming`. Each connection the channel opens is
/// an in-memory pipe, so the server needs no port and nothing outside the process can
/// reach it. When the server is gone, connecting fails with `Unavailable`.
pub fn in_process() -> (
    Channel,
    impl Stream<Item = std::io::Result<InProcessStream>> + Send + 'static,
) {
    let (accept, accepted) = tokio::sync::mpsc::channel::<InProcessStream>(16);
    let connector = tower::service_fn(move |_: tonic::transport::Uri| {
        let accept = accept.clone();
        async move {
            let (client, server) = tokio::io::duplex(PIPE_BYTES);
            accept.send(server).await.map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    "the in-process server has stopped",
                )
            })?;
            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(client))
        }
    });
    let channel =
        Endpoint::from_static("http://in-process.invalid").connect_with_connector_lazy(connector);
    let incoming = tokio_stream::wrappers::ReceiverStream::new(accepted).map(Ok);
    (channel, incoming)
}
