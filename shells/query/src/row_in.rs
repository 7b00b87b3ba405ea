//! Row-value `IN (subquery)`: `(a, b) [NOT] IN (SELECT x, y FROM …)`, which DataFusion 54's
//! planner refuses ("The subquery should only return one column"), rewritten before planning
//! into `EXISTS` subqueries over the subquery's rows.
//!
//! The SQL standard (ISO/IEC 9075-2, 8.4 `<in predicate>`) reads `r IN (q)` as
//! `r = ANY (q)`, and a row comparison `(a, b) = (x, y)` as `a = x AND b = y` (8.2
//! `<comparison predicate>`): TRUE when some row of `q` equals `r`, NULL when none does but
//! some comparison is NULL, FALSE otherwise (PostgreSQL and DuckDB answer the same). So
//!
//! ```text
//! EXISTS (SELECT 1 FROM (q) AS __lake_row_in (__lake_row_in_1, __lake_row_in_2)
//!         WHERE __lake_row_in_1 = a AND __lake_row_in_2 = b)
//! OR (EXISTS (… WHERE (__lake_row_in_1 = a AND __lake_row_in_2 = b) IS NULL) AND NULL)
//! ```
//!
//! (`NOT IN` is its negation, `NOT EXISTS (…) AND (NOT EXISTS (…) OR NULL)`): the first
//! `EXISTS` gives TRUE, the second turns FALSE into NULL. Each subquery is one mark join
//! (the same answer written `CASE WHEN … THEN TRUE WHEN … THEN NULL ELSE FALSE END` is
//! simplified into three). Where the predicate is one of a `WHERE` clause's top-level
//! conjuncts and not negated, NULL and FALSE both drop the row, so the first `EXISTS` alone
//! is the answer, and DataFusion plans it as a semi join.
//!
//! The subquery's columns get names of their own, so that `a` and `b`, which name the outer
//! query's columns, cannot be captured by a column of the subquery inside the `EXISTS`.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, Query, SelectItem, SetExpr, Value, Visit, Visitor,
};
use datafusion::sql::sqlparser::parser::Parser;

use crate::QueryError;
use crate::sql::LakeDialect;

/// The derived table's alias, and the prefix of its column names.
const ALIAS: &str = "__lake_row_in";

/// Rewrites the row-value `IN (subquery)` predicates among the top-level conjuncts of the
/// `WHERE` clauses of `query`'s body (each `SELECT` of a set operation) to a plain `EXISTS`
/// (see the module docs). Nested queries are left to their own visit.
///
/// # Errors
/// As [`rewrite_predicate`].
pub(crate) fn rewrite_where_clauses(query: &mut Query) -> Result<(), QueryError> {
    rewrite_body(&mut query.body)
}

fn rewrite_body(body: &mut SetExpr) -> Result<(), QueryError> {
    match body {
        SetExpr::Select(select) => match &mut select.selection {
            Some(selection) => rewrite_conjuncts(selection),
            None => Ok(()),
        },
        SetExpr::SetOperation { left, right, .. } => {
            rewrite_body(left)?;
            rewrite_body(right)
        }
        _ => Ok(()),
    }
}

