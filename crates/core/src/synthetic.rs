//! Addresses for traces that have none (heaptrack's interpreted file,
//! wee_alloc's traces): a size-class allocator of tramp's own. A block
//! takes its size rounded up to 16 bytes; a freed block's address goes to
//! the next block of its class, most recent first, else the next bytes
//! from [`FIRST_ADDRESS`] up. No two live blocks share an address, and the
//! addresses stay as compact as a real heap's (a reader that never reused
//! one made the statistics' window of freed addresses grow to its limit:
//! docs/formats/heaptrack.md).

use rustc_hash::FxHashMap;

/// Where synthetic addresses start.
pub const FIRST_ADDRESS: u64 = 0x1000_0000;
/// The comment that marks a trace whose addresses are made up (`tramp
/// replay` and `tramp cachesim` refuse such traces unless told).
pub const SYNTHETIC_NOTE: &str = "tramp:addresses synthetic";
/// Size classes (of 16 bytes) whose free lists are kept by index.
const SMALL_CLASSES: usize = 4096;

/// The bytes a synthetic block takes: its size rounded up to 16 (at least
/// 16).
pub fn size_class(size: u64) -> u64 {
    size.max(1).saturating_add(15) & !15
}

/// The allocator.
#[derive(Debug)]
pub struct SyntheticAddresses {
    next: u64,
    /// Freed addresses by class: small classes by index, larger hashed.
    free: Vec<Vec<u64>>,
    free_large: FxHashMap<u64, Vec<u64>>,
}

impl Default for SyntheticAddresses {
    fn default() -> Self {
        SyntheticAddresses {
            next: FIRST_ADDRESS,
            free: Vec::new(),
            free_large: FxHashMap::default(),
        }
    }
}

impl SyntheticAddresses {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn list(&mut self, class: u64) -> &mut Vec<u64> {
        let i = (class / 16) as usize;
        if i < SMALL_CLASSES {
            if self.free.len() <= i {
                self.free.resize_with(i + 1, Vec::new);
            }
            &mut self.free[i]
        } else {
            self.free_large.entry(class).or_default()
        }
    }

    /// An address for a block of `size` bytes (`None`: 64 bits ran out).
    #[inline]
    pub fn alloc(&mut self, size: u64) -> Option<u64> {
        let class = size_class(size);
        if let Some(a) = self.list(class).pop() {
            return Some(a);
        }
        let a = self.next;
        self.next = a.checked_add(class)?;
        Some(a)
    }

    /// The block of `size` bytes at `address` is free again.
    #[inline]
    pub fn free(&mut self, address: u64, size: u64) {
        self.list(size_class(size)).push(address);
    }

    /// An address no block ever had (for the free of a block never seen).
    pub fn fresh(&mut self) -> Option<u64> {
        let a = self.next;
        self.next = a.checked_add(16)?;
        Some(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_addresses_go_to_the_next_block_of_their_class() {
        let mut s = SyntheticAddresses::new();
        let a = s.alloc(10).unwrap();
        let b = s.alloc(20).unwrap();
        assert_eq!((a, b), (FIRST_ADDRESS, FIRST_ADDRESS + 16));
        s.free(a, 10);
        // 24 bytes is another class: fresh bytes.
        assert_eq!(s.alloc(24), Some(FIRST_ADDRESS + 48));
        assert_eq!(s.alloc(16), Some(a));
        s.free(b, 20);
        s.free(FIRST_ADDRESS + 48, 24);
        assert_eq!(s.alloc(32), Some(FIRST_ADDRESS + 48));
        assert_eq!(s.alloc(1 << 20), Some(FIRST_ADDRESS + 80));
    }
}
