//! SQL front end: Lake's dialect, time-travel clauses and the tables a statement touches.
//!
//! Time travel uses the Spark / Databricks syntax that sqlparser parses when a dialect
//! supports table versioning: `t VERSION AS OF 3`, `t TIMESTAMP AS OF '2026-11-29 10:00:00'`
//! (also `t FOR SYSTEM_TIME AS OF '…'`). DataFusion's planner ignores table versions, so
//! before planning each versioned table factor is rewritten to an internal name that
//! carries its clause (`lineitem@v3`, `lineitem@t1700000000000`), aliased back to the
//! table's own name so qualified column references still work. The query's catalog then
//! serves exactly the pinned version under that name.

use std::any::TypeId;
use std::ops::ControlFlow;

use arrow::array::timezone::Tz;
use arrow::compute::kernels::cast_utils::string_to_datetime;
use datafusion::sql::TableReference;
use datafusion::sql::parser::{DFParserBuilder, Statement};
use datafusion::sql::resolve::resolve_table_references;
use datafusion::sql::sqlparser::ast::{
    Expr, Ident, ObjectNamePart, TableAlias, TableFactor, TableVersion, Value, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::{Dialect, GenericDialect};
use lake_core::VersionSpec;

use crate::QueryError;

/// The catalog of native Lake tables.
pub const LAKE_CATALOG: &str = "lake";
/// The namespace of unqualified table names.
pub const DEFAULT_NAMESPACE: &str = "default";
/// Longest SQL text accepted, in bytes.
pub const SQL_LEN_MAX: usize = 1 << 20;
/// Deepest expression nesting accepted (`1 + 1 + … + 1` with n terms is n - 1 deep):
/// planning recurses per level.
pub const EXPR_DEPTH_MAX: usize = 256;

/// DataFusion's generic dialect plus table versioning (time travel).
#[derive(Debug, Default)]
pub struct LakeDialect(GenericDialect);

macro_rules! delegate {
    ($($name:ident),* $(,)?) => {
        $(fn $name(&self) -> bool { self.0.$name() })*
    };
}

impl Dialect for LakeDialect {
    // Parser paths that test for the generic dialect must treat us as it.
    fn dialect(&self) -> TypeId {
        TypeId::of::<GenericDialect>()
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }
    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }
    fn supports_table_versioning(&self) -> bool {
        true
    }
    delegate!(
        supports_unicode_string_literal,
        supports_group_by_expr,
        supports_group_by_with_modifier,
        supports_left_associative_joins_without_parens,
        supports_connect_by,
        supports_match_recognize,
        supports_pipe_operator,
        supports_start_transaction_modifier,
        supports_window_function_null_treatment_arg,
        supports_dictionary_syntax,
        supports_window_clause_named_window_reference,
        supports_parenthesized_set_variables,
        supports_select_wildcard_except,
        support_map_literal_syntax,
        allow_extract_custom,
        allow_extract_single_quotes,
        supports_extract_comma_syntax,
        supports_create_view_comment_syntax,
        supports_parens_around_table_factor,
        supports_values_as_table_factor,
        supports_create_index_with_clause,
        supports_explain_with_utility_options,
        supports_limit_comma,
        supports_from_first_select,
        supports_projection_trailing_commas,
        supports_asc_desc_in_column_definition,
        supports_try_convert,
        supports_bitwise_shift_operators,
        supports_comment_on,
        supports_load_extension,
        supports_named_fn_args_with_assignment_operator,
        supports_struct_literal,
        supports_empty_projections,
        supports_nested_comments,
        supports_multiline_comment_hints,
        supports_user_host_grantee,
        supports_string_escape_constant,
        supports_array_typedef_with_brackets,
        supports_match_against,
        supports_set_names,
        supports_comma_separated_set_assignments,
        supports_filter_during_aggregation,
        supports_select_wildcard_exclude,
        supports_data_type_signed_suffix,
        supports_interval_options,
        supports_quote_delimited_string,
        supports_lambda_functions,
        supports_select_wildcard_replace,
        supports_select_wildcard_ilike,
        supports_select_wildcard_rename,
        supports_optimize_table,
        supports_install,
        supports_detach,
        supports_prewhere,
        supports_with_fill,
        supports_limit_by,
        supports_interpolate,
        supports_settings,
        supports_select_format,
        supports_comment_optimizer_hint,
        supports_constraint_keyword_without_name,
    );
}

