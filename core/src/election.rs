//! Leader election over a store with conditional writes: the state machine every Metasrv
//! node runs to decide which one drives the [`crate::Coordinator`].
//!
//! The lease is one record in the store ([`Lease`]). A node reads it, and writes it only on
//! condition that the store still holds exactly the record it expects (DynamoDB's
//! `ConditionExpression`, a RocksDB compare-and-set under the store's lock). The scheme is
//! the one of Amazon's DynamoDB lock client and of Chubby-style leases, with the epoch as a
//! fencing token (Kleppmann, "How to do distributed locking", 2016):
//!
//! * **Liveness without comparing clocks.** The holder bumps [`Lease::renewal`] every
//!   `renew_interval_ms`. A follower never compares its clock with the holder's: it notes
//!   *its own* time when it first saw a record, and takes over only once that exact record
//!   has stayed unchanged for `lease_ms + clock_bound_ms` of its own time, with a write
//!   conditioned on the record still being that one. A renewal in between makes the
//!   takeover's condition fail.
//! * **Stepping down in time.** A leader acts only until `sent + lease_ms - clock_bound_ms`
//!   of its own clock, where `sent` is when it sent the last renewal the store confirmed.
//!   Any follower's takeover starts at least `lease_ms + clock_bound_ms` of the follower's
//!   time after it saw that renewal, which the store applied after `sent`. So two nodes never
//!   both believe they lead as long as two clocks disagree about the length of one lease
//!   period by less than `2 * clock_bound_ms` (absolute offsets between clocks do not
//!   matter, only drift and pauses that the shell reports as time passing).
//! * **Fencing.** Each takeover writes `epoch + 1`. Every mutation a leader makes is
//!   conditioned, atomically in the store, on the lease still carrying its [`Fence`]
//!   (epoch and holder). A deposed leader that wakes up late therefore cannot write,
//!   whatever it believes.
//! * **Reconciliation.** [`ElectionOutput::Elected`] tells the shell to load the store's log
//!   before serving (a new [`crate::Coordinator`] over the loaded registry), which adopts
//!   every write the previous leader left with an unknown outcome.
//! * **Handing over.** A leader that shuts down gracefully ([`ElectionInput::Resign`])
//!   writes a released lease; a follower takes a released lease over at once.
//!
//! Calling contract, as for the other state machines: feed [`ElectionInput`]s with the
//! node's `now_ms` through [`Election::handle`], drain [`Election::poll`], and call
//! `handle(ElectionInput::Tick, now)` no later than [`Election::next_deadline_ms`]. Every
//! [`ElectionOutput::ReadLease`] and [`ElectionOutput::WriteLease`] must be answered once;
//! an answer that never comes is forgotten after `lease_ms`.

use std::collections::VecDeque;

use crate::commit::WriteOutcome;

/// The lease record in the store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    /// Leadership term: 1 for the first leader, `+1` at every takeover. Never reused.
    pub epoch: u64,
    /// Node id of the holder.
    pub holder: String,
    /// Where the holder serves Metasrv requests (`host:port`), so followers can forward.
    pub address: String,
    /// Bumped by every renewal of this epoch, so that followers see the holder is alive.
    pub renewal: u64,
}

impl Lease {
    /// Whether the holder gave the lease up ([`ElectionInput::Resign`]): its `holder` and
    /// `address` are empty and any node may take over at once, with `epoch + 1`.
    pub fn is_released(&self) -> bool {
        self.holder.is_empty()
    }

    /// The fencing token of this lease.
    pub fn fence(&self) -> Fence {
        Fence {
            epoch: self.epoch,
            holder: self.holder.clone(),
        }
    }
}

/// What a leader's store mutation is conditioned on: the lease record must still have this
/// epoch and holder when the mutation applies (one atomic store transaction).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fence {
    /// The leader's epoch.
    pub epoch: u64,
    /// The leader's node id.
    pub holder: String,
}

impl Fence {
    /// Whether `lease` (the record the store holds now) still admits this leader's writes.
    pub fn admits(&self, lease: Option<&Lease>) -> bool {
        lease.is_some_and(|l| l.epoch == self.epoch && l.holder == self.holder)
    }
}

