//! Sealed frames: after the handshake every frame travels encrypted and authenticated with the
//! session's Noise transport keys.
//!
//! A Noise message holds at most 65,535 bytes, so one logical frame (an AppendEntries batch or a
//! snapshot of tens of MiB) is a run of records, each a 2-byte big-endian length and that many
//! bytes of one Noise message. The first record's plaintext starts with the frame body's 4-byte
//! big-endian length, checked against the caller's cap (and [`MAX_FRAME_BYTES`]) before any
//! further record is read; the body then follows, [`MAX_RECORD_PLAINTEXT`] bytes per record.
//!
//! Each direction's messages carry an implicit counter (the Noise nonce), so a record that is
//! modified, replayed, reordered, dropped or injected fails to decrypt: [`FrameError::Decrypt`],
//! after which the session must be closed.

use serde::de::DeserializeOwned;
use serde::Serialize;
use snow::TransportState;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::frame::{FrameError, MAX_FRAME_BYTES};
use crate::codec;
use crate::types::NodeId;

/// The largest Noise message (a record's ciphertext), fixed by the Noise specification.
pub const MAX_RECORD: usize = 65_535;
/// The authentication tag each record's ciphertext carries.
pub const TAG_LEN: usize = 16;
/// The most plaintext one record carries.
pub const MAX_RECORD_PLAINTEXT: usize = MAX_RECORD - TAG_LEN;
/// Records are gathered into writes of about this size.
const WRITE_BATCH: usize = 256 * 1024;

/// One authenticated session: the Noise transport keys and the peer's proven server id.
pub struct Session {
    noise: TransportState,
    peer: NodeId,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session over `noise`'s keys with the peer that proved id `peer` in the handshake.
    pub fn new(noise: TransportState, peer: NodeId) -> Self {
        Self { noise, peer }
    }

    /// The server id the peer stated in its encrypted handshake message.
    pub fn peer(&self) -> NodeId {
        self.peer
    }

    /// Encodes `value` and writes it as one sealed frame, then flushes.
    ///
    /// Refuses (without writing anything) a value whose encoding exceeds [`MAX_FRAME_BYTES`].
    pub async fn write<W, T>(&mut self, writer: &mut W, value: &T) -> Result<(), FrameError>
    where
        W: AsyncWrite + Unpin,
        T: Serialize,
    {
        let body = codec::encode(value)?;
        self.write_body(writer, &body).await
    }

    /// Writes already encoded bytes as one sealed frame, then flushes (the handshake's
    /// confirmation, and tests that need a sealed frame holding garbage).
    pub async fn write_body<W>(&mut self, writer: &mut W, body: &[u8]) -> Result<(), FrameError>
    where
        W: AsyncWrite + Unpin,
    {
        let len = u32::try_from(body.len())
            .ok()
            .filter(|len| *len <= MAX_FRAME_BYTES)
            .ok_or(FrameError::TooLarge {
                len: body.len() as u64,
                max: MAX_FRAME_BYTES,
            })?;
        let mut first = Vec::with_capacity(MAX_RECORD_PLAINTEXT);
        first.extend_from_slice(&len.to_be_bytes());
        let head = body.len().min(MAX_RECORD_PLAINTEXT - first.len());
        first.extend_from_slice(&body[..head]);
        let records =
            std::iter::once(first.as_slice()).chain(body[head..].chunks(MAX_RECORD_PLAINTEXT));
        let mut out = Vec::with_capacity((body.len() + 64).min(WRITE_BATCH + 2 + MAX_RECORD));
        for plaintext in records {
            let start = out.len();
            out.resize(start + 2 + plaintext.len() + TAG_LEN, 0);
            let n = self
                .noise
                .write_message(plaintext, &mut out[start + 2..])
                .map_err(|e| FrameError::Seal(e.to_string()))?;
            out.truncate(start + 2 + n);
            out[start..start + 2].copy_from_slice(&(n as u16).to_be_bytes());
            if out.len() >= WRITE_BATCH {
                writer.write_all(&out).await?;
                out.clear();
            }
        }
        writer.write_all(&out).await?;
        writer.flush().await?;
        Ok(())
    }

    /// Reads one sealed frame and decodes a `T` from it.
    ///
    /// A body length above `max` fails with [`FrameError::TooLarge`] before any further record is
    /// read. A clean end of stream before the first byte is [`FrameError::Closed`].
    pub async fn read<R, T>(&mut self, reader: &mut R, max: u32) -> Result<T, FrameError>
    where
        R: AsyncRead + Unpin,
        T: DeserializeOwned,
    {
        let body = self.read_body(reader, max).await?;
        Ok(codec::decode(&body)?)
    }

    /// Reads one sealed frame's body bytes (see [`Session::read`]).
    pub async fn read_body<R>(&mut self, reader: &mut R, max: u32) -> Result<Vec<u8>, FrameError>
    where
        R: AsyncRead + Unpin,
    {
        let Some(first) = self.read_record(reader, true).await? else {
            return Err(FrameError::Closed);
        };
        if first.len() < 4 {
            return Err(FrameError::BadRecord(
                "first record shorter than the frame length",
            ));
        }
        let len = u32::from_be_bytes(first[..4].try_into().expect("4 bytes"));
        let cap = max.min(MAX_FRAME_BYTES);
        if len > cap {
            return Err(FrameError::TooLarge {
                len: u64::from(len),
                max: cap,
            });
        }
        let len = len as usize;
        // Grows with the records that actually arrive, never to the announced length at once.
        let mut body = Vec::with_capacity(len.min(MAX_RECORD));
        let mut chunk = first;
        chunk.drain(..4);
        loop {
            if body.len() + chunk.len() > len {
                return Err(FrameError::BadRecord(
                    "records hold more than the frame length",
                ));
            }
            body.extend_from_slice(&chunk);
            if body.len() == len {
                return Ok(body);
            }
            chunk = self
                .read_record(reader, false)
                .await?
                .expect("only the first record may be missing");
            if chunk.is_empty() {
                return Err(FrameError::BadRecord("empty record inside a frame"));
            }
        }
    }

    /// Reads and decrypts one record; returns its plaintext, or `None` on a clean end of stream
    /// before its first byte when `first`.
    async fn read_record<R>(
        &mut self,
        reader: &mut R,
        first: bool,
    ) -> Result<Option<Vec<u8>>, FrameError>
    where
        R: AsyncRead + Unpin,
    {
        let mut header = [0u8; 2];
        let got = reader.read(&mut header).await?;
        if got == 0 {
            if first {
                return Ok(None);
            }
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
        reader.read_exact(&mut header[got..]).await?;
        let size = usize::from(u16::from_be_bytes(header));
        if size < TAG_LEN {
            return Err(FrameError::Decrypt);
        }
        let mut record = vec![0u8; size];
        reader.read_exact(&mut record).await?;
        let mut plain = vec![0u8; size - TAG_LEN];
        let n = self
            .noise
            .read_message(&record, &mut plain)
            .map_err(|_| FrameError::Decrypt)?;
        plain.truncate(n);
        Ok(Some(plain))
    }
}

#[cfg(test)]
#[path = "sealed_test.rs"]
mod tests;
