//! Simulation: one Metasrv leader driving the core commit coordinator against a
//! conditional-write store with faults, several writers appending with operation ids and
//! retries, and Query replicas whose catalog caches follow a lossy change stream.
//!
//! Every fault probability is drawn from the seed. A safety phase runs with faults
//! (store refusals, responses lost after the write applied, leader crashes that lose all
//! in-memory state, dropped / duplicated / delayed / reordered stream messages, clock skew
//! per node); then a liveness phase turns faults off and everything must converge within a
//! bound of simulated time. Checkers then assert the invariants of `DESIGN.md`.
//!
//! Run: `RUSTFLAGS="--cfg madsim" CARGO_TARGET_DIR=target/madsim cargo test -p lake-simtests`
//! (`MADSIM_TEST_NUM=n` for more seeds; a failure prints the command that replays it).
#![cfg(madsim)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::{FutureExt, StreamExt};
use lake_core::commit::{Applied, Coordinator, Input, Mutation, Output, Reply};
use lake_core::{
    CacheInput, CacheOutput, CatalogCache, ChangeEvent, CommitError, ManifestRef, Registry,
    WriteOutcome,
};
use madsim::rand::{Rng, thread_rng};
use madsim::time::{Instant, sleep};

const WRITERS: usize = 4;
const OPS_PER_WRITER: usize = 12;
const REPLICAS: usize = 3;
const TABLES: usize = 2;
/// Simulated time allowed for the liveness phase to converge.
const LIVENESS_BOUND: Duration = Duration::from_secs(120);

/// Fault probabilities of one run, all drawn from the seed.
#[derive(Clone, Copy, Debug)]
struct Faults {
    store_refuse: f64,
    store_lose_response: f64,
    stream_drop: f64,
    stream_duplicate: f64,
    leader_crash_per_request: f64,
    clock_skew_ms: i64,
}

impl Faults {
    fn draw() -> Self {
        let mut rng = thread_rng();
        Self {
            store_refuse: rng.gen_range(0.0..0.15),
            store_lose_response: rng.gen_range(0.0..0.15),
            stream_drop: rng.gen_range(0.0..0.3),
            stream_duplicate: rng.gen_range(0.0..0.2),
            leader_crash_per_request: rng.gen_range(0.0..0.03),
            clock_skew_ms: rng.gen_range(0..5_000),
        }
    }

    fn none() -> Self {
        Self {
            store_refuse: 0.0,
            store_lose_response: 0.0,
            stream_drop: 0.0,
            stream_duplicate: 0.0,
            leader_crash_per_request: 0.0,
            clock_skew_ms: 0,
        }
    }
}

type ReplyTx = oneshot::Sender<Result<Reply, CommitError>>;

/// Shared simulated world: the durable store, the fault settings, and what the checkers
/// need to see.
struct World {
    log: Vec<ChangeEvent>,
    faults: Faults,
    started: Instant,
    /// Per node clock offset in ms (skew): node 0 is the leader, 1.. the replicas.
    skew_ms: Vec<i64>,
    /// op id -> version acknowledged to a writer.
    acked: BTreeMap<String, u64>,
    replica_revisions: Vec<Vec<u64>>,
    replica_final: Vec<Option<Registry>>,
}

impl World {
    fn now_ms(&self, node: usize) -> i64 {
        1_700_000_000_000
            + i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX)
            + self.skew_ms[node]
    }

    fn registry(&self) -> Registry {
        Registry::from_log(&self.log).expect("the durable log replays")
    }
}

type Shared = Rc<RefCell<World>>;

fn chance(p: f64) -> bool {
    thread_rng().gen_bool(p.clamp(0.0, 1.0))
}

async fn jitter(max_ms: u64) {
    let ms = thread_rng().gen_range(0..=max_ms);
    sleep(Duration::from_millis(ms)).await;
}

