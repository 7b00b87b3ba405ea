//! The distributed processes: `lake metasrv` (one node of a leader-elected Metasrv group on
//! DynamoDB or RocksDB) and `lake query` (a stateless Query replica over an object-store
//! warehouse), plus `lake meta init`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use lake_core::ElectionConfig;
use lake_metasrv::{DynamoStore, EventStore, Metasrv, MetasrvClient, RocksStore};
use lake_query::TicketKey;

use crate::embedded;

/// Where a Metasrv node keeps the log and the lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreUrl {
    /// `dynamodb://TABLE`: a DynamoDB table created by `lake meta init`.
    Dynamo(String),
    /// `rocksdb://PATH`: a local RocksDB directory (one node only: RocksDB locks it).
    Rocks(PathBuf),
}

/// Checks a DynamoDB table name (DynamoDB's rule: 3 to 255 of `[A-Za-z0-9_.-]`).
///
/// # Errors
/// A message naming the table and the allowed form.
pub fn validate_table_name(table: &str) -> Result<(), String> {
    let valid = (3..=255).contains(&table.len())
        && table
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "invalid DynamoDB table name {table:?}: use 3 to 255 letters, digits, '_', '.' or '-'"
        ))
    }
}

impl std::str::FromStr for StoreUrl {
    type Err = String;

    fn from_str(url: &str) -> Result<Self, String> {
        if let Some(table) = url.strip_prefix("dynamodb://") {
            validate_table_name(table)?;
            return Ok(Self::Dynamo(table.to_string()));
        }
        if let Some(path) = url.strip_prefix("rocksdb://") {
            if path.is_empty() {
                return Err("rocksdb:// needs a directory: rocksdb://PATH".into());
            }
            return Ok(Self::Rocks(PathBuf::from(path)));
        }
        Err(format!(
            "unsupported store {url:?}: use dynamodb://TABLE or rocksdb://PATH"
        ))
    }
}

/// Settings of one `lake metasrv` process (its command-line flags).
#[derive(Clone, Debug, clap::Args)]
pub struct MetasrvOptions {
    /// `dynamodb://TABLE` (see `lake meta init`) or `rocksdb://PATH`.
    #[arg(long, env = "LAKE_METASRV_STORE")]
    pub store: StoreUrl,
    /// gRPC listen address.
    #[arg(long, env = "LAKE_METASRV_LISTEN", default_value = "127.0.0.1:7000")]
    pub listen: SocketAddr,
    /// HOST:PORT other nodes reach this one at (default: the listen address).
    #[arg(long, env = "LAKE_METASRV_ADVERTISE")]
    pub advertise: Option<String>,
    /// Node id, unique and stable across restarts (default: the advertised address).
    #[arg(long, env = "LAKE_METASRV_NODE")]
    pub node: Option<String>,
    /// DynamoDB endpoint override, e.g. http://127.0.0.1:5000 (default: the standard
    /// AWS configuration, including AWS_ENDPOINT_URL).
    #[arg(long, env = "LAKE_DYNAMODB_ENDPOINT")]
    pub dynamodb_endpoint: Option<String>,
    /// Leader lease length in ms.
    #[arg(long, default_value_t = 5_000)]
    pub lease_ms: i64,
    /// How often the leader renews (and followers re-read) the lease, in ms.
    #[arg(long, default_value_t = 1_000)]
    pub renew_interval_ms: i64,
    /// Bound on how much two nodes' clocks disagree about one lease period, in ms.
    #[arg(long, default_value_t = 500)]
    pub clock_bound_ms: i64,
    /// This node's certificate chain (PEM, leaf first): serve gRPC over TLS.
    #[arg(long, env = "LAKE_METASRV_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, env = "LAKE_METASRV_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// CA certificate(s) (PEM) that callers' certificates must chain to (mutual TLS): only
    /// Query replicas, operators and other nodes holding such a certificate can call this
    /// node. Also the CA this node trusts for other nodes' certificates when it forwards
    /// to the leader (where it presents --tls-cert).
    #[arg(long, env = "LAKE_METASRV_TLS_CLIENT_CA", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    /// Listen on a non-loopback address without mutual TLS: anyone who reaches the port
    /// can drop tables and rewrite commit pointers. For networks where something else
    /// guards it.
    #[arg(long, env = "LAKE_METASRV_INSECURE_NO_TLS")]
    pub insecure_no_tls: bool,
    #[command(flatten)]
    pub retention: RetentionArgs,
}

