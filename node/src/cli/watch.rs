//! `deploy watch`: follows a deployment through the server's change feed (`GET /v1/deployments/{id}/watch`,
//! one summary of a few KB per change, whatever the node count) until it reaches a terminal status.
//!
//! On a terminal it redraws one frame in place, cut to the terminal's height and width: header with the
//! deployment's own age, windows, pulse countdown, per-state counts, a density bar, then failing nodes by
//! name and the newest events as far as the height allows. Otherwise it prints one plain line per change
//! (or the summary's JSON with `-o json`). Exit: 0 on ROLLED_FORWARD, 1 otherwise or after `--timeout`; the
//! last line says how many nodes succeeded, failed, were skipped or timed out.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use convoy_actors::domain::{text, NodePhase, Status, SummaryView};

use super::args::Output;
use super::error::CliError;
use super::render::name;
use super::table::duration;
use crate::client::{ApiClient, ClientError};
use crate::sse::SseReader;

/// Node states in display order, with their mark in the density bar.
pub const MARKS: &[(NodePhase, char)] = &[
    (NodePhase::Succeeded, '█'),
    (NodePhase::Watching, '▓'),
    (NodePhase::Installing, '▒'),
    (NodePhase::Downloaded, '░'),
    (NodePhase::Downloading, '░'),
    (NodePhase::Pending, ' '),
    (NodePhase::RollingBack, '<'),
    (NodePhase::RolledBack, '-'),
    (NodePhase::Failed, 'x'),
    (NodePhase::Skipped, '.'),
    (NodePhase::TimedOut, '?'),
];

/// Lines a frame never goes below, whatever the terminal says.
const MIN_HEIGHT: usize = 6;

/// The exit code for a status: `None` while active, 0 for ROLLED_FORWARD, 1 for any other terminal status.
pub fn exit_code(status: Status) -> Option<i32> {
    match status {
        Status::RolledForward => Some(0),
        s if s.is_terminal() => Some(1),
        _ => None,
    }
}

/// `d-3 web/api v7 ROLLING_FORWARD (paused by user) · age 1m20s`, the age advanced by `since` (time since
/// the summary was made) while the deployment is active.
pub fn header(s: &SummaryView, since: Duration) -> String {
    let held = s
        .paused_by
        .as_ref()
        .map(|p| format!(" (paused by {})", name(p)))
        .unwrap_or_default();
    let age = if s.status.is_terminal() {
        format!("took {}", duration(s.age_ms))
    } else {
        format!("age {}", duration(s.age_ms + since.as_millis() as u64))
    };
    format!(
        "{} {}/{} v{} {}{held} · {age}",
        s.id,
        s.consumer,
        s.resource,
        s.version,
        name(&s.status)
    )
}

/// `install 2/2 · download 1/3`, `batch 2 of size 5 (3 open)` or `all at once: 4 installing`.
pub fn windows(s: &SummaryView) -> String {
    let w = &s.windows;
    let slots = |what: &str, used: u32, size: Option<u32>| match size {
        Some(size) => format!("{what} window {used}/{size}"),
        None => format!("{what} {used}"),
    };
    let mut parts = vec![
        slots("install", w.install.used, w.install.size),
        slots("download", w.download.used, w.download.size),
    ];
    if let Some(b) = &w.batch {
        parts.insert(
            0,
            format!("batch {} of size {} ({} open)", b.number, b.size, b.open),
        );
    }
    if let Some(r) = w.rollback {
        parts.push(format!("rolling back {r}"));
    }
    parts.join(" · ")
}

/// The pulse countdown at `since` after the summary was made.
pub fn pulse(s: &SummaryView, since: Duration) -> Option<String> {
    let p = s.pulse.as_ref()?;
    let state = if s.status.is_terminal() {
        "finished".to_string()
    } else if p.blocked {
        "BLOCKED awaiting a pulse".to_string()
    } else {
        match p.left_ms.map(|l| l - since.as_millis() as i64) {
            Some(left) if left >= 0 => format!("{} left", duration(left as u64)),
            Some(late) => format!("overdue by {}", duration(late.unsigned_abs())),
            None if s.status.is_paused() => "held (no countdown while paused)".into(),
            None => "no pulse yet".into(),
        }
    };
    Some(format!("pulse every {}: {state}", duration(p.interval_ms)))
}

