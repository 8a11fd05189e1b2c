//! Network namespaces for a local cluster (root only): each server gets its own namespace, a veth into
//! one bridge and its own address, and links are cut with nftables rules inside the namespaces — a real
//! network partition, below the transport. Everything is removed on drop. The cluster places its
//! servers there through [`Placement`].

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{bail, Context};
use convoy_node::local::Placement;

/// Server ids that get a namespace in a `netns` cluster: the founders and the servers that may join.
pub const MAX_SERVERS: u64 = 9;

/// The port every server's internal transport listens on inside its namespace.
pub const RAFT_PORT: u16 = 9090;
/// The port every server's HTTP API listens on inside its namespace.
pub const HTTP_PORT: u16 = 8080;

/// A bridge and one namespace per server id.
#[derive(Debug)]
pub struct NetLab {
    tag: String,
    subnet: u8,
    ids: Vec<u64>,
}

fn run(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .with_context(|| format!("running {}", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "{} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

impl NetLab {
    /// Creates the bridge and namespaces for servers `1..=max_id` (joiners included).
    pub fn create(max_id: u64) -> anyhow::Result<Self> {
        if !nix::unistd::Uid::effective().is_root() {
            bail!("network namespaces need root (run as root, or leave out --netns)");
        }
        let pid = std::process::id();
        let lab = NetLab {
            tag: format!("cv{:x}", pid % 0xfffff),
            subnet: 100 + (pid % 100) as u8,
            ids: (1..=max_id).collect(),
        };
        let bridge = lab.bridge();
        run(&["ip", "link", "add", &bridge, "type", "bridge"])?;
        run(&[
            "ip",
            "addr",
            "add",
            &format!("10.213.{}.1/24", lab.subnet),
            "dev",
            &bridge,
        ])?;
        run(&["ip", "link", "set", &bridge, "up"])?;
        for id in lab.ids.clone() {
            let (ns, veth) = (lab.ns(id), lab.veth(id));
            run(&["ip", "netns", "add", &ns])?;
            run(&[
                "ip", "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ])?;
            run(&["ip", "link", "set", &veth, "master", &bridge, "up"])?;
            run(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/24", lab.ip(id)),
                "dev",
                "eth0",
            ])?;
            run(&["ip", "-n", &ns, "link", "set", "eth0", "up"])?;
            run(&["ip", "-n", &ns, "link", "set", "lo", "up"])?;
            lab.nft(
                id,
                "table inet convoy {\n chain input { type filter hook input priority 0; }\n \
                 chain output { type filter hook output priority 0; }\n}\n",
            )?;
        }
        Ok(lab)
    }

    fn bridge(&self) -> String {
        format!("{}br", self.tag)
    }

    fn veth(&self, id: u64) -> String {
        format!("{}v{id}", self.tag)
    }

    /// Server `id`'s namespace.
    pub fn ns(&self, id: u64) -> String {
        format!("{}-{id}", self.tag)
    }

    /// Server `id`'s address.
    pub fn ip(&self, id: u64) -> String {
        format!("10.213.{}.{}", self.subnet, 10 + id)
    }

    fn nft(&self, id: u64, script: &str) -> anyhow::Result<()> {
        let ns = self.ns(id);
        let mut child = Command::new("ip")
            .args(["netns", "exec", &ns, "nft", "-f", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("running nft")?;
        child
            .stdin
            .take()
            .context("nft stdin")?
            .write_all(script.as_bytes())?;
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!(
                "nft in {ns}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }

    /// `a` and `b` can no longer exchange any packet.
    pub fn cut(&self, a: u64, b: u64) -> anyhow::Result<()> {
        for (x, y) in [(a, b), (b, a)] {
            let peer = self.ip(y);
            self.nft(
                x,
                &format!(
                    "add rule inet convoy output ip daddr {peer} drop\n\
                     add rule inet convoy input ip saddr {peer} drop\n"
                ),
            )?;
        }
        Ok(())
    }

    /// `from` can no longer send requests to `to` (its packets to `to`'s transport port are dropped);
    /// `to` can still call `from`.
    pub fn cut_one_way(&self, from: u64, to: u64) -> anyhow::Result<()> {
        self.nft(
            from,
            &format!(
                "add rule inet convoy output ip daddr {} tcp dport {RAFT_PORT} drop\n",
                self.ip(to)
            ),
        )
    }

    /// Removes every cut.
    pub fn heal(&self) -> anyhow::Result<()> {
        for id in &self.ids {
            self.nft(
                *id,
                "flush chain inet convoy input\nflush chain inet convoy output\n",
            )?;
        }
        Ok(())
    }
}

impl Placement for NetLab {
    fn max_id(&self) -> u64 {
        self.ids.len() as u64
    }

    fn addresses(&self, id: u64) -> (String, String) {
        (
            format!("{}:{RAFT_PORT}", self.ip(id)),
            format!("{}:{HTTP_PORT}", self.ip(id)),
        )
    }

    fn launcher(&self, id: u64) -> Vec<String> {
        vec!["ip".into(), "netns".into(), "exec".into(), self.ns(id)]
    }

    fn hosts(&self) -> Vec<String> {
        self.ids.iter().map(|id| self.ip(*id)).collect()
    }

    fn config_without_auth(&self) -> String {
        // The servers listen on private 10.213.x.y addresses, without tokens.
        "insecure_no_auth = true\n".into()
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        for id in &self.ids {
            let _ = run(&["ip", "netns", "del", &self.ns(*id)]);
            let _ = run(&["ip", "link", "del", &self.veth(*id)]);
        }
        let _ = run(&["ip", "link", "del", &self.bridge()]);
    }
}
