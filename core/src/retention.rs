//! Retention windows: how much of each table's history the registry keeps.
//!
//! Two windows, each bounded by age and by count:
//! * **Version history** (time travel): a version's record is kept while it is one of the
//!   newest [`Retention::versions_max`] and younger than [`Retention::version_max_age_ms`].
//!   The latest version is always kept. `VERSION AS OF` an expired version fails naming the
//!   oldest retained one ([`crate::SnapshotError::Expired`]).
//! * **Operation ids** (idempotent appends): an id is kept while it is one of the newest
//!   [`Retention::operations_max`] and younger than [`Retention::operation_max_age_ms`].
//!   An append replayed with a retained id returns the version it committed; once the id
//!   has expired, the same append commits again as a new version.
//!
//! The Metasrv leader's coordinator asks [`Retention::expiry`] about a table whenever a
//! commit lands on it, and writes a [`crate::ChangeKind::HistoryExpired`] event in the
//! same group commit when something is due; a sweep every minute does the same for tables
//! that aged past a window without commits. So Metasrv, every node that replays the log
//! and every Query replica's cache drop the same records at the same revision, and the
//! next checkpoint leaves them out of the store.
//! A window is a lower bound: a table is swept once its history is a tenth past a window
//! (by count or by age), so each sweep removes many records at once; what expired is then
//! cut back exactly to the windows.
//!
//! Sources: Iceberg's snapshot expiry (`history.expire.max-snapshot-age-ms`,
//! `history.expire.min-snapshots-to-keep`) and Delta's `delta.logRetentionDuration` /
//! `delta.setTransactionRetentionDuration` keep history and transaction ids by age in the
//! same way.

use crate::registry::TableState;

/// Retention windows of a registry; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Versions committed more than this long ago expire, in ms.
    pub version_max_age_ms: i64,
    /// At most this many versions are kept per table (at least 1: the latest).
    pub versions_max: u64,
    /// Operation ids of versions committed more than this long ago expire, in ms.
    pub operation_max_age_ms: i64,
    /// At most this many operation ids are kept per table (at least 1: an append's id is
    /// kept at least until the next append).
    pub operations_max: u64,
}

/// What expires from one table: the fields of [`crate::ChangeKind::HistoryExpired`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expiry {
    /// The oldest version kept (the versions before it expire; 0: none expires).
    pub versions_before: u64,
    /// The operation ids of versions up to this one expire (0: none).
    pub operations_through: u64,
}

impl Expiry {
    /// The change that carries this expiry out on table `table_id`.
    pub fn change(self, table_id: crate::TableId) -> crate::ChangeKind {
        crate::ChangeKind::HistoryExpired {
            table_id,
            versions_before: self.versions_before,
            operations_through: self.operations_through,
        }
    }
}

impl Retention {
    /// One day in milliseconds.
    pub const DAY_MS: i64 = 86_400_000;

    /// Lake's defaults: 7 days and 1,000 versions of history per table (about 0.5 MB of
    /// registry per table at 488 bytes a version, in Metasrv and in every Query replica's
    /// cache); operation ids for 7 days, at most 100,000 per table (an append retried
    /// within a week, by a writer that appended fewer than 100,000 times since, is
    /// recognized; ids that outlive their versions cost about 150 bytes each, so up to
    /// 15 MB for a table appended to under an id more than 100,000 times a week).
    pub const DEFAULT: Self = Self {
        version_max_age_ms: 7 * Self::DAY_MS,
        versions_max: 1_000,
        operation_max_age_ms: 7 * Self::DAY_MS,
        operations_max: 100_000,
    };

    /// Keeps everything forever.
    pub const FOREVER: Self = Self {
        version_max_age_ms: i64::MAX,
        versions_max: u64::MAX,
        operation_max_age_ms: i64::MAX,
        operations_max: u64::MAX,
    };

