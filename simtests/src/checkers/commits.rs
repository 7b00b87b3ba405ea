//! Commits: every acknowledged commit is in the gap-free version history exactly once, no
//! version is acknowledged to two operations, and nothing is committed without an ack.

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
            for (i, v) in table.versions.iter().enumerate() {
                if v.version != i as u64 + 1 {
                    self.violate(format!(
                        "table {id}'s history has version {} at position {}",
                        v.version,
                        i + 1
                    ));
                }
                let Some(op) = v.operation_id.clone() else {
                    continue;
                };
                if !committed.insert(op.clone()) {
                    self.violate(format!("{op} committed twice"));
                }
                if complete && !self.acked.contains_key(&op) {
                    self.violate(format!("{op} committed without an ack"));
                }
            }
        }
        let missing: Vec<String> = self
            .acked
            .iter()
            .filter(|(op, (table, version))| {
                history
                    .table_by_id(*table)
                    .and_then(|t| t.version(*version))
                    .is_none_or(|r| r.operation_id.as_deref() != Some(op.as_str()))
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
