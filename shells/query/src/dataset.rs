//! Lance datasets: opening a table at a pinned version and appending through Metasrv.
//!
//! This is the one module that names `lance`. Lance's own commit path ends in Metasrv:
//! [`MetasrvManifests`] implements lance-table's `ExternalManifestStore`, so Lance's
//! `put_if_not_exists(version)` becomes Metasrv's compare-and-swap of the commit pointer
//! from `version - 1` to `version`, and `put_if_exists` (the move of the manifest from its
//! staging path to its final path) becomes `FinalizeManifest`. Readers resolve manifests
//! from the catalog cache ([`PinnedManifests`]) and never call Metasrv.
//!
//! Manifest paths are stored relative to the dataset root (`_versions/…`), so a data root
//! can move without rewriting the registry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use lake_core::{Digest, ManifestRef, TableMeta, TableState, VersionRecord};
use lake_metasrv::MetasrvClient;
use lake_metasrv::client::Committed;
use lance::Dataset;
use lance::dataset::builder::DatasetBuilder;
use lance::dataset::transaction::{Operation, Transaction};
use lance::dataset::{CommitBuilder, InsertBuilder, WriteMode, WriteParams};
use lance::session::Session;
use lance_table::io::commit::external_manifest::{
    ExternalManifestCommitHandler, ExternalManifestStore,
};
use lance_table::io::commit::{ManifestLocation, ManifestNamingScheme};
use object_store::ObjectStoreExt;
use object_store::path::Path;

use crate::QueryError;

/// Opened datasets kept per replica, by (table id, version).
const OPEN_DATASETS_MAX: usize = 256;
/// Commit attempts of an append that keeps losing the compare-and-swap. Its data files are
/// written once; each attempt only rebases and commits the transaction again.
const APPEND_ATTEMPTS_MAX: usize = 40;
/// Longest pause between two commit attempts of one append, in ms (random below it).
const APPEND_PAUSE_MAX_MS: u64 = 200;
/// How long a commit whose outcome is unknown (Metasrv failing over, unreachable) is sent
/// again before the append gives up and reports the outcome as unknown.
const COMMIT_RESOLVE_MAX: std::time::Duration = std::time::Duration::from_secs(20);

/// An opened, immutable Lance dataset version.
pub type DatasetHandle = Arc<Dataset>;

/// Access to the Lance datasets under one data root.
pub struct Datasets {
    root: String,
    metasrv: MetasrvClient,
    session: Arc<Session>,
    opened: Mutex<HashMap<(u64, u64), DatasetHandle>>,
}

impl Datasets {
    /// `root` is the data root as a path or URI (`/var/lake`, `file:///var/lake`); table
    /// locations from the registry are joined onto it.
    pub fn new(root: impl Into<String>, metasrv: MetasrvClient) -> Self {
        Self {
            root: root.into().trim_end_matches('/').to_string(),
            metasrv,
            session: Arc::new(Session::default()),
            opened: Mutex::new(HashMap::new()),
        }
    }

    fn uri(&self, meta: &TableMeta) -> String {
        format!("{}/{}", self.root, meta.location)
    }

    /// The dataset directory of `meta` when the data root is on the local filesystem (a
    /// path or a `file://` URI); `None` on an object store.
    fn local_dir(&self, meta: &TableMeta) -> Option<std::path::PathBuf> {
        let root = self.root.strip_prefix("file://").unwrap_or(&self.root);
        (!root.contains("://")).then(|| std::path::Path::new(root).join(&meta.location))
    }

    /// Opens `table` at `version` (≥ 1) using only the cached history in `table`: zero
    /// Metasrv round trips, and zero object-store reads when this replica already has it.
    ///
    /// # Errors
    /// [`QueryError::Lance`] when the manifest or data files cannot be read.
    pub async fn open(
        &self,
        table: &Arc<TableState>,
        version: u64,
    ) -> Result<DatasetHandle, QueryError> {
        let key = (table.meta.id, version);
        if let Some(ds) = self.lock_opened().get(&key) {
            return Ok(ds.clone());
        }
        let store = PinnedManifests {
            table: table.clone(),
            metasrv: self.metasrv.clone(),
        };
        let dataset = DatasetBuilder::from_uri(self.uri(&table.meta))
            .with_version(version)
            .with_commit_handler(Arc::new(ExternalManifestCommitHandler {
                external_manifest_store: Arc::new(store),
            }))
            .with_session(self.session.clone())
            .load()
            .await
            .map_err(|e| {
                QueryError::Lance(format!(
                    "cannot open {}.{} version {version}: {e}",
                    table.meta.namespace, table.meta.name
                ))
            })?;
        let dataset = Arc::new(dataset);
        let mut opened = self.lock_opened();
        if opened.len() >= OPEN_DATASETS_MAX {
            opened.clear();
        }
        opened.insert(key, dataset.clone());
        Ok(dataset)
    }

