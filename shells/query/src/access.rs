//! What a caller may do: grants on namespaces and catalogs.
//!
//! Grants live in the registry (`lake_core::registry`: [`GrantScope`] × [`Privilege`]),
//! written through Metasrv by SQL `GRANT` / `REVOKE` and replicated to every Query
//! replica's catalog cache with the rest of the registry, so all replicas decide the same
//! way at the same revision. A replica checks them on every path a client reaches:
//! statements (each table a statement names, at planning and again when its ticket is
//! redeemed), appends and ingest, DDL, listings (`GetDbSchemas`, `GetTables`,
//! `GetCatalogs` show only what the caller may read) and FILE reads and uploads (through
//! the table's privilege).
//!
//! | privilege | SQL word      | allows                                                  |
//! |-----------|---------------|---------------------------------------------------------|
//! | read      | `SELECT`      | reading tables, time travel, listings, FILE reads        |
//! | write     | `INSERT`      | also INSERT, appends, ingest into existing tables        |
//! | admin     | `ALL`         | also CREATE/DROP TABLE, GRANT/REVOKE on the scope         |
//!
//! Scopes: `SCHEMA ns` (one namespace of catalog `lake`), `DATABASE lake` (every namespace;
//! admin there also creates and drops namespaces) and `DATABASE iceberg` (the read-only
//! Iceberg catalog).
//!
//! `SELECT * FROM lake_grants()` lists the grants a caller may see ([`GrantsFunction`]).
//!
//! Superusers are the users file's `admin` users: they hold every privilege everywhere
//! and are who grants first. A replica without a users file authenticates nobody and
//! checks nothing ([`Access::Everyone`]: the loopback demo).

use std::sync::Arc;

use lake_core::registry::{GrantScope, Privilege, Registry};

use crate::QueryError;

/// The name [`GrantsFunction`] is called by in SQL.
pub const GRANTS_FUNCTION: &str = "lake_grants";

/// Who is asking, as far as grants are concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// No logins are configured: every call may do everything.
    Everyone,
    /// A superuser (an `admin` line of the users file): every privilege everywhere.
    Superuser(String),
    /// A logged-in principal: what its grants allow.
    User(String),
    /// Logins are required and the call carries none: it may do nothing. (The login layer
    /// lets no such call through; this keeps a missing principal from meaning anything.)
    Nobody,
}

impl Access {
    /// The principal's name (`None` for [`Access::Everyone`]).
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Everyone | Self::Nobody => None,
            Self::Superuser(name) | Self::User(name) => Some(name),
        }
    }

    /// Whether the caller holds at least `need` on `scope` in `registry`.
    pub fn allows(&self, registry: &Registry, scope: &GrantScope, need: Privilege) -> bool {
        match self {
            Self::Everyone | Self::Superuser(_) => true,
            Self::User(name) => registry.privilege(name, scope) >= Some(need),
            Self::Nobody => false,
        }
    }

    /// Checks that the caller holds at least `need` on `scope`; `doing` says what it
    /// asked for ("read lake.sales.orders").
    ///
    /// # Errors
    /// [`QueryError::PermissionDenied`] naming the caller, what it asked, the privilege it
    /// needs and holds, and the statement an admin runs to grant it.
    pub fn check(
        &self,
        registry: &Registry,
        scope: &GrantScope,
        need: Privilege,
        doing: &str,
    ) -> Result<(), QueryError> {
        if self.allows(registry, scope, need) {
            return Ok(());
        }
        let name = self.name().unwrap_or("anonymous");
        let held = match self {
            Self::User(name) => registry.privilege(name, scope),
            _ => None,
        };
        let held = held.map_or_else(|| "no grant".to_string(), |p| format!("only {}", p.name()));
        // A table's privilege also comes from its namespace: name both grants.
        let (also, grant) = match scope {
            GrantScope::Table { namespace: ns, .. } => (
                " (or its namespace)",
                format!(
                    "{}, or {} for all of namespace {ns}",
                    grant_statement(scope, need, name),
                    grant_statement(&self::namespace(ns), need, name)
                ),
            ),
            _ => ("", grant_statement(scope, need, name)),
        };
        Err(QueryError::PermissionDenied(format!(
            "permission denied: {name} may not {doing}: that needs {} on {scope}{also}, and {name} holds {held} there; a superuser or an admin of it can run {grant}",
            need.name(),
        )))
    }
}

/// The SQL word of a privilege in `GRANT`: `SELECT`, `INSERT` or `ALL`.
pub fn sql_word(privilege: Privilege) -> &'static str {
    match privilege {
        Privilege::Read => "SELECT",
        Privilege::Write => "INSERT",
        Privilege::Admin => "ALL",
    }
}

