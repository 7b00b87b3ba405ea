//! Metasrv over gRPC on a real RocksDB store: registry calls, compare-and-swap commits,
//! idempotent replays, the watch stream, and durability across a restart.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use lake_core::commit::{Applied, Mutation};
use lake_core::{ChangeKind, ManifestRef};
use lake_metasrv::{EventStore, Metasrv, MetasrvClient, RocksStore, StoreError};

async fn start(dir: &std::path::Path) -> (MetasrvClient, Arc<RocksStore>) {
    let store = Arc::new(RocksStore::open(dir).expect("open rocksdb"));
    let (client, _) = serve(store.clone()).await;
    (client, store)
}

/// A Metasrv node on `store`, serving gRPC on a free port of 127.0.0.1: a client and the
/// address.
async fn serve(store: Arc<dyn EventStore>) -> (MetasrvClient, std::net::SocketAddr) {
    serve_node(Metasrv::start(store).expect("start")).await
}

/// `metasrv` serving gRPC on a free port of 127.0.0.1: a client and the address.
async fn serve_node(metasrv: Metasrv) -> (MetasrvClient, std::net::SocketAddr) {
    let addr = metasrv
        .spawn_server("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let client = MetasrvClient::connect(&format!("http://{addr}"))
        .await
        .expect("connect");
    (client, addr)
}

/// An encapsulated Arrow IPC schema message of one BIGINT column `id`, as Query sends.
fn schema_ipc() -> Vec<u8> {
    let schema = arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "id",
        arrow_schema::DataType::Int64,
        false,
    )]);
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema).expect("ipc");
    writer.finish().expect("finish");
    writer.into_inner().expect("bytes")
}

fn manifest(n: u64) -> ManifestRef {
    ManifestRef {
        path: format!("_versions/{n}.manifest"),
        size_bytes: 10 * n,
    }
}

#[tokio::test]
async fn registry_commits_and_replays_over_grpc() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (client, _store) = start(dir.path()).await;
    client.create_namespace("ns").await.expect("ns");
    let err = client.create_namespace("ns").await.expect_err("twice");
    assert!(err.is_already_exists(), "{err}");
    let (meta, _) = client
        .create_table("ns", "t", schema_ipc())
        .await
        .expect("table");
    let unique = meta
        .location
        .strip_prefix(&format!("tables/{}-", meta.id))
        .and_then(|rest| rest.strip_suffix(".lance"))
        .is_some_and(|ms| ms.parse::<u64>().is_ok_and(|ms| ms > 1_700_000_000_000));
    assert!(unique, "tables/<id>-<created ms>.lance: {}", meta.location);

    let v1 = client
        .commit(meta.id, 0, &manifest(1), Some(("op-a", [1; 32])))
        .await
        .expect("v1");
    assert_eq!((v1.version, v1.replayed), (1, false));
    let lost = client
        .commit(meta.id, 0, &manifest(1), None)
        .await
        .expect_err("stale base");
    assert!(lost.is_conflict(), "{lost}");
    let replay = client
        .commit(meta.id, 1, &manifest(2), Some(("op-a", [1; 32])))
        .await
        .expect("replay");
    assert_eq!((replay.version, replay.replayed), (1, true));
    let reused = client
        .commit(meta.id, 1, &manifest(2), Some(("op-a", [2; 32])))
        .await
        .expect_err("other payload");
    assert!(reused.is_operation_reused(), "{reused}");

    let description = client.describe_table("ns", "t").await.expect("describe");
    assert_eq!(description.versions.len(), 1);
    assert_eq!(description.versions[0].manifest, manifest(1));
    assert_eq!(
        description.versions[0].operation_id.as_deref(),
        Some("op-a")
    );

    let missing = client
        .describe_table("ns", "nope")
        .await
        .expect_err("missing");
    assert!(missing.is_not_found());
    assert!(missing.to_string().contains("[t]"), "{missing}");
}

