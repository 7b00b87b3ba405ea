//! The DataFusion table of one pinned Lance dataset version, scanned for analytics.
//!
//! With a filter, Lance's own `LanceTableProvider` on a local filesystem fetches every
//! variable-width column and every column 10 bytes wide or wider by late materialization:
//! it filters on the filter columns, then takes the other columns row by row. That suits a
//! query that keeps ~0.1% of the rows; for a TPC-H scan that keeps most of them it turns one
//! sequential read into thousands of small ones (q1 at scale factor 1: 4,990 reads for 6 M
//! rows). It also filters and hands on every batch through one output partition, which on a
//! 2-core replica leaves a filtered scan (TPC-H q6) on one core. A Query replica instead asks
//! Lance ([`lance::dataset::scanner::Scanner`]) for:
//! - early materialization of every projected column ([`MaterializationStyle::AllEarly`]),
//!   so a scan reads each column's pages once, sequentially. Very selective queries pay for
//!   it: a one-row lookup by key at SF 1 takes about 3 ms longer;
//! - one output partition per DataFusion target partition
//!   ([`FilteredReadThreadingMode::MultiplePartitions`]), the partitions sharing Lance's
//!   read tasks.
//!
//! Projection, filters and limits are pushed into the Lance scan as before; Lance applies the
//! whole filter, so pushdown is exact. The filter's conjuncts go cheapest first
//! ([`cheapest_first`]), so the costly ones run only on the rows the cheap ones keep. A scan
//! with a limit keeps Lance's single partition (Lance supports a range after the filter only
//! there). Rows come back in no particular
//! order unless the query has an `ORDER BY`, as SQL allows.
//!
//! Columns with a zone map covering every fragment report their range to the planner
//! ([`crate::scan_statistics`]), as Parquet row-group statistics do, and a filtered scan
//! counts the bytes of the columns it returns only, not of those it reads for the filter.
//! The filters a hash join or a top-k learns while it runs are applied to the scan's rows
//! before they go further ([`crate::runtime_filter`]).

use std::sync::Arc;

