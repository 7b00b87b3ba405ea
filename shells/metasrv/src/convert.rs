//! Conversions between `lake_core` types and their `lake.metasrv.v1` protobuf messages.

use lake_core::{
    ChangeEvent, ChangeKind, Digest, GrantScope, Lease, ManifestRef, Privilege, TableMeta,
    VersionRecord,
};

use crate::MetasrvError;
use crate::proto;
use crate::proto::change_event::Kind;

fn missing(what: &str) -> MetasrvError {
    MetasrvError::Malformed(format!("missing field {what}"))
}

impl From<&ManifestRef> for proto::ManifestRef {
    fn from(m: &ManifestRef) -> Self {
        Self {
            path: m.path.clone(),
            size_bytes: m.size_bytes,
        }
    }
}

impl From<proto::ManifestRef> for ManifestRef {
    fn from(m: proto::ManifestRef) -> Self {
        Self {
            path: m.path,
            size_bytes: m.size_bytes,
        }
    }
}

impl From<&TableMeta> for proto::TableMeta {
    fn from(m: &TableMeta) -> Self {
        Self {
            id: m.id,
            namespace: m.namespace.clone(),
            name: m.name.clone(),
            schema_ipc: m.schema_ipc.clone(),
            location: m.location.clone(),
            created_revision: m.created_revision,
        }
    }
}

impl From<proto::TableMeta> for TableMeta {
    fn from(m: proto::TableMeta) -> Self {
        Self {
            id: m.id,
            namespace: m.namespace,
            name: m.name,
            schema_ipc: m.schema_ipc,
            location: m.location,
            created_revision: m.created_revision,
        }
    }
}

impl From<&VersionRecord> for proto::VersionRecord {
    fn from(r: &VersionRecord) -> Self {
        Self {
            version: r.version,
            manifest: Some((&r.manifest).into()),
            committed_at_ms: r.committed_at_ms,
            revision: r.revision,
            operation_id: r.operation_id.clone(),
            digest: r.digest.map(|d| d.to_vec()).unwrap_or_default(),
        }
    }
}

/// Decodes a version record.
///
/// # Errors
/// [`MetasrvError::Malformed`] when the manifest is missing.
pub fn version_record(r: proto::VersionRecord) -> Result<VersionRecord, MetasrvError> {
    Ok(VersionRecord {
        version: r.version,
        manifest: r.manifest.ok_or_else(|| missing("manifest"))?.into(),
        committed_at_ms: r.committed_at_ms,
        revision: r.revision,
        operation_id: r.operation_id,
        digest: digest(&r.digest)?,
    })
}

/// Decodes a 32-byte digest; empty means none.
///
/// # Errors
/// [`MetasrvError::Malformed`] for any other length.
pub fn digest(bytes: &[u8]) -> Result<Option<Digest>, MetasrvError> {
    if bytes.is_empty() {
        return Ok(None);
    }
    Digest::try_from(bytes).map(Some).map_err(|_| {
        MetasrvError::Malformed(format!(
            "a payload digest must be 32 bytes, got {} bytes",
            bytes.len()
        ))
    })
}

