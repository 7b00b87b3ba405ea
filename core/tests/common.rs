//! A harness that drives the coordinator against an in-memory event log, the way the
//! Metasrv shell drives it against RocksDB.
#![allow(dead_code)]

use lake_core::commit::{Coordinator, Input, Mutation, Output, Reply};
use lake_core::{AppendLimits, ChangeEvent, CommitError, Registry, WriteOutcome};

/// The in-memory durable store: an append-only event log.
#[derive(Default)]
pub struct MemStore {
    pub log: Vec<ChangeEvent>,
}

impl MemStore {
    pub fn load(&self) -> Registry {
        Registry::from_log(&self.log).expect("log replays")
    }
}

/// What the harness does with the next store write.
#[derive(Clone, Copy, Debug)]
pub enum StoreFault {
    None,
    /// Refuse the write.
    Refuse,
    /// Apply the write but lose the response.
    LoseResponse,
}

pub struct Harness {
    pub coordinator: Coordinator,
    pub store: MemStore,
    pub published: Vec<ChangeEvent>,
    pub replies: Vec<(u64, Result<Reply, CommitError>)>,
    pub now_ms: i64,
    /// The events of each store write, in order.
    pub writes: Vec<Vec<ChangeEvent>>,
    next_request: u64,
}

impl Harness {
    pub fn new(batch_max: usize) -> Self {
        Self {
            coordinator: Coordinator::new(Registry::new(), batch_max),
            store: MemStore::default(),
            published: Vec::new(),
            replies: Vec::new(),
            now_ms: 1_700_000_000_000,
            writes: Vec::new(),
            next_request: 1,
        }
    }

    /// A harness whose coordinator sizes group commits to `limits`.
    pub fn with_limits(limits: AppendLimits) -> Self {
        Self {
            coordinator: Coordinator::with_limits(Registry::new(), limits),
            ..Self::new(1)
        }
    }

    /// Queues a request without running the store; returns its id.
    pub fn submit(&mut self, mutation: Mutation) -> u64 {
        let id = self.next_request;
        self.next_request += 1;
        self.coordinator
            .handle(Input::Request { id, mutation }, self.now_ms);
        id
    }

    /// Drains outputs, answering each store write with `fault` (then `None` after the
    /// first), until the coordinator is idle.
    pub fn run(&mut self, mut fault: StoreFault) {
        for _ in 0..10_000 {
            let Some(output) = self.coordinator.poll() else {
                return;
            };
            match output {
                Output::Write(write) => {
                    assert_eq!(write.base_revision, self.store.log.len() as u64);
                    self.writes.push(write.events.clone());
                    let input = match fault {
                        StoreFault::None => {
                            self.store.log.extend(write.events.iter().cloned());
                            Input::WriteDone {
                                write_id: write.write_id,
                            }
                        }
                        StoreFault::Refuse => Input::WriteFailed {
                            write_id: write.write_id,
                            outcome: WriteOutcome::NotWritten,
                            message: "refused".into(),
                        },
                        StoreFault::LoseResponse => {
                            self.store.log.extend(write.events.iter().cloned());
                            Input::WriteFailed {
                                write_id: write.write_id,
                                outcome: WriteOutcome::Unknown,
                                message: "timeout".into(),
                            }
                        }
                    };
                    fault = StoreFault::None;
                    self.now_ms += 1;
                    self.coordinator.handle(input, self.now_ms);
                }
                Output::Reply { id, result } => self.replies.push((id, result)),
                Output::Publish(events) => self.published.extend(events),
                Output::Load { after_revision } => {
                    let events = self.store.log[after_revision as usize..].to_vec();
                    self.coordinator.handle(Input::Loaded(events), self.now_ms);
                }
            }
        }
        panic!("coordinator did not go idle within 10000 outputs");
    }

    /// Submits one request, runs the store without faults and returns the reply.
    pub fn call(&mut self, mutation: Mutation) -> Result<Reply, CommitError> {
        let id = self.submit(mutation);
        self.run(StoreFault::None);
        self.reply(id)
    }

    pub fn reply(&self, id: u64) -> Result<Reply, CommitError> {
        let matching: Vec<_> = self.replies.iter().filter(|(r, _)| *r == id).collect();
        assert_eq!(matching.len(), 1, "exactly one reply for request {id}");
        matching[0].1.clone()
    }
}
