//! Scalar indexes on Lake tables: what `CREATE INDEX` and `DROP INDEX` ask for, checked
//! before anything is built.
//!
//! An index is Lance's (lance-index's scalar indexes, trained over the table's rows and
//! stored next to its fragments); building or dropping one is one new version of the
//! table, committed through Metasrv like any write (`Datasets::create_index`). A Lance
//! scan uses a table's indexes for the filters they answer (`=`, `IN`, ranges,
//! `IS NULL`) and reads the fragments an index does not cover yet (rows appended since it
//! was built) in full, so answers never depend on an index being up to date; a maintenance
//! run (`OPTIMIZE`, or the automatic one) brings the indexes up to date.
//!
//! ```sql
//! CREATE INDEX [IF NOT EXISTS] [name] ON ns.t [USING BTREE | BITMAP | ZONEMAP | BRIN | BLOOM] (column)
//! DROP INDEX [IF EXISTS] name ON ns.t
//! ```

use arrow::datatypes::DataType;
use datafusion::sql::TableReference;
use datafusion::sql::parser::Statement;
use datafusion::sql::sqlparser::ast::{
    Expr, IndexOption, IndexType as SqlIndexType, ObjectName, ObjectType, Statement as Ast,
};
use lance_index::IndexType;
use lance_index::scalar::{BuiltinIndexType, ScalarIndexParams};

use crate::QueryError;
use crate::sql::{given_clauses, normalize};

/// Longest index name accepted, in bytes (Lance keeps the name in every manifest).
pub const INDEX_NAME_MAX: usize = 128;

/// The kinds of scalar index Lake builds: Lance's builtin scalar indexes for one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    /// Sorted keys with row addresses (Lance `BTree`): equality, `IN` and range lookups on
    /// columns with many distinct values, such as keys. The default.
    BTree,
    /// One row bitmap per distinct value (Lance `Bitmap`): equality and `IN` on columns
    /// with few distinct values (a status, a country).
    Bitmap,
    /// Minimum and maximum per zone of rows (Lance `ZoneMap`, a block range index:
    /// `USING BRIN` or `USING ZONEMAP`): skips zones a range filter cannot match; small,
    /// and pays off where the column is clustered (appended in time order).
    ZoneMap,
    /// A Bloom filter per zone of rows (Lance `BloomFilter`): skips zones an equality
    /// filter cannot match.
    BloomFilter,
}

