//! How a checkpoint (the registry at one revision) is encoded, stored and sent: the
//! protobuf `RegistryCheckpoint` of the registry's parts ([`lake_core::RegistryParts`]),
//! cut into chunks that fit a store record (a DynamoDB item holds 400 KB) or a gRPC
//! message, and a `CheckpointHeader` (format, revision, length, chunk count, SHA-256) that
//! says how to put it back together and checks it. Both stores and the `Snapshot` call
//! use this one encoding.

use lake_core::{
    GrantScope, OperationRecord, Privilege, Registry, RegistryParts, StoreError, TableParts,
};
use prost::Message;
use sha2::{Digest as _, Sha256};

use crate::convert;
use crate::proto;

/// The encoding version this code writes: 2, with each table's retained operation ids
/// stored beside its versions (retention lets them outlive their versions).
pub const FORMAT: u32 = 2;

/// The oldest encoding this code reads: 1, where every version was kept and a table's
/// operation ids are those of its versions' records.
pub const FORMAT_OLDEST: u32 = 1;

/// Largest encoded checkpoint a reader accepts, in bytes: 8 GiB, far above a registry of
/// 10,000 tables × 1,000 versions (about 1.5 GB), so a corrupt or hostile header cannot
/// make a reader allocate without bound.
pub const BYTES_MAX: u64 = 8 << 30;

/// A registry encoded for storing or sending.
pub struct Encoded {
    /// What to store (or send) first.
    pub header: proto::CheckpointHeader,
    /// The encoded `RegistryCheckpoint`.
    pub bytes: Vec<u8>,
    chunk_bytes: usize,
}

impl Encoded {
    /// `registry` encoded, to be cut into chunks of at most `chunk_bytes` bytes (≥ 1).
    pub fn new(registry: &Registry, chunk_bytes: usize) -> Self {
        let chunk_bytes = chunk_bytes.max(1);
        let bytes = encode(registry).encode_to_vec();
        let chunks = bytes.len().div_ceil(chunk_bytes);
        let header = proto::CheckpointHeader {
            format: FORMAT,
            revision: registry.revision(),
            bytes: bytes.len() as u64,
            chunks: u32::try_from(chunks).unwrap_or(u32::MAX),
            sha256: Sha256::digest(&bytes).to_vec(),
        };
        Self {
            header,
            bytes,
            chunk_bytes,
        }
    }

    /// Refuses to store a checkpoint larger than [`BYTES_MAX`] (no reader would take it,
    /// and the log it covers would be gone).
    ///
    /// # Errors
    /// [`StoreError::Refused`] naming the size.
    pub fn check_size(&self) -> Result<(), StoreError> {
        if self.header.bytes > BYTES_MAX {
            return Err(StoreError::Refused(format!(
                "a checkpoint of {} bytes is more than the {BYTES_MAX} a reader accepts",
                self.header.bytes
            )));
        }
        Ok(())
    }

    /// Bytes to reserve for reading a checkpoint `header` announces: its length, up to
    /// 64 MiB (a damaged header makes no reader reserve more; the buffer grows as chunks
    /// arrive).
    pub fn capacity_for(header: &proto::CheckpointHeader) -> usize {
        usize::try_from(header.bytes.min(64 << 20)).unwrap_or(0)
    }

    /// The chunks, in order (`header.chunks` of them).
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> {
        self.bytes.chunks(self.chunk_bytes)
    }
}

fn encode(registry: &Registry) -> proto::RegistryCheckpoint {
    proto::RegistryCheckpoint {
        revision: registry.revision(),
        next_table_id: registry.next_table_id(),
        namespaces: registry
            .namespace_entries()
            .map(|(name, created_revision)| proto::CheckpointNamespace {
                name: name.to_string(),
                created_revision,
            })
            .collect(),
        tables: registry
            .tables()
            .map(|table| proto::CheckpointTable {
                meta: Some((&table.meta).into()),
                versions: table.versions.iter().map(Into::into).collect(),
                operations: table
                    .operations
                    .in_commit_order()
                    .into_iter()
                    .map(|(id, record)| proto::CheckpointOperation {
                        id: id.to_string(),
                        digest: record.digest.to_vec(),
                        version: record.version,
                        committed_at_ms: record.committed_at_ms,
                    })
                    .collect(),
            })
            .collect(),
        grants: registry
            .grants()
            .map(|(principal, scope, privilege)| proto::GrantChanged {
                principal: principal.to_string(),
                scope: scope.to_wire(),
                privilege: privilege.code(),
            })
            .collect(),
    }
}

