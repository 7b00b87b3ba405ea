//! Catalog cache: the Query replica's copy of the registry, fed by Metasrv's change stream.
//!
//! The shell feeds [`CacheInput`]s through [`CatalogCache::handle`] and then drains
//! [`CatalogCache::poll`]: [`CacheOutput::FetchSnapshot`] asks it to fetch the whole registry
//! from Metasrv and feed it back as [`CacheInput::Snapshot`]. Reads go through
//! [`CatalogCache::read`].
//!
//! Guarantees: events apply in revision order; a gap triggers one resync; concurrent needs
//! for a newer revision coalesce into a single fetch; the revision never goes backwards; a
//! snapshot replaces the registry whole, so a reader never sees an empty or partial
//! generation; after the stream has been lost for longer than the lease, reads report the
//! cache as unverified.

use std::collections::VecDeque;

use crate::registry::{ChangeEvent, Registry};

/// Inputs of the [`CatalogCache`].
#[derive(Clone, Debug)]
pub enum CacheInput {
    /// The next event of the change stream.
    Event(ChangeEvent),
    /// A whole registry fetched from Metasrv.
    Snapshot(Registry),
    /// The change stream is (re)connected and delivering from our revision.
    StreamUp,
    /// The change stream broke.
    StreamDown,
    /// A reader needs at least this revision (a read-your-writes token).
    NeedRevision(u64),
}

/// Outputs of the [`CatalogCache`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheOutput {
    /// Fetch the registry and feed [`CacheInput::Snapshot`] (at most one outstanding).
    FetchSnapshot,
    /// The cache moved to this revision: wake readers waiting for it.
    Advanced(u64),
}

/// Why a read cannot be served from the cache.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// The cache is behind the caller's token; a fetch is under way.
    #[error("catalog cache is at revision {have}, the request needs revision {want}")]
    Behind { have: u64, want: u64 },
}

/// The catalog cache. See the module docs.
pub struct CatalogCache {
    registry: Registry,
    lease_ms: i64,
    stream_down_since_ms: Option<i64>,
    fetching: bool,
    outputs: VecDeque<CacheOutput>,
}

impl CatalogCache {
    /// An empty cache (revision 0). `lease_ms` is how long the cache stays verified after
    /// its change stream is lost.
    pub fn new(lease_ms: i64) -> Self {
        Self {
            registry: Registry::new(),
            lease_ms,
            stream_down_since_ms: Some(i64::MIN),
            fetching: false,
            outputs: VecDeque::new(),
        }
    }

    /// Revision of the cached registry.
    pub fn revision(&self) -> u64 {
        self.registry.revision()
    }

    /// Feeds one input; `now_ms` is the shell's clock. Drain [`Self::poll`] afterwards.
    pub fn handle(&mut self, input: CacheInput, now_ms: i64) {
        let before = self.registry.revision();
        match input {
            CacheInput::Event(event) => {
                if event.revision <= before {
                    // Duplicate or already covered by a snapshot.
                } else if self.registry.apply(&event).is_err() {
                    self.request_fetch();
                }
            }
            CacheInput::Snapshot(registry) => {
                self.fetching = false;
                if registry.revision() > before {
                    self.registry = registry;
                }
            }
            CacheInput::StreamUp => self.stream_down_since_ms = None,
            CacheInput::StreamDown => {
                self.stream_down_since_ms.get_or_insert(now_ms);
            }
            CacheInput::NeedRevision(want) => {
                if want > before {
                    self.request_fetch();
                }
            }
        }
        let after = self.registry.revision();
        if after > before {
            self.outputs.push_back(CacheOutput::Advanced(after));
        }
    }

    fn request_fetch(&mut self) {
        if !self.fetching {
            self.fetching = true;
            self.outputs.push_back(CacheOutput::FetchSnapshot);
        }
    }

    /// Next output, or `None`.
    #[must_use]
    pub fn poll(&mut self) -> Option<CacheOutput> {
        self.outputs.pop_front()
    }

    /// The cached registry if it is at least at `min_revision`.
    ///
    /// # Errors
    /// [`CacheError::Behind`]: feed [`CacheInput::NeedRevision`] and wait for
    /// [`CacheOutput::Advanced`].
    pub fn read(&self, min_revision: u64) -> Result<&Registry, CacheError> {
        if self.registry.revision() >= min_revision {
            Ok(&self.registry)
        } else {
            Err(CacheError::Behind {
                have: self.registry.revision(),
                want: min_revision,
            })
        }
    }

    /// Whether the cache is verified at `now_ms`: its stream is up, or has been down for at
    /// most the lease.
    pub fn is_verified(&self, now_ms: i64) -> bool {
        match self.stream_down_since_ms {
            None => true,
            Some(since) => now_ms.saturating_sub(since) <= self.lease_ms,
        }
    }
}
