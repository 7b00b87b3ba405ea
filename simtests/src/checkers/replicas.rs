//! Replicas: a Query replica never moves backwards, never serves below a client's token,
//! serves at a token exactly the commit that was acknowledged for it, and converges to the
//! store once faults heal.

use std::collections::BTreeMap;

use lake_core::{Registry, TableId};

use super::Violation;

/// See the module docs.
#[derive(Debug, Default)]
pub struct Replicas {
    /// Per replica: its incarnation and the revision it last advanced to.
    last: BTreeMap<usize, (u64, u64)>,
    violations: Vec<Violation>,
}

impl Replicas {
    /// Incarnation `incarnation` of replica `replica` moved its cache to `revision` (a
    /// restarted replica, the next incarnation, starts again from an empty cache).
    pub fn advanced(&mut self, replica: usize, incarnation: u64, revision: u64) {
        let last = match self.last.insert(replica, (incarnation, revision)) {
            Some((seen, last)) if seen == incarnation => last,
            _ => 0,
        };
        if revision <= last {
            self.violate(format!("replica {replica} went from {last} to {revision}"));
        }
    }

    /// How many replicas' caches have reached `revision`.
    pub fn reached(&self, revision: u64) -> usize {
        self.last.values().filter(|(_, r)| *r >= revision).count()
    }

    /// Replica `replica` served `served` to a reader holding `token`, who committed `op`
    /// as `version` of `table`.
    pub fn served(
        &mut self,
        replica: usize,
        token: u64,
        served: &Registry,
        (table, version, op): (TableId, u64, &str),
    ) {
        if served.revision() < token {
            self.violate(format!(
                "replica {replica} served revision {} below the token {token}",
                served.revision()
            ));
            return;
        }
        let found = super::committed_as(served, table, op);
        if found != Some(version) {
            self.violate(format!(
                "replica {replica} at revision {} (token {token}) serves {op} as version {found:?} of table {table}; it was acknowledged as version {version}",
                served.revision()
            ));
        }
    }

    /// Replica `replica` ended at `registry`; the store holds `store`.
    pub fn converged(&mut self, replica: usize, registry: &Registry, store: &Registry) {
        if registry != store {
            self.violate(format!(
                "replica {replica} diverged: it ended at revision {} and differs from the store at revision {}",
                registry.revision(),
                store.revision()
            ));
        }
    }

    /// What this checker found.
    pub fn violations(&self) -> Vec<Violation> {
        self.violations.clone()
    }

    fn violate(&mut self, message: String) {
        self.violations.push(Violation {
            family: "replicas",
            message,
        });
    }
}
