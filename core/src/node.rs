//! One Metasrv node: the machine that composes the [`Election`] and, while this node
//! serves, a [`Coordinator`] over the store's log. The tokio shell (`lake-metasrv`) and the
//! cluster simulation (`lake-simtests`) both drive this machine; neither decides anything a
//! node decides.
//!
//! What it owns:
//! * **Terms.** Each [`ElectionOutput::Elected`] opens a serving term: the newest
//!   checkpoint is read ([`StoreCall::ReadCheckpoint`]) and the log after it
//!   ([`StoreCall::ReadLog`]) replayed into a new [`Coordinator`] before anything is served (reconciliation adopts what an earlier leader left with an unknown outcome).
//!   A node can serve the same epoch twice (its lease lapsed, then a late renewal confirmed
//!   it), and each coordinator numbers its writes from 1, so every store call belongs to the
//!   term that issued it and an answer for an earlier term is dropped. (Found by the
//!   cluster simulation, seed 23957.)
//! * **Admission.** A request that arrives while this node is not ready (not elected, or
//!   still reading its log) waits in a queue, up to `queue_wait_ms`, and is refused with
//!   [`CommitError::NotLeader`] (naming the leader) as soon as another node leads. A node
//!   that does not serve but knows the leader tells its callers where to go
//!   ([`NodeState::forward_to`]).
//! * **Fencing.** Every [`StoreCall::Append`] carries the [`Fence`] of the epoch it was
//!   planned for; a write planned after this node's lease lapsed fails as not written
//!   without reaching the store, and the step down follows.
//! * **Store deadlines.** Every call carries `deadline_ms` (`store_deadline_ms` after it
//!   was made; `checkpoint_deadline_ms` for checkpoint reads and writes); an answer that has not come by
//!   then is taken as an unknown outcome (a write may still apply: the coordinator reads
//!   the log again), and a late answer is ignored. A failed log read is retried after
//!   `load_retry_ms` while the election still leads: nothing is served from a view that may
//!   be stale, and giving up the term would leave the election leading a node that never
//!   serves.
//! * **Checkpoints.** Once `checkpoint_every` events were appended since the last
//!   checkpoint, the leader writes one of its registry and truncates the log before it,
//!   keeping the last `log_keep` events for watchers a little behind
//!   ([`StoreCall::Checkpoint`], fenced like an append). One is in flight at a time; a
//!   failed one is tried again after another `checkpoint_every` events. A log read that
//!   finds its start truncated (a term of this node that outlived its answer truncated it)
//!   starts the term over from the checkpoint.
//! * **Retention.** Every `sweep_every_ms` the leader sweeps the registry for history past
//!   its `retention` windows ([`crate::retention`]): a step queues expiries for at most
//!   [`NodeConfig::SWEEP_TABLES`] tables, written like any mutation; a sweep that stopped
//!   before the last table goes on [`NodeConfig::SWEEP_AGAIN_MS`] later.
//! * **Resigning.** [`NodeInput::Resign`] steps down, refuses what waits, writes the
//!   released lease and reports [`NodeOutput::Stopped`] once that write is answered (or
//!   its deadline passed).
//!
//! Calling contract (as for quinn-proto's `Connection` and str0m's `Rtc`): feed one
//! [`NodeInput`] with the node's clock through [`Node::handle`], then drain
//! [`Node::poll`] until it returns `None`, carrying out every [`NodeOutput`]; when no input
//! arrives, call `handle(NodeInput::Tick, now)` no later than [`Node::next_deadline_ms`].
//! Answer every [`NodeOutput::Call`] at most once with [`NodeInput::Answer`] and the same
//! `call` id; a call whose answer is lost is simply never answered.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::commit::{Input, Mutation, Output, Reply, RequestId};
use crate::election::{Election, ElectionConfig, ElectionInput, ElectionOutput, Fence, Lease};
use crate::error::CommitError;
use crate::registry::{ChangeEvent, Registry};
use crate::retention::Retention;
use crate::store::{AppendLimits, EventStore, StoreError};
use crate::{Coordinator, WriteOutcome};

/// Pairs a [`NodeOutput::Call`] with its [`NodeInput::Answer`]; unique per [`Node`].
pub type CallId = u64;

/// Settings of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeConfig {
    /// The node's election settings (its id and address among them).
    pub election: ElectionConfig,
    /// What one group commit may hold: the store's limits
    /// ([`crate::EventStore::append_limits`]) with at most [`Self::BATCH_MAX`] items.
    pub limits: AppendLimits,
    /// How long a request waits for this node to serve before it is refused, in ms.
    pub queue_wait_ms: i64,
    /// How long after a failed log read the node reads again, in ms.
    pub load_retry_ms: i64,
    /// How long a store call may take before its outcome counts as unknown, in ms.
    pub store_deadline_ms: i64,
    /// Events appended after the last checkpoint that make the leader write the next one
    /// (at least 1).
    pub checkpoint_every: u64,
    /// Events before a checkpoint's revision the truncation keeps, so that a watcher that
    /// far behind still catches up from the log (at least 1).
    pub log_keep: u64,
    /// How long a checkpoint read or write may take before its outcome counts as unknown,
    /// in ms: these move the whole registry.
    pub checkpoint_deadline_ms: i64,
    /// How much history each table keeps.
    pub retention: Retention,
    /// How often the leader sweeps for expired history, in ms (at least 1).
    pub sweep_every_ms: i64,
}

