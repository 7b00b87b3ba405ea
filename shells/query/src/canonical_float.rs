//! IEEE 754 zeros and NaNs in comparisons, grouping, DISTINCT, joins and ordering.
//!
//! SQL compares floating-point values as IEEE 754 does for zeros (`-0.0 = 0.0`), and as
//! PostgreSQL and DuckDB do for NaN (one NaN, equal to itself and greater than every
//! number). So `-0.0` and `0.0` fall into one group, count once in `count(DISTINCT …)`,
//! join with each other and tie in ORDER BY, and NaNs of any bit pattern (`'inf' * 0.0`
//! gives a negative one) are one value. DataFusion 54 and Arrow 58 compare and hash floats
//! by their bits or total order, where those values differ (apache/datafusion#22826,
//! #22490, #11108; #22835 fixes zeros in DataFusion 55, which the Lance release Lake builds
//! on does not use). [`CanonicalFloats`] is an analyzer rule (it runs after type coercion,
//! before any optimization or pushdown) that rewrites a plan so those kernels see one zero
//! and one NaN:
//!
//! * `BETWEEN` on floats is two comparisons;
//! * a comparison with a literal zero takes the form Lance also uses (lance-datafusion's
//!   `signed_zero`): `e = 0.0` → `e IN (-0.0, 0.0)`, `e <> 0.0` → `e NOT IN (-0.0, 0.0)`,
//!   `e < 0.0` and `e >= 0.0` compare with `-0.0`, `e <= 0.0` and `e > 0.0` with `0.0`, so it
//!   stays pushable into scans and indexes;
//! * every other comparison of two float expressions, an `IN` list of non-literals, an `IN`
//!   subquery (its value and its column), a float
//!   grouping key, a float argument of a DISTINCT aggregate, a float equi-join key, a float
//!   `PARTITION BY` or `ORDER BY` key (of a query or a window) is wrapped in
//!   [`canonical_float`]`(e)`: `-0.0` becomes `0.0` and every NaN the positive quiet NaN;
//! * `SELECT DISTINCT` (and `UNION`) canonicalizes its float columns below it;
//! * a subquery's filter that reads the outer query computes the canonical values of its
//!   own side as columns below it, so DataFusion can decorrelate it over an aggregate
//!   (`correlated_filter`).
//!
//! Output names stay as written (DataFusion's `NamePreserver`). Values themselves are
//! stored and returned as they are: only what is compared is canonical. Remove this rule
//! once Lake is on a DataFusion release with #22835 and one NaN.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use arrow::array::{ArrayRef, AsArray, PrimitiveArray};
use arrow::datatypes::{ArrowPrimitiveType, DataType, Float32Type, Float64Type};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, Result, ScalarValue, exec_err};
use datafusion::logical_expr::expr::{Between, InList, ScalarFunction, Sort};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::{conjunction, split_conjunction_owned};
use datafusion::logical_expr::{
    Aggregate, BinaryExpr, ColumnarValue, Distinct, Expr, ExprSchemable, Filter, Join, LogicalPlan,
    Operator, Projection, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
    Window,
};
use datafusion::optimizer::AnalyzerRule;

use crate::analysis::{expression_schema, map_expressions_keeping_names};

/// Name of the function [`canonical_float`] calls.
pub const CANONICAL_FLOAT: &str = "lake_canonical_float";

/// `canonical_float(x)`: `x` (REAL or DOUBLE) with `-0.0` as `0.0` and every NaN as the
/// positive quiet NaN; other values, and NULL, unchanged.
pub fn canonical_float() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
        Arc::new(ScalarUDF::new_from_impl(CanonicalFloat {
            signature: Signature::uniform(
                1,
                vec![DataType::Float32, DataType::Float64],
                Volatility::Immutable,
            ),
        }))
    });
    UDF.clone()
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct CanonicalFloat {
    signature: Signature,
}

/// `array` (of `T`, a float type) with `-0.0` as `0.0` and every NaN as `nan`.
fn canonical<T: ArrowPrimitiveType>(array: &ArrayRef, nan: T::Native) -> ArrayRef
where
    T::Native: CanonicalValue,
{
    let values: &PrimitiveArray<T> = array.as_primitive();
    Arc::new(values.unary::<_, T>(|v| v.canonical(nan)))
}

