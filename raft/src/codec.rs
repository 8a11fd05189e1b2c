//! The one place bincode is used: encode and decode with a size limit, so it can be swapped.

use std::io::{Read, Write};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The largest message the codec will decode (and the transport will accept): 64 MiB.
pub const MAX_DECODE_BYTES: usize = 64 * 1024 * 1024;

/// The largest state a snapshot may hold, and the most [`decode_from`] will read: 16 GiB.
///
/// Snapshots never go through [`decode`] and its [`MAX_DECODE_BYTES`]: they are written and read
/// as streams of chunks (see [`crate::sm_store`]). At ~126 encoded bytes per fleet node, 16 GiB
/// is well over 100 million nodes; 10 million nodes are ~1.3 GB. The bound only stops a corrupt
/// or hostile length from making a server read forever.
pub const MAX_SNAPSHOT_BYTES: usize = 16 * 1024 * 1024 * 1024;

/// Why a value could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// Encoding failed (a type serde cannot express in bincode).
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// The type being encoded.
        what: &'static str,
        /// bincode's reason.
        source: bincode::error::EncodeError,
    },
    /// The bytes are not a valid value, or would exceed the size limit.
    #[error("cannot decode {what} from {len} bytes: {source}")]
    Decode {
        /// The type being decoded.
        what: &'static str,
        /// How many bytes were offered.
        len: usize,
        /// bincode's reason.
        source: bincode::error::DecodeError,
    },
    /// A stream does not hold a valid value, or would exceed [`MAX_SNAPSHOT_BYTES`].
    #[error("cannot decode {what} from a stream: {source}")]
    DecodeStream {
        /// The type being decoded.
        what: &'static str,
        /// bincode's reason.
        source: bincode::error::DecodeError,
    },
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_DECODE_BYTES>()
}

/// Encodes `value` with bincode (standard config).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    bincode::serde::encode_to_vec(value, config()).map_err(|source| CodecError::Encode {
        what: std::any::type_name::<T>(),
        source,
    })
}

/// Decodes a `T` from `bytes`, refusing anything that would allocate past [`MAX_DECODE_BYTES`].
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(value, _)| value)
        .map_err(|source| CodecError::Decode {
            what: std::any::type_name::<T>(),
            len: bytes.len(),
            source,
        })
}

fn stream_config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_SNAPSHOT_BYTES>()
}

/// Encodes `value` with bincode (standard config, the same bytes as [`encode`]) into `out`;
/// returns how many bytes were written. For snapshots: nothing is buffered whole.
pub fn encode_into<T: Serialize>(value: &T, out: &mut dyn Write) -> Result<usize, CodecError> {
    bincode::serde::encode_into_std_write(value, &mut { out }, stream_config()).map_err(|source| {
        CodecError::Encode {
            what: std::any::type_name::<T>(),
            source,
        }
    })
}

/// Decodes a `T` from `input` (as written by [`encode_into`]), refusing anything that would
/// read or allocate past [`MAX_SNAPSHOT_BYTES`]. Reads only the value's bytes.
pub fn decode_from<T: DeserializeOwned>(input: &mut dyn Read) -> Result<T, CodecError> {
    bincode::serde::decode_from_std_read(&mut { input }, stream_config()).map_err(|source| {
        CodecError::DecodeStream {
            what: std::any::type_name::<T>(),
            source,
        }
    })
}

/// `#[serde(with = "codec::bytes")]` for a `Vec<u8>`: one byte string instead of serde's sequence of
/// `u8`s. bincode writes the same bytes for both (a `u8` is one byte, both lengths the same varint), but
/// reads and writes a byte string in one copy instead of one call per byte. Decoding asks for borrowed
/// bytes, so from a buffer ([`decode`]) nothing is allocated before the bytes are known to be there (a
/// claimed length is never reserved up front: `serde_bytes` reserves it, which the frame allocation
/// tests refuse); a stream ([`decode_from`]) reads them into one buffer under its limit.
pub mod bytes {
    use std::fmt;

    use serde::de::{SeqAccess, Visitor};
    use serde::{Deserializer, Serializer};

    /// Writes `bytes` as one byte string.
    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(bytes)
    }

    /// Reads a byte string (or, from a format without them, a sequence of `u8`s).
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        deserializer.deserialize_bytes(ByteString)
    }

    struct ByteString;

    impl<'de> Visitor<'de> for ByteString {
        type Value = Vec<u8>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a byte string")
        }

        fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }

        fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(v)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            // As serde's own `Vec` visitor: never reserve more than 1 MiB on a claimed length.
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024 * 1024));
            while let Some(b) = seq.next_element()? {
                out.push(b);
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_a_value() {
        let v = (7u64, String::from("convoy"), vec![1u8, 2, 3]);
        let bytes = encode(&v).unwrap();
        assert_eq!(decode::<(u64, String, Vec<u8>)>(&bytes).unwrap(), v);
    }

    #[test]
    fn streams_the_same_bytes_as_a_buffer() {
        let v = (7u64, String::from("convoy"), vec![1u8, 2, 3]);
        let mut out = Vec::new();
        let written = encode_into(&v, &mut out).unwrap();
        assert_eq!(written, out.len());
        assert_eq!(out, encode(&v).unwrap());
        let back: (u64, String, Vec<u8>) = decode_from(&mut out.as_slice()).unwrap();
        assert_eq!(back, v);
        assert!(decode_from::<(u64, String, Vec<u8>)>(&mut &out[..out.len() - 1]).is_err());
    }

    #[test]
    fn refuses_garbage_and_huge_lengths() {
        assert!(decode::<String>(&[0xff, 0xff, 0xff, 0xff]).is_err());
        // A Vec claiming u64::MAX elements must fail without allocating it.
        let mut bytes = vec![0xfd];
        bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode::<Vec<u64>>(&bytes).is_err());
    }
}
