//! Token files are trimmed and checked without echoing them.

use std::os::unix::fs::PermissionsExt;

use super::*;

/// Writes `text` to `path`, mode 0600.
fn private(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn token_files_are_trimmed_and_checked_without_echoing_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    private(&good, "cvy_0123456789abcdef\n");
    assert_eq!(read_file(&good).unwrap(), "cvy_0123456789abcdef");
    let short = dir.path().join("short");
    private(&short, "cvy_secret");
    let e = read_file(&short).unwrap_err().to_string();
    assert!(e.contains("16-512") && !e.contains("cvy_secret"), "{e}");
    let missing = read_file(&dir.path().join("none")).unwrap_err();
    assert!(missing.to_string().contains("none"), "{missing}");
}

#[test]
fn a_token_file_others_may_read_is_refused_naming_it_and_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token");
    private(&path, "cvy_0123456789abcdef\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = read_file(&path).unwrap_err().to_string();
    assert!(
        e.contains("0644") && e.contains(&path.display().to_string()) && !e.contains("cvy_"),
        "{e}"
    );
}
