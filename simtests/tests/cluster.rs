//! Simulation of a Lake cluster: Metasrv nodes, each the shipped [`lake_core::node::Node`]
//! machine (the one the tokio shell drives), elect a leader over the simulations' store
//! ([`SimStore`], which keeps the same contract as the RocksDB and DynamoDB stores), the
//! leader commits with every store write fenced by its epoch, followers name the leader and
//! requests are forwarded once, writers append with operation ids and retries, and Query
//! replicas, each the shipped [`Follower`], keep watch streams open at random nodes (each
//! served by the shipped [`Watch`] machine: catch-up from the store, live events from the
//! leader, polls on followers, heartbeats) and serve reads with read-your-writes tokens.
//! This file only carries outputs over a simulated network and store; every decision is
//! the machines'. Two shapes run: [`CLUSTER`] (three nodes) and
//! [`EMBEDDED`] (one exclusive node, as `lake serve` runs it).
//!
//! One seed draws every fault: message loss, duplication, delay and reordering; symmetric
//! and one-way partitions (between nodes, and between a node and the store); node crashes
//! that lose all in-memory state; graceful restarts that release the lease; pauses (a stopped process whose clock jumps when it
//! resumes); clock offset and drift per node; store throttling, slow requests and
//! responses lost after the write applied. A safety phase runs with faults, then a liveness
//! phase turns them off and everything must converge within [`LIVENESS_BOUND`].
//!
//! Checkers: every acknowledged commit is in the gap-free history exactly once; no version
//! is assigned twice; each epoch is won by one node; at no instant do two nodes believe they
//! lead; every store write applied carried the fence of the lease holder at that moment; a
//! replica never serves below a client's token or moves backwards; a version read at a
//! token is exactly the commit that was acknowledged for it; replays return the original
//! version; caches converge to the store after heal; a replica's collection of dropped
//! tables' files ([`Registry::is_dropped_dir`], the shipped decision), run on its cache
//! while tables are created and dropped, never takes a live table's directory for a
//! dropped one, and finds every dropped one once caught up.
//!
//! Run: `RUSTFLAGS="--cfg madsim" CARGO_TARGET_DIR=target/madsim cargo test -p lake-simtests
//! --test cluster` (`MADSIM_TEST_NUM=n` for more seeds; a failure prints the command that
//! replays it).
#![cfg(madsim)]

/// Counts allocations, for a fleet replica's cache size ([`registry_bytes`]).
#[global_allocator]
static GLOBAL: &stats_alloc::StatsAlloc<std::alloc::System> = &stats_alloc::INSTRUMENTED_SYSTEM;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::{FutureExt, StreamExt};
use lake_core::EventStore;
use lake_core::commit::{Applied, Mutation, Reply, RequestId};
use lake_core::election::{Election, ElectionConfig};
use lake_core::node::{
    CallId, Node, NodeConfig, NodeEvent, NodeInput, NodeOutput, NodeRequest, StoreAnswer, StoreCall,
};
use lake_core::registry::{location_dir, location_table_id};
use lake_core::tail::{Tail, TailConfig, TailInput, TailOutput};
use lake_core::watch::{Watch, WatchConfig, WatchInput, WatchOutput};
use lake_core::{
    ChangeEvent, CommitError, ExpiryWatch, Follower, FollowerConfig, FollowerInput, FollowerOutput,
    ManifestRef, Registry, Retention, StoreError,
};
use lake_simtests::checkers::Checkers;
use lake_simtests::checkers::versions::{Cleanup, Pin};
use lake_simtests::store::{Faults as StoreFaults, Faulty, SimStore};
use madsim::rand::{Rng, thread_rng};
use madsim::time::{Instant, sleep};

/// Most Metasrv nodes a run has (endpoints `0..NODES_MAX`).
const NODES_MAX: usize = 3;
const WRITERS: usize = 4;
const OPS_PER_WRITER: usize = 10;
/// The leader checkpoints every 8 events and keeps 4 before the checkpoint.
const CHECKPOINT_EVERY: u64 = 8;
const LOG_KEEP: u64 = 4;
/// Each table keeps its last 3 versions, none older than a minute; operation ids stay
/// (the checkers find every acknowledged operation through them). Commits expire history
/// in their own writes; the leader also sweeps every 2 s. (Sweeps that write often would
/// leave a deposed leader's stale write no moment to land in, and the planted fencing bug
/// would go unseen.)
const RETENTION: Retention = Retention {
    version_max_age_ms: 60_000,
    versions_max: 3,
    ..Retention::FOREVER
};
const SWEEP_EVERY_MS: i64 = 2_000;
const LEASE_MS: i64 = 2_000;
const RENEW_MS: i64 = 400;
const CLOCK_BOUND_MS: i64 = 200;
/// Largest clock drift drawn, in parts per thousand: 5% of a 2 s lease is 100 ms, inside
/// the 200 ms bound the nodes are configured with.
const DRIFT_MAX_PER_MILLE: i64 = 50;
/// Simulated time allowed for the liveness phase to converge.
const LIVENESS_BOUND: Duration = Duration::from_secs(180);
/// The store's endpoint in the link table.
const STORE: usize = usize::MAX;
/// The endpoint that creates the run's namespace and tables.
const SETUP: usize = usize::MAX - 1;
/// How often a replica runs the collection of dropped tables' files, and the cleanup of
/// expired versions' files, on its registry (and a reader pins a version).
const GARBAGE_PROBE_EVERY: Duration = Duration::from_millis(250);
/// How long after a replica first sees a version expired its files stay (the shell's
/// `--cleanup-grace-secs`), on the replica's clock.
const CLEANUP_GRACE_MS: i64 = 1_500;
/// How long a pinned reader runs, in true time: under the grace even on a replica clock
/// 9.5% fast (the drift scenario's).
const READER_RUNS_MS: u64 = CLEANUP_GRACE_MS as u64 * 9 / 10;
/// Writer `w`'s endpoint (below [`SETUP`], above any replica's).
const fn writer_id(w: usize) -> usize {
    usize::MAX - 2 - w
}
/// Replica `r`'s endpoint in the link table.
const fn replica_id(r: usize) -> usize {
    NODES_MAX + r
}

/// The deployment a run simulates.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Metasrv nodes (at most [`NODES_MAX`]).
    nodes: usize,
    /// [`ElectionConfig::exclusive`]: the embedded `lake serve`, one node that never
    /// yields its lease to a competitor.
    exclusive: bool,
    /// Query replicas.
    replicas: usize,
    /// Tables created before the writers start.
    tables: usize,
}

/// Three nodes electing a leader (`lake metasrv` over DynamoDB).
const CLUSTER: Shape = Shape {
    nodes: 3,
    exclusive: false,
    replicas: 3,
    tables: 2,
};

/// One exclusive node (`lake serve`, RocksDB): crashes, pauses and store faults, no
/// competitor.
const EMBEDDED: Shape = Shape {
    nodes: 1,
    exclusive: true,
    replicas: 3,
    tables: 2,
};

/// Bugs a test can plant to prove the checkers catch them.
#[derive(Clone, Copy, Debug, Default)]
struct Bugs {
    /// The store applies a leader's write without checking its fence.
    skip_fence: bool,
    /// The node's driver publishes an append's events when it sends them, before they are
    /// durable.
    publish_early: bool,
    /// A replica serves a read from its cache whatever the reader's token.
    serve_below_token: bool,
    /// The store now and then acknowledges an append it did not apply (so the version is
    /// handed out again).
    lose_acknowledged_appends: bool,
    /// A replica takes every directory whose table id its registry does not hold for a
    /// dropped table's, ignoring the registry's next id (a table it has not heard of yet).
    gc_ignores_next_id: bool,
    /// A replica's cleanup removes every version before the oldest retained one at once,
    /// ignoring readers that pinned one before it expired.
    gc_ignores_pins: bool,
}

/// A named scenario: one situation forced on purpose, with the seed's random faults off
/// (except where the scenario says), so the test's name says what it proves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Script {
    /// The swarm: every fault drawn from the seed.
    #[default]
    Random,
    /// The leader stops (SIGSTOP) for three lease periods right after sending an append.
    LeaderPausedWithWriteInFlight,
    /// The leader's first append applies, its answer is lost, and the leader crashes.
    AnswerLostAfterApplyThenFailover,
    /// Every live event to replica 0's streams overflows its watch buffer (it lags).
    ReplicaLaggingBeyondWatchBuffer,
    /// The leader cannot reach the store (the store still reaches it) for three leases.
    OneWayPartitionLeaderToStore,
    /// Node clocks drift by 9.5% in opposite directions (a 2 s lease with a 200 ms bound
    /// tolerates just under 10%), with the seed's random faults on.
    ClockDriftAtTheBound,
    /// Each of the first two nodes elected crashes while it reads its log (before serving).
    RestartDuringReconcile,
    /// Replica 0 is cut off from every node until the leader has checkpointed and
    /// truncated the log past what the replica last saw: its stream comes back behind the
    /// log's start and it resyncs from a snapshot.
    ReplicaAwayPastTruncation,
    /// Replica 0 always watches a node that does not lead: the commits reach it through
    /// that node's log tail (counted as they are broadcast to it).
    ReplicaWatchesAFollower,
}

/// Fault rates of one run, all drawn from the seed.
#[derive(Clone, Copy, Debug, Default)]
struct Faults {
    message_loss: f64,
    /// Chance that a live event overflows a watch stream's buffer (the stream lags).
    lag: f64,
    message_duplicate: f64,
    message_delay_ms: u64,
    store_throttle: f64,
    store_lose_response: f64,
    store_slow: f64,
    /// Per node loop turn (about every 10 ms).
    crash: f64,
    /// A graceful restart: the node resigns (releasing its lease) and restarts.
    restart: f64,
    pause: f64,
    /// Per nemesis turn (every 0.2 to 1.5 s).
    partition: f64,
}

impl Faults {
    fn draw() -> Self {
        let mut rng = thread_rng();
        let message_loss = rng.gen_range(0.0..0.2);
        Self {
            message_loss,
            lag: message_loss,
            message_duplicate: rng.gen_range(0.0..0.1),
            message_delay_ms: rng.gen_range(1..100),
            store_throttle: rng.gen_range(0.0..0.1),
            store_lose_response: rng.gen_range(0.0..0.1),
            store_slow: rng.gen_range(0.0..0.1),
            crash: rng.gen_range(0.0..0.002),
            restart: rng.gen_range(0.0..0.001),
            pause: rng.gen_range(0.0..0.002),
            partition: rng.gen_range(0.0..0.5),
        }
    }
}

/// How a Metasrv node checkpoints, truncates and expires history in a run.
#[derive(Clone, Copy, Debug)]
struct Tuning {
    checkpoint_every: u64,
    log_keep: u64,
    checkpoint_deadline_ms: i64,
    retention: Retention,
    sweep_every_ms: i64,
}

/// The swarm's tuning: checkpoints and truncation at the simulation's scale (Lake's
/// defaults: every 10,000 events, keeping 10,000; a run here commits about 40), and
/// checkpoints of a few events that take as long as any store call.
const SWARM_TUNING: Tuning = Tuning {
    checkpoint_every: CHECKPOINT_EVERY,
    log_keep: LOG_KEEP,
    checkpoint_deadline_ms: NodeConfig::STORE_DEADLINE_MS,
    retention: RETENTION,
    sweep_every_ms: SWEEP_EVERY_MS,
};

/// Which node a replica opens its watch stream at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Watching {
    /// A node drawn from the seed for each stream (the swarm).
    Random,
    /// The node that leads (the fan-out all lands on the leader).
    Leader,
    /// Replica `r` starts at node `r mod nodes` and moves on to the next node with each
    /// stream it opens again, which it does only after a stream failed (as `MetasrvClient`
    /// spreads watch streams: a start drawn per client, the next node when an open fails or
    /// a stream ends in an error).
    Spread,
}