impl IndexKind {
    /// The name SQL gives the kind (`USING …`).
    pub fn sql_name(self) -> &'static str {
        match self {
            Self::BTree => "BTREE",
            Self::Bitmap => "BITMAP",
            Self::ZoneMap => "ZONEMAP",
            Self::BloomFilter => "BLOOM",
        }
    }

    /// Lance's index type and training parameters for the kind (defaults).
    pub fn lance(self) -> (IndexType, ScalarIndexParams) {
        let (kind, builtin) = match self {
            Self::BTree => (IndexType::BTree, BuiltinIndexType::BTree),
            Self::Bitmap => (IndexType::Bitmap, BuiltinIndexType::Bitmap),
            Self::ZoneMap => (IndexType::ZoneMap, BuiltinIndexType::ZoneMap),
            Self::BloomFilter => (IndexType::BloomFilter, BuiltinIndexType::BloomFilter),
        };
        (kind, ScalarIndexParams::for_builtin(builtin))
    }

    /// The kind a `USING` names.
    ///
    /// # Errors
    /// [`QueryError::Unsupported`] for other index methods (HASH, GIN, GiST, …), naming the
    /// ones Lake builds.
    fn from_sql(using: &SqlIndexType) -> Result<Self, QueryError> {
        let name = match using {
            SqlIndexType::BTree => return Ok(Self::BTree),
            SqlIndexType::BRIN => return Ok(Self::ZoneMap),
            SqlIndexType::Bloom => return Ok(Self::BloomFilter),
            SqlIndexType::Custom(name) => name.value.to_ascii_uppercase(),
            other => other.to_string(),
        };
        match name.as_str() {
            "BITMAP" => Ok(Self::Bitmap),
            "ZONEMAP" => Ok(Self::ZoneMap),
            "BLOOMFILTER" => Ok(Self::BloomFilter),
            _ => Err(QueryError::Unsupported(format!(
                "index method {name}: Lake builds BTREE (the default), BITMAP, ZONEMAP (or BRIN) and BLOOM indexes"
            ))),
        }
    }

    /// Whether the kind can index a column of type `data_type`: scalar types only (not
    /// lists, structs, maps or FILE columns), and not floating point: Lake compares floats
    /// as SQL does (`-0.0 = 0.0`, NaN equal to itself; `lake_canonical_float`), so a filter
    /// on a float column is evaluated by the replica and never reaches a Lance index, and
    /// Lance's zone map would skip a zone of NaNs for `v > 0` (found by an attack on this
    /// feature). Bloom filters take the types Lance's `BloomFilter` hashes.
    fn takes(self, data_type: &DataType) -> bool {
        let scalar = data_type.is_primitive()
            || matches!(
                data_type,
                DataType::Boolean
                    | DataType::Utf8
                    | DataType::LargeUtf8
                    | DataType::Utf8View
                    | DataType::Binary
                    | DataType::LargeBinary
                    | DataType::BinaryView
                    | DataType::FixedSizeBinary(_)
            );
        if data_type.is_floating() {
            return false;
        }
        match self {
            Self::BTree | Self::Bitmap | Self::ZoneMap => scalar,
            Self::BloomFilter => {
                data_type.is_integer()
                    || matches!(
                        data_type,
                        DataType::Utf8
                            | DataType::LargeUtf8
                            | DataType::Binary
                            | DataType::LargeBinary
                            | DataType::Date32
                            | DataType::Date64
                            | DataType::Time32(_)
                            | DataType::Time64(_)
                            | DataType::Timestamp(..)
                    )
            }
        }
    }

    /// What [`Self::takes`] accepts, in words.
    fn takes_text(self) -> &'static str {
        match self {
            Self::BTree | Self::Bitmap | Self::ZoneMap => {
                "integers, decimals, strings, binary, booleans, dates, times and timestamps (not floating point, whose comparisons the replica evaluates itself)"
            }
            Self::BloomFilter => "integers, strings, binary, dates, times and timestamps",
        }
    }
}

/// A `CREATE INDEX` statement, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateIndex {
    /// The table, as written.
    pub table: TableReference,
    /// The index's name: as given, or `<column>_idx` (Lance's default).
    pub name: String,
    /// The one indexed column, normalized as DataFusion normalizes identifiers.
    pub column: String,
    /// What to build.
    pub kind: IndexKind,
    /// `IF NOT EXISTS`: an index of that name already there is success.
    pub if_not_exists: bool,
}

/// A `DROP INDEX name ON table` statement, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropIndex {
    /// The table, as written.
    pub table: TableReference,
    /// The index's name.
    pub name: String,
    /// `IF EXISTS`: no index of that name is success.
    pub if_exists: bool,
}