/// How a client reaches Metasrv over TLS (`https://` endpoints), as Query replicas and
/// `lake meta status` do.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct MetasrvTlsArgs {
    /// CA certificate(s) (PEM) Metasrv's certificate must chain to (default: the system's
    /// roots).
    #[arg(long, env = "LAKE_METASRV_CA")]
    pub metasrv_ca: Option<PathBuf>,
    /// Client certificate chain (PEM) presented to a Metasrv with mutual TLS.
    #[arg(long, env = "LAKE_METASRV_CERT", requires = "metasrv_key")]
    pub metasrv_cert: Option<PathBuf>,
    /// The private key of --metasrv-cert (PEM).
    #[arg(long, env = "LAKE_METASRV_KEY", requires = "metasrv_cert")]
    pub metasrv_key: Option<PathBuf>,
}

impl MetasrvTlsArgs {
    /// Connects to the Metasrv `endpoints` (comma-separated) with these settings: TLS
    /// settings apply to `https://` endpoints; any given for `http://` ones is an error.
    ///
    /// # Errors
    /// Unreadable or malformed PEM files, or Metasrv unreachable.
    pub async fn connect(&self, endpoints: &str) -> anyhow::Result<MetasrvClient> {
        let given = self.metasrv_ca.is_some() || self.metasrv_cert.is_some();
        let tls = if given {
            Some(lake_metasrv::ClientTls::load(
                self.metasrv_ca.as_deref(),
                self.metasrv_cert.as_deref(),
                self.metasrv_key.as_deref(),
                ["--metasrv-ca", "--metasrv-cert", "--metasrv-key"],
            )?)
        } else {
            None
        };
        MetasrvClient::connect_with(endpoints, tls.as_ref())
            .await
            .with_context(|| format!("connecting to Metasrv at {endpoints}"))
    }
}

/// Opens the store `url` names.
///
/// # Errors
/// The store cannot be opened (missing DynamoDB table, locked RocksDB directory).
pub async fn open_store(
    url: &StoreUrl,
    dynamodb_endpoint: Option<&str>,
) -> anyhow::Result<Arc<dyn EventStore>> {
    Ok(match url {
        StoreUrl::Dynamo(table) => Arc::new(DynamoStore::connect(table, dynamodb_endpoint).await?),
        StoreUrl::Rocks(path) => {
            std::fs::create_dir_all(path)
                .with_context(|| format!("creating {}", path.display()))?;
            Arc::new(RocksStore::open(path).with_context(|| {
                format!(
                    "opening RocksDB in {} (is another node using it?)",
                    path.display()
                )
            })?)
        }
    })
}

