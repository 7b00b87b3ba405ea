//! SQL front end: Lake's dialect, time-travel clauses and the tables a statement touches.
//!
//! Time travel uses the Spark / Databricks syntax that sqlparser parses when a dialect
//! supports table versioning: `t VERSION AS OF 3`, `t TIMESTAMP AS OF '2026-11-29 10:00:00'`
//! (also `t FOR SYSTEM_TIME AS OF '…'`), plus Trino's `FOR VERSION AS OF` / `FOR TIMESTAMP
//! AS OF` and a ref name for Iceberg tables (`t VERSION AS OF 'dev'`, Spark's and Trino's
//! form for a branch or tag). DataFusion's planner ignores table versions, so before
//! planning each versioned table factor is rewritten to an internal name that carries its
//! clause (`lineitem@v3`, `lineitem@t1700000000000`, `orders@rdev`), aliased back to the
//! table's own name so qualified column references still work. The query's catalog then
//! serves exactly the pinned version under that name.
//!
//! Iceberg namespaces may have several levels: `iceberg.a.b.t` is rewritten to
//! `iceberg."a.b".t`, the schema name under which the `iceberg` catalog serves them.

use std::any::TypeId;
use std::borrow::Cow;
use std::ops::ControlFlow;

use arrow::array::timezone::Tz;
use arrow::compute::kernels::cast_utils::string_to_datetime;
use datafusion::sql::TableReference;
use datafusion::sql::parser::{DFParserBuilder, Statement};
use datafusion::sql::resolve::resolve_table_references;
use datafusion::sql::sqlparser::ast::{
    AssignmentTarget, Expr, FromTable, FunctionArg, FunctionArgExpr, FunctionArguments, Ident,
    ObjectName, ObjectNamePart, Query, Statement as Ast, TableAlias, TableFactor, TableObject,
    TableVersion, Value, Visit, VisitMut, Visitor, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::{Dialect, GenericDialect};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::{Location, Token, Tokenizer};
use lake_core::TimeTravel;

use crate::{QueryError, row_in};

/// The catalog of native Lake tables.
pub const LAKE_CATALOG: &str = "lake";
/// The read-only catalog of external Iceberg tables.
pub const ICEBERG_CATALOG: &str = "iceberg";
/// The function that carries a ref name through sqlparser (see [`rewrite_ref_clauses`]).
const REF_MARKER: &str = "__lake_ref";
/// The namespace of unqualified table names.
pub const DEFAULT_NAMESPACE: &str = "default";
/// Longest SQL text accepted, in bytes.
pub const SQL_LEN_MAX: usize = 1 << 20;
/// Deepest expression nesting accepted (`1 + 1 + … + 1` with n terms is n - 1 deep):
/// planning recurses per level.
pub const EXPR_DEPTH_MAX: usize = 256;
/// Stack size, in bytes, of the threads that parse, plan and run queries (`lake`'s tokio
/// workers): DataFusion plans and evaluates expressions recursively, and this is room for
/// the deepest statement the front end admits ([`EXPR_DEPTH_MAX`], and row-value INs
/// nested as deep as the parser allows).
pub const WORKER_STACK_BYTES: usize = 32 << 20;

/// Most set operations (`UNION`, `INTERSECT`, `EXCEPT`) and most `JOIN`s one statement
/// may have: the parser reads a chain of them in a loop but builds a tree as deep as the
/// chain, and everything after it (rewriting, planning, dropping it) recurses per level.
pub const CHAIN_MAX: usize = 1000;

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
    /// `a IS [NOT] DISTINCT FROM b` takes as `b` only what binds tighter than `IS` (as in
    /// PostgreSQL): sqlparser 0.62 parses the whole rest of the expression, so `x IS
    /// DISTINCT FROM 2 AND a` became `x IS DISTINCT FROM (2 AND a)`.
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        let keyword = |n: usize, keyword: Keyword| matches!(&parser.peek_nth_token_ref(n).token, Token::Word(w) if w.keyword == keyword);
        if !keyword(0, Keyword::IS) {
            return None;
        }
        let negated = if keyword(1, Keyword::DISTINCT) && keyword(2, Keyword::FROM) {
            false
        } else if keyword(1, Keyword::NOT)
            && keyword(2, Keyword::DISTINCT)
            && keyword(3, Keyword::FROM)
        {
            true
        } else {
            return None;
        };
        for _ in 0..if negated { 4 } else { 3 } {
            parser.next_token();
        }
        let right = match parser.parse_subexpr(precedence) {
            Ok(right) => Box::new(right),
            Err(e) => return Some(Err(e)),
        };
        let left = Box::new(expr.clone());
        Some(Ok(if negated {
            Expr::IsNotDistinctFrom(left, right)
        } else {
            Expr::IsDistinctFrom(left, right)
        }))
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
        supports_array_join_syntax,
        supports_comma_separated_trim,
        supports_cte_without_as,
        supports_key_column_option,
        supports_partition_by_after_order_by,
        supports_select_item_multi_column_alias,
        supports_update_order_by,
        supports_xml_expressions,
    );
}

