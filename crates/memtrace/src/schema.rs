//! The records of a memory-access trace: one type per access kind, each
//! with the address and the size in bytes (absent where the format has
//! none, as in din).

use std::sync::{Arc, OnceLock};

use tramp_core::{FieldDef, FieldType, RecordKind, RecordType, Role, Schema};

/// The schema's name (what `tramp dump` shows as the family).
pub const NAME: &str = "memtrace";

/// The record types, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// An instruction fetch (lackey `I`, din 2).
    Fetch = 0,
    /// A data read (lackey `L`, din 0).
    Load = 1,
    /// A data write (lackey `S`, din 1).
    Store = 2,
    /// A read then a write of the same bytes by one instruction (lackey `M`).
    Modify = 3,
    /// An access of unknown kind (din 3).
    Unknown = 4,
    /// A cache flush (din 4).
    Flush = 5,
}

impl Access {
    /// The record type of this access in [`schema`].
    pub fn record_type(self) -> &'static RecordType {
        &schema().types[self as usize]
    }
}

/// The memory-access schema: `fetch`, `load`, `store`, `modify`,
/// `unknown`, `flush`, each `address` (address role) and `size` (size
/// role).
pub fn schema() -> &'static Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let fields = || {
            vec![
                FieldDef::new("address", FieldType::U64, Some(Role::Address)),
                FieldDef::new("size", FieldType::U64, Some(Role::Size)),
            ]
        };
        let mut s = Schema::new(NAME);
        s.add_type("fetch", RecordKind::Fetch, fields());
        s.add_type("load", RecordKind::Load, fields());
        s.add_type("store", RecordKind::Store, fields());
        s.add_type("modify", RecordKind::Modify, fields());
        s.add_type("unknown", RecordKind::Other, fields());
        s.add_type("flush", RecordKind::Other, fields());
        s.shared()
    })
}

/// Reads a hexadecimal address (no `0x`, at most 16 digits).
#[inline]
pub(crate) fn hex(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &b in t {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

/// Reads a decimal size from 1 to 65535.
#[inline]
pub(crate) fn size(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 5 {
        return None;
    }
    let mut v = 0u64;
    for &b in t {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (b - b'0') as u64;
    }
    (1..=65535).contains(&v).then_some(v)
}