/// The index a `CREATE INDEX` statement asks for; `None` for any other statement.
///
/// # Errors
/// [`QueryError::Unsupported`] for what Lake does not build, naming it: more than one
/// column or an expression, `UNIQUE`, `CONCURRENTLY`, `INCLUDE`, `NULLS [NOT] DISTINCT`,
/// `WITH (…)`, a partial index (`WHERE`), an operator class, ordering (`DESC`,
/// `NULLS FIRST`), and index methods other than BTREE, BITMAP, ZONEMAP/BRIN and BLOOM;
/// [`QueryError::InvalidArgument`] for a bad index name ([`check_name`]).
pub fn create_statement(statement: &Statement) -> Option<Result<CreateIndex, QueryError>> {
    let Statement::Statement(ast) = statement else {
        return None;
    };
    let Ast::CreateIndex(create) = ast.as_ref() else {
        return None;
    };
    Some((|| {
        let clauses = [
            (create.unique, "UNIQUE"),
            (create.concurrently, "CONCURRENTLY"),
            (!create.include.is_empty(), "INCLUDE"),
            (create.nulls_distinct.is_some(), "NULLS [NOT] DISTINCT"),
            (!create.with.is_empty(), "WITH (…)"),
            (create.predicate.is_some(), "WHERE (a partial index)"),
            (!create.alter_options.is_empty(), "ALGORITHM / LOCK"),
        ];
        let given = given_clauses(&clauses);
        if !given.is_empty() {
            return Err(QueryError::Unsupported(format!(
                "CREATE INDEX … {}: Lake builds an index on one column of a table (`CREATE INDEX [name] ON ns.t [USING BTREE | BITMAP | ZONEMAP | BLOOM] (column)`)",
                given.join(", ")
            )));
        }
        let [column] = create.columns.as_slice() else {
            return Err(QueryError::Unsupported(format!(
                "CREATE INDEX on {} columns: a Lake index covers exactly one column; create one index per column",
                create.columns.len()
            )));
        };
        let order = &column.column.options;
        if column.operator_class.is_some()
            || column.column.with_fill.is_some()
            || order.asc.is_some()
            || order.nulls_first.is_some()
        {
            return Err(QueryError::Unsupported(format!(
                "CREATE INDEX … ({}): name the column only; Lake's indexes take no operator class or ordering",
                column.column
            )));
        }
        let column = match &column.column.expr {
            Expr::Identifier(ident) => normalize(ident),
            other => {
                return Err(QueryError::Unsupported(format!(
                    "CREATE INDEX … ({other}): a Lake index covers a column, not an expression"
                )));
            }
        };
        let mut using = create.using.as_ref();
        for option in &create.index_options {
            match option {
                IndexOption::Using(kind) => using = Some(kind),
                IndexOption::Comment(_) => {
                    return Err(QueryError::Unsupported(
                        "CREATE INDEX … COMMENT: Lake's indexes keep no comment".into(),
                    ));
                }
            }
        }
        let kind = using.map_or(Ok(IndexKind::BTree), IndexKind::from_sql)?;
        let name = match &create.name {
            Some(name) => index_name(name)?,
            None => {
                let name = format!("{column}_idx");
                check_name(&name).map_err(|_| {
                    QueryError::InvalidArgument(format!(
                        "an unnamed index is named after its column, and {:?} is no index name (1 to {INDEX_NAME_MAX} ASCII letters, digits and underscores): name the index (`CREATE INDEX my_idx ON …`)",
                        name.chars().take(40).collect::<String>()
                    ))
                })?;
                name
            }
        };
        check_name(&name)?;
        Ok(CreateIndex {
            table: table_reference(&create.table_name)?,
            name,
            column,
            kind,
            if_not_exists: create.if_not_exists,
        })
    })())
}

/// The index a `DROP INDEX name ON table` statement removes; `None` for any other
/// statement.
///
/// # Errors
/// [`QueryError::InvalidArgument`] without `ON table` (an index name is unique within its
/// table only) or with more than one name; [`QueryError::Unsupported`] for `CASCADE`.
pub fn drop_statement(statement: &Statement) -> Option<Result<DropIndex, QueryError>> {
    let Statement::Statement(ast) = statement else {
        return None;
    };
    let Ast::Drop {
        object_type: ObjectType::Index,
        if_exists,
        names,
        cascade,
        table,
        ..
    } = ast.as_ref()
    else {
        return None;
    };
    Some((|| {
        let Some(table) = table else {
            return Err(QueryError::InvalidArgument(
                "DROP INDEX name: say which table's index (`DROP INDEX name ON ns.t`); index names are unique within a table only".into(),
            ));
        };
        let [name] = names.as_slice() else {
            return Err(QueryError::InvalidArgument(format!(
                "DROP INDEX names {} indexes: drop one at a time",
                names.len()
            )));
        };
        if *cascade {
            return Err(QueryError::Unsupported(
                "DROP INDEX … CASCADE: nothing depends on a Lake index; drop it without CASCADE"
                    .into(),
            ));
        }
        Ok(DropIndex {
            table: table_reference(table)?,
            name: index_name(name)?,
            if_exists: *if_exists,
        })
    })())
}