/// The Metasrv leader: drives a coordinator; crashes (losing all in-memory state and the
/// callers' replies) and restarts from the store.
async fn leader(
    world: Shared,
    mut requests: mpsc::UnboundedReceiver<(Mutation, ReplyTx)>,
    subscribers: Vec<mpsc::UnboundedSender<ChangeEvent>>,
) {
    let (written_tx, mut written_rx) = mpsc::unbounded::<(u64, u64, Result<(), WriteOutcome>)>();
    let mut incarnation = 0u64;
    let mut coordinator = Coordinator::new(world.borrow().registry(), 16);
    let mut waiting: BTreeMap<u64, ReplyTx> = BTreeMap::new();
    let mut next_id = 0u64;
    loop {
        let input = futures::select_biased! {
            request = requests.next() => {
                let Some((mutation, reply)) = request else { return };
                if chance(world.borrow().faults.leader_crash_per_request) {
                    // Crash: every in-memory thing is gone, callers never hear back.
                    waiting.clear();
                    drop(reply);
                    incarnation += 1;
                    sleep(Duration::from_millis(50)).await;
                    coordinator = Coordinator::new(world.borrow().registry(), 16);
                    continue;
                }
                next_id += 1;
                waiting.insert(next_id, reply);
                Input::Request { id: next_id, mutation }
            }
            written = written_rx.next() => {
                let Some((from, write_id, result)) = written else { return };
                if from != incarnation {
                    continue; // a write of a crashed incarnation: nobody is listening
                }
                match result {
                    Ok(()) => Input::WriteDone { write_id },
                    Err(outcome) => Input::WriteFailed { write_id, outcome, message: "store fault".into() },
                }
            }
        };
        let now = world.borrow().now_ms(0);
        coordinator.handle(input, now);
        while let Some(output) = coordinator.poll() {
            match output {
                Output::Write(write) => {
                    let world = world.clone();
                    let done = written_tx.clone();
                    let from = incarnation;
                    madsim::task::spawn_local(async move {
                        jitter(20).await;
                        let result = {
                            let mut w = world.borrow_mut();
                            let faults = w.faults;
                            if w.log.len() as u64 != write.base_revision
                                || chance(faults.store_refuse)
                            {
                                Err(WriteOutcome::NotWritten)
                            } else {
                                w.log.extend(write.events.iter().cloned());
                                if chance(faults.store_lose_response) {
                                    Err(WriteOutcome::Unknown)
                                } else {
                                    Ok(())
                                }
                            }
                        };
                        jitter(20).await;
                        let _ = done.unbounded_send((from, write.write_id, result));
                    });
                }
                Output::Reply { id, result } => {
                    if let Some(tx) = waiting.remove(&id) {
                        let _ = tx.send(result);
                    }
                }
                Output::Publish(events) => {
                    for event in events {
                        for sub in &subscribers {
                            let _ = sub.unbounded_send(event.clone());
                        }
                    }
                }
                Output::Load { after_revision } => {
                    jitter(10).await;
                    let events = world.borrow().log[after_revision as usize..].to_vec();
                    let now = world.borrow().now_ms(0);
                    coordinator.handle(Input::Loaded(events), now);
                }
            }
        }
    }
}

/// Sends a request to the leader and waits for the reply, or for a timeout (a crashed
/// leader never answers).
async fn call(
    requests: &mpsc::UnboundedSender<(Mutation, ReplyTx)>,
    mutation: Mutation,
) -> Option<Result<Reply, CommitError>> {
    let (tx, rx) = oneshot::channel();
    requests.unbounded_send((mutation, tx)).ok()?;
    futures::select_biased! {
        reply = rx.fuse() => reply.ok(),
        _ = sleep(Duration::from_secs(2)).fuse() => None,
    }
}

