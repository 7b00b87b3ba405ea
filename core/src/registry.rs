//! The registry: namespaces, tables and each table's gap-free version history.
//!
//! One [`Registry`] value is the whole replicated state of Metasrv. It changes only by
//! [`Registry::apply`] of a [`ChangeEvent`] whose revision is exactly one more than the
//! registry's, so every holder (the commit coordinator, the durable event log replayed at
//! start-up, each Query replica's catalog cache) derives the same state from the same
//! ordered events. Grants (who may read, write or administer which namespace) are part of
//! that state, so every replica enforces the same policy at the same revision.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{CommitError, RegistryError};

/// A table's identity. Assigned once from a registry-wide counter and never reused, so a
/// table dropped and created again under the same name is a different table (a writer
/// holding the old id can never commit into the new one).
pub type TableId = u64;

/// The 32-byte digest of a write's payload, computed by the shell; Metasrv only compares it for
/// equality.
pub type Digest = [u8; 32];

/// Longest namespace or table name, in bytes.
pub const NAME_LEN_MAX: usize = 128;

/// Checks a namespace or table name: 1 to [`NAME_LEN_MAX`] bytes, an ASCII letter or `_`
/// first, then ASCII letters, digits or `_`.
///
/// # Errors
/// [`CommitError::InvalidName`] naming the offending input and the allowed form.
pub fn validate_name(kind: &'static str, name: &str) -> Result<(), CommitError> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if first_ok && rest_ok && name.len() <= NAME_LEN_MAX {
        Ok(())
    } else {
        Err(CommitError::InvalidName {
            kind,
            name: shorten(name),
        })
    }
}

/// `text` cut to at most 64 characters (with `…`), for error messages that echo input.
pub fn shorten(text: &str) -> String {
    const SHOWN_MAX: usize = 64;
    match text.char_indices().nth(SHOWN_MAX) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// `text` cut to at most `max_bytes` bytes on a character boundary (with `…` when cut):
/// gRPC status messages travel in an HTTP/2 header, which must stay small.
pub fn clip(mut text: String, max_bytes: usize) -> String {
    if text.len() > max_bytes {
        let mut cut = max_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// Longest principal (user or service name) a grant names, in bytes.
pub const PRINCIPAL_LEN_MAX: usize = 64;

/// Checks a principal's name, as logins know it: 1 to [`PRINCIPAL_LEN_MAX`] ASCII
/// letters, digits, `_`, `-`, `.` or `@` (an identity provider's e-mail names fit).
///
/// # Errors
/// [`CommitError::InvalidInput`] naming the input and the allowed form.
pub fn validate_principal(name: &str) -> Result<(), CommitError> {
    let ok = (1..=PRINCIPAL_LEN_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'@'));
    if ok {
        Ok(())
    } else {
        Err(CommitError::InvalidInput {
            what: "user name",
            detail: format!(
                "{:?}: use 1 to {PRINCIPAL_LEN_MAX} ASCII letters, digits, '_', '-', '.' or '@'",
                shorten(name)
            ),
        })
    }
}

/// Longest operation id (the idempotency key of a commit) Metasrv records, in bytes. Every
/// version record and change event carries its id, so the bound keeps each event far
/// below a gRPC message (4 MiB) whatever clients send.
pub const OPERATION_ID_LEN_MAX: usize = 512;

/// Checks an operation id: 1 to [`OPERATION_ID_LEN_MAX`] bytes with no control
/// characters.
///
/// # Errors
/// [`CommitError::InvalidInput`] naming the id (shortened) and the allowed form.
pub fn validate_operation_id(id: &str) -> Result<(), CommitError> {
    if (1..=OPERATION_ID_LEN_MAX).contains(&id.len()) && !id.chars().any(char::is_control) {
        return Ok(());
    }
    Err(CommitError::InvalidInput {
        what: "operation id",
        detail: format!(
            "{:?} ({} bytes): an operation id has 1 to {OPERATION_ID_LEN_MAX} bytes and no control characters",
            shorten(id),
            id.len()
        ),
    })
}

/// What a grant allows; each level includes the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Privilege {
    /// Read tables (SELECT, time travel, listings, FILE reads).
    Read = 1,
    /// Also write rows (INSERT, appends, ingest into existing tables, FILE uploads).
    Write = 2,
    /// Also create and drop tables, and grant or revoke on the scope.
    Admin = 3,
}

impl Privilege {
    /// The wire code (1, 2, 3).
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The privilege of wire code `code`.
    pub fn from_code(code: u32) -> Option<Self> {
        match code {
            1 => Some(Self::Read),
            2 => Some(Self::Write),
            3 => Some(Self::Admin),
            _ => None,
        }
    }

    /// The level below this one (`None` below [`Privilege::Read`]).
    pub fn lower(self) -> Option<Self> {
        Self::from_code(self.code() - 1)
    }

    /// `read`, `write` or `admin`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Admin => "admin",
        }
    }
}

