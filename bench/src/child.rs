//! `lake serve` in a child process (this binary re-run as `lake-bench serve --data DIR`), so
//! its memory is its own to measure and the bench's data generation and DataFusion runs do
//! not share its heap.
//!
//! Control protocol over the child's stdio, one line each:
//! - child → parent, first line: `endpoint http://127.0.0.1:PORT`;
//! - parent → child `metasrv-requests`, child → parent: the embedded Metasrv's request count;
//! - end of stdin: the child shuts down gracefully and exits.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

/// How long a stopping child may take before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// Peak resident set size in bytes of process `pid` (a number, or `self`): `VmHWM` in
/// `/proc/PID/status` (Linux `proc(5)`); `None` where that is not available.
pub fn peak_rss_bytes(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

/// The parent's handle on the child server.
pub struct Server {
    /// Flight SQL endpoint, `http://127.0.0.1:PORT`.
    pub endpoint: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Starts the child on data directory `data` and waits for its endpoint line.
    ///
    /// # Errors
    /// The child cannot start or exits before announcing its endpoint.
    pub fn spawn(data: &Path) -> anyhow::Result<Self> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .arg("serve")
            .arg("--data")
            .arg(data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the lake serve child")?;
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().context("child stdout")?);
        let mut line = String::new();
        stdout.read_line(&mut line)?;
        let endpoint = line
            .trim()
            .strip_prefix("endpoint ")
            .with_context(|| format!("the lake serve child did not start (said {line:?})"))?
            .to_string();
        Ok(Self {
            endpoint,
            child,
            stdin,
            stdout,
        })
    }

    /// Requests the child's embedded Metasrv has served so far.
    ///
    /// # Errors
    /// The child is gone or answered something else than a number.
    pub fn metasrv_requests(&mut self) -> anyhow::Result<u64> {
        let stdin = self.stdin.as_mut().context("the child was stopped")?;
        writeln!(stdin, "metasrv-requests")?;
        stdin.flush()?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        line.trim()
            .parse()
            .with_context(|| format!("the child answered {line:?} to metasrv-requests"))
    }

    /// The child's peak resident set size in bytes since start or the last
    /// [`Self::reset_peak_rss`] (`VmHWM` in `/proc/PID/status`); `None` off Linux.
    pub fn peak_rss_bytes(&self) -> Option<u64> {
        peak_rss_bytes(&self.child.id().to_string())
    }

    /// Resets the peak RSS to the current RSS (writing `5` to `/proc/PID/clear_refs`, Linux
    /// `proc(5)`); ignored where that is not possible.
    pub fn reset_peak_rss(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5");
    }

    /// Closes the child's stdin (its shutdown signal) and waits for it to exit, killing it
    /// after [`STOP_GRACE`].
    ///
    /// # Errors
    /// The child exited with a failure.
    pub fn stop(mut self) -> anyhow::Result<()> {
        self.stdin = None;
        let deadline = Instant::now() + STOP_GRACE;
        loop {
            if let Some(status) = self.child.try_wait()? {
                anyhow::ensure!(
                    status.success(),
                    "the lake serve child exited with {status}"
                );
                return Ok(());
            }
            if Instant::now() > deadline {
                self.child.kill()?;
                anyhow::bail!("the lake serve child did not stop within {STOP_GRACE:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The child's side: the embedded server on `data` (with the `iceberg` catalog when
/// configured) until stdin ends.
///
/// # Errors
/// The server cannot start or fails.
pub async fn serve(
    data: &Path,
    iceberg: Option<lake_query::iceberg::IcebergConfig>,
) -> anyhow::Result<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = lake::embedded::ReplicaOptions {
        iceberg,
        ..Default::default()
    };
    let server = lake::embedded::start_with(data, "127.0.0.1:0".parse()?, &options, async {
        let _ = stopped.await;
    })
    .await?;
    println!("endpoint {}", server.endpoint());
    std::io::stdout().flush()?;
    let metasrv = server.metasrv.clone();
    std::thread::spawn(move || {
        let ended = answer_control(std::io::stdin().lock(), std::io::stdout(), || {
            metasrv.requests_served()
        });
        if let Err(e) = ended {
            eprintln!("lake-bench serve: stopping: {e}");
        }
        let _ = stop.send(());
    });
    server.wait().await
}

/// Longest control line the child reads, newline included, in bytes (the only command,
/// `metasrv-requests`, is 17).
const MAX_CONTROL_LINE: usize = 256;

/// Answers the parent's control lines from `input` on `output` until `input` ends:
/// `metasrv-requests` with `requests()`, anything else with `unknown command "…"`.
///
/// # Errors
/// A line longer than [`MAX_CONTROL_LINE`] bytes (say stdin is `/dev/zero`: reading it
/// whole would grow without bound), or `input`/`output` failing. Either ends the control
/// loop, which stops the server like the end of stdin.
fn answer_control(
    mut input: impl BufRead,
    mut output: impl Write,
    requests: impl Fn() -> u64,
) -> anyhow::Result<()> {
    let mut line = Vec::with_capacity(MAX_CONTROL_LINE);
    loop {
        line.clear();
        let read = (&mut input)
            .take(MAX_CONTROL_LINE as u64)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') && read == MAX_CONTROL_LINE {
            anyhow::bail!("a control line is longer than {MAX_CONTROL_LINE} bytes");
        }
        let command = String::from_utf8_lossy(&line);
        if command.trim() == "metasrv-requests" {
            writeln!(output, "{}", requests())?;
        } else {
            writeln!(output, "unknown command {:?}", command.trim_end())?;
        }
        output.flush()?;
    }
}

/// The Flight SQL peer (`bench/flight-peer`: datafusion-flight-sql-server serving the
/// bench's Parquet files) in a child process, killed when dropped.
pub struct FlightPeer {
    /// Flight SQL endpoint, `grpc://127.0.0.1:PORT`.
    pub endpoint: String,
    child: Child,
}

impl FlightPeer {
    /// Starts `exe` (a `lake-bench-flight-peer` binary) on a free loopback port over the
    /// `*.parquet` files in `parquet`, and waits for its `ready` line. The port may take a
    /// moment more to accept connections; `peers.py` retries its first query.
    ///
    /// # Errors
    /// No free port, the binary cannot start, or it exits before it is ready.
    pub fn spawn(exe: &Path, parquet: &Path) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut child = Command::new(exe)
            .arg(format!("127.0.0.1:{port}"))
            .arg(parquet)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting the Flight SQL peer {}", exe.display()))?;
        let mut stdout = BufReader::new(child.stdout.take().context("peer stdout")?);
        let mut line = String::new();
        stdout.read_line(&mut line)?;
        if line.trim() != "ready" {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("the Flight SQL peer did not start (said {line:?})");
        }
        Ok(Self {
            endpoint: format!("grpc://127.0.0.1:{port}"),
            child,
        })
    }
}

impl Drop for FlightPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_loop_answers_each_line_until_the_input_ends() {
        let mut output = Vec::new();
        let input = "metasrv-requests\nhello\nmetasrv-requests";
        answer_control(input.as_bytes(), &mut output, || 7).unwrap();
        assert_eq!(
            String::from_utf8(output).unwrap(),
            "7\nunknown command \"hello\"\n7\n"
        );
    }

    #[test]
    fn a_line_without_end_stops_the_loop_after_a_bounded_read() {
        // What `/dev/zero` as stdin sends: bytes and never a newline.
        let zeros = std::io::repeat(0).take(64 * 1024 * 1024);
        let mut input = BufReader::new(zeros);
        let mut output = Vec::new();
        let err = answer_control(&mut input, &mut output, || 0).unwrap_err();
        assert!(err.to_string().contains("longer than 256 bytes"), "{err}");
        assert!(output.is_empty());
        // Only the first line's bound (and the reader's buffer) was consumed.
        let left = input.into_inner().limit();
        assert!(
            left >= 64 * 1024 * 1024 - 8 * 1024,
            "read {} bytes",
            64 * 1024 * 1024 - left
        );
    }
}
