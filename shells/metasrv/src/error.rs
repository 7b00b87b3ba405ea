//! The Metasrv crate's error enum.

use lake_core::CommitError;
use tonic::{Code, Status};

/// gRPC metadata key carrying the [`CommitError`] variant of a refused mutation.
pub(crate) const REASON_HEADER: &str = "x-lake-error";
/// The `x-lake-error` reason of a Watch ended because the log was truncated before the
/// revision it needs next (load a snapshot instead).
pub(crate) const LOG_TRUNCATED: &str = "log-truncated";

fn reason_of(error: &CommitError) -> &'static str {
    match error {
        CommitError::InvalidName { .. } => "invalid-name",
        CommitError::InvalidInput { .. } => "invalid-input",
        CommitError::NamespaceNotFound { .. } => "namespace-not-found",
        CommitError::NamespaceExists { .. } => "namespace-exists",
        CommitError::NamespaceNotEmpty { .. } => "namespace-not-empty",
        CommitError::TableNotFound { .. } => "table-not-found",
        CommitError::TableIdNotFound { .. } => "table-id-not-found",
        CommitError::TableExists { .. } => "table-exists",
        CommitError::VersionConflict { .. } => "version-conflict",
        CommitError::OperationIdReused { .. } => "operation-id-reused",
        CommitError::VersionNotFound { .. } => "version-not-found",
        CommitError::NotLeader { .. } => "not-leader",
        CommitError::NotWritten(_) => "not-written",
        CommitError::OutcomeUnknown(_) => "outcome-unknown",
    }
}

/// Errors of Metasrv and its client.
#[derive(Debug, thiserror::Error)]
pub enum MetasrvError {
    /// The durable store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The coordinator refused or could not complete a mutation.
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// A gRPC call failed; `code` tells retryable (`Aborted`, `Unavailable`) from final,
    /// `reason` is the server's `x-lake-error` (the [`CommitError`] variant) when it sent one.
    #[error("metasrv: {message}")]
    Rpc {
        code: Code,
        reason: String,
        message: String,
    },
    /// Could not connect to the Metasrv endpoint.
    #[error("cannot connect to metasrv at {endpoint}: {message}")]
    Connect { endpoint: String, message: String },
    /// A message from the wire did not decode into a valid value.
    #[error("malformed metasrv message: {0}")]
    Malformed(String),
    /// The node's settings are inconsistent.
    #[error("metasrv configuration: {0}")]
    Config(String),
    /// TLS settings are unusable (unreadable or malformed certificate, key or CA).
    #[error("TLS: {0}")]
    Tls(String),
    /// The Metasrv driver task has stopped.
    #[error("metasrv is shutting down")]
    ShuttingDown,
}

impl MetasrvError {
    /// Whether this is a lost compare-and-swap (definitely not committed; rebase and retry).
    pub fn is_conflict(&self) -> bool {
        match self {
            Self::Commit(e) => matches!(e, CommitError::VersionConflict { .. }),
            Self::Rpc { code, .. } => *code == Code::Aborted,
            _ => false,
        }
    }

    /// Whether the operation id was already used with another payload.
    pub fn is_operation_reused(&self) -> bool {
        match self {
            Self::Commit(e) => matches!(e, CommitError::OperationIdReused { .. }),
            Self::Rpc { reason, .. } => reason == "operation-id-reused",
            _ => false,
        }
    }

    /// Whether the named object does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            Self::Commit(e) => matches!(
                e,
                CommitError::NamespaceNotFound { .. }
                    | CommitError::TableNotFound { .. }
                    | CommitError::TableIdNotFound { .. }
                    | CommitError::VersionNotFound { .. }
            ),
            Self::Rpc { code, .. } => *code == Code::NotFound,
            _ => false,
        }
    }

    /// Whether a Watch ended because the log no longer holds the events it needs next
    /// (they were removed after a checkpoint): load [`crate::MetasrvClient::snapshot`] and
    /// watch from its revision.
    pub fn is_log_truncated(&self) -> bool {
        match self {
            Self::Store(e) => matches!(e, crate::store::StoreError::Truncated { .. }),
            Self::Rpc { reason, .. } => reason == LOG_TRUNCATED,
            _ => false,
        }
    }

    /// Whether the object already exists.
    pub fn is_already_exists(&self) -> bool {
        match self {
            Self::Commit(e) => matches!(
                e,
                CommitError::NamespaceExists { .. } | CommitError::TableExists { .. }
            ),
            Self::Rpc { code, .. } => *code == Code::AlreadyExists,
            _ => false,
        }
    }
}

/// `error` with its sources, outermost first: tonic's transport errors say only
/// "transport error" at the top, and the cause (refused connection, TLS handshake
/// failure) is underneath.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

impl From<Status> for MetasrvError {
    fn from(status: Status) -> Self {
        let reason = status
            .metadata()
            .get(REASON_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        // A transport failure (refused connection, a TLS alert such as a missing client
        // certificate) says only "transport error"; its cause is among the sources.
        let message = match std::error::Error::source(&status) {
            Some(source) => format!("{}: {}", status.message(), error_chain(source)),
            None => status.message().to_string(),
        };
        Self::Rpc {
            code: status.code(),
            reason,
            message,
        }
    }
}

impl From<MetasrvError> for Status {
    fn from(error: MetasrvError) -> Self {
        match error {
            MetasrvError::Commit(e) => {
                let code = match &e {
                    CommitError::InvalidName { .. } | CommitError::InvalidInput { .. } => {
                        Code::InvalidArgument
                    }
                    CommitError::NamespaceNotFound { .. }
                    | CommitError::TableNotFound { .. }
                    | CommitError::TableIdNotFound { .. }
                    | CommitError::VersionNotFound { .. } => Code::NotFound,
                    CommitError::NamespaceExists { .. } | CommitError::TableExists { .. } => {
                        Code::AlreadyExists
                    }
                    CommitError::NamespaceNotEmpty { .. }
                    | CommitError::OperationIdReused { .. } => Code::FailedPrecondition,
                    CommitError::VersionConflict { .. } => Code::Aborted,
                    CommitError::NotLeader { .. } | CommitError::NotWritten(_) => Code::Unavailable,
                    CommitError::OutcomeUnknown(_) => Code::DeadlineExceeded,
                };
                let message = lake_core::registry::clip(e.to_string(), 4096);
                let mut status = Status::new(code, message);
                if let Ok(value) = reason_of(&e).parse() {
                    status.metadata_mut().insert(REASON_HEADER, value);
                }
                status
            }
            MetasrvError::Rpc { code, message, .. } => Status::new(code, message),
            MetasrvError::Malformed(m) => Status::invalid_argument(m),
            other => Status::unavailable(other.to_string()),
        }
    }
}
