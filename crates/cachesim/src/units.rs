//! Sizes as people write them: `1000`, `1k`, `4M`, `1.5G`, `2T`. A count
//! of objects is decimal (k = 1,000) and a size in bytes binary (K =
//! 1,024), whatever the letter's case: `cachesim -s 1k` is 1,000 objects,
//! `cachesim --bytes -s 1k` 1,024 bytes. The one size parser of tramp's
//! options (cache sizes, CPU cache levels, replay's memory limit).

use crate::cache::Unit;

/// The number `s` writes, in `unit`.
pub fn parse(s: &str, unit: Unit) -> Result<u64, String> {
    let t = s.trim();
    let step: u64 = match unit {
        Unit::Objects => 1000,
        Unit::Bytes => 1024,
    };
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let power = match c.to_ascii_lowercase() {
                'k' => 1,
                'm' => 2,
                'g' => 3,
                't' => 4,
                _ => return Err(format!("`{s}`: unknown suffix `{c}` (k, M, G or T)")),
            };
            (&t[..i], step.pow(power))
        }
        _ => (t, 1),
    };
    let num = num.trim();
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| format!("`{s}` is too large"));
    }
    // A fraction of a suffix (`1.5M`); whole units only.
    match num.parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 0.0 && f * (mult as f64) < 1.8e19 => {
            Ok((f * mult as f64) as u64)
        }
        Ok(_) => Err(format!("`{s}` is too large")),
        Err(_) => Err(format!("`{s}` is not a size (e.g. 2000, 64k, 512M, 1.5G)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