/// What the nodes sent and the replicas asked, counted for the fleet's figures.
#[derive(Clone, Debug, Default)]
struct Metrics {
    /// Per node: events its watch streams sent to replicas, and their bytes (each
    /// event's [`ChangeEvent::size_bound`]).
    events_sent: Vec<u64>,
    event_bytes_sent: Vec<u64>,
    /// Per node: heartbeats its watch streams sent.
    heartbeats_sent: Vec<u64>,
    /// Events and heartbeats sent by whichever node led at the moment it sent them.
    leader_items_sent: u64,
    /// Per node: log reads it made (watch catch-ups and its log tail).
    log_reads: Vec<u64>,
    /// Watch streams opened and snapshots fetched by replicas.
    streams_opened: u64,
    snapshots_fetched: u64,
    /// Reads at replicas; of them warm ones (the cache already at the read's token), and the
    /// Metasrv calls (stream opens, snapshot fetches) a warm read set off.
    queries: u64,
    warm_queries: u64,
    calls_for_warm_queries: u64,
}

impl Metrics {
    fn sized(nodes: usize) -> Self {
        Self {
            events_sent: vec![0; nodes],
            event_bytes_sent: vec![0; nodes],
            heartbeats_sent: vec![0; nodes],
            log_reads: vec![0; nodes],
            ..Self::default()
        }
    }
}

/// A replica cut off from every node for a while: when it came back, at which store
/// revision, and how long (simulated) its cache took to reach that revision.
#[derive(Clone, Copy, Debug)]
struct Away {
    replica: usize,
    back: Option<(Instant, u64)>,
    caught_up_ms: Option<u64>,
}

type ReplyTx = oneshot::Sender<Result<Reply, CommitError>>;

/// A request travelling to a Metasrv node.
struct Request {
    mutation: Mutation,
    reply: ReplyTx,
    forwarded: bool,
}

/// A read at a Query replica: the registry at or above `min_revision`.
struct Read {
    min_revision: u64,
    reply: oneshot::Sender<Registry>,
}

/// The simulated world: the store, the network, the clocks and what checkers need.
struct World {
    shape: Shape,
    bugs: Bugs,
    script: Script,
    tuning: Tuning,
    watching: Watching,
    metrics: Metrics,
    away: Option<Away>,
    /// How many times the script's situation was forced (a scenario that never happened
    /// proves nothing).
    fired: u32,
    /// Per node: stop it for this long at its next turn (a scripted SIGSTOP).
    pause_next: Vec<Option<Duration>>,
    /// Per node: crash it at its next turn.
    crash_next: Vec<bool>,
    faults: Faults,
    started: Instant,
    /// Per endpoint (nodes, then replicas): clock offset in ms and drift per mille.
    clocks: Vec<(i64, i64)>,
    /// The store: the same contract as Metasrv's RocksDB and DynamoDB stores, with the
    /// seed's faults injected per call.
    store: Faulty<SimStore>,
    // The network.
    blocked: BTreeSet<(usize, usize)>,
    inboxes: Vec<Option<mpsc::UnboundedSender<Request>>>,
    /// Per replica: what reaches it (stream items, fetched snapshots).
    replica_inboxes: Vec<mpsc::UnboundedSender<ToReplica>>,
    /// Per replica: its incarnation (a restart starts the next one).
    replica_incarnations: Vec<u64>,
    /// Per node: the live-event feeds of the watch streams it serves (dropped on a crash).
    subscribers: Vec<Vec<(usize, mpsc::UnboundedSender<WatchInput>)>>,
    /// Per node: the inputs of its log tail (dropped on a crash).
    tails: Vec<Option<mpsc::UnboundedSender<TailInput>>>,
    reads: Vec<mpsc::UnboundedSender<Read>>,
    // Checkers.
    elections: Vec<Option<Election>>,
    checks: Checkers,
    /// The tables' dataset directories (names under `tables/`) that exist: each table's
    /// once its creation is acknowledged.
    dirs: Vec<String>,
    /// The directories of the tables whose drop was acknowledged.
    dropped_dirs: BTreeSet<String>,
    /// Directories the store's registry showed dropped when a replica's collection took
    /// them: checked once (a table id is never reused, so a dropped table stays dropped),
    /// which spares a replay of the log at every probe.
    confirmed_dropped: BTreeSet<String>,
    /// Whether replicas run the collection of dropped tables' files and the cleanup of
    /// expired versions (off in the fleet runs, which drop no table and whose 60 replicas
    /// would spend most of the run on it).
    probe_garbage: bool,
    /// Readers that pinned a version Metasrv retained, in the last [`READER_RUNS_MS`].
    pins: Vec<Pin>,
    replica_final: Vec<Option<Registry>>,
    reads_served: u64,
    trace: std::collections::hash_map::DefaultHasher,
}

type Shared = Rc<RefCell<World>>;

impl World {
    fn now_ms(&self, endpoint: usize) -> i64 {
        let (offset, drift) = self.clocks[endpoint];
        let elapsed = i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        1_700_000_000_000 + offset + elapsed + elapsed * drift / 1000
    }

    fn registry(&self) -> Registry {
        self.store.load().expect("the durable log replays")
    }

    /// The store's revision (the length of the log).
    fn revision(&self) -> u64 {
        self.store.revision().expect("the simulated store reads")
    }

    /// Node `node`'s watch stream sends `event` (`None`: a heartbeat) to a replica.
    fn sent(&mut self, node: usize, event: Option<&ChangeEvent>) {
        let now = self.now_ms(node);
        let m = &mut self.metrics;
        match event {
            Some(event) => {
                m.events_sent[node] += 1;
                m.event_bytes_sent[node] += event.size_bound() as u64;
            }
            None => m.heartbeats_sent[node] += 1,
        }
        if self.elections[node]
            .as_ref()
            .is_some_and(|e| e.leading(now).is_some())
        {
            m.leader_items_sent += 1;
        }
    }

    fn record(&mut self, what: impl Hash) {
        what.hash(&mut self.trace);
    }

    /// Whether a message from `from` to `to` gets through (not blocked, not lost).
    fn link_up(&self, from: usize, to: usize) -> bool {
        !self.blocked.contains(&(from, to)) && !chance(self.faults.message_loss)
    }
}

fn chance(p: f64) -> bool {
    thread_rng().gen_bool(p.clamp(0.0, 1.0))
}

async fn delay(world: &Shared) {
    let max = world.borrow().faults.message_delay_ms;
    sleep(Duration::from_millis(thread_rng().gen_range(0..=max))).await;
}

// ---- the store -------------------------------------------------------------------------

/// One store call from `node`, the way the shell makes it ([`StoreCall::run`]) but over
/// the simulated network: `None` when the request or its answer was lost (the node's own
/// deadline then decides). Writes are conditional and transactional as with DynamoDB's
/// `TransactWriteItems`: the lease check and the log append apply together or not at all.
async fn store_call(world: Shared, node: usize, op: StoreCall) -> Option<StoreAnswer> {
    if !world.borrow().link_up(node, STORE) {
        return None;
    }
    delay(&world).await;
    if chance(world.borrow().faults.store_slow) {
        // A request stuck in a queue somewhere: it applies long after it was sent.
        sleep(Duration::from_millis(
            thread_rng().gen_range(0..2 * LEASE_MS as u64),
        ))
        .await;
    }
    let answer = {
        let mut w = world.borrow_mut();
        let throttled = chance(w.faults.store_throttle);
        w.store.set(StoreFaults {
            throttle_writes: u32::from(throttled),
            ..StoreFaults::default()
        });
        // What the fencing checker needs: the lease in force when the append applies.
        let fenced = match &op {
            StoreCall::Append {
                fence,
                base_revision,
                events,
            } => Some((
                fence.clone(),
                *base_revision,
                events.len(),
                w.store.read_lease().expect("the simulated store reads"),
            )),
            _ => None,
        };
        if let StoreCall::ReadLog { .. } = &op {
            w.metrics.log_reads[node] += 1;
        }
        let lease_written = match &op {
            StoreCall::WriteLease { lease, .. } => Some(lease.clone()),
            _ => None,
        };
        if w.script == Script::AnswerLostAfterApplyThenFailover
            && w.fired == 0
            && matches!(op, StoreCall::Append { .. })
        {
            let answer = op.run(&w.store);
            if let StoreAnswer::Written(Ok(())) = answer {
                w.fired += 1;
                w.crash_next[node] = true;
                w.store.set(StoreFaults::default());
                return None;
            }
            w.store.set(StoreFaults::default());
            return Some(answer);
        }
        if w.bugs.lose_acknowledged_appends
            && matches!(op, StoreCall::Append { .. })
            && chance(0.05)
        {
            // The planted bug: acknowledged, never applied.
            w.store.set(StoreFaults::default());
            return Some(StoreAnswer::Written(Ok(())));
        }
        let answer = op.run(&w.store);
        if let StoreAnswer::Written(result) = &answer {
            match result {
                Ok(()) => {
                    if let Some(lease) = lease_written {
                        w.record(("lease", &lease));
                    }
                    if let Some((fence, base_revision, count, lease)) = fenced {
                        w.checks.fencing.applied(&fence, lease.as_ref());
                        w.record(("append", fence.epoch, base_revision, count));
                    }
                }
                Err(e) => assert!(e.not_written(), "the simulated store failed: {e}"),
            }
        }
        w.store.set(StoreFaults::default());
        answer
    };
    let lost =
        chance(world.borrow().faults.store_lose_response) || !world.borrow().link_up(STORE, node);
    if lost {
        return None;
    }
    delay(&world).await;
    Some(answer)
}

/// A node's broadcast of durable `events` to the watch streams it serves (what the shell's
/// broadcast channel does); a subscriber that fell behind its buffer hears that it lagged.
fn broadcast(w: &mut World, node: usize, events: &[ChangeEvent]) {
    let lag = w.faults.lag;
    let lag_replica_0 = w.script == Script::ReplicaLaggingBeyondWatchBuffer;
    let mut lagged = 0;
    for event in events {
        w.subscribers[node].retain(|(replica, live)| {
            let forced = lag_replica_0 && *replica == 0;
            lagged += u32::from(forced);
            let input = if forced || chance(lag) {
                WatchInput::Lagged
            } else {
                WatchInput::Live(event.clone())
            };
            live.unbounded_send(input).is_ok()
        });
    }
    w.fired += lagged;
}

/// Node `node`'s log tail (the shipped [`Tail`], as the shell runs it): reads the log for
/// all the node's streams while the node does not lead. Ends with the node's incarnation.
async fn tail(world: Shared, node: usize, mut inputs: mpsc::UnboundedReceiver<TailInput>) {
    let now = |w: &Shared| w.borrow().now_ms(node);
    let mut tail = Tail::new(TailConfig::DEFAULT);
    loop {
        // A crashed incarnation's tail ends (its streams may still hold its sender).
        if !world.borrow().tails[node]
            .as_ref()
            .is_some_and(|tx| tx.is_connected_to(&inputs))
        {
            return;
        }
        while let Some(output) = tail.poll() {
            match output {
                TailOutput::ReadLog { after, limit } => {
                    let read = StoreCall::ReadLog { after, limit };
                    let result = match store_call(world.clone(), node, read).await {
                        Some(StoreAnswer::Log(result)) => result,
                        _ => Err(StoreError::Io("the read had no answer".into())),
                    };
                    tail.handle(TailInput::Read(result), now(&world));
                }
                TailOutput::Broadcast(events) => {
                    let mut w = world.borrow_mut();
                    // A crashed incarnation's tail broadcasts nothing.
                    if w.tails[node]
                        .as_ref()
                        .is_some_and(|tx| tx.is_connected_to(&inputs))
                    {
                        if w.script == Script::ReplicaWatchesAFollower
                            && w.subscribers[node].iter().any(|(replica, _)| *replica == 0)
                        {
                            w.fired += 1;
                        }
                        broadcast(&mut w, node, &events);
                    }
                }
            }
        }
        let wait = tail
            .next_deadline_ms()
            .saturating_sub(now(&world))
            .clamp(1, 1_000);
        futures::select_biased! {
            input = inputs.next() => match input {
                Some(input) => tail.handle(input, now(&world)),
                None => return,
            },
            _ = sleep(Duration::from_millis(wait.unsigned_abs())).fuse() => {
                tail.handle(TailInput::Tick, now(&world));
            }
        }
    }
}

