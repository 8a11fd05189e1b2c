//! `convoy server --dev`: the tutorial's first step. One server on loopback forming a one-server cluster,
//! its data in a temporary dir removed on exit, token auth on with a fresh admin token printed (and written
//! to `<dir>/admin-token`, 0600), and the `convoy sim` command that attaches a simulated fleet to it.

use std::path::PathBuf;

use anyhow::{bail, Context};

use crate::api::auth::secret;
use crate::config::{is_loopback, ServerArgs};
use crate::local::{free_port, write_private, write_secret};

/// Where `--dev` serves HTTP unless `--http-addr` says otherwise.
pub const DEFAULT_HTTP_ADDR: &str = "127.0.0.1:7700";

/// A prepared development server: its arguments, its temp dir (removed when this is dropped) and token.
#[derive(Debug)]
pub struct DevServer {
    /// What `convoy server` runs with.
    pub args: ServerArgs,
    /// The admin token's secret.
    pub token: String,
    /// The file holding it.
    pub token_file: PathBuf,
    /// Data dir, cluster secret and token file; removed on drop.
    pub dir: tempfile::TempDir,
    /// What to print once the server listens: the dashboard, the token and the next commands.
    pub banner: String,
}

/// Makes the temp dir, the cluster secret and the admin token, fills `args` for a one-server cluster and
/// writes how to use it (`banner`, printed once the server listens). Refuses a non-loopback `--http-addr`: dev mode is for one machine.
pub fn prepare(mut args: ServerArgs) -> anyhow::Result<DevServer> {
    let http = args
        .http_addr
        .clone()
        .unwrap_or_else(|| DEFAULT_HTTP_ADDR.to_string());
    if !is_loopback(&http) {
        bail!("--dev serves on loopback only, not --http-addr {http:?}: use 127.0.0.1:<port>");
    }
    let raft = match args.raft_addr.clone() {
        Some(raft) => raft,
        None => format!("127.0.0.1:{}", free_port()?),
    };
    let dir = tempfile::Builder::new()
        .prefix("convoy-dev-")
        .tempdir()
        .context("creating the dev server's temp dir")?;
    let secret_file = dir.path().join("secret");
    write_secret(&secret_file)?;
    let token = secret::generate();
    let token_file = dir.path().join("admin-token");
    write_private(&token_file, token.as_bytes())?;
    args.id = Some(1);
    args.data_dir = Some(dir.path().join("data"));
    args.http_addr = Some(http.clone());
    args.raft_addr = Some(raft.clone());
    args.cluster_secret_file = Some(secret_file);
    args.initial_cluster = Some(format!("1={raft}={http}"));
    args.initial_cluster_state = Some("new".into());
    args.bootstrap_token_file = Some(token_file.clone());
    args.dev = false;
    let banner = banner(&http, &token, &token_file, dir.path());
    Ok(DevServer {
        args,
        token,
        token_file,
        dir,
        banner,
    })
}

/// What `--dev` prints: the dashboard, the token and the next commands.
pub fn banner(
    http: &str,
    token: &str,
    token_file: &std::path::Path,
    dir: &std::path::Path,
) -> String {
    let tf = token_file.display();
    format!(
        "convoy dev server: one server on {http}, data in {dir} (removed on exit)\n\
         \n  dashboard    http://{http}/ui/\n  admin token  {token}\n               (also in {tf})\n\
         \nIn another terminal, attach a simulated fleet of 20 nodes and roll out a version:\n\
         \n  export CONVOY_SERVER={http} CONVOY_TOKEN_FILE={tf}\n\
         \x20 convoy resource create app && convoy resource publish app\n\
         \x20 convoy sim --consumer web --nodes 20 --running app=1 &\n\
         \x20 convoy consumer subscribe web app && convoy resource publish app\n\
         \x20 convoy deploy start web app --install-window 2\n",
        dir = dir.display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dev_server_is_one_loopback_member_with_a_private_admin_token() {
        let dev = prepare(ServerArgs {
            http_addr: Some(format!("127.0.0.1:{}", free_port().unwrap())),
            ..Default::default()
        })
        .unwrap();
        let resolved = dev.args.resolve().unwrap();
        assert_eq!(resolved.raft.id, 1);
        assert!(resolved.bootstrap_token.is_some());
        assert_eq!(resolved.auth, crate::api::auth::AuthMode::On);
        assert_eq!(std::fs::read_to_string(&dev.token_file).unwrap(), dev.token);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dev.token_file)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the token file must be private");
        let dir = dev.dir.path().to_path_buf();
        drop(dev);
        assert!(!dir.exists(), "the temp dir goes with the server");
    }

    #[test]
    fn dev_mode_refuses_a_public_address() {
        let err = prepare(ServerArgs {
            http_addr: Some("0.0.0.0:7700".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("loopback"), "{err}");
    }

    #[test]
    fn the_banner_names_the_dashboard_the_token_and_the_sim_command() {
        let b = banner(
            "127.0.0.1:7700",
            "cvy_x",
            std::path::Path::new("/t/admin-token"),
            std::path::Path::new("/t"),
        );
        assert!(b.contains("http://127.0.0.1:7700/ui/"));
        assert!(b.contains("cvy_x"));
        assert!(b.contains("CONVOY_SERVER=127.0.0.1:7700 CONVOY_TOKEN_FILE=/t/admin-token"));
        assert!(b.contains("convoy sim --consumer web"));
    }
}
