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

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use lake_core::registry::TABLES_DIR;
use lake_core::{Digest, ManifestRef, TableMeta, TableState, VersionRecord};
use lake_metasrv::MetasrvClient;
use lake_metasrv::client::Committed;
use lance::Dataset;
use lance::dataset::builder::DatasetBuilder;
use lance::dataset::cleanup::{CleanupPolicy, RemovalStats};
use lance::dataset::optimize::{CompactionOptions, compact_files};
use lance::dataset::transaction::{Operation, Transaction};
use lance::dataset::{CommitBuilder, InsertBuilder, WriteMode, WriteParams};
use lance::index::DatasetIndexExt;
use lance::session::Session;
use lance_table::io::commit::external_manifest::{
    ExternalManifestCommitHandler, ExternalManifestStore,
};
use lance_table::io::commit::{ManifestLocation, ManifestNamingScheme};
use object_store::ObjectStoreExt;
use object_store::path::Path;

use crate::QueryError;

/// How many times opening a version for maintenance asks Metasrv again for a manifest that
/// moved from its staging path to its final one while it was being opened.
const MANIFEST_MOVES_MAX: u32 = 3;

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

/// How a replica keeps its tables' files in shape under streaming writes: compaction of
/// small fragments and removal of the files only expired versions reference.
///
/// An append that commits here decides, from the version it committed, whether the table
/// is due ([`Self::compact_at_small_fragments`], [`Self::cleanup_every_versions`]); the
/// replica then runs [`Datasets::compact`] and [`Datasets::clean_up`] on it in the
/// background, one run per table at a time. `OPTIMIZE ns.t` runs them by hand.
///
/// Sources: Lance's `compact_files` (fragments below `target_rows_per_fragment` are merged,
/// deletions materialized) and `cleanup_old_versions`; Iceberg's `expire_snapshots`
/// (`older_than`, with the registry's retention window as the snapshots always kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Maintenance {
    /// An append that leaves the table with at least this many fragments of fewer than
    /// [`Self::target_rows_per_fragment`] rows starts a compaction (0: only `OPTIMIZE`
    /// compacts).
    pub compact_at_small_fragments: usize,
    /// Rows a fragment holds before compaction leaves it alone (Lance's
    /// `target_rows_per_fragment`).
    pub target_rows_per_fragment: usize,
    /// Every this many versions an append also starts a cleanup, so tables written in
    /// large appends that never need compaction lose their expired versions too (0: only
    /// after a compaction or `OPTIMIZE`).
    pub cleanup_every_versions: u64,
    /// How long an expired version's files stay at least, in ms, from when this replica
    /// first saw it expired ([`lake_core::ExpiryWatch`]): a query that was reading it when
    /// it expired gets this long to finish.
    pub cleanup_grace_ms: i64,
    /// How often a replica looks for dropped tables' files to remove, in ms (0: never).
    pub dropped_scan_interval_ms: u64,
    /// How long a dropped table's files stay after a replica first finds it dropped, in ms:
    /// queries that opened the table before the drop finish.
    pub dropped_grace_ms: i64,
    /// How long after it was last written an object of a table's managed stage that no
    /// retained version names stays, in ms ([`Datasets::referenced_files`]): an upload
    /// whose append has not committed yet is never taken.
    pub stage_gc_grace_ms: i64,
}

impl Maintenance {
    /// Lake's defaults: compact at 16 small fragments toward Lance's 1,048,576 rows per
    /// fragment; clean up every 100 versions; keep expired versions' files for an hour;
    /// look for dropped tables every 10 minutes and remove their files an hour after; keep
    /// unreferenced stage objects for a day.
    pub const DEFAULT: Self = Self {
        compact_at_small_fragments: 16,
        target_rows_per_fragment: 1024 * 1024,
        cleanup_every_versions: 100,
        cleanup_grace_ms: 3_600_000,
        dropped_scan_interval_ms: 600_000,
        dropped_grace_ms: 3_600_000,
        stage_gc_grace_ms: 86_400_000,
    };

    /// Whether `version` of a table whose fragments hold `rows` (physical rows, `None`
    /// when unknown) is due for a maintenance run.
    pub fn due(&self, version: u64, rows: impl IntoIterator<Item = Option<usize>>) -> bool {
        if self.cleanup_every_versions > 0 && version.is_multiple_of(self.cleanup_every_versions) {
            return true;
        }
        self.compact_at_small_fragments > 0
            && rows
                .into_iter()
                .filter(|r| r.is_none_or(|r| r < self.target_rows_per_fragment))
                .count()
                >= self.compact_at_small_fragments
    }
}

impl Default for Maintenance {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What one maintenance run ([`Datasets::compact`], [`Datasets::clean_up`]) did to a table.
#[derive(Clone, Debug, Default)]
pub struct Optimized {
    /// The version the compaction committed (`None`: nothing needed compacting).
    pub committed: Option<Committed>,
    /// Fragments the compaction merged away.
    pub fragments_removed: usize,
    /// Fragments it wrote in their place.
    pub fragments_added: usize,
    /// Versions whose manifests the cleanup removed.
    pub versions_removed: u64,
    /// Data, deletion and transaction files the cleanup removed.
    pub files_removed: u64,
    /// Bytes the cleanup removed.
    pub bytes_removed: u64,
    /// Why the cleanup did not run, when it did not.
    pub cleanup_skipped: Option<String>,
    /// Whether the run indexed fragments the table's indexes did not cover
    /// ([`Datasets::update_indices`]).
    pub indexes_updated: bool,
}

/// The object a dropped table's directory gets when a replica first finds it dropped: the
/// time its grace period started (ms since the Unix epoch, in decimal).
const DROPPED_MARKER: &str = "_lake_dropped";

/// A dropped table's dataset directory as [`Datasets::collect_dropped`] found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedTable {
    /// The directory, relative to the data root (`tables/<id>-<ms>.lance`).
    pub location: String,
    /// When its grace period started (ms since the Unix epoch).
    pub found_at_ms: i64,
    /// Its files (counted once the grace period is over).
    pub files: u64,
    /// Their bytes (counted once the grace period is over).
    pub bytes: u64,
    /// Whether its files were removed by this call.
    pub removed: bool,
}

/// Background maintenance's bookkeeping ([`Datasets::claim_due`]).
#[derive(Default)]
struct Due {
    /// Tables an append found due since their last run began, by id.
    found: HashSet<u64>,
    /// Tables a background run is working on, by id.
    running: HashSet<u64>,
}

impl Due {
    /// [`Datasets::claim_due`].
    fn claim(&mut self, table_id: u64) -> bool {
        if self.running.contains(&table_id) || !self.found.remove(&table_id) {
            return false;
        }
        self.running.insert(table_id);
        true
    }

    /// [`Datasets::run_again`].
    fn run_again(&mut self, table_id: u64) -> bool {
        if self.found.remove(&table_id) {
            return true;
        }
        self.running.remove(&table_id);
        false
    }
}

/// Access to the Lance datasets under one data root.
pub struct Datasets {
    root: String,
    metasrv: MetasrvClient,
    session: Arc<Session>,
    opened: Mutex<HashMap<(u64, u64), DatasetHandle>>,
    maintenance: Maintenance,
    /// Background maintenance on this replica: tables an append found due, and tables a
    /// background run is working on.
    due: Mutex<Due>,
    /// One lock per table a maintenance run on this replica has worked on, by id.
    busy: Mutex<HashMap<u64, Arc<tokio::sync::Mutex<()>>>>,
    /// When this replica first saw each table's versions expired ([`Self::clean_up`]).
    expiries: Mutex<lake_core::ExpiryWatch>,
}

/// Bytes of opened indexes (B-tree pages, bitmaps, zone maps) a replica keeps in memory,
/// shared by every table (Lance's `Session` index cache; Lance's default is 6 GiB, more
/// than a replica's whole budget).
pub const INDEX_CACHE_BYTES: usize = 512 * 1024 * 1024;

/// Bytes of Lance metadata (manifests, file footers, deletion vectors) a replica keeps in
/// memory (Lance's `Session` metadata cache; Lance's default is 1 GiB).
pub const METADATA_CACHE_BYTES: usize = 512 * 1024 * 1024;

impl Datasets {
    /// `root` is the data root as a path or URI (`/var/lake`, `file:///var/lake`); table
    /// locations from the registry are joined onto it.
    pub fn new(root: impl Into<String>, metasrv: MetasrvClient) -> Self {
        Self {
            root: root.into().trim_end_matches('/').to_string(),
            metasrv,
            session: Arc::new(Session::new(
                INDEX_CACHE_BYTES,
                METADATA_CACHE_BYTES,
                Arc::new(lance::io::ObjectStoreRegistry::default()),
            )),
            opened: Mutex::new(HashMap::new()),
            maintenance: Maintenance::DEFAULT,
            due: Mutex::default(),
            busy: Mutex::default(),
            expiries: Mutex::default(),
        }
    }

    /// The maintenance this replica does.
    pub fn maintenance(&self) -> Maintenance {
        self.maintenance
    }

