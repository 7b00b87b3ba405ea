//! The simulations' store keeps the same contract as Metasrv's RocksDB and DynamoDB stores
//! (`lake_core::store::contract`), and its fault wrapper fails exactly as it says.

use lake_core::store::contract::{check, event, lease};
use lake_core::{AppendLimits, EventStore, StoreError};
use lake_simtests::store::{Faults, Faulty, SimStore};

#[test]
fn the_simulated_store_keeps_the_store_contract() {
    check(&SimStore::default());
    check(&Faulty::new(SimStore::default()));
    // A transaction limit refuses, and writes nothing.
    let limited = SimStore::with_limits(AppendLimits {
        items: 2,
        ..AppendLimits::UNBOUNDED
    });
    limited.write_lease(None, &lease(1, "a", 0)).expect("lease");
    let err = limited
        .append(
            &lease(1, "a", 0).fence(),
            0,
            &[event(1), event(2), event(3)],
        )
        .expect_err("three events");
    assert!(matches!(err, StoreError::Refused(_)), "{err}");
    assert_eq!(limited.revision().expect("revision"), 0);
    // Events out of sequence are refused too.
    let err = limited
        .append(&lease(1, "a", 0).fence(), 0, &[event(2)])
        .expect_err("gap");
    assert!(matches!(err, StoreError::Refused(_)), "{err}");
}

#[test]
fn faults_refuse_before_applying_or_lose_the_answer_after() {
    let store = Faulty::new(SimStore::default());
    store.write_lease(None, &lease(1, "a", 0)).expect("lease");
    let fence = lease(1, "a", 0).fence();

    store.set(Faults {
        throttle_writes: 1,
        ..Faults::default()
    });
    let err = store.append(&fence, 0, &[event(1)]).expect_err("throttled");
    assert!(err.not_written(), "{err}");
    assert_eq!(store.revision().expect("revision"), 0, "nothing applied");

    store.set(Faults {
        lose_answers: 1,
        ..Faults::default()
    });
    let err = store.append(&fence, 0, &[event(1)]).expect_err("lost");
    assert!(!err.not_written(), "an unknown outcome: {err}");
    assert_eq!(store.revision().expect("revision"), 1, "it applied");
    // A retry at the old base learns that it did.
    let retry = store.append(&fence, 0, &[event(1)]).expect_err("retry");
    assert!(
        matches!(
            retry,
            StoreError::RevisionMismatch {
                expected: 0,
                actual: 1
            }
        ),
        "{retry}"
    );

    store.set(Faults {
        fail_reads: 2,
        ..Faults::default()
    });
    assert!(matches!(store.read_lease(), Err(StoreError::Io(_))));
    assert!(matches!(store.read_after(0, 10), Err(StoreError::Io(_))));
    assert_eq!(store.read_after(0, 10).expect("third read").len(), 1);
    assert_eq!(store.left(), Faults::default(), "every fault used once");
    assert_eq!(store.inner().log(), vec![event(1)]);
}
