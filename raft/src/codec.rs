//! The one place bincode is used: encode and decode with a size limit, so it can be swapped.

use std::io::{BufReader, BufWriter, Read, Write};

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
    /// A stream held more bytes after the value (at least `bytes`): it is not one value.
    #[error("a stream of {what} goes on for at least {bytes} bytes after the value")]
    Trailing {
        /// The type decoded.
        what: &'static str,
        /// The bytes read past the value.
        bytes: usize,
    },
}

/// What [`decode_from`] reads from its stream at a time.
const STREAM_BUFFER_BYTES: usize = 64 * 1024;

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
    let what = std::any::type_name::<T>();
    // Written in blocks: through `dyn Write`, a call per field was most of a snapshot's encode.
    let mut buffered = BufWriter::with_capacity(STREAM_BUFFER_BYTES, out);
    let written = bincode::serde::encode_into_std_write(value, &mut buffered, stream_config())
        .map_err(|source| CodecError::Encode { what, source })?;
    buffered.flush().map_err(|e| CodecError::Encode {
        what,
        source: bincode::error::EncodeError::Io {
            inner: e,
            index: written,
        },
    })?;
    Ok(written)
}

/// Decodes a `T` from `input` (as written by [`encode_into`]), refusing anything that would
/// read or allocate past [`MAX_SNAPSHOT_BYTES`]. The value must be the rest of the stream: `input`
/// is read ahead in blocks (decoding through `dyn Read` a few bytes per call was most of a snapshot's
/// decode), and bytes read past the value are refused ([`CodecError::Trailing`]); bytes past the value
/// that were not read ahead are left in `input`, for the caller's own check.
pub fn decode_from<T: DeserializeOwned>(input: &mut dyn Read) -> Result<T, CodecError> {
    let what = std::any::type_name::<T>();
    let mut buffered = BufReader::with_capacity(STREAM_BUFFER_BYTES, input);
    let value = bincode::serde::decode_from_reader(&mut buffered, stream_config())
        .map_err(|source| CodecError::DecodeStream { what, source })?;
    match buffered.buffer().len() {
        0 => Ok(value),
        bytes => Err(CodecError::Trailing { what, bytes }),
    }
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
    fn a_stream_going_on_after_the_value_is_refused() {
        let v = (7u64, String::from("convoy"));
        let mut out = encode(&v).unwrap();
        out.extend_from_slice(b"more");
        let e = decode_from::<(u64, String)>(&mut out.as_slice()).unwrap_err();
        assert!(matches!(e, CodecError::Trailing { bytes: 4, .. }), "{e}");
    }

    #[test]
    fn a_stream_larger_than_the_read_ahead_decodes() {
        let v: Vec<String> = (0..20_000).map(|i| format!("node-{i}")).collect();
        let mut out = Vec::new();
        encode_into(&v, &mut out).unwrap();
        assert!(out.len() > 2 * STREAM_BUFFER_BYTES);
        let back: Vec<String> = decode_from(&mut out.as_slice()).unwrap();
        assert_eq!(back, v);
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