/// A parsed statement with its time-travel clauses rewritten into table names.
#[derive(Clone, Debug)]
pub struct ParsedStatement {
    /// The statement to plan.
    pub statement: Statement,
    /// Tables it reads or writes (CTE names excluded), as written after the rewrite.
    pub tables: Vec<TableReference>,
    /// Table functions it calls in FROM clauses (`lake_grants`, `generate_series`).
    pub functions: Vec<TableReference>,
    /// The tables it writes (INSERT's target, the table CREATE TABLE makes, the tables DROP
    /// TABLE drops), as written, with what it does to them.
    pub targets: Vec<(TableReference, WriteKind)>,
}

/// What a statement does to a table it writes ([`ParsedStatement::targets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    /// `INSERT INTO`.
    Insert,
    /// `CREATE TABLE` (with or without `AS SELECT`).
    Create,
    /// `DROP TABLE`.
    Drop,
    /// `DELETE FROM`.
    Delete,
    /// `UPDATE`.
    Update,
    /// `MERGE INTO`.
    Merge,
}

impl WriteKind {
    /// The verb for messages: "write to", "create table", "drop table", "delete from",
    /// "update", "merge into".
    pub fn verb(self) -> &'static str {
        match self {
            Self::Insert => "write to",
            Self::Create => "create table",
            Self::Drop => "drop table",
            Self::Delete => "delete from",
            Self::Update => "update",
            Self::Merge => "merge into",
        }
    }
}

/// The tables `statement` writes (see [`ParsedStatement::targets`]); an EXPLAIN's are
/// those of the statement it explains.
fn write_targets(statement: &Statement) -> Vec<(TableReference, WriteKind)> {
    use datafusion::sql::sqlparser::ast::ObjectType;
    let reference = |name: &ObjectName| {
        datafusion::sql::planner::object_name_to_table_reference(name.clone(), true).ok()
    };
    let ast = match statement {
        Statement::Statement(ast) => ast,
        Statement::Explain(explain) => return write_targets(&explain.statement),
        _ => return Vec::new(),
    };
    match ast.as_ref() {
        Ast::Insert(insert) => match &insert.table {
            TableObject::TableName(name) => reference(name)
                .map(|r| vec![(r, WriteKind::Insert)])
                .unwrap_or_default(),
            _ => Vec::new(),
        },
        Ast::Delete(delete) => {
            let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) =
                &delete.from;
            tables
                .iter()
                .filter_map(|t| match &t.relation {
                    TableFactor::Table { name, .. } => reference(name),
                    _ => None,
                })
                .map(|r| (r, WriteKind::Delete))
                .collect()
        }
        Ast::Merge(merge) => match &merge.table {
            TableFactor::Table { name, .. } => reference(name)
                .map(|r| vec![(r, WriteKind::Merge)])
                .unwrap_or_default(),
            _ => Vec::new(),
        },
        Ast::Update(update) => match &update.table.relation {
            TableFactor::Table { name, .. } => reference(name)
                .map(|r| vec![(r, WriteKind::Update)])
                .unwrap_or_default(),
            _ => Vec::new(),
        },
        Ast::CreateTable(create) => reference(&create.name)
            .map(|r| vec![(r, WriteKind::Create)])
            .unwrap_or_default(),
        Ast::Drop {
            names,
            object_type: ObjectType::Table,
            ..
        } => names
            .iter()
            .filter_map(reference)
            .map(|r| (r, WriteKind::Drop))
            .collect(),
        _ => Vec::new(),
    }
}

/// The table an `OPTIMIZE [TABLE] name` statement compacts and cleans up (Databricks'
/// `OPTIMIZE`, ClickHouse's `OPTIMIZE TABLE`); `None` for any other statement.
///
/// # Errors
/// [`QueryError::Unsupported`] for the clauses Lake does not take (`WHERE`, `ZORDER BY`,
/// `PARTITION`, `FINAL`, `DEDUPLICATE`, `ON CLUSTER`), naming them.
pub fn optimize_target(statement: &Statement) -> Option<Result<TableReference, QueryError>> {
    let Statement::Statement(ast) = statement else {
        return None;
    };
    let Ast::OptimizeTable {
        name,
        on_cluster,
        partition,
        include_final,
        deduplicate,
        predicate,
        zorder,
        ..
    } = ast.as_ref()
    else {
        return None;
    };
    let clauses = [
        (predicate.is_some(), "WHERE"),
        (zorder.is_some(), "ZORDER BY"),
        (partition.is_some(), "PARTITION"),
        (*include_final, "FINAL"),
        (deduplicate.is_some(), "DEDUPLICATE"),
        (on_cluster.is_some(), "ON CLUSTER"),
    ];
    let given = given_clauses(&clauses);
    if !given.is_empty() {
        return Some(Err(QueryError::Unsupported(format!(
            "OPTIMIZE … {}: Lake's OPTIMIZE takes a table name only (`OPTIMIZE ns.t`) and compacts the whole table",
            given.join(", ")
        ))));
    }
    Some(
        datafusion::sql::planner::object_name_to_table_reference(name.clone(), true)
            .map_err(QueryError::from),
    )
}

/// The names of the clauses a statement gave (`(given, name)` pairs, in order), for a
/// refusal that names each one Lake does not take.
pub(crate) fn given_clauses<'a>(clauses: &[(bool, &'a str)]) -> Vec<&'a str> {
    clauses
        .iter()
        .filter(|(given, _)| *given)
        .map(|(_, clause)| *clause)
        .collect()
}