    /// The names of the dataset directories under the data root's `tables/` (a table's
    /// location less `tables/`).
    ///
    /// # Errors
    /// [`QueryError::Lance`] when the data root cannot be listed.
    pub async fn table_dirs(&self) -> Result<Vec<String>, QueryError> {
        let (store, base) = self.root_store().await?;
        match store
            .list_with_delimiter(Some(&base.clone().join(TABLES_DIR)))
            .await
        {
            Ok(listed) => Ok(listed
                .common_prefixes
                .iter()
                .filter_map(|dir| dir.filename().map(str::to_string))
                .collect()),
            Err(object_store::Error::NotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(collecting("listing the tables directory", &e)),
        }
    }

    /// Removes the files of the dropped tables whose dataset directories (names under
    /// `tables/`, which [`lake_core::Registry::is_dropped_dir`] found to belong to no
    /// table) are past `grace_ms`: a directory found for the first time gets a marker
    /// object with `now_ms`, and its files go once that is `grace_ms` old, so queries that
    /// opened the table before the drop finish. With `dry_run` nothing is written or
    /// deleted, and what would go is reported with its size. Several replicas may collect
    /// at once: a file another one deleted first is not an error. `before_removal(name)`
    /// runs before a directory's files are removed (the table's other storage goes first:
    /// its managed stage), so a collection cut short is found again, still due.
    ///
    /// # Errors
    /// [`QueryError::Lance`] when a file cannot be listed, read, written or deleted;
    /// `before_removal`'s error (the directory is then left for the next round).
    pub async fn collect_dropped<'a>(
        &self,
        dropped: &[String],
        grace_ms: i64,
        now_ms: i64,
        dry_run: bool,
        before_removal: impl Fn(&str) -> futures::future::BoxFuture<'a, Result<(), QueryError>>,
    ) -> Result<Vec<DroppedTable>, QueryError> {
        use object_store::PutPayload;
        let (store, base) = self.root_store().await?;
        let mut found = Vec::new();
        for name in dropped {
            let dir = base.clone().join(TABLES_DIR).join(name.as_str());
            let mut table = DroppedTable {
                location: format!("{TABLES_DIR}/{name}"),
                found_at_ms: now_ms,
                files: 0,
                bytes: 0,
                removed: false,
            };
            let marker = dir.clone().join(DROPPED_MARKER);
            let marked = match store.get(&marker).await {
                Ok(got) => {
                    let bytes = got
                        .bytes()
                        .await
                        .map_err(|e| collecting("reading a marker", &e))?;
                    std::str::from_utf8(&bytes)
                        .ok()
                        .and_then(|t| t.trim().parse::<i64>().ok())
                }
                Err(object_store::Error::NotFound { .. }) => None,
                Err(e) => return Err(collecting("reading a marker", &e)),
            };
            let Some(found_at_ms) = marked else {
                if !dry_run {
                    store
                        .put(&marker, PutPayload::from(now_ms.to_string()))
                        .await
                        .map_err(|e| collecting("writing a marker", &e))?;
                }
                found.push(table);
                continue;
            };
            table.found_at_ms = found_at_ms;
            if now_ms.saturating_sub(found_at_ms) < grace_ms {
                found.push(table);
                continue;
            }
            let files: Vec<object_store::ObjectMeta> =
                store
                    .list(Some(&dir))
                    .try_collect()
                    .await
                    .map_err(|e| collecting("listing a dropped table", &e))?;
            table.files = files.len() as u64;
            table.bytes = files.iter().map(|f| f.size).sum();
            if !dry_run {
                before_removal(name).await?;
                // The marker last: a collection cut short is found again, still due.
                // Another replica may have deleted a file first: gone is gone.
                let delete = |path: object_store::path::Path, what: &'static str| {
                    let store = store.clone();
                    async move {
                        match store.delete(&path).await {
                            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                            Err(e) => Err(collecting(what, &e)),
                        }
                    }
                };
                for file in files.iter().filter(|f| f.location != marker) {
                    delete(file.location.clone(), "deleting a dropped table's file").await?;
                }
                delete(marker.clone(), "deleting a marker").await?;
                // A local filesystem keeps the emptied directories.
                if let Some(root) = self.local_root() {
                    let _ = tokio::fs::remove_dir_all(root.join(&table.location)).await;
                }
                table.removed = true;
            }
            found.push(table);
        }
        Ok(found)
    }

    /// The object store of the data root and the root's path in it (Lance's, so the
    /// credentials are the datasets').
    async fn root_store(&self) -> Result<(Arc<dyn object_store::ObjectStore>, Path), QueryError> {
        let (store, base) = lance::io::ObjectStore::from_uri(&self.root)
            .await
            .map_err(|e| collecting("opening the data root", &e))?;
        Ok((store.inner.clone(), base))
    }

    /// The data root's directory when it is on the local filesystem.
    fn local_root(&self) -> Option<std::path::PathBuf> {
        let root = self.root.strip_prefix("file://").unwrap_or(&self.root);
        (!root.contains("://")).then(|| std::path::PathBuf::from(root))
    }

    /// The data root, as given to [`Self::new`] less a trailing `/`.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The same, with `maintenance` instead of [`Maintenance::DEFAULT`].
    #[must_use]
    pub fn with_maintenance(mut self, maintenance: Maintenance) -> Self {
        self.maintenance = maintenance;
        self
    }

    /// Whether the caller should start a background maintenance run on table `table_id`:
    /// an append here found it due since the last run began, and no background run is on
    /// it (a run in progress takes the table up again when it ends: [`Self::run_again`]).
    /// `true` makes the caller that run's owner until [`Self::run_again`] says `false`.
    pub fn claim_due(&self, table_id: u64) -> bool {
        self.due
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .claim(table_id)
    }

    /// For the owner of a background run on table `table_id` ([`Self::claim_due`]) whose
    /// run ended: whether an append found the table due meanwhile, so it runs again (and
    /// still owns it); `false` ends its ownership. One decision under one lock, so a table
    /// found due while a run ends is never left waiting for the next append.
    pub fn run_again(&self, table_id: u64) -> bool {
        self.due
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .run_again(table_id)
    }

    fn uri(&self, meta: &TableMeta) -> String {
        format!("{}/{}", self.root, meta.location)
    }

    /// The dataset directory of `meta` when the data root is on the local filesystem (a
    /// path or a `file://` URI); `None` on an object store.
    fn local_dir(&self, meta: &TableMeta) -> Option<std::path::PathBuf> {
        self.local_root().map(|root| root.join(&meta.location))
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
        let dataset = self
            .open_version(&table.meta, version, Arc::new(store))
            .await?;
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
    /// size) while their payload digest ([`AppendDigest`]) is computed.
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
            // Committed before: the same rows make a replay, under this release's digest
            // or an earlier one's.
            let (digest, count) = PayloadDigest::of(&schema, rows).await?;
            return replay_append(&table, id, committed, &digest, description.revision)
                .map(|c| (c, count));
        }
        let latest = description.versions.last().map_or(0, |v| v.version);
        // Data files once. Append mode: Lance creates the dataset (an Overwrite of nothing)
        // when there is none, and appends when another writer created it meanwhile.
        // Hashed beside the write: the digest thread works while Lance encodes.
        let (to_digest, digest) = PayloadDigest::beside(&schema)?;
        let hashed = rows
            .try_filter(|batch| futures::future::ready(batch.num_rows() > 0))
            .and_then(move |batch| {
                let to_digest = to_digest.clone();
                async move {
                    to_digest.send(batch.clone()).await.map_err(|_| {
                        QueryError::Execution("the payload digest stopped before the rows".into())
                    })?;
                    Ok(batch)
                }
            })
            .boxed();
        let (source, failure) = writer_source(schema.clone(), hashed);
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
            .await;
        let (written, (digest, count)) = match written {
            // The rows' end reached the writer after the digest's sender was gone
            // ([`writer_source`]), so the digest is complete.
            Ok(written) => (
                written,
                digest.await.map_err(|e| {
                    QueryError::Execution(format!("the payload digest failed: {e}"))
                })??,
            ),
            Err(e) => {
                // A digest that failed says why; else the rows' own error, else Lance's.
                if digest.is_finished()
                    && let Ok(Err(digest_error)) = digest.await
                {
                    return Err(digest_error);
                }
                return Err(failure.or(classify(meta, "append", e)));
            }
        };
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
        let operation = operation_id.map(|id| (id, digest.digest));
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
                // Committed meanwhile by another request with this id. The rows are
                // written and gone, so only this release's digest can be compared.
                let digest = AppendDigest {
                    digest: *digest,
                    earlier: None,
                };
                return replay_append(&table, id, committed, &digest, description.revision)
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
            let store = Arc::new(self.writer(
                meta,
                operation.clone(),
                matches!(transaction.operation, Operation::Overwrite { .. }).then_some(1),
            ));
            // Commit: Lance rebases an append onto whatever version is latest now; a first
            // version commits only as version 1 ([`MetasrvManifests::only_version`]).
            let result = CommitBuilder::new(uri.as_str())
                .with_commit_handler(Arc::new(ExternalManifestCommitHandler {
                    external_manifest_store: store.clone(),
                }))
                .with_session(self.session.clone())
                .with_max_retries(1)
                .execute(transaction)
                .await
                .map(|dataset| self.note_due(meta.id, &dataset));
            match settle(meta, "append", result, &store, operation.as_ref())? {
                Settled::Committed(c) => return Ok((c, count)),
                Settled::Lost(e) => last_error = Some(e),
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

    /// Records that table `table_id` is due for maintenance when `dataset`, a version a
    /// write here just committed, says so ([`Maintenance::due`]).
    fn note_due(&self, table_id: u64, dataset: &Dataset) {
        let fragments = dataset.manifest.fragments.iter();
        if self
            .maintenance
            .due(dataset.manifest.version, fragments.map(|f| f.physical_rows))
        {
            self.due
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .found
                .insert(table_id);
        }
    }

    /// Commits a DELETE, UPDATE or MERGE on `meta`'s table as one new version, under
    /// `operation` (its id and [`crate::dml::statement_digest`]). `matched` finds the rows
    /// at a version ([`crate::dml::Matched`]); it runs on the latest version Metasrv
    /// describes, and again on the new latest whenever the commit loses to a write it
    /// conflicts with (Lance's conflict resolution: a change rebases onto an append, and
    /// conflicts with another change or a compaction of the same rows), so the committed
    /// change is always computed from the version it replaces. The rows replaced are
    /// marked in deletion vectors and the new rows written as new fragments: Lance's
    /// `Delete` (nothing new), `Append` (nothing replaced: a MERGE that only inserts) or
    /// `Update` in rewrite-rows mode. Returns the commit and the rows changed (replaced,
    /// plus inserted): `None` for a replay (the statement committed before under the same
    /// id and digest; nothing is done again). Nothing to change: no new version, and the
    /// latest is returned.
    ///
    /// # Errors
    /// [`QueryError::Conflict`] when the id was used with another statement;
    /// [`QueryError::NotFound`] when the table was dropped; `matched`'s errors;
    /// [`QueryError::Aborted`] past the retry budget; [`QueryError::OutcomeUnknown`] when
    /// Metasrv never gave a definite answer; [`QueryError::Lance`] otherwise.
    pub async fn change<'a, F>(
        &self,
        meta: &TableMeta,
        change: crate::dml::Change,
        operation: (String, Digest),
        matched: F,
    ) -> Result<(Committed, Option<u64>), QueryError>
    where
        F: Fn(
            Arc<Dataset>,
        ) -> futures::future::BoxFuture<'a, Result<crate::dml::Matched, QueryError>>,
    {
        use crate::dml::Change;
        let table = format!("{}.{}", meta.namespace, meta.name);
        let what = change.keyword();
        lake_core::registry::validate_operation_id(&operation.0)
            .map_err(|e| QueryError::InvalidArgument(e.to_string()))?;
        let mut last_error = None;
        for attempt in 0..APPEND_ATTEMPTS_MAX {
            if attempt > 0 {
                let pause = rand::random::<u64>() % APPEND_PAUSE_MAX_MS.min(20 * attempt as u64);
                tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
            }
            let description = self.describe(meta, Some(&operation.0)).await?;
            if let Some(committed) = description.operation {
                return replay(
                    &table,
                    &operation.0,
                    committed,
                    &[operation.1],
                    description.revision,
                )
                .map(|c| (c, None));
            }
            let unchanged = |version| Committed {
                version,
                replayed: false,
                revision: description.revision,
            };
            let Some(latest) = description.versions.last().map(|v| v.version) else {
                return Ok((unchanged(0), Some(0)));
            };
            // A MERGE read the whole table: it commits on exactly what it read.
            let only = (change == Change::Merge).then_some(latest + 1);
            let store = Arc::new(self.writer(meta, Some(operation.clone()), only));
            let dataset = match self.load_version(meta, latest, store.clone()).await {
                Ok(dataset) => Arc::new(dataset),
                // The manifest Metasrv named moved from its staging path to its final one
                // (or the version expired) since: describe the table again.
                Err(e @ lance::Error::NotFound { .. }) => {
                    tracing::debug!(error = %e, "the version a {what} read moved; re-reading the table");
                    last_error = Some(e);
                    continue;
                }
                Err(e) => return Err(cannot_open(meta, latest, &e)),
            };
            if dataset.manifest.uses_stable_row_ids() {
                return Err(QueryError::Unsupported(format!(
                    "{what} on {table}, a dataset with stable row ids (Lake writes none)"
                )));
            }
            let crate::dml::Matched {
                rows,
                addresses,
                inserted,
            } = matched(dataset.clone()).await?;
            let mut new_fragments = match change {
                Change::Delete => {
                    rows.try_for_each(|_| futures::future::ready(Ok(())))
                        .await?;
                    Vec::new()
                }
                Change::Update | Change::Merge => {
                    self.write_fragments(meta, what, &dataset, rows).await?
                }
            };
            new_fragments.retain(|f| f.physical_rows != Some(0));
            let addresses =
                std::mem::take(&mut *addresses.lock().unwrap_or_else(|p| p.into_inner()));
            let count = addresses.len() + inserted.load(std::sync::atomic::Ordering::Relaxed);
            if addresses.is_empty() && new_fragments.is_empty() {
                return Ok((unchanged(latest), Some(0)));
            }
            let (updated_fragments, removed_fragment_ids) =
                mark_deleted(&dataset, &addresses).await.map_err(|e| {
                    QueryError::Lance(format!(
                        "{what} on {table}: marking rows deleted: {}",
                        first_line(&e.to_string())
                    ))
                })?;
            let operation_done = if addresses.is_empty() {
                // A MERGE that only inserts is an append (it rebases onto anything).
                Operation::Append {
                    fragments: new_fragments,
                }
            } else if new_fragments.is_empty() {
                Operation::Delete {
                    updated_fragments,
                    deleted_fragment_ids: removed_fragment_ids,
                    predicate: String::new(),
                }
            } else {
                Operation::Update {
                    removed_fragment_ids,
                    updated_fragments,
                    new_fragments,
                    // Rewrite-rows mode: the changed rows move to new fragments, no
                    // column of an existing fragment is modified.
                    fields_modified: Vec::new(),
                    compacted_sstables: Vec::new(),
                    fields_for_preserving_frag_bitmap: dataset
                        .schema()
                        .fields_pre_order()
                        .filter_map(|f| u32::try_from(f.id).ok())
                        .collect(),
                    update_mode: Some(lance::dataset::transaction::UpdateMode::RewriteRows),
                    inserted_rows_filter: None,
                    updated_fragment_offsets: None,
                }
            };
            let mut commit = CommitBuilder::new(dataset.clone())
                .with_affected_rows(lance_select::RowAddrTreeMap::from(addresses));
            if only.is_some() {
                // One attempt: a lost race re-runs the MERGE here, not a rebase in Lance.
                commit = commit.with_max_retries(1);
            }
            let result = commit
                .execute(Transaction::new(latest, operation_done, None))
                .await
                .map(|dataset| self.note_due(meta.id, &dataset));
            match settle(meta, what, result, &store, Some(&operation))? {
                Settled::Committed(c) if c.replayed => return Ok((c, None)),
                Settled::Committed(c) => return Ok((c, Some(count))),
                Settled::Lost(e) => last_error = Some(e),
            }
        }
        if let Some(e) = last_error {
            tracing::warn!(error = %e, table = %table, "{what} gave up after losing the commit race {APPEND_ATTEMPTS_MAX} times");
        }
        Err(QueryError::Aborted(format!(
            "the {what} on {table} lost the commit race to other writers {APPEND_ATTEMPTS_MAX} times and committed nothing; retrying it is safe (under operation id {:?} it never commits twice)",
            operation.0
        )))
    }

    /// Writes `rows` (batches of `dataset`'s schema) as new fragments of `dataset` for a
    /// `what` (UPDATE, MERGE), not committed; a row stream's own error is what this fails
    /// with.
    async fn write_fragments(
        &self,
        meta: &TableMeta,
        what: &str,
        dataset: &Arc<Dataset>,
        rows: RowStream,
    ) -> Result<Vec<lance_table::format::Fragment>, QueryError> {
        let schema = Arc::new(arrow::datatypes::Schema::from(dataset.schema()));
        let (source, failure) = writer_source(schema, rows);
        let params = WriteParams {
            mode: WriteMode::Append,
            session: Some(self.session.clone()),
            ..WriteParams::default()
        };
        let written = InsertBuilder::new(dataset.clone())
            .with_params(&params)
            .execute_uncommitted_stream(source)
            .await
            .map_err(|e| failure.or(classify(meta, what, e)))?;
        match written.operation {
            Operation::Append { fragments } | Operation::Overwrite { fragments, .. } => {
                Ok(fragments)
            }
            other => Err(QueryError::Execution(format!(
                "writing the rows of a {what} gave Lance operation {other}, not an append"
            ))),
        }
    }

    /// Adds to `referenced` the content addresses (sha256) of the FILE values in every
    /// version `table` (a state from this replica's catalog cache, caught up with Metasrv)
    /// retains, reading each fragment once (`scanned`: fragment ids already read, kept
    /// across calls, so a second call with a newer state reads only what was committed
    /// since). A fragment is read at the oldest retained version that has it, where the
    /// fewest of its rows are deleted (rows are never added to a fragment, only deleted),
    /// so a row any retained version has is counted. A cache keeps every version Metasrv
    /// retains and, lagging, more: never fewer.
    ///
    /// # Errors
    /// [`QueryError::Lance`] when a version cannot be read.
    pub async fn referenced_files(
        &self,
        table: &Arc<TableState>,
        scanned: &mut HashSet<u32>,
        referenced: &mut HashSet<String>,
    ) -> Result<(), QueryError> {
        let meta = &table.meta;
        let schema = crate::engine::schema_from_ipc(&meta.schema_ipc)?;
        let columns: Vec<&str> = schema
            .fields()
            .iter()
            .filter(|f| lake_sdk::file::is_file_field(f))
            .map(|f| f.name().as_str())
            .collect();
        if columns.is_empty() {
            return Ok(());
        }
        let read = |e: lance::Error| {
            QueryError::Lance(format!(
                "reading the FILE values of {}.{}: {}",
                meta.namespace,
                meta.name,
                first_line(&e.to_string())
            ))
        };
        for record in &table.versions {
            let dataset = self.open(table, record.version).await?;
            let fragments: Vec<_> = dataset
                .manifest
                .fragments
                .iter()
                .filter(|f| u32::try_from(f.id).is_ok_and(|id| scanned.insert(id)))
                .cloned()
                .collect();
            if fragments.is_empty() {
                continue;
            }
            let mut scan = dataset.scan();
            scan.with_fragments(fragments);
            scan.project(&columns).map_err(read)?;
            let mut batches = scan.try_into_stream().await.map_err(read)?;
            while let Some(batch) = batches.try_next().await.map_err(read)? {
                for column in batch.columns() {
                    let sha256 = column
                        .as_any()
                        .downcast_ref::<arrow::array::StructArray>()
                        .and_then(|s| s.column_by_name("sha256"))
                        .and_then(|c| c.as_any().downcast_ref::<arrow::array::StringArray>())
                        .ok_or_else(|| {
                            QueryError::Execution(format!(
                                "a FILE column of {}.{} has no sha256 strings",
                                meta.namespace, meta.name
                            ))
                        })?;
                    referenced.extend(sha256.iter().flatten().map(str::to_string));
                }
            }
        }
        Ok(())
    }

    /// Forgets what this replica kept about table `table_id` for maintenance (its lock,
    /// when it saw versions expire): the table was dropped.
    pub fn forget(&self, table_id: u64) {
        self.busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&table_id);
        self.expiries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .forget(table_id);
    }

    /// This replica's maintenance lock on table `table_id`: one run per table at a time
    /// (waits for the run in progress).
    pub async fn maintenance_lock(&self, table_id: u64) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = self
            .busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(table_id)
            .or_default()
            .clone();
        lock.lock_owned().await
    }

    /// Compacts the small fragments of `table` (a state from this replica's catalog cache)
    /// into a new version, committed through Metasrv like any write (Lance's
    /// `compact_files`: fragments under [`Maintenance::target_rows_per_fragment`] rows
    /// merge in insertion order, deletions are materialized). `committed` is `None` when
    /// nothing needed compacting. A compaction that races an append is rebased onto it by
    /// Lance (a rewrite and an append touch different fragments); one that races another
    /// rewrite of the same fragments commits nothing. Hold [`Self::maintenance_lock`].
    ///
    /// # Errors
    /// [`QueryError::Aborted`] when another rewrite of the same fragments committed
    /// first; [`QueryError::OutcomeUnknown`] when Metasrv never answered the commit;
    /// [`QueryError::Lance`] when files cannot be read or written.
    pub async fn compact(&self, table: &Arc<TableState>) -> Result<Optimized, QueryError> {
        let name = format!("{}.{}", table.meta.namespace, table.meta.name);
        let mut optimized = Optimized::default();
        let Some((mut dataset, store)) = self.open_for_maintenance(table).await? else {
            return Ok(optimized);
        };
        let options = CompactionOptions {
            target_rows_per_fragment: self.maintenance.target_rows_per_fragment,
            ..CompactionOptions::default()
        };
        let metrics = compact_files(&mut dataset, options, None)
            .await
            .map_err(|e| {
                if let Some(gone) = store.gone().or_else(|| metasrv_table_gone(&e)) {
                    QueryError::NotFound(format!(
                        "the compaction of {name} committed nothing: {gone}"
                    ))
                } else if is_commit_conflict(&e) {
                    QueryError::Aborted(format!(
                        "the compaction of {name} lost to another rewrite of the same fragments and committed nothing; running OPTIMIZE again is safe"
                    ))
                } else {
                    QueryError::Lance(format!(
                        "compacting {name}: {}",
                        first_line(&e.to_string())
                    ))
                }
            })?;
        optimized.fragments_removed = metrics.fragments_removed;
        optimized.fragments_added = metrics.fragments_added;
        if metrics.fragments_removed > 0 {
            optimized.committed = store.outcome(&format!(
                "the compaction of {name} may or may not have committed ({{why}}); its rows are the same either way, and running OPTIMIZE again is safe"
            ))?;
        }
        Ok(optimized)
    }

    /// Builds scalar index `request.name` on `request.column` of `table` (a state from
    /// this replica's catalog cache) over every row of its latest version, committed
    /// through Metasrv as a new version (Lance's `DatasetIndexExt::create_index`; a
    /// concurrent append is rebased onto, its fragments left for the next
    /// [`Self::update_indices`]). Returns the version committed, `None` when
    /// `IF NOT EXISTS` found the name taken. Hold [`Self::maintenance_lock`].
    ///
    /// # Errors
    /// [`QueryError::Conflict`] when the table has an index of that name;
    /// [`QueryError::InvalidArgument`] for a column the table lacks or whose type the
    /// kind cannot index ([`crate::index::check_column`]); [`QueryError::OutcomeUnknown`]
    /// when Metasrv never answered the commit; [`QueryError::Aborted`] when a concurrent
    /// rewrite of the same fragments won (nothing committed; safe to run again);
    /// [`QueryError::Lance`] when training or files fail.
    pub async fn create_index(
        &self,
        table: &Arc<TableState>,
        request: &crate::index::CreateIndex,
    ) -> Result<Option<Committed>, QueryError> {
        let name = format!("{}.{}", table.meta.namespace, table.meta.name);
        let Some((mut dataset, store)) = self.open_for_maintenance(table).await? else {
            return Err(QueryError::InvalidArgument(format!(
                "{name} has no version yet to index"
            )));
        };
        let index = &request.name;
        if index_names(&dataset, &name).await?.contains(index) {
            if request.if_not_exists {
                return Ok(None);
            }
            return Err(QueryError::Conflict(format!(
                "{name} already has an index named {index}; drop it first (DROP INDEX {index} ON {name}) or say CREATE INDEX IF NOT EXISTS"
            )));
        }
        let column = &request.column;
        let Some(field) = dataset.schema().field(column) else {
            let columns: Vec<&str> = dataset
                .schema()
                .fields
                .iter()
                .map(|f| f.name.as_str())
                .collect();
            return Err(QueryError::InvalidArgument(format!(
                "{name} has no column {column}; its columns are {}",
                columns.join(", ")
            )));
        };
        crate::index::check_column(request.kind, &name, column, &field.data_type())?;
        let (kind, params) = request.kind.lance();
        dataset
            .create_index(
                &[column.as_str()],
                kind,
                Some(index.clone()),
                &params,
                false,
            )
            .await
            .map_err(|e| {
                maintenance_failure(
                    &format!("building index {index} on {name}({column})"),
                    &e,
                    &store,
                )
            })?;
        store.outcome(&format!(
            "building index {index} on {name} may or may not have committed ({{why}}); CREATE INDEX IF NOT EXISTS is safe to run again"
        ))
    }

    /// Removes index `name` from `table` (its files go with the versions that reference
    /// them, by [`Self::clean_up`]), committed through Metasrv as a new version (Lance's
    /// `DatasetIndexExt::drop_index`). Returns the version committed, `None` when
    /// `if_exists` found no such index. Hold [`Self::maintenance_lock`].
    ///
    /// # Errors
    /// [`QueryError::NotFound`] for an index the table does not have, naming the ones it
    /// has; [`QueryError::OutcomeUnknown`] when Metasrv never answered the commit;
    /// [`QueryError::Aborted`] when a concurrent rewrite won; [`QueryError::Lance`] when
    /// files fail.
    pub async fn drop_index(
        &self,
        table: &Arc<TableState>,
        index: &str,
        if_exists: bool,
    ) -> Result<Option<Committed>, QueryError> {
        let name = format!("{}.{}", table.meta.namespace, table.meta.name);
        let missing = |names: Vec<String>| {
            QueryError::NotFound(format!(
                "{name} has no index named {index}; its indexes are: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ))
        };
        let Some((mut dataset, store)) = self.open_for_maintenance(table).await? else {
            return if if_exists {
                Ok(None)
            } else {
                Err(missing(Vec::new()))
            };
        };
        let names = index_names(&dataset, &name).await?;
        if !names.iter().any(|n| n == index) {
            return if if_exists {
                Ok(None)
            } else {
                Err(missing(names))
            };
        }
        dataset.drop_index(index).await.map_err(|e| {
            maintenance_failure(&format!("dropping index {index} of {name}"), &e, &store)
        })?;
        store.outcome(&format!(
            "dropping index {index} of {name} may or may not have committed ({{why}}); DROP INDEX IF EXISTS is safe to run again"
        ))
    }

    /// Brings `table`'s indexes up to date with its latest version: the fragments appended
    /// since an index was built or last updated are indexed, merged into its newest
    /// segment (Lance's `optimize_indices` with its default options), committed through
    /// Metasrv as one new version. `None` when every index covers every fragment (or the
    /// table has none). Hold [`Self::maintenance_lock`].
    ///
    /// # Errors
    /// [`QueryError::OutcomeUnknown`] when Metasrv never answered the commit;
    /// [`QueryError::Aborted`] when a concurrent rewrite of the same fragments won;
    /// [`QueryError::Lance`] when files cannot be read or written.
    pub async fn update_indices(
        &self,
        table: &Arc<TableState>,
    ) -> Result<Option<Committed>, QueryError> {
        let name = format!("{}.{}", table.meta.namespace, table.meta.name);
        let Some((mut dataset, store)) = self.open_for_maintenance(table).await? else {
            return Ok(None);
        };
        let indices = user_indices(&dataset, &name).await?;
        let mut covered: HashMap<&str, roaring::RoaringBitmap> = HashMap::new();
        for index in &indices {
            let fragments = covered.entry(index.name.as_str()).or_default();
            if let Some(bitmap) = &index.fragment_bitmap {
                *fragments |= bitmap;
            }
        }
        let fragments: Vec<u32> = dataset
            .get_fragments()
            .iter()
            .map(|f| u32::try_from(f.id()).unwrap_or(u32::MAX))
            .collect();
        let stale = covered
            .values()
            .any(|indexed| fragments.iter().any(|id| !indexed.contains(*id)));
        if !stale {
            return Ok(None);
        }
        dataset
            .optimize_indices(&lance_index::optimize::OptimizeOptions::default())
            .await
            .map_err(|e| {
                maintenance_failure(&format!("updating the indexes of {name}"), &e, &store)
            })?;
        store.outcome(&format!(
            "updating the indexes of {name} may or may not have committed ({{why}}); the next maintenance run updates them either way"
        ))
    }

    /// Removes the files only expired versions of `table` (a state from this replica's
    /// catalog cache) reference, and records what went in `optimized`: the versions that
    /// this replica saw expired at least [`Maintenance::cleanup_grace_ms`] ago
    /// ([`lake_core::ExpiryWatch`]: a reader that pinned one while it was retained, here or
    /// on another replica, finishes first; a cache never runs ahead of Metasrv, so a stale
    /// one only keeps more), with the files no retained version references; and files no
    /// version references (an interrupted write's) once Lance's 7 days for unverified
    /// files have passed (Lance's `cleanup_old_versions`). Skipped,
    /// saying why, while a retained version's manifest is still at its staging path (Lance
    /// lists final manifests only, so it would not see the files that version references).
    /// Hold [`Self::maintenance_lock`].
    ///
    /// # Errors
    /// [`QueryError::Lance`] when files cannot be listed, read or deleted.
    pub async fn clean_up(
        &self,
        table: &Arc<TableState>,
        optimized: &mut Optimized,
    ) -> Result<(), QueryError> {
        let name = format!("{}.{}", table.meta.namespace, table.meta.name);
        if let Some(staged) = table.versions.iter().find(|v| {
            let file = v.manifest.path.rsplit('/').next().unwrap_or_default();
            ManifestNamingScheme::detect_scheme(file).is_none()
        }) {
            optimized.cleanup_skipped = Some(format!(
                "version {} of {name} is still on its staging manifest",
                staged.version
            ));
            return Ok(());
        }
        let now_ms = i64::try_from(crate::ticket::now_ms()).unwrap_or(i64::MAX);
        let before = {
            let mut expiries = self.expiries.lock().unwrap_or_else(|p| p.into_inner());
            expiries.observe(table.meta.id, table.oldest_version(), now_ms);
            expiries.cleanup_before(table.meta.id, now_ms, self.maintenance.cleanup_grace_ms)
        };
        if before <= 1 {
            // Nothing expired long enough ago.
            return Ok(());
        }
        let Some((dataset, _)) = self.open_for_maintenance(table).await? else {
            return Ok(());
        };
        let policy = CleanupPolicy {
            before_version: Some(before),
            error_if_tagged_old_versions: false,
            ..CleanupPolicy::default()
        };
        let removed: RemovalStats = dataset.cleanup_with_policy(policy).await.map_err(|e| {
            QueryError::Lance(format!(
                "removing expired versions of {name}: {}",
                first_line(&e.to_string())
            ))
        })?;
        optimized.versions_removed = removed.old_versions;
        optimized.files_removed = removed.data_files_removed
            + removed.deletion_files_removed
            + removed.transaction_files_removed
            + removed.index_files_removed;
        optimized.bytes_removed = removed.bytes_removed;
        Ok(())
    }

    /// `table`'s latest cached version, opened to be written (commits go through Metasrv)
    /// with its manifest store; `None` before the table's first version.
    async fn open_for_maintenance(
        &self,
        table: &Arc<TableState>,
    ) -> Result<Option<(Dataset, Arc<MetasrvManifests>)>, QueryError> {
        let meta = &table.meta;
        let Some(latest) = table.versions.last().map(|v| v.version) else {
            return Ok(None);
        };
        let store = Arc::new(self.writer(meta, None, None));
        let mut moves = 0;
        loop {
            match self.load_version(meta, latest, store.clone()).await {
                Ok(dataset) => return Ok(Some((dataset, store))),
                // The manifest Metasrv named moved from its staging path to its final one
                // since (a concurrent commit finalized it): the store asks Metasrv again.
                Err(lance::Error::NotFound { .. }) if moves < MANIFEST_MOVES_MAX => moves += 1,
                Err(e) => return Err(cannot_open(meta, latest, &e)),
            }
        }
    }

    /// `meta`'s dataset at `version`, its manifests resolved (and any commit made)
    /// through `store` (Lance's `DatasetBuilder` with an external manifest store).
    ///
    /// # Errors
    /// [`QueryError::Lance`] when the version's manifest or files cannot be read.
    async fn open_version(
        &self,
        meta: &TableMeta,
        version: u64,
        store: Arc<dyn ExternalManifestStore>,
    ) -> Result<Dataset, QueryError> {
        self.load_version(meta, version, store)
            .await
            .map_err(|e| cannot_open(meta, version, &e))
    }

    /// [`Self::open_version`] with Lance's error.
    async fn load_version(
        &self,
        meta: &TableMeta,
        version: u64,
        store: Arc<dyn ExternalManifestStore>,
    ) -> lance::Result<Dataset> {
        DatasetBuilder::from_uri(self.uri(meta))
            .with_version(version)
            .with_commit_handler(Arc::new(ExternalManifestCommitHandler {
                external_manifest_store: store,
            }))
            .with_session(self.session.clone())
            .load()
            .await
    }

    /// The manifest store a write to `meta` commits through, under `operation` (an
    /// append's id and payload digest), that commits only as `only_version` when given
    /// ([`MetasrvManifests::only_version`]).
    fn writer(
        &self,
        meta: &TableMeta,
        operation: Option<(String, Digest)>,
        only_version: Option<u64>,
    ) -> MetasrvManifests {
        MetasrvManifests {
            metasrv: self.metasrv.clone(),
            local_dir: self.local_dir(meta),
            meta: meta.clone(),
            operation,
            only_version,
            committed: Mutex::new(None),
            unknown: Mutex::new(None),
            refused: Mutex::new(false),
            gone: Mutex::new(None),
        }
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
                "table {}.{} was dropped (and recreated) while this write was planned",
                meta.namespace, meta.name
            )));
        }
        Ok(description)
    }
}

