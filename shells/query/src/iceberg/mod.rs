//! The read-only `iceberg` catalog: external Iceberg tables owned by an Iceberg REST
//! catalog, read at exact snapshots (DESIGN.md, "Federation").
//!
//! A query names `iceberg.<namespace>.<table>` (a multi-level namespace is written
//! `iceberg.a.b.t` or `iceberg."a.b".t`), optionally with a time-travel clause. Planning
//! asks the REST catalog for the table's current `metadata-location` (load table with
//! `snapshots=refs` and the last `ETag`), reads that metadata file from object storage
//! (cached by location: a metadata file never changes), and resolves the clause to one
//! snapshot id with [`lake_core::resolve_iceberg`], the Sans-IO rules shared with Lake
//! tables. The pin ([`IcebergPin`]: metadata location and snapshot id) travels in the
//! Flight ticket, so DoGet reads exactly that snapshot without asking the REST catalog
//! again. Scans ([`scan`]) are iceberg-rust's core scan: files are matched to the snapshot's
//! schema by field id, position and equality deletes are applied, files without field ids
//! are read through the table's name mapping, and filters reach the scan only where their
//! translation is exact ([`predicate`]).
//!
//! Metadata tables `<table>$snapshots`, `$history` and `$refs` (Spark's and Trino's names
//! and columns) show the snapshot ids and refs a query can name.

mod predicate;
pub mod rest;
mod scan;
mod stats;
pub mod storage;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::array::{
    ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::catalog::MemTable;
use datafusion::datasource::TableProvider;
use datafusion::datasource::empty::EmptyTable;
use futures::TryStreamExt;
use iceberg::io::{FileIO, FileIOBuilder};
use iceberg::spec::{TableMetadata, TableMetadataRef};
use iceberg::table::Table;
use iceberg::{NamespaceIdent, TableIdent};
use lake_core::{IcebergHistory, IcebergRefKind, TimeTravel, resolve_iceberg};
use serde::{Deserialize, Serialize};

use crate::QueryError;
use crate::iceberg::rest::{Loaded, RestAuth, RestClient};
use crate::sql::{ICEBERG_CATALOG, split_table_key};

/// Default deadline for one REST call or metadata read.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of parsed table metadata kept (measured as its JSON size).
pub const METADATA_CACHE_BYTES: usize = 64 << 20;
/// How a table's metadata is named when the REST catalog sends it inline without a
/// `metadata-location`: this prefix and the SHA-256 of the metadata (base64).
const INLINE_METADATA: &str = "inline-metadata:";
/// Most table pointers (table → metadata location, ETag) kept.
const POINTERS_MAX: usize = 10_000;
/// Deepest namespace nesting followed when listing.
const NAMESPACE_DEPTH_MAX: usize = 16;

/// Where the `iceberg` catalog comes from: a REST catalog and the storage of its files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcebergConfig {
    /// REST catalog base URI (`http(s)://host:port[/path]`, before `/v1`).
    pub uri: String,
    /// Warehouse sent to `GET /v1/config`.
    pub warehouse: String,
    /// Path prefix used when the server's config names none.
    pub prefix: Option<String>,
    /// How Lake authenticates.
    pub auth: RestAuth,
    /// FileIO properties for the table files ([`storage::STORAGE_PROPERTIES`]).
    pub storage: BTreeMap<String, String>,
    /// Deadline for one REST call or metadata read.
    pub timeout: Duration,
    /// Locations (URI or path prefixes, each a directory) where a table's data and delete
    /// files may lie besides the table's own location: where migrated files stay.
    pub allowed_prefixes: Vec<String>,
}

/// The `iceberg` settings as flags and environment give them, each possibly absent.
#[derive(Clone, Debug, Default)]
pub struct IcebergSettings {
    /// `--iceberg-rest-uri` / `LAKE_ICEBERG_REST_URI`.
    pub uri: Option<String>,
    /// `--iceberg-warehouse` / `LAKE_ICEBERG_WAREHOUSE`.
    pub warehouse: Option<String>,
    /// `--iceberg-prefix` / `LAKE_ICEBERG_PREFIX`.
    pub prefix: Option<String>,
    /// `--iceberg-token` / `LAKE_ICEBERG_TOKEN`.
    pub token: Option<String>,
    /// `--iceberg-credential` / `LAKE_ICEBERG_CREDENTIAL`: `client_id:client_secret`.
    pub credential: Option<String>,
    /// `--iceberg-oauth2-server-uri` / `LAKE_ICEBERG_OAUTH2_SERVER_URI`.
    pub oauth2_server_uri: Option<String>,
    /// `--iceberg-scope` / `LAKE_ICEBERG_SCOPE` (default `catalog`).
    pub scope: Option<String>,
    /// `--iceberg-storage KEY=VALUE`, repeated.
    pub storage: Vec<String>,
    /// `--iceberg-timeout-secs` / `LAKE_ICEBERG_TIMEOUT_SECS`.
    pub timeout_secs: Option<u64>,
    /// `--iceberg-allowed-prefix`, repeated / `LAKE_ICEBERG_ALLOWED_PREFIXES`.
    pub allowed_prefixes: Vec<String>,
}

