//! The Query replica's side of the change stream: a [`CatalogCache`] plus the timers that
//! keep it fed, as one machine the query shell and the cluster simulation both drive.
//!
//! It owns: opening the watch from the cache's revision and reopening it after a loss with
//! exponential backoff (100 ms doubling to 5 s, reset once a stream delivers an event or a
//! heartbeat: a node that accepts streams but cannot read its store does not reset it);
//! telling the current stream and fetch from late words of dropped ones (ids); declaring a
//! stream lost when it was silent (no event, no heartbeat) for `silence_max_ms` (a paused
//! node, a dropped connection); giving a reader's read-your-writes token `fetch_grace_ms`
//! for the stream to bring it before asking for a snapshot (coalesced: one fetch however
//! many readers wait; a token no snapshot brings is given up after three fetches); retrying
//! a failed snapshot fetch after `fetch_retry_ms`, and a fetch with no answer or progress
//! for `fetch_deadline_ms`; and, when the stream is told the log no longer holds what the
//! cache lacks (truncated after a checkpoint), fetching a snapshot and keeping the stream
//! closed until it arrives.
//!
//! Calling contract, as for the other machines: feed [`FollowerInput`]s with the replica's
//! clock through [`Follower::handle`], drain [`Follower::poll`], and tick no later than
//! [`Follower::next_deadline_ms`]. For [`FollowerOutput::OpenStream`], drop any stream still
//! open and open `Watch(from_revision, follow)`; feed [`FollowerInput::StreamOpened`], then
//! its items, then [`FollowerInput::StreamEnded`] when it breaks or cannot open, each with
//! the stream's id. [`FollowerOutput::CloseStream`] drops the stream. For
//! [`FollowerOutput::FetchSnapshot`], fetch the whole registry (an earlier fetch may be
//! dropped), feed [`FollowerInput::FetchProgress`] as its messages arrive and
//! [`FollowerInput::Fetched`] with the fetch's id at the end. Inputs naming a stream
//! or fetch that is no longer current are ignored, so a shell need not filter them.

use std::collections::VecDeque;

use crate::cache::{CacheInput, CacheOutput, CatalogCache};
use crate::registry::{ChangeEvent, Registry};

/// Timers of a [`Follower`], in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FollowerConfig {
    /// How long the cache stays verified after its stream is lost (the Metasrv lease).
    pub lease_ms: i64,
    /// First wait before reopening a lost stream; doubles per failed attempt.
    pub reconnect_min_ms: i64,
    /// Longest wait before reopening.
    pub reconnect_max_ms: i64,
    /// A stream silent this long is lost (Metasrv heartbeats every second).
    pub silence_max_ms: i64,
    /// How long a reader's token may wait for the stream before a snapshot is fetched.
    pub fetch_grace_ms: i64,
    /// Wait before retrying a failed snapshot fetch.
    pub fetch_retry_ms: i64,
    /// A fetch with no answer and no progress ([`FollowerInput::FetchProgress`]) this long
    /// is made again.
    pub fetch_deadline_ms: i64,
    /// Snapshots fetched for one reader's token before it is given up (its reader times
    /// out; a token above the store's head, say from a restored store, never arrives).
    pub fetches_per_need: u32,
}

impl FollowerConfig {
    /// What Lake's Query replica runs with, given the Metasrv lease: reconnects from 100 ms
    /// to 5 s, 10 s of silence, a 200 ms grace for tokens, fetch retries after 500 ms, a
    /// fetch made again after 10 s without progress (Metasrv sends a keepalive every 2 s
    /// while it loads a snapshot, then 1 MiB messages), three fetches per token.
    pub fn new(lease_ms: i64) -> Self {
        Self {
            lease_ms,
            reconnect_min_ms: 100,
            reconnect_max_ms: 5_000,
            silence_max_ms: 10_000,
            fetch_grace_ms: 200,
            fetch_retry_ms: 500,
            fetch_deadline_ms: 10_000,
            fetches_per_need: 3,
        }
    }
}

