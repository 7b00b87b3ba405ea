//! One Metasrv node's reader of the durable log, shared by every watch stream the node
//! serves ([`crate::watch`]): the node reads the log once per poll interval and broadcasts
//! what it finds, instead of each stream polling the store on its own. With 1,000 Query
//! replicas watching, a quiet node then reads the log 10 times a second, not 10,000.
//!
//! * A node that leads publishes every durable event itself (the coordinator's
//!   [`crate::Output::Publish`]): its tail reads once to the end of the log when the node
//!   starts to lead ([`TailInput::Leading`]; the last leader's final writes) and then only
//!   notes how far the published events reach ([`TailInput::Published`]).
//! * A follower node, which writes nothing, learns of the leader's writes from the log: its
//!   tail reads the events after the last one it knows every `poll_ms`, and at once again
//!   after a full page.
//! * The tail starts reading only once a stream follows ([`TailInput::Following`]) and
//!   from where that stream caught up (a stream that catches up behind the tail moves it
//!   back, never forward past what it broadcast), so a node nobody ever watched reads
//!   nothing, and a restarted node never reads the history. When the last following
//!   stream ends ([`TailInput::Left`]) the tail stops reading; the next stream to follow
//!   starts it again from where that stream caught up.
//! * A stream that misses a broadcast (it was reading the log, or its buffer overflowed)
//!   sees a gap or a lag and reads the log itself, as [`crate::Watch`] does.
//!
//! Calling contract, as for the other machines: feed [`TailInput`]s with the node's clock,
//! drain [`Tail::poll`], answer each [`TailOutput::ReadLog`] with [`TailInput::Read`], and
//! tick no later than [`Tail::next_deadline_ms`].

use std::collections::{BTreeSet, VecDeque};

use crate::registry::ChangeEvent;
use crate::store::StoreError;

/// Timing and page size of a [`Tail`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailConfig {
    /// How long a follower's tail waits between log reads that found nothing new, in ms.
    pub poll_ms: i64,
    /// Most events one read returns.
    pub batch: usize,
}

impl TailConfig {
    /// What Metasrv runs: a read every 100 ms (a commit reaches a replica watching a
    /// follower within about that), pages of 1,024 events.
    pub const DEFAULT: Self = Self {
        poll_ms: 100,
        batch: 1024,
    };
}

/// Inputs of a [`Tail`].
#[derive(Debug)]
pub enum TailInput {
    /// Stream `stream` (an id the node gives each watch stream) caught up with the log at
    /// `revision` and now follows live events (again, after it lagged: its place moves).
    Following { stream: u64, revision: u64 },
    /// Stream `stream` ended (whether or not it followed).
    Left { stream: u64 },
    /// Whether this node leads (it publishes every durable event itself).
    Leading(bool),
    /// This node published the durable events through `revision`.
    Published { revision: u64 },
    /// The answer to [`TailOutput::ReadLog`].
    Read(Result<Vec<ChangeEvent>, StoreError>),
    /// Time passed.
    Tick,
}

/// Outputs of a [`Tail`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TailOutput {
    /// Read up to `limit` events after revision `after` from the store.
    ReadLog { after: u64, limit: usize },
    /// Send these durable events, in revision order and without gaps, to every stream.
    Broadcast(Vec<ChangeEvent>),
}

/// A node's log tail. See the module docs.
#[derive(Debug)]
pub struct Tail {
    config: TailConfig,
    /// The last revision broadcast or published (`None`: no stream followed yet).
    revision: Option<u64>,
    /// The streams that follow now.
    following: BTreeSet<u64>,
    leading: bool,
    /// Read up to the end of the log although this node leads (it just started to).
    catch_up: bool,
    reading: bool,
    next_read_ms: i64,
    outputs: VecDeque<TailOutput>,
}