/// Runs one Metasrv node until `shutdown` resolves, then resigns (releasing the lease).
/// Prints `lake: metasrv ready on ADDR` to stderr once it listens.
///
/// # Errors
/// Bad settings, an unusable store, or a taken port.
pub async fn run_metasrv(
    options: MetasrvOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    // Everything that can be checked without side effects comes first.
    if options.advertise.is_none() && options.listen.ip().is_unspecified() {
        bail!(
            "--listen {} is a wildcard address: give --advertise HOST:PORT, where other nodes reach this one",
            options.listen
        );
    }
    let mut election = ElectionConfig {
        node: String::new(),
        address: String::new(),
        lease_ms: options.lease_ms,
        renew_interval_ms: options.renew_interval_ms,
        clock_bound_ms: options.clock_bound_ms,
        // A RocksDB directory is locked by the one process that opened it: that node is
        // alone. Nodes over one DynamoDB table contend.
        exclusive: matches!(options.store, StoreUrl::Rocks(_)),
    };
    election.validate().map_err(|message| {
        anyhow::anyhow!(
            "{}",
            message
                .replace("renew_interval_ms", "--renew-interval-ms")
                .replace("clock_bound_ms", "--clock-bound-ms")
                .replace("lease_ms", "--lease-ms")
        )
    })?;
    if !options.listen.ip().is_loopback()
        && options.tls_client_ca.is_none()
        && !options.insecure_no_tls
    {
        bail!(
            "refusing to serve Metasrv on {} without mutual TLS: anyone who reaches it could drop tables and rewrite commit pointers. Give --tls-cert, --tls-key and --tls-client-ca (the CA of the certificates Query replicas and operators present), listen on a loopback address, or pass --insecure-no-tls if something else guards this network",
            options.listen
        );
    }
    let tls = match (&options.tls_cert, &options.tls_key) {
        (Some(cert), Some(key)) => Some(lake_metasrv::ServerTls::load(
            cert,
            key,
            options.tls_client_ca.as_deref(),
            ["--tls-cert", "--tls-key", "--tls-client-ca"],
        )?),
        _ => None,
    };
    // Forwarding to the leader: the cluster's CA, and this node's certificate as a client.
    let peer_tls = match (&options.tls_cert, &options.tls_key) {
        (Some(cert), Some(key)) => Some(lake_metasrv::ClientTls::load(
            options.tls_client_ca.as_deref(),
            Some(cert),
            Some(key),
            ["--tls-client-ca", "--tls-cert", "--tls-key"],
        )?),
        _ => None,
    };
    let store = open_store(&options.store, options.dynamodb_endpoint.as_deref()).await?;
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("binding Metasrv on {}", options.listen))?;
    let bound = listener.local_addr()?;
    let advertise = options.advertise.unwrap_or_else(|| bound.to_string());
    election.node = options.node.unwrap_or_else(|| advertise.clone());
    election.address = advertise.clone();
    let node = election.node.clone();
    let mut metasrv = Metasrv::start_node_with(store, election, options.retention.retention()?)?;
    if let Some(peer_tls) = peer_tls {
        metasrv = metasrv.with_peer_tls(peer_tls);
    }
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn({
        let metasrv = metasrv.clone();
        async move {
            metasrv
                .serve(listener, tls.as_ref(), async {
                    let _ = stop_rx.await;
                })
                .await
        }
    });
    tracing::info!(%node, %advertise, tls = options.tls_cert.is_some(), mutual = options.tls_client_ca.is_some(), "metasrv node started");
    eprintln!("lake: metasrv ready on {bound}");
    shutdown.await;
    metasrv.shutdown().await;
    let _ = stop_tx.send(());
    server.await??;
    Ok(())
}

/// Settings of one `lake query` process (its command-line flags).
#[derive(Clone, Debug, clap::Args)]
pub struct QueryOptions {
    /// Metasrv endpoints, comma-separated (http://HOST:PORT or https://HOST:PORT, ...).
    #[arg(long, env = "LAKE_METASRV")]
    pub metasrv: String,
    #[command(flatten)]
    pub metasrv_tls: MetasrvTlsArgs,
    /// Where tables live: s3://bucket/prefix (AWS settings from the standard
    /// environment: AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, ...) or a path.
    #[arg(long, env = "LAKE_WAREHOUSE")]
    pub warehouse: String,
    /// Where the managed stages of FILE bytes live, one prefix per table under it:
    /// s3://bucket/prefix or file:///path (default: <warehouse>/stage). SDK clients learn
    /// each table's stage from the replica and need only object-store credentials.
    #[arg(long, env = "LAKE_STAGE_ROOT")]
    pub stage_root: Option<String>,
    /// Flight SQL listen address.
    #[arg(long, env = "LAKE_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,
    /// File with the ticket key all replicas share (created if absent), so a ticket
    /// planned on one replica is served by any.
    #[arg(long, env = "LAKE_TICKET_KEY_FILE")]
    pub ticket_key_file: Option<PathBuf>,
    #[command(flatten)]
    pub iceberg: IcebergArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub maintenance: MaintenanceArgs,
    #[command(flatten)]
    pub auth: AuthArgs,
}