/// Inputs of a [`Follower`].
#[derive(Clone, Debug)]
pub enum FollowerInput {
    /// Stream `stream` ([`FollowerOutput::OpenStream`]) is open.
    StreamOpened { stream: u64 },
    /// Stream `stream`'s next event.
    StreamEvent { stream: u64, event: ChangeEvent },
    /// Stream `stream`'s heartbeat: alive, nothing new.
    StreamHeartbeat { stream: u64 },
    /// Stream `stream` broke, ended or could not be opened.
    StreamEnded { stream: u64, error: String },
    /// Stream `stream` ended because the log no longer holds the events after revision
    /// `after` (where it started; they were removed after a checkpoint, see
    /// [`crate::WatchOutput::Truncated`]): a snapshot is fetched at once (unless one is
    /// out), and the stream stays closed until it arrives, then reopens from its revision.
    StreamTruncated { stream: u64, after: u64 },
    /// Fetch `fetch` is making progress (a message of the snapshot arrived): its deadline
    /// starts again.
    FetchProgress { fetch: u64 },
    /// The answer to fetch `fetch` ([`FollowerOutput::FetchSnapshot`]).
    Fetched {
        fetch: u64,
        result: Result<Registry, String>,
    },
    /// A reader needs at least this revision (its read-your-writes token).
    Need { revision: u64 },
    /// Time passed.
    Tick,
}

/// Something worth a log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FollowerEvent {
    /// The stream was lost; it is reopened in `retry_in_ms`.
    StreamLost { error: String, retry_in_ms: i64 },
    /// A snapshot fetch failed; it is retried.
    FetchFailed { error: String },
}

/// Outputs of a [`Follower`]; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FollowerOutput {
    /// Open `Watch(from_revision, follow = true)` as stream `stream`, dropping any open one.
    OpenStream { stream: u64, from_revision: u64 },
    /// Drop the open stream.
    CloseStream,
    /// Fetch the whole registry and feed [`FollowerInput::Fetched`] with `fetch`.
    FetchSnapshot { fetch: u64 },
    /// The cache moved to this revision: wake readers waiting for it.
    Advanced(u64),
    /// For logs.
    Event(FollowerEvent),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    /// Opening or open; `heard_ms` is when it last said anything (or was asked for).
    Open { heard_ms: i64 },
    /// Lost; reopened at `retry_at_ms`.
    Down { retry_at_ms: i64 },
    /// Ended because the log no longer holds what the cache lacks: reopened once a snapshot
    /// arrived (from its revision).
    AwaitingSnapshot,
}

/// A replica's catalog follower. See the module docs.
pub struct Follower {
    config: FollowerConfig,
    cache: CatalogCache,
    stream: Stream,
    /// The current stream's id (ids count up from 1).
    stream_id: u64,
    /// The current fetch's id.
    fetch_id: u64,
    backoff_ms: i64,
    /// The highest revision readers wait for, when to fetch if the stream has not brought
    /// it (`i64::MAX` once asked), and how many snapshots were fetched for it.
    need: Option<(u64, i64, u32)>,
    /// An outstanding fetch: when to make it again (deadline, or retry after a failure).
    fetch_again_ms: Option<i64>,
    outputs: VecDeque<FollowerOutput>,
}

impl Follower {
    /// A follower over `registry` (the first snapshot) that opens its stream at once.
    pub fn new(config: FollowerConfig, registry: Registry, now_ms: i64) -> Self {
        let mut cache = CatalogCache::new(config.lease_ms);
        cache.handle(CacheInput::Snapshot(registry), now_ms);
        while cache.poll().is_some() {}
        let mut follower = Self {
            config,
            cache,
            stream: Stream::Down {
                retry_at_ms: now_ms,
            },
            stream_id: 0,
            fetch_id: 0,
            backoff_ms: config.reconnect_min_ms,
            need: None,
            fetch_again_ms: None,
            outputs: VecDeque::new(),
        };
        follower.on_time(now_ms);
        follower
    }

    /// The cache (reads, verification).
    pub fn cache(&self) -> &CatalogCache {
        &self.cache
    }

    /// When [`FollowerInput::Tick`] is due, in the replica's milliseconds.
    pub fn next_deadline_ms(&self) -> i64 {
        let mut next = match self.stream {
            Stream::Open { heard_ms } => heard_ms.saturating_add(self.config.silence_max_ms),
            Stream::Down { retry_at_ms } => retry_at_ms,
            Stream::AwaitingSnapshot => i64::MAX,
        };
        if let Some((_, due, _)) = self.need {
            next = next.min(due);
        }
        if let Some(at) = self.fetch_again_ms {
            next = next.min(at);
        }
        next
    }

