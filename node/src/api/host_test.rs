//! Which `Host` values a server takes: addresses, localhost, its members' names and the allow-list.

use super::*;

fn policy() -> HostPolicy {
    HostPolicy {
        own: "convoy-1.lan:7700".into(),
        allowed: vec!["convoy.example".into(), "proxy.example:443".into()],
    }
}

#[test]
fn addresses_localhost_and_configured_names_are_accepted() {
    let members = ["convoy-2.lan:7700", "10.0.0.3:7700"];
    for host in [
        "127.0.0.1:7700",
        "127.0.0.1",
        "[::1]:7700",
        "10.9.9.9:80",
        "localhost:7700",
        "LOCALHOST",
        "convoy-1.lan:7700",
        "convoy-2.lan:9999",
        "convoy.example",
        "convoy.example:8080",
        "proxy.example:443",
    ] {
        assert!(policy().accepts(host, members), "{host}");
    }
}

#[test]
fn a_rebound_name_is_refused() {
    for host in [
        "evil.example:7700",
        "evil.example",
        "proxy.example:80",
        "127.0.0.1.evil.example",
        "localhost.evil.example",
        "",
        ":7700",
        "convoy.example:notaport",
        "[::1",
    ] {
        assert!(!policy().accepts(host, ["convoy-2.lan:7700"]), "{host:?}");
    }
}

#[test]
fn allow_list_entries_are_checked() {
    assert_eq!(
        check_entry(" Proxy.Example:443 ").unwrap(),
        "proxy.example:443"
    );
    assert_eq!(check_entry("convoy.example").unwrap(), "convoy.example");
    for bad in ["", "a b", "x:99999", "https://x", &"a".repeat(MAX_HOST + 1)] {
        assert!(check_entry(bad).is_err(), "{bad:?}");
    }
}
