//! Property tests: random interleavings of writers and store faults keep the invariants.

mod common;

use std::collections::BTreeMap;

use common::{Harness, StoreFault};
use lake_core::commit::{Applied, Mutation};
use lake_core::{ManifestRef, Registry};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    /// Writer `w` commits its next operation on table `t` at the base it last saw.
    Commit { writer: u8, table: u8 },
    /// Run the store, with a fault on the first write.
    Run(u8),
    /// A retention sweep step.
    Sweep,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u8..4, 0u8..2).prop_map(|(writer, table)| Step::Commit { writer, table }),
        2 => (0u8..4).prop_map(Step::Run),
        1 => Just(Step::Sweep),
    ]
}

proptest! {
    #[test]
    fn every_acknowledged_commit_appears_exactly_once_in_a_gap_free_history(
        steps in proptest::collection::vec(step(), 1..80),
    ) {
        let mut h = Harness::new(8);
        // Each table keeps its last 3 versions; operation ids stay (they name every
        // acknowledged commit's version).
        h.coordinator = lake_core::Coordinator::new(Registry::new(), 8).with_retention(lake_core::Retention {
            versions_max: 3,
            ..lake_core::Retention::FOREVER
        });
        h.call(Mutation::CreateNamespace { name: "ns".into() }).expect("ns");
        let mut tables = Vec::new();
        for name in ["a", "b"] {
            let reply = h.call(Mutation::CreateTable {
                namespace: "ns".into(), name: name.into(), schema_ipc: vec![],
            }).expect("table");
            let Applied::TableCreated(meta) = reply.applied else { panic!() };
            tables.push(meta.id);
        }
        // request id -> (table, operation id)
        let mut pending: BTreeMap<u64, (u64, String)> = BTreeMap::new();
        let mut op_counter = 0u64;
        for s in steps {
            match s {
                Step::Commit { writer, table } => {
                    let table_id = tables[table as usize];
                    let base = h.coordinator.registry().table_by_id(table_id).expect("t").latest_version();
                    op_counter += 1;
                    let op = format!("w{writer}-{op_counter}");
                    let id = h.submit(Mutation::Commit {
                        table_id,
                        base_version: base,
                        manifest: ManifestRef { path: format!("_versions/{op_counter}.manifest"), size_bytes: 1 },
                        operation: Some((op.clone(), [writer; 32])),
                    });
                    pending.insert(id, (table_id, op));
                }
                Step::Run(f) => {
                    let fault = match f { 0 => StoreFault::Refuse, 1 => StoreFault::LoseResponse, _ => StoreFault::None };
                    h.run(fault);
                }
                Step::Sweep => h.coordinator.handle(lake_core::Input::Sweep { max_tables: 1 }, h.now_ms),
            }
        }
        h.run(StoreFault::None);
        // A commit whose expiry did not fit its group leaves it to the sweep.
        h.coordinator.handle(lake_core::Input::Sweep { max_tables: 2 }, h.now_ms);
        h.run(StoreFault::None);

        let durable: Registry = h.store.load();
        prop_assert_eq!(durable.revision(), h.coordinator.registry().revision());
        prop_assert_eq!(&h.published[..], &h.store.log[..h.published.len()]);
        for &table_id in &tables {
            let table = durable.table_by_id(table_id).expect("t");
            prop_assert!(table.versions.len() <= 3, "within the window");
            for (i, v) in table.versions.iter().enumerate() {
                prop_assert_eq!(v.version, table.oldest_version() + i as u64, "gap-free");
            }
            let mut seen = std::collections::BTreeSet::new();
            for v in &table.versions {
                prop_assert!(seen.insert(v.operation_id.clone()), "operation committed twice");
            }
        }
        for (id, (table_id, op)) in pending {
            if let Some((_, Ok(reply))) = h.replies.iter().find(|(r, _)| *r == id) {
                let Applied::Committed { version, .. } = reply.applied else { panic!() };
                let table = durable.table_by_id(table_id).expect("t");
                let committed = table.operations.get(&op).map(|r| r.version);
                prop_assert_eq!(committed, Some(version), "acked version durable");
                if let Some(record) = table.version(version) {
                    prop_assert_eq!(record.operation_id.as_deref(), Some(op.as_str()));
                }
            }
        }
        // A checkpoint of the registry (its parts) reads back as the same registry, at
        // every revision of the history.
        for revision in 0..=h.store.log.len() {
            let registry = Registry::from_log(&h.store.log[..revision]).expect("replays");
            let restored = Registry::from_parts(registry.to_parts()).expect("parts fit");
            prop_assert_eq!(&restored, &registry);
        }
    }
}
