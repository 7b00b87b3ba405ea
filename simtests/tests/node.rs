//! Named scenarios of the Metasrv node machine (`lake_core::node`), driven step by step
//! over the simulations' store with a hand-held clock: each test puts one node in one
//! situation the swarm reaches only by chance and checks what the node decides.

use std::collections::VecDeque;

use lake_core::commit::{Applied, Mutation, Reply, RequestId};
use lake_core::election::ElectionConfig;
use lake_core::node::{
    CallId, Node, NodeConfig, NodeEvent, NodeInput, NodeOutput, NodeRequest, StoreAnswer, StoreCall,
};
use lake_core::store::contract::lease;
use lake_core::{ChangeKind, CommitError, EventStore, ManifestRef, Registry, Retention};
use lake_simtests::store::SimStore;

const LEASE_MS: i64 = 2_000;

fn election(node: &str, exclusive: bool) -> ElectionConfig {
    ElectionConfig {
        node: node.into(),
        address: format!("{node}:7000"),
        lease_ms: LEASE_MS,
        renew_interval_ms: 500,
        clock_bound_ms: 200,
        exclusive,
    }
}

/// One node, its store, its clock, the calls it made and what it answered.
struct Harness {
    node: Node,
    store: SimStore,
    now: i64,
    calls: VecDeque<(CallId, StoreCall)>,
    replies: Vec<(RequestId, Result<Reply, CommitError>)>,
    events: Vec<NodeEvent>,
    stopped: bool,
    /// Every store call answered, in order.
    answered: Vec<StoreCall>,
}

impl Harness {
    fn new(exclusive: bool) -> Self {
        let store = SimStore::default();
        let config = NodeConfig::new(election("n1", exclusive), store.append_limits());
        Self {
            node: Node::new(config).expect("valid config"),
            store,
            now: 1_700_000_000_000,
            calls: VecDeque::new(),
            replies: Vec::new(),
            events: Vec::new(),
            stopped: false,
            answered: Vec::new(),
        }
    }

    /// An exclusive node over `store` that checkpoints every `every` events and keeps
    /// `keep` before each checkpoint.
    fn with_checkpoints(store: SimStore, every: u64, keep: u64) -> Self {
        let config = NodeConfig {
            checkpoint_every: every,
            log_keep: keep,
            ..NodeConfig::new(election("n1", true), store.append_limits())
        };
        Self {
            node: Node::new(config).expect("valid config"),
            store,
            ..Self::new(true)
        }
    }

    fn handle(&mut self, input: NodeInput) {
        self.node.handle(input, self.now);
        while let Some(output) = self.node.poll() {
            match output {
                NodeOutput::Call { call, op, .. } => self.calls.push_back((call, op)),
                NodeOutput::Reply { id, result } => self.replies.push((id, result)),
                NodeOutput::Readable { .. } | NodeOutput::Publish(_) => {}
                NodeOutput::Event(event) => self.events.push(event),
                NodeOutput::Stopped => self.stopped = true,
            }
        }
    }

    /// Answers the oldest outstanding call from the store.
    fn answer_one(&mut self) -> StoreCall {
        let (call, op) = self.calls.pop_front().expect("a call is outstanding");
        let answer = op.clone().run(&self.store);
        self.handle(NodeInput::Answer { call, answer });
        self.answered.push(op.clone());
        op
    }

    /// Answers calls (and those they lead to) until none is outstanding.
    fn settle(&mut self) {
        while !self.calls.is_empty() {
            self.answer_one();
        }
    }

    fn advance(&mut self, ms: i64) {
        self.now += ms;
        self.handle(NodeInput::Tick);
    }

    /// Ticks until the node serves (elected, its log read).
    fn serve(&mut self) {
        for _ in 0..100 {
            self.handle(NodeInput::Tick);
            self.settle();
            if self.node.ready(self.now) {
                return;
            }
            self.advance(100);
        }
        panic!("the node never served: {:?}", self.events);
    }

