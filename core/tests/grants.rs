//! Grants: GRANT raises, REVOKE lowers, namespace grants inherit the catalog's, a dropped
//! namespace takes its grants along, and every holder of the event log derives the same
//! policy.

mod common;

use common::Harness;
use lake_core::commit::{Applied, Mutation};
use lake_core::{CommitError, GrantScope, Privilege, Registry};

fn grant(principal: &str, scope: GrantScope, privilege: Privilege) -> Mutation {
    Mutation::Grant {
        principal: principal.into(),
        scope,
        privilege,
    }
}

fn revoke(principal: &str, scope: GrantScope, privilege: Option<Privilege>) -> Mutation {
    Mutation::Revoke {
        principal: principal.into(),
        scope,
        privilege,
    }
}

fn sales() -> GrantScope {
    GrantScope::Namespace("sales".into())
}

fn setup() -> Harness {
    let mut h = Harness::new(16);
    h.call(Mutation::CreateNamespace {
        name: "sales".into(),
    })
    .expect("namespace");
    h
}

#[test]
fn grant_raises_and_never_lowers_revoke_lowers_one_level_or_all() {
    let mut h = setup();
    let r = h
        .call(grant("ada", sales(), Privilege::Write))
        .expect("grant");
    assert_eq!(r.applied, Applied::GrantChanged(Some(Privilege::Write)));
    // A lower grant keeps the higher one.
    let r = h
        .call(grant("ada", sales(), Privilege::Read))
        .expect("grant");
    assert_eq!(r.applied, Applied::GrantChanged(Some(Privilege::Write)));
    // Revoking write leaves read; revoking admin (not held) changes nothing.
    let r = h
        .call(revoke("ada", sales(), Some(Privilege::Admin)))
        .expect("revoke");
    assert_eq!(r.applied, Applied::GrantChanged(Some(Privilege::Write)));
    let r = h
        .call(revoke("ada", sales(), Some(Privilege::Write)))
        .expect("revoke");
    assert_eq!(r.applied, Applied::GrantChanged(Some(Privilege::Read)));
    let r = h
        .call(revoke("ada", sales(), Some(Privilege::Read)))
        .expect("revoke");
    assert_eq!(r.applied, Applied::GrantChanged(None));
    h.call(grant("ada", sales(), Privilege::Admin))
        .expect("grant");
    let r = h.call(revoke("ada", sales(), None)).expect("revoke all");
    assert_eq!(r.applied, Applied::GrantChanged(None));
    assert_eq!(h.coordinator.registry().grants().count(), 0);
}

#[test]
fn a_namespace_inherits_the_catalog_grant_and_iceberg_is_separate() {
    let mut h = setup();
    h.call(grant("ada", GrantScope::Lake, Privilege::Read))
        .expect("grant");
    h.call(grant("ada", sales(), Privilege::Write))
        .expect("grant");
    let registry = h.coordinator.registry();
    assert_eq!(registry.privilege("ada", &sales()), Some(Privilege::Write));
    let other = GrantScope::Namespace("other".into());
    assert_eq!(registry.privilege("ada", &other), Some(Privilege::Read));
    assert_eq!(registry.privilege("ada", &GrantScope::Iceberg), None);
    assert_eq!(registry.privilege("bob", &sales()), None);
}

#[test]
fn grants_on_a_missing_namespace_or_a_bad_name_are_refused() {
    let mut h = setup();
    let missing = h
        .call(grant(
            "ada",
            GrantScope::Namespace("nope".into()),
            Privilege::Read,
        ))
        .expect_err("missing namespace");
    assert!(
        matches!(missing, CommitError::NamespaceNotFound { ref name, .. } if name == "nope"),
        "{missing:?}"
    );
    for bad in ["", "a b", "ada:admin", &"x".repeat(65)] {
        let e = h
            .call(grant(bad, sales(), Privilege::Read))
            .expect_err("bad principal");
        assert!(
            matches!(
                e,
                CommitError::InvalidInput {
                    what: "user name",
                    ..
                }
            ),
            "{e:?}"
        );
    }
    assert_eq!(h.coordinator.registry().grants().count(), 0);
    h.call(grant("alice@corp.example", sales(), Privilege::Read))
        .expect("an identity provider's e-mail name");
}