impl From<&ChangeEvent> for proto::ChangeEvent {
    fn from(e: &ChangeEvent) -> Self {
        let kind = match &e.kind {
            ChangeKind::NamespaceCreated { name } => {
                Kind::NamespaceCreated(proto::NamespaceCreated { name: name.clone() })
            }
            ChangeKind::NamespaceDropped { name } => {
                Kind::NamespaceDropped(proto::NamespaceDropped { name: name.clone() })
            }
            ChangeKind::TableCreated { meta } => Kind::TableCreated(proto::TableCreated {
                meta: Some(meta.into()),
            }),
            ChangeKind::TableDropped { id } => Kind::TableDropped(proto::TableDropped { id: *id }),
            ChangeKind::VersionCommitted { table_id, record } => {
                Kind::VersionCommitted(proto::VersionCommitted {
                    table_id: *table_id,
                    record: Some(record.into()),
                })
            }
            ChangeKind::ManifestFinalized {
                table_id,
                version,
                manifest,
            } => Kind::ManifestFinalized(proto::ManifestFinalized {
                table_id: *table_id,
                version: *version,
                manifest: Some(manifest.into()),
            }),
            ChangeKind::GrantChanged {
                principal,
                scope,
                privilege,
            } => Kind::GrantChanged(proto::GrantChanged {
                principal: principal.clone(),
                scope: scope.to_wire(),
                privilege: privilege.map_or(0, Privilege::code),
            }),
            ChangeKind::HistoryExpired {
                table_id,
                versions_before,
                operations_through,
            } => Kind::HistoryExpired(proto::HistoryExpired {
                table_id: *table_id,
                versions_before: *versions_before,
                operations_through: *operations_through,
            }),
        };
        Self {
            revision: e.revision,
            kind: Some(kind),
        }
    }
}

/// Decodes a change event.
///
/// # Errors
/// [`MetasrvError::Malformed`] when a required field is missing.
pub fn change_event(e: proto::ChangeEvent) -> Result<ChangeEvent, MetasrvError> {
    let kind = match e.kind.ok_or_else(|| missing("kind"))? {
        Kind::NamespaceCreated(n) => ChangeKind::NamespaceCreated { name: n.name },
        Kind::NamespaceDropped(n) => ChangeKind::NamespaceDropped { name: n.name },
        Kind::TableCreated(t) => ChangeKind::TableCreated {
            meta: t.meta.ok_or_else(|| missing("meta"))?.into(),
        },
        Kind::TableDropped(t) => ChangeKind::TableDropped { id: t.id },
        Kind::VersionCommitted(v) => ChangeKind::VersionCommitted {
            table_id: v.table_id,
            record: version_record(v.record.ok_or_else(|| missing("record"))?)?,
        },
        Kind::ManifestFinalized(m) => ChangeKind::ManifestFinalized {
            table_id: m.table_id,
            version: m.version,
            manifest: m.manifest.ok_or_else(|| missing("manifest"))?.into(),
        },
        Kind::GrantChanged(g) => ChangeKind::GrantChanged {
            principal: g.principal,
            scope: grant_scope(&g.scope)?,
            privilege: privilege(g.privilege)?,
        },
        Kind::HistoryExpired(h) => ChangeKind::HistoryExpired {
            table_id: h.table_id,
            versions_before: h.versions_before,
            operations_through: h.operations_through,
        },
    };
    Ok(ChangeEvent {
        revision: e.revision,
        kind,
    })
}

/// Decodes a grant scope (`lake`, `lake.NAMESPACE`, `iceberg`).
///
/// # Errors
/// [`MetasrvError::Malformed`] naming the allowed forms.
pub fn grant_scope(text: &str) -> Result<GrantScope, MetasrvError> {
    GrantScope::from_wire(text).map_err(|e| MetasrvError::Malformed(e.to_string()))
}

/// Decodes a privilege code: 0 none, 1 read, 2 write, 3 admin.
///
/// # Errors
/// [`MetasrvError::Malformed`] for any other code.
pub fn privilege(code: u32) -> Result<Option<Privilege>, MetasrvError> {
    match code {
        0 => Ok(None),
        code => Privilege::from_code(code).map(Some).ok_or_else(|| {
            MetasrvError::Malformed(format!(
                "privilege code {code}: 0 none, 1 read, 2 write or 3 admin"
            ))
        }),
    }
}

impl From<&Lease> for proto::Lease {
    fn from(l: &Lease) -> Self {
        Self {
            epoch: l.epoch,
            holder: l.holder.clone(),
            address: l.address.clone(),
            renewal: l.renewal,
        }
    }
}

impl From<proto::Lease> for Lease {
    fn from(l: proto::Lease) -> Self {
        Self {
            epoch: l.epoch,
            holder: l.holder,
            address: l.address,
            renewal: l.renewal,
        }
    }
}