/// What a grant covers.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GrantScope {
    /// Every namespace of the `lake` catalog, present and future; with
    /// [`Privilege::Admin`] also creating and dropping namespaces.
    Lake,
    /// One namespace of the `lake` catalog.
    Namespace(String),
    /// One table of the `lake` catalog, by name. Dropping the table drops its grants, so a
    /// table created again under the name starts with none.
    Table { namespace: String, name: String },
    /// The read-only `iceberg` catalog (only [`Privilege::Read`] reads it; `Admin` also
    /// grants on it).
    Iceberg,
}

impl GrantScope {
    /// The wire form: `lake`, `lake.NAMESPACE`, `lake.NAMESPACE.TABLE` or `iceberg`.
    pub fn to_wire(&self) -> String {
        match self {
            Self::Lake => "lake".to_string(),
            Self::Namespace(ns) => format!("lake.{ns}"),
            Self::Table { namespace, name } => format!("lake.{namespace}.{name}"),
            Self::Iceberg => "iceberg".to_string(),
        }
    }

    /// Parses the wire form (see [`GrantScope::to_wire`]).
    ///
    /// # Errors
    /// [`CommitError::InvalidInput`] naming the allowed forms.
    pub fn from_wire(text: &str) -> Result<Self, CommitError> {
        match text {
            "lake" => Ok(Self::Lake),
            "iceberg" => Ok(Self::Iceberg),
            _ => match text.strip_prefix("lake.").map(|rest| rest.split_once('.')) {
                Some(Some((namespace, name))) => {
                    validate_name("namespace", namespace)?;
                    validate_name("table", name)?;
                    Ok(Self::Table {
                        namespace: namespace.to_string(),
                        name: name.to_string(),
                    })
                }
                Some(None) => {
                    let ns = &text["lake.".len()..];
                    validate_name("namespace", ns)?;
                    Ok(Self::Namespace(ns.to_string()))
                }
                None => Err(CommitError::InvalidInput {
                    what: "grant scope",
                    detail: format!(
                        "{:?}: a grant covers lake, lake.NAMESPACE, lake.NAMESPACE.TABLE or iceberg",
                        shorten(text)
                    ),
                }),
            },
        }
    }
}

impl std::fmt::Display for GrantScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Lake => f.write_str("catalog lake"),
            Self::Namespace(ns) => write!(f, "namespace lake.{ns}"),
            Self::Table { namespace, name } => write!(f, "table lake.{namespace}.{name}"),
            Self::Iceberg => f.write_str("catalog iceberg"),
        }
    }
}

/// Where a version's Lance manifest lives, relative to the table location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestRef {
    /// Object-store path of the manifest file (staging or final, as Lance's
    /// `ExternalManifestStore` reports it).
    pub path: String,
    /// Size of the manifest file in bytes.
    pub size_bytes: u64,
}

/// Largest manifest a version may record, in bytes (a Lance manifest lists a version's
/// fragments; 1 GiB is millions of them).
pub const MANIFEST_BYTES_MAX: u64 = 1 << 30;
/// Largest Arrow IPC schema message a table may record, in bytes.
pub const SCHEMA_BYTES_MAX: usize = 1 << 20;

impl ManifestRef {
    /// Checks the form Lance gives manifest paths under a dataset, relative to it:
    /// `_versions/N.manifest`, optionally with a staging suffix `-TAG` (TAG: 1 to 64 ASCII
    /// letters, digits, `-` or `_`), N a version number in either of Lance's naming schemes
    /// (1 to 20 digits); and a size of 1 to [`MANIFEST_BYTES_MAX`] bytes. Anything else
    /// (an absolute path, `..`, another directory) would point a table outside its dataset.
    ///
    /// # Errors
    /// [`CommitError::InvalidInput`] naming the path or size and the allowed form.
    pub fn validate(&self) -> Result<(), CommitError> {
        let shape_ok = self
            .path
            .strip_prefix("_versions/")
            .and_then(|name| name.split_once(".manifest"))
            .is_some_and(|(number, suffix)| {
                (1..=20).contains(&number.len())
                    && number.bytes().all(|b| b.is_ascii_digit())
                    && (suffix.is_empty()
                        || suffix.strip_prefix('-').is_some_and(|tag| {
                            (1..=64).contains(&tag.len())
                                && tag
                                    .bytes()
                                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                        }))
            });
        if !shape_ok {
            return Err(CommitError::InvalidInput {
                what: "manifest path",
                detail: format!(
                    "{:?}: a manifest is _versions/N.manifest (N: 1 to 20 digits), optionally with a staging suffix -TAG, relative to the table's dataset",
                    shorten(&self.path)
                ),
            });
        }
        if !(1..=MANIFEST_BYTES_MAX).contains(&self.size_bytes) {
            return Err(CommitError::InvalidInput {
                what: "manifest size",
                detail: format!(
                    "{} bytes; a manifest has 1 to {MANIFEST_BYTES_MAX} bytes",
                    self.size_bytes
                ),
            });
        }
        Ok(())
    }
}

