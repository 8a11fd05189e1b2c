//! A 3-member etcd cluster on loopback for comparison — its own temp data dirs and ports, started and
//! killed by pid — and the v3 JSON gateway's put request.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use convoy_node::local::free_port;
use convoy_node::local::process::ChildProcess;
use convoy_node::tools::bench::load::post_ok;

/// The v3 gateway's put (etcd 3.4 serves `/v3/...`; `/v3beta/...` is the deprecated alias).
pub const PUT_PATH: &str = "/v3/kv/put";
/// The v3 gateway's member status (its `leader` and `header.member_id`).
pub const STATUS_PATH: &str = "/v3/maintenance/status";

/// Standard base64 with padding (RFC 4648), as the gateway wants keys and values.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The body of a put of `key` = `value`.
pub fn put_body(key: &str, value: &str) -> Value {
    json!({"key": base64(key.as_bytes()), "value": base64(value.as_bytes())})
}

/// Whether an `etcd` binary is on the PATH.
pub fn available() -> bool {
    Command::new("etcd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The `etcd` flags of member `name`: election timeout 400 ms, which etcd randomises up to twice that,
/// like convoy's 400–800 ms; heartbeat 80 ms (etcd wants the election timeout at least 5 heartbeats;
/// convoy's is 100 ms).
pub fn member_args(
    name: &str,
    data_dir: &Path,
    client: &str,
    peer: &str,
    initial: &str,
) -> Vec<String> {
    [
        ("--name", name.to_string()),
        ("--data-dir", data_dir.display().to_string()),
        ("--listen-client-urls", client.to_string()),
        ("--advertise-client-urls", client.to_string()),
        ("--listen-peer-urls", peer.to_string()),
        ("--initial-advertise-peer-urls", peer.to_string()),
        ("--initial-cluster", initial.to_string()),
        ("--initial-cluster-state", "new".to_string()),
        ("--initial-cluster-token", "convoy-bench".to_string()),
        ("--heartbeat-interval", "80".to_string()),
        ("--election-timeout", "400".to_string()),
        ("--logger", "zap".to_string()),
        ("--log-level", "warn".to_string()),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect()
}

struct Member {
    client_url: String,
    process: ChildProcess,
}

/// Three etcd members on loopback; killed when dropped.
pub struct EtcdCluster {
    members: Vec<Member>,
}

impl EtcdCluster {
    /// Starts three members with data dirs and logs under `dir`.
    pub fn start(dir: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let urls: Vec<(String, String)> = (0..3)
            .map(|_| {
                Ok((
                    format!("http://127.0.0.1:{}", free_port()?),
                    format!("http://127.0.0.1:{}", free_port()?),
                ))
            })
            .collect::<anyhow::Result<_>>()?;
        let initial = urls
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("e{i}={peer}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut cluster = Self {
            members: urls
                .into_iter()
                .enumerate()
                .map(|(i, (client, peer))| Member {
                    process: ChildProcess::new(
                        format!("etcd member {i}"),
                        "etcd",
                        member_args(
                            &format!("e{i}"),
                            &dir.join(format!("e{i}")),
                            &client,
                            &peer,
                            &initial,
                        ),
                        dir.join(format!("e{i}.log")),
                    ),
                    client_url: client,
                })
                .collect(),
        };
        for i in 0..3 {
            cluster.spawn(i)?;
        }
        Ok(cluster)
    }

    fn spawn(&mut self, i: usize) -> anyhow::Result<()> {
        self.members[i].process.spawn()
    }

    /// Every member's client URL.
    pub fn client_urls(&self) -> Vec<String> {
        self.members.iter().map(|m| m.client_url.clone()).collect()
    }

    /// Member `i`'s process id while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.members[i].process.pid()
    }

    /// SIGKILL member `i` and reap it.
    pub fn kill(&mut self, i: usize) {
        self.members[i].process.kill()
    }

    /// Starts a killed member again from its data dir.
    pub fn restart(&mut self, i: usize) -> anyhow::Result<()> {
        self.kill(i);
        self.spawn(i)
    }

    /// The index of the member that leads, asking the running ones.
    pub async fn leader(&self, http: &reqwest::Client) -> Option<usize> {
        let mut ids = Vec::new();
        let mut leader = None;
        for m in &self.members {
            let status = if m.process.is_running() {
                post_ok(http, &format!("{}{STATUS_PATH}", m.client_url), &json!({}))
                    .await
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            } else {
                None
            };
            let id = status
                .as_ref()
                .and_then(|s| s["header"]["member_id"].as_str().map(String::from));
            if let Some(l) = status.as_ref().and_then(|s| s["leader"].as_str()) {
                leader = Some(l.to_string());
            }
            ids.push(id);
        }
        let leader = leader?;
        ids.iter()
            .position(|id| id.as_deref() == Some(leader.as_str()))
    }

    /// Waits until a put succeeds through member `i` and a leader is known.
    pub async fn wait_ready(
        &self,
        http: &reqwest::Client,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        let url = format!("{}{PUT_PATH}", self.members[0].client_url);
        loop {
            if post_ok(http, &url, &put_body("ready", "1")).await.is_ok()
                && self.leader(http).await.is_some()
            {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "etcd not ready within {timeout:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until member `i` answers its status.
    pub async fn wait_member(
        &self,
        http: &reqwest::Client,
        i: usize,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        let url = format!("{}{STATUS_PATH}", self.members[i].client_url);
        while post_ok(http, &url, &json!({})).await.is_err() {
            anyhow::ensure!(
                Instant::now() < deadline,
                "etcd member {i} not back within {timeout:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe]), "//4=");
    }

    #[test]
    fn puts_encode_key_and_value() {
        assert_eq!(
            put_body("k-1", "v"),
            json!({"key": "ay0x", "value": "dg=="})
        );
    }

    #[test]
    fn members_get_their_own_urls_and_convoy_like_timeouts() {
        let args = member_args(
            "e0",
            Path::new("/tmp/d/e0"),
            "http://127.0.0.1:1",
            "http://127.0.0.1:2",
            "e0=http://127.0.0.1:2",
        );
        let flag = |k: &str| {
            args.iter()
                .position(|a| a == k)
                .map(|i| args[i + 1].as_str())
        };
        assert_eq!(flag("--data-dir"), Some("/tmp/d/e0"));
        assert_eq!(flag("--listen-client-urls"), Some("http://127.0.0.1:1"));
        assert_eq!(
            flag("--initial-advertise-peer-urls"),
            Some("http://127.0.0.1:2")
        );
        assert_eq!(flag("--election-timeout"), Some("400"));
        assert_eq!(args.len() % 2, 0);
    }
}