    /// Feeds one input at `now_ms`; drain [`Self::poll`] afterwards.
    pub fn handle(&mut self, input: FollowerInput, now_ms: i64) {
        match input {
            FollowerInput::StreamOpened { stream } if stream == self.stream_id => {
                self.stream = Stream::Open { heard_ms: now_ms };
                self.feed(CacheInput::StreamUp, now_ms);
            }
            FollowerInput::StreamEvent { stream, event } if stream == self.stream_id => {
                self.heard(now_ms);
                self.feed(CacheInput::Event(event), now_ms);
            }
            FollowerInput::StreamHeartbeat { stream } if stream == self.stream_id => {
                self.heard(now_ms);
            }
            FollowerInput::StreamEnded { stream, error } if stream == self.stream_id => {
                if matches!(self.stream, Stream::Open { .. }) {
                    self.lost(error, now_ms);
                }
            }
            FollowerInput::StreamTruncated { stream, after } if stream == self.stream_id => {
                if matches!(self.stream, Stream::Open { .. }) {
                    let error = format!(
                        "the log no longer holds the events after revision {after} (removed after a checkpoint); loading a snapshot"
                    );
                    self.lost(error, now_ms);
                    self.stream = Stream::AwaitingSnapshot;
                }
                // One fetch at a time (a slow one is never replaced); its deadline covers a
                // lost one.
                if self.fetch_again_ms.is_none() {
                    self.fetch();
                    self.fetch_again_ms =
                        Some(now_ms.saturating_add(self.config.fetch_deadline_ms));
                }
            }
            FollowerInput::FetchProgress { fetch }
                if fetch == self.fetch_id && self.fetch_again_ms.is_some() =>
            {
                self.fetch_again_ms = Some(now_ms.saturating_add(self.config.fetch_deadline_ms));
            }
            FollowerInput::Fetched { fetch, result } if fetch == self.fetch_id => match result {
                Ok(registry) => {
                    self.fetch_again_ms = None;
                    self.feed(CacheInput::Snapshot(registry), now_ms);
                    if self.stream == Stream::AwaitingSnapshot {
                        self.stream = Stream::Down {
                            retry_at_ms: now_ms,
                        };
                    }
                    // A token the snapshot did not bring (acknowledged while it was read):
                    // ask again after the retry wait, a few times.
                    if let Some((want, _, fetches)) = self.need {
                        self.need = (fetches + 1 < self.config.fetches_per_need).then_some((
                            want,
                            now_ms.saturating_add(self.config.fetch_retry_ms),
                            fetches + 1,
                        ));
                    }
                }
                Err(error) => {
                    if self.fetch_again_ms.is_some() {
                        self.fetch_again_ms =
                            Some(now_ms.saturating_add(self.config.fetch_retry_ms));
                        self.outputs
                            .push_back(FollowerOutput::Event(FollowerEvent::FetchFailed { error }));
                    }
                }
            },
            FollowerInput::Need { revision } if revision > self.cache.revision() => {
                let due = now_ms.saturating_add(self.config.fetch_grace_ms);
                self.need = Some(match self.need {
                    Some((want, at, fetches)) => (want.max(revision), at, fetches),
                    None => (revision, due, 0),
                });
            }
            // Late words of a dropped stream or fetch, a token already reached, or time
            // passing.
            _ => {}
        }
        self.on_time(now_ms);
    }

    /// Next output, or `None` until the next input.
    #[must_use]
    pub fn poll(&mut self) -> Option<FollowerOutput> {
        self.outputs.pop_front()
    }

    /// The open stream said something: it is alive, and it works (the backoff resets).
    fn heard(&mut self, now_ms: i64) {
        if let Stream::Open { heard_ms } = &mut self.stream {
            *heard_ms = now_ms;
            self.backoff_ms = self.config.reconnect_min_ms;
        }
    }

    fn lost(&mut self, error: String, now_ms: i64) {
        let retry_in_ms = self.backoff_ms;
        self.stream = Stream::Down {
            retry_at_ms: now_ms.saturating_add(retry_in_ms),
        };
        self.backoff_ms = (self.backoff_ms * 2).min(self.config.reconnect_max_ms);
        self.outputs
            .push_back(FollowerOutput::Event(FollowerEvent::StreamLost {
                error,
                retry_in_ms,
            }));
        self.feed(CacheInput::StreamDown, now_ms);
    }

