//! MERGE INTO on Lake tables, as one SELECT that DataFusion plans and runs.
//!
//! DataFusion 54 does not plan `MERGE`; Lake translates it ([`select`]) into one query over
//! the target (read at its latest version with each row's address, [`crate::scan::ROW_ADDR`])
//! joined to the source on the statement's `ON` condition, which yields one row per row the
//! statement touches: the clause's action ([`ACTION_UPDATE`], [`ACTION_DELETE`],
//! [`ACTION_INSERT`]), the target row's address (NULL for an insert), and the new row's
//! columns (an UPDATE's assignments over the target row, an INSERT's values). Each row takes
//! the first `WHEN` clause of its kind (matched; not matched by target; not matched by
//! source) whose condition holds, as the SQL standard says; a row no clause takes is left
//! alone. The changes then commit as one version, like a DELETE or UPDATE
//! ([`crate::dml`]): deleted and updated rows marked in deletion vectors, updated and
//! inserted rows written as new fragments (Lance's `Operation::Update`, as its own
//! merge-insert commits).
//!
//! Sources: SQL:2016 `<merge statement>` (ISO/IEC 9075-2 §14.12); DuckDB's and PostgreSQL
//! 17's `MERGE` (`WHEN NOT MATCHED BY SOURCE`).

use std::collections::BTreeMap;

use datafusion::sql::TableReference;
use datafusion::sql::sqlparser::ast::{
    AssignmentTarget, Expr, Ident, Merge, MergeAction, MergeClauseKind, MergeInsertKind,
    ObjectName, Statement as Ast, TableFactor,
};

use crate::QueryError;
use crate::scan::ROW_ADDR;

/// The catalog, schema and table the target is registered under for the translated query
/// (with row addresses); a name no Lake table can have (catalogs are `lake` and `iceberg`).
pub const TARGET: (&str, &str, &str) = ("lake_merge_target", "m", "t");
/// The translated query's action column: which kind of clause took the row.
pub const ACTION_COLUMN: &str = "__lake_merge_action";
/// The translated query's address column: the target row's [`ROW_ADDR`] (NULL for an
/// insert).
pub const ADDRESS_COLUMN: &str = "__lake_merge_address";
/// An UPDATE clause took the row.
pub const ACTION_UPDATE: i64 = 1;
/// A DELETE clause took the row.
pub const ACTION_DELETE: i64 = 2;
/// An INSERT clause took the row.
pub const ACTION_INSERT: i64 = 3;
/// Marks the source's rows, so a target row no source row matched is told apart.
const PRESENT: &str = "__lake_merge_present";
/// Most WHEN clauses one MERGE may have.
const CLAUSES_MAX: usize = 64;

/// The MERGE `statement` is, if it is one.
pub fn statement(statement: &datafusion::sql::parser::Statement) -> Option<&Merge> {
    match statement {
        datafusion::sql::parser::Statement::Statement(ast) => match ast.as_ref() {
            Ast::Merge(merge) => Some(merge),
            _ => None,
        },
        _ => None,
    }
}

/// The table `merge` writes, as written (after the time-travel rewrite).
///
/// # Errors
/// [`QueryError::Unsupported`] when the target is not a table name.
pub fn target(merge: &Merge) -> Result<TableReference, QueryError> {
    match &merge.table {
        TableFactor::Table { name, .. } => {
            datafusion::sql::planner::object_name_to_table_reference(name.clone(), true)
                .map_err(QueryError::from)
        }
        other => Err(QueryError::Unsupported(format!(
            "MERGE INTO {other}: the target must be a table"
        ))),
    }
}

