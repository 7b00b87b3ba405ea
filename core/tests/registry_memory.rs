//! What the registry keeps in memory at fleet scale: a Metasrv node holds one registry and
//! so does every Query replica's catalog cache, so its size per table and per version is
//! what a fleet pays many times over. Measured with a counting allocator (stats_alloc)
//! around replaying a log of 10,000 tables × 100 versions, one event at a time, and then
//! expiring all but the last 10 versions of each.

use std::alloc::System;

use lake_core::store::contract::fleet_event;
use lake_core::{ChangeEvent, ChangeKind, Registry};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const TABLES: u64 = 10_000;
const VERSIONS: u64 = 100;

/// The bound this test holds the registry to, per committed version (its record, its
/// operation id and digest in the record and again in the table's operation index with its
/// commit time, and its share of the table's entry): 474 bytes were measured when the
/// bound was set (475 MB for the whole registry), 488 once operation ids kept their commit
/// time for their retention window; the README reports it.
const BYTES_PER_VERSION_MAX: i64 = 512;

/// Bytes allocated and not freed since `region` began.
fn live(region: &Region<'_, System>) -> i64 {
    let change = region.change();
    i64::try_from(change.bytes_allocated).unwrap_or(i64::MAX)
        - i64::try_from(change.bytes_deallocated).unwrap_or(0)
        + i64::try_from(change.bytes_reallocated).unwrap_or(0)
}

/// The fleet registry, replayed one event at a time.
fn fleet() -> Registry {
    let events = 1 + TABLES + TABLES * VERSIONS;
    let mut registry = Registry::new();
    for revision in 1..=events {
        registry
            .apply(&fleet_event(TABLES, revision))
            .expect("the fleet log replays");
    }
    registry
}

#[test]
fn a_registry_of_10000_tables_by_100_versions_stays_within_its_memory_bound() {
    let region = Region::new(GLOBAL);
    let registry = fleet();
    let live = live(&region);
    let versions = i64::try_from(TABLES * VERSIONS).unwrap_or(i64::MAX);
    let per_version = live / versions;
    eprintln!(
        "registry of {TABLES} tables × {VERSIONS} versions: {live} bytes live, {per_version} bytes per version, {} bytes per table",
        live / i64::try_from(TABLES).unwrap_or(1)
    );
    assert_eq!(registry.tables().count() as u64, TABLES);
    assert!(
        per_version <= BYTES_PER_VERSION_MAX,
        "{per_version} bytes per version, more than the bound of {BYTES_PER_VERSION_MAX}"
    );
    expired_history_leaves_memory(registry, &region, live);
}

/// Retention gives memory back: expiring all but the last 10 versions and operation ids
/// of every table leaves a registry at most an eighth of the full one's size (`full`
/// bytes). (Part of the one test above: the counting allocator counts every thread.)
fn expired_history_leaves_memory(mut registry: Registry, region: &Region<'_, System>, full: i64) {
    for table_id in 1..=TABLES {
        let event = ChangeEvent {
            revision: registry.revision() + 1,
            kind: ChangeKind::HistoryExpired {
                table_id,
                versions_before: VERSIONS - 9,
                operations_through: VERSIONS - 10,
            },
        };
        registry.apply(&event).expect("expires");
    }
    let kept = live(region);
    eprintln!(
        "registry of {TABLES} tables: {full} bytes with {VERSIONS} versions each, {kept} bytes with the last 10"
    );
    assert!(kept * 8 <= full, "{kept} bytes kept of {full}");
}
