//! What each role is told it may do.

use super::*;
use crate::api::routes;
use convoy_actors::domain::Permission;

fn may(role: Role, method: &str, pattern: &str) -> bool {
    allowed(routes(), role)
        .iter()
        .any(|a| a.method == method && a.pattern == pattern)
}

#[test]
fn each_role_is_told_exactly_the_rows_it_is_granted() {
    for role in Role::ALL {
        let told = allowed(routes(), role);
        let granted = routes().iter().filter(|r| role.grants(r.need)).count();
        assert_eq!(told.len(), granted, "{role}");
        assert!(may(role, "GET", "/v1/whoami"), "{role} may ask who it is");
    }
}

#[test]
fn the_dashboards_buttons_follow_the_role() {
    let steer = ("POST", "/v1/deployments/{id}/pause");
    let pulse = ("POST", "/v1/deployments/{id}/pulse");
    assert!(may(Role::Operator, steer.0, steer.1) && may(Role::Operator, pulse.0, pulse.1));
    assert!(!may(Role::Reader, steer.0, steer.1) && !may(Role::Reader, pulse.0, pulse.1));
    assert!(!may(Role::Pulser, steer.0, steer.1) && may(Role::Pulser, pulse.0, pulse.1));
    assert!(allowed(routes(), Role::Reader)
        .iter()
        .all(|a| a.method == "GET"));
}

#[test]
fn with_auth_off_the_caller_is_user_and_may_do_everything() {
    let who = describe(routes(), &Caller::Anonymous, AuthMode::Off);
    assert_eq!(
        (who.name.as_str(), who.role, who.auth),
        ("user", Role::Admin, "off")
    );
    assert_eq!(who.allowed.len(), routes().len());
    assert!(routes().iter().any(|r| r.need == Permission::Authenticated));
}
