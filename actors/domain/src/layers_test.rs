//! The domain's layers, checked from its source: a module may use modules of its own layer or of a lower one,
//! never of a higher one, and no set of modules uses each other in a cycle. A module missing from [`LAYERS`]
//! fails the test, so every new file states where it sits (docs/ARCHITECTURE.md, "Domain layers").

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Bottom to top. Within a layer edges are allowed as long as they form no cycle.
const LAYERS: &[(&str, &[&str])] = &[
    // Values with no domain dependency: ids and time, statuses and their table, strategies and settings.
    (
        "base",
        &[
            "vecmap",
            "chunked",
            "cow",
            "invalid",
            "ids",
            "threshold",
            "strategy",
            "status",
            "schema",
            "outcome",
        ],
    ),
    // `DomainError`, converting the base layer's small errors; parsing that refuses with it.
    ("errors", &["errors", "ranges"]),
    // What the state is made of, and the behaviour of one entity on its own.
    (
        "entities",
        &[
            "model",
            "policy",
            "counters",
            "deployment",
            "nodes",
            "group_deployment",
            "tokens",
            "seen",
            "progress",
            "pulse",
        ],
    ),
    ("command", &["command"]),
    // Handlers in the openraft style: a struct of `&mut` borrows of only the maps a command family changes,
    // reporting what happened; `state` builds them and settles their report.
    (
        "families",
        &[
            "retract",
            "retention",
            "forget",
            "removal",
            "subscriptions",
            "registry",
            "lifecycle",
            "group_abort",
            "selection",
            "reconverge",
            "settle",
            "reports",
            "starts",
            "group",
        ],
    ),
    ("state", &["state"]),
    // Read-only answers over the state: API views, pages, plans, checks before the log, the leader's queries.
    (
        "views",
        &[
            "views", "summary", "explain", "fleet", "gauges", "plan", "precheck", "targets",
            "queries",
        ],
    ),
    ("tests", &["testkit"]),
];

fn layer_of() -> BTreeMap<&'static str, usize> {
    let mut out = BTreeMap::new();
    for (i, (_, modules)) in LAYERS.iter().enumerate() {
        for m in *modules {
            assert!(out.insert(*m, i).is_none(), "{m} is listed twice");
        }
    }
    out
}

fn domain_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/domain")
}

/// The domain's modules (file stems), without `mod.rs` and the `*_test.rs` siblings.
fn modules() -> BTreeSet<String> {
    std::fs::read_dir(domain_dir())
        .expect("read src/domain")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter_map(|f| f.strip_suffix(".rs").map(str::to_string))
        .filter(|m| m != "mod" && !m.ends_with("_test"))
        .collect()
}

/// Source without `//` comments (doc links such as `[x](super::state)` name no dependency).
fn code(src: &str) -> String {
    src.lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The domain modules `src` names through `super::X` or `crate::domain::X`, grouped forms
/// (`super::{a::T, b}`) included.
fn uses(src: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let src = code(src);
    let mut out = BTreeSet::new();
    for prefix in ["super::", "crate::domain::"] {
        for (at, _) in src.match_indices(prefix) {
            if at > 0 && src[..at].ends_with(|c: char| is_ident(c) || c == ':') {
                continue; // `super::super::` or `x::super::` is not a path from this module's parent.
            }
            let rest = &src[at + prefix.len()..];
            let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                inner.split(|c: char| !is_ident(c)).collect()
            } else {
                vec![rest.split(|c: char| !is_ident(c)).next().unwrap_or("")]
            };
            out.extend(
                names
                    .into_iter()
                    .filter(|n| known.contains(*n))
                    .map(str::to_string),
            );
        }
    }
    out
}

/// Every module's edges to the other domain modules.
fn graph(known: &BTreeSet<String>) -> BTreeMap<String, BTreeSet<String>> {
    known
        .iter()
        .map(|m| {
            let src = std::fs::read_to_string(domain_dir().join(format!("{m}.rs"))).expect("read");
            let mut to = uses(&src, known);
            to.remove(m);
            (m.clone(), to)
        })
        .collect()
}

#[test]
fn every_module_has_a_layer() {
    let layers = layer_of();
    let found = modules();
    let unlisted: Vec<_> = found
        .iter()
        .filter(|m| !layers.contains_key(m.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "modules with no layer: {unlisted:?}; add each to LAYERS in layers_test.rs"
    );
    let gone: Vec<_> = layers.keys().filter(|m| !found.contains(**m)).collect();
    assert!(gone.is_empty(), "LAYERS lists missing modules: {gone:?}");
}

#[test]
fn no_module_uses_a_higher_layer() {
    let layers = layer_of();
    let known = modules();
    let mut upward = Vec::new();
    for (from, tos) in graph(&known) {
        let Some(&lf) = layers.get(from.as_str()) else {
            continue; // reported by every_module_has_a_layer
        };
        for to in tos {
            if let Some(&lt) = layers.get(to.as_str()) {
                if lt > lf {
                    upward.push(format!(
                        "{from} ({}) uses {to} ({})",
                        LAYERS[lf].0, LAYERS[lt].0
                    ));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "edges up a layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_import_cycle() {
    let g = graph(&modules());
    // Depth-first search; a back edge to a module on the current path closes a cycle.
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for to in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(to, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in g.keys() {
        if let Some(cycle) = visit(m, &g, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_scanner_sees_every_form_of_path() {
    let known: BTreeSet<String> = ["state", "views", "ids", "errors"]
        .into_iter()
        .map(str::to_string)
        .collect();
    let src = "use super::state::ClusterState;\n\
               use super::{views::Target, ids};\n\
               fn f(e: crate::domain::errors::DomainError) {}\n\
               // super::nothing here: a comment\n\
               use super::*;\n";
    let want: BTreeSet<String> = ["state", "views", "ids", "errors"]
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(uses(src, &known), want);
    assert!(uses("/// [x](super::state::X)\nuse super::*;", &known).is_empty());
}
