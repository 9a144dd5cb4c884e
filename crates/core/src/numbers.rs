//! Numbers as reports print them for people: whole numbers with thousands
//! separators (`1,234,567`), so that a figure of bytes or events reads at
//! a glance, byte counts in binary units (`64.0 MiB`), spans of time and
//! rates (`1.23 s`, `4.56 M/s`), dates in UTC. The one place
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

/// A span of nanoseconds in the unit that reads best, three significant
/// digits (`812 ns`, `45.6 µs`, `1.23 s`, `2 min 5 s`).
pub fn duration(ns: u64) -> String {
    let v = ns as f64;
    let three = |x: f64, unit: &str| {
        let digits = if x < 9.995 {
            2
        } else if x < 99.95 {
            1
        } else {
            0
        };
        format!("{x:.digits$} {unit}")
    };
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..999_500 => three(v / 1e3, "µs"),
        999_500..999_500_000 => three(v / 1e6, "ms"),
        999_500_000..59_995_000_000 => three(v / 1e9, "s"),
        _ => {
            let s = ns.saturating_add(500_000_000) / 1_000_000_000;
            match s / 3600 {
                0 => format!("{} min {} s", s / 60, s % 60),
                h => format!("{h} h {} min", (s % 3600) / 60),
            }
        }
    }
}

/// The date of `days` days after 1970-01-01 (Howard Hinnant's
/// civil-from-days): year, month, day.
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Seconds since 1970 as a UTC date and time (`2026-12-07 02:45:00 UTC`).
pub fn utc_seconds(seconds: u64) -> String {
    let (y, m, d) = civil((seconds / 86_400) as i64);
    let s = seconds % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// Nanoseconds since 1970 as a UTC date and time to the millisecond
/// (`2026-11-22 12:26:45.266 UTC`).
pub fn utc_millis(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let (y, m, d) = civil((secs / 86_400) as i64);
    let (s, ms) = (secs % 86_400, ns % 1_000_000_000 / 1_000_000);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{ms:03} UTC",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// `n` events over `ns` nanoseconds as a rate per second, three
/// significant digits with a prefix (`1.23 M/s`, `512/s`); none for an
/// empty span.
pub fn rate(n: u64, ns: u64) -> Option<String> {
    if ns == 0 {
        return None;
    }
    let r = n as f64 * 1e9 / ns as f64;
    let (v, prefix) = match r {
        r if r >= 1e9 => (r / 1e9, " G"),
        r if r >= 1e6 => (r / 1e6, " M"),
        r if r >= 1e3 => (r / 1e3, " k"),
        r => (r, ""),
    };
    let digits = if prefix.is_empty() || v >= 99.95 {
        0
    } else if v >= 9.995 {
        1
    } else {
        2
    };
    Some(format!("{v:.digits$}{prefix}/s"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_rates_read_at_a_glance() {
        assert_eq!(duration(0), "0 ns");
        assert_eq!(duration(812), "812 ns");
        assert_eq!(duration(45_600), "45.6 µs");
        assert_eq!(duration(999_999), "1.00 ms");
        assert_eq!(duration(1_234_000_000), "1.23 s");
        assert_eq!(duration(125_000_000_000), "2 min 5 s");
        assert_eq!(duration(7_260_000_000_000), "2 h 1 min");
        assert_eq!(duration(u64::MAX), "5124095 h 34 min");
        assert_eq!(rate(1_230_000, 1_000_000_000).as_deref(), Some("1.23 M/s"));
        assert_eq!(rate(512, 1_000_000_000).as_deref(), Some("512/s"));
        assert_eq!(rate(300, 2_000_000).as_deref(), Some("150 k/s"));
        assert_eq!(rate(5, 0), None);
        // `date -u -d @1796611500`, `@0`, `@951782400` (a leap day).
        assert_eq!(utc_seconds(1_796_611_500), "2026-12-07 02:45:00 UTC");
        assert_eq!(utc_seconds(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            utc_millis(951_782_400_123_000_000),
            "2000-02-29 00:00:00.123 UTC"
        );
    }

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
