//! The embedded all-in-one server: Metasrv on RocksDB (served in process: it listens on no
//! port, so only this process can call it), a Query replica answering Flight SQL, and
//! tables on the local filesystem.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use lake_metasrv::{Metasrv, MetasrvClient, RocksStore};
use lake_query::catalog::Catalog;
use lake_query::iceberg::IcebergConfig;
use lake_query::{Engine, QueryError, TicketKey};
use lake_sdk::LakeClient;

use crate::tpch;

/// How long the catalog cache counts as verified after losing Metasrv's stream, in ms.
const CACHE_LEASE_MS: i64 = 10_000;

/// A running embedded server.
pub struct Embedded {
    /// Where Flight SQL listens.
    pub flight_addr: SocketAddr,
    /// The Query replica's engine.
    pub engine: Arc<Engine>,
    /// Bytes the Query replica has read from its Flight SQL clients.
    pub query_received: Arc<AtomicU64>,
    /// The embedded Metasrv (for its request and byte counters).
    pub metasrv: Metasrv,
    /// Whether Flight SQL is served over TLS.
    pub tls: bool,
    server: tokio::task::JoinHandle<Result<(), QueryError>>,
}

/// A running Query replica.
pub struct QueryReplica {
    /// Where Flight SQL listens.
    pub addr: SocketAddr,
    /// The replica's engine.
    pub engine: Arc<Engine>,
    /// Bytes read from Flight SQL clients so far.
    pub received: Arc<AtomicU64>,
    /// The Flight SQL server task.
    pub server: tokio::task::JoinHandle<Result<(), QueryError>>,
}

impl Embedded {
    /// Endpoint for SDK clients: `http://ADDR`, or `https://ADDR` over TLS.
    pub fn endpoint(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.flight_addr)
    }

    /// Waits until the Flight server stops, then shuts Metasrv down (releasing its lease,
    /// so the next start need not wait for it to expire).
    ///
    /// # Errors
    /// The server's failure.
    pub async fn wait(self) -> anyhow::Result<()> {
        let served = self.server.await;
        self.metasrv.shutdown().await;
        served??;
        Ok(())
    }
}

