//! The simulation drives the code Lake ships, not a copy of it: nothing outside
//! `lake-core` builds the machines the core composes for them. A Metasrv node is
//! `lake_core::node::Node` (which owns its `Election` and `Coordinator`), a replica's
//! catalog is `lake_core::Follower` (which owns its `CatalogCache`). A simulation or a shell
//! that constructs those parts itself is writing its own node or follower again; this test
//! names the file.

use std::path::{Path, PathBuf};

/// Constructors only the core's composed machines may call (split so this file does not
/// match itself).
const PARTS: [(&str, &str); 3] = [
    ("Coordinator", "lake_core::node::Node"),
    ("Election", "lake_core::node::Node"),
    ("CatalogCache", "lake_core::Follower"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn simulations_and_shells_drive_the_core_machines_and_build_no_copies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in [
        "simtests",
        "shells/metasrv/src",
        "shells/query/src",
        "shells/cli/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.iter().any(|f| f.ends_with("cluster.rs")),
        "the simulation sources were not found under {}",
        root.display()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a source file");
        for (part, owner) in PARTS {
            let constructor = format!("{part}::new(");
            if text.contains(&constructor) {
                found.push(format!(
                    "{} calls {constructor}: drive {owner} instead",
                    file.display()
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