impl NodeConfig {
    /// Most mutations in one group commit, unless the store takes fewer.
    pub const BATCH_MAX: usize = 256;
    /// How long a request waits for an election: 10 s.
    pub const QUEUE_WAIT_MS: i64 = 10_000;
    /// How soon a failed log read is retried: 100 ms.
    pub const LOAD_RETRY_MS: i64 = 100;
    /// How long a store call may take: 5 s, past a synced RocksDB write on a starved
    /// machine and the DynamoDB SDK's own retries, and short enough that a lost answer
    /// does not stall commits for long (the coordinator then reads the log again).
    pub const STORE_DEADLINE_MS: i64 = 5_000;
    /// Most events one log read returns: a node reads its log in pages, each with its own
    /// deadline, so a long log is read however long it takes as a whole.
    pub const LOG_PAGE: usize = 4096;
    /// A checkpoint every 10,000 events: start-up and a replica's resync replay at most
    /// that many events after the checkpoint (plus [`Self::LOG_KEEP`] stay in the log).
    pub const CHECKPOINT_EVERY: u64 = 10_000;
    /// 10,000 events stay before a checkpoint: at a commit a second per table on 100
    /// tables, a replica away for 100 s still catches up from the log.
    pub const LOG_KEEP: u64 = 10_000;
    /// A checkpoint read or write may take a minute: a registry of 10,000 tables × 100
    /// versions encodes to 95 MB (RocksDB writes it in 0.9 s; DynamoDB moves it in 350 KB
    /// items in seconds).
    /// (A lost answer stalls a reconciling node this long, so it is not longer.)
    pub const CHECKPOINT_DEADLINE_MS: i64 = 60_000;
    /// A retention sweep a minute: windows are days, and each sweep is a scan of the
    /// registry (about a millisecond per 10,000 tables).
    pub const SWEEP_EVERY_MS: i64 = 60_000;
    /// Most tables one sweep step expires history from: one group commit's worth, so
    /// callers' requests queued behind a step wait for at most one extra write.
    pub const SWEEP_TABLES: usize = 64;
    /// How soon a sweep that stopped at [`Self::SWEEP_TABLES`] goes on: 1 s.
    pub const SWEEP_AGAIN_MS: i64 = 1_000;

    /// The settings Lake runs `election` with over a store whose appends fit `store`
    /// ([`crate::EventStore::append_limits`]): the constants above. The shell and the
    /// simulation both start nodes from this, so they group, wait and time out alike.
    pub fn new(election: ElectionConfig, store: AppendLimits) -> Self {
        Self {
            election,
            limits: AppendLimits {
                items: Self::BATCH_MAX.min(store.items).max(1),
                ..store
            },
            queue_wait_ms: Self::QUEUE_WAIT_MS,
            load_retry_ms: Self::LOAD_RETRY_MS,
            store_deadline_ms: Self::STORE_DEADLINE_MS,
            checkpoint_every: Self::CHECKPOINT_EVERY,
            log_keep: Self::LOG_KEEP,
            checkpoint_deadline_ms: Self::CHECKPOINT_DEADLINE_MS,
            retention: Retention::DEFAULT,
            sweep_every_ms: Self::SWEEP_EVERY_MS,
        }
    }
}

/// What a caller asks of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeRequest {
    /// Apply a mutation (answered once durable).
    Mutate(Mutation),
    /// Read the durable registry: answered with [`NodeOutput::Readable`].
    Read,
}

/// A store call the shell carries out against its [`crate::EventStore`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreCall {
    /// [`crate::EventStore::read_lease`]; answer [`StoreAnswer::Lease`].
    ReadLease,
    /// [`crate::EventStore::write_lease`]; answer [`StoreAnswer::Written`].
    WriteLease {
        expected: Option<Lease>,
        lease: Lease,
    },
    /// [`crate::EventStore::append`]; answer [`StoreAnswer::Written`].
    Append {
        fence: Fence,
        base_revision: u64,
        events: Vec<ChangeEvent>,
    },
    /// [`crate::EventStore::read_after`]; answer [`StoreAnswer::Log`].
    ReadLog { after: u64, limit: usize },
    /// [`crate::EventStore::read_checkpoint`]; answer [`StoreAnswer::Checkpoint`].
    ReadCheckpoint,
    /// [`crate::EventStore::write_checkpoint`] of `registry`, then (when `through` > 0)
    /// [`crate::EventStore::truncate`] through `through` under `fence`; answer
    /// [`StoreAnswer::Written`].
    Checkpoint {
        fence: Fence,
        registry: Registry,
        through: u64,
    },
}

