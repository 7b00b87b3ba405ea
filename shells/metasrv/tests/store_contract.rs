//! The contract every [`EventStore`] backend keeps (`lake_core::store::contract`, which
//! the simulations' store passes too), checked on real RocksDB and on
//! DynamoDB (moto's server on 127.0.0.1, started by `.ci/services.sh`; its endpoint is
//! `LAKE_TEST_MOTO_ENDPOINT`, default `http://127.0.0.1:5055`).

use std::sync::Arc;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use lake_core::ChangeEvent;
use lake_core::store::contract::{check as contract, event, lease};
use lake_metasrv::{DynamoStore, EventStore, RocksStore, StoreError};

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
