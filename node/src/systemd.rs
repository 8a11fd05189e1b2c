//! systemd's readiness protocol (`Type=notify`): `READY=1` once a server listens (or an agent runs),
//! `STOPPING=1` when it shuts down. Outside systemd (`NOTIFY_SOCKET` unset) both do nothing. The units
//! themselves are `packaging/systemd/` (the agent's: `KillMode=process`, see its comment).

/// Tells systemd the service is up.
pub fn ready() {
    notify(&[sd_notify::NotifyState::Ready], "READY=1");
}

/// Tells systemd the service is stopping.
pub fn stopping() {
    notify(&[sd_notify::NotifyState::Stopping], "STOPPING=1");
}

fn notify(state: &[sd_notify::NotifyState], what: &str) {
    if let Err(e) = sd_notify::notify(false, state) {
        tracing::warn!(error = %e, "cannot tell systemd {what}");
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixDatagram;

    /// The environment is the process's, shared by every test of this binary: the notifications are
    /// sent from a process of its own (this binary, running the ignored test below) whose
    /// `NOTIFY_SOCKET` is set, and nothing here sets a variable.
    #[test]
    fn ready_and_stopping_reach_the_notify_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let socket = UnixDatagram::bind(&path).unwrap();
        socket
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "systemd::tests::notify_from_a_process_of_its_own",
                "--ignored",
            ])
            .env("NOTIFY_SOCKET", &path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}"
        );
        let mut buf = [0u8; 64];
        let n = socket.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1\n");
        let n = socket.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"STOPPING=1\n");
    }

    /// The agent's unit lets systemd restart a crashed agent without killing the apps it runs (the new
    /// agent re-attaches to them); with the default `control-group` or `mixed`, they would die with it.
    #[test]
    fn the_agent_unit_leaves_the_apps_running_when_the_agent_dies() {
        let unit = include_str!("../../packaging/systemd/convoy-agent.service");
        let kill_modes: Vec<&str> = unit
            .lines()
            .filter_map(|l| l.trim().strip_prefix("KillMode="))
            .collect();
        assert_eq!(kill_modes, ["process"]);
        assert!(unit.contains("\nRestart=always\n"));
    }

    #[test]
    #[ignore = "run with NOTIFY_SOCKET set by the test above"]
    fn notify_from_a_process_of_its_own() {
        assert!(std::env::var_os("NOTIFY_SOCKET").is_some());
        super::ready();
        super::stopping();
    }
}
