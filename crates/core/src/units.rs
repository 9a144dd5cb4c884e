//! Sizes as people write them: `1000`, `1k`, `4M`, `1.5G`, `2T`, with a
//! suffix of either case read in a decimal (k = 1,000) or binary (K =
//! 1,024) base as the caller says. The one size parser of tramp's options
//! (cache sizes and CPU cache levels, replay's memory limit, tpack's block
//! length).

/// What a suffix multiplies by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// k = 1,000 (counts).
    Decimal,
    /// K = 1,024 (bytes).
    Binary,
}

/// The number `s` writes, its suffix in `base`.
pub fn parse(s: &str, base: Base) -> Result<u64, String> {
    let t = s.trim();
    let step: u64 = match base {
        Base::Decimal => 1000,
        Base::Binary => 1024,
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
        Ok(f) if f < 0.0 => Err(format!("`{s}` is negative: a size is at least 0")),
        Ok(_) => Err(format!("`{s}` is too large")),
        Err(_) => Err(format!("`{s}` is not a size (e.g. 2000, 64k, 512M, 1.5G)")),
    }
}
