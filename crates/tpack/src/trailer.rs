//! The trailer a version-5 tpack may end with: one opaque document after
//! the last block (a recording's profile index; its content is
//! tramp-index's), framed so that a sequential reader knows it is not a
//! block and a reader of a file finds it from the end:
//!
//! ```text
//! trailer = "TPKI" body_len:u32 crc32:u32 records:u64 body footer
//! footer  = trailer_len:u64 "tpackidx"        ; trailer_len = 20 + body_len
//! ```
//!
//! `records` is how many records the blocks before it hold: a trailer that
//! does not count them is not this file's.

use std::io::{self, Read, Seek, SeekFrom, Write};

use crate::{BLOCK_HEADER, BLOCK_MAGIC, MAGIC, TpackError};

/// The magic of the trailer's header.
pub const MAGIC_TRAILER: [u8; 4] = *b"TPKI";
/// Bytes of the trailer's header: magic, body length, CRC-32, records.
pub const HEADER: usize = 20;
/// The magic that ends a file with a trailer.
pub const MAGIC_FOOTER: [u8; 8] = *b"tpackidx";
/// Bytes of the footer: the trailer's length and the magic.
pub const FOOTER: usize = 16;
/// The first format version with a trailer.
pub const SINCE: u8 = 5;
/// The largest trailer body a reader takes.
pub const MAX_TRAILER: u32 = 1 << 30;

/// Writes the trailer of `records` records' blocks holding `body`.
pub fn write(out: &mut impl Write, records: u64, body: &[u8]) -> io::Result<()> {
    let len = u32::try_from(body.len())
        .ok()
        .filter(|&l| l <= MAX_TRAILER)
        .ok_or_else(|| io::Error::other("the trailer is larger than 1 GiB"))?;
    let mut header = [0u8; HEADER];
    header[..4].copy_from_slice(&MAGIC_TRAILER);
    header[4..8].copy_from_slice(&len.to_le_bytes());
    header[8..12].copy_from_slice(&crc32fast::hash(body).to_le_bytes());
    header[12..20].copy_from_slice(&records.to_le_bytes());
    out.write_all(&header)?;
    out.write_all(body)?;
    out.write_all(&(HEADER as u64 + u64::from(len)).to_le_bytes())?;
    out.write_all(&MAGIC_FOOTER)
}

/// A trailer's header, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub body_len: u32,
    pub crc: u32,
    pub records: u64,
}

impl Header {
    /// Parses the 20 bytes at a block boundary that start with
    /// [`MAGIC_TRAILER`].
    pub fn parse(h: &[u8; HEADER]) -> Result<Header, TpackError> {
        let body_len = u32::from_le_bytes(h[4..8].try_into().unwrap());
        if body_len > MAX_TRAILER {
            return Err(TpackError::Trailer(format!(
                "claims a body of {body_len} bytes (at most 1 GiB)"
            )));
        }
        Ok(Header {
            body_len,
            crc: u32::from_le_bytes(h[8..12].try_into().unwrap()),
            records: u64::from_le_bytes(h[12..20].try_into().unwrap()),
        })
    }
}

/// Checks a footer read after a trailer of `body_len` bytes.
pub fn check_footer(f: &[u8; FOOTER], body_len: u32) -> Result<(), TpackError> {
    let len = u64::from_le_bytes(f[..8].try_into().unwrap());
    if f[8..] != MAGIC_FOOTER || len != HEADER as u64 + u64::from(body_len) {
        return Err(TpackError::Trailer("its footer is damaged".into()));
    }
    Ok(())
}

/// What [`find`] found at the end of a file.
pub enum Found {
    /// The trailer's body, its checksum and record count checked.
    Trailer(Vec<u8>),
    /// The file has none (an older version, a converted trace, a recording
    /// cut short).
    None,
    /// Its blocks' headers do not lead to one: damage, or not one file
    /// (the reason).
    Unreachable(String),
}

/// Finds a seekable tpack's trailer by walking its block headers (16
/// bytes read per block, its body skipped by seeking: milliseconds for a
/// file of gigabytes), counting their records against the trailer's.
/// Block bodies are not read, so their checksums are not checked.
pub fn find<F: Read + Seek>(file: &mut F) -> Result<Found, TpackError> {
    let size = file.seek(SeekFrom::End(0))?;
    file.seek(SeekFrom::Start(0))?;
    let mut magic = [0u8; 8];
    if size < 8 || file.read_exact(&mut magic).is_err() || magic[..6] != MAGIC[..6] {
        return Err(TpackError::BadMagic);
    }
    if magic[6] < SINCE {
        return Ok(Found::None);
    }
    let (mut at, mut records) = (8u64, 0u64);
    loop {
        if at == size {
            return Ok(Found::None);
        }
        let mut h = [0u8; HEADER];
        if size - at < BLOCK_HEADER as u64 {
            return Ok(Found::Unreachable(format!(
                "a partial block header at byte {at}"
            )));
        }
        file.read_exact(&mut h[..BLOCK_HEADER])?;
        if h[..4] == BLOCK_MAGIC {
            records += u64::from(u32::from_le_bytes(h[4..8].try_into().unwrap()));
            let len = u64::from(u32::from_le_bytes(h[8..12].try_into().unwrap()));
            at += BLOCK_HEADER as u64 + len;
            if at > size {
                return Ok(Found::None);
            }
            file.seek(SeekFrom::Start(at))?;
            continue;
        }
        if h[..4] != MAGIC_TRAILER {
            return Ok(Found::Unreachable(format!(
                "no block or index at byte {at}"
            )));
        }
        if size - at < (HEADER + FOOTER) as u64 {
            return Ok(Found::Unreachable(format!(
                "the index at byte {at} is cut short"
            )));
        }
        file.read_exact(&mut h[BLOCK_HEADER..])?;
        let header = match Header::parse(&h) {
            Ok(h) => h,
            Err(e) => return Ok(Found::Unreachable(format!("the index at byte {at} {e}"))),
        };
        let end = at + (HEADER + FOOTER) as u64 + u64::from(header.body_len);
        if end != size {
            return Ok(Found::Unreachable(format!(
                "the index at byte {at} does not end the file ({} bytes, the file {size})",
                end - at
            )));
        }
        if header.records != records {
            return Ok(Found::Unreachable(format!(
                "the index at byte {at} is of {} records, the blocks hold {records}",
                header.records
            )));
        }
        let mut body = vec![0u8; header.body_len as usize];
        file.read_exact(&mut body)?;
        let mut footer = [0u8; FOOTER];
        file.read_exact(&mut footer)?;
        if let Err(e) = check_footer(&footer, header.body_len) {
            return Ok(Found::Unreachable(format!("the index at byte {at}: {e}")));
        }
        let computed = crc32fast::hash(&body);
        if computed != header.crc {
            return Ok(Found::Unreachable(format!(
                "the index at byte {at}: {}",
                TpackError::Checksum {
                    stored: header.crc,
                    computed
                }
            )));
        }
        return Ok(Found::Trailer(body));
    }
}
