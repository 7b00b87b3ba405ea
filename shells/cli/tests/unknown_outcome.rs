//! A commit whose answer is lost after it applied (a Metasrv failover, a broken connection)
//! must neither fail the append nor break the table: the Query replica sends the commit
//! again under the same operation id, recognises its own manifest in the replay, and keeps
//! the manifest Metasrv points at. (Found by attacking a live cluster: Lance deleted the
//! staging manifest that Metasrv had committed, and the table could no longer be read.)

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::Stream;
use lake_metasrv::proto;
use lake_metasrv::proto::metasrv_server::{Metasrv as MetasrvRpc, MetasrvServer};
use lake_metasrv::{Metasrv, MetasrvClient, RocksStore};
use lake_query::TicketKey;
use lake_sdk::LakeClient;
use tonic::{Request, Response, Status};

/// Metasrv, except that the answers to the first `lose` commits are lost after the commit
/// applied (the caller sees a timeout), and that change streams deliver nothing while
/// `stall_watch` is set.
struct LosesCommitAnswers {
    inner: Metasrv,
    lose: AtomicUsize,
    stall_watch: Arc<std::sync::atomic::AtomicBool>,
}

type R<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl MetasrvRpc for LosesCommitAnswers {
    async fn create_namespace(
        &self,
        r: Request<proto::NamespaceRequest>,
    ) -> R<proto::MutationResponse> {
        self.inner.create_namespace(r).await
    }
    async fn drop_namespace(
        &self,
        r: Request<proto::NamespaceRequest>,
    ) -> R<proto::MutationResponse> {
        self.inner.drop_namespace(r).await
    }
    async fn list_namespaces(
        &self,
        r: Request<proto::ListNamespacesRequest>,
    ) -> R<proto::ListNamespacesResponse> {
        self.inner.list_namespaces(r).await
    }
    async fn create_table(
        &self,
        r: Request<proto::CreateTableRequest>,
    ) -> R<proto::MutationResponse> {
        self.inner.create_table(r).await
    }
    async fn drop_table(&self, r: Request<proto::TableRequest>) -> R<proto::MutationResponse> {
        self.inner.drop_table(r).await
    }
    async fn describe_table(
        &self,
        r: Request<proto::TableRequest>,
    ) -> R<proto::DescribeTableResponse> {
        self.inner.describe_table(r).await
    }
    async fn list_tables(
        &self,
        r: Request<proto::ListTablesRequest>,
    ) -> R<proto::ListTablesResponse> {
        self.inner.list_tables(r).await
    }
    async fn commit(&self, r: Request<proto::CommitRequest>) -> R<proto::CommitResponse> {
        let answer = self.inner.commit(r).await;
        let lost = self
            .lose
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if lost && answer.is_ok() {
            return Err(Status::deadline_exceeded("the answer was lost"));
        }
        answer
    }
    async fn finalize_manifest(
        &self,
        r: Request<proto::FinalizeManifestRequest>,
    ) -> R<proto::MutationResponse> {
        self.inner.finalize_manifest(r).await
    }
    async fn grant(&self, r: Request<proto::GrantRequest>) -> R<proto::MutationResponse> {
        self.inner.grant(r).await
    }
    async fn revoke(&self, r: Request<proto::GrantRequest>) -> R<proto::MutationResponse> {
        self.inner.revoke(r).await
    }
    type WatchStream = Pin<Box<dyn Stream<Item = Result<proto::ChangeEvent, Status>> + Send>>;
    async fn watch(&self, r: Request<proto::WatchRequest>) -> R<Self::WatchStream> {
        let inner = self.inner.watch(r).await?.into_inner();
        let stall = self.stall_watch.clone();
        let held = futures::StreamExt::then(inner, move |event| {
            let stall = stall.clone();
            async move {
                while stall.load(Ordering::SeqCst) {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                event
            }
        });
        Ok(Response::new(Box::pin(held)))
    }
    type SnapshotStream = Pin<Box<dyn Stream<Item = Result<proto::SnapshotChunk, Status>> + Send>>;
    async fn snapshot(&self, r: Request<proto::SnapshotRequest>) -> R<Self::SnapshotStream> {
        let inner = self.inner.snapshot(r).await?.into_inner();
        Ok(Response::new(Box::pin(inner)))
    }
    async fn node_status(
        &self,
        r: Request<proto::NodeStatusRequest>,
    ) -> R<proto::NodeStatusResponse> {
        self.inner.node_status(r).await
    }
}

/// A Query replica over `LosesCommitAnswers`, with an SDK client and table `t (id BIGINT)`.
async fn replica_over_a_lossy_metasrv() -> (tempfile::TempDir, Arc<LosesCommitAnswers>, LakeClient)
{
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(RocksStore::open(&dir.path().join("metasrv")).expect("rocksdb"));
    let metasrv = Metasrv::start(store).expect("metasrv");
    let lossy = Arc::new(LosesCommitAnswers {
        inner: metasrv.clone(),
        lose: AtomicUsize::new(0),
        stall_watch: Arc::new(std::sync::atomic::AtomicBool::new(false)),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let service = MetasrvServer::from_arc(lossy.clone());
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let client = MetasrvClient::connect(&format!("http://{addr}"))
        .await
        .expect("connect");
    let data = dir.path().join("tables");
    std::fs::create_dir_all(&data).expect("data dir");
    let key = TicketKey::new(&[7; 32]).expect("key");
    let replica = lake::embedded::start_query(
        client,
        &data.to_string_lossy(),
        &lake::embedded::ReplicaOptions::default(),
        key,
        "127.0.0.1:0".parse().expect("addr"),
        std::future::pending(),
    )
    .await
    .expect("query replica");
    let mut lake = LakeClient::connect(&format!("http://{}", replica.addr))
        .await
        .expect("sdk");
    lake.sql("CREATE TABLE t (id BIGINT)")
        .await
        .expect("create");
    (dir, lossy, lake)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_append_whose_commit_answer_is_lost_lands_once_and_the_table_stays_readable() {
    let (_dir, lossy, mut lake) = replica_over_a_lossy_metasrv().await;

    // The first insert's commit applies, but its answer is lost twice.
    lossy.lose.store(2, Ordering::SeqCst);
    lake.sql("INSERT INTO t VALUES (1)")
        .await
        .expect("the insert succeeds once the replay shows the commit is ours");
    assert_eq!(
        lossy.lose.load(Ordering::SeqCst),
        0,
        "both answers were lost"
    );
    let count = |batches: Vec<arrow::record_batch::RecordBatch>| {
        arrow::compute::cast(batches[0].column(0), &arrow::datatypes::DataType::Int64)
            .expect("cast")
            .as_any()
            .downcast_ref::<arrow::array::Int64Array>()
            .expect("int64")
            .value(0)
    };
    // Exactly one row, readable at the latest version (its manifest was not deleted), and
    // the table keeps taking appends.
    assert_eq!(
        count(lake.sql("SELECT count(*) FROM t").await.expect("read")),
        1
    );
    lake.sql("INSERT INTO t VALUES (2)")
        .await
        .expect("next insert");
    assert_eq!(
        count(lake.sql("SELECT count(*) FROM t").await.expect("read")),
        2
    );
    assert_eq!(
        count(
            lake.sql("SELECT count(*) FROM t VERSION AS OF 2")
                .await
                .expect("v2")
        ),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_insert_that_committed_while_the_change_stream_stalls_is_reported_as_committed() {
    // Issue 15 case 13: the commit applied, but the replica's catalog could not show it
    // (every change stream and snapshot fetch stalled), and the client was told
    // DEADLINE_EXCEEDED for a write that happened.
    let (_dir, lossy, mut lake) = replica_over_a_lossy_metasrv().await;
    lossy.stall_watch.store(true, Ordering::SeqCst);
    lake.sql("INSERT INTO t VALUES (1)")
        .await
        .expect("a committed insert succeeds even though the catalog cannot show it yet");
    lossy.stall_watch.store(false, Ordering::SeqCst);
    let description = lossy
        .inner
        .describe_table(Request::new(proto::TableRequest {
            namespace: "default".into(),
            name: "t".into(),
            version: Some(1),
            ..Default::default()
        }))
        .await
        .expect("describe")
        .into_inner();
    let versions: Vec<u64> = description.versions.iter().map(|v| v.version).collect();
    assert_eq!(
        versions,
        [1, 2],
        "the create and the insert, each once (version 2 is the latest)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn create_if_not_exists_of_a_table_made_elsewhere_waits_until_this_replica_shows_it() {
    // Found in CI (six writers racing on a new table over two replicas): CREATE TABLE IF
    // NOT EXISTS answered at once because another client had made the table, and the
    // next INSERT on this replica, whose catalog had not heard of it yet, failed NOT_FOUND.
    let (_dir, lossy, mut lake) = replica_over_a_lossy_metasrv().await;
    lossy.stall_watch.store(true, Ordering::SeqCst);
    let schema = arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new(
        "id",
        arrow::datatypes::DataType::Int64,
        true,
    )]);
    // Another replica's client creates `u` and `s` meanwhile.
    lossy
        .inner
        .create_table(Request::new(proto::CreateTableRequest {
            namespace: "default".into(),
            name: "u".into(),
            schema_ipc: lake_query::engine::schema_to_ipc(&schema).expect("ipc"),
        }))
        .await
        .expect("created elsewhere");
    lossy
        .inner
        .create_namespace(Request::new(proto::NamespaceRequest { name: "s".into() }))
        .await
        .expect("created elsewhere");
    let stall = lossy.stall_watch.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        stall.store(false, Ordering::SeqCst);
    });
    lake.sql("CREATE TABLE IF NOT EXISTS u (id BIGINT)")
        .await
        .expect("exists: nothing to do");
    lake.sql("INSERT INTO u VALUES (1)")
        .await
        .expect("the next statement sees the table");
    lake.sql("CREATE SCHEMA IF NOT EXISTS s")
        .await
        .expect("exists");
    lake.sql("CREATE TABLE s.v (id BIGINT)")
        .await
        .expect("the next statement sees the schema");
}
