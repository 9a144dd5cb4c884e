//! Compression by magic bytes (input) or by name or choice (output): zstd,
//! gzip, xz.

#![allow(unused_imports)]

use super::*;

/// A compression wrapper around a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Zstd,
    Gzip,
    Xz,
}

impl Compression {
    /// Recognises a compressed stream by its first bytes.
    pub fn from_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
            Compression::Zstd
        } else if head.starts_with(&[0x1F, 0x8B]) {
            Compression::Gzip
        } else if head.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// Chooses compression from a file name's last extension.
    pub fn from_path(path: &str) -> Compression {
        let ext = Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("");
        match ext {
            "zst" | "zstd" => Compression::Zstd,
            "gz" => Compression::Gzip,
            "xz" => Compression::Xz,
            _ => Compression::None,
        }
    }

    /// Parses a user's choice: `none`, `zstd`, `gzip` or `xz`.
    pub fn parse(s: &str) -> Option<Compression> {
        Some(match s {
            "none" => Compression::None,
            "zstd" | "zst" => Compression::Zstd,
            "gzip" | "gz" => Compression::Gzip,
            "xz" => Compression::Xz,
            _ => return None,
        })
    }

    /// The compression's name, as `--compress` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Zstd => "zstd",
            Compression::Gzip => "gzip",
            Compression::Xz => "xz",
        }
    }

    /// The file name with the compression's extension removed.
    pub fn strip_extension(path: &str) -> &str {
        match Compression::from_path(path) {
            Compression::None => path,
            _ => path.rsplit_once('.').map_or(path, |(stem, _)| stem),
        }
    }
}
