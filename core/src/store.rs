//! The durable authority's interface: an append-only log of change events plus the leader
//! lease that fences every append ([`EventStore`]), implemented by Metasrv's RocksDB and
//! DynamoDB stores and by the simulations' store (`lake-simtests`), which all pass the same
//! [`contract`] (compiled always, so every store's tests reach it without a feature that
//! would build the workspace twice).
//!
//! The registry is the fold of the log ([`Registry::replay`]), so one write per group
//! commit suffices and the watch stream reads the same records. The lease is the record
//! [`crate::election`] competes for; every append is conditioned on it still naming the
//! appending leader ([`Fence`]), atomically with the revision check.
//!
//! The log is bounded by **checkpoints**: the leader writes the registry at a revision
//! ([`EventStore::write_checkpoint`]) and then removes the events it covers, keeping a tail
//! for watchers a little behind ([`EventStore::truncate`]). Loading is the newest
//! checkpoint plus the events after it ([`EventStore::load`]); a reader asking for events
//! the store no longer holds gets [`StoreError::Truncated`] and loads the checkpoint
//! instead. A store writes a checkpoint so that a crash at any point leaves the previous
//! checkpoint or the new one readable, and truncates only events a stored checkpoint
//! covers, so a crash never leaves the log without its start.
//!
//! The calls block (a store round trip): shells run them off their async workers.

use crate::{ChangeEvent, Fence, Lease, Registry};

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store is not at the expected revision: definitely not written.
    #[error("store is at revision {actual}, the write expected {expected}")]
    RevisionMismatch { expected: u64, actual: u64 },
    /// The lease no longer names the writer (a new leader took over), or a lease write
    /// found another record than it expected: definitely not written.
    #[error("store condition failed: {0}")]
    ConditionFailed(String),
    /// The store refused the write without applying it (throttled, a conflicting
    /// transaction, over a size limit): definitely not written; retry later.
    #[error("store refused the write: {0}")]
    Refused(String),
    /// An I/O error: for a write, the outcome is unknown.
    #[error("store I/O error: {0}")]
    Io(String),
    /// A stored record does not decode or does not replay.
    #[error("store is corrupt at revision {revision}: {message}")]
    Corrupt { revision: u64, message: String },
    /// The events after `after` start before what the log still holds: the events through
    /// revision `through` were removed after a checkpoint covered them. Load the checkpoint
    /// ([`EventStore::load`]) instead of replaying from `after`.
    #[error(
        "the log no longer holds the events after revision {after}: a checkpoint covers revisions through {through} and they were removed; load the checkpoint"
    )]
    Truncated { after: u64, through: u64 },
}

impl StoreError {
    /// Whether a failed write definitely did not apply (as opposed to an unknown outcome).
    pub fn not_written(&self) -> bool {
        matches!(
            self,
            Self::RevisionMismatch { .. } | Self::ConditionFailed(_) | Self::Refused(_)
        )
    }
}

/// What one [`EventStore::append`] accepts: a store with transaction limits (DynamoDB's
/// `TransactWriteItems`: 100 actions and 4 MB; 400 KB per item) says so here, and the
/// coordinator sizes every group commit to fit ([`crate::Coordinator::with_limits`]), so
/// one large event never fails the mutations grouped with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendLimits {
    /// Most store items one append writes; an event takes
    /// [`Self::items_for`] its [`ChangeEvent::size_bound`].
    pub items: usize,
    /// Most event bytes ([`ChangeEvent::size_bound`]) one append carries.
    pub bytes: usize,
    /// Most event bytes one item holds; a larger event is split over several items.
    pub item_bytes: usize,
}

impl AppendLimits {
    /// No limit (RocksDB's write batches, the simulations' store).
    pub const UNBOUNDED: Self = Self {
        items: usize::MAX,
        bytes: usize::MAX,
        item_bytes: usize::MAX,
    };

    /// Items an event of `bytes` bytes takes: at least one.
    pub fn items_for(&self, bytes: usize) -> usize {
        bytes.div_ceil(self.item_bytes.max(1)).max(1)
    }

