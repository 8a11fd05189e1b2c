//! The domain's layers, checked from its source: each folder (or root file) of `src/` sits in a layer, and a
//! module may use modules of its own layer or of a lower one, never of a higher one; no folders and no modules
//! use each other in a cycle. A folder or root file missing from [`LAYERS`] fails the test, so every new one
//! states where it sits (docs/ARCHITECTURE.md, "Layers").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom to top: each layer's folders (or root files) under `src/`. Within a layer edges are allowed as long
/// as they form no cycle, between folders or between modules.
const LAYERS: &[(&str, &[&str])] = &[
    // Values with no domain dependency: ids and time, statuses and their table, strategies and settings.
    // Metric analysis (spec, conditions, templates, the run's counters): uses nothing else of the crate.
    ("analysis", &["analysis"]),
    ("base", &["values"]),
    // `DomainError`, converting the base layer's small errors; parsing that refuses with it.
    ("errors", &["errors"]),
    // What the state is made of, and the behaviour of one entity on its own: the deployment entity with its
    // transitions, progress and pulse rules side by side in `deployment/`, the others in `entities/`.
    // `policy/`: the fleet's policies (budgets), computed over many entities and handed to a deployment's
    // admission as its `Gate` (the deployment never uses them back).
    ("entities", &["entities", "deployment", "policy"]),
    ("command", &["command"]),
    // Handlers in the openraft style: a struct of `&mut` borrows of only the maps a command family changes,
    // reporting what happened; `state` builds them and settles their report.
    ("families", &["families"]),
    ("state", &["state"]),
    // Read-only answers over the state: API views, pages, plans, checks before the log, the leader's queries.
    ("views", &["views"]),
    ("tests", &["testing"]),
];

fn layer_of() -> BTreeMap<&'static str, usize> {
    let mut out = BTreeMap::new();
    for (i, (_, units)) in LAYERS.iter().enumerate() {
        for u in *units {
            assert!(out.insert(*u, i).is_none(), "{u} is listed twice");
        }
    }
    out
}

fn src_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A module's name from its file: `values/ids.rs` → `values/ids`, `errors/mod.rs` → `errors`.
fn module_name(rel: &Path) -> String {
    let s = rel.with_extension("").to_string_lossy().replace('\\', "/");
    s.strip_suffix("/mod").map_or(s.clone(), str::to_string)
}

/// The domain's modules (name → source), without `lib.rs`, this file and the `*_test.rs` siblings.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("read src") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&src_dir(), &mut files);
    files
        .into_iter()
        .filter(|p| p != &src_dir().join("lib.rs"))
        .filter(|p| !p.file_stem().unwrap().to_string_lossy().ends_with("_test"))
        .map(|p| {
            let src = std::fs::read_to_string(&p).expect("read");
            (module_name(p.strip_prefix(src_dir()).unwrap()), src)
        })
        .collect()
}

/// The folder or root file a module belongs to.
fn unit(module: &str) -> &str {
    module.split('/').next().unwrap_or(module)
}

/// Source without `//` comments (doc links such as `[x](crate::state)` name no dependency).
fn code(src: &str) -> String {
    src.lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The module a path from the crate root names: the longest prefix of `segments` that is a module, or the
/// module a root re-export (`pub use values::ids::DeploymentId` in lib.rs) comes from.
fn resolve(
    segments: &[&str],
    known: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> Option<String> {
    let first = *segments.first()?;
    if !known.contains(first) && !known.iter().any(|m| unit(m) == first) {
        return reexports.get(first).cloned();
    }
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].join("/"))
        .find(|m| known.contains(m))
}

