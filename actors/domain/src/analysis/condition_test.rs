use super::*;

#[test]
fn comparisons_hold_as_written() {
    for (text, at, want) in [
        ("result < 0.01", 0.005, true),
        ("result < 0.01", 0.01, false),
        ("result <= 0.01", 0.01, true),
        ("result >= 0.99", 0.99, true),
        ("result > 0.99", 0.99, false),
        ("result == 3", 3.0, true),
        ("result != 3", 3.0, false),
        ("0.5 < result", 0.7, true),
        ("result>-1e3", -5.0, true),
    ] {
        let c = Condition::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(c.holds(at), want, "{text} at {at}");
    }
}

#[test]
fn and_binds_tighter_than_or_and_parentheses_group() {
    let c = Condition::parse("result < 1 || result > 5 && result < 6").unwrap();
    assert!(c.holds(0.5));
    assert!(c.holds(5.5));
    assert!(!c.holds(7.0));
    let c = Condition::parse("(result < 1 || result > 5) && result < 6").unwrap();
    assert!(!c.holds(7.0));
    assert!(Condition::parse("!(result < 1)").unwrap().holds(2.0));
}

#[test]
fn nan_satisfies_no_comparison() {
    assert!(!Condition::parse("result < 1").unwrap().holds(f64::NAN));
    assert!(!Condition::parse("result >= 1").unwrap().holds(f64::NAN));
}

#[test]
fn refusals_name_what_was_expected_and_where() {
    assert_eq!(
        Condition::parse("result <").unwrap_err(),
        ConditionError::Expected {
            expected: "'result' or a number",
            at: 8
        }
    );
    assert!(matches!(
        Condition::parse("result < 1 extra"),
        Err(ConditionError::Expected { at: 11, .. })
    ));
    assert!(Condition::parse("").is_err());
    assert!(Condition::parse("(result < 1").is_err());
    assert!(Condition::parse("result ~ 1").is_err());
    assert!(Condition::parse("system(\"rm\")").is_err());
    assert!(Condition::parse("result < inf").is_err());
    assert_eq!(
        Condition::parse(&"(".repeat(20)).unwrap_err(),
        ConditionError::TooDeep
    );
    assert_eq!(
        Condition::parse(&" ".repeat(300)).unwrap_err(),
        ConditionError::TooLong(300)
    );
}
