//! What a client may read in an error: every gRPC status a Query replica sends passes
//! through [`RedactLayer`], which rewrites its message (the `grpc-message` header or
//! trailer, gRPC over HTTP/2 "Responses") before it leaves the process.
//!
//! * Server-side absolute paths and `file://` URIs (data directories, stage objects, the
//!   source locations that Lance and the standard library append to their errors) become
//!   `<path>`: a client learns which table and version failed, not the server's layout.
//! * Control characters (raw bytes that a decoder echoed) become `?`.
//! * An `INTERNAL` or `UNKNOWN` status gets a reference; the server log holds the original
//!   message under the same reference, so an operator can find what a user reports.
//!
//! Messages are redacted where they leave, not where they are made, so a path that a
//! library puts into an error Lake merely forwards is caught too.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::HeaderMap;
use http_body::Frame;
use http_body_util::BodyExt;
use http_body_util::combinators::MapFrame;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode, utf8_percent_encode};

/// What stands for a redacted path in a client-facing message.
pub const REDACTED_PATH: &str = "<path>";

/// Bytes that gRPC's `grpc-message` percent-encodes: outside 0x20–0x7E, and `%`.
const GRPC_MESSAGE: &AsciiSet = &CONTROLS.add(b'%');

/// gRPC status codes whose message names no cause a client can act on (gRPC `Code`).
const CODE_UNKNOWN: &str = "2";
const CODE_INTERNAL: &str = "13";

/// Characters that end a path inside a message.
fn ends_path(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ')' | ']' | '}' | ',' | ';' | '>')
}

/// Characters after which a `/` starts a path (rather than dividing, as in `a/b` or `1/2`).
fn starts_path_after(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '`' | '(' | '[' | '{' | '=' | '<' | ',' | ':'
        )
}

/// Whether `token` is a relative Rust source location, `dir/file.rs:LINE` or
/// `dir/file.rs:LINE:COLUMN` (Lance errors end with the `file!()` and line of where they
/// were made: `shells/query/src/dataset.rs:2118:5`), a `:` or `.` after it allowed.
fn is_source_location(token: &str) -> bool {
    let token = token.trim_end_matches([':', '.']);
    let Some((file, position)) = token.rsplit_once(".rs:") else {
        return false;
    };
    !file.is_empty()
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && position
            .split(':')
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && position.split(':').count() <= 2
}

