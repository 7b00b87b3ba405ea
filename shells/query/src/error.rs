//! The Query crate's error enum and its mapping to Flight (gRPC) statuses.

use datafusion::error::DataFusionError;
use lake_metasrv::MetasrvError;
use tonic::Status;

/// Errors of a Query replica. Each maps to a gRPC status whose message says what was
/// wrong and what is allowed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The SQL text did not parse or plan.
    #[error("SQL error: {0}")]
    Sql(String),
    /// A statement or request that is well formed but not supported.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// A table, namespace or catalog that does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Input that does not fit (schema mismatch, bad parameter, bad ticket, …).
    #[error("{0}")]
    InvalidArgument(String),
    /// The same operation id was used with a different payload.
    #[error("{0}")]
    Conflict(String),
    /// A request larger than the server accepts.
    #[error("{0}")]
    TooLarge(String),
    /// Metasrv refused or failed.
    #[error(transparent)]
    Metasrv(#[from] MetasrvError),
    /// Lance failed to read or write a dataset.
    #[error("lance: {0}")]
    Lance(String),
    /// DataFusion failed while executing.
    #[error("execution: {0}")]
    Execution(String),
    /// A write that committed nothing and may be sent again as it was (it lost the commit
    /// race more often than the retry budget allows).
    #[error("{0}")]
    Aborted(String),
    /// A write whose outcome Lake cannot learn (Metasrv gave no definite answer): it may
    /// have committed. The message says how to retry safely.
    #[error("{0}")]
    OutcomeUnknown(String),
    /// A wait (read-your-writes, commit, an external catalog) ran out of time.
    #[error("{0}")]
    Timeout(String),
    /// An external service (the Iceberg REST catalog, its storage) cannot be reached or
    /// failed.
    #[error("{0}")]
    Unavailable(String),
    /// An external service refused Lake's credentials.
    #[error("{0}")]
    Unauthenticated(String),
    /// The client cancelled the statement.
    #[error("{0}")]
    Cancelled(String),
    /// The caller holds no grant for what it asked (see [`crate::access`]).
    #[error("{0}")]
    PermissionDenied(String),
}

impl From<DataFusionError> for QueryError {
    fn from(e: DataFusionError) -> Self {
        match e {
            DataFusionError::External(inner) => match inner.downcast::<QueryError>() {
                Ok(q) => *q,
                Err(other) => match other.downcast::<DataFusionError>() {
                    Ok(e) => Self::from(*e),
                    Err(other) => Self::from_external(other.as_ref()),
                },
            },
            DataFusionError::Context(context, inner) => match Self::from(*inner) {
                Self::Execution(m) => Self::Execution(format!("{context}: {m}")),
                other => other,
            },
            // The cause, classified: a planning error wrapped with its source span, one of
            // several errors, or one shared by several partitions (a join's build side, a
            // scalar subquery).
            DataFusionError::Diagnostic(_, inner) => Self::from(*inner),
            DataFusionError::Collection(errors) => match errors.into_iter().next() {
                Some(first) => Self::from(first),
                None => Self::Execution("an empty collection of errors".into()),
            },
            DataFusionError::Shared(shared) => match std::sync::Arc::try_unwrap(shared) {
                Ok(inner) => Self::from(inner),
                Err(shared) => Self::classify(&shared),
            },
            other => Self::classify(&other),
        }
    }
}

/// Whether DataFusion's "internal" error is a pattern the query gave that does not compile:
/// datafusion-physical-expr 54 (`binary/kernels.rs`) reports Arrow's `ComputeError`
/// "Regular expression did not compile" for `SIMILAR TO` and `~` with `internal_err!`.
fn is_bad_pattern(message: &str) -> bool {
    message.contains("Regular expression did not compile")
}