/// The directory under the data root that holds the tables' Lance datasets.
pub const TABLES_DIR: &str = "tables";

/// The location of the table created as `id` at `created_ms` (ms since the Unix epoch):
/// `tables/<id>-<created ms>.lance`. The creation time makes the location unique even if
/// a damaged store ever lost a table's record and handed its id out again: a new table
/// never lands on an old table's files.
pub fn table_location(id: TableId, created_ms: i64) -> String {
    format!("{TABLES_DIR}/{id}-{}.lance", created_ms.max(0))
}

/// The dataset directory's name under [`TABLES_DIR`] of a table `location` (as
/// [`table_location`] makes: `tables/<id>-<ms>.lance` → `<id>-<ms>.lance`); `None` for a
/// location elsewhere.
pub fn location_dir(location: &str) -> Option<&str> {
    location.strip_prefix(TABLES_DIR)?.strip_prefix('/')
}

/// The table id a dataset directory's name under [`TABLES_DIR`] carries: `<id>-<created
/// ms>.lance`, or `<id>.lance` (tables created before the creation time was in it);
/// `None` for any other name.
pub fn location_table_id(dir_name: &str) -> Option<TableId> {
    let stem = dir_name.strip_suffix(".lance")?;
    let id = stem.split_once('-').map_or(stem, |(id, _)| id);
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}

/// Registry entry of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableMeta {
    /// Never reused; see [`TableId`].
    pub id: TableId,
    /// Namespace (SQL schema) the table lives in.
    pub namespace: String,
    /// Table name inside the namespace.
    pub name: String,
    /// Arrow schema as an encapsulated Arrow IPC schema message (opaque to the core).
    pub schema_ipc: Vec<u8>,
    /// Lance dataset location relative to the data root: `tables/<id>-<created ms>.lance`
    /// (`tables/<id>.lance` for tables created before Lake put the creation time in it).
    pub location: String,
    /// Revision of the event that created the table.
    pub created_revision: u64,
}

/// One committed version of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionRecord {
    /// Lance dataset version; the history of a table is 1, 2, 3, … without gaps.
    pub version: u64,
    /// Manifest of that version.
    pub manifest: ManifestRef,
    /// Commit time in milliseconds since the Unix epoch, as the leader saw it; never smaller
    /// than the previous version's, so time travel by timestamp is well defined.
    pub committed_at_ms: i64,
    /// Registry revision of the commit.
    pub revision: u64,
    /// Idempotency key of the append that produced this version, if any.
    pub operation_id: Option<String>,
    /// Digest of that write's payload (set together with `operation_id`).
    pub digest: Option<Digest>,
}

/// A table with its retained history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableState {
    /// Identity, schema, location.
    pub meta: TableMeta,
    /// Retained versions, oldest first and gap-free: `versions[i].version ==
    /// versions[0].version + i`. Versions before the first expired
    /// ([`ChangeKind::HistoryExpired`]); the latest version is never expired.
    pub versions: Vec<VersionRecord>,
    /// Retained operation ids (idempotency keys of appends), which may outlive the
    /// records of the versions they committed.
    pub operations: Operations,
}

impl TableState {
    /// Latest committed version, or 0 when the table has no version yet.
    pub fn latest_version(&self) -> u64 {
        self.versions.last().map_or(0, |v| v.version)
    }

    /// Oldest retained version (versions before it expired), or 0 when the table has no
    /// version yet.
    pub fn oldest_version(&self) -> u64 {
        self.versions.first().map_or(0, |v| v.version)
    }

    /// The record of `version`, if it was committed and has not expired.
    pub fn version(&self, version: u64) -> Option<&VersionRecord> {
        let index = usize::try_from(version.checked_sub(self.oldest_version())?).ok()?;
        self.versions.get(index).filter(|r| r.version == version)
    }
}