impl Tail {
    /// A tail that knows nothing yet (it reads nothing until a stream follows).
    pub fn new(config: TailConfig) -> Self {
        Self {
            config,
            revision: None,
            following: BTreeSet::new(),
            leading: false,
            catch_up: false,
            reading: false,
            next_read_ms: i64::MAX,
            outputs: VecDeque::new(),
        }
    }

    /// The last revision this tail broadcast or saw published.
    pub fn revision(&self) -> Option<u64> {
        self.revision
    }

    /// When [`TailInput::Tick`] is due (`i64::MAX`: nothing to do until another input).
    pub fn next_deadline_ms(&self) -> i64 {
        if self.reads() {
            self.next_read_ms
        } else {
            i64::MAX
        }
    }

    /// Feeds one input at `now_ms`; drain [`Self::poll`] afterwards.
    pub fn handle(&mut self, input: TailInput, now_ms: i64) {
        match input {
            TailInput::Following { stream, revision } => {
                // Never past what it broadcast: the events between would reach no stream
                // (a stream behind gets some twice, which it drops). The first stream to
                // follow sets it: no other stream needs what came before.
                let first = self.following.is_empty();
                self.following.insert(stream);
                self.revision = Some(match self.revision {
                    Some(known) if !first => known.min(revision),
                    _ => revision,
                });
                if !self.reading {
                    self.next_read_ms = self
                        .next_read_ms
                        .min(now_ms.saturating_add(self.config.poll_ms));
                }
            }
            TailInput::Leading(leading) => {
                // A node that starts to lead reads once more: the events the last leader
                // wrote before this node's tail read them are published by nobody else.
                self.leading = leading;
                self.catch_up = leading;
                self.next_read_ms = now_ms;
            }
            TailInput::Left { stream } => {
                self.following.remove(&stream);
            }
            TailInput::Published { revision } => {
                self.revision = Some(self.revision.map_or(revision, |known| known.max(revision)));
                self.next_read_ms = now_ms.saturating_add(self.config.poll_ms);
            }
            TailInput::Read(result) => {
                if !self.reading {
                    return;
                }
                self.reading = false;
                self.next_read_ms = now_ms.saturating_add(self.config.poll_ms);
                match result {
                    Ok(events) => {
                        let full = events.len() >= self.config.batch;
                        let known = self.revision.unwrap_or(0);
                        // Published while the read ran: those are out already.
                        let fresh: Vec<ChangeEvent> = events
                            .into_iter()
                            .skip_while(|e| e.revision <= known)
                            .collect();
                        if let Some(last) = fresh.last() {
                            self.revision = Some(last.revision);
                            self.outputs.push_back(TailOutput::Broadcast(fresh));
                        }
                        if full {
                            self.next_read_ms = now_ms;
                        } else {
                            self.catch_up = false;
                        }
                    }
                    // What it knew is gone from the log (a checkpoint covered it while
                    // nobody read): go on after the removed part; streams that lacked it
                    // find the log truncated themselves and load a snapshot.
                    Err(StoreError::Truncated { through, .. }) => {
                        self.revision = Some(self.revision.unwrap_or(0).max(through));
                        self.next_read_ms = now_ms;
                    }
                    // Read again after the poll interval.
                    Err(_) => {}
                }
            }
            TailInput::Tick => {}
        }
        if self.reads() && now_ms >= self.next_read_ms {
            self.reading = true;
            self.outputs.push_back(TailOutput::ReadLog {
                after: self.revision.unwrap_or(0),
                limit: self.config.batch,
            });
        }
    }

    /// Next output, or `None` until the next input.
    #[must_use]
    pub fn poll(&mut self) -> Option<TailOutput> {
        self.outputs.pop_front()
    }

    /// Whether this tail reads the log now: a stream follows, this node does not lead (or
    /// just started to and has not read to the end yet), and no read is in flight.
    fn reads(&self) -> bool {
        !self.following.is_empty()
            && self.revision.is_some()
            && (!self.leading || self.catch_up)
            && !self.reading
    }

