//! Length-prefixed bincode frames: a 4-byte big-endian length, then that many bytes of bincode.
//! Plain frames carry only the handshake ([`super::noise`]); every later frame is sealed
//! ([`super::sealed`]) and shares this module's caps and errors.
//!
//! The length is checked against the caller's cap before any buffer for the body is allocated or
//! any byte of it is read, so a hostile or corrupt prefix (say `0xFFFF_FFFF`) costs nothing. A
//! prefix under the cap is not trusted either: the body buffer grows with the bytes that actually
//! arrive, so announcing 64 MiB and sending 10 bytes costs a few KiB, not 64 MiB.

use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::codec::{self, CodecError};

/// The largest frame body the transport sends or accepts: 64 MiB, the codec's decode limit.
pub const MAX_FRAME_BYTES: u32 = 64 * 1024 * 1024;

const _: () = assert!(MAX_FRAME_BYTES as usize == codec::MAX_DECODE_BYTES);

/// Bodies up to this size are sent in one write together with their length prefix.
const COALESCE_BYTES: usize = 64 * 1024;

/// The first read buffer for a body; it doubles as bytes arrive, up to the announced length.
const FIRST_READ_BYTES: usize = 64 * 1024;

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The length prefix (or the encoded value) exceeds the cap; nothing of the body was read.
    #[error("frame of {len} bytes exceeds the cap of {max} bytes")]
    TooLarge {
        /// The announced (or encoded) body length.
        len: u64,
        /// The cap in force.
        max: u32,
    },
    /// The peer closed the connection cleanly between two frames.
    #[error("connection closed by peer")]
    Closed,
    /// The body is not a valid bincode value of the expected type.
    #[error("bad frame: {0}")]
    Codec(#[from] CodecError),
    /// Reading or writing the socket failed (reset, truncated frame, ...).
    #[error("frame i/o: {0}")]
    Io(#[from] std::io::Error),
    /// A sealed record failed to decrypt: modified, replayed, reordered, dropped or injected on
    /// the way, or sealed under other keys. The session is over.
    #[error("sealed frame failed authentication (tampered, replayed, reordered or foreign)")]
    Decrypt,
    /// Sealed records that decrypt but do not form a frame (a sender bug, or a hostile peer).
    #[error("malformed sealed frame: {0}")]
    BadRecord(&'static str),
    /// The session's cipher refused to seal a record (its nonce space is exhausted).
    #[error("cannot seal frame: {0}")]
    Seal(String),
}

/// Encodes `value` and writes it as one frame, then flushes.
///
/// Refuses (without writing anything) a value whose encoding exceeds [`MAX_FRAME_BYTES`].
pub async fn write_frame<W, T>(writer: &mut W, value: &T) -> Result<(), FrameError>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    let body = codec::encode(value)?;
    let len = u32::try_from(body.len())
        .ok()
        .filter(|len| *len <= MAX_FRAME_BYTES)
        .ok_or(FrameError::TooLarge {
            len: body.len() as u64,
            max: MAX_FRAME_BYTES,
        })?;
    let header = len.to_be_bytes();
    if body.len() <= COALESCE_BYTES {
        let mut buf = Vec::with_capacity(header.len() + body.len());
        buf.extend_from_slice(&header);
        buf.extend_from_slice(&body);
        writer.write_all(&buf).await?;
    } else {
        writer.write_all(&header).await?;
        writer.write_all(&body).await?;
    }
    writer.flush().await?;
    Ok(())
}

/// Reads one frame and decodes a `T` from it.
///
/// A length above `max` fails with [`FrameError::TooLarge`] before the body buffer is allocated
/// or read. A clean end of stream before the first byte of the prefix is [`FrameError::Closed`].
pub async fn read_frame<T, R>(reader: &mut R, max: u32) -> Result<T, FrameError>
where
    R: AsyncRead + Unpin,
    T: DeserializeOwned,
{
    let mut header = [0u8; 4];
    let first = reader.read(&mut header).await?;
    if first == 0 {
        return Err(FrameError::Closed);
    }
    reader.read_exact(&mut header[first..]).await?;
    let len = u32::from_be_bytes(header);
    let cap = max.min(MAX_FRAME_BYTES);
    if len > cap {
        return Err(FrameError::TooLarge {
            len: u64::from(len),
            max: cap,
        });
    }
    let body = read_body(reader, len as usize).await?;
    Ok(codec::decode(&body)?)
}

/// Reads exactly `len` bytes, growing the buffer only as bytes arrive (at most twice what was
/// received, plus [`FIRST_READ_BYTES`]). A stream that ends early is an `UnexpectedEof` error.
async fn read_body<R: AsyncRead + Unpin>(reader: &mut R, len: usize) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut filled = 0;
    while filled < len {
        if filled == body.len() {
            let grow = body.len().max(FIRST_READ_BYTES).min(len - body.len());
            body.reserve_exact(grow);
            body.resize(body.len() + grow, 0);
        }
        let n = reader.read(&mut body[filled..]).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        filled += n;
    }
    Ok(body)
}