/// `{a::T, b::{c, d}}` → `["a::T", "b::{c, d}"]`: the top-level items of a group, `rest` starting after `{`.
fn group_items(rest: &str) -> Vec<String> {
    let (mut depth, mut item, mut out) = (0, String::new(), Vec::new());
    for c in rest.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    out.push(item);
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

/// `a::b::{c, d}` → `[["a", "b", "c"], ["a", "b", "d"]]`: every path a `use` tree names, one group deep.
fn paths(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let split = |p: &str| -> Vec<String> { p.split("::").map(str::to_string).collect() };
    let group = match tree.strip_prefix('{') {
        Some(rest) => Some((Vec::new(), rest)),
        None => tree
            .find("::{")
            .map(|at| (split(&tree[..at]), &tree[at + 3..])),
    };
    if let Some((prefix, rest)) = group {
        return group_items(rest)
            .into_iter()
            .flat_map(|item| paths(&item))
            .map(|tail| prefix.iter().cloned().chain(tail).collect())
            .collect();
    }
    let path: Vec<String> = tree
        .split("::")
        .map(|s| {
            s.chars()
                .take_while(|c| is_ident(*c) || *c == '*')
                .collect()
        })
        .collect();
    vec![path]
}

/// The modules `src` (the module `from`) names through `crate::X`, or `super::X` within its folder, grouped
/// forms (`crate::{a::T, b}`) included; `crate::*` names every module.
fn uses(
    from: &str,
    src: &str,
    known: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let src = code(src);
    let mut out = BTreeSet::new();
    // `super` of `a/b` (a file in folder `a`) is `a`; of `a` (a root file or a folder's mod.rs), the root.
    let parent: Vec<&str> = from.split('/').collect();
    let parent = &parent[..parent.len() - 1];
    for (prefix, base) in [("crate::", &[][..]), ("super::", parent)] {
        for (at, _) in src.match_indices(prefix) {
            if at > 0 && src[..at].ends_with(|c: char| is_ident(c) || c == ':') {
                continue; // `super::super::` or `x::crate::` is not a path from where this module says.
            }
            let rest = &src[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(is_ident(c) || ":{}, *\n".contains(c)))
                .unwrap_or(rest.len());
            for path in paths(&rest[..end]) {
                if path.first().is_some_and(|s| s == "*") {
                    if prefix == "crate::" {
                        out.extend(known.iter().cloned());
                    }
                    continue;
                }
                let full: Vec<&str> = base
                    .iter()
                    .copied()
                    .chain(path.iter().map(String::as_str))
                    .filter(|s| !s.is_empty())
                    .collect();
                out.extend(resolve(&full, known, reexports));
            }
        }
    }
    out
}

/// What the crate root re-exports (name → module), read from lib.rs's `pub use` lines.
fn reexports(known: &BTreeSet<String>) -> BTreeMap<String, String> {
    let lib = code(&std::fs::read_to_string(src_dir().join("lib.rs")).expect("read lib.rs"));
    let mut out = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(tree) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        for path in paths(tree) {
            let segs: Vec<&str> = path.iter().map(String::as_str).collect();
            let Some(name) = segs.last() else { continue };
            if let Some(m) = resolve(&segs, known, &BTreeMap::new()) {
                out.insert(name.to_string(), m);
            }
        }
    }
    out
}

/// Every module's edges to the other domain modules.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let known: BTreeSet<String> = mods.keys().cloned().collect();
    let reexports = reexports(&known);
    mods.iter()
        .map(|(m, src)| {
            let mut to = uses(m, src, &known, &reexports);
            to.remove(m);
            (m.clone(), to)
        })
        .collect()
}

/// The same edges between folders (and root files), without an edge from one to itself.
fn unit_graph(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in g {
        let edges = out.entry(unit(from).to_string()).or_default();
        edges.extend(tos.iter().map(|t| unit(t).to_string()));
        edges.remove(unit(from));
    }
    out
}

/// A cycle of `g`, if any (depth-first search; a back edge to a node on the current path closes one).
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
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
    g.keys()
        .find_map(|m| visit(m, g, &mut Vec::new(), &mut done))
}

#[test]
fn every_folder_has_a_layer() {
    let layers = layer_of();
    let found: BTreeSet<String> = modules().keys().map(|m| unit(m).to_string()).collect();
    let unlisted: Vec<_> = found
        .iter()
        .filter(|u| !layers.contains_key(u.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "folders or root files with no layer: {unlisted:?}; add each to LAYERS in layers_test.rs"
    );
    let gone: Vec<_> = layers.keys().filter(|u| !found.contains(**u)).collect();
    assert!(gone.is_empty(), "LAYERS lists missing folders: {gone:?}");
}

#[test]
fn no_module_uses_a_higher_layer() {
    let layers = layer_of();
    let mut upward = Vec::new();
    for (from, tos) in graph() {
        let Some(&lf) = layers.get(unit(&from)) else {
            continue; // reported by every_folder_has_a_layer
        };
        for to in tos {
            if let Some(&lt) = layers.get(unit(&to)) {
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
fn no_import_cycle_between_modules() {
    if let Some(cycle) = find_cycle(&graph()) {
        panic!("import cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn no_import_cycle_between_folders() {
    if let Some(cycle) = find_cycle(&unit_graph(&graph())) {
        panic!("folders in a cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_graph_sees_the_layers_edges() {
    // The scan finds real edges: the state builds its families, a family uses the entities, an entity the values.
    let g = graph();
    assert!(
        g["state/handlers"].contains("families/retract"),
        "{:?}",
        g["state/handlers"]
    );
    assert!(g["families/retract"].contains("deployment"));
    assert!(g["deployment/progress"].contains("values/strategy"));
}

#[test]
fn the_scanner_sees_every_form_of_path() {
    let known: BTreeSet<String> = ["state", "views", "values/ids", "values/status", "errors"]
        .into_iter()
        .map(str::to_string)
        .collect();
    let reexports = BTreeMap::from([("DomainError".to_string(), "errors".to_string())]);
    let src = "use crate::state::ClusterState;\n\
               use crate::{views::Target, values::ids::{Actor, DeploymentId}};\n\
               fn f(e: crate::DomainError) {}\n\
               use super::status::Status;\n\
               // crate::nothing here: a comment\n";
    let want: BTreeSet<String> = ["state", "views", "values/ids", "values/status", "errors"]
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(uses("values/threshold", src, &known, &reexports), want);
    assert!(uses(
        "views",
        "/// [x](crate::state::X)\nuse super::*;",
        &known,
        &reexports
    )
    .is_empty());
    assert_eq!(uses("testing", "use crate::*;", &known, &reexports), known);
}