impl QueryError {
    /// The kind and message of DataFusion's error `e`, by reference (for one shared by
    /// several partitions, which [`From<DataFusionError>`] cannot own; a Lake error inside
    /// it is rebuilt with [`Self::same_kind`]).
    fn classify(e: &DataFusionError) -> Self {
        match e {
            // The parser's own "sql parser error: " would follow our "SQL error: ".
            DataFusionError::SQL(e, _) => {
                let text = e.to_string();
                Self::Sql(
                    text.strip_prefix("sql parser error: ")
                        .map_or_else(|| text.clone(), str::to_string),
                )
            }
            DataFusionError::SchemaError(e, _) => Self::Sql(e.to_string()),
            DataFusionError::Plan(m) => Self::Sql(m.clone()),
            DataFusionError::NotImplemented(m) => Self::Unsupported(m.clone()),
            DataFusionError::Configuration(m) | DataFusionError::Execution(m) => {
                Self::InvalidArgument(m.clone())
            }
            // Arrow kernels fail on the data a query names: casts, overflow, division by zero.
            DataFusionError::ArrowError(e, _) => Self::InvalidArgument(e.to_string()),
            DataFusionError::ResourcesExhausted(m) => Self::TooLarge(m.clone()),
            DataFusionError::Internal(m) if is_bad_pattern(m) => Self::InvalidArgument(m.clone()),
            DataFusionError::Context(context, inner) => match Self::classify(inner) {
                Self::Execution(m) => Self::Execution(format!("{context}: {m}")),
                other => other,
            },
            DataFusionError::Diagnostic(_, inner) => Self::classify(inner),
            DataFusionError::Shared(inner) => Self::classify(inner),
            DataFusionError::Collection(errors) => errors.first().map_or_else(
                || Self::Execution("an empty collection of errors".into()),
                Self::classify,
            ),
            DataFusionError::External(inner) => {
                if let Some(q) = inner.downcast_ref::<QueryError>() {
                    q.same_kind()
                } else if let Some(e) = inner.downcast_ref::<DataFusionError>() {
                    Self::classify(e)
                } else {
                    Self::from_external(inner.as_ref())
                }
            }
            other => Self::Execution(other.to_string()),
        }
    }

    /// A foreign error inside DataFusion's: an Arrow kernel's or a regular expression's
    /// failure on what the query names (the simplifier parses a literal pattern with
    /// `regex_syntax`) is the client's ([`QueryError::InvalidArgument`]); anything else is
    /// an execution failure.
    fn from_external(e: &(dyn std::error::Error + Send + Sync + 'static)) -> Self {
        if e.downcast_ref::<arrow::error::ArrowError>().is_some()
            || e.downcast_ref::<regex::Error>().is_some()
            || e.downcast_ref::<regex_syntax::Error>().is_some()
        {
            Self::InvalidArgument(e.to_string())
        } else {
            Self::Execution(e.to_string())
        }
    }

    /// A new error of the same kind and message as `self` (a Metasrv error becomes the
    /// status it maps to, as its message).
    fn same_kind(&self) -> Self {
        let m = self.to_string();
        match self {
            Self::Sql(m) => Self::Sql(m.clone()),
            Self::Unsupported(m) => Self::Unsupported(m.clone()),
            Self::NotFound(_) => Self::NotFound(m),
            Self::InvalidArgument(_) => Self::InvalidArgument(m),
            Self::Conflict(_) => Self::Conflict(m),
            Self::TooLarge(_) => Self::TooLarge(m),
            Self::Lance(m) => Self::Lance(m.clone()),
            Self::Execution(m) => Self::Execution(m.clone()),
            Self::Aborted(_) => Self::Aborted(m),
            Self::OutcomeUnknown(_) => Self::OutcomeUnknown(m),
            Self::Timeout(_) => Self::Timeout(m),
            Self::Unavailable(_) | Self::Metasrv(_) => Self::Unavailable(m),
            Self::Unauthenticated(_) => Self::Unauthenticated(m),
            Self::Cancelled(_) => Self::Cancelled(m),
            Self::PermissionDenied(_) => Self::PermissionDenied(m),
        }
    }
}

impl From<arrow::error::ArrowError> for QueryError {
    fn from(e: arrow::error::ArrowError) -> Self {
        Self::InvalidArgument(format!("arrow: {e}"))
    }
}

impl From<QueryError> for DataFusionError {
    fn from(e: QueryError) -> Self {
        DataFusionError::External(Box::new(e))
    }
}

/// Longest status message sent, in bytes: gRPC carries it in a header.
const STATUS_MESSAGE_MAX: usize = 4096;

impl From<QueryError> for Status {
    fn from(e: QueryError) -> Self {
        let message = lake_core::registry::clip(e.to_string(), STATUS_MESSAGE_MAX);
        match e {
            QueryError::Sql(_) | QueryError::InvalidArgument(_) => {
                Status::invalid_argument(message)
            }
            QueryError::Unsupported(_) => Status::unimplemented(message),
            QueryError::NotFound(_) => Status::not_found(message),
            QueryError::Conflict(_) => Status::already_exists(message),
            QueryError::Aborted(_) => Status::aborted(message),
            QueryError::TooLarge(_) => Status::resource_exhausted(message),
            QueryError::Timeout(_) => Status::deadline_exceeded(message),
            QueryError::Unavailable(_) | QueryError::OutcomeUnknown(_) => {
                Status::unavailable(message)
            }
            QueryError::Unauthenticated(_) => Status::unauthenticated(message),
            QueryError::Cancelled(_) => Status::cancelled(message),
            QueryError::PermissionDenied(_) => Status::permission_denied(message),
            QueryError::Metasrv(m) => {
                let status = Status::from(m);
                Status::new(status.code(), status.message().to_string())
            }
            QueryError::Lance(_) | QueryError::Execution(_) => Status::internal(message),
        }
    }
}