fn corrupt(revision: u64, message: String) -> StoreError {
    StoreError::Corrupt {
        revision,
        message: format!("checkpoint: {message}"),
    }
}

/// A stored `CheckpointHeader` record, decoded.
///
/// # Errors
/// [`StoreError::Corrupt`] when it does not decode.
pub fn decode_header(bytes: &[u8]) -> Result<proto::CheckpointHeader, StoreError> {
    proto::CheckpointHeader::decode(bytes).map_err(|e| StoreError::Corrupt {
        revision: 0,
        message: format!("checkpoint header: {e}"),
    })
}

/// Checks a header before its chunks are read: the format is known and the length is
/// within [`BYTES_MAX`].
///
/// # Errors
/// [`StoreError::Corrupt`] naming what is wrong.
pub fn check_header(header: &proto::CheckpointHeader) -> Result<(), StoreError> {
    if !(FORMAT_OLDEST..=FORMAT).contains(&header.format) {
        return Err(corrupt(
            header.revision,
            format!(
                "format {} (this Lake reads formats {FORMAT_OLDEST} to {FORMAT}; a newer Lake wrote it?)",
                header.format
            ),
        ));
    }
    if header.bytes > BYTES_MAX {
        return Err(corrupt(
            header.revision,
            format!("{} bytes, more than {BYTES_MAX}", header.bytes),
        ));
    }
    Ok(())
}

