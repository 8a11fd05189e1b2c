//! A reader of Server-Sent Events (`text/event-stream`) over a `reqwest` response: what `deploy watch` and
//! the tests use to follow `GET /v1/deployments/{id}/watch`.

/// One event: its `event:` name (`message` when absent), `id:`, the `data:` lines joined by `\n`, and how
/// many bytes it took on the wire (comments before it included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The event's name.
    pub event: String,
    /// Its id, if it had one.
    pub id: Option<String>,
    /// Its data.
    pub data: String,
    /// Bytes read for it, from the end of the previous event.
    pub wire_bytes: usize,
}

/// Why a stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// The connection failed or timed out.
    #[error("event stream broke: {0}")]
    Transport(String),
    /// One event was larger than [`MAX_EVENT_BYTES`].
    #[error("event stream sent an event over {MAX_EVENT_BYTES} bytes")]
    TooLarge,
}

/// The largest event accepted (a summary is a few KB).
pub const MAX_EVENT_BYTES: usize = 1 << 20;

/// Reads events from a streaming response.
pub struct SseReader {
    response: reqwest::Response,
    buf: Vec<u8>,
    /// Bytes read since the last event returned.
    pending_bytes: usize,
}

impl SseReader {
    /// Reads events from `response` (an answer of 200 with `text/event-stream`).
    pub fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buf: Vec::new(),
            pending_bytes: 0,
        }
    }

    /// The next event, `Ok(None)` when the server closed the stream.
    pub async fn next(&mut self) -> Result<Option<SseEvent>, SseError> {
        loop {
            if let Some(event) = self.take_event() {
                return Ok(Some(event));
            }
            if self.buf.len() > MAX_EVENT_BYTES {
                return Err(SseError::TooLarge);
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => {
                    self.pending_bytes += chunk.len();
                    self.buf.extend_from_slice(&chunk);
                }
                Ok(None) => return Ok(None),
                Err(e) => return Err(SseError::Transport(e.to_string())),
            }
        }
    }

    /// Parses the first complete block of the buffer that is an event (comment-only blocks are dropped).
    fn take_event(&mut self) -> Option<SseEvent> {
        loop {
            let end = self.buf.windows(2).position(|w| w == b"\n\n")?;
            let block: Vec<u8> = self.buf.drain(..end + 2).collect();
            if let Some(mut event) = parse_block(&String::from_utf8_lossy(&block)) {
                event.wire_bytes = self.pending_bytes - self.buf.len();
                self.pending_bytes = self.buf.len();
                return Some(event);
            }
        }
    }
}

/// One block (the lines between blank lines) as an event; `None` when it has no `data:` (a comment).
pub fn parse_block(block: &str) -> Option<SseEvent> {
    let mut event = None;
    let mut id = None;
    let mut data: Option<String> = None;
    for line in block.lines() {
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => event = Some(value.to_string()),
            "id" => id = Some(value.to_string()),
            "data" => match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_string()),
            },
            _ => {}
        }
    }
    Some(SseEvent {
        event: event.unwrap_or_else(|| "message".into()),
        id,
        data: data?,
        wire_bytes: block.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_parse_into_events_and_comments_are_skipped() {
        let e = parse_block("event: summary\nid: 7\ndata: {\"a\":1}\n\n").unwrap();
        assert_eq!(
            (e.event.as_str(), e.id.as_deref(), e.data.as_str()),
            ("summary", Some("7"), "{\"a\":1}")
        );
        assert_eq!(parse_block(": heartbeat\n\n"), None);
        let e = parse_block("data: a\ndata: b\n\n").unwrap();
        assert_eq!((e.event.as_str(), e.data.as_str()), ("message", "a\nb"));
    }
}
