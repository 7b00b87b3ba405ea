//! The simulations' store: the [`EventStore`] contract kept in memory (what Metasrv's
//! RocksDB and DynamoDB stores keep on disk and in a table), and the faults a real store
//! shows, as a wrapper ([`Faulty`]) around any store.
//!
//! Both pass `lake_core::store::contract::check` (see `tests/store.rs`), so a simulation
//! over them exercises the promises the shipped stores make, not a looser copy.

use std::sync::Mutex;

use lake_core::{AppendLimits, ChangeEvent, EventStore, Fence, Lease, Registry, StoreError};

/// An in-memory [`EventStore`]: one lock makes every check-then-write atomic, as RocksDB's
/// write lock and DynamoDB's conditional transactions do.
#[derive(Debug, Default)]
pub struct SimStore {
    state: Mutex<State>,
    /// What one append takes (DynamoDB's transaction limits, or none).
    limits: Option<AppendLimits>,
    /// A planted bug ([`Self::skipping_fence`]).
    skip_fence: bool,
}

#[derive(Debug, Default)]
struct State {
    /// Every event ever appended (checkers read it whole); readers see only the events
    /// after `truncated`.
    log: Vec<ChangeEvent>,
    lease: Option<Lease>,
    /// The highest revision removed by truncation.
    truncated: u64,
    /// The newest checkpoint (a checkpoint is a registry value: nothing to encode).
    checkpoint: Option<Registry>,
}

impl SimStore {
    /// An empty store whose appends must fit `limits`, like a backend with transaction
    /// limits (it refuses a larger append, writing nothing).
    pub fn with_limits(limits: AppendLimits) -> Self {
        Self {
            limits: Some(limits),
            ..Self::default()
        }
    }

