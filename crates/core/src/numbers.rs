//! Numbers as reports print them for people: whole numbers with thousands
//! separators (`1,234,567`), so that a figure of bytes or events reads at
//! a glance. The one place every report takes them from.

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

#[cfg(test)]
mod tests {
    use super::*;

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
