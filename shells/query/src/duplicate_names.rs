//! Result columns that share a name, as PostgreSQL returns them: `SELECT a, a FROM t`,
//! `SELECT 1, 1`, `SELECT count(*), count(*) FROM t`, `SELECT a AS x, b AS x FROM t`.
//!
//! DataFusion 54's SQL planner requires the expressions of one `SELECT` list to have
//! different names and refuses the statement otherwise ("Projections require unique
//! expression names", apache/datafusion#6543; a fix landed upstream after DataFusion 54,
//! apache/datafusion#21126). Where a statement is refused for that, [`plan`] plans it again
//! with each repeated item renamed `<name>` + [`MARK`] + `<its number>` inside the plan, and
//! [`shown`] gives the name a client sees, which [`crate::engine::wire_schema`] announces and
//! streams: two columns both named `a`. A column that repeats a name inside a subquery
//! stays selectable by `*` (`SELECT * FROM (SELECT a, a FROM t) s` returns both); a
//! reference to the name reads the first. A table cannot be created with two columns of
//! one name ([`crate::engine::table_schema`] compares the shown names).
//!
//! An item's name is its alias, or its column's for a column reference (`a` for `t.a`);
//! other expressions are named by DataFusion (`Int64(1)` for `1`, `count(*)`), which a first
//! planning of a copy of the statement tells, with those items given numbered names. The
//! second planning renames only the items whose name an earlier item of the same `SELECT`
//! list has. Statements DataFusion accepts are planned once, as they are.

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result, SchemaError};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::sql::parser::Statement;
use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, Ident, Select, SelectItem, VisitorMut};

use crate::sql::visit_statement_mut;

/// Separates the name a client sees from the number that keeps an item's name unique in
/// the plan: U+001F, the ASCII unit separator, which no name a client means to show holds.
pub const MARK: char = '\u{1f}';

/// The name a client sees for a column named `name` in a plan: `name` up to [`MARK`].
pub fn shown(name: &str) -> &str {
    name.split(MARK).next().unwrap_or(name)
}

/// Whether `error` is DataFusion's refusal of a `SELECT` list with a repeated name: the
/// planner's "require unique expression names", or the schema's "qualified field name t.a
/// and unqualified field name a which would be ambiguous" (`SELECT a, b AS a FROM t`).
pub fn is_refusal(error: &DataFusionError) -> bool {
    match error.find_root() {
        DataFusionError::Plan(m) => m.contains("require unique expression names"),
        DataFusionError::SchemaError(e, _) => {
            matches!(e.as_ref(), SchemaError::AmbiguousReference { .. })
        }
        _ => false,
    }
}

/// Plans `statement`, which DataFusion refused for a repeated name in a `SELECT` list, with
/// each repeated item renamed (see the module docs).
///
/// # Errors
/// The planner's errors for the renamed statement; `refusal` (the original error) when the
/// numbered copy cannot be planned to find the names.
pub async fn plan(
    state: &SessionState,
    statement: Statement,
    refusal: DataFusionError,
) -> Result<LogicalPlan> {
    let mut numbered = statement.clone();
    visit_statement_mut(
        &mut numbered,
        &mut Renamer {
            numbering: true,
            next: 0,
            names: BTreeMap::new(),
        },
    );
    let Ok(plan) = state.statement_to_plan(numbered).await else {
        return Err(refusal);
    };
    let names = item_names(&plan)?;
    let mut renamed = statement;
    visit_statement_mut(
        &mut renamed,
        &mut Renamer {
            numbering: false,
            next: 0,
            names,
        },
    );
    state.statement_to_plan(renamed).await
}

/// The numbered name of item `n` in the first planning.
fn numbered(n: usize) -> String {
    format!("{MARK}{n}")
}

/// The names of the numbered items in `plan` (item number → the name DataFusion gives the
/// item's expression: its column's name for a column, else its display).
fn item_names(plan: &LogicalPlan) -> Result<BTreeMap<usize, String>> {
    let mut names = BTreeMap::new();
    plan.apply_with_subqueries(|node| {
        for expr in node.expressions() {
            expr.apply(|e| {
                if let Expr::Alias(alias) = e
                    && let Some(n) = alias.name.strip_prefix(MARK)
                    && let Ok(n) = n.parse::<usize>()
                {
                    names
                        .entry(n)
                        .or_insert_with(|| alias.expr.qualified_name().1);
                }
                Ok(TreeNodeRecursion::Continue)
            })?;
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(names)
}

/// Renames the `SELECT` list items whose name an earlier item of their list has to
/// `<name>` + [`MARK`] + `<n>`. Items with an expression (named or not) are numbered `n` in
/// the order the visitor meets them, the same in both plannings. An item's name is its
/// alias, else its column's name for a column reference, else `names[n]` (the first
/// planning's finding); in the first planning (`numbering`) an item of no known name gets
/// its numbered name instead, and counts as no repeat.
struct Renamer {
    numbering: bool,
    next: usize,
    names: BTreeMap<usize, String>,
}

impl Renamer {
    /// The alias of item `n` (`expr`, named `alias` as written); `seen` holds the names of
    /// the list's earlier items.
    fn alias(
        &self,
        n: usize,
        expr: &SqlExpr,
        alias: Option<Ident>,
        seen: &mut HashSet<String>,
    ) -> Option<Ident> {
        let name = match (&alias, expr) {
            (Some(alias), _) => normalized(alias),
            (None, SqlExpr::Identifier(column)) => normalized(column),
            (None, SqlExpr::CompoundIdentifier(parts)) if !parts.is_empty() => {
                normalized(&parts[parts.len() - 1])
            }
            (None, _) => match self.names.get(&n) {
                Some(name) => name.clone(),
                None if self.numbering => return Some(quoted(numbered(n))),
                None => return None,
            },
        };
        if seen.insert(name.clone()) {
            alias
        } else {
            Some(quoted(format!("{name}{MARK}{n}")))
        }
    }
}

impl VisitorMut for Renamer {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        let mut seen = HashSet::new();
        for item in &mut select.projection {
            let (expr, alias) =
                match std::mem::replace(item, SelectItem::Wildcard(Default::default())) {
                    SelectItem::UnnamedExpr(expr) => (expr, None),
                    SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias)),
                    other => {
                        *item = other;
                        continue;
                    }
                };
            let n = self.next;
            self.next += 1;
            *item = match self.alias(n, &expr, alias, &mut seen) {
                Some(alias) => SelectItem::ExprWithAlias { expr, alias },
                None => SelectItem::UnnamedExpr(expr),
            };
        }
        ControlFlow::Continue(())
    }
}