/// Who may call a Query replica (see `lake_query::auth`).
#[derive(Clone, Debug, clap::Args)]
pub struct AuthArgs {
    /// Users file (NAME:argon2id-hash lines, written by `lake user add`): clients must log
    /// in (Flight Handshake with Basic credentials) and send the bearer token they get.
    /// Without it, every client is let in, which the server allows only on a loopback
    /// address.
    #[arg(long, env = "LAKE_USERS_FILE")]
    pub users_file: Option<PathBuf>,
    /// An identity provider's JSON Web Key Set (RFC 7517 `{"keys": [...]}`, public keys
    /// only): its JWTs are accepted as bearer tokens, the user being the --jwt-user-claim
    /// claim. With it, a users file is optional.
    #[arg(long, env = "LAKE_JWKS_FILE")]
    pub jwks_file: Option<PathBuf>,
    /// Required `iss` of JWTs.
    #[arg(long, env = "LAKE_JWT_ISSUER", requires = "jwks_file")]
    pub jwt_issuer: Option<String>,
    /// Required `aud` of JWTs (one of their audiences).
    #[arg(long, env = "LAKE_JWT_AUDIENCE", requires = "jwks_file")]
    pub jwt_audience: Option<String>,
    /// The JWT claim that names the user.
    #[arg(long, env = "LAKE_JWT_USER_CLAIM", default_value = "sub")]
    pub jwt_user_claim: String,
    /// How long a login's bearer token is valid, in seconds.
    #[arg(long, env = "LAKE_TOKEN_TTL_SECS", default_value_t = 12 * 3600)]
    pub token_ttl_secs: u64,
    /// Serve a non-loopback address without a users file: anyone who reaches the port
    /// can read, write and drop every table. For networks where something else guards it.
    #[arg(long, env = "LAKE_INSECURE_NO_AUTH")]
    pub insecure_no_auth: bool,
    /// Certificate chain (PEM, leaf first): serve Flight SQL over TLS (clients connect to
    /// grpc+tls:// or https://).
    #[arg(long, env = "LAKE_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, env = "LAKE_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve a non-loopback address without TLS: passwords, tokens and rows cross the
    /// network in clear text. For networks encrypted otherwise.
    #[arg(long, env = "LAKE_INSECURE_NO_TLS")]
    pub insecure_no_tls: bool,
}

impl AuthArgs {
    /// The users these flags name, loaded.
    ///
    /// # Errors
    /// The users file is missing, malformed, or lists nobody.
    pub fn users(&self) -> anyhow::Result<Option<lake_query::auth::Users>> {
        let Some(path) = &self.users_file else {
            return Ok(None);
        };
        let users = lake_query::auth::Users::load(path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(meta) = std::fs::metadata(path)
                && meta.permissions().mode() & 0o077 != 0
            {
                tracing::warn!(
                    users_file = %path.display(),
                    mode = format!("{:o}", meta.permissions().mode() & 0o777),
                    "the users file is readable by other users of this machine (its hashes can be attacked offline): chmod 600 it"
                );
            }
        }
        if users.is_empty() {
            anyhow::bail!(
                "users file {} lists no users: add one with `lake user add NAME --users-file {}`",
                path.display(),
                path.display()
            );
        }
        if !users.has_admin() {
            tracing::warn!(
                users_file = %path.display(),
                "no user is marked admin: logins work, but nobody can create schemas or GRANT access (mark one with `lake user add NAME --admin`)"
            );
        }
        Ok(Some(users))
    }

