//! The Metasrv tokio shell: a driver task that feeds the core [`Node`] requests, store
//! answers and time and carries out its outputs against an [`EventStore`] (glue only: every
//! decision is the node's); and the tonic service that fronts it, whose `Watch` streams
//! are core [`Watch`] machines.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::Stream;
use lake_core::commit::{Applied, Mutation, Reply, RequestId};
use lake_core::election::ElectionConfig;
use lake_core::node::{CallId, Node, NodeConfig, NodeEvent, NodeInput, NodeOutput, NodeRequest};
use lake_core::tail::{Tail, TailConfig, TailInput, TailOutput};
use lake_core::watch::{Watch, WatchConfig, WatchInput, WatchOutput};
use lake_core::{ChangeEvent, CommitError, Registry, Retention, StoreAnswer, StoreError};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

use prost::Message as _;

use crate::MetasrvError;
use crate::checkpoint;
use crate::convert;
use crate::proto;
use crate::proto::metasrv_client::MetasrvClient as RpcClient;
use crate::proto::metasrv_server::{Metasrv as MetasrvRpc, MetasrvServer};
use crate::store::EventStore;

pub use lake_core::node::NodeState;

/// Events buffered per watcher before it must re-read from the store.
const WATCH_BUFFER: usize = 4096;

type ReadFn = Box<dyn FnOnce(Result<&Registry, CommitError>) + Send>;

enum Command {
    Mutate(Mutation, oneshot::Sender<Result<Reply, CommitError>>),
    Read(ReadFn),
    Shutdown(oneshot::Sender<()>),
}

/// This process's clock for the node, in milliseconds since the Unix epoch: the system
/// clock read once at the first call, advanced by the monotonic clock since. Lease timing
/// must not jump when NTP steps the system clock (a step back would let a deposed leader
/// believe it still leads); commit timestamps come from the same reading, so they follow
/// the system clock as it was at start plus NTP's slewing, never its steps.
fn now_ms() -> i64 {
    static START: std::sync::OnceLock<(Instant, i64)> = std::sync::OnceLock::new();
    let (at, wall_ms) = START.get_or_init(|| {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        (Instant::now(), wall)
    });
    wall_ms.saturating_add(i64::try_from(at.elapsed().as_millis()).unwrap_or(i64::MAX))
}

/// gRPC metadata key marking a call a follower forwarded to the leader (never forwarded
/// again).
const FORWARDED_HEADER: &str = "x-lake-forwarded";

/// The gRPC health service name whose status is this node's readiness.
pub const READINESS_SERVICE: &str = "lake.metasrv.v1.Metasrv";

/// A client to the leader at an address.
type LeaderRpc = (String, RpcClient<Channel>);

/// A running Metasrv: the coordinator's driver task plus handles to reach it.
#[derive(Clone)]
pub struct Metasrv {
    commands: mpsc::Sender<Command>,
    events: broadcast::Sender<ChangeEvent>,
    store: Arc<dyn EventStore>,
    requests: Arc<AtomicU64>,
    /// Bytes read from accepted connections.
    received: Arc<AtomicU64>,
    state: watch::Receiver<NodeState>,
    /// The leader's client, by address, for forwarding.
    leader_rpc: Arc<std::sync::Mutex<Option<LeaderRpc>>>,
    /// How this node calls the leader when it forwards: over TLS when set.
    peer_tls: Option<Arc<crate::ClientTls>>,
    /// Bounds the `Snapshot` loads running at once ([`SNAPSHOT_LOADS_MAX`]).
    snapshot_loads: Arc<tokio::sync::Semaphore>,
    /// The node's log tail ([`lake_core::tail`]): one reader of the log for every watch
    /// stream this node serves.
    tail: mpsc::UnboundedSender<TailInput>,
}

/// Ids of the watch streams this process serves, for the node's tail.
static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);

/// Tells the node's tail that a watch stream ended, however its task ends.
struct LeaveTail {
    tail: mpsc::UnboundedSender<TailInput>,
    stream: u64,
}

impl Drop for LeaveTail {
    fn drop(&mut self) {
        let _ = self.tail.send(TailInput::Left {
            stream: self.stream,
        });
    }
}

impl Metasrv {
    /// Starts a single embedded node ([`single_node_election`]) on `store`; see
    /// [`Self::start_node`].
    ///
    /// # Errors
    /// As [`Self::start_node`].
    pub fn start(store: Arc<dyn EventStore>) -> Result<Self, MetasrvError> {
        Self::start_node(store, single_node_election())
    }