/// Sizes Lance's compute pool (the threads that encode pages and train indexes) to this
/// machine's cores, by setting `LANCE_CPU_THREADS`, unless the environment sets it. Lance's
/// default reserves two cores for I/O and so leaves a 2-core replica one encoding thread;
/// a replica does its I/O on tokio. With two, SF 1 lineitem appends went from 1.26–1.34 to
/// 1.71–1.78 M rows/s and TPC-H did not change (`lake-bench`, bench/README.md "Round 5").
///
/// # Safety
/// Call it first thing in `main`, before any thread is started: it changes the process
/// environment (`std::env::set_var`).
pub unsafe fn size_lance_compute_pool() {
    if std::env::var_os("LANCE_CPU_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        // SAFETY: the caller guarantees no other thread runs yet.
        unsafe { std::env::set_var("LANCE_CPU_THREADS", cores.to_string()) };
    }
}

/// The rows of an append: batches of the table's schema, or the error that ends them.
pub type RowStream = std::pin::Pin<
    Box<dyn futures::Stream<Item = Result<RecordBatch, QueryError>> + Send + 'static>,
>;

/// The first error of the rows a Lance writer reads ([`writer_source`]).
#[derive(Clone, Default)]
struct RowsFailure(Arc<Mutex<Option<QueryError>>>);

