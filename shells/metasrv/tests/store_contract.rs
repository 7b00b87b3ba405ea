//! The contract every [`EventStore`] backend keeps, checked on real RocksDB and on
//! DynamoDB (moto's server on 127.0.0.1, started by `.ci/services.sh`; its endpoint is
//! `LAKE_TEST_MOTO_ENDPOINT`, default `http://127.0.0.1:5055`).

use std::sync::Arc;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use lake_core::{ChangeEvent, ChangeKind, Lease};
use lake_metasrv::{DynamoStore, EventStore, RocksStore, StoreError};

fn lease(epoch: u64, holder: &str, renewal: u64) -> Lease {
    Lease {
        epoch,
        holder: holder.into(),
        address: format!("{holder}:7000"),
        renewal,
    }
}

fn event(revision: u64) -> ChangeEvent {
    ChangeEvent {
        revision,
        kind: ChangeKind::NamespaceCreated {
            name: format!("n{revision}"),
        },
    }
}

/// Conditional lease writes, fenced appends, revision conditions, ordered reads.
fn contract(store: &dyn EventStore) {
    assert_eq!(store.read_lease().expect("read"), None);
    assert_eq!(store.revision().expect("revision"), 0);
    store
        .write_lease(None, &lease(1, "a", 0))
        .expect("first lease");
    // A write that expects another record than the stored one is refused.
    let err = store
        .write_lease(None, &lease(1, "b", 0))
        .expect_err("taken");
    assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
    let err = store
        .write_lease(Some(&lease(1, "a", 7)), &lease(2, "b", 0))
        .expect_err("stale expectation");
    assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
    store
        .write_lease(Some(&lease(1, "a", 0)), &lease(1, "a", 1))
        .expect("renewal");

    // Appends: conditioned on the revision and the fence, all events or none.
    let a = lease(1, "a", 1).fence();
    store.append(&a, 0, &[event(1), event(2)]).expect("append");
    let stale = store.append(&a, 1, &[event(2)]).expect_err("stale");
    assert!(
        matches!(
            stale,
            StoreError::RevisionMismatch {
                expected: 1,
                actual: 2
            }
        ),
        "{stale}"
    );
    let read: Vec<u64> = store
        .read_after(0, 100)
        .expect("read")
        .iter()
        .map(|e| e.revision)
        .collect();
    assert_eq!(read, vec![1, 2]);
    let read: Vec<u64> = store
        .read_after(1, 100)
        .expect("read")
        .iter()
        .map(|e| e.revision)
        .collect();
    assert_eq!(read, vec![2]);
    assert_eq!(store.read_after(0, 1).expect("read").len(), 1, "limit");

    // A takeover fences the old leader off, even at the right revision.
    store
        .write_lease(Some(&lease(1, "a", 1)), &lease(2, "b", 0))
        .expect("takeover");
    let err = store.append(&a, 2, &[event(3)]).expect_err("fenced");
    assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
    assert!(err.to_string().contains("fenced off"), "{err}");
    assert_eq!(store.revision().expect("revision"), 2);
    store
        .append(&lease(2, "b", 0).fence(), 2, &[event(3)])
        .expect("the new leader appends");
    assert_eq!(store.revision().expect("revision"), 3);
    assert_eq!(store.read_lease().expect("read"), Some(lease(2, "b", 0)));
    // A released lease admits nobody.
    let released = Lease {
        epoch: 2,
        holder: String::new(),
        address: String::new(),
        renewal: 1,
    };
    store
        .write_lease(Some(&lease(2, "b", 0)), &released)
        .expect("release");
    assert_eq!(store.read_lease().expect("read"), Some(released));
    let err = store
        .append(&lease(2, "b", 0).fence(), 3, &[event(4)])
        .expect_err("released");
    assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
    assert_eq!(store.load().expect("load").revision(), 3);
}

#[test]
fn rocksdb_keeps_the_store_contract() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = RocksStore::open(dir.path()).expect("open");
    contract(&store);
    // And it all survives a reopen.
    drop(store);
    let store = RocksStore::open(dir.path()).expect("reopen");
    assert_eq!(store.revision().expect("revision"), 3);
    assert!(
        store
            .read_lease()
            .expect("read")
            .is_some_and(|l| l.is_released())
    );
}

/// A DynamoDB client for moto on 127.0.0.1 with static test credentials.
fn moto_client() -> aws_sdk_dynamodb::Client {
    let endpoint = std::env::var("LAKE_TEST_MOTO_ENDPOINT")
        .unwrap_or_else(|_| "http://127.0.0.1:5055".to_string());
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_keeps_the_store_contract() {
    let client = moto_client();
    let table = format!(
        "lake-contract-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let created = DynamoStore::create_table_with(&client, &table)
        .await
        .unwrap_or_else(|e| panic!("moto must run on 127.0.0.1 (bash .ci/services.sh): {e}"));
    assert!(created);
    assert!(
        !DynamoStore::create_table_with(&client, &table)
            .await
            .expect("again")
    );
    let store = Arc::new(DynamoStore::with_client(client, &table));
    // The store's calls block: run them off the async workers, as Metasrv does.
    let checked = store.clone();
    tokio::task::spawn_blocking(move || contract(checked.as_ref()))
        .await
        .expect("contract");
    // One transaction holds at most 98 events.
    let too_many: Vec<ChangeEvent> = (4..4 + 99).map(event).collect();
    let err =
        tokio::task::spawn_blocking(move || store.append(&lease(3, "c", 0).fence(), 3, &too_many))
            .await
            .expect("join")
            .expect_err("too many");
    assert!(matches!(err, StoreError::Refused(_)), "{err}");
}
