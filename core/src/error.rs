//! The core's error enums.

use crate::registry::TableId;

/// Why a mutation was refused or could not be completed. Every variant says what was wrong
/// and, where it helps, what exists instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommitError {
    /// A name does not follow the allowed form.
    #[error(
        "invalid {kind} name {name:?}: use 1 to 128 ASCII letters, digits or '_', not starting with a digit"
    )]
    InvalidName { kind: &'static str, name: String },
    /// A value a mutation would store does not have the allowed form (a manifest path,
    /// a size, a schema).
    #[error("invalid {what}: {detail}")]
    InvalidInput { what: &'static str, detail: String },
    /// The namespace does not exist.
    #[error("namespace {name:?} does not exist; namespaces: [{existing}]")]
    NamespaceNotFound { name: String, existing: String },
    /// The namespace already exists.
    #[error("namespace {name:?} already exists")]
    NamespaceExists { name: String },
    /// A namespace that still holds tables cannot be dropped.
    #[error("namespace {name:?} is not empty: it holds tables [{tables}]")]
    NamespaceNotEmpty { name: String, tables: String },
    /// The table does not exist.
    #[error("table {namespace}.{name} does not exist; tables in {namespace}: [{existing}]")]
    TableNotFound {
        namespace: String,
        name: String,
        existing: String,
    },
    /// The table id is not (or no longer) registered: it was dropped.
    #[error("table id {id} does not exist (the table was dropped or never created)")]
    TableIdNotFound { id: TableId },
    /// The table already exists.
    #[error("table {namespace}.{name} already exists")]
    TableExists { namespace: String, name: String },
    /// Compare-and-swap lost: another commit moved the pointer first. Definitely not
    /// committed; rebase on `latest` and retry.
    #[error(
        "commit conflict on table id {table_id}: expected version {expected} but the latest is {latest}; rebase and retry"
    )]
    VersionConflict {
        table_id: TableId,
        expected: u64,
        latest: u64,
    },
    /// The operation id was already used with a different payload.
    #[error(
        "operation id {operation_id:?} on table id {table_id} already committed version {version} with a different payload"
    )]
    OperationIdReused {
        table_id: TableId,
        operation_id: String,
        version: u64,
    },
    /// The version to finalize was never committed.
    #[error("version {version} of table id {table_id} does not exist; latest is {latest}")]
    VersionNotFound {
        table_id: TableId,
        version: u64,
        latest: u64,
    },
    /// The durable store refused the write: definitely not committed; retry.
    #[error("the store did not write the change: {0}; nothing was committed, retry")]
    NotWritten(String),
    /// This Metasrv node does not lead (or has not finished loading the store after its
    /// election): send the request to the leader instead. Definitely not committed.
    #[error("this Metasrv node is not the leader; {leader}")]
    NotLeader {
        /// Where the leader is, as far as this node knows (`leader is at host:port` or
        /// `no leader is known yet`).
        leader: String,
    },
    /// The store did not answer in time: the change may or may not be durable. Retry with
    /// the same operation id, which is safe, or re-read before retrying.
    #[error("the store outcome is unknown: {0}; retry with the same operation id or re-read")]
    OutcomeUnknown(String),
}

impl CommitError {
    /// Whether the caller may retry the same request unchanged (after re-reading, for a
    /// version conflict).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::VersionConflict { .. }
                | Self::NotLeader { .. }
                | Self::NotWritten(_)
                | Self::OutcomeUnknown(_)
        )
    }
}

/// An event that does not fit the registry it is applied to.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Events must be applied in revision order without gaps.
    #[error("event out of order: expected revision {expected}, got {got}")]
    OutOfOrder { expected: u64, got: u64 },
    /// The event contradicts the state.
    #[error("event at revision {revision} does not fit the registry: {what}")]
    Inconsistent { revision: u64, what: String },
}

/// A time-travel clause that names no snapshot of the table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// The requested version was never committed.
    #[error("table {table} has no version {requested}; versions are {available}")]
    VersionNotFound {
        table: String,
        requested: u64,
        available: String,
    },
    /// The timestamp is before the first commit.
    #[error(
        "table {table} has no version as of {requested_ms} ms since the epoch; its first version was committed at {first_ms} ms"
    )]
    BeforeFirstCommit {
        table: String,
        requested_ms: i64,
        first_ms: i64,
    },
    /// The requested version (or the version as of the requested time) was committed but
    /// has expired from the table's retained history ([`crate::retention`]).
    #[error(
        "{}: the oldest retained version is {oldest}, committed at {oldest_ms} ms since the epoch; older versions expired (Metasrv's retention windows decide how long history is kept)",
        expired_request(table, requested)
    )]
    Expired {
        table: String,
        /// [`crate::VersionSpec::Version`] or [`crate::VersionSpec::AsOfMs`].
        requested: crate::VersionSpec,
        oldest: u64,
        oldest_ms: i64,
    },
    /// The table has no committed version at all.
    #[error("table {table} has no committed version yet")]
    Empty { table: String },
    /// The Iceberg snapshot id is not in the table's metadata (never existed, or expired).
    #[error("table {table} has no snapshot {requested}; snapshot ids are: {available}")]
    SnapshotIdNotFound {
        table: String,
        requested: i64,
        available: String,
    },
    /// No Iceberg branch or tag has this name.
    #[error("table {table} has no branch or tag {name:?}; refs are: {available}")]
    RefNotFound {
        table: String,
        name: String,
        available: String,
    },
    /// The clause does not apply to this kind of table.
    #[error("table {table} cannot be read at {what}")]
    Unsupported { table: String, what: String },
}

/// What [`SnapshotError::Expired`] could not find in `table`.
fn expired_request(table: &str, requested: &crate::VersionSpec) -> String {
    match requested {
        crate::VersionSpec::Version(v) => format!("version {v} of table {table} has expired"),
        crate::VersionSpec::AsOfMs(ms) => {
            format!("table {table} keeps no version as of {ms} ms since the epoch")
        }
        crate::VersionSpec::Latest => format!("table {table} has no latest version"),
    }
}