impl StoreCall {
    /// Carries the call out against `store` (blocking: a store round trip). The shell and
    /// the simulation both run calls through this, so they ask the store the same thing.
    pub fn run(self, store: &dyn EventStore) -> StoreAnswer {
        match self {
            Self::ReadLease => StoreAnswer::Lease(store.read_lease()),
            Self::WriteLease { expected, lease } => {
                StoreAnswer::Written(store.write_lease(expected.as_ref(), &lease))
            }
            Self::Append {
                fence,
                base_revision,
                events,
            } => StoreAnswer::Written(store.append(&fence, base_revision, &events)),
            Self::ReadLog { after, limit } => StoreAnswer::Log(store.read_after(after, limit)),
            Self::ReadCheckpoint => StoreAnswer::Checkpoint(store.read_checkpoint()),
            Self::Checkpoint {
                fence,
                registry,
                through,
            } => StoreAnswer::Written(store.write_checkpoint(&registry).and_then(|()| {
                if through == 0 {
                    Ok(())
                } else {
                    store.truncate(&fence, through)
                }
            })),
        }
    }
}

/// The store's answer to a [`StoreCall`].
#[derive(Debug)]
pub enum StoreAnswer {
    /// The answer to [`StoreCall::ReadLease`]: the lease record, `None` if never written.
    Lease(Result<Option<Lease>, StoreError>),
    /// The answer to [`StoreCall::WriteLease`], [`StoreCall::Append`] or
    /// [`StoreCall::Checkpoint`]; a failure's
    /// [`StoreError::not_written`] tells a refusal from an unknown outcome.
    Written(Result<(), StoreError>),
    /// The answer to [`StoreCall::ReadLog`]: the events after `after`, in order.
    Log(Result<Vec<ChangeEvent>, StoreError>),
    /// The answer to [`StoreCall::ReadCheckpoint`]: the newest checkpoint, if any.
    Checkpoint(Result<Option<Registry>, StoreError>),
}

/// Inputs of a [`Node`].
#[derive(Debug)]
pub enum NodeInput {
    /// A caller's request; `id` is the caller's and comes back in [`NodeOutput::Reply`].
    Request { id: RequestId, request: NodeRequest },
    /// The answer to [`NodeOutput::Call`] `call`.
    Answer { call: CallId, answer: StoreAnswer },
    /// Time passed.
    Tick,
    /// Stop: step down, refuse what waits, release the lease.
    Resign,
}

/// Something worth a log line (and a checker's attention).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeEvent {
    /// Won `epoch`; reading the log before serving.
    Elected { epoch: u64 },
    /// Serving `epoch` from the registry at `revision`.
    Serving { epoch: u64, revision: u64 },
    /// No longer leads `epoch`.
    SteppedDown { epoch: u64 },
    /// The log does not replay: this term serves nothing.
    Unreplayable { error: String },
    /// A store call failed (or passed its deadline); `what` names it.
    StoreFailed { what: &'static str, error: String },
    /// The released lease was written (or the write failed: `released` false).
    Released { released: bool },
    /// A checkpoint at `revision` was written and the log truncated through `through`.
    Checkpointed { revision: u64, through: u64 },
}

/// Outputs of a [`Node`]; see the module docs.
#[derive(Debug)]
pub enum NodeOutput {
    /// Carry out `op` and feed its answer back as [`NodeInput::Answer`] with `call`. The
    /// node stops waiting at `deadline_ms` (its clock).
    Call {
        call: CallId,
        op: StoreCall,
        deadline_ms: i64,
    },
    /// Answer mutation `id`.
    Reply {
        id: RequestId,
        result: Result<Reply, CommitError>,
    },
    /// Answer read `id`: on `Ok`, read [`Node::registry`] before feeding the next input.
    Readable {
        id: RequestId,
        result: Result<(), CommitError>,
    },
    /// Durable events, in revision order and without gaps within a term, for watchers.
    Publish(Vec<ChangeEvent>),
    /// For logs and checkers.
    Event(NodeEvent),
    /// After [`NodeInput::Resign`]: the lease is released (or cannot be); the node is done.
    Stopped,
}

/// One node's view of the cluster, for health, readiness and forwarding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeState {
    /// This node's id.
    pub node: String,
    /// The epoch this node serves as leader (elected and the log loaded).
    pub serving: Option<u64>,
    /// The lease as this node last read or wrote it.
    pub leader: Option<Lease>,
    /// The store revision this node last saw (kept while it does not serve).
    pub revision: u64,
}

impl NodeState {
    /// The address of another node that holds the lease, where this node sends callers
    /// (forwarding a request at most once).
    pub fn forward_to(&self) -> Option<&str> {
        if self.serving.is_some() {
            return None;
        }
        self.leader
            .as_ref()
            .filter(|l| !l.is_released() && l.holder != self.node && !l.address.is_empty())
            .map(|l| l.address.as_str())
    }
}

/// What a store call was for.
#[derive(Clone, Copy, Debug)]
enum Purpose {
    ReadLease,
    WriteLease {
        write_id: u64,
    },
    Release,
    Append {
        term: u64,
        write_id: u64,
    },
    Load {
        term: u64,
        reconcile: bool,
        after: u64,
    },
    ReadCheckpoint {
        term: u64,
    },
    Checkpoint {
        term: u64,
        revision: u64,
        through: u64,
    },
}

