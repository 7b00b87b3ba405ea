//! Plan once: the physical plan GetFlightInfo made for a query, kept on the replica that
//! made it for the DoGet that redeems the ticket, so that DoGet does not parse, plan and
//! optimize the same statement at the same pinned versions a second time (InfluxDB IOx
//! measured tens of milliseconds for that second planning; for a point read it is most of
//! the answer's time).
//!
//! A ticket that lands on another replica, comes after [`PLAN_TTL`], or is redeemed a second
//! time finds nothing here and is planned again from its sealed SQL and pins, exactly as
//! before: the cache only ever saves work. Each entry is for one caller and one ticket
//! (the key is both), and is taken, not shared: a DataFusion physical plan runs once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;

/// Plans kept at most (a ticket never redeemed is dropped past this or [`PLAN_TTL`]).
pub const PLANS_MAX: usize = 256;

/// How long a plan waits for its DoGet (Flight clients redeem a ticket right after
/// GetFlightInfo).
pub const PLAN_TTL: Duration = Duration::from_secs(30);

/// A physical plan with the session it was planned in (its catalog holds the pinned
/// versions; DoGet executes in its task context).
pub struct Plan {
    /// The session the plan was made in.
    pub ctx: SessionContext,
    /// The optimized physical plan.
    pub physical: Arc<dyn ExecutionPlan>,
}

/// Plans waiting for their DoGet, keyed by caller and ticket.
#[derive(Default)]
pub struct Plans {
    /// Each plan with when it was kept and its place in the order of keeping.
    waiting: Mutex<HashMap<String, (Instant, u64, Plan)>>,
    kept: std::sync::atomic::AtomicU64,
}

impl Plans {
    /// Keeps `plan` for the DoGet of `key` (the caller and the sealed ticket), dropping
    /// expired plans and, past [`PLANS_MAX`], the oldest.
    pub fn keep(&self, key: String, plan: Plan) {
        let now = Instant::now();
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let seq = self.kept.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        waiting.retain(|_, (at, _, _)| now.duration_since(*at) < PLAN_TTL);
        while waiting.len() >= PLANS_MAX {
            let Some(oldest) = waiting
                .iter()
                .min_by_key(|(_, (_, seq, _))| *seq)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            waiting.remove(&oldest);
        }
        waiting.insert(key, (now, seq, plan));
    }

    /// The plan kept for `key`, taken (a second DoGet of the same ticket plans again);
    /// `None` when there is none or it expired.
    pub fn take(&self, key: &str) -> Option<Plan> {
        let (at, _, plan) = self
            .waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key)?;
        (at.elapsed() < PLAN_TTL).then_some(plan)
    }

    /// Plans waiting now.
    pub fn len(&self) -> usize {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether no plan is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::physical_plan::empty::EmptyExec;

    fn plan() -> Plan {
        Plan {
            ctx: SessionContext::new(),
            physical: Arc::new(EmptyExec::new(Arc::new(arrow::datatypes::Schema::empty()))),
        }
    }

    #[test]
    fn a_plan_is_taken_once_and_only_by_its_key() {
        let plans = Plans::default();
        plans.keep("alice|ticket".into(), plan());
        assert!(plans.take("bob|ticket").is_none());
        assert!(plans.take("alice|ticket").is_some());
        assert!(plans.take("alice|ticket").is_none());
        assert!(plans.is_empty());
    }

    #[test]
    fn plans_are_bounded_dropping_the_oldest() {
        let plans = Plans::default();
        for i in 0..PLANS_MAX + 10 {
            plans.keep(format!("k{i}"), plan());
        }
        assert_eq!(plans.len(), PLANS_MAX);
        assert!(plans.take("k0").is_none());
        assert!(plans.take(&format!("k{}", PLANS_MAX + 9)).is_some());
    }
}