/// One float value, canonical.
trait CanonicalValue: Copy {
    fn canonical(self, nan: Self) -> Self;
}

macro_rules! canonical_value {
    ($($t:ty),*) => {$(
        impl CanonicalValue for $t {
            fn canonical(self, nan: Self) -> Self {
                // -0.0 + 0.0 is 0.0 (IEEE 754, round to nearest); other numbers are unchanged.
                if self.is_nan() { nan } else { self + 0.0 }
            }
        }
    )*};
}
canonical_value!(f32, f64);

impl ScalarUDFImpl for CanonicalFloat {
    fn name(&self) -> &str {
        CANONICAL_FLOAT
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(args.first().cloned().unwrap_or(DataType::Float64))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value] = args.args.as_slice() else {
            return exec_err!("{CANONICAL_FLOAT} takes one argument");
        };
        let (array, scalar) = match value {
            ColumnarValue::Array(a) => (a.clone(), false),
            ColumnarValue::Scalar(s) => (s.to_array()?, true),
        };
        let out = match array.data_type() {
            DataType::Float32 => canonical::<Float32Type>(&array, f32::NAN),
            DataType::Float64 => canonical::<Float64Type>(&array, f64::NAN),
            other => return exec_err!("{CANONICAL_FLOAT} takes REAL or DOUBLE, got {other}"),
        };
        crate::checked_integers::columnar(out, scalar)
    }
}

/// The analyzer rule: see the module doc.
#[derive(Debug, Default)]
pub struct CanonicalFloats;

impl AnalyzerRule for CanonicalFloats {
    fn name(&self) -> &str {
        "lake_canonical_floats"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(rewrite_node).data()
    }
}

fn is_float(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Float32 | DataType::Float64)
}

fn zero(data_type: &DataType, negative: bool) -> Expr {
    let value = if negative { -0.0 } else { 0.0 };
    Expr::Literal(
        match data_type {
            DataType::Float32 => ScalarValue::Float32(Some(value as f32)),
            _ => ScalarValue::Float64(Some(value)),
        },
        None,
    )
}

fn literal_zero(expr: &Expr) -> bool {
    match expr {
        Expr::Literal(ScalarValue::Float64(Some(v)), _) => *v == 0.0,
        Expr::Literal(ScalarValue::Float32(Some(v)), _) => *v == 0.0,
        _ => false,
    }
}

/// `expr`, or the literal it stands for when it is a cast of a literal
/// (`CAST('-0.0' AS DOUBLE)`), so zeros written that way are recognized; a NaN comes out as
/// the one canonical NaN (`CAST('-nan' AS DOUBLE)` parses to a negative one, which Arrow
/// orders below every number).
fn folded(expr: Expr) -> Expr {
    let (Expr::Cast(datafusion::logical_expr::Cast { expr: inner, field })
    | Expr::TryCast(datafusion::logical_expr::TryCast { expr: inner, field })) = &expr
    else {
        return expr;
    };
    match inner.as_ref() {
        Expr::Literal(value, _) => match value.cast_to(field.data_type()) {
            Ok(ScalarValue::Float64(Some(v))) if v.is_nan() => {
                Expr::Literal(ScalarValue::Float64(Some(f64::NAN)), None)
            }
            Ok(ScalarValue::Float32(Some(v))) if v.is_nan() => {
                Expr::Literal(ScalarValue::Float32(Some(f32::NAN)), None)
            }
            Ok(value) => Expr::Literal(value, None),
            Err(_) => expr,
        },
        _ => expr,
    }
}

/// Whether `expr` is a call of [`canonical_float`] already.
fn is_canonical(expr: &Expr) -> bool {
    matches!(expr, Expr::ScalarFunction(f) if f.func.name() == CANONICAL_FLOAT)
}

/// `canonical_float(expr)`, unless it is that already or a literal (whose value is what was
/// written; literal zeros and NaNs are handled where they are compared).
fn canonical_of(expr: Expr) -> Expr {
    if is_canonical(&expr) || matches!(expr, Expr::Literal(..)) {
        return expr;
    }
    Expr::ScalarFunction(ScalarFunction::new_udf(canonical_float(), vec![expr]))
}

