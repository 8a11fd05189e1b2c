//! Tokens: glob matching, the role → permission table, create/revoke/bootstrap through `apply`, and how
//! actors are written in JSON and in snapshots.

use super::*;
use crate::{ClusterState, Command, ErrorKind};

fn hash(byte: u8) -> SecretHash {
    [byte; HASH_LEN]
}

fn create(name: &str, role: Role, nodes: Option<&str>, h: SecretHash) -> Command {
    Command::CreateToken {
        name: name.into(),
        role,
        nodes: nodes.map(String::from),
        hash: h,
        by: Actor::Token("root".into()),
    }
}

#[test]
fn globs_match_stars_question_marks_and_literals() {
    let cases = [
        ("web-*", "web-1", true),
        ("web-*", "web-", true),
        ("web-*", "db-1", false),
        ("web-*", "xweb-1", false),
        ("*", "", true),
        ("*", "anything", true),
        ("", "", true),
        ("", "a", false),
        ("n?", "n1", true),
        ("n?", "n10", false),
        ("*-canary", "web-3-canary", true),
        ("*-canary", "web-3-canary2", false),
        ("a*b*c", "aXXbYYc", true),
        ("a*b*c", "aXXcYYb", false),
        ("a**", "a", true),
        ("rack-?-*", "rack-7-n12", true),
        ("rack-?-*", "rack-17-n12", false),
        ("n1", "n1", true),
        ("n1", "n10", false),
        ("ü*", "über", true),
    ];
    for (glob, text, want) in cases {
        assert_eq!(glob_matches(glob, text), want, "{glob:?} vs {text:?}");
    }
}

#[test]
fn roles_grant_exactly_their_permissions() {
    use Permission as P;
    let table: [(Role, &[Permission]); 5] = [
        (
            Role::Admin,
            &[
                P::Public,
                P::Authenticated,
                P::Read,
                P::ReadResources,
                P::Operate,
                P::Pulse,
                P::Report,
                P::Admin,
            ],
        ),
        (
            Role::Operator,
            &[
                P::Public,
                P::Authenticated,
                P::Read,
                P::ReadResources,
                P::Operate,
                P::Pulse,
            ],
        ),
        (Role::Pulser, &[P::Public, P::Authenticated, P::Pulse]),
        (
            Role::Agent,
            &[P::Public, P::Authenticated, P::ReadResources, P::Report],
        ),
        (
            Role::Reader,
            &[P::Public, P::Authenticated, P::Read, P::ReadResources],
        ),
    ];
    let all = [
        P::Public,
        P::Authenticated,
        P::Read,
        P::ReadResources,
        P::Operate,
        P::Pulse,
        P::Report,
        P::Admin,
    ];
    for (role, granted) in table {
        for p in all {
            assert_eq!(role.grants(p), granted.contains(&p), "{role} {p:?}");
        }
    }
}

#[test]
fn agents_report_only_for_their_nodes_and_admins_for_any() {
    let token = |role, nodes: Option<&str>| Token {
        name: "t".into(),
        role,
        nodes: nodes.map(String::from),
        hash: hash(1),
        created_at: 0,
        created_by: Actor::System,
        expires_at: None,
        consumers: Vec::new(),
    };
    assert!(token(Role::Agent, Some("web-*")).may_report_for("web-3"));
    assert!(!token(Role::Agent, Some("web-*")).may_report_for("db-3"));
    assert!(token(Role::Admin, None).may_report_for("db-3"));
    for role in [Role::Operator, Role::Pulser, Role::Reader] {
        assert!(!token(role, None).may_report_for("web-3"), "{role}");
    }
}

#[test]
fn tokens_are_created_found_by_hash_and_revoked() {
    let mut s = ClusterState::default();
    s.apply(create("ci", Role::Operator, None, hash(7)), 10)
        .unwrap();
    let t = s.tokens().authenticate(&hash(7)).expect("found");
    assert_eq!(
        (t.name.as_str(), t.role, t.created_at),
        ("ci", Role::Operator, 10)
    );
    assert_eq!(t.created_by, Actor::Token("root".into()));
    assert!(s.tokens().authenticate(&hash(8)).is_none());

    let again = s
        .apply(create("ci", Role::Reader, None, hash(9)), 11)
        .unwrap_err();
    assert_eq!(again.kind(), ErrorKind::Conflict);
    assert!(again.to_string().contains("token \"ci\""), "{again}");
    let same_secret = s
        .apply(create("other", Role::Reader, None, hash(7)), 11)
        .unwrap_err();
    assert_eq!(same_secret.kind(), ErrorKind::Invalid);

    s.apply(
        Command::RevokeToken {
            name: "ci".into(),
            by: Actor::User,
        },
        12,
    )
    .unwrap();
    assert!(s.tokens().authenticate(&hash(7)).is_none());
    let gone = s
        .apply(
            Command::RevokeToken {
                name: "ci".into(),
                by: Actor::User,
            },
            13,
        )
        .unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::NotFound);
}