/// A writer: appends `OPS_PER_WRITER` operations, each retried until acknowledged. A lost
/// CAS rebases; an unknown outcome or a timeout retries the same operation id.
async fn writer(
    world: Shared,
    id: usize,
    requests: mpsc::UnboundedSender<(Mutation, ReplyTx)>,
    tables: Vec<u64>,
) {
    for op in 0..OPS_PER_WRITER {
        let op_id = format!("w{id}-op{op}");
        let digest = [u8::try_from(id).unwrap_or(0); 32];
        let table_id = tables[thread_rng().gen_range(0..tables.len())];
        loop {
            jitter(30).await;
            // Read the base as a writer would: from the durable store (authoritative).
            let base = world
                .borrow()
                .registry()
                .table_by_id(table_id)
                .map_or(0, |t| t.latest_version());
            let mutation = Mutation::Commit {
                table_id,
                base_version: base,
                manifest: ManifestRef {
                    path: format!("_versions/1.manifest-{op_id}"),
                    size_bytes: 1,
                },
                operation: Some((op_id.clone(), digest)),
            };
            match call(&requests, mutation).await {
                Some(Ok(Reply {
                    applied: Applied::Committed { version, .. },
                    ..
                })) => {
                    let previous = world.borrow_mut().acked.insert(op_id.clone(), version);
                    if let Some(previous) = previous {
                        assert_eq!(previous, version, "{op_id} acknowledged with two versions");
                    }
                    break;
                }
                Some(Ok(other)) => panic!("commit answered with {other:?}"),
                Some(Err(e)) if e.is_retryable() => {}
                Some(Err(e)) => panic!("{op_id}: unexpected refusal {e}"),
                None => {}
            }
        }
    }
}

/// A Query replica: its catalog cache follows a lossy, duplicating, reordering stream and
/// resyncs from the store on gaps.
async fn replica(
    world: Shared,
    node: usize,
    mut stream: mpsc::UnboundedReceiver<ChangeEvent>,
    done: Rc<RefCell<bool>>,
) {
    let mut cache = CatalogCache::new(1_000);
    let now = world.borrow().now_ms(node);
    cache.handle(CacheInput::StreamUp, now);
    let index = node - 1;
    loop {
        let event = futures::select_biased! {
            e = stream.next() => e,
            _ = sleep(Duration::from_millis(200)).fuse() => None,
        };
        let faults = world.borrow().faults;
        let mut inputs = Vec::new();
        if let Some(event) = event {
            if !chance(faults.stream_drop) {
                jitter(5).await;
                inputs.push(CacheInput::Event(event.clone()));
                if chance(faults.stream_duplicate) {
                    inputs.push(CacheInput::Event(event));
                }
            }
        } else {
            // Idle: ask for the store's revision as a reader with a token would.
            let want = world.borrow().log.len() as u64;
            inputs.push(CacheInput::NeedRevision(want));
        }
        while let Some(input) = inputs.pop() {
            let now = world.borrow().now_ms(node);
            cache.handle(input, now);
            while let Some(output) = cache.poll() {
                match output {
                    CacheOutput::Advanced(revision) => {
                        let mut w = world.borrow_mut();
                        let history = &mut w.replica_revisions[index];
                        if let Some(&last) = history.last() {
                            assert!(
                                revision > last,
                                "replica {node} went from {last} to {revision}"
                            );
                        }
                        history.push(revision);
                    }
                    CacheOutput::FetchSnapshot => {
                        jitter(30).await;
                        let snapshot = world.borrow().registry();
                        inputs.push(CacheInput::Snapshot(snapshot));
                    }
                }
            }
        }
        if *done.borrow() && cache.revision() == world.borrow().log.len() as u64 {
            let registry = cache.read(0).expect("read").clone();
            world.borrow_mut().replica_final[index] = Some(registry);
            return;
        }
    }
}

