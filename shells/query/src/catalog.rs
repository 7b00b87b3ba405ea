//! The catalog cache shell: drives `lake_core::Follower` (the core `CatalogCache` plus its
//! stream, backoff, silence and fetch timers) with Metasrv's change stream. It decides
//! nothing: it opens and drops the `Watch` stream, fetches snapshots (by replaying the
//! change stream from revision 0 without following) and ticks the follower when it asks.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use lake_core::{Follower, FollowerConfig, FollowerEvent, FollowerInput, FollowerOutput, Registry};
use lake_metasrv::{MetasrvClient, Watched};
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::QueryError;

/// The follower's clock: milliseconds of the monotonic clock since the first call. Its
/// timers (backoff, silence, grace, the cache's verification window) are all relative, and
/// must not jump when NTP steps the system clock.
fn now_ms() -> i64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(std::time::Instant::now);
    i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX)
}

/// The follower and the tasks carrying out its outputs.
struct State {
    follower: Follower,
    stream: Option<AbortHandle>,
    fetch: Option<AbortHandle>,
}

/// The replica's catalog: the core follower plus the tasks that feed it.
pub struct Catalog {
    state: Mutex<State>,
    revision: watch::Sender<u64>,
    /// Wakes the timer task when the follower's next deadline may have moved earlier.
    timer: Arc<tokio::sync::Notify>,
    metasrv: MetasrvClient,
}

