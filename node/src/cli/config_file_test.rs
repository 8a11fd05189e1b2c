use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;

use super::*;

fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
    move |key| {
        pairs
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| OsString::from(v))
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_file_is_under_xdg_config_home_else_home() {
    assert_eq!(
        path_from(env(&[("XDG_CONFIG_HOME", "/x/cfg"), ("HOME", "/home/a")])).unwrap(),
        PathBuf::from("/x/cfg/convoy/config.toml")
    );
    assert_eq!(
        path_from(env(&[("HOME", "/home/a")])).unwrap(),
        PathBuf::from("/home/a/.config/convoy/config.toml")
    );
    // A relative XDG_CONFIG_HOME is ignored, as the XDG rule says.
    assert_eq!(
        path_from(env(&[("XDG_CONFIG_HOME", "cfg"), ("HOME", "/home/a")])).unwrap(),
        PathBuf::from("/home/a/.config/convoy/config.toml")
    );
    assert!(matches!(path_from(env(&[])), Err(ConfigFileError::NoHome)));
}

#[test]
fn saved_files_are_private_and_read_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cfg/convoy/config.toml");
    let mut file = ConfigFile::default();
    file.insert(
        "prod",
        Context {
            server: "a:1,b:2".into(),
            token: Some("s3cret-s3cret-s3cret".into()),
            ca_file: Some("/etc/ca.pem".into()),
        },
        &path,
    )
    .unwrap();
    file.current = Some("prod".into());
    file.save(&path).unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(ConfigFile::load(&path).unwrap(), file);
    // An existing directory is made private too, a loose file replaced by a private one; a loose file
    // holding a token is refused, naming its mode, without its secret.
    std::fs::set_permissions(
        path.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    file.save(&path).unwrap();
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    file.save(&path).unwrap();
    assert_eq!(mode(&path), 0o600);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = ConfigFile::load(&path).unwrap_err().to_string();
    assert!(
        refused.contains("0644") && refused.contains("chmod 600") && !refused.contains("s3cret"),
        "{refused}"
    );
}

#[test]
fn a_missing_file_is_empty_and_a_bad_one_is_refused_without_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    assert_eq!(ConfigFile::load(&path).unwrap(), ConfigFile::default());
    std::fs::write(
        &path,
        "current = \"x\"\n[contexts.x]\nserver = \"a:1\"\ntoken = \"topsecret-value\" junk\n",
    )
    .unwrap();
    let err = ConfigFile::load(&path).unwrap_err().to_string();
    assert!(err.contains("line 4"), "{err}");
    assert!(!err.contains("topsecret"), "{err}");
    std::fs::write(&path, "[contexts.x]\nserver = \"a:1\"\ncolour = \"red\"\n").unwrap();
    let err = ConfigFile::load(&path).unwrap_err().to_string();
    assert!(err.contains("colour"), "{err}");
    std::fs::write(&path, "[contexts.\"a b\"]\nserver = \"a:1\"\n").unwrap();
    let err = ConfigFile::load(&path).unwrap_err().to_string();
    assert!(err.contains("invalid context name"), "{err}");
}

#[test]
fn names_and_sizes_are_bounded() {
    assert!(check_name("prod-eu.1_a").is_ok());
    for bad in ["", "a b", "a/b", &"x".repeat(MAX_NAME_LEN + 1)] {
        assert!(check_name(bad).is_err(), "{bad:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
    assert!(matches!(
        ConfigFile::load(&path),
        Err(ConfigFileError::TooLarge { .. })
    ));
    let mut file = ConfigFile::default();
    let context = Context {
        server: "a:1".into(),
        token: None,
        ca_file: None,
    };
    for i in 0..MAX_CONTEXTS {
        file.insert(&format!("c{i}"), context.clone(), &path)
            .unwrap();
    }
    assert!(matches!(
        file.insert("one-more", context.clone(), &path),
        Err(ConfigFileError::Full { .. })
    ));
    // Replacing one is still fine.
    file.insert("c0", context, &path).unwrap();
}

#[test]
fn debug_never_shows_the_secret() {
    let c = Context {
        server: "a:1".into(),
        token: Some("s3cret-s3cret-s3cret".into()),
        ca_file: None,
    };
    let shown = format!("{c:?}");
    assert!(
        !shown.contains("s3cret") && shown.contains("<secret>"),
        "{shown}"
    );
}
