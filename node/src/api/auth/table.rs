//! The permission table, read from the route declarations (`routes`: the app's, `Routes::of` a
//! request, handed in rather than imported from `api`): the auth middleware consults it on every
//! request (a path no route declares is 404), and the metrics label requests by the pattern it finds.
//! The first route that matches decides (a literal segment is declared before a `{param}` one that would take it).

pub use crate::api::route::Route as Rule;

/// The rule of `routes` for `method` on `path` (as the router sees it: percent-decoded, no query), if any.
pub fn lookup<'r>(routes: &'r [Rule], method: &str, path: &str) -> Option<&'r Rule> {
    routes
        .iter()
        .find(|r| r.method == method && matches(r.pattern, path))
}

/// The methods `routes` serve on `path` (empty: the path is not served at all).
pub fn allowed(routes: &[Rule], path: &str) -> Vec<&'static str> {
    let mut methods: Vec<&'static str> = routes
        .iter()
        .filter(|r| matches(r.pattern, path))
        .map(|r| r.method)
        .collect();
    methods.sort_unstable();
    methods.dedup();
    methods
}

/// Whether `path` fits `pattern` segment by segment; `{x}` takes exactly one non-empty segment.
pub fn matches(pattern: &str, path: &str) -> bool {
    let mut want = pattern.split('/');
    let mut got = path.split('/');
    loop {
        match (want.next(), got.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) if w.starts_with('{') && w.ends_with('}') => {
                if g.is_empty() {
                    return false;
                }
            }
            (Some(w), Some(g)) if w == g => {}
            _ => return false,
        }
    }
}
