//! The fault-injection body: parsing, defaults and the probability checks.

use super::*;

fn parse(body: &str) -> Result<Faults, serde_json::Error> {
    serde_json::from_str(body)
}

#[test]
fn every_link_field_is_optional_and_defaults_to_zero() {
    let faults = parse(r#"{"links": {"2": {}}}"#).unwrap();
    let link = &faults.links[&2];
    assert_eq!(link.drop_probability, 0.0);
    assert_eq!(link.duplicate_probability, 0.0);
    assert_eq!((link.delay_ms, link.jitter_ms), (0, 0));
    assert!(faults.blocked.is_empty());
    validate(&faults).unwrap();
}

#[test]
fn duplicate_probability_is_read_and_checked_like_drop_probability() {
    let ok = parse(r#"{"links": {"3": {"duplicate_probability": 1.0, "drop_probability": 0}}}"#)
        .unwrap();
    assert_eq!(ok.links[&3].duplicate_probability, 1.0);
    validate(&ok).unwrap();

    for (field, value) in [
        ("duplicate_probability", "1.5"),
        ("duplicate_probability", "-0.1"),
        ("drop_probability", "2"),
    ] {
        let body = format!(r#"{{"links": {{"7": {{"{field}": {value}}}}}}}"#);
        let err = validate(&parse(&body).unwrap()).unwrap_err();
        let expected = format!(
            "links.7.{field} = {} is not in [0, 1]",
            value.parse::<f64>().unwrap()
        );
        assert_eq!(err, ApiError::BadRequest(expected), "{body}");
    }
}

#[test]
fn unknown_fields_and_wrong_types_are_refused() {
    for body in [
        r#"{"links": {"2": {"duplicate": 0.5}}}"#,
        r#"{"links": {"2": {"duplicate_probability": "0.5"}}}"#,
        r#"{"links": {"x": {}}}"#,
        r#"{"links": {"2": {"delay_ms": -1}}}"#,
        r#"{"links": {"2": {"delay_ms": 18446744073709551616}}}"#,
        r#"{"links": {"2": {"duplicate_probability": 1e999}}}"#,
        r#"{"blocked": [-1]}"#,
        r#"{"partition": []}"#,
    ] {
        assert!(parse(body).is_err(), "{body}");
    }
}

#[test]
fn largest_delay_and_jitter_are_drawn_without_overflow() {
    let faults =
        parse(r#"{"links": {"2": {"delay_ms": 18446744073709551615, "jitter_ms": 18446744073709551615}}}"#)
            .unwrap();
    validate(&faults).unwrap();
    let link = &faults.links[&2];
    let mut policy = convoy_raft::network::fault::FaultPolicy::default();
    policy.set(
        2,
        FaultRule {
            delay: Duration::from_millis(link.delay_ms),
            jitter: Duration::from_millis(link.jitter_ms),
            ..FaultRule::default()
        },
    );
    let _ = policy.decide(2);
}