// ---- a Metasrv node: the shipped machine over the simulated network and store ---------

/// The simulation's driver of one [`Node`]: what the tokio shell does with each output,
/// over the simulated store and network. It decides nothing; the node does.
struct SimNode {
    world: Shared,
    id: usize,
    node: Node,
    pending: BTreeMap<RequestId, ReplyTx>,
    next_request: RequestId,
    answers: mpsc::UnboundedSender<(CallId, StoreAnswer)>,
    /// Set once the node was told to resign (a graceful restart).
    resigning: bool,
    /// The node's log tail, and whether it was last told that the node leads.
    tail: mpsc::UnboundedSender<TailInput>,
    leading: bool,
}

impl SimNode {
    fn now(&self) -> i64 {
        self.world.borrow().now_ms(self.id)
    }

    fn handle(&mut self, input: NodeInput) {
        let now = self.now();
        self.node.handle(input, now);
        let leading = self.node.state(now).serving.is_some();
        if leading != self.leading {
            self.leading = leading;
            let _ = self.tail.unbounded_send(TailInput::Leading(leading));
        }
        while let Some(output) = self.node.poll() {
            match output {
                NodeOutput::Call { call, op, .. } => {
                    if matches!(op, StoreCall::Append { .. }) {
                        let mut w = self.world.borrow_mut();
                        if w.script == Script::LeaderPausedWithWriteInFlight && w.fired == 0 {
                            w.fired += 1;
                            w.pause_next[self.id] =
                                Some(Duration::from_millis(3 * LEASE_MS as u64));
                        }
                    }
                    if let StoreCall::Append { events, .. } = &op
                        && self.world.borrow().bugs.publish_early
                    {
                        let mut w = self.world.borrow_mut();
                        for event in events {
                            w.subscribers[self.id].retain(|(_, live)| {
                                live.unbounded_send(WatchInput::Live(event.clone())).is_ok()
                            });
                        }
                    }
                    let world = self.world.clone();
                    let answers = self.answers.clone();
                    let node = self.id;
                    madsim::task::spawn_local(async move {
                        if let Some(answer) = store_call(world, node, op).await {
                            let _ = answers.unbounded_send((call, answer));
                        }
                    });
                }
                NodeOutput::Reply { id, result } => {
                    if let Some(tx) = self.pending.remove(&id) {
                        let _ = tx.send(result);
                    }
                }
                // Replicas read from their caches; nothing here asks a node to read.
                NodeOutput::Readable { .. } | NodeOutput::Stopped => {}
                NodeOutput::Publish(events) => {
                    if let Some(last) = events.last() {
                        let _ = self.tail.unbounded_send(TailInput::Published {
                            revision: last.revision,
                        });
                    }
                    broadcast(&mut self.world.borrow_mut(), self.id, &events);
                }
                NodeOutput::Event(NodeEvent::Elected { epoch }) => {
                    let mut w = self.world.borrow_mut();
                    w.record(("elected", epoch, self.id));
                    w.checks.leadership.elected(epoch, self.id);
                    if w.script == Script::ClockDriftAtTheBound && epoch > 1 {
                        // A takeover between drifting clocks.
                        w.fired += 1;
                    }
                    if w.script == Script::RestartDuringReconcile && w.fired < 2 {
                        w.fired += 1;
                        w.crash_next[self.id] = true;
                    }
                }
                NodeOutput::Event(NodeEvent::SteppedDown { epoch })
                    if self.node.config().election.exclusive && !self.resigning =>
                {
                    let mut w = self.world.borrow_mut();
                    w.checks.leadership.exclusive_stepped_down(self.id, epoch);
                }
                NodeOutput::Event(_) => {}
            }
        }
        self.world.borrow_mut().elections[self.id] = Some(self.node.election().clone());
    }

    /// A request arrives: forwarded once to the leader the node names, or handed to it.
    fn request(&mut self, request: Request) {
        let now = self.now();
        let leader = self
            .node
            .state(now)
            .forward_to()
            .filter(|_| !request.forwarded)
            .and_then(node_at);
        if let Some(to) = leader {
            let request = Request {
                forwarded: true,
                ..request
            };
            send_request(&self.world, self.id, to, request);
            return;
        }
        let id = self.next_request;
        self.next_request += 1;
        self.pending.insert(id, request.reply);
        self.handle(NodeInput::Request {
            id,
            request: NodeRequest::Mutate(request.mutation),
        });
    }
}

fn node_name(id: usize) -> String {
    format!("n{id}")
}

fn node_address(id: usize) -> String {
    format!("10.0.0.{id}:7000")
}

/// The node listening at `address` ([`node_address`]).
fn node_at(address: &str) -> Option<usize> {
    (0..NODES_MAX).find(|&id| node_address(id) == address)
}

fn send_request(world: &Shared, from: usize, to: usize, request: Request) {
    let world = world.clone();
    madsim::task::spawn_local(async move {
        if !world.borrow().link_up(from, to) {
            return; // lost: the caller times out
        }
        delay(&world).await;
        let inbox = world.borrow().inboxes[to].clone();
        if let Some(inbox) = inbox {
            if chance(world.borrow().faults.message_duplicate) {
                // A duplicate whose answer nobody reads.
                let (reply, _) = oneshot::channel();
                let copy = Request {
                    mutation: request.mutation.clone(),
                    reply,
                    forwarded: request.forwarded,
                };
                let _ = inbox.unbounded_send(copy);
            }
            let _ = inbox.unbounded_send(request);
        }
    });
}

// ---- the watch stream: the shipped machine at the node, over a simulated connection ---

/// What reaches a replica: an input for its follower (stream items and fetch answers carry
/// the follower's own ids, so it tells late words of dropped ones apart itself).
enum ToReplica {
    Follower(FollowerInput),
    /// The replica's connection resets (a scenario's doing).
    Reset,
    /// The replica's process restarts: its cache and connections are gone.
    Restart,
}

/// A connection from a replica to a node carries items in order; a partition silences it
/// (no reset arrives), a crashed node's end resets it.
fn partitioned(world: &Shared, from: usize, to: usize) -> bool {
    world.borrow().blocked.contains(&(from, to))
}

/// Carries `message` from node `node` to incarnation `incarnation` of replica `replica`
/// (a restarted replica's connections are gone with its old incarnation): false when it
/// does not arrive.
async fn to_replica(
    world: &Shared,
    node: usize,
    (replica, incarnation): (usize, u64),
    message: ToReplica,
) -> bool {
    if partitioned(world, node, replica_id(replica)) {
        return false;
    }
    delay(world).await;
    let w = world.borrow();
    if w.replica_incarnations[replica] != incarnation {
        return false;
    }
    w.replica_inboxes[replica].unbounded_send(message).is_ok()
}

/// Replica `replica` calls `Snapshot` at node `node` (fetch `id`); the node answers as
/// the shell does, with [`EventStore::load`] (the store's checkpoint and the log after it).
async fn snapshot_at(world: Shared, node: usize, (replica, incarnation): (usize, u64), id: u64) {
    world.borrow_mut().metrics.snapshots_fetched += 1;
    delay(&world).await;
    if partitioned(&world, replica_id(replica), node) {
        return; // the call times out: the follower's fetch deadline decides
    }
    let result = if world.borrow().inboxes.get(node).is_none_or(Option::is_none) {
        Err("connection refused".to_string())
    } else {
        if !world.borrow().link_up(node, STORE) {
            return; // the node's store reads hang
        }
        delay(&world).await;
        let loaded = world.borrow().store.load();
        loaded.map_err(|e| e.to_string())
    };
    let answer = ToReplica::Follower(FollowerInput::Fetched { fetch: id, result });
    to_replica(&world, node, (replica, incarnation), answer).await;
}

/// Tells a node's tail that watch stream `stream` ended, when dropped.
struct LeaveTail {
    tail: mpsc::UnboundedSender<TailInput>,
    stream: u64,
}

impl Drop for LeaveTail {
    fn drop(&mut self) {
        let _ = self.tail.unbounded_send(TailInput::Left {
            stream: self.stream,
        });
    }
}

/// Replica `replica` opens `Watch(from, follow = true)` at node `node` as stream `id`. The
/// node serves it with the shipped [`Watch`] machine, reading the store over the simulated
/// network.
async fn watch_at(
    world: Shared,
    node: usize,
    (replica, incarnation): (usize, u64),
    id: u64,
    from: u64,
) {
    let ended = |error: &str| {
        ToReplica::Follower(FollowerInput::StreamEnded {
            stream: id,
            error: error.into(),
        })
    };
    delay(&world).await;
    if partitioned(&world, replica_id(replica), node) {
        return; // the connection attempt times out: silence
    }
    if world.borrow().inboxes.get(node).is_none_or(Option::is_none) {
        to_replica(
            &world,
            node,
            (replica, incarnation),
            ended("connection refused"),
        )
        .await;
        return;
    }
    // Subscribe before reading the log so nothing falls between the two.
    let (live_tx, mut live) = mpsc::unbounded();
    let (tail, stream) = {
        let mut w = world.borrow_mut();
        w.metrics.streams_opened += 1;
        w.subscribers[node].push((replica, live_tx));
        (w.tails[node].clone(), w.metrics.streams_opened)
    };
    // However this stream ends, the node's tail hears that it left (as the shell's
    // `LeaveTail` does).
    let _leave = tail.clone().map(|tail| LeaveTail { tail, stream });
    let now = |w: &Shared| w.borrow().now_ms(node);
    let mut watch = Watch::new(WatchConfig::DEFAULT, from, true, now(&world));
    // Whether the node's tail was told that this stream follows (since it last caught up).
    let mut told = false;
    let opened = ToReplica::Follower(FollowerInput::StreamOpened { stream: id });
    if !to_replica(&world, node, (replica, incarnation), opened).await {
        return;
    }
    loop {
        while let Some(output) = watch.poll() {
            let input = match output {
                WatchOutput::ReadLog { after, limit } => {
                    let read = StoreCall::ReadLog { after, limit };
                    match store_call(world.clone(), node, read).await {
                        Some(StoreAnswer::Log(result)) => {
                            watch.handle(WatchInput::Read(result), now(&world));
                            continue;
                        }
                        // The read hangs: the stream goes silent.
                        _ => return,
                    }
                }
                WatchOutput::Send(event) => {
                    world.borrow_mut().sent(node, Some(&event));
                    FollowerInput::StreamEvent { stream: id, event }
                }
                WatchOutput::Heartbeat { .. } => {
                    world.borrow_mut().sent(node, None);
                    FollowerInput::StreamHeartbeat { stream: id }
                }
                WatchOutput::Failed(error) => {
                    to_replica(&world, node, (replica, incarnation), ended(&error)).await;
                    return;
                }
                WatchOutput::Truncated { .. } => {
                    {
                        // Replica 0 converging after this proves it resynced from a
                        // snapshot: the log no longer holds what it lacked.
                        let mut w = world.borrow_mut();
                        if w.script == Script::ReplicaAwayPastTruncation && replica == 0 {
                            w.fired += 1;
                        }
                    }
                    let truncated = FollowerInput::StreamTruncated {
                        stream: id,
                        after: from,
                    };
                    to_replica(
                        &world,
                        node,
                        (replica, incarnation),
                        ToReplica::Follower(truncated),
                    )
                    .await;
                    return;
                }
                // Only a watch that does not follow ends by itself.
                WatchOutput::Done => return,
            };
            let item = ToReplica::Follower(input);
            if !to_replica(&world, node, (replica, incarnation), item).await {
                return;
            }
        }
        if watch.following() != told {
            told = watch.following();
            if told && let Some(tail) = &tail {
                let revision = watch.sent();
                let _ = tail.unbounded_send(TailInput::Following { stream, revision });
            }
        }
        let wait = watch.next_deadline_ms().saturating_sub(now(&world)).max(1);
        futures::select_biased! {
            input = live.next() => match input {
                Some(input) => watch.handle(input, now(&world)),
                None => {
                    // The node crashed: its connections reset.
                    to_replica(&world, node, (replica, incarnation), ended("connection reset")).await;
                    return;
                }
            },
            _ = sleep(Duration::from_millis(wait.unsigned_abs())).fuse() => {
                watch.handle(WatchInput::Tick, now(&world));
            }
        }
    }
}