    /// Checks the windows.
    ///
    /// # Errors
    /// What is wrong: `versions_max` must be at least 1 (the latest version is always
    /// kept), `operations_max` too, ages must not be negative.
    pub fn validate(&self) -> Result<(), String> {
        if self.versions_max == 0 {
            return Err(
                "versions_max must be at least 1: the latest version is always kept".into(),
            );
        }
        if self.operations_max == 0 {
            return Err(
                "operations_max must be at least 1: an id forgotten at once would make every retry commit again"
                    .into(),
            );
        }
        if self.version_max_age_ms < 0 || self.operation_max_age_ms < 0 {
            return Err(format!(
                "retention ages must not be negative (version_max_age_ms {}, operation_max_age_ms {})",
                self.version_max_age_ms, self.operation_max_age_ms
            ));
        }
        Ok(())
    }

    /// What expires from `table` at `now_ms`, or `None` when its history is within a tenth
    /// of both windows (see the module docs). Each window is cut back only once it is due,
    /// so the (sorting) look at the operation ids happens once per tenth of their window.
    pub fn expiry(&self, table: &TableState, now_ms: i64) -> Option<Expiry> {
        let versions = &table.versions;
        let versions_due = due(
            versions.len(),
            self.versions_max,
            versions.first().map(|v| v.committed_at_ms),
            self.version_max_age_ms,
            now_ms,
        );
        let operations = &table.operations;
        let operations_due = due(
            operations.len(),
            self.operations_max,
            operations.oldest_committed_at_ms(),
            self.operation_max_age_ms,
            now_ms,
        );
        let versions_before = if versions_due {
            let times = versions.iter().map(|v| v.committed_at_ms);
            // The latest version always stays.
            let n = cut(
                times,
                versions.len(),
                self.versions_max,
                self.version_max_age_ms,
                now_ms,
            )
            .min(versions.len().saturating_sub(1));
            versions.get(n).filter(|_| n > 0).map_or(0, |v| v.version)
        } else {
            0
        };
        let operations_through = if operations_due {
            let order = operations.in_commit_order();
            let times = order.iter().map(|(_, record)| record.committed_at_ms);
            let n = cut(
                times,
                order.len(),
                self.operations_max,
                self.operation_max_age_ms,
                now_ms,
            );
            n.checked_sub(1)
                .and_then(|last| order.get(last))
                .map_or(0, |(_, record)| record.version)
        } else {
            0
        };
        (versions_before > 0 || operations_through > 0).then_some(Expiry {
            versions_before,
            operations_through,
        })
    }
}

impl Default for Retention {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Whether a window of `max` records and `max_age_ms` is due to be cut back at `now_ms`:
/// `len` records are more than a tenth past `max`, or the oldest (committed at
/// `oldest_ms`) is more than a tenth of `max_age_ms` past its age.
fn due(len: usize, max: u64, oldest_ms: Option<i64>, max_age_ms: i64, now_ms: i64) -> bool {
    let over = (len as u64).saturating_sub(max);
    let oldest_allowed = now_ms
        .saturating_sub(max_age_ms)
        .saturating_sub(max_age_ms / 10);
    over > max / 10 || oldest_ms.is_some_and(|at| at < oldest_allowed)
}

/// How many of `len` records committed at `times` (oldest first, never decreasing) fall
/// out of a window of `max` records and `max_age_ms` at `now_ms`.
fn cut(
    times: impl Iterator<Item = i64>,
    len: usize,
    max: u64,
    max_age_ms: i64,
    now_ms: i64,
) -> usize {
    let by_count = usize::try_from((len as u64).saturating_sub(max)).unwrap_or(len);
    let oldest_allowed = now_ms.saturating_sub(max_age_ms);
    let by_age = times.take_while(|&at| at < oldest_allowed).count();
    by_count.max(by_age)
}

/// When a Query replica may remove the files of a table's expired versions: the version
/// before which a cleanup may remove files ([`Self::cleanup_before`]) is the oldest retained
/// version this replica saw at least a grace period ago. A version expires at Metasrv no
/// later than a replica sees it expired (a cache never runs ahead of Metasrv), so a reader
/// that pinned a version while Metasrv retained it (on any replica; the latest, or an older
/// one by time travel) has at least the grace to finish. A version's commit time says
/// nothing about this: a version committed a week ago may have been the latest until a
/// minute ago. In memory: a restarted replica sees every expiry afresh and waits a grace
/// again, which only keeps files longer.
///
/// Source: Iceberg's `expire_snapshots` and Delta's `VACUUM` keep files for a retention
/// period so that readers of the snapshots they expire finish; here the period runs from
/// the expiry, not from the snapshot's commit.
#[derive(Clone, Debug, Default)]
pub struct ExpiryWatch {
    /// Per table: each oldest retained version this replica saw, with when it first saw
    /// it, oldest first.
    seen: std::collections::BTreeMap<crate::TableId, std::collections::VecDeque<(u64, i64)>>,
}

impl ExpiryWatch {
    /// Records that `table`'s oldest retained version is `oldest` at `now_ms` (ms since the
    /// Unix epoch), as this replica's cache shows it.
    pub fn observe(&mut self, table: crate::TableId, oldest: u64, now_ms: i64) {
        let seen = self.seen.entry(table).or_default();
        if seen.back().is_none_or(|&(version, _)| version < oldest) {
            seen.push_back((oldest, now_ms));
        }
    }

