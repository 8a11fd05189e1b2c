use super::*;
use crate::command::Command;
use crate::entities::model::{Mode, ResourceReport, VersionProgress};
use crate::testing::{vp, Kit};
use crate::views::precheck::precheck;
use crate::ErrorKind;
use std::collections::BTreeMap;

/// Consumer `c` of `c-0`, `c-1` subscribed to `r` (versions 1 and 2); resource `other` exists with
/// version 1 and nobody subscribes to it.
fn kit() -> Kit {
    let mut k = Kit::new(2);
    k.subscribe("c", "r", Mode::Weak, None);
    k.ok(Command::CreateResource {
        name: "other".into(),
    });
    k.publish_to("other");
    k
}

/// One resource of a report: its name, `current` and versions held.
type Held<'a> = (&'a str, Option<u64>, &'a [(u64, VersionProgress)]);

fn report(node: &str, resources: &[Held]) -> NodeReport {
    NodeReport {
        node: node.into(),
        active: None,
        resources: resources
            .iter()
            .map(|(name, current, versions)| {
                (
                    name.to_string(),
                    ResourceReport {
                        current: *current,
                        versions: versions.iter().cloned().collect(),
                        ..ResourceReport::default()
                    },
                )
            })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn a_node_names_only_resources_that_exist() {
    let k = kit();
    let ok = report("c-0", &[("r", Some(2), &[(2, vp(true, true, None))])]);
    assert_eq!(check_report(&k.s, &ok), Ok(()));
    let unknown = report("c-0", &[("made-up-1", None, &[])]);
    let e = check_report(&k.s, &unknown).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.to_string().contains("made-up-1"), "{e}");
    assert!(e.to_string().contains("exist"), "{e}");
    let unsubscribed = report("c-0", &[("other", Some(1), &[])]);
    assert_eq!(
        check_report(&k.s, &unsubscribed),
        Ok(()),
        "a resource that exists, before any consumer of the node subscribes to it"
    );
    let e = precheck(&k.s, &Command::ReportNodes(vec![ok, unknown])).unwrap_err();
    assert!(e.to_string().contains("made-up-1"), "{e}");
}

#[test]
fn a_node_names_only_published_versions() {
    let k = kit();
    let held = report("c-0", &[("r", None, &[(3, vp(true, false, None))])]);
    let e = check_report(&k.s, &held).unwrap_err();
    assert!(
        e.to_string().contains("3") && e.to_string().contains("published"),
        "{e}"
    );
    let current = report("c-0", &[("r", Some(29_999), &[])]);
    assert!(check_report(&k.s, &current).is_err());
}

#[test]
fn a_long_error_is_cut_with_a_marker_and_an_uncut_one_refused() {
    let k = kit();
    let long = "x".repeat(200 * 1024);
    let mut r = report("c-0", &[("r", None, &[(2, vp(true, true, Some(&long)))])]);
    let e = check_report(&k.s, &r).unwrap_err();
    assert!(
        e.to_string().contains("204800 bytes") && e.to_string().contains("1024"),
        "{e}"
    );
    assert!(e.to_string().len() < 300, "{e}");
    assert_eq!(cut_errors(&mut r), 1);
    let error = r.resources["r"].versions[&2].error.clone().unwrap();
    assert_eq!(error.len(), MAX_ERROR_BYTES);
    assert!(error.ends_with(CUT_MARKER));
    assert_eq!(check_report(&k.s, &r), Ok(()));
    assert_eq!(cut_errors(&mut r), 0, "a cut error is not cut again");
}

#[test]
fn an_error_is_cut_at_a_character_boundary() {
    let mut r = report(
        "n",
        &[("r", None, &[(1, vp(true, true, Some(&"é".repeat(1_000))))])],
    );
    cut_errors(&mut r);
    let error = r.resources["r"].versions[&1].error.clone().unwrap();
    assert!(error.len() <= MAX_ERROR_BYTES && error.ends_with(CUT_MARKER));
}

#[test]
fn a_report_over_the_byte_budget_is_refused_naming_it() {
    let k = kit();
    let error = "e".repeat(MAX_ERROR_BYTES);
    let versions: Vec<(u64, VersionProgress)> =
        (0..80).map(|v| (v, vp(true, true, Some(&error)))).collect();
    let r = NodeReport {
        node: "unknown-node".into(),
        active: None,
        resources: BTreeMap::from([(
            "r".to_string(),
            ResourceReport {
                versions: versions.into_iter().collect(),
                ..ResourceReport::default()
            },
        )]),
        ..Default::default()
    };
    assert!(report_cost(&r) > MAX_REPORT_BYTES);
    let e = check_report(&k.s, &r).unwrap_err();
    assert!(e.to_string().contains(&MAX_REPORT_BYTES.to_string()), "{e}");
}

#[test]
fn a_node_the_state_does_not_know_is_checked_for_shape_only() {
    let k = kit();
    let r = report("new-node", &[("made-up", Some(7), &[])]);
    assert_eq!(check_report(&k.s, &r), Ok(()));
    let bad = report("new-node", &[("a/b", None, &[])]);
    assert!(check_report(&k.s, &bad).is_err());
    let bad_node = report("web-1/../api-1", &[]);
    assert!(check_report(&k.s, &bad_node).is_err());
}

#[test]
fn a_log_path_is_absolute_and_at_most_1024_bytes() {
    let k = kit();
    let with_log = |log: String| {
        let mut r = report("c-0", &[("r", Some(2), &[(2, vp(true, true, None))])]);
        r.resources.get_mut("r").unwrap().log = Some(log);
        r
    };
    let longest = format!("/{}", "x".repeat(MAX_LOG_PATH_BYTES - 1));
    assert_eq!(check_report(&k.s, &with_log(longest.clone())), Ok(()));
    assert_eq!(
        report_cost(&with_log(longest)),
        report_cost(&with_log(String::new())) + MAX_LOG_PATH_BYTES,
        "a log path counts against the report's budget"
    );
    let e = check_report(
        &k.s,
        &with_log(format!("/{}", "x".repeat(MAX_LOG_PATH_BYTES))),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    let said = e.to_string();
    assert!(
        said.contains("resources.r.log") && said.contains("1024 bytes"),
        "{said}"
    );
    assert!(said.len() < 300, "the error does not echo the path: {said}");
    for bad in ["logs/r.stdout.log", "/var/log/r\n.log", ""] {
        let e = check_report(&k.s, &with_log(bad.to_string())).unwrap_err();
        assert!(e.to_string().contains("absolute"), "{bad:?}: {e}");
    }
}