/// The table a `VACUUM name` statement collects the stage garbage of (Redshift's and
/// Databricks' `VACUUM`; see `Engine::collect_stage_garbage`); `None` for any other
/// statement.
///
/// # Errors
/// [`QueryError::Unsupported`] for `VACUUM` without a table or with Redshift's options
/// (`FULL`, `SORT ONLY`, `DELETE ONLY`, `REINDEX`, `RECLUSTER`, `TO n PERCENT`, `BOOST`),
/// naming them.
pub fn vacuum_target(statement: &Statement) -> Option<Result<TableReference, QueryError>> {
    let Statement::Statement(ast) = statement else {
        return None;
    };
    let Ast::Vacuum(vacuum) = ast.as_ref() else {
        return None;
    };
    let clauses = [
        (vacuum.full, "FULL"),
        (vacuum.sort_only, "SORT ONLY"),
        (vacuum.delete_only, "DELETE ONLY"),
        (vacuum.reindex, "REINDEX"),
        (vacuum.recluster, "RECLUSTER"),
        (vacuum.threshold.is_some(), "TO … PERCENT"),
        (vacuum.boost, "BOOST"),
    ];
    let given = given_clauses(&clauses);
    let Some(name) = vacuum.table_name.as_ref().filter(|_| given.is_empty()) else {
        return Some(Err(QueryError::Unsupported(format!(
            "VACUUM{}: Lake's VACUUM takes a table name only (`VACUUM ns.t`) and removes the objects of its stage no retained version names",
            if given.is_empty() {
                " without a table".to_string()
            } else {
                format!(" {}", given.join(", "))
            }
        ))));
    };
    Some(
        datafusion::sql::planner::object_name_to_table_reference(name.clone(), true)
            .map_err(QueryError::from),
    )
}

impl ParsedStatement {
    /// Whether a FROM clause calls table function `name` (unqualified, as table functions
    /// are registered).
    pub fn calls(&self, name: &str) -> bool {
        self.functions
            .iter()
            .any(|f| matches!(f, TableReference::Bare { table } if table.as_ref() == name))
    }
}

/// The internal key of table `name` read at `travel`: the name with `%` and `@` escaped
/// (`%25`, `%40`), then `@v<n>`, `@t<ms>` or `@r<ref>` for a time-travel clause. The
/// statement names the table by this key after the rewrite, so a quoted name that itself
/// contains `@` is never taken for a clause.
pub fn table_key(name: &str, travel: &TimeTravel) -> String {
    let escaped = name.replace('%', "%25").replace('@', "%40");
    match travel {
        TimeTravel::Latest => escaped,
        TimeTravel::Number(v) => format!("{escaped}@v{v}"),
        TimeTravel::AsOfMs(t) => format!("{escaped}@t{t}"),
        TimeTravel::Name(r) => format!("{escaped}@r{r}"),
    }
}

/// Splits an internal table key ([`table_key`]) into the table name and its time-travel
/// clause.
pub fn split_table_key(key: &str) -> (String, TimeTravel) {
    let (escaped, clause) = match key.split_once('@') {
        Some((name, clause)) => (name, Some(clause)),
        None => (key, None),
    };
    let name = escaped.replace("%40", "@").replace("%25", "%");
    let travel = match clause {
        Some(c) if c.starts_with('v') => c[1..]
            .parse()
            .map_or(TimeTravel::Latest, TimeTravel::Number),
        Some(c) if c.starts_with('t') => c[1..]
            .parse()
            .map_or(TimeTravel::Latest, TimeTravel::AsOfMs),
        Some(c) if c.starts_with('r') => TimeTravel::Name(c[1..].to_string()),
        _ => TimeTravel::Latest,
    };
    (name, travel)
}

/// Byte offset of a tokenizer location (1-based line and column, columns in chars).
fn byte_offset(sql: &str, line_starts: &[usize], at: Location) -> usize {
    let line = usize::try_from(at.line).unwrap_or(usize::MAX);
    let column = usize::try_from(at.column).unwrap_or(usize::MAX);
    let Some(&start) = line_starts.get(line.saturating_sub(1)) else {
        return sql.len();
    };
    sql[start..]
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(sql.len(), |(i, _)| start + i)
}

