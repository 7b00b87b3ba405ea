//! Exact row counts from snapshot summaries, so `SELECT count(*)` over an Iceberg snapshot
//! is answered from metadata as other Iceberg engines answer it, instead of by a scan.
//!
//! A snapshot's summary carries `total-records` and, for v2 tables, `total-delete-files`
//! (table spec, "Snapshot Summary" / Java `SnapshotSummary`). When the snapshot has no
//! delete files, `total-records` is exactly the rows a full scan returns; the scan
//! ([`super::scan`]) reports it as an exact statistic of a full scan, and DataFusion's
//! `AggregateStatistics` rule then replaces `count(*)` with that number.

use iceberg::spec::Snapshot;

/// The rows a full scan of `snapshot` returns, when its summary says so exactly:
/// `total-records`, provided `total-delete-files` is present and 0.
pub fn exact_rows(snapshot: &Snapshot) -> Option<usize> {
    let summary = &snapshot.summary().additional_properties;
    let deletes: u64 = summary.get("total-delete-files")?.parse().ok()?;
    if deletes != 0 {
        return None;
    }
    summary.get("total-records")?.parse().ok()
}
