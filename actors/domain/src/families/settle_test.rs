//! `Ending::touch` on its own, over copies of a state's maps: an active deployment is only noted as
//! changed; a terminal one leaves every map that registers it, once.

use super::{Cx, Ending};
use crate::testing::*;
use crate::*;

#[test]
fn an_active_deployment_is_only_noted_and_a_terminal_one_unregistered_once() {
    let mut k = Kit::new(2);
    let id = k.start_with(|_| {});
    let mut consumers = k.s.consumer_map().clone();
    let mut nodes = k.s.node_table().clone();
    let mut deployments = k.s.deployment_map().clone();
    let mut active = k.s.active_set().clone();
    let mut cx = Cx::new(k.now);
    let mut ending = Ending {
        deployments: &mut deployments,
        active: &mut active,
        nodes: &mut nodes,
        consumers: &mut consumers,
    };
    ending.touch(id, &mut cx);
    assert!(cx.touched.contains(&id));
    assert!(cx.ended.is_empty(), "still active: nothing to settle");
    assert!(ending.active.contains(&id));

    let d = ending.deployments.get_mut(&id).expect("started");
    assert_eq!(d.abort(k.now, Actor::User, None), Ok(true));
    ending.touch(id, &mut cx);
    ending.touch(id, &mut cx);
    assert_eq!(cx.ended, vec![id], "queued once");
    assert_eq!(cx.outcome.ended().collect::<Vec<_>>(), vec![id]);
    assert!(!ending.active.contains(&id));
    assert!(!ending.consumers["c"].active.contains_key("r"));
    for n in ["c-0", "c-1"] {
        let ns = ending.nodes.get(n).expect("known node");
        assert!(ns.deployments.get(&id).is_none(), "{n} left it");
    }
}
