use super::*;
use serde_json::json;

fn object(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn the_next_page_is_a_lists_next_offset_or_a_shows_page_next_offset() {
    assert_eq!(
        next_offset(&object(json!({"total": 9, "next_offset": 5}))),
        Some(5)
    );
    let show =
        json!({"name": "web", "page": {"total": 9, "offset": 0, "limit": 5, "next_offset": 5}});
    assert_eq!(next_offset(&object(show)), Some(5));
    assert_eq!(
        next_offset(&object(json!({"name": "web", "page": {"total": 3}}))),
        None
    );
    assert_eq!(next_offset(&object(json!({"name": "web"}))), None);
}

#[test]
fn a_show_cut_its_list_when_the_total_is_more_than_it_holds() {
    let c = json!({"subscriptions": {"a": {}}, "subscriptions_total": 2, "holds": [], "holds_total": 0});
    assert!(cut(&c, "subscriptions"));
    assert!(!cut(&c, "holds"));
    // A server from before the totals: nothing cut.
    assert!(!cut(&json!({"subscriptions": {}}), "subscriptions"));
}
