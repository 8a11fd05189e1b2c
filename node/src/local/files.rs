//! The private files of a local cluster: its shared secret and the admin token, each mode 0600.

use std::path::Path;

use anyhow::Context;

/// A fresh admin token secret (`cvy_` and 32 random bytes in hex), for `bootstrap_token`.
pub fn new_admin_token() -> String {
    format!("cvy_{}", random_hex())
}

/// Writes a fresh cluster secret (32 random bytes in hex) to `path`, readable by its owner only.
pub fn write_secret(path: &Path) -> anyhow::Result<()> {
    write_private(path, random_hex().as_bytes())
}

/// 32 random bytes in hex.
fn random_hex() -> String {
    (0..32)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect()
}

/// Writes `bytes` to a new file at `path` (replacing one there), mode 0600.
pub fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(bytes)?;
    Ok(())
}
