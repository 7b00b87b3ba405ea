//! Commit coordination: the Metasrv leader's state machine.
//!
//! Requests ([`Mutation`]s) come in through [`Coordinator::handle`]; the shell then drains
//! [`Coordinator::poll`] until it returns `None` and acts on every [`Output`]:
//!
//! * [`Output::Write`]: make the events durable (one atomic, synced store write,
//!   conditional on the store still being at `base_revision`), then feed back
//!   [`Input::WriteDone`] or [`Input::WriteFailed`].
//! * [`Output::Reply`]: answer the caller of a request.
//! * [`Output::Publish`]: send durable events to watchers, in order.
//! * [`Output::Load`]: read the events after `after_revision` back from the store (after a
//!   failed write, whose outcome may be unknown) and feed them in with [`Input::Loaded`].
//!
//! Group commit: at most one store write is in flight. Requests that arrive meanwhile wait,
//! and all of them (up to `batch_max`) become the next single write. Commit order is assigned
//! when a request is planned into a write, never when it arrived, and a version is visible
//! (replied, published) only once its write is durable.
//!
//! Retention ([`Coordinator::with_retention`], [`crate::retention`]): a commit that takes
//! its table past a window carries the table's expiry in the same write, and
//! [`Input::Sweep`] queues expiries for tables that aged past a window without commits.

use std::collections::VecDeque;

use crate::error::CommitError;
use crate::registry::{
    ChangeEvent, ChangeKind, Digest, GrantScope, ManifestRef, Privilege, Registry,
    SCHEMA_BYTES_MAX, TableId, TableMeta, VersionRecord, validate_name, validate_operation_id,
    validate_principal,
};
use crate::retention::{Expiry, Retention};
use crate::store::AppendLimits;

/// Caller-chosen id that pairs a request with its [`Output::Reply`].
pub type RequestId = u64;

/// A change to the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// Create a namespace.
    CreateNamespace { name: String },
    /// Drop an empty namespace.
    DropNamespace { name: String },
    /// Register a table with no version yet. Its location becomes `tables/<id>.lance`.
    CreateTable {
        namespace: String,
        name: String,
        /// Arrow IPC schema message.
        schema_ipc: Vec<u8>,
    },
    /// Drop a table; its id is never reused.
    DropTable { namespace: String, name: String },
    /// Compare-and-swap the commit pointer of `table_id` from `base_version` to
    /// `base_version + 1`.
    Commit {
        table_id: TableId,
        base_version: u64,
        manifest: ManifestRef,
        /// Idempotency key and payload digest of an append.
        operation: Option<(String, Digest)>,
    },
    /// Point a committed version at its final manifest path (Lance's `put_if_exists`).
    FinalizeManifest {
        table_id: TableId,
        version: u64,
        manifest: ManifestRef,
    },
    /// Give `principal` at least `privilege` on `scope` (SQL `GRANT`: a higher grant it
    /// already holds stays).
    Grant {
        principal: String,
        scope: GrantScope,
        privilege: Privilege,
    },
    /// Take `privilege` on `scope` from `principal` (SQL `REVOKE`): a grant at or above it
    /// drops to the level below it; `None` takes every privilege on the scope.
    Revoke {
        principal: String,
        scope: GrantScope,
        privilege: Option<Privilege>,
    },
    /// Expire part of a table's history ([`ChangeKind::HistoryExpired`]); the retention
    /// sweep ([`Input::Sweep`]) asks for these.
    ExpireHistory { table_id: TableId, expiry: Expiry },
}

/// What a successful mutation did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The namespace now exists.
    NamespaceCreated,
    /// The namespace is gone.
    NamespaceDropped,
    /// The table was registered.
    TableCreated(TableMeta),
    /// The table was dropped.
    TableDropped { id: TableId },
    /// The commit pointer moved to `version`, or, with `replayed`, the same operation id and
    /// payload had already committed `version` and nothing new was written.
    Committed { version: u64, replayed: bool },
    /// The manifest location was updated.
    ManifestFinalized,
    /// The principal's privilege on the scope is now this (`None`: no grant).
    GrantChanged(Option<Privilege>),
    /// Part of the table's history expired.
    HistoryExpired,
}

