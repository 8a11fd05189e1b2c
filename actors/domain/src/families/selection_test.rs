use crate::testing::*;
use crate::*;

fn other(k: &mut Kit) {
    k.ok(Command::CreateResource { name: "lib".into() });
    for _ in 0..2 {
        let p = Command::PublishVersion {
            resource: "lib".into(),
            label: None,
            artifact: None,
            metadata: Default::default(),
            depends_on: vec![],
            health_port: None,
        };
        k.ok(p);
    }
}

#[test]
fn newest_pin_and_dependency_invariant_in_priority_order() {
    let mut k = Kit::new(1);
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "newest");
    other(&mut k);
    let v3 = k.publish(vec![Dependency {
        resource: "lib".into(),
        version: 2,
    }]);
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(2),
        "v3 needs lib 2, not installed on c"
    );
    let rr = ResourceReport {
        interested: None,
        current: Some(2),
        versions: [(2, vp(true, true, None))].into(),
        removed: false,
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "c-0".into(),
        active: None,
        resources: [("lib".to_string(), rr)].into(),
    }]));
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(v3),
        "dependency now holds"
    );
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: Some(1),
        policy: Policy::default(),
    });
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(1),
        "a pin wins over everything"
    );
}

#[test]
fn dependency_must_name_an_existing_version() {
    let mut k = Kit::new(1);
    let cmd = Command::PublishVersion {
        resource: "r".into(),
        label: None,
        artifact: None,
        metadata: Default::default(),
        depends_on: vec![Dependency {
            resource: "r".into(),
            version: 1,
        }],
        health_port: None,
    };
    assert!(k.err(cmd).to_string().contains("own resource"));
    other(&mut k);
    let cmd = Command::PublishVersion {
        resource: "r".into(),
        label: None,
        artifact: None,
        metadata: Default::default(),
        depends_on: vec![Dependency {
            resource: "lib".into(),
            version: 5,
        }],
        health_port: None,
    };
    assert_eq!(k.err(cmd).to_string(), "resource \"lib\" has no version 5");
}