/// `message` with server-side paths and raw bytes taken out (see the module doc).
///
/// A path is a `file://` URI, or a `/` at the start of a word followed by at least one more
/// `/`-separated segment (`/var/lake/tables/1.lance`, `/root/.cargo/…/commit.rs:291:13`);
/// it runs to the next space, quote, bracket, `,` or `;`. Other URIs (`s3://…`,
/// `grpc://…`) and a single segment (`/tmp`) stay.
pub fn redact(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    let mut previous: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        let at_word_start = previous.is_none_or(starts_path_after);
        let word_len = rest.find(ends_path).unwrap_or(rest.len());
        let path_len = if rest.starts_with("file://")
            || (at_word_start && is_source_location(&rest[..word_len]))
        {
            Some(word_len)
        } else if c == '/' && at_word_start && !rest.starts_with("//") {
            let end = rest.find(ends_path).unwrap_or(rest.len());
            let token = &rest[..end];
            // `/a/b`: a second segment, and not a `//` of a URI scheme before it.
            let second = token[1..].find('/');
            second
                .filter(|&i| i > 0 && previous != Some('/'))
                .map(|_| end)
        } else {
            None
        };
        // Punctuation that ends a sentence right after a path stays ("… at /a/b: then").
        let path_len = path_len.map(|len| {
            let kept = rest[..len].trim_end_matches([':', '.']).len();
            if kept > 1 { kept } else { len }
        });
        match path_len {
            Some(len) => {
                out.push_str(REDACTED_PATH);
                previous = rest[..len].chars().last();
                rest = &rest[len..];
            }
            None => {
                out.push(if c.is_control() && c != '\n' && c != '\t' {
                    '?'
                } else {
                    c
                });
                previous = Some(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// Rewrites the status message in `headers` (a `grpc-message` header or trailer), if any.
fn redact_status(headers: &mut HeaderMap) {
    let Some(value) = headers.get("grpc-message") else {
        return;
    };
    let original = percent_decode(value.as_bytes())
        .decode_utf8_lossy()
        .into_owned();
    let code = headers
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let mut message = redact(&original);
    if code == CODE_INTERNAL || code == CODE_UNKNOWN {
        let reference = format!("{:016x}", rand::random::<u64>());
        tracing::error!(%reference, code = %code, message = %original, "internal error sent to a client");
        message.push_str(&format!(
            " (reference {reference}; the server log has the details)"
        ));
    } else if message != original {
        tracing::debug!(code = %code, message = %original, "status message redacted");
    }
    let encoded = utf8_percent_encode(&message, GRPC_MESSAGE).to_string();
    if let Ok(value) = http::HeaderValue::from_str(&encoded) {
        headers.insert("grpc-message", value);
    } else {
        headers.remove("grpc-message");
    }
}

fn redact_frame(frame: Frame<Bytes>) -> Frame<Bytes> {
    match frame.into_trailers() {
        Ok(mut trailers) => {
            redact_status(&mut trailers);
            Frame::trailers(trailers)
        }
        Err(frame) => frame,
    }
}

/// The body of a response whose trailers pass through [`redact_status`].
pub type RedactedBody<B> = MapFrame<B, fn(Frame<Bytes>) -> Frame<Bytes>>;

/// A tower layer for tonic's server: see the module doc.
#[derive(Clone, Copy, Debug, Default)]
pub struct RedactLayer;

impl<S> tower_layer::Layer<S> for RedactLayer {
    type Service = Redact<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Redact { inner }
    }
}

/// The service [`RedactLayer`] makes.
#[derive(Clone, Debug)]
pub struct Redact<S> {
    inner: S,
}

impl<S, ReqBody, ResBody> tower_service::Service<http::Request<ReqBody>> for Redact<S>
where
    S: tower_service::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: http_body::Body<Data = Bytes>,
{
    type Response = http::Response<RedactedBody<ResBody>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let response = self.inner.call(request);
        Box::pin(async move {
            let mut response = response.await?;
            redact_status(response.headers_mut());
            Ok(response.map(|body| body.map_frame(redact_frame as fn(_) -> _)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_paths_and_file_uris_are_taken_out_and_the_rest_stays() {
        assert_eq!(
            redact(
                "lance: append to default.race: Dataset already exists: /tmp/lake-test-x1/tables/1.lance"
            ),
            "lance: append to default.race: Dataset already exists: <path>"
        );
        assert_eq!(
            redact(
                "cannot open ns.t version 3: Not found: file:///var/lake/tables/3.lance/_versions/3.manifest, /root/.cargo/registry/src/index/lance-table-8.0.1/src/io/commit.rs:291:13"
            ),
            "cannot open ns.t version 3: Not found: <path>, <path>"
        );
        assert_eq!(
            redact("object store error at '/srv/data/x' (path \"/a/b\")"),
            "object store error at '<path>' (path \"<path>\")"
        );
        assert_eq!(
            redact("FILE uri is not on stage file:///srv/stage/1: a FILE value names. See /a/b."),
            "FILE uri is not on stage <path>: a FILE value names. See <path>."
        );
        // A relative source location, as Lance's errors end.
        assert_eq!(
            redact(
                "lance: append on default.failover: LanceError(IO): metasrv: operation was canceled, shells/query/src/dataset.rs:2118:5"
            ),
            "lance: append on default.failover: LanceError(IO): metasrv: operation was canceled, <path>"
        );
        assert_eq!(redact("at src/lib.rs:12."), "at <path>.");
        // Division, ratios, URIs other than file://, and a lone segment are not paths.
        for kept in [
            "SELECT a / b FROM t",
            "ratio 1/2 of a/b",
            "s3://bucket/lake/tables/1.lance is unreachable",
            "connect to grpc://127.0.0.1:50051/x failed",
            "not a directory: /tmp",
            "table lake.ns.t version 3",
            "the file main.rs is not a location",
            "port a.rs:x",
        ] {
            assert_eq!(redact(kept), kept);
        }
    }

    #[test]
    fn raw_bytes_become_question_marks_and_lines_stay() {
        assert_eq!(redact("bad \u{0}\u{7f}x\nnext\tcol"), "bad ??x\nnext\tcol");
    }

    #[test]
    fn status_headers_are_rewritten_and_internal_ones_get_a_reference() {
        let mut headers = HeaderMap::new();
        headers.insert("grpc-status", "13".parse().expect("value"));
        let message = utf8_percent_encode(
            "append to ns.t: Dataset already exists: /var/lake/tables/1.lance 100%",
            GRPC_MESSAGE,
        )
        .to_string();
        headers.insert("grpc-message", message.parse().expect("value"));
        redact_status(&mut headers);
        let sent = percent_decode(headers["grpc-message"].as_bytes())
            .decode_utf8()
            .expect("utf-8")
            .into_owned();
        assert!(
            sent.starts_with("append to ns.t: Dataset already exists: <path> 100% (reference "),
            "{sent}"
        );
        assert!(!sent.contains("/var/lake"), "{sent}");

        let mut headers = HeaderMap::new();
        headers.insert("grpc-status", "3".parse().expect("value"));
        headers.insert("grpc-message", "no%20such%20column".parse().expect("value"));
        redact_status(&mut headers);
        assert_eq!(headers["grpc-message"], "no such column");
    }
}
