use super::*;

#[test]
fn every_placeholder_is_filled_and_node_ids_are_escaped() {
    let vars = Vars {
        consumer: "web",
        resource: "app",
        version: 7,
        deployment: "d-3",
        nodes: vec!["web.1", "web-2"],
    };
    let q = "rate(e{consumer=\"{{consumer}}\",app=\"{{resource}}\",v=\"{{version}}\",d=\"{{deployment}}\",node=~\"{{nodes}}\"}[1m])";
    assert_eq!(
        render(q, &vars),
        r#"rate(e{consumer="web",app="app",v="7",d="d-3",node=~"web\\.1|web-2"}[1m])"#
    );
    assert_eq!(render("up{x=\"{{other}}\"}", &vars), "up{x=\"{{other}}\"}");
}

#[test]
fn quotes_and_backslashes_cannot_leave_the_string() {
    assert_eq!(escape_regex("a\"b\\c"), "a\\\"b\\\\\\c");
}

#[test]
fn a_huge_node_list_is_cut_at_a_whole_id() {
    let ids: Vec<String> = (0..10_000).map(|i| format!("node-{i:05}")).collect();
    let vars = Vars {
        nodes: ids.iter().map(String::as_str).collect(),
        ..Vars::default()
    };
    let out = render("{{nodes}}", &vars);
    assert!(out.len() <= MAX_RENDERED);
    assert!(out.rsplit('|').next().unwrap().starts_with("node-"));
    assert_eq!(out.rsplit('|').next().unwrap().len(), 10);
}

#[test]
fn a_repeated_placeholder_cannot_build_past_the_cap() {
    let ids: Vec<String> = (0..10_000).map(|i| format!("node-{i:05}")).collect();
    let vars = Vars {
        consumer: "web",
        nodes: ids.iter().map(String::as_str).collect(),
        ..Vars::default()
    };
    let query = "sum(up{n=~\"{{nodes}}\"})+".repeat(70);
    assert!(query.len() < 2048);
    let out = render(&query, &vars);
    assert!(out.len() <= MAX_RENDERED, "{} bytes", out.len());
    assert_eq!(repeated_placeholder(&query), Some("{{nodes}}"));
    assert_eq!(
        repeated_placeholder("up{a=\"{{nodes}}\",c=\"{{consumer}}\"}"),
        None
    );
}