    /// The version of `table` before which a cleanup at `now_ms` may remove files: the
    /// oldest retained version observed at least `grace_ms` ago (0: none may go yet).
    /// What no later call can need is forgotten.
    pub fn cleanup_before(&mut self, table: crate::TableId, now_ms: i64, grace_ms: i64) -> u64 {
        let Some(seen) = self.seen.get_mut(&table) else {
            return 0;
        };
        let due = now_ms.saturating_sub(grace_ms);
        let passed = seen.iter().take_while(|&&(_, at)| at <= due).count();
        if passed == 0 {
            return 0;
        }
        seen.drain(..passed - 1);
        seen.front().map_or(0, |&(version, _)| version)
    }

    /// Forgets `table` (dropped).
    pub fn forget(&mut self, table: crate::TableId) {
        self.seen.remove(&table);
    }
}

#[cfg(test)]
mod expiry_watch_tests {
    use super::ExpiryWatch;

    #[test]
    fn an_expiry_waits_a_grace_from_when_it_was_first_seen() {
        let mut watch = ExpiryWatch::default();
        assert_eq!(watch.cleanup_before(7, 0, 100), 0, "a table never observed");
        // First seen at 1000 with versions before 5 expired (when, the replica cannot know).
        watch.observe(7, 5, 1_000);
        assert_eq!(watch.cleanup_before(7, 1_099, 100), 0);
        assert_eq!(watch.cleanup_before(7, 1_100, 100), 5);
        // Versions 5..9 expire at 1500: they wait their own grace; 5 stays the bound.
        watch.observe(7, 9, 1_500);
        watch.observe(7, 9, 1_550);
        assert_eq!(watch.cleanup_before(7, 1_599, 100), 5);
        assert_eq!(watch.cleanup_before(7, 1_600, 100), 9);
        // An older view (another replica's lagging cache) never lowers what was seen.
        watch.observe(7, 6, 1_700);
        assert_eq!(watch.cleanup_before(7, 10_000, 100), 9);
        // Other tables are their own; a dropped table is forgotten.
        assert_eq!(watch.cleanup_before(8, 10_000, 100), 0);
        watch.forget(7);
        assert_eq!(watch.cleanup_before(7, 10_000, 100), 0);
    }

    #[test]
    fn with_no_grace_the_latest_view_is_the_bound_and_old_views_are_dropped() {
        let mut watch = ExpiryWatch::default();
        for (oldest, at) in [(2, 10), (3, 20), (4, 30)] {
            watch.observe(1, oldest, at);
        }
        assert_eq!(watch.cleanup_before(1, 30, 0), 4);
        assert_eq!(watch.seen[&1].len(), 1, "only the bound is kept");
    }
}