/// What an operation id committed: kept for idempotent replay while the id is retained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperationRecord {
    /// Digest of the write's payload.
    pub digest: Digest,
    /// The version the append committed.
    pub version: u64,
    /// When that version was committed (ms since the Unix epoch).
    pub committed_at_ms: i64,
}

/// A table's retained operation ids, for replay, with the oldest one's commit so the
/// retention sweep tells in O(1) whether any is past its window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Operations {
    by_id: BTreeMap<String, OperationRecord>,
    /// `(version, committed_at_ms)` of the oldest retained id.
    oldest: Option<(u64, i64)>,
}

impl Operations {
    /// The record of operation id `id`, if retained.
    pub fn get(&self, id: &str) -> Option<&OperationRecord> {
        self.by_id.get(id)
    }

    /// How many operation ids are retained.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no operation id is retained.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Retained ids with their records, by id.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &OperationRecord)> {
        self.by_id.iter().map(|(id, record)| (id.as_str(), record))
    }

    /// When the oldest retained id committed (ms since the Unix epoch).
    pub fn oldest_committed_at_ms(&self) -> Option<i64> {
        self.oldest.map(|(_, at)| at)
    }

    /// The version the oldest retained id committed.
    pub fn oldest_version(&self) -> Option<u64> {
        self.oldest.map(|(version, _)| version)
    }

    /// Each retained id with its record, oldest first (a sort: for checkpoints, and for
    /// the retention sweep once something is due).
    pub fn in_commit_order(&self) -> Vec<(&str, &OperationRecord)> {
        let mut order: Vec<(&str, &OperationRecord)> = self.iter().collect();
        order.sort_unstable_by_key(|(_, record)| record.version);
        order
    }

    /// Records `id`. `false` (nothing changed) if `id` is retained already.
    fn insert(&mut self, id: String, record: OperationRecord) -> bool {
        if self.by_id.contains_key(&id) {
            return false;
        }
        let this = (record.version, record.committed_at_ms);
        self.oldest = Some(self.oldest.map_or(this, |oldest| oldest.min(this)));
        self.by_id.insert(id, record);
        true
    }

    /// Forgets the ids of versions up to `through`.
    fn expire_through(&mut self, through: u64) {
        if self.oldest.is_none_or(|(version, _)| version > through) {
            return;
        }
        let mut oldest = None;
        self.by_id.retain(|_, record| {
            let keep = record.version > through;
            if keep {
                let this = (record.version, record.committed_at_ms);
                oldest = Some(oldest.map_or(this, |o: (u64, i64)| o.min(this)));
            }
            keep
        });
        self.oldest = oldest;
    }
}

/// What happened at one registry revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// A namespace was created.
    NamespaceCreated { name: String },
    /// An empty namespace was dropped.
    NamespaceDropped { name: String },
    /// A table was created with no version yet.
    TableCreated { meta: TableMeta },
    /// A table was dropped; its id is retired forever.
    TableDropped { id: TableId },
    /// A version was committed (the commit pointer moved from `version - 1` to `version`).
    VersionCommitted {
        table_id: TableId,
        record: VersionRecord,
    },
    /// A committed version's manifest moved from its staging path to its final path.
    ManifestFinalized {
        table_id: TableId,
        version: u64,
        manifest: ManifestRef,
    },
    /// `principal`'s privilege on `scope` is now `privilege` (`None`: no grant).
    GrantChanged {
        principal: String,
        scope: GrantScope,
        privilege: Option<Privilege>,
    },
    /// The retention sweep ([`crate::retention`]) expired part of a table's history: the
    /// records of versions before `versions_before` (at most the latest version: it is
    /// never expired; 0 expires none) and the operation ids of versions up to
    /// `operations_through` leave the registry.
    HistoryExpired {
        table_id: TableId,
        versions_before: u64,
        operations_through: u64,
    },
}

/// One entry of Metasrv's ordered change stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeEvent {
    /// Registry-wide revision: 1, 2, 3, … without gaps.
    pub revision: u64,
    /// What changed.
    pub kind: ChangeKind,
}

impl ChangeEvent {
    /// Fixed part of [`Self::size_bound`]: ids, revisions, times, enum tags and framing.
    const FIXED_BYTES: usize = 256;