impl RowsFailure {
    /// The rows' own error if they failed (a refused batch, a client that broke off),
    /// else `lance`: what the write fails with, not Lance's wrapping of the rows' error.
    fn or(&self, lance: QueryError) -> QueryError {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or(lance)
    }
}

/// Bytes of Arrow data (the slices' buffers) gathered into one batch for the Lance writer.
/// Lance's v2 writer awaits the pages each batch completes before it takes the next, and
/// Flight clients send batches of a few thousand rows; gathered, the writer pauses once per
/// 16 MiB, and receiving goes on meanwhile ([`writer_source`]). With that, SF 1 lineitem
/// appended in 500,000-row commits of 8,192-row batches went from 0.38 to 0.48 times
/// pylance's rows/s (`lake-bench --sections ingest`, at 32 MiB). Once the payload digest no
/// longer held the rows back (BLAKE3), every stage of an append filled to its bound: 16 MiB
/// appends as fast as 32 MiB did (0.67 / 0.65 against 0.62 / 0.65 times pylance) and a
/// replica grows by some 75 MiB less while it takes a 300 MiB file (`test_ingest.py`).
const WRITE_BATCH_BYTES: usize = 16 * 1024 * 1024;
/// Gathered batches waiting for the Lance writer while the next is received and gathered.
const WRITE_AHEAD_BATCHES: usize = 1;
/// Received batches waiting for an append's payload digest ([`PayloadDigest::beside`]).
const DIGEST_AHEAD_BATCHES: usize = 4;