    fn mutate(&mut self, id: RequestId, name: &str) {
        self.handle(NodeInput::Request {
            id,
            request: NodeRequest::Mutate(Mutation::CreateNamespace { name: name.into() }),
        });
    }

    fn reply(&self, id: RequestId) -> Option<&Result<Reply, CommitError>> {
        self.replies.iter().find(|(r, _)| *r == id).map(|(_, r)| r)
    }
}

/// Takes the node's append out of the outstanding calls (renewals stay unanswered).
fn take_append(h: &mut Harness) -> (CallId, StoreCall) {
    let at = h
        .calls
        .iter()
        .position(|(_, op)| matches!(op, StoreCall::Append { .. }))
        .expect("an append is outstanding");
    let append = h.calls.remove(at).expect("the append");
    h.calls.clear();
    append
}

#[test]
fn a_node_alone_elects_itself_serves_and_acknowledges_a_durable_write() {
    let mut h = Harness::new(false);
    h.serve();
    h.mutate(1, "ns");
    h.settle();
    match h.reply(1) {
        Some(Ok(Reply {
            applied: Applied::NamespaceCreated,
            revision: 1,
        })) => {}
        other => panic!("expected the namespace at revision 1, got {other:?}"),
    }
    assert_eq!(h.store.revision().expect("revision"), 1);
    assert_eq!(h.node.state(h.now).revision, 1);
}

#[test]
fn a_write_planned_after_the_lease_lapsed_fails_as_not_written_without_reaching_the_store() {
    let mut h = Harness::new(false);
    h.serve();
    h.mutate(1, "a");
    h.mutate(2, "b");
    // The first write is in flight; the second waits for it (group commit). Renewals go
    // unanswered while the clock runs past the lease's validity (a stalled store).
    let (first, append) = take_append(&mut h);
    assert_eq!(h.calls.len(), 0, "one write at a time: {:?}", h.calls);
    h.now += LEASE_MS;
    let answer = append.run(&h.store);
    h.handle(NodeInput::Answer {
        call: first,
        answer,
    });
    assert!(matches!(h.reply(1), Some(Ok(_))), "{:?}", h.reply(1));
    match h.reply(2) {
        Some(Err(CommitError::NotWritten(message))) => {
            assert!(message.contains("leadership expired"), "{message}");
        }
        other => panic!("the second write must fail as not written, got {other:?}"),
    }
    assert!(
        !h.calls
            .iter()
            .any(|(_, op)| matches!(op, StoreCall::Append { .. })),
        "no append left the node after its lease lapsed: {:?}",
        h.calls
    );
    assert_eq!(h.store.revision().expect("revision"), 1);
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, NodeEvent::SteppedDown { .. })),
        "{:?}",
        h.events
    );
}

#[test]
fn a_store_call_past_its_deadline_counts_as_unknown_and_its_late_answer_is_ignored() {
    let mut h = Harness::new(true);
    h.serve();
    h.mutate(1, "ns");
    let (call, append) = take_append(&mut h);
    // The append applies, but its answer never arrives in time.
    let late = append.run(&h.store);
    h.advance(NodeConfig::STORE_DEADLINE_MS);
    match h.reply(1) {
        Some(Err(CommitError::OutcomeUnknown(_))) => {}
        other => panic!("expected an unknown outcome at the deadline, got {other:?}"),
    }
    h.handle(NodeInput::Answer { call, answer: late });
    assert_eq!(h.replies.len(), 1, "the late answer is not a second reply");
    // The node reads the log again and adopts the write that did land.
    h.settle();
    h.mutate(2, "ns");
    h.settle();
    match h.reply(2) {
        Some(Err(CommitError::NamespaceExists { .. })) => {}
        other => panic!("the adopted write must be visible, got {other:?}"),
    }
}

