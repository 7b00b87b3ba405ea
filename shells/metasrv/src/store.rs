//! The durable authority behind the coordinator: an append-only log of change events and
//! the leader lease that fences every append.
//!
//! The registry is the fold of the log (`Registry::apply` of every event in revision
//! order), so one write per group commit suffices and the watch stream reads the same
//! records. The lease is the record `lake_core::election` competes for; every append is
//! conditioned on it still naming the appending leader ([`Fence`]), atomically with the
//! revision check. [`RocksStore`] is the embedded backend.
//!
//! RocksDB layout (one column family):
//! * `e/<revision as 20 digits>` → protobuf `ChangeEvent`
//! * `m/revision` → last revision, 8 bytes big-endian
//! * `m/lease` → protobuf `Lease`
//! * `m/truncated` → the highest revision removed by truncation, 8 bytes big-endian
//! * `c/head` → protobuf `CheckpointHeader` of the newest checkpoint
//! * `c/<revision as 20 digits>/<chunk as 10 digits>` → its chunks ([`crate::checkpoint`])
//!
//! Every write is one `WriteBatch` written with `sync = true`, so it is on disk before the
//! coordinator (or the election) acts on it. A checkpoint's chunks, its header and the
//! removal of the previous checkpoint's chunks are one batch, and a truncation's range
//! deletion and its marker another, so a crash leaves either state whole. A mutex makes each check-then-write one step
//! within the process; RocksDB's directory lock keeps other processes out.

use std::path::Path;
use std::sync::Mutex;

use lake_core::{ChangeEvent, Fence, Lease};
use prost::Message;

use crate::checkpoint;
use crate::convert;
use crate::proto;

pub use lake_core::store::{EventStore, StoreError};

const REVISION_KEY: &[u8] = b"m/revision";
const LEASE_KEY: &[u8] = b"m/lease";
const TRUNCATED_KEY: &[u8] = b"m/truncated";
const CHECKPOINT_HEAD_KEY: &[u8] = b"c/head";

/// Bytes per stored checkpoint chunk: 1 MiB.
const CHECKPOINT_CHUNK_BYTES: usize = 1 << 20;

fn event_key(revision: u64) -> Vec<u8> {
    format!("e/{revision:020}").into_bytes()
}

/// The key of chunk `chunk` of the checkpoint at `revision`; `c/<revision>/` (no chunk)
/// bounds the checkpoints before it.
fn chunk_key(revision: u64, chunk: Option<u32>) -> Vec<u8> {
    match chunk {
        Some(chunk) => format!("c/{revision:020}/{chunk:010}").into_bytes(),
        None => format!("c/{revision:020}/").into_bytes(),
    }
}

/// The embedded store: RocksDB in a local directory.
pub struct RocksStore {
    db: rocksdb::DB,
    // Serializes conditional writes so each check and its write are one step.
    write_lock: Mutex<()>,
}

fn io(e: rocksdb::Error) -> StoreError {
    StoreError::Io(e.to_string())
}

impl RocksStore {
    /// Opens (creating if needed) the store in `dir`.
    ///
    /// Every write is synced, so after a crash only the last write-ahead-log record can be
    /// torn (it was never acknowledged) and RocksDB drops it
    /// (`WALRecoveryMode::kTolerateCorruptedTailRecords`). Damage anywhere else means
    /// acknowledged commits may be gone: the store refuses to open rather than serve a
    /// registry with holes (RocksDB's default, point-in-time recovery, silently drops every
    /// record after the damaged one, and the next CREATE TABLE then reuses a lost table's
    /// id). `paranoid_checks` makes RocksDB verify what it reads at open.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when the log or tables are damaged (restore the directory
    /// from a backup); [`StoreError::Io`] when RocksDB cannot open the directory (e.g.
    /// another process holds its lock).
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let mut options = rocksdb::Options::default();
        options.create_if_missing(true);
        options.set_paranoid_checks(true);
        options.set_wal_recovery_mode(rocksdb::DBRecoveryMode::TolerateCorruptedTailRecords);
        let db = rocksdb::DB::open(&options, dir).map_err(|e| {
            if e.kind() == rocksdb::ErrorKind::Corruption {
                StoreError::Corrupt {
                    revision: 0,
                    message: format!(
                        "the Metasrv store in {} is damaged ({e}); acknowledged commits may be lost, so it is not opened: restore the directory from a backup",
                        dir.display()
                    ),
                }
            } else {
                io(e)
            }
        })?;
        Ok(Self {
            db,
            write_lock: Mutex::new(()),
        })
    }
}