/// A successful reply: what happened and the registry revision that includes it (the
/// read-your-writes token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// What the mutation did.
    pub applied: Applied,
    /// Revision at which the effect is visible.
    pub revision: u64,
}

/// Result of a store write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The store says the write definitely did not apply (condition failed, refused).
    NotWritten,
    /// The write may or may not have applied (timeout, lost response, 5xx).
    Unknown,
}

/// Inputs of the [`Coordinator`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A client request.
    Request { id: RequestId, mutation: Mutation },
    /// The write with `write_id` is durable.
    WriteDone { write_id: u64 },
    /// The write with `write_id` failed.
    WriteFailed {
        write_id: u64,
        outcome: WriteOutcome,
        message: String,
    },
    /// The events the store holds after the revision [`Output::Load`] named, in order.
    Loaded(Vec<ChangeEvent>),
    /// One step of the retention sweep: look at the tables from where the last step
    /// stopped and queue an expiry ([`Mutation::ExpireHistory`]) for each of up to
    /// `max_tables` whose history is past its windows ([`Retention::expiry`]). They are
    /// written like any mutation, grouped and in order with callers' requests, and nobody
    /// is answered for them. [`Coordinator::sweeping`] tells whether the step stopped
    /// before the last table.
    Sweep { max_tables: usize },
}

/// A store write: append `events` atomically, on condition that the store's revision is
/// still `base_revision`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreWrite {
    /// Pairs the write with [`Input::WriteDone`] / [`Input::WriteFailed`].
    pub write_id: u64,
    /// Revision the store must be at for the write to apply.
    pub base_revision: u64,
    /// Events at revisions `base_revision + 1 ..= base_revision + events.len()`.
    pub events: Vec<ChangeEvent>,
}

/// Outputs of the [`Coordinator`]; see the module docs for what the shell does with each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Make these events durable.
    Write(StoreWrite),
    /// Answer request `id`.
    Reply {
        id: RequestId,
        result: Result<Reply, CommitError>,
    },
    /// Durable events, in revision order, for watchers.
    Publish(Vec<ChangeEvent>),
    /// Read the events after `after_revision` from the store and feed [`Input::Loaded`].
    Load { after_revision: u64 },
}

/// Who waits for a mutation's reply: a caller, or nobody (the coordinator's own retention
/// sweep, which simply sweeps again).
type Waiter = Option<RequestId>;

struct InFlight {
    write: StoreWrite,
    after: Registry,
    replies: Vec<(Waiter, Applied, u64)>,
}

/// The commit coordinator. See the module docs for the calling contract.
pub struct Coordinator {
    durable: Registry,
    queue: VecDeque<(Waiter, Mutation)>,
    in_flight: Option<InFlight>,
    loading: bool,
    outputs: VecDeque<Output>,
    next_write_id: u64,
    limits: AppendLimits,
    retention: Retention,
    /// The retention sweep goes on from this table id.
    sweep_from: TableId,
}

impl Coordinator {
    /// A coordinator over `durable`, the registry as read from the store. At most
    /// `batch_max` (≥ 1) requests are grouped into one store write.
    pub fn new(durable: Registry, batch_max: usize) -> Self {
        Self::with_limits(
            durable,
            AppendLimits {
                items: batch_max,
                ..AppendLimits::UNBOUNDED
            },
        )
    }

    /// A coordinator whose group commits fit `limits` (the store's, at most as many items
    /// as the shell groups): a group takes requests while their events fit, and a request
    /// whose event would not waits for the next group. A single event always makes a
    /// group, so nothing waits forever.
    pub fn with_limits(durable: Registry, limits: AppendLimits) -> Self {
        Self {
            durable,
            queue: VecDeque::new(),
            in_flight: None,
            loading: false,
            outputs: VecDeque::new(),
            next_write_id: 1,
            limits: AppendLimits {
                items: limits.items.max(1),
                ..limits
            },
            retention: Retention::FOREVER,
            sweep_from: 0,
        }
    }

    /// This coordinator with `retention` as its windows (by default it keeps everything:
    /// [`Retention::FOREVER`]).
    #[must_use]
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// Whether the last retention sweep step ([`Input::Sweep`]) stopped before the last
    /// table: the next step goes on from there.
    pub fn sweeping(&self) -> bool {
        self.sweep_from != 0
    }

