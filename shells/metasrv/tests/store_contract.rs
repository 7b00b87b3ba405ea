//! The contract every [`EventStore`] backend keeps (`lake_core::store::contract`, which
//! the simulations' store passes too), checked on real RocksDB and on
//! DynamoDB (moto's server on 127.0.0.1, started by `.ci/services.sh`; its endpoint is
//! `LAKE_TEST_MOTO_ENDPOINT`, default `http://127.0.0.1:5055`).

use std::sync::Arc;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use lake_core::commit::Mutation;
use lake_core::store::contract::{check as contract, event, lease};
use lake_core::{ChangeEvent, ChangeKind, Registry, TableMeta};
use lake_metasrv::{DynamoStore, EventStore, RocksStore, StoreError};

#[test]
fn rocksdb_keeps_the_store_contract() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = RocksStore::open(dir.path()).expect("open");
    contract(&store);
    // And it all survives a reopen.
    drop(store);
    let store = RocksStore::open(dir.path()).expect("reopen");
    assert_eq!(store.revision().expect("revision"), 13);
    assert_eq!(store.read_lease().expect("read"), Some(lease(3, "c", 0)));
    assert_eq!(store.truncated_through().expect("through"), 11);
    assert_eq!(
        store.read_checkpoint().expect("read").map(|r| r.revision()),
        Some(12)
    );
}

/// `n` events under leader `a` (revisions 1 to `n`), read back.
fn appended(store: &dyn EventStore, n: u64) -> Vec<ChangeEvent> {
    store.write_lease(None, &lease(1, "a", 0)).expect("lease");
    let events: Vec<ChangeEvent> = (1..=n).map(event).collect();
    store
        .append(&lease(1, "a", 0).fence(), 0, &events)
        .expect("append");
    store.read_after(0, 1_000).expect("read")
}

fn registry_at(log: &[ChangeEvent], revision: usize) -> Registry {
    Registry::from_log(&log[..revision]).expect("replays")
}

/// A checkpoint and a truncation on RocksDB are each one synced batch: a crash (here a
/// close and reopen) after either leaves the registry the whole history replays to.
#[test]
fn rocksdb_checkpoint_and_truncation_survive_a_restart_after_each_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = RocksStore::open(dir.path()).expect("open");
    let log = appended(&store, 20);
    let whole = registry_at(&log, 20);
    store
        .write_checkpoint(&registry_at(&log, 15))
        .expect("checkpoint");
    drop(store);
    let store = RocksStore::open(dir.path()).expect("reopen after the checkpoint");
    assert_eq!(store.load().expect("load"), whole);
    assert_eq!(store.truncated_through().expect("through"), 0);
    store
        .truncate(&lease(1, "a", 0).fence(), 12)
        .expect("truncate");
    drop(store);
    let store = RocksStore::open(dir.path()).expect("reopen after the truncation");
    assert_eq!(store.load().expect("load"), whole);
    assert_eq!(store.truncated_through().expect("through"), 12);
    let err = store.read_after(5, 100).expect_err("truncated");
    assert!(
        matches!(err, StoreError::Truncated { through: 12, .. }),
        "{err}"
    );
    // A newer checkpoint replaces the older one's chunks.
    store
        .write_checkpoint(&registry_at(&log, 19))
        .expect("newer checkpoint");
    drop(store);
    let store = RocksStore::open(dir.path()).expect("reopen");
    assert_eq!(
        store.read_checkpoint().expect("read"),
        Some(registry_at(&log, 19))
    );
    assert_eq!(store.load().expect("load"), whole);
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
    let (read, expected) = tokio::task::spawn_blocking(move || {
        let base = store.revision().expect("revision");
        let written = vec![
            ChangeEvent {
                revision: base + 1,
                ..wide
            },
            event(base + 2),
            event(base + 3),
        ];
        let current = store.read_lease().expect("lease");
        let mine = lease(current.as_ref().map_or(1, |l| l.epoch + 1), "d", 0);
        store
            .write_lease(current.as_ref(), &mine)
            .expect("take the lease");
        store
            .append(&mine.fence(), base, &written)
            .expect("a split event appends");
        (store.read_after(base, 10).expect("read back"), written)
    })
    .await
    .expect("join");
    assert_eq!(read, expected);
}

/// A fresh DynamoDB table on moto.
async fn moto_table(prefix: &str) -> (aws_sdk_dynamodb::Client, String) {
    let client = moto_client();
    let table = format!(
        "{prefix}-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    DynamoStore::create_table_with(&client, &table)
        .await
        .unwrap_or_else(|e| panic!("moto must run on 127.0.0.1 (bash .ci/services.sh): {e}"));
    (client, table)
}

fn item_key(pk: &str, sk: u64) -> std::collections::HashMap<String, AttributeValue> {
    std::collections::HashMap::from([
        ("pk".to_string(), AttributeValue::S(pk.into())),
        ("sk".to_string(), AttributeValue::N(sk.to_string())),
    ])
}

/// Sort keys of partition `pk`, in order.
async fn sort_keys(client: &aws_sdk_dynamodb::Client, table: &str, pk: &str) -> Vec<u64> {
    let page = client
        .query()
        .table_name(table)
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(pk.into()))
        .consistent_read(true)
        .send()
        .await
        .expect("query");
    page.items()
        .iter()
        .map(|item| {
            item["sk"]
                .as_n()
                .expect("number")
                .parse()
                .expect("sort key")
        })
        .collect()
}

