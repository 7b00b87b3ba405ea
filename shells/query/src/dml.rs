//! DELETE and UPDATE on Lake tables: DataFusion finds the rows, Lance records the change.
//!
//! A DELETE or UPDATE is planned by DataFusion like any statement (`WriteOp::Delete`,
//! `WriteOp::Update`), so its predicate and its SET expressions mean exactly what they mean
//! in a SELECT on this replica: checked integer arithmetic, subqueries, bound parameters,
//! casts that fail instead of truncating. [`at_version`] then points the statement's scan
//! of its target at the table's latest Lance version, with each row's address
//! ([`ROW_ADDR`]) as one more column, and keeps the address in the rows the statement
//! yields: those are the rows it changes. [`split_addresses`] takes the addresses out of
//! the stream. A DELETE marks them in deletion vectors (Lance `Operation::Delete`); an
//! UPDATE writes the rows' new values as new fragments and marks the old rows deleted
//! (Lance `Operation::Update` in its rewrite-rows mode). Either commits one new version
//! through Metasrv ([`crate::dataset::Datasets::change`]), so the version before it stays
//! readable by time travel for as long as the registry retains it.

use std::sync::{Arc, Mutex};

use arrow::array::{Array, UInt64Array};
use datafusion::common::Column;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::datasource::provider_as_source;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder, Projection, TableScan};
use datafusion::sql::TableReference;
use futures::StreamExt;
use lance::Dataset;
use roaring::RoaringTreemap;
use sha2::{Digest as _, Sha256};

use crate::QueryError;
use crate::dataset::RowStream;
use crate::scan::{LanceTable, ROW_ADDR};

/// What a DELETE or UPDATE does to the rows it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// `DELETE FROM t [WHERE …]`: the rows go.
    Delete,
    /// `UPDATE t SET … [FROM …] [WHERE …]`: the rows are replaced by their new values.
    Update,
    /// `MERGE INTO t USING … ON … WHEN …` ([`crate::merge`]): rows are updated, deleted and
    /// inserted.
    Merge,
}

impl Change {
    /// The statement's SQL keyword, for messages.
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Delete => "DELETE",
            Self::Update => "UPDATE",
            Self::Merge => "MERGE",
        }
    }
}

/// The rows a DELETE, UPDATE or MERGE found at one version: the addresses of the rows it
/// deletes or replaces (filled in as `rows` is read) and the new rows it writes (an
/// UPDATE's new values; a MERGE's updated and inserted rows; for a DELETE, batches without
/// columns). Read `rows` to the end before looking at `addresses` and `inserted`.
pub struct Matched {
    /// The new rows (UPDATE, MERGE), or column-less batches (DELETE).
    pub rows: RowStream,
    /// Addresses (Lance `_rowaddr`) of the rows read so far.
    pub addresses: Arc<Mutex<RoaringTreemap>>,
    /// Rows among `rows` that replace no row (a MERGE's inserts).
    pub inserted: Arc<std::sync::atomic::AtomicU64>,
}