use arrow::datatypes::{DataType, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::ScalarValue;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::datasource::TableProvider;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use lance::Dataset;
use lance::dataset::scanner::{MaterializationStyle, Scanner};
use lance::io::exec::filtered_read::{FilteredReadExec, FilteredReadThreadingMode};

/// A pinned Lance dataset version as a DataFusion table (columns: the dataset's schema,
/// then [`ROW_ADDR`] when made by [`LanceTable::with_row_addresses`]).
#[derive(Debug)]
pub struct LanceTable {
    dataset: Arc<Dataset>,
    schema: SchemaRef,
    /// The last column of [`Self::schema`] is [`ROW_ADDR`].
    row_addresses: bool,
}

/// Lance's row address column: `UInt64`, not null, a row's fragment id in the upper 32
/// bits and its offset in the fragment in the lower 32 (lance-core `ROW_ADDR`).
pub const ROW_ADDR: &str = lance_core::ROW_ADDR;

impl LanceTable {
    /// The table over `dataset` (an opened, immutable version).
    pub fn new(dataset: Arc<Dataset>) -> Self {
        let schema = Arc::new(arrow::datatypes::Schema::from(dataset.schema()));
        Self {
            dataset,
            schema,
            row_addresses: false,
        }
    }

    /// The table over `dataset` with each row's address as a last column, [`ROW_ADDR`]:
    /// the scan a DELETE or UPDATE finds its rows with ([`crate::dml`]).
    pub fn with_row_addresses(dataset: Arc<Dataset>) -> Self {
        let mut fields: Vec<arrow::datatypes::FieldRef> = Self::new(dataset.clone())
            .schema
            .fields()
            .iter()
            .cloned()
            .collect();
        fields.push(Arc::new(arrow::datatypes::Field::new(
            ROW_ADDR,
            arrow::datatypes::DataType::UInt64,
            false,
        )));
        Self {
            dataset,
            schema: Arc::new(arrow::datatypes::Schema::new(fields)),
            row_addresses: true,
        }
    }
}

#[async_trait]
impl TableProvider for LanceTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let lance = |e: lance::Error| DataFusionError::External(Box::new(e));
        let mut scan: Scanner = self.dataset.scan();
        match projection {
            Some(columns) if columns.is_empty() => {
                scan.empty_project().map_err(lance)?;
            }
            Some(columns) => {
                let names: Vec<&str> = columns
                    .iter()
                    .map(|&i| self.schema.field(i).name().as_str())
                    .collect();
                scan.project(&names).map_err(lance)?;
            }
            None if self.row_addresses => {
                let names: Vec<&str> = self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect();
                scan.project(&names).map_err(lance)?;
            }
            None => {}
        }
        let filter = cheapest_first(filters.to_vec(), &self.schema);
        if let Some(filter) = &filter {
            scan.filter_expr(filter.clone());
        }
        scan.limit(limit.map(|l| l as i64), None).map_err(lance)?;
        scan.materialization_style(MaterializationStyle::AllEarly);
        let plan = scan.create_plan().await.map_err(lance)?;
        if self.row_addresses {
            // The columns as projected, the address where it was asked for.
            let expected: Vec<&str> = match projection {
                Some(columns) => columns
                    .iter()
                    .map(|&i| self.schema.field(i).name().as_str())
                    .collect(),
                None => self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect(),
            };
            let schema = plan.schema();
            let got: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            if got != expected {
                return Err(DataFusionError::Internal(format!(
                    "the Lance scan returned columns {got:?}, not {expected:?}"
                )));
            }
        }
        let ranges = crate::scan_statistics::of_columns(&self.dataset, &plan.schema()).await;
        if limit.is_some() {
            // A limit bounds the rows whatever the filter keeps: Lance's estimate then.
            return Ok(crate::runtime_filter::accepting(
                crate::scan_statistics::with_statistics(plan, ranges, None),
            ));
        }
        let filtered = match &filter {
            Some(filter) => {
                crate::scan_statistics::filtered_rows(&self.dataset, &self.schema, filter, state)
                    .await
            }
            None => None,
        };
        let partitions = state.config().target_partitions().max(1);
        let plan = plan
            .transform_down(|node| {
                let Some(read) = node.downcast_ref::<FilteredReadExec>() else {
                    return Ok(Transformed::no(node));
                };
                let options = read.options();
                if options.scan_range_after_filter.is_some()
                    || !matches!(
                        options.threading_mode,
                        FilteredReadThreadingMode::OnePartitionMultipleThreads(_)
                    )
                {
                    return Ok(Transformed::no(node));
                }
                let mut options = options.clone();
                options.threading_mode = FilteredReadThreadingMode::MultiplePartitions(partitions);
                let read = FilteredReadExec::try_new(
                    read.dataset().clone(),
                    options,
                    read.index_input().cloned(),
                )
                .map_err(lance)?;
                Ok(Transformed::new(
                    Arc::new(read),
                    true,
                    TreeNodeRecursion::Jump,
                ))
            })?
            .data;
        Ok(crate::runtime_filter::accepting(
            crate::scan_statistics::with_statistics(plan, ranges, filtered),
        ))
    }

    /// The pinned version's live rows, exact, from its manifest: each fragment's physical
    /// rows less its deleted ones (lance-table `Fragment::num_rows`); `None` when a
    /// fragment does not record them (written by an old Lance). Columns are left unknown.
    /// Read by [`crate::join_order::SmallDimensionsFirst`].
    fn statistics(&self) -> Option<datafusion::common::Statistics> {
        let rows = self
            .dataset
            .fragments()
            .iter()
            .map(|fragment| fragment.num_rows())
            .sum::<Option<usize>>()?;
        let mut statistics = datafusion::common::Statistics::new_unknown(&self.schema);
        statistics.num_rows = datafusion::common::stats::Precision::Exact(rows);
        Some(statistics)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::common::Result<Vec<TableProviderFilterPushDown>> {
        // The Lance scan evaluates the whole pushed filter on every row it returns, with
        // DataFusion's own expressions; filters its planner cannot take, or whose
        // evaluation can fail, stay with DataFusion.
        Ok(filters
            .iter()
            .map(|filter| {
                if lance_evaluates(filter, &self.schema) {
                    TableProviderFilterPushDown::Exact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }
}

/// `filters` (conjuncts Lance evaluates, [`lance_evaluates`]) as one conjunction, the
/// operands of it and of every `AND`/`OR` inside ordered cheapest first, the order kept
/// among equal costs; `None` for no filters.
///
/// DataFusion evaluates `a AND b` by evaluating `b` only on the rows where `a` holds once
/// they are at most 20 % of a batch, and skips `b` where `a` holds on none or all of them
/// (`BinaryExpr`'s short circuits), so a cheap, selective conjunct first saves the costly
/// ones: TPC-H q12's date comparisons then go before its string comparisons on
/// `l_shipmode`. The costs are DuckDB's heuristic (`ExpressionHeuristics`, which orders a
/// filter's expressions the same way): [`filter_cost`]. Reordering cannot change an answer:
/// `AND` and `OR` commute in SQL's three-valued logic, and a pushed filter cannot fail on
/// any row, so no row's error depends on which operand runs first.
fn cheapest_first(filters: Vec<Expr>, schema: &arrow::datatypes::Schema) -> Option<Expr> {
    use datafusion::logical_expr::Operator;
    /// The operands of `expr`'s chain of `op`, in order (`expr` itself if it is not `op`).
    fn chain(expr: Expr, op: Operator, operands: &mut Vec<Expr>) {
        match expr {
            Expr::BinaryExpr(binary) if binary.op == op => {
                chain(*binary.left, op, operands);
                chain(*binary.right, op, operands);
            }
            other => operands.push(other),
        }
    }
    /// `operands` joined by `op` cheapest first, with the cost of the whole ([`filter_cost`]
    /// of the chain built); `op`'s identity (`TRUE` for `AND`, `FALSE` for `OR`) for none.
    fn ordered(
        operands: Vec<Expr>,
        op: Operator,
        schema: &arrow::datatypes::Schema,
    ) -> (u64, Expr) {
        let mut costed: Vec<(u64, Expr)> =
            operands.into_iter().map(|e| reorder(e, schema)).collect();
        // Stable: equal costs keep the query's order.
        costed.sort_by_key(|(cost, _)| *cost);
        let joins = 5 * (costed.len() as u64).saturating_sub(1);
        let cost = costed.iter().map(|(cost, _)| cost).sum::<u64>() + joins;
        let expr = costed
            .into_iter()
            .map(|(_, e)| e)
            .reduce(|l, r| datafusion::logical_expr::binary_expr(l, op, r))
            .unwrap_or_else(|| datafusion::logical_expr::lit(op == Operator::And));
        (cost, expr)
    }
    /// `expr` with every `AND`/`OR` chain in it ordered, and its cost.
    fn reorder(expr: Expr, schema: &arrow::datatypes::Schema) -> (u64, Expr) {
        match expr {
            Expr::BinaryExpr(binary) if matches!(binary.op, Operator::And | Operator::Or) => {
                let op = binary.op;
                let mut operands = Vec::new();
                chain(Expr::BinaryExpr(binary), op, &mut operands);
                ordered(operands, op, schema)
            }
            other => (filter_cost(&other, schema), other),
        }
    }
    let mut operands = Vec::new();
    for filter in filters {
        chain(filter, Operator::And, &mut operands);
    }
    (!operands.is_empty()).then(|| ordered(operands, Operator::And, schema).1)
}

/// The relative cost of evaluating `expr` over a batch, after DuckDB's
/// `ExpressionHeuristics::Cost` (src/optimizer/expression_heuristics.cpp): a column is 8
/// units of its type's weight (text and binary 5, floats 2, others 1), a literal 1 unit; a
/// comparison adds 5, `AND`/`OR` 5, `IS [NOT] NULL` and the like 5, `NOT` 10, `BETWEEN` 10,
/// a cast 5 (200 to or from text or binary), `IN (list)` 100 per listed value, `LIKE` 200,
/// any other function 1000; `CASE` is the sum of its parts.
fn filter_cost(expr: &Expr, schema: &arrow::datatypes::Schema) -> u64 {
    fn weight(data_type: Option<&DataType>) -> u64 {
        match data_type {
            Some(
                DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_),
            ) => 5,
            Some(DataType::Float16 | DataType::Float32 | DataType::Float64) => 2,
            _ => 1,
        }
    }
    let textual = |t: &DataType| weight(Some(t)) == 5;
    let cost = |e: &Expr| filter_cost(e, schema);
    match expr {
        Expr::Column(column) => {
            8 * weight(
                schema
                    .field_with_name(&column.name)
                    .ok()
                    .map(|f| f.data_type()),
            )
        }
        Expr::Literal(value, _) => weight(Some(&value.data_type())),
        Expr::Alias(alias) => cost(&alias.expr),
        Expr::BinaryExpr(binary) => cost(&binary.left) + 5 + cost(&binary.right),
        Expr::Not(e) => cost(e) + 10,
        Expr::IsNull(e)
        | Expr::IsNotNull(e)
        | Expr::IsTrue(e)
        | Expr::IsFalse(e)
        | Expr::IsUnknown(e)
        | Expr::IsNotTrue(e)
        | Expr::IsNotFalse(e)
        | Expr::IsNotUnknown(e) => cost(e) + 5,
        Expr::Between(between) => {
            cost(&between.expr) + cost(&between.low) + cost(&between.high) + 10
        }
        Expr::InList(list) => {
            cost(&list.expr)
                + list.list.iter().map(cost).sum::<u64>()
                + 100 * list.list.len() as u64
        }
        Expr::Like(like) => cost(&like.expr) + cost(&like.pattern) + 200,
        Expr::Cast(datafusion::logical_expr::Cast { expr, field })
        | Expr::TryCast(datafusion::logical_expr::TryCast { expr, field }) => {
            let to = field.data_type();
            let from = source_type(expr, schema);
            let text = textual(to) || from.as_ref().is_some_and(textual);
            let same = from.as_ref() == Some(to);
            cost(expr)
                + if same {
                    0
                } else if text {
                    200
                } else {
                    5
                }
        }
        Expr::Case(case) => {
            case.expr.as_deref().map_or(0, cost)
                + case
                    .when_then_expr
                    .iter()
                    .map(|(when, then)| cost(when) + cost(then))
                    .sum::<u64>()
                + case.else_expr.as_deref().map_or(0, cost)
        }
        Expr::ScalarFunction(f) => f.args.iter().map(cost).sum::<u64>() + 1000,
        _ => 1000,
    }
}

/// Functions a pushed filter may call: Lance's planner takes them and they cannot fail on
/// any row (DataFusion `datafusion-functions` names).
const INFALLIBLE_FUNCTIONS: &[&str] = &[
    "lower",
    "upper",
    "starts_with",
    "ends_with",
    "character_length",
    "octet_length",
    "bit_length",
    "btrim",
    "ltrim",
    "rtrim",
    "coalesce",
    "nullif",
    "isnan",
    "iszero",
    "get_field",
];

/// Whether a Lance scan may evaluate `filter` (over a table of `schema`): every node is a
/// column, a literal, a comparison, `AND`/`OR`/`NOT`, `IS [NOT] NULL|TRUE|FALSE|UNKNOWN`,
/// `BETWEEN`, `IN (list)`, `CASE`, `TRY_CAST`, `LIKE`/`ILIKE` (escape `\` or none), a cast
/// that cannot fail ([`cast_cannot_fail`]), `substr` with a literal start and length (of 0
/// or more) within 32 bits, or one of [`INFALLIBLE_FUNCTIONS`].
///
/// Lance reports any failure while it filters as its own execution error, with the cause
/// flattened to text, so a filter that fails on the data (`10 / i` over a zero, `CAST(s AS
/// INT)` over `'x'`, a binary column compared as text) would reach the client as an
/// internal error. DataFusion evaluates those itself and the failure keeps its kind
/// (INVALID_ARGUMENT). Lake's own functions (checked arithmetic, canonical floats, the
/// translation of `SIMILAR TO` and `LIKE … ESCAPE` patterns from a column) and
/// regular-expression matches (a pattern that may not compile) stay with DataFusion too.
fn lance_evaluates(filter: &Expr, schema: &arrow::datatypes::Schema) -> bool {
    use datafusion::logical_expr::Operator;
    !filter
        .exists(|e| {
            Ok(!match e {
                Expr::Column(_)
                | Expr::Literal(..)
                | Expr::Alias(_)
                | Expr::Not(_)
                | Expr::IsNull(_)
                | Expr::IsNotNull(_)
                | Expr::IsTrue(_)
                | Expr::IsFalse(_)
                | Expr::IsUnknown(_)
                | Expr::IsNotTrue(_)
                | Expr::IsNotFalse(_)
                | Expr::IsNotUnknown(_)
                | Expr::Between(_)
                | Expr::InList(_)
                | Expr::Case(_)
                | Expr::TryCast(_) => true,
                Expr::BinaryExpr(binary) => {
                    crate::canonical_float::is_comparison(binary.op)
                        || matches!(binary.op, Operator::And | Operator::Or)
                }
                Expr::Like(like) => like.escape_char.is_none_or(|c| c == '\\'),
                Expr::Cast(cast) => source_type(&cast.expr, schema)
                    .is_some_and(|from| cast_cannot_fail(&from, cast.field.data_type())),
                Expr::ScalarFunction(f) => match f.func.name() {
                    // Fails on a negative length, and where start + length overflows:
                    // literal positions and lengths within 32 bits cannot.
                    "substr" => f.args.iter().skip(1).enumerate().all(|(i, arg)| match arg {
                        Expr::Literal(value, _) => match small_integer(value) {
                            Some(Some(v)) => i == 0 || v >= 0,
                            Some(None) => true,
                            None => false,
                        },
                        _ => false,
                    }),
                    name => INFALLIBLE_FUNCTIONS.contains(&name),
                },
                _ => false,
            })
        })
        .unwrap_or(false)
}

/// `Some(value)` for an integer literal within 32 bits (`Some(None)` for a null), `None`
/// for anything else.
fn small_integer(value: &ScalarValue) -> Option<Option<i64>> {
    if value.is_null() {
        return Some(None);
    }
    let v = match value {
        ScalarValue::Int8(Some(v)) => i64::from(*v),
        ScalarValue::Int16(Some(v)) => i64::from(*v),
        ScalarValue::Int32(Some(v)) => i64::from(*v),
        ScalarValue::Int64(Some(v)) => *v,
        _ => return None,
    };
    (i64::from(i32::MIN)..=i64::from(i32::MAX))
        .contains(&v)
        .then_some(Some(v))
}

/// The type of a column, a literal or a cast of them, by the table's `schema`.
fn source_type(expr: &Expr, schema: &arrow::datatypes::Schema) -> Option<DataType> {
    match expr {
        Expr::Column(column) => schema
            .field_with_name(&column.name)
            .ok()
            .map(|f| f.data_type().clone()),
        Expr::Literal(value, _) => Some(value.data_type()),
        Expr::Cast(cast) => Some(cast.field.data_type().clone()),
        _ => None,
    }
}

/// Whether Arrow's cast from `from` to `to` succeeds for every value: the same type, a
/// null, an integer to a wider integer that holds its whole range or to a float, a float
/// to a wider float, text between its three layouts, a decimal or integer to a decimal with
/// at least as many digits before and after the point, a decimal to a double, a date to a
/// 64-bit date.
fn cast_cannot_fail(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    /// Digits before the point an integer type or a decimal holds.
    fn integer_digits(t: &DataType) -> Option<i16> {
        Some(match t {
            Int8 | UInt8 => 3,
            Int16 | UInt16 => 5,
            Int32 | UInt32 => 10,
            Int64 => 19,
            UInt64 => 20,
            Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) | Decimal256(p, s) => {
                i16::from(*p) - i16::from(*s)
            }
            _ => return None,
        })
    }
    fn scale(t: &DataType) -> i8 {
        match t {
            Decimal32(_, s) | Decimal64(_, s) | Decimal128(_, s) | Decimal256(_, s) => *s,
            _ => 0,
        }
    }
    let text = |t: &DataType| matches!(t, Utf8 | LargeUtf8 | Utf8View);
    if from == to || from.is_null() || (text(from) && text(to)) {
        return true;
    }
    match (from, to) {
        (f, Float16 | Float32 | Float64) if f.is_integer() => true,
        (Float16, Float32 | Float64) | (Float32, Float64) | (Date32, Date64) => true,
        (Decimal32(..) | Decimal64(..) | Decimal128(..) | Decimal256(..), Float64) => true,
        (f, t) if f.is_integer() && t.is_integer() => {
            let width = |t: &DataType| t.primitive_width().unwrap_or(0);
            if f.is_signed_integer() && t.is_unsigned_integer() {
                false
            } else if f.is_unsigned_integer() && t.is_signed_integer() {
                width(t) > width(f)
            } else {
                width(t) >= width(f)
            }
        }
        (f, Decimal32(..) | Decimal64(..) | Decimal128(..) | Decimal256(..)) => {
            match (integer_digits(f), integer_digits(to)) {
                (Some(have), Some(room)) => room >= have && scale(to) >= scale(f),
                _ => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{Field, Schema};
    use datafusion::logical_expr::{cast, col, lit};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("b", DataType::Binary, true),
            Field::new("d", DataType::Float64, true),
            Field::new("m", DataType::Decimal128(15, 2), true),
        ])
    }

    #[test]
    fn pushed_filters_run_cheapest_first() {
        let schema = Schema::new(vec![
            Field::new("mode", DataType::Utf8, true),
            Field::new("ship", DataType::Date32, true),
            Field::new("commit", DataType::Date32, true),
            Field::new("receipt", DataType::Date32, true),
            Field::new("i", DataType::Int32, true),
        ]);
        let date = |d: i32| lit(ScalarValue::Date32(Some(d)));
        // TPC-H q12's conjuncts in the query's order: the string comparisons go last, the
        // date comparisons with a literal first, column against column between them.
        let filters = vec![
            col("mode").eq(lit("MAIL")).or(col("mode").eq(lit("SHIP"))),
            col("receipt").gt(col("commit")),
            col("ship").lt(col("commit")),
            col("receipt").gt_eq(date(8766)),
            col("receipt").lt(date(9131)),
        ];
        let expected = col("receipt")
            .gt_eq(date(8766))
            .and(col("receipt").lt(date(9131)))
            .and(col("receipt").gt(col("commit")))
            .and(col("ship").lt(col("commit")))
            .and(col("mode").eq(lit("MAIL")).or(col("mode").eq(lit("SHIP"))));
        assert_eq!(cheapest_first(filters, &schema), Some(expected));

        // Inside an OR of ANDs too; a LIKE and an IN list after plain comparisons; equal
        // costs keep their order.
        let nested = col("mode")
            .like(lit("A%"))
            .and(col("i").lt(lit(5)))
            .or(col("mode")
                .in_list(vec![lit("x"), lit("y")], false)
                .and(col("i").gt(lit(9))));
        let expected = col("i")
            .lt(lit(5))
            .and(col("mode").like(lit("A%")))
            .or(col("i")
                .gt(lit(9))
                .and(col("mode").in_list(vec![lit("x"), lit("y")], false)));
        assert_eq!(cheapest_first(vec![nested], &schema), Some(expected));
        let same = vec![
            col("i").gt(lit(1)),
            col("i").lt(lit(9)),
            col("i").eq(lit(4)),
        ];
        assert_eq!(
            cheapest_first(same, &schema),
            Some(
                col("i")
                    .gt(lit(1))
                    .and(col("i").lt(lit(9)))
                    .and(col("i").eq(lit(4)))
            )
        );
        assert_eq!(cheapest_first(vec![], &schema), None);
    }

    #[test]
    fn filters_that_cannot_fail_go_to_lance() {
        let schema = schema();
        for filter in [
            col("i").gt(lit(3)),
            col("i").eq(lit(1)).or(col("s").like(lit("a%"))),
            col("s").in_list(vec![lit("a"), lit("b")], false),
            col("m").between(lit(1), lit(2)).and(col("i").is_null()),
            cast(col("i"), DataType::Int64).lt(lit(5_000_000_000_i64)),
            cast(col("m"), DataType::Decimal128(20, 4)).gt(lit(1)),
            datafusion::functions::expr_fn::lower(col("s")).eq(lit("x")),
            datafusion::functions::expr_fn::substr(col("s"), lit(1)).eq(lit("x")),
            datafusion::functions::expr_fn::substring(col("s"), lit(1), lit(2)).eq(lit("x")),
        ] {
            assert!(lance_evaluates(&filter, &schema), "{filter}");
        }
    }

    #[test]
    fn filters_that_can_fail_on_a_row_stay_with_datafusion() {
        let schema = schema();
        for filter in [
            (lit(10) / col("i")).gt(lit(1)),
            (col("i") % lit(0)).eq(lit(1)),
            col("i").eq(lit(1)).and((lit(10) / col("i")).gt(lit(1))),
            cast(col("s"), DataType::Int32).eq(lit(1)),
            cast(col("b"), DataType::Utf8).like(lit("ab%")),
            cast(col("d"), DataType::Decimal128(38, 23)).gt(lit(1)),
            cast(col("i"), DataType::Int16).eq(lit(1_i16)),
            cast(col("m"), DataType::Decimal128(15, 4)).eq(lit(1)),
            datafusion::functions::expr_fn::substring(col("s"), lit(1), lit(-1)).eq(lit("x")),
            datafusion::functions::expr_fn::substring(col("s"), lit(1), col("i")).eq(lit("x")),
            datafusion::functions::expr_fn::substr(col("s"), lit(i64::MIN)).eq(lit("")),
            datafusion::functions::expr_fn::substring(col("s"), lit(i64::MIN), lit(5)).eq(lit("")),
        ] {
            assert!(!lance_evaluates(&filter, &schema), "{filter}");
        }
    }

    #[test]
    fn only_lossless_or_total_casts_cannot_fail() {
        use DataType::*;
        for (from, to) in [
            (Int8, Int64),
            (UInt32, Int64),
            (Int64, Float64),
            (Float32, Float64),
            (Utf8, Utf8View),
            (Int32, Decimal128(10, 0)),
            (Decimal128(15, 2), Decimal128(38, 2)),
            (Decimal128(15, 2), Float64),
            (Date32, Date64),
            (Null, Int32),
        ] {
            assert!(cast_cannot_fail(&from, &to), "{from} -> {to}");
        }
        for (from, to) in [
            (Int64, Int32),
            (Int8, UInt64),
            (UInt64, Int64),
            (Int32, Decimal128(9, 0)),
            (Decimal128(15, 2), Decimal128(15, 3)),
            (Decimal128(15, 2), Decimal128(14, 2)),
            (Float64, Float32),
            (Float64, Decimal128(38, 10)),
            (Utf8, Int32),
            (Binary, Utf8),
            (
                Date32,
                Timestamp(arrow::datatypes::TimeUnit::Nanosecond, None),
            ),
        ] {
            assert!(!cast_cannot_fail(&from, &to), "{from} -> {to}");
        }
    }
}
