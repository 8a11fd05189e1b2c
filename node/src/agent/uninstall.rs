//! Removing a resource on the server's word (an `uninstall` target): its process is torn down, its
//! directory deleted, and the resource reported `removed` until a version of it is held again.

use super::executor::Executor;

impl Executor {
    /// Tears down the resource's process, deletes `DIR/resources/<resource>` and forgets its versions.
    pub(super) async fn uninstall(&mut self, resource: &str) {
        let was = self.state.current(resource);
        self.stop_process(resource).await;
        self.watches.remove(resource);
        let dir = self.resource_dir(resource);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                // Reported removed all the same: nothing of it runs, and its files are inert.
                tracing::warn!(resource, dir = %dir.display(), error = %e, "cannot delete the resource's directory");
            }
        }
        let r = self
            .state
            .resources
            .entry(resource.to_string())
            .or_default();
        r.current = None;
        r.versions.clear();
        r.removed = true;
        tracing::info!(resource, version = ?was, "uninstalled");
    }
}