/// One incarnation of Metasrv node `id`: returns when it crashes.
async fn metasrv(world: Shared, id: usize, mut inbox: mpsc::UnboundedReceiver<Request>) {
    let election = ElectionConfig {
        node: node_name(id),
        address: node_address(id),
        lease_ms: LEASE_MS,
        renew_interval_ms: RENEW_MS,
        clock_bound_ms: CLOCK_BOUND_MS,
        exclusive: world.borrow().shape.exclusive,
    };
    let limits = world.borrow().store.append_limits();
    let tuning = world.borrow().tuning;
    let (answers, mut answer_rx) = mpsc::unbounded();
    let (tail_tx, tail_rx) = mpsc::unbounded();
    world.borrow_mut().tails[id] = Some(tail_tx.clone());
    madsim::task::spawn_local(tail(world.clone(), id, tail_rx));
    let mut node = SimNode {
        world: world.clone(),
        id,
        node: Node::new(NodeConfig {
            checkpoint_every: tuning.checkpoint_every,
            log_keep: tuning.log_keep,
            checkpoint_deadline_ms: tuning.checkpoint_deadline_ms,
            retention: tuning.retention,
            sweep_every_ms: tuning.sweep_every_ms,
            ..NodeConfig::new(election, limits)
        })
        .expect("valid node config"),
        pending: BTreeMap::new(),
        next_request: 1,
        answers,
        resigning: false,
        tail: tail_tx,
        leading: false,
    };
    loop {
        let (crash, restart, pause) = {
            let faults = world.borrow().faults;
            (
                chance(faults.crash),
                chance(faults.restart),
                chance(faults.pause),
            )
        };
        if crash {
            world.borrow_mut().record(("crash", id));
            return;
        }
        if restart {
            world.borrow_mut().record(("restart", id));
            node.resigning = true;
            node.handle(NodeInput::Resign);
            return;
        }
        let (scripted_pause, scripted_crash) = {
            let mut w = world.borrow_mut();
            let crash = std::mem::take(&mut w.crash_next[id]);
            (w.pause_next[id].take(), crash)
        };
        if scripted_crash {
            world.borrow_mut().record(("crash", id));
            return;
        }
        if pause || scripted_pause.is_some() {
            // SIGSTOP: nothing runs here, the clock moves on; SIGCONT later.
            let random = Duration::from_millis(thread_rng().gen_range(0..3 * LEASE_MS as u64));
            sleep(scripted_pause.unwrap_or(random)).await;
        }
        let wait = node
            .node
            .next_deadline_ms()
            .saturating_sub(node.now())
            .clamp(1, 10);
        futures::select_biased! {
            request = inbox.next() => {
                if let Some(request) = request {
                    node.request(request);
                }
            }
            answer = answer_rx.next() => {
                if let Some((call, answer)) = answer {
                    node.handle(NodeInput::Answer { call, answer });
                }
            }
            _ = sleep(Duration::from_millis(wait as u64)).fuse() => {}
        }
        node.handle(NodeInput::Tick);
    }
}

/// Runs node `id` forever, restarting it with empty memory after each crash.
async fn supervise(world: Shared, id: usize) {
    loop {
        let (tx, rx) = mpsc::unbounded();
        world.borrow_mut().inboxes[id] = Some(tx);
        metasrv(world.clone(), id, rx).await;
        {
            let mut w = world.borrow_mut();
            w.inboxes[id] = None;
            w.elections[id] = None;
            w.subscribers[id].clear();
            w.tails[id] = None;
        }
        sleep(Duration::from_millis(thread_rng().gen_range(100..3_000))).await;
    }
}

/// Changes partitions every 0.2 to 1.5 s while faults are on.
async fn nemesis(world: Shared) {
    loop {
        sleep(Duration::from_millis(thread_rng().gen_range(200..1_500))).await;
        let mut w = world.borrow_mut();
        w.blocked.clear();
        if !chance(w.faults.partition) {
            continue;
        }
        let mut rng = thread_rng();
        let nodes = w.shape.nodes;
        let a = rng.gen_range(0..nodes);
        let b = match rng.gen_range(0..3) {
            1 => replica_id(rng.gen_range(0..w.shape.replicas)),
            2 if nodes > 1 => (a + rng.gen_range(1..nodes)) % nodes,
            _ => STORE,
        };
        match rng.gen_range(0..3) {
            0 => {
                w.blocked.insert((a, b));
            }
            1 => {
                w.blocked.insert((b, a));
            }
            _ => {
                w.blocked.insert((a, b));
                w.blocked.insert((b, a));
            }
        }
    }
}

/// The node that leads now, once one does.
async fn leader(world: &Shared) -> usize {
    loop {
        let leader = {
            let w = world.borrow();
            (0..w.shape.nodes).find(|&i| {
                let now = w.now_ms(i);
                w.elections[i]
                    .as_ref()
                    .is_some_and(|e| e.leading(now).is_some())
            })
        };
        if let Some(leader) = leader {
            return leader;
        }
        sleep(Duration::from_millis(10)).await;
    }
}

/// Forces the situations of scenarios that need a push from outside at the start of the
/// safety phase (the others are forced where they happen).
async fn direct(world: Shared, script: Script) {
    match script {
        Script::OneWayPartitionLeaderToStore => {
            // Cut the path from the leader to the store (not back) for three leases.
            let leader = leader(&world).await;
            {
                let mut w = world.borrow_mut();
                w.fired += 1;
                w.blocked.insert((leader, STORE));
            }
            sleep(Duration::from_millis(3 * LEASE_MS as u64)).await;
            world.borrow_mut().blocked.remove(&(leader, STORE));
        }
        Script::RestartDuringReconcile => {
            // Depose the leader so that elections follow; the next electees crash while
            // they read their log.
            let leader = leader(&world).await;
            world.borrow_mut().crash_next[leader] = true;
        }
        Script::ReplicaLaggingBeyondWatchBuffer | Script::ReplicaWatchesAFollower => {
            // Replica 0 reconnects, to the leader (or to a follower).
            let inbox = world.borrow().replica_inboxes[0].clone();
            let _ = inbox.unbounded_send(ToReplica::Reset);
        }
        Script::ReplicaAwayPastTruncation => {
            let away = replica_id(0);
            let (nodes, start) = {
                let w = world.borrow();
                (w.shape.nodes, w.revision())
            };
            let links = |node: usize| [(node, away), (away, node)];
            world
                .borrow_mut()
                .blocked
                .extend((0..nodes).flat_map(links));
            // Away for 12 s (longer than a follower waits on a silent stream: its stream is
            // reopened while it is away, and again after) and until the log no longer holds
            // what it last saw (at most 60 s more).
            sleep(Duration::from_secs(12)).await;
            for _ in 0..960 {
                if world.borrow().store.inner().truncated() > start {
                    break;
                }
                sleep(Duration::from_millis(50)).await;
            }
            let mut w = world.borrow_mut();
            for link in (0..nodes).flat_map(links) {
                w.blocked.remove(&link);
            }
        }
        Script::Random
        | Script::LeaderPausedWithWriteInFlight
        | Script::AnswerLostAfterApplyThenFailover
        | Script::ClockDriftAtTheBound => {}
    }
}

/// At no instant do two nodes believe they lead (each judged by its own clock).
async fn monitor(world: Shared) {
    loop {
        sleep(Duration::from_millis(5)).await;
        let mut w = world.borrow_mut();
        let leaders: Vec<(usize, u64)> = (0..w.shape.nodes)
            .filter_map(|i| {
                let now = w.now_ms(i);
                w.elections[i].as_ref()?.leading(now).map(|e| (i, e))
            })
            .collect();
        w.checks.leadership.leading(&leaders);
    }
}

// ---- clients and replicas --------------------------------------------------------------

/// Sends a request from writer endpoint `from` to node `to` and waits for the answer, or a
/// timeout.
async fn call(
    world: &Shared,
    from: usize,
    to: usize,
    mutation: Mutation,
) -> Option<Result<Reply, CommitError>> {
    let (reply, rx) = oneshot::channel();
    let request = Request {
        mutation,
        reply,
        forwarded: false,
    };
    send_request(world, from, to, request);
    futures::select_biased! {
        reply = rx.fuse() => reply.ok(),
        _ = sleep(Duration::from_secs(3)).fuse() => None,
    }
}

/// Commits a version of `table_id` as operation `op_id` from `endpoint` through node
/// `target` (moved to another node when it does not lead or does not answer), retrying with
/// the same operation id until acknowledged, and records the acknowledgement for the
/// checkers. Each attempt's base version is `base` when given (then moved by conflicts,
/// which name the latest version), else read from the store. Returns the version and the
/// revision token.
async fn commit(
    world: &Shared,
    endpoint: usize,
    target: &mut usize,
    table_id: u64,
    op_id: &str,
    digest: [u8; 32],
    mut base: Option<u64>,
) -> (u64, u64) {
    let nodes = world.borrow().shape.nodes;
    let (version, token) = loop {
        sleep(Duration::from_millis(thread_rng().gen_range(0..30))).await;
        let base_version = base.unwrap_or_else(|| {
            world
                .borrow()
                .registry()
                .table_by_id(table_id)
                .map_or(0, |t| t.latest_version())
        });
        let mutation = Mutation::Commit {
            table_id,
            base_version,
            manifest: ManifestRef {
                path: format!("_versions/1.manifest-{op_id}"),
                size_bytes: 1,
            },
            operation: Some((op_id.to_string(), digest)),
        };
        match call(world, endpoint, *target, mutation).await {
            Some(Ok(Reply {
                applied: Applied::Committed { version, .. },
                revision,
            })) => break (version, revision),
            Some(Ok(other)) => panic!("commit answered with {other:?}"),
            Some(Err(CommitError::NotLeader { .. })) | None => {
                *target = thread_rng().gen_range(0..nodes);
            }
            Some(Err(CommitError::VersionConflict { latest, .. })) if base.is_some() => {
                base = Some(latest);
            }
            Some(Err(e)) if e.is_retryable() => {}
            Some(Err(CommitError::TableIdNotFound { id })) => {
                // The run's tables are created (and acknowledged) before the writers
                // start and never dropped: this is an acknowledged write lost.
                let mut w = world.borrow_mut();
                w.checks.commits.table_lost(id);
                w.checks.assert_clean();
            }
            Some(Err(e)) => panic!("{op_id}: unexpected refusal {e}"),
        }
    };
    world
        .borrow_mut()
        .checks
        .commits
        .acknowledged(op_id, table_id, version);
    (version, token)
}

