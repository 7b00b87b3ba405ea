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
//!
//! Every write is one `WriteBatch` written with `sync = true`, so it is on disk before the
//! coordinator (or the election) acts on it. A mutex makes each check-then-write one step
//! within the process; RocksDB's directory lock keeps other processes out.

use std::path::Path;
use std::sync::Mutex;

use lake_core::{ChangeEvent, Fence, Lease};
use prost::Message;

use crate::convert;
use crate::proto;

pub use lake_core::store::{EventStore, StoreError};

const REVISION_KEY: &[u8] = b"m/revision";
const LEASE_KEY: &[u8] = b"m/lease";

fn event_key(revision: u64) -> Vec<u8> {
    format!("e/{revision:020}").into_bytes()
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
}

impl EventStore for RocksStore {
    fn append(
        &self,
        fence: &Fence,
        base_revision: u64,
        events: &[ChangeEvent],
    ) -> Result<(), StoreError> {
        let _guard = self.lock()?;
        let lease = self.read_lease()?;
        if !fence.admits(lease.as_ref()) {
            return Err(StoreError::ConditionFailed(format!(
                "the write of leader {} (epoch {}) is fenced off: the lease is now {}",
                fence.holder,
                fence.epoch,
                lease.map_or("absent".to_string(), |l| format!(
                    "epoch {} held by {:?}",
                    l.epoch, l.holder
                ))
            )));
        }
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
        Ok(events)
    }

    fn revision(&self) -> Result<u64, StoreError> {
        match self.db.get(REVISION_KEY).map_err(io)? {
            None => Ok(0),
            Some(bytes) => {
                let array: [u8; 8] =
                    bytes
                        .as_slice()
                        .try_into()
                        .map_err(|_| StoreError::Corrupt {
                            revision: 0,
                            message: "revision key is not 8 bytes".into(),
                        })?;
                Ok(u64::from_be_bytes(array))
            }
        }
    }
}
