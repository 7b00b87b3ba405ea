//! Snapshot resolution: a table reference plus a time-travel clause becomes one pinned
//! snapshot: a Lake version ([`resolve_version`]) or an Iceberg snapshot id
//! ([`resolve_iceberg`]). Resolution runs once per query at planning; the result travels in
//! the ticket. [`TimeTravel`] is the clause as SQL states it, shared by both kinds.

use crate::error::SnapshotError;
use crate::registry::VersionRecord;

/// A time-travel clause on a Lake table.
///
/// SQL forms (Spark / Databricks syntax, as sqlparser parses it): none → [`Self::Latest`];
/// `VERSION AS OF n` → [`Self::Version`]; `TIMESTAMP AS OF ts` and
/// `FOR SYSTEM_TIME AS OF ts` → [`Self::AsOfMs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VersionSpec {
    /// The latest committed version.
    Latest,
    /// Exactly this version.
    Version(u64),
    /// The latest version committed at or before this time (milliseconds since the Unix
    /// epoch, UTC).
    AsOfMs(i64),
}

/// Resolves `spec` against a table's retained history (oldest first, gap-free, as in
/// [`crate::registry::TableState::versions`]; the versions before the first expired).
///
/// Returns the pinned version; 0 means the table has no version yet and reads as empty
/// (only for [`VersionSpec::Latest`]).
///
/// # Errors
/// [`SnapshotError`] naming `table` and the versions (or the first commit time) that exist;
/// [`SnapshotError::Expired`] for a version, or a time, before the oldest retained
/// version.
pub fn resolve_version(
    table: &str,
    versions: &[VersionRecord],
    spec: VersionSpec,
) -> Result<u64, SnapshotError> {
    let latest = versions.last().map_or(0, |v| v.version);
    let expired = |oldest: &VersionRecord| SnapshotError::Expired {
        table: table.to_string(),
        requested: spec,
        oldest: oldest.version,
        oldest_ms: oldest.committed_at_ms,
    };
    match spec {
        VersionSpec::Latest => Ok(latest),
        VersionSpec::Version(v) => match versions.first() {
            Some(oldest) if v >= 1 && v < oldest.version => Err(expired(oldest)),
            Some(_) if v >= 1 && v <= latest => Ok(v),
            _ => Err(SnapshotError::VersionNotFound {
                table: table.to_string(),
                requested: v,
                available: match versions.first() {
                    None => "none (the table is empty)".to_string(),
                    Some(oldest) if oldest.version > 1 => format!(
                        "{} to {latest} (1 to {} expired)",
                        oldest.version,
                        oldest.version - 1
                    ),
                    Some(_) => format!("1 to {latest}"),
                },
            }),
        },
        VersionSpec::AsOfMs(requested_ms) => {
            let Some(first) = versions.first() else {
                return Err(SnapshotError::Empty {
                    table: table.to_string(),
                });
            };
            // Commit times never decrease along the history, so the answer is the last
            // version whose time is <= requested.
            let after = versions.partition_point(|v| v.committed_at_ms <= requested_ms);
            match after.checked_sub(1) {
                Some(index) => Ok(versions[index].version),
                None if first.version > 1 => Err(expired(first)),
                None => Err(SnapshotError::BeforeFirstCommit {
                    table: table.to_string(),
                    requested_ms,
                    first_ms: first.committed_at_ms,
                }),
            }
        }
    }
}

/// A time-travel clause as SQL states it, before it is known whether the table is a Lake
/// table or an Iceberg table: `VERSION AS OF 42` is [`Self::Number`], `VERSION AS OF
/// 'audit'` is [`Self::Name`], `TIMESTAMP AS OF …` is [`Self::AsOfMs`]. The same clause then
/// resolves against either kind of history ([`Self::for_lake`], [`Self::for_iceberg`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimeTravel {
    /// No clause: the latest version / the current snapshot.
    Latest,
    /// A Lake version or an Iceberg snapshot id.
    Number(i64),
    /// An Iceberg branch or tag name.
    Name(String),
    /// Milliseconds since the Unix epoch, UTC.
    AsOfMs(i64),
}

impl TimeTravel {
    /// The clause for a Lake table.
    ///
    /// # Errors
    /// [`SnapshotError::Unsupported`] for a ref name (Lake tables have no branches or tags)
    /// or a negative version.
    pub fn for_lake(&self, table: &str) -> Result<VersionSpec, SnapshotError> {
        match self {
            Self::Latest => Ok(VersionSpec::Latest),
            Self::Number(n) => u64::try_from(*n).map(VersionSpec::Version).map_err(|_| {
                SnapshotError::Unsupported {
                    table: table.to_string(),
                    what: format!("version {n}: Lake versions are whole numbers from 1"),
                }
            }),
            Self::Name(name) => Err(SnapshotError::Unsupported {
                table: table.to_string(),
                what: format!(
                    "ref {name:?}: Lake tables have no branches or tags; use VERSION AS OF <number> or TIMESTAMP AS OF"
                ),
            }),
            Self::AsOfMs(ms) => Ok(VersionSpec::AsOfMs(*ms)),
        }
    }

