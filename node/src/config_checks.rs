//! Start-time checks of a server's configuration that go beyond parsing: the secret file is private
//! and strong, the server's own addresses match its `[[initial_cluster]]` entry, no two founders share
//! an address, and a `new` server does not bootstrap over a directory that is not convoy's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use convoy_raft::{Member, NodeId};

/// Shortest secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 32;
/// Least estimated entropy of a secret, in bits (a hex encoding of 32 random bytes has ~240).
pub const MIN_SECRET_BITS: f64 = 128.0;

/// A check that failed: which key, what value, and what to do, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The key at fault.
    pub key: &'static str,
    /// Its value (never the secret itself).
    pub value: String,
    /// Why, and the fix.
    pub reason: String,
}

fn refuse(key: &'static str, value: impl Into<String>, reason: impl Into<String>) -> Refusal {
    Refusal {
        key,
        value: value.into(),
        reason: reason.into(),
    }
}

/// The secret file may be read and written by its owner only (mode `0600` or stricter).
pub fn check_secret_mode(path: &Path) -> Result<(), Refusal> {
    private_file("cluster_secret_file", path)
}

/// The file at `path`, named by `key`, holds a secret: only its owner may read or write it (the check
/// of `crate::common::private_file`).
pub fn private_file(key: &'static str, path: &Path) -> Result<(), Refusal> {
    crate::common::private_file::check(path)
        .map_err(|e| refuse(key, path.display().to_string(), e.to_string()))
}

/// The secret is at least [`MIN_SECRET_BYTES`] long, carries at least [`MIN_SECRET_BITS`] of
/// estimated entropy (its length times the Shannon entropy of its bytes), and is not a short block
/// repeated. A heuristic: it refuses typed or patterned secrets, not every weak one.
pub fn check_secret_strength(secret: &[u8]) -> Result<(), Refusal> {
    let fix = "make one with `head -c 32 /dev/urandom | base64 > FILE && chmod 600 FILE`";
    if secret.len() < MIN_SECRET_BYTES {
        return Err(refuse(
            "cluster_secret_file",
            format!("{} bytes", secret.len()),
            format!("the secret must be at least {MIN_SECRET_BYTES} bytes: {fix}"),
        ));
    }
    let bits = estimated_bits(secret);
    let repeated = (1..=8).any(|p| secret.len() > p && secret.iter().skip(p).eq(secret.iter()));
    if bits < MIN_SECRET_BITS || repeated {
        return Err(refuse(
            "cluster_secret_file",
            format!("{} bytes, ~{bits:.0} bits", secret.len()),
            format!("the secret looks guessable (under {MIN_SECRET_BITS} bits, or a repeated pattern): {fix}"),
        ));
    }
    Ok(())
}

fn estimated_bits(bytes: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for b in bytes {
        counts[*b as usize] += 1;
    }
    let n = bytes.len() as f64;
    let per_byte: f64 = counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum();
    per_byte * n
}

/// When this server is listed among the founders, its entry's addresses are its own; and no two
/// founders share an address.
pub fn check_founders(
    id: NodeId,
    raft_addr: &str,
    http_addr: &str,
    founders: &BTreeMap<NodeId, Member>,
) -> Result<(), Refusal> {
    if let Some(own) = founders.get(&id) {
        if !same_endpoint(raft_addr, &own.raft_addr) || !same_endpoint(http_addr, &own.http_addr) {
            return Err(refuse(
                "initial_cluster",
                format!("id {id}: raft {} http {}", own.raft_addr, own.http_addr),
                format!(
                    "this server's own entry differs from raft_addr = {raft_addr:?}, http_addr = {http_addr:?}: make them equal"
                ),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (fid, m) in founders {
        for addr in [&m.raft_addr, &m.http_addr] {
            if !seen.insert(addr.as_str()) {
                return Err(refuse(
                    "initial_cluster",
                    format!("id {fid}: {addr}"),
                    "two founders (or both ports of one) share this address: give each its own",
                ));
            }
        }
    }
    Ok(())
}

/// Whether a server listening on `bind` is reachable at `advertised`: the ports are equal, and
/// when both hosts are IP addresses and the bind address is not a wildcard (`0.0.0.0`, `::`), the
/// addresses are equal too (a name such as `localhost` is not resolved here).
fn same_endpoint(bind: &str, advertised: &str) -> bool {
    let split = |a: &str| {
        a.rsplit_once(':')
            .map(|(h, p)| (h.trim_matches(['[', ']']).to_string(), p.to_string()))
    };
    let (Some((bh, bp)), Some((ah, ap))) = (split(bind), split(advertised)) else {
        return bind == advertised;
    };
    if bp != ap {
        return false;
    }
    match (
        bh.parse::<std::net::IpAddr>(),
        ah.parse::<std::net::IpAddr>(),
    ) {
        (Ok(b), Ok(a)) => b.is_unspecified() || b == a,
        _ => true,
    }
}

/// A `new` server bootstraps only into an empty `data_dir` or one convoy made (RocksDB's `CURRENT`
/// is there): a directory holding something else is a mistake, not a server to resume.
pub fn check_data_dir(data_dir: &Path, bootstrap: bool) -> Result<(), Refusal> {
    if !bootstrap {
        return Ok(());
    }
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return Ok(()); // absent: created empty
    };
    let names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let convoy_made = names.iter().any(|n| n == "CURRENT" || n == "IDENTITY");
    if names.is_empty() || convoy_made {
        return Ok(());
    }
    Err(refuse(
        "data_dir",
        data_dir.display().to_string(),
        format!(
            "initial_cluster_state = \"new\" but the directory holds files that are not convoy's ({}): point data_dir at an empty directory",
            names.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        ),
    ))
}

#[cfg(test)]
#[path = "config_checks_test.rs"]
mod tests;