#[test]
fn requests_wait_for_an_election_and_are_refused_when_the_wait_runs_out() {
    let mut h = Harness::new(false);
    // The store never answers.
    h.mutate(1, "ns");
    assert!(h.reply(1).is_none(), "a request waits while nobody leads");
    h.advance(NodeConfig::QUEUE_WAIT_MS - 1);
    h.calls.clear();
    assert!(h.reply(1).is_none());
    h.advance(1);
    match h.reply(1) {
        Some(Err(CommitError::NotLeader { leader })) => {
            assert!(leader.contains("no leader"), "{leader}");
        }
        other => panic!("expected NotLeader after the wait, got {other:?}"),
    }
}

#[test]
fn a_follower_refuses_at_once_and_names_the_leader_to_forward_to() {
    let mut h = Harness::new(false);
    let mut other = lease(4, "n2", 0);
    other.address = "n2:7000".into();
    h.store.write_lease(None, &other).expect("lease");
    h.handle(NodeInput::Tick);
    h.answer_one();
    assert_eq!(h.node.state(h.now).forward_to(), Some("n2:7000"));
    h.mutate(1, "ns");
    match h.reply(1) {
        Some(Err(CommitError::NotLeader { leader })) => {
            assert_eq!(leader, "leader is n2 at n2:7000");
        }
        other => panic!("expected NotLeader naming n2, got {other:?}"),
    }
}

#[test]
fn a_failed_log_read_is_read_again_and_the_queued_request_then_served() {
    let mut h = Harness::new(true);
    h.handle(NodeInput::Tick);
    h.answer_one(); // the lease read
    h.answer_one(); // the takeover write
    let checkpoint = h.answer_one();
    assert!(
        matches!(checkpoint, StoreCall::ReadCheckpoint),
        "{checkpoint:?}"
    );
    let (call, read) = h.calls.pop_front().expect("the reconciliation read");
    assert!(
        matches!(read, StoreCall::ReadLog { after: 0, .. }),
        "{read:?}"
    );
    h.mutate(1, "ns");
    h.handle(NodeInput::Answer {
        call,
        answer: StoreAnswer::Log(Err(lake_core::StoreError::Io("disk on fire".into()))),
    });
    assert!(!h.node.ready(h.now));
    assert!(h.calls.is_empty(), "no read before the retry time");
    h.advance(NodeConfig::LOAD_RETRY_MS);
    assert!(
        matches!(
            h.calls.front(),
            Some((_, StoreCall::ReadLog { after: 0, .. }))
        ),
        "{:?}",
        h.calls
    );
    h.settle();
    assert!(matches!(h.reply(1), Some(Ok(_))), "{:?}", h.reply(1));
}

#[test]
fn a_failed_checkpoint_read_is_read_again_before_anything_is_served() {
    let mut h = Harness::new(true);
    h.handle(NodeInput::Tick);
    h.answer_one(); // the lease read
    h.answer_one(); // the takeover write
    let (call, read) = h.calls.pop_front().expect("the checkpoint read");
    assert!(matches!(read, StoreCall::ReadCheckpoint), "{read:?}");
    h.mutate(1, "ns");
    h.handle(NodeInput::Answer {
        call,
        answer: StoreAnswer::Checkpoint(Err(lake_core::StoreError::Io("gone".into()))),
    });
    assert!(!h.node.ready(h.now));
    assert!(h.calls.is_empty(), "no read before the retry time");
    h.advance(NodeConfig::LOAD_RETRY_MS);
    assert!(
        matches!(h.calls.front(), Some((_, StoreCall::ReadCheckpoint))),
        "{:?}",
        h.calls
    );
    h.settle();
    assert!(matches!(h.reply(1), Some(Ok(_))), "{:?}", h.reply(1));
}