/// Starts a Query replica: makes sure the default namespace exists, follows Metasrv's
/// change stream into the catalog cache, and answers Flight SQL on `listen` over tables
/// under `data_root` (a path or an object-store URI such as `s3://bucket/prefix`) until
/// `shutdown` resolves. FILE bytes live on per-table stages under `options.stage_root`
/// (default `<data_root>/stage`); `options.iceberg` adds the read-only `iceberg` catalog.
///
/// # Errors
/// Metasrv is unreachable, the port is taken, or `stage_root` is not a stage URI.
pub async fn start_query(
    client: MetasrvClient,
    data_root: &str,
    options: &ReplicaOptions,
    key: TicketKey,
    listen: SocketAddr,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<QueryReplica> {
    if let Err(e) = client
        .create_namespace(lake_query::sql::DEFAULT_NAMESPACE)
        .await
        && !e.is_already_exists()
    {
        return Err(e).context("creating the default namespace at Metasrv");
    }
    let catalog = Catalog::start(client.clone(), CACHE_LEASE_MS).await?;
    check_exposure(listen, &options.auth)?;
    let token_key = key.derive("flight bearer tokens");
    let mut engine = Engine::new(catalog, client, data_root, key)
        .with_maintenance(options.maintenance)
        .with_limits(options.limits.clone())?;
    if options.auth.users.is_some() || options.auth.jwks.is_some() {
        let ttl = if options.auth.token_ttl.is_zero() {
            lake_query::auth::TOKEN_TTL_DEFAULT
        } else {
            options.auth.token_ttl
        };
        // The demo loader logs in with a token minted in process, as a superuser.
        let mut users = options.auth.users.clone().unwrap_or_default();
        users.set_admin(DEMO_LOADER, true);
        let mut auth = lake_query::auth::Authenticator::new(users, &token_key, ttl)?;
        if let Some(jwks) = &options.auth.jwks {
            auth = auth.with_jwks(jwks.clone());
        }
        engine = engine.with_auth(auth);
        tracing::info!(
            users = options.auth.users.as_ref().map_or(0, |u| u.len()),
            jwks = options.auth.jwks.is_some(),
            "clients must log in"
        );
    }
    if let Some(root) = &options.stage_root {
        engine = engine.with_stage_root(root)?;
    }
    if let Some(iceberg) = &options.iceberg {
        engine = engine.with_iceberg(iceberg)?;
        tracing::info!(uri = %iceberg.uri, warehouse = %iceberg.warehouse, "catalog iceberg: reading from the REST catalog");
    }
    let engine = Arc::new(engine);
    Engine::collect_dropped_tables(&engine);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding Flight SQL on {listen}"))?;
    let addr = listener.local_addr()?;
    let received = Arc::new(AtomicU64::new(0));
    let tls = options.auth.tls.clone();
    let server = tokio::spawn({
        let engine = engine.clone();
        let received = received.clone();
        async move { lake_query::serve(engine, listener, received, tls.as_ref(), shutdown).await }
    });
    Ok(QueryReplica {
        addr,
        engine,
        received,
        server,
    })
}

/// Refuses to serve a non-loopback `listen` address without a login and without TLS,
/// unless the flag that gives each up was passed (naming everything that is missing at
/// once); warns when serving beyond loopback with either given up.
///
/// # Errors
/// What is missing and the flags that supply it.
pub fn check_exposure(listen: SocketAddr, auth: &AuthOptions) -> anyhow::Result<()> {
    if listen.ip().is_loopback() {
        return Ok(());
    }
    let mut missing = Vec::new();
    if !auth.authenticates() && !auth.insecure_no_auth {
        missing.push("authentication: anyone who reaches it could read, write and drop every table. Give a users file (--users-file, LAKE_USERS_FILE; create it with `lake user add NAME --users-file PATH`) or an identity provider's keys (--jwks-file, LAKE_JWKS_FILE), or pass --insecure-no-auth (LAKE_INSECURE_NO_AUTH=true) if something else guards this network");
    }
    if auth.tls.is_none() && !auth.insecure_no_tls {
        missing.push("TLS: passwords, tokens and table data would cross the network in clear text. Give a certificate and its key (--tls-cert, --tls-key; LAKE_TLS_CERT, LAKE_TLS_KEY) or pass --insecure-no-tls (LAKE_INSECURE_NO_TLS=true) if the network is encrypted otherwise");
    }
    if !missing.is_empty() {
        anyhow::bail!(
            "refusing to serve {listen} without {} (or listen on a loopback address)",
            missing.join("; and without ")
        );
    }
    if !auth.authenticates() {
        tracing::warn!(%listen, "serving without authentication (--insecure-no-auth): anyone who reaches this address can read, write and drop every table");
    }
    if auth.tls.is_none() {
        tracing::warn!(%listen, "serving without TLS (--insecure-no-tls): passwords, tokens and rows cross the network in clear text");
    }
    Ok(())
}

/// Reads the ticket key from `path`, creating a random one (mode 0600) when the file does
/// not exist, so tickets survive a restart and, with the file shared, are accepted by every
/// replica. Replicas starting together agree on one key: the file is created exclusively,
/// and a replica that loses that race reads the winner's key.
///
/// # Errors
/// The file holds fewer than 32 bytes (it is never overwritten), or cannot be read or
/// written.
pub fn ticket_key(path: &Path) -> anyhow::Result<TicketKey> {
    use std::io::Write;
    const KEY_MIN: usize = 32;
    let read = |path: &Path| -> anyhow::Result<Option<TicketKey>> {
        match std::fs::read(path) {
            Ok(key) if key.len() >= KEY_MIN => Ok(Some(TicketKey::new(&key)?)),
            Ok(key) => anyhow::bail!(
                "ticket key file {} holds {} bytes; a key needs at least {KEY_MIN} (remove the file to have a random key written)",
                path.display(),
                key.len()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading ticket key file {}", path.display())),
        }
    };
    if let Some(key) = read(path)? {
        return Ok(key);
    }
    let key: Vec<u8> = (0..KEY_MIN).map(|_| rand::random::<u8>()).collect();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(mut file) => {
            file.write_all(&key)
                .and_then(|()| file.sync_all())
                .with_context(|| format!("writing ticket key file {}", path.display()))?;
            Ok(TicketKey::new(&key)?)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // Another replica is writing it: wait for its key.
            for _ in 0..100 {
                if let Ok(Some(key)) = read(path) {
                    return Ok(key);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            read(path)?
                .with_context(|| format!("ticket key file {} stayed incomplete", path.display()))
        }
        Err(e) => Err(e).with_context(|| format!("creating ticket key file {}", path.display())),
    }
}

/// Connects to a Query replica (over TLS checked against the PEM CA file `tls_ca` when
/// given, else the system's roots, for `https://` and `grpc+tls://`), sending the API token
/// `LAKE_TOKEN` when it is set, else logging in as `LAKE_USER` with `LAKE_PASSWORD` when
/// `LAKE_USER` is set (a server with a users file requires one of them).
///
/// # Errors
/// The endpoint is unreachable, the CA file unreadable, the TLS handshake fails, only one
/// of the two variables is set, or the login is refused.
pub async fn connect(endpoint: &str, tls_ca: Option<&Path>) -> anyhow::Result<LakeClient> {
    let ca = tls_ca
        .map(|path| {
            std::fs::read(path).with_context(|| format!("reading --tls-ca {}", path.display()))
        })
        .transpose()?;
    let mut lake = match LakeClient::connect_with_ca(endpoint, ca.as_deref()).await {
        Ok(lake) => lake,
        Err(e) if e.to_string().contains("UnknownIssuer") => {
            return Err(anyhow::Error::new(e).context(
                "the server's certificate is not from a CA this client trusts: give that CA with --tls-ca (LAKE_TLS_CA)",
            ));
        }
        Err(e) => return Err(e.into()),
    };
    if let Ok(token) = std::env::var("LAKE_TOKEN") {
        lake.set_token(token.trim());
    } else if let Ok(user) = std::env::var("LAKE_USER") {
        let Ok(password) = std::env::var("LAKE_PASSWORD") else {
            anyhow::bail!("LAKE_USER is set but LAKE_PASSWORD is not: set both to log in");
        };
        lake.login(&user, &password)
            .await
            .with_context(|| format!("logging in to {endpoint} as {user}"))?;
    }
    Ok(lake)
}

/// What a Query replica serves besides the `lake` catalog over its data root.
#[derive(Clone, Debug, Default)]
pub struct ReplicaOptions {
    /// Where table stages live (default `<data root>/stage`).
    pub stage_root: Option<String>,
    /// The read-only `iceberg` catalog, when configured.
    pub iceberg: Option<IcebergConfig>,
    /// What one statement may use.
    pub limits: lake_query::Limits,
    /// How tables' files are kept in shape (compaction, cleanup of expired versions).
    pub maintenance: lake_query::dataset::Maintenance,
    /// Who may call.
    pub auth: AuthOptions,
    /// How much history the embedded Metasrv keeps per table (a cluster's Query replica
    /// ignores it: its Metasrv nodes have their own).
    pub retention: lake_core::Retention,
}

/// Who may call a Query replica, and over what.
#[derive(Clone, Debug, Default)]
pub struct AuthOptions {
    /// The users who may log in; `None`: no login, every caller is let in.
    pub users: Option<lake_query::auth::Users>,
    /// An identity provider's keys: its JWTs are accepted as bearer tokens.
    pub jwks: Option<std::sync::Arc<lake_query::jwt::Jwks>>,
    /// How long a login's bearer token is valid (default 12 hours).
    pub token_ttl: std::time::Duration,
    /// Allow serving a non-loopback address without users.
    pub insecure_no_auth: bool,
    /// Serve Flight SQL over TLS with this certificate and key.
    pub tls: Option<lake_metasrv::ServerTls>,
    /// Allow serving a non-loopback address without TLS.
    pub insecure_no_tls: bool,
}

impl AuthOptions {
    /// Whether callers must authenticate (a users file or a JWKS is given).
    pub fn authenticates(&self) -> bool {
        self.users.is_some() || self.jwks.is_some()
    }
}

/// Starts the embedded server with data under `data_dir`, Flight SQL on `listen`
/// (port 0 picks a free one), until `shutdown` resolves.
///
/// # Errors
/// The data directory cannot be created or is locked by another server; the port is taken.
pub async fn start(
    data_dir: &Path,
    listen: SocketAddr,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<Embedded> {
    start_with(data_dir, listen, &ReplicaOptions::default(), shutdown).await
}

/// [`start`] with `options` for the Query replica (e.g. the `iceberg` catalog).
///
/// # Errors
/// As [`start`].
pub async fn start_with(
    data_dir: &Path,
    listen: SocketAddr,
    options: &ReplicaOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<Embedded> {
    check_exposure(listen, &options.auth)?;
    std::fs::create_dir_all(data_dir.join("tables"))
        .with_context(|| format!("creating data directory {}", data_dir.display()))?;
    let data_dir = data_dir
        .canonicalize()
        .with_context(|| format!("resolving {}", data_dir.display()))?;
    let store = RocksStore::open(&data_dir.join("metasrv")).with_context(|| {
        format!(
            "opening the Metasrv store in {} (is another lake serve using it?)",
            data_dir.display()
        )
    })?;
    let metasrv = Metasrv::start_node_with(
        Arc::new(store),
        lake_metasrv::single_node_election(),
        options.retention,
    )?;
    let client = metasrv.clone().serve_in_process();
    let key = ticket_key(&data_dir.join("ticket.key"))?;
    let data_root = data_dir.to_string_lossy().to_string();
    let replica = start_query(client, &data_root, options, key, listen, shutdown).await?;
    tracing::info!(flight_addr = %replica.addr, data_dir = %data_dir.display(), "lake serve: Flight SQL listening");
    Ok(Embedded {
        flight_addr: replica.addr,
        engine: replica.engine,
        query_received: replica.received,
        metasrv,
        tls: options.auth.tls.is_some(),
        server: replica.server,
    })
}

/// The principal the demo loader acts as: a superuser no one can log in as.
const DEMO_LOADER: &str = "lake-demo-loader";

/// Loads TPC-H at scale factor `scale` into `lake.tpch.*` through the SDK append path, one
/// idempotent append per table, so a restarted load appends nothing twice.
///
/// # Errors
/// Generation or SDK errors.
pub async fn load_demo(server: &Embedded, scale: f64) -> anyhow::Result<()> {
    // In process: the loader needs neither the port nor, with TLS, the server's CA.
    let mut lake = LakeClient::from_channel(lake_query::serve_in_process(server.engine.clone())?);
    // Users are configured: the loader, in the server's own process, gets a token for a
    // principal of its own instead of a user's password.
    if let Some(auth) = server.engine.auth() {
        let expiry_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis()
            .saturating_add(3_600_000);
        lake.set_token(&auth.token(DEMO_LOADER, u64::try_from(expiry_ms)?));
    }
    lake.sql("CREATE SCHEMA IF NOT EXISTS lake.tpch")
        .await
        .context("demo: creating lake.tpch")?;
    let bar = ProgressBar::new(tpch::TABLES.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} tables")?
            .progress_chars("=> "),
    );
    for table in tpch::TABLES {
        bar.set_message(table);
        let name = format!("tpch.{table}");
        let (schema, batches) = tpch::generate(table, scale)?;
        match lake.create_table(&name, schema).await {
            Ok(()) => {}
            Err(lake_sdk::SdkError::Server {
                code: tonic::Code::AlreadyExists,
                ..
            }) => {}
            Err(e) => return Err(e.into()),
        }
        let result = lake
            .append(&name, batches, &format!("demo-tpch-{table}-sf{scale}"))
            .await?;
        tracing::debug!(
            table,
            version = result.version,
            replayed = result.replayed,
            "demo table loaded"
        );
        bar.inc(1);
    }
    bar.finish_and_clear();
    eprintln!("lake: demo data loaded into lake.tpch (TPC-H scale factor {scale})");
    Ok(())
}