async fn simulate() {
    let faults = Faults::draw();
    let skew: Vec<i64> = (0..=REPLICAS)
        .map(|_| thread_rng().gen_range(-faults.clock_skew_ms..=faults.clock_skew_ms))
        .collect();
    let world: Shared = Rc::new(RefCell::new(World {
        log: Vec::new(),
        faults: Faults::none(),
        started: Instant::now(),
        skew_ms: skew,
        acked: BTreeMap::new(),
        replica_revisions: vec![Vec::new(); REPLICAS],
        replica_final: vec![None; REPLICAS],
    }));
    let (requests, inbox) = mpsc::unbounded();
    let mut subscribers = Vec::new();
    let done = Rc::new(RefCell::new(false));
    let mut replicas = Vec::new();
    for node in 1..=REPLICAS {
        let (tx, rx) = mpsc::unbounded();
        subscribers.push(tx);
        replicas.push(madsim::task::spawn_local(replica(
            world.clone(),
            node,
            rx,
            done.clone(),
        )));
    }
    madsim::task::spawn_local(leader(world.clone(), inbox, subscribers));

    // Setup without faults: a namespace and the tables.
    call(&requests, Mutation::CreateNamespace { name: "ns".into() })
        .await
        .expect("reply")
        .expect("namespace");
    let mut tables = Vec::new();
    for t in 0..TABLES {
        let reply = call(
            &requests,
            Mutation::CreateTable {
                namespace: "ns".into(),
                name: format!("t{t}"),
                schema_ipc: vec![],
            },
        )
        .await
        .expect("reply")
        .expect("table");
        let Applied::TableCreated(meta) = reply.applied else {
            panic!("{reply:?}")
        };
        tables.push(meta.id);
    }

    // Safety phase: faults on while the writers run.
    world.borrow_mut().faults = faults;
    let writers: Vec<_> = (0..WRITERS)
        .map(|id| {
            madsim::task::spawn_local(writer(world.clone(), id, requests.clone(), tables.clone()))
        })
        .collect();
    sleep(Duration::from_secs(5)).await;

    // Liveness phase: faults off; everything must finish and converge within the bound.
    world.borrow_mut().faults = Faults::none();
    let liveness = async {
        for w in writers {
            w.await.expect("writer");
        }
        *done.borrow_mut() = true;
        for r in replicas {
            r.await.expect("replica");
        }
    };
    madsim::time::timeout(LIVENESS_BOUND, liveness)
        .await
        .unwrap_or_else(|_| {
            panic!("no convergence within {LIVENESS_BOUND:?} of simulated time ({faults:?})")
        });

    check(&world.borrow(), &tables);
}

/// The invariants.
fn check(world: &World, tables: &[u64]) {
    // The log replays: revisions and every table's versions are gap-free.
    let registry = world.registry();
    let mut committed_ops = BTreeSet::new();
    for &id in tables {
        let table = registry.table_by_id(id).expect("table exists");
        for (i, v) in table.versions.iter().enumerate() {
            assert_eq!(v.version, i as u64 + 1, "version history has a gap");
            let op = v.operation_id.clone().expect("every commit has an op id");
            assert!(committed_ops.insert(op.clone()), "{op} committed twice");
        }
    }
    // Every acknowledged commit is durable exactly once, at the acknowledged version.
    assert_eq!(
        world.acked.len(),
        WRITERS * OPS_PER_WRITER,
        "every operation acknowledged"
    );
    for (op, version) in &world.acked {
        let found = tables.iter().find_map(|&id| {
            let t = registry.table_by_id(id)?;
            t.version(*version)
                .filter(|r| r.operation_id.as_deref() == Some(op.as_str()))
        });
        assert!(
            found.is_some(),
            "acknowledged {op} at version {version} is not in the history"
        );
    }
    assert_eq!(
        committed_ops.len(),
        world.acked.len(),
        "nothing committed without an ack"
    );
    // Caches converged to exactly the durable registry.
    for (i, final_registry) in world.replica_final.iter().enumerate() {
        let final_registry = final_registry.as_ref().expect("replica finished");
        assert_eq!(final_registry, &registry, "replica {} diverged", i + 1);
    }
}

/// Runs the simulation once per seed (`MADSIM_TEST_SEED`, default: from the clock;
/// `MADSIM_TEST_NUM` runs, default 8) and prints the replay command for a failing seed.
#[test]
fn commits_and_caches_under_faults() {
    let first: u64 = std::env::var("MADSIM_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_secs())
        });
    let runs: u64 = std::env::var("MADSIM_TEST_NUM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    for seed in first..first + runs {
        let result = std::panic::catch_unwind(|| {
            let runtime =
                madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
            runtime.block_on(simulate());
        });
        if let Err(panic) = result {
            eprintln!(
                "simulation failed for seed {seed}; replay it with:\n  MADSIM_TEST_SEED={seed} MADSIM_TEST_NUM=1 RUSTFLAGS=\"--cfg madsim\" CARGO_TARGET_DIR=target/madsim cargo test -p lake-simtests --test commit_and_cache"
            );
            std::panic::resume_unwind(panic);
        }
    }
}