/// A writer: appends `OPS_PER_WRITER` operations, each retried with the same operation id
/// until acknowledged, then reads it back at a random replica with the returned token.
async fn writer(world: Shared, id: usize, tables: Vec<u64>) {
    let endpoint = writer_id(id);
    let nodes = world.borrow().shape.nodes;
    let mut target = thread_rng().gen_range(0..nodes);
    for op in 0..OPS_PER_WRITER {
        let op_id = format!("w{id}-op{op}");
        let digest = [u8::try_from(id).unwrap_or(0); 32];
        let table_id = tables[thread_rng().gen_range(0..tables.len())];
        let (version, token) = commit(
            &world,
            endpoint,
            &mut target,
            table_id,
            &op_id,
            digest,
            None,
        )
        .await;
        // Read-your-writes at any replica: the token's revision or newer, and the version
        // acknowledged is exactly this commit.
        // (While replica 0 is away on purpose, no reader asks it: what brings it back is
        // its stream finding the log truncated, not a reader's snapshot.)
        let away = world.borrow().script == Script::ReplicaAwayPastTruncation;
        let replicas = world.borrow().shape.replicas;
        let replica = thread_rng().gen_range(usize::from(away)..replicas);
        let (reply, rx) = oneshot::channel();
        let sender = world.borrow().reads[replica].clone();
        let _ = sender.unbounded_send(Read {
            min_revision: token,
            reply,
        });
        let read = futures::select_biased! {
            read = rx.fuse() => read.ok(),
            _ = sleep(Duration::from_secs(3)).fuse() => None,
        };
        if let Some(registry) = read {
            let mut w = world.borrow_mut();
            w.checks
                .replicas
                .served(replica, token, &registry, (table_id, version, &op_id));
            w.reads_served += 1;
        }
    }
}

/// A Query replica: the shipped [`Follower`] (its cache, stream and fetch timers) over
/// watch streams opened at a random node, serving reads at or above a client's token.
async fn replica(
    world: Shared,
    index: usize,
    mut inbox: mpsc::UnboundedReceiver<ToReplica>,
    mut reads: mpsc::UnboundedReceiver<Read>,
    done: Rc<RefCell<bool>>,
) {
    let endpoint = replica_id(index);
    let now = |w: &Shared| w.borrow().now_ms(endpoint);
    let nodes = world.borrow().shape.nodes;
    let start = |w: &Shared| Follower::new(FollowerConfig::new(LEASE_MS), Registry::new(), now(w));
    let mut follower = start(&world);
    let mut incarnation = 0;
    // The open stream's id, for a scripted connection reset.
    let mut current = 0;
    // Streams opened (a spread replica moves on to the next node with each).
    let mut opened = 0;
    let mut waiting: Vec<Read> = Vec::new();
    // A read's need, to feed once the time's own outputs are out, and whether the cache
    // could serve it already; then whether the last input was one (what it sets off is
    // counted).
    let mut need: Option<(u64, bool)> = None;
    let mut for_query = None;
    let mut probed = Instant::now();
    // When this replica first saw each table's versions expire (the shell's cleanup).
    let mut expiries = ExpiryWatch::default();
    loop {
        while let Some(output) = follower.poll() {
            if let Some(warm) = for_query
                && matches!(
                    output,
                    FollowerOutput::OpenStream { .. } | FollowerOutput::FetchSnapshot { .. }
                )
            {
                world.borrow_mut().metrics.calls_for_warm_queries += u64::from(warm);
            }
            match output {
                FollowerOutput::OpenStream {
                    stream,
                    from_revision,
                } => {
                    current = stream;
                    opened += 1;
                    let watching = world.borrow().watching;
                    let mut node = match watching {
                        Watching::Spread => (index + opened - 1) % nodes,
                        Watching::Random | Watching::Leader => thread_rng().gen_range(0..nodes),
                    };
                    let w = world.borrow();
                    // The first node that leads (`true`) or does not, if any.
                    let first = |leads: bool| {
                        (0..nodes).find(|&i| {
                            let now = w.now_ms(i);
                            let leading = w.elections[i]
                                .as_ref()
                                .is_some_and(|e| e.leading(now).is_some());
                            leading == leads
                        })
                    };
                    if w.script == Script::ReplicaWatchesAFollower && index == 0 {
                        node = first(false).unwrap_or(node);
                    }
                    if (w.script == Script::ReplicaLaggingBeyondWatchBuffer && index == 0)
                        || watching == Watching::Leader
                    {
                        // The lagging replica watches the leader, whose live events it
                        // cannot keep up with.
                        node = first(true).unwrap_or(node);
                    }
                    drop(w);
                    let at = (index, incarnation);
                    let watch = watch_at(world.clone(), node, at, stream, from_revision);
                    madsim::task::spawn_local(watch);
                }
                FollowerOutput::CloseStream => {}
                FollowerOutput::FetchSnapshot { fetch } => {
                    let node = thread_rng().gen_range(0..nodes);
                    let fetch = snapshot_at(world.clone(), node, (index, incarnation), fetch);
                    madsim::task::spawn_local(fetch);
                }
                FollowerOutput::Advanced(revision) => {
                    let mut w = world.borrow_mut();
                    w.checks.replicas.advanced(index, incarnation, revision);
                    if let Some(away) = &mut w.away
                        && away.replica == index
                        && let Some((back, target)) = away.back
                        && revision >= target
                        && away.caught_up_ms.is_none()
                    {
                        away.caught_up_ms = Some(back.elapsed().as_millis() as u64);
                    }
                }
                FollowerOutput::Event(_) => {}
            }
        }
        let cache = follower.cache();
        // The collection of dropped tables' files, as a replica runs it on its registry
        // whatever its lag (checked against the store's registry of the moment).
        if probed.elapsed() >= GARBAGE_PROBE_EVERY && world.borrow().probe_garbage {
            probed = Instant::now();
            let registry = cache.read(0).expect("read(0) cannot fail");
            let mut w = world.borrow_mut();
            let unconfirmed: Vec<String> = dropped_dirs(registry, &w.dirs, w.bugs)
                .into_iter()
                .filter(|dir| !w.confirmed_dropped.contains(dir))
                .collect();
            if !unconfirmed.is_empty() {
                let truth = w.registry();
                w.checks.garbage.collected(index, &unconfirmed, &truth);
                let gone = |dir: &&String| {
                    location_table_id(dir).is_some_and(|id| truth.table_by_id(id).is_none())
                };
                let confirmed: Vec<String> = unconfirmed.iter().filter(gone).cloned().collect();
                w.confirmed_dropped.extend(confirmed);
            }
            drop(w);
            clean_up_versions(&world, index, registry, &mut expiries);
        }
        let below = world.borrow().bugs.serve_below_token;
        let mut i = 0;
        while i < waiting.len() {
            let min_revision = if below { 0 } else { waiting[i].min_revision };
            if let Ok(registry) = cache.read(min_revision) {
                let read = waiting.swap_remove(i);
                let _ = read.reply.send(registry.clone());
            } else {
                i += 1;
            }
        }
        if *done.borrow() && cache.revision() == world.borrow().revision() {
            let registry = cache.read(0).expect("read").clone();
            world.borrow_mut().replica_final[index] = Some(registry);
            return;
        }
        let wait = follower
            .next_deadline_ms()
            .saturating_sub(now(&world))
            .clamp(1, 200);
        for_query = None;
        if let Some((revision, warm)) = need.take() {
            for_query = Some(warm);
            follower.handle(FollowerInput::Need { revision }, now(&world));
            continue;
        }
        let input = futures::select_biased! {
            message = inbox.next() => match message {
                Some(ToReplica::Follower(input)) => input,
                Some(ToReplica::Reset) => FollowerInput::StreamEnded {
                    stream: current,
                    error: "connection reset".into(),
                },
                Some(ToReplica::Restart) => {
                    // (Whoever restarts a replica moves its incarnation on when it does.)
                    incarnation = world.borrow().replica_incarnations[index];
                    follower = start(&world);
                    expiries = ExpiryWatch::default();
                    FollowerInput::Tick
                }
                None => FollowerInput::Tick,
            },
            read = reads.next() => match read {
                Some(read) => {
                    let revision = read.min_revision;
                    let warm = follower.cache().read(revision).is_ok();
                    let mut w = world.borrow_mut();
                    w.metrics.queries += 1;
                    w.metrics.warm_queries += u64::from(warm);
                    need = Some((revision, warm));
                    waiting.push(read);
                    // What is due by now goes first: it is not the read's doing.
                    FollowerInput::Tick
                }
                None => FollowerInput::Tick,
            },
            _ = sleep(Duration::from_millis(wait.unsigned_abs())).fuse() => FollowerInput::Tick,
        };
        follower.handle(input, now(&world));
    }
}

// ---- the run ---------------------------------------------------------------------------

/// What a run leaves for the checkers and the determinism check.
struct Outcome {
    trace: u64,
    /// How many times the script's situation was forced.
    fired: u32,
}

/// A replica's two inboxes: what its connections carry, and its readers' reads.
type ReplicaInboxes = (
    mpsc::UnboundedReceiver<ToReplica>,
    mpsc::UnboundedReceiver<Read>,
);

/// The world of a run of `shape` with `bugs` planted, its clocks drawn for `script`, no
/// faults on yet; and each replica's inboxes.
fn new_world(shape: Shape, bugs: Bugs, script: Script) -> (Shared, Vec<ReplicaInboxes>) {
    let clocks = (0..NODES_MAX + shape.replicas)
        .map(|endpoint| {
            let mut rng = thread_rng();
            let offset = rng.gen_range(-5_000..=5_000);
            let drift = match script {
                Script::ClockDriftAtTheBound if endpoint % 2 == 0 => 95,
                Script::ClockDriftAtTheBound => -95,
                _ => rng.gen_range(-DRIFT_MAX_PER_MILLE..=DRIFT_MAX_PER_MILLE),
            };
            (offset, drift)
        })
        .collect();
    let mut replica_inboxes = Vec::new();
    let mut reads = Vec::new();
    let mut inboxes = Vec::new();
    for _ in 0..shape.replicas {
        let (stream_tx, stream_rx) = mpsc::unbounded();
        let (read_tx, read_rx) = mpsc::unbounded();
        replica_inboxes.push(stream_tx);
        reads.push(read_tx);
        inboxes.push((stream_rx, read_rx));
    }
    let world: Shared = Rc::new(RefCell::new(World {
        faults: Faults::default(),
        started: Instant::now(),
        clocks,
        store: Faulty::new(if bugs.skip_fence {
            SimStore::skipping_fence()
        } else {
            SimStore::default()
        }),
        blocked: BTreeSet::new(),
        shape,
        bugs,
        // The scenario starts with the safety phase; setup runs without it.
        script: Script::Random,
        tuning: SWARM_TUNING,
        watching: Watching::Random,
        metrics: Metrics::sized(shape.nodes),
        away: None,
        fired: 0,
        pause_next: vec![None; shape.nodes],
        crash_next: vec![false; shape.nodes],
        inboxes: vec![None; shape.nodes],
        replica_inboxes,
        replica_incarnations: vec![0; shape.replicas],
        subscribers: vec![Vec::new(); shape.nodes],
        tails: vec![None; shape.nodes],
        reads,
        elections: vec![None; shape.nodes],
        checks: Checkers::default(),
        dirs: Vec::new(),
        dropped_dirs: BTreeSet::new(),
        confirmed_dropped: BTreeSet::new(),
        probe_garbage: true,
        pins: Vec::new(),
        replica_final: vec![None; shape.replicas],
        reads_served: 0,
        trace: std::collections::hash_map::DefaultHasher::new(),
    }));
    (world, inboxes)
}

/// Creates namespace `ns` and the run's tables `t0`… through whichever node leads, without
/// faults, and returns the tables' ids.
async fn create_tables(world: &Shared) -> Vec<u64> {
    let shape = world.borrow().shape;
    let setup = [Mutation::CreateNamespace { name: "ns".into() }]
        .into_iter()
        .chain((0..shape.tables).map(|t| Mutation::CreateTable {
            namespace: "ns".into(),
            name: format!("t{t}"),
            schema_ipc: vec![],
        }));
    let mut tables = Vec::new();
    for mutation in setup {
        let reply = loop {
            let to = thread_rng().gen_range(0..shape.nodes);
            match call(world, SETUP, to, mutation.clone()).await {
                Some(Ok(reply)) => break reply,
                Some(Err(e)) if e.is_retryable() => sleep(Duration::from_millis(100)).await,
                None => {}
                Some(Err(e)) => panic!("setup refused: {e}"),
            }
        };
        if let Applied::TableCreated(meta) = reply.applied {
            world.borrow_mut().dirs.push(dir_name(&meta.location));
            tables.push(meta.id);
        }
    }
    tables
}