/// `succeeded 3 · installing 2 · pending 5` (states with nodes only).
pub fn counts(s: &SummaryView) -> String {
    let parts: Vec<String> = MARKS
        .iter()
        .map(|(phase, _)| (*phase, s.counts.get(*phase)))
        .filter(|(_, n)| *n > 0)
        .map(|(phase, n)| format!("{} {n}", name(&phase)))
        .collect();
    if parts.is_empty() {
        "no nodes".into()
    } else {
        parts.join(" · ")
    }
}

/// A bar `width` cells wide whose marks are in proportion to the node counts, then `3/6 succeeded (50%)`.
pub fn density_bar(s: &SummaryView, width: usize) -> String {
    let total = s.nodes.max(1) as u64;
    let width = width.max(10);
    let mut bar = String::new();
    let mut done_nodes = 0u64;
    let mut cells = 0usize;
    for (phase, mark) in MARKS {
        done_nodes += u64::from(s.counts.get(*phase));
        // Cells up to this state, rounded, so the bar always has exactly `width` cells.
        let upto = (done_nodes * width as u64 / total) as usize;
        for _ in cells..upto {
            bar.push(*mark);
        }
        cells = cells.max(upto);
    }
    for _ in cells..width {
        bar.push(' ');
    }
    let pct = u64::from(s.counts.succeeded) * 100 / total;
    format!(
        "[{bar}] {}/{} succeeded ({pct}%)",
        s.counts.succeeded, s.nodes
    )
}

/// The frame for a terminal `height` lines by `width` columns, each line cut to the width.
pub fn frame(s: &SummaryView, since: Duration, height: usize, width: usize) -> Vec<String> {
    let height = height.max(MIN_HEIGHT);
    let width = width.max(20);
    let mut lines = vec![header(s, since), windows(s)];
    lines.extend(pulse(s, since));
    lines.push(counts(s));
    lines.push(density_bar(s, width.saturating_sub(32).min(100)));
    let room = height.saturating_sub(lines.len());
    if s.failing_total > 0 && room >= 2 {
        lines.push(format!("failing nodes ({}):", s.failing_total));
        let avail = room - 1;
        let mut shown = s.failing.len().min(avail);
        if s.failing_total as usize > shown {
            shown = shown.min(avail - 1);
        }
        for f in &s.failing[..shown] {
            let reason = f.reason.as_deref().unwrap_or("no reason reported");
            lines.push(format!(
                "  {} #{} {} after {} attempt(s): {reason}",
                f.id,
                f.ordinal,
                name(&f.state),
                f.failures
            ));
        }
        let hidden = s.failing_total as usize - shown;
        if hidden > 0 {
            lines.push(format!("  ... and {hidden} more"));
        }
    }
    let room = height.saturating_sub(lines.len());
    if room >= 2 && !s.events.is_empty() {
        lines.push("recent events:".into());
        let skip = s.events.len().saturating_sub(room - 1);
        for e in &s.events[skip..] {
            let what = match (&e.status, &e.action) {
                (Some(st), _) => name(st),
                (None, Some(a)) => name(a),
                (None, None) => "event".into(),
            };
            let node = e
                .node
                .as_deref()
                .map(|n| format!(" {n}"))
                .unwrap_or_default();
            let message = e
                .message
                .as_deref()
                .map(|m| format!(": {}", text::escape(m)))
                .unwrap_or_default();
            let ago = duration(s.now.saturating_sub(e.at));
            lines.push(format!(
                "  {ago} ago: {what}{node} by {}{message}",
                name(&e.by)
            ));
        }
    }
    lines.truncate(height);
    lines.iter().map(|l| cut(l, width)).collect()
}

/// How the nodes ended: `17/20 nodes succeeded, 3 failed, 0 skipped`, and `, 2 timed out` when any did.
pub fn ended(s: &SummaryView) -> String {
    let c = &s.counts;
    let mut words = format!(
        "{}/{} nodes succeeded, {} failed, {} skipped",
        c.succeeded, s.nodes, c.failed, c.skipped
    );
    if c.timed_out > 0 {
        words.push_str(&format!(", {} timed out", c.timed_out));
    }
    words
}

/// One plain line (no clock in it, so it changes only with the deployment).
pub fn line(s: &SummaryView) -> String {
    let failing = if s.failing_total > 0 {
        let names: Vec<&str> = s.failing.iter().take(5).map(|f| f.id.as_str()).collect();
        format!(" · failing {} ({})", s.failing_total, names.join(","))
    } else {
        String::new()
    };
    format!(
        "{} {}/{} v{} {} · {}/{} succeeded · {}{failing}",
        s.id,
        s.consumer,
        s.resource,
        s.version,
        name(&s.status),
        s.counts.succeeded,
        s.nodes,
        counts(s)
    )
}