    fn sweep(&mut self, now_ms: i64, max_tables: usize) {
        // The last step's expiries are not durable yet: looking again now would find the
        // same tables due.
        let pending = self.queue.iter().any(|(waiter, _)| waiter.is_none())
            || self
                .in_flight
                .as_ref()
                .is_some_and(|f| f.replies.iter().any(|(waiter, _, _)| waiter.is_none()));
        if pending {
            return;
        }
        let mut due = Vec::new();
        let mut stopped_at = 0;
        for table in self.durable.tables_from(self.sweep_from) {
            if due.len() >= max_tables {
                stopped_at = table.meta.id;
                break;
            }
            if let Some(expiry) = self.retention.expiry(table, now_ms) {
                due.push(Mutation::ExpireHistory {
                    table_id: table.meta.id,
                    expiry,
                });
            }
        }
        self.sweep_from = stopped_at;
        self.queue.extend(due.into_iter().map(|m| (None, m)));
    }

    /// The durable registry: everything in it has been acknowledged by the store.
    pub fn registry(&self) -> &Registry {
        &self.durable
    }

    /// Whether the coordinator waits for [`Input::Loaded`] (a write failed and its view
    /// may be stale) before it plans anything.
    pub fn loading(&self) -> bool {
        self.loading
    }

    /// Feeds one input. `now_ms` (milliseconds since the Unix epoch, from the shell's clock)
    /// stamps commits planned during this call. Drain [`Self::poll`] afterwards.
    pub fn handle(&mut self, input: Input, now_ms: i64) {
        match input {
            Input::Request { id, mutation } => self.queue.push_back((Some(id), mutation)),
            Input::WriteDone { write_id } => {
                if let Some(done) = self.take_in_flight(write_id) {
                    self.durable = done.after;
                    for (id, applied, revision) in done.replies {
                        self.reply(id, Ok(Reply { applied, revision }));
                    }
                    self.outputs.push_back(Output::Publish(done.write.events));
                }
            }
            Input::WriteFailed {
                write_id,
                outcome,
                message,
            } => {
                if let Some(failed) = self.take_in_flight(write_id) {
                    for (id, _, _) in failed.replies {
                        let error = match outcome {
                            WriteOutcome::NotWritten => CommitError::NotWritten(message.clone()),
                            WriteOutcome::Unknown => CommitError::OutcomeUnknown(message.clone()),
                        };
                        self.reply(id, Err(error));
                    }
                    // Our view may no longer match the store (another leader wrote, or an
                    // unknown write landed): re-read before planning anything else.
                    self.loading = true;
                    self.outputs.push_back(Output::Load {
                        after_revision: self.durable.revision(),
                    });
                }
            }
            Input::Sweep { max_tables } => self.sweep(now_ms, max_tables.max(1)),
            Input::Loaded(events) => {
                if self.loading {
                    self.loading = false;
                    // Writes whose outcome was unknown may have landed (ours, or another
                    // leader's): adopt them and publish them so watchers see no gap. An event
                    // that does not apply stops the catch-up; the next write then fails its
                    // revision condition and triggers another load.
                    let mut adopted = Vec::new();
                    for event in events {
                        if event.revision <= self.durable.revision() {
                            continue;
                        }
                        if self.durable.apply(&event).is_err() {
                            break;
                        }
                        adopted.push(event);
                    }
                    if !adopted.is_empty() {
                        self.outputs.push_back(Output::Publish(adopted));
                    }
                }
            }
        }
        self.plan_next_write(now_ms);
    }