impl RocksStore {
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, ()>, StoreError> {
        self.write_lock
            .lock()
            .map_err(|_| StoreError::Io("store write lock poisoned".into()))
    }

    fn write_synced(&self, batch: rocksdb::WriteBatch) -> Result<(), StoreError> {
        let mut write_options = rocksdb::WriteOptions::default();
        write_options.set_sync(true);
        self.db.write_opt(batch, &write_options).map_err(io)
    }

    /// Refuses a write of a leader the lease no longer names.
    fn check_fence(&self, fence: &Fence) -> Result<(), StoreError> {
        let lease = self.read_lease()?;
        if fence.admits(lease.as_ref()) {
            return Ok(());
        }
        Err(StoreError::ConditionFailed(format!(
            "the write of leader {} (epoch {}) is fenced off: the lease is now {}",
            fence.holder,
            fence.epoch,
            lease.map_or("absent".to_string(), |l| format!(
                "epoch {} held by {:?}",
                l.epoch, l.holder
            ))
        )))
    }

    fn read_u64(&self, key: &[u8]) -> Result<u64, StoreError> {
        match self.db.get(key).map_err(io)? {
            None => Ok(0),
            Some(bytes) => {
                let array: [u8; 8] =
                    bytes
                        .as_slice()
                        .try_into()
                        .map_err(|_| StoreError::Corrupt {
                            revision: 0,
                            message: format!("{} is not 8 bytes", String::from_utf8_lossy(key)),
                        })?;
                Ok(u64::from_be_bytes(array))
            }
        }
    }

    fn checkpoint_header(&self) -> Result<Option<proto::CheckpointHeader>, StoreError> {
        self.db
            .get(CHECKPOINT_HEAD_KEY)
            .map_err(io)?
            .map(|bytes| checkpoint::decode_header(&bytes))
            .transpose()
    }
}

impl EventStore for RocksStore {
    fn append(
        &self,
        fence: &Fence,
        base_revision: u64,
        events: &[ChangeEvent],
    ) -> Result<(), StoreError> {
        let _guard = self.lock()?;
        self.check_fence(fence)?;
        let actual = self.revision()?;
        if actual != base_revision {
            return Err(StoreError::RevisionMismatch {
                expected: base_revision,
                actual,
            });
        }
        let mut batch = rocksdb::WriteBatch::default();
        let mut last = base_revision;
        for event in events {
            let encoded = proto::ChangeEvent::from(event).encode_to_vec();
            batch.put(event_key(event.revision), encoded);
            last = event.revision;
        }
        batch.put(REVISION_KEY, last.to_be_bytes());
        self.write_synced(batch)
    }

    fn read_lease(&self) -> Result<Option<Lease>, StoreError> {
        let Some(bytes) = self.db.get(LEASE_KEY).map_err(io)? else {
            return Ok(None);
        };
        let decoded = proto::Lease::decode(bytes.as_slice()).map_err(|e| StoreError::Corrupt {
            revision: 0,
            message: format!("lease record: {e}"),
        })?;
        Ok(Some(decoded.into()))
    }

    fn write_lease(&self, expected: Option<&Lease>, lease: &Lease) -> Result<(), StoreError> {
        let _guard = self.lock()?;
        let current = self.read_lease()?;
        if current.as_ref() != expected {
            return Err(StoreError::ConditionFailed(format!(
                "the lease is {current:?}, the write expected {expected:?}"
            )));
        }
        let mut batch = rocksdb::WriteBatch::default();
        batch.put(LEASE_KEY, proto::Lease::from(lease).encode_to_vec());
        self.write_synced(batch)
    }

