//! The typed gRPC client Query replicas use to reach Metasrv.

use futures::{Stream, StreamExt};
use lake_core::{
    ChangeEvent, Digest, GrantScope, ManifestRef, Privilege, TableMeta, VersionRecord,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::MetasrvError;
use crate::convert;
use crate::error::error_chain;
use crate::proto;
use crate::proto::metasrv_client::MetasrvClient as RpcClient;

/// Result of a successful commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Committed {
    /// The table version the commit pointer now holds (or held, for a replay).
    pub version: u64,
    /// The same operation id and payload had already committed `version`; nothing was
    /// written now.
    pub replayed: bool,
    /// Registry revision that includes the commit (read-your-writes token).
    pub revision: u64,
}

/// A table's registry entry and a bounded part of its version history
/// ([`MetasrvClient::describe_table_with`]).
#[derive(Clone, Debug)]
pub struct TableDescription {
    /// Identity, schema, location.
    pub meta: TableMeta,
    /// At most three committed versions, oldest first: the version asked for, the one the
    /// operation id asked about committed, and the latest (always last; none before the
    /// first commit). Never the whole history, which grows without bound.
    pub versions: Vec<VersionRecord>,
    /// Registry revision the description was read at.
    pub revision: u64,
    /// The version the asked operation id committed and its payload digest, while the id
    /// is retained (the version's record may have expired before it).
    pub operation: Option<(u64, Digest)>,
}

/// How long a call keeps trying the nodes while none can take it (a leader failover
/// takes about one lease period).
const FAILOVER_WAIT: Duration = Duration::from_secs(10);
/// How long one attempt may take before the node counts as unresponsive (a paused
/// process accepts connections but never answers).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// One item of a watch stream ([`MetasrvClient::watch_items`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Watched {
    /// The next durable event.
    Event(ChangeEvent),
    /// The server's heartbeat (after a second without events): nothing new after
    /// `revision`.
    Heartbeat { revision: u64 },
}

/// A cheaply clonable Metasrv client over one or several nodes.
///
/// A call goes to the node that answered last. When a node cannot take it (no connection,
/// or it does not lead and cannot reach the leader), the call was not carried out, so the
/// client tries the next node, backing off once it has tried them all, for up to 10 s.
///
/// Watch streams ([`Self::watch_items`]) keep their own place among the nodes, starting at
/// one drawn per client and moving on when an open fails or a stream ends in an error: a
/// fleet of Query replicas given the same endpoint list spreads its streams over the nodes
/// (any node serves a watch: followers through their log tail) instead of putting the
/// whole fan-out on the first one. The fleet simulation
/// (`simtests/tests/cluster.rs`, `a_fleet_follows_every_commit_without_calling_metasrv_per_read`)
/// measures the difference.
#[derive(Clone, Debug)]
pub struct MetasrvClient {
    nodes: Arc<[RpcClient<Channel>]>,
    current: Arc<AtomicUsize>,
    /// Where this client's watch streams go (moved on like `current`).
    watching: Arc<AtomicUsize>,
}

/// Whether `status` says the call was not carried out, so another node may take it.
fn not_taken(status: &Status) -> bool {
    let reason = status
        .metadata()
        .get("x-lake-error")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    status.code() == Code::Unavailable
        && (matches!(reason, "not-leader" | "not-written")
            || status.message().contains("connect error")
            || status.message().contains("Connection refused"))
}

impl MetasrvClient {
    /// Connects to `endpoint` (e.g. `http://127.0.0.1:50052`), or to several Metasrv nodes
    /// given as a comma-separated list (`http://a:7000,http://b:7000`): calls are spread
    /// over the nodes that are up (tonic's `Channel::balance_list`), and any node forwards
    /// to the leader. `https://` endpoints are checked against the system's roots; see
    /// [`Self::connect_with`] for a CA and a client certificate of your own.
    ///
    /// # Errors
    /// [`MetasrvError::Connect`] when an endpoint is malformed, or (for a single endpoint)
    /// unreachable.
    pub async fn connect(endpoint: &str) -> Result<Self, MetasrvError> {
        Self::connect_with(endpoint, None).await
    }