/// Rewrites the time-travel forms sqlparser does not parse into ones it does: Trino's
/// `FOR VERSION AS OF` / `FOR TIMESTAMP AS OF` lose their `FOR`, and `VERSION AS OF 'ref'`
/// becomes `FOR SYSTEM_TIME AS OF __lake_ref('ref')`. Works on tokens, so string literals
/// and comments are never touched.
fn rewrite_ref_clauses(sql: &str) -> Result<Cow<'_, str>, QueryError> {
    let upper = sql.to_ascii_uppercase();
    if !(upper.contains("VERSION") || upper.contains("TIMESTAMP")) || !upper.contains("OF") {
        return Ok(Cow::Borrowed(sql));
    }
    let dialect = LakeDialect::default();
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|e| QueryError::Sql(e.to_string()))?;
    let significant: Vec<usize> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i)
        .collect();
    let is_keyword = |n: usize, keyword: &str| {
        significant.get(n).is_some_and(|&i| {
            matches!(&tokens[i].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(keyword))
        })
    };
    let mut line_starts = vec![0];
    line_starts.extend(sql.match_indices('\n').map(|(i, _)| i + 1));
    let start = |n: usize| byte_offset(sql, &line_starts, tokens[significant[n]].span.start);
    let end = |n: usize| byte_offset(sql, &line_starts, tokens[significant[n]].span.end);
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for n in 0..significant.len() {
        let as_of = |k: usize| is_keyword(k, "AS") && is_keyword(k + 1, "OF");
        if is_keyword(n, "FOR")
            && (is_keyword(n + 1, "VERSION") || is_keyword(n + 1, "TIMESTAMP"))
            && as_of(n + 2)
        {
            edits.push((start(n), start(n + 1), String::new()));
        }
        if is_keyword(n, "VERSION")
            && as_of(n + 1)
            && let Some(&i) = significant.get(n + 3)
            && let Token::SingleQuotedString(name) = &tokens[i].token
        {
            edits.push((
                start(n),
                end(n + 3),
                format!(
                    "FOR SYSTEM_TIME AS OF {REF_MARKER}('{}')",
                    name.replace('\'', "''")
                ),
            ));
        }
    }
    if edits.is_empty() {
        return Ok(Cow::Borrowed(sql));
    }
    let mut out = String::with_capacity(sql.len() + 32);
    let mut at = 0;
    for (from, to, text) in edits {
        out.push_str(&sql[at..from]);
        out.push_str(&text);
        at = to;
    }
    out.push_str(&sql[at..]);
    Ok(Cow::Owned(out))
}

/// Whether `name` is catalog-qualified into `iceberg`: `iceberg.<namespace…>.<table>` for
/// a table (`parts_min` = 3), `iceberg.<namespace>` for a namespace (2). Shorter names
/// starting with `iceberg` are Lake names (`iceberg.t` is `lake.iceberg.t`).
fn names_iceberg(name: &ObjectName, parts_min: usize) -> bool {
    name.0.len() >= parts_min
        && matches!(name.0.first(), Some(ObjectNamePart::Identifier(first)) if normalize(first) == ICEBERG_CATALOG)
}

/// What a statement would write, create or drop in the read-only `iceberg` catalog, if
/// anything: (kind, name).
fn iceberg_write_target(statement: &Statement) -> Option<(&'static str, String)> {
    use datafusion::sql::sqlparser::ast::ObjectType;
    let table = |name: &ObjectName| names_iceberg(name, 3).then(|| ("table", name.to_string()));
    let ast = match statement {
        Statement::Statement(ast) => ast,
        Statement::Explain(explain) => return iceberg_write_target(&explain.statement),
        Statement::CreateExternalTable(create) => return table(&create.name),
        _ => return None,
    };
    match ast.as_ref() {
        Ast::Insert(insert) => match &insert.table {
            TableObject::TableName(name) => table(name),
            _ => None,
        },
        Ast::CreateTable(create) => table(&create.name),
        Ast::CreateView(view) => table(&view.name),
        Ast::AlterTable(alter) => table(&alter.name),
        Ast::Drop {
            names, object_type, ..
        } => {
            let parts = if matches!(object_type, ObjectType::Schema | ObjectType::Database) {
                2
            } else {
                3
            };
            names
                .iter()
                .find(|n| names_iceberg(n, parts))
                .map(|n| ("table or namespace", n.to_string()))
        }
        Ast::CreateSchema { schema_name, .. } => {
            let text = schema_name.to_string();
            let mut parts = text.split('.');
            let first = parts.next().unwrap_or_default().trim_matches('"');
            (first.eq_ignore_ascii_case(ICEBERG_CATALOG) && parts.next().is_some())
                .then_some(("namespace", text))
        }
        // UPDATE, DELETE, MERGE, TRUNCATE: any Iceberg table they name.
        Ast::Update(_) | Ast::Delete(_) | Ast::Merge(_) | Ast::Truncate(_) => {
            struct Find(Option<String>);
            impl Visitor for Find {
                type Break = ();
                fn pre_visit_relation(&mut self, name: &ObjectName) -> ControlFlow<()> {
                    if names_iceberg(name, 3) {
                        self.0 = Some(name.to_string());
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                }
            }
            let mut find = Find(None);
            let _ = ast.visit(&mut find);
            find.0.map(|name| ("table", name))
        }
        _ => None,
    }
}

/// The names a statement's FROM clauses use, as table functions (with arguments) and as
/// tables.
#[derive(Default)]
struct TableFactors {
    functions: Vec<TableReference>,
    tables: Vec<TableReference>,
}

impl Visitor for TableFactors {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, args, .. } = factor
            && let Ok(reference) =
                datafusion::sql::planner::object_name_to_table_reference(name.clone(), true)
        {
            if args.is_some() {
                self.functions.push(reference);
            } else {
                self.tables.push(reference);
            }
        }
        ControlFlow::Continue(())
    }
}

/// Visits a statement and the statement an EXPLAIN wraps.
fn visit_statement<V: Visitor>(statement: &Statement, visitor: &mut V) {
    match statement {
        Statement::Statement(inner) => {
            let _ = inner.visit(visitor);
        }
        Statement::Explain(explain) => visit_statement(&explain.statement, visitor),
        _ => {}
    }
}

