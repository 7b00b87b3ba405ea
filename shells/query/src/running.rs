//! Statements running on this replica: how many each principal may run at once, and how a
//! client cancels one it started.
//!
//! * Every `DoGet` of a statement and every write holds a [`Slot`] while it runs; a
//!   principal past [`Running::per_principal_max`] is refused with `RESOURCE_EXHAUSTED`
//!   at once rather than queued, so one client cannot take a replica's every worker.
//! * Cancellation follows Flight's `CancelFlightInfo` action (`Flight.proto`,
//!   `CancelFlightInfoRequest` carrying the `FlightInfo` whose endpoints' tickets name
//!   the statement) and Flight SQL's older `CancelQuery`: a running `DoGet` of that ticket
//!   ends with `CANCELLED`, and one started later is refused until the ticket expires.
//!   Only the principal a ticket was issued to can cancel it (the ticket is opened with
//!   the caller's principal). Writes are not cancellable: they run to completion or commit
//!   nothing (see the write path).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest as _, Sha256};
use tokio::sync::watch;

use crate::QueryError;

/// Statements one principal may run at once on one replica, by default.
pub const STATEMENTS_PER_PRINCIPAL_DEFAULT: usize = 64;

/// Cancelled tickets remembered at most (each until its ticket expires): a bound on what a
/// client can make the replica keep.
const CANCELLED_MAX: usize = 100_000;

/// The principal of calls without a login (a server without users).
const ANONYMOUS: &str = "";

type TicketId = [u8; 32];

/// The statements running on one replica; see the module docs.
#[derive(Debug)]
pub struct Running {
    per_principal_max: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Statements running, by principal.
    counts: HashMap<String, usize>,
    /// Running reads by ticket: the switch that cancels each.
    reads: HashMap<TicketId, Vec<(u64, watch::Sender<bool>)>>,
    /// Tickets cancelled, with the time (ms since the epoch) their ticket expires.
    cancelled: HashMap<TicketId, u64>,
    next_id: u64,
}

fn ticket_id(ticket: &[u8]) -> TicketId {
    Sha256::digest(ticket).into()
}

impl Running {
    /// At most `per_principal_max` statements at once per principal (at least 1).
    pub fn new(per_principal_max: usize) -> Self {
        Self {
            per_principal_max: per_principal_max.max(1),
            state: Mutex::new(State::default()),
        }
    }

