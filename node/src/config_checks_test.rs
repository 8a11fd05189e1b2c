use super::*;

fn member(raft: &str, http: &str) -> Member {
    Member {
        raft_addr: raft.into(),
        http_addr: http.into(),
    }
}

#[test]
fn a_random_base64_or_hex_secret_passes() {
    // 32 random bytes as base64 (44 characters) and as hex (64), fixed here for a stable test.
    check_secret_strength(b"3q2+7wAAq9XbN8uPz1m0bA6mE4Y1fH0pGkQ2vR9sTnU=").unwrap();
    check_secret_strength(b"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
        .unwrap();
}

#[test]
fn short_patterned_or_typed_secrets_are_refused_without_echoing_them() {
    for weak in [
        &b"0123456789abcdef"[..],                     // 16 bytes
        &[b'a'; 64][..],                              // one symbol
        &b"abcdabcdabcdabcdabcdabcdabcdabcdabcd"[..], // a repeated block
        &b"passwordpasswordpasswordpassword"[..],
    ] {
        let e = check_secret_strength(weak).unwrap_err();
        assert_eq!(e.key, "cluster_secret_file");
        assert!(e.reason.contains("head -c 32 /dev/urandom"), "{e:?}");
        let secret = String::from_utf8_lossy(weak);
        assert!(
            !e.value.contains(secret.as_ref()),
            "the secret is not echoed: {e:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_secret_file_readable_by_others_is_refused_with_the_chmod() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret");
    std::fs::write(&path, "x").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = check_secret_mode(&path).unwrap_err();
    assert!(e.reason.contains("chmod 600"), "{e:?}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    check_secret_mode(&path).unwrap();
}

#[test]
fn the_own_entry_must_match_and_addresses_must_be_distinct() {
    let founders = BTreeMap::from([
        (1, member("127.0.0.1:9081", "127.0.0.1:8081")),
        (2, member("127.0.0.1:9082", "127.0.0.1:8082")),
    ]);
    check_founders(1, "127.0.0.1:9081", "127.0.0.1:8081", &founders).unwrap();
    let e = check_founders(1, "127.0.0.1:9999", "127.0.0.1:8081", &founders).unwrap_err();
    assert!(e.reason.contains("own entry differs"), "{e:?}");
    // Listening on every address, or naming the host differently, is the same endpoint.
    check_founders(1, "0.0.0.0:9081", "localhost:8081", &founders).unwrap();
    let e = check_founders(1, "127.0.0.1:9081", "127.0.0.1:8089", &founders).unwrap_err();
    assert!(e.reason.contains("own entry differs"), "{e:?}");
    // A joiner not among the founders is not judged by them.
    check_founders(4, "127.0.0.1:9084", "127.0.0.1:8084", &founders).unwrap();
    let clash = BTreeMap::from([
        (1, member("127.0.0.1:9081", "127.0.0.1:8081")),
        (2, member("127.0.0.1:9081", "127.0.0.1:8082")),
    ]);
    let e = check_founders(1, "127.0.0.1:9081", "127.0.0.1:8081", &clash).unwrap_err();
    assert!(e.value.contains("127.0.0.1:9081"), "{e:?}");
}

#[test]
fn a_new_server_refuses_a_data_dir_that_is_not_convoys() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    check_data_dir(&data, true).unwrap(); // absent
    std::fs::create_dir(&data).unwrap();
    check_data_dir(&data, true).unwrap(); // empty
    std::fs::write(data.join("notes.txt"), "x").unwrap();
    let e = check_data_dir(&data, true).unwrap_err();
    assert!(e.reason.contains("notes.txt"), "{e:?}");
    check_data_dir(&data, false).unwrap(); // `existing` is never judged
    std::fs::write(data.join("CURRENT"), "MANIFEST-000001\n").unwrap();
    check_data_dir(&data, true).unwrap(); // convoy's own: a restart
}