    /// [`Self::connect`] over TLS with `tls` (a CA, and the client certificate a Metasrv
    /// with mutual TLS requires); the endpoints must then be `https://`.
    ///
    /// # Errors
    /// As [`Self::connect`]; [`MetasrvError::Tls`] for unusable TLS settings or an
    /// `http://` endpoint given TLS settings. A Metasrv that refuses the client certificate
    /// fails the handshake: [`MetasrvError::Connect`] for a single endpoint, the first
    /// call otherwise.
    pub async fn connect_with(
        endpoint: &str,
        tls: Option<&crate::ClientTls>,
    ) -> Result<Self, MetasrvError> {
        let connect_error = |message: String| MetasrvError::Connect {
            endpoint: endpoint.to_string(),
            message,
        };
        let endpoints: Vec<&str> = endpoint
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        let mut nodes = Vec::new();
        for e in &endpoints {
            let scheme = e
                .parse::<tonic::transport::Uri>()
                .ok()
                .filter(|uri| uri.authority().is_some())
                .and_then(|uri| uri.scheme_str().map(str::to_string));
            let https = match scheme.as_deref() {
                Some("https") => true,
                Some("http") if tls.is_none() => false,
                Some("http") => {
                    return Err(MetasrvError::Tls(format!(
                        "TLS settings were given but {e} is http://: use https://HOST:PORT"
                    )));
                }
                _ => {
                    return Err(connect_error(format!(
                        "malformed endpoint {e:?}: use http://HOST:PORT or https://HOST:PORT (several separated by commas)"
                    )));
                }
            };
            let mut channel = Channel::from_shared(e.to_string())
                .map_err(|err| connect_error(format!("{e}: {err}")))?
                .connect_timeout(Duration::from_secs(2));
            if https {
                channel = tls.cloned().unwrap_or_default().apply(channel)?;
            }
            let channel = if endpoints.len() == 1 {
                channel
                    .connect()
                    .await
                    .map_err(|err| connect_error(error_chain(&err)))?
            } else {
                channel.connect_lazy()
            };
            nodes.push(RpcClient::new(channel));
        }
        if nodes.is_empty() {
            return Err(connect_error("no endpoint given".into()));
        }
        Ok(Self::from_nodes(nodes))
    }

    /// A client over `channel`, one Metasrv (e.g. [`crate::Metasrv::serve_in_process`]).
    pub fn from_channel(channel: Channel) -> Self {
        Self::from_nodes(vec![RpcClient::new(channel)])
    }

    fn from_nodes(nodes: Vec<RpcClient<Channel>>) -> Self {
        use std::hash::BuildHasher;
        // A draw per client (std's per-process random hasher keys), for where its watch
        // streams start.
        let start = std::collections::hash_map::RandomState::new().hash_one(nodes.len());
        Self {
            current: Arc::new(AtomicUsize::new(0)),
            watching: Arc::new(AtomicUsize::new(start as usize % nodes.len().max(1))),
            nodes: nodes.into(),
        }
    }

    /// Runs `call` on the current node, moving on to the next one while nodes cannot
    /// take it; see the type's docs.
    ///
    /// An attempt that gets no answer within [`ATTEMPT_TIMEOUT`], or whose connection
    /// breaks, may or may not have been carried out: an `idempotent` call then moves on to
    /// the next node too; another call fails with that error (its outcome is unknown).
    async fn call<Req, Resp, Fut>(
        &self,
        request: Req,
        idempotent: bool,
        call: impl Fn(RpcClient<Channel>, Req) -> Fut,
    ) -> Result<Resp, MetasrvError>
    where
        Req: Clone,
        Fut: std::future::Future<Output = Result<tonic::Response<Resp>, Status>>,
    {
        self.call_at(&self.current, request, idempotent, call).await
    }

    /// [`Self::call`], starting at and moving `at` (the client's place for this kind of
    /// call) instead of the place of ordinary calls.
    async fn call_at<Req, Resp, Fut>(
        &self,
        at: &AtomicUsize,
        request: Req,
        idempotent: bool,
        call: impl Fn(RpcClient<Channel>, Req) -> Fut,
    ) -> Result<Resp, MetasrvError>
    where
        Req: Clone,
        Fut: std::future::Future<Output = Result<tonic::Response<Resp>, Status>>,
    {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(20);
        let mut tried = 0;
        loop {
            let i = at.load(Ordering::Relaxed) % self.nodes.len();
            let attempt = tokio::time::timeout(
                ATTEMPT_TIMEOUT,
                call(self.nodes[i].clone(), request.clone()),
            )
            .await
            .unwrap_or_else(|_| {
                Err(Status::deadline_exceeded(format!(
                    "metasrv did not answer within {} s; the outcome is unknown",
                    ATTEMPT_TIMEOUT.as_secs()
                )))
            });
            // A broken connection or a timeout leaves the outcome unknown: only a call that
            // may run twice is sent again.
            let retry = |status: &Status| {
                not_taken(status)
                    || (idempotent
                        && matches!(
                            status.code(),
                            Code::Unavailable | Code::DeadlineExceeded | Code::Unknown
                        ))
            };
            match attempt {
                Ok(response) => return Ok(response.into_inner()),
                Err(status) if retry(&status) && started.elapsed() < FAILOVER_WAIT => {
                    let next = (i + 1) % self.nodes.len();
                    let _ = at.compare_exchange(i, next, Ordering::Relaxed, Ordering::Relaxed);
                    tried += 1;
                    if tried % self.nodes.len() == 0 {
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(Duration::from_millis(500));
                    }
                }
                Err(status) => return Err(status.into()),
            }
        }
    }