impl Catalog {
    /// Loads the registry from Metasrv and starts following its change stream.
    /// `lease_ms`: how long the cache counts as verified after the stream is lost.
    ///
    /// # Errors
    /// [`QueryError::Metasrv`] when the first snapshot cannot be fetched.
    pub async fn start(metasrv: MetasrvClient, lease_ms: i64) -> Result<Arc<Self>, QueryError> {
        // The whole registry at Metasrv's last revision: its checkpoint and the log after it.
        let registry = metasrv.snapshot().await?;
        let revision = registry.revision();
        let follower = Follower::new(FollowerConfig::new(lease_ms), registry, now_ms());
        let catalog = Arc::new(Self {
            state: Mutex::new(State {
                follower,
                stream: None,
                fetch: None,
            }),
            revision: watch::channel(revision).0,
            timer: Arc::new(tokio::sync::Notify::new()),
            metasrv,
        });
        catalog.feed(FollowerInput::Tick);
        tokio::spawn(tick(Arc::downgrade(&catalog)));
        Ok(catalog)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the cached registry. The registry is a whole generation: never empty or
    /// partial while a refresh is under way.
    pub fn with_registry<T>(&self, f: impl FnOnce(&Registry) -> T) -> T {
        let state = self.state();
        // read(0) cannot fail.
        match state.follower.cache().read(0) {
            Ok(registry) => f(registry),
            Err(_) => f(&Registry::new()),
        }
    }

    /// Current cached revision.
    pub fn revision(&self) -> u64 {
        *self.revision.borrow()
    }

    /// Waits until the cache has reached `min_revision` (a read-your-writes token); the
    /// follower fetches a snapshot if the stream does not bring it within its grace.
    ///
    /// # Errors
    /// [`QueryError::Timeout`] after `timeout`.
    pub async fn wait_for(
        self: &Arc<Self>,
        min_revision: u64,
        timeout: Duration,
    ) -> Result<(), QueryError> {
        if self.revision() >= min_revision {
            return Ok(());
        }
        let mut rx = self.revision.subscribe();
        self.feed(FollowerInput::Need {
            revision: min_revision,
        });
        tokio::time::timeout(timeout, rx.wait_for(|r| *r >= min_revision))
            .await
            .map(|_| ())
            .map_err(|_| {
                QueryError::Timeout(format!(
                    "catalog cache is at revision {}, the request needs revision {min_revision}; metasrv did not deliver it within {} ms",
                    self.revision(),
                    timeout.as_millis()
                ))
            })
    }

    /// Whether the cache is verified now (its stream is up or was lost less than a lease ago).
    pub fn is_verified(&self) -> bool {
        self.state().follower.cache().is_verified(now_ms())
    }

    /// Feeds the follower and carries out what it asks. (The follower ignores what a
    /// dropped stream or fetch still says, by id.)
    fn feed(self: &Arc<Self>, input: FollowerInput) {
        let mut state = self.state();
        state.follower.handle(input, now_ms());
        while let Some(output) = state.follower.poll() {
            match output {
                FollowerOutput::OpenStream {
                    stream: id,
                    from_revision,
                } => {
                    if let Some(old) = state.stream.take() {
                        old.abort();
                    }
                    let task = tokio::spawn(stream(Arc::downgrade(self), id, from_revision));
                    state.stream = Some(task.abort_handle());
                }
                FollowerOutput::CloseStream => {
                    if let Some(old) = state.stream.take() {
                        old.abort();
                    }
                }
                FollowerOutput::FetchSnapshot { fetch } => {
                    if let Some(old) = state.fetch.take() {
                        old.abort();
                    }
                    let catalog = Arc::downgrade(self);
                    let metasrv = self.metasrv.clone();
                    let task = tokio::spawn(async move {
                        let progress = || {
                            if let Some(c) = catalog.upgrade() {
                                c.feed(FollowerInput::FetchProgress { fetch });
                            }
                        };
                        let result = metasrv
                            .snapshot_with(progress)
                            .await
                            .map_err(|e| e.to_string());
                        if let Some(c) = catalog.upgrade() {
                            c.feed(FollowerInput::Fetched { fetch, result });
                        }
                    });
                    state.fetch = Some(task.abort_handle());
                }
                FollowerOutput::Advanced(revision) => {
                    self.revision.send_replace(revision);
                }
                FollowerOutput::Event(FollowerEvent::StreamLost { error, retry_in_ms }) => {
                    tracing::warn!(%error, retry_in_ms, "metasrv watch stream lost");
                }
                FollowerOutput::Event(FollowerEvent::FetchFailed { error }) => {
                    tracing::warn!(%error, "catalog snapshot fetch failed; retrying");
                }
            }
        }
        drop(state);
        self.timer.notify_one();
    }
}

/// Ticks the follower at its deadlines while the catalog lives.
async fn tick(catalog: std::sync::Weak<Catalog>) {
    loop {
        let Some(c) = catalog.upgrade() else {
            return;
        };
        let wait_ms = c
            .state()
            .follower
            .next_deadline_ms()
            .saturating_sub(now_ms())
            .clamp(1, 1_000);
        let timer = c.timer.clone();
        drop(c);
        tokio::select! {
            () = timer.notified() => {}
            () = tokio::time::sleep(Duration::from_millis(wait_ms.unsigned_abs())) => {
                match catalog.upgrade() {
                    Some(c) => c.feed(FollowerInput::Tick),
                    None => return,
                }
            }
        }
    }
}

/// Watch stream `id` from revision `from`, fed to the follower until it ends.
async fn stream(catalog: std::sync::Weak<Catalog>, id: u64, from: u64) {
    let Some(metasrv) = catalog.upgrade().map(|c| c.metasrv.clone()) else {
        return;
    };
    let feed = |input| catalog.upgrade().map(|c| c.feed(input)).is_some();
    let error = match metasrv.watch_items(from, true).await {
        Err(e) if e.is_log_truncated() => e,
        Ok(items) => {
            if !feed(FollowerInput::StreamOpened { stream: id }) {
                return;
            }
            let mut items = Box::pin(items);
            loop {
                let input = match items.next().await {
                    Some(Ok(Watched::Event(event))) => {
                        FollowerInput::StreamEvent { stream: id, event }
                    }
                    Some(Ok(Watched::Heartbeat { .. })) => {
                        FollowerInput::StreamHeartbeat { stream: id }
                    }
                    Some(Err(e)) => break e,
                    None => {
                        break lake_metasrv::MetasrvError::Malformed(
                            "the server ended the stream".into(),
                        );
                    }
                };
                if !feed(input) {
                    return;
                }
            }
        }
        Err(e) => e,
    };
    feed(if error.is_log_truncated() {
        // The events after `from` are gone: the follower loads a snapshot.
        FollowerInput::StreamTruncated {
            stream: id,
            after: from,
        }
    } else {
        FollowerInput::StreamEnded {
            stream: id,
            error: error.to_string(),
        }
    });
}