/// Applies `visitor` (a rewrite) to a statement and to the statement an EXPLAIN wraps.
pub(crate) fn visit_statement_mut<V: VisitorMut>(statement: &mut Statement, visitor: &mut V) {
    match statement {
        Statement::Statement(inner) => {
            let _ = inner.visit(visitor);
        }
        Statement::Explain(explain) => visit_statement_mut(&mut explain.statement, visitor),
        _ => {}
    }
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
    check_chains(sql)?;
    let sql = rewrite_ref_clauses(sql)?;
    let dialect = LakeDialect::default();
    let mut statements = DFParserBuilder::new(sql.as_ref())
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
    if let Some((kind, target)) = iceberg_write_target(&statement) {
        let copy = if kind == "table" {
            format!(
                ", or copy rows into Lake with CREATE TABLE lake.<namespace>.<table> AS SELECT … FROM {target}"
            )
        } else {
            String::new()
        };
        return Err(QueryError::Unsupported(format!(
            "writing {kind} {target}: catalog {ICEBERG_CATALOG} is read-only. Lake reads Iceberg tables from their REST catalog and never changes them; change them with the engine that owns them{copy}"
        )));
    }
    let mut rewriter = Rewriter {
        error: None,
        placeholders: 0,
        depth: 0,
    };
    visit_statement_mut(&mut statement, &mut rewriter);
    if let Some(e) = rewriter.error {
        return Err(e);
    }
    let (mut tables, _ctes) =
        resolve_table_references(&statement, true).map_err(|e| QueryError::Sql(e.to_string()))?;
    // A table function call (`FROM lake_grants()`, `FROM generate_series(1, 3)`) names no
    // table, unless the same name is also used as a table in the statement.
    let mut factors = TableFactors::default();
    visit_statement(&statement, &mut factors);
    tables.retain(|t| !factors.functions.contains(t) || factors.tables.contains(t));
    normalize_assignments(&mut statement)?;
    let targets = write_targets(&statement);
    Ok(ParsedStatement {
        statement,
        tables,
        functions: factors.functions,
        targets,
    })
}

/// Checks and normalizes the columns an `UPDATE … SET` assigns, which DataFusion 54 takes
/// as written (`SET V = 1` would miss column `v`, `SET other.v = 1` would write `v`, and a
/// column assigned twice would keep the last value): each becomes its bare name, unquoted
/// names lowercased as everywhere else in SQL (DataFusion's identifier normalization); a
/// qualifier must name the table being updated (its alias, or its name).
///
/// # Errors
/// [`QueryError::InvalidArgument`] for a qualifier that names another table, or a column
/// assigned twice (as PostgreSQL and DuckDB refuse it).
fn normalize_assignments(statement: &mut Statement) -> Result<(), QueryError> {
    let Statement::Statement(ast) = statement else {
        return Ok(());
    };
    let Ast::Update(update) = ast.as_mut() else {
        return Ok(());
    };
    let (table, alias) = match &update.table.relation {
        TableFactor::Table { name, alias, .. } => (
            name.0
                .iter()
                .filter_map(|p| p.as_ident())
                .map(normalize)
                .collect::<Vec<_>>(),
            alias.as_ref().map(|a| normalize(&a.name)),
        ),
        _ => return Ok(()),
    };
    let mut assigned = std::collections::BTreeSet::new();
    for assignment in &mut update.assignments {
        let AssignmentTarget::ColumnName(name) = &mut assignment.target else {
            continue;
        };
        let parts: Vec<String> = name
            .0
            .iter()
            .filter_map(|p| p.as_ident())
            .map(normalize)
            .collect();
        let Some((column, qualifier)) = parts.split_last() else {
            continue;
        };
        if !qualifier.is_empty() {
            // The alias when there is one (as in SQL), else the table's name or its tail.
            let names_target = match &alias {
                Some(alias) => qualifier.len() == 1 && &qualifier[0] == alias,
                None => table.ends_with(qualifier),
            };
            if !names_target {
                return Err(QueryError::InvalidArgument(format!(
                    "UPDATE … SET {name}: the column's qualifier must name the table being updated ({}); or write the bare column",
                    alias.clone().unwrap_or_else(|| table.join("."))
                )));
            }
        }
        if !assigned.insert(column.clone()) {
            return Err(QueryError::InvalidArgument(format!(
                "UPDATE … SET assigns column {column} more than once"
            )));
        }
        *name = ObjectName::from(vec![Ident::with_quote('"', column.clone())]);
    }
    Ok(())
}

/// The DECIMAL type that holds number literal `text` exactly, for a literal with a decimal
/// point, no exponent, more significant digits than a DOUBLE keeps (15) and at most 38:
/// DataFusion 54 would read it as a DOUBLE, and `1234567890123456.78` would become
/// `…456.8` (PostgreSQL and DuckDB read it as a DECIMAL). Shorter literals stay DOUBLEs,
/// which a comparison or assignment with a DECIMAL reads back exactly as written
/// ([`crate::decimal_literals`]).
fn exact_decimal(text: &str) -> Option<datafusion::sql::sqlparser::ast::DataType> {
    use datafusion::sql::sqlparser::ast::{DataType, ExactNumberInfo};
    let (whole, fraction) = text.split_once('.')?;
    if !whole.bytes().all(|b| b.is_ascii_digit()) || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    let significant = digits.trim_start_matches('0').len();
    let precision = whole.trim_start_matches('0').len().max(1) + fraction.len();
    (significant > 15 && precision <= 38).then_some(DataType::Decimal(
        ExactNumberInfo::PrecisionAndScale(precision as u64, fraction.len() as i64),
    ))
}