fn quoted(name: String) -> Ident {
    Ident::with_quote('"', name)
}

/// An alias as DataFusion names its column: unquoted identifiers in lower case.
fn normalized(alias: &Ident) -> String {
    match alias.quote_style {
        Some(_) => alias.value.clone(),
        None => alias.value.to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionContext;

    /// The names a client sees for `sql` over table `t (a BIGINT, b BIGINT)` holding
    /// (1, 10) and (2, 20), and its rows.
    async fn answer(sql: &str) -> Result<(Vec<String>, Vec<Vec<i64>>)> {
        let ctx = SessionContext::new();
        ctx.sql("CREATE TABLE t (a BIGINT, b BIGINT) AS VALUES (1, 10), (2, 20)")
            .await?
            .collect()
            .await?;
        let state = ctx.state();
        let statement = state.sql_to_statement(sql, &datafusion::config::Dialect::Generic)?;
        // Each case is one DataFusion refuses on its own.
        let plan = match state.statement_to_plan(statement.clone()).await {
            Err(e) if is_refusal(&e) => plan(&state, statement, e).await?,
            Err(e) => return Err(e),
            Ok(_) => panic!("DataFusion planned {sql} without renaming"),
        };
        let names = crate::engine::wire_schema(plan.schema().as_arrow())
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let batches = ctx.execute_logical_plan(plan).await?.collect().await?;
        let mut rows = Vec::new();
        for batch in batches {
            for row in 0..batch.num_rows() {
                rows.push(
                    batch
                        .columns()
                        .iter()
                        .map(|c| {
                            let c = arrow::compute::cast(c, &arrow::datatypes::DataType::Int64)?;
                            Ok(
                                arrow::array::AsArray::as_primitive::<arrow::datatypes::Int64Type>(
                                    &c,
                                )
                                .value(row),
                            )
                        })
                        .collect::<Result<Vec<i64>>>()?,
                );
            }
        }
        Ok((names, rows))
    }

    /// A statement, the names a client sees and the rows.
    type Case = (&'static str, &'static [&'static str], Vec<Vec<i64>>);

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[tokio::test]
    async fn a_repeated_name_is_shown_for_each_column_it_names() -> Result<()> {
        let cases: [Case; 8] = [
            (
                "SELECT a, a FROM t ORDER BY a",
                &["a", "a"],
                vec![vec![1, 1], vec![2, 2]],
            ),
            ("SELECT 1, 1", &["Int64(1)", "Int64(1)"], vec![vec![1, 1]]),
            (
                "SELECT a AS x, b AS x FROM t ORDER BY 1",
                &["x", "x"],
                vec![vec![1, 10], vec![2, 20]],
            ),
            (
                "SELECT count(*), sum(b), count(*) FROM t",
                &["count(*)", "sum(t.b)", "count(*)"],
                vec![vec![2, 30, 2]],
            ),
            (
                "SELECT a, b AS a, a + 1 FROM t WHERE a = 2",
                &["a", "a", "t.a + Int64(1)"],
                vec![vec![2, 20, 3]],
            ),
            (
                "SELECT * FROM (SELECT b, b FROM t) s ORDER BY 1",
                &["b", "b"],
                vec![vec![10, 10], vec![20, 20]],
            ),
            (
                "SELECT a, a FROM t UNION ALL SELECT b, a FROM t ORDER BY 1",
                &["a", "a"],
                vec![vec![1, 1], vec![2, 2], vec![10, 1], vec![20, 2]],
            ),
            (
                "SELECT a FROM t WHERE a IN (SELECT b / 10 FROM (SELECT b, b FROM t) s) ORDER BY a",
                &["a"],
                vec![vec![1], vec![2]],
            ),
        ];
        for (sql, shown, rows) in cases {
            assert_eq!(answer(sql).await?, (names(shown), rows), "{sql}");
        }
        Ok(())
    }

    #[tokio::test]
    async fn other_refusals_stay_as_they_were() {
        let e = answer("SELECT nope, nope FROM t").await.unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
        assert!(!is_refusal(&e), "{e}");
    }

    #[test]
    fn the_shown_name_ends_at_the_mark() {
        assert_eq!(shown("a"), "a");
        assert_eq!(shown(&format!("a{MARK}3")), "a");
        assert_eq!(shown(&format!("count(*){MARK}12")), "count(*)");
        assert_eq!(shown(""), "");
    }
}