/// Timing and identity of one node. All durations in milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElectionConfig {
    /// This node's id; unique in the cluster and stable across restarts.
    pub node: String,
    /// Address this node serves Metasrv on, published in its lease.
    pub address: String,
    /// Lease length: how long an unrenewed lease keeps others from taking over.
    pub lease_ms: i64,
    /// How often the leader renews and followers re-read the lease; well below
    /// `lease_ms - 2 * clock_bound_ms` so that a few failed renewals do not depose a leader.
    pub renew_interval_ms: i64,
    /// Bound on how much two nodes' clocks may disagree about the length of one lease
    /// period (drift, plus store latency the shell does not see). Must be below
    /// `lease_ms / 2`.
    pub clock_bound_ms: i64,
    /// The store is this node's alone (a local store locked by its process, such as the
    /// embedded RocksDB): no other node can ever take the lease over. The leader then
    /// never lapses by time — a node starved of CPU whose timers fire late keeps leading
    /// instead of failing its in-flight writes — and a restart takes over the lease its
    /// crashed predecessor (the same node id) left at once instead of waiting it out. It
    /// still steps down when the store refuses its lease or it resigns, and a lease of
    /// another holder is waited out as usual.
    pub exclusive: bool,
}

impl ElectionConfig {
    /// Checks the relations between the durations.
    ///
    /// # Errors
    /// A message naming the setting that is out of range and the allowed range.
    pub fn validate(&self) -> Result<(), String> {
        if self.lease_ms <= 0 || self.renew_interval_ms <= 0 || self.clock_bound_ms < 0 {
            return Err(format!(
                "lease_ms ({}) and renew_interval_ms ({}) must be positive and clock_bound_ms ({}) not negative",
                self.lease_ms, self.renew_interval_ms, self.clock_bound_ms
            ));
        }
        if 2 * self.clock_bound_ms >= self.lease_ms {
            return Err(format!(
                "clock_bound_ms ({}) must be below half of lease_ms ({})",
                self.clock_bound_ms, self.lease_ms
            ));
        }
        if self.renew_interval_ms >= self.lease_ms - 2 * self.clock_bound_ms {
            return Err(format!(
                "renew_interval_ms ({}) must be below lease_ms - 2 * clock_bound_ms ({})",
                self.renew_interval_ms,
                self.lease_ms - 2 * self.clock_bound_ms
            ));
        }
        Ok(())
    }
}

/// Inputs of the [`Election`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElectionInput {
    /// Time passed; act on deadlines.
    Tick,
    /// The answer to [`ElectionOutput::ReadLease`]: the record the store holds, if any.
    LeaseRead(Option<Lease>),
    /// The write with `write_id` applied.
    LeaseWritten { write_id: u64 },
    /// The write with `write_id` failed: its condition did not hold or the store refused it
    /// ([`WriteOutcome::NotWritten`]), or nobody knows ([`WriteOutcome::Unknown`]).
    LeaseWriteFailed {
        write_id: u64,
        outcome: WriteOutcome,
    },
    /// Give up leadership now and for good (graceful shutdown): a leader steps down and
    /// writes a released lease ([`Lease::is_released`]) so that another node takes over at
    /// once instead of waiting for the lease to expire. After this, the node makes no
    /// further reads or takeovers.
    Resign,
}

/// Outputs of the [`Election`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElectionOutput {
    /// Read the lease record and answer with [`ElectionInput::LeaseRead`].
    ReadLease,
    /// Write `lease` on condition that the store holds exactly `expected` (`None`: no record
    /// yet); answer with [`ElectionInput::LeaseWritten`] or
    /// [`ElectionInput::LeaseWriteFailed`].
    WriteLease {
        write_id: u64,
        expected: Option<Lease>,
        lease: Lease,
    },
    /// This node now leads `epoch`: load the store, then serve with every mutation fenced
    /// by [`Election::fence`].
    Elected { epoch: u64 },
    /// This node no longer leads `epoch`: stop serving now; requests in flight have an
    /// unknown outcome.
    SteppedDown { epoch: u64 },
}

#[derive(Clone, Debug)]
enum Pending {
    Read {
        sent_ms: i64,
    },
    Write {
        write_id: u64,
        lease: Lease,
        sent_ms: i64,
    },
}

impl Pending {
    fn sent_ms(&self) -> i64 {
        match self {
            Self::Read { sent_ms } | Self::Write { sent_ms, .. } => *sent_ms,
        }
    }
}

#[derive(Clone, Debug)]
struct Leading {
    lease: Lease,
    valid_until_ms: i64,
}

/// One node's election state machine. See the module docs.
#[derive(Clone, Debug)]
pub struct Election {
    config: ElectionConfig,
    leading: Option<Leading>,
    /// The last record read (or written) and this node's time when it first saw it.
    observed: Option<(Option<Lease>, i64)>,
    /// A write whose outcome was unknown, with the time it was sent: if a later read shows
    /// it applied, it counts from then.
    unconfirmed: Option<(Lease, i64)>,
    pending: Option<Pending>,
    next_action_ms: i64,
    next_write_id: u64,
    resigned: bool,
    outputs: VecDeque<ElectionOutput>,
}