/// The query `merge` is translated into (see the module docs), for a target whose columns
/// are `columns` (in order): columns [`ACTION_COLUMN`] (Int64), [`ADDRESS_COLUMN`]
/// (UInt64, NULL for inserts), then one per target column, named as the column, only for
/// the rows a clause takes.
///
/// # Errors
/// [`QueryError::Unsupported`] for what Lake's MERGE does not take (`OUTPUT`, column
/// aliases on the target, `INSERT ROW`, Oracle's `UPDATE … WHERE` / `DELETE WHERE`, an
/// INSERT clause with a condition on the inserted row, more than [`CLAUSES_MAX`] clauses);
/// [`QueryError::InvalidArgument`] for a clause its kind does not allow (INSERT when
/// matched, UPDATE or DELETE when not matched by target), an unknown or repeated column, a
/// SET qualifier that is not the target's, an INSERT whose values do not match its
/// columns, a clause that names the side it has no row of, or holds a window function
/// ([`check_clause`]); [`QueryError::Unsupported`] for a subquery in a clause.
pub fn select(merge: &Merge, columns: &[String]) -> Result<String, QueryError> {
    if merge.output.is_some() {
        return Err(QueryError::Unsupported("MERGE … OUTPUT".into()));
    }
    if merge.clauses.is_empty() || merge.clauses.len() > CLAUSES_MAX {
        return Err(QueryError::InvalidArgument(format!(
            "MERGE has {} WHEN clauses; 1 to {CLAUSES_MAX} are accepted",
            merge.clauses.len()
        )));
    }
    let TableFactor::Table { name, alias, .. } = &merge.table else {
        return Err(QueryError::Unsupported(format!(
            "MERGE INTO {}: the target must be a table",
            merge.table
        )));
    };
    if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
        return Err(QueryError::Unsupported(
            "column aliases on MERGE's target".into(),
        ));
    }
    let t = alias
        .as_ref()
        .map(|a| a.name.clone())
        .unwrap_or_else(|| last_ident(name));
    let (source, s) = source(&merge.source)?;
    let known: BTreeMap<&str, usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    let target_column = |c: &str| format!("{t}.{}", quoted(c));
    let matched = format!("{t}.{ROW_ADDR} IS NOT NULL AND {s}.{PRESENT} IS NOT NULL");
    let by_target = format!("{t}.{ROW_ADDR} IS NULL");
    let by_source = format!("{s}.{PRESENT} IS NULL");
    let mut arms: Vec<Arm> = Vec::new();
    let (mut has_by_target, mut has_by_source) = (false, false);
    for clause in &merge.clauses {
        let kind = match clause.clause_kind {
            MergeClauseKind::Matched => &matched,
            MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget => {
                has_by_target = true;
                &by_target
            }
            MergeClauseKind::NotMatchedBySource => {
                has_by_source = true;
                &by_source
            }
        };
        // What a clause may name: no target row when not matched by target, no source row
        // when not matched by source.
        let absent = match clause.clause_kind {
            MergeClauseKind::Matched => None,
            MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget => Some(&t),
            MergeClauseKind::NotMatchedBySource => Some(&s),
        };
        check_clause(clause, absent)?;
        let guard = match &clause.predicate {
            Some(p) => format!("({kind}) AND ({p})"),
            None => kind.clone(),
        };
        let target_row = matches!(
            clause.clause_kind,
            MergeClauseKind::Matched | MergeClauseKind::NotMatchedBySource
        );
        let (action, values) = match &clause.action {
            MergeAction::Delete { .. } if target_row => (ACTION_DELETE, vec![None; columns.len()]),
            MergeAction::Update(update) if target_row => {
                if update.update_predicate.is_some() || update.delete_predicate.is_some() {
                    return Err(QueryError::Unsupported(
                        "MERGE … UPDATE SET … WHERE / DELETE WHERE (Oracle's): put the condition in WHEN MATCHED AND …".into(),
                    ));
                }
                let mut values: Vec<Option<String>> =
                    columns.iter().map(|c| Some(target_column(c))).collect();
                let mut assigned = vec![false; columns.len()];
                for assignment in &update.assignments {
                    let AssignmentTarget::ColumnName(column) = &assignment.target else {
                        return Err(QueryError::Unsupported(
                            "MERGE … UPDATE SET (a, b) = …: assign each column on its own".into(),
                        ));
                    };
                    if let [qualifier, _] = column.0.as_slice()
                        && qualifier.as_ident().map(normalized) != Some(normalized(&t))
                    {
                        return Err(QueryError::InvalidArgument(format!(
                            "MERGE … UPDATE SET {column}: a column's qualifier must name the target ({t}); or write the bare column"
                        )));
                    }
                    if column.0.len() > 2 {
                        return Err(QueryError::InvalidArgument(format!(
                            "MERGE … UPDATE SET {column}: write the bare column"
                        )));
                    }
                    let i = column_index(&known, column, columns)?;
                    if std::mem::replace(&mut assigned[i], true) {
                        return Err(QueryError::InvalidArgument(format!(
                            "MERGE … UPDATE SET assigns column {} twice",
                            columns[i]
                        )));
                    }
                    values[i] = Some(format!("({})", assignment.value));
                }
                (ACTION_UPDATE, values)
            }
            MergeAction::Insert(insert) if !target_row => {
                if insert.insert_predicate.is_some() {
                    return Err(QueryError::Unsupported(
                        "MERGE … INSERT … WHERE (Oracle's): put the condition in WHEN NOT MATCHED AND …".into(),
                    ));
                }
                let MergeInsertKind::Values(rows) = &insert.kind else {
                    return Err(QueryError::Unsupported(
                        "MERGE … INSERT ROW: list the values (INSERT VALUES (…))".into(),
                    ));
                };
                let [row] = rows.rows.as_slice() else {
                    return Err(QueryError::InvalidArgument(format!(
                        "MERGE … INSERT takes one row of VALUES; {} were given",
                        rows.rows.len()
                    )));
                };
                let targets: Vec<usize> = if insert.columns.is_empty() {
                    (0..columns.len()).collect()
                } else {
                    insert
                        .columns
                        .iter()
                        .map(|c| column_index(&known, c, columns))
                        .collect::<Result<_, _>>()?
                };
                if targets.len() != row.content.len() {
                    return Err(QueryError::InvalidArgument(format!(
                        "MERGE … INSERT names {} columns and gives {} values",
                        targets.len(),
                        row.content.len()
                    )));
                }
                let mut values = vec![None; columns.len()];
                for (&i, value) in targets.iter().zip(&row.content) {
                    if values[i].replace(format!("({value})")).is_some() {
                        return Err(QueryError::InvalidArgument(format!(
                            "MERGE … INSERT names column {} twice",
                            columns[i]
                        )));
                    }
                }
                (ACTION_INSERT, values)
            }
            action => {
                return Err(QueryError::InvalidArgument(format!(
                    "MERGE … WHEN {} THEN {}: {}",
                    clause.clause_kind,
                    action_keyword(action),
                    if target_row {
                        "a target row is updated or deleted, not inserted"
                    } else {
                        "there is no target row to update or delete; INSERT is what this clause may do"
                    }
                )));
            }
        };
        arms.push(Arm {
            guard,
            action,
            values,
        });
    }
    let case = |value: &dyn Fn(&Arm) -> Option<String>| {
        let mut out = String::from("CASE");
        for arm in &arms {
            if let Some(v) = value(arm) {
                out.push_str(&format!(" WHEN {} THEN {v}", arm.guard));
            }
        }
        if out == "CASE" {
            "NULL".to_string()
        } else {
            out + " END"
        }
    };
    let mut projection = vec![
        format!(
            "{} AS {ACTION_COLUMN}",
            case(&|arm| Some(arm.action.to_string()))
        ),
        format!("{t}.{ROW_ADDR} AS {ADDRESS_COLUMN}"),
    ];
    for (i, column) in columns.iter().enumerate() {
        // Every clause gives every column (NULL where an INSERT leaves it out), so a row
        // never takes a value from a later clause.
        projection.push(format!(
            "{} AS {}",
            case(&|arm| Some(arm.values[i].clone().unwrap_or_else(|| "NULL".into()))),
            quoted(column)
        ));
    }
    let join = match (has_by_target, has_by_source) {
        (true, true) => "FULL JOIN",
        (true, false) => "RIGHT JOIN",
        (false, true) => "LEFT JOIN",
        (false, false) => "JOIN",
    };
    let (catalog, schema, table) = TARGET;
    Ok(format!(
        "SELECT * FROM (SELECT {} FROM {catalog}.{schema}.{table} AS {t} {join} {source} ON {}) AS __lake_merge WHERE {ACTION_COLUMN} IS NOT NULL",
        projection.join(", "),
        merge.on
    ))
}

