//! The Metasrv tokio shell: a driver task that runs the core coordinator against an
//! [`EventStore`], and the tonic service that fronts it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use futures::Stream;
use lake_core::commit::{Applied, Input, Mutation, Output, Reply};
use lake_core::{ChangeEvent, CommitError, Registry, WriteOutcome};
use tokio::sync::{broadcast, mpsc, oneshot};
use tonic::{Request, Response, Status};

use crate::MetasrvError;
use crate::convert;
use crate::proto;
use crate::proto::metasrv_server::{Metasrv as MetasrvRpc, MetasrvServer};
use crate::store::{EventStore, StoreError};

/// Most mutations grouped into one store write.
const BATCH_MAX: usize = 256;
/// Events buffered per watcher before it must re-read from the store.
const WATCH_BUFFER: usize = 4096;

type ReadFn = Box<dyn FnOnce(&Registry) + Send>;

enum Command {
    Mutate(Mutation, oneshot::Sender<Result<Reply, CommitError>>),
    Read(ReadFn),
}

/// Milliseconds since the Unix epoch from the system clock.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A running Metasrv: the coordinator's driver task plus handles to reach it.
#[derive(Clone)]
pub struct Metasrv {
    commands: mpsc::Sender<Command>,
    events: broadcast::Sender<ChangeEvent>,
    store: Arc<dyn EventStore>,
    requests: Arc<AtomicU64>,
}

impl Metasrv {
    /// Loads the registry from `store` and starts the driver task on the current runtime.
    ///
    /// # Errors
    /// [`MetasrvError::Store`] when the log cannot be read or does not replay.
    pub fn start(store: Arc<dyn EventStore>) -> Result<Self, MetasrvError> {
        let registry = store.load()?;
        let (commands, rx) = mpsc::channel(1024);
        let (events, _) = broadcast::channel(WATCH_BUFFER);
        let metasrv = Self {
            commands,
            events: events.clone(),
            store: store.clone(),
            requests: Arc::new(AtomicU64::new(0)),
        };
        tokio::spawn(drive(registry, store, rx, events));
        Ok(metasrv)
    }

    /// Applies one mutation and waits until it is durable (or refused).
    ///
    /// # Errors
    /// [`MetasrvError::Commit`] with the coordinator's reason.
    pub async fn mutate(&self, mutation: Mutation) -> Result<Reply, MetasrvError> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Mutate(mutation, tx))
            .await
            .map_err(|_| MetasrvError::ShuttingDown)?;
        Ok(rx.await.map_err(|_| MetasrvError::ShuttingDown)??)
    }

    /// Runs `f` on the durable registry.
    ///
    /// # Errors
    /// [`MetasrvError::ShuttingDown`].
    pub async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Registry) -> T + Send + 'static,
    ) -> Result<T, MetasrvError> {
        let (tx, rx) = oneshot::channel();
        let read: ReadFn = Box::new(move |registry| {
            let _ = tx.send(f(registry));
        });
        self.commands
            .send(Command::Read(read))
            .await
            .map_err(|_| MetasrvError::ShuttingDown)?;
        rx.await.map_err(|_| MetasrvError::ShuttingDown)
    }

    /// gRPC requests served so far (each unary call and each opened watch stream counts
    /// one): how Query replicas' cache hit rate is observed.
    pub fn requests_served(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Serves the gRPC API on `listener` until `shutdown` resolves.
    ///
    /// # Errors
    /// [`MetasrvError::Rpc`] when the transport fails.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), MetasrvError> {
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        let requests = self.requests.clone();
        let count = move |request: Request<()>| {
            requests.fetch_add(1, Ordering::Relaxed);
            Ok(request)
        };
        tonic::transport::Server::builder()
            .add_service(MetasrvServer::with_interceptor(self, count))
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await
            .map_err(|e| MetasrvError::Rpc {
                code: tonic::Code::Unavailable,
                reason: String::new(),
                message: e.to_string(),
            })
    }

    /// Binds `addr` and serves in a background task; returns the bound address.
    ///
    /// # Errors
    /// [`MetasrvError::Connect`] when the address cannot be bound.
    pub async fn spawn_server(self, addr: SocketAddr) -> Result<SocketAddr, MetasrvError> {
        let listener =
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| MetasrvError::Connect {
                    endpoint: addr.to_string(),
                    message: e.to_string(),
                })?;
        let bound = listener.local_addr().map_err(|e| MetasrvError::Connect {
            endpoint: addr.to_string(),
            message: e.to_string(),
        })?;
        tokio::spawn(async move {
            if let Err(e) = self.serve(listener, std::future::pending()).await {
                tracing::error!(error = %e, "metasrv server stopped");
            }
        });
        Ok(bound)
    }
}

