//! Retention windows: what expires from a table's history, when, and what a reader, a
//! retried append and a checkpoint see afterwards.

mod common;

use common::Harness;
use lake_core::commit::{Applied, Coordinator, Input, Mutation};
use lake_core::{
    ChangeKind, ManifestRef, Registry, Retention, SnapshotError, TableId, VersionSpec,
    resolve_version,
};

const HOUR_MS: i64 = 3_600_000;

fn harness(retention: Retention) -> (Harness, TableId) {
    let mut h = Harness::new(16);
    h.coordinator = Coordinator::new(Registry::new(), 16).with_retention(retention);
    h.call(Mutation::CreateNamespace { name: "ns".into() })
        .expect("namespace");
    let created = h
        .call(Mutation::CreateTable {
            namespace: "ns".into(),
            name: "t".into(),
            schema_ipc: vec![1],
        })
        .expect("table");
    let Applied::TableCreated(meta) = created.applied else {
        panic!("{created:?}");
    };
    (h, meta.id)
}

/// Appends once with operation id `op` (payload digest `[d; 32]`) on the latest version;
/// returns (version, replayed).
fn append(h: &mut Harness, t: TableId, op: &str, d: u8) -> (u64, bool) {
    let base = h
        .coordinator
        .registry()
        .table_by_id(t)
        .expect("t")
        .latest_version();
    let reply = h
        .call(Mutation::Commit {
            table_id: t,
            base_version: base,
            manifest: ManifestRef {
                path: format!("_versions/{}.manifest", base + 1),
                size_bytes: 10,
            },
            operation: Some((op.to_string(), [d; 32])),
        })
        .expect("commit");
    match reply.applied {
        Applied::Committed { version, replayed } => (version, replayed),
        other => panic!("{other:?}"),
    }
}

fn retained(h: &Harness, t: TableId) -> Vec<u64> {
    let table = h.coordinator.registry().table_by_id(t).expect("t").clone();
    table.versions.iter().map(|v| v.version).collect()
}