    /// Whether `events` fit one append.
    pub fn admit(&self, events: &[ChangeEvent]) -> bool {
        let items: usize = events.iter().map(|e| self.items_for(e.size_bound())).sum();
        let bytes: usize = events.iter().map(ChangeEvent::size_bound).sum();
        items <= self.items && bytes <= self.bytes
    }
}

/// Checks a page of events that a store read for `read_after(after, ..)`: it must follow
/// `after` without gaps. A page that does not is explained by truncation (the events were
/// removed after a checkpoint: [`StoreError::Truncated`], with `truncated_through` asked
/// only then, so a store reads its marker only when a page shows a hole) or is damage
/// ([`StoreError::Corrupt`]). Every store runs its pages through this, so all of them
/// answer a reader that fell behind the log's start the same way.
///
/// # Errors
/// As above, or `truncated_through`'s own error.
pub fn check_page(
    after: u64,
    events: &[ChangeEvent],
    truncated_through: impl FnOnce() -> Result<u64, StoreError>,
) -> Result<(), StoreError> {
    // An empty page needs no check: truncation keeps the last event (see
    // [`EventStore::truncate`]), so a reader behind the log's start always gets a page.
    let hole = events
        .iter()
        .zip(after.saturating_add(1)..)
        .find(|(event, expected)| event.revision != *expected);
    let Some((event, expected)) = hole else {
        return Ok(());
    };
    let through = truncated_through()?;
    if after < through {
        return Err(StoreError::Truncated { after, through });
    }
    Err(StoreError::Corrupt {
        revision: expected,
        message: format!(
            "the log holds revision {} where {expected} belongs (nothing after {through} was truncated)",
            event.revision
        ),
    })
}