    /// The replica's authentication and TLS settings.
    ///
    /// # Errors
    /// As [`AuthArgs::users`]; an unreadable or malformed certificate or key.
    pub fn options(&self) -> anyhow::Result<embedded::AuthOptions> {
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(lake_metasrv::ServerTls::load(
                cert,
                key,
                None,
                ["--tls-cert", "--tls-key", ""],
            )?),
            _ => None,
        };
        let jwks = match &self.jwks_file {
            Some(path) => Some(std::sync::Arc::new(lake_query::jwt::Jwks::load(
                path,
                lake_query::jwt::JwtSettings {
                    issuer: self.jwt_issuer.clone(),
                    audience: self.jwt_audience.clone(),
                    user_claim: self.jwt_user_claim.clone(),
                },
            )?)),
            None => None,
        };
        Ok(embedded::AuthOptions {
            users: self.users()?,
            jwks,
            token_ttl: std::time::Duration::from_secs(self.token_ttl_secs.max(1)),
            insecure_no_auth: self.insecure_no_auth,
            tls,
            insecure_no_tls: self.insecure_no_tls,
        })
    }
}

/// How much of each table's history Metasrv keeps (see `lake_core::retention`): time
/// travel reaches the versions kept, and an append retried with a kept operation id
/// commits nothing new. What expires leaves Metasrv's memory, its store (at the next
/// checkpoint) and every Query replica's cache.
#[derive(Clone, Debug, clap::Args)]
pub struct RetentionArgs {
    /// Versions committed longer ago than this many hours expire (the latest version of a
    /// table never does).
    #[arg(long, env = "LAKE_HISTORY_MAX_AGE_HOURS", default_value_t = 168)]
    pub history_max_age_hours: u64,
    /// At most this many versions are kept per table (at least 1). Each costs about 0.5 KB
    /// of memory in Metasrv and in every Query replica.
    #[arg(long, env = "LAKE_HISTORY_MAX_VERSIONS", default_value_t = 1_000)]
    pub history_max_versions: u64,
    /// Operation ids (append idempotency keys) older than this many hours expire: an
    /// append retried with an expired id commits again, as a new version.
    #[arg(long, env = "LAKE_OPERATION_ID_MAX_AGE_HOURS", default_value_t = 168)]
    pub operation_id_max_age_hours: u64,
    /// At most this many operation ids are kept per table (at least 1). Each outliving its
    /// version costs about 150 bytes of memory in Metasrv and in every Query replica.
    #[arg(long, env = "LAKE_OPERATION_IDS_MAX", default_value_t = 100_000)]
    pub operation_ids_max: u64,
}

impl RetentionArgs {
    /// The windows these flags give.
    ///
    /// # Errors
    /// `--history-max-versions` or `--operation-ids-max` is 0, or an age does not fit in
    /// milliseconds.
    pub fn retention(&self) -> anyhow::Result<lake_core::Retention> {
        let ms = |hours: u64, flag: &str| {
            i64::try_from(hours)
                .ok()
                .and_then(|h| h.checked_mul(3_600_000))
                .with_context(|| format!("{flag} {hours} is too large"))
        };
        let retention = lake_core::Retention {
            version_max_age_ms: ms(self.history_max_age_hours, "--history-max-age-hours")?,
            versions_max: self.history_max_versions,
            operation_max_age_ms: ms(
                self.operation_id_max_age_hours,
                "--operation-id-max-age-hours",
            )?,
            operations_max: self.operation_ids_max,
        };
        if self.history_max_versions == 0 {
            bail!("--history-max-versions must be at least 1: the latest version is always kept");
        }
        if self.operation_ids_max == 0 {
            bail!(
                "--operation-ids-max must be at least 1: an id forgotten at once would make every retried append commit again"
            );
        }
        retention.validate().map_err(anyhow::Error::msg)?;
        Ok(retention)
    }
}