impl Election {
    /// A follower that reads the lease at its first [`ElectionInput::Tick`].
    ///
    /// # Errors
    /// The message of [`ElectionConfig::validate`].
    pub fn new(config: ElectionConfig) -> Result<Self, String> {
        config.validate()?;
        Ok(Self {
            config,
            leading: None,
            observed: None,
            unconfirmed: None,
            pending: None,
            next_action_ms: i64::MIN,
            next_write_id: 1,
            resigned: false,
            outputs: VecDeque::new(),
        })
    }

    /// The node's configuration.
    pub fn config(&self) -> &ElectionConfig {
        &self.config
    }

    /// The epoch this node leads at `now_ms`, if any. Check it right before acting as
    /// leader: it turns `None` at the step-down deadline even before the next tick.
    pub fn leading(&self, now_ms: i64) -> Option<u64> {
        self.leading
            .as_ref()
            .filter(|l| now_ms < l.valid_until_ms)
            .map(|l| l.lease.epoch)
    }

    /// The fence for this leader's store mutations, while it leads at `now_ms`.
    pub fn fence(&self, now_ms: i64) -> Option<Fence> {
        self.leading(now_ms)?;
        self.leading.as_ref().map(|l| l.lease.fence())
    }

    /// The leader as last seen in the store (this node's own lease while it leads): where
    /// followers forward writes. `None` when no lease was seen yet.
    pub fn leader(&self) -> Option<&Lease> {
        match &self.leading {
            Some(l) => Some(&l.lease),
            None => self.observed.as_ref().and_then(|(lease, _)| lease.as_ref()),
        }
    }

    /// When the next [`ElectionInput::Tick`] is due, in this node's milliseconds.
    pub fn next_deadline_ms(&self) -> i64 {
        let action = match &self.pending {
            Some(p) => p.sent_ms().saturating_add(self.config.lease_ms),
            None => self.next_action_ms,
        };
        match &self.leading {
            Some(l) => action.min(l.valid_until_ms),
            None => action,
        }
    }

    /// Feeds one input at this node's time `now_ms`; drain [`Self::poll`] afterwards.
    pub fn handle(&mut self, input: ElectionInput, now_ms: i64) {
        match input {
            ElectionInput::Tick => {}
            ElectionInput::Resign => self.resign(now_ms),
            ElectionInput::LeaseRead(record) => {
                if matches!(self.pending, Some(Pending::Read { .. })) && !self.resigned {
                    self.pending = None;
                    self.on_read(record, now_ms);
                }
            }
            ElectionInput::LeaseWritten { write_id } => {
                if let Some(Pending::Write { lease, sent_ms, .. }) = self.take_write(write_id)
                    && !self.resigned
                {
                    self.unconfirmed = None;
                    self.confirmed(lease, sent_ms, now_ms);
                }
            }
            ElectionInput::LeaseWriteFailed { write_id, outcome } => {
                if let Some(Pending::Write { lease, sent_ms, .. }) = self.take_write(write_id)
                    && !self.resigned
                {
                    if outcome == WriteOutcome::Unknown {
                        self.unconfirmed = Some((lease, sent_ms));
                    }
                    // Either way, learn what the store holds before anything else.
                    self.next_action_ms = now_ms;
                    self.read(now_ms);
                }
            }
        }
        self.on_time(now_ms);
    }

    /// Next output, or `None` until the next input.
    #[must_use]
    pub fn poll(&mut self) -> Option<ElectionOutput> {
        self.outputs.pop_front()
    }

    fn take_write(&mut self, write_id: u64) -> Option<Pending> {
        match &self.pending {
            Some(Pending::Write { write_id: id, .. }) if *id == write_id => self.pending.take(),
            _ => None,
        }
    }

    fn on_time(&mut self, now_ms: i64) {
        if self.resigned {
            return;
        }
        if self
            .leading
            .as_ref()
            .is_some_and(|l| now_ms >= l.valid_until_ms)
        {
            self.step_down();
        }
        if let Some(p) = &self.pending
            && now_ms >= p.sent_ms().saturating_add(self.config.lease_ms)
        {
            // The answer is lost; a write may still apply, which the next read reveals.
            if let Some(Pending::Write { lease, sent_ms, .. }) = self.pending.take() {
                self.unconfirmed = Some((lease, sent_ms));
            }
        }
        if self.pending.is_none() && now_ms >= self.next_action_ms {
            match &self.leading {
                Some(l) => {
                    let mut lease = l.lease.clone();
                    lease.renewal += 1;
                    let expected = Some(l.lease.clone());
                    self.write(expected, lease, now_ms);
                }
                None => self.read(now_ms),
            }
        }
    }