/// A parsed statement with its time-travel clauses rewritten into table names.
pub struct ParsedStatement {
    /// The statement to plan.
    pub statement: Statement,
    /// Tables it reads or writes (CTE names excluded), as written after the rewrite.
    pub tables: Vec<TableReference>,
}

/// Splits an internal table key (`name`, `name@v3`, `name@t<ms>`) into the table name and
/// its version clause.
pub fn split_table_key(key: &str) -> (&str, VersionSpec) {
    if let Some((name, clause)) = key.split_once('@') {
        if let Some(v) = clause.strip_prefix('v').and_then(|v| v.parse().ok()) {
            return (name, VersionSpec::Version(v));
        }
        if let Some(t) = clause.strip_prefix('t').and_then(|t| t.parse().ok()) {
            return (name, VersionSpec::AsOfMs(t));
        }
    }
    (key, VersionSpec::Latest)
}

/// Parses exactly one statement and rewrites its time-travel clauses.
///
/// # Errors
/// [`QueryError::Sql`] for unparsable SQL, zero or several statements, or a time-travel
/// clause that is not a version number or a timestamp literal; [`QueryError::TooLarge`]
/// past [`SQL_LEN_MAX`].
pub fn parse(sql: &str) -> Result<ParsedStatement, QueryError> {
    if sql.len() > SQL_LEN_MAX {
        return Err(QueryError::TooLarge(format!(
            "SQL text is {} bytes; at most {SQL_LEN_MAX} bytes are accepted",
            sql.len()
        )));
    }
    let dialect = LakeDialect::default();
    let mut statements = DFParserBuilder::new(sql)
        .with_dialect(&dialect)
        .build()
        .and_then(|mut p| p.parse_statements())
        .map_err(QueryError::from)?;
    if statements.len() != 1 {
        return Err(QueryError::Sql(format!(
            "expected exactly one SQL statement, got {}",
            statements.len()
        )));
    }
    let mut statement = statements
        .pop_front()
        .ok_or_else(|| QueryError::Sql("empty SQL".into()))?;
    if let Statement::Statement(inner) = &mut statement {
        let mut rewriter = Rewriter {
            error: None,
            placeholders: 0,
            depth: 0,
        };
        let _ = inner.visit(&mut rewriter);
        if let Some(e) = rewriter.error {
            return Err(e);
        }
    }
    let (tables, _ctes) =
        resolve_table_references(&statement, true).map_err(|e| QueryError::Sql(e.to_string()))?;
    Ok(ParsedStatement { statement, tables })
}

/// Rewrites time-travel clauses (see the module docs) and numbers JDBC/ODBC-style `?`
/// placeholders as `$1, $2, …` in order of appearance, which is how DataFusion binds
/// positional parameters.
struct Rewriter {
    error: Option<QueryError>,
    placeholders: usize,
    depth: usize,
}

impl VisitorMut for Rewriter {
    type Break = ();

    fn post_visit_expr(&mut self, _expr: &mut Expr) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        self.depth += 1;
        if self.depth > EXPR_DEPTH_MAX {
            self.error = Some(QueryError::InvalidArgument(format!(
                "expression nested more than {EXPR_DEPTH_MAX} levels deep; split it (e.g. IN (...) instead of long OR chains)"
            )));
            return ControlFlow::Break(());
        }
        if let Expr::Value(v) = expr
            && let Value::Placeholder(p) = &mut v.value
            && p == "?"
        {
            self.placeholders += 1;
            *p = format!("${}", self.placeholders);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        let TableFactor::Table {
            name,
            alias,
            version,
            ..
        } = factor
        else {
            return ControlFlow::Continue(());
        };
        let Some(clause) = version.take() else {
            return ControlFlow::Continue(());
        };
        let spec = match version_spec(&clause) {
            Ok(spec) => spec,
            Err(e) => {
                self.error = Some(e);
                return ControlFlow::Break(());
            }
        };
        let Some(ObjectNamePart::Identifier(last)) = name.0.last_mut() else {
            self.error = Some(QueryError::Sql(format!("cannot time-travel on {name}")));
            return ControlFlow::Break(());
        };
        let original = last.clone();
        let suffix = match spec {
            VersionSpec::Version(v) => format!("v{v}"),
            VersionSpec::AsOfMs(t) => format!("t{t}"),
            VersionSpec::Latest => return ControlFlow::Continue(()),
        };
        // Quoted, so normalization keeps the name and the '@' intact.
        *last = Ident::with_quote('"', format!("{}@{suffix}", normalize(&original)));
        if alias.is_none() {
            *alias = Some(TableAlias {
                explicit: true,
                name: original,
                columns: vec![],
            });
        }
        ControlFlow::Continue(())
    }
}