/// A description is bounded whatever the history (it once carried every version, and a
/// table with tens of thousands of appends no longer fit a gRPC message).
#[tokio::test]
async fn a_table_description_stays_bounded_as_history_grows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (client, _store) = start(dir.path()).await;
    client.create_namespace("ns").await.expect("ns");
    let (meta, _) = client
        .create_table("ns", "t", schema_ipc())
        .await
        .expect("table");
    for n in 1..=50u64 {
        let op = format!("op-{n}");
        client
            .commit(meta.id, n - 1, &manifest(n), Some((op.as_str(), [1; 32])))
            .await
            .expect("commit");
    }
    let latest = client.describe_table("ns", "t").await.expect("describe");
    let versions: Vec<u64> = latest.versions.iter().map(|v| v.version).collect();
    assert_eq!(versions, [50], "only the latest version");
    let asked = client
        .describe_table_with("ns", "t", Some(3), Some("op-17"))
        .await
        .expect("describe with");
    let versions: Vec<u64> = asked.versions.iter().map(|v| v.version).collect();
    assert_eq!(
        versions,
        [3, 17, 50],
        "the version, the operation's, the latest"
    );
    assert_eq!(asked.versions[1].operation_id.as_deref(), Some("op-17"));
    assert_eq!(asked.operation, Some((17, [1; 32])), "what op-17 committed");
    let unknown = client
        .describe_table_with("ns", "t", Some(99), Some("never"))
        .await
        .expect("describe unknown");
    let versions: Vec<u64> = unknown.versions.iter().map(|v| v.version).collect();
    assert_eq!(versions, [50], "what does not exist is simply absent");
    assert_eq!(unknown.operation, None);
}

/// An operation id is recorded in every change event; an oversized one is refused with a
/// clear error instead of producing an event no watcher can receive (a 4 MiB id once
/// stopped every replica's catalog and then `lake serve` itself).
#[tokio::test]
async fn an_oversized_operation_id_is_refused_and_the_table_stays_usable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (client, store) = start(dir.path()).await;
    client.create_namespace("ns").await.expect("ns");
    let (meta, _) = client
        .create_table("ns", "t", schema_ipc())
        .await
        .expect("table");
    let huge = "x".repeat(2_200_000);
    let refused = client
        .commit(meta.id, 0, &manifest(1), Some((huge.as_str(), [1; 32])))
        .await
        .expect_err("a 2.2 MB operation id");
    let message = refused.to_string();
    assert!(
        message.contains("operation id") && message.contains("512"),
        "{message}"
    );
    let control = client
        .commit(meta.id, 0, &manifest(1), Some(("a\nb", [1; 32])))
        .await
        .expect_err("a control character");
    assert!(control.to_string().contains("operation id"), "{control}");
    let at_bound = "y".repeat(512);
    let v1 = client
        .commit(meta.id, 0, &manifest(1), Some((at_bound.as_str(), [1; 32])))
        .await
        .expect("512 bytes is allowed");
    assert_eq!(v1.version, 1);
    // The log replays and the stream delivers.
    let events: Vec<_> = client
        .watch(0, false)
        .await
        .expect("watch")
        .collect::<Vec<_>>()
        .await;
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    assert_eq!(store.load().expect("replays").revision(), v1.revision);
}

/// A watcher behind the log's start (the events it needs were removed after a checkpoint)
/// is told so with a reason the client recognizes, and `Snapshot` brings the registry at
/// the last revision (the checkpoint and the log after it), from which watching works.
#[tokio::test]
async fn a_watch_behind_the_truncated_log_is_told_so_and_a_snapshot_resyncs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (client, store) = start(dir.path()).await;
    for i in 0..10 {
        client
            .create_namespace(&format!("n{i}"))
            .await
            .expect("namespace");
    }
    let whole = store.load().expect("load");
    assert_eq!(whole.revision(), 10);
    let fence = store
        .read_lease()
        .expect("lease")
        .expect("the node holds it")
        .fence();
    store.write_checkpoint(&whole).expect("checkpoint");
    store.truncate(&fence, 8).expect("truncate");

    let mut items = Box::pin(client.watch_items(3, true).await.expect("watch"));
    let err = match items.next().await {
        Some(Err(err)) => err,
        other => panic!("expected the stream to end with an error, got {other:?}"),
    };
    assert!(err.is_log_truncated(), "{err}");
    assert!(err.to_string().contains("revision 9"), "{err}");

    let snapshot = client.snapshot().await.expect("snapshot");
    assert_eq!(snapshot, whole);
    client.create_namespace("n10").await.expect("namespace");
    let mut events = Box::pin(
        client
            .watch(snapshot.revision(), false)
            .await
            .expect("watch"),
    );
    let next = events.next().await.expect("an event").expect("event");
    assert_eq!(next.revision, 11);
    // A watch from the log's start (revisions 1 to 8 removed, 9 on kept) replays.
    let kept: Vec<u64> = client
        .watch(8, false)
        .await
        .expect("watch")
        .map(|e| e.expect("event").revision)
        .collect()
        .await;
    assert_eq!(kept, vec![9, 10, 11]);
}