    fn read(&mut self, now_ms: i64) {
        if self.pending.is_none() {
            self.pending = Some(Pending::Read { sent_ms: now_ms });
            self.outputs.push_back(ElectionOutput::ReadLease);
        }
    }

    fn write(&mut self, expected: Option<Lease>, lease: Lease, now_ms: i64) {
        let write_id = self.next_write_id;
        self.next_write_id += 1;
        self.pending = Some(Pending::Write {
            write_id,
            lease: lease.clone(),
            sent_ms: now_ms,
        });
        self.outputs.push_back(ElectionOutput::WriteLease {
            write_id,
            expected,
            lease,
        });
    }

    /// The store holds `lease`, written by this node at `sent_ms`.
    fn confirmed(&mut self, lease: Lease, sent_ms: i64, now_ms: i64) {
        let valid_until_ms = if self.config.exclusive {
            i64::MAX
        } else {
            sent_ms + self.config.lease_ms - self.config.clock_bound_ms
        };
        let epoch = lease.epoch;
        let was_leading = self.leading.as_ref().map(|l| l.lease.epoch);
        if was_leading.is_some_and(|e| e != epoch) {
            self.step_down();
        }
        self.observed = Some((Some(lease.clone()), now_ms));
        if now_ms >= valid_until_ms {
            // Confirmed too late to act on it; followers may already be taking over.
            self.step_down();
            self.next_action_ms = now_ms + self.config.renew_interval_ms;
            return;
        }
        if was_leading != Some(epoch) {
            self.outputs.push_back(ElectionOutput::Elected { epoch });
        }
        let valid_until_ms = self
            .leading
            .as_ref()
            .filter(|l| l.lease.epoch == epoch)
            .map_or(valid_until_ms, |l| l.valid_until_ms.max(valid_until_ms));
        self.leading = Some(Leading {
            lease,
            valid_until_ms,
        });
        self.next_action_ms = sent_ms + self.config.renew_interval_ms;
    }

    fn on_read(&mut self, record: Option<Lease>, now_ms: i64) {
        // A write whose answer was lost may have applied: the record tells.
        if let Some((lease, sent_ms)) = self.unconfirmed.take()
            && record.as_ref() == Some(&lease)
        {
            self.confirmed(lease, sent_ms, now_ms);
            return;
        }
        if let Some(l) = &self.leading {
            let ours = record
                .as_ref()
                .is_some_and(|r| r.epoch == l.lease.epoch && r.holder == l.lease.holder);
            if ours {
                // Our own renewal landed without us hearing of it; continue from it but do
                // not extend validity (we do not know when it was sent).
                let mut l = l.clone();
                l.lease = record.clone().unwrap_or(l.lease);
                self.leading = Some(l);
                self.next_action_ms = now_ms;
                return;
            }
            self.step_down();
        }
        let unchanged_since = match &self.observed {
            Some((seen, since)) if *seen == record => *since,
            _ => now_ms,
        };
        self.observed = Some((record.clone(), unchanged_since));
        let takeover_at = unchanged_since + self.config.lease_ms + self.config.clock_bound_ms;
        let mine = |epoch| Lease {
            epoch,
            holder: self.config.node.clone(),
            address: self.config.address.clone(),
            renewal: 0,
        };
        match record {
            None => self.write(None, mine(1), now_ms),
            Some(current)
                if current.is_released()
                    || (self.config.exclusive && current.holder == self.config.node)
                    || now_ms >= takeover_at =>
            {
                let lease = mine(current.epoch + 1);
                self.write(Some(current), lease, now_ms);
            }
            Some(_) => {
                self.next_action_ms = (now_ms + self.config.renew_interval_ms).min(takeover_at);
            }
        }
    }

    fn resign(&mut self, now_ms: i64) {
        if self.resigned {
            return;
        }
        let current = self
            .leading
            .as_ref()
            .filter(|l| now_ms < l.valid_until_ms && self.pending.is_none())
            .map(|l| l.lease.clone());
        self.step_down();
        self.resigned = true;
        if let Some(current) = current {
            let released = Lease {
                epoch: current.epoch,
                holder: String::new(),
                address: String::new(),
                renewal: current.renewal + 1,
            };
            self.write(Some(current), released, now_ms);
        }
    }

    fn step_down(&mut self) {
        if let Some(l) = self.leading.take() {
            self.outputs.push_back(ElectionOutput::SteppedDown {
                epoch: l.lease.epoch,
            });
        }
    }
}