/// `rows` (batches of `schema`) as the DataFusion stream a Lance writer reads, without
/// empty batches; their first error is kept in the [`RowsFailure`] returned with it.
///
/// The rows are pulled on a task of their own (receiving, decoding and whatever `rows`
/// computes, such as an append's payload digest, run while Lance encodes) and gathered
/// into batches of about [`WRITE_BATCH_BYTES`] ([`gather`]). Memory stays bounded: one
/// batch being gathered, [`WRITE_AHEAD_BATCHES`] waiting, the one Lance writes. The task
/// ends when the writer stops reading, and lets go of `rows` before the writer sees their
/// end.
fn writer_source(
    schema: SchemaRef,
    rows: RowStream,
) -> (
    datafusion::execution::SendableRecordBatchStream,
    RowsFailure,
) {
    let (sender, receiver) = tokio::sync::mpsc::channel(WRITE_AHEAD_BATCHES);
    tokio::spawn(gather(rows, WRITE_BATCH_BYTES, sender));
    let failure = RowsFailure::default();
    let failed = failure.clone();
    let stream = tokio_stream::wrappers::ReceiverStream::new(receiver).map_err(move |e| {
        let message = e.to_string();
        failed
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
        datafusion::error::DataFusionError::Execution(message)
    });
    let source =
        Box::pin(datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(schema, stream));
    (source, failure)
}

/// Sends the rows of `rows` to `sender` in batches of at least `batch_bytes` of Arrow data
/// (the last may be smaller; a batch that large on its own passes as it is), concatenated with
/// Arrow's `concat_batches`, which refuses batches whose column types differ. The first
/// error, of `rows` or of concatenation, is sent and ends the rows. Returns when the
/// receiver is gone, without pulling more.
async fn gather(
    mut rows: RowStream,
    batch_bytes: usize,
    sender: tokio::sync::mpsc::Sender<Result<RecordBatch, QueryError>>,
) {
    let mut pending: Vec<RecordBatch> = Vec::new();
    let mut pending_bytes = 0;
    loop {
        let next = tokio::select! {
            next = rows.next() => next,
            () = sender.closed() => return,
        };
        let batch = match next {
            Some(Ok(batch)) if batch.num_rows() == 0 => continue,
            Some(Ok(batch)) => batch,
            Some(Err(e)) => {
                let _ = sender.send(Err(e)).await;
                return;
            }
            None => break,
        };
        pending_bytes += batch
            .columns()
            .iter()
            .map(|column| column.to_data().get_slice_memory_size().unwrap_or(0))
            .sum::<usize>();
        pending.push(batch);
        if pending_bytes >= batch_bytes {
            let batch = concat(std::mem::take(&mut pending));
            pending_bytes = 0;
            if sender.send(batch).await.is_err() {
                return;
            }
        }
    }
    // Whatever `rows` holds (an append's payload digest) is let go before the writer sees
    // the end: the sender goes last.
    drop(rows);
    if !pending.is_empty() {
        let _ = sender.send(concat(pending)).await;
    }
}

/// `batches` (at least one, all of the first one's column types) as one batch; a single
/// batch as it is.
fn concat(mut batches: Vec<RecordBatch>) -> Result<RecordBatch, QueryError> {
    if batches.len() == 1 {
        return Ok(batches.remove(0));
    }
    let schema = batches[0].schema();
    Ok(arrow::compute::concat_batches(&schema, &batches)?)
}

/// The answer to an append whose operation id `id` already committed `(version, its
/// payload digest)` ([`replay`]). Without the earlier releases' digest of the rows (they
/// were read to write, not kept), a digest an earlier release committed cannot be compared:
/// then [`QueryError::Aborted`], as sending the rows again compares them under both.
fn replay_append(
    table: &str,
    id: &str,
    (version, committed): (u64, Digest),
    digest: &AppendDigest,
    revision: u64,
) -> Result<Committed, QueryError> {
    if digest.earlier.is_none() && !AppendDigest::is_current(&committed) {
        return Err(QueryError::Aborted(format!(
            "operation id {id:?} committed version {version} of {table} meanwhile, through a replica of an earlier Lake release whose payload digest cannot be compared with rows already sent; nothing was committed twice, and sending the same append again compares the rows under both digests"
        )));
    }
    replay(table, id, (version, committed), &digest.all(), revision)
}