    /// This node's health and readiness view.
    ///
    /// # Errors
    /// Transport errors.
    pub async fn node_status(&self) -> Result<proto::NodeStatusResponse, MetasrvError> {
        let i = self.current.load(Ordering::Relaxed) % self.nodes.len();
        Ok(self.nodes[i]
            .clone()
            .node_status(proto::NodeStatusRequest {})
            .await?
            .into_inner())
    }

    /// The revision the leader has committed up to now (every acknowledged change is at
    /// or below it).
    ///
    /// # Errors
    /// Transport errors.
    pub async fn revision(&self) -> Result<u64, MetasrvError> {
        Ok(self
            .call(
                proto::ListNamespacesRequest {},
                true,
                |mut rpc, r| async move { rpc.list_namespaces(r).await },
            )
            .await?
            .revision)
    }

    /// Creates a namespace; returns the revision that includes it.
    ///
    /// # Errors
    /// Already exists, invalid name, or transport errors.
    pub async fn create_namespace(&self, name: &str) -> Result<u64, MetasrvError> {
        let request = proto::NamespaceRequest { name: name.into() };
        Ok(self
            .call(request, false, |mut rpc, r| async move {
                rpc.create_namespace(r).await
            })
            .await?
            .revision)
    }

    /// Raises `principal`'s privilege on `scope` to at least `privilege` (SQL GRANT);
    /// returns the privilege it now holds there and the revision that includes it.
    ///
    /// # Errors
    /// Invalid principal name, namespace not found, or transport errors.
    pub async fn grant(
        &self,
        principal: &str,
        scope: &GrantScope,
        privilege: Privilege,
    ) -> Result<(Option<Privilege>, u64), MetasrvError> {
        let request = proto::GrantRequest {
            principal: principal.into(),
            scope: scope.to_wire(),
            privilege: privilege.code(),
        };
        // Setting a grant twice leaves the same state: safe to send again.
        let r = self
            .call(
                request,
                true,
                |mut rpc, r| async move { rpc.grant(r).await },
            )
            .await?;
        Ok((convert::privilege(r.privilege)?, r.revision))
    }

    /// Takes `privilege` on `scope` from `principal` (a grant at or above it drops to the
    /// level below; `None` takes them all; SQL REVOKE); returns the privilege it now holds
    /// there and the revision that includes it.
    ///
    /// # Errors
    /// Invalid principal name, namespace not found, or transport errors.
    pub async fn revoke(
        &self,
        principal: &str,
        scope: &GrantScope,
        privilege: Option<Privilege>,
    ) -> Result<(Option<Privilege>, u64), MetasrvError> {
        let request = proto::GrantRequest {
            principal: principal.into(),
            scope: scope.to_wire(),
            privilege: privilege.map_or(0, Privilege::code),
        };
        // The result is the level below the revoked one whatever was held: safe to resend.
        let r = self
            .call(
                request,
                true,
                |mut rpc, r| async move { rpc.revoke(r).await },
            )
            .await?;
        Ok((convert::privilege(r.privilege)?, r.revision))
    }

    /// Drops an empty namespace; returns the revision that includes it.
    ///
    /// # Errors
    /// Not found, not empty, or transport errors.
    pub async fn drop_namespace(&self, name: &str) -> Result<u64, MetasrvError> {
        let request = proto::NamespaceRequest { name: name.into() };
        Ok(self
            .call(request, false, |mut rpc, r| async move {
                rpc.drop_namespace(r).await
            })
            .await?
            .revision)
    }