/// The SQL object of a scope in `GRANT … ON`: `SCHEMA ns`, `TABLE ns.t`, `DATABASE lake`,
/// `DATABASE iceberg`.
pub fn sql_object(scope: &GrantScope) -> String {
    match scope {
        GrantScope::Lake => "DATABASE lake".to_string(),
        GrantScope::Namespace(ns) => format!("SCHEMA {ns}"),
        GrantScope::Table { namespace, name } => format!("TABLE {namespace}.{name}"),
        GrantScope::Iceberg => "DATABASE iceberg".to_string(),
    }
}

/// `GRANT word ON object TO name`.
pub fn grant_statement(scope: &GrantScope, privilege: Privilege, name: &str) -> String {
    format!(
        "GRANT {} ON {} TO {name}",
        sql_word(privilege),
        sql_object(scope)
    )
}

/// A `GRANT` or `REVOKE` statement, read from SQL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessChange {
    /// `GRANT` (true) or `REVOKE`.
    pub grant: bool,
    /// The privilege granted or revoked; `None` is `REVOKE ALL` (every privilege).
    pub privilege: Option<Privilege>,
    /// What it covers.
    pub scopes: Vec<GrantScope>,
    /// To or from whom.
    pub principals: Vec<String>,
}

/// The words a grant takes, for error messages.
const GRANT_FORM: &str = "GRANT {SELECT | INSERT | ALL} ON {TABLE ns.t | SCHEMA ns | DATABASE lake | DATABASE iceberg} TO user, and REVOKE … FROM user";

/// Reads `statement` as a `GRANT` or `REVOKE` (`None` when it is neither).
///
/// Privileges: `SELECT` (or `READ`) is read, `INSERT` is write, `ALL [PRIVILEGES]` is
/// admin (for `REVOKE`: every privilege); several words mean the highest (for `REVOKE`,
/// the lowest). Objects: `SCHEMA ns` or `ALL TABLES IN SCHEMA ns` (`ns` or `lake.ns`),
/// `DATABASE lake`, `DATABASE iceberg`. Grantees: user names, optionally after `USER`.
///
/// # Errors
/// [`QueryError::Unsupported`] for anything else (table or column grants, roles, `WITH
/// GRANT OPTION`), naming the form Lake takes.
pub fn access_change(
    statement: &datafusion::sql::parser::Statement,
) -> Option<Result<AccessChange, QueryError>> {
    use datafusion::sql::sqlparser::ast::Statement as Ast;
    let datafusion::sql::parser::Statement::Statement(ast) = statement else {
        return None;
    };
    match ast.as_ref() {
        Ast::Grant(g) => {
            let extras = g.with_grant_option
                || g.as_grantor.is_some()
                || g.granted_by.is_some()
                || g.current_grants.is_some();
            Some(read_change(
                true,
                &g.privileges,
                g.objects.as_ref(),
                &g.grantees,
                extras,
            ))
        }
        Ast::Revoke(r) => Some(read_change(
            false,
            &r.privileges,
            r.objects.as_ref(),
            &r.grantees,
            r.granted_by.is_some(),
        )),
        _ => None,
    }
}

