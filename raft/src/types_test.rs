//! The log's payload keeps its bytes, and carries its command as one byte string.

use super::*;
use crate::codec;

/// A command whose bytes span every value (a `u8` never takes a varint's extra bytes).
fn command() -> Vec<u8> {
    (0..=255u8).cycle().take(1000).collect()
}

/// The fields of a proposal as they were encoded before the command became a byte string: a
/// plain `Vec<u8>`, which serde writes as a sequence of numbers.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct SequenceProposal {
    at_ms: u64,
    command: Vec<u8>,
}

#[test]
fn a_proposal_encodes_as_the_sequence_it_was() {
    let new = Proposal {
        at_ms: 1_700_000_000_000,
        command: command(),
    };
    let old = SequenceProposal {
        at_ms: new.at_ms,
        command: new.command.clone(),
    };
    let bytes = codec::encode(&new).unwrap();
    assert_eq!(bytes, codec::encode(&old).unwrap());
    assert_eq!(codec::decode::<SequenceProposal>(&bytes).unwrap(), old);
    assert_eq!(codec::decode::<Proposal>(&bytes).unwrap(), new);
}

#[test]
fn a_proposal_carries_its_command_as_one_byte_string() {
    let p = Proposal {
        at_ms: 5,
        command: vec![0, 7, 255],
    };
    // CBOR tells a byte string from a sequence of numbers (bincode writes both alike).
    let mut cbor = Vec::new();
    ciborium::into_writer(&p, &mut cbor).unwrap();
    let value: ciborium::Value = ciborium::from_reader(cbor.as_slice()).unwrap();
    let fields = value.into_map().unwrap();
    let (_, encoded) = fields
        .into_iter()
        .find(|(k, _)| k.as_text() == Some("command"))
        .unwrap();
    assert_eq!(encoded, ciborium::Value::Bytes(vec![0, 7, 255]));
}