#[test]
fn a_resigning_node_refuses_what_waits_releases_its_lease_and_stops() {
    let mut h = Harness::new(false);
    h.serve();
    h.mutate(1, "ns");
    h.handle(NodeInput::Resign);
    h.mutate(2, "late");
    match h.reply(2) {
        Some(Err(CommitError::NotLeader { leader })) => {
            assert!(leader.contains("shutting down"), "{leader}");
        }
        other => panic!("expected a refusal while shutting down, got {other:?}"),
    }
    assert!(matches!(
        h.reply(1),
        Some(Err(CommitError::OutcomeUnknown(_)))
    ));
    assert!(!h.stopped, "stopped before the release was written");
    h.settle();
    assert!(h.stopped);
    let record = h.store.read_lease().expect("lease").expect("a record");
    assert!(record.is_released(), "{record:?}");
}

#[test]
fn an_exclusive_node_whose_timers_fire_late_keeps_serving() {
    // The embedded node: a starved process that wakes long after its lease would have
    // lapsed still serves, and its writes still carry its fence.
    let mut h = Harness::new(true);
    h.serve();
    h.now += 10 * LEASE_MS;
    h.mutate(1, "ns");
    h.settle();
    assert!(matches!(h.reply(1), Some(Ok(_))), "{:?}", h.reply(1));
    assert!(
        !h.events
            .iter()
            .any(|e| matches!(e, NodeEvent::SteppedDown { .. })),
        "{:?}",
        h.events
    );
}

/// A node loses its lease with a write in flight, a renewal it thought lost turns out to
/// have landed, and it serves the same epoch again in a new term. The first term's write
/// answer then arrives: it must not acknowledge the second term's write, which has the
/// same write id in a new coordinator and never reached the store. (Found by the cluster
/// simulation as seed 23957 before answers were keyed by term.)
#[test]
fn an_answer_from_an_earlier_serving_term_never_acknowledges_a_later_write() {
    let mut h = Harness::new(false);
    h.serve();
    h.mutate(1, "a");
    let (stale_call, stale_append) = take_append(&mut h);
    let StoreAnswer::Written(Ok(())) = stale_append.run(&h.store) else {
        panic!("the first write lands");
    };
    // Renewals go unanswered until the leadership lapses; keep the first one.
    let mut renewal = None;
    while h.node.ready(h.now) {
        h.advance(100);
        for (call, op) in std::mem::take(&mut h.calls) {
            if renewal.is_none() && matches!(op, StoreCall::WriteLease { .. }) {
                renewal = Some((call, op));
            }
        }
    }
    assert!(
        matches!(h.reply(1), Some(Err(CommitError::OutcomeUnknown(_)))),
        "{:?}",
        h.reply(1)
    );
    // The renewal did land; its answer is lost. The node reads the lease, finds its own
    // record and leads the same epoch again.
    let (call, op) = renewal.expect("a renewal was sent");
    let StoreAnswer::Written(Ok(())) = op.run(&h.store) else {
        panic!("the renewal lands");
    };
    h.handle(NodeInput::Answer {
        call,
        answer: StoreAnswer::Written(Err(lake_core::StoreError::Io("lost".into()))),
    });
    h.settle();
    assert!(h.node.ready(h.now), "serving again: {:?}", h.events);
    let epochs: Vec<u64> = h
        .events
        .iter()
        .filter_map(|e| match e {
            NodeEvent::Elected { epoch } => Some(*epoch),
            _ => None,
        })
        .collect();
    assert_eq!(epochs, [1, 1], "the same epoch, a second term");
    h.mutate(2, "b");
    let _second_term_write = take_append(&mut h);
    h.handle(NodeInput::Answer {
        call: stale_call,
        answer: StoreAnswer::Written(Ok(())),
    });
    assert!(
        h.reply(2).is_none(),
        "the first term's answer acknowledged the second term's write: {:?}",
        h.reply(2)
    );
    assert_eq!(
        h.store.revision().expect("revision"),
        1,
        "b never reached the store"
    );
}

