//! Sealed handles: Flight tickets and prepared-statement handles.
//!
//! A handle is `version (1 byte) ‖ HMAC-SHA256 tag (32 bytes) ‖ JSON payload`. The tag is
//! keyed with the replicas' shared ticket key, so any replica can verify a handle another
//! one issued and a client cannot forge or alter one (e.g. to read a version it was not
//! planned against). Handles carry everything needed to serve them: the server keeps no
//! per-statement state.

use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::QueryError;

const FORMAT_VERSION: u8 = 1;
const TAG_LEN: usize = 32;

/// One table version pinned at planning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// Namespace.
    pub namespace: String,
    /// Table key as it appears in the rewritten statement (`t`, `t@v3`, `t@t<ms>`).
    pub key: String,
    /// Table id.
    pub table_id: u64,
    /// Pinned Lance version (0: the table had no version and reads as empty).
    pub version: u64,
}

/// What a sealed handle carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sealed {
    /// A planned query: run `sql` at exactly `pins`, once per parameter row.
    Query {
        sql: String,
        pins: Vec<Pin>,
        /// Iceberg tables read, each at the snapshot planning resolved.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        iceberg: Vec<crate::iceberg::IcebergPin>,
        /// Bound parameters: base64 of an Arrow IPC stream; one execution per row.
        params: Option<String>,
        /// Registry revision the pins were resolved at.
        revision: u64,
    },
    /// A write (DDL, INSERT, CREATE TABLE … AS SELECT) that DoGet executes, once per
    /// parameter row as one commit. An INSERT commits under `operation_id`, so DoGet sent
    /// again with this ticket appends nothing new.
    Write {
        sql: String,
        /// Bound parameters: base64 of an Arrow IPC stream.
        params: Option<String>,
        operation_id: String,
    },
    /// The result of a write already executed at planning: base64 of an Arrow IPC stream.
    Result { ipc: String },
    /// A prepared statement (stateless): its SQL and any bound parameters. Each parameter
    /// bind gets its own operation id, under which a write executed with these parameters
    /// commits (so a retried execution of the bound handle writes once).
    Prepared {
        sql: String,
        params: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operation_id: Option<String>,
    },
}

/// Seals and opens handles with one key.
#[derive(Clone)]
pub struct TicketKey {
    /// HMAC-SHA256 keyed once; cloned per handle.
    mac: Hmac<Sha256>,
}

impl TicketKey {
    /// A key from raw bytes (32 or more random bytes are expected; RFC 2104 accepts any
    /// length).
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] if the HMAC implementation refuses the key.
    pub fn new(key: &[u8]) -> Result<Self, QueryError> {
        let mac = Hmac::<Sha256>::new_from_slice(key)
            .map_err(|e| QueryError::InvalidArgument(format!("ticket key: {e}")))?;
        Ok(Self { mac })
    }

    fn mac(&self) -> Hmac<Sha256> {
        self.mac.clone()
    }

    /// Seals `value`.
    pub fn seal(&self, value: &Sealed) -> Vec<u8> {
        let payload = serde_json::to_vec(value).unwrap_or_default();
        let mut mac = self.mac();
        mac.update(&payload);
        let tag = mac.finalize().into_bytes();
        let mut out = Vec::with_capacity(1 + TAG_LEN + payload.len());
        out.push(FORMAT_VERSION);
        out.extend_from_slice(&tag);
        out.extend_from_slice(&payload);
        out
    }

    /// Opens a sealed handle.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] when the handle is truncated, of another format, or
    /// was not sealed by a replica sharing this key.
    pub fn open(&self, bytes: &[u8]) -> Result<Sealed, QueryError> {
        let invalid = || {
            QueryError::InvalidArgument(
                "invalid ticket or statement handle: it was not issued by this Lake deployment or was altered".into(),
            )
        };
        if bytes.len() < 1 + TAG_LEN || bytes[0] != FORMAT_VERSION {
            return Err(invalid());
        }
        let (tag, payload) = bytes[1..].split_at(TAG_LEN);
        let mut mac = self.mac();
        mac.update(payload);
        mac.verify_slice(tag).map_err(|_| invalid())?;
        serde_json::from_slice(payload).map_err(|_| invalid())
    }
}

/// Base64 for IPC bytes inside a sealed JSON payload.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Inverse of [`b64`].
///
/// # Errors
/// [`QueryError::InvalidArgument`].
pub fn unb64(text: &str) -> Result<Vec<u8>, QueryError> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| QueryError::InvalidArgument(format!("malformed handle payload: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_ticket_opens_and_any_alteration_is_refused() {
        let key = TicketKey::new(&[7; 32]).expect("key");
        let value = Sealed::Query {
            sql: "SELECT 1".into(),
            pins: vec![Pin {
                namespace: "ns".into(),
                key: "t".into(),
                table_id: 3,
                version: 9,
            }],
            iceberg: vec![crate::iceberg::IcebergPin {
                namespace: vec!["lab".into(), "robots".into()],
                key: "runs@rdev".into(),
                metadata_location: "file:///w/metadata/00001.metadata.json".into(),
                snapshot_id: Some(42),
            }],
            params: None,
            revision: 12,
        };
        let sealed = key.seal(&value);
        assert_eq!(key.open(&sealed).expect("opens"), value);
        let mut forged = sealed.clone();
        let last = forged.len() - 3;
        forged[last] ^= 1;
        assert!(key.open(&forged).is_err());
        assert!(
            TicketKey::new(&[8; 32])
                .expect("key")
                .open(&sealed)
                .is_err()
        );
        assert!(key.open(&sealed[..10]).is_err());
    }
}