    /// Registers a table; `schema_ipc` is an encapsulated Arrow IPC schema message.
    ///
    /// # Errors
    /// Namespace not found, table exists, invalid name, or transport errors.
    pub async fn create_table(
        &self,
        namespace: &str,
        name: &str,
        schema_ipc: Vec<u8>,
    ) -> Result<(TableMeta, u64), MetasrvError> {
        let request = proto::CreateTableRequest {
            namespace: namespace.into(),
            name: name.into(),
            schema_ipc,
        };
        let response = self
            .call(request, false, |mut rpc, r| async move {
                rpc.create_table(r).await
            })
            .await?;
        let meta = response
            .table
            .ok_or_else(|| MetasrvError::Malformed("create_table returned no table".into()))?;
        Ok((meta.into(), response.revision))
    }

    /// Drops a table; returns the revision that includes it.
    ///
    /// # Errors
    /// Not found or transport errors.
    pub async fn drop_table(&self, namespace: &str, name: &str) -> Result<u64, MetasrvError> {
        let request = proto::TableRequest {
            namespace: namespace.into(),
            name: name.into(),
            ..Default::default()
        };
        Ok(self
            .call(request, false, |mut rpc, r| async move {
                rpc.drop_table(r).await
            })
            .await?
            .revision)
    }