/// A table's dataset directory: its location less `tables/`.
fn dir_name(location: &str) -> String {
    location_dir(location).unwrap_or(location).to_string()
}

/// Tables the churn task creates (and drops all but the last of) while the writers run.
const CHURN_TABLES: usize = 6;

/// Creates `churn.c0`, `churn.c1`, … through random nodes and drops each once the next
/// exists, so replicas' collections of dropped tables' files race creates and drops;
/// records each table's directory once its creation is acknowledged and each drop once
/// acknowledged.
async fn churn(world: Shared) {
    let namespace = Mutation::CreateNamespace {
        name: "churn".into(),
    };
    let found = |truth: &Registry| truth.namespaces().any(|ns| ns == "churn").then_some(());
    if durably(&world, namespace, found).await.is_none() {
        return;
    }
    let mut previous: Option<(String, String)> = None;
    for i in 0..CHURN_TABLES {
        let name = format!("c{i}");
        let create = Mutation::CreateTable {
            namespace: "churn".into(),
            name: name.clone(),
            schema_ipc: vec![],
        };
        let dir = durably(&world, create, |truth| {
            truth
                .table("churn", &name)
                .map(|table| dir_name(&table.meta.location))
        })
        .await;
        let Some(dir) = dir else { return };
        world.borrow_mut().dirs.push(dir.clone());
        if let Some((name, dir)) = previous.replace((name, dir)) {
            let drop = Mutation::DropTable {
                namespace: "churn".into(),
                name: name.clone(),
            };
            let gone = durably(&world, drop, |truth| {
                truth.table("churn", &name).is_none().then_some(())
            })
            .await;
            if gone.is_none() {
                return;
            }
            world.borrow_mut().dropped_dirs.insert(dir);
        }
        sleep(Duration::from_millis(thread_rng().gen_range(100..1_000))).await;
    }
}

/// Sends `mutation` until the store's registry shows its effect (`effect` answers
/// `Some`), and returns that effect. A `TableExists` or `TableNotFound` answer may come from
/// a leader whose own earlier attempt is still in flight and is later deposed, so only the
/// durable log counts: wait for it a while, then send again. `None` when refused otherwise
/// or not done in 20 rounds (the run's final checks then report the churn unfinished).
async fn durably<T>(
    world: &Shared,
    mutation: Mutation,
    effect: impl Fn(&Registry) -> Option<T>,
) -> Option<T> {
    for _ in 0..20 {
        if !done_once(world, mutation.clone()).await {
            return None;
        }
        for _ in 0..100 {
            if let Some(done) = effect(&world.borrow().registry()) {
                return Some(done);
            }
            sleep(Duration::from_millis(50)).await;
        }
    }
    None
}

/// Sends `mutation` through random nodes until it is done: acknowledged, or refused
/// because an earlier attempt whose answer was lost did it.
/// Any other refusal (a planted bug can lose the namespace) is `false`.
async fn done_once(world: &Shared, mutation: Mutation) -> bool {
    let nodes = world.borrow().shape.nodes;
    loop {
        let to = thread_rng().gen_range(0..nodes);
        match call(world, SETUP, to, mutation.clone()).await {
            Some(Ok(_)) => return true,
            Some(Err(e)) if e.is_retryable() => sleep(Duration::from_millis(100)).await,
            Some(Err(
                CommitError::NamespaceExists { .. }
                | CommitError::TableExists { .. }
                | CommitError::TableNotFound { .. },
            )) => return true,
            None => {}
            Some(Err(_)) => return false,
        }
    }
}

/// One round of replica `index`'s cleanup of expired versions' files on its `registry`,
/// with the shipped decision ([`ExpiryWatch`]; [`Bugs::gc_ignores_pins`] plants the way
/// that ignores pinned readers), checked against the store's registry and the readers'
/// pins; then a reader pins the oldest version the store retains of one table (time
/// travel to the oldest: the version closest to expiring).
fn clean_up_versions(
    world: &Shared,
    index: usize,
    registry: &Registry,
    expiries: &mut ExpiryWatch,
) {
    let mut w = world.borrow_mut();
    let now_ms = w.now_ms(replica_id(index));
    let true_ms = w.started.elapsed().as_millis() as u64;
    w.pins
        .retain(|p| true_ms.saturating_sub(p.at_ms) < READER_RUNS_MS);
    let truth = w.registry();
    for table in registry.tables() {
        let id = table.meta.id;
        expiries.observe(id, table.oldest_version(), now_ms);
        let before = if w.bugs.gc_ignores_pins {
            table.oldest_version()
        } else {
            expiries.cleanup_before(id, now_ms, CLEANUP_GRACE_MS)
        };
        if before > 1 {
            let pins = w.pins.clone();
            let cleanup = Cleanup {
                replica: index,
                table: id,
                before,
                at_ms: true_ms,
            };
            w.checks
                .versions
                .collected(cleanup, &truth, &pins, READER_RUNS_MS);
        }
    }
    let tables: Vec<_> = truth.tables().filter(|t| !t.versions.is_empty()).collect();
    if !tables.is_empty() {
        let table = tables[thread_rng().gen_range(0..tables.len())];
        w.pins.push(Pin {
            table: table.meta.id,
            version: table.oldest_version(),
            at_ms: true_ms,
        });
    }
}

/// The directories of `dirs` that replica registry `registry` takes for dropped tables'
/// (with [`Bugs::gc_ignores_next_id`], the planted bug's way).
fn dropped_dirs(registry: &Registry, dirs: &[String], bugs: Bugs) -> BTreeSet<String> {
    dirs.iter()
        .filter(|dir| {
            if bugs.gc_ignores_next_id {
                location_table_id(dir).is_some_and(|id| registry.table_by_id(id).is_none())
            } else {
                registry.is_dropped_dir(dir)
            }
        })
        .cloned()
        .collect()
}

async fn simulate(shape: Shape, bugs: Bugs, script: Script) -> Outcome {
    let faults = match script {
        Script::Random | Script::ClockDriftAtTheBound => Faults::draw(),
        _ => Faults::default(),
    };
    let (world, inboxes) = new_world(shape, bugs, script);
    for id in 0..shape.nodes {
        madsim::task::spawn_local(supervise(world.clone(), id));
    }
    madsim::task::spawn_local(monitor(world.clone()));
    let done = Rc::new(RefCell::new(false));
    let replicas: Vec<_> = inboxes
        .into_iter()
        .enumerate()
        .map(|(i, (s, r))| madsim::task::spawn_local(replica(world.clone(), i, s, r, done.clone())))
        .collect();
    let tables = create_tables(&world).await;

    // Safety phase: faults on while the writers run.
    {
        let mut w = world.borrow_mut();
        w.faults = faults;
        w.script = script;
    }
    if matches!(script, Script::Random | Script::ClockDriftAtTheBound) {
        madsim::task::spawn_local(nemesis(world.clone()));
    }
    madsim::task::spawn_local(direct(world.clone(), script));
    let writers: Vec<_> = (0..WRITERS)
        .map(|id| madsim::task::spawn_local(writer(world.clone(), id, tables.clone())))
        .collect();
    let churn = madsim::task::spawn_local(churn(world.clone()));
    sleep(Duration::from_secs(15)).await;

    // Liveness phase: faults off; everything must finish and converge within the bound.
    {
        let mut w = world.borrow_mut();
        w.faults = Faults::default();
        w.blocked.clear();
    }
    let liveness = async {
        for w in writers {
            w.await.expect("writer");
        }
        churn.await.expect("churn");
        *done.borrow_mut() = true;
        for r in replicas {
            r.await.expect("replica");
        }
        // One leader again.
        loop {
            let leading = {
                let w = world.borrow();
                (0..shape.nodes)
                    .filter(|&i| {
                        let now = w.now_ms(i);
                        w.elections[i]
                            .as_ref()
                            .is_some_and(|e| e.leading(now).is_some())
                    })
                    .count()
            };
            if leading == 1 {
                break;
            }
            sleep(Duration::from_millis(100)).await;
        }
    };
    madsim::time::timeout(LIVENESS_BOUND, liveness)
        .await
        .unwrap_or_else(|_| {
            // Safety first: a run that fails to converge may have broken a promise.
            let mut w = world.borrow_mut();
            let history = w.registry();
            w.checks.commits.check_history(&history, &tables, false);
            w.checks.assert_clean();
            let leaders: Vec<_> = (0..shape.nodes)
                .map(|i| {
                    let now = w.now_ms(i);
                    w.elections[i].as_ref().map(|e| (e.leading(now), e.leader().cloned()))
                })
                .collect();
            panic!(
                "no convergence within {LIVENESS_BOUND:?} of simulated time ({faults:?}): {} of {} operations acknowledged, log at revision {}, replicas finished {:?}, nodes (leading, lease seen) {leaders:?}",
                w.checks.commits.acknowledged_count(),
                WRITERS * OPS_PER_WRITER,
                w.revision(),
                w.replica_final.iter().map(Option::is_some).collect::<Vec<_>>(),
            )
        });
    let mut w = world.borrow_mut();
    check(&mut w, &tables);
    let mut trace = w.trace.clone();
    w.revision().hash(&mut trace);
    Outcome {
        trace: trace.finish(),
        fired: w.fired,
    }
}

/// The invariants over the final state, after every writer finished.
fn check(world: &mut World, tables: &[u64]) {
    let history = world.registry();
    world.checks.commits.check_history(&history, tables, true);
    for i in 0..world.shape.replicas {
        let final_registry = world.replica_final[i].clone().expect("replica finished");
        world
            .checks
            .replicas
            .converged(i, &final_registry, &history);
        let found = dropped_dirs(&final_registry, &world.dirs, world.bugs);
        let dropped = world.dropped_dirs.clone();
        world.checks.garbage.converged(i, &found, &dropped);
    }
    world.checks.assert_clean();
    assert_eq!(
        world.dropped_dirs.len(),
        CHURN_TABLES - 1,
        "every churn table but the last was dropped"
    );
    // Retention ran: every table's history was cut back while it committed, and the
    // checkers above held over the expired history.
    for &id in tables {
        let table = history.table_by_id(id).expect("checked above");
        assert!(
            table.latest_version() <= RETENTION.versions_max + 1 || table.oldest_version() > 1,
            "table {id} kept versions {} to {}: nothing expired",
            table.oldest_version(),
            table.latest_version()
        );
    }
    assert!(
        tables
            .iter()
            .filter_map(|&id| history.table_by_id(id))
            .any(|t| t.oldest_version() > 1),
        "no table's history expired"
    );
    assert!(
        world.reads_served > 0,
        "no read-your-writes read was checked: the run proved nothing about replicas"
    );
    assert_eq!(
        world.checks.commits.acknowledged_count(),
        WRITERS * OPS_PER_WRITER,
        "every operation acknowledged"
    );
}

// ---- the fleet: many replicas, many tables, an hour of commits -------------------------

/// A fleet run: its size, its pace and what happens in it. The nodes run with Lake's
/// defaults (checkpoint every 10,000 events keeping 10,000, [`Retention::DEFAULT`]).
#[derive(Clone, Copy, Debug)]
struct Fleet {
    replicas: usize,
    tables: usize,
    /// Simulated length of the steady phase, in minutes.
    minutes: u64,
    /// Commits per second over all tables; half of them go to the hottest 1% of tables.
    commits_per_second: u64,
    /// Reads per second over the replicas, each at the token of the latest acknowledged
    /// commit (a client reading its own write) and checked against it.
    queries_per_second: u64,
    /// Replica 1 is cut off from every node from the start for this many minutes.
    away_minutes: u64,
    watching: Watching,
}