/// Refuses a statement with more than [`CHAIN_MAX`] set operations or joins, counted on its
/// tokens (the tokenizer, unlike everything after it, does not recurse), so a long chain
/// never reaches code that would exhaust the stack.
///
/// # Errors
/// [`QueryError::TooLarge`] naming the count and the limit; [`QueryError::Sql`] for text
/// that does not tokenize.
fn check_chains(sql: &str) -> Result<(), QueryError> {
    let upper = sql.to_ascii_uppercase();
    let mentions = ["UNION", "INTERSECT", "EXCEPT", "JOIN"]
        .iter()
        .map(|k| upper.matches(k).count())
        .sum::<usize>();
    if mentions <= CHAIN_MAX {
        return Ok(());
    }
    let dialect = LakeDialect::default();
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize()
        .map_err(|e| QueryError::Sql(e.to_string()))?;
    let count = |keywords: &[Keyword]| {
        tokens
            .iter()
            .filter(|t| matches!(t, Token::Word(w) if w.quote_style.is_none() && keywords.contains(&w.keyword)))
            .count()
    };
    for (what, n) in [
        (
            "set operations (UNION, INTERSECT, EXCEPT)",
            count(&[Keyword::UNION, Keyword::INTERSECT, Keyword::EXCEPT]),
        ),
        ("joins", count(&[Keyword::JOIN])),
    ] {
        if n > CHAIN_MAX {
            return Err(QueryError::TooLarge(format!(
                "the statement has {n} {what}; at most {CHAIN_MAX} are accepted (load the rows into a table and query that instead)"
            )));
        }
    }
    Ok(())
}

/// Rewrites time-travel clauses (see the module docs) and numbers JDBC/ODBC-style `?`
/// placeholders as `$1, $2, …` in order of appearance, which is how DataFusion binds
/// positional parameters; row-value `IN (subquery)` becomes `EXISTS` subqueries
/// ([`row_in`]).
struct Rewriter {
    error: Option<QueryError>,
    placeholders: usize,
    depth: usize,
}