impl IcebergSettings {
    /// The configuration these settings make: `None` when none is set (no `iceberg`
    /// catalog).
    ///
    /// # Errors
    /// A message naming what is missing or wrong: a URI without a warehouse (or the
    /// reverse), any other setting without both, a token together with a credential, a
    /// credential without `:`, an unknown storage property, a zero timeout.
    pub fn config(&self) -> Result<Option<IcebergConfig>, String> {
        let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.is_empty());
        let any = given(&self.uri)
            || given(&self.warehouse)
            || given(&self.prefix)
            || given(&self.token)
            || given(&self.credential)
            || given(&self.oauth2_server_uri)
            || given(&self.scope)
            || !self.storage.is_empty()
            || !self.allowed_prefixes.is_empty()
            || self.timeout_secs.is_some();
        if !any {
            return Ok(None);
        }
        let missing: Vec<&str> = [
            (
                given(&self.uri),
                "the REST catalog URI (--iceberg-rest-uri or LAKE_ICEBERG_REST_URI)",
            ),
            (
                given(&self.warehouse),
                "the warehouse (--iceberg-warehouse or LAKE_ICEBERG_WAREHOUSE)",
            ),
        ]
        .into_iter()
        .filter(|(ok, _)| !ok)
        .map(|(_, what)| what)
        .collect();
        if !missing.is_empty() {
            return Err(format!(
                "the iceberg catalog is partly configured: {} missing; set both the REST catalog URI and the warehouse, or no iceberg setting at all",
                missing.join(" and ")
            ));
        }
        let auth = match (
            self.token.as_deref().filter(|s| !s.is_empty()),
            self.credential.as_deref().filter(|s| !s.is_empty()),
        ) {
            (Some(_), Some(_)) => {
                return Err("give either an Iceberg bearer token (LAKE_ICEBERG_TOKEN) or OAuth2 client credentials (LAKE_ICEBERG_CREDENTIAL), not both".into());
            }
            (Some(token), None) => RestAuth::Token(token.to_string()),
            (None, Some(credential)) => {
                let (client_id, client_secret) = credential.split_once(':').ok_or(
                    "the Iceberg credential must be CLIENT_ID:CLIENT_SECRET (OAuth2 client credentials)",
                )?;
                RestAuth::ClientCredentials {
                    client_id: client_id.to_string(),
                    client_secret: client_secret.to_string(),
                    scope: self
                        .scope
                        .clone()
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| "catalog".into()),
                    server_uri: self.oauth2_server_uri.clone().filter(|s| !s.is_empty()),
                }
            }
            (None, None) if given(&self.oauth2_server_uri) || given(&self.scope) => {
                return Err("an OAuth2 server URI or scope needs OAuth2 client credentials (LAKE_ICEBERG_CREDENTIAL=CLIENT_ID:CLIENT_SECRET)".into());
            }
            (None, None) => RestAuth::None,
        };
        let mut storage = BTreeMap::new();
        for item in &self.storage {
            let (key, value) = item.split_once('=').ok_or_else(|| {
                format!(
                    "Iceberg storage setting {item:?} must be KEY=VALUE, e.g. s3.region=us-east-1"
                )
            })?;
            storage.insert(key.trim().to_string(), value.trim().to_string());
        }
        storage::validate_properties(&storage)?;
        let timeout = match self.timeout_secs {
            Some(0) => return Err("the Iceberg timeout must be at least 1 second".into()),
            Some(secs) => Duration::from_secs(secs),
            None => DEFAULT_TIMEOUT,
        };
        Ok(Some(IcebergConfig {
            uri: self.uri.clone().unwrap_or_default(),
            warehouse: self.warehouse.clone().unwrap_or_default(),
            prefix: self.prefix.clone().filter(|s| !s.is_empty()),
            auth,
            storage,
            timeout,
            allowed_prefixes: self
                .allowed_prefixes
                .iter()
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect(),
        }))
    }
}

