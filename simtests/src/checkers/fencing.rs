//! Fencing: every store write that applied carried the fence of the lease holder at that
//! moment (a deposed leader that wakes up late never writes).

use lake_core::{Fence, Lease};

use super::Violation;

/// See the module docs.
#[derive(Debug, Default)]
pub struct Fencing {
    violations: Vec<Violation>,
}

impl Fencing {
    /// An append carrying `fence` applied while the store's lease was `lease`.
    pub fn applied(&mut self, fence: &Fence, lease: Option<&Lease>) {
        if !fence.admits(lease) {
            self.violations.push(Violation {
                family: "fencing",
                message: format!(
                    "a write of epoch {} by {} applied while the lease is {lease:?}",
                    fence.epoch, fence.holder
                ),
            });
        }
    }

    /// What this checker found.
    pub fn violations(&self) -> Vec<Violation> {
        self.violations.clone()
    }
}
