//! The one rule: units always, a bare number only where the name gives its unit.

use super::*;

#[test]
fn durations_take_humantime_units() {
    assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
    assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5_400)));
    assert_eq!(parse_duration("2m 30s"), Ok(Duration::from_secs(150)));
    assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    assert_eq!(parse_duration(" 7d "), Ok(Duration::from_secs(7 * 86_400)));
    assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
}

#[test]
fn a_bare_number_is_refused_with_the_units_it_may_have_meant() {
    let err = parse_duration("45").unwrap_err();
    assert_eq!(err, DurationError::BareNumber { value: "45".into() });
    let text = err.to_string();
    assert!(text.contains("45s") && text.contains("45ms"), "{text}");
}

#[test]
fn nonsense_is_refused_naming_the_value() {
    for bad in ["", "soon", "10x", "-5s", "1.5.2s"] {
        let err = parse_duration(bad).unwrap_err();
        assert!(
            matches!(&err, DurationError::Invalid { value, .. } if value == bad.trim()),
            "{bad:?}: {err:?}"
        );
    }
    let long = "9".repeat(300) + "x";
    match parse_duration(&long).unwrap_err() {
        DurationError::Invalid { value, .. } => assert_eq!(value.len(), 100),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_millisecond_flag_reads_a_bare_number_as_milliseconds_and_units_as_written() {
    assert_eq!(parse_millis("1500"), Ok(1_500));
    assert_eq!(parse_millis("0"), Ok(0));
    assert_eq!(parse_millis("2s"), Ok(2_000));
    assert_eq!(parse_millis("1m 30s"), Ok(90_000));
    assert!(matches!(
        parse_millis("fast"),
        Err(DurationError::Invalid { .. })
    ));
}
