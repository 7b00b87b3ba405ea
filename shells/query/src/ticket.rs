//! Sealed handles: Flight tickets and prepared-statement handles.
//!
//! A handle is `version (1 byte) ‖ HMAC-SHA256 tag (32 bytes) ‖ JSON payload`. The tag is
//! keyed with the replicas' shared ticket key, so any replica can verify a handle another
//! one issued and a client cannot forge or alter one (e.g. to read a version it was not
//! planned against). Handles carry everything needed to serve them: the server keeps no
//! per-statement state. The payload also names the principal the handle was issued to
//! (when clients log in) and when it expires: a handle serves only its own user, and only
//! for as long as its purpose lasts ([`TICKET_TTL`], [`PREPARED_TTL`]).

use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::QueryError;

const FORMAT_VERSION: u8 = 2;
/// How long a ticket (a planned query or write, a write's result) may be redeemed.
pub const TICKET_TTL: std::time::Duration = std::time::Duration::from_secs(3600);
/// How long a prepared statement handle stays valid.
pub const PREPARED_TTL: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// What is sealed: a handle, whom it was issued to, and until when (Unix epoch ms).
#[derive(Serialize, Deserialize)]
struct Envelope {
    handle: Sealed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    principal: Option<String>,
    expires_ms: u64,
}

/// Milliseconds since the Unix epoch from the system clock: the one wall-clock reading of
/// this shell (ticket and token expiry, running statements, the catalog follower).
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
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

    /// A key for another purpose derived from this one (HMAC-SHA256 of `label`), so
    /// every replica sharing the ticket key derives the same one and neither key reveals
    /// the other.
    pub fn derive(&self, label: &str) -> Vec<u8> {
        let mut mac = self.mac();
        mac.update(b"lake derived key: ");
        mac.update(label.as_bytes());
        mac.finalize().into_bytes().to_vec()
    }

    fn mac(&self) -> Hmac<Sha256> {
        self.mac.clone()
    }

    /// Seals `value` for `principal` (`None` when clients do not log in), valid for
    /// [`PREPARED_TTL`] if it is a prepared statement handle, else [`TICKET_TTL`].
    pub fn seal(&self, value: &Sealed, principal: Option<&str>) -> Vec<u8> {
        let ttl = match value {
            Sealed::Prepared { .. } => PREPARED_TTL,
            _ => TICKET_TTL,
        };
        self.seal_until(
            value,
            principal,
            now_ms().saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
        )
    }

    fn seal_until(&self, value: &Sealed, principal: Option<&str>, expires_ms: u64) -> Vec<u8> {
        let envelope = Envelope {
            handle: value.clone(),
            principal: principal.map(str::to_string),
            expires_ms,
        };
        let payload = serde_json::to_vec(&envelope).unwrap_or_default();
        let mut mac = self.mac();
        mac.update(&payload);
        let tag = mac.finalize().into_bytes();
        let mut out = Vec::with_capacity(1 + TAG_LEN + payload.len());
        out.push(FORMAT_VERSION);
        out.extend_from_slice(&tag);
        out.extend_from_slice(&payload);
        out
    }

    /// Opens a sealed handle presented by `principal`.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] when the handle is truncated, of another format, or
    /// was not sealed by a replica sharing this key; [`QueryError::Unauthenticated`] when
    /// it was issued to another principal or has expired.
    pub fn open(&self, bytes: &[u8], principal: Option<&str>) -> Result<Sealed, QueryError> {
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
        let envelope: Envelope = serde_json::from_slice(payload).map_err(|_| invalid())?;
        if envelope.principal.as_deref() != principal {
            return Err(QueryError::Unauthenticated(
                "this ticket or statement handle was issued to another user".into(),
            ));
        }
        if now_ms() >= envelope.expires_ms {
            return Err(QueryError::Unauthenticated(
                "this ticket or statement handle has expired: plan or prepare the statement again"
                    .into(),
            ));
        }
        Ok(envelope.handle)
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
        let sealed = key.seal(&value, None);
        assert_eq!(key.open(&sealed, None).expect("opens"), value);
        let mut forged = sealed.clone();
        let last = forged.len() - 3;
        forged[last] ^= 1;
        assert!(key.open(&forged, None).is_err());
        assert!(
            TicketKey::new(&[8; 32])
                .expect("key")
                .open(&sealed, None)
                .is_err()
        );
        assert!(key.open(&sealed[..10], None).is_err());
    }

    #[test]
    fn a_ticket_serves_only_its_principal_and_only_until_it_expires() {
        let key = TicketKey::new(&[7; 32]).expect("key");
        let value = Sealed::Result { ipc: "x".into() };
        let ada = key.seal(&value, Some("ada"));
        assert_eq!(key.open(&ada, Some("ada")).expect("ada"), value);
        for other in [Some("bob"), None] {
            let err = key.open(&ada, other).expect_err("another principal");
            assert!(
                matches!(err, QueryError::Unauthenticated(ref m) if m.contains("another user")),
                "{err}"
            );
        }
        let anonymous = key.seal(&value, None);
        assert!(key.open(&anonymous, Some("ada")).is_err());
        let expired = key.seal_until(&value, Some("ada"), now_ms() - 1);
        let err = key.open(&expired, Some("ada")).expect_err("expired");
        assert!(err.to_string().contains("expired"), "{err}");
        let prepared = Sealed::Prepared {
            sql: "SELECT 1".into(),
            params: None,
            operation_id: None,
        };
        assert!(key.open(&key.seal(&prepared, None), None).is_ok());
    }
}

/// Tickets and handles are client bytes: whatever a client sends, opening it is a refusal
/// or the value sealed, never a panic.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_bytes_open_to_a_refusal_without_panicking(
            bytes in proptest::collection::vec(any::<u8>(), 0..512),
            principal in proptest::option::of("[a-z]{0,8}"),
        ) {
            let key = TicketKey::new(&[7; 32]).expect("key");
            prop_assert!(key.open(&bytes, principal.as_deref()).is_err());
        }

        #[test]
        fn a_sealed_value_opens_for_its_principal_and_altered_it_is_refused(
            sql in ".{0,200}",
            principal in proptest::option::of("[a-zA-Z0-9_.-]{1,16}"),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let key = TicketKey::new(&[9; 32]).expect("key");
            let value = Sealed::Prepared { sql, params: None, operation_id: None };
            let sealed = key.seal(&value, principal.as_deref());
            prop_assert_eq!(key.open(&sealed, principal.as_deref()).expect("opens"), value);
            let mut altered = sealed.clone();
            let at = flip.index(altered.len());
            altered[at] ^= 1 << bit;
            prop_assert!(key.open(&altered, principal.as_deref()).is_err());
        }
    }
}
