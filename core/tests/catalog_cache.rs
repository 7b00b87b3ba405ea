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

// ---- model test --------------------------------------------------------------------------

use proptest::prelude::*;

/// What a shell may feed, over a store log of `LOG` events.
#[derive(Clone, Debug)]
enum Step {
    /// The stream delivers the event at this revision (any order, any number of times).
    Deliver(u64),
    /// A reader needs this revision.
    Need(u64),
    /// The outstanding fetch (if any) answers with the store at this revision or later.
    Answer(u64),
    StreamDown,
    StreamUp,
}

const LOG: u64 = 12;

fn steps() -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(
        prop_oneof![
            5 => (1..=LOG).prop_map(Step::Deliver),
            2 => (0..=LOG).prop_map(Step::Need),
            2 => (0..=LOG).prop_map(Step::Answer),
            1 => Just(Step::StreamDown),
            1 => Just(Step::StreamUp),
        ],
        1..60,
    )
}

/// The reference: the cache is the log's prefix up to `revision`; a gap or a need beyond
/// it starts one fetch; a fetch answer never moves it back.
#[derive(Default)]
struct Model {
    revision: u64,
    fetching: bool,
}

proptest! {
    #[test]
    fn the_cache_behaves_like_a_prefix_of_the_log(steps in steps()) {
        let mut cache = CatalogCache::new(1_000);
        let mut model = Model::default();
        // The store's revision: at least everything the stream has delivered.
        let mut store = 0;
        for (now, step) in steps.into_iter().enumerate() {
            let now = now as i64 * 100;
            let before = model.revision;
            let mut fetch = false;
            let input = match step {
                Step::Deliver(revision) => {
                    store = store.max(revision);
                    if revision == model.revision + 1 {
                        model.revision = revision;
                    } else if revision > model.revision + 1 && !model.fetching {
                        fetch = true;
                    }
                    CacheInput::Event(ns_event(revision))
                }
                Step::Need(want) => {
                    if want > model.revision && !model.fetching {
                        fetch = true;
                    }
                    CacheInput::NeedRevision(want)
                }
                Step::Answer(at) => {
                    if !model.fetching {
                        continue; // a shell answers only a fetch it was asked for
                    }
                    let at = at.max(store);
                    store = at;
                    model.fetching = false;
                    model.revision = model.revision.max(at);
                    CacheInput::Snapshot(registry_at(at))
                }
                Step::StreamDown => CacheInput::StreamDown,
                Step::StreamUp => CacheInput::StreamUp,
            };
            model.fetching |= fetch;
            cache.handle(input, now);
            let outputs = drain(&mut cache);
            let mut expected = Vec::new();
            if fetch {
                expected.push(CacheOutput::FetchSnapshot);
            }
            if model.revision > before {
                expected.push(CacheOutput::Advanced(model.revision));
            }
            prop_assert_eq!(outputs, expected);
            prop_assert_eq!(cache.revision(), model.revision);
            // Never partial: exactly the log's prefix.
            prop_assert_eq!(cache.read(0).unwrap(), &registry_at(model.revision));
            prop_assert!(cache.read(model.revision + 1).is_err());
        }
    }
}
