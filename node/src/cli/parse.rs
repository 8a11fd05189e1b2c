//! Value parsers of the CLI's compound flags: `RES@VER`, `KEY=VALUE`, `CONSUMER:RESOURCE`, `RESOURCE=N`, and
//! durations with units (`10s`, `1500ms`, `2m`; a bare number is milliseconds).

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

/// A duration in milliseconds: a bare number is milliseconds, anything else a duration with units as
/// `humantime` reads them (`10s`, `1500ms`, `2m 30s`, `1h`).
pub fn parse_millis(raw: &str) -> Result<u64, String> {
    let raw = raw.trim();
    if let Ok(ms) = raw.parse::<u64>() {
        return Ok(ms);
    }
    let d = humantime::parse_duration(raw).map_err(|e| {
        format!(
            "{e}: expected a duration such as 10s, 1500ms or 2m (a bare number is milliseconds)"
        )
    })?;
    u64::try_from(d.as_millis()).map_err(|_| format!("{raw} is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_and_bare_numbers_are_milliseconds() {
        assert_eq!(parse_millis("10s"), Ok(10_000));
        assert_eq!(parse_millis("1500ms"), Ok(1_500));
        assert_eq!(parse_millis("2m 30s"), Ok(150_000));
        assert_eq!(parse_millis("250"), Ok(250));
        let err = parse_millis("10x").unwrap_err();
        assert!(err.contains("10s, 1500ms"), "{err}");
    }
}