/// A log longer than a page is read page by page, each page with its own deadline: a
/// whole read that takes longer than one store deadline still ends in serving. (One read
/// of the whole log with a 5 s deadline would never finish on a long log.)
#[test]
fn a_long_log_is_read_page_by_page_each_within_its_deadline() {
    let mut h = Harness::new(true);
    let earlier = lease(1, "old", 0);
    h.store.write_lease(None, &earlier).expect("lease");
    let total = 2 * NodeConfig::LOG_PAGE as u64 + 10;
    let events: Vec<_> = (1..=total)
        .map(|revision| lake_core::ChangeEvent {
            revision,
            kind: lake_core::ChangeKind::NamespaceCreated {
                name: format!("n{revision}"),
            },
        })
        .collect();
    h.store
        .append(&earlier.fence(), 0, &events)
        .expect("the earlier leader's log");
    let released = lake_core::Lease {
        holder: String::new(),
        address: String::new(),
        renewal: 1,
        ..earlier.clone()
    };
    h.store
        .write_lease(Some(&earlier), &released)
        .expect("released");
    h.handle(NodeInput::Tick);
    let mut pages = Vec::new();
    for _ in 0..20 {
        let Some((call, op)) = h.calls.pop_front() else {
            break;
        };
        if let StoreCall::ReadLog { after, .. } = &op {
            pages.push(*after);
            // Each page is slow, but within its own deadline.
            h.now += NodeConfig::STORE_DEADLINE_MS - 1_000;
        }
        let answer = op.run(&h.store);
        h.handle(NodeInput::Answer { call, answer });
    }
    let page = NodeConfig::LOG_PAGE as u64;
    assert_eq!(pages, [0, page, 2 * page], "three pages");
    assert!(h.node.ready(h.now), "{:?}", h.events);
    assert_eq!(h.node.registry().expect("serving").revision(), total);
}

/// While the leader reads its log again after a write it could not confirm, new requests
/// wait in the admission queue, bounded by its wait, instead of waiting unboundedly behind
/// the read.
#[test]
fn requests_while_the_leader_rereads_its_log_wait_at_most_the_queue_wait() {
    let mut h = Harness::new(true);
    h.serve();
    h.mutate(1, "a");
    let (call, _) = take_append(&mut h);
    h.handle(NodeInput::Answer {
        call,
        answer: StoreAnswer::Written(Err(lake_core::StoreError::Io("lost".into()))),
    });
    assert!(matches!(
        h.reply(1),
        Some(Err(CommitError::OutcomeUnknown(_)))
    ));
    h.mutate(2, "b");
    let mut waited = 0;
    while h.reply(2).is_none() && waited <= NodeConfig::QUEUE_WAIT_MS {
        // Every log read fails; lease renewals succeed.
        for (call, op) in std::mem::take(&mut h.calls) {
            let answer = match op {
                StoreCall::ReadLog { .. } => {
                    StoreAnswer::Log(Err(lake_core::StoreError::Io("throttled".into())))
                }
                other => other.run(&h.store),
            };
            h.handle(NodeInput::Answer { call, answer });
        }
        h.advance(500);
        waited += 500;
    }
    match h.reply(2) {
        Some(Err(CommitError::NotLeader { leader })) => {
            assert!(leader.contains("reading its log"), "{leader}");
        }
        other => panic!("expected a bounded refusal, got {other:?}"),
    }
    assert!(
        waited <= NodeConfig::QUEUE_WAIT_MS + 500,
        "waited {waited} ms"
    );
}