#[cfg(test)]
#[path = "frame_fuzz_test.rs"]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(len: u32, body: &[u8]) -> Vec<u8> {
        let mut bytes = len.to_be_bytes().to_vec();
        bytes.extend_from_slice(body);
        bytes
    }

    #[tokio::test]
    async fn round_trips_small_and_large_values() {
        for value in [String::from("convoy"), "x".repeat(200_000)] {
            let mut wire = Vec::new();
            write_frame(&mut wire, &value).await.unwrap();
            assert_eq!(wire.len(), 4 + codec::encode(&value).unwrap().len());
            let mut reader = wire.as_slice();
            let back: String = read_frame(&mut reader, MAX_FRAME_BYTES).await.unwrap();
            assert_eq!(back, value);
            assert!(reader.is_empty());
        }
    }

    #[tokio::test]
    async fn oversized_prefix_is_refused_before_the_body_is_read() {
        // The body is present, yet must stay unread: only the 4 prefix bytes are consumed.
        let body = codec::encode(&"0123456789".to_string()).unwrap();
        let wire = framed(body.len() as u32, &body);
        let mut reader = wire.as_slice();
        let err = read_frame::<String, _>(&mut reader, body.len() as u32 - 1)
            .await
            .unwrap_err();
        assert!(
            matches!(err, FrameError::TooLarge { len, max } if len == body.len() as u64 && max == body.len() as u32 - 1),
            "{err}"
        );
        assert_eq!(reader.len(), body.len(), "the body must not be read");
    }

    #[tokio::test]
    async fn all_ones_prefix_is_refused_without_allocating() {
        // 0xFFFF_FFFF announces 4 GiB; with no body behind it, any attempt to read the body would
        // surface as an i/o error instead of TooLarge.
        let wire = framed(u32::MAX, &[]);
        let err = read_frame::<Vec<u8>, _>(&mut wire.as_slice(), MAX_FRAME_BYTES)
            .await
            .unwrap_err();
        assert!(
            matches!(err, FrameError::TooLarge { len, max } if len == u64::from(u32::MAX) && max == MAX_FRAME_BYTES),
            "{err}"
        );
        assert!(err.to_string().contains("4294967295"), "{err}");
    }

    #[tokio::test]
    async fn cap_above_the_global_cap_is_clamped() {
        let wire = framed(MAX_FRAME_BYTES + 1, &[]);
        let err = read_frame::<Vec<u8>, _>(&mut wire.as_slice(), u32::MAX)
            .await
            .unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { max, .. } if max == MAX_FRAME_BYTES));
    }

    #[tokio::test]
    async fn clean_eof_is_closed_and_truncation_is_io() {
        let empty: &[u8] = &[];
        assert!(matches!(
            read_frame::<String, _>(&mut &*empty, MAX_FRAME_BYTES).await,
            Err(FrameError::Closed)
        ));
        let truncated = framed(10, &[1, 2, 3]);
        assert!(matches!(
            read_frame::<String, _>(&mut truncated.as_slice(), MAX_FRAME_BYTES).await,
            Err(FrameError::Io(_))
        ));
        let half_prefix: &[u8] = &[0, 0];
        assert!(matches!(
            read_frame::<String, _>(&mut &*half_prefix, MAX_FRAME_BYTES).await,
            Err(FrameError::Io(_))
        ));
    }

    #[tokio::test]
    async fn garbage_body_is_a_codec_error() {
        let wire = framed(4, &[0xff, 0xff, 0xff, 0xff]);
        assert!(matches!(
            read_frame::<String, _>(&mut wire.as_slice(), MAX_FRAME_BYTES).await,
            Err(FrameError::Codec(_))
        ));
    }
}