/// A checkpoint on DynamoDB takes several calls (chunks, header, sweep; marker, deletes).
/// Each state a crash between two of them leaves, made by hand here, still loads the
/// registry the whole history replays to, and the next checkpoint or truncation cleans up
/// what the crash left (the layout is the one `lake_metasrv::dynamo` documents).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_checkpoints_survive_a_crash_at_each_step() {
    let (client, table) = moto_table("lake-checkpoint").await;
    let store = Arc::new(DynamoStore::with_client(client.clone(), &table));
    let blocking = |f: Box<dyn FnOnce(&DynamoStore) + Send>| {
        let store = store.clone();
        tokio::task::spawn_blocking(move || f(store.as_ref()))
    };
    let (log_tx, log_rx) = std::sync::mpsc::channel();
    blocking(Box::new(move |s| {
        log_tx.send(appended(s, 20)).expect("send");
    }))
    .await
    .expect("join");
    let log = log_rx.recv().expect("log");
    let whole = registry_at(&log, 20);

    // 1. Chunks of a checkpoint at 15 written, the crash before its header (a checkpoint
    //    with other bytes: another binary's encoding).
    let mut orphan = item_key("ckpt", 15 * 1_000_000);
    orphan.insert(
        "chunk".into(),
        AttributeValue::B(Blob::new(b"torn".to_vec())),
    );
    orphan.insert("sha".into(), AttributeValue::B(Blob::new(vec![9; 32])));
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(orphan))
        .send()
        .await
        .expect("put");
    let (l, w) = (log.clone(), whole.clone());
    blocking(Box::new(move |s| {
        assert_eq!(
            s.read_checkpoint().expect("read"),
            None,
            "no header, no checkpoint"
        );
        assert_eq!(s.load().expect("load"), w);
        s.write_checkpoint(&registry_at(&l, 10))
            .expect("checkpoint at 10");
        assert_eq!(
            s.read_checkpoint().expect("read"),
            Some(registry_at(&l, 10))
        );
    }))
    .await
    .expect("join");

    // 2. A newer header written, the crash before the sweep: a stale chunk of an older
    //    checkpoint stays until the next checkpoint's sweep removes every older chunk. The
    //    torn chunk at 15 never takes other bytes: a checkpoint at 15 is refused, the one
    //    at 16 is written and its sweep removes both.
    let mut stale = item_key("ckpt", 3 * 1_000_000);
    stale.insert(
        "chunk".into(),
        AttributeValue::B(Blob::new(b"old".to_vec())),
    );
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(stale))
        .send()
        .await
        .expect("put");
    let l = log.clone();
    blocking(Box::new(move |s| {
        let err = s
            .write_checkpoint(&registry_at(&l, 15))
            .expect_err("another checkpoint holds the chunk slots of 15");
        assert!(matches!(err, StoreError::Refused(_)), "{err}");
        assert_eq!(
            s.read_checkpoint().expect("read"),
            Some(registry_at(&l, 10))
        );
        s.write_checkpoint(&registry_at(&l, 16))
            .expect("checkpoint at 16");
        assert_eq!(
            s.read_checkpoint().expect("read"),
            Some(registry_at(&l, 16))
        );
    }))
    .await
    .expect("join");
    let chunks = sort_keys(&client, &table, "ckpt").await;
    assert!(
        !chunks.is_empty() && chunks.iter().all(|&sk| sk >= 16 * 1_000_000),
        "only the newest checkpoint's chunks stay: {chunks:?}"
    );

    // 3. The truncation marker raised, the crash before any event was deleted: the events
    //    at or below it are still valid events.
    client
        .update_item()
        .table_name(&table)
        .set_key(Some(item_key("head", 0)))
        .update_expression("SET through = :t")
        .expression_attribute_values(":t", AttributeValue::N("12".into()))
        .send()
        .await
        .expect("update");
    let w = whole.clone();
    blocking(Box::new(move |s| {
        assert_eq!(s.truncated_through().expect("through"), 12);
        assert_eq!(s.load().expect("load"), w);
    }))
    .await
    .expect("join");

    // 4. Some of them deleted: a reader behind the marker is told the log is truncated,
    //    never handed a log with a hole; the next truncation deletes the rest.
    client
        .delete_item()
        .table_name(&table)
        .set_key(Some(item_key("log", 7)))
        .send()
        .await
        .expect("delete");
    let w = whole.clone();
    blocking(Box::new(move |s| {
        let err = s.read_after(5, 100).expect_err("a hole below the marker");
        assert!(
            matches!(err, StoreError::Truncated { through: 12, .. }),
            "{err}"
        );
        assert_eq!(s.load().expect("load"), w);
        s.truncate(&lease(1, "a", 0).fence(), 14).expect("truncate");
        assert_eq!(s.truncated_through().expect("through"), 14);
        assert_eq!(s.load().expect("load"), w);
    }))
    .await
    .expect("join");
    let events = sort_keys(&client, &table, "log").await;
    assert_eq!(
        events,
        (15..=20).collect::<Vec<u64>>(),
        "events through 14 are gone"
    );
}

/// A Metasrv node on DynamoDB under concurrent requests, some carrying schemas larger than
/// a DynamoDB item: the group commits fit DynamoDB's transaction limits, so every request
/// is served (a 900 KB schema once failed its whole group, and every retry of it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metasrv_on_dynamodb_serves_wide_schemas_grouped_with_other_writes() {
    let (client, table) = moto_table("lake-groups").await;
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