    fn on_time(&mut self, now_ms: i64) {
        match self.stream {
            Stream::Open { heard_ms }
                if now_ms.saturating_sub(heard_ms) >= self.config.silence_max_ms =>
            {
                self.outputs.push_back(FollowerOutput::CloseStream);
                let error = format!(
                    "the watch stream was silent for {} ms",
                    self.config.silence_max_ms
                );
                self.lost(error, now_ms);
            }
            Stream::Down { retry_at_ms } if now_ms >= retry_at_ms => {
                self.stream = Stream::Open { heard_ms: now_ms };
                self.stream_id += 1;
                self.outputs.push_back(FollowerOutput::OpenStream {
                    stream: self.stream_id,
                    from_revision: self.cache.revision(),
                });
            }
            _ => {}
        }
        if let Some((want, due, fetches)) = self.need
            && now_ms >= due
        {
            self.need = Some((want, i64::MAX, fetches));
            if self.fetch_again_ms.is_none() {
                self.feed(CacheInput::NeedRevision(want), now_ms);
            }
        }
        if let Some(at) = self.fetch_again_ms
            && now_ms >= at
        {
            self.fetch();
            self.fetch_again_ms = Some(now_ms.saturating_add(self.config.fetch_deadline_ms));
        }
    }

    /// Asks for a new fetch (a new id: the answer of an earlier one is ignored).
    fn fetch(&mut self) {
        self.fetch_id += 1;
        self.outputs.push_back(FollowerOutput::FetchSnapshot {
            fetch: self.fetch_id,
        });
    }