    /// The bound on statements one principal runs at once.
    pub fn per_principal_max(&self) -> usize {
        self.per_principal_max
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits one statement of `principal` (`None`: no login); `ticket` (the sealed
    /// statement handle) for a read that can be cancelled.
    ///
    /// # Errors
    /// [`QueryError::TooLarge`] (`RESOURCE_EXHAUSTED`) when the principal already runs
    /// [`Self::per_principal_max`] statements; [`QueryError::Cancelled`] for a ticket that
    /// was cancelled.
    pub fn admit(
        self: &Arc<Self>,
        principal: Option<&str>,
        ticket: Option<&[u8]>,
    ) -> Result<Slot, QueryError> {
        let principal = principal.unwrap_or(ANONYMOUS).to_string();
        let ticket = ticket.map(ticket_id);
        let mut state = self.state();
        if let Some(id) = &ticket
            && state.cancelled.contains_key(id)
        {
            return Err(QueryError::Cancelled(
                "this statement was cancelled (CancelFlightInfo); plan it again to run it".into(),
            ));
        }
        let count = state.counts.entry(principal.clone()).or_default();
        if *count >= self.per_principal_max {
            let who = if principal.is_empty() {
                "clients without a login".to_string()
            } else {
                format!("user {principal}")
            };
            return Err(QueryError::TooLarge(format!(
                "{who} already runs {} statements on this replica, the most allowed at once (--statements-per-user); retry when one ends",
                self.per_principal_max
            )));
        }
        *count += 1;
        state.next_id += 1;
        let id = state.next_id;
        let (cancel, cancelled) = watch::channel(false);
        if let Some(ticket) = ticket {
            state.reads.entry(ticket).or_default().push((id, cancel));
        }
        Ok(Slot {
            running: self.clone(),
            principal,
            ticket: ticket.map(|t| (t, id)),
            cancelled,
        })
    }

    /// Cancels the statement of `ticket` (the sealed handle, already opened for the
    /// caller, expiring at `expires_ms`): its running reads end with `CANCELLED` and later
    /// ones are refused until the ticket expires.
    pub fn cancel(&self, ticket: &[u8], expires_ms: u64) {
        let id = ticket_id(ticket);
        let mut state = self.state();
        let now = crate::ticket::now_ms();
        if state.cancelled.len() >= CANCELLED_MAX {
            state.cancelled.retain(|_, expires| *expires > now);
        }
        if state.cancelled.len() < CANCELLED_MAX {
            state.cancelled.insert(id, expires_ms);
        }
        for (_, cancel) in state.reads.get(&id).into_iter().flatten() {
            cancel.send_replace(true);
        }
    }

    /// Statements `principal` runs now.
    pub fn count(&self, principal: Option<&str>) -> usize {
        self.state()
            .counts
            .get(principal.unwrap_or(ANONYMOUS))
            .copied()
            .unwrap_or(0)
    }
}

/// One admitted statement; dropping it ends the statement's turn.
#[derive(Debug)]
pub struct Slot {
    running: Arc<Running>,
    principal: String,
    ticket: Option<(TicketId, u64)>,
    cancelled: watch::Receiver<bool>,
}

impl Slot {
    /// Resolves once the statement is cancelled (never for a write).
    pub async fn cancelled(&mut self) {
        // An error means the sender is gone, which happens only when the slot is.
        let _ = self.cancelled.wait_for(|cancelled| *cancelled).await;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut state = self.running.state();
        if let Some(count) = state.counts.get_mut(&self.principal) {
            *count -= 1;
            if *count == 0 {
                state.counts.remove(&self.principal);
            }
        }
        if let Some((ticket, id)) = self.ticket
            && let Some(reads) = state.reads.get_mut(&ticket)
        {
            reads.retain(|(read, _)| *read != id);
            if reads.is_empty() {
                state.reads.remove(&ticket);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_runs_at_most_its_bound_and_slots_free_on_drop() {
        let running = Arc::new(Running::new(2));
        let a = running.admit(Some("ada"), None).expect("first");
        let _b = running.admit(Some("ada"), None).expect("second");
        let third = running.admit(Some("ada"), None).expect_err("third refused");
        assert!(
            matches!(third, QueryError::TooLarge(ref m) if m.contains("user ada already runs 2"))
        );
        // Another principal is not affected.
        let _c = running.admit(Some("bob"), None).expect("bob");
        drop(a);
        assert_eq!(running.count(Some("ada")), 1);
        let _d = running.admit(Some("ada"), None).expect("room again");
        assert_eq!(running.count(Some("ada")), 2);
    }

    #[tokio::test]
    async fn cancelling_a_ticket_stops_its_reads_and_refuses_later_ones() {
        let running = Arc::new(Running::new(8));
        let mut read = running.admit(Some("ada"), Some(b"ticket-1")).expect("read");
        let mut other = running
            .admit(Some("ada"), Some(b"ticket-2"))
            .expect("other");
        running.cancel(b"ticket-1", u64::MAX);
        tokio::time::timeout(std::time::Duration::from_secs(1), read.cancelled())
            .await
            .expect("the cancelled read is told");
        let still_running =
            tokio::time::timeout(std::time::Duration::from_millis(50), other.cancelled()).await;
        assert!(still_running.is_err(), "another ticket's read goes on");
        let again = running
            .admit(Some("ada"), Some(b"ticket-1"))
            .expect_err("refused");
        assert!(matches!(again, QueryError::Cancelled(_)));
        drop(read);
        drop(other);
        assert_eq!(running.count(Some("ada")), 0);
    }
}
