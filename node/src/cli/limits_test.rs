use super::*;
use convoy_actors::domain::limits::FleetLimitsView;
use convoy_actors::domain::LimitSource;

fn args(installs: Option<u32>, downloads: Option<u32>, unlimited: bool) -> LimitsArgs {
    LimitsArgs {
        installs,
        downloads,
        unlimited,
    }
}

#[test]
fn a_flag_changes_its_limit_and_keeps_the_other() {
    let now = FleetLimits {
        max_concurrent_installs: Some(5),
        max_concurrent_downloads: Some(20),
    };
    assert_eq!(merged(&args(None, None, false), now), None, "no flag: show");
    assert_eq!(
        merged(&args(Some(2), None, false), now),
        Some(FleetLimits {
            max_concurrent_installs: Some(2),
            max_concurrent_downloads: Some(20),
        })
    );
    assert_eq!(
        merged(&args(None, None, true), now),
        Some(FleetLimits::default())
    );
}

#[test]
fn the_text_shows_each_limit_its_use_its_source_and_a_differing_config() {
    let answer = LimitsAnswer {
        in_force: FleetLimitsView {
            max_concurrent_installs: Some(3),
            max_concurrent_downloads: None,
            source: Some(LimitSource::Api),
            installing: 2,
            downloading: 4,
        },
        this_server_config: FleetLimits {
            max_concurrent_installs: Some(2),
            max_concurrent_downloads: None,
        },
        config_differs: true,
    };
    let text = render(&answer);
    assert!(
        text.contains("2 installing, max_concurrent_installs 3"),
        "{text}"
    );
    assert!(text.contains("max_concurrent_downloads no limit"), "{text}");
    assert!(text.contains("set by:    api"), "{text}");
    assert!(
        text.contains("this server's config differs: max_concurrent_installs 2"),
        "{text}"
    );
}
