//! Query templating: `{{consumer}}`, `{{resource}}`, `{{version}}`, `{{deployment}}` and `{{nodes}}` (the node
//! ids of the phase measured, as an anchored-by-Prometheus regex alternation `a|b|c`, each id's regex
//! metacharacters escaped for a PromQL double-quoted string, so `node=~"{{nodes}}"` matches exactly them).

/// The values a query is rendered with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vars<'a> {
    /// The consumer's name.
    pub consumer: &'a str,
    /// The resource's name.
    pub resource: &'a str,
    /// The version deployed.
    pub version: u64,
    /// The deployment's id (`d-7`).
    pub deployment: &'a str,
    /// The node ids of the phase measured (the batch or wave; every touched node in the background).
    pub nodes: Vec<&'a str>,
}

/// Longest rendered query, in bytes: past it `{{nodes}}` is cut at a whole id (the leader never sends more).
pub const MAX_RENDERED: usize = 16 * 1024;

/// `id` as a regex matching exactly itself, written inside a PromQL double-quoted string (where a
/// backslash is itself escaped): `web.1` → `web\\.1`.
pub fn escape_regex(id: &str) -> String {
    let mut out = String::with_capacity(id.len() + 4);
    for c in id.chars() {
        match c {
            '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$' | '\\' => {
                out.push_str("\\\\");
                out.push(c);
            }
            '"' => out.push_str("\\\""),
            _ => out.push(c),
        }
    }
    out
}

/// The placeholders a query may hold, each at most once (`spec.rs` refuses a repeat at creation).
pub const PLACEHOLDERS: [&str; 5] = [
    "{{consumer}}",
    "{{resource}}",
    "{{version}}",
    "{{deployment}}",
    "{{nodes}}",
];

/// The first placeholder `query` holds more than once, if any.
pub fn repeated_placeholder(query: &str) -> Option<&'static str> {
    PLACEHOLDERS
        .into_iter()
        .find(|p| query.matches(p).count() > 1)
}

/// The query with its placeholders replaced; an unknown `{{...}}` is left as written (Prometheus refuses it,
/// which is then a measurement error). The cap applies to what is built (issue 37): the node list's share is
/// [`MAX_RENDERED`] less everything else, divided among the `{{nodes}}` it fills (one, in a query accepted
/// since; a repeat in an older one gets no more in all).
pub fn render(query: &str, vars: &Vars<'_>) -> String {
    let times = query.matches("{{nodes}}").count().max(1);
    let names = |p: &str, v: usize| query.matches(p).count() * v;
    let rest = query.len()
        + names("{{consumer}}", vars.consumer.len())
        + names("{{resource}}", vars.resource.len())
        + names("{{version}}", 20)
        + names("{{deployment}}", vars.deployment.len());
    let budget = MAX_RENDERED.saturating_sub(rest) / times;
    let mut nodes = String::new();
    for id in &vars.nodes {
        let e = escape_regex(id);
        if nodes.len() + e.len() + 1 > budget {
            break;
        }
        if !nodes.is_empty() {
            nodes.push('|');
        }
        nodes.push_str(&e);
    }
    query
        .replace("{{consumer}}", vars.consumer)
        .replace("{{resource}}", vars.resource)
        .replace("{{version}}", &vars.version.to_string())
        .replace("{{deployment}}", vars.deployment)
        .replace("{{nodes}}", &nodes)
}

#[cfg(test)]
#[path = "template_test.rs"]
mod tests;