/// What a term reads again after a failed read.
#[derive(Clone, Copy, Debug)]
enum Reread {
    /// The checkpoint (reconciliation starts over).
    Checkpoint,
    /// The log after `after`, to reconcile or for the coordinator.
    Log { reconcile: bool, after: u64 },
}

/// The serving term: from [`ElectionOutput::Elected`] to the step down.
struct Term {
    epoch: u64,
    /// Unique per [`Node`].
    id: u64,
    /// `None` while the log is read (reconciliation).
    coordinator: Option<Coordinator>,
    /// The log replayed so far while it is read page by page (reconciliation).
    replayed: Registry,
    /// Mutations handed to the coordinator and not answered yet.
    waiting: BTreeSet<RequestId>,
    /// When to read again after a failed read, and what.
    retry: Option<(i64, Reread)>,
    /// The last revision published in this term.
    published: u64,
    /// A checkpoint is due once the registry reaches this revision.
    checkpoint_due: u64,
    /// A checkpoint call is in flight.
    checkpointing: bool,
    /// When the next retention sweep step is due (once serving).
    sweep_at: i64,
}

/// A Metasrv node. See the module docs for the calling contract.
pub struct Node {
    config: NodeConfig,
    election: Election,
    term: Option<Term>,
    terms: u64,
    queue: VecDeque<(i64, RequestId, NodeRequest)>,
    calls: BTreeMap<CallId, (Purpose, i64)>,
    next_call: CallId,
    revision: u64,
    resigning: bool,
    outputs: VecDeque<NodeOutput>,
}

impl Node {
    /// A node that has seen nothing yet; its first tick reads the lease.
    ///
    /// # Errors
    /// The reason when the election settings are inconsistent
    /// ([`ElectionConfig::validate`]) or a limit is 0.
    pub fn new(config: NodeConfig) -> Result<Self, String> {
        let AppendLimits {
            items,
            bytes,
            item_bytes,
        } = config.limits;
        if items == 0 || bytes == 0 || item_bytes == 0 {
            return Err(format!(
                "group commit limits must be at least 1: {:?}",
                config.limits
            ));
        }
        if config.checkpoint_every == 0 || config.log_keep == 0 || config.sweep_every_ms < 1 {
            return Err(format!(
                "checkpoint_every ({}), log_keep ({}) and sweep_every_ms ({}) must be at least 1",
                config.checkpoint_every, config.log_keep, config.sweep_every_ms
            ));
        }
        config.retention.validate()?;
        let election = Election::new(config.election.clone())?;
        Ok(Self {
            config,
            election,
            term: None,
            terms: 0,
            queue: VecDeque::new(),
            calls: BTreeMap::new(),
            next_call: 1,
            revision: 0,
            resigning: false,
            outputs: VecDeque::new(),
        })
    }

    /// The node's settings.
    pub fn config(&self) -> &NodeConfig {
        &self.config
    }

    /// The election this node runs (for checkers: [`Election::leading`]).
    pub fn election(&self) -> &Election {
        &self.election
    }

    /// The durable registry while this node serves.
    pub fn registry(&self) -> Option<&Registry> {
        self.term
            .as_ref()?
            .coordinator
            .as_ref()
            .map(Coordinator::registry)
    }

    /// Whether this node serves at `now_ms`: elected, its log read (and not reading it
    /// again after a failed write), its lease valid. Requests that arrive while it is not
    /// wait in the admission queue, where `queue_wait_ms` bounds them.
    pub fn ready(&self, now_ms: i64) -> bool {
        self.term.as_ref().is_some_and(|t| {
            t.coordinator.as_ref().is_some_and(|c| !c.loading())
                && self.election.leading(now_ms) == Some(t.epoch)
        })
    }

    /// This node's view at `now_ms`.
    pub fn state(&self, now_ms: i64) -> NodeState {
        NodeState {
            node: self.config.election.node.clone(),
            // Serving (for health and forwarding) even while it reads its log again
            // after a failed write: requests wait here for that, not elsewhere.
            serving: self
                .term
                .as_ref()
                .filter(|t| {
                    t.coordinator.is_some() && self.election.leading(now_ms) == Some(t.epoch)
                })
                .map(|t| t.epoch),
            leader: self.election.leader().cloned(),
            revision: self.revision,
        }
    }

    /// When [`NodeInput::Tick`] is due, in this node's milliseconds.
    pub fn next_deadline_ms(&self) -> i64 {
        let mut next = self.election.next_deadline_ms();
        if let Some((since, _, _)) = self.queue.front() {
            next = next.min(since.saturating_add(self.config.queue_wait_ms));
        }
        if let Some(term) = &self.term {
            if let Some((at, _)) = term.retry {
                next = next.min(at);
            }
            if term.coordinator.is_some() {
                next = next.min(term.sweep_at);
            }
        }
        for (_, deadline) in self.calls.values() {
            next = next.min(*deadline);
        }
        next
    }

