//! Which dataset directories under the data root belong to no table: what a Query
//! replica may remove once their grace period is over.

mod common;

use common::Harness;
use lake_core::commit::{Applied, Mutation};
use lake_core::registry::{location_dir, location_table_id, table_location};
use lake_core::{Registry, TableMeta};

fn create(h: &mut Harness, name: &str) -> TableMeta {
    let created = h
        .call(Mutation::CreateTable {
            namespace: "ns".into(),
            name: name.into(),
            schema_ipc: vec![1],
        })
        .expect("table");
    let Applied::TableCreated(meta) = created.applied else {
        panic!("{created:?}");
    };
    meta
}

fn dir(meta: &TableMeta) -> &str {
    location_dir(&meta.location).expect("under tables/")
}

#[test]
fn a_dropped_tables_directory_is_dropped_and_no_live_or_newer_tables_is() {
    let mut h = Harness::new(16);
    h.call(Mutation::CreateNamespace { name: "ns".into() })
        .expect("namespace");
    let gone = create(&mut h, "gone");
    let kept = create(&mut h, "kept");
    // A replica's registry read now: it has not seen the table created next.
    let before: Registry = h.coordinator.registry().clone();
    let newer = create(&mut h, "newer");
    h.call(Mutation::DropTable {
        namespace: "ns".into(),
        name: "gone".into(),
    })
    .expect("drop");
    let now = h.coordinator.registry();

    assert!(now.is_dropped_dir(dir(&gone)));
    assert!(!now.is_dropped_dir(dir(&kept)));
    assert!(!now.is_dropped_dir(dir(&newer)));
    // The lagging read knows nothing of `newer`, yet never takes it for a dropped table.
    assert!(!before.is_dropped_dir(dir(&newer)));
    assert!(!before.is_dropped_dir(dir(&kept)));
    // Recreated under the same name: a new id and location; the old directory stays dropped.
    let again = create(&mut h, "gone");
    assert_ne!(again.location, gone.location);
    let now = h.coordinator.registry();
    assert!(now.is_dropped_dir(dir(&gone)) && !now.is_dropped_dir(dir(&again)));
    // The id of a live table under another creation time (a store that handed an id out
    // again) is that table's only at its own location.
    let other_time = format!("{}-1.lance", kept.id);
    assert!(now.is_dropped_dir(&other_time));
    // Names that are no table's location are never dropped ones.
    for name in ["notes", "x-1.lance", "-1.lance", ".lance", "1-2.txt", ""] {
        assert!(!now.is_dropped_dir(name), "{name}");
    }
    assert_eq!(location_table_id("7.lance"), Some(7));
    assert_eq!(location_table_id("7-1700000000000.lance"), Some(7));
    assert_eq!(location_dir(&table_location(7, 5)), Some("7-5.lance"));
    assert_eq!(location_dir("elsewhere/7-5.lance"), None);
}