    /// Starts the driver task of one Metasrv node on the current runtime: the core
    /// [`Node`] with [`NodeConfig::new`]'s settings, which runs the election over `store`'s
    /// lease and, once elected, loads the log and serves, with every append fenced by its
    /// epoch. Requests that arrive before this node serves wait up to 10 s for its
    /// election, and are refused with [`CommitError::NotLeader`] (naming the leader) when
    /// another node leads.
    ///
    /// # Errors
    /// [`MetasrvError::Config`] when the election settings are inconsistent.
    pub fn start_node(
        store: Arc<dyn EventStore>,
        election: ElectionConfig,
    ) -> Result<Self, MetasrvError> {
        Self::start_node_with(store, election, Retention::DEFAULT)
    }

    /// [`Self::start_node`] keeping each table's history for `retention`
    /// ([`lake_core::retention`]).
    ///
    /// # Errors
    /// [`MetasrvError::Config`] when the election settings or the windows are
    /// inconsistent.
    pub fn start_node_with(
        store: Arc<dyn EventStore>,
        election: ElectionConfig,
        retention: Retention,
    ) -> Result<Self, MetasrvError> {
        let (state_tx, state) = watch::channel(NodeState {
            node: election.node.clone(),
            ..NodeState::default()
        });
        let node = Node::new(NodeConfig {
            retention,
            ..NodeConfig::new(election, store.append_limits())
        })
        .map_err(MetasrvError::Config)?;
        let (commands, rx) = mpsc::channel(1024);
        let (events, _) = broadcast::channel(WATCH_BUFFER);
        let (tail_tx, tail_rx) = mpsc::unbounded_channel();
        let metasrv = Self {
            commands,
            events: events.clone(),
            store: store.clone(),
            requests: Arc::new(AtomicU64::new(0)),
            received: Arc::new(AtomicU64::new(0)),
            state,
            leader_rpc: Arc::new(std::sync::Mutex::new(None)),
            peer_tls: None,
            snapshot_loads: Arc::new(tokio::sync::Semaphore::new(SNAPSHOT_LOADS_MAX)),
            tail: tail_tx.clone(),
        };
        tokio::spawn(tail(store.clone(), events.clone(), tail_rx));
        tokio::spawn(drive(store, node, rx, events, state_tx, tail_tx));
        Ok(metasrv)
    }

    /// This handle, forwarding to the leader over TLS with `tls` (the CA other nodes'
    /// certificates chain to, and this node's own certificate for a leader that requires
    /// one). Set it before serving.
    #[must_use]
    pub fn with_peer_tls(mut self, tls: crate::ClientTls) -> Self {
        self.peer_tls = Some(Arc::new(tls));
        self
    }

    /// This node's view of the cluster (health and readiness).
    pub fn status(&self) -> NodeState {
        self.state.borrow().clone()
    }

