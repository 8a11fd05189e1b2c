use super::*;

const FACTS: [Fact; 7] = [
    Fact::Have,
    Fact::Ok,
    Fact::Fail,
    Fact::Done,
    Fact::BackOk,
    Fact::BackFail,
    Fact::Current,
];

/// Every set of facts, built from its bits.
fn every_set() -> impl Iterator<Item = (u8, Seen)> {
    (0u8..128).map(|bits| {
        let set = FACTS
            .iter()
            .filter(|f| bits & **f as u8 != 0)
            .fold(Seen::NOTHING, |s, f| s.with(*f));
        (bits, set)
    })
}

#[test]
fn a_set_encodes_as_the_byte_it_replaced() {
    // Snapshots and the log held `seen: u8` with these bits: the typed set must keep their bytes.
    let config = bincode::config::standard();
    for (bits, set) in every_set() {
        let before = bincode::serde::encode_to_vec(bits, config).unwrap();
        let after = bincode::serde::encode_to_vec(set, config).unwrap();
        assert_eq!(after, before, "bits {bits:#09b}");
        let (back, _): (Seen, usize) = bincode::serde::decode_from_slice(&before, config).unwrap();
        assert_eq!(back, set);
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            serde_json::to_string(&bits).unwrap()
        );
    }
}

#[test]
fn facts_are_distinct_and_membership_is_exact() {
    for (bits, set) in every_set() {
        for f in FACTS {
            assert_eq!(set.has(f), bits & f as u8 != 0, "{f:?} in {bits:#09b}");
        }
        assert_eq!(
            set.any(&[Fact::Fail, Fact::BackFail]),
            set.has(Fact::Fail) || set.has(Fact::BackFail)
        );
    }
    assert!(!Seen::NOTHING.any(&FACTS));
}
