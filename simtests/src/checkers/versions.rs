//! Versions: a Query replica's cleanup of expired versions' files
//! ([`lake_core::ExpiryWatch`] over its lagging cache, as the shell's cleanup runs it)
//! never removes a version Metasrv retains (reachable by time travel), nor one a reader
//! pinned while Metasrv retained it less than the cleanup grace ago (a query still
//! running: pinned readers get the whole grace, whichever replica cleans up).

use lake_core::{Registry, TableId};

use super::Violation;

/// A reader's pin: it started reading `version` of `table` at `at_ms` (the simulation's
/// true time, ms since its start), while Metasrv retained that version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The table read.
    pub table: TableId,
    /// The version pinned.
    pub version: u64,
    /// When the reader started, ms since the simulation began.
    pub at_ms: u64,
}

/// A replica's cleanup: replica `replica` would remove the files of `table`'s versions
/// before `before`, at `at_ms` (true time, as [`Pin::at_ms`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cleanup {
    /// The replica's index.
    pub replica: usize,
    /// The table cleaned up.
    pub table: TableId,
    /// Versions before this one lose their files.
    pub before: u64,
    /// When, ms since the simulation began.
    pub at_ms: u64,
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct Versions {
    violations: Vec<Violation>,
}

impl Versions {
    /// `cleanup` (what one replica's cleanup would remove, and when), while `truth` is the
    /// durable registry and `pins` the readers that pinned a version less than
    /// `running_ms` ago (true time).
    pub fn collected(&mut self, cleanup: Cleanup, truth: &Registry, pins: &[Pin], running_ms: u64) {
        let Cleanup {
            replica,
            table,
            before,
            at_ms: now_ms,
        } = cleanup;
        if let Some(state) = truth.table_by_id(table)
            && !state.versions.is_empty()
            && before > state.oldest_version()
        {
            self.violate(format!(
                "replica {replica} removed table {table}'s versions before {before}; Metasrv retains {} and later",
                state.oldest_version()
            ));
        }
        for pin in pins.iter().filter(|p| {
            p.table == table && p.version < before && now_ms.saturating_sub(p.at_ms) < running_ms
        }) {
            self.violate(format!(
                "replica {replica} removed version {} of table {table} at {now_ms} ms; a reader pinned it at {} ms, less than the grace ago",
                pin.version, pin.at_ms
            ));
        }
    }

    /// Every violation recorded so far.
    pub fn violations(&self) -> Vec<Violation> {
        self.violations.clone()
    }

    fn violate(&mut self, message: String) {
        self.violations.push(Violation {
            family: "versions",
            message,
        });
    }
}
