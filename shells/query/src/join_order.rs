//! Small filtered dimensions joined first.
//!
//! DataFusion joins the tables of a `FROM a, b, c … WHERE …` in the order they are written
//! (`EliminateCrossJoin` takes the next table that has a join key with the tables joined so
//! far), and then only chooses each join's build side from statistics (`JoinSelection`).
//! A small table whose filter makes it selective, written last, therefore filters the
//! rows only at the very end: TPC-H q21 joins `supplier` with 3.8 M `lineitem` rows and
//! then 1.8 M of them with `orders` before `nation` (`n_name = 'SAUDI ARABIA'`, 1 of 25)
//! keeps 4 % of them; q5's `region` (`r_name = 'ASIA'`) reaches `nation`, and through it
//! `supplier` and `customer`, only after `lineitem` was joined with `orders`. DuckDB's and
//! other cost-based optimizers join such a dimension with the table it filters first.
//!
//! [`SmallDimensionsFirst`] does that much, without a cost model. For an inner join whose
//! right input is a *small filtered dimension* ([`SMALL_DIMENSION_ROWS`] rows at most in
//! every table it reads, at least one of them filtered) and whose left join keys all come
//! from one table deeper in the left input, reached through inner joins, projections and
//! filters only, it joins the dimension with that table there, and restores the original
//! join's output columns with a projection on top (or leaves the join as it was where
//! DataFusion refuses a plan on the way). Inner joins are associative and
//! commutative, so the rows are the same; the dimension's rows now restrict that table's
//! rows before the other joins, and the join above it can then push a runtime filter
//! (`DynamicFilter`, [`crate::runtime_filter`]) into the next large scan. Conjuncts of the
//! join's filter that read other tables stay above, as a filter.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, Result, stats::Precision};
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::utils::{conjunction, split_conjunction};
use datafusion::logical_expr::{
    Expr, Filter, Join, JoinConstraint, JoinType, LogicalPlan, Projection, SubqueryAlias, TableScan,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

/// Most rows a table may have to be part of a small dimension: TPC-H's `nation` (25) and
/// `region` (5) at any scale factor, a calendar of a few years of days. Not more: a
/// dimension moved next to a table filters it but also replaces that table's join with
/// the rest, and a larger table (TPC-H's `supplier`, 10,000 rows a scale factor) can be
/// better joined where the query put it.
pub const SMALL_DIMENSION_ROWS: usize = 1_000;

/// Most rewrites of one plan: each moves a dimension one join deeper, so a plan needs at
/// most as many as it has joins; this bounds the work on a plan with very many.
const MAX_REWRITES: usize = 64;

/// DataFusion's optimizer rules with [`SmallDimensionsFirst`] right after
/// `eliminate_cross_join`, which makes the joins it reorders, so that the rules after it
/// in each pass (filter and projection pushdown) tidy what it rewrote.
pub fn optimizer_rules() -> Vec<Arc<dyn OptimizerRule + Send + Sync>> {
    let mut rules = datafusion::optimizer::Optimizer::new().rules;
    let joins = rules
        .iter()
        .position(|rule| rule.name() == "eliminate_cross_join")
        .map_or(rules.len(), |i| i + 1);
    rules.insert(joins, Arc::new(SmallDimensionsFirst));
    rules
}

/// The optimizer rule of the [module docs](self). Tables whose provider reports no row
/// count (`TableProvider::statistics`) are never small.
#[derive(Debug, Default)]
pub struct SmallDimensionsFirst;

impl OptimizerRule for SmallDimensionsFirst {
    fn name(&self) -> &str {
        "lake_small_dimensions_first"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let mut plan = plan;
        let mut rewritten = false;
        for _ in 0..MAX_REWRITES {
            let step = plan.transform_up_with_subqueries(|node| match node {
                LogicalPlan::Join(join) => dimension_moved(join),
                other => Ok(Transformed::no(other)),
            })?;
            plan = step.data;
            if !step.transformed {
                break;
            }
            rewritten = true;
        }
        Ok(if rewritten {
            Transformed::yes(plan)
        } else {
            Transformed::no(plan)
        })
    }
}

/// `join` with its right input joined deeper in its left input, under a projection with
/// `join`'s own output columns; or `join` as it was.
fn dimension_moved(join: Join) -> Result<Transformed<LogicalPlan>> {
    if join.join_type != JoinType::Inner
        || join.join_constraint != JoinConstraint::On
        || join.null_aware
        || join.on.is_empty()
        || !small_filtered_dimension(&join.right)
    {
        return Ok(Transformed::no(LogicalPlan::Join(join)));
    }
    let dimension = join.right.schema().clone();
    // The left keys' columns: they must all come from the one table the dimension moves to.
    let mut keys: HashSet<Column> = HashSet::new();
    for (left, right) in &join.on {
        let right_columns = right.column_refs();
        if right_columns.is_empty() || !right_columns.iter().all(|c| dimension.has_column(c)) {
            return Ok(Transformed::no(LogicalPlan::Join(join)));
        }
        let left_columns = left.column_refs();
        if left_columns.is_empty() || left_columns.iter().any(|c| dimension.has_column(c)) {
            return Ok(Transformed::no(LogicalPlan::Join(join)));
        }
        keys.extend(left_columns.into_iter().cloned());
    }
    let moved = Moved {
        dimension: join.right.clone(),
        keys,
        join: &join,
    };
    // A plan DataFusion refuses to build on the way (a projection whose names the
    // dimension's columns would make ambiguous, say) leaves the join as it was.
    match moved.rewritten() {
        Ok(Some(plan)) => Ok(Transformed::yes(plan)),
        Ok(None) | Err(_) => Ok(Transformed::no(LogicalPlan::Join(join))),
    }
}

/// Whether `plan` reads only tables of at most [`SMALL_DIMENSION_ROWS`] rows, through
/// scans, projections, filters, aliases and inner joins, with at least one filter (pushed
/// into a scan or not) and no subquery.
fn small_filtered_dimension(plan: &LogicalPlan) -> bool {
    let mut small = true;
    let mut filtered = false;
    let walked = plan.apply(|node| {
        match node {
            LogicalPlan::TableScan(scan) => {
                filtered |= !scan.filters.is_empty();
                small &= table_rows(scan).is_some_and(|rows| rows <= SMALL_DIMENSION_ROWS);
            }
            LogicalPlan::Filter(_) => filtered = true,
            LogicalPlan::Projection(_) | LogicalPlan::SubqueryAlias(_) => {}
            LogicalPlan::Join(join) if join.join_type == JoinType::Inner && !join.null_aware => {}
            _ => small = false,
        }
        let mut subquery = false;
        node.apply_expressions(|expr| {
            subquery |= expr.exists(|e| {
                Ok(matches!(
                    e,
                    Expr::ScalarSubquery(_)
                        | Expr::Exists(_)
                        | Expr::InSubquery(_)
                        | Expr::OuterReferenceColumn(..)
                ))
            })?;
            Ok(TreeNodeRecursion::Continue)
        })?;
        small &= !subquery;
        Ok(if small {
            TreeNodeRecursion::Continue
        } else {
            TreeNodeRecursion::Stop
        })
    });
    walked.is_ok() && small && filtered
}

/// The rows of `scan`'s table before its filters, as its provider reports them.
fn table_rows(scan: &TableScan) -> Option<usize> {
    let provider = source_as_provider(&scan.source).ok()?;
    match provider.statistics()?.num_rows {
        Precision::Exact(rows) | Precision::Inexact(rows) => Some(rows),
        Precision::Absent => None,
    }
}

/// Whether `plan` is a table scan, possibly under aliases.
fn is_table(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::TableScan(_) => true,
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, .. }) => is_table(input),
        _ => false,
    }
}

