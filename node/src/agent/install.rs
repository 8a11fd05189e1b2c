//! Installing a version: the operator's install command (`sh -c`, with CONVOY_* variables), or else
//! an atomic switch of the resource's `current` symlink to the version dir.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use super::state::sync_dir;

/// How much of a failed command's stderr is reported.
const STDERR_TAIL: usize = 600;

/// What an install command (and a run command) is told about the version.
#[derive(Clone, Debug)]
pub struct InstallEnv<'a> {
    /// Resource name.
    pub resource: &'a str,
    /// Version number.
    pub version: u64,
    /// The artifact file (may not exist when the version has none).
    pub artifact: &'a Path,
    /// The agent's state dir.
    pub state_dir: &'a Path,
    /// The version's health port, if any.
    pub health_port: Option<u16>,
}

impl InstallEnv<'_> {
    /// The environment variables to set.
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        let mut vars = vec![
            ("CONVOY_RESOURCE", self.resource.to_string()),
            ("CONVOY_VERSION", self.version.to_string()),
            ("CONVOY_ARTIFACT", self.artifact.display().to_string()),
            ("CONVOY_STATE_DIR", self.state_dir.display().to_string()),
        ];
        if let Some(port) = self.health_port {
            vars.push(("CONVOY_HEALTH_PORT", port.to_string()));
        }
        vars
    }
}

/// Points `resource_dir/current` at `resource_dir/<version>`: a `current.tmp` symlink renamed over
/// `current`, so `current` always names a whole version.
pub fn switch_current(resource_dir: &Path, version: u64) -> std::io::Result<()> {
    let tmp = resource_dir.join("current.tmp");
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::os::unix::fs::symlink(version.to_string(), &tmp)?;
    std::fs::rename(&tmp, resource_dir.join("current"))?;
    sync_dir(resource_dir);
    Ok(())
}

/// The version `resource_dir/current` points at, if any.
pub fn read_current(resource_dir: &Path) -> Option<u64> {
    let target = std::fs::read_link(resource_dir.join("current")).ok()?;
    target.file_name()?.to_str()?.parse().ok()
}

/// Runs `command` via `sh -c` in `cwd` with the version's variables; a non-zero exit, a failure
/// to start or a timeout is an error naming the exit status and the tail of stderr.
pub async fn run_install_command(
    command: &str,
    env: &InstallEnv<'_>,
    cwd: &Path,
    timeout: Duration,
) -> Result<(), String> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .envs(env.vars())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .map_err(|e| format!("install command could not start: {e}"))?;
    let output = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(format!("install command failed: {e}")),
        Err(_) => {
            return Err(format!(
                "install command timed out after {} ms",
                timeout.as_millis()
            ))
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr.trim();
    let tail = tail_chars(stderr, STDERR_TAIL);
    Err(format!(
        "install command exited with {}: {tail}",
        output.status
    ))
}

fn tail_chars(s: &str, n: usize) -> &str {
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    let skip = s.char_indices().nth(count - n).map_or(0, |(i, _)| i);
    &s[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_current_is_a_renamed_symlink() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("1")).unwrap();
        std::fs::create_dir(dir.path().join("2")).unwrap();
        assert_eq!(read_current(dir.path()), None);
        switch_current(dir.path(), 1).unwrap();
        assert_eq!(read_current(dir.path()), Some(1));
        switch_current(dir.path(), 2).unwrap();
        assert_eq!(read_current(dir.path()), Some(2));
        assert!(!dir.path().join("current.tmp").exists());
        assert!(dir.path().join("current").is_dir());
    }

    #[tokio::test]
    async fn install_command_sees_the_variables_and_reports_stderr_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("artifact");
        let env = InstallEnv {
            resource: "web",
            version: 7,
            artifact: &artifact,
            state_dir: dir.path(),
            health_port: None,
        };
        let t = Duration::from_secs(10);
        let ok =
            "echo \"$CONVOY_RESOURCE $CONVOY_VERSION $CONVOY_ARTIFACT $CONVOY_STATE_DIR\" > out";
        run_install_command(ok, &env, dir.path(), t).await.unwrap();
        let out = std::fs::read_to_string(dir.path().join("out")).unwrap();
        assert_eq!(
            out.trim(),
            format!("web 7 {} {}", artifact.display(), dir.path().display())
        );

        let bad = "echo noise >&2; echo 'disk full' >&2; exit 3";
        let err = run_install_command(bad, &env, dir.path(), t)
            .await
            .unwrap_err();
        assert!(
            err.contains("exit status: 3") && err.ends_with("noise\ndisk full"),
            "{err}"
        );

        let slow =
            run_install_command("sleep 5", &env, dir.path(), Duration::from_millis(100)).await;
        assert!(slow.unwrap_err().contains("timed out"));
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail_chars("abcdef", 3), "def");
        assert_eq!(tail_chars("ab", 3), "ab");
        assert_eq!(tail_chars("ééé", 2), "éé");
    }
}