/// [`canonical_of`], and a float literal as its canonical value (`-0.0` as `0.0`, any NaN
/// as the quiet NaN), for the operands of a comparison or `IN` list whose other side is
/// canonical: a literal `-0.0` kept as written would never equal `canonical_float(e)` of a
/// zero, and two literals are compared by the simplifier in Arrow's total order, where
/// `-0.0 < 0.0`.
fn canonical_operand(expr: Expr) -> Expr {
    match folded(expr) {
        Expr::Literal(ScalarValue::Float64(Some(v)), metadata) => Expr::Literal(
            ScalarValue::Float64(Some(if v.is_nan() { f64::NAN } else { v + 0.0 })),
            metadata,
        ),
        Expr::Literal(ScalarValue::Float32(Some(v)), metadata) => Expr::Literal(
            ScalarValue::Float32(Some(if v.is_nan() { f32::NAN } else { v + 0.0 })),
            metadata,
        ),
        other => canonical_of(other),
    }
}

/// `expr` canonical when it is a float expression under `schema`.
fn canonical_if_float(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    if !is_float(&expr.get_type(schema)?)
        || is_canonical(&expr)
        || matches!(expr, Expr::Literal(..))
    {
        return Ok(Transformed::no(expr));
    }
    Ok(Transformed::yes(canonical_of(expr)))
}

/// Whether `op` compares two values (`=`, `<>`, `<`, `<=`, `>`, `>=`, `IS [NOT] DISTINCT FROM`).
pub(crate) fn is_comparison(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

/// Rewrites the comparisons inside `expr` (see the module doc).
fn comparisons(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    expr.transform_up(|e| match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(op) => {
            comparison(*left, op, *right, schema)
        }
        Expr::InList(list) => in_list(list, schema),
        Expr::InSubquery(mut in_subquery) if is_float(&in_subquery.expr.get_type(schema)?) => {
            // Both sides canonical: the value, and the subquery's one column below it.
            in_subquery.expr = Box::new(canonical_of(*in_subquery.expr));
            in_subquery.subquery.subquery = distinct_input(&in_subquery.subquery.subquery)?.data;
            Ok(Transformed::yes(Expr::InSubquery(in_subquery)))
        }
        Expr::Between(between) if is_float(&between.expr.get_type(schema)?) => {
            // As two comparisons, each rewritten like any other.
            let Between {
                expr,
                negated,
                low,
                high,
            } = between;
            let low = comparison((*expr).clone(), Operator::GtEq, *low, schema)?.data;
            let high = comparison(*expr, Operator::LtEq, *high, schema)?.data;
            let within = low.and(high);
            Ok(Transformed::yes(if negated {
                Expr::Not(Box::new(within))
            } else {
                within
            }))
        }
        other => Ok(Transformed::no(other)),
    })
}

fn comparison(
    left: Expr,
    op: Operator,
    right: Expr,
    schema: &DFSchema,
) -> Result<Transformed<Expr>> {
    let data_type = left.get_type(schema)?;
    if !is_float(&data_type) || !is_float(&right.get_type(schema)?) {
        return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr::new(
            Box::new(left),
            op,
            Box::new(right),
        ))));
    }
    let (left, right) = (folded(left), folded(right));
    // `e = 1.5` (a literal that is neither zero nor NaN) holds for the same values of `e`
    // canonical or not: left as written, so a filter on it keeps `e` itself constant for the
    // optimizer (not `canonical_float(e)`, which DataFusion 54 loses through a filter's
    // embedded projection while it already relied on it for a sort below a merge).
    let plain = |e: &Expr| {
        matches!(
            e,
            Expr::Literal(ScalarValue::Float64(Some(v)), _) if *v != 0.0 && !v.is_nan()
        ) || matches!(
            e,
            Expr::Literal(ScalarValue::Float32(Some(v)), _) if *v != 0.0 && !v.is_nan()
        )
    };
    let equality = matches!(
        op,
        Operator::Eq | Operator::NotEq | Operator::IsDistinctFrom | Operator::IsNotDistinctFrom
    );
    if equality && (plain(&left) || plain(&right)) {
        return Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
            Box::new(left),
            op,
            Box::new(right),
        ))));
    }
    // `e op 0.0`, with the zero on either side.
    let zero_side = match (literal_zero(&left), literal_zero(&right)) {
        (false, true) => Some((left.clone(), op)),
        (true, false) => op.swap().map(|swapped| (right.clone(), swapped)),
        _ => None,
    };
    if let Some((e, op)) = zero_side {
        let both = || vec![zero(&data_type, true), zero(&data_type, false)];
        let rewritten = match op {
            Operator::Eq => Some(e.in_list(both(), false)),
            Operator::NotEq => Some(e.in_list(both(), true)),
            Operator::Lt | Operator::GtEq => Some(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(e),
                op,
                Box::new(zero(&data_type, true)),
            ))),
            Operator::LtEq | Operator::Gt => Some(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(e),
                op,
                Box::new(zero(&data_type, false)),
            ))),
            Operator::IsNotDistinctFrom => Some(e.in_list(both(), false).is_true()),
            Operator::IsDistinctFrom => Some(e.in_list(both(), false).is_not_true()),
            _ => None,
        };
        if let Some(rewritten) = rewritten {
            return Ok(Transformed::yes(rewritten));
        }
    }
    let unchanged = is_canonical(&left) || matches!(left, Expr::Literal(..));
    let unchanged = unchanged && (is_canonical(&right) || matches!(right, Expr::Literal(..)));
    let unchanged = unchanged && !literal_zero(&left) && !literal_zero(&right);
    let out = Expr::BinaryExpr(BinaryExpr::new(
        Box::new(canonical_operand(left)),
        op,
        Box::new(canonical_operand(right)),
    ));
    Ok(if unchanged {
        Transformed::no(out)
    } else {
        Transformed::yes(out)
    })
}