    /// The table's entry and its latest version.
    ///
    /// # Errors
    /// As [`Self::describe_table_with`].
    pub async fn describe_table(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<TableDescription, MetasrvError> {
        self.describe_table_with(namespace, name, None, None).await
    }

    /// The table's entry, its latest version, and also `version` and the version
    /// `operation_id` committed when given and committed: a reply whose size does not grow
    /// with the table's history.
    ///
    /// # Errors
    /// [`MetasrvError::Commit`] with `TableNotFound`; transport errors.
    pub async fn describe_table_with(
        &self,
        namespace: &str,
        name: &str,
        version: Option<u64>,
        operation_id: Option<&str>,
    ) -> Result<TableDescription, MetasrvError> {
        let request = proto::TableRequest {
            namespace: namespace.into(),
            name: name.into(),
            version,
            operation_id: operation_id.map(str::to_string),
        };
        let r = self
            .call(request, true, |mut rpc, r| async move {
                rpc.describe_table(r).await
            })
            .await?;
        Ok(TableDescription {
            meta: r
                .meta
                .ok_or_else(|| MetasrvError::Malformed("describe_table without meta".into()))?
                .into(),
            versions: r
                .versions
                .into_iter()
                .map(convert::version_record)
                .collect::<Result<_, _>>()?,
            revision: r.revision,
            operation: match r.operation {
                Some(op) => Some((
                    op.version,
                    convert::digest(&op.digest)?.ok_or_else(|| {
                        MetasrvError::Malformed("an operation without its digest".into())
                    })?,
                )),
                None => None,
            },
        })
    }

    /// Compare-and-swap of the commit pointer of `table_id` from `base_version` to
    /// `base_version + 1`, optionally idempotent under `operation` (id, payload digest).
    ///
    /// # Errors
    /// [`MetasrvError::is_conflict`] for a lost CAS (retry after re-reading);
    /// [`MetasrvError::is_operation_reused`]; not found; transport errors.
    pub async fn commit(
        &self,
        table_id: u64,
        base_version: u64,
        manifest: &ManifestRef,
        operation: Option<(&str, Digest)>,
    ) -> Result<Committed, MetasrvError> {
        // With an operation id a repeated commit is a replay (it returns the original
        // version), so it is safe to send again after an unanswered attempt.
        let idempotent = operation.is_some();
        let request = proto::CommitRequest {
            table_id,
            base_version,
            manifest: Some(manifest.into()),
            operation_id: operation.map(|(id, _)| id.to_string()),
            digest: operation.map(|(_, d)| d.to_vec()).unwrap_or_default(),
        };
        let r = self
            .call(request, idempotent, |mut rpc, r| async move {
                rpc.commit(r).await
            })
            .await?;
        Ok(Committed {
            version: r.version,
            replayed: r.replayed,
            revision: r.revision,
        })
    }

    /// Records the final manifest path of a committed version.
    ///
    /// # Errors
    /// Version not found or transport errors.
    pub async fn finalize_manifest(
        &self,
        table_id: u64,
        version: u64,
        manifest: &ManifestRef,
    ) -> Result<u64, MetasrvError> {
        let request = proto::FinalizeManifestRequest {
            table_id,
            version,
            manifest: Some(manifest.into()),
        };
        Ok(self
            .call(request, true, |mut rpc, r| async move {
                rpc.finalize_manifest(r).await
            })
            .await?
            .revision)
    }

    /// The change stream after `from_revision`; with `follow` it stays open for new events.
    /// Heartbeats are left out ([`Self::watch_items`] keeps them).
    ///
    /// # Errors
    /// Transport errors (also as stream items).
    pub async fn watch(
        &self,
        from_revision: u64,
        follow: bool,
    ) -> Result<impl Stream<Item = Result<ChangeEvent, MetasrvError>> + Send + 'static, MetasrvError>
    {
        let items = self.watch_items(from_revision, follow).await?;
        Ok(items.filter_map(|item| async move {
            match item {
                Ok(Watched::Event(event)) => Some(Ok(event)),
                Ok(Watched::Heartbeat { .. }) => None,
                Err(e) => Some(Err(e)),
            }
        }))
    }

    /// The registry at the store's last revision, as a node loads it (its newest checkpoint
    /// with the log after it replayed), sent in chunks of [`crate::server::SNAPSHOT_CHUNK_BYTES`]
    /// and checked against the header's length and SHA-256 ([`crate::checkpoint::decode`]).
    /// What a replica loads when it starts or when its Watch ended with
    /// [`MetasrvError::is_log_truncated`]. At most [`crate::checkpoint::BYTES_MAX`] bytes are
    /// accepted.
    ///
    /// # Errors
    /// Transport errors; [`MetasrvError::Malformed`] when the chunks do not match the
    /// header or do not decode.
    pub async fn snapshot(&self) -> Result<lake_core::Registry, MetasrvError> {
        self.snapshot_with(|| {}).await
    }

    /// [`Self::snapshot`], calling `progress` for every message that arrives (keepalives
    /// while the node loads, then chunks): how a caller tells a slow snapshot from a lost
    /// call.
    ///
    /// # Errors
    /// As [`Self::snapshot`].
    pub async fn snapshot_with(
        &self,
        mut progress: impl FnMut(),
    ) -> Result<lake_core::Registry, MetasrvError> {
        let mut stream = self
            .call(proto::SnapshotRequest {}, true, |mut rpc, r| async move {
                rpc.snapshot(r).await
            })
            .await?;
        let malformed = |what: String| MetasrvError::Malformed(format!("snapshot: {what}"));
        let header = loop {
            let message = stream
                .message()
                .await?
                .ok_or_else(|| malformed("the stream ended before the header".into()))?;
            progress();
            match message.header {
                Some(header) => break header,
                None if message.chunk.is_empty() => {} // a keepalive
                None => return Err(malformed("a chunk before the header".into())),
            }
        };
        crate::checkpoint::check_header(&header).map_err(|e| malformed(e.to_string()))?;
        let mut bytes = Vec::with_capacity(crate::checkpoint::Encoded::capacity_for(&header));
        while let Some(message) = stream.message().await? {
            progress();
            if bytes.len() as u64 + message.chunk.len() as u64 > header.bytes {
                return Err(malformed(format!(
                    "more than the {} bytes the header announced",
                    header.bytes
                )));
            }
            bytes.extend_from_slice(&message.chunk);
        }
        crate::checkpoint::decode(&header, &bytes).map_err(|e| malformed(e.to_string()))
    }

    /// The change stream after `from_revision` with the server's heartbeats, which is how
    /// a follower tells a quiet stream from a dead one (`lake_core::Follower` gives up on
    /// one silent for 10 s). No timeout here: a stream from a paused node just stays
    /// silent.
    ///
    /// # Errors
    /// Transport errors (also as stream items).
    pub async fn watch_items(
        &self,
        from_revision: u64,
        follow: bool,
    ) -> Result<impl Stream<Item = Result<Watched, MetasrvError>> + Send + 'static, MetasrvError>
    {
        let request = proto::WatchRequest {
            from_revision,
            follow,
        };
        let stream = self
            .call_at(&self.watching, request, true, |mut rpc, r| async move {
                rpc.watch(r).await
            })
            .await?;
        // A stream that ends in an error moves this client's next stream to the next node
        // (a node that takes streams but cannot serve them is left, not retried forever).
        let (watching, nodes) = (self.watching.clone(), self.nodes.len());
        let at = watching.load(Ordering::Relaxed) % nodes;
        Ok(stream.map(move |item| match item {
            Ok(event) if event.kind.is_none() => Ok(Watched::Heartbeat {
                revision: event.revision,
            }),
            Ok(event) => convert::change_event(event).map(Watched::Event),
            Err(status) => {
                let _ = watching.compare_exchange(
                    at,
                    (at + 1) % nodes,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                Err(status.into())
            }
        }))
    }
}
