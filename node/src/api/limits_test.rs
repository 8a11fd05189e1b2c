use super::*;
use convoy_actors::domain::FleetSetting;

fn limits(installs: Option<u32>) -> FleetLimits {
    FleetLimits {
        max_concurrent_installs: installs,
        max_concurrent_downloads: None,
    }
}

#[test]
fn a_leader_proposes_its_config_only_while_the_api_never_set_the_limits() {
    let set = |l, source| Some(FleetSetting { limits: l, source });
    // Never set: its config, unless it has none.
    assert_eq!(to_propose(limits(Some(3)), None), Some(limits(Some(3))));
    assert_eq!(to_propose(limits(None), None), None);
    // Set from another server's config: this leader's config wins, even no limit.
    assert_eq!(
        to_propose(limits(None), set(limits(Some(3)), LimitSource::Config)),
        Some(limits(None))
    );
    assert_eq!(
        to_propose(limits(Some(3)), set(limits(Some(3)), LimitSource::Config)),
        None
    );
    // Set by the API: never.
    assert_eq!(
        to_propose(limits(Some(9)), set(limits(Some(3)), LimitSource::Api)),
        None
    );
}

#[test]
fn the_answer_says_when_the_limits_in_force_are_not_this_servers_config() {
    let view = FleetLimitsView {
        max_concurrent_installs: Some(3),
        source: Some(LimitSource::Api),
        ..Default::default()
    };
    assert!(answer(view.clone(), limits(Some(5))).config_differs);
    assert!(!answer(view, limits(Some(3))).config_differs);
}