    /// Feeds one input at this node's time `now_ms`; drain [`Self::poll`] afterwards.
    pub fn handle(&mut self, input: NodeInput, now_ms: i64) {
        match input {
            NodeInput::Request { id, request } => self.request(id, request, now_ms),
            NodeInput::Answer { call, answer } => {
                if let Some((purpose, _)) = self.calls.remove(&call) {
                    self.answer(purpose, answer, now_ms);
                }
            }
            NodeInput::Tick => {}
            NodeInput::Resign => self.resign(now_ms),
        }
        self.on_time(now_ms);
    }

    /// Next output, or `None` until the next input.
    #[must_use]
    pub fn poll(&mut self) -> Option<NodeOutput> {
        self.outputs.pop_front()
    }

    fn on_time(&mut self, now_ms: i64) {
        let expired: Vec<(CallId, Purpose)> = self
            .calls
            .iter()
            .filter(|(_, (_, deadline))| now_ms >= *deadline)
            .map(|(call, (purpose, _))| (*call, *purpose))
            .collect();
        for (call, purpose) in expired {
            self.calls.remove(&call);
            let allowed = match purpose {
                Purpose::ReadCheckpoint { .. } | Purpose::Checkpoint { .. } => {
                    self.config.checkpoint_deadline_ms
                }
                _ => self.config.store_deadline_ms,
            };
            let error = || StoreError::Io(format!("no answer within {allowed} ms"));
            let answer = match purpose {
                Purpose::ReadLease => StoreAnswer::Lease(Err(error())),
                Purpose::Load { .. } => StoreAnswer::Log(Err(error())),
                Purpose::ReadCheckpoint { .. } => StoreAnswer::Checkpoint(Err(error())),
                Purpose::WriteLease { .. }
                | Purpose::Release
                | Purpose::Append { .. }
                | Purpose::Checkpoint { .. } => StoreAnswer::Written(Err(error())),
            };
            self.answer(purpose, answer, now_ms);
        }
        if self.resigning {
            return;
        }
        self.elect(ElectionInput::Tick, now_ms);
        if let Some(term) = &mut self.term
            && let Some((at, reread)) = term.retry
            && now_ms >= at
        {
            term.retry = None;
            let id = term.id;
            match reread {
                Reread::Checkpoint => self.call(
                    Purpose::ReadCheckpoint { term: id },
                    StoreCall::ReadCheckpoint,
                    now_ms,
                ),
                Reread::Log { reconcile, after } => self.load(id, reconcile, after, now_ms),
            }
        }
        self.admit(now_ms);
        self.sweep_if_due(now_ms);
    }

    /// Runs a retention sweep step when one is due (see the module docs).
    fn sweep_if_due(&mut self, now_ms: i64) {
        let ready = self.ready(now_ms);
        let Some(term) = &mut self.term else {
            return;
        };
        if term.coordinator.is_none() || now_ms < term.sweep_at {
            return;
        }
        if !ready {
            // Reading the log again, or the lease lapsed: look again a little later (the
            // deadline must move, or the shell would tick at once, again and again).
            term.sweep_at = now_ms.saturating_add(NodeConfig::SWEEP_AGAIN_MS);
            return;
        }
        self.coordinate(
            Input::Sweep {
                max_tables: NodeConfig::SWEEP_TABLES,
            },
            now_ms,
        );
        if let Some(term) = &mut self.term
            && let Some(coordinator) = &term.coordinator
        {
            let wait = if coordinator.sweeping() {
                NodeConfig::SWEEP_AGAIN_MS
            } else {
                self.config.sweep_every_ms
            };
            term.sweep_at = now_ms.saturating_add(wait);
        }
    }

    fn call(&mut self, purpose: Purpose, op: StoreCall, now_ms: i64) {
        let call = self.next_call;
        self.next_call += 1;
        let allowed = match op {
            StoreCall::ReadCheckpoint | StoreCall::Checkpoint { .. } => {
                self.config.checkpoint_deadline_ms
            }
            _ => self.config.store_deadline_ms,
        };
        let deadline_ms = now_ms.saturating_add(allowed);
        self.calls.insert(call, (purpose, deadline_ms));
        self.outputs.push_back(NodeOutput::Call {
            call,
            op,
            deadline_ms,
        });
    }

    fn event(&mut self, event: NodeEvent) {
        self.outputs.push_back(NodeOutput::Event(event));
    }

    /// Refuses request `id` with `error`.
    fn refuse(&mut self, id: RequestId, request: &NodeRequest, error: CommitError) {
        self.outputs.push_back(match request {
            NodeRequest::Mutate(_) => NodeOutput::Reply {
                id,
                result: Err(error),
            },
            NodeRequest::Read => NodeOutput::Readable {
                id,
                result: Err(error),
            },
        });
    }