    fn feed(&mut self, input: CacheInput, now_ms: i64) {
        let before = self.cache.revision();
        self.cache.handle(input, now_ms);
        while let Some(output) = self.cache.poll() {
            match output {
                CacheOutput::FetchSnapshot => {
                    self.fetch();
                    self.fetch_again_ms =
                        Some(now_ms.saturating_add(self.config.fetch_deadline_ms));
                }
                CacheOutput::Advanced(revision) => {
                    debug_assert!(revision > before, "a cache never moves backwards");
                    if self.need.is_some_and(|(want, _, _)| revision >= want) {
                        self.need = None;
                    }
                    self.outputs.push_back(FollowerOutput::Advanced(revision));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract::event;

    fn drain(f: &mut Follower) -> Vec<FollowerOutput> {
        std::iter::from_fn(|| f.poll()).collect()
    }

    fn follower() -> Follower {
        Follower::new(FollowerConfig::new(2_000), Registry::new(), 0)
    }

    /// The id of the stream the follower just asked to open.
    fn opened(out: &[FollowerOutput]) -> u64 {
        match out {
            [.., FollowerOutput::OpenStream { stream, .. }] => *stream,
            other => panic!("expected OpenStream, got {other:?}"),
        }
    }

    #[test]
    fn reopens_with_doubling_backoff_that_only_a_stream_that_delivers_resets() {
        let mut f = follower();
        let mut stream = opened(&drain(&mut f));
        let mut waits = Vec::new();
        let mut now = 0;
        for _ in 0..8 {
            // Each stream opens, then fails before saying anything (a node that accepts
            // streams but cannot read its store): no reset.
            f.handle(FollowerInput::StreamOpened { stream }, now);
            f.handle(
                FollowerInput::StreamEnded {
                    stream,
                    error: "x".into(),
                },
                now,
            );
            drain(&mut f);
            let at = f.next_deadline_ms();
            waits.push(at - now);
            now = at;
            f.handle(FollowerInput::Tick, now);
            stream = opened(&drain(&mut f));
        }
        assert_eq!(waits, [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
        f.handle(FollowerInput::StreamOpened { stream }, now);
        f.handle(FollowerInput::StreamHeartbeat { stream }, now);
        f.handle(
            FollowerInput::StreamEnded {
                stream,
                error: "x".into(),
            },
            now,
        );
        drain(&mut f);
        assert_eq!(f.next_deadline_ms() - now, 100, "a heartbeat reset it");
    }

    #[test]
    fn a_dropped_stream_or_fetch_is_not_heard() {
        let mut f = follower();
        let old = opened(&drain(&mut f));
        f.handle(FollowerInput::StreamOpened { stream: old }, 0);
        f.handle(
            FollowerInput::StreamEnded {
                stream: old,
                error: "reset".into(),
            },
            0,
        );
        f.handle(FollowerInput::Tick, 100);
        let new = opened(&drain(&mut f));
        assert_ne!(old, new);
        f.handle(FollowerInput::StreamOpened { stream: new }, 100);
        f.handle(
            FollowerInput::StreamEvent {
                stream: old,
                event: event(1),
            },
            110,
        );
        f.handle(
            FollowerInput::StreamEnded {
                stream: old,
                error: "late".into(),
            },
            120,
        );
        assert!(
            drain(&mut f).is_empty(),
            "the old stream's words are ignored"
        );
        assert_eq!(f.cache().revision(), 0);
        assert!(f.cache().is_verified(130), "the new stream is still up");
    }

    #[test]
    fn a_silent_stream_is_closed_and_reopened_from_the_cache_revision() {
        let mut f = follower();
        let stream = opened(&drain(&mut f));
        f.handle(FollowerInput::StreamOpened { stream }, 0);
        f.handle(
            FollowerInput::StreamEvent {
                stream,
                event: event(1),
            },
            10,
        );
        assert_eq!(drain(&mut f), [FollowerOutput::Advanced(1)]);
        f.handle(FollowerInput::StreamHeartbeat { stream }, 5_000);
        f.handle(FollowerInput::Tick, 14_999);
        assert!(
            drain(&mut f).is_empty(),
            "a heartbeat keeps the stream alive"
        );
        f.handle(FollowerInput::Tick, 15_000);
        let out = drain(&mut f);
        assert_eq!(out[0], FollowerOutput::CloseStream);
        assert!(f.cache().is_verified(15_000 + 2_000));
        assert!(!f.cache().is_verified(15_000 + 2_001));
        f.handle(FollowerInput::Tick, 15_100);
        assert_eq!(
            drain(&mut f),
            [FollowerOutput::OpenStream {
                stream: stream + 1,
                from_revision: 1
            }]
        );
    }

    #[test]
    fn a_token_waits_the_grace_then_one_fetch_serves_every_reader() {
        let mut f = follower();
        let stream = opened(&drain(&mut f));
        f.handle(FollowerInput::StreamOpened { stream }, 0);
        f.handle(FollowerInput::Need { revision: 3 }, 0);
        f.handle(FollowerInput::Need { revision: 5 }, 100);
        f.handle(FollowerInput::Tick, 199);
        assert!(drain(&mut f).is_empty());
        f.handle(FollowerInput::Tick, 200);
        assert_eq!(drain(&mut f), [FollowerOutput::FetchSnapshot { fetch: 1 }]);
        f.handle(FollowerInput::Need { revision: 6 }, 210);
        f.handle(FollowerInput::Tick, 500);
        assert!(drain(&mut f).is_empty(), "one fetch at a time");
        f.handle(
            FollowerInput::Fetched {
                fetch: 1,
                result: Err("down".into()),
            },
            600,
        );
        assert!(matches!(
            drain(&mut f)[..],
            [FollowerOutput::Event(FollowerEvent::FetchFailed { .. })]
        ));
        f.handle(FollowerInput::Tick, 1_100);
        assert_eq!(drain(&mut f), [FollowerOutput::FetchSnapshot { fetch: 2 }]);
        let registry =
            Registry::from_log(&(1..=6).map(event).collect::<Vec<_>>()).expect("replays");
        // The first fetch's late answer is not taken for the second's.
        f.handle(
            FollowerInput::Fetched {
                fetch: 1,
                result: Ok(Registry::new()),
            },
            1_150,
        );
        assert!(drain(&mut f).is_empty());
        f.handle(
            FollowerInput::Fetched {
                fetch: 2,
                result: Ok(registry),
            },
            1_200,
        );
        assert_eq!(drain(&mut f), [FollowerOutput::Advanced(6)]);
        assert_eq!(
            f.next_deadline_ms(),
            10_000,
            "only the silence timer is left"
        );
    }

    #[test]
    fn a_token_no_snapshot_brings_is_given_up_after_three_fetches() {
        let mut f = follower();
        let stream = opened(&drain(&mut f));
        f.handle(FollowerInput::StreamOpened { stream }, 0);
        f.handle(FollowerInput::Need { revision: 99 }, 0);
        let mut now = 200;
        let mut fetches = 0;
        for _ in 0..20 {
            f.handle(FollowerInput::Tick, now);
            for output in drain(&mut f) {
                if let FollowerOutput::FetchSnapshot { fetch } = output {
                    fetches += 1;
                    f.handle(
                        FollowerInput::Fetched {
                            fetch,
                            result: Ok(Registry::new()),
                        },
                        now,
                    );
                }
            }
            now += 600;
        }
        assert_eq!(fetches, 3, "a token above the store's head is given up");
    }

    #[test]
    fn a_token_the_stream_brings_in_time_needs_no_fetch() {
        let mut f = follower();
        let stream = opened(&drain(&mut f));
        f.handle(FollowerInput::StreamOpened { stream }, 0);
        f.handle(FollowerInput::Need { revision: 1 }, 0);
        f.handle(
            FollowerInput::StreamEvent {
                stream,
                event: event(1),
            },
            50,
        );
        f.handle(FollowerInput::Tick, 1_000);
        assert_eq!(drain(&mut f), [FollowerOutput::Advanced(1)]);
    }

    #[test]
    fn a_stream_behind_the_truncated_log_fetches_a_snapshot_and_reopens_after_it() {
        let mut f = follower();
        let stream = opened(&drain(&mut f));
        f.handle(FollowerInput::StreamOpened { stream }, 0);
        f.handle(FollowerInput::StreamTruncated { stream, after: 0 }, 10);
        let out = drain(&mut f);
        let fetch = out
            .iter()
            .find_map(|o| match o {
                FollowerOutput::FetchSnapshot { fetch } => Some(*fetch),
                _ => None,
            })
            .expect("a snapshot is fetched at once, with no reader waiting");
        // Until it arrives the stream stays closed (reopening it from revision 0 would only
        // be told the same again), and the fetch is not replaced however long it takes.
        f.handle(FollowerInput::Tick, 15);
        f.handle(FollowerInput::StreamTruncated { stream, after: 0 }, 16);
        f.handle(FollowerInput::Tick, 9_000);
        let waiting = drain(&mut f);
        assert!(
            !waiting.iter().any(|o| matches!(
                o,
                FollowerOutput::OpenStream { .. } | FollowerOutput::FetchSnapshot { .. }
            )),
            "{waiting:?}"
        );
        let log: Vec<ChangeEvent> = (1..=50).map(event).collect();
        let registry = Registry::from_log(&log).expect("replays");
        f.handle(
            FollowerInput::Fetched {
                fetch,
                result: Ok(registry),
            },
            9_010,
        );
        // The snapshot arrives: the cache moves to it and the stream reopens from it at once.
        let out = drain(&mut f);
        assert!(out.contains(&FollowerOutput::Advanced(50)), "{out:?}");
        match out.as_slice() {
            [.., FollowerOutput::OpenStream { from_revision, .. }] => {
                assert_eq!(*from_revision, 50, "the stream reopens after the snapshot");
            }
            other => panic!("expected OpenStream, got {other:?}"),
        }
    }

    #[test]
    fn a_fetch_that_makes_progress_is_not_made_again_and_a_silent_one_is() {
        let mut f = follower();
        let stream = opened(&drain(&mut f));
        f.handle(FollowerInput::StreamOpened { stream }, 0);
        f.handle(FollowerInput::StreamTruncated { stream, after: 0 }, 0);
        let fetches = |out: &[FollowerOutput]| -> Vec<u64> {
            out.iter()
                .filter_map(|o| match o {
                    FollowerOutput::FetchSnapshot { fetch } => Some(*fetch),
                    _ => None,
                })
                .collect()
        };
        let first = fetches(&drain(&mut f));
        assert_eq!(first.len(), 1);
        // Progress at 9 s: the deadline moves to 19 s.
        f.handle(FollowerInput::FetchProgress { fetch: first[0] }, 9_000);
        f.handle(FollowerInput::Tick, 18_999);
        assert!(fetches(&drain(&mut f)).is_empty(), "still progressing");
        f.handle(FollowerInput::Tick, 19_000);
        let again = fetches(&drain(&mut f));
        assert_eq!(again.len(), 1, "10 s without progress: made again");
        assert_ne!(again[0], first[0]);
        // A late word of the first fetch changes nothing.
        f.handle(FollowerInput::FetchProgress { fetch: first[0] }, 19_001);
        f.handle(FollowerInput::Tick, 29_000);
        assert_eq!(
            fetches(&drain(&mut f)).len(),
            1,
            "the second fetch's own deadline"
        );
    }
}