/// Checks an index name: 1 to [`INDEX_NAME_MAX`] bytes of letters, digits and `_`, not
/// starting with `__` (Lance's own indexes, such as its fragment-reuse index, are named so).
///
/// # Errors
/// [`QueryError::InvalidArgument`] naming what is allowed.
pub fn check_name(name: &str) -> Result<(), QueryError> {
    let allowed = !name.is_empty()
        && name.len() <= INDEX_NAME_MAX
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__");
    if allowed {
        Ok(())
    } else {
        let shown: String = name.chars().take(40).collect();
        Err(QueryError::InvalidArgument(format!(
            "index name {shown:?}: an index name is 1 to {INDEX_NAME_MAX} ASCII letters, digits and underscores, not starting with two underscores"
        )))
    }
}

/// Checks that `kind` can index `column` of type `data_type` (`table` names the table in
/// the message).
///
/// # Errors
/// [`QueryError::InvalidArgument`] naming the column, its type and what the kind takes.
pub fn check_column(
    kind: IndexKind,
    table: &str,
    column: &str,
    data_type: &DataType,
) -> Result<(), QueryError> {
    if kind.takes(data_type) {
        return Ok(());
    }
    Err(QueryError::InvalidArgument(format!(
        "column {column} of {table} is {data_type}: a {} index takes {}",
        kind.sql_name(),
        kind.takes_text()
    )))
}

/// The one-part name of an index (`idx`; a qualified name is refused: the table comes from
/// `ON`).
fn index_name(name: &ObjectName) -> Result<String, QueryError> {
    match name.0.as_slice() {
        [part] => part.as_ident().map(normalize).ok_or_else(|| {
            QueryError::InvalidArgument(format!("index name {name}: give a plain name"))
        }),
        _ => Err(QueryError::InvalidArgument(format!(
            "index name {name}: give the index's own name and the table in ON (`… idx ON ns.t`)"
        ))),
    }
}

