//! Commits: every acknowledged commit is in the gap-free version history exactly once, no
//! version is acknowledged to two operations, and nothing is committed without an ack.
//! Versions may expire from the front of a table's history; the retained operation ids
//! (which the simulations never expire) still name every committed operation's version.

use std::collections::{BTreeMap, BTreeSet};

use lake_core::{Registry, TableId};

use super::Violation;

/// See the module docs.
#[derive(Debug, Default)]
pub struct Commits {
    /// Operation id → (table, version) acknowledged.
    acked: BTreeMap<String, (TableId, u64)>,
    violations: Vec<Violation>,
}

impl Commits {
    /// Operation `op` was acknowledged as `version` of `table`.
    pub fn acknowledged(&mut self, op: &str, table: TableId, version: u64) {
        if let Some(&(t, v)) = self.acked.get(op)
            && (t, v) != (table, version)
        {
            self.violate(format!(
                "{op} acknowledged as version {v} of table {t}, then as version {version} of table {table}"
            ));
        }
        if let Some((other, _)) = self
            .acked
            .iter()
            .find(|(o, tv)| o.as_str() != op && **tv == (table, version))
        {
            let other = other.clone();
            self.violate(format!(
                "version {version} of table {table} acknowledged to {other} and to {op}"
            ));
        }
        self.acked.insert(op.to_string(), (table, version));
    }

    /// A writer was told that `table`, whose creation was acknowledged before the writers
    /// started (and which nothing drops), does not exist: the store lost its creation.
    pub fn table_lost(&mut self, table: TableId) {
        self.violate(format!(
            "table {table} was acknowledged as created and the store no longer has it"
        ));
    }

    /// How many operations were acknowledged.
    pub fn acknowledged_count(&self) -> usize {
        self.acked.len()
    }

    /// The operation acknowledged as `version` of `table`, if any.
    pub fn acknowledged_at(&self, table: TableId, version: u64) -> Option<&str> {
        self.acked
            .iter()
            .find(|(_, tv)| **tv == (table, version))
            .map(|(op, _)| op.as_str())
    }

    /// Checks the durable history of `tables` against the acknowledgements; `complete`
    /// when every writer finished (so every committed operation must have been
    /// acknowledged).
    pub fn check_history(&mut self, history: &Registry, tables: &[TableId], complete: bool) {
        let mut committed = BTreeSet::new();
        for &id in tables {
            let Some(table) = history.table_by_id(id) else {
                self.violate(format!("table {id} is missing from the history"));
                continue;
            };
            let first = table.oldest_version();
            for (i, v) in table.versions.iter().enumerate() {
                if v.version != first + i as u64 {
                    self.violate(format!(
                        "table {id}'s history has version {} at position {} after version {first}",
                        v.version, i
                    ));
                }
                if let Some(op) = &v.operation_id
                    && table.operations.get(op).map(|r| r.version) != Some(v.version)
                {
                    self.violate(format!(
                        "version {} of table {id} was committed by {op}, which the table's operation ids do not name",
                        v.version
                    ));
                }
            }
            for (op, _) in table.operations.iter() {
                if !committed.insert(op.to_string()) {
                    self.violate(format!("{op} committed twice"));
                }
                if complete && !self.acked.contains_key(op) {
                    self.violate(format!("{op} committed without an ack"));
                }
            }
        }
        let missing: Vec<String> = self
            .acked
            .iter()
            .filter(|(op, (table, version))| {
                super::committed_as(history, *table, op) != Some(*version)
            })
            .map(|(op, (table, version))| format!("{op} (version {version} of table {table})"))
            .collect();
        for m in missing {
            self.violate(format!("acknowledged {m} is not in the history"));
        }
    }

    /// What this checker found.
    pub fn violations(&self) -> Vec<Violation> {
        self.violations.clone()
    }

    fn violate(&mut self, message: String) {
        self.violations.push(Violation {
            family: "commits",
            message,
        });
    }
}