/// DataFusion's identifier normalization: unquoted identifiers are lower-cased.
fn normalize(ident: &Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    }
}

fn version_spec(clause: &TableVersion) -> Result<VersionSpec, QueryError> {
    match clause {
        TableVersion::VersionAsOf(expr) => match literal(expr) {
            Some(Literal::Number(n)) => n.parse::<u64>().map(VersionSpec::Version).map_err(|_| {
                QueryError::Sql(format!(
                    "VERSION AS OF needs a version number (1, 2, …), got {n}"
                ))
            }),
            _ => Err(QueryError::Sql(format!(
                "VERSION AS OF needs a version number (1, 2, …), got {expr}"
            ))),
        },
        TableVersion::TimestampAsOf(expr) | TableVersion::ForSystemTimeAsOf(expr) => {
            match literal(expr) {
                Some(Literal::String(s)) => {
                    let utc: Tz = "+00:00".parse().map_err(QueryError::from)?;
                    let at = string_to_datetime(&utc, &s).map_err(|e| {
                        QueryError::Sql(format!(
                            "TIMESTAMP AS OF needs a timestamp such as '2026-11-29 10:00:00' or '2026-11-29T10:00:00Z' (UTC unless an offset is given); {s:?}: {e}"
                        ))
                    })?;
                    Ok(VersionSpec::AsOfMs(at.timestamp_millis()))
                }
                Some(Literal::Number(n)) => n.parse::<i64>().map(VersionSpec::AsOfMs).map_err(|_| {
                    QueryError::Sql(format!(
                        "TIMESTAMP AS OF with a number needs milliseconds since the Unix epoch, got {n}"
                    ))
                }),
                None => Err(QueryError::Sql(format!(
                    "TIMESTAMP AS OF needs a timestamp literal such as '2026-11-29 10:00:00' or milliseconds since the epoch, got {expr}"
                ))),
            }
        }
        other => Err(QueryError::Sql(format!(
            "unsupported time-travel clause {other}; use VERSION AS OF n or TIMESTAMP AS OF 'timestamp'"
        ))),
    }
}

enum Literal {
    Number(String),
    String(String),
}

fn literal(expr: &Expr) -> Option<Literal> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => Some(Literal::Number(n.to_string())),
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                Some(Literal::String(s.clone()))
            }
            _ => None,
        },
        Expr::TypedString(typed) => match &typed.value.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                Some(Literal::String(s.clone()))
            }
            _ => None,
        },
        Expr::Cast { expr, .. } | Expr::Nested(expr) => literal(expr),
        _ => None,
    }
}

/// The Lake table a reference names: (namespace, table key) when its catalog is `lake`
/// (explicitly or by default), `None` for another catalog.
pub fn lake_table(reference: &TableReference) -> Option<(String, String)> {
    match reference {
        TableReference::Bare { table } => Some((DEFAULT_NAMESPACE.to_string(), table.to_string())),
        TableReference::Partial { schema, table } => Some((schema.to_string(), table.to_string())),
        TableReference::Full {
            catalog,
            schema,
            table,
        } if catalog.as_ref() == LAKE_CATALOG => Some((schema.to_string(), table.to_string())),
        TableReference::Full { .. } => None,
    }
}
