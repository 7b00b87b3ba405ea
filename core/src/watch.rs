//! One subscriber's change stream, as a Metasrv node serves it (`Watch` in the gRPC API):
//! catch up from the durable log, then follow live events (published by this node when it
//! leads, read from the log by the node's shared [`crate::tail`] when it does not), fall
//! back to the log on a gap, a lagging buffer or a long quiet interval (a safety net: the
//! tail delivers what is new), and send a heartbeat when nothing was sent for a while. A subscriber behind the log's start (the
//! events it needs were removed after a checkpoint) is told so ([`WatchOutput::Truncated`])
//! and loads a snapshot instead.
//!
//! Guarantees: the subscriber sees every durable event after its `from_revision` exactly
//! once, in revision order, with no gaps (a live event that does not follow the last sent
//! one sends the stream back to the log); only events read from the log or published by the
//! leader after they were durable are sent; a heartbeat carries the last revision sent.
//!
//! Calling contract, as for the other machines: [`Watch::new`], then drain
//! [`Watch::poll`]; answer each [`WatchOutput::ReadLog`] with [`WatchInput::Read`]; while
//! [`Watch::following`], feed the node's live events ([`WatchInput::Live`], or
//! [`WatchInput::Lagged`] when the subscriber's buffer overflowed) and
//! [`WatchInput::Tick`] no later than [`Watch::next_deadline_ms`]. The stream ends after
//! [`WatchOutput::Failed`] or [`WatchOutput::Done`].

use std::collections::VecDeque;

use crate::registry::ChangeEvent;
use crate::store::StoreError;

/// Timing and batch size of a watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchConfig {
    /// Most events one log read returns.
    pub batch: usize,
    /// How long a following stream waits for a live event before reading the log itself,
    /// in ms.
    pub poll_ms: i64,
    /// A stream with nothing sent for this long sends a heartbeat, in ms.
    pub heartbeat_ms: i64,
}

impl WatchConfig {
    /// What Metasrv serves: reads of 1,024 events, a read of its own after 5 s without a
    /// live event (the node's tail reads every 100 ms for all streams), a heartbeat after
    /// 1 s (clients give up on a stream silent for 10 s).
    pub const DEFAULT: Self = Self {
        batch: 1024,
        poll_ms: 5_000,
        heartbeat_ms: 1_000,
    };
}

/// Inputs of a [`Watch`].
#[derive(Debug)]
pub enum WatchInput {
    /// The answer to [`WatchOutput::ReadLog`].
    Read(Result<Vec<ChangeEvent>, StoreError>),
    /// An event this node published (durable).
    Live(ChangeEvent),
    /// Live events were dropped before this subscriber saw them.
    Lagged,
    /// Time passed.
    Tick,
}

/// Outputs of a [`Watch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchOutput {
    /// Read up to `limit` events after revision `after` from the store.
    ReadLog { after: u64, limit: usize },
    /// Send this event to the subscriber.
    Send(ChangeEvent),
    /// Send a heartbeat: nothing new after `revision`.
    Heartbeat { revision: u64 },
    /// The store could not be read: end the stream with this error.
    Failed(String),
    /// The log no longer holds the events the subscriber needs next (they were removed
    /// after a checkpoint covering revisions through `through`): end the stream telling it
    /// to load a snapshot and watch from the snapshot's revision.
    Truncated { through: u64 },
    /// A watch that does not follow has caught up: end the stream.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Reading,
    Following { until_ms: i64 },
    Ended,
}

/// One subscriber's stream. See the module docs.
#[derive(Debug)]
pub struct Watch {
    config: WatchConfig,
    follow: bool,
    sent: u64,
    last_sent_ms: i64,
    phase: Phase,
    outputs: VecDeque<WatchOutput>,
}

impl Watch {
    /// A stream of the events after `from_revision`; with `follow`, it keeps following
    /// after catching up. Starts with a [`WatchOutput::ReadLog`].
    pub fn new(config: WatchConfig, from_revision: u64, follow: bool, now_ms: i64) -> Self {
        let mut watch = Self {
            config,
            follow,
            sent: from_revision,
            last_sent_ms: now_ms,
            phase: Phase::Ended,
            outputs: VecDeque::new(),
        };
        watch.read();
        watch
    }

    /// The last revision sent (or the starting revision).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Whether the stream waits for live events (and ticks).
    pub fn following(&self) -> bool {
        matches!(self.phase, Phase::Following { .. })
    }

    /// When [`WatchInput::Tick`] is due while following (`i64::MAX` otherwise): the
    /// next heartbeat or the next read of its own, whichever comes first.
    pub fn next_deadline_ms(&self) -> i64 {
        match self.phase {
            Phase::Following { until_ms } => until_ms.min(self.heartbeat_due_ms()),
            Phase::Reading | Phase::Ended => i64::MAX,
        }
    }