/// The registry that `bytes` (the chunks put back together) encode, checked against
/// `header`: format, length, SHA-256, revision, and [`Registry::from_parts`].
///
/// # Errors
/// [`StoreError::Corrupt`] naming the first check that failed.
pub fn decode(header: &proto::CheckpointHeader, bytes: &[u8]) -> Result<Registry, StoreError> {
    check_header(header)?;
    let revision = header.revision;
    if bytes.len() as u64 != header.bytes {
        return Err(corrupt(
            revision,
            format!(
                "{} bytes where the header says {}",
                bytes.len(),
                header.bytes
            ),
        ));
    }
    if Sha256::digest(bytes).as_slice() != header.sha256.as_slice() {
        return Err(corrupt(
            revision,
            "SHA-256 does not match the header".into(),
        ));
    }
    let decoded = proto::RegistryCheckpoint::decode(bytes)
        .map_err(|e| corrupt(revision, format!("does not decode: {e}")))?;
    if decoded.revision != revision {
        return Err(corrupt(
            revision,
            format!(
                "holds revision {} where the header says {revision}",
                decoded.revision
            ),
        ));
    }
    let malformed = |e: crate::MetasrvError| corrupt(revision, e.to_string());
    let mut tables = Vec::with_capacity(decoded.tables.len());
    for table in decoded.tables {
        let meta = table
            .meta
            .ok_or_else(|| corrupt(revision, "a table without its meta".into()))?;
        let versions = table
            .versions
            .into_iter()
            .map(convert::version_record)
            .collect::<Result<Vec<_>, _>>()
            .map_err(malformed)?;
        let mut operations = Vec::with_capacity(table.operations.len());
        if header.format == 1 {
            // Format 1 kept every version: its operation ids are its versions' ones.
            operations.extend(versions.iter().filter_map(|v| {
                Some((
                    v.operation_id.clone()?,
                    OperationRecord {
                        digest: v.digest?,
                        version: v.version,
                        committed_at_ms: v.committed_at_ms,
                    },
                ))
            }));
        }
        for op in table.operations {
            let digest = convert::digest(&op.digest)
                .map_err(malformed)?
                .ok_or_else(|| corrupt(revision, "an operation id without its digest".into()))?;
            operations.push((
                op.id,
                OperationRecord {
                    digest,
                    version: op.version,
                    committed_at_ms: op.committed_at_ms,
                },
            ));
        }
        tables.push(TableParts {
            meta: meta.into(),
            versions,
            operations,
        });
    }
    let mut grants = Vec::with_capacity(decoded.grants.len());
    for grant in decoded.grants {
        let scope: GrantScope = convert::grant_scope(&grant.scope).map_err(malformed)?;
        let privilege: Privilege = convert::privilege(grant.privilege)
            .map_err(malformed)?
            .ok_or_else(|| corrupt(revision, "a grant of no privilege".into()))?;
        grants.push((grant.principal, scope, privilege));
    }
    let parts = RegistryParts {
        revision,
        next_table_id: decoded.next_table_id,
        namespaces: decoded
            .namespaces
            .into_iter()
            .map(|n| (n.name, n.created_revision))
            .collect(),
        tables,
        grants,
    };
    Registry::from_parts(parts).map_err(|e| corrupt(revision, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lake_core::store::contract::event;

    #[test]
    fn a_checkpoint_reads_back_and_damage_is_refused() {
        let log: Vec<_> = (1..=30).map(event).collect();
        let registry = Registry::from_log(&log).expect("replays");
        let encoded = Encoded::new(&registry, 64);
        assert_eq!(encoded.chunks().count() as u32, encoded.header.chunks);
        assert!(encoded.header.chunks > 1, "small chunks: several of them");
        let bytes: Vec<u8> = encoded.chunks().flatten().copied().collect();
        assert_eq!(decode(&encoded.header, &bytes).expect("decodes"), registry);

        let mut damaged = bytes.clone();
        damaged[10] ^= 1;
        let err = decode(&encoded.header, &damaged).expect_err("checksum");
        assert!(err.to_string().contains("SHA-256"), "{err}");
        let err = decode(&encoded.header, &bytes[..bytes.len() - 1]).expect_err("short");
        assert!(err.to_string().contains("bytes where"), "{err}");
        let mut newer = encoded.header.clone();
        newer.format = FORMAT + 1;
        let err = decode(&newer, &bytes).expect_err("format");
        assert!(err.to_string().contains("format 3"), "{err}");
    }

    #[test]
    fn a_checkpoint_keeps_expired_history_out_and_operation_ids_that_outlive_their_versions() {
        use lake_core::store::contract::fleet_event;
        use lake_core::{ChangeEvent, ChangeKind};
        // 2 tables, 10 versions each, every version an append with an operation id.
        let mut log: Vec<_> = (1..=23).map(|r| fleet_event(2, r)).collect();
        log.push(ChangeEvent {
            revision: 24,
            kind: ChangeKind::HistoryExpired {
                table_id: 1,
                versions_before: 8,
                operations_through: 5,
            },
        });
        let registry = Registry::from_log(&log).expect("replays");
        let table = registry.table_by_id(1).expect("t1");
        assert_eq!((table.oldest_version(), table.latest_version()), (8, 10));
        assert_eq!(table.operations.len(), 5, "ids of versions 6 to 10");
        let encoded = Encoded::new(&registry, 1 << 20);
        let bytes: Vec<u8> = encoded.chunks().flatten().copied().collect();
        let decoded = decode(&encoded.header, &bytes).expect("decodes");
        assert_eq!(decoded, registry);
        let table = decoded.table_by_id(1).expect("t1");
        assert!(table.version(7).is_none() && table.version(8).is_some());
        let (_, op6) = table
            .operations
            .iter()
            .find(|(_, op)| op.version == 6)
            .expect("the id of expired version 6 is kept");
        assert_eq!(op6.version, 6);
        assert_eq!(decoded.table_by_id(2).expect("t2").versions.len(), 10);
    }
}

#[cfg(test)]
mod format_1 {
    use super::*;
    use lake_core::store::contract::fleet_event;

    /// A checkpoint written in format 1 (before retention: no operation ids beside the
    /// versions) reads back with the operation ids of its versions' records.
    #[test]
    fn a_format_1_checkpoint_reads_back_with_its_versions_operation_ids() {
        let log: Vec<_> = (1..=9).map(|r| fleet_event(2, r)).collect();
        let registry = Registry::from_log(&log).expect("replays");
        let mut message = encode(&registry);
        for table in &mut message.tables {
            table.operations.clear();
        }
        let bytes = message.encode_to_vec();
        let header = proto::CheckpointHeader {
            format: 1,
            revision: registry.revision(),
            bytes: bytes.len() as u64,
            chunks: 1,
            sha256: Sha256::digest(&bytes).to_vec(),
        };
        let decoded = decode(&header, &bytes).expect("format 1 decodes");
        assert_eq!(decoded, registry);
        let table = decoded.table_by_id(1).expect("t1");
        assert_eq!(table.operations.len(), table.versions.len());
    }
}
