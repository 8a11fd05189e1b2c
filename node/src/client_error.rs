//! Why an API call failed, as the client tells it: the API's own error, no server reachable (with the
//! root cause), or an answer that was not the JSON expected.

/// Why an API call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with the API's error shape.
    #[error("{message} ({status} {code})")]
    Api {
        /// HTTP status.
        status: u16,
        /// The API's error code.
        code: String,
        /// The server's message.
        message: String,
    },
    /// No server could be reached (or none had a leader) before the deadline. `last` names the last
    /// server tried and the root cause (`connection refused`, a DNS failure, a timeout).
    #[error("no convoy server reachable: {last}{}", others(.servers))]
    Unreachable {
        /// The servers tried.
        servers: String,
        /// The last failure.
        last: String,
    },
    /// The answer was not the JSON expected.
    #[error("unexpected answer from {server}{path}: {reason}")]
    Decode {
        /// The server.
        server: String,
        /// The path.
        path: String,
        /// What did not match.
        reason: String,
    },
    /// The server answered 429: this token is over its report budget there; come back after `retry_after`.
    #[error("{message} (429 rate_limited; retry after {}s)", .retry_after.as_secs())]
    RateLimited {
        /// The server's message (the token and the limit).
        message: String,
        /// The server's `Retry-After`.
        retry_after: std::time::Duration,
    },
    /// Servers answered, but none could serve the request before the deadline: 503, the cluster has no
    /// leader (or cannot commit, or the server is not a member). `last` is the last server's own message.
    #[error("{} reachable, but the cluster has no leader (waited {}s): {last}", reached(.servers), .waited.as_secs())]
    NoLeader {
        /// The servers tried.
        servers: String,
        /// How long the client kept trying.
        waited: std::time::Duration,
        /// The last 503: the server and its message.
        last: String,
    },
    /// No server address was given.
    #[error("no server given: pass --server host:port[,host:port...] or set CONVOY_SERVER")]
    NoServers,
}

/// `server a:1 is` or `servers a:1,b:2 are`.
fn reached(servers: &str) -> String {
    if servers.contains(',') {
        format!("servers {servers} are")
    } else {
        format!("server {servers} is")
    }
}

/// ` (tried a, b and c)` when more than one server was tried.
fn others(servers: &str) -> String {
    if servers.contains(',') {
        format!(" (tried {servers})")
    } else {
        String::new()
    }
}

/// The root cause of a failed request, without the URL reqwest puts in front of it (the caller names
/// the server once): `Connection refused (os error 111)`, `operation timed out`, a DNS failure.
pub fn cause(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    let root = source.to_string();
    if e.is_timeout() && !root.contains("timed out") {
        return format!("timed out ({root})");
    }
    if e.is_connect() && !root.to_lowercase().contains("connect") {
        return format!("cannot connect: {root}");
    }
    root
}