/// The table names of `namespace`, page by page at `limit`, and the page sizes.
async fn list_pages(addr: std::net::SocketAddr, namespace: &str, limit: u32) -> Vec<Vec<String>> {
    let mut rpc =
        lake_metasrv::proto::metasrv_client::MetasrvClient::connect(format!("http://{addr}"))
            .await
            .expect("connect");
    let mut pages = Vec::new();
    let mut start_after = String::new();
    loop {
        let page = rpc
            .list_tables(lake_metasrv::proto::ListTablesRequest {
                namespace: namespace.into(),
                start_after: start_after.clone(),
                limit,
            })
            .await
            .expect("list")
            .into_inner();
        pages.push(page.tables.iter().map(|t| t.name.clone()).collect());
        if page.next_start_after.is_empty() {
            return pages;
        }
        start_after = page.next_start_after;
        assert!(pages.len() < 100, "the pages end");
    }
}

/// ListTables answers a page at a time, bounded by count and by bytes (wide schemas), so
/// no answer grows with the namespace.
#[tokio::test]
async fn list_tables_answers_in_bounded_pages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (client, addr) = serve(Arc::new(RocksStore::open(dir.path()).expect("open"))).await;
    client.create_namespace("ns").await.expect("ns");
    for i in 0..5 {
        client
            .create_table("ns", &format!("t{i}"), schema_ipc())
            .await
            .expect("table");
    }
    let names = |pages: &[Vec<String>]| pages.concat();
    let pages = list_pages(addr, "ns", 2).await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
    assert_eq!(names(&pages), ["t0", "t1", "t2", "t3", "t4"]);
    assert_eq!(list_pages(addr, "ns", 0).await.len(), 1, "100 by default");

    // Four tables whose schemas are 700 KB each: at most 2 MiB of them per page.
    client.create_namespace("wide").await.expect("ns");
    let metadata = std::collections::HashMap::from([("doc".to_string(), "x".repeat(700_000))]);
    let schema = arrow_schema::Schema::new_with_metadata(
        vec![arrow_schema::Field::new(
            "id",
            arrow_schema::DataType::Int64,
            false,
        )],
        metadata,
    );
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema).expect("ipc");
    writer.finish().expect("finish");
    let wide = writer.into_inner().expect("bytes");
    for i in 0..4 {
        client
            .create_table("wide", &format!("w{i}"), wide.clone())
            .await
            .expect("wide table");
    }
    let pages = list_pages(addr, "wide", 1_000).await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2]);
    assert_eq!(names(&pages), ["w0", "w1", "w2", "w3"]);
}

#[tokio::test]
async fn watch_replays_from_a_revision_then_follows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (client, _store) = start(dir.path()).await;
    let r1 = client.create_namespace("a").await.expect("a");
    let r2 = client.create_namespace("b").await.expect("b");
    assert_eq!(r2, r1 + 1);

    let past: Vec<_> = client
        .watch(r1, false)
        .await
        .expect("watch")
        .collect::<Vec<_>>()
        .await;
    assert_eq!(past.len(), 1);
    let event = past[0].as_ref().expect("event");
    assert_eq!(event.revision, r2);
    assert_eq!(
        event.kind,
        ChangeKind::NamespaceCreated { name: "b".into() }
    );

    let mut live = Box::pin(client.watch(r2, true).await.expect("follow"));
    let r3 = client.create_namespace("c").await.expect("c");
    let next = tokio::time::timeout(Duration::from_secs(10), live.next())
        .await
        .expect("an event within 10 s")
        .expect("stream open")
        .expect("event");
    assert_eq!(next.revision, r3);
}