fn literal_sign(item: &Expr) -> Option<bool> {
    match item {
        Expr::Literal(ScalarValue::Float64(Some(v)), _) if *v == 0.0 => Some(v.is_sign_negative()),
        Expr::Literal(ScalarValue::Float32(Some(v)), _) if *v == 0.0 => Some(v.is_sign_negative()),
        _ => None,
    }
}

fn in_list(list: InList, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let data_type = list.expr.get_type(schema)?;
    if !is_float(&data_type) {
        return Ok(Transformed::no(Expr::InList(list)));
    }
    let InList {
        expr,
        mut list,
        negated,
    } = list;
    if list.iter().all(|item| matches!(item, Expr::Literal(..))) {
        // Literals: both zeros where one is listed.
        let signs: Vec<bool> = list.iter().filter_map(literal_sign).collect();
        let missing = match (signs.contains(&true), signs.contains(&false)) {
            (true, false) => Some(false),
            (false, true) => Some(true),
            _ => None,
        };
        if let Some(negative) = missing {
            list.push(zero(&data_type, negative));
        }
        let out = Expr::InList(InList::new(expr, list, negated));
        return Ok(if missing.is_some() {
            Transformed::yes(out)
        } else {
            Transformed::no(out)
        });
    }
    let list = list.into_iter().map(canonical_operand).collect();
    Ok(Transformed::yes(Expr::InList(InList::new(
        Box::new(canonical_of(*expr)),
        list,
        negated,
    ))))
}

fn rewrite_node(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let schema = expression_schema(&plan);
    let plan = map_expressions_keeping_names(plan, |expr| comparisons(expr, &schema))?;
    plan.transform_data(|plan| match plan {
        LogicalPlan::Aggregate(aggregate) => grouping(aggregate, &schema),
        LogicalPlan::Join(join) => join_keys(join, &schema),
        LogicalPlan::Window(window) => window_keys(window, &schema),
        LogicalPlan::Sort(mut sort) => {
            let mut changed = false;
            for key in &mut sort.expr {
                let out = canonical_if_float(key.expr.clone(), &schema)?;
                changed |= out.transformed;
                key.expr = out.data;
            }
            let plan = LogicalPlan::Sort(sort);
            Ok(if changed {
                Transformed::yes(plan)
            } else {
                Transformed::no(plan)
            })
        }
        LogicalPlan::Distinct(Distinct::All(input)) => distinct_input(&input)
            .map(|t| t.update_data(|i| LogicalPlan::Distinct(Distinct::All(i)))),
        LogicalPlan::Filter(filter) if filter.predicate.contains_outer() => {
            correlated_filter(filter)
        }
        other => Ok(Transformed::no(other)),
    })
}

/// Names of the columns [`correlated_filter`] adds, unique within the process.
static NEXT_CANONICAL_COLUMN: AtomicU64 = AtomicU64::new(0);

