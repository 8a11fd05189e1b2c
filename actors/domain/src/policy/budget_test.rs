use super::*;

fn max(t: FailedNodes) -> Budget {
    Budget {
        max_unavailable: Some(t),
        min_available: None,
    }
}

fn min(t: FailedNodes) -> Budget {
    Budget {
        max_unavailable: None,
        min_available: Some(t),
    }
}

#[test]
fn percentages_round_as_kubernetes_does() {
    // max_unavailable rounds down, to at least 1.
    assert_eq!(max(FailedNodes::Percent(10)).disruptions(25), 2);
    assert_eq!(max(FailedNodes::Percent(10)).disruptions(5), 1);
    assert_eq!(max(FailedNodes::Percent(10)).disruptions(0), 1);
    assert_eq!(max(FailedNodes::Count(3)).disruptions(2), 3);
    // min_available rounds up, so fewer disruptions.
    assert_eq!(min(FailedNodes::Percent(90)).disruptions(25), 2);
    assert_eq!(min(FailedNodes::Percent(50)).disruptions(5), 2);
    assert_eq!(min(FailedNodes::Count(4)).disruptions(5), 1);
    assert_eq!(min(FailedNodes::Count(9)).disruptions(5), 0);
    assert_eq!(min(FailedNodes::Percent(100)).disruptions(7), 0);
}

#[test]
fn a_budget_sets_exactly_one_limit_of_at_most_100_percent() {
    assert!(max(FailedNodes::Count(1)).validate().is_ok());
    assert!(min(FailedNodes::Percent(100)).validate().is_ok());
    let both = Budget {
        max_unavailable: Some(FailedNodes::Count(1)),
        min_available: Some(FailedNodes::Count(1)),
    };
    let err = both.validate().unwrap_err().to_string();
    assert!(err.contains("exactly one"), "{err}");
    let neither = Budget {
        max_unavailable: None,
        min_available: None,
    };
    assert!(neither.validate().is_err());
    let err = max(FailedNodes::Percent(150))
        .validate()
        .unwrap_err()
        .to_string();
    assert!(err.contains("150%"), "{err}");
}

#[test]
fn json_takes_a_count_or_a_percentage_and_refuses_unknown_fields() {
    let b: Budget = serde_json::from_str(r#"{"max_unavailable": "10%"}"#).unwrap();
    assert_eq!(b, max(FailedNodes::Percent(10)));
    let b: Budget = serde_json::from_str(r#"{"min_available": 3}"#).unwrap();
    assert_eq!(b, min(FailedNodes::Count(3)));
    assert!(serde_json::from_str::<Budget>(r#"{"max_unavailble": 1}"#).is_err());
}

#[test]
fn a_budget_of_zero_percent_admits_no_node_as_zero_does() {
    assert_eq!(max(FailedNodes::Percent(0)).disruptions(25), 0);
    assert_eq!(max(FailedNodes::Percent(0)).disruptions(1_000), 0);
    assert_eq!(max(FailedNodes::Count(0)).disruptions(25), 0);
    assert_eq!(max(FailedNodes::Percent(1)).disruptions(25), 1);
}