#[test]
fn a_commit_past_the_count_window_expires_the_oldest_versions_in_the_same_write() {
    let (mut h, t) = harness(Retention {
        versions_max: 10,
        ..Retention::FOREVER
    });
    for i in 1..=11 {
        append(&mut h, t, &format!("op-{i}"), 1);
    }
    // 11 versions are within a tenth of 10: nothing expires yet.
    assert_eq!(retained(&h, t), (1..=11).collect::<Vec<_>>());
    append(&mut h, t, "op-12", 1);
    // 12 is past 11: back to exactly 10, in the write that committed version 12.
    assert_eq!(retained(&h, t), (3..=12).collect::<Vec<_>>());
    let last = h.writes.last().expect("a write");
    assert!(
        matches!(last.as_slice(), [commit, expiry]
            if matches!(commit.kind, ChangeKind::VersionCommitted { .. })
            && matches!(expiry.kind, ChangeKind::HistoryExpired { table_id, versions_before: 3, operations_through: 0 } if table_id == t)),
        "{last:?}"
    );
    // The log replays to the same registry: replicas drop the same records.
    assert_eq!(&h.store.load(), h.coordinator.registry());

    // Time travel to an expired version names the oldest retained one.
    let table = h.coordinator.registry().table_by_id(t).expect("t").clone();
    let err =
        resolve_version("ns.t", &table.versions, VersionSpec::Version(2)).expect_err("expired");
    assert!(
        matches!(
            err,
            SnapshotError::Expired {
                oldest: 3,
                requested: VersionSpec::Version(2),
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("version 2") && text.contains("oldest retained version is 3"),
        "{text}"
    );
    let before = table.versions[0].committed_at_ms - 1;
    let err = resolve_version("ns.t", &table.versions, VersionSpec::AsOfMs(before))
        .expect_err("expired by time");
    assert!(
        matches!(err, SnapshotError::Expired { oldest: 3, .. }),
        "{err:?}"
    );
    assert_eq!(
        resolve_version("ns.t", &table.versions, VersionSpec::Version(3)),
        Ok(3)
    );
    // A version never committed is still "not found", naming what is retained.
    let err =
        resolve_version("ns.t", &table.versions, VersionSpec::Version(13)).expect_err("future");
    assert!(
        err.to_string().contains("3 to 12 (1 to 2 expired)"),
        "{err}"
    );
}

#[test]
fn the_latest_version_never_expires_and_the_age_window_expires_idle_tables_at_the_sweep() {
    let (mut h, t) = harness(Retention {
        version_max_age_ms: 24 * HOUR_MS,
        ..Retention::FOREVER
    });
    for i in 1..=5 {
        append(&mut h, t, &format!("op-{i}"), 1);
        h.now_ms += HOUR_MS;
    }
    // 25 hours after the first commit only version 1 is past the window, by less than a
    // tenth of it: not due yet.
    h.now_ms += 20 * HOUR_MS;
    h.coordinator
        .handle(Input::Sweep { max_tables: 10 }, h.now_ms);
    h.run(common::StoreFault::None);
    assert_eq!(retained(&h, t), vec![1, 2, 3, 4, 5]);
    // Ten days later every version is past the window; only the latest stays.
    h.now_ms += 10 * 24 * HOUR_MS;
    h.coordinator
        .handle(Input::Sweep { max_tables: 10 }, h.now_ms);
    h.run(common::StoreFault::None);
    assert_eq!(retained(&h, t), vec![5]);
    assert!(!h.coordinator.sweeping());
    // Nothing more to expire: a sweep writes nothing.
    let writes = h.writes.len();
    h.coordinator
        .handle(Input::Sweep { max_tables: 10 }, h.now_ms);
    h.run(common::StoreFault::None);
    assert_eq!(h.writes.len(), writes);
    assert_eq!(&h.store.load(), h.coordinator.registry());
}

#[test]
fn a_replay_inside_the_operation_window_returns_the_original_version_and_outside_commits_anew() {
    let (mut h, t) = harness(Retention {
        versions_max: 2,
        operation_max_age_ms: 24 * HOUR_MS,
        ..Retention::FOREVER
    });
    assert_eq!(append(&mut h, t, "first", 7), (1, false));
    for i in 2..=5 {
        append(&mut h, t, &format!("op-{i}"), 1);
    }
    // Version 1's record expired (count window 2), its operation id did not.
    assert_eq!(retained(&h, t), vec![4, 5]);
    assert_eq!(
        append(&mut h, t, "first", 7),
        (1, true),
        "replayed inside the window"
    );
    // The same id with another payload is refused, naming the version it committed.
    let base = 5;
    let err = h
        .call(Mutation::Commit {
            table_id: t,
            base_version: base,
            manifest: ManifestRef {
                path: "_versions/6.manifest".into(),
                size_bytes: 10,
            },
            operation: Some(("first".into(), [8; 32])),
        })
        .expect_err("reused");
    assert!(err.to_string().contains("first"), "{err}");

    // Two days on, a sweep expires the ids of the first day.
    h.now_ms += 2 * 24 * HOUR_MS;
    h.coordinator
        .handle(Input::Sweep { max_tables: 10 }, h.now_ms);
    h.run(common::StoreFault::None);
    let table = h.coordinator.registry().table_by_id(t).expect("t").clone();
    assert!(table.operations.is_empty(), "{:?}", table.operations);
    // Outside the window the same append commits again, as a new version.
    assert_eq!(append(&mut h, t, "first", 7), (6, false));
    assert_eq!(&h.store.load(), h.coordinator.registry());
}

#[test]
fn the_operation_count_window_keeps_the_newest_ids() {
    let (mut h, t) = harness(Retention {
        operations_max: 10,
        ..Retention::FOREVER
    });
    for i in 1..=12 {
        append(&mut h, t, &format!("op-{i}"), 1);
    }
    let table = h.coordinator.registry().table_by_id(t).expect("t").clone();
    let versions: Vec<u64> = table
        .operations
        .in_commit_order()
        .iter()
        .map(|(_, record)| record.version)
        .collect();
    assert_eq!(versions, (3..=12).collect::<Vec<_>>());
    assert!(table.operations.get("op-2").is_none() && table.operations.get("op-3").is_some());
    // Versions are kept (their window is forever), operation ids are not.
    assert_eq!(retained(&h, t).len(), 12);
}

#[test]
fn a_registry_with_expired_history_survives_its_parts() {
    let (mut h, t) = harness(Retention {
        versions_max: 3,
        ..Retention::FOREVER
    });
    for i in 1..=9 {
        append(&mut h, t, &format!("op-{i}"), 1);
    }
    let registry = h.coordinator.registry().clone();
    assert_eq!(registry.table_by_id(t).expect("t").oldest_version(), 7);
    let restored = Registry::from_parts(registry.to_parts()).expect("fits");
    assert_eq!(restored, registry);
    // Operation ids of expired versions are in the parts too.
    let table = restored.table_by_id(t).expect("t");
    assert_eq!(table.operations.get("op-1").map(|r| r.version), Some(1));
}

#[test]
fn an_expiry_past_the_latest_version_is_refused() {
    let (mut h, t) = harness(Retention::FOREVER);
    append(&mut h, t, "op-1", 1);
    let mut expire = |versions_before| {
        h.call(Mutation::ExpireHistory {
            table_id: t,
            expiry: lake_core::Expiry {
                versions_before,
                operations_through: 0,
            },
        })
        .expect_err("refused")
        .to_string()
    };
    let err = expire(2);
    assert!(
        err.contains("latest version 1"),
        "the latest version stays: {err}"
    );
    // One that expires nothing still kept writes nothing (a sweep raced a commit).
    let err = expire(1);
    assert!(err.contains("expires nothing"), "{err}");
    for windows in [
        Retention {
            versions_max: 0,
            ..Retention::DEFAULT
        },
        Retention {
            operations_max: 0,
            ..Retention::DEFAULT
        },
    ] {
        assert!(windows.validate().is_err(), "{windows:?}");
    }
}

/// A log that commits a retained operation id a second time is another history (planning
/// replays a retained id): replaying it fails instead of keeping the first silently.
#[test]
fn a_retained_operation_id_committed_twice_does_not_replay() {
    let (mut h, t) = harness(Retention::FOREVER);
    append(&mut h, t, "op-1", 1);
    let mut log = h.store.log.clone();
    let ChangeKind::VersionCommitted { table_id, record } =
        log.last().expect("a commit").kind.clone()
    else {
        panic!("{:?}", log.last());
    };
    let mut again = record;
    again.version += 1;
    again.revision += 1;
    log.push(lake_core::ChangeEvent {
        revision: log.len() as u64 + 1,
        kind: ChangeKind::VersionCommitted {
            table_id,
            record: again,
        },
    });
    let err = Registry::from_log(&log).expect_err("committed twice");
    assert!(err.to_string().contains("committed twice"), "{err}");
}