    fn lock_opened(&self) -> std::sync::MutexGuard<'_, HashMap<(u64, u64), DatasetHandle>> {
        self.opened.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `rows` (every batch of `schema`, the table's) to `meta`'s dataset as one new
    /// version, committed through Metasrv, and returns it with the number of rows. The rows
    /// stream into Lance's data files as they arrive (memory stays bounded whatever the
    /// size) while their payload digest (SHA-256 of their Arrow IPC stream) is computed.
    /// With `operation_id` the append is idempotent: if the id already committed the same
    /// payload, its version is returned with `replayed = true` and nothing is written (the
    /// rows are read, to compare digests). An append of no rows to a table that has a
    /// version commits nothing; the first version of a table is committed even empty.
    ///
    /// # Errors
    /// [`QueryError::Conflict`] when the id was used with another payload;
    /// [`QueryError::NotFound`] when the table was dropped; an error of `rows`;
    /// [`QueryError::Aborted`] past the retry budget; [`QueryError::OutcomeUnknown`] when
    /// Metasrv never gave a definite answer; [`QueryError::Lance`] otherwise.
    pub async fn append(
        &self,
        meta: &TableMeta,
        schema: SchemaRef,
        rows: RowStream,
        operation_id: Option<String>,
    ) -> Result<(Committed, u64), QueryError> {
        let table = format!("{}.{}", meta.namespace, meta.name);
        // Refused before any data file is written (Metasrv would refuse the commit).
        if let Some(id) = &operation_id {
            lake_core::registry::validate_operation_id(id)
                .map_err(|e| QueryError::InvalidArgument(e.to_string()))?;
        }
        // Authoritative read: the replay check and the base version come from Metasrv.
        let mut description = self.describe(meta, operation_id.as_deref()).await?;
        if let Some(id) = &operation_id
            && let Some(committed) = description.operation
        {
            // Committed before: the same rows make a replay.
            let (digest, count) = PayloadDigest::of(&schema, rows).await?;
            return replay(&table, id, committed, digest, description.revision).map(|c| (c, count));
        }
        let latest = description.versions.last().map_or(0, |v| v.version);
        // Data files once. Append mode: Lance creates the dataset (an Overwrite of nothing)
        // when there is none, and appends when another writer created it meanwhile.
        let digest = Arc::new(Mutex::new(PayloadDigest::new(&schema)?));
        let counted = digest.clone();
        // The rows' own error (a refused batch, a client that broke off) is what the append
        // fails with, not Lance's wrapping of it.
        let failure: Arc<Mutex<Option<QueryError>>> = Arc::default();
        let failed = failure.clone();
        let stream = rows
            .try_filter(|batch| futures::future::ready(batch.num_rows() > 0))
            .and_then(move |batch| {
                let hashed = counted
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .write(&batch)
                    .map(|()| batch);
                futures::future::ready(hashed)
            })
            .map_err(move |e| {
                let message = e.to_string();
                failed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(e);
                datafusion::error::DataFusionError::Execution(message)
            });
        let source: datafusion::execution::SendableRecordBatchStream = Box::pin(
            datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(
                schema.clone(),
                stream,
            ),
        );
        let uri = self.uri(meta);
        let params = WriteParams {
            mode: WriteMode::Append,
            session: Some(self.session.clone()),
            commit_handler: Some(Arc::new(ExternalManifestCommitHandler {
                external_manifest_store: Arc::new(PinnedManifests {
                    table: Arc::new(TableState {
                        meta: description.meta.clone(),
                        versions: description.versions.clone(),
                        operations: Default::default(),
                    }),
                    metasrv: self.metasrv.clone(),
                }),
            })),
            ..WriteParams::default()
        };
        let written = InsertBuilder::new(uri.as_str())
            .with_params(&params)
            .execute_uncommitted_stream(source)
            .await
            .map_err(|e| {
                failure
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take()
                    .unwrap_or_else(|| classify(meta, e))
            })?;
        let (digest, count) = Arc::try_unwrap(digest)
            .map_err(|_| QueryError::Execution("payload digest still shared".into()))?
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .finish()?;
        if count == 0 && latest > 0 {
            // Nothing to add: no new version.
            return Ok((
                Committed {
                    version: latest,
                    replayed: false,
                    revision: description.revision,
                },
                0,
            ));
        }
        let operation = operation_id.map(|id| (id, digest));
        let mut last_error = None;
        for attempt in 0..APPEND_ATTEMPTS_MAX {
            if attempt > 0 {
                // Lost the compare-and-swap: a short random pause, so that contending
                // writers spread out without Lance's growing backoff (Metasrv's CAS is
                // cheap; it is not an object-store race).
                let pause = rand::random::<u64>() % APPEND_PAUSE_MAX_MS.min(20 * attempt as u64);
                tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                let id = operation.as_ref().map(|(id, _)| id.as_str());
                description = self.describe(meta, id).await?;
            }
            if let Some((id, digest)) = &operation
                && let Some(committed) = description.operation
            {
                return replay(&table, id, committed, *digest, description.revision)
                    .map(|c| (c, count));
            }
            let latest = description.versions.last().map_or(0, |v| v.version);
            // Another writer created the dataset since these files were written: the same
            // files become an append (Lance checks that they hold every column of the
            // dataset's schema, by field id).
            let transaction = if latest > 0 {
                as_append(written.clone(), latest)
            } else {
                written.clone()
            };
            let store = Arc::new(MetasrvManifests {
                metasrv: self.metasrv.clone(),
                local_dir: self.local_dir(meta),
                meta: meta.clone(),
                operation: operation.clone(),
                first_version_only: matches!(transaction.operation, Operation::Overwrite { .. }),
                committed: Mutex::new(None),
                unknown: Mutex::new(None),
            });
            // Commit: Lance rebases an append onto whatever version is latest now; a first
            // version commits only as version 1 ([`MetasrvManifests::first_version_only`]).
            let result = CommitBuilder::new(uri.as_str())
                .with_commit_handler(Arc::new(ExternalManifestCommitHandler {
                    external_manifest_store: store.clone(),
                }))
                .with_session(self.session.clone())
                .with_max_retries(1)
                .execute(transaction)
                .await
                .map(|_| ());
            let committed = *store.committed.lock().unwrap_or_else(|p| p.into_inner());
            let unknown = store
                .unknown
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            match (result, committed) {
                (Ok(_), Some(c)) => return Ok((c, count)),
                (Ok(_), None) => {
                    return Err(QueryError::OutcomeUnknown(format!(
                        "the commit to {table} may or may not have happened ({}); sending the same request again is safe: {}",
                        unknown.unwrap_or_else(|| "metasrv never acknowledged it".into()),
                        operation.as_ref().map_or_else(
                            || "this append carries no operation id, so check the table first"
                                .to_string(),
                            |(id, _)| format!("under operation id {id:?} it never appends twice")
                        )
                    )));
                }
                // The CAS said another writer with our operation id got there first.
                (Err(_), Some(c)) if c.replayed => return Ok((c, count)),
                (Err(e), _) if is_commit_conflict(&e) => {
                    tracing::debug!(error = %e, "append lost the compare-and-swap; re-reading the table");
                    last_error = Some(e);
                }
                (Err(e), _) => return Err(classify(meta, e)),
            }
        }
        if let Some(e) = last_error {
            tracing::warn!(error = %e, table = %table, "append gave up after losing the commit race {APPEND_ATTEMPTS_MAX} times");
        }
        Err(QueryError::Aborted(format!(
            "the append to {table} lost the commit race to other writers {APPEND_ATTEMPTS_MAX} times and committed nothing; retrying it is safe{}",
            operation
                .as_ref()
                .map_or_else(String::new, |(id, _)| format!(
                    " (under operation id {id:?} a retry never appends twice)"
                ))
        )))
    }

    /// Metasrv's description of `meta`'s table, which must still be the same table: its
    /// latest version, and the version `operation_id` committed if it did.
    async fn describe(
        &self,
        meta: &TableMeta,
        operation_id: Option<&str>,
    ) -> Result<lake_metasrv::client::TableDescription, QueryError> {
        let description = self
            .metasrv
            .describe_table_with(&meta.namespace, &meta.name, None, operation_id)
            .await?;
        if description.meta.id != meta.id {
            return Err(QueryError::NotFound(format!(
                "table {}.{} was dropped (and recreated) while this append was planned",
                meta.namespace, meta.name
            )));
        }
        Ok(description)
    }
}

/// The rows of an append: batches of the table's schema, or the error that ends them.
pub type RowStream = std::pin::Pin<
    Box<dyn futures::Stream<Item = Result<RecordBatch, QueryError>> + Send + 'static>,
>;

/// The answer to an append whose operation id `id` already committed `(version, its
/// payload digest)`: a replay when `digest` is that payload, a conflict otherwise.
fn replay(
    table: &str,
    id: &str,
    (version, committed): (u64, Digest),
    digest: Digest,
    revision: u64,
) -> Result<Committed, QueryError> {
    if committed == digest {
        return Ok(Committed {
            version,
            replayed: true,
            revision,
        });
    }
    Err(QueryError::Conflict(format!(
        "operation id {id:?} already committed version {version} of {table} with a different payload"
    )))
}

/// SHA-256 over the Arrow IPC stream of an append's batches (schema message, then each
/// batch): the payload digest that makes an operation id's replay recognizable, computed
/// as the batches pass.
pub struct PayloadDigest {
    writer: arrow::ipc::writer::StreamWriter<HashWriter>,
    rows: u64,
}

/// An `io::Write` into a SHA-256.
struct HashWriter(sha2::Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        sha2::Digest::update(&mut self.0, bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl PayloadDigest {
    /// A digest of batches of `schema`.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] when Arrow cannot encode the schema.
    pub fn new(schema: &SchemaRef) -> Result<Self, QueryError> {
        Ok(Self {
            writer: arrow::ipc::writer::StreamWriter::try_new(
                HashWriter(<sha2::Sha256 as sha2::Digest>::new()),
                schema,
            )?,
            rows: 0,
        })
    }

    /// Adds `batch`.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] when Arrow cannot encode it.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), QueryError> {
        self.rows += batch.num_rows() as u64;
        Ok(self.writer.write(batch)?)
    }

    /// The digest and the number of rows.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] when Arrow cannot finish the stream.
    pub fn finish(mut self) -> Result<(Digest, u64), QueryError> {
        self.writer.finish()?;
        let HashWriter(hasher) = self.writer.into_inner()?;
        Ok((sha2::Digest::finalize(hasher).into(), self.rows))
    }

    /// The digest and row count of all of `rows` (batches with rows only, as an append
    /// writes them).
    ///
    /// # Errors
    /// The first error of `rows`, or Arrow's.
    pub async fn of(schema: &SchemaRef, mut rows: RowStream) -> Result<(Digest, u64), QueryError> {
        let mut digest = Self::new(schema)?;
        while let Some(batch) = rows.next().await {
            let batch = batch?;
            if batch.num_rows() > 0 {
                digest.write(&batch)?;
            }
        }
        digest.finish()
    }
}

/// `transaction`'s new fragments as an append onto `read_version`: the files written for a
/// dataset's first version (an Overwrite) when another writer created the dataset first.
fn as_append(transaction: Transaction, read_version: u64) -> Transaction {
    match transaction.operation {
        Operation::Overwrite { fragments, .. } => {
            Transaction::new(read_version, Operation::Append { fragments }, None)
        }
        operation => Transaction {
            operation,
            ..transaction
        },
    }
}

fn is_commit_conflict(e: &lance::Error) -> bool {
    if let lance::Error::Shared { source } = e {
        return is_commit_conflict(source);
    }
    matches!(
        e,
        lance::Error::CommitConflict { .. }
            | lance::Error::RetryableCommitConflict { .. }
            | lance::Error::TooMuchWriteContention { .. }
            // A first version that lost to another writer's first version.
            | lance::Error::DatasetAlreadyExists { .. }
    )
}

/// Lance's refusal of the data itself (schema, input) is the caller's to fix.
fn classify(meta: &TableMeta, e: lance::Error) -> QueryError {
    let table = format!("{}.{}", meta.namespace, meta.name);
    match e {
        lance::Error::Schema { .. }
        | lance::Error::SchemaMismatch { .. }
        | lance::Error::InvalidInput { .. }
        | lance::Error::NotSupported { .. }
        | lance::Error::Arrow { .. } => QueryError::InvalidArgument(format!(
            "table {table} cannot store these columns: {}",
            first_line(&e.to_string())
        )),
        other => QueryError::Lance(format!(
            "append to {table}: {}",
            first_line(&other.to_string())
        )),
    }
}

/// Lance's messages end with the source location; keep what a user can act on.
fn first_line(message: &str) -> String {
    message
        .split(", /")
        .next()
        .unwrap_or(message)
        .trim()
        .to_string()
}

fn relative(base_uri: &str, path: &str) -> String {
    path.strip_prefix(base_uri)
        .map(|p| p.trim_start_matches('/'))
        .unwrap_or(path)
        .to_string()
}

fn absolute(base_uri: &str, relative: &str) -> String {
    format!("{}/{}", base_uri.trim_end_matches('/'), relative)
}

/// A reader's manifest store over one table's cached history: no Metasrv round trip to
/// open a version.
///
/// A version committed moments ago may still point at its staging manifest (the writer
/// moves it to the final path and then records that with `FinalizeManifest`). Lance
/// handles a staging location itself when it knows the size: it copies the staging file to
/// the final path, or, if the writer already moved and deleted it, uses the final path;
/// then it calls `put_if_exists`, which this store forwards to Metasrv like the writer does.
#[derive(Debug)]
struct PinnedManifests {
    table: Arc<TableState>,
    metasrv: MetasrvClient,
}

fn location(
    base_uri: &str,
    version: u64,
    manifest: &ManifestRef,
) -> lance::Result<ManifestLocation> {
    let path = Path::parse(absolute(base_uri, &manifest.path))
        .map_err(|e| lance::Error::invalid_input(e.to_string()))?;
    let filename = path.filename().unwrap_or_default();
    let naming_scheme = ManifestNamingScheme::detect_scheme(filename)
        .unwrap_or_else(|| ManifestNamingScheme::detect_scheme_staging(filename));
    Ok(ManifestLocation {
        version,
        path,
        size: Some(manifest.size_bytes),
        naming_scheme,
        e_tag: None,
        identity: None,
    })
}

impl PinnedManifests {
    /// The pinned record of `version`: the table's history may be whole (a cached table)
    /// or the few records an append was described with.
    fn record(&self, version: u64) -> Option<&VersionRecord> {
        self.table
            .version(version)
            .filter(|r| r.version == version)
            .or_else(|| self.table.versions.iter().find(|r| r.version == version))
    }
}

#[async_trait]
impl ExternalManifestStore for PinnedManifests {
    async fn get(&self, base_uri: &str, version: u64) -> lance::Result<String> {
        self.record(version)
            .map(|v| absolute(base_uri, &v.manifest.path))
            .ok_or_else(|| lance::Error::not_found(format!("{base_uri}@{version}")))
    }

    async fn get_manifest_location(
        &self,
        base_uri: &str,
        version: u64,
    ) -> lance::Result<ManifestLocation> {
        let record = self
            .record(version)
            .ok_or_else(|| lance::Error::not_found(format!("{base_uri}@{version}")))?;
        location(base_uri, version, &record.manifest)
    }

    async fn get_latest_manifest_location(
        &self,
        base_uri: &str,
    ) -> lance::Result<Option<ManifestLocation>> {
        self.table
            .versions
            .last()
            .map(|v| location(base_uri, v.version, &v.manifest))
            .transpose()
    }

    async fn get_latest_version(&self, base_uri: &str) -> lance::Result<Option<(u64, String)>> {
        Ok(self
            .table
            .versions
            .last()
            .map(|v| (v.version, absolute(base_uri, &v.manifest.path))))
    }

    async fn put_if_not_exists(
        &self,
        _base_uri: &str,
        version: u64,
        _path: &str,
        _size: u64,
        _e_tag: Option<String>,
    ) -> lance::Result<()> {
        Err(lance::Error::not_supported(format!(
            "readers do not commit (version {version} of table id {})",
            self.table.meta.id
        )))
    }

    async fn put_if_exists(
        &self,
        base_uri: &str,
        version: u64,
        path: &str,
        size: u64,
        _e_tag: Option<String>,
    ) -> lance::Result<()> {
        finalize(
            &self.metasrv,
            self.table.meta.id,
            base_uri,
            version,
            path,
            size,
        )
        .await
    }
}

/// Records that `version`'s manifest now lives at its final `path` (Lance's
/// `put_if_exists`), for writers and for readers that finished a writer's move. Recording
/// the same location again changes nothing, so a call whose outcome is unknown (Metasrv
/// failing over) is sent again for up to [`COMMIT_RESOLVE_MAX`]: a read that happens to
/// finish a writer's move during a leader change waits for the new leader instead of
/// failing.
async fn finalize(
    metasrv: &MetasrvClient,
    table_id: u64,
    base_uri: &str,
    version: u64,
    path: &str,
    size: u64,
) -> lance::Result<()> {
    let manifest = ManifestRef {
        path: relative(base_uri, path),
        size_bytes: size,
    };
    let started = std::time::Instant::now();
    loop {
        match metasrv
            .finalize_manifest(table_id, version, &manifest)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if outcome_unknown(&e) && started.elapsed() < COMMIT_RESOLVE_MAX => {
                tracing::warn!(error = %e, table_id, version, "finalizing a manifest: outcome unknown; sending it again");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Err(e) => return Err(lance_error(e)),
        }
    }
}

/// The writer's manifest store: Lance's commit becomes Metasrv's compare-and-swap.
#[derive(Debug)]
struct MetasrvManifests {
    metasrv: MetasrvClient,
    /// The dataset's directory on a local data root, made durable before Metasrv names a
    /// manifest in it ([`make_durable`]).
    local_dir: Option<std::path::PathBuf>,
    meta: TableMeta,
    operation: Option<(String, Digest)>,
    /// The commit creates the dataset: only version 1 may be committed. Lance would commit
    /// a first version's Overwrite on top of a dataset another writer created meanwhile,
    /// replacing that writer's rows; refused as a lost race, the files are committed again
    /// as an append instead.
    first_version_only: bool,
    /// What Metasrv answered to our compare-and-swap.
    committed: Mutex<Option<Committed>>,
    /// Why the compare-and-swap's outcome stayed unknown, if it did.
    unknown: Mutex<Option<String>>,
}

/// What became of one compare-and-swap.
enum Resolution {
    /// Metasrv holds our manifest at the version.
    Ours(Committed),
    /// Definitely not ours: another writer won the version, or an earlier attempt of this
    /// operation committed it (recorded as a replay).
    NotOurs(lance::Error),
    /// No definite answer within [`COMMIT_RESOLVE_MAX`].
    Unknown(String),
}

/// Whether a failed Metasrv call leaves its outcome unknown (as opposed to a definite
/// refusal such as a lost compare-and-swap or a reused operation id).
fn outcome_unknown(e: &lake_metasrv::MetasrvError) -> bool {
    use tonic::Code;
    match e {
        lake_metasrv::MetasrvError::Rpc { code, .. } => matches!(
            code,
            Code::Unavailable | Code::DeadlineExceeded | Code::Unknown | Code::Cancelled
        ),
        lake_metasrv::MetasrvError::Connect { .. } | lake_metasrv::MetasrvError::ShuttingDown => {
            true
        }
        _ => false,
    }
}

impl MetasrvManifests {
    /// The compare-and-swap of `version` to our manifest at `path`, sent again (same
    /// operation id, so a landed earlier attempt comes back as a replay) until the answer
    /// is definite. A replay is ours when Metasrv records our very manifest path for it.
    /// (Should that version's record expire between two attempts, which takes more
    /// commits to the table in between than the retention window keeps, the commit is
    /// reported as a replay of that version: its rows are committed once either way.)
    async fn commit_resolved(
        &self,
        base_uri: &str,
        version: u64,
        path: &str,
        size: u64,
    ) -> Resolution {
        let manifest = ManifestRef {
            path: relative(base_uri, path),
            size_bytes: size,
        };
        if self.first_version_only && version != 1 {
            return Resolution::NotOurs(lance::Error::dataset_already_exists(format!(
                "{}.{}",
                self.meta.namespace, self.meta.name
            )));
        }
        let operation = self
            .operation
            .as_ref()
            .map(|(id, digest)| (id.as_str(), *digest));
        let started = std::time::Instant::now();
        loop {
            let answer = self
                .metasrv
                .commit(
                    self.meta.id,
                    version.saturating_sub(1),
                    &manifest,
                    operation,
                )
                .await;
            match answer {
                Ok(committed) if !committed.replayed => return Resolution::Ours(committed),
                Ok(committed) => {
                    // A replay: our own earlier attempt of this very commit, or an earlier
                    // Lance write of this operation (another manifest)?
                    match self
                        .metasrv
                        .describe_table_with(
                            &self.meta.namespace,
                            &self.meta.name,
                            Some(committed.version),
                            None,
                        )
                        .await
                    {
                        Ok(d) => {
                            let ours = d.versions.iter().any(|v| {
                                v.version == committed.version && v.manifest.path == manifest.path
                            });
                            if ours {
                                return Resolution::Ours(Committed {
                                    replayed: false,
                                    ..committed
                                });
                            }
                            *self.committed.lock().unwrap_or_else(|p| p.into_inner()) =
                                Some(committed);
                            return Resolution::NotOurs(lance::Error::io(format!(
                                "operation already committed version {}",
                                committed.version
                            )));
                        }
                        Err(e) if outcome_unknown(&e) => {}
                        Err(e) => return Resolution::NotOurs(lance_error(e)),
                    }
                }
                Err(e) if outcome_unknown(&e) => {
                    if started.elapsed() >= COMMIT_RESOLVE_MAX {
                        return Resolution::Unknown(e.to_string());
                    }
                    tracing::warn!(error = %e, "commit outcome unknown; sending it again");
                }
                Err(e) => return Resolution::NotOurs(lance_error(e)),
            }
            if started.elapsed() >= COMMIT_RESOLVE_MAX {
                return Resolution::Unknown("metasrv gave no definite answer".into());
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
}

/// Makes what Lance wrote under `dir` durable, when the data root is local: object_store's
/// local filesystem writes data files, deletion files, transaction files and manifests
/// without fsync, while Metasrv's pointer is synced, so after a power loss the pointer
/// could name bytes that never reached the disk. One `syncfs(2)` (Linux) flushes the
/// filesystem that holds the dataset: file contents and directory entries alike. On an
/// object store (`dir` is `None`) a PUT is durable when it returns, and this does nothing.
///
/// # Errors
/// `lance::Error::io` naming the directory when it cannot be opened or synced.
async fn make_durable(dir: Option<&std::path::Path>) -> lance::Result<()> {
    let Some(dir) = dir.map(std::path::Path::to_path_buf) else {
        return Ok(());
    };
    let shown = dir.display().to_string();
    tokio::task::spawn_blocking(move || {
        let handle = std::fs::File::open(&dir)?;
        rustix::fs::syncfs(&handle).map_err(std::io::Error::from)
    })
    .await
    .map_err(|e| lance::Error::io(format!("syncing {shown}: {e}")))?
    .map_err(|e| lance::Error::io(format!("syncing {shown}: {e}")))
}

fn lance_error(e: lake_metasrv::MetasrvError) -> lance::Error {
    lance::Error::io(e.to_string())
}

#[async_trait]
impl ExternalManifestStore for MetasrvManifests {
    async fn get(&self, base_uri: &str, version: u64) -> lance::Result<String> {
        let description = self
            .metasrv
            .describe_table_with(&self.meta.namespace, &self.meta.name, Some(version), None)
            .await
            .map_err(lance_error)?;
        description
            .versions
            .iter()
            .find(|v| v.version == version)
            .map(|v| absolute(base_uri, &v.manifest.path))
            .ok_or_else(|| lance::Error::not_found(format!("{base_uri}@{version}")))
    }

    async fn get_latest_version(&self, base_uri: &str) -> lance::Result<Option<(u64, String)>> {
        let description = self
            .metasrv
            .describe_table(&self.meta.namespace, &self.meta.name)
            .await
            .map_err(lance_error)?;
        Ok(description
            .versions
            .last()
            .map(|v| (v.version, absolute(base_uri, &v.manifest.path))))
    }

    /// Lance's staging-manifest workflow, made safe against unknown outcomes: the staging
    /// manifest is deleted only when Metasrv definitely does not point at it, and a failed
    /// finalization leaves the version on its (kept) staging manifest.
    async fn put(
        &self,
        base_path: &Path,
        version: u64,
        staging_path: &Path,
        size: u64,
        e_tag: Option<String>,
        object_store: &dyn object_store::ObjectStore,
        naming_scheme: ManifestNamingScheme,
    ) -> lance::Result<ManifestLocation> {
        let staging = ManifestLocation {
            version,
            path: staging_path.clone(),
            size: Some(size),
            naming_scheme,
            e_tag,
            identity: None,
        };
        // The data files, the transaction file and the staging manifest are durable
        // before Metasrv's synced pointer names them.
        make_durable(self.local_dir.as_deref()).await?;
        match self
            .commit_resolved(base_path.as_ref(), version, staging_path.as_ref(), size)
            .await
        {
            Resolution::Ours(committed) => {
                *self.committed.lock().unwrap_or_else(|p| p.into_inner()) = Some(committed);
            }
            // Lance deletes the staging manifest: nothing points at it.
            Resolution::NotOurs(error) => return Err(error),
            Resolution::Unknown(why) => {
                // Metasrv may point at the staging manifest: keep it, and let the append
                // report the outcome as unknown.
                *self.unknown.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
                return Ok(staging);
            }
        }
        let final_path = naming_scheme.manifest_path(base_path, version);
        if let Err(e) = object_store.copy(staging_path, &final_path).await {
            tracing::warn!(error = %e, "manifest copy failed; the version stays on its staging manifest");
            return Ok(staging);
        }
        if let Err(e) = make_durable(self.local_dir.as_deref()).await {
            tracing::warn!(error = %e, "final manifest not synced; the version stays on its staging manifest");
            return Ok(staging);
        }
        if let Err(e) = finalize(
            &self.metasrv,
            self.meta.id,
            base_path.as_ref(),
            version,
            final_path.as_ref(),
            size,
        )
        .await
        {
            tracing::warn!(error = %e, "FinalizeManifest failed; the version stays on its staging manifest");
            return Ok(staging);
        }
        if let Err(e) = object_store.delete(staging_path).await {
            tracing::debug!(error = %e, "staging manifest not deleted");
        }
        Ok(ManifestLocation {
            version,
            path: final_path,
            size: Some(size),
            naming_scheme,
            e_tag: None,
            identity: None,
        })
    }

    async fn put_if_not_exists(
        &self,
        base_uri: &str,
        version: u64,
        path: &str,
        size: u64,
        _e_tag: Option<String>,
    ) -> lance::Result<()> {
        // Only reached through Lance paths other than `put` (which resolves outcomes).
        make_durable(self.local_dir.as_deref()).await?;
        match self.commit_resolved(base_uri, version, path, size).await {
            Resolution::Ours(committed) => {
                *self.committed.lock().unwrap_or_else(|p| p.into_inner()) = Some(committed);
                Ok(())
            }
            Resolution::NotOurs(error) => Err(error),
            Resolution::Unknown(why) => {
                Err(lance::Error::io(format!("commit outcome unknown: {why}")))
            }
        }
    }

    async fn put_if_exists(
        &self,
        base_uri: &str,
        version: u64,
        path: &str,
        size: u64,
        _e_tag: Option<String>,
    ) -> lance::Result<()> {
        finalize(&self.metasrv, self.meta.id, base_uri, version, path, size).await
    }
}

#[cfg(test)]
mod durable_tests {
    use super::make_durable;

    #[tokio::test]
    async fn a_local_dataset_is_synced_and_a_missing_one_is_named() {
        make_durable(None)
            .await
            .expect("an object store needs nothing");
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("f"), b"bytes").expect("write");
        make_durable(Some(dir.path())).await.expect("synced");
        let missing = dir.path().join("gone");
        let err = make_durable(Some(&missing))
            .await
            .expect_err("no such directory");
        assert!(err.to_string().contains("gone"), "{err}");
    }
}