    /// An upper bound, in bytes, of this event in any of Lake's store encodings (the
    /// protobuf `lake.metasrv.v1.ChangeEvent`): its variable-length fields plus
    /// 256 bytes. Group commits are sized by it ([`crate::store::AppendLimits`]).
    pub fn size_bound(&self) -> usize {
        let variable = match &self.kind {
            ChangeKind::NamespaceCreated { name } | ChangeKind::NamespaceDropped { name } => {
                name.len()
            }
            ChangeKind::TableCreated { meta } => {
                meta.namespace.len() + meta.name.len() + meta.schema_ipc.len() + meta.location.len()
            }
            ChangeKind::TableDropped { .. } | ChangeKind::HistoryExpired { .. } => 0,
            ChangeKind::VersionCommitted { record, .. } => {
                record.manifest.path.len()
                    + record.operation_id.as_ref().map_or(0, String::len)
                    + record.digest.map_or(0, |d| d.len())
            }
            ChangeKind::ManifestFinalized { manifest, .. } => manifest.path.len(),
            ChangeKind::GrantChanged {
                principal, scope, ..
            } => {
                principal.len()
                    + match scope {
                        GrantScope::Lake | GrantScope::Iceberg => 0,
                        GrantScope::Namespace(namespace) => namespace.len(),
                        GrantScope::Table { namespace, name } => namespace.len() + name.len(),
                    }
            }
        };
        Self::FIXED_BYTES + variable
    }
}

/// A registry taken apart into what a checkpoint stores ([`Registry::to_parts`],
/// [`Registry::from_parts`]): everything else (name index, operation ids) is derived.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistryParts {
    /// Revision of the last event the registry holds.
    pub revision: u64,
    /// Id the next created table gets.
    pub next_table_id: TableId,
    /// Namespaces with the revision that created each.
    pub namespaces: Vec<(String, u64)>,
    /// Tables with their retained history.
    pub tables: Vec<TableParts>,
    /// Grants as (principal, scope, privilege).
    pub grants: Vec<(String, GrantScope, Privilege)>,
}

/// One table of [`RegistryParts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableParts {
    /// Identity, schema, location.
    pub meta: TableMeta,
    /// Retained versions, oldest first and gap-free.
    pub versions: Vec<VersionRecord>,
    /// Retained operation ids, in commit order.
    pub operations: Vec<(String, OperationRecord)>,
}

/// The registry state at one revision.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registry {
    revision: u64,
    next_table_id: TableId,
    namespaces: BTreeMap<String, u64>,
    tables: BTreeMap<TableId, Arc<TableState>>,
    names: BTreeMap<(String, String), TableId>,
    grants: BTreeMap<(String, GrantScope), Privilege>,
}

impl Registry {
    /// The empty registry at revision 0.
    pub fn new() -> Self {
        Self {
            next_table_id: 1,
            ..Self::default()
        }
    }

    /// Revision of the last applied event (0 for the empty registry).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Id the next created table will get.
    pub fn next_table_id(&self) -> TableId {
        self.next_table_id
    }