impl Fleet {
    /// The size `.ci/test.sh` runs; `LAKE_FLEET_REPLICAS`, `LAKE_FLEET_TABLES`,
    /// `LAKE_FLEET_MINUTES`, `LAKE_FLEET_AWAY_MINUTES` and `LAKE_FLEET_COMMITS_PER_SECOND`
    /// scale it (the README's figures include 1,000 replicas × 2,000 tables for 70 minutes
    /// at 3 commits a second, one replica away for 60).
    fn from_env(watching: Watching) -> Self {
        let get = |name: &str, default: u64| env_u64(name).unwrap_or(default);
        Self {
            replicas: get("LAKE_FLEET_REPLICAS", 60) as usize,
            tables: get("LAKE_FLEET_TABLES", 600) as usize,
            minutes: get("LAKE_FLEET_MINUTES", 6),
            commits_per_second: get("LAKE_FLEET_COMMITS_PER_SECOND", 10).max(1),
            queries_per_second: 10,
            away_minutes: get("LAKE_FLEET_AWAY_MINUTES", 4),
            watching,
        }
    }
}

/// What a fleet run measured.
#[derive(Clone, Debug)]
struct FleetFigures {
    replicas: usize,
    tables: usize,
    commits: u64,
    queries: u64,
    /// Events all nodes' watch streams sent, per commit (one per replica is the floor).
    events_per_commit: f64,
    /// Event bytes ([`ChangeEvent::size_bound`]) sent per commit.
    bytes_per_commit: f64,
    /// Heartbeats sent per replica per minute.
    heartbeats_per_replica_minute: f64,
    /// Stream items (events and heartbeats) the leading node sent, per commit.
    leader_items_per_commit: f64,
    /// The largest share of all events one node sent.
    busiest_node_share: f64,
    /// Store log reads per commit (watch catch-ups and follower tails).
    log_reads_per_commit: f64,
    /// Metasrv calls (stream opens, snapshot fetches) that warm reads (the replica's cache
    /// already at the read's token) set off, per warm read: a warm read leaves nothing
    /// pending in the follower, so any call it makes happens at once and is counted.
    /// (A cold read's snapshot fetch comes a grace period later and is not attributed.)
    warm_queries: u64,
    calls_per_warm_query: f64,
    streams_opened: u64,
    snapshots_fetched: u64,
    /// A replica's catalog cache at the end, in bytes (allocated to hold its registry).
    cache_bytes: u64,
    /// Simulated time the away replica took, once back, to reach the revision the store
    /// had when it came back.
    catch_up_ms: u64,
}

impl std::fmt::Display for FleetFigures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} replicas × {} tables: commits {}, reads {}; per commit: {:.1} events, {:.0} bytes, {:.1} items from the leader, {:.2} log reads; busiest node {:.0}% of events; {:.2} heartbeats per replica per minute; {} Metasrv calls per warm read ({} warm reads); {} streams opened, {} snapshots fetched; cache {} bytes per replica ({:.0} per table); catch-up {} ms",
            self.replicas,
            self.tables,
            self.commits,
            self.queries,
            self.events_per_commit,
            self.bytes_per_commit,
            self.leader_items_per_commit,
            self.log_reads_per_commit,
            100.0 * self.busiest_node_share,
            self.heartbeats_per_replica_minute,
            self.calls_per_warm_query,
            self.warm_queries,
            self.streams_opened,
            self.snapshots_fetched,
            self.cache_bytes,
            self.cache_bytes as f64 / self.tables as f64,
            self.catch_up_ms,
        )
    }
}

/// The latest acknowledged commit: (revision token, table, version, operation id).
type LastAck = Rc<RefCell<Option<(u64, u64, u64, String)>>>;

/// Commits at `fleet.commits_per_second` until `stop`, half to the hottest 1% of `tables`,
/// each through [`commit`] (acknowledged, retried with its operation id); returns once the
/// last one is acknowledged.
async fn fleet_load(
    world: Shared,
    fleet: Fleet,
    tables: Vec<u64>,
    stop: Rc<std::cell::Cell<bool>>,
    last: LastAck,
) {
    let period = Duration::from_micros(1_000_000 / fleet.commits_per_second.max(1));
    let hot = (tables.len() / 100).max(1);
    let latest: Rc<RefCell<BTreeMap<u64, u64>>> = Rc::default();
    let mut commits = Vec::new();
    let mut n = 0u64;
    while !stop.get() {
        sleep(period).await;
        let mut rng = thread_rng();
        let table = if rng.gen_bool(0.5) {
            tables[rng.gen_range(0..hot)]
        } else {
            tables[rng.gen_range(0..tables.len())]
        };
        let mut target = rng.gen_range(0..world.borrow().shape.nodes);
        let op_id = format!("load-{n}");
        n += 1;
        let (world, latest, last) = (world.clone(), latest.clone(), last.clone());
        commits.push(madsim::task::spawn_local(async move {
            let base = latest.borrow().get(&table).copied().unwrap_or(0);
            let (version, token) = commit(
                &world,
                writer_id(0),
                &mut target,
                table,
                &op_id,
                [1; 32],
                Some(base),
            )
            .await;
            let mut latest = latest.borrow_mut();
            let entry = latest.entry(table).or_default();
            *entry = (*entry).max(version);
            let mut last = last.borrow_mut();
            if last.as_ref().is_none_or(|(t, ..)| *t < token) {
                *last = Some((token, table, version, op_id));
            }
        }));
    }
    for commit in commits {
        commit.await.expect("commit");
    }
}

/// Reads at `fleet.queries_per_second` at random replicas (not the away one while it is
/// away, not late ones before they join), each at the latest acknowledged commit's token,
/// checked by the replicas checker.
async fn fleet_reads(
    world: Shared,
    fleet: Fleet,
    stop: Rc<std::cell::Cell<bool>>,
    last: LastAck,
    joined: Rc<std::cell::Cell<usize>>,
) {
    let period = Duration::from_micros(1_000_000 / fleet.queries_per_second.max(1));
    while !stop.get() {
        sleep(period).await;
        let Some((token, table, version, op)) = last.borrow().clone() else {
            continue;
        };
        let replica = thread_rng().gen_range(0..joined.get());
        let away = world.borrow().away.is_some_and(|a| a.back.is_none());
        if away && replica == 1 {
            continue;
        }
        let (reply, rx) = oneshot::channel();
        let sender = world.borrow().reads[replica].clone();
        let _ = sender.unbounded_send(Read {
            min_revision: token,
            reply,
        });
        let world = world.clone();
        madsim::task::spawn_local(async move {
            let read = futures::select_biased! {
                read = rx.fuse() => read.ok(),
                _ = sleep(Duration::from_secs(10)).fuse() => None,
            };
            let mut w = world.borrow_mut();
            match read {
                Some(registry) => {
                    w.checks
                        .replicas
                        .served(replica, token, &registry, (table, version, &op));
                    w.reads_served += 1;
                }
                None => {
                    panic!("replica {replica} did not serve a read at revision {token} within 10 s")
                }
            }
        });
    }
}

/// What happens to the fleet while it runs: replica 1 comes back after
/// `fleet.away_minutes`, one replica restarts every minute, and the leader crashes half
/// way through.
async fn fleet_events(world: Shared, fleet: Fleet) {
    let replicas = world.borrow().shape.replicas;
    for minute in 1..=fleet.minutes {
        sleep(Duration::from_secs(60)).await;
        if minute == fleet.away_minutes {
            let mut w = world.borrow_mut();
            w.blocked.clear();
            let revision = w.revision();
            if let Some(away) = &mut w.away {
                away.back = Some((Instant::now(), revision));
            }
        }
        if minute == fleet.minutes / 2 {
            let leader = leader(&world).await;
            world.borrow_mut().crash_next[leader] = true;
        }
        let restart = thread_rng().gen_range(2..replicas.max(3));
        let mut w = world.borrow_mut();
        if restart < w.replica_incarnations.len() {
            // From now on nothing of the old incarnation's connections arrives.
            w.replica_incarnations[restart] += 1;
            let _ = w.replica_inboxes[restart].unbounded_send(ToReplica::Restart);
        }
    }
}

/// Bytes allocated to hold `registry`: a copy of it rebuilt from its parts, all under a
/// counting allocator, measured while the copy lives (stats_alloc counts a reallocation's
/// growth in `bytes_allocated` and its shrinking in `bytes_deallocated`).
fn registry_bytes(registry: &Registry) -> u64 {
    let region = stats_alloc::Region::new(GLOBAL);
    let rebuilt =
        Registry::from_parts(registry.to_parts()).expect("a registry's own parts rebuild it");
    let change = region.change();
    drop(rebuilt);
    change
        .bytes_allocated
        .saturating_sub(change.bytes_deallocated) as u64
}

async fn simulate_fleet(fleet: Fleet) -> FleetFigures {
    let shape = Shape {
        nodes: 3,
        exclusive: false,
        replicas: fleet.replicas.max(3),
        tables: fleet.tables.max(1),
    };
    let (world, inboxes) = new_world(shape, Bugs::default(), Script::Random);
    world.borrow_mut().probe_garbage = false;
    {
        let mut w = world.borrow_mut();
        w.tuning = Tuning {
            checkpoint_every: NodeConfig::CHECKPOINT_EVERY,
            log_keep: NodeConfig::LOG_KEEP,
            checkpoint_deadline_ms: NodeConfig::CHECKPOINT_DEADLINE_MS,
            retention: Retention::DEFAULT,
            sweep_every_ms: NodeConfig::SWEEP_EVERY_MS,
        };
        w.watching = fleet.watching;
    }
    for id in 0..shape.nodes {
        madsim::task::spawn_local(supervise(world.clone(), id));
    }
    madsim::task::spawn_local(monitor(world.clone()));
    let tables = create_tables(&world).await;
    {
        let mut w = world.borrow_mut();
        w.faults = Faults {
            message_delay_ms: 2,
            lag: 0.000_1,
            ..Faults::default()
        };
        let away = replica_id(1);
        for node in 0..shape.nodes {
            w.blocked.insert((node, away));
            w.blocked.insert((away, node));
        }
        w.away = Some(Away {
            replica: 1,
            back: None,
            caught_up_ms: None,
        });
    }
    // A tenth of the replicas join a quarter of the way in.
    let late = shape.replicas / 10;
    let joined = Rc::new(std::cell::Cell::new(shape.replicas - late));
    let done = Rc::new(RefCell::new(false));
    let replicas: Vec<_> = inboxes
        .into_iter()
        .enumerate()
        .map(|(i, (s, r))| {
            let (world, done, joined) = (world.clone(), done.clone(), joined.clone());
            madsim::task::spawn_local(async move {
                if i >= joined.get() {
                    sleep(Duration::from_secs(fleet.minutes * 15)).await;
                    joined.set(joined.get().max(i + 1));
                }
                replica(world, i, s, r, done).await;
            })
        })
        .collect();
    // The figures count from when the replicas that start now have caught up with the
    // setup (each read the namespace and the tables once); late joiners', restarted
    // replicas' and the away replica's catch-ups count.
    let setup = world.borrow().revision();
    let first = joined.get() - 1; // all but the away replica
    while world.borrow().checks.replicas.reached(setup) < first {
        sleep(Duration::from_millis(100)).await;
    }
    world.borrow_mut().metrics = Metrics::sized(shape.nodes);
    let started = Instant::now();
    let stop = Rc::new(std::cell::Cell::new(false));
    let last: LastAck = Rc::default();
    madsim::task::spawn_local(fleet_events(world.clone(), fleet));
    madsim::task::spawn_local(fleet_reads(
        world.clone(),
        fleet,
        stop.clone(),
        last.clone(),
        joined,
    ));
    let load = madsim::task::spawn_local(fleet_load(
        world.clone(),
        fleet,
        tables.clone(),
        stop.clone(),
        last,
    ));
    sleep(Duration::from_secs(fleet.minutes * 60)).await;
    stop.set(true);
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let settle = async {
        load.await.expect("load");
        *done.borrow_mut() = true;
        for r in replicas {
            r.await.expect("replica");
        }
    };
    madsim::time::timeout(LIVENESS_BOUND, settle)
        .await
        .unwrap_or_else(|_| panic!("the fleet did not converge within {LIVENESS_BOUND:?}"));
    let mut w = world.borrow_mut();
    let history = w.registry();
    w.checks.commits.check_history(&history, &tables, true);
    for i in 0..shape.replicas {
        let registry = w.replica_final[i].clone().expect("replica finished");
        w.checks.replicas.converged(i, &registry, &history);
    }
    w.checks.assert_clean();
    let m = &w.metrics;
    let commits = w.checks.commits.acknowledged_count() as f64;
    let events: u64 = m.events_sent.iter().sum();
    let heartbeats: u64 = m.heartbeats_sent.iter().sum();
    let away = w.away.expect("the fleet has an away replica");
    FleetFigures {
        replicas: shape.replicas,
        tables: shape.tables,
        commits: commits as u64,
        queries: m.queries,
        events_per_commit: events as f64 / commits,
        bytes_per_commit: m.event_bytes_sent.iter().sum::<u64>() as f64 / commits,
        heartbeats_per_replica_minute: heartbeats as f64 / shape.replicas as f64 / minutes,
        leader_items_per_commit: m.leader_items_sent as f64 / commits,
        busiest_node_share: m.events_sent.iter().copied().max().unwrap_or(0) as f64
            / events.max(1) as f64,
        log_reads_per_commit: m.log_reads.iter().sum::<u64>() as f64 / commits,
        warm_queries: m.warm_queries,
        calls_per_warm_query: m.calls_for_warm_queries as f64 / m.warm_queries.max(1) as f64,
        streams_opened: m.streams_opened,
        snapshots_fetched: m.snapshots_fetched,
        cache_bytes: registry_bytes(w.replica_final[0].as_ref().expect("replica finished")),
        catch_up_ms: away
            .caught_up_ms
            .expect("the away replica caught up with the store"),
    }
}