    fn heartbeat_due_ms(&self) -> i64 {
        self.last_sent_ms.saturating_add(self.config.heartbeat_ms)
    }

    /// Feeds one input at `now_ms`; drain [`Self::poll`] afterwards.
    pub fn handle(&mut self, input: WatchInput, now_ms: i64) {
        match (self.phase, input) {
            (Phase::Reading, WatchInput::Read(Ok(events))) => {
                if events.is_empty() {
                    self.caught_up(now_ms);
                    return;
                }
                for event in events {
                    debug_assert_eq!(
                        event.revision,
                        self.sent.saturating_add(1),
                        "the store returns the events after the revision asked, in order"
                    );
                    self.send(event, now_ms);
                }
                self.read();
            }
            (Phase::Reading, WatchInput::Read(Err(error))) => {
                self.phase = Phase::Ended;
                self.outputs.push_back(match error {
                    StoreError::Truncated { through, .. } => WatchOutput::Truncated { through },
                    error => WatchOutput::Failed(error.to_string()),
                });
            }
            (Phase::Following { .. }, WatchInput::Live(event)) => {
                // Saturating: a client may ask to start from any revision, u64::MAX too.
                let next = self.sent.saturating_add(1);
                if event.revision == next {
                    self.send(event, now_ms);
                    self.phase = Phase::Following {
                        until_ms: now_ms.saturating_add(self.config.poll_ms),
                    };
                } else if event.revision > next {
                    // A gap: what lies between is in the log.
                    self.read();
                }
            }
            (Phase::Following { .. }, WatchInput::Lagged) => self.read(),
            (Phase::Following { until_ms }, WatchInput::Tick) if now_ms >= until_ms => {
                self.read();
            }
            (Phase::Following { .. }, WatchInput::Tick) if now_ms >= self.heartbeat_due_ms() => {
                self.last_sent_ms = now_ms;
                self.outputs.push_back(WatchOutput::Heartbeat {
                    revision: self.sent,
                });
            }
            // Late or stray inputs (a live event while reading is in the log too).
            _ => {}
        }
    }

    /// Next output, or `None` until the next input.
    #[must_use]
    pub fn poll(&mut self) -> Option<WatchOutput> {
        self.outputs.pop_front()
    }

    fn read(&mut self) {
        self.phase = Phase::Reading;
        self.outputs.push_back(WatchOutput::ReadLog {
            after: self.sent,
            limit: self.config.batch,
        });
    }

    fn send(&mut self, event: ChangeEvent, now_ms: i64) {
        debug_assert_eq!(
            event.revision,
            self.sent.saturating_add(1),
            "a stream has no gaps"
        );
        self.sent = event.revision;
        self.last_sent_ms = now_ms;
        self.outputs.push_back(WatchOutput::Send(event));
    }

