//! What Lake's analyzer rules ([`crate::patterns`], [`crate::checked_integers`],
//! [`crate::exact_sums`], [`crate::canonical_float`]) share: rewriting one plan node's own
//! expressions without changing the names its parent refers to them by.

use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Expr, LogicalPlan};

/// The schema `plan`'s own expressions are typed against: its inputs' merged
/// (DataFusion's `merge_schema`), or its own for a leaf (a `VALUES` list, a table scan).
pub(crate) fn expression_schema(plan: &LogicalPlan) -> DFSchema {
    let inputs = plan.inputs();
    if inputs.is_empty() {
        plan.schema().as_ref().clone()
    } else {
        merge_schema(&inputs)
    }
}

/// `plan` with each of its own expressions (not its inputs') replaced by what `rewrite`
/// makes of it, every output name kept as it was (DataFusion's `NamePreserver`: an
/// unaliased expression that changes gets an alias of its old name), so the node's schema
/// and every parent's column references stay valid. Transformed when any expression is.
///
/// # Errors
/// The first error of `rewrite`.
pub(crate) fn map_expressions_keeping_names(
    plan: LogicalPlan,
    mut rewrite: impl FnMut(Expr) -> Result<Transformed<Expr>>,
) -> Result<Transformed<LogicalPlan>> {
    let names = NamePreserver::new(&plan);
    plan.map_expressions(|expr| {
        let saved = names.save(&expr);
        Ok(rewrite(expr)?.update_data(|e| saved.restore(e)))
    })
}
