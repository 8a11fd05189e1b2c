use super::*;

fn file(name: &str, url: &str) -> ProviderFile {
    ProviderFile {
        name: name.into(),
        prometheus: url.into(),
        timeout: None,
        headers_file: None,
    }
}

#[test]
fn a_provider_resolves_with_its_defaults() {
    let p = resolve(vec![file("prom", "http://127.0.0.1:9090/")], Path::new(".")).unwrap();
    assert_eq!(p[0].name, "prom");
    assert_eq!(p[0].base.as_str(), "http://127.0.0.1:9090/");
    assert_eq!(p[0].timeout, DEFAULT_TIMEOUT);
}

#[test]
fn refusals_name_the_key() {
    let bad = [
        (vec![file("a b", "http://x")], "analysis_provider.name"),
        (
            vec![file("p", "http://x"), file("p", "http://y")],
            "analysis_provider.name",
        ),
        (
            vec![file("p", "file:///etc/passwd")],
            "analysis_provider.prometheus",
        ),
        (vec![file("p", "nonsense")], "analysis_provider.prometheus"),
        (
            vec![ProviderFile {
                timeout: Some("1h".into()),
                ..file("p", "http://x")
            }],
            "analysis_provider.timeout",
        ),
    ];
    for (files, key) in bad {
        match resolve(files, Path::new(".")) {
            Err(ConfigError::Invalid { key: k, .. }) => assert_eq!(k, key),
            other => panic!("{key}: {other:?}"),
        }
    }
}

#[test]
fn headers_are_read_and_never_echoed() {
    let h = parse_headers("# comment\nAuthorization: Bearer s3cret\n\nX-Scope-OrgID: team-a\n")
        .unwrap();
    assert_eq!(h.len(), 2);
    assert!(h["authorization"].is_sensitive());
    let e = parse_headers("Authorization: Bearer bad\u{7f}secret")
        .unwrap_err()
        .to_string();
    assert!(!e.contains("secret"), "{e}");
    assert!(parse_headers("no colon here").is_err());
}
