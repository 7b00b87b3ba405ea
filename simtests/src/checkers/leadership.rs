//! Leadership: each epoch is won by one node, at no instant do two nodes believe they lead
//! (each judged by its own clock), and an exclusive node never steps down unasked.

use std::collections::BTreeMap;

use super::Violation;

/// See the module docs.
#[derive(Debug, Default)]
pub struct Leadership {
    winners: BTreeMap<u64, usize>,
    violations: Vec<Violation>,
}

impl Leadership {
    /// Node `node` won `epoch`.
    pub fn elected(&mut self, epoch: u64, node: usize) {
        if let Some(&other) = self.winners.get(&epoch)
            && other != node
        {
            self.violate(format!("epoch {epoch} won by nodes {other} and {node}"));
        }
        self.winners.insert(epoch, node);
    }

    /// The `(node, epoch)` pairs that believe they lead at one instant.
    pub fn leading(&mut self, leaders: &[(usize, u64)]) {
        if leaders.len() > 1 {
            self.violate(format!("two leaders at once: {leaders:?}"));
        }
    }

    /// Exclusive node `node` (the embedded `lake serve`) stepped down from `epoch` without
    /// being asked to: with no competitor, that only fails its in-flight work.
    pub fn exclusive_stepped_down(&mut self, node: usize, epoch: u64) {
        self.violate(format!(
            "the exclusive node {node} stepped down from epoch {epoch} on its own"
        ));
    }

    /// What this checker found.
    pub fn violations(&self) -> Vec<Violation> {
        self.violations.clone()
    }

    fn violate(&mut self, message: String) {
        self.violations.push(Violation {
            family: "leadership",
            message,
        });
    }
}