enum Event {
    Command(Command),
    Written(u64, Result<(), StoreError>),
}

async fn drive(
    registry: Registry,
    store: Arc<dyn EventStore>,
    mut commands: mpsc::Receiver<Command>,
    events: broadcast::Sender<ChangeEvent>,
) {
    let mut coordinator = lake_core::Coordinator::new(registry, BATCH_MAX);
    let mut waiting: HashMap<u64, oneshot::Sender<Result<Reply, CommitError>>> = HashMap::new();
    let mut next_request = 1u64;
    let (written_tx, mut written_rx) = mpsc::unbounded_channel::<(u64, Result<(), StoreError>)>();
    loop {
        let event = tokio::select! {
            Some((id, result)) = written_rx.recv() => Event::Written(id, result),
            command = commands.recv() => match command {
                Some(c) => Event::Command(c),
                None => return,
            },
        };
        let input = match event {
            Event::Command(Command::Read(f)) => {
                f(coordinator.registry());
                continue;
            }
            Event::Command(Command::Mutate(mutation, reply)) => {
                let id = next_request;
                next_request += 1;
                waiting.insert(id, reply);
                Input::Request { id, mutation }
            }
            Event::Written(write_id, Ok(())) => Input::WriteDone { write_id },
            Event::Written(write_id, Err(error)) => {
                let outcome = match error {
                    StoreError::RevisionMismatch { .. } => WriteOutcome::NotWritten,
                    _ => WriteOutcome::Unknown,
                };
                tracing::warn!(%error, "metasrv store write failed");
                Input::WriteFailed {
                    write_id,
                    outcome,
                    message: error.to_string(),
                }
            }
        };
        coordinator.handle(input, now_ms());
        while let Some(output) = coordinator.poll() {
            match output {
                Output::Write(write) => {
                    let store = store.clone();
                    let done = written_tx.clone();
                    tokio::task::spawn_blocking(move || {
                        let result = store.append(write.base_revision, &write.events);
                        let _ = done.send((write.write_id, result));
                    });
                }
                Output::Reply { id, result } => {
                    if let Some(tx) = waiting.remove(&id) {
                        let _ = tx.send(result);
                    }
                }
                Output::Publish(published) => {
                    for event in published {
                        // No receivers is fine: watchers re-read the store on subscribe.
                        let _ = events.send(event);
                    }
                }
                Output::Load { after_revision } => {
                    let store = store.clone();
                    let loaded = tokio::task::spawn_blocking(move || {
                        store.read_after(after_revision, usize::MAX)
                    })
                    .await;
                    match loaded {
                        Ok(Ok(events)) => coordinator.handle(Input::Loaded(events), now_ms()),
                        Ok(Err(e)) => {
                            tracing::error!(error = %e, "metasrv cannot reload its store; stopping");
                            return;
                        }
                        Err(e) => {
                            tracing::error!(error = %e, "metasrv reload task failed; stopping");
                            return;
                        }
                    }
                }
            }
        }
    }
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<proto::ChangeEvent, Status>> + Send>>;

fn mutation_response(reply: Reply) -> proto::MutationResponse {
    let table = match &reply.applied {
        Applied::TableCreated(meta) => Some(meta.into()),
        _ => None,
    };
    proto::MutationResponse {
        revision: reply.revision,
        table,
    }
}

#[tonic::async_trait]
impl MetasrvRpc for Metasrv {
    async fn create_namespace(
        &self,
        request: Request<proto::NamespaceRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        let name = request.into_inner().name;
        let reply = self.mutate(Mutation::CreateNamespace { name }).await?;
        Ok(Response::new(mutation_response(reply)))
    }

    async fn drop_namespace(
        &self,
        request: Request<proto::NamespaceRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        let name = request.into_inner().name;
        let reply = self.mutate(Mutation::DropNamespace { name }).await?;
        Ok(Response::new(mutation_response(reply)))
    }

    async fn list_namespaces(
        &self,
        _request: Request<proto::ListNamespacesRequest>,
    ) -> Result<Response<proto::ListNamespacesResponse>, Status> {
        let response = self
            .read(|r| proto::ListNamespacesResponse {
                names: r.namespaces().map(str::to_string).collect(),
                revision: r.revision(),
            })
            .await?;
        Ok(Response::new(response))
    }

    async fn create_table(
        &self,
        request: Request<proto::CreateTableRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        let r = request.into_inner();
        let reply = self
            .mutate(Mutation::CreateTable {
                namespace: r.namespace,
                name: r.name,
                schema_ipc: r.schema_ipc,
            })
            .await?;
        Ok(Response::new(mutation_response(reply)))
    }

    async fn drop_table(
        &self,
        request: Request<proto::TableRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        let r = request.into_inner();
        let reply = self
            .mutate(Mutation::DropTable {
                namespace: r.namespace,
                name: r.name,
            })
            .await?;
        Ok(Response::new(mutation_response(reply)))
    }

    async fn describe_table(
        &self,
        request: Request<proto::TableRequest>,
    ) -> Result<Response<proto::DescribeTableResponse>, Status> {
        let r = request.into_inner();
        let described = self
            .read(move |registry| {
                let Some(table) = registry.table(&r.namespace, &r.name) else {
                    return Err(CommitError::TableNotFound {
                        existing: registry
                            .tables_in(&r.namespace)
                            .map(|t| t.meta.name.clone())
                            .collect::<Vec<_>>()
                            .join(", "),
                        namespace: r.namespace,
                        name: r.name,
                    });
                };
                Ok(proto::DescribeTableResponse {
                    meta: Some((&table.meta).into()),
                    versions: table.versions.iter().map(Into::into).collect(),
                    revision: registry.revision(),
                })
            })
            .await?
            .map_err(MetasrvError::from)?;
        Ok(Response::new(described))
    }

    async fn list_tables(
        &self,
        request: Request<proto::ListTablesRequest>,
    ) -> Result<Response<proto::ListTablesResponse>, Status> {
        let namespace = request.into_inner().namespace;
        let response = self
            .read(move |registry| proto::ListTablesResponse {
                tables: registry
                    .tables_in(&namespace)
                    .map(|t| (&t.meta).into())
                    .collect(),
                revision: registry.revision(),
            })
            .await?;
        Ok(Response::new(response))
    }

    async fn commit(
        &self,
        request: Request<proto::CommitRequest>,
    ) -> Result<Response<proto::CommitResponse>, Status> {
        let r = request.into_inner();
        let digest = convert::digest(&r.digest)?;
        let operation = match (r.operation_id, digest) {
            (Some(id), Some(digest)) => Some((id, digest)),
            (None, None) => None,
            _ => {
                return Err(Status::invalid_argument(
                    "operation_id and a 32-byte digest must be given together",
                ));
            }
        };
        let manifest = r
            .manifest
            .ok_or_else(|| Status::invalid_argument("commit needs a manifest"))?;
        let reply = self
            .mutate(Mutation::Commit {
                table_id: r.table_id,
                base_version: r.base_version,
                manifest: manifest.into(),
                operation,
            })
            .await?;
        let Applied::Committed { version, replayed } = reply.applied else {
            return Err(Status::internal("commit reply was not a commit"));
        };
        Ok(Response::new(proto::CommitResponse {
            version,
            replayed,
            revision: reply.revision,
        }))
    }

    async fn finalize_manifest(
        &self,
        request: Request<proto::FinalizeManifestRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        let r = request.into_inner();
        let manifest = r
            .manifest
            .ok_or_else(|| Status::invalid_argument("finalize needs a manifest"))?;
        let reply = self
            .mutate(Mutation::FinalizeManifest {
                table_id: r.table_id,
                version: r.version,
                manifest: manifest.into(),
            })
            .await?;
        Ok(Response::new(mutation_response(reply)))
    }

    type WatchStream = WatchStream;

    async fn watch(
        &self,
        request: Request<proto::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let r = request.into_inner();
        // Subscribe before reading the log so nothing falls between the two.
        let mut live = self.events.subscribe();
        let store = self.store.clone();
        let (tx, rx) = mpsc::channel::<Result<proto::ChangeEvent, Status>>(256);
        tokio::spawn(async move {
            let mut sent = r.from_revision;
            loop {
                // Catch up from the durable log.
                loop {
                    let store = store.clone();
                    let batch =
                        match tokio::task::spawn_blocking(move || store.read_after(sent, 1024))
                            .await
                        {
                            Ok(Ok(batch)) => batch,
                            Ok(Err(e)) => {
                                let _ = tx.send(Err(Status::internal(e.to_string()))).await;
                                return;
                            }
                            Err(e) => {
                                let _ = tx.send(Err(Status::internal(e.to_string()))).await;
                                return;
                            }
                        };
                    if batch.is_empty() {
                        break;
                    }
                    for event in &batch {
                        if tx.send(Ok(event.into())).await.is_err() {
                            return;
                        }
                        sent = event.revision;
                    }
                }
                if !r.follow {
                    return;
                }
                // Follow live events until we lag behind, then catch up again.
                loop {
                    match live.recv().await {
                        Ok(event) if event.revision <= sent => {}
                        Ok(event) if event.revision == sent + 1 => {
                            if tx.send(Ok((&event).into())).await.is_err() {
                                return;
                            }
                            sent = event.revision;
                        }
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => break,
                        Err(broadcast::error::RecvError::Closed) => return,
                    }
                }
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }
}