    /// A store with a planted bug: it applies an append whatever the lease says (the fence
    /// is not checked), so a test can prove the fencing checker catches it.
    pub fn skipping_fence() -> Self {
        Self {
            skip_fence: true,
            ..Self::default()
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every event appended so far, in order, truncated ones too (for checkers).
    pub fn log(&self) -> Vec<ChangeEvent> {
        self.state().log.clone()
    }

    /// The highest revision truncation removed (0: none), for scenarios that check
    /// truncation happened.
    pub fn truncated(&self) -> u64 {
        self.state().truncated
    }
}

impl EventStore for SimStore {
    fn append(
        &self,
        fence: &Fence,
        base_revision: u64,
        events: &[ChangeEvent],
    ) -> Result<(), StoreError> {
        if let Some(limits) = self.limits
            && !limits.admit(events)
        {
            return Err(StoreError::Refused(format!(
                "{} events ({} bytes) in one append exceed {limits:?}",
                events.len(),
                events.iter().map(ChangeEvent::size_bound).sum::<usize>()
            )));
        }
        let mut state = self.state();
        if !self.skip_fence && !fence.admits(state.lease.as_ref()) {
            return Err(StoreError::ConditionFailed(format!(
                "the write of leader {} (epoch {}) is fenced off: the lease is now {:?}",
                fence.holder, fence.epoch, state.lease
            )));
        }
        let actual = state.log.len() as u64;
        if actual != base_revision {
            return Err(StoreError::RevisionMismatch {
                expected: base_revision,
                actual,
            });
        }
        if let Some((i, bad)) = events
            .iter()
            .enumerate()
            .find(|(i, e)| e.revision != base_revision + 1 + *i as u64)
        {
            return Err(StoreError::Refused(format!(
                "event {i} of the append has revision {}, expected {}",
                bad.revision,
                base_revision + 1 + i as u64
            )));
        }
        state.log.extend_from_slice(events);
        Ok(())
    }

    fn read_lease(&self) -> Result<Option<Lease>, StoreError> {
        Ok(self.state().lease.clone())
    }

    fn write_lease(&self, expected: Option<&Lease>, lease: &Lease) -> Result<(), StoreError> {
        let mut state = self.state();
        if state.lease.as_ref() != expected {
            return Err(StoreError::ConditionFailed(format!(
                "the lease is {:?}, the write expected {expected:?}",
                state.lease
            )));
        }
        state.lease = Some(lease.clone());
        Ok(())
    }

    fn read_after(&self, after: u64, limit: usize) -> Result<Vec<ChangeEvent>, StoreError> {
        // What a real store holds: the events after the truncation marker; a page that does
        // not follow `after` is judged by the shared check, as the real stores' pages are.
        let state = self.state();
        let start = usize::try_from(after.max(state.truncated))
            .unwrap_or(usize::MAX)
            .min(state.log.len());
        let events: Vec<ChangeEvent> = state.log[start..].iter().take(limit).cloned().collect();
        lake_core::store::check_page(after, &events, || Ok(state.truncated))?;
        Ok(events)
    }

    fn revision(&self) -> Result<u64, StoreError> {
        Ok(self.state().log.len() as u64)
    }

    fn write_checkpoint(&self, registry: &Registry) -> Result<(), StoreError> {
        let mut state = self.state();
        if state
            .checkpoint
            .as_ref()
            .is_none_or(|c| c.revision() < registry.revision())
        {
            state.checkpoint = Some(registry.clone());
        }
        Ok(())
    }

    fn read_checkpoint(&self) -> Result<Option<Registry>, StoreError> {
        Ok(self.state().checkpoint.clone())
    }

    fn truncate(&self, fence: &Fence, through: u64) -> Result<(), StoreError> {
        let mut state = self.state();
        if !self.skip_fence && !fence.admits(state.lease.as_ref()) {
            return Err(StoreError::ConditionFailed(format!(
                "the truncation of leader {} (epoch {}) is fenced off: the lease is now {:?}",
                fence.holder, fence.epoch, state.lease
            )));
        }
        let covered = state.checkpoint.as_ref().map_or(0, Registry::revision);
        let last = state.log.len() as u64;
        if through > covered || through >= last {
            return Err(StoreError::Refused(format!(
                "cannot truncate through {through}: the checkpoint covers {covered}, the last revision ({last}) stays"
            )));
        }
        state.truncated = state.truncated.max(through);
        Ok(())
    }

    fn truncated_through(&self) -> Result<u64, StoreError> {
        Ok(self.state().truncated)
    }

    fn append_limits(&self) -> AppendLimits {
        self.limits.unwrap_or(AppendLimits::UNBOUNDED)
    }
}

/// What the next calls of a [`Faulty`] store do wrong; each count is used up one call at
/// a time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// Writes (appends and lease writes) refused before applying, as a throttled store
    /// does: [`StoreError::Refused`], definitely not written.
    pub throttle_writes: u32,
    /// Writes that apply and then lose their answer: [`StoreError::Io`], outcome unknown
    /// to the caller although the store holds the write.
    pub lose_answers: u32,
    /// Reads that fail with [`StoreError::Io`].
    pub fail_reads: u32,
}

/// A store wrapper that injects [`Faults`]; with none set it is the inner store.
#[derive(Debug, Default)]
pub struct Faulty<S> {
    inner: S,
    faults: Mutex<Faults>,
}

impl<S: EventStore> Faulty<S> {
    /// Wraps `inner` with no faults set.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            faults: Mutex::new(Faults::default()),
        }
    }

    /// Sets the faults of the next calls (replacing any left).
    pub fn set(&self, faults: Faults) {
        *self.faults.lock().unwrap_or_else(|p| p.into_inner()) = faults;
    }

    /// The faults not used yet.
    pub fn left(&self) -> Faults {
        self.faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Takes one fault of the kind `pick` selects, if any is left.
    fn take(&self, pick: impl FnOnce(&mut Faults) -> &mut u32) -> bool {
        let mut faults = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        let count = pick(&mut faults);
        if *count == 0 {
            return false;
        }
        *count -= 1;
        true
    }

    /// Runs a write through the throttling and lost-answer faults.
    fn write(
        &self,
        what: &str,
        apply: impl FnOnce() -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        if self.take(|f| &mut f.throttle_writes) {
            return Err(StoreError::Refused(format!(
                "{what}: throttled (simulated)"
            )));
        }
        apply()?;
        if self.take(|f| &mut f.lose_answers) {
            return Err(StoreError::Io(format!(
                "{what}: the answer was lost after the write applied (simulated)"
            )));
        }
        Ok(())
    }

    fn read<T>(
        &self,
        what: &str,
        read: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.take(|f| &mut f.fail_reads) {
            return Err(StoreError::Io(format!("{what}: read failed (simulated)")));
        }
        read()
    }
}

impl<S: EventStore> EventStore for Faulty<S> {
    fn append(
        &self,
        fence: &Fence,
        base_revision: u64,
        events: &[ChangeEvent],
    ) -> Result<(), StoreError> {
        self.write("append", || self.inner.append(fence, base_revision, events))
    }

    fn read_lease(&self) -> Result<Option<Lease>, StoreError> {
        self.read("read_lease", || self.inner.read_lease())
    }

    fn write_lease(&self, expected: Option<&Lease>, lease: &Lease) -> Result<(), StoreError> {
        self.write("write_lease", || self.inner.write_lease(expected, lease))
    }

    fn read_after(&self, after: u64, limit: usize) -> Result<Vec<ChangeEvent>, StoreError> {
        self.read("read_after", || self.inner.read_after(after, limit))
    }

    fn revision(&self) -> Result<u64, StoreError> {
        self.read("revision", || self.inner.revision())
    }

    fn write_checkpoint(&self, registry: &Registry) -> Result<(), StoreError> {
        self.write("write_checkpoint", || self.inner.write_checkpoint(registry))
    }

    fn read_checkpoint(&self) -> Result<Option<Registry>, StoreError> {
        self.read("read_checkpoint", || self.inner.read_checkpoint())
    }

    fn truncate(&self, fence: &Fence, through: u64) -> Result<(), StoreError> {
        self.write("truncate", || self.inner.truncate(fence, through))
    }

    fn truncated_through(&self) -> Result<u64, StoreError> {
        self.read("truncated_through", || self.inner.truncated_through())
    }

    fn append_limits(&self) -> AppendLimits {
        self.inner.append_limits()
    }
}
