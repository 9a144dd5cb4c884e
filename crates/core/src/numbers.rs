//! Numbers as reports print them for people: whole numbers with thousands
//! separators (`1,234,567`), so that a figure of bytes or events reads at
//! a glance, and byte counts in binary units (`64.0 MiB`). The one place
//! every report takes them from.

/// `n` with a comma between each group of three digits.
pub fn grouped(n: impl Into<u128>) -> String {
    let s = n.into().to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count in binary units with three significant digits (`608 B`,
/// `1.50 KiB`, `64.0 MiB`, `512 GiB`).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    // Rounding may carry into the next unit (1023.9 KiB is 1.00 MiB).
    let digits = if v < 9.995 {
        2
    } else if v < 99.95 {
        1
    } else {
        0
    };
    if format!("{v:.digits$}") == "1024" && unit < UNITS.len() - 1 {
        return format!("1.00 {}", UNITS[unit + 1]);
    }
    format!("{v:.digits$} {}", UNITS[unit])
}

/// A byte count for a message a person checks against a limit: the binary
/// units, and from 1 KiB the exact count beside (`64.0 MiB (67,108,865 B)`).
pub fn bytes_exact(n: u64) -> String {
    match n < 1024 {
        true => bytes(n),
        false => format!("{} ({} B)", bytes(n), grouped(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_in_binary_units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1024), "1.00 KiB");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(bytes(64 << 20), "64.0 MiB");
        assert_eq!(bytes(512 << 30), "512 GiB");
        assert_eq!(bytes((1 << 20) - 1), "1.00 MiB");
        assert_eq!(bytes(u64::MAX), "16.0 EiB");
        assert_eq!(bytes_exact(67_108_865), "64.0 MiB (67,108,865 B)");
        assert_eq!(bytes_exact(608), "608 B");
    }

    #[test]
    fn groups_of_three_from_the_right() {
        assert_eq!(grouped(0u64), "0");
        assert_eq!(grouped(999u64), "999");
        assert_eq!(grouped(1000u64), "1,000");
        assert_eq!(grouped(1234567u64), "1,234,567");
        assert_eq!(
            grouped(27670116110564327421u128),
            "27,670,116,110,564,327,421"
        );
    }
}