#[tokio::test]
async fn acknowledged_changes_survive_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let table_id = {
        let store = Arc::new(RocksStore::open(dir.path()).expect("open"));
        let metasrv = Metasrv::start(store).expect("start");
        metasrv
            .mutate(Mutation::CreateNamespace { name: "ns".into() })
            .await
            .expect("ns");
        let reply = metasrv
            .mutate(Mutation::CreateTable {
                namespace: "ns".into(),
                name: "t".into(),
                schema_ipc: vec![],
            })
            .await
            .expect("t");
        let Applied::TableCreated(meta) = reply.applied else {
            panic!("not created: {reply:?}")
        };
        for base in 0..3 {
            metasrv
                .mutate(Mutation::Commit {
                    table_id: meta.id,
                    base_version: base,
                    manifest: manifest(base + 1),
                    operation: None,
                })
                .await
                .expect("commit");
        }
        meta.id
    };
    // The driver task releases the RocksDB lock once it sees its last handle dropped.
    let mut attempts = 0;
    let store = loop {
        match RocksStore::open(dir.path()) {
            Ok(store) => break store,
            Err(StoreError::Io(_)) if attempts < 100 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    let registry = store.load().expect("replays");
    let table = registry.table_by_id(table_id).expect("table");
    let versions: Vec<u64> = table.versions.iter().map(|v| v.version).collect();
    assert_eq!(versions, vec![1, 2, 3]);
    assert_eq!(registry.revision(), store.revision().expect("revision"));
}

fn namespace_event(revision: u64) -> lake_core::ChangeEvent {
    lake_core::ChangeEvent {
        revision,
        kind: ChangeKind::NamespaceCreated {
            name: format!("n{revision}"),
        },
    }
}

fn node(name: &str) -> lake_core::ElectionConfig {
    lake_core::ElectionConfig {
        node: name.into(),
        address: format!("{name}.test:7000"),
        lease_ms: 600,
        renew_interval_ms: 100,
        clock_bound_ms: 50,
        exclusive: false,
    }
}

/// Retries `mutation` on `node` while it answers "not the leader", up to `within`; returns
/// the reply and how long it took.
async fn once_leading(node: &Metasrv, mutation: Mutation, within: Duration) -> (u64, Duration) {
    let started = std::time::Instant::now();
    loop {
        match node.mutate(mutation.clone()).await {
            Ok(reply) => return (reply.revision, started.elapsed()),
            Err(e) if started.elapsed() < within => {
                assert!(e.to_string().contains("not the leader"), "{e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("never took over: {e}"),
        }
    }
}

fn namespace(name: &str) -> Mutation {
    Mutation::CreateNamespace { name: name.into() }
}

/// Nodes on one store: one leads and the other refuses writes naming it; a graceful
/// shutdown hands over at once and the new leader continues the same history; after a crash
/// (no release) nobody takes over before the lease has run out, and the crashed leader's
/// fence no longer admits writes.
#[tokio::test]
async fn nodes_elect_one_leader_and_hand_over_on_shutdown_or_crash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn EventStore> = Arc::new(RocksStore::open(dir.path()).expect("open"));
    let a = Metasrv::start_node(store.clone(), node("a")).expect("a");
    a.mutate(namespace("ns"))
        .await
        .expect("a leads the empty store");
    // b runs on a runtime of its own, so that dropping the runtime is a crash.
    let b_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let b = {
        let _entered = b_runtime.enter();
        Metasrv::start_node(store.clone(), node("b")).expect("b")
    };
    let refused = b.mutate(namespace("other")).await.expect_err("b follows");
    let message = refused.to_string();
    assert!(
        message.contains("not the leader") && message.contains("a.test:7000"),
        "{message}"
    );
    assert_eq!(store.revision().expect("revision"), 1);

    // Graceful: a releases its lease and b serves well within one lease period.
    a.shutdown().await;
    let (revision, took) = once_leading(&b, namespace("other"), Duration::from_secs(5)).await;
    assert_eq!(revision, 2, "b continued the same history");
    assert!(took < Duration::from_millis(600), "handover took {took:?}");
    let lease = store.read_lease().expect("lease").expect("present");
    assert_eq!((lease.epoch, lease.holder.as_str()), (2, "b"));

    // Crash: b's tasks vanish without releasing. c must wait the lease out.
    b_runtime.shutdown_background();
    let c = Metasrv::start_node(store.clone(), node("c")).expect("c");
    let (revision, took) = once_leading(&c, namespace("third"), Duration::from_secs(10)).await;
    assert_eq!(revision, 3);
    assert!(
        took >= Duration::from_millis(600),
        "took over a live lease after {took:?}"
    );
    let lease = store.read_lease().expect("lease").expect("present");
    assert_eq!((lease.epoch, lease.holder.as_str()), (3, "c"));
    let err = store
        .append(
            &lake_core::Fence {
                epoch: 2,
                holder: "b".into(),
            },
            3,
            &[namespace_event(4)],
        )
        .expect_err("fenced");
    assert!(matches!(err, StoreError::ConditionFailed(_)), "{err}");
    drop(b);
}

/// The standard gRPC health service: the process is live at once; readiness turns SERVING
/// once the node leads (or knows the leader), and NOT_SERVING for a node that knows none.
#[tokio::test]
async fn grpc_health_reports_liveness_and_readiness() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;

    async fn status(addr: std::net::SocketAddr, service: &str) -> ServingStatus {
        let channel = tonic::transport::Channel::from_shared(format!("http://{addr}"))
            .expect("uri")
            .connect()
            .await
            .expect("connect");
        let mut client = HealthClient::new(channel);
        let response = client
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect("check");
        response.into_inner().status()
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn EventStore> = Arc::new(RocksStore::open(dir.path()).expect("open"));
    // A lease held by a node that is gone and left no address: until it expires, the new
    // node can neither serve nor forward.
    store
        .write_lease(
            None,
            &lake_core::Lease {
                epoch: 1,
                holder: "ghost".into(),
                address: String::new(),
                renewal: 0,
            },
        )
        .expect("lease");
    let metasrv = Metasrv::start_node(store, node("a")).expect("start");
    let addr = metasrv
        .clone()
        .spawn_server("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    assert_eq!(status(addr, "").await, ServingStatus::Serving, "live");
    let readiness = lake_metasrv::server::READINESS_SERVICE;
    assert_eq!(
        status(addr, readiness).await,
        ServingStatus::NotServing,
        "not ready yet"
    );
    let started = std::time::Instant::now();
    loop {
        let ready = status(addr, readiness).await;
        if ready == ServingStatus::Serving {
            break;
        }
        assert_eq!(ready, ServingStatus::NotServing);
        assert!(started.elapsed() < Duration::from_secs(5), "never ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(metasrv.status().serving.is_some());
}

/// Metasrv stores only what every reader can use: a table schema that is not an Arrow
/// schema, or a manifest path outside the table's `_versions/`, is refused with
/// INVALID_ARGUMENT and leaves the registry as it was (the table stays readable and
/// appendable).
#[tokio::test]
async fn junk_schemas_and_manifest_paths_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (client, _store) = start(dir.path()).await;
    client.create_namespace("ns").await.expect("ns");
    for junk in [vec![0u8; 16], vec![], vec![0xff; 64]] {
        let err = client
            .create_table("ns", "junk", junk.clone())
            .await
            .expect_err("junk schema");
        assert!(
            matches!(&err, lake_metasrv::MetasrvError::Rpc { code, .. } if *code == tonic::Code::InvalidArgument),
            "{junk:?}: {err}"
        );
    }
    let err = client
        .describe_table("ns", "junk")
        .await
        .expect_err("no table");
    assert!(err.is_not_found(), "{err}");

    let (meta, _) = client
        .create_table("ns", "t", schema_ipc())
        .await
        .expect("table");
    for path in [
        "../../etc/passwd",
        "/var/lake/tables/1.lance/_versions/1.manifest",
        "_versions/1.manifest/../../x",
        "_versions/.manifest",
        "data/1.manifest",
        "_versions/1.manifestX",
    ] {
        let bad = ManifestRef {
            path: path.into(),
            size_bytes: 10,
        };
        let err = client.commit(meta.id, 0, &bad, None).await.expect_err(path);
        assert!(err.to_string().contains("manifest path"), "{path}: {err}");
    }
    let err = client
        .commit(
            meta.id,
            0,
            &ManifestRef {
                path: "_versions/1.manifest".into(),
                size_bytes: 0,
            },
            None,
        )
        .await
        .expect_err("empty manifest");
    assert!(err.to_string().contains("manifest size"), "{err}");
    // Nothing was recorded: the next real commit is version 1.
    let v1 = client
        .commit(meta.id, 0, &manifest(1), None)
        .await
        .expect("v1");
    assert_eq!(v1.version, 1);
    let staged = ManifestRef {
        path: "_versions/2.manifest-6f1c2a9e-0b7d-4c55-9a3e-1f2b3c4d5e6f".into(),
        size_bytes: 5,
    };
    assert_eq!(
        client
            .commit(meta.id, 1, &staged, None)
            .await
            .expect("v2")
            .version,
        2
    );
}

#[tokio::test]
async fn grants_go_through_the_log_to_watchers_and_replay_from_the_store() {
    use lake_core::{GrantScope, Privilege};
    let dir = tempfile::tempdir().expect("tempdir");
    let store = {
        let (client, store) = start(dir.path()).await;
        client.create_namespace("sales").await.expect("ns");
        let sales = GrantScope::Namespace("sales".into());
        let (now, granted_at) = client
            .grant("ada", &sales, Privilege::Write)
            .await
            .expect("grant");
        assert_eq!(now, Some(Privilege::Write));
        let (now, _) = client
            .revoke("ada", &sales, Some(Privilege::Write))
            .await
            .expect("revoke");
        assert_eq!(now, Some(Privilege::Read), "revoking write leaves read");
        client
            .grant("bob", &GrantScope::Iceberg, Privilege::Read)
            .await
            .expect("grant");
        let missing = client
            .grant(
                "ada",
                &GrantScope::Namespace("nope".into()),
                Privilege::Read,
            )
            .await
            .expect_err("no such namespace");
        assert!(missing.is_not_found(), "{missing}");
        let bad = client
            .grant("a b", &sales, Privilege::Read)
            .await
            .expect_err("bad name");
        assert!(bad.to_string().contains("user"), "{bad}");
        // Watchers see the grant as an event of the ordered stream.
        let events: Vec<_> = client
            .watch(granted_at - 1, false)
            .await
            .expect("watch")
            .map(|e| e.expect("event"))
            .collect()
            .await;
        assert!(matches!(
            &events[0].kind,
            ChangeKind::GrantChanged { principal, scope, privilege: Some(Privilege::Write) }
                if principal == "ada" && *scope == sales
        ));
        store
    };
    // The events decode from RocksDB: a restarted node derives the same grants.
    let registry = store.load().expect("replays");
    let sales = GrantScope::Namespace("sales".into());
    assert_eq!(registry.privilege("ada", &sales), Some(Privilege::Read));
    assert_eq!(
        registry.privilege("bob", &GrantScope::Iceberg),
        Some(Privilege::Read)
    );
}

/// A RocksDB store whose first `fail` log reads fail with an I/O error, and whose
/// checkpoint reads take `slow_ms` each; it counts its log reads in `reads`.
struct FlakyReads {
    inner: RocksStore,
    fail: std::sync::atomic::AtomicU32,
    slow_ms: std::sync::atomic::AtomicU64,
    reads: std::sync::atomic::AtomicU64,
}

impl FlakyReads {
    fn new(dir: &std::path::Path, fail: u32) -> Self {
        Self {
            inner: RocksStore::open(dir).expect("open"),
            fail: std::sync::atomic::AtomicU32::new(fail),
            slow_ms: std::sync::atomic::AtomicU64::new(0),
            reads: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl EventStore for FlakyReads {
    fn append(
        &self,
        fence: &lake_core::Fence,
        base_revision: u64,
        events: &[lake_core::ChangeEvent],
    ) -> Result<(), StoreError> {
        self.inner.append(fence, base_revision, events)
    }
    fn read_lease(&self) -> Result<Option<lake_core::Lease>, StoreError> {
        self.inner.read_lease()
    }
    fn write_lease(
        &self,
        expected: Option<&lake_core::Lease>,
        lease: &lake_core::Lease,
    ) -> Result<(), StoreError> {
        self.inner.write_lease(expected, lease)
    }
    fn read_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<lake_core::ChangeEvent>, StoreError> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let left = self.fail.load(std::sync::atomic::Ordering::SeqCst);
        if left > 0 {
            self.fail
                .store(left - 1, std::sync::atomic::Ordering::SeqCst);
            return Err(StoreError::Io("simulated read failure".into()));
        }
        self.inner.read_after(after, limit)
    }
    fn revision(&self) -> Result<u64, StoreError> {
        self.inner.revision()
    }
    fn write_checkpoint(&self, registry: &lake_core::Registry) -> Result<(), StoreError> {
        self.inner.write_checkpoint(registry)
    }
    fn read_checkpoint(&self) -> Result<Option<lake_core::Registry>, StoreError> {
        let slow = self.slow_ms.load(std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(slow));
        self.inner.read_checkpoint()
    }
    fn truncate(&self, fence: &lake_core::Fence, through: u64) -> Result<(), StoreError> {
        self.inner.truncate(fence, through)
    }
    fn truncated_through(&self) -> Result<u64, StoreError> {
        self.inner.truncated_through()
    }
}

/// A leader whose first reads of the log fail (the load after its election) reads again
/// and serves, instead of holding the lease without serving until it is lost. (Found by
/// comparing the shell's node driver with the simulation's: the shell dropped its serving
/// term while the election still led, so nothing ever elected it again.)
#[tokio::test]
async fn a_leader_whose_log_read_fails_reads_again_and_serves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(FlakyReads::new(dir.path(), 3));
    let metasrv = Metasrv::start(store.clone()).expect("start");
    let reply = tokio::time::timeout(Duration::from_secs(8), metasrv.mutate(namespace("ns")))
        .await
        .expect("served within the election wait")
        .expect("the namespace is created");
    assert_eq!(reply.revision, 1);
    assert_eq!(store.fail.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// A snapshot whose load takes longer than a caller waits without news sends keepalives
/// while it loads (so a replica does not take it for a lost call and ask again), then the
/// registry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_snapshot_sends_keepalives_while_the_node_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(FlakyReads::new(dir.path(), 0));
    let (client, _) = serve(store.clone()).await;
    client.create_namespace("ns").await.expect("ns");
    store
        .slow_ms
        .store(4_500, std::sync::atomic::Ordering::SeqCst);
    let mut messages = 0;
    let started = std::time::Instant::now();
    let snapshot = client
        .snapshot_with(|| messages += 1)
        .await
        .expect("snapshot");
    assert!(started.elapsed() >= Duration::from_millis(4_500));
    assert!(snapshot.has_namespace("ns"));
    // Keepalives at 2 s and 4 s, the header, one chunk.
    assert!(messages >= 4, "{messages} messages");
}

/// One reader of the log per node, however many watch streams it serves (the node's tail):
/// a follower node with 50 following streams reads the log about ten times a second while
/// nothing happens, not ten times a second per stream, and each commit the leader makes
/// still reaches every stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_reads_the_log_once_per_poll_for_all_the_streams_it_serves() {
    const STREAMS: usize = 50;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(FlakyReads::new(dir.path(), 0));
    let a = Metasrv::start_node(store.clone(), node("a")).expect("a");
    a.mutate(namespace("ns")).await.expect("a leads");
    let b = Metasrv::start_node(store.clone(), node("b")).expect("b");
    let (client, _) = serve_node(b.clone()).await;
    let mut streams = Vec::new();
    for _ in 0..STREAMS {
        streams.push(Box::pin(client.watch(0, true).await.expect("watch")));
    }
    let next = |revision: u64| {
        move |event: Option<Result<lake_core::ChangeEvent, _>>| {
            let event = event.expect("open").expect("an event");
            assert_eq!(event.revision, revision);
        }
    };
    for stream in &mut streams {
        let event = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
        next(1)(event.expect("caught up"));
    }
    // Quiet for two seconds: the follower's tail polls (every 100 ms), the streams do not
    // (one read each every 100 ms would be 1,000 reads).
    let before = store.reads.load(std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let quiet = store.reads.load(std::sync::atomic::Ordering::SeqCst) - before;
    eprintln!("{STREAMS} streams on a follower, quiet for 2 s: {quiet} log reads");
    assert!(
        quiet <= 40,
        "{quiet} log reads in 2 s for {STREAMS} streams"
    );
    // A commit through the leader reaches every stream on the follower.
    let reply = a.mutate(namespace("second")).await.expect("commit");
    assert_eq!(reply.revision, 2);
    for stream in &mut streams {
        // Sooner than a stream's own read of the log (5 s after it caught up).
        let event = tokio::time::timeout(Duration::from_secs(2), stream.next()).await;
        next(2)(event.expect("the commit arrives within the tail's poll"));
    }
    drop(b);
}