/// One Iceberg table read by a query, as planning pinned it. Carried in the ticket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IcebergPin {
    /// Namespace levels.
    pub namespace: Vec<String>,
    /// The table key as the statement names it after the time-travel rewrite
    /// (`orders`, `orders@v<id>`, `orders@r<ref>`, `orders$snapshots`).
    pub key: String,
    /// The metadata file read at planning.
    pub metadata_location: String,
    /// The snapshot read; `None` for a table without snapshots or a metadata table.
    pub snapshot_id: Option<i64>,
}

/// The metadata tables of an Iceberg table, by suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MetadataTable {
    Snapshots,
    History,
    Refs,
}

impl MetadataTable {
    const ALL: [(&'static str, Self); 3] = [
        ("snapshots", Self::Snapshots),
        ("history", Self::History),
        ("refs", Self::Refs),
    ];

    /// `t$snapshots` → (`t`, Snapshots); a name without a known suffix is a table's own.
    fn split(name: &str) -> (&str, Option<Self>) {
        name.rsplit_once('$')
            .and_then(|(table, suffix)| {
                Self::ALL
                    .iter()
                    .find(|(s, _)| *s == suffix)
                    .map(|(_, kind)| (table, Some(*kind)))
            })
            .unwrap_or((name, None))
    }

    /// A hint for a missing table whose name looks like a metadata table.
    fn hint(name: &str) -> String {
        match name.rsplit_once('$') {
            Some((table, _)) => format!(
                " (metadata tables are {})",
                Self::ALL
                    .iter()
                    .map(|(s, _)| format!("{table}${s}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => String::new(),
        }
    }
}

/// A ref of the table, as the metadata file's `refs` map lists it.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct RefEntry {
    snapshot_id: i64,
    #[serde(rename = "type")]
    kind: String,
    min_snapshots_to_keep: Option<i32>,
    max_snapshot_age_ms: Option<i64>,
    max_ref_age_ms: Option<i64>,
}

/// A parsed metadata file.
struct Metadata {
    metadata: TableMetadataRef,
    refs: BTreeMap<String, RefEntry>,
}

impl Metadata {
    fn history(&self) -> IcebergHistory {
        IcebergHistory {
            current_snapshot_id: self.metadata.current_snapshot_id(),
            snapshots: self
                .metadata
                .snapshots()
                .map(|s| (s.snapshot_id(), s.timestamp_ms()))
                .collect(),
            refs: self
                .refs
                .iter()
                .map(|(name, r)| {
                    let kind = if r.kind == "tag" {
                        IcebergRefKind::Tag
                    } else {
                        IcebergRefKind::Branch
                    };
                    (name.clone(), kind, r.snapshot_id)
                })
                .collect(),
            snapshot_log: self
                .metadata
                .history()
                .iter()
                .map(|l| (l.timestamp_ms, l.snapshot_id))
                .collect(),
        }
    }
}

/// Values by key (metadata files by location), the least recently used evicted once the
/// values' sizes add up to more than `limit` bytes (one value is always kept).
struct LruBytes<T> {
    entries: HashMap<String, (Arc<T>, usize, u64)>,
    bytes: usize,
    tick: u64,
    limit: usize,
}

impl<T> LruBytes<T> {
    fn new(limit: usize) -> Self {
        Self {
            entries: HashMap::new(),
            bytes: 0,
            tick: 0,
            limit,
        }
    }

    fn get(&mut self, key: &str) -> Option<Arc<T>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|(value, _, used)| {
            *used = tick;
            value.clone()
        })
    }

    fn insert(&mut self, key: String, value: Arc<T>, bytes: usize) {
        self.tick += 1;
        self.bytes += bytes;
        if let Some((_, old, _)) = self.entries.insert(key, (value, bytes, self.tick)) {
            self.bytes -= old;
        }
        while self.bytes > self.limit && self.entries.len() > 1 {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (_, _, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((_, gone, _)) = self.entries.remove(&oldest) {
                self.bytes -= gone;
            }
        }
    }
}

#[derive(Clone)]
struct Pointer {
    location: String,
    etag: Option<String>,
}

/// The `iceberg` catalog of a Query replica.
pub struct IcebergCatalog {
    rest: RestClient,
    file_io: FileIO,
    timeout: Duration,
    /// [`IcebergConfig::allowed_prefixes`].
    allowed_prefixes: Arc<Vec<String>>,
    pointers: Mutex<HashMap<(Vec<String>, String), Pointer>>,
    metadata: Mutex<LruBytes<Metadata>>,
}

/// `a.b.c` (a schema name in the `iceberg` catalog) → its namespace levels.
pub fn namespace_levels(schema: &str) -> Vec<String> {
    schema.split('.').map(str::to_string).collect()
}

impl IcebergCatalog {
    /// A catalog over `config`; nothing is sent until the first query names it.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for a URI that is not http(s).
    pub fn new(config: &IcebergConfig) -> Result<Self, QueryError> {
        let rest = RestClient::new(
            &config.uri,
            &config.warehouse,
            config.prefix.clone(),
            config.auth.clone(),
            config.timeout,
        )?;
        let file_io = FileIOBuilder::new(Arc::new(storage::ObjectStoreStorageFactory))
            .with_props(config.storage.iter())
            .build();
        Ok(Self {
            rest,
            file_io,
            timeout: config.timeout,
            allowed_prefixes: Arc::new(config.allowed_prefixes.clone()),
            pointers: Mutex::new(HashMap::new()),
            metadata: Mutex::new(LruBytes::new(METADATA_CACHE_BYTES)),
        })
    }

    async fn deadline<T>(
        &self,
        what: impl FnOnce() -> String,
        future: impl std::future::Future<Output = Result<T, QueryError>>,
    ) -> Result<T, QueryError> {
        tokio::time::timeout(self.timeout, future)
            .await
            .unwrap_or_else(|_| {
                Err(QueryError::Timeout(format!(
                    "{} did not finish within {} s (the iceberg catalog's deadline; Lake tables are not affected)",
                    what(),
                    self.timeout.as_secs()
                )))
            })
    }

    /// The metadata file at `location`, from the cache or storage.
    async fn metadata_at(&self, location: &str) -> Result<Arc<Metadata>, QueryError> {
        if let Some(hit) = self.lock_metadata().get(location) {
            return Ok(hit);
        }
        if location.starts_with(INLINE_METADATA) {
            return Err(QueryError::Unavailable(format!(
                "the Iceberg metadata the REST catalog sent inline ({location}) is no longer cached; plan the query again"
            )));
        }
        let metadata = self
            .deadline(
                || format!("reading Iceberg metadata file {location}"),
                async {
                    TableMetadata::read_from(&self.file_io, location)
                        .await
                        .map_err(|e| {
                            // Storage failures may pass; a file that does not parse will not.
                            if storage::is_storage_error(&e) {
                                QueryError::Unavailable(format!(
                                    "cannot read Iceberg metadata file {location}: {e}"
                                ))
                            } else {
                                QueryError::Execution(format!(
                                    "Iceberg metadata file {location} is not valid table metadata: {e}"
                                ))
                            }
                        })
                },
            )
            .await?;
        self.cache_metadata(location, metadata)
    }

    /// Parses and caches `metadata` under `location`.
    fn cache_metadata(
        &self,
        location: &str,
        metadata: TableMetadata,
    ) -> Result<Arc<Metadata>, QueryError> {
        // One serialization gives both the cache weight and the refs (`TableMetadata`
        // keeps its refs map private).
        #[derive(Deserialize)]
        struct Refs {
            #[serde(default)]
            refs: BTreeMap<String, RefEntry>,
        }
        let json = serde_json::to_vec(&metadata)
            .map_err(|e| QueryError::Execution(format!("Iceberg metadata {location}: {e}")))?;
        let Refs { refs } = serde_json::from_slice(&json)
            .map_err(|e| QueryError::Execution(format!("Iceberg refs in {location}: {e}")))?;
        let parsed = Arc::new(Metadata {
            metadata: Arc::new(metadata),
            refs,
        });
        let bytes = json.len();
        self.lock_metadata()
            .insert(location.to_string(), parsed.clone(), bytes);
        Ok(parsed)
    }

    fn lock_metadata(&self) -> std::sync::MutexGuard<'_, LruBytes<Metadata>> {
        self.metadata.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The table's current metadata location: revalidates the cached pointer with the REST
    /// catalog (`snapshots=refs`, `If-None-Match`).
    async fn current_location(
        &self,
        namespace: &[String],
        table: &str,
    ) -> Result<String, QueryError> {
        let key = (namespace.to_vec(), table.to_string());
        let cached = self
            .pointers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        let loaded = self
            .deadline(
                || {
                    format!(
                        "loading iceberg.{}.{table} from the REST catalog at {}",
                        namespace.join("."),
                        self.rest.uri()
                    )
                },
                self.rest.load_table(
                    namespace,
                    table,
                    cached.as_ref().and_then(|p| p.etag.as_deref()),
                    false,
                ),
            )
            .await?;
        // The table's current metadata location and ETag; `None` when not modified.
        let fresh = match loaded {
            Loaded::NotModified => None,
            Loaded::Table {
                metadata_location: Some(location),
                etag,
                ..
            } => Some((location, etag)),
            // No metadata file named: the metadata itself, with every snapshot (the
            // `snapshots=refs` answer leaves out those no ref points to), is the table's
            // state, cached under a name made from its content.
            Loaded::Table {
                metadata_location: None,
                etag,
                ..
            } => Some((self.inline_metadata(namespace, table).await?, etag)),
        };
        match (fresh, cached) {
            (None, Some(pointer)) => Ok(pointer.location),
            (None, None) => Err(QueryError::Execution(format!(
                "Iceberg REST catalog at {} answered 304 Not Modified to a request without If-None-Match",
                self.rest.uri()
            ))),
            (Some((location, etag)), _) => {
                let mut pointers = self.pointers.lock().unwrap_or_else(|p| p.into_inner());
                if pointers.len() >= POINTERS_MAX {
                    pointers.clear();
                }
                pointers.insert(
                    key,
                    Pointer {
                        location: location.clone(),
                        etag,
                    },
                );
                Ok(location)
            }
        }
    }

    /// Loads `namespace.table` with every snapshot and caches the metadata the REST
    /// catalog sends inline; returns the name it is cached under ([`INLINE_METADATA`]).
    async fn inline_metadata(
        &self,
        namespace: &[String],
        table: &str,
    ) -> Result<String, QueryError> {
        let full = self
            .deadline(
                || {
                    format!(
                        "loading iceberg.{}.{table} with every snapshot",
                        namespace.join(".")
                    )
                },
                self.rest.load_table(namespace, table, None, true),
            )
            .await?;
        let Loaded::Table {
            metadata: Some(json),
            ..
        } = full
        else {
            return Err(QueryError::Unavailable(format!(
                "the Iceberg REST catalog at {} sent iceberg.{}.{table} without its metadata",
                self.rest.uri(),
                namespace.join(".")
            )));
        };
        let bytes = serde_json::to_vec(&json)
            .map_err(|e| QueryError::Execution(format!("Iceberg metadata of {table}: {e}")))?;
        let location = format!(
            "{INLINE_METADATA}{}",
            crate::ticket::b64(&<sha2::Sha256 as sha2::Digest>::digest(&bytes))
        );
        let metadata: TableMetadata = serde_json::from_value(json).map_err(|e| {
            QueryError::Execution(format!(
                "the Iceberg REST catalog sent metadata of iceberg.{}.{table} that is not valid table metadata: {e}",
                namespace.join(".")
            ))
        })?;
        self.cache_metadata(&location, metadata)?;
        Ok(location)
    }

    /// Pins `namespace.key` (a table key after the time-travel rewrite) at planning.
    ///
    /// # Errors
    /// [`QueryError::NotFound`] for an unknown table, snapshot id, ref, or a time before
    /// the first snapshot; [`QueryError::InvalidArgument`] for time travel on a metadata
    /// table; [`QueryError::Timeout`] / [`QueryError::Unavailable`] when the REST catalog
    /// or storage does not answer.
    pub async fn pin(&self, namespace: &[String], key: &str) -> Result<IcebergPin, QueryError> {
        let (name, travel) = split_table_key(key);
        let (table, metadata_table) = MetadataTable::split(&name);
        if metadata_table.is_some() && travel != TimeTravel::Latest {
            return Err(QueryError::InvalidArgument(format!(
                "metadata table {name} lists the whole table; it takes no time-travel clause"
            )));
        }
        if namespace.iter().any(String::is_empty) || table.is_empty() {
            return Err(QueryError::InvalidArgument(format!(
                "iceberg.{}.{table:?}: namespace levels and table names must not be empty",
                namespace.join(".")
            )));
        }
        let location = match self.current_location(namespace, table).await {
            Err(QueryError::NotFound(m)) => {
                return Err(QueryError::NotFound(format!(
                    "{m}{}",
                    MetadataTable::hint(&name)
                )));
            }
            other => other?,
        };
        let metadata = self.metadata_at(&location).await?;
        let display = format!("{ICEBERG_CATALOG}.{}.{table}", namespace.join("."));
        let snapshot_id = if metadata_table.is_some() {
            None
        } else {
            resolve_iceberg(&display, &metadata.history(), &travel.for_iceberg())
                .map_err(crate::engine::snapshot_error)?
        };
        Ok(IcebergPin {
            namespace: namespace.to_vec(),
            key: key.to_string(),
            metadata_location: location,
            snapshot_id,
        })
    }

    /// The metadata `pin` was planned with. Metadata the REST catalog sent inline is not
    /// in a file: when it is not cached here (another replica planned the query), the
    /// catalog's current metadata serves if it still lists the pinned snapshot, which never
    /// changes.
    async fn pinned_metadata(
        &self,
        pin: &IcebergPin,
        table: &str,
    ) -> Result<Arc<Metadata>, QueryError> {
        if !pin.metadata_location.starts_with(INLINE_METADATA) {
            return self.metadata_at(&pin.metadata_location).await;
        }
        if let Some(hit) = self.lock_metadata().get(&pin.metadata_location) {
            return Ok(hit);
        }
        let location = self.current_location(&pin.namespace, table).await?;
        let metadata = self.metadata_at(&location).await?;
        match pin.snapshot_id {
            Some(id) if metadata.metadata.snapshot_by_id(id).is_none() => {
                Err(QueryError::NotFound(format!(
                    "iceberg.{}.{table} no longer lists snapshot {id}, which this query was planned at",
                    pin.namespace.join(".")
                )))
            }
            _ => Ok(metadata),
        }
    }

    fn table(
        &self,
        pin: &IcebergPin,
        name: &str,
        metadata: TableMetadataRef,
    ) -> Result<Table, QueryError> {
        let namespace = NamespaceIdent::from_vec(pin.namespace.clone())
            .map_err(|e| QueryError::InvalidArgument(format!("Iceberg namespace: {e}")))?;
        Table::builder()
            .file_io(self.file_io.clone())
            .metadata_location(pin.metadata_location.clone())
            .metadata(metadata)
            .identifier(TableIdent::new(namespace, name.to_string()))
            .readonly(true)
            .runtime(
                iceberg::Runtime::try_current()
                    .map_err(|e| QueryError::Execution(format!("Iceberg runtime: {e}")))?,
            )
            .build()
            .map_err(|e| QueryError::Execution(format!("Iceberg table {name}: {e}")))
    }

    /// The DataFusion table that reads `pin`: the pinned snapshot under its own schema,
    /// or a metadata table.
    ///
    /// # Errors
    /// The metadata file cannot be read; iceberg-rust refuses the snapshot.
    pub async fn provider(&self, pin: &IcebergPin) -> Result<Arc<dyn TableProvider>, QueryError> {
        let (name, _) = split_table_key(&pin.key);
        let (table_name, metadata_table) = MetadataTable::split(&name);
        let metadata = self.pinned_metadata(pin, table_name).await?;
        let table = self.table(pin, table_name, metadata.metadata.clone())?;
        if let Some(kind) = metadata_table {
            return self.metadata_table(&table, &metadata, kind).await;
        }
        let iceberg_error = |e: iceberg::Error| {
            QueryError::Execution(format!(
                "iceberg.{}.{table_name}: {e}",
                pin.namespace.join(".")
            ))
        };
        match pin.snapshot_id {
            Some(id) => {
                let snapshot = metadata.metadata.snapshot_by_id(id).ok_or_else(|| {
                    QueryError::NotFound(format!(
                        "iceberg.{}.{table_name} has no snapshot {id}",
                        pin.namespace.join(".")
                    ))
                })?;
                // The snapshot's own schema: a column renamed later reads under its old name.
                let schema = snapshot
                    .schema(&metadata.metadata)
                    .and_then(|s| iceberg::arrow::schema_to_arrow_schema(&s))
                    .map_err(iceberg_error)?;
                let rows = stats::exact_rows(snapshot);
                Ok(Arc::new(scan::IcebergTable::new(
                    table,
                    id,
                    Arc::new(schema),
                    rows,
                    self.allowed_prefixes.clone(),
                )))
            }
            None => {
                let schema =
                    iceberg::arrow::schema_to_arrow_schema(metadata.metadata.current_schema())
                        .map_err(iceberg_error)?;
                Ok(Arc::new(EmptyTable::new(Arc::new(schema))))
            }
        }
    }

    async fn metadata_table(
        &self,
        table: &Table,
        metadata: &Metadata,
        kind: MetadataTable,
    ) -> Result<Arc<dyn TableProvider>, QueryError> {
        let failed = |e: iceberg::Error| QueryError::Execution(format!("metadata table: {e}"));
        let batch = match kind {
            MetadataTable::Snapshots => {
                let inspect = table.inspect();
                let stream = inspect.snapshots().scan().await.map_err(failed)?;
                let batches: Vec<RecordBatch> = stream.try_collect().await.map_err(failed)?;
                let schema = batches.first().map_or_else(
                    || {
                        iceberg::arrow::schema_to_arrow_schema(&inspect.snapshots().schema())
                            .map(Arc::new)
                    },
                    |b| Ok(b.schema()),
                );
                let schema = schema.map_err(failed)?;
                return Ok(Arc::new(MemTable::try_new(schema, vec![batches])?));
            }
            MetadataTable::History => history_batch(metadata)?,
            MetadataTable::Refs => refs_batch(metadata)?,
        };
        Ok(Arc::new(MemTable::try_new(
            batch.schema(),
            vec![vec![batch]],
        )?))
    }

    /// All namespaces, each as its levels, found by walking `?parent=` from the top.
    ///
    /// # Errors
    /// REST errors, or [`QueryError::Timeout`] past the deadline.
    pub async fn namespaces(&self) -> Result<Vec<Vec<String>>, QueryError> {
        self.deadline(
            || format!("listing namespaces at the REST catalog {}", self.rest.uri()),
            async {
                let mut out = Vec::new();
                let mut frontier = vec![Vec::new()];
                for _ in 0..NAMESPACE_DEPTH_MAX {
                    let mut next = Vec::new();
                    for parent in &frontier {
                        for child in self.rest.list_namespaces(parent).await? {
                            // A server that ignores `parent` returns the top level again.
                            if child.len() == parent.len() + 1 && child.starts_with(parent) {
                                next.push(child);
                            }
                        }
                    }
                    if next.is_empty() {
                        break;
                    }
                    out.extend(next.iter().cloned());
                    frontier = next;
                }
                out.sort();
                out.dedup();
                Ok(out)
            },
        )
        .await
    }

    /// Table names in `namespace`.
    ///
    /// # Errors
    /// As [`Self::namespaces`].
    pub async fn tables(&self, namespace: &[String]) -> Result<Vec<String>, QueryError> {
        self.deadline(
            || format!("listing tables at the REST catalog {}", self.rest.uri()),
            self.rest.list_tables(namespace),
        )
        .await
    }

    /// The current schema of `namespace.table`, as Arrow.
    ///
    /// # Errors
    /// As [`Self::pin`].
    pub async fn current_schema(
        &self,
        namespace: &[String],
        table: &str,
    ) -> Result<Schema, QueryError> {
        let location = self.current_location(namespace, table).await?;
        let metadata = self.metadata_at(&location).await?;
        iceberg::arrow::schema_to_arrow_schema(metadata.metadata.current_schema())
            .map_err(|e| QueryError::Execution(format!("Iceberg schema of {table}: {e}")))
    }
}

fn micros(ms: i64) -> i64 {
    ms.saturating_mul(1000)
}

fn utc_micros() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into()))
}

