//! The contract every [`EventStore`] backend keeps (`lake_core::store::contract`, which
//! the simulations' store passes too), checked on real RocksDB and on
//! DynamoDB (moto's server on 127.0.0.1, started by `.ci/services.sh`; its endpoint is
//! `LAKE_TEST_MOTO_ENDPOINT`, default `http://127.0.0.1:5055`).

use std::sync::Arc;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use lake_core::commit::Mutation;
use lake_core::store::contract::{check as contract, event, lease};
use lake_core::{ChangeEvent, ChangeKind, TableMeta};
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
    // One transaction holds at most 98 items.
    let too_many: Vec<ChangeEvent> = (4..4 + 99).map(event).collect();
    let limited = store.clone();
    let err = tokio::task::spawn_blocking(move || {
        limited.append(&lease(3, "c", 0).fence(), 3, &too_many)
    })
    .await
    .expect("join")
    .expect_err("too many");
    assert!(matches!(err, StoreError::Refused(_)), "{err}");
    // An event larger than a DynamoDB item (a wide table's 900 KB schema) is split over
    // several items in the same transaction as its neighbours, and reads back whole.
    let wide = ChangeEvent {
        revision: 4,
        kind: ChangeKind::TableCreated {
            meta: TableMeta {
                id: 77,
                namespace: "ns".into(),
                name: "wide".into(),
                schema_ipc: (0..900_000u32).map(|i| (i % 251) as u8).collect(),
                location: "tables/77-1.lance".into(),
                created_revision: 4,
            },
        },
    };
    let written = vec![wide, event(5), event(6)];
    let expected = written.clone();
    let read = tokio::task::spawn_blocking(move || {
        let current = store.read_lease().expect("lease");
        let mine = lease(current.as_ref().map_or(1, |l| l.epoch + 1), "d", 0);
        store
            .write_lease(current.as_ref(), &mine)
            .expect("take the lease");
        store
            .append(&mine.fence(), 3, &written)
            .expect("a split event appends");
        store.read_after(3, 10).expect("read back")
    })
    .await
    .expect("join");
    assert_eq!(read, expected);
}

/// A Metasrv node on DynamoDB under concurrent requests, some carrying schemas larger than
/// a DynamoDB item: the group commits fit DynamoDB's transaction limits, so every request
/// is served (a 900 KB schema once failed its whole group, and every retry of it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metasrv_on_dynamodb_serves_wide_schemas_grouped_with_other_writes() {
    let client = moto_client();
    let table = format!(
        "lake-groups-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    DynamoStore::create_table_with(&client, &table)
        .await
        .unwrap_or_else(|e| panic!("moto must run on 127.0.0.1 (bash .ci/services.sh): {e}"));
    let store = Arc::new(DynamoStore::with_client(client, &table));
    let metasrv = lake_metasrv::Metasrv::start(store.clone()).expect("start");
    metasrv
        .mutate(Mutation::CreateNamespace { name: "ns".into() })
        .await
        .expect("namespace");
    let mut requests = Vec::new();
    for i in 0..8 {
        let m = metasrv.clone();
        requests.push(tokio::spawn(async move {
            m.mutate(Mutation::CreateTable {
                namespace: "ns".into(),
                name: format!("wide{i}"),
                schema_ipc: vec![u8::try_from(i).unwrap_or(0); 600_000],
            })
            .await
        }));
        for j in 0..10 {
            let m = metasrv.clone();
            requests.push(tokio::spawn(async move {
                m.mutate(Mutation::CreateNamespace {
                    name: format!("n{i}_{j}"),
                })
                .await
            }));
        }
    }
    for request in requests {
        request
            .await
            .expect("join")
            .expect("every request is served");
    }
    let registry = tokio::task::spawn_blocking(move || store.load())
        .await
        .expect("join")
        .expect("the log replays");
    for i in 0..8 {
        let wide = registry.table("ns", &format!("wide{i}")).expect("created");
        assert_eq!(wide.meta.schema_ipc.len(), 600_000);
    }
    metasrv.shutdown().await;
}
