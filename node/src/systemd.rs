//! systemd's readiness protocol (`Type=notify`): `READY=1` once a server listens (or an agent runs),
//! `STOPPING=1` when it shuts down. Outside systemd (`NOTIFY_SOCKET` unset) both do nothing.

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

    /// One test owns NOTIFY_SOCKET (the process environment is shared by the tests of this binary).
    #[test]
    fn ready_and_stopping_reach_the_notify_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let socket = UnixDatagram::bind(&path).unwrap();
        socket
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        std::env::set_var("NOTIFY_SOCKET", &path);
        super::ready();
        super::stopping();
        std::env::remove_var("NOTIFY_SOCKET");
        let mut buf = [0u8; 64];
        let n = socket.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1\n");
        let n = socket.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"STOPPING=1\n");
    }
}