/// Once `checkpoint_every` events are durable the leader writes a checkpoint of its
/// registry and truncates the log before it, keeping `log_keep` events; a node started
/// later over the same store reads the checkpoint and then only the events after it, and
/// ends with the registry the whole history replays to.
#[test]
fn the_leader_checkpoints_and_truncates_and_a_restart_reads_only_the_tail() {
    let mut h = Harness::with_checkpoints(SimStore::default(), 5, 2);
    h.serve();
    for id in 1..=7 {
        h.mutate(id, &format!("n{id}"));
        h.settle();
        assert!(matches!(h.reply(id), Some(Ok(_))), "{:?}", h.reply(id));
    }
    assert!(
        h.events.contains(&NodeEvent::Checkpointed {
            revision: 5,
            through: 3
        }),
        "{:?}",
        h.events
    );
    assert_eq!(h.store.truncated(), 3);
    let checkpoint = h.store.read_checkpoint().expect("reads").expect("written");
    assert_eq!(checkpoint.revision(), 5);
    let history = Registry::from_log(&h.store.log()).expect("the history replays");
    assert_eq!(history.revision(), 7);

    let mut restarted = Harness::with_checkpoints(std::mem::take(&mut h.store), 5, 2);
    restarted.serve();
    assert_eq!(restarted.node.registry(), Some(&history));
    let reads: Vec<&StoreCall> = restarted
        .answered
        .iter()
        .filter(|op| matches!(op, StoreCall::ReadCheckpoint | StoreCall::ReadLog { .. }))
        .collect();
    assert!(
        matches!(
            reads.as_slice(),
            [
                StoreCall::ReadCheckpoint,
                StoreCall::ReadLog { after: 5, .. }
            ]
        ),
        "a restart reads the checkpoint, then the log after it: {reads:?}"
    );
    // The next checkpoint comes 5 events after the last one.
    for id in 8..=10 {
        restarted.mutate(id, &format!("n{id}"));
        restarted.settle();
    }
    assert!(
        restarted.events.contains(&NodeEvent::Checkpointed {
            revision: 10,
            through: 8
        }),
        "{:?}",
        restarted.events
    );
    assert_eq!(restarted.store.truncated(), 8);
}

/// The leader sweeps every `sweep_every_ms`: a table whose history aged past its window
/// without further commits has it expired by the sweep (written to the log like any
/// change), and nothing is written while nothing is due.
#[test]
fn the_leader_sweeps_history_that_aged_past_its_window() {
    let store = SimStore::default();
    let config = NodeConfig {
        retention: Retention {
            version_max_age_ms: 60_000,
            ..Retention::FOREVER
        },
        sweep_every_ms: 10_000,
        ..NodeConfig::new(election("n1", true), store.append_limits())
    };
    let mut h = Harness {
        node: Node::new(config).expect("valid config"),
        store,
        ..Harness::new(true)
    };
    h.serve();
    h.mutate(1, "ns");
    h.handle(NodeInput::Request {
        id: 2,
        request: NodeRequest::Mutate(Mutation::CreateTable {
            namespace: "ns".into(),
            name: "t".into(),
            schema_ipc: vec![1],
        }),
    });
    h.settle();
    let table_id = match h.reply(2) {
        Some(Ok(Reply {
            applied: Applied::TableCreated(meta),
            ..
        })) => meta.id,
        other => panic!("{other:?}"),
    };
    for (id, base) in (3..=5).zip(0..) {
        h.handle(NodeInput::Request {
            id,
            request: NodeRequest::Mutate(Mutation::Commit {
                table_id,
                base_version: base,
                manifest: ManifestRef {
                    path: format!("_versions/{}.manifest", base + 1),
                    size_bytes: 1,
                },
                operation: None,
            }),
        });
        h.settle();
        assert!(matches!(h.reply(id), Some(Ok(_))), "{:?}", h.reply(id));
    }
    let written = h.store.log().len();
    // Within the window (and its tenth of slack) the sweeps write nothing.
    for _ in 0..6 {
        h.advance(10_000);
        h.settle();
    }
    assert_eq!(h.store.log().len(), written, "nothing due yet");
    // Past it, the next sweep expires all but the latest version.
    for _ in 0..2 {
        h.advance(10_000);
        h.settle();
    }
    let registry = h.node.registry().expect("serving");
    let table = registry.table_by_id(table_id).expect("t");
    assert_eq!((table.oldest_version(), table.latest_version()), (3, 3));
    let log = h.store.log();
    assert!(
        matches!(
            log.last().map(|e| &e.kind),
            Some(ChangeKind::HistoryExpired {
                versions_before: 3,
                ..
            })
        ),
        "{:?}",
        log.last()
    );
    assert_eq!(&Registry::from_log(&log).expect("replays"), registry);
}