    fn elect(&mut self, input: ElectionInput, now_ms: i64) {
        self.election.handle(input, now_ms);
        while let Some(output) = self.election.poll() {
            match output {
                ElectionOutput::ReadLease => {
                    self.call(Purpose::ReadLease, StoreCall::ReadLease, now_ms);
                }
                ElectionOutput::WriteLease {
                    write_id,
                    expected,
                    lease,
                } => {
                    let purpose = if self.resigning {
                        Purpose::Release
                    } else {
                        Purpose::WriteLease { write_id }
                    };
                    self.call(purpose, StoreCall::WriteLease { expected, lease }, now_ms);
                }
                ElectionOutput::Elected { epoch } => {
                    self.event(NodeEvent::Elected { epoch });
                    self.open_term(epoch, now_ms, now_ms);
                }
                ElectionOutput::SteppedDown { epoch } => {
                    self.event(NodeEvent::SteppedDown { epoch });
                    self.step_down();
                }
            }
        }
    }

    /// Opens a serving term of `epoch` (leaving the current one): reconciliation starts
    /// with the checkpoint, read at `read_at_ms`.
    fn open_term(&mut self, epoch: u64, read_at_ms: i64, now_ms: i64) {
        self.step_down();
        self.terms += 1;
        let id = self.terms;
        self.term = Some(Term {
            epoch,
            id,
            coordinator: None,
            replayed: Registry::new(),
            waiting: BTreeSet::new(),
            retry: None,
            published: 0,
            checkpoint_due: u64::MAX,
            checkpointing: false,
            sweep_at: i64::MAX,
        });
        if read_at_ms > now_ms {
            if let Some(term) = &mut self.term {
                term.retry = Some((read_at_ms, Reread::Checkpoint));
            }
        } else {
            self.call(
                Purpose::ReadCheckpoint { term: id },
                StoreCall::ReadCheckpoint,
                now_ms,
            );
        }
    }

    /// Leaves the serving term: callers waiting on a write hear "outcome unknown".
    fn step_down(&mut self) {
        if let Some(term) = self.term.take() {
            for id in term.waiting {
                self.outputs.push_back(NodeOutput::Reply {
                    id,
                    result: Err(CommitError::OutcomeUnknown(
                        "this Metasrv node lost its leadership".into(),
                    )),
                });
            }
        }
    }

    fn not_leader(&self) -> CommitError {
        let leader = if self.resigning {
            "this Metasrv node is shutting down".into()
        } else {
            match self.election.leader() {
                Some(l) if !l.is_released() && l.holder != self.config.election.node => {
                    format!("leader is {} at {}", l.holder, l.address)
                }
                _ if self.term.is_some() => {
                    "this Metasrv node leads but is still reading its log".into()
                }
                _ => "no leader is elected yet".into(),
            }
        };
        CommitError::NotLeader { leader }
    }

    /// Whether another node leads, so that waiting here is pointless.
    fn other_leads(&self) -> bool {
        self.election
            .leader()
            .is_some_and(|l| !l.is_released() && l.holder != self.config.election.node)
    }

    fn request(&mut self, id: RequestId, request: NodeRequest, now_ms: i64) {
        if self.resigning || (!self.ready(now_ms) && self.other_leads()) {
            let error = self.not_leader();
            self.refuse(id, &request, error);
        } else if self.ready(now_ms) {
            self.serve(id, request, now_ms);
        } else {
            self.queue.push_back((now_ms, id, request));
        }
    }

    /// Serves `request` (the node is ready).
    fn serve(&mut self, id: RequestId, request: NodeRequest, now_ms: i64) {
        match request {
            NodeRequest::Read => self
                .outputs
                .push_back(NodeOutput::Readable { id, result: Ok(()) }),
            NodeRequest::Mutate(mutation) => {
                if let Some(term) = &mut self.term {
                    term.waiting.insert(id);
                }
                self.coordinate(Input::Request { id, mutation }, now_ms);
            }
        }
    }

    /// Serves queued requests once ready; refuses those that waited too long or that
    /// another node's leadership makes pointless.
    fn admit(&mut self, now_ms: i64) {
        while self.ready(now_ms)
            && let Some((_, id, request)) = self.queue.pop_front()
        {
            self.serve(id, request, now_ms);
        }
        while let Some((since, _, _)) = self.queue.front() {
            if now_ms < since.saturating_add(self.config.queue_wait_ms) && !self.other_leads() {
                break;
            }
            if let Some((_, id, request)) = self.queue.pop_front() {
                let error = self.not_leader();
                self.refuse(id, &request, error);
            }
        }
    }