fn cut(line: &str, width: usize) -> String {
    match line.char_indices().nth(width) {
        Some((at, _)) => line[..at].to_string(),
        None => line.to_string(),
    }
}

/// Redraws a frame in place on the terminal.
struct Screen {
    term: console::Term,
    drawn: usize,
}

impl Screen {
    fn draw(&mut self, s: &SummaryView, since: Duration) {
        let (rows, cols) = self.term.size();
        let lines = frame(s, since, (rows as usize).saturating_sub(1), cols as usize);
        let _ = self.term.clear_last_lines(self.drawn);
        let _ = self.term.write_str(&(lines.join("\n") + "\n"));
        let _ = self.term.flush();
        self.drawn = lines.len();
    }
}

/// Follows deployment `id` until it ends or `timeout` (given as `flag`) passes. Ok on ROLLED_FORWARD;
/// `CliError::Ended` naming the status otherwise; `CliError::WatchTimeout` after `timeout`.
pub async fn watch(
    client: &ApiClient,
    id: &str,
    output: Output,
    timeout: Option<Duration>,
    flag: &'static str,
) -> Result<(), CliError> {
    let path = format!("/v1/deployments/{}/watch", super::body::encode(id));
    let started = Instant::now();
    let deadline = timeout.map(|t| started + t);
    let mut screen = (std::io::stdout().is_terminal() && output.is_table()).then(|| Screen {
        term: console::Term::stdout(),
        drawn: 0,
    });
    let mut last: Option<(SummaryView, Instant)> = None;
    let mut printed = String::new();
    let mut broken = 0;
    let timed_out = || CliError::WatchTimeout {
        id: id.to_string(),
        after: duration(started.elapsed().as_millis() as u64),
        flag,
    };
    loop {
        // A stream cut at the deadline, or a server gone meanwhile, ends the watch as the timeout it is.
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(timed_out());
        }
        // The stream outlives the deadline a little, so that the clock below says when it passed.
        let open_for = deadline.map_or(Duration::from_secs(7 * 24 * 3600), |d| {
            d.saturating_duration_since(Instant::now()) + Duration::from_secs(2)
        });
        let response = match client.open_stream(&path, open_for).await {
            Ok(r) => r,
            Err(e @ ClientError::Unreachable { .. }) if broken < 3 => {
                broken += 1;
                eprintln!("warning: {e}; still trying");
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let mut reader = SseReader::new(response);
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            let event = tokio::select! {
                e = reader.next() => e,
                _ = tick.tick() => {
                    // Between summaries only the clock moves: age and countdown.
                    if let (Some(screen), Some((s, at))) = (&mut screen, &last) {
                        screen.draw(s, at.elapsed());
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Err(timed_out());
                    }
                    continue;
                }
            };
            let event = match event {
                Ok(Some(e)) => e,
                Ok(None) | Err(_) => break,
            };
            if event.event != "summary" {
                continue;
            }
            broken = 0;
            let s: SummaryView =
                serde_json::from_str(&event.data).map_err(|e| ClientError::Decode {
                    server: client.servers().join(","),
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            match (&mut screen, output) {
                (Some(screen), _) => screen.draw(&s, Duration::ZERO),
                (None, Output::Json) => outln!("{}", event.data),
                (None, Output::Yaml) => {
                    let value = serde_json::from_str(&event.data).unwrap_or_default();
                    out!("---\n{}", super::output::document(output, &value));
                }
                (None, Output::Table | Output::Wide) => {
                    let l = line(&s);
                    if l != printed {
                        outln!("{l}");
                        printed = l;
                    }
                }
            }
            if let Some(code) = exit_code(s.status) {
                return match code {
                    0 => {
                        if output.is_table() {
                            outln!(
                                "deployment {} rolled forward: {} in {}",
                                s.id,
                                ended(&s),
                                duration(s.age_ms)
                            );
                        }
                        Ok(())
                    }
                    _ => Err(CliError::Ended {
                        id: s.id.to_string(),
                        status: name(&s.status),
                        counts: ended(&s),
                    }),
                };
            }
            last = Some((s, Instant::now()));
        }
        broken += 1;
        if broken > 3 {
            return Err(ClientError::Unreachable {
                servers: client.servers().join(","),
                last: "the watch stream kept closing before the deployment ended".into(),
            }
            .into());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[cfg(test)]
#[path = "watch_test.rs"]
mod tests;
