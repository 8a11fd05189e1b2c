use super::*;

fn behaviour(fail_rate: f64) -> Behaviour {
    Behaviour {
        download: Duration::from_millis(10),
        install: Duration::from_millis(20),
        fail_rate,
    }
}

fn target(version: u64, download: bool, install: bool) -> BTreeMap<String, Target> {
    BTreeMap::from([(
        "app".to_string(),
        Target {
            version,
            download,
            install,
            uninstall: false,
        },
    )])
}

#[test]
fn downloads_then_installs_only_when_allowed() {
    let b = behaviour(0.0);
    let mut node = SimNode::running("app", 1);
    let ms = Duration::from_millis;
    node.step(&target(2, true, false), ms(0), &b, 0.5);
    node.step(&target(2, true, false), ms(10), &b, 0.5);
    let v2 = &node.report()["app"].versions[&2];
    assert!(
        v2.downloaded && !v2.installed,
        "downloaded but must not install yet"
    );
    node.step(&target(2, true, false), ms(100), &b, 0.5);
    assert_eq!(
        node.current("app"),
        Some(1),
        "no install without permission"
    );

    node.step(&target(2, true, true), ms(100), &b, 0.5);
    node.step(&target(2, true, true), ms(110), &b, 0.5);
    assert_eq!(node.current("app"), Some(1), "install takes its time");
    node.step(&target(2, true, true), ms(120), &b, 0.5);
    assert_eq!(node.current("app"), Some(2));
    let v2 = &node.report()["app"].versions[&2];
    assert!(v2.installed && v2.done && v2.error.is_none());
}

#[test]
fn a_failed_install_is_reported_done_with_an_error() {
    let b = behaviour(0.5);
    let mut node = SimNode::running("app", 1);
    let ms = Duration::from_millis;
    node.step(&target(2, true, true), ms(0), &b, 0.1);
    node.step(&target(2, true, true), ms(10), &b, 0.1);
    node.step(&target(2, true, true), ms(30), &b, 0.1);
    let v2 = &node.report()["app"].versions[&2];
    assert!(v2.done && !v2.installed);
    assert!(v2.error.as_deref().unwrap().contains("version 2"));
    assert_eq!(node.current("app"), Some(1));
    // It does not retry a finished version on its own.
    node.step(&target(2, true, true), ms(100), &b, 0.9);
    assert!(node.report()["app"].versions[&2].error.is_some());
}

#[test]
fn a_rollback_target_switches_back_without_downloading() {
    let b = behaviour(0.0);
    let mut node = SimNode::running("app", 1);
    let ms = Duration::from_millis;
    for t in [0, 10, 30] {
        node.step(&target(2, true, true), ms(t), &b, 0.9);
    }
    assert_eq!(node.current("app"), Some(2));
    node.step(&target(1, false, true), ms(40), &b, 0.9);
    assert_eq!(node.current("app"), Some(1), "rolled back at once");
}
