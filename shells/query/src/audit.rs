//! The audit log: one line per statement a client runs, under the tracing target
//! [`TARGET`] (`RUST_LOG=lake::audit=info` keeps only these), when the statement ends:
//! who ran it, what kind of statement it was, the tables and versions it read, its outcome
//! and how long it took. Never the SQL text or parameter values (they may hold data).

use std::time::Instant;

use crate::ticket::Sealed;

/// The tracing target of audit lines.
pub const TARGET: &str = "lake::audit";

/// What an audit line says about a statement; logged once, when dropped.
#[derive(Debug)]
pub struct Audit {
    principal: String,
    kind: &'static str,
    tables: String,
    started: Instant,
    rows: u64,
    outcome: Option<String>,
    /// Writes no line: the statement's line was written already (the result of a write
    /// that ran when it was planned).
    silent: bool,
}

impl Audit {
    /// Starts the line of the statement `sealed` stands for, run by `principal` (`None`
    /// when clients do not log in).
    pub fn start(principal: Option<&str>, sealed: &Sealed) -> Self {
        let (kind, tables) = match sealed {
            Sealed::Query { pins, iceberg, .. } => (
                "query",
                pins.iter()
                    .map(|p| format!("lake.{}.{}@{}", p.namespace, p.key, p.version))
                    .chain(iceberg.iter().map(|p| {
                        format!(
                            "iceberg.{}.{}@{}",
                            p.namespace.join("."),
                            p.key,
                            p.snapshot_id
                                .map_or_else(|| "empty".into(), |id| id.to_string())
                        )
                    }))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            Sealed::Write { .. } => ("write", String::new()),
            // The write ran, and left its line, when it was planned.
            Sealed::Result { .. } => ("write-result", String::new()),
            Sealed::Prepared { .. } => ("prepared", String::new()),
        };
        Self {
            principal: principal.unwrap_or("anonymous").to_string(),
            kind,
            tables,
            started: Instant::now(),
            rows: 0,
            outcome: None,
            silent: matches!(sealed, Sealed::Result { .. }),
        }
    }

    /// Starts the line of a write run by `principal` outside a ticket (an update call or
    /// an executed prepared statement).
    pub fn write(principal: Option<&str>) -> Self {
        Self::of(principal, "write")
    }

    /// This line, naming `tables` (e.g. `lake.sales.orders`, the table an ingest writes).
    #[must_use]
    pub fn on(mut self, tables: String) -> Self {
        self.tables = tables;
        self
    }

    /// Starts the line of a statement of `kind` run by `principal` outside a ticket.
    pub fn of(principal: Option<&str>, kind: &'static str) -> Self {
        Self {
            principal: principal.unwrap_or("anonymous").to_string(),
            kind,
            tables: String::new(),
            started: Instant::now(),
            rows: 0,
            outcome: None,
            silent: false,
        }
    }

    /// Records the outcome of a write that returned `result` (rows written).
    pub fn written<E: std::fmt::Display>(mut self, result: &Result<i64, E>) {
        match result {
            Ok(rows) => {
                self.rows = u64::try_from(*rows).unwrap_or(0);
                self.finished();
            }
            Err(e) => self.failed(e),
        }
    }

    /// Counts `rows` more rows sent.
    pub fn rows(&mut self, rows: usize) {
        self.rows = self.rows.saturating_add(rows as u64);
    }

    /// Records that the statement was refused with `code` (a gRPC status code such as
    /// `NOT_FOUND`), without the message, which may quote the statement's values.
    pub fn refused(mut self, code: tonic::Code) {
        let name = format!("{code:?}");
        // `NotFound` → `NOT_FOUND`, as gRPC spells status codes.
        let mut spelled = String::with_capacity(name.len() + 4);
        for (i, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                spelled.push('_');
            }
            spelled.push(c.to_ascii_uppercase());
        }
        self.outcome.get_or_insert(spelled);
    }

    /// Records the error the statement ended with (the first one).
    pub fn failed(&mut self, error: &impl std::fmt::Display) {
        self.outcome
            .get_or_insert_with(|| lake_core::registry::clip(error.to_string(), 256));
    }

    /// Records that the statement ran to its end.
    pub fn finished(&mut self) {
        self.outcome.get_or_insert_with(|| "ok".into());
    }
}

impl Drop for Audit {
    fn drop(&mut self) {
        if self.silent {
            return;
        }
        // A stream dropped before its end: the client cancelled or went away.
        let outcome = self.outcome.as_deref().unwrap_or("cancelled");
        tracing::info!(
            target: TARGET,
            principal = %self.principal,
            kind = self.kind,
            tables = %self.tables,
            rows = self.rows,
            outcome,
            duration_ms = self.started.elapsed().as_millis() as u64,
            "statement"
        );
    }
}
