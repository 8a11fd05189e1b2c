//! Token files are trimmed and checked without echoing them.

use super::*;

#[test]
fn token_files_are_trimmed_and_checked_without_echoing_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    std::fs::write(&good, "cvy_0123456789abcdef\n").unwrap();
    assert_eq!(read_file(&good).unwrap(), "cvy_0123456789abcdef");
    let short = dir.path().join("short");
    std::fs::write(&short, "cvy_secret").unwrap();
    let e = read_file(&short).unwrap_err().to_string();
    assert!(e.contains("16-512") && !e.contains("cvy_secret"), "{e}");
    let missing = read_file(&dir.path().join("none")).unwrap_err();
    assert!(missing.to_string().contains("none"), "{missing}");
}