    fn read_after(&self, after: u64, limit: usize) -> Result<Vec<ChangeEvent>, StoreError> {
        let start = event_key(after.saturating_add(1));
        let iter = self.db.iterator(rocksdb::IteratorMode::From(
            &start,
            rocksdb::Direction::Forward,
        ));
        let mut events = Vec::new();
        for item in iter.take(limit) {
            let (key, value) = item.map_err(io)?;
            if !key.starts_with(b"e/") {
                break;
            }
            let revision = std::str::from_utf8(&key[2..])
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            let corrupt = |message: String| StoreError::Corrupt { revision, message };
            let decoded =
                proto::ChangeEvent::decode(value.as_ref()).map_err(|e| corrupt(e.to_string()))?;
            events.push(convert::change_event(decoded).map_err(|e| corrupt(e.to_string()))?);
        }
        lake_core::store::check_page(after, &events, || self.truncated_through())?;
        Ok(events)
    }

    fn revision(&self) -> Result<u64, StoreError> {
        self.read_u64(REVISION_KEY)
    }

    fn write_checkpoint(&self, registry: &lake_core::Registry) -> Result<(), StoreError> {
        let revision = registry.revision();
        let encoded = checkpoint::Encoded::new(registry, CHECKPOINT_CHUNK_BYTES);
        encoded.check_size()?;
        let _guard = self.lock()?;
        if self
            .checkpoint_header()?
            .is_some_and(|h| h.revision >= revision)
        {
            return Ok(());
        }
        let mut batch = rocksdb::WriteBatch::default();
        for (index, chunk) in (0u32..).zip(encoded.chunks()) {
            batch.put(chunk_key(revision, Some(index)), chunk);
        }
        batch.put(CHECKPOINT_HEAD_KEY, encoded.header.encode_to_vec());
        // Every earlier checkpoint's chunks (`c/<digits>` sorts before `c/head`).
        batch.delete_range(b"c/".as_slice(), chunk_key(revision, None).as_slice());
        self.write_synced(batch)
    }

    fn read_checkpoint(&self) -> Result<Option<lake_core::Registry>, StoreError> {
        // One view of header and chunks, so a concurrent checkpoint cannot swap the chunks.
        let snapshot = self.db.snapshot();
        let Some(bytes) = snapshot.get(CHECKPOINT_HEAD_KEY).map_err(io)? else {
            return Ok(None);
        };
        let header = checkpoint::decode_header(&bytes)?;
        checkpoint::check_header(&header)?;
        let mut bytes = Vec::with_capacity(checkpoint::Encoded::capacity_for(&header));
        for index in 0..header.chunks {
            let chunk = snapshot
                .get(chunk_key(header.revision, Some(index)))
                .map_err(io)?
                .ok_or_else(|| StoreError::Corrupt {
                    revision: header.revision,
                    message: format!("checkpoint chunk {index} of {} is missing", header.chunks),
                })?;
            bytes.extend_from_slice(&chunk);
        }
        checkpoint::decode(&header, &bytes).map(Some)
    }

    fn truncate(&self, fence: &Fence, through: u64) -> Result<(), StoreError> {
        let _guard = self.lock()?;
        self.check_fence(fence)?;
        let covered = self.checkpoint_header()?.map_or(0, |h| h.revision);
        let last = self.revision()?;
        if through > covered || through >= last {
            return Err(StoreError::Refused(format!(
                "cannot truncate the log through revision {through}: the checkpoint covers {covered} and the last revision ({last}) stays"
            )));
        }
        if through <= self.truncated_through()? {
            return Ok(());
        }
        let mut batch = rocksdb::WriteBatch::default();
        batch.delete_range(
            event_key(0).as_slice(),
            event_key(through.saturating_add(1)).as_slice(),
        );
        batch.put(TRUNCATED_KEY, through.to_be_bytes());
        self.write_synced(batch)
    }

    fn truncated_through(&self) -> Result<u64, StoreError> {
        self.read_u64(TRUNCATED_KEY)
    }
}