/// `$history`: made_current_at, snapshot_id, parent_id, is_current_ancestor (Spark's
/// `HistoryTable`), one row per `snapshot-log` entry.
fn history_batch(metadata: &Metadata) -> Result<RecordBatch, QueryError> {
    let table = &metadata.metadata;
    let mut ancestors = std::collections::HashSet::new();
    let mut cursor = table.current_snapshot_id();
    while let Some(id) = cursor {
        if !ancestors.insert(id) {
            break;
        }
        cursor = table
            .snapshot_by_id(id)
            .and_then(|s| s.parent_snapshot_id());
    }
    let log = table.history();
    let schema = Arc::new(Schema::new(vec![
        Field::new("made_current_at", utc_micros(), false),
        Field::new("snapshot_id", DataType::Int64, false),
        Field::new("parent_id", DataType::Int64, true),
        Field::new("is_current_ancestor", DataType::Boolean, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(
            TimestampMicrosecondArray::from_iter_values(log.iter().map(|l| micros(l.timestamp_ms)))
                .with_timezone("+00:00"),
        ),
        Arc::new(Int64Array::from_iter_values(
            log.iter().map(|l| l.snapshot_id),
        )),
        Arc::new(Int64Array::from_iter(log.iter().map(|l| {
            table
                .snapshot_by_id(l.snapshot_id)
                .and_then(|s| s.parent_snapshot_id())
        }))),
        Arc::new(BooleanArray::from_iter(
            log.iter().map(|l| Some(ancestors.contains(&l.snapshot_id))),
        )),
    ];
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// `$refs`: name, type (BRANCH/TAG), snapshot_id, max_reference_age_in_ms,
/// min_snapshots_to_keep, max_snapshot_age_in_ms (Spark's `RefsTable`).
fn refs_batch(metadata: &Metadata) -> Result<RecordBatch, QueryError> {
    let refs: Vec<(&String, &RefEntry)> = metadata.refs.iter().collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("snapshot_id", DataType::Int64, false),
        Field::new("max_reference_age_in_ms", DataType::Int64, true),
        Field::new("min_snapshots_to_keep", DataType::Int32, true),
        Field::new("max_snapshot_age_in_ms", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            refs.iter().map(|(n, _)| n.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(
            refs.iter().map(|(_, r)| r.kind.to_uppercase()),
        )),
        Arc::new(Int64Array::from_iter_values(
            refs.iter().map(|(_, r)| r.snapshot_id),
        )),
        Arc::new(Int64Array::from_iter(
            refs.iter().map(|(_, r)| r.max_ref_age_ms),
        )),
        Arc::new(Int32Array::from_iter(
            refs.iter().map(|(_, r)| r.min_snapshots_to_keep),
        )),
        Arc::new(Int64Array::from_iter(
            refs.iter().map(|(_, r)| r.max_snapshot_age_ms),
        )),
    ];
    Ok(RecordBatch::try_new(schema, columns)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> IcebergSettings {
        IcebergSettings::default()
    }

    #[test]
    fn no_setting_means_no_catalog_and_a_partial_one_names_what_is_missing() {
        assert_eq!(settings().config(), Ok(None));
        let only_uri = IcebergSettings {
            uri: Some("http://127.0.0.1:8181".into()),
            ..settings()
        };
        let err = only_uri.config().expect_err("partial");
        assert!(err.contains("LAKE_ICEBERG_WAREHOUSE"), "{err}");
        assert!(!err.contains("LAKE_ICEBERG_REST_URI"), "{err}");
        let only_token = IcebergSettings {
            token: Some("t".into()),
            ..settings()
        };
        let err = only_token.config().expect_err("partial");
        assert!(
            err.contains("LAKE_ICEBERG_REST_URI") && err.contains("LAKE_ICEBERG_WAREHOUSE"),
            "{err}"
        );
        let full = IcebergSettings {
            uri: Some("http://127.0.0.1:8181".into()),
            warehouse: Some("w".into()),
            credential: Some("id:secret".into()),
            storage: vec!["s3.region=us-east-1".into()],
            ..settings()
        };
        let config = full.config().expect("valid").expect("configured");
        assert_eq!(
            config.auth,
            RestAuth::ClientCredentials {
                client_id: "id".into(),
                client_secret: "secret".into(),
                scope: "catalog".into(),
                server_uri: None
            }
        );
        assert_eq!(
            config.storage.get("s3.region").map(String::as_str),
            Some("us-east-1")
        );
        for (broken, needle) in [
            (
                IcebergSettings {
                    token: Some("t".into()),
                    ..full.clone()
                },
                "not both",
            ),
            (
                IcebergSettings {
                    credential: Some("no-colon".into()),
                    ..full.clone()
                },
                "CLIENT_ID:CLIENT_SECRET",
            ),
            (
                IcebergSettings {
                    storage: vec!["s3.regoin=x".into()],
                    ..full.clone()
                },
                "s3.regoin",
            ),
            (
                IcebergSettings {
                    timeout_secs: Some(0),
                    ..full.clone()
                },
                "at least 1 second",
            ),
        ] {
            let err = broken.config().expect_err(needle);
            assert!(err.contains(needle), "{err}");
        }
    }

    #[test]
    fn the_metadata_cache_keeps_its_byte_bound_by_evicting_the_least_recently_used() {
        let mut cache: LruBytes<u32> = LruBytes::new(100);
        cache.insert("a".into(), Arc::new(1), 40);
        cache.insert("b".into(), Arc::new(2), 40);
        assert_eq!(cache.get("a").as_deref(), Some(&1)); // b is now the oldest
        cache.insert("c".into(), Arc::new(3), 40);
        assert!(cache.get("b").is_none());
        assert_eq!(cache.get("a").as_deref(), Some(&1));
        assert_eq!(cache.get("c").as_deref(), Some(&3));
        assert_eq!(cache.bytes, 80);
        // Re-inserting a key replaces its size; one value larger than the bound stays alone.
        cache.insert("c".into(), Arc::new(4), 500);
        assert_eq!(cache.entries.len(), 1);
        assert_eq!(cache.bytes, 500);
        assert_eq!(cache.get("c").as_deref(), Some(&4));
    }

    #[test]
    fn metadata_table_names_split_and_other_names_stay_whole() {
        assert_eq!(
            MetadataTable::split("orders$refs"),
            ("orders", Some(MetadataTable::Refs))
        );
        assert_eq!(MetadataTable::split("orders"), ("orders", None));
        // A name with an unknown suffix is a table's own name (Iceberg allows `$`).
        assert_eq!(MetadataTable::split("we$rd"), ("we$rd", None));
        assert!(MetadataTable::hint("orders$files").contains("orders$snapshots"));
    }
}