/// One WHEN clause, translated: the condition that takes a row, what it does, and its
/// value per target column (`None`: NULL).
struct Arm {
    guard: String,
    action: i64,
    values: Vec<Option<String>>,
}

/// The source of a MERGE rendered with a column marking its rows ([`PRESENT`]), and the
/// name its columns are qualified by (its alias, or its table's name).
fn source(factor: &TableFactor) -> Result<(String, Ident), QueryError> {
    let shown = match factor {
        TableFactor::Table { name, alias, .. } => alias
            .as_ref()
            .map(|a| a.name.clone())
            .unwrap_or_else(|| last_ident(name)),
        TableFactor::Derived { alias: Some(a), .. } => a.name.clone(),
        other => {
            return Err(QueryError::Unsupported(format!(
                "MERGE … USING {other}: the source must be a table or a subquery with an alias"
            )));
        }
    };
    let mut inner = factor.clone();
    let (TableFactor::Table { alias, .. } | TableFactor::Derived { alias, .. }) = &mut inner else {
        return Err(QueryError::Unsupported(format!(
            "MERGE … USING {factor}: the source must be a table or a subquery with an alias"
        )));
    };
    let inner_name = Ident::new("__lake_merge_source");
    match alias {
        Some(a) => a.name = inner_name.clone(),
        None => {
            *alias = Some(datafusion::sql::sqlparser::ast::TableAlias {
                explicit: true,
                name: inner_name.clone(),
                columns: Vec::new(),
                at: None,
            })
        }
    }
    Ok((
        format!("(SELECT {inner_name}.*, TRUE AS {PRESENT} FROM {inner}) AS {shown}"),
        shown,
    ))
}