fn run(seed: u64, shape: Shape, bugs: Bugs) -> Outcome {
    run_script(seed, shape, bugs, Script::Random)
}

fn run_script(seed: u64, shape: Shape, bugs: Bugs, script: Script) -> Outcome {
    let runtime = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
    runtime.block_on(simulate(shape, bugs, script))
}

fn run_fleet(seed: u64, fleet: Fleet) -> FleetFigures {
    let runtime = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
    runtime.block_on(simulate_fleet(fleet))
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

/// Prints the command that replays this run's seed when the run panics. (madsim's own
/// note names only the variable.)
struct Replay {
    test: &'static str,
    seed: u64,
}

impl Replay {
    fn new(test: &'static str) -> Self {
        let seed = madsim::runtime::Handle::current().seed();
        Self { test, seed }
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let Self { test, seed } = self;
            eprintln!(
                "{test} failed for seed {seed}; replay it with:\n  MADSIM_TEST_SEED={seed} MADSIM_TEST_NUM=1 RUSTFLAGS=\"--cfg madsim\" CARGO_TARGET_DIR=target/madsim cargo test -p lake-simtests --test cluster {test}"
            );
        }
    }
}

// The sweeps run under madsim's own seed handling: `MADSIM_TEST_SEED` (first seed; default
// the clock), `MADSIM_TEST_NUM` (seeds; `.ci/test.sh` runs 300), `MADSIM_TEST_JOBS`,
// `MADSIM_TEST_CHECK_DETERMINISM` (runs a seed twice and compares every random draw).

#[madsim::test]
async fn cluster_under_faults() {
    let _replay = Replay::new("cluster_under_faults");
    simulate(CLUSTER, Bugs::default(), Script::Random).await;
}

/// The embedded `lake serve`: one exclusive node, crashed, paused (its timers fire late)
/// and restarted under store and stream faults. (This replaces the separate
/// single-leader simulation that drove its own copy of the coordinator loop.)
#[madsim::test]
async fn embedded_node_under_faults() {
    let _replay = Replay::new("embedded_node_under_faults");
    simulate(EMBEDDED, Bugs::default(), Script::Random).await;
}

/// Runs the named scenario `script` on `shape` at seeds 1 to 4 (each deterministic: the
/// test is its own replay) and checks that the situation was really forced each time.
fn scenario(shape: Shape, script: Script) {
    for seed in 1..=4 {
        let outcome = std::panic::catch_unwind(|| run_script(seed, shape, Bugs::default(), script))
            .unwrap_or_else(|panic| {
                eprintln!("{script:?} failed at seed {seed}");
                std::panic::resume_unwind(panic)
            });
        assert!(
            outcome.fired > 0,
            "{script:?} never happened at seed {seed}"
        );
    }
}

#[test]
fn a_replica_watching_a_follower_gets_commits_through_its_log_tail() {
    scenario(CLUSTER, Script::ReplicaWatchesAFollower);
}

#[test]
fn a_leader_paused_past_its_lease_with_a_write_in_flight() {
    scenario(CLUSTER, Script::LeaderPausedWithWriteInFlight);
}

#[test]
fn an_embedded_node_paused_with_a_write_in_flight_keeps_serving() {
    scenario(EMBEDDED, Script::LeaderPausedWithWriteInFlight);
}

#[test]
fn a_store_answer_lost_after_apply_then_failover() {
    scenario(CLUSTER, Script::AnswerLostAfterApplyThenFailover);
}

#[test]
fn a_replica_lagging_beyond_the_watch_buffer() {
    scenario(CLUSTER, Script::ReplicaLaggingBeyondWatchBuffer);
}

#[test]
fn a_one_way_partition_from_the_leader_to_the_store() {
    scenario(CLUSTER, Script::OneWayPartitionLeaderToStore);
}

#[test]
fn clocks_drifting_at_the_configured_bound() {
    scenario(CLUSTER, Script::ClockDriftAtTheBound);
}

#[test]
fn a_node_restarted_during_reconcile() {
    scenario(CLUSTER, Script::RestartDuringReconcile);
}

#[test]
fn a_replica_away_past_the_truncated_log_resyncs_from_a_snapshot() {
    scenario(CLUSTER, Script::ReplicaAwayPastTruncation);
}

/// The same seed gives the same run, bit for bit (what makes a printed seed a replay).
#[test]
fn a_seed_replays_identically() {
    let first = env_u64("MADSIM_TEST_SEED").unwrap_or(7);
    for seed in first..first + 3 {
        let once = run(seed, CLUSTER, Bugs::default()).trace;
        let twice = run(seed, CLUSTER, Bugs::default()).trace;
        assert_eq!(once, twice, "seed {seed} ran differently twice");
    }
}

/// Runs `shape` with `bugs` planted over up to 64 seeds and returns the first failure's
/// seed and message.
fn first_failure(shape: Shape, bugs: Bugs) -> Option<(u64, String)> {
    (0..64u64).find_map(|seed| {
        let panic = std::panic::catch_unwind(|| run(seed, shape, bugs)).err()?;
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Some((seed, message))
    })
}

/// Asserts that `bugs` planted in `shape` is caught by the `family` checker.
fn caught_by(shape: Shape, bugs: Bugs, family: &str) {
    let (seed, message) = first_failure(shape, bugs)
        .unwrap_or_else(|| panic!("64 seeds with {bugs:?} went unnoticed"));
    assert!(
        message.contains(&format!("{family} checker:")),
        "seed {seed} failed with {bugs:?}, but not in the {family} checker: {message}"
    );
}

/// With the store's epoch fence planted off, some seed lets a deposed leader's write land
/// and the fencing checker reports exactly that.
#[test]
fn a_store_that_skips_the_fence_is_caught_by_the_fencing_checker() {
    let bugs = Bugs {
        skip_fence: true,
        ..Bugs::default()
    };
    caught_by(CLUSTER, bugs, "fencing");
}

/// Events published before they are durable reach replicas; when the write then fails, a
/// replica holds history the store never had.
#[test]
fn publishing_before_durable_is_caught_by_the_replicas_checker() {
    let bugs = Bugs {
        publish_early: true,
        ..Bugs::default()
    };
    caught_by(CLUSTER, bugs, "replicas");
}

#[test]
fn serving_below_a_token_is_caught_by_the_replicas_checker() {
    let bugs = Bugs {
        serve_below_token: true,
        ..Bugs::default()
    };
    caught_by(EMBEDDED, bugs, "replicas");
}

/// A store that acknowledges an append it never applied: the version is handed out again
/// and the acknowledged commit is missing from the history.
#[test]
fn an_acknowledged_write_the_store_lost_is_caught_by_the_commits_checker() {
    let bugs = Bugs {
        lose_acknowledged_appends: true,
        ..Bugs::default()
    };
    caught_by(CLUSTER, bugs, "commits");
}

/// A collection of dropped tables' files that ignores the registry's next id takes a
/// table a lagging replica has not heard of for a dropped one: the garbage checker says so.
#[test]
fn collecting_a_table_a_lagging_replica_has_not_seen_is_caught_by_the_garbage_checker() {
    let bugs = Bugs {
        gc_ignores_next_id: true,
        ..Bugs::default()
    };
    caught_by(CLUSTER, bugs, "garbage");
}

/// A cleanup of expired versions' files that removes them as soon as they expire takes a
/// version a reader pinned just before: the versions checker says so.
#[test]
fn removing_versions_as_soon_as_they_expire_is_caught_by_the_versions_checker() {
    let bugs = Bugs {
        gc_ignores_pins: true,
        ..Bugs::default()
    };
    caught_by(CLUSTER, bugs, "versions");
}

/// Checks one fleet run's figures: warm reads never call Metasrv, most reads are warm,
/// and every replica got every commit.
fn check_fleet(figures: &FleetFigures) {
    assert_eq!(
        figures.calls_per_warm_query, 0.0,
        "warm reads called Metasrv: {figures}"
    );
    assert!(
        figures.warm_queries > figures.queries / 2,
        "most reads should find the cache warm: {figures}"
    );
    assert!(
        figures.events_per_commit >= (figures.replicas - 1) as f64,
        "fewer events sent than replicas per commit: {figures}"
    );
}

/// The fleet (CI's size by default, [`Fleet::from_env`]) run twice at the same seed
/// (`MADSIM_TEST_SEED`, default 1): replicas spread over the nodes, then all watching the
/// leader. Through late joins, restarts, lagging streams, a replica away for minutes and a
/// leader failover, the checkers hold (every acknowledged commit in the history once, every
/// read at its token, every replica converged); reads never call Metasrv; spreading the
/// streams takes most of the fan-out off the leader. Prints the figures.
/// `LAKE_FLEET_WATCHING=spread` (or `leader`) runs only that one (for large fleets).
#[test]
fn a_fleet_follows_every_commit_without_calling_metasrv_per_read() {
    let seed = env_u64("MADSIM_TEST_SEED").unwrap_or(1);
    let only = std::env::var("LAKE_FLEET_WATCHING").ok();
    let run = |watching: Watching, name: &str, label: &str| {
        let wanted = only.as_deref().is_none_or(|o| o == name);
        wanted.then(|| {
            let figures = run_fleet(seed, Fleet::from_env(watching));
            eprintln!("watch streams {label}: {figures}");
            check_fleet(&figures);
            figures
        })
    };
    let spread = run(Watching::Spread, "spread", "spread over the nodes");
    let on_leader = run(Watching::Leader, "leader", "all at the leader");
    if let (Some(spread), Some(on_leader)) = (spread, on_leader) {
        assert!(
            spread.leader_items_per_commit < 0.6 * on_leader.leader_items_per_commit,
            "spreading the streams did not take the fan-out off the leader: {} vs {} items per commit",
            spread.leader_items_per_commit,
            on_leader.leader_items_per_commit
        );
    }
}
