//! Which nodes an agent token may report for beyond its glob: a token bound to consumers reports only
//! for nodes whose every consumer is one of them (a glob such as `web-*` also matches `web-db-1` of
//! consumer `db`).

use super::{clip, Caller};
use crate::api::error::ApiError;

impl Caller {
    /// 403 unless this caller may report for `node`, whose consumers in this server's state are
    /// `consumers` (anybody may with auth off; tokens not bound to consumers are not checked here).
    pub fn check_report_scope(&self, node: &str, consumers: &[String]) -> Result<(), ApiError> {
        match self {
            Caller::Anonymous => Ok(()),
            Caller::Token(t) if t.may_report_in(consumers.iter().map(String::as_str)) => Ok(()),
            Caller::Token(t) => Err(ApiError::Forbidden(format!(
                "token {:?} ({}) may not report for node {:?} of consumers {}: it is bound to {}",
                t.name,
                t.role,
                clip(node),
                clip(&consumers.join(", ")),
                clip(&t.consumers.join(", "))
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use convoy_actors::domain::{Actor, Role, Token};

    fn agent(consumers: &[&str]) -> Caller {
        Caller::Token(Token {
            name: "a".into(),
            role: Role::Agent,
            nodes: Some("web-*".into()),
            hash: [0; 32],
            created_at: 0,
            created_by: Actor::System,
            expires_at: None,
            consumers: consumers.iter().map(|c| c.to_string()).collect(),
        })
    }

    #[test]
    fn a_bound_token_reports_only_for_nodes_of_its_consumers() {
        let web = agent(&["web"]);
        assert_eq!(web.check_report_scope("web-1", &["web".into()]), Ok(()));
        let e = web
            .check_report_scope("web-db-1", &["db".into()])
            .unwrap_err();
        assert!(
            matches!(e, ApiError::Forbidden(ref m) if m.contains("db")),
            "{e}"
        );
        assert!(
            web.check_report_scope("web-2", &["web".into(), "db".into()])
                .is_err(),
            "a node also in db"
        );
        assert_eq!(web.check_report_scope("web-9", &[]), Ok(()), "unknown here");
        assert_eq!(
            agent(&[]).check_report_scope("web-db-1", &["db".into()]),
            Ok(())
        );
    }
}