#[test]
fn invalid_names_roles_and_globs_are_refused_without_change() {
    let mut s = ClusterState::default();
    let before = s.snapshot_bytes();
    let bad = [
        create("", Role::Reader, None, hash(1)),
        create("has space", Role::Reader, None, hash(1)),
        create(&"x".repeat(65), Role::Reader, None, hash(1)),
        create("system", Role::Reader, None, hash(1)),
        create("user", Role::Admin, None, hash(1)),
        create("a1", Role::Agent, None, hash(1)),
        create("a2", Role::Agent, Some(""), hash(1)),
        create("r1", Role::Reader, Some("web-*"), hash(1)),
    ];
    for cmd in bad {
        let e = s.apply(cmd.clone(), 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{cmd:?}: {e}");
    }
    assert_eq!(s.snapshot_bytes(), before);
}

#[test]
fn bootstrap_applies_once_and_a_revoked_bootstrap_token_stays_revoked() {
    let mut s = ClusterState::default();
    assert!(!s.tokens().bootstrapped());
    s.apply(Command::BootstrapToken { hash: hash(3) }, 5)
        .unwrap();
    let t = s.tokens().get(BOOTSTRAP_TOKEN).expect("created");
    assert_eq!((t.role, t.created_by.clone()), (Role::Admin, Actor::System));
    // A second proposal (a new leader, a restart) changes nothing, even with another secret.
    let after_first = s.snapshot_bytes();
    s.apply(Command::BootstrapToken { hash: hash(4) }, 6)
        .unwrap();
    assert_eq!(s.snapshot_bytes(), after_first);
    s.apply(
        Command::RevokeToken {
            name: BOOTSTRAP_TOKEN.into(),
            by: Actor::User,
        },
        7,
    )
    .unwrap();
    s.apply(Command::BootstrapToken { hash: hash(3) }, 8)
        .unwrap();
    assert!(s.tokens().get(BOOTSTRAP_TOKEN).is_none());
    assert!(s.tokens().authenticate(&hash(3)).is_none());
}

#[test]
fn snapshots_keep_tokens_and_hashes_only() {
    let mut s = ClusterState::default();
    s.apply(create("web-agents", Role::Agent, Some("web-*"), hash(9)), 1)
        .unwrap();
    let back = ClusterState::from_snapshot_bytes(&s.snapshot_bytes()).unwrap();
    assert_eq!(back, s);
    assert_eq!(
        back.tokens().get("web-agents").unwrap().nodes.as_deref(),
        Some("web-*")
    );
}

#[test]
fn actors_are_names_in_json_and_compact_in_snapshots() {
    let actors = [
        Actor::User,
        Actor::Pulse,
        Actor::Timer,
        Actor::System,
        Actor::Token("alice".into()),
    ];
    let json: Vec<String> = actors
        .iter()
        .map(|a| serde_json::to_string(a).unwrap())
        .collect();
    assert_eq!(
        json,
        [
            "\"user\"",
            "\"pulse\"",
            "\"timer\"",
            "\"system\"",
            "\"alice\""
        ]
    );
    for (a, j) in actors.iter().zip(&json) {
        assert_eq!(&serde_json::from_str::<Actor>(j).unwrap(), a);
        let bytes = bincode::serde::encode_to_vec(a, bincode::config::standard()).unwrap();
        let (back, _): (Actor, usize) =
            bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
        assert_eq!(&back, a);
    }
    // Unit actors stay one byte in the log, as before tokens existed.
    let user = bincode::serde::encode_to_vec(Actor::System, bincode::config::standard()).unwrap();
    assert_eq!(user.len(), 1);
}

#[test]
fn constant_time_equality_is_equality() {
    assert!(ct_eq(&hash(1), &hash(1)));
    let mut other = hash(1);
    other[31] ^= 1;
    assert!(!ct_eq(&hash(1), &other));
}

#[test]
fn a_token_name_is_recorded_as_by_on_start_and_user_operations() {
    use crate::testing::{pause, Kit};
    let mut k = Kit::new(2);
    let ops = Actor::Token("ops".into());
    let id = k.start_with(|spec| spec.by = ops.clone());
    k.ok(pause(id, Some("hold".into()), ops.clone()));
    let view = k.s.deployment(id).unwrap();
    let status_events: Vec<(&Actor, Option<&str>)> = view
        .events
        .iter()
        .filter(|e| e.action.is_none())
        .map(|e| (&e.by, e.message.as_deref()))
        .collect();
    assert_eq!(status_events.first().unwrap().0, &ops);
    assert_eq!(status_events.last().unwrap(), &(&ops, Some("hold")));
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(json["events"][0]["by"], "ops");
    // Node progress stays convoy's own.
    assert!(view
        .events
        .iter()
        .filter(|e| e.action.is_some())
        .all(|e| e.by == Actor::System));
}

#[test]
fn a_token_with_a_ttl_expires_at_its_leader_stamped_creation_plus_the_ttl() {
    let mut s = ClusterState::default();
    let create = |name: &str, h: u8, ttl_ms: u64| Command::CreateTokenWithTtl {
        name: name.into(),
        role: Role::Reader,
        nodes: None,
        hash: hash(h),
        by: Actor::System,
        ttl_ms,
    };
    s.apply(create("brief", 1, 60_000), 1_000).unwrap();
    let brief = s.tokens().get("brief").unwrap().clone();
    assert_eq!(brief.expires_at, Some(61_000));
    assert!(!brief.expired(60_999));
    assert!(brief.expired(61_000));
    assert_eq!(s.token("brief").unwrap().expires_at, Some(61_000));
    // Without a ttl: never.
    s.apply(create_plain("lasting", 2), 1_000).unwrap();
    assert!(!s.tokens().get("lasting").unwrap().expired(u64::MAX));
    assert_eq!(s.token("lasting").unwrap().expires_at, None);
    // Out of bounds: refused, nothing changes.
    for ttl in [0, MIN_TOKEN_TTL_MS - 1, MAX_TOKEN_TTL_MS + 1] {
        let refused = s.apply(create("odd", 3, ttl), 1_000).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Invalid, "{ttl}: {refused}");
        assert!(s.tokens().get("odd").is_none());
    }
    // The view says when it expires; a token without a ttl says nothing.
    let json = serde_json::to_value(s.token_views()).unwrap();
    assert_eq!(json[0]["expires_at"], 61_000, "{json}");
    assert!(json[1].get("expires_at").is_none(), "{json}");
    // Snapshots keep it.
    let back = ClusterState::from_snapshot_bytes(&s.snapshot_bytes()).unwrap();
    assert_eq!(back.tokens().get("brief").unwrap().expires_at, Some(61_000));
}