    fn coordinate(&mut self, input: Input, now_ms: i64) {
        let fence = self.election.fence(now_ms);
        let mut inputs = VecDeque::from([input]);
        while let Some(input) = inputs.pop_front() {
            let Some(term) = &mut self.term else {
                return;
            };
            let Some(coordinator) = &mut term.coordinator else {
                return;
            };
            coordinator.handle(input, now_ms);
            let (epoch, id) = (term.epoch, term.id);
            let mut calls = Vec::new();
            while let Some(output) = coordinator.poll() {
                match output {
                    Output::Write(write) => {
                        match fence.clone().filter(|f| f.epoch == epoch) {
                            Some(fence) => calls.push((
                                Purpose::Append {
                                    term: id,
                                    write_id: write.write_id,
                                },
                                StoreCall::Append {
                                    fence,
                                    base_revision: write.base_revision,
                                    events: write.events,
                                },
                            )),
                            // The lease ran out while planning: fail the write without
                            // reaching the store; the step down follows.
                            None => inputs.push_back(Input::WriteFailed {
                                write_id: write.write_id,
                                outcome: WriteOutcome::NotWritten,
                                message: "this Metasrv node's leadership expired".into(),
                            }),
                        }
                    }
                    Output::Reply { id, result } => {
                        term.waiting.remove(&id);
                        self.outputs.push_back(NodeOutput::Reply { id, result });
                    }
                    Output::Publish(events) => {
                        for event in &events {
                            debug_assert_eq!(
                                event.revision,
                                term.published + 1,
                                "a term publishes a gap-free history"
                            );
                            term.published = event.revision;
                        }
                        debug_assert!(
                            term.published <= coordinator.registry().revision(),
                            "only durable events are published"
                        );
                        self.revision = coordinator.registry().revision();
                        self.outputs.push_back(NodeOutput::Publish(events));
                    }
                    // A page: what it leaves out makes the next write fail its revision
                    // condition and load again.
                    Output::Load { after_revision } => calls.push((
                        Purpose::Load {
                            term: id,
                            reconcile: false,
                            after: after_revision,
                        },
                        StoreCall::ReadLog {
                            after: after_revision,
                            limit: NodeConfig::LOG_PAGE,
                        },
                    )),
                }
            }
            for (purpose, op) in calls {
                self.call(purpose, op, now_ms);
            }
        }
        self.checkpoint_if_due(fence, now_ms);
    }

    /// Writes a checkpoint of the serving registry when one is due (see the module docs).
    fn checkpoint_if_due(&mut self, fence: Option<Fence>, now_ms: i64) {
        let Some(term) = &mut self.term else {
            return;
        };
        let Some(coordinator) = &term.coordinator else {
            return;
        };
        let Some(fence) = fence.filter(|f| f.epoch == term.epoch) else {
            return;
        };
        let revision = coordinator.registry().revision();
        if term.checkpointing || revision < term.checkpoint_due {
            return;
        }
        term.checkpointing = true;
        let through = revision.saturating_sub(self.config.log_keep);
        let purpose = Purpose::Checkpoint {
            term: term.id,
            revision,
            through,
        };
        let op = StoreCall::Checkpoint {
            fence,
            registry: coordinator.registry().clone(),
            through,
        };
        self.call(purpose, op, now_ms);
    }

    /// Reads the log after `after` for term `term`: all of it to reconcile after an
    /// election, or the catch-up the coordinator asked for.
    fn load(&mut self, term: u64, reconcile: bool, after: u64, now_ms: i64) {
        let purpose = Purpose::Load {
            term,
            reconcile,
            after,
        };
        let op = StoreCall::ReadLog {
            after,
            limit: NodeConfig::LOG_PAGE,
        };
        self.call(purpose, op, now_ms);
    }

    fn serves(&self, term: u64) -> bool {
        self.term.as_ref().is_some_and(|t| t.id == term)
    }

    fn answer(&mut self, purpose: Purpose, answer: StoreAnswer, now_ms: i64) {
        match (purpose, answer) {
            (Purpose::ReadLease, StoreAnswer::Lease(result)) => match result {
                Ok(lease) => self.elect(ElectionInput::LeaseRead(lease), now_ms),
                Err(error) => self.failed("reading the lease", &error),
            },
            (Purpose::WriteLease { write_id }, StoreAnswer::Written(result)) => {
                let input = match result {
                    Ok(()) => ElectionInput::LeaseWritten { write_id },
                    Err(error) => {
                        self.failed("writing the lease", &error);
                        ElectionInput::LeaseWriteFailed {
                            write_id,
                            outcome: outcome_of(&error),
                        }
                    }
                };
                self.elect(input, now_ms);
            }
            (Purpose::Release, StoreAnswer::Written(result)) => {
                if let Err(error) = &result {
                    self.failed("releasing the lease", error);
                }
                self.event(NodeEvent::Released {
                    released: result.is_ok(),
                });
                self.outputs.push_back(NodeOutput::Stopped);
            }
            (Purpose::Append { term, write_id }, StoreAnswer::Written(result)) => {
                if !self.serves(term) {
                    return;
                }
                let input = match result {
                    Ok(()) => Input::WriteDone { write_id },
                    Err(error) => {
                        self.failed("appending to the log", &error);
                        Input::WriteFailed {
                            write_id,
                            outcome: outcome_of(&error),
                            message: error.to_string(),
                        }
                    }
                };
                self.coordinate(input, now_ms);
            }
            (
                Purpose::Load {
                    term,
                    reconcile,
                    after,
                },
                StoreAnswer::Log(result),
            ) => {
                if self.serves(term) {
                    self.loaded(reconcile, after, result, now_ms);
                }
            }
            (Purpose::ReadCheckpoint { term }, StoreAnswer::Checkpoint(result)) => {
                if self.serves(term) {
                    self.checkpoint_read(result, now_ms);
                }
            }
            (
                Purpose::Checkpoint {
                    term,
                    revision,
                    through,
                },
                StoreAnswer::Written(result),
            ) => {
                let every = self.config.checkpoint_every;
                let Some(t) = self.term.as_mut().filter(|t| t.id == term) else {
                    return;
                };
                t.checkpointing = false;
                t.checkpoint_due = revision.saturating_add(every);
                match result {
                    Ok(()) => self.event(NodeEvent::Checkpointed { revision, through }),
                    Err(error) => self.failed("writing a checkpoint", &error),
                }
                let fence = self.election.fence(now_ms);
                self.checkpoint_if_due(fence, now_ms);
            }
            (purpose, answer) => {
                debug_assert!(false, "{answer:?} does not answer {purpose:?}");
            }
        }
    }

