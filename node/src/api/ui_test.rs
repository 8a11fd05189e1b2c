//! The embedded files against the route table and each other.

use super::*;
use crate::api::auth::table::lookup;
use crate::api::routes as declared;
use convoy_actors::domain::Permission;

#[test]
fn every_asset_has_a_public_row_and_every_ui_row_an_asset() {
    for asset in ASSETS {
        let rule = lookup(declared(), "GET", asset.path).expect(asset.path);
        assert_eq!(rule.need, Permission::Public, "{}", asset.path);
        assert!(!asset.body.is_empty(), "{} is empty", asset.path);
    }
    for rule in declared().iter().filter(|r| r.pattern.starts_with("/ui/")) {
        assert!(
            ASSETS.iter().any(|a| a.path == rule.pattern),
            "{} is declared but not embedded",
            rule.pattern
        );
    }
}

#[test]
fn files_refer_only_to_embedded_files_and_nothing_remote() {
    for asset in ASSETS {
        for (quote, rest) in [("\"", asset.body), ("'", asset.body)] {
            for piece in rest.split(quote).skip(1).step_by(2) {
                if let Some(name) = piece.strip_prefix("./") {
                    let path = format!("/ui/{name}");
                    assert!(
                        ASSETS.iter().any(|a| a.path == path),
                        "{} refers to {piece}, which is not embedded",
                        asset.path
                    );
                }
                if piece.starts_with("/ui/") {
                    assert!(
                        ASSETS.iter().any(|a| a.path == piece),
                        "{} refers to {piece}, which is not embedded",
                        asset.path
                    );
                }
            }
        }
        for remote in ["https://", "//cdn", "<script src=\"http"] {
            assert!(
                !asset.body.contains(remote),
                "{} loads something remote ({remote})",
                asset.path
            );
        }
    }
}

#[actix_web::test]
async fn assets_are_served_with_their_type_and_a_strict_policy() {
    use actix_web::test as atest;
    let app = atest::init_service(
        actix_web::App::new().configure(|cfg| routes().iter().for_each(|r| r.register(cfg))),
    )
    .await;
    for asset in ASSETS {
        let resp =
            atest::call_service(&app, atest::TestRequest::get().uri(asset.path).to_request()).await;
        assert_eq!(resp.status(), 200, "{}", asset.path);
        let headers = resp.headers();
        assert_eq!(headers.get("content-type").unwrap(), asset.content_type);
        assert!(headers
            .get("content-security-policy")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("script-src 'self'"));
        assert_eq!(headers.get("x-content-type-options").unwrap(), "nosniff");
    }
    let resp = atest::call_service(&app, atest::TestRequest::get().uri("/").to_request()).await;
    assert_eq!(resp.status(), 302);
    assert_eq!(resp.headers().get("location").unwrap(), "/ui/");
}
