//! Commit coordination: compare-and-swap, idempotency, table incarnations, group commit and
//! store failures.

mod common;

use common::{Harness, StoreFault};
use lake_core::AppendLimits;
use lake_core::commit::{Applied, Mutation};
use lake_core::{CommitError, ManifestRef, TableId};

fn manifest(n: u64) -> ManifestRef {
    ManifestRef {
        path: format!("_versions/{n}.manifest-staging"),
        size_bytes: 100 + n,
    }
}

fn commit(table_id: TableId, base_version: u64, op: Option<(&str, u8)>) -> Mutation {
    Mutation::Commit {
        table_id,
        base_version,
        manifest: manifest(base_version + 1),
        operation: op.map(|(id, d)| (id.to_string(), [d; 32])),
    }
}

fn setup(h: &mut Harness) -> TableId {
    h.call(Mutation::CreateNamespace { name: "ns".into() })
        .expect("namespace");
    let reply = h
        .call(Mutation::CreateTable {
            namespace: "ns".into(),
            name: "t".into(),
            schema_ipc: vec![1, 2, 3],
        })
        .expect("table");
    match reply.applied {
        Applied::TableCreated(meta) => {
            // tables/<id>-<created ms>.lance, the time of the write that created it.
            let created = meta
                .location
                .strip_prefix(&format!("tables/{}-", meta.id))
                .and_then(|rest| rest.strip_suffix(".lance"))
                .and_then(|ms| ms.parse::<i64>().ok());
            assert!(
                created.is_some_and(|ms| ms <= h.now_ms && ms >= h.now_ms - 10_000),
                "{}",
                meta.location
            );
            meta.id
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn compare_and_swap_moves_the_pointer_one_version_at_a_time() {
    let mut h = Harness::new(16);
    let t = setup(&mut h);
    let r1 = h.call(commit(t, 0, None)).expect("v1");
    assert_eq!(
        r1.applied,
        Applied::Committed {
            version: 1,
            replayed: false
        }
    );
    let r2 = h.call(commit(t, 1, None)).expect("v2");
    assert!(r2.revision > r1.revision, "revision increases");
    let stale = h.call(commit(t, 1, None)).expect_err("stale base loses");
    assert_eq!(
        stale,
        CommitError::VersionConflict {
            table_id: t,
            expected: 1,
            latest: 2
        }
    );
    assert!(stale.is_retryable());
    let table = h
        .coordinator
        .registry()
        .table_by_id(t)
        .expect("table")
        .clone();
    let versions: Vec<u64> = table.versions.iter().map(|v| v.version).collect();
    assert_eq!(versions, vec![1, 2]);
}

#[test]
fn replayed_operation_returns_the_original_version_and_writes_nothing() {
    let mut h = Harness::new(16);
    let t = setup(&mut h);
    h.call(commit(t, 0, Some(("op-a", 7)))).expect("v1");
    h.call(commit(t, 1, None)).expect("v2");
    let log_len = h.store.log.len();
    let replay = h.call(commit(t, 2, Some(("op-a", 7)))).expect("replay");
    assert_eq!(
        replay.applied,
        Applied::Committed {
            version: 1,
            replayed: true
        }
    );
    assert_eq!(h.store.log.len(), log_len, "a replay writes nothing");
    let other_payload = h
        .call(commit(t, 2, Some(("op-a", 8))))
        .expect_err("different payload");
    assert!(matches!(
        other_payload,
        CommitError::OperationIdReused { version: 1, .. }
    ));
    assert!(!other_payload.is_retryable());
}

#[test]
fn dropped_and_recreated_table_never_receives_an_old_writers_commit() {
    let mut h = Harness::new(16);
    let old = setup(&mut h);
    h.call(Mutation::DropTable {
        namespace: "ns".into(),
        name: "t".into(),
    })
    .expect("drop");
    let reply = h
        .call(Mutation::CreateTable {
            namespace: "ns".into(),
            name: "t".into(),
            schema_ipc: vec![],
        })
        .expect("recreate");
    let Applied::TableCreated(meta) = reply.applied else {
        panic!("not created")
    };
    assert_ne!(meta.id, old, "ids are never reused");
    let err = h.call(commit(old, 0, None)).expect_err("old id");
    assert_eq!(err, CommitError::TableIdNotFound { id: old });
    assert_eq!(
        h.coordinator
            .registry()
            .table_by_id(meta.id)
            .expect("new")
            .latest_version(),
        0
    );
}

#[test]
fn concurrent_requests_become_one_store_write() {
    let mut h = Harness::new(64);
    let t = setup(&mut h);
    let writes_before = h.store.log.len();
    // The first request goes out alone; the next eight wait behind it and must share one write.
    let first = h.submit(commit(t, 0, Some(("w0", 0))));
    let mut ids = Vec::new();
    for i in 1..=8u8 {
        ids.push(h.submit(Mutation::CreateNamespace {
            name: format!("n{i}"),
        }));
    }
    let mut writes = 0;
    while let Some(out) = h.coordinator.poll() {
        if let lake_core::Output::Write(w) = out {
            writes += 1;
            h.store.log.extend(w.events.iter().cloned());
            h.coordinator.handle(
                lake_core::Input::WriteDone {
                    write_id: w.write_id,
                },
                h.now_ms,
            );
        } else if let lake_core::Output::Reply { id, result } = out {
            h.replies.push((id, result));
        }
    }
    assert_eq!(
        writes, 2,
        "one write for the first request, one for the group"
    );
    assert_eq!(h.store.log.len(), writes_before + 9);
    assert!(h.reply(first).is_ok());
    for id in ids {
        assert!(h.reply(id).is_ok());
    }
}

#[test]
fn competing_commits_in_one_group_the_second_loses_the_cas() {
    let mut h = Harness::new(64);
    let t = setup(&mut h);
    let blocker = h.submit(Mutation::CreateNamespace { name: "x".into() });
    let a = h.submit(commit(t, 0, None));
    let b = h.submit(commit(t, 0, None));
    h.run(StoreFault::None);
    assert!(h.reply(blocker).is_ok());
    assert!(h.reply(a).is_ok());
    assert!(matches!(
        h.reply(b),
        Err(CommitError::VersionConflict { latest: 1, .. })
    ));
}

#[test]
fn refused_write_is_definitely_not_committed_and_the_state_is_reloaded() {
    let mut h = Harness::new(16);
    let t = setup(&mut h);
    let id = h.submit(commit(t, 0, Some(("op", 1))));
    h.run(StoreFault::Refuse);
    assert!(matches!(h.reply(id), Err(CommitError::NotWritten(_))));
    assert_eq!(
        h.coordinator
            .registry()
            .table_by_id(t)
            .expect("t")
            .latest_version(),
        0
    );
    let retry = h.call(commit(t, 0, Some(("op", 1)))).expect("retry");
    assert_eq!(
        retry.applied,
        Applied::Committed {
            version: 1,
            replayed: false
        }
    );
}

#[test]
fn unknown_outcome_then_retry_with_same_operation_id_returns_the_landed_version() {
    let mut h = Harness::new(16);
    let t = setup(&mut h);
    let id = h.submit(commit(t, 0, Some(("op", 1))));
    h.run(StoreFault::LoseResponse);
    assert!(matches!(h.reply(id), Err(CommitError::OutcomeUnknown(_))));
    // The write did land; after the reload the coordinator knows it.
    let retry = h.call(commit(t, 0, Some(("op", 1)))).expect("retry");
    assert_eq!(
        retry.applied,
        Applied::Committed {
            version: 1,
            replayed: true
        }
    );
    assert_eq!(h.store.load().table_by_id(t).expect("t").versions.len(), 1);
}

#[test]
fn bad_names_and_missing_objects_name_what_exists() {
    let mut h = Harness::new(16);
    setup(&mut h);
    let bad = h
        .call(Mutation::CreateNamespace {
            name: "1bad-name".into(),
        })
        .expect_err("bad name");
    assert!(bad.to_string().contains("1bad-name"), "{bad}");
    let missing = h
        .call(Mutation::DropTable {
            namespace: "ns".into(),
            name: "nope".into(),
        })
        .expect_err("missing");
    assert!(missing.to_string().contains("[t]"), "{missing}");
    let not_empty = h
        .call(Mutation::DropNamespace { name: "ns".into() })
        .expect_err("not empty");
    assert!(not_empty.to_string().contains("[t]"), "{not_empty}");
}

#[test]
fn commit_timestamps_never_go_backwards_even_if_the_clock_does() {
    let mut h = Harness::new(16);
    let t = setup(&mut h);
    h.call(commit(t, 0, None)).expect("v1");
    h.now_ms -= 60_000;
    h.call(commit(t, 1, None)).expect("v2");
    let table = h.coordinator.registry().table_by_id(t).expect("t").clone();
    assert!(table.versions[1].committed_at_ms >= table.versions[0].committed_at_ms);
}

#[test]
fn a_base_newer_than_the_leader_knows_makes_it_reload_the_store() {
    let mut h = Harness::new(16);
    let t = setup(&mut h);
    // A write lands in the store behind the coordinator's back (an earlier incarnation's).
    let foreign = lake_core::ChangeEvent {
        revision: h.store.log.len() as u64 + 1,
        kind: lake_core::ChangeKind::VersionCommitted {
            table_id: t,
            record: lake_core::VersionRecord {
                version: 1,
                manifest: manifest(1),
                committed_at_ms: 1,
                revision: h.store.log.len() as u64 + 1,
                operation_id: None,
                digest: None,
            },
        },
    };
    h.store.log.push(foreign);
    let err = h.call(commit(t, 1, None)).expect_err("stale leader");
    assert!(err.is_retryable());
    let retry = h.call(commit(t, 1, None)).expect("after reload");
    assert_eq!(
        retry.applied,
        Applied::Committed {
            version: 2,
            replayed: false
        }
    );
}

/// A store that lost a table's record (damage, a bad restore) hands the table's id out
/// again; the new table still gets a location of its own, so it never lands on the lost
/// table's files.
#[test]
fn a_table_id_handed_out_again_after_a_loss_gets_a_new_location() {
    let mut before = Harness::new(16);
    let lost = setup(&mut before);
    let mut after = Harness::new(16);
    after.now_ms = before.now_ms + 1;
    let again = setup(&mut after);
    assert_eq!(
        lost, again,
        "the same id, as a store that lost the record would give"
    );
    let location = |h: &Harness, id| {
        h.coordinator
            .registry()
            .table_by_id(id)
            .expect("table")
            .meta
            .location
            .clone()
    };
    assert_ne!(location(&before, lost), location(&after, again));
}

/// DynamoDB's transaction limits, as its store reports them: a group commit never exceeds
/// them, so one large event (a wide table's schema) never fails the mutations grouped with
/// it, and every request is still served.
#[test]
fn group_commits_are_sized_by_bytes_as_well_as_count() {
    let limits = AppendLimits {
        items: 98,
        bytes: 3_500_000,
        item_bytes: 350_000,
    };
    let mut h = Harness::with_limits(limits);
    h.call(Mutation::CreateNamespace { name: "ns".into() })
        .expect("namespace");
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(h.submit(Mutation::CreateTable {
            namespace: "ns".into(),
            name: format!("wide{i}"),
            schema_ipc: vec![7; 900_000],
        }));
        for j in 0..30 {
            ids.push(h.submit(Mutation::CreateNamespace {
                name: format!("n{i}_{j}"),
            }));
        }
    }
    h.run(StoreFault::None);
    for id in ids {
        h.reply(id).expect("every request is served");
    }
    assert!(
        h.writes.len() > 2,
        "split into several groups: {}",
        h.writes.len()
    );
    for events in &h.writes {
        assert!(
            limits.admit(events),
            "a group of {} events ({} bytes) exceeds the limits",
            events.len(),
            events.iter().map(|e| e.size_bound()).sum::<usize>()
        );
    }
    // Order is kept: revisions follow submission.
    let created: Vec<String> = h
        .store
        .log
        .iter()
        .filter_map(|e| match &e.kind {
            lake_core::ChangeKind::TableCreated { meta } => Some(meta.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        created,
        (0..6).map(|i| format!("wide{i}")).collect::<Vec<_>>()
    );
}
