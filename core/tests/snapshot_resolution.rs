//! Snapshot resolution for Lake and Iceberg tables.

use lake_core::{ManifestRef, SnapshotError, VersionRecord, VersionSpec, resolve_version};

fn history(times: &[i64]) -> Vec<VersionRecord> {
    times
        .iter()
        .enumerate()
        .map(|(i, &t)| VersionRecord {
            version: i as u64 + 1,
            manifest: ManifestRef {
                path: String::new(),
                size_bytes: 0,
            },
            committed_at_ms: t,
            revision: i as u64 + 10,
            operation_id: None,
            digest: None,
        })
        .collect()
}

#[test]
fn latest_version_and_timestamp_pick_the_right_snapshot() {
    let h = history(&[100, 200, 200, 300]);
    assert_eq!(resolve_version("t", &h, VersionSpec::Latest), Ok(4));
    assert_eq!(resolve_version("t", &h, VersionSpec::Version(2)), Ok(2));
    assert_eq!(resolve_version("t", &h, VersionSpec::AsOfMs(100)), Ok(1));
    assert_eq!(resolve_version("t", &h, VersionSpec::AsOfMs(250)), Ok(3));
    assert_eq!(resolve_version("t", &h, VersionSpec::AsOfMs(10_000)), Ok(4));
}

#[test]
fn unknown_version_names_the_versions_that_exist() {
    let h = history(&[100, 200]);
    let err = resolve_version("ns.t", &h, VersionSpec::Version(9)).expect_err("missing");
    assert_eq!(
        err.to_string(),
        "table ns.t has no version 9; versions are 1 to 2"
    );
    let err = resolve_version("ns.t", &h, VersionSpec::Version(0)).expect_err("zero");
    assert!(matches!(
        err,
        SnapshotError::VersionNotFound { requested: 0, .. }
    ));
}

#[test]
fn timestamp_before_the_first_commit_says_when_the_first_commit_was() {
    let h = history(&[100, 200]);
    let err = resolve_version("t", &h, VersionSpec::AsOfMs(99)).expect_err("early");
    assert_eq!(
        err,
        SnapshotError::BeforeFirstCommit {
            table: "t".into(),
            requested_ms: 99,
            first_ms: 100
        }
    );
    assert_eq!(resolve_version("t", &[], VersionSpec::Latest), Ok(0));
    assert!(matches!(
        resolve_version("t", &[], VersionSpec::AsOfMs(5)),
        Err(SnapshotError::Empty { .. })
    ));
}

// ---- Iceberg ----------------------------------------------------------------------------

use lake_core::{IcebergHistory, IcebergRefKind, IcebergSpec, TimeTravel, resolve_iceberg};

/// Three snapshots; the table was rolled back from 3 to 1 at 400 (the log records it), a
/// tag `audit` on 2 and a branch `dev` on 3.
fn iceberg() -> IcebergHistory {
    IcebergHistory {
        current_snapshot_id: Some(11),
        snapshots: vec![(11, 100), (22, 200), (33, 300)],
        refs: vec![
            ("main".into(), IcebergRefKind::Branch, 11),
            ("audit".into(), IcebergRefKind::Tag, 22),
            ("dev".into(), IcebergRefKind::Branch, 33),
        ],
        snapshot_log: vec![(100, 11), (200, 22), (300, 33), (400, 11)],
    }
}

#[test]
fn iceberg_current_snapshot_ref_and_id_resolve() {
    let h = iceberg();
    assert_eq!(
        resolve_iceberg("t", &h, &IcebergSpec::Current),
        Ok(Some(11))
    );
    assert_eq!(
        resolve_iceberg("t", &h, &IcebergSpec::SnapshotId(33)),
        Ok(Some(33))
    );
    assert_eq!(
        resolve_iceberg("t", &h, &IcebergSpec::Ref("audit".into())),
        Ok(Some(22))
    );
    assert_eq!(
        resolve_iceberg("t", &h, &IcebergSpec::Ref("dev".into())),
        Ok(Some(33))
    );
    let empty = IcebergHistory::default();
    assert_eq!(
        resolve_iceberg("t", &empty, &IcebergSpec::Current),
        Ok(None)
    );
}

#[test]
fn iceberg_timestamp_follows_the_snapshot_log_including_rollbacks() {
    let h = iceberg();
    assert_eq!(
        resolve_iceberg("t", &h, &IcebergSpec::AsOfMs(100)),
        Ok(Some(11))
    );
    assert_eq!(
        resolve_iceberg("t", &h, &IcebergSpec::AsOfMs(299)),
        Ok(Some(22))
    );
    assert_eq!(
        resolve_iceberg("t", &h, &IcebergSpec::AsOfMs(350)),
        Ok(Some(33))
    );
    // After the rollback the current snapshot was 11 again, though 33 is newer.
    assert_eq!(
        resolve_iceberg("t", &h, &IcebergSpec::AsOfMs(500)),
        Ok(Some(11))
    );
    let err = resolve_iceberg("t", &h, &IcebergSpec::AsOfMs(99)).unwrap_err();
    assert_eq!(
        err,
        SnapshotError::BeforeFirstCommit {
            table: "t".into(),
            requested_ms: 99,
            first_ms: 100
        }
    );
}

#[test]
fn iceberg_errors_name_what_exists() {
    let h = iceberg();
    let err = resolve_iceberg("ns.t", &h, &IcebergSpec::SnapshotId(44)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "table ns.t has no snapshot 44; snapshot ids are: 11, 22, 33"
    );
    let err = resolve_iceberg("ns.t", &h, &IcebergSpec::Ref("prod".into())).unwrap_err();
    assert_eq!(
        err.to_string(),
        "table ns.t has no branch or tag \"prod\"; refs are: branch main, tag audit, branch dev"
    );
    let err = resolve_iceberg("t", &IcebergHistory::default(), &IcebergSpec::AsOfMs(5));
    assert_eq!(err, Err(SnapshotError::Empty { table: "t".into() }));
    let many = IcebergHistory {
        snapshots: (1..=25).map(|i| (i, i)).collect(),
        ..IcebergHistory::default()
    };
    let err = resolve_iceberg("t", &many, &IcebergSpec::SnapshotId(99)).unwrap_err();
    assert!(err.to_string().ends_with("19, 20 and 5 more"), "{err}");
}

#[test]
fn one_time_travel_clause_serves_both_kinds_of_table() {
    assert_eq!(TimeTravel::Latest.for_lake("t"), Ok(VersionSpec::Latest));
    assert_eq!(
        TimeTravel::Number(3).for_lake("t"),
        Ok(VersionSpec::Version(3))
    );
    assert_eq!(
        TimeTravel::AsOfMs(7).for_lake("t"),
        Ok(VersionSpec::AsOfMs(7))
    );
    let err = TimeTravel::Name("dev".into())
        .for_lake("lake.ns.t")
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Lake tables have no branches or tags"),
        "{err}"
    );
    assert!(TimeTravel::Number(-1).for_lake("t").is_err());
    assert_eq!(TimeTravel::Latest.for_iceberg(), IcebergSpec::Current);
    assert_eq!(
        TimeTravel::Number(-5).for_iceberg(),
        IcebergSpec::SnapshotId(-5)
    );
    assert_eq!(
        TimeTravel::Name("dev".into()).for_iceberg(),
        IcebergSpec::Ref("dev".into())
    );
    assert_eq!(TimeTravel::AsOfMs(9).for_iceberg(), IcebergSpec::AsOfMs(9));
}