    /// The clause for an Iceberg table.
    pub fn for_iceberg(&self) -> IcebergSpec {
        match self {
            Self::Latest => IcebergSpec::Current,
            Self::Number(id) => IcebergSpec::SnapshotId(*id),
            Self::Name(name) => IcebergSpec::Ref(name.clone()),
            Self::AsOfMs(ms) => IcebergSpec::AsOfMs(*ms),
        }
    }
}

/// Which snapshot of an Iceberg table to read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IcebergSpec {
    /// The table's `current-snapshot-id` (the `main` branch).
    Current,
    /// Exactly this snapshot id.
    SnapshotId(i64),
    /// The snapshot a branch or tag points at.
    Ref(String),
    /// The snapshot that was current at this time (milliseconds since the Unix epoch):
    /// the last `snapshot-log` entry at or before it, as Spark's and Trino's
    /// `TIMESTAMP AS OF` do (`SnapshotUtil.snapshotIdAsOfTime`).
    AsOfMs(i64),
}

/// Whether an Iceberg ref is a branch or a tag (table spec, "Snapshot References").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IcebergRefKind {
    /// A mutable ref; `main` is the table's current state.
    Branch,
    /// An immutable ref.
    Tag,
}

/// The parts of an Iceberg table's metadata (spec v2 `table-metadata`) that snapshot
/// resolution reads. Shells fill it from iceberg-rust's `TableMetadata`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IcebergHistory {
    /// `current-snapshot-id`; `None` for a table without snapshots.
    pub current_snapshot_id: Option<i64>,
    /// `snapshots[].snapshot-id` with their `timestamp-ms`.
    pub snapshots: Vec<(i64, i64)>,
    /// `refs`: name, kind and `snapshot-id`.
    pub refs: Vec<(String, IcebergRefKind, i64)>,
    /// `snapshot-log`: (`timestamp-ms`, `snapshot-id`) in the order the log lists them.
    pub snapshot_log: Vec<(i64, i64)>,
}

/// Resolves `spec` against an Iceberg table's metadata.
///
/// Returns the pinned snapshot id, or `None` when [`IcebergSpec::Current`] names a table
/// that has no snapshot yet (it reads as empty).
///
/// # Errors
/// [`SnapshotError`] naming `table` and what exists: the snapshot ids, the ref names, or
/// the first entry of the snapshot log.
pub fn resolve_iceberg(
    table: &str,
    history: &IcebergHistory,
    spec: &IcebergSpec,
) -> Result<Option<i64>, SnapshotError> {
    let known = |id: i64| history.snapshots.iter().any(|&(s, _)| s == id);
    match spec {
        IcebergSpec::Current => Ok(history.current_snapshot_id),
        IcebergSpec::SnapshotId(id) if known(*id) => Ok(Some(*id)),
        IcebergSpec::SnapshotId(id) => Err(SnapshotError::SnapshotIdNotFound {
            table: table.to_string(),
            requested: *id,
            available: listing(history.snapshots.iter().map(|(id, _)| id.to_string())),
        }),
        IcebergSpec::Ref(name) => history
            .refs
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|&(_, _, id)| Some(id))
            .ok_or_else(|| SnapshotError::RefNotFound {
                table: table.to_string(),
                name: name.clone(),
                available: listing(history.refs.iter().map(|(n, kind, _)| match kind {
                    IcebergRefKind::Branch => format!("branch {n}"),
                    IcebergRefKind::Tag => format!("tag {n}"),
                })),
            }),
        IcebergSpec::AsOfMs(requested_ms) => {
            // The log is in commit order; take the last entry at or before the time,
            // scanning all of it so an out-of-order entry cannot hide a later one.
            let found = history
                .snapshot_log
                .iter()
                .filter(|(ts, _)| ts <= requested_ms)
                .max_by_key(|(ts, _)| *ts)
                .map(|&(_, id)| id);
            match (found, history.snapshot_log.iter().map(|(ts, _)| *ts).min()) {
                (Some(id), _) => Ok(Some(id)),
                (None, Some(first_ms)) => Err(SnapshotError::BeforeFirstCommit {
                    table: table.to_string(),
                    requested_ms: *requested_ms,
                    first_ms,
                }),
                (None, None) => Err(SnapshotError::Empty {
                    table: table.to_string(),
                }),
            }
        }
    }
}

/// At most 20 items joined with ", ", then how many more there are.
fn listing(items: impl ExactSizeIterator<Item = String>) -> String {
    const SHOWN: usize = 20;
    let total = items.len();
    if total == 0 {
        return "none".to_string();
    }
    let mut text = items.take(SHOWN).collect::<Vec<_>>().join(", ");
    if total > SHOWN {
        text.push_str(&format!(" and {} more", total - SHOWN));
    }
    text
}