    fn failed(&mut self, what: &'static str, error: &StoreError) {
        self.event(NodeEvent::StoreFailed {
            what,
            error: error.to_string(),
        });
    }

    fn loaded(
        &mut self,
        reconcile: bool,
        after: u64,
        result: Result<Vec<ChangeEvent>, StoreError>,
        now_ms: i64,
    ) {
        let events = match result {
            Ok(events) => events,
            // The log starts after what this term needs: start the term over from the
            // checkpoint that covers it (after the retry wait: a store whose marker is
            // ahead of its checkpoint would otherwise be asked again at once, forever).
            Err(error @ StoreError::Truncated { .. }) => {
                self.failed("reading the log", &error);
                if let Some(epoch) = self.term.as_ref().map(|t| t.epoch) {
                    let read_at = now_ms.saturating_add(self.config.load_retry_ms);
                    self.open_term(epoch, read_at, now_ms);
                }
                return;
            }
            Err(error) => {
                self.failed("reading the log", &error);
                if let Some(term) = &mut self.term {
                    term.retry = Some((
                        now_ms.saturating_add(self.config.load_retry_ms),
                        Reread::Log { reconcile, after },
                    ));
                }
                return;
            }
        };
        if !reconcile {
            self.coordinate(Input::Loaded(events), now_ms);
            return;
        }
        let Some(term) = &mut self.term else {
            return;
        };
        let full_page = events.len() >= NodeConfig::LOG_PAGE;
        if let Err(error) = term.replayed.replay(&events) {
            // Serving nothing is the only safe answer; the term ends, and the election
            // keeps the lease so no other node serves from this log either.
            self.event(NodeEvent::Unreplayable {
                error: error.to_string(),
            });
            self.step_down();
            return;
        }
        if full_page {
            let (id, after) = (term.id, term.replayed.revision());
            self.load(id, true, after, now_ms);
            return;
        }
        let registry = std::mem::take(&mut term.replayed);
        let revision = registry.revision();
        debug_assert!(term.coordinator.is_none(), "a term reconciles once");
        term.published = revision;
        term.checkpoint_due = term
            .checkpoint_due
            .saturating_add(self.config.checkpoint_every);
        term.coordinator = Some(
            Coordinator::with_limits(registry, self.config.limits)
                .with_retention(self.config.retention),
        );
        term.sweep_at = now_ms.saturating_add(self.config.sweep_every_ms);
        self.revision = revision;
        let epoch = term.epoch;
        self.event(NodeEvent::Serving { epoch, revision });
        self.admit(now_ms);
    }

    /// The checkpoint a reconciling term starts from: the log is read after it.
    fn checkpoint_read(&mut self, result: Result<Option<Registry>, StoreError>, now_ms: i64) {
        let Some(term) = &mut self.term else {
            return;
        };
        match result {
            Ok(checkpoint) => {
                term.replayed = checkpoint.unwrap_or_else(Registry::new);
                let (id, after) = (term.id, term.replayed.revision());
                // Counted from the checkpoint: `loaded` adds `checkpoint_every`.
                term.checkpoint_due = after;
                self.load(id, true, after, now_ms);
            }
            Err(error) => {
                term.retry = Some((
                    now_ms.saturating_add(self.config.load_retry_ms),
                    Reread::Checkpoint,
                ));
                self.failed("reading the checkpoint", &error);
            }
        }
    }

    fn resign(&mut self, now_ms: i64) {
        if self.resigning {
            return;
        }
        self.resigning = true;
        self.election.handle(ElectionInput::Resign, now_ms);
        let mut released = false;
        while let Some(output) = self.election.poll() {
            match output {
                ElectionOutput::WriteLease {
                    expected, lease, ..
                } => {
                    released = true;
                    self.call(
                        Purpose::Release,
                        StoreCall::WriteLease { expected, lease },
                        now_ms,
                    );
                }
                ElectionOutput::SteppedDown { epoch } => {
                    self.event(NodeEvent::SteppedDown { epoch });
                }
                ElectionOutput::ReadLease | ElectionOutput::Elected { .. } => {}
            }
        }
        self.step_down();
        for (_, id, request) in std::mem::take(&mut self.queue) {
            let error = self.not_leader();
            self.refuse(id, &request, error);
        }
        if !released {
            self.outputs.push_back(NodeOutput::Stopped);
        }
    }
}

fn outcome_of(error: &StoreError) -> WriteOutcome {
    if error.not_written() {
        WriteOutcome::NotWritten
    } else {
        WriteOutcome::Unknown
    }
}
