//! Sizes as people write them: `1000`, `1k`, `4M`, `1.5G`, `2T`, `64MiB`,
//! `500KB`, with a suffix of either case read in a decimal (k = 1,000) or
//! binary (K = 1,024) base as the caller says (an IEC `KiB` is always
//! 1,024). The one size parser of tramp's options
//! (cache sizes and CPU cache levels, replay's memory limit, tpack's block
//! length, `tramp check`'s budgets).

/// What a suffix multiplies by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// k = 1,000 (counts).
    Decimal,
    /// K = 1,024 (bytes).
    Binary,
}

/// The number `s` writes, its suffix in `base`. A suffix is a letter (k,
/// M, G, T, either case) optionally followed by `B` (`500KB`, `64MB`), or
/// an IEC binary prefix (`KiB`, `MiB`, `GiB`, `TiB`: always 1,024); a bare
/// `B` means bytes (`4096B`).
pub fn parse(s: &str, base: Base) -> Result<u64, String> {
    let t = s.trim();
    let step: u64 = match base {
        Base::Decimal => 1000,
        Base::Binary => 1024,
    };
    // The suffix: the letters at the end.
    let at = t
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphabetic())
        .last()
        .map_or(t.len(), |(i, _)| i);
    let (num, suffix) = t.split_at(at);
    let lower = suffix.to_ascii_lowercase();
    let (prefix, step) = match lower.as_str() {
        "" | "b" => ("", step),
        _ if lower.len() == 3 && lower.ends_with("ib") => (&lower[..1], 1024),
        _ if lower.len() == 2 && lower.ends_with('b') => (&lower[..1], step),
        _ => (lower.as_str(), step),
    };
    let power = match prefix {
        "" => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        _ => {
            return Err(format!(
                "`{s}`: unknown suffix `{suffix}` (k, M, G or T, optionally with B; KiB, MiB, GiB, TiB)"
            ));
        }
    };
    let mult = step.pow(power);
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
        Ok(f) if f < 0.0 => Err(format!("`{s}` is negative: a size is at least 0")),
        Ok(_) => Err(format!("`{s}` is too large")),
        Err(_) => Err(format!("`{s}` is not a size (e.g. 2000, 64k, 512M, 1.5G)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_size() {
        let bin = |s| parse(s, Base::Binary);
        assert_eq!(bin("4096"), Ok(4096));
        assert_eq!(bin("4096B"), Ok(4096));
        assert_eq!(bin("64MiB"), Ok(64 << 20));
        assert_eq!(bin("64M"), Ok(64 << 20));
        assert_eq!(bin("64mb"), Ok(64 << 20));
        assert_eq!(bin("500KB"), Ok(500 * 1024));
        assert_eq!(bin("1.5G"), Ok(3 << 29));
        assert_eq!(bin(" 2 TiB "), Ok(2 << 40));
        // Counts: decimal, but an IEC prefix is binary whatever the base.
        let dec = |s| parse(s, Base::Decimal);
        assert_eq!(dec("1M"), Ok(1_000_000));
        assert_eq!(dec("2k"), Ok(2000));
        assert_eq!(dec("1KiB"), Ok(1024));
        for bad in ["10q", "5MiBs", "KB", "1.5.2M", "-1", "xMB"] {
            assert!(bin(bad).is_err(), "{bad}");
        }
        assert!(bin("10q").unwrap_err().contains("unknown suffix `q`"));
        assert!(bin("99999999T").unwrap_err().contains("too large"));
    }
}