#[test]
fn dropping_a_namespace_drops_its_grants_and_replay_derives_the_same_policy() {
    let mut h = setup();
    h.call(grant("ada", sales(), Privilege::Admin))
        .expect("grant");
    h.call(grant("bob", GrantScope::Iceberg, Privilege::Read))
        .expect("grant");
    h.call(Mutation::DropNamespace {
        name: "sales".into(),
    })
    .expect("drop");
    h.call(Mutation::CreateNamespace {
        name: "sales".into(),
    })
    .expect("again");
    let registry = h.coordinator.registry().clone();
    assert_eq!(
        registry.privilege("ada", &sales()),
        None,
        "a new namespace starts bare"
    );
    assert_eq!(
        registry.privilege("bob", &GrantScope::Iceberg),
        Some(Privilege::Read)
    );
    // Any holder of the log (a replica's cache, a restarted node) derives the same state.
    assert_eq!(h.store.load(), registry);
    let mut from_published = Registry::new();
    for event in &h.published {
        from_published.apply(event).expect("apply");
    }
    assert_eq!(from_published, registry);
}

#[test]
fn scopes_round_trip_their_wire_form_and_refuse_anything_else() {
    for scope in [GrantScope::Lake, GrantScope::Iceberg, sales(), orders()] {
        assert_eq!(
            GrantScope::from_wire(&scope.to_wire()).expect("parse"),
            scope
        );
    }
    for bad in [
        "",
        "*",
        "lake.",
        "lake.a.b.c",
        "lake.a.",
        "lake..b",
        "lake.a.1b",
        "iceberg.x",
        "lake.1x",
        "other",
    ] {
        assert!(
            GrantScope::from_wire(bad).is_err(),
            "{bad:?} must be refused"
        );
    }
    for code in 0..5 {
        let privilege = Privilege::from_code(code);
        assert_eq!(
            privilege.map(Privilege::code),
            (1..=3).contains(&code).then_some(code)
        );
    }
}

fn orders() -> GrantScope {
    GrantScope::Table {
        namespace: "sales".into(),
        name: "orders".into(),
    }
}

fn create_orders(h: &mut Harness) {
    h.call(Mutation::CreateTable {
        namespace: "sales".into(),
        name: "orders".into(),
        schema_ipc: vec![],
    })
    .expect("table");
}

#[test]
fn a_table_grant_covers_that_table_only_and_inherits_the_namespace_and_catalog() {
    let mut h = setup();
    // Only an existing table takes grants.
    let err = h
        .call(grant("tess", orders(), Privilege::Read))
        .expect_err("no such table");
    assert!(matches!(err, CommitError::TableNotFound { .. }), "{err}");
    create_orders(&mut h);
    h.call(grant("tess", orders(), Privilege::Read))
        .expect("grant");
    let r = h.store.load();
    assert_eq!(r.privilege("tess", &orders()), Some(Privilege::Read));
    assert_eq!(r.privilege("tess", &sales()), None, "not the namespace");
    let returns = GrantScope::Table {
        namespace: "sales".into(),
        name: "returns".into(),
    };
    assert_eq!(r.privilege("tess", &returns), None, "not another table");
    assert!(r.reaches_namespace("tess", "sales", Privilege::Read));
    assert!(!r.reaches_namespace("tess", "sales", Privilege::Write));
    // A namespace or catalog grant covers the table; the highest grant counts.
    h.call(grant("tess", sales(), Privilege::Write))
        .expect("grant");
    h.call(grant("tess", GrantScope::Lake, Privilege::Admin))
        .expect("grant");
    assert_eq!(
        h.store.load().privilege("tess", &orders()),
        Some(Privilege::Admin)
    );
    // The wire form round-trips.
    assert_eq!(orders().to_wire(), "lake.sales.orders");
    assert_eq!(
        GrantScope::from_wire("lake.sales.orders").expect("wire"),
        orders()
    );
    assert!(GrantScope::from_wire("lake.sales.orders.x").is_err());
    assert!(GrantScope::from_wire("lake.sales.").is_err());
}

#[test]
fn a_dropped_table_takes_its_grants_along() {
    let mut h = setup();
    create_orders(&mut h);
    h.call(grant("tess", orders(), Privilege::Write))
        .expect("grant");
    h.call(Mutation::DropTable {
        namespace: "sales".into(),
        name: "orders".into(),
    })
    .expect("drop");
    create_orders(&mut h);
    let r = h.store.load();
    assert_eq!(
        r.privilege("tess", &orders()),
        None,
        "a table created again under the name starts without grants"
    );
    assert!(r.grants().all(|(_, scope, _)| *scope != orders()));
}