/// How a Query replica keeps its tables' files in shape under streaming writes (see
/// `lake_query::dataset::Maintenance`): compaction of small fragments, removal of the
/// files only expired versions reference. `OPTIMIZE ns.t` runs both by hand.
#[derive(Clone, Debug, clap::Args)]
pub struct MaintenanceArgs {
    /// An append that leaves a table with at least this many small fragments (under
    /// --compact-target-rows rows) starts a compaction of it (0: only OPTIMIZE compacts).
    #[arg(long, env = "LAKE_COMPACT_AT_SMALL_FRAGMENTS", default_value_t = lake_query::dataset::Maintenance::DEFAULT.compact_at_small_fragments)]
    pub compact_at_small_fragments: usize,
    /// Rows a fragment holds before compaction leaves it alone.
    #[arg(long, env = "LAKE_COMPACT_TARGET_ROWS", default_value_t = lake_query::dataset::Maintenance::DEFAULT.target_rows_per_fragment)]
    pub compact_target_rows: usize,
    /// Every this many versions of a table an append also starts a cleanup of its expired
    /// versions' files (0: only after a compaction).
    #[arg(long, env = "LAKE_CLEANUP_EVERY_VERSIONS", default_value_t = lake_query::dataset::Maintenance::DEFAULT.cleanup_every_versions)]
    pub cleanup_every_versions: u64,
    /// Files of a version expired from the history stay at least this many seconds after
    /// this replica first sees it expired, so queries reading it when it expired finish.
    #[arg(long, env = "LAKE_CLEANUP_GRACE_SECS", default_value_t = 3_600)]
    pub cleanup_grace_secs: u64,
    /// How often this replica looks for dropped tables whose files it can remove, in
    /// seconds (0: never).
    #[arg(long, env = "LAKE_DROPPED_SCAN_SECS", default_value_t = 600)]
    pub dropped_scan_secs: u64,
    /// A dropped table's files stay this many seconds after a replica first finds it
    /// dropped, so queries that opened it before the drop finish.
    #[arg(long, env = "LAKE_DROPPED_GRACE_SECS", default_value_t = 3_600)]
    pub dropped_grace_secs: u64,
    /// A stage object no retained version names is removed by `VACUUM` / `lake gc` only
    /// once it was last written this many seconds ago, so an upload whose append has not
    /// committed yet is never taken.
    #[arg(long, env = "LAKE_STAGE_GC_GRACE_SECS", default_value_t = 86_400)]
    pub stage_gc_grace_secs: u64,
}

impl MaintenanceArgs {
    /// The maintenance these flags give.
    ///
    /// # Errors
    /// `--compact-target-rows` is 0, or a time does not fit in milliseconds.
    pub fn maintenance(&self) -> anyhow::Result<lake_query::dataset::Maintenance> {
        if self.compact_target_rows == 0 {
            bail!("--compact-target-rows must be at least 1");
        }
        let ms = |secs: u64, flag: &str| {
            i64::try_from(secs)
                .ok()
                .and_then(|s| s.checked_mul(1_000))
                .with_context(|| format!("{flag} {secs} is too large"))
        };
        Ok(lake_query::dataset::Maintenance {
            compact_at_small_fragments: self.compact_at_small_fragments,
            target_rows_per_fragment: self.compact_target_rows,
            cleanup_every_versions: self.cleanup_every_versions,
            cleanup_grace_ms: ms(self.cleanup_grace_secs, "--cleanup-grace-secs")?,
            dropped_scan_interval_ms: self
                .dropped_scan_secs
                .checked_mul(1_000)
                .context("--dropped-scan-secs is too large")?,
            dropped_grace_ms: ms(self.dropped_grace_secs, "--dropped-grace-secs")?,
            stage_gc_grace_ms: ms(self.stage_gc_grace_secs, "--stage-gc-grace-secs")?,
        })
    }
}