fn create_plain(name: &str, h: u8) -> Command {
    create(name, Role::Reader, None, hash(h))
}

#[test]
fn a_bound_token_is_an_agent_of_its_consumers_only() {
    let mut state = ClusterState::default();
    let bound = Command::CreateBoundToken {
        name: "web-agent".into(),
        nodes: "web-*".into(),
        consumers: vec!["web".into()],
        hash: hash(7),
        by: Actor::Token("root".into()),
        ttl_ms: None,
    };
    crate::views::precheck::precheck(&state, &bound).unwrap();
    state.apply(bound, 1).unwrap();
    let token = state.tokens().get("web-agent").unwrap();
    assert_eq!(token.role, Role::Agent);
    assert!(token.may_report_in(["web"].into_iter()));
    assert!(!token.may_report_in(["db"].into_iter()));
    assert!(!token.may_report_in(["web", "db"].into_iter()));
    let none = Command::CreateBoundToken {
        name: "loose".into(),
        nodes: "*".into(),
        consumers: vec![],
        hash: hash(8),
        by: Actor::Token("root".into()),
        ttl_ms: None,
    };
    assert!(state.apply(none, 2).is_err());
    let bad = Command::CreateBoundToken {
        name: "bad".into(),
        nodes: "*".into(),
        consumers: vec!["a/b".into()],
        hash: hash(9),
        by: Actor::Token("root".into()),
        ttl_ms: None,
    };
    assert!(crate::views::precheck::precheck(&state, &bad).is_err());
}