    /// The leader's client when this node should forward `request` there: it does not
    /// serve, another node holds the lease, and the request was not forwarded already.
    fn forward<T>(&self, request: &Request<T>) -> Option<RpcClient<Channel>> {
        if request.metadata().contains_key(FORWARDED_HEADER) {
            return None;
        }
        let address = self.state.borrow().forward_to()?.to_string();
        let mut cached = self
            .leader_rpc
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, rpc)) = cached.as_ref()
            && *at == address
        {
            return Some(rpc.clone());
        }
        let scheme = if self.peer_tls.is_some() {
            "https"
        } else {
            "http"
        };
        let mut endpoint = Channel::from_shared(format!("{scheme}://{address}"))
            .ok()?
            .connect_timeout(Duration::from_secs(2));
        if let Some(tls) = &self.peer_tls {
            endpoint = tls
                .apply(endpoint)
                .inspect_err(|e| tracing::warn!(error = %e, "cannot reach the leader over TLS"))
                .ok()?;
        }
        let channel = endpoint.connect_lazy();
        let rpc = RpcClient::new(channel);
        *cached = Some((address, rpc.clone()));
        Some(rpc)
    }

    /// Stops the node: it steps down, releases its lease (so another node, or the next
    /// start, takes over at once) and refuses what was waiting. Idempotent.
    pub async fn shutdown(&self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Shutdown(done)).await.is_ok() {
            let _ = wait.await;
        }
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
            let _ = tx.send(registry.map(f));
        });
        self.commands
            .send(Command::Read(read))
            .await
            .map_err(|_| MetasrvError::ShuttingDown)?;
        Ok(rx.await.map_err(|_| MetasrvError::ShuttingDown)??)
    }

    /// gRPC requests served so far (each unary call and each opened watch stream counts
    /// one): how Query replicas' cache hit rate is observed.
    pub fn requests_served(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes read so far from connections this node accepted (see [`incoming`]).
    pub fn bytes_received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    /// The gRPC services of this node on `builder`: the standard gRPC health service
    /// (grpc.health.v1, as `grpc_health_probe` and Kubernetes gRPC probes use it: "" is
    /// SERVING while the process answers (liveness); "lake.metasrv.v1.Metasrv" is SERVING
    /// while this node can take calls, because it leads or knows the leader to forward to
    /// (readiness)) and the Metasrv API, counting requests.
    fn router(self, mut builder: tonic::transport::Server) -> tonic::transport::server::Router {
        let requests = self.requests.clone();
        let count = move |request: Request<()>| {
            requests.fetch_add(1, Ordering::Relaxed);
            Ok(request)
        };
        let (reporter, health) = tonic_health::server::health_reporter();
        let mut state = self.state.clone();
        tokio::spawn(async move {
            loop {
                let ready = {
                    let s = state.borrow_and_update();
                    s.serving.is_some() || s.forward_to().is_some()
                };
                let status = if ready {
                    tonic_health::ServingStatus::Serving
                } else {
                    tonic_health::ServingStatus::NotServing
                };
                reporter.set_service_status(READINESS_SERVICE, status).await;
                if state.changed().await.is_err() {
                    return;
                }
            }
        });
        builder
            .add_service(health)
            .add_service(MetasrvServer::with_interceptor(self, count))
    }

    /// Serves the gRPC API on `listener` until `shutdown` resolves; over TLS when `tls` is
    /// given (with client certificates required when it is mutual).
    ///
    /// # Errors
    /// [`MetasrvError::Rpc`] when the transport fails; [`MetasrvError::Tls`] for unusable
    /// TLS settings.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        tls: Option<&crate::ServerTls>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), MetasrvError> {
        let incoming = incoming(listener, self.received.clone());
        let mut builder = tonic::transport::Server::builder();
        if let Some(tls) = tls {
            builder = tls.apply(builder)?;
        }
        self.router(builder)
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await
            .map_err(|e| MetasrvError::Rpc {
                code: tonic::Code::Unavailable,
                reason: String::new(),
                message: e.to_string(),
            })
    }

    /// Serves the gRPC API to this process only ([`crate::transport::in_process`]): no port,
    /// so nothing outside the process can call it. Returns the client; the server stops
    /// when every clone of the client is gone.
    pub fn serve_in_process(self) -> crate::MetasrvClient {
        use futures::StreamExt as _;
        let (channel, incoming) = crate::transport::in_process();
        let received = self.received.clone();
        let incoming = incoming
            .map(move |accepted| accepted.map(|stream| Counted::new(stream, received.clone())));
        let router = self.router(tonic::transport::Server::builder());
        tokio::spawn(async move {
            if let Err(e) = router.serve_with_incoming(incoming).await {
                tracing::error!(error = %e, "in-process metasrv server stopped");
            }
        });
        crate::MetasrvClient::from_channel(channel)
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
            if let Err(e) = self.serve(listener, None, std::future::pending()).await {
                tracing::error!(error = %e, "metasrv server stopped");
            }
        });
        Ok(bound)
    }
}

/// The election settings of the only node over its store (the embedded `lake serve`, a
/// single `lake metasrv --store rocksdb://…`): node id `embedded`, a 2 s lease renewed
/// every 500 ms, a 200 ms clock bound, and [`ElectionConfig::exclusive`]: no other node
/// can contend, so this one never steps down because its timers ran late (a CPU-starved
/// process keeps serving instead of failing its in-flight writes), and a restart after a
/// crash takes the lease over at once. Never give it to two nodes over one store.
pub fn single_node_election() -> ElectionConfig {
    ElectionConfig {
        node: "embedded".into(),
        address: String::new(),
        lease_ms: 2_000,
        renew_interval_ms: 500,
        clock_bound_ms: 200,
        exclusive: true,
    }
}

/// A request the node has not answered yet.
enum Pending {
    Mutate(ReplyTx),
    Read(ReadFn),
}

type ReplyTx = oneshot::Sender<Result<Reply, CommitError>>;

/// The driver task: the core [`Node`] and the I/O it asks for. It decides nothing.
struct Driver {
    node: Node,
    store: Arc<dyn EventStore>,
    events: broadcast::Sender<ChangeEvent>,
    pending: HashMap<RequestId, Pending>,
    next_request: RequestId,
    answers: mpsc::UnboundedSender<(CallId, StoreAnswer)>,
    /// Callers of [`Metasrv::shutdown`], answered once the node stopped.
    stopping: Vec<oneshot::Sender<()>>,
    stopped: bool,
    /// The node's log tail, and whether it was last told that the node leads.
    tail: mpsc::UnboundedSender<TailInput>,
    leading: bool,
}