/// A durable, append-only event log with a conditional append.
pub trait EventStore: Send + Sync + 'static {
    /// Appends `events` (revisions `base_revision + 1 ..`) atomically and durably, if and
    /// only if the log currently ends at `base_revision` and the lease still admits `fence`
    /// ([`Fence::admits`]), both checked in the same atomic step as the write.
    ///
    /// # Errors
    /// [`StoreError::RevisionMismatch`] or [`StoreError::ConditionFailed`] (nothing
    /// written), or [`StoreError::Io`] (outcome unknown).
    fn append(
        &self,
        fence: &Fence,
        base_revision: u64,
        events: &[ChangeEvent],
    ) -> Result<(), StoreError>;

    /// The lease record, if one was ever written.
    ///
    /// # Errors
    /// [`StoreError::Io`] or [`StoreError::Corrupt`].
    fn read_lease(&self) -> Result<Option<Lease>, StoreError>;

    /// Writes `lease` durably if and only if the stored record equals `expected` (`None`:
    /// no record yet).
    ///
    /// # Errors
    /// [`StoreError::ConditionFailed`] (nothing written) or [`StoreError::Io`] (unknown).
    fn write_lease(&self, expected: Option<&Lease>, lease: &Lease) -> Result<(), StoreError>;

    /// Up to `limit` events with revision > `after`, in order and without gaps (checked
    /// with [`check_page`]).
    ///
    /// # Errors
    /// [`StoreError::Truncated`] when events after `after` were removed
    /// ([`Self::truncate`]); [`StoreError::Io`] or [`StoreError::Corrupt`].
    fn read_after(&self, after: u64, limit: usize) -> Result<Vec<ChangeEvent>, StoreError>;

    /// Revision of the last event (0 for an empty log).
    ///
    /// # Errors
    /// [`StoreError::Io`].
    fn revision(&self) -> Result<u64, StoreError>;

    /// What one [`Self::append`] accepts (unbounded unless the backend limits
    /// transactions); an append beyond it is refused ([`StoreError::Refused`]).
    fn append_limits(&self) -> AppendLimits {
        AppendLimits::UNBOUNDED
    }

    /// Writes `registry` durably as the store's checkpoint at `registry.revision()`, unless
    /// the stored checkpoint is at that revision or later (then nothing changes: a
    /// checkpoint at a revision is the same registry whoever writes it, since every node
    /// replays the same log). A crash at any point leaves the previous checkpoint or this
    /// one readable, never a mix. Not fenced: only [`Self::truncate`] removes anything.
    ///
    /// # Errors
    /// [`StoreError::Io`] (outcome unknown) or [`StoreError::Refused`].
    fn write_checkpoint(&self, registry: &Registry) -> Result<(), StoreError>;

    /// The newest checkpoint, `None` when none was written.
    ///
    /// # Errors
    /// [`StoreError::Io`]; [`StoreError::Corrupt`] when it does not decode or its checksum
    /// does not match.
    fn read_checkpoint(&self) -> Result<Option<Registry>, StoreError>;

    /// Removes the events with revision ≤ `through`, if the lease still admits `fence`, the
    /// stored checkpoint covers them (its revision ≥ `through`) and the log holds a later
    /// event (the last event always stays, so a reader behind the log's start always reads
    /// a page that shows it, see [`check_page`]). Readers asking for them from then on get
    /// [`StoreError::Truncated`]. Asking for less than what is already removed changes
    /// nothing.
    ///
    /// # Errors
    /// [`StoreError::ConditionFailed`] (fenced off), [`StoreError::Refused`] (no checkpoint
    /// covers `through`, or `through` is the last revision), [`StoreError::Io`].
    fn truncate(&self, fence: &Fence, through: u64) -> Result<(), StoreError>;

    /// The highest revision removed by [`Self::truncate`] (0 when none was).
    ///
    /// # Errors
    /// [`StoreError::Io`] or [`StoreError::Corrupt`].
    fn truncated_through(&self) -> Result<u64, StoreError>;

    /// The registry at the log's last revision: the newest checkpoint (or the empty
    /// registry) with the events after it replayed. A truncation racing the load (a newer
    /// checkpoint written and the events after the one read removed) makes it start over,
    /// up to three times.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] if the log does not replay; [`StoreError::Truncated`] if
    /// truncation outran three attempts; the reads' errors.
    fn load(&self) -> Result<Registry, StoreError> {
        let mut attempts = 0;
        'attempt: loop {
            attempts += 1;
            let mut registry = self.read_checkpoint()?.unwrap_or_else(Registry::new);
            loop {
                let events = match self.read_after(registry.revision(), 4096) {
                    Ok(events) => events,
                    Err(StoreError::Truncated { .. }) if attempts < 3 => continue 'attempt,
                    Err(error) => return Err(error),
                };
                if events.is_empty() {
                    return Ok(registry);
                }
                registry.replay(&events).map_err(|e| StoreError::Corrupt {
                    revision: registry.revision() + 1,
                    message: e.to_string(),
                })?;
            }
        }
    }
}

/// The contract every [`EventStore`] keeps, as one check the backends' tests call on a
/// fresh, empty store: conditional lease writes, fenced appends, revision conditions,
/// ordered and limited reads, takeover and release fencing, and [`EventStore::load`].
/// It panics at the first broken promise, naming it.
pub mod contract {
    use super::{EventStore, StoreError};
    use crate::{ChangeEvent, ChangeKind, Lease, Registry};

    /// A lease of `holder` (address `holder:7000`).
    pub fn lease(epoch: u64, holder: &str, renewal: u64) -> Lease {
        Lease {
            epoch,
            holder: holder.into(),
            address: format!("{holder}:7000"),
            renewal,
        }
    }

    /// Event `revision`: namespace `n<revision>` created.
    pub fn event(revision: u64) -> ChangeEvent {
        ChangeEvent {
            revision,
            kind: ChangeKind::NamespaceCreated {
                name: format!("n{revision}"),
            },
        }
    }

