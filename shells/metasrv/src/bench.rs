//! Commit-rate measurement shared by `cargo bench --bench commits` and `lake-bench`:
//! commits per second through one Metasrv node against the rate of synced RocksDB writes on
//! the same disk, measured in the same run (the limit one committer without group commit
//! could reach).
//!
//! Each writer commits to a table of its own, one version after another (base `v` → `v + 1`),
//! so what is measured is Metasrv — coordinator, group commit, store — not compare-and-swap
//! conflicts. Every run is bounded by a time limit and by [`MAX_COMMITS_PER_WRITER`].

use std::path::Path;
use std::time::{Duration, Instant};

use lake_core::commit::{Applied, Mutation};
use lake_core::{CommitError, ManifestRef};

use crate::{Metasrv, MetasrvError};

/// Upper bound on the commits one writer sends in one measurement.
pub const MAX_COMMITS_PER_WRITER: u64 = 100_000;

/// Upper bound on the writes of [`synced_writes_per_second`].
const MAX_SYNCED_WRITES: u64 = 1_000_000;

/// Pause before re-sending a refused (retryable) mutation.
const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// Re-sends of one mutation before the measurement gives up (10 s of pauses).
const RETRIES_MAX: u32 = 500;

/// Synced single-key RocksDB writes per second (200-byte values, one `WriteBatch` with
/// `sync = true` each, one after another) in a fresh database at `dir`, for `seconds`.
///
/// # Errors
/// RocksDB cannot open `dir` or a write fails.
pub fn synced_writes_per_second(dir: &Path, seconds: u64) -> Result<f64, rocksdb::Error> {
    let db = rocksdb::DB::open_default(dir)?;
    let mut options = rocksdb::WriteOptions::default();
    options.set_sync(true);
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < Duration::from_secs(seconds) && n < MAX_SYNCED_WRITES {
        let mut batch = rocksdb::WriteBatch::default();
        batch.put(n.to_be_bytes(), [0u8; 200]);
        db.write_opt(batch, &options)?;
        n += 1;
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

/// The `q`-quantile (0.0..=1.0) of `sorted` (ascending), as the element at index
/// `⌊len · q⌋` (clamped to the last); zero for an empty slice. Used for the p50/p99 of
/// commit latency here and of point reads in `lake-bench`.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let index = ((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(index).copied().unwrap_or_default()
}

/// What one [`measure_commits`] run saw.
#[derive(Debug, Clone, Copy)]
pub struct CommitRate {
    /// Concurrent writers.
    pub writers: usize,
    /// Commits acknowledged.
    pub commits: usize,
    /// Commits sent again after a retryable refusal (a leader step-down under load); each
    /// re-send carries the same operation id, so it lands once.
    pub retries: u64,
    /// Acknowledged commits per second of wall time.
    pub per_second: f64,
    /// Median commit latency (send to acknowledgement, re-sends included).
    pub p50: Duration,
    /// 99th-percentile commit latency.
    pub p99: Duration,
}

/// Sends `mutation` until it is answered or refused for good, re-sending up to
/// [`RETRIES_MAX`] times after a leader step-down or a store hiccup; `Ok(None)` when it was
/// refused with an error `accept` accepts (an earlier attempt already applied it). A
/// version conflict is final: each writer owns its table, so one means the measurement is
/// broken, not busy.
async fn mutate_until_answered(
    metasrv: &Metasrv,
    mutation: &Mutation,
    accept: impl Fn(&CommitError) -> bool,
    retries: &mut u64,
) -> Result<Option<Applied>, MetasrvError> {
    let mut sent = 0;
    loop {
        match metasrv.mutate(mutation.clone()).await {
            Ok(reply) => return Ok(Some(reply.applied)),
            Err(MetasrvError::Commit(e)) if accept(&e) => return Ok(None),
            Err(MetasrvError::Commit(e))
                if e.is_retryable()
                    && !matches!(e, CommitError::VersionConflict { .. })
                    && sent < RETRIES_MAX =>
            {
                sent += 1;
                *retries += 1;
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Runs `writers` concurrent committers on `metasrv` for `seconds`, each on a fresh table
/// of its own in a namespace of its own (`{label}_{writers}_{unix ms}`, so a store that
/// already holds an earlier run's tables only adds new ones and no commit is a replay).
///
/// # Errors
/// A mutation was refused for a reason other than a retryable one, or more than
/// [`RETRIES_MAX`] times.
pub async fn measure_commits(
    metasrv: &Metasrv,
    label: &str,
    writers: usize,
    seconds: u64,
) -> Result<CommitRate, MetasrvError> {
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let namespace = format!("{label}_{writers}_{run}");
    let mut retries = 0;
    mutate_until_answered(
        metasrv,
        &Mutation::CreateNamespace {
            name: namespace.clone(),
        },
        |e| matches!(e, CommitError::NamespaceExists { .. }),
        &mut retries,
    )
    .await?;
    let mut tables = Vec::with_capacity(writers);
    for w in 0..writers {
        let name = format!("t{w}");
        let created = mutate_until_answered(
            metasrv,
            &Mutation::CreateTable {
                namespace: namespace.clone(),
                name: name.clone(),
                schema_ipc: vec![],
            },
            |e| matches!(e, CommitError::TableExists { .. }),
            &mut retries,
        )
        .await?;
        let id = match created {
            Some(Applied::TableCreated(meta)) => meta.id,
            // An earlier attempt whose outcome was unknown did create it.
            _ => {
                let ns = namespace.clone();
                metasrv
                    .read(move |r| r.table(&ns, &name).map(|t| t.meta.id))
                    .await?
                    .ok_or_else(|| {
                        MetasrvError::Malformed(format!("table t{w} vanished after creation"))
                    })?
            }
        };
        tables.push(id);
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = tables
        .into_iter()
        .map(|table_id| {
            let metasrv = metasrv.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut retries = 0u64;
                let mut version = 0;
                while Instant::now() < deadline && version < MAX_COMMITS_PER_WRITER {
                    let sent = Instant::now();
                    let commit = Mutation::Commit {
                        table_id,
                        base_version: version,
                        manifest: ManifestRef {
                            path: format!("_versions/{}.manifest", version + 1),
                            size_bytes: 1000,
                        },
                        operation: Some((format!("op-{table_id}-{version}"), [7; 32])),
                    };
                    mutate_until_answered(&metasrv, &commit, |_| false, &mut retries).await?;
                    latencies.push(sent.elapsed());
                    version += 1;
                }
                Ok::<_, MetasrvError>((latencies, retries))
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        let (l, r) = task
            .await
            .map_err(|e| MetasrvError::Malformed(format!("writer task failed: {e}")))??;
        latencies.extend(l);
        retries += r;
    }
    let elapsed = started.elapsed();
    latencies.sort();
    Ok(CommitRate {
        writers,
        commits: latencies.len(),
        retries,
        per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: quantile(&latencies, 0.5),
        p99: quantile(&latencies, 0.99),
    })
}

/// What [`measure_startup`] saw on one RocksDB store of `tables` tables with
/// `versions_per_table` committed versions each (plus a namespace and the table creations:
/// `events` in all).
#[derive(Debug, Clone, Copy)]
pub struct Startup {
    /// Tables in the store.
    pub tables: u64,
    /// Committed versions per table.
    pub versions_per_table: u64,
    /// Events in the log before the checkpoint (namespace, tables, versions).
    pub events: u64,
    /// Loading the registry by replaying the whole log (no checkpoint), as every start did
    /// before checkpoints.
    pub replay: Duration,
    /// Writing the checkpoint of that registry, and its encoded size in bytes.
    pub checkpoint: Duration,
    /// The checkpoint's encoded size, bytes.
    pub checkpoint_bytes: u64,
    /// Loading the registry from the checkpoint and the log after it
    /// ([`EventStore::load`](crate::EventStore::load)).
    pub load: Duration,
    /// A Metasrv node started on the checkpointed store (reopened): from the start until its
    /// first commit is acknowledged (election, checkpoint read, tail replay, one synced
    /// write).
    pub node_start: Duration,
}

/// Most events [`measure_startup`] writes: 10,000 tables × 1,000 versions.
pub const STARTUP_EVENTS_MAX: u64 = 10_000_000;

/// Builds a RocksDB store in `dir` (which must be empty) holding `tables` tables of
/// `versions` versions each, committed round-robin with an operation id and digest each
/// (as appends are), then measures [`Startup`]: the whole-log replay, the checkpoint, the
/// load after truncating to the checkpoint (keeping [`NodeConfig::LOG_KEEP`]
/// (lake_core::NodeConfig::LOG_KEEP) events), and a node's start on it.
///
/// # Errors
/// The store fails, or `tables × versions` exceeds [`STARTUP_EVENTS_MAX`].
pub async fn measure_startup(
    dir: &Path,
    tables: u64,
    versions: u64,
) -> Result<Startup, MetasrvError> {
    use lake_core::{ChangeEvent, NodeConfig};

    use crate::store::{EventStore, RocksStore};

    let events = 1 + tables + tables * versions;
    if tables.saturating_mul(versions) > STARTUP_EVENTS_MAX {
        return Err(MetasrvError::Config(format!(
            "{tables} tables × {versions} versions is more than {STARTUP_EVENTS_MAX} events"
        )));
    }
    let path = dir.to_path_buf();
    let measured = tokio::task::spawn_blocking(move || -> Result<_, MetasrvError> {
        let store = RocksStore::open(&path)?;
        let lease = lake_core::Lease {
            epoch: 1,
            holder: "bench".into(),
            address: String::new(),
            renewal: 0,
        };
        store.write_lease(None, &lease)?;
        let fence = lease.fence();
        let mut revision = 0;
        while revision < events {
            let batch: Vec<ChangeEvent> = (revision + 1..=events.min(revision + 4096))
                .map(|r| lake_core::store::contract::fleet_event(tables, r))
                .collect();
            store.append(&fence, revision, &batch)?;
            revision += batch.len() as u64;
        }
        let started = Instant::now();
        let registry = store.load()?;
        let replay = started.elapsed();
        let started = Instant::now();
        store.write_checkpoint(&registry)?;
        let checkpoint = started.elapsed();
        let checkpoint_bytes = crate::checkpoint::Encoded::new(&registry, 1 << 20)
            .header
            .bytes;
        store.truncate(&fence, events.saturating_sub(NodeConfig::LOG_KEEP))?;
        // Released, so the node started next takes the lease at once.
        store.write_lease(
            Some(&lease),
            &lake_core::Lease {
                holder: String::new(),
                renewal: 1,
                ..lease.clone()
            },
        )?;
        drop(registry);
        drop(store);
        let store = RocksStore::open(&path)?;
        let started = Instant::now();
        let registry = store.load()?;
        let load = started.elapsed();
        drop(registry);
        Ok((replay, checkpoint, checkpoint_bytes, load, store))
    })
    .await
    .map_err(|e| MetasrvError::Malformed(format!("startup measurement failed: {e}")))??;
    let (replay, checkpoint, checkpoint_bytes, load, store) = measured;
    let started = Instant::now();
    let metasrv = Metasrv::start(std::sync::Arc::new(store))?;
    let mut retries = 0;
    mutate_until_answered(
        &metasrv,
        &Mutation::CreateNamespace {
            name: "started".into(),
        },
        |_| false,
        &mut retries,
    )
    .await?;
    let node_start = started.elapsed();
    metasrv.shutdown().await;
    Ok(Startup {
        tables,
        versions_per_table: versions,
        events,
        replay,
        checkpoint,
        checkpoint_bytes,
        load,
        node_start,
    })
}
