//! What the registry keeps in memory at fleet scale: a Metasrv node holds one registry and
//! so does every Query replica's catalog cache, so its size per table and per version is
//! what a fleet pays many times over. Measured with a counting allocator (stats_alloc)
//! around replaying a log of 10,000 tables × 100 versions, one event at a time.

use std::alloc::System;

use lake_core::Registry;
use lake_core::store::contract::fleet_event;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const TABLES: u64 = 10_000;
const VERSIONS: u64 = 100;

/// The bound this test holds the registry to, per committed version (its record, its
/// operation id and digest in the record and again in the table's operation index, and its
/// share of the table's entry): 474 bytes were measured when the bound was set (475 MB for
/// the whole registry); the README reports it.
const BYTES_PER_VERSION_MAX: i64 = 512;

#[test]
fn a_registry_of_10000_tables_by_100_versions_stays_within_its_memory_bound() {
    let events = 1 + TABLES + TABLES * VERSIONS;
    let region = Region::new(GLOBAL);
    let mut registry = Registry::new();
    for revision in 1..=events {
        registry
            .apply(&fleet_event(TABLES, revision))
            .expect("the fleet log replays");
    }
    let change = region.change();
    let live = i64::try_from(change.bytes_allocated).unwrap_or(i64::MAX)
        - i64::try_from(change.bytes_deallocated).unwrap_or(0)
        + i64::try_from(change.bytes_reallocated).unwrap_or(0);
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
}
