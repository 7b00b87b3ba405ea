//! The catalog cache shell: drives `lake_core::CatalogCache` from Metasrv's change stream.
//!
//! One follower task keeps a `Watch` stream open from the cache's revision. A gap, a lost
//! stream or a caller's read-your-writes token that the cache has not reached yet makes the
//! core ask for a snapshot, which the shell fetches (once, however many callers wait) by
//! replaying the change stream from revision 0 without following.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use lake_core::{CacheInput, CacheOutput, CatalogCache, Registry};
use lake_metasrv::MetasrvClient;
use tokio::sync::watch;

use crate::QueryError;

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The replica's catalog: the core cache plus the tasks that feed it.
pub struct Catalog {
    cache: Mutex<CatalogCache>,
    revision: watch::Sender<u64>,
    metasrv: MetasrvClient,
}

impl Catalog {
    /// Loads the registry from Metasrv and starts following its change stream.
    /// `lease_ms`: how long the cache counts as verified after the stream is lost.
    ///
    /// # Errors
    /// [`QueryError::Metasrv`] when the first snapshot cannot be fetched.
    pub async fn start(metasrv: MetasrvClient, lease_ms: i64) -> Result<Arc<Self>, QueryError> {
        let registry = fetch_snapshot(&metasrv).await?;
        let mut cache = CatalogCache::new(lease_ms);
        cache.handle(CacheInput::Snapshot(registry), now_ms());
        let revision = cache.revision();
        while cache.poll().is_some() {}
        let catalog = Arc::new(Self {
            cache: Mutex::new(cache),
            revision: watch::channel(revision).0,
            metasrv,
        });
        tokio::spawn(follow(Arc::downgrade(&catalog)));
        Ok(catalog)
    }

    /// Runs `f` on the cached registry. The registry is a whole generation: never empty or
    /// partial while a refresh is under way.
    pub fn with_registry<T>(&self, f: impl FnOnce(&Registry) -> T) -> T {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        // read(0) cannot fail.
        match cache.read(0) {
            Ok(registry) => f(registry),
            Err(_) => f(&Registry::new()),
        }
    }

    /// Current cached revision.
    pub fn revision(&self) -> u64 {
        *self.revision.borrow()
    }

    /// Waits until the cache has reached `min_revision` (a read-your-writes token),
    /// fetching a snapshot if the stream does not bring it.
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
        let wait = async {
            // Give the stream a moment before asking for a snapshot.
            if tokio::time::timeout(
                Duration::from_millis(200),
                rx.wait_for(|r| *r >= min_revision),
            )
            .await
            .is_ok()
            {
                return;
            }
            self.feed(CacheInput::NeedRevision(min_revision));
            let _ = rx.wait_for(|r| *r >= min_revision).await;
        };
        tokio::time::timeout(timeout, wait).await.map_err(|_| {
            QueryError::Timeout(format!(
                "catalog cache is at revision {}, the request needs revision {min_revision}; metasrv did not deliver it within {} ms",
                self.revision(),
                timeout.as_millis()
            ))
        })
    }

    /// Whether the cache is verified now (its stream is up or was lost less than a lease ago).
    pub fn is_verified(&self) -> bool {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.is_verified(now_ms())
    }

    fn feed(self: &Arc<Self>, input: CacheInput) {
        let mut fetch = false;
        {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            cache.handle(input, now_ms());
            while let Some(output) = cache.poll() {
                match output {
                    CacheOutput::FetchSnapshot => fetch = true,
                    CacheOutput::Advanced(revision) => {
                        self.revision.send_replace(revision);
                    }
                }
            }
        }
        if fetch {
            let catalog = self.clone();
            tokio::spawn(async move {
                loop {
                    match fetch_snapshot(&catalog.metasrv).await {
                        Ok(registry) => {
                            catalog.feed(CacheInput::Snapshot(registry));
                            return;
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "catalog snapshot fetch failed; retrying");
                            tokio::time::sleep(Duration::from_millis(500)).await;
                        }
                    }
                }
            });
        }
    }
}

async fn fetch_snapshot(metasrv: &MetasrvClient) -> Result<Registry, QueryError> {
    let mut registry = Registry::new();
    let mut stream = Box::pin(metasrv.watch(0, false).await?);
    while let Some(event) = stream.next().await {
        let event = event?;
        registry
            .apply(&event)
            .map_err(|e| QueryError::Execution(format!("metasrv snapshot does not replay: {e}")))?;
    }
    Ok(registry)
}

async fn follow(catalog: std::sync::Weak<Catalog>) {
    let mut backoff = Duration::from_millis(100);
    loop {
        let Some(strong) = catalog.upgrade() else {
            return;
        };
        let from = strong.revision();
        let metasrv = strong.metasrv.clone();
        drop(strong);
        match metasrv.watch(from, true).await {
            Ok(stream) => {
                let mut stream = Box::pin(stream);
                if let Some(c) = catalog.upgrade() {
                    c.feed(CacheInput::StreamUp);
                }
                backoff = Duration::from_millis(100);
                while let Some(item) = stream.next().await {
                    let Some(c) = catalog.upgrade() else {
                        return;
                    };
                    match item {
                        Ok(event) => c.feed(CacheInput::Event(event)),
                        Err(e) => {
                            tracing::warn!(error = %e, "metasrv watch stream failed");
                            break;
                        }
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot open metasrv watch stream"),
        }
        if let Some(c) = catalog.upgrade() {
            c.feed(CacheInput::StreamDown);
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}