    /// Event `revision` of a fleet-scale log of `tables` tables (for benchmarks and memory
    /// bounds): revision 1 creates namespace `ns`, the next `tables` create tables `t1`…
    /// (ids 1…, a 200-byte schema), and every later one commits the next version of the
    /// tables in turn, each with an operation id and digest as an append has.
    pub fn fleet_event(tables: u64, revision: u64) -> ChangeEvent {
        let tables = tables.max(1);
        let kind = if revision <= 1 {
            ChangeKind::NamespaceCreated { name: "ns".into() }
        } else if revision <= 1 + tables {
            let id = revision - 1;
            ChangeKind::TableCreated {
                meta: crate::TableMeta {
                    id,
                    namespace: "ns".into(),
                    name: format!("t{id}"),
                    schema_ipc: vec![0; 200],
                    location: format!("tables/{id}-1700000000000.lance"),
                    created_revision: revision,
                },
            }
        } else {
            let n = revision - 2 - tables;
            let (table_id, version) = (n % tables + 1, n / tables + 1);
            ChangeKind::VersionCommitted {
                table_id,
                record: crate::VersionRecord {
                    version,
                    manifest: crate::ManifestRef {
                        path: format!("_versions/{version}.manifest"),
                        size_bytes: 4_000,
                    },
                    committed_at_ms: 1_700_000_000_000 + i64::try_from(revision).unwrap_or(0),
                    revision,
                    operation_id: Some(format!("ingest-{table_id}-{version}")),
                    digest: Some([7; 32]),
                },
            }
        };
        ChangeEvent { revision, kind }
    }

    /// Runs the contract on `store`, which must be empty.
    pub fn check(store: &dyn EventStore) {
        assert_eq!(store.read_lease().expect("read"), None);
        assert_eq!(store.revision().expect("revision"), 0);
        store
            .write_lease(None, &lease(1, "a", 0))
            .expect("first lease");
        // A write that expects another record than the stored one is refused.
        let err = store
            .write_lease(None, &lease(1, "b", 0))
            .expect_err("taken");
        assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
        let err = store
            .write_lease(Some(&lease(1, "a", 7)), &lease(2, "b", 0))
            .expect_err("stale expectation");
        assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
        store
            .write_lease(Some(&lease(1, "a", 0)), &lease(1, "a", 1))
            .expect("renewal");

        // Appends: conditioned on the revision and the fence, all events or none.
        let a = lease(1, "a", 1).fence();
        store.append(&a, 0, &[event(1), event(2)]).expect("append");
        let stale = store.append(&a, 1, &[event(2)]).expect_err("stale");
        assert!(
            matches!(
                stale,
                StoreError::RevisionMismatch {
                    expected: 1,
                    actual: 2
                }
            ),
            "{stale}"
        );
        let read: Vec<u64> = store
            .read_after(0, 100)
            .expect("read")
            .iter()
            .map(|e| e.revision)
            .collect();
        assert_eq!(read, vec![1, 2]);
        let read: Vec<u64> = store
            .read_after(1, 100)
            .expect("read")
            .iter()
            .map(|e| e.revision)
            .collect();
        assert_eq!(read, vec![2]);
        assert_eq!(store.read_after(0, 1).expect("read").len(), 1, "limit");

        // A takeover fences the old leader off, even at the right revision.
        store
            .write_lease(Some(&lease(1, "a", 1)), &lease(2, "b", 0))
            .expect("takeover");
        let err = store.append(&a, 2, &[event(3)]).expect_err("fenced");
        assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
        assert!(err.to_string().contains("fenced off"), "{err}");
        assert_eq!(store.revision().expect("revision"), 2);
        store
            .append(&lease(2, "b", 0).fence(), 2, &[event(3)])
            .expect("the new leader appends");
        assert_eq!(store.revision().expect("revision"), 3);
        assert_eq!(store.read_lease().expect("read"), Some(lease(2, "b", 0)));
        // A released lease admits nobody.
        let released = Lease {
            epoch: 2,
            holder: String::new(),
            address: String::new(),
            renewal: 1,
        };
        store
            .write_lease(Some(&lease(2, "b", 0)), &released)
            .expect("release");
        assert_eq!(store.read_lease().expect("read"), Some(released.clone()));
        let err = store
            .append(&lease(2, "b", 0).fence(), 3, &[event(4)])
            .expect_err("released");
        assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
        assert_eq!(store.load().expect("load").revision(), 3);
        checkpoints(store, &released);
    }