impl Driver {
    /// Feeds `input` to the node and carries out everything it asks for.
    fn handle(&mut self, input: NodeInput) {
        self.node.handle(input, now_ms());
        while let Some(output) = self.node.poll() {
            match output {
                NodeOutput::Call { call, op, .. } => {
                    let store = self.store.clone();
                    let answers = self.answers.clone();
                    tokio::task::spawn_blocking(move || {
                        let _ = answers.send((call, op.run(store.as_ref())));
                    });
                }
                NodeOutput::Reply { id, result } => {
                    if let Some(Pending::Mutate(tx)) = self.pending.remove(&id) {
                        let _ = tx.send(result);
                    }
                }
                NodeOutput::Readable { id, result } => {
                    if let Some(Pending::Read(f)) = self.pending.remove(&id) {
                        let not_serving = || CommitError::NotLeader {
                            leader: "this Metasrv node stopped serving".into(),
                        };
                        f(result.and_then(|()| self.node.registry().ok_or_else(not_serving)));
                    }
                }
                NodeOutput::Publish(published) => {
                    if let Some(last) = published.last() {
                        let revision = last.revision;
                        let _ = self.tail.send(TailInput::Published { revision });
                    }
                    for event in published {
                        // No receivers is fine: watchers re-read the store on subscribe.
                        let _ = self.events.send(event);
                    }
                }
                NodeOutput::Event(event) => log(&self.node, &event),
                NodeOutput::Stopped => self.stopped = true,
            }
        }
    }

    fn command(&mut self, command: Command) {
        let (request, pending) = match command {
            Command::Shutdown(done) => {
                self.stopping.push(done);
                return self.handle(NodeInput::Resign);
            }
            Command::Mutate(mutation, tx) => (NodeRequest::Mutate(mutation), Pending::Mutate(tx)),
            Command::Read(f) => (NodeRequest::Read, Pending::Read(f)),
        };
        let id = self.next_request;
        self.next_request += 1;
        self.pending.insert(id, pending);
        self.handle(NodeInput::Request { id, request });
    }
}

/// The log line for `event`.
fn log(node: &Node, event: &NodeEvent) {
    let id = &node.config().election.node;
    match event {
        NodeEvent::Elected { epoch } => {
            tracing::info!(epoch, node = %id, "metasrv elected leader; loading the store");
        }
        NodeEvent::Serving { epoch, revision } => {
            tracing::info!(epoch, revision, "metasrv serving");
        }
        NodeEvent::SteppedDown { epoch } => tracing::warn!(epoch, "metasrv stepped down"),
        NodeEvent::Unreplayable { error } => {
            tracing::error!(%error, "metasrv store does not replay; not serving");
        }
        NodeEvent::StoreFailed { what, error } => {
            tracing::warn!(%error, "metasrv store call failed: {what}");
        }
        NodeEvent::Released { released: true } => tracing::info!("metasrv released its lease"),
        NodeEvent::Released { released: false } => {
            tracing::warn!("metasrv could not release its lease");
        }
        NodeEvent::Checkpointed { revision, through } => {
            tracing::info!(
                revision,
                through,
                "metasrv wrote a checkpoint and truncated the log"
            );
        }
    }
}

async fn drive(
    store: Arc<dyn EventStore>,
    node: Node,
    mut commands: mpsc::Receiver<Command>,
    events: broadcast::Sender<ChangeEvent>,
    state: watch::Sender<NodeState>,
    tail: mpsc::UnboundedSender<TailInput>,
) {
    let (answers, mut answer_rx) = mpsc::unbounded_channel();
    let mut driver = Driver {
        node,
        store,
        events,
        pending: HashMap::new(),
        next_request: 1,
        answers,
        stopping: Vec::new(),
        stopped: false,
        tail,
        leading: false,
    };
    let mut closed = false;
    while !driver.stopped {
        let wait_ms = driver
            .node
            .next_deadline_ms()
            .saturating_sub(now_ms())
            .clamp(1, 500);
        tokio::select! {
            Some((call, answer)) = answer_rx.recv() => {
                driver.handle(NodeInput::Answer { call, answer });
            }
            command = commands.recv(), if !closed => match command {
                Some(command) => driver.command(command),
                None => {
                    // The handles are gone: resign and stop.
                    closed = true;
                    driver.handle(NodeInput::Resign);
                }
            },
            () = tokio::time::sleep(Duration::from_millis(wait_ms.unsigned_abs())) => {
                driver.handle(NodeInput::Tick);
            }
        }
        let now = driver.node.state(now_ms());
        if now.serving.is_some() != driver.leading {
            driver.leading = now.serving.is_some();
            let _ = driver.tail.send(TailInput::Leading(driver.leading));
        }
        state.send_if_modified(|seen| {
            let changed = *seen != now;
            *seen = now;
            changed
        });
    }
    for done in driver.stopping {
        let _ = done.send(());
    }
}

