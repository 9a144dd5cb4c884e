//! Sizes as people write them: `1000`, `1k`, `4M`, `1.5G`, `2T`. A count
//! of objects is decimal (k = 1,000) and a size in bytes binary (K =
//! 1,024), whatever the letter's case: `cachesim -s 1k` is 1,000 objects,
//! `cachesim --bytes -s 1k` 1,024 bytes. The parser itself is
//! `tramp_core::units`, the one of every option.

use crate::cache::Unit;
use tramp_core::units::Base;

/// The number `s` writes, in `unit` (`tramp_core::units`: objects count
/// decimally, bytes binary).
pub fn parse(s: &str, unit: Unit) -> Result<u64, String> {
    let base = match unit {
        Unit::Objects => Base::Decimal,
        Unit::Bytes => Base::Binary,
    };
    tramp_core::units::parse(s, base)
}

/// A cache size as `--size` takes it: in the cache's unit, or a fraction
/// of the trace's working set (`0.01`, `1%`): distinct objects, or their
/// bytes (each object's size at its first request, as libCacheSim's
/// `cal_working_set_size` counts them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheSize {
    Units(u64),
    Fraction(f64),
}

impl CacheSize {
    /// A number below 1 with a decimal point, or a percentage, is a
    /// fraction; anything else a size [`parse`] reads.
    pub fn parse(s: &str, unit: Unit) -> Result<CacheSize, String> {
        let t = s.trim();
        let fraction = if let Some(p) = t.strip_suffix('%') {
            p.trim().parse::<f64>().ok().map(|v| v / 100.0)
        } else if t.contains('.') && !t.ends_with(|c: char| c.is_ascii_alphabetic()) {
            t.parse::<f64>().ok().filter(|v| *v < 1.0)
        } else {
            None
        };
        match fraction {
            Some(f) if f > 0.0 && f <= 1.0 => Ok(CacheSize::Fraction(f)),
            Some(_) => Err(format!(
                "`{s}`: a fraction of the working set is above 0 and at most 1 (100%)"
            )),
            None => parse(s, unit).map(CacheSize::Units),
        }
    }

    /// The size in units, given the working set in the same unit
    /// (truncated, as libCacheSim's `int(ratio * wss)`; at least 1).
    pub fn resolve(self, working_set: u64) -> u64 {
        match self {
            CacheSize::Units(n) => n,
            CacheSize::Fraction(f) => ((f * working_set as f64) as u64).max(1),
        }
    }

    pub fn is_fraction(self) -> bool {
        matches!(self, CacheSize::Fraction(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_of_the_working_set() {
        let o = Unit::Objects;
        assert_eq!(CacheSize::parse("0.01", o), Ok(CacheSize::Fraction(0.01)));
        assert_eq!(CacheSize::parse("5%", o), Ok(CacheSize::Fraction(0.05)));
        assert_eq!(CacheSize::parse("100%", o), Ok(CacheSize::Fraction(1.0)));
        assert_eq!(CacheSize::parse("1.5k", o), Ok(CacheSize::Units(1500)));
        assert_eq!(CacheSize::parse("3", o), Ok(CacheSize::Units(3)));
        assert!(CacheSize::parse("150%", o).is_err());
        assert_eq!(CacheSize::Fraction(0.1).resolve(12_345), 1234);
        assert_eq!(CacheSize::Fraction(0.001).resolve(10), 1);
    }

    #[test]
    fn counts_are_decimal_and_bytes_binary() {
        assert_eq!(parse("1k", Unit::Objects), Ok(1000));
        assert_eq!(parse("1K", Unit::Objects), Ok(1000));
        assert_eq!(parse("1k", Unit::Bytes), Ok(1024));
        assert_eq!(parse("4M", Unit::Bytes), Ok(4 << 20));
        assert_eq!(parse("2G", Unit::Objects), Ok(2_000_000_000));
        assert_eq!(parse("1.5M", Unit::Bytes), Ok(3 << 19));
        assert_eq!(parse(" 300 ", Unit::Objects), Ok(300));
        assert_eq!(parse("1T", Unit::Bytes), Ok(1 << 40));
        assert!(
            parse("5x", Unit::Bytes)
                .unwrap_err()
                .contains("unknown suffix")
        );
        assert!(parse("x1", Unit::Bytes).unwrap_err().contains("not a size"));
        assert!(
            parse("99999999999T", Unit::Bytes)
                .unwrap_err()
                .contains("too large")
        );
    }
}