/// A dimension on its way down to the table its join keys name.
struct Moved<'a> {
    dimension: Arc<LogicalPlan>,
    /// The columns of the join's left keys: all of one table.
    keys: HashSet<Column>,
    /// The join being rewritten: its keys, filter, constraint and null equality.
    join: &'a Join,
}

impl Moved<'_> {
    /// The join's left input with the dimension joined deeper in it ([`Self::join_into`]),
    /// the conjuncts of the join's filter that stay above as a filter, under a projection
    /// of the join's own output columns, in its order and qualified as they were.
    fn rewritten(&self) -> Result<Option<LogicalPlan>> {
        let Some((left, up)) = self.join_into(Arc::unwrap_or_clone(self.join.left.clone()), 0)?
        else {
            return Ok(None);
        };
        let left = match conjunction(up) {
            Some(predicate) => LogicalPlan::Filter(Filter::try_new(predicate, Arc::new(left))?),
            None => left,
        };
        let columns = self
            .join
            .schema
            .columns()
            .into_iter()
            .map(Expr::Column)
            .collect();
        let projection =
            Projection::try_new_with_schema(columns, Arc::new(left), self.join.schema.clone())?;
        Ok(Some(LogicalPlan::Projection(projection)))
    }

    /// `plan` with the dimension joined to the table (a scan, possibly under aliases) that
    /// holds all of [`Self::keys`], reached through at least one inner join and otherwise
    /// only projections and filters, every projection on the way also passing the
    /// dimension's columns; with the conjuncts of the join's filter that read other tables
    /// than these two, to be applied above. `None` if there is no such table.
    fn join_into(
        &self,
        plan: LogicalPlan,
        joins: usize,
    ) -> Result<Option<(LogicalPlan, Vec<Expr>)>> {
        if !self.keys.iter().all(|k| plan.schema().has_column(k)) {
            return Ok(None);
        }
        Ok(match plan {
            LogicalPlan::Projection(projection) => {
                let Some((input, up)) =
                    self.join_into(Arc::unwrap_or_clone(projection.input), joins)?
                else {
                    return Ok(None);
                };
                let mut expr = projection.expr;
                expr.extend(
                    self.dimension
                        .schema()
                        .columns()
                        .into_iter()
                        .map(Expr::Column),
                );
                let projection = Projection::try_new(expr, Arc::new(input))?;
                Some((LogicalPlan::Projection(projection), up))
            }
            LogicalPlan::Filter(filter) => {
                let Some((input, up)) =
                    self.join_into(Arc::unwrap_or_clone(filter.input), joins)?
                else {
                    return Ok(None);
                };
                let filter = Filter::try_new(filter.predicate, Arc::new(input))?;
                Some((LogicalPlan::Filter(filter), up))
            }
            LogicalPlan::Join(join) if join.join_type == JoinType::Inner && !join.null_aware => {
                // The keys are one table's columns, so at most one side holds them all.
                let on_left = self.keys.iter().all(|k| join.left.schema().has_column(k));
                let side = if on_left { &join.left } else { &join.right };
                let Some((side, up)) =
                    self.join_into(Arc::unwrap_or_clone(side.clone()), joins + 1)?
                else {
                    return Ok(None);
                };
                let (left, right) = if on_left {
                    (Arc::new(side), join.right)
                } else {
                    (join.left, Arc::new(side))
                };
                let join = Join::try_new(
                    left,
                    right,
                    join.on,
                    join.filter,
                    join.join_type,
                    join.join_constraint,
                    join.null_equality,
                    join.null_aware,
                )?;
                Some((LogicalPlan::Join(join), up))
            }
            table @ (LogicalPlan::TableScan(_) | LogicalPlan::SubqueryAlias(_))
                if joins > 0 && is_table(&table) =>
            {
                // The filter's conjuncts over this table and the dimension go down with it.
                let (down, up): (Vec<Expr>, Vec<Expr>) = self
                    .join
                    .filter
                    .iter()
                    .flat_map(split_conjunction)
                    .cloned()
                    .partition(|conjunct| {
                        conjunct.column_refs().iter().all(|c| {
                            table.schema().has_column(c) || self.dimension.schema().has_column(c)
                        })
                    });
                let join = Join::try_new(
                    Arc::new(table),
                    self.dimension.clone(),
                    self.join.on.clone(),
                    conjunction(down),
                    JoinType::Inner,
                    JoinConstraint::On,
                    self.join.null_equality,
                    false,
                )?;
                Some((LogicalPlan::Join(join), up))
            }
            _ => None,
        })
    }
}