    /// Next output, or `None` when there is nothing to do until the next input.
    #[must_use]
    pub fn poll(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// The expiry event of table `id` in `registry` at `now_ms`, if its history is past a
    /// window ([`Retention::expiry`]).
    fn expiry_of(&self, registry: &Registry, id: TableId, now_ms: i64) -> Option<ChangeEvent> {
        let expiry = self.retention.expiry(registry.table_by_id(id)?, now_ms)?;
        Some(ChangeEvent {
            revision: registry.revision() + 1,
            kind: expiry.change(id),
        })
    }

    /// Whether a group of `items` store items and `bytes` event bytes fits one write.
    fn fits(&self, items: usize, bytes: usize) -> bool {
        items <= self.limits.items && bytes <= self.limits.bytes
    }

    /// Answers `waiter` (a sweep's own mutations have none: the next sweep redoes them).
    fn reply(&mut self, waiter: Waiter, result: Result<Reply, CommitError>) {
        if let Some(id) = waiter {
            self.outputs.push_back(Output::Reply { id, result });
        }
    }

    fn take_in_flight(&mut self, write_id: u64) -> Option<InFlight> {
        match &self.in_flight {
            Some(f) if f.write.write_id == write_id => self.in_flight.take(),
            _ => None,
        }
    }

    fn plan_next_write(&mut self, now_ms: i64) {
        if self.in_flight.is_some() || self.loading || self.queue.is_empty() {
            return;
        }
        let mut after = self.durable.clone();
        let base_revision = after.revision();
        let mut events = Vec::new();
        let mut replies = Vec::new();
        let (mut items, mut bytes) = (0, 0);
        while items < self.limits.items {
            let Some((id, mutation)) = self.queue.pop_front() else {
                break;
            };
            // Kept to put back when its event does not fit this group.
            let unplanned = mutation.clone();
            match plan(&after, mutation, now_ms) {
                Ok(Planned::Event(kind)) => {
                    let event = ChangeEvent {
                        revision: after.revision() + 1,
                        kind,
                    };
                    let size = event.size_bound();
                    let cost = self.limits.items_for(size);
                    if !events.is_empty() && !self.fits(items + cost, bytes + size) {
                        self.queue.push_front((id, unplanned));
                        break;
                    }
                    items += cost;
                    bytes += size;
                    let applied = applied_of(&event);
                    // `plan` validated the mutation against `after`, so this cannot fail.
                    if let Err(e) = after.apply(&event) {
                        self.reply(id, Err(CommitError::NotWritten(e.to_string())));
                        continue;
                    }
                    replies.push((id, applied, event.revision));
                    let committed = match &event.kind {
                        ChangeKind::VersionCommitted { table_id, .. } => Some(*table_id),
                        _ => None,
                    };
                    events.push(event);
                    // A commit that takes its table past a window expires the history in
                    // the same write: a busy table never waits for the sweep.
                    if let Some(event) = committed.and_then(|id| self.expiry_of(&after, id, now_ms))
                    {
                        let size = event.size_bound();
                        let cost = self.limits.items_for(size);
                        if self.fits(items + cost, bytes + size) && after.apply(&event).is_ok() {
                            items += cost;
                            bytes += size;
                            events.push(event);
                        }
                    }
                }
                Ok(Planned::Replay { version }) => {
                    if events.is_empty() {
                        self.reply(
                            id,
                            Ok(Reply {
                                applied: Applied::Committed {
                                    version,
                                    replayed: true,
                                },
                                revision: after.revision(),
                            }),
                        );
                    } else {
                        // The original is in this very write: reply once it is durable.
                        replies.push((
                            id,
                            Applied::Committed {
                                version,
                                replayed: true,
                            },
                            after.revision(),
                        ));
                    }
                }
                Err(error) => {
                    // A caller that read a version newer than ours saw a write we do not
                    // know (one whose outcome was unknown to an earlier leader or to us):
                    // our view is stale, so re-read the store before planning more.
                    let stale = matches!(
                        error,
                        CommitError::VersionConflict { expected, latest, .. } if expected > latest
                    );
                    self.reply(id, Err(error));
                    if stale && events.is_empty() {
                        self.loading = true;
                        self.outputs.push_back(Output::Load {
                            after_revision: self.durable.revision(),
                        });
                        return;
                    }
                }
            }
        }
        if events.is_empty() {
            return;
        }
        let write = StoreWrite {
            write_id: self.next_write_id,
            base_revision,
            events,
        };
        self.next_write_id += 1;
        self.outputs.push_back(Output::Write(write.clone()));
        self.in_flight = Some(InFlight {
            write,
            after,
            replies,
        });
    }
}

enum Planned {
    Event(ChangeKind),
    Replay { version: u64 },
}

fn applied_of(event: &ChangeEvent) -> Applied {
    match &event.kind {
        ChangeKind::NamespaceCreated { .. } => Applied::NamespaceCreated,
        ChangeKind::NamespaceDropped { .. } => Applied::NamespaceDropped,
        ChangeKind::TableCreated { meta } => Applied::TableCreated(meta.clone()),
        ChangeKind::TableDropped { id } => Applied::TableDropped { id: *id },
        ChangeKind::VersionCommitted { record, .. } => Applied::Committed {
            version: record.version,
            replayed: false,
        },
        ChangeKind::ManifestFinalized { .. } => Applied::ManifestFinalized,
        ChangeKind::GrantChanged { privilege, .. } => Applied::GrantChanged(*privilege),
        ChangeKind::HistoryExpired { .. } => Applied::HistoryExpired,
    }
}

fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn namespace_not_found(registry: &Registry, name: &str) -> CommitError {
    CommitError::NamespaceNotFound {
        name: name.to_string(),
        existing: list(registry.namespaces()),
    }
}

/// Decides what `mutation` does to `registry` (validation only; nothing changes).
fn plan(registry: &Registry, mutation: Mutation, now_ms: i64) -> Result<Planned, CommitError> {
    match mutation {
        Mutation::CreateNamespace { name } => {
            validate_name("namespace", &name)?;
            if registry.has_namespace(&name) {
                return Err(CommitError::NamespaceExists { name });
            }
            Ok(Planned::Event(ChangeKind::NamespaceCreated { name }))
        }
        Mutation::DropNamespace { name } => {
            if !registry.has_namespace(&name) {
                return Err(namespace_not_found(registry, &name));
            }
            let tables = list(registry.tables_in(&name).map(|t| t.meta.name.as_str()));
            if !tables.is_empty() {
                return Err(CommitError::NamespaceNotEmpty { name, tables });
            }
            Ok(Planned::Event(ChangeKind::NamespaceDropped { name }))
        }
        Mutation::CreateTable {
            namespace,
            name,
            schema_ipc,
        } => {
            validate_name("table", &name)?;
            if schema_ipc.len() > SCHEMA_BYTES_MAX {
                return Err(CommitError::InvalidInput {
                    what: "table schema",
                    detail: format!(
                        "{} bytes; a schema is an Arrow IPC schema message of at most {SCHEMA_BYTES_MAX} bytes",
                        schema_ipc.len()
                    ),
                });
            }
            if !registry.has_namespace(&namespace) {
                return Err(namespace_not_found(registry, &namespace));
            }
            if registry.table(&namespace, &name).is_some() {
                return Err(CommitError::TableExists { namespace, name });
            }
            let id = registry.next_table_id();
            Ok(Planned::Event(ChangeKind::TableCreated {
                meta: TableMeta {
                    id,
                    namespace,
                    name,
                    schema_ipc,
                    location: crate::registry::table_location(id, now_ms),
                    created_revision: registry.revision() + 1,
                },
            }))
        }
        Mutation::DropTable { namespace, name } => {
            if !registry.has_namespace(&namespace) {
                return Err(namespace_not_found(registry, &namespace));
            }
            let Some(table) = registry.table(&namespace, &name) else {
                let existing = list(registry.tables_in(&namespace).map(|t| t.meta.name.as_str()));
                return Err(CommitError::TableNotFound {
                    namespace,
                    name,
                    existing,
                });
            };
            Ok(Planned::Event(ChangeKind::TableDropped {
                id: table.meta.id,
            }))
        }
        Mutation::Commit {
            table_id,
            base_version,
            manifest,
            operation,
        } => {
            manifest.validate()?;
            if let Some((operation_id, _)) = &operation {
                validate_operation_id(operation_id)?;
            }
            let table = registry
                .table_by_id(table_id)
                .ok_or(CommitError::TableIdNotFound { id: table_id })?;
            if let Some((operation_id, digest)) = &operation
                && let Some(seen) = table.operations.get(operation_id)
            {
                if seen.digest == *digest {
                    return Ok(Planned::Replay {
                        version: seen.version,
                    });
                }
                return Err(CommitError::OperationIdReused {
                    table_id,
                    operation_id: operation_id.clone(),
                    version: seen.version,
                });
            }
            let latest = table.latest_version();
            if base_version != latest {
                return Err(CommitError::VersionConflict {
                    table_id,
                    expected: base_version,
                    latest,
                });
            }
            let previous_ms = table
                .versions
                .last()
                .map_or(i64::MIN, |v| v.committed_at_ms);
            let (operation_id, digest) = match operation {
                Some((id, digest)) => (Some(id), Some(digest)),
                None => (None, None),
            };
            Ok(Planned::Event(ChangeKind::VersionCommitted {
                table_id,
                record: VersionRecord {
                    version: latest + 1,
                    manifest,
                    committed_at_ms: now_ms.max(previous_ms),
                    revision: registry.revision() + 1,
                    operation_id,
                    digest,
                },
            }))
        }
        Mutation::FinalizeManifest {
            table_id,
            version,
            manifest,
        } => {
            manifest.validate()?;
            let table = registry
                .table_by_id(table_id)
                .ok_or(CommitError::TableIdNotFound { id: table_id })?;
            if table.version(version).is_none() {
                return Err(CommitError::VersionNotFound {
                    table_id,
                    version,
                    latest: table.latest_version(),
                });
            }
            Ok(Planned::Event(ChangeKind::ManifestFinalized {
                table_id,
                version,
                manifest,
            }))
        }
        Mutation::Grant {
            principal,
            scope,
            privilege,
        } => {
            check_grant_target(registry, &principal, &scope)?;
            let now = registry.grant(&principal, &scope).max(Some(privilege));
            Ok(grant_changed(principal, scope, now))
        }
        Mutation::Revoke {
            principal,
            scope,
            privilege,
        } => {
            check_grant_target(registry, &principal, &scope)?;
            let held = registry.grant(&principal, &scope);
            let now = match privilege {
                Some(revoked) if held >= Some(revoked) => revoked.lower(),
                Some(_) => held,
                None => None,
            };
            Ok(grant_changed(principal, scope, now))
        }
        Mutation::ExpireHistory { table_id, expiry } => {
            let table = registry
                .table_by_id(table_id)
                .ok_or(CommitError::TableIdNotFound { id: table_id })?;
            let latest = table.latest_version();
            if expiry.versions_before > latest || expiry.operations_through > latest {
                return Err(CommitError::InvalidInput {
                    what: "history expiry",
                    detail: format!(
                        "{expiry:?} reaches past the latest version {latest}, which is never expired"
                    ),
                });
            }
            let expires_versions = expiry.versions_before > table.oldest_version();
            let expires_operations = table
                .operations
                .oldest_version()
                .is_some_and(|oldest| oldest <= expiry.operations_through);
            if !expires_versions && !expires_operations {
                // Expired already (by a commit since the sweep looked): write nothing.
                return Err(CommitError::InvalidInput {
                    what: "history expiry",
                    detail: format!("{expiry:?} expires nothing that is still kept"),
                });
            }
            Ok(Planned::Event(expiry.change(table_id)))
        }
    }
}

/// Checks the principal's name and that a namespace or table scope names an existing
/// namespace or table.
fn check_grant_target(
    registry: &Registry,
    principal: &str,
    scope: &GrantScope,
) -> Result<(), CommitError> {
    validate_principal(principal)?;
    match scope {
        GrantScope::Namespace(ns) if !registry.has_namespace(ns) => {
            Err(namespace_not_found(registry, ns))
        }
        GrantScope::Table { namespace, .. } if !registry.has_namespace(namespace) => {
            Err(namespace_not_found(registry, namespace))
        }
        GrantScope::Table { namespace, name } if registry.table(namespace, name).is_none() => {
            Err(CommitError::TableNotFound {
                namespace: namespace.clone(),
                name: name.clone(),
                existing: list(registry.tables_in(namespace).map(|t| t.meta.name.as_str())),
            })
        }
        _ => Ok(()),
    }
}

fn grant_changed(principal: String, scope: GrantScope, privilege: Option<Privilege>) -> Planned {
    Planned::Event(ChangeKind::GrantChanged {
        principal,
        scope,
        privilege,
    })
}