fn rewrite_conjuncts(expr: &mut Expr) -> Result<(), QueryError> {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            rewrite_conjuncts(left)?;
            rewrite_conjuncts(right)
        }
        Expr::Nested(inner) => rewrite_conjuncts(inner),
        Expr::InSubquery {
            expr: row,
            subquery,
            negated: false,
        } => {
            // With a `?` in it, the expression rewrite does it after the placeholders are
            // numbered: the EXISTS puts the subquery before the row, which would renumber
            // them.
            if let Expr::Tuple(items) = row.as_ref()
                && !has_positional_placeholder(items, subquery)
            {
                check_arity(items, subquery)?;
                *expr = parse(&exists(items, subquery, false))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether `items` or `subquery` hold a `?` placeholder, which is numbered in order of
/// appearance.
fn has_positional_placeholder(items: &[Expr], subquery: &Query) -> bool {
    struct Finder;
    impl Visitor for Finder {
        type Break = ();
        fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
            match expr {
                Expr::Value(v) if matches!(&v.value, Value::Placeholder(p) if p == "?") => {
                    ControlFlow::Break(())
                }
                _ => ControlFlow::Continue(()),
            }
        }
    }
    items.iter().any(|item| item.visit(&mut Finder).is_break())
        || subquery.visit(&mut Finder).is_break()
}

/// Refuses a row of `items` compared with a subquery of another number of columns, where
/// the subquery's select list says how many it has (not for `SELECT *`).
fn check_arity(items: &[Expr], subquery: &Query) -> Result<(), QueryError> {
    match columns(&subquery.body) {
        Some(n) if n != items.len() => Err(QueryError::InvalidArgument(format!(
            "row-value IN compares a row of {} values with a subquery of {n} columns; they \
             must have as many",
            items.len()
        ))),
        _ => Ok(()),
    }
}

/// How many columns `body` gives, where its text says (`None` for a wildcard).
fn columns(body: &SetExpr) -> Option<usize> {
    match body {
        SetExpr::Select(select) => select
            .projection
            .iter()
            .all(|item| {
                matches!(
                    item,
                    SelectItem::UnnamedExpr(_) | SelectItem::ExprWithAlias { .. }
                )
            })
            .then_some(select.projection.len()),
        SetExpr::SetOperation { left, .. } => columns(left),
        SetExpr::Query(query) => columns(&query.body),
        SetExpr::Values(values) => values.rows.first().map(|row| row.content.len()),
        _ => None,
    }
}

/// `expr` rewritten in place when it is a row-value `[NOT] IN (subquery)` anywhere else (a
/// select list, under `OR` or `NOT`, a join condition): the three-valued form of the
/// module docs.
///
/// # Errors
/// [`QueryError::InvalidArgument`] when the subquery's select list has another number of
/// columns than the row has values; [`QueryError::TooLarge`] as [`parse`].
pub(crate) fn rewrite_predicate(expr: &mut Expr) -> Result<(), QueryError> {
    let Expr::InSubquery {
        expr: row,
        subquery,
        negated,
    } = expr
    else {
        return Ok(());
    };
    let Expr::Tuple(items) = row.as_ref() else {
        return Ok(());
    };
    check_arity(items, subquery)?;
    let (equal, unknown) = (
        exists(items, subquery, false),
        exists(items, subquery, true),
    );
    // NOT IN as the negation pushed inside, so that the text has no `NOT (…)`, which the
    // parser may read back as a call of a function `not` once nested.
    let text = if *negated {
        format!("(NOT {equal} AND (NOT {unknown} OR NULL))")
    } else {
        format!("({equal} OR ({unknown} AND NULL))")
    };
    *expr = parse(&text)?;
    Ok(())
}

/// `EXISTS` over the rows of `subquery` equal to `items` (`unknown`: over the rows whose
/// comparison with them is NULL).
fn exists(items: &[Expr], subquery: &Query, unknown: bool) -> String {
    let columns = (1..=items.len())
        .map(|i| format!("{ALIAS}_{i}"))
        .collect::<Vec<_>>();
    let equal = items
        .iter()
        .zip(&columns)
        .map(|(item, column)| format!("{ALIAS}.{column} = ({item})"))
        .collect::<Vec<_>>()
        .join(" AND ");
    let condition = if unknown {
        format!("({equal}) IS NULL")
    } else {
        equal
    };
    format!(
        "EXISTS (SELECT 1 FROM ({subquery}) AS {ALIAS} ({}) WHERE {condition})",
        columns.join(", ")
    )
}

/// `text`, the rewrite of a predicate that parsed, as an expression of Lake's dialect.
///
/// The parser's recursion limit also bounds the rewrite's size: each level copies the
/// subquery inside it twice, and the parser takes at most six levels of row-value INs
/// nested in their subqueries, so a statement becomes at most 64 copies of itself, each
/// with a few hundred bytes of `EXISTS` around it.
///
/// # Errors
/// [`QueryError::TooLarge`] when it is nested past the parser's recursion limit (the
/// rewrite is deeper than the predicate it replaces).
fn parse(text: &str) -> Result<Expr, QueryError> {
    Parser::new(&LakeDialect::default())
        .try_with_sql(text)
        .and_then(|mut parser| parser.parse_expr())
        .map_err(|e| {
            QueryError::TooLarge(format!(
                "row-value IN subqueries nested this deep cannot be planned ({e}); nest fewer \
                 of them (or load the subquery's rows into a table)"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(text: &str) -> Expr {
        parse(text).expect("parses")
    }

    fn query_where(sql: &str) -> String {
        let mut query = match Parser::new(&LakeDialect::default())
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_query())
        {
            Ok(query) => *query,
            Err(e) => panic!("{e}"),
        };
        rewrite_where_clauses(&mut query).expect("rewrites");
        query.to_string()
    }

    #[test]
    fn a_top_level_conjunct_becomes_one_exists() {
        let sql = query_where("SELECT id FROM t WHERE g = 1 AND (a, b) IN (SELECT x, y FROM u)");
        assert_eq!(
            sql,
            "SELECT id FROM t WHERE g = 1 AND EXISTS (SELECT 1 FROM (SELECT x, y FROM u) AS \
             __lake_row_in (__lake_row_in_1, __lake_row_in_2) WHERE \
             __lake_row_in.__lake_row_in_1 = (a) AND __lake_row_in.__lake_row_in_2 = (b))"
        );
    }

    #[test]
    fn negated_nested_or_selected_row_values_keep_three_values() {
        // Under OR and NOT, and NOT IN, in a WHERE clause: not a top-level positive conjunct.
        for sql in [
            "SELECT id FROM t WHERE (a, b) NOT IN (SELECT x, y FROM u)",
            "SELECT id FROM t WHERE g = 1 OR (a, b) IN (SELECT x, y FROM u)",
        ] {
            assert_eq!(query_where(sql), sql, "left for the expression rewrite");
        }
        let mut predicate = expr("(a, b) NOT IN (SELECT x, y FROM u)");
        rewrite_predicate(&mut predicate).expect("rewrites");
        let text = predicate.to_string();
        let select = "SELECT 1 FROM (SELECT x, y FROM u) AS __lake_row_in (__lake_row_in_1, \
                      __lake_row_in_2) WHERE";
        let equal = "__lake_row_in.__lake_row_in_1 = (a) AND __lake_row_in.__lake_row_in_2 = (b)";
        assert_eq!(
            text,
            format!(
                "(NOT EXISTS ({select} {equal}) AND (NOT EXISTS ({select} ({equal}) IS NULL) OR NULL))"
            )
        );
    }

    #[test]
    fn single_values_and_lists_are_left_alone() {
        for text in [
            "a IN (SELECT x FROM u)",
            "(a, b) IN ((1, 2), (3, 4))",
            "(a, b) = (1, 2)",
        ] {
            let mut e = expr(text);
            rewrite_predicate(&mut e).expect("nothing to rewrite");
            assert_eq!(e, expr(text));
        }
        let sql = "SELECT id FROM t WHERE a IN (SELECT x FROM u)";
        assert_eq!(query_where(sql), sql);
    }

    #[test]
    fn a_row_and_a_subquery_of_other_widths_are_refused() {
        let mut predicate = expr("(a, b) NOT IN (SELECT x, y, z FROM u)");
        let error = rewrite_predicate(&mut predicate).unwrap_err().to_string();
        assert!(
            error.contains("a row of 2 values with a subquery of 3 columns"),
            "{error}"
        );
        let mut query = match Parser::new(&LakeDialect::default())
            .try_with_sql(
                "SELECT 1 FROM t WHERE (a, b, c) IN (SELECT x FROM u UNION SELECT y FROM v)",
            )
            .and_then(|mut p| p.parse_query())
        {
            Ok(query) => *query,
            Err(e) => panic!("{e}"),
        };
        assert!(rewrite_where_clauses(&mut query).is_err());
        // A wildcard's width is the planner's to check.
        let mut star = expr("(a, b) IN (SELECT * FROM u)");
        rewrite_predicate(&mut star).expect("rewrites");
        assert!(matches!(star, Expr::Nested(_)), "{star}");
    }

    #[test]
    fn a_positional_placeholder_keeps_its_number() {
        // `?` is numbered in order of appearance after this rewrite; the WHERE form would put
        // the subquery's `?` first, so the row is left to the expression rewrite.
        let sql = "SELECT id FROM t WHERE (a, ?) IN (SELECT x, y FROM u WHERE z = ?)";
        assert_eq!(query_where(sql), sql);
        let numbered = "SELECT id FROM t WHERE (a, $1) IN (SELECT x, y FROM u WHERE z = $2)";
        assert_ne!(
            query_where(numbered),
            numbered,
            "numbered ones are rewritten"
        );
    }

    #[test]
    fn nesting_is_bounded_by_the_parser_and_refused_past_it() {
        // Each level copies the one inside it twice. On a stack as large as the server's
        // workers' (`WORKER_STACK_BYTES`), six levels are rewritten and deeper ones
        // refused by name, never a crash; a rewritten statement is at most 64 copies of the
        // original with the EXISTS around each.
        let nested = |levels: usize| {
            let mut sql = "SELECT 1, 2".to_string();
            for _ in 0..levels {
                sql = format!("SELECT x, y FROM t WHERE (x, y) NOT IN ({sql})");
            }
            crate::sql::parse(&sql).map(|parsed| (sql.len(), parsed.statement.to_string().len()))
        };
        let results = std::thread::Builder::new()
            .stack_size(crate::sql::WORKER_STACK_BYTES)
            .spawn(move || (1..=40).map(nested).collect::<Vec<_>>())
            .expect("thread")
            .join()
            .expect("no panic");
        for (levels, result) in (1..=40).zip(&results) {
            match result {
                Ok((before, after)) => {
                    assert!(levels <= 6, "{levels} levels were rewritten");
                    assert!(*after <= 64 * (before + 400), "{before} -> {after} bytes");
                }
                Err(e) => {
                    assert!(levels > 6, "{levels} levels refused: {e}");
                    assert!(
                        matches!(e, QueryError::TooLarge(m) if m.contains("nested this deep"))
                            || e.to_string().contains("recursion limit"),
                        "{e}"
                    );
                }
            }
        }
    }
}
