//! The simulations' checkers, one module per invariant family, in the style of
//! TigerBeetle's `src/testing/cluster/*_checker.zig`: each records what the simulation
//! observes (an election won, a store write applied, a commit acknowledged, a replica's
//! revision) and reports every broken promise as a [`Violation`] naming its family, so a
//! planted bug's test can say which checker caught it.
//!
//! * [`commits`]: every acknowledged commit is in the gap-free history exactly once, no
//!   version is acknowledged to two operations, nothing is committed without an ack;
//! * [`leadership`]: one winner per epoch, never two nodes leading at one instant, an
//!   exclusive node never stepping down unasked;
//! * [`fencing`]: every applied store write carried the fence of the lease holder;
//! * [`replicas`]: a replica never serves below a client's token, never moves backwards,
//!   serves at a token exactly the commit acknowledged for it, and converges after heal;
//! * [`garbage`]: a replica's collection of dropped tables' files never takes a live
//!   table's directory for a dropped one, and once caught up finds every dropped one;
//! * [`versions`]: a replica's cleanup of expired versions' files never removes a version
//!   Metasrv retains, nor one a reader pinned less than the grace ago.

pub mod commits;
pub mod fencing;
pub mod garbage;
pub mod leadership;
pub mod replicas;
pub mod versions;

/// The version of `table` that operation `op` committed, as `registry` records it: its
/// retained operation ids name the version, and that version's record, unless it expired
/// from the retained history, carries `op`. `None` when the registry does not hold `op`
/// so. The simulations let versions expire but keep operation ids (a run's few dozen), so
/// an acknowledged operation is always found this way.
pub fn committed_as(
    registry: &lake_core::Registry,
    table: lake_core::TableId,
    op: &str,
) -> Option<u64> {
    let table = registry.table_by_id(table)?;
    let version = table.operations.get(op)?.version;
    match table.version(version) {
        Some(record) if record.operation_id.as_deref() != Some(op) => None,
        _ => Some(version),
    }
}

/// A broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The checker's family: `commits`, `leadership`, `fencing`, `replicas`, `garbage` or
    /// `versions`.
    pub family: &'static str,
    /// What happened.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} checker: {}", self.family, self.message)
    }
}

/// All six checkers of one run.
#[derive(Debug, Default)]
pub struct Checkers {
    pub commits: commits::Commits,
    pub leadership: leadership::Leadership,
    pub fencing: fencing::Fencing,
    pub replicas: replicas::Replicas,
    pub garbage: garbage::Garbage,
    pub versions: versions::Versions,
}

impl Checkers {
    /// Every violation recorded so far.
    pub fn violations(&self) -> Vec<Violation> {
        [
            self.commits.violations(),
            self.leadership.violations(),
            self.fencing.violations(),
            self.replicas.violations(),
            self.garbage.violations(),
            self.versions.violations(),
        ]
        .concat()
    }

    /// Panics with every violation recorded so far, if any.
    pub fn assert_clean(&self) {
        let violations = self.violations();
        assert!(
            violations.is_empty(),
            "violations:\n{}",
            violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