/// The answer to a write whose operation id `id` already committed `(version, its
/// payload digest)`: a replay when that digest is one of `digests` (the digests this
/// write's payload may have been committed under), a conflict otherwise.
fn replay(
    table: &str,
    id: &str,
    (version, committed): (u64, Digest),
    digests: &[Digest],
    revision: u64,
) -> Result<Committed, QueryError> {
    if digests.contains(&committed) {
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

/// The digest thread of [`PayloadDigest::beside`]: its digest and row count.
pub type DigestTask = tokio::task::JoinHandle<Result<(AppendDigest, u64), QueryError>>;

/// An append's payload digest: [`BLAKE3_DIGEST_TAG`] followed by the first 28 bytes of
/// BLAKE3 over the Arrow IPC stream of its batches (schema message, then each batch).
/// When the rows were read to check a replay, also the digest Lake releases before this
/// one committed the same rows under: SHA-256 over the same stream, all 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendDigest {
    /// The digest an append commits under its operation id.
    pub digest: Digest,
    /// SHA-256 of the same stream, when asked for ([`PayloadDigest::of`]).
    pub earlier: Option<Digest>,
}

/// The first bytes of an append's payload digest made by BLAKE3 ([`AppendDigest`]). A
/// digest without them was made by SHA-256 (by earlier Lake releases), except with
/// probability 2^-32 for a SHA-256 digest that starts with these bytes by chance.
pub const BLAKE3_DIGEST_TAG: [u8; 4] = *b"LkB3";

impl AppendDigest {
    /// Whether `digest` was made as this release makes append digests (it carries
    /// [`BLAKE3_DIGEST_TAG`]).
    pub fn is_current(digest: &Digest) -> bool {
        digest.starts_with(&BLAKE3_DIGEST_TAG)
    }

    /// The digests the rows may have been committed under: this release's, then the
    /// earlier one's if computed.
    pub fn all(&self) -> Vec<Digest> {
        std::iter::once(self.digest).chain(self.earlier).collect()
    }
}

/// The payload digest of an append ([`AppendDigest`]), computed as its batches pass.
///
/// BLAKE3 (the `blake3` crate, SIMD chosen at run time) hashes about 4.5 times faster than
/// SHA-256 with SHA-NI on this project's 2-core machine (5.4 against 1.2 GB/s over 64 MiB);
/// SHA-256 was 18 % of a replica's CPU while it appended SF 1 lineitem.
pub struct PayloadDigest {
    writer: arrow::ipc::writer::StreamWriter<HashWriter>,
    rows: u64,
}

/// An `io::Write` into BLAKE3 and, to check a replay against an earlier release's digest,
/// SHA-256.
struct HashWriter {
    blake3: blake3::Hasher,
    sha256: Option<sha2::Sha256>,
}

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.blake3.update(bytes);
        if let Some(sha256) = &mut self.sha256 {
            sha2::Digest::update(sha256, bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl PayloadDigest {
    /// A digest of batches of `schema`; `earlier` also computes the earlier releases'
    /// digest ([`AppendDigest::earlier`]).
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] when Arrow cannot encode the schema.
    fn new(schema: &SchemaRef, earlier: bool) -> Result<Self, QueryError> {
        let hasher = HashWriter {
            blake3: blake3::Hasher::new(),
            sha256: earlier.then(<sha2::Sha256 as sha2::Digest>::new),
        };
        Ok(Self {
            writer: arrow::ipc::writer::StreamWriter::try_new(hasher, schema)?,
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
    pub fn finish(mut self) -> Result<(AppendDigest, u64), QueryError> {
        self.writer.finish()?;
        let HashWriter { blake3, sha256 } = self.writer.into_inner()?;
        let mut digest = Digest::default();
        digest[..BLAKE3_DIGEST_TAG.len()].copy_from_slice(&BLAKE3_DIGEST_TAG);
        let hash = blake3.finalize();
        let rest = digest.len() - BLAKE3_DIGEST_TAG.len();
        digest[BLAKE3_DIGEST_TAG.len()..].copy_from_slice(&hash.as_bytes()[..rest]);
        let earlier = sha256.map(|sha256| sha2::Digest::finalize(sha256).into());
        Ok((AppendDigest { digest, earlier }, self.rows))
    }

    /// A digest computed beside the rows, on a blocking thread of its own: the batches sent
    /// to the returned sender are hashed in order (this release's digest only), and the
    /// handle gives the digest and row count once every
    /// clone of the sender is gone. At most [`DIGEST_AHEAD_BATCHES`] batches wait; the
    /// sender fails once the thread has stopped on an error, which the handle then gives.
    ///
    /// # Errors
    /// As [`Self::new`]; the handle's, as [`Self::write`] and [`Self::finish`].
    pub fn beside(
        schema: &SchemaRef,
    ) -> Result<(tokio::sync::mpsc::Sender<RecordBatch>, DigestTask), QueryError> {
        let mut digest = Self::new(schema, false)?;
        let (sender, mut receiver) = tokio::sync::mpsc::channel(DIGEST_AHEAD_BATCHES);
        let handle = tokio::task::spawn_blocking(move || {
            while let Some(batch) = receiver.blocking_recv() {
                digest.write(&batch)?;
            }
            digest.finish()
        });
        Ok((sender, handle))
    }

    /// The digest, with the earlier releases' ([`AppendDigest::earlier`]), and the row
    /// count of all of `rows` (batches with rows only, as an append writes them).
    ///
    /// # Errors
    /// The first error of `rows`, or Arrow's.
    pub async fn of(
        schema: &SchemaRef,
        mut rows: RowStream,
    ) -> Result<(AppendDigest, u64), QueryError> {
        let mut digest = Self::new(schema, true)?;
        while let Some(batch) = rows.next().await {
            let batch = batch?;
            if batch.num_rows() > 0 {
                digest.write(&batch)?;
            }
        }
        digest.finish()
    }
}

/// `transaction`'s new fragments as an append onto `read_version`, the latest version
/// Metasrv described: the files written for a dataset's first version (an Overwrite) when
/// another writer created the dataset first, or an append written while other commits
/// landed. Reading from the latest version, Lance checks only the commits after it; the
/// ones before could not conflict with an append of Lake's (appends and compactions
/// rewrite no fragment an append adds), and their manifests may be gone: the version the
/// files were written against can expire, and its files be cleaned up, while the append
/// keeps losing the race.
fn as_append(transaction: Transaction, read_version: u64) -> Transaction {
    match transaction.operation {
        Operation::Overwrite { fragments, .. } | Operation::Append { fragments } => {
            Transaction::new(read_version, Operation::Append { fragments }, None)
        }
        operation => Transaction {
            operation,
            ..transaction
        },
    }
}

/// Extends the deletion vectors of `dataset`'s fragments with `addresses` (Lance row
/// addresses: fragment id in the upper 32 bits, offset in the lower 32), writing one new
/// deletion file per fragment touched. Returns the fragments with their new deletion
/// files, and the ids of fragments none of whose rows are left (Lance's `Delete`
/// operation drops them).
///
/// # Errors
/// Lance's, when a deletion file cannot be read or written, or an address names no
/// fragment of `dataset`.
async fn mark_deleted(
    dataset: &Dataset,
    addresses: &roaring::RoaringTreemap,
) -> lance::Result<(Vec<lance_table::format::Fragment>, Vec<u64>)> {
    let mut updated = Vec::new();
    let mut removed = Vec::new();
    for (fragment_id, offsets) in addresses.bitmaps() {
        let fragment = dataset.get_fragment(fragment_id as usize).ok_or_else(|| {
            lance::Error::invalid_input(format!(
                "row address names fragment {fragment_id}, which version {} does not have",
                dataset.manifest.version
            ))
        })?;
        match fragment.extend_deletions(offsets.iter()).await? {
            Some(fragment) => updated.push(fragment.metadata().clone()),
            None => removed.push(u64::from(fragment_id)),
        }
    }
    Ok((updated, removed))
}

/// The error of a Lance dataset version that cannot be opened: [`QueryError::NotFound`]
/// when Metasrv says the table is gone (dropped since it was looked up).
fn cannot_open(meta: &TableMeta, version: u64, e: &lance::Error) -> QueryError {
    if let Some(gone) = metasrv_table_gone(e) {
        return QueryError::NotFound(format!(
            "cannot open {}.{} version {version}: {gone}",
            meta.namespace, meta.name
        ));
    }
    QueryError::Lance(format!(
        "cannot open {}.{} version {version}: {}",
        meta.namespace,
        meta.name,
        first_line(&e.to_string())
    ))
}

/// What one commit attempt of a write came to ([`settle`]).
enum Settled {
    /// Committed (or an earlier attempt under the same operation id did: a replay).
    Committed(Committed),
    /// Lost the race to another writer, or read a version since cleaned up: describe the
    /// table again and try again.
    Lost(lance::Error),
}

/// The outcome of one commit attempt of a write (`what`: "append", "DELETE", "UPDATE")
/// to `meta` through `store` under `operation`, from Lance's `result` and what Metasrv
/// answered the store.
///
/// # Errors
/// [`QueryError::OutcomeUnknown`] when Metasrv never acknowledged the commit (sending the
/// same request again is safe under the operation id); Lance's other errors
/// ([`classify`]).
fn settle(
    meta: &TableMeta,
    what: &str,
    result: lance::Result<()>,
    store: &MetasrvManifests,
    operation: Option<&(String, Digest)>,
) -> Result<Settled, QueryError> {
    let table = format!("{}.{}", meta.namespace, meta.name);
    let committed = *store.committed.lock().unwrap_or_else(|p| p.into_inner());
    let unknown = store
        .unknown
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    let refused = unknown.is_none() && *store.refused.lock().unwrap_or_else(|p| p.into_inner());
    let gone = store
        .gone()
        .or_else(|| result.as_ref().err().and_then(metasrv_table_gone));
    match (result, committed) {
        (Ok(()), Some(c)) => Ok(Settled::Committed(c)),
        (Ok(()), None) => Err(QueryError::OutcomeUnknown(format!(
            "the commit of the {what} to {table} may or may not have happened ({}); sending the same request again is safe: {}",
            unknown.unwrap_or_else(|| "metasrv never acknowledged it".into()),
            operation.map_or_else(
                || "this write carries no operation id, so check the table first".to_string(),
                |(id, _)| format!("under operation id {id:?} it never commits twice")
            )
        ))),
        // The CAS said another writer with our operation id got there first.
        (Err(_), Some(c)) if c.replayed => Ok(Settled::Committed(c)),
        (Err(e), _) if is_commit_conflict(&e) => {
            tracing::debug!(error = %e, "{what} lost the compare-and-swap; re-reading the table");
            Ok(Settled::Lost(e))
        }
        // The version read was cleaned up (its history expired while this write lost
        // races): read the latest again. The table itself is checked by the next describe.
        (Err(e @ lance::Error::NotFound { .. }), _) => {
            tracing::debug!(error = %e, "the version a {what} read was cleaned up; re-reading the table");
            Ok(Settled::Lost(e))
        }
        // Metasrv definitely refused the last compare-and-swap: whatever Lance concluded
        // (it may fail to read the winner's manifest back and call the outcome unknown),
        // nothing was committed, so trying again is safe.
        (Err(e), None) if refused => {
            tracing::debug!(error = %e, "{what}: metasrv refused the commit; re-reading the table");
            Ok(Settled::Lost(e))
        }
        // The table is gone (dropped while this write ran): Metasrv refused the commit, so
        // nothing was committed.
        (Err(_), None) if unknown.is_none() && gone.is_some() => {
            Err(QueryError::NotFound(format!(
                "the {what} to {table} committed nothing: {}",
                gone.unwrap_or_default()
            )))
        }
        (Err(e), _) => Err(classify(meta, what, e)),
    }
}

/// What Metasrv said when a Lance failure carries its answer that the table (or its
/// namespace) does not exist: [`MetasrvManifests`] raises Metasrv's errors inside Lance's
/// commit as `lance::Error::IO` with the [`lake_metasrv::MetasrvError`] as the source.
fn metasrv_table_gone(e: &lance::Error) -> Option<String> {
    use lake_core::CommitError;
    use lake_metasrv::MetasrvError;
    let metasrv = match e {
        lance::Error::IO { source, .. } | lance::Error::Wrapped { error: source, .. } => {
            source.downcast_ref::<MetasrvError>()?
        }
        lance::Error::Shared { source } => return metasrv_table_gone(source),
        _ => return None,
    };
    let gone = match metasrv {
        MetasrvError::Commit(e) => matches!(
            e,
            CommitError::TableNotFound { .. }
                | CommitError::TableIdNotFound { .. }
                | CommitError::NamespaceNotFound { .. }
        ),
        // Over the wire: the CommitError variant in `x-lake-error`.
        MetasrvError::Rpc { code, reason, .. } => {
            *code == tonic::Code::NotFound
                && matches!(
                    reason.as_str(),
                    "table-not-found" | "table-id-not-found" | "namespace-not-found"
                )
        }
        _ => false,
    };
    gone.then(|| metasrv.to_string())
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

/// The user indexes (not Lance's system indexes, such as its fragment-reuse index) of
/// `dataset`'s version, one entry per segment; `name` names the table in errors.
async fn user_indices(
    dataset: &Dataset,
    name: &str,
) -> Result<Vec<lance_table::format::IndexMetadata>, QueryError> {
    let indices = dataset.load_indices().await.map_err(|e| {
        QueryError::Lance(format!(
            "reading the indexes of {name}: {}",
            first_line(&e.to_string())
        ))
    })?;
    Ok(indices
        .iter()
        .filter(|i| !lance_index::is_system_index(i))
        .cloned()
        .collect())
}

/// The names of `dataset`'s user indexes ([`user_indices`]), once each, sorted.
async fn index_names(dataset: &Dataset, name: &str) -> Result<Vec<String>, QueryError> {
    let mut names: Vec<String> = user_indices(dataset, name)
        .await?
        .into_iter()
        .map(|i| i.name)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// A maintenance commit's (`what`) failure through `store`: a table dropped meanwhile
/// ([`QueryError::NotFound`]) or a lost race ([`QueryError::Aborted`], safe to run again)
/// committed nothing; anything else is Lance's ([`QueryError::Lance`]).
fn maintenance_failure(what: &str, e: &lance::Error, store: &MetasrvManifests) -> QueryError {
    if let Some(gone) = store.gone().or_else(|| metasrv_table_gone(e)) {
        QueryError::NotFound(format!("{what} committed nothing: {gone}"))
    } else if is_commit_conflict(e) {
        QueryError::Aborted(format!(
            "{what} lost to a concurrent change of the same fragments and committed nothing; running it again is safe"
        ))
    } else {
        QueryError::Lance(format!("{what}: {}", first_line(&e.to_string())))
    }
}

/// Lance's refusal of the data itself (schema, input) is the caller's to fix.
fn classify(meta: &TableMeta, what: &str, e: lance::Error) -> QueryError {
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
            "{what} on {table}: {}",
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
    /// The one version this write may commit as; any other is refused as a lost race.
    /// Version 1 for a commit that creates the dataset: Lance would commit a first
    /// version's Overwrite on top of a dataset another writer created meanwhile, replacing
    /// that writer's rows; the files are committed again as an append instead. The version
    /// after the one read for a MERGE: Lance would rebase it onto rows appended meanwhile
    /// that its join never saw (two upserts of one key would both insert it); it runs again
    /// on the new latest instead.
    only_version: Option<u64>,
    /// What Metasrv answered to our compare-and-swap.
    committed: Mutex<Option<Committed>>,
    /// Why the compare-and-swap's outcome stayed unknown, if it did.
    unknown: Mutex<Option<String>>,
    /// Whether Metasrv definitely refused the last compare-and-swap (another writer won
    /// the version, or the version was not the one this write may commit as).
    refused: Mutex<bool>,
    /// Metasrv's answer, to any call of this write, that the table no longer exists (it
    /// was dropped while the write ran): Lance may report the failure as something else,
    /// e.g. an unknown outcome when it cannot read the manifest back.
    gone: Mutex<Option<String>>,
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
    /// What a maintenance commit (compaction, index build or drop) made: the version
    /// Metasrv acknowledged, `None` when nothing was committed.
    ///
    /// # Errors
    /// [`QueryError::OutcomeUnknown`] with `unknown`, its `{why}` replaced by the reason,
    /// when Metasrv never gave a definite answer.
    fn outcome(&self, unknown: &str) -> Result<Option<Committed>, QueryError> {
        if let Some(why) = self
            .unknown
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            return Err(QueryError::OutcomeUnknown(unknown.replace("{why}", &why)));
        }
        Ok(*self.committed.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Records whether `resolution` is a definite refusal ([`Self::refused`]).
    fn note_refusal(&self, resolution: Resolution) -> Resolution {
        *self.refused.lock().unwrap_or_else(|p| p.into_inner()) =
            matches!(resolution, Resolution::NotOurs(_));
        if let Resolution::NotOurs(e) = &resolution {
            self.note_gone(e);
        }
        resolution
    }

    /// Records Metasrv's answer that the table is gone, when `e` carries it.
    fn note_gone(&self, e: &lance::Error) {
        if let Some(gone) = metasrv_table_gone(e) {
            *self.gone.lock().unwrap_or_else(|p| p.into_inner()) = Some(gone);
        }
    }

    /// Metasrv's answer that the table is gone, when a call of this write got it.
    fn gone(&self) -> Option<String> {
        self.gone.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Metasrv's error `e` as Lance's ([`lance_error`]), noting whether it says the table is
    /// gone.
    fn failed(&self, e: lake_metasrv::MetasrvError) -> lance::Error {
        let e = lance_error(e);
        self.note_gone(&e);
        e
    }

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
        match self.only_version {
            Some(1) if version != 1 => {
                return Resolution::NotOurs(lance::Error::dataset_already_exists(format!(
                    "{}.{}",
                    self.meta.namespace, self.meta.name
                )));
            }
            Some(only) if version != only => {
                return Resolution::NotOurs(lance::Error::retryable_commit_conflict_source(
                    version,
                    format!(
                        "{}.{} changed since version {} was read",
                        self.meta.namespace,
                        self.meta.name,
                        only - 1
                    )
                    .into(),
                ));
            }
            _ => {}
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

/// A failure of the collection of dropped tables' files, saying what it was doing.
fn collecting(what: &str, e: &dyn std::fmt::Display) -> QueryError {
    QueryError::Lance(format!("collecting dropped tables: {what}: {e}"))
}

/// Metasrv's error as Lance's I/O error, with the [`lake_metasrv::MetasrvError`] as its
/// source so that [`metasrv_table_gone`] can still tell what it was.
fn lance_error(e: lake_metasrv::MetasrvError) -> lance::Error {
    lance::Error::io_source(Box::new(e))
}

#[async_trait]
impl ExternalManifestStore for MetasrvManifests {
    async fn get(&self, base_uri: &str, version: u64) -> lance::Result<String> {
        let description = self
            .metasrv
            .describe_table_with(&self.meta.namespace, &self.meta.name, Some(version), None)
            .await
            .map_err(|e| self.failed(e))?;
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
            .map_err(|e| self.failed(e))?;
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
        match self.note_refusal(
            self.commit_resolved(base_path.as_ref(), version, staging_path.as_ref(), size)
                .await,
        ) {
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
        match self.note_refusal(self.commit_resolved(base_uri, version, path, size).await) {
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
mod maintenance_tests {
    use super::{Due, Maintenance};

    #[test]
    fn a_table_found_due_during_a_run_is_run_again_by_its_owner() {
        let mut due = Due::default();
        assert!(!due.claim(1), "nothing found due");
        due.found.insert(1);
        assert!(due.claim(1));
        // Appends find it due again while the run works: nobody else starts one ...
        due.found.insert(1);
        assert!(!due.claim(1));
        // ... the owner runs once more, and then lets go.
        assert!(due.run_again(1));
        assert!(!due.run_again(1));
        assert!(!due.claim(1), "nothing found due since");
        due.found.insert(1);
        assert!(due.claim(1), "a new run once the last one let go");
        // Tables are independent.
        due.found.insert(2);
        assert!(due.claim(2));
    }

    #[test]
    fn a_table_is_due_at_enough_small_fragments_or_every_nth_version() {
        let m = Maintenance {
            compact_at_small_fragments: 3,
            target_rows_per_fragment: 100,
            cleanup_every_versions: 10,
            ..Maintenance::DEFAULT
        };
        // Two small fragments and big ones: not yet; a third small one (or one whose size
        // is unknown) makes it due.
        assert!(!m.due(7, [Some(5), Some(100), Some(99), Some(1_000)]));
        assert!(m.due(7, [Some(5), Some(100), Some(99), Some(0)]));
        assert!(m.due(7, [Some(5), None, Some(99)]));
        // Big fragments only: due at every tenth version, for the cleanup.
        assert!(!m.due(11, [Some(100); 50]));
        assert!(m.due(20, [Some(100); 50]));
        // 0 turns each trigger off.
        let off = Maintenance {
            compact_at_small_fragments: 0,
            cleanup_every_versions: 0,
            ..m
        };
        assert!(!off.due(20, [Some(1); 50]));
    }
}

#[cfg(test)]
mod dropped_tests {
    use super::{Datasets, DroppedTable};

    #[tokio::test]
    async fn a_dropped_tables_files_are_marked_then_removed_after_the_grace_and_nothing_else_is() {
        let root = tempfile::tempdir().expect("tempdir");
        let write = |relative: &str, bytes: usize| {
            let path = root.path().join(relative);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, vec![7u8; bytes]).expect("write");
        };
        for (dir, bytes) in [
            ("tables/1-100.lance", 10),
            ("tables/2-200.lance", 20),
            ("tables/3-300.lance", 30),
            ("tables/notes", 5),
        ] {
            write(&format!("{dir}/data/a.lance"), bytes);
            write(&format!("{dir}/_versions/1.manifest"), 1);
        }
        // Two endpoints connect lazily: no Metasrv is needed to collect.
        let metasrv =
            lake_metasrv::MetasrvClient::connect("http://127.0.0.1:9,http://127.0.0.1:10")
                .await
                .expect("a lazy client");
        let datasets = Datasets::new(root.path().to_str().expect("a UTF-8 path"), metasrv);
        let mut dirs = datasets.table_dirs().await.expect("listed");
        dirs.sort();
        assert_eq!(dirs, ["1-100.lance", "2-200.lance", "3-300.lance", "notes"]);
        // Of these the registry found table 1's dropped (lake_core::Registry::is_dropped_dir).
        let dropped = ["1-100.lance".to_string()];
        let round = |now_ms, dry_run| {
            datasets.collect_dropped(&dropped, 100, now_ms, dry_run, |_| {
                futures::FutureExt::boxed(async { Ok(()) })
            })
        };
        let dropped = |found_at_ms, files, bytes, removed| DroppedTable {
            location: "tables/1-100.lance".into(),
            found_at_ms,
            files,
            bytes,
            removed,
        };
        assert_eq!(
            round(1_000, false).await.expect("first round"),
            vec![dropped(1_000, 0, 0, false)]
        );
        assert_eq!(
            round(1_099, false).await.expect("in the grace"),
            vec![dropped(1_000, 0, 0, false)]
        );
        // Past the grace, a dry run names the files (the marker "1000" too) and keeps them.
        assert_eq!(
            round(1_100, true).await.expect("dry run"),
            vec![dropped(1_000, 3, 15, false)]
        );
        assert!(root.path().join("tables/1-100.lance/data/a.lance").exists());
        assert_eq!(
            round(1_100, false).await.expect("collect"),
            vec![dropped(1_000, 3, 15, true)]
        );
        assert!(!root.path().join("tables/1-100.lance").exists());
        for kept in ["tables/2-200.lance", "tables/3-300.lance", "tables/notes"] {
            assert!(
                root.path().join(kept).join("data/a.lance").exists(),
                "{kept}"
            );
            assert!(
                !root.path().join(kept).join(super::DROPPED_MARKER).exists(),
                "{kept}"
            );
        }
        assert_eq!(datasets.table_dirs().await.expect("listed").len(), 3);
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    fn batch(from: i64, rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let ids = Int64Array::from_iter_values(from..from + rows);
        let names = StringArray::from_iter(
            (from..from + rows).map(|i| (i % 3 != 0).then(|| format!("n{i}"))),
        );
        RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(names)]).unwrap()
    }

    fn rows(items: Vec<Result<RecordBatch, QueryError>>) -> RowStream {
        futures::stream::iter(items).boxed()
    }

    async fn gathered(rows: RowStream, batch_bytes: usize) -> Vec<Result<RecordBatch, QueryError>> {
        let (sender, receiver) = tokio::sync::mpsc::channel(1);
        let task = tokio::spawn(gather(rows, batch_bytes, sender));
        let out = tokio_stream::wrappers::ReceiverStream::new(receiver)
            .collect()
            .await;
        task.await.unwrap();
        out
    }

    fn ids(batch: &RecordBatch) -> Vec<i64> {
        batch
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .values()
            .to_vec()
    }

    #[tokio::test]
    async fn gather_joins_small_batches_in_order_and_skips_empty_ones() {
        // 10 batches of 100 rows, each about 2.6 KiB of Arrow data; batches of at least 8 KiB.
        let bytes_of = |b: &RecordBatch| -> usize {
            b.columns()
                .iter()
                .map(|c| c.to_data().get_slice_memory_size().unwrap())
                .sum()
        };
        let one = bytes_of(&batch(0, 100));
        let mut input: Vec<_> = (0..10).map(|i| Ok(batch(i * 100, 100))).collect();
        input.insert(3, Ok(batch(0, 0)));
        let out = gathered(rows(input), 3 * one).await;
        let out: Vec<RecordBatch> = out.into_iter().map(Result::unwrap).collect();
        // 3 + 3 + 3 + the last 1: each full batch reached the target, the last is the rest.
        assert_eq!(
            out.iter().map(RecordBatch::num_rows).collect::<Vec<_>>(),
            [300, 300, 300, 100]
        );
        let all: Vec<i64> = out.iter().flat_map(ids).collect();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
        // Nulls and strings survive the concatenation.
        let names = out[1]
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert!(names.is_null(0)); // row 300
        assert_eq!(names.value(1), "n301");
    }

    #[tokio::test]
    async fn gather_passes_a_large_batch_as_it_is() {
        let big = batch(0, 1000);
        let out = gathered(rows(vec![Ok(big.clone())]), 1).await;
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].as_ref().unwrap(), &big);
    }

    #[tokio::test]
    async fn gather_forwards_the_first_error_and_stops() {
        let input = vec![
            Ok(batch(0, 10)),
            Err(QueryError::InvalidArgument("the client broke off".into())),
            Ok(batch(10, 10)),
        ];
        let out = gathered(rows(input), usize::MAX).await;
        // The pending rows are not sent on an error (nothing of them may commit).
        assert_eq!(out.len(), 1);
        match &out[0] {
            Err(QueryError::InvalidArgument(m)) => assert_eq!(m, "the client broke off"),
            other => panic!("expected the rows' error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn gather_stops_pulling_when_the_writer_is_gone() {
        // An endless source: gather must end once the receiver is dropped.
        let endless = futures::stream::repeat_with(|| Ok(batch(0, 10))).boxed();
        let (sender, receiver) = tokio::sync::mpsc::channel(1);
        let task = tokio::spawn(gather(endless, 1, sender));
        let mut receiver = receiver;
        assert_eq!(receiver.recv().await.unwrap().unwrap().num_rows(), 10);
        drop(receiver);
        tokio::time::timeout(std::time::Duration::from_secs(10), task)
            .await
            .expect("gather ended")
            .unwrap();
    }

    #[tokio::test]
    async fn a_digest_beside_the_rows_is_the_digest_of_the_rows() {
        let batches: Vec<RecordBatch> = (0..5).map(|i| batch(i * 7, 7)).collect();
        let schema = batches[0].schema();
        let (sender, handle) = PayloadDigest::beside(&schema).unwrap();
        for b in &batches {
            sender.send(b.clone()).await.unwrap();
        }
        drop(sender);
        let (beside, count) = handle.await.unwrap().unwrap();
        let (inline, inline_count) =
            PayloadDigest::of(&schema, rows(batches.clone().into_iter().map(Ok).collect()))
                .await
                .unwrap();
        assert_eq!((beside.digest, count), (inline.digest, inline_count));
        assert_eq!(count, 35);
        // The tag, then BLAKE3 of the IPC stream; the replay check's SHA-256 of the same
        // stream is what earlier releases committed.
        let stream = ipc_stream(&schema, &batches);
        assert_eq!(beside.digest[..4], *b"LkB3");
        assert_eq!(beside.digest[4..], blake3::hash(&stream).as_bytes()[..28]);
        assert!(AppendDigest::is_current(&beside.digest));
        assert_eq!(beside.earlier, None);
        let sha256: Digest = <sha2::Sha256 as sha2::Digest>::digest(&stream).into();
        assert_eq!(inline.earlier, Some(sha256));
        assert!(!AppendDigest::is_current(&sha256));
        // Other rows, another digest.
        let (other, _) = PayloadDigest::of(&schema, rows(vec![Ok(batch(1, 35))]))
            .await
            .unwrap();
        assert_ne!(other.digest, beside.digest);
        assert_ne!(other.earlier, inline.earlier);
    }

    /// The Arrow IPC stream of `batches`, written apart from [`PayloadDigest`].
    fn ipc_stream(schema: &SchemaRef, batches: &[RecordBatch]) -> Vec<u8> {
        let mut writer = arrow::ipc::writer::StreamWriter::try_new(Vec::new(), schema).unwrap();
        for b in batches {
            writer.write(b).unwrap();
        }
        writer.finish().unwrap();
        writer.into_inner().unwrap()
    }

    #[tokio::test]
    async fn an_append_replays_under_this_or_an_earlier_releases_digest() {
        let batches: Vec<RecordBatch> = (0..3).map(|i| batch(i * 5, 5)).collect();
        let schema = batches[0].schema();
        let (read, _) = PayloadDigest::of(&schema, rows(batches.into_iter().map(Ok).collect()))
            .await
            .unwrap();
        let (other, _) = PayloadDigest::of(&schema, rows(vec![Ok(batch(100, 5))]))
            .await
            .unwrap();
        let earlier = read.earlier.unwrap();
        let replayed = |r: Result<Committed, QueryError>| r.map(|c| (c.version, c.replayed));
        // Rows read for the check: the same rows under either digest are a replay.
        for committed in [read.digest, earlier] {
            let answer = replay_append("ns.t", "op", (7, committed), &read, 11);
            assert_eq!(replayed(answer).unwrap(), (7, true));
        }
        // Other rows, under either digest: a conflict naming the version.
        for committed in [other.digest, other.earlier.unwrap()] {
            match replay_append("ns.t", "op", (7, committed), &read, 11) {
                Err(QueryError::Conflict(m)) => assert!(m.contains("version 7"), "{m}"),
                answer => panic!("expected a conflict, got {answer:?}"),
            }
        }
        // Rows already written (this release's digest only): an earlier release's digest
        // cannot be compared, so the answer is to send them again; this release's compares.
        let written = AppendDigest {
            digest: read.digest,
            earlier: None,
        };
        match replay_append("ns.t", "op", (7, earlier), &written, 11) {
            Err(QueryError::Aborted(m)) => {
                assert!(m.contains("sending the same append again"), "{m}")
            }
            answer => panic!("expected to be asked to send again, got {answer:?}"),
        }
        let answer = replay_append("ns.t", "op", (7, read.digest), &written, 11);
        assert_eq!(replayed(answer).unwrap(), (7, true));
        assert!(matches!(
            replay_append("ns.t", "op", (7, other.digest), &written, 11),
            Err(QueryError::Conflict(_))
        ));
    }
}