    /// How many streams follow now.
    pub fn followers(&self) -> usize {
        self.following.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract::event;

    fn drain(tail: &mut Tail) -> Vec<TailOutput> {
        std::iter::from_fn(|| tail.poll()).collect()
    }

    #[test]
    fn reads_nothing_until_a_stream_follows_then_polls_and_broadcasts_what_is_new() {
        let mut t = Tail::new(TailConfig::DEFAULT);
        t.handle(TailInput::Tick, 1_000);
        assert!(drain(&mut t).is_empty(), "nobody watches: no reads");
        assert_eq!(t.next_deadline_ms(), i64::MAX);
        t.handle(
            TailInput::Following {
                stream: 1,
                revision: 5,
            },
            1_000,
        );
        assert!(drain(&mut t).is_empty());
        assert_eq!(t.next_deadline_ms(), 1_100);
        t.handle(TailInput::Tick, 1_100);
        assert_eq!(
            drain(&mut t),
            [TailOutput::ReadLog {
                after: 5,
                limit: 1024
            }]
        );
        // One read at a time, however many streams follow.
        t.handle(
            TailInput::Following {
                stream: 2,
                revision: 5,
            },
            1_150,
        );
        t.handle(TailInput::Tick, 1_200);
        assert!(drain(&mut t).is_empty());
        t.handle(TailInput::Read(Ok(vec![event(6), event(7)])), 1_210);
        assert_eq!(
            drain(&mut t),
            [TailOutput::Broadcast(vec![event(6), event(7)])]
        );
        assert_eq!(t.revision(), Some(7));
        t.handle(TailInput::Tick, 1_310);
        assert_eq!(
            drain(&mut t),
            [TailOutput::ReadLog {
                after: 7,
                limit: 1024
            }]
        );
    }

    #[test]
    fn a_leading_node_reads_once_to_the_end_then_nothing_and_a_full_page_is_followed_at_once() {
        let mut t = Tail::new(TailConfig {
            batch: 2,
            ..TailConfig::DEFAULT
        });
        t.handle(TailInput::Leading(true), 0);
        t.handle(
            TailInput::Following {
                stream: 1,
                revision: 1,
            },
            0,
        );
        // The last leader's final writes: read once, since nobody else publishes them.
        assert_eq!(drain(&mut t), [TailOutput::ReadLog { after: 1, limit: 2 }]);
        t.handle(TailInput::Read(Ok(vec![event(2)])), 1);
        assert_eq!(drain(&mut t), [TailOutput::Broadcast(vec![event(2)])]);
        t.handle(TailInput::Published { revision: 3 }, 50);
        t.handle(TailInput::Tick, 10_000);
        assert!(drain(&mut t).is_empty(), "the leader publishes; no reads");
        assert_eq!(t.revision(), Some(3));
        // Stepping down: read at once from what was published.
        t.handle(TailInput::Leading(false), 10_000);
        assert_eq!(drain(&mut t), [TailOutput::ReadLog { after: 3, limit: 2 }]);
        t.handle(TailInput::Read(Ok(vec![event(4), event(5)])), 10_001);
        assert_eq!(
            drain(&mut t),
            [
                TailOutput::Broadcast(vec![event(4), event(5)]),
                TailOutput::ReadLog { after: 5, limit: 2 }
            ]
        );
    }

    #[test]
    fn a_stream_that_catches_up_never_moves_the_tail_past_what_it_broadcast() {
        let mut t = Tail::new(TailConfig::DEFAULT);
        t.handle(
            TailInput::Following {
                stream: 1,
                revision: 5,
            },
            0,
        );
        // A stream that read further on its own (or asked for u64::MAX) does not move the
        // tail past 5: events 6 and 7 still reach the streams at 5.
        t.handle(
            TailInput::Following {
                stream: 2,
                revision: 7,
            },
            10,
        );
        t.handle(
            TailInput::Following {
                stream: 3,
                revision: u64::MAX,
            },
            20,
        );
        t.handle(TailInput::Tick, 100);
        assert_eq!(
            drain(&mut t),
            [TailOutput::ReadLog {
                after: 5,
                limit: 1024
            }]
        );
        t.handle(TailInput::Read(Ok(vec![event(6), event(7)])), 101);
        assert_eq!(
            drain(&mut t),
            [TailOutput::Broadcast(vec![event(6), event(7)])]
        );
        // One that catches up behind it moves it back: it gets those events too.
        t.handle(
            TailInput::Following {
                stream: 4,
                revision: 6,
            },
            150,
        );
        t.handle(TailInput::Tick, 201);
        assert_eq!(
            drain(&mut t),
            [TailOutput::ReadLog {
                after: 6,
                limit: 1024
            }]
        );
    }

    #[test]
    fn events_published_during_a_read_are_not_broadcast_twice_and_truncation_skips_ahead() {
        let mut t = Tail::new(TailConfig::DEFAULT);
        t.handle(
            TailInput::Following {
                stream: 1,
                revision: 2,
            },
            0,
        );
        t.handle(TailInput::Tick, 100);
        drain(&mut t);
        t.handle(TailInput::Published { revision: 3 }, 101);
        t.handle(TailInput::Read(Ok(vec![event(3), event(4)])), 102);
        assert_eq!(drain(&mut t), [TailOutput::Broadcast(vec![event(4)])]);
        t.handle(TailInput::Tick, 202);
        drain(&mut t);
        t.handle(
            TailInput::Read(Err(StoreError::Truncated {
                after: 4,
                through: 40,
            })),
            203,
        );
        assert_eq!(
            drain(&mut t),
            [TailOutput::ReadLog {
                after: 40,
                limit: 1024
            }]
        );
        // A failed read is tried again a poll interval later.
        t.handle(TailInput::Read(Err(StoreError::Io("down".into()))), 204);
        assert!(drain(&mut t).is_empty());
        assert_eq!(t.next_deadline_ms(), 304);
    }

    #[test]
    fn the_tail_stops_reading_when_the_last_stream_leaves_and_restarts_where_the_next_follows() {
        let mut t = Tail::new(TailConfig::DEFAULT);
        t.handle(
            TailInput::Following {
                stream: 1,
                revision: 5,
            },
            0,
        );
        t.handle(
            TailInput::Following {
                stream: 2,
                revision: 5,
            },
            0,
        );
        // A stream that lags and catches up again is still one stream.
        t.handle(
            TailInput::Following {
                stream: 2,
                revision: 5,
            },
            50,
        );
        assert_eq!(t.followers(), 2);
        t.handle(TailInput::Left { stream: 1 }, 60);
        t.handle(TailInput::Tick, 100);
        assert_eq!(
            drain(&mut t),
            [TailOutput::ReadLog {
                after: 5,
                limit: 1024
            }]
        );
        t.handle(TailInput::Read(Ok(vec![event(6)])), 101);
        drain(&mut t);
        t.handle(TailInput::Left { stream: 2 }, 150);
        assert_eq!(t.followers(), 0);
        assert_eq!(t.next_deadline_ms(), i64::MAX, "nobody follows: no reads");
        t.handle(TailInput::Tick, 10_000);
        assert!(drain(&mut t).is_empty());
        // The next stream to follow caught up at 90 by itself: the tail starts there, not
        // at what it last broadcast (nobody needs 7 to 90 from it).
        t.handle(
            TailInput::Following {
                stream: 3,
                revision: 90,
            },
            20_000,
        );
        t.handle(TailInput::Tick, 20_100);
        assert_eq!(
            drain(&mut t),
            [TailOutput::ReadLog {
                after: 90,
                limit: 1024
            }]
        );
    }
}