/// The index of target column `name` (its last part) among `columns`.
fn column_index(
    known: &BTreeMap<&str, usize>,
    name: &ObjectName,
    columns: &[String],
) -> Result<usize, QueryError> {
    let column = normalized(&last_ident(name));
    known.get(column.as_str()).copied().ok_or_else(|| {
        QueryError::InvalidArgument(format!(
            "MERGE names column {column}, which the target does not have; its columns: [{}]",
            columns.join(", ")
        ))
    })
}

/// An identifier as SQL resolves it: unquoted ones lowercased (DataFusion's identifier
/// normalization), quoted ones as written.
fn normalized(ident: &Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    }
}

/// Refuses in `clause` (its condition and values) what the translation cannot give a
/// meaning: a column of `absent` (the target or source alias, which has no row in this
/// kind of clause; it would read as NULL), a subquery (DataFusion cannot run one inside
/// the translation's CASE), a window function (there is no window over the rows a MERGE
/// changes).
///
/// # Errors
/// [`QueryError::InvalidArgument`] or [`QueryError::Unsupported`] naming the expression.
fn check_clause(
    clause: &datafusion::sql::sqlparser::ast::MergeClause,
    absent: Option<&Ident>,
) -> Result<(), QueryError> {
    use datafusion::sql::sqlparser::ast::visit_expressions;
    let mut refusal = None;
    let _ = visit_expressions(clause, |expr: &Expr| {
        refusal = match expr {
            Expr::CompoundIdentifier(parts)
                if parts.len() > 1
                    && absent.is_some_and(|a| normalized(&parts[0]) == normalized(a)) =>
            {
                Some(QueryError::InvalidArgument(format!(
                    "MERGE … WHEN {}: {expr} names {}, which has no row in this clause",
                    clause.clause_kind, parts[0]
                )))
            }
            Expr::Exists { .. } | Expr::InSubquery { .. } | Expr::Subquery(_) => {
                Some(QueryError::Unsupported(format!(
                    "MERGE … WHEN {}: a subquery ({expr}) in a clause; join what it reads into the source (USING (SELECT …))",
                    clause.clause_kind
                )))
            }
            Expr::Function(f) if f.over.is_some() => Some(QueryError::InvalidArgument(format!(
                "MERGE … WHEN {}: window function {expr} in a clause; compute it in the source",
                clause.clause_kind
            ))),
            _ => None,
        };
        if refusal.is_some() {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
    refusal.map_or(Ok(()), Err)
}

fn last_ident(name: &ObjectName) -> Ident {
    name.0
        .last()
        .and_then(|p| p.as_ident())
        .cloned()
        .unwrap_or_else(|| Ident::new(name.to_string()))
}

fn quoted(column: &str) -> String {
    Ident::with_quote('"', column).to_string()
}

fn action_keyword(action: &MergeAction) -> &'static str {
    match action {
        MergeAction::Insert(_) => "INSERT",
        MergeAction::Update(_) => "UPDATE",
        MergeAction::Delete { .. } => "DELETE",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn translate(sql: &str) -> Result<String, QueryError> {
        let parsed = crate::sql::parse(sql)?;
        let merge = statement(&parsed.statement).expect("a MERGE");
        select(merge, &["id".to_string(), "v".to_string()])
    }

    #[test]
    fn clauses_become_guarded_cases_in_order_over_the_narrowest_join() {
        let sql = translate(
            "MERGE INTO ns.t AS t USING ns.s AS s ON t.id = s.id \
             WHEN MATCHED AND s.v IS NULL THEN DELETE \
             WHEN MATCHED THEN UPDATE SET v = s.v \
             WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)",
        )
        .unwrap();
        assert!(sql.contains(" RIGHT JOIN "), "{sql}");
        let delete = sql.find("THEN 2").unwrap();
        let update = sql.find("THEN 1").unwrap();
        assert!(delete < update, "clauses keep their order: {sql}");
        assert!(sql.contains("TRUE AS __lake_merge_present"), "{sql}");
    }

    #[test]
    fn what_a_clause_cannot_do_is_refused_naming_it() {
        for (sql, message) in [
            // (The parser refuses these two already.)
            (
                "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN INSERT VALUES (1, 2)",
                "not allowed",
            ),
            (
                "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN DELETE",
                "not allowed",
            ),
            (
                "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET nope = 1",
                "nope",
            ),
            (
                "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 1, v = 2",
                "twice",
            ),
            (
                "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) VALUES (1, 2)",
                "1 columns and gives 2 values",
            ),
        ] {
            let error = translate(sql).unwrap_err().to_string();
            assert!(error.contains(message), "{sql}: {error}");
        }
    }
}
