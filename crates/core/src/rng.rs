//! The one random generator of tramp: SplitMix64 (Steele, Lea and Flood
//! 2014), and its finalizer as a hash ([`mix`]). Small, fast, and the same
//! stream on every platform, so a workload is a pure function of its seed;
//! the cache simulator's SHARDS sampling and the command language's arrays
//! hash ids with the finalizer, and hash tables of spread keys use
//! [`fibonacci`]. The file has no dependencies: the capture library, which
//! has none, includes it by `#[path]`.

/// 2^64 divided by the golden ratio, odd: SplitMix64's increment and the
/// multiplier of Fibonacci hashing.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// Fibonacci hashing: the top `bits` bits (1 to 64) of `x · 2^64/φ`, a
/// table slot for keys that are themselves well spread (addresses, ids).
#[inline(always)]
pub fn fibonacci(x: u64, bits: u32) -> u64 {
    x.wrapping_mul(GOLDEN) >> (64 - bits)
}

/// SplitMix64's finalizer: a bijective 64-bit mix.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A SplitMix64 stream.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream that starts after `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// A number in `0..n` (`0` when `n` is 0). Modulo reduction: the bias is
    /// below 2⁻⁴⁰ for the bounds the workloads use, and keeping it keeps
    /// every published sample and OO7 trace byte-identical.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// An index in `0..len` (`0` when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn matches_the_reference_stream() {
        // First outputs of the reference implementation (Vigna's
        // splitmix64.c) for seed 1234567, computed outside this code.
        let mut r = SplitMix64::new(1234567);
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423
            ]
        );
    }

    #[test]
    fn below_zero_is_zero() {
        let mut r = SplitMix64::new(9);
        assert_eq!(r.below(0), 0);
        assert_eq!(r.index(0), 0);
        assert!((0..1000).all(|_| r.below(7) < 7));
    }
}
