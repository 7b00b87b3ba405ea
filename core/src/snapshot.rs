//! Snapshot resolution: a table reference plus a time-travel clause becomes one pinned
//! version. Resolution runs once per query at planning; the result travels in the ticket.

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

/// Resolves `spec` against a table's history (oldest first, gap-free, as in
/// [`crate::registry::TableState::versions`]).
///
/// Returns the pinned version; 0 means the table has no version yet and reads as empty
/// (only for [`VersionSpec::Latest`]).
///
/// # Errors
/// [`SnapshotError`] naming `table` and the versions (or the first commit time) that exist.
pub fn resolve_version(
    table: &str,
    versions: &[VersionRecord],
    spec: VersionSpec,
) -> Result<u64, SnapshotError> {
    let latest = versions.last().map_or(0, |v| v.version);
    match spec {
        VersionSpec::Latest => Ok(latest),
        VersionSpec::Version(v) if v >= 1 && v <= latest => Ok(v),
        VersionSpec::Version(requested) => Err(SnapshotError::VersionNotFound {
            table: table.to_string(),
            requested,
            available: if latest == 0 {
                "none (the table is empty)".to_string()
            } else {
                format!("1 to {latest}")
            },
        }),
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
                None => Err(SnapshotError::BeforeFirstCommit {
                    table: table.to_string(),
                    requested_ms,
                    first_ms: first.committed_at_ms,
                }),
            }
        }
    }
}