    fn caught_up(&mut self, now_ms: i64) {
        if !self.follow {
            self.phase = Phase::Ended;
            self.outputs.push_back(WatchOutput::Done);
            return;
        }
        if now_ms.saturating_sub(self.last_sent_ms) >= self.config.heartbeat_ms {
            self.last_sent_ms = now_ms;
            self.outputs.push_back(WatchOutput::Heartbeat {
                revision: self.sent,
            });
        }
        self.phase = Phase::Following {
            until_ms: now_ms.saturating_add(self.config.poll_ms),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract::event;

    fn drain(watch: &mut Watch) -> Vec<WatchOutput> {
        std::iter::from_fn(|| watch.poll()).collect()
    }

    fn sent(outputs: &[WatchOutput]) -> Vec<u64> {
        outputs
            .iter()
            .filter_map(|o| match o {
                WatchOutput::Send(e) => Some(e.revision),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn catches_up_in_batches_then_follows_live_events() {
        let config = WatchConfig {
            batch: 2,
            ..WatchConfig::DEFAULT
        };
        let mut w = Watch::new(config, 0, true, 0);
        assert_eq!(drain(&mut w), [WatchOutput::ReadLog { after: 0, limit: 2 }]);
        w.handle(WatchInput::Read(Ok(vec![event(1), event(2)])), 0);
        let out = drain(&mut w);
        assert_eq!(sent(&out), [1, 2]);
        assert_eq!(
            out.last(),
            Some(&WatchOutput::ReadLog { after: 2, limit: 2 })
        );
        w.handle(WatchInput::Read(Ok(vec![])), 0);
        assert!(w.following());
        w.handle(WatchInput::Live(event(2)), 10);
        w.handle(WatchInput::Live(event(3)), 10);
        assert_eq!(sent(&drain(&mut w)), [3]);
    }

    #[test]
    fn a_gap_or_a_lag_in_live_events_goes_back_to_the_log() {
        let mut w = Watch::new(WatchConfig::DEFAULT, 5, true, 0);
        drain(&mut w);
        w.handle(WatchInput::Read(Ok(vec![])), 0);
        w.handle(WatchInput::Live(event(8)), 1);
        assert_eq!(
            drain(&mut w),
            [WatchOutput::ReadLog {
                after: 5,
                limit: 1024
            }]
        );
        assert!(!w.following());
        // A live event that arrives while reading is not sent twice or out of order.
        w.handle(WatchInput::Live(event(6)), 1);
        w.handle(WatchInput::Read(Ok(vec![event(6), event(7), event(8)])), 2);
        assert_eq!(sent(&drain(&mut w)), [6, 7, 8]);
        w.handle(WatchInput::Read(Ok(vec![])), 2);
        w.handle(WatchInput::Lagged, 3);
        assert_eq!(
            drain(&mut w),
            [WatchOutput::ReadLog {
                after: 8,
                limit: 1024
            }]
        );
    }

    #[test]
    fn a_quiet_stream_heartbeats_and_reads_the_log_itself_only_after_the_long_poll() {
        let mut w = Watch::new(WatchConfig::DEFAULT, 0, true, 0);
        drain(&mut w);
        w.handle(WatchInput::Read(Ok(vec![])), 0);
        assert_eq!(w.next_deadline_ms(), 1_000, "the heartbeat comes first");
        w.handle(WatchInput::Tick, 999);
        assert!(drain(&mut w).is_empty());
        w.handle(WatchInput::Tick, 1_000);
        assert_eq!(
            drain(&mut w),
            [WatchOutput::Heartbeat { revision: 0 }],
            "a heartbeat without a store read"
        );
        assert_eq!(w.next_deadline_ms(), 2_000);
        w.handle(WatchInput::Tick, 5_000);
        assert!(matches!(drain(&mut w)[..], [WatchOutput::ReadLog { .. }]));
        w.handle(WatchInput::Read(Ok(vec![])), 5_000);
        assert_eq!(drain(&mut w), [WatchOutput::Heartbeat { revision: 0 }]);
        w.handle(WatchInput::Tick, 5_500);
        assert!(
            drain(&mut w).is_empty(),
            "no second heartbeat within a second"
        );
        // A live event resets both clocks.
        w.handle(WatchInput::Live(event(1)), 5_600);
        assert_eq!(sent(&drain(&mut w)), [1]);
        assert_eq!(w.next_deadline_ms(), 6_600);
    }

    #[test]
    fn a_watch_from_the_largest_revision_waits_quietly() {
        let mut w = Watch::new(WatchConfig::DEFAULT, u64::MAX, true, 0);
        drain(&mut w);
        w.handle(WatchInput::Read(Ok(vec![])), 0);
        w.handle(WatchInput::Live(event(7)), 1);
        assert!(
            drain(&mut w).is_empty(),
            "nothing after u64::MAX, and no panic"
        );
    }

    #[test]
    fn a_watch_that_does_not_follow_ends_when_caught_up_and_a_failed_read_ends_it() {
        let mut w = Watch::new(WatchConfig::DEFAULT, 0, false, 0);
        drain(&mut w);
        w.handle(WatchInput::Read(Ok(vec![event(1)])), 0);
        drain(&mut w);
        w.handle(WatchInput::Read(Ok(vec![])), 0);
        assert_eq!(drain(&mut w), [WatchOutput::Done]);

        let mut w = Watch::new(WatchConfig::DEFAULT, 0, true, 0);
        drain(&mut w);
        w.handle(WatchInput::Read(Err(StoreError::Io("gone".into()))), 0);
        assert_eq!(
            drain(&mut w),
            [WatchOutput::Failed("store I/O error: gone".into())]
        );
    }

    #[test]
    fn a_subscriber_behind_the_truncated_log_is_told_to_load_a_snapshot() {
        let mut w = Watch::new(WatchConfig::DEFAULT, 3, true, 0);
        assert_eq!(
            drain(&mut w),
            [WatchOutput::ReadLog {
                after: 3,
                limit: 1024
            }]
        );
        w.handle(
            WatchInput::Read(Err(StoreError::Truncated {
                after: 3,
                through: 40,
            })),
            0,
        );
        assert_eq!(drain(&mut w), [WatchOutput::Truncated { through: 40 }]);
        w.handle(WatchInput::Live(event(41)), 1);
        assert!(drain(&mut w).is_empty(), "the stream has ended");
    }
}