/// A subquery's filter that reads the outer query (`WHERE t.d = o.d`), with the canonical
/// values of its own float expressions computed as columns below it:
/// `Projection(t.*) ← Filter(__lake_canonical_float_N = canonical_float(outer_ref(o.d)))
/// ← Projection(t.*, canonical_float(t.d) AS __lake_canonical_float_N) ← input`.
///
/// DataFusion decorrelates a scalar subquery over an aggregate (`(SELECT count(*) FROM t
/// WHERE t.d = o.d)`) only when the inner side of each correlated equality is a column or a
/// cast of one (`can_pullup_over_aggregation` in datafusion-optimizer's `decorrelate.rs`): it
/// then groups by that column and joins on it. As a column, the canonical value is what the
/// aggregate groups by, so `-0.0` and `0.0` rows make one group for one outer row; grouping
/// by `t.d` itself and joining on its canonical value would make two. The projection above
/// keeps the filter's schema as it was.
fn correlated_filter(filter: Filter) -> Result<Transformed<LogicalPlan>> {
    let inner_canonical = |e: &Expr| is_canonical(e) && !e.contains_outer() && e.any_column_refs();
    let mut projected = Vec::new();
    let conjuncts = split_conjunction_owned(filter.predicate.clone())
        .into_iter()
        .map(|conjunct| {
            if !conjunct.contains_outer() {
                return Ok(conjunct);
            }
            conjunct
                .transform_down(|e| {
                    if !inner_canonical(&e) {
                        return Ok(Transformed::no(e));
                    }
                    let n = NEXT_CANONICAL_COLUMN.fetch_add(1, Ordering::Relaxed);
                    let name = format!("__lake_canonical_float_{n}");
                    projected.push(e.alias(&name));
                    Ok(Transformed::new(
                        Expr::Column(Column::new_unqualified(name)),
                        true,
                        TreeNodeRecursion::Jump,
                    ))
                })
                .data()
        })
        .collect::<Result<Vec<_>>>()?;
    let Some(predicate) = conjunction(conjuncts).filter(|_| !projected.is_empty()) else {
        return Ok(Transformed::no(LogicalPlan::Filter(filter)));
    };
    let columns: Vec<Expr> = filter
        .input
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let below = Projection::try_new(
        columns.iter().cloned().chain(projected).collect(),
        filter.input,
    )?;
    let filter = Filter::try_new(predicate, Arc::new(LogicalPlan::Projection(below)))?;
    let above = Projection::try_new(columns, Arc::new(LogicalPlan::Filter(filter)))?;
    Ok(Transformed::yes(LogicalPlan::Projection(above)))
}

/// Float grouping keys and float arguments of DISTINCT aggregates, canonical.
fn grouping(aggregate: Aggregate, schema: &DFSchema) -> Result<Transformed<LogicalPlan>> {
    let names = NamePreserver::new_for_projection();
    let mut changed = false;
    let mut group_expr = Vec::with_capacity(aggregate.group_expr.len());
    for expr in aggregate.group_expr {
        if matches!(expr, Expr::GroupingSet(_)) {
            group_expr.push(expr);
            continue;
        }
        let saved = names.save(&expr);
        let out = canonical_if_float(expr, schema)?;
        changed |= out.transformed;
        group_expr.push(if out.transformed {
            saved.restore(out.data)
        } else {
            out.data
        });
    }
    let mut aggr_expr = Vec::with_capacity(aggregate.aggr_expr.len());
    for expr in aggregate.aggr_expr {
        let saved = names.save(&expr);
        let out = expr.transform_up(|e| match e {
            Expr::AggregateFunction(mut f) if f.params.distinct => {
                let mut any = false;
                let args = std::mem::take(&mut f.params.args);
                f.params.args = args
                    .into_iter()
                    .map(|arg| {
                        let out = canonical_if_float(arg, schema)?;
                        any |= out.transformed;
                        Ok(out.data)
                    })
                    .collect::<Result<_>>()?;
                let out = Expr::AggregateFunction(f);
                Ok(if any {
                    Transformed::yes(out)
                } else {
                    Transformed::no(out)
                })
            }
            other => Ok(Transformed::no(other)),
        })?;
        changed |= out.transformed;
        aggr_expr.push(if out.transformed {
            saved.restore(out.data)
        } else {
            out.data
        });
    }
    let plan = LogicalPlan::Aggregate(Aggregate::try_new_with_schema(
        aggregate.input,
        group_expr,
        aggr_expr,
        aggregate.schema,
    )?);
    Ok(if changed {
        Transformed::yes(plan)
    } else {
        Transformed::no(plan)
    })
}

