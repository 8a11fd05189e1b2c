//! The one place bincode is used: encode and decode with a size limit, so it can be swapped.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The largest message the codec will decode (and the transport will accept): 64 MiB.
pub const MAX_DECODE_BYTES: usize = 64 * 1024 * 1024;

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
    fn refuses_garbage_and_huge_lengths() {
        assert!(decode::<String>(&[0xff, 0xff, 0xff, 0xff]).is_err());
        // A Vec claiming u64::MAX elements must fail without allocating it.
        let mut bytes = vec![0xfd];
        bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode::<Vec<u64>>(&bytes).is_err());
    }
}
