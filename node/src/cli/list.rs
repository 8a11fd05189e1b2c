//! What every list command shares: `--limit N` (the first N rows, in JSON and YAML too) and `--watch`
//! (print the list again whenever it changes: the cluster's change feed `GET /v1/watch` says when to
//! fetch it again; a frame is printed only when its text changed, redrawn in place on a terminal).

use std::future::Future;
use std::io::IsTerminal;
use std::time::Duration;

use serde_json::Value;

use super::args::{ListArgs, Output};
use super::error::CliError;
use super::output::document;
use crate::client::{ApiClient, ClientError};
use crate::sse::SseReader;

/// Keeps the first `limit` rows of a list answer: the array itself, or the `nodes` of a node page.
pub fn cut(value: &mut Value, limit: Option<u32>) {
    let Some(limit) = limit else {
        return;
    };
    let rows = match value {
        Value::Array(rows) => rows,
        Value::Object(page) => match page.get_mut("nodes") {
            Some(Value::Array(rows)) => rows,
            _ => return,
        },
        _ => return,
    };
    rows.truncate(limit as usize);
}

/// A list the server answers oldest first (deployments by id), newest first: what `deploy list` shows,
/// so that `--limit N` and `| head` keep the newest N.
pub fn newest_first(mut value: Value) -> Value {
    if let Value::Array(rows) = &mut value {
        rows.reverse();
    }
    value
}

/// The text of one frame: `table` for people, the document for scripts.
fn frame(output: Output, value: &Value, table: &impl Fn(&Value) -> String) -> String {
    if output.is_table() {
        table(value)
    } else {
        document(output, value)
    }
}

/// Runs a list command: `fetch` the answer, cut it to `--limit`, print it (as `table` makes it for
/// `-o table|wide`); with `--watch`, again whenever the cluster changes and the text with it.
pub async fn run<F, Fut>(
    client: &ApiClient,
    output: Output,
    args: ListArgs,
    fetch: F,
    table: impl Fn(&Value) -> String,
) -> Result<(), CliError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Value, CliError>>,
{
    let text = || async {
        let mut value = fetch().await?;
        cut(&mut value, args.limit);
        Ok::<_, CliError>(frame(output, &value, &table))
    };
    let mut shown = text().await?;
    if !args.watch {
        out!("{shown}");
        return Ok(());
    }
    let mut screen = Frames::new(output);
    screen.show(&shown);
    let mut broken = 0;
    loop {
        let response = match client
            .open_stream("/v1/watch", Duration::from_secs(365 * 24 * 3600))
            .await
        {
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
        while let Ok(Some(event)) = reader.next().await {
            match event.event.as_str() {
                "applied" => {
                    broken = 0;
                    let now = text().await?;
                    if now != shown {
                        screen.show(&now);
                        shown = now;
                    }
                }
                "closed" => {
                    return Err(CliError::StreamClosed {
                        why: convoy_actors::domain::clip(&event.data),
                    })
                }
                _ => {}
            }
        }
        broken += 1;
        if broken > 3 {
            return Err(ClientError::Unreachable {
                servers: client.servers().join(","),
                last: "the change feed (/v1/watch) kept closing".into(),
            }
            .into());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Where `--watch` prints its frames: redrawn in place on a terminal (tables), else one after the
/// other (YAML documents separated by `---`, tables by a blank line, JSON one document per frame).
struct Frames {
    output: Output,
    term: Option<console::Term>,
    drawn: usize,
    count: usize,
}

impl Frames {
    fn new(output: Output) -> Self {
        let term =
            (output.is_table() && std::io::stdout().is_terminal()).then(console::Term::stdout);
        Self {
            output,
            term,
            drawn: 0,
            count: 0,
        }
    }

    fn show(&mut self, text: &str) {
        if let Some(term) = &self.term {
            let _ = term.clear_last_lines(self.drawn);
            let _ = term.write_str(text);
            let _ = term.flush();
            self.drawn = text.lines().count();
            return;
        }
        let separator = match (self.count, self.output) {
            (0, _) | (_, Output::Json) => "",
            (_, Output::Yaml) => "---\n",
            _ => "\n",
        };
        out!("{separator}{text}");
        super::stdout::flush();
        self.count += 1;
    }
}

/// Every object of a paged list route (`GET /v1/resources` and the like, API.md "Lists are paged"): the pages
/// of `path` walked by `next_offset`, 1,000 objects each, their `key` arrays joined into the bare array the
/// route answers unpaged ([`crate::client_pages::list`]).
pub async fn all(client: &ApiClient, path: &str, key: &str) -> Result<Value, ClientError> {
    crate::client_pages::list(client, path, key).await
}
