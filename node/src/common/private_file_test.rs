//! A file is private when group and others can neither read nor write it.

use std::os::unix::fs::PermissionsExt;

use super::*;

#[test]
fn only_a_file_its_owner_alone_reads_and_writes_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret");
    std::fs::write(&path, "cvy_0123456789abcdef").unwrap();
    for (mode, private) in [
        (0o600, true),
        (0o400, true),
        (0o700, true),
        (0o640, false),
        (0o604, false),
        (0o620, false),
        (0o602, false),
        (0o644, false),
    ] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let got = check(&path);
        assert_eq!(got.is_ok(), private, "mode {mode:o}: {got:?}");
        if let Err(e) = got {
            let e = e.to_string();
            assert!(
                e.contains(&format!("{mode:04o}"))
                    && e.contains(&path.display().to_string())
                    && !e.contains("cvy_"),
                "{e}"
            );
        }
    }
    let missing = check(&dir.path().join("none")).unwrap_err().to_string();
    assert!(missing.contains("none"), "{missing}");
}
