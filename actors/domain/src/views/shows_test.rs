use crate::testing::*;
use crate::*;

#[test]
fn a_resource_show_pages_its_versions_each_once() {
    let mut k = Kit::new(1);
    for _ in 0..5 {
        k.publish(vec![]);
    }
    // 7 versions: pages of 3 from 0, then 3, then 6 (the last, without a next offset).
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let show = k.s.resource_show("r", offset, 3).unwrap();
        assert_eq!(
            (show.page.total, show.page.offset, show.page.limit),
            (7, offset, 3)
        );
        seen.extend(show.versions.iter().map(|v| v.version));
        match show.page.next_offset {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(seen, (1..=7).collect::<Vec<u64>>());
    // The whole resource is the same versions; past the end is an empty page; a missing one is none.
    let all = k.s.resource("r").unwrap();
    assert_eq!(
        k.s.resource_show("r", 0, 1_000).unwrap().versions,
        all.versions
    );
    let past = k.s.resource_show("r", 50, 3).unwrap();
    assert!(past.versions.is_empty() && past.page.next_offset.is_none());
    assert!(k.s.resource_show("nope", 0, 3).is_none());
}

#[test]
fn a_consumer_show_pages_its_nodes_and_cuts_its_subscriptions_with_their_count() {
    let mut k = Kit::new(250);
    for i in 0..120 {
        let r = format!("r-{i:03}");
        k.ok(Command::CreateResource { name: r.clone() });
        k.subscribe("c", &r, Mode::Weak, None);
    }
    let page = k.s.consumer_show("c", 100, 100).unwrap();
    assert_eq!(
        page.consumer.nodes.first().map(String::as_str),
        Some("c-100")
    );
    assert_eq!(page.consumer.nodes.len(), 100);
    assert_eq!(page.page.next_offset, Some(200));
    let last = k.s.consumer_show("c", 200, 100).unwrap();
    assert_eq!(last.consumer.nodes.len(), 50);
    assert_eq!(last.page.next_offset, None);
    assert_eq!(last.page.total, 250);
    // 120 subscriptions: the first 100 by resource, and the count.
    assert_eq!(page.subscriptions_total, 120);
    assert_eq!(page.consumer.subscriptions.len(), DEFAULT_PAGE);
    assert!(page.consumer.subscriptions.contains_key("r-000"));
    assert!(!page.consumer.subscriptions.contains_key("r-119"));
    assert_eq!(page.holds_total, 0);
    // A page's subscriptions are the whole consumer's, as it shows them.
    let whole = k.s.consumer("c").unwrap();
    assert_eq!(
        page.consumer.subscriptions["r-042"],
        whole.subscriptions["r-042"]
    );
    // Beside the consumer's own fields in JSON.
    let json = serde_json::to_value(&page).unwrap();
    assert_eq!(json["page"]["total"], 250);
    assert_eq!(json["subscriptions_total"], 120);
    assert_eq!(json["name"], "c");
    assert!(k.s.consumer_show("nope", 0, 1).is_none());
}

#[test]
fn a_consumers_subscriptions_and_holds_page_as_lists_do() {
    let mut k = Kit::new(1);
    for i in 0..7 {
        let r = format!("r-{i}");
        k.ok(Command::CreateResource { name: r.clone() });
        k.subscribe("c", &r, Mode::Strong, None);
    }
    let first = k.s.subscriptions_page("c", 0, 5).unwrap();
    let rest = k.s.subscriptions_page("c", 5, 5).unwrap();
    assert_eq!((first.total, first.paging(0, 5).next_offset), (7, Some(5)));
    assert_eq!(rest.paging(5, 5).next_offset, None);
    let names: Vec<String> = first
        .items
        .iter()
        .chain(&rest.items)
        .map(|e| e.resource.clone())
        .collect();
    let want: Vec<String> = (0..7).map(|i| format!("r-{i}")).collect();
    assert_eq!(names, want);
    let whole = k.s.consumer("c").unwrap();
    assert_eq!(first.items[2].subscription, whole.subscriptions["r-2"]);
    let json = serde_json::to_value(&first.items[0]).unwrap();
    assert_eq!(
        (json["resource"].clone(), json["mode"].clone()),
        ("r-0".into(), "strong".into())
    );
    assert_eq!(k.s.holds_page("c", 0, 5).unwrap().total, 0);
    assert!(
        k.s.subscriptions_page("nope", 0, 5).is_none() && k.s.holds_page("nope", 0, 5).is_none()
    );
}
