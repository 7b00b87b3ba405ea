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

    /// Up to `limit` events with revision > `after`, in order.
    ///
    /// # Errors
    /// [`StoreError::Io`] or [`StoreError::Corrupt`].
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

    /// The registry at the log's last revision.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] if the log does not replay.
    fn load(&self) -> Result<Registry, StoreError> {
        let mut registry = Registry::new();
        loop {
            let events = self.read_after(registry.revision(), 4096)?;
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

/// The contract every [`EventStore`] keeps, as one check the backends' tests call on a
/// fresh, empty store: conditional lease writes, fenced appends, revision conditions,
/// ordered and limited reads, takeover and release fencing, and [`EventStore::load`].
/// It panics at the first broken promise, naming it.
pub mod contract {
    use super::{EventStore, StoreError};
    use crate::{ChangeEvent, ChangeKind, Lease};

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
        assert_eq!(store.read_lease().expect("read"), Some(released));
        let err = store
            .append(&lease(2, "b", 0).fence(), 3, &[event(4)])
            .expect_err("released");
        assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
        assert_eq!(store.load().expect("load").revision(), 3);
    }
}
