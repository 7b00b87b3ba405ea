//! Snapshot resolution for Lake tables.

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