/// Up to `limit` events after revision `after` ([`EventStore::read_after`]), read on the
/// blocking pool (a store read is a RocksDB or DynamoDB round trip).
async fn read_log(
    store: &Arc<dyn EventStore>,
    after: u64,
    limit: usize,
) -> Result<Vec<ChangeEvent>, StoreError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || store.read_after(after, limit))
        .await
        .unwrap_or_else(|e| Err(StoreError::Io(e.to_string())))
}

/// Runs a node's log tail ([`Tail`]) until every handle of the node is gone: reads the log
/// while the node does not lead and a stream follows, and broadcasts what is new to the
/// node's watch streams through `events`.
async fn tail(
    store: Arc<dyn EventStore>,
    events: broadcast::Sender<ChangeEvent>,
    mut inputs: mpsc::UnboundedReceiver<TailInput>,
) {
    let mut tail = Tail::new(TailConfig::DEFAULT);
    loop {
        while let Some(output) = tail.poll() {
            match output {
                TailOutput::ReadLog { after, limit } => {
                    let read = read_log(&store, after, limit).await;
                    tail.handle(TailInput::Read(read), now_ms());
                }
                TailOutput::Broadcast(batch) => {
                    for event in batch {
                        let _ = events.send(event);
                    }
                }
            }
        }
        let wait_ms = tail
            .next_deadline_ms()
            .saturating_sub(now_ms())
            .clamp(1, 1_000);
        let input = tokio::select! {
            input = inputs.recv() => match input {
                Some(input) => input,
                None => return,
            },
            () = tokio::time::sleep(Duration::from_millis(wait_ms.unsigned_abs())) => TailInput::Tick,
        };
        tail.handle(input, now_ms());
    }
}

/// The connections `listener` accepts, each with `TCP_NODELAY` set, for a tonic server
/// (`serve_with_incoming*`). tonic applies its own `Server::tcp_nodelay` only to listeners
/// it binds itself; without it, Nagle's algorithm holds a reply's HEADERS, DATA and
/// trailers frames until the peer's delayed ACK (about 40 ms per call on Linux). Both
/// Metasrv and the Query replica's Flight SQL server accept through this.
///
/// Every byte read from these connections (HTTP/2 frames of requests, headers included)
/// is added to `received`: how the tests prove that FILE bytes never pass through a
/// server.
pub fn incoming(
    listener: tokio::net::TcpListener,
    received: Arc<AtomicU64>,
) -> impl Stream<Item = std::io::Result<Counted>> + Send + 'static {
    use futures::StreamExt as _;
    tonic::transport::server::TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .map(move |accepted| accepted.map(|stream| Counted::new(stream, received.clone())))
}

/// An accepted connection (TCP, or in-process) that counts the bytes read from it.
pub struct Counted<S = tokio::net::TcpStream> {
    stream: S,
    received: Arc<AtomicU64>,
}

