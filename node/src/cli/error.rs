//! Errors of the CLI, each naming the flag, key or id and the value at fault.

use crate::client::ClientError;

/// Why a client command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A flag's value makes no sense.
    #[error("invalid {flag} {value:?}: {reason}")]
    Invalid {
        /// The flag (or file key).
        flag: String,
        /// Its value.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A deployment file could not be read.
    #[error("cannot read deployment file {path}: {reason}")]
    FileRead {
        /// The file.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// A deployment file is not valid TOML or has values of the wrong type.
    #[error("deployment file {path}: {reason}")]
    FileInvalid {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A deployment file has a key that `POST /v1/deployments` does not know.
    #[error("deployment file {path}: unknown key {key:?} (known here: {known})")]
    UnknownKey {
        /// The file.
        path: String,
        /// The dotted key.
        key: String,
        /// The keys allowed at that place.
        known: String,
    },
    /// A required value was given neither as a flag nor in the file.
    #[error("missing {what}: give it as an argument or in the deployment file")]
    Missing {
        /// What is missing.
        what: &'static str,
    },
    /// `deploy resume` of a deployment a maintenance window still holds.
    #[error("deployment {id} is still held by {windows}: a resume lifts a person's pause, never a window's hold; it goes on by itself once no window holds it (or change the window: convoy window show {first})")]
    HeldByWindow {
        /// The deployment.
        id: String,
        /// The windows holding it, each with until when.
        windows: String,
        /// The first of them.
        first: String,
    },
    /// A watched deployment ended without rolling forward.
    #[error("deployment {id} ended {status}: {counts}")]
    Ended {
        /// The deployment.
        id: String,
        /// Its terminal status.
        status: String,
        /// How its nodes ended (`0/1 nodes succeeded, 0 failed, 1 skipped`).
        counts: String,
    },
    /// `deploy watch --timeout` (or `deploy start --watch-timeout`) ran out before the deployment ended.
    #[error("deployment {id} had not ended after {after} ({flag}); it goes on: follow it with convoy deploy watch {id}")]
    WatchTimeout {
        /// The deployment.
        id: String,
        /// How long it was watched.
        after: String,
        /// The flag that set the timeout.
        flag: &'static str,
    },
    /// The server refused the request or could not be reached.
    #[error("{}", client_message(.0))]
    Client(#[from] ClientError),
    /// The CLI's config file (contexts) cannot be used.
    #[error(transparent)]
    Config(#[from] super::config_file::ConfigFileError),
    /// `context current` with no current context.
    #[error("no current context in {path}: add one with convoy login, or pick one with convoy context use NAME")]
    NoContext {
        /// The config file.
        path: String,
    },
    /// The server closed a change feed for good (the token was revoked or expired).
    #[error("the server closed the change feed: {why}")]
    StreamClosed {
        /// The server's `closed` event.
        why: String,
    },
    /// The server refused the request; `hint` says what to do instead.
    #[error("{message}; {hint}")]
    Refused {
        /// The server's message.
        message: String,
        /// What to do instead.
        hint: String,
    },
    /// A deployment named on the command line does not exist.
    #[error("deployment {id} does not exist (the server answered {answer})")]
    UnknownDeployment {
        /// The id given.
        id: String,
        /// What the server answered.
        answer: String,
    },
    /// The consumer and resource named on the command line have no active deployment.
    #[error("consumer {consumer} has no active deployment of resource {resource} (the server answered {answer})")]
    NoActiveDeployment {
        /// The consumer given.
        consumer: String,
        /// The resource given.
        resource: String,
        /// What the server answered.
        answer: String,
    },
    /// The consumer and resource named on the command line have no deployment at all.
    #[error("consumer {consumer} has no deployment of resource {resource}: see convoy deploy list --consumer {consumer}")]
    NoDeployment {
        /// The consumer given.
        consumer: String,
        /// The resource given.
        resource: String,
    },
}

impl CliError {
    /// A refused flag value.
    pub fn invalid(flag: &str, value: impl ToString, reason: impl Into<String>) -> Self {
        CliError::Invalid {
            flag: flag.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// The server's own message for API errors; the full description otherwise.
fn client_message(e: &ClientError) -> String {
    match e {
        ClientError::Api { message, .. } => message.clone(),
        ClientError::Unreachable { .. } => format!(
            "{e}\nhint: start a server there, or point the CLI at one with --server HOST:PORT or CONVOY_SERVER=HOST:PORT[,HOST:PORT...] (or a context: convoy login)"
        ),
        ClientError::NoLeader { .. } => format!(
            "{e}\nhint: a leader needs a majority of the servers up and connected to each other; see which answer with convoy cluster status"
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_print_the_servers_message_only() {
        let e = CliError::from(ClientError::Api {
            status: 404,
            code: "not_found".into(),
            message: "deployment \"d-9\" does not exist".into(),
        });
        assert_eq!(e.to_string(), "deployment \"d-9\" does not exist");
        let e = CliError::from(ClientError::NoServers);
        assert!(e.to_string().starts_with("no server given"), "{e}");
        let e = CliError::invalid("--depends-on", "db", "expected RESOURCE@VERSION");
        assert_eq!(
            e.to_string(),
            "invalid --depends-on \"db\": expected RESOURCE@VERSION"
        );
    }
}