/// What one statement may use on a Query replica (see `lake_query::Limits`).
#[derive(Clone, Debug, clap::Args)]
pub struct LimitArgs {
    /// Memory one statement's joins, aggregates and sorts may hold, in MiB; past it they
    /// spill to disk or the statement fails with RESOURCE_EXHAUSTED.
    #[arg(long, env = "LAKE_STATEMENT_MEMORY_MIB", default_value_t = 4096)]
    pub statement_memory_mib: usize,
    /// Disk all spilling statements may use at once, in MiB (0: no spilling).
    #[arg(long, env = "LAKE_SPILL_MIB", default_value_t = 16384)]
    pub spill_mib: u64,
    /// Longest a statement may run, in seconds; past it, it is cancelled with
    /// DEADLINE_EXCEEDED (a write then commits nothing).
    #[arg(long, env = "LAKE_STATEMENT_TIMEOUT_SECS", default_value_t = 600)]
    pub statement_timeout_secs: u64,
    /// Statements one user (or all clients without a login, together) may run at once on
    /// this replica; more are refused with RESOURCE_EXHAUSTED.
    #[arg(long, env = "LAKE_STATEMENTS_PER_USER", default_value_t = lake_query::running::STATEMENTS_PER_PRINCIPAL_DEFAULT)]
    pub statements_per_user: usize,
}

impl LimitArgs {
    /// The limits these flags give.
    pub fn limits(&self) -> lake_query::Limits {
        lake_query::Limits {
            statement_memory_bytes: self.statement_memory_mib.saturating_mul(1 << 20),
            spill_bytes: self.spill_mib.saturating_mul(1 << 20),
            statement_timeout: std::time::Duration::from_secs(self.statement_timeout_secs),
            statements_per_principal: self.statements_per_user,
        }
    }
}

/// The read-only `iceberg` catalog: external Iceberg tables behind an Iceberg REST
/// catalog. Set none of these for no `iceberg` catalog; the URI and the warehouse are
/// required together.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct IcebergArgs {
    /// Iceberg REST catalog URI (before /v1), e.g. http://127.0.0.1:8181.
    #[arg(long, env = "LAKE_ICEBERG_REST_URI")]
    pub iceberg_rest_uri: Option<String>,
    /// Warehouse the REST catalog serves (sent to GET /v1/config).
    #[arg(long, env = "LAKE_ICEBERG_WAREHOUSE")]
    pub iceberg_warehouse: Option<String>,
    /// Path prefix when the server's /v1/config names none.
    #[arg(long, env = "LAKE_ICEBERG_PREFIX")]
    pub iceberg_prefix: Option<String>,
    /// Bearer token for the REST catalog.
    #[arg(long, env = "LAKE_ICEBERG_TOKEN", hide_env_values = true)]
    pub iceberg_token: Option<String>,
    /// OAuth2 client credentials CLIENT_ID:CLIENT_SECRET, exchanged for a token at the
    /// catalog's /v1/oauth/tokens (or --iceberg-oauth2-server-uri).
    #[arg(long, env = "LAKE_ICEBERG_CREDENTIAL", hide_env_values = true)]
    pub iceberg_credential: Option<String>,
    /// OAuth2 token endpoint other than <uri>/v1/oauth/tokens.
    #[arg(long, env = "LAKE_ICEBERG_OAUTH2_SERVER_URI")]
    pub iceberg_oauth2_server_uri: Option<String>,
    /// OAuth2 scope (default: catalog).
    #[arg(long, env = "LAKE_ICEBERG_SCOPE")]
    pub iceberg_scope: Option<String>,
    /// Storage setting for the table files, KEY=VALUE, repeatable: s3.endpoint,
    /// s3.region, s3.access-key-id, s3.secret-access-key, s3.session-token,
    /// s3.path-style-access (AWS_* environment variables apply otherwise).
    #[arg(long, env = "LAKE_ICEBERG_STORAGE", value_delimiter = ',')]
    pub iceberg_storage: Vec<String>,
    /// Deadline in seconds for one REST call or metadata read (default 10).
    #[arg(long, env = "LAKE_ICEBERG_TIMEOUT_SECS")]
    pub iceberg_timeout_secs: Option<u64>,
    /// A location (URI or path of a directory) where table files may lie besides each
    /// table's own location, repeatable: where migrated data files stay. Lake refuses to
    /// read a file anywhere else.
    #[arg(long, env = "LAKE_ICEBERG_ALLOWED_PREFIXES", value_delimiter = ',')]
    pub iceberg_allowed_prefix: Vec<String>,
}