impl VisitorMut for Rewriter {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if let Err(e) = row_in::rewrite_where_clauses(query) {
            self.error = Some(e);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        self.depth -= 1;
        // After its operands were visited, so a placeholder the rewrite copies is numbered
        // once.
        if let Err(e) = row_in::rewrite_predicate(expr) {
            self.error = Some(e);
            return ControlFlow::Break(());
        }
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
        if let Expr::Value(v) = expr
            && let Value::Number(text, _) = &v.value
            && let Some(data_type) = exact_decimal(text)
        {
            *expr = Expr::Cast {
                kind: datafusion::sql::sqlparser::ast::CastKind::Cast,
                expr: Box::new(Expr::value(Value::SingleQuotedString(text.clone()))),
                data_type,
                array: false,
                format: None,
            };
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<()> {
        // iceberg.a.b.t → iceberg."a.b".t
        let parts = &mut name.0;
        let is_iceberg = matches!(parts.first(), Some(ObjectNamePart::Identifier(first)) if normalize(first) == ICEBERG_CATALOG);
        if is_iceberg && parts.len() > 3 {
            let levels: Option<Vec<String>> = parts[1..parts.len() - 1]
                .iter()
                .map(|p| match p {
                    ObjectNamePart::Identifier(ident) => Some(normalize(ident)),
                    _ => None,
                })
                .collect();
            if let Some(levels) = levels {
                let last = parts.len() - 1;
                let table = parts[last].clone();
                let catalog = parts[0].clone();
                *parts = vec![
                    catalog,
                    ObjectNamePart::Identifier(Ident::with_quote('"', levels.join("."))),
                    table,
                ];
            }
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
        let travel = match version.take() {
            Some(clause) => match version_spec(&clause) {
                Ok(travel) => travel,
                Err(e) => {
                    self.error = Some(e);
                    return ControlFlow::Break(());
                }
            },
            None => TimeTravel::Latest,
        };
        let Some(ObjectNamePart::Identifier(last)) = name.0.last_mut() else {
            if travel == TimeTravel::Latest {
                return ControlFlow::Continue(());
            }
            self.error = Some(QueryError::Sql(format!("cannot time-travel on {name}")));
            return ControlFlow::Break(());
        };
        let original = last.clone();
        let plain = normalize(&original);
        let key = table_key(&plain, &travel);
        if key == plain {
            return ControlFlow::Continue(());
        }
        // Quoted, so normalization keeps the key intact.
        *last = Ident::with_quote('"', key);
        if alias.is_none() {
            *alias = Some(TableAlias {
                explicit: true,
                name: original,
                columns: vec![],
                at: None,
            });
        }
        ControlFlow::Continue(())
    }
}

/// DataFusion's identifier normalization: unquoted identifiers are lower-cased.
pub(crate) fn normalize(ident: &Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    }
}

fn version_spec(clause: &TableVersion) -> Result<TimeTravel, QueryError> {
    match clause {
        TableVersion::VersionAsOf(expr) => match literal(expr) {
            Some(Literal::Number(n)) => n.parse::<i64>().map(TimeTravel::Number).map_err(|_| {
                QueryError::Sql(format!(
                    "VERSION AS OF needs a version number (1, 2, …), an Iceberg snapshot id, or an Iceberg branch or tag name in quotes; got {n}"
                ))
            }),
            _ => Err(QueryError::Sql(format!(
                "VERSION AS OF needs a version number (1, 2, …), an Iceberg snapshot id, or an Iceberg branch or tag name in quotes; got {expr}"
            ))),
        },
        TableVersion::ForSystemTimeAsOf(Expr::Function(function))
            if function.name.to_string() == REF_MARKER =>
        {
            match &function.args {
                FunctionArguments::List(list) => match list.args.as_slice() {
                    [FunctionArg::Unnamed(FunctionArgExpr::Expr(expr))] => match literal(expr) {
                        Some(Literal::String(name)) if !name.is_empty() => Ok(TimeTravel::Name(name)),
                        _ => Err(QueryError::Sql("VERSION AS OF needs a non-empty ref name".into())),
                    },
                    _ => Err(QueryError::Sql("VERSION AS OF takes one ref name".into())),
                },
                _ => Err(QueryError::Sql("VERSION AS OF takes one ref name".into())),
            }
        }
        TableVersion::TimestampAsOf(expr) | TableVersion::ForSystemTimeAsOf(expr) => {
            match literal(expr) {
                Some(Literal::String(s)) => {
                    let utc: Tz = "+00:00".parse().map_err(QueryError::from)?;
                    let at = string_to_datetime(&utc, &s).map_err(|e| {
                        QueryError::Sql(format!(
                            "TIMESTAMP AS OF needs a timestamp such as '2026-11-29 10:00:00' or '2026-11-29T10:00:00Z' (UTC unless an offset is given); {s:?}: {e}"
                        ))
                    })?;
                    Ok(TimeTravel::AsOfMs(at.timestamp_millis()))
                }
                Some(Literal::Number(n)) => n.parse::<i64>().map(TimeTravel::AsOfMs).map_err(|_| {
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
            "unsupported time-travel clause {other}; use VERSION AS OF n, VERSION AS OF 'branch-or-tag' or TIMESTAMP AS OF 'timestamp'"
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

/// The Iceberg table a reference names: (namespace levels, table key) when its catalog is
/// `iceberg`.
pub fn iceberg_table(reference: &TableReference) -> Option<(Vec<String>, String)> {
    match reference {
        TableReference::Full {
            catalog,
            schema,
            table,
        } if catalog.as_ref() == ICEBERG_CATALOG => {
            Some((crate::iceberg::namespace_levels(schema), table.to_string()))
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimize_names_its_table_and_refuses_the_clauses_lake_does_not_take() {
        let target = |sql: &str| optimize_target(&parse(sql).expect("parses").statement);
        for (sql, table) in [
            ("OPTIMIZE ns.t", "ns.t"),
            ("OPTIMIZE TABLE lake.ns.t", "lake.ns.t"),
            ("optimize t", "t"),
        ] {
            let got = target(sql).expect("an OPTIMIZE").expect("accepted");
            assert_eq!(got.to_string(), table, "{sql}");
        }
        assert!(target("SELECT 1").is_none());
        assert!(target("INSERT INTO t VALUES (1)").is_none());
        for (sql, clause) in [
            ("OPTIMIZE ns.t WHERE x > 1", "WHERE"),
            ("OPTIMIZE ns.t ZORDER BY (x)", "ZORDER BY"),
            ("OPTIMIZE TABLE ns.t FINAL", "FINAL"),
            ("OPTIMIZE TABLE ns.t ON CLUSTER c", "ON CLUSTER"),
        ] {
            let err = target(sql)
                .expect("an OPTIMIZE")
                .expect_err(sql)
                .to_string();
            assert!(
                err.contains(clause) && err.contains("OPTIMIZE ns.t"),
                "{sql}: {err}"
            );
        }
    }

    fn tables(sql: &str) -> Vec<String> {
        parse(sql)
            .expect("parses")
            .tables
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn table_function_calls_name_no_table_unless_the_name_is_also_a_table() {
        let names = tables;
        assert!(names("SELECT * FROM lake_grants()").is_empty());
        assert!(names("EXPLAIN SELECT * FROM generate_series(1, 3)").is_empty());
        assert_eq!(names("SELECT * FROM lake_grants"), vec!["lake_grants"]);
        assert_eq!(
            names("SELECT * FROM lake_grants() AS f JOIN lake_grants AS t ON true"),
            vec!["lake_grants"],
            "a table of the same name is still a table"
        );
    }

    #[test]
    fn calls_finds_table_functions_in_every_from_clause() {
        let calls = |sql: &str| parse(sql).expect("parses").calls("lake_grants");
        assert!(calls("SELECT * FROM lake_grants()"));
        assert!(calls("EXPLAIN SELECT * FROM lake_grants()"));
        assert!(calls(
            "WITH g AS (SELECT * FROM lake_grants()) SELECT count(*) FROM g"
        ));
        assert!(calls(
            "SELECT 1 WHERE EXISTS (SELECT 1 FROM lake_grants() WHERE principal = 'a')"
        ));
        assert!(!calls("SELECT * FROM lake_grants"), "a table, not a call");
        assert!(!calls("SELECT * FROM generate_series(1, 3)"));
        assert!(!calls("SELECT 1"));
    }

    #[test]
    fn time_travel_clauses_become_table_keys() {
        assert_eq!(tables("SELECT * FROM t VERSION AS OF 3"), ["t@v3"]);
        assert_eq!(tables("SELECT * FROM t FOR VERSION AS OF 3"), ["t@v3"]);
        assert_eq!(
            tables("SELECT * FROM t TIMESTAMP AS OF 1700000000000"),
            ["t@t1700000000000"]
        );
        assert_eq!(
            tables("SELECT * FROM t FOR TIMESTAMP AS OF 1700000000000"),
            ["t@t1700000000000"]
        );
        assert_eq!(tables("SELECT * FROM t VERSION AS OF 'dev'"), ["t@rdev"]);
        assert_eq!(
            tables("select * from t for version as of 'it''s'"),
            ["t@rit's"]
        );
        // Strings and comments are not rewritten.
        let parsed = parse("SELECT 'VERSION AS OF ''x''' AS s -- FOR VERSION AS OF 'y'\nFROM t")
            .expect("parses");
        let text = parsed.statement.to_string();
        assert!(text.contains("'VERSION AS OF ''x'''"), "{text}");
        assert!(!text.contains("SYSTEM_TIME"), "{text}");
        assert_eq!(
            split_table_key("t@rit's@x"),
            ("t".to_string(), TimeTravel::Name("it's@x".into()))
        );
        assert_eq!(
            split_table_key("t@v-1"),
            ("t".to_string(), TimeTravel::Number(-1))
        );
        assert_eq!(split_table_key("t"), ("t".to_string(), TimeTravel::Latest));
        // A quoted name with `@` or `%` is escaped, never read as a clause.
        assert_eq!(tables(r#"SELECT * FROM "x@rv1""#), ["x%40rv1"]);
        assert_eq!(
            split_table_key(&table_key("a%40@b", &TimeTravel::Name("v@1".into()))),
            ("a%40@b".to_string(), TimeTravel::Name("v@1".into()))
        );
        let err = parse("SELECT * FROM t VERSION AS OF ''").expect_err("empty ref");
        assert!(err.to_string().contains("non-empty"), "{err}");
    }

    #[test]
    fn multi_level_iceberg_names_collapse_into_one_schema() {
        let parsed =
            parse("SELECT * FROM iceberg.lab.robots.runs VERSION AS OF 'dev'").expect("parses");
        assert_eq!(
            parsed
                .tables
                .iter()
                .filter_map(iceberg_table)
                .collect::<Vec<_>>(),
            [(vec!["lab".into(), "robots".into()], "runs@rdev".to_string())]
        );
        let parsed =
            parse("SELECT * FROM iceberg.a.b.c.t JOIN iceberg.\"a.b\".t2 ON true").expect("parses");
        let mut refs: Vec<_> = parsed.tables.iter().filter_map(iceberg_table).collect();
        refs.sort();
        assert_eq!(
            refs,
            [
                (vec!["a".into(), "b".into()], "t2".to_string()),
                (vec!["a".into(), "b".into(), "c".into()], "t".to_string())
            ]
        );
    }

    #[test]
    fn writes_into_iceberg_are_refused_and_reads_from_it_are_not() {
        for sql in [
            "INSERT INTO iceberg.s.t VALUES (1)",
            "DELETE FROM iceberg.s.t",
            "UPDATE iceberg.s.t SET a = 1",
            "DROP TABLE iceberg.s.t",
            "CREATE TABLE iceberg.s.t (a INT)",
            "ALTER TABLE iceberg.s.t ADD COLUMN b INT",
            "TRUNCATE TABLE iceberg.s.t",
            "CREATE SCHEMA iceberg.s",
            "INSERT INTO ICEBERG.a.b.t VALUES (1)",
        ] {
            let err = parse(sql)
                .err()
                .unwrap_or_else(|| panic!("{sql} was accepted"));
            assert!(err.to_string().contains("read-only"), "{sql}: {err}");
        }
        for sql in [
            "INSERT INTO lake.default.t SELECT * FROM iceberg.s.t",
            "CREATE TABLE lake.default.t AS SELECT * FROM iceberg.s.t",
            "SELECT * FROM iceberg.s.t",
        ] {
            assert!(parse(sql).is_ok(), "{sql}");
        }
    }
}

/// The SQL front end reads client text: whatever it is, the answer is a statement or an
/// error naming what is wrong, never a panic or a stack overflow.
#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_text_parses_or_is_refused(sql in ".{0,300}") {
            let _ = super::parse(&sql);
        }

        #[test]
        fn any_string_of_sql_tokens_parses_or_is_refused(tokens in proptest::collection::vec(prop::sample::select(vec![
            "SELECT", "FROM", "WHERE", "(", ")", ",", "1", "'x'", "t", "lake.ns.t", "iceberg.a.b",
            "UNION", "ALL", "JOIN", "ON", "VERSION", "AS", "OF", "TIMESTAMP", "@", "v3", "COPY", "TO",
            "INSERT", "INTO", "VALUES", "CREATE", "TABLE", "EXPLAIN", "ANALYZE", "WITH", "RECURSIVE",
            "-", "+", "*", "?", "$1", "::", "[", "]", ".", ";", "\"", "--", "/*", "*/",
        ]), 0..60)) {
            let _ = super::parse(&tokens.join(" "));
        }
    }
}
