//! Garbage: a Query replica's collection of dropped tables' files
//! ([`lake_core::Registry::is_dropped_dir`] over the dataset directories it lists) never
//! takes a live table's directory for a dropped one, however far its registry lags behind
//! Metasrv; and a replica caught up finds exactly the dropped tables' directories.

use std::collections::BTreeSet;

use lake_core::Registry;
use lake_core::registry::{TABLES_DIR, location_table_id};

use super::Violation;

/// See the module docs.
#[derive(Debug, Default)]
pub struct Garbage {
    violations: Vec<Violation>,
}

impl Garbage {
    /// Replica `replica` found `dropped` among the dataset directories it listed, while
    /// the durable registry was `truth`.
    pub fn collected(&mut self, replica: usize, dropped: &[String], truth: &Registry) {
        for dir in dropped {
            let live = location_table_id(dir)
                .and_then(|id| truth.table_by_id(id))
                .filter(|t| t.meta.location == format!("{TABLES_DIR}/{dir}"));
            if let Some(table) = live {
                self.violate(format!(
                    "replica {replica} took live table {}.{}'s directory {dir} for a dropped table's",
                    table.meta.namespace, table.meta.name
                ));
            }
        }
    }

    /// Replica `replica`, caught up to the store, finds `found` dropped among the
    /// directories it listed; `dropped` are those of the tables whose drop was
    /// acknowledged.
    pub fn converged(
        &mut self,
        replica: usize,
        found: &BTreeSet<String>,
        dropped: &BTreeSet<String>,
    ) {
        if found != dropped {
            self.violate(format!(
                "replica {replica}, caught up, finds {found:?} dropped; the dropped tables' directories are {dropped:?}"
            ));
        }
    }

    /// Every violation recorded so far.
    pub fn violations(&self) -> Vec<Violation> {
        self.violations.clone()
    }

    fn violate(&mut self, message: String) {
        self.violations.push(Violation {
            family: "garbage",
            message,
        });
    }
}