    /// Namespace names, sorted.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.namespaces.keys().map(String::as_str)
    }

    /// Namespace names with the revision that created each, sorted by name.
    pub fn namespace_entries(&self) -> impl Iterator<Item = (&str, u64)> {
        self.namespaces
            .iter()
            .map(|(name, revision)| (name.as_str(), *revision))
    }

    /// Whether `name` is a namespace.
    pub fn has_namespace(&self, name: &str) -> bool {
        self.namespaces.contains_key(name)
    }

    /// Tables of `namespace`, sorted by name.
    pub fn tables_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Arc<TableState>> {
        self.tables_in_after(namespace, "")
    }

    /// Tables of `namespace` named after `after` (all of them when `after` is empty),
    /// sorted by name: a page of a listing.
    pub fn tables_in_after<'a>(
        &'a self,
        namespace: &'a str,
        after: &str,
    ) -> impl Iterator<Item = &'a Arc<TableState>> + 'a {
        use std::ops::Bound;
        let start = (namespace.to_string(), after.to_string());
        let lower = if after.is_empty() {
            Bound::Included(start)
        } else {
            Bound::Excluded(start)
        };
        self.names
            .range((lower, Bound::Unbounded))
            .take_while(move |((ns, _), _)| ns == namespace)
            .filter_map(|(_, id)| self.tables.get(id))
    }

    /// All tables, by id.
    pub fn tables(&self) -> impl Iterator<Item = &Arc<TableState>> {
        self.tables.values()
    }

    /// Live tables with ids from `first` up, by id.
    pub fn tables_from(&self, first: TableId) -> impl Iterator<Item = &Arc<TableState>> {
        self.tables.range(first..).map(|(_, table)| table)
    }

    /// The table `namespace.name`.
    pub fn table(&self, namespace: &str, name: &str) -> Option<&Arc<TableState>> {
        let id = self.names.get(&(namespace.to_string(), name.to_string()))?;
        self.tables.get(id)
    }

    /// The table with `id`, if it exists (not dropped).
    pub fn table_by_id(&self, id: TableId) -> Option<&Arc<TableState>> {
        self.tables.get(&id)
    }

    /// Whether the dataset directory `dir_name` under [`TABLES_DIR`] belongs to no table
    /// of this registry: a dropped table's (or a table's whose creation was undone). A
    /// directory whose id is not below [`Self::next_table_id`] is never one, so a reader
    /// whose registry lags behind Metasrv never takes a table created since for a dropped
    /// one; nor is a name that is not a table's location ([`location_table_id`]).
    pub fn is_dropped_dir(&self, dir_name: &str) -> bool {
        let Some(id) = location_table_id(dir_name) else {
            return false;
        };
        id < self.next_table_id
            && self
                .table_by_id(id)
                .is_none_or(|t| location_dir(&t.meta.location) != Some(dir_name))
    }

    /// `principal`'s own grant on exactly `scope` (not counting a catalog-wide one).
    pub fn grant(&self, principal: &str, scope: &GrantScope) -> Option<Privilege> {
        self.grants
            .get(&(principal.to_string(), scope.clone()))
            .copied()
    }

    /// What `principal` may do on `scope`: the highest of its grant there and its grants on
    /// what contains it (a table's namespace, a namespace's `lake` catalog).
    pub fn privilege(&self, principal: &str, scope: &GrantScope) -> Option<Privilege> {
        let own = self.grant(principal, scope);
        let inherited = match scope {
            GrantScope::Table { namespace, .. } => {
                self.privilege(principal, &GrantScope::Namespace(namespace.clone()))
            }
            GrantScope::Namespace(_) => self.grant(principal, &GrantScope::Lake),
            GrantScope::Lake | GrantScope::Iceberg => None,
        };
        own.max(inherited)
    }

    /// Whether `principal` holds at least `need` on namespace `namespace` or on one of its
    /// tables: what makes the namespace show in its listings.
    pub fn reaches_namespace(&self, principal: &str, namespace: &str, need: Privilege) -> bool {
        self.privilege(principal, &GrantScope::Namespace(namespace.to_string())) >= Some(need)
            || self.grants.iter().any(|((p, scope), privilege)| {
                p == principal
                    && *privilege >= need
                    && matches!(scope, GrantScope::Table { namespace: ns, .. } if ns == namespace)
            })
    }

    /// Every grant as (principal, scope, privilege), sorted by principal then scope.
    pub fn grants(&self) -> impl Iterator<Item = (&str, &GrantScope, Privilege)> {
        self.grants
            .iter()
            .map(|((principal, scope), privilege)| (principal.as_str(), scope, *privilege))
    }

    /// The parts a checkpoint stores (see [`RegistryParts`]); tables by id, namespaces and
    /// grants sorted.
    pub fn to_parts(&self) -> RegistryParts {
        RegistryParts {
            revision: self.revision,
            next_table_id: self.next_table_id,
            namespaces: self
                .namespace_entries()
                .map(|(name, revision)| (name.to_string(), revision))
                .collect(),
            tables: self
                .tables
                .values()
                .map(|t| TableParts {
                    meta: t.meta.clone(),
                    versions: t.versions.clone(),
                    operations: t
                        .operations
                        .in_commit_order()
                        .into_iter()
                        .map(|(id, record)| (id.to_string(), *record))
                        .collect(),
                })
                .collect(),
            grants: self
                .grants()
                .map(|(principal, scope, privilege)| {
                    (principal.to_string(), scope.clone(), privilege)
                })
                .collect(),
        }
    }

    /// The registry `parts` describe (a checkpoint read back), checked as replaying would
    /// check it (names are not checked again: they were when created): names unique, every table in an existing namespace with an id
    /// below `next_table_id`, retained versions without gaps committed at or before
    /// `revision`, operation ids of committed versions in commit order, grants on existing
    /// scopes.
    ///
    /// # Errors
    /// [`RegistryError::Inconsistent`] (at `parts.revision`) naming the first part that
    /// does not fit.
    pub fn from_parts(parts: RegistryParts) -> Result<Self, RegistryError> {
        let revision = parts.revision;
        let inconsistent = |what: String| RegistryError::Inconsistent { revision, what };
        let mut registry = Self {
            revision,
            next_table_id: parts.next_table_id,
            ..Self::default()
        };
        for (name, created) in parts.namespaces {
            if created > revision {
                return Err(inconsistent(format!(
                    "namespace {:?} (created at {created}) is not valid",
                    shorten(&name)
                )));
            }
            if registry.namespaces.insert(name.clone(), created).is_some() {
                return Err(inconsistent(format!("namespace {name} appears twice")));
            }
        }
        for TableParts {
            meta,
            versions,
            operations: ops,
        } in parts.tables
        {
            let key = (meta.namespace.clone(), meta.name.clone());
            if meta.id >= registry.next_table_id
                || !registry.namespaces.contains_key(&meta.namespace)
                || meta.created_revision > revision
                || registry.names.contains_key(&key)
                || registry.tables.contains_key(&meta.id)
            {
                return Err(inconsistent(format!(
                    "table {:?}.{:?} (id {}) does not fit the checkpoint",
                    shorten(&meta.namespace),
                    shorten(&meta.name),
                    meta.id
                )));
            }
            let first = versions.first().map_or(1, |v| v.version);
            for (index, record) in versions.iter().enumerate() {
                if first == 0
                    || record.version != first + index as u64
                    || record.revision > revision
                {
                    return Err(inconsistent(format!(
                        "table id {}: version {} at revision {} is out of order",
                        meta.id, record.version, record.revision
                    )));
                }
            }
            let latest = versions.last().map_or(0, |v| v.version);
            let mut operations = Operations::default();
            let mut previous = 0;
            for (id, record) in ops {
                let in_order = record.version > previous && record.version <= latest;
                previous = record.version;
                if !in_order {
                    return Err(inconsistent(format!(
                        "table id {}: operation id of version {} is out of order",
                        meta.id, record.version
                    )));
                }
                if !operations.insert(id, record) {
                    return Err(inconsistent(format!(
                        "table id {}: the operation id of version {} appears twice",
                        meta.id, record.version
                    )));
                }
            }
            registry.names.insert(key, meta.id);
            registry.tables.insert(
                meta.id,
                Arc::new(TableState {
                    meta,
                    versions,
                    operations,
                }),
            );
        }
        for (principal, scope, privilege) in parts.grants {
            let exists = match &scope {
                GrantScope::Lake | GrantScope::Iceberg => true,
                GrantScope::Namespace(ns) => registry.namespaces.contains_key(ns),
                GrantScope::Table { namespace, name } => registry.table(namespace, name).is_some(),
            };
            if !exists {
                return Err(inconsistent(format!(
                    "grant of {:?} on {scope} does not fit the checkpoint",
                    shorten(&principal)
                )));
            }
            registry.grants.insert((principal, scope), privilege);
        }
        Ok(registry)
    }

    /// Applies `events` in order, each at the next revision: the one way a log (read from
    /// a store, received on a stream, kept by a simulation) is replayed into a registry.
    ///
    /// # Errors
    /// The first event's [`RegistryError`] (see [`Self::apply`]); the registry then holds
    /// every event before it.
    pub fn replay<'a>(
        &mut self,
        events: impl IntoIterator<Item = &'a ChangeEvent>,
    ) -> Result<(), RegistryError> {
        events.into_iter().try_for_each(|event| self.apply(event))
    }

    /// The registry a log replays to from empty ([`Self::replay`]).
    ///
    /// # Errors
    /// As [`Self::replay`].
    pub fn from_log<'a>(
        events: impl IntoIterator<Item = &'a ChangeEvent>,
    ) -> Result<Self, RegistryError> {
        let mut registry = Self::new();
        registry.replay(events)?;
        Ok(registry)
    }

    /// Applies the event at revision `self.revision() + 1`.
    ///
    /// # Errors
    /// [`RegistryError::OutOfOrder`] if the event's revision is not the next one;
    /// [`RegistryError::Inconsistent`] if the event does not fit the state (which means the
    /// stream and the state come from different histories). The registry is unchanged on error.
    pub fn apply(&mut self, event: &ChangeEvent) -> Result<(), RegistryError> {
        if event.revision != self.revision + 1 {
            return Err(RegistryError::OutOfOrder {
                expected: self.revision + 1,
                got: event.revision,
            });
        }
        let inconsistent = |what: String| RegistryError::Inconsistent {
            revision: event.revision,
            what,
        };
        let no_table = |id: &TableId| inconsistent(format!("table id {id} does not exist"));
        match &event.kind {
            ChangeKind::NamespaceCreated { name } => {
                if self.namespaces.contains_key(name) {
                    return Err(inconsistent(format!("namespace {name} already exists")));
                }
                self.namespaces.insert(name.clone(), event.revision);
            }
            ChangeKind::NamespaceDropped { name } => {
                if self.namespaces.remove(name).is_none() {
                    return Err(inconsistent(format!("namespace {name} does not exist")));
                }
                // Grants belong to the namespace: one created again later starts with none.
                self.grants.retain(|(_, scope), _| match scope {
                    GrantScope::Namespace(ns) | GrantScope::Table { namespace: ns, .. } => {
                        ns != name
                    }
                    GrantScope::Lake | GrantScope::Iceberg => true,
                });
            }
            ChangeKind::TableCreated { meta } => {
                let key = (meta.namespace.clone(), meta.name.clone());
                if self.names.contains_key(&key) || meta.id < self.next_table_id {
                    return Err(inconsistent(format!(
                        "table {}.{} (id {}) cannot be created",
                        meta.namespace, meta.name, meta.id
                    )));
                }
                self.next_table_id = meta.id + 1;
                self.names.insert(key, meta.id);
                self.tables.insert(
                    meta.id,
                    Arc::new(TableState {
                        meta: meta.clone(),
                        versions: Vec::new(),
                        operations: Operations::default(),
                    }),
                );
            }
            ChangeKind::TableDropped { id } => {
                let Some(table) = self.tables.remove(id) else {
                    return Err(no_table(id));
                };
                self.names
                    .remove(&(table.meta.namespace.clone(), table.meta.name.clone()));
                // Grants belong to the table: one created again under its name starts
                // with none.
                let dropped = GrantScope::Table {
                    namespace: table.meta.namespace.clone(),
                    name: table.meta.name.clone(),
                };
                self.grants.retain(|(_, scope), _| *scope != dropped);
            }
            ChangeKind::VersionCommitted { table_id, record } => {
                let table = self
                    .tables
                    .get_mut(table_id)
                    .ok_or_else(|| no_table(table_id))?;
                if record.version != table.latest_version() + 1 {
                    return Err(inconsistent(format!(
                        "version {} does not follow {}",
                        record.version,
                        table.latest_version()
                    )));
                }
                if let Some(op) = &record.operation_id
                    && table.operations.get(op).is_some()
                {
                    // Planning replays a retained id; committing it again is another history.
                    return Err(inconsistent(format!(
                        "operation id {:?} of table {table_id} committed twice",
                        shorten(op)
                    )));
                }
                let table = Arc::make_mut(table);
                if let (Some(op), Some(digest)) = (&record.operation_id, &record.digest) {
                    table.operations.insert(
                        op.clone(),
                        OperationRecord {
                            digest: *digest,
                            version: record.version,
                            committed_at_ms: record.committed_at_ms,
                        },
                    );
                }
                table.versions.push(record.clone());
            }
            ChangeKind::ManifestFinalized {
                table_id,
                version,
                manifest,
            } => {
                let table = self
                    .tables
                    .get_mut(table_id)
                    .ok_or_else(|| no_table(table_id))?;
                if table.version(*version).is_none() {
                    return Err(inconsistent(format!(
                        "version {version} of table {table_id} does not exist"
                    )));
                }
                let index = usize::try_from(version - table.oldest_version()).unwrap_or(0);
                Arc::make_mut(table).versions[index].manifest = manifest.clone();
            }
            ChangeKind::GrantChanged {
                principal,
                scope,
                privilege,
            } => {
                if let GrantScope::Namespace(ns) = scope
                    && !self.namespaces.contains_key(ns)
                {
                    return Err(inconsistent(format!("namespace {ns} does not exist")));
                }
                if let GrantScope::Table { namespace, name } = scope
                    && privilege.is_some()
                    && self.table(namespace, name).is_none()
                {
                    return Err(inconsistent(format!(
                        "table {namespace}.{name} does not exist"
                    )));
                }
                let key = (principal.clone(), scope.clone());
                match privilege {
                    Some(privilege) => {
                        self.grants.insert(key, *privilege);
                    }
                    None => {
                        self.grants.remove(&key);
                    }
                }
            }
            ChangeKind::HistoryExpired {
                table_id,
                versions_before,
                operations_through,
            } => {
                let table = self
                    .tables
                    .get_mut(table_id)
                    .ok_or_else(|| no_table(table_id))?;
                let latest = table.latest_version();
                if *versions_before > latest || *operations_through > latest {
                    return Err(inconsistent(format!(
                        "history of table {table_id} cannot expire before version {versions_before} (operation ids through {operations_through}): the latest version is {latest}"
                    )));
                }
                let expired = versions_before.saturating_sub(table.oldest_version());
                let table = Arc::make_mut(table);
                table
                    .versions
                    .drain(..usize::try_from(expired).unwrap_or(0));
                // Expired records leave memory: a history cut far back gives its room back.
                if table.versions.capacity() > 2 * table.versions.len() + 16 {
                    table.versions.shrink_to_fit();
                }
                table.operations.expire_through(*operations_through);
            }
        }
        self.revision = event.revision;
        Ok(())
    }
}