/// Float equi-join keys, canonical on both sides.
fn join_keys(mut join: Join, schema: &DFSchema) -> Result<Transformed<LogicalPlan>> {
    let mut changed = false;
    let mut on = Vec::with_capacity(join.on.len());
    for (left, right) in join.on {
        let left = canonical_if_float(left, schema)?;
        let right = canonical_if_float(right, schema)?;
        changed |= left.transformed || right.transformed;
        on.push((left.data, right.data));
    }
    join.on = on;
    let plan = LogicalPlan::Join(join);
    Ok(if changed {
        Transformed::yes(plan)
    } else {
        Transformed::no(plan)
    })
}

/// Float `PARTITION BY` and `ORDER BY` keys of window functions, canonical.
fn window_keys(window: Window, schema: &DFSchema) -> Result<Transformed<LogicalPlan>> {
    let names = NamePreserver::new_for_projection();
    let mut changed = false;
    let mut window_expr = Vec::with_capacity(window.window_expr.len());
    for expr in window.window_expr {
        let saved = names.save(&expr);
        let out = expr.transform_up(|e| match e {
            Expr::WindowFunction(mut f) => {
                let mut any = false;
                let keys = std::mem::take(&mut f.params.partition_by);
                f.params.partition_by = keys
                    .into_iter()
                    .map(|key| {
                        let out = canonical_if_float(key, schema)?;
                        any |= out.transformed;
                        Ok(out.data)
                    })
                    .collect::<Result<_>>()?;
                let order = std::mem::take(&mut f.params.order_by);
                f.params.order_by = order
                    .into_iter()
                    .map(|sort| {
                        let out = canonical_if_float(sort.expr.clone(), schema)?;
                        any |= out.transformed;
                        Ok(Sort {
                            expr: out.data,
                            ..sort
                        })
                    })
                    .collect::<Result<_>>()?;
                let out = Expr::WindowFunction(f);
                Ok(if any {
                    Transformed::yes(out)
                } else {
                    Transformed::no(out)
                })
            }
            other => Ok(Transformed::no(other)),
        })?;
        changed |= out.transformed;
        window_expr.push(if out.transformed {
            saved.restore(out.data)
        } else {
            out.data
        });
    }
    let plan = LogicalPlan::Window(Window::try_new_with_schema(
        window_expr,
        window.input,
        window.schema,
    )?);
    Ok(if changed {
        Transformed::yes(plan)
    } else {
        Transformed::no(plan)
    })
}

