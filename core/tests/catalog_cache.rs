//! Catalog cache: ordering, gaps, coalesced fetches, read-your-writes, monotonicity, lease.

use lake_core::{
    CacheError, CacheInput, CacheOutput, CatalogCache, ChangeEvent, ChangeKind, Registry,
};

fn ns_event(revision: u64) -> ChangeEvent {
    ChangeEvent {
        revision,
        kind: ChangeKind::NamespaceCreated {
            name: format!("n{revision}"),
        },
    }
}

fn registry_at(revision: u64) -> Registry {
    let mut r = Registry::new();
    for rev in 1..=revision {
        r.apply(&ns_event(rev)).expect("apply");
    }
    r
}

fn drain(cache: &mut CatalogCache) -> Vec<CacheOutput> {
    std::iter::from_fn(|| cache.poll()).collect()
}

#[test]
fn events_apply_in_order_and_duplicates_are_ignored() {
    let mut c = CatalogCache::new(1_000);
    c.handle(CacheInput::Event(ns_event(1)), 0);
    c.handle(CacheInput::Event(ns_event(2)), 0);
    c.handle(CacheInput::Event(ns_event(1)), 0);
    assert_eq!(c.revision(), 2);
    assert_eq!(
        drain(&mut c),
        vec![CacheOutput::Advanced(1), CacheOutput::Advanced(2)]
    );
}

#[test]
fn a_gap_triggers_exactly_one_resync_and_the_snapshot_replaces_the_state_whole() {
    let mut c = CatalogCache::new(1_000);
    c.handle(CacheInput::Event(ns_event(1)), 0);
    drain(&mut c);
    c.handle(CacheInput::Event(ns_event(3)), 0);
    c.handle(CacheInput::Event(ns_event(4)), 0);
    c.handle(CacheInput::NeedRevision(4), 0);
    assert_eq!(
        drain(&mut c),
        vec![CacheOutput::FetchSnapshot],
        "one coalesced fetch"
    );
    assert_eq!(c.revision(), 1, "nothing partial applied");
    c.handle(CacheInput::Snapshot(registry_at(4)), 0);
    assert_eq!(drain(&mut c), vec![CacheOutput::Advanced(4)]);
    assert_eq!(c.read(4).expect("fresh").namespaces().count(), 4);
}

#[test]
fn the_cache_never_goes_backwards() {
    let mut c = CatalogCache::new(1_000);
    c.handle(CacheInput::Snapshot(registry_at(5)), 0);
    c.handle(CacheInput::Snapshot(registry_at(3)), 0);
    assert_eq!(c.revision(), 5);
}

#[test]
fn a_read_below_the_callers_token_is_refused_until_the_cache_catches_up() {
    let mut c = CatalogCache::new(1_000);
    c.handle(CacheInput::Event(ns_event(1)), 0);
    assert_eq!(
        c.read(2).err(),
        Some(CacheError::Behind { have: 1, want: 2 })
    );
    c.handle(CacheInput::Event(ns_event(2)), 0);
    assert!(c.read(2).is_ok());
}

#[test]
fn entries_become_unverified_once_the_stream_is_lost_past_the_lease() {
    let mut c = CatalogCache::new(1_000);
    assert!(!c.is_verified(0), "never connected");
    c.handle(CacheInput::StreamUp, 0);
    assert!(c.is_verified(10));
    c.handle(CacheInput::StreamDown, 100);
    assert!(c.is_verified(1_100));
    assert!(!c.is_verified(1_101));
    c.handle(CacheInput::StreamUp, 2_000);
    assert!(c.is_verified(2_001));
}