fn read_change(
    grant: bool,
    privileges: &datafusion::sql::sqlparser::ast::Privileges,
    objects: Option<&datafusion::sql::sqlparser::ast::GrantObjects>,
    grantees: &[datafusion::sql::sqlparser::ast::Grantee],
    extras: bool,
) -> Result<AccessChange, QueryError> {
    use datafusion::sql::sqlparser::ast::{
        Action, GrantObjects, GranteeName, GranteesType, ObjectName, Privileges,
    };
    let unsupported = |what: String| {
        QueryError::Unsupported(format!("{what} in a grant; Lake takes {GRANT_FORM}"))
    };
    if extras {
        return Err(unsupported(
            "WITH GRANT OPTION, GRANTED BY, AS or COPY/REVOKE CURRENT GRANTS (admin on a scope is what lets a user grant on it)".into(),
        ));
    }
    let privilege = match privileges {
        Privileges::All { .. } => (grant).then_some(Privilege::Admin),
        Privileges::Actions(actions) => {
            let mut levels = Vec::with_capacity(actions.len());
            for action in actions {
                levels.push(match action {
                    Action::Select { columns: None } | Action::Read => Privilege::Read,
                    Action::Insert { columns: None } => Privilege::Write,
                    other => return Err(unsupported(format!("privilege {other}"))),
                });
            }
            let level = if grant {
                levels.into_iter().max()
            } else {
                levels.into_iter().min()
            };
            Some(level.ok_or_else(|| unsupported("no privilege".into()))?)
        }
    };
    let words = |name: &ObjectName| -> Vec<String> {
        name.0
            .iter()
            .map(|part| {
                part.as_ident()
                    .map_or_else(|| part.to_string(), |i| i.value.clone())
            })
            .collect()
    };
    let namespace_scope = |name: &ObjectName| -> Result<GrantScope, QueryError> {
        let words = words(name);
        let ns = match words.as_slice() {
            [ns] => ns,
            [catalog, ns] if catalog == crate::sql::LAKE_CATALOG => ns,
            _ => {
                return Err(unsupported(format!(
                    "schema {name} (grants cover namespaces of catalog lake: SCHEMA ns or SCHEMA lake.ns)"
                )));
            }
        };
        lake_core::registry::validate_name("namespace", ns)
            .map_err(|e| QueryError::InvalidArgument(e.to_string()))?;
        Ok(namespace(ns))
    };
    let scopes = match objects {
        Some(GrantObjects::Schemas(names))
        | Some(GrantObjects::AllTablesInSchema { schemas: names }) => names
            .iter()
            .map(namespace_scope)
            .collect::<Result<Vec<_>, _>>()?,
        Some(GrantObjects::Tables(names)) => names
            .iter()
            .map(|name| {
                let words = words(name);
                let (ns, table) = match words.as_slice() {
                    [table] => (crate::sql::DEFAULT_NAMESPACE, table),
                    [ns, table] => (ns.as_str(), table),
                    [catalog, ns, table] if catalog == crate::sql::LAKE_CATALOG => {
                        (ns.as_str(), table)
                    }
                    _ => {
                        return Err(unsupported(format!(
                            "table {name} (table grants cover tables of catalog lake: TABLE t, TABLE ns.t or TABLE lake.ns.t)"
                        )));
                    }
                };
                for (kind, word) in [("namespace", ns), ("table", table.as_str())] {
                    lake_core::registry::validate_name(kind, word)
                        .map_err(|e| QueryError::InvalidArgument(e.to_string()))?;
                }
                Ok(table_scope(ns, table))
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(GrantObjects::Databases(names)) => names
            .iter()
            .map(|name| match words(name).as_slice() {
                [catalog] if catalog == crate::sql::LAKE_CATALOG => Ok(GrantScope::Lake),
                [catalog] if catalog == crate::sql::ICEBERG_CATALOG => Ok(GrantScope::Iceberg),
                _ => Err(unsupported(format!(
                    "database {name} (the catalogs are lake and iceberg)"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(unsupported(format!(
                "ON {other} (grants are per table, namespace or catalog)"
            )));
        }
        None => return Err(unsupported("a grant without ON".into())),
    };
    if scopes.contains(&GrantScope::Iceberg) && privilege == Some(Privilege::Write) {
        return Err(QueryError::InvalidArgument(
            "INSERT on catalog iceberg: it is read-only; grant SELECT (read) or ALL (admin: may grant on it)".into(),
        ));
    }
    let mut principals = Vec::with_capacity(grantees.len());
    for grantee in grantees {
        let name = match (&grantee.grantee_type, &grantee.name) {
            (GranteesType::None | GranteesType::User, Some(GranteeName::ObjectName(name))) => {
                match words(name).as_slice() {
                    [one] => one.clone(),
                    _ => return Err(unsupported(format!("grantee {name}"))),
                }
            }
            _ => {
                return Err(unsupported(format!(
                    "grantee {grantee} (grantees are user names)"
                )));
            }
        };
        crate::auth::validate_user_name(&name)?;
        principals.push(name);
    }
    Ok(AccessChange {
        grant,
        privilege,
        scopes,
        principals,
    })
}

/// The table function `lake_grants()`: the grants a caller may see, as rows of
/// `principal`, `scope` (`lake`, `lake.NAMESPACE` or `iceberg`) and `privilege` (`read`,
/// `write`, `admin`), sorted by principal, then catalog `lake`, its namespaces, `iceberg`. A user sees its own grants and every
/// grant on the scopes it administers; a superuser (or a deployment without logins) sees
/// them all.
#[derive(Debug)]
pub struct GrantsFunction {
    batch: arrow::array::RecordBatch,
}

impl GrantsFunction {
    /// The rows `access` may see in `registry`.
    ///
    /// # Errors
    /// [`QueryError::Execution`] if the batch cannot be built.
    pub fn new(registry: &Registry, access: &Access) -> Result<Self, QueryError> {
        use arrow::array::StringArray;
        use arrow::datatypes::{DataType, Field, Schema};
        let visible: Vec<(&str, &GrantScope, Privilege)> = registry
            .grants()
            .filter(|(principal, scope, _)| {
                access.name() == Some(*principal)
                    || access.allows(registry, scope, Privilege::Admin)
            })
            .collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("principal", DataType::Utf8, false),
            Field::new("scope", DataType::Utf8, false),
            Field::new("privilege", DataType::Utf8, false),
        ]));
        let column = |f: &dyn Fn(&(&str, &GrantScope, Privilege)) -> String| {
            Arc::new(StringArray::from_iter_values(visible.iter().map(f))) as arrow::array::ArrayRef
        };
        let batch = arrow::array::RecordBatch::try_new(
            schema,
            vec![
                column(&|(principal, _, _)| (*principal).to_string()),
                column(&|(_, scope, _)| scope.to_wire()),
                column(&|(_, _, privilege)| privilege.name().to_string()),
            ],
        )
        .map_err(|e| QueryError::Execution(format!("lake_grants(): {e}")))?;
        Ok(Self { batch })
    }
}

impl datafusion::catalog::TableFunctionImpl for GrantsFunction {
    fn call_with_args(
        &self,
        args: datafusion::catalog::TableFunctionArgs,
    ) -> datafusion::error::Result<Arc<dyn datafusion::catalog::TableProvider>> {
        if !args.exprs().is_empty() {
            return datafusion::common::plan_err!("lake_grants() takes no arguments");
        }
        let table = datafusion::datasource::MemTable::try_new(
            self.batch.schema(),
            vec![vec![self.batch.clone()]],
        )?;
        Ok(Arc::new(table))
    }
}

/// The scope that governs namespace `ns` of catalog `lake`.
pub fn namespace(ns: &str) -> GrantScope {
    GrantScope::Namespace(ns.to_string())
}

/// The scope of table `name` in namespace `ns` of catalog `lake`.
pub fn table_scope(ns: &str, name: &str) -> GrantScope {
    GrantScope::Table {
        namespace: ns.to_string(),
        name: name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lake_core::{ChangeEvent, ChangeKind};

    fn registry(grants: &[(&str, GrantScope, Privilege)]) -> Registry {
        let mut r = Registry::new();
        let mut revision = 0;
        let mut apply = |r: &mut Registry, kind| {
            revision += 1;
            r.apply(&ChangeEvent { revision, kind }).expect("apply");
        };
        apply(
            &mut r,
            ChangeKind::NamespaceCreated {
                name: "sales".into(),
            },
        );
        for (principal, scope, privilege) in grants {
            apply(
                &mut r,
                ChangeKind::GrantChanged {
                    principal: principal.to_string(),
                    scope: scope.clone(),
                    privilege: Some(*privilege),
                },
            );
        }
        r
    }

    #[test]
    fn levels_include_the_ones_below_and_refusals_say_how_to_grant() {
        let r = registry(&[("ada", namespace("sales"), Privilege::Write)]);
        let ada = Access::User("ada".into());
        assert!(ada.allows(&r, &namespace("sales"), Privilege::Read));
        assert!(ada.allows(&r, &namespace("sales"), Privilege::Write));
        let e = ada
            .check(
                &r,
                &namespace("sales"),
                Privilege::Admin,
                "drop lake.sales.t",
            )
            .expect_err("not admin");
        let message = e.to_string();
        assert!(
            message.contains("ada may not drop lake.sales.t"),
            "{message}"
        );
        assert!(message.contains("holds only write"), "{message}");
        assert!(
            message.contains("GRANT ALL ON SCHEMA sales TO ada"),
            "{message}"
        );
        let bob = Access::User("bob".into());
        let e = bob
            .check(
                &r,
                &GrantScope::Iceberg,
                Privilege::Read,
                "read iceberg.db.t",
            )
            .expect_err("no grant");
        assert!(e.to_string().contains("holds no grant"), "{e}");
        assert!(
            e.to_string()
                .contains("GRANT SELECT ON DATABASE iceberg TO bob"),
            "{e}"
        );
    }

    fn change(sql: &str) -> Result<AccessChange, QueryError> {
        let parsed = crate::sql::parse(sql).expect("parses");
        access_change(&parsed.statement).expect("a grant or revoke")
    }

    #[test]
    fn grant_and_revoke_statements_read_as_levels_scopes_and_users() {
        let c = change("GRANT SELECT ON SCHEMA sales TO rita").expect("ok");
        assert_eq!(
            c,
            AccessChange {
                grant: true,
                privilege: Some(Privilege::Read),
                scopes: vec![namespace("sales")],
                principals: vec!["rita".into()],
            }
        );
        let c = change("grant select, insert on all tables in schema lake.sales to user wes, rita")
            .expect("ok");
        assert_eq!(
            c.privilege,
            Some(Privilege::Write),
            "several words: the highest"
        );
        assert_eq!(c.scopes, vec![namespace("sales")]);
        assert_eq!(c.principals, vec!["wes".to_string(), "rita".to_string()]);
        let c = change("GRANT ALL PRIVILEGES ON DATABASE lake, iceberg TO root2").expect("ok");
        assert_eq!(c.privilege, Some(Privilege::Admin));
        assert_eq!(c.scopes, vec![GrantScope::Lake, GrantScope::Iceberg]);
        let c = change("REVOKE ALL ON SCHEMA sales FROM wes").expect("ok");
        assert_eq!(
            (c.grant, c.privilege),
            (false, None),
            "REVOKE ALL takes everything"
        );
        let c = change("REVOKE SELECT, INSERT ON SCHEMA sales FROM wes").expect("ok");
        assert_eq!(
            c.privilege,
            Some(Privilege::Read),
            "several words: the lowest"
        );
        for (sql, fragment) in [
            (
                "GRANT SELECT ON TABLE lake.sales.t.x TO rita",
                "table grants cover tables of catalog lake",
            ),
            ("GRANT SELECT ON TABLE sales.\"1t\" TO rita", "table"),
            ("GRANT SELECT (a) ON SCHEMA sales TO rita", "privilege"),
            ("GRANT DELETE ON SCHEMA sales TO rita", "privilege DELETE"),
            (
                "GRANT SELECT ON SCHEMA sales TO ROLE r",
                "grantees are user names",
            ),
            ("GRANT SELECT ON SCHEMA a.b.c TO rita", "schema a.b.c"),
            ("GRANT SELECT ON DATABASE other TO rita", "lake and iceberg"),
            ("GRANT INSERT ON DATABASE iceberg TO rita", "read-only"),
            (
                "GRANT SELECT ON SCHEMA sales TO rita WITH GRANT OPTION",
                "WITH GRANT OPTION",
            ),
        ] {
            let e = change(sql).expect_err(sql);
            assert!(e.to_string().contains(fragment), "{sql}: {e}");
        }
        // Table grants: TABLE t (namespace default), ns.t, lake.ns.t.
        for (sql, ns) in [
            ("GRANT SELECT ON TABLE t TO rita", "default"),
            ("GRANT SELECT ON TABLE sales.t TO rita", "sales"),
            ("GRANT SELECT ON lake.sales.t TO rita", "sales"),
        ] {
            assert_eq!(
                change(sql).expect(sql).scopes,
                vec![table_scope(ns, "t")],
                "{sql}"
            );
        }
        let select = crate::sql::parse("SELECT 1").expect("parses");
        assert!(access_change(&select.statement).is_none());
    }

    #[test]
    fn lake_grants_shows_a_user_its_own_grants_and_those_it_administers() {
        let r = registry(&[
            ("ada", namespace("sales"), Privilege::Admin),
            ("bob", namespace("sales"), Privilege::Read),
            ("bob", GrantScope::Iceberg, Privilege::Read),
        ]);
        let rows = |access: &Access| -> Vec<String> {
            let f = GrantsFunction::new(&r, access).expect("rows");
            let batch = &f.batch;
            (0..batch.num_rows())
                .map(|i| {
                    (0..3)
                        .map(|c| {
                            let col = batch
                                .column(c)
                                .as_any()
                                .downcast_ref::<arrow::array::StringArray>()
                                .expect("utf8");
                            col.value(i).to_string()
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        };
        assert_eq!(
            rows(&Access::User("ada".into())),
            vec!["ada lake.sales admin", "bob lake.sales read"]
        );
        assert_eq!(
            rows(&Access::User("bob".into())),
            vec!["bob lake.sales read", "bob iceberg read"]
        );
        assert_eq!(rows(&Access::Superuser("root".into())).len(), 3);
        assert!(rows(&Access::User("carol".into())).is_empty());
    }

    #[test]
    fn superusers_and_unauthenticated_deployments_pass_every_check() {
        let r = registry(&[]);
        for access in [Access::Everyone, Access::Superuser("root".into())] {
            for scope in [GrantScope::Lake, namespace("sales"), GrantScope::Iceberg] {
                assert!(access.allows(&r, &scope, Privilege::Admin));
            }
        }
        assert!(!Access::User("root".into()).allows(&r, &namespace("sales"), Privilege::Read));
    }
}