/// `input` (the source plan of a DELETE or UPDATE on `target`, as DataFusion planned it)
/// reading `dataset` for `target` wherever it reads that table, subqueries included, and
/// yielding each changed row's address as its last column ([`ROW_ADDR`]): for a DELETE
/// only the address, for an UPDATE the row's new values, then its address.
///
/// The statement's own scan of `target` is the first one in the plan (DataFusion plans an
/// `UPDATE … FROM` as the target joined to the FROM tables, target first); a FROM or a
/// subquery that reads `target` again reads the same version, without addresses.
///
/// # Errors
/// [`QueryError::Unsupported`] for a table that has a column named [`ROW_ADDR`], or a plan
/// of a shape DataFusion does not give these statements; DataFusion's errors.
pub fn at_version(
    input: &LogicalPlan,
    target: &TableReference,
    dataset: &Arc<Dataset>,
    change: Change,
) -> Result<LogicalPlan, QueryError> {
    // Aggregates and window functions of the statement itself (a subquery may have
    // them): DataFusion plans a DELETE's or UPDATE's expressions without the check a
    // SELECT's WHERE gets.
    let mut misplaced = None;
    input.apply(|node| {
        if matches!(node, LogicalPlan::Filter(_) | LogicalPlan::Projection(_)) {
            for expr in node.expressions() {
                let found = expr.exists(|e| {
                    Ok(matches!(
                        e,
                        Expr::AggregateFunction(_) | Expr::WindowFunction(_)
                    ))
                })?;
                if found {
                    misplaced = Some(expr);
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    if let Some(expr) = misplaced {
        return Err(QueryError::InvalidArgument(format!(
            "{}: aggregate and window functions are not allowed in its WHERE or SET ({}); compute them in a subquery",
            change.keyword(),
            expr.clone().unalias().schema_name()
        )));
    }
    if dataset.schema().field(ROW_ADDR).is_some() {
        return Err(QueryError::Unsupported(format!(
            "{} on a table with a column named {ROW_ADDR}, which Lance reserves",
            change.keyword()
        )));
    }
    let plain = provider_as_source(Arc::new(LanceTable::new(dataset.clone())));
    let addressed = provider_as_source(Arc::new(LanceTable::with_row_addresses(dataset.clone())));
    let scan_of = |scan: &TableScan, source| {
        TableScan::try_new(
            scan.table_name.clone(),
            source,
            scan.projection.clone(),
            scan.filters.clone(),
            scan.fetch,
        )
    };
    // Every read of the target reads this version (same schema: no other node changes).
    let plan = input
        .clone()
        .transform_up_with_subqueries(|node| match node {
            LogicalPlan::TableScan(scan) if &scan.table_name == target => Ok(Transformed::yes(
                LogicalPlan::TableScan(scan_of(&scan, plain.clone())?),
            )),
            other => Ok(Transformed::no(other)),
        })?
        .data;
    // The statement's own scan, the first in the plan, also yields addresses ...
    let mut found = false;
    let plan = plan
        .transform_down(|node| match node {
            LogicalPlan::TableScan(scan) if &scan.table_name == target => {
                found = true;
                Ok(Transformed::new(
                    LogicalPlan::TableScan(scan_of(&scan, addressed.clone())?),
                    true,
                    TreeNodeRecursion::Stop,
                ))
            }
            other => Ok(Transformed::no(other)),
        })?
        .data;
    if !found {
        return Err(QueryError::Unsupported(format!(
            "{} whose plan does not scan its table {target}",
            change.keyword()
        )));
    }
    // ... and every node above it carries the column.
    let plan = plan
        .transform_up(|node| match node {
            LogicalPlan::TableScan(_) => Ok(Transformed::no(node)),
            other => other.recompute_schema().map(Transformed::yes),
        })?
        .data;
    let address = |plan: &LogicalPlan| -> Result<Expr, QueryError> {
        let (qualifier, field) = plan
            .schema()
            .qualified_field_with_unqualified_name(ROW_ADDR)?;
        Ok(Expr::Column(Column::from((qualifier, field))))
    };
    Ok(match (change, plan) {
        (Change::Delete, plan) => {
            let address = address(&plan)?;
            LogicalPlanBuilder::from(plan).project([address])?.build()?
        }
        (Change::Update, LogicalPlan::Projection(projection)) => {
            let mut expr = projection.expr;
            expr.push(address(&projection.input)?);
            LogicalPlan::Projection(Projection::try_new(expr, projection.input)?)
        }
        (change, other) => {
            return Err(QueryError::Unsupported(format!(
                "{} planned as {}, not as a projection of the new rows",
                change.keyword(),
                other.display()
            )));
        }
    })
}

/// `stream` (batches whose last column is [`ROW_ADDR`], as [`at_version`]'s plan yields)
/// without that column; the addresses go into `addresses` as the batches pass. For an
/// UPDATE an address seen twice is an error: a plan that joins the table to other rows
/// (`UPDATE … FROM`, should DataFusion plan it) and matched one row several times would
/// write that row twice. The stream's errors are DataFusion's, as [`QueryError`].
pub fn split_addresses(
    stream: SendableRecordBatchStream,
    addresses: Arc<Mutex<RoaringTreemap>>,
    change: Change,
) -> RowStream {
    stream
        .map(move |batch| {
            let batch = batch?;
            let last = batch.num_columns().checked_sub(1).ok_or_else(|| {
                QueryError::Execution(format!("{} rows came without addresses", change.keyword()))
            })?;
            let column = batch.column(last);
            let rows = column
                .as_any()
                .downcast_ref::<UInt64Array>()
                .filter(|a| a.null_count() == 0)
                .ok_or_else(|| {
                    QueryError::Execution(format!(
                        "{} rows came with addresses of type {}",
                        change.keyword(),
                        column.data_type()
                    ))
                })?;
            let mut seen = addresses.lock().unwrap_or_else(|p| p.into_inner());
            for address in rows.values() {
                if !seen.insert(*address) && change == Change::Update {
                    return Err(QueryError::InvalidArgument(
                        "UPDATE … FROM matched one row of the table to several rows of FROM, so its new value is ambiguous; make the join match each row at most once"
                            .into(),
                    ));
                }
            }
            let kept: Vec<usize> = (0..last).collect();
            Ok(batch.project(&kept)?)
        })
        .boxed()
}

/// `stream` (the rows of [`crate::merge::select`]: action, address, then the target's
/// columns) as the new rows a MERGE writes (its updated and inserted rows, the target's
/// columns); the addresses of the rows it updates or deletes go into `addresses`, the
/// count of inserted rows into `inserted`, as the batches pass. A target row two source
/// rows match is an error (SQL's cardinality violation: which change wins is undefined).
pub fn split_merge(
    stream: SendableRecordBatchStream,
    addresses: Arc<Mutex<RoaringTreemap>>,
    inserted: Arc<std::sync::atomic::AtomicU64>,
) -> RowStream {
    use crate::merge::{ACTION_DELETE, ACTION_INSERT, ACTION_UPDATE};
    use arrow::array::{BooleanArray, Int64Array};
    stream
        .map(move |batch| {
            let batch = batch?;
            let malformed = || QueryError::Execution("MERGE rows came without their action and address".into());
            if batch.num_columns() < 2 {
                return Err(malformed());
            }
            let actions = batch
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or_else(malformed)?;
            let rows = batch
                .column(1)
                .as_any()
                .downcast_ref::<UInt64Array>()
                .ok_or_else(malformed)?;
            let mut seen = addresses.lock().unwrap_or_else(|p| p.into_inner());
            let mut keep = Vec::with_capacity(batch.num_rows());
            for i in 0..batch.num_rows() {
                let action = actions.value(i);
                let replaces = action == ACTION_UPDATE || action == ACTION_DELETE;
                if replaces && (rows.is_null(i) || !seen.insert(rows.value(i))) {
                    return Err(QueryError::InvalidArgument(
                        "MERGE matched one row of the target to several rows of the source, so what becomes of it is ambiguous; make ON match each target row at most once"
                            .into(),
                    ));
                }
                if action == ACTION_INSERT {
                    inserted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                keep.push(action == ACTION_UPDATE || action == ACTION_INSERT);
            }
            let kept = arrow::compute::filter_record_batch(&batch, &BooleanArray::from(keep))?;
            let columns: Vec<usize> = (2..batch.num_columns()).collect();
            Ok(kept.project(&columns)?)
        })
        .boxed()
}

/// The payload digest of a DELETE or UPDATE under an operation id: SHA-256 over its kind,
/// its SQL text and its bound parameter values, so a retry of the same statement is a
/// replay and another statement under the same id is a conflict (as for appends,
/// [`crate::dataset::PayloadDigest`]).
pub fn statement_digest(change: Change, sql: &str, params: &str) -> lake_core::Digest {
    let mut hash = Sha256::new();
    for part in ["lake.dml.v1", change.keyword(), sql, params] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().into()
}