/// `input` with its float columns canonical (same names), for a `DISTINCT` above it or an
/// `IN` that compares with it.
fn distinct_input(input: &Arc<LogicalPlan>) -> Result<Transformed<Arc<LogicalPlan>>> {
    let schema = input.schema();
    if !schema.fields().iter().any(|f| is_float(f.data_type())) {
        return Ok(Transformed::no(input.clone()));
    }
    let exprs = schema
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::new(qualifier.cloned(), field.name()));
            if is_float(field.data_type()) {
                canonical_of(column).alias_qualified(qualifier.cloned(), field.name())
            } else {
                column
            }
        })
        .collect();
    let projection = Projection::try_new(exprs, input.clone())?;
    Ok(Transformed::yes(Arc::new(LogicalPlan::Projection(
        projection,
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, Float64Array, RecordBatch, StringArray};
    use arrow::datatypes::{Field, Schema};
    use datafusion::datasource::MemTable;
    use datafusion::prelude::{SessionConfig, SessionContext};

    /// A session with [`CanonicalFloats`] that plans for two partitions, so a float value
    /// and its other zero or NaN can meet in different partitions.
    fn two_partition_context() -> SessionContext {
        let config = SessionConfig::new().with_target_partitions(2);
        let ctx = SessionContext::new_with_config(config);
        ctx.add_analyzer_rule(Arc::new(CanonicalFloats));
        ctx
    }

    /// A DISTINCT float column that a filter makes constant, ordered by over two
    /// partitions (the case the differential suite's generated queries found on an Iceberg
    /// table): it plans and gives the rows DuckDB gives. And DISTINCT floats ordered with a
    /// limit keep one NaN: the ORDER BY key stays `canonical_float(d)` although `d` is
    /// canonical already (ordering by `d` itself lets DataFusion 54 fold the limit into a
    /// top-k aggregation that keeps NaNs of two partitions apart).
    #[tokio::test]
    async fn ordering_by_a_distinct_float_that_a_filter_makes_constant_plans_and_runs() {
        let ctx = two_partition_context();
        let schema = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Float64, true),
        ]));
        let batch = |s: Vec<&str>, d: Vec<f64>| {
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(arrow::array::Int64Array::from_iter_values(
                        0..s.len() as i64,
                    )),
                    Arc::new(StringArray::from(s)),
                    Arc::new(Float64Array::from(d)),
                ],
            )
            .expect("batch")
        };
        let partitions = vec![
            vec![batch(vec!["a", "b", "d"], vec![-0.0, 1.0, 0.0])],
            vec![batch(vec!["c", "a", "b"], vec![0.0, -0.0, 2.0])],
        ];
        let table = MemTable::try_new(schema.clone(), partitions).expect("table");
        ctx.register_table("t", Arc::new(table)).expect("register");
        for (sql, expected) in [
            (
                "SELECT DISTINCT s, i FROM t WHERE ((i <= 4 OR s >= s) AND i = 1) ORDER BY i DESC NULLS FIRST, s DESC LIMIT 5",
                vec!["b", "a"],
            ),
            (
                "SELECT DISTINCT s, d FROM t WHERE d = CAST('-0.0' AS DOUBLE) ORDER BY d DESC, s DESC LIMIT 2 OFFSET 1",
                vec!["c", "a"],
            ),
            (
                "SELECT DISTINCT s, d FROM t WHERE ((i <= 4 OR s >= s) AND d = CAST('-0.0' AS DOUBLE)) ORDER BY d DESC NULLS FIRST, s DESC LIMIT 5 OFFSET 1",
                vec!["c", "a"],
            ),
            (
                "SELECT DISTINCT s, d FROM t WHERE ((i <= 4 OR s >= s) AND d = 2.0) ORDER BY d DESC, s DESC LIMIT 5",
                vec!["b"],
            ),
            (
                "SELECT s, d FROM t WHERE ((i <= 4 OR s >= s) AND d = 1.0) ORDER BY d DESC, s DESC LIMIT 5",
                vec!["b"],
            ),
            (
                "SELECT s, d FROM t WHERE ((i <= 4 OR s >= s) AND d = CAST('-0.0' AS DOUBLE)) ORDER BY d DESC, s DESC LIMIT 5",
                vec!["d", "c", "a", "a"],
            ),
            (
                "SELECT s, count(*) FROM t WHERE ((i <= 4 OR s >= s) AND d = CAST('-0.0' AS DOUBLE)) GROUP BY s, d ORDER BY d, s LIMIT 5",
                vec!["a", "c", "d"],
            ),
            (
                "SELECT * FROM (SELECT DISTINCT s, d FROM t WHERE ((i <= 4 OR s >= s) AND d = CAST('-0.0' AS DOUBLE))) AS u ORDER BY d DESC, s DESC LIMIT 5",
                vec!["d", "c", "a"],
            ),
            (
                "SELECT s FROM t WHERE d < CAST('-nan' AS DOUBLE) ORDER BY s",
                vec!["a", "a", "b", "b", "c", "d"],
            ),
            (
                "SELECT s FROM t WHERE d = CAST('-nan' AS DOUBLE) OR d > CAST('nan' AS DOUBLE)",
                vec![],
            ),
            (
                "SELECT s, d FROM t WHERE d = CAST('-0.0' AS DOUBLE) GROUP BY s, d ORDER BY d, s LIMIT 3",
                vec!["a", "c", "d"],
            ),
        ] {
            let batches = ctx
                .sql(sql)
                .await
                .expect("plans")
                .collect()
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            let names: Vec<String> = batches
                .iter()
                .flat_map(|b| {
                    let s: &StringArray = b.column(0).as_string::<i32>();
                    s.iter()
                        .map(|v| v.unwrap_or("").to_string())
                        .collect::<Vec<_>>()
                })
                .collect();
            assert_eq!(names, expected, "{sql}");
        }
        let negative_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
        let nans = MemTable::try_new(
            schema.clone(),
            vec![
                vec![batch(vec!["a", "b"], vec![f64::NAN, 1.0])],
                vec![batch(vec!["c", "d"], vec![negative_nan, -0.0])],
            ],
        )
        .expect("table");
        ctx.register_table("nans", Arc::new(nans))
            .expect("register");
        let rows = ctx
            .sql("SELECT DISTINCT d FROM nans ORDER BY d LIMIT 12")
            .await
            .expect("plans")
            .collect()
            .await
            .expect("runs");
        let values: Vec<String> = rows
            .iter()
            .flat_map(|b| {
                let d: &Float64Array = b.column(0).as_primitive();
                d.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(values, ["Some(0.0)", "Some(1.0)", "Some(NaN)"]);
    }

    /// A scalar subquery over an aggregate, correlated on floats, is decorrelated (it was
    /// refused: DataFusion pulls a correlation above an aggregate only from a column), and
    /// `-0.0` and `0.0` rows, in two partitions, count as one value for one outer row: the
    /// aggregate groups by the canonical value, not by the column.
    #[tokio::test]
    async fn a_scalar_subquery_correlated_on_floats_counts_both_zeros_for_each_outer_row() {
        let ctx = two_partition_context();
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("d", DataType::Float64, true),
        ]));
        let batch = |k: Vec<i64>, d: Vec<f64>| {
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(arrow::array::Int64Array::from(k)),
                    Arc::new(Float64Array::from(d)),
                ],
            )
            .expect("batch")
        };
        let inner = vec![
            vec![batch(vec![1, 2, 3], vec![-0.0, 1.0, 0.0])],
            vec![batch(vec![4, 5, 6], vec![0.0, -0.0, f64::NAN])],
        ];
        let outer = vec![vec![batch(
            vec![1, 2, 3, 4, 5],
            vec![0.0, -0.0, 1.0, 5.0, -f64::NAN],
        )]];
        for (name, partitions) in [("t", inner), ("o", outer)] {
            let table = MemTable::try_new(schema.clone(), partitions).expect("table");
            ctx.register_table(name, Arc::new(table)).expect("register");
        }
        for (sql, expected) in [
            (
                "SELECT o.k, (SELECT count(*) FROM t WHERE t.d = o.d) FROM o ORDER BY o.k",
                vec![
                    (1, Some(4)),
                    (2, Some(4)),
                    (3, Some(1)),
                    (4, Some(0)),
                    (5, Some(1)),
                ],
            ),
            (
                "SELECT o.k, (SELECT max(t.k) FROM t WHERE t.d = o.d AND t.k < 5) FROM o ORDER BY o.k",
                vec![
                    (1, Some(4)),
                    (2, Some(4)),
                    (3, Some(2)),
                    (4, None),
                    (5, None),
                ],
            ),
        ] {
            let batches = ctx
                .sql(sql)
                .await
                .expect("plans")
                .collect()
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            let rows: Vec<(i64, Option<i64>)> = batches
                .iter()
                .flat_map(|b| {
                    let keys = b.column(0).as_primitive::<arrow::datatypes::Int64Type>();
                    let values = b.column(1).as_primitive::<arrow::datatypes::Int64Type>();
                    (0..b.num_rows())
                        .map(|i| (keys.value(i), (!values.is_null(i)).then(|| values.value(i))))
                        .collect::<Vec<_>>()
                })
                .collect();
            assert_eq!(rows, expected, "{sql}");
        }
    }

    #[test]
    fn zeros_and_nans_become_one_value_and_the_rest_stays() {
        let negative_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
        let input: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(-0.0),
            Some(0.0),
            Some(negative_nan),
            Some(f64::NAN),
            None,
            Some(-1.5),
            Some(f64::NEG_INFINITY),
        ]));
        let out = canonical::<Float64Type>(&input, f64::NAN);
        let out: &Float64Array = out.as_primitive();
        let bits: Vec<Option<u64>> = out.iter().map(|v| v.map(f64::to_bits)).collect();
        assert_eq!(
            bits,
            vec![
                Some(0.0f64.to_bits()),
                Some(0.0f64.to_bits()),
                Some(f64::NAN.to_bits()),
                Some(f64::NAN.to_bits()),
                None,
                Some((-1.5f64).to_bits()),
                Some(f64::NEG_INFINITY.to_bits()),
            ]
        );
    }
}
