//! Value parsers of the CLI's compound flags: `RES@VER`, `KEY=VALUE`, `CONSUMER:RESOURCE`, `RESOURCE=N`.
//! Durations are read by `convoy_time` (docs/CLI.md, "Durations").

use convoy_actors::domain::{Dependency, Member};

use super::error::CliError;

/// `RES@VER` → a dependency.
pub fn parse_dependency(raw: &str) -> Result<Dependency, CliError> {
    let bad = |reason: &str| CliError::invalid("--depends-on", raw, reason);
    let (resource, version) = raw
        .split_once('@')
        .ok_or_else(|| bad("expected RESOURCE@VERSION"))?;
    if resource.is_empty() {
        return Err(bad("the resource name is empty"));
    }
    let version = version
        .parse()
        .map_err(|_| bad("the version must be a whole number"))?;
    Ok(Dependency {
        resource: resource.to_string(),
        version,
    })
}

/// `KEY=VALUE` → a pair.
pub fn parse_key_value(raw: &str) -> Result<(String, String), CliError> {
    match raw.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(CliError::invalid("--metadata", raw, "expected KEY=VALUE")),
    }
}

/// `CONSUMER:RESOURCE` → a group member.
pub fn parse_member(raw: &str) -> Result<Member, CliError> {
    match raw.split_once(':') {
        Some((c, r)) if !c.is_empty() && !r.is_empty() => Ok(Member {
            consumer: c.to_string(),
            resource: r.to_string(),
        }),
        _ => Err(CliError::invalid(
            "--member",
            raw,
            "expected CONSUMER:RESOURCE",
        )),
    }
}

/// `RESOURCE=N` → a version entry.
pub fn parse_resource_version(raw: &str) -> Result<(String, u64), CliError> {
    let bad = |reason: &str| CliError::invalid("--version", raw, reason);
    let (resource, version) = raw
        .split_once('=')
        .ok_or_else(|| bad("expected RESOURCE=N"))?;
    if resource.is_empty() {
        return Err(bad("the resource name is empty"));
    }
    let version = version
        .parse()
        .map_err(|_| bad("the version must be a whole number"))?;
    Ok((resource.to_string(), version))
}
