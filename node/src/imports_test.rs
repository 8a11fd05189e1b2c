//! The node crate's import rules, checked from its source (docs/ARCHITECTURE.md, "node"): the client side
//! (`cli/`, `client.rs`, `agent/`, `sim/`) reaches nothing of the server, directly or through another
//! module, and no modules use each other in a circle.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// The client side: modules whose name starts with one of these.
const CLIENT: &[&str] = &["cli", "client", "agent", "sim"];

/// The server's modules, which the client side must not reach.
const SERVER: &[&str] = &["api", "server", "replica", "machine", "leader", "metrics"];

fn src_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every module's file, by module path (`cli/args`; a `mod.rs` is its directory's module, `cli`), tests
/// and the crate root left out.
fn modules() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("utf-8 file name")
                .to_string();
            let module = format!("{prefix}{}", name.trim_end_matches(".rs"));
            if path.is_dir() {
                walk(&path, &format!("{module}/"), out);
                continue;
            }
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            if stem.ends_with("_test") || stem == "tests" || ["lib", "main"].contains(&stem) {
                continue;
            }
            let module = if stem == "mod" {
                prefix.trim_end_matches('/').to_string()
            } else {
                module
            };
            out.insert(module, path);
        }
    }
    let mut out = BTreeMap::new();
    walk(&src_dir(), "", &mut out);
    out
}

/// Code without `//` comments (a doc link names no dependency) and without an inline `mod tests`.
fn code(src: &str) -> String {
    let src = match src.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &src[..at],
        None => src,
    };
    src.lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The longest known module that `segments` (a path from the crate root) starts with.
fn resolve(segments: &[&str], known: &BTreeMap<String, PathBuf>) -> Option<String> {
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].join("/"))
        .find(|m| known.contains_key(m))
}

/// The paths `rest` starts (`a::b::c`, or each of a group `{a::b, c}`), as segments.
fn paths(rest: &str) -> Vec<Vec<&str>> {
    fn single(p: &str) -> Vec<&str> {
        p.split("::")
            .map(|s| s.trim())
            .take_while(|s| !s.is_empty() && s.chars().all(is_ident))
            .collect()
    }
    match rest.strip_prefix('{') {
        Some(group) => group
            .split('}')
            .next()
            .unwrap_or("")
            .split(',')
            .map(|p| single(p.trim()))
            .collect(),
        None => {
            let end = rest
                .find(|c: char| !(is_ident(c) || c == ':'))
                .unwrap_or(rest.len());
            vec![single(&rest[..end])]
        }
    }
}

/// The modules `module` (at `file`) names through `crate::` or `super::` paths.
fn uses(module: &str, file: &Path, known: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let src = code(&std::fs::read_to_string(file).expect("read module"));
    let parent: Vec<&str> = module.split('/').collect::<Vec<_>>();
    let parent = &parent[..parent.len() - 1];
    let mut out = BTreeSet::new();
    // A directory's `mod.rs` names its children by relative paths (`use args::X`, `secret::hash`).
    let own: Vec<&str> = module.split('/').collect();
    let children: Vec<String> = known
        .keys()
        .filter_map(|k| k.strip_prefix(module)?.strip_prefix('/'))
        .filter(|rest| !rest.contains('/'))
        .map(|child| format!("{child}::"))
        .collect();
    let relative = children.iter().map(|c| (c.as_str(), &own[..], true));
    let absolute = [("crate::", &[][..], false), ("super::", parent, false)];
    for (prefix, base, keep_prefix) in absolute.into_iter().chain(relative) {
        for (at, _) in src.match_indices(prefix) {
            if at > 0 && src[..at].ends_with(|c: char| is_ident(c) || c == ':') {
                continue; // `super::super::` or `x::crate::`: not a path from here.
            }
            let from = if keep_prefix { at } else { at + prefix.len() };
            for path in paths(&src[from..]) {
                let segments: Vec<&str> = base.iter().copied().chain(path).collect();
                if let Some(target) = resolve(&segments, known) {
                    if target != module {
                        out.insert(target);
                    }
                }
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let known = modules();
    known
        .iter()
        .map(|(m, file)| (m.clone(), uses(m, file, &known)))
        .collect()
}

/// A shortest chain of imports from `from` to a module `wanted` accepts, if there is one.
fn chain(
    graph: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    wanted: impl Fn(&str) -> bool,
) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(m) = queue.pop_front() {
        for next in graph.get(m).into_iter().flatten() {
            if wanted(next) {
                // `next`, then back from `m` to `from`.
                let mut path = vec![next.clone()];
                let mut at = m;
                path.push(at.to_string());
                while at != from {
                    at = came_from[at];
                    path.push(at.to_string());
                }
                path.reverse();
                return Some(path);
            }
            if next != from && !came_from.contains_key(next.as_str()) {
                came_from.insert(next, m);
                queue.push_back(next);
            }
        }
    }
    None
}

fn top(module: &str) -> &str {
    module.split('/').next().unwrap_or(module)
}

#[test]
fn the_graph_sees_the_imports_it_should() {
    let g = graph();
    assert!(g["cli/exec"].contains("client"), "{:?}", g["cli/exec"]);
    assert!(g["cli/watch"].contains("sse"), "{:?}", g["cli/watch"]);
    assert!(
        g["api/auth"].contains("api/auth/secret"),
        "{:?}",
        g["api/auth"]
    );
    assert!(
        g["server"].contains("membership_probe"),
        "{:?}",
        g["server"]
    );
}

#[test]
fn the_client_side_reaches_nothing_of_the_server() {
    let g = graph();
    let mut found = Vec::new();
    for m in g.keys().filter(|m| CLIENT.contains(&top(m))) {
        if let Some(path) = chain(&g, m, |t| SERVER.contains(&top(t))) {
            found.push(path.join(" → "));
        }
    }
    assert!(
        found.is_empty(),
        "client modules reach the server:\n{}",
        found.join("\n")
    );
}

/// Every circle of imports in `g`, one line each (`a → b`: a uses b, which uses a), from its smallest
/// module.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for m in g.keys() {
        if let Some(path) = chain(g, m, |t| t == m) {
            let mut circle = path;
            circle.pop();
            let start = (0..circle.len()).min_by_key(|&i| &circle[i]).unwrap_or(0);
            circle.rotate_left(start);
            found.insert(circle.join(" → "));
        }
    }
    found
}

#[test]
fn no_modules_import_each_other_in_a_circle() {
    let found = circles(&graph());
    assert!(
        found.is_empty(),
        "import circles:\n{}",
        found.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_checker_finds_a_circle_of_any_length_and_only_circles() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry(from.to_string())
                .or_default()
                .insert(to.to_string());
            g.entry(to.to_string()).or_default();
        }
        g
    };
    // A parent and its child (`tools/bench` ↔ a scenario reading the parent's context), and a longer one.
    let g = graph(&[
        ("bench", "bench/rollout"),
        ("bench/rollout", "bench"),
        ("api", "api/openapi"),
        ("api/openapi", "api/route"),
        ("api/route", "api"),
        ("cli", "api"),
    ]);
    assert_eq!(
        circles(&g).into_iter().collect::<Vec<_>>(),
        ["api → api/openapi → api/route", "bench → bench/rollout"]
    );
    // The same modules with the context in a file of its own: no circle.
    let g = graph(&[
        ("bench", "bench/rollout"),
        ("bench", "bench/context"),
        ("bench/rollout", "bench/context"),
        ("api", "api/openapi"),
        ("api/openapi", "api/route"),
        ("cli", "api"),
    ]);
    assert!(circles(&g).is_empty(), "{:?}", circles(&g));
}
