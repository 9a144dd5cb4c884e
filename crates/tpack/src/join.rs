//! Joining tpack files block by block: blocks are independent (every
//! model starts afresh at a block, docs/formats/tpack.md), so the blocks
//! of several files, one after another behind one magic, are one file
//! holding each file's records in turn. Nothing is decoded; each block's
//! checksum is checked as it is copied, so damage is not carried into the
//! joined file unseen. A file's trailer is not copied (the joined file's
//! is made from its parts'; tramp-record's join does).

use std::io::{self, Read, Write};

use crate::{BLOCK_HEADER, BLOCK_MAGIC, MAGIC, MAX_BODY, TpackError, trailer};

/// What one file gave the joined one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Copied {
    pub blocks: u64,
    pub records: u64,
    /// The bytes its blocks take.
    pub bytes: u64,
}

/// Writes the magic that starts a joined file.
pub fn start(out: &mut impl Write) -> io::Result<()> {
    out.write_all(&MAGIC)
}

/// Copies the blocks of the version-5 tpack `input` to `out`, up to its
/// trailer or its end. A file of another version, a damaged block or a
/// block cut short is an error naming its byte offset.
pub fn copy_blocks(input: &mut impl Read, out: &mut impl Write) -> Result<Copied, TpackError> {
    let mut magic = [0u8; 8];
    input
        .read_exact(&mut magic)
        .map_err(|_| TpackError::BadMagic)?;
    if magic[..6] != MAGIC[..6] {
        return Err(TpackError::BadMagic);
    }
    if magic != MAGIC {
        return Err(TpackError::Version(magic[6]));
    }
    let mut copied = Copied::default();
    let mut at = 8u64;
    let mut body = Vec::new();
    loop {
        let mut h = [0u8; BLOCK_HEADER];
        let got = tramp_core::reading::fill(input, &mut h)?;
        if got == 0 {
            return Ok(copied);
        }
        if got < 4 || (h[..4] != BLOCK_MAGIC && h[..4] != trailer::MAGIC_TRAILER) {
            return Err(at_offset(at, TpackError::BlockMagic));
        }
        if h[..4] == trailer::MAGIC_TRAILER {
            return Ok(copied);
        }
        if got < BLOCK_HEADER {
            return Err(at_offset(at, TpackError::Truncated("in a block header")));
        }
        let records = u32::from_le_bytes(h[4..8].try_into().unwrap());
        let len = u32::from_le_bytes(h[8..12].try_into().unwrap());
        let crc = u32::from_le_bytes(h[12..16].try_into().unwrap());
        if len > MAX_BODY {
            return Err(at_offset(at, TpackError::BodyTooLarge(len)));
        }
        // Read as it arrives: a forged length asks for no memory the
        // input does not hold.
        body.clear();
        input.by_ref().take(u64::from(len)).read_to_end(&mut body)?;
        if body.len() < len as usize {
            return Err(at_offset(at, TpackError::Truncated("in a block body")));
        }
        let computed = crc32fast::hash(&body);
        if computed != crc {
            return Err(at_offset(
                at,
                TpackError::Checksum {
                    stored: crc,
                    computed,
                },
            ));
        }
        out.write_all(&h)?;
        out.write_all(&body)?;
        copied.blocks += 1;
        copied.records += u64::from(records);
        copied.bytes += (BLOCK_HEADER + body.len()) as u64;
        at += (BLOCK_HEADER + body.len()) as u64;
    }
}

/// The error, saying at which byte of its file the block starts.
fn at_offset(at: u64, e: TpackError) -> TpackError {
    TpackError::At {
        at,
        why: Box::new(e),
    }
}