impl IcebergArgs {
    /// The configuration these flags give: `None` when none is set.
    ///
    /// # Errors
    /// A partial or inconsistent configuration, naming what is missing or wrong.
    pub fn config(&self) -> anyhow::Result<Option<lake_query::iceberg::IcebergConfig>> {
        lake_query::iceberg::IcebergSettings {
            uri: self.iceberg_rest_uri.clone(),
            warehouse: self.iceberg_warehouse.clone(),
            prefix: self.iceberg_prefix.clone(),
            token: self.iceberg_token.clone(),
            credential: self.iceberg_credential.clone(),
            oauth2_server_uri: self.iceberg_oauth2_server_uri.clone(),
            scope: self.iceberg_scope.clone(),
            storage: self.iceberg_storage.clone(),
            timeout_secs: self.iceberg_timeout_secs,
            allowed_prefixes: self.iceberg_allowed_prefix.clone(),
        }
        .config()
        .map_err(|e| anyhow::anyhow!(e))
    }
}

/// Runs one Query replica until `shutdown` resolves. Prints `lake: ready on ADDR` to
/// stderr once it listens.
///
/// # Errors
/// Metasrv is unreachable, the warehouse URI is unusable, or the port is taken.
pub async fn run_query(
    options: QueryOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let iceberg = options.iceberg.config()?;
    let warehouse = options.warehouse.trim_end_matches('/').to_string();
    if let Some((scheme, _)) = warehouse.split_once("://")
        && !matches!(scheme, "s3" | "file")
    {
        bail!(
            "unsupported warehouse {warehouse:?}: use s3://BUCKET/PREFIX, file:///PATH or a local path"
        );
    }
    if !warehouse.contains("://") {
        std::fs::create_dir_all(&warehouse)
            .with_context(|| format!("creating warehouse directory {warehouse}"))?;
    }
    let key = match &options.ticket_key_file {
        Some(path) => embedded::ticket_key(path)?,
        None => {
            tracing::warn!("no --ticket-key-file: tickets from this replica are valid only here");
            let key: Vec<u8> = (0..32).map(|_| rand::random::<u8>()).collect();
            TicketKey::new(&key)?
        }
    };
    let client = options.metasrv_tls.connect(&options.metasrv).await?;
    let replica = embedded::start_query(
        client,
        &warehouse,
        &embedded::ReplicaOptions {
            stage_root: options.stage_root.clone(),
            iceberg,
            limits: options.limits.limits(),
            maintenance: options.maintenance.maintenance()?,
            auth: options.auth.options()?,
            retention: lake_core::Retention::DEFAULT,
        },
        key,
        options.listen,
        shutdown,
    )
    .await?;
    let addr = replica.addr;
    tracing::info!(%addr, %warehouse, "query replica: Flight SQL listening");
    eprintln!("lake: ready on {addr}");
    replica.server.await??;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let terminate = async {
        #[cfg(unix)]
        if let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            term.recv().await;
            return;
        }
        std::future::pending::<()>().await;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}