    /// Checkpoints and truncation, on the store [`check`] left at revision 3 with the lease
    /// `released`.
    fn checkpoints(store: &dyn EventStore, released: &Lease) {
        assert_eq!(store.read_checkpoint().expect("read"), None);
        assert_eq!(store.truncated_through().expect("through"), 0);
        store
            .write_lease(Some(released), &lease(3, "c", 0))
            .expect("c leads");
        let c = lease(3, "c", 0).fence();
        let later: Vec<ChangeEvent> = (4..=12).map(event).collect();
        store.append(&c, 3, &later).expect("append");
        let mut all = store.read_after(0, 100).expect("read");
        let at = |all: &[ChangeEvent], revision: usize| {
            Registry::from_log(&all[..revision]).expect("the log replays")
        };
        let revisions =
            |events: Vec<ChangeEvent>| -> Vec<u64> { events.iter().map(|e| e.revision).collect() };

        // Nothing is removed that no checkpoint covers.
        let err = store.truncate(&c, 2).expect_err("no checkpoint yet");
        assert!(matches!(err, StoreError::Refused(_)), "{err}");
        store
            .write_checkpoint(&at(&all, 8))
            .expect("checkpoint at 8");
        assert_eq!(store.read_checkpoint().expect("read"), Some(at(&all, 8)));
        store
            .write_checkpoint(&at(&all, 5))
            .expect("an older checkpoint is a no-op");
        assert_eq!(
            store.read_checkpoint().expect("read"),
            Some(at(&all, 8)),
            "an older checkpoint never replaces a newer one"
        );
        let err = store.truncate(&c, 9).expect_err("beyond the checkpoint");
        assert!(matches!(err, StoreError::Refused(_)), "{err}");
        let err = store
            .truncate(&lease(2, "b", 0).fence(), 6)
            .expect_err("a deposed leader");
        assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");

        store.truncate(&c, 6).expect("truncate through 6");
        assert_eq!(store.truncated_through().expect("through"), 6);
        store.truncate(&c, 4).expect("less than removed is a no-op");
        assert_eq!(store.truncated_through().expect("through"), 6);
        for after in [0, 3, 5] {
            let err = store.read_after(after, 100).expect_err("truncated");
            assert!(
                matches!(err, StoreError::Truncated { after: a, through: 6 } if a == after),
                "{err}"
            );
        }
        assert_eq!(
            revisions(store.read_after(6, 100).expect("tail")),
            (7..=12).collect::<Vec<_>>()
        );
        assert_eq!(
            revisions(store.read_after(9, 2).expect("tail")),
            vec![10, 11]
        );
        assert_eq!(store.revision().expect("revision"), 12);
        assert_eq!(store.load().expect("load"), at(&all, 12));

        // The last event always stays; appends go on after truncation.
        store
            .write_checkpoint(&at(&all, 12))
            .expect("checkpoint at 12");
        let err = store.truncate(&c, 12).expect_err("the last event stays");
        assert!(matches!(err, StoreError::Refused(_)), "{err}");
        store.truncate(&c, 11).expect("truncate through 11");
        assert_eq!(
            revisions(store.read_after(11, 100).expect("tail")),
            vec![12]
        );
        assert!(store.read_after(12, 100).expect("caught up").is_empty());
        store
            .append(&c, 12, &[event(13)])
            .expect("append after truncation");
        all.push(event(13));
        assert_eq!(
            revisions(store.read_after(11, 100).expect("tail")),
            vec![12, 13]
        );
        let err = store.read_after(10, 100).expect_err("truncated");
        assert!(
            matches!(err, StoreError::Truncated { through: 11, .. }),
            "{err}"
        );
        assert_eq!(store.load().expect("load"), at(&all, 13));
        assert_eq!(store.read_checkpoint().expect("read"), Some(at(&all, 12)));
    }
}