fn table_reference(name: &ObjectName) -> Result<TableReference, QueryError> {
    datafusion::sql::planner::object_name_to_table_reference(name.clone(), true)
        .map_err(QueryError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse;

    fn create(sql: &str) -> Result<CreateIndex, QueryError> {
        create_statement(&parse(sql).expect("parses").statement).expect("a CREATE INDEX")
    }

    #[test]
    fn create_index_names_its_column_kind_and_default_name() {
        let got = create("CREATE INDEX ON ns.t (Key)").expect("accepted");
        assert_eq!(got.table.to_string(), "ns.t");
        assert_eq!(
            (got.name.as_str(), got.column.as_str(), got.kind),
            ("key_idx", "key", IndexKind::BTree)
        );
        assert!(!got.if_not_exists);
        for (sql, kind) in [
            (
                "CREATE INDEX k ON ns.t USING bitmap (\"Key\")",
                IndexKind::Bitmap,
            ),
            (
                "CREATE INDEX k ON ns.t USING BRIN (\"Key\")",
                IndexKind::ZoneMap,
            ),
            (
                "CREATE INDEX k USING zonemap ON ns.t (\"Key\")",
                IndexKind::ZoneMap,
            ),
            (
                "CREATE INDEX k ON ns.t USING bloom (\"Key\")",
                IndexKind::BloomFilter,
            ),
            (
                "CREATE INDEX IF NOT EXISTS k ON ns.t USING btree (\"Key\")",
                IndexKind::BTree,
            ),
        ] {
            let got = create(sql).expect(sql);
            assert_eq!(
                (got.name.as_str(), got.column.as_str(), got.kind),
                ("k", "Key", kind),
                "{sql}"
            );
        }
        assert!(
            create("CREATE INDEX IF NOT EXISTS k ON ns.t (c)")
                .expect("ok")
                .if_not_exists
        );
    }

    #[test]
    fn create_index_refuses_what_lake_does_not_build_naming_it() {
        for (sql, named) in [
            ("CREATE INDEX k ON ns.t (a, b)", "2 columns"),
            ("CREATE INDEX k ON ns.t (a + 1)", "expression"),
            ("CREATE UNIQUE INDEX k ON ns.t (a)", "UNIQUE"),
            ("CREATE INDEX k ON ns.t (a) WHERE a > 1", "partial"),
            ("CREATE INDEX k ON ns.t USING hash (a)", "HASH"),
            ("CREATE INDEX k ON ns.t USING gin (a)", "GIN"),
            ("CREATE INDEX k ON ns.t (a DESC)", "ordering"),
            ("CREATE INDEX __k ON ns.t (a)", "two underscores"),
            ("CREATE INDEX \"k-1\" ON ns.t (a)", "letters, digits"),
            ("CREATE INDEX ns.k ON ns.t (a)", "own name"),
            ("CREATE INDEX ON ns.t (\"My Col\")", "name the index"),
        ] {
            let e = create(sql).expect_err(sql).to_string();
            assert!(e.contains(named), "{sql}: {e}");
        }
        let long = format!(
            "CREATE INDEX {} ON ns.t (a)",
            "k".repeat(INDEX_NAME_MAX + 1)
        );
        assert!(create(&long).is_err());
        let longest = format!("CREATE INDEX {} ON ns.t (a)", "k".repeat(INDEX_NAME_MAX));
        assert!(create(&longest).is_ok());
    }

    #[test]
    fn drop_index_needs_its_table() {
        let drop = |sql: &str| {
            drop_statement(&parse(sql).expect("parses").statement).expect("a DROP INDEX")
        };
        let got = drop("DROP INDEX IF EXISTS K ON lake.ns.t").expect("accepted");
        assert_eq!(
            (
                got.name.as_str(),
                got.table.to_string().as_str(),
                got.if_exists
            ),
            ("k", "lake.ns.t", true)
        );
        assert!(
            drop("DROP INDEX k")
                .expect_err("no table")
                .to_string()
                .contains("ON ns.t")
        );
        assert!(drop("DROP INDEX a, b ON ns.t").is_err());
        assert!(drop_statement(&parse("DROP TABLE ns.t").expect("parses").statement).is_none());
    }

    #[test]
    fn kinds_take_scalar_columns_only() {
        let list =
            DataType::List(arrow::datatypes::Field::new_list_field(DataType::Int64, true).into());
        for kind in [
            IndexKind::BTree,
            IndexKind::Bitmap,
            IndexKind::ZoneMap,
            IndexKind::BloomFilter,
        ] {
            assert!(check_column(kind, "ns.t", "c", &DataType::Int64).is_ok());
            assert!(check_column(kind, "ns.t", "c", &DataType::Utf8).is_ok());
            let e = check_column(kind, "ns.t", "c", &list)
                .expect_err("a list")
                .to_string();
            assert!(e.contains("column c of ns.t is List"), "{e}");
        }
        for kind in [
            IndexKind::BTree,
            IndexKind::Bitmap,
            IndexKind::ZoneMap,
            IndexKind::BloomFilter,
        ] {
            let e = check_column(kind, "ns.t", "c", &DataType::Float64).expect_err("a float");
            assert!(e.to_string().contains("Float64"), "{e}");
        }
        // Lance's Bloom filter hashes neither decimals nor booleans.
        for refused in [
            DataType::Decimal128(15, 2),
            DataType::Boolean,
            DataType::Utf8View,
        ] {
            assert!(check_column(IndexKind::BloomFilter, "ns.t", "c", &refused).is_err());
            assert!(check_column(IndexKind::BTree, "ns.t", "c", &refused).is_ok());
        }
    }
}