impl<S> Counted<S> {
    /// `stream`, adding the bytes read from it to `received`.
    pub fn new(stream: S, received: Arc<AtomicU64>) -> Self {
        Self { stream, received }
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = &polled {
            let read = (buf.filled().len() - before) as u64;
            self.received.fetch_add(read, Ordering::Relaxed);
        }
        polled
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl<S: tonic::transport::server::Connected> tonic::transport::server::Connected for Counted<S> {
    type ConnectInfo = S::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
    }
}

/// `request` marked as forwarded, for the leader.
fn forwarded<T>(request: Request<T>) -> Request<T> {
    let mut forwarded = Request::new(request.into_inner());
    forwarded.metadata_mut().insert(
        FORWARDED_HEADER,
        tonic::metadata::MetadataValue::from_static("1"),
    );
    forwarded
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<proto::ChangeEvent, Status>> + Send>>;
type SnapshotStream = Pin<Box<dyn Stream<Item = Result<proto::SnapshotChunk, Status>> + Send>>;

/// Tables in one `ListTables` page unless the request asks for fewer: 100.
pub const LIST_TABLES_DEFAULT: usize = 100;
/// Most tables in one `ListTables` page: 1,000.
pub const LIST_TABLES_MAX: usize = 1_000;
/// Most encoded bytes of tables in one `ListTables` page (one table, whatever its size,
/// always fits: a schema is at most 1 MiB): 2 MiB, under gRPC's 4 MiB message limit.
pub const LIST_TABLES_BYTES_MAX: usize = 2 << 20;

/// `Snapshot` loads one node runs at once (each holds a registry and its encoding in
/// memory); more callers wait their turn.
pub const SNAPSHOT_LOADS_MAX: usize = 2;

/// How often a `Snapshot` call that is still loading sends a keepalive: 2 s.
pub const SNAPSHOT_KEEPALIVE: Duration = Duration::from_secs(2);

/// Bytes per `Snapshot` message: 1 MiB, well under gRPC's 4 MiB message limit.
pub const SNAPSHOT_CHUNK_BYTES: usize = 1 << 20;

fn mutation_response(reply: Reply) -> proto::MutationResponse {
    let table = match &reply.applied {
        Applied::TableCreated(meta) => Some(meta.into()),
        _ => None,
    };
    let privilege = match &reply.applied {
        Applied::GrantChanged(privilege) => privilege.map_or(0, lake_core::Privilege::code),
        _ => 0,
    };
    proto::MutationResponse {
        revision: reply.revision,
        table,
        privilege,
    }
}

#[tonic::async_trait]
impl MetasrvRpc for Metasrv {
    async fn create_namespace(
        &self,
        request: Request<proto::NamespaceRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        if let Some(mut leader) = self.forward(&request) {
            return leader.create_namespace(forwarded(request)).await;
        }
        let name = request.into_inner().name;
        let reply = self.mutate(Mutation::CreateNamespace { name }).await?;
        Ok(Response::new(mutation_response(reply)))
    }

    async fn drop_namespace(
        &self,
        request: Request<proto::NamespaceRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        if let Some(mut leader) = self.forward(&request) {
            return leader.drop_namespace(forwarded(request)).await;
        }
        let name = request.into_inner().name;
        let reply = self.mutate(Mutation::DropNamespace { name }).await?;
        Ok(Response::new(mutation_response(reply)))
    }

    async fn list_namespaces(
        &self,
        request: Request<proto::ListNamespacesRequest>,
    ) -> Result<Response<proto::ListNamespacesResponse>, Status> {
        if let Some(mut leader) = self.forward(&request) {
            return leader.list_namespaces(forwarded(request)).await;
        }
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
        if let Some(mut leader) = self.forward(&request) {
            return leader.create_table(forwarded(request)).await;
        }
        let r = request.into_inner();
        check_schema(&r.schema_ipc)?;
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
        if let Some(mut leader) = self.forward(&request) {
            return leader.drop_table(forwarded(request)).await;
        }
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
        if let Some(mut leader) = self.forward(&request) {
            return leader.describe_table(forwarded(request)).await;
        }
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
                // Bounded: the versions asked for and the latest, never the history.
                let operation = r
                    .operation_id
                    .as_ref()
                    .and_then(|id| Some((id, table.operations.get(id)?)));
                let by_operation = operation.map(|(_, op)| op.version);
                let mut wanted: Vec<u64> = [
                    r.version,
                    by_operation,
                    table.versions.last().map(|v| v.version),
                ]
                .into_iter()
                .flatten()
                .collect();
                wanted.sort_unstable();
                wanted.dedup();
                Ok(proto::DescribeTableResponse {
                    meta: Some((&table.meta).into()),
                    versions: wanted
                        .into_iter()
                        .filter_map(|v| table.version(v))
                        .map(Into::into)
                        .collect(),
                    revision: registry.revision(),
                    operation: operation.map(|(id, op)| proto::CheckpointOperation {
                        id: id.clone(),
                        digest: op.digest.to_vec(),
                        version: op.version,
                        committed_at_ms: op.committed_at_ms,
                    }),
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
        if let Some(mut leader) = self.forward(&request) {
            return leader.list_tables(forwarded(request)).await;
        }
        let r = request.into_inner();
        let limit = match r.limit {
            0 => LIST_TABLES_DEFAULT,
            n => usize::try_from(n).map_or(LIST_TABLES_MAX, |n| n.min(LIST_TABLES_MAX)),
        };
        let response = self
            .read(move |registry| {
                let mut tables: Vec<proto::TableMeta> = Vec::new();
                let mut bytes = 0;
                let mut more = false;
                for table in registry.tables_in_after(&r.namespace, &r.start_after) {
                    let meta: proto::TableMeta = (&table.meta).into();
                    let size = meta.encoded_len();
                    if tables.len() == limit
                        || (!tables.is_empty() && bytes + size > LIST_TABLES_BYTES_MAX)
                    {
                        more = true;
                        break;
                    }
                    bytes += size;
                    tables.push(meta);
                }
                let next_start_after = match tables.last() {
                    Some(last) if more => last.name.clone(),
                    _ => String::new(),
                };
                proto::ListTablesResponse {
                    tables,
                    revision: registry.revision(),
                    next_start_after,
                }
            })
            .await?;
        Ok(Response::new(response))
    }

    async fn commit(
        &self,
        request: Request<proto::CommitRequest>,
    ) -> Result<Response<proto::CommitResponse>, Status> {
        if let Some(mut leader) = self.forward(&request) {
            return leader.commit(forwarded(request)).await;
        }
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
        if let Some(mut leader) = self.forward(&request) {
            return leader.finalize_manifest(forwarded(request)).await;
        }
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

    async fn grant(
        &self,
        request: Request<proto::GrantRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        if let Some(mut leader) = self.forward(&request) {
            return leader.grant(forwarded(request)).await;
        }
        let r = request.into_inner();
        let privilege = convert::privilege(r.privilege)?.ok_or_else(|| {
            Status::invalid_argument("a grant names privilege 1 read, 2 write or 3 admin")
        })?;
        let reply = self
            .mutate(Mutation::Grant {
                principal: r.principal,
                scope: convert::grant_scope(&r.scope)?,
                privilege,
            })
            .await?;
        Ok(Response::new(mutation_response(reply)))
    }

    async fn revoke(
        &self,
        request: Request<proto::GrantRequest>,
    ) -> Result<Response<proto::MutationResponse>, Status> {
        if let Some(mut leader) = self.forward(&request) {
            return leader.revoke(forwarded(request)).await;
        }
        let r = request.into_inner();
        let reply = self
            .mutate(Mutation::Revoke {
                principal: r.principal,
                scope: convert::grant_scope(&r.scope)?,
                privilege: convert::privilege(r.privilege)?,
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
        let tail = self.tail.clone();
        let (tx, rx) = mpsc::channel::<Result<proto::ChangeEvent, Status>>(256);
        let stream = NEXT_STREAM.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let _leave = LeaveTail {
                tail: tail.clone(),
                stream,
            };
            let mut watch = Watch::new(WatchConfig::DEFAULT, r.from_revision, r.follow, now_ms());
            // Whether the node's tail was told that this stream follows (since it last
            // caught up with the log).
            let mut told = false;
            loop {
                while let Some(output) = watch.poll() {
                    let item = match output {
                        WatchOutput::ReadLog { after, limit } => {
                            let read = read_log(&store, after, limit).await;
                            watch.handle(WatchInput::Read(read), now_ms());
                            continue;
                        }
                        WatchOutput::Send(event) => Ok((&event).into()),
                        // A heartbeat: no kind, the last revision delivered.
                        WatchOutput::Heartbeat { revision } => Ok(proto::ChangeEvent {
                            revision,
                            kind: None,
                        }),
                        WatchOutput::Failed(message) => Err(Status::internal(message)),
                        WatchOutput::Truncated { through } => {
                            let mut status = Status::out_of_range(format!(
                                "the log before revision {} was removed after a checkpoint; load a snapshot (Snapshot) and watch from its revision",
                                through.saturating_add(1)
                            ));
                            status.metadata_mut().insert(
                                crate::error::REASON_HEADER,
                                tonic::metadata::MetadataValue::from_static(
                                    crate::error::LOG_TRUNCATED,
                                ),
                            );
                            Err(status)
                        }
                        WatchOutput::Done => return,
                    };
                    let end = item.is_err();
                    if tx.send(item).await.is_err() || end {
                        return;
                    }
                }
                if watch.following() != told {
                    told = watch.following();
                    if told {
                        let revision = watch.sent();
                        let _ = tail.send(TailInput::Following { stream, revision });
                    }
                }
                let wait_ms = watch
                    .next_deadline_ms()
                    .saturating_sub(now_ms())
                    .clamp(0, 1_000);
                let input = tokio::select! {
                    received = live.recv() => match received {
                        Ok(event) => WatchInput::Live(event),
                        Err(broadcast::error::RecvError::Lagged(_)) => WatchInput::Lagged,
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    () = tokio::time::sleep(Duration::from_millis(wait_ms.unsigned_abs())) => {
                        WatchInput::Tick
                    }
                };
                watch.handle(input, now_ms());
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    type SnapshotStream = SnapshotStream;

    async fn snapshot(
        &self,
        _request: Request<proto::SnapshotRequest>,
    ) -> Result<Response<Self::SnapshotStream>, Status> {
        // The stream opens at once and the load runs behind it, so a large registry is not
        // taken for an unanswered call; at most SNAPSHOT_LOADS_MAX loads run at once.
        let store = self.store.clone();
        let loads = self.snapshot_loads.clone();
        let (tx, rx) = mpsc::channel::<Result<proto::SnapshotChunk, Status>>(4);
        tokio::spawn(async move {
            let Ok(_permit) = loads.acquire_owned().await else {
                return;
            };
            let mut load = tokio::task::spawn_blocking(move || {
                store
                    .load()
                    .map(|registry| checkpoint::Encoded::new(&registry, SNAPSHOT_CHUNK_BYTES))
            });
            // A keepalive (no header, no bytes) every 2 s while the store loads: the
            // caller tells a slow load from a lost call by it.
            let loaded = loop {
                tokio::select! {
                    loaded = &mut load => break loaded,
                    () = tokio::time::sleep(SNAPSHOT_KEEPALIVE) => {
                        let keepalive = proto::SnapshotChunk { header: None, chunk: Vec::new() };
                        if tx.send(Ok(keepalive)).await.is_err() {
                            return;
                        }
                    }
                }
            };
            let encoded = match loaded {
                Ok(Ok(encoded)) => encoded,
                Ok(Err(e)) => {
                    let status = Status::unavailable(format!("metasrv cannot load its store: {e}"));
                    let _ = tx.send(Err(status)).await;
                    return;
                }
                Err(e) => {
                    let _ = tx.send(Err(Status::internal(e.to_string()))).await;
                    return;
                }
            };
            let first = proto::SnapshotChunk {
                header: Some(encoded.header.clone()),
                chunk: Vec::new(),
            };
            if tx.send(Ok(first)).await.is_err() {
                return;
            }
            for chunk in encoded.chunks() {
                let message = proto::SnapshotChunk {
                    header: None,
                    chunk: chunk.to_vec(),
                };
                if tx.send(Ok(message)).await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn node_status(
        &self,
        _request: Request<proto::NodeStatusRequest>,
    ) -> Result<Response<proto::NodeStatusResponse>, Status> {
        let state = self.status();
        let leader = state.leader.filter(|l| !l.is_released());
        Ok(Response::new(proto::NodeStatusResponse {
            node: state.node,
            serving: state.serving.is_some(),
            epoch: state.serving.unwrap_or(0),
            leader_node: leader
                .as_ref()
                .map(|l| l.holder.clone())
                .unwrap_or_default(),
            leader_address: leader.map(|l| l.address).unwrap_or_default(),
            revision: state.revision,
            requests_served: self.requests_served(),
        }))
    }
}

/// Checks that a table's schema is what every reader will decode: an encapsulated Arrow
/// IPC schema message ([`arrow_ipc::convert::try_schema_from_ipc_buffer`]) with at least
/// one column, at most [`lake_core::registry::SCHEMA_BYTES_MAX`] bytes. Stored unchecked,
/// junk would fail every later listing of every client. (The panic hook still logs a
/// schema that makes arrow-ipc panic; the caller gets `INVALID_ARGUMENT`.)
///
/// # Errors
/// `INVALID_ARGUMENT` saying what was wrong.
fn check_schema(schema_ipc: &[u8]) -> Result<(), Status> {
    if schema_ipc.len() > lake_core::registry::SCHEMA_BYTES_MAX {
        return Err(Status::invalid_argument(format!(
            "table schema of {} bytes; at most {} bytes are accepted",
            schema_ipc.len(),
            lake_core::registry::SCHEMA_BYTES_MAX
        )));
    }
    // arrow-ipc verifies the flatbuffer but panics on some field types it cannot map
    // (an unknown bit width, say): a refusal too, never a crashed handler.
    let decoded = std::panic::catch_unwind(|| {
        arrow_ipc::convert::try_schema_from_ipc_buffer(schema_ipc).map_err(|e| e.to_string())
    })
    .unwrap_or_else(|_| Err("a field type Arrow cannot decode".to_string()));
    let schema = decoded.map_err(|e| {
        Status::invalid_argument(format!(
            "table schema is not an Arrow IPC schema message ({e})"
        ))
    })?;
    if schema.fields().is_empty() {
        return Err(Status::invalid_argument(
            "a table needs at least one column",
        ));
    }
    Ok(())
}
